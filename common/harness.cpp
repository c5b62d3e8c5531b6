// harness.cpp — everything a step's main() does besides launching its kernel: command line,
// choice between GPU and emulator, inputs, reference, verification, timing, report, CSV.
//
// The pure pieces (parsing, inputs, CPU reference, verification, CSV) are declared in
// harness_internal.h and unit-tested by tests/test_harness.cpp; the GPU and emulator drivers at
// the end of this file glue them together.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <thread>
#include <utility>

#include "common/cuda_check.h"
#include "common/harness_internal.h"
#include "common/sim/sim_api.h"

// The Makefile passes the commit: -DTCG_GIT_REV="\"abc123\"".
#ifndef TCG_GIT_REV
#define TCG_GIT_REV "unknown"
#endif

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

namespace {

// printf into a std::string.
__attribute__((format(printf, 1, 2))) std::string strf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int len = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string s(len > 0 ? static_cast<size_t>(len) : 0, '\0');
  if (len > 0) std::vsnprintf(&s[0], s.size() + 1, format, again);
  va_end(again);
  return s;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// ---------------------------------------------------------------------------------------------
// Number parsing
// ---------------------------------------------------------------------------------------------

enum class NumStatus { kOk, kMalformed, kNegative, kOutOfRange };

// A plain decimal number: digits only (no sign, blanks or base prefix), nothing after them.
// A leading '-' followed by a valid number is reported as kNegative so the message can say so.
NumStatus parse_decimal(const std::string& text, uint64_t* out) {
  if (text.empty()) return NumStatus::kMalformed;
  if (text[0] == '-') {
    uint64_t ignored = 0;
    const NumStatus rest = parse_decimal(text.substr(1), &ignored);
    return rest == NumStatus::kMalformed ? NumStatus::kMalformed : NumStatus::kNegative;
  }
  // strtoull itself would skip blanks and accept '+' or '-', hence the first-character test.
  if (text[0] < '0' || text[0] > '9') return NumStatus::kMalformed;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0') return NumStatus::kMalformed;
  if (errno == ERANGE) return NumStatus::kOutOfRange;
  *out = v;
  return NumStatus::kOk;
}

// Parses `value` of flag `name` into [lo, hi]; returns "" or the error (without program name).
std::string parse_bounded(const std::string& name, const std::string& value, uint64_t lo,
                          uint64_t hi, uint64_t* out) {
  const std::string shown = name + "=" + value;
  const char* want = lo == 0 ? "a non-negative integer" : "a positive integer";
  switch (parse_decimal(value, out)) {
    case NumStatus::kMalformed:
      return shown + ": not a number (expected " + want + ")";
    case NumStatus::kNegative:
      return shown + ": must be " + want;
    case NumStatus::kOutOfRange:
      return shown + ": out of range (at most " + std::to_string(hi) + ")";
    case NumStatus::kOk:
      break;
  }
  if (*out < lo) return shown + ": must be " + want;
  if (*out > hi) return shown + ": out of range (at most " + std::to_string(hi) + ")";
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

const char* inputs_name(Inputs kind) { return kind == Inputs::kInteger ? "integer" : "random"; }

std::string program_name(const StepSpec& spec) { return strf("step%02d", spec.number); }

std::string usage(const StepSpec& spec) {
  const std::string p = program_name(spec);
  std::string u;
  u += "usage: " + p + " [options]\n";
  u += strf("%s: %s\n", p.c_str(), spec.title);
  u += "Computes C = A * B^T (A: MxK, B: NxK, C: MxN, all row-major BF16, FP32 accumulation),\n";
  u += "verifies it and times it against cuBLAS; without a suitable GPU it runs in the tcgen05\n";
  u += "emulator on the CPU.\n\n";
  u += strf("  --m N, --n N, --k N     problem size [%lld; %lld in the emulator]\n",
            static_cast<long long>(kGpuDefaultDim), static_cast<long long>(kSimDefaultDim));
  u += strf("                          (K must be a multiple of %d)\n", spec.k_multiple);
  u += "  --iters N               timed launches: at least N, and more (up to 1000) until they\n";
  u += "                          add up to 100 ms [20]\n";
  u += "  --warmup N              untimed launches before timing [5]\n";
  u += "  --seed N                seed of the inputs [1]\n";
  u += "  --inputs random|integer random: uniform in [-1,1]; integer: integers in [-2,2],\n";
  u += "                          checked exactly [random]\n";
  u += "  --check, --no-check     verify against a reference (cuBLAS, or the CPU) [--check]\n";
  u += "  --csv FILE              append one result row to FILE (header written if new)\n";
  u += "  --gpu                   insist on a GPU run (exit 3 if there is no suitable GPU)\n";
  u += "  --sim                   run in the tcgen05 emulator even if a GPU is present\n";
  u += "  --sim-seed N            emulator scheduler seed [1]\n";
  u += "  -h, --help              this text\n";
  u += "Both '--m 512' and '--m=512' work.\n";
  u += "Exit codes: 0 ok, 1 wrong result or emulator/CUDA error, 2 usage error,\n";
  u += "3 cannot run here.\n";
  return u;
}

std::string validate_shape(const StepSpec& spec, const Options& o) {
  const std::string prog = program_name(spec) + ": ";
  const struct {
    const char* flag;
    int64_t value;
  } dims[] = {{"--m", o.m}, {"--n", o.n}, {"--k", o.k}};
  for (const auto& d : dims) {
    if (d.value < 1 || d.value > kMaxDim)
      return prog + strf("%s=%lld: must be between 1 and %lld", d.flag,
                         static_cast<long long>(d.value), static_cast<long long>(kMaxDim));
  }
  const int64_t km = spec.k_multiple > 0 ? spec.k_multiple : 1;
  if (o.k % km != 0) {
    // TMA needs every global row pitch to be a multiple of 16 bytes; with BF16 that is K % 8.
    const char* why = km * 2 == 16 ? "TMA row pitch must be a multiple of 16 bytes"
                                   : "a requirement of this step's kernel";
    return prog + strf("--k=%lld: K must be a multiple of %lld (%s)", static_cast<long long>(o.k),
                       static_cast<long long>(km), why);
  }
  // Dimensions are <= 2^24, so the products below cannot overflow int64.
  const struct {
    const char* what;
    int64_t elements;
  } operands[] = {{"A (M x K)", o.m * o.k}, {"B (N x K)", o.n * o.k}, {"C (M x N)", o.m * o.n}};
  for (const auto& op : operands) {
    if (op.elements > kMaxElements)
      return prog + strf(
                        "--m=%lld --n=%lld --k=%lld: %s would have %lld elements, more than "
                        "2^31-1 (kernels use 32-bit element offsets)",
                        static_cast<long long>(o.m), static_cast<long long>(o.n),
                        static_cast<long long>(o.k), op.what, static_cast<long long>(op.elements));
  }
  if (o.inputs == Inputs::kInteger && o.k > kMaxIntegerK)
    return prog + strf(
                      "--k=%lld: --inputs integer needs K <= %lld (larger sums of products are "
                      "not exact in FP32)",
                      static_cast<long long>(o.k), static_cast<long long>(kMaxIntegerK));
  return "";
}

void apply_emulator_defaults(Options& o) {
  if (!o.m_given) o.m = kSimDefaultDim;
  if (!o.n_given) o.n = kSimDefaultDim;
  if (!o.k_given) o.k = kSimDefaultDim;
}

ParseResult parse_args(const StepSpec& spec, const std::vector<std::string>& args) {
  ParseResult r;
  Options& o = r.options;
  const std::string prog = program_name(spec) + ": ";
  auto fail = [&](const std::string& message) {
    r.error = prog + message;
    return r;
  };

  // --help wins wherever it appears, even next to otherwise bad arguments.
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      r.help = true;
      return r;
    }
  }

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 3 || !starts_with(arg, "--"))
      return fail("unexpected argument " + arg + " (see --help)");
    std::string name = arg, value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }

    // Switches (no value).
    bool* switch_target = nullptr;
    bool switch_value = true;
    if (name == "--check") {
      switch_target = &o.check;
    } else if (name == "--no-check") {
      switch_target = &o.check;
      switch_value = false;
    } else if (name == "--gpu") {
      switch_target = &o.force_gpu;
    } else if (name == "--sim") {
      switch_target = &o.force_sim;
    }
    if (switch_target != nullptr) {
      if (has_value) return fail(name + " takes no value");
      *switch_target = switch_value;
      continue;
    }

    // Flags with a value.
    static const char* const kValued[] = {"--m",    "--n",      "--k",   "--iters",   "--warmup",
                                          "--seed", "--inputs", "--csv", "--sim-seed"};
    if (std::find_if(std::begin(kValued), std::end(kValued),
                     [&](const char* f) { return name == f; }) == std::end(kValued))
      return fail("unknown flag " + name + " (see --help)");
    if (!has_value) {
      // "--m --n 5" means --m lost its value; a lone "-5" is a value (and rejected as negative).
      if (i + 1 >= args.size() || starts_with(args[i + 1], "--"))
        return fail(name + " needs a value");
      value = args[++i];
    }

    uint64_t v = 0;
    std::string err;
    if (name == "--m" || name == "--n" || name == "--k") {
      err = parse_bounded(name, value, 1, static_cast<uint64_t>(kMaxDim), &v);
      if (name == "--m") {
        o.m = static_cast<int64_t>(v);
        o.m_given = true;
      }
      if (name == "--n") {
        o.n = static_cast<int64_t>(v);
        o.n_given = true;
      }
      if (name == "--k") {
        o.k = static_cast<int64_t>(v);
        o.k_given = true;
      }
    } else if (name == "--iters") {
      err = parse_bounded(name, value, 1, kMaxCount, &v);
      o.iters = static_cast<int>(v);
    } else if (name == "--warmup") {
      err = parse_bounded(name, value, 0, kMaxCount, &v);
      o.warmup = static_cast<int>(v);
    } else if (name == "--seed") {
      err = parse_bounded(name, value, 0, UINT64_MAX, &v);
      o.seed = v;
    } else if (name == "--sim-seed") {
      err = parse_bounded(name, value, 0, UINT64_MAX, &v);
      o.sim_seed = v;
    } else if (name == "--inputs") {
      if (value == "random") {
        o.inputs = Inputs::kRandom;
      } else if (value == "integer") {
        o.inputs = Inputs::kInteger;
      } else {
        err = name + "=" + value + ": expected random or integer";
      }
    } else if (name == "--csv") {
      if (value.empty()) err = "--csv needs a file name";
      o.csv = value;
    }
    if (!err.empty()) return fail(err);
  }

  if (o.force_gpu && o.force_sim) return fail("--gpu and --sim contradict each other (pick one)");
  r.error = validate_shape(spec, o);
  return r;
}

