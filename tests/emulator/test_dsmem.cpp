// test_dsmem.cpp — the emulator's distributed shared memory beyond 32-bit words
// (common/sim/dsmem.cpp): 16-byte ld/st.shared::cluster and the bulk copy from this CTA's shared
// memory into a peer's, completing on the peer's mbarrier.
//
// One hand-made kernel, launched as a cluster of 2 (or 4), runs either a correct use or one broken
// rule (`Bug`). Each rule's test shows the diagnostic for the broken kernel and a clean run, with
// the right data, for the correct one: a test that cannot fail guards nothing. Rules from the PTX
// ISA: §9.7.9.25.4.1 (bulk copy: size a multiple of 16, 16-byte alignment, destination and mbarrier
// in one CTA of the cluster, source in the issuing CTA), §5.4.2 (vector alignment), §9.7.12.4 (the
// async proxy reads the source: fence.proxy.async after ordinary stores), and the cluster rules
// (an address names a CTA of the cluster that is still running).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "cluster_test_util.h"

using namespace tcg_test;
using namespace tcg_test::cluster_test;  // kSeeds, cluster_launch, run_at, init_bars

namespace {

enum Bug {
  kNone,
  kV4Misaligned,        // st.shared::cluster.v4 at +4
  kCopySizeNot16,       // 24 bytes
  kCopyMisaligned,      // source at +8
  kCopyBarInIssuer,     // completes on the issuer's own barrier instead of the destination's
  kCopySrcInPeer,       // source names the peer's shared memory (must be shared::cta of the issuer)
  kCopyDstOutside,      // destination rank bits 3 in a cluster of 2
  kCopyNoFence,         // source written by st.shared.v4 without fence.proxy.async
  kCopyOverBarrier,     // destination covers the peer's mbarrier
  kCopyPeerExited,      // the destination CTA has exited
  kCopyBarUnpublished,  // the peer's barrier init is not published (no fence, no cluster barrier)
};

constexpr uint32_t kSrc = 0, kDst = 1024, kBar = 4096, kCopyBytes = 256, kSmem = 8192;

// CTA 0 (thread 0) fills 256 bytes of its shared memory with st.shared.v4, fences them for the
// async proxy, and copies them into CTA 1's at +1024, completing on CTA 1's barrier; CTA 1 waits
// on it and reports what landed. Separately every CTA stores 16 bytes into the next CTA with
// st.shared::cluster.v4 and, after a cluster barrier, reads the previous CTA's back with
// ld.shared::cluster.v4.
__global__ void dsmem_v4_kernel(int bug, uint32_t* landed, uint32_t* ring) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), t = threadIdx.x, rank = tcg::cluster_ctarank();
  const uint32_t n = tcg::cluster_nctarank(), next = (rank + 1) % n;
  const uint32_t bar = base + kBar;
  if (bug != kCopyBarUnpublished) init_bars(bar);
  else if (t == 0) tcg::mbarrier_init(bar, 1);  // no fence.mbarrier_init; a relaxed cluster barrier below
  if (t == 0 && rank == 1 && bug != kCopyPeerExited) tcg::mbarrier_arrive_expect_tx(bar, kCopyBytes);
  if (bug == kCopyBarUnpublished) {
    tcg::cluster_arrive_relaxed();
    tcg::cluster_wait();
  } else {
    tcg::cluster_sync();  // barriers initialised and published before a peer uses them
  }
  if (bug == kCopyPeerExited) {
    if (rank == 1) return;
    tcg::cluster_sync();  // completes once every thread of CTA 1 has exited
  }
  if (rank == 0 && t == 0) {
    for (uint32_t i = 0; i < kCopyBytes / 16; ++i)
      tcg::st_shared_v4(base + kSrc + 16 * i, 0xC0000000u | i, i, 2 * i, 3 * i);
    if (bug != kCopyNoFence) tcg::fence_proxy_async_shared_cta();
    uint32_t dst = tcg::mapa_shared_cluster(base + kDst, 1), src = base + kSrc, bytes = kCopyBytes;
    uint32_t cbar = tcg::mapa_shared_cluster(bar, 1);
    if (bug == kCopySizeNot16) bytes = 24;
    if (bug == kCopyMisaligned) src += 8;
    if (bug == kCopyBarInIssuer) cbar = bar;
    if (bug == kCopySrcInPeer) src = tcg::mapa_shared_cluster(base + kSrc, 1);
    if (bug == kCopyDstOutside) dst = (3u << 24) | (dst & 0xFFFFFFu);
    if (bug == kCopyOverBarrier) dst = tcg::mapa_shared_cluster(bar - 128, 1);
    tcg::bulk_copy_smem_to_cluster(dst, src, bytes, cbar);
  }
  if (bug == kCopyPeerExited) return;
  if (rank == 1 && t == 0) {
    tcg::mbarrier_wait_parity(bar, 0);
    for (uint32_t i = 0; i < kCopyBytes / 4; ++i) landed[i] = *reinterpret_cast<volatile uint32_t*>(smem + kDst + 4 * i);
  }
  if (t == 0) {
    const uint32_t off = bug == kV4Misaligned ? 2048 + 4 : 2048;
    tcg::st_shared_cluster_v4(tcg::mapa_shared_cluster(base + off, next), 0xB0000000u | rank, rank, next, 7);
  }
  tcg::cluster_sync();  // the ring stores have landed; the copy's barrier was waited for
  if (t == 0) {
    uint32_t v[4];
    tcg::ld_shared_cluster_v4(tcg::mapa_shared_cluster(base + 2048, next), v);  // what this CTA stored there
    for (int i = 0; i < 4; ++i) ring[rank * 4 + i] = v[i];
  }
  tcg::cluster_sync();  // the loads of the next CTA are done before it exits
}

