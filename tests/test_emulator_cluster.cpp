// test_emulator_cluster.cpp — the emulator's cluster and CTA-pair model (common/sim/memory.cpp,
// sync.cpp, mbarrier.cpp, copies.cpp, tmem.cpp, mma.cpp, launch.cpp) tested through small kernels.
//
// Every kernel here is hand-made for one rule and uses only the ptx.cuh wrappers, launched with a
// cluster shape in the emulator. Expected values come from the CPU and from the fact sheet
// (shared/reference/tcgen05-facts.md, "facts §n"): the cta_group::2 operand split and D layouts A
// and B (§6.3, §10), multicast and 2-CTA TMA (§9.1), remote mbarrier arrivals and the cluster
// barrier (§8.3), the peer-bit trick (§8.4). Each test says what it guards, i.e. what would go
// unnoticed if the emulator did not model the rule. Outcomes that must not depend on the
// schedule are checked under seeds 1 (random), 2 (eager) and 4 (lazy asynchronous completion).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;

namespace {

constexpr uint64_t kSeeds[] = {1, 2, 4};

tcg::LaunchDims cluster_launch(uint32_t nctas, uint32_t threads, uint32_t smem) {
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

// A rows x k row-major BF16 tensor, loaded `box_rows` rows at a time (128B swizzle when k = 64).
CUtensorMap map2d(const uint16_t* base, uint32_t rows, uint32_t k, uint32_t box_rows, bool swizzle128) {
  tcg::TiledMap t;
  t.base = base;
  t.dims[0] = k;
  t.dims[1] = rows;
  t.strides[0] = uint64_t(k) * 2;
  t.box[0] = k;
  t.box[1] = box_rows;
  t.swizzle = swizzle128 ? tcg::TmaSwizzle::k128B : tcg::TmaSwizzle::kNone;
  return tcg::make_tensor_map(t);
}

// A 32 x 64 BF16 tensor (values 1..9) whose 16-row boxes (2 KiB, no swizzle) the TMA tests load.
constexpr uint32_t kBoxBytes = 2048, kBoxElems = kBoxBytes / 2;
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
const std::vector<uint16_t> kPoisonBox(kBoxElems, 0xFFFF);

// Thread 0 initialises `n` barriers (count 1) at `bar`, `bar` + 8, ... and, with `fence`, publishes
// them to the async proxy and the cluster; the caller's cluster barrier then orders them before use.
__device__ inline void init_bars(uint32_t bar, int n = 1, bool fence = true) {
  if (threadIdx.x != 0) return;
  for (int i = 0; i < n; ++i) tcg::mbarrier_init(bar + 8 * i, 1);
  if (fence) tcg::fence_mbarrier_init();
}

// ============================================================================ 1. the pair MMA
//
// A cluster of 2 CTAs (or 4: two pairs computing the same product), 128 threads each. CTA v of a
// pair holds A rows [v M/2, (v+1) M/2) and B rows [v N/2, (v+1) N/2) at the same shared-memory
// offsets, K = 64 (one 128B-swizzle row, 4 MMAs at +32 bytes), placed by ordinary stores or by
// tma_load_2d_2sm into the even CTA's barrier. The even CTA issues the MMAs and a multicast
// commit; both CTAs read their own TMEM with warps 0-3 and write D by *local* row, so a CTA
// holding the other CTA's rows fails the comparison.
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
  // local row l % 64, columns [N/2 * (l / 64), +N/2) in TMEM columns [0, N/2) (facts §6.3).
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

// ============================================================================ 2-4. TMA and remote arrivals

namespace {

// Multicast: every CTA initialises the barrier at the same offset; the masked ones expect one
// box. CTA `issuer` multicasts; the masked CTAs wait on their own barrier and copy their tile;
// after a cluster barrier the unmasked ones copy theirs and test their barrier.
// out: [rank][kBoxElems]; completed: [rank], phase 0 of the CTA's barrier completed.
__global__ void multicast_kernel(const __grid_constant__ CUtensorMap map, uint32_t mask, uint32_t issuer, uint16_t* out,
                                 uint32_t* completed) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + 4096, rank = tcg::cluster_ctarank();
  const bool masked = (mask >> rank) & 1u;
  init_bars(bar);
  if (threadIdx.x == 0 && masked) tcg::mbarrier_arrive_expect_tx(bar, kBoxBytes);
  tcg::cluster_sync();  // every barrier is initialised and published before the multicast signals it
  if (threadIdx.x == 0) {
    if (rank == issuer) tcg::tma_load_2d_multicast(base, &map, 0, 0, bar, uint16_t(mask));
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
    if (rank == 1) flags[2] = (bar & 0xFEFFFFFFu) == leader_bar;  // CUTLASS's peer-bit trick (facts §8.4)
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
TEST_CASE("cluster: multicast TMA lands in every masked CTA and completes each one's own barrier") {
  const Boxes boxes;
  const struct { uint32_t ctas, mask, issuer; } cases[] = {{2, 0b11, 0}, {4, 0b101, 1}};
  for (const auto& k : cases)
    for (uint64_t seed : kSeeds) {
      INFO("ctas " << k.ctas << " mask " << k.mask << " seed " << seed);
      std::vector<uint16_t> out(k.ctas * kBoxElems, 0);
      std::vector<uint32_t> completed(k.ctas, 7);
      REQUIRE_RUNS(run_at(seed, multicast_kernel, cluster_launch(k.ctas, 32, 8192), boxes.map, k.mask, k.issuer,
                          out.data(), completed.data()));
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

// ============================================================================ 5-6, 8. DSMEM and barrier.cluster

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

// ============================================================================ 9. commit arrivals

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

// ============================================================================ 7. diagnostics

namespace {

enum Bug : int {
  kMixedCtaGroup, kOddCtaMma, kPairInClusterOfOne, kPairDifferentWarps, kPairDifferentDst, kTmaMaskOutside,
  kCommitMaskOutside, kNoMbarrierAtOffset, kPeerExited, kExitWithTma, kArriveBeforePublish, kRelaxedArriveNoFence,
  kReleaseArrivePublishes, kTmaBarrierNotFenced, kWaitWithoutArrive, kDoubleArrive, kDsmemOutOfBounds, kDeadlock,
  kTmaBarrierInPeer, kMapaOutside, kClusterAddressOutside,
};
constexpr uint32_t kMagic = 0x600DF1A6u;

// One kernel per bug (64 threads per CTA). Offsets: the TMA box at +0, the barrier at +4096, the
// TMEM slot at +4104, a flag at +4112. t0 / t1: thread 0 of CTA rank 0 / rank 1.
__global__ void bug_kernel(const __grid_constant__ CUtensorMap map, int bug) {
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
  return run_at(seed, bug_kernel, cluster_launch(uint32_t(ctas), 64, 8192), boxes.map, bug);
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
