// probe_cases_fp4.cpp — the block-scaled tcgen05 probe cases: tcgen05.cp.32x128b.warpx4 of scale
// atoms and kind::mxf4nvf4.block_scale.block16 MMAs, with their CPU expectation (E2M1 products,
// UE4M3 scales of 16-element blocks, summed in double), and the two experiments the emulator
// refuses: differing scale replicas and a scale with its sign bit set.
#include "probe_internal.h"

namespace probe {
namespace detail {
namespace {

// The 512-byte scale atom of rows [0, 128) and 4 scale columns, as tcgen05.cp.32x128b.warpx4
// reads it (an unswizzled source, SBO 128): row r, block kb at 16*(r%32) + 4*(r/32) + kb.
uint32_t atom_byte(uint32_t r, uint32_t kb) { return 16 * (r % 32) + 4 * (r / 32) + kb; }


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

}  // namespace

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

}  // namespace detail
}  // namespace probe
