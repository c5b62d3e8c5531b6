// bounds.h — what bounds a timed launch (bounds.cpp): the timing model's busy intervals per engine
// and per chip-wide resource, the waits of each warp and the residency of CTAs, from which
// --predict prints its "bounds:", "waits:" and "pace:" lines. internal.h includes it.
#pragma once
#include <string>

namespace tcsim {
namespace detail {

struct Fiber;
struct Scheduler;
struct Sm;

enum class BoundsEngine { kTensorCore = 0, kTmaUnit = 1, kStorePath = 2 };
enum class BoundsChip { kL2Read = 0, kL2Requests = 1, kHbm = 2, kL2Write = 3 };
void bounds_reset(const Scheduler& s);
void bounds_engine(const Sm& sm, BoundsEngine e, double ns);
void bounds_chip(BoundsChip c, double ns);
void bounds_resident(const Sm& sm);  // a CTA was made resident on `sm`
void bounds_cta_exit(const Sm& sm, double t);  // ... and left it at model time t
// A kernel annotation (trace_phase): wait phases name the barrier of the thread's next wait; the
// first drawn phase other than setup/teardown is the warp's role. `arg`: the stage index, or -1.
void bounds_phase(Fiber& f, const char* name, bool begin, bool draw, int arg);
// The trace name of a blocked wait: "wait tma_full_bar[2]" where the kernel annotated it.
std::string wait_span_name(const Fiber& f, const char* label);
void bounds_wait(const Fiber& f, const char* label, double ns);  // lane 0 of a warp waited `ns`
void bounds_finish(const Scheduler& s);

}  // namespace detail
}  // namespace tcsim
