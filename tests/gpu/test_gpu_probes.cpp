// test_gpu_probes.cpp — the tcgen05 hardware probes (tests/gpu/tcgen05_check.cu) without a GPU:
// their emulator side against the CPU expectation of tests/gpu/probe_cases.cpp, so the probes
// themselves are tested before a B200 ever runs them; the experiments' emulator refusals; the
// TMEM allocation probe's checks; and deliberately broken expectations, each of which must make
// some probe fail (a probe that cannot fail proves nothing).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../common/sim/sim_api.h"
#include "probe_cases.h"
#include "probe_report.h"

namespace sim {
void run_mma_case(const probe::Case& c, std::vector<uint32_t>& out);
void run_alloc(uint32_t ctas, uint32_t ncols, uint32_t hold_iters, std::vector<probe::AllocRecord>& recs);
void run_pair_case(const probe::PairCase& p, std::vector<uint32_t>& out);
}  // namespace sim

namespace {

std::string run_sim(const probe::Case& c, std::vector<uint32_t>& out) {
  try {
    sim::run_mma_case(c, out);
  } catch (const tcsim::SimError& e) {
    return e.what();
  }
  return "";
}

// Number of non-experiment cases whose emulator dump differs from the (possibly broken) expectation.
int failing_cases(const std::vector<probe::Case>& cases, std::string* first) {
  int n = 0;
  for (const probe::Case& c : cases) {
    if (c.expect == probe::Expect::kExperiment) continue;
    std::vector<uint32_t> out;
    const std::string err = run_sim(c, out);
    const probe::Comparison r = probe::compare(c, out, c.want);
    const bool bad = !err.empty() || (c.expect == probe::Expect::kExact ? r.differing != 0 : r.over_bound != 0);
    if (bad && n++ == 0 && first) *first = c.config + ": " + (err.empty() ? probe::summarize(c, r) : err);
  }
  return n;
}

struct BrokenExpectation {
  explicit BrokenExpectation(int which) { probe::set_broken_expectation(which); }
  ~BrokenExpectation() { probe::set_broken_expectation(0); }
};

}  // namespace

TEST_CASE("gpu probes: each tcgen05 case's emulator side matches the CPU expectation") {
  const std::vector<probe::Case> cases = probe::mma_cases();
  REQUIRE(cases.size() >= 40);
  int exact = 0, rounded = 0, experiments = 0;
  for (const probe::Case& c : cases) {
    CAPTURE(c.instruction);
    CAPTURE(c.config);
    std::vector<uint32_t> out;
    const std::string err = run_sim(c, out);
    if (c.expect == probe::Expect::kExperiment) {
      // The emulator refuses what the ISA forbids or leaves open; the GPU run records what happens.
      CHECK_MESSAGE(err.find(c.refusal) != std::string::npos, "expected the refusal '" << c.refusal << "', got: " << err);
      CHECK(c.hypotheses.size() >= 3);
      ++experiments;
      continue;
    }
    REQUIRE_MESSAGE(err.empty(), err);
    const probe::Comparison r = probe::compare(c, out, c.want);
    CHECK(r.compared > 0);
    if (c.expect == probe::Expect::kExact) {
      CHECK_MESSAGE(r.differing == 0, probe::summarize(c, r));
      ++exact;
    } else {
      // FP32 accumulation in another order than the CPU's double sum: within the derived bound.
      CHECK_MESSAGE(r.over_bound == 0, probe::summarize(c, r));
      ++rounded;
    }
  }
  CHECK(exact >= 35);
  CHECK(rounded == 3);
  CHECK(experiments == 2);
}

TEST_CASE("gpu probes: the expectation classifies the experiments and names the first difference") {
  const std::vector<probe::Case> cases = probe::mma_cases();
  for (const probe::Case& c : cases) {
    if (c.expect != probe::Expect::kExperiment) continue;
    CAPTURE(c.config);
    // Each hypothesis' own dump is classified as that hypothesis; a dump of NaN as none.
    for (const auto& h : c.hypotheses) CHECK(probe::classify(c, h.second) == h.first);
    const std::vector<uint32_t> nan(c.want.size(), 0x7FC00000u);
    CHECK(probe::classify(c, nan).rfind("none of the hypotheses", 0) == 0);
  }
  // One flipped word in an exact case: found, with its thread, register, lane and column.
  const probe::Case& c = cases.front();
  std::vector<uint32_t> got = c.want;
  size_t i = 0;
  while (!c.defined[i]) ++i;
  i += 5 * c.read.ncols;  // thread 5, register of the first defined column
  got[i] ^= 1u;
  const probe::Comparison r = probe::compare(c, got, c.want);
  CHECK(r.differing == 1);
  CHECK(r.first == i);
  CHECK(probe::summarize(c, r).find("thread 5 register 0 (TMEM lane 5, column 0)") != std::string::npos);
}

