// nvfp4.cpp — the NVFP4 flavour of the problem's data (steps with Operands::kNVFP4): the
// encoders to E2M1 and UE4M3, the quantizer from floats to packed E2M1 codes plus UE4M3 block
// scales in the blocked layout (common/nvfp4_layout.h), its inverse, the generated `random` and
// `integer` inputs, and the CPU reference, which decodes exactly to floats and hands them to the
// type-independent reference core (reference.cpp).
//
// The quantizer's rules (there is no single standard: Transformer Engine's quantization_nvfp4.py, the gpu-mode nvfp4_gemm reference.py and cuDNN's documented quantize differ; docs/references.md):
//  * No per-tensor scale. NVIDIA's two-level recipe (TransformerEngine) first multiplies the tensor
//    by S_enc = 448*6/amax(tensor) so that the block scales use UE4M3's whole range, and the GEMM
//    result must then be multiplied back by S_dec_A * S_dec_B, which the kernel would need as an
//    extra alpha argument. We take S_enc = 1: the block scales then carry the whole magnitude,
//    which UE4M3 covers from 2^-9 to 448, plenty for inputs in [-1, 1] (block scales near 1/6).
//  * Block scale: the UE4M3 value nearest to amax/6 (ties to even), saturating at 448: TE's rule
//    with S_enc = 1. cuDNN rounds this scale up instead (so that no element saturates); rounding to
//    nearest can pick a scale just below amax/6, and then the largest elements of the block
//    saturate at ±6, an error of at most half a UE4M3 step (1/16 relative), the same size as the
//    rounding of the scale itself. amax/6 is computed in float; that gives the same code as the
//    exact quotient (a float quotient lands exactly on a rounding midpoint only if the exact one
//    does: amax has 24 significant bits, the midpoints 5, and amax/6 - mid, when not 0, is at least
//    an ulp of amax over 6, which exceeds half an ulp of mid).
//  * Elements: the E2M1 value nearest to x/scale (the exact quotient, decided by comparing |x| with
//    midpoint*scale, a product exact in double; TE multiplies by a rounded reciprocal instead,
//    which can differ in the last place), ties to the even code, saturating at ±6, keeping the sign.
//  * A block whose scale is 0 (all zeros, or amax/6 below 2^-10, half the smallest UE4M3 value)
//    gets all-zero codes: there is nothing to divide by, and every element decodes to 0 anyway.
//  * NaN or Inf: an error. E2M1 has neither, and a saturated Inf would silently hide a bug.
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "common/harness/internal.h"
#include "common/nvfp4_layout.h"

