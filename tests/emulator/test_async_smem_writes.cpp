// tests/emulator/test_async_smem_writes.cpp — what asynchronous units write into shared memory on a
// thread's behalf, and who may read it when (common/sim/async_smem_writes.cpp, tmem_slot.cpp), and
// the tcgen05 fence rule at its ISA width (sync.cpp, tmem_hazards.cpp).
//
//  * the TMEM address tcgen05.alloc writes into shared memory (PTX ISA §9.7.16.7.1), read through
//    tcg::tmem_address_from_slot: ordered after the write by __syncthreads (or a releasing cluster
//    barrier) it passes; with no barrier, or a relaxed cluster barrier only (§9.7.13.3: orders no
//    memory), it is reported with the alloc's line and the read's, under every seed;
//  * two copies in flight into the same bytes (a second issued before a wait saw the first land;
//    a multicast whose mask reaches a CTA that loads the same range itself): reported at the second
//    issue with both issuers, under every seed;
//  * a read of bytes a copy still writes: after a phase that completed early (expect_tx of one of
//    two copies' bytes) it names the copy, the phase and the likely causes, expect_tx first; after a
//    wait on another barrier, the wrong-barrier cause; under every seed;
//  * a tcgen05.ld whose thread's last synchronisation (an mbarrier wait) carries no tcgen05
//    ordering, after an earlier wait + tcgen05.fence::after_thread_sync that ordered the MMA it
//    reads, passes (§9.7.16.6.4); without that earlier fence it is reported as the missing fence.
// Each was first written against an emulator without the check, and failed there.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;  // SimOptions, sim_error, contains

namespace {

constexpr uint64_t kEverySeed[] = {1, 2, 3, 4, 5, 6};

template <class Kernel, class... Args>
std::string run(uint64_t seed, Kernel kernel, const tcg::LaunchDims& dims, const Args&... args) {
  SimOptions opt(seed);
  return sim_error([&] { tcg::launch_kernel(kernel, dims, nullptr, args...); });
}

// ============================================================================ the TMEM address
//
// Four warps. Warp 0 allocates 32 columns into the slot; then every thread reads the slot after
// `sync`, and warp 0 frees the columns after a __syncthreads at the end.
enum class SlotSync : int { kNone, kSyncthreads, kClusterRelaxed, kClusterRelease };
constexpr uint32_t kSlot = 0;

__global__ void slot_kernel(int sync, uint32_t* out) {
  const uint32_t slot = tcg::smem_addr(tcg::aligned_smem_base()) + kSlot;
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) tcg::tmem_alloc(slot, 32);
  tcg::tcgen05_fence_before_thread_sync();
  switch (SlotSync(sync)) {
    case SlotSync::kNone: break;
    case SlotSync::kSyncthreads: __syncthreads(); break;
    case SlotSync::kClusterRelaxed: tcg::cluster_arrive_relaxed(); tcg::cluster_wait(); break;
    case SlotSync::kClusterRelease: tcg::cluster_arrive_release(); tcg::cluster_wait(); break;
  }
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t taddr = tcg::tmem_address_from_slot(slot);  // the line the report names
  out[threadIdx.x] = taddr;
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(taddr, 32);
}

std::string run_slot(uint64_t seed, SlotSync sync, std::vector<uint32_t>& out) {
  out.assign(128, ~0u);
  const tcg::LaunchDims dims{dim3(1), dim3(128), 64 + tcg::kSmemAlignSlack, dim3(1)};
  return run(seed, slot_kernel, dims, int(sync), out.data());
}

