// internal.h — the pure, host-only pieces of the harness, exposed so that
// tests/unit/test_harness.cpp can call them directly. Nothing here touches a GPU or the emulator.
// Each section names the file that implements it:
//   cli.cpp        command line: flags, usage, shape checks, emulator defaults
//   inputs.cpp     BF16: conversions, generated inputs, the CPU reference for BF16
//   reference.cpp  the reference GEMM core (floats in, double sums), fast and threaded
//   nvfp4.cpp      NVFP4: encoders, quantizer, inputs, the CPU reference for NVFP4
//   dual_silu.cpp  the dual GEMM with SiLU (step 15): reference, verification; the competition's check
//   verify.cpp     BF16 and FP16 output: tolerances, verification and its report
//   report.cpp     CSV rows and files, version and date formatting, strf
//   capability.cpp which GPUs a step's build runs on (the capability rule), the code the driver
//                  loaded, a GPU's file-name slug
//   traces.cpp     timelines: writing one (both clocks); GPU records -> trace spans
//   workspace.cpp  a step's global scratch memory (split-K partials, counters): size, poison, checks
// run_step.cpp, emulator_run.cpp and gpu_run.cpp, sharing run.h, tie them together (the order
// in which these files may call each other is in README.md beside this file).
//
// The data types (StepSpec::operands): BF16 in and out (steps 00-06), or NVFP4 in (E2M1 values,
// UE4M3 scales per 16) and FP16 out (steps 07, 10-13 and 15). Each has its own sections below for inputs, the
// reference wrapper and verification; the reference core between them takes floats.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "common/harness/groups.h"
#include "common/step.h"
#include "common/trace.h"

