// happens_before.cpp — the one happens-before relation (happens_before.h): the vector clocks,
// their join, and what a release publishes. Which operations release and acquire is decided where
// they are modelled: mbarrier.cpp (arrive / arrive.expect_tx, local and remote, and the waits),
// sync.cpp (bar.sync, __syncwarp, the cluster barrier), mma.cpp (a commit's arrival carries its
// thread's clock), global_order.cpp (atom.acq_rel: acquire, then release).
#include <algorithm>
#include <cstring>

#include "internal.h"

namespace tcsim {
namespace detail {

namespace {
// The first entry not before `agent` (lower_bound). Agents are numbered in thread order as CTAs
// start, so a clock that knows a CTA's threads usually holds them as a run of consecutive
// numbers: the entry is tried where that run would put it before searching (a large clock's
// binary search is several cache misses).
size_t lower(const std::vector<Known>& e, uint32_t agent) {
  if (!e.empty() && agent >= e.front().agent) {
    const size_t guess = agent - e.front().agent;
    if (guess < e.size() && e[guess].agent == agent) return guess;
  }
  return size_t(std::lower_bound(e.begin(), e.end(), agent, [](const Known& k, uint32_t a) { return k.agent < a; }) -
                e.begin());
}
}  // namespace

const std::vector<Known>& HbClock::none() {
  static const std::vector<Known> empty;
  return empty;
}

std::vector<Known>& HbClock::own() {
  if (!p_) p_ = std::make_shared<std::vector<Known>>();
  else if (p_.use_count() > 1) p_ = std::make_shared<std::vector<Known>>(*p_);
  return *p_;
}

const Known* HbClock::find(uint32_t agent) const {
  if (!p_) return nullptr;
  const std::vector<Known>& e = *p_;
  const size_t i = lower(e, agent);
  return i < e.size() && e[i].agent == agent ? &e[i] : nullptr;
}

Known& HbClock::at(uint32_t agent) {
  std::vector<Known>& e = own();
  const size_t i = lower(e, agent);
  if (i == e.size() || e[i].agent != agent) return *e.insert(e.begin() + long(i), Known{agent, 0, 0, 0, 0, 0});
  return e[i];
}

namespace {
// The last raise_ld_waited that had to copy shared entries (as JoinMemo below, for that change).
struct RaiseMemo {
  std::shared_ptr<std::vector<Known>> from, to;
  uint32_t agent = 0, value = 0;
} g_raise_memo;
}  // namespace

void HbClock::raise_ld_waited(uint32_t agent, uint32_t v) {
  const Known* k = find(agent);
  if (k && k->ld_waited >= v) return;
  if (p_ && p_ == g_raise_memo.from && agent == g_raise_memo.agent && v == g_raise_memo.value) {
    p_ = g_raise_memo.to;
    return;
  }
  std::shared_ptr<std::vector<Known>> from = p_ && p_.use_count() > 1 ? p_ : nullptr;
  Known& w = at(agent);
  w.ld_waited = std::max(w.ld_waited, v);
  if (from) g_raise_memo = RaiseMemo{std::move(from), p_, agent, v};
}

namespace {
inline __attribute__((always_inline)) void max_into(Known& k, const Known& b) {
  k.epoch = std::max(k.epoch, b.epoch);
  k.issued = std::max(k.issued, b.issued);
  k.committed = std::max(k.committed, b.committed);
  k.ld_issued = std::max(k.ld_issued, b.ld_issued);
  k.ld_waited = std::max(k.ld_waited, b.ld_waited);
}
}  // namespace

namespace {
// Both clocks name the same agents in the same order (threads that passed the same barriers: the
// lanes of a warp at __syncwarp, the threads of a CTA).
bool same_agents(const std::vector<Known>& x, const std::vector<Known>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].agent != y[i].agent) return false;
  return true;
}

// Raises every field of x to y's, the agents being the same: four fields at a time.
void max_fields(std::vector<Known>& x, const std::vector<Known>& y) {
  static_assert(sizeof(Known) == 6 * sizeof(uint32_t), "Known: six 32-bit fields, no padding");
  typedef uint32_t V __attribute__((vector_size(16)));
  const size_t words = x.size() * 6;
  unsigned char* a = reinterpret_cast<unsigned char*>(x.data());
  const unsigned char* b = reinterpret_cast<const unsigned char*>(y.data());
  size_t k = 0;
  for (; k + 4 <= words; k += 4) {
    V va, vb;
    std::memcpy(&va, a + 4 * k, 16);
    std::memcpy(&vb, b + 4 * k, 16);
    va = va > vb ? va : vb;
    std::memcpy(a + 4 * k, &va, 16);
  }
  for (; k < words; ++k) {
    uint32_t wa, wb;
    std::memcpy(&wa, a + 4 * k, 4);
    std::memcpy(&wb, b + 4 * k, 4);
    if (wb > wa) std::memcpy(a + 4 * k, &wb, 4);
  }
}
}  // namespace

