// test_descriptors.cpp — hand-computed checks of the descriptor and TMEM encoders of
// common/descriptors.h: shared-memory descriptors (encoding and decoding), instruction
// descriptors, TMEM addresses and allocation sizes. The operand address maps (swizzles, K-major
// and MN-major layouts) are checked in test_operand_addressing.cpp.
//
// Every expected value below is worked out by hand in the comment next to it, from the PTX ISA
// tables (docs/references.md) and from the descriptors a blog author ran on a real B200 (gau-nernst,
// "tcgen05 for dummies", "v1" = no swizzle, "v2" = 128B
// swizzle). The encoders are constexpr, so most values are checked twice: by static_assert (the
// build fails if they are wrong) and by CHECK on inputs laundered through a volatile (so the
// run-time code path is exercised, not only the constant folder).
//
// The expected side of the address checks is never computed with descriptors.h: TMA placement is
// modelled directly from the box shapes, and the swizzles are literal copies of the ISA tables.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>

#include "common/descriptors.h"
#include "descriptor_test_util.h"

using namespace tcg;
using namespace desc_test;  // rt, step 01's geometry

// ==============================================================================================
// Shared-memory descriptor encoding
// ==============================================================================================

// hand-encoded from PTX ISA Table 40 (CUTLASS agrees: tests/unit/test_cutlass.cpp): bf16 128x64 K-major SW128 tile at 0x8000, SBO 1024, LBO 16.
//   start  0x8000 >> 4 = 0x800                     -> bits 0-13  : 0x0000000000000800
//   LBO      16  >> 4 = 1      , << 16              -> 0x0000000000010000
//   SBO    1024  >> 4 = 0x40   , << 32              -> 0x0000004000000000
//   fixed 0b001 at bit 46                            -> 0x0000400000000000
//   layout 2 (128B) << 61                            -> 0x4000000000000000
//   sum                                              =  0x4000404000010800
static_assert(make_smem_desc(0x8000, 16, 1024, Layout::kSwizzle128B) == 0x4000404000010800ull, "PTX ISA Table 40");
// hand-encoded from PTX ISA Table 40 (CUTLASS agrees: tests/unit/test_cutlass.cpp), tcgen05.cp scale-factor source: 0x9000, no swizzle, SBO 128, LBO 0.
//   0x9000 >> 4 = 0x900; LBO 0; SBO 128 >> 4 = 8 -> 0x800000000; bit 46 -> 0x400000000000
//   sum = 0x0000400800000900
static_assert(make_smem_desc(0x9000, 0, 128, Layout::kNone) == 0x0000400800000900ull, "PTX ISA Table 40, SF");

TEST_CASE("make_smem_desc: worked examples from PTX ISA Table 40") {
  CHECK(make_smem_desc(rt(0x8000u), rt(16u), rt(1024u), Layout::kSwizzle128B) == 0x4000404000010800ull);
  CHECK(make_smem_desc(rt(0x9000u), rt(0u), rt(128u), Layout::kNone) == 0x0000400800000900ull);
}

// gau-nernst's "tcgen05 for dummies" "v1" (no swizzle) for step 01's tile, A at smem address 0x1000, B right after it at
// 0x1000 + 128*64*2 = 0x5000. Seed: LBO = height*16 = 128*16 = 2048, SBO = 8*16 = 128, bit 46.
//   A: start 0x1000>>4 = 0x100; LBO 2048>>4 = 0x80 -> 0x800000; SBO 128>>4 = 8 -> 0x800000000;
//      bit 46 -> 0x400000000000; layout 0            -> 0x0000400800800100
//   B: start 0x5000>>4 = 0x500                       -> 0x0000400800800500
// MMA k-step s (K16 = 2 k-groups of 16 B) starts s * 2 * 2048 = s * 0x1000 bytes later, i.e. the
// start field grows by 0x100 per step: s = 3 -> A start 0x4000 -> 0x0000400800800400.
static_assert(make_smem_desc(0x1000, kS01Lbo, kS01Sbo, Layout::kNone) == 0x0000400800800100ull, "seed v1 A");
static_assert(make_smem_desc(0x5000, kS01Lbo, kS01Sbo, Layout::kNone) == 0x0000400800800500ull, "seed v1 B");
static_assert(make_smem_desc(0x1000 + 3 * 2 * kS01Lbo, kS01Lbo, kS01Sbo, Layout::kNone) == 0x0000400800800400ull,
              "seed v1 A, k-step 3");

