// test_mma_layouts.cpp — tcgen05.mma's shared-memory operands in the emulator (common/sim/mma.cpp):
// the canonical K-major layouts (no swizzle, 32/64/128-byte swizzle) placed by TMA and by hand,
// bit for bit against the ISA's tables; the K advance inside a swizzle row; the blog post's failed
// no-swizzle attempt; and the descriptor and instruction-shape diagnostics.
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
#include "mma_test_kernels.h"

using namespace tcg_test;  // SimOptions, sim_error, run_isolated, operands, the shared kernels

// ============================================================================ 1. canonical layouts

TEST_CASE("emulator: canonical K-major layouts, one MMA and a full swizzle row, bitwise") {
  SimOptions opt(1);
  for (uint32_t span : {kCoreMatrices, 32u, 64u, 128u}) {
    // Tile width: one swizzle row (16 elements = one MMA for no swizzle and 32B; 32 for 64B;
    // 64 for 128B). A second no-swizzle case covers 4 MMAs (K = 64) below.
    const uint32_t k = span == kCoreMatrices ? 16 : span / 2;
    const Operands op = make_operands(k, 64, span);
    for (bool tma : {true, false}) {
      CAPTURE(span_name(span));
      CAPTURE(tma);
      MmaCase c = canonical_case(span, 64);
      c.use_tma = tma;
      // One MMA: K = 16 from the start of the tile.
      c.num_mma = 1;
      CaseResult one = run_case(c, op, /*images=*/true);
      const std::vector<float> ref1 = reference(op, 16);
      INFO("mismatching elements: " << count_mismatches(one.out, ref1));
      CHECK(same_bits(one.out, ref1));
      // Every MMA of the row (start + 32 j inside the swizzle row): the whole 128 x k product.
      c.num_mma = k / 16;
      CaseResult all = run_case(c, op);
      const std::vector<float> ref_all = reference(op, k);
      INFO("mismatching elements (all K): " << count_mismatches(all.out, ref_all));
      CHECK(same_bits(all.out, ref_all));
      // Where the data lies: TMA and the ordinary stores must both produce the ISA's placement.
      bool placed = true;
      for (uint32_t m = 0; m < 128 && placed; ++m)
        for (uint32_t kk = 0; kk < k; ++kk)
          placed &= memcmp(&one.img_a[isa_place(span, 128, k, m, kk)], &op.a[m * k + kk], 2) == 0;
      for (uint32_t j = 0; j < 64 && placed; ++j)
        for (uint32_t kk = 0; kk < k; ++kk)
          placed &= memcmp(&one.img_b[isa_place(span, 64, k, j, kk)], &op.b[j * k + kk], 2) == 0;
      CHECK(placed);
    }
  }
}

TEST_CASE("emulator: no-swizzle core-matrix tile of K = 64 takes 4 MMAs at +2*rows*16 bytes") {
  SimOptions opt(2);
  const Operands op = make_operands(64, 64, 7);
  for (bool tma : {true, false}) {
    CAPTURE(tma);
    MmaCase c = canonical_case(kCoreMatrices, 64);
    c.use_tma = tma;
    c.num_mma = 4;
    const CaseResult r = run_case(c, op);
    const std::vector<float> ref = reference(op, 64);
    INFO("mismatching elements: " << count_mismatches(r.out, ref));
    CHECK(same_bits(r.out, ref));
  }
}

TEST_CASE("emulator: 128B swizzle K advance: +32 bytes per MMA is right, +16 and +64 are wrong") {
  SimOptions opt(3);
  const Operands op = make_operands(64, 64, 11);  // 128 x 64: one 128-byte atom column
  const std::vector<float> ref64 = reference(op, 64), ref32 = reference(op, 32);
  for (bool tma : {true, false}) {
    CAPTURE(tma);
    MmaCase c = canonical_case(128, 64);
    c.use_tma = tma;
    c.num_mma = 4;
    CHECK(same_bits(run_case(c, op).out, ref64));  // start + 32 j, j = 0..3

    c.a_kstep = c.b_kstep = 16;  // wrong: reads k 8..23 in the second MMA, ...
    const std::vector<float> wrong16 = run_case(c, op).out;
    INFO("K step 16: mismatching elements " << count_mismatches(wrong16, ref64));
    CHECK_FALSE(same_bits(wrong16, ref64));

    c.a_kstep = c.b_kstep = 64;  // wrong: 2 MMAs read k 0..15 and 32..47 instead of 0..31
    c.num_mma = 2;
    const std::vector<float> wrong64 = run_case(c, op).out;
    CHECK_FALSE(same_bits(wrong64, ref32));

    // With 4 MMAs the third start (+128) leaves the 128-byte row: the emulator refuses it, and
    // either way the result is not the product.
    c.num_mma = 4;
    std::vector<float> out4;
    const std::string err = sim_error([&] { out4 = run_case(c, op).out; });
    INFO("K step 64 x 4: " << err);
    CHECK((!err.empty() || !same_bits(out4, ref64)));
  }
}

