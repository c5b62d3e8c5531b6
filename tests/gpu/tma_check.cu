// tma_check.cu — does the emulator's TMA put every byte where the hardware's does?
//
// One probe kernel, compiled twice like the steps (nvcc for the GPU, g++ -DTCG_SIM for the
// emulator), loads one TMA box into shared memory and copies the shared-memory image out. The
// program runs it on the GPU and in the emulator for the tensor-map configurations the steps use
// — step 01's 3-D no-swizzle core-matrix map, the 128B-swizzled boxes of steps 02-04 — plus the
// 32B and 64B swizzle modes, at interior, edge (partly out of bounds) and negative coordinates,
// boxes larger than the whole tensor (fewer rows than the box, K narrower than the box) and
// boxes entirely out of bounds, and compares the two images byte for byte. The mbarrier's
// expect_tx is the full box size, so the hardware also confirms that out-of-bounds elements
// count towards the transaction bytes: the probe waits for the phase with a bounded spin and
// reports whether it completed (the emulator reports a tx-count mismatch as an error).
//
// Multicast (step 13's A and SFA): a 3-D box and a 1-D bulk copy sent by one CTA of a cluster of
// 4 to the CTAs of a mask (the issuer in it or not); every CTA's image is compared.
//
// The TMA STORE (shared -> global, step 08's epilogue) is probed the same way the other way round:
// a staging image written with st.shared in the layout a load of the box would leave (swizzle none
// or 128B), fence.proxy.async, one cp.async.bulk.tensor store, commit_group, wait_group 0; then
// the whole destination matrix, with guard rows before and after it, is compared byte for byte:
// interior boxes, boxes clipped at the right and bottom edges, taller than the tensor, and
// entirely outside (nothing may be written outside the tensor). Stores at negative coordinates
// trap on an H100 (illegal instruction; loads there zero-fill): the full run checks that the
// emulator refuses them, `--store-case N` runs one such case on the GPU alone.
//
// Needs a GPU with TMA (compute capability >= 9.0: H100/H200 are enough, the TMA modes used here
// are the same on Blackwell). Not part of `make test` (CI has no GPU): run `make gpu-check`.
// Exit: 0 all identical, 1 a mismatch, 3 no suitable GPU. Rows go to results/gpu_check_<gpu>.csv
// (probe_report.h), next to the tcgen05 probes' (tcgen05_check.cu).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "../../common/sim/sim_api.h"  // tcsim::GlobalAllocation (the host side registers its matrix)

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr uint32_t BOX_AREA = 65536;  // largest box probed: 256 x 64 BF16 = 32 KiB
constexpr uint32_t BAR = BOX_AREA;
constexpr uint32_t SMEM_BYTES = BAR + 8;
constexpr uint32_t OUT_BYTES = BOX_AREA + 4;  // the image, then a 32-bit "phase completed" flag

__global__ void tma_probe(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1, int c2,
                          uint32_t box_bytes, uint8_t* out) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem), bar = base + BAR;
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(bar, box_bytes);  // the full box, also when part of it is out of bounds
    if (rank == 2) tma_load_2d(base, &map, c0, c1, bar);
    else tma_load_3d(base, &map, c0, c1, c2, bar);
    // A bounded wait: if the hardware counted fewer bytes than the box, the phase would never
    // complete and an unbounded wait would hang the check.
    uint32_t done = 0;
    for (uint32_t spin = 0; spin < (1u << 24) && !done; ++spin) done = mbarrier_test_wait_parity(bar, 0);
    *reinterpret_cast<uint32_t*>(out + BOX_AREA) = done;
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < box_bytes; i += blockDim.x) out[i] = smem[i];
}

