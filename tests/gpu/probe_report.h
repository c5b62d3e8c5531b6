// probe_report.h — the hardware checks' results file: one row per probe case in
// results/gpu_check_<gpu>.csv (or $TCG_GPU_CHECK_CSV), each row naming the GPU, compute
// capability, driver, CUDA runtime, date and git revision, appended under the header if the file
// is new. Host code of the GPU build of tests/gpu/*_check.cu (nvcc), linked with common/ (harness).
#pragma once
#include <cuda_runtime_api.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "../../common/harness/gpu.h"
#include "../../common/harness/internal.h"

#ifndef TCG_GIT_REV  // the Makefile passes the revision (git rev-parse, "-dirty" if modified)
#define TCG_GIT_REV "unknown"
#endif
#ifndef TCG_GPU_CODE  // the Makefile passes the -gencode code= targets, e.g. "sm_90 sm_100f"
#define TCG_GPU_CODE ""
#endif

namespace probe {

// "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA B300 SXM6 AC" -> "b300": the harness's rule
// (common/harness/capability.cpp), which plots/bench.sh's results/<gpu>.csv follows too.
using tcg::harness::gpu_slug;

// What the driver loads of this program's code for `kernel` on the current device, e.g. "sm_100f
// code"; "" if none of it loads there (the program then says so instead of failing a launch).
template <class Kernel>
std::string loaded_code_of(Kernel kernel) {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return tcg::harness::loaded_code(TCG_GPU_CODE, attr.binaryVersion);
}

class Report {
 public:
  explicit Report(const cudaDeviceProp& prop)
      : gpu_(prop.name), cc_(std::to_string(prop.major) + "." + std::to_string(prop.minor)) {
    driver_ = tcg::harness::driver_description();
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    cuda_ = tcg::harness::format_version(rt);
    date_ = tcg::harness::utc_iso8601(std::time(nullptr));
    const char* env = std::getenv("TCG_GPU_CHECK_CSV");
    path_ = env && *env ? env : "results/gpu_check_" + gpu_slug(gpu_) + ".csv";
  }

  // result: identical | rounding | MISMATCH | finding | skipped | error
  void add(const std::string& family, const std::string& instruction, const std::string& config,
           const std::string& result, const std::string& detail) {
    using tcg::harness::csv_field;
    rows_ += csv_field(gpu_) + "," + cc_ + "," + csv_field(driver_) + "," + cuda_ + "," + csv_field(family) + "," +
             csv_field(instruction) + "," + csv_field(config) + "," + result + "," + csv_field(detail) + "," + date_ +
             "," + TCG_GIT_REV + "\n";
  }

  // Appends the rows; false (with a message) if the file cannot be written.
  bool write() const {
    FILE* f = std::fopen(path_.c_str(), "a+");
    if (!f) {
      std::fprintf(stderr, "gpu-check: cannot write %s\n", path_.c_str());
      return false;
    }
    std::fseek(f, 0, SEEK_END);
    if (std::ftell(f) == 0)
      std::fputs("gpu,compute_capability,driver,cuda_runtime,family,instruction,configuration,result,detail,date,"
                 "git_rev\n", f);
    std::fputs(rows_.c_str(), f);
    const bool ok = std::fclose(f) == 0;
    std::printf("results appended to %s\n", path_.c_str());
    return ok;
  }

 private:
  std::string gpu_, cc_, driver_, cuda_, date_, path_, rows_;
};

}  // namespace probe