namespace tcg::harness {

// ---------------------------------------------------------------------------------------------
// Text (report.cpp)
// ---------------------------------------------------------------------------------------------

// printf into a std::string.
__attribute__((format(printf, 1, 2))) std::string strf(const char* format, ...);

// ---------------------------------------------------------------------------------------------
// Command line (cli.cpp)
// ---------------------------------------------------------------------------------------------

enum class Inputs {
  kRandom,   // uniform in [-1, 1], rounded to BF16
  kInteger,  // integers uniform in [-2, 2]: every FP32 partial sum is exact, so checks are exact
  kWide,     // uniform in [-1, 1] times 2^e, e spanning 16 binades (NVFP4: per 16-element block, so
             // the UE4M3 scales span 10): FP32 sums round, so their order shows in the bits
  kCompetition,  // NVFP4 only: the NVFP4 competition's generator (gpu-mode reference-kernels,
                 // problems/nvidia/nvfp4_dual_gemm/reference.py; nvfp4.cpp): every byte uniform in
                 // 0..254 masked with 0xBB (codes 0, ±0.5, ±1, ±1.5, -0 included), every scale
                 // UE4M3_RN of a uniform float in [0, 1); checked with its rtol = atol = 1e-3 too
};
const char* inputs_name(Inputs kind);  // "random" / "integer" / "wide" / "competition"

constexpr int64_t kGpuDefaultDim = 4096;
constexpr int64_t kSimDefaultDim = 512;
constexpr int64_t kMaxDim = int64_t{1} << 24;
// Kernels index A, B and C with 32-bit int element offsets, so no operand may reach 2^31 elements.
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;
// Integer inputs have |a*b| <= 4, so every partial sum is an integer of magnitude <= 4K; FP32
// represents all of them exactly only while 4K <= 2^24.
constexpr int64_t kMaxIntegerK = int64_t{1} << 22;
// NVFP4 integer inputs (nvfp4.cpp) are multiples of 2^-2 with |a| <= 4, so products are
// multiples of 2^-4 with |a*b| <= 16 and partial sums multiples of 2^-4 of magnitude <= 16K; FP32
// holds every multiple of 2^-4 up to 2^20 exactly, hence 16K <= 2^20.
constexpr int64_t kMaxNvfp4IntegerK = int64_t{1} << 16;
// The K of one kind::mxf4nvf4 MMA, which every NVFP4 step's K must be a multiple of.
constexpr int64_t kNvfp4KMultiple = 64;
constexpr int kMaxCount = 1000000;  // upper bound for --iters / --warmup

struct Options {
  int64_t m = kGpuDefaultDim, n = kGpuDefaultDim, k = kGpuDefaultDim;
  bool m_given = false, n_given = false, k_given = false;  // emulator defaults apply otherwise
  int iters = 20;                                          // >= 1
  int warmup = 5;                                          // >= 0
  uint64_t seed = 1;                                       // input seed
  bool check = true;
  Inputs inputs = Inputs::kRandom;
  std::string csv;  // empty: no CSV output
  bool force_gpu = false;
  bool force_sim = false;
  uint64_t sim_seed = 1;
  int predict_noise = 0;     // --predict-noise N: the point again under N tie orders (predict_range.cpp)
  int sim_sms = 148;         // --sim-sms: SMs of the emulated GPU
  int sim_ctas_per_sm = 0;   // --sim-ctas-per-sm: 0 = as resources allow
  // Timelines (docs/tracing.md). --trace: write a Chrome-trace JSON file of one launch (the GPU's
  // %globaltimer, or the emulator's timing model) for the CTAs in trace_ctas (--trace-ctas:
  // sorted, no duplicates, at most kMaxTraceCtas).
  std::string trace_path;  // empty: no trace
  std::vector<uint32_t> trace_ctas{0, 1, 2, 3};
  // --predict: the emulator with its B200 timing model, timing only (implies force_sim; the
  // dimensions not given default to kGpuDefaultDim, see apply_emulator_defaults).
  bool predict = false;
  bool model_params = false;  // --model-params: print the timing model's parameters and exit 0
  std::string model_params_file;  // --model-params FILE: the timing model's parameters from FILE
  bool sim_sms_given = false;     // --sim-sms given (else the parameter table's SM count)
  std::string sim_default_note;   // the step's default problem was taken (apply_step_sim_default)
  bool verbose = false;           // --verbose: why no GPU was used, in the CUDA runtime's words
  // A grouped step (Operands::kNVFP4Grouped, step 16): its groups (--groups, or the step's
  // default list), with n and k those of the run; m above is then the sum of their M.
  GroupList groups;
  bool groups_given = false;
};
constexpr size_t kMaxTraceCtas = 64;
// Where --trace puts a bare file name (one without a directory); created when missing.
constexpr const char* kTraceDir = "traces";
// The largest CTA index --trace-ctas accepts: a grid has at most 2^31 - 1 CTAs along x.
constexpr uint64_t kMaxTraceCtaIndex = (uint64_t{1} << 31) - 2;

// Parses a --trace-ctas list: comma-separated CTA indices and inclusive ranges ("0-3,8"), each
// at most kMaxTraceCtaIndex; at most kMaxTraceCtas CTAs after duplicates are merged. Returns ""
// and the sorted indices in `out`, or a message (without program name) saying what is wrong.
std::string parse_cta_list(const std::string& text, std::vector<uint32_t>* out);

struct ParseResult {
  Options options;
  bool help = false;  // --help / -h was given: print usage() and exit 0
  std::string error;  // empty on success, else ONE line "stepNN: ..." without a newline
};

std::string program_name(const StepSpec& spec);  // "step01"
std::string usage(const StepSpec& spec);         // multi-line, ends with '\n'

// `args` excludes argv[0]. Accepts "--m 512" and "--m=512". Checks every value and the shape
// (validate_shape) for the dimensions in effect after parsing.
ParseResult parse_args(const StepSpec& spec, const std::vector<std::string>& args);

// "" if the step can handle this problem, else one line "stepNN: ..." naming the constraint.
std::string validate_shape(const StepSpec& spec, const Options& o);
// The floating-point operations of the problem: 2 M N K, twice that for the dual GEMM (step 15).
double problem_flops(const StepSpec& spec, const Options& o);
// "" if the step's plan (StepSpec::plan, ::workspace) takes this problem on `sms` SMs with the
// knobs in the environment, else one line "stepNN: ..." saying which knob it cannot honour. The
// drivers ask once the shape and the GPU are known (the emulator's defaults, the GPU's SM count).
std::string validate_plan(const StepSpec& spec, const Options& o, int sms);

// Replaces every dimension the user did not give with kSimDefaultDim (with --predict: leaves it
// at kGpuDefaultDim, the shape a prediction is usually wanted for).
void apply_emulator_defaults(Options& o);
// A plain emulator run of a step with a StepSpec::sim_default and none of --m, --n, --k, --sim-sms
// (nor --predict, --trace) takes that problem and GPU; returns the note saying so ("" if not).
std::string apply_step_sim_default(const StepSpec& spec, Options& o);

// ---------------------------------------------------------------------------------------------
// BF16: conversions, inputs and the CPU reference (inputs.cpp)
// ---------------------------------------------------------------------------------------------

uint16_t float_to_bf16_bits(float x);  // round to nearest even; NaN stays a (quiet) NaN
float bf16_bits_to_float(uint16_t bits);
uint16_t bf16_bits(__nv_bfloat16 x);
__nv_bfloat16 bf16_from_bits(uint16_t bits);
inline float bf16_to_float(__nv_bfloat16 x) { return bf16_bits_to_float(bf16_bits(x)); }

// The next value of a splitmix64 generator (advances `state`).
uint64_t splitmix64(uint64_t& state);
// The generator state that starts stream `stream_id` of `seed` (fill_input's streams).
uint64_t stream_state(uint64_t seed, uint64_t stream_id);
// One generator output turned into a float uniform in [-1, 1) (a multiple of 2^-23), or an integer
// uniform in [0, n).
float unit_float(uint64_t x);
uint32_t below(uint64_t x, uint32_t n);

// Fills dst[0..count) from the generator stream (seed, stream_id); different stream ids give
// independent sequences. Deterministic: the same arguments always give the same values.
void fill_input(Inputs kind, uint64_t seed, uint64_t stream_id, __nv_bfloat16* dst, size_t count);

struct HostInputs {
  std::vector<__nv_bfloat16> a;  // m x k row-major
  std::vector<__nv_bfloat16> b;  // n x k row-major
};
// A uses stream 0 and B stream 1 of `seed`. fill false: zeros of the right sizes, nothing generated
// (--predict: timing only; the model's costs do not depend on the values).
HostInputs make_inputs(Inputs kind, uint64_t seed, int64_t m, int64_t n, int64_t k, bool fill = true);

// ref[i*n + j] = sum_k a[i][k] * b[j][k], accumulated in double (exact for integer inputs), then
// stored as float. If `s` is not null, s[i*n + j] = sum_k |a[i][k]| * |b[j][k]| likewise.
// BF16 values are exact in float: this is reference_gemm on the converted inputs (same threads).
void cpu_reference(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t m, int64_t n, int64_t k,
                   float* ref, float* s, unsigned threads = 0);

// ---------------------------------------------------------------------------------------------
// NVFP4: encoding, the quantizer, inputs and the CPU reference (nvfp4.cpp)
// ---------------------------------------------------------------------------------------------
// Decoding is tcg::e2m1_to_float / tcg::ue4m3_to_float (common/descriptors.h), the layout of the
// scales tcg::sf_blocked_offset (common/nvfp4_layout.h); both are shared with the kernels.

// The E2M1 code nearest to x / scale (the exact quotient), ties to the even code, magnitudes above
// 6 saturating to 6; the sign of x is kept (-0.0 and small negatives give code 8, -0). x finite,
// scale finite and > 0 (else std::invalid_argument).
uint8_t float_to_e2m1(float x, float scale);
// The UE4M3 code nearest to x, ties to even, values above 448 saturating to 448 (0x7E). x finite
// and >= 0 (else std::invalid_argument).
uint8_t float_to_ue4m3(float x);

// An NVFP4 operand in host memory, as Nvfp4Operands describes it (common/step.h).
struct Nvfp4Matrix {
  int64_t rows = 0, k = 0;
  std::vector<uint8_t> data;  // rows x k/2 bytes, two E2M1 codes per byte, low nibble first
  std::vector<uint8_t> sf;    // sf_bytes(rows, k): UE4M3 scales, blocked; padding bytes are 0
};

// Quantizes the rows x k row-major floats `x` (k a positive multiple of 16), block by block of
// 16 along k, with no per-tensor scale (S_enc = 1; see nvfp4.cpp for the rules):
//   scale = float_to_ue4m3(amax / 6), amax = max |x| over the block
//   code  = float_to_e2m1(x, scale), or 0 for every element of a block whose scale is 0.
// NaN or Inf anywhere: std::invalid_argument, one line naming `name`[row][col].
Nvfp4Matrix quantize_nvfp4(const float* x, int64_t rows, int64_t k, const char* name = "x");

// Every element decoded: out[r*k + q] = e2m1(code) * ue4m3(scale), exact in float (2 significant
// bits times 4, exponents 2^-10 to 2688). `data` and `sf` as in Nvfp4Matrix.
std::vector<float> dequantize_nvfp4(const uint8_t* data, const uint8_t* sf, int64_t rows,
                                    int64_t k);

struct Nvfp4HostInputs {
  Nvfp4Matrix a;  // m x k
  Nvfp4Matrix b;  // n x k
  Nvfp4Matrix b2; // n x k, the dual GEMM's second B (make_nvfp4_inputs with dual); else empty
  // A view for GemmArgs::fp4 and cpu_reference_nvfp4 (c stays null).
  Nvfp4Operands operands() const;
};
// random: the floats of the BF16 `random` inputs before their rounding (uniform in [-1, 1), A from
// stream 0 and B from stream 1 of `seed`), quantized by quantize_nvfp4.
// integer: E2M1 values uniform in {0, ±0.5, ±1, ±2} (streams 0 and 1) and block scales uniform in
// {0.5, 1, 2} (streams 2 and 3): every element is a multiple of 2^-2 of magnitude <= 4, so every
// FP32 partial sum is exact while K <= kMaxNvfp4IntegerK.
// competition: the generator of the NVFP4 competition's reference.py (see Inputs::kCompetition),
// A from stream 0, B from stream 1 (bytes), scales from streams 2 and 3.
// dual: B2 too, as B from streams 4 (and 5 for its scales): the same A and B as without it.
// fill false: zero codes and scales of the right sizes, nothing generated (as make_inputs).
Nvfp4HostInputs make_nvfp4_inputs(Inputs kind, uint64_t seed, int64_t m, int64_t n, int64_t k,
                                  bool dual = false, bool fill = true);

// ref and s as cpu_reference, for C = (A . SFA) * (B . SFB)^T: the operands decoded exactly to
// floats (dequantize_nvfp4), then reference_gemm. Only the a, b, sfa and sfb pointers are read.
void cpu_reference_nvfp4(const Nvfp4Operands& op, int64_t m, int64_t n, int64_t k, float* ref,
                         float* s, unsigned threads = 0);

// ---------------------------------------------------------------------------------------------
// Reference GEMM core, any input type that is exact in float (reference.cpp)
// ---------------------------------------------------------------------------------------------

// a: m x k, b: n x k, both row-major; ref and s: m x n. ref[i*n + j] is the float rounding of
//   double d = 0; for (q = 0; q < k; ++q) d += double(a[i*k + q]) * double(b[j*k + q]);
// bit for bit (every product is exact in double, and the sum runs in exactly this order).
// If `s` is not null, s[i*n + j] is the same with |a| and |b|. `threads`: how many threads may
// share the work, 0 = reference_threads(0). Neither it nor `path` changes the result.
enum class ReferencePath {
  kFastest,   // the best version this CPU runs (AVX2 + FMA on most x86-64)
  kPortable,  // the version built with the default flags (for tests: it must agree)
};
void reference_gemm(const float* a, const float* b, int64_t m, int64_t n, int64_t k, float* ref,
                    float* s, unsigned threads = 0, ReferencePath path = ReferencePath::kFastest);

// `requested` if positive, else std::thread::hardware_concurrency(), else 1.
unsigned reference_threads(unsigned requested);

// ---------------------------------------------------------------------------------------------
// BF16 output: tolerance and verification (verify.cpp)
// ---------------------------------------------------------------------------------------------

// Tolerance for one BF16 output element of a `random` run (see verify.cpp for the
// derivation):  tol = 2^-8 * |ref| + 2 * K * 2^-23 * S + 2^-133
double bf16_tolerance(double ref, double s, int64_t k);

struct Mismatch {
  int64_t i = 0, j = 0;
  double expected = 0, got = 0;
  double tol = 0;        // 0 for exact (integer) comparisons
  double reference = 0;  // the unrounded reference (differs from expected for integer inputs)
  bool overflow = false;  // the reference is beyond the output type's range (FP16 only)
};

struct VerifyResult {
  Inputs inputs = Inputs::kRandom;
  int64_t total = 0;       // M * N
  int64_t mismatches = 0;  // elements outside tolerance, NaN/Inf included
  int64_t nonfinite = 0;   // NaN or Inf in the output, where no Inf was expected
  int64_t overflow = 0;    // FP16: elements whose reference rounds to ±Inf (|ref| > 65504)
  double max_abs_err = 0;  // over the finite outputs
  int64_t max_i = -1, max_j = -1;
  double max_ratio = 0;         // max |err| / tol over the finite outputs (random inputs only)
  std::vector<Mismatch> first;  // the first kMaxListed mismatches in row-major order
  bool passed() const { return mismatches == 0; }
};
constexpr int kMaxListed = 8;

// Compares the kernel's BF16 output `out` (M x N) with the reference `ref` (FP32, as computed by
// cuBLAS or cpu_reference). integer: exact, out must equal BF16_RN(ref) (-0 == +0). random:
// |out - ref| <= bf16_tolerance(ref, s, k); `s` (= |A|·|B|^T) may be null, then |ref| stands in
// for it.
VerifyResult verify(Inputs kind, const __nv_bfloat16* out, const float* ref, const float* s,
                    int64_t m, int64_t n, int64_t k);

// Pass: one line (no newline). Fail: several lines, each ending in '\n' except the last.
std::string format_verify(const VerifyResult& r);
// Adds one element's outcome to `r` (verify.cpp; dual_silu.cpp uses it too). `ok`: the comparison
// passed; an output that is NaN or Inf fails unless it is exactly the Inf that was expected
// (`inf_expected`, FP16 overflow). Errors and ratios are taken over finite outputs compared with
// finite expectations only.
void tally(VerifyResult& r, int64_t i, int64_t j, double expected, double got, double tol, bool ok,
           double reference = 0, bool overflow = false, bool inf_expected = false);

// ---------------------------------------------------------------------------------------------
// FP16 output (NVFP4 steps): conversions, tolerance and verification (verify.cpp)
// ---------------------------------------------------------------------------------------------

// cuda_fp16.h's conversions, the ones a kernel uses (__float2half_rn: nearest even, overflow to
// Inf from 65520 up).
uint16_t float_to_fp16_bits(float x);
float fp16_bits_to_float(uint16_t bits);
uint16_t fp16_bits(__half x);
__half fp16_from_bits(uint16_t bits);
constexpr double kFp16Max = 65504;  // the largest finite FP16 value

// Tolerance for one FP16 output element of a `random` run (derivation in verify.cpp):
//   tol = 2^-11 * |ref| + 2 * K * 2^-23 * S + 2^-24
double fp16_tolerance(double ref, double s, int64_t k);

// verify() for an FP16 output. integer: out must equal FP16_RN(ref) (-0 == +0), which is ±Inf
// where |ref| rounds beyond 65504: such elements are counted in VerifyResult::overflow and pass
// only as that Inf. random: |out - ref| <= fp16_tolerance; where |ref| + tol reaches 65520 an Inf
// of ref's sign passes too (counted in overflow if FP16_RN(ref) itself is Inf).
VerifyResult verify_fp16(Inputs kind, const __half* out, const float* ref, const float* s,
                         int64_t m, int64_t n, int64_t k);

// ---------------------------------------------------------------------------------------------
// The dual GEMM with SiLU (step 15): reference and verification (dual_silu.cpp)
// ---------------------------------------------------------------------------------------------

// silu(x) = x / (1 + e^-x) in double: silu(0) = 0, -0 for x below about -745 (e^-x overflows to
// +Inf), x itself for x above about 40 (e^-x below half an ulp of 1).
double silu_reference(double x);

// out = silu(x) * y for every element, x = A . B1^T and y = A . B2^T as cpu_reference_nvfp4 gives
// them (x, y: the FP32 roundings of double sums; sx, sy: the same with |A|, |B|; sx and sy may be
// null for integer inputs, whose x and y are exact). The verification of a dual GEMM's FP16 output:
//   integer: x and y are exact; out must be FP16_RN of silu(x) * y computed in FP32 by the kernel,
//            whose error (expf, a division, a product: at most 2^-20 relative, an estimate with
//            margin) only matters where an FP16 rounding boundary lies that close: there either
//            neighbour passes, elsewhere the bits must be equal (-0 == +0). Beyond 65504: Inf.
//   random, wide, competition: |out - ref| <= the FP16 output tolerance of ref (fp16_tolerance's
//            2^-11 |ref| + 2^-24) plus the FP32 accumulation terms of x and y (2 K 2^-23 S each,
//            as fp16_tolerance) carried through silu and the product:
//            1.1 |y| Tx + |silu(x)| Ty + 1.1 Tx Ty (|silu'| <= 1.0998) + 2^-20 |ref|.
// Elements whose reference rounds past 65504 are counted in VerifyResult::overflow (reported:
// the product overflows FP16 there), and pass only as an Inf of its sign.
VerifyResult verify_dual_silu(Inputs kind, const __half* out, const float* x, const float* sx, const float* y,
                              const float* sy, int64_t m, int64_t n, int64_t k);
// The dual GEMM's reference, rounded to FP32 (what the competition's check compares with after
// its FP16 rounding): silu(x) * y, x and y as above.
std::vector<float> dual_silu_reference(const float* x, const float* y, int64_t count);

// The competition's check (torch.allclose(out, ref, rtol=1e-3, atol=1e-3) on FP16 values):
// |out - FP16_RN(ref)| <= 1e-3 + 1e-3 |FP16_RN(ref)|, NaN failing; an Inf passes only as the same Inf.
struct CompetitionCheck {
  int64_t total = 0, outside = 0;
  double worst_excess = 0;  // max |out - r| - (atol + rtol |r|) over the elements outside
  int64_t worst_i = -1, worst_j = -1;
};
constexpr double kCompetitionRtol = 1e-3, kCompetitionAtol = 1e-3;
CompetitionCheck competition_check(const __half* out, const float* ref, int64_t m, int64_t n);
// "competition: ... (rtol = atol = 1e-3)" one line, no newline.
std::string format_competition_check(const CompetitionCheck& c);

// ---------------------------------------------------------------------------------------------
// CSV and report formatting (report.cpp)
// ---------------------------------------------------------------------------------------------

// One row of the results file; every field is already formatted (empty = not applicable).
struct CsvRecord {
  std::string step, step_name, gpu, sm_count, driver, cuda_runtime, cublas;
  std::string m, n, k, dtype = "bf16", inputs, iterations;
  std::string median_ms, tflops, cublas_tflops, ratio, max_abs_err, verified, date, git_rev;
};

std::string csv_header();                     // the header line, with '\n'
std::string csv_field(const std::string& s);  // quoted if it holds , " CR or LF
std::string csv_line(const CsvRecord& r);     // one row, with '\n'

// "" if a file could be created at `path` (its directory exists and is writable), otherwise
// "<directory>: <reason>". Used to refuse an output path before a long run, not after it.
std::string creatable_check(const std::string& path);

// "" if `path` can take our rows: it does not exist, is empty, or starts with our header line
// (and ends with a newline). Otherwise a message (without program name) saying why not.
std::string csv_check(const std::string& path);
// Appends `r` (plus the header if the file is new or empty) with a single write, under an
// exclusive flock so concurrent runs do not interleave. "" on success, else a message.
std::string csv_append(const std::string& path, const CsvRecord& r);

std::string format_version(int v);       // CUDA-style version number: 13000 -> "13.0"; <= 0 -> ""
std::string utc_iso8601(std::time_t t);  // "2025-11-21T09:45:00Z"

// ---------------------------------------------------------------------------------------------
// Which GPUs a step runs on (capability.cpp)
// ---------------------------------------------------------------------------------------------

struct GpuInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0, sm_count = 0;
  std::string refusal;  // why this step cannot run here ("" = it can): judge_devices
  std::string code;     // what the driver loaded, e.g. "sm_100f code" (loaded_code; "" = unknown)
};

