// run_step.cpp — what a step's main() runs (tcg::run_step, common/step.h): parse the command
// line, refuse an unusable CSV file early, pick the GPU (gpu_run.cpp) or the emulator
// (emulator_run.cpp) and run the step there, turning every failure into a message and an exit
// code. The top of the harness: nothing calls back into this file.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

#include <sys/stat.h>
#include <unistd.h>

#include "common/cuda_check.h"
#include "common/harness/run.h"
#include "common/sim/sim_api.h"


namespace tcg {

UsageError::UsageError(const std::string& what) : std::invalid_argument(what) {}
UsageError::~UsageError() = default;

int env_knob(const char* name, std::initializer_list<int> allowed, int unset) {
  const char* v = std::getenv(name);
  if (v == nullptr) return unset;
  std::string list;
  size_t i = 0;
  for (int a : allowed) {
    if (std::to_string(a) == v) return a;
    list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::to_string(a);
    ++i;
  }
  throw UsageError(std::string(name) + " must be " + list + ", got '" + v + "'");
}

int env_knob_range(const char* name, int lo, int hi, int unset) {
  const char* v = std::getenv(name);
  if (v == nullptr) return unset;
  for (int x = lo; x <= hi; ++x)
    if (std::to_string(x) == v) return x;
  throw UsageError(std::string(name) + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                   ", got '" + v + "'");
}

int run_step(const StepSpec& spec, LaunchFn gpu_launch, LaunchFn sim_launch, int argc,
             char** argv, const GpuCode* gpu_code) {
  using namespace tcg::harness;
  const std::string prog = program_name(spec);
  try {
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + (argc > 0 ? argc : 0));
    const ParseResult parsed = parse_args(spec, args);
    if (parsed.help) {
      std::fputs(usage(spec).c_str(), stdout);
      return 0;
    }
    if (!parsed.error.empty()) {
      std::fprintf(stderr, "%s\n", parsed.error.c_str());
      return 2;
    }
    const std::string& params_file = parsed.options.model_params_file;
    if (!params_file.empty()) {
      const std::string err = tcsim::load_model_params(params_file);
      if (!err.empty()) {
        std::fprintf(stderr, "%s: %s\n", prog.c_str(), err.c_str());
        return 2;
      }
    }
    if (parsed.options.model_params ||
        (!params_file.empty() && !parsed.options.predict && parsed.options.trace_path.empty())) {
      std::fputs(tcsim::model_parameters_markdown().c_str(), stdout);
      // The ranges --predict runs at (docs/timing_model.md, "Ranges").
      std::printf("\nRanges (`--predict` also runs the model with every one at its slow end, then its fast end):\n\n%s",
                  tcsim::model_ranges_markdown().c_str());
      return 0;
    }
    Options o = parsed.options;
    // The timing model covers the tcgen05 steps; step 00's mma.sync and plain global loads have
    // no model worth a prediction (docs/timing_model.md).
    if (o.predict && spec.arch != Arch::kSm100f) {
      std::fprintf(stderr, "%s: --predict: the B200 timing model covers the tcgen05 steps (01-12), not this one\n",
                   prog.c_str());
      return 2;
    }
    // Refuse an unwritable trace file now, not after a long run.
    if (!o.trace_path.empty()) {
      if (o.trace_path.rfind(std::string(kTraceDir) + "/", 0) == 0) ::mkdir(kTraceDir, 0777);  // EEXIST is fine
      const std::string err = ::access(o.trace_path.c_str(), F_OK) == 0
                                  ? (::access(o.trace_path.c_str(), W_OK) == 0 ? "" : std::strerror(errno))
                                  : creatable_check(o.trace_path);
      if (!err.empty()) {
        std::fprintf(stderr, "%s: --trace: cannot write %s (%s)\n", prog.c_str(), o.trace_path.c_str(), err.c_str());
        return 2;
      }
    }
    // Refuse an unusable CSV file now, not after a long run.
    if (!o.csv.empty()) {
      const std::string err = csv_check(o.csv);
      if (!err.empty()) {
        std::fprintf(stderr, "%s: %s\n", prog.c_str(), err.c_str());
        return 2;
      }
    }

    GpuSurvey gpus = survey_gpus(spec.arch);
    if (gpus.capable >= 0 && !o.force_sim && gpu_launch != nullptr) {
      GpuInfo& gpu = gpus.devices[static_cast<size_t>(gpus.capable)];
      std::string why;
      if (gpu_code != nullptr) gpu.code = code_on_device(*gpu_code, gpu.index, &why);
      if (gpu_code == nullptr || !gpu.code.empty()) return run_on_gpu(spec, o, gpu_launch, gpu);
      gpu.refusal = why;  // the rule said yes, the driver no: refuse like any other GPU
      gpus.capable = -1;
    }

    std::string found = describe_found(gpus);
    if (gpus.capable >= 0 && gpu_launch == nullptr) found += ", but this binary has no GPU kernel";
    if (o.force_gpu || sim_launch == nullptr) {
      std::fprintf(stderr, "%s%s\n", refusal_line(prog, spec.arch, gpus).c_str(),
                   gpus.capable >= 0 && gpu_launch == nullptr ? ", but this binary has no GPU kernel" : "");
      return 3;
    }
    if (!o.trace_path.empty() && spec.arch != Arch::kSm100f) {
      std::fprintf(stderr, "%s: --trace in the emulator needs the B200 timing model, which covers the tcgen05 steps "
                   "(01-12); trace this step on a GPU (docs/tracing.md)\n", prog.c_str());
      return 2;
    }
    // Shapes the emulator's defaults produce are checked before anything is printed.
    apply_step_sim_default(spec, o);
    apply_emulator_defaults(o);
    std::string err = validate_shape(spec, o);
    if (err.empty()) err = validate_plan(spec, o, o.sim_sms_given ? o.sim_sms : int(tcsim::model_param("SMs")));
    if (!err.empty()) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 2;
    }
    // No GPU or no driver is the ordinary case on a laptop or CI machine: one plain line, the
    // runtime's words only under --verbose. A GPU that is present but fails, or the wrong one,
    // is named.
    const bool no_gpu = gpus.devices.empty() &&
                        (gpus.error.empty() || gpus.error.rfind("cudaErrorNoDevice", 0) == 0 ||
                         gpus.error.rfind("cudaErrorInsufficientDriver", 0) == 0);
    if (o.force_sim)
      std::fprintf(stderr, "%s: running in the tcgen05 emulator (--sim-seed %llu)\n", prog.c_str(),
                   static_cast<unsigned long long>(o.sim_seed));
    else if (no_gpu && !o.verbose)
      std::fprintf(stderr, "%s: no GPU here: running in the tcgen05 emulator on the CPU (--sim-seed %llu)\n",
                   prog.c_str(), static_cast<unsigned long long>(o.sim_seed));
    else
      std::fprintf(stderr,
                   "%s: no %s here (found %s); running in the tcgen05 emulator (--sim-seed %llu)\n",
                   prog.c_str(), need_short(spec.arch).c_str(), found.c_str(),
                   static_cast<unsigned long long>(o.sim_seed));
    return run_in_emulator(spec, o, sim_launch);
  } catch (const UsageError& e) {  // a step's own setting (step.h)
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), e.what());
    return 2;
  } catch (const tcsim::SimError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: the emulator stopped the kernel:\n%s\n", prog.c_str(), e.what());
    return 1;
  } catch (const CudaError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: CUDA error: %s\n", prog.c_str(), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: out of host memory\n", prog.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), e.what());
    return 1;
  }
}

}  // namespace tcg
