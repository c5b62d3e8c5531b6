// descriptors.h — every bit-level encoding the tcgen05 steps rely on, in one place.
//
// The kernels (nvcc, sm_100f), the emulator (g++) and the tests all include this header, so a
// descriptor the kernel builds is decoded by the emulator with the very same field definitions.
// Everything is constexpr __host__ __device__: the doctest suite checks the values at compile
// time and at run time, and the plot scripts dump the same address functions through a tiny tool.
//
// Sources: PTX ISA 9.0 §9.7.16.4.1 (shared-memory descriptor, Table 40), §9.7.16.4.2 (instruction
// descriptor, Table 42/44), §9.7.16.1.1 (TMEM addressing), §5.5.7 (TMA swizzle modes). Where the
// ISA text and CUTLASS's cute/arch/mma_sm100_desc.hpp agree (they do for every field used here),
// tests/unit/test_cutlass.cpp checks our encoders bit for bit against CUTLASS's.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define TCG_HD __host__ __device__
#else
#define TCG_HD
#endif

namespace tcg {

// ---------------------------------------------------------------------------------------------
// Shared-memory matrix descriptor (64 bit), PTX ISA §9.7.16.4.1.
//   bits  0-13  start address >> 4          bits 16-29  leading byte offset (LBO) >> 4
//   bits 32-45  stride byte offset (SBO) >> 4
//   bits 46-48  fixed constant 0b001        bits 49-51  base offset (swizzle phase)
//   bit  52     LBO mode (0: relative)      bits 53-60  fixed 0
//   bits 61-63  layout / swizzle type
// ---------------------------------------------------------------------------------------------
enum class Layout : uint32_t {
  kNone = 0,             // K-major: 8 rows x 16 B "core matrices", each 128 contiguous bytes
  kSwizzle128B_Base32B = 1,
  kSwizzle128B = 2,
  kSwizzle64B = 4,
  kSwizzle32B = 6,
};

// Width in bytes of one swizzled row (the "swizzle span"); 16 for the unswizzled layout, whose
// row inside a core matrix is 16 bytes.
TCG_HD constexpr uint32_t layout_row_bytes(Layout l) {
  return l == Layout::kSwizzle128B || l == Layout::kSwizzle128B_Base32B ? 128u
         : l == Layout::kSwizzle64B                                     ? 64u
         : l == Layout::kSwizzle32B                                     ? 32u
                                                                        : 16u;
}
// Bytes after which the swizzle pattern repeats (8 rows of the span): 1024 / 512 / 256 B.
TCG_HD constexpr uint32_t layout_repeat_bytes(Layout l) { return 8u * layout_row_bytes(l); }

TCG_HD constexpr bool layout_is_valid(uint32_t v) { return v == 0 || v == 1 || v == 2 || v == 4 || v == 6; }

// The 14-bit "matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4" of Table 40.
TCG_HD constexpr uint64_t desc_field(uint32_t bytes) { return uint64_t((bytes & 0x3FFFFu) >> 4); }

// start_addr: shared::cta byte address of the operand's first element (16-byte aligned).
// lbo_bytes / sbo_bytes: see docs/core_matrices.md. For K-major operands:
//   no swizzle: LBO = distance between the two core matrices adjacent along K,
//               SBO = distance between consecutive 8-row groups.
//   swizzled:   LBO unused (the ISA assumes 1; we write 16 B -> field 1, as CUTLASS does),
//               SBO = distance between 8-row groups (1024 B for densely stacked 128B atoms).
TCG_HD constexpr uint64_t make_smem_desc(uint32_t start_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                         Layout layout, uint32_t base_offset = 0) {
  return desc_field(start_addr)                     // bits 0-13
         | desc_field(lbo_bytes) << 16              // bits 16-29
         | desc_field(sbo_bytes) << 32              // bits 32-45
         | uint64_t(1) << 46                        // bits 46-48 = 0b001 (Blackwell "version")
         | uint64_t(base_offset & 7u) << 49         // bits 49-51
         | uint64_t(static_cast<uint32_t>(layout)) << 61;  // bits 61-63
}

struct SmemDesc {
  uint32_t start;        // byte address (field << 4)
  uint32_t lbo;          // bytes
  uint32_t sbo;          // bytes
  uint32_t fixed46_48;   // must be 0b001
  uint32_t base_offset;  // bits 49-51
  uint32_t lbo_mode;     // bit 52
  uint32_t reserved;     // bits 14-15, 30-31, 53-60: must be 0
  uint32_t layout;       // bits 61-63 (raw, may be invalid)
};

TCG_HD constexpr SmemDesc decode_smem_desc(uint64_t d) {
  return SmemDesc{uint32_t(d & 0x3FFFu) << 4,
                  uint32_t((d >> 16) & 0x3FFFu) << 4,
                  uint32_t((d >> 32) & 0x3FFFu) << 4,
                  uint32_t((d >> 46) & 7u),
                  uint32_t((d >> 49) & 7u),
                  uint32_t((d >> 52) & 1u),
                  uint32_t(((d >> 14) & 3u) | ((d >> 30) & 3u) << 2 | ((d >> 53) & 0xFFu) << 4),
                  uint32_t(d >> 61)};
}

// ---------------------------------------------------------------------------------------------
// Swizzle as the hardware applies it: an XOR of address bits, PTX ISA §5.5.7 (TMA side) and the
// Swizzle<B,4,3> column of §9.7.16.3.3 (MMA side). Bits [4, 4+B) of the byte address (the 16-byte
// chunk inside a 128-byte line) are XORed with bits [7, 7+B) (the line index inside the repeat).
// ---------------------------------------------------------------------------------------------
TCG_HD constexpr uint32_t swizzle_bits(uint32_t span_bytes) {
  return span_bytes == 128 ? 3u : span_bytes == 64 ? 2u : span_bytes == 32 ? 1u : 0u;
}
TCG_HD constexpr uint32_t swizzle_addr(uint32_t addr, uint32_t span_bytes) {
  const uint32_t bits = swizzle_bits(span_bytes);
  return addr ^ (((addr >> 7) & ((1u << bits) - 1u)) << 4);
}

// Where an MMA reads byte `kbyte` (0..31) of row `row` of a K-major operand described by `d`.
// This is the canonical K-major layout of PTX ISA §9.7.16.3.3 written as an address function:
//   no swizzle: ((8,m),(16B,2)) : ((16B, SBO), (1, LBO))
//   swizzled:   ((8,m),(16B,2)) : ((W, SBO), (1, 16B)), then the XOR swizzle on the address.
TCG_HD constexpr uint32_t kmajor_operand_addr(const SmemDesc& d, uint32_t row, uint32_t kbyte) {
  const Layout l = static_cast<Layout>(d.layout);
  const uint32_t group = row / 8, r = row % 8;
  if (l == Layout::kNone)
    return d.start + group * d.sbo + (kbyte / 16) * d.lbo + r * 16 + (kbyte % 16);
  const uint32_t w = layout_row_bytes(l);
  return swizzle_addr(d.start + group * d.sbo + r * w + kbyte, w);
}

// Where an MMA reads element (mn, k) of an MN-major operand (idesc transpose bit set), elements
// of `eb` bytes. Canonical MN-major layouts of §9.7.16.3.3; only used by tests and the emulator.
TCG_HD constexpr uint32_t mnmajor_operand_addr(const SmemDesc& d, uint32_t mn, uint32_t k, uint32_t eb) {
  const Layout l = static_cast<Layout>(d.layout);
  const uint32_t byte_mn = mn * eb;
  if (l == Layout::kNone)
    return d.start + (byte_mn / 16) * d.sbo + (k / 8) * d.lbo + (k % 8) * 16 + byte_mn % 16;
  const uint32_t w = layout_row_bytes(l);
  return swizzle_addr(d.start + (byte_mn / w) * d.lbo + (k / 8) * d.sbo + (k % 8) * w + byte_mn % w, w);
}

// ---------------------------------------------------------------------------------------------
// Instruction descriptor for tcgen05.mma kind::f16 (and tf32/f8f6f4/i8), PTX ISA §9.7.16.4.2,
// Table 42. 32 bits, passed as the `idesc` register operand.
//   bits 0-1 sparsity selector, 2 sparse, 3 saturate, 4-5 D format, 7-9 A format, 10-12 B format,
//   13/14 negate A/B, 15/16 transpose (MN-major) A/B, 17-22 N>>3, 24-28 M>>4, 30-31 max shift.
// ---------------------------------------------------------------------------------------------
enum class DType : uint32_t { kF16 = 0, kF32 = 1, kS32 = 2 };   // D (accumulator) format
enum class F16Kind : uint32_t { kF16 = 0, kBF16 = 1 };           // A/B format under kind::f16

// M is stored as M >> 4 and N as N >> 3. A shape those fields cannot represent (M not a
// multiple of 16 or N not a multiple of 8, or too large for the field) is encoded with M = 0,
// which no MMA accepts, instead of silently becoming a smaller valid shape; the emulator then
// reports it as an invalid MMA shape.
TCG_HD constexpr uint32_t make_idesc_f16(F16Kind a, F16Kind b, DType d, uint32_t M, uint32_t N,
                                         bool a_mn_major = false, bool b_mn_major = false,
                                         bool negate_a = false, bool negate_b = false) {
  const bool representable = M % 16 == 0 && N % 8 == 0 && (M >> 4) < 32 && (N >> 3) < 64;
  return uint32_t(d) << 4 | uint32_t(a) << 7 | uint32_t(b) << 10 | uint32_t(negate_a) << 13 |
         uint32_t(negate_b) << 14 | uint32_t(a_mn_major) << 15 | uint32_t(b_mn_major) << 16 |
         (representable ? (N >> 3) << 17 | (M >> 4) << 24 : 0u);
}

// The configuration every BF16 step uses: BF16 x BF16 -> FP32, both operands K-major.
TCG_HD constexpr uint32_t make_idesc_bf16_f32(uint32_t M, uint32_t N) {
  return make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, M, N);
}

