// fiber_switch.cpp — switching the CPU between the scheduler and the fibers (fiber_switch.h).
//
// The fallback resumes with _setjmp/_longjmp; glibc's fortified longjmp would reject a jump to
// another stack as one into an "uninitialised stack frame", so fortification is off in this file.
#undef _FORTIFY_SOURCE
#include "fiber_switch.h"

#include <ucontext.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tcsim {
namespace detail {

#if TCSIM_ASM_FIBER_SWITCH

extern "C" void tcsim_fiber_swap(void** save_sp, void* load_sp);
extern "C" void tcsim_fiber_start();

// tcsim_fiber_swap: pushes rbp, rbx, r12-r15 (System V AMD64 ABI: callee-saved), stores the stack
// pointer in *save_sp, loads load_sp and pops the same from there. The MXCSR and x87 control words
// are callee-saved too, but nothing in the emulator, the harness or a kernel changes them (no
// fesetround), so every fiber runs with the same ones and a switch leaves them alone (restoring
// them is a slow, serialising instruction pair). tcsim_fiber_start: where a prepared stack
// "returns" to the first time: calls the entry (in r12) with the stack aligned as at a call.
asm(R"(
    .pushsection .text
    .p2align 4
    .globl tcsim_fiber_swap
    .type tcsim_fiber_swap, @function
tcsim_fiber_swap:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size tcsim_fiber_swap, .-tcsim_fiber_swap

    .p2align 4
    .globl tcsim_fiber_start
    .type tcsim_fiber_start, @function
tcsim_fiber_start:
    andq $-16, %rsp
    call *%r12
    ud2
    .size tcsim_fiber_start, .-tcsim_fiber_start
    .popsection
)");

void fiber_prepare(FiberContext& c, void* stack, size_t bytes, void (*entry)()) {
  // The frame tcsim_fiber_swap pops: r15, r14, r13, r12 (the entry), rbx, rbp, and the return
  // address, ending at the 16-byte aligned top of the stack.
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t(15);
  uint64_t* frame = reinterpret_cast<uint64_t*>(top) - 7;
  frame[0] = frame[1] = frame[2] = 0;                     // r15, r14, r13
  frame[3] = reinterpret_cast<uint64_t>(entry);           // r12
  frame[4] = frame[5] = 0;                                // rbx, rbp
  frame[6] = reinterpret_cast<uint64_t>(&tcsim_fiber_start);
  c.sp = frame;
}

void fiber_switch(FiberContext& from, FiberContext& to) { tcsim_fiber_swap(&from.sp, to.sp); }

#else  // the portable way

void fiber_prepare(FiberContext& c, void* stack, size_t bytes, void (*entry)()) {
  c.fresh = true;
  c.stack = static_cast<char*>(stack);
  c.bytes = bytes;
  c.entry = entry;
}

namespace {
// Starts a prepared context on its stack, from a ucontext made here on the caller's stack (copied
// from one captured once); never returns.
__attribute__((noinline, noreturn)) void start(FiberContext& c) {
  static ucontext_t initial;
  static bool captured = false;
  if (!captured) {
    getcontext(&initial);
    captured = true;
  }
  ucontext_t uc = initial;
  uc.uc_stack.ss_sp = c.stack;
  uc.uc_stack.ss_size = c.bytes;
  uc.uc_link = nullptr;
  makecontext(&uc, c.entry, 0);
  setcontext(&uc);
  abort();  // setcontext returns only on failure
}
}  // namespace

__attribute__((noinline)) void fiber_switch(FiberContext& from, FiberContext& to) {
  if (_setjmp(from.jb) != 0) return;  // resumed
  if (to.fresh) {
    to.fresh = false;
    start(to);
  }
  _longjmp(to.jb, 1);
}

#endif

}  // namespace detail
}  // namespace tcsim
