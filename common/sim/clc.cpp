// clc.cpp — cluster launch control: clusterlaunchcontrol.try_cancel and query_cancel, and the
// 16-byte shared-memory load of their response.
//
// Models (PTX ISA §9.7.13.17, §9.7.13.18): try_cancel asks, asynchronously, to cancel the launch
// of a cluster of the same grid that has not started running. The emulator launches clusters over
// time (launch.cpp: in grid order, as SMs free up, --sim-sms / --sim-ctas-per-sm), so whether a
// request succeeds depends on when it is performed: the request is decided when the scheduler
// completes it (a point the seed picks; under the timing model one round trip after the issue),
// and it cancels a cluster only if one is still waiting, which is then never launched. Which of
// the waiting clusters: the next in launch order, except under the adversarial seeds (seed % 4 ==
// 0), which pick any waiting one, so a kernel that guesses the next tile instead of decoding the
// response fails there. The 16-byte response is then written at `response`, and complete_tx(16)
// is performed on the mbarrier; with .multicast::cluster::all the same response is written at that
// offset in every CTA of the cluster, each CTA's own mbarrier at the barrier's offset receiving
// the 16 bytes. The response's encoding is the emulator's own (the ISA calls it opaque): only
// query_cancel reads it.
// Checked, each a rule a kernel can break:
//  * the response address 16-byte aligned, inside this CTA's shared memory, not over an mbarrier;
//    the mbarrier initialised and published to the thread (mbarrier.cpp), and in every target CTA
//    for the multicast form, none of which may have exited;
//  * a try_cancel into a response buffer whose previous response has not landed yet;
//  * another try_cancel from a CTA in which a thread has already seen a failed response
//    (undefined behaviour, §9.7.13.17);
//  * the response read (clc_load_response) while its try_cancel is still in flight (before the
//    mbarrier phase that the complete_tx ends), or from a buffer where no response has landed
//    yet; the buffer holds a poison pattern while in flight, and query_cancel refuses it and
//    anything else that is not a response. Not caught: a stale response of an earlier request
//    read again (a ring position that did not advance): it decodes as a valid tile, and the
//    kernel then fails by its results or a deadlock;
//  * get_first_ctaid of a failed response (undefined, §9.7.13.18);
//  * the expect_tx bytes: a phase that announced other than 16 bytes underflows or is left over
//    (mbarrier.cpp, launch.cpp exit checks); an arrival without expect_tx completes the phase
//    before the response lands, which the load check then reports.
//  * the proxy order: the response is written by the async proxy and read with a generic load, so
//    every load of a response must be ordered before the next try_cancel's write into those bytes
//    through fence.proxy.async (the ISA's example fences there, §9.7.13.17; the rule and why:
//    tma_store.cpp check_async_write_after_reads), checked at the issue under every seed.
#include <algorithm>
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {
// Word 0 of a response (the emulator's encoding); words 1..3: %ctaid x, y, z of the canceled
// cluster's first CTA.
constexpr uint32_t kClcCanceled = 0x434C4331;  // "CLC1"
constexpr uint32_t kClcFailed = 0x434C4330;    // "CLC0"
constexpr uint32_t kClcInFlight = 0x434C433F;  // written at issue: the response has not landed
constexpr uint32_t kResponseBytes = 16;

bool in_flight(const Cta& cta, uint32_t off) {
  return std::find(cta.clc_in_flight.begin(), cta.clc_in_flight.end(), off) != cta.clc_in_flight.end();
}

void write_response(Cta& cta, uint32_t off, uint32_t w0, uint3 ctaid) {
  const uint32_t w[4] = {w0, ctaid.x, ctaid.y, ctaid.z};
  memcpy(cta.smem + off - kSmemBase, w, sizeof w);
}

// The request is performed: cancel a cluster that has not been launched, if any is left.
bool decide(Scheduler& s, uint3* first_ctaid) {
  clc_skip_canceled(s);
  if (s.clc_canceled.size() < s.num_clusters) s.clc_canceled.resize(s.num_clusters, 0);
  std::vector<uint64_t> waiting;
  for (uint64_t ci = s.next_cluster; ci < s.num_clusters; ++ci)
    if (!s.clc_canceled[ci]) {
      waiting.push_back(ci);
      if (s.timed || g_options.seed % 4 != 0) break;  // in launch order: only the next one matters
    }
  if (waiting.empty()) return false;
  const uint64_t ci = waiting[s.rng.below(waiting.size())];
  s.clc_canceled[ci] = 1;
  clc_skip_canceled(s);
  const dim3 grid_c(s.grid.x / s.cluster_shape.x, s.grid.y / s.cluster_shape.y, s.grid.z / s.cluster_shape.z);
  const uint32_t cx = uint32_t(ci % grid_c.x), cy = uint32_t(ci / grid_c.x % grid_c.y),
                 cz = uint32_t(ci / (uint64_t(grid_c.x) * grid_c.y));
  *first_ctaid = uint3{cx * s.cluster_shape.x, cy * s.cluster_shape.y, cz * s.cluster_shape.z};
  return true;
}

std::string describe_response(const uint32_t* w) {
  return "{" + hex(w[0]) + ", " + hex(w[1]) + ", " + hex(w[2]) + ", " + hex(w[3]) + "}";
}
}  // namespace

