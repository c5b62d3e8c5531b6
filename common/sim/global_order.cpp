// global_order.cpp — global memory that one thread stores and another thread of the same launch
// loads (split-K partials, common/ptx/global.cuh), and the ordering that makes the store visible.
//
// Memory here is host memory and sequentially consistent, so a load always returns the latest
// store; on the GPU a weak load is guaranteed to see a weak store of another thread only if the
// store happens before the load (PTX ISA §8.9: causality order through release/acquire patterns
// and barriers). This file checks that guarantee instead of assuming it, on the emulator's one
// happens-before relation (happens_before.h):
//  * a 16-byte granule remembers its last st_global_v4 (the thread, its happens-before stamp, the
//    source line);
//  * ld_global_v4 of a granule whose last store does not happen before the load is a kernel bug:
//    on the GPU it may return the older contents (a stale partial, the poison). Whatever orders
//    the two counts: bar.sync, an mbarrier phase, the cluster barrier, __syncwarp, or
//  * atom.acq_rel.gpu on a location, which first acquires what every earlier release on that
//    location published (the read-modify-writes on one location form a release sequence, §8.9.3),
//    then releases the thread's clock there (cumulative, §8.9.5).
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

struct LastStore {  // (not the Fiber: a finished cluster's threads are freed while C's granules live on)
  uint3 block;
  int tid;
  Stamp stamp;
  SrcLoc at;
};

std::string thread_name(uint3 b, int tid) {
  return "CTA (" + std::to_string(b.x) + "," + std::to_string(b.y) + "," + std::to_string(b.z) + ") warp " +
         std::to_string(tid / 32) + " lane " + std::to_string(tid % 32) + " (thread " + std::to_string(tid) + ")";
}

struct State {
  std::unordered_map<uintptr_t, LastStore> granules;  // 16-byte granule address -> last store
  std::unordered_map<uintptr_t, HbClock> released;    // atom location -> what its releases published
};
State g_state;

bool same_cta(uint3 a, uint3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

}  // namespace

namespace detail {

void global_order_reset() { g_state = State{}; }

}  // namespace detail

void st_global_v4(void* dst, const void* src, uint32_t bytes, SrcLoc at) {
  check_vector_access(dst, bytes, /*store=*/true, "16-byte global store (st.global.v4.b32)", at);
  Fiber& f = me();
  g_state.granules[reinterpret_cast<uintptr_t>(dst)] = LastStore{f.cta->block_idx, f.tid, hb_stamp(f), at};
  std::memcpy(dst, src, bytes);
  tensormap_generic_store(dst, at);  // a tensor map copied into global memory (tensormap_replace.cpp)
}

void ld_global_v4(void* dst, const void* src, uint32_t bytes, SrcLoc at) {
  check_vector_access(src, bytes, /*store=*/false, "16-byte global load (ld.global.v4.b32)", at);
  Fiber& f = me();
  const auto it = g_state.granules.find(reinterpret_cast<uintptr_t>(src));
  if (it != g_state.granules.end() && !hb_ordered(f, it->second.stamp)) {
    const LastStore& s = it->second;
    fail_here("global load before the store is visible",
              "ld.global.v4 at " + hex(reinterpret_cast<uintptr_t>(src)) + " reads 16 bytes last stored by " +
                  thread_name(s.block, s.tid) + " at " + loc(s.at) +
                  ", but that store does not happen before this load: no release of the storing thread after "
                  "the store (bar.sync, mbarrier.arrive, barrier.cluster.arrive, atom.release) is acquired by "
                  "this thread, directly or through threads that synchronised in between" +
                  (same_cta(s.block, f.cta->block_idx) ? std::string("") : std::string(" (across CTAs: the storing CTA's bar.sync "
                                                                       "after the store, then an atom.acq_rel that "
                                                                       "this thread's CTA acquires)")) +
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
  // The read-modify-write, the acquire and the release happen at one instant, after the trip to
  // L2: the order of the counter's values must be the order in which clocks are passed on.
  if (timed()) model_global_atomic(f);
  HbClock& rel = g_state.released[reinterpret_cast<uintptr_t>(addr)];
  hb_acquire(f, rel);       // acquire: every earlier release in this location's release sequence
  rel.join(hb_release(f));  // release: this thread's clock, its own accesses and what it acquired
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
