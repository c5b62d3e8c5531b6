// test_provenance.cpp — the checks of common/sim/provenance.cpp (Options::provenance_checks, on in
// every step run): an MMA descriptor's layout against the swizzle and box of the TMA load that
// wrote its bytes. Correct operands in every canonical layout must pass (a check may never refuse
// a correct program); a descriptor naming another swizzle, or an SBO the box's rows cannot have,
// must be reported under every seed. The TMEM half (reads of cells nothing wrote) is exercised on
// the steps by tests/steps/break_it.sh (s01/s04-always-accumulate, s04-idesc-n-half-of-block-n).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "mma_test_kernels.h"

using namespace tcg_test;

namespace {

// The provenance checks on for one scope (the unit tests run with them off by default).
struct ProvenanceOn {
  tcsim::Options saved = tcsim::options();
  explicit ProvenanceOn(uint64_t seed) {
    tcsim::Options o = saved;
    o.seed = seed;
    o.provenance_checks = true;
    tcsim::set_options(o);
  }
  ~ProvenanceOn() { tcsim::set_options(saved); }
};

std::string run(const MmaCase& c, const Operands& op) {
  return sim_error([&] { run_case(c, op); });
}

// One swizzle row of K per tile (16 elements without swizzle), as test_mma_layouts.cpp loads it.
uint32_t k_of(uint32_t span) { return span == kCoreMatrices ? 16 : span / 2; }

}  // namespace

TEST_CASE("provenance: operands in every canonical layout, placed by TMA, pass the layout checks") {
  for (uint32_t span : {kCoreMatrices, 32u, 64u, 128u})
    for (uint64_t seed : {1, 2, 4}) {
      CAPTURE(span);
      CAPTURE(seed);
      const Operands op = make_operands(k_of(span), 64, span);
      ProvenanceOn on(seed);
      MmaCase c = canonical_case(span, 64);
      c.num_mma = k_of(span) / 16;
      CHECK(run(c, op) == "");
    }
}

TEST_CASE("provenance: a descriptor whose swizzle is not the tensor map's is reported at the MMA, both places named") {
  const Operands op = make_operands(64, 64);
  for (uint64_t seed : {1, 2, 3, 4}) {
    CAPTURE(seed);
    ProvenanceOn on(seed);
    MmaCase c = canonical_case(128, 64);
    c.desc_layout = uint32_t(tcg::Layout::kSwizzle64B);  // the TMA wrote 128B-swizzled rows
    c.a_sbo = c.b_sbo = 512;
    const std::string err = run(c, op);
    INFO(err);
    CHECK(contains(err, "MMA operand layout differs from what the TMA wrote"));
    CHECK(contains(err, "CU_TENSOR_MAP_SWIZZLE_128B"));
    CHECK(contains(err, "64B swizzle (layout type 4)"));
    CHECK(contains(err, "tests/emulator/mma_test_kernels.h"));  // the TMA's line and the MMA's
  }
}

TEST_CASE("provenance: an SBO that rows of one swizzle span cannot have is reported; the right one is not") {
  for (uint32_t span : {32u, 64u, 128u}) {
    CAPTURE(span);
    const Operands op = make_operands(k_of(span), 64, span);
    ProvenanceOn on(1);
    MmaCase c = canonical_case(span, 64);
    c.a_sbo = 4 * span;  // half the 8-row group
    const std::string err = run(c, op);
    INFO(err);
    CHECK(contains(err, "must be " + std::to_string(8 * span) + ", not " + std::to_string(4 * span)));
  }
}

TEST_CASE("provenance: off (the unit tests' default), a mismatched descriptor only computes wrong numbers") {
  const Operands op = make_operands(64, 64);
  SimOptions opt(1);
  MmaCase c = canonical_case(128, 64);
  c.desc_layout = uint32_t(tcg::Layout::kSwizzle64B);
  c.a_sbo = c.b_sbo = 512;
  CHECK(run(c, op) == "");
}
