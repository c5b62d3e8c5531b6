// micro.cu — the timing model's microbenchmarks (`make calibrate`), run on a GPU and in the model.
//
// Each kernel is written with the project's own PTX wrappers, so the same source is compiled by
// nvcc (sm_90 + sm_100f) and by g++ -DTCG_SIM. On a GPU (compute capability >= 9.0) `micro`
// measures every case and appends one row per case to results/micro_<gpu>.csv (GPU, driver,
// CUDA, clock, date, git revision). `micro --sim [--model-params FILE]` runs the same cases in the
// emulator's timing model (docs/timing_model.md) and prints the predicted times, so the model can
// be checked against the hardware on the same kernels (docs/timing_model.md, "Validation").
//
// Cases (each names its kernel, grid and shape in the CSV):
//  * store: one 128 x 256 BF16 tile per CTA (128 threads) in the epilogue pattern of steps 04-07
//    (thread r stores row r in 16-byte chunks: each warp instruction touches 32 rows, 32 sectors
//    half-filled), coalesced (a warp instruction writes one 512-byte row: 4 lines, 16 full
//    sectors) or in lane pairs (16 rows, 16 full sectors: lines and sectors told apart);
//    1 CTA, one wave (one CTA per SM), 512 tiles (a 4096 x 4096 C) and 2048 tiles (8192^2, C
//    larger than the H100's L2);
//  * ring: the TMA pipeline of step 04 without tensor cores: warp 0 issues the TMA boxes of a
//    stage, warp 1 waits for the stage and releases it at once, warps 2-5 (the epilogue) store
//    the tile when the K loop is done (or do nothing). Box shapes: 16-byte-wide rows (step 01),
//    128-byte swizzled rows (64 x 64..256), a 1-D bulk copy; stages 1 (latency) to 7;
//    L2-resident and HBM-sized working sets; 1 CTA and one CTA per SM;
//  * tma mix: does a TMA store take the SM's TMA unit from the loads? The ring (warp 0 loads)
//    with warp 2 issuing TMA stores of one 64 x 32 BF16 128B-swizzled box (4 KiB, written once)
//    to an L2-resident C, one bulk group each, at most 8 reading; loads alone, stores alone, both;
//  * setup: an empty grid, mbarrier init + fence + __syncthreads, mbarrier ping-pong between two
//    warps (arrive + wake-up), the same between the two CTAs of a cluster through mapa (remote
//    arrive), and cluster barriers.
//
// Times: the median of 10 launches timed by CUDA events, minus the median of an empty launch of
// the same grid (the launch's own cost), so that what remains is what the model predicts beside
// it (its prediction minus its own empty launch). Exit: 0 done, 2 bad arguments, 3 no GPU.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#if !defined(TCG_SIM)
#include "../../common/harness/internal.h"  // gpu_slug: results/micro_<gpu>.csv
#ifndef TCG_GPU_CODE  // the Makefile passes the -gencode code= targets, e.g. "sm_90 sm_100f"
#define TCG_GPU_CODE ""
#endif
#include "../../common/sim/sim_api.h"  // micro --sim: the timing model's options and parameters
#endif

#include "micro_cases.h"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int kThreads = 192;  // ring: warp 0 TMA, warp 1 consumer, warps 2..5 epilogue
constexpr int kTileRows = 128;

// A tile of `cols` BF16 columns at (row0, col0) of C (leading dimension ldc), stored by the 128
// threads `t` = 0..127 of the epilogue.
__device__ inline void store_tile(__nv_bfloat16* c, int ldc, int row0, int col0, int cols, int pattern, int t) {
  const uint4 v = make_uint4(0x3F803F80u, 0x3F803F80u, 0x3F803F80u, 0x3F803F80u);  // BF16 1.0 x 8
  const int chunks = cols / 8;
  if (pattern == 1) {  // steps 04-07: thread t owns row t
    for (int j = 0; j < chunks; ++j) store_16B(c + size_t(row0 + t) * ldc + col0 + j * 8, v);
  } else if (pattern == 2) {  // coalesced: consecutive lanes, consecutive 16-byte chunks
    const int warp = t / 32, lane = t % 32;
    for (int i = lane; i < 32 * chunks; i += 32) {
      const int r = warp * 32 + i / chunks, j = i % chunks;
      store_16B(c + size_t(row0 + r) * ldc + col0 + j * 8, v);
    }
  } else if (pattern == 3) {  // lane pairs: a warp instruction writes 32 bytes in each of 16 rows
    const int warp = t / 32, lane = t % 32;
    for (int it = 0; it < chunks; ++it) {
      const int r = warp * 32 + (it % 2) * 16 + lane / 2, j = (it / 2) * 2 + lane % 2;
      store_16B(c + size_t(row0 + r) * ldc + col0 + j * 8, v);
    }
  }
}

