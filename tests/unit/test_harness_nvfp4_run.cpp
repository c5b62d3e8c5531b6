// test_harness_nvfp4_run.cpp — the whole harness path of an NVFP4 step (tcg::run_step with --sim:
// command line, inputs, launch, CPU reference, FP16 verification, report, CSV row, exit code)
// with fake "kernels" that compute the product on the CPU from the packed operands, so it runs
// without the step-07 kernel; and fakes that get it wrong, which must fail with coordinates.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "common/nvfp4_layout.h"
#include "common/sim/sim_api.h"

using namespace tcg;
using namespace tcg::harness;

namespace {

const StepSpec kSpec = {7, "fake_nvfp4", "a CPU stand-in for the NVFP4 kernel", Arch::kSm100f, 64,
                        Operands::kNVFP4};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// What a correct kernel does, on the CPU: decode, multiply, sum in FP32 (a 16-element block at a
// time, then scaled, as a tensor core may), round to FP16 with __float2half_rn.
void fake_launch(const GemmArgs& g) {
  const Nvfp4Operands& p = g.fp4;
  const uint32_t k = static_cast<uint32_t>(g.k);
  for (int i = 0; i < g.m; ++i) {
    for (int j = 0; j < g.n; ++j) {
      const uint8_t* a = p.a + static_cast<size_t>(i) * (k / 2);
      const uint8_t* b = p.b + static_cast<size_t>(j) * (k / 2);
      float acc = 0;
      for (uint32_t kb = 0; kb < k / 16; ++kb) {
        float blk = 0;
        for (uint32_t e = kb * 16; e < kb * 16 + 16; ++e)
          blk += e2m1_to_float(fp4_code(a, e)) * e2m1_to_float(fp4_code(b, e));
        acc += blk * ue4m3_to_float(p.sfa[sf_blocked_offset(static_cast<uint32_t>(i), kb, k)]) *
               ue4m3_to_float(p.sfb[sf_blocked_offset(static_cast<uint32_t>(j), kb, k)]);
      }
      p.c[static_cast<size_t>(i) * static_cast<size_t>(g.n) + static_cast<size_t>(j)] =
          __float2half_rn(acc);
    }
  }
}

// Right everywhere but C[3][5], which is off by one.
void off_by_one_launch(const GemmArgs& g) {
  fake_launch(g);
  __half& x = g.fp4.c[3 * static_cast<size_t>(g.n) + 5];
  x = __float2half_rn(__half2float(x) + 1.0f);
}

// Forgets the last row (it stays the NaN the harness poisons C with).
void missing_row_launch(const GemmArgs& g) {
  GemmArgs fewer = g;
  fewer.m = g.m - 1;
  fake_launch(fewer);
}

// Reads the scales row-major (row * K/16 + kb) instead of in the blocked layout.
void wrong_layout_launch(const GemmArgs& g) {
  const uint32_t k = static_cast<uint32_t>(g.k);
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      float acc = 0;
      for (uint32_t q = 0; q < k; ++q)
        acc += e2m1_to_float(fp4_code(g.fp4.a + static_cast<size_t>(i) * (k / 2), q)) *
               ue4m3_to_float(g.fp4.sfa[i * (k / 16) + q / 16]) *
               e2m1_to_float(fp4_code(g.fp4.b + static_cast<size_t>(j) * (k / 2), q)) *
               ue4m3_to_float(g.fp4.sfb[j * (k / 16) + q / 16]);
      g.fp4.c[static_cast<size_t>(i) * static_cast<size_t>(g.n) + static_cast<size_t>(j)] =
          __float2half_rn(acc);
    }
}

struct RunResult {
  int code = 0;
  std::string out, err;
};