// ============================================================================ 2. the blog post's no-swizzle attempt

TEST_CASE("emulator: the blog post's failed no-swizzle attempt (row-major, LBO 16, SBO 1024) gives wrong results") {
  SimOptions opt(4);
  const Operands op = make_operands(64, 128, 21);  // BLOCK_M = BLOCK_N = 128, BLOCK_K = 64
  const std::vector<float> ref = reference(op, 64);

  // v0: the tile is stored as plain rows of 128 bytes (a 2-D TMA box {64, 128}), descriptors
  // with LBO = 16 B and SBO = 8 * BLOCK_K * 2 = 1024 B; MMA s starts 32 bytes further along K.
  MmaCase bad;
  bad.span = kRowMajor;
  bad.desc_layout = uint32_t(tcg::Layout::kNone);
  bad.a_lbo = bad.b_lbo = 16;
  bad.a_sbo = bad.b_sbo = 8 * 64 * 2;
  bad.a_kstep = bad.b_kstep = 32;
  bad.num_mma = 4;
  std::vector<float> wrong;
  const std::string err = sim_error([&] { wrong = run_case(bad, op).out; });
  INFO(err);
  REQUIRE(err.empty());  // it runs (the descriptors are well formed), it just computes garbage
  INFO("mismatching elements: " << count_mismatches(wrong, ref));
  CHECK_FALSE(same_bits(wrong, ref));
  CHECK(count_mismatches(wrong, ref) > 128 * 128 / 2);

  // v1: [8 k-groups][128 rows][8 elements] (3-D TMA box {8, 128, 8}); LBO = 128 * 16 = 2048,
  // SBO = 128, MMA s starts at s * 4096.
  MmaCase good = canonical_case(kCoreMatrices, 128);
  good.num_mma = 4;
  REQUIRE(good.a_lbo == 2048);
  REQUIRE(good.a_sbo == 128);
  REQUIRE(good.a_kstep == 4096);
  const std::vector<float> right = run_case(good, op).out;
  INFO("mismatching elements: " << count_mismatches(right, ref));
  CHECK(same_bits(right, ref));
}

// ============================================================================ 3. descriptor and shape diagnostics

TEST_CASE("emulator: descriptor and shape diagnostics") {
  SUBCASE("a valid 128B-swizzle MMA runs (the control for the cases below)") {
    uint32_t completed = 0;
    const std::string err = run_raw(RawMma{}, &completed);
    INFO(err);
    CHECK(err.empty());
    CHECK(completed == 1);
  }
  SUBCASE("bit 46 cleared") {
    RawMma r;
    r.a_xor = uint64_t(1) << 46;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "bits 46-48"));
  }
  SUBCASE("layout type 3") {
    RawMma r;
    r.layout = 3;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "layout type 3"));
  }
  SUBCASE("swizzled start not on its 1024-byte repeat (+128), while +96 is a legal K step") {
    RawMma r;
    r.a_off = kTileA + 96;
    CHECK(run_raw(r).empty());
    r.a_off = kTileA + 128;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "swizzle repeat"));
  }
  SUBCASE("M = 256 with cta_group::1") {
    RawMma r;
    r.idesc = tcg::make_idesc_bf16_f32(256, 128);
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "invalid MMA shape"));
  }
  SUBCASE("N = 264") {
    RawMma r;
    r.idesc = tcg::make_idesc_bf16_f32(128, 264);
    r.alloc_cols = 512;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "invalid MMA shape"));
  }
  // make_idesc_f16 cannot store N = 12 (the field holds N >> 3); it encodes M = 0 for shapes it
  // cannot represent, so the emulator reports an invalid shape instead of running N = 8.
  SUBCASE("N = 12 (not a multiple of 8)") {
    RawMma r;
    r.idesc = tcg::make_idesc_bf16_f32(128, 12);
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "invalid MMA shape"));
  }
}