namespace tcg::harness {

namespace {

// The 127 finite UE4M3 values, codes 0x00-0x7E, in increasing order (code order is value order).
const std::array<double, 127>& ue4m3_values() {
  static const std::array<double, 127> v = [] {
    std::array<double, 127> t{};
    for (int c = 0; c < 127; ++c) t[static_cast<size_t>(c)] = ue4m3_to_float(static_cast<uint8_t>(c));
    return t;
  }();
  return v;
}

// Midpoints between consecutive E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
constexpr double kE2m1Mid[7] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};

// The E2M1 code of x given the 7 midpoints times the scale (exact in double, see float_to_e2m1).
// Branch-free (random data would mispredict a search): the code is the number of midpoints below
// |x| (7, i.e. 6, for everything beyond the last: saturation); on a midpoint itself, a tie, the
// even one of its two neighbours (mantissa bit 0), as round-to-nearest-even.
inline uint8_t e2m1_code(float x, const double (&t)[7]) {
  const double mag = std::fabs(static_cast<double>(x));
  unsigned code = 0;
  for (int c = 0; c < 7; ++c) code += mag > t[c] ? 1u : 0u;
  if (code < 7 && mag == t[code] && (code & 1u)) ++code;
  return static_cast<uint8_t>(std::signbit(x) ? code | 8u : code);
}

void scaled_midpoints(float scale, double (&t)[7]) {
  for (int c = 0; c < 7; ++c) t[c] = kE2m1Mid[c] * static_cast<double>(scale);
}

std::string element_name(const char* name, int64_t r, int64_t c) {
  return strf("%s[%lld][%lld]", name, static_cast<long long>(r), static_cast<long long>(c));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Encoders
// ---------------------------------------------------------------------------------------------

uint8_t float_to_e2m1(float x, float scale) {
  if (!std::isfinite(x)) throw std::invalid_argument(strf("float_to_e2m1: %g is not finite", x));
  if (!(scale > 0) || !std::isfinite(scale))
    throw std::invalid_argument(strf("float_to_e2m1: scale %g is not finite and positive", scale));
  // Compare |x| with each midpoint times the scale: midpoints have at most 3 significant bits and a
  // float 24, so every product is exact in double and every comparison decides the exact quotient.
  double t[7];
  scaled_midpoints(scale, t);
  return e2m1_code(x, t);
}

uint8_t float_to_ue4m3(float x) {
  if (!std::isfinite(x) || x < 0)
    throw std::invalid_argument(strf("float_to_ue4m3: %g is not finite and >= 0", x));
  const std::array<double, 127>& v = ue4m3_values();
  const double d = x;
  // The first value >= x; none: saturate to 448.
  const auto it = std::lower_bound(v.begin(), v.end(), d);
  if (it == v.end()) return 0x7E;
  const int hi = static_cast<int>(it - v.begin());
  if (hi == 0 || *it == d) return static_cast<uint8_t>(hi);
  const int lo = hi - 1;
  const double mid = 0.5 * (v[static_cast<size_t>(lo)] + v[static_cast<size_t>(hi)]);  // exact
  if (d < mid) return static_cast<uint8_t>(lo);
  if (d > mid) return static_cast<uint8_t>(hi);
  return static_cast<uint8_t>(lo % 2 == 0 ? lo : hi);  // tie: the even code (mantissa LSB 0)
}

// ---------------------------------------------------------------------------------------------
// Quantizer and its inverse
// ---------------------------------------------------------------------------------------------

Nvfp4Matrix quantize_nvfp4(const float* x, int64_t rows, int64_t k, const char* name) {
  if (rows < 0 || k <= 0 || k % kNvfp4BlockSize != 0)
    throw std::invalid_argument(
        strf("quantize_nvfp4: %s is %lld x %lld; K must be a positive multiple of %u", name,
             static_cast<long long>(rows), static_cast<long long>(k), kNvfp4BlockSize));
  Nvfp4Matrix q;
  q.rows = rows;
  q.k = k;
  q.data.assign(static_cast<size_t>(rows * (k / 2)), 0);
  q.sf.assign(sf_bytes(static_cast<uint32_t>(rows), static_cast<uint32_t>(k)), 0);
  const int64_t blocks = k / kNvfp4BlockSize;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * k;
    uint8_t* out = q.data.data() + r * (k / 2);
    for (int64_t kb = 0; kb < blocks; ++kb) {
      const float* blk = row + kb * kNvfp4BlockSize;
      float amax = 0;
      for (uint32_t e = 0; e < kNvfp4BlockSize; ++e) {
        if (!std::isfinite(blk[e]))
          throw std::invalid_argument(
              strf("cannot quantize %s = %g to NVFP4 (E2M1 has no NaN or Inf)",
                   element_name(name, r, kb * kNvfp4BlockSize + e).c_str(), blk[e]));
        amax = std::max(amax, std::fabs(blk[e]));
      }
      const uint8_t sf = float_to_ue4m3(amax / 6.0f);
      q.sf[sf_blocked_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(kb),
                             static_cast<uint32_t>(k))] = sf;
      if (sf == 0) continue;  // the codes stay 0
      double t[7];  // float_to_e2m1's thresholds, once per block
      scaled_midpoints(ue4m3_to_float(sf), t);
      for (uint32_t e = 0; e < kNvfp4BlockSize; e += 2) {
        const uint8_t lo = e2m1_code(blk[e], t), hi = e2m1_code(blk[e + 1], t);
        out[(kb * kNvfp4BlockSize + e) / 2] = static_cast<uint8_t>(lo | hi << 4);
      }
    }
  }
  return q;
}

