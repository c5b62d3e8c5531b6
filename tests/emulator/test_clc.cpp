// tests/emulator/test_clc.cpp — cluster launch control in the emulator (common/sim/clc.cpp):
// clusterlaunchcontrol.try_cancel / query_cancel and the launch of clusters over time.
//
// Each kernel is hand-made with the ptx.cuh wrappers only. One thread per cluster runs the loop
// of the PTX ISA's example (§9.7.13.17): take a tile, ask to cancel a not-yet-launched cluster,
// wait for the response on an mbarrier, decode it, and stop at the first failure. A `bug`
// argument breaks one rule at a time; each test says what it guards, i.e. what would go
// unnoticed if the emulator did not model that rule.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;

namespace {

enum Bug {
  kNone,
  kNoWait,            // loads the response without waiting on the mbarrier
  kRetryAfterFail,    // issues try_cancel again after seeing a failed response
  kMisaligned,        // response at an 8-byte (not 16-byte) aligned address
  kExpectTx8,         // expect_tx(8) instead of the 16 bytes the response delivers
  kCtaidUnchecked,    // get_first_ctaid without testing is_canceled
  kTwoInFlight,       // a second try_cancel into the buffer before the first response landed
  kGuessNext,         // takes tile + gridDim.x instead of decoding the response
  kAskOnce,           // not a bug: a cluster asks at most twice, then exits
  kReadFirst,         // loads the response buffer before any try_cancel wrote it
  kNoRequest,         // not a bug: takes its own tile and exits without asking (timing baseline)
  kNoProxyFence,      // reads the response and asks again without fence.proxy.async in between
};

// taken[t]: how often tile t was processed; order[i]: the tiles of cluster 0 (stops at 64).
__global__ void clc_loop_kernel(uint32_t* taken, uint32_t* order, int bug) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t response = base + (bug == kMisaligned ? 8 : 0), bar = base + 32;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t tile = blockIdx.x, phase = 0, n = 0, retried = 0;
  if (bug == kReadFirst && tcg::clc_query_is_canceled(tcg::clc_load_response(response))) return;
  if (bug == kNoRequest) {
    taken[tile]++;
    return;
  }
  for (;;) {
    taken[tile]++;
    if (blockIdx.x == 0 && n < 64) order[n++] = tile;
    if (bug == kAskOnce && retried++) break;  // a cluster may stop asking at any time (after a success)
    tcg::mbarrier_arrive_expect_tx(bar, bug == kExpectTx8 ? 8 : 16);
    tcg::clc_try_cancel(response, bar);
    if (bug == kTwoInFlight) tcg::clc_try_cancel(response, bar);
    if (bug != kNoWait) tcg::mbarrier_wait_parity(bar, phase);
    phase ^= 1;
    const tcg::ClcResponse r = tcg::clc_load_response(response);
    // The generic-proxy read before the next request's async-proxy write (§9.7.13.17's example).
    if (bug != kNoProxyFence) tcg::fence_proxy_async_shared_cta();
    if (bug == kCtaidUnchecked) {
      tile = tcg::clc_query_first_ctaid_x(r);
      if (!tcg::clc_query_is_canceled(r)) break;
      continue;
    }
    if (!tcg::clc_query_is_canceled(r)) {
      if (bug == kRetryAfterFail && !retried++) continue;
      break;
    }
    tile = bug == kGuessNext ? tile + gridDim.x / 2 : tcg::clc_query_first_ctaid_x(r);
    if (bug == kGuessNext && tile >= gridDim.x) break;
  }
  if (bug == kNoWait) tcg::mbarrier_wait_parity(bar, phase ^ 1);  // let the last response land before exiting
}

struct ClcRun {
  std::string err;
  std::vector<uint32_t> taken, order;
  uint64_t canceled = 0, failed = 0;
};

ClcRun run_clc(uint64_t seed, int sms, uint32_t tiles, int bug, int ctas_per_sm = 1) {
  SimOptions opt(seed);
  tcsim::Options o = tcsim::options();
  o.num_sms = sms;
  o.ctas_per_sm = ctas_per_sm;
  tcsim::set_options(o);
  ClcRun r;
  r.taken.assign(tiles, 0);
  r.order.assign(64, ~0u);
  r.err = sim_error([&] {
    tcg::launch_kernel(clc_loop_kernel, tcg::LaunchDims{dim3(tiles), dim3(64), 1024 + tcg::kSmemAlignSlack}, nullptr,
                       r.taken.data(), r.order.data(), bug);
  });
  r.canceled = tcsim::last_stats().clc_canceled;
  r.failed = tcsim::last_stats().clc_failed;
  return r;
}