__global__ void store_kernel(__nv_bfloat16* c, int ldc, int tiles_m, int pattern, uint64_t* stamps) {
  const uint64_t t0 = globaltimer();
  const int tile_m = int(blockIdx.x) % tiles_m, tile_n = int(blockIdx.x) / tiles_m;
  store_tile(c, ldc, tile_m * kTileRows, tile_n * 256, 256, pattern, int(threadIdx.x));
  __syncthreads();
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = t0;
    stamps[2 * blockIdx.x + 1] = globaltimer();
  }
}

struct RingArgs {
  MicroCase mc;
  uint32_t a_box_bytes, b_box_bytes, stage_bytes;
  uint32_t staging_bytes;   // kind 7: the TMA stores' source box, after the stages
  const uint8_t* bulk_src;  // 1-D copies
  __nv_bfloat16* c;
  int ldc;
  uint64_t* stamps;
};

__global__ void ring_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                            const __grid_constant__ CUtensorMap map_c, const RingArgs args) {
  const uint64_t t0 = globaltimer();
  const MicroCase& mc = args.mc;
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem);
  const uint32_t staging = base + uint32_t(mc.stages) * args.stage_bytes;  // 1024-aligned: 128B swizzle
  const uint32_t full_bars = staging + args.staging_bytes;
  const uint32_t empty_bars = full_bars + 8 * uint32_t(mc.stages);
  const uint32_t done_bar = empty_bars + 8 * uint32_t(mc.stages);
  const int warp = int(threadIdx.x) / 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < mc.stages; ++s) {
      mbarrier_init(full_bars + 8 * s, 1);
      mbarrier_init(empty_bars + 8 * s, 1);
    }
    mbarrier_init(done_bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  const int tile_m = int(blockIdx.x) % mc.tiles_m, tile_n = int(blockIdx.x) / mc.tiles_m;
  const uint32_t stage_tx = uint32_t(mc.a_boxes) * args.a_box_bytes + uint32_t(mc.b_boxes) * args.b_box_bytes;
  if (threadIdx.x == 0) {  // producer
    for (int kt = 0; kt < mc.k_tiles; ++kt) {
      const int s = kt % mc.stages;
      if (kt >= mc.stages) mbarrier_wait_parity(empty_bars + 8 * s, uint32_t((kt / mc.stages - 1) & 1));
      const uint32_t dst = base + uint32_t(s) * args.stage_bytes;
      mbarrier_arrive_expect_tx(full_bars + 8 * s, stage_tx);
      for (int j = 0; j < mc.a_boxes; ++j) {
        const uint32_t d = dst + uint32_t(j) * args.a_box_bytes;
        if (mc.a_bw == 0) {  // 1-D bulk copy: consecutive blocks of the source
          const size_t block = (size_t(blockIdx.x) * mc.k_tiles + kt) * mc.a_boxes + j;
          const size_t blocks = size_t(mc.a_rows) * mc.a_cols * 2 / args.a_box_bytes;
          bulk_load(d, args.bulk_src + (block % blocks) * args.a_box_bytes, args.a_box_bytes, full_bars + 8 * s);
        } else {
          const int col = ((kt * mc.a_boxes + j) * mc.a_bw) % mc.a_cols;
          tma_load_2d(d, &map_a, col, (tile_m * mc.a_bh) % mc.a_rows, full_bars + 8 * s);
        }
      }
      for (int j = 0; j < mc.b_boxes; ++j) {
        const int col = ((kt * mc.b_boxes + j) * mc.b_bw) % mc.a_cols;
        tma_load_2d(dst + uint32_t(mc.a_boxes) * args.a_box_bytes + uint32_t(j) * args.b_box_bytes, &map_b, col,
                    (tile_n * mc.b_bh) % mc.b_rows, full_bars + 8 * s);
      }
    }
  } else if (threadIdx.x == 32) {  // consumer: takes each stage and releases it at once
    for (int kt = 0; kt < mc.k_tiles; ++kt) {
      const int s = kt % mc.stages;
      mbarrier_wait_parity(full_bars + 8 * s, uint32_t((kt / mc.stages) & 1));
      mbarrier_arrive(empty_bars + 8 * s);
    }
    mbarrier_arrive(done_bar);
  } else if (warp == 2 && mc.tma_stores > 0) {  // TMA stores of one source box, written once
    const uint32_t lane = threadIdx.x % 32;
    for (uint32_t off = lane * 16; off < args.staging_bytes; off += 32 * 16)
      st_shared_v4(staging + off, 0x3F803F80u, 0x3F803F80u, 0x3F803F80u, 0x3F803F80u);
    fence_proxy_async_shared_cta();  // each lane's writes, then the warp's: visible to lane 0's stores
    __syncwarp();
    if (lane == 0) {
      for (int j = 0; j < mc.tma_stores; ++j) {  // CTA c rewrites its own 16 boxes (64 KiB): L2-resident
        tma_store_2d(&map_c, staging, (j % 16) * 64, (int(blockIdx.x) % 256) * 32);
        bulk_commit_group();
        bulk_wait_group_read<7>();  // at most 8 stores still reading
      }
      bulk_wait_group<0>();  // the span includes the last writes
    }
  } else if (warp >= 2 && mc.pattern != 0) {  // epilogue: the 128 x BLOCK_N tile of C
    mbarrier_wait_parity(done_bar, 0);
    store_tile(args.c, args.ldc, tile_m * kTileRows, tile_n * mc.b_bh, mc.b_bh, mc.pattern, int(threadIdx.x) - 64);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    args.stamps[2 * blockIdx.x] = t0;
    args.stamps[2 * blockIdx.x + 1] = globaltimer();
  }
}

