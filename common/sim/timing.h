// timing.h — the B200 timing model as the rest of the emulator calls it (timing.cpp;
// docs/timing_model.md): the time the running thread spends, the completion times of the
// asynchronous work it issues, global stores per warp instruction, and the trace. internal.h
// includes it (kernels and the harness never do); the parameters are timing_params.h's.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tcsim {
namespace detail {

struct Cta;
struct Fiber;
struct Scheduler;

// Pushes an event on the heap of a timed launch (Scheduler::heap; `kind` as in Scheduler::Event).
void heap_push(Scheduler& s, double t, int kind, Fiber* f, uint64_t stamp, const char* sp = nullptr);
// The running thread spends `ns` (an instruction's issue cost, a stall); it yields when its clock
// passes the horizon, so that events stay in time order.
void model_spend(Fiber& f, double ns);
double ns_per_instruction();
double wake_ns();
double wake_ns(const char* wait_label);  // the wake-up of this waiter (mbarrier waits: the hand-off)
// Completion times of asynchronous work issued now by the running thread (all in ns).
struct TmaRows {  // one TMA box / bulk copy, as the memory system sees it
  uint64_t bytes = 0;                  // delivered (complete_tx) bytes
  std::vector<std::pair<uint64_t, uint32_t>> segments;  // in-bounds global (address, length) runs
};
double model_copy(Cta& dst, const TmaRows& rows);
// A multicast copy's delivery into `dst`, another SM than the issuer's (which model_copy charged):
// its TMA unit is busy a share of the box's time (kMulticastReceiveShare); returns when the bytes
// have landed there, not before the issuer's copy (`issuer_done`).
double model_multicast_receive(Cta& dst, uint32_t bytes, double issuer_done);
// A TMA store of `src` (tma_store.cpp): completes, and has read its source (*t_read), once the
// SM's store path and the chip's L2 write path have taken its in-bounds sectors.
double model_tma_store(Cta& src, const TmaRows& rows, double* t_read);
double model_mma(Cta& cta, Cta* peer, uint32_t m, uint32_t n, uint32_t k_bytes_a, uint32_t k_bytes_b, bool pair);
double model_tcgen05_cp(Cta& cta, uint32_t bytes);
double model_tmem_ld(Cta& cta, int warp, uint32_t bytes);
void model_global_access(Fiber& f, uint32_t bytes, bool store);
double model_remote_arrive_ns();
// Distributed shared memory (dsmem.cpp): a 16-byte ld/st.shared::cluster of the running thread
// into `target` (its own CTA: a shared-memory access), and a bulk copy from `src`'s shared memory
// into `dst`'s (its completion time).
void model_dsmem_access(Fiber& f, Cta& target, uint32_t bytes, bool load);
double model_dsmem_copy(Cta& src, Cta& dst, uint32_t bytes);
// The GPU-scope membar of a .release.cluster arrive: the thread waits until its warp's earlier
// global stores have drained from the SM, plus the membar's own cost.
void model_release_membar(Fiber& f);
double model_warp_mma(Cta& cta);
double model_tmem_alloc_ns();
double model_cta_launch_ns();
// At the start of each launch: resets the chip's state and reads the per-instruction costs.
void model_begin_launch();
double model_clc_ns();  // one clusterlaunchcontrol.try_cancel round trip
// Global stores per warp instruction (timing.cpp): the charge of one instruction given the bytes
// it writes in each 32-byte sector; model_global_store joins a lane's store to its warp's
// instruction; model_thread_exit waits for the thread's stores to drain before it exits.
struct StoreCharge {
  double lines = 0, sector_units = 0;  // 128-byte lines touched; sectors, partial ones weighted
  double sm_ns = 0, chip_ns = 0;       // time on the SM's store path and on the chip's L2 write path
};
StoreCharge store_charge(const std::unordered_map<uint64_t, uint32_t>& sector_bytes);
// The same from (sector, bytes) pairs, one per sector (the form model_global_store collects).
StoreCharge store_charge(const std::vector<std::pair<uint64_t, uint32_t>>& sector_bytes);
// One warp's global store instructions not yet charged (model_global_store; Cta::warp_stores):
// the n-th store of each lane joins instruction n; `base` is the number of the first one held.
struct WarpStoreInstr {
  int lanes = 0;  // lanes joined so far; -1 once charged
  std::vector<std::pair<uint64_t, uint32_t>> sectors;  // sector -> bytes this instruction writes
};
struct WarpStores {
  uint64_t base = 0;
  std::vector<WarpStoreInstr> open;  // instructions base, base + 1, ...
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> spare;  // storage of charged ones, for reuse
};
void model_global_store(Fiber& f, const void* addr, uint32_t bytes);
void model_thread_exit(Fiber& f);
double model_fence_init_ns();          // fence.mbarrier_init (CTA setup)
void model_global_atomic(Fiber& f);  // an atom on global memory: one L2 round trip
// Trace (lane 0 of each warp of the traced CTAs; async engines per CTA).
bool trace_cta(const Cta& cta);
uint32_t linear_cta(const Cta& cta);
void trace_span(const Cta& cta, int track, const std::string& name, const char* cat, double t0, double t1);
void trace_async(const Cta& cta, const char* engine, const std::string& name, const char* cat, double t0, double t1);
void trace_store_flush(Fiber& f);
void trace_begin_launch(Scheduler& s);
void trace_end_launch(Scheduler& s);

}  // namespace detail
}  // namespace tcsim
