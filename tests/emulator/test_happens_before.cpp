// tests/emulator/test_happens_before.cpp — checks that ask the emulator's one happens-before
// relation (common/sim/happens_before.h) where the old rules looked at what happened to be in
// flight, and the convergence rule of the .aligned barriers:
//  * tcgen05.dealloc of columns an MMA writes, by a warp not ordered after the MMA's completion,
//    is reported under every seed (also when the MMA has already run), naming the dealloc's line,
//    the MMA's line and PTX ISA §9.7.16.7.1; with the commit + wait it passes;
//  * a CTA that exits without a wait on a TMA copy's barrier phase is reported under every seed,
//    whether the copy is still in flight or has landed;
//  * bar.sync and the cluster barrier (the .aligned forms) executed by part of a warp, or by its
//    lanes on two lines, are reported naming both places; __syncthreads after some lanes exited
//    is still fine.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;  // SimOptions, sim_error, contains

namespace {

constexpr uint32_t kA = 0, kB = 4096, kBars = 8192;
constexpr uint32_t kSmem = kBars + 64 + tcg::kSmemAlignSlack;

__device__ inline uint64_t operand_desc(uint32_t addr, uint32_t rows) {
  return tcg::make_smem_desc(addr, rows * 16, 128, tcg::Layout::kNone);
}

// Warp 0 allocates; thread 32 issues one MMA and commits it; with `wait`, thread 32 waits for the
// commit's barrier before the __syncthreads that precedes warp 0's dealloc.
__global__ void dealloc_kernel(int wait) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + kBars, slot = bar + 16;
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) {
    tcg::tmem_alloc(slot, 128);
  } else if (threadIdx.x == 32) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 16);
  if (threadIdx.x == 32) {
    tcg::mma_bf16_ss(tmem, operand_desc(base + kA, 128), operand_desc(base + kB, 64), tcg::make_idesc_bf16_f32(128, 64),
                     false);
    tcg::mma_commit(bar);
    // Without the wait the commit's arrival is still this CTA's: wait for it in any case at the end.
    if (wait) tcg::mbarrier_wait_parity(bar, 0);
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, 128);
  if (!wait && threadIdx.x == 32) tcg::mbarrier_wait_parity(bar, 0);
}

// Thread 0 loads one box; with `wait` it waits for the phase, otherwise it exits at once.
__global__ void exit_kernel(const __grid_constant__ CUtensorMap map, int wait) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + 4096;
  if (threadIdx.x != 0) return;
  tcg::mbarrier_init(bar, 1);
  tcg::fence_mbarrier_init();
  tcg::mbarrier_arrive_expect_tx(bar, 2048);
  tcg::tma_load_2d(base, &map, 0, 0, bar);
  if (wait) tcg::mbarrier_wait_parity(bar, 0);
}

enum Split : int {
  kConverged = 0,    // every lane at the same __syncthreads
  kTwoLines = 1,     // lanes 0-15 reach bar.sync on one line, lanes 16-31 on another
  kEarlyExit = 2,    // lanes 16-31 of warp 0 exit; the rest __syncthreads (fine: exited threads count)
  kClusterElect = 3, // the cluster barrier inside an elect_one_sync() branch
};

__global__ void split_kernel(int mode) {
  const uint32_t lane = threadIdx.x % 32;
  if (mode == kTwoLines) {
    if (lane < 16) tcg::named_barrier_sync(1, 64);
    else tcg::named_barrier_sync(1, 64);
  } else if (mode == kEarlyExit) {
    if (threadIdx.x < 32 && lane >= 16) return;
    __syncthreads();
  } else if (mode == kClusterElect) {
    if (tcg::elect_one_sync()) tcg::cluster_sync();
    __syncthreads();
  } else {
    __syncthreads();
  }
}

}  // namespace

TEST_CASE("happens-before: tcgen05.dealloc before the MMA's completion is ordered before it is reported under every seed") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimOptions opt(seed);
    const tcg::LaunchDims dims{dim3(1), dim3(64), kSmem};
    const std::string ok = sim_error([&] { tcg::launch_kernel(dealloc_kernel, dims, nullptr, 1); });
    INFO("seed " << seed << ": " << ok);
    CHECK(ok == "");
    const std::string err = sim_error([&] { tcg::launch_kernel(dealloc_kernel, dims, nullptr, 0); });
    INFO(err);
    CHECK(contains(err, "tcsim: TMEM deallocated under a running MMA"));
    CHECK(contains(err, "test_happens_before.cpp:57"));  // the dealloc
    CHECK(contains(err, "test_happens_before.cpp:48"));  // the MMA
    CHECK(contains(err, "§9.7.16.7.1"));
  }
}

TEST_CASE("happens-before: a CTA exiting without waiting for its TMA copy is reported under every seed") {
  std::vector<uint16_t> data = small_int_matrix(16, 64, 3);
  const tcsim::GlobalAllocation reg(data.data(), data.size() * 2, "data");
  const CUtensorMap map = map2d(data.data(), 16, 64, 16, false);
  int landed = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimOptions opt(seed);
    const tcg::LaunchDims dims{dim3(1), dim3(32), 8192 + tcg::kSmemAlignSlack};
    CHECK(sim_error([&] { tcg::launch_kernel(exit_kernel, dims, nullptr, map, 1); }) == "");
    const std::string err = sim_error([&] { tcg::launch_kernel(exit_kernel, dims, nullptr, map, 0); });
    INFO("seed " << seed << ": " << err);
    CHECK((contains(err, "CTA exited with asynchronous work in flight") ||
           contains(err, "CTA exited with asynchronous work it never waited for")));
    landed += contains(err, "never waited for");
  }
  CHECK(landed >= 1);  // some seed performed the copy before the exit: caught all the same
}

TEST_CASE("happens-before: .aligned barriers need the whole warp at one instruction") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    const tcg::LaunchDims cta{dim3(1), dim3(64), 0};
    CHECK(sim_error([&] { tcg::launch_kernel(split_kernel, cta, nullptr, int(kConverged)); }) == "");
    CHECK(sim_error([&] { tcg::launch_kernel(split_kernel, cta, nullptr, int(kEarlyExit)); }) == "");
    const std::string two = sim_error([&] { tcg::launch_kernel(split_kernel, cta, nullptr, int(kTwoLines)); });
    INFO(two);
    CHECK(contains(two, "divergent warp at a .sync.aligned instruction"));
    CHECK(contains(two, "test_happens_before.cpp:83"));
    CHECK(contains(two, "test_happens_before.cpp:84"));
    const tcg::LaunchDims cluster{dim3(2), dim3(64), 0, dim3(2)};
    const std::string elect = sim_error([&] { tcg::launch_kernel(split_kernel, cluster, nullptr, int(kClusterElect)); });
    INFO(elect);
    CHECK(contains(elect, "divergent warp at a .sync.aligned instruction"));
    CHECK(contains(elect, "barrier.cluster.arrive"));
  }
}
