// nvfp4_dump.cpp — print, as JSON on stdout, where step 07's NVFP4 scale factors (UE4M3, one per
// 16 K elements) live: in the 128x4 "blocked" global layout, and in TMEM after
// tcgen05.cp.32x128b.warpx4 (plots/draw_layouts.py runs it and draws docs/img/nvfp4_sf_blocked.png
// and docs/img/nvfp4_sf_tmem.png).
//
//   g++ -std=c++17 -I. plots/nvfp4_dump.cpp -o build/nvfp4_dump && build/nvfp4_dump
//
// Global offsets come from tcg::sf_blocked_offset() / tcg::sf_atom_offset() of
// common/nvfp4_layout.h, the functions the kernel (bulk-copy offsets), the harness (quantizer,
// reference) and the emulator's tests use. The shared-memory source of the copy is described by
// the descriptor step 07 passes to tcgen05_cp_32x128b_warpx4 (make_smem_desc(atom, 0, 128,
// Layout::kNone)), decoded with tcg::decode_smem_desc().
//
// The copy's TMEM mapping (byte j of source row r -> lanes r + 32w, w = 0..3, column C0 + j/4,
// byte j%4; PTX ISA §9.7.16.9.2, common/ptx.cuh) has no shared constexpr function in common/: the
// emulator (common/sim/mma_block_scaled.cpp, run_cp() and cp_row_addr()) writes it inline. It is
// restated here as cp_32x128b_warpx4_dest() / cp_row_addr(); keep them in sync with run_cp().
// plots/draw_layouts.py checks that the result is the layout the block-scaled MMA reads (the 4
// scales of row r in lane r % 32 of every quarter, column C0 + r / 32).
// Needs only the C++ library (no CUDA headers, no emulator, no harness).
#include <cstdint>
#include <cstdio>

#include "../common/nvfp4_layout.h"

namespace {

using namespace tcg;

// Example: a 256-row operand with K = 128 (8 scale columns): 2 row blocks x 2 atoms.
constexpr uint32_t kRows = 256;
constexpr uint32_t kK = 128;

// tcgen05.cp.32x128b.warpx4: 32 source rows of 16 bytes, 4 TMEM columns of 4 bytes.
constexpr uint32_t kCpRows = 32, kCpRowBytes = 16, kCpColumns = 4, kLaneQuarters = 4;

struct TmemByte {
  uint32_t lane, column, byte;  // column relative to the destination column C0
};

// Where byte j of source row r lands in lane quarter w (restates the emulator's run_cp()).
constexpr TmemByte cp_32x128b_warpx4_dest(uint32_t r, uint32_t j, uint32_t w) {
  return TmemByte{r + 32u * w, j / 4u, j % 4u};
}

// Shared-memory address of source row r (K-major, no swizzle: 8 rows of 16 B per core matrix,
// core matrices SBO apart; restates the emulator's cp_row_addr()).
constexpr uint32_t cp_row_addr(const SmemDesc& d, uint32_t r) { return d.start + (r / 8u) * d.sbo + (r % 8u) * 16u; }

static_assert(cp_32x128b_warpx4_dest(5, 13, 2).lane == 69 && cp_32x128b_warpx4_dest(5, 13, 2).column == 3 &&
              cp_32x128b_warpx4_dest(5, 13, 2).byte == 1);

}  // namespace

int main() {
  std::printf("{\n  \"nvfp4\": {\n");
  std::printf("    \"rows\": %u, \"k\": %u, \"sf_columns\": %u, \"sf_bytes\": %u, \"atom_rows\": %u, "
              "\"atom_columns\": %u, \"atom_bytes\": %u, \"block_size\": %u,\n",
              kRows, kK, sf_columns(kK), sf_bytes(kRows, kK), kSfAtomRows, kSfAtomColumns, kSfAtomBytes,
              kNvfp4BlockSize);
  // "atoms": [row block, kb block, byte offset of the atom]
  std::printf("    \"atoms\": [");
  for (uint32_t rb = 0; rb < kRows / kSfAtomRows; ++rb)
    for (uint32_t cb = 0; cb < sf_padded_columns(kK) / kSfAtomColumns; ++cb)
      std::printf("%s[%u, %u, %u]", rb || cb ? ", " : "", rb, cb, sf_atom_offset(rb, cb, kK));
  std::printf("],\n");
  // "blocked": [row, scale column kb, byte offset in the scale array]
  std::printf("    \"blocked\": [\n");
  for (uint32_t r = 0; r < kRows; ++r)
    for (uint32_t kb = 0; kb < sf_columns(kK); ++kb)
      std::printf("      [%u, %u, %u]%s\n", r, kb, sf_blocked_offset(r, kb, kK),
                  r + 1 == kRows && kb + 1 == sf_columns(kK) ? "" : ",");
  std::printf("    ],\n");
  // One atom (the first: rows 0-127, scale columns 0-3) copied to TMEM columns C0..C0+3. The
  // source descriptor is the one step 07 builds (start = the atom, LBO 0, SBO 128, no swizzle).
  const uint64_t desc = make_smem_desc(0, 0, 128, Layout::kNone);
  const SmemDesc d = decode_smem_desc(desc);
  std::printf("    \"cp_desc\": \"0x%016llx\", \"cp_sbo\": %u,\n", static_cast<unsigned long long>(desc), d.sbo);
  // "tmem": [lane, column - C0, byte, lane quarter w, source row r, source byte j, atom byte offset]
  std::printf("    \"tmem\": [\n");
  for (uint32_t w = 0; w < kLaneQuarters; ++w)
    for (uint32_t r = 0; r < kCpRows; ++r)
      for (uint32_t j = 0; j < kCpRowBytes; ++j) {
        const TmemByte t = cp_32x128b_warpx4_dest(r, j, w);
        const bool last = w + 1 == kLaneQuarters && r + 1 == kCpRows && j + 1 == kCpRowBytes;
        std::printf("      [%u, %u, %u, %u, %u, %u, %u]%s\n", t.lane, t.column, t.byte, w, r, j,
                    cp_row_addr(d, r) + j, last ? "" : ",");
      }
  std::printf("    ],\n");
  std::printf("    \"cp_columns\": %u\n", kCpColumns);
  std::printf("  }\n}\n");
  return 0;
}
