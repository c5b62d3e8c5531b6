// bf16_plan.h — the plan of step 14 (BF16, 2-SM MMA, operands multicast across CTA pairs, an
// L2-aware tile order): for a problem and the GPU's SM count, how many CTA pairs share a cluster
// (and B's copies), and how many rows of clusters a supergroup of the tile order holds, costed
// with the timing model's parameter table (one source of numbers, as common/nvfp4_plan.h).
// Host code only.
#pragma once
#include <cstdint>
#include <string>

namespace tcg::bf16 {

// Knobs a run forces; 0: the planner's choice.
struct Forced {
  int pairs = 0;  // CTA pairs per cluster: 1, 2 or 4
  int group = 0;  // rows of clusters per supergroup of the tile order: 1 .. the rows there are
};

struct Plan {
  int pairs = 1;             // P: CTA pairs stacked along M in one cluster, sharing B's copies
  int group = 1;             // G: rows of clusters per supergroup (1: row after row, "linear")
  int cluster_rows = 0;      // rows of cluster tiles: ceil(M / (256 P))
  int tiles_n = 0;           // columns of tiles: ceil(N / 256)
  int clusters = 0;          // the grid: one cluster per cluster tile
  int at_once = 0;           // clusters resident at once (SMs / 2P)
  double footprint_bytes = 0;  // A and B rows the clusters running at once read, whole K
  double l2_bytes = 0;       // the model's L2 capacity (what the footprint is compared with)
  double stage_ns = 0;       // the estimate P was chosen on: one stage, the slower of TMA and MMA
  std::string line() const;  // "2 pairs a cluster (4 CTAs), B multicast; tile order: groups of 4 ..."
};

// The plan; a forced knob the problem or the GPU cannot honour (a cluster past the GPU's SMs, a
// group larger than the rows of clusters) throws tcg::UsageError, one line naming the knob.
Plan plan(int m, int n, int k, int sms, const Forced& forced);

}  // namespace tcg::bf16
