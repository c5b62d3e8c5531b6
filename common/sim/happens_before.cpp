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

void HbClock::join(const HbClock& o) {
  if (o.e.empty() || &o == this) return;
  if (e.empty()) {
    e = o.e;
    return;
  }
  if (same_agents(e, o.e)) {  // the agent fields are equal, so their max is themselves
    max_fields(e, o.e);
    return;
  }
  // The common case: every agent of `o` is already here (threads that passed the same barriers):
  // in place, in one pass, without allocating. If `o` turns out to know an agent this clock does
  // not, the merge below finishes the job: the entries already raised stay correct (max is
  // idempotent).
  {
    size_t i = 0, j = 0;
    const size_t n = e.size(), m = o.e.size();
    Known* a = e.data();
    const Known* b = o.e.data();
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

void hb_acquire(Fiber& f, const HbClock& c) { f.hb.join(c); }

}  // namespace detail
}  // namespace tcsim
