// global_order.cpp — global memory that one thread stores and another thread of the same launch
// loads (split-K partials, common/ptx/global.cuh), and the ordering that makes the store visible.
//
// Memory here is host memory and sequentially consistent, so a load always returns the latest
// store; on the GPU a weak load is guaranteed to see a weak store of another thread only if the
// store happens before the load (PTX ISA §8.9: causality order through release/acquire patterns
// and barriers). This file checks that guarantee instead of assuming it, with vector clocks:
//  * every thread counts its st_global_v4 stores; a 16-byte granule remembers the last store to it
//    (CTA, thread, that thread's count, source line);
//  * a thread knows, per CTA of the launch and per thread of that CTA, how many of that thread's
//    stores happen before its own next operation (its own stores always do);
//  * bar.sync / __syncthreads (sync.cpp calls in here) joins the knowledge of every participant
//    and hands it to all of them (§8.9.5: a barrier orders what happened before arriving before
//    what follows the wait in every participant);
//  * atom.acq_rel.gpu on a location first acquires what every earlier release on that location
//    published (the read-modify-writes on one location form a release sequence, §8.9.3), then
//    publishes the thread's own knowledge there (the release is cumulative, §8.9.5);
//  * ld_global_v4 of a granule whose last store is not known to happen before the load is a
//    kernel bug: on the GPU it may return the older contents (a stale partial, the poison).
// A granule nobody stored in this launch (input data from the host) may be loaded freely.
// st.relaxed.gpu has no ordering of its own (§9.7.9.10); it is modelled as a plain store.
// Timing: the stores go through the SM's store path and L2's write path per warp instruction
// (model_global_store), the loads through the SM's path (model_global_access); the atom
// costs one L2 round trip (model_global_atomic).
#include <cstring>
#include <map>
#include <unordered_map>
#include <vector>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {

// Per thread of one CTA: how many of its stores happen before "now" (index: thread id in the CTA).
using Clock = std::vector<uint32_t>;

void join(Clock& into, const Clock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] > into[i]) into[i] = from[i];
}

// What one thread (or a release record, or a barrier generation) knows: per CTA (linear index),
// per thread of it.
struct Knowledge {
  std::map<uint32_t, Clock> by_cta;
  void join(const Knowledge& o) {
    for (const auto& [cta, c] : o.by_cta) tcsim::join(by_cta[cta], c);
  }
  uint32_t get(uint32_t cta, uint32_t tid) const {
    const auto it = by_cta.find(cta);
    return it == by_cta.end() || tid >= it->second.size() ? 0 : it->second[tid];
  }
  void set(uint32_t cta, uint32_t tid, uint32_t v) {
    Clock& c = by_cta[cta];
    if (c.size() <= tid) c.resize(tid + 1, 0);
    c[tid] = v;
  }
};

struct LastStore {
  uint32_t cta, tid, count;
  SrcLoc at;
};

struct BarrierGen {
  Knowledge joined;
  uint32_t inside = 0;  // participants that arrived and have not left yet
};

struct State {
  std::unordered_map<uint64_t, Knowledge> threads;  // key: cta << 16 | tid
  std::unordered_map<uint64_t, uint32_t> stores;    // stores made per thread (same key)
  std::unordered_map<uintptr_t, LastStore> granules;  // 16-byte granule address -> last store
  std::unordered_map<uintptr_t, Knowledge> released;  // atom location -> what releases published
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, BarrierGen> barriers;  // (cta, id, generation)
};
State g_state;

uint64_t key(uint32_t cta, uint32_t tid) { return uint64_t(cta) << 16 | tid; }
uint32_t my_cta() { return linear_cta(*me().cta); }

std::string thread_name(uint32_t cta, uint32_t tid) {
  return "CTA " + std::to_string(cta) + " thread " + std::to_string(tid) + " (warp " + std::to_string(tid / 32) + ")";
}

}  // namespace

namespace detail {

void global_order_reset() { g_state = State{}; }

void global_order_barrier_arrive(uint32_t bar_id, uint64_t generation) {
  Fiber& f = me();
  const uint32_t cta = my_cta();
  BarrierGen& g = g_state.barriers[{cta, bar_id, generation}];
  const auto it = g_state.threads.find(key(cta, uint32_t(f.tid)));
  if (it != g_state.threads.end()) g.joined.join(it->second);
  g.inside++;
}

void global_order_barrier_leave(uint32_t bar_id, uint64_t generation) {
  Fiber& f = me();
  const uint32_t cta = my_cta();
  const auto it = g_state.barriers.find({cta, bar_id, generation});
  if (it == g_state.barriers.end()) return;
  if (!it->second.joined.by_cta.empty()) g_state.threads[key(cta, uint32_t(f.tid))].join(it->second.joined);
  if (--it->second.inside == 0) g_state.barriers.erase(it);
}

}  // namespace detail

