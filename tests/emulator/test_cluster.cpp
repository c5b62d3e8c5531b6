// test_cluster.cpp — the emulator's CTA pair and cluster data paths (common/sim/mma.cpp,
// copies.cpp, mbarrier.cpp, tmem.cpp): the cta_group::2 MMA, multicast TMA and bulk copies, 2-CTA TMA, remote
// mbarrier arrivals, and commit arrivals (multicast or on one named barrier). The cluster's
// shared memory, barrier and diagnostics are in test_cluster_sync.cpp.
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

// ============================================================================ 1. the pair MMA
//
// A cluster of 2 CTAs (or 4: two pairs computing the same product), 128 threads each. CTA v of a
// pair holds A rows [v M/2, (v+1) M/2) and B rows [v N/2, (v+1) N/2) at the same shared-memory
// offsets, K = 64 (one 128B-swizzle row, 4 MMAs at +32 bytes), placed by ordinary stores or by
// tma_load_2d_2sm into the even CTA's barrier. The even CTA issues the MMAs and a multicast
// commit; both CTAs read their own TMEM with warps 0-3 and write D by *local* row, so a CTA
// holding the other CTA's rows fails the comparison.
namespace {

constexpr uint32_t kPairK = 64, kPA = 0, kPB = 16384, kPBar = 32768, kPairSmem = kPBar + 64, kPairCols = 256;

struct PairMma {
  uint32_t m = 256, n = 64;
  bool use_tma = false;
  const uint16_t* a = nullptr;  // m x 64
  const uint16_t* b = nullptr;  // n x 64
  float* out = nullptr;         // [pair][half * M/2 + local row][n]
  uint32_t* beyond = nullptr;   // M = 128: per rank and TMEM lane, finite cells in columns [n/2, n)
};

__global__ void pair_mma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                PairMma c) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t a_tile = base + kPA, b_tile = base + kPB, full = base + kPBar, done = full + 8, slot = full + 16;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32, rank = tcg::cluster_ctarank();
  const uint32_t half = rank % 2, leader = rank & ~1u;  // CTA pairs: ranks {0, 1}, {2, 3}
  const uint32_t m_per = c.m / 2, n_per = c.n / 2;      // rows of A and of B this CTA supplies
  if (warp == 0) {
    tcg::tmem_alloc_2sm(slot, kPairCols);
    tcg::tmem_relinquish_alloc_permit_2sm();
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(full, 1);
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  if (!c.use_tma) {  // (a GPU also needs fence.proxy.async here; ptx.cuh has no wrapper, the emulator no check)
    for (uint32_t i = threadIdx.x; i < m_per * kPairK; i += blockDim.x)
      memcpy(smem + (place_addr(128, m_per, kPairK, a_tile, i / kPairK, i % kPairK) - base),
             &c.a[half * m_per * kPairK + i], 2);
    for (uint32_t i = threadIdx.x; i < n_per * kPairK; i += blockDim.x)
      memcpy(smem + (place_addr(128, n_per, kPairK, b_tile, i / kPairK, i % kPairK) - base),
             &c.b[half * n_per * kPairK + i], 2);
  }
  tcg::tcgen05_fence_before_thread_sync();
  tcg::cluster_sync();  // both CTAs' tiles (stores), barriers and TMEM address are in place
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kPBar + 16);
  if (warp == 0 && tcg::elect_one_sync()) {
    if (c.use_tma) {  // each CTA loads its own halves; all bytes complete the even CTA's barrier
      const uint32_t leader_full = tcg::mapa_shared_cluster(full, leader);
      if (half == 0) tcg::mbarrier_arrive_expect_tx(full, 2 * (m_per + n_per) * kPairK * 2);
      tcg::tma_load_2d_2sm(a_tile, &map_a, 0, int32_t(half * m_per), leader_full);
      tcg::tma_load_2d_2sm(b_tile, &map_b, 0, int32_t(half * n_per), leader_full);
    }
    if (half == 0) {
      if (c.use_tma) {
        tcg::mbarrier_wait_parity(full, 0);
        tcg::tcgen05_fence_after_thread_sync();
      }
      const uint32_t idesc = tcg::make_idesc_bf16_f32(c.m, c.n);
      for (uint32_t s = 0; s < kPairK / 16; ++s)
        tcg::mma_bf16_ss_2sm(tmem, tcg::make_smem_desc(a_tile + 32 * s, 16, 1024, tcg::Layout::kSwizzle128B),
                             tcg::make_smem_desc(b_tile + 32 * s, 16, 1024, tcg::Layout::kSwizzle128B), idesc, s > 0);
      tcg::mma_commit_2sm_multicast(done, uint16_t(0b11u << leader));
    }
  }
  tcg::mbarrier_wait_parity(done, 0);
  tcg::tcgen05_fence_after_thread_sync();
  // Layout A (M = 256): lane l holds local row l, columns [0, N). Layout B (M = 128): lane l holds
  // local row l % 64, columns [N/2 * (l / 64), +N/2) in TMEM columns [0, N/2) (PTX ISA §9.7.16.10.5; CUTLASS cute/atom/mma_traits_sm100_frag.hpp).
  const uint32_t tl = warp * 32 + lane;
  const bool layout_b = c.m == 128;
  const uint32_t row = layout_b ? tl % 64 : tl, first_col = layout_b ? (tl / 64) * n_per : 0;
  float* out_row = c.out + (size_t(rank / 2) * c.m + half * m_per + row) * c.n + first_col;
  uint32_t finite = 0;
  for (uint32_t col = 0; col < c.n; col += 8) {
    uint32_t r[8];
    tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, warp * 32, col), r);
    tcg::tmem_wait_ld(r);
    if (layout_b && col >= n_per) {  // layout B writes N/2 columns only: these still hold the fresh NaN
      for (uint32_t x : r) finite += !std::isnan(tcg::u32_as_float(x));
    } else {
      memcpy(out_row + col, r, sizeof r);
    }
  }
  if (layout_b) c.beyond[rank * 128 + tl] = finite;
  tcg::tcgen05_fence_before_thread_sync();
  tcg::cluster_sync();  // the pair MMA and the commit are done with the odd CTA before it exits
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc_2sm(tmem, kPairCols);
}

}  // namespace