// Guards: tcgen05.alloc's write of the address was not a write, and the slot was read with a
// plain volatile load: a kernel publishing the address with a relaxed cluster barrier alone passed.
TEST_CASE("TMEM address: the read of tcgen05.alloc's slot must be ordered after the alloc's write") {
  std::vector<uint32_t> out;
  for (const uint64_t seed : kEverySeed) {
    CAPTURE(seed);
    for (const SlotSync bad : {SlotSync::kNone, SlotSync::kClusterRelaxed}) {
      CAPTURE(int(bad));
      const std::string e = run_slot(seed, bad, out);
      CHECK(contains(e, "TMEM address read before tcgen05.alloc's write is ordered before it"));
      CHECK(contains(e, "test_async_smem_writes.cpp:49"));  // the alloc
      CHECK(contains(e, "test_async_smem_writes.cpp:58"));  // the read
      CHECK(contains(e, "§9.7.16.7.1"));
      if (bad == SlotSync::kClusterRelaxed) CHECK(contains(e, "A relaxed cluster barrier"));
    }
    for (const SlotSync good : {SlotSync::kSyncthreads, SlotSync::kClusterRelease}) {
      CAPTURE(int(good));
      const std::string e = run_slot(seed, good, out);
      INFO(e);
      REQUIRE(e.empty());
      for (uint32_t t = 0; t < 128; ++t) REQUIRE(out[t] == out[0]);  // every thread read the address
    }
  }
}

// ============================================================================ copies
//
// One CTA (or a cluster of two for the multicast case) of 32 threads; thread 0 does everything.
// Shared memory: a 2 KiB region R, then the barriers. The source is a registered 2 KiB buffer.
enum class Copy : int {
  kExpectTxOneOfTwo,  // expect_tx for 1 KiB, two 1 KiB copies into R, wait, read R
  kExpectTxBoth,      // the same with expect_tx for 2 KiB: correct
  kWaitOtherBarrier,  // the copy completes bar1; the thread waits on bar0 (an arrive), reads R
  kWaitOwnBarrier,    // ... waits on bar1: correct
  kTwoIntoOne,        // two copies into R, on two barriers, the second before any wait
  kTwoInTurn,         // the same with the first waited for before the second: correct
  kMulticastToSelf,   // rank 1 multicasts R to ranks 0 and 1; rank 0 also loads R itself
  kMulticastToPeer,   // rank 1 multicasts R to itself only: correct
};
constexpr uint32_t kR = 0, kBar0 = 4096, kBar1 = kBar0 + 8;

__global__ void copy_kernel(int scenario, const uint8_t* src, uint32_t* sum) {
  const uint32_t base = tcg::smem_addr(tcg::aligned_smem_base());
  const uint32_t r = base + kR, bar0 = base + kBar0, bar1 = base + kBar1;
  const Copy s = Copy(scenario);
  const bool cluster = s == Copy::kMulticastToSelf || s == Copy::kMulticastToPeer;
  const uint32_t rank = cluster ? tcg::cluster_ctarank() : 0;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar0, 1);
    tcg::mbarrier_init(bar1, 1);
    tcg::fence_mbarrier_init();
  }
  if (cluster) tcg::cluster_sync();
  __syncwarp();
  if (threadIdx.x != 0) return;
  uint32_t wait_on = bar0;
  switch (s) {
    case Copy::kExpectTxOneOfTwo:
    case Copy::kExpectTxBoth:
      tcg::mbarrier_arrive_expect_tx(bar0, s == Copy::kExpectTxBoth ? 2048 : 1024);
      tcg::bulk_load(r, src, 1024, bar0);
      tcg::bulk_load(r + 1024, src + 1024, 1024, bar0);
      break;
    case Copy::kWaitOtherBarrier:
    case Copy::kWaitOwnBarrier:
      tcg::mbarrier_arrive_expect_tx(bar1, 2048);
      tcg::bulk_load(r, src, 2048, bar1);
      tcg::mbarrier_arrive(bar0);
      if (s == Copy::kWaitOwnBarrier) wait_on = bar1;
      break;
    case Copy::kTwoIntoOne:
    case Copy::kTwoInTurn:
      tcg::mbarrier_arrive_expect_tx(bar0, 2048);
      tcg::bulk_load(r, src, 2048, bar0);
      if (s == Copy::kTwoInTurn) tcg::mbarrier_wait_parity(bar0, 0);
      tcg::mbarrier_arrive_expect_tx(bar1, 2048);
      tcg::bulk_load(r, src, 2048, bar1);  // the line the overlap report names
      if (s == Copy::kTwoIntoOne) tcg::mbarrier_wait_parity(bar0, 0);
      wait_on = bar1;
      break;
    case Copy::kMulticastToSelf:
    case Copy::kMulticastToPeer:
      tcg::mbarrier_arrive_expect_tx(bar0, 2048);
      if (rank == 0) tcg::bulk_load(r, src, 2048, bar0);
      else tcg::bulk_load_multicast(r, src, 2048, bar0, s == Copy::kMulticastToSelf ? 0b11 : 0b10);
      break;
  }
  tcg::mbarrier_wait_parity(wait_on, 0);
  uint32_t total = 0;
  for (uint32_t off = 0; off < 2048; off += 16) {  // a thread's loads of R
    uint32_t v[4];
    tcg::ld_shared_cluster_v4(r + off, v);
    total += v[0] + v[1] + v[2] + v[3];
  }
  sum[rank] = total;
  if (s == Copy::kWaitOtherBarrier || s == Copy::kWaitOwnBarrier) tcg::mbarrier_wait_parity(bar1 ^ bar0 ^ wait_on, 0);
  if (cluster) tcg::cluster_arrive_relaxed();
  if (cluster) tcg::cluster_wait();
}