TEST_CASE("make_smem_desc: tcgen05-for-dummies v1 (no swizzle) for the step 01 tile") {
  const uint32_t a = rt(0x1000u), b = rt(0x5000u);
  CHECK(make_smem_desc(a, rt(kS01Lbo), rt(kS01Sbo), Layout::kNone) == 0x0000400800800100ull);
  CHECK(make_smem_desc(b, rt(kS01Lbo), rt(kS01Sbo), Layout::kNone) == 0x0000400800800500ull);
  // The four k-steps of one BLOCK_K = 64 tile: start fields 0x100, 0x200, 0x300, 0x400.
  const uint64_t expect[4] = {0x0000400800800100ull, 0x0000400800800200ull, 0x0000400800800300ull,
                              0x0000400800800400ull};
  for (uint32_t s = 0; s < kBlockK / kMmaK; ++s)
    CHECK(make_smem_desc(a + s * 2 * kS01Lbo, kS01Lbo, kS01Sbo, Layout::kNone) == expect[s]);
}

// gau-nernst's "tcgen05 for dummies" "v2" (128B swizzle): SBO = 8*128 = 1024, LBO left 0, layout 2 at bits 61-63, tile at
// 0x1000 (1024-aligned).
//   start 0x1000>>4 = 0x100; SBO 1024>>4 = 0x40 -> 0x4000000000; bit 46; 2<<61 = 0x4000000000000000
//   = 0x4000404000000100. With LBO = 16 as CUTLASS writes it: + (1 << 16) = 0x4000404000010100.
// K16 step j adds 32 bytes to the start address: field += 32 >> 4 = 2 per step.
static_assert(make_smem_desc(0x1000, 0, 1024, Layout::kSwizzle128B) == 0x4000404000000100ull, "seed v2");
static_assert(make_smem_desc(0x1000, 16, 1024, Layout::kSwizzle128B) == 0x4000404000010100ull, "v2, LBO 16");
static_assert(make_smem_desc(0x1000 + 32, 0, 1024, Layout::kSwizzle128B) == 0x4000404000000102ull, "v2 +32");
static_assert(make_smem_desc(0x1000 + 96, 0, 1024, Layout::kSwizzle128B) == 0x4000404000000106ull, "v2 +96");

TEST_CASE("make_smem_desc: tcgen05-for-dummies v2 (128B swizzle) and the +32-byte K advance") {
  const uint32_t base = rt(0x1000u);
  const uint64_t d0 = make_smem_desc(base, 0, rt(1024u), Layout::kSwizzle128B);
  CHECK(d0 == 0x4000404000000100ull);
  CHECK(make_smem_desc(base, rt(16u), 1024, Layout::kSwizzle128B) == 0x4000404000010100ull);
  for (uint32_t j = 1; j < 4; ++j) {
    const uint64_t dj = make_smem_desc(base + 32 * j, 0, 1024, Layout::kSwizzle128B);
    // Only the start field (bits 0-13) moves, by exactly 2 per K16 step; bits 14-63 are untouched.
    CHECK(dj - d0 == 2ull * j);
    CHECK((dj >> 14) == (d0 >> 14));
    CHECK((dj & 0x3FFFu) == 0x100u + 2 * j);
  }
  // The blog post's v2 lambda writes the fields by hand; same value as ours: start enc | SBO enc << 32
  // | 1 << 46 | 2 << 61.
  CHECK(d0 == ((0x1000ull >> 4) | (uint64_t(1024 >> 4) << 32) | (1ull << 46) | (2ull << 61)));
}

