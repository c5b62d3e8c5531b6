// test_cluster_sync.cpp — the emulator's cluster memory and synchronisation (common/sim/memory.cpp,
// sync.cpp, launch.cpp): ranks and mapa, ld/st.shared::cluster, barrier.cluster (ordering,
// exited threads, stale reads without the wait), and the diagnostics that name the rule and the
// CTA rank. The pair MMA, TMA and commit paths are in test_cluster.cpp.
//
// Every kernel here is hand-made for one rule and uses only the ptx.cuh wrappers, launched with a
// cluster shape in the emulator. Expected values come from the CPU, the PTX ISA and CUTLASS
// (docs/references.md): the cta_group::2 operand split and D layouts A and B (PTX ISA §9.7.16.5,
// §9.7.16.10.5; CUTLASS mma_traits_sm100.hpp), multicast and 2-CTA TMA (§9.7.9.25.5.2), remote
// mbarrier arrivals and the cluster barrier (§9.7.13.15; CUTLASS barrier.h), the peer-bit trick
// (CUTLASS copy_sm100_tma.hpp). Each test says what it guards, i.e. what would go
// unnoticed if the emulator did not model the rule. Outcomes that must not depend on the
// schedule are checked under seeds 1 (random), 2 (eager) and 4 (lazy asynchronous completion).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "cluster_test_util.h"

using namespace tcg_test;
using namespace tcg_test::cluster_test;  // kSeeds, cluster_launch, run_at, Boxes, init_bars

// ============================================================================ 1. DSMEM and barrier.cluster

namespace {

// Each CTA stores a word into the next CTA's shared memory (at an offset naming the writer), then
// reads its own words and, through shared::cluster, the next CTA's.
__global__ void dsmem_kernel(uint32_t* own, uint32_t* back) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), rank = tcg::cluster_ctarank(), n = tcg::cluster_nctarank();
  const uint32_t next = (rank + 1) % n;
  tcg::cluster_sync();  // every CTA of the cluster is running before its shared memory is touched
  if (threadIdx.x == 0)
    tcg::st_shared_cluster_u32(tcg::mapa_shared_cluster(base + 64 + 4 * rank, next), 0xA0000000u | rank << 8 | next);
  tcg::cluster_sync();
  if (threadIdx.x == 0)
    for (uint32_t w = 0; w < n; ++w) {
      own[rank * n + w] = *reinterpret_cast<volatile uint32_t*>(smem + 64 + 4 * w);
      back[rank * n + w] = tcg::ld_shared_cluster_u32(tcg::mapa_shared_cluster(base + 64 + 4 * w, next));
    }
  tcg::cluster_sync();  // the reads of the next CTA are done before it exits
}

// Each CTA publishes its blockIdx in its shared memory; thread 0 reports its rank, the cluster
// size and %clusterid.x, and reads every rank's word through mapa.
__global__ void rank_kernel(uint32_t* ids, uint32_t* words) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), cta = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    *reinterpret_cast<volatile uint32_t*>(smem + 64) = blockIdx.x | blockIdx.y << 8;
    ids[cta * 3 + 0] = tcg::cluster_ctarank();
    ids[cta * 3 + 1] = tcg::cluster_nctarank();
    ids[cta * 3 + 2] = tcg::cluster_id_x();
  }
  tcg::cluster_sync();
  if (threadIdx.x == 0)
    for (uint32_t r = 0; r < 4; ++r)
      words[cta * 4 + r] = tcg::ld_shared_cluster_u32(tcg::mapa_shared_cluster(base + 64, r));
  tcg::cluster_sync();
}

