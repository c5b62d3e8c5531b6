// ptx/trace.cuh — timeline annotations for `--trace` (docs/tracing.md): the %globaltimer special
// register (PTX ISA §10.28) and PhaseTrace, the per-thread recorder the kernels annotate their
// phases with. The buffer layout and the phase vocabulary are in common/trace_buf.h.
//
// Zero cost when off. A kernel is a template on `bool kTrace`; its annotations are calls on a
// PhaseTrace<kTrace>, whose bodies are `if constexpr (kTrace)`. The launch runs gemm_kernel<true>
// only when GemmArgs::trace is enabled; gemm_kernel<false>, which every other launch runs, has
// no trace code at all (tests/check_sass.sh and the ptxas report cover both instantiations).
//
// In the emulator build the same calls report the coarse phases to the emulator
// (tcsim::trace_phase), from every lane that reaches them; the emulator keeps lane 0's and puts
// them on its timing model's clock. Fine spans are GPU-only: the emulator records each wait and
// issue by itself.
#pragma once
#include "../trace_buf.h"
#include "build.h"

#if defined(TCG_SIM)
#include <chrono>
#endif

namespace tcg {
inline namespace TCG_ABI_NS {

// mov.u64 %globaltimer (PTX ISA §10.28): a 64-bit nanosecond timer shared by the whole GPU, so
// stamps of different SMs compare. The ISA calls it "intended for use by NVIDIA tools" with
// target-specific behaviour; in practice it advances in steps (docs/tracing.md has what we
// measured). The "memory" clobber keeps the compiler from moving loads and stores across a stamp.
// Emulator twin: the host's steady clock (the emulator's own traces use its model clock instead).
TCG_DEV uint64_t globaltimer() {
#if defined(TCG_SIM)
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
#else
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
  return t;
#endif
}

// The recorder of one thread. Construct it once at the top of the kernel from the kernel's
// TraceBuf parameter; then bracket each phase with begin/end:
//   begin(p) / end(p)                    in warp-uniform code (all lanes of the warp arrive
//                                        together): lane 0 records;
//   begin_elected(p) / end_elected(p)    in code that one elected thread runs alone (inside
//                                        `if (elect_one_sync())`): that thread records.
// `arg` is shown with the span (a stage, a k-tile; see PhaseInfo::arg). A CTA not listed in the
// TraceBuf records nothing; a stream that is full drops fine spans and counts them.
template <bool kTrace>
class PhaseTrace {
 public:
  TCG_DEV explicit PhaseTrace(const TraceBuf& buf) : buf_(buf) {
#if !defined(TCG_SIM)
    if constexpr (kTrace) {
      const uint32_t cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
      const uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
      lane0_ = thread % 32 == 0;
      for (uint32_t i = 0; i < buf.num_ctas && i < kTraceMaxCtas; ++i)
        if (buf.cta_ids[i] == cta) warp_base_ = buf.records + buf.stream_offset(i, thread / 32, kTraceWarpStream);
    }
#endif
  }

  TCG_DEV void begin(Phase p, uint32_t arg = 0 TCG_LOC) {
#if defined(TCG_SIM)
    (void)arg;
    if (!phase_is_fine(p)) ::tcsim::trace_phase(phase_info(p).name, true, TCG_AT);
#else
    if constexpr (kTrace) {
      if (lane0_) record(kTraceWarpStream, p, true, arg);
    }
#endif
  }
  TCG_DEV void end(Phase p, uint32_t arg = 0 TCG_LOC) {
#if defined(TCG_SIM)
    (void)arg;
    if (!phase_is_fine(p)) ::tcsim::trace_phase(phase_info(p).name, false, TCG_AT);
#else
    if constexpr (kTrace) {
      if (lane0_) record(kTraceWarpStream, p, false, arg);
    }
#endif
  }
  TCG_DEV void begin_elected(Phase p, uint32_t arg = 0 TCG_LOC) {
#if defined(TCG_SIM)
    (void)arg;
    if (!phase_is_fine(p)) ::tcsim::trace_phase(phase_info(p).name, true, TCG_AT);
#else
    if constexpr (kTrace) record(kTraceElectedStream, p, true, arg);
#endif
  }
  TCG_DEV void end_elected(Phase p, uint32_t arg = 0 TCG_LOC) {
#if defined(TCG_SIM)
    (void)arg;
    if (!phase_is_fine(p)) ::tcsim::trace_phase(phase_info(p).name, false, TCG_AT);
#else
    if constexpr (kTrace) record(kTraceElectedStream, p, false, arg);
#endif
  }

 private:
#if !defined(TCG_SIM)
  // Appends one record to `stream` of this warp, then rewrites the stream's header (plain stores:
  // nothing waits for them). Fine spans are kept or dropped whole (trace_admit, trace_buf.h).
  TCG_DEV void record(uint32_t stream, Phase p, bool is_begin, uint32_t arg) {
    if (warp_base_ == nullptr) return;  // this CTA is not traced
    const uint64_t stamp = globaltimer();
    TraceRecord* s = warp_base_ + stream * buf_.capacity;
    if (trace_admit(stored_[stream], skipped_[stream], buf_.capacity, p, is_begin)) {
      ++stored_[stream];
      s[stored_[stream]] = TraceRecord{stamp, uint32_t(p) << 1 | uint32_t(is_begin), arg};
      uint32_t smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));  // the SM this CTA runs on
      *reinterpret_cast<uint2*>(s) = make_uint2(stored_[stream], smid);
    } else {
      ++reinterpret_cast<TraceStreamHeader*>(s)->dropped;  // rare: counted in memory, not a register
    }
  }
  // Few registers: the traced kernel must fit the untraced one's register budget (no spills).
  TraceRecord* warp_base_ = nullptr;  // stream kTraceWarpStream of this warp; null: not traced
  bool lane0_ = false;
  uint32_t stored_[kTraceStreams] = {0, 0};
  uint32_t skipped_[kTraceStreams] = {0, 0};
#endif
  const TraceBuf& buf_;
};

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
