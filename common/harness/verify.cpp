// verify.cpp — checking an output against the FP32 reference: BF16 (steps 00-06) and FP16
// (NVFP4 steps), each with the tolerance of a `random` run (derived below), the element-by-element
// comparison (exact for `integer` inputs), and the PASS/FAIL report. The reference comes from
// cuBLAS (cuBLASLt for NVFP4) on a GPU and from the CPU reference in the emulator.
#include <algorithm>
#include <cmath>

#include "common/harness/internal.h"

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

void tally(VerifyResult& r, int64_t i, int64_t j, double expected, double got, double tol, bool ok,
           double reference, bool overflow, bool inf_expected) {
  if (!std::isfinite(got)) {
    if (!(inf_expected && ok)) {
      ++r.nonfinite;
      ok = false;
    }
  } else if (std::isfinite(expected)) {
    const double err = std::fabs(got - expected);
    if (err > r.max_abs_err || r.max_i < 0) {
      r.max_abs_err = err;
      r.max_i = i;
      r.max_j = j;
    }
    if (tol > 0) r.max_ratio = std::max(r.max_ratio, err / tol);
  }
  if (overflow) ++r.overflow;
  if (!ok) {
    ++r.mismatches;
    if (static_cast<int>(r.first.size()) < kMaxListed)
      r.first.push_back({i, j, expected, got, tol, reference, overflow});
  }
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
      tally(r, i, j, expected, got, tol, ok, ref[idx]);
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// FP16
// ---------------------------------------------------------------------------------------------

// cuda_fp16.h's own conversions (its host implementation serves here), so that the expected FP16
// bits are rounded exactly as a kernel's __float2half_rn rounds them.
uint16_t float_to_fp16_bits(float x) { return fp16_bits(__float2half_rn(x)); }
float fp16_bits_to_float(uint16_t bits) { return __half2float(fp16_from_bits(bits)); }
uint16_t fp16_bits(__half x) { return static_cast<__half_raw>(x).x; }
__half fp16_from_bits(uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half(raw);
}

// Why this tolerance (as bf16_tolerance above, with FP16's precision). x is the exact dot product
// of the decoded operands, S = sum_k |a_ik * sfa| * |b_jk * sfb|.
//  * Accumulation: the kernel and the reference (cuBLASLt on a GPU, block-scaled tensor cores
//    too) sum K products in FP32 in unknown orders and groupings (a tensor core may add a block's
//    16 products first and then scale the sum; that is one more ordering). Each is within K·u·S
//    of x, u = 2^-23 (truncation, since tensor-core rounding is unspecified): 2·K·u·S between
//    them. The CPU reference (double sums, rounded once to float) is closer still.
//  * Output rounding: FP16 has 11 significant bits; rounding to nearest costs at most half an ulp,
//    2^-11·|y| for results in the normal range [2^-14, 65504]. As for BF16 we write |ref| for |y|.
//  * 2^-24, FP16's smallest subnormal (twice the largest rounding error below 2^-14), covers
//    results in the subnormal range, where the relative term is too small.
// Results beyond 65504 are not covered by any tolerance: FP16 rounds them to ±Inf (from 65520 up),
// which verify_fp16 handles separately. As with BF16, err/tol close to 1 can be a correct result.
double fp16_tolerance(double ref, double s, int64_t k) {
  return std::ldexp(std::fabs(ref), -11) + 2.0 * static_cast<double>(k) * std::ldexp(s, -23) +
         std::ldexp(1.0, -24);
}

VerifyResult verify_fp16(Inputs kind, const __half* out, const float* ref, const float* s,
                         int64_t m, int64_t n, int64_t k) {
  // FP16_RN maps [65520, inf) to Inf: the midpoint between 65504 and the next step (65536).
  constexpr double kOverflowAt = 65520;
  VerifyResult r;
  r.inputs = kind;
  r.total = m * n;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = i * n + j;
      const double got = fp16_bits_to_float(fp16_bits(out[idx]));
      const double rounded = fp16_bits_to_float(float_to_fp16_bits(ref[idx]));
      const bool overflow = std::isinf(rounded) && std::isfinite(ref[idx]);
      if (kind == Inputs::kInteger) {
        // Exact reference; the kernel's only rounding is the final one, to FP16 (Inf if too big).
        tally(r, i, j, rounded, got, 0, got == rounded, ref[idx], overflow, std::isinf(rounded));
      } else {
        const double expected = ref[idx];
        const double tol =
            fp16_tolerance(expected, s != nullptr ? s[idx] : std::fabs(expected), k);
        // Near the top of the range the kernel's own sum may round to Inf where the reference
        // did not, or not where it did: within the tolerance, either is right.
        const bool inf_ok = std::fabs(expected) + tol >= kOverflowAt;
        const bool ok = std::fabs(got - expected) <= tol ||
                        (inf_ok && std::isinf(got) && std::signbit(got) == std::signbit(expected));
        tally(r, i, j, overflow ? rounded : expected, got, tol, ok, expected, overflow, inf_ok);
      }
    }
  }
  return r;
}

std::string format_verify(const VerifyResult& r) {
  const long long total = static_cast<long long>(r.total);
  // FP16 overflow is not a failure of the kernel (FP16_RN of the true result is Inf), but it
  // makes those elements uninformative, so every report says how many there were.
  const std::string overflow =
      r.overflow > 0 ? strf("; %lld beyond FP16's range (|ref| > 65504, expected +-Inf)",
                            static_cast<long long>(r.overflow))
                     : std::string();
  if (r.total == 0 && r.passed()) return "PASS: no elements to check (every group has M = 0)";
  if (r.passed()) {
    if (r.inputs == Inputs::kInteger)
      return strf("PASS: all %lld elements exact", total) + overflow;
    return strf("PASS: %lld elements, max |err| %.3g at C[%lld][%lld], max err/tol %.3g", total,
                r.max_abs_err, static_cast<long long>(r.max_i), static_cast<long long>(r.max_j),
                r.max_ratio) +
           overflow;
  }
  std::string s =
      strf("FAIL: %lld of %lld elements wrong, %lld NaN/Inf", static_cast<long long>(r.mismatches),
           total, static_cast<long long>(r.nonfinite));
  if (r.max_i >= 0)
    s += strf("; max |err| %.6g at C[%lld][%lld]", r.max_abs_err, static_cast<long long>(r.max_i),
              static_cast<long long>(r.max_j));
  s += overflow;
  for (const Mismatch& mm : r.first) {
    s += strf("\n  C[%lld][%lld]: expected %.9g, got %.9g", static_cast<long long>(mm.i),
              static_cast<long long>(mm.j), mm.expected, mm.got);
    s += r.inputs == Inputs::kInteger ? std::string(" (exact)") : strf(" (tol %.3g)", mm.tol);
    if (mm.overflow) s += strf(" [reference %.9g overflows FP16]", mm.reference);
  }
  if (r.mismatches > static_cast<int64_t>(r.first.size()))
    s += strf("\n  ... and %lld more",
              static_cast<long long>(r.mismatches - static_cast<int64_t>(r.first.size())));
  return s;
}

}  // namespace tcg::harness