struct GpuSurvey {
  std::vector<GpuInfo> devices;
  std::string error;  // why there are no devices, if the runtime said so
  int capable = -1;   // index into devices of the first one that can run the step
};

// The capability rule: "" if code built for `arch` runs on compute capability major.minor, else
// why not, e.g. "compute capability 12.0 is consumer Blackwell: no tcgen05". kSm100f (the
// tcgen05 steps): 10.0 and 10.3 only. kSm80Plus (step 00): 8.0 and newer.
std::string capability_refusal(Arch arch, int major, int minor);
// Sets each device's refusal and s.capable (the first device with none).
void judge_devices(GpuSurvey& s, Arch arch);
// "NVIDIA B200 (cc 10.0), NVIDIA GeForce RTX 5090 (compute capability 12.0 is ...)" or why none.
std::string describe_found(const GpuSurvey& s);
// "needs <what>" and "no <what> here" phrasings of the step's GPU requirement.
std::string need_long(Arch arch);
std::string need_short(Arch arch);
// The one line (no newline) of a run that needs a GPU and has none it can use:
// "<prog>: needs <need_long>; found <describe_found>".
std::string refusal_line(const std::string& prog, Arch arch, const GpuSurvey& s);
// What the driver loaded, from the binary's -gencode code= targets (space-separated, e.g.
// "sm_80 sm_90 sm_100 compute_100", or "sm_100f") and the SASS version of the loaded kernel
// (cudaFuncAttributes::binaryVersion, 100 = sm_100): "sm_100f code"; "compute_100 PTX compiled by
// the driver for sm_120" when no target matches but the binary has PTX; "" if binary_version <= 0.
std::string loaded_code(const std::string& targets, int binary_version);
// A GPU's name as a file-name word: "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA B300 SXM6 AC" ->
// "b300", "NVIDIA GB300" -> "gb300", "NVIDIA GeForce RTX 4090" -> "rtx_4090"; "" -> "gpu".
// Lower-case words without the vendor and brand words, each cut at its first '-', joined by '_'
// up to the first word with a digit (the model number). plots/bench.sh's gpu_slug is the same
// rule in bash (tests/checks/check_family.sh compares them).
std::string gpu_slug(const std::string& name);

