// tmem.cpp — Tensor Memory: the column allocator and the loads that read it into registers.
//
// Models (PTX ISA §9.7.16.1 tensor memory, §9.7.16.7.1 alloc/dealloc/relinquish, §9.7.16.8.1
// access restrictions, §9.7.16.8.3 tcgen05.ld, §9.7.16.8.5 wait::ld):
//  * per SM 128 lanes x 512 columns of 32-bit cells, shared by the CTAs resident on it (launch.cpp),
//    allocated in power-of-two column counts in [32, 512] by one full warp; the allocator
//    returns a free block (aligned to its size) that the seed picks, not always column 0, and
//    blocks while too few columns are free, until a CTA frees some; the address (lane 0, first
//    column) is written to shared memory; a CTA may only touch columns it allocated; fresh
//    columns hold NaN; every column must be freed before the CTA exits (launch.cpp checks);
//  * .cta_group::2: one warp of each CTA of the pair executes the instruction (same warp id,
//    same destination offset, CUTLASS Allocator2Sm's preconditions); the same columns are
//    allocated (freed) in both CTAs. The first warp waits for the second;
//  * tcgen05.ld 32x32b / 16x256b: the per-thread register maps, the lane-quarter rule (warp w
//    reaches lanes 32*(w%4)..+31), and asynchrony: TMEM is read at a point the scheduler picks
//    between the load and tcgen05.wait::ld, and the registers hold NaN until the wait.
#include <algorithm>
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace detail {

template <class F>
void LdBatch::for_each_cell(F&& fn) const {
  for (uint32_t t = 0; t < 32; ++t) {
    uint32_t* r = dst[t];
    if (!r) continue;
    if (shape == LdShape::k32x32b) {
      for (int i = 0; i < num; ++i) fn(&r[i], lane0 + t, col0 + uint32_t(i));
    } else {
      for (int i = 0; i < num; ++i)
        for (int q = 0; q < 4; ++q)
          fn(&r[4 * i + q], lane0 + t / 4 + (q >= 2 ? 8 : 0), col0 + 8 * uint32_t(i) + 2 * (t % 4) + uint32_t(q % 2));
    }
  }
}

uint32_t& tmem_cell(Cta& cta, uint32_t lane, uint32_t col) { return cta.sm->tmem[size_t(lane) * tcg::kTmemColumns + col]; }

std::string describe_sm_tmem(const Sm& sm) {
  std::string s = "SM " + std::to_string(sm.id) + ":";
  bool any = false;
  for (const Cta* cta : sm.resident)
    for (const TmemAlloc& a : cta->allocs) {
      s += " " + cta_name(*cta) + " holds [" + std::to_string(a.col) + ", " + std::to_string(a.col + a.ncols) +
           ") (tcgen05.alloc at " + loc(a.at) + ");";
      any = true;
    }
  if (!any) s += " no TMEM allocated;";
  return s;
}

const TmemAlloc* tmem_find(const Cta& cta, uint32_t col, uint32_t ncols) {
  for (const TmemAlloc& a : cta.allocs)
    if (col >= a.col && col + ncols <= a.col + a.ncols) return &a;
  return nullptr;
}

std::string describe_allocs(const Cta& cta) {
  if (cta.allocs.empty()) return "no TMEM is allocated";
  std::string s = "allocated columns:";
  for (const TmemAlloc& a : cta.allocs)
    s += " [" + std::to_string(a.col) + ", " + std::to_string(a.col + a.ncols) + ")";
  return s;
}

std::string tmem_cols(const Cta& cta, uint32_t col0, uint32_t ncols) {
  const std::string abs = ncols == 1 ? "column " + std::to_string(col0)
                                     : "columns [" + std::to_string(col0) + ", " + std::to_string(col0 + ncols) + ")";
  const TmemAlloc* a = tmem_find(cta, col0, ncols);
  if (!a) return abs;
  const uint32_t r = col0 - a->col;
  return (ncols == 1 ? "column " + std::to_string(r) : "columns [" + std::to_string(r) + ", " + std::to_string(r + ncols) + ")") +
         " of the allocation (absolute " + abs + ")";
}

// Checks that [lane0, lane0+nlanes) x [col0, col0+ncols) lies in one allocation.
void tmem_check_range(Cta& cta, uint32_t lane0, uint32_t nlanes, uint32_t col0, uint32_t ncols, const char* what) {
  if (lane0 + nlanes > tcg::kTmemLanes || col0 + ncols > tcg::kTmemColumns || !tmem_find(cta, col0, ncols))
    fail_here("TMEM access outside the allocation",
              std::string(what) + " touches lanes [" + std::to_string(lane0) + ", " + std::to_string(lane0 + nlanes) +
                  ") x absolute columns [" + std::to_string(col0) + ", " + std::to_string(col0 + ncols) + ") of " +
                  cta_name(cta) + "; " + describe_allocs(cta) +
                  ". A TMEM address is the one tcgen05.alloc wrote plus a column offset inside the allocation (PTX ISA "
                  "§9.7.16.7.1: the allocator picks the columns; §9.7.16.8.1: a CTA accesses only what it allocated)");
}

void check_no_pending_ld(Cta& cta, uint32_t lane0, uint32_t nlanes, uint32_t col0, uint32_t ncols, const std::string& writer) {
  auto& v = cta.pending_lds;
  v.erase(std::remove_if(v.begin(), v.end(), [](const std::shared_ptr<LdBatch>& b) { return b->done; }), v.end());
  for (const auto& b : v) {
    if (b->col0 >= col0 + ncols || b->col0 + b->ncols() <= col0) continue;  // no column in common
    b->for_each_cell([&](uint32_t*, uint32_t lane, uint32_t col) {
      if (lane >= lane0 && lane < lane0 + nlanes && col >= col0 && col < col0 + ncols)
        fail("tcsim: TMEM overwritten under a pending tcgen05.ld\n  " + writer + " writes lane " +
             std::to_string(lane) + ", " + tmem_cols(cta, col, 1) + " of " + cta_name(cta) +
             ", which the tcgen05.ld issued at " + loc(b->at) +
             " still reads: that load has not been waited for (tcgen05.wait::ld), so it may return the new value. "
             "Wait for the load before releasing the TMEM to the MMA (PTX ISA §9.7.16.8.5, §9.7.16.6.4)");
    });
  }
}

}  // namespace detail

