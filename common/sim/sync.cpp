// sync.cpp — thread synchronisation: CTA barriers, warp convergence, elect, the cluster barrier,
// and the fences that order tcgen05 operations and mbarrier initialisation against them.
//
// Models:
//  * bar.sync / __syncthreads (PTX ISA §9.7.13.1): named barriers 0..15 with a thread count;
//    __syncthreads counts exited threads as arrived.
//  * __syncwarp, elect.sync (§9.7.13.13): warp-collective; elect.sync needs all 32 lanes.
//  * barrier.cluster.arrive{.release,.relaxed} / barrier.cluster.wait{.acquire} (§9.7.13.3): a
//    wait returns once every non-exited thread of the cluster has arrived; each thread alternates
//    arrive and wait. A releasing arrive publishes the thread's mbarrier inits to the cluster; a
//    relaxed one does not (it needs fence.mbarrier_init.release.cluster first).
//  * tcgen05.fence::before_thread_sync / ::after_thread_sync (§9.7.16.6.4): checked as a
//    protocol. A tcgen05 operation is ordered after the synchronisations before its thread's last
//    after_thread_sync: an mma / cp after a later one needs the fence (tcgen05_op); an ld, wait::ld,
//    alloc, dealloc only when it depends on what that synchronisation ordered (tmem_hazards.cpp,
//    Fiber::hb_fenced). A releasing synchronisation after tcgen05 operations needs a
//    before_thread_sync (or a tcgen05.commit, which implies it).
//  * .cta_group (§9.7.16.5): all tcgen05 instructions of a kernel use the same one; cta_group::2
//    instructions need the CTA's pair peer (rank ^ 1) in the cluster.
//  * fence.mbarrier_init.release.cluster (§9.7.13.4): publishes this thread's mbarrier inits to
//    the async proxy and the cluster (checked in mbarrier.cpp); a releasing cluster arrive
//    publishes every init ordered before it. (fence.proxy.async is modelled with the TMA store
//    it orders, in tma_store.cpp.)
//  * Convergence (.aligned): bar.sync / __syncthreads and barrier.cluster.arrive / wait are the
//    .aligned forms (the wrappers' PTX), which every thread of the warp must execute together, at
//    the same instruction (§9.7.13.1, §9.7.13.3). Each is a warp rendezvous first (the warp
//    collective of scheduler.cpp): a lane at another .aligned instruction, or the same one on
//    another line, is reported naming both places, and so is a lane that exits while the others
//    wait (except at __syncthreads, which counts exited threads).
// bar.sync, __syncwarp, the cluster barrier and the mbarriers carry the happens-before clocks
// (happens_before.h): an arrival releases, a completed wait acquires.
#include <cstdio>
#include <cstring>
#include <set>
#include <tuple>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace detail {

// A thread synchronisation (mbarrier wait, bar.sync, __syncwarp) just completed in this thread.
void note_thread_sync(const char* what, SrcLoc at) {
  Fiber& f = me();
  if (!f.sync_pending_fence) f.sync_first = what, f.sync_first_at = at;  // hb_fenced is its clock before it
  f.sync_pending_fence = what;
  f.sync_at = at;
}

const char* const kSyncthreadsOp = "__syncthreads";

// An .aligned barrier instruction: first every live lane of the warp reaches it, at the same line.
void converge_aligned(const char* what) {
  // Under the timing model (--predict, --trace) it is not checked: the rendezvous would add a wake-up
  // to every barrier's time, and correctness is the plain emulator's business.
  if (timed()) return;
  collective(what, nullptr, [](Collective&) {});
}

// A thread synchronisation that other threads will rely on (bar.sync, mbarrier.arrive) is about
// to happen: tcgen05 operations this thread issued before it must be fenced first.
void check_fence_before(const char* what) {
  Fiber& f = me();
  for (const auto& b : f.pending_ld) b->deferred = true;  // see LdBatch::deferred
  if (f.tc_pending_fence)
    fail_here("missing tcgen05.fence::before_thread_sync",
              std::string(what) + " follows " + f.tc_pending_fence + " at " + loc(f.tc_at) +
                  " with no tcgen05.fence::before_thread_sync (or tcgen05.commit) in between, so other threads "
                  "synchronising with this one are not ordered after that tcgen05 operation (PTX ISA §9.7.16.6.4)");
}

