// timing.cpp — the emulator's B200 timing model, and the trace it records.
//
// Models (docs/timing_model.md has the reasoning and the table of parameters with sources):
//  * a clock per emulated thread; the scheduler (scheduler.cpp, run_grid_timed) always runs the
//    earliest event, so the kernel executes as it would on a machine whose engines have the
//    durations below. Every CTA of a wave is resident at once, on the SMs the block scheduler
//    would pick (the least loaded first);
//  * instructions: one issue cycle each; a thread that waits on a barrier pays a wake-up cost;
//  * the tensor core of an SM (tcgen05.mma, tcgen05.cp): operations run back to back, each busy
//    for its issue interval (N/2 cycles, or longer when the shared-memory operand reads need it)
//    and completing a fixed latency later; a cta_group::2 MMA occupies both SMs of the pair;
//  * copies (TMA, bulk): a fixed latency plus streaming through three shared servers: the SM's
//    TMA unit, the chip's L2 bandwidth, and HBM for the bytes that are read for the first time
//    in the launch (L2 holds the rest: every modelled problem fits in its 126 MB); global memory
//    moves in 32-byte sectors, so a 16-byte-wide box row costs a whole sector;
//  * tcgen05.ld: the TMEM read port of the warp's sub-partition; global stores: the SM's path to
//    L2, with a bounded store buffer (the thread stalls only when it is full);
//  * TMA stores: the SM's store path and L2 for their in-bounds sectors, as global stores; no
//    parameter of their own (model_tma_store).
// Every duration comes from the parameter table; nothing depends on which step runs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Parameters. One set for every step; where no public figure exists the value is an estimate
// and says how it was derived. Values in the units shown; converted to ns below.
struct Param {
  const char* name;
  double value;
  const char* unit;
  const char* kind;  // spec, measured, derived, estimate
  const char* source;
};

enum ParamId {
  kClockGHz,
  kMmaIssueCyclesPerN,
  kMmaLatency128,
  kMmaLatency64,
  kMmaLatencyPair,
  kSmemOperandBytesPerCycle,
  kTmaLatencyNs,
  kTmaSmBytesPerNs,
  kL2BytesPerNs,
  kHbmBytesPerNs,
  kSectorBytes,
  kInstructionCycles,
  kWakeCycles,
  kTmemLdBytesPerCycle,
  kTmemLdLatencyCycles,
  kStoreBytesPerCycle,
  kStoreBufferBytes,
  kRemoteArriveCycles,
  kTmemAllocCycles,
  kCtaLaunchNs,
  kWarpMmaCycles,
  kNumParams
};

