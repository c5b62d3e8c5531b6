// async_smem_writes.h — shared memory that an asynchronous unit writes on a thread's behalf, from
// the write's issue until a thread can be ordered after it: the bytes of a copy (TMA, bulk,
// DSMEM, multicast) until a wait has seen the mbarrier phase its bytes complete
// (async_smem_writes.cpp), and the TMEM address tcgen05.alloc writes into shared memory
// (tmem_slot.cpp). internal.h includes it (kernels and the harness never do).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../descriptors.h"
#include "happens_before.h"
#include "sim.h"

namespace tcsim {
namespace detail {

struct Cta;
struct Fiber;
struct Mbar;

// One copy's bytes in one destination CTA. Its bytes belong to the phase of its mbarrier that was
// open when it was issued (a copy is issued after the wait that frees its buffer, so before the
// phase it fills can complete), or, when its issuer announced them with an arrive.expect_tx on the
// barrier, to that arrive's phase; `landed_phase` is the phase they were actually counted in. The
// phase only words the report (a copy whose phase completed without it is "late": the likely
// causes start with expect_tx); whether there is a report depends on `landed` and the waits.
// The record matters while no wait can be ordered after the bytes: while the copy is in flight,
// and once landed until a wait has seen the phase it landed in complete.
struct CopyWrite {
  Cta* dst = nullptr;
  uint32_t lo = 0, hi = 0;  // shared::cta offsets [lo, hi) in `dst` (rank bits cleared)
  Mbar* bar = nullptr;      // the mbarrier its complete_tx lands on
  uint32_t bar_addr = 0;    // ... its shared::cluster address (for reports)
  uint32_t issue_phase = 0, landed_phase = 0;
  bool landed = false;
  bool multicast = false;
  bool unannounced = false;  // issued into a phase no arrival had announced yet, after an earlier one completed
  const char* what = "";    // "TMA copy", "bulk copy", ...
  Fiber* issuer = nullptr;
  SrcLoc at{};
};

// A copy issued by the running thread will write [dst_addr, +bytes) of `dst` and complete on the
// mbarrier at `bar_addr` of `bar_cta`: fails if a copy that is still in flight (or landed, in a
// phase no wait has seen complete) writes any of those bytes (two writers, unordered: the bytes end
// up from either). Returns the record the copy's landing updates (copy_write_landed).
std::shared_ptr<CopyWrite> copy_write_issued(Cta& dst, uint32_t dst_addr, uint32_t bytes, Cta& bar_cta,
                                             uint32_t bar_addr, const char* what, bool multicast);
// The copy's bytes land now (before its complete_tx is applied to the mbarrier).
void copy_write_landed(CopyWrite& w);
// The running thread's instruction `what` (an MMA or tcgen05.cp being issued, a load; `part`: which
// of its operands, or null) reads [lo, hi) (shared addresses of `cta`, rank bits ignored): fails if
// a copy still writes any of it, naming the copy, its issuer, the mbarrier phase that completed
// without it and the likely causes.
void copy_check_read(Cta& cta, uint32_t lo, uint32_t hi, const char* what, const char* part = nullptr);
// The same for an MMA operand or a tcgen05.cp source read through descriptor `d`: `rows` rows of
// `kbytes` bytes of K each (K-major), or of 16 K elements of `eb` bytes (MN-major).
void copy_check_desc_read(Cta& cta, const tcg::SmemDesc& d, bool mn_major, uint32_t rows, uint32_t kbytes,
                          const char* what, const char* part);
// For the tx-count underflow report of the mbarrier `b` (mbarrier.cpp): the copies that complete on
// it and are not yet seen complete, and the likely causes.
std::string copy_underflow_detail(const Mbar& b);

// The TMEM address tcgen05.alloc wrote into shared memory (tmem_slot.cpp): where, by which
// instruction, and the stamps of the lanes of the warp that executed it (a read must be ordered
// after one of them: the write is performed on the warp's behalf).
struct TmemSlotWrite {
  uint32_t off = 0;  // shared::cta offset of the 4-byte slot (rank bits cleared)
  SrcLoc at{};
  int warp = 0;
  std::vector<Stamp> lanes;
};
// tcgen05.alloc wrote the address into `cta`'s slot at `dst` (do_alloc, on the collective's stack).
void tmem_slot_written(Cta& cta, uint32_t dst, int warp, SrcLoc at);

}  // namespace detail
}  // namespace tcsim
