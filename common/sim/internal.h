// internal.h — the emulator's state, shared by the files of common/sim/ (not by kernels or the
// harness: they see sim.h and sim_api.h).
//
// One launch is a Scheduler. It runs the grid one cluster at a time; a Cluster owns its CTAs
// (Cta: shared memory, mbarriers, TMEM, threads) and the cluster barrier. Every CUDA thread is a
// Fiber. Asynchronous work (copies, tcgen05 operations, remote arrivals) is an AsyncOp, queued
// when issued and performed when the seeded scheduler picks it.
//
// Files: scheduler.cpp (fibers, wait queues, warp collectives, the run loop, livelock reports),
// deadlock.cpp (the deadlock report), launch.cpp (grid, SMs and residency, clusters, CTA start and exit checks), memory.cpp (shared
// and cluster addressing, distributed shared memory), sync.cpp (bar.sync, __syncwarp, elect,
// fences, the cluster barrier), mbarrier.cpp, copies.cpp (TMA, bulk copies, multicast),
// tmem.cpp (allocator, tcgen05.ld, the tcgen05 fence protocol), mma.cpp (tcgen05.mma, commit),
// mma_block_scaled.cpp (tcgen05.cp, tcgen05.mma kind::mxf4nvf4), tmem_hazards.cpp (the ordering
// of asynchronous tcgen05 operations and their TMEM hazards), global_memory.cpp (the registry of
// global allocations and the bounds of raw global accesses), global_order.cpp (global memory
// ordering between threads), happens_before.cpp (the one happens-before relation every ordering
// check asks),
// names.cpp (how reports name threads, CTAs, lines and an operation's issuer),
// warp_mma.cpp (ldmatrix, mma.sync), tma_store.cpp (TMA stores, bulk groups, the proxy fence),
// tensormap_replace.cpp (tensor maps rewritten on the device, the tensormap-proxy fences),
// clc.cpp (cluster launch control), timing.cpp (the B200 timing model and the trace),
// timing_params.cpp (the timing model's parameter table and parameter files), provenance.cpp (what
// wrote each TMEM cell and shared-memory piece: reads of unwritten TMEM, operand layouts that
// differ from what the TMA wrote), bounds.cpp (what bounds a timed launch: engines' busy time,
// waits per barrier, CTAs per SM), async_smem_writes.cpp (copies' destinations until a wait saw
// them land), tmem_slot.cpp (the TMEM address tcgen05.alloc writes to shared memory).
// Headers: this one; event_queue.h (the timing model's event queue; open_index.h, the hash map it
// and l2_cache.h use); tma_store.h (TMA stores' and the proxy rules' types); fiber_switch.h (switching
// between the scheduler and the fibers, fiber_switch.cpp); happens_before.h (the vector clocks;
// tmem_hazards.h includes it); provenance.h; async_smem_writes.h; tensor_map_boxes.h (decoded
// tensor maps, the bytes of a box); tmem_hazards.h (tmem_hazards.cpp's types and checks) and timing.h (the timing
// model's entry points), both included below; timing_params.h (the parameters, for timing.cpp and
// timing_params.cpp only); sim.h and sim_api.h (the emulator's public side).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../descriptors.h"
#include "event_queue.h"
#include "fiber_switch.h"
#include "sim.h"
#include "async_smem_writes.h"
#include "tensor_map_boxes.h"
#include "provenance.h"
#include "bounds.h"
#include "timing.h"
#include "tmem_hazards.h"
#include "tmem_ld.h"
#include "tma_store.h"

