// gpu_run.cpp — a step run on a real GPU (run_on_gpu), the counterpart of emulator_run.cpp:
// inputs to the device, the checked launch, cuBLAS's BF16 GEMM as the reference, verification,
// the step's and cuBLAS's timing loops, the traced launches of --trace (traces.cpp), the report
// and the CSV row. NVFP4 steps go on to gpu_nvfp4.cpp (cuBLASLt). It builds on gpu.cpp's launch
// and timing pieces and is called only by run_step.cpp.
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

#include "common/harness/gpu.h"

namespace tcg::harness {

namespace {

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
// The GPU run
// ---------------------------------------------------------------------------------------------

int run_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu) {
  if (spec.operands == Operands::kNVFP4Grouped) return run_grouped_on_gpu(spec, o, launch, gpu);
  if (is_nvfp4(spec.operands)) return run_nvfp4_on_gpu(spec, o, launch, gpu);
  CUDA_CHECK(cudaSetDevice(gpu.index));
  print_problem(spec, o, device_description(gpu));

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
    if (o.inputs != Inputs::kInteger) {
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
  const double ours_tflops = tflops(spec, o, ours.median_ms);
  // Our kernel has already run once untimed (the checked launch); give cuBLAS at least one
  // untimed call too, so its one-time setup is never timed.
  const Timing theirs =
      time_launches([&] { cublas_gemm(blas.get(), a.get(), b.get(), c.get(), CUDA_R_16BF, o); },
                    stream.get(), flush, std::max(o.warmup, 1), o.iters);
  const double theirs_tflops = tflops(spec, o, theirs.median_ms);
  std::printf("cuBLAS:   %.4f ms = %.1f TFLOPS; this step reaches %.1f%% of cuBLAS\n",
              theirs.median_ms, theirs_tflops, 100.0 * ours_tflops / theirs_tflops);

  CsvRecord row = gpu_record(spec, o, o.check ? &vr : nullptr, gpu, ours);
  row.cublas_tflops = strf("%.2f", theirs_tflops);
  row.ratio = strf("%.4f", ours_tflops / theirs_tflops);
  const int rc = finish(spec, o, o.check ? &vr : nullptr, row);
  return rc != 0 ? rc : trace_rc;
}

}  // namespace tcg::harness