const Param kParams[kNumParams] = {
    {"SM clock", 1.86, "GHz", "derived",
     "2.25 PFLOPS dense BF16 (spec, glennklockwood.com/garden/processors/B200) / (148 SMs x 8192 FLOP/clk)"},
    {"tcgen05.mma issue interval", 0.5, "cycles per unit of N", "measured",
     "II = N/2 cycles for any K and type (SemiAnalysisAI/microbench-blackwell umma_throughput, umma_latency)"},
    {"tcgen05.mma latency beyond II, M=128", 136, "cycles", "measured", "SemiAnalysis umma_latency fit (SS operands)"},
    {"tcgen05.mma latency beyond II, M=64", 120, "cycles", "measured", "SemiAnalysis umma_latency fit (SS operands)"},
    {"tcgen05.mma latency beyond II, cta_group::2", 134, "cycles", "measured",
     "SemiAnalysis umma_latency: 130-138; the middle"},
    {"MMA shared-memory operand read", 128, "B/cycle/SM", "derived",
     "SS throughput below N=128 in SemiAnalysis umma_throughput (facts sheet)"},
    {"TMA latency", 719, "ns", "measured",
     "SemiAnalysis tma2d_latency, 1 CTA/SM, small tiles: 1413 cycles at 1.965 GHz (facts sheet; the raw medians scatter 490-1455 ns)"},
    {"TMA throughput of one SM", 135, "GB/s", "derived",
     "StuartSul/gpu-experiments blackwell/098: 16 x 32 KB per SM in 4.62 us on average, launch overhead included (a floor of 101-126 GB/s), "
     "less one TMA latency; consistent with blackwell/094: 20.4 TB/s over 148 SMs = 138 GB/s each"},
    {"L2 bandwidth (chip)", 20400, "GB/s", "measured", "StuartSul/gpu-experiments blackwell/094 (TMA, working set <= ~80 MB)"},
    {"HBM bandwidth (chip)", 7200, "GB/s", "measured", "SemiAnalysis tma2d_throughput (TMA from HBM)"},
    {"global memory sector", 32, "B", "spec", "CUDA C++ Best Practices Guide: global accesses are served in 32-byte sectors"},
    {"instruction issue", 1, "cycles", "estimate", "one warp instruction per cycle per scheduler"},
    {"barrier wake-up", 20, "cycles", "estimate", "try_wait loop re-test after the phase flips; not published"},
    {"tcgen05.ld rate per sub-partition", 128, "B/cycle", "estimate",
     "32 lanes x 4 B per cycle: one 32-bit register per lane per cycle; not published"},
    {"tcgen05.ld latency", 30, "cycles", "estimate", "of the order of a shared-memory load; not published"},
    {"global store rate of one SM", 64, "B/cycle", "estimate", "L1 -> L2 path; not published for B200"},
    {"store buffer of one SM", 16384, "B", "estimate", "32 warp-wide 16-byte stores in flight; not published"},
    {"remote mbarrier arrive", 150, "cycles", "estimate", "distributed shared memory round trip; not published for B200"},
    {"tcgen05.alloc", 100, "cycles", "estimate", "not published"},
    {"CTA launch", 200, "ns", "estimate", "block scheduler placing a CTA on a free SM; not published"},
    {"mma.sync m16n8k16", 4, "cycles per warp", "estimate",
     "placeholder, not shared between warps, not published; --predict refuses step 00 (its global loads are not timed either)"},
};

double p(ParamId id) { return kParams[id].value; }
double cyc(double cycles) { return cycles / p(kClockGHz); }  // cycles -> ns

// ---------------------------------------------------------------------------------------------
// The memory system of the chip.
struct Chip {
  double l2_free = 0, hbm_free = 0;
  std::unordered_map<uint64_t, std::array<uint64_t, 2>> touched;  // 4 KiB page -> 128 sector bits
  void reset() {
    l2_free = hbm_free = 0;
    touched.clear();
  }
  // Sector bytes of [addr, addr+len) and how many of them are read for the first time.
  void sectors(uint64_t addr, uint64_t len, uint64_t* bytes, uint64_t* fresh) {
    const uint64_t first = addr / 32, last = (addr + len - 1) / 32;
    *bytes += (last - first + 1) * 32;
    for (uint64_t sct = first; sct <= last; ++sct) {
      auto& bits = touched[sct >> 7];
      const uint64_t b = sct & 127, mask = 1ull << (b & 63);
      if (!(bits[b >> 6] & mask)) {
        bits[b >> 6] |= mask;
        *fresh += 32;
      }
    }
  }
};
Chip g_chip;

// ---------------------------------------------------------------------------------------------
// The trace.
tcg::trace::Trace g_trace;
struct AsyncTracks {
  std::vector<double> slot_free;  // per slot: when its last span ends
};
std::map<std::pair<uint32_t, std::string>, AsyncTracks> g_async_tracks;  // (cta, engine)
std::map<std::pair<uint32_t, std::string>, int> g_engine_base;           // (cta, engine) -> first tid
std::map<uint32_t, int> g_next_async_tid;
std::map<std::pair<uint32_t, int>, std::string> g_first_phase;  // (cta, warp) -> role

}  // namespace

