// test_nvfp4_plan.cpp — the planner of the NVFP4 steps 10-13 (common/nvfp4_plan.h): the plans of
// the competition shapes, every SM count from 1 to 8 (no cluster larger than the GPU, no division
// by zero), forced knobs honoured or refused with one line, and the costs read from the timing
// model's parameter table (a changed parameter moves the plan).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/nvfp4_plan.h"
#include "common/sim/sim_api.h"
#include "common/step.h"

using namespace tcg::nvfp4;

namespace {

// The rules steps 10-13 declare (kPlanRules / plan_rules in each step file).
const PlanRules kStep10{"TCG_STEP10_", {128}, {}, 0, {1}, 1, 6, 6, Reduction::kWorkspace, CStore::kRowPerThread, true, false};
const PlanRules kStep11{"TCG_STEP11_", {64, 128}, {}, 0, {1}, 2, 3, 4, Reduction::kWorkspace, CStore::kTma, false, false};
const PlanRules kStep12{"TCG_STEP12_", {64, 128}, {1, 2, 4}, 2, {1}, 2, 3, 4, Reduction::kCluster, CStore::kTma, true, false};
const PlanRules kStep13{"TCG_STEP13_", {64, 128}, {1, 2, 4}, 2, {1, 2, 4}, 2, 3, 4, Reduction::kCluster, CStore::kTma,
                        true, true};

std::string line(const PlanRules& r, int m, int n, int k, int sms = 148, Forced f = {}) {
  return plan(r, m, n, k, sms, f).line();
}

std::string refusal(const PlanRules& r, int m, int n, int k, int sms, Forced f) {
  try {
    plan(r, m, n, k, sms, f);
  } catch (const tcg::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("nvfp4 plan: the competition shapes on 148 SMs, as the steps' pages explain them") {
  CHECK(line(kStep10, 128, 7168, 16384) == "BLOCK_N 128, S 2, MC 1, no clusters, 112 CTAs");
  CHECK(line(kStep10, 128, 4096, 7168) == "BLOCK_N 128, S 3, MC 1, no clusters, 96 CTAs");
  CHECK(line(kStep10, 128, 7168, 2048) == "BLOCK_N 128, S 1, MC 1, no clusters, 56 CTAs");
  CHECK(line(kStep10, 128, 2048, 16384) == "BLOCK_N 128, S 4, MC 1, no clusters, 64 CTAs");
  CHECK(line(kStep11, 128, 7168, 16384) == "BLOCK_N 128, S 2, MC 1, no clusters, 112 CTAs");
  CHECK(line(kStep11, 128, 4096, 7168) == "BLOCK_N 64, S 2, MC 1, no clusters, 128 CTAs");
  CHECK(line(kStep11, 128, 7168, 2048) == "BLOCK_N 64, S 1, MC 1, no clusters, 112 CTAs");
  CHECK(line(kStep12, 128, 7168, 16384) == "BLOCK_N 128, S 2, MC 1, clusters of 2, 112 CTAs");
  CHECK(line(kStep12, 128, 4096, 7168) == "BLOCK_N 64, S 2, MC 1, clusters of 2, 128 CTAs");
  CHECK(line(kStep12, 128, 7168, 2048) == "BLOCK_N 64, S 1, MC 1, no clusters, 112 CTAs");
  CHECK(line(kStep13, 128, 7168, 16384) == "BLOCK_N 128, S 2, MC 2, clusters of 4, 112 CTAs");
  CHECK(line(kStep13, 128, 4096, 7168) == "BLOCK_N 64, S 2, MC 1, clusters of 2, 128 CTAs");
  CHECK(line(kStep13, 128, 7168, 2048) == "BLOCK_N 64, S 1, MC 4, clusters of 4, 112 CTAs");
}

TEST_CASE("nvfp4 plan: the steps' default emulator problems run what each step adds") {
  const Plan p10 = plan(kStep10, 128, 512, 4160, 8, {});
  CHECK(p10.splits > 1);
  CHECK(left_out(kStep10, p10).empty());
  const Plan p12 = plan(kStep12, 128, 512, 4160, 8, {});
  CHECK(p12.splits > 1);
  CHECK(left_out(kStep12, p12).empty());
  const Plan p13 = plan(kStep13, 128, 256, 4160, 8, {});
  CHECK((p13.splits > 1 && p13.mc > 1));
  CHECK(left_out(kStep13, p13).empty());
  // 512^3 has 2 k-tiles: no split pays, and the note says what is left out.
  const Plan small = plan(kStep13, 512, 512, 512, 148, {});
  CHECK(small.splits == 1);
  CHECK(left_out(kStep13, small).find("S 1") != std::string::npos);
}

TEST_CASE("nvfp4 plan: every GPU of 1 to 8 SMs gets a plan whose clusters fit it") {
  const int shapes[][3] = {{512, 512, 512}, {128, 512, 4160}, {128, 7168, 16384}, {1, 8, 64}, {130, 72, 1792}};
  for (const PlanRules* r : {&kStep10, &kStep11, &kStep12, &kStep13})
    for (const auto& s : shapes)
      for (int sms = 1; sms <= 8; ++sms) {
        const Plan p = plan(*r, s[0], s[1], s[2], sms, {});
        CHECK(p.cluster <= sms);
        CHECK(p.ctas == p.tiles * p.splits);
        CHECK(p.waves >= 1);
        CHECK(p.ns > 0);
      }
  CHECK(resident_ctas(2, 1) == 0);  // not a plan
  CHECK(resident_ctas(4, 3) == 0);
  CHECK(resident_ctas(4, 148) == 120);
  CHECK(resident_ctas(8, 148) == 80);
  CHECK(resident_ctas(1, 5) == 5);
}

TEST_CASE("nvfp4 plan: forced knobs are honoured, or refused with one line naming them") {
  Forced s4;
  s4.splits = 4;
  // Past one wave is slow but correct: S 4 on 8 SMs keeps the 2 tiles of BLOCK_N 128 in one wave.
  CHECK(line(kStep12, 128, 256, 8512, 8, s4) == "BLOCK_N 128, S 4, MC 1, clusters of 4, 8 CTAs");
  Forced s4_n64 = s4;
  s4_n64.block_n = 64;
  CHECK(line(kStep12, 128, 256, 8512, 8, s4_n64) == "BLOCK_N 64, S 4, MC 1, clusters of 4, 16 CTAs in 2 waves");
  CHECK(refusal(kStep12, 128, 256, 128, 148, s4) == "TCG_STEP12_SPLITS=4: S 4 needs 4 k-tiles of 256 along K; K=128 has 1");
  CHECK(refusal(kStep12, 128, 256, 8512, 3, s4) == "TCG_STEP12_SPLITS=4: clusters of 4 CTAs do not fit a GPU of 3 SMs");
  Forced mc4s4 = s4;
  mc4s4.mc = 4;
  CHECK(refusal(kStep13, 128, 512, 4160, 148, mc4s4) ==
        "TCG_STEP13_SPLITS=4 TCG_STEP13_MULTICAST=4: S 4 x MC 4 makes clusters of 16 CTAs, past the portable limit of 8");
  Forced mc4;
  mc4.mc = 4;
  CHECK(line(kStep13, 128, 200, 4160, 148, mc4) == "BLOCK_N 64, S 2, MC 4, clusters of 8, 8 CTAs");  // 4 tiles of 64
  CHECK(refusal(kStep13, 128, 100, 4160, 148, mc4) ==
        "TCG_STEP13_MULTICAST=4: MC 4 needs the tiles along N in groups of 4; N=100 has 1 of BLOCK_N 128");
  Forced mc2;
  mc2.mc = 2;
  CHECK(refusal(kStep13, 128, 512, 4160, 1, mc2) == "TCG_STEP13_MULTICAST=2: clusters of 2 CTAs do not fit a GPU of 1 SM");
  Forced s40;
  s40.splits = 40;
  CHECK(refusal(kStep10, 128, 256, 4160, 8, s40) == "TCG_STEP10_SPLITS=40: S 40 needs 40 k-tiles of 256 along K; K=4160 has 17");
  Forced s3;
  s3.splits = 3;
  CHECK(line(kStep10, 128, 256, 8512, 8, s3) == "BLOCK_N 128, S 3, MC 1, no clusters, 6 CTAs");
}

// Step 15's rules (its kPlanRules): two B operands, pairs, and pairs of BLOCK_N 128 in stages of one k-tile, fused.
TEST_CASE("nvfp4 plan: step 15's stages of one k-tile: pairs of BLOCK_N 128 only, printed, forced or refused") {
  const PlanRules step15{"TCG_STEP15_", {64, 128}, {1, 2}, 2, {1}, 2, 2, 2, Reduction::kCluster, CStore::kTma,
                         false, false, 2, 2, 3, 5, true};
  // One MMA of N = 256 over B1 and B2 saves a pair of BLOCK_N 128 a box a k-tile: a lesser estimate.
  PlanRules unfused = step15;
  unfused.pair_fused_n128 = false;
  CHECK(plan(step15, 512, 4096, 7168, 148, Forced{}).ns < plan(unfused, 512, 4096, 7168, 148, Forced{}).ns);
  const std::string pairs128 = "2-SM pairs (tiles of 256 rows), BLOCK_N 128, S 1, MC 1, clusters of 2, 128 CTAs";
  CHECK(line(step15, 512, 4096, 7168) == pairs128 + ", stages of 1 k-tile");
  Forced two;
  two.stage_k_tiles = 2;
  CHECK(line(step15, 512, 4096, 7168, 148, two) == pairs128);
  Forced one_cta1;
  one_cta1.stage_k_tiles = 1, one_cta1.cta_group = 1;
  CHECK(refusal(step15, 512, 4096, 7168, 148, one_cta1) ==
        "TCG_STEP15_CTA_GROUP=1 TCG_STEP15_STAGE_KTILES=1: STAGE_KTILES 1 runs with pairs of BLOCK_N 128 only");
  Forced one;
  one.stage_k_tiles = 1;
  CHECK(refusal(kStep12, 128, 256, 4160, 148, one) ==
        "TCG_STEP12_STAGE_KTILES=1: STAGE_KTILES 1 runs with pairs of BLOCK_N 128 only");
}

TEST_CASE("nvfp4 plan: its costs are the timing model's parameters") {
  // A far slower SM-to-SM path makes step 12's exchange dearer than the streaming it saves; the
  // same parameter file moves the model's predictions (one source of numbers).
  const std::string path = "build/tests/test_nvfp4_plan_params.txt";
  {
    std::ofstream f(path);
    f << "DSMEM: SM-to-SM bandwidth = 0.05\n";
  }
  REQUIRE(tcsim::load_model_params(path).empty());
  const std::string slow = line(kStep12, 128, 7168, 16384);
  tcsim::reset_model_params();
  std::remove(path.c_str());
  CHECK(slow.find("S 1") != std::string::npos);
  CHECK(line(kStep12, 128, 7168, 16384) == "BLOCK_N 128, S 2, MC 1, clusters of 2, 112 CTAs");
}