// The store probe: the block writes the box's staging image (element e of the box = image[e],
// placed where a TMA load of the box would put it), then thread 0 stores it at {c0, c1}.
__global__ void tma_store_probe(const __grid_constant__ CUtensorMap map, int c0, int c1, uint32_t box0, uint32_t box1,
                                uint32_t span, const uint16_t* image) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem), row_bytes = box0 * 2, pieces = box1 * row_bytes / 16;
  for (uint32_t p = threadIdx.x; p < pieces; p += blockDim.x) {
    const uint32_t* v = reinterpret_cast<const uint32_t*>(image) + 4 * p;  // the box is dense: piece p
    const uint32_t lin = base + p * 16;
    st_shared_v4(span ? swizzle_addr(lin, span) : lin, v[0], v[1], v[2], v[3]);
  }
  fence_proxy_async_shared_cta();  // each thread's generic stores, before the async proxy reads them
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_2d(&map, base, c0, c1);
    bulk_commit_group();
    bulk_wait_group<0>();  // written, not only read
  }
}

void probe_store(const TiledMap& t, int c0, int c1, const uint16_t* image) {
  const CUtensorMap map = make_tensor_map(t);
  LaunchDims d;
  d.grid = dim3(1);
  d.block = dim3(128);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(tma_store_probe, d, nullptr, map, c0, c1, t.box[0], t.box[1], tma_swizzle_span(t.swizzle), image);
}

// Loads the box at `coords` of `t` and leaves its shared-memory image in `out` (device memory on
// the GPU, host memory in the emulator).
void probe(const TiledMap& t, const int (&coords)[3], uint8_t* out) {
  const CUtensorMap map = make_tensor_map(t);
  LaunchDims d;
  d.grid = dim3(1);
  d.block = dim3(128);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(tma_probe, d, nullptr, map, int(t.rank), coords[0], coords[1], coords[2], t.box_bytes(), out);
}

// The multicast probe (step 13's copies of A and SFA): a cluster of 4 CTAs; each fills its shared
// memory with 0xEE, then CTA `issuer` sends one 3-D box (mode 0, tma_load_3d_multicast) or `bytes`
// bytes of `src` (mode 1, bulk_load_multicast) to the CTAs of `mask`, each completing its own
// barrier. Every CTA leaves its image, and whether its phase completed, at out + rank * MC_STRIDE.
constexpr uint32_t MC_AREA = 8192, MC_STRIDE = MC_AREA + 4, MC_CTAS = 4;
__global__ void multicast_probe(const __grid_constant__ CUtensorMap map, const uint8_t* src, int mode, uint32_t mask,
                                uint32_t issuer, uint32_t bytes, uint8_t* out) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem), bar = base + MC_AREA, rank = cluster_ctarank();
  const bool masked = (mask >> rank) & 1u;
  for (uint32_t i = threadIdx.x; i < MC_AREA / 16; i += blockDim.x)
    st_shared_v4(base + 16 * i, 0xEEEEEEEEu, 0xEEEEEEEEu, 0xEEEEEEEEu, 0xEEEEEEEEu);
  fence_proxy_async_shared_cta();  // the fill, before the copies' async-proxy writes
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
    if (masked) mbarrier_arrive_expect_tx(bar, bytes);
  }
  cluster_sync();  // every barrier initialised and armed before a delivery reaches it
  uint8_t* mine = out + rank * MC_STRIDE;
  if (threadIdx.x == 0) {
    if (rank == issuer) {
      if (mode == 0) tma_load_3d_multicast(base, &map, 0, 0, 0, bar, uint16_t(mask));
      else bulk_load_multicast(base, src, bytes, bar, uint16_t(mask));
    }
    uint32_t done = 0;  // bounded, as tma_probe's
    for (uint32_t spin = 0; masked && spin < (1u << 24) && !done; ++spin) done = mbarrier_test_wait_parity(bar, 0);
    *reinterpret_cast<uint32_t*>(mine + MC_AREA) = done;
  }
  cluster_sync();  // every delivery has landed before any image is read
  for (uint32_t i = threadIdx.x; i < MC_AREA; i += blockDim.x) mine[i] = smem[i];
  cluster_sync();
}

