// test_harness/reference.cpp — unit tests of the fast CPU reference GEMM
// (common/harness/reference.cpp) and of cpu_reference built on it: bit-for-bit agreement with the
// naive double loop on awkward shapes, across thread counts and instruction-set versions, and
// exact integer sums. (The hand examples of cpu_reference are in test_harness.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/harness/internal.h"

using namespace tcg::harness;

namespace {

// The reference as the header defines it: one double per element, summed in order q = 0, 1, ...
void naive_reference(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                     int64_t n, int64_t k, std::vector<float>* ref, std::vector<float>* s) {
  ref->assign(static_cast<size_t>(m * n), 0.0f);
  s->assign(static_cast<size_t>(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double d = 0, ds = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double p = double(a[i * k + q]) * double(b[j * k + q]);
        d += p;
        ds += std::fabs(p);
      }
      (*ref)[i * n + j] = static_cast<float>(d);
      (*s)[i * n + j] = static_cast<float>(ds);
    }
  }
}

std::vector<float> to_floats(const std::vector<__nv_bfloat16>& x) {
  std::vector<float> f;
  for (__nv_bfloat16 v : x) f.push_back(bf16_to_float(v));
  return f;
}

// Bitwise equality of two float arrays (so -0 differs from +0, and NaN, e.g. an element never
// written, never matches); reports the first difference.
void check_same_bits(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      CAPTURE(i);
      CHECK(got[i] == want[i]);
      return;
    }
  }
}

// Float inputs with all 24 significant bits in use and exponents over a wide range (2^-20 to
// 2^20), both signs: products of two need 48 bits, beyond BF16's reach, yet are exact in double.
std::vector<float> wide_floats(uint64_t seed, size_t count) {
  std::vector<float> f(count);
  for (float& x : f) {
    const uint64_t r = splitmix64(seed);
    const float mant = 1.0f + static_cast<float>(r >> 41) * 0x1p-23f;  // [1, 2), 23 random bits
    const int exp = static_cast<int>((r >> 8) % 41) - 20;
    x = std::ldexp((r & 1) ? -mant : mant, exp);
  }
  return f;
}

// Every way of running the reference (1 thread, 3 threads, the default, and the portable version
// on 2 threads) against the naive loop, bit for bit, with and without S; the output starts as
// NaN so an element left unwritten fails.
void check_reference_paths(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                           int64_t n, int64_t k) {
  std::vector<float> want_ref, want_s;
  naive_reference(a, b, m, n, k, &want_ref, &want_s);
  const struct {
    unsigned threads;
    ReferencePath path;
  } runs[] = {{1, ReferencePath::kFastest},
              {3, ReferencePath::kFastest},
              {0, ReferencePath::kFastest},
              {2, ReferencePath::kPortable}};
  for (const auto& run : runs) {
    CAPTURE(run.threads);
    CAPTURE(run.path == ReferencePath::kPortable);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> ref(static_cast<size_t>(m * n), nan), s(ref);
    reference_gemm(a.data(), b.data(), m, n, k, ref.data(), s.data(), run.threads, run.path);
    check_same_bits(ref, want_ref);
    check_same_bits(s, want_s);
    std::vector<float> ref_only(static_cast<size_t>(m * n), nan);  // without S: the same ref
    reference_gemm(a.data(), b.data(), m, n, k, ref_only.data(), nullptr, run.threads, run.path);
    check_same_bits(ref_only, want_ref);
  }
}

}  // namespace

TEST_CASE("reference_gemm equals the naive double loop bit for bit on awkward shapes") {
  // 1, 7, 33, 65, 130: not multiples of the micro-tile (2 or 4 rows, 8 columns) and 130 spans
  // two row blocks (96).
  const int64_t dims[] = {1, 7, 33, 65, 130};
  uint64_t seed = 11;
  for (int64_t m : dims) {
    for (int64_t n : dims) {
      for (int64_t k : dims) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        for (Inputs kind : {Inputs::kInteger, Inputs::kRandom}) {
          CAPTURE(inputs_name(kind));
          const HostInputs in = make_inputs(kind, ++seed, m, n, k);
          check_reference_paths(to_floats(in.a), to_floats(in.b), m, n, k);
        }
      }
    }
  }
}

TEST_CASE("reference_gemm: shapes spanning several blocks in every dimension") {
  // Blocks are 96 rows x 512 columns x 256 of K: these cross each boundary, off the multiples,
  // and give more work items than threads.
  const struct {
    int64_t m, n, k;
  } shapes[] = {{200, 530, 300}, {1, 1100, 600}, {97, 9, 513}};
  for (const auto& sh : shapes) {
    CAPTURE(sh.m);
    CAPTURE(sh.n);
    CAPTURE(sh.k);
    const HostInputs in = make_inputs(Inputs::kRandom, 5, sh.m, sh.n, sh.k);
    check_reference_paths(to_floats(in.a), to_floats(in.b), sh.m, sh.n, sh.k);
  }
}

TEST_CASE("reference_gemm: full-precision floats (48-bit products) are still exact") {
  const int64_t m = 33, n = 70, k = 300;
  check_reference_paths(wide_floats(1, m * k), wide_floats(2, n * k), m, n, k);
}

TEST_CASE("cpu_reference: integer inputs give the exact integer sums") {
  // Checked against int64 arithmetic, independent of any floating-point loop.
  const int64_t m = 65, n = 33, k = 1000;
  const HostInputs in = make_inputs(Inputs::kInteger, 3, m, n, k);
  std::vector<float> ref(m * n), s(m * n);
  cpu_reference(in.a.data(), in.b.data(), m, n, k, ref.data(), s.data());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t d = 0, ds = 0;
      for (int64_t q = 0; q < k; ++q) {
        const int64_t p = static_cast<int64_t>(bf16_to_float(in.a[i * k + q])) *
                          static_cast<int64_t>(bf16_to_float(in.b[j * k + q]));
        d += p;
        ds += p < 0 ? -p : p;
      }
      if (ref[i * n + j] != static_cast<float>(d) || s[i * n + j] != static_cast<float>(ds)) {
        CAPTURE(i);
        CAPTURE(j);
        CHECK(ref[i * n + j] == static_cast<float>(d));
        CHECK(s[i * n + j] == static_cast<float>(ds));
        return;
      }
    }
  }
}

TEST_CASE("reference_threads: a request wins, else the hardware's count, never 0") {
  CHECK(reference_threads(3) == 3);
  CHECK(reference_threads(0) >= 1);
}
