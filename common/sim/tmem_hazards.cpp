// tmem_hazards.cpp — the ordering of asynchronous tcgen05 operations, and the TMEM hazards
// between operations that the PTX ISA leaves unordered.
//
// Models PTX ISA §9.7.16.6 ("Memory consistency model for 5th generation of TensorCore
// operations"):
//  * §9.7.16.6.1: tcgen05.mma, cp, shift, ld and st are asynchronous. Two of them, even in one
//    thread, are not ordered, unless
//  * §9.7.16.6.2: they form one of the pipelined pairs, which execute in issue order:
//    mma -> mma (same .cta_group, accumulator, shape and kind), cp -> mma, shift -> mma,
//    shift -> cp.4x256b, mma -> shift (same .cta_group); commit after mma / cp / shift and
//    wait::ld / wait::st after ld / st are implicitly pipelined (§9.7.16.6.2.1);
//  * or the earlier one has completed, as the later one's thread observes: mma / cp / shift
//    through a tcgen05.commit and a wait on its mbarrier (§9.7.16.6.2.2), ld / st through
//    tcgen05.wait::ld / ::st (§9.7.16.6.2.3); in another thread the completion must be ordered
//    before the synchronisation (fence::before_thread_sync, arrive | wait, fence::after_thread_sync;
//    §9.7.16.6.4.4); a thread's tcgen05 operations see what it learnt up to its last
//    fence::after_thread_sync (tc_view): a later synchronisation without the fence orders nothing
//    for them, and a dependency only it carries is reported as the missing fence;
//  * a pipelined pair issued by two threads is ordered by that synchronisation alone, without a
//    completion (§9.7.16.6.3, §9.7.16.6.4.3).
// How: the happens-before clock every thread carries (happens_before.h) also holds what it knows of
// each issuing thread's tcgen05 operations: how many it issued before a synchronisation this thread is ordered after, how many
// of its commits have arrived, how many tcgen05.wait::ld its warp executed. Synchronisations
// carry clocks (mbarrier.cpp, sync.cpp, the commit's arrival in mma.cpp). Each operation records
// the TMEM cells (lanes x columns) it reads and writes (Cta::tmem_uses); a new operation that
// writes cells an earlier one touches, or reads cells it writes, is reported unless the pair is
// ordered as above, for its issuing thread (for a tcgen05.ld, for every lane of the warp). The
// report is made at issue, deterministically, under every seed: the emulator performs one
// thread's operations in issue order, so a kernel that relies on an order the ISA does not give
// would otherwise pass here and fail on a B200 depending on timing. A pipelined pair from two
// threads is also enforced when performed (the earlier operation runs first: tc_perform_first).
// Modelled: tcgen05.mma kind::f16 (D; .cta_group::2 in both CTAs) and kind::mxf4nvf4 (D and the
// scale factors of A and B), tcgen05.cp.32x128b.warpx4 (destination), tcgen05.ld (source).
// tcgen05.shift, tcgen05.st and MMAs with A in TMEM have no wrapper; their pairs are not issued.
#include <algorithm>

#include "internal.h"