struct Idesc {
  uint32_t sparse_sel, sparse, saturate, d_format, reserved6, a_format, b_format;
  uint32_t negate_a, negate_b, a_mn_major, b_mn_major, n, reserved23, m, reserved29, max_shift;
};

TCG_HD constexpr Idesc decode_idesc(uint32_t i) {
  return Idesc{i & 3u,           (i >> 2) & 1u,  (i >> 3) & 1u,  (i >> 4) & 3u,
               (i >> 6) & 1u,    (i >> 7) & 7u,  (i >> 10) & 7u, (i >> 13) & 1u,
               (i >> 14) & 1u,   (i >> 15) & 1u, (i >> 16) & 1u, ((i >> 17) & 0x3Fu) << 3,
               (i >> 23) & 1u,   ((i >> 24) & 0x1Fu) << 4, (i >> 29) & 1u, (i >> 30) & 3u};
}

// Valid kind::f16 shapes for cta_group::1, PTX ISA §9.7.16.2.1 Table 39: M in {64, 128},
// N a multiple of 8 in [8, 256].
TCG_HD constexpr bool is_valid_f16_shape_cta1(uint32_t M, uint32_t N) {
  return (M == 64 || M == 128) && N % 8 == 0 && N >= 8 && N <= 256;
}
// cta_group::2 (an MMA over a CTA pair): M in {128, 256} across the pair, N a multiple of 16 in
// [16, 256] (Table 39).
TCG_HD constexpr bool is_valid_f16_shape_cta2(uint32_t M, uint32_t N) {
  return (M == 128 || M == 256) && N % 16 == 0 && N >= 16 && N <= 256;
}

