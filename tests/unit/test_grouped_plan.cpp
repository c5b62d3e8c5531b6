// test_grouped_plan.cpp — the plan of the grouped NVFP4 GEMM (common/grouped_plan.h, step 16): the
// ranked cases' plans, tile counts and the share of the MMA that holds rows of C, forced knobs
// honoured or refused with one line, and the command line of a grouped step (--groups, its N and
// K, --m refused, --groups refused by a one-GEMM step). No GPU and no emulator run.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/grouped_plan.h"
#include "common/harness/internal.h"
#include "common/step.h"

using namespace tcg::grouped;

namespace {

Plan plan_of(const std::vector<int64_t>& m, int n, int k, int sms = 148, Forced f = {}) {
  return plan(m.data(), int(m.size()), n, k, sms, f);
}
std::string refusal(const std::vector<int64_t>& m, int n, int k, int sms, Forced f) {
  try {
    plan_of(m, n, k, sms, f);
  } catch (const tcg::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

const tcg::StepSpec kGrouped{16, "nvfp4_grouped", "test", tcg::Arch::kSm100f, 256, tcg::Operands::kNVFP4Grouped,
                             nullptr, 1, nullptr, true, {}, nullptr, nullptr, {0, 256, 768, 3}, nullptr, "1,0,40"};
const tcg::StepSpec kOne{13, "nvfp4_multicast", "test", tcg::Arch::kSm100f, 64, tcg::Operands::kNVFP4};

}  // namespace

TEST_CASE("grouped plan: tiles of X (128 rows) and Y (BLOCK_N rows), swapped or not") {
  CHECK(tiles_of(40, 7168, 64, true).x == 56);
  CHECK(tiles_of(40, 7168, 64, true).y == 1);
  CHECK(tiles_of(40, 7168, 64, false).x == 1);
  CHECK(tiles_of(40, 7168, 64, false).y == 112);
  CHECK(tiles_of(0, 4096, 128, true).y == 0);
}

TEST_CASE("grouped plan: the ranked cases") {
  const Plan p1 = plan_of({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168);
  CHECK(p1.swap);
  CHECK(p1.block_n == 128);
  CHECK(p1.mc == 1);
  CHECK(p1.tiles == 352);  // 32 weight blocks x (1 + 2 + 1 + 1 + 1 + 2 + 1 + 2) token tiles
  CHECK(p1.ctas == 148);
  CHECK(p1.max_tiles_per_cta == 3);
  const Plan p4 = plan_of({128, 384}, 4096, 1536);
  CHECK(p4.tiles == 128);
  CHECK(p4.ctas == 128);
  CHECK(p4.rows_used == doctest::Approx(1.0));
  CHECK(p4.line().find("A and B swapped") != std::string::npos);
}

TEST_CASE("grouped plan: forced knobs") {
  Forced f;
  f.swap = 0;
  f.block_n = 64;
  const Plan p = plan_of({192, 320}, 3072, 4096, 148, f);
  CHECK(!p.swap);
  CHECK(p.tiles == 5 * 48);  // tokens: 2 + 3 tiles of 128 rows; weights: 3072 / 64
  CHECK(p.rows_used == doctest::Approx(512.0 / 640.0));
  Forced mc;
  mc.mc = 4;
  CHECK(plan_of({40, 200}, 512, 256, 148, mc).mc == 4);  // swapped: N / 128 = 4 tiles along X
  mc.swap = 0;
  CHECK(refusal({40, 200}, 512, 256, 148, mc).find("MC must divide every group's tiles along X") != std::string::npos);
  Forced small;
  small.mc = 4;
  CHECK(refusal({40}, 512, 256, 2, small).find("do not fit a GPU of 2 SMs") != std::string::npos);
}

TEST_CASE("grouped plan: empty groups have no tiles") {
  const Plan p = plan_of({0, 0}, 256, 256);
  CHECK(p.tiles == 0);
}

TEST_CASE("parse_args: --groups for a grouped step") {
  using tcg::harness::parse_args;
  auto parse = [](const tcg::StepSpec& s, std::vector<std::string> a) { return parse_args(s, a); };
  const auto d = parse(kGrouped, {});
  CHECK(d.error.empty());
  CHECK(d.options.groups.m == std::vector<int64_t>{1, 0, 40});
  CHECK(d.options.m == 41);
  CHECK(d.options.n == 256);
  CHECK(d.options.k == 768);
  const auto p = parse(kGrouped, {"--groups", "g8-n7168-k2048"});
  CHECK(p.error.empty());
  CHECK(p.options.n == 7168);
  CHECK(p.options.k == 2048);
  CHECK(p.options.m == 1024);
  CHECK(p.options.groups.speed_of_light_us == doctest::Approx(10.667));
  const auto l = parse(kGrouped, {"--groups=0,0", "--n", "128", "--k", "512"});
  CHECK(l.error.empty());
  CHECK(l.options.m == 0);
  CHECK(parse(kGrouped, {"--groups", "g8-n7168-k2048", "--n", "512"}).error.find("drop --n and --k") !=
        std::string::npos);
  CHECK(parse(kGrouped, {"--m", "64"}).error.find("takes the groups' M from --groups") != std::string::npos);
  CHECK(parse(kGrouped, {"--groups", "40", "--k", "320"}).error.find("multiple of 256") != std::string::npos);
  CHECK(parse(kOne, {"--groups", "40"}).error.find("this step runs one GEMM") != std::string::npos);
}
