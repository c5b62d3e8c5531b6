// probe_internal.h — what the files that build the tcgen05 probe cases share (probe_cases.cpp:
// kind::f16, the CTA pair and the case list; probe_cases_fp4.cpp: kind::mxf4nvf4 and the
// experiments; probe_compare.cpp): deterministic inputs, our own placement of K-major operands in
// shared memory, a CPU image of TMEM and the read-back map. Not for use outside tests/gpu/.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/descriptors.h"
#include "probe_cases.h"

namespace probe {
namespace detail {

extern int g_broken;  // set_broken_expectation()

// ---------------------------------------------------------------- small helpers
struct Rng {  // splitmix64: the same cases on every machine
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int range(int lo, int hi) { return lo + int(next() % uint64_t(hi - lo + 1)); }
};

inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline uint16_t to_bf16(float f) {  // round to nearest even (values here are finite)
  const uint32_t u = f32_bits(f);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
inline float bf16_value(uint16_t h) { return bits_f32(uint32_t(h) << 16); }
inline uint8_t ue4m3_code(double v) {  // the UE4M3 byte of an exactly representable value
  for (uint32_t b = 0; b < 0x7F; ++b)
    if (double(tcg::ue4m3_to_float(uint8_t(b))) == v) return uint8_t(b);
  throw std::logic_error("not a UE4M3 value");
}
inline uint32_t align_up(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }

using tcg::Layout;
inline uint32_t span_of(Layout l) {
  return l == Layout::kSwizzle128B ? 128u : l == Layout::kSwizzle64B ? 64u : l == Layout::kSwizzle32B ? 32u : 16u;
}
inline const char* layout_name(Layout l) {
  return l == Layout::kSwizzle128B ? "128B swizzle" : l == Layout::kSwizzle64B ? "64B swizzle"
         : l == Layout::kSwizzle32B ? "32B swizzle" : "no swizzle";
}

// A K-major operand: `rows` rows of `row_bytes` bytes, in shared memory at `off`.
// No swizzle: 8-row x 16-byte core matrices, the one of row group g and 16-byte K chunk c at
// off + g*SBO + c*LBO, row r%8 of it at +16*(r%8). Swizzled (span W bytes): row r of an atom
// column at off + (r/8)*SBO + (r%8)*W, then the XOR of address bits [4,7) with [7,10) (limited to
// the span's bits); atom columns of W bytes of K follow each other at `col_stride` bytes.
struct Operand {
  uint32_t off = 0, rows = 0, row_bytes = 0, lbo = 0, sbo = 0, col_stride = 0;
  Layout layout = Layout::kNone;
  uint32_t addr(uint32_t r, uint32_t b) const {
    if (layout == Layout::kNone) return off + (r / 8) * sbo + (b / 16) * lbo + (r % 8) * 16 + b % 16;
    const uint32_t w = span_of(layout);
    const uint32_t a = off + (b / w) * col_stride + (r / 8) * sbo + (r % 8) * w + b % w;
    const uint32_t bits = w == 128 ? 7u : w == 64 ? 3u : 1u;
    return a ^ (((a >> 7) & bits) << 4);
  }
  // The descriptor start of K step s (32 bytes of K each: 16 BF16 or 64 E2M1).
  uint32_t kstep_start(uint32_t s) const {
    if (layout == Layout::kNone) return off + 2 * s * lbo;
    const uint32_t w = span_of(layout);
    return off + (32 * s / w) * col_stride + (32 * s) % w;
  }
  uint32_t extent() const {
    uint32_t hi = 0;
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t b = 0; b < row_bytes; b += 16) hi = std::max(hi, addr(r, b) + 16);
    return hi - off;
  }
};

inline Operand make_operand(uint32_t off, uint32_t rows, uint32_t row_bytes, Layout l, uint32_t lbo, uint32_t sbo) {
  Operand o;
  o.off = off;
  o.rows = rows;
  o.row_bytes = row_bytes;
  o.layout = l;
  o.lbo = lbo;
  o.sbo = sbo;
  o.col_stride = align_up((rows + 7) / 8 * sbo, 1024);
  return o;
}

inline void place(std::vector<uint8_t>& image, const Operand& o, const std::vector<uint8_t>& bytes) {
  for (uint32_t r = 0; r < o.rows; ++r)
    for (uint32_t b = 0; b < o.row_bytes; ++b) {
      const uint32_t a = o.addr(r, b);
      if (a >= image.size()) image.resize(align_up(a + 1, 1024), 0);
      image[a] = bytes[size_t(r) * o.row_bytes + b];
    }
}

// ---------------------------------------------------------------- TMEM and the read-back
struct Tmem {
  std::vector<double> v = std::vector<double>(128 * 512, 0.0);
  std::vector<uint8_t> def = std::vector<uint8_t>(128 * 512, 0);
  void set(uint32_t lane, uint32_t col, double x) {
    v[lane * 512 + col] = x;
    def[lane * 512 + col] = 1;
  }
};

// The TMEM cell word i of thread t reads (PTX ISA §9.7.16.8.3).
void word_cell(const ReadSpec& rd, uint32_t t, uint32_t i, uint32_t& lane, uint32_t& col);
// want / defined (and bound, if given: per TMEM cell) of `c` from a TMEM image.
void fill_expectation(Case& c, const Tmem& tm, const std::vector<double>* bound_cells = nullptr);

// Where D row m lives (data-path layouts §9.7.16.10.5): M = 128 layout D (row m in lane m), M = 64
// layout F (rows 16j..16j+15 in lanes 32j + d_lane .. +15).
inline uint32_t d_lane_of(uint32_t M, uint32_t d_lane, uint32_t m) {
  if (M == 128 || g_broken == 1) return d_lane + m;
  return d_lane + m % 16 + 32 * (m / 16);
}

// ---------------------------------------------------------------- kind::f16
struct F16Spec {
  uint32_t M = 128, N = 64, ksteps = 4;
  uint32_t d_lane = 0, d_col = 0;
  Layout layout = Layout::kSwizzle128B;
  int lbo_mode = 0;        // no swizzle: 0 K chunks adjacent (LBO 128), 1 row groups adjacent (SBO 128), 2 gaps
  uint32_t sbo_factor = 1; // swizzled: SBO = sbo_factor * 8 * span (1 dense, 2 every other 8-row group)
  uint32_t acc_mask = ~1u; // bit s: accumulate flag of K step s (bit 0 must be 0: TMEM holds garbage)
  uint32_t shape = kLd32x32bX16;
  bool random = false;     // wide-range BF16 values: FP32 rounding, compared bitwise then bounded
  uint64_t seed = 1;
};

Operand f16_operand(const F16Spec& s, uint32_t off, uint32_t rows);

// The block-scaled cases and the two experiments (probe_cases_fp4.cpp).
struct Fp4Spec {
  uint32_t N = 128, ksteps = 1;
  Layout layout = Layout::kNone;
  bool random_scales = false;  // scales over the whole UE4M3 range: FP32 rounding
  uint64_t seed = 7;
};
Case fp4_case(const Fp4Spec& s);
Case replica_case();
Case sign_case();

}  // namespace detail
}  // namespace probe
