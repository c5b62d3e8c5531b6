// fiber_switch.h — switching the CPU between the scheduler and the fibers (the emulated threads):
// fiber_switch.cpp. internal.h includes it.
//
// A switch saves what the calling code needs kept across a call (the callee-saved registers, by
// the C ABI) on the current stack, and resumes the stack saved in the other context. On x86-64 that is a dozen instructions of assembly (a library
// longjmp also unwinds cleanup handlers and checks the jump, a few times the cost, and the
// emulator switches millions of times per launch). Elsewhere the portable way: _setjmp/_longjmp,
// a fresh stack started once with ucontext.
#pragma once
#include <setjmp.h>

#include <cstddef>

namespace tcsim {
namespace detail {

// -DTCSIM_PORTABLE_FIBER_SWITCH builds the portable way on x86-64 too (to test it).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TCSIM_PORTABLE_FIBER_SWITCH)
#define TCSIM_ASM_FIBER_SWITCH 1
struct FiberContext {
  void* sp = nullptr;  // the saved stack: the registers, then where to return
};
#else
#define TCSIM_ASM_FIBER_SWITCH 0
struct FiberContext {
  jmp_buf jb;
  bool fresh = false;  // prepared, never run: the first switch starts it
  char* stack = nullptr;
  size_t bytes = 0;
  void (*entry)() = nullptr;
};
#endif

// Makes `c` a context that, when switched to, runs entry() on the stack [stack, stack + bytes).
// entry must never return (it switches away for good instead).
void fiber_prepare(FiberContext& c, void* stack, size_t bytes, void (*entry)());
// Saves the running context in `from` and resumes `to`; returns when a switch resumes `from`.
void fiber_switch(FiberContext& from, FiberContext& to);
// Where a suspended context's stack is (to prefetch it), or nullptr.
inline const char* fiber_stack_hint(const FiberContext& c) {
#if TCSIM_ASM_FIBER_SWITCH
  return static_cast<const char*>(c.sp);
#else
  (void)c;
  return nullptr;
#endif
}

}  // namespace detail
}  // namespace tcsim