std::string run_copy(uint64_t seed, Copy s, uint32_t (&sum)[2]) {
  static std::vector<uint8_t> src = [] {
    std::vector<uint8_t> v(2048);
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i * 7 + 1);
    return v;
  }();
  tcsim::GlobalAllocation reg(src.data(), src.size(), "src");
  const bool cluster = s == Copy::kMulticastToSelf || s == Copy::kMulticastToPeer;
  const tcg::LaunchDims dims{dim3(cluster ? 2 : 1), dim3(32), kBar1 + 64 + tcg::kSmemAlignSlack,
                             dim3(cluster ? 2 : 1)};
  sum[0] = sum[1] = 0;
  return run(seed, copy_kernel, dims, int(s), static_cast<const uint8_t*>(src.data()), sum);
}

uint32_t expected_sum() {
  uint32_t total = 0;
  for (uint32_t i = 0; i < 2048; i += 4)
    total += uint32_t(uint8_t(i * 7 + 1)) | uint32_t(uint8_t((i + 1) * 7 + 1)) << 8 |
             uint32_t(uint8_t((i + 2) * 7 + 1)) << 16 | uint32_t(uint8_t((i + 3) * 7 + 1)) << 24;
  return total;
}

// Guards: a stage read before all its bytes landed was reported by its symptom (bad data, or a
// tx-count underflow under some seeds), never as the read of a copy still in flight.
TEST_CASE("copies: a read of bytes a copy still writes names the copy, the phase and the likely causes") {
  uint32_t sum[2];
  for (const uint64_t seed : kEverySeed) {
    CAPTURE(seed);
    std::string e = run_copy(seed, Copy::kExpectTxOneOfTwo, sum);
    INFO(e);
    CHECK(contains(e, "shared memory read while a copy into it is in flight"));
    CHECK(contains(e, "the bulk copy issued by"));
    CHECK(contains(e, "the phase 0 of its mbarrier, to which"));  // ... its bytes belong, completed without it
    CHECK(contains(e, "Likely causes, in order: (1) the expect_tx byte count is too small"));
    CHECK(contains(e, "(2) a .multicast::cluster copy whose CTA mask includes this CTA"));
    CHECK(contains(e, "(3) the reader waited on the wrong mbarrier"));
    e = run_copy(seed, Copy::kWaitOtherBarrier, sum);
    CHECK(contains(e, "shared memory read while a copy into it is in flight"));
    CHECK(contains(e, "a wait on the wrong mbarrier"));
    for (const Copy good : {Copy::kExpectTxBoth, Copy::kWaitOwnBarrier}) {
      CAPTURE(int(good));
      e = run_copy(seed, good, sum);
      INFO(e);
      REQUIRE(e.empty());
      CHECK(sum[0] == expected_sum());
    }
  }
}

