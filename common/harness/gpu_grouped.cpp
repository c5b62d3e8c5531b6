// gpu_grouped.cpp — the GPU run of a grouped NVFP4 GEMM (step 16): not written yet. A capable
// GPU is refused with exit code 3 and the way to the emulator and the timing model.
#include <cstdio>

#include "common/harness/gpu.h"

namespace tcg::harness {

int run_grouped_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu) {
  (void)o, (void)launch;
  std::fprintf(stderr, "%s: the GPU run of the grouped GEMM (upload per group, check, timing) is not written yet; "
               "found %s: run with --sim or --predict\n", program_name(spec).c_str(), gpu.name.c_str());
  return 3;
}

}  // namespace tcg::harness