// ---------------------------------------------------------------------------------------------
// BF16 and inputs
// ---------------------------------------------------------------------------------------------

// The conversions of cuda_bf16.h, the ones the kernels use (its host implementation also serves
// the emulator build), so the expected BF16 bits are rounded exactly as the kernels round.
uint16_t float_to_bf16_bits(float x) { return bf16_bits(__float2bfloat16_rn(x)); }

float bf16_bits_to_float(uint16_t bits) { return __bfloat162float(bf16_from_bits(bits)); }

// __nv_bfloat16 keeps its bits private; __nv_bfloat16_raw is the public way in and out.
uint16_t bf16_bits(__nv_bfloat16 x) { return static_cast<__nv_bfloat16_raw>(x).x; }

__nv_bfloat16 bf16_from_bits(uint16_t bits) {
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __nv_bfloat16(raw);
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void fill_input(Inputs kind, uint64_t seed, uint64_t stream_id, __nv_bfloat16* dst, size_t count) {
  // Hash (seed, stream_id) into the generator's starting point, so that neighbouring seeds or
  // stream ids start at unrelated places of splitmix64's 2^64-long sequence.
  uint64_t s = seed;
  uint64_t mixed = splitmix64(s) ^ ((stream_id + 1) * 0xD6E8FEB86659FD93ull);
  uint64_t state = splitmix64(mixed);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t x = splitmix64(state);
    float v;
    if (kind == Inputs::kInteger) {
      // Top 32 bits scaled to [0, 5): multiply-shift instead of % avoids modulo bias.
      v = static_cast<float>(static_cast<int>(((x >> 32) * 5) >> 32) - 2);
    } else {
      // 24 random bits -> a multiple of 2^-23 in [-1, 1), exact in float; RN to BF16 can round the
      // top values up to 1.0, so the result lies in [-1, 1].
      v = static_cast<float>(x >> 40) * 0x1p-23f - 1.0f;
    }
    dst[i] = bf16_from_bits(float_to_bf16_bits(v));
  }
}