namespace {
// Is every field of x at most y's (x <= y), and of y at most x's (y <= x)? The agents are the same.
void compare_fields(const std::vector<Known>& x, const std::vector<Known>& y, bool* x_le_y, bool* y_le_x) {
  typedef uint32_t V __attribute__((vector_size(16)));
  const size_t words = x.size() * 6;
  const unsigned char* a = reinterpret_cast<const unsigned char*>(x.data());
  const unsigned char* b = reinterpret_cast<const unsigned char*>(y.data());
  V above{0, 0, 0, 0}, below{0, 0, 0, 0};  // lanes where x > y, where x < y
  size_t k = 0;
  for (; k + 4 <= words; k += 4) {
    V va, vb;
    std::memcpy(&va, a + 4 * k, 16);
    std::memcpy(&vb, b + 4 * k, 16);
    above |= va > vb;
    below |= va < vb;
  }
  bool gt = (above[0] | above[1] | above[2] | above[3]) != 0, lt = (below[0] | below[1] | below[2] | below[3]) != 0;
  for (; k < words; ++k) {
    uint32_t wa, wb;
    std::memcpy(&wa, a + 4 * k, 4);
    std::memcpy(&wb, b + 4 * k, 4);
    gt |= wa > wb;
    lt |= wa < wb;
  }
  *x_le_y = !gt;
  *y_le_x = !lt;
}

// Is e at most o: every agent of e in o, with no field above o's? Then the join of o into e is o
// itself, and e can share o's entries instead of becoming a copy of them (the threads that pass
// one barrier then keep one set of entries, not one each).
bool covered_by(const std::vector<Known>& e, const std::vector<Known>& o) {
  const size_t n = e.size(), m = o.size();
  if (n > m) return false;
  const Known* a = e.data();
  const Known* b = o.data();
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    while (j < m && b[j].agent < a[i].agent) ++j;
    if (j == m || b[j].agent != a[i].agent) return false;
    const Known& x = a[i];
    const Known& y = b[j];
    if (x.epoch > y.epoch || x.issued > y.issued || x.committed > y.committed || x.ld_issued > y.ld_issued ||
        x.ld_waited > y.ld_waited)
      return false;
    ++j;
  }
  return true;
}

// Would joining o into e change e? (Agents of o missing from e, or a field of o above e's.)
bool join_changes(const std::vector<Known>& e, const std::vector<Known>& o) {
  const size_t n = e.size(), m = o.size();
  const Known* a = e.data();
  const Known* b = o.data();
  auto above = [](const Known& x, const Known& y) {  // y has a field above x's
    return y.epoch > x.epoch || y.issued > x.issued || y.committed > x.committed || y.ld_issued > x.ld_issued ||
           y.ld_waited > x.ld_waited;
  };
  size_t i = 0;
  if (m * 16 < n) {
    for (size_t j = 0; j < m; ++j) {
      i = size_t(std::lower_bound(a + i, a + n, b[j].agent, [](const Known& k, uint32_t x) { return k.agent < x; }) - a);
      if (i == n || a[i].agent != b[j].agent || above(a[i], b[j])) return true;
      ++i;
    }
    return false;
  }
  for (size_t j = 0; j < m; ++j) {
    while (i < n && a[i].agent < b[j].agent) ++i;
    if (i == n || a[i].agent != b[j].agent || above(a[i], b[j])) return true;
    ++i;
  }
  return false;
}
}  // namespace

namespace {
// The last join that had to copy shared entries: those entries, the clock joined into them, and
// the result. The lanes of a warp (the threads of a CTA) that share a clock and acquire the same
// published one all get the same result: the later ones share it instead of computing it again.
// Holding the three keeps them unchanged (copy on write), so the same pointers mean the same values.
struct JoinMemo {
  std::shared_ptr<std::vector<Known>> from, with, to;
} g_join_memo;
}  // namespace