// run_step in the emulator with `flags`, stdout and stderr captured; emulator options restored.
RunResult run(LaunchFn launch, std::vector<std::string> flags) {
  const tcsim::Options saved = tcsim::options();
  flags.insert(flags.begin(), {"step07", "--sim"});
  std::vector<char*> argv;
  for (std::string& f : flags) argv.push_back(&f[0]);
  argv.push_back(nullptr);
  RunResult r;
  std::fflush(nullptr);
  char out_name[] = "/tmp/test_nvfp4_out_XXXXXX", err_name[] = "/tmp/test_nvfp4_err_XXXXXX";
  const int out_fd = mkstemp(out_name), err_fd = mkstemp(err_name);
  REQUIRE(out_fd >= 0);
  REQUIRE(err_fd >= 0);
  const int saved_out = dup(1), saved_err = dup(2);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  r.code = run_step(kSpec, nullptr, launch, static_cast<int>(flags.size()), argv.data());
  std::fflush(nullptr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(out_fd);
  close(err_fd);
  auto slurp = [](const char* path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::remove(path);
    return ss.str();
  };
  r.out = slurp(out_name);
  r.err = slurp(err_name);
  tcsim::set_options(saved);
  return r;
}

}  // namespace

TEST_CASE("NVFP4 run: integer inputs, a correct fake kernel, bitwise PASS (partial 128-row blocks)") {
  const RunResult r = run(fake_launch, {"--m=200", "--n=136", "--k=192", "--inputs=integer"});
  CAPTURE(r.out);
  CAPTURE(r.err);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "NVFP4 in (E2M1, a UE4M3 scale per 16 along K), FP16 out"));
  CHECK(contains(r.out, "inputs:   integer"));
  CHECK(contains(r.out, "check:    PASS: all 27200 elements exact"));
}

TEST_CASE("NVFP4 run: random inputs, a correct fake kernel, PASS within tolerance") {
  const RunResult r = run(fake_launch, {"--m=130", "--n=72", "--k=256", "--seed=3"});
  CAPTURE(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "inputs:   random, uniform in [-1, 1] quantized to NVFP4"));
  CHECK(contains(r.out, "check:    PASS: 9360 elements, max |err|"));
}

TEST_CASE("NVFP4 run: one wrong element fails with its coordinates") {
  for (const char* inputs : {"--inputs=integer", "--inputs=random"}) {
    CAPTURE(inputs);
    const RunResult r = run(off_by_one_launch, {"--m=64", "--n=48", "--k=128", inputs});
    CAPTURE(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "FAIL: 1 of 3072 elements wrong, 0 NaN/Inf"));
    CHECK(contains(r.out, "C[3][5]: expected"));
  }
}

TEST_CASE("NVFP4 run: an unwritten row shows up as the NaN poison") {
  const RunResult r = run(missing_row_launch, {"--m=40", "--n=24", "--k=64", "--inputs=integer"});
  CAPTURE(r.out);
  CHECK(r.code == 1);
  CHECK(contains(r.out, "FAIL: 24 of 960 elements wrong, 24 NaN/Inf"));
  CHECK(contains(r.out, "C[39][0]: expected"));
  CHECK(contains(r.out, "nan (exact)"));  // the host conversion may print 0xFFFF as nan or -nan
}

TEST_CASE("NVFP4 run: scales read in the wrong layout are caught") {
  // 130 rows: the row-major reading goes wrong from row 1 on (and past the end of row 0's atom).
  const RunResult r = run(wrong_layout_launch, {"--m=130", "--n=16", "--k=128", "--inputs=integer"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, "FAIL:"));
}

TEST_CASE("NVFP4 run: K not a multiple of 64 is a usage error (exit 2, one line)") {
  const RunResult r = run(fake_launch, {"--k=96"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "step07: --k=96: K must be a multiple of 64 for NVFP4"));
  // The emulator's defaults (512) apply after parsing; a given K is checked at once.
  CHECK(r.out.empty());
}

TEST_CASE("NVFP4 run: the CSV row says nvfp4 in the dtype column, under the usual header") {
  char dir_name[] = "/tmp/test_nvfp4_csv_XXXXXX";
  REQUIRE(mkdtemp(dir_name) != nullptr);
  const std::string path = std::string(dir_name) + "/r.csv";
  const RunResult r =
      run(fake_launch, {"--m=32", "--n=16", "--k=64", "--inputs=integer", "--csv", path});
  CHECK(r.code == 0);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  CHECK(text.rfind(csv_header(), 0) == 0);  // the same header as BF16 rows: files stay shared
  CHECK(contains(text, "\n7,fake_nvfp4,tcgen05-emulator,,,"));
  CHECK(contains(text, ",32,16,64,nvfp4,integer,1,"));
  CHECK(contains(text, ",0,yes,"));
  std::remove(path.c_str());
  rmdir(dir_name);
}