TEST_CASE("gpu probes: a broken expectation makes probes fail") {
  const char* what[] = {"", "M = 64 rows in lanes 0..63 (layout F ignored)", "accumulate flag ignored",
                        "scale block s read from byte 3-s"};
  for (int which = 1; which <= 3; ++which) {
    const std::string name = what[which];
    CAPTURE(name);
    BrokenExpectation broken(which);
    std::string first;
    const int n = failing_cases(probe::mma_cases(), &first);
    CHECK(n > 0);
    MESSAGE(name << ": " << n << " probes fail, e.g. " << first);
  }
}

TEST_CASE("gpu probes: tcgen05.alloc addresses in range and disjoint with several CTAs per SM") {
  for (uint32_t ncols : {32u, 128u, 512u}) {
    CAPTURE(ncols);
    std::vector<probe::AllocRecord> recs;
    sim::run_alloc(16, ncols, 20, recs);
    const probe::AllocVerdict v = probe::check_alloc(recs, ncols);
    CHECK_MESSAGE(v.ok, v.detail);
    if (ncols < 512) CHECK(v.overlapping_pairs > 0);  // CTAs really shared an SM's TMEM in time
  }
  // The checks themselves: an overlap in time and columns on one SM, a misaligned address.
  std::vector<probe::AllocRecord> bad = {{3, 0x00000000, 10, 20}, {3, 0x00000000, 15, 30}};
  probe::AllocVerdict v = probe::check_alloc(bad, 128);
  CHECK(!v.ok);
  CHECK(v.detail.find("on SM 3") != std::string::npos);
  bad[1].t_alloc = 21;  // one after the other: fine
  CHECK(probe::check_alloc(bad, 128).ok);
  bad[1].taddr = 0x00000020;  // column 32 for 128 columns: misaligned
  CHECK(!probe::check_alloc(bad, 128).ok);
  bad[1].taddr = 0x00010000;  // lane 1
  CHECK(!probe::check_alloc(bad, 128).ok);
}

TEST_CASE("gpu probes: cta_group::2 pair cases, emulator against the CPU, and a broken expectation fails") {
  int n = 0;
  for (const probe::PairCase& p : probe::pair_cases()) {
    CAPTURE(p.c.config);
    std::vector<uint32_t> out;
    sim::run_pair_case(p, out);
    const probe::Comparison r = probe::compare(p.c, out, p.c.want);
    CHECK(r.compared == size_t(2) * 128 * (p.M == 256 ? p.N : p.N / 2));
    CHECK_MESSAGE(r.differing == 0, probe::summarize(p.c, r));
    ++n;
  }
  CHECK(n == 6);
  BrokenExpectation broken(4);  // the odd CTA's lanes hold the even CTA's rows
  int failing = 0;
  for (const probe::PairCase& p : probe::pair_cases()) {
    std::vector<uint32_t> out;
    sim::run_pair_case(p, out);
    const probe::Comparison r = probe::compare(p.c, out, p.c.want);
    if (r.differing) {
      if (failing++ == 0) MESSAGE("broken pair layout: " << probe::summarize(p.c, r));
      CHECK(probe::summarize(p.c, r).find("CTA 1 thread") != std::string::npos);
    }
  }
  CHECK(failing == 3);  // the three M = 256 cases
}

TEST_CASE("gpu probes: the results file is named after the GPU as plots/bench.sh names it") {
  CHECK(probe::gpu_slug("NVIDIA H100 80GB HBM3") == "h100");
  CHECK(probe::gpu_slug("NVIDIA B200") == "b200");
  CHECK(probe::gpu_slug("NVIDIA GeForce RTX 4090") == "rtx_4090");
  CHECK(probe::gpu_slug("") == "gpu");
}
