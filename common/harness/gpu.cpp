// gpu.cpp — the pieces every GPU run is built from (declared in gpu.h): finding a capable device
// (the capability rule itself is capability.cpp's), the code the driver loads there, the driver's
// description, the checked launch (with a time limit, as a wrong mbarrier protocol hangs instead
// of failing), the timing loop (L2 flushed before every launch, median of at least
// 100 ms of launches) and the CSV row of a GPU run. The runs themselves are gpu_run.cpp (BF16,
// cuBLAS), gpu_nvfp4.cpp (NVFP4, cuBLASLt) and traces.cpp (the traced launch); nothing here
// calls them.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>

#include "common/harness/gpu.h"

namespace tcg::harness {

namespace {

constexpr double kMinTimedMs = 100.0;    // keep timing until the launches add up to this...
constexpr int kMaxTimedLaunches = 1000;  // ...but stop extending at this many launches

}  // namespace

// ---------------------------------------------------------------------------------------------
// Shared with the NVFP4 driver (gpu.h)
// ---------------------------------------------------------------------------------------------

// The driver as "<kernel module release> (CUDA <driver API version>)", e.g. "580.159.04 (CUDA
// 13.0)". The release comes from /proc/driver/nvidia/version (Linux), which is what nvidia-smi
// shows; the runtime API only knows the CUDA version the driver supports.
std::string driver_description() {
  std::string release;
  if (FILE* f = std::fopen("/proc/driver/nvidia/version", "r")) {
    char line[512] = {0};
    if (std::fgets(line, sizeof line, f)) {
      // "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  580.159.04  <date>":
      // the release is the first token made of digits and at least one dot.
      for (char* tok = std::strtok(line, " \t\n"); tok; tok = std::strtok(nullptr, " \t\n")) {
        const std::string t = tok;
        if (t.find('.') != std::string::npos && t.find_first_not_of("0123456789.") == std::string::npos &&
            std::isdigit(static_cast<unsigned char>(t[0]))) {
          release = t;
          break;
        }
      }
    }
    std::fclose(f);
  }
  int v = 0;
  const std::string api = cudaDriverGetVersion(&v) == cudaSuccess && v > 0 ? "CUDA " + format_version(v) : "";
  if (release.empty()) return api;
  return api.empty() ? release : release + " (" + api + ")";
}

// Waits for the checked launch, but not forever: a kernel whose mbarrier protocol is wrong
// (a wrong expect_tx byte count, a flipped parity) spins on the GPU with no error to report. After
// kKernelTimeoutSeconds the process says so and ends; exiting is the only way to get rid of a
// kernel that never finishes, and running the same step with --sim gives the deadlock report.
constexpr double kKernelTimeoutSeconds = 60;
void wait_or_give_up(cudaStream_t stream, const StepSpec& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) CUDA_CHECK(e);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > kKernelTimeoutSeconds) {
      std::fprintf(stderr,
                   "%s: the kernel did not finish within %.0f s; most likely a deadlock (an mbarrier wait "
                   "that never completes). Run it with --sim for the emulator's report of what each warp "
                   "waits on.\n",
                   program_name(spec).c_str(), kKernelTimeoutSeconds);
      std::fflush(stderr);
      std::_Exit(1);  // a hung kernel cannot be cancelled; leave without waiting for it
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}


