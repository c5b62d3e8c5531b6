// emulator_run.cpp — a step run in the emulator (common/sim/): the emulator's options from the
// command line, inputs, the launch, the CPU reference and verification, the emulator's
// statistics, and --predict (timing only) and --trace on the model's clock. run_step.cpp calls it
// when there is no usable GPU or --sim is given.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>
#include <memory>
#include <optional>
#include <stdexcept>

#include <unistd.h>

#include "common/harness/grouped_reference.h"
#include "common/harness/run.h"
#include "common/sim/sim_api.h"


namespace tcg::harness {

// ---------------------------------------------------------------------------------------------
// The emulator run
// ---------------------------------------------------------------------------------------------

namespace {

// The emulated GPU's SM count without --sim-sms. A persistent step (StepSpec::persistent) on a
// B200's 148 SMs gives each cluster one tile at the default shapes, so a bug in what the step
// teaches (the second accumulator, a ring carried across tiles) would pass the default run: such a
// plain run instead gets the most SMs on which every cluster still runs at least two tiles, and
// says so in one line (or, with fewer than two tiles, what is not exercised and how to exercise it).
// Runs on the timing model's clock (--predict, --trace) keep the B200's SM count.
int default_sim_sms(const StepSpec& spec, const Options& o) {
  const int b200 = int(tcsim::model_param("SMs"));
  const PersistentTile& p = spec.persistent;
  if (o.sim_sms_given) return o.sim_sms;
  if (p.m <= 0 || o.predict || !o.trace_path.empty()) return b200;
  const int64_t tiles = ((o.m + p.m - 1) / p.m) * ((o.n + p.n - 1) / p.n);
  if (tiles < 2) {
    std::printf("note:     %lld tile of %d x %d: no %s runs a second tile, so the double-buffered accumulator "
                "and the rings' wrap across tiles are not exercised (a shape of 2 or more tiles, e.g. --m %d --n %d, "
                "exercises them)\n",
                static_cast<long long>(tiles), p.m, p.n, p.cluster > 1 ? "CTA pair" : "CTA", 2 * p.m, p.n);
    return b200;
  }
  const int sms = int(std::min<int64_t>(tiles / 2, b200 / p.cluster)) * p.cluster;
  if (sms == b200) return b200;  // a B200 already gives every cluster two tiles or more
  std::printf("note:     emulated GPU of %d SMs (a B200 has %d): %lld tiles of %d x %d give each of its %d %s "
              "at least two, so the double-buffered accumulator and the rings wrap across tiles (--sim-sms N picks "
              "another GPU)\n",
              sms, b200, static_cast<long long>(tiles), p.m, p.n, sms / p.cluster,
              p.cluster > 1 ? "CTA pairs" : "CTAs");
  return sms;
}

void set_emulator_options(const StepSpec& spec, const Options& o) {
  tcsim::Options so = tcsim::options();
  so.seed = o.sim_seed;
  so.num_sms = default_sim_sms(spec, o);
  so.ctas_per_sm = o.sim_ctas_per_sm;
  so.provenance_checks = true;  // a step's kernel never reads TMEM nothing wrote (common/sim/provenance.cpp)
  // The B200 timing model (docs/timing_model.md): for --predict (timing only: no arithmetic)
  // and for --trace (with arithmetic, so the run is still verified).
  so.timing = o.predict || !o.trace_path.empty();
  so.skip_math = o.predict;
  so.trace = !o.trace_path.empty();
  so.trace_ctas = o.trace_ctas;
  tcsim::set_options(so);
}

// The emulator's "device memory": a host buffer with cudaMalloc's alignment (256 bytes; CUDA C++
// Programming Guide, "Device Memory Accesses"). std::vector's storage is only 16-byte aligned, and
// the timing model charges global memory by 32-byte sectors, so an operand 16 bytes off a sector
// would cost every 128-byte TMA box row a fifth sector that no GPU run pays. It is registered with
// the emulator at the size asked for (not the rounded one), so that a kernel's raw-address access
// past its end is reported as compute-sanitizer's memcheck would (common/sim/global_memory.cpp).
template <class T>
class EmuBuffer {
 public:
  EmuBuffer(size_t count, const char* name)
      : p_(static_cast<T*>(::operator new(std::max<size_t>((count * sizeof(T) + 255) / 256 * 256, 256),
                                          std::align_val_t{256}))) {
    if (count > 0) registered_.emplace(p_, count * sizeof(T), name);  // (zero bytes cannot be registered)
  }
  EmuBuffer(const T* src, size_t count, const char* name) : EmuBuffer(count, name) { std::copy(src, src + count, p_); }
  ~EmuBuffer() {
    registered_.reset();  // unregistered before the memory goes
    ::operator delete(p_, std::align_val_t{256});
  }
  EmuBuffer(const EmuBuffer&) = delete;
  EmuBuffer& operator=(const EmuBuffer&) = delete;
  T* data() const { return p_; }

