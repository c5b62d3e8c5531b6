// fp4_test_kernels.h — what the NVFP4 emulator tests share (test_fp4.cpp,
// test_fp4_diagnostics.cpp): the E2M1 / UE4M3 values from their definitions, the one-CTA
// block-scaled MMA kernel (operands and scale atoms placed with ordinary stores, tcgen05.cp to
// TMEM, num_mma kind::mxf4nvf4 block16 MMAs, D read back; `fault` selects one broken variant),
// operands whose products are exact in FP32, and the CPU reference.
//
// Everything is inline in namespace tcg_test::fp4, so each test file includes it once, the
// binary links, and its names (reference, kBars, ...) do not meet those of mma_test_kernels.h.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace tcg_test {
namespace fp4 {

// ============================================================================ formats (host side)

// E2M1 (PTX ISA §5.2.3): codes 0-7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; 8-15 negated.
const float kE2M1[16] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f, -0.f, -0.5f, -1.f, -1.5f, -2.f, -3.f, -4.f, -6.f};

// UE4M3 from its definition: exponent bits 6-3 (bias 7), mantissa 2-0; subnormal for e = 0.
inline double ue4m3_ref(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  return e == 0 ? std::ldexp(double(m), -9) : std::ldexp(double(8 + m), e - 10);
}
inline uint8_t ue4m3_byte(double v) {
  for (int b = 0; b < 0x7F; ++b)
    if (ue4m3_ref(uint8_t(b)) == v) return uint8_t(b);
  throw std::logic_error("not a UE4M3 value");
}

