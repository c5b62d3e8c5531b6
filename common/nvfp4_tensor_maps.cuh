// nvfp4_tensor_maps.cuh — the tensor maps of the NVFP4 split-K steps (10-13) and of step 15, made once here:
//  * an FP4 operand (A or B), K-major: rows of K/2 bytes, read in boxes of one 128-byte swizzle
//    row of K (256 FP4 values: one k-tile) x box_rows rows, 128B-swizzled; 2-D (one k-tile a box)
//    or 3-D (k_tiles_per_box k-tiles a box, landing as that many 2-D boxes one after the other);
//  * C as the TMA store sees it: row-major M x N FP16, one box = one box_rows x box_cols staging
//    buffer, 128B-swizzled.
// Host code of either build, per build like make_tensor_map (kernel_common.cuh).
#pragma once
#include "kernel_common.cuh"
#include "nvfp4_layout.h"

namespace tcg {
inline namespace TCG_ABI_NS {

constexpr uint32_t kFp4KTileBytes = 128;  // one 128B swizzle row: 256 FP4 values of K, a k-tile

inline CUtensorMap make_fp4_kmajor_sw128_map(const uint8_t* base, int rows, int k, int box_rows) {
  TiledMap t;
  t.rank = 2;
  t.dtype = TmaDtype::kU8;
  t.base = base;
  t.dims[0] = uint64_t(k) / 2;
  t.dims[1] = uint64_t(rows);
  t.strides[0] = uint64_t(k) / 2;
  t.box[0] = kFp4KTileBytes;
  t.box[1] = uint32_t(box_rows);
  t.swizzle = TmaSwizzle::k128B;
  return make_tensor_map(t);
}

// The same bytes as (128 B within a k-tile) x rows x (whole k-tile): the third dimension steps
// 128 bytes along K. Only whole k-tiles are in it (the tail k-tile would reach past the row).
// Null (unused) when K has no whole k-tile.
inline CUtensorMap make_fp4_kmajor_sw128_map_3d(const uint8_t* base, int rows, int k, int box_rows,
                                                int k_tiles_per_box) {
  const int whole = k / 2 / int(kFp4KTileBytes);
  if (whole == 0) return CUtensorMap{};
  TiledMap t;
  t.rank = 3;
  t.dtype = TmaDtype::kU8;
  t.base = base;
  t.dims[0] = kFp4KTileBytes;
  t.dims[1] = uint64_t(rows);
  t.dims[2] = uint64_t(whole);
  t.strides[0] = uint64_t(k) / 2;  // next row
  t.strides[1] = kFp4KTileBytes;   // next k-tile
  t.box[0] = kFp4KTileBytes;
  t.box[1] = uint32_t(box_rows);
  t.box[2] = uint32_t(k_tiles_per_box);
  t.swizzle = TmaSwizzle::k128B;
  return make_tensor_map(t);
}

// An operand's scale-factor atoms (512 bytes each, row block rb and k-step ks at atom
// rb * (K / 64) + ks, nvfp4_layout.h) as a tensor map, for the 2-SM form of step 15, whose TMA must
// signal the pair leader's barrier (.cta_group::2 exists for tensor copies only): a 2-D array of
// half-atom rows of 256 bytes, no swizzle (a box dimension holds at most 256 elements); a box is
// `atoms_per_box` whole atoms, landing contiguous as the bulk copy would put them.
inline CUtensorMap make_sf_atoms_map(const uint8_t* base, int rows, int k, int atoms_per_box) {
  TiledMap t;
  t.rank = 2;
  t.dtype = TmaDtype::kU8;
  t.base = base;
  t.dims[0] = kSfAtomBytes / 2;
  t.dims[1] = uint64_t((rows + int(kSfAtomRows) - 1) / int(kSfAtomRows)) * uint64_t(k / 64) * 2;
  t.strides[0] = kSfAtomBytes / 2;
  t.box[0] = kSfAtomBytes / 2;
  t.box[1] = uint32_t(2 * atoms_per_box);
  return make_tensor_map(t);
}

inline CUtensorMap make_f16_c_store_map(__half* c, int m, int n, int box_cols, int box_rows) {
  TiledMap t;
  t.rank = 2;
  t.dtype = TmaDtype::kF16;
  t.base = c;
  t.dims[0] = uint64_t(n);
  t.dims[1] = uint64_t(m);
  t.strides[0] = uint64_t(n) * 2;  // a multiple of 16 bytes: N % 8 == 0
  t.box[0] = uint32_t(box_cols);
  t.box[1] = uint32_t(box_rows);
  t.swizzle = TmaSwizzle::k128B;
  return make_tensor_map(t);
}

// Step 15's ten maps in one kernel parameter (__grid_constant__: the TMA reads them where they
// are passed): A, B1, B2 as 2-D boxes of one k-tile (partial stages) and 3-D boxes of
// k_tiles_per_box k-tiles; the pair's scale atoms (null for one-CTA plans, which bulk-copy them);
// C for the TMA store (null where tma_c is false). b_rows: the rows of B1 / B2 one CTA loads.
struct DualGemmMaps {
  CUtensorMap a, b1, b2, a3, b1_3d, b2_3d, sfa, sfb1, sfb2, c;
};
inline DualGemmMaps make_dual_gemm_maps(const uint8_t* a, const uint8_t* b1, const uint8_t* b2, const uint8_t* sfa,
                                        const uint8_t* sfb1, const uint8_t* sfb2, __half* c, int m, int n, int k,
                                        int block_m, int b_rows, int k_tiles_per_box, bool pair, int sf_atoms_per_box,
                                        bool tma_c, int c_box_cols, int c_box_rows) {
  DualGemmMaps d;
  d.a = make_fp4_kmajor_sw128_map(a, m, k, block_m);
  d.b1 = make_fp4_kmajor_sw128_map(b1, n, k, b_rows);
  d.b2 = make_fp4_kmajor_sw128_map(b2, n, k, b_rows);
  d.a3 = make_fp4_kmajor_sw128_map_3d(a, m, k, block_m, k_tiles_per_box);
  d.b1_3d = make_fp4_kmajor_sw128_map_3d(b1, n, k, b_rows, k_tiles_per_box);
  d.b2_3d = make_fp4_kmajor_sw128_map_3d(b2, n, k, b_rows, k_tiles_per_box);
  d.sfa = pair ? make_sf_atoms_map(sfa, m, k, sf_atoms_per_box) : CUtensorMap{};
  d.sfb1 = pair ? make_sf_atoms_map(sfb1, n, k, sf_atoms_per_box) : CUtensorMap{};
  d.sfb2 = pair ? make_sf_atoms_map(sfb2, n, k, sf_atoms_per_box) : CUtensorMap{};
  d.c = tma_c ? make_f16_c_store_map(c, m, n, c_box_cols, c_box_rows) : CUtensorMap{};
  return d;
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