std::string run_dsmem(uint64_t seed, int bug, std::vector<uint32_t>& landed, std::vector<uint32_t>& ring,
                      uint32_t ctas = 2) {
  landed.assign(kCopyBytes / 4, 0);
  ring.assign(4 * ctas, 0);
  return run_at(seed, dsmem_v4_kernel, cluster_launch(ctas, 64, kSmem), bug, landed.data(), ring.data());
}

}  // namespace

// Guards: the bulk copy lands the source's bytes in the peer at the mapa'd offset and completes
// the peer's barrier (also when the seed performs it late: seed 4); the 16-byte remote store lands
// in the next CTA and the remote load reads it back there.
TEST_CASE("dsmem: bulk copy into a peer and 16-byte ld/st.shared::cluster move the right bytes") {
  for (uint32_t ctas : {2u, 4u})
    for (uint64_t seed : kSeeds) {
      INFO("ctas " << ctas << " seed " << seed);
      std::vector<uint32_t> landed, ring;
      REQUIRE_RUNS(run_dsmem(seed, kNone, landed, ring, ctas));
      for (uint32_t i = 0; i < kCopyBytes / 16; ++i) {
        INFO("chunk " << i);
        CHECK(landed[4 * i + 0] == (0xC0000000u | i));
        CHECK(landed[4 * i + 1] == i);
        CHECK(landed[4 * i + 2] == 2 * i);
        CHECK(landed[4 * i + 3] == 3 * i);
      }
      for (uint32_t r = 0; r < ctas; ++r) {
        INFO("rank " << r);
        CHECK(ring[4 * r + 0] == (0xB0000000u | r));
        CHECK(ring[4 * r + 2] == (r + 1) % ctas);
      }
    }
}

// Guards each rule: the broken kernel is reported with the rule's name and the CTA (the correct
// kernel above runs clean under the same seeds, so each diagnostic is caused by its one change).
TEST_CASE("dsmem: each broken rule is reported") {
  const struct { int bug; std::vector<std::string> parts; } cases[] = {
      {kV4Misaligned, {"misaligned vector access", "st.shared::cluster.v4.b32", "rank "}},
      {kCopySizeNot16, {"bad bulk copy", "24 bytes", "multiple of 16"}},
      {kCopyMisaligned, {"misaligned bulk copy", "16-byte aligned"}},
      {kCopyBarInIssuer, {"bulk copy mbarrier in the wrong CTA", "CTA rank 0", "destination CTA"}},
      {kCopySrcInPeer, {"shared memory access outside this CTA", "cp.async.bulk source (shared::cta)"}},
      {kCopyDstOutside, {"shared::cluster address outside the cluster", "names CTA rank 3"}},
      {kCopyNoFence, {"missing fence.proxy.async", "bulk copy reads in the async proxy"}},
      {kCopyOverBarrier, {"write over a live mbarrier", "cp.async.bulk destination"}},
      {kCopyPeerExited, {"rank 1"}},
      {kCopyBarUnpublished, {"rank 0"}},
  };
  for (const auto& c : cases)
    for (uint64_t seed : kSeeds) {
      INFO("bug " << c.bug << " seed " << seed);
      std::vector<uint32_t> landed, ring;
      const std::string err = run_dsmem(seed, c.bug, landed, ring);
      INFO(err);
      REQUIRE(!err.empty());
      for (const std::string& p : c.parts) CHECK(contains(err, p));
      if (c.bug == kCopyPeerExited) CHECK(contains(err, "access to a CTA that has exited"));
      if (c.bug == kCopyBarUnpublished)
        CHECK((contains(err, "before its init was published") || contains(err, "not fenced for the async proxy")));
    }
}
