// cluster_test_util.h — what the cluster tests share (test_cluster.cpp, test_cluster_sync.cpp):
// the seeds every schedule-independent outcome is checked under, a launch with a cluster of the
// whole grid, run_at / REQUIRE_RUNS, a 2-D tensor map, the 32 x 64 BF16 tensor whose 16-row
// boxes the TMA tests load, and the barrier initialisation the kernels start with.
//
// Everything is inline in namespace tcg_test::cluster_test, so each test file includes it once
// and the binary links.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace tcg_test {
namespace cluster_test {

inline constexpr uint64_t kSeeds[] = {1, 2, 4};

inline tcg::LaunchDims cluster_launch(uint32_t nctas, uint32_t threads, uint32_t smem) {
  return tcg::LaunchDims{dim3(nctas), dim3(threads), smem + tcg::kSmemAlignSlack, dim3(nctas)};
}

// Launches `kernel` under `seed`; returns the emulator's diagnostic, or "" if the launch succeeded.
template <class Kernel, class... Args>
std::string run_at(uint64_t seed, Kernel kernel, const tcg::LaunchDims& dims, const Args&... args) {
  SimOptions opt(seed);
  return sim_error([&] { tcg::launch_kernel(kernel, dims, nullptr, args...); });
}

// REQUIRE_RUNS(run_at(...)): the launch must succeed; shows the diagnostic otherwise.
#define REQUIRE_RUNS(...)                       \
  do {                                          \
    const std::string diagnostic = __VA_ARGS__; \
    INFO(diagnostic);                           \
    REQUIRE(diagnostic.empty());                \
  } while (0)

// A 32 x 64 BF16 tensor (values 1..9) whose 16-row boxes (2 KiB, no swizzle) the TMA tests load.
inline constexpr uint32_t kBoxBytes = 2048, kBoxElems = kBoxBytes / 2;
struct Boxes {
  std::vector<uint16_t> data = small_int_matrix(32, 64, 7);
  CUtensorMap map = map2d(data.data(), 32, 64, 16, false);
  tcsim::GlobalAllocation reg{data.data(), data.size() * 2, "Boxes"};
  Boxes() {
    for (uint16_t& h : data) h = bf16(from_bf16(h) + 5);  // [-4, 4] -> [1, 9]: never 0xFFFF poison
  }
  std::vector<uint16_t> box(uint32_t first_row) const {
    return std::vector<uint16_t>(data.begin() + first_row * 64, data.begin() + (first_row + 16) * 64);
  }
};
inline const std::vector<uint16_t> kPoisonBox(kBoxElems, 0xFFFF);

// Thread 0 initialises `n` barriers (count 1) at `bar`, `bar` + 8, ... and, with `fence`, publishes
// them to the async proxy and the cluster; the caller's cluster barrier then orders them before use.
__device__ inline void init_bars(uint32_t bar, int n = 1, bool fence = true) {
  if (threadIdx.x != 0) return;
  for (int i = 0; i < n; ++i) tcg::mbarrier_init(bar + 8 * i, 1);
  if (fence) tcg::fence_mbarrier_init();
}

}  // namespace cluster_test
}  // namespace tcg_test
