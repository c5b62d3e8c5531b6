// tmem_slot.cpp — the TMEM address handoff: tcgen05.alloc writes the address of the columns it
// allocated into shared memory (PTX ISA §9.7.16.7.1), on behalf of the warp that executes it, and
// the other warps read it from there with a plain load (ld.shared: tcg::tmem_address_from_slot).
//
// Models: the alloc's write as a write of every lane of its warp (a read ordered after any of
// them is ordered after the write: the lenient reading of "the tcgen05 unit writes it for the
// warp"), and the read as a read of the running thread. The read must happen after the write in
// the happens-before relation (happens_before.h): a CTA barrier (bar.sync, __syncthreads), an
// mbarrier arrive and wait, or a releasing cluster barrier between them orders it; a relaxed
// cluster barrier (barrier.cluster.arrive.relaxed) orders no memory (§9.7.13.3), so it does not.
// The tcgen05 fences around that synchronisation are the protocol of sync.cpp. A read that finds
// no address written yet waits until an alloc writes one, then is checked the same way, so the
// report (naming the alloc and the read) is the same under every seed. tcgen05.dealloc takes the
// address in a register: a kernel that reads it from the slot again does so through this load.
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {
const TmemSlotWrite* find_slot(const Cta& cta, uint32_t off) {
  for (const TmemSlotWrite& w : cta.tmem_slots)
    if (w.off == off) return &w;
  return nullptr;
}
}  // namespace

namespace detail {
void tmem_slot_written(Cta& cta, uint32_t dst, int warp, SrcLoc at) {
  TmemSlotWrite w;
  w.off = dst & kOffsetMask;
  w.at = at;
  w.warp = warp;
  for (size_t i = size_t(warp) * 32; i < size_t(warp) * 32 + 32 && i < cta.fibers.size(); ++i)
    if (cta.fibers[i]->state != FState::kDone) w.lanes.push_back(hb_stamp(*cta.fibers[i]));
  bool replaced = false;
  for (TmemSlotWrite& old : cta.tmem_slots)
    if (old.off == w.off) old = w, replaced = true;
  if (!replaced) cta.tmem_slots.push_back(w);
  notify(cta.tmem_slot_waiters);
}
}  // namespace detail

uint32_t tmem_slot_load(uint32_t addr, SrcLoc at) {
  // Not a scheduling point and no model time: a plain ld.shared, as before the check existed (the
  // interleavings and predictions of the steps stay what they were).
  Fiber& f = me();
  f.at = at;
  Cta& cta = *f.cta;
  const char* what = "ld.shared of the TMEM address slot";
  if (addr % 4)
    fail_here("misaligned shared load", std::string(what) + " at " + hex(addr) + " is not 4-byte aligned");
  uint8_t* p = smem_ptr(cta, addr, 4, what);
  const uint32_t off = addr & kOffsetMask;
  if (!find_slot(cta, off)) {
    Cta* cp = &cta;
    block_until(cta.tmem_slot_waiters, [cp, off] { return find_slot(*cp, off) != nullptr; },
                [addr, what] {
                  return std::string(what) + " at " + hex(addr) + ": waits for a tcgen05.alloc to write an address "
                         "there (none has; is the slot offset the one passed to tcgen05.alloc?)";
                });
  }
  const TmemSlotWrite& w = *find_slot(cta, off);
  bool ordered = false;
  for (const Stamp& s : w.lanes) ordered = ordered || hb_ordered(f, s);
  if (!ordered)
    fail_here("TMEM address read before tcgen05.alloc's write is ordered before it",
              std::string(what) + " at " + hex(addr) + " reads the address that the tcgen05.alloc at " + loc(w.at) +
                  " (warp " + std::to_string(w.warp) + " of " + cta_name(cta) +
                  ") writes there, but nothing orders this read after that write. tcgen05.alloc writes the address "
                  "to shared memory for its warp (PTX ISA §9.7.16.7.1); another thread may read it only after a "
                  "synchronisation that orders memory: tcgen05.fence::before_thread_sync, then __syncthreads / "
                  "bar.sync (or a release/acquire pair: mbarrier arrive and wait, barrier.cluster.arrive.release "
                  "and wait), then tcgen05.fence::after_thread_sync. A relaxed cluster barrier "
                  "(barrier.cluster.arrive.relaxed) orders no memory (§9.7.13.3). On a GPU this load may return the "
                  "slot's old contents, and the thread then uses a garbage TMEM address");
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

}  // namespace tcsim
