// timing.cpp — the emulator's B200 timing model, and the trace it records.
//
// Models (docs/timing_model.md has the reasoning and the table of parameters with sources):
//  * a clock per emulated thread; the scheduler (timed_run.cpp, run_grid_timed) always runs the
//    earliest event, so the kernel executes as it would on a machine whose engines have the
//    durations below. Every CTA of a wave is resident at once, on the SMs the block scheduler
//    would pick (the least loaded first);
//  * instructions: one issue cycle each; a thread that waits on a barrier pays a wake-up cost;
//  * the tensor core of an SM (tcgen05.mma, tcgen05.cp): operations run back to back, each busy
//    for its issue interval (N/2 cycles, or longer when the shared-memory operand reads need it)
//    and completing a fixed latency later; a cta_group::2 MMA occupies both SMs of the pair;
//  * copies (TMA, bulk): a fixed latency plus shared servers: the SM's TMA unit (a time per box
//    and the bytes), the chip's L2 (32-byte sectors, so a 16-byte row costs a whole sector, and
//    requests), and HBM for the bytes not in L2: read for the first time in the launch, or again
//    after the finite L2 (LRU over 4 KiB pages, the table's capacity x usable share) evicted them;
//  * tcgen05.ld: the TMEM read port of the warp's sub-partition; global stores: per warp
//    instruction, by the sectors (partial ones dearer) and lines it touches, through the SM's
//    store path and the chip's L2 write path, with a small store buffer; a thread exits once its
//    stores have drained; mbarrier waits resume a hand-off after the phase completes;
//  * TMA stores: the SM's store path and L2 for their in-bounds sectors, as global stores; no
//    parameter of their own (model_tma_store).
// Every duration comes from the parameter table (timing_params.cpp: B200 by default;
// load_model_params reads a file, e.g. results/params_h100.txt), read here through p() in the
// units of the table and converted to ns; nothing depends on which step runs.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "internal.h"
#include "l2_cache.h"
#include "timing_params.h"