// ---------------------------------------------------------------------------------------------
// GPU timelines (traces.cpp; docs/tracing.md)
// ---------------------------------------------------------------------------------------------

// Records per stream of a GPU trace of `num_ctas` CTAs: 4096, fewer when many CTAs are traced
// (the buffer stays within 64 MiB), never below kTraceMinCapacity.
uint32_t trace_capacity(size_t num_ctas);

// What the records of one traced launch (TraceBuf `layout`, its buffer copied to the host as
// `records`, layout.total_records() of them) turn into.
// Writes the timeline of a run, from either clock: adds the run's metadata (step, shape, inputs,
// git revision, date), checks the trace rules (trace::check_trace), writes o.trace_path and prints
// the "trace: wrote" line (`clock` says what the times are), naming the CTAs of --trace-ctas in
// `silent` that recorded nothing. Returns 0; 1 if the trace breaks the rules; 2 (bad use) if no
// traced CTA recorded anything or the file cannot be written; each after a one-line message.
int write_trace(const StepSpec& spec, const Options& o, trace::Trace& t, const std::vector<uint32_t>& silent,
                const std::string& clock);

struct GpuTrace {
  trace::Trace trace;  // spans, CTA and track names; meta: only "dropped_records" and
                       // "timer_step_ns" (the caller adds device, step, shape, ...)
  std::vector<std::string> errors;  // broken annotations (an end without its begin, a begin
                                    // never ended, ...), one line each; their spans are left out
  uint64_t records = 0;             // records read
  uint64_t dropped = 0;             // annotations the kernel could not store (full streams)
  std::vector<uint32_t> silent_ctas;  // traced CTAs that recorded nothing (not in the grid)
  // %globaltimer as seen in this launch: the smallest nonzero difference between consecutive
  // stamps of one stream, and the greatest common divisor of all of them (0: no such pair).
  uint64_t min_step_ns = 0, gcd_step_ns = 0;
};