// A tcgen05 operation is being issued after a thread synchronisation with no
// tcgen05.fence::after_thread_sync since. §9.7.16.6.4 orders it after the synchronisations before
// the thread's last such fence, not after this one; it is a mistake only if it depends on what
// this one ordered. tcgen05.ld, wait::ld, alloc, dealloc and relinquish: their dependencies are
// TMEM operations, which tmem_hazards.cpp checks against the thread's clock as of before the
// unfenced synchronisation (Fiber::hb_fenced); they pass with a note. tcgen05.mma and tcgen05.cp
// also read shared memory, whose contents (a TMA's bytes, other threads' stores) are published
// to them by that synchronisation: the emulator does not follow which synchronisation published
// which bytes, so for them the fence stays required.
void tcgen05_op(const char* what) {
  Fiber& f = me();
  if (f.sync_pending_fence) {
    if (!std::strcmp(what, "tcgen05.mma") || !std::strcmp(what, "tcgen05.cp"))
      fail_here("missing tcgen05.fence::after_thread_sync",
                std::string(what) + " follows " + f.sync_pending_fence + " at " + loc(f.sync_at) +
                    " with no tcgen05.fence::after_thread_sync in between, so it is not ordered after that "
                    "synchronisation and may act on stale data (PTX ISA §9.7.16.6.4): it reads shared memory, "
                    "which that synchronisation may be what published (a TMA's bytes, other threads' stores)");
    static std::set<std::tuple<const char*, int, const char*, int>> noted;  // once per pair of places
    static std::tuple<const char*, int, const char*, int> last;            // the last pair: no look-up
    const auto here = std::make_tuple(f.at.file, f.at.line, f.sync_at.file, f.sync_at.line);
    if (here != last && (last = here, noted.insert(here).second))
      std::fprintf(stderr,
                   "note: %s at %s follows %s at %s with no tcgen05.fence::after_thread_sync in between: allowed "
                   "while it depends only on what an earlier fenced synchronisation ordered (checked; PTX ISA "
                   "§9.7.16.6.4); a fence after that synchronisation would order it after it as well\n",
                   what, loc(f.at).c_str(), f.sync_pending_fence, loc(f.sync_at).c_str());
  }
  f.tc_pending_fence = what;
  f.tc_at = f.at;
}

void use_cta_group(int cta_group, const char* what) {
  Scheduler& s = *g_sched;
  if (s.cta_group == 0) {
    s.cta_group = cta_group;
    s.cta_group_at = me().at;
    s.cta_group_op = what;
  } else if (s.cta_group != cta_group) {
    fail_here("mixed .cta_group in one kernel",
              std::string(what) + ".cta_group::" + std::to_string(cta_group) + ", but this kernel already executed " +
                  s.cta_group_op + ".cta_group::" + std::to_string(s.cta_group) + " at " + loc(s.cta_group_at) +
                  "; every tcgen05 instruction of a kernel must use the same .cta_group (PTX ISA §9.7.16.5)");
  }
}

Cta& pair_peer(Cta& cta, const char* what) {
  const Cluster& cl = *cta.cluster;
  const uint32_t peer = cta.rank ^ 1u;
  if (peer >= cl.ctas.size())
    fail_here("cta_group::2 outside a CTA pair",
              std::string(what) + ".cta_group::2 in CTA rank " + std::to_string(cta.rank) + " of a cluster of " +
                  std::to_string(cl.ctas.size()) +
                  " CTA(s): a CTA pair is two CTAs of one cluster whose ranks differ in bit 0 (PTX ISA §9.7.16.5.1); "
                  "launch with a cluster of 2 (or an even size)");
  return *cl.ctas[peer];
}

Cta& pair_mma_peer(Cta& cta, const char* name, const char* applies) {
  Cta& peer = pair_peer(cta, "tcgen05.mma");
  if (cta.rank % 2 != 0)
    fail_here("cta_group::2 MMA issued by the odd CTA of the pair",
              std::string(name) + " from CTA rank " + std::to_string(cta.rank) +
                  ": the emulator (like CUTLASS and DeepGEMM) requires pair MMAs to be issued by the even CTA, whose " +
                  applies + " then apply to both CTAs. Issuing from both CTAs computes every product twice; guard "
                  "the MMA warp with cluster_ctarank() % 2 == 0");
  return peer;
}

