// tests/emulator/test_global_order.cpp — the emulator's rule for global memory that one thread stores
// and another loads (common/ptx/global.cuh, common/sim/global_order.cpp): a load of a granule
// stored by another thread must be ordered after the store by bar.sync within a CTA, or by a
// release (atom.acq_rel.gpu after a bar.sync that follows the stores) acquired by the loading
// thread (atom.acq_rel.gpu on the same location, then bar.sync to reach the other loaders). Each
// way of breaking the chain is a small two-CTA kernel that must be reported, beside the correct
// one, which must not be, under several scheduler seeds. The rule is the emulator's one
// happens-before relation (happens_before.h), so an mbarrier phase or the cluster barrier orders
// the store as well as bar.sync does: the last cases are correct kernels that the rule refused
// while it knew only bar.sync and the atom.
#include <doctest/doctest.h>

#include <string>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace {

using tcg_test::contains;
using tcg_test::sim_error;
using Seed = tcg_test::SimOptions;

enum Break : int {
  kNone = 0,
  kNoBarrierBeforeRelease = 1,  // the counting thread releases before the other threads have stored
  kNoBarrierAfterAcquire = 2,   // the other threads of the last CTA load without waiting for the acquire
  kIgnoreCounter = 3,           // CTA 1 loads CTA 0's data whether or not it came last
};

constexpr int kThreads = 64;

// Two CTAs of 64 threads. Each thread stores one 16-byte granule {cta, tid, 7, 9} to
// data[cta][tid]; then one thread per CTA adds 1 to *counter; the CTA that saw 1 (it came last)
// loads every granule of the other CTA and writes their checksum to sums[cta].
__global__ void publish_kernel(uint8_t* data, uint32_t* counter, uint32_t* sums, int mode) {
  uint8_t* smem = tcg::aligned_smem_base();
  volatile uint32_t* last = reinterpret_cast<uint32_t*>(smem);
  const uint32_t cta = blockIdx.x, tid = threadIdx.x;
  tcg::st_global_v4(data + 16 * (cta * kThreads + tid), make_uint4(cta, tid, 7, 9));
  if (mode != kNoBarrierBeforeRelease) tcg::named_barrier_sync(1, kThreads);
  if (tid == 0) *last = tcg::atom_add_acq_rel_gpu(counter, 1u) == 1u ? 1u : 0u;
  if (mode != kNoBarrierAfterAcquire) tcg::named_barrier_sync(1, kThreads);
  // Broken variants: CTA 1 loads whether it came last or not (with no bar.sync after the
  // acquire, its threads other than 0 cannot know).
  const bool reduce = mode == kNone || mode == kNoBarrierBeforeRelease ? *last != 0 : cta == 1;
  if (reduce) {  // every thread loads one granule of the other CTA
    const uint4 v = tcg::ld_global_v4(data + 16 * ((1 - cta) * kThreads + tid));
    if (v.x == 1 - cta && v.y == tid && v.z == 7 && v.w == 9) sums[cta]++;  // emulated threads switch only in wrappers
  }
}

struct Run {
  std::string err;
  uint32_t counter = 0, sums[2] = {0, 0};
};

Run run_publish(int mode) {
  Run r;
  alignas(16) static uint8_t data[2 * kThreads * 16];
  const tcsim::GlobalAllocation reg_data(data, sizeof data, "data"), reg_counter(&r.counter, 4, "counter");
  r.err = sim_error([&] {
    tcg::launch_kernel(publish_kernel, tcg::LaunchDims{dim3(2), dim3(kThreads), 1024}, nullptr, data, &r.counter,
                       r.sums, mode);
  });
  return r;
}

}  // namespace

TEST_CASE("global order: stores, bar.sync, atom.acq_rel release, atom acquire, bar.sync, loads: allowed") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Seed s(seed);
    const Run r = run_publish(kNone);
    INFO("seed " << seed << ": " << r.err);
    CHECK(r.err == "");
    CHECK(r.counter == 2);
    CHECK(r.sums[0] + r.sums[1] == uint32_t(kThreads));  // the last CTA saw all 64 granules
  }
}

TEST_CASE("global order: a release before the other threads' stores are ordered by bar.sync is reported") {
  int caught = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Seed s(seed);
    const Run r = run_publish(kNoBarrierBeforeRelease);
    INFO(r.err);
    if (r.err.empty()) continue;
    CHECK(contains(r.err, "global load before the store is visible"));
    CHECK(contains(r.err, "does not happen before this load"));
    ++caught;
  }
  CHECK(caught >= 1);
}

TEST_CASE("global order: loads by threads that did not bar.sync after the acquire are reported") {
  int caught = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Seed s(seed);
    const Run r = run_publish(kNoBarrierAfterAcquire);
    INFO(r.err);
    if (r.err.empty()) continue;
    CHECK(contains(r.err, "global load before the store is visible"));
    ++caught;
  }
  CHECK(caught >= 1);
}