 private:
  T* p_;
  std::optional<tcsim::GlobalAllocation> registered_;
};

GemmArgs shape_args(const Options& o) {
  GemmArgs args;
  args.m = static_cast<int>(o.m);
  args.n = static_cast<int>(o.n);
  args.k = static_cast<int>(o.k);
  args.stream = nullptr;
  return args;
}

// The host inputs of one run, made at its first launch and kept for the others: the two launches
// of the --predict range (predict_range.cpp) use the same kind, seed and shape, so they get the
// same bytes without generating (for NVFP4, quantising) them again.
struct RunInputs {
  std::optional<HostInputs> bf16;
  std::optional<Nvfp4HostInputs> nvfp4;
  std::optional<GroupedNvfp4Inputs> grouped;
};

// BF16 operands: inputs, launch, CPU reference, verification.
VerifyResult emulate_bf16(const Options& o, LaunchFn launch, RunInputs& inputs) {
  if (!inputs.bf16) inputs.bf16 = make_inputs(o.inputs, o.seed, o.m, o.n, o.k, /*fill=*/!o.predict);
  const HostInputs& in = *inputs.bf16;
  // "Device" memory is host memory here; C starts as NaN, as on the GPU.
  std::vector<__nv_bfloat16> out(static_cast<size_t>(o.m * o.n), bf16_from_bits(0xFFFFu));
  const EmuBuffer<__nv_bfloat16> dev_a(in.a.data(), in.a.size(), "A"), dev_b(in.b.data(), in.b.size(), "B");
  EmuBuffer<__nv_bfloat16> dev_c(out.data(), out.size(), "C");
  GemmArgs args = shape_args(o);
  args.a = dev_a.data();
  args.b = dev_b.data();
  args.c = dev_c.data();
  launch(args);  // a tcsim::SimError propagates to run_step, which reports it (exit 1)
  std::copy(dev_c.data(), dev_c.data() + out.size(), out.begin());

  VerifyResult vr;
  if (o.check) {
    std::vector<float> ref(out.size()), s;
    if (o.inputs != Inputs::kInteger) s.resize(out.size());
    cpu_reference(in.a.data(), in.b.data(), o.m, o.n, o.k, ref.data(),
                  s.empty() ? nullptr : s.data());
    vr = verify(o.inputs, out.data(), ref.data(), s.empty() ? nullptr : s.data(), o.m, o.n, o.k);
  }
  return vr;
}

// NVFP4 operands, FP16 output: the same, with the packed data and blocked scales in host memory.
// A step with a workspace (split-K partials, StepSpec::workspace) gets it zeroed and poisoned as
// workspace.cpp says; unless timing only, it then runs a second time under another scheduler seed
// (other CTAs finish first), which must give bitwise the same C and again leave the counters at 0.
// The dual GEMM (Operands::kNVFP4DualSilu) gets B2 and its scales beside B's, and its own reference.
VerifyResult emulate_nvfp4(const StepSpec& spec, const Options& o, LaunchFn launch, RunInputs& inputs) {
  const bool dual = spec.operands == Operands::kNVFP4DualSilu;
  if (!inputs.nvfp4) inputs.nvfp4 = make_nvfp4_inputs(o.inputs, o.seed, o.m, o.n, o.k, dual, /*fill=*/!o.predict);
  const Nvfp4HostInputs& in = *inputs.nvfp4;
  // C starts as NaN (0xFFFF is an FP16 NaN, what a 0xFF memset gives on the GPU).
  std::vector<__half> out(static_cast<size_t>(o.m * o.n), fp16_from_bits(0xFFFFu));
  const EmuBuffer<uint8_t> dev_a(in.a.data.data(), in.a.data.size(), "A (packed E2M1)"),
      dev_b(in.b.data.data(), in.b.data.size(), "B (packed E2M1)");
  const EmuBuffer<uint8_t> dev_sfa(in.a.sf.data(), in.a.sf.size(), "SFA (scale factors of A)"),
      dev_sfb(in.b.sf.data(), in.b.sf.size(), "SFB (scale factors of B)");
  const EmuBuffer<uint8_t> dev_b2(in.b2.data.data(), in.b2.data.size(), "B2 (packed E2M1)"),
      dev_sfb2(in.b2.sf.data(), in.b2.sf.size(), "SFB2 (scale factors of B2)");
  EmuBuffer<__half> dev_c(out.data(), out.size(), "C");
  GemmArgs args = shape_args(o);
  args.fp4 = in.operands();
  args.fp4.a = dev_a.data();
  args.fp4.b = dev_b.data();
  args.fp4.sfa = dev_sfa.data();
  args.fp4.sfb = dev_sfb.data();
  if (dual) {
    args.fp4.b2 = dev_b2.data();
    args.fp4.sfb2 = dev_sfb2.data();
  }
  args.fp4.c = dev_c.data();
  const StepWorkspace ws = workspace_for(spec, o, tcsim::options().num_sms);
  const EmuBuffer<uint8_t> dev_ws(ws.bytes, "workspace (split-K partials and tile counters)");
  prepare_workspace(dev_ws.data(), ws, /*zero_counters=*/true);
  args.workspace = ws.bytes ? dev_ws.data() : nullptr;
  args.workspace_bytes = ws.bytes;
  launch(args);
  std::copy(dev_c.data(), dev_c.data() + out.size(), out.begin());
  if (ws.bytes || spec.repeat) {
    std::string bad = counters_not_reset(dev_ws.data(), ws.zeroed_bytes);
    if (bad.empty() && !o.predict && o.trace_path.empty()) {
      tcsim::Options so = tcsim::options();
      so.seed = o.sim_seed + 1000003;  // another interleaving: other CTAs arrive last
      tcsim::set_options(so);
      std::fill(dev_c.data(), dev_c.data() + out.size(), fp16_from_bits(0xFFFFu));
      prepare_workspace(dev_ws.data(), ws, /*zero_counters=*/false);
      launch(args);
      so.seed = o.sim_seed;
      tcsim::set_options(so);
      bad = counters_not_reset(dev_ws.data(), ws.zeroed_bytes);
      if (bad.empty()) bad = repeat_difference(out.data(), dev_c.data(), static_cast<int64_t>(out.size()), o.n);
      if (bad.empty() && ws.bytes)
        std::printf("repeat:   a second launch (scheduler seed %llu) gave bitwise the same C; workspace of %zu bytes, "
                    "counters reset after both\n",
                    static_cast<unsigned long long>(o.sim_seed + 1000003), ws.bytes);
      else if (bad.empty())
        std::printf("repeat:   a second launch (scheduler seed %llu) gave bitwise the same C\n",
                    static_cast<unsigned long long>(o.sim_seed + 1000003));
    }
    if (!bad.empty()) throw std::runtime_error(bad);
  }
  args.fp4 = in.operands();  // the reference reads the host copies
  args.fp4.c = out.data();

  VerifyResult vr;
  if (o.check) {
    std::vector<float> ref(out.size()), s;
    if (o.inputs != Inputs::kInteger) s.resize(out.size());
    cpu_reference_nvfp4(args.fp4, o.m, o.n, o.k, ref.data(), s.empty() ? nullptr : s.data());
    if (dual) {
      // y = A . B2^T: the same reference with B2 in B's place; C = silu(x) * y.
      Nvfp4Operands second = args.fp4;
      second.b = args.fp4.b2;
      second.sfb = args.fp4.sfb2;
      std::vector<float> y(out.size()), sy(s.size());
      cpu_reference_nvfp4(second, o.m, o.n, o.k, y.data(), sy.empty() ? nullptr : sy.data());
      vr = verify_dual_silu(o.inputs, out.data(), ref.data(), s.empty() ? nullptr : s.data(), y.data(),
                            sy.empty() ? nullptr : sy.data(), o.m, o.n, o.k);
      if (o.inputs == Inputs::kCompetition) ref = dual_silu_reference(ref.data(), y.data(), int64_t(out.size()));
    } else {
      vr = verify_fp16(o.inputs, out.data(), ref.data(), s.empty() ? nullptr : s.data(), o.m, o.n, o.k);
    }
    if (o.inputs == Inputs::kCompetition) {
      // The competition's own check beside ours; failing it fails the run.
      const CompetitionCheck cc = competition_check(out.data(), ref.data(), o.m, o.n);
      std::printf("%s\n", format_competition_check(cc).c_str());
      if (cc.outside > 0 && vr.passed()) {
        vr.mismatches = cc.outside;
        vr.max_i = cc.worst_i, vr.max_j = cc.worst_j;
      }
    }
  }
  return vr;
}

// A grouped NVFP4 GEMM (step 16): every group's operands and C in their own allocations, as the
// competition passes them (so a store past C_g's M_g rows is reported as an access outside it),
// the table of GroupDesc in "device memory", one launch; unless timing only, a second launch under
// another scheduler seed must give bitwise the same C_g. Each group is verified against its own
// reference; the result adds them up, naming the groups that failed.
VerifyResult emulate_grouped(const StepSpec& spec, const Options& o, LaunchFn launch, RunInputs& inputs) {
  const GroupList& gl = o.groups;
  if (!inputs.grouped) inputs.grouped = make_grouped_nvfp4_inputs(o.inputs, o.seed, gl, /*fill=*/!o.predict);
  const GroupedNvfp4Inputs& in = *inputs.grouped;
  const size_t G = gl.m.size();
  std::vector<std::unique_ptr<EmuBuffer<uint8_t>>> ops;
  std::vector<std::unique_ptr<EmuBuffer<__half>>> cs;
  std::vector<GroupDesc> table(G);
  for (size_t g = 0; g < G; ++g) {
    const Nvfp4HostInputs& h = in.groups[g];
    auto buf = [&](const std::vector<uint8_t>& v, const char* what) {
      ops.push_back(std::make_unique<EmuBuffer<uint8_t>>(v.data(), v.size(), strf("%s of group %zu", what, g).c_str()));
      return static_cast<const uint8_t*>(ops.back()->data());
    };
    table[g].a = buf(h.a.data, "A_g (packed E2M1)");
    table[g].b = buf(h.b.data, "B_g (packed E2M1)");
    table[g].sfa = buf(h.a.sf, "SFA_g (scale factors of A_g)");
    table[g].sfb = buf(h.b.sf, "SFB_g (scale factors of B_g)");
    const size_t cn = size_t(gl.m[g] * gl.n);
    cs.push_back(std::make_unique<EmuBuffer<__half>>(cn, strf("C_g of group %zu (M_g x N)", g).c_str()));
    std::fill(cs.back()->data(), cs.back()->data() + cn, fp16_from_bits(0xFFFFu));
    table[g].c = cs.back()->data();
    table[g].m = int32_t(gl.m[g]);
  }
  const EmuBuffer<GroupDesc> dev_table(table.data(), G, "the group table (GroupDesc per group)");
  const StepWorkspace ws = workspace_for(spec, o, tcsim::options().num_sms);
  const EmuBuffer<uint8_t> dev_ws(ws.bytes, "workspace (per-CTA tensor-map slots)");
  prepare_workspace(dev_ws.data(), ws, /*zero_counters=*/true);
  GemmArgs args = shape_args(o);
  args.groups.desc = dev_table.data();
  args.groups.count = int(G);
  args.groups.host_m = gl.m.data();
  args.workspace = ws.bytes ? dev_ws.data() : nullptr;
  args.workspace_bytes = ws.bytes;
  launch(args);
  std::vector<std::vector<__half>> out(G);
  for (size_t g = 0; g < G; ++g) out[g].assign(cs[g]->data(), cs[g]->data() + gl.m[g] * gl.n);
  if (spec.repeat && !o.predict && o.trace_path.empty()) {
    tcsim::Options so = tcsim::options();
    so.seed = o.sim_seed + 1000003;  // another interleaving
    tcsim::set_options(so);
    for (size_t g = 0; g < G; ++g) std::fill(cs[g]->data(), cs[g]->data() + out[g].size(), fp16_from_bits(0xFFFFu));
    prepare_workspace(dev_ws.data(), ws, /*zero_counters=*/false);
    launch(args);
    so.seed = o.sim_seed;
    tcsim::set_options(so);
    for (size_t g = 0; g < G; ++g) {
      const std::string bad = repeat_difference(out[g].data(), cs[g]->data(), int64_t(out[g].size()), gl.n);
      if (!bad.empty()) throw std::runtime_error(strf("group %zu: ", g) + bad);
    }
    std::printf("repeat:   a second launch (scheduler seed %llu) gave bitwise the same C_g in every group\n",
                static_cast<unsigned long long>(o.sim_seed + 1000003));
  }

  if (!o.check) {
    VerifyResult vr;
    vr.inputs = o.inputs;
    return vr;
  }
  return verify_grouped(o.inputs, in, gl, out);
}

// The trace of the launch just emulated, written to o.trace_path (write_trace's exit code). A CTA
// of --trace-ctas that ran records at least its setup, so one without a span was not in the grid.
int write_emulator_trace(const StepSpec& spec, const Options& o) {
  tcg::trace::Trace t = tcsim::last_trace();
  std::vector<uint32_t> silent;
  for (uint32_t c : o.trace_ctas)
    if (!t.cta_names.count(c)) silent.push_back(c);
  return write_trace(spec, o, t, silent, "B200 timing model clock");
}

}  // namespace

int run_in_emulator(const StepSpec& spec, const Options& opts, LaunchFn launch) {
  Options o = opts;
  if (o.predict) o.check = false;  // timing only: the output is never computed
  // The plan on the GPU the launch will see (default_sim_sms: a step with a plan is not persistent).
  const StepPlan plan = plan_of(spec, o, o.sim_sms_given ? o.sim_sms : int(tcsim::model_param("SMs")));
  print_problem(spec, o, o.predict ? "tcgen05 emulator on the CPU, B200 timing model (timing only)"
                                   : "tcgen05 emulator on the CPU", plan);
  if (!o.sim_default_note.empty()) std::printf("note:     %s\n", o.sim_default_note.c_str());
  else if (!plan.left_out.empty() && !o.predict && o.trace_path.empty())
    std::printf("note:     this plan leaves out what %s adds (%s); `./%s` with no shape and no --sim-sms runs a plan "
                "that has it\n",
                program_name(spec).c_str(), plan.left_out.c_str(), program_name(spec).c_str());
  set_emulator_options(spec, o);
  RunInputs inputs;
  const auto emulate = [&]() {
    return spec.operands == Operands::kNVFP4Grouped ? emulate_grouped(spec, o, launch, inputs)
           : is_nvfp4(spec.operands)                ? emulate_nvfp4(spec, o, launch, inputs)
                                                    : emulate_bf16(o, launch, inputs);
  };
  const VerifyResult vr = emulate();
  const tcsim::Stats st = tcsim::last_stats();
  if (o.predict)
    std::printf("check:    none: timing only, the arithmetic was skipped and C was not computed\n");
  else
    print_verify(o.check ? &vr : nullptr);
  const double flops = problem_flops(spec, o);
  const bool timed = tcsim::options().timing;  // --predict or --trace (set_emulator_options)
  const double tflops = st.model_ns > 0 ? flops / st.model_ns / 1e3 : 0.0;
  const int trace_rc = o.trace_path.empty() ? 0 : write_emulator_trace(spec, o);

  const double rest = std::max(0.0, st.wall_seconds - st.mma_seconds - st.copy_seconds);
  std::printf(
      "emulated: %llu CTAs, %llu MMAs, %llu TMA copies (%.2f MiB), %llu blocking barrier "
      "waits, %llu fiber switches, %llu instructions\n",
      static_cast<unsigned long long>(st.ctas), static_cast<unsigned long long>(st.mmas),
      static_cast<unsigned long long>(st.tma_copies), double(st.tma_bytes) / (1024.0 * 1024.0),
      static_cast<unsigned long long>(st.barrier_waits),
      static_cast<unsigned long long>(st.fiber_switches),
      static_cast<unsigned long long>(st.instructions));
  if (st.clc_canceled + st.clc_failed > 0)  // cluster launch control (step 09)
    std::printf("clc:      %llu clusters canceled by try_cancel (their tiles taken over), %llu requests failed\n",
                static_cast<unsigned long long>(st.clc_canceled), static_cast<unsigned long long>(st.clc_failed));
  std::printf(
      "wall:     %.3f s = %.3f s MMA arithmetic + %.3f s copies + %.3f s rest "
      "(emulator time, not a GPU estimate)\n",
      st.wall_seconds, st.mma_seconds, st.copy_seconds, rest);

  if (timed)
    std::printf("predicted B200: %.1f TFLOPS for M=%lld N=%lld K=%lld (%.2f us; tcsim timing model, %d SMs, "
                "docs/timing_model.md)\n",
                tflops, static_cast<long long>(o.m), static_cast<long long>(o.n), static_cast<long long>(o.k),
                st.model_ns / 1e3, tcsim::options().num_sms);
  // What bounded this launch (predict_bounds.cpp), taken before the range's two launches replace it.
  const tcsim::Bounds bounds = tcsim::last_bounds();
  if (o.predict && o.trace_path.empty())  // the range: the launch again at both ends (predict_range.cpp)
    predict_range(flops, [&] { (void)emulate(); });
  if (o.predict && o.trace_path.empty() && o.predict_noise > 0)
    predict_noise(o.predict_noise, st.model_ns, [&] { (void)emulate(); });
  if (o.predict) print_predict_bounds(bounds, plan.line);

  CsvRecord row = base_record(spec, o, o.check ? &vr : nullptr);
  row.gpu = "tcgen05-emulator";
  row.iterations = "1";
  if (o.predict) {
    // A prediction, not a measurement: the GPU column says so, the time is the model's.
    row.gpu = "B200 (tcsim timing model)";
    row.sm_count = std::to_string(tcsim::options().num_sms);
    row.driver = "model";
    row.median_ms = strf("%.6f", st.model_ns / 1e6);
    row.tflops = strf("%.2f", tflops);
    row.verified = "timing-only";
  }
  const int rc = finish(spec, o, o.check ? &vr : nullptr, row);
  return rc == 0 ? trace_rc : rc;
}

}  // namespace tcg::harness