namespace {
void complete_cluster_phase(Cluster& cl) {
  cl.hb_done = std::move(cl.hb_acc);
  cl.hb_acc.clear();
  for (HbClock& base : cl.hb_bases) base.clear();
  cl.phases++;
  cl.arrived = 0;
  notify(cl.waiters);
}
}  // namespace

// An exited thread counts as arrived at every later cluster barrier phase.
void cluster_thread_exited(Fiber& f) {
  Cluster& cl = *f.cta->cluster;
  if (f.cluster_arrivals > cl.phases) cl.arrived--;  // its arrival in the open phase becomes an exit
  cl.exited++;
  if (cl.arrived + cl.exited >= cl.threads && (cl.arrived > 0 || !cl.waiters.empty())) complete_cluster_phase(cl);
}

}  // namespace detail

void syncthreads(SrcLoc at) { named_barrier_sync(0, 0, at); }

void named_barrier_sync(uint32_t id, uint32_t nthreads, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  if (id >= kNumNamedBarriers) fail_here("bad named barrier", "barrier id " + std::to_string(id) + " is not in 0..15");
  CtaBarrier& b = cta.bars[id];
  const uint32_t total = uint32_t(cta.fibers.size());
  const uint32_t expected = nthreads ? nthreads : total;
  if (nthreads % 32 != 0 || expected > total)
    fail_here("bad named barrier", "bar.sync thread count " + std::to_string(nthreads) +
                                       " must be a multiple of 32 and at most the block size");
  const char* what = nthreads == 0 && id == 0 ? kSyncthreadsOp : "bar.sync";
  converge_aligned(what);  // bar.sync is barrier.sync.aligned: the whole warp, together
  check_fence_before(what);
  hb_release_join(b.hb_acc, b.hb_bases, kHbBases, f);
  b.expected = expected;
  b.arrived++;
  // __syncthreads (count 0): threads that already exited count as arrived.
  const uint32_t have = b.arrived + (nthreads ? 0u : uint32_t(cta.exited));
  if (have >= expected) {
    b.arrived = 0;
    b.generation++;
    b.hb_done = std::move(b.hb_acc);
    b.hb_acc.clear();
    for (HbClock& base : b.hb_bases) base.clear();
    notify(b.waiters);
    hb_acquire_phase(f, b.hb_done);
    note_thread_sync(what, at);
    return;
  }
  const uint64_t gen = b.generation;
  CtaBarrier* bp = &b;
  Cta* cp = &cta;
  f.wait_label = what;
  // Two words of captures: std::function keeps them without allocating.
  const uint64_t id_n = uint64_t(id) << 32 | nthreads;
  block_until(
      b.waiters, [bp, gen] { return bp->generation != gen; },
      [cp, id_n] {
        const uint32_t id = uint32_t(id_n >> 32), nthreads = uint32_t(id_n);
        const CtaBarrier* bp = &cp->bars[id];
        return std::string(id == 0 && nthreads == 0 ? "__syncthreads" : "bar.sync " + std::to_string(id)) + ": " +
               std::to_string(bp->arrived + (nthreads ? 0 : cp->exited)) + " of " + std::to_string(bp->expected) +
               " threads have arrived";
      });
  hb_acquire_phase(f, b.hb_done);
  note_thread_sync(what, at);
}

void syncwarp(SrcLoc at) {
  tick(at);
  check_fence_before("__syncwarp");
  Fiber* self = &me();
  collective("__syncwarp", self, [](Collective& c) {  // every lane acquires what every lane released
    std::array<Fiber*, 32> lanes{};
    for (size_t i = 0; i < lanes.size(); ++i) lanes[i] = static_cast<Fiber*>(c.data[i]);
    hb_exchange(lanes.data(), lanes.size());
  });
  note_thread_sync("__syncwarp", at);
}

