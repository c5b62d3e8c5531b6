// test_harness_cli.cpp — unit tests of the harness's command line (common/harness/internal.h):
// parse_args (defaults, both flag forms, every refusal with its one-line error), the emulator's
// defaults and validate_shape. No GPU and no emulator needed. main() comes from another file of
// the test binary.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "common/harness/internal.h"
#include "harness_test_util.h"

using namespace tcg;
using namespace tcg::harness;

namespace {
using harness_test::contains;
using harness_test::kSpec;
using harness_test::parse;
}  // namespace
// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

TEST_CASE("parse_args: defaults") {
  const ParseResult r = parse({});
  REQUIRE(r.error.empty());
  CHECK_FALSE(r.help);
  const Options& o = r.options;
  CHECK(o.m == 4096);
  CHECK(o.n == 4096);
  CHECK(o.k == 4096);
  CHECK(o.iters == 20);
  CHECK(o.warmup == 5);
  CHECK(o.seed == 1);
  CHECK(o.check);
  CHECK(o.inputs == Inputs::kRandom);
  CHECK(o.csv.empty());
  CHECK_FALSE(o.force_gpu);
  CHECK_FALSE(o.force_sim);
  CHECK(o.sim_seed == 1);
  CHECK(o.sim_sms == 148);
  CHECK(o.sim_ctas_per_sm == 0);
}

TEST_CASE("parse_args: --sim-sms and --sim-ctas-per-sm") {
  const Options o = parse({"--sim-sms", "2", "--sim-ctas-per-sm=1"}).options;
  CHECK(o.sim_sms == 2);
  CHECK(o.sim_ctas_per_sm == 1);
  CHECK(contains(parse({"--sim-sms", "0"}).error, "--sim-sms"));
  CHECK(contains(parse({"--sim-sms=1025"}).error, "--sim-sms"));
  CHECK(contains(parse({"--sim-ctas-per-sm", "33"}).error, "--sim-ctas-per-sm"));
  CHECK(contains(usage(kSpec), "--sim-sms"));
}

TEST_CASE("parse_args: --predict-noise") {
  CHECK(parse({"--predict"}).options.predict_noise == 0);
  CHECK(parse({"--predict", "--predict-noise", "3"}).options.predict_noise == 3);
  CHECK(parse({"--predict-noise=64"}).options.predict_noise == 64);
  CHECK(contains(parse({"--predict-noise", "65"}).error, "--predict-noise"));
  CHECK(contains(parse({"--predict-noise", "two"}).error, "--predict-noise"));
  CHECK(contains(usage(kSpec), "--predict-noise"));
}

TEST_CASE("parse_args: a step of CTA pairs refuses an emulated GPU that cannot hold one pair") {
  tcg::StepSpec pair = kSpec;
  pair.cluster_size = 2;
  const auto parse_pair = [&](std::vector<std::string> a) { return parse_args(pair, a); };
  CHECK(parse_pair({"--sim-sms", "1"}).error ==
        "step01: --sim-sms=1: this step runs clusters of 2 CTAs (CTA pairs), one CTA per SM; it needs at least 2 SMs");
  CHECK(parse_pair({"--sim-sms", "2"}).error.empty());
  CHECK(parse_pair({"--sim-sms", "3"}).error.empty());  // one SM idles, as on a GPU with an odd count
  CHECK(parse_pair({}).error.empty());                  // the default, 148
  CHECK(parse({"--sim-sms", "1"}).error.empty());       // a step without clusters runs on one SM
}

TEST_CASE("parse_args: --verbose") {
  CHECK_FALSE(parse({}).options.verbose);
  CHECK(parse({"--verbose"}).options.verbose);
  CHECK(contains(parse({"--verbose=1"}).error, "--verbose takes no value"));
  CHECK(contains(usage(kSpec), "--verbose"));
}

TEST_CASE("parse_args: '--flag value' and '--flag=value' forms") {
  const ParseResult r =
      parse({"--m", "256", "--n=128", "--k", "64", "--iters=3", "--warmup", "0", "--seed=42",
             "--inputs", "integer", "--csv=out.csv", "--no-check", "--sim", "--sim-seed", "7"});
  REQUIRE(r.error.empty());
  const Options& o = r.options;
  CHECK(o.m == 256);
  CHECK(o.n == 128);
  CHECK(o.k == 64);
  CHECK(o.iters == 3);
  CHECK(o.warmup == 0);
  CHECK(o.seed == 42);
  CHECK(o.inputs == Inputs::kInteger);
  CHECK(o.csv == "out.csv");
  CHECK_FALSE(o.check);
  CHECK(o.force_sim);
  CHECK(o.sim_seed == 7);
  CHECK(o.m_given);
  CHECK(o.n_given);
  CHECK(o.k_given);

  // The last of --check / --no-check wins.
  CHECK(parse({"--no-check", "--check"}).options.check);
  CHECK(parse({"--inputs=random"}).options.inputs == Inputs::kRandom);
  CHECK(parse({"--inputs", "wide"}).options.inputs == Inputs::kWide);
  CHECK(parse({"--gpu"}).options.force_gpu);
}

