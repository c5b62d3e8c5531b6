// cli.cpp — the command line of every step: the flags and their values, the usage text,
// whether the step can handle the requested shape, and the emulator's smaller default shape.
// Parsing never exits or prints: it returns the options, a request for help, or one error line
// for run_step (run_step.cpp) to print.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "common/harness/internal.h"

namespace tcg::harness {

namespace {

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

const char* inputs_name(Inputs kind) {
  return kind == Inputs::kInteger       ? "integer"
         : kind == Inputs::kWide        ? "wide"
         : kind == Inputs::kCompetition ? "competition"
                                        : "random";
}

std::string program_name(const StepSpec& spec) { return strf("step%02d", spec.number); }

std::string usage(const StepSpec& spec) {
  const std::string p = program_name(spec);
  const bool fp4 = is_nvfp4(spec.operands);
  std::string u;
  u += "usage: " + p + " [options]\n";
  u += strf("%s: %s\n", p.c_str(), spec.title);
  const bool grouped = spec.operands == Operands::kNVFP4Grouped;
  if (grouped) {
    u += "Computes G GEMMs in one launch, C_g = A_g * B_g^T (A_g: M_g x K, B_g: N x K, NVFP4; C_g: M_g x N\n";
    u += "FP16; FP32 accumulation), as a mixture-of-experts layer does, verifies every group against\n";
    u += "the CPU and times it; without a suitable GPU it runs in the tcgen05 emulator on the CPU.\n\n";
  } else if (spec.operands == Operands::kNVFP4DualSilu) {
    u += "Computes C = silu(A * B1^T) * (A * B2^T) (A: MxK, B1 and B2: NxK, all NVFP4: E2M1 values\n";
    u += "with one UE4M3 scale per 16 along K; C: MxN row-major FP16; FP32 accumulation and\n";
    u += "epilogue), verifies it against the CPU and times it; without a suitable GPU it runs in\n";
    u += "the tcgen05 emulator on the CPU.\n\n";
  } else if (fp4) {
    u += "Computes C = A * B^T (A: MxK, B: NxK, both NVFP4: E2M1 values with one UE4M3 scale per\n";
    u += "16 along K; C: MxN row-major FP16; FP32 accumulation), verifies it and times it against\n";
    u += "cuBLASLt; without a suitable GPU it runs in the tcgen05 emulator on the CPU.\n\n";
  } else {
    u += "Computes C = A * B^T (A: MxK, B: NxK, C: MxN, all row-major BF16, FP32 accumulation),\n";
    u += "verifies it and times it against cuBLAS; without a suitable GPU it runs in the tcgen05\n";
    u += "emulator on the CPU.\n\n";
  }
  if (grouped) {
    u += "  --groups LIST|FILE|PRESET  the groups: M of each, e.g. 80,176,0,72 (M = 0 is legal), a file\n";
    u += strf("                          of such numbers, or a preset with its N and K [%s]:\n",
              spec.default_groups ? spec.default_groups : "");
    u += group_presets_help();
    u += strf("  --n N, --k N            N and K of a list or file [%d and %d]; a preset sets its own\n",
              spec.sim_default.n, spec.sim_default.k);
  } else if (spec.sim_default.m > 0)
    u += strf("  --m N, --n N, --k N     problem size [%lld; in the emulator %lld, or with none of them\n"
              "                          and no --sim-sms: %d x %d x %d on %d SMs]\n",
              static_cast<long long>(kGpuDefaultDim), static_cast<long long>(kSimDefaultDim), spec.sim_default.m,
              spec.sim_default.n, spec.sim_default.k, spec.sim_default.sms);
  else
    u += strf("  --m N, --n N, --k N     problem size [%lld; %lld in the emulator]\n",
              static_cast<long long>(kGpuDefaultDim), static_cast<long long>(kSimDefaultDim));
  if (grouped) {
    u += strf("                          (K must be a multiple of %d: this step's boxes hold whole\n"
              "                          k-tiles of 256)\n", spec.k_multiple);
  } else if (fp4) {
    u += strf("                          (K must be a multiple of %d: one kind::mxf4nvf4 MMA\n",
              std::max(spec.k_multiple, static_cast<int>(kNvfp4KMultiple)));
    u += "                          consumes 64 K elements, four 16-element scale blocks)\n";
  } else {
    u += strf("                          (K must be a multiple of %d)\n", spec.k_multiple);
  }
  u += "  --iters N               timed launches: at least N, and more (up to 1000) until they\n";
  u += "                          add up to 100 ms [20]\n";
  u += "  --warmup N              untimed launches before timing [5]\n";
  u += "  --seed N                seed of the inputs [1]\n";
  if (fp4) {
    u += "  --inputs random|integer|wide|competition\n";
    u += "                          random: uniform in [-1,1], quantized to NVFP4 (no global\n";
    u += "                          scale); integer: values 0, +-0.5, +-1, +-2 times scales 0.5, 1,\n";
    u += strf("                          2, checked exactly (K <= %lld); wide: random values times\n",
              static_cast<long long>(kMaxNvfp4IntegerK));
    u += "                          2^-6..2^3 per block (scales over 10 binades: FP32 sums round,\n";
    u += "                          so a sum's order shows in the bits); competition: the NVFP4\n";
    u += "                          competition's generator (codes 0, +-0.5, +-1, +-1.5, scales\n";
    u += "                          UE4M3 of uniform [0,1)), also checked with its rtol = atol =\n";
    u += "                          1e-3 [random]\n";
  } else {
    u += "  --inputs random|integer|wide  random: uniform in [-1,1]; integer: integers in\n";
    u += "                          [-2,2], checked exactly; wide: random times 2^-8..2^7 (FP32\n";
    u += "                          sums round, so a sum's order shows in the bits) [random]\n";
  }
  u += strf("  --check, --no-check     verify against a reference (%s, or the CPU) [--check]\n",
            spec.operands == Operands::kNVFP4DualSilu || grouped ? "the CPU only" : fp4 ? "cuBLASLt" : "cuBLAS");
  u += "  --csv FILE              append one result row to FILE (header written if new)\n";
  u += "  --gpu                   insist on a GPU run (exit 3 if there is no suitable GPU)\n";
  u += "  --sim                   run in the tcgen05 emulator even if a GPU is present\n";
  u += "  --sim-seed N            emulator scheduler seed [1]\n";
  u += "  --sim-sms N             SMs of the emulated GPU (1..1024) [148, a B200]\n";
  u += "  --sim-ctas-per-sm N     at most N CTAs resident per emulated SM (1..32) [as\n";
  u += "                          shared memory and threads allow]\n";
  u += "  --trace FILE            write a timeline of one extra launch as Chrome-trace JSON (open\n";
  u += "                          it in https://ui.perfetto.dev): %globaltimer stamps on a GPU, the\n";
  u += "                          timing model's clock in the emulator (docs/tracing.md); a bare\n";
  u += "                          file name is written under traces/ (git-ignored)\n";
  u += strf("  --trace-ctas LIST       CTAs to trace, e.g. 0-3,8 (at most %zu) [0-3]\n", kMaxTraceCtas);
  u += "  --predict               emulator with the B200 timing model, timing only (no result is\n";
  u += strf("                          computed or checked); shape [%lld] unless given\n",
            static_cast<long long>(kGpuDefaultDim));
  u += "  --predict-noise N       with --predict: the point again with equal-time events in N seeded\n"
       "                          orders; prints their spread, the model's own noise [0]\n";
  u += "  --model-params          print the timing model's parameters (Markdown) and exit\n";
  u += "  --model-params FILE     the timing model with FILE's parameters (e.g. results/params_h100.txt;\n"
       "                          alone: print the resulting table and exit)\n";
  u += "  --verbose               say why no GPU was used, in the CUDA runtime's words\n";
  u += "  -h, --help              this text\n";
  if (spec.knobs != nullptr) {
    u += "Environment knobs (tests and the levers' tables; unset, the plan chooses; a value the problem\n"
         "or the GPU cannot take is refused with exit code 2):\n";
    u += spec.knobs;
  }
  u += "Both '--m 512' and '--m=512' work.\n";
  u += "Exit codes: 0 ok, 1 wrong result or emulator/CUDA error, 2 usage error,\n";
  u += "3 cannot run here.\n";
  return u;
}

// The groups of a grouped step after parsing: --groups (or the default list) with N and K from
// the preset, else from --n and --k, else the step's defaults; m becomes the sum of M. "" or the
// error line (without program name).
std::string settle_groups(const StepSpec& spec, Options& o, const std::string& value) {
  GroupList g;
  const std::string err = parse_groups(value, &g);
  if (!err.empty()) return err;
  if (!g.name.empty()) {
    if ((o.n_given && o.n != g.n) || (o.k_given && o.k != g.k))
      return "--groups=" + g.name + strf(" sets N = %lld and K = %lld; drop --n and --k (or give a list of M)",
                                         static_cast<long long>(g.n), static_cast<long long>(g.k));
  } else {
    g.n = o.n_given ? o.n : spec.sim_default.n;
    g.k = o.k_given ? o.k : spec.sim_default.k;
  }
  int64_t total = 0;
  for (int64_t m : g.m) total += m;
  o.groups = g;
  o.m = total, o.n = g.n, o.k = g.k;
  o.m_given = o.n_given = o.k_given = true;
  return "";
}

double problem_flops(const StepSpec& spec, const Options& o) {
  const double one = 2.0 * double(o.m) * double(o.n) * double(o.k);
  return spec.operands == Operands::kNVFP4DualSilu ? 2 * one : one;
}

std::string validate_shape(const StepSpec& spec, const Options& o) {
  const std::string prog = program_name(spec) + ": ";
  const struct {
    const char* flag;
    int64_t value;
  } dims[] = {{"--m", o.m}, {"--n", o.n}, {"--k", o.k}};
  const bool grouped = spec.operands == Operands::kNVFP4Grouped;
  for (const auto& d : dims) {
    if (grouped && d.flag[2] == 'm') {  // the sum of the groups' M: 0 when every group is empty
      if (d.value > kMaxDim) return prog + strf("--groups: the groups' M add up to %lld, more than %lld",
                                                static_cast<long long>(d.value), static_cast<long long>(kMaxDim));
      continue;
    }
    if (d.value < 1 || d.value > kMaxDim)
      return prog + strf("%s=%lld: must be between 1 and %lld", d.flag,
                         static_cast<long long>(d.value), static_cast<long long>(kMaxDim));
  }
  // A cluster runs on as many SMs as it has CTAs, all at once: an emulated GPU must hold one. (An
  // odd count is fine: the SM left over idles, as on a GPU whose SM count is odd.)
  if (spec.cluster_size > 1 && o.sim_sms_given && o.sim_sms < spec.cluster_size)
    return prog + strf("--sim-sms=%d: this step runs clusters of %d CTAs (CTA pairs), one CTA per SM; "
                       "it needs at least %d SMs",
                       o.sim_sms, spec.cluster_size, spec.cluster_size);
  // NVFP4: the kernel's MMA (kind::mxf4nvf4, dense) consumes K = 64, four scale blocks of 16, and
  // the scale layout is built from such 4-column groups; no step can take a partial one.
  if (is_nvfp4(spec.operands) && o.k % kNvfp4KMultiple != 0)
    return prog + strf(
                      "--k=%lld: K must be a multiple of %lld for NVFP4 (one kind::mxf4nvf4 MMA "
                      "consumes K = 64, four 16-element scale blocks)",
                      static_cast<long long>(o.k), static_cast<long long>(kNvfp4KMultiple));
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
  if (is_nvfp4(spec.operands) && o.inputs == Inputs::kInteger &&
      o.k > kMaxNvfp4IntegerK)
    return prog + strf(
                      "--k=%lld: NVFP4 --inputs integer needs K <= %lld (larger sums of products "
                      "are not exact in FP32)",
                      static_cast<long long>(o.k), static_cast<long long>(kMaxNvfp4IntegerK));
  if (o.inputs == Inputs::kInteger && o.k > kMaxIntegerK)
    return prog + strf(
                      "--k=%lld: --inputs integer needs K <= %lld (larger sums of products are "
                      "not exact in FP32)",
                      static_cast<long long>(o.k), static_cast<long long>(kMaxIntegerK));
  return "";
}

std::string validate_plan(const StepSpec& spec, const Options& o, int sms) {
  // A step's plan reads its environment knobs (tests only, e.g. TCG_STEP11_BLOCK_N) and the
  // workspace function runs the plan: a bad value, or one the problem or the GPU cannot honour,
  // is a usage error, refused before anything runs.
  try {
    if (spec.plan != nullptr) (void)spec.plan(int(o.m), int(o.n), int(o.k), sms);
    if (spec.grouped_plan != nullptr)
      (void)spec.grouped_plan(o.groups.m.data(), int(o.groups.m.size()), int(o.n), int(o.k), sms);
    if (spec.workspace != nullptr) (void)spec.workspace(int(o.m), int(o.n), int(o.k), sms);
  } catch (const std::invalid_argument& e) {
    return program_name(spec) + ": " + e.what();
  }
  return "";
}

std::string apply_step_sim_default(const StepSpec& spec, Options& o) {
  const SimDefault& d = spec.sim_default;
  if (d.m <= 0 || o.m_given || o.n_given || o.k_given || o.sim_sms_given || o.predict || !o.trace_path.empty()) return "";
  o.m = d.m, o.n = d.n, o.k = d.k, o.sim_sms = d.sms;
  o.m_given = o.n_given = o.k_given = o.sim_sms_given = true;
  o.sim_default_note =
      strf("a default run emulates %d SMs at this shape, where the plan runs what %s adds (given any of --m, "
           "--n, --k, --sim-sms, the others default to 512 and 148 SMs)",
           d.sms, program_name(spec).c_str());
  return o.sim_default_note;
}

void apply_emulator_defaults(Options& o) {
  const int64_t d = o.predict ? kGpuDefaultDim : kSimDefaultDim;
  if (!o.m_given) o.m = d;
  if (!o.n_given) o.n = d;
  if (!o.k_given) o.k = d;
}

std::string parse_cta_list(const std::string& text, std::vector<uint32_t>* out) {
  const std::string shown = "--trace-ctas=" + text;
  // One index of an item ("8", or either end of "0-3"); "" or the error.
  auto index = [&](const std::string& item, const std::string& part, uint64_t* value) -> std::string {
    switch (parse_decimal(part, value)) {
      case NumStatus::kOk:
        break;
      case NumStatus::kNegative:
        return shown + ": CTA indices must be non-negative";
      case NumStatus::kMalformed:
        return shown + ": \"" + item + "\" is not a CTA index or a range like 0-3";
      case NumStatus::kOutOfRange:
        *value = UINT64_MAX;
        break;
    }
    if (*value > kMaxTraceCtaIndex)
      return shown + ": CTA index " + part + " out of range (at most " + std::to_string(kMaxTraceCtaIndex) + ")";
    return "";
  };
  std::vector<uint32_t> ctas;
  size_t pos = 0;
  for (;;) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty()) return shown + ": expected CTA indices and ranges such as 0-3,8";
    // "a" or "a-b"; a leading '-' is a negative number (reported as such), not a range.
    const size_t dash = item.find('-', 1);
    uint64_t lo = 0, hi = 0;
    std::string err = index(item, item.substr(0, dash), &lo);
    hi = lo;
    if (err.empty() && dash != std::string::npos) err = index(item, item.substr(dash + 1), &hi);
    if (!err.empty()) return err;
    if (lo > hi) return shown + ": range " + item + " runs backwards";
    if (hi - lo >= kMaxTraceCtas) return shown + strf(": more than %zu CTAs", kMaxTraceCtas);
    for (uint64_t c = lo; c <= hi; ++c) ctas.push_back(static_cast<uint32_t>(c));
    std::sort(ctas.begin(), ctas.end());
    ctas.erase(std::unique(ctas.begin(), ctas.end()), ctas.end());
    if (ctas.size() > kMaxTraceCtas) return shown + strf(": more than %zu CTAs", kMaxTraceCtas);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  *out = ctas;
  return "";
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