TEST_CASE("make_smem_desc: other layouts, base offset") {
  // SW64, 0x2000, LBO 16, SBO 512: 0x200 | 1<<16 | 0x20<<32 | 1<<46 | 4<<61
  //   = 0x8000000000000000 | 0x400000000000 | 0x2000000000 | 0x10000 | 0x200 = 0x8000402000010200
  static_assert(make_smem_desc(0x2000, 16, 512, Layout::kSwizzle64B) == 0x8000402000010200ull, "SW64");
  CHECK(make_smem_desc(rt(0x2000u), 16, 512, Layout::kSwizzle64B) == 0x8000402000010200ull);
  // SW32, 0x2000, LBO 16, SBO 256: 6<<61 = 0xC000000000000000; 256>>4 = 0x10 -> 0x1000000000
  //   = 0xC000401000010200
  static_assert(make_smem_desc(0x2000, 16, 256, Layout::kSwizzle32B) == 0xC000401000010200ull, "SW32");
  CHECK(make_smem_desc(rt(0x2000u), 16, 256, Layout::kSwizzle32B) == 0xC000401000010200ull);
  // 128B_BASE32B = 1 -> bit 61 only: 0x2000000000000000
  CHECK(make_smem_desc(0, 0, 0, Layout::kSwizzle128B_Base32B) == 0x2000400000000000ull);
  // Zero inputs still carry the fixed bit 46.
  CHECK(make_smem_desc(rt(0u), 0, 0, Layout::kNone) == 0x0000400000000000ull);
  // base_offset 5 -> bits 49-51 = 0b101: 5 << 49 = 0x000A000000000000
  static_assert(make_smem_desc(0, 0, 0, Layout::kNone, 5) == 0x000A400000000000ull, "base offset");
  CHECK(make_smem_desc(0, 0, 0, Layout::kNone, rt(5u)) == 0x000A400000000000ull);
  // base_offset is 3 bits: 9 & 7 = 1 -> 1 << 49 = 0x0002000000000000 (bit 52, LBO mode, stays 0)
  CHECK(make_smem_desc(0, 0, 0, Layout::kNone, rt(9u)) == 0x0002400000000000ull);
}

TEST_CASE("desc_field: (x & 0x3FFFF) >> 4 truncation") {
  static_assert(desc_field(0x8000) == 0x800, "");
  CHECK(desc_field(rt(0x3FFFFu)) == 0x3FFFu);   // the largest encodable 18-bit value -> 14 ones
  CHECK(desc_field(rt(0x40000u)) == 0u);        // bit 18 is dropped
  CHECK(desc_field(rt(0x48010u)) == 0x801u);    // 0x48010 & 0x3FFFF = 0x08010 -> 0x801
  CHECK(desc_field(rt(0x1Fu)) == 1u);           // the low 4 bits are dropped (0x1F >> 4)
  CHECK(desc_field(rt(0xFFFFFFFFu)) == 0x3FFFu);
  // A start address above 256 KiB aliases: 0x48000 encodes like 0x8000.
  CHECK(make_smem_desc(rt(0x48000u), 16, 1024, Layout::kSwizzle128B) == 0x4000404000010800ull);
  // An oversized LBO does not spill into bits 30-31 or into SBO: 0x7FFF0 -> 0x3FFF0 -> 0x3FFF << 16.
  CHECK(make_smem_desc(0, rt(0x7FFF0u), 0, Layout::kNone) == (0x0000400000000000ull | 0x3FFF0000ull));
  // An oversized SBO does not spill into bit 46+: 0xFFFFF -> 0x3FFF << 32.
  CHECK(make_smem_desc(0, 0, rt(0xFFFFFu), Layout::kNone) == (0x0000400000000000ull | 0x00003FFF00000000ull));
}

// ==============================================================================================
// Shared-memory descriptor decoding
// ==============================================================================================

constexpr SmemDesc kDecodedSeedV2 = decode_smem_desc(0x4000404000010800ull);
static_assert(kDecodedSeedV2.start == 0x8000 && kDecodedSeedV2.lbo == 16 && kDecodedSeedV2.sbo == 1024, "");
static_assert(kDecodedSeedV2.fixed46_48 == 1 && kDecodedSeedV2.layout == 2 && kDecodedSeedV2.reserved == 0, "");

