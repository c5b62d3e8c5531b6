// scheduler.cpp — CUDA threads as fibers and the seeded scheduler that interleaves them.
//
// Models: the execution of the threads of one cluster (all its CTAs are resident together),
// switched at emulated instructions with a seed-dependent probability; blocking on barriers,
// mbarriers and warp collectives through wait queues; the completion of asynchronous work at
// points the seed chooses (copies and remote arrivals in any order, the tcgen05 operations of
// one thread in issue order: PTX ISA §9.7.16.6.2); warp-collective .sync.aligned instructions
// (§9.7.13, §9.7.16.7-8: every lane of the warp executes the same instruction); and the reports
// when nothing can move (deadlock) or something spins (livelock).
//
// Fibers switch through fiber_switch.h (each starts on a fresh stack at fiber_entry). The timing
// model's run loop (the earliest event first, the hand-off from thread to thread) is timed_run.cpp.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

#include "internal.h"
#include "run_loop.h"

namespace tcsim {
namespace detail {

Options g_options;
Stats g_stats;
std::atomic<uint64_t> g_heartbeat{0};
Scheduler* g_sched = nullptr;
namespace {
std::vector<void*> g_stack_pool;
}

// ---------------------------------------------------------------------------------------------
// Failure: record the diagnostic and leave the fiber for good (or throw, on the scheduler's stack).
[[noreturn]] void fail(const std::string& msg) {
  Scheduler& s = *g_sched;
  if (s.cur) {
    s.failed = true;
    s.error = msg;
    fiber_switch(s.cur->ctx, s.main_ctx);  // never resumed
    abort();
  }
  throw SimError(msg);
}

Fiber& me() {
  if (!g_sched || !g_sched->cur) {
    fprintf(stderr, "tcsim: a device function was called outside an emulated kernel\n");
    abort();
  }
  return *g_sched->cur;
}

[[noreturn]] void fail_here(const std::string& kind, const std::string& detail) {
  Fiber& f = me();
  fail("tcsim: " + kind + "\n  " + who(f) + " at " + loc(f.at) + ":\n  " + detail);
}


void yield() {
  Scheduler& s = *g_sched;
  Fiber* f = s.cur;
  // Under the timing model a thread that is still runnable goes back into the event heap at
  // its own clock (a blocked one is put back by set_runnable when it is woken).
  if (s.timed && f->state == FState::kRunnable && f->run_idx >= 0)
    // Its stack pointer after the switch below: about 256 bytes under this frame (hand_off's
    // frame and the saved registers), a hint for fetching its stack (timed_run.cpp).
    heap_push(s, f->t, 0, f, ++f->heap_stamp, static_cast<const char*>(__builtin_frame_address(0)) - 256);
  if (s.timed && hand_off(s, f)) return;  // resumed by another thread's hand_off or the loop
  fiber_switch(f->ctx, s.main_ctx);
}

// Every emulated instruction passes here: it counts, checks the budget and may be preempted.
void tick(SrcLoc at) {
  Fiber& f = me();
  if (f.continued) settle_collective(f);
  tick_unsettled(at);
}

void tick_unsettled(SrcLoc at) {
  Fiber& f = me();
  if (f.hb_release_pending) hb_settle_release(f);  // an instruction between cluster arrive and wait
  f.at = at;
  heartbeat();
  if (++g_stats.instructions > g_options.instruction_budget)
    fail_here("livelock (instruction budget exhausted)",
              "the launch executed more than " + std::to_string(g_options.instruction_budget) +
                  " emulated instructions; a thread probably spins forever. Raise the budget if the problem is just big.");
  if (g_sched->timed) {
    model_spend(f, ns_per_instruction());
    return;
  }
  if (g_sched->rng.uniform() < g_sched->p_preempt) yield();
}

void set_runnable(Fiber* f) {
  Scheduler& s = *g_sched;
  f->state = FState::kRunnable;
  f->ready = nullptr;
  f->waits_on = nullptr;
  if (f->run_idx < 0) {
    if (s.timed) {
      // The timing model picks threads from the event queue, never from `runnable`: only their
      // number is kept (a removal from the list would touch another thread's line).
      f->run_idx = 0;
      s.timed_runnable++;
      // Woken by an event at `now` (it continues after its wake-up: its event is then, so that
      // it does not run only to stop again at its next instruction), or created at its CTA's start.
      f->t = std::max(f->t, s.now) + f->wake_cost;
      f->wake_cost = 0;
      heap_push(s, f->t, 0, f, ++f->heap_stamp, fiber_stack_hint(f->ctx));
      return;
    }
    f->run_idx = int(s.runnable.size());
    s.runnable.push_back(f);
  }
}

namespace {
void unset_runnable(Fiber* f) {
  Scheduler& s = *g_sched;
  if (f->run_idx < 0) return;
  if (s.timed) {
    s.timed_runnable--;
    f->run_idx = -1;
    return;
  }
  Fiber* last = s.runnable.back();
  s.runnable[size_t(f->run_idx)] = last;
  last->run_idx = f->run_idx;
  s.runnable.pop_back();
  f->run_idx = -1;
}
}  // namespace

// Blocks the running thread on `q` until ready() holds; whoever changes the state that
// ready() reads calls notify(q).
void block_until(WaitQueue& q, std::function<bool()> ready, std::function<std::string()> waits_on) {
  Fiber& f = me();
  const char* label = f.wait_label;
  f.wait_label = nullptr;
  if (ready()) return;
  const double t0 = f.t;
  if (f.traced) trace_store_flush(f);
  f.state = FState::kBlocked;
  f.ready = std::move(ready);
  f.waits_on = std::move(waits_on);
  // Timing model: noticing the completion (the try_wait loop, the barrier release) is charged
  // when it is made runnable (set_runnable).
  if (g_sched->timed) f.wake_cost = wake_ns(label);
  unset_runnable(&f);
  q.push_back(&f);
  yield();
  if (g_sched->timed) {
    // A wake-up that the releaser put off (wake_lanes_not_before) is the cost of what follows the
    // wait, not waiting: only lane 0 records waits (bounds, trace), and only lane 0 is told.
    double until = f.t;
    if (f.lane == 0) {
      until -= f.wake_delay;
      f.wake_delay = 0;
    }
    bounds_wait(f, label, until - t0);
    if (f.traced) trace_span(*f.cta, f.warp, wait_span_name(f, label), tcg::trace::kCatWait, t0, until);
  }
}

void wake_lanes_not_before(Collective& c, double t) {
  Scheduler& s = *g_sched;
  const double floor = t - wake_ns(nullptr);  // a collective's wait has no label: block_until consumed any
  for (Fiber* w : c.waiters) {
    const double woke = std::max(w->t, s.now);  // what set_runnable will make it, before the wake-up
    if (floor <= woke) continue;
    w->t = floor;
    if (w->lane == 0) w->wake_delay = floor - woke;
  }
}

void notify(WaitQueue& q) {
  size_t keep = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    Fiber* f = q[i];
    if (f->state == FState::kBlocked && f->ready && f->ready()) set_runnable(f);
    else q[keep++] = f;
  }
  q.resize(keep);
}

void push_async(AsyncOp op) {
  Scheduler& s = *g_sched;
  op.cluster = op.issuer ? op.issuer->cta->cluster : nullptr;
  if (s.timed) {
    op.t = std::max(op.t, s.now);  // no time given: it completes at once
    op.seq = s.next_seq++;
    heap_push(s, op.t, 1, nullptr, op.seq);
  }
  s.async_ops.push_back(std::move(op));
}

void push_tc_op(Fiber& f, AsyncOp op) {
  Scheduler& s = *g_sched;
  op.cluster = f.cta->cluster;
  if (s.timed) {
    // One thread's tcgen05 operations complete in issue order (PTX ISA §9.7.16.6.2).
    op.t = std::max({op.t, f.tc_last, s.now});
    f.tc_last = op.t;
    op.seq = s.next_seq++;
    heap_push(s, op.t, 2, &f, op.seq);
  }
  f.tc_ops.push_back(std::move(op));
  if (!f.has_tc_ops) {
    f.has_tc_ops = true;
    g_sched->tc_busy.push_back(&f);
  }
}

// ---------------------------------------------------------------------------------------------
// Warp collectives (.sync.aligned): all live lanes of the warp must execute the same instruction.
// The last lane to arrive performs `op` with every lane's data; the others wait for it.
int live_lanes(const Cta& cta, int warp) {
  const int first = warp * 32;
  const int n = std::min<int>(32, int(cta.fibers.size()) - first);
  return n - cta.warp_exited[warp];
}

bool same_loc(SrcLoc a, SrcLoc b) { return a.line == b.line && (a.file == b.file || (a.file && b.file && !strcmp(a.file, b.file))); }

// full_warp: tcgen05's .sync.aligned instructions need all 32 lanes of the warp (PTX ISA
// §9.7.16.7.1, §9.7.16.8.3); a warp with exited lanes cannot execute them.
namespace {
// A lane arrives at collective c: the checks of a .sync.aligned instruction, then its data.
void arrive_collective(Collective& c, const char* name, void* data, bool full_warp) {
  Fiber& f = me();
  Cta& cta = *f.cta;
  if (c.arrived > 0 && (c.op != name || !same_loc(c.at, f.at)))
    fail_here("divergent warp at a .sync.aligned instruction",
              std::string("this lane executes ") + name + " while other lanes of the warp wait in " + c.op + " at " +
                  loc(c.at) + "; every lane of the warp must execute the same warp-collective instruction together");
  if (full_warp && live_lanes(cta, f.warp) != 32)
    fail_here("divergent warp at a .sync.aligned instruction",
              std::string(name) + " needs all 32 lanes of the warp, but only " +
                  std::to_string(live_lanes(cta, f.warp)) + " are still running");
  if (c.arrived == 0) {
    c.op = name;
    c.at = f.at;
  }
  c.data[f.lane] = data;
  c.arrived++;
}

// The last lane has arrived: the instruction's work, then the next generation, lanes released.
void complete_collective(Collective& c, const CollectiveOp& op) {
  op(c);
  c.arrived = 0;
  c.op = nullptr;
  c.generation++;
  c.data.fill(nullptr);
  notify(c.waiters);
}

std::string collective_waits_on(const Fiber& f, const Collective& w, const char* name) {
  return std::string(name) + " (warp-collective): " + std::to_string(w.arrived) + " of " +
         std::to_string(live_lanes(*f.cta, f.warp)) + " lanes of the warp have arrived";
}
}  // namespace

void collective(const char* name, void* data, CollectiveOp op, bool full_warp) {
  Fiber& f = me();
  Cta& cta = *f.cta;
  Collective& c = cta.warps[f.warp];
  arrive_collective(c, name, data, full_warp);
  if (c.arrived == live_lanes(cta, f.warp)) {
    complete_collective(c, op);
    return;
  }
  const uint64_t gen = c.generation;
  block_until(c.waiters, [&c, gen] { return c.generation != gen; },
              [&f, name] {  // two pointers: std::function holds them without allocating
                return collective_waits_on(f, f.cta->warps[f.warp], name);
              });
}

void collective_continue(const char* name, void* data, CollectiveOp op) {
  Fiber& f = me();
  Cta& cta = *f.cta;
  if (cta.continued.empty()) cta.continued.assign(cta.warps.size(), Collective{});
  Collective& c = cta.continued[size_t(f.warp)];
  arrive_collective(c, name, data, /*full_warp=*/true);
  if (c.arrived < live_lanes(cta, f.warp)) {
    f.continued = true;
    f.continued_gen = c.generation;
    return;
  }
  // The lanes that arrived and did not stop to wait for this one (settle_collective) went on.
  const bool some_went_on = c.arrived - 1 > int(c.waiters.size());
  complete_collective(c, op);
  // collective() charges the lanes that wait for the last one a wake-up after it arrives, so the
  // warp's next collective completes that much later; the lanes that went on skipped it. This
  // lane, which collective() does not charge, is charged it instead: the warp's next collective
  // completes when it would have (exactly so while the warp's lanes run in step).
  if (some_went_on) model_spend(f, wake_ns(nullptr));
}

void settle_collective(Fiber& f) {
  f.continued = false;
  Collective& c = f.cta->continued[size_t(f.warp)];
  const uint64_t gen = f.continued_gen;
  if (c.generation != gen) return;  // its last lane has arrived
  const char* name = c.op;
  block_until(c.waiters, [&c, gen] { return c.generation != gen; },
              [&f, name] { return collective_waits_on(f, f.cta->continued[size_t(f.warp)], name); });
}

// ---------------------------------------------------------------------------------------------
// The watchdog. The emulator switches threads only at emulated instructions, so a kernel that
// spins on ordinary memory (a volatile flag) never gives the other threads a chance and the
// instruction budget is never consulted. This thread notices that nothing has progressed for
// `seconds` and ends the process with a diagnostic instead of letting it hang.
namespace {
class Watchdog {
 public:
  explicit Watchdog(double seconds) : seconds_(seconds) {
    if (seconds_ > 0) thread_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    uint64_t last = g_heartbeat.load();
    auto since = Clock::now();
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
      const uint64_t now = g_heartbeat.load();
      if (now != last) {
        last = now;
        since = Clock::now();
      } else if (std::chrono::duration<double>(Clock::now() - since).count() > seconds_) {
        // The stuck fiber cannot be interrupted safely; report what it last did and end.
        const Fiber* f = g_sched ? g_sched->cur : nullptr;
        fprintf(stderr,
                "tcsim: livelock (no progress)\n  %s has run for %.0f s without executing an emulated "
                "instruction since %s.\n  A spin loop on ordinary memory? The emulator switches threads only at "
                "PTX instructions and barriers; wait on an mbarrier or a barrier instead.\n",
                f ? who(*f).c_str() : "a thread", seconds_, f ? loc(f->at).c_str() : "?");
        fflush(stderr);
        _exit(1);
      }
    }
  }
  double seconds_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace

std::shared_ptr<void> start_watchdog(double seconds) { return std::make_shared<Watchdog>(seconds); }

// ---------------------------------------------------------------------------------------------
// The run loop.
namespace {
void fiber_entry() {
  Scheduler& s = *g_sched;
  (*s.body)();
  Fiber& f = *s.cur;
  if (f.continued) settle_collective(f);  // its warp's last lane has yet to arrive: exit after it
  if (f.hb_release_pending) hb_settle_release(f);  // it exits between a cluster arrive and its wait
  f.state = FState::kDone;
  unset_runnable(&f);
  Cta& cta = *f.cta;
  Cluster& cl = *cta.cluster;
  cl.done++;
  cta.exited++;
  cta.warp_exited[f.warp]++;
  // __syncthreads counts exited threads as arrived, so an exit can complete it.
  CtaBarrier& b0 = cta.bars[0];
  if (b0.arrived > 0 && b0.arrived + uint32_t(cta.exited) >= b0.expected) {
    b0.arrived = 0;
    b0.generation++;
    b0.hb_done = std::move(b0.hb_acc);
    b0.hb_acc.clear();
    notify(b0.waiters);
  }
  cluster_thread_exited(f);  // likewise for the cluster barrier
  Collective& c = cta.warps[f.warp];
  if (c.arrived > 0 && c.op == kSyncthreadsOp && c.arrived == live_lanes(cta, f.warp)) {
    c.arrived = 0;  // the other lanes wait at __syncthreads, which counts exited threads: they go on
    c.op = nullptr;
    c.generation++;
    c.data.fill(nullptr);
    notify(c.waiters);
  } else if (c.arrived > 0 && c.op != kSyncthreadsOp)
    fail("tcsim: divergent warp at a .sync.aligned instruction\n  " + who(f) + " exited while other lanes of its warp wait in " +
         c.op + " at " + loc(c.at));
  if (s.timed) {
    s.end = std::max(s.end, f.t);
    if (f.traced) {
      trace_store_flush(f);
      if (!f.open_phases.empty())  // the GPU trace would report it as an unpaired annotation
        fail("tcsim: trace annotation never ended\n  " + who(f) + " exited inside phase \"" +
             f.open_phases.back().name + "\", begun at " + loc(f.open_phases.back().at) +
             " (docs/tracing.md: every begin needs its end)");
    }
  }
  for (const auto& b : f.pending_ld)
    if (!b->done)
      fail("tcsim: tcgen05.ld never waited for\n  " + who(f) + " exited with the tcgen05.ld issued at " + loc(b->at) +
           " still outstanding; tcgen05.wait::ld must come before its registers are used");
  bulk_thread_exited(f);
  if (cta.exited == int(cta.fibers.size())) cta_finished(cta);
  if (cl.done == cl.fibers.size()) s.retire_pending = true;  // retired on the scheduler's stack
  // Other outstanding asynchronous work of an exited thread still completes (nothing cancels it)
  // as long as its CTA is alive; cta_finished() reports work that outlives the CTA.
  fiber_switch(f.ctx, s.main_ctx);  // never resumed
  abort();
}
}  // namespace

// Fiber stacks. Each of the first kGuardedStacks gets its own mapping with a guard page below it,
// so an overflow faults. Beyond that (the timing model keeps a whole GPU's CTAs resident, over
// 100,000 threads) separate mappings would exceed the kernel's limit on mappings per process
// (vm.max_map_count, 65530 by default), so further stacks come from slabs of kSlabStacks without
// guard pages; a canary at the bottom of each is checked whenever its fiber switches back
// (switch_to), in both scheduler loops.
namespace {
constexpr size_t kGuardedStacks = 8192, kSlabStacks = 256;
constexpr uint64_t kCanary = 0x7C5D1A0C0FFEE123ull;
size_t g_stacks_made = 0;
std::vector<std::pair<const char*, const char*>> g_slabs;  // [begin, end) of each slab
const size_t g_page = size_t(sysconf(_SC_PAGESIZE));
}  // namespace

void* get_stack() {
  if (!g_stack_pool.empty()) {
    void* p = g_stack_pool.back();
    g_stack_pool.pop_back();
    return p;
  }
  const size_t page = g_page;
  if (g_stacks_made < kGuardedStacks) {
    void* p = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw SimError("tcsim: cannot allocate fiber stacks");
    mprotect(p, page, PROT_NONE);  // guard page: a stack overflow faults instead of corrupting memory
    g_stacks_made++;
    return p;
  }
  // A slab: stacks of the same layout (a page below the usable part, here holding the canary).
  const size_t one = kStackBytes + page;
  void* slab = mmap(nullptr, one * kSlabStacks, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (slab == MAP_FAILED) throw SimError("tcsim: cannot allocate fiber stacks");
  for (size_t i = 0; i < kSlabStacks; ++i) {
    char* p = static_cast<char*>(slab) + i * one;
    *reinterpret_cast<uint64_t*>(p + page - sizeof(uint64_t)) = kCanary;
    if (i > 0) g_stack_pool.push_back(p);
  }
  g_stacks_made += kSlabStacks;
  g_slabs.emplace_back(static_cast<const char*>(slab), static_cast<const char*>(slab) + one * kSlabStacks);
  return slab;
}

namespace {
// The canary word of `stack` if it came from a slab; none for a guarded stack (an overflow
// would fault). Looked up once per fiber (create_fiber), so a switch checks one word.
const uint64_t* stack_canary(const void* stack) {
  const char* p = static_cast<const char*>(stack);
  for (const auto& [lo, hi] : g_slabs)
    if (p >= lo && p < hi) return reinterpret_cast<const uint64_t*>(p + g_page - sizeof(uint64_t));
  return nullptr;
}
}  // namespace

void release_stack(void* stack) { g_stack_pool.push_back(stack); }

// getcontext() lives in its own frame so that no local of the launch loop can be clobbered.
__attribute__((noinline)) void create_fiber(Scheduler& s, Cluster& cl, Cta* cta, uint32_t t) {
  auto f = std::make_unique<Fiber>();
  f->vars.thread_idx = uint3{t, 0, 0};
  f->vars.block_idx = cta->block_idx;
  f->vars.block_dim = s.block;
  f->vars.grid_dim = s.grid;
  f->tid = int(t);
  f->warp = int(t / 32);
  f->lane = int(t % 32);
  f->cta = cta;
  f->agent = ++s.next_agent;
  f->t = s.admit_time;  // timing model: the CTA starts when the block scheduler places it
  f->traced = s.timed && g_options.trace && f->lane == 0 && trace_cta(*cta);
  f->stack = get_stack();
  f->canary = stack_canary(f->stack);
  fiber_prepare(f->ctx, static_cast<char*>(f->stack) + g_page, kStackBytes, fiber_entry);
  cta->fibers.push_back(f.get());
  set_runnable(f.get());
  cl.fibers.push_back(std::move(f));
}

// Does fiber f's stack still hold its canary (if it has no guard page)?
bool canary_ok(const Fiber* f) { return f->state == FState::kDone || !f->canary || *f->canary == kCanary; }

// Runs fiber f until a fiber switches back to the scheduler (f itself, or, under the timing
// model, a fiber that f or its successors handed the CPU to: hand_off), then checks the canary of
// that fiber's stack if it has no guard page.
void switch_to(Scheduler& s, Fiber* f) {
  s.cur = f;
  g_stats.fiber_switches++;
  fiber_switch(s.main_ctx, f->ctx);
  Fiber* back = s.cur;  // the fiber that switched to the scheduler
  s.cur = nullptr;
  if (!canary_ok(back))
    throw SimError("tcsim: fiber stack overflow in " + who(*back) + " near " + loc(back->at) + " (more than " +
                   std::to_string(kStackBytes / 1024) + " KiB of stack)");
}

void run_grid(Scheduler& s) {
  if (s.timed) return run_grid_timed(s);
  for (;;) {
    if (s.failed) throw SimError(s.error);
    if (s.retire_pending) retire_clusters(s);
    if (s.admit_pending) {
      s.admit_pending = false;
      admit_clusters(s);
    }
    // Asynchronous operations that may complete now: any copy / remote arrival / TMEM read,
    // and the oldest tcgen05 operation of each thread that has some.
    const size_t n_async = s.async_ops.size() + s.tc_busy.size();
    if (s.runnable.empty() && n_async == 0) {
      if (s.clusters.empty() && s.next_cluster == s.num_clusters) return;
      throw SimError(deadlock_report(s));
    }
    if (n_async > 0 && (s.runnable.empty() || s.rng.uniform() < s.p_async)) {
      size_t pick = s.rng.below(n_async);
      // Lazy seeds sometimes complete in the most adversarial order: the in-order tcgen05
      // queues first (so their commit arrivals pile up), then the newest copy or arrival.
      if (s.runnable.empty() && s.rng.uniform() < s.p_newest_first)
        pick = !s.tc_busy.empty() ? s.async_ops.size() + s.rng.below(s.tc_busy.size()) : s.async_ops.size() - 1;
      AsyncOp op;
      if (pick < s.async_ops.size()) {
        op = std::move(s.async_ops[pick]);
        s.async_ops.erase(s.async_ops.begin() + long(pick));  // keeps issue order (a short list)
      } else {
        const size_t i = pick - s.async_ops.size();
        Fiber& f = *s.tc_busy[i];
        op = std::move(f.tc_ops.front());
        f.tc_ops.pop_front();
        if (f.tc_ops.empty()) {
          f.has_tc_ops = false;
          s.tc_busy[i] = s.tc_busy.back();
          s.tc_busy.pop_back();
        }
      }
      op.run();
      if (s.failed) throw SimError(s.error);
      heartbeat();
      continue;
    }
    Fiber* f = s.runnable[s.rng.below(s.runnable.size())];
    heartbeat();
    switch_to(s, f);
  }
}

}  // namespace detail
}  // namespace tcsim
