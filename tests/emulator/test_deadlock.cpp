// test_deadlock.cpp — what the emulator's scheduler reports instead of hanging or guessing
// (common/sim/scheduler.cpp, sync.cpp): deadlocks with the barrier each thread waits on,
// livelocks (the instruction budget, and the watchdog for spin loops without emulated
// instructions), and warps divergent at a .sync.aligned instruction.
//
// Each test is a real kernel written like the steps (kernel_common.cuh wrappers only), launched
// on one CTA in the emulator; the expected side is computed on the CPU from the PTX ISA
// (docs/references.md lists the sections and the CUTLASS headers cited). Split from the former
// test_emulator.cpp by mechanism, as common/sim/ is split.
//
// Tests that could hang a broken emulator run their launch in a forked child with a time limit
// (run_isolated), so the suite always terminates.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "mbarrier_test_kernels.h"

using namespace tcg_test;  // SimOptions, sim_error, run_isolated, operands, the shared kernels

// ============================================================================ 1. deadlock

namespace {

// Producer (thread 32) / consumer (thread 0) over one smem slot with full/empty barriers. The
// producer's first wait on `empty` must use parity 1 (a fresh barrier's "previous phase");
// `flip` gets it wrong.
__global__ void producer_consumer_kernel(uint32_t flip, uint32_t* out, uint32_t* bars) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t full = base, empty = base + 8;
  volatile uint32_t* slot = reinterpret_cast<volatile uint32_t*>(smem + 64);
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(full, 1);
    tcg::mbarrier_init(empty, 1);
    tcg::fence_mbarrier_init();
    bars[0] = full;
    bars[1] = empty;
  }
  __syncthreads();
  constexpr uint32_t kIters = 5;
  if (threadIdx.x == 32) {
    for (uint32_t i = 0; i < kIters; ++i) {
      tcg::mbarrier_wait_parity(empty, ((i & 1) ^ 1) ^ flip);
      *slot = 100 + i;
      tcg::mbarrier_arrive(full);
    }
  } else if (threadIdx.x == 0) {
    for (uint32_t i = 0; i < kIters; ++i) {
      tcg::mbarrier_wait_parity(full, i & 1);
      out[i] = *slot;
      tcg::mbarrier_arrive(empty);
    }
  }
}

}  // namespace

TEST_CASE("emulator: waiting on parity 0 of a barrier nobody arrives on is a deadlock, not a hang") {
  const Isolated r = run_isolated(
      [] {
        SimOptions opt(1);
        uint32_t passed = 0, bar = 0;
        const std::string err = sim_error([&] {
          tcg::launch_kernel(fresh_barrier_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack},
                             nullptr, 0u, &passed, &bar);
        });
        return hex(bar) + "\n" + (passed ? "PASSED" : "") + err;
      },
      10.0);
  REQUIRE_FALSE(r.timed_out);
  const std::string bar = r.text.substr(0, r.text.find('\n'));
  const std::string err = r.text.substr(r.text.find('\n') + 1);
  INFO(err);
  CHECK(bar != "0x0");
  CHECK(contains(err, "deadlock"));
  CHECK(contains(err, bar));
  CHECK(contains(err, "parity 0"));
  CHECK_FALSE(contains(err, "PASSED"));
}

TEST_CASE("emulator: a deadlock report groups CTAs in the same state (\"CTAs ...: the same as CTA (0,0,0)\")") {
  const Isolated r = run_isolated(
      [] {
        SimOptions opt(1);
        uint32_t passed = 0, bar = 0;
        return sim_error([&] {
          tcg::launch_kernel(fresh_barrier_kernel, tcg::LaunchDims{dim3(4), dim3(32), 1024 + tcg::kSmemAlignSlack},
                             nullptr, 0u, &passed, &bar);
        });
      },
      10.0);
  REQUIRE_FALSE(r.timed_out);
  INFO(r.text);
  CHECK(contains(r.text, "deadlock"));
  CHECK(contains(r.text, "CTA (0,0,0) warp 0 lane 0 at"));  // the first CTA in full
  CHECK(contains(r.text, "CTAs (1,0,0)-(3,0,0): the same as CTA (0,0,0)"));
  CHECK_FALSE(contains(r.text, "CTA (2,0,0) warp 0"));  // not repeated per CTA
}