TEST_CASE("decode_smem_desc: round trip of every field") {
  // A value with every field non-trivial: start 0x3FFF0 (all 14 bits), LBO 0x2A0, SBO 0x15550,
  // base offset 6, layout 4. Start/LBO/SBO come back as bytes (field << 4).
  const uint64_t d = make_smem_desc(rt(0x3FFF0u), rt(0x2A0u), rt(0x15550u), Layout::kSwizzle64B, rt(6u));
  const SmemDesc s = decode_smem_desc(d);
  CHECK(s.start == 0x3FFF0u);
  CHECK(s.lbo == 0x2A0u);
  CHECK(s.sbo == 0x15550u);
  CHECK(s.fixed46_48 == 1u);  // 0b001: bit 46 set, bits 47-48 clear
  CHECK(s.base_offset == 6u);
  CHECK(s.lbo_mode == 0u);
  CHECK(s.reserved == 0u);
  CHECK(s.layout == 4u);
  // Re-encoding the decoded fields gives the same 64 bits.
  CHECK(make_smem_desc(s.start, s.lbo, s.sbo, static_cast<Layout>(s.layout), s.base_offset) == d);

  // Every layout value round-trips through bits 61-63.
  for (Layout l : {Layout::kNone, Layout::kSwizzle128B_Base32B, Layout::kSwizzle128B, Layout::kSwizzle64B,
                   Layout::kSwizzle32B})
    CHECK(decode_smem_desc(make_smem_desc(0x400, 16, 1024, l)).layout == static_cast<uint32_t>(l));

  // Low 4 bits of start / LBO / SBO are not representable: 0x8008 decodes as 0x8000.
  CHECK(decode_smem_desc(make_smem_desc(rt(0x8008u), 0x18, 0x408, Layout::kNone)).start == 0x8000u);
  CHECK(decode_smem_desc(make_smem_desc(0, rt(0x18u), 0, Layout::kNone)).lbo == 0x10u);
  CHECK(decode_smem_desc(make_smem_desc(0, 0, rt(0x408u), Layout::kNone)).sbo == 0x400u);
}

TEST_CASE("decode_smem_desc: fixed bits 46-48, LBO mode and reserved bits of raw values") {
  // Bits 47 and 48 set on top of bit 46: the field reads 0b111 = 7 (a bad descriptor the emulator
  // must reject).
  CHECK(decode_smem_desc(rt(0x0001C00000000000ull)).fixed46_48 == 7u);
  // Without bit 46: 0.
  CHECK(decode_smem_desc(rt(0ull)).fixed46_48 == 0u);
  // Bit 52 is the LBO mode.
  CHECK(decode_smem_desc(rt(1ull << 52)).lbo_mode == 1u);
  CHECK(decode_smem_desc(rt(1ull << 52)).base_offset == 0u);
  // Reserved bits are packed as: bits 14-15 -> 0-1, bits 30-31 -> 2-3, bits 53-60 -> 4-11.
  //   bit 14 -> 0x001, bit 31 -> 0x008, bit 60 -> bit 11 = 0x800: total 0x809
  CHECK(decode_smem_desc(rt((1ull << 14) | (1ull << 31) | (1ull << 60))).reserved == 0x809u);
  //   bit 15 -> 0x002, bit 30 -> 0x004, bit 53 -> 0x010: total 0x016
  CHECK(decode_smem_desc(rt((1ull << 15) | (1ull << 30) | (1ull << 53))).reserved == 0x016u);
  // All reserved bits set: 12 ones.
  CHECK(decode_smem_desc(rt(0x1FE00000C000C000ull)).reserved == 0xFFFu);
  // ... and none of them leaks into a neighbouring field.
  const SmemDesc r = decode_smem_desc(rt(0x1FE00000C000C000ull));
  CHECK(r.start == 0u);
  CHECK(r.lbo == 0u);
  CHECK(r.sbo == 0u);
  CHECK(r.fixed46_48 == 0u);
  CHECK(r.base_offset == 0u);
  CHECK(r.lbo_mode == 0u);
  CHECK(r.layout == 0u);
  // Invalid layout values 3, 5, 7 are decoded raw (7 << 61 = 0xE000000000000000).
  CHECK(decode_smem_desc(rt(0xE000000000000000ull)).layout == 7u);
}