std::vector<float> dequantize_nvfp4(const uint8_t* data, const uint8_t* sf, int64_t rows,
                                    int64_t k) {
  std::vector<float> out(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = data + r * (k / 2);
    for (int64_t q = 0; q < k; ++q) {
      const float scale = ue4m3_to_float(sf[sf_blocked_offset(
          static_cast<uint32_t>(r), static_cast<uint32_t>(q / kNvfp4BlockSize),
          static_cast<uint32_t>(k))]);
      out[static_cast<size_t>(r * k + q)] =
          e2m1_to_float(fp4_code(row, static_cast<uint32_t>(q))) * scale;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Generated inputs
// ---------------------------------------------------------------------------------------------

namespace {

Nvfp4Matrix random_operand(uint64_t seed, uint64_t stream, int64_t rows, int64_t k,
                           const char* name) {
  std::vector<float> x(static_cast<size_t>(rows * k));
  uint64_t state = stream_state(seed, stream);
  for (float& v : x) v = unit_float(splitmix64(state));
  return quantize_nvfp4(x.data(), rows, k, name);
}

// Wide: uniform in [-1, 1) times 2^e, one e in [-6, 3] per 16-element block, quantized like the
// random inputs: the blocks' UE4M3 scales (amax/6) span 2^-9..2^0.4, products of elements about 24
// binades, so FP32 sums round and their order shows in C's bits (the repeat-launch check).
Nvfp4Matrix wide_operand(uint64_t seed, uint64_t stream, int64_t rows, int64_t k, const char* name) {
  std::vector<float> x(static_cast<size_t>(rows * k));
  uint64_t state = stream_state(seed, stream);
  for (size_t b = 0; b < x.size(); b += kNvfp4BlockSize) {
    const int e = static_cast<int>(below(splitmix64(state), 10)) - 6;
    for (size_t i = b; i < b + kNvfp4BlockSize; ++i) x[i] = std::ldexp(unit_float(splitmix64(state)), e);
  }
  return quantize_nvfp4(x.data(), rows, k, name);
}

// Why these sets give exact sums: an element is c * s with c in {0, ±1/2, ±1, ±2} and s in
// {1/2, 1, 2}, so it is a multiple of 2^-2 and at most 4 in magnitude. A product of two is a
// multiple of 2^-4 and at most 16, and so is every sum of products, however it is ordered or
// grouped (a 16-element block's dot product of codes, a multiple of 2^-2 up to 64, times the
// product of two scales, a multiple of 2^-2 up to 4, included): all are multiples of 2^-4 no larger
// than 16K, which FP32 (24 significant bits) holds exactly while 16K <= 2^24 * 2^-4, i.e. K <= 2^16
// (kMaxNvfp4IntegerK). The output's only rounding is then the final one to FP16.
constexpr uint8_t kIntegerCodes[7] = {0x0, 0x1, 0x2, 0x4, 0x9, 0xA, 0xC};  // 0, ±0.5, ±1, ±2
constexpr uint8_t kIntegerScales[3] = {0x30, 0x38, 0x40};                 // 0.5, 1, 2

Nvfp4Matrix integer_operand(uint64_t seed, uint64_t code_stream, uint64_t scale_stream,
                            int64_t rows, int64_t k) {
  Nvfp4Matrix q;
  q.rows = rows;
  q.k = k;
  q.data.resize(static_cast<size_t>(rows * (k / 2)));
  uint64_t state = stream_state(seed, code_stream);
  for (uint8_t& byte : q.data) {
    const uint64_t x = splitmix64(state);
    // Two codes from one draw: the top 32 bits for the low nibble, the next 32 for the high one.
    const uint8_t lo = kIntegerCodes[below(x, 7)], hi = kIntegerCodes[below(x << 32, 7)];
    byte = static_cast<uint8_t>(lo | hi << 4);
  }
  q.sf.assign(sf_bytes(static_cast<uint32_t>(rows), static_cast<uint32_t>(k)), 0);
  state = stream_state(seed, scale_stream);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < k / kNvfp4BlockSize; ++kb)
      q.sf[sf_blocked_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(kb),
                             static_cast<uint32_t>(k))] = kIntegerScales[below(splitmix64(state), 3)];
  return q;
}

// The NVFP4 competition's generator (gpu-mode reference-kernels, problems/nvidia/nvfp4_dual_gemm/
// reference.py, its final version; docs/15_nvfp4_dual_gemm.md): our own generator, the same
// distributions. Data: every byte uniform in 0..254 (torch.randint(255)), masked with 0xBB, which
// keeps each nibble's sign bit and two low bits: codes 0-3 and 8-11, the values 0, 0.5, 1, 1.5 and
// their negatives, -0 included (the mask, and 255's absence, make them not quite uniform: 0xBB is
// one byte value short). Scales: UE4M3_RN of a float uniform in [0, 1) with 24 bits
// (torch.rand(...).to(float8_e4m3fn)): 0 below 2^-10, up to 1.0 (from 0.96875). The scales are
// drawn per (row, 16-element block) and stored in our blocked layout, which is reference.py's
// to_blocked() layout and the (32, 4, rest_m, 4, rest_k) permuted tensor it hands to kernels.
Nvfp4Matrix competition_operand(uint64_t seed, uint64_t byte_stream, uint64_t scale_stream, int64_t rows, int64_t k) {
  Nvfp4Matrix q;
  q.rows = rows;
  q.k = k;
  q.data.resize(static_cast<size_t>(rows * (k / 2)));
  uint64_t state = stream_state(seed, byte_stream);
  for (uint8_t& byte : q.data) byte = static_cast<uint8_t>(below(splitmix64(state), 255) & 0xBBu);
  q.sf.assign(sf_bytes(static_cast<uint32_t>(rows), static_cast<uint32_t>(k)), 0);
  state = stream_state(seed, scale_stream);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < k / kNvfp4BlockSize; ++kb) {
      const float u = std::ldexp(static_cast<float>(splitmix64(state) >> 40), -24);  // [0, 1), 24 bits
      q.sf[sf_blocked_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(kb), static_cast<uint32_t>(k))] =
          float_to_ue4m3(u);
    }
  return q;
}

}  // namespace