void HbClock::join(const HbClock& o) {
  if (!o.p_ || o.p_->empty() || o.p_ == p_) return;
  if (!p_ || p_->empty()) {
    p_ = o.p_;  // equal to o from now on: share its entries
    return;
  }
  if (p_ == g_join_memo.from && o.p_ == g_join_memo.with) {
    p_ = g_join_memo.to;
    return;
  }
  if (same_agents(*p_, *o.p_)) {  // the agent fields are equal, so their max is themselves
    bool le = false, ge = false;
    compare_fields(*p_, *o.p_, &le, &ge);
    if (ge) return;     // o adds nothing
    if (le) {
      g_join_memo = JoinMemo{p_, o.p_, o.p_};  // the clock's other holders will make the same join
      p_ = o.p_;  // the join is o itself
    } else if (p_.use_count() > 1) {
      JoinMemo m{p_, o.p_, nullptr};
      max_fields(own(), *o.p_);
      m.to = p_;
      g_join_memo = std::move(m);
    } else {
      max_fields(own(), *o.p_);
    }
    return;
  }
  if (!join_changes(*p_, *o.p_)) return;
  if (covered_by(*p_, *o.p_)) {
    if (p_.use_count() > 1) g_join_memo = JoinMemo{p_, o.p_, o.p_};
    p_ = o.p_;  // the join is o itself
    return;
  }
  if (p_.use_count() > 1) {
    JoinMemo m{p_, o.p_, nullptr};
    join_into_own(*o.p_);
    m.to = p_;
    g_join_memo = std::move(m);
  } else {
    join_into_own(*o.p_);
  }
}

// The join when it changes this clock's entries (which are its own, or copied first).
void HbClock::join_into_own(const std::vector<Known>& oe) {
  std::vector<Known>& e = own();
  // The common case: every agent of `o` is already here (threads that passed the same barriers):
  // in place, in one pass, without allocating. If `o` turns out to know an agent this clock does
  // not, the merge below finishes the job: the entries already raised stay correct (max is
  // idempotent).
  {
    size_t i = 0, j = 0;
    const size_t n = e.size(), m = oe.size();
    Known* a = e.data();
    const Known* b = oe.data();
    if (m * 16 < n) {  // a small clock into a large one (a barrier's few arrivals): search for each
      while (j < m) {
        i = size_t(std::lower_bound(a + i, a + n, b[j].agent, [](const Known& k, uint32_t x) { return k.agent < x; }) - a);
        if (i == n || a[i].agent != b[j].agent) break;
        max_into(a[i++], b[j++]);
      }
    } else {
      while (j < m && i < n) {
        if (a[i].agent == b[j].agent) max_into(a[i++], b[j++]);
        else if (a[i].agent < b[j].agent) ++i;
        else break;
      }
    }
    if (j == m) return;
    // The rest of `o` comes after every agent here (a barrier's accumulator collecting the threads
    // of a CTA, numbered in thread order): appended, no merge.
    if (n == 0 || b[j].agent > a[n - 1].agent) {
      e.insert(e.end(), b + j, b + m);
      return;
    }
  }
  // The merge, into one scratch buffer kept from merge to merge, then copied (a clock keeps no
  // spare capacity: there is one per thread).
  static std::vector<Known> scratch;
  const size_t n = e.size(), m = oe.size();
  if (scratch.size() < n + m) scratch.resize(n + m);
  Known* r = scratch.data();
  const Known* a = e.data();
  const Known* b = oe.data();
  size_t i = 0, j = 0, k = 0;
  while (i < n && j < m) {
    if (a[i].agent < b[j].agent) {
      r[k++] = a[i++];
    } else if (b[j].agent < a[i].agent) {
      r[k++] = b[j++];
    } else {
      r[k] = a[i++];
      max_into(r[k++], b[j++]);
    }
  }
  while (i < n) r[k++] = a[i++];
  while (j < m) r[k++] = b[j++];
  e.assign(r, r + k);
}

Stamp hb_stamp(const Fiber& f) { return Stamp{f.agent, f.epoch}; }

bool hb_ordered(const Fiber& f, Stamp s) { return s.agent == f.agent || f.hb.knows(s.agent, s.epoch); }

namespace {
// What a release by `f` publishes, written into `c` (f's own clock, or one being built for several
// threads): its epoch, its tcgen05 issue count and its warp's tcgen05.ld count, each raised.
void publish_into(HbClock& c, const Fiber& f, uint32_t epoch) {
  Known& own = c.at(f.agent);
  own.epoch = std::max(own.epoch, epoch);
  if (f.tc_issued) own.issued = std::max(own.issued, f.tc_issued);
  const Fiber& lane0 = *f.cta->fibers[size_t(f.warp) * 32];  // the agent of its warp's loads
  if (lane0.lds_issued) {
    Known& w = c.at(lane0.agent);
    w.ld_issued = std::max(w.ld_issued, lane0.lds_issued);
  }
}
}  // namespace