namespace detail {
void clc_skip_canceled(Scheduler& s) {
  while (s.next_cluster < s.num_clusters && s.next_cluster < s.clc_canceled.size() && s.clc_canceled[s.next_cluster])
    s.next_cluster++;
}

}  // namespace detail

void clc_try_cancel(uint32_t response, uint32_t bar, bool multicast, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& self = *f.cta;
  const char* what = multicast ? "clusterlaunchcontrol.try_cancel.multicast::cluster::all" : "clusterlaunchcontrol.try_cancel";
  if (self.clc_failed_at.file)
    fail_here("try_cancel after a failed try_cancel",
              std::string(what) + " issued by a CTA in which a thread already saw a failed response (query_cancel at " +
                  loc(self.clc_failed_at) + " returned is_canceled = false). Once a CTA has observed a failed "
                  "cancellation, issuing another try_cancel is undefined (PTX ISA §9.7.13.17): stop asking when one fails");
  if (response % kResponseBytes != 0)
    fail_here("misaligned try_cancel response",
              std::string(what) + " response address " + hex(response) +
                  " is not 16-byte aligned; the response is a naturally aligned 16-byte location (§9.7.13.17)");
  smem_ref(self, response, kResponseBytes, what);  // a shared::cta address of this CTA, in bounds
  const uint32_t off = response & kOffsetMask;
  check_no_mbarrier_in(self, response, kResponseBytes, "try_cancel response");
  // The targets: this CTA, or every CTA of the cluster at the same offsets.
  std::vector<Cta*> dests;
  if (multicast) dests = self.cluster->ctas;
  else dests.push_back(&self);
  for (Cta* d : dests) {
    check_target_alive(*d, what);
    if (in_flight(*d, off))
      fail_here("try_cancel response buffer reused while a response is in flight",
                std::string(what) + " writes its response at offset " + hex(response & kOffsetMask) + " of " +
                    cta_name(*d) + ", where the response of an earlier try_cancel has not landed yet. Wait on that "
                    "request's mbarrier (and read its response) before reusing the buffer");
    const uint32_t d_bar = (d->rank << kRankShift) | (bar & kOffsetMask);
    const char* bar_what = "clusterlaunchcontrol.try_cancel completion mbarrier";
    // The operand is a shared::cta address of the issuing CTA; the multicast uses its offset in each CTA.
    const Mbar& b = d == &self ? mbar_at(self, bar, bar_what) : mbar_at_cluster(d_bar, bar_what);
    // The instruction reaches its mbarrier through the generic proxy (§9.7.13.17): the init must
    // be ordered before it like any other thread's use, and across the cluster for the multicast.
    check_mbar_published(b, d_bar, /*async_proxy=*/false, /*remote=*/d != &self, what);
    if (d != &self) note_remote_access(*d, what);
    check_async_write_after_reads(*d, (d->rank << kRankShift) | off, kResponseBytes, what);
  }
  std::vector<std::pair<Cta*, uint32_t>> targets;  // (CTA, its barrier's shared::cluster address)
  uint32_t mask = 0;
  for (Cta* d : dests) {
    d->clc_in_flight.push_back(off);
    write_response(*d, off, kClcInFlight, uint3{0, 0, 0});
    targets.emplace_back(d, (d->rank << kRankShift) | (bar & kOffsetMask));
    mask |= 1u << d->rank;
  }
  const Origin by{what, true, &f, at};
  AsyncOp op{[targets, off, by] {
               Scheduler& s = *g_sched;
               uint3 first{0, 0, 0};
               const bool canceled = decide(s, &first);
               (canceled ? g_stats.clc_canceled : g_stats.clc_failed)++;
               for (const auto& [d, d_bar] : targets) {
                 if (d->finished)
                   fail("tcsim: try_cancel response for an exited CTA\n  " + by.text() + " writes its response into " +
                        cta_name(*d) + ", which has exited (undefined for .multicast::cluster::all, §9.7.13.17)");
                 write_response(*d, off, canceled ? kClcCanceled : kClcFailed, first);
                 d->clc_in_flight.erase(std::find(d->clc_in_flight.begin(), d->clc_in_flight.end(), off));
                 if (std::find(d->clc_landed.begin(), d->clc_landed.end(), off) == d->clc_landed.end())
                   d->clc_landed.push_back(off);
                 Mbar& b = d->mbars.find(d_bar & kOffsetMask)->second;
                 mbar_note_async(b, by);
                 mbar_add_tx(b, d_bar, -int64_t(kResponseBytes), by);
                 mbar_check_phase(b, d_bar, by);
               }
             },
             mask, "a clusterlaunchcontrol.try_cancel", &f, at};
  if (timed()) op.t = f.t + model_clc_ns();
  push_async(std::move(op));
}