HostInputs make_inputs(Inputs kind, uint64_t seed, int64_t m, int64_t n, int64_t k) {
  HostInputs in;
  in.a.resize(static_cast<size_t>(m) * static_cast<size_t>(k));
  in.b.resize(static_cast<size_t>(n) * static_cast<size_t>(k));
  fill_input(kind, seed, 0, in.a.data(), in.a.size());
  fill_input(kind, seed, 1, in.b.data(), in.b.size());
  return in;
}

// ---------------------------------------------------------------------------------------------
// Reference and verification
// ---------------------------------------------------------------------------------------------

namespace {

// The loops of cpu_reference. Products of two BF16 values are exact in double (8+8 significant
// bits), and four independent accumulators keep the adder pipeline busy.
template <bool kWithS>
void reference_rows(const float* af, const float* bf, int64_t m, int64_t n, int64_t k, float* ref,
                    float* s) {
  for (int64_t i = 0; i < m; ++i) {
    const float* ar = af + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const float* br = bf + j * k;
      double d0 = 0, d1 = 0, d2 = 0, d3 = 0;
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int64_t q = 0;
      for (; q + 4 <= k; q += 4) {
        const double p0 = double(ar[q]) * br[q], p1 = double(ar[q + 1]) * br[q + 1];
        const double p2 = double(ar[q + 2]) * br[q + 2], p3 = double(ar[q + 3]) * br[q + 3];
        d0 += p0;
        d1 += p1;
        d2 += p2;
        d3 += p3;
        if (kWithS) {
          s0 += std::fabs(p0);
          s1 += std::fabs(p1);
          s2 += std::fabs(p2);
          s3 += std::fabs(p3);
        }
      }
      for (; q < k; ++q) {
        const double p = double(ar[q]) * br[q];
        d0 += p;
        if (kWithS) s0 += std::fabs(p);
      }
      ref[i * n + j] = static_cast<float>((d0 + d1) + (d2 + d3));
      if (kWithS) s[i * n + j] = static_cast<float>((s0 + s1) + (s2 + s3));
    }
  }
}