void st_global_v4(void* dst, const void* src, uint32_t bytes, SrcLoc at) {
  check_vector_access(dst, bytes, "16-byte global store (st.global.v4.b32)", at);
  Fiber& f = me();
  const uint32_t cta = my_cta(), tid = uint32_t(f.tid);
  const uint32_t n = ++g_state.stores[key(cta, tid)];
  g_state.threads[key(cta, tid)].set(cta, tid, n);  // a thread's own stores precede its later loads
  g_state.granules[reinterpret_cast<uintptr_t>(dst)] = LastStore{cta, tid, n, at};
  std::memcpy(dst, src, bytes);
}

void ld_global_v4(void* dst, const void* src, uint32_t bytes, SrcLoc at) {
  check_vector_access(src, bytes, "16-byte global load (ld.global.v4.b32)", at);
  Fiber& f = me();
  const uint32_t cta = my_cta(), tid = uint32_t(f.tid);
  const auto it = g_state.granules.find(reinterpret_cast<uintptr_t>(src));
  if (it != g_state.granules.end()) {
    const LastStore& s = it->second;
    const auto kt = g_state.threads.find(key(cta, tid));
    const uint32_t known = kt == g_state.threads.end() ? 0 : kt->second.get(s.cta, s.tid);
    if (known < s.count)
      fail_here("global load before the store is visible",
                "ld.global.v4 at " + hex(reinterpret_cast<uintptr_t>(src)) + " by " + thread_name(cta, tid) +
                    " reads 16 bytes last stored by " + thread_name(s.cta, s.tid) + " at " + loc(s.at) +
                    " (its store #" + std::to_string(s.count) + "), but that store does not happen before this load: " +
                    (s.cta == cta ? std::string("no bar.sync joins the two threads after the store")
                                  : std::string("no release by the storing CTA (after a bar.sync that follows the "
                                                "store) is acquired by this thread (or by one that then bar.syncs "
                                                "with it)")) +
                    ". On the GPU the load may return the memory's older contents (PTX ISA §8.9)");
  }
  std::memcpy(dst, src, bytes);
}

uint32_t atom_add_acq_rel_gpu(uint32_t* addr, uint32_t v, SrcLoc at) {
  tick(at);
  if (reinterpret_cast<uintptr_t>(addr) % 4)
    fail_here("misaligned atomic", "atom.global.add.u32 at " + hex(reinterpret_cast<uintptr_t>(addr)) +
                                       " is not 4-byte aligned (PTX ISA §5.4.2)");
  check_global_range(addr, 4, "atom.acq_rel.gpu.global.add.u32");  // inside an allocation (global_memory.cpp)
  Fiber& f = me();
  const uint32_t cta = my_cta(), tid = uint32_t(f.tid);
  // The read-modify-write, the acquire and the release happen at one instant, after the trip to
  // L2: the order of the counter's values must be the order in which knowledge is passed on.
  if (timed()) model_global_atomic(f);
  Knowledge& mine = g_state.threads[key(cta, tid)];
  Knowledge& rel = g_state.released[reinterpret_cast<uintptr_t>(addr)];
  mine.join(rel);  // acquire: every earlier release in this location's release sequence
  rel.join(mine);  // release: what this thread knows, its own stores and what it acquired
  const uint32_t old = *addr;
  *addr = old + v;
  return old;
}

void st_relaxed_gpu(uint32_t* addr, uint32_t v, SrcLoc at) {
  tick(at);
  if (reinterpret_cast<uintptr_t>(addr) % 4)
    fail_here("misaligned store", "st.relaxed.gpu.global.u32 at " + hex(reinterpret_cast<uintptr_t>(addr)) +
                                      " is not 4-byte aligned (PTX ISA §5.4.2)");
  check_global_range(addr, 4, "st.relaxed.gpu.global.u32");
  // A single thread's store: charged on its own (model_global_store would join it to the warp's
  // next store instruction, which the other lanes never issue).
  if (timed()) model_global_access(me(), 4, /*store=*/true);
  *addr = v;
}

}  // namespace tcsim
