// kernel_common.cuh — included by every step: the PTX wrappers, the encoders, tensor maps, a
// launch helper that works in both builds, and the step's main().
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#if defined(TCG_SIM)
#include "sim/cuda_sim.h"
#else
#include "cuda_check.h"
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "descriptors.h"
#include "ptx.cuh"
#include "step.h"
#include "tensor_map.h"

namespace tcg {
inline namespace TCG_ABI_NS {  // per-build: see ptx/build.h

template <class T>
__host__ __device__ constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}
template <class T>
__host__ __device__ constexpr T round_up(T a, T b) {
  return ceil_div(a, b) * b;
}

// Reinterpret the bits of a 32-bit register (as tcgen05.ld returns them) as an FP32 value.
__device__ __forceinline__ float u32_as_float(uint32_t u) {
#if defined(TCG_SIM)
  float f;
  memcpy(&f, &u, 4);
  return f;
#else
  return __uint_as_float(u);
#endif
}

// Two FP32 values rounded to BF16 (round-to-nearest-even) and packed low-first into 32 bits.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &h, 4);
  return u;
}

// One 16-byte store (st.global.v4.b32); `dst` must be 16-byte aligned: a vector access at an
// unaligned address faults on the GPU ("misaligned address"), and the emulator reports it.
__device__ __forceinline__ void store_16B(void* dst, uint4 v TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::check_vector_access(dst, 16, /*store=*/true, "16-byte store (st.v4.b32)", TCG_AT);
  memcpy(dst, &v, 16);
#else
  *reinterpret_cast<uint4*>(dst) = v;
#endif
}

// One 2-byte store (st.global.b16) of an FP16 value, `dst` 2-byte aligned. The emulator charges
// it like any global store: joined to its warp's instruction, whose lanes writing consecutive
// elements fill whole 32-byte sectors (step 11's swapped epilogue writes a column of C this way).
__device__ __forceinline__ void store_2B(__half* dst, __half v TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::check_vector_access(dst, 2, /*store=*/true, "2-byte store (st.b16)", TCG_AT);
  memcpy(dst, &v, 2);
#else
  *dst = v;
#endif
}

// Epilogue helper: converts 8 FP32 accumulators (raw register bits, as tcgen05.ld returns them)
// for C[row][col .. col+7] to BF16 and stores those inside the m x n matrix C — one 16-byte
// store when the whole chunk is inside and 16-byte aligned (C itself 16-byte aligned and
// n % 8 == 0, so every row starts on a 16-byte boundary), element by element otherwise.
__device__ __forceinline__ void store_c_chunk8(__nv_bfloat16* c, int m, int n, int row, int col,
                                               const uint32_t* r TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_regs_used(r, 8 * sizeof(uint32_t), "store_c_chunk8 (the epilogue's conversion of 8 accumulators)", TCG_AT);
#endif
  if (row >= m || col >= n) return;
  __nv_bfloat16* out = c + size_t(row) * n + col;
  if (n % 8 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0 && col + 8 <= n) {
    store_16B(out, make_uint4(pack_bf16x2(u32_as_float(r[0]), u32_as_float(r[1])),
                              pack_bf16x2(u32_as_float(r[2]), u32_as_float(r[3])),
                              pack_bf16x2(u32_as_float(r[4]), u32_as_float(r[5])),
                              pack_bf16x2(u32_as_float(r[6]), u32_as_float(r[7]))) TCG_PASS);
  } else {
    for (int i = 0; i < 8 && col + i < n; ++i) out[i] = __float2bfloat16_rn(u32_as_float(r[i]));
  }
}

// The same for FP16 C (the NVFP4 steps 07 and 10-13).
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &h, 4);
  return u;
}
__device__ __forceinline__ void store_c_chunk8_f16(__half* c, int m, int n, int row, int col,
                                                   const uint32_t* r TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_regs_used(r, 8 * sizeof(uint32_t), "store_c_chunk8_f16 (the epilogue's conversion of 8 accumulators)",
                          TCG_AT);
#endif
  if (row >= m || col >= n) return;
  __half* out = c + size_t(row) * n + col;
  if (n % 8 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0 && col + 8 <= n) {
    store_16B(out, make_uint4(pack_half2(u32_as_float(r[0]), u32_as_float(r[1])),
                              pack_half2(u32_as_float(r[2]), u32_as_float(r[3])),
                              pack_half2(u32_as_float(r[4]), u32_as_float(r[5])),
                              pack_half2(u32_as_float(r[6]), u32_as_float(r[7]))) TCG_PASS);
  } else {
    for (int i = 0; i < 8 && col + i < n; ++i) out[i] = __float2half_rn(u32_as_float(r[i]));
  }
}

// The dynamic shared-memory base rounded up to 1024 bytes: 128B-swizzled tiles must start on a
// 1024-byte boundary (their swizzle pattern repeats every 8 rows of 128 B, and both TMA and the
// MMA apply it to absolute address bits). Launches request kSmemAlignSlack extra bytes for it.
constexpr uint32_t kSmemAlignSlack = 1024;
__device__ inline uint8_t* aligned_smem_base() {
  uint8_t* p = dynamic_smem();
  const uint32_t a = smem_addr(p);
  return p + ((1024 - (a & 1023)) & 1023);
}

// Encodes `m` for this build (hardware tensor map or the emulator's). A rejected map throws with
// the caller's file:line and the offending parameter.
inline CUtensorMap make_tensor_map(const TiledMap& m, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  try {
#if defined(TCG_SIM)
    return ::tcsim::encode_tensor_map(m);
#else
    return encode_tensor_map_gpu(m);
#endif
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + e.what());
  }
}

