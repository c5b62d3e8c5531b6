// timed_run.cpp — the timing model's run loop (--predict, --trace): always the earliest event
// (a thread, an asynchronous operation, the head of a thread's tcgen05 queue), equal times in issue
// order, with no seed involved; and the hand-off, by which a thread that stops resumes the next one
// directly instead of through the scheduler's stack. Most of its time is memory latency (tens of
// thousands of threads take turns), so it fetches what the next switch will touch while the
// current thread runs. The fibers themselves, the seeded loop and the wait queues are
// scheduler.cpp's.
#include <unistd.h>

#include <algorithm>

#include "internal.h"
#include "run_loop.h"

namespace tcsim {
namespace detail {

namespace {
const size_t g_page = size_t(sysconf(_SC_PAGESIZE));

// Completed operations leave holes in async_ops, timed (below). Reset by each launch's loop.
size_t g_async_holes = 0;

// The memory a switch to the thread of event `e` touches first: its saved registers, its scheduling
// fields, and the frames above the point where it stopped. Tens of thousands of threads take
// turns, so these are rarely in the cache; fetching them while the current thread runs hides most
// of that wait. Nothing of the thread is read here (a read would wait for the memory): the stack
// is found from the event (Event::sp).
void prefetch_thread(const Scheduler::Event& e) {
  const char* p = reinterpret_cast<const char*>(e.f);
  for (size_t off = 0; off < sizeof(Fiber); off += 64) __builtin_prefetch(p + off);
  // A thread that stopped is about 2 KiB deep in its stack. On its way back it reads the frames
  // of the emulated instruction and its kernel's frame, the KiB above its stack pointer (the
  // launch's own frames further up are not touched until it exits), and its next instruction
  // writes the lines just below again: those are fetched, and no more (a window up to 4 KiB
  // fetched lines no one read, which pushed others out of the cache: about 5% of a --predict at
  // 4096x2048x2048). A woken thread's event holds its saved stack pointer, a yield's an estimate
  // (yield, scheduler.cpp).
  if (const char* sp = e.sp) {
    // One load first: the stacks lie 260 KiB apart, each on its own pages, more than the CPU's
    // TLB holds; a prefetch that misses the TLB may be dropped, a load walks the page table, after
    // which the prefetches of the page's lines are taken (6% of a --predict on this machine class).
    (void)*static_cast<const volatile char*>(sp);
    for (const char* line = sp; line < sp + 1024; line += 64) __builtin_prefetch(line);
    for (const char* line = sp - 256; line < sp; line += 64) __builtin_prefetch(line, /*write=*/1);
  }
}

// The timing model's run loop: always the earliest event (thread, asynchronous operation,
// tcgen05 queue head); equal times in issue order. Deterministic: no seed is involved.
// Timed, async_ops is in issue order, so sorted by seq (push_async appends, every removal keeps
// the order): an operation is found by binary search. An event whose operation was completed
// another way (a releasing cluster arrive, a retired cluster) finds none.
// A completed operation is not erased from the middle of the list, which would move every later
// one (hundreds are in flight at a full shape): it stays as a hole, its `run` empty and its
// targets, cluster and issuer cleared (so no other reader of the list matches it), with its seq
// kept for the search; the holes are squeezed out once they are half the list. Only this loop
// makes holes: the seeded loop, which picks operations by position, never sees one.
std::vector<AsyncOp>::iterator find_async(Scheduler& s, uint64_t seq) {
  auto it = std::lower_bound(s.async_ops.begin(), s.async_ops.end(), seq,
                             [](const AsyncOp& o, uint64_t q) { return o.seq < q; });
  return it != s.async_ops.end() && it->seq == seq && it->run ? it : s.async_ops.end();
}

// Takes the operation out of the list, leaving its hole.
AsyncOp take_async(Scheduler& s, std::vector<AsyncOp>::iterator it) {
  AsyncOp op = std::move(*it);
  it->run = nullptr;
  it->targets = 0;
  it->cluster = nullptr;
  it->issuer = nullptr;
  it->remote_arrive = false;
  if (++g_async_holes >= 64 && 2 * g_async_holes >= s.async_ops.size()) {
    s.async_ops.erase(std::remove_if(s.async_ops.begin(), s.async_ops.end(), [](const AsyncOp& o) { return !o.run; }),
                      s.async_ops.end());
    g_async_holes = 0;
  }
  return op;
}

bool valid_event(Scheduler& s, const Scheduler::Event& e) {
  if (e.kind == 0) {
    if (e.f->run_idx >= 0 && e.f->heap_stamp == e.stamp && e.f->state == FState::kRunnable) return true;
    // drop_stale_async_events took it as current, and the running thread's horizon with it.
    throw SimError("tcsim: internal error: a stale thread event in the timing model's queue");
  }
  if (e.kind == 2) return !e.f->tc_ops.empty() && e.f->tc_ops.front().seq == e.stamp;
  return find_async(s, e.stamp) != s.async_ops.end();
}

void drop_stale_events(Scheduler& s) {
  while (!s.events.empty() && !valid_event(s, s.events.front())) s.events.pop();
}

// The same, taking a thread's event as current without reading its Fiber (which is not in the
// cache yet: this is the check for the event after the one being started). A thread's event is
// never stale in the timed loop: it is queued only by the thread's own yield or by its wake-up
// from a wait (set_runnable, for a thread that had none queued), and nothing but the thread
// itself, while it runs, blocks it or queues it again; valid_event checks that when the event is
// taken.
void drop_stale_async_events(Scheduler& s) {
  while (!s.events.empty() && s.events.front().kind != 0 && !valid_event(s, s.events.front())) s.events.pop();
}

// The thread event e was just taken from the queue: its thread may run up to the next event (plus
// the lookahead); the memory that next one's switch will touch is fetched meanwhile.
void begin_thread_event(Scheduler& s, const Scheduler::Event& e) {
  s.now = std::max(s.now, e.t);
  s.end = std::max(s.end, s.now);
  heartbeat();
  drop_stale_async_events(s);
  s.horizon = (s.events.empty() ? e.f->t : std::max(e.f->t, s.events.front().t)) + kLookaheadNs;
  // The canary word at the bottom of e's stack, which the switch away from it reads (canary_ok):
  // nothing else the thread does touches that line. (Its Fiber is in the cache: its event was
  // checked when taken.)
  if (e.f->canary) __builtin_prefetch(e.f->canary);
  if (!s.events.empty() && s.events.front().kind == 0) {
    prefetch_thread(s.events.front());
    // The events that may come after it: the line their validity check reads, fetched one event
    // early so that the check does not wait for memory.
    s.events.for_next([](const Scheduler::Event& n) {
      if (n.kind == 0) __builtin_prefetch(n.f);
    });
  }
}

}  // namespace

void run_grid_timed(Scheduler& s) {
  g_async_holes = 0;
  auto pop = [&s]() { return s.events.pop(); };
  auto find_async = [&s](uint64_t seq) { return detail::find_async(s, seq); };
  auto valid = [&s](const Scheduler::Event& e) { return valid_event(s, e); };
  for (;;) {
    if (s.failed) throw SimError(s.error);
    if (s.retire_pending) retire_clusters(s);
    if (s.admit_pending) {
      s.admit_pending = false;
      s.admit_time = s.now + model_cta_launch_ns();
      admit_clusters(s);
    }
    while (!s.events.empty() && !valid(s.events.front())) pop();
    if (s.events.empty()) {
      if (s.timed_runnable == 0 && s.async_ops.size() == g_async_holes && s.tc_busy.empty()) {
        if (s.clusters.empty() && s.next_cluster == s.num_clusters) return;
        throw SimError(deadlock_report(s));
      }
      throw SimError("tcsim: internal error: runnable work without a timing-model event");
    }
    const Scheduler::Event e = pop();
    if (e.kind == 0) {
      begin_thread_event(s, e);
      switch_to(s, e.f);
      continue;
    }
    s.now = std::max(s.now, e.t);
    s.end = std::max(s.end, s.now);
    heartbeat();
    {
      AsyncOp op;
      if (e.kind == 2) {
        Fiber& f = *e.f;
        op = std::move(f.tc_ops.front());
        f.tc_ops.pop_front();
        if (f.tc_ops.empty()) {
          f.has_tc_ops = false;
          auto it = std::find(s.tc_busy.begin(), s.tc_busy.end(), &f);
          *it = s.tc_busy.back();
          s.tc_busy.pop_back();
        }
      } else {
        op = take_async(s, find_async(e.stamp));
      }
      op.run();
      if (s.failed) throw SimError(s.error);
    }
  }
}

// Timing model: the running thread stops (yields or blocks). When the scheduler's loop would
// next do nothing but take a thread event from the queue (no failure, no cluster to retire or
// admit, the earliest valid event a thread's), that thread is resumed from here, one switch
// instead of two through the scheduler's stack; the events are taken in the same order, so the
// run is the same. Otherwise (and in the seeded, untimed mode) the thread returns to the loop.
bool hand_off(Scheduler& s, Fiber* from) {
  if (s.failed || s.retire_pending || s.admit_pending || !canary_ok(from)) return false;
  drop_stale_events(s);
  if (s.events.empty() || s.events.front().kind != 0) return false;
  const Scheduler::Event e = s.events.pop();
  begin_thread_event(s, e);
  s.cur = e.f;
  g_stats.fiber_switches++;
  if (e.f != from) fiber_switch(from->ctx, e.f->ctx);  // the earliest event may be its own
  return true;
}


}  // namespace detail
}  // namespace tcsim
