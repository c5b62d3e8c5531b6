// nvfp4_layout.h — where the bytes of an NVFP4 operand live in global memory (common/step.h,
// Nvfp4Operands): the packed E2M1 data and the UE4M3 block scales in the 128x4 "blocked" layout
// that cuBLASLt and CUTLASS use (CUTLASS cutlass/detail/sm100_blockscaled_layout.hpp; cuBLAS's block scaling factors layout). One definition, constexpr __host__ __device__, for
// the kernel (TMA box offsets), the harness (quantizer, reference), the emulator's tests and the
// pictures, so that none of them can drift from the others.
//
// The scale layout. A row r of an M x K operand has K/16 scales, one per 16 consecutive K elements
// (scale column kb covers K elements [16kb, 16kb + 16)). Rows are grouped by 128 and scale columns
// by 4; each 128-row x 4-column group is one 512-byte "atom", and atoms are stored K-first (all
// atoms of rows 0-127, then those of rows 128-255, ...). Inside an atom, row r and column kb sit at
//     16 * (r % 32) + 4 * ((r % 128) / 32) + kb % 4
// i.e. 32 lines of 16 bytes, line r%32 holding rows r%32, r%32+32, r%32+64, r%32+96, four scales
// each. That is exactly the 32 x 16-byte source one tcgen05.cp.32x128b.warpx4 copies to TMEM: TMEM
// lane r%32 (replicated to the 4 lane quarters), column (r%128)/32, byte kb%4 (PTX ISA §9.7.16.9.2; CUTLASS tmem_sf_frg in cute/atom/mma_traits_sm100_frag.hpp) —
// which is why the layout looks the way it does. The number of rows is padded to a multiple of
// 128 and the number of scale columns to a multiple of 4, so every atom exists in full; the
// padding bytes are never used for a valid output element but are read by whole-atom copies.
//
// Sizes: offsets fit 32 bits for every shape the harness accepts (A, B and C below 2^31 elements,
// so a scale array is below 2^27 + 3 * 2^24 + 127 * 2^20 bytes < 2^29), which is what a kernel
// wants; the host code passes int64 values through the same functions after its own checks.
#pragma once
#include <cstdint>

#include "common/descriptors.h"  // TCG_HD, kNvfp4BlockSize, kMxf4K, e2m1_to_float, ue4m3_to_float

namespace tcg {

constexpr uint32_t kSfAtomRows = 128;    // rows of A (or B) per scale atom
constexpr uint32_t kSfAtomColumns = 4;   // scale columns per atom: 64 K elements, one MMA's K
constexpr uint32_t kSfAtomBytes = 512;   // kSfAtomRows * kSfAtomColumns, one byte per scale

TCG_HD constexpr uint32_t nvfp4_round_up(uint32_t x, uint32_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

// Bytes of one packed row of K E2M1 values (two per byte; K is even).
TCG_HD constexpr uint32_t fp4_row_bytes(uint32_t K) { return K / 2; }

// Scale columns of a row of K elements (one per 16, the last one covering a partial block if K is
// not a multiple of 16), and the padded counts the blocked layout stores.
TCG_HD constexpr uint32_t sf_columns(uint32_t K) {
  return (K + kNvfp4BlockSize - 1) / kNvfp4BlockSize;
}
TCG_HD constexpr uint32_t sf_padded_columns(uint32_t K) {
  return nvfp4_round_up(sf_columns(K), kSfAtomColumns);
}
TCG_HD constexpr uint32_t sf_padded_rows(uint32_t rows) {
  return nvfp4_round_up(rows, kSfAtomRows);
}
// Bytes of the whole scale array of a rows x K operand (padding included).
TCG_HD constexpr uint32_t sf_bytes(uint32_t rows, uint32_t K) {
  return sf_padded_rows(rows) * sf_padded_columns(K);
}

// Byte offset of the 512-byte atom holding rows [128 row_block, +128) and scale columns
// [4 kb_block, +4): atoms run K-first. A kernel loads the scales of one 128-row tile and one
// 64-deep K step as the single atom at this offset.
TCG_HD constexpr uint32_t sf_atom_offset(uint32_t row_block, uint32_t kb_block, uint32_t K) {
  return (row_block * (sf_padded_columns(K) / kSfAtomColumns) + kb_block) * kSfAtomBytes;
}

// Byte offset of the scale of row `row`, scale column `kb` (K elements [16kb, 16kb + 16)), in a
// scale array for operands with K columns.
TCG_HD constexpr uint32_t sf_blocked_offset(uint32_t row, uint32_t kb, uint32_t K) {
  return sf_atom_offset(row / kSfAtomRows, kb / kSfAtomColumns, K) + 16u * (row % 32u) +
         4u * ((row % kSfAtomRows) / 32u) + kb % kSfAtomColumns;
}

// The E2M1 code (a nibble) of element k of a packed row: byte k/2, low nibble for even k.
TCG_HD constexpr uint8_t fp4_code(const uint8_t* row, uint32_t k) {
  return static_cast<uint8_t>((row[k / 2] >> (4 * (k % 2))) & 0xFu);
}

}  // namespace tcg
