// mma_test_kernels.h — the MMA kernels several emulator test files share (test_mma_layouts.cpp,
// test_tmem.cpp, test_asynchrony.cpp): the one-CTA MMA case kernel (operands placed by TMA or by
// ordinary stores, num_mma tcgen05.mma with the case's descriptors, the accumulator read back),
// the exact CPU product it is checked against, the canonical descriptor parameters per layout,
// and one raw MMA whose finished descriptors a test can alter.
//
// Everything is inline in namespace tcg_test (like emulator_test_util.h), so each test file
// includes it once and the test binary links.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace tcg_test {

// A tensor map that loads a whole rows x k tile in one box, in the given layout (step 01's 3-D
// core-matrix view for span 0, a 2-D box otherwise).
inline CUtensorMap tile_map(const uint16_t* base, uint32_t rows, uint32_t k, uint32_t span) {
  tcg::TiledMap t;
  t.dtype = tcg::TmaDtype::kBF16;
  t.base = base;
  if (span == kCoreMatrices) {
    t.rank = 3;
    t.dims[0] = 8;
    t.dims[1] = rows;
    t.dims[2] = k / 8;
    t.strides[0] = uint64_t(k) * 2;
    t.strides[1] = 16;
    t.box[0] = 8;
    t.box[1] = rows;
    t.box[2] = k / 8;
  } else {
    t.rank = 2;
    t.dims[0] = k;
    t.dims[1] = rows;
    t.strides[0] = uint64_t(k) * 2;
    t.box[0] = k;
    t.box[1] = rows;
    t.swizzle = span == 128  ? tcg::TmaSwizzle::k128B
                : span == 64 ? tcg::TmaSwizzle::k64B
                : span == 32 ? tcg::TmaSwizzle::k32B
                             : tcg::TmaSwizzle::kNone;
  }
  return tcg::make_tensor_map(t);
}

// ============================================================================ the MMA test kernel
//
// One CTA of 128 threads: A (128 x k) and B (n x k) are placed in shared memory (by TMA or by
// ordinary stores), thread 0 of warp 0 issues `num_mma` tcgen05.mma (M = 128) with descriptors
// built from the case's LBO/SBO/layout and a start address advanced by `kstep` bytes per MMA,
// commits, and all 4 warps read the accumulator back.
struct MmaCase {
  const uint16_t* a = nullptr;  // 128 x k BF16 bits, row-major (global memory)
  const uint16_t* b = nullptr;  // n x k
  uint32_t k = 16, n = 64;
  uint32_t span = 128;    // smem layout of both tiles (see above)
  bool use_tma = true;    // false: ordinary stores through place_addr()
  uint32_t desc_layout = uint32_t(tcg::Layout::kSwizzle128B);
  uint32_t a_lbo = 16, a_sbo = 1024, b_lbo = 16, b_sbo = 1024;
  uint32_t a_kstep = 32, b_kstep = 32;  // start-address advance per MMA
  uint32_t num_mma = 1;
  uint32_t readout = 0;        // 0: tcgen05.ld 32x32b -> out[row * n + col]; 1: 16x256b fragments
  bool wait_for_mma = true;    // false: read TMEM without waiting for the commit barrier
  float* out = nullptr;        // 128 * n floats
  uint8_t* img_a = nullptr;    // optional: copies of the A / B smem tiles after loading
  uint8_t* img_b = nullptr;
};

inline constexpr uint32_t kTileA = 0, kTileB = 16384, kBars = 32768;
inline constexpr uint32_t kCaseSmem = kBars + 64 + tcg::kSmemAlignSlack;