TEST_CASE("layout helpers") {
  static_assert(layout_row_bytes(Layout::kSwizzle128B) == 128 && layout_repeat_bytes(Layout::kSwizzle128B) == 1024, "");
  CHECK(layout_row_bytes(rt(Layout::kNone)) == 16u);
  CHECK(layout_row_bytes(rt(Layout::kSwizzle32B)) == 32u);
  CHECK(layout_row_bytes(rt(Layout::kSwizzle64B)) == 64u);
  CHECK(layout_row_bytes(rt(Layout::kSwizzle128B)) == 128u);
  CHECK(layout_row_bytes(rt(Layout::kSwizzle128B_Base32B)) == 128u);
  CHECK(layout_repeat_bytes(rt(Layout::kSwizzle32B)) == 256u);
  CHECK(layout_repeat_bytes(rt(Layout::kSwizzle64B)) == 512u);
  CHECK(layout_repeat_bytes(rt(Layout::kSwizzle128B)) == 1024u);
  // Valid layout codes (Table 40): 0, 1, 2, 4, 6.
  const bool valid[8] = {true, true, true, false, true, false, true, false};
  for (uint32_t v = 0; v < 8; ++v) CHECK(layout_is_valid(rt(v)) == valid[v]);
}

// ==============================================================================================
// Instruction descriptor
// ==============================================================================================

// hand-encoded from PTX ISA §9.7.16.4.2 (CUTLASS agrees: tests/unit/test_cutlass.cpp), kind::f16 rows.
//   BF16 x BF16 -> F32, M128 N256, K-major:
//     D F32 = 1 << 4 = 0x10; A BF16 = 1 << 7 = 0x80; B BF16 = 1 << 10 = 0x400;
//     N >> 3 = 32 << 17 = 0x400000; M >> 4 = 8 << 24 = 0x08000000   -> 0x08400490
//   F16 x F16 -> F32, M128 N128: 0x10 | (16 << 17 = 0x200000) | 0x08000000 -> 0x08200010
//   BF16, M256 N256 (cta_group::2): 16 << 24 = 0x10000000 -> 0x10400490
//   BF16, M128 N256, A M-major: + 1 << 15 = 0x8000 -> 0x08408490
// Our step 01: BF16, M128 N128: 0x490 | 0x200000 | 0x08000000 -> 0x08200490
// Smallest cta_group::1 shape, M64 N8: 0x490 | (1 << 17 = 0x20000) | (4 << 24 = 0x04000000) -> 0x04020490
static_assert(make_idesc_bf16_f32(128, 256) == 0x08400490u, "PTX ISA Table 42");
static_assert(make_idesc_f16(F16Kind::kF16, F16Kind::kF16, DType::kF32, 128, 128) == 0x08200010u, "row 2");
static_assert(make_idesc_bf16_f32(256, 256) == 0x10400490u, "row 3");
static_assert(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, 128, 256, true) == 0x08408490u, "row 4");
static_assert(make_idesc_bf16_f32(128, 128) == 0x08200490u, "step 01");
static_assert(make_idesc_bf16_f32(64, 8) == 0x04020490u, "M64 N8");

TEST_CASE("make_idesc: PTX ISA §9.7.16.4.2 kind::f16 rows, step 01, edges") {
  CHECK(make_idesc_bf16_f32(rt(128u), rt(256u)) == 0x08400490u);
  CHECK(make_idesc_f16(F16Kind::kF16, F16Kind::kF16, DType::kF32, rt(128u), rt(128u)) == 0x08200010u);
  CHECK(make_idesc_bf16_f32(rt(256u), rt(256u)) == 0x10400490u);
  CHECK(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, rt(128u), rt(256u), rt(true)) == 0x08408490u);
  CHECK(make_idesc_bf16_f32(rt(128u), rt(128u)) == 0x08200490u);
  CHECK(make_idesc_bf16_f32(rt(64u), rt(8u)) == 0x04020490u);
  // The blog post's hand-written idesc for BLOCK_M = BLOCK_N = 128.
  CHECK(make_idesc_bf16_f32(rt(128u), rt(128u)) ==
        ((1u << 4) | (1u << 7) | (1u << 10) | ((128u >> 3) << 17) | ((128u >> 4) << 24)));
  // B N-major: + 1 << 16. Negate A: + 1 << 13; negate B: + 1 << 14.
  CHECK(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, 128, 128, false, rt(true)) == 0x08210490u);
  CHECK(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, 128, 128, false, false, rt(true)) ==
        0x08202490u);
  CHECK(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, 128, 128, false, false, false, rt(true)) ==
        0x08204490u);
  // F16 accumulator (D format 0): 0x08200490 - 0x10 = 0x08200480.
  CHECK(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, rt(DType::kF16), 128, 128) == 0x08200480u);
  // Mixed A F16 / B BF16: only bit 10 set among the format bits -> 0x08200410.
  CHECK(make_idesc_f16(F16Kind::kF16, rt(F16Kind::kBF16), DType::kF32, 128, 128) == 0x08200410u);
}