// Guards: two copies writing the same bytes while both in flight were reported only when the
// result happened to differ (step 12: two senders into one receive slot).
TEST_CASE("copies: two copies in flight into the same bytes are reported with both issuers") {
  uint32_t sum[2];
  for (const uint64_t seed : kEverySeed) {
    CAPTURE(seed);
    std::string e = run_copy(seed, Copy::kTwoIntoOne, sum);
    CHECK(contains(e, "asynchronous copies with overlapping destinations in flight"));
    CHECK(contains(e, "test_async_smem_writes.cpp:148"));  // the second copy (the report's place)
    CHECK(contains(e, "the bulk copy issued by CTA (0,0,0) warp 0 lane 0 (thread 0) at"));  // the first
    // Rank 0's own copy and the multicast: reported at the second issue, or, when rank 0's wait saw
    // its own copy land first, at rank 0's read of the multicast's bytes.
    e = run_copy(seed, Copy::kMulticastToSelf, sum);
    CHECK((contains(e, "asynchronous copies with overlapping destinations in flight") ||
           contains(e, "shared memory read while a copy into it is in flight")));
    CHECK(contains(e, "multicast bulk copy"));
    CHECK(contains(e, "rank 1"));  // the multicast's issuer
    CHECK(contains(e, "a .multicast::cluster copy whose CTA mask includes"));
    for (const Copy good : {Copy::kTwoInTurn, Copy::kMulticastToPeer}) {
      CAPTURE(int(good));
      e = run_copy(seed, good, sum);
      INFO(e);
      REQUIRE(e.empty());
      CHECK(sum[0] == expected_sum());
    }
  }
}

// ============================================================================ the fence rule
//
// Four warps. Warp 0 allocates; thread 0 issues one MMA into D and commits it to done_bar; every
// thread waits on done_bar (then tcgen05.fence::after_thread_sync, or not: `fence_after_done`),
// then on other_bar, which thread 0 arrives on and which carries no tcgen05 ordering (no fence after
// that wait), then loads its lane quarter of D.
constexpr uint32_t kFa = 0, kFb = 4096, kFbars = 8192;

__global__ void fence_kernel(int fence_after_done) {
  const uint32_t base = tcg::smem_addr(tcg::aligned_smem_base());
  const uint32_t done_bar = base + kFbars, other_bar = done_bar + 8, slot = done_bar + 16;
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) tcg::tmem_alloc(slot, 64);
  if (threadIdx.x == 32) {
    tcg::mbarrier_init(done_bar, 1);
    tcg::mbarrier_init(other_bar, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tcg::tmem_address_from_slot(slot);
  if (threadIdx.x == 0) {
    tcg::mma_bf16_ss(tmem, tcg::make_smem_desc(base + kFa, 128 * 16, 128, tcg::Layout::kNone),
                     tcg::make_smem_desc(base + kFb, 64 * 16, 128, tcg::Layout::kNone), tcg::make_idesc_bf16_f32(128, 64),
                     false);
    tcg::mma_commit(done_bar);
  }
  tcg::mbarrier_wait_parity(done_bar, 0);
  if (fence_after_done) tcg::tcgen05_fence_after_thread_sync();
  if (threadIdx.x == 0) tcg::mbarrier_arrive(other_bar);
  tcg::mbarrier_wait_parity(other_bar, 0);  // unrelated to the MMA; no fence after it
  uint32_t r[8];
  tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, 32 * warp, 0), r);  // the line the report names
  tcg::tmem_wait_ld(r);
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, 64);
}

// Guards: a tcgen05.ld after an unrelated mbarrier wait was refused as "not ordered after that
// synchronisation" although an earlier wait + fence ordered the MMA it reads (§9.7.16.6.4).
TEST_CASE("fence rule: a tcgen05.ld after an unrelated wait is ordered by the earlier wait + fence") {
  const tcg::LaunchDims dims{dim3(1), dim3(128), kFbars + 64 + tcg::kSmemAlignSlack, dim3(1)};
  for (const uint64_t seed : kEverySeed) {
    CAPTURE(seed);
    std::string e = run(seed, fence_kernel, dims, 1);
    INFO(e);
    CHECK(e.empty());
    e = run(seed, fence_kernel, dims, 0);  // the fence that mattered is missing
    CHECK(contains(e, "missing tcgen05.fence::after_thread_sync"));
    CHECK(contains(e, "depends on the tcgen05.mma.kind::f16 issued by CTA (0,0,0) warp 0 lane 0 (thread 0)"));
    CHECK(contains(e, "follows mbarrier.try_wait.parity at tests/emulator/test_async_smem_writes.cpp:277"));  // done_bar
    CHECK(contains(e, "test_async_smem_writes.cpp:282"));  // the tcgen05.ld
  }
}

}  // namespace