void probe_multicast(const TiledMap& t, const uint8_t* src, int mode, uint32_t mask, uint32_t issuer, uint8_t* out) {
  const CUtensorMap map = make_tensor_map(t);
  LaunchDims d;
  d.grid = dim3(MC_CTAS);
  d.block = dim3(128);
  d.cluster = dim3(MC_CTAS);
  d.smem_bytes = MC_AREA + 8 + kSmemAlignSlack;
  launch_kernel(multicast_probe, d, nullptr, map, src, mode, mask, issuer, mode == 0 ? t.box_bytes() : MC_AREA / 2, out);
}

}  // namespace TCG_BUILD_NS

#if !defined(TCG_SIM)
#include "probe_report.h"  // results/gpu_check_<gpu>.csv

namespace sim {
void probe(const tcg::TiledMap& t, const int (&coords)[3], uint8_t* out);
void probe_store(const tcg::TiledMap& t, int c0, int c1, const uint16_t* image);
void probe_multicast(const tcg::TiledMap& t, const uint8_t* src, int mode, uint32_t mask, uint32_t issuer, uint8_t* out);
}

namespace {

struct Case {
  std::string name;
  tcg::TiledMap map;  // base filled in per run
  int coords[3];
};

// A row-major rows x k BF16 matrix viewed the way the steps view it.
tcg::TiledMap core_matrix_map(int rows, int k, int box_rows) {  // step 01
  tcg::TiledMap t;
  t.rank = 3;
  t.dims[0] = 8;
  t.dims[1] = uint64_t(rows);
  t.dims[2] = uint64_t(k / 8);
  t.strides[0] = uint64_t(k) * 2;
  t.strides[1] = 16;
  t.box[0] = 8;
  t.box[1] = uint32_t(box_rows);
  t.box[2] = 8;
  return t;
}
tcg::TiledMap plain_map(int rows, int k, int box_rows) {  // a 16-byte-wide box without swizzle
  tcg::TiledMap t;
  t.rank = 2;
  t.dims[0] = uint64_t(k);
  t.dims[1] = uint64_t(rows);
  t.strides[0] = uint64_t(k) * 2;
  t.box[0] = 8;
  t.box[1] = uint32_t(box_rows);
  return t;
}
tcg::TiledMap swizzled_map(int rows, int k, int box_rows, tcg::TmaSwizzle sw) {  // steps 02-04
  tcg::TiledMap t;
  t.rank = 2;
  t.dims[0] = uint64_t(k);
  t.dims[1] = uint64_t(rows);
  t.strides[0] = uint64_t(k) * 2;
  t.box[0] = tcg::tma_swizzle_span(sw) / 2;
  t.box[1] = uint32_t(box_rows);
  t.swizzle = sw;
  return t;
}

// TMA stores: C is a rows x cols BF16 matrix with kGuard rows of guard memory on each side, all
// filled with a pattern; the probe stores one box and the whole buffer is compared.
struct StoreCase {
  std::string name;
  int rows, cols;
  uint32_t box0, box1;
  tcg::TmaSwizzle sw;
  int c0, c1;
  bool gpu_traps = false;  // the GPU stops with an illegal instruction (seen with --store-case N)
};

// only < 0: every case; otherwise only case `only` (an error that poisons the CUDA context then
// names its case).
int check_stores(int only, probe::Report* report) {
  const char* kStore = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group";
  constexpr int kGuard = 16;
  using S = tcg::TmaSwizzle;
  const std::vector<StoreCase> cases = {
      {"store 128B, interior (step 08's 64 x 32 box)", 200, 296, 64, 32, S::k128B, 64, 32},
      {"store 128B, clipped at the right and bottom edges", 200, 296, 64, 32, S::k128B, 256, 192},
      {"store 128B, N = 72: box half past the right edge", 200, 72, 64, 32, S::k128B, 64, 0},
      {"store 128B, 256-row box taller than the tensor", 200, 296, 64, 256, S::k128B, 0, 0},
      {"store 128B, box entirely outside", 200, 296, 64, 32, S::k128B, 320, 224},
      {"store no swizzle, 16-byte box, clipped", 200, 296, 8, 64, S::kNone, 288, 160},
      {"store no swizzle, 128-byte rows, clipped", 200, 296, 64, 32, S::kNone, 256, 180},
      // Unlike loads, a store at a negative coordinate is an illegal instruction on an H100
      // (driver 580.159.04, 2026-11-24): the full run checks only that the emulator refuses it,
      // --store-case N runs it on the GPU alone (the error ends the CUDA context).
      {"store 128B, negative coordinates", 200, 296, 64, 32, S::k128B, -24, -5, true},
      {"store 128B, negative column only", 200, 296, 64, 32, S::k128B, -24, 5, true},
      {"store 128B, negative row only", 200, 296, 64, 32, S::k128B, 24, -5, true},
      {"store no swizzle, negative row only", 200, 296, 8, 64, S::kNone, 8, -1, true},
  };
  int failed = 0;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const StoreCase& c = cases[ci];
    if (only >= 0 && size_t(only) != ci) continue;
    std::printf("      store case %zu: %s\n", ci, c.name.c_str());
    const size_t elems = size_t(c.rows + 2 * kGuard) * c.cols;
    std::vector<uint16_t> init(elems), image(size_t(c.box0) * c.box1);
    for (size_t i = 0; i < elems; ++i) init[i] = uint16_t(0x8000 | (i * 40503u >> 3));
    for (size_t i = 0; i < image.size(); ++i) image[i] = uint16_t(0x3C00 + (i * 2654435761u >> 9) % 0x3000);
    tcg::TiledMap t;
    t.rank = 2;
    t.dims[0] = uint64_t(c.cols);
    t.dims[1] = uint64_t(c.rows);
    t.strides[0] = uint64_t(c.cols) * 2;
    t.box[0] = c.box0;
    t.box[1] = c.box1;
    t.swizzle = c.sw;
    std::vector<uint16_t> gpu(elems), emu = init;
    tcg::TiledMap e = t;
    e.base = emu.data() + size_t(kGuard) * c.cols;
    // C (not its guard rows) registered with the emulator: a store row outside it is reported.
    const tcsim::GlobalAllocation emu_c(e.base, size_t(c.rows) * c.cols * 2, "C");
    std::string emu_error;
    try {
      sim::probe_store(e, c.c0, c.c1, image.data());
    } catch (const std::exception& ex) {
      emu_error = ex.what();
    }
    if (c.gpu_traps && only < 0) {  // the emulator must refuse what the GPU traps on
      const bool refused = emu_error.find("TMA store at a negative coordinate") != std::string::npos;
      failed += !refused;
      if (report)
        report->add("TMA store", kStore, c.name, refused ? "finding" : "MISMATCH",
                    std::string("GPU: illegal instruction (run alone: tma_check --store-case ") + std::to_string(ci) +
                        "); emulator: " + (refused ? "refuses it" : "does not refuse it: " + emu_error));
      std::printf("%s  %-55s GPU: illegal instruction (--store-case %zu); emulator: %s\n", refused ? "ok  " : "FAIL",
                  c.name.c_str(), ci, refused ? "refused" : ("not refused " + emu_error).c_str());
      continue;
    }
    // GPU
    uint16_t *dev_c = nullptr, *dev_image = nullptr;
    CUDA_CHECK(cudaMalloc(&dev_c, elems * 2));
    CUDA_CHECK(cudaMalloc(&dev_image, image.size() * 2));
    CUDA_CHECK(cudaMemcpy(dev_c, init.data(), elems * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dev_image, image.data(), image.size() * 2, cudaMemcpyHostToDevice));
    tcg::TiledMap g = t;
    g.base = dev_c + size_t(kGuard) * c.cols;
    gpu::probe_store(g, c.c0, c.c1, dev_image);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(gpu.data(), dev_c, elems * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dev_c));
    CUDA_CHECK(cudaFree(dev_image));
    size_t diff = 0, first = elems, written = 0;
    for (size_t i = 0; i < elems; ++i) {
      if (gpu[i] != emu[i] && diff++ == 0) first = i;
      written += gpu[i] != init[i];
    }
    if (!emu_error.empty()) {
      ++failed;
      std::printf("FAIL  %-55s emulator: %s\n", c.name.c_str(), emu_error.c_str());
      if (report) report->add("TMA store", kStore, c.name, "error", "emulator: " + emu_error);
    } else if (diff) {
      ++failed;
      std::printf("FAIL  %-55s %zu of %zu elements differ; first at row %d col %d: GPU 0x%04x, emulator 0x%04x\n",
                  c.name.c_str(), diff, elems, int(first / c.cols) - kGuard, int(first % c.cols), gpu[first], emu[first]);
      if (report)
        report->add("TMA store", kStore, c.name, "MISMATCH",
                    std::to_string(diff) + " of " + std::to_string(elems) + " elements differ (guard rows included)");
    } else {
      std::printf("ok    %-55s %zu elements identical (guards included), %zu written by the store\n", c.name.c_str(),
                  elems, written);
      if (report)
        report->add("TMA store", kStore, c.name, "identical",
                    std::to_string(elems) + " elements identical (guard rows included), " + std::to_string(written) +
                        " written by the store");
    }
  }
  std::printf("tma_check: stores: %zu passed, %d failed\n", (only >= 0 ? 1 : cases.size()) - size_t(failed), failed);
  return failed;
}

}  // namespace