inline uint32_t mix(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t h = (a + 1) * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA6Bu ^ (c + 3) * 0xC2B2AE35u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

// ============================================================================ the MMA test kernel
//
// One CTA of 192 threads (6 warps). Threads place A, B (packed E2M1) and the scale-factor atoms in
// shared memory with ordinary stores; thread 0 copies the scales to TMEM with
// tcgen05.cp.32x128b.warpx4 and issues `num_mma` block-scaled MMAs (M = 128, K = 64 each) into D
// at TMEM column 0, commits, and warps 0-3 read D back. `fault` selects one broken variant.
enum class Fault : uint32_t {
  kNone,
  kNoCp,                 // the MMA reads scale columns no tcgen05.cp wrote
  kMmaBeforeCp,          // the MMA thread issues its copies after the MMA
  kCpOtherThread,        // warp 5 issues the copies with no synchronisation towards the MMA thread
  kCpOtherThreadSynced,  // ... with fence::before_thread_sync + mbarrier + fence::after_thread_sync (correct)
  kCpAfterSignal,        // warp 5 signals the MMA thread first and issues the copies afterwards
  kScalesFromD,          // a second MMA takes its B scales from the first MMA's accumulator columns
  kDeallocUnderCp,       // the columns are freed while the copy may still be pending
};

struct Fp4Case {
  const uint8_t* a = nullptr;    // 128 x kbytes packed E2M1, row-major (kbytes = 32 * num_mma)
  const uint8_t* b = nullptr;    // n x kbytes
  const uint8_t* sfa = nullptr;  // num_mma scale atoms of 512 bytes
  const uint8_t* sfb = nullptr;  // num_mma * 2 atoms (atom t of MMA j at index 2j + t)
  uint32_t n = 64, num_mma = 1;
  bool swizzle = true;           // 128B swizzle (rows of 128 bytes) or core matrices (no swizzle)
  uint32_t idesc = 0;            // 0: make_idesc_mxf4nvf4(128, n)
  uint32_t sfa_addr_or = 0;      // OR'ed into every SFA address
  int sfb_col = -1;              // >= 0: SFB column (relative to the allocation) of the first MMA
  uint32_t cp_taddr_or = 0;      // OR'ed into every tcgen05.cp destination
  int cp_col = -1;               // >= 0: destination column of the first copy
  uint64_t cp_desc_xor = 0;      // XOR'ed into every tcgen05.cp source descriptor
  Fault fault = Fault::kNone;
  float* out = nullptr;          // 128 x n
};

constexpr uint32_t kA = 0, kB = 16384, kSfa = 49152, kSfb = 51200, kBars = 55296;
constexpr uint32_t kFp4Smem = kBars + 64 + tcg::kSmemAlignSlack;
constexpr uint32_t kTmemCols = 512, kSfaCol = 256, kSfbCol = 272;  // SFA j at 256 + 4j, SFB j at 272 + 8j

// Byte `kb` of row `row` of an operand tile of `rows` rows: 128B swizzle (8-row atoms of 128-byte
// rows, 16-byte chunk c of line L stored at chunk c ^ (L % 8), PTX ISA §5.5.7; CUtensorMapSwizzle in cuda.h) or core matrices
// ([16-byte K chunk][row][16 bytes], PTX ISA §9.7.16.3.3; CUTLASS cute/arch/mma_sm100_desc.hpp).
__device__ inline uint32_t operand_offset(bool swizzle, uint32_t rows, uint32_t row, uint32_t kb) {
  if (swizzle) return row * 128 + 16 * (((kb / 16) ^ (row % 8)) & 7) + kb % 16;
  return (kb / 16) * rows * 16 + row * 16 + kb % 16;
}

__device__ inline uint64_t sf_desc(uint32_t addr) {  // a 512-byte atom: 4 x (8 rows x 16 B), SBO = 128
  return tcg::make_smem_desc(addr, 0, 128, tcg::Layout::kNone);
}

inline __global__ void fp4_case_kernel(Fp4Case c) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t done = base + kBars, cp_ready = done + 8, cp_done = done + 16, slot = done + 24;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t kbytes = 32 * c.num_mma, sfb_atoms = (c.n + 127) / 128;
  const bool cp_elsewhere = c.fault == Fault::kCpOtherThread || c.fault == Fault::kCpOtherThreadSynced ||
                            c.fault == Fault::kCpAfterSignal;
  const bool mma_waits = c.fault == Fault::kCpOtherThreadSynced || c.fault == Fault::kCpAfterSignal;

  if (warp == 0) {
    tcg::tmem_alloc(slot, kTmemCols);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(done, 1);
    tcg::mbarrier_init(cp_ready, 1);
    tcg::mbarrier_init(cp_done, 1);
    tcg::fence_mbarrier_init();
  }
  for (uint32_t i = threadIdx.x; i < 128 * kbytes; i += blockDim.x)
    smem[kA + operand_offset(c.swizzle, 128, i / kbytes, i % kbytes)] = c.a[i];
  for (uint32_t i = threadIdx.x; i < c.n * kbytes; i += blockDim.x)
    smem[kB + operand_offset(c.swizzle, c.n, i / kbytes, i % kbytes)] = c.b[i];
  for (uint32_t i = threadIdx.x; i < 512 * c.num_mma; i += blockDim.x) smem[kSfa + i] = c.sfa[i];
  for (uint32_t i = threadIdx.x; i < 1024 * c.num_mma; i += blockDim.x) smem[kSfb + i] = c.sfb[i];
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 24);

  auto issue_cps = [&] {
    for (uint32_t j = 0; j < c.num_mma; ++j) {
      uint32_t col = kSfaCol + 4 * j;
      if (j == 0 && c.cp_col >= 0) col = uint32_t(c.cp_col);
      tcg::tcgen05_cp_32x128b_warpx4(tcg::tmem_offset(tmem, 0, col) | c.cp_taddr_or,
                                     sf_desc(base + kSfa + 512 * j) ^ c.cp_desc_xor);
      for (uint32_t t = 0; t < sfb_atoms; ++t)
        tcg::tcgen05_cp_32x128b_warpx4(tcg::tmem_offset(tmem, 0, kSfbCol + 8 * j + 4 * t) | c.cp_taddr_or,
                                       sf_desc(base + kSfb + 512 * (2 * j + t)) ^ c.cp_desc_xor);
    }
  };

  if (c.fault == Fault::kDeallocUnderCp) {
    if (warp == 0) {
      if (tcg::elect_one_sync()) issue_cps();
      tcg::tcgen05_fence_before_thread_sync();
      __syncwarp();
      tcg::tcgen05_fence_after_thread_sync();
      tcg::tmem_dealloc(tmem, kTmemCols);  // BUG: the copies may not have been performed yet
      if (lane == 0) tcg::mma_commit(done);
    }
    tcg::mbarrier_wait_parity(done, 0);
    return;
  }

  if (cp_elsewhere && warp == 5 && tcg::elect_one_sync()) {
    if (c.fault == Fault::kCpAfterSignal) tcg::mbarrier_arrive(cp_ready);  // BUG: before the copies
    issue_cps();
    if (c.fault == Fault::kCpOtherThreadSynced) {
      tcg::tcgen05_fence_before_thread_sync();  // PTX ISA §9.7.16.6.4.3
      tcg::mbarrier_arrive(cp_ready);
    }
    tcg::mma_commit(cp_done);  // so the CTA does not free TMEM under the copies
  }
  if (warp == 0 && tcg::elect_one_sync()) {
    if (!cp_elsewhere && c.fault != Fault::kNoCp && c.fault != Fault::kMmaBeforeCp) issue_cps();
    if (mma_waits) {
      tcg::mbarrier_wait_parity(cp_ready, 0);
      tcg::tcgen05_fence_after_thread_sync();
    }
    const uint32_t idesc = c.idesc ? c.idesc : tcg::make_idesc_mxf4nvf4(128, c.n);
    for (uint32_t j = 0; j < c.num_mma; ++j) {
      uint64_t ad, bd;
      if (c.swizzle) {
        ad = tcg::make_smem_desc(base + kA + 32 * j, 16, 1024, tcg::Layout::kSwizzle128B);
        bd = tcg::make_smem_desc(base + kB + 32 * j, 16, 1024, tcg::Layout::kSwizzle128B);
      } else {  // two 16-byte K chunks per MMA: LBO = next chunk, SBO = next 8 rows
        ad = tcg::make_smem_desc(base + kA + 2 * j * 128 * 16, 128 * 16, 128, tcg::Layout::kNone);
        bd = tcg::make_smem_desc(base + kB + 2 * j * c.n * 16, c.n * 16, 128, tcg::Layout::kNone);
      }
      const uint32_t sfa = tcg::tmem_offset(tmem, 0, kSfaCol + 4 * j) | c.sfa_addr_or;
      const uint32_t sfb_col = (j == 0 && c.sfb_col >= 0) ? uint32_t(c.sfb_col) : kSfbCol + 8 * j;
      const uint32_t sfb = tcg::tmem_offset(tmem, 0, sfb_col);
      tcg::mma_mxf4nvf4_block16_ss(tmem, ad, bd, idesc, sfa, sfb, /*accumulate=*/j > 0);
      if (c.fault == Fault::kScalesFromD) {  // BUG: B's scales taken from the accumulator columns
        tcg::mma_commit(cp_done);  // (after the first MMA completed: otherwise a TMEM hazard, mma -> mma)
        tcg::mbarrier_wait_parity(cp_done, 0);
        tcg::tcgen05_fence_after_thread_sync();
        tcg::mma_mxf4nvf4_block16_ss(tcg::tmem_offset(tmem, 0, 128), ad, bd, idesc, sfa, tmem, false);
      }
    }
    if (c.fault == Fault::kMmaBeforeCp) issue_cps();  // BUG: the MMA was issued before its copies
    tcg::mma_commit(done);
  }
  tcg::mbarrier_wait_parity(done, 0);
  if (cp_elsewhere) tcg::mbarrier_wait_parity(cp_done, 0);
  tcg::tcgen05_fence_after_thread_sync();
  if (warp < 4) {
    const uint32_t row = warp * 32 + lane;  // layout D: row m in lane m
    for (uint32_t col = 0; col < c.n; col += 8) {
      uint32_t r[8];
      tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, warp * 32, col), r);
      tcg::tmem_wait_ld(r);
      memcpy(&c.out[row * c.n + col], r, sizeof r);
    }
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, kTmemCols);
}

