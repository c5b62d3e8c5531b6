// gpu_nvfp4.cpp — running an NVFP4 step (Operands::kNVFP4) on a real GPU: the operands in
// device memory, the checked launch, cuBLASLt's block-scaled FP4 matmul as the reference and as
// the speed to compare with, verification of the FP16 output, report, CSV row and --trace.
//
// UNTESTED: written from the cuBLASLt documentation and headers without a GPU of compute
// capability 10.x to run it on. Hence two safety nets: whenever cuBLASLt declines the problem
// (no algorithm for it) the CPU reference verifies instead and the cuBLASLt timing is left out;
// and cuBLASLt's reference is cross-checked against the CPU reference on a few rows before it is
// trusted, falling back to the CPU reference for all of C if they disagree. Both print a note.
//
// The cuBLASLt call. cuBLASLt is column-major. Our row-major C (M x N) is, read column-major, C^T
// (N x M, ld N), and C^T = B * A^T, where our row-major B (N x K) read column-major is K x N (ld K)
// and our A likewise K x M (ld K). So cuBLASLt's "A" is our B with transa = T (the "TN" form that
// narrow-precision matmuls require), its "B" is our A with transb = N, and (m, n, k) = (N, M, K).
// FP4 data is CUDA_R_4F_E2M1 with leading dimensions counted in elements (K), packed two per byte,
// the lower index in the low nibble, as ours. The scales (CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,
// one UE4M3 per 16 elements along K) use the 128x4 tiled layout with the outer dimension as rows,
// which is our blocked layout: cuBLASLt's A scales are our SFB, its B scales our SFA.
// Compute type CUBLAS_COMPUTE_32F, alpha = 1 and beta = 0 as FP32 on the host. C and D share a type:
// FP32 for the reference (so that the reference is not rounded to FP16 before the comparison), FP16
// for the timing (what our kernel writes).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common/harness/gpu.h"
#include "common/nvfp4_layout.h"

namespace tcg::harness {

namespace {

constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;  // what cuBLASLt may use for split-K etc.

class LtHandle {
 public:
  LtHandle() { CUBLAS_CHECK(cublasLtCreate(&h_)); }
  ~LtHandle() { (void)cublasLtDestroy(h_); }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

// One block-scaled FP4 matmul of our shape with output type `d_type`, its descriptors and the
// algorithm cuBLASLt's heuristic picked. ok() is false (why() says why) if cuBLASLt has no
// algorithm for it; run() may then not be called. The scale pointers are fixed at construction;
// run() takes the data pointers, so |A| * |B|^T runs with the same scales.
class LtFp4Gemm {
 public:
  LtFp4Gemm(cublasLtHandle_t h, const Options& o, const uint8_t* sfa, const uint8_t* sfb,
            cudaDataType_t d_type, void* workspace)
      : h_(h), workspace_(workspace) {
    const uint64_t m = static_cast<uint64_t>(o.m), n = static_cast<uint64_t>(o.n),
                   k = static_cast<uint64_t>(o.k);
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    set(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    set(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode);
    set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode);
    const void* a_scale = sfb;  // cuBLASLt's A is our B (see the top of this file)
    const void* b_scale = sfa;
    set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale);
    set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale);

    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, CUDA_R_4F_E2M1, k, n, static_cast<int64_t>(k)));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, CUDA_R_4F_E2M1, k, m, static_cast<int64_t>(k)));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, d_type, n, m, static_cast<int64_t>(n)));

    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    const uint64_t ws = kLtWorkspaceBytes;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st =
        cublasLtMatmulAlgoGetHeuristic(h_, desc_, a_, b_, d_, d_, pref_, 1, &result, &found);
    if (st != CUBLAS_STATUS_SUCCESS) {
      why_ = std::string(cublasGetStatusName(st)) + ": " + cublasGetStatusString(st);
    } else if (found == 0) {
      why_ = "no algorithm for this shape";
    } else {
      algo_ = result.algo;
      ok_ = true;
    }
  }
  ~LtFp4Gemm() {
    if (pref_ != nullptr) (void)cublasLtMatmulPreferenceDestroy(pref_);
    if (d_ != nullptr) (void)cublasLtMatrixLayoutDestroy(d_);
    if (b_ != nullptr) (void)cublasLtMatrixLayoutDestroy(b_);
    if (a_ != nullptr) (void)cublasLtMatrixLayoutDestroy(a_);
    if (desc_ != nullptr) (void)cublasLtMatmulDescDestroy(desc_);
  }
  LtFp4Gemm(const LtFp4Gemm&) = delete;
  LtFp4Gemm& operator=(const LtFp4Gemm&) = delete;

  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }

  // D (row-major M x N, i.e. column-major N x M) = A * B^T of our packed operands.
  void run(const uint8_t* a, const uint8_t* b, void* d, cudaStream_t stream) const {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasLtMatmul(h_, desc_, &one, b, a_, a, b_, &zero, d, d_, d, d_, &algo_,
                                workspace_, kLtWorkspaceBytes, stream));
  }

 private:
  void set(cublasLtMatmulDescAttributes_t attr, const void* value, size_t size) {
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, attr, value, size));
  }

  cublasLtHandle_t h_;
  void* workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool ok_ = false;
  std::string why_;
};

