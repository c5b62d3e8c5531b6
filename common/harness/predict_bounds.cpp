// predict_bounds.cpp — the "what bounds it" lines of --predict: from the timing model's own
// accounting of the launch (tcsim::last_bounds(), common/sim/bounds.cpp), how many CTAs shared an
// SM and why, how busy each engine was, how long the warps waited on each barrier family, and
// which of these sets the pace. It reports what the model did; it is no second model.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/harness/run.h"
#include "common/sim/sim_api.h"

namespace tcg::harness {

namespace {

std::string pct(double x) { return strf("%.0f%%", 100.0 * x); }

// What a barrier family's wait means for the warp that waits, in the steps' vocabulary.
std::string wait_meaning(const std::string& barrier) {
  if (barrier == "tma_full_bar") return "for a stage's bytes";
  if (barrier == "mma_done_bar") return "for a free stage";
  if (barrier == "mainloop_done_bar") return "for the last MMA";
  if (barrier == "tmem_full_bar") return "for a full accumulator";
  if (barrier == "tmem_empty_bar") return "for an empty accumulator";
  return "";
}

}  // namespace

void print_predict_bounds(const tcsim::Bounds& b, const std::string& plan) {
  if (b.kernel_ns <= 0 || b.sms_used == 0) return;
  std::printf("bounds:   %s%d CTA%s per SM (%s allows %d: %.1f KiB of shared memory per CTA, %.0f KiB per SM); "
              "%d SMs ran CTAs\n",
              plan.empty() ? "" : ("plan " + plan + ": ").c_str(), b.ctas_per_sm, b.ctas_per_sm == 1 ? "" : "s",
              b.limited_by.c_str(), b.ctas_per_sm_limit,
              b.smem_per_cta / 1024.0, b.smem_per_sm / 1024.0, b.sms_used);
  const double empty = std::max(0.0, 1.0 - b.mainloop - b.no_mainloop);
  std::printf("          an SM had a CTA in its mainloop %s of the kernel, held CTAs none of which was %s, held no CTA "
              "%s; in the mainloop the tensor core was busy %s of the time, the TMA unit %s, the store path %s\n",
              pct(b.mainloop).c_str(), pct(b.no_mainloop).c_str(), pct(empty).c_str(),
              pct(b.tensor_core_in_mainloop).c_str(), pct(b.tma_unit_in_mainloop).c_str(),
              pct(b.store_path_in_mainloop).c_str());
  std::printf("          busy, mean over those SMs (busiest): tensor core %s (%s), TMA unit %s (%s), store path %s (%s); "
              "chip: L2 reads %s, L2 requests %s, HBM %s, L2 writes %s\n",
              pct(b.tensor_core).c_str(), pct(b.tensor_core_max).c_str(), pct(b.tma_unit).c_str(),
              pct(b.tma_unit_max).c_str(), pct(b.store_path).c_str(), pct(b.store_path_max).c_str(),
              pct(b.l2_read).c_str(), pct(b.l2_requests).c_str(), pct(b.hbm).c_str(), pct(b.l2_write).c_str());
  std::string waits;
  int shown = 0;
  for (const tcsim::Bounds::Wait& w : b.waits) {
    if (w.share < 0.005 || shown == 5) continue;
    const std::string meaning = wait_meaning(w.barrier);
    const int per_cta = (w.warps + std::max(1, w.ctas) - 1) / std::max(1, w.ctas);
    waits += strf("%s%s %s %s on %s%s", waits.empty() ? "" : "; ", per_cta > 1 ? strf("%d", per_cta).c_str() : "the",
                  (w.role + (per_cta > 1 ? " warps" : " warp")).c_str(), pct(w.share).c_str(), w.barrier.c_str(),
                  meaning.empty() ? "" : (" (" + meaning + ")").c_str());
    ++shown;
  }
  std::printf("waits:    time blocked per warp of a CTA, share of the kernel: %s\n", waits.empty() ? "none" : waits.c_str());

  // The pace: the busiest engine if it is nearly saturated; otherwise the ring (the MMA warp
  // waits for data while no engine is full: latency not covered), else the largest wait.
  struct Engine {
    const char* name;
    double share;
  };
  const Engine engines[] = {{"the tensor core", b.tensor_core}, {"the SM's TMA unit", b.tma_unit},
                            {"the SM's store path", b.store_path}, {"the L2 read bandwidth", b.l2_read},
                            {"the L2 request rate", b.l2_requests}, {"HBM", b.hbm}, {"the L2 write path", b.l2_write}};
  const Engine* top = &engines[0];
  for (const Engine& e : engines)
    if (e.share > top->share) top = &e;
  const tcsim::Bounds::Wait* data_wait = nullptr;  // the MMA issuer waiting for bytes
  for (const tcsim::Bounds::Wait& w : b.waits)
    if (w.barrier == "tma_full_bar" && (!data_wait || w.share > data_wait->share)) data_wait = &w;
  std::string pace;
  const double ring = data_wait ? data_wait->share : 0.0;
  const Engine in_main[] = {{"the tensor core", b.tensor_core_in_mainloop}, {"the SM's TMA unit", b.tma_unit_in_mainloop},
                            {"the SM's store path", b.store_path_in_mainloop}};
  const Engine* top_main = &in_main[0];
  for (const Engine& e : in_main)
    if (e.share > top_main->share) top_main = &e;
  const double idle = 1.0 - b.mainloop;  // no CTA of the SM in its mainloop, or no CTA at all
  const std::string outside =
      idle < 0.05 ? std::string()
      : strf("; the tensor core has nothing to do for %s of the kernel, when an SM's CTAs are all outside their "
             "mainloop (%s: setup, epilogue, teardown) or it holds none (%s: between CTAs, the last wave's tail)%s",
             pct(idle).c_str(), pct(b.no_mainloop).c_str(), pct(std::max(0.0, idle - b.no_mainloop)).c_str(),
             b.ctas_per_sm == 1 && b.ctas > b.sms_used
                 ? "; with one CTA per SM nothing overlaps a CTA's epilogue and start, and each wave holds only as "
                   "many CTAs as SMs (two CTAs per SM, or a persistent kernel, would fill both)"
                 : "");
  if (top->share >= 0.75)
    pace = strf("%s (busy %s of the kernel on the mean SM)", top->name, pct(top->share).c_str());
  else if (top_main->share >= 0.85)
    pace = strf("the mainloop is bound by %s (busy %s of the mainloop's time)%s", top_main->name,
                pct(top_main->share).c_str(), outside.c_str());
  else if (ring >= 0.15)
    pace = strf("the ring's latency: in the mainloop no engine is busier than %s (%s), yet the %s warp waits %s of "
                "the kernel for a stage's bytes: the stages in flight do not cover a TMA round trip (more stages, "
                "or more CTAs per SM, hide it)%s",
                pct(top_main->share).c_str(), top_main->name, data_wait->role.c_str(), pct(data_wait->share).c_str(),
                outside.c_str());
  else if (!b.waits.empty() && b.waits.front().share >= 0.15)
    pace = strf("no engine is busier than %s (%s); the largest wait is the %s warps' on %s (%s)", pct(top->share).c_str(),
                top->name, b.waits.front().role.c_str(), b.waits.front().barrier.c_str(),
                pct(b.waits.front().share).c_str());
  else
    pace = strf("no engine is busier than %s (%s), and no wait dominates: launch, setup and tail", pct(top->share).c_str(),
                top->name);
  std::printf("pace:     %s\n", pace.c_str());
}

}  // namespace tcg::harness
