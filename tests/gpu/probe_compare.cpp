// probe_compare.cpp — judging a probe's register dump against another (GPU, emulator, CPU): the
// first differing word with its thread, register, TMEM lane and column, the largest difference,
// the words beyond the FP32 bound; classifying an experiment's result; the TMEM allocation checks.
#include <map>

#include "probe_internal.h"

namespace probe {
using namespace detail;

std::string describe_word(const Case& c, size_t i) {
  const uint32_t t = uint32_t(i / c.read.ncols) % kProbeThreads, r = uint32_t(i % c.read.ncols);
  const uint32_t cta = uint32_t(i / c.read.ncols) / kProbeThreads;
  uint32_t lane, col;
  word_cell(c.read, t, r, lane, col);
  char b[140];
  snprintf(b, sizeof b, "%sthread %u register %u (TMEM lane %u, column %u)",
           c.ctas > 1 ? ("CTA " + std::to_string(cta) + " ").c_str() : "", t, r, lane, col);
  return b;
}


Comparison compare(const Case& c, const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  Comparison r;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    if (!c.defined[i]) continue;
    ++r.compared;
    if (got[i] == want[i]) continue;
    if (r.first == SIZE_MAX) {
      r.first = i;
      r.first_got = got[i];
      r.first_want = want[i];
    }
    ++r.differing;
    const double g = bits_f32(got[i]), w = bits_f32(want[i]);
    const double d = std::isnan(g) || std::isnan(w) ? INFINITY : std::fabs(g - w);
    if (d > r.max_diff || r.max_at == SIZE_MAX) {
      r.max_diff = d;
      r.max_at = i;
    }
    if (c.bound.empty() || !(d <= c.bound[i])) ++r.over_bound;
  }
  if (got.size() != want.size()) r.differing += 1, r.over_bound += 1;
  return r;
}

std::string summarize(const Case& c, const Comparison& r) {
  char b[512];
  if (r.differing == 0) {
    snprintf(b, sizeof b, "bitwise identical (%zu words)", r.compared);
    return b;
  }
  if (r.first == SIZE_MAX) return "output size differs";
  const std::string max_at = r.max_at == SIZE_MAX ? "?" : describe_word(c, r.max_at);
  snprintf(b, sizeof b, "%zu of %zu words differ (%zu beyond the bound); first: %s: 0x%08x (%g) vs 0x%08x (%g); "
           "largest difference %g at %s", r.differing, r.compared, r.over_bound, describe_word(c, r.first).c_str(),
           r.first_got, double(bits_f32(r.first_got)), r.first_want, double(bits_f32(r.first_want)), r.max_diff,
           max_at.c_str());
  return b;
}

std::string classify(const Case& c, const std::vector<uint32_t>& got) {
  for (const auto& h : c.hypotheses) {
    const Comparison r = compare(c, got, h.second);
    if (r.differing == 0) return h.first;
  }
  // None matched: show what rows 0, 32, 64, 96 received in column 0.
  std::string s = "none of the hypotheses; column 0 of rows 0/32/64/96:";
  for (uint32_t q = 0; q < 4; ++q) {
    char b[40];
    const size_t i = size_t(32 * q) * c.read.ncols;  // thread 32q (lane 32q) register 0
    snprintf(b, sizeof b, " %g", i < got.size() ? double(bits_f32(got[i])) : 0.0);
    s += b;
  }
  return s;
}

// ---------------------------------------------------------------- tcgen05.alloc
AllocVerdict check_alloc(const std::vector<AllocRecord>& recs, uint32_t ncols) {
  AllocVerdict v;
  for (size_t i = 0; i < recs.size(); ++i) {
    const uint32_t lane = recs[i].taddr >> 16, col = recs[i].taddr & 0xFFFF;
    if (lane != 0 || col + ncols > 512 || col % ncols != 0) {
      char b[160];
      snprintf(b, sizeof b, "CTA %zu: address 0x%08x (lane %u, column %u) for %u columns is out of range or misaligned",
               i, recs[i].taddr, lane, col, ncols);
      v.ok = false;
      v.detail = b;
      return v;
    }
  }
  for (size_t i = 0; i < recs.size(); ++i)
    for (size_t j = i + 1; j < recs.size(); ++j) {
      const AllocRecord &x = recs[i], &y = recs[j];
      if (x.smid != y.smid || x.t_free < y.t_alloc || y.t_free < x.t_alloc) continue;
      ++v.overlapping_pairs;
      const uint32_t cx = x.taddr & 0xFFFF, cy = y.taddr & 0xFFFF;
      if (cx < cy + ncols && cy < cx + ncols) {
        char b[200];
        snprintf(b, sizeof b, "CTAs %zu and %zu on SM %u hold columns [%u, %u) and [%u, %u) at the same time", i, j,
                 x.smid, cx, cx + ncols, cy, cy + ncols);
        v.ok = false;
        v.detail = b;
        return v;
      }
    }
  std::map<uint32_t, int> per_sm;
  for (const auto& r : recs) per_sm[r.smid]++;
  char b[200];
  snprintf(b, sizeof b, "%zu CTAs on %zu SMs: every address in range and aligned; %zu pairs sharing an SM in time, "
           "all disjoint", recs.size(), per_sm.size(), v.overlapping_pairs);
  v.detail = b;
  return v;
}

}  // namespace probe
