// traces.cpp — `--trace FILE` (docs/tracing.md). write_trace finishes a timeline of either
// clock: the run's metadata, the trace rules, the file, the report (the emulator's trace comes from
// emulator_run.cpp). On a GPU, trace_on_gpu: a device buffer for the records (common/trace_buf.h), extra
// launches of the traced instantiation kernel<true> after the verified and timed ones (which all
// ran kernel<false>; the last is recorded, its C compared bit for bit with the verified launch's),
// and the records turned into tcg::trace spans (trace_from_records).
//
// trace_from_records, first_bitwise_difference and write_trace are host code, tested by
// tests/unit/test_trace_gpu.cpp; trace_on_gpu talks to CUDA (gpu.h).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <numeric>

#include "common/harness/gpu.h"
#include "common/harness/internal.h"

// The Makefile passes the commit: -DTCG_GIT_REV="\"abc123\"".
#ifndef TCG_GIT_REV
#define TCG_GIT_REV "unknown"
#endif

namespace tcg::harness {

static_assert(kMaxTraceCtas == kTraceMaxCtas, "--trace-ctas and TraceBuf must agree on the CTA limit");

uint32_t trace_capacity(size_t num_ctas) {
  constexpr size_t kBudgetBytes = size_t{64} << 20;
  constexpr uint32_t kMaxCapacity = 4096;
  static_assert(kMaxCapacity <= kTraceMaxCapacity, "the recorder counts records in 16 bits");
  const size_t per_record_of_every_stream =
      std::max<size_t>(num_ctas, 1) * kTraceMaxWarps * kTraceStreams * sizeof(TraceRecord);
  const size_t fits = kBudgetBytes / per_record_of_every_stream;
  return static_cast<uint32_t>(std::clamp<size_t>(fits, kTraceMinCapacity, kMaxCapacity));
}

namespace {

// "warp 3" / "warp 0 (elected)", with the role: "warp 3 (epilogue)", "warp 0 (elected, producer)".
std::string track_name(uint32_t warp, uint32_t stream, const std::string& role) {
  std::string name = "warp " + std::to_string(warp);
  if (stream == kTraceElectedStream) return name + " (elected" + (role.empty() ? "" : ", " + role) + ")";
  return role.empty() ? name : name + " (" + role + ")";
}

struct Open {  // a begin record waiting for its end
  Phase phase;
  uint32_t arg;
  uint64_t stamp;
};

}  // namespace

GpuTrace trace_from_records(const TraceBuf& layout, const TraceRecord* records) {
  GpuTrace r;
  const uint32_t num_ctas = std::min(layout.num_ctas, kTraceMaxCtas);
  if (layout.capacity < 2) return r;

  // Pass 1: the streams' headers and lengths (records up to the first zero stamp), and the
  // launch's earliest stamp.
  struct StreamInfo {
    TraceStreamHeader h;
    uint32_t stored;
  };
  uint64_t t0 = std::numeric_limits<uint64_t>::max();
  std::vector<StreamInfo> headers(size_t(num_ctas) * kTraceMaxWarps * kTraceStreams);
  for (uint32_t slot = 0; slot < num_ctas; ++slot) {
    bool any = false;
    for (uint32_t w = 0; w < kTraceMaxWarps; ++w)
      for (uint32_t st = 0; st < kTraceStreams; ++st) {
        const TraceRecord* base = records + layout.stream_offset(slot, w, st);
        StreamInfo& info = headers[(size_t(slot) * kTraceMaxWarps + w) * kTraceStreams + st];
        std::memcpy(&info.h, base, sizeof info.h);
        info.stored = 0;
        while (info.stored + 1 < layout.capacity && base[info.stored + 1].stamp != 0) ++info.stored;
        any = any || info.stored > 0 || info.h.dropped > 0;
        r.records += info.stored;
        r.dropped += info.h.dropped;
        for (uint32_t i = 1; i <= info.stored; ++i) t0 = std::min<uint64_t>(t0, base[i].stamp);
      }
    if (!any) r.silent_ctas.push_back(layout.cta_ids[slot]);
  }
  r.trace.meta["dropped_records"] = std::to_string(r.dropped);
  if (r.records == 0) return r;

  // Pass 2: each stream's records as a stack of open spans.
  for (uint32_t slot = 0; slot < num_ctas; ++slot) {
    const uint32_t cta = layout.cta_ids[slot];
    for (uint32_t w = 0; w < kTraceMaxWarps; ++w) {
      // The warp's role: its earliest coarse begin other than setup and teardown, either stream.
      std::string role;
      uint64_t role_stamp = std::numeric_limits<uint64_t>::max();
      for (uint32_t st = 0; st < kTraceStreams; ++st) {
        const StreamInfo& h = headers[(size_t(slot) * kTraceMaxWarps + w) * kTraceStreams + st];
        const TraceRecord* rec = records + layout.stream_offset(slot, w, st) + 1;
        for (uint32_t i = 0; i < h.stored; ++i) {
          const Phase p = Phase(rec[i].what >> 1);
          if ((rec[i].what & 1) && rec[i].what >> 1 < uint32_t(Phase::kCount) && !phase_is_fine(p) &&
              p != Phase::kSetup && p != Phase::kTeardown && rec[i].stamp < role_stamp) {
            role = phase_info(p).name;
            role_stamp = rec[i].stamp;
          }
        }
      }

      for (uint32_t st = 0; st < kTraceStreams; ++st) {
        const StreamInfo& h = headers[(size_t(slot) * kTraceMaxWarps + w) * kTraceStreams + st];
        if (h.stored == 0) continue;
        const TraceRecord* rec = records + layout.stream_offset(slot, w, st) + 1;
        const int track = int(w * kTraceStreams + st);
        const std::string where = strf("CTA %u, %s", cta, track_name(w, st, "").c_str());
        r.trace.cta_names[cta] = strf("CTA %u (SM %u)", cta, h.h.smid);
        r.trace.track_names[{cta, track}] = track_name(w, st, role);
        const char* full = h.h.dropped > 0 ? " (the stream was full)" : "";
        auto at = [&](uint64_t stamp) { return strf("+%.3f us", double(stamp - t0) / 1e3); };
        uint64_t prev = 0;
        std::vector<Open> stack;
        for (uint32_t i = 0; i < h.stored; ++i) {
          const TraceRecord& x = rec[i];
          if (i > 0 && x.stamp > prev) {
            const uint64_t d = x.stamp - prev;
            r.min_step_ns = r.min_step_ns == 0 ? d : std::min(r.min_step_ns, d);
            r.gcd_step_ns = std::gcd(r.gcd_step_ns, d);
          }
          if (i > 0 && x.stamp < prev)
            r.errors.push_back(strf("%s: record %u goes back in time (%s after %s)", where.c_str(), i + 1,
                                    at(x.stamp).c_str(), at(prev).c_str()));
          prev = x.stamp;
          if (x.what >> 1 >= uint32_t(Phase::kCount)) {
            r.errors.push_back(strf("%s: record %u has an unknown phase %u", where.c_str(), i + 1, x.what >> 1));
            continue;
          }
          const Phase p = Phase(x.what >> 1);
          if (x.what & 1) {
            stack.push_back({p, x.arg, x.stamp});
            continue;
          }
          // An end: it closes the innermost open span of its phase; spans opened inside that one
          // and still open were never ended (an error, as is an end with no begin at all).
          size_t j = stack.size();
          while (j > 0 && stack[j - 1].phase != p) --j;
          if (j == 0) {
            r.errors.push_back(strf("%s: end of \"%s\" at %s without a begin%s", where.c_str(),
                                    phase_info(p).name, at(x.stamp).c_str(), full));
            continue;
          }
          for (size_t q = stack.size(); q-- > j;)
            r.errors.push_back(strf("%s: \"%s\" begun at %s is not ended before \"%s\" ends%s", where.c_str(),
                                    phase_info(stack[q].phase).name, at(stack[q].stamp).c_str(),
                                    phase_info(p).name, full));
          stack.resize(j);
          const Open o = stack.back();
          stack.pop_back();
          const PhaseInfo info = phase_info(o.phase);
          trace::Span sp;
          sp.cta = cta;
          sp.track = track;
          sp.name = info.name;
          sp.cat = info.cat;
          if (info.arg != nullptr && std::strcmp(info.arg, "[]") == 0)
            sp.name += "[" + std::to_string(o.arg) + "]";
          else if (info.arg != nullptr)
            sp.args[info.arg] = std::to_string(o.arg);
          sp.start_ns = double(o.stamp - t0);
          sp.dur_ns = x.stamp >= o.stamp ? double(x.stamp - o.stamp) : 0.0;
          r.trace.spans.push_back(std::move(sp));
        }
        for (const Open& o : stack)
          r.errors.push_back(strf("%s: \"%s\" begun at %s never ended%s", where.c_str(), phase_info(o.phase).name,
                                  at(o.stamp).c_str(), full));
      }
    }
  }
  r.trace.meta["timer_step_ns"] =
      strf("smallest %llu, gcd %llu (nonzero differences of consecutive stamps)",
           static_cast<unsigned long long>(r.min_step_ns), static_cast<unsigned long long>(r.gcd_step_ns));
  return r;
}

// ---------------------------------------------------------------------------------------------
// The traced launch
// ---------------------------------------------------------------------------------------------

namespace {

std::string cta_list(const std::vector<uint32_t>& ctas) {
  std::string s;
  for (uint32_t c : ctas) s += (s.empty() ? "" : " ") + std::to_string(c);
  return s;
}

}  // namespace

int write_trace(const StepSpec& spec, const Options& o, trace::Trace& t, const std::vector<uint32_t>& silent,
                const std::string& clock) {
  const std::string prog = program_name(spec);
  if (t.cta_names.empty()) {
    std::fprintf(stderr, "%s: --trace: none of the CTAs %s recorded anything (the grid has fewer CTAs?)\n",
                 prog.c_str(), cta_list(o.trace_ctas).c_str());
    return 2;
  }
  t.meta["step"] = prog;
  t.meta["shape"] = strf("M=%lld N=%lld K=%lld", static_cast<long long>(o.m), static_cast<long long>(o.n),
                         static_cast<long long>(o.k));
  t.meta["inputs"] = inputs_name(o.inputs);
  t.meta["git_rev"] = TCG_GIT_REV;
  t.meta["date"] = utc_iso8601(std::time(nullptr));
  const std::string bad = trace::check_trace(t);
  if (!bad.empty()) {
    std::fprintf(stderr, "%s: --trace: the timeline breaks the trace rules: %s\n", prog.c_str(), bad.c_str());
    return 1;
  }
  const std::string err = trace::write_chrome_json(t, o.trace_path);
  if (!err.empty()) {
    std::fprintf(stderr, "%s: %s\n", prog.c_str(), err.c_str());
    return 2;
  }
  std::printf("trace:    wrote %s (%zu spans of CTAs", o.trace_path.c_str(), t.spans.size());
  for (const auto& [cta, name] : t.cta_names) std::printf(" %u", cta);
  std::printf("; %s)\n", clock.c_str());
  if (!silent.empty()) std::printf("trace:    CTAs %s recorded nothing (not in the grid)\n", cta_list(silent).c_str());
  return 0;
}

std::string first_bitwise_difference(const void* traced_c, const void* checked_c, size_t c_bytes,
                                     size_t elem_bytes, int64_t n) {
  if (std::memcmp(traced_c, checked_c, c_bytes) == 0) return "";
  const auto* t = static_cast<const unsigned char*>(traced_c);
  const auto* c = static_cast<const unsigned char*>(checked_c);
  size_t i = 0;
  while (t[i] == c[i]) ++i;
  i /= elem_bytes;
  uint64_t tb = 0, cb = 0;  // the element's bits (little-endian, as the GPU stores them)
  for (size_t b = elem_bytes; b-- > 0;) {
    tb = tb << 8 | t[i * elem_bytes + b];
    cb = cb << 8 | c[i * elem_bytes + b];
  }
  const int digits = static_cast<int>(2 * elem_bytes);
  return strf("C[%lld][%lld] is 0x%0*llx in the traced launch, 0x%0*llx in the checked one",
              static_cast<long long>(i / size_t(n)), static_cast<long long>(i % size_t(n)), digits,
              static_cast<unsigned long long>(tb), digits, static_cast<unsigned long long>(cb));
}

int trace_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GemmArgs& args,
                 cudaStream_t stream, const DeviceBuffer<unsigned char>& flush, const GpuInfo& gpu,
                 double untraced_median_ms, const void* checked_c, size_t c_bytes, size_t elem_bytes) {
  const std::string prog = program_name(spec);
  // The CTAs as given: the harness does not know the grid, and a CTA that is not in it simply
  // records nothing (reported below).
  TraceBuf layout;
  layout.num_ctas = static_cast<uint32_t>(std::min<size_t>(o.trace_ctas.size(), kTraceMaxCtas));
  std::copy(o.trace_ctas.begin(), o.trace_ctas.begin() + layout.num_ctas, layout.cta_ids);
  layout.capacity = trace_capacity(layout.num_ctas);
  DeviceBuffer<TraceRecord> buf(layout.total_records());
  layout.records = buf.get();

  // As in the timing loop: several launches queued back to back, each with the records zeroed
  // (%globaltimer is never 0, so a zero stamp ends a stream) and L2 flushed first; the last one is
  // the one recorded and timed. The earlier ones load the traced code (CUDA loads kernels lazily)
  // and put the GPU in the state the timed launches ran in.
  GemmArgs traced = args;
  traced.trace = layout;
  Event start, stop;
  const int launches = std::max(o.warmup, 2) + 1;
  for (int i = 0; i < launches; ++i) {
    CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, buf.bytes(), stream));
    CUDA_CHECK(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream));
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    launch_step(launch, traced);
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  }
  try {
    wait_or_give_up(stream, spec);
  } catch (const CudaError& e) {
    throw CudaError(std::string("the traced kernel failed while running: ") + e.what());
  }
  float traced_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&traced_ms, start.get(), stop.get()));
  std::vector<TraceRecord> host(layout.total_records());
  CUDA_CHECK(cudaMemcpyAsync(host.data(), buf.get(), buf.bytes(), cudaMemcpyDeviceToHost, stream));
  // The traced kernel's C: kernel<true> does the arithmetic of kernel<false> in the same order, so
  // it must be the checked launch's C bit for bit.
  std::vector<unsigned char> traced_c(c_bytes);
  const void* dev_c = is_nvfp4(spec.operands) ? static_cast<const void*>(args.fp4.c) : args.c;
  CUDA_CHECK(cudaMemcpyAsync(traced_c.data(), dev_c, c_bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  int rc = 0;
  const std::string diff = first_bitwise_difference(traced_c.data(), checked_c, c_bytes, elem_bytes, o.n);
  if (!diff.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: --trace: the traced kernel's C differs from the checked launch's: %s\n",
                 prog.c_str(), diff.c_str());
    rc = 1;
  }

  GpuTrace g = trace_from_records(layout, host.data());
  trace::Trace& t = g.trace;
  int runtime = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  t.meta["clock"] = "%globaltimer (GPU), measured";
  t.meta["device"] = device_description(gpu);
  t.meta["driver"] = driver_description();
  t.meta["cuda_runtime"] = format_version(runtime);
  t.meta["traced_kernel_ms"] = strf("%.4f (the recorded launch of kernel<true>, L2 flushed before it)", traced_ms);
  t.meta["untraced_median_ms"] = strf("%.4f", untraced_median_ms);
  t.meta["records_per_stream"] = std::to_string(layout.capacity);
  const int written = write_trace(spec, o, t, g.silent_ctas,
                                  strf("%%globaltimer, steps >= %llu ns; traced launch %.4f ms, untraced %.4f ms",
                                       static_cast<unsigned long long>(g.min_step_ns), traced_ms, untraced_median_ms));
  if (written != 0) return written;
  if (g.dropped > 0)
    std::printf("trace:    %llu fine annotations dropped (%u records per stream were not enough): trace "
                "fewer CTAs (--trace-ctas) or a smaller K\n",
                static_cast<unsigned long long>(g.dropped), layout.capacity);
  if (!g.errors.empty()) {
    std::fflush(stdout);
    constexpr size_t kShown = 8;
    for (size_t i = 0; i < g.errors.size() && i < kShown; ++i)
      std::fprintf(stderr, "%s: --trace: broken annotation: %s\n", prog.c_str(), g.errors[i].c_str());
    if (g.errors.size() > kShown)
      std::fprintf(stderr, "%s: --trace: ... and %zu more\n", prog.c_str(), g.errors.size() - kShown);
    return 1;
  }
  return rc;
}

// The step's timing loop, and right after it the traced launch (gpu.h says why there).
Timing time_step(const StepSpec& spec, const Options& o, LaunchFn launch, const GemmArgs& args,
                 cudaStream_t stream, const DeviceBuffer<unsigned char>& flush, const GpuInfo& gpu,
                 const void* checked_c, size_t c_bytes, size_t elem_bytes, int* trace_rc) {
  const Timing ours = time_launches([&] { launch_step(launch, args); }, stream, flush, o.warmup, o.iters);
  std::printf("time:     %.4f ms median of %d launches (L2 flushed) = %.1f TFLOPS\n", ours.median_ms,
              ours.launches, tflops(spec, o, ours.median_ms));
  *trace_rc = o.trace_path.empty() ? 0
                                    : trace_on_gpu(spec, o, launch, args, stream, flush, gpu, ours.median_ms,
                                                   checked_c, c_bytes, elem_bytes);
  return ours;
}

}  // namespace tcg::harness
