// happens_before.h — the emulator's one happens-before relation (happens_before.cpp): vector
// clocks that every synchronising operation carries, and the stamps that accesses and fences
// leave so that a later check can ask "is this ordered after that?". internal.h includes it
// (kernels and the harness never do).
//
// PTX ISA §8.9 (memory consistency model): an operation X happens before Y if X precedes Y in
// program order, or X is before a release that Y's thread (or one ordered before it) acquires
// through a release/acquire pattern or a barrier, transitively (base causality order). Every
// thread is an "agent" with its own counter, its epoch; a thread's clock says, for every agent,
// up to which epoch that agent's operations happen before the thread's next operation. A release
// (mbarrier.arrive, bar.sync / barrier.cluster arrival, __syncwarp, an atom's release) publishes
// the thread's clock and then starts a new epoch; an acquire (a completed wait, an atom's
// acquire) joins the published clock into the waiter's. An operation stamped (agent, epoch) then
// happens before a thread's next operation iff the thread's clock holds at least that epoch for
// that agent, or the thread is that agent.
// The same entries carry what a thread knows of another agent's asynchronous tcgen05 operations
// (tmem_hazards.cpp: issued, committed, loaded, waited), so TMEM hazards, global memory, shared
// memory through either proxy, mbarrier initialisation and the exit checks all ask one relation.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace tcsim {
namespace detail {

struct Fiber;

// What a clock knows of one agent (a thread; for tcgen05.ld the warp, named by its lane 0):
// `epoch`: that thread's operations up to this epoch happen before; `issued` / `ld_issued`: how
// many of its mma / cp and tcgen05.ld were issued before a synchronisation this clock is ordered
// after; `committed`: how many of its tcgen05.commit are known to have arrived (every mma / cp
// issued before that commit has completed); `ld_waited`: how many tcgen05.wait::ld its warp ran.
struct Known {
  uint32_t agent = 0, epoch = 0, issued = 0, committed = 0, ld_issued = 0, ld_waited = 0;
};

// A sparse vector clock (sorted by agent). Its entries are shared between copies until one of them
// changes (copy on write): a copy (a thread's clock before a synchronisation, what a commit or an
// arrival carries) costs nothing, and a join that would leave a clock equal to the other one takes
// the other's entries instead, so the threads of a CTA that passed the same barrier hold one set
// of entries, not one each (tens of thousands of threads take turns: their clocks were most of
// what a switch to one of them had to fetch from memory).
struct HbClock {
  const Known* find(uint32_t agent) const;
  Known& at(uint32_t agent);  // the entry, made if missing (the entries become this clock's own)
  // at(agent).ld_waited raised to at least `v` (a completed tcgen05.wait::ld, tmem_hazards.cpp);
  // the lanes of a warp that share a clock make the same change, and share its result.
  void raise_ld_waited(uint32_t agent, uint32_t v);
  void join(const HbClock& o);
  void clear() { p_.reset(); }
  // Does this clock hold epoch `epoch` of `agent`?
  bool knows(uint32_t agent, uint32_t epoch) const {
    const Known* k = find(agent);
    return k && k->epoch >= epoch;
  }
  const std::vector<Known>& entries() const { return p_ ? *p_ : none(); }
  std::vector<Known>& own();  // the entries to change: copied first if another clock shares them
  bool shares_entries(const HbClock& o) const { return p_ == o.p_; }

 private:
  static const std::vector<Known>& none();
  void join_into_own(const std::vector<Known>& oe);
  std::shared_ptr<std::vector<Known>> p_;  // null: no entries
};

// An operation of one thread: its agent and the epoch it happened in.
struct Stamp {
  uint32_t agent = 0, epoch = 0;  // epoch 0: none
  explicit operator bool() const { return epoch != 0; }
};

// The running thread's stamp for an access or fence it performs now.
Stamp hb_stamp(const Fiber& f);
// Does `s` happen before `f`'s next operation (its own operations always do)?
bool hb_ordered(const Fiber& f, Stamp s);
// A release by `f`: its clock as published (its own epoch and tcgen05 counts included; join it
// before `f` runs on); `f` starts a new epoch. A relaxed release (barrier.cluster.arrive.relaxed)
// orders no memory: its clock carries the tcgen05 counts only (§9.7.13.3), and the epoch of the
// thread's last fence.mbarrier_init.release.cluster (a release pattern for its inits, §8.9).
const HbClock& hb_release(Fiber& f);
HbClock hb_release_relaxed(Fiber& f);
// An acquire by `f` of a published clock.
void hb_acquire(Fiber& f, const HbClock& c);
// A release by `f` joined into a barrier's accumulating clock `acc`. `bases` (the barrier's, empty at
// the start of each phase) remember the clocks, before their release, of arrivals already joined
// (a few: the lanes of each warp usually share one): an arrival that holds the same entries as one
// of them only writes its release into `acc` (which holds them),
// instead of copying them to change its own entry and having `acc` compare and raise them all.
// Its own clock then lacks its release, which Fiber::hb_release_pending says: acquiring the phase's
// clock brings it (hb_acquire_phase); an instruction before that (barrier.cluster's wait may come
// later than its arrive) first adds it (hb_settle_release, from tick).
// A CTA barrier keeps kHbBases (a warp's lanes usually share one clock, and the first few warps
// cover most arrivals); a cluster barrier kHbClusterBases (every warp of up to 8 CTAs arrives).
constexpr size_t kHbBases = 4, kHbClusterBases = 32;
void hb_release_join(HbClock& acc, HbClock* bases, size_t nbases, Fiber& f);
// Adds the release that hb_release_join left out (Fiber::hb_release_pending) to f's own clock.
void hb_settle_release(Fiber& f);
// An acquire by `f` of the clock of a barrier phase its own arrival was joined into (which holds
// its release: a release left out of its clock needs no settling).
void hb_acquire_phase(Fiber& f, const HbClock& c);
// Every one of `n` threads releases and then acquires what all released (__syncwarp: each lane's
// clock becomes the join of all lanes' published clocks; null entries are skipped).
void hb_exchange(Fiber* const* fs, size_t n);

}  // namespace detail
}  // namespace tcsim