TEST_CASE("global order: loading another CTA's data without acquiring its release is reported") {
  int caught = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Seed s(seed);
    const Run r = run_publish(kIgnoreCounter);
    INFO(r.err);
    if (r.err.empty()) continue;  // CTA 1 ran its loads before CTA 0 stored: stale data, not this rule
    CHECK(contains(r.err, "global load before the store is visible"));
    ++caught;
  }
  CHECK(caught >= 1);
}

namespace {

// One CTA: thread t stores a granule, then (with `sync`) bar.sync, then loads thread (t+1)'s.
__global__ void same_cta_kernel(uint8_t* data, int sync) {
  const uint32_t tid = threadIdx.x;
  tcg::st_global_v4(data + 16 * tid, make_uint4(tid, 0, 0, 0));
  if (sync) __syncthreads();
  (void)tcg::ld_global_v4(data + 16 * ((tid + 1) % 64));
}

__global__ void misaligned_atom_kernel(uint8_t* p) { (void)tcg::atom_add_acq_rel_gpu(reinterpret_cast<uint32_t*>(p + 2), 1u); }

}  // namespace

TEST_CASE("global order: within a CTA, bar.sync orders one thread's store before another's load") {
  alignas(16) static uint8_t data[64 * 16];
  const tcsim::GlobalAllocation reg(data, sizeof data, "data");
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Seed s(seed);
    CHECK(sim_error([&] { tcg::launch_kernel(same_cta_kernel, tcg::LaunchDims{dim3(1), dim3(64), 0}, nullptr, data, 1); }) ==
          "");
  }
  int caught = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Seed s(seed);
    const std::string err =
        sim_error([&] { tcg::launch_kernel(same_cta_kernel, tcg::LaunchDims{dim3(1), dim3(64), 0}, nullptr, data, 0); });
    if (err.empty()) continue;  // the neighbour had not stored yet: nothing to see
    CHECK(contains(err, "does not happen before this load"));
    ++caught;
  }
  CHECK(caught >= 1);
}

TEST_CASE("global order: atom.global.add.u32 must be 4-byte aligned") {
  alignas(16) static uint8_t word[16];
  const std::string err =
      sim_error([&] { tcg::launch_kernel(misaligned_atom_kernel, tcg::LaunchDims{dim3(1), dim3(1), 0}, nullptr, word); });
  CHECK(contains(err, "misaligned atomic"));
}

namespace {
__global__ void atom_kernel(uint32_t* p) { (void)tcg::atom_add_acq_rel_gpu(p, 1u); }
}  // namespace

// The counter's address is checked against the registered allocations, as the 16-byte accesses
// are (common/sim/global_memory.cpp): a counter index past the workspace is caught at the atom.
TEST_CASE("global order: an atom outside every registered allocation is reported") {
  alignas(16) static uint32_t words[8];
  const tcsim::GlobalAllocation reg(words, 4 * sizeof(uint32_t), "counters");  // the first 4 only
  CHECK(sim_error([&] { tcg::launch_kernel(atom_kernel, tcg::LaunchDims{dim3(1), dim3(1), 0}, nullptr, words + 3); }) == "");
  CHECK(words[3] == 1);
  const std::string err =
      sim_error([&] { tcg::launch_kernel(atom_kernel, tcg::LaunchDims{dim3(1), dim3(1), 0}, nullptr, words + 4); });
  INFO(err);
  CHECK(contains(err, "tcsim: global memory access out of bounds"));
  CHECK(contains(err, "atom.acq_rel.gpu.global.add.u32"));
}

namespace {

constexpr int kMaxGranules = 48;

// Two CTAs of 64 threads under the timing model, each on its own SM: thread t of CTA c stores n_c
// granules, then the chain of publish_kernel; the CTA that counted last loads every granule of
// the other. CTA 1's warp store instructions write 512 contiguous bytes (16 full sectors); CTA 0's
// write one 16-byte granule in each of 32 lines (32 half sectors, 4x the SM's store time), so
// CTA 0's atom waits longer for its SM's store path than CTA 1's.
__global__ void timed_publish_kernel(uint8_t* data, uint32_t* counter, int n0, int n1) {
  uint8_t* smem = tcg::aligned_smem_base();
  volatile uint32_t* last = reinterpret_cast<uint32_t*>(smem);
  const int cta = int(blockIdx.x), tid = int(threadIdx.x);
  const int mine = cta == 0 ? n0 : n1, theirs = cta == 0 ? n1 : n0;
  auto granule = [&](int c, int i) {
    const int g = c == 0 ? tid * kMaxGranules + i : i * kThreads + tid;
    return data + 16 * (c * kMaxGranules * kThreads + g);
  };
  for (int i = 0; i < mine; ++i) tcg::st_global_v4(granule(cta, i), make_uint4(cta, tid, i, 9));
  tcg::named_barrier_sync(1, kThreads);
  if (tid == 0) *last = tcg::atom_add_acq_rel_gpu(counter, 1u) == 1u ? 1u : 0u;
  tcg::named_barrier_sync(1, kThreads);
  if (*last)
    for (int i = 0; i < theirs; ++i) (void)tcg::ld_global_v4(granule(1 - cta, i));
}

}  // namespace

