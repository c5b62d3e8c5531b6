// predict_range.cpp — the range of a --predict (docs/timing_model.md, "Ranges"): the same launch
// run again in the timing model with every parameter that is an estimate or carried from the H100
// at the end of its range that makes kernels faster, then at the slower end (tcsim::set_model_bound;
// the ranges and their reasons are timing_params.cpp's kRanges). Printed on its own line after the
// point, "range:    B200 LO - HI TFLOPS (...)", so scripts read the point as before.
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

}  // namespace tcg::harness
