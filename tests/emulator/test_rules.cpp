// test_rules.cpp — rules the emulator enforces beyond data layout, each shown with a
// small real kernel that breaks it (and, where it makes sense, one that keeps it):
//  * the arrivals of different tcgen05.commit operations are not ordered among themselves (only
//    each after its own MMAs), so under some seed a later commit's arrival lands first;
//  * a CTA may not exit while a commit arrival is still on its way to one of its barriers;
//  * a 16-byte vector store must be 16-byte aligned (the GPU faults otherwise);
//  * an mbarrier's init must be ordered before another thread's use, and fenced
//    (fence.mbarrier_init) before the async proxy signals it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace {

using tcg_test::contains;
using tcg_test::sim_error;
using Seed = tcg_test::SimOptions;

// One thread commits twice, to two barriers, with no MMA in between (a commit with nothing to
// track arrives as soon as it is its turn). Another thread records which phase completed first.
// drain: wait for both before exiting (the correct kernel); otherwise wait for the second only.
__global__ void two_commits_kernel(uint32_t* first_seen, int drain) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar_a = base, bar_b = base + 8, slot = base + 16;
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    tcg::tmem_alloc(slot, 32);  // a kernel with tcgen05 work; the commits need no TMEM
  } else if (threadIdx.x == 32) {
    tcg::mbarrier_init(bar_a, 1);
    tcg::mbarrier_init(bar_b, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (threadIdx.x == 0) {
    tcg::mma_commit(bar_a);
    tcg::mma_commit(bar_b);
  } else if (threadIdx.x == 32) {
    if (drain) {  // poll both: which phase completes first?
      bool a = false, b = false;
      while (!a && !b) {
        a = tcg::mbarrier_test_wait_parity(bar_a, 0);
        b = tcg::mbarrier_test_wait_parity(bar_b, 0);
      }
      *first_seen = a && !b ? 1u : b && !a ? 2u : 3u;  // 3: both at once
      tcg::mbarrier_wait_parity(bar_a, 0);
    }
    tcg::mbarrier_wait_parity(bar_b, 0);  // BUG without the drain: "b covers a" is not true of arrivals
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(*reinterpret_cast<volatile uint32_t*>(smem + 16), 32);
}

uint32_t run_two_commits(int drain, std::string* err) {
  uint32_t first = 0;
  *err = sim_error([&] {
    tcg::launch_kernel(two_commits_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024}, nullptr, &first, drain);
  });
  return first;
}

__global__ void vector_store_kernel(uint8_t* dst) {
  if (threadIdx.x == 0) tcg::store_16B(dst, make_uint4(1, 2, 3, 4));
}

__global__ void init_then_use_kernel(int sync_first) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t bar = tcg::smem_addr(smem);
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 2);
    tcg::fence_mbarrier_init();
  }
  if (sync_first) __syncthreads();
  if (threadIdx.x == 0 || threadIdx.x == 32) tcg::mbarrier_arrive(bar);  // thread 32: BUG without the sync
  if (!sync_first) __syncthreads();
}

}  // namespace

// Guards: an emulator that delivered commit arrivals in issue order would hide kernels that
// exit (or reuse a barrier) before an earlier commit's arrival has landed.
TEST_CASE("rules: arrivals of different tcgen05.commit operations land in any order") {
  int b_first = 0, a_first = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Seed s(seed);
    std::string err;
    const uint32_t first = run_two_commits(/*drain=*/1, &err);
    INFO("seed " << seed << ": " << err);
    CHECK(err == "");  // the correct kernel passes under every seed
    a_first += first == 1;
    b_first += first == 2;
  }
  MESSAGE("seeds (of 12) where the second commit's arrival was seen first: " << b_first << ", the first: " << a_first);
  CHECK(b_first >= 1);
  CHECK(a_first >= 1);
}

