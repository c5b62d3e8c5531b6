// tests/unit/test_harness_workspace.cpp — unit tests of a step's global scratch memory in the harness
// (common/harness/workspace.cpp): the size a step asks for is bounded and its counters fit in it,
// the preparation zeroes the counters and poisons the rest, a counter left non-zero and two
// outputs that differ in one bit are each reported with where. No GPU and no emulator.
#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "harness_test_util.h"

using namespace tcg;
using namespace tcg::harness;
using harness_test::contains;

namespace {

StepWorkspace split_ws(int m, int n, int, int sms) {  // a made-up split-K step: 4 B per tile + 1 KiB per SM
  StepWorkspace w;
  w.zeroed_bytes = size_t(m + n) * 4;
  w.bytes = w.zeroed_bytes + size_t(sms) * 1024;
  return w;
}
StepWorkspace huge_ws(int, int, int, int) { return {kMaxWorkspaceBytes + 1, 0}; }
StepWorkspace bad_counters_ws(int, int, int, int) { return {64, 128}; }

Options shape(int64_t m, int64_t n, int64_t k) {
  Options o;
  o.m = m;
  o.n = n;
  o.k = k;
  return o;
}

}  // namespace

TEST_CASE("workspace: a step without one gets none; a step's size is its function's, for the SM count given") {
  StepSpec plain{10, "x", "x", Arch::kSm100f, 64, Operands::kNVFP4};
  CHECK(workspace_for(plain, shape(128, 256, 512), 148).bytes == 0);
  StepSpec split = plain;
  split.workspace = &split_ws;
  const StepWorkspace w = workspace_for(split, shape(128, 256, 512), 8);
  CHECK(w.zeroed_bytes == (128 + 256) * 4);
  CHECK(w.bytes == (128 + 256) * 4 + 8 * 1024);
}

TEST_CASE("workspace: a size past the bound, or counters larger than the whole, is a bug in the step") {
  StepSpec s{10, "x", "x", Arch::kSm100f, 64, Operands::kNVFP4, &huge_ws};
  CHECK_THROWS_AS(workspace_for(s, shape(1, 1, 64), 148), std::logic_error);
  s.workspace = &bad_counters_ws;
  CHECK_THROWS_AS(workspace_for(s, shape(1, 1, 64), 148), std::logic_error);
}

TEST_CASE("workspace: counters zeroed (when asked), the rest 0xFF (FP32 NaN)") {
  const StepWorkspace w{64, 16};
  std::vector<uint8_t> buf(64, 0x5A);
  prepare_workspace(buf.data(), w, /*zero_counters=*/true);
  for (size_t i = 0; i < 16; ++i) CHECK(buf[i] == 0);
  for (size_t i = 16; i < 64; ++i) CHECK(buf[i] == 0xFF);
  float f;
  std::memcpy(&f, buf.data() + 16, 4);
  CHECK(f != f);  // NaN
  buf[3] = 7;
  prepare_workspace(buf.data(), w, /*zero_counters=*/false);  // a repeat launch: counters as the kernel left them
  CHECK(buf[3] == 7);
}

TEST_CASE("workspace: a counter not reset is named; zero counters pass") {
  std::vector<uint8_t> c(32, 0);
  CHECK(counters_not_reset(c.data(), c.size()) == "");
  c[9] = 3;
  const std::string e = counters_not_reset(c.data(), c.size());
  INFO(e);
  CHECK(contains(e, "byte 9 (32-bit counter 2) is 0x03"));
}

TEST_CASE("workspace: two launches' outputs that differ in one bit are reported with the element") {
  std::vector<__half> a(6 * 5), b;
  for (size_t i = 0; i < a.size(); ++i) a[i] = fp16_from_bits(uint16_t(0x3C00 + i));
  b = a;
  CHECK(repeat_difference(a.data(), b.data(), int64_t(a.size()), 5) == "");
  b[13] = fp16_from_bits(uint16_t(0x3C00 + 13) ^ 1u);
  const std::string e = repeat_difference(a.data(), b.data(), int64_t(a.size()), 5);
  INFO(e);
  CHECK(contains(e, "C[2][3] is 0x3c0d in the first launch and 0x3c0c in the second"));
}
