// tensor_map.cpp — validation shared by both builds, and the hardware encoder.
#include "tensor_map.h"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <stdexcept>

namespace tcg {

std::string validate(const TiledMap& m) {
  auto bad = [](const std::string& param, const std::string& why) { return "tensor map " + param + ": " + why; };
  if (m.rank < 1 || m.rank > 3) return bad("rank", "must be 1..3, got " + std::to_string(m.rank));
  const auto addr = reinterpret_cast<uintptr_t>(m.base);
  if (addr == 0) return bad("globalAddress", "is null");
  if (addr % 16 != 0) return bad("globalAddress", "must be 16-byte aligned");
  const uint32_t eb = tma_dtype_bytes(m.dtype);
  for (uint32_t i = 0; i < m.rank; ++i) {
    const std::string d = "[" + std::to_string(i) + "]";
    if (m.dims[i] < 1 || m.dims[i] > (uint64_t(1) << 32))
      return bad("globalDim" + d, "must be in 1..2^32, got " + std::to_string(m.dims[i]));
    if (m.box[i] < 1 || m.box[i] > 256) return bad("boxDim" + d, "must be in 1..256, got " + std::to_string(m.box[i]));
  }
  for (uint32_t i = 0; i + 1 < m.rank; ++i) {
    const std::string d = "[" + std::to_string(i) + "]";
    if (m.strides[i] % 16 != 0)
      return bad("globalStrides" + d, "must be a multiple of 16 bytes, got " + std::to_string(m.strides[i]));
    if (m.strides[i] >= (uint64_t(1) << 40)) return bad("globalStrides" + d, "must be < 2^40");
  }
  if ((m.box[0] * eb) % 16 != 0)
    return bad("boxDim[0]", "inner box extent must be a multiple of 16 bytes, got " + std::to_string(m.box[0] * eb));
  const uint32_t span = tma_swizzle_span(m.swizzle);
  if (span != 0 && m.box[0] * eb > span)
    return bad("boxDim[0]", "with a " + std::to_string(span) + "B swizzle the inner box extent must be <= " +
                                std::to_string(span) + " bytes, got " + std::to_string(m.box[0] * eb));
  return "";
}

namespace {

CUtensorMapDataType to_cu(TmaDtype t) {
  switch (t) {
    case TmaDtype::kU8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case TmaDtype::kBF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TmaDtype::kF32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case TmaDtype::kF16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

PFN_cuTensorMapEncodeTiled_v12000 driver_encoder() {
  // Fetched at run time from the driver, so the binaries never link libcuda and still start
  // (and fall back to the emulator) on machines without a driver.
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr)
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +
                               ": cuTensorMapEncodeTiled is not available from the driver (" +
                               cudaGetErrorString(e) + ")");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

}  // namespace

CUtensorMap encode_tensor_map_gpu(const TiledMap& m) {
  const std::string err = validate(m);
  if (!err.empty()) throw std::runtime_error(err);
  CUtensorMap map{};
  cuuint64_t dims[3], strides[2];
  cuuint32_t box[3], elem_strides[3] = {1, 1, 1};
  for (uint32_t i = 0; i < m.rank; ++i) dims[i] = m.dims[i], box[i] = m.box[i];
  for (uint32_t i = 0; i + 1 < m.rank; ++i) strides[i] = m.strides[i];
  const CUresult r = driver_encoder()(&map, to_cu(m.dtype), m.rank, const_cast<void*>(m.base), dims, strides, box,
                                      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      static_cast<CUtensorMapSwizzle>(m.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +
                             ": cuTensorMapEncodeTiled failed with CUresult " + std::to_string(int(r)));
  return map;
}

}  // namespace tcg
