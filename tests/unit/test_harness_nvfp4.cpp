// test_harness/nvfp4.cpp — unit tests of the NVFP4 data side of the harness: the scale layout
// (common/nvfp4_layout.h) against the formula of CUTLASS's cutlass/detail/sm100_blockscaled_layout.hpp (the cuBLAS block scaling factors layout) and GPU MODE's to_blocked permutation, the
// E2M1 / UE4M3 encoders and the quantizer (common/harness/nvfp4.cpp). No GPU and no emulator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "common/nvfp4_layout.h"

using namespace tcg;
using namespace tcg::harness;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// What the exception of `f` says ("" if it throws none, or another kind).
template <typename F>
std::string invalid_argument_of(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// The index formula of CUTLASS's SfKMajorAtom (cutlass/detail/sm100_blockscaled_layout.hpp), written out (batch l = 0), in 64 bits.
int64_t facts_offset(int64_t m, int64_t kb, int64_t K) {
  const int64_t sfk = (K + 15) / 16;
  const int64_t sfk_blocks = (sfk + 3) / 4;
  return ((m / 128) * sfk_blocks + kb / 4) * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4 + (kb % 4);
}

// A minimal row-major tensor of ints with the two operations GPU MODE's to_blocked uses:
// reshape (a new shape over the same row-major order) and permute (materialised).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<int> data;

  Tensor reshape(std::vector<int64_t> s) const {
    int64_t known = 1, infer = -1;
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] == -1)
        infer = static_cast<int64_t>(d);
      else
        known *= s[d];
    }
    if (infer >= 0) s[static_cast<size_t>(infer)] = static_cast<int64_t>(data.size()) / known;
    return Tensor{s, data};
  }
  // out.shape[d] = shape[perm[d]]; out[idx] = in[idx permuted back].
  Tensor permute(const std::vector<int>& perm) const {
    Tensor out;
    for (int p : perm) out.shape.push_back(shape[static_cast<size_t>(p)]);
    out.data.resize(data.size());
    std::vector<int64_t> in_stride(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
      in_stride[static_cast<size_t>(d)] = in_stride[static_cast<size_t>(d) + 1] * shape[static_cast<size_t>(d) + 1];
    std::vector<int64_t> idx(out.shape.size(), 0);
    for (size_t flat = 0; flat < data.size(); ++flat) {
      int64_t src = 0;
      for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * in_stride[static_cast<size_t>(perm[d])];
      out.data[flat] = data[static_cast<size_t>(src)];
      for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {  // next index, last fastest
        if (++idx[static_cast<size_t>(d)] < out.shape[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
    return out;
  }
  Tensor transpose(int a, int b) const {
    std::vector<int> perm;
    for (int d = 0; d < static_cast<int>(shape.size()); ++d) perm.push_back(d);
    std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
    return permute(perm);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------

TEST_CASE("nvfp4_layout: sizes and padding") {
  CHECK(fp4_row_bytes(64) == 32);
  CHECK(sf_columns(64) == 4);
  CHECK(sf_columns(80) == 5);
  CHECK(sf_padded_columns(80) == 8);
  CHECK(sf_padded_rows(1) == 128);
  CHECK(sf_padded_rows(128) == 128);
  CHECK(sf_padded_rows(129) == 256);
  CHECK(sf_bytes(200, 320) == 256 * 20);  // 20 scale columns, already a multiple of 4
  CHECK(sf_bytes(1, 16) == 128 * 4);
  static_assert(sf_blocked_offset(0, 0, 64) == 0, "constexpr, usable in static_assert");
  static_assert(sf_blocked_offset(127, 3, 64) == 511, "the last byte of the first atom");
  static_assert(sf_atom_offset(1, 0, 256) == 4 * 512, "K = 256: 4 atoms per 128 rows");
}

TEST_CASE("nvfp4_layout: sf_blocked_offset is CUTLASS's SfKMajorAtom formula, and a bijection") {
  for (uint32_t K : {16u, 64u, 80u, 192u, 1024u}) {
    for (uint32_t rows : {1u, 127u, 128u, 300u}) {
      CAPTURE(K);
      CAPTURE(rows);
      const uint32_t size = sf_bytes(rows, K);
      std::vector<int> hits(size, 0);
      bool same = true;
      for (uint32_t r = 0; r < sf_padded_rows(rows); ++r) {
        for (uint32_t kb = 0; kb < sf_padded_columns(K); ++kb) {
          const uint32_t off = sf_blocked_offset(r, kb, K);
          same = same && static_cast<int64_t>(off) == facts_offset(r, kb, K);
          REQUIRE(off < size);
          ++hits[off];
        }
      }
      CHECK(same);
      // Every byte of the padded array belongs to exactly one (row, column).
      CHECK(std::count(hits.begin(), hits.end(), 1) == static_cast<long>(size));
    }
  }
  // The atom's own picture: rows 0, 32, 64, 96 share the first 16-byte line.
  CHECK(sf_blocked_offset(0, 1, 64) == 1);
  CHECK(sf_blocked_offset(32, 0, 64) == 4);
  CHECK(sf_blocked_offset(96, 3, 64) == 15);
  CHECK(sf_blocked_offset(1, 0, 64) == 16);
  CHECK(sf_blocked_offset(0, 4, 128) == 512);   // next atom along K first...
  CHECK(sf_blocked_offset(128, 0, 128) == 1024);  // ...then the next 128 rows
}

TEST_CASE("nvfp4_layout: GPU MODE's to_blocked permutation puts every scale where we do") {
  // to_blocked(S) = S.view(RB, 128, CB, 4).permute(0, 2, 1, 3).reshape(-1, 4, 32, 4)
  //                  .transpose(1, 2).reshape(-1, 32, 16).flatten()
  // for a padded RB*128 x CB*4 scale matrix S. Element (r, c) of S holds r * 1000 + c, so the
  // flattened result says which scale each byte position got.
  for (const auto& dims : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {3, 2}}) {
    const int64_t rb = dims.first, cb = dims.second, rows = rb * 128, cols = cb * 4;
    Tensor s{{rows, cols}, {}};
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) s.data.push_back(static_cast<int>(r * 1000 + c));
    const Tensor blocked = s.reshape({rb, 128, cb, 4})
                               .permute({0, 2, 1, 3})
                               .reshape({-1, 4, 32, 4})
                               .transpose(1, 2)
                               .reshape({-1, 32, 16})
                               .reshape({-1});
    REQUIRE(blocked.data.size() == static_cast<size_t>(rows * cols));
    const uint32_t K = static_cast<uint32_t>(cols * 16);
    bool same = true;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        same = same && blocked.data[sf_blocked_offset(static_cast<uint32_t>(r),
                                                      static_cast<uint32_t>(c), K)] == r * 1000 + c;
    CHECK(same);
  }
}

TEST_CASE("nvfp4_layout: fp4_code reads the low nibble first") {
  const uint8_t row[2] = {0x21, 0xF7};
  CHECK(fp4_code(row, 0) == 0x1);
  CHECK(fp4_code(row, 1) == 0x2);
  CHECK(fp4_code(row, 2) == 0x7);
  CHECK(fp4_code(row, 3) == 0xF);
}

// ---------------------------------------------------------------------------------------------
// Encoders
// ---------------------------------------------------------------------------------------------

TEST_CASE("float_to_e2m1: every threshold, its ties and its neighbours") {
  // (threshold, code below, code at the tie = the even one, code above)
  const struct {
    float t;
    uint8_t below, tie, above;
  } cases[] = {{0.25f, 0, 0, 1}, {0.75f, 1, 2, 2}, {1.25f, 2, 2, 3}, {1.75f, 3, 4, 4},
               {2.5f, 4, 4, 5},  {3.5f, 5, 6, 6},  {5.0f, 6, 6, 7}};
  for (const auto& c : cases) {
    CAPTURE(c.t);
    const float down = std::nextafter(c.t, 0.0f), up = std::nextafter(c.t, 10.0f);
    CHECK(float_to_e2m1(down, 1.0f) == c.below);
    CHECK(float_to_e2m1(c.t, 1.0f) == c.tie);
    CHECK(float_to_e2m1(up, 1.0f) == c.above);
    CHECK(float_to_e2m1(-c.t, 1.0f) == (c.tie | 8));
    CHECK(float_to_e2m1(-up, 1.0f) == (c.above | 8));
    // The same decision on the exact quotient for a scale with 4 significant bits (0.8125 =
    // 13/16): t * scale is exact in float, and one float step either side must flip it.
    const float s = 0.8125f, ts = c.t * s;
    CHECK(float_to_e2m1(ts, s) == c.tie);
    CHECK(float_to_e2m1(std::nextafter(ts, 0.0f), s) == c.below);
    CHECK(float_to_e2m1(std::nextafter(ts, 10.0f), s) == c.above);
  }
  // Representable values map to their own codes.
  for (uint8_t code = 0; code < 16; ++code) CHECK(float_to_e2m1(e2m1_to_float(code), 1.0f) == code);
}

TEST_CASE("float_to_e2m1: saturation, signed zeros, bad arguments") {
  CHECK(float_to_e2m1(6.0f, 1.0f) == 7);
  CHECK(float_to_e2m1(7.0f, 1.0f) == 7);
  CHECK(float_to_e2m1(1e30f, 1.0f) == 7);
  CHECK(float_to_e2m1(-1e30f, 1.0f) == 15);
  CHECK(float_to_e2m1(std::numeric_limits<float>::max(), 448.0f) == 7);
  CHECK(float_to_e2m1(0.0f, 1.0f) == 0);
  CHECK(float_to_e2m1(-0.0f, 1.0f) == 8);
  CHECK(float_to_e2m1(-0.1f, 1.0f) == 8);  // the sign is kept: -0
  CHECK(contains(invalid_argument_of([] { float_to_e2m1(NAN, 1.0f); }), "not finite"));
  CHECK(contains(invalid_argument_of([] { float_to_e2m1(1.0f, 0.0f); }), "scale"));
  CHECK(contains(invalid_argument_of([] { float_to_e2m1(1.0f, INFINITY); }), "scale"));
}

TEST_CASE("float_to_ue4m3: all codes, ties to even, saturation, subnormals") {
  for (int c = 0; c < 127; ++c) {
    CAPTURE(c);
    const float v = ue4m3_to_float(static_cast<uint8_t>(c));
    REQUIRE(float_to_ue4m3(v) == c);
    if (c < 126) {
      // The midpoint to the next value goes to whichever code is even; a hair either side does not.
      const float next = ue4m3_to_float(static_cast<uint8_t>(c + 1));
      const float mid = 0.5f * (v + next);  // 5 significant bits: exact in float
      REQUIRE(float_to_ue4m3(mid) == (c % 2 == 0 ? c : c + 1));
      REQUIRE(float_to_ue4m3(std::nextafter(mid, 0.0f)) == c);
      REQUIRE(float_to_ue4m3(std::nextafter(mid, 1e9f)) == c + 1);
    }
  }
  CHECK(float_to_ue4m3(448.0f) == 0x7E);
  CHECK(float_to_ue4m3(464.0f) == 0x7E);  // would be the tie with 480 (0x7F is NaN): saturates
  CHECK(float_to_ue4m3(1e30f) == 0x7E);
  CHECK(float_to_ue4m3(0x1p-9f) == 0x01);   // smallest subnormal
  CHECK(float_to_ue4m3(0x1p-10f) == 0x00);  // half of it: tie with 0, which is even
  CHECK(float_to_ue4m3(0x1.8p-10f) == 0x01);
  CHECK(float_to_ue4m3(1.0f) == 0x38);
  CHECK(float_to_ue4m3(1.0625f) == 0x38);  // tie between 1 (0x38) and 1.125 (0x39): even
  CHECK(float_to_ue4m3(1.1875f) == 0x3A);  // tie between 1.125 (0x39) and 1.25 (0x3A): even
  CHECK(contains(invalid_argument_of([] { float_to_ue4m3(-1.0f); }), ">= 0"));
  CHECK(contains(invalid_argument_of([] { float_to_ue4m3(NAN); }), "not finite"));
}

// ---------------------------------------------------------------------------------------------
// Quantizer
// ---------------------------------------------------------------------------------------------

TEST_CASE("quantize_nvfp4: one block by hand") {
  // amax = 3 -> scale = UE4M3(0.5) = 0x30; elements / 0.5 -> codes.
  std::vector<float> x = {0, 0.25f, -0.5f, 0.75f, 1, -1.5f, 2, 3, -3, 0.1f, 0.125f, 0.126f,
                          -0.0f, 1.25f, 1.75f, 2.5f};
  const Nvfp4Matrix q = quantize_nvfp4(x.data(), 1, 16, "A");
  CHECK(q.rows == 1);
  CHECK(q.k == 16);
  REQUIRE(q.data.size() == 8);
  REQUIRE(q.sf.size() == 512);
  CHECK(q.sf[0] == 0x30);
  for (size_t i = 1; i < q.sf.size(); ++i) REQUIRE(q.sf[i] == 0);  // padding
  // x / 0.5: 0, .5, -1, 1.5, 2, -3, 4, 6, -6, .2, .25 (tie -> 0), .252, -0, 2.5 (tie -> 2), 3.5
  // (tie -> 4), 5 (tie -> 4).
  const uint8_t want[16] = {0x0, 0x1, 0xA, 0x3, 0x4, 0xD, 0x6, 0x7,
                            0xF, 0x0, 0x0, 0x1, 0x8, 0x4, 0x6, 0x6};
  for (uint32_t e = 0; e < 16; ++e) {
    CAPTURE(e);
    CHECK(fp4_code(q.data.data(), e) == want[e]);
  }
}

TEST_CASE("quantize_nvfp4: the scale rounds amax/6 to nearest, and elements saturate") {
  // amax = 6.375: amax/6 = 1.0625, a tie between 1 and 1.125 -> 1 (even). Then 6.375 / 1 > 6
  // saturates to 6, as in TE's recipe.
  std::vector<float> x(16, 0.0f);
  x[3] = 6.375f;
  x[4] = -6.375f;
  const Nvfp4Matrix q = quantize_nvfp4(x.data(), 1, 16);
  CHECK(q.sf[0] == 0x38);
  CHECK(fp4_code(q.data.data(), 3) == 7);
  CHECK(fp4_code(q.data.data(), 4) == 15);
  // amax far above 6 * 448: the scale saturates at 448 and so do the elements.
  x[3] = 1e6f;
  const Nvfp4Matrix big = quantize_nvfp4(x.data(), 1, 16);
  CHECK(big.sf[0] == 0x7E);
  CHECK(fp4_code(big.data.data(), 3) == 7);
  CHECK(fp4_code(big.data.data(), 4) == 8);  // -6.375 / 448 rounds to -0
  CHECK(dequantize_nvfp4(big.data.data(), big.sf.data(), 1, 16)[3] == 6.0f * 448.0f);
}

TEST_CASE("quantize_nvfp4: zero blocks and underflowing blocks get scale 0 and zero codes") {
  std::vector<float> x(2 * 32, 0.0f);
  x[16] = -0.0f;
  for (int e = 32; e < 48; ++e) x[static_cast<size_t>(e)] = (e % 2 ? -1 : 1) * 0x1p-13f;  // amax/6 < 2^-10
  x[48] = 1.0f;  // the last block is ordinary
  const Nvfp4Matrix q = quantize_nvfp4(x.data(), 2, 32);
  for (uint32_t r = 0; r < 2; ++r)
    for (uint32_t kb = 0; kb < 2; ++kb) {
      CAPTURE(r);
      CAPTURE(kb);
      CHECK(q.sf[sf_blocked_offset(r, kb, 32)] == (r == 1 && kb == 1 ? float_to_ue4m3(1.0f / 6) : 0));
    }
  for (size_t i = 0; i < 24; ++i) CHECK(q.data[i] == 0);  // no division, no -0 codes
  const std::vector<float> back = dequantize_nvfp4(q.data.data(), q.sf.data(), 2, 32);
  for (size_t i = 0; i < 48; ++i) CHECK(back[i] == 0.0f);
}

TEST_CASE("quantize_nvfp4: NaN and Inf are errors naming the element") {
  std::vector<float> x(3 * 32, 0.5f);
  x[2 * 32 + 17] = std::numeric_limits<float>::quiet_NaN();
  const std::string e = invalid_argument_of([&] { quantize_nvfp4(x.data(), 3, 32, "A"); });
  CHECK(contains(e, "A[2][17]"));
  CHECK(contains(e, "nan"));
  CHECK(e.find('\n') == std::string::npos);
  x[2 * 32 + 17] = 0.5f;
  x[5] = -std::numeric_limits<float>::infinity();
  CHECK(contains(invalid_argument_of([&] { quantize_nvfp4(x.data(), 3, 32, "B"); }), "B[0][5] = -inf"));
  CHECK(contains(invalid_argument_of([&] { quantize_nvfp4(x.data(), 3, 24, "B"); }), "multiple of 16"));
}

TEST_CASE("quantize_nvfp4: round trips for representable inputs") {
  // Random codes and scales where every block holds a ±6 (so its amax / 6 is its scale exactly):
  // dequantize, quantize again, and every code and scale byte must come back.
  uint64_t state = stream_state(42, 7);
  const int64_t rows = 130, k = 96;  // rows past one atom, 6 scale columns (padded to 8)
  std::vector<uint8_t> data(static_cast<size_t>(rows * k / 2)), sf(sf_bytes(rows, k), 0);
  std::set<uint8_t> scales_seen;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t kb = 0; kb < k / 16; ++kb) {
      // Any finite non-zero scale: code values times it are exact, and the ±6 makes it the
      // block's amax / 6 exactly.
      const uint8_t s = static_cast<uint8_t>(1 + below(splitmix64(state), 126));
      scales_seen.insert(s);
      sf[sf_blocked_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(kb), k)] = s;
      const uint32_t six_at = below(splitmix64(state), 16);
      for (uint32_t e = 0; e < 16; ++e) {
        uint8_t code = static_cast<uint8_t>(below(splitmix64(state), 16));
        if (e == six_at) code = (code & 8u) | 7u;
        const int64_t q = kb * 16 + e;
        uint8_t& byte = data[static_cast<size_t>(r * (k / 2) + q / 2)];
        byte = static_cast<uint8_t>(q % 2 == 0 ? (byte & 0xF0u) | code : (byte & 0x0Fu) | code << 4);
      }
    }
  }
  CHECK(scales_seen.size() > 100);
  const std::vector<float> x = dequantize_nvfp4(data.data(), sf.data(), rows, k);
  const Nvfp4Matrix q = quantize_nvfp4(x.data(), rows, k);
  CHECK(q.data == data);
  CHECK(q.sf == sf);  // padding included: it stays 0
}

TEST_CASE("quantize_nvfp4: -0.0 keeps its sign in a block with a non-zero scale") {
  std::vector<float> x(16, 0.0f);
  x[0] = -0.0f;
  x[1] = 6.0f;
  const Nvfp4Matrix q = quantize_nvfp4(x.data(), 1, 16);
  CHECK(q.sf[0] == 0x38);
  CHECK(fp4_code(q.data.data(), 0) == 8);
  CHECK(fp4_code(q.data.data(), 1) == 7);
  CHECK(fp4_code(q.data.data(), 2) == 0);
}

TEST_CASE("quantize_nvfp4: uniform [-1, 1] data lands within one E2M1 rounding of the input") {
  uint64_t state = stream_state(1, 0);
  const int64_t rows = 8, k = 256;
  std::vector<float> x(static_cast<size_t>(rows * k));
  for (float& v : x) v = unit_float(splitmix64(state));
  const Nvfp4Matrix q = quantize_nvfp4(x.data(), rows, k);
  const std::vector<float> back = dequantize_nvfp4(q.data.data(), q.sf.data(), rows, k);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t kb = 0; kb < k / 16; ++kb) {
      const float scale = ue4m3_to_float(
          q.sf[sf_blocked_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(kb), k)]);
      for (int64_t e = 0; e < 16; ++e) {
        const size_t i = static_cast<size_t>(r * k + kb * 16 + e);
        // The step between E2M1 neighbours near |x|/scale is at most 2 (between 4 and 6), so the
        // error is at most a step's half, scaled; or the saturation error at the top.
        const float v = std::fabs(x[i]) / scale;
        const float half_step = v < 2 ? 0.25f : v < 4 ? 0.5f : 1.0f;
        REQUIRE(std::fabs(back[i] - x[i]) <= half_step * scale + std::max(0.0f, std::fabs(x[i]) - 6 * scale));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs and the CPU reference
// ---------------------------------------------------------------------------------------------

TEST_CASE("make_nvfp4_inputs: random = the BF16 path's floats, quantized") {
  const int64_t m = 5, n = 3, k = 64;
  const Nvfp4HostInputs in = make_nvfp4_inputs(Inputs::kRandom, 9, m, n, k);
  for (int which = 0; which < 2; ++which) {
    const int64_t rows = which == 0 ? m : n;
    std::vector<float> x(static_cast<size_t>(rows * k));
    uint64_t state = stream_state(9, static_cast<uint64_t>(which));
    for (float& v : x) v = unit_float(splitmix64(state));
    const Nvfp4Matrix want = quantize_nvfp4(x.data(), rows, k);
    const Nvfp4Matrix& got = which == 0 ? in.a : in.b;
    CHECK(got.rows == rows);
    CHECK(got.data == want.data);
    CHECK(got.sf == want.sf);
  }
  const Nvfp4Operands op = in.operands();
  CHECK(op.a == in.a.data.data());
  CHECK(op.sfb == in.b.sf.data());
  CHECK(op.c == nullptr);
  // Deterministic, and seed-dependent.
  CHECK(make_nvfp4_inputs(Inputs::kRandom, 9, m, n, k).a.data == in.a.data);
  CHECK(make_nvfp4_inputs(Inputs::kRandom, 10, m, n, k).a.data != in.a.data);
}

TEST_CASE("make_nvfp4_inputs without filling (--predict): zero codes and scales of the filled sizes") {
  for (bool dual : {false, true}) {
    const Nvfp4HostInputs made = make_nvfp4_inputs(Inputs::kCompetition, 3, 130, 70, 192, dual);
    const Nvfp4HostInputs none = make_nvfp4_inputs(Inputs::kCompetition, 3, 130, 70, 192, dual, /*fill=*/false);
    for (int w = 0; w < 3; ++w) {
      const Nvfp4Matrix& x = w == 0 ? made.a : w == 1 ? made.b : made.b2;
      const Nvfp4Matrix& z = w == 0 ? none.a : w == 1 ? none.b : none.b2;
      CHECK(z.rows == x.rows);
      CHECK(z.data.size() == x.data.size());
      CHECK(z.sf.size() == x.sf.size());
      CHECK(std::all_of(z.data.begin(), z.data.end(), [](uint8_t v) { return v == 0; }));
      CHECK(std::all_of(z.sf.begin(), z.sf.end(), [](uint8_t v) { return v == 0; }));
    }
    CHECK(made.a.data != none.a.data);
  }
}

TEST_CASE("make_nvfp4_inputs: integer codes and scales come from the exact sets, all occurring") {
  const int64_t m = 130, n = 40, k = 128;
  const Nvfp4HostInputs in = make_nvfp4_inputs(Inputs::kInteger, 3, m, n, k);
  for (const Nvfp4Matrix* x : {&in.a, &in.b}) {
    std::set<uint8_t> codes, scales;
    for (uint32_t r = 0; r < x->rows; ++r) {
      for (uint32_t q = 0; q < k; ++q) codes.insert(fp4_code(x->data.data() + r * (k / 2), q));
      for (uint32_t kb = 0; kb < k / 16; ++kb) scales.insert(x->sf[sf_blocked_offset(r, kb, k)]);
    }
    CHECK(codes == std::set<uint8_t>{0x0, 0x1, 0x2, 0x4, 0x9, 0xA, 0xC});
    CHECK(scales == std::set<uint8_t>{0x30, 0x38, 0x40});
    // Padding rows stay 0.
    for (uint32_t r = static_cast<uint32_t>(x->rows); r < sf_padded_rows(static_cast<uint32_t>(x->rows)); ++r)
      REQUIRE(x->sf[sf_blocked_offset(r, 0, k)] == 0);
  }
  CHECK(in.a.data != make_nvfp4_inputs(Inputs::kInteger, 4, m, n, k).a.data);
}

TEST_CASE("integer NVFP4 inputs: FP32 sums in any order equal the exact sum") {
  // The argument (harness/nvfp4.cpp): multiples of 2^-4 below 16K <= 2^20. Check it on data: the
  // reference (double) against FP32 sums forwards, backwards and block by block.
  const int64_t m = 4, n = 4, k = 4096;
  const Nvfp4HostInputs in = make_nvfp4_inputs(Inputs::kInteger, 5, m, n, k);
  const std::vector<float> a = dequantize_nvfp4(in.a.data.data(), in.a.sf.data(), m, k);
  const std::vector<float> b = dequantize_nvfp4(in.b.data.data(), in.b.sf.data(), n, k);
  std::vector<float> ref(static_cast<size_t>(m * n));
  cpu_reference_nvfp4(in.operands(), m, n, k, ref.data(), nullptr, 1);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float fwd = 0, bwd = 0, blocks = 0;
      for (int64_t q = 0; q < k; ++q) fwd += a[i * k + q] * b[j * k + q];
      for (int64_t q = k - 1; q >= 0; --q) bwd += a[i * k + q] * b[j * k + q];
      for (int64_t kb = 0; kb < k / 16; ++kb) {
        float blk = 0;
        for (int64_t e = 0; e < 16; ++e) blk += a[i * k + kb * 16 + e] * b[j * k + kb * 16 + e];
        blocks += blk;
      }
      CHECK(fwd == ref[i * n + j]);
      CHECK(bwd == ref[i * n + j]);
      CHECK(blocks == ref[i * n + j]);
    }
  }
  // The extreme case of the bound: K = 2^16 products of 4 * 4 add up to 2^20, still exact.
  CHECK(static_cast<float>(kMaxNvfp4IntegerK * 16) == 0x1p20f);
}