// Times `launch` with one event pair per launch. Before each timed launch, and outside its event
// pair, a memset of `flush` (2x the L2 size) evicts A, B and C from L2, so every launch starts cold
// as it would inside a real model. Launches are queued in batches and measured afterwards: the
// memset in front of each one keeps the GPU behind the host, so the start event never fires early
// while the host is still submitting the kernel.
Timing time_launches(const std::function<void()>& launch, cudaStream_t stream,
                     const DeviceBuffer<unsigned char>& flush, int warmup, int iters) {
  for (int w = 0; w < warmup; ++w) launch();
  CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<Event> starts, stops;
  std::vector<float> ms;
  double total_ms = 0;
  int batch = iters;
  for (;;) {
    while (starts.size() < static_cast<size_t>(batch)) {
      starts.emplace_back();
      stops.emplace_back();
    }
    for (int t = 0; t < batch; ++t) {
      CUDA_CHECK(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream));
      CUDA_CHECK(cudaEventRecord(starts[t].get(), stream));
      launch();
      CUDA_CHECK(cudaEventRecord(stops[t].get(), stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int t = 0; t < batch; ++t) {
      float e = 0;
      CUDA_CHECK(cudaEventElapsedTime(&e, starts[t].get(), stops[t].get()));
      ms.push_back(e);
      total_ms += e;
    }
    const int done = static_cast<int>(ms.size());
    if (total_ms >= kMinTimedMs || done >= kMaxTimedLaunches) break;
    // Enough further launches to reach kMinTimedMs at the mean time seen so far.
    const double mean = std::max(total_ms / done, 1e-6);
    const double need = std::ceil((kMinTimedMs - total_ms) / mean);
    batch = static_cast<int>(std::min<double>(std::max(need, 1.0), kMaxTimedLaunches - done));
  }

  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  Timing t;
  t.launches = static_cast<int>(n);
  t.median_ms = n % 2 == 1 ? ms[n / 2] : 0.5 * (double(ms[n / 2 - 1]) + ms[n / 2]);
  return t;
}

CsvRecord gpu_record(const StepSpec& spec, const Options& o, const VerifyResult* vr, const GpuInfo& gpu,
                     const Timing& ours) {
  CsvRecord row = base_record(spec, o, vr);
  row.gpu = gpu.name;
  row.sm_count = std::to_string(gpu.sm_count);
  row.driver = driver_description();
  row.cublas = cublas_version();
  row.iterations = std::to_string(ours.launches);
  row.median_ms = strf("%.6f", ours.median_ms);
  row.tflops = strf("%.2f", tflops(spec, o, ours.median_ms));
  return row;
}

// Calls the step's launcher and checks that the launch itself was accepted, naming the step as
// the culprit rather than the harness line that noticed.
void launch_step(LaunchFn launch, const GemmArgs& args) {
  launch(args);
  try {
    CUDA_CHECK(cudaGetLastError());
  } catch (const CudaError& e) {
    throw CudaError(std::string("the step's kernel launch failed: ") + e.what());
  }
}

void checked_launch(const StepSpec& spec, LaunchFn launch, const GemmArgs& args, cudaStream_t stream, void* dev_c,
                    size_t c_bytes, void* host_c) {
  CUDA_CHECK(cudaMemsetAsync(dev_c, 0xFF, c_bytes, stream));
  launch_step(launch, args);
  try {
    wait_or_give_up(stream, spec);
  } catch (const CudaError& e) {
    throw CudaError(std::string("the step's kernel failed while running: ") + e.what());
  }
  CUDA_CHECK(cudaMemcpyAsync(host_c, dev_c, c_bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  return strf("%d.%d.%d", major, minor, patch);
}

double tflops(const StepSpec& spec, const Options& o, double ms) {
  return problem_flops(spec, o) / (ms * 1e-3) / 1e12;
}


// ---------------------------------------------------------------------------------------------
// Survey
// ---------------------------------------------------------------------------------------------

// Never throws: on a machine without a driver or GPU every call here may fail, and any failure
// simply means "no usable GPU" (which is why these calls are not wrapped in CUDA_CHECK).
GpuSurvey survey_gpus(Arch arch) {
  GpuSurvey s;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    s.error = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();  // clear it so no later call reports it again
    return s;
  }
  for (int d = 0; d < count; ++d) {
    GpuInfo g;
    g.index = d;
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
      (void)cudaGetLastError();
      g.name = strf("device %d (properties unreadable)", d);
    } else {
      g.name = p.name;
      g.major = p.major;
      g.minor = p.minor;
      g.sm_count = p.multiProcessorCount;
    }
    s.devices.push_back(g);
  }
  judge_devices(s, arch);
  return s;
}

std::string code_on_device(const GpuCode& code, int device, std::string* why) {
  if (cudaSetDevice(device) != cudaSuccess) {
    *why = cudaGetErrorString(cudaGetLastError());
    return "";
  }
  const int version = code.binary_version();
  if (version <= 0) {
    *why = "the driver loads none of this binary's code (" + std::string(code.targets) + ") there";
    return "";
  }
  return loaded_code(code.targets, version);
}

// "NVIDIA B200, 148 SMs, compute capability 10.0, sm_100f code": the device line of a
// GPU run (the report's device: line, a trace's metadata).
std::string device_description(const GpuInfo& gpu) {
  return strf("%s, %d SMs, compute capability %d.%d", gpu.name.c_str(), gpu.sm_count, gpu.major, gpu.minor) +
         (gpu.code.empty() ? "" : ", " + gpu.code);
}

// The start of a planned GPU run: gpu.h.
bool start_planned_gpu_run(const StepSpec& spec, const Options& o, const GpuInfo& gpu) {
  CUDA_CHECK(cudaSetDevice(gpu.index));
  const std::string refused = validate_plan(spec, o, gpu.sm_count);
  if (!refused.empty()) {
    std::fprintf(stderr, "%s\n", refused.c_str());
    return false;
  }
  print_problem(spec, o, device_description(gpu), plan_of(spec, o, gpu.sm_count));
  return true;
}

}  // namespace tcg::harness