std::vector<float> to_floats(const __nv_bfloat16* x, size_t count) {
  std::vector<float> f(count);
  for (size_t i = 0; i < count; ++i) f[i] = bf16_to_float(x[i]);
  return f;
}

}  // namespace

void cpu_reference(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t m, int64_t n, int64_t k,
                   float* ref, float* s) {
  // Convert once: the inner loop then reads plain floats along contiguous rows of A and B.
  const std::vector<float> af = to_floats(a, static_cast<size_t>(m * k));
  const std::vector<float> bf = to_floats(b, static_cast<size_t>(n * k));
  if (s != nullptr)
    reference_rows<true>(af.data(), bf.data(), m, n, k, ref, s);
  else
    reference_rows<false>(af.data(), bf.data(), m, n, k, ref, nullptr);
}

// Why this tolerance. Let x be the exact dot product for C[i][j] and S = sum_k |a_ik|·|b_jk|.
//  * Accumulation: the kernel and the reference (cuBLAS, itself on tensor cores) both sum K
//    products in FP32, in orders we do not know. Any order of K additions stays within K·u·S of x
//    (the standard first-order bound for summation). We take u = 2^-23, the bound for truncation,
//    because the rounding of tensor-core accumulation is not specified. So the kernel's FP32 sum y
//    and the reference r differ by at most 2·K·u·S. (The CPU reference, summed in double, is
//    closer still.)
//  * Output rounding: the kernel rounds y to BF16 (8 significant bits) to nearest: at most half an
//    ulp, 2^-8·|y|. We write 2^-8·|r|; the difference, at most 2^-8·2·K·u·S, is second order and
//    swamped by the pessimism of the K·u·S bound (real accumulation errors grow far slower).
//  * 2^-133, the smallest BF16 subnormal, covers results that underflow (r = 0, S tiny).
// Note the first term is tight: a correctly rounded result can be off by nearly 2^-8·|r| (just
// above a power of two), so err/tol ratios close to 1 are normal; above 1 is a failure.
double tolerance(double ref, double s, int64_t k) {
  return std::ldexp(std::fabs(ref), -8) + 2.0 * static_cast<double>(k) * std::ldexp(s, -23) +
         std::ldexp(1.0, -133);
}