TEST_CASE("emulator: producer/consumer with the producer's parity flipped deadlocks; correct parity works") {
  for (uint32_t flip : {0u, 1u}) {
    CAPTURE(flip);
    const Isolated r = run_isolated(
        [flip] {
          SimOptions opt(2);
          uint32_t out[5] = {}, bars[2] = {};
          const std::string err = sim_error([&] {
            tcg::launch_kernel(producer_consumer_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024 + tcg::kSmemAlignSlack},
                               nullptr, flip, out, bars);
          });
          std::string s = hex(bars[0]) + " " + hex(bars[1]) + "\n";
          for (uint32_t v : out) s += std::to_string(v) + " ";
          return s + "\n" + err;
        },
        10.0);
    REQUIRE_FALSE(r.timed_out);
    const size_t nl1 = r.text.find('\n'), nl2 = r.text.find('\n', nl1 + 1);
    const std::string bars = r.text.substr(0, nl1), values = r.text.substr(nl1 + 1, nl2 - nl1 - 1);
    const std::string err = r.text.substr(nl2 + 1);
    INFO(err);
    if (flip == 0) {
      CHECK(err.empty());
      CHECK(values == "100 101 102 103 104 ");
    } else {
      const std::string empty_bar = bars.substr(bars.find(' ') + 1);
      CHECK(contains(err, "deadlock"));
      CHECK(contains(err, "parity"));
      CHECK(contains(err, empty_bar));  // the producer's wait on `empty` is named
    }
  }
}

// ============================================================================ 2. livelock and divergent warps

namespace {

// All threads spin on a shared flag that nobody sets. With `tick`, every iteration executes
// __syncwarp (an emulated instruction); without, the loop is plain C++ loads.
__global__ void spin_kernel(int tick) {
  uint8_t* smem = tcg::aligned_smem_base();
  volatile uint32_t* flag = reinterpret_cast<volatile uint32_t*>(smem);
  if (threadIdx.x == 0) *flag = 0;
  __syncthreads();
  if (tick) {
    while (*flag == 0) __syncwarp();
  } else if (threadIdx.x == 0) {
    while (*flag == 0) {
    }
  }
}

// Warp 0 with its lanes split in two halves that execute different warp-collective code.
__global__ void divergent_kernel(int variant) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t lane = threadIdx.x % 32;
  if (variant == 0) {  // different instructions: elect.sync vs tcgen05.wait::ld
    if (lane < 16) {
      (void)tcg::elect_one_sync();
    } else {
      uint32_t r[4];
      tcg::tmem_wait_ld(r);
    }
    return;
  }
  if (variant == 1) {  // the same opcode at two different instructions (source lines)
    if (lane < 16) {
      (void)tcg::elect_one_sync();
    } else {
      (void)tcg::elect_one_sync();
    }
    return;
  }
  tcg::tmem_alloc(base, 32);
  tcg::tcgen05_fence_before_thread_sync();
  __syncwarp();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem);
  uint32_t buf[16] = {};
  if (variant == 2) {  // tcgen05.ld.32x32b.x8 in half the warp, .x16 in the other half
    if (lane < 16) tcg::tmem_ld_32x32b_x8(tmem, reinterpret_cast<uint32_t(&)[8]>(buf));
    else tcg::tmem_ld_32x32b_x16(tmem, buf);
    tcg::tmem_wait_ld(buf);
  } else if (variant == 3) {  // half the warp has exited before a .sync.aligned tcgen05.ld
    // Lanes 16-31 arrive on `gone` and exit at once (no emulated instruction in between);
    // lanes 0-15 start only when all 16 arrived, i.e. after the other half exited.
    const uint32_t gone = base + 64;
    if (lane == 0) {
      tcg::mbarrier_init(gone, 16);
      tcg::fence_mbarrier_init();
    }
    __syncwarp();
    if (lane >= 16) {
      tcg::mbarrier_arrive(gone);
      return;
    }
    tcg::mbarrier_wait_parity(gone, 0);
    tcg::tmem_ld_32x32b_x8(tmem, reinterpret_cast<uint32_t(&)[8]>(buf));
    tcg::tmem_wait_ld(buf);
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncwarp();
  tcg::tmem_dealloc(tmem, 32);
}

