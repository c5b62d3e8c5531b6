// test_harness_trace_cli.cpp — the command line of the timelines and the timing model
// (common/harness/cli.cpp): --trace, --trace-ctas, --predict, --model-params, and the
// combinations refused. Split from test_harness.cpp, which tests the rest of the command line.
// No GPU and no emulator needed. main() comes from another file of the test binary.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "harness_test_util.h"

using namespace tcg;
using namespace tcg::harness;
using harness_test::contains;
using harness_test::kSpec;
using harness_test::parse;

TEST_CASE("parse_args: --trace and --trace-ctas") {
  const Options d = parse({}).options;
  CHECK(d.trace_path.empty());
  CHECK(d.trace_ctas == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK_FALSE(d.predict);
  CHECK_FALSE(d.model_params);

  const ParseResult r = parse({"--trace", "t.json", "--trace-ctas=8,0-2,1,100-101"});
  REQUIRE(r.error.empty());
  CHECK(r.options.trace_path == "traces/t.json");  // a bare name goes under traces/ (git-ignored)
  CHECK(parse({"--trace", "./t.json"}).options.trace_path == "./t.json");  // a directory: as given
  CHECK(parse({"--trace", "/tmp/x/t.json"}).options.trace_path == "/tmp/x/t.json");
  CHECK(r.options.trace_ctas == std::vector<uint32_t>{0, 1, 2, 8, 100, 101});  // sorted, merged
  CHECK(parse({"--trace", "t.json", "--trace-ctas", "5"}).options.trace_ctas == std::vector<uint32_t>{5});
  CHECK(parse({"--trace", "t.json", "--trace-ctas=7-7"}).options.trace_ctas == std::vector<uint32_t>{7});
  CHECK(parse({"--trace", "t.json", "--trace-ctas=2147483645-2147483646"}).options.trace_ctas ==
        std::vector<uint32_t>{2147483645u, 2147483646u});
  CHECK(parse({"--trace", "t.json", "--trace-ctas=0-63"}).options.trace_ctas.size() == 64);
  CHECK(parse({"--trace", "t.json", "--trace-ctas=0-63,0-63,5"}).options.trace_ctas.size() == 64);  // duplicates merge

  CHECK(parse({"--trace-ctas=1"}).error == "step01: --trace-ctas needs --trace FILE");
  CHECK(parse({"--trace="}).error == "step01: --trace needs a file name");
  CHECK(parse({"--trace"}).error == "step01: --trace needs a value");
  CHECK(parse({"--trace-ctas"}).error == "step01: --trace-ctas needs a value");
  const char* bad[] = {"",    ",",   "0,",  ",0",  "1,,2", "a",   "0-",   "-",   "0-x", "1-2-3",
                       "3-1", "0-64", "0-63,64", "-1", "0--1", "+1", " 1", "0x10", "2147483647",
                       "99999999999999999999999", "1.5", "0 - 3"};
  for (const char* b : bad) {
    const ParseResult e = parse({std::string("--trace-ctas=") + b});
    INFO("--trace-ctas=" << b);
    CHECK(contains(e.error, "step01: --trace-ctas="));
    CHECK(e.error.find('\n') == std::string::npos);
  }
  CHECK(contains(parse({"--trace-ctas=3-1"}).error, "runs backwards"));
  CHECK(contains(parse({"--trace-ctas=0-64"}).error, "more than 64 CTAs"));
  CHECK(contains(parse({"--trace-ctas=0-63,64"}).error, "more than 64 CTAs"));
  CHECK(contains(parse({"--trace-ctas=-1"}).error, "non-negative"));
  CHECK(contains(parse({"--trace-ctas=2147483647"}).error, "out of range"));
  CHECK(contains(parse({"--trace-ctas=99999999999999999999999"}).error, "out of range"));

  std::vector<uint32_t> out{42};
  CHECK(parse_cta_list("9,3-4", &out).empty());
  CHECK(out == std::vector<uint32_t>{3, 4, 9});
  CHECK_FALSE(parse_cta_list("x", &out).empty());
  CHECK(out == std::vector<uint32_t>{3, 4, 9});  // left alone on error

  const std::string u = usage(kSpec);
  CHECK(contains(u, "--trace FILE"));
  CHECK(contains(u, "--trace-ctas LIST"));
  CHECK(contains(u, "--predict"));
  CHECK(contains(u, "--model-params"));
}

TEST_CASE("parse_args: --predict and --model-params") {
  const ParseResult p = parse({"--predict"});
  REQUIRE(p.error.empty());
  CHECK(p.options.predict);
  CHECK(p.options.force_sim);  // --predict means the emulator
  CHECK(parse({"--predict", "--sim"}).error.empty());
  CHECK(contains(parse({"--predict", "--gpu"}).error, "--gpu and --predict"));
  CHECK(contains(parse({"--predict", "--check"}).error, "--check and --predict contradict"));
  CHECK(parse({"--predict", "--no-check"}).error.empty());
  CHECK(parse({"--predict=1"}).error == "step01: --predict takes no value");
  CHECK(parse({"--model-params"}).options.model_params);
  // --model-params FILE / =FILE: a parameter file for the timing model (loaded by run_step)
  CHECK(parse({"--model-params=x.txt"}).options.model_params_file == "x.txt");
  CHECK(!parse({"--model-params", "x.txt", "--predict"}).options.model_params);
  CHECK(parse({"--model-params", "x.txt", "--predict"}).options.model_params_file == "x.txt");
  CHECK(parse({"--model-params", "--predict"}).options.model_params_file.empty());
  CHECK(parse({"--model-params="}).error == "step01: --model-params needs a file name after '='");

  // The shape: 4096 for what is not given (instead of the emulator's 512), as given otherwise.
  Options o = parse({"--predict", "--n", "1024"}).options;
  apply_emulator_defaults(o);
  CHECK(o.m == 4096);
  CHECK(o.n == 1024);
  CHECK(o.k == 4096);
  Options q = parse({"--predict", "--m=128", "--n=7168", "--k=16384"}).options;
  apply_emulator_defaults(q);
  CHECK(q.m == 128);
  CHECK(q.n == 7168);
  CHECK(q.k == 16384);
}