// CTA 0's thread 0 writes a word (after a few preemption points) and arrives; CTA 1's thread 0
// reads it through shared::cluster after its wait (or, skip_wait, between arrive and wait: a
// bug). Two rounds, one word each. early_exit: warp 1 of CTA 0 exits at once, warp 1 of CTA 1
// arrives once and exits without waiting; the remaining threads still complete both rounds.
__global__ void cluster_barrier_kernel(int skip_wait, int early_exit, uint32_t* seen) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), rank = tcg::cluster_ctarank(), warp = threadIdx.x / 32;
  if (early_exit && warp == 1) {
    if (rank == 1) tcg::cluster_arrive_relaxed();
    return;
  }
  for (uint32_t round = 0; round < 2; ++round) {
    if (rank == 0 && threadIdx.x == 0) {
      for (int i = 0; i < 16; ++i) tcg::cluster_ctarank();
      *reinterpret_cast<volatile uint32_t*>(smem + 64 + 4 * round) = 0x5EED0000u + round;
    }
    tcg::cluster_arrive_release();
    const bool reader = rank == 1 && threadIdx.x == 0;
    const uint32_t addr = tcg::mapa_shared_cluster(base + 64 + 4 * round, 0);
    if (reader && skip_wait) seen[round] = tcg::ld_shared_cluster_u32(addr);  // BUG on purpose
    tcg::cluster_wait();
    if (reader && !skip_wait) seen[round] = tcg::ld_shared_cluster_u32(addr);
  }
  tcg::cluster_sync();  // CTA 1's reads of CTA 0 are done before CTA 0 exits
}

std::string run_barrier(uint64_t seed, int skip_wait, int early_exit, std::vector<uint32_t>& seen) {
  seen.assign(2, 0);
  return run_at(seed, cluster_barrier_kernel, cluster_launch(2, 64, 1024), skip_wait, early_exit, seen.data());
}

}  // namespace

// Guards: %cluster_ctarank is x + y X inside a 2-D cluster, %clusterid.x counts clusters along x,
// and mapa(rank r) reaches the CTA that reports rank r.
TEST_CASE("cluster: ranks and mapa in a 2 x 2 cluster of a 4 x 2 grid") {
  for (uint64_t seed : kSeeds) {
    CAPTURE(seed);
    std::vector<uint32_t> ids(8 * 3, 0), words(8 * 4, 0);
    const tcg::LaunchDims grid_4x2{dim3(4, 2), dim3(32), 1024 + tcg::kSmemAlignSlack, dim3(2, 2)};
    REQUIRE_RUNS(run_at(seed, rank_kernel, grid_4x2, ids.data(), words.data()));
    for (uint32_t by = 0; by < 2; ++by)
      for (uint32_t bx = 0; bx < 4; ++bx) {
        INFO("bx " << bx << " by " << by);
        const uint32_t cta = by * 4 + bx;
        CHECK(ids[cta * 3 + 0] == bx % 2 + 2 * (by % 2));
        CHECK(ids[cta * 3 + 1] == 4);
        CHECK(ids[cta * 3 + 2] == bx / 2);
        for (uint32_t r = 0; r < 4; ++r)  // rank r's blockIdx: x = first x of the cluster + r % 2, y likewise
          CHECK(words[cta * 4 + r] == ((bx / 2 * 2 + r % 2) | (by / 2 * 2 + r / 2) << 8));
      }
  }
}

// Guards: st.shared::cluster lands in the CTA the rank bits name (not the issuer's), at the same
// offset, and ld.shared::cluster reads it back there; bounds are checked in the target CTA.
TEST_CASE("cluster: ld/st.shared::cluster reach the named CTA at the same offset") {
  for (uint32_t n : {2u, 4u})
    for (uint64_t seed : kSeeds) {
      INFO("n " << n << " seed " << seed);
      std::vector<uint32_t> own(n * n, 0), back(n * n, 0);
      REQUIRE_RUNS(run_at(seed, dsmem_kernel, cluster_launch(n, 32, 1024), own.data(), back.data()));
      for (uint32_t t = 0; t < n; ++t)
        for (uint32_t w = 0; w < n; ++w) {
          INFO("t " << t << " w " << w);
          const uint32_t expect = (w + 1) % n == t ? (0xA0000000u | w << 8 | t) : 0xFFFFFFFFu;  // else poison
          CHECK(own[t * n + w] == expect);
          CHECK(back[((t + n - 1) % n) * n + w] == expect);  // CTA t-1 read CTA t's word w
        }
    }
}