// Guards: a CTA that exits while an arrival is in flight towards its barriers (steps 03-05's
// producers drain the ring for this reason).
// Reported whether the arrival is still in flight at the exit or landed unobserved: nothing orders
// it before the CTA's end either way (happens_before.h), so every seed reports it.
TEST_CASE("rules: exiting with a commit arrival no wait has seen is reported under every seed") {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Seed s(seed);
    std::string err;
    run_two_commits(/*drain=*/0, &err);
    INFO(err);
    CHECK((contains(err, "exited with asynchronous work in flight") ||
           contains(err, "exited with asynchronous work it never waited for")));
    CHECK(contains(err, "tcgen05.commit"));
  }
}

TEST_CASE("rules: a 16-byte store must be 16-byte aligned") {
  alignas(16) uint8_t buf[64] = {};
  const tcsim::GlobalAllocation reg(buf, sizeof buf, "buf");
  CHECK(sim_error([&] { tcg::launch_kernel(vector_store_kernel, tcg::LaunchDims{dim3(1), dim3(32), 0}, nullptr, buf + 16); }) ==
        "");
  for (int off : {2, 8}) {
    const std::string err =
        sim_error([&] { tcg::launch_kernel(vector_store_kernel, tcg::LaunchDims{dim3(1), dim3(32), 0}, nullptr, buf + off); });
    INFO(err);
    CHECK(contains(err, "misaligned vector access"));
    CHECK(contains(err, "16-byte store"));
  }
}

// Guards: the init of an mbarrier is a plain write by one thread; another thread that uses the
// barrier must be ordered after it by a synchronisation.
TEST_CASE("rules: an mbarrier used by another thread before a synchronisation orders the init is reported") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Seed s(seed);
    CHECK(sim_error([] { tcg::launch_kernel(init_then_use_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024}, nullptr, 1); }) ==
          "");
    const std::string err =
        sim_error([] { tcg::launch_kernel(init_then_use_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024}, nullptr, 0); });
    INFO(err);
    // Either thread 32 runs before the init ("uninitialised mbarrier") or after it, unordered.
    CHECK((contains(err, "mbarrier used before its init is ordered before this thread") ||
           contains(err, "uninitialised mbarrier")));
  }
}

namespace {
// CTA 0's thread 32 initialises a barrier (no fence.mbarrier_init) and exits; the others publish
// it to the cluster with a releasing cluster barrier, then CTA 1 arrives on it remotely.
// sync_first: a __syncthreads orders the init before the other threads' release (correct, since
// release is cumulative); without it nothing orders the init before the release.
__global__ void cumulative_release_kernel(int sync_first) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t bar = tcg::smem_addr(smem);
  const uint32_t rank = tcg::cluster_ctarank();
  if (rank == 0 && threadIdx.x == 32) tcg::mbarrier_init(bar, 1);
  if (sync_first) __syncthreads();
  if (threadIdx.x >= 32) return;  // the initialising warp leaves: exited threads count as arrived
  tcg::cluster_arrive_release();
  tcg::cluster_wait();
  if (rank == 1 && threadIdx.x == 0) tcg::mbarrier_arrive_cluster(tcg::mapa_shared_cluster(bar, 0));
  if (rank == 0 && threadIdx.x == 0) tcg::mbarrier_wait_parity(bar, 0);
  tcg::cluster_arrive_release();
  tcg::cluster_wait();
}
}  // namespace

// Guards: a releasing cluster arrive publishes the inits ordered before it, also other threads'
// (cumulativity), and only those.
TEST_CASE("rules: a releasing cluster arrive publishes inits of other threads ordered before it") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Seed s(seed);
    INFO("seed " << seed);
    CHECK(sim_error([] {
            tcg::launch_kernel(cumulative_release_kernel, tcg::LaunchDims{dim3(2), dim3(64), 1024, dim3(2, 1, 1)},
                               nullptr, 1);
          }) == "");
    const std::string err = sim_error([] {
      tcg::launch_kernel(cumulative_release_kernel, tcg::LaunchDims{dim3(2), dim3(64), 1024, dim3(2, 1, 1)}, nullptr, 0);
    });
    INFO(err);
    // The initialising thread exits without a release, so nothing orders its init before anyone's use:
    // the remote arrive, or rank 0's own wait if that comes first.
    CHECK((contains(err, "used by another CTA before its init was published") || contains(err, "no mbarrier at that offset") ||
           contains(err, "mbarrier used before its init is ordered before this thread")));
  }
}