// Multicast (step 13): a 3-D box of two k-tiles as step 13 loads A (U8, 128B swizzle) or 4 KiB
// with the bulk copy as it loads SFA, from CTA `issuer` to the CTAs of `mask` in a cluster of 4;
// every CTA's shared-memory image (0xEE where nothing landed) and phase flag, GPU vs emulator.
int check_multicast(probe::Report* report) {
  struct McCase { const char* name; int mode; uint32_t mask, issuer; };
  const McCase cases[] = {
      {"3-D box multicast, issuer in the mask (0b1111 from 0)", 0, 0xF, 0},
      {"3-D box multicast, issuer outside the mask (0b1010 from 0)", 0, 0xA, 0},
      {"bulk multicast, 0b0111 from 2", 1, 0x7, 2},
      {"bulk multicast, issuer outside the mask (0b1001 from 1)", 1, 0x9, 1},
  };
  const uint32_t rows = 32, k_bytes = 512;  // K = 1024 FP4 values: rows of 512 bytes
  std::vector<uint8_t> host(size_t(rows) * k_bytes);
  for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t(1 + (i * 2654435761u >> 9) % 250);  // never 0: a landed byte differs from a zero fill
  const tcsim::GlobalAllocation registered(host.data(), host.size(), "multicast source");
  tcg::TiledMap t;  // step 13's 3-D view: (128 B of a k-tile) x rows x k-tiles, box of 2 k-tiles
  t.rank = 3;
  t.dtype = tcg::TmaDtype::kU8;
  t.dims[0] = 128;
  t.dims[1] = rows;
  t.dims[2] = k_bytes / 128;
  t.strides[0] = k_bytes;
  t.strides[1] = 128;
  t.box[0] = 128;
  t.box[1] = rows;
  t.box[2] = 2;
  t.swizzle = tcg::TmaSwizzle::k128B;
  uint8_t *dev_src = nullptr, *dev_out = nullptr;
  const size_t out_bytes = size_t(gpu::MC_CTAS) * gpu::MC_STRIDE;
  CUDA_CHECK(cudaMalloc(&dev_src, host.size()));
  CUDA_CHECK(cudaMalloc(&dev_out, out_bytes));
  CUDA_CHECK(cudaMemcpy(dev_src, host.data(), host.size(), cudaMemcpyHostToDevice));
  const char* kInsn[] = {"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
                         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"};
  int failed = 0;
  for (const McCase& c : cases) {
    std::vector<uint8_t> gpu_img(out_bytes), emu(out_bytes, 0x11);
    tcg::TiledMap g = t, e = t;
    g.base = dev_src;
    e.base = host.data();
    CUDA_CHECK(cudaMemset(dev_out, 0x11, out_bytes));
    gpu::probe_multicast(g, dev_src, c.mode, c.mask, c.issuer, dev_out);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(gpu_img.data(), dev_out, out_bytes, cudaMemcpyDeviceToHost));
    std::string emu_error;
    try {
      sim::probe_multicast(e, host.data(), c.mode, c.mask, c.issuer, emu.data());
    } catch (const std::exception& ex) {
      emu_error = ex.what();
    }
    size_t diff = 0, first = out_bytes, landed = 0;
    for (size_t i = 0; i < out_bytes; ++i) {
      if (gpu_img[i] != emu[i] && (diff++ == 0)) first = i;
      landed += (i % gpu::MC_STRIDE) < gpu::MC_AREA && gpu_img[i] != 0xEE;
    }
    bool flags_ok = true;  // a masked CTA's phase completed, an unmasked one's did not
    for (uint32_t r = 0; r < gpu::MC_CTAS; ++r) {
      uint32_t f = 0;
      memcpy(&f, gpu_img.data() + r * gpu::MC_STRIDE + gpu::MC_AREA, 4);
      flags_ok = flags_ok && f == ((c.mask >> r) & 1u);
    }
    char detail[200];
    if (diff == 0 && flags_ok && emu_error.empty()) {
      std::snprintf(detail, sizeof detail, "4 CTAs' images identical (%zu bytes landed), phase flags as the mask", landed);
      std::printf("ok    %-58s %s\n", c.name, detail);
      report->add("TMA multicast", kInsn[c.mode], c.name, "identical", detail);
    } else {
      ++failed;
      std::snprintf(detail, sizeof detail, "%zu bytes differ (first at CTA %zu byte %zu: GPU 0x%02x, emulator 0x%02x); flags %s%s%s",
                    diff, first / gpu::MC_STRIDE, first % gpu::MC_STRIDE, diff ? gpu_img[first] : 0, diff ? emu[first] : 0,
                    flags_ok ? "as the mask" : "NOT as the mask", emu_error.empty() ? "" : "; emulator: ", emu_error.c_str());
      std::printf("FAIL  %-58s %s\n", c.name, detail);
      report->add("TMA multicast", kInsn[c.mode], c.name, "MISMATCH", detail);
    }
  }
  CUDA_CHECK(cudaFree(dev_src));
  CUDA_CHECK(cudaFree(dev_out));
  std::printf("tma_check: multicast: %zu passed, %d failed\n", std::size(cases) - size_t(failed), failed);
  return failed;
}