TEST_CASE("apply_emulator_defaults: 512 unless given") {
  Options o = parse({}).options;
  apply_emulator_defaults(o);
  CHECK(o.m == 512);
  CHECK(o.n == 512);
  CHECK(o.k == 512);

  Options p = parse({"--n=1024"}).options;
  apply_emulator_defaults(p);
  CHECK(p.m == 512);
  CHECK(p.n == 1024);
  CHECK(p.k == 512);

  // A value given explicitly stays, even if it equals the GPU default.
  Options q = parse({"--k=4096"}).options;
  apply_emulator_defaults(q);
  CHECK(q.k == 4096);
}

TEST_CASE("parse_args: --help") {
  CHECK(parse({"--help"}).help);
  CHECK(parse({"-h"}).help);
  CHECK(parse({"--frobnicate", "--help"}).help);  // help wins over errors
  const std::string u = usage(kSpec);
  CHECK(contains(u, "step01"));
  CHECK(contains(u, "--sim-seed"));
  CHECK(contains(u, "multiple of 8"));
}

TEST_CASE("parse_args: unknown flags and stray arguments") {
  const ParseResult r = parse({"--frobnicate"});
  CHECK(r.error == "step01: unknown flag --frobnicate (see --help)");
  CHECK(parse({"--frobnicate=3"}).error == "step01: unknown flag --frobnicate (see --help)");
  CHECK(contains(parse({"512"}).error, "unexpected argument 512"));
  CHECK(contains(parse({"-m", "5"}).error, "unexpected argument -m"));
  CHECK(contains(parse({"--"}).error, "unexpected argument"));
}

TEST_CASE("parse_args: missing values") {
  CHECK(parse({"--m"}).error == "step01: --m needs a value");
  CHECK(parse({"--m", "--n", "5"}).error == "step01: --m needs a value");
  CHECK(contains(parse({"--csv"}).error, "--csv needs a value"));
  CHECK(contains(parse({"--csv="}).error, "--csv needs a file name"));
  CHECK(contains(parse({"--seed="}).error, "--seed=: not a number"));
}

TEST_CASE("parse_args: malformed numbers") {
  for (const char* bad : {"12x", "x12", "1.5", "", " 12", "+12", "0x10", "1e3", "12 "}) {
    CAPTURE(bad);
    const ParseResult r = parse({std::string("--m=") + bad});
    CHECK(contains(r.error, std::string("step01: --m=") + bad + ": not a number"));
  }
  CHECK(contains(parse({"--iters", "3x"}).error, "--iters=3x: not a number"));
  CHECK(contains(parse({"--m=99999999999999999999999"}).error, "out of range"));
  CHECK(contains(parse({"--m=16777217"}).error, "out of range (at most 16777216)"));
  CHECK(parse({"--m=16777216", "--n=1", "--k=8"}).error.empty());
  CHECK(contains(parse({"--iters=1000001"}).error, "out of range"));
  CHECK(parse({"--seed=18446744073709551615"}).options.seed == 18446744073709551615ull);
  CHECK(contains(parse({"--seed=18446744073709551616"}).error, "out of range"));
}

TEST_CASE("parse_args: non-positive numbers") {
  CHECK(parse({"--m=0"}).error == "step01: --m=0: must be a positive integer");
  CHECK(parse({"--n", "-5"}).error == "step01: --n=-5: must be a positive integer");
  CHECK(contains(parse({"--k=0"}).error, "must be a positive integer"));
  CHECK(contains(parse({"--iters=0"}).error, "--iters=0: must be a positive integer"));
  CHECK(contains(parse({"--warmup=-1"}).error, "--warmup=-1: must be a non-negative integer"));
  CHECK(contains(parse({"--seed=-1"}).error, "must be a non-negative integer"));
  CHECK(contains(parse({"--m=-x"}).error, "not a number"));
  CHECK(parse({"--warmup=0"}).error.empty());
  CHECK(parse({"--seed=0"}).error.empty());
}