std::string run_divergent(int variant) {
  SimOptions opt(1);
  return sim_error([&] {
    tcg::launch_kernel(divergent_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr,
                       variant);
  });
}

}  // namespace

TEST_CASE("emulator: a spin loop on a shared flag exhausts the instruction budget (livelock)") {
  const Isolated r = run_isolated(
      [] {
        SimOptions opt(1, /*budget=*/20000);
        return sim_error([] {
          tcg::launch_kernel(spin_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024 + tcg::kSmemAlignSlack}, nullptr, 1);
        });
      },
      10.0);
  REQUIRE_FALSE(r.timed_out);
  INFO(r.text);
  CHECK(contains(r.text, "livelock"));
}

// The same spin without any emulated instruction in its body (a plain volatile load loop, as a
// kernel may poll a flag written by another warp) never returns to the scheduler: threads switch
// only at emulated instructions. The watchdog notices that nothing progresses and ends the
// process with "livelock (no progress)" instead of hanging; here it runs in a forked child.
TEST_CASE("emulator: a spin loop without emulated instructions is diagnosed, not hung") {
  const Isolated r = run_isolated(
      [] {
        SimOptions opt(1, /*budget=*/20000);
        tcsim::Options o = tcsim::options();
        o.watchdog_seconds = 0.5;
        tcsim::set_options(o);
        return sim_error([] {
          tcg::launch_kernel(spin_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr, 0);
        });
      },
      3.0);
  INFO(r.text);
  CHECK_FALSE(r.timed_out);
  CHECK(contains(r.text, "livelock (no progress)"));
  CHECK(contains(r.text, "test_deadlock.cpp"));
}

TEST_CASE("emulator: divergent warp at a .sync.aligned instruction") {
  const std::string err = run_divergent(0);
  INFO(err);
  CHECK(contains(err, "divergent"));
}

// Lanes 0-15 and 16-31 execute elect.sync at two different instructions (source lines):
// .sync.aligned needs the warp at the SAME instruction, not just the same opcode.
TEST_CASE("emulator: the same warp-collective opcode at two different instructions is divergent") {
  const std::string err = run_divergent(1);
  INFO(err);
  CHECK(contains(err, "divergent"));
}

// Half the warp executes tcgen05.ld.32x32b.x8, the other half .x16: different instructions,
// so the emulator compares shape and .num across lanes (16-element buffers keep a regression
// from overrunning the stack).
TEST_CASE("emulator: tcgen05.ld with different .num in the two halves of a warp is divergent") {
  const std::string err = run_divergent(2);
  INFO(err);
  CHECK(contains(err, "divergent"));
}

// Lanes 16-31 exit, then lanes 0-15 execute tcgen05.ld: a .sync.aligned tcgen05 instruction
// needs every thread of the warp, so a warp with exited lanes cannot execute it.
TEST_CASE("emulator: a .sync.aligned tcgen05.ld after half of the warp exited is reported") {
  int detected = 0;
  std::string last;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    last = sim_error([&] {
      tcg::launch_kernel(divergent_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr, 3);
    });
    detected += !last.empty();
  }
  INFO("last message: " << last);
  CHECK(detected == 4);
}
