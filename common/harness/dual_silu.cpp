// dual_silu.cpp — the dual GEMM with SiLU of step 15 (Operands::kNVFP4DualSilu): its CPU reference
// C = silu(x) * y from the two products x = A . B1^T and y = A . B2^T (each from
// cpu_reference_nvfp4), the verification of its FP16 output, and the NVFP4 competition's own
// check (rtol = atol = 1e-3), which every NVFP4 step prints for --inputs competition.
//
// Why these tolerances (internal.h states them):
//  * x and y are the FP32 sums the kernel's two accumulators hold, up to the order of their
//    additions: fp16_tolerance's accumulation term 2 K 2^-23 S bounds each (Tx, Ty).
//  * silu is 1.0998-Lipschitz (its derivative peaks at x = 2.3994), so an error e in x moves
//    silu(x) by at most 1.1 e, and the product by 1.1 |y| e; an error in y moves it by |silu(x)| e;
//    both together add at most 1.1 Tx Ty.
//  * The kernel's FP32 epilogue (expf: 2 ulp or less, one division, one product) is within 2^-20
//    of the true silu(x) * y relative to it (an estimate with margin), then rounded to FP16:
//    fp16_tolerance's 2^-11 |ref| + 2^-24.
#include <cmath>
#include <limits>

#include "common/harness/internal.h"

namespace tcg::harness {

namespace {
constexpr double kOverflowAt = 65520;           // FP16_RN of |v| >= 65520 is Inf
constexpr double kSiluLipschitz = 1.0998;       // max |silu'(x)|, at x = 2.3994
constexpr double kEpilogueRelative = 0x1p-20;   // the kernel's FP32 silu(x) * y, relative (estimate)
}  // namespace

double silu_reference(double x) { return x / (1.0 + std::exp(-x)); }

std::vector<float> dual_silu_reference(const float* x, const float* y, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = static_cast<float>(silu_reference(x[i]) * y[i]);
  return out;
}

VerifyResult verify_dual_silu(Inputs kind, const __half* out, const float* x, const float* sx, const float* y,
                              const float* sy, int64_t m, int64_t n, int64_t k) {
  VerifyResult r;
  r.inputs = kind;
  r.total = m * n;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = i * n + j;
      const double got = fp16_bits_to_float(fp16_bits(out[idx]));
      const double v = silu_reference(x[idx]) * double(y[idx]);
      // FP16_RN of the exact value; float_to_fp16_bits takes a float, whose rounding (2^-24) can
      // only matter at a tie, which the either-neighbour rule below covers.
      const double rounded = fp16_bits_to_float(float_to_fp16_bits(static_cast<float>(v)));
      const bool overflow = std::isinf(rounded);
      if (kind == Inputs::kInteger) {
        // x and y exact: the only roundings are the FP32 epilogue's and the final one to FP16.
        const double lo = v - std::fabs(v) * kEpilogueRelative, hi = v + std::fabs(v) * kEpilogueRelative;
        const double r_lo = fp16_bits_to_float(float_to_fp16_bits(static_cast<float>(lo)));
        const double r_hi = fp16_bits_to_float(float_to_fp16_bits(static_cast<float>(hi)));
        const bool ok = got == r_lo || got == r_hi;
        tally(r, i, j, rounded, got, 0, ok, v, overflow, std::isinf(r_lo) || std::isinf(r_hi));
      } else {
        const double tx = 2.0 * double(k) * std::ldexp(sx ? double(sx[idx]) : std::fabs(double(x[idx])), -23);
        const double ty = 2.0 * double(k) * std::ldexp(sy ? double(sy[idx]) : std::fabs(double(y[idx])), -23);
        const double s = silu_reference(x[idx]);
        const double tol = fp16_tolerance(v, 0, k) + kSiluLipschitz * std::fabs(double(y[idx])) * tx +
                           std::fabs(s) * ty + kSiluLipschitz * tx * ty + kEpilogueRelative * std::fabs(v);
        const bool inf_ok = std::fabs(v) + tol >= kOverflowAt;
        const bool ok = std::fabs(got - v) <= tol || (inf_ok && std::isinf(got) && std::signbit(got) == std::signbit(v));
        tally(r, i, j, overflow ? rounded : v, got, tol, ok, v, overflow, inf_ok);
      }
    }
  return r;
}

CompetitionCheck competition_check(const __half* out, const float* ref, int64_t m, int64_t n) {
  CompetitionCheck c;
  c.total = m * n;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = i * n + j;
      const double got = fp16_bits_to_float(fp16_bits(out[idx]));
      const double want = fp16_bits_to_float(float_to_fp16_bits(ref[idx]));
      const double bound = kCompetitionAtol + kCompetitionRtol * std::fabs(want);
      bool ok;
      double excess = 0;
      if (std::isinf(want) || std::isinf(got)) ok = got == want;  // allclose: an Inf only matches itself
      else {
        excess = std::fabs(got - want) - bound;  // NaN compares false: outside
        ok = excess <= 0;
      }
      if (!ok) {
        ++c.outside;
        const double e = std::isfinite(excess) ? excess : std::numeric_limits<double>::infinity();
        if (c.worst_i < 0 || e > c.worst_excess) c.worst_excess = e, c.worst_i = i, c.worst_j = j;
      }
    }
  return c;
}

std::string format_competition_check(const CompetitionCheck& c) {
  if (c.outside == 0)
    return strf("competition: PASS: all %lld elements within rtol = atol = 1e-3 of FP16_RN(reference) "
                "(torch.allclose, as the competition's check)",
                static_cast<long long>(c.total));
  return strf("competition: FAIL: %lld of %lld elements outside rtol = atol = 1e-3 of FP16_RN(reference); worst at "
              "C[%lld][%lld], %.3g past the bound",
              static_cast<long long>(c.outside), static_cast<long long>(c.total), static_cast<long long>(c.worst_i),
              static_cast<long long>(c.worst_j), c.worst_excess);
}

}  // namespace tcg::harness