// The number of SMs of the device a kernel will run on: from the current CUDA device on the GPU,
// the emulator's --sim-sms option (default 148, a B200) in the emulator. Persistent kernels size
// their grid by it.
inline int num_sms() {
#if defined(TCG_SIM)
  return ::tcsim::options().num_sms;
#else
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
#endif
}

struct LaunchDims {
  dim3 grid;
  dim3 block;
  uint32_t smem_bytes = 0;
  dim3 cluster = dim3(1, 1, 1);
};

// kernel<<<grid, block, smem, stream>>>(args...), with the dynamic shared-memory limit raised and
// an optional cluster shape. In the emulator build the kernel runs on the CPU.
template <class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), const LaunchDims& d, cudaStream_t stream, Args&&... args) {
#if defined(TCG_SIM)
  (void)stream;
  ::tcsim::launch(d.grid, d.block, d.cluster, d.smem_bytes, [&] { kernel(Params(args)...); });
#else
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(d.smem_bytes)));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = d.grid;
  cfg.blockDim = d.block;
  cfg.dynamicSmemBytes = d.smem_bytes;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = d.cluster.x;
  attr[0].val.clusterDim.y = d.cluster.y;
  attr[0].val.clusterDim.z = d.cluster.z;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, Params(std::forward<Args>(args))...));
  CUDA_CHECK(cudaGetLastError());
#endif
}

// How many clusters of d.cluster can be resident at once (cudaOccupancyMaxActiveClusters: a
// cluster runs inside one GPC, so this depends on how the GPU's SMs split into GPCs). The
// emulator places clusters on any SMs and has no answer: -1.
template <class... Params>
int max_active_clusters(void (*kernel)(Params...), const LaunchDims& d) {
#if defined(TCG_SIM)
  (void)kernel;
  (void)d;
  return -1;
#else
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(d.smem_bytes)));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = d.grid;
  cfg.blockDim = d.block;
  cfg.dynamicSmemBytes = d.smem_bytes;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = d.cluster.x;
  attr[0].val.clusterDim.y = d.cluster.y;
  attr[0].val.clusterDim.z = d.cluster.z;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  return clusters;
#endif
}

// For a cluster launch meant as one wave: on a GPU, says once per kernel (stderr, `who: note: ...`,
// then `hint`) when fewer clusters fit at once than the grid needs. d must be complete (its shared
// memory decides how many CTAs an SM holds). The emulator has no answer and says nothing.
template <class... Params>
void note_if_clusters_do_not_fit(void (*kernel)(Params...), const LaunchDims& d, const char* who, const char* hint) {
  static bool told = false;
  const int csize = int(d.cluster.x * d.cluster.y * d.cluster.z), ctas = int(d.grid.x * d.grid.y * d.grid.z);
  if (told || csize <= 1) return;
  told = true;
  const int fit = max_active_clusters(kernel, d);
  if (fit >= 0 && fit * csize < ctas)
    std::fprintf(stderr, "%s: note: only %d clusters of %d CTAs fit at once on this GPU, %d CTAs make %d waves (%s)\n",
                 who, fit, csize, ctas, ceil_div(ctas, (fit > 0 ? fit : 1) * csize), hint);
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg

// TCG_TRACED(kernel, trace): the instantiation of a kernel template `template <bool kTrace>` that
// a launch runs: kernel<true> (records a timeline, docs/tracing.md) when the TraceBuf `trace` is
// enabled, kernel<false> (no trace code at all) otherwise. The emulator build always runs
// kernel<false>: its annotations report to the emulator in either instantiation, and its
// timelines come from its timing model.
#if defined(TCG_SIM)
#define TCG_TRACED(kernel, trace) kernel<false>
#else
#define TCG_TRACED(kernel, trace) ((trace).enabled() ? kernel<true> : kernel<false>)
#endif

// TCG_STEP_MAIN(kSpec): the GPU build emits main(), which hands both builds' launchers to the
// harness. With -DTCG_SIM_MAIN the emulator build emits an emulator-only main() instead (used by
// the "Break it" tests, which rebuild a modified kernel without nvcc).
#if defined(TCG_SIM)
#if defined(TCG_SIM_MAIN)
#define TCG_STEP_MAIN(spec) \
  int main(int argc, char** argv) { return ::tcg::run_step(sim::spec, nullptr, &sim::launch, argc, argv); }
#else
#define TCG_STEP_MAIN(spec)
#endif
#else
// The GPU build also tells the harness which code it holds: TCG_GPU_CODE (the Makefile's -gencode
// code= targets) and, through an empty kernel compiled with the step's, the SASS version the driver
// loads on the chosen device (it prints "sm_100f code" beside the GPU, and refuses a device on
// which no code of the binary loads).
#ifndef TCG_GPU_CODE
#define TCG_GPU_CODE ""
#endif
#define TCG_STEP_MAIN(spec)                                                                       \
  namespace sim {                                                                                 \
  void launch(const ::tcg::GemmArgs&);                                                            \
  }                                                                                               \
  namespace gpu {                                                                                 \
  __global__ void loaded_code_probe() {}                                                          \
  int loaded_binary_version() {                                                                   \
    cudaFuncAttributes attr{};                                                                    \
    if (cudaFuncGetAttributes(&attr, loaded_code_probe) == cudaSuccess) return attr.binaryVersion; \
    (void)cudaGetLastError();                                                                     \
    return 0;                                                                                     \
  }                                                                                               \
  constexpr ::tcg::GpuCode kGpuCode{TCG_GPU_CODE, &loaded_binary_version};                        \
  }                                                                                               \
  int main(int argc, char** argv) {                                                               \
    return ::tcg::run_step(gpu::spec, &gpu::launch, &sim::launch, argc, argv, &gpu::kGpuCode);    \
  }
#endif
