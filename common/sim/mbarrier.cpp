// mbarrier.cpp — the mbarrier object: phases, arrivals, transaction bytes, and who may use it when.
//
// Models (PTX ISA §9.7.13.15): a 64-bit object in shared memory, 8-byte aligned, with a phase,
// pending and expected arrival counts and a tx-count (range ±(2^20-1)). A phase completes when
// the pending arrivals and the tx-count both reach zero; then the phase advances and the
// pending count is re-armed. try_wait.parity(P) succeeds once the phase with parity P has
// completed, i.e. when the current phase's parity is no longer P (§9.7.13.15.16). Remote
// arrivals (.shared::cluster, §9.7.13.15.13) land asynchronously, at a point the seed picks.
// Checked: alignment, bounds, initialisation, arrival overflow, tx underflow and range, and the
// publication of an initialisation before its use (§9.7.13.4 fence.mbarrier_init): by the
// async proxy (TMA complete_tx, tcgen05.commit) only after fence.mbarrier_init and a
// synchronisation; from another CTA only after a cluster barrier that follows the fence or a
// releasing cluster arrive; by another thread of the CTA only after a synchronisation.
// Arrivals release the arriving thread's happens-before clock (happens_before.h; a remote arrival
// its clock at the issue, .release.cluster) and a completed phase hands the joined clocks to the
// threads that wait for it (.acquire): what they write and read, and which tcgen05 operations they
// know complete (tmem_hazards.cpp). The init checks ask the same relation. Scope: the wrappers'
// local arrives are .release.cta and their waits .acquire.cta, both inside the barrier's CTA; a
// remote arrive (.release.cluster, or CUTLASS's .release.cta form) is observed by a .cta wait of
// the barrier's CTA. The emulator
// counts that pair as synchronising, as CUTLASS's cluster pipelines assume (a looser reading than
// the scopes' letter, §8.9: a kernel relying on it is not reported).
#include <algorithm>
#include <memory>
#include <sstream>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace detail {

namespace {
// The mbarrier at `bar` in `cta`: aligned, in bounds, initialised. `remote`: the running thread
// is in another CTA and reaches it through the shared::cluster window.
Mbar& find_mbar(Cta& cta, uint32_t bar, const char* what, bool remote) {
  if (bar % 8 != 0)
    fail_here("misaligned mbarrier", std::string(what) + ": mbarrier address " + hex(bar) + " is not 8-byte aligned");
  smem_ref(cta, bar, 8, what);
  auto it = cta.mbars.find(bar & kOffsetMask);
  if (it != cta.mbars.end()) return it->second;
  if (!remote)
    fail_here("uninitialised mbarrier",
              std::string(what) + " uses the mbarrier at " + hex(bar) + ", which no mbarrier.init has initialised");
  fail_here("no mbarrier at that offset in the target CTA",
            std::string(what) + " uses the mbarrier at " + hex(bar) + " in " + cta_name(cta) +
                ", but no mbarrier.init has initialised one at that offset there. Instructions that address "
                "another CTA's barrier at the same offset need identical shared-memory layouts in every CTA, "
                "and the peer's init must be ordered before the use by a cluster barrier");
}
}  // namespace

Mbar& mbar_at(Cta& cta, uint32_t bar, const char* what) { return find_mbar(cta, bar, what, false); }

Mbar& mbar_at_cluster(uint32_t bar, const char* what, Cta** target) {
  Cta& cta = cluster_cta(bar, what);
  check_target_alive(cta, what);
  if (target) *target = &cta;
  return find_mbar(cta, bar, what, /*remote=*/&cta != me().cta);
}

std::string describe_mbar(const Mbar& b) {
  std::ostringstream o;
  o << "the barrier is in phase " << b.phase << " (parity " << (b.phase & 1) << ") with " << b.pending << " of "
    << b.expected << " arrivals pending and tx-count " << b.tx;
  return o.str();
}

// Phase completion: pending arrivals and tx-count both zero (PTX ISA §9.7.13.15.2).
void mbar_check_phase(Mbar& b, uint32_t addr, const Origin& by) {
  if (b.pending == 0 && b.tx < 0)
    fail("tcsim: mbarrier tx-count underflow\n  the mbarrier at " + hex(addr) + " (initialised at " + loc(b.init_at) +
         ") received " + std::to_string(-b.tx) + " bytes more than expect_tx announced for phase " +
         std::to_string(b.phase) + "; last update by " + by.text() + "." + copy_underflow_detail(b));  // async_smem_writes.cpp
  if (b.pending == 0 && b.tx == 0) {
    b.hb_done[b.phase & 1] = std::move(b.hb_acc);  // what a wait for this phase's parity acquires
    b.hb_acc.clear();
    b.phase++;
    b.pending = b.expected;
    notify(b.waiters);
  }
}

void mbar_do_arrive(Mbar& b, uint32_t addr, uint32_t count, const Origin& by, const HbClock* carried) {
  if (b.pending < int64_t(count))
    fail("tcsim: mbarrier arrival overflow\n  " + by.text() + " arrives on the mbarrier at " + hex(addr) +
         " but its current phase has no pending arrivals left (" + describe_mbar(b) + ")");
  if (carried) b.hb_acc.join(*carried);
  b.pending -= count;
  mbar_check_phase(b, addr, by);
}