namespace {

struct TwoArgs {
  uint32_t a, b;
};

// The operands every lane of the warp passed (all must agree).
TwoArgs uniform_args(Collective& c, const char* name) {
  const TwoArgs* a0 = nullptr;
  for (void* d : c.data)
    if (d) {
      const TwoArgs* x = static_cast<TwoArgs*>(d);
      if (!a0) a0 = x;
      else if (x->a != a0->a || x->b != a0->b)
        fail_here("divergent warp at a .sync.aligned instruction", std::string(name) + " with different operands in different lanes");
    }
  return *a0;
}

// The pair step of a cta_group::2 allocator instruction, run by the last lane of each CTA's warp:
// the first warp of the pair waits; the second checks that both agree and performs `op` for both.
void pair_step(Cta& cta, const char* name, int warp, TwoArgs args, const std::function<void(Cta&, Cta&)>& op) {
  Cta& peer = pair_peer(cta, name);
  Cta& even = cta.rank % 2 == 0 ? cta : peer;
  Cta& odd = cta.rank % 2 == 0 ? peer : cta;
  PairCollective& p = even.pair_op;
  Fiber& f = me();
  if (!p.op) {
    p.op = name;
    p.cta = &cta;
    p.warp = warp;
    p.a = args.a;
    p.b = args.b;
    p.at = f.at;
    const uint64_t gen = p.generation;
    PairCollective* pp = &p;
    Cta* peer_p = &peer;
    block_until(p.waiters, [pp, gen] { return pp->generation != gen; },
                [pp, peer_p, name] {
                  return std::string(name) + ".cta_group::2: waiting for a warp of the pair peer " + cta_name(*peer_p) +
                         " to execute it too (a pair instruction needs one warp in each CTA of the pair)";
                });
    return;
  }
  if (p.cta == &cta)
    fail_here("two warps of one CTA at a cta_group::2 instruction",
              std::string(name) + ".cta_group::2 from warp " + std::to_string(warp) + " while warp " +
                  std::to_string(p.warp) + " of the same CTA waits in " + p.op + ".cta_group::2 at " + loc(p.at) +
                  "; a pair instruction takes one warp of EACH CTA of the pair, never two warps of one");
  if (p.op != name)
    fail_here("divergent CTA pair at a cta_group::2 instruction",
              std::string(name) + ".cta_group::2 while the pair peer's warp " + std::to_string(p.warp) + " waits in " +
                  p.op + ".cta_group::2 at " + loc(p.at) + "; both CTAs of the pair must execute the same instruction");
  if (p.warp != warp)
    fail_here("cta_group::2 instruction from different warps of the pair",
              std::string(name) + ".cta_group::2 from warp " + std::to_string(warp) + " while the pair peer executes it in warp " +
                  std::to_string(p.warp) + " (at " + loc(p.at) +
                  "); the two warps must have the same warp id in their CTAs (CUTLASS Allocator2Sm precondition)");
  if ((p.a & kOffsetMask) != (args.a & kOffsetMask) || p.b != args.b)
    fail_here("cta_group::2 operands differ between the CTAs of the pair",
              std::string(name) + ".cta_group::2 with operands (" + hex(args.a & kOffsetMask) + ", " + std::to_string(args.b) +
                  ") while the pair peer passed (" + hex(p.a & kOffsetMask) + ", " + std::to_string(p.b) + ") at " + loc(p.at) +
                  "; both CTAs must pass the same shared-memory offset / TMEM address and column count");
  op(even, odd);
  p.op = nullptr;
  p.generation++;
  notify(p.waiters);
}

// The blocks of `ncols` columns (aligned to their size) free on the SMs of all `ctas`.
std::vector<uint32_t> free_blocks(const std::vector<Cta*>& ctas, uint32_t ncols) {
  std::vector<uint32_t> out;
  for (uint32_t col = 0; col + ncols <= tcg::kTmemColumns; col += ncols) {
    bool clash = false;
    for (const Cta* cta : ctas)
      for (const Cta* other : cta->sm->resident)
        for (const TmemAlloc& a : other->allocs)
          if (col < a.col + a.ncols && a.col < col + ncols) clash = true;
    if (!clash) out.push_back(col);
  }
  return out;
}

void do_alloc(const std::vector<Cta*>& ctas, TwoArgs a0, int warp, SrcLoc at) {
  if (!tcg::is_valid_tmem_alloc(a0.b))
    fail_here("bad TMEM allocation", "tcgen05.alloc of " + std::to_string(a0.b) +
                                         " columns; the count must be a power of two in [32, 512] (PTX ISA §9.7.16.7.1)");
  uint32_t own = 0;
  for (const TmemAlloc& a : ctas.front()->allocs) own += a.ncols;
  for (Cta* cta : ctas) {
    if (cta->relinquished)
      fail_here("TMEM allocation after relinquish",
                "tcgen05.alloc after " + cta_name(*cta) + " executed tcgen05.relinquish_alloc_permit (PTX ISA §9.7.16.7.1)");
    if (own + a0.b > tcg::kTmemColumns)  // it could never be satisfied: this CTA itself holds the rest
      fail_here("TMEM over capacity", "tcgen05.alloc of " + std::to_string(a0.b) + " columns while " +
                                          cta_name(*cta) + " itself holds " + std::to_string(own) + " of 512 (" +
                                          describe_allocs(*cta) + "); an SM has 512 TMEM columns (PTX ISA §9.7.16.1)");
  }
  // Blocks until enough columns are free on every SM involved (other CTAs resident there may
  // hold them), then the seed picks one of the free blocks.
  std::vector<uint32_t> blocks = free_blocks(ctas, a0.b);
  while (blocks.empty()) {  // woken when columns were freed; another CTA may have taken them first
    const std::vector<Cta*> cs = ctas;
    const uint32_t n = a0.b;
    block_until(g_sched->tmem_waiters, [cs, n] { return !free_blocks(cs, n).empty(); },
                [cs, n] {
                  std::string w = "tcgen05.alloc of " + std::to_string(n) + " columns waits for free TMEM;";
                  for (const Cta* c : cs) w += " " + describe_sm_tmem(*c->sm);
                  return w;
                });
    blocks = free_blocks(ctas, a0.b);
  }
  const uint32_t col = blocks[g_sched->rng.below(blocks.size())];
  const uint32_t taddr = tcg::tmem_addr(0, col);
  for (Cta* cta : ctas) {
    for (uint32_t lane = 0; lane < tcg::kTmemLanes; ++lane)  // fresh columns hold NaN, not a predecessor's data
      std::fill_n(&tmem_cell(*cta, lane, col), a0.b, kTmemPoison);
    cta->allocs.push_back(TmemAlloc{col, a0.b, warp, at});
    prov_tmem_allocated(*cta, col, a0.b);
    const uint32_t dst = (cta->rank << kRankShift) | (a0.a & kOffsetMask);
    if (dst % 4) fail_here("misaligned store", "tcgen05.alloc destination " + hex(dst) + " is not 4-byte aligned");
    check_no_mbarrier_in(*cta, dst, 4, "tcgen05.alloc destination");
    memcpy(smem_ptr(*cta, dst, 4, "tcgen05.alloc destination"), &taddr, 4);
    tmem_slot_written(*cta, dst, warp, at);  // the read must be ordered after it (tmem_slot.cpp)
  }
}

void do_dealloc(const std::vector<Cta*>& ctas, TwoArgs a0) {
  const uint32_t col = tcg::tmem_column(a0.a);
  for (Cta* cta : ctas) {
    bool found = false;
    for (size_t i = 0; i < cta->allocs.size() && !found; ++i)
      if (cta->allocs[i].col == col && cta->allocs[i].ncols == a0.b && tcg::tmem_lane(a0.a) == 0) {
        cta->allocs.erase(cta->allocs.begin() + long(i));
        tc_forget_columns(*cta, col, a0.b);
        found = true;
      }
    if (!found)
      fail_here("bad TMEM deallocation", "tcgen05.dealloc of address " + hex(a0.a) + ", " + std::to_string(a0.b) +
                                             " columns, matches no allocation of " + cta_name(*cta) + "; " +
                                             describe_allocs(*cta) +
                                             ": pass the address tcgen05.alloc wrote and the same column count (PTX ISA §9.7.16.7.1)");
  }
  notify(g_sched->tmem_waiters);  // an allocation waiting on this SM may now fit
}

// Reads a tcgen05.ld's TMEM cells into the destination registers (once).
void run_ld(LdBatch& b) {
  if (b.done) return;
  Cta& cta = *b.cta;
  if (!tmem_find(cta, b.col0, b.ncols()))  // (it was one allocation when issued) some column is not allocated now
    b.for_each_cell([&](uint32_t*, uint32_t, uint32_t col) {
      if (!tmem_find(cta, col, 1))
        fail("tcsim: TMEM deallocated under a pending tcgen05.ld\n  the tcgen05.ld issued at " + loc(b.at) +
             " reads TMEM column " + std::to_string(col) + ", which was freed before the load completed (" +
             describe_allocs(cta) + "); tcgen05.wait::ld before tcgen05.dealloc (PTX ISA §9.7.16.8.5, §9.7.16.7.1)");
    });
  // Timing only (--predict): no data moves (the MMAs computed nothing to read); the registers keep
  // the poison they were given at issue.
  if (!g_options.skip_math) b.for_each_cell([&](uint32_t* r, uint32_t lane, uint32_t col) { *r = tmem_cell(cta, lane, col); });
  b.done = true;
}

}  // namespace

