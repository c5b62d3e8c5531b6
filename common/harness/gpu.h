// gpu.h — what the GPU drivers of the harness share, implemented in gpu.cpp (the survey, the
// checked launch, the timing loop) and used by gpu_run.cpp (BF16 steps against cuBLAS),
// gpu_nvfp4.cpp (NVFP4 steps against cuBLASLt) and traces.cpp (the traced launches).
// RAII owners of device memory, events and streams, the checked launch, the timing loop. Host
// code only (g++); nothing here is unit-tested on its own (no GPU in CI) except
// first_bitwise_difference (tests/unit/test_trace_gpu.cpp).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "common/cuda_check.h"
#include "common/harness/run.h"

// Like CUDA_CHECK, for cuBLAS calls: throws tcg::CudaError naming file:line, the call and the
// status.
#define CUBLAS_CHECK(call)                                                           \
  do {                                                                               \
    cublasStatus_t tcg_status_ = (call);                                             \
    if (tcg_status_ != CUBLAS_STATUS_SUCCESS)                                        \
      ::tcg::throw_cuda_error(__FILE__, __LINE__, #call,                             \
                              std::string(cublasGetStatusName(tcg_status_)) + ": " + \
                                  cublasGetStatusString(tcg_status_));               \
  } while (0)

namespace tcg::harness {

// Owns device memory for `count` elements of T.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count) : count_(count) {
    void* p = nullptr;
    if (count > 0) CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    ptr_ = static_cast<T*>(p);
  }
  // Errors are ignored here: a destructor must not throw, and a failing cudaFree only repeats an
  // earlier (sticky) error that has already been reported.
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return ptr_; }
  size_t count() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_ != nullptr) (void)cudaEventDestroy(event_);
  }
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

struct Timing {
  double median_ms = 0;
  int launches = 0;
};

// The driver as "<kernel module release> (CUDA <driver API version>)", e.g. "580.159.04 (CUDA
// 13.0)"; "" if unknown.
std::string driver_description();

// Waits for the checked launch on `stream`, ending the process after a time limit (a kernel with a
// broken mbarrier protocol hangs forever).
void wait_or_give_up(cudaStream_t stream, const StepSpec& spec);

// Median time of `launch` over at least `iters` launches adding up to 100 ms (at most 1000), each
// with L2 flushed by a memset of `flush` first, after `warmup` untimed launches.
Timing time_launches(const std::function<void()>& launch, cudaStream_t stream,
                     const DeviceBuffer<unsigned char>& flush, int warmup, int iters);

// Calls the step's launcher and checks that the launch itself was accepted.
void launch_step(LaunchFn launch, const GemmArgs& args);

// The checked launch: fills the `c_bytes` of device C with 0xFF bytes (a NaN in BF16 and FP16,
// so an element the kernel never writes fails the check), launches, waits (giving up on a hung
// kernel) and copies C back into `host_c`.
void checked_launch(const StepSpec& spec, LaunchFn launch, const GemmArgs& args, cudaStream_t stream, void* dev_c,
                    size_t c_bytes, void* host_c);

double tflops(const StepSpec& spec, const Options& o, double ms);  // problem_flops / time

// "13.1.0": the cuBLAS library's version (cuBLASLt ships with it and has the same one).
std::string cublas_version();

// Compares two row-major C matrices of `c_bytes` each, `n` columns of `elem_bytes` (1 to 8)
// bytes, bit for bit: "" if identical, else the first differing element as
// "C[row][col] is 0x... in the traced launch, 0x... in the checked one" (the bits of each, in hex).
std::string first_bitwise_difference(const void* traced_c, const void* checked_c, size_t c_bytes,
                                     size_t elem_bytes, int64_t n);

// --trace FILE (traces.cpp, docs/tracing.md): more launches of the step, queued like the
// timed ones (L2 flushed before each), with GemmArgs::trace enabled so that they run the traced
// kernel instantiation; the records of the last one become FILE. `args` is the launch the run
// verified, and `checked_c` (`c_bytes`, elements of `elem_bytes`) the C it produced, on the host:
// the traced launch's C must equal it bit for bit (same arithmetic, same order).
// Returns 0, or after a one-line message 2 (bad use: no traced CTA is in the grid, FILE cannot
// be written) or 1 (the traced C differs from the checked one, or the kernel's annotations do
// not pair up; FILE is still written, with the spans that do pair up).
int trace_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GemmArgs& args,
                 cudaStream_t stream, const DeviceBuffer<unsigned char>& flush, const GpuInfo& gpu,
                 double untraced_median_ms, const void* checked_c, size_t c_bytes, size_t elem_bytes);

// (traces.cpp) Times the step's kernel (time_launches, L2 flushed by `flush`), prints its "time:" line and,
// with --trace, records the traced launch right away: after every untraced launch and before the
// library's timing loop, which runs the GPU at a higher power. *trace_rc: trace_on_gpu's result
// (0 without --trace); `checked_c`, `c_bytes`, `elem_bytes`: the checked launch's C on the host,
// passed on to trace_on_gpu.
Timing time_step(const StepSpec& spec, const Options& o, LaunchFn launch, const GemmArgs& args,
                 cudaStream_t stream, const DeviceBuffer<unsigned char>& flush, const GpuInfo& gpu,
                 const void* checked_c, size_t c_bytes, size_t elem_bytes, int* trace_rc);

// "NVIDIA B200, 148 SMs, compute capability 10.0, sm_100f code" (the code part only when
// GpuInfo::code is known).
std::string device_description(const GpuInfo& gpu);

// The CSV row of a GPU run, with the device, driver, library and our timing filled in.
CsvRecord gpu_record(const StepSpec& spec, const Options& o, const VerifyResult* vr, const GpuInfo& gpu,
                     const Timing& ours);

// The start of a planned GPU run (the NVFP4 and grouped drivers): selects the GPU; a knob the plan
// cannot honour on it is refused in one line (false: exit code 2, nothing else printed), else the
// problem and the plan that runs are printed.
bool start_planned_gpu_run(const StepSpec& spec, const Options& o, const GpuInfo& gpu);

// The NVFP4 driver (gpu_nvfp4.cpp); run_on_gpu hands NVFP4 steps to it.
int run_nvfp4_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu);
// The grouped NVFP4 driver (gpu_grouped.cpp, step 16).
int run_grouped_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu);

}  // namespace tcg::harness
