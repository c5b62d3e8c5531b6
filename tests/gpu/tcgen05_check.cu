// tcgen05_check.cu — does the emulator's tcgen05 do what a B200 does, instruction by instruction?
//
// Three probe kernels, compiled twice like the steps (nvcc for sm_100f, g++ -DTCG_SIM for the
// emulator):
//  * mma_probe runs one case of tests/gpu/probe_cases.cpp: thread 0 loads a shared-memory image
//    with cp.async.bulk, issues the case's tcgen05.mma (kind::f16, kind::mxf4nvf4.block16),
//    tcgen05.cp.32x128b.warpx4 and commit/wait operations in order, then the four warps read TMEM
//    back with one tcgen05.ld shape and write their registers out unchanged. The GPU's dump, the
//    emulator's and the CPU expectation (probe_cases.cpp) are compared word by word.
//  * pair_probe: tcgen05.mma.cta_group::2 over a cluster of two CTAs (probe_cases.h, PairCase).
//  * alloc_probe: many CTAs per SM allocate TMEM (tcgen05.alloc, relinquish_alloc_permit,
//    dealloc), hold it for a while and record the SM, the address and %globaltimer; the addresses
//    cannot be compared across the two (the emulator's allocator is seeded), so both must pass the
//    same checks: in range, aligned, disjoint between CTAs holding TMEM on one SM at one time.
// The probes need compute capability 10.0 or 10.3 (built for sm_100f; the steps' capability rule,
// common/harness/capability.cpp). On any other GPU the program says which families it skipped and
// why, and exits 0. Exit: 0 every case it ran matched (experiments only
// recorded), 1 a mismatch or an error, 2 bad arguments, 3 no GPU at all. Rows go to
// results/gpu_check_<gpu>.csv. `tcgen05_check --emulator-as-gpu` runs the whole program with the
// emulator standing in for the GPU (a test of this program; tests/run_all.sh runs it).
// `make test` runs the emulator side against the CPU expectation (tests/gpu/test_gpu_probes.cpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "probe_cases.h"
#if defined(TCG_SIM)
#include "../../common/sim/sim_api.h"  // tcsim::GlobalAllocation
#endif