void tmem_alloc(uint32_t dst, uint32_t ncols, int cta_group, SrcLoc at) {
  tick(at);
  use_cta_group(cta_group, "tcgen05.alloc");
  tcgen05_op("tcgen05.alloc");
  Fiber& f = me();
  TwoArgs args{dst, ncols};
  Cta& cta = *f.cta;
  const int warp = f.warp;
  collective("tcgen05.alloc", &args, [&cta, warp, at, cta_group](Collective& c) {
    const TwoArgs a0 = uniform_args(c, "tcgen05.alloc");
    smem_ref(cta, a0.a, 4, "tcgen05.alloc destination");  // a shared::cta address of this CTA
    if (cta_group == 1) return do_alloc({&cta}, a0, warp, at);
    pair_step(cta, "tcgen05.alloc", warp, a0,
              [a0, warp, at](Cta& even, Cta& odd) { do_alloc({&even, &odd}, a0, warp, at); });
  }, /*full_warp=*/true);
  if (timed()) model_spend(f, model_tmem_alloc_ns());
}

void tmem_dealloc(uint32_t taddr, uint32_t ncols, int cta_group, SrcLoc at) {
  tick(at);
  use_cta_group(cta_group, "tcgen05.dealloc");
  tcgen05_op("tcgen05.dealloc");
  Fiber& f = me();
  Cta& cta = *f.cta;
  const int warp = f.warp;
  TwoArgs args{taddr, ncols};
  collective("tcgen05.dealloc", &args, [&cta, warp, cta_group](Collective& c) {
    const TwoArgs a0 = uniform_args(c, "tcgen05.dealloc");
    // Every lane is ordered after the completion of whatever used the columns (tmem_hazards.cpp).
    for (size_t l = 0; l < c.data.size(); ++l)
      if (c.data[l]) {
        const Fiber& lane = *cta.fibers[size_t(warp) * 32 + l];
        tc_check_dealloc(lane, cta, tcg::tmem_column(a0.a), a0.b);
        if (cta_group == 2) tc_check_dealloc(lane, pair_peer(cta, "tcgen05.dealloc"), tcg::tmem_column(a0.a), a0.b);
      }
    if (cta_group == 1) return do_dealloc({&cta}, a0);
    pair_step(cta, "tcgen05.dealloc", warp, a0, [a0](Cta& even, Cta& odd) { do_dealloc({&even, &odd}, a0); });
  }, /*full_warp=*/true);
}

