// probe_cases.cpp — the tcgen05 probe cases: kind::f16 (single CTA) and the CTA-pair MMA, and the
// list of every single-CTA case (the block-scaled ones come from probe_cases_fp4.cpp). Each case's
// expected read-back is computed on the CPU without the emulator: operands are placed with our own
// reading of the canonical K-major layouts (PTX ISA §9.7.16.3.3, probe_internal.h), D rows are put
// in TMEM lanes by the data-path layouts (§9.7.16.10.5), and registers are taken from TMEM by the
// tcgen05.ld shapes (§9.7.16.8.3). Sums are done in double: where the inputs make FP32 exact, the
// result is exact.
#include "probe_cases.h"

#include <algorithm>

#include "probe_internal.h"

namespace probe {
namespace detail {

int g_broken = 0;

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

void fill_expectation(Case& c, const Tmem& tm, const std::vector<double>* bound_cells) {
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

namespace {

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

}  // namespace
}  // namespace detail

using namespace detail;

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


}  // namespace probe