// Guards: barrier.cluster.wait returns only after every CTA's arrival (a store before CTA 0's
// release arrive is visible to CTA 1 after its wait); exited threads count as arrived, also
// those that arrived and exited without waiting.
TEST_CASE("cluster: barrier.cluster orders a write before arrive with a read after wait; exited threads count") {
  for (int early_exit : {0, 1})
    for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
      INFO("early_exit " << early_exit << " seed " << seed);
      std::vector<uint32_t> seen;
      REQUIRE_RUNS(run_barrier(seed, 0, early_exit, seen));
      CHECK(seen[0] == 0x5EED0000u);
      CHECK(seen[1] == 0x5EED0001u);
    }
}

// Guards: a read of a peer's shared memory between arrive and wait is not ordered after the
// peer's write; the seeded schedule must expose it (otherwise such a bug passes every run).
TEST_CASE("cluster: a read before barrier.cluster.wait sees the peer's stale data under some seed") {
  int stale = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    std::vector<uint32_t> seen;
    REQUIRE_RUNS(run_barrier(seed, /*skip_wait=*/1, 0, seen));
    stale += seen[0] == 0xFFFFFFFFu || seen[1] == 0xFFFFFFFFu;
  }
  CHECK(stale > 0);
}


// ============================================================================ 2. diagnostics