// Matches each stream's begin and end records as a stack (spans nest) and turns them into
// spans: times relative to the earliest stamp of the launch; track 2w + s for stream s of warp w
// (named "warp 3", "warp 0 (elected)", with the warp's role appended: the first coarse phase
// other than setup and teardown, as in the emulator's traces); CTAs named "CTA 5 (SM 12)".
GpuTrace trace_from_records(const TraceBuf& layout, const TraceRecord* records);

// ---------------------------------------------------------------------------------------------
// A step's global scratch memory (StepSpec::workspace; workspace.cpp)
// ---------------------------------------------------------------------------------------------

constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;  // a sanity bound on what a step may ask for
// The step's workspace for the problem of `o` on `num_sms` SMs ({0, 0} if it declares none); a
// size past kMaxWorkspaceBytes or counters larger than the whole is a bug in the step: logic_error.
StepWorkspace workspace_for(const StepSpec& spec, const Options& o, int num_sms);
// Host memory `ws` of w.bytes: the counters zeroed (zero_counters), the rest 0xFF (FP32 NaN).
void prepare_workspace(uint8_t* ws, const StepWorkspace& w, bool zero_counters);
// "" if the first zeroed_bytes of `counters` are all 0 again, else which one is not.
std::string counters_not_reset(const uint8_t* counters, size_t zeroed_bytes);
// "" if two launches' FP16 outputs (count elements, rows of n) are bitwise identical, else where not.
std::string repeat_difference(const __half* first, const __half* second, int64_t count, int64_t n);

}  // namespace tcg::harness
