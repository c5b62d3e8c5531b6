// async_smem_writes.cpp — the shared memory that asynchronous copies (TMA tiles, bulk copies, their
// multicast forms, DSMEM copies) write, from the issue until a wait can be ordered after the bytes.
//
// Models PTX ISA §9.7.9.25.4.1 / §9.7.9.25.5.2 (the copy's writes are performed asynchronously;
// the only thing that orders a thread after them is the mbarrier phase their complete_tx
// completes, §9.7.13.15): a copy's bytes belong to the phase of its mbarrier that is open when it
// is issued, and a thread is ordered after them only by a wait that sees that phase complete. So:
//  * two copies whose destinations overlap, the second issued while the first is in flight or has
//    landed in a phase that no wait has seen complete, are unordered writers of the same bytes:
//    reported at the second's issue, with both issuers;
//  * an MMA, a tcgen05.cp or a thread load that reads bytes such a copy writes is reported at its
//    issue, before any data is read: the copy, its issuer, and, when the copy's phase completed
//    without it (the copy landed in a later phase, or is still in flight after the phase
//    completed), that phase and the likely causes in order: an expect_tx byte count too small, a
//    multicast mask that reaches this CTA, a wait on the wrong barrier.
// Both are decided from what was issued and from the mbarrier's phases, not from when the bytes
// happened to land, so they hold under every seed: a record stays until a wait of the barrier's
// CTA has seen the phase its bytes were counted in complete (Mbar::observed), and a copy still in
// flight when its own phase completes stays marked late after it lands. ("A wait of that CTA",
// not "a wait the reader is ordered after": a reader ordered only through another thread's wait
// is not reported, a missed report rather than a false one.)
#include <algorithm>

#include "internal.h"