void clc_load_response(uint32_t response, uint32_t* words, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  if (response % kResponseBytes != 0)
    fail_here("misaligned vector access", "ld.shared.v4.b32 of a try_cancel response at " + hex(response) +
                                              ", which is not 16-byte aligned");
  const uint8_t* p = smem_ptr(*f.cta, response, kResponseBytes, "ld.shared.v4.b32 (try_cancel response)");
  if (in_flight(*f.cta, response & kOffsetMask))
    fail_here("try_cancel response read before its mbarrier completed",
              "reads the clusterlaunchcontrol.try_cancel response at " + hex(response) +
                  " while that request is still in flight: its bytes are undefined until the complete_tx on its "
                  "mbarrier has ended the phase. Wait on the mbarrier (try_wait.parity) before loading the response "
                  "(PTX ISA §9.7.13.17)");
  if (std::find(f.cta->clc_landed.begin(), f.cta->clc_landed.end(), response & kOffsetMask) == f.cta->clc_landed.end())
    fail_here("try_cancel response read before its mbarrier completed",
              "reads a clusterlaunchcontrol.try_cancel response at " + hex(response) +
                  ", but no response has landed there yet (none was requested, or its request has not been issued): "
                  "wait on the request's mbarrier before loading the response (PTX ISA §9.7.13.17)");
  note_generic_read(*f.cta, response, kResponseBytes);  // ld.shared: the generic proxy
  memcpy(words, p, kResponseBytes);
}

bool clc_query_is_canceled(const uint32_t* w, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  if (w[0] == kClcInFlight)
    fail_here("query_cancel of a response that had not landed",
              "clusterlaunchcontrol.query_cancel.is_canceled of " + describe_response(w) +
                  ", the bytes of a response buffer whose try_cancel was still in flight when they were read: wait on "
                  "the request's mbarrier before reading the response (PTX ISA §9.7.13.17)");
  if (w[0] != kClcCanceled && w[0] != kClcFailed)
    fail_here("query_cancel of something that is not a try_cancel response",
              "clusterlaunchcontrol.query_cancel.is_canceled of " + describe_response(w) +
                  ", which no clusterlaunchcontrol.try_cancel wrote (the wrong buffer, or a stale/uninitialised one)");
  if (w[0] == kClcCanceled) return true;
  if (!f.cta->clc_failed_at.file) f.cta->clc_failed_at = at;
  return false;
}

uint32_t clc_query_first_ctaid(const uint32_t* w, int dim, SrcLoc at) {
  tick(at);
  if (w[0] == kClcFailed)
    fail_here("get_first_ctaid of a failed try_cancel",
              "clusterlaunchcontrol.query_cancel.get_first_ctaid of a response whose cancellation failed: the "
              "result is undefined (PTX ISA §9.7.13.18). Test is_canceled first");
  if (w[0] != kClcCanceled)
    fail_here("query_cancel of something that is not a try_cancel response",
              "clusterlaunchcontrol.query_cancel.get_first_ctaid of " + describe_response(w) +
                  (w[0] == kClcInFlight ? ", the bytes of a response that had not landed when they were read"
                                        : ", which no clusterlaunchcontrol.try_cancel wrote"));
  return w[1 + dim];
}

}  // namespace tcsim
