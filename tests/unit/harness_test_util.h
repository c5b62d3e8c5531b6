// harness_test_util.h — what the command-line tests of the harness share (test_harness.cpp,
// test_harness_trace_cli.cpp): a step to parse for, and a substring test. Everything is inline in
// namespace harness_test, so each test file includes it once and the binary links.
#pragma once
#include <string>
#include <vector>

#include "common/harness/internal.h"

namespace harness_test {

// Step 01 as far as the parser cares (its messages say "step01: ...").
inline const tcg::StepSpec kSpec = {1, "test_step", "a step for the tests", tcg::Arch::kSm100f, 8};

inline tcg::harness::ParseResult parse(const std::vector<std::string>& args) {
  return tcg::harness::parse_args(kSpec, args);
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace harness_test