inline __global__ void mma_case_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                MmaCase c) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t a_tile = base + kTileA, b_tile = base + kTileB;
  const uint32_t full = base + kBars, done = base + kBars + 8, slot = base + kBars + 16;
  const uint32_t issued = base + kBars + 24;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (warp == 0) {
    tcg::tmem_alloc(slot, 128);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(full, 1);
    tcg::mbarrier_init(done, 1);
    tcg::mbarrier_init(issued, 1);
    tcg::fence_mbarrier_init();
  }
  if (!c.use_tma) {
    for (uint32_t i = threadIdx.x; i < 128 * c.k; i += blockDim.x) {
      const uint32_t addr = place_addr(c.span, 128, c.k, a_tile, i / c.k, i % c.k);
      memcpy(smem + (addr - base), &c.a[i], 2);
    }
    for (uint32_t i = threadIdx.x; i < c.n * c.k; i += blockDim.x) {
      const uint32_t addr = place_addr(c.span, c.n, c.k, b_tile, i / c.k, i % c.k);
      memcpy(smem + (addr - base), &c.b[i], 2);
    }
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 16);

  if (warp == 0 && tcg::elect_one_sync()) {
    if (c.use_tma) {
      tcg::mbarrier_arrive_expect_tx(full, (128 + c.n) * c.k * 2);
      if (c.span == kCoreMatrices) {
        tcg::tma_load_3d(a_tile, &map_a, 0, 0, 0, full);
        tcg::tma_load_3d(b_tile, &map_b, 0, 0, 0, full);
      } else {
        tcg::tma_load_2d(a_tile, &map_a, 0, 0, full);
        tcg::tma_load_2d(b_tile, &map_b, 0, 0, full);
      }
      tcg::mbarrier_wait_parity(full, 0);
      tcg::tcgen05_fence_after_thread_sync();
    }
    const uint32_t idesc = tcg::make_idesc_bf16_f32(128, c.n);
    for (uint32_t s = 0; s < c.num_mma; ++s) {
      const auto layout = static_cast<tcg::Layout>(c.desc_layout);
      const uint64_t ad = tcg::make_smem_desc(a_tile + s * c.a_kstep, c.a_lbo, c.a_sbo, layout);
      const uint64_t bd = tcg::make_smem_desc(b_tile + s * c.b_kstep, c.b_lbo, c.b_sbo, layout);
      tcg::mma_bf16_ss(tmem, ad, bd, idesc, /*accumulate=*/s > 0);
    }
    tcg::mma_commit(done);
    tcg::mbarrier_arrive(issued);
  }
  if (c.wait_for_mma) {
    tcg::mbarrier_wait_parity(done, 0);
    tcg::tcgen05_fence_after_thread_sync();
  } else {
    // BUG on purpose: `issued` only says the MMAs were issued, not that they completed.
    tcg::mbarrier_wait_parity(issued, 0);
    tcg::tcgen05_fence_after_thread_sync();
  }

  if (c.readout == 0) {
    const uint32_t row = warp * 32 + lane;  // M = 128: D row m sits in TMEM lane m
    for (uint32_t col = 0; col < c.n; col += 8) {
      uint32_t r[8];
      tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, warp * 32, col), r);
      tcg::tmem_wait_ld(r);
      memcpy(&c.out[row * c.n + col], r, sizeof r);
    }
  } else {
    for (uint32_t half = 0; half < 2; ++half)
      for (uint32_t cb = 0; cb < c.n / 8; ++cb) {
        uint32_t r[4];
        tcg::tmem_ld_16x256b_x1(tcg::tmem_offset(tmem, warp * 32 + half * 16, cb * 8), r);
        tcg::tmem_wait_ld(r);
        memcpy(&c.out[(((warp * 2 + half) * (c.n / 8) + cb) * 32 + lane) * 4], r, sizeof r);
      }
  }
  if (threadIdx.x == 0 && c.img_a) {
    memcpy(c.img_a, smem + kTileA, 128 * c.k * 2);
    memcpy(c.img_b, smem + kTileB, c.n * c.k * 2);
  }
  if (!c.wait_for_mma) tcg::mbarrier_wait_parity(done, 0);  // before the TMEM is freed
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, 128);
}

struct Operands {
  uint32_t k, n;
  std::vector<uint16_t> a, b;  // 128 x k, n x k
};
inline Operands make_operands(uint32_t k, uint32_t n, uint32_t salt = 0) {
  return Operands{k, n, small_int_matrix(128, k, salt), small_int_matrix(n, k, salt + 100)};
}

// The exact product over k in [0, k_end): D[m][n] = sum_k A[m][k] * B[n][k].
inline std::vector<float> reference(const Operands& op, uint32_t k_end) {
  std::vector<float> d(128 * op.n);
  for (uint32_t m = 0; m < 128; ++m)
    for (uint32_t j = 0; j < op.n; ++j) {
      double s = 0;
      for (uint32_t kk = 0; kk < k_end; ++kk) s += double(from_bf16(op.a[m * op.k + kk])) * from_bf16(op.b[j * op.k + kk]);
      d[m * op.n + j] = float(s);
    }
  return d;
}

