// output.cpp — the report lines and the CSV row that both drivers of a step (the emulator run,
// emulator_run.cpp, and the GPU run, gpu_run.cpp) print and write: the problem line, the
// verification line, the fields of a row that do not depend on where the step ran, and the exit
// code of a finished run. Calls only the pure pieces below it (command line, verification, CSV).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>

#include <unistd.h>

#include "common/cuda_check.h"
#include "common/harness/run.h"
#include "common/sim/sim_api.h"

// The Makefile passes the commit: -DTCG_GIT_REV="\"abc123\"".
#ifndef TCG_GIT_REV
#define TCG_GIT_REV "unknown"
#endif

namespace tcg::harness {

// ---------------------------------------------------------------------------------------------
// Report, for both drivers
// ---------------------------------------------------------------------------------------------

StepPlan plan_of(const StepSpec& spec, const Options& o, int sms) {
  if (spec.grouped_plan != nullptr)
    return spec.grouped_plan(o.groups.m.data(), int(o.groups.m.size()), int(o.n), int(o.k), sms);
  return spec.plan != nullptr ? spec.plan(int(o.m), int(o.n), int(o.k), sms) : StepPlan{};
}

void print_problem(const StepSpec& spec, const Options& o, const std::string& device, const StepPlan& plan) {
  const bool fp4 = is_nvfp4(spec.operands);
  std::printf("%s: %s\n", program_name(spec).c_str(), spec.title);
  std::printf("device:   %s\n", device.c_str());
  std::printf("shape:    M=%lld N=%lld K=%lld (%s, %s, FP32 accumulation)\n",
              static_cast<long long>(o.m), static_cast<long long>(o.n),
              static_cast<long long>(o.k),
              spec.operands == Operands::kNVFP4DualSilu  ? "C = silu(A * B1^T) * (A * B2^T)"
              : spec.operands == Operands::kNVFP4Grouped ? "C_g = A_g * B_g^T, M = the sum of the groups' M"
                                                         : "C = A * B^T",
              fp4 ? "NVFP4 in (E2M1, a UE4M3 scale per 16 along K), FP16 out"
                  : "BF16 in and out");
  if (spec.operands == Operands::kNVFP4Grouped) {
    std::string list;
    for (size_t g = 0; g < o.groups.m.size(); ++g) list += (g ? "," : "") + std::to_string(o.groups.m[g]);
    std::printf("groups:   %zu%s%s: M = %s (sum %lld), each with its own A_g, B_g, scales and C_g\n",
                o.groups.m.size(), o.groups.name.empty() ? "" : ", preset ", o.groups.name.c_str(), list.c_str(),
                static_cast<long long>(o.m));
    if (o.groups.speed_of_light_us > 0)
      std::printf("bound:    the competition's stated speed of light for this case: %.3f us on a B200\n",
                  o.groups.speed_of_light_us);
  }
  if (o.predict)  // emulator_run.cpp: the arithmetic is skipped and copies move no bytes
    std::printf("inputs:   none generated: timing only (%s hold zeros; the model's costs do not depend on the values)\n",
                fp4 ? "the codes and scales" : "A and B");
  else if (fp4 && o.inputs == Inputs::kCompetition)
    std::printf(
        "inputs:   competition: bytes uniform in 0..254 masked with 0xBB (codes 0, +-0.5, +-1, +-1.5), scales "
        "UE4M3_RN(uniform [0,1)), as the NVFP4 competition's reference.py, seed %llu\n",
        static_cast<unsigned long long>(o.seed));
  else if (fp4 && o.inputs == Inputs::kInteger)
    std::printf(
        "inputs:   integer: values 0, +-0.5, +-1, +-2 times block scales 0.5, 1, 2 (exact sums), "
        "seed %llu\n",
        static_cast<unsigned long long>(o.seed));
  else if (fp4 && o.inputs == Inputs::kWide)
    std::printf(
        "inputs:   wide, uniform in [-1, 1] times 2^-6..2^3 per 16-element block, quantized to NVFP4 "
        "(FP32 sums round), seed %llu\n",
        static_cast<unsigned long long>(o.seed));
  else if (fp4)
    std::printf(
        "inputs:   random, uniform in [-1, 1] quantized to NVFP4 (scale = UE4M3_RN(amax/6), no "
        "global scale), seed %llu\n",
        static_cast<unsigned long long>(o.seed));
  else if (o.inputs == Inputs::kInteger)
    std::printf("inputs:   integer, uniform in [-2, 2], seed %llu\n",
                static_cast<unsigned long long>(o.seed));
  else if (o.inputs == Inputs::kWide)
    std::printf("inputs:   wide, uniform in [-1, 1] times 2^-8..2^7, rounded to BF16 (FP32 sums round), seed %llu\n",
                static_cast<unsigned long long>(o.seed));
  else
    std::printf("inputs:   random, uniform in [-1, 1] rounded to BF16, seed %llu\n",
                static_cast<unsigned long long>(o.seed));
  if (spec.epilogue != nullptr) std::printf("epilogue: %s\n", spec.epilogue(o.m, o.n, o.k));
  if (!plan.line.empty()) std::printf("plan:     %s\n", plan.line.c_str());
}

// The row fields that do not depend on where the step ran.
CsvRecord base_record(const StepSpec& spec, const Options& o, const VerifyResult* vr) {
  CsvRecord r;
  r.step = std::to_string(spec.number);
  r.step_name = spec.name;
  int runtime = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  r.cuda_runtime = format_version(runtime);
  r.m = std::to_string(o.m);
  r.n = std::to_string(o.n);
  r.k = std::to_string(o.k);
  // The CSV's dtype column names the operand format; an NVFP4 step's output is always FP16.
  r.dtype = is_nvfp4(spec.operands) ? "nvfp4" : "bf16";
  r.inputs = inputs_name(o.inputs);
  if (vr != nullptr) {
    r.max_abs_err = strf("%.6g", vr->max_abs_err);
    r.verified = vr->passed() ? "yes" : "no";
  } else {
    r.verified = "skipped";
  }
  r.date = utc_iso8601(std::time(nullptr));
  r.git_rev = TCG_GIT_REV;
  return r;
}

// Appends the row if --csv was given and turns the outcome into the exit code.
int finish(const StepSpec& spec, const Options& o, const VerifyResult* vr, const CsvRecord& row) {
  bool csv_ok = true;
  if (!o.csv.empty()) {
    std::fflush(stdout);  // the report first, should the CSV file be stdout itself
    const std::string err = csv_append(o.csv, row);
    if (!err.empty()) {
      std::fprintf(stderr, "%s: %s\n", program_name(spec).c_str(), err.c_str());
      csv_ok = false;
    }
  }
  if (vr != nullptr && !vr->passed()) return 1;
  return csv_ok ? 0 : 2;
}

void print_verify(const VerifyResult* vr) {
  if (vr == nullptr)
    std::printf("check:    skipped (--no-check)\n");
  else
    std::printf("check:    %s\n", format_verify(*vr).c_str());
}

}  // namespace tcg::harness
