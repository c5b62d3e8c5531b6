// run.h — what the two drivers of a step share: the GPU survey (gpu.cpp), the two runs
// (emulator_run.cpp, gpu_run.cpp) that run_step.cpp picks between, and the report lines and CSV
// row both print (output.cpp). Unlike internal.h, these pieces talk to CUDA or print; they are
// not unit-tested on their own but through the step binaries (tests/steps/run_steps.sh).
#pragma once
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "common/step.h"

namespace tcg::harness {

// ---------------------------------------------------------------------------------------------
// GPUs (gpu.cpp; run_on_gpu in gpu_run.cpp)
// ---------------------------------------------------------------------------------------------

struct GpuInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0, sm_count = 0;
};

struct GpuSurvey {
  std::vector<GpuInfo> devices;
  std::string error;  // why there are no devices, if the runtime said so
  int capable = -1;   // index into devices of the first one that can run the step
};

// Never throws: on a machine without a driver or GPU any failure just means "no usable GPU".
GpuSurvey survey_gpus(Arch arch);
std::string describe_found(const GpuSurvey& s);  // "NVIDIA B200 (cc 10.0), ..." or why none
// "needs <what>" and "no <what> here" phrasings of the step's GPU requirement.
std::string need_long(Arch arch);
std::string need_short(Arch arch);

// Checked launch, verification against cuBLAS, timing against cuBLAS, report, CSV row.
// Returns the exit code.
int run_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu);

// The step in the emulator: inputs, launch, CPU reference, verification, --predict, --trace on
// the model's clock (emulator_run.cpp). Returns the exit code.
int run_in_emulator(const StepSpec& spec, const Options& opts, LaunchFn launch);

// ---------------------------------------------------------------------------------------------
// Report, for both drivers (output.cpp)
// ---------------------------------------------------------------------------------------------

void print_problem(const StepSpec& spec, const Options& o, const std::string& device);
void print_verify(const VerifyResult* vr);  // null: --no-check
// The row fields that do not depend on where the step ran.
CsvRecord base_record(const StepSpec& spec, const Options& o, const VerifyResult* vr);
// Appends the row if --csv was given and turns the outcome into the exit code.
int finish(const StepSpec& spec, const Options& o, const VerifyResult* vr, const CsvRecord& row);

// --predict: what bounds the emulated launch just run on the timing model's clock, from its own
// accounting (predict_bounds.cpp): CTAs per SM, engines' busy shares, waits per barrier, the pace.
void print_predict_bounds();

}  // namespace tcg::harness