// Under the timing model an atom waits for its SM's store path and an L2 round trip. The counter's
// value and the release/acquire must change hands at the same instant: a CTA whose atom was
// issued first but whose SM's stores made it wait longer must not hand its knowledge on in one
// order while the counter counts the CTAs in the other. Before the fix (knowledge exchanged when
// the atom was issued, the value after the wait) this failed at n0, n1 = 4, 15 and 8, 31: the CTA
// that saw 1 had not acquired the other's release, and its correct loads were reported. The store
// counts sweep the two CTAs' arrival times across each other.
TEST_CASE("global order: under the timing model, the atom's value and its release/acquire agree") {
  alignas(16) static uint8_t data[2 * kMaxGranules * kThreads * 16];
  uint32_t counter = 0;
  const tcsim::GlobalAllocation reg_data(data, sizeof data, "data"), reg_counter(&counter, 4, "counter");
  tcg_test::ModelScope timed(/*skip_math=*/true, /*trace=*/false);
  for (int n0 : {4, 8, 16})
    for (int n1 = 1; n1 <= kMaxGranules; ++n1) {
      counter = 0;
      const std::string err = sim_error([&] {
        tcg::launch_kernel(timed_publish_kernel, tcg::LaunchDims{dim3(2), dim3(kThreads), 1024}, nullptr, data,
                           &counter, n0, n1);
      });
      INFO("CTA 0 stores " << n0 << " granules per thread, CTA 1 " << n1 << ": " << err);
      CHECK(err == "");
      CHECK(counter == 2);
    }
}

namespace {

// One CTA: warp 0 stores one granule per thread and arrives on an mbarrier (count 32); warp 1
// waits for the phase (or, broken, does not) and loads them. No bar.sync between the two.
__global__ void mbarrier_publish_kernel(uint8_t* data, uint32_t* sum, int wait) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t bar = tcg::smem_addr(smem), tid = threadIdx.x;
  if (tid == 0) tcg::mbarrier_init(bar, 32);
  __syncthreads();
  if (tid < 32) {
    tcg::st_global_v4(data + 16 * tid, make_uint4(tid, 1, 2, 3));
    tcg::mbarrier_arrive(bar);
  } else {
    if (wait) tcg::mbarrier_wait_parity(bar, 0);
    const uint4 v = tcg::ld_global_v4(data + 16 * (tid - 32));
    if (v.x == tid - 32 && v.y == 1) ++*sum;  // emulated threads switch only in wrappers
  }
}

// A cluster of 2: CTA 0 stores, both CTAs pass the cluster barrier, CTA 1 loads CTA 0's granules.
__global__ void cluster_publish_kernel(uint8_t* data, uint32_t* sum, int sync) {
  const uint32_t rank = tcg::cluster_ctarank(), tid = threadIdx.x;
  if (rank == 0) tcg::st_global_v4(data + 16 * tid, make_uint4(tid, 4, 5, 6));
  if (sync) tcg::cluster_sync();
  if (rank == 1) {
    const uint4 v = tcg::ld_global_v4(data + 16 * tid);
    if (v.x == tid && v.y == 4) ++*sum;
  }
  if (!sync) tcg::cluster_sync();  // CTA 0 must not exit before CTA 1's loads either way
}

}  // namespace

TEST_CASE("global order: an mbarrier phase orders stores before the waiters' loads (refused when only bar.sync counted)") {
  alignas(16) static uint8_t data[32 * 16];
  const tcsim::GlobalAllocation reg(data, sizeof data, "data");
  int caught = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Seed s(seed);
    uint32_t sum = 0;
    const std::string ok = sim_error([&] {
      tcg::launch_kernel(mbarrier_publish_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024}, nullptr, data, &sum, 1);
    });
    INFO("seed " << seed << ": " << ok);
    CHECK(ok == "");
    CHECK(sum == 32u);
    const std::string broken = sim_error([&] {
      tcg::launch_kernel(mbarrier_publish_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024}, nullptr, data, &sum, 0);
    });
    if (broken.empty()) continue;  // warp 1 loaded before warp 0 stored anything: host data, not this rule
    CHECK(contains(broken, "global load before the store is visible"));
    ++caught;
  }
  CHECK(caught >= 1);
}

TEST_CASE("global order: the cluster barrier orders one CTA's stores before another's loads (refused when only bar.sync counted)") {
  alignas(16) static uint8_t data[64 * 16];
  const tcsim::GlobalAllocation reg(data, sizeof data, "data");
  int caught = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Seed s(seed);
    uint32_t sum = 0;
    const tcg::LaunchDims dims{dim3(2), dim3(64), 1024, dim3(2)};
    const std::string ok = sim_error([&] { tcg::launch_kernel(cluster_publish_kernel, dims, nullptr, data, &sum, 1); });
    INFO("seed " << seed << ": " << ok);
    CHECK(ok == "");
    CHECK(sum == 64u);
    const std::string broken = sim_error([&] { tcg::launch_kernel(cluster_publish_kernel, dims, nullptr, data, &sum, 0); });
    if (broken.empty()) continue;
    CHECK(contains(broken, "global load before the store is visible"));
    ++caught;
  }
  CHECK(caught >= 1);
}