const HbClock& hb_release(Fiber& f) {
  publish_into(f.hb, f, f.epoch);
  // What it does from now on is not covered by this release. Its clock's own entry keeps the
  // published epoch (its own operations are ordered by program order, hb_ordered), so the clock can
  // be published by reference.
  f.epoch++;
  return f.hb;
}

void hb_release_join(HbClock& acc, HbClock* bases, size_t nbases, Fiber& f) {
  for (size_t i = 0; i < nbases; ++i) {
    if (f.hb.shares_entries(bases[i])) {  // acc already holds these entries: only the release is new
      publish_into(acc, f, f.epoch);
      f.epoch++;
      f.hb_release_pending = true;
      return;
    }
    if (bases[i].entries().empty()) break;  // the slots fill in order: none after this one
  }
  HbClock before = f.hb;
  acc.join(hb_release(f));
  for (size_t i = 0; i < nbases; ++i)
    if (bases[i].entries().empty()) {
      bases[i] = std::move(before);
      break;
    }
}

void hb_settle_release(Fiber& f) {
  // Nothing of the thread ran since the arrive (this is its next instruction), so the release is
  // the one it published then: its previous epoch and its counts as they are.
  publish_into(f.hb, f, f.epoch - 1);
  f.hb_release_pending = false;
}

void hb_exchange(Fiber* const* fs, size_t n) {
  // The clock most of the threads hold (they passed the last exchange together; a lane that
  // arrived on an mbarrier or acquired something since holds its own): tried from the first few
  // distinct clocks, which is enough when one is held by more than half.
  const Fiber* base = nullptr;
  size_t base_count = 0, tried = 0;
  for (size_t i = 0; i < n && tried < 4 && base_count * 2 <= n; ++i) {
    if (!fs[i] || (base && fs[i]->hb.shares_entries(base->hb))) continue;
    size_t count = 0;
    for (size_t j = i; j < n; ++j) count += fs[j] && fs[j]->hb.shares_entries(fs[i]->hb);
    if (count > base_count) base = fs[i], base_count = count;
    ++tried;
  }
  if (!base) return;
  // The join of the releases of one clock is that clock with each release written in: one copy of
  // its entries, not one per thread (each release would copy the shared entries to change its own
  // entry, and each join compare and raise them all). The other threads' releases are joined in.
  HbClock all = base->hb;
  for (size_t i = 0; i < n; ++i)
    if (fs[i] && fs[i]->hb.shares_entries(base->hb)) {
      publish_into(all, *fs[i], fs[i]->epoch);
      fs[i]->epoch++;
    }
  for (size_t i = 0; i < n; ++i)
    if (fs[i] && !fs[i]->hb.shares_entries(base->hb)) all.join(hb_release(*fs[i]));
  // Acquiring: each thread's clock joined with `all`, which already holds it, is `all` itself.
  for (size_t i = 0; i < n; ++i)
    if (fs[i]) fs[i]->hb = all;
}

HbClock hb_release_relaxed(Fiber& f) {
  const uint32_t fenced = f.init_fence_epoch;
  const HbClock& full = hb_release(f);
  // Only the tcgen05 counts travel. An entry left with every field 0 says what a missing entry
  // says (every query asks for an epoch, a count or a need of at least 1), so it is left out: the
  // clock carries the few agents that issued or waited for tcgen05 operations, not every thread
  // the releasing one knows of (a cluster barrier joins one such clock per thread of the cluster).
  HbClock c;
  {
    std::vector<Known> kept;
    for (const Known& k : full.entries())
      if (k.issued | k.committed | k.ld_issued | k.ld_waited) kept.push_back(Known{k.agent, 0, k.issued, k.committed, k.ld_issued, k.ld_waited});
    if (!kept.empty()) c.own() = std::move(kept);
  }
  // fence.mbarrier_init.release.cluster, then this relaxed arrive: a release pattern (PTX ISA §8.9)
  // for the mbarrier inits before the fence. Carrying the fence's epoch orders every earlier access
  // of this thread too, which is looser than the fence (it covers the inits only): a missed report
  // in that corner, never a false one.
  if (fenced) c.at(f.agent).epoch = fenced;
  return c;
}

void hb_acquire_phase(Fiber& f, const HbClock& c) {
  f.hb_release_pending = false;
  hb_acquire(f, c);
}

void hb_acquire(Fiber& f, const HbClock& c) {
  if (!f.sync_pending_fence) f.hb_fenced = f.hb;  // what its tcgen05 operations see until a fence (tmem_hazards.cpp)
  f.hb.join(c);
}

}  // namespace detail
}  // namespace tcsim