// ---------------------------------------------------------------------------- operands and reference

// Scales: multiples of 1/8 in [1/8, 4] (powers of two and 0.75, 1.25, 1.5, 3), 4 different ones
// per row and MMA (index (h + 3s) % 10 is distinct for s = 0..3), so every block is told apart.
const double kScales[10] = {0.125, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0};

struct Fp4Data {
  uint32_t n = 0, num_mma = 0, kbytes = 0;
  std::vector<uint8_t> codes_a, codes_b;  // one E2M1 code per element: [row][k], k < 64 * num_mma
  std::vector<uint8_t> a, b;              // packed, row-major
  std::vector<double> sa, sb;             // [j][row][s]
  std::vector<uint8_t> sfa, sfb;          // atoms as the kernel copies them
};

inline Fp4Data make_data(uint32_t n, uint32_t num_mma, uint32_t salt) {
  Fp4Data d;
  d.n = n;
  d.num_mma = num_mma;
  d.kbytes = 32 * num_mma;
  const uint32_t K = 64 * num_mma;
  d.codes_a.resize(128 * K);
  d.codes_b.resize(n * K);
  for (uint32_t r = 0; r < 128; ++r)
    for (uint32_t k = 0; k < K; ++k) d.codes_a[r * K + k] = uint8_t(mix(r, k, salt) & 15);
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t k = 0; k < K; ++k) d.codes_b[r * K + k] = uint8_t(mix(r, k, salt + 77) & 15);
  auto pack = [&](const std::vector<uint8_t>& codes, uint32_t rows) {
    std::vector<uint8_t> p(rows * d.kbytes);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t kb = 0; kb < d.kbytes; ++kb)  // lower K index in the low nibble (PTX ISA §5.2.3)
        p[r * d.kbytes + kb] = uint8_t(codes[r * K + 2 * kb] | codes[r * K + 2 * kb + 1] << 4);
    return p;
  };
  d.a = pack(d.codes_a, 128);
  d.b = pack(d.codes_b, n);
  d.sa.resize(num_mma * 128 * 4);
  d.sb.resize(num_mma * n * 4);
  d.sfa.assign(num_mma * 512, 0);
  d.sfb.assign(num_mma * 1024, 0xFF);  // padding rows (>= n) are never read: leave them invalid
  for (uint32_t j = 0; j < num_mma; ++j) {
    for (uint32_t m = 0; m < 128; ++m)
      for (uint32_t s = 0; s < 4; ++s) {
        const double v = kScales[(mix(m, j, salt + 5) + 3 * s) % 10];
        d.sa[(j * 128 + m) * 4 + s] = v;
        d.sfa[512 * j + (m % 32) * 16 + (m / 32) * 4 + s] = ue4m3_byte(v);  // the 128x4 atom (CUTLASS sm100_blockscaled_layout.hpp)
      }
    for (uint32_t nn = 0; nn < n; ++nn)
      for (uint32_t s = 0; s < 4; ++s) {
        const double v = kScales[(mix(nn, j, salt + 9) + 3 * s) % 10];
        d.sb[(j * n + nn) * 4 + s] = v;
        const uint32_t t = nn / 128, r = nn % 128;
        d.sfb[512 * (2 * j + t) + (r % 32) * 16 + (r / 32) * 4 + s] = ue4m3_byte(v);
      }
  }
  return d;
}