struct CaseResult {
  std::vector<float> out;
  std::vector<uint8_t> img_a, img_b;
};
inline CaseResult run_case(MmaCase c, const Operands& op, bool images = false) {
  CaseResult r;
  r.out.assign(128 * op.n, NAN);
  c.a = op.a.data();
  c.b = op.b.data();
  c.k = op.k;
  c.n = op.n;
  c.out = r.out.data();
  if (images) {
    r.img_a.assign(128 * op.k * 2, 0);
    r.img_b.assign(op.n * op.k * 2, 0);
    c.img_a = r.img_a.data();
    c.img_b = r.img_b.data();
  }
  const CUtensorMap ma = tile_map(op.a.data(), 128, op.k, c.span);
  const CUtensorMap mb = tile_map(op.b.data(), op.n, op.k, c.span);
  const auto reg_a = registered(op.a, "A"), reg_b = registered(op.b, "B");
  tcg::launch_kernel(mma_case_kernel, tcg::LaunchDims{dim3(1), dim3(128), kCaseSmem}, nullptr, ma, mb, c);
  return r;
}

// The descriptor parameters of the canonical K-major layout of `span` (PTX ISA §9.7.16.3.1-9.7.16.3.3; CUTLASS cute/arch/mma_sm100_desc.hpp): for the
// core-matrix layout LBO = rows * 16 (next k-group), SBO = 128 (next 8 rows) and one MMA (32 bytes
// of K = two k-groups) later starts 2 * rows * 16 bytes on; swizzled: SBO = 8 rows * span, LBO
// unused (16), and the K step is +32 bytes inside the row.
inline MmaCase canonical_case(uint32_t span, uint32_t n) {
  MmaCase c;
  c.span = span;
  if (span == kCoreMatrices) {
    c.desc_layout = uint32_t(tcg::Layout::kNone);
    c.a_lbo = 128 * 16;
    c.b_lbo = n * 16;
    c.a_sbo = c.b_sbo = 128;
    c.a_kstep = 2 * 128 * 16;
    c.b_kstep = 2 * n * 16;
  } else {
    c.desc_layout = uint32_t(span == 128 ? tcg::Layout::kSwizzle128B
                             : span == 64 ? tcg::Layout::kSwizzle64B
                                          : tcg::Layout::kSwizzle32B);
    c.a_lbo = c.b_lbo = 16;
    c.a_sbo = c.b_sbo = 8 * span;
    c.a_kstep = c.b_kstep = 32;
  }
  return c;
}

inline const char* span_name(uint32_t span) {
  return span == kCoreMatrices ? "no swizzle" : span == 32 ? "32B" : span == 64 ? "64B" : span == 128 ? "128B" : "row-major";
}

// One MMA with descriptors built in the kernel (so that addresses are real) and then altered.
struct RawMma {
  uint32_t a_off = kTileA, b_off = kTileB;  // operand starts, bytes from the aligned base
  uint32_t layout = uint32_t(tcg::Layout::kSwizzle128B);
  uint64_t a_xor = 0, b_xor = 0;            // bits flipped in the finished descriptors
  uint32_t idesc = tcg::make_idesc_bf16_f32(128, 64);
  uint32_t alloc_cols = 128;
  uint32_t* completed = nullptr;            // set to 1 once the MMA's commit arrived
};

inline __global__ void raw_mma_kernel(RawMma r) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t done = base + kBars + 8, slot = base + kBars + 16;
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) {
    tcg::tmem_alloc(slot, r.alloc_cols);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 16);
  if (warp == 0 && tcg::elect_one_sync()) {
    const auto layout = static_cast<tcg::Layout>(r.layout);
    const uint64_t ad = tcg::make_smem_desc(base + r.a_off, 16, 1024, layout) ^ r.a_xor;
    const uint64_t bd = tcg::make_smem_desc(base + r.b_off, 16, 1024, layout) ^ r.b_xor;
    tcg::mma_bf16_ss(tmem, ad, bd, r.idesc, false);
    tcg::mma_commit(done);
    tcg::mbarrier_wait_parity(done, 0);
    if (r.completed) *r.completed = 1;
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, r.alloc_cols);
}

inline std::string run_raw(RawMma r, uint32_t* completed = nullptr) {
  SimOptions opt(1);
  r.completed = completed;
  return sim_error([&] {
    tcg::launch_kernel(raw_mma_kernel, tcg::LaunchDims{dim3(1), dim3(128), kCaseSmem}, nullptr, r);
  });
}

}  // namespace tcg_test
