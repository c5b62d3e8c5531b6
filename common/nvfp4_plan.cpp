// nvfp4_plan.cpp — the plan of the NVFP4 split-K steps 10-13 (nvfp4_plan.h): every (BLOCK_N, S,
// MC) the step's kernel runs and the knobs leave open is costed on the slowest SM, one CTA per SM,
// in ns of the B200 timing model, with the model's own parameters (tcsim::model_param, the table of
// common/sim/timing_params.cpp, docs/timing_model.md). What one CTA's time is made of:
//   streaming  its k-tiles through its SM's TMA unit: per stage 4 copies (the A box, the B box, the
//              SFA and SFB bulk copies; 2 k-tiles per box with the wide copies) at the model's per-box
//              time plus the bytes at one SM's TMA rate. With multicast the A box and SFA copy of a
//              stage are issued by one CTA of MC for all of them and land in the others at the
//              model's receiver's share of a box: each SM pays (1 + (MC - 1) x share) / MC of them.
//              The ring paces it when that is slower: a slot comes back a TMA latency + one box +
//              its stage + its MMAs after it was freed, so the stages give one stage per that / depth
//              (a pair's scales, loaded a slot use ahead, are not in that round trip: its boxes are).
//   the last stage's MMAs (issue interval per N, or the operand bytes at the shared-memory read rate);
//   the reduction (S > 1): through a workspace (steps 10, 11), on the reducing SM its own partial out,
//              the counter's atomic and S - 1 partials in, at one SM's store rate; in a cluster
//              (steps 12, 13), two cluster barriers and 4 - 4 / S quarters sent to their owners, a bulk
//              copy each over the SM-to-SM path;
//   C: BLOCK_M x BLOCK_N FP16 at the SM's store rate (half-filled sectors cost the model's partial-
//              sector factor; in a cluster each CTA stores 1 / S of it);
//   with multicast, the cluster barrier after the barrier inits.
// A 2-SM pair plan (PlanRules::pair_stages_*): B1 and B2 boxes of half the tile's rows per SM (the
// scales whole), the MMAs' shared-memory reads of 128 + BLOCK_N / 2 rows, the pair's ring depth, and
// the cluster barrier after the barrier inits, one scale copy per operand for two stages (half a
// copy a stage), issued a slot use ahead (out of the ring's round trip); 256-row tiles, two CTAs each.
// Pairs of BLOCK_N 128 may fuse the two products' MMAs (PlanRules::pair_fused_n128): one B box per SM
// a k-tile, one MMA of N = 256 a k-step. With stages of one k-tile
// (PlanRules::pair_one_ktile_stages_n128) a stage is half the bytes, and the ring that deeper.
// The estimate is waves x that, the waves being the clusters that fit at once (resident_ctas). A
// split must fit one wave unless forced (a second wave never paid); the least estimate wins, ties
// keeping the smaller MC, then BLOCK_N 128, then the smaller S.
#include "common/nvfp4_plan.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "common/nvfp4_layout.h"
#include "common/sim/sim_api.h"
#include "common/step.h"