namespace {

enum Bug : int {
  kMixedCtaGroup, kOddCtaMma, kPairInClusterOfOne, kPairDifferentWarps, kPairDifferentDst, kTmaMaskOutside,
  kCommitMaskOutside, kNoMbarrierAtOffset, kPeerExited, kExitWithTma, kArriveBeforePublish, kRelaxedArriveNoFence,
  kReleaseArrivePublishes, kTmaBarrierNotFenced, kWaitWithoutArrive, kDoubleArrive, kDsmemOutOfBounds, kDeadlock,
  kTmaBarrierInPeer, kMapaOutside, kClusterAddressOutside, kBulkMaskOutside, kBulkMaskEmpty, kBulkMisaligned,
  kBulkNoMbarrierInPeer, kBulkBarOutside,
};
constexpr uint32_t kMagic = 0x600DF1A6u;

// One kernel per bug (64 threads per CTA). Offsets: the TMA box at +0, the barrier at +4096, the
// TMEM slot at +4104, a flag at +4112. t0 / t1: thread 0 of CTA rank 0 / rank 1.
__global__ void bug_kernel(const __grid_constant__ CUtensorMap map, int bug, const uint16_t* src) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + 4096, slot = base + 4104, flag = base + 4112;
  const uint32_t t = threadIdx.x, warp = t / 32, rank = tcg::cluster_ctarank();
  const bool t0 = rank == 0 && t == 0, t1 = rank == 1 && t == 0;
  const auto init_bar = [bar](bool fence) { init_bars(bar, 1, fence); };
  switch (bug) {
    case kMixedCtaGroup:  // CTA 0 uses cta_group::1; after a cluster barrier CTA 1 uses ::2
      if (rank == 0 && warp == 0) {
        tcg::tmem_alloc(slot, 32);
        tcg::tmem_dealloc(*reinterpret_cast<volatile uint32_t*>(smem + 4104), 32);
        tcg::tcgen05_fence_before_thread_sync();
      }
      tcg::cluster_sync();
      tcg::tcgen05_fence_after_thread_sync();
      if (rank == 1 && warp == 0) tcg::tmem_alloc_2sm(slot, 32);
      return;
    case kOddCtaMma:
      if (t1) tcg::mma_bf16_ss_2sm(0, 0, 0, tcg::make_idesc_bf16_f32(256, 64), false);
      return;
    case kPairInClusterOfOne:
    case kPairDifferentDst:
      if (warp == 0) tcg::tmem_alloc_2sm(slot + (bug == kPairDifferentDst ? 4 * rank : 0), 32);
      return;
    case kPairDifferentWarps:
      if (warp == rank) tcg::tmem_alloc_2sm(slot, 32);
      return;
    case kTmaMaskOutside:
    case kCommitMaskOutside:
      if (!t0) return;
      init_bar(true);
      if (bug == kTmaMaskOutside) tcg::tma_load_2d_multicast(base, &map, 0, 0, bar, 0b100);
      else tcg::mma_commit_multicast(bar, 0b101);
      return;
    case kBulkMaskOutside:
    case kBulkMaskEmpty:
    case kBulkMisaligned:
      if (!t0) return;
      init_bar(true);
      tcg::bulk_load_multicast(base + (bug == kBulkMisaligned ? 8 : 0), src, 2048, bar,
                               bug == kBulkMaskOutside ? 0b101 : bug == kBulkMaskEmpty ? 0 : 0b1);
      return;
    case kBulkBarOutside:  // the barrier operand carries rank 3 of a cluster of 2
      if (!t0) return;
      init_bar(true);
      tcg::bulk_load_multicast(base, src, 2048, bar | (3u << 24), 0b1);
      return;
    case kBulkNoMbarrierInPeer:  // only CTA 0 initialises the barrier the copy signals in both
      if (rank == 0) init_bar(true);
      tcg::cluster_sync();
      if (t0) tcg::bulk_load_multicast(base, src, 2048, bar, 0b11);
      tcg::cluster_sync();
      return;
    case kNoMbarrierAtOffset:  // both CTAs have a barrier at +4096, none at +4104
    case kTmaBarrierInPeer:    // the plain (cta_group::1) TMA may not signal the peer's barrier
      init_bar(true);
      tcg::cluster_sync();
      if (t0 && bug == kNoMbarrierAtOffset) tcg::mbarrier_arrive_cluster(tcg::mapa_shared_cluster(bar + 8, 1));
      if (t0 && bug == kTmaBarrierInPeer) tcg::tma_load_2d(base, &map, 0, 0, tcg::mapa_shared_cluster(bar, 1));
      tcg::cluster_sync();
      return;
    case kPeerExited:  // CTA 0 exits at once while CTA 1 stores into it
      if (rank == 0) return;
      for (uint32_t i = 0; t1 && i < 4; ++i) tcg::st_shared_cluster_u32(tcg::mapa_shared_cluster(base + 64, 0), i);
      tcg::cluster_sync();  // completes when every thread of CTA 0 has exited
      return;
    case kExitWithTma:
      if (!t1) return;
      __syncthreads();  // completes once the other 63 threads exited: this thread is CTA 1's last
      init_bar(true);
      tcg::mbarrier_arrive_expect_tx(bar, kBoxBytes);
      tcg::tma_load_2d(base, &map, 0, 0, bar);
      return;  // BUG: the copy is still in flight when the CTA's last thread exits
    case kArriveBeforePublish:  // CTA 1 learns of the init through a flag, not a cluster barrier
      if (t0) {
        init_bar(true);
        *reinterpret_cast<volatile uint32_t*>(smem + 4112) = kMagic;
      } else if (t1) {  // bounded, so that a broken emulator cannot hang the suite
        for (int i = 0; i < 100000 && tcg::ld_shared_cluster_u32(tcg::mapa_shared_cluster(flag, 0)) != kMagic; ++i) {
        }
        tcg::mbarrier_arrive_cluster(tcg::mapa_shared_cluster(bar, 0));
      }
      tcg::cluster_sync();
      return;
    case kRelaxedArriveNoFence:    // init, then a relaxed cluster barrier: not published
    case kReleaseArrivePublishes:  // init, then a releasing cluster barrier: published (correct)
      if (rank == 0) init_bar(false);
      if (bug == kRelaxedArriveNoFence) tcg::cluster_arrive_relaxed();
      else tcg::cluster_arrive_release();
      tcg::cluster_wait();
      if (t1) tcg::mbarrier_arrive_cluster(tcg::mapa_shared_cluster(bar, 0));
      if (t0) tcg::mbarrier_wait_parity(bar, 0);
      tcg::cluster_sync();
      return;
    case kTmaBarrierNotFenced:  // CTA 1's barrier is published to the cluster, not to the async proxy
      init_bar(rank == 0);
      if (t == 0) tcg::mbarrier_arrive_expect_tx(bar, kBoxBytes);
      tcg::cluster_sync();
      if (t0) tcg::tma_load_2d_multicast(base, &map, 0, 0, bar, 0b11);
      if (t == 0) tcg::mbarrier_wait_parity(bar, 0);
      tcg::cluster_sync();
      return;
    case kWaitWithoutArrive:  // (whole warps: barrier.cluster is .aligned)
      if (rank == 1 && warp == 0) tcg::cluster_wait();
      return;
    case kDoubleArrive:
      for (int i = 0; rank == 1 && warp == 0 && i < 2; ++i) tcg::cluster_arrive_release();
      return;
    case kDsmemOutOfBounds:  // 64 KiB into CTA 1: past its dynamic shared memory
      tcg::cluster_sync();
      if (t0) tcg::st_shared_cluster_u32(tcg::mapa_shared_cluster(base, 1) + 0x10000, 1);
      tcg::cluster_sync();
      return;
    case kMapaOutside:
      if (t1) tcg::mapa_shared_cluster(base, 2);
      return;
    case kClusterAddressOutside:  // rank bits 3 in a cluster of 2
      if (t1) tcg::ld_shared_cluster_u32((3u << 24) | (base & 0xFFFFFFu));
      return;
    case kDeadlock:  // thread 0 of each CTA waits for an arrival nobody makes; the rest at the cluster barrier
      init_bar(false);
      if (t == 0) tcg::mbarrier_wait_parity(bar, 0);
      tcg::cluster_sync();
      return;
  }
}