namespace tcsim {
namespace detail {

// ------------------------------------------------------------------ clocks

std::shared_ptr<const HbClock> tc_commit_clock(Fiber& f) {
  // The arrival carries what the committing thread knew (its clock as of its last release: a commit
  // starts no epoch, it orders the thread's tcgen05 operations, not its memory accesses) and that
  // this commit's operations completed.
  auto c = std::make_shared<HbClock>(f.hb);
  Known& own = c->at(f.agent);
  if (f.tc_issued) own.issued = std::max(own.issued, f.tc_issued);
  own.committed = std::max(own.committed, ++f.tc_commits);
  return c;
}

void tc_ld_waited(Fiber& f) {
  const Fiber& lane0 = *f.cta->fibers[size_t(f.warp) * 32];
  f.hb.raise_ld_waited(lane0.agent, lane0.ld_waits);
  if (f.sync_pending_fence) f.hb_fenced.raise_ld_waited(lane0.agent, lane0.ld_waits);  // program order: its later tcgen05 operations see it too
}

void or_lanes(uint64_t (&lanes)[2], uint32_t lane0, uint32_t n) {
  for (uint32_t l = lane0; l < lane0 + n && l < 128; ++l) lanes[l / 64] |= 1ull << (l % 64);
}

// ------------------------------------------------------------------ the hazard check

namespace {

const char* short_name(TcKind k) { return k == TcKind::kMma ? "mma" : k == TcKind::kCp ? "cp" : "ld"; }

bool overlap(const TmemUse& a, const TmemUse& b) {
  return ((a.lanes[0] & b.lanes[0]) | (a.lanes[1] & b.lanes[1])) != 0 && a.col0 < b.col0 + b.ncols &&
         b.col0 < a.col0 + a.ncols;
}

bool covers(const TmemUse& big, const TmemUse& small) {
  return (small.lanes[0] & ~big.lanes[0]) == 0 && (small.lanes[1] & ~big.lanes[1]) == 0 && big.col0 <= small.col0 &&
         small.col0 + small.ncols <= big.col0 + big.ncols;
}

// §9.7.16.6.2: the pairs whose operations execute in issue order (shift is not modelled).
bool pipelined(const TcOp& x, const TcOp& y) {
  if (x.cta_group != y.cta_group || y.kind != TcKind::kMma) return false;
  if (x.kind == TcKind::kCp) return true;
  return x.kind == TcKind::kMma && x.d_tmem == y.d_tmem && x.m == y.m && x.n == y.n && x.mma_kind == y.mma_kind;
}

bool same_thread(const TcOp& x, const Fiber& u) {
  return x.kind == TcKind::kLd ? (u.cta == x.cta && u.warp == x.warp) : x.issuer == &u;
}

// What `u`'s tcgen05 operations are ordered after (PTX ISA §9.7.16.6.4): its clock, except after a
// synchronisation that no tcgen05.fence::after_thread_sync has followed yet: then its clock as of
// before that synchronisation (a later unrelated wait does not undo an earlier fence's ordering,
// and orders nothing of its own for tcgen05 operations).
const HbClock& tc_view(const Fiber& u) { return u.sync_pending_fence ? u.hb_fenced : u.hb; }

bool known_complete(const TcOp& x, const Fiber&, const HbClock& c) {
  const Known* k = c.find(x.agent);
  if (!k) return false;
  return x.kind == TcKind::kLd ? k->ld_waited >= x.need : k->committed >= x.need;
}
bool known_complete(const TcOp& x, const Fiber& u) { return known_complete(x, u, tc_view(u)); }

bool issue_ordered(const TcOp& x, const Fiber& u, const HbClock& c) {
  if (same_thread(x, u)) return true;
  const Known* k = c.find(x.agent);
  return k && (x.kind == TcKind::kLd ? k->ld_issued : k->issued) >= x.seq;
}
bool issue_ordered(const TcOp& x, const Fiber& u) { return issue_ordered(x, u, tc_view(u)); }

// `u` issues `what`, which is not ordered after `x` as its tcgen05 operations see it, but would
// be through the synchronisation it has not fenced yet: the missing fence is the mistake.
void check_unfenced_dependency(const TcOp& x, const Fiber& u, bool pipe, const char* what) {
  if (!u.sync_pending_fence) return;
  if (!(known_complete(x, u, u.hb) || (pipe && issue_ordered(x, u, u.hb)))) return;
  const bool one = same_loc(u.sync_first_at, u.sync_at);
  fail_here("missing tcgen05.fence::after_thread_sync",
            std::string(what) + " follows " + u.sync_first + " at " + loc(u.sync_first_at) +
                (one ? "" : std::string(" (and later ") + u.sync_pending_fence + " at " + loc(u.sync_at) + ")") +
                " with no tcgen05.fence::after_thread_sync since" +
                (&u != g_sched->cur ? " (in lane " + std::to_string(u.lane) + " of the warp)" : std::string()) +
                ", and it depends on the " + x.name + " issued by " + who(*x.issuer) + " at " + loc(x.at) +
                ", which only " + (one ? "that synchronisation" : "those synchronisations") +
                " order before it: without the fence it is not ordered after " + (one ? "it" : "them") +
                " and may act on stale data (PTX ISA §9.7.16.6.4)");
}

// "lanes 0-15, 32-47" for a lane mask.
std::string lanes_text(const uint64_t (&m)[2]) {
  std::string s;
  for (uint32_t l = 0; l < 128;) {
    if (!(m[l / 64] >> (l % 64) & 1)) {
      ++l;
      continue;
    }
    uint32_t e = l;
    while (e + 1 < 128 && (m[(e + 1) / 64] >> ((e + 1) % 64) & 1)) ++e;
    s += (s.empty() ? "" : ", ") + std::to_string(l) + (e > l ? "-" + std::to_string(e) : "");
    l = e + 1;
  }
  return s;
}

[[noreturn]] void report(const TmemUse& e, const TmemUse& y, const TcOp& yop, const Cta& cta, const Fiber& u, bool same,
                         bool ordered, bool pipe) {
  const TcOp& x = *e.op;
  const uint64_t lanes[2] = {e.lanes[0] & y.lanes[0], e.lanes[1] & y.lanes[1]};
  const uint32_t c0 = std::max(e.col0, y.col0), c1 = std::min(e.col0 + e.ncols, y.col0 + y.ncols);
  const std::string pair = std::string(short_name(x.kind)) + " -> " + short_name(yop.kind);
  std::string d = std::string(yop.name) + " (its " + y.role + ") " + (y.write ? "writes" : "reads") + " TMEM lanes " +
                  lanes_text(lanes) + " x " + tmem_cols(cta, c0, c1 - c0) + " of " +
                  cta_name(cta) + ", which the " + x.name + " issued by " +
                  (same ? std::string("this thread") : who(*x.issuer)) + " at " + loc(x.at) + " " +
                  (e.write ? "writes" : "reads") + " (its " + e.role + "), and nothing orders the two: ";
  const char* wait_first =
      "the earlier operation must have completed first, as this thread observes it: tcgen05.commit and a wait on "
      "its mbarrier for an mma or cp, tcgen05.wait::ld for a tcgen05.ld";
  if (same && x.kind == TcKind::kMma && yop.kind == TcKind::kMma)
    d += "mma -> mma executes in issue order only with the same .cta_group, accumulator address, shape and kind "
         "(PTX ISA §9.7.16.6.2), and these two differ; " + std::string(wait_first) + " (§9.7.16.6.4.2).";
  else if (same)
    d += pair + " is not one of the pipelined pairs of PTX ISA §9.7.16.6.2 (mma -> mma with the same accumulator, "
         "shape and kind; cp -> mma; shift -> mma; shift -> cp.4x256b; mma -> shift), so the two may execute in "
         "either order; " + std::string(wait_first) + " (§9.7.16.6.4.2).";
  else if (!ordered && pipe)
    d += "no synchronisation orders this instruction after it. " + pair + " is a pipelined pair, and across threads "
         "it needs tcgen05.fence::before_thread_sync and a synchronisation (mbarrier arrive, bar.sync) in the issuing "
         "thread after it, then this thread's wait and tcgen05.fence::after_thread_sync (PTX ISA §9.7.16.6.4.3).";
  else if (!ordered)
    d += "no synchronisation orders this instruction after it. " + pair + " is not a pipelined pair (PTX ISA "
         "§9.7.16.6.2): " + std::string(wait_first) + ", then tcgen05.fence::before_thread_sync and a synchronisation "
         "with this thread, which waits and issues tcgen05.fence::after_thread_sync (§9.7.16.6.4.4).";
  else
    d += "its thread synchronised with this one after issuing it, but " + pair + " is not a pipelined pair (PTX ISA "
         "§9.7.16.6.2), so the synchronisation orders only the issue: " + std::string(wait_first) +
         " before it signals (§9.7.16.6.4.4).";
  d += " On a B200 the outcome depends on timing";
  if (&u != g_sched->cur) d += " (lane " + std::to_string(u.lane) + " of the warp is the one not ordered after it)";
  fail_here("TMEM hazard between asynchronous tcgen05 operations", d);
}

// Runs the front operations of the issuer's in-order tcgen05 queue until `r` has been performed.
void perform_now(TcOp& r) {
  Fiber& f = *r.issuer;
  while (!r.done && !f.tc_ops.empty()) {
    AsyncOp op = std::move(f.tc_ops.front());
    f.tc_ops.pop_front();
    if (f.tc_ops.empty()) {
      f.has_tc_ops = false;
      auto& busy = g_sched->tc_busy;
      for (size_t i = 0; i < busy.size(); ++i)
        if (busy[i] == &f) {
          busy[i] = busy.back();
          busy.pop_back();
          break;
        }
    }
    op.run();
  }
}

}  // namespace

std::shared_ptr<TcOp> tc_issue(TcOp op, std::vector<std::pair<Cta*, TmemUse>> uses, const std::vector<Fiber*>& by,
                               std::vector<std::shared_ptr<TcOp>>* after) {
  Fiber& f0 = *by.front();
  op.issuer = &f0;
  op.cta = f0.cta;
  op.warp = f0.warp;
  op.at = f0.at;
  if (op.kind == TcKind::kLd) {
    Fiber& lane0 = *f0.cta->fibers[size_t(f0.warp) * 32];
    op.agent = lane0.agent;
    op.seq = ++lane0.lds_issued;
    op.need = lane0.ld_waits + 1;
  } else {
    op.agent = f0.agent;
    op.seq = ++f0.tc_issued;
    op.need = f0.tc_commits + 1;
  }
  auto rec = std::make_shared<TcOp>(op);
  for (auto& [cta, use] : uses) {
    bool superseded = false;
    // Newest first: a hazard names the latest operation this one conflicts with.
    for (auto it = cta->tmem_uses.rbegin(); it != cta->tmem_uses.rend(); ++it) {
      TmemUse& e = *it;
      if (!overlap(e, use) || !(e.write || use.write)) continue;
      const TcOp& x = *e.op;
      const bool pipe = pipelined(x, op);
      for (const Fiber* u : by) {
        if (known_complete(x, *u)) continue;
        const bool same = same_thread(x, *u), ordered = issue_ordered(x, *u);
        if (!(pipe && ordered)) {
          check_unfenced_dependency(x, *u, pipe, op.name);
          report(e, use, op, *cta, *u, same, ordered, pipe);
        }
        if (!same && !x.done && after &&
            std::find(after->begin(), after->end(), e.op) == after->end())
          after->push_back(e.op);  // a pipelined pair across threads: performed in order
      }
      // Ordered before this write, which covers it: a later operation that conflicts with it
      // conflicts with this one too, so it need not be kept.
      if (use.write && covers(use, e)) {
        e.op = nullptr;
        superseded = true;
      }
    }
    if (superseded)
      cta->tmem_uses.erase(std::remove_if(cta->tmem_uses.begin(), cta->tmem_uses.end(),
                                          [](const TmemUse& e) { return !e.op; }),
                           cta->tmem_uses.end());
  }
  for (auto& [cta, use] : uses) {
    use.op = rec;
    cta->tmem_uses.push_back(use);
    if (rec->kind == TcKind::kLd) continue;  // a load's warp must wait for it before exiting (scheduler.cpp)
    auto& t = cta->tc_targets;  // the CTA's end must be ordered after its completion (launch.cpp)
    auto it = std::find_if(t.begin(), t.end(), [&rec](const std::shared_ptr<TcOp>& o) { return o->agent == rec->agent; });
    if (it == t.end()) t.push_back(rec);
    else *it = rec;  // one thread's later commit covers its earlier operations too
  }
  return rec;
}

void tc_check_dealloc(const Fiber& f, Cta& cta, uint32_t col0, uint32_t ncols) {
  for (auto it = cta.tmem_uses.rbegin(); it != cta.tmem_uses.rend(); ++it) {
    const TmemUse& e = *it;
    if (!(e.col0 < col0 + ncols && col0 < e.col0 + e.ncols) || known_complete(*e.op, f)) continue;
    const TcOp& x = *e.op;
    check_unfenced_dependency(x, f, false, "tcgen05.dealloc");
    const char* kind = x.kind == TcKind::kMma ? "TMEM deallocated under a running MMA"
                       : x.kind == TcKind::kCp ? "TMEM deallocated under a pending tcgen05.cp"
                                               : "TMEM deallocated under a pending tcgen05.ld";
    fail_here(kind, "tcgen05.dealloc frees columns [" + std::to_string(col0) + ", " + std::to_string(col0 + ncols) +
                        ") of " + cta_name(cta) + ", which the " + x.name + " issued by " +
                        (x.issuer == &f ? std::string("this thread") : who(*x.issuer)) + " at " + loc(x.at) + " " +
                        (e.write ? "writes" : "reads") + " (its " + e.role + "), and " +
                        (&f == g_sched->cur ? std::string("this thread") : "lane " + std::to_string(f.lane) + " of the warp") +
                        " is not ordered after its completion (" + (x.kind == TcKind::kLd ? "tcgen05.wait::ld in its warp"
                                                                     : "a tcgen05.commit after it and a wait on that "
                                                                       "commit's mbarrier") +
                        ", then a synchronisation with this thread). Whether or not it has finished in this run, on a "
                        "GPU it may still use the columns when they are freed or handed to another CTA (PTX ISA "
                        "§9.7.16.7.1, §9.7.16.6.4.4)");
  }
}

void tc_perform_first(const std::vector<std::shared_ptr<TcOp>>& after) {
  for (const auto& r : after)
    if (!r->done) perform_now(*r);
}

void tc_forget_columns(Cta& cta, uint32_t col0, uint32_t ncols) {
  auto& v = cta.tmem_uses;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [col0, ncols](const TmemUse& e) { return e.col0 < col0 + ncols && col0 < e.col0 + e.ncols; }),
          v.end());
}

}  // namespace detail
}  // namespace tcsim