// Under seeds 1..8, how many runs of `bug` were reported with a diagnostic containing `what`.
int caught(int bug, const char* what, int sms = 2, uint32_t tiles = 12) {
  int n = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const ClcRun r = run_clc(seed, sms, tiles, bug);
    INFO("seed " << seed << ": " << r.err);
    if (contains(r.err, what)) ++n;
  }
  return n;
}

}  // namespace

// Guards: the semantics a dynamic scheduler relies on. Every tile must be processed exactly once
// (a cancel hands out a cluster that then never launches, and never the same one twice); with
// fewer SMs than clusters some cancels succeed, and every launched cluster ends with one failure.
TEST_CASE("clc: with fewer SMs than clusters, cancels succeed and fail; every tile is taken exactly once") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    INFO("seed " << seed);
    const ClcRun r = run_clc(seed, /*sms=*/2, /*tiles=*/24, kNone);
    REQUIRE(r.err == "");
    for (uint32_t t = 0; t < 24; ++t) CHECK(r.taken[t] == 1);
    CHECK(r.canceled > 0);
    CHECK(r.failed >= 1);
    CHECK(r.canceled + (24 - r.canceled) == 24);  // launched clusters = tiles not canceled
    CHECK(r.failed == 24 - r.canceled);           // each launched cluster stops at its first failure
  }
}

// Guards: a cancel must fail once every cluster has been launched (an emulator that cancels
// launched clusters, or invents work, would pass the test above but not this one).
TEST_CASE("clc: with more SMs than clusters every cluster is launched and every cancel fails") {
  for (uint64_t seed : {1, 2, 4}) {
    const ClcRun r = run_clc(seed, /*sms=*/16, /*tiles=*/4, kNone);
    REQUIRE(r.err == "");
    CHECK(r.canceled == 0);
    CHECK(r.failed == 4);
    for (uint32_t t = 0; t < 4; ++t) CHECK(r.taken[t] == 1);
  }
}

// Guards: whether a cancel succeeds depends on when clusters launch; with clusters that leave
// early (here: after two tiles) different seeds must see different counts (a fixed outcome would
// hide a kernel that only works when every cancel fails or succeeds).
TEST_CASE("clc: the number of successful cancels depends on the seed") {
  std::vector<uint64_t> counts;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const ClcRun r = run_clc(seed, 2, 24, kAskOnce);
    REQUIRE(r.err == "");
    for (uint32_t t = 0; t < 24; ++t) CHECK(r.taken[t] == 1);
    counts.push_back(r.canceled);
  }
  bool differ = false;
  for (uint64_t c : counts) differ = differ || c != counts[0];
  CHECK(differ);
}

// Guards: the adversarial seeds hand out waiting clusters out of launch order, so a kernel that
// guesses its next tile instead of decoding the response takes tiles twice or loses them.
TEST_CASE("clc: a kernel that guesses the next tile instead of decoding the response loses or repeats tiles") {
  bool out_of_order = false, wrong = false;
  // (Under a lazy seed the newest request is served first, so one CTA may take every tile.)
  for (uint64_t seed : {4, 8, 12, 16, 20, 24}) {
    const ClcRun r = run_clc(seed, 2, 24, kNone);
    REQUIRE(r.err == "");
    for (size_t i = 1; i < r.order.size() && r.order[i] != ~0u; ++i) out_of_order = out_of_order || r.order[i] < r.order[i - 1];
    const ClcRun g = run_clc(seed, 2, 24, kGuessNext);
    for (uint32_t t = 0; t < 24; ++t) wrong = wrong || g.taken[t] != 1;
  }
  CHECK(out_of_order);
  CHECK(wrong);
}

TEST_CASE("clc: reading the response before its mbarrier completed is reported") {
  CHECK(caught(kNoWait, "try_cancel response read before its mbarrier completed") >= 1);
}

TEST_CASE("clc: reading a response buffer that no try_cancel has written is reported") {
  CHECK(caught(kReadFirst, "no response has landed there yet") == 8);
}

TEST_CASE("clc: try_cancel after a failed one is reported (undefined behaviour)") {
  CHECK(caught(kRetryAfterFail, "try_cancel after a failed try_cancel") == 8);
}