namespace tcsim {
namespace detail {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kSmemBase = 0x400;          // dynamic smem begins after 1 KiB reserved (as on sm_90+)
constexpr uint32_t kMaxDynamicSmem = 232448;   // sm_100 per-CTA dynamic shared memory limit
constexpr uint32_t kRankShift = 24;            // shared::cluster address bits 24+ hold the CTA rank
constexpr uint32_t kOffsetMask = (1u << kRankShift) - 1;
constexpr uint32_t kMaxClusterSize = 16;       // non-portable maximum; 8 is the portable one
constexpr size_t kStackBytes = 256 * 1024;
constexpr uint32_t kTmemPoison = 0xFFC0DEADu;  // a NaN
constexpr int kNumNamedBarriers = 16;

extern Options g_options;
extern Stats g_stats;
// Incremented whenever the emulation makes progress; the watchdog thread reads it.
extern std::atomic<uint64_t> g_heartbeat;
// Progress for the watchdog: only the emulator's thread writes it, so no locked read-modify-write.
inline void heartbeat() { g_heartbeat.store(g_heartbeat.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
  size_t below(size_t n) { return size_t(next() % n); }
};

std::string hex(uint64_t v);
std::string loc(SrcLoc at);

struct Cta;
struct Fiber;
struct Cluster;
// Threads blocked on one object (an mbarrier, a CTA barrier, a warp collective). The object
// notifies its queue when its state changes, so waking is proportional to the waiters.
using WaitQueue = std::vector<Fiber*>;

// The happens-before relation (HbClock, Stamp): happens_before.h. The ordering of asynchronous
// tcgen05 operations (TcOp, TmemUse, tc_issue): tmem_hazards.h.

// Who issued an operation, for a report: made into text only when one is written (a string per
// copy, commit and arrive was a measurable share of a --predict run). The issuing thread lives as
// long as its cluster, which holds every barrier the operation reaches.
struct Origin {
  const char* what = nullptr;  // "the TMA copy"; null: the thread itself ("<thread> at <line>")
  bool the = false;            // "the " before `what` (an instruction's name)
  const Fiber* by = nullptr;
  SrcLoc at{};
  const Cta* into = nullptr;  // a copy into another CTA: "<what> into <CTA> issued by ..."
  std::string text() const;
};

struct Mbar {
  uint32_t phase = 0;
  uint32_t expected = 0;
  int64_t pending = 0;
  int64_t tx = 0;
  SrcLoc init_at{};
  Fiber* init_by = nullptr;
  // The initialisation (happens_before.h stamps): the init itself; the initialising thread's
  // fence.mbarrier_init after it (publishes it to the async proxy and the cluster); the
  // releasing cluster arrives of threads ordered after it (publish it to the other CTAs).
  Stamp init_stamp, fence_stamp;
  std::vector<Stamp> cluster_released;
  WaitQueue waiters;
  // The happens-before clocks joined by the arrivals of the current phase, and of the last
  // completed phase of each parity (what a wait for that parity acquires).
  HbClock hb_acc, hb_done[2];
  // The exit check (launch.cpp): the latest phase that an asynchronous arrival or complete_tx (a
  // TMA copy, a tcgen05.commit, a try_cancel response) landed in, plus one, and what it was; and
  // how many phases a wait of this CTA has seen completed.
  uint32_t async_phase_end = 0, observed = 0;
  Origin async_by;  // the TMA load (or other asynchronous arrival) that landed last
  const Fiber* tx_by = nullptr;  // the last arrive.expect_tx: by whom, in which phase (async_smem_writes.cpp)
  uint32_t tx_phase = 0;
};

// An asynchronous operation: performed later, when the scheduler picks it. `targets` names the
// CTAs (bit = cluster rank) whose shared memory, mbarriers or TMEM it touches, so a CTA that exits
// with work in flight towards it can be reported.
struct AsyncOp {
  std::function<void()> run;
  uint32_t targets = 0;  // ranks in the issuer's cluster
  const char* what = "";
  Fiber* issuer = nullptr;
  SrcLoc at{};
  Cluster* cluster = nullptr;  // the issuer's (filled in when queued)
  bool remote_arrive = false;  // an mbarrier arrive on another CTA: a releasing cluster arrive completes it
  // Timing model (timing.cpp): when the operation completes on the model clock (ns), and its
  // issue number (orders ties, finds it again from the event queue).
  double t = 0;
  uint64_t seq = 0;
};

// One warp's tcgen05.ld in flight (LdBatch) and a lane's operands (LdLaneArgs): tmem_ld.h.

// TMA stores, bulk groups and the proxy rules' shared-memory chunks: tma_store.h.

enum class FState { kRunnable, kBlocked, kDone };

struct Fiber {
  FiberContext ctx;  // where it resumes (fiber_switch.h); made to start at fiber_entry on its stack
  // What the timing model's run loop reads of a thread for each of its events (is the event
  // current, when does it run), kept in the cache line of ctx: one line to fetch per event.
  FState state = FState::kBlocked;         // made runnable when the launch starts
  int run_idx = -1;                        // position in Scheduler::runnable (timed: 0), -1 if not there
  // Timing model (timing.cpp): the stamp of this thread's valid entry in the event queue, and its
  // clock (ns since the launch).
  uint64_t heap_stamp = 0;
  double t = 0;
  double wake_cost = 0;  // while blocked (timed): its wake-up, added when it is made runnable
  void* stack = nullptr;
  const uint64_t* canary = nullptr;  // a slab stack's canary word (scheduler.cpp); none: a guarded stack
  ThreadVars vars{};
  int tid = 0, warp = 0, lane = 0;
  Cta* cta = nullptr;
  bool has_tc_ops = false;                 // listed in Scheduler::tc_busy
  std::function<bool()> ready;             // while blocked: may it continue?
  std::function<std::string()> waits_on;   // while blocked: what for (deadlock report)
  SrcLoc at{};                             // source line of the current instruction
  // Timing model: it went on past a warp collective that its warp's last lane has not reached
  // (collective_continue): generation `continued_gen` of Cta::continued[warp].
  bool continued = false;
  // Its last barrier arrival wrote its release (epoch - 1) into the barrier's clock only
  // (hb_release_join's shortcut), not into its own: the barrier's acquire brings it
  // (hb_acquire_phase), else its next instruction first adds it (hb_settle_release).
  bool hb_release_pending = false;
  uint64_t continued_gen = 0;
  std::vector<std::shared_ptr<LdBatch>> pending_ld;  // tcgen05.ld not yet waited for
  // Ordering of tcgen05 operations against thread synchronisation (PTX ISA §9.7.16.6.4):
  // a thread synchronisation since the last tcgen05.fence::after_thread_sync, and a tcgen05
  // operation since the last tcgen05.fence::before_thread_sync (or tcgen05.commit).
  const char* sync_pending_fence = nullptr;
  SrcLoc sync_at{};
  const char* tc_pending_fence = nullptr;
  SrcLoc tc_at{};
  // While sync_pending_fence is set: its clock from before the first synchronisation since its
  // last tcgen05.fence::after_thread_sync, what its tcgen05 operations see (tmem_hazards.cpp).
  HbClock hb_fenced;
  const char* sync_first = nullptr;  // that first synchronisation, and where
  SrcLoc sync_first_at{};
  std::deque<AsyncOp> tc_ops;              // issued tcgen05 async ops, completed in order
  // The happens-before relation (happens_before.h): this thread's agent number, its current
  // epoch, its clock (also what it knows of every agent's tcgen05 operations, tmem_hazards.cpp),
  // and its clock as of its last fence.proxy.async (the proxy rules, tma_store.cpp). Its own mma /
  // cp and commits issued so far, and (lane 0 of a warp) the warp's tcgen05.ld / wait::ld counts.
  uint32_t agent = 0, epoch = 1;
  // The epoch of this thread's last fence.mbarrier_init.release.cluster (0: none). A later
  // relaxed release (barrier.cluster.arrive.relaxed) carries it: fence.release followed by a
  // relaxed arrive is a release pattern (§8.9), for the inits the fence covers.
  uint32_t init_fence_epoch = 0;
  HbClock hb, hb_at_proxy_fence;
  uint32_t tc_issued = 0, tc_commits = 0, lds_issued = 0, ld_waits = 0;
  // barrier.cluster: arrivals made, waits completed (an arrive must be followed by a wait).
  uint32_t cluster_arrivals = 0, cluster_waits = 0;
  uint32_t remote_arrives_pending = 0;  // its mbarrier arrives on other CTAs not yet performed (mbarrier.cpp)
  // Timing model (timing.cpp): besides t and heap_stamp (above), the completion time of its last
  // tcgen05 operation (they complete in order), and what it records for the trace (lane 0 of a
  // traced CTA's warp).
  double tc_last = 0;
  bool traced = false;
  const char* wait_label = nullptr;  // what the next block_until waits for (trace span name)
  // bounds.cpp: the kernel's open wait annotation ("wait tma_full_bar", its stage or -1) and the
  // warp's role (its first drawn phase), for naming waits in traces and the --predict bounds.
  const char* wait_phase = nullptr;
  int wait_arg = -1;
  const char* role = nullptr;
  struct OpenPhase {
    const char* name;
    double t;   // when it began
    bool draw;  // recorded as a span (coarse phases), or only checked for pairing (fine ones)
    SrcLoc at;  // the begin annotation
  };
  std::vector<OpenPhase> open_phases;  // trace_phase begin, not yet ended (innermost last)
  double ld_start = -1;              // tcgen05.ld issued, not yet waited for (trace)
  double store_start = -1, store_end = -1;  // the run of global stores being recorded (trace)
  // TMA stores (tma_store.cpp): issued and not yet committed; committed groups, oldest first;
  // shared-memory chunks (indices into Cta::chunks) it wrote since its last fence.proxy.async.
  std::vector<std::shared_ptr<BulkStore>> bulk_open;
  std::deque<BulkGroup> bulk_groups;
  std::vector<uint32_t> unfenced_chunks;
  std::vector<uint32_t> unfenced_reads;     // chunks it loaded (generic proxy) since its last fence.proxy.async
  uint64_t global_stores = 0;               // timing model: this thread's global store instructions so far
  double store_drain = 0;                   // timing model: when its last global store reaches L2
  double dsmem_drain = 0;                   // timing model: when its last st.shared::cluster to a peer has landed
  double wake_delay = 0;                    // timing model, lane 0: how far wake_lanes_not_before put off its wake
};

// A warp-collective (.sync.aligned) instruction in progress.
struct Collective {
  const char* op = nullptr;
  SrcLoc at{};
  int arrived = 0;
  uint64_t generation = 0;
  std::array<void*, 32> data{};
  WaitQueue waiters;
};

struct CtaBarrier {
  uint32_t arrived = 0;
  uint32_t expected = 0;
  uint64_t generation = 0;
  WaitQueue waiters;
  HbClock hb_acc, hb_done;      // happens-before: joined by arrivals, acquired by the released threads
  HbClock hb_bases[kHbBases];   // clocks of this phase's arrivals, before their release (hb_release_join)
};

struct TmemAlloc {
  uint32_t col, ncols;
  int warp;
  SrcLoc at;
};

// A pair-collective tcgen05 instruction (cta_group::2 alloc / dealloc / relinquish): one warp of
// each CTA of the pair executes it; the second warp to arrive performs it for both.
struct PairCollective {
  const char* op = nullptr;
  Cta* cta = nullptr;  // the CTA whose warp arrived first
  int warp = -1;
  uint32_t a = 0, b = 0;  // operands (dst offset / taddr, ncols)
  SrcLoc at{};
  uint64_t generation = 0;
  WaitQueue waiters;
};

// A streaming multiprocessor of the emulated GPU: the CTAs resident on it share its shared memory,
// its thread slots and its 128 x 512 TMEM columns.
struct Sm {
  uint32_t id = 0;
  // Timing model: when each of the SM's engines is free again (ns): the tensor core, the TMA
  // unit, the path to L2 for the SM's global stores, and the TMEM read port of each of the four
  // sub-partitions (tcgen05.ld).
  double tc_free = 0, tma_free = 0, store_free = 0, ld_free[4] = {0, 0, 0, 0};
  double dsmem_free = 0;  // the SM's path to the other SMs of its cluster (distributed shared memory)
  std::vector<uint32_t> tmem;  // 128 lanes x 512 columns
  std::vector<uint8_t> tmem_written;  // per cell: an MMA or copy issued since its allocation writes it (provenance.cpp)
  std::vector<Cta*> resident;
  uint32_t smem_used = 0, threads_used = 0;
};

// Who reached into this CTA's shared memory or TMEM from another CTA of the cluster, and when
// (its happens-before stamp), for the exit check.
struct RemoteAccess {
  Stamp stamp;
  Fiber* by = nullptr;
  const char* what = "";
  SrcLoc at{};
};

struct Cta {
  uint3 block_idx{};
  uint32_t rank = 0;  // %cluster_ctarank
  Cluster* cluster = nullptr;
  Sm* sm = nullptr;  // where it is resident
  std::vector<uint8_t> smem_storage;
  uint8_t* smem = nullptr;
  uint32_t smem_bytes = 0;
  std::map<uint32_t, Mbar> mbars;  // keyed by shared::cta offset (address without rank bits)
  std::vector<TmemAlloc> allocs;   // its columns of its SM's TMEM
  bool relinquished = false;
  std::vector<Fiber*> fibers;
  std::vector<Collective> warps;
  std::vector<Collective> continued;  // timing model: per warp, a collective its early lanes went on past
  std::vector<std::array<LdLaneArgs, 32>> ld_args;  // per warp and lane: a continued tcgen05.ld's operands
  std::vector<int> warp_exited;
  std::vector<WarpStores> warp_stores;  // timing model: per warp, its store instructions not yet charged (timing.cpp)
  int exited = 0;
  bool finished = false;  // every thread exited
  CtaBarrier bars[kNumNamedBarriers];
  PairCollective pair_op;  // cta_group::2 collective in progress (shared by the pair: lives in the even CTA)
  std::vector<RemoteAccess> remote_accesses;  // latest access per accessing CTA rank
  // Bulk copies (dsmem.cpp) that read this CTA's shared memory and complete on another CTA's
  // mbarrier: each is an agent of its own whose `committed` entry the completion publishes. The
  // CTA may exit only once one of its threads knows that (launch.cpp), on every seed.
  std::vector<RemoteAccess> outgoing_copies;
  std::vector<std::shared_ptr<LdBatch>> pending_lds;  // tcgen05.ld issued here, not yet waited for
  // clc.cpp: offsets of try_cancel responses in flight towards this CTA, and where a thread of it
  // first saw a failed response (after which another try_cancel is undefined, §9.7.13.17).
  std::vector<uint32_t> clc_in_flight;
  std::vector<uint32_t> clc_landed;  // offsets where a response has landed at least once
  SrcLoc clc_failed_at{};
  std::vector<SmemChunk> chunks;  // per 16 bytes of shared memory, once a generic store or TMA store used it (tma_store.cpp)
  std::vector<TmemUse> tmem_uses;  // TMEM cells of async tcgen05 operations that may still conflict
  // The exit check (launch.cpp): per issuing agent, the last mma / cp that reads or writes this
  // CTA's shared memory or TMEM; its completion must be ordered before the CTA ends.
  std::vector<std::shared_ptr<TcOp>> tc_targets;
  // provenance.cpp: the MMAs / copies that wrote its TMEM since each allocation; per 128 bytes of
  // shared memory the TMA load that last wrote it (index + 1 into tma_sites, 0: none).
  std::vector<TmemWriteSite> tmem_writes;
  std::vector<uint16_t> tma_piece;
  std::vector<TmaWriteSite> tma_sites;
  std::vector<std::shared_ptr<CopyWrite>> copy_writes;  // copies no wait has seen land (async_smem_writes.cpp)
  std::vector<TmemSlotWrite> tmem_slots;  // tcgen05.alloc's address writes; readers waiting (tmem_slot.cpp)
  WaitQueue tmem_slot_waiters;
};

struct Cluster {
  uint3 id{};  // %clusterid
  dim3 shape{1, 1, 1};
  std::vector<Cta*> ctas;  // by rank
  std::vector<std::unique_ptr<Cta>> owned_ctas;
  std::vector<std::unique_ptr<Fiber>> fibers;
  size_t done = 0;  // fibers that have exited
  // barrier.cluster (§9.7.13.3): completed phases, arrivals in the current phase.
  uint64_t phases = 0;
  uint32_t arrived = 0;
  uint32_t threads = 0, exited = 0;
  WaitQueue waiters;
  HbClock hb_acc, hb_done;      // happens-before across the cluster barrier
  HbClock hb_bases[kHbClusterBases];  // clocks of this phase's releasing arrivals, before their release (hb_release_join)
};

// Timing model: a running thread may run ahead of the next event by at most this (ns) before it
// yields; it bounds the error of the interleaving, not of the durations (docs/timing_model.md).
constexpr double kLookaheadNs = 10.0;

struct Scheduler {
  FiberContext main_ctx;  // where a fiber returns to the scheduler
  Fiber* cur = nullptr;
  Rng rng{1};
  double p_preempt = 0.2, p_async = 0.3;
  double p_newest_first = 0;  // when async work must complete: chance to take the newest copy/arrival
  bool failed = false;
  std::string error;
  // The grid runs on `sms`: clusters are made resident (all their CTAs at once, on distinct SMs)
  // in grid order as resources allow, and retired when all their threads have exited.
  std::vector<Sm> sms;
  std::vector<std::unique_ptr<Cluster>> clusters;  // resident
  uint64_t next_cluster = 0, num_clusters = 0;
  dim3 cluster_shape{1, 1, 1};
  uint32_t smem_per_cta = 0, max_ctas_per_sm = 1, max_resident_ctas = 1, resident_ctas = 0;
  WaitQueue tmem_waiters;          // tcgen05.alloc waiting for TMEM columns to be freed
  std::vector<AsyncOp> async_ops;  // copies, remote arrivals, tcgen05.ld reads: complete in any order
  std::vector<Fiber*> runnable;    // fibers that may run now (order irrelevant: picks are random)
  size_t timed_runnable = 0;       // their number under the timing model (which keeps no list)
  std::vector<Fiber*> tc_busy;     // fibers with queued tcgen05 operations
  bool retire_pending = false;     // a cluster finished: retire it on the scheduler's stack
  // Admission can only succeed at the start and after a retirement (nothing else frees an SM's
  // room), so the run loops call admit_clusters only then, not on every event.
  bool admit_pending = true;
  const std::function<void()>* body = nullptr;
  dim3 grid, block;
  uint32_t next_agent = 0;         // numbers the fibers (agents of the happens-before clocks)
  uint64_t generic_reads = 0;      // GenericRead records alive (tma_store.cpp): none, no fence needs a snapshot
  // Timing model (Options::timing): events run in the order of the model clock. The queue holds
  // runnable threads, asynchronous operations and tcgen05 queue heads by time; `now` is the time
  // of the event being run; a running thread yields once its clock passes `horizon` (the next
  // event + a small lookahead). `end` is the latest completion seen (the kernel's duration).
  bool timed = false;
  using Event = detail::Event;  // event_queue.h
  EventQueue events;              // by time, equal times in issue order (event_queue.h)
  uint64_t next_seq = 1;
  double now = 0, horizon = 0, end = 0, admit_time = 0;
  // Every tcgen05 instruction of a kernel uses the same .cta_group (0: none seen yet).
  int cta_group = 0;
  SrcLoc cta_group_at{};
  const char* cta_group_op = nullptr;
  // clc.cpp: clusters (grid order) canceled by clusterlaunchcontrol.try_cancel before launch;
  // admit_clusters skips them.
  std::vector<uint8_t> clc_canceled;
};

extern Scheduler* g_sched;

// ---- timing model (timing.h has its declarations; timing.cpp, docs/timing_model.md)
inline bool timed() { return g_sched && g_sched->timed; }

// ---- what bounds a timed launch: bounds.h (bounds.cpp)

// ---- global memory ordering between threads (global_order.cpp)
void global_order_reset();  // at each launch

// ---- failure reporting (scheduler.cpp; who, cta_name and the other names in reports: names.cpp)
[[noreturn]] void fail(const std::string& msg);
[[noreturn]] void fail_here(const std::string& kind, const std::string& detail);
Fiber& me();
std::string who(const Fiber& f);
std::string cta_name(const Cta& cta);

// ---- scheduling (scheduler.cpp)
void yield();
void tick(SrcLoc at);
void tick_unsettled(SrcLoc at);  // tick, leaving a continued collective (collective_continue) unsettled
void set_runnable(Fiber* f);
void block_until(WaitQueue& q, std::function<bool()> ready, std::function<std::string()> waits_on);
void notify(WaitQueue& q);
// Timing model, from a warp collective's `op`: the lanes waiting in it resume at `t` at the
// earliest (with their wake-up), not when the last lane arrived: for a collective after which
// each lane would spend until `t` at once (tcgen05.wait::ld), one scheduling event instead of two.
void wake_lanes_not_before(Collective& c, double t);
void push_async(AsyncOp op);
void push_tc_op(Fiber& f, AsyncOp op);
int live_lanes(const Cta& cta, int warp);
bool same_loc(SrcLoc a, SrcLoc b);
// A callable borrowed for the duration of a call (no copy, no allocation): what collective()
// takes, since only the last lane's `op` runs, before that lane's call returns.
class CollectiveOp {
 public:
  template <class F>
  CollectiveOp(const F& f) : obj_(&f), call_([](const void* o, Collective& c) { (*static_cast<const F*>(o))(c); }) {}
  void operator()(Collective& c) const { call_(obj_, c); }

 private:
  const void* obj_;
  void (*call_)(const void*, Collective&);
};
// Warp collectives (.sync.aligned): all live lanes of the warp execute the same instruction; the
// last to arrive performs `op` with every lane's data. full_warp: all 32 lanes must be alive.
void collective(const char* name, void* data, CollectiveOp op, bool full_warp = false);
// Timing model: a full-warp collective whose lanes need nothing from it before a later collective
// of theirs (tcgen05.ld: its registers are undefined until tcgen05.wait::ld). A lane that is not
// the last to arrive goes on instead of blocking, and its next instruction waits for the last
// one (settle_collective, from tick) unless that instruction is the later collective
// (tick_unsettled), whose own wait covers it: a warp's ld and wait::ld stop each lane once, not
// twice. `data` must outlive the call. The model's times are those of collective().
void collective_continue(const char* name, void* data, CollectiveOp op);
void settle_collective(Fiber& f);
// Runs the grid: admits clusters (admit_clusters), interleaves their threads and asynchronous
// work, retires finished clusters, until every cluster has run.
void run_grid(Scheduler& s);
void* get_stack();
void release_stack(void* stack);
void create_fiber(Scheduler& s, Cluster& cl, Cta* cta, uint32_t t);
std::string deadlock_report(Scheduler& s);  // deadlock.cpp
// Ends the process with a livelock report if no emulated instruction runs for `seconds`
// (a spin on ordinary memory); stops when the returned handle is destroyed.
std::shared_ptr<void> start_watchdog(double seconds);

// ---- CTA lifecycle (launch.cpp)
void cta_finished(Cta& cta);  // the last thread of `cta` exited: exit checks
// Makes the next clusters of the grid resident while SMs have room; false when none could be
// placed although some remain and nothing is resident (cannot happen for a valid launch).
void admit_clusters(Scheduler& s);
void retire_clusters(Scheduler& s);  // frees the SM resources and threads of finished clusters
// clc.cpp: moves next_cluster past clusters that a try_cancel has canceled.
void clc_skip_canceled(Scheduler& s);

// ---- shared memory (memory.cpp)
struct SmemRef {
  Cta* cta;
  uint32_t off;  // byte offset into cta->smem
};
// A shared::cta operand: the address must name this CTA.
SmemRef smem_ref(Cta& cta, uint32_t addr, uint32_t bytes, const char* what);
uint8_t* smem_ptr(Cta& cta, uint32_t addr, uint32_t bytes, const char* what);
// A shared::cluster operand: the rank bits pick the CTA of the running thread's cluster.
Cta& cluster_cta(uint32_t addr, const char* what);
SmemRef smem_ref_cluster(uint32_t addr, uint32_t bytes, const char* what);
void check_no_mbarrier_in(Cta& cta, uint32_t addr, uint32_t bytes, const char* what);
// Records that the running thread reached into `target` (another CTA) for the exit check, and
// fails if `target` has already exited.
void note_remote_access(Cta& target, const char* what);
void check_target_alive(Cta& target, const char* what);

// ---- synchronisation (sync.cpp)
void note_thread_sync(const char* what, SrcLoc at);
// An .aligned barrier: every live lane of the warp arrives at the same instruction first.
void converge_aligned(const char* what);
extern const char* const kSyncthreadsOp;  // the collective name of __syncthreads (exited lanes count)
void check_fence_before(const char* what);
void tcgen05_op(const char* what);
// Records the .cta_group of a tcgen05 instruction; all of a kernel's must agree.
void use_cta_group(int cta_group, const char* what);
// The pair peer of `cta` (rank ^ 1); fails unless the cluster has one.
Cta& pair_peer(Cta& cta, const char* what);
// The peer of a cta_group::2 MMA (`name`): fails unless issued by the even CTA, whose `applies`
// (its descriptors, TMEM address, ...) then apply to both CTAs.
Cta& pair_mma_peer(Cta& cta, const char* name, const char* applies);
void cluster_thread_exited(Fiber& f);

// ---- mbarrier (mbarrier.cpp)
Mbar& mbar_at(Cta& cta, uint32_t bar, const char* what);
Mbar& mbar_at_cluster(uint32_t bar, const char* what, Cta** target = nullptr);
std::string describe_mbar(const Mbar& b);
void mbar_check_phase(Mbar& b, uint32_t addr, const Origin& by);
// `carried`: the tcgen05 ordering the arrival releases (the arriving thread's clock, a commit's).
void mbar_do_arrive(Mbar& b, uint32_t addr, uint32_t count, const Origin& by, const HbClock* carried = nullptr);
// An asynchronous operation (TMA complete_tx, a commit's arrival, a try_cancel response) lands on
// `b` now: recorded for the exit check (a wait of the CTA must see that phase complete).
void mbar_note_async(Mbar& b, const Origin& by);
void mbar_add_tx(Mbar& b, uint32_t addr, int64_t delta, const Origin& by);
// The async proxy (TMA complete_tx, tcgen05.commit) or another CTA is about to use `b`: its
// initialisation must have been published to it (fence.mbarrier_init + a synchronisation).
void check_mbar_published(const Mbar& b, uint32_t addr, bool async_proxy, bool remote, const char* what);
// fence.mbarrier_init / releasing cluster arrive of the running thread publish its inits.
void publish_inits(bool fence, bool cluster_release);

// ---- TMEM (tmem.cpp)
uint32_t& tmem_cell(Cta& cta, uint32_t lane, uint32_t col);  // in the CTA's SM's TMEM
std::string describe_sm_tmem(const Sm& sm);                 // who holds which columns
const TmemAlloc* tmem_find(const Cta& cta, uint32_t col, uint32_t ncols);
std::string describe_allocs(const Cta& cta);
// "columns [a, b) of the allocation at column c (absolute [x, y))": TMEM columns as a learner
// reads them, relative to the allocation that holds them (the allocator's base depends on the seed).
std::string tmem_cols(const Cta& cta, uint32_t col0, uint32_t ncols);
void tmem_check_range(Cta& cta, uint32_t lane0, uint32_t nlanes, uint32_t col0, uint32_t ncols, const char* what);
// An MMA is about to write [lane0, +nlanes) x [col0, +ncols) of `cta`'s TMEM: fails (from the
// scheduler's stack) if a tcgen05.ld not yet waited for still reads any of those cells.
void check_no_pending_ld(Cta& cta, uint32_t lane0, uint32_t nlanes, uint32_t col0, uint32_t ncols, const std::string& writer);

// ---- numbers (mma.cpp)
float f16_bits_to_float(uint16_t h, bool bf16);
// ---- descriptors (mma.cpp): fixed bits, reserved bits, layout type, swizzle-repeat alignment
void check_smem_desc(const tcg::SmemDesc& d, const char* operand, uint64_t raw);

// ---- global memory (global_memory.cpp)
// Fails with a memcheck-style report (the instruction, the range, the nearest allocation and how
// far past its end) unless [p, p + bytes) lies inside one allocation registered with
// register_global (the harness registers its operands and C). Every raw global address the
// emulator dereferences goes through here at issue time (cp.async.bulk, TMA boxes, vector
// stores); call it from the issuing thread.
void check_global_range(const void* p, uint64_t bytes, const char* what);
bool global_range_ok(const void* p, uint64_t bytes);  // the same test, without the report

}  // namespace detail
}  // namespace tcsim
