// groups.h — the groups of a grouped GEMM (step 16, mixture-of-experts): G problems that share N
// and K, group g being C_g (M_g x N) = A_g (M_g x K) . B_g (N x K)^T. Read from `--groups`: a
// named preset (the four ranked cases of the NVFP4 competition's grouped GEMM, with their N and
// K), a list of M ("80,176,128"), or a file holding such a list. Parsing never exits or prints:
// it returns one error line for the caller to print before exiting with status 2.
// groups.cpp implements it; grouped_reference.h builds on it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tcg::harness {

struct GroupList {
  std::string name;          // the preset's name, or "" for a list or a file
  std::vector<int64_t> m;    // M of each group, in order; 0 is legal (the group writes nothing)
  int64_t n = 0, k = 0;      // 0: not given (a list or a file; the step's --n and --k decide)
  double speed_of_light_us = 0;  // the competition's stated speed of light on a B200 (presets only)
};

constexpr size_t kMaxGroups = 1024;
constexpr int64_t kMaxGroupM = int64_t{1} << 20;

// The ranked cases of github.com/gpu-mode/reference-kernels, problems/nvidia/nvfp4_group_gemm
// (task.yml), in the order the competition lists them.
const std::vector<GroupList>& group_presets();
// "name (G groups, N = .., K = ..)" lines for --help.
std::string group_presets_help();

// `value` of --groups: a preset name, a list of M separated by commas (blanks around them are
// allowed), or the path of a file holding such a list (commas, blanks or newlines between the
// numbers; '#' starts a comment to the end of the line). Returns "" and fills `out`, or the error
// line (it names the flag, the offending group and why).
std::string parse_groups(const std::string& value, GroupList* out);
// The list syntax alone (`what` names the source in errors, e.g. "--groups" or the file).
std::string parse_group_text(const std::string& text, const std::string& what, std::vector<int64_t>* m);

}  // namespace tcg::harness