TEST_CASE("decode_idesc") {
  const Idesc a = decode_idesc(rt(0x08408490u));  // BF16 M128 N256, A M-major
  CHECK(a.sparse_sel == 0u);
  CHECK(a.sparse == 0u);
  CHECK(a.saturate == 0u);
  CHECK(a.d_format == 1u);
  CHECK(a.a_format == 1u);
  CHECK(a.b_format == 1u);
  CHECK(a.negate_a == 0u);
  CHECK(a.negate_b == 0u);
  CHECK(a.a_mn_major == 1u);
  CHECK(a.b_mn_major == 0u);
  CHECK(a.n == 256u);
  CHECK(a.m == 128u);
  CHECK(a.max_shift == 0u);
  CHECK(a.reserved6 == 0u);
  CHECK(a.reserved23 == 0u);
  CHECK(a.reserved29 == 0u);

  const Idesc b = decode_idesc(rt(0x08200010u));  // F16 M128 N128
  CHECK(b.a_format == 0u);
  CHECK(b.b_format == 0u);
  CHECK(b.n == 128u);
  CHECK(b.m == 128u);

  const Idesc e = decode_idesc(make_idesc_bf16_f32(rt(64u), rt(8u)));
  CHECK(e.m == 64u);
  CHECK(e.n == 8u);

  // Every other bit, one at a time: 0-1 sparse selector, 2 sparse, 3 saturate, 6, 13, 14, 16, 23,
  // 29, 30-31.
  CHECK(decode_idesc(rt(0x3u)).sparse_sel == 3u);
  CHECK(decode_idesc(rt(1u << 2)).sparse == 1u);
  CHECK(decode_idesc(rt(1u << 3)).saturate == 1u);
  CHECK(decode_idesc(rt(1u << 6)).reserved6 == 1u);
  CHECK(decode_idesc(rt(1u << 13)).negate_a == 1u);
  CHECK(decode_idesc(rt(1u << 14)).negate_b == 1u);
  CHECK(decode_idesc(rt(1u << 16)).b_mn_major == 1u);
  CHECK(decode_idesc(rt(1u << 23)).reserved23 == 1u);
  CHECK(decode_idesc(rt(1u << 23)).n == 0u);  // bit 23 is not part of N
  CHECK(decode_idesc(rt(1u << 29)).reserved29 == 1u);
  CHECK(decode_idesc(rt(1u << 29)).m == 0u);  // bit 29 is not part of M
  CHECK(decode_idesc(rt(0xC0000000u)).max_shift == 3u);
  // Largest field values: N field 0x3F -> 504, M field 0x1F -> 496 (both invalid shapes, decoded raw).
  CHECK(decode_idesc(rt(0x3Fu << 17)).n == 504u);
  CHECK(decode_idesc(rt(0x1Fu << 24)).m == 496u);
  // A/B formats are 3-bit fields: 7 << 7 and 7 << 10.
  CHECK(decode_idesc(rt(7u << 7)).a_format == 7u);
  CHECK(decode_idesc(rt(7u << 10)).b_format == 7u);
  CHECK(decode_idesc(rt(7u << 10)).a_format == 0u);
}

