// test_timing_model_stores.cpp — the timing model's calibrated mechanisms (common/sim/timing.cpp):
// global stores charged per warp instruction, a thread's exit waiting for its stores to drain,
// the CTA setup cost of fence.mbarrier_init, and parameter files (`--model-params FILE`, read by
// common/sim/timing_params.cpp).
//
// Expected values are worked out by hand from the parameter values below (B200 table); a case in
// tests/emulator/test_timing_model.cpp pins the shared ones, this file pins its own.
//   per warp store instruction: sectors it fills completely cost 1, sectors it fills partly 2
//   ("store: partial-sector cost"); the SM's path takes sectors x 32 B / 32 B per cycle; the
//   chip's L2 write path lines / 382 per ns + sectors / 261 per ns.
//   row per thread (32 lanes, 16 B each, 32 rows): 32 partial sectors = 64 units, 32 lines
//     SM 64 cycles / 1.86 GHz = 34.409 ns; chip 32/382 + 64/261 = 0.32898 ns
//   coalesced (32 lanes x 16 B = 512 contiguous B): 16 full sectors, 4 lines
//     SM 16 cycles = 8.602 ns; chip 4/382 + 16/261 = 0.07177 ns
// Deliberately broken copies of timing.cpp that were seen to fail here: partial sectors charged
// as full (row-per-thread case), the chip write path not shared between SMs (148-CTA case), a
// thread exiting before its stores drained (drain case), fence.mbarrier_init free (setup case),
// a bad parameter file accepted (file cases).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "../../common/sim/internal.h"  // store_charge
#include "emulator_test_util.h"

#include <unistd.h>

namespace {

constexpr double kClockGHz = 1.86;
constexpr double kStoreBytesPerCycle = 32;  // "global store rate of one SM"
constexpr double kPartial = 2.0;            // "store: partial-sector cost"
constexpr double kLinesPerNs = 382;         // "store: chip L2 write rate, lines"
constexpr double kSectorsPerNs = 261;       // "store: chip L2 write rate, sectors"
constexpr double kFenceCycles = 400;        // "CTA setup: fence.mbarrier_init"


// One warp per CTA; `count` store instructions of the pattern (1 row per thread, 2 coalesced);
// thread 0 records its model clock at the start and just before it exits (the model's
// globaltimer is its clock).
__global__ void store_kernel(uint8_t* c, int pattern, int count, uint64_t* stamps) {
  const uint64_t t0 = tcg::globaltimer();
  uint8_t* mine = c + size_t(blockIdx.x) * 32 * 1024;  // 32 rows of 1 KiB per CTA
  const uint4 v = make_uint4(1, 2, 3, 4);
  for (int i = 0; i < count; ++i) {
    const size_t off = pattern == 1 ? size_t(threadIdx.x) * 1024 + size_t(i % 64) * 16
                                    : size_t(i % 64) * 512 + size_t(threadIdx.x) * 16;
    tcg::store_16B(mine + off, v);
  }
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = t0;
    stamps[2 * blockIdx.x + 1] = tcg::globaltimer();
  }
}

struct Buf {
  std::vector<uint8_t> raw;
  uint8_t* p;
  explicit Buf(size_t bytes) : raw(bytes + 4096) {
    p = raw.data() + (4096 - reinterpret_cast<uintptr_t>(raw.data()) % 4096) % 4096;
  }
};

double store_run_ns(int ctas, int pattern, int count, std::vector<uint64_t>* stamps_out = nullptr) {
  Buf c(size_t(ctas) * 32 * 1024);
  const tcsim::GlobalAllocation reg_c(c.p, size_t(ctas) * 32 * 1024, "C");
  std::vector<uint64_t> stamps(size_t(2) * ctas);
  const auto reg_stamps = tcg_test::registered(stamps, "stamps");
  tcg::launch_kernel(store_kernel, tcg::LaunchDims{dim3(uint32_t(ctas)), dim3(32), 0}, nullptr, c.p, pattern, count,
                     stamps.data());
  if (stamps_out) *stamps_out = stamps;
  return tcsim::last_stats().model_ns;
}

__global__ void fence_kernel(int fence) {
  const uint32_t base = tcg::smem_addr(tcg::aligned_smem_base());
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(base, 1);
    if (fence) tcg::fence_mbarrier_init();
  }
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/tcg_params_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("store model: the charge of one warp instruction, by hand") {
  std::unordered_map<uint64_t, uint32_t> row_per_thread, coalesced;
  for (uint64_t lane = 0; lane < 32; ++lane) row_per_thread[lane * 1024 / 32] = 16;  // 32 rows: one half sector each
  for (uint64_t s = 0; s < 16; ++s) coalesced[s] = 32;                               // 512 contiguous bytes
  const tcsim::detail::StoreCharge r = tcsim::detail::store_charge(row_per_thread);
  CHECK(r.lines == 32);
  CHECK(r.sector_units == 32 * kPartial);
  CHECK(r.sm_ns == doctest::Approx(64 * 32 / kStoreBytesPerCycle / kClockGHz).epsilon(1e-12));
  CHECK(r.sm_ns == doctest::Approx(34.409).epsilon(1e-4));
  CHECK(r.chip_ns == doctest::Approx(32 / kLinesPerNs + 64 / kSectorsPerNs).epsilon(1e-12));
  CHECK(r.chip_ns == doctest::Approx(0.32898).epsilon(1e-4));
  const tcsim::detail::StoreCharge c = tcsim::detail::store_charge(coalesced);
  CHECK(c.lines == 4);
  CHECK(c.sector_units == 16);
  CHECK(c.sm_ns == doctest::Approx(8.602).epsilon(1e-4));
  CHECK(c.chip_ns == doctest::Approx(4 / kLinesPerNs + 16 / kSectorsPerNs).epsilon(1e-12));
}

