// ptx/trace.cuh — timeline annotations for `--trace` (docs/tracing.md): the %globaltimer special
// register (PTX ISA §10.28) and PhaseTrace, the per-thread recorder the kernels annotate their
// phases with. The buffer layout and the phase vocabulary are in common/trace_buf.h.
//
// Zero cost when off. A kernel is a template on `bool kTrace`; its annotations are calls on a
// PhaseTrace<kTrace>, whose bodies are `if constexpr (kTrace)`. The launch runs gemm_kernel<true>
// only when GemmArgs::trace is enabled; gemm_kernel<false>, which every other launch runs, has
// no trace code at all (tests/checks/check_sass.sh and the ptxas report cover both instantiations).
//
// In the emulator build the same calls report every annotation to the emulator
// (tcsim::trace_phase), from every lane that reaches them; the emulator keeps lane 0's, draws the
// coarse phases on its timing model's clock and checks that all of them, fine ones included, pair
// up and nest as the GPU trace needs. Fine spans are drawn only on the GPU; the emulator records
// each blocked wait by itself, named after the wait annotation that encloses it (with its index).
#pragma once
#include "../trace_buf.h"
#include "build.h"
#include "mbarrier.cuh"

#if defined(TCG_SIM)
#include <chrono>
#endif

namespace tcg {
inline namespace TCG_ABI_NS {

// mov.u64 %globaltimer (PTX ISA §10.28): a 64-bit nanosecond timer shared by the whole GPU, so
// stamps of different SMs compare. The ISA calls it "intended for use by NVIDIA tools" with
// target-specific behaviour; in practice it advances in steps (docs/tracing.md has what we
// measured). The "memory" clobber keeps the compiler from moving loads and stores across a stamp.
// Emulator twin: under the timing model its clock (so a kernel's own stamps read model time,
// as tests/gpu/micro.cu uses them), else the host's steady clock.
TCG_DEV uint64_t globaltimer() {
#if defined(TCG_SIM)
  if (::tcsim::model_now_ns() >= 0) return uint64_t(::tcsim::model_now_ns());
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
#else
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
  return t;
#endif
}

// mov.u32 %smid (PTX ISA §10.8): the SM the thread runs on, for the trace's CTA names. The ISA
// warns that it can change during execution (preemption); a trace only names the SM it started on.
// Emulator twin: the emulated SM's index.
TCG_DEV uint32_t smid(TCG_LOC0) {
#if defined(TCG_SIM)
  return ::tcsim::sm_id(TCG_AT);
#else
  uint32_t r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
#endif
}

template <bool kTrace>
class TraceSpan;

// The recorder of one thread. Construct it once at the top of the kernel from the kernel's
// TraceBuf parameter; then mark each phase, in one of two ways:
//   span(p), span_elected(p)             a span that ends with its C++ scope: one line, e.g.
//                                          const auto producer = trace.span_elected(Phase::kProducer);
//                                        or, passed as the last argument of a wait, a span that
//                                        ends with the wait's statement:
//                                          mbarrier_wait_parity(bar, parity, trace.span_elected(...));
//   begin(p) / end(p), begin_elected(p) / end_elected(p)   where a span does not follow a scope.
// The plain forms are for warp-uniform code (all lanes of the warp arrive together: lane 0
// records); the _elected forms for code that one elected thread runs alone (inside
// `if (elect_one_sync())`: that thread records). `arg` is shown with the span (a stage, a k-tile;
// see PhaseInfo::arg). A CTA not listed in the TraceBuf records nothing; a stream that is full
// drops fine spans and counts them.
template <bool kTrace>
class PhaseTrace {
  friend class TraceSpan<kTrace>;

 public:
  TCG_DEV explicit PhaseTrace(const TraceBuf& buf) : buf_(buf) {
#if !defined(TCG_SIM)
    if constexpr (kTrace) {
      const uint32_t cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
      const uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
      for (uint32_t i = 0; i < buf.num_ctas && i < kTraceMaxCtas; ++i)
        if (buf.cta_ids[i] == cta) {
          const uint32_t base = uint32_t(buf.stream_offset(i, thread / 32, kTraceWarpStream));
          warp_stream_ = thread % 32 == 0 ? base : kNone;
          elected_stream_ = base + kTraceElectedStream * buf.capacity;
        }
      if (warp_stream_ != kNone) {  // lane 0 of a traced CTA: which SM, in both stream headers
        const uint32_t sm = smid();
        reinterpret_cast<TraceStreamHeader*>(buf.records + warp_stream_)->smid = sm;
        reinterpret_cast<TraceStreamHeader*>(buf.records + elected_stream_)->smid = sm;
      }
    }
#endif
  }

  TCG_DEV void begin(Phase p, uint32_t arg = 0 TCG_LOC) { mark(kTraceWarpStream, p, true, arg TCG_PASS); }
  TCG_DEV void end(Phase p, uint32_t arg = 0 TCG_LOC) { mark(kTraceWarpStream, p, false, arg TCG_PASS); }
  TCG_DEV void begin_elected(Phase p, uint32_t arg = 0 TCG_LOC) { mark(kTraceElectedStream, p, true, arg TCG_PASS); }
  TCG_DEV void end_elected(Phase p, uint32_t arg = 0 TCG_LOC) { mark(kTraceElectedStream, p, false, arg TCG_PASS); }
  [[nodiscard]] TCG_DEV TraceSpan<kTrace> span(Phase p, uint32_t arg = 0 TCG_LOC) {
    return TraceSpan<kTrace>(*this, kTraceWarpStream, p, arg TCG_PASS);
  }
  [[nodiscard]] TCG_DEV TraceSpan<kTrace> span_elected(Phase p, uint32_t arg = 0 TCG_LOC) {
    return TraceSpan<kTrace>(*this, kTraceElectedStream, p, arg TCG_PASS);
  }

 private:
  // GPU: record in the stream (kTraceMaxWarps has two per warp). Emulator: report to tcsim, which
  // keeps lane 0's annotations (elect.sync picks lane 0 there) on one stack per warp.
  TCG_DEV void mark(uint32_t stream, Phase p, bool is_begin, uint32_t arg TCG_LOC) {
#if defined(TCG_SIM)
    (void)stream;
    const char* arg_style = phase_info(p).arg;  // "[]": an index, shown with the wait's name
    ::tcsim::trace_phase(phase_info(p).name, is_begin, !phase_is_fine(p), TCG_AT,
                         arg_style && arg_style[0] == '[' ? int(arg) : -1);
#else
    if constexpr (kTrace) {
      if (stream == kTraceWarpStream) record(warp_stream_, counts_[kTraceWarpStream], p, is_begin, arg);
      else record(elected_stream_, counts_[kTraceElectedStream], p, is_begin, arg);
    }
#endif
  }

#if !defined(TCG_SIM)
  // Few registers: the traced kernel must fit the untraced one's register budget (no spills),
  // and every register it takes from the kernel can slow the kernel down (docs/tracing.md).
  static constexpr uint32_t kNone = ~0u;
  uint32_t warp_stream_ = kNone;     // header index of this warp's kTraceWarpStream, if this
                                     // thread (lane 0 of a traced CTA) records it
  uint32_t elected_stream_ = kNone;  // header index of this warp's kTraceElectedStream (traced CTA)
  uint32_t counts_[kTraceStreams] = {0, 0};  // per stream: records stored | skipped << 16

  // Appends one record to the stream whose header is records[header]: one timer read and one
  // 16-byte store (nothing waits for it). Fine spans are kept or dropped whole (trace_admit).
  TCG_DEV void record(uint32_t header, uint32_t& counts, Phase p, bool is_begin, uint32_t arg) {
    if (header == kNone) return;  // this thread records nothing
    const uint64_t stamp = globaltimer();
    uint32_t stored = counts & 0xFFFFu, skipped = counts >> 16;
    if (trace_admit(stored, skipped, buf_.capacity, p, is_begin)) {
      ++stored;
      buf_.records[header + stored] = TraceRecord{stamp, uint32_t(p) << 1 | uint32_t(is_begin), arg};
    } else {
      ++reinterpret_cast<TraceStreamHeader*>(buf_.records + header)->dropped;  // rare
    }
    counts = stored | skipped << 16;
  }
#endif
  const TraceBuf& buf_;
};

// A span that begins when it is made and ends when it is destroyed (PhaseTrace::span). Returned
// by value (C++17 guaranteed elision), never copied. The untraced GPU kernel gets the empty
// TraceSpan<false> below instead.
template <bool kTrace>
class TraceSpan {
 public:
  TCG_DEV TraceSpan(PhaseTrace<kTrace>& trace, uint32_t stream, Phase p, uint32_t arg TCG_LOC)
      : trace_(trace), stream_(stream), phase_(p), arg_(arg) {
#if defined(TCG_SIM)
    file_ = tcg_file;  // the span's end is reported at the line that opened it
    line_ = tcg_line;
#endif
    trace_.mark(stream_, phase_, true, arg_ TCG_PASS);
  }
  TCG_DEV ~TraceSpan() {
#if defined(TCG_SIM)
    trace_.mark(stream_, phase_, false, arg_, file_, line_);
#else
    trace_.mark(stream_, phase_, false, arg_);
#endif
  }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  PhaseTrace<kTrace>& trace_;
  uint32_t stream_;
  Phase phase_;
  uint32_t arg_;
#if defined(TCG_SIM)
  const char* file_;
  int line_;
#endif
};

#if !defined(TCG_SIM)
// In the untraced GPU kernel a span is an empty object with a trivial destructor, so that the
// kernel compiles exactly as it did before it had annotations (tests/checks/check_sass.sh).
template <>
class TraceSpan<false> {
 public:
  TCG_DEV TraceSpan(PhaseTrace<false>&, uint32_t, Phase, uint32_t) {}
};
#endif

// mbarrier_wait_parity with the wait drawn as a span: the span, a temporary made while the
// arguments are evaluated, opens before the wait and closes at the end of the statement, after
// the wait has returned. Only the annotation is added; the wait is mbarrier.cuh's.
template <bool kTrace>
TCG_DEV void mbarrier_wait_parity(uint32_t bar, uint32_t parity, const TraceSpan<kTrace>& TCG_LOC) {
  mbarrier_wait_parity(bar, parity TCG_PASS);
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
