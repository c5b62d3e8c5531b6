// test_timing_model_cluster.cpp — the timing model's cluster mechanisms (common/sim/timing.cpp,
// docs/timing_model.md "Cluster mechanisms"), each measured on an H100 (results/micro_h100.csv):
//  * a .release.cluster remote arrive pays a GPU-scope membar after its warp's global stores
//    have drained; a .release.cta one does not;
//  * a multicast box is charged to the ISSUING SM's TMA unit once, and each other destination's
//    TMA unit half a box (the receiver's share, measured with CTAs taking turns);
//  * a bulk copy into a peer's shared memory takes its bytes at the SM-to-SM rate;
//  * the ranges (set_model_bound): the slow end is slower than the point, the fast end faster,
//    and the point comes back unchanged.
// Expected values come from the parameter table's values (B200 defaults).
#include <doctest/doctest.h>

#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;

namespace {

constexpr double kClockGHz = 1.86, kMembarCycles = 593, kDsmemBytesPerCycle = 21, kDsmemCopyCycles = 80;
constexpr double kTmaBoxCycles = 101, kTmaSmBytesPerNs = 311, kMulticastReceiveShare = 0.5;

// Each warp stores 32 x 16 x 16 bytes (unless `stores` is 0), then lane 0 arrives on rank 0's
// barrier with .release.cluster (`cluster_scope` 1) or .release.cta; rank 0's thread 0 records
// when the last arrival has landed.
__global__ void release_kernel(int stores, int cluster_scope, uint4* buf, uint64_t* done) {
  const uint32_t base = tcg::smem_addr(tcg::aligned_smem_base()), rank = tcg::cluster_ctarank();
  const uint32_t t = threadIdx.x;
  if (t == 0) {
    tcg::mbarrier_init(base, 2 * blockDim.x / 32);
    tcg::fence_mbarrier_init();
  }
  tcg::cluster_sync();
  for (int i = 0; stores && i < 16; ++i)
    tcg::store_16B(buf + (rank * blockDim.x + t) * 16 + i, make_uint4(1, 2, 3, 4));
  __syncwarp();
  if (t % 32 == 0) {
    const uint32_t bar = tcg::mapa_shared_cluster(base, 0);
    if (cluster_scope) tcg::mbarrier_arrive_cluster(bar);
    else tcg::mbarrier_arrive_cluster_cta_scope(bar);
  }
  if (rank == 0 && t == 0) {
    tcg::mbarrier_wait_parity(base, 0);
    *done = tcg::globaltimer();
  }
  tcg::cluster_sync();
}

double release_ns(int stores, int cluster_scope) {
  ModelScope scope(/*skip_math=*/true, /*trace=*/false);
  std::vector<uint4> buf(2 * 128 * 16);
  const auto reg = registered(buf, "buf");
  uint64_t done = 0;
  const tcg::LaunchDims dims{dim3(2), dim3(128), 64 + tcg::kSmemAlignSlack, dim3(2)};
  tcg::launch_kernel(release_kernel, dims, nullptr, stores, cluster_scope, buf.data(), &done);
  return double(done);
}

// A CTA pair: rank 0 copies `bytes` of its shared memory into rank 1's, which records when its
// barrier completed.
__global__ void dsmem_copy_kernel(uint32_t bytes, uint64_t* t) {
  const uint32_t base = tcg::smem_addr(tcg::aligned_smem_base()), rank = tcg::cluster_ctarank();
  const uint32_t bar = base + 65536;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
    if (rank == 1) tcg::mbarrier_arrive_expect_tx(bar, bytes);
  }
  tcg::cluster_sync();
  if (threadIdx.x == 0 && rank == 0) {
    t[0] = tcg::globaltimer();
    tcg::bulk_copy_smem_to_cluster(tcg::mapa_shared_cluster(base + 32768, 1), base, bytes,
                                   tcg::mapa_shared_cluster(bar, 1));
  }
  if (threadIdx.x == 0 && rank == 1) {
    tcg::mbarrier_wait_parity(bar, 0);
    t[1] = tcg::globaltimer();
  }
  tcg::cluster_sync();
}

