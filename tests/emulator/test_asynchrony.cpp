// test_asynchrony.cpp — asynchrony and determinism in the emulator (common/sim/scheduler.cpp,
// copies.cpp, mma.cpp): reading TMEM or a TMA tile without waiting for its barrier sees poison
// under some seed (MMAs and copies complete late under the lazy seeds), and the same seed
// reproduces the same schedule while different seeds change it.
//
// Each test is a real kernel written like the steps (kernel_common.cuh wrappers only), launched
// on one CTA in the emulator; the expected side is computed on the CPU from the PTX ISA
// (docs/references.md lists the sections and the CUTLASS headers cited). Split from the former
// test_emulator.cpp by mechanism, as common/sim/ is split.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "mma_test_kernels.h"
#include "mbarrier_test_kernels.h"

using namespace tcg_test;  // SimOptions, sim_error, run_isolated, operands, the shared kernels

// ============================================================================ 1. asynchrony

namespace {
__global__ void tma_race_kernel(const __grid_constant__ CUtensorMap map, uint16_t* out, int wait_first) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t bar = base + 4096, issued = base + 4104;
  if (threadIdx.x != 0 && threadIdx.x != 32) return;  // bystanders would only give the copy time
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::mbarrier_init(issued, 1);
    tcg::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // producer
    tcg::mbarrier_arrive_expect_tx(bar, 2048);
    tcg::tma_load_2d(base, &map, 0, 0, bar);
    tcg::mbarrier_arrive(issued);
  } else if (threadIdx.x == 32) {  // consumer
    if (wait_first) tcg::mbarrier_wait_parity(bar, 0);
    else tcg::mbarrier_wait_parity(issued, 0);  // BUG on purpose: issued, not landed
    const uint16_t* tile = reinterpret_cast<const uint16_t*>(smem);
    for (uint32_t i = 0; i < 1024; ++i) out[i] = tile[i];
    tcg::mbarrier_wait_parity(bar, 0);
  }
}
}  // namespace

// The readers wait only for "issued", then run tcgen05.ld + wait::ld: a real bug. mma -> ld is not
// a pipelined pair (PTX ISA §9.7.16.6.2), so the load is reported as a TMEM hazard under every
// seed (tests/emulator/test_hazards.cpp has the rule's own tests); waiting for the commit is right.
TEST_CASE("emulator: reading TMEM without waiting for the MMA's commit is reported under every seed") {
  const Operands op = make_operands(64, 64, 31);
  const std::vector<float> ref = reference(op, 64);
  MmaCase c = canonical_case(128, 64);
  c.num_mma = 4;
  c.use_tma = false;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    SimOptions opt(seed);
    c.wait_for_mma = false;
    const std::string err = sim_error([&] { run_case(c, op); });
    INFO(err);
    CHECK(contains(err, "tcsim: TMEM hazard between asynchronous tcgen05 operations"));
    CHECK(contains(err, "mma -> ld"));  // not a pipelined pair, in the MMA's warp or another
    c.wait_for_mma = true;
    CHECK(same_bits(run_case(c, op).out, ref));
  }
}

TEST_CASE("emulator: reading a TMA tile without waiting for the full barrier sees 0xFFFF under some seed") {
  const Box box;
  const auto reg = registered(box.data, "box");
  int poisoned = 0, wrong_when_waiting = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimOptions opt(seed);
    for (int wait_first : {0, 1}) {
      std::vector<uint16_t> out(1024, 0);
      tcg::launch_kernel(tma_race_kernel, tcg::LaunchDims{dim3(1), dim3(64), 8192 + tcg::kSmemAlignSlack}, nullptr,
                         box.map, out.data(), wait_first);
      bool has_poison = false;
      for (uint16_t v : out) has_poison |= v == 0xFFFF;
      if (wait_first) wrong_when_waiting += out != box.data;
      else poisoned += has_poison;
    }
  }
  MESSAGE("seeds (of 8) where the unsynchronised read saw 0xFFFF: " << poisoned);
  CHECK(poisoned >= 1);
  CHECK(wrong_when_waiting == 0);
}

// ============================================================================ 2. determinism

TEST_CASE("emulator: the same seed reproduces the schedule, different seeds change it") {
  const Operands op = make_operands(64, 64, 41);
  MmaCase c = canonical_case(128, 64);
  c.num_mma = 4;
  auto stats_for = [&](uint64_t seed) {
    SimOptions opt(seed);
    (void)run_case(c, op);
    return tcsim::last_stats();
  };
  const tcsim::Stats a = stats_for(5), b = stats_for(5);
  CHECK(a.fiber_switches == b.fiber_switches);
  CHECK(a.instructions == b.instructions);
  CHECK(a.barrier_waits == b.barrier_waits);
  CHECK(a.mmas == b.mmas);
  CHECK(a.tma_copies == b.tma_copies);
  CHECK(a.mmas == 4);
  CHECK(a.tma_copies == 2);
  const tcsim::Stats s1 = stats_for(1), s2 = stats_for(2);
  CHECK(s1.fiber_switches != s2.fiber_switches);
  std::set<uint64_t> switches;
  for (uint64_t seed = 1; seed <= 4; ++seed) switches.insert(stats_for(seed).fiber_switches);
  CHECK(switches.size() >= 3);
}