// ---------------------------------------------------------------------------------------------
// Instruction descriptor for the block-scaled kinds kind::mxf4 / kind::mxf4nvf4 (step 07), PTX ISA
// §9.7.16.4.2 Table 44; CUTLASS's UMMA::InstrDescriptorBlockScaled (cute/arch/mma_sm100_desc.hpp).
//   bits 0-1 reserved (sparse metadata id), 2 sparse, 3 reserved, 4-5 SFB_ID, 6 reserved,
//   7-9 A format (E2M1 = 1), 10-12 B format (E2M1 = 1; the ISA calls bit 12 reserved), 13/14 negate
//   A/B, 15/16 transpose A/B (must be 0 for mxf4*), 17-22 N>>3, 23 scale type (UE4M3 = 0,
//   UE8M0 = 1), 24-28 M>>4 (see below), 29-30 SFA_ID, 31 K size (0: dense K = 64; 1: K = 96,
//   sm_103a only).
// The M field: the ISA writes "M >> 7" in bits 27-28 with 24-26 reserved; CUTLASS writes M >> 4 in
// the 5-bit field 24-28, as for every other kind. For the only legal values (128, 256) the bits are
// identical; we encode and decode as CUTLASS does, so an M the ISA cannot express (M = 64) decodes
// as 64 and is refused as a shape, not silently read as something else.
// E2M1 is format code 1 under kind::mxf4*, but 5 under kind::f8f6f4 / mxf8f6f4 (Table 43).
// ---------------------------------------------------------------------------------------------
enum class ScaleType : uint32_t { kUE4M3 = 0, kUE8M0 = 1 };  // bit 23
constexpr uint32_t kMxf4FormatE2M1 = 1;                       // A/B format code under kind::mxf4*