TEST_CASE("clc: the response must be 16-byte aligned") {
  CHECK(caught(kMisaligned, "misaligned try_cancel response") == 8);
}

TEST_CASE("clc: expect_tx must announce the 16 bytes of the response") {
  CHECK(caught(kExpectTx8, "tx-count underflow") == 8);
}

TEST_CASE("clc: get_first_ctaid of a failed response is reported (undefined behaviour)") {
  CHECK(caught(kCtaidUnchecked, "get_first_ctaid of a failed try_cancel") == 8);
}

TEST_CASE("clc: a second try_cancel into a buffer whose response is in flight is reported") {
  // (Where the first response lands before the second request, the load is reported instead.)
  CHECK(caught(kTwoInFlight, "reused while a response is in flight") >= 1);
}

namespace {
// Clusters of 2: rank 0 issues the multicast try_cancel, each CTA arms its own barrier (expect_tx
// 16 at the same offset) and decodes the response itself; both record the tiles they see.
// bug 1: rank 1 never initialises its barrier; bug 2: rank 1 exits before rank 0 asks.
__global__ void clc_multicast_kernel(uint32_t* seen, int bug) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t response = base, bar = base + 32;
  const uint32_t rank = tcg::cluster_ctarank();
  if (threadIdx.x == 0 && !(bug == 1 && rank == 1)) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::cluster_sync();
  if (bug == 2 && rank == 1) return;
  // The whole warp runs the loop (the cluster barrier is .aligned: every lane executes it); lane 0
  // counts, arms and asks.
  {
    const bool lead = threadIdx.x == 0;
    uint32_t cluster = blockIdx.x / 2, phase = 0;
    for (;;) {
      if (lead) seen[2 * cluster + rank]++;
      if (lead && (bug != 1 || rank == 0)) tcg::mbarrier_arrive_expect_tx(bar, 16);
      // Both CTAs have armed their barriers for this round before rank 0 asks.
      tcg::cluster_sync();
      if (lead && rank == 0) tcg::clc_try_cancel_multicast(response, bar);
      if (lead) tcg::mbarrier_wait_parity(bar, phase);
      __syncwarp();  // the other lanes read the response after lane 0 saw it land
      phase ^= 1;
      const tcg::ClcResponse r = tcg::clc_load_response(response);
      tcg::fence_proxy_async_shared_cta();  // this read before the next request's write (§9.7.13.17)
      if (!tcg::clc_query_is_canceled(r)) break;
      cluster = tcg::clc_query_first_ctaid_x(r) / 2;
      tcg::cluster_sync();  // both have read the response before the next request overwrites it
    }
  }
  tcg::cluster_sync();  // rank 0's last request wrote into rank 1: neither exits before the other is done
}
}  // namespace

// Guards: the multicast form writes one decision to every CTA of the cluster (each CTA would
// otherwise see different tiles, or none), and its rules: every CTA's barrier must exist, and no
// CTA of the cluster may have exited.
TEST_CASE("clc: multicast try_cancel delivers the same response to both CTAs of a cluster") {
  int remote_missing = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    SimOptions opt(seed);
    tcsim::Options o = tcsim::options();
    o.num_sms = 4;
    o.ctas_per_sm = 1;
    tcsim::set_options(o);
    std::vector<uint32_t> seen(2 * 10, 0);
    const tcg::LaunchDims dims{dim3(20), dim3(32), 1024 + tcg::kSmemAlignSlack, dim3(2)};
    const std::string err = sim_error([&] { tcg::launch_kernel(clc_multicast_kernel, dims, nullptr, seen.data(), 0); });
    INFO("seed " << seed << ": " << err);
    REQUIRE(err == "");
    for (uint32_t i = 0; i < 20; ++i) CHECK(seen[i] == 1);
    CHECK(tcsim::last_stats().clc_canceled > 0);
    std::vector<uint32_t> seen1(20, 0), seen2(20, 0);
    const std::string e1 = sim_error([&] { tcg::launch_kernel(clc_multicast_kernel, dims, nullptr, seen1.data(), 1); });
    // Reported at rank 0's request (the barrier missing in the peer), or at rank 1's own wait when
    // that comes first; the first must show under some seed.
    CHECK((contains(e1, "no mbarrier at that offset") || contains(e1, "uninitialised mbarrier")));
    remote_missing += contains(e1, "no mbarrier at that offset");
    // A cluster barrier the exited CTA no longer joins also shows up; either way it is reported.
    const std::string e2 = sim_error([&] { tcg::launch_kernel(clc_multicast_kernel, dims, nullptr, seen2.data(), 2); });
    CHECK(contains(e2, "exited"));
  }
  CHECK(remote_missing >= 1);
}