void tmem_relinquish(int cta_group, SrcLoc at) {
  tick(at);
  use_cta_group(cta_group, "tcgen05.relinquish_alloc_permit");
  tcgen05_op("tcgen05.relinquish_alloc_permit");
  Fiber& f = me();
  Cta& cta = *f.cta;
  const int warp = f.warp;
  collective("tcgen05.relinquish_alloc_permit", nullptr, [&cta, warp, cta_group](Collective&) {
    if (cta_group == 1) {
      cta.relinquished = true;
      return;
    }
    pair_step(cta, "tcgen05.relinquish_alloc_permit", warp, TwoArgs{0, 0}, [](Cta& even, Cta& odd) {
      even.relinquished = true;
      odd.relinquished = true;
    });
  }, /*full_warp=*/true);
}


void tmem_ld(LdShape shape, int num, uint32_t taddr, uint32_t* regs, SrcLoc at) {
  tick(at);
  tcgen05_op("tcgen05.ld");
  Fiber& f = me();
  Cta& cta = *f.cta;
  const char* name = shape == LdShape::k32x32b ? "tcgen05.ld.32x32b" : "tcgen05.ld.16x256b";
  if (f.traced && f.ld_start < 0) {
    trace_store_flush(f);
    f.ld_start = f.t;
  }
  using Args = LdLaneArgs;
  const int nregs = shape == LdShape::k32x32b ? num : 4 * num;
  for (int i = 0; i < nregs; ++i) regs[i] = kTmemPoison;  // registers are undefined until tcgen05.wait::ld
  auto perform = [&cta, shape, num, nregs, name](Collective& c) {
    // A lane that went on (collective_continue) is at a later instruction now: while its load is
    // performed it is back at the load (the checks and reports name where each lane issued it).
    for (void* d : c.data)
      if (d) std::swap(static_cast<Args*>(d)->fiber->at, static_cast<Args*>(d)->at);
    const Args* a0 = nullptr;
    for (void* d : c.data)
      if (d) {
        if (!a0) a0 = static_cast<Args*>(d);
        else if (static_cast<Args*>(d)->taddr != a0->taddr || static_cast<Args*>(d)->shape != a0->shape ||
                 static_cast<Args*>(d)->num != a0->num)
          fail_here("divergent warp at a .sync.aligned instruction",
                    std::string(name) + ": all lanes must execute the same shape and .num with the same TMEM address");
      }
    const uint32_t lane0 = tcg::tmem_lane(a0->taddr), col0 = tcg::tmem_column(a0->taddr);
    const int warp = a0->fiber->warp;
    const uint32_t quarter = uint32_t(warp % 4);
    const uint32_t nlanes = shape == LdShape::k32x32b ? 32 : 16;
    const uint32_t ncols = shape == LdShape::k32x32b ? uint32_t(num) : 8u * uint32_t(num);
    // PTX ISA §9.7.16.8.1: warp w of a warpgroup reaches TMEM lanes 32*(w%4) .. 32*(w%4)+31 only.
    if (lane0 / 32 != quarter || (lane0 % 32) + nlanes > 32)
      fail_here("TMEM lane quarter violation",
                std::string(name) + " at lanes [" + std::to_string(lane0) + ", " + std::to_string(lane0 + nlanes) +
                    ") from warp " + std::to_string(warp) + ", which may only access lanes [" +
                    std::to_string(32 * quarter) + ", " + std::to_string(32 * quarter + 32) + ") (warp % 4 = " +
                    std::to_string(quarter) + "; PTX ISA §9.7.16.8.1: warp w of a warpgroup reaches lanes 32*(w%4) to "
                    "32*(w%4)+31)");
    tmem_check_range(cta, lane0, nlanes, col0, ncols, name);
    // Ordering against the async tcgen05 operations on these cells (tmem_hazards.cpp): every lane
    // of the warp must be ordered after an MMA that writes them (commit + wait, §9.7.16.6.4.4).
    static std::vector<Fiber*> lanes;  // reused: tc_issue reads it during the call only
    lanes.clear();
    for (void* d : c.data)
      if (d) lanes.push_back(static_cast<Args*>(d)->fiber);
    TmemUse src;
    or_lanes(src.lanes, lane0, nlanes);
    src.col0 = col0;
    src.ncols = ncols;
    src.role = "source";
    prov_check_tmem_read(cta, src, name, /*mma_accumulate=*/false);  // provenance.cpp
    TcOp rec;
    rec.kind = TcKind::kLd;
    rec.name = name;
    tc_issue(rec, {{&cta, src}}, lanes, nullptr);
    auto batch = std::make_shared<LdBatch>();
    cta.pending_lds.push_back(batch);
    batch->cta = &cta;
    batch->at = a0->fiber->at;
    batch->shape = shape;
    batch->num = num;
    batch->lane0 = lane0;
    batch->col0 = col0;
    int nlanes_in = 0;
    for (void* d : c.data) {
      if (!d) continue;
      Args& a = *static_cast<Args*>(d);
      batch->dst[size_t(a.fiber->lane)] = a.regs;
      nlanes_in++;
      a.fiber->pending_ld.push_back(batch);
    }
    // The read happens asynchronously: when the scheduler picks this operation, or at the latest
    // at tcgen05.wait::ld. A kernel that loads before the MMAs finished reads stale TMEM.
    AsyncOp op{[batch] { if (!batch->deferred) run_ld(*batch); }, 0u, "a tcgen05.ld", a0->fiber, a0->fiber->at};
    if (timed()) op.t = batch->t_done = model_tmem_ld(cta, warp, uint32_t(nlanes_in * nregs) * 4);
    push_async(std::move(op));
    for (void* d : c.data)
      if (d) std::swap(static_cast<Args*>(d)->fiber->at, static_cast<Args*>(d)->at);
  };
  // Timing model: the lanes go on to their tcgen05.wait::ld without waiting for the last one
  // here (collective_continue); their operands wait for it in the CTA. Seeded runs keep each lane
  // in the load until the last arrives.
  if (timed()) {
    if (cta.ld_args.empty()) cta.ld_args.resize(cta.warps.size());
    Args& args = cta.ld_args[size_t(f.warp)][size_t(f.lane)];
    args = Args{taddr, regs, &f, shape, num, f.at};
    return collective_continue(name, &args, perform);
  }
  Args args{taddr, regs, &f, shape, num, f.at};
  collective(name, &args, perform, /*full_warp=*/true);
}

