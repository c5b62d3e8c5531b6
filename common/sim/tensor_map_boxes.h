// tensor_map_boxes.h — the emulator's view of a tensor map (copies.cpp, tma_store.cpp): the
// decoded map, the global bytes one box reads or writes, and the check that they lie in the
// allocation the map was made for. Included by internal.h.
#pragma once
#include <cuda.h>  // CUtensorMap

#include "sim.h"  // SrcLoc

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace tcsim {
namespace detail {

// The emulated tensor map: what encode_tensor_map() (copies.cpp) stores in the 128 opaque bytes
// of a CUtensorMap, and what tensormap.replace (tensormap_replace.cpp) rewrites in place. The
// hardware's layout is undocumented; this one keeps every field tensormap.replace can name.
constexpr uint32_t kMapMagic = 0x54434D41;  // "TCMA"
struct SimMap {
  uint32_t magic;
  uint32_t rank, elem_bytes, swizzle_span;
  uint64_t base;
  uint64_t dims[3];
  uint64_t strides[2];
  uint32_t box[3];
  // The fields only tensormap.replace changes (encode_tensor_map() sets the values the steps use):
  // .elemtype as the PTX ISA numbers it (Table 33 of §9.7.9.26, not CUtensorMapDataType's),
  // element strides, .interleave_layout, .swizzle_mode, .swizzle_atomicity, .fill_mode, and
  // whether a replace has touched the map since it was encoded (then every use revalidates it).
  uint32_t elemtype;
  uint32_t elem_strides[3];
  uint32_t interleave, swizzle_mode, swizzle_atomicity, fill_mode;
  uint32_t replaced;
};
static_assert(sizeof(SimMap) <= sizeof(CUtensorMap), "emulated tensor map must fit a CUtensorMap");

// tensormap_replace.cpp: what a copy through the tensor map at `map` must satisfy beyond the
// encoder's rules. A replaced map is checked again against them (and against what the emulator
// models); a map in global memory must have been acquired by the issuing thread through the
// tensormap proxy after its last generic write (PTX ISA §8.9.4, §9.7.13.4). Returns the flag the
// copy sets once it has read the map (a rewrite before then is a race), or null for a map that
// is not in global memory (a kernel parameter).
// `async_read`: the copy reads the map when it runs (a load: it sets the flag when its first box
// lands); otherwise the read is taken at the issue (a store).
std::shared_ptr<bool> tensormap_use(const CUtensorMap* map, const SimMap& m, const char* what, bool async_read = true);
// A 16-byte generic store into global memory (st_global_v4) that leaves a tensor map in its
// 128-byte-aligned block is a write of that map, under the same ordering rules as tensormap.replace.
void tensormap_generic_store(const void* dst, SrcLoc at);
void tensormap_reset();  // at each launch (launch.cpp)

// The decoded tensor map (as encode_tensor_map() stored it); fails for a map it did not make or
// of another rank.
struct TensorMapInfo {
  uint32_t rank, elem_bytes, swizzle_span;
  uint64_t base;
  uint64_t dims[3];
  uint64_t strides[2];
  uint32_t box[3];
};
TensorMapInfo decode_tensor_map(const CUtensorMap* map, int rank, const char* what);
// The global bytes a box at coordinates `c` reads or writes: the in-bounds part of each of its
// rows, (address, length). Elements outside the tensor are zero-filled (load) or dropped (store),
// never accessed. `Map`: TensorMapInfo or copies.cpp's stored map (same field names).
template <class Map>
std::vector<std::pair<uint64_t, uint32_t>> box_segments(const Map& m, const int32_t* c, int rank) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  const int64_t lo = std::max<int64_t>(c[0], 0), hi = std::min<int64_t>(int64_t(c[0]) + m.box[0], int64_t(m.dims[0]));
  const uint32_t n1 = rank > 1 ? m.box[1] : 1, n2 = rank > 2 ? m.box[2] : 1;
  for (uint32_t i2 = 0; i2 < n2 && hi > lo; ++i2)
    for (uint32_t i1 = 0; i1 < n1; ++i1) {
      const int64_t g1 = rank > 1 ? int64_t(c[1]) + i1 : 0, g2 = rank > 2 ? int64_t(c[2]) + i2 : 0;
      if ((rank > 1 && (g1 < 0 || g1 >= int64_t(m.dims[1]))) || (rank > 2 && (g2 < 0 || g2 >= int64_t(m.dims[2]))))
        continue;
      const uint64_t addr = m.base + uint64_t(lo) * m.elem_bytes + (rank > 1 ? uint64_t(g1) * m.strides[0] : 0) +
                            (rank > 2 ? uint64_t(g2) * m.strides[1] : 0);
      out.emplace_back(addr, uint32_t(hi - lo) * m.elem_bytes);
    }
  return out;
}
// Those bytes must lie in the allocation the map was made for (global_memory.cpp): a box past the
// tensor's edge is fine, a map whose dims or strides exceed its buffer is not.
void check_box_in_allocation(const std::vector<std::pair<uint64_t, uint32_t>>& rows, const char* what);

}  // namespace detail
}  // namespace tcsim