Nvfp4Operands Nvfp4HostInputs::operands() const {
  Nvfp4Operands op;
  op.a = a.data.data();
  op.b = b.data.data();
  op.sfa = a.sf.data();
  op.sfb = b.sf.data();
  if (!b2.data.empty()) {
    op.b2 = b2.data.data();
    op.sfb2 = b2.sf.data();
  }
  return op;
}

Nvfp4HostInputs make_nvfp4_inputs(Inputs kind, uint64_t seed, int64_t m, int64_t n, int64_t k, bool dual,
                                  bool fill) {
  Nvfp4HostInputs in;
  if (!fill) {
    const auto zeros = [k](int64_t rows) {
      Nvfp4Matrix z;
      z.rows = rows;
      z.k = k;
      z.data.assign(static_cast<size_t>(rows * (k / 2)), 0);  // as quantize_nvfp4 sizes them
      z.sf.assign(sf_bytes(static_cast<uint32_t>(rows), static_cast<uint32_t>(k)), 0);
      return z;
    };
    in.a = zeros(m);
    in.b = zeros(n);
    if (dual) in.b2 = zeros(n);
    return in;
  }
  if (kind == Inputs::kInteger) {
    in.a = integer_operand(seed, 0, 2, m, k);
    in.b = integer_operand(seed, 1, 3, n, k);
    if (dual) in.b2 = integer_operand(seed, 4, 5, n, k);
  } else if (kind == Inputs::kWide) {
    in.a = wide_operand(seed, 0, m, k, "A");
    in.b = wide_operand(seed, 1, n, k, "B");
    if (dual) in.b2 = wide_operand(seed, 4, n, k, "B2");
  } else if (kind == Inputs::kCompetition) {
    in.a = competition_operand(seed, 0, 2, m, k);
    in.b = competition_operand(seed, 1, 3, n, k);
    if (dual) in.b2 = competition_operand(seed, 4, 5, n, k);
  } else {
    in.a = random_operand(seed, 0, m, k, "A");
    in.b = random_operand(seed, 1, n, k, "B");
    if (dual) in.b2 = random_operand(seed, 4, n, k, "B2");
  }
  return in;
}

// ---------------------------------------------------------------------------------------------
// CPU reference for NVFP4 inputs
// ---------------------------------------------------------------------------------------------

void cpu_reference_nvfp4(const Nvfp4Operands& op, int64_t m, int64_t n, int64_t k, float* ref,
                         float* s, unsigned threads) {
  // Each decoded element (E2M1 value times UE4M3 scale) is exact in float, so the core sees the
  // operands exactly as the tensor cores do; its double sums are then exact for integer inputs.
  const std::vector<float> af = dequantize_nvfp4(op.a, op.sfa, m, k);
  const std::vector<float> bf = dequantize_nvfp4(op.b, op.sfb, n, k);
  reference_gemm(af.data(), bf.data(), m, n, k, ref, s, threads);
}

}  // namespace tcg::harness