VerifyResult verify(Inputs kind, const __nv_bfloat16* out, const float* ref, const float* s,
                    int64_t m, int64_t n, int64_t k) {
  VerifyResult r;
  r.inputs = kind;
  r.total = m * n;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = i * n + j;
      const double got = bf16_to_float(out[idx]);
      double expected, tol;
      bool ok;
      if (kind == Inputs::kInteger) {
        // The reference is an exact integer; the kernel's only rounding is the final one to BF16.
        expected = bf16_bits_to_float(float_to_bf16_bits(ref[idx]));
        tol = 0;
        ok = got == expected;  // value comparison: -0 == +0, NaN never equal
      } else {
        expected = ref[idx];
        tol = tolerance(expected, s != nullptr ? s[idx] : std::fabs(expected), k);
        ok = std::fabs(got - expected) <= tol;  // false for NaN
      }
      if (!std::isfinite(got)) {
        ++r.nonfinite;
        ok = false;
      } else {
        const double err = std::fabs(got - expected);
        if (err > r.max_abs_err || r.max_i < 0) {
          r.max_abs_err = err;
          r.max_i = i;
          r.max_j = j;
        }
        if (tol > 0) r.max_ratio = std::max(r.max_ratio, err / tol);
      }
      if (!ok) {
        ++r.mismatches;
        if (static_cast<int>(r.first.size()) < kMaxListed)
          r.first.push_back({i, j, expected, got, tol});
      }
    }
  }
  return r;
}

std::string format_verify(const VerifyResult& r) {
  const long long total = static_cast<long long>(r.total);
  if (r.passed()) {
    if (r.inputs == Inputs::kInteger) return strf("PASS: all %lld elements exact", total);
    return strf("PASS: %lld elements, max |err| %.3g at C[%lld][%lld], max err/tol %.3g", total,
                r.max_abs_err, static_cast<long long>(r.max_i), static_cast<long long>(r.max_j),
                r.max_ratio);
  }
  std::string s =
      strf("FAIL: %lld of %lld elements wrong, %lld NaN/Inf", static_cast<long long>(r.mismatches),
           total, static_cast<long long>(r.nonfinite));
  if (r.max_i >= 0)
    s += strf("; max |err| %.6g at C[%lld][%lld]", r.max_abs_err, static_cast<long long>(r.max_i),
              static_cast<long long>(r.max_j));
  for (const Mismatch& mm : r.first) {
    s += strf("\n  C[%lld][%lld]: expected %.9g, got %.9g", static_cast<long long>(mm.i),
              static_cast<long long>(mm.j), mm.expected, mm.got);
    s += r.inputs == Inputs::kInteger ? std::string(" (exact)") : strf(" (tol %.3g)", mm.tol);
  }
  if (r.mismatches > static_cast<int64_t>(r.first.size()))
    s += strf("\n  ... and %lld more",
              static_cast<long long>(r.mismatches - static_cast<int64_t>(r.first.size())));
  return s;
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

std::string csv_header() {
  return "step,step_name,gpu,sm_count,driver,cuda_runtime,cublas,m,n,k,dtype,inputs,iterations,"
         "median_ms,tflops,cublas_tflops,ratio,max_abs_err,verified,date,git_rev\n";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';  // a quote inside a quoted field is doubled
    q += c;
  }
  return q + "\"";
}

std::string csv_line(const CsvRecord& r) {
  const std::string* fields[] = {
      &r.step,          &r.step_name, &r.gpu,         &r.sm_count,  &r.driver,
      &r.cuda_runtime,  &r.cublas,    &r.m,           &r.n,         &r.k,
      &r.dtype,         &r.inputs,    &r.iterations,  &r.median_ms, &r.tflops,
      &r.cublas_tflops, &r.ratio,     &r.max_abs_err, &r.verified,  &r.date,
      &r.git_rev};
  std::string line;
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
    if (i > 0) line += ',';
    line += csv_field(*fields[i]);
  }
  return line + "\n";
}

