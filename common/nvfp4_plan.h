// nvfp4_plan.h — the plan of the NVFP4 split-K steps 10-13 and the dual GEMM of step 15: for a problem, the GPU's SM count and
// the knobs a run forces, the tile width BLOCK_N, the split count S and the multicast width MC
// whose estimated time is least, costed with the timing model's parameter table (one source of
// numbers: a changed parameter moves plans and predictions together). Each step says which plans
// its kernel runs (PlanRules); nvfp4_plan.cpp says what the estimate weighs. Host code only.
#pragma once
#include <string>

namespace tcg::nvfp4 {

// How the S partial tiles of one output tile are summed.
enum class Reduction {
  kWorkspace,  // steps 10, 11: every split's FP32 partial to global memory, the last CTA sums them
  kCluster,    // steps 12, 13: the S CTAs are a cluster and exchange quarters through DSMEM
};
// How C leaves the SM.
enum class CStore {
  kRowPerThread,  // step 10: 16-byte stores, one row per thread: half-filled sectors
  kTma,           // steps 11-13: TMA stores of swizzled sub-tiles, whole sectors
};

// What a step's kernel runs. The lists end at their first 0 (a plain aggregate: the steps' GPU
// and emulator builds each hold one, and may share no definition, not even a destructor's).
constexpr int kMaxChoices = 4;
struct PlanRules {
  const char* knobs;              // the knobs' prefix in messages, e.g. "TCG_STEP12_"
  int block_n[kMaxChoices];       // tile widths the kernel has: {128} or {64, 128}
  int splits[kMaxChoices];        // split counts it runs ({1, 2, 4}); {}: any from 1 to the k-tiles
  int max_chosen_splits;          // the planner picks S <= this unless forced; 0: no cap
  int multicast[kMaxChoices];     // tiles along N that share A's copies: {1} or {1, 2, 4}
  int k_tiles_per_stage;          // 1, or 2 (one box of two k-tiles per operand)
  int stages_n128, stages_n64;    // the ring's depth for each tile width
  Reduction reduction;
  CStore c_store;
  bool teaches_split, teaches_multicast;  // what the step adds: a plan without it leaves that code out
  // B operands per tile: 1, or 2 for the dual GEMM (step 15: B1 and B2 with their scales, two
  // MMAs per k-step, two accumulators to reduce; C stays one BLOCK_N-wide FP16 tile).
  int b_operands = 1;
  // 2-SM pair plans (step 15, TCG_STEP15_CTA_GROUP=2): a CTA pair computes a 256-row tile with
  // tcgen05.mma.cta_group::2, each CTA loading its 128 rows of A and half the rows of each B (the
  // scales of all of B's rows); S 1, no multicast. The ring's depth per tile width; 0: no pair plans.
  int pair_stages_n128 = 0, pair_stages_n64 = 0;
  // Pair plans of BLOCK_N 128 with stages of ONE k-tile (step 15: half the bytes a stage, so a
  // deeper ring): the ring's depth; 0: none. A pair's scale copy brings two stages' atoms.
  int pair_one_ktile_stages_n128 = 0;
  // Pairs of BLOCK_N 128 issue ONE MMA of N = 256 a k-step over [B1; B2] (step 15: the even CTA
  // loads B1's 128 rows, the odd B2's): one B box a k-tile per SM instead of two.
  bool pair_fused_n128 = false;
};

// Knobs a run forces; 0: the planner's choice.
struct Forced {
  int block_n = 0, splits = 0, mc = 0, cta_group = 0, stage_k_tiles = 0;
};

struct Plan {
  int block_n = 128, splits = 1, mc = 1;  // BLOCK_N, S, MC
  int cta_group = 1;                      // 2: 2-SM pair MMAs (tiles of 256 rows, a pair per tile)
  int one_ktile_stages = 0;               // nonzero: stages of one k-tile (PlanRules::pair_one_ktile_stages_n128)
  int tiles = 0, tiles_n = 0, k_tiles = 0;
  int cluster = 1;                        // CTAs per cluster: S x MC (kCluster) or MC
  int ctas = 0, waves = 1;                // the grid, and in how many waves its clusters fit
  double ns = 0;                          // the estimate the choice was made on
  std::string line() const;               // "BLOCK_N 64, S 2, MC 4, clusters of 8, 16 CTAs"
};

// The plan; a forced knob that the problem or the GPU cannot honour (a split without a k-tile, a
// multicast width that does not divide the tiles along N, a cluster past 8 CTAs or past the GPU)
// throws tcg::UsageError, one line naming the knob.
Plan plan(const PlanRules& rules, int m, int n, int k, int sms, const Forced& forced);

// What of the step's new code (PlanRules::teaches_*) this plan does not run, "" if none.
std::string left_out(const PlanRules& rules, const Plan& p);

// CTAs of clusters of `cluster_ctas` resident at once on `sms` SMs, one CTA per SM (the ring takes
// the shared memory); 0 if one cluster does not fit.
int resident_ctas(int cluster_ctas, int sms);

}  // namespace tcg::nvfp4
