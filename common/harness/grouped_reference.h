// grouped_reference.h — the CPU side of a grouped NVFP4 GEMM (step 16): each group's operands
// and its reference C_g, built on the single-GEMM NVFP4 inputs and reference (internal.h,
// nvfp4.cpp), and the verification of every group's C_g. grouped_reference.cpp implements it.
#pragma once
#include <cstdint>
#include <vector>

#include "common/harness/groups.h"
#include "common/harness/internal.h"

namespace tcg::harness {

// Group g's operands: A_g (M_g x K) and its own B_g (N x K), each with its UE4M3 scales, as
// make_nvfp4_inputs makes them from group_seed(seed, g). A group with M_g = 0 has an empty A_g.
struct GroupedNvfp4Inputs {
  std::vector<Nvfp4HostInputs> groups;
};
// The seed of group g: distinct streams per group, the same for every run of `seed`.
uint64_t group_seed(uint64_t seed, size_t g);
// Throws std::invalid_argument (one line) when n or k is not set or k is not a multiple of
// kNvfp4KMultiple, or for integer inputs with k above kMaxNvfp4IntegerK.
// fill false: zeros of the right sizes (make_nvfp4_inputs).
GroupedNvfp4Inputs make_grouped_nvfp4_inputs(Inputs kind, uint64_t seed, const GroupList& groups, bool fill = true);

// ref[g] (M_g x N row-major) and, if `s` is not null, s[g], as cpu_reference_nvfp4 of group g's
// operands: C_g = (A_g . SFA_g) (B_g . SFB_g)^T, exact sums in double rounded to float. Groups
// with M_g = 0 get empty vectors.
void cpu_reference_grouped_nvfp4(const GroupedNvfp4Inputs& in, const GroupList& groups,
                                 std::vector<std::vector<float>>* ref, std::vector<std::vector<float>>* s,
                                 unsigned threads = 0);

// Verifies each group's C_g (out[g]: M_g x N FP16, host memory) against its reference, as
// verify_fp16 does for one GEMM, and for the competition's inputs with its check too; returns the
// sum over the groups. Prints a "groups:" line naming the groups that failed, and the competition
// line (competition inputs). Row numbers in the result count the groups' rows stacked.
VerifyResult verify_grouped(Inputs kind, const GroupedNvfp4Inputs& in, const GroupList& groups,
                            const std::vector<std::vector<__half>>& out);

}  // namespace tcg::harness