namespace {

// Owns a POSIX file descriptor.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Decides whether the open file `fd` may take our rows. *empty: nothing in it yet (write the
// header first). Files that are not regular (a pipe, /dev/stdout) are treated as empty.
std::string inspect_csv(int fd, const std::string& path, bool* empty) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return path + ": " + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return path + ": is a directory";
  *empty = !S_ISREG(st.st_mode) || st.st_size == 0;
  if (*empty) return "";
  const std::string header = csv_header();
  std::string first(header.size(), '\0');
  const ssize_t got = ::pread(fd, &first[0], first.size(), 0);
  if (got < 0) return path + ": " + std::strerror(errno);
  if (static_cast<size_t>(got) != header.size() || first != header)
    return path +
           ": first line is not this harness's CSV header; refusing to append (use a new file)";
  char last = 0;
  if (::pread(fd, &last, 1, st.st_size - 1) != 1) return path + ": " + std::strerror(errno);
  if (last != '\n')
    return path + ": does not end with a newline (an interrupted write?); refusing to append";
  return "";
}

}  // namespace

std::string csv_check(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno != ENOENT) return path + ": " + std::strerror(errno);
    // A new file: its directory must exist and be writable, or the append would fail only after
    // the whole run.
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : path.substr(0, slash);
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      return path + ": cannot create it (" + dir + ": " + std::strerror(errno) + ")";
    return "";
  }
  bool empty = false;
  return inspect_csv(fd.get(), path, &empty);
}

std::string csv_append(const std::string& path, const CsvRecord& r) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) return path + ": " + std::strerror(errno);
  // Serialise against other runs appending to the same file, so the "is it empty, then write the
  // header" decision and the write happen as one step. Filesystems without flock: carry on.
  (void)::flock(fd.get(), LOCK_EX);
  bool empty = false;
  const std::string err = inspect_csv(fd.get(), path, &empty);
  if (!err.empty()) return err;
  const std::string text = (empty ? csv_header() : std::string()) + csv_line(r);
  // One write() for the whole text; the loop only matters for the rare short write.
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd.get(), text.data() + done, text.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return path + ": " + std::strerror(errno);
    }
    done += static_cast<size_t>(w);
  }
  if (::close(fd.release()) != 0) return path + ": " + std::strerror(errno);  // releases the lock
  return "";
}

std::string format_version(int v) {
  if (v <= 0) return "";
  return strf("%d.%d", v / 1000, (v % 1000) / 10);
}

std::string utc_iso8601(std::time_t t) {
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "";
  char buf[32];
  const size_t len = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, len);
}

// ---------------------------------------------------------------------------------------------
// GPU and emulator drivers
// ---------------------------------------------------------------------------------------------