// D[m][n] = sum_j sum_s sa * sb * sum_{16 e} A * B, in double (exact here). `sf_perm` remaps the
// scale block each product uses (identity {0,1,2,3}) to show the blocks are told apart.
inline std::vector<float> reference(const Fp4Data& d, const int (&sf_perm)[4] = {0, 1, 2, 3}) {
  const uint32_t K = 64 * d.num_mma;
  std::vector<float> out(128 * d.n);
  for (uint32_t m = 0; m < 128; ++m)
    for (uint32_t nn = 0; nn < d.n; ++nn) {
      double acc = 0;
      for (uint32_t j = 0; j < d.num_mma; ++j)
        for (uint32_t s = 0; s < 4; ++s) {
          double dot = 0;
          for (uint32_t e = 0; e < 16; ++e) {
            const uint32_t k = 64 * j + 16 * s + e;
            dot += double(kE2M1[d.codes_a[m * K + k]]) * kE2M1[d.codes_b[nn * K + k]];
          }
          const uint32_t ss = uint32_t(sf_perm[s]);
          acc += d.sa[(j * 128 + m) * 4 + ss] * d.sb[(j * d.n + nn) * 4 + ss] * dot;
        }
      out[m * d.n + nn] = float(acc);
    }
  return out;
}

// The same sum in FP32 in the emulator's documented order; equal to the exact result only if no
// step rounded, which is the precondition of a bitwise comparison.
inline bool exact_in_fp32(const Fp4Data& d, const std::vector<float>& exact) {
  const uint32_t K = 64 * d.num_mma;
  for (uint32_t m = 0; m < 128; ++m)
    for (uint32_t nn = 0; nn < d.n; ++nn) {
      float dval = 0;
      for (uint32_t j = 0; j < d.num_mma; ++j) {
        float acc = 0;
        for (uint32_t s = 0; s < 4; ++s) {
          float dot = 0;
          for (uint32_t e = 0; e < 16; ++e) {
            const uint32_t k = 64 * j + 16 * s + e;
            dot += kE2M1[d.codes_a[m * K + k]] * kE2M1[d.codes_b[nn * K + k]];
          }
          acc += float(d.sa[(j * 128 + m) * 4 + s]) * float(d.sb[(j * d.n + nn) * 4 + s]) * dot;
        }
        dval = j ? dval + acc : acc;
      }
      if (dval != exact[m * d.n + nn]) return false;
    }
  return true;
}

inline std::vector<float> run_fp4(Fp4Case c, const Fp4Data& d) {
  std::vector<float> out(128 * d.n, NAN);
  c.a = d.a.data();
  c.b = d.b.data();
  c.sfa = d.sfa.data();
  c.sfb = d.sfb.data();
  c.n = d.n;
  c.num_mma = d.num_mma;
  c.out = out.data();
  tcg::launch_kernel(fp4_case_kernel, tcg::LaunchDims{dim3(1), dim3(192), kFp4Smem}, nullptr, c);
  return out;
}

inline std::string fp4_error(Fp4Case c, const Fp4Data& d) {
  return sim_error([&] { run_fp4(c, d); });
}

}  // namespace fp4
}  // namespace tcg_test
