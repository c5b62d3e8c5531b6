// happens_before.cpp — the one happens-before relation (happens_before.h): the vector clocks,
// their join, and what a release publishes. Which operations release and acquire is decided where
// they are modelled: mbarrier.cpp (arrive / arrive.expect_tx, local and remote, and the waits),
// sync.cpp (bar.sync, __syncwarp, the cluster barrier), mma.cpp (a commit's arrival carries its
// thread's clock), global_order.cpp (atom.acq_rel: acquire, then release).
#include <algorithm>

#include "internal.h"

namespace tcsim {
namespace detail {

namespace {
auto lower(std::vector<Known>& e, uint32_t agent) {
  return std::lower_bound(e.begin(), e.end(), agent, [](const Known& k, uint32_t a) { return k.agent < a; });
}
}  // namespace

const Known* HbClock::find(uint32_t agent) const {
  auto it = std::lower_bound(e.begin(), e.end(), agent, [](const Known& k, uint32_t a) { return k.agent < a; });
  return it != e.end() && it->agent == agent ? &*it : nullptr;
}

Known& HbClock::at(uint32_t agent) {
  auto it = lower(e, agent);
  if (it == e.end() || it->agent != agent) it = e.insert(it, Known{agent, 0, 0, 0, 0, 0});
  return *it;
}

namespace {
void max_into(Known& k, const Known& b) {
  k.epoch = std::max(k.epoch, b.epoch);
  k.issued = std::max(k.issued, b.issued);
  k.committed = std::max(k.committed, b.committed);
  k.ld_issued = std::max(k.ld_issued, b.ld_issued);
  k.ld_waited = std::max(k.ld_waited, b.ld_waited);
}
}  // namespace

void HbClock::join(const HbClock& o) {
  if (o.e.empty() || &o == this) return;
  if (e.empty()) {
    e = o.e;
    return;
  }
  // The common case: every agent of `o` is already here (threads that passed the same barriers):
  // in place, without allocating.
  {
    size_t i = 0, j = 0;
    while (j < o.e.size() && i < e.size()) {
      if (e[i].agent < o.e[j].agent) ++i;
      else if (e[i].agent == o.e[j].agent) ++i, ++j;
      else break;
    }
    if (j == o.e.size()) {
      for (size_t a = 0, b = 0; b < o.e.size(); ++a)
        if (e[a].agent == o.e[b].agent) max_into(e[a], o.e[b++]);
      return;
    }
  }
  std::vector<Known> r;
  r.reserve(e.size() + o.e.size());
  size_t i = 0, j = 0;
  while (i < e.size() || j < o.e.size()) {
    if (j == o.e.size() || (i < e.size() && e[i].agent < o.e[j].agent)) {
      r.push_back(e[i++]);
    } else if (i == e.size() || o.e[j].agent < e[i].agent) {
      r.push_back(o.e[j++]);
    } else {
      Known k = e[i++];
      max_into(k, o.e[j++]);
      r.push_back(k);
    }
  }
  e.swap(r);
}

Stamp hb_stamp(const Fiber& f) { return Stamp{f.agent, f.epoch}; }

bool hb_ordered(const Fiber& f, Stamp s) { return s.agent == f.agent || f.hb.knows(s.agent, s.epoch); }

const HbClock& hb_release(Fiber& f) {
  Known& own = f.hb.at(f.agent);
  own.epoch = std::max(own.epoch, f.epoch);
  if (f.tc_issued) own.issued = std::max(own.issued, f.tc_issued);
  const Fiber& lane0 = *f.cta->fibers[size_t(f.warp) * 32];  // the agent of its warp's loads
  if (lane0.lds_issued) {
    Known& w = f.hb.at(lane0.agent);
    w.ld_issued = std::max(w.ld_issued, lane0.lds_issued);
  }
  // What it does from now on is not covered by this release. Its clock's own entry keeps the
  // published epoch (its own operations are ordered by program order, hb_ordered), so the clock can
  // be published by reference.
  f.epoch++;
  return f.hb;
}

HbClock hb_release_relaxed(Fiber& f) {
  const uint32_t fenced = f.init_fence_epoch;
  HbClock c = hb_release(f);
  for (Known& k : c.e) k.epoch = 0;
  // fence.mbarrier_init.release.cluster, then this relaxed arrive: a release pattern (PTX ISA §8.9)
  // for the mbarrier inits before the fence. Carrying the fence's epoch orders every earlier access
  // of this thread too, which is looser than the fence (it covers the inits only): a missed report
  // in that corner, never a false one.
  if (fenced) c.at(f.agent).epoch = fenced;
  return c;
}

void hb_acquire(Fiber& f, const HbClock& c) {
  if (!f.sync_pending_fence) f.hb_fenced = f.hb;  // what its tcgen05 operations see until a fence (tmem_hazards.cpp)
  f.hb.join(c);
}

}  // namespace detail
}  // namespace tcsim