std::string run_bug(uint64_t seed, int bug, int ctas = 2) {
  const Boxes boxes;
  return run_at(seed, bug_kernel, cluster_launch(uint32_t(ctas), 64, 8192), boxes.map, bug, boxes.data.data());
}

}  // namespace

// Guards each cluster diagnostic: the message names the rule and the CTA by its rank.
TEST_CASE("cluster: diagnostics name the rule and the CTA rank") {
  const struct { int bug, ctas; std::vector<std::string> parts; } cases[] = {
      {kMixedCtaGroup, 2, {"mixed .cta_group in one kernel", "rank 1", "tcgen05.alloc.cta_group::1"}},
      {kOddCtaMma, 2, {"cta_group::2 MMA issued by the odd CTA", "rank 1"}},
      {kPairInClusterOfOne, 1, {"cta_group::2 outside a CTA pair", "CTA rank 0 of a cluster of 1"}},
      {kPairDifferentWarps, 2, {"from different warps of the pair", "rank "}},
      {kPairDifferentDst, 2, {"operands differ between the CTAs of the pair", "rank "}},
      {kTmaMaskOutside, 2, {"multicast mask names a CTA outside the cluster", "rank 0", "cp.async.bulk.tensor"}},
      {kCommitMaskOutside, 2, {"multicast mask names a CTA outside the cluster", "rank 0", "tcgen05.commit"}},
      {kNoMbarrierAtOffset, 2, {"no mbarrier at that offset in the target CTA", "rank 0", "rank 1"}},
      {kExitWithTma, 2, {"CTA exited with asynchronous work in flight", "rank 1", "TMA copy"}},
      {kArriveBeforePublish, 2, {"mbarrier used by another CTA before its init was published", "rank 1"}},
      {kRelaxedArriveNoFence, 2, {"mbarrier used by another CTA before its init was published", "rank 1"}},
      {kTmaBarrierNotFenced, 2, {"mbarrier init not fenced for the async proxy", "rank 0", hex((1u << 24) | 0x1400)}},
      {kWaitWithoutArrive, 2, {"barrier.cluster.wait without an arrive", "rank 1"}},
      {kDoubleArrive, 2, {"barrier.cluster.arrive twice without a wait", "rank 1"}},
      {kDsmemOutOfBounds, 2, {"shared memory out of bounds", "rank 0", hex((1u << 24) | 0x400)}},
      {kTmaBarrierInPeer, 2, {"TMA mbarrier in the wrong CTA", "rank 0", "CTA rank 1"}},
      {kMapaOutside, 2, {"mapa to a CTA outside the cluster", "rank 1"}},
      {kClusterAddressOutside, 2, {"shared::cluster address outside the cluster", "rank 1", "names CTA rank 3"}},
      {kBulkMaskOutside, 2, {"multicast mask names a CTA outside the cluster", "rank 0", "cp.async.bulk.multicast"}},
      {kBulkMaskEmpty, 2, {"bad multicast mask", "cp.async.bulk.multicast with an empty CTA mask"}},
      {kBulkMisaligned, 2, {"misaligned bulk copy", "cp.async.bulk.multicast needs 16-byte aligned"}},
      {kBulkBarOutside, 2, {"shared::cluster address outside the cluster", "cp.async.bulk.multicast", "names CTA rank 3"}},
      {kBulkNoMbarrierInPeer, 2, {"no mbarrier at that offset in the target CTA", "rank 1", "cp.async.bulk.multicast completion mbarrier"}},
  };
  for (const auto& c : cases)
    for (uint64_t seed : kSeeds) {
      INFO("bug " << c.bug << " seed " << seed);
      const std::string err = run_bug(seed, c.bug, c.ctas);
      INFO(err);
      for (const std::string& p : c.parts) CHECK(contains(err, p));
    }
}