// Not a comparison (the emulator places a cluster on any SMs): how many clusters of C CTAs of one
// CTA per SM (step 13's shared memory) the driver can keep resident at once. A cluster runs inside
// one GPC, so this shows how the GPU's SMs split into GPCs, which step 13's plan must assume for
// a B200 (docs/13_nvfp4_multicast.md). Rows: result "finding".
void report_cluster_residency(probe::Report* report, int sms) {
  const uint32_t smem = 218 * 1024 + tcg::kSmemAlignSlack;  // step 13's ring: one CTA per SM
  CUDA_CHECK(cudaFuncSetAttribute(gpu::multicast_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  for (uint32_t c : {1u, 2u, 4u, 8u}) {
    tcg::LaunchDims d;
    d.grid = dim3(c * 64);
    d.block = dim3(192);
    d.cluster = dim3(c);
    d.smem_bytes = smem;
    const int n = tcg::max_active_clusters(gpu::multicast_probe, d);
    char config[96], detail[96];
    std::snprintf(config, sizeof config, "clusters of %u CTAs, 192 threads and %u B of shared memory each", c, smem);
    std::snprintf(detail, sizeof detail, "%d clusters = %u CTAs at once (%d SMs)", n, uint32_t(n) * c, sms);
    std::printf("      %-58s %s\n", config, detail);
    report->add("cluster residency", "cudaOccupancyMaxActiveClusters", config, "finding", detail);
  }
}

// tma_check [--store-case N]: N runs only store case N (and no loads).
int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const int only = argc == 3 && std::string(argv[1]) == "--store-case" ? std::atoi(argv[2]) : -1;
  if (argc != 1 && only < 0) {
    std::printf("usage: tma_check [--store-case N]\n");
    return 2;
  }
  int devices = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
      prop.major < 9) {
    std::printf("tma_check: needs a GPU of compute capability >= 9.0 (TMA); none found\n");
    return 3;
  }
  const std::string code = probe::loaded_code_of(gpu::tma_probe);
  if (code.empty()) {
    std::printf("tma_check: none of this binary's code (" TCG_GPU_CODE ") loads on %s (cc %d.%d)\n", prop.name,
                prop.major, prop.minor);
    return 3;
  }
  std::printf("tma_check: %s (cc %d.%d, %s) against the tcgen05 emulator\n", prop.name, prop.major, prop.minor,
              code.c_str());
  if (only >= 0) return check_stores(only, nullptr) ? 1 : 0;
  probe::Report report(prop);
  const char* kTma = "cp.async.bulk.tensor.{2,3}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";

  const int M = 200, K = 776;  // partial tiles in rows and in K
  using S = tcg::TmaSwizzle;
  const std::vector<Case> cases = {
      {"step 01 3-D core-matrix box, interior", core_matrix_map(M, K, 128), {0, 0, 8}},
      {"step 01 3-D core-matrix box, rows and K past the edge", core_matrix_map(M, K, 128), {0, 128, 96}},
      {"128B swizzle, interior", swizzled_map(M, K, 128, S::k128B), {64, 0, 0}},
      {"128B swizzle, rows and K past the edge", swizzled_map(M, K, 128, S::k128B), {768, 128, 0}},
      {"128B swizzle, 256-row box (step 04's B)", swizzled_map(300, K, 256, S::k128B), {704, 256, 0}},
      {"128B swizzle, negative coordinates", swizzled_map(M, K, 128, S::k128B), {-24, -5, 0}},
      {"64B swizzle, edge", swizzled_map(M, K, 64, S::k64B), {768, 160, 0}},
      {"32B swizzle, edge", swizzled_map(M, K, 64, S::k32B), {768, 160, 0}},
      {"no swizzle, 16-byte box, edge", plain_map(M, K, 128), {768, 128, 0}},
      {"128B swizzle, box taller than the tensor (40 rows)", swizzled_map(40, K, 128, S::k128B), {0, 0, 0}},
      {"128B swizzle, K narrower than the box (K = 24)", swizzled_map(M, 24, 128, S::k128B), {0, 64, 0}},
      {"128B swizzle, whole tensor smaller than the box", swizzled_map(40, 24, 128, S::k128B), {0, 0, 0}},
      {"3-D core-matrix box, K = 24 < 64", core_matrix_map(M, 24, 128), {0, 0, 0}},
      {"128B swizzle, box entirely out of bounds", swizzled_map(M, K, 128, S::k128B), {K + 64, M + 128, 0}},
      {"128B swizzle, box entirely at negative coordinates", swizzled_map(M, K, 128, S::k128B), {-128, -256, 0}},
  };

  // Distinct BF16 bit patterns (never 0, so zero fill is visible), 16 extra rows of slack.
  std::vector<uint16_t> host(size_t(300 + 16) * K);
  for (size_t i = 0; i < host.size(); ++i) host[i] = uint16_t(0x3C00 + (i * 2654435761u >> 7) % 0x3000);
  // The emulator checks the rows a box reads against the allocations registered with it (the
  // harness does this for the steps' operands).
  const tcsim::GlobalAllocation host_registered(host.data(), host.size() * 2, "matrix");
  uint16_t* dev_matrix = nullptr;
  uint8_t* dev_out = nullptr;
  CUDA_CHECK(cudaMalloc(&dev_matrix, host.size() * 2));
  CUDA_CHECK(cudaMalloc(&dev_out, gpu::OUT_BYTES));
  CUDA_CHECK(cudaMemcpy(dev_matrix, host.data(), host.size() * 2, cudaMemcpyHostToDevice));

  int failed = 0;
  for (const Case& c : cases) {
    const uint32_t bytes = c.map.box_bytes();
    std::vector<uint8_t> gpu(gpu::OUT_BYTES), emu(gpu::OUT_BYTES, 0xEE);
    tcg::TiledMap g = c.map, e = c.map;
    g.base = dev_matrix;
    e.base = host.data();
    CUDA_CHECK(cudaMemset(dev_out, 0xEE, gpu::OUT_BYTES));
    gpu::probe(g, c.coords, dev_out);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(gpu.data(), dev_out, gpu::OUT_BYTES, cudaMemcpyDeviceToHost));
    std::string emu_error;
    try {
      sim::probe(e, c.coords, emu.data());
    } catch (const std::exception& ex) {
      emu_error = ex.what();
    }
    uint32_t gpu_done = 0, emu_done = 0;
    memcpy(&gpu_done, gpu.data() + gpu::BOX_AREA, 4);
    memcpy(&emu_done, emu.data() + gpu::BOX_AREA, 4);
    if (!gpu_done || !emu_done || !emu_error.empty()) {
      ++failed;
      std::printf("FAIL  %-55s expect_tx(%u) phase completed: GPU %s, emulator %s%s\n", c.name.c_str(), bytes,
                  gpu_done ? "yes" : "NO", emu_done ? "yes" : "NO", emu_error.empty() ? "" : (" (" + emu_error + ")").c_str());
      report.add("TMA load", kTma, c.name, "MISMATCH", std::string("phase completed: GPU ") + (gpu_done ? "yes" : "no") +
                 ", emulator " + (emu_done ? "yes" : "no") + (emu_error.empty() ? "" : "; " + emu_error));
      continue;
    }
    size_t first = bytes, diff = 0, zeros = 0;
    for (size_t i = 0; i < bytes; ++i) {
      if (gpu[i] != emu[i]) {
        if (first == bytes) first = i;
        ++diff;
      }
      zeros += gpu[i] == 0;
    }
    if (diff == 0) {
      std::printf("ok    %-55s %6u bytes identical, phase completed on both (%zu zero bytes: out-of-bounds fill, or data)\n",
                  c.name.c_str(), bytes, zeros);
      report.add("TMA load", kTma, c.name, "identical", std::to_string(bytes) + " bytes identical, expect_tx phase completed");
    } else {
      ++failed;
      std::printf("FAIL  %-55s %zu of %u bytes differ; first at byte %zu: GPU 0x%02x, emulator 0x%02x\n", c.name.c_str(),
                  diff, bytes, first, gpu[first], emu[first]);
      char detail[160];
      std::snprintf(detail, sizeof detail, "%zu of %u bytes differ; first at byte %zu: GPU 0x%02x, emulator 0x%02x", diff,
                    bytes, first, gpu[first], emu[first]);
      report.add("TMA load", kTma, c.name, "MISMATCH", detail);
    }
  }
  CUDA_CHECK(cudaFree(dev_matrix));
  CUDA_CHECK(cudaFree(dev_out));
  std::printf("tma_check: loads: %zu passed, %d failed\n", cases.size() - size_t(failed), failed);
  failed += check_multicast(&report);
  report_cluster_residency(&report, prop.multiProcessorCount);
  failed += check_stores(-1, &report);
  std::printf("tma_check: %s\n", failed ? "FAILED" : "all identical");
  return failed || !report.write() ? 1 : 0;
}
#endif
