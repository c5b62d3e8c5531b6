// run_loop.h — what the two run loops share: scheduler.cpp (the fibers, the seeded loop) and
// timed_run.cpp (the timing model's loop and the hand-off between threads). Only those two
// include it.
#pragma once

namespace tcsim {
namespace detail {

struct Fiber;
struct Scheduler;

// Does fiber f's stack still hold its canary (if it has no guard page)? scheduler.cpp.
bool canary_ok(const Fiber* f);
// Runs fiber f until a fiber switches back to the scheduler's stack; checks that fiber's canary.
void switch_to(Scheduler& s, Fiber* f);
// The timing model's run loop (timed_run.cpp): run_grid's timed mode.
void run_grid_timed(Scheduler& s);
// The running thread stops under the timing model: resume the next thread from here if the loop
// would do nothing else (timed_run.cpp). False: go back to the loop.
bool hand_off(Scheduler& s, Fiber* from);

}  // namespace detail
}  // namespace tcsim
