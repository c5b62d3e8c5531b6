// harness_verify.cpp — checking a BF16 output against the FP32 reference: the tolerance of a
// `random` run (derived below), the element-by-element comparison (exact for `integer` inputs),
// and the PASS/FAIL report. The reference comes from cuBLAS on a GPU and from cpu_reference in
// the emulator. An FP16 output would get its own tolerance (its rounding is 2^-11, not 2^-8).
#include <algorithm>
#include <cmath>

#include "common/harness_internal.h"

namespace tcg::harness {

// Why this tolerance. Let x be the exact dot product for C[i][j] and S = sum_k |a_ik|·|b_jk|.
//  * Accumulation: the kernel and the reference (cuBLAS, itself on tensor cores) both sum K
//    products in FP32, in orders we do not know. Any order of K additions stays within K·u·S of x
//    (the standard first-order bound for summation). We take u = 2^-23, the bound for truncation,
//    because the rounding of tensor-core accumulation is not specified. So the kernel's FP32 sum y
//    and the reference r differ by at most 2·K·u·S. (The CPU reference, summed in double, is
//    closer still.)
//  * Output rounding: the kernel rounds y to BF16 (8 significant bits) to nearest: at most half an
//    ulp, 2^-8·|y|. We write 2^-8·|r|; the difference, at most 2^-8·2·K·u·S, is second order and
//    swamped by the pessimism of the K·u·S bound (real accumulation errors grow far slower).
//  * 2^-133, the smallest BF16 subnormal, covers results that underflow (r = 0, S tiny).
// Note the first term is tight: a correctly rounded result can be off by nearly 2^-8·|r| (just
// above a power of two), so err/tol ratios close to 1 are normal; above 1 is a failure.
double bf16_tolerance(double ref, double s, int64_t k) {
  return std::ldexp(std::fabs(ref), -8) + 2.0 * static_cast<double>(k) * std::ldexp(s, -23) +
         std::ldexp(1.0, -133);
}

VerifyResult verify(Inputs kind, const __nv_bfloat16* out, const float* ref, const float* s,
                    int64_t m, int64_t n, int64_t k) {
  VerifyResult r;
  r.inputs = kind;
  r.total = m * n;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = i * n + j;
      const double got = bf16_to_float(out[idx]);
      double expected, tol;
      bool ok;
      if (kind == Inputs::kInteger) {
        // The reference is an exact integer; the kernel's only rounding is the final one to BF16.
        expected = bf16_bits_to_float(float_to_bf16_bits(ref[idx]));
        tol = 0;
        ok = got == expected;  // value comparison: -0 == +0, NaN never equal
      } else {
        expected = ref[idx];
        tol = bf16_tolerance(expected, s != nullptr ? s[idx] : std::fabs(expected), k);
        ok = std::fabs(got - expected) <= tol;  // false for NaN
      }
      if (!std::isfinite(got)) {
        ++r.nonfinite;
        ok = false;
      } else {
        const double err = std::fabs(got - expected);
        if (err > r.max_abs_err || r.max_i < 0) {
          r.max_abs_err = err;
          r.max_i = i;
          r.max_j = j;
        }
        if (tol > 0) r.max_ratio = std::max(r.max_ratio, err / tol);
      }
      if (!ok) {
        ++r.mismatches;
        if (static_cast<int>(r.first.size()) < kMaxListed)
          r.first.push_back({i, j, expected, got, tol});
      }
    }
  }
  return r;
}

std::string format_verify(const VerifyResult& r) {
  const long long total = static_cast<long long>(r.total);
  if (r.passed()) {
    if (r.inputs == Inputs::kInteger) return strf("PASS: all %lld elements exact", total);
    return strf("PASS: %lld elements, max |err| %.3g at C[%lld][%lld], max err/tol %.3g", total,
                r.max_abs_err, static_cast<long long>(r.max_i), static_cast<long long>(r.max_j),
                r.max_ratio);
  }
  std::string s =
      strf("FAIL: %lld of %lld elements wrong, %lld NaN/Inf", static_cast<long long>(r.mismatches),
           total, static_cast<long long>(r.nonfinite));
  if (r.max_i >= 0)
    s += strf("; max |err| %.6g at C[%lld][%lld]", r.max_abs_err, static_cast<long long>(r.max_i),
              static_cast<long long>(r.max_j));
  for (const Mismatch& mm : r.first) {
    s += strf("\n  C[%lld][%lld]: expected %.9g, got %.9g", static_cast<long long>(mm.i),
              static_cast<long long>(mm.j), mm.expected, mm.got);
    s += r.inputs == Inputs::kInteger ? std::string(" (exact)") : strf(" (tol %.3g)", mm.tol);
  }
  if (r.mismatches > static_cast<int64_t>(r.first.size()))
    s += strf("\n  ... and %lld more",
              static_cast<long long>(r.mismatches - static_cast<int64_t>(r.first.size())));
  return s;
}

}  // namespace tcg::harness