template <class T>
void upload(DeviceBuffer<T>& dst, const std::vector<T>& src, cudaStream_t stream) {
  CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.data(), dst.bytes(), cudaMemcpyHostToDevice, stream));
}

// |x| of every E2M1 code of a packed operand: clear both nibbles' sign bits.
std::vector<uint8_t> abs_codes(const std::vector<uint8_t>& packed) {
  std::vector<uint8_t> y(packed.size());
  for (size_t i = 0; i < packed.size(); ++i) y[i] = static_cast<uint8_t>(packed[i] & 0x77u);
  return y;
}

// Compares cuBLASLt's FP32 reference (and S) with the CPU reference on a few rows spread over M.
// "" if they agree (exactly for integer inputs; within the FP32 accumulation term of the
// tolerance for random ones), else a one-line description of the first difference.
std::string cross_check(const Options& o, const Nvfp4HostInputs& in, const std::vector<float>& ref,
                        const std::vector<float>& s) {
  std::vector<int64_t> rows;
  const int64_t want = std::min<int64_t>(o.m, 8);
  for (int64_t t = 0; t < want; ++t) rows.push_back(want == 1 ? 0 : t * (o.m - 1) / (want - 1));
  const std::vector<float> af = dequantize_nvfp4(in.a.data.data(), in.a.sf.data(), o.m, o.k);
  const std::vector<float> bf = dequantize_nvfp4(in.b.data.data(), in.b.sf.data(), o.n, o.k);
  std::vector<float> a_rows;
  for (int64_t r : rows) a_rows.insert(a_rows.end(), af.begin() + r * o.k, af.begin() + (r + 1) * o.k);
  const int64_t nr = static_cast<int64_t>(rows.size());
  std::vector<float> cpu(static_cast<size_t>(nr * o.n)), cpu_s(cpu.size());
  reference_gemm(a_rows.data(), bf.data(), nr, o.n, o.k, cpu.data(), cpu_s.data());
  for (int64_t t = 0; t < nr; ++t) {
    for (int64_t j = 0; j < o.n; ++j) {
      const size_t lt = static_cast<size_t>(rows[static_cast<size_t>(t)] * o.n + j);
      const size_t c = static_cast<size_t>(t * o.n + j);
      const double tol = o.inputs == Inputs::kInteger
                             ? 0.0
                             : 2.0 * static_cast<double>(o.k) * std::ldexp(cpu_s[c], -23);
      const bool ref_ok = std::fabs(static_cast<double>(ref[lt]) - cpu[c]) <= tol;
      const bool s_ok = s.empty() || std::fabs(static_cast<double>(s[lt]) - cpu_s[c]) <= tol;
      if (!ref_ok || !s_ok)
        return strf("cuBLASLt's C[%lld][%lld] = %.9g (S %.9g), the CPU's %.9g (S %.9g)",
                    static_cast<long long>(rows[static_cast<size_t>(t)]),
                    static_cast<long long>(j), ref[lt], s.empty() ? 0.0f : s[lt], cpu[c],
                    cpu_s[c]);
    }
  }
  return "";
}

}  // namespace

