// harness_gpu.cpp — running a step on a real GPU: finding a capable device, the checked launch
// (with a time limit, as a wrong mbarrier protocol hangs instead of failing), cuBLAS as the
// reference, and the timing loop (L2 flushed before every launch, median of at least 100 ms of
// launches) for the step's kernel, the traced launches of --trace (harness_trace.cpp), the timing
// of cuBLAS. The RAII wrappers and the pieces the NVFP4 driver
// (harness_gpu_nvfp4.cpp, cuBLASLt) shares are declared in harness_gpu.h.
#include <cublas_v2.h>
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

#include "common/harness_gpu.h"

namespace tcg::harness {

namespace {

constexpr double kMinTimedMs = 100.0;    // keep timing until the launches add up to this...
constexpr int kMaxTimedLaunches = 1000;  // ...but stop extending at this many launches

class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    // If SetStream fails, free the handle here: a throwing constructor never runs the destructor.
    const cublasStatus_t st = cublasSetStream(handle_, stream);
    if (st != CUBLAS_STATUS_SUCCESS) {
      (void)cublasDestroy(handle_);
      CUBLAS_CHECK(st);
    }
  }
  ~CublasHandle() { (void)cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

bool is_capable(Arch arch, int major, int minor) {
  if (arch == Arch::kSm100a) return major == 10 && minor == 0;  // sm_100a runs nowhere else
  return major >= 8;
}

// Row-major C (M x N) = A (M x K) · B^T with A and B row-major (N x K). cuBLAS is column-major:
// it sees our row-major C as C^T (N x M, ld N), B as a K x N matrix (ld K) and A as K x M (ld K).
// So C^T = op_T(B) · op_N(A): transa = T, transb = N, with (m, n, k) = (N, M, K).
void cublas_gemm(cublasHandle_t h, const void* a, const void* b, void* c, cudaDataType_t c_type,
                 const Options& o) {
  const float one = 1.0f, zero = 0.0f;
  const int m = static_cast<int>(o.m), n = static_cast<int>(o.n), k = static_cast<int>(o.k);
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, k, a,
                            CUDA_R_16BF, k, &zero, c, c_type, n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Shared with the NVFP4 driver (harness_gpu.h)
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

// Calls the step's launcher and checks that the launch itself was accepted, naming the step as
// the culprit rather than the harness line that noticed.
Timing time_step(const StepSpec& spec, const Options& o, LaunchFn launch, const GemmArgs& args,
                 cudaStream_t stream, const DeviceBuffer<unsigned char>& flush, const GpuInfo& gpu,
                 const void* checked_c, size_t c_bytes, size_t elem_bytes, int* trace_rc) {
  const Timing ours = time_launches([&] { launch_step(launch, args); }, stream, flush, o.warmup, o.iters);
  std::printf("time:     %.4f ms median of %d launches (L2 flushed) = %.1f TFLOPS\n", ours.median_ms,
              ours.launches, tflops(o, ours.median_ms));
  *trace_rc = o.trace_path.empty() ? 0
                                    : trace_on_gpu(spec, o, launch, args, stream, flush, gpu, ours.median_ms,
                                                   checked_c, c_bytes, elem_bytes);
  return ours;
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
  row.tflops = strf("%.2f", tflops(o, ours.median_ms));
  return row;
}

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

double tflops(const Options& o, double ms) {
  return 2.0 * double(o.m) * double(o.n) * double(o.k) / (ms * 1e-3) / 1e12;
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
    if (s.capable < 0 && is_capable(arch, g.major, g.minor))
      s.capable = static_cast<int>(s.devices.size());
    s.devices.push_back(g);
  }
  return s;
}

std::string describe_found(const GpuSurvey& s) {
  if (!s.error.empty()) return "no CUDA device: " + s.error;
  if (s.devices.empty()) return "no CUDA device";
  std::string found;
  for (const GpuInfo& g : s.devices) {
    if (!found.empty()) found += ", ";
    found += strf("%s (cc %d.%d)", g.name.c_str(), g.major, g.minor);
  }
  return found;
}

// "needs <what>" and "no <what> here" phrasings of the step's GPU requirement.
std::string need_long(Arch arch) {
  return arch == Arch::kSm100a ? "an sm_100a GPU (compute capability 10.0)"
                               : "a GPU with compute capability >= 8.0";
}
std::string need_short(Arch arch) {
  return arch == Arch::kSm100a ? "sm_100a GPU" : "GPU with compute capability >= 8.0";
}

// ---------------------------------------------------------------------------------------------
// The GPU run
// ---------------------------------------------------------------------------------------------

int run_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu) {
  if (spec.operands == Operands::kNVFP4) return run_nvfp4_on_gpu(spec, o, launch, gpu);
  CUDA_CHECK(cudaSetDevice(gpu.index));
  print_problem(spec, o,
                strf("%s, %d SMs, compute capability %d.%d", gpu.name.c_str(), gpu.sm_count,
                     gpu.major, gpu.minor));

  const size_t count_a = static_cast<size_t>(o.m * o.k);
  const size_t count_b = static_cast<size_t>(o.n * o.k);
  const size_t count_c = static_cast<size_t>(o.m * o.n);
  const HostInputs in = make_inputs(o.inputs, o.seed, o.m, o.n, o.k);

  // Declared before the cuBLAS handle so that the handle is destroyed first.
  Stream stream;
  DeviceBuffer<__nv_bfloat16> a(count_a), b(count_b), c(count_c);
  CUDA_CHECK(
      cudaMemcpyAsync(a.get(), in.a.data(), a.bytes(), cudaMemcpyHostToDevice, stream.get()));
  CUDA_CHECK(
      cudaMemcpyAsync(b.get(), in.b.data(), b.bytes(), cudaMemcpyHostToDevice, stream.get()));
  CublasHandle blas(stream.get());

  GemmArgs args;
  args.m = static_cast<int>(o.m);
  args.n = static_cast<int>(o.n);
  args.k = static_cast<int>(o.k);
  args.a = a.get();
  args.b = b.get();
  args.c = c.get();
  args.stream = stream.get();

  // The checked launch: C starts as NaN (0xFFFF is a BF16 NaN).
  std::vector<__nv_bfloat16> out(count_c);
  checked_launch(spec, launch, args, stream.get(), c.get(), c.bytes(), out.data());

  VerifyResult vr;
  if (o.check) {
    // Reference with FP32 output, then (random inputs) S = |A|·|B|^T for the tolerance; the same
    // device buffer serves both, one after the other on the stream.
    std::vector<float> ref(count_c), s;
    DeviceBuffer<float> ref_d(count_c);
    cublas_gemm(blas.get(), a.get(), b.get(), ref_d.get(), CUDA_R_32F, o);
    CUDA_CHECK(cudaMemcpyAsync(ref.data(), ref_d.get(), ref_d.bytes(), cudaMemcpyDeviceToHost,
                               stream.get()));
    if (o.inputs == Inputs::kRandom) {
      // |x| of a BF16 value: clear the sign bit.
      auto abs_copy = [](const std::vector<__nv_bfloat16>& x) {
        std::vector<__nv_bfloat16> y(x.size());
        for (size_t i = 0; i < x.size(); ++i) y[i] = bf16_from_bits(bf16_bits(x[i]) & 0x7FFFu);
        return y;
      };
      const std::vector<__nv_bfloat16> abs_a = abs_copy(in.a), abs_b = abs_copy(in.b);
      DeviceBuffer<__nv_bfloat16> abs_a_d(count_a), abs_b_d(count_b);
      CUDA_CHECK(cudaMemcpyAsync(abs_a_d.get(), abs_a.data(), abs_a_d.bytes(),
                                 cudaMemcpyHostToDevice, stream.get()));
      CUDA_CHECK(cudaMemcpyAsync(abs_b_d.get(), abs_b.data(), abs_b_d.bytes(),
                                 cudaMemcpyHostToDevice, stream.get()));
      s.resize(count_c);
      cublas_gemm(blas.get(), abs_a_d.get(), abs_b_d.get(), ref_d.get(), CUDA_R_32F, o);
      CUDA_CHECK(cudaMemcpyAsync(s.data(), ref_d.get(), ref_d.bytes(), cudaMemcpyDeviceToHost,
                                 stream.get()));
      CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // before abs_a_d / abs_b_d are freed
    }
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    vr = verify(o.inputs, out.data(), ref.data(), s.empty() ? nullptr : s.data(), o.m, o.n, o.k);
  }
  print_verify(o.check ? &vr : nullptr);

  // Timing, ours and cuBLAS (BF16 output like ours, FP32 compute, default algorithm).
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, gpu.index));
  const DeviceBuffer<unsigned char> flush(std::max<size_t>(2 * static_cast<size_t>(l2_bytes), 1));
  int trace_rc = 0;
  const Timing ours = time_step(spec, o, launch, args, stream.get(), flush, gpu, out.data(), c.bytes(),
                                sizeof(out[0]), &trace_rc);
  const double ours_tflops = tflops(o, ours.median_ms);
  // Our kernel has already run once untimed (the checked launch); give cuBLAS at least one
  // untimed call too, so its one-time setup is never timed.
  const Timing theirs =
      time_launches([&] { cublas_gemm(blas.get(), a.get(), b.get(), c.get(), CUDA_R_16BF, o); },
                    stream.get(), flush, std::max(o.warmup, 1), o.iters);
  const double theirs_tflops = tflops(o, theirs.median_ms);
  std::printf("cuBLAS:   %.4f ms = %.1f TFLOPS; this step reaches %.1f%% of cuBLAS\n",
              theirs.median_ms, theirs_tflops, 100.0 * ours_tflops / theirs_tflops);

  CsvRecord row = gpu_record(spec, o, o.check ? &vr : nullptr, gpu, ours);
  row.cublas_tflops = strf("%.2f", theirs_tflops);
  row.ratio = strf("%.4f", ours_tflops / theirs_tflops);
  const int rc = finish(spec, o, o.check ? &vr : nullptr, row);
  return rc != 0 ? rc : trace_rc;
}

}  // namespace tcg::harness
