// test_timing_model_events.cpp — the timing model's event order (common/sim/timed_run.cpp,
// model_spend in common/sim/timing.cpp): an asynchronous completion happens at its own time, even
// when another thread's clock has already moved past it.
//
// The scheduler runs threads, copies and commit arrivals from one heap ordered by model time. A
// thread that spends time (an instruction, a wake-up hand-off) past the next event goes back into
// the heap at its new time. That must not move the scheduler's `now` forward: events between the
// two would then run at the thread's later time (max(now, event time)), and whoever waits on them
// would see them late. Steps whose critical loop crosses such a window (the 6-stage pair ring of
// steps 08 and 09: a TMA landing while the other warps wake up) were predicted about 10% slow by
// it at 4096^3 (1428 instead of 1579 TFLOPS for step 08).
//
// A copy of timing.cpp that sets `now` to the thread's new clock before it yields (the old code)
// fails the case below by 31.5 ns.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace {

// The parameter values the expectations below are computed from (B200 table; the case in
// test_timing_model.cpp that pins the table checks them there).
constexpr double kClockGHz = 1.86;
constexpr double kTmaLatencyNs = 662;  // "TMA latency"
constexpr double kTmaSmGBs = 311;      // "TMA throughput of one SM" (bytes per ns)
constexpr double kTmaBoxCycles = 101;  // "TMA: SM time per box"
constexpr double kHandoffCycles = 220; // "mbarrier hand-off"

// Shared memory: a 128 x 64 BF16 box (16 KiB), an 8 x 64 box (1 KiB), then two mbarriers.
constexpr uint32_t kBigBytes = 128 * 128, kSmallBytes = 8 * 128;
constexpr uint32_t kSmallDst = kBigBytes, kBars = kBigBytes + 1024;

// Thread 0 issues the big box, then the small one (queued behind it on the SM's TMA unit), and
// waits for the small one. Thread 32 waits for the big one, which lands 87 ns earlier: it wakes a
// hand-off (118 ns) later, after the small box has landed, and runs one more instruction.
__global__ void two_copies_kernel(const __grid_constant__ CUtensorMap big, const __grid_constant__ CUtensorMap small) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t big_bar = base + kBars, small_bar = base + kBars + 8;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(big_bar, 1);
    tcg::mbarrier_init(small_bar, 1);
    tcg::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tcg::mbarrier_arrive_expect_tx(big_bar, kBigBytes);
    tcg::tma_load_2d(base, &big, 0, 0, big_bar);
    tcg::mbarrier_arrive_expect_tx(small_bar, kSmallBytes);
    tcg::tma_load_2d(base + kSmallDst, &small, 0, 0, small_bar);
    tcg::mbarrier_wait_parity(small_bar, 0);
  } else if (threadIdx.x == 32) {
    tcg::mbarrier_wait_parity(big_bar, 0);
    tcg::fence_proxy_async_shared_cta();  // any instruction: its issue moves this thread's clock on
  }
}

std::vector<tcg::trace::Span> spans(const char* cat, const char* name, int track) {
  std::vector<tcg::trace::Span> out;
  for (const tcg::trace::Span& s : tcsim::last_trace().spans)
    if (s.cat == cat && s.name.rfind(name, 0) == 0 && (track < 0 || s.track == track)) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return out;
}

}  // namespace

// Both boxes stream through the SM's TMA unit one after the other (101 cycles + bytes / 311 GB/s
// each; the L2 and HBM shares are far shorter), then land one TMA latency later:
//   big:   issued at t, streams 54.301 + 52.682 = 106.983 ns, lands t + 768.983
//   small: streams after the big one, 54.301 + 3.293 = 57.594 ns: lands t + 164.576 + 662 = t + 826.576
//   thread 0 resumes a hand-off (118.280 ns) later: t + 944.856
// (Thread 32 resumes at t + 887.262, past the small box's landing; had the landing waited for it,
// thread 0 would resume at t + 1005.5.)
TEST_CASE("timing model: a copy completes at its own time while another thread's clock is past it") {
  std::vector<uint8_t> raw(2 * (kBigBytes + kSmallBytes) + 2048);
  uint8_t* p = raw.data() + (1024 - reinterpret_cast<uintptr_t>(raw.data()) % 1024) % 1024;
  tcsim::GlobalAllocation reg(p, kBigBytes + kSmallBytes, "two boxes");
  const CUtensorMap big = tcg_test::map2d(p, 128, 64, 128, true), small = tcg_test::map2d(p + kBigBytes, 8, 64, 8, true);  // one box each

  {
    const tcg_test::ModelScope model(/*skip_math=*/true, /*trace=*/true);
    tcg::launch_kernel(two_copies_kernel, tcg::LaunchDims{dim3(1), dim3(64), kBars + 64 + tcg::kSmemAlignSlack}, nullptr,
                       big, small);
  }

  const auto tma = spans(tcg::trace::kCatTma, "TMA", -1);
  const auto wait0 = spans(tcg::trace::kCatWait, "mbarrier wait", 0);
  const auto wait1 = spans(tcg::trace::kCatWait, "mbarrier wait", 1);
  REQUIRE(tma.size() == 2);
  REQUIRE(wait0.size() == 1);
  REQUIRE(wait1.size() == 1);
  const double t = tma[0].start_ns, box_ns = kTmaBoxCycles / kClockGHz, handoff = kHandoffCycles / kClockGHz;
  const double big_lands = t + kTmaLatencyNs + box_ns + kBigBytes / kTmaSmGBs;  // t + 768.983 ns
  const double small_lands = big_lands + box_ns + kSmallBytes / kTmaSmGBs;   // t + 826.576 ns
  CHECK(tma[0].start_ns + tma[0].dur_ns == doctest::Approx(big_lands).epsilon(1e-9));
  CHECK(tma[1].start_ns + tma[1].dur_ns == doctest::Approx(small_lands).epsilon(1e-9));
  // Thread 32 wakes after the small box has landed: the window this case is about.
  // (big_lands + handoff = t + 887.262 ns, after small_lands = t + 826.576 ns.)
  CHECK(wait1[0].start_ns + wait1[0].dur_ns == doctest::Approx(big_lands + handoff).epsilon(1e-9));
  // Thread 0 sees the small box one hand-off after it landed, not after thread 32's clock.
  CHECK(wait0[0].start_ns + wait0[0].dur_ns - t == doctest::Approx(944.856).epsilon(1e-5));
}