// kind::mxf4nvf4, A and B E2M1 (K-major: mxf4 kinds cannot transpose), D F32 (implied; the
// block-scaled idesc has no D-format field). ue4m3_scales: scale type UE4M3 (NVFP4, needs
// .block16) or UE8M0. sfa_id / sfb_id: the scale-factor data IDs (bits 29-30, 4-5), which must be
// 0 with .block16 (§9.7.16.10.7.2.3). Shapes the M/N fields cannot represent encode M = 0, which
// no MMA accepts (as make_idesc_f16 does).
TCG_HD constexpr uint32_t make_idesc_mxf4nvf4(uint32_t M, uint32_t N, bool ue4m3_scales = true, uint32_t sfa_id = 0,
                                              uint32_t sfb_id = 0) {
  const bool representable = M % 16 == 0 && N % 8 == 0 && (M >> 4) < 32 && (N >> 3) < 64;
  return (sfb_id & 3u) << 4 | kMxf4FormatE2M1 << 7 | kMxf4FormatE2M1 << 10 |
         (representable ? (N >> 3) << 17 | (M >> 4) << 24 : 0u) |
         uint32_t(ue4m3_scales ? ScaleType::kUE4M3 : ScaleType::kUE8M0) << 23 | (sfa_id & 3u) << 29;
}

struct IdescBlockScaled {
  uint32_t sparse_sel;  // bits 0-1 (reserved for dense)
  uint32_t sparse;      // bit 2
  uint32_t reserved3, sfb_id, reserved6;
  uint32_t a_format, b_format;  // 3-bit fields (bits 7-9, 10-12)
  uint32_t negate_a, negate_b, a_mn_major, b_mn_major;
  uint32_t n;           // N (field << 3)
  uint32_t scale_type;  // bit 23: ScaleType
  uint32_t m;           // M (5-bit field 24-28 << 4, as CUTLASS; 128 = bit 27, 256 = bit 28)
  uint32_t sfa_id;      // bits 29-30
  uint32_t k_size;      // bit 31
};

TCG_HD constexpr IdescBlockScaled decode_idesc_block_scaled(uint32_t i) {
  return IdescBlockScaled{i & 3u,          (i >> 2) & 1u,   (i >> 3) & 1u,  (i >> 4) & 3u,
                          (i >> 6) & 1u,   (i >> 7) & 7u,   (i >> 10) & 7u, (i >> 13) & 1u,
                          (i >> 14) & 1u,  (i >> 15) & 1u,  (i >> 16) & 1u, ((i >> 17) & 0x3Fu) << 3,
                          (i >> 23) & 1u,  ((i >> 24) & 0x1Fu) << 4, (i >> 29) & 3u, (i >> 31) & 1u};
}

