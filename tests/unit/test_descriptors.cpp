// test_descriptors.cpp — hand-computed checks of common/descriptors.h.
//
// Every expected value below is worked out by hand in the comment next to it, from the PTX ISA
// tables as summarised in shared/reference/tcgen05-facts.md (beside the repository) (cited as "facts §n") and from
// the descriptors a blog author ran on a real B200 (seed 001, "v1" = no swizzle, "v2" = 128B
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

using namespace tcg;

namespace {

// Pass a value through a volatile so that the compiler cannot fold the call that follows.
template <class T>
T rt(T v) {
  volatile T x = v;
  return x;
}

// ----------------------------------------------------------------------------------------------
// The ISA's TMA swizzle tables (facts §2.2), typed in by hand. Each row is one 128-byte smem line,
// each entry is the 16-byte position where logical chunk c of that line is stored. The pattern
// repeats after 8 / 4 / 2 lines.
// ----------------------------------------------------------------------------------------------
constexpr uint32_t kIsa128B[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5},
    {3, 2, 1, 0, 7, 6, 5, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
    {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
constexpr uint32_t kIsa64B[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4}};
constexpr uint32_t kIsa32B[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};

// Physical smem address of the byte at linear (unswizzled) address `a`, by table look-up.
// `a` is absolute: the table row is picked by the 128-byte line index of the address itself.
uint32_t isa_swizzle(uint32_t a, uint32_t span) {
  const uint32_t line = a / 128, chunk = (a % 128) / 16, byte = a % 16;
  uint32_t pos = chunk;
  if (span == 128) pos = kIsa128B[line % 8][chunk];
  if (span == 64) pos = kIsa64B[line % 4][chunk];
  if (span == 32) pos = kIsa32B[line % 2][chunk];
  return line * 128 + pos * 16 + byte;
}

// Where a 3-D TMA box {8 elements, rows, K/8 k-groups} of a row-major bf16 matrix (step 01, seed
// 001 "v1b") puts element (r, k): smem is the dense array [k/8][rows][8] of bf16.
uint32_t tma_core_matrix_box(uint32_t base, uint32_t rows, uint32_t r, uint32_t k) {
  return base + (k / 8) * (rows * 16) + r * 16 + (k % 8) * 2;
}

// Where a 2-D TMA box {span/2 bf16, rows} with SWIZZLE_<span>B puts element (r, k): the box is
// written densely (row r at r*span bytes), then each byte moves as the ISA table says.
uint32_t tma_swizzled_box(uint32_t base, uint32_t span, uint32_t r, uint32_t k) {
  return isa_swizzle(base + r * span + k * 2, span);
}

// Step 01 geometry (steps/step01_basic_tcgen05.cu): BLOCK_M = BLOCK_N = 128, BLOCK_K = 64 bf16.
constexpr uint32_t kRows = 128, kBlockK = 64, kMmaK = 16;
constexpr uint32_t kS01Lbo = kRows * 16;  // 128 rows x 16 B = 2048 B between k-groups
constexpr uint32_t kS01Sbo = 8 * 16;      // one 8x16 B core matrix = 128 B between 8-row groups

}  // namespace

// ==============================================================================================
// Shared-memory descriptor encoding
// ==============================================================================================

// facts §1.8: bf16 128x64 K-major SW128 tile at 0x8000, SBO 1024, LBO 16.
//   start  0x8000 >> 4 = 0x800                     -> bits 0-13  : 0x0000000000000800
//   LBO      16  >> 4 = 1      , << 16              -> 0x0000000000010000
//   SBO    1024  >> 4 = 0x40   , << 32              -> 0x0000004000000000
//   fixed 0b001 at bit 46                            -> 0x0000400000000000
//   layout 2 (128B) << 61                            -> 0x4000000000000000
//   sum                                              =  0x4000404000010800
static_assert(make_smem_desc(0x8000, 16, 1024, Layout::kSwizzle128B) == 0x4000404000010800ull, "facts 1.8");
// facts §1.8, tcgen05.cp scale-factor source: 0x9000, no swizzle, SBO 128, LBO 0.
//   0x9000 >> 4 = 0x900; LBO 0; SBO 128 >> 4 = 8 -> 0x800000000; bit 46 -> 0x400000000000
//   sum = 0x0000400800000900
static_assert(make_smem_desc(0x9000, 0, 128, Layout::kNone) == 0x0000400800000900ull, "facts 1.8 SF");

TEST_CASE("make_smem_desc: fact sheet worked examples (§1.8)") {
  CHECK(make_smem_desc(rt(0x8000u), rt(16u), rt(1024u), Layout::kSwizzle128B) == 0x4000404000010800ull);
  CHECK(make_smem_desc(rt(0x9000u), rt(0u), rt(128u), Layout::kNone) == 0x0000400800000900ull);
}

// Seed 001 "v1" (no swizzle) for step 01's tile, A at smem address 0x1000, B right after it at
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

TEST_CASE("make_smem_desc: seed 001 v1 (no swizzle) for the step 01 tile") {
  const uint32_t a = rt(0x1000u), b = rt(0x5000u);
  CHECK(make_smem_desc(a, rt(kS01Lbo), rt(kS01Sbo), Layout::kNone) == 0x0000400800800100ull);
  CHECK(make_smem_desc(b, rt(kS01Lbo), rt(kS01Sbo), Layout::kNone) == 0x0000400800800500ull);
  // The four k-steps of one BLOCK_K = 64 tile: start fields 0x100, 0x200, 0x300, 0x400.
  const uint64_t expect[4] = {0x0000400800800100ull, 0x0000400800800200ull, 0x0000400800800300ull,
                              0x0000400800800400ull};
  for (uint32_t s = 0; s < kBlockK / kMmaK; ++s)
    CHECK(make_smem_desc(a + s * 2 * kS01Lbo, kS01Lbo, kS01Sbo, Layout::kNone) == expect[s]);
}

// Seed 001 "v2" (128B swizzle): SBO = 8*128 = 1024, LBO left 0, layout 2 at bits 61-63, tile at
// 0x1000 (1024-aligned).
//   start 0x1000>>4 = 0x100; SBO 1024>>4 = 0x40 -> 0x4000000000; bit 46; 2<<61 = 0x4000000000000000
//   = 0x4000404000000100. With LBO = 16 as CUTLASS writes it: + (1 << 16) = 0x4000404000010100.
// K16 step j adds 32 bytes to the start address: field += 32 >> 4 = 2 per step.
static_assert(make_smem_desc(0x1000, 0, 1024, Layout::kSwizzle128B) == 0x4000404000000100ull, "seed v2");
static_assert(make_smem_desc(0x1000, 16, 1024, Layout::kSwizzle128B) == 0x4000404000010100ull, "v2, LBO 16");
static_assert(make_smem_desc(0x1000 + 32, 0, 1024, Layout::kSwizzle128B) == 0x4000404000000102ull, "v2 +32");
static_assert(make_smem_desc(0x1000 + 96, 0, 1024, Layout::kSwizzle128B) == 0x4000404000000106ull, "v2 +96");

TEST_CASE("make_smem_desc: seed 001 v2 (128B swizzle) and the +32-byte K advance") {
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
  // The seed's v2 lambda writes the fields by hand; same value as ours: start enc | SBO enc << 32
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

// facts §3.4, kind::f16 rows.
//   BF16 x BF16 -> F32, M128 N256, K-major:
//     D F32 = 1 << 4 = 0x10; A BF16 = 1 << 7 = 0x80; B BF16 = 1 << 10 = 0x400;
//     N >> 3 = 32 << 17 = 0x400000; M >> 4 = 8 << 24 = 0x08000000   -> 0x08400490
//   F16 x F16 -> F32, M128 N128: 0x10 | (16 << 17 = 0x200000) | 0x08000000 -> 0x08200010
//   BF16, M256 N256 (cta_group::2): 16 << 24 = 0x10000000 -> 0x10400490
//   BF16, M128 N256, A M-major: + 1 << 15 = 0x8000 -> 0x08408490
// Our step 01: BF16, M128 N128: 0x490 | 0x200000 | 0x08000000 -> 0x08200490
// Smallest cta_group::1 shape, M64 N8: 0x490 | (1 << 17 = 0x20000) | (4 << 24 = 0x04000000) -> 0x04020490
static_assert(make_idesc_bf16_f32(128, 256) == 0x08400490u, "facts 3.4 row 1");
static_assert(make_idesc_f16(F16Kind::kF16, F16Kind::kF16, DType::kF32, 128, 128) == 0x08200010u, "row 2");
static_assert(make_idesc_bf16_f32(256, 256) == 0x10400490u, "row 3");
static_assert(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, 128, 256, true) == 0x08408490u, "row 4");
static_assert(make_idesc_bf16_f32(128, 128) == 0x08200490u, "step 01");
static_assert(make_idesc_bf16_f32(64, 8) == 0x04020490u, "M64 N8");

TEST_CASE("make_idesc: fact sheet §3.4 kind::f16 rows, step 01, edges") {
  CHECK(make_idesc_bf16_f32(rt(128u), rt(256u)) == 0x08400490u);
  CHECK(make_idesc_f16(F16Kind::kF16, F16Kind::kF16, DType::kF32, rt(128u), rt(128u)) == 0x08200010u);
  CHECK(make_idesc_bf16_f32(rt(256u), rt(256u)) == 0x10400490u);
  CHECK(make_idesc_f16(F16Kind::kBF16, F16Kind::kBF16, DType::kF32, rt(128u), rt(256u), rt(true)) == 0x08408490u);
  CHECK(make_idesc_bf16_f32(rt(128u), rt(128u)) == 0x08200490u);
  CHECK(make_idesc_bf16_f32(rt(64u), rt(8u)) == 0x04020490u);
  // The seed's hand-written idesc for BLOCK_M = BLOCK_N = 128.
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
  // Seed 001 epilogue: warp w reads lanes 32w.., column 8n: taddr + (row << 16) + col.
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

// ==============================================================================================
// Swizzle
// ==============================================================================================

TEST_CASE("swizzle_addr matches the ISA tables (facts §2.2)") {
  // 128B: chunk c of 128-byte line r (r = 0..7) lands at c ^ r, e.g. line 5 chunk 2 -> 7:
  //   address 5*128 + 2*16 + 3 = 675 -> 5*128 + 7*16 + 3 = 755.
  static_assert(swizzle_addr(675, 128) == 755, "");
  CHECK(swizzle_addr(rt(675u), 128) == 755u);
  // 64B: line 6 (6 % 4 = 2), chunk 5 -> 5 ^ 2 = 7: 6*128 + 5*16 = 848 -> 6*128 + 7*16 = 880.
  CHECK(swizzle_addr(rt(848u), 64) == 880u);
  // 32B: odd line 3, chunk 6 -> 7: 3*128 + 96 = 480 -> 3*128 + 112 = 496; even line 4 unchanged.
  CHECK(swizzle_addr(rt(480u), 32) == 496u);
  CHECK(swizzle_addr(rt(4u * 128 + 96), 32) == 4u * 128 + 96);

  // Every byte of two repeats of each pattern (2048 bytes), at a few 1024-aligned bases.
  for (uint32_t span : {32u, 64u, 128u}) {
    for (uint32_t base : {0u, 0x400u, 0x8000u, 0x3F800u}) {
      int bad = 0;
      for (uint32_t off = 0; off < 2048; ++off)
        bad += swizzle_addr(base + off, span) != isa_swizzle(base + off, span);
      CHECK_MESSAGE(bad == 0, "span ", span, " base ", base);
    }
  }
  // The swizzle is a permutation of each 1024-byte block, and an involution.
  for (uint32_t span : {32u, 64u, 128u}) {
    std::set<uint32_t> seen;
    for (uint32_t a = 0x8000; a < 0x8400; ++a) {
      const uint32_t s = swizzle_addr(a, span);
      seen.insert(s);
      CHECK(swizzle_addr(s, span) == a);
    }
    CHECK(seen.size() == 1024u);
    CHECK(*seen.begin() == 0x8000u);
    CHECK(*seen.rbegin() == 0x83FFu);
  }
}

TEST_CASE("swizzle_addr: identity for span 16 and 0") {
  // Addresses with bits 7-9 set, which any real swizzle would change.
  for (uint32_t a : {0x3F0u, 0x3FFu, 0x1390u, 0x8380u, 0x12345u}) {
    CHECK(swizzle_addr(rt(a), 16) == a);
    CHECK(swizzle_addr(rt(a), 0) == a);
    CHECK(swizzle_addr(rt(a), 128) != a);  // so the two checks above are not trivially true
  }
  static_assert(swizzle_addr(0x3F0, 16) == 0x3F0 && swizzle_addr(0x3F0, 128) == 0x380, "0x3F0: line 7, chunk 7 -> chunk 0: 7*128 = 0x380");
}

// ==============================================================================================
// K-major operand addressing
// ==============================================================================================

TEST_CASE("kmajor_operand_addr: step 01 no-swizzle layout = the [k/8][r][k%8] TMA box") {
  // Hand check: row 9, k 10 (k-group 1, k % 8 = 2) of the tile at 0x1000:
  //   TMA: 0x1000 + 1*2048 + 9*16 + 2*2 = 0x1000 + 2196
  //   MMA step 0, k byte 20: start + (9/8)*SBO + (20/16)*LBO + (9%8)*16 + 20%16
  //                        = 0x1000 + 128 + 2048 + 16 + 4 = 0x1000 + 2196
  const uint32_t base = rt(0x1000u);
  CHECK(tma_core_matrix_box(base, kRows, 9, 10) == 0x1000u + 2196);
  CHECK(kmajor_operand_addr(decode_smem_desc(make_smem_desc(base, kS01Lbo, kS01Sbo, Layout::kNone)), 9, 20) ==
        0x1000u + 2196);

  // Every byte an MMA reads, for all 4 k-steps of a BLOCK_K = 64 tile, A (at 0x1000) and B (0x5000).
  for (uint32_t tile : {0x1000u, 0x5000u}) {
    int bad = 0;
    for (uint32_t s = 0; s < kBlockK / kMmaK; ++s) {
      const SmemDesc d = decode_smem_desc(make_smem_desc(tile + s * 2 * kS01Lbo, kS01Lbo, kS01Sbo, Layout::kNone));
      for (uint32_t r = 0; r < kRows; ++r)
        for (uint32_t b = 0; b < 32; ++b)
          bad += kmajor_operand_addr(d, r, b) != tma_core_matrix_box(tile, kRows, r, s * kMmaK + b / 2) + b % 2;
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("kmajor_operand_addr: 128B swizzle = the TMA SWIZZLE_128B box of 64 bf16 x 128 rows") {
  // Hand check: row 3, k 0 with the tile at 0x8000. TMA writes row 3 at 0x8000 + 384 = 0x8180,
  // chunk 0 moves to chunk 0 ^ 3 = 3: 0x8180 + 48 = 0x81B0.
  const uint32_t base = rt(0x8000u);
  CHECK(tma_swizzled_box(base, 128, 3, 0) == 0x81B0u);
  CHECK(kmajor_operand_addr(decode_smem_desc(make_smem_desc(base, 16, 1024, Layout::kSwizzle128B)), 3, 0) == 0x81B0u);
  // Row 10 (group 1, line 2), k 40 (byte 80, chunk 5 -> 5 ^ 2 = 7): 0x8000 + 1280 + 112 = 0x8570.
  CHECK(tma_swizzled_box(base, 128, 10, 40) == 0x8570u);

  // Whole tile: row r, k-byte b (0..127) through a descriptor at the tile start vs the TMA box.
  // (Reading bytes 32..127 of a row through one descriptor goes past the 32 bytes of one MMA,
  // but the address function is the same; the k-step test below uses the real +32 descriptors.)
  const SmemDesc d = decode_smem_desc(make_smem_desc(base, 16, 1024, Layout::kSwizzle128B));
  int bad = 0;
  for (uint32_t r = 0; r < kRows; ++r)
    for (uint32_t b = 0; b < 128; b += 2) bad += kmajor_operand_addr(d, r, b) != tma_swizzled_box(base, 128, r, b / 2);
  CHECK(bad == 0);
}

TEST_CASE("kmajor_operand_addr: +32 bytes inside the SW128 atom selects K chunks 2j, 2j+1 (facts §1.6)") {
  for (uint32_t base : {0x0u, 0x8000u, 0x1C400u}) {  // 1024-aligned tiles
    int bad = 0;
    for (uint32_t j = 0; j < 4; ++j) {
      const SmemDesc d = decode_smem_desc(make_smem_desc(base + 32 * j, 16, 1024, Layout::kSwizzle128B));
      for (uint32_t r = 0; r < kRows; ++r)
        for (uint32_t c = 0; c < 2; ++c)
          for (uint32_t e = 0; e < 8; ++e)  // element e of 16-byte chunk c of this MMA
            bad += kmajor_operand_addr(d, r, 16 * c + 2 * e) != tma_swizzled_box(base, 128, r, 8 * (2 * j + c) + e);
    }
    CHECK_MESSAGE(bad == 0, "base ", base);
  }
  // Concretely for row 1, j = 1: logical chunk 2 sits at chunk 2 ^ 1 = 3 of row 1, i.e. 128 + 48.
  const SmemDesc d1 = decode_smem_desc(make_smem_desc(rt(0x8000u) + 32, 16, 1024, Layout::kSwizzle128B));
  CHECK(kmajor_operand_addr(d1, 1, 0) == 0x8000u + 128 + 48);
  // The unswizzled reading of that descriptor would be 0x8000 + 128 + 32: not where the data is.
  CHECK(kmajor_operand_addr(d1, 1, 0) != 0x8000u + 128 + 32);
}

TEST_CASE("kmajor_operand_addr: 64B and 32B swizzle = the TMA boxes of 32 / 16 bf16 per row") {
  // SW64: 128 rows of 64 B, SBO = 8 * 64 = 512; each MMA (32 B) advances the start by 32 B.
  // SW32: 128 rows of 32 B, SBO = 8 * 32 = 256; one MMA covers the whole row.
  struct Cfg {
    Layout l;
    uint32_t span, sbo;
  };
  for (const Cfg& c : {Cfg{Layout::kSwizzle64B, 64, 512}, Cfg{Layout::kSwizzle32B, 32, 256}}) {
    const uint32_t base = 0x4000;
    int bad = 0;
    for (uint32_t j = 0; j < c.span / 32; ++j) {
      const SmemDesc d = decode_smem_desc(make_smem_desc(base + 32 * j, 16, c.sbo, c.l));
      for (uint32_t r = 0; r < kRows; ++r)
        for (uint32_t b = 0; b < 32; b += 2) bad += kmajor_operand_addr(d, r, b) != tma_swizzled_box(base, c.span, r, 16 * j + b / 2);
    }
    CHECK_MESSAGE(bad == 0, "span ", c.span);
  }
  // Hand check SW64: row 3 (line 1, second half), k 0: linear 0x4000 + 192 -> line 1, chunk 4 ->
  // 4 ^ 1 = 5: 0x4000 + 128 + 80 = 0x40D0.
  CHECK(kmajor_operand_addr(decode_smem_desc(make_smem_desc(0x4000, 16, 512, Layout::kSwizzle64B)), rt(3u), 0) ==
        0x40D0u);
}

TEST_CASE("kmajor_operand_addr: seed 001's failed first descriptor misreads a row-major tile") {
  // Attempt 0: LBO = 16, SBO = 8 * BLOCK_K * 2 = 1024 over a plain row-major 128 x 64 bf16 tile
  // (row r at r * 128 bytes). The MMA reads row r, k byte b at
  //   start + (r/8)*1024 + (b/16)*16 + (r%8)*16 + b%16 = start + (r/8)*1024 + (r%8)*16 + b,
  // but the data is at start + r*128 + b = start + (r/8)*1024 + (r%8)*128 + b: equal only for r%8 == 0.
  const uint32_t base = rt(0x1000u);
  const SmemDesc d = decode_smem_desc(make_smem_desc(base, 16, 8 * kBlockK * 2, Layout::kNone));
  for (uint32_t r = 0; r < kRows; ++r) {
    int differ = 0;
    for (uint32_t b = 0; b < 32; ++b) differ += kmajor_operand_addr(d, r, b) != base + r * 128 + b;
    if (r % 8 == 0)
      CHECK_MESSAGE(differ == 0, "row ", r);
    else
      CHECK_MESSAGE(differ == 32, "row ", r);
  }
  // Row 1, k 0 is read from base + 16, which holds row 0's element k = 8.
  CHECK(kmajor_operand_addr(d, 1, 0) == base + 0 * 128 + 8 * 2);
}

TEST_CASE("kmajor_operand_addr: ISA K-major tf32 examples (facts §1.4)") {
  // No swizzle, tf32 ((8,2),(4,4)):((4,32),(1,64)) elements -> LBO 256 B, SBO 128 B.
  // Element (r, k): 4 B * ((r%8)*4 + (r/8)*32 + (k%4) + (k/4)*64). One tf32 MMA reads K = 8 (32 B),
  // so k 8..15 belong to the second MMA, whose start is 2 * LBO = 512 B further.
  const uint32_t base = 0x2000;
  int bad = 0;
  for (uint32_t r = 0; r < 16; ++r)
    for (uint32_t k = 0; k < 16; ++k) {
      const SmemDesc d = decode_smem_desc(make_smem_desc(base + (k / 8) * 512, 256, 128, Layout::kNone));
      bad += kmajor_operand_addr(d, r, (k % 8) * 4) != base + 4 * ((r % 8) * 4 + (r / 8) * 32 + (k % 4) + (k / 4) * 64);
    }
  CHECK(bad == 0);
  // 32B swizzle, tf32 ((8,2),(4,4)):((8,64),(1,4)) -> SBO 256 B. Its K extent (16 tf32 = 64 B) is
  // wider than the 32-byte row, so only the first 8 elements (one MMA, 32 B) are a consistent
  // layout; check those: 4 B * ((r%8)*8 + (r/8)*64 + k), then the 32B swizzle.
  bad = 0;
  const SmemDesc d32 = decode_smem_desc(make_smem_desc(base, 16, 256, Layout::kSwizzle32B));
  for (uint32_t r = 0; r < 16; ++r)
    for (uint32_t k = 0; k < 8; ++k)
      bad += kmajor_operand_addr(d32, r, k * 4) != isa_swizzle(base + 4 * ((r % 8) * 8 + (r / 8) * 64 + k), 32);
  CHECK(bad == 0);
}

// ==============================================================================================
// MN-major operand addressing
// ==============================================================================================

TEST_CASE("mnmajor_operand_addr: ISA MN-major bf16 examples (facts §1.4)") {
  const uint32_t base = 0x8000;  // 1024-aligned, so the swizzle phase is 0
  // No swizzle: ((8,1,2),(8,2)):((1,8,64),(8,128)) elements -> LBO 256 B, SBO 128 B.
  //   element (mn, k) at 2 * ((mn%8) + (mn/8)*64 + (k%8)*8 + (k/8)*128)
  //   hand check: mn 9, k 10 -> 2 * (1 + 64 + 16 + 128) = 418
  {
    const SmemDesc d = decode_smem_desc(make_smem_desc(base, 256, 128, Layout::kNone));
    CHECK(mnmajor_operand_addr(d, rt(9u), rt(10u), 2) == base + 418);
    int bad = 0;
    for (uint32_t mn = 0; mn < 16; ++mn)
      for (uint32_t k = 0; k < 16; ++k)
        bad += mnmajor_operand_addr(d, mn, k, 2) != base + 2 * ((mn % 8) + (mn / 8) * 64 + (k % 8) * 8 + (k / 8) * 128);
    CHECK(bad == 0);
  }
  // 32B: ((8,2,2),(8,2)):((1,8,128),(16,256)) -> LBO 256 B, SBO 512 B, then Swizzle<1,4,3>.
  //   element (mn, k) at 2 * ((mn%16) + (mn/16)*128 + (k%8)*16 + (k/8)*256)
  {
    const SmemDesc d = decode_smem_desc(make_smem_desc(base, 256, 512, Layout::kSwizzle32B));
    int bad = 0;
    for (uint32_t mn = 0; mn < 32; ++mn)
      for (uint32_t k = 0; k < 16; ++k)
        bad += mnmajor_operand_addr(d, mn, k, 2) !=
               isa_swizzle(base + 2 * ((mn % 16) + (mn / 16) * 128 + (k % 8) * 16 + (k / 8) * 256), 32);
    CHECK(bad == 0);
    // Hand check: mn 8, k 1 -> linear base + 2*(8 + 16) = base + 48: line 0 -> not swizzled, 48.
    //             mn 8, k 5 -> linear base + 2*(8 + 80) = base + 176: line 1, chunk 3 -> 2: base + 160.
    CHECK(mnmajor_operand_addr(d, 8, rt(1u), 2) == base + 48);
    CHECK(mnmajor_operand_addr(d, 8, rt(5u), 2) == base + 160);
  }
  // 64B: ((8,4,2),(8,2)):((1,8,256),(32,512)) -> LBO 512 B, SBO 1024 B, then Swizzle<2,4,3>.
  //   element (mn, k) at 2 * ((mn%32) + (mn/32)*256 + (k%8)*32 + (k/8)*512)
  {
    const SmemDesc d = decode_smem_desc(make_smem_desc(base, 512, 1024, Layout::kSwizzle64B));
    int bad = 0;
    for (uint32_t mn = 0; mn < 64; ++mn)
      for (uint32_t k = 0; k < 16; ++k)
        bad += mnmajor_operand_addr(d, mn, k, 2) !=
               isa_swizzle(base + 2 * ((mn % 32) + (mn / 32) * 256 + (k % 8) * 32 + (k / 8) * 512), 64);
    CHECK(bad == 0);
  }
}

TEST_CASE("mnmajor_operand_addr: CuTe MN-major SW128 bf16 128x64 tile (facts §1.8)") {
  // tile_to_shape(Layout_MN_SW128_Atom<bf16>, (128,64)) = ((64,2),(8,8)):((1,512),(64,1024))
  // elements, Swizzle<3,4,3> on top -> LBO = 512 el = 1024 B (next M atom), SBO = 1024 el = 2048 B
  // (next 8 K rows).
  const uint32_t base = 0x10000;
  const SmemDesc d = decode_smem_desc(make_smem_desc(base, 1024, 2048, Layout::kSwizzle128B));
  int bad = 0;
  for (uint32_t mn = 0; mn < 128; ++mn)
    for (uint32_t k = 0; k < 64; ++k)
      bad += mnmajor_operand_addr(d, mn, k, 2) !=
             isa_swizzle(base + 2 * ((mn % 64) + (mn / 64) * 512 + (k % 8) * 64 + (k / 8) * 1024), 128);
  CHECK(bad == 0);
  // Hand check: mn 70 (atom 1, byte 12 -> chunk 0), k 3 (line 3): linear base + 1024 + 3*128 + 12,
  // chunk 0 -> 0 ^ 3 = 3: base + 1024 + 384 + 48 + 12 = base + 1468.
  CHECK(mnmajor_operand_addr(d, rt(70u), rt(3u), 2) == base + 1468);
}
