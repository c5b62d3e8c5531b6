// harness_internal.h — the pure, host-only pieces of the harness (common/harness.cpp), exposed so
// that tests/test_harness.cpp can call them directly: command-line parsing, input generation,
// the CPU reference, verification, and CSV output. Nothing here touches a GPU or the emulator.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "common/step.h"

namespace tcg::harness {

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

enum class Inputs {
  kRandom,   // uniform in [-1, 1], rounded to BF16
  kInteger,  // integers uniform in [-2, 2]: every FP32 partial sum is exact, so checks are exact
};
const char* inputs_name(Inputs kind);  // "random" / "integer"

constexpr int64_t kGpuDefaultDim = 4096;
constexpr int64_t kSimDefaultDim = 512;
constexpr int64_t kMaxDim = int64_t{1} << 24;
// Kernels index A, B and C with 32-bit int element offsets, so no operand may reach 2^31 elements.
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;
// Integer inputs have |a*b| <= 4, so every partial sum is an integer of magnitude <= 4K; FP32
// represents all of them exactly only while 4K <= 2^24.
constexpr int64_t kMaxIntegerK = int64_t{1} << 22;
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
};

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

// Replaces every dimension the user did not give with kSimDefaultDim.
void apply_emulator_defaults(Options& o);

// ---------------------------------------------------------------------------------------------
// BF16 and inputs
// ---------------------------------------------------------------------------------------------

uint16_t float_to_bf16_bits(float x);  // round to nearest even; NaN stays a (quiet) NaN
float bf16_bits_to_float(uint16_t bits);
uint16_t bf16_bits(__nv_bfloat16 x);
__nv_bfloat16 bf16_from_bits(uint16_t bits);
inline float bf16_to_float(__nv_bfloat16 x) { return bf16_bits_to_float(bf16_bits(x)); }

// The next value of a splitmix64 generator (advances `state`).
uint64_t splitmix64(uint64_t& state);

// Fills dst[0..count) from the generator stream (seed, stream_id); different stream ids give
// independent sequences. Deterministic: the same arguments always give the same values.
void fill_input(Inputs kind, uint64_t seed, uint64_t stream_id, __nv_bfloat16* dst, size_t count);

struct HostInputs {
  std::vector<__nv_bfloat16> a;  // m x k row-major
  std::vector<__nv_bfloat16> b;  // n x k row-major
};
// A uses stream 0 and B stream 1 of `seed`.
HostInputs make_inputs(Inputs kind, uint64_t seed, int64_t m, int64_t n, int64_t k);

// ---------------------------------------------------------------------------------------------
// Reference and verification
// ---------------------------------------------------------------------------------------------

// ref[i*n + j] = sum_k a[i][k] * b[j][k], accumulated in double (exact for integer inputs), then
// stored as float. If `s` is not null, s[i*n + j] = sum_k |a[i][k]| * |b[j][k]| likewise.
void cpu_reference(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t m, int64_t n, int64_t k,
                   float* ref, float* s);

// Tolerance for one output element of a `random` run (see harness.cpp for the derivation):
//   tol = 2^-8 * |ref| + 2 * K * 2^-23 * S + 2^-133
double tolerance(double ref, double s, int64_t k);

struct Mismatch {
  int64_t i = 0, j = 0;
  double expected = 0, got = 0;
  double tol = 0;  // 0 for exact (integer) comparisons
};

struct VerifyResult {
  Inputs inputs = Inputs::kRandom;
  int64_t total = 0;       // M * N
  int64_t mismatches = 0;  // elements outside tolerance, NaN/Inf included
  int64_t nonfinite = 0;   // NaN or Inf in the output
  double max_abs_err = 0;  // over the finite outputs
  int64_t max_i = -1, max_j = -1;
  double max_ratio = 0;         // max |err| / tol over the finite outputs (random inputs only)
  std::vector<Mismatch> first;  // the first kMaxListed mismatches in row-major order
  bool passed() const { return mismatches == 0; }
};
constexpr int kMaxListed = 8;

// Compares the kernel's output `out` (M x N) with the reference `ref` (FP32, as computed by cuBLAS
// or cpu_reference). integer: exact, out must equal BF16_RN(ref) (-0 == +0). random:
// |out - ref| <= tolerance(ref, s, k); `s` (= |A|·|B|^T) may be null, then |ref| stands in for it.
VerifyResult verify(Inputs kind, const __nv_bfloat16* out, const float* ref, const float* s,
                    int64_t m, int64_t n, int64_t k);

// Pass: one line (no newline). Fail: several lines, each ending in '\n' except the last.
std::string format_verify(const VerifyResult& r);

// ---------------------------------------------------------------------------------------------
// CSV
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

// "" if `path` can take our rows: it does not exist, is empty, or starts with our header line
// (and ends with a newline). Otherwise a message (without program name) saying why not.
std::string csv_check(const std::string& path);
// Appends `r` (plus the header if the file is new or empty) with a single write, under an
// exclusive flock so concurrent runs do not interleave. "" on success, else a message.
std::string csv_append(const std::string& path, const CsvRecord& r);

std::string format_version(int v);       // CUDA-style version number: 13000 -> "13.0"; <= 0 -> ""
std::string utc_iso8601(std::time_t t);  // "2025-11-21T09:45:00Z"

}  // namespace tcg::harness