// Multicast: once rank 1 has issued its multicasts to both CTAs (mode 1; none in mode 0) it lets
// rank 0 load `boxes` 16 KiB boxes for itself, back to back; rank 0 records when they landed. Every
// box has its own destination (own boxes first, then the multicast ones): copies in flight at once
// must not write the same bytes.
__global__ void mcast_kernel(const __grid_constant__ CUtensorMap map, int boxes, int mode, uint64_t* t) {
  const uint32_t base = tcg::smem_addr(tcg::aligned_smem_base()), rank = tcg::cluster_ctarank();
  const uint32_t own_bar = base + 2 * uint32_t(boxes) * 16384, mc_bar = own_bar + 8, go_bar = own_bar + 16;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(own_bar, 1);
    tcg::mbarrier_init(mc_bar, 1);
    tcg::mbarrier_init(go_bar, 1);
    tcg::fence_mbarrier_init();
    if (rank == 0) tcg::mbarrier_arrive_expect_tx(own_bar, uint32_t(boxes) * 16384);
    if (mode == 1) tcg::mbarrier_arrive_expect_tx(mc_bar, uint32_t(boxes) * 16384);
  }
  tcg::cluster_sync();
  if (threadIdx.x == 0 && rank == 1) {  // rank 1 issues its multicasts, then lets rank 0 start
    for (int i = 0; mode == 1 && i < boxes; ++i) tcg::tma_load_2d_multicast(base + uint32_t(boxes + i) * 16384, &map, 0, 0, mc_bar, 0b11);
    tcg::mbarrier_arrive_cluster_cta_scope(tcg::mapa_shared_cluster(go_bar, 0));
  }
  if (threadIdx.x == 0 && rank == 0) {
    tcg::mbarrier_wait_parity(go_bar, 0);
    const uint64_t t0 = tcg::globaltimer();
    for (int i = 0; i < boxes; ++i) tcg::tma_load_2d(base + uint32_t(i) * 16384, &map, 0, 0, own_bar);
    tcg::mbarrier_wait_parity(own_bar, 0);
    *t = tcg::globaltimer() - t0;
  }
  if (threadIdx.x == 0 && mode == 1) tcg::mbarrier_wait_parity(mc_bar, 0);
  tcg::cluster_sync();
}

}  // namespace

// Guards: the release membar. Without stores, .release.cluster lands the membar later than
// .release.cta; after a tile of stores it also waits for them to drain.
TEST_CASE("timing model: a .release.cluster arrive pays a membar after its warp's stores drain") {
  const double cta = release_ns(0, 0), cluster = release_ns(0, 1);
  CHECK(cluster - cta == doctest::Approx(kMembarCycles / kClockGHz).epsilon(0.05));
  const double cta_st = release_ns(1, 0), cluster_st = release_ns(1, 1);
  CHECK(cta_st >= cta);
  CHECK(cluster_st - cta_st >= kMembarCycles / kClockGHz * 0.95);  // the membar, and the drain on top
  CHECK(cluster_st > cluster);  // the stores' drain shows
}

// Guards: a bulk copy into a peer streams at the SM-to-SM rate, then its latency.
TEST_CASE("timing model: a DSMEM bulk copy takes bytes / SM-to-SM rate + its latency") {
  ModelScope scope(/*skip_math=*/true, /*trace=*/false);
  for (uint32_t bytes : {1024u, 16384u, 32768u}) {
    CAPTURE(bytes);
    uint64_t t[2] = {0, 0};
    const tcg::LaunchDims dims{dim3(2), dim3(32), 65536 + 64 + tcg::kSmemAlignSlack, dim3(2)};
    tcg::launch_kernel(dsmem_copy_kernel, dims, nullptr, bytes, t);
    const double expect = (bytes / kDsmemBytesPerCycle + kDsmemCopyCycles) / kClockGHz;
    CHECK(double(t[1] - t[0]) >= expect);
    CHECK(double(t[1] - t[0]) <= expect + 200);  // + the waiter's hand-off (118 ns) and issue
  }
}

// Guards: the issuing SM pays for a multicast box, each other destination half a box. Rank 1's 6
// multicasts, issued just before rank 0 starts its own 6 boxes, delay rank 0 by at most half of
// 6 boxes' TMA-unit time (the part still queued when it starts), not by all of it (the whole box
// charged to every destination), and not by nothing (the receiver paying nothing).
TEST_CASE("timing model: a multicast box is charged to the issuing SM, and a share to each receiver") {
  std::vector<uint16_t> a(128 * 64, 0x3F80);
  const auto reg = registered(a, "A");
  const CUtensorMap map = map2d(a.data(), 128, 64, 128, true);
  constexpr uint32_t kBoxes = 6;  // 2 x 6 boxes of 16 KiB fit a CTA's shared memory
  auto run = [&](int mode) {
    ModelScope scope(/*skip_math=*/true, /*trace=*/false);
    uint64_t t = 0;
    const tcg::LaunchDims dims{dim3(2), dim3(32), 2 * kBoxes * 16384 + 64 + tcg::kSmemAlignSlack, dim3(2)};
    tcg::launch_kernel(mcast_kernel, dims, nullptr, map, int(kBoxes), mode, &t);
    return double(t);
  };
  const double alone = run(0), beside_mcast = run(1);
  const double box_ns = kTmaBoxCycles / kClockGHz + 16384 / kTmaSmBytesPerNs;
  CHECK(alone > 0);
  CHECK(beside_mcast - alone > 0.25 * kBoxes * kMulticastReceiveShare * box_ns);
  CHECK(beside_mcast - alone <= 1.02 * kBoxes * kMulticastReceiveShare * box_ns);
}

// Guards: the ranges. Slow end >= point >= fast end, and the point is restored exactly.
TEST_CASE("timing model: the range's ends bracket the point") {
  const double point = release_ns(1, 1);
  tcsim::set_model_bound(+1);
  const double slow = release_ns(1, 1);
  tcsim::set_model_bound(-1);
  const double fast = release_ns(1, 1);
  tcsim::set_model_bound(0);
  CHECK(slow > point);
  CHECK(fast < point);
  CHECK(release_ns(1, 1) == point);
  CHECK(tcsim::model_ranges_markdown().find("| release membar (.release.cluster arrive) | 593 |") != std::string::npos);
}