// Guards: the cta_group::2 operand split (A rows and B halves from each CTA at the same offsets),
// D layouts A and B in each CTA's own TMEM, the pair allocator, 2-CTA TMA into the leader's
// barrier, and the multicast commit that releases both CTAs.
TEST_CASE("cluster: cta_group::2 MMA (M = 256 layout A, M = 128 layout B) bitwise in both CTAs") {
  const struct { uint32_t m, n, ctas; } shapes[] = {{256, 64, 2},  {256, 128, 2}, {256, 256, 2}, {128, 64, 2},
                                                    {128, 256, 2}, {256, 128, 4}, {128, 64, 4}};
  for (const auto& sh : shapes) {
    const std::vector<uint16_t> a = small_int_matrix(sh.m, kPairK, sh.n);
    const std::vector<uint16_t> b = small_int_matrix(sh.n, kPairK, sh.m + 1);
    std::vector<float> ref;  // the exact product, once per pair
    for (uint32_t pair = 0; pair < sh.ctas / 2; ++pair)
      for (uint32_t i = 0; i < sh.m; ++i)
        for (uint32_t j = 0; j < sh.n; ++j) {
          double s = 0;
          for (uint32_t k = 0; k < kPairK; ++k)
            s += double(from_bf16(a[i * kPairK + k])) * from_bf16(b[j * kPairK + k]);
          ref.push_back(float(s));
        }
    const CUtensorMap ma = map2d(a.data(), sh.m, kPairK, sh.m / 2, true);
    const CUtensorMap mb = map2d(b.data(), sh.n, kPairK, sh.n / 2, true);
    const auto reg_a = registered(a, "A"), reg_b = registered(b, "B");
    for (bool tma : {false, true})
      for (uint64_t seed : kSeeds) {
        INFO("m " << sh.m << " n " << sh.n << " ctas " << sh.ctas << " tma " << tma << " seed " << seed);
        std::vector<float> out(ref.size(), NAN);
        std::vector<uint32_t> beyond(128 * sh.ctas, 0);
        const PairMma c{sh.m, sh.n, tma, a.data(), b.data(), out.data(), beyond.data()};
        REQUIRE_RUNS(run_at(seed, pair_mma_kernel, cluster_launch(sh.ctas, 128, kPairSmem), ma, mb, c));
        INFO("mismatching elements: " << count_mismatches(out, ref));
        CHECK(same_bits(out, ref));
        CHECK(std::vector<uint32_t>(beyond.size(), 0) == beyond);
      }
  }
}

