// test_warp_mma.cpp — step 00's warp-level instructions in the emulator (common/sim/warp_mma.cpp):
// ldmatrix x4/x2 (with rows given in any order) and mma.sync m16n8k16 BF16, each register
// fragment checked against the PTX ISA's layouts (9.7.14.5.8).
//
// Each test is a real kernel written like the steps (kernel_common.cuh wrappers only), launched
// on one CTA in the emulator; the expected side is computed on the CPU from the PTX ISA
// (docs/references.md lists the sections and the CUTLASS headers cited). Split from the former
// test_emulator.cpp by mechanism, as common/sim/ is split.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;  // SimOptions, sim_error, run_isolated, operands, the shared kernels

// ============================================================================ ldmatrix and mma.sync

namespace {
struct WarpMma {
  const uint16_t* a;   // 16 x 16 row-major
  const uint16_t* bt;  // B^T: 8 (n) x 16 (k) row-major, i.e. B "col"
  const float* c;      // 16 x 8
  uint32_t* a_regs;    // [32][4]
  uint32_t* b_regs;    // [32][2]
  uint32_t* p_regs;    // [32][4]: ldmatrix.x4 with rows given in reverse order
  float* d;            // [32][4]
};

__global__ void warp_mma_kernel(WarpMma w) {
  uint8_t* smem = tcg::aligned_smem_base();
  uint16_t* A = reinterpret_cast<uint16_t*>(smem);
  uint16_t* Bt = reinterpret_cast<uint16_t*>(smem + 512);
  const uint32_t lane = threadIdx.x, g = lane / 4, t = lane % 4;
  for (uint32_t i = lane; i < 256; i += 32) A[i] = w.a[i];
  for (uint32_t i = lane; i < 128; i += 32) Bt[i] = w.bt[i];
  __syncwarp();
  uint32_t a[4], b[2], p[4];
  // x4: lane l gives row l % 16, k-block l / 16: matrices (rows 0-7, k 0-7), (8-15, 0-7),
  // (0-7, 8-15), (8-15, 8-15) = fragments a0..a3. x2: lanes 0-15 give B^T rows (n) l % 8,
  // k-block (l / 8) % 2 = b0, b1.
  tcg::ldmatrix_x4(a, tcg::smem_addr(A + (lane % 16) * 16 + (lane / 16) * 8));
  tcg::ldmatrix_x2(b, tcg::smem_addr(Bt + (lane % 8) * 16 + ((lane / 8) % 2) * 8));
  tcg::ldmatrix_x4(p, tcg::smem_addr(A + (15 - lane % 16) * 16 + (lane / 16) * 8));
  float c[4], d[4];
  for (uint32_t r = 0; r < 4; ++r) c[r] = w.c[(g + 8 * (r / 2)) * 8 + 2 * t + r % 2];
  tcg::mma_m16n8k16_bf16(d, a, b, c);
  for (uint32_t r = 0; r < 4; ++r) {
    w.a_regs[lane * 4 + r] = a[r];
    w.p_regs[lane * 4 + r] = p[r];
    w.d[lane * 4 + r] = d[r];
  }
  for (uint32_t r = 0; r < 2; ++r) w.b_regs[lane * 2 + r] = b[r];
}
}  // namespace

TEST_CASE("emulator: ldmatrix x4/x2 and mma.sync m16n8k16 fragments (PTX ISA 9.7.14.5.8)") {
  SimOptions opt(7);
  std::vector<uint16_t> A(256), Bt(128);
  std::vector<float> C(128);
  for (uint32_t i = 0; i < 256; ++i) A[i] = bf16(float(small_int(i / 16, i % 16, 51)));
  for (uint32_t i = 0; i < 128; ++i) Bt[i] = bf16(float(small_int(i / 16, i % 16, 52)));
  for (uint32_t i = 0; i < 128; ++i) C[i] = float(small_int(i / 8, i % 8, 53) * 3);
  std::vector<uint32_t> a_regs(128), b_regs(64), p_regs(128);
  std::vector<float> d(128);
  WarpMma w{A.data(), Bt.data(), C.data(), a_regs.data(), b_regs.data(), p_regs.data(), d.data()};
  const std::string err = sim_error([&] {
    tcg::launch_kernel(warp_mma_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr, w);
  });
  INFO(err);
  REQUIRE(err.empty());
  auto pair = [](uint16_t lo, uint16_t hi) { return uint32_t(lo) | uint32_t(hi) << 16; };
  size_t bad_a = 0, bad_b = 0, bad_p = 0, bad_d = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t g = l / 4, t = l % 4;
    // A fragment: a[r] holds A[g + 8 (r % 2)][2t + 8 (r / 2)] (low half) and the next column.
    for (uint32_t r = 0; r < 4; ++r) {
      const uint32_t row = g + 8 * (r % 2), col = 2 * t + 8 * (r / 2);
      bad_a += a_regs[l * 4 + r] != pair(A[row * 16 + col], A[row * 16 + col + 1]);
      // Reversed rows: matrix r's row g came from the address of lane 8r + g, which named
      // A row 15 - (8r + g) % 16, k-block (8r + g) / 16.
      const uint32_t src = 8 * r + g, prow = 15 - src % 16, pcol = (src / 16) * 8 + 2 * t;
      bad_p += p_regs[l * 4 + r] != pair(A[prow * 16 + pcol], A[prow * 16 + pcol + 1]);
    }
    // B fragment: b[r] holds B[k = 2t + 8r][n = g] and B[k + 1][g]; B[k][n] = Bt[n][k].
    for (uint32_t r = 0; r < 2; ++r)
      bad_b += b_regs[l * 2 + r] != pair(Bt[g * 16 + 2 * t + 8 * r], Bt[g * 16 + 2 * t + 8 * r + 1]);
    // D fragment: d[r] = D[g + 8 (r / 2)][2t + r % 2], D = A B + C.
    for (uint32_t r = 0; r < 4; ++r) {
      const uint32_t row = g + 8 * (r / 2), col = 2 * t + r % 2;
      double s = C[row * 8 + col];
      for (uint32_t k = 0; k < 16; ++k) s += double(from_bf16(A[row * 16 + k])) * from_bf16(Bt[col * 16 + k]);
      const float expect = float(s);
      bad_d += memcmp(&d[l * 4 + r], &expect, 4) != 0;
    }
  }
  CHECK(bad_a == 0);
  CHECK(bad_p == 0);
  CHECK(bad_b == 0);
  CHECK(bad_d == 0);
}