namespace tcg::nvfp4 {

namespace {

constexpr int kBlockM = 128;                   // output rows per tile: the MMA's M
constexpr int kKTileBytesA = kBlockM * 128;    // a k-tile of A: 128 rows x 128 bytes (256 FP4)
constexpr int kKTileBytesSf = 4 * int(kSfAtomBytes);  // a k-tile's scales of one operand: 4 atoms
constexpr int kKStepsPerKTile = 4;             // kind::mxf4nvf4 MMAs per k-tile (K = 64 each)
constexpr int kElementsPerKTile = 256;
// The portable cluster size (CUDA C++ Programming Guide, "Thread Block Clusters").
constexpr int kMaxClusterCtas = 8;
// A cluster's CTAs run in one GPC, so clusters of C CTAs fill a GPC only to a multiple of C. The
// B200 has 10 GPCs for its 148 SMs (Lockwood, docs/references.md#lockwood-b200); how many SMs each
// has is not published. The plan assumes 14 in each (an estimate, the worst whole share): 140,
// 120 or 80 CTAs in clusters of 2, 4 or 8 at once. On a GPU, step 13 asks the driver and says so
// if fewer fit (note_if_clusters_do_not_fit).
constexpr int kSmsPerGpc = 14;

// The model's parameters the estimate reads, in ns and bytes per ns.
struct Costs {
  double copy_ns, tma_bytes_per_ns, tma_latency_ns, receive_share;
  double store_bytes_per_ns, partial_sector, atomic_ns;
  double dsmem_bytes_per_ns, dsmem_copy_ns, cluster_barrier_ns;
  double mma_ns_per_n, mma_operand_bytes_per_ns;
};
Costs model_costs() {
  auto p = [](const char* name) { return tcsim::model_param(name); };
  const double ghz = p("SM clock");
  Costs c;
  c.copy_ns = p("TMA: SM time per box") / ghz;
  c.tma_bytes_per_ns = p("TMA throughput of one SM");  // GB/s = B/ns
  c.tma_latency_ns = p("TMA latency");
  c.receive_share = p("TMA multicast: receiver's share of a box");
  c.store_bytes_per_ns = p("global store rate of one SM") * ghz;
  c.partial_sector = p("store: partial-sector cost");
  c.atomic_ns = p("global atomic round trip") / ghz;
  c.dsmem_bytes_per_ns = p("DSMEM: SM-to-SM bandwidth") * ghz;
  c.dsmem_copy_ns = p("DSMEM: bulk copy latency") / ghz;
  c.cluster_barrier_ns = p("cluster barrier round trip") / ghz;
  c.mma_ns_per_n = p("tcgen05.mma issue interval") / ghz;
  c.mma_operand_bytes_per_ns = p("MMA shared-memory operand read") * ghz;
  return c;
}

struct Estimate {
  const PlanRules& r;
  const Costs& c;
  // One stage of `kts` k-tiles on one SM's TMA unit: B and SFB its own (B1, SFB1, B2, SFB2 for the
  // dual GEMM), A and SFA shared by MC.
  int g = 1;  // the MMA's CTA group: 2 for a pair plan
  int per = r.k_tiles_per_stage, depth = 0;  // k-tiles per stage; the ring's depth if not the rules'
  double sf_copies = 1;  // scale copies per operand a stage: 1, or 1/2 where one copy brings two stages'
  bool sf_ahead = false;  // the scales come a slot use ahead of their stage (pairs): not in its round trip
  bool fused = false;     // one MMA of N = 2 BLOCK_N over B1 and B2 (PlanRules::pair_fused_n128): one B box
  // With `scales` false, the stage's boxes alone.
  double stage_ns(int bn, int kts, int mc, bool scales = true) const {
    const double sf = scales ? 1 : 0, sf_copy = sf * sf_copies * c.copy_ns;  // the scales' share of a copy
    const double own = (fused ? 1 : r.b_operands) * c.copy_ns +
                       r.b_operands * (sf_copy + kts * (bn / g * 128 + sf * kKTileBytesSf) / c.tma_bytes_per_ns);
    const double a = c.copy_ns + sf_copy + kts * (kKTileBytesA + sf * kKTileBytesSf) / c.tma_bytes_per_ns;
    return own + a * (1 + (mc - 1) * c.receive_share) / mc;
  }
  // The MMAs of a full stage, after its copies have landed: per k-step one MMA per B operand, or one of both.
  double drain_ns(int bn) const {
    const int mma_n = fused ? r.b_operands * bn : bn, mmas = fused ? 1 : r.b_operands;
    const double one = std::max(mma_n * c.mma_ns_per_n, (kBlockM + mma_n / g) * 32 / c.mma_operand_bytes_per_ns);
    return per * kKStepsPerKTile * mmas * one;
  }
  double period_ns(int bn, int mc) const {
    const double stage = stage_ns(bn, per, mc);
    const int d = depth ? depth : g == 2 ? (bn == 64 ? r.pair_stages_n64 : r.pair_stages_n128)
                                         : (bn == 64 ? r.stages_n64 : r.stages_n128);
    return std::max(stage, (c.tma_latency_ns + c.copy_ns + stage_ns(bn, per, mc, !sf_ahead) + drain_ns(bn)) / d);
  }
  double stream_ns(int bn, int kts, int mc) const {
    return kts / per * period_ns(bn, mc) + (kts % per ? stage_ns(bn, kts % per, mc) : 0.0);
  }
  double tail_ns(int bn, int s) const {
    if (s == 1) return 0;
    if (r.reduction == Reduction::kWorkspace)
      return c.atomic_ns + s * double(kBlockM * bn * 4 * r.b_operands) / c.store_bytes_per_ns;
    return 2 * c.cluster_barrier_ns +
           (4 - 4 / s) * (c.dsmem_copy_ns + double(32 * bn * 4 * r.b_operands) / c.dsmem_bytes_per_ns);
  }
  double c_store_ns(int bn, int s) const {
    const double all = double(kBlockM * bn * 2) / c.store_bytes_per_ns;
    if (r.c_store == CStore::kRowPerThread) return all * c.partial_sector;
    return r.reduction == Reduction::kCluster ? all / s : all;
  }
  double cta_ns(int bn, int k_tiles, int s, int mc) const {
    const int kts = (k_tiles + s - 1) / s;
    return stream_ns(bn, kts, mc) + drain_ns(bn) + tail_ns(bn, s) + c_store_ns(bn, s) +
           (mc > 1 || g == 2 ? c.cluster_barrier_ns : 0.0);
  }
};

std::string gpu_words(int sms) { return "a GPU of " + std::to_string(sms) + " SM" + (sms == 1 ? "" : "s"); }

}  // namespace

int resident_ctas(int cluster_ctas, int sms) {
  if (cluster_ctas <= 1) return sms;
  const int gpcs = std::max(1, sms / kSmsPerGpc), per_gpc = std::min(sms, kSmsPerGpc);
  return gpcs * (per_gpc / cluster_ctas * cluster_ctas);
}

std::string Plan::line() const {
  std::string s = std::string(cta_group == 2 ? "2-SM pairs (tiles of 256 rows), " : "") + "BLOCK_N " +
                  std::to_string(block_n) + ", S " + std::to_string(splits) + ", MC " + std::to_string(mc) +
                  ", " + (cluster > 1 ? "clusters of " + std::to_string(cluster) : std::string("no clusters")) + ", " +
                  std::to_string(ctas) + " CTAs";
  if (waves > 1) s += " in " + std::to_string(waves) + " waves";
  if (one_ktile_stages) s += ", stages of 1 k-tile";
  return s;
}

Plan plan(const PlanRules& rules, int m, int n, int k, int sms, const Forced& forced) {
  const Costs costs = model_costs();
  const int k_tiles = (k / (kElementsPerKTile / kKStepsPerKTile) + kKStepsPerKTile - 1) / kKStepsPerKTile;
  auto list = [](const int (&v)[kMaxChoices]) {
    std::vector<int> out;
    for (int x : v)
      if (x > 0) out.push_back(x);
      else break;
    return out;
  };
  std::vector<int> split_choices = list(rules.splits);
  if (split_choices.empty())
    for (int s = 1; s <= k_tiles; ++s) split_choices.push_back(s);
  std::vector<int> bns, mcs, ss;
  for (int bn : list(rules.block_n))
    if (!forced.block_n || bn == forced.block_n) bns.push_back(bn);
  for (int mc : list(rules.multicast))
    if (!forced.mc || mc == forced.mc) mcs.push_back(mc);
  for (int s : split_choices)
    if (forced.splits ? s == forced.splits : (!rules.max_chosen_splits || s <= rules.max_chosen_splits)) ss.push_back(s);
  if (forced.splits && ss.empty()) ss.push_back(forced.splits);  // judged (and refused) below

  Plan best;
  bool found = false;
  std::vector<std::string> why_not;  // why each plan the knobs leave open fails, in order
  auto refuse = [&](const std::string& reason) { why_not.push_back(reason); };
  std::sort(mcs.begin(), mcs.end());
  std::sort(bns.begin(), bns.end(), std::greater<int>());
  std::sort(ss.begin(), ss.end());
  std::vector<int> groups;
  for (int g : {1, 2})
    if ((g == 1 || rules.pair_stages_n128) && (!forced.cta_group || forced.cta_group == g)) groups.push_back(g);
  if (groups.empty()) throw UsageError(std::string(rules.knobs) + "CTA_GROUP=2: this step has no 2-SM plans");
  for (int g : groups)
  for (int mc : mcs)
    for (int bn : bns)
      for (int s : ss)
      for (int one_kt : {0, 1}) {
        // Stages of one k-tile: pairs of BLOCK_N 128 only, where the rules have them.
        const bool one_kt_runs = g == 2 && bn == 128 && rules.pair_one_ktile_stages_n128 && rules.k_tiles_per_stage > 1;
        if (forced.stage_k_tiles ? (forced.stage_k_tiles == 1) != bool(one_kt) : one_kt && !one_kt_runs) continue;
        if (one_kt && !one_kt_runs) {
          refuse("STAGE_KTILES 1 runs with pairs of BLOCK_N 128 only");
          continue;
        }
        if (g == 2 && (s != 1 || mc != 1)) {
          if (forced.cta_group) refuse("CTA_GROUP 2 runs with S 1 and MC 1 only");
          continue;
        }
        Estimate est{rules, costs};
        est.g = g;
        if (g == 2) est.sf_copies = 0.5, est.sf_ahead = true;  // a pair's scale copy brings two stages' atoms, a use ahead
        est.fused = g == 2 && bn == 128 && rules.pair_fused_n128;
        if (one_kt) est.per = 1, est.depth = rules.pair_one_ktile_stages_n128;
        Plan p;
        p.block_n = bn, p.splits = s, p.mc = mc, p.k_tiles = k_tiles, p.cta_group = g, p.one_ktile_stages = one_kt;
        p.tiles_n = (n + bn - 1) / bn;
        p.tiles = (m + g * kBlockM - 1) / (g * kBlockM) * p.tiles_n;
        p.cluster = g == 2 ? 2 : rules.reduction == Reduction::kCluster ? s * mc : mc;
        p.ctas = p.tiles * s * g;
        if (s > k_tiles) {
          refuse("S " + std::to_string(s) + " needs " + std::to_string(s) + " k-tiles of 256 along K; K=" +
                 std::to_string(k) + " has " + std::to_string(k_tiles));
          continue;
        }
        if (p.tiles_n % mc) {
          refuse("MC " + std::to_string(mc) + " needs the tiles along N in groups of " + std::to_string(mc) + "; N=" +
                 std::to_string(n) + " has " + std::to_string(p.tiles_n) + " of BLOCK_N " + std::to_string(bn));
          continue;
        }
        if (p.cluster > kMaxClusterCtas) {
          refuse("S " + std::to_string(s) + " x MC " + std::to_string(mc) + " makes clusters of " +
                 std::to_string(p.cluster) + " CTAs, past the portable limit of " + std::to_string(kMaxClusterCtas));
          continue;
        }
        const int resident = resident_ctas(p.cluster, sms);
        if (resident == 0) {
          refuse("clusters of " + std::to_string(p.cluster) + " CTAs do not fit " + gpu_words(sms));
          continue;
        }
        p.waves = (p.ctas + resident - 1) / resident;
        if (s > 1 && p.waves > 1 && !forced.splits) continue;  // a split must fit one wave unless forced
        p.ns = p.waves * est.cta_ns(bn, k_tiles, s, mc);
        if (!found || p.ns < best.ns) best = p, found = true;
      }
  if (!found) {
    std::string knobs;
    if (forced.block_n) knobs += std::string(rules.knobs) + "BLOCK_N=" + std::to_string(forced.block_n) + " ";
    if (forced.splits) knobs += std::string(rules.knobs) + "SPLITS=" + std::to_string(forced.splits) + " ";
    if (forced.mc) knobs += std::string(rules.knobs) + "MULTICAST=" + std::to_string(forced.mc) + " ";
    if (forced.cta_group) knobs += std::string(rules.knobs) + "CTA_GROUP=" + std::to_string(forced.cta_group) + " ";
    if (forced.stage_k_tiles) knobs += std::string(rules.knobs) + "STAGE_KTILES=" + std::to_string(forced.stage_k_tiles) + " ";
    if (!knobs.empty()) knobs.back() = ':';
    throw UsageError(knobs + " " + why_not.front());  // the first plan the knobs leave open, and why it fails
  }
  return best;
}

std::string left_out(const PlanRules& rules, const Plan& p) {
  std::string out;
  if (rules.teaches_split && p.splits == 1) out = "S 1: K is not split, so no partials are reduced";
  if (rules.teaches_multicast && p.mc == 1)
    out += std::string(out.empty() ? "MC 1" : ", MC 1") + ": no tile shares A, so nothing is multicast";
  return out;
}

}  // namespace tcg::nvfp4