// ============================================================================ 2. TMA and remote arrivals

namespace {

// Multicast: every CTA initialises the barrier at the same offset; the masked ones expect one
// box. CTA `issuer` multicasts; the masked CTAs wait on their own barrier and copy their tile;
// after a cluster barrier the unmasked ones copy theirs and test their barrier.
// out: [rank][kBoxElems]; completed: [rank], phase 0 of the CTA's barrier completed.
// bulk: the 1-D form (cp.async.bulk .multicast::cluster) of the same 2 KiB from `src`.
__global__ void multicast_kernel(const __grid_constant__ CUtensorMap map, uint32_t mask, uint32_t issuer, uint16_t* out,
                                 uint32_t* completed, bool bulk, const uint16_t* src) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + 4096, rank = tcg::cluster_ctarank();
  const bool masked = (mask >> rank) & 1u;
  init_bars(bar);
  if (threadIdx.x == 0 && masked) tcg::mbarrier_arrive_expect_tx(bar, kBoxBytes);
  tcg::cluster_sync();  // every barrier is initialised and published before the multicast signals it
  if (threadIdx.x == 0) {
    if (rank == issuer && bulk) tcg::bulk_load_multicast(base, src, kBoxBytes, bar, uint16_t(mask));
    if (rank == issuer && !bulk) tcg::tma_load_2d_multicast(base, &map, 0, 0, bar, uint16_t(mask));
    if (masked) {
      tcg::mbarrier_wait_parity(bar, 0);
      memcpy(out + rank * kBoxElems, smem, kBoxBytes);
      completed[rank] = 1;
    }
  }
  tcg::cluster_sync();  // every masked CTA has its box
  if (threadIdx.x == 0 && !masked) {
    completed[rank] = tcg::mbarrier_test_wait_parity(bar, 0);
    memcpy(out + rank * kBoxElems, smem, kBoxBytes);
  }
}

// The 2-CTA TMA form: both CTAs load their own box (rows 16 rank ..) into their own shared memory
// and signal the EVEN CTA's barrier, which expects both boxes. When its phase completes the even
// CTA reads the odd CTA's tile through shared::cluster: it must be there already.
__global__ void tma_2sm_kernel(const __grid_constant__ CUtensorMap map, uint16_t* out, uint16_t* peer_seen,
                               uint32_t* flags) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + 4096, rank = tcg::cluster_ctarank();
  init_bars(bar);
  tcg::cluster_sync();
  if (threadIdx.x == 0) {
    const uint32_t leader_bar = tcg::mapa_shared_cluster(bar, rank & ~1u);
    if (rank == 1) flags[2] = (bar & 0xFEFFFFFFu) == leader_bar;  // CUTLASS's peer-bit trick (CUTLASS cute/arch/copy_sm100_tma.hpp)
    if (rank == 0) tcg::mbarrier_arrive_expect_tx(bar, 2 * kBoxBytes);
    tcg::tma_load_2d_2sm(base, &map, 0, int32_t(16 * rank), leader_bar);
    if (rank == 0) {
      tcg::mbarrier_wait_parity(bar, 0);
      const uint32_t peer = tcg::mapa_shared_cluster(base, 1);
      for (uint32_t i = 0; i < kBoxBytes / 4; ++i) {
        const uint32_t w = tcg::ld_shared_cluster_u32(peer + 4 * i);
        memcpy(peer_seen + 2 * i, &w, 4);
      }
      memcpy(out, smem, kBoxBytes);
    }
  }
  tcg::cluster_sync();
  if (threadIdx.x == 0 && rank == 1) {
    flags[1] = tcg::mbarrier_test_wait_parity(bar, 0);  // the odd CTA's own barrier
    memcpy(out + kBoxElems, smem, kBoxBytes);
  }
}

