// test_harness_dual_silu.cpp — unit tests of the dual GEMM's harness side (dual_silu.cpp, step 15)
// and of the NVFP4 competition's inputs (nvfp4.cpp): silu at 0 and at both ends, the integer
// (bitwise) and toleranced verification of C = silu(x) * y, FP16 overflow reported, the
// competition's rtol = atol = 1e-3 check, the competition generator's codes and scales, and the
// command line (--inputs competition for NVFP4 steps only, the dual GEMM's FLOPs).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "common/nvfp4_layout.h"

using namespace tcg;
using namespace tcg::harness;

namespace {

const StepSpec kDualSpec = {15, "dual_test", "a dual GEMM step for the tests", Arch::kSm100f, 64,
                            Operands::kNVFP4DualSilu};
const StepSpec kFp4Spec = {7, "nvfp4_test", "an NVFP4 step for the tests", Arch::kSm100f, 64, Operands::kNVFP4};

__half h(double x) { return fp16_from_bits(float_to_fp16_bits(static_cast<float>(x))); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("silu_reference: 0, large negative, large positive, and a value in between") {
  CHECK(silu_reference(0.0) == 0.0);
  CHECK(silu_reference(-1000.0) == 0.0);  // e^1000 overflows to Inf: -1000 / Inf = -0
  CHECK(std::signbit(silu_reference(-1000.0)));
  CHECK(silu_reference(1000.0) == 1000.0);  // e^-1000 = 0
  CHECK(silu_reference(40.0) == 40.0);      // e^-40 below half an ulp of 1
  CHECK(silu_reference(-20.0) == doctest::Approx(-20.0 * std::exp(-20.0)).epsilon(1e-6));
  CHECK(silu_reference(1.0) == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))).epsilon(1e-15));
  CHECK(silu_reference(-1.0) == doctest::Approx(-1.0 / (1.0 + std::exp(1.0))).epsilon(1e-15));
}

TEST_CASE("verify_dual_silu, integer inputs: bitwise, -0 == +0, FP16 overflow reported and Inf required") {
  // x, y exact; C[0] = silu(3) * 5, C[1] = silu(-300) * 7 = -0, C[2] = silu(300) * 300 = 90000 (past
  // 65504: Inf expected), C[3] = silu(0) * 9 = 0.
  const std::vector<float> x = {3, -300, 300, 0}, y = {5, 7, 300, 9};
  const double c0 = silu_reference(3) * 5;
  std::vector<__half> out = {h(c0), h(0.0), h(std::numeric_limits<double>::infinity()), h(-0.0)};
  VerifyResult r = verify_dual_silu(Inputs::kInteger, out.data(), x.data(), nullptr, y.data(), nullptr, 2, 2, 64);
  CHECK(r.passed());
  CHECK(r.overflow == 1);
  CHECK(contains(format_verify(r), "1 beyond FP16's range"));
  // One FP16 ulp off: wrong (no rounding boundary within 2^-20 of c0).
  out[0] = fp16_from_bits(static_cast<uint16_t>(fp16_bits(h(c0)) + 1));
  r = verify_dual_silu(Inputs::kInteger, out.data(), x.data(), nullptr, y.data(), nullptr, 2, 2, 64);
  CHECK(r.mismatches == 1);
  // The overflowing element as 65504 (not Inf): wrong, and still counted as an overflow.
  out[0] = h(c0);
  out[2] = h(65504.0);
  r = verify_dual_silu(Inputs::kInteger, out.data(), x.data(), nullptr, y.data(), nullptr, 2, 2, 64);
  CHECK(r.mismatches == 1);
  CHECK(r.overflow == 1);
  // NaN is never right.
  out[2] = fp16_from_bits(0x7E00);
  r = verify_dual_silu(Inputs::kInteger, out.data(), x.data(), nullptr, y.data(), nullptr, 2, 2, 64);
  CHECK(r.nonfinite == 1);
}