namespace tcsim {
namespace detail {

namespace {

// Can no wait have seen the copy's bytes land (in flight, or landed in a phase that no wait of the
// barrier's CTA has seen complete)? Mbar::observed: the phases a wait there has seen complete.
bool unseen(const CopyWrite& w) { return !w.landed || w.bar->observed <= w.landed_phase; }
// Did its own phase complete without it?
bool late(const CopyWrite& w) { return (w.landed ? w.landed_phase : w.bar->phase) > w.issue_phase; }

std::string range(const Cta& cta, uint32_t lo, uint32_t hi) {
  return "[" + hex((cta.rank << kRankShift) | lo) + ", " + hex((cta.rank << kRankShift) | hi) + ")";
}

std::string describe(const CopyWrite& w) {
  return "the " + std::string(w.what) + " issued by " + who(*w.issuer) + " at " + loc(w.at) + " (it writes " +
         range(*w.dst, w.lo, w.hi) + " of " + cta_name(*w.dst) + " and completes on the mbarrier at " +
         hex(w.bar_addr) + ")";
}

std::string state(const CopyWrite& w) {
  const std::string ph = "phase " + std::to_string(w.issue_phase);
  if (!w.landed && late(w))
    return "it is still in flight, and the " + ph + " of its mbarrier, to which its bytes belong, completed without it";
  if (late(w))
    return "its bytes landed only after the " + ph + " of its mbarrier, to which they belong, had completed (they "
           "were counted in phase " + std::to_string(w.landed_phase) + ", which no wait has seen complete)";
  const std::string when =
      w.unannounced ? " (it was issued after phase " + std::to_string(w.issue_phase - 1) +
                          " had completed, before any arrival announced phase " + std::to_string(w.issue_phase) + ")"
                    : "";
  if (!w.landed) return "it is still in flight (its mbarrier is in " + ph + ", which has not completed)" + when;
  if (w.bar->phase > w.landed_phase)
    return "its bytes have landed in " + ph + " of its mbarrier, which has completed, but no wait has seen it "
           "complete, so nothing is ordered after them yet" + when;
  return "its bytes have landed in " + ph + " of its mbarrier, which has not completed, so no wait can be ordered "
         "after them" + when;
}

#define TCSIM_CAUSES_1_2                                                                                            \
  " Likely causes, in order: (1) the expect_tx byte count is too small for the bytes the copies of this "          \
  "phase bring (e.g. one k-tile's bytes for a stage of two), so the phase completes when the first of them "        \
  "land; (2) a .multicast::cluster copy whose CTA mask includes this CTA although this CTA did not expect "         \
  "the bytes: they land here and count towards its phase (PTX ISA §9.7.9.25.5.2: each CTA of the mask "            \
  "receives the data and a complete_tx on its own mbarrier)"
const char* const kCauses = TCSIM_CAUSES_1_2 "; (3) the reader waited on the wrong mbarrier (or parity), one this "
                                             "copy does not complete.";
const char* const kUnderflowCauses = TCSIM_CAUSES_1_2 ".";
#undef TCSIM_CAUSES_1_2

void prune(Cta& cta) {
  auto& v = cta.copy_writes;
  v.erase(std::remove_if(v.begin(), v.end(), [](const std::shared_ptr<CopyWrite>& w) { return !unseen(*w); }), v.end());
}

}  // namespace

std::shared_ptr<CopyWrite> copy_write_issued(Cta& dst, uint32_t dst_addr, uint32_t bytes, Cta& bar_cta,
                                             uint32_t bar_addr, const char* what, bool multicast) {
  Fiber& f = me();
  prune(dst);
  auto w = std::make_shared<CopyWrite>();
  w->dst = &dst;
  w->lo = dst_addr & kOffsetMask;
  w->hi = w->lo + bytes;
  w->bar = &bar_cta.mbars.find(bar_addr & kOffsetMask)->second;
  w->bar_addr = bar_addr;
  // Its phase: the one its issuer announced bytes for with its last arrive.expect_tx on this barrier
  // (when that phase has completed since, the copy came too late for it), else the open one.
  w->issue_phase = w->bar->tx_by == &f ? std::min(w->bar->tx_phase, w->bar->phase) : w->bar->phase;
  w->unannounced = w->issue_phase == w->bar->phase && w->bar->phase > 0 && w->bar->pending == int64_t(w->bar->expected);
  w->multicast = multicast;
  w->what = what;
  w->issuer = &f;
  w->at = f.at;
  for (const auto& e : dst.copy_writes)
    if (g_options.copy_overlap_checks && e->lo < w->hi && w->lo < e->hi) {
      const uint32_t lo = std::max(e->lo, w->lo), hi = std::min(e->hi, w->hi);
      const bool mc = multicast || e->multicast;
      fail_here("asynchronous copies with overlapping destinations in flight",
                "this " + std::string(what) + " writes " + range(dst, lo, hi) + " of " + cta_name(dst) +
                    ", which " + describe(*e) + " also writes, and " + state(*e) +
                    ". Nothing orders the two writes: the copies complete in any order, so those bytes end up from "
                    "either (a thread is ordered after a copy's bytes only by a wait that sees its mbarrier phase "
                    "complete, PTX ISA §9.7.9.25.4.1, §9.7.13.15). " +
                    (mc ? "Likely causes: a .multicast::cluster copy whose CTA mask includes a CTA that receives "
                          "this range from another copy (each CTA of the mask receives the bytes, PTX ISA "
                          "§9.7.9.25.5.2), or two copies given the same destination offset."
                        : "Likely causes: two copies given the same destination offset (two senders into one "
                          "slot), or a buffer refilled before the wait for its previous contents."));
    }
  dst.copy_writes.push_back(w);
  return w;
}

void copy_write_landed(CopyWrite& w) {
  w.landed = true;
  w.landed_phase = w.bar->phase;
}

void copy_check_read(Cta& cta, uint32_t lo, uint32_t hi, const char* what, const char* part) {
  if (cta.copy_writes.empty()) return;
  const uint32_t n = hi - lo;
  lo &= kOffsetMask;
  hi = lo + n;
  for (const auto& e : cta.copy_writes) {
    if (!(e->lo < hi && lo < e->hi) || !unseen(*e)) continue;
    const uint32_t a = std::max(e->lo, lo), b = std::min(e->hi, hi);
    const Fiber& f = me();
    const std::string reader = std::string(what) + (part ? std::string(" (") + part + ")" : "") + " issued by " +
                               who(f) + " at " + loc(f.at);
    std::string d = reader + " reads " + range(cta, a, b) + " of " + cta_name(cta) + ", which " + describe(*e) +
                    " writes, and " + state(*e) + ". The read is not ordered after the copy's bytes: only a wait that "
                    "sees the copy's mbarrier phase complete is (PTX ISA §9.7.9.25.4.1, §9.7.13.15); on a GPU it "
                    "reads old bytes, new ones, or a mix, depending on timing.";
    if (late(*e) || e->unannounced)  // its phase completed without it, or it may have missed the one before
      d += kCauses;
    else
      d += std::string(" Likely causes: no wait for that phase before the read, or a wait on the wrong mbarrier (or "
                       "parity)") +
           (e->multicast && e->issuer->cta != &cta
                ? "; or a .multicast::cluster copy whose CTA mask includes this CTA although this CTA did not "
                  "expect the bytes (PTX ISA §9.7.9.25.5.2)."
                : ".");
    fail_here("shared memory read while a copy into it is in flight", d);
  }
}

void copy_check_desc_read(Cta& cta, const tcg::SmemDesc& d, bool mn_major, uint32_t rows, uint32_t kbytes,
                          const char* what, const char* part) {
  if (cta.copy_writes.empty() || rows == 0) return;
  // The extremes of the rows' addresses: the first and last 8-row groups, each K chunk (swizzling
  // moves 16-byte chunks inside a row, never across rows).
  uint32_t lo = ~0u, hi = 0;
  auto take = [&](uint32_t addr, uint32_t n) {
    lo = std::min(lo, addr & kOffsetMask);
    hi = std::max(hi, (addr & kOffsetMask) + n);
  };
  for (uint32_t i = 0; i < 16; ++i) {
    const uint32_t r = i < 8 ? std::min(i, rows - 1) : (rows >= 8 ? rows - 16 + i : std::min(i - 8, rows - 1));
    if (mn_major) {
      for (uint32_t k = 0; k < 16; k += 15) take(tcg::mnmajor_operand_addr(d, r, k, 2), 2);
    } else {
      for (uint32_t kb = 0; kb < kbytes; kb += 16) take(tcg::kmajor_operand_addr(d, r, kb), 16);
    }
  }
  if (hi > lo) copy_check_read(cta, lo, hi, what, part);
}

std::string copy_underflow_detail(const Mbar& b) {
  if (!b.init_by) return "";
  std::string s;
  for (const Cta* cta : b.init_by->cta->cluster->ctas)
    for (const auto& e : cta->copy_writes)
      if (e->bar == &b && unseen(*e)) s += "\n    " + describe(*e) + ": " + state(*e);
  return (s.empty() ? "" : "\n  Copies completing on it that no wait has seen land:" + s) + "\n " + kUnderflowCauses;
}

}  // namespace detail
}  // namespace tcsim
