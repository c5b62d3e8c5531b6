// grouped_reference.cpp — inputs and the CPU reference of a grouped NVFP4 GEMM (step 16): one
// single-GEMM NVFP4 problem per group (nvfp4.cpp), each group with its own seed, its own B and
// its own scales, as the competition's grouped GEMM passes them.
#include "common/harness/grouped_reference.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace tcg::harness {

uint64_t group_seed(uint64_t seed, size_t g) {
  // splitmix64's finaliser over (seed, g): neighbouring groups and seeds get unrelated streams.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + (uint64_t(g) + 1) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

GroupedNvfp4Inputs make_grouped_nvfp4_inputs(Inputs kind, uint64_t seed, const GroupList& groups, bool fill) {
  if (groups.n < 1 || groups.k < 1)
    throw std::invalid_argument("grouped GEMM: N and K must be set (a preset sets them; else --n and --k)");
  if (groups.k % kNvfp4KMultiple != 0)
    throw std::invalid_argument("grouped GEMM: K = " + std::to_string(groups.k) + " is not a multiple of " +
                                std::to_string(kNvfp4KMultiple));
  if (kind == Inputs::kInteger && groups.k > kMaxNvfp4IntegerK)
    throw std::invalid_argument("grouped GEMM: integer inputs need K <= " + std::to_string(kMaxNvfp4IntegerK));
  GroupedNvfp4Inputs in;
  in.groups.reserve(groups.m.size());
  for (size_t g = 0; g < groups.m.size(); ++g)
    in.groups.push_back(make_nvfp4_inputs(kind, group_seed(seed, g), groups.m[g], groups.n, groups.k, false, fill));
  return in;
}

void cpu_reference_grouped_nvfp4(const GroupedNvfp4Inputs& in, const GroupList& groups,
                                 std::vector<std::vector<float>>* ref, std::vector<std::vector<float>>* s,
                                 unsigned threads) {
  if (in.groups.size() != groups.m.size())
    throw std::invalid_argument("grouped GEMM: " + std::to_string(in.groups.size()) + " groups of inputs for " +
                                std::to_string(groups.m.size()) + " groups");
  ref->assign(groups.m.size(), {});
  if (s) s->assign(groups.m.size(), {});
  for (size_t g = 0; g < groups.m.size(); ++g) {
    const int64_t m = groups.m[g];
    if (m == 0) continue;  // nothing to compute; the kernel must write nothing for it either
    (*ref)[g].resize(size_t(m * groups.n));
    if (s) (*s)[g].resize(size_t(m * groups.n));
    cpu_reference_nvfp4(in.groups[g].operands(), m, groups.n, groups.k, (*ref)[g].data(), s ? (*s)[g].data() : nullptr,
                        threads);
  }
}

VerifyResult verify_grouped(Inputs kind, const GroupedNvfp4Inputs& in, const GroupList& groups,
                            const std::vector<std::vector<__half>>& out) {
  VerifyResult vr;
  vr.inputs = kind;
  const GroupList& gl = groups;
  const size_t G = gl.m.size();
  std::vector<std::vector<float>> ref, sum;
  cpu_reference_grouped_nvfp4(in, gl, &ref, kind == Inputs::kInteger ? nullptr : &sum);
  CompetitionCheck all;
  std::string failed;
  int64_t row0 = 0;  // the group's first row in the groups' rows stacked, as the report numbers them
  for (size_t g = 0; g < G; ++g) {
    const int64_t m = gl.m[g];
    if (m > 0) {
      const VerifyResult r = verify_fp16(kind, out[g].data(), ref[g].data(), sum.empty() ? nullptr : sum[g].data(),
                                         m, gl.n, gl.k);
      vr.total += r.total, vr.mismatches += r.mismatches, vr.nonfinite += r.nonfinite, vr.overflow += r.overflow;
      if (r.max_abs_err >= vr.max_abs_err && r.max_i >= 0)
        vr.max_abs_err = r.max_abs_err, vr.max_i = r.max_i + row0, vr.max_j = r.max_j;
      vr.max_ratio = std::max(vr.max_ratio, r.max_ratio);
      for (Mismatch mm : r.first)
        if (vr.first.size() < size_t(kMaxListed)) mm.i += row0, vr.first.push_back(mm);
      if (!r.passed()) failed += strf("%s%zu (M = %lld: %lld of %lld wrong)", failed.empty() ? "" : ", ", g,
                                      static_cast<long long>(m), static_cast<long long>(r.mismatches),
                                      static_cast<long long>(r.total));
      if (kind == Inputs::kCompetition) {
        const CompetitionCheck cc = competition_check(out[g].data(), ref[g].data(), m, gl.n);
        all.total += cc.total, all.outside += cc.outside;
        if (cc.outside > 0 && cc.worst_excess > all.worst_excess)
          all.worst_excess = cc.worst_excess, all.worst_i = cc.worst_i + row0, all.worst_j = cc.worst_j;
      }
    }
    row0 += m;
  }
  if (!failed.empty()) std::printf("groups:   wrong in group %s (rows below number the groups' rows stacked)\n", failed.c_str());
  if (kind == Inputs::kCompetition) {
    std::printf("%s\n", format_competition_check(all).c_str());
    if (all.outside > 0 && vr.passed()) vr.mismatches = all.outside, vr.max_i = all.worst_i, vr.max_j = all.worst_j;
  }
  return vr;
}

}  // namespace tcg::harness