namespace detail {

double ns_per_instruction() { return cyc(p(kInstructionCycles)); }
double wake_ns() { return cyc(p(kWakeCycles)); }
double model_remote_arrive_ns() { return cyc(p(kRemoteArriveCycles)); }
double model_tmem_alloc_ns() { return cyc(p(kTmemAllocCycles)); }
double model_cta_launch_ns() { return p(kCtaLaunchNs); }

void heap_push(Scheduler& s, double t, int kind, Fiber* f, uint64_t stamp) {
  s.heap.push_back(Scheduler::Event{t, s.next_seq++, kind, f, stamp});
  std::push_heap(s.heap.begin(), s.heap.end(), std::greater<>());
  // A running thread must not run past an event it just created.
  if (s.cur && !(kind == 0 && f == s.cur)) s.horizon = std::min(s.horizon, t + kLookaheadNs);
}

void model_spend(Fiber& f, double ns) {
  Scheduler& s = *g_sched;
  f.t += ns;
  s.now = f.t;
  if (f.t > s.horizon) yield();
  s.now = f.t;
}

double model_copy(Cta& dst, const TmaRows& rows) {
  Scheduler& s = *g_sched;
  Sm& sm = *dst.sm;
  const double t = s.now;
  uint64_t bytes = 0, fresh = 0;
  for (const auto& [addr, len] : rows.segments) g_chip.sectors(addr, len, &bytes, &fresh);
  if (bytes == 0) return t + p(kTmaLatencyNs);  // all out of bounds: zero fill, no memory traffic
  const double b = double(bytes);
  sm.tma_free = std::max(t, sm.tma_free) + b / p(kTmaSmBytesPerNs);
  g_chip.l2_free = std::max(t, g_chip.l2_free) + b / p(kL2BytesPerNs);
  double stream_end = std::max(sm.tma_free, g_chip.l2_free);
  if (fresh) {
    g_chip.hbm_free = std::max(t, g_chip.hbm_free) + double(fresh) / p(kHbmBytesPerNs);
    stream_end = std::max(stream_end, g_chip.hbm_free);
  }
  return stream_end + p(kTmaLatencyNs);
}

// A TMA store (tma_store.cpp): no parameter of its own. Its bytes leave the SM the way global
// stores do, SM -> L2, so they take the SM's store path (kStoreBytesPerCycle, shared with the
// threads' own global stores) and the chip's L2, both for the in-bounds 32-byte sectors: whole
// rows of C, so no partly written sectors. The TMA unit's figure (kTmaSmBytesPerNs) was measured
// for loads, L2 -> SM, the other direction, and is not charged. The source has been read, and
// the store counts as complete, once the SM's path has taken the bytes: the rule global stores
// follow (model_global_access), so that the two kinds of store end a kernel alike. No write
// latency is charged (none is published), and the L2 queue the bytes join delays the traffic
// behind them, not the store. HBM is not charged (write-back L2, as for global stores).
double model_tma_store(Cta& src, const TmaRows& rows, double* t_read) {
  Scheduler& s = *g_sched;
  Sm& sm = *src.sm;
  const double t = s.now;
  uint64_t bytes = 0, fresh = 0;
  for (const auto& [addr, len] : rows.segments) g_chip.sectors(addr, len, &bytes, &fresh);  // C now lives in L2
  if (bytes == 0) return *t_read = t;  // all clipped: nothing is written
  sm.store_free = std::max(t, sm.store_free) + cyc(double(bytes) / p(kStoreBytesPerCycle));
  g_chip.l2_free = std::max(t, g_chip.l2_free) + double(bytes) / p(kL2BytesPerNs);
  *t_read = sm.store_free;
  s.end = std::max(s.end, sm.store_free);
  return sm.store_free;
}

double model_mma(Cta& cta, Cta* peer, uint32_t m, uint32_t n, uint32_t a_bytes, uint32_t b_bytes, bool pair) {
  Scheduler& s = *g_sched;
  const double ii = cyc(std::max(p(kMmaIssueCyclesPerN) * n, double(a_bytes + b_bytes) / p(kSmemOperandBytesPerCycle)));
  const double lat = cyc(pair ? p(kMmaLatencyPair) : m == 64 ? p(kMmaLatency64) : p(kMmaLatency128));
  double start = std::max(s.now, cta.sm->tc_free);
  if (peer) start = std::max(start, peer->sm->tc_free);
  cta.sm->tc_free = start + ii;
  if (peer) peer->sm->tc_free = start + ii;
  const std::string name = "MMA " + std::to_string(pair ? 2 * m : m) + "x" + std::to_string(n);
  for (Cta* c : {&cta, peer})
    if (c && trace_cta(*c)) trace_async(*c, "tensor core", name, tcg::trace::kCatMma, start, start + ii);
  return start + ii + lat;
}

double model_tcgen05_cp(Cta& cta, uint32_t bytes) {
  Scheduler& s = *g_sched;
  const double busy = cyc(double(bytes) / p(kSmemOperandBytesPerCycle));
  const double start = std::max(s.now, cta.sm->tc_free);
  cta.sm->tc_free = start + busy;
  if (trace_cta(cta)) trace_async(cta, "tensor core", "tcgen05.cp", tcg::trace::kCatMma, start, start + busy);
  return start + busy;
}

double model_tmem_ld(Cta& cta, int warp, uint32_t bytes) {
  Scheduler& s = *g_sched;
  double& port = cta.sm->ld_free[warp % 4];
  port = std::max(s.now, port) + cyc(double(bytes) / p(kTmemLdBytesPerCycle));
  return port + cyc(p(kTmemLdLatencyCycles));
}

void model_global_access(Fiber& f, uint32_t bytes, bool store) {
  Scheduler& s = *g_sched;
  Sm& sm = *f.cta->sm;
  const double t0 = f.t;
  sm.store_free = std::max(f.t, sm.store_free) + cyc(double(bytes) / p(kStoreBytesPerCycle));
  g_chip.l2_free = std::max(f.t, g_chip.l2_free) + double(bytes) / p(kL2BytesPerNs);
  s.end = std::max(s.end, sm.store_free);
  const double backlog = cyc(p(kStoreBufferBytes) / p(kStoreBytesPerCycle));
  if (sm.store_free - f.t > backlog) model_spend(f, sm.store_free - backlog - f.t);
  if (store && f.traced) {
    if (f.store_start < 0) f.store_start = t0;
    f.store_end = f.t;
  }
}

double model_warp_mma(Cta&) { return cyc(p(kWarpMmaCycles)); }

// ---------------------------------------------------------------------------------------------
// Trace recording.
uint32_t linear_cta(const Cta& cta) {
  const dim3& g = g_sched->grid;
  return cta.block_idx.x + g.x * (cta.block_idx.y + g.y * cta.block_idx.z);
}

bool trace_cta(const Cta& cta) {
  if (!g_sched->timed || !g_options.trace) return false;
  const uint32_t id = linear_cta(cta);
  for (uint32_t c : g_options.trace_ctas)
    if (c == id) return true;
  return false;
}

void trace_span(const Cta& cta, int track, const std::string& name, const char* cat, double t0, double t1) {
  if (!(t1 > t0)) return;  // nothing to see
  tcg::trace::Span sp;
  sp.cta = linear_cta(cta);
  sp.track = track;
  sp.name = name;
  sp.cat = cat;
  sp.start_ns = t0;
  sp.dur_ns = t1 - t0;
  g_trace.spans.push_back(std::move(sp));
  auto key = std::make_pair(sp.cta, track);
  if (!g_trace.track_names.count(key)) g_trace.track_names[key] = "warp " + std::to_string(track);
  if (!g_trace.cta_names.count(sp.cta)) {
    const Cta* c = &cta;
    g_trace.cta_names[sp.cta] = "CTA " + std::to_string(sp.cta) + " (" + cta_name(*c) + ", SM " + std::to_string(c->sm->id) + ")";
  }
}

void trace_async(const Cta& cta, const char* engine, const std::string& name, const char* cat, double t0, double t1) {
  if (!(t1 > t0)) return;
  const uint32_t id = linear_cta(cta);
  const auto key = std::make_pair(id, std::string(engine));
  AsyncTracks& tr = g_async_tracks[key];
  size_t slot = 0;
  while (slot < tr.slot_free.size() && tr.slot_free[slot] > t0 + 1e-9) ++slot;
  if (slot == tr.slot_free.size()) tr.slot_free.push_back(0);
  tr.slot_free[slot] = t1;
  // Each (engine, slot) gets its own tid, allocated in order of first use.
  const auto skey = std::make_pair(id, std::string(engine) + "#" + std::to_string(slot));
  auto it = g_engine_base.find(skey);
  if (it == g_engine_base.end()) {
    int& next = g_next_async_tid[id];
    it = g_engine_base.emplace(skey, tcg::trace::kAsyncTrackBase + next++).first;
    g_trace.track_names[std::make_pair(id, it->second)] =
        std::string(engine) + (std::string(engine) == "tensor core" ? "" : " in flight") +
        (slot ? " #" + std::to_string(slot + 1) : "");
  }
  trace_span(cta, it->second, name, cat, t0, t1);
}

void trace_store_flush(Fiber& f) {
  if (f.store_start >= 0) trace_span(*f.cta, f.warp, "global stores", tcg::trace::kCatStore, f.store_start, f.store_end);
  f.store_start = f.store_end = -1;
}

void trace_begin_launch(Scheduler& s) {
  g_chip.reset();
  g_trace = tcg::trace::Trace{};
  g_async_tracks.clear();
  g_engine_base.clear();
  g_next_async_tid.clear();
  g_first_phase.clear();
  (void)s;
}

void trace_end_launch(Scheduler& s) {
  if (!g_options.trace) return;
  for (const auto& [key, role] : g_first_phase) {
    auto it = g_trace.track_names.find(key);
    if (it != g_trace.track_names.end()) it->second += " (" + role + ")";
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%.3f", s.end / 1000.0);
  g_trace.meta["clock"] = "tcsim B200 timing model (docs/timing_model.md), not a measurement";
  g_trace.meta["predicted_kernel_us"] = buf;
  g_trace.meta["sms"] = std::to_string(g_options.num_sms);
  g_trace.meta["arithmetic"] = g_options.skip_math ? "skipped (timing only)" : "performed";
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Kernel annotations.
void trace_phase(const char* name, bool begin, bool draw, SrcLoc at) {
  if (!g_sched || !g_sched->cur) return;
  Fiber& f = me();
  if (!f.traced) return;
  trace_store_flush(f);
  if (begin) {
    f.open_phases.push_back(Fiber::OpenPhase{name, f.t, draw, at});
    auto key = std::make_pair(linear_cta(*f.cta), f.warp);
    if (draw && std::string(name) != "setup" && std::string(name) != "teardown" && !g_first_phase.count(key))
      g_first_phase[key] = name;
    return;
  }
  // Spans must nest (docs/tracing.md), on the GPU as here: an end closes the innermost begin.
  if (f.open_phases.empty() || std::string(f.open_phases.back().name) != name)
    fail_here("trace annotation ends a phase that is not the innermost open one",
              std::string("end of \"") + name + "\" at " + loc(at) + "; " +
                  (f.open_phases.empty() ? std::string("no phase is open")
                                         : "the innermost open phase is \"" + std::string(f.open_phases.back().name) +
                                               "\", begun at " + loc(f.open_phases.back().at)));
  const Fiber::OpenPhase ph = f.open_phases.back();
  f.open_phases.pop_back();
  if (ph.draw) trace_span(*f.cta, f.warp, name, tcg::trace::kCatPhase, ph.t, f.t);
}

const tcg::trace::Trace& last_trace() { return g_trace; }

std::string model_parameters_markdown() {
  std::string out = "| parameter | value | unit | kind | source |\n|---|---|---|---|---|\n";
  char v[32];
  for (const Param& q : kParams) {
    snprintf(v, sizeof v, "%g", q.value);
    out += std::string("| ") + q.name + " | " + v + " | " + q.unit + " | " + q.kind + " | " + q.source + " |\n";
  }
  return out;
}

}  // namespace tcsim
