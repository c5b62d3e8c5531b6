// probe_cases.cpp — builds the tcgen05 probe cases (shared-memory images, operation lists) and
// computes what each must read back, on the CPU and without the emulator: operands are placed
// with this file's own reading of the canonical K-major layouts (PTX ISA §9.7.16.3.3), D rows are
// put in TMEM lanes by the data-path layouts (§9.7.16.10.5), scales by the layout of
// §9.7.16.10.7 / CUTLASS's tmem_sf_frg, and registers are taken from TMEM by the tcgen05.ld shapes
// (§9.7.16.8.3). Sums are done in double: where the inputs make FP32 exact, the result is exact.
#include "probe_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "../../common/descriptors.h"

namespace probe {
namespace {

int g_broken = 0;

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

uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
uint16_t to_bf16(float f) {  // round to nearest even (values here are finite)
  const uint32_t u = f32_bits(f);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
float bf16_value(uint16_t h) { return bits_f32(uint32_t(h) << 16); }
uint8_t ue4m3_code(double v) {  // the UE4M3 byte of an exactly representable value
  for (uint32_t b = 0; b < 0x7F; ++b)
    if (double(tcg::ue4m3_to_float(uint8_t(b))) == v) return uint8_t(b);
  throw std::logic_error("not a UE4M3 value");
}
uint32_t align_up(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }

using tcg::Layout;
uint32_t span_of(Layout l) {
  return l == Layout::kSwizzle128B ? 128u : l == Layout::kSwizzle64B ? 64u : l == Layout::kSwizzle32B ? 32u : 16u;
}
const char* layout_name(Layout l) {
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

Operand make_operand(uint32_t off, uint32_t rows, uint32_t row_bytes, Layout l, uint32_t lbo, uint32_t sbo) {
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

void place(std::vector<uint8_t>& image, const Operand& o, const std::vector<uint8_t>& bytes) {
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
void word_cell(const ReadSpec& rd, uint32_t t, uint32_t i, uint32_t& lane, uint32_t& col) {
  const uint32_t w = t / 32, l = t % 32;
  if (rd.shape != kLd16x256bX1) {  // 32x32b: thread l of warp w reads lane 32w + l, one column per register
    lane = 32 * w + l;
    col = rd.col0 + i;
    return;
  }
  // 16x256b.x1 over 16 lanes x 8 columns per call: calls run over the two 16-lane halves of the
  // quarter, then 8-column chunks; thread l gets lane l/4 (regs 0,1) and l/4 + 8 (regs 2,3),
  // columns 2*(l%4) and +1.
  const uint32_t call = i / 4, r = i % 4, chunks = rd.ncols / 8;
  const uint32_t h = call / chunks, c = call % chunks;
  lane = 32 * w + 16 * h + l / 4 + (r >= 2 ? 8 : 0);
  col = rd.col0 + 8 * c + 2 * (l % 4) + (r % 2);
}

void fill_expectation(Case& c, const Tmem& tm, const std::vector<double>* bound_cells = nullptr) {
  const size_t n = size_t(kProbeThreads) * c.read.ncols;
  c.want.assign(n, 0);
  c.defined.assign(n, 0);
  if (bound_cells) c.bound.assign(n, 0.f);
  for (uint32_t t = 0; t < kProbeThreads; ++t)
    for (uint32_t i = 0; i < c.read.ncols; ++i) {
      uint32_t lane, col;
      word_cell(c.read, t, i, lane, col);
      const size_t w = size_t(t) * c.read.ncols + i, cell = size_t(lane) * 512 + col;
      if (!tm.def[cell]) continue;
      c.defined[w] = 1;
      c.want[w] = f32_bits(float(tm.v[cell]));
      if (bound_cells) c.bound[w] = float((*bound_cells)[cell]);
    }
}

// Where D row m lives (data-path layouts §9.7.16.10.5): M = 128 layout D (row m in lane m), M = 64
// layout F (rows 16j..16j+15 in lanes 32j + d_lane .. +15).
uint32_t d_lane_of(uint32_t M, uint32_t d_lane, uint32_t m) {
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

Operand f16_operand(const F16Spec& s, uint32_t off, uint32_t rows) {
  const uint32_t K = 16 * s.ksteps, row_bytes = 2 * K, chunks = row_bytes / 16, groups = (rows + 7) / 8;
  if (s.layout == Layout::kNone) {
    if (s.lbo_mode == 0) return make_operand(off, rows, row_bytes, s.layout, 128, chunks * 128);
    if (s.lbo_mode == 1) return make_operand(off, rows, row_bytes, s.layout, groups * 128, 128);
    return make_operand(off, rows, row_bytes, s.layout, 256, chunks * 256 + 128);
  }
  const uint32_t w = span_of(s.layout);
  return make_operand(off, rows, row_bytes, s.layout, 16, s.sbo_factor * 8 * w);
}

Case f16_case(const F16Spec& s) {
  Case c;
  c.family = "tcgen05.mma kind::f16";
  c.instruction = "tcgen05.mma.cta_group::1.kind::f16 + tcgen05.ld." + std::string(ld_shape_name(s.shape));
  const uint32_t K = 16 * s.ksteps;
  Operand a = f16_operand(s, 0, s.M);
  Operand b = f16_operand(s, align_up(a.extent(), 1024), s.N);
  char cfg[256];
  snprintf(cfg, sizeof cfg, "M=%u N=%u K=%u D lane %u col %u; %s LBO %u SBO %u (A), SBO %u (B); accumulate %s; %s",
           s.M, s.N, K, s.d_lane, s.d_col, layout_name(s.layout), a.lbo, a.sbo, b.sbo,
           [&] {
             static char f[40];
             int p = 0;
             for (uint32_t k = 0; k < s.ksteps; ++k) f[p++] = (s.acc_mask >> k) & 1 ? '1' : '0';
             f[p] = 0;
             return f;
           }(),
           s.random ? "random BF16 (FP32 rounding)" : "small-integer BF16 (exact)");
  c.config = cfg;
  Rng rng(s.seed);
  auto value = [&] {
    if (!s.random) return float(rng.range(-3, 3)) * (rng.range(0, 3) == 0 ? 0.5f : 1.0f);
    const float u = float(rng.range(-1000000, 1000000)) / 1000000.0f;
    return u * std::ldexp(1.0f, rng.range(-6, 6));
  };
  std::vector<float> A(size_t(s.M) * K), B(size_t(s.N) * K);
  std::vector<uint8_t> abytes(A.size() * 2), bbytes(B.size() * 2);
  for (size_t i = 0; i < A.size(); ++i) {
    const uint16_t h = to_bf16(value());
    A[i] = bf16_value(h);
    memcpy(&abytes[2 * i], &h, 2);
  }
  for (size_t i = 0; i < B.size(); ++i) {
    const uint16_t h = to_bf16(value());
    B[i] = bf16_value(h);
    memcpy(&bbytes[2 * i], &h, 2);
  }
  place(c.image, a, abytes);
  place(c.image, b, bbytes);
  c.image.resize(align_up(uint32_t(c.image.size()), 1024), 0);

  const uint32_t idesc = tcg::make_idesc_bf16_f32(s.M, s.N);
  for (uint32_t k = 0; k < s.ksteps; ++k) {
    ProbeOp op;
    op.kind = kOpMmaF16;
    op.d_lane = s.d_lane;
    op.d_col = s.d_col;
    op.a_off = a.kstep_start(k), op.a_lbo = a.lbo, op.a_sbo = a.sbo, op.a_layout = uint32_t(a.layout);
    op.b_off = b.kstep_start(k), op.b_lbo = b.lbo, op.b_sbo = b.sbo, op.b_layout = uint32_t(b.layout);
    op.idesc = idesc;
    op.accumulate = (s.acc_mask >> k) & 1u;
    c.ops.push_back(op);
  }
  // Expected D: the sum over the K steps since the last one without accumulate.
  uint32_t first = 0;
  for (uint32_t k = 0; k < s.ksteps; ++k)
    if (!((s.acc_mask >> k) & 1u) && g_broken != 2) first = k;
  Tmem tm;
  std::vector<double> bound(128 * 512, 0.0);
  for (uint32_t m = 0; m < s.M; ++m)
    for (uint32_t n = 0; n < s.N; ++n) {
      double d = 0, mag = 0;
      for (uint32_t k = 16 * first; k < K; ++k) {
        d += double(A[size_t(m) * K + k]) * B[size_t(n) * K + k];
        mag += std::fabs(double(A[size_t(m) * K + k]) * B[size_t(n) * K + k]);
      }
      const uint32_t lane = d_lane_of(s.M, s.d_lane, m);
      tm.set(lane, s.d_col + n, d);
      // FP32 accumulation of K - 16*first products, in any order: |error| <= (terms+1) u sum|ab|,
      // u = 2^-24, doubled for the final rounding and unknown internal steps.
      bound[lane * 512 + s.d_col + n] = 2.0 * (K - 16 * first + 2) * std::ldexp(1.0, -24) * mag;
    }
  c.read.shape = s.shape;
  c.read.col0 = s.d_col;
  c.read.ncols = align_up(s.N, 16);
  c.expect = s.random ? Expect::kRounded : Expect::kExact;
  fill_expectation(c, tm, &bound);
  return c;
}

// ---------------------------------------------------------------- kind::mxf4nvf4.block16
// The 512-byte scale atom of rows [0, 128) and 4 scale columns, as tcgen05.cp.32x128b.warpx4
// reads it (an unswizzled source, SBO 128): row r, block kb at 16*(r%32) + 4*(r/32) + kb.
uint32_t atom_byte(uint32_t r, uint32_t kb) { return 16 * (r % 32) + 4 * (r / 32) + kb; }

struct Fp4Spec {
  uint32_t N = 128, ksteps = 1;
  Layout layout = Layout::kNone;
  bool random_scales = false;  // scales over the whole UE4M3 range: FP32 rounding
  uint64_t seed = 7;
};

constexpr uint32_t kSfBase = 256;  // first TMEM column of the scales (D uses [0, N), N <= 256)

struct Fp4Operands {
  std::vector<uint8_t> a, b;                  // packed E2M1 rows
  std::vector<uint8_t> sfa, sfb;              // [row][kstep*4 + kb] UE4M3 bytes
};

double fp4_expected(const Fp4Operands& o, uint32_t kbytes, uint32_t ksteps, uint32_t m, uint32_t n, double* mag) {
  double d = 0, g = 0;
  for (uint32_t s = 0; s < ksteps; ++s)
    for (uint32_t kb = 0; kb < 4; ++kb) {
      const uint32_t kread = g_broken == 3 ? 3 - kb : kb;
      const double sa = tcg::ue4m3_to_float(o.sfa[m * 4 * ksteps + 4 * s + kread]);
      const double sb = tcg::ue4m3_to_float(o.sfb[n * 4 * ksteps + 4 * s + kread]);
      double dot = 0;
      for (uint32_t k = 0; k < 16; ++k) {
        const uint32_t kk = 64 * s + 16 * kb + k;
        const uint8_t ca = (o.a[m * kbytes + kk / 2] >> (4 * (kk % 2))) & 15u;
        const uint8_t cb = (o.b[n * kbytes + kk / 2] >> (4 * (kk % 2))) & 15u;
        dot += double(tcg::e2m1_to_float(ca)) * tcg::e2m1_to_float(cb);
      }
      d += sa * sb * dot;
      g += std::fabs(sa * sb * dot);
    }
  if (mag) *mag = g;
  return d;
}

// Lays out A, B and their scale atoms and emits, per K step, the copies of its atoms and the MMA.
// Returns the image offset where the caller may put more data.
void fp4_program(Case& c, const Fp4Operands& o, uint32_t N, uint32_t ksteps, Layout layout, bool copy_sfa = true,
                 uint32_t sfa_col_override = 0) {
  const uint32_t kbytes = 32 * ksteps;
  auto operand = [&](uint32_t off, uint32_t rows) {
    return layout == Layout::kNone ? make_operand(off, rows, kbytes, layout, 128, kbytes / 16 * 128)
                                   : make_operand(off, rows, kbytes, layout, 16, 8 * span_of(layout));
  };
  const uint32_t base = align_up(uint32_t(c.image.size()), 1024);
  Operand a = operand(base, 128);
  Operand b = operand(base + align_up(a.extent(), 1024), N);
  place(c.image, a, o.a);
  place(c.image, b, o.b);
  const uint32_t b_atoms = (N + 127) / 128;
  uint32_t sf_off = align_up(uint32_t(c.image.size()), 1024);
  const uint32_t sf_cols_per_step = 4 + 4 * b_atoms;
  c.image.resize(sf_off + ksteps * 512 * (1 + b_atoms), 0);
  for (uint32_t s = 0; s < ksteps; ++s) {
    const uint32_t sfa_col = kSfBase + s * sf_cols_per_step, sfb_col = sfa_col + 4;
    const uint32_t sfa_src = sf_off + s * 512 * (1 + b_atoms);
    for (uint32_t r = 0; r < 128; ++r)
      for (uint32_t kb = 0; kb < 4; ++kb) c.image[sfa_src + atom_byte(r, kb)] = o.sfa[r * 4 * ksteps + 4 * s + kb];
    if (copy_sfa) {
      ProbeOp cp;
      cp.kind = kOpCp;
      cp.d_col = sfa_col;
      cp.a_off = sfa_src;
      cp.a_sbo = 128;
      c.ops.push_back(cp);
    }
    for (uint32_t at = 0; at < b_atoms; ++at) {
      const uint32_t src = sfa_src + 512 * (1 + at);
      for (uint32_t r = 0; r < 128; ++r)
        for (uint32_t kb = 0; kb < 4; ++kb) {
          const uint32_t n = 128 * at + r;  // rows past N: padding, a valid 1.0
          c.image[src + atom_byte(r, kb)] = n < N ? o.sfb[n * 4 * ksteps + 4 * s + kb] : 0x38;
        }
      ProbeOp cp;
      cp.kind = kOpCp;
      cp.d_col = sfb_col + 4 * at;
      cp.a_off = src;
      cp.a_sbo = 128;
      c.ops.push_back(cp);
    }
    ProbeOp op;
    op.kind = kOpMmaFp4;
    op.a_off = a.kstep_start(s), op.a_lbo = a.lbo, op.a_sbo = a.sbo, op.a_layout = uint32_t(a.layout);
    op.b_off = b.kstep_start(s), op.b_lbo = b.lbo, op.b_sbo = b.sbo, op.b_layout = uint32_t(b.layout);
    op.idesc = tcg::make_idesc_mxf4nvf4(128, N);
    op.accumulate = s > 0;
    op.sfa_col = copy_sfa ? sfa_col : sfa_col_override;
    op.sfb_col = sfb_col;
    c.ops.push_back(op);
  }
  c.image.resize(align_up(uint32_t(c.image.size()), 1024), 0);
  c.read.shape = kLd32x32bX16;
  c.read.col0 = 0;
  c.read.ncols = align_up(N, 16);
}

Fp4Operands fp4_operands(uint32_t N, uint32_t ksteps, Rng& rng, bool random_scales) {
  Fp4Operands o;
  const uint32_t kbytes = 32 * ksteps;
  o.a.resize(128 * kbytes);
  o.b.resize(size_t(N) * kbytes);
  for (auto& x : o.a) x = uint8_t(rng.next());
  for (auto& x : o.b) x = uint8_t(rng.next());
  static const double exact[] = {0.125, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0};
  auto scale = [&]() -> uint8_t {
    if (random_scales) return uint8_t(rng.range(0x01, 0x7E));  // subnormals to 448, never NaN
    return ue4m3_code(exact[rng.range(0, 9)]);
  };
  o.sfa.resize(128 * 4 * ksteps);
  o.sfb.resize(size_t(N) * 4 * ksteps);
  for (auto& x : o.sfa) x = scale();
  for (auto& x : o.sfb) x = scale();
  return o;
}

Case fp4_case(const Fp4Spec& s) {
  Case c;
  c.family = "tcgen05.mma kind::mxf4nvf4 + tcgen05.cp";
  c.instruction = "tcgen05.cp.cta_group::1.32x128b.warpx4 + tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16";
  char cfg[200];
  snprintf(cfg, sizeof cfg, "M=128 N=%u K=%u; %s; %s", s.N, 64 * s.ksteps, layout_name(s.layout),
           s.random_scales ? "random E2M1, UE4M3 scales over the whole range (FP32 rounding)"
                           : "random E2M1, scales 1/8..4 (exact)");
  c.config = cfg;
  Rng rng(s.seed);
  const Fp4Operands o = fp4_operands(s.N, s.ksteps, rng, s.random_scales);
  fp4_program(c, o, s.N, s.ksteps, s.layout);
  Tmem tm;
  std::vector<double> bound(128 * 512, 0.0);
  for (uint32_t m = 0; m < 128; ++m)
    for (uint32_t n = 0; n < s.N; ++n) {
      double mag = 0;
      tm.set(m, n, fp4_expected(o, 32 * s.ksteps, s.ksteps, m, n, &mag));
      bound[m * 512 + n] = 2.0 * (4 * s.ksteps + 2) * std::ldexp(1.0, -24) * mag;
    }
  c.expect = s.random_scales ? Expect::kRounded : Expect::kExact;
  fill_expectation(c, tm, &bound);
  return c;
}

// Which of the four replicas does the MMA read? Replicas can only differ if something other than
// tcgen05.cp.32x128b.warpx4 writes the scale columns: here a kind::f16 MMA writes them, lane L
// receiving the FP32 value 2^e(L/32), whose bytes are (0, 0, 0, x) with x a UE4M3 code: in quarter
// q of the lanes, scale blocks 0-2 are 0 and block 3 is x_q (1, 2, 4, 0.5). A's K blocks 0-2 hold
// 3.0, block 3 holds 1.0, B is all 1.0 with scales 1.0, so D = 16 x_q tells which quarter's copy
// each row used (48 x_q would mean the block order is reversed).
Case replica_case() {
  Case c;
  c.family = "tcgen05.mma kind::mxf4nvf4 + tcgen05.cp";
  c.instruction = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 (scale replicas)";
  c.config = "M=128 N=64 K=64; SFA columns written by a kind::f16 MMA so the four 32-lane replicas differ "
             "(quarter q: scale of block 3 = 1, 2, 4, 0.5; blocks 0-2 = 0)";
  c.expect = Expect::kExperiment;
  c.refusal = "scale-factor replicas differ";
  const double xq[4] = {1.0, 2.0, 4.0, 0.5};
  // 1. kind::f16, M = 128, N = 8, K = 16 into columns [kSfCol, +8): A row L = 2^e at k = 0, B = 1 at k = 0.
  constexpr uint32_t kSfCol = 320;
  F16Spec fs;
  fs.N = 8;
  fs.ksteps = 1;
  fs.layout = Layout::kNone;
  Operand a = f16_operand(fs, 0, 128);
  Operand b = f16_operand(fs, align_up(a.extent(), 1024), 8);
  std::vector<uint8_t> abytes(128 * 32, 0), bbytes(8 * 32, 0);
  for (uint32_t L = 0; L < 128; ++L) {
    const uint8_t x = ue4m3_code(xq[L / 32]);
    // FP32 2^e with biased exponent 2x: bits (2x) << 23 = bytes (0, 0, 0, x).
    const uint16_t h = to_bf16(bits_f32(uint32_t(2 * x) << 23));
    memcpy(&abytes[L * 32], &h, 2);
  }
  for (uint32_t n = 0; n < 8; ++n) {
    const uint16_t one = to_bf16(1.0f);
    memcpy(&bbytes[n * 32], &one, 2);
  }
  place(c.image, a, abytes);
  place(c.image, b, bbytes);
  ProbeOp f16;
  f16.kind = kOpMmaF16;
  f16.d_col = kSfCol;
  f16.a_off = a.kstep_start(0), f16.a_lbo = a.lbo, f16.a_sbo = a.sbo;
  f16.b_off = b.kstep_start(0), f16.b_lbo = b.lbo, f16.b_sbo = b.sbo;
  f16.idesc = tcg::make_idesc_bf16_f32(128, 8);
  c.ops.push_back(f16);
  ProbeOp sync;
  sync.kind = kOpSync;
  c.ops.push_back(sync);
  c.syncs = 1;
  // 2. The block-scaled MMA reading SFA from those columns.
  Fp4Operands o;
  o.a.assign(128 * 32, 0);
  o.b.assign(64 * 32, 0x22);  // 1.0, 1.0
  for (uint32_t r = 0; r < 128; ++r)
    for (uint32_t k = 0; k < 64; k += 2) o.a[r * 32 + k / 2] = k < 48 ? 0x55 : 0x22;  // 3.0 | 1.0
  o.sfa.assign(128 * 4, 0x38);  // unused: SFA is not copied
  o.sfb.assign(64 * 4, 0x38);
  fp4_program(c, o, 64, 1, Layout::kNone, /*copy_sfa=*/false, kSfCol);
  Tmem own, hyp[4], rev;
  for (uint32_t m = 0; m < 128; ++m)
    for (uint32_t n = 0; n < 64; ++n) {
      own.set(m, n, 16 * xq[m / 32]);
      for (int q = 0; q < 4; ++q) hyp[q].set(m, n, 16 * xq[q]);
      rev.set(m, n, 48 * xq[m / 32]);
    }
  fill_expectation(c, own);
  c.hypotheses.push_back({"row r reads the replica in lane quarter r/32 (the quarter of its D row)", c.want});
  static const char* qn[4] = {"every row reads quarter 0's replica", "every row reads quarter 1's replica",
                              "every row reads quarter 2's replica", "every row reads quarter 3's replica"};
  for (int q = 0; q < 4; ++q) {
    Case h = c;
    fill_expectation(h, hyp[q]);
    c.hypotheses.push_back({qn[q], h.want});
  }
  Case h = c;
  fill_expectation(h, rev);
  c.hypotheses.push_back({"own quarter, but K block s scaled by byte 3-s", h.want});
  return c;
}

// A UE4M3 byte with its sign bit set (0xB8 = "-1.0"): the ISA requires the sign bit to be 0.
// Rows 64-127 of A get 0xB8 as the scale of K block 1; everything else is 1.0.
Case sign_case() {
  Case c;
  c.family = "tcgen05.mma kind::mxf4nvf4 + tcgen05.cp";
  c.instruction = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 (scale sign bit)";
  c.config = "M=128 N=64 K=64; SFA of rows 64-127, K block 1 = 0xB8 (sign bit set), other scales 1.0";
  c.expect = Expect::kExperiment;
  c.refusal = "bad UE4M3 scale factor (sign bit set)";
  Rng rng(99);
  Fp4Operands o = fp4_operands(64, 1, rng, false);
  for (auto& x : o.sfa) x = 0x38;
  for (auto& x : o.sfb) x = 0x38;
  for (uint32_t r = 64; r < 128; ++r) o.sfa[r * 4 + 1] = 0xB8;
  fp4_program(c, o, 64, 1, Layout::kNone);
  const char* names[3] = {"the sign is honoured (scale -1.0)", "the sign bit is ignored (scale +1.0)",
                          "the block counts as zero"};
  const uint8_t subst[3] = {0x38 /* negated below */, 0x38, 0x00};
  for (int hcase = 0; hcase < 3; ++hcase) {
    Fp4Operands p = o;
    for (uint32_t r = 64; r < 128; ++r) p.sfa[r * 4 + 1] = subst[hcase];
    Tmem tm;
    for (uint32_t m = 0; m < 128; ++m)
      for (uint32_t n = 0; n < 64; ++n) {
        double d = fp4_expected(p, 32, 1, m, n, nullptr);
        if (hcase == 0 && m >= 64) {  // block 1 with scale -1: subtract it twice from the +1 result
          Fp4Operands z = p;
          for (uint32_t kb = 0; kb < 4; ++kb)
            if (kb != 1) z.sfa[m * 4 + kb] = 0x00;
          d -= 2 * fp4_expected(z, 32, 1, m, n, nullptr);
        }
        tm.set(m, n, d);
      }
    Case h = c;
    fill_expectation(h, tm);
    if (hcase == 0) {
      c.want = h.want;
      c.defined = h.defined;
    }
    c.hypotheses.push_back({names[hcase], h.want});
  }
  return c;
}

}  // namespace

void set_broken_expectation(int which) { g_broken = which; }

const char* ld_shape_name(uint32_t shape) {
  return shape == kLd32x32bX8 ? "32x32b.x8" : shape == kLd32x32bX16 ? "32x32b.x16" : "16x256b.x1";
}

std::vector<Case> mma_cases() {
  std::vector<Case> cases;
  // kind::f16: M = 128 over the N range (legal steps of 8), exact inputs, 128B swizzle.
  for (uint32_t n : {8u, 16u, 24u, 40u, 64u, 72u, 128u, 136u, 200u, 256u}) {
    F16Spec s;
    s.N = n;
    s.seed = 100 + n;
    cases.push_back(f16_case(s));
  }
  // M = 64 (layout F), D at lane 0 and at lane 16.
  for (uint32_t n : {8u, 64u, 256u})
    for (uint32_t lane : {0u, 16u}) {
      F16Spec s;
      s.M = 64;
      s.N = n;
      s.d_lane = lane;
      s.seed = 200 + n + lane;
      cases.push_back(f16_case(s));
    }
  // Layouts: no swizzle with three LBO/SBO arrangements, 32/64/128B swizzle (dense and padded SBO).
  for (int mode = 0; mode < 3; ++mode)
    for (uint32_t m : {64u, 128u}) {
      F16Spec s;
      s.M = m;
      s.N = 48;
      s.layout = Layout::kNone;
      s.lbo_mode = mode;
      s.seed = 300 + mode + m;
      cases.push_back(f16_case(s));
    }
  const Layout sw[3] = {Layout::kSwizzle32B, Layout::kSwizzle64B, Layout::kSwizzle128B};
  for (Layout l : sw)
    for (uint32_t f : {1u, 2u}) {
      F16Spec s;
      s.N = 96;
      s.layout = l;
      s.ksteps = 4;  // 32B: 4 atom columns, 64B: 2, 128B: 1
      s.sbo_factor = f;
      s.seed = 400 + span_of(l) + f;
      cases.push_back(f16_case(s));
    }
  // Accumulate flag: reset in the middle, every step a reset; D in other columns.
  {
    F16Spec s;
    s.acc_mask = 0b1011;  // step 2 overwrites: D = steps 2 + 3
    s.seed = 501;
    cases.push_back(f16_case(s));
    s.acc_mask = 0;  // D = step 3 only
    s.seed = 502;
    cases.push_back(f16_case(s));
    s.acc_mask = ~1u;
    s.d_col = 256;
    s.N = 256;
    s.seed = 503;
    cases.push_back(f16_case(s));
  }
  // tcgen05.ld shapes the steps use, on the same kind of accumulator.
  for (uint32_t shape : {kLd32x32bX8, kLd16x256bX1}) {
    F16Spec s;
    s.N = 128;
    s.shape = shape;
    s.seed = 600 + shape;
    cases.push_back(f16_case(s));
  }
  {
    F16Spec s;  // M = 64 through 16x256b: the half-quarters the layout leaves empty are masked
    s.M = 64;
    s.N = 32;
    s.shape = kLd16x256bX1;
    s.seed = 610;
    cases.push_back(f16_case(s));
  }
  // Inexact: wide-range BF16 values, K = 64 (FP32 accumulation order shows).
  for (uint32_t n : {64u, 256u}) {
    F16Spec s;
    s.N = n;
    s.random = true;
    s.seed = 700 + n;
    cases.push_back(f16_case(s));
  }
  // kind::mxf4nvf4.block16 with tcgen05.cp.32x128b.warpx4.
  for (uint32_t n : {8u, 64u, 128u, 256u}) {
    Fp4Spec s;
    s.N = n;
    s.seed = 800 + n;
    cases.push_back(fp4_case(s));
  }
  {
    Fp4Spec s;
    s.N = 128;
    s.ksteps = 4;
    s.layout = Layout::kSwizzle128B;  // step 07's operands: four K steps along a 128-byte row
    s.seed = 900;
    cases.push_back(fp4_case(s));
    s.ksteps = 2;
    s.layout = Layout::kNone;
    s.N = 192;
    s.seed = 901;
    cases.push_back(fp4_case(s));
    s.N = 128;
    s.ksteps = 1;
    s.random_scales = true;
    s.seed = 902;
    cases.push_back(fp4_case(s));
  }
  cases.push_back(replica_case());
  cases.push_back(sign_case());
  for (Case& c : cases) {
    uint32_t syncs = 0;
    for (const ProbeOp& op : c.ops) syncs += op.kind == kOpSync;
    c.syncs = syncs;
    if (c.image.size() > kImageMax) throw std::logic_error("probe image too large: " + c.config);
  }
  return cases;
}

// ---------------------------------------------------------------- comparison
std::string describe_word(const Case& c, size_t i) {
  const uint32_t t = uint32_t(i / c.read.ncols) % kProbeThreads, r = uint32_t(i % c.read.ncols);
  const uint32_t cta = uint32_t(i / c.read.ncols) / kProbeThreads;
  uint32_t lane, col;
  word_cell(c.read, t, r, lane, col);
  char b[140];
  snprintf(b, sizeof b, "%sthread %u register %u (TMEM lane %u, column %u)",
           c.ctas > 1 ? ("CTA " + std::to_string(cta) + " ").c_str() : "", t, r, lane, col);
  return b;
}

std::vector<PairCase> pair_cases() {
  std::vector<PairCase> out;
  const uint32_t shapes[][2] = {{256, 64}, {256, 128}, {256, 256}, {128, 32}, {128, 128}, {128, 256}};
  for (const auto& sh : shapes) {
    PairCase p;
    p.M = sh[0];
    p.N = sh[1];
    Case& c = p.c;
    c.family = "tcgen05.mma cta_group::2";
    c.instruction = "cp.async.bulk.tensor.2d.cta_group::2 + tcgen05.mma.cta_group::2.kind::f16 + "
                    "tcgen05.commit.cta_group::2.multicast::cluster + tcgen05.ld.32x32b.x16";
    c.config = "M=" + std::to_string(p.M) + " N=" + std::to_string(p.N) +
               " K=64 over a CTA pair; 128B swizzle; small-integer BF16 (exact); each CTA's TMEM read back";
    c.ctas = 2;
    Rng rng(1000 + p.M + p.N);
    std::vector<float> A(size_t(p.M) * 64), B(size_t(p.N) * 64);
    p.a.resize(A.size());
    p.b.resize(B.size());
    for (size_t i = 0; i < A.size(); ++i) A[i] = bf16_value(p.a[i] = to_bf16(float(rng.range(-3, 3))));
    for (size_t i = 0; i < B.size(); ++i) B[i] = bf16_value(p.b[i] = to_bf16(float(rng.range(-3, 3))));
    // Data-path layouts (§9.7.16.10.5): M = 256 (layout A): CTA v lane l = row 128v + l, all N
    // columns. M = 128 (layout B): CTA v holds rows [64v, +64), columns [0, N/2) in lanes 0-63 and
    // [N/2, N) in lanes 64-127.
    const uint32_t ncols_used = p.M == 256 ? p.N : p.N / 2;
    c.read.shape = kLd32x32bX16;
    c.read.col0 = 0;
    c.read.ncols = align_up(ncols_used, 16);
    const size_t per_cta = size_t(kProbeThreads) * c.read.ncols;
    c.want.assign(2 * per_cta, 0);
    c.defined.assign(2 * per_cta, 0);
    for (uint32_t v = 0; v < 2; ++v)
      for (uint32_t l = 0; l < 128; ++l)
        for (uint32_t j = 0; j < ncols_used; ++j) {
          uint32_t row, n;
          if (p.M == 256) row = 128 * (g_broken == 4 ? 0 : v) + l, n = j;
          else row = 64 * v + l % 64, n = (l / 64) * (p.N / 2) + j;
          double d = 0;
          for (uint32_t k = 0; k < 64; ++k) d += double(A[size_t(row) * 64 + k]) * B[size_t(n) * 64 + k];
          const size_t w = v * per_cta + size_t(l) * c.read.ncols + j;  // 32x32b: thread l, register j
          c.want[w] = f32_bits(float(d));
          c.defined[w] = 1;
        }
    out.push_back(std::move(p));
  }
  return out;
}

Comparison compare(const Case& c, const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  Comparison r;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    if (!c.defined[i]) continue;
    ++r.compared;
    if (got[i] == want[i]) continue;
    if (r.first == SIZE_MAX) {
      r.first = i;
      r.first_got = got[i];
      r.first_want = want[i];
    }
    ++r.differing;
    const double g = bits_f32(got[i]), w = bits_f32(want[i]);
    const double d = std::isnan(g) || std::isnan(w) ? INFINITY : std::fabs(g - w);
    if (d > r.max_diff || r.max_at == SIZE_MAX) {
      r.max_diff = d;
      r.max_at = i;
    }
    if (c.bound.empty() || !(d <= c.bound[i])) ++r.over_bound;
  }
  if (got.size() != want.size()) r.differing += 1, r.over_bound += 1;
  return r;
}

std::string summarize(const Case& c, const Comparison& r) {
  char b[512];
  if (r.differing == 0) {
    snprintf(b, sizeof b, "bitwise identical (%zu words)", r.compared);
    return b;
  }
  if (r.first == SIZE_MAX) return "output size differs";
  const std::string max_at = r.max_at == SIZE_MAX ? "?" : describe_word(c, r.max_at);
  snprintf(b, sizeof b, "%zu of %zu words differ (%zu beyond the bound); first: %s: 0x%08x (%g) vs 0x%08x (%g); "
           "largest difference %g at %s", r.differing, r.compared, r.over_bound, describe_word(c, r.first).c_str(),
           r.first_got, double(bits_f32(r.first_got)), r.first_want, double(bits_f32(r.first_want)), r.max_diff,
           max_at.c_str());
  return b;
}

std::string classify(const Case& c, const std::vector<uint32_t>& got) {
  for (const auto& h : c.hypotheses) {
    const Comparison r = compare(c, got, h.second);
    if (r.differing == 0) return h.first;
  }
  // None matched: show what rows 0, 32, 64, 96 received in column 0.
  std::string s = "none of the hypotheses; column 0 of rows 0/32/64/96:";
  for (uint32_t q = 0; q < 4; ++q) {
    char b[40];
    const size_t i = size_t(32 * q) * c.read.ncols;  // thread 32q (lane 32q) register 0
    snprintf(b, sizeof b, " %g", i < got.size() ? double(bits_f32(got[i])) : 0.0);
    s += b;
  }
  return s;
}

// ---------------------------------------------------------------- tcgen05.alloc
AllocVerdict check_alloc(const std::vector<AllocRecord>& recs, uint32_t ncols) {
  AllocVerdict v;
  for (size_t i = 0; i < recs.size(); ++i) {
    const uint32_t lane = recs[i].taddr >> 16, col = recs[i].taddr & 0xFFFF;
    if (lane != 0 || col + ncols > 512 || col % ncols != 0) {
      char b[160];
      snprintf(b, sizeof b, "CTA %zu: address 0x%08x (lane %u, column %u) for %u columns is out of range or misaligned",
               i, recs[i].taddr, lane, col, ncols);
      v.ok = false;
      v.detail = b;
      return v;
    }
  }
  for (size_t i = 0; i < recs.size(); ++i)
    for (size_t j = i + 1; j < recs.size(); ++j) {
      const AllocRecord &x = recs[i], &y = recs[j];
      if (x.smid != y.smid || x.t_free < y.t_alloc || y.t_free < x.t_alloc) continue;
      ++v.overlapping_pairs;
      const uint32_t cx = x.taddr & 0xFFFF, cy = y.taddr & 0xFFFF;
      if (cx < cy + ncols && cy < cx + ncols) {
        char b[200];
        snprintf(b, sizeof b, "CTAs %zu and %zu on SM %u hold columns [%u, %u) and [%u, %u) at the same time", i, j,
                 x.smid, cx, cx + ncols, cy, cy + ncols);
        v.ok = false;
        v.detail = b;
        return v;
      }
    }
  std::map<uint32_t, int> per_sm;
  for (const auto& r : recs) per_sm[r.smid]++;
  char b[200];
  snprintf(b, sizeof b, "%zu CTAs on %zu SMs: every address in range and aligned; %zu pairs sharing an SM in time, "
           "all disjoint", recs.size(), per_sm.size(), v.overlapping_pairs);
  v.detail = b;
  return v;
}

}  // namespace probe