namespace TCG_BUILD_NS {

using namespace tcg;

// Shared memory: the image, then three mbarriers and the TMEM address slot.
constexpr uint32_t LOAD_BAR = probe::kImageMax;  // the image has landed (cp.async.bulk)
constexpr uint32_t STEP_BAR = LOAD_BAR + 8;      // a kOpSync commit (thread 0 waits)
constexpr uint32_t DONE_BAR = LOAD_BAR + 16;     // the last commit (every thread waits)
constexpr uint32_t TMEM_SLOT = LOAD_BAR + 24;
constexpr uint32_t SMEM_BYTES = LOAD_BAR + 32;
constexpr uint32_t BULK_CHUNK = 32768;

__device__ __forceinline__ uint64_t desc_of(uint32_t base, uint32_t off, uint32_t lbo, uint32_t sbo, uint32_t layout) {
  return make_smem_desc(base + off, lbo, sbo, static_cast<Layout>(layout));
}

__global__ void __launch_bounds__(128) mma_probe(const probe::ProbeOp* ops, uint32_t num_ops, const uint8_t* image,
                                                 uint32_t image_bytes, probe::ReadSpec rd, uint32_t* out) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem);
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) tmem_alloc(base + TMEM_SLOT, 512);
  if (threadIdx.x == 32) {
    mbarrier_init(base + LOAD_BAR, 1);
    mbarrier_init(base + STEP_BAR, 1);
    mbarrier_init(base + DONE_BAR, 1);
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + TMEM_SLOT);

  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(base + LOAD_BAR, image_bytes);
    for (uint32_t off = 0; off < image_bytes; off += BULK_CHUNK)
      bulk_load(base + off, image + off, image_bytes - off < BULK_CHUNK ? image_bytes - off : BULK_CHUNK,
                base + LOAD_BAR);
    mbarrier_wait_parity(base + LOAD_BAR, 0);
    tcgen05_fence_after_thread_sync();
    uint32_t step_parity = 0;
    for (uint32_t i = 0; i < num_ops; ++i) {
      const probe::ProbeOp op = ops[i];
      const uint64_t a = desc_of(base, op.a_off, op.a_lbo, op.a_sbo, op.a_layout);
      const uint64_t b = desc_of(base, op.b_off, op.b_lbo, op.b_sbo, op.b_layout);
      if (op.kind == probe::kOpMmaF16) {
        mma_bf16_ss(tmem_offset(tmem, op.d_lane, op.d_col), a, b, op.idesc, op.accumulate != 0);
      } else if (op.kind == probe::kOpMmaFp4) {
        mma_mxf4nvf4_block16_ss(tmem_offset(tmem, op.d_lane, op.d_col), a, b, op.idesc, tmem_offset(tmem, 0, op.sfa_col),
                                tmem_offset(tmem, 0, op.sfb_col), op.accumulate != 0);
      } else if (op.kind == probe::kOpCp) {
        tcgen05_cp_32x128b_warpx4(tmem_offset(tmem, 0, op.d_col), desc_of(base, op.a_off, 0, op.a_sbo, 0));
      } else {  // kOpSync: everything issued so far has completed before the next operation
        mma_commit(base + STEP_BAR);
        mbarrier_wait_parity(base + STEP_BAR, step_parity);
        step_parity ^= 1;
        tcgen05_fence_after_thread_sync();
      }
    }
    mma_commit(base + DONE_BAR);
  }
  mbarrier_wait_parity(base + DONE_BAR, 0);
  tcgen05_fence_after_thread_sync();

  // Warp w reads lane quarter w (PTX ISA §9.7.16.8.1), columns [col0, col0 + ncols).
  uint32_t* o = out + size_t(threadIdx.x) * rd.ncols;
  const uint32_t lane0 = 32 * warp;
  if (rd.shape == probe::kLd32x32bX8) {
    for (uint32_t c = 0; c < rd.ncols; c += 8) {
      uint32_t r[8];
      tmem_ld_32x32b_x8(tmem_offset(tmem, lane0, rd.col0 + c), r);
      tmem_wait_ld(r);
      for (int i = 0; i < 8; ++i) o[c + i] = r[i];
    }
  } else if (rd.shape == probe::kLd32x32bX16) {
    for (uint32_t c = 0; c < rd.ncols; c += 16) {
      uint32_t r[16];
      tmem_ld_32x32b_x16(tmem_offset(tmem, lane0, rd.col0 + c), r);
      tmem_wait_ld(r);
      for (int i = 0; i < 16; ++i) o[c + i] = r[i];
    }
  } else {
    uint32_t word = 0;
    for (uint32_t h = 0; h < 2; ++h)
      for (uint32_t c = 0; c < rd.ncols; c += 8) {
        uint32_t r[4];
        tmem_ld_16x256b_x1(tmem_offset(tmem, lane0 + 16 * h, rd.col0 + c), r);
        tmem_wait_ld(r);
        for (int i = 0; i < 4; ++i) o[word++] = r[i];
      }
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 0) tmem_dealloc(tmem, 512);
}

// Each CTA allocates `ncols` columns, gives up its permit, holds the columns for `hold_iters` CTA
// barriers and frees them; thread 0 records the SM, the address and when it held them.
__global__ void __launch_bounds__(128) alloc_probe(uint32_t ncols, uint32_t hold_iters, probe::AllocRecord* out) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem);
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) {
    tmem_alloc(base, ncols);
    tmem_relinquish_alloc_permit();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t taddr = *reinterpret_cast<volatile uint32_t*>(smem);
  probe::AllocRecord rec{};
  if (threadIdx.x == 0) {
    rec.smid = smid();
    rec.taddr = taddr;
    rec.t_alloc = globaltimer();
  }
  for (uint32_t i = 0; i < hold_iters; ++i) __syncthreads();
  if (threadIdx.x == 0) {
    rec.t_free = globaltimer();
    out[blockIdx.x] = rec;
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 0) tmem_dealloc(taddr, ncols);
}