TEST_CASE("parse_args: K must be a multiple of spec.k_multiple") {
  const ParseResult r = parse({"--k=12"});
  CHECK(r.error ==
        "step01: --k=12: K must be a multiple of 8 (TMA row pitch must be a multiple of 16 bytes)");
  CHECK(parse({"--k", "24"}).error.empty());

  const StepSpec wide = {5, "wide", "K in blocks of 64", Arch::kSm100f, 64};
  const ParseResult w = parse_args(wide, {"--k=96"});
  CHECK(contains(w.error, "step05: --k=96: K must be a multiple of 64"));
}

TEST_CASE("parse_args: shape limits") {
  // 65536 x 65536 elements do not fit 32-bit offsets.
  const ParseResult r = parse({"--m=65536", "--k=65536"});
  CHECK(contains(r.error, "A (M x K)"));
  CHECK(contains(r.error, "2^31-1"));
  CHECK(contains(parse({"--m=65536", "--n=65536", "--k=8"}).error, "C (M x N)"));
  CHECK(parse({"--m=32768", "--n=32768", "--k=32768"}).error.empty());
  // Integer inputs need exact FP32 sums.
  CHECK(contains(parse({"--inputs=integer", "--k=4194312", "--m=1", "--n=1"}).error, "exact"));
  CHECK(parse({"--inputs=integer", "--k=4194304", "--m=1", "--n=1"}).error.empty());
}

TEST_CASE("parse_args: conflicting or malformed switches") {
  CHECK(contains(parse({"--gpu", "--sim"}).error, "--gpu and --sim"));
  CHECK(contains(parse({"--sim", "--gpu"}).error, "--gpu and --sim"));
  CHECK(parse({"--check=yes"}).error == "step01: --check takes no value");
  CHECK(contains(parse({"--inputs=gaussian"}).error,
                 "--inputs=gaussian: expected random, integer or wide"));
}

TEST_CASE("validate_shape on its own") {
  Options o;
  CHECK(validate_shape(kSpec, o).empty());
  o.k = 12;
  CHECK(contains(validate_shape(kSpec, o), "multiple of 8"));
  o.k = 8;
  o.m = 0;
  CHECK(contains(validate_shape(kSpec, o), "--m=0"));
}


TEST_CASE("validate_plan: a step's plan refusing its environment knob is a usage error") {
  // A workspace function that runs a plan reading a (tests-only) environment variable, as step
  // 11's does with TCG_STEP11_BLOCK_N: its invalid_argument becomes the one-line error.
  StepSpec spec = kSpec;
  spec.workspace = [](int, int, int, int) -> StepWorkspace {
    throw std::invalid_argument("TCG_STEPXX_KNOB must be 0 or 1, got 'yes'");
  };
  Options o;
  CHECK(validate_plan(spec, o, 148) == "step01: TCG_STEPXX_KNOB must be 0 or 1, got 'yes'");
  spec.workspace = [](int, int, int, int) { return StepWorkspace{}; };
  CHECK(validate_plan(spec, o, 148).empty());
  // The plan function sees the GPU's SM count: one that the knobs cannot take is refused.
  spec.plan = [](int, int, int, int sms) -> StepPlan {
    if (sms < 4) throw UsageError("TCG_STEPXX_SPLITS=4: clusters of 4 CTAs do not fit a GPU of 2 SMs");
    return {"BLOCK_N 128, S 4, MC 1, clusters of 4, 8 CTAs", ""};
  };
  CHECK(validate_plan(spec, o, 8).empty());
  CHECK(validate_plan(spec, o, 2) == "step01: TCG_STEPXX_SPLITS=4: clusters of 4 CTAs do not fit a GPU of 2 SMs");
}

TEST_CASE("apply_step_sim_default: a step's own default problem only when none of it is given") {
  StepSpec spec = kSpec;
  Options o;
  CHECK(apply_step_sim_default(spec, o).empty());  // no default of its own: nothing changes
  CHECK(!o.m_given);
  spec.sim_default = {128, 512, 4160, 8};
  Options p;
  CHECK(contains(apply_step_sim_default(spec, p), "8 SMs"));
  CHECK((p.m == 128 && p.n == 512 && p.k == 4160 && p.sim_sms == 8 && p.sim_sms_given));
  for (int which = 0; which < 4; ++which) {  // any of --m, --n, --k, --sim-sms given: the usual defaults
    Options q;
    (which == 0 ? q.m_given : which == 1 ? q.n_given : which == 2 ? q.k_given : q.sim_sms_given) = true;
    CHECK(apply_step_sim_default(spec, q).empty());
    CHECK(q.sim_default_note.empty());
  }
  Options r;
  r.predict = true;  // a prediction is for the B200 and the shape asked for
  CHECK(apply_step_sim_default(spec, r).empty());
}