__global__ void empty_kernel() {}

// CTA setup of the steps: barriers initialised, made visible to the async proxy, a CTA barrier.
__global__ void setup_kernel(uint64_t* stamps) {
  const uint64_t t0 = globaltimer();
  const uint32_t base = smem_addr(aligned_smem_base());
  if (threadIdx.x == 0) {
    for (int i = 0; i < 16; ++i) mbarrier_init(base + 8 * i, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = t0;
    stamps[2 * blockIdx.x + 1] = globaltimer();
  }
}

// Ping-pong: one thread arrives on the other's barrier and waits for the answer, `iters` times.
// kind 4: lanes 0 of warps 0 and 1 of one CTA; kind 5: thread 0 of each CTA of a cluster of 2,
// each arriving on the peer's barrier through mapa; kind 6: cluster barriers in a loop.
__global__ void pingpong_kernel(int kind, int iters, int mode, uint64_t* stamps) {
  const uint64_t t0 = globaltimer();
  const uint32_t base = smem_addr(aligned_smem_base());
  if (threadIdx.x == 0) {
    mbarrier_init(base, 1);
    mbarrier_init(base + 8, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (kind == 6) {
    for (int i = 0; i < iters; ++i) {
      if (mode == 1) cluster_arrive_relaxed();  // no release: the barrier without its fence
      else cluster_arrive_release();
      cluster_wait();
    }
  } else if (kind == 5) {
    cluster_sync();  // both CTAs' barriers initialised
    const uint32_t rank = cluster_ctarank();
    if (threadIdx.x == 0) {
      const uint32_t peer_bar = mapa_shared_cluster(base, rank ^ 1u);
      for (int i = 0; i < iters; ++i) {
        if (rank == 1) mbarrier_wait_parity(base, uint32_t(i & 1));
        if (mode == 1) mbarrier_arrive_cluster_cta_scope(peer_bar);  // no GPU-scope membar
        else mbarrier_arrive_cluster(peer_bar);
        if (rank == 0) mbarrier_wait_parity(base, uint32_t(i & 1));
      }
    }
    cluster_sync();  // neither CTA exits while the other may still arrive on it
  } else if (threadIdx.x == 0 || threadIdx.x == 32) {  // kind 4: barrier 0 for warp 1, barrier 1 for warp 0
    const uint32_t mine = base + (threadIdx.x == 0 ? 8u : 0u), other = base + (threadIdx.x == 0 ? 0u : 8u);
    for (int i = 0; i < iters; ++i) {
      if (threadIdx.x == 0) {
        mbarrier_arrive(other);
        mbarrier_wait_parity(mine, uint32_t(i & 1));
      } else {
        mbarrier_wait_parity(mine, uint32_t(i & 1));
        mbarrier_arrive(other);
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = t0;
    stamps[2 * blockIdx.x + 1] = globaltimer();
  }
}

#include "micro_cluster.cuh"  // kinds 8-11: multicast, DSMEM, launch skew, release before a remote arrive

// ------------------------------------------------------------------------------------- launching
void* device_alloc(size_t bytes) {
#if defined(TCG_SIM)
  // 4 KiB-aligned like cudaMalloc's (>= 256 B): sectors and lines fall where they do on the GPU.
  // The model does not copy TMA data (skip_math), so most pages stay untouched.
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) throw std::runtime_error("micro: out of host memory");
  std::memset(p, 0, bytes < (size_t(1) << 20) ? bytes : 0);
  tcsim::register_global(p, bytes, "micro buffer");  // its accesses are bounds-checked, as cudaMalloc's are by memcheck
  return p;
#else
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  CUDA_CHECK(cudaMemset(p, 0, bytes));
  return p;
#endif
}
void device_free(void* p) {
#if defined(TCG_SIM)
  tcsim::unregister_global(p);
  std::free(p);
#else
  CUDA_CHECK(cudaFree(p));
#endif
}

TiledMap bf16_map(const void* base, int rows, int cols, int bw, int bh) {
  TiledMap t;
  t.rank = 2;
  t.base = base;
  t.dims[0] = uint64_t(cols);
  t.dims[1] = uint64_t(rows);
  t.strides[0] = uint64_t(cols) * 2;
  t.box[0] = uint32_t(bw);
  t.box[1] = uint32_t(bh);
  t.swizzle = bw * 2 == 128 ? TmaSwizzle::k128B : TmaSwizzle::kNone;
  return t;
}

// Buffers of a case, kept across its launches.
struct Buffers {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  uint64_t* stamps = nullptr;
  CUtensorMap map_a{}, map_b{}, map_c{};
  RingArgs ring{};
  ClusterArgs cl{};
  LaunchDims dims;
};

void prepare(const MicroCase& mc, int sms, Buffers& buf) {
  const int grid = mc.grid < 0 ? sms : mc.grid;
  buf.stamps = static_cast<uint64_t*>(device_alloc(size_t(2) * grid * 8));
  buf.dims.grid = dim3(uint32_t(grid));
  buf.dims.block = dim3(kThreads);
  if (mc.kind == 0 || (mc.kind == 1 && mc.pattern != 0)) {
    // C: 8192 x 8192 BF16 (2048 tiles of 128 x 256 at most; the 2048-tile cases spill L2)
    buf.c = device_alloc(size_t(8192) * 8192 * 2);
  }
  if (mc.kind == 0) {
    buf.dims.block = dim3(128);
  } else if (mc.kind == 1 || mc.kind == 7) {
    buf.a = device_alloc(size_t(mc.a_rows) * mc.a_cols * 2);
    if (mc.b_boxes) buf.b = device_alloc(size_t(mc.b_rows) * mc.a_cols * 2);
    RingArgs& r = buf.ring;
    r.mc = mc;
    r.a_box_bytes = mc.a_bw == 0 ? uint32_t(mc.a_bh) * 128 : uint32_t(mc.a_bw * mc.a_bh * 2);
    r.b_box_bytes = uint32_t(mc.b_bw * mc.b_bh * 2);
    r.stage_bytes = round_up(uint32_t(mc.a_boxes) * r.a_box_bytes + uint32_t(mc.b_boxes) * r.b_box_bytes, 1024u);
    r.bulk_src = static_cast<const uint8_t*>(buf.a);
    r.c = static_cast<__nv_bfloat16*>(buf.c);
    r.ldc = 4096;
    r.stamps = buf.stamps;
    if (mc.a_bw) buf.map_a = make_tensor_map(bf16_map(buf.a, mc.a_rows, mc.a_cols, mc.a_bw, mc.a_bh));
    else buf.map_a = make_tensor_map(bf16_map(buf.a, 64, 64, 64, 8));  // unused by 1-D copies
    buf.map_b = mc.b_boxes ? make_tensor_map(bf16_map(buf.b, mc.b_rows, mc.a_cols, mc.b_bw, mc.b_bh)) : buf.map_a;
    buf.map_c = buf.map_a;
    if (mc.kind == 7) {  // C of the TMA stores: 8192 x 1024 BF16 (16 MiB), boxes 64 x 32
      buf.c = device_alloc(size_t(8192) * 1024 * 2);
      buf.map_c = make_tensor_map(bf16_map(buf.c, 8192, 1024, 64, 32));
      r.staging_bytes = 64 * 32 * 2;
    }
    buf.dims.smem_bytes = uint32_t(mc.stages) * r.stage_bytes + r.staging_bytes + 16 * uint32_t(mc.stages) + 8 + kSmemAlignSlack;
  } else if (mc.kind >= 8) {  // micro_cluster.cuh
    ClusterArgs& ca = buf.cl;
    ca.mc = mc;
    ca.stamps = buf.stamps;
    buf.dims.cluster = dim3(uint32_t(std::max(mc.cluster, 1)));
    buf.dims.block = dim3(mc.kind == 8 ? 64 : 128);
    buf.dims.smem_bytes = 256 + kSmemAlignSlack;
    if (mc.kind == 8) {
      buf.a = device_alloc(size_t(mc.a_rows) * mc.a_cols * 2);
      buf.map_a = make_tensor_map(bf16_map(buf.a, mc.a_rows, mc.a_cols, mc.a_bw, mc.a_bh));
      ca.box_bytes = uint32_t(mc.a_bw * mc.a_bh * 2);
      ca.src = static_cast<const uint8_t*>(buf.a);
      buf.dims.smem_bytes = uint32_t(mc.stages) * ca.box_bytes + 16 * uint32_t(mc.stages) + kSmemAlignSlack;
    } else if (mc.kind == 9) {
      buf.c = device_alloc(64);
      ca.sink = static_cast<uint32_t*>(buf.c);
      buf.dims.smem_bytes = 2 * 65536 + 16 + kSmemAlignSlack;
    } else if (mc.kind == 11) {
      buf.c = device_alloc(size_t(4096) * 4096 * 2);
      ca.c = static_cast<__nv_bfloat16*>(buf.c);
    }
  } else {
    buf.dims.block = dim3(mc.kind == 2 ? 128 : 64);
    buf.dims.smem_bytes = 256 + kSmemAlignSlack;
    if (mc.kind == 2) buf.dims.smem_bytes = 0;
    if (mc.kind == 5 || mc.kind == 6) buf.dims.cluster = dim3(2);
  }
}

void launch_case(const MicroCase& mc, Buffers& buf, bool empty) {
  if (empty || mc.kind == 2) {
    LaunchDims d = buf.dims;
    d.smem_bytes = 0;
    d.block = dim3(128);
    d.cluster = dim3(1);
    launch_kernel(empty_kernel, d, nullptr);
    return;
  }
  switch (mc.kind) {
    case 0:
      launch_kernel(store_kernel, buf.dims, nullptr, static_cast<__nv_bfloat16*>(buf.c), mc.grid > 512 ? 8192 : 4096,
                    mc.grid > 512 ? 64 : 32, mc.pattern, buf.stamps);
      break;
    case 1:
    case 7: launch_kernel(ring_kernel, buf.dims, nullptr, buf.map_a, buf.map_b, buf.map_c, buf.ring); break;
    case 3: launch_kernel(setup_kernel, buf.dims, nullptr, buf.stamps); break;
    case 8: launch_kernel(mcast_kernel, buf.dims, nullptr, buf.map_a, buf.cl); break;
    case 9: {  // mode 3 (bandwidth) sends every copy into one 64 KiB buffer that nothing reads,
               // all in flight at once: the emulator's overlapping-copies report is off for it
#if defined(TCG_SIM)
      const ::tcsim::Options saved = ::tcsim::options();
      ::tcsim::Options o = saved;
      o.copy_overlap_checks = mc.mode != 3;
      ::tcsim::set_options(o);
      launch_kernel(dsmem_bench_kernel, buf.dims, nullptr, buf.cl);
      ::tcsim::set_options(saved);
#else
      launch_kernel(dsmem_bench_kernel, buf.dims, nullptr, buf.cl);
#endif
      break;
    }
    case 10: launch_kernel(skew_kernel, buf.dims, nullptr, buf.stamps); break;
    case 11: launch_kernel(release_kernel, buf.dims, nullptr, buf.cl); break;
    default: launch_kernel(pingpong_kernel, buf.dims, nullptr, mc.kind, mc.k_tiles, mc.mode, buf.stamps); break;
  }
}

void release(Buffers& buf) {
  for (void* p : {buf.a, buf.b, buf.c, static_cast<void*>(buf.stamps)})
    if (p) device_free(p);
  buf = Buffers{};
}

// The span a case reports from its stamps (start, end per CTA; us): the mean over the CTAs it
// measures (span_of 0: all; 1 + r: those of rank r), or with span_of 100 the mean over clusters of
// the spread of their CTAs' start times.
double case_span(const MicroCase& mc, const uint64_t* st, int grid) {
  const int cs = std::max(mc.cluster, 1);
  double sum = 0;
  int n = 0;
  if (mc.span_of == 100) {
    for (int c0 = 0; c0 + cs <= grid; c0 += cs, ++n) {
      uint64_t lo = st[2 * c0], hi = st[2 * c0];
      for (int i = c0; i < c0 + cs; ++i) lo = std::min(lo, st[2 * i]), hi = std::max(hi, st[2 * i]);
      sum += double(hi - lo) / 1000.0;
    }
  } else {
    for (int i = 0; i < grid; ++i)
      if (mc.span_of == 0 || i % cs == mc.span_of - 1) sum += double(st[2 * i + 1] - st[2 * i]) / 1000.0, ++n;
  }
  return n ? sum / n : 0.0;
}

// Runs one case; returns {time above the empty launch (us), mean CTA span (us, GPU only)}.
std::pair<double, double> run_case(const MicroCase& mc, int sms) {
  Buffers buf;
  prepare(mc, sms, buf);
  const int grid = int(buf.dims.grid.x);
#if defined(TCG_SIM)
  launch_case(mc, buf, true);
  const double empty_ns = ::tcsim::last_stats().model_ns;
  launch_case(mc, buf, false);
  const double ns = ::tcsim::last_stats().model_ns;
  const double span = mc.kind != 2 ? case_span(mc, buf.stamps, grid) : 0.0;  // globaltimer reads the model's clock here
  release(buf);
  return {(ns - empty_ns) / 1000.0, span};
#else
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  auto median_us = [&](bool empty) {
    std::vector<float> ms;
    for (int rep = 0; rep < 12; ++rep) {
      CUDA_CHECK(cudaEventRecord(e0));
      launch_case(mc, buf, empty);
      CUDA_CHECK(cudaEventRecord(e1));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      if (rep >= 2) ms.push_back(t);  // two warm-up launches
    }
    std::sort(ms.begin(), ms.end());
    return 1000.0 * ms[ms.size() / 2];
  };
  const double empty_us = median_us(true);
  const double us = median_us(false);
  std::vector<uint64_t> st(size_t(2) * grid);
  double span = 0;
  if (mc.kind != 2) {
    CUDA_CHECK(cudaMemcpy(st.data(), buf.stamps, st.size() * 8, cudaMemcpyDeviceToHost));
    span = case_span(mc, st.data(), grid);
    if (std::getenv("MICRO_DUMP_STAMPS")) {  // per CTA: start and end, ns after the earliest start
      uint64_t lo = st[0];
      for (int i = 0; i < grid; ++i) lo = std::min(lo, st[2 * i]);
      for (int i = 0; i < grid && i < 8; ++i)
        std::printf("  CTA %d: start %llu end %llu\n", i, (unsigned long long)(st[2 * i] - lo), (unsigned long long)(st[2 * i + 1] - lo));
    }
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  release(buf);
  return {mc.kind == 2 ? us : us - empty_us, span};
#endif
}

}  // namespace TCG_BUILD_NS

#if !defined(TCG_SIM)
namespace sim {
std::pair<double, double> run_case(const MicroCase& mc, int sms);
}

namespace {

std::string run_cmd(const char* cmd) {
  std::string out;
  if (FILE* p = popen(cmd, "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  for (char& ch : out)
    if (ch == ',' || ch == '\n') ch = ';';
  return out;
}

int usage(const char* msg) {
  std::fprintf(stderr, "micro: %s\nusage: micro [--csv FILE] [--only SUBSTRING]   (on a GPU)\n"
                       "       micro --sim [--model-params FILE] [--only SUBSTRING]   (the timing model)\n", msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool use_sim = false;
  std::string csv, params, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    if (a == "--sim") use_sim = true;
    else if (a == "--csv") { if (!value(csv)) return usage("--csv needs a file"); }
    else if (a == "--model-params") { if (!value(params)) return usage("--model-params needs a file"); }
    else if (a == "--only") { if (!value(only)) return usage("--only needs a substring"); }
    else return usage(("unknown argument '" + a + "'").c_str());
  }
  if (use_sim) {
    if (!params.empty()) {
      const std::string err = tcsim::load_model_params(params);
      if (!err.empty()) {
        std::fprintf(stderr, "micro: %s\n", err.c_str());
        return 2;
      }
    }
    const int sms = int(tcsim::model_param("SMs"));
    tcsim::Options o = tcsim::options();
    o.timing = true;
    o.skip_math = true;
    o.num_sms = sms;
    tcsim::set_options(o);
    std::printf("case,grid,predicted_us,predicted_cta_span_us,bytes,predicted_GBps\n");
    for (const MicroCase& mc : micro_cases::cases()) {
      if (!only.empty() && std::string(mc.name).find(only) == std::string::npos) continue;
      const auto [us, span] = sim::run_case(mc, sms);
      const double bytes = micro_cases::case_bytes(mc, sms);
      std::printf("\"%s\",%d,%.3f,%.3f,%.0f,%.1f\n", mc.name, mc.grid < 0 ? sms : mc.grid, us, span, bytes,
                  bytes > 0 && us > 0 ? bytes / us / 1000.0 : 0.0);
      std::fflush(stdout);
    }
    return 0;
  }
  int devices = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
      prop.major < 9) {
    std::printf("micro: needs a GPU of compute capability >= 9.0 (TMA); none found (micro --sim runs the model)\n");
    return 3;
  }
  // A GPU of 9.0 or later may still load none of this binary's code (sm_90, sm_100f): 12.x, 11.0.
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, gpu::empty_kernel) != cudaSuccess) {
    std::printf("micro: none of this binary's code (" TCG_GPU_CODE ") loads on %s (cc %d.%d)\n", prop.name, prop.major,
                prop.minor);
    return 3;
  }
  const int sms = prop.multiProcessorCount;
  std::string gpu = prop.name;
  for (char& ch : gpu)
    if (ch == ',') ch = ' ';
  int driver = 0, runtime = 0, clock_khz = 0, mem_khz = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
  const std::string driver_str = run_cmd("nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null");
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  if (csv.empty()) {
    csv = "results/micro_" + tcg::harness::gpu_slug(gpu) + ".csv";  // h100, b200, b300, ...
  }
  FILE* out = std::fopen(csv.c_str(), "a");
  if (!out) return usage(("cannot open '" + csv + "' for appending").c_str());
  std::fseek(out, 0, SEEK_END);
  if (std::ftell(out) == 0)
    std::fprintf(out, "gpu,sms,driver,cuda_runtime,max_sm_clock_mhz,mem_clock_mhz,sm_clock_seen_mhz,date,git_rev,case,grid,"
                      "time_us,cta_span_us,bytes,rate_GBps\n");
  std::printf("micro: %s, %d SMs, driver %s, appending to %s\n", gpu.c_str(), sms, driver_str.c_str(), csv.c_str());
  for (const MicroCase& mc : micro_cases::cases()) {
    if (!only.empty() && std::string(mc.name).find(only) == std::string::npos) continue;
    const auto [us, span] = gpu::run_case(mc, sms);
    const double bytes = micro_cases::case_bytes(mc, sms);
    const std::string seen = run_cmd("nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits 2>/dev/null");
    std::fprintf(out, "%s,%d,%s,%d,%d,%d,%s,%s,%s,\"%s\",%d,%.3f,%.3f,%.0f,%.1f\n", gpu.c_str(), sms, driver_str.c_str(), runtime,
                 clock_khz / 1000, mem_khz / 1000, seen.c_str(), date, TCG_GIT_REV, mc.name, mc.grid < 0 ? sms : mc.grid, us,
                 span, bytes, bytes > 0 && us > 0 ? bytes / us / 1000.0 : 0.0);
    std::printf("%-58s grid %5d  %9.3f us  CTA span %8.3f us  %8.1f GB/s\n", mc.name, mc.grid < 0 ? sms : mc.grid, us, span,
                bytes > 0 && us > 0 ? bytes / us / 1000.0 : 0.0);
    std::fflush(stdout);
  }
  std::fclose(out);
  return 0;
}
#endif