// Valid kind::mxf4 / mxf4nvf4 shapes for cta_group::1, PTX ISA §9.7.16.2.1 Table 39 (CUTLASS's
// SM100_MMA_MXF4_SS static_asserts agree): M = 128 only, N a multiple of 8 in [8, 256]; K = 64.
TCG_HD constexpr bool is_valid_mxf4_shape_cta1(uint32_t M, uint32_t N) {
  return M == 128 && N % 8 == 0 && N >= 8 && N <= 256;
}
// cta_group::2 (a pair MMA): M in {128, 256} across the pair, N a multiple of 16 in [16, 256]
// (Table 39; CUTLASS's SM100_MMA_MXF4_2x1SM_SS static_asserts agree).
TCG_HD constexpr bool is_valid_mxf4_shape_cta2(uint32_t M, uint32_t N) {
  return (M == 128 || M == 256) && N % 16 == 0 && N >= 16 && N <= 256;
}
constexpr uint32_t kMxf4K = 64;           // K of one dense kind::mxf4nvf4 MMA (32 bytes per row)
constexpr uint32_t kNvfp4BlockSize = 16;  // elements per UE4M3 scale (.block16)

// E2M1 (PTX ISA §5.2.3): sign bit 3, exponent bits 2-1 (bias 1), mantissa bit 0; no Inf or NaN.
// Codes 0-7: 0, 0.5, 1, 1.5, 2, 3, 4, 6; codes 8-15 the same negated (8 is -0). Two per byte in
// shared memory, the lower K index in bits 3-0 (§9.7.16.10.4). Exact products of two E2M1 values
// are multiples of 0.25 up to 36.
TCG_HD constexpr float e2m1_to_float(uint8_t nibble) {
  const uint32_t e = (nibble >> 1) & 3u, m = nibble & 1u;
  const float mag = e == 0 ? 0.5f * float(m) : float(2u + m) * float(1u << e) * 0.25f;
  return (nibble & 8u) ? -mag : mag;
}

// UE4M3 (PTX ISA §5.2.3): E4M3 with the sign bit required to be 0: exponent bits 6-3 (bias 7),
// mantissa bits 2-0. Normal 2^(e-7) * (1 + m/8), subnormal (e = 0) 2^-6 * m/8 (smallest 2^-9),
// largest 448 (0x7E); 0x7F is NaN, there is no infinity. A byte with the sign bit set is not a
// UE4M3 value (the ISA requires the MSB to be 0): it decodes as NaN here, so a stray sign shows up.
TCG_HD constexpr float ue4m3_to_float(uint8_t b) {
  if ((b & 0x80u) || b == 0x7Fu) return __builtin_nanf("");
  const uint32_t e = (b >> 3) & 15u, m = b & 7u;
  return e == 0 ? float(m) / 512.0f : float(8u + m) * float(1u << e) / 1024.0f;
}

// ---------------------------------------------------------------------------------------------
// Tensor memory addresses, PTX ISA §9.7.16.1.1: lane in bits 31-16, column in bits 15-0.
// 128 lanes x 512 columns of 32-bit cells per CTA.
// ---------------------------------------------------------------------------------------------
constexpr uint32_t kTmemLanes = 128;
constexpr uint32_t kTmemColumns = 512;

TCG_HD constexpr uint32_t tmem_addr(uint32_t lane, uint32_t column) { return lane << 16 | column; }
TCG_HD constexpr uint32_t tmem_lane(uint32_t addr) { return addr >> 16; }
TCG_HD constexpr uint32_t tmem_column(uint32_t addr) { return addr & 0xFFFFu; }
// Offset a TMEM address by whole lanes and columns (no carry between the two fields).
TCG_HD constexpr uint32_t tmem_offset(uint32_t addr, uint32_t lanes, uint32_t columns) {
  return tmem_addr(tmem_lane(addr) + lanes, tmem_column(addr) + columns);
}

// tcgen05.alloc takes a power of two in [32, 512] columns (PTX ISA §9.7.16.7.1).
TCG_HD constexpr bool is_valid_tmem_alloc(uint32_t ncols) {
  return ncols >= 32 && ncols <= 512 && (ncols & (ncols - 1)) == 0;
}
TCG_HD constexpr uint32_t tmem_alloc_columns(uint32_t needed) {
  uint32_t c = 32;
  while (c < needed) c <<= 1;
  return c;
}

}  // namespace tcg