TEST_CASE("verify_dual_silu, integer inputs: either neighbour where the FP32 epilogue straddles a rounding boundary") {
  // y chosen so that silu(x) * y lies within 2^-20 (relative) of the midpoint between two FP16
  // values: 1 + 2^-11 is the midpoint of 1 and 1 + 2^-10.
  const float x = 30.0f;  // silu(30) = 30 (1 - 9.4e-14)
  const double v_target = 1.0 + std::ldexp(1.0, -11);
  const float y = static_cast<float>(v_target / silu_reference(x));
  const double v = silu_reference(x) * y;
  REQUIRE(std::fabs(v - v_target) < v_target * std::ldexp(1.0, -21));
  for (double got : {1.0, 1.0 + std::ldexp(1.0, -10)}) {
    const std::vector<__half> out = {h(got)};
    CHECK(verify_dual_silu(Inputs::kInteger, out.data(), &x, nullptr, &y, nullptr, 1, 1, 64).passed());
  }
  const std::vector<__half> far = {h(1.0 + 2 * std::ldexp(1.0, -10))};
  CHECK_FALSE(verify_dual_silu(Inputs::kInteger, far.data(), &x, nullptr, &y, nullptr, 1, 1, 64).passed());
}

TEST_CASE("verify_dual_silu, random inputs: the accumulation error carried through silu and the product") {
  // x = 2, y = 100, with S = 1000 each and K = 4096: Tx = Ty = 2 * 4096 * 2^-23 * 1000 = 0.977;
  // the tolerance is about 1.1 * 100 * 0.977 + silu(2) * 0.977 + ... = 109.
  const float x = 2, y = 100, s = 1000;
  const double v = silu_reference(2) * 100;
  const std::vector<__half> near = {h(v + 100)}, far = {h(v + 130)};
  CHECK(verify_dual_silu(Inputs::kRandom, near.data(), &x, &s, &y, &s, 1, 1, 4096).passed());
  CHECK_FALSE(verify_dual_silu(Inputs::kRandom, far.data(), &x, &s, &y, &s, 1, 1, 4096).passed());
  // Without S the magnitudes stand in: a much tighter bound.
  CHECK_FALSE(verify_dual_silu(Inputs::kRandom, near.data(), &x, nullptr, &y, nullptr, 1, 1, 4096).passed());
  const std::vector<__half> exact = {h(v)};
  const VerifyResult r = verify_dual_silu(Inputs::kCompetition, exact.data(), &x, nullptr, &y, nullptr, 1, 1, 4096);
  CHECK(r.passed());
  CHECK(r.overflow == 0);
}

TEST_CASE("dual_silu_reference and competition_check: rtol = atol = 1e-3 on FP16 values, Inf only as itself") {
  const std::vector<float> x = {1, -2, 40}, y = {2, 3, 4000};
  const std::vector<float> ref = dual_silu_reference(x.data(), y.data(), 3);
  CHECK(ref[0] == static_cast<float>(silu_reference(1) * 2));
  CHECK(ref[2] == 160000.0f);  // beyond FP16: its FP16 rounding is Inf
  std::vector<__half> out = {h(ref[0]), h(ref[1]), h(std::numeric_limits<double>::infinity())};
  CompetitionCheck c = competition_check(out.data(), ref.data(), 1, 3);
  CHECK(c.outside == 0);
  CHECK(contains(format_competition_check(c), "competition: PASS: all 3 elements"));
  // 1e-3 + 1e-3 * |ref[1]| (about 0.000714): two FP16 ulps at 0.71 (2^-11 each, 0.00049) are
  // within it, eight are not.
  out[1] = fp16_from_bits(static_cast<uint16_t>(fp16_bits(h(ref[1])) + 2));
  CHECK(competition_check(out.data(), ref.data(), 1, 3).outside == 0);
  out[1] = fp16_from_bits(static_cast<uint16_t>(fp16_bits(h(ref[1])) + 8));
  c = competition_check(out.data(), ref.data(), 1, 3);
  CHECK(c.outside == 1);
  CHECK(c.worst_j == 1);
  CHECK(contains(format_competition_check(c), "competition: FAIL: 1 of 3"));
  out[1] = h(ref[1]);
  out[2] = h(65504.0);  // a finite value where the reference is Inf
  CHECK(competition_check(out.data(), ref.data(), 1, 3).outside == 1);
  out[2] = fp16_from_bits(0x7E00);  // NaN
  CHECK(competition_check(out.data(), ref.data(), 1, 3).outside == 1);
}