// Guards: publication of an init to other CTAs by a releasing cluster barrier alone (no
// fence.mbarrier_init) is accepted: the diagnostic above must not fire on correct code.
TEST_CASE("cluster: a releasing cluster barrier publishes an mbarrier init to the peer") {
  for (uint64_t seed : kSeeds) {
    CAPTURE(seed);
    const std::string err = run_bug(seed, kReleaseArrivePublishes);
    INFO(err);
    CHECK(err.empty());
  }
}

// Guards: a CTA whose shared memory a peer still uses must not exit before a cluster barrier;
// whichever happens first (the exit or the peer's store) is reported.
TEST_CASE("cluster: a CTA exiting while its peer still accesses it is reported") {
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    CAPTURE(seed);
    const std::string err = run_bug(seed, kPeerExited);
    INFO(err);
    CHECK((contains(err, "exited while its cluster peer can still reach it") ||
           contains(err, "access to a CTA that has exited")));
    CHECK(contains(err, "rank 0"));
  }
}

// Guards: the deadlock report of a cluster lists the blocked threads of every CTA with its rank.
// In a forked child: a broken emulator could hang instead.
TEST_CASE("cluster: a deadlock report names the rank of every blocked warp") {
  for (uint64_t seed : kSeeds) {
    CAPTURE(seed);
    const Isolated r = run_isolated([seed] { return run_bug(seed, kDeadlock); }, 20);
    INFO(r.text);
    REQUIRE(!r.timed_out);
    CHECK(contains(r.text, "tcsim: deadlock"));
    CHECK(contains(r.text, "CTA (0,0,0) rank 0 warp 0 lane 0"));
    CHECK(contains(r.text, "CTA (1,0,0) rank 1 warp 0 lane 0"));
    CHECK(contains(r.text, "rank 1 warp 1 lanes 0-31"));  // at the cluster barrier
    CHECK(contains(r.text, "barrier.cluster.wait"));
  }
}
