// test_operand_addressing.cpp — hand-computed checks of the operand address maps of
// common/descriptors.h: swizzle_addr against the ISA's swizzle tables, and kmajor_operand_addr /
// mnmajor_operand_addr against where TMA puts each element and the ISA's worked examples. The
// descriptor encoders themselves are checked in test_descriptors.cpp.
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

namespace {

// ----------------------------------------------------------------------------------------------
// The ISA's TMA swizzle tables (PTX ISA §5.5.7; CUtensorMapSwizzle in cuda.h), typed in by hand. Each row is one 128-byte smem line,
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


}  // namespace

// ==============================================================================================
// Swizzle
// ==============================================================================================

TEST_CASE("swizzle_addr matches the ISA tables (PTX ISA §5.5.7; CUtensorMapSwizzle in cuda.h)") {
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

TEST_CASE("kmajor_operand_addr: +32 bytes inside the SW128 atom selects K chunks 2j, 2j+1 (CUTLASS cute/atom/mma_traits_sm100.hpp and make_umma_desc)") {
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

TEST_CASE("kmajor_operand_addr: the blog post's failed first descriptor misreads a row-major tile") {
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

TEST_CASE("kmajor_operand_addr: ISA K-major tf32 examples (PTX ISA §9.7.16.3.1-9.7.16.3.2)") {
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

TEST_CASE("mnmajor_operand_addr: ISA MN-major bf16 examples (PTX ISA §9.7.16.3.1-9.7.16.3.2)") {
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

TEST_CASE("mnmajor_operand_addr: CuTe MN-major SW128 bf16 128x64 tile (our encoding from PTX ISA Table 40; CUTLASS's `make_umma_desc` gives the same value in tests/unit/test_cutlass.cpp)") {
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
