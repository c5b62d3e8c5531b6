// tensor_map.h — TMA tensor maps (CUtensorMap) for tiled loads, built the same way for the GPU
// and for the emulator.
//
// A TiledMap describes a row-major global tensor and the box one cp.async.bulk.tensor copies.
// validate() checks the constraints cuTensorMapEncodeTiled documents (cuda.h) and names the
// offending parameter; the GPU encoder (tensor_map.cpp, through cudaGetDriverEntryPointByVersion so
// no binary links libcuda) and the emulator's encoder (tcsim::encode_tensor_map in sim/sim.cpp)
// both run it first,
// so a map the hardware would refuse is refused in the emulator too.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <string>

namespace tcg {

// Same numeric values as CUtensorMapSwizzle.
enum class TmaSwizzle : uint32_t { kNone = 0, k32B = 1, k64B = 2, k128B = 3 };

inline uint32_t tma_swizzle_span(TmaSwizzle s) {
  return s == TmaSwizzle::k128B ? 128u : s == TmaSwizzle::k64B ? 64u : s == TmaSwizzle::k32B ? 32u : 0u;
}

enum class TmaDtype : uint32_t { kU8, kBF16, kF32, kF16 };

inline uint32_t tma_dtype_bytes(TmaDtype t) {
  return t == TmaDtype::kU8 ? 1u : t == TmaDtype::kBF16 || t == TmaDtype::kF16 ? 2u : 4u;
}

struct TiledMap {
  uint32_t rank = 2;             // 1..3 here (the hardware allows 5)
  TmaDtype dtype = TmaDtype::kBF16;
  const void* base = nullptr;    // global address, 16-byte aligned
  uint64_t dims[3] = {1, 1, 1};  // extent in elements; dims[0] is the contiguous one
  uint64_t strides[2] = {0, 0};  // byte stride of dims[1], dims[2] (multiples of 16)
  uint32_t box[3] = {1, 1, 1};   // box extent in elements, 1..256 each
  TmaSwizzle swizzle = TmaSwizzle::kNone;

  uint32_t box_bytes() const {
    uint32_t b = tma_dtype_bytes(dtype);
    for (uint32_t i = 0; i < rank; ++i) b *= box[i];
    return b;
  }
};

// "" if the map is acceptable, else "tensor map <param>: <constraint>".
std::string validate(const TiledMap& m);

// Encodes a hardware tensor map. Throws std::runtime_error naming the parameter on failure.
CUtensorMap encode_tensor_map_gpu(const TiledMap& m);

}  // namespace tcg
