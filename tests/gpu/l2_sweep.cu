// l2_sweep.cu — what of the L2 a streamed working set keeps (`make l2-sweep`, any GPU of compute
// capability >= 9.0): the timing model's finite L2 (docs/timing_model.md, "L2 capacity") charges
// HBM for bytes read again after LRU evicted them; this probe measures where a GPU's L2 stops
// holding a working set that every SM streams through with the TMA unit, over and over.
//
// One CTA per SM; its elected thread walks 32 KiB chunks of a buffer of W bytes with 1-D bulk
// copies (cp.async.bulk global -> shared, the TMA unit's 1-D form) into a ring of 4 slots, chunk
// i + j x gridDim.x for CTA i, so that every pass reads the whole buffer once, in the same order
// (a cyclic sweep: an LRU of capacity C keeps nothing of it once W > C, and everything below).
// One warming pass, then `passes` timed passes (CUDA events, median of 5 launches); the rate per
// W shows the L2 rate while W fits and the HBM rate once it does not; the knee is the share of the
// L2 that holds such a working set. Rows: results/micro_<gpu>_l2.csv (GPU, date, W, bytes, ms, GB/s).
// Exit: 0 done, 2 bad arguments, 3 no GPU.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "../../common/harness/internal.h"  // gpu_slug

namespace TCG_BUILD_NS {
using namespace tcg;

constexpr uint32_t kChunk = 32 * 1024;  // one bulk copy
constexpr int kSlots = 4;               // copies in flight per SM

__global__ void sweep_kernel(const uint8_t* buf, uint64_t chunks, int passes) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem);
  auto slot = [&](int s) { return base + uint32_t(s) * kChunk; };
  auto bar = [&](int s) { return base + kSlots * kChunk + 8u * uint32_t(s); };
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kSlots; ++s) mbarrier_init(bar(s), 1);
  fence_mbarrier_init();
  uint32_t phase[kSlots] = {};
  bool busy[kSlots] = {};
  int s = 0;
  for (int p = 0; p < passes; ++p)
    for (uint64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
      if (busy[s]) {  // the copy that used this slot has landed: reuse it
        mbarrier_wait_parity(bar(s), phase[s]);
        phase[s] ^= 1;
      }
      mbarrier_arrive_expect_tx(bar(s), kChunk);
      bulk_load(slot(s), buf + c * kChunk, kChunk, bar(s));
      busy[s] = true;
      s = (s + 1) % kSlots;
    }
  for (int t = 0; t < kSlots; ++t)
    if (busy[t]) mbarrier_wait_parity(bar(t), phase[t]);
}

}  // namespace TCG_BUILD_NS

int main(int argc, char** argv) {
  using namespace tcg;
  using gpu::kChunk;
  using gpu::kSlots;
  int sets_mb[] = {8, 16, 24, 32, 36, 40, 44, 48, 52, 56, 64, 72, 80, 96, 112, 128, 160, 192, 256};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::fprintf(stderr, "l2_sweep: unknown argument '%s' (no arguments)\n", a.c_str());
    return 2;
  }
  int dev_count = 0;
  if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
    std::printf("l2_sweep: no GPU\n");
    return 3;
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) {
    std::printf("l2_sweep: needs compute capability >= 9.0 (cp.async.bulk); %s is %d.%d\n", prop.name, prop.major, prop.minor);
    return 3;
  }
  const size_t max_bytes = size_t(256) << 20;
  uint8_t* buf = nullptr;
  CUDA_CHECK(cudaMalloc(&buf, max_bytes));
  CUDA_CHECK(cudaMemset(buf, 1, max_bytes));
  const uint32_t smem = kSlots * kChunk + 8 * kSlots + kSmemAlignSlack;
  CUDA_CHECK(cudaFuncSetAttribute(gpu::sweep_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int grid = prop.multiProcessorCount;
  const std::string csv = "results/micro_" + harness::gpu_slug(prop.name) + "_l2.csv";
  FILE* out = std::fopen(csv.c_str(), "a");
  if (!out) { std::fprintf(stderr, "l2_sweep: cannot append to %s\n", csv.c_str()); return 2; }
  std::fseek(out, 0, SEEK_END);
  if (std::ftell(out) == 0) std::fprintf(out, "gpu,date,l2_bytes,sms,working_set_mb,passes,bytes,ms,gb_per_s\n");
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf("l2_sweep on %s (L2 %d bytes, %d SMs): appending to %s\n", prop.name, prop.l2CacheSize, grid, csv.c_str());
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  for (int mb : sets_mb) {
    const uint64_t bytes = uint64_t(mb) << 20, chunks = bytes / kChunk;
    const int passes = int(std::max<uint64_t>(2, (uint64_t(8) << 30) / bytes));  // >= 8 GiB read per launch
    gpu::sweep_kernel<<<grid, 32, smem>>>(buf, chunks, 1);  // warm: the buffer's lines in L2 as far as they fit
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> ms;
    for (int r = 0; r < 5; ++r) {
      CUDA_CHECK(cudaEventRecord(e0));
      gpu::sweep_kernel<<<grid, 32, smem>>>(buf, chunks, passes);
      CUDA_CHECK(cudaEventRecord(e1));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double t = ms[2], moved = double(bytes) * passes;
    std::printf("  W %4d MB: %d passes, %.3f ms, %.0f GB/s\n", mb, passes, t, moved / (t * 1e6));
    std::fprintf(out, "%s,%s,%d,%d,%d,%d,%.0f,%.4f,%.1f\n", prop.name, date, prop.l2CacheSize, grid, mb, passes, moved, t,
                 moved / (t * 1e6));
  }
  std::fclose(out);
  CUDA_CHECK(cudaFree(buf));
  return 0;
}