TEST_CASE("competition inputs: codes 0, +-0.5, +-1, +-1.5 (-0 included), scales UE4M3 of [0, 1), B2 for the dual GEMM") {
  const int64_t m = 256, n = 128, k = 1024;
  const Nvfp4HostInputs in = make_nvfp4_inputs(Inputs::kCompetition, 7, m, n, k, /*dual=*/true);
  REQUIRE(in.b2.data.size() == in.b.data.size());
  CHECK(in.b2.data != in.b.data);
  std::vector<int64_t> count(16, 0);
  for (uint8_t byte : in.a.data) ++count[byte & 0xF], ++count[byte >> 4];
  const int64_t total = m * k;
  for (int code = 0; code < 16; ++code) {
    if ((code & 0x4) != 0) {
      CHECK(count[code] == 0);  // the mask 0xBB clears bit 2 of each nibble
    } else {
      // 8 codes, each about 1/8 of the nibbles (0xBB's byte is one draw short of the others').
      CHECK(count[code] > total / 8 * 0.95);
      CHECK(count[code] < total / 8 * 1.05);
    }
  }
  // Scales: UE4M3 codes of values in [0, 1]: at most 0x38 (1.0); below 0.5 half of them.
  std::set<uint8_t> codes;
  int64_t below_half = 0, blocks = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t kb = 0; kb < k / 16; ++kb) {
      const uint8_t sf = in.a.sf[sf_blocked_offset(uint32_t(r), uint32_t(kb), uint32_t(k))];
      codes.insert(sf);
      below_half += sf < 0x30;
      ++blocks;
    }
  CHECK(*codes.rbegin() <= 0x38);
  CHECK(codes.size() > 50);  // every exponent from 2^-9 up
  CHECK(below_half > blocks * 0.45);
  CHECK(below_half < blocks * 0.55);
  // The dual flag adds B2 and leaves A and B as they were.
  const Nvfp4HostInputs single = make_nvfp4_inputs(Inputs::kCompetition, 7, m, n, k);
  CHECK(single.a.data == in.a.data);
  CHECK(single.b.sf == in.b.sf);
  CHECK(single.b2.data.empty());
  CHECK(single.operands().b2 == nullptr);
  CHECK(in.operands().b2 == in.b2.data.data());
}

TEST_CASE("--inputs competition: NVFP4 steps only; the dual GEMM counts two GEMMs' FLOPs") {
  CHECK(parse_args(kFp4Spec, {"--inputs=competition"}).options.inputs == Inputs::kCompetition);
  CHECK(parse_args(kDualSpec, {"--inputs", "competition"}).error.empty());
  const StepSpec bf16 = {1, "x", "y", Arch::kSm100f, 8};
  const ParseResult r = parse_args(bf16, {"--inputs=competition"});
  CHECK(contains(r.error, "the competition's inputs are NVFP4"));
  CHECK(r.error.find('\n') == std::string::npos);
  CHECK(contains(parse_args(kFp4Spec, {"--inputs=x"}).error, "expected random, integer, wide or competition"));
  CHECK(std::string(inputs_name(Inputs::kCompetition)) == "competition");
  Options o;
  o.m = 256, o.n = 4096, o.k = 7168;
  CHECK(problem_flops(kFp4Spec, o) == 2.0 * 256 * 4096 * 7168);
  CHECK(problem_flops(kDualSpec, o) == 4.0 * 256 * 4096 * 7168);
  CHECK(contains(usage(kDualSpec), "silu(A * B1^T) * (A * B2^T)"));
  CHECK(contains(usage(kFp4Spec), "competition"));
}
