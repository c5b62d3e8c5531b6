// test_fp4.cpp — NVFP4 block scaling in the emulator (step 07; common/sim/mma_block_scaled.cpp):
// the E2M1 / UE4M3 decoders and the block-scaled instruction descriptor, the placement of
// tcgen05.cp.32x128b.warpx4, and tcgen05.mma.kind::mxf4nvf4.block_scale.block16 bit for bit.
// Its diagnostics are in test_fp4_diagnostics.cpp.
//
// Every test is a small real kernel written with the ptx.cuh wrappers only, launched in the
// emulator on one CTA. The expected side is computed here from the PTX ISA
// (§9.7.16.10.7; docs/references.md): the E2M1 / UE4M3 tables of
// §5.2.3, the 512-byte scale-factor atom (byte (r%32)*16 + (r/32)*4 + s for row r, block s), the
// 32x128b.warpx4 placement (byte j of source row r -> lanes r + 32w, column C0 + j/4, byte j%4)
// and D += sum_s sa*sb*dot16. Operands and scales are chosen so every sum is exact in FP32 (the
// test checks that precondition), so results are compared bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "fp4_test_kernels.h"

using namespace tcg_test;       // SimOptions, sim_error, contains, hex
using namespace tcg_test::fp4;  // Fp4Case, Fp4Data, make_data, reference, run_fp4, fp4_error

// ============================================================================ 1. number formats

static_assert(tcg::e2m1_to_float(0x7) == 6.0f && tcg::e2m1_to_float(0xB) == -1.5f, "E2M1 at compile time");
static_assert(tcg::ue4m3_to_float(0x38) == 1.0f && tcg::ue4m3_to_float(0x7E) == 448.0f, "UE4M3 at compile time");

TEST_CASE("fp4: E2M1 decodes all 16 codes (PTX ISA §5.2.3)") {
  for (uint32_t c = 0; c < 16; ++c) {
    CAPTURE(c);
    CHECK(tcg::e2m1_to_float(uint8_t(c)) == kE2M1[c]);
    CHECK(std::signbit(tcg::e2m1_to_float(uint8_t(c))) == (c >= 8));  // code 8 is -0
  }
  CHECK(tcg::e2m1_to_float(0x1) == 0.5f);  // the only E2M1 subnormal
}

TEST_CASE("fp4: UE4M3 decodes normals, subnormals, 448, and refuses NaN and the sign bit") {
  CHECK(tcg::ue4m3_to_float(0x00) == 0.0f);
  CHECK(tcg::ue4m3_to_float(0x01) == std::ldexp(1.0f, -9));  // smallest subnormal
  CHECK(tcg::ue4m3_to_float(0x07) == 7.0f / 512);            // largest subnormal
  CHECK(tcg::ue4m3_to_float(0x08) == std::ldexp(1.0f, -6));  // smallest normal
  CHECK(tcg::ue4m3_to_float(0x30) == 0.5f);
  CHECK(tcg::ue4m3_to_float(0x3C) == 1.5f);
  CHECK(tcg::ue4m3_to_float(0x3A) == 1.25f);
  CHECK(tcg::ue4m3_to_float(0x7E) == 448.0f);  // largest
  CHECK(std::isnan(tcg::ue4m3_to_float(0x7F)));
  for (uint32_t b = 0x80; b < 0x100; ++b) CHECK(std::isnan(tcg::ue4m3_to_float(uint8_t(b))));
  for (uint32_t b = 0; b < 0x7F; ++b) {  // every finite code, from the definition
    CAPTURE(b);
    CHECK(double(tcg::ue4m3_to_float(uint8_t(b))) == ue4m3_ref(uint8_t(b)));
    if (b) CHECK(tcg::ue4m3_to_float(uint8_t(b)) > tcg::ue4m3_to_float(uint8_t(b - 1)));  // monotonic
  }
}

TEST_CASE("fp4: make_idesc_mxf4nvf4 fields and decode") {
  CHECK(tcg::make_idesc_mxf4nvf4(128, 256) == 0x08400480u);  // hand-encoded from PTX ISA §9.7.16.4.2 (CUTLASS agrees: tests/unit/test_cutlass.cpp)
  CHECK(tcg::make_idesc_mxf4nvf4(128, 128) == 0x08200480u);
  CHECK(tcg::make_idesc_mxf4nvf4(128, 256, false, 2, 2) == 0x48c004a0u);  // UE8M0, SF IDs 2 (hand-encoded from PTX ISA §9.7.16.4.2, kind::mxf4)
  const tcg::IdescBlockScaled d = tcg::decode_idesc_block_scaled(tcg::make_idesc_mxf4nvf4(128, 72, true, 1, 3));
  CHECK(d.m == 128);
  CHECK(d.n == 72);
  CHECK(d.a_format == 1);
  CHECK(d.b_format == 1);
  CHECK(d.scale_type == 0);
  CHECK(d.sfa_id == 1);
  CHECK(d.sfb_id == 3);
  CHECK(d.k_size == 0);
  CHECK((tcg::make_idesc_mxf4nvf4(128, 260) >> 24) == 0u);  // unrepresentable N: M field 0
  CHECK(tcg::is_valid_mxf4_shape_cta1(128, 8));
  CHECK(tcg::is_valid_mxf4_shape_cta1(128, 256));
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta1(64, 64));
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta1(256, 64));
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta1(128, 12));
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta1(128, 264));
}

// ============================================================================ 2. tcgen05.cp placement

