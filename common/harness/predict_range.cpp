// predict_range.cpp — the range of a --predict (docs/timing_model.md, "Ranges"): the same launch
// run again in the timing model with every parameter that is an estimate or carried from the H100
// at the end of its range that makes kernels faster, then at the slower end (tcsim::set_model_bound;
// the ranges and their reasons are timing_params.cpp's kRanges). Printed on its own line after the
// point, "range:    B200 LO - HI TFLOPS (...)", so scripts read the point as before.
#include <algorithm>
#include <cstdio>
#include <functional>

#include "common/harness/run.h"
#include "common/sim/sim_api.h"

namespace tcg::harness {

PredictionRange predict_range(double flops, const std::function<void()>& rerun) {
  PredictionRange r;
  const int saved = tcsim::model_bound();
  for (int bound : {-1, +1}) {
    tcsim::set_model_bound(bound);
    rerun();
    const double ns = tcsim::last_stats().model_ns;
    (bound < 0 ? r.fast_ns : r.slow_ns) = ns;
  }
  tcsim::set_model_bound(saved);
  r.high_tflops = r.fast_ns > 0 ? flops / r.fast_ns / 1e3 : 0.0;
  r.low_tflops = r.slow_ns > 0 ? flops / r.slow_ns / 1e3 : 0.0;
  std::printf("range:    B200 %.1f - %.1f TFLOPS (%.2f - %.2f us; every estimated or H100-carried parameter at its "
              "slow / fast end, docs/timing_model.md \"Ranges\")\n",
              r.low_tflops, r.high_tflops, r.slow_ns / 1e3, r.fast_ns / 1e3);
  return r;
}

// The model's own noise: which of two events at the same model time goes first is issue order, an
// accident of how the kernel's code is laid out (an instruction the model charges nothing can
// move it). Rerun under N seeded orders (tcsim::Options::tie_seed) and print the spread of the
// point; a lever whose gain is within it is a tie (docs/timing_model.md, "Noise").
void predict_noise(int seeds, double point_ns, const std::function<void()>& rerun) {
  tcsim::Options so = tcsim::options();
  const uint64_t saved = so.tie_seed;
  double lo = point_ns, hi = point_ns;
  for (int s = 1; s <= seeds; ++s) {
    so.tie_seed = uint64_t(s);
    tcsim::set_options(so);
    rerun();
    lo = std::min(lo, tcsim::last_stats().model_ns);
    hi = std::max(hi, tcsim::last_stats().model_ns);
  }
  so.tie_seed = saved;
  tcsim::set_options(so);
  std::printf("noise:    %.2f - %.2f us (spread %.2f us, %.1f%%) over issue order and %d seeded orders of equal-time "
              "events; a difference within it is a tie (docs/timing_model.md \"Noise\")\n",
              lo / 1e3, hi / 1e3, (hi - lo) / 1e3, point_ns > 0 ? 100.0 * (hi - lo) / point_ns : 0.0, seeds);
}

}  // namespace tcg::harness