// Guards: the timing model charges a try_cancel its round trip (the parameter "clusterlaunchcontrol
// .try_cancel round trip", an estimate) between the issue and the mbarrier's completion. One CTA,
// one request that fails; against the same kernel that does not ask, the difference is the round
// trip and the waiter's mbarrier hand-off (220 cycles at 1.86 GHz = 118.3 ns), less the part of
// the hand-off that the other kernel spends draining its one store before it exits (the thread
// exits once its stores reached L2), plus a few issue cycles.
TEST_CASE("clc: the timing model charges one try_cancel round trip") {
  CHECK(contains(tcsim::model_parameters_markdown(), "clusterlaunchcontrol.try_cancel round trip | 600 | ns | estimate"));
  auto model_ns = [](int bug) {
    SimOptions opt(1);
    tcsim::Options o = tcsim::options();
    o.timing = true;
    tcsim::set_options(o);
    std::vector<uint32_t> taken(1, 0), order(64, 0);
    const std::string err = sim_error([&] {
      tcg::launch_kernel(clc_loop_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024 + tcg::kSmemAlignSlack}, nullptr,
                         taken.data(), order.data(), bug);
    });
    REQUIRE(err == "");
    CHECK(taken[0] == 1);
    return tcsim::last_stats().model_ns;
  };
  const double with = model_ns(kNone), without = model_ns(kNoRequest);
  INFO("with a request " << with << " ns, without " << without << " ns");
  const double handoff_ns = tcsim::model_param("mbarrier hand-off") / tcsim::model_param("SM clock");
  CHECK(handoff_ns == doctest::Approx(118.28).epsilon(1e-3));
  CHECK(with - without >= 600.0 + handoff_ns - 20.0);
  CHECK(with - without < 600.0 + handoff_ns + 20.0);
}

namespace {
// Thread 32 reads the first response and hands the buffer back on `empty`; thread 0 then asks
// again into the same buffer. fence.proxy.async orders the generic read before the async write:
// mode 0 in the reader before its arrive, mode 1 in the issuer after its wait (both correct,
// PTX ISA §8.6: the fence need only lie on the causality path between the two), mode 2 nowhere.
__global__ void clc_fence_place_kernel(int mode) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t response = base, full = base + 32, empty = base + 40;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(full, 1);
    tcg::mbarrier_init(empty, 1);
    tcg::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tcg::mbarrier_arrive_expect_tx(full, 16);
    tcg::clc_try_cancel(response, full);
    tcg::mbarrier_wait_parity(empty, 0);
    if (mode == 1) tcg::fence_proxy_async_shared_cta();
    tcg::mbarrier_arrive_expect_tx(full, 16);
    tcg::clc_try_cancel(response, full);  // (nobody decoded a failure: a second request is defined)
    tcg::mbarrier_wait_parity(full, 1);
  } else if (threadIdx.x == 32) {
    tcg::mbarrier_wait_parity(full, 0);
    (void)tcg::clc_load_response(response);
    if (mode == 0) tcg::fence_proxy_async_shared_cta();
    tcg::mbarrier_arrive(empty);
  }
}
}  // namespace

// Guards: the proxy rule for a generic read followed by an async write of the same bytes, as the
// memory model states it and no stricter: the fence may sit in the reader or in the issuer.
TEST_CASE("clc: a response read and asked again without fence.proxy.async is reported under every seed") {
  CHECK(caught(kNoProxyFence, "generic-proxy read not fenced before an async-proxy write") == 8);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SimOptions opt(seed);
    const tcg::LaunchDims dims{dim3(1), dim3(64), 1024 + tcg::kSmemAlignSlack};
    for (int mode : {0, 1}) {
      const std::string err = sim_error([&] { tcg::launch_kernel(clc_fence_place_kernel, dims, nullptr, mode); });
      INFO("seed " << seed << ", mode " << mode << ": " << err);
      CHECK(err == "");
    }
    const std::string err = sim_error([&] { tcg::launch_kernel(clc_fence_place_kernel, dims, nullptr, 2); });
    INFO("seed " << seed << ": " << err);
    CHECK(contains(err, "generic-proxy read not fenced before an async-proxy write"));
    CHECK(contains(err, "test_clc.cpp"));  // names where the read was
  }
}