// A pair MMA over a cluster of two CTAs (probe_cases.h, PairCase). Shared memory of each CTA: its
// half of A (M/2 rows x 128 B, 128B swizzle), its half of B, the mbarriers, the TMEM slot.
constexpr uint32_t PAIR_A = 0, PAIR_B = 16384, PAIR_FULL_BAR = 32768, PAIR_DONE_BAR = PAIR_FULL_BAR + 8;
constexpr uint32_t PAIR_TMEM_SLOT = PAIR_FULL_BAR + 16, PAIR_SMEM_BYTES = PAIR_FULL_BAR + 32;

__global__ void __launch_bounds__(128) pair_probe(const __grid_constant__ CUtensorMap map_a,
                                                  const __grid_constant__ CUtensorMap map_b, uint32_t M, uint32_t N,
                                                  probe::ReadSpec rd, uint32_t* out) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem);
  const uint32_t warp = threadIdx.x / 32, rank = cluster_ctarank();
  const bool leader = (rank & 1) == 0;
  if (warp == 0) {
    tmem_alloc_2sm(base + PAIR_TMEM_SLOT, 256);
    tmem_relinquish_alloc_permit_2sm();
  }
  if (threadIdx.x == 32) {
    mbarrier_init(base + PAIR_FULL_BAR, 1);  // the leader's expect_tx of both CTAs' boxes
    mbarrier_init(base + PAIR_DONE_BAR, 1);  // the multicast commit
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + PAIR_TMEM_SLOT);
  const uint32_t a_rows = M / 2, b_rows = N / 2;
  if (threadIdx.x == 0) {
    if (leader) mbarrier_arrive_expect_tx(base + PAIR_FULL_BAR, 2 * (a_rows + b_rows) * 128);
    const uint32_t leader_full = mapa_shared_cluster(base + PAIR_FULL_BAR, rank & ~1u);
    tma_load_2d_2sm(base + PAIR_A, &map_a, 0, int32_t(rank % 2 * a_rows), leader_full);
    tma_load_2d_2sm(base + PAIR_B, &map_b, 0, int32_t(rank % 2 * b_rows), leader_full);
    if (leader) {
      mbarrier_wait_parity(base + PAIR_FULL_BAR, 0);  // both CTAs' halves have landed
      tcgen05_fence_after_thread_sync();
      const uint32_t idesc = make_idesc_bf16_f32(M, N);
      for (uint32_t ks = 0; ks < 4; ++ks)
        mma_bf16_ss_2sm(tmem, make_smem_desc(base + PAIR_A + 32 * ks, 16, 1024, Layout::kSwizzle128B),
                        make_smem_desc(base + PAIR_B + 32 * ks, 16, 1024, Layout::kSwizzle128B), idesc, ks > 0);
      mma_commit_2sm_multicast(base + PAIR_DONE_BAR, uint16_t(3u << (rank & ~1u)));
    }
  }
  mbarrier_wait_parity(base + PAIR_DONE_BAR, 0);
  tcgen05_fence_after_thread_sync();
  uint32_t* o = out + (size_t(rank) * 128 + threadIdx.x) * rd.ncols;
  for (uint32_t c = 0; c < rd.ncols; c += 16) {
    uint32_t r[16];
    tmem_ld_32x32b_x16(tmem_offset(tmem, 32 * warp, c), r);
    tmem_wait_ld(r);
    for (int i = 0; i < 16; ++i) o[c + i] = r[i];
  }
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  if (warp == 0) tmem_dealloc_2sm(tmem, 256);
}

// A 64-wide (128-byte) box of rows x 64 BF16, 128B swizzle: the operand tiles of steps 02-07.
inline TiledMap pair_map(const void* base, uint32_t rows, uint32_t box_rows) {
  TiledMap t;
  t.rank = 2;
  t.base = base;
  t.dims[0] = 64;
  t.dims[1] = rows;
  t.strides[0] = 128;
  t.box[0] = 64;
  t.box[1] = box_rows;
  t.swizzle = TmaSwizzle::k128B;
  return t;
}
inline LaunchDims pair_dims() {
  LaunchDims d;
  d.grid = dim3(2);
  d.block = dim3(probe::kProbeThreads);
  d.cluster = dim3(2);
  d.smem_bytes = PAIR_SMEM_BYTES + kSmemAlignSlack;
  return d;
}