namespace {

constexpr uint32_t kCpSbo = 256;   // rows r and r+8 are 256 bytes apart: the gaps must not be copied
constexpr uint32_t kCpCol = 8;     // destination column (relative to the allocation)

// Warp 5 (lane quarter 1, so no tcgen05.ld/st-style quarter rule may apply to the issuer) copies
// one 32 x 16-byte source, laid out with SBO = 256, to TMEM; warps 0-3 read their quarter's 4
// columns back: out[lane * 4 + c].
__global__ void cp_kernel(const uint8_t* src, uint32_t* out) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t done = base + 4096, slot = done + 8;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    tcg::tmem_alloc(slot, 32);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  for (uint32_t i = threadIdx.x; i < 4 * kCpSbo; i += blockDim.x) smem[i] = src[i];
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + 4096 + 8);
  if (warp == 5 && tcg::elect_one_sync()) {
    tcg::tcgen05_cp_32x128b_warpx4(tcg::tmem_offset(tmem, 0, kCpCol),
                                   tcg::make_smem_desc(base, 0, kCpSbo, tcg::Layout::kNone));
    tcg::mma_commit(done);
  }
  tcg::mbarrier_wait_parity(done, 0);
  tcg::tcgen05_fence_after_thread_sync();
  if (warp < 4) {
    uint32_t r[8];
    tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, warp * 32, kCpCol - 2), r);  // 2 columns either side
    tcg::tmem_wait_ld(r);
    memcpy(&out[(warp * 32 + lane) * 8], r, sizeof r);
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, 32);
}

}  // namespace

TEST_CASE("fp4: tcgen05.cp.32x128b.warpx4 puts every byte of a 512-byte atom where the ISA says") {
  std::vector<uint8_t> src(4 * kCpSbo);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(mix(uint32_t(i), 1, 2));
  for (uint64_t seed : {1, 2, 4}) {
    CAPTURE(seed);
    SimOptions opt(seed);
    std::vector<uint32_t> out(128 * 8, 0);
    const std::string err = sim_error([&] {
      tcg::launch_kernel(cp_kernel, tcg::LaunchDims{dim3(1), dim3(192), 4096 + 64 + tcg::kSmemAlignSlack}, nullptr,
                         src.data(), out.data());
    });
    REQUIRE(err == "");
    size_t wrong = 0;
    for (uint32_t r = 0; r < 32; ++r)
      for (uint32_t j = 0; j < 16; ++j) {
        const uint8_t expect = src[(r / 8) * kCpSbo + (r % 8) * 16 + j];  // row r of the descriptor
        for (uint32_t w = 0; w < 4; ++w) {  // lane r + 32w, column kCpCol + j/4, byte j%4
          const uint32_t cell = out[(r + 32 * w) * 8 + 2 + j / 4];
          wrong += uint8_t(cell >> (8 * (j % 4))) != expect;
        }
      }
    CHECK(wrong == 0);
    // The columns on either side still hold the allocator's poison: the copy wrote 4 columns only.
    for (uint32_t l = 0; l < 128; ++l)
      for (uint32_t c : {0u, 1u, 6u, 7u}) CHECK(out[l * 8 + c] == 0xFFC0DEADu);
  }
}

// ============================================================================ 3. the block-scaled MMA

TEST_CASE("fp4: one kind::mxf4nvf4 block16 MMA, N = 64 and 256, no swizzle and 128B swizzle, bitwise") {
  for (uint32_t n : {64u, 256u})
    for (bool swizzle : {false, true}) {
      CAPTURE(n);
      CAPTURE(swizzle);
      SimOptions opt(swizzle ? 1 : 2);
      const Fp4Data d = make_data(n, 1, n + swizzle);
      const std::vector<float> ref = reference(d);
      REQUIRE(exact_in_fp32(d, ref));
      // The scale blocks are told apart: applying block 3-s's scales (or ignoring A's) changes D.
      CHECK_FALSE(same_bits(reference(d, {3, 2, 1, 0}), ref));
      CHECK_FALSE(same_bits(reference(d, {1, 0, 3, 2}), ref));
      Fp4Case c;
      c.swizzle = swizzle;
      std::vector<float> out;
      const std::string err = sim_error([&] { out = run_fp4(c, d); });
      REQUIRE(err == "");
      INFO("mismatching elements: " << count_mismatches(out, ref));
      CHECK(same_bits(out, ref));
    }
}

TEST_CASE("fp4: four MMAs along a 128B-swizzled row (start + 32 j), each with its own scale columns, accumulate") {
  for (uint32_t n : {64u, 256u}) {
    CAPTURE(n);
    SimOptions opt(3);
    const Fp4Data d = make_data(n, 4, 40 + n);
    const std::vector<float> ref = reference(d);
    REQUIRE(exact_in_fp32(d, ref));
    Fp4Case c;
    c.swizzle = true;
    std::vector<float> out;
    const std::string err = sim_error([&] { out = run_fp4(c, d); });
    REQUIRE(err == "");
    INFO("mismatching elements: " << count_mismatches(out, ref));
    CHECK(same_bits(out, ref));
  }
  SimOptions opt(5);  // no swizzle: the second MMA starts 2 * rows * 16 bytes on
  const Fp4Data d = make_data(64, 2, 3);
  const std::vector<float> ref = reference(d);
  REQUIRE(exact_in_fp32(d, ref));
  Fp4Case c;
  c.swizzle = false;
  CHECK(same_bits(run_fp4(c, d), ref));
}