bool elect_sync(SrcLoc at) {
  tick(at);
  bool elected = false;
  collective("elect.sync", &elected, [](Collective& c) {
    for (void* d : c.data)
      if (d) {
        *static_cast<bool*>(d) = true;  // the lowest participating lane
        break;
      }
  }, /*full_warp=*/true);  // membermask 0xffffffff: all 32 lanes
  return elected;
}

void fence_mbarrier_init(SrcLoc at) {
  tick(at);
  if (timed()) model_spend(me(), model_fence_init_ns());  // CTA setup (docs/timing_model.md)
  publish_inits(/*fence=*/true, /*cluster_release=*/true);
  me().init_fence_epoch = me().epoch;  // the stamp publish_inits recorded (hb_release_relaxed)
}

void tcgen05_fence_before(SrcLoc at) {
  tick(at);
  me().tc_pending_fence = nullptr;
}

void tcgen05_fence_after(SrcLoc at) {
  tick(at);
  me().sync_pending_fence = nullptr;
}

// ---- barrier.cluster
void cluster_arrive(bool release, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cluster& cl = *f.cta->cluster;
  converge_aligned(release ? "barrier.cluster.arrive.release.aligned" : "barrier.cluster.arrive.relaxed.aligned");
  if (f.cluster_arrivals != f.cluster_waits)
    fail_here("barrier.cluster.arrive twice without a wait",
              "this thread already arrived at the cluster barrier and has not executed barrier.cluster.wait since; "
              "every arrive must be followed by a wait before the next arrive (PTX ISA §9.7.13.3)");
  check_fence_before(release ? "barrier.cluster.arrive.release" : "barrier.cluster.arrive.relaxed");
  if (release) {
    if (timed()) model_release_membar(f);  // the GPU-scope membar before a releasing arrive (H100: ~0.3 us)
    publish_inits(/*fence=*/false, /*cluster_release=*/true);
    // Release orders this thread's earlier remote arrivals before the arrive, so they have
    // landed by the time anyone's matching wait returns: complete them now (in issue order).
    auto& ops = g_sched->async_ops;
    for (size_t i = 0; f.remote_arrives_pending && i < ops.size();) {
      if (ops[i].remote_arrive && ops[i].issuer == &f) {
        AsyncOp op = std::move(ops[i]);
        ops.erase(ops.begin() + long(i));
        op.run();
      } else {
        ++i;
      }
    }
  }
  // A releasing arrival that holds the clock of an earlier one of this phase (the threads of a
  // warp, of a CTA past the same barriers) writes only its release into the barrier's clock.
  if (release) hb_release_join(cl.hb_acc, cl.hb_bases, kHbClusterBases, f);
  else cl.hb_acc.join(hb_release_relaxed(f));  // .relaxed orders no memory (§9.7.13.3)
  f.cluster_arrivals++;
  cl.arrived++;
  if (cl.arrived + cl.exited >= cl.threads) complete_cluster_phase(cl);
}

void cluster_wait(SrcLoc at) {
  // Its arrive's release, if left out of its clock (hb_release_join), comes with the acquire below:
  // the tick must not add it first.
  me().hb_release_pending = false;
  tick(at);
  Fiber& f = me();
  Cluster& cl = *f.cta->cluster;
  converge_aligned("barrier.cluster.wait.acquire.aligned");
  if (f.cluster_arrivals == f.cluster_waits)
    fail_here("barrier.cluster.wait without an arrive",
              "barrier.cluster.wait with no barrier.cluster.arrive of this thread before it: the wait would not "
              "wait for this thread's phase (PTX ISA §9.7.13.3)");
  const uint64_t phase = f.cluster_arrivals;  // wait until this many phases have completed
  Cluster* cp = &cl;
  f.wait_label = "barrier.cluster.wait";
  block_until(cl.waiters, [cp, phase] { return cp->phases >= phase; },
              [cp] {
                return "barrier.cluster.wait: " + std::to_string(cp->arrived) + " of " +
                       std::to_string(cp->threads - cp->exited) + " running threads of the cluster have arrived";
              });
  f.cluster_waits++;
  hb_acquire_phase(f, cl.hb_done);
  note_thread_sync("barrier.cluster.wait", at);
}

}  // namespace tcsim
