// trace.h — per-warp timelines as Chrome-trace JSON (opened by https://ui.perfetto.dev and
// chrome://tracing), shared by the two places a trace comes from:
//   * the GPU: a traced kernel instantiation records %globaltimer stamps into a device buffer
//     (common/ptx/trace.cuh), which the harness turns into Spans (harness/traces.cpp);
//   * the emulator: its B200 timing model records Spans on the model's clock (common/sim/).
//
// The file: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}. Every span is a
// complete event ("ph": "X") with "ts" and "dur" in microseconds (fractions allowed), "pid" = the
// traced CTA (named "CTA <linear index>" by a process_name metadata event) and "tid" = its track
// (named by a thread_name metadata event). Tracks:
//   tid 0..63     warp tracks. Emulator: tid = the warp index, one track per warp (lane 0),
//                 e.g. "warp 1 (mma)". GPU: tid = 2 x warp + stream, two tracks per warp: what
//                 lane 0 records in warp-uniform code, and what an elected thread records alone
//                 (docs/tracing.md), e.g. "warp 0 (elected, producer)". Phase spans (setup,
//                 mainloop, epilogue, teardown) contain the warp's own waits, issues, loads and
//                 stores: spans of one track nest and never partly overlap;
//   tid 100+i     asynchronous engines, one track per engine and slot, e.g. "TMA in flight #2",
//                 "tensor core": an operation in flight from issue to completion. Overlapping
//                 operations of one engine go to separate slots, so these tracks nest too.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tcg::trace {

// Categories ("cat"): what a span is, for filtering and for the timeline pictures' colours.
inline constexpr const char* kCatPhase = "phase";   // setup, mainloop, epilogue, teardown (kernel annotations)
inline constexpr const char* kCatWait = "wait";     // a barrier / mbarrier / collective wait that blocked
inline constexpr const char* kCatIssue = "issue";   // issuing TMA copies or MMAs
inline constexpr const char* kCatTma = "tma";       // a copy in flight (async track)
inline constexpr const char* kCatMma = "mma";       // tensor-core work in flight (async track)
inline constexpr const char* kCatLd = "tmem_ld";    // tcgen05.ld .. tcgen05.wait::ld
inline constexpr const char* kCatStore = "store";   // global stores of the epilogue
inline constexpr const char* kCatCompute = "compute";  // warp-level MMA (step 00)

constexpr int kAsyncTrackBase = 100;

struct Span {
  uint32_t cta = 0;      // linear CTA index in the grid (pid)
  int track = 0;         // warp index, or kAsyncTrackBase + slot (tid)
  std::string name;      // e.g. "wait tma_full_bar[2]", "TMA 48 KiB", "epilogue"
  std::string cat;       // one of the kCat* above
  double start_ns = 0;   // from the start of the kernel (the first recorded stamp)
  double dur_ns = 0;     // >= 0
  std::map<std::string, std::string> args;  // shown by Perfetto under "Arguments"
};

struct Trace {
  std::vector<Span> spans;
  std::map<uint32_t, std::string> cta_names;                  // pid -> process name
  std::map<std::pair<uint32_t, int>, std::string> track_names;  // (pid, tid) -> thread name
  std::map<std::string, std::string> meta;  // "otherData": clock source, device, step, shape, ...
};

// The JSON text. Spans are written sorted by (pid, tid, start, longer first), so that a parent
// precedes the spans it contains.
std::string to_chrome_json(const Trace& t);
// Writes to_chrome_json(t) to `path`; returns "" or a one-line error.
std::string write_chrome_json(const Trace& t, const std::string& path);
// The rules a trace must satisfy (the tests check them on every producer's output): durations
// finite and >= 0, every span of one track nested in or disjoint from the others (touching ends
// allowed, with a tolerance of `slack_ns`), every span named and categorised. Returns "" or the
// first violation, naming both spans. The default slack covers the rounding of start + duration
// in doubles (the emulator's spans end where another begins, at times up to ~1e6 ns, whose
// rounding error is ~1e-10 ns); it is far below any time the model or %globaltimer can show.
std::string check_trace(const Trace& t, double slack_ns = 1e-6);

}  // namespace tcg::trace