void mbar_add_tx(Mbar& b, uint32_t addr, int64_t delta, const Origin& by) {
  b.tx += delta;
  constexpr int64_t kLimit = (1 << 20) - 1;  // PTX ISA §9.7.13.15.1: tx-count range
  if (b.tx > kLimit || b.tx < -kLimit)
    fail("tcsim: mbarrier tx-count out of range\n  " + by.text() + " moves the tx-count of the mbarrier at " + hex(addr) +
         " to " + std::to_string(b.tx) + ", outside +-(2^20-1)");
}

void check_mbar_published(const Mbar& b, uint32_t addr, bool async_proxy, bool remote, const char* what) {
  const Fiber& f = me();
  // Built only for a report (one per call was a measurable share of a --predict run).
  const auto name = [&] { return "the mbarrier at " + hex(addr) + " (initialised at " + loc(b.init_at) + ")"; };
  if (async_proxy && !b.fence_stamp)
    fail_here("mbarrier init not fenced for the async proxy",
              std::string(what) + " will signal " + name() +
                  ", but the initialising thread executed no fence.mbarrier_init after mbarrier.init, so the TMA "
                  "unit / tensor core may see the barrier uninitialised. Follow the inits with "
                  "fence.mbarrier_init.release.cluster and a barrier (PTX ISA §9.7.13.4, §9.7.13.15.9)");
  if (remote) {
    bool published = false;
    for (const Stamp& s : b.cluster_released) published = published || hb_ordered(f, s);
    if (!published)
      fail_here("mbarrier used by another CTA before its init was published",
                std::string(what) + " uses " + name() + " in another CTA of the cluster, but no cluster barrier orders "
                    "this thread after that initialisation (fence.mbarrier_init.release.cluster or "
                    "barrier.cluster.arrive.release after the init, then barrier.cluster.wait here)");
    return;
  }
  if (&f == b.init_by) return;
  if (!hb_ordered(f, async_proxy ? b.fence_stamp : b.init_stamp))
    fail_here("mbarrier used before its init is ordered before this thread",
              std::string(what) + " uses " + name() + ", but this thread has not synchronised with the initialising "
                  "thread since the " + (async_proxy ? "fence.mbarrier_init" : "mbarrier.init") +
                  " (a __syncthreads or cluster barrier between them is needed)");
}

// fence.mbarrier_init publishes the inits of the executing thread. A releasing cluster arrive
// is cumulative (PTX memory model): it also publishes inits of other threads that happen before it.
void publish_inits(bool fence, bool cluster_release) {
  Fiber& f = me();
  const Stamp now = hb_stamp(f);
  for (auto& [off, b] : f.cta->mbars) {
    const bool own = b.init_by == &f;
    if (!(fence ? own : own || hb_ordered(f, b.init_stamp))) continue;
    if (fence && !b.fence_stamp) b.fence_stamp = now;
    if (cluster_release &&
        std::none_of(b.cluster_released.begin(), b.cluster_released.end(), [&](const Stamp& s) { return s.agent == now.agent; }))
      b.cluster_released.push_back(now);  // one per thread: its first release covers every later use
  }
}

void mbar_note_async(Mbar& b, const Origin& by) {
  b.async_phase_end = b.phase + 1;
  b.async_by = by;
}

namespace {
// mbarrier.arrive / arrive.expect_tx on a shared::cluster address: performed asynchronously
// when the barrier is in another CTA.
// `cluster_release`: the .release.cluster form, which compiles to a GPU-scope membar before the
// arrive (the timing model waits for the warp's earlier global stores to drain; .release.cta does not).
void arrive_cluster(uint32_t bar, uint32_t bytes, bool expect_tx, const char* what, bool cluster_release) {
  Fiber& f = me();
  if (cluster_release && timed()) model_release_membar(f);
  Cta* target = nullptr;
  Mbar& b = mbar_at_cluster(bar, what, &target);
  check_fence_before(what);
  const Origin by{nullptr, false, &f, f.at};
  if (target == f.cta) {
    check_mbar_published(b, bar, false, false, what);
    if (expect_tx) b.tx_by = &f, b.tx_phase = b.phase;  // async_smem_writes.cpp
    if (expect_tx) mbar_add_tx(b, bar, int64_t(bytes), by);
    mbar_do_arrive(b, bar, 1, by, &hb_release(f));
    return;
  }
  check_mbar_published(b, bar, false, true, what);
  note_remote_access(*target, what);
  const uint32_t off = bar & kOffsetMask;
  auto carried = std::make_shared<const HbClock>(hb_release(f));  // released when issued
  f.remote_arrives_pending++;
  Fiber* issuer = &f;  // lives as long as its cluster, which holds the target
  AsyncOp op{[target, off, bar, bytes, expect_tx, by, carried, issuer] {
               issuer->remote_arrives_pending--;
               Mbar& tb = target->mbars.find(off)->second;
               if (expect_tx) mbar_add_tx(tb, bar, int64_t(bytes), by);
               mbar_do_arrive(tb, bar, 1, by, carried.get());
             },
             1u << target->rank, "a remote mbarrier arrive", &f, f.at, nullptr, /*remote_arrive=*/true};
  if (timed()) op.t = f.t + model_remote_arrive_ns();
  push_async(std::move(op));
}
}  // namespace

}  // namespace detail