namespace {

constexpr double kMinTimedMs = 100.0;    // keep timing until the launches add up to this...
constexpr int kMaxTimedLaunches = 1000;  // ...but stop extending at this many launches

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

bool is_capable(Arch arch, int major, int minor) {
  if (arch == Arch::kSm100a) return major == 10 && minor == 0;  // sm_100a runs nowhere else
  return major >= 8;
}

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

void print_problem(const StepSpec& spec, const Options& o, const std::string& device) {
  std::printf("%s: %s\n", program_name(spec).c_str(), spec.title);
  std::printf("device:   %s\n", device.c_str());
  std::printf("shape:    M=%lld N=%lld K=%lld (C = A * B^T, BF16 in and out, FP32 accumulation)\n",
              static_cast<long long>(o.m), static_cast<long long>(o.n),
              static_cast<long long>(o.k));
  if (o.inputs == Inputs::kInteger)
    std::printf("inputs:   integer, uniform in [-2, 2], seed %llu\n",
                static_cast<unsigned long long>(o.seed));
  else
    std::printf("inputs:   random, uniform in [-1, 1] rounded to BF16, seed %llu\n",
                static_cast<unsigned long long>(o.seed));
}

// The row fields that do not depend on where the step ran.
CsvRecord base_record(const StepSpec& spec, const Options& o, const VerifyResult* vr) {
  CsvRecord r;
  r.step = std::to_string(spec.number);
  r.step_name = spec.name;
  int runtime = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  r.cuda_runtime = format_version(runtime);
  r.m = std::to_string(o.m);
  r.n = std::to_string(o.n);
  r.k = std::to_string(o.k);
  r.inputs = inputs_name(o.inputs);
  if (vr != nullptr) {
    r.max_abs_err = strf("%.6g", vr->max_abs_err);
    r.verified = vr->passed() ? "yes" : "no";
  } else {
    r.verified = "skipped";
  }
  r.date = utc_iso8601(std::time(nullptr));
  r.git_rev = TCG_GIT_REV;
  return r;
}

// Appends the row if --csv was given and turns the outcome into the exit code.
int finish(const StepSpec& spec, const Options& o, const VerifyResult* vr, const CsvRecord& row) {
  bool csv_ok = true;
  if (!o.csv.empty()) {
    std::fflush(stdout);  // the report first, should the CSV file be stdout itself
    const std::string err = csv_append(o.csv, row);
    if (!err.empty()) {
      std::fprintf(stderr, "%s: %s\n", program_name(spec).c_str(), err.c_str());
      csv_ok = false;
    }
  }
  if (vr != nullptr && !vr->passed()) return 1;
  return csv_ok ? 0 : 2;
}

void print_verify(const VerifyResult* vr) {
  if (vr == nullptr)
    std::printf("check:    skipped (--no-check)\n");
  else
    std::printf("check:    %s\n", format_verify(*vr).c_str());
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

struct Timing {
  double median_ms = 0;
  int launches = 0;
};

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
void launch_step(LaunchFn launch, const GemmArgs& args) {
  launch(args);
  try {
    CUDA_CHECK(cudaGetLastError());
  } catch (const CudaError& e) {
    throw CudaError(std::string("the step's kernel launch failed: ") + e.what());
  }
}

double tflops(const Options& o, double ms) {
  return 2.0 * double(o.m) * double(o.n) * double(o.k) / (ms * 1e-3) / 1e12;
}

int run_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu) {
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

  // The checked launch. C starts as NaN (0xFFFF is a BF16 NaN) so that any element the kernel
  // never writes shows up in the check.
  CUDA_CHECK(cudaMemsetAsync(c.get(), 0xFF, c.bytes(), stream.get()));
  launch_step(launch, args);
  try {
    wait_or_give_up(stream.get(), spec);
  } catch (const CudaError& e) {
    throw CudaError(std::string("the step's kernel failed while running: ") + e.what());
  }
  std::vector<__nv_bfloat16> out(count_c);
  CUDA_CHECK(cudaMemcpyAsync(out.data(), c.get(), c.bytes(), cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

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
  const Timing ours =
      time_launches([&] { launch_step(launch, args); }, stream.get(), flush, o.warmup, o.iters);
  // Our kernel has already run once untimed (the checked launch); give cuBLAS at least one
  // untimed call too, so its one-time setup is never timed.
  const Timing theirs =
      time_launches([&] { cublas_gemm(blas.get(), a.get(), b.get(), c.get(), CUDA_R_16BF, o); },
                    stream.get(), flush, std::max(o.warmup, 1), o.iters);

  const double ours_tflops = tflops(o, ours.median_ms), theirs_tflops = tflops(o, theirs.median_ms);
  std::printf("time:     %.4f ms median of %d launches (L2 flushed) = %.1f TFLOPS\n",
              ours.median_ms, ours.launches, ours_tflops);
  std::printf("cuBLAS:   %.4f ms = %.1f TFLOPS; this step reaches %.1f%% of cuBLAS\n",
              theirs.median_ms, theirs_tflops, 100.0 * ours_tflops / theirs_tflops);

  CsvRecord row = base_record(spec, o, o.check ? &vr : nullptr);
  row.gpu = gpu.name;
  row.sm_count = std::to_string(gpu.sm_count);
  row.driver = driver_description();
  int cublas_major = 0, cublas_minor = 0, cublas_patch = 0;
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &cublas_major));
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &cublas_minor));
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &cublas_patch));
  row.cublas = strf("%d.%d.%d", cublas_major, cublas_minor, cublas_patch);
  row.iterations = std::to_string(ours.launches);
  row.median_ms = strf("%.6f", ours.median_ms);
  row.tflops = strf("%.2f", ours_tflops);
  row.cublas_tflops = strf("%.2f", theirs_tflops);
  row.ratio = strf("%.4f", ours_tflops / theirs_tflops);
  return finish(spec, o, o.check ? &vr : nullptr, row);
}