namespace tcsim {
using namespace detail;

namespace {

double cyc(double cycles) { return cycles / p(kClockGHz); }  // cycles -> ns

// ---------------------------------------------------------------------------------------------
// The memory system of the chip: the engines' next free times, and the finite L2 (l2_cache.h)
// that decides which bytes of a read come from HBM.
struct Chip {
  double l2_free = 0, hbm_free = 0;
  double write_free = 0;    // the L2's write path (global stores)
  double l2_req_free = 0;   // the L2's request rate for TMA reads
  L2Cache l2;
  void reset() {
    l2_free = hbm_free = write_free = l2_req_free = 0;
    l2.reset(uint64_t(p(kL2CapacityMB) * 1e6 * p(kL2UsableShare)));
  }
  void sectors(uint64_t addr, uint64_t len, uint64_t* bytes, uint64_t* fresh) { l2.sectors(addr, len, bytes, fresh); }
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

// The costs paid on every instruction and wake-up, read from the table once per launch
// (model_begin_launch; the parameters cannot change during one).
namespace {
struct PerInstruction {
  double instruction = 0, wake = 0, mbar_handoff = 0, cluster_barrier = 0;
} g_per;
}  // namespace

double ns_per_instruction() { return g_per.instruction; }
double wake_ns() { return g_per.wake; }
// A blocked mbarrier.try_wait loop resumes a measured hand-off after the phase completes; other
// waits (CTA and named barriers, warp collectives) the generic wake-up.
double wake_ns(const char* wait_label) {
  if (wait_label && !strcmp(wait_label, "mbarrier wait")) return g_per.mbar_handoff;
  if (wait_label && !strcmp(wait_label, "barrier.cluster.wait")) return g_per.cluster_barrier;
  return g_per.wake;
}
double model_remote_arrive_ns() { return cyc(p(kRemoteArriveCycles)); }
double model_tmem_alloc_ns() { return cyc(p(kTmemAllocCycles)); }
double model_cta_launch_ns() { return p(kCtaLaunchNs); }
double model_clc_ns() { return p(kClcRoundTripNs); }

void heap_push(Scheduler& s, double t, int kind, Fiber* f, uint64_t stamp, const char* sp) {
  // --predict-noise: events of equal model time in a seeded order instead of issue order. A jitter
  // of under 1 ps (far below any cost of the model) decides their order and nothing else. A warp's
  // tcgen05 queue heads (kind 2) keep theirs: they complete in issue order (PTX ISA 9.7.16.6).
  if (const uint64_t seed = kind != 2 ? options().tie_seed : 0) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + s.next_seq;  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    t += 1e-3 * double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  s.events.push(Scheduler::Event{t, s.next_seq++, kind, f, stamp, sp});
  // A running thread must not run past an event it just created.
  if (s.cur && !(kind == 0 && f == s.cur)) s.horizon = std::min(s.horizon, t + kLookaheadNs);
}

void model_spend(Fiber& f, double ns) {
  Scheduler& s = *g_sched;
  f.t += ns;
  // Past the horizon the thread goes back into the heap at f.t; `now` must stay where it is until
  // the scheduler reaches f.t, or every event before it (a TMA landing, a commit arrival) would
  // run at this thread's later time, max(now, e.t), instead of its own.
  if (f.t > s.horizon) yield();
  s.now = f.t;
}

double model_copy(Cta& dst, const TmaRows& rows) {
  Scheduler& s = *g_sched;
  Sm& sm = *dst.sm;
  const double t = s.now;
  uint64_t bytes = 0, fresh = 0, requests = 0;
  for (const auto& [addr, len] : rows.segments) {
    g_chip.sectors(addr, len, &bytes, &fresh);
    requests += (uint64_t(len) + 127) / 128;  // the L2 serves a box row in requests of up to one 128-byte line
  }
  if (bytes == 0) return t + p(kTmaLatencyNs);  // all out of bounds: zero fill, no memory traffic
  // The SM's TMA unit: a fixed time per box (or bulk copy), then the bytes it writes to shared
  // memory; the chip's L2: the sectors it reads (a 16-byte row costs a whole 32-byte sector) and
  // the requests; HBM: the sectors read for the first time in the launch.
  sm.tma_free = std::max(t, sm.tma_free) + cyc(p(kTmaBoxCycles)) + double(rows.bytes) / p(kTmaSmBytesPerNs);
  g_chip.l2_free = std::max(t, g_chip.l2_free) + double(bytes) / p(kL2BytesPerNs);
  g_chip.l2_req_free = std::max(t, g_chip.l2_req_free) + double(requests) / p(kTmaChipRequestsPerNs);
  bounds_engine(sm, BoundsEngine::kTmaUnit, cyc(p(kTmaBoxCycles)) + double(rows.bytes) / p(kTmaSmBytesPerNs));
  bounds_chip(BoundsChip::kL2Read, double(bytes) / p(kL2BytesPerNs));
  bounds_chip(BoundsChip::kL2Requests, double(requests) / p(kTmaChipRequestsPerNs));
  double stream_end = std::max({sm.tma_free, g_chip.l2_free, g_chip.l2_req_free});
  if (fresh) {
    g_chip.hbm_free = std::max(t, g_chip.hbm_free) + double(fresh) / p(kHbmBytesPerNs);
    bounds_chip(BoundsChip::kHbm, double(fresh) / p(kHbmBytesPerNs));
    stream_end = std::max(stream_end, g_chip.hbm_free);
  }
  return stream_end + p(kTmaLatencyNs);
}

double model_multicast_receive(Cta& dst, uint32_t bytes, double issuer_done) {
  Sm& sm = *dst.sm;
  const double busy = p(kMulticastReceiveShare) * (cyc(p(kTmaBoxCycles)) + double(bytes) / p(kTmaSmBytesPerNs));
  sm.tma_free = std::max(g_sched->now, sm.tma_free) + busy;
  bounds_engine(sm, BoundsEngine::kTmaUnit, busy);
  return std::max(issuer_done, sm.tma_free + p(kTmaLatencyNs));
}

double model_mma(Cta& cta, Cta* peer, uint32_t m, uint32_t n, uint32_t a_bytes, uint32_t b_bytes, bool pair) {
  Scheduler& s = *g_sched;
  const double ii = cyc(std::max(p(kMmaIssueCyclesPerN) * n, double(a_bytes + b_bytes) / p(kSmemOperandBytesPerCycle)));
  const double lat = cyc(pair ? p(kMmaLatencyPair) : m == 64 ? p(kMmaLatency64) : p(kMmaLatency128));
  double start = std::max(s.now, cta.sm->tc_free);
  if (peer) start = std::max(start, peer->sm->tc_free);
  cta.sm->tc_free = start + ii;
  if (peer) peer->sm->tc_free = start + ii;
  bounds_engine(*cta.sm, BoundsEngine::kTensorCore, ii);
  if (peer) bounds_engine(*peer->sm, BoundsEngine::kTensorCore, ii);
  if (g_options.trace)  // the span's name is built only when a trace is recorded
    for (Cta* c : {&cta, peer})
      if (c && trace_cta(*c))
        trace_async(*c, "tensor core", "MMA " + std::to_string(pair ? 2 * m : m) + "x" + std::to_string(n),
                    tcg::trace::kCatMma, start, start + ii);
  return start + ii + lat;
}

double model_tcgen05_cp(Cta& cta, uint32_t bytes) {
  Scheduler& s = *g_sched;
  const double busy = cyc(double(bytes) / p(kSmemOperandBytesPerCycle));
  const double start = std::max(s.now, cta.sm->tc_free);
  cta.sm->tc_free = start + busy;
  bounds_engine(*cta.sm, BoundsEngine::kTensorCore, busy);
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
  bounds_engine(sm, BoundsEngine::kStorePath, cyc(double(bytes) / p(kStoreBytesPerCycle)));
  bounds_chip(BoundsChip::kL2Read, double(bytes) / p(kL2BytesPerNs));
  s.end = std::max(s.end, sm.store_free);
  const double backlog = cyc(p(kStoreBufferBytes) / p(kStoreBytesPerCycle));
  if (sm.store_free - f.t > backlog) model_spend(f, sm.store_free - backlog - f.t);
  if (store && f.traced) {
    if (f.store_start < 0) f.store_start = t0;
    f.store_end = f.t;
  }
}

// Distributed shared memory: the issuing SM's path to its cluster peers carries the bytes at the
// SM-to-SM rate; a load waits for the round trip, a store only for the path once more than the
// store buffer is queued on it; within one CTA, shared::cluster is shared memory (no extra cost).
void model_dsmem_access(Fiber& f, Cta& target, uint32_t bytes, bool load) {
  if (&target == f.cta) return;
  Sm& sm = *f.cta->sm;
  sm.dsmem_free = std::max(f.t, sm.dsmem_free) + cyc(double(bytes) / p(kDsmemBytesPerCycle));
  g_sched->end = std::max(g_sched->end, sm.dsmem_free);
  if (load) return model_spend(f, sm.dsmem_free - f.t + cyc(p(kDsmemLatencyCycles)));
  f.dsmem_drain = std::max(f.dsmem_drain, sm.dsmem_free + cyc(p(kDsmemCopyCycles)));
  const double backlog = cyc(p(kStoreBufferBytes) / p(kDsmemBytesPerCycle));
  if (sm.dsmem_free - f.t > backlog) model_spend(f, sm.dsmem_free - backlog - f.t);
}

// A bulk copy into a peer's shared memory: its bytes on the source SM's path to its peers (copies
// issued back to back stream at that rate: on the H100 1 KiB copies reach the same 41 GB/s as
// 32 KiB ones, so no per-copy time is charged), then the one-way latency to the complete_tx.
double model_dsmem_copy(Cta& src, Cta& dst, uint32_t bytes) {
  Sm& sm = *src.sm;
  const double t = g_sched->now;
  sm.dsmem_free = std::max(t, sm.dsmem_free) + cyc(double(bytes) / p(kDsmemBytesPerCycle));
  (void)dst;
  return sm.dsmem_free + cyc(p(kDsmemCopyCycles));
}

double model_warp_mma(Cta&) { return cyc(p(kWarpMmaCycles)); }

void model_global_atomic(Fiber& f) {
  model_global_access(f, 4, /*store=*/false);  // through the SM's path to L2
  model_spend(f, cyc(p(kGlobalAtomicCycles)));  // the returned value is needed before the thread goes on
}

// ---------------------------------------------------------------------------------------------
// Global stores, charged per warp instruction (docs/timing_model.md, "Stores"). The lanes of a
// warp are separate threads here, so each lane's store joins its warp's n-th store instruction
// (n counted per thread); when every live lane of the warp has joined, the instruction is charged
// by what it touched: each 32-byte sector costs one sector if the instruction writes all of it and
// `partial-sector cost` sectors if not; the SM's path moves `global store rate` bytes of sectors
// per cycle; the chip's L2 write path takes the 128-byte lines and the sectors at its two rates.
// Every lane waits while its SM has more than a store buffer of stores not yet accepted.
namespace {
int warp_size_of(const Cta& cta, int warp) { return std::min<int>(32, int(cta.fibers.size()) - warp * 32); }

// Adds `bytes` written to `sector` (one entry per sector; a warp's lanes mostly write neighbouring
// sectors, so the search starts at the newest).
void add_sector_bytes(std::vector<std::pair<uint64_t, uint32_t>>& v, uint64_t sector, uint32_t bytes) {
  for (size_t i = v.size(); i-- > 0;)
    if (v[i].first == sector) {
      v[i].second += bytes;
      return;
    }
  v.emplace_back(sector, bytes);
}
}  // namespace

StoreCharge store_charge(const std::vector<std::pair<uint64_t, uint32_t>>& sector_bytes) {
  StoreCharge c;
  std::vector<uint64_t> lines;
  lines.reserve(sector_bytes.size());
  for (const auto& [sector, bytes] : sector_bytes) {
    c.sector_units += bytes >= uint32_t(p(kSectorBytes)) ? 1.0 : p(kPartialSectorCost);
    lines.push_back(sector / 4);
  }
  std::sort(lines.begin(), lines.end());
  c.lines = double(std::unique(lines.begin(), lines.end()) - lines.begin());
  c.sm_ns = cyc(c.sector_units * p(kSectorBytes) / p(kStoreBytesPerCycle));
  c.chip_ns = c.lines / p(kChipWriteLinesPerNs) + c.sector_units / p(kChipWriteSectorsPerNs);
  return c;
}

StoreCharge store_charge(const std::unordered_map<uint64_t, uint32_t>& sector_bytes) {
  return store_charge(std::vector<std::pair<uint64_t, uint32_t>>(sector_bytes.begin(), sector_bytes.end()));
}

// Both servers are taken from the issue time `t` (as TMA copies are): a store waits for the
// SM's path and the chip's L2 write path, whichever frees later.
double charge_store(Sm& sm, double t, const StoreCharge& c) {
  g_chip.write_free = std::max(t, g_chip.write_free) + c.chip_ns;
  bounds_engine(sm, BoundsEngine::kStorePath, c.sm_ns);
  bounds_chip(BoundsChip::kL2Write, c.chip_ns);
  sm.store_free = std::max(std::max(t, sm.store_free) + c.sm_ns, g_chip.write_free);
  return sm.store_free;
}

void model_global_store(Fiber& f, const void* addr, uint32_t bytes) {
  Scheduler& s = *g_sched;
  Sm& sm = *f.cta->sm;
  const double t0 = f.t;
  const double backlog = cyc(p(kStoreBufferBytes) / p(kStoreBytesPerCycle));
  if (sm.store_free - f.t > backlog) model_spend(f, sm.store_free - backlog - f.t);
  Cta& cta = *f.cta;
  if (cta.warp_stores.empty()) cta.warp_stores.resize(cta.warps.size());
  WarpStores& ws = cta.warp_stores[size_t(f.warp)];
  const size_t n = size_t(f.global_stores++ - ws.base);
  while (n >= ws.open.size()) {  // a new instruction: reuse a charged one's storage
    ws.open.emplace_back();
    if (!ws.spare.empty()) {
      ws.open.back().sectors.swap(ws.spare.back());
      ws.spare.pop_back();
    }
  }
  WarpStoreInstr& w = ws.open[n];
  const uint64_t a = reinterpret_cast<uint64_t>(addr), sb = uint64_t(p(kSectorBytes));
  for (uint64_t sct = a / sb; sct <= (a + bytes - 1) / sb; ++sct)
    add_sector_bytes(w.sectors, sct, uint32_t(std::min(a + bytes, (sct + 1) * sb) - std::max(a, sct * sb)));
  if (++w.lanes >= warp_size_of(cta, f.warp)) {
    charge_store(sm, f.t, store_charge(w.sectors));
    w.lanes = -1;
    w.sectors.clear();
    // Drop the charged instructions at the front (the rest keep their numbers).
    size_t k = 0;
    while (k < ws.open.size() && ws.open[k].lanes < 0) ++k;
    if (k > 0) {
      for (size_t i = 0; i < k; ++i) ws.spare.push_back(std::move(ws.open[i].sectors));
      ws.open.erase(ws.open.begin(), ws.open.begin() + long(k));
      ws.base += k;
    }
  }
  f.store_drain = std::max(f.store_drain, sm.store_free);
  s.end = std::max(s.end, sm.store_free);
  if (f.traced) {
    if (f.store_start < 0) f.store_start = t0;
    f.store_end = f.t;
  }
}

// A thread that exits has its stores drained first: the CTA holds its SM until they are in L2.
// Instructions that some lanes of the warp never joined are charged when its last lane exits.
void model_thread_exit(Fiber& f) {
  const bool last_lane = live_lanes(*f.cta, f.warp) <= 1;
  if (last_lane && size_t(f.warp) < f.cta->warp_stores.size()) {
    WarpStores& ws = f.cta->warp_stores[size_t(f.warp)];
    for (const WarpStoreInstr& w : ws.open)  // in instruction order
      if (w.lanes >= 0) f.store_drain = std::max(f.store_drain, charge_store(*f.cta->sm, f.t, store_charge(w.sectors)));
    ws.open.clear();
  }
  if (f.store_drain > f.t) model_spend(f, f.store_drain - f.t);
}

void model_release_membar(Fiber& f) {
  double drain = std::max(f.store_drain, f.dsmem_drain);  // its remote shared stores too
  const auto& fibers = f.cta->fibers;  // in thread order: the warp's lanes are 32 consecutive ones
  for (size_t i = size_t(f.warp) * 32, end = std::min(fibers.size(), i + 32); i < end; ++i)
    drain = std::max(drain, fibers[i]->store_drain);
  const double until = std::max(drain, f.t) + cyc(p(kReleaseMembarCycles));
  if (until > f.t) model_spend(f, until - f.t);
}

// A TMA store (tma_store.cpp): no parameter of its own. Its bytes leave the SM the way global
// stores do, SM -> L2, so it is charged as one store instruction of its in-bounds sectors (whole
// rows of C: full sectors, unless a row is clipped mid-sector) on the SM's store path and the
// chip's L2 write path, shared with the threads' own global stores. The TMA unit's figures were
// measured for loads, L2 -> SM, the other direction, and are not charged. The source has been
// read, and the store counts as complete, once both paths have taken the bytes: as for global
// stores, no write latency is charged (none is published). HBM is not charged (write-back L2).
double model_tma_store(Cta& src, const TmaRows& rows, double* t_read) {
  Scheduler& s = *g_sched;
  const double t = s.now;
  // (sector, bytes) in the order the rows give them; a sector shared by two neighbouring rows is
  // merged, and rows out of address order are sorted and merged below.
  std::vector<std::pair<uint64_t, uint32_t>> sector_bytes;
  const uint64_t sb = uint64_t(p(kSectorBytes));
  uint64_t bytes = 0, fresh = 0;
  bool ordered = true;
  for (const auto& [addr, len] : rows.segments) {
    g_chip.sectors(addr, len, &bytes, &fresh);  // C now lives in L2
    for (uint64_t sct = addr / sb; sct <= (addr + len - 1) / sb; ++sct) {
      const uint32_t part = uint32_t(std::min(addr + len, (sct + 1) * sb) - std::max(addr, sct * sb));
      if (!sector_bytes.empty() && sector_bytes.back().first == sct) {
        sector_bytes.back().second += part;
        continue;
      }
      if (!sector_bytes.empty() && sector_bytes.back().first > sct) ordered = false;
      sector_bytes.emplace_back(sct, part);
    }
  }
  if (!ordered) {
    std::sort(sector_bytes.begin(), sector_bytes.end());
    size_t k = 0;
    for (size_t i = 0; i < sector_bytes.size(); ++i)
      if (k > 0 && sector_bytes[k - 1].first == sector_bytes[i].first) sector_bytes[k - 1].second += sector_bytes[i].second;
      else sector_bytes[k++] = sector_bytes[i];
    sector_bytes.resize(k);
  }
  if (sector_bytes.empty()) return *t_read = t;  // all clipped: nothing is written
  const double done = charge_store(*src.sm, t, store_charge(sector_bytes));
  *t_read = done;
  s.end = std::max(s.end, done);
  return done;
}

double model_fence_init_ns() { return cyc(p(kFenceInitCycles)); }

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

void model_begin_launch() {
  g_chip.reset();
  g_per.instruction = cyc(p(kInstructionCycles));
  g_per.wake = cyc(p(kWakeCycles));
  g_per.mbar_handoff = cyc(p(kMbarHandoffCycles));
  g_per.cluster_barrier = cyc(p(kClusterBarrierCycles));
}

void trace_begin_launch(Scheduler& s) {
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
void trace_phase(const char* name, bool begin, bool draw, SrcLoc at, int arg) {
  if (!g_sched || !g_sched->cur) return;
  Fiber& f = me();
  if (g_sched->timed) bounds_phase(f, name, begin, draw, arg);  // names waits (bounds.cpp)
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

double model_now_ns() { return g_sched && g_sched->timed && g_sched->cur ? g_sched->cur->t : -1.0; }

}  // namespace tcsim