TEST_CASE("cpu_reference_nvfp4 on a hand example") {
  // A: 1 x 32, B: 2 x 32. Block 0 of A: value 1 (code 2) everywhere, scale 2; block 1: -0.5
  // (code 9), scale 0.5. B row 0: 2 (code 4), scale 1, in both blocks; B row 1: 6 (code 7),
  // scale 448, then 0. C[0][0] = 16 * (1*2)(2*1) + 16 * (-0.5*0.5)(2*1) = 64 - 8 = 56.
  // C[0][1] = 16 * (2)(6*448) + 0 = 86016; S equals |.|: 64 + 8 = 72 and 86016.
  Nvfp4Matrix a, b;
  a.rows = 1;
  b.rows = 2;
  a.k = b.k = 32;
  a.data.assign(16, 0);
  b.data.assign(32, 0);
  a.sf.assign(sf_bytes(1, 32), 0);
  b.sf.assign(sf_bytes(2, 32), 0);
  for (int i = 0; i < 8; ++i) a.data[static_cast<size_t>(i)] = 0x22;
  for (int i = 8; i < 16; ++i) a.data[static_cast<size_t>(i)] = 0x99;
  a.sf[sf_blocked_offset(0, 0, 32)] = float_to_ue4m3(2.0f);
  a.sf[sf_blocked_offset(0, 1, 32)] = float_to_ue4m3(0.5f);
  for (int i = 0; i < 16; ++i) b.data[static_cast<size_t>(i)] = 0x44;
  for (int i = 16; i < 24; ++i) b.data[static_cast<size_t>(i)] = 0x77;
  b.sf[sf_blocked_offset(0, 0, 32)] = b.sf[sf_blocked_offset(0, 1, 32)] = float_to_ue4m3(1.0f);
  b.sf[sf_blocked_offset(1, 0, 32)] = float_to_ue4m3(448.0f);
  Nvfp4HostInputs in{a, b, {}};
  float ref[2], s[2];
  cpu_reference_nvfp4(in.operands(), 1, 2, 32, ref, s);
  CHECK(ref[0] == 56.0f);
  CHECK(s[0] == 72.0f);
  CHECK(ref[1] == 86016.0f);
  CHECK(s[1] == 86016.0f);
}

// Guards: the wide NVFP4 inputs (the repeat-launch check of step 10 relies on FP32 sums that
// round): their block scales span many binades, unlike the random inputs' (amax/6 of [-1, 1]).
TEST_CASE("make_nvfp4_inputs: wide inputs have block scales over at least 8 binades") {
  const Nvfp4HostInputs in = make_nvfp4_inputs(Inputs::kWide, 1, 128, 128, 1024);
  std::set<int> binades;
  for (uint32_t r = 0; r < 128; ++r)
    for (uint32_t kb = 0; kb < 1024 / kNvfp4BlockSize; ++kb) {
      const float s = tcg::ue4m3_to_float(in.a.sf[tcg::sf_blocked_offset(r, kb, 1024)]);
      if (s > 0) binades.insert(std::ilogb(s));
    }
  CHECK(binades.size() >= 8);
}
