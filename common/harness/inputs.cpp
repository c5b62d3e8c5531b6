// inputs.cpp — the BF16 flavour of the problem's data: BF16 <-> float conversions, the
// deterministic input generator (splitmix64 streams, `random` and `integer` inputs), and the CPU
// reference for BF16 inputs, which converts them to float for the type-independent reference GEMM
// (reference.cpp). Another input type (NVFP4) gets its own generator and reference
// wrapper beside these, feeding the same core.
#include <cmath>

#include "common/harness/internal.h"

namespace tcg::harness {

// ---------------------------------------------------------------------------------------------
// BF16 conversions
// ---------------------------------------------------------------------------------------------

// The conversions of cuda_bf16.h, the ones the kernels use (its host implementation also serves
// the emulator build), so the expected BF16 bits are rounded exactly as the kernels round.
uint16_t float_to_bf16_bits(float x) { return bf16_bits(__float2bfloat16_rn(x)); }

float bf16_bits_to_float(uint16_t bits) { return __bfloat162float(bf16_from_bits(bits)); }

// __nv_bfloat16 keeps its bits private; __nv_bfloat16_raw is the public way in and out.
uint16_t bf16_bits(__nv_bfloat16 x) { return static_cast<__nv_bfloat16_raw>(x).x; }

__nv_bfloat16 bf16_from_bits(uint16_t bits) {
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __nv_bfloat16(raw);
}

// ---------------------------------------------------------------------------------------------
// Generated inputs
// ---------------------------------------------------------------------------------------------

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t stream_state(uint64_t seed, uint64_t stream_id) {
  // Hash (seed, stream_id) into the generator's starting point, so that neighbouring seeds or
  // stream ids start at unrelated places of splitmix64's 2^64-long sequence.
  uint64_t s = seed;
  uint64_t mixed = splitmix64(s) ^ ((stream_id + 1) * 0xD6E8FEB86659FD93ull);
  return splitmix64(mixed);
}

float unit_float(uint64_t x) {
  // 24 random bits -> a multiple of 2^-23 in [-1, 1), exact in float.
  return static_cast<float>(x >> 40) * 0x1p-23f - 1.0f;
}

uint32_t below(uint64_t x, uint32_t n) {
  // Top 32 bits scaled to [0, n): multiply-shift instead of % avoids modulo bias.
  return static_cast<uint32_t>(((x >> 32) * n) >> 32);
}

void fill_input(Inputs kind, uint64_t seed, uint64_t stream_id, __nv_bfloat16* dst, size_t count) {
  uint64_t state = stream_state(seed, stream_id);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t x = splitmix64(state);
    // Integers in [-2, 2]; or random: RN to BF16 can round the top values of unit_float up to
    // 1.0, so the result lies in [-1, 1]; or wide: that times 2^e, e in [-8, 7] from the low bits
    // (unit_float uses the top 24), so products span 30 binades and FP32 sums of them round.
    const float v = kind == Inputs::kInteger ? static_cast<float>(static_cast<int>(below(x, 5)) - 2)
                    : kind == Inputs::kWide  ? std::ldexp(unit_float(x), static_cast<int>(x & 15) - 8)
                                             : unit_float(x);
    dst[i] = bf16_from_bits(float_to_bf16_bits(v));
  }
}

HostInputs make_inputs(Inputs kind, uint64_t seed, int64_t m, int64_t n, int64_t k, bool fill) {
  HostInputs in;
  in.a.resize(static_cast<size_t>(m) * static_cast<size_t>(k));
  in.b.resize(static_cast<size_t>(n) * static_cast<size_t>(k));
  if (!fill) return in;
  fill_input(kind, seed, 0, in.a.data(), in.a.size());
  fill_input(kind, seed, 1, in.b.data(), in.b.size());
  return in;
}

// ---------------------------------------------------------------------------------------------
// CPU reference for BF16 inputs
// ---------------------------------------------------------------------------------------------

namespace {

std::vector<float> bf16_to_floats(const __nv_bfloat16* x, size_t count) {
  std::vector<float> f(count);
  for (size_t i = 0; i < count; ++i) f[i] = bf16_to_float(x[i]);
  return f;
}

}  // namespace

void cpu_reference(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t m, int64_t n, int64_t k,
                   float* ref, float* s, unsigned threads) {
  // Every BF16 value is exact in float, so converting first loses nothing and lets the core read
  // plain floats.
  const std::vector<float> af = bf16_to_floats(a, static_cast<size_t>(m * k));
  const std::vector<float> bf = bf16_to_floats(b, static_cast<size_t>(n * k));
  reference_gemm(af.data(), bf.data(), m, n, k, ref, s, threads);
}

}  // namespace tcg::harness
