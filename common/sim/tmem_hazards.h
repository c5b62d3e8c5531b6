// tmem_hazards.h — the ordering of asynchronous tcgen05 operations (tmem_hazards.cpp; PTX ISA
// §9.7.16.6): the operations and the TMEM cells
// they touch, and the checks made when one is issued. internal.h includes it (kernels and the
// harness never do).
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "happens_before.h"
#include "sim.h"

namespace tcsim {
namespace detail {

struct Cta;
struct Fiber;

// What a thread knows of other agents' tcgen05 operations is part of its happens-before clock
// (happens_before.h: Known::issued, committed, ld_issued, ld_waited).

enum class TcKind : uint8_t { kMma, kCp, kLd };

// One asynchronous tcgen05 operation, from its issue until no thread can conflict with it any
// more. `seq` numbers the agent's mma / cp (1, 2, ...); `need` is the value of `committed`
// (mma / cp: the index of the first commit after it) or `ld_waited` (ld) that completes it.
struct TcOp {
  TcKind kind = TcKind::kMma;
  const char* name = "";
  int cta_group = 1;
  uint32_t d_tmem = 0, m = 0, n = 0;  // MMA: accumulator address and shape (pipelining, §9.7.16.6.2)
  int mma_kind = 0;                   // MMA: 0 kind::f16, 1 kind::mxf4nvf4
  Fiber* issuer = nullptr;            // the issuing thread (ld: the warp's lane that performed it)
  Cta* cta = nullptr;                 // the issuer's CTA
  int warp = 0;
  uint32_t agent = 0, seq = 0, need = 0;
  SrcLoc at{};
  bool done = false;                  // performed by the emulator (data moved)
};

// The TMEM cells one operation reads or writes: a set of lanes x a column range of one CTA.
struct TmemUse {
  std::shared_ptr<TcOp> op;
  uint64_t lanes[2] = {0, 0};  // bit l: lane l
  uint32_t col0 = 0, ncols = 0;
  bool write = false;
  const char* role = "";  // "D", "the scale factors of A", "destination", "source"
};

// The lanes [lane0, lane0 + n) as a TmemUse lane mask; or_lanes adds them to one.
void or_lanes(uint64_t (&lanes)[2], uint32_t lane0, uint32_t n);
// An async tcgen05 operation is being issued by `by` (one thread; for tcgen05.ld the 32 lanes of
// the warp): checks every TMEM cell it touches against the operations that may still be in flight
// (PTX ISA §9.7.16.6.2, §9.7.16.6.4) and fails with a hazard report unless each overlapping pair
// with a write is ordered: the earlier one is known complete to the issuing thread (commit +
// mbarrier wait, wait::ld), or the pair is pipelined and the earlier one issue-ordered before this
// one (same thread, or fence + synchronisation + fence). Records the operation's cells. Returns
// the operation; `after` receives other threads' pipelined predecessors not yet performed, which
// its performing must run first (tc_perform_first).
std::shared_ptr<TcOp> tc_issue(TcOp op, std::vector<std::pair<Cta*, TmemUse>> uses, const std::vector<Fiber*>& by,
                               std::vector<std::shared_ptr<TcOp>>* after);
void tc_perform_first(const std::vector<std::shared_ptr<TcOp>>& after);
// tcgen05.commit issued by `f`: its index, and the clock its arrivals carry.
std::shared_ptr<const HbClock> tc_commit_clock(Fiber& f);
// tcgen05.wait::ld by a lane of `warp`: its lds are complete as far as it knows.
void tc_ld_waited(Fiber& f);
// tcgen05.dealloc by `f` of [col0, +ncols) in `cta`: fails unless every operation that touches those
// columns is known complete to `f` (PTX ISA §9.7.16.7.1), whether or not it has run.
void tc_check_dealloc(const Fiber& f, Cta& cta, uint32_t col0, uint32_t ncols);
// tcgen05.dealloc: no operation on these columns can matter any more.
void tc_forget_columns(Cta& cta, uint32_t col0, uint32_t ncols);

}  // namespace detail
}  // namespace tcsim