void mbar_init(uint32_t bar, uint32_t count, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  if (bar % 8 != 0) fail_here("misaligned mbarrier", "mbarrier.init at " + hex(bar) + " is not 8-byte aligned");
  smem_ref(*f.cta, bar, 8, "mbarrier.init");
  if (count < 1 || count > (1u << 20) - 1)
    fail_here("bad mbarrier count", "mbarrier.init with count " + std::to_string(count) + " (must be 1..2^20-1)");
  Mbar& b = f.cta->mbars[bar & kOffsetMask];
  if (!b.waiters.empty())
    fail_here("mbarrier re-initialised while in use",
              "mbarrier.init of the mbarrier at " + hex(bar) + " while " + std::to_string(b.waiters.size()) +
                  " thread(s) wait on it (initialised before at " + loc(b.init_at) + ")");
  b = Mbar{};
  b.expected = count;
  b.pending = count;
  b.init_at = at;
  b.init_by = &f;
  b.init_stamp = hb_stamp(f);
}

void mbar_arrive(uint32_t bar, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Mbar& b = mbar_at(*f.cta, bar, "mbarrier.arrive");
  check_fence_before("mbarrier.arrive");
  check_mbar_published(b, bar, false, false, "mbarrier.arrive");
  mbar_do_arrive(b, bar, 1, Origin{nullptr, false, &f, at}, &hb_release(f));
}

void mbar_arrive_cluster(uint32_t bar, SrcLoc at) {
  tick(at);
  arrive_cluster(bar, 0, false, "mbarrier.arrive.shared::cluster", /*cluster_release=*/true);
}

void mbar_arrive_cluster_cta_scope(uint32_t bar, SrcLoc at) {
  tick(at);
  arrive_cluster(bar, 0, false, "mbarrier.arrive.release.cta.shared::cluster", /*cluster_release=*/false);
}

void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Mbar& b = mbar_at(*f.cta, bar, "mbarrier.arrive.expect_tx");
  check_fence_before("mbarrier.arrive.expect_tx");
  check_mbar_published(b, bar, false, false, "mbarrier.arrive.expect_tx");
  const Origin by{nullptr, false, &f, at};
  b.tx_by = &f, b.tx_phase = b.phase;  // async_smem_writes.cpp
  mbar_add_tx(b, bar, int64_t(bytes), by);
  mbar_do_arrive(b, bar, 1, by, &hb_release(f));
}

void mbar_arrive_expect_tx_cluster(uint32_t bar, uint32_t bytes, SrcLoc at) {
  tick(at);
  arrive_cluster(bar, bytes, true, "mbarrier.arrive.expect_tx.shared::cluster", /*cluster_release=*/true);
}

void mbar_wait_parity(uint32_t bar, uint32_t parity, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Mbar* b = &mbar_at(*f.cta, bar, "mbarrier.try_wait.parity");
  if (parity > 1) fail_here("bad parity", "mbarrier.try_wait.parity with parity " + std::to_string(parity));
  check_mbar_published(*b, bar, false, false, "mbarrier.try_wait.parity");
  // try_wait.parity(P) succeeds once the phase with parity P has completed, i.e. when the
  // current phase's parity is no longer P (PTX ISA §9.7.13.15.16).
  if ((b->phase & 1) == parity) g_stats.barrier_waits++;
  f.wait_label = "mbarrier wait";
  block_until(b->waiters, [b, parity] { return (b->phase & 1) != parity; },
              [b, bar, parity] {
                return "mbarrier.try_wait.parity on the mbarrier at " + hex(bar) + " for parity " +
                       std::to_string(parity) + "; " + describe_mbar(*b) + " (initialised at " + loc(b->init_at) + ")";
              });
  hb_acquire(f, b->hb_done[parity]);  // the completed phase of that parity (PTX ISA §9.7.16.6.4)
  b->observed = std::max(b->observed, b->phase);  // every phase before the current one has completed
  note_thread_sync("mbarrier.try_wait.parity", at);
}

bool mbar_test_wait_parity(uint32_t bar, uint32_t parity, SrcLoc at) {
  tick(at);  // a preemption point: a thread polling in a loop lets the others (and copies) progress
  Fiber& f = me();
  Mbar& b = mbar_at(*f.cta, bar, "mbarrier.test_wait.parity");
  if (parity > 1) fail_here("bad parity", "mbarrier.test_wait.parity with parity " + std::to_string(parity));
  check_mbar_published(b, bar, false, false, "mbarrier.test_wait.parity");
  if ((b.phase & 1) == parity) return false;
  hb_acquire(f, b.hb_done[parity]);
  b.observed = std::max(b.observed, b.phase);
  note_thread_sync("mbarrier.test_wait.parity", at);
  return true;
}

}  // namespace tcsim
