// run.h — what the two drivers of a step share: the GPU survey (gpu.cpp), the two runs
// (emulator_run.cpp, gpu_run.cpp) that run_step.cpp picks between, and the report lines and CSV
// row both print (output.cpp). Unlike internal.h, these pieces talk to CUDA or print; they are
// not unit-tested on their own but through the step binaries (tests/steps/run_steps.sh).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "common/step.h"

namespace tcsim {
struct Bounds;  // common/sim/sim_api.h
}

namespace tcg::harness {

// ---------------------------------------------------------------------------------------------
// GPUs (gpu.cpp; run_on_gpu in gpu_run.cpp)
// ---------------------------------------------------------------------------------------------

// GpuInfo, GpuSurvey and the capability rule are pure (internal.h, capability.cpp).

// Never throws: on a machine without a driver or GPU any failure just means "no usable GPU".
GpuSurvey survey_gpus(Arch arch);
// Asks the driver which code of the step's GPU build it loads on device `device` (made current):
// loaded_code()'s description, or "" if none loads there (`why` then says what the driver said).
std::string code_on_device(const GpuCode& code, int device, std::string* why);

// Checked launch, verification against cuBLAS, timing against cuBLAS, report, CSV row.
// Returns the exit code.
int run_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu);

// The step in the emulator: inputs, launch, CPU reference, verification, --predict, --trace on
// the model's clock (emulator_run.cpp). Returns the exit code.
int run_in_emulator(const StepSpec& spec, const Options& opts, LaunchFn launch);

// The range of a prediction (predict_range.cpp): `rerun` emulates the launch again; it runs at
// the fast and at the slow end of every parameter's range; prints the "range:" line.
struct PredictionRange {
  double fast_ns = 0, slow_ns = 0, low_tflops = 0, high_tflops = 0;
};
PredictionRange predict_range(double flops, const std::function<void()>& rerun);
// --predict-noise N: the point again with equal-time events in N seeded orders; prints the spread.
void predict_noise(int seeds, double point_ns, const std::function<void()>& rerun);

// ---------------------------------------------------------------------------------------------
// Report, for both drivers (output.cpp)
// ---------------------------------------------------------------------------------------------

// The step's plan for this problem on `sms` SMs (StepSpec::plan; empty if it has none). Throws
// UsageError for a knob the problem or GPU cannot honour: ask before printing anything.
StepPlan plan_of(const StepSpec& spec, const Options& o, int sms);
void print_problem(const StepSpec& spec, const Options& o, const std::string& device, const StepPlan& plan = {});
void print_verify(const VerifyResult* vr);  // null: --no-check
// The row fields that do not depend on where the step ran.
CsvRecord base_record(const StepSpec& spec, const Options& o, const VerifyResult* vr);
// Appends the row if --csv was given and turns the outcome into the exit code.
int finish(const StepSpec& spec, const Options& o, const VerifyResult* vr, const CsvRecord& row);

// --predict: what bounds the emulated launch just run on the timing model's clock, from its own
// accounting (predict_bounds.cpp): CTAs per SM, engines' busy shares, waits per barrier, the pace.
// `plan`: the step's plan line (StepSpec::plan), which the first line names; "" if none.
void print_predict_bounds(const tcsim::Bounds& b, const std::string& plan = "");

}  // namespace tcg::harness