int run_nvfp4_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu) {
  if (!start_planned_gpu_run(spec, o, gpu)) return 2;

  const size_t count_c = static_cast<size_t>(o.m * o.n);
  // The dual GEMM (step 15): B2 beside B, verified on the CPU only (cuBLASLt has no such epilogue).
  const bool dual = spec.operands == Operands::kNVFP4DualSilu;
  const Nvfp4HostInputs in = make_nvfp4_inputs(o.inputs, o.seed, o.m, o.n, o.k, dual);

  // Declared before the cuBLASLt handle and gemms so that those are destroyed first.
  Stream stream;
  DeviceBuffer<uint8_t> a(in.a.data.size()), b(in.b.data.size()), sfa(in.a.sf.size()),
      sfb(in.b.sf.size());
  DeviceBuffer<uint8_t> b2(std::max<size_t>(in.b2.data.size(), 1)), sfb2(std::max<size_t>(in.b2.sf.size(), 1));
  DeviceBuffer<__half> c(count_c);
  if (dual) {
    upload(b2, in.b2.data, stream.get());
    upload(sfb2, in.b2.sf, stream.get());
  }
  upload(a, in.a.data, stream.get());
  upload(b, in.b.data, stream.get());
  upload(sfa, in.a.sf, stream.get());
  upload(sfb, in.b.sf, stream.get());

  GemmArgs args;
  args.m = static_cast<int>(o.m);
  args.n = static_cast<int>(o.n);
  args.k = static_cast<int>(o.k);
  args.fp4.a = a.get();
  args.fp4.b = b.get();
  args.fp4.sfa = sfa.get();
  args.fp4.sfb = sfb.get();
  args.fp4.c = c.get();
  if (dual) {
    args.fp4.b2 = b2.get();
    args.fp4.sfb2 = sfb2.get();
  }
  args.stream = stream.get();

  // A step's workspace (split-K partials and counters; workspace.cpp): counters zeroed
  // once, the rest poisoned before every checked launch; the counters must be 0 after every launch.
  const StepWorkspace ws = workspace_for(spec, o, gpu.sm_count);
  DeviceBuffer<uint8_t> ws_d(std::max<size_t>(ws.bytes, 1));
  if (ws.bytes) {
    CUDA_CHECK(cudaMemsetAsync(ws_d.get(), 0, ws.zeroed_bytes, stream.get()));
    CUDA_CHECK(cudaMemsetAsync(ws_d.get() + ws.zeroed_bytes, 0xFF, ws.bytes - ws.zeroed_bytes, stream.get()));
    args.workspace = ws_d.get();
    args.workspace_bytes = ws.bytes;
  }

  // The checked launch: C starts as NaN (0xFFFF is an FP16 NaN).
  std::vector<__half> out(count_c);
  checked_launch(spec, launch, args, stream.get(), c.get(), c.bytes(), out.data());
  if (ws.bytes || spec.repeat) {
    // Counters reset, and a second launch (other CTAs may finish first) gives bitwise the same C.
    std::vector<uint8_t> counters(ws.zeroed_bytes);
    std::vector<__half> again(count_c);
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CUDA_CHECK(cudaMemcpy(counters.data(), ws_d.get(), ws.zeroed_bytes, cudaMemcpyDeviceToHost));
    std::string bad = counters_not_reset(counters.data(), ws.zeroed_bytes);
    if (bad.empty()) {
      // The partials poisoned again (counters left as the kernel left them, 0): a launch that
      // reads a partial nobody wrote in it must not find the first launch's.
      if (ws.bytes)
        CUDA_CHECK(cudaMemsetAsync(ws_d.get() + ws.zeroed_bytes, 0xFF, ws.bytes - ws.zeroed_bytes, stream.get()));
      checked_launch(spec, launch, args, stream.get(), c.get(), c.bytes(), again.data());
      CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      CUDA_CHECK(cudaMemcpy(counters.data(), ws_d.get(), ws.zeroed_bytes, cudaMemcpyDeviceToHost));
      bad = counters_not_reset(counters.data(), ws.zeroed_bytes);
      if (bad.empty()) bad = repeat_difference(out.data(), again.data(), static_cast<int64_t>(count_c), o.n);
    }
    if (!bad.empty()) throw std::runtime_error(bad);
    if (ws.bytes)
      std::printf("repeat:   a second launch gave bitwise the same C; workspace of %zu bytes, counters reset\n",
                  ws.bytes);
    else
      std::printf("repeat:   a second launch gave bitwise the same C\n");
  }

  // cuBLASLt's block-scaled FP4 matmul exists for compute capability 10.x (10.0 and 10.3 are the
  // GPUs an sm_100f step runs on).
  // Elsewhere (only a hypothetical NVFP4 step for older GPUs would get here) nothing of cuBLASLt
  // is touched.
  const bool lt_capable = gpu.major == 10 && !dual;
  std::unique_ptr<LtHandle> lt;
  std::unique_ptr<DeviceBuffer<unsigned char>> workspace;
  std::unique_ptr<LtFp4Gemm> ref_gemm, fp16_gemm;
  if (lt_capable) {
    lt = std::make_unique<LtHandle>();
    workspace = std::make_unique<DeviceBuffer<unsigned char>>(kLtWorkspaceBytes);
    ref_gemm = std::make_unique<LtFp4Gemm>(lt->get(), o, sfa.get(), sfb.get(), CUDA_R_32F,
                                           workspace->get());
    fp16_gemm = std::make_unique<LtFp4Gemm>(lt->get(), o, sfa.get(), sfb.get(), CUDA_R_16F,
                                            workspace->get());
  }

  VerifyResult vr;
  if (o.check) {
    std::vector<float> ref(count_c), s;
    if (o.inputs != Inputs::kInteger) s.resize(count_c);
    bool on_cpu = true;
    if (dual) {
      std::printf("note:     the dual GEMM is verified on the CPU (cuBLASLt has no silu-gated epilogue)\n");
    } else if (!lt_capable) {
      std::printf("note:     no cuBLASLt FP4 matmul on compute capability %d.%d; verifying on the CPU\n",
                  gpu.major, gpu.minor);
    } else if (!ref_gemm->ok()) {
      std::printf("note:     cuBLASLt declined the FP32-output reference (%s); verifying on the CPU\n",
                  ref_gemm->why().c_str());
    } else {
      DeviceBuffer<float> ref_d(count_c);
      ref_gemm->run(a.get(), b.get(), ref_d.get(), stream.get());
      CUDA_CHECK(cudaMemcpyAsync(ref.data(), ref_d.get(), ref_d.bytes(), cudaMemcpyDeviceToHost,
                                 stream.get()));
      if (!s.empty()) {
        // S = |A| * |B|^T: the codes without their signs, the same (non-negative) scales.
        DeviceBuffer<uint8_t> abs_a(in.a.data.size()), abs_b(in.b.data.size());
        const std::vector<uint8_t> abs_a_h = abs_codes(in.a.data), abs_b_h = abs_codes(in.b.data);
        upload(abs_a, abs_a_h, stream.get());
        upload(abs_b, abs_b_h, stream.get());
        ref_gemm->run(abs_a.get(), abs_b.get(), ref_d.get(), stream.get());
        CUDA_CHECK(cudaMemcpyAsync(s.data(), ref_d.get(), ref_d.bytes(), cudaMemcpyDeviceToHost,
                                   stream.get()));
        CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // before abs_a / abs_b are freed
      }
      CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      const std::string disagree = cross_check(o, in, ref, s);
      if (disagree.empty()) {
        on_cpu = false;
      } else {
        std::printf("note:     cuBLASLt's reference disagrees with the CPU's (%s); verifying on the "
                    "CPU\n",
                    disagree.c_str());
      }
    }
    if (on_cpu)
      cpu_reference_nvfp4(in.operands(), o.m, o.n, o.k, ref.data(), s.empty() ? nullptr : s.data());
    if (dual) {
      Nvfp4Operands second = in.operands();
      second.b = second.b2;
      second.sfb = second.sfb2;
      std::vector<float> y(count_c), sy(s.size());
      cpu_reference_nvfp4(second, o.m, o.n, o.k, y.data(), sy.empty() ? nullptr : sy.data());
      vr = verify_dual_silu(o.inputs, out.data(), ref.data(), s.empty() ? nullptr : s.data(), y.data(),
                            sy.empty() ? nullptr : sy.data(), o.m, o.n, o.k);
      if (o.inputs == Inputs::kCompetition) ref = dual_silu_reference(ref.data(), y.data(), int64_t(count_c));
    } else {
      vr = verify_fp16(o.inputs, out.data(), ref.data(), s.empty() ? nullptr : s.data(), o.m, o.n, o.k);
    }
    if (o.inputs == Inputs::kCompetition) {
      const CompetitionCheck cc = competition_check(out.data(), ref.data(), o.m, o.n);
      std::printf("%s\n", format_competition_check(cc).c_str());
      if (cc.outside > 0 && vr.passed()) {
        vr.mismatches = cc.outside;
        vr.max_i = cc.worst_i, vr.max_j = cc.worst_j;
      }
    }
  }
  print_verify(o.check ? &vr : nullptr);

  // Timing, ours and cuBLASLt (FP16 output like ours).
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, gpu.index));
  const DeviceBuffer<unsigned char> flush(std::max<size_t>(2 * static_cast<size_t>(l2_bytes), 1));
  int trace_rc = 0;
  const Timing ours = time_step(spec, o, launch, args, stream.get(), flush, gpu, out.data(), c.bytes(),
                                sizeof(out[0]), &trace_rc);
  const double ours_tflops = tflops(spec, o, ours.median_ms);

  CsvRecord row = gpu_record(spec, o, o.check ? &vr : nullptr, gpu, ours);
  if (lt_capable && fp16_gemm->ok()) {
    const Timing theirs = time_launches(
        [&] { fp16_gemm->run(a.get(), b.get(), c.get(), stream.get()); }, stream.get(), flush,
        std::max(o.warmup, 1), o.iters);
    const double theirs_tflops = tflops(spec, o, theirs.median_ms);
    std::printf("cuBLASLt: %.4f ms = %.1f TFLOPS (NVFP4, FP16 out); this step reaches %.1f%% of it\n",
                theirs.median_ms, theirs_tflops, 100.0 * ours_tflops / theirs_tflops);
    row.cublas_tflops = strf("%.2f", theirs_tflops);
    row.ratio = strf("%.4f", ours_tflops / theirs_tflops);
  } else {
    std::printf("cuBLASLt: not timed (%s)\n", dual         ? "it has no silu-gated dual GEMM"
                                              : lt_capable ? fp16_gemm->why().c_str()
                                                           : "no FP4 matmul on this GPU");
  }
  const int rc = finish(spec, o, o.check ? &vr : nullptr, row);
  return rc != 0 ? rc : trace_rc;
}

}  // namespace tcg::harness