// CTA 0 stores a word into CTA 1, arrives remotely on CTA 1's `bar` (CTA 1 is waiting), then
// announces a box with a remote arrive.expect_tx on `tbar` and loads it into CTA 1.
__global__ void remote_arrive_kernel(const __grid_constant__ CUtensorMap map, uint32_t* word, uint16_t* box) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + 4096, tbar = bar + 8, rank = tcg::cluster_ctarank();
  init_bars(bar, 2);
  tcg::cluster_sync();
  if (threadIdx.x == 0 && rank == 0) {
    for (int i = 0; i < 8; ++i) tcg::cluster_ctarank();  // preemption points: CTA 1 usually blocks first
    tcg::st_shared_cluster_u32(tcg::mapa_shared_cluster(bar + 16, 1), 0xC0FFEE01u);
    tcg::mbarrier_arrive_cluster(tcg::mapa_shared_cluster(bar, 1));
    tcg::mbarrier_arrive_expect_tx_cluster(tcg::mapa_shared_cluster(tbar, 1), kBoxBytes);
    tcg::tma_load_2d(tcg::mapa_shared_cluster(base, 1), &map, 0, 0, tcg::mapa_shared_cluster(tbar, 1));
  } else if (threadIdx.x == 0) {
    tcg::mbarrier_wait_parity(bar, 0);
    *word = *reinterpret_cast<volatile uint32_t*>(smem + 4096 + 16);
    tcg::mbarrier_wait_parity(tbar, 0);
    memcpy(box, smem, kBoxBytes);
  }
  tcg::cluster_sync();
}

}  // namespace

// Guards: a multicast box lands at the same offset in every masked CTA (including when the issuer
// is not in the mask), never in an unmasked CTA, and completes each masked CTA's own barrier.
// The same for the 1-D bulk copy's multicast form (cp.async.bulk, §9.7.9.25.4.1): box 0's 16 rows
// are its first 2 KiB, so both forms must deliver the same bytes.
TEST_CASE("cluster: multicast TMA and bulk copy land in every masked CTA and complete each one's own barrier") {
  const Boxes boxes;
  const struct { uint32_t ctas, mask, issuer; } cases[] = {{2, 0b11, 0}, {4, 0b101, 1}, {4, 0b1010, 3}};
  for (bool bulk : {false, true})
  for (const auto& k : cases)
    for (uint64_t seed : kSeeds) {
      INFO("bulk " << bulk << " ctas " << k.ctas << " mask " << k.mask << " seed " << seed);
      std::vector<uint16_t> out(k.ctas * kBoxElems, 0);
      std::vector<uint32_t> completed(k.ctas, 7);
      REQUIRE_RUNS(run_at(seed, multicast_kernel, cluster_launch(k.ctas, 32, 8192), boxes.map, k.mask, k.issuer,
                          out.data(), completed.data(), bulk, boxes.data.data()));
      for (uint32_t r = 0; r < k.ctas; ++r) {
        CAPTURE(r);
        const bool masked = (k.mask >> r) & 1u;
        const std::vector<uint16_t> tile(out.begin() + r * kBoxElems, out.begin() + (r + 1) * kBoxElems);
        CHECK(tile == (masked ? boxes.box(0) : kPoisonBox));
        CHECK(completed[r] == (masked ? 1u : 0u));
      }
    }
}