int run_in_emulator(const StepSpec& spec, const Options& o, LaunchFn launch) {
  print_problem(spec, o, "tcgen05 emulator on the CPU");
  const HostInputs in = make_inputs(o.inputs, o.seed, o.m, o.n, o.k);
  // "Device" memory is host memory here; C starts as NaN, as on the GPU.
  std::vector<__nv_bfloat16> out(static_cast<size_t>(o.m * o.n), bf16_from_bits(0xFFFFu));

  tcsim::Options so = tcsim::options();
  so.seed = o.sim_seed;
  tcsim::set_options(so);

  GemmArgs args;
  args.m = static_cast<int>(o.m);
  args.n = static_cast<int>(o.n);
  args.k = static_cast<int>(o.k);
  args.a = in.a.data();
  args.b = in.b.data();
  args.c = out.data();
  args.stream = nullptr;
  launch(args);  // a tcsim::SimError propagates to run_step, which reports it (exit 1)
  const tcsim::Stats st = tcsim::last_stats();

  VerifyResult vr;
  if (o.check) {
    std::vector<float> ref(out.size()), s;
    if (o.inputs == Inputs::kRandom) s.resize(out.size());
    cpu_reference(in.a.data(), in.b.data(), o.m, o.n, o.k, ref.data(),
                  s.empty() ? nullptr : s.data());
    vr = verify(o.inputs, out.data(), ref.data(), s.empty() ? nullptr : s.data(), o.m, o.n, o.k);
  }
  print_verify(o.check ? &vr : nullptr);

  const double rest = std::max(0.0, st.wall_seconds - st.mma_seconds - st.copy_seconds);
  std::printf(
      "emulated: %llu CTAs, %llu MMAs, %llu TMA copies (%.2f MiB), %llu blocking barrier "
      "waits, %llu fiber switches, %llu instructions\n",
      static_cast<unsigned long long>(st.ctas), static_cast<unsigned long long>(st.mmas),
      static_cast<unsigned long long>(st.tma_copies), double(st.tma_bytes) / (1024.0 * 1024.0),
      static_cast<unsigned long long>(st.barrier_waits),
      static_cast<unsigned long long>(st.fiber_switches),
      static_cast<unsigned long long>(st.instructions));
  std::printf(
      "wall:     %.3f s = %.3f s MMA arithmetic + %.3f s copies + %.3f s rest "
      "(emulator time, not a GPU estimate)\n",
      st.wall_seconds, st.mma_seconds, st.copy_seconds, rest);

  CsvRecord row = base_record(spec, o, o.check ? &vr : nullptr);
  row.gpu = "tcgen05-emulator";
  row.iterations = "1";
  return finish(spec, o, o.check ? &vr : nullptr, row);
}

}  // namespace

}  // namespace tcg::harness

namespace tcg {

int run_step(const StepSpec& spec, LaunchFn gpu_launch, LaunchFn sim_launch, int argc,
             char** argv) {
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
    Options o = parsed.options;
    // Refuse an unusable CSV file now, not after a long run.
    if (!o.csv.empty()) {
      const std::string err = csv_check(o.csv);
      if (!err.empty()) {
        std::fprintf(stderr, "%s: %s\n", prog.c_str(), err.c_str());
        return 2;
      }
    }

    const GpuSurvey gpus = survey_gpus(spec.arch);
    if (gpus.capable >= 0 && !o.force_sim && gpu_launch != nullptr)
      return run_on_gpu(spec, o, gpu_launch, gpus.devices[static_cast<size_t>(gpus.capable)]);

    std::string found = describe_found(gpus);
    if (gpus.capable >= 0 && gpu_launch == nullptr) found += ", but this binary has no GPU kernel";
    if (o.force_gpu || sim_launch == nullptr) {
      std::fprintf(stderr, "%s: needs %s; found %s\n", prog.c_str(), need_long(spec.arch).c_str(),
                   found.c_str());
      return 3;
    }
    if (o.force_sim)
      std::fprintf(stderr, "%s: running in the tcgen05 emulator (--sim-seed %llu)\n", prog.c_str(),
                   static_cast<unsigned long long>(o.sim_seed));
    else
      std::fprintf(stderr,
                   "%s: no %s here (found %s); running in the tcgen05 emulator (--sim-seed %llu)\n",
                   prog.c_str(), need_short(spec.arch).c_str(), found.c_str(),
                   static_cast<unsigned long long>(o.sim_seed));
    apply_emulator_defaults(o);
    const std::string err = validate_shape(spec, o);
    if (!err.empty()) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 2;
    }
    return run_in_emulator(spec, o, sim_launch);
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
