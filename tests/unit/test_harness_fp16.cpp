// test_harness_fp16.cpp — unit tests of the harness's FP16-output side (NVFP4 steps): the FP16
// conversions, the tolerance, verify_fp16 (exact and toleranced checks, NaN/Inf, FP16 overflow)
// and the NVFP4 command line (K a multiple of 64, the integer-input K cap, the usage text).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/harness/internal.h"

using namespace tcg;
using namespace tcg::harness;

namespace {

const StepSpec kFp4Spec = {7, "nvfp4_test", "an NVFP4 step for the tests", Arch::kSm100f, 64,
                           Operands::kNVFP4};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

__half h(float x) { return fp16_from_bits(float_to_fp16_bits(x)); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Conversions and tolerance
// ---------------------------------------------------------------------------------------------

TEST_CASE("float_to_fp16_bits: nearest even, overflow at 65520, subnormals") {
  CHECK(float_to_fp16_bits(1.0f) == 0x3C00);
  CHECK(float_to_fp16_bits(-2.0f) == 0xC000);
  CHECK(float_to_fp16_bits(-0.0f) == 0x8000);
  CHECK(float_to_fp16_bits(1.0f + 0x1p-11f) == 0x3C00);      // tie: even mantissa
  CHECK(float_to_fp16_bits(1.0f + 3 * 0x1p-11f) == 0x3C02);  // tie: even mantissa
  CHECK(float_to_fp16_bits(65504.0f) == 0x7BFF);
  CHECK(float_to_fp16_bits(65519.99f) == 0x7BFF);
  CHECK(float_to_fp16_bits(65520.0f) == 0x7C00);  // the tie with 65536 goes to Inf
  CHECK(float_to_fp16_bits(-1e6f) == 0xFC00);
  CHECK(float_to_fp16_bits(0x1p-24f) == 0x0001);  // smallest subnormal
  CHECK(float_to_fp16_bits(0x1p-25f) == 0x0000);  // half of it: tie to even (0)
  CHECK(std::isnan(fp16_bits_to_float(0xFFFF)));  // the poison value
  CHECK(std::isnan(fp16_bits_to_float(0x7E00)));
  CHECK(fp16_bits_to_float(0x3E00) == 1.5f);
  CHECK(fp16_bits(fp16_from_bits(0x1234)) == 0x1234);
}

TEST_CASE("fp16_tolerance on a hand example") {
  // ref = 1, S = 2, K = 256: 2^-11 + 2*256*2^-23*2 + 2^-24 = 2^-11 + 2^-13 + 2^-24.
  CHECK(fp16_tolerance(1.0, 2.0, 256) == 0x1p-11 + 0x1p-13 + 0x1p-24);
  CHECK(fp16_tolerance(-1.0, 2.0, 256) == fp16_tolerance(1.0, 2.0, 256));
  CHECK(fp16_tolerance(0.0, 0.0, 64) == 0x1p-24);
}

// ---------------------------------------------------------------------------------------------
// verify_fp16
// ---------------------------------------------------------------------------------------------

TEST_CASE("verify_fp16: exact match passes for both kinds") {
  const int64_t m = 3, n = 5, k = 64;
  std::vector<float> ref(m * n), s(m * n, 40.0f);
  std::vector<__half> out(m * n);
  for (int64_t i = 0; i < m * n; ++i) {
    ref[i] = 0.25f * static_cast<float>(i) - 2;
    out[i] = h(ref[i]);
  }
  for (Inputs kind : {Inputs::kInteger, Inputs::kRandom}) {
    const VerifyResult r = verify_fp16(kind, out.data(), ref.data(), s.data(), m, n, k);
    CHECK(r.passed());
    CHECK(r.total == 15);
    CHECK(r.overflow == 0);
    CHECK(contains(format_verify(r), "PASS"));
    CHECK_FALSE(contains(format_verify(r), "FP16's range"));
  }
}

TEST_CASE("verify_fp16: integer inputs compare FP16_RN(reference) bit for bit") {
  // 2049 is no FP16 value: RN gives 2048 (tie to even), the only right answer; -0 == +0.
  std::vector<float> ref = {2049.0f, 0.0f, 0.0625f};
  std::vector<__half> out = {h(2048.0f), fp16_from_bits(0x8000), h(0.0625f)};
  CHECK(verify_fp16(Inputs::kInteger, out.data(), ref.data(), nullptr, 1, 3, 64).passed());
  out[0] = h(2050.0f);
  const VerifyResult r = verify_fp16(Inputs::kInteger, out.data(), ref.data(), nullptr, 1, 3, 64);
  CHECK(r.mismatches == 1);
  CHECK(contains(format_verify(r), "C[0][0]: expected 2048, got 2050 (exact)"));
}

TEST_CASE("verify_fp16: a wrong element is named with its coordinates") {
  const int64_t m = 4, n = 6, k = 128;
  std::vector<float> ref(m * n, 3.0f), s(m * n, 3.0f);
  std::vector<__half> out(m * n, h(3.0f));
  out[3 * n + 5] = h(-3.0f);  // C[3][5]
  for (Inputs kind : {Inputs::kInteger, Inputs::kRandom}) {
    const VerifyResult r = verify_fp16(kind, out.data(), ref.data(), s.data(), m, n, k);
    CHECK(r.mismatches == 1);
    REQUIRE(r.first.size() == 1);
    CHECK(r.first[0].i == 3);
    CHECK(r.first[0].j == 5);
    CHECK(r.max_i == 3);
    CHECK(r.max_j == 5);
    const std::string text = format_verify(r);
    CHECK(contains(text, "FAIL: 1 of 24 elements wrong, 0 NaN/Inf"));
    CHECK(contains(text, "C[3][5]: expected 3, got -3"));
  }
}

TEST_CASE("verify_fp16: NaN (the poison) and Inf are caught where the result is finite") {
  const int64_t m = 2, n = 4, k = 64;
  std::vector<float> ref(m * n, 1.0f), s(m * n, 1.0f);
  std::vector<__half> out(m * n, h(1.0f));
  out[1] = fp16_from_bits(0xFFFF);  // never written
  out[6] = fp16_from_bits(0x7C00);  // +Inf
  for (Inputs kind : {Inputs::kInteger, Inputs::kRandom}) {
    const VerifyResult r = verify_fp16(kind, out.data(), ref.data(), s.data(), m, n, k);
    CHECK(r.nonfinite == 2);
    CHECK(r.mismatches == 2);
    CHECK(r.overflow == 0);
    CHECK(contains(format_verify(r), "2 NaN/Inf"));
    CHECK(contains(format_verify(r), "C[1][2]: expected 1, got inf"));
  }
}

TEST_CASE("verify_fp16: random inputs pass inside the tolerance and fail outside") {
  const int64_t k = 256;
  const float ref = 1.0f, s = 2.0f;
  // The next FP16 value above 1 is 2^-10 away, more than 2^-11 + 2^-13 + 2^-24.
  std::vector<__half> out = {h(1.0f + 0x1p-10f)};
  VerifyResult r = verify_fp16(Inputs::kRandom, out.data(), &ref, &s, 1, 1, k);
  CHECK_FALSE(r.passed());
  CHECK(r.first[0].tol == fp16_tolerance(ref, s, k));
  // A larger S (cancellation) widens it: 2*256*2^-23*16 = 2^-10.
  const float s_big = 16.0f;
  r = verify_fp16(Inputs::kRandom, out.data(), &ref, &s_big, 1, 1, k);
  CHECK(r.passed());
  CHECK(r.max_ratio == doctest::Approx(0x1p-10 / fp16_tolerance(ref, s_big, k)));
  // Subnormal results: the 2^-24 floor.
  const float tiny = 0x1p-25f, no_s = 0.0f;
  std::vector<__half> zero = {h(0.0f)};
  CHECK(verify_fp16(Inputs::kRandom, zero.data(), &tiny, &no_s, 1, 1, k).passed());
}

TEST_CASE("verify_fp16: integer results beyond 65504 must be the Inf FP16_RN gives") {
  std::vector<float> ref = {70000.0f, -65520.0f, 65504.0f};
  std::vector<__half> out = {fp16_from_bits(0x7C00), fp16_from_bits(0xFC00), h(65504.0f)};
  VerifyResult r = verify_fp16(Inputs::kInteger, out.data(), ref.data(), nullptr, 1, 3, 64);
  CHECK(r.passed());
  CHECK(r.overflow == 2);
  CHECK(r.nonfinite == 0);
  CHECK(contains(format_verify(r), "PASS: all 3 elements exact; 2 beyond FP16's range"));
  // The largest finite value is not the right answer for an overflowing result...
  out[0] = h(65504.0f);
  r = verify_fp16(Inputs::kInteger, out.data(), ref.data(), nullptr, 1, 3, 64);
  CHECK(r.mismatches == 1);
  CHECK(contains(format_verify(r), "C[0][0]: expected inf, got 65504 (exact) [reference 70000 "
                                   "overflows FP16]"));
  // ...and an Inf of the wrong sign is a NaN/Inf failure.
  out[0] = fp16_from_bits(0xFC00);
  r = verify_fp16(Inputs::kInteger, out.data(), ref.data(), nullptr, 1, 3, 64);
  CHECK(r.mismatches == 1);
  CHECK(r.nonfinite == 1);
}

TEST_CASE("verify_fp16: random results near the top of the range may be Inf or finite") {
  const int64_t k = 64;
  // 65519 rounds to 65504, but the kernel's own sum may reach 65520 and round to Inf: both pass.
  std::vector<float> ref = {65519.0f, 65519.0f, -80000.0f, 60000.0f};
  std::vector<float> s = {65519.0f, 65519.0f, 80000.0f, 60000.0f};
  std::vector<__half> out = {h(65504.0f), fp16_from_bits(0x7C00), fp16_from_bits(0xFC00),
                             h(60000.0f)};
  VerifyResult r = verify_fp16(Inputs::kRandom, out.data(), ref.data(), s.data(), 1, 4, k);
  CHECK(r.passed());
  CHECK(r.overflow == 1);  // only -80000 itself rounds to -Inf
  CHECK(contains(format_verify(r), "1 beyond FP16's range"));
  // Far from the top, Inf is wrong; and so is the wrong sign.
  out[3] = fp16_from_bits(0x7C00);
  out[2] = fp16_from_bits(0x7C00);
  r = verify_fp16(Inputs::kRandom, out.data(), ref.data(), s.data(), 1, 4, k);
  CHECK(r.mismatches == 2);
  CHECK(r.nonfinite == 2);
  CHECK(contains(format_verify(r), "[reference -80000 overflows FP16]"));
}

// ---------------------------------------------------------------------------------------------
// Command line of an NVFP4 step
// ---------------------------------------------------------------------------------------------

TEST_CASE("NVFP4 steps: K must be a multiple of 64, and the error says why") {
  const ParseResult r = parse_args(kFp4Spec, {"--k=96"});
  CHECK(r.error ==
        "step07: --k=96: K must be a multiple of 64 for NVFP4 (one kind::mxf4nvf4 MMA consumes "
        "K = 64, four 16-element scale blocks)");
  CHECK(r.error.find('\n') == std::string::npos);
  CHECK(parse_args(kFp4Spec, {"--k=192"}).error.empty());
  // Even a step that declared a smaller multiple gets the NVFP4 rule.
  const StepSpec loose = {7, "x", "y", Arch::kSm100f, 16, Operands::kNVFP4};
  CHECK(contains(parse_args(loose, {"--k=32"}).error, "for NVFP4"));
  // BF16 steps are unaffected.
  const StepSpec bf16 = {1, "x", "y", Arch::kSm100f, 8};
  CHECK(parse_args(bf16, {"--k=96"}).error.empty());
}

TEST_CASE("NVFP4 steps: integer inputs cap K at 2^16") {
  CHECK(contains(parse_args(kFp4Spec, {"--inputs=integer", "--k=65600", "--m=1", "--n=1"}).error,
                 "NVFP4 --inputs integer needs K <= 65536"));
  CHECK(parse_args(kFp4Spec, {"--inputs=integer", "--k=65536", "--m=1", "--n=1"}).error.empty());
  CHECK(parse_args(kFp4Spec, {"--k=65600", "--m=1", "--n=1"}).error.empty());  // random: no cap
}

TEST_CASE("NVFP4 steps: the usage text describes the operands and the K rule") {
  const std::string u = usage(kFp4Spec);
  CHECK(contains(u, "NVFP4"));
  CHECK(contains(u, "FP16"));
  CHECK(contains(u, "K must be a multiple of 64: one kind::mxf4nvf4 MMA"));
  CHECK(contains(u, "cuBLASLt"));
  CHECK(contains(u, "K <= 65536"));
  CHECK_FALSE(contains(u, "BF16"));
  CHECK_FALSE(contains(usage({1, "x", "y", Arch::kSm100f, 8}), "NVFP4"));
}