// Guards: .cta_group::2 TMA writes the issuing CTA's shared memory but completes the pair peer's
// barrier (the leader's), and the leader's phase covers the odd CTA's bytes; the odd CTA's own
// barrier at that offset receives nothing.
TEST_CASE("cluster: tma_load_2d_2sm lands in the odd CTA and completes the even CTA's barrier") {
  const Boxes boxes;
  for (uint64_t seed : kSeeds) {
    CAPTURE(seed);
    std::vector<uint16_t> out(2 * kBoxElems, 0), peer_seen(kBoxElems, 0);
    std::vector<uint32_t> flags(3, 7);
    REQUIRE_RUNS(run_at(seed, tma_2sm_kernel, cluster_launch(2, 32, 8192), boxes.map, out.data(), peer_seen.data(),
                        flags.data()));
    CHECK(std::vector<uint16_t>(out.begin(), out.begin() + kBoxElems) == boxes.box(0));
    CHECK(std::vector<uint16_t>(out.begin() + kBoxElems, out.end()) == boxes.box(16));
    CHECK(peer_seen == boxes.box(16));  // already there when the leader's phase completed
    CHECK(flags[1] == 0);               // the odd CTA's own barrier did not complete
    CHECK(flags[2] == 1);               // clearing bit 24 names the leader's barrier, as mapa does
  }
}

// Guards: a remote arrival is delivered to the peer's barrier and wakes its waiter, a store made
// before it is visible after the wait, and a remote arrive.expect_tx adds the bytes to the peer's
// tx-count (otherwise the phase completes before the box lands, or the tx-count underflows).
TEST_CASE("cluster: remote mbarrier arrive wakes the peer's waiter; remote arrive.expect_tx") {
  const Boxes boxes;
  for (uint64_t seed : {1, 2, 3, 4, 5, 8}) {
    CAPTURE(seed);
    uint32_t word = 0;
    std::vector<uint16_t> box(kBoxElems, 0);
    REQUIRE_RUNS(run_at(seed, remote_arrive_kernel, cluster_launch(2, 32, 8192), boxes.map, &word, box.data()));
    CHECK(word == 0xC0FFEE01u);
    CHECK(box == boxes.box(0));
  }
}


// ============================================================================ 3. commit arrivals

namespace {

// The even CTA's thread 0 commits (no MMA to track: the arrival follows at once in its queue).
// multicast: cta_group::2 .multicast::cluster 0b11; otherwise cta_group::2 to its own barrier.
// Each CTA then reports try_wait.parity 0 and 1 of its barrier (count 1): (0, 1) in phase 0 (a
// fresh barrier passes parity 1), (1, 0) after one arrival, (0, 1) again after two.
__global__ void commit_kernel(int multicast, uint32_t* phases) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t bar = tcg::smem_addr(smem), rank = tcg::cluster_ctarank();
  init_bars(bar);
  tcg::cluster_sync();
  if (threadIdx.x == 0) {
    if (rank == 0) {
      if (multicast) tcg::mma_commit_2sm_multicast(bar, 0b11);
      else tcg::mma_commit_2sm(bar);
    }
    if (multicast || rank == 0) tcg::mbarrier_wait_parity(bar, 0);
  }
  tcg::cluster_sync();  // every expected arrival has landed
  if (threadIdx.x == 0) {
    phases[2 * rank] = tcg::mbarrier_test_wait_parity(bar, 0);
    phases[2 * rank + 1] = tcg::mbarrier_test_wait_parity(bar, 1);
  }
}

}  // namespace

// Guards: a multicast commit arrives exactly once on the barrier at that offset in each masked
// CTA (a second arrival would complete phase 1, or be in flight at exit, which is reported);
// a plain cta_group::2 commit arrives only on the barrier its address names.
TEST_CASE("cluster: commit.cta_group::2 multicast arrives once per CTA; plain commit only on the named barrier") {
  for (int multicast : {1, 0})
    for (uint64_t seed : kSeeds) {
      INFO("multicast " << multicast << " seed " << seed);
      std::vector<uint32_t> phases(4, 7);
      REQUIRE_RUNS(run_at(seed, commit_kernel, cluster_launch(2, 32, 1024), multicast, phases.data()));
      CHECK(phases == std::vector<uint32_t>{1, 0, multicast ? 1u : 0u, multicast ? 0u : 1u});
    }
}