void tmem_regs_used(const void* regs, uint32_t bytes, const char* use, SrcLoc at) {
  Fiber& f = me();
  const uint8_t* lo = static_cast<const uint8_t*>(regs);
  for (const auto& b : f.pending_ld)
    for (uint32_t* r : b->dst) {  // each lane's registers are consecutive: the first at or after lo
      if (!r) continue;
      const uint8_t* d = reinterpret_cast<const uint8_t*>(r);
      const uint8_t* first = d >= lo ? d : d + 4 * ((lo - d + 3) / 4);
      if (first >= d + 4 * b->regs_per_lane() || first >= lo + bytes) continue;
      f.at = at;
      fail_here("tcgen05.ld registers used before tcgen05.wait::ld",
                std::string(use) + " reads registers that the tcgen05.ld issued at " + loc(b->at) +
                    " writes, and this thread has not executed tcgen05.wait::ld since: the load is asynchronous and "
                    "its destination registers are undefined until tcgen05.wait::ld (PTX ISA §9.7.16.8.3, "
                    "§9.7.16.8.5; here they hold NaN, or the value, depending on the seed). Put tcgen05.wait::ld "
                    "between the load and the first use of its registers");
    }
}

namespace {
double latest_ld_done(const Fiber& f) {
  double done = 0;
  for (const auto& b : f.pending_ld) done = std::max(done, b->t_done);
  return done;
}
}  // namespace

