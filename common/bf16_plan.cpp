// bf16_plan.cpp — the plan of step 14 (bf16_plan.h), costed with the timing model's parameters
// (tcsim::model_param, the table of common/sim/timing_params.cpp, docs/timing_model.md).
//   P, the CTA pairs per cluster sharing B: each P the GPU's SMs allow is costed as rounds x k-tiles
//     x one stage, where a round is the clusters resident at once (SMs / 2P; the model places every
//     cluster, it has no GPCs) and a stage is the slower of its MMAs (4 x N / 2 cycles at N = 256,
//     or the operand bytes at the shared-memory read rate) and its SM's TMA unit, on average over
//     the P stages of a turn: A's box (16 KiB) and, for B's 16 KiB half, (1 + (P - 1) x the
//     receiver's share) / P of a box (the issuer pays once, the others a share: the H100-measured
//     multicast cost). The least wins; ties keep the smaller P.
//   G, the cluster rows per supergroup of the tile order: the clusters resident at once hold about
//     consecutive tile numbers, so they read G cluster rows of A (or, once they span more than one
//     group's columns, as many rows as they cover) and about (clusters at once) / G columns of B.
//     The planner takes the G whose rows of A and columns of B, over the whole K, are fewest; ties
//     keep the smaller G. The plan line compares that footprint with the model's usable L2.
#include "common/bf16_plan.h"

#include <algorithm>
#include <cstdio>

#include "common/sim/sim_api.h"
#include "common/step.h"

namespace tcg::bf16 {

namespace {

constexpr int kPairM = 256, kTileN = 256, kBlockK = 64;
constexpr int kBoxBytes = 128 * kBlockK * 2;  // one 128-row box of A or of a B half: 16 KiB
constexpr int kMaxPairs = 4;                  // clusters of at most 8 CTAs: the portable size

int ceil_div_i(int a, int b) { return (a + b - 1) / b; }

struct Costs {
  double box_ns, tma_bytes_per_ns, receive_share, mma_stage_ns, l2_bytes;
};
Costs model_costs() {
  auto p = [](const char* name) { return tcsim::model_param(name); };
  const double ghz = p("SM clock");
  Costs c;
  c.box_ns = p("TMA: SM time per box") / ghz;
  c.tma_bytes_per_ns = p("TMA throughput of one SM");
  c.receive_share = p("TMA multicast: receiver's share of a box");
  // 4 MMAs of K = 16 per stage, N = 256 (both halves of B, the pair's A: 2 x 128 x 32 B + 256 x 32 B read per SM)
  const double issue = p("tcgen05.mma issue interval") * kTileN;
  const double operands = double(128 * 32 + 128 * 32) / p("MMA shared-memory operand read");
  c.mma_stage_ns = 4 * std::max(issue, operands) / ghz;
  c.l2_bytes = p("L2 capacity") * 1e6 * p("L2: share a streamed working set keeps");
  return c;
}

double stage_ns(const Costs& c, int pairs) {
  const double box = c.box_ns + kBoxBytes / c.tma_bytes_per_ns;
  const double tma = box + box * (1 + (pairs - 1) * c.receive_share) / pairs;
  return std::max(tma, c.mma_stage_ns);
}

// Rows of A and B (each read over the whole K) the clusters resident at once read, with groups of G.
double footprint_rows(int group, int pairs, int rows, int tiles_n, int at_once) {
  const int cols = std::min(tiles_n, ceil_div_i(at_once, group));
  const int spanned = ceil_div_i(at_once, tiles_n);  // rows a round covers when it spans whole rows
  const int a_rows = std::min(rows, std::max(group, spanned)) * pairs * kPairM;
  return double(a_rows + cols * kTileN);
}

}  // namespace

std::string Plan::line() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "P %d (clusters of %d CTAs%s), G %d (%s), %d clusters, %d at once read %.3g MB of A and B "
                "(usable L2 %.0f MB)",
                pairs, 2 * pairs, pairs > 1 ? ", B multicast" : "", group,
                group == 1 ? "row after row" : "supergroups", clusters, at_once, footprint_bytes / 1e6, l2_bytes / 1e6);
  return buf;
}

Plan plan(int m, int n, int k, int sms, const Forced& forced) {
  const Costs c = model_costs();
  Plan best;
  const int k_tiles = ceil_div_i(k, kBlockK);
  const int tiles_m = ceil_div_i(m, kPairM);
  if (forced.pairs && 2 * forced.pairs > sms)
    throw UsageError("TCG_STEP14_PAIRS=" + std::to_string(forced.pairs) + " needs clusters of " +
                     std::to_string(2 * forced.pairs) + " CTAs, more than the GPU's " + std::to_string(sms) + " SMs");
  double best_ns = 0;
  for (int pairs = 1; pairs <= kMaxPairs; pairs *= 2) {
    if (forced.pairs ? pairs != forced.pairs : 2 * pairs > sms) continue;
    Plan p;
    p.pairs = pairs;
    p.cluster_rows = ceil_div_i(tiles_m, pairs);
    p.tiles_n = ceil_div_i(n, kTileN);
    p.clusters = p.cluster_rows * p.tiles_n;
    p.at_once = std::min(p.clusters, sms / (2 * pairs));
    p.stage_ns = stage_ns(c, pairs);
    const double ns = ceil_div_i(p.clusters, p.at_once) * double(k_tiles) * p.stage_ns;
    if (best.cluster_rows == 0 || ns < best_ns) best = p, best_ns = ns;
  }
  if (forced.group > best.cluster_rows)
    throw UsageError("TCG_STEP14_GROUP=" + std::to_string(forced.group) + " is more than the " +
                     std::to_string(best.cluster_rows) + " rows of clusters of this problem (P " +
                     std::to_string(best.pairs) + ")");
  double best_rows = 0;
  for (int g = 1; g <= best.cluster_rows; ++g) {
    if (forced.group && g != forced.group) continue;
    const double rows = footprint_rows(g, best.pairs, best.cluster_rows, best.tiles_n, best.at_once);
    if (best_rows == 0 || rows < best_rows) best.group = g, best_rows = rows;
  }
  best.footprint_bytes = best_rows * double(k) * 2;
  best.l2_bytes = c.l2_bytes;
  return best;
}

}  // namespace tcg::bf16