// Host side, one per build: GPU (device buffers, bounded wait) or emulator (host memory). The
// emulator checks a kernel's raw global accesses against the buffers registered with it
// (common/sim/global_memory.cpp), as cudaMalloc's bounds are checked by compute-sanitizer.
#if defined(TCG_SIM)
template <class T>
tcsim::GlobalAllocation registered(const std::vector<T>& v, const char* name) {
  return tcsim::GlobalAllocation(v.data(), v.size() * sizeof(T), name);
}
void run_mma_case(const probe::Case& c, std::vector<uint32_t>& out) {
  out.assign(size_t(probe::kProbeThreads) * c.read.ncols, 0xFFFFFFFFu);  // NaN poison
  const auto reg_ops = registered(c.ops, "ops"), reg_image = registered(c.image, "image"),
             reg_out = registered(out, "out");
  LaunchDims d;
  d.grid = dim3(1);
  d.block = dim3(probe::kProbeThreads);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(mma_probe, d, nullptr, c.ops.data(), uint32_t(c.ops.size()), c.image.data(),
                uint32_t(c.image.size()), c.read, out.data());
}
void run_pair_case(const probe::PairCase& p, std::vector<uint32_t>& out) {
  out.assign(2 * size_t(probe::kProbeThreads) * p.c.read.ncols, 0xFFFFFFFFu);
  const CUtensorMap ma = make_tensor_map(pair_map(p.a.data(), p.M, p.M / 2));
  const CUtensorMap mb = make_tensor_map(pair_map(p.b.data(), p.N, p.N / 2));
  const auto reg_a = registered(p.a, "A"), reg_b = registered(p.b, "B"), reg_out = registered(out, "out");
  launch_kernel(pair_probe, pair_dims(), nullptr, ma, mb, p.M, p.N, p.c.read, out.data());
}
// Two emulated SMs, so that the CTAs share them (up to 4 resident at once on each, TMEM permitting).
void run_alloc(uint32_t ctas, uint32_t ncols, uint32_t hold_iters, std::vector<probe::AllocRecord>& recs) {
  struct Sms {  // restores the options on every exit
    tcsim::Options saved = tcsim::options();
    Sms() {
      tcsim::Options o = saved;
      o.num_sms = 2;
      tcsim::set_options(o);
    }
    ~Sms() { tcsim::set_options(saved); }
  } sms;
  recs.assign(ctas, probe::AllocRecord{});
  const auto reg_recs = registered(recs, "records");
  LaunchDims d;
  d.grid = dim3(ctas);
  d.block = dim3(probe::kProbeThreads);
  d.smem_bytes = 64 + kSmemAlignSlack;
  launch_kernel(alloc_probe, d, nullptr, ncols, hold_iters, recs.data());
}
#else
// Waits for the launch, at most `seconds`: a probe whose instruction misbehaves may never commit.
inline bool finish_within(double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(nullptr);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) CUDA_CHECK(e);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}
template <class T>
struct DevBuf {  // RAII device buffer
  T* p = nullptr;
  explicit DevBuf(size_t n) { CUDA_CHECK(cudaMalloc(&p, n * sizeof(T) + 16)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};
bool run_mma_case(const probe::Case& c, std::vector<uint32_t>& out) {
  out.assign(size_t(probe::kProbeThreads) * c.read.ncols, 0xFFFFFFFFu);
  DevBuf<probe::ProbeOp> ops(c.ops.size());
  DevBuf<uint8_t> image(c.image.size());
  DevBuf<uint32_t> dump(out.size());
  CUDA_CHECK(cudaMemcpy(ops.p, c.ops.data(), c.ops.size() * sizeof(probe::ProbeOp), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(image.p, c.image.data(), c.image.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dump.p, 0xFF, out.size() * 4));
  LaunchDims d;
  d.grid = dim3(1);
  d.block = dim3(probe::kProbeThreads);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(mma_probe, d, nullptr, ops.p, uint32_t(c.ops.size()), image.p, uint32_t(c.image.size()), c.read,
                dump.p);
  if (!finish_within(10)) return false;
  CUDA_CHECK(cudaMemcpy(out.data(), dump.p, out.size() * 4, cudaMemcpyDeviceToHost));
  return true;
}
bool run_pair_case(const probe::PairCase& p, std::vector<uint32_t>& out) {
  out.assign(2 * size_t(probe::kProbeThreads) * p.c.read.ncols, 0xFFFFFFFFu);
  DevBuf<uint16_t> a(p.a.size()), b(p.b.size());
  DevBuf<uint32_t> dump(out.size());
  CUDA_CHECK(cudaMemcpy(a.p, p.a.data(), p.a.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b.p, p.b.data(), p.b.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dump.p, 0xFF, out.size() * 4));
  const CUtensorMap ma = make_tensor_map(pair_map(a.p, p.M, p.M / 2));
  const CUtensorMap mb = make_tensor_map(pair_map(b.p, p.N, p.N / 2));
  launch_kernel(pair_probe, pair_dims(), nullptr, ma, mb, p.M, p.N, p.c.read, dump.p);
  if (!finish_within(10)) return false;
  CUDA_CHECK(cudaMemcpy(out.data(), dump.p, out.size() * 4, cudaMemcpyDeviceToHost));
  return true;
}
bool run_alloc(uint32_t ctas, uint32_t ncols, uint32_t hold_iters, std::vector<probe::AllocRecord>& recs) {
  recs.assign(ctas, probe::AllocRecord{});
  DevBuf<probe::AllocRecord> dev(ctas);
  LaunchDims d;
  d.grid = dim3(ctas);
  d.block = dim3(probe::kProbeThreads);
  d.smem_bytes = 64 + kSmemAlignSlack;
  launch_kernel(alloc_probe, d, nullptr, ncols, hold_iters, dev.p);
  if (!finish_within(10)) return false;
  CUDA_CHECK(cudaMemcpy(recs.data(), dev.p, ctas * sizeof(probe::AllocRecord), cudaMemcpyDeviceToHost));
  return true;
}
#endif

}  // namespace TCG_BUILD_NS

#if !defined(TCG_SIM)
#include "probe_report.h"

namespace sim {
void run_mma_case(const probe::Case& c, std::vector<uint32_t>& out);
void run_alloc(uint32_t ctas, uint32_t ncols, uint32_t hold_iters, std::vector<probe::AllocRecord>& recs);
void run_pair_case(const probe::PairCase& p, std::vector<uint32_t>& out);
}

namespace {

// The families this program probes, for the skip report.
const char* const kFamilies[] = {
    "tcgen05.mma kind::f16 + tcgen05.ld (32x32b.x8/.x16, 16x256b.x1)",
    "tcgen05.mma kind::mxf4nvf4 + tcgen05.cp (incl. the scale-replica and sign-bit experiments)",
    "tcgen05.mma cta_group::2 (CTA pair: .cta_group::2 TMA, multicast commit, both CTAs' TMEM)",
    "tcgen05.alloc / relinquish_alloc_permit / dealloc",
};

std::string emulator_run(const probe::Case& c, std::vector<uint32_t>& out) {
  try {
    sim::run_mma_case(c, out);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The "GPU" side: the real one, or (--emulator-as-gpu, for testing this program without a GPU) the
// emulator again, whose refusals then leave the poisoned dump.
struct GpuSide {
  bool (*mma)(const probe::Case&, std::vector<uint32_t>&);
  bool (*pair)(const probe::PairCase&, std::vector<uint32_t>&);
  bool (*alloc)(uint32_t, uint32_t, uint32_t, std::vector<probe::AllocRecord>&);
};
const GpuSide kRealGpu{gpu::run_mma_case, gpu::run_pair_case, gpu::run_alloc};
const GpuSide kEmulatorAsGpu{
    [](const probe::Case& c, std::vector<uint32_t>& out) {
      try {
        sim::run_mma_case(c, out);
      } catch (const std::exception&) {
      }
      return true;
    },
    [](const probe::PairCase& p, std::vector<uint32_t>& out) {
      sim::run_pair_case(p, out);
      return true;
    },
    [](uint32_t ctas, uint32_t ncols, uint32_t hold, std::vector<probe::AllocRecord>& recs) {
      sim::run_alloc(ctas, ncols, hold, recs);
      return true;
    }};

}  // namespace

int main(int argc, char** argv) {
  const bool stand_in = argc == 2 && std::string(argv[1]) == "--emulator-as-gpu";
  if (argc > 1 && !stand_in) {
    std::fprintf(stderr, "usage: tcgen05_check [--emulator-as-gpu]\n");
    return 2;
  }
  int devices = 0;
  cudaDeviceProp prop{};
  if (stand_in) {  // test this program itself: the emulator plays a 2-SM cc 10.0 GPU
    std::snprintf(prop.name, sizeof prop.name, "emulator as GPU");
    prop.major = 10;
    prop.minor = 0;
    prop.multiProcessorCount = 2;
  } else if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 ||
             cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("tcgen05_check: no CUDA GPU found\n");
    return 3;
  }
  const GpuSide& gpu_side = stand_in ? kEmulatorAsGpu : kRealGpu;
  const uint32_t hold_iters = stand_in ? 20 : 2000;
  probe::Report report(prop);
  // The datacenter Blackwell family (10.0, 10.3: the capability rule of the steps), and code of
  // this binary the driver loads there.
  std::string why = tcg::harness::capability_refusal(tcg::Arch::kSm100f, prop.major, prop.minor);
  const std::string code = stand_in ? "the emulator" : why.empty() ? probe::loaded_code_of(gpu::alloc_probe) : "";
  if (why.empty() && code.empty()) why = "none of this binary's code (" TCG_GPU_CODE ") loads on this GPU";
  std::printf("tcgen05_check: %s (cc %d.%d%s%s) against the tcgen05 emulator\n", prop.name, prop.major, prop.minor,
              code.empty() ? "" : ", ", code.c_str());
  if (!why.empty()) {
    why += " (the probes need compute capability 10.0 or 10.3: B200, GB200, B300, GB300)";
    for (const char* f : kFamilies) {
      std::printf("skipped  %s: %s\n", f, why.c_str());
      report.add(f, "", "", "skipped", why);
    }
    std::printf("tcgen05_check: 0 run, %zu families skipped (no tcgen05 on this GPU)\n", std::size(kFamilies));
    return report.write() ? 0 : 1;
  }

  int failed = 0, matched = 0, findings = 0;
  try {
    // One single-CTA case; false when the GPU hung (the context is unusable: stop).
    auto run_case = [&](const probe::Case& c) {
      std::vector<uint32_t> gpu_out, emu_out;
      if (!gpu_side.mma(c, gpu_out)) {
        std::printf("FAIL  %s | %s: the GPU did not finish within 10 s\n", c.instruction.c_str(), c.config.c_str());
        report.add(c.family, c.instruction, c.config, "error", "GPU launch did not finish within 10 s");
        ++failed;
        return false;
      }
      const std::string emu_error = emulator_run(c, emu_out);
      if (c.expect == probe::Expect::kExperiment) {
        const std::string hw = probe::classify(c, gpu_out);
        const std::string emu = emu_error.empty() ? "emulator accepted it (expected the refusal \"" + c.refusal + "\")"
                                                  : "emulator: " + first_line(emu_error);
        std::printf("FIND  %s | %s\n      GPU: %s; %s\n", c.instruction.c_str(), c.config.c_str(), hw.c_str(),
                    emu.c_str());
        report.add(c.family, c.instruction, c.config, "finding", "GPU: " + hw + "; " + emu);
        ++findings;
        return true;
      }
      if (!emu_error.empty()) {
        std::printf("FAIL  %s | %s: the emulator refused it: %s\n", c.instruction.c_str(), c.config.c_str(),
                    first_line(emu_error).c_str());
        report.add(c.family, c.instruction, c.config, "MISMATCH", "emulator error: " + first_line(emu_error));
        ++failed;
        return true;
      }
      const probe::Comparison r = probe::compare(c, gpu_out, emu_out);
      const probe::Comparison vs_cpu = probe::compare(c, gpu_out, c.want);
      std::string detail = "GPU vs emulator: " + probe::summarize(c, r) + "; GPU vs CPU: " + probe::summarize(c, vs_cpu);
      std::string result;
      if (r.differing == 0) {
        result = "identical";
      } else if (c.expect == probe::Expect::kRounded && r.over_bound == 0) {
        result = "rounding";  // an accumulation-order difference, within the FP32 bound: shown, not failed
      } else {
        result = "MISMATCH";
        ++failed;
      }
      if (result != "MISMATCH") ++matched;
      std::printf("%-5s %s | %s\n      %s\n", result == "MISMATCH" ? "FAIL" : "ok", c.instruction.c_str(),
                  c.config.c_str(), detail.c_str());
      report.add(c.family, c.instruction, c.config, result, detail);
      return true;
    };
    // The experiments run last: what the ISA forbids might also fault and end the context.
    const std::vector<probe::Case> cases = probe::mma_cases();
    bool alive = true;
    for (const probe::Case& c : cases)
      if (alive && c.expect != probe::Expect::kExperiment) alive = run_case(c);
    for (const probe::PairCase& p : probe::pair_cases()) {
      if (!alive) break;
      const probe::Case& c = p.c;
      std::vector<uint32_t> gpu_out, emu_out;
      if (!gpu_side.pair(p, gpu_out)) {
        report.add(c.family, c.instruction, c.config, "error", "GPU launch did not finish within 10 s");
        ++failed;
        alive = false;
        break;
      }
      std::string emu_error;
      try {
        sim::run_pair_case(p, emu_out);
      } catch (const std::exception& e) {
        emu_error = first_line(e.what());
      }
      const probe::Comparison r = probe::compare(c, gpu_out, emu_out), vs_cpu = probe::compare(c, gpu_out, c.want);
      const bool ok = emu_error.empty() && r.differing == 0;
      const std::string detail = emu_error.empty() ? "GPU vs emulator: " + probe::summarize(c, r) +
                                                         "; GPU vs CPU: " + probe::summarize(c, vs_cpu)
                                                   : "emulator error: " + emu_error;
      std::printf("%-5s %s | %s\n      %s\n", ok ? "ok" : "FAIL", c.instruction.c_str(), c.config.c_str(),
                  detail.c_str());
      report.add(c.family, c.instruction, c.config, ok ? "identical" : "MISMATCH", detail);
      ok ? ++matched : ++failed;
    }
    for (uint32_t ncols : {32u, 128u, 512u}) {
      if (!alive) break;
      const uint32_t ctas = uint32_t(prop.multiProcessorCount) * 4;
      std::vector<probe::AllocRecord> g, e;
      const std::string cfg = std::to_string(ctas) + " CTAs (4 x the SM count), " + std::to_string(ncols) + " columns each";
      const char* instr = "tcgen05.alloc/relinquish_alloc_permit/dealloc.cta_group::1";
      if (!gpu_side.alloc(ctas, ncols, hold_iters, g)) {
        report.add("tcgen05.alloc", instr, cfg, "error", "GPU launch did not finish within 10 s");
        ++failed;
        alive = false;
        break;
      }
      std::string emu_error;
      try {
        sim::run_alloc(16, ncols, 20, e);
      } catch (const std::exception& ex) {
        emu_error = first_line(ex.what());
      }
      const probe::AllocVerdict vg = probe::check_alloc(g, ncols), ve = probe::check_alloc(e, ncols);
      const bool ok = vg.ok && ve.ok && emu_error.empty();
      const std::string detail = "GPU: " + vg.detail + "; emulator (16 CTAs): " + (emu_error.empty() ? ve.detail : emu_error);
      std::printf("%-5s %s | %s\n      %s\n", ok ? "ok" : "FAIL", instr, cfg.c_str(), detail.c_str());
      report.add("tcgen05.alloc", instr, cfg, ok ? "identical" : "MISMATCH", detail);
      ok ? ++matched : ++failed;
    }
    for (const probe::Case& c : cases)
      if (alive && c.expect == probe::Expect::kExperiment) alive = run_case(c);
  } catch (const std::exception& e) {
    std::printf("FAIL  %s\n", e.what());
    report.add("tcgen05", "", "", "error", first_line(e.what()));
    ++failed;
  }
  std::printf("tcgen05_check: %d matched, %d failed, %d findings recorded\n", matched, failed, findings);
  const bool written = report.write();
  return failed || !written ? 1 : 0;
}
#endif