// One CTA: the SM's store path is the limit, so each further instruction adds its SM time:
// (time(64 instructions) - time(32)) / 32 = 34.409 ns (row per thread), 8.602 ns (coalesced).
TEST_CASE("store model: one SM, row-per-thread stores cost twice the sectors of coalesced ones") {
  tcg_test::ModelScope on(/*skip_math=*/true, /*trace=*/false, 148);
  for (const auto& [pattern, expected] : {std::pair<int, double>{1, 34.409}, {2, 8.602}}) {
    CAPTURE(pattern);
    const double per = (store_run_ns(1, pattern, 64) - store_run_ns(1, pattern, 32)) / 32;
    CHECK(per == doctest::Approx(expected).epsilon(1e-4));
  }
}

// 148 CTAs storing at once, one per SM: the chip's write path takes 148 instructions per round,
// 148 x 0.32898 = 48.689 ns for row-per-thread, more than one SM's 34.409 ns.
TEST_CASE("store model: every SM storing, the chip's L2 write path is the limit") {
  tcg_test::ModelScope on(/*skip_math=*/true, /*trace=*/false, 148);
  const double per = (store_run_ns(148, 1, 64) - store_run_ns(148, 1, 32)) / 32;
  CHECK(per == doctest::Approx(148 * (32 / kLinesPerNs + 64 / kSectorsPerNs)).epsilon(1e-3));
  CHECK(per == doctest::Approx(48.689).epsilon(1e-3));
}

// Two CTAs on one SM, one at a time (1 CTA per SM): the second starts only when the first's
// stores have drained (its 64 row-per-thread instructions: 64 x 34.409 = 2202.2 ns after the
// first began storing) plus the CTA launch (200 ns); it does not start when the first's threads
// merely issued them (after the store buffer's backlog).
TEST_CASE("store model: a CTA leaves its SM only once its stores have drained") {
  tcsim::Options o = tcsim::options();
  tcg_test::ModelScope on(/*skip_math=*/true, /*trace=*/false, 1);
  tcsim::Options one = tcsim::options();
  one.ctas_per_sm = 1;
  tcsim::set_options(one);
  std::vector<uint64_t> st;
  store_run_ns(2, 1, 64, &st);
  const double first_start = double(st[0]), second_start = double(st[2]);
  CHECK(second_start - first_start >= 64 * 34.409 + 200 - 1);
  CHECK(second_start - first_start == doctest::Approx(64 * 34.409 + 200).epsilon(2e-3));
  tcsim::set_options(o);
}

// fence.mbarrier_init is the CTA's setup cost: 400 cycles / 1.86 GHz = 215.054 ns.
TEST_CASE("timing model: fence.mbarrier_init costs the measured CTA setup") {
  tcg_test::ModelScope on(/*skip_math=*/true, /*trace=*/false, 148);
  tcg::launch_kernel(fence_kernel, tcg::LaunchDims{dim3(1), dim3(32), 64 + tcg::kSmemAlignSlack}, nullptr, 0);
  const double without = tcsim::last_stats().model_ns;
  tcg::launch_kernel(fence_kernel, tcg::LaunchDims{dim3(1), dim3(32), 64 + tcg::kSmemAlignSlack}, nullptr, 1);
  const double with = tcsim::last_stats().model_ns;
  CHECK(with - without == doctest::Approx(kFenceCycles / kClockGHz + 1 / kClockGHz).epsilon(1e-6));  // + its issue cycle
}

TEST_CASE("--model-params files: values, kinds and sources are read; bad lines are named") {
  tcsim::reset_model_params();
  const std::string good = write_file("good", "# H100\nSM clock = 1.98 ; measured ; our test\n\nSMs = 132\n");
  CHECK(tcsim::load_model_params(good) == "");
  CHECK(tcsim::model_param("SM clock") == 1.98);
  CHECK(tcsim::model_param("SMs") == 132);
  CHECK(tcsim::model_param("HBM bandwidth (chip)") == 7200);  // not named: the B200 value
  CHECK(tcsim::model_parameters_markdown().find("| SM clock | 1.98 | GHz | measured | our test |") != std::string::npos);
  tcsim::reset_model_params();
  CHECK(tcsim::model_param("SM clock") == 1.86);
  struct Bad {
    const char* text;
    const char* message;
  };
  for (const Bad& b : {Bad{"SMs = 132\nclock = 2\n", ":2: unknown parameter 'clock'"},
                       Bad{"SM clock 2\n", ":1: expected 'name = value'"},
                       Bad{"SMs = 13x\n", ":1: '13x' is not a non-negative number"},
                       Bad{"SMs = -4\n", ":1: '-4' is not a non-negative number"},
                       Bad{"# c\nSM clock = 0\n", ":2: parameter 'SM clock' is a rate or a count and cannot be 0"},
                       Bad{"SMs = 100 ; guessed\n", ":1: kind 'guessed' is not one of"}}) {
    CAPTURE(b.text);
    const std::string path = write_file("bad", b.text);
    const std::string err = tcsim::load_model_params(path);
    CHECK(err.find(path + b.message) == 0);
    CHECK(tcsim::model_param("SMs") == 148);  // a bad file changes nothing
    std::remove(path.c_str());
  }
  CHECK(tcsim::load_model_params("/nonexistent/params.txt").find("cannot read") != std::string::npos);
  std::remove(good.c_str());
}
