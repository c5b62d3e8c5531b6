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

namespace probe {

// "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA B200" -> "b200", "NVIDIA GeForce RTX 4090" ->
// "rtx_4090": as plots/bench.sh's gpu_slug names results/<gpu>.csv — lower-case words without
// the vendor/brand words, each cut at its first '-', joined by '_' up to the first with a digit.
inline std::string gpu_slug(const std::string& name) {
  std::string slug, word;
  for (char ch : name + " ") {
    if (!std::isspace(static_cast<unsigned char>(ch))) {
      word += char(std::tolower(static_cast<unsigned char>(ch)));
      continue;
    }
    if (word == "nvidia" || word == "geforce" || word == "tesla" || word == "quadro") word.clear();
    std::string w;
    for (char c : word.substr(0, word.find('-')))
      if (std::isalnum(static_cast<unsigned char>(c))) w += c;
    word.clear();
    if (w.empty()) continue;
    slug += (slug.empty() ? "" : "_") + w;
    if (w.find_first_of("0123456789") != std::string::npos) break;  // the model number: done
  }
  return slug.empty() ? "gpu" : slug;
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