void tmem_wait_ld(SrcLoc at) {
  // A tcgen05.ld of this warp that this lane went on past (collective_continue) is settled by the
  // collective below: every lane has issued it once every lane has reached this wait.
  tick_unsettled(at);
  Fiber& f = me();
  tcgen05_op("tcgen05.wait::ld");
  Fiber& lane0 = *f.cta->fibers[size_t(f.warp) * 32];
  collective("tcgen05.wait::ld", nullptr, [&lane0, &f](Collective& c) {
    lane0.ld_waits++;
    // Timing model: the lanes that wait here resume when the warp's loads have written their
    // registers, not at this arrival (which would resume each one only to stop it again until
    // then, below): one scheduling event per lane instead of two, and the same times. Every lane
    // of the warp holds the same loads (each tcgen05.ld is warp-wide), so this lane's tell the time.
    if (timed()) wake_lanes_not_before(c, latest_ld_done(f));
  }, /*full_warp=*/true);
  f.continued = false;
  tc_ld_waited(f);  // this warp's loads so far are complete, as this thread knows (§9.7.16.6.2.3)
  if (timed()) {
    const double done = std::max(f.t, latest_ld_done(f));
    if (f.traced && f.ld_start >= 0) {
      trace_span(*f.cta, f.warp, "tcgen05.ld", tcg::trace::kCatLd, f.ld_start, done);
      f.ld_start = -1;
    }
    if (done > f.t) model_spend(f, done - f.t);
  }
  for (const auto& b : f.pending_ld) run_ld(*b);
  f.pending_ld.clear();
}

}  // namespace tcsim
