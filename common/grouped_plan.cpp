// grouped_plan.cpp — the plan of the grouped NVFP4 GEMM of step 16 (grouped_plan.h). Every (swap,
// BLOCK_N) the kernel runs and the knobs leave open is costed in ns of the B200 timing model with
// its own parameters (common/sim/timing_params.cpp):
//   a tile      streams K / 512 stages through its SM's TMA unit, 4 copies each (X's box of two
//               k-tiles, Y's box, the two scale blocks) at the model's per-box time plus the bytes
//               at one SM's TMA rate (with multicast, Y's two are issued by one CTA of MC for all
//               of them, and land in the others at the model's receiver's share of a box), or the ring's pace when that is slower (a slot comes back a TMA
//               latency + a box + its stage + its MMAs after it was freed); then its MMAs and its
//               C (128 x BLOCK_N FP16 at the SM's store rate) overlap the next tile's stream;
//   a CTA       runs ceil(tiles / CTAs) tiles, one after the other (the static walk);
//   the chip    reads every group's X and Y bytes once from HBM at least, once more for each
//               further tile along the other operand that L2 does not keep; the estimate is the
//               larger of the CTA's time and the bytes at the HBM rate.
// Ties keep the swap, then the wider BLOCK_N. MC (forced only, see below) must divide every group's
// tiles along X (the walk gives a cluster MC consecutive tiles of one row of Y), and clusters of MC
// must fit the GPU (nvfp4::resident_ctas, as steps 12 and 13 assume).
#include "common/grouped_plan.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/nvfp4_layout.h"
#include "common/nvfp4_plan.h"
#include "common/sim/sim_api.h"
#include "common/step.h"

namespace tcg::grouped {

std::string Plan::line() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s, BLOCK_N %d (%s), MC %d, %d tiles over %d persistent CTAs%s (at most %d each), "
                "%.0f%% of the MMA rows x columns hold rows of C",
                swap ? "A and B swapped (B_g on the MMA's 128 rows)" : "A_g on the MMA's 128 rows", block_n,
                swap ? "tokens" : "columns of C", mc, tiles, ctas,
                mc > 1 ? (" in clusters of " + std::to_string(mc)).c_str() : "", max_tiles_per_cta, 100 * rows_used);
  return buf;
}

Plan plan(const int64_t* m, int count, int n, int k, int sms, const Forced& forced) {
  auto p = [](const char* name) { return tcsim::model_param(name); };
  const double ghz = p("SM clock");
  const double copy_ns = p("TMA: SM time per box") / ghz, tma_rate = p("TMA throughput of one SM");
  const double tma_latency = p("TMA latency"), hbm_rate = p("HBM bandwidth (chip)");
  const double store_rate = p("global store rate of one SM") * ghz, l2_bytes = p("L2 capacity") * 1e6;
  const double mma_ns_per_n = p("tcgen05.mma issue interval") / ghz;
  const double share = p("TMA multicast: receiver's share of a box");
  const double cluster_barrier_ns = p("cluster barrier round trip") / ghz;
  const int k_tiles = (k + kKTileElems - 1) / kKTileElems;
  const int stages_per_tile = (k_tiles + kKTilesPerStage - 1) / kKTilesPerStage;

  Plan best;
  bool found = false;
  std::string why_not = "TCG_STEP16_BLOCK_N / TCG_STEP16_SWAP_AB / TCG_STEP16_MULTICAST: no plan left";
  for (int swap = 1; swap >= 0; --swap) {
    if (forced.swap >= 0 && swap != forced.swap) continue;
    for (int bi = 2; bi >= 0; --bi)
    for (int mc : {1, 2, 4}) {
      const int bn = kBlockNs[bi];
      if (forced.block_n && bn != forced.block_n) continue;
      // MC > 1 only when forced: the estimate below saves a share of Y's copies per stage, but in
      // the timing model a cluster's CTAs then free each slot together and the ring's latency binds
      // (docs/16_nvfp4_grouped_gemm.md, "Multicast"): a tested lever, not the plan's choice.
      if (forced.mc ? mc != forced.mc : mc != 1) continue;
      Plan q;
      q.block_n = bn, q.swap = swap == 1, q.mc = mc;
      bool divides = true;
      double used = 0, covered = 0, hbm_bytes = 0;
      for (int g = 0; g < count; ++g) {
        const Tiles t = tiles_of(m[g], n, bn, q.swap);
        if (m[g] == 0) continue;
        if (t.x % mc) divides = false;
        q.tiles += t.x * t.y;
        used += double(m[g]) * n;
        covered += double(t.x) * kBlockRows * t.y * bn;
        // X's bytes are read by each of the t.y tiles along Y, Y's by each of the t.x along X: once
        // from HBM, again for the re-reads a group's working set too large for L2 would miss.
        const double xb = double(t.x) * kBlockRows * k / 2, yb = double(t.y) * bn * k / 2;
        const bool fits = xb + yb <= l2_bytes / 2;
        hbm_bytes += fits ? xb + yb : xb * t.y + yb * t.x;
      }
      const int resident = nvfp4::resident_ctas(mc, sms);
      if (!divides || resident < mc) {
        if (forced.mc == mc && why_not.rfind("TCG_STEP16_MULTICAST=", 0) != 0)  // the first reason: the swapped plan's
          why_not = "TCG_STEP16_MULTICAST=" + std::to_string(mc) +
                    (divides ? ": clusters of " + std::to_string(mc) + " do not fit a GPU of " + std::to_string(sms) + " SMs"
                             : ": MC must divide every group's tiles along X (" + std::string(q.swap ? "N" : "M_g") +
                                   " / 128, rounded up)");
        continue;
      }
      q.rows_used = covered > 0 ? used / covered : 1;
      q.ctas = std::max(mc, std::min(q.tiles, resident / mc * mc));
      q.max_tiles_per_cta = (q.tiles + q.ctas - 1) / q.ctas;
      const double x_part = 2 * copy_ns + double(kKTilesPerStage) * (kBlockRows * 128 + 4 * 512) / tma_rate;
      const double y_part = 2 * copy_ns + double(kKTilesPerStage) * (bn * 128 + 4 * 512) / tma_rate;
      const double stage = x_part + y_part * (1 + (mc - 1) * share) / mc;
      const double drain = kKTilesPerStage * 4 * bn * mma_ns_per_n;
      const double period = std::max(stage, (tma_latency + copy_ns + stage + drain) / stages_for(bn));
      const double tile = stages_per_tile * period;
      const double c_store = double(kBlockRows) * bn * 2 / store_rate;
      const double cta = tma_latency + q.max_tiles_per_cta * tile + drain + c_store + (mc > 1 ? 2 * cluster_barrier_ns : 0);
      q.ns = std::max(cta, hbm_bytes / hbm_rate);
      if (!found || q.ns < best.ns) best = q, found = true;
    }
  }
  if (!found) throw UsageError(why_not);
  return best;
}

}  // namespace tcg::grouped