TEST_CASE("is_valid_f16_shape_cta1") {
  static_assert(is_valid_f16_shape_cta1(128, 128) && is_valid_f16_shape_cta1(64, 8), "");
  static_assert(!is_valid_f16_shape_cta1(256, 128), "M 256 needs cta_group::2");
  CHECK(is_valid_f16_shape_cta1(rt(64u), rt(256u)));
  CHECK(is_valid_f16_shape_cta1(rt(128u), rt(8u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(256u), rt(256u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(32u), rt(64u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(96u), rt(64u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(0u), rt(64u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(128u), rt(0u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(128u), rt(4u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(128u), rt(12u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(128u), rt(264u)));
  CHECK_FALSE(is_valid_f16_shape_cta1(rt(128u), rt(260u)));
  // Exactly 32 valid N for each valid M (8, 16, ..., 256), none for any other M below 512.
  for (uint32_t m = 0; m < 512; m += 16) {
    int count = 0;
    for (uint32_t n = 0; n < 1024; ++n) count += is_valid_f16_shape_cta1(m, n);
    CHECK(count == ((m == 64 || m == 128) ? 32 : 0));
  }
}

// ==============================================================================================
// Tensor memory
// ==============================================================================================

static_assert(tmem_addr(32, 64) == 0x00200040u, "lane 32 -> 0x20 << 16, column 64 = 0x40");

TEST_CASE("tmem_addr / lane / column / offset") {
  CHECK(tmem_addr(rt(0u), rt(0u)) == 0u);
  CHECK(tmem_addr(rt(32u), rt(64u)) == 0x00200040u);
  CHECK(tmem_addr(rt(127u), rt(511u)) == 0x007F01FFu);  // the last cell; CuTe's active mask 0x007F01FF
  CHECK(tmem_lane(rt(0x007F01FFu)) == 127u);
  CHECK(tmem_column(rt(0x007F01FFu)) == 511u);
  CHECK(tmem_lane(rt(0x00600080u)) == 96u);
  CHECK(tmem_column(rt(0x00600080u)) == 128u);
  // gau-nernst's "tcgen05 for dummies" epilogue: warp w reads lanes 32w.., column 8n: taddr + (row << 16) + col.
  CHECK(tmem_offset(rt(0u), 3 * 32, 8 * 5) == 0x00600028u);  // lane 96 = 0x60, column 40 = 0x28
  // From a non-zero base: lane 32 + 32 = 64 = 0x40, column 100 + 28 = 128 = 0x80.
  CHECK(tmem_offset(rt(tmem_addr(32, 100)), rt(32u), rt(28u)) == 0x00400080u);
  // Column crossing 255 -> 256 stays in the column field (no carry into the lane at bit 16 here).
  CHECK(tmem_offset(rt(tmem_addr(5, 255)), 0, 1) == 0x00050100u);
}

TEST_CASE("is_valid_tmem_alloc / tmem_alloc_columns") {
  static_assert(is_valid_tmem_alloc(32) && is_valid_tmem_alloc(512) && !is_valid_tmem_alloc(1024), "");
  for (uint32_t c : {32u, 64u, 128u, 256u, 512u}) CHECK(is_valid_tmem_alloc(rt(c)));
  for (uint32_t c : {0u, 1u, 16u, 31u, 33u, 48u, 96u, 192u, 384u, 511u, 513u, 1024u}) CHECK_FALSE(is_valid_tmem_alloc(rt(c)));
  // Exactly five valid sizes in 0..4096.
  int count = 0;
  for (uint32_t c = 0; c <= 4096; ++c) count += is_valid_tmem_alloc(c);
  CHECK(count == 5);

  static_assert(tmem_alloc_columns(128) == 128, "step 01: BLOCK_N = 128");
  CHECK(tmem_alloc_columns(rt(0u)) == 32u);
  CHECK(tmem_alloc_columns(rt(1u)) == 32u);
  CHECK(tmem_alloc_columns(rt(32u)) == 32u);
  CHECK(tmem_alloc_columns(rt(33u)) == 64u);
  CHECK(tmem_alloc_columns(rt(128u)) == 128u);
  CHECK(tmem_alloc_columns(rt(129u)) == 256u);
  CHECK(tmem_alloc_columns(rt(200u)) == 256u);
  CHECK(tmem_alloc_columns(rt(257u)) == 512u);
  CHECK(tmem_alloc_columns(rt(512u)) == 512u);
  // More than 512 columns cannot be allocated: the helper rounds up to 1024 and the caller must
  // reject it with is_valid_tmem_alloc.
  CHECK_FALSE(is_valid_tmem_alloc(tmem_alloc_columns(rt(513u))));
}