  bool check_given = false, trace_ctas_given = false;  // for the combinations refused below
  std::string groups_value;
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
      check_given = true;
    } else if (name == "--no-check") {
      switch_target = &o.check;
      switch_value = false;
    } else if (name == "--gpu") {
      switch_target = &o.force_gpu;
    } else if (name == "--sim") {
      switch_target = &o.force_sim;
    } else if (name == "--verbose") {
      switch_target = &o.verbose;
    } else if (name == "--predict") {
      switch_target = &o.predict;
    } else if (name == "--model-params") {
      // --model-params FILE (or =FILE): run the timing model with the file's parameters
      // (common/sim/timing_params.cpp has the format); alone: print the table and exit.
      if (has_value || (i + 1 < args.size() && !starts_with(args[i + 1], "--"))) {
        o.model_params_file = has_value ? value : args[++i];
        if (o.model_params_file.empty()) return fail("--model-params needs a file name after '='");
        continue;
      }
      switch_target = &o.model_params;
    }
    if (switch_target != nullptr) {
      if (has_value) return fail(name + " takes no value");
      *switch_target = switch_value;
      continue;
    }

    // Flags with a value.
    static const char* const kValued[] = {"--m",       "--n",       "--k",          "--iters",
                                          "--warmup",  "--seed",    "--inputs",     "--csv",
                                          "--sim-seed", "--sim-sms", "--sim-ctas-per-sm", "--trace",
                                          "--trace-ctas", "--predict-noise", "--groups"};
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
    const bool grouped = spec.operands == Operands::kNVFP4Grouped;
    if (name == "--groups" && !grouped) return fail("--groups: this step runs one GEMM (step 16 runs groups)");
    if (name == "--m" && grouped)
      return fail("--m: this step takes the groups' M from --groups (a list such as 80,176,0,72, a file or a preset)");
    if (name == "--groups") {
      groups_value = value;
      o.groups_given = true;
    } else if (name == "--m" || name == "--n" || name == "--k") {
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
    } else if (name == "--predict-noise") {
      err = parse_bounded(name, value, 0, 64, &v);
      o.predict_noise = static_cast<int>(v);
    } else if (name == "--sim-sms") {
      err = parse_bounded(name, value, 1, 1024, &v);
      o.sim_sms = static_cast<int>(v);
      o.sim_sms_given = true;
    } else if (name == "--sim-ctas-per-sm") {
      err = parse_bounded(name, value, 1, 32, &v);
      o.sim_ctas_per_sm = static_cast<int>(v);
    } else if (name == "--inputs") {
      if (value == "random") {
        o.inputs = Inputs::kRandom;
      } else if (value == "integer") {
        o.inputs = Inputs::kInteger;
      } else if (value == "wide") {
        o.inputs = Inputs::kWide;
      } else if (value == "competition" && is_nvfp4(spec.operands)) {
        o.inputs = Inputs::kCompetition;
      } else if (value == "competition") {
        err = name + "=" + value + ": the competition's inputs are NVFP4 (steps 07, 10-13, 15)";
      } else {
        err = name + "=" + value +
              (is_nvfp4(spec.operands) ? ": expected random, integer, wide or competition"
                                       : ": expected random, integer or wide");
      }
    } else if (name == "--csv") {
      if (value.empty()) err = "--csv needs a file name";
      o.csv = value;
    } else if (name == "--trace") {
      if (value.empty()) err = "--trace needs a file name";
      o.trace_path = value;
    } else if (name == "--trace-ctas") {
      err = parse_cta_list(value, &o.trace_ctas);
      trace_ctas_given = true;
    }
    if (!err.empty()) return fail(err);
  }

  if (o.force_gpu && o.force_sim) return fail("--gpu and --sim contradict each other (pick one)");
  if (o.force_gpu && o.predict)
    return fail("--gpu and --predict contradict each other (--predict runs the emulator's timing model)");
  if (o.predict && check_given)
    return fail("--check and --predict contradict each other (--predict skips the arithmetic: nothing to check)");
  if (trace_ctas_given && o.trace_path.empty()) return fail("--trace-ctas needs --trace FILE");
  if (o.predict) o.force_sim = true;
  if (spec.operands == Operands::kNVFP4Grouped) {
    const std::string err = settle_groups(spec, o, o.groups_given ? groups_value : spec.default_groups);
    if (!err.empty()) return fail(err);
    // The default run emulates the step's small GPU, where CTAs walk many tiles of several groups.
    if (!o.groups_given && !o.sim_sms_given && !o.predict && o.trace_path.empty() && spec.sim_default.sms > 0) {
      o.sim_sms = spec.sim_default.sms;
      o.sim_sms_given = true;
      o.sim_default_note = strf("a default run emulates %d SMs, so that each CTA walks tiles of several groups "
                                "(--groups and --sim-sms pick others)", spec.sim_default.sms);
    }
  }
  // A bare file name (no directory) goes to the git-ignored traces/ folder, so that timelines do
  // not pile up in the repository's root; a path with a directory is used as given.
  if (!o.trace_path.empty() && o.trace_path.find('/') == std::string::npos)
    o.trace_path = std::string(kTraceDir) + "/" + o.trace_path;
  r.error = validate_shape(spec, o);
  return r;
}

}  // namespace tcg::harness
