// sim_api.h — what the harness sees of the tcgen05 emulator: options, statistics, failures.
// (The kernel-facing side, used by common/ptx.cuh in the emulator build, is common/sim/sim.h.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../trace.h"

namespace tcsim {

struct Options {
  uint64_t seed = 1;                    // scheduler seed (--sim-seed): thread interleaving and
                                        // completion points of asynchronous operations
  uint64_t instruction_budget = 2000000000ull;  // emulated instructions per launch before we
                                                // report a livelock
  double watchdog_seconds = 20;         // no progress for this long -> "livelock (no progress)",
                                        // process exits 1 (0 disables the watchdog)
  int num_sms = 148;                    // SMs of the emulated GPU (--sim-sms): where CTAs are made
                                        // resident, and what a persistent kernel sizes its grid by
                                        // (tcg::num_sms()); a B200 has 148
  int ctas_per_sm = 0;                  // at most this many CTAs resident per SM (--sim-ctas-per-sm);
                                        // 0: as many as shared memory, threads and CTA slots allow
  int max_resident_ctas = 8;           // the emulator's own cap on CTAs running at once (memory and
                                        // speed of the emulation; hardware may run more)
  // The B200 timing model (common/sim/timing.cpp, its parameters common/sim/timing_params.cpp,
  // docs/timing_model.md). With `timing`, threads
  // and asynchronous work run in the order of a model clock instead of the seeded random order,
  // every CTA of a wave is resident at once, and Stats::model_ns is the predicted kernel time.
  bool timing = false;
  uint64_t tie_seed = 0;                // timing model: 0 takes equal-time events in issue order; any
                                        // other value in an order it seeds (--predict-noise)
  bool skip_math = false;               // timing-only: no MMA arithmetic and no data copies (the
                                        // output is not computed; the harness says so)
  bool trace = false;                   // record spans (last_trace()) for the CTAs below
  // The checks of common/sim/provenance.cpp: TMEM read that no MMA or copy wrote since its
  // allocation, MMA descriptors whose layout is not the one the TMA wrote. On in every step run
  // (the harness sets it); off by default because unit tests of other rules read the allocator's
  // poison on purpose (to see that a copy left the other columns alone, or a hazard's data).
  bool provenance_checks = false;
  // The report of two copies in flight into the same shared-memory bytes (async_smem_writes.cpp). On
  // by default; off only for a bandwidth microbenchmark that sends every copy into one buffer whose
  // bytes it never reads (tests/gpu/micro.cu, the DSMEM bulk-copy cases).
  bool copy_overlap_checks = true;
  std::vector<uint32_t> trace_ctas{0, 1, 2, 3};  // linear CTA indices to trace
};

struct Stats {
  uint64_t ctas = 0;
  uint64_t mmas = 0;               // tcgen05.mma instructions executed
  uint64_t mma_flops = 0;          // 2*M*N*K summed over them
  uint64_t tma_copies = 0;
  uint64_t tma_bytes = 0;          // bytes written to shared memory by TMA
  uint64_t barrier_waits = 0;      // mbarrier waits that had to block
  uint64_t fiber_switches = 0;     // context switches between emulated threads
  uint64_t instructions = 0;       // emulated PTX-level operations
  double wall_seconds = 0;         // whole launch
  double mma_seconds = 0;          // of which: MMA arithmetic (operand fetch + multiply-add)
  double copy_seconds = 0;         // of which: TMA copies
  double model_ns = 0;             // timing model: predicted kernel duration (launch to last exit)
  uint64_t clc_canceled = 0;       // clusterlaunchcontrol.try_cancel: clusters canceled (clc.cpp)
  uint64_t clc_failed = 0;         // ... and requests that found no cluster left to cancel
};

// What bounds the most recent launch on the timing model's clock (Options::timing), from the model's
// own accounting (common/sim/bounds.cpp): busy shares are the fraction of the kernel's time an
// engine was reserved, the mean over the SMs that ran CTAs and the busiest SM's; a wait's share is
// the time each warp of that role spent blocked on that barrier family, over the kernel's time.
struct Bounds {
  double kernel_ns = 0;
  int sms_used = 0;
  int ctas = 0;               // CTAs the launch made resident (more than sms_used x ctas_per_sm: several waves)
  int ctas_per_sm = 0;        // the most CTAs resident on one SM at once
  int ctas_per_sm_limit = 0;  // what shared memory, threads and CTA slots allow
  std::string limited_by;     // which of them binds first
  uint32_t smem_per_cta = 0, smem_per_sm = 0;  // bytes (a CTA's dynamic shared memory + 1 KiB reserved)
  double tensor_core = 0, tma_unit = 0, store_path = 0;              // per SM, mean
  double tensor_core_max = 0, tma_unit_max = 0, store_path_max = 0;  // the busiest SM
  double l2_read = 0, l2_requests = 0, hbm = 0, l2_write = 0;        // chip-wide
  // Per SM, mean: the share of the kernel during which the SM held CTAs but none of them was in
  // its mainloop (the MMA issuer's "mainloop" / "mma" phase): setup, epilogue and teardown that
  // no other CTA's MMAs overlap.
  double no_mainloop = 0;
  double mainloop = 0;  // ... and with at least one CTA in its mainloop
  // The engines' busy time reserved while a CTA of the SM was in its mainloop, over that time.
  double tensor_core_in_mainloop = 0, tma_unit_in_mainloop = 0, store_path_in_mainloop = 0;
  struct Wait {
    std::string barrier;  // "tma_full_bar", "mma_done_bar", ..., "__syncthreads"
    std::string role;     // the waiting warps' role: their first phase ("producer", "mma", "epilogue")
    int warps = 0;        // warps of that role that waited on it
    int ctas = 0;         // ... in how many CTAs
    double share = 0;     // mean time each of them waited, over the kernel's time
  };
  std::vector<Wait> waits;  // largest share first
};
const Bounds& last_bounds();

// Thrown out of a launch when the emulator found a bug in the kernel (deadlock, TMEM leak, bad
// descriptor, ...). what() is the full diagnostic paragraph.
struct SimError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void set_options(const Options& o);
const Options& options();
// Statistics of the most recent launch (reset at the start of each launch).
const Stats& last_stats();
// Spans of the most recent launch with Options::trace (empty otherwise), on the model clock.
const tcg::trace::Trace& last_trace();
// Global memory (common/sim/global_memory.cpp). The emulated kernels reach global memory by raw
// address (cp.async.bulk sources, the rows of a TMA load or store, 16-byte loads and stores,
// atomics); the emulator checks every such access against the allocations registered here, like
// compute-sanitizer's memcheck on a GPU, and reports one outside them (or with nothing registered)
// as a kernel bug. `bytes` is the size the allocation was asked for. The harness registers its operands and C; a test that launches a
// kernel registers the buffers it passes, most simply with a GlobalAllocation in scope.
void register_global(const void* base, size_t bytes, const char* name);  // throws if it overlaps one
void unregister_global(const void* base);
class GlobalAllocation {
 public:
  GlobalAllocation(const void* base, size_t bytes, const char* name);
  ~GlobalAllocation();
  GlobalAllocation(const GlobalAllocation&) = delete;
  GlobalAllocation& operator=(const GlobalAllocation&) = delete;

 private:
  const void* base_;
};

// The timing model's parameters as a Markdown table (quantity, value, unit, kind, source), for
// docs/performance.md and `stepNN --model-params`.
std::string model_parameters_markdown();
// Reads a parameter file (`--model-params FILE`; format in timing_params.cpp) over the current table.
// Returns "" on success, else "FILE:LINE: what is wrong" and leaves the table unchanged.
std::string load_model_params(const std::string& path);
// The value of the parameter of that name (as --model-params prints it); throws SimError if none.
double model_param(const std::string& name);
// Back to the built-in B200 table.
void reset_model_params();

// The range of a prediction (timing_params.cpp, kRanges): every parameter that is an estimate or
// carried from the H100 with a risk has a low and a high factor with the reason. Bound -1 runs the
// model with each of them at its end that makes kernels faster, +1 at the end that makes them
// slower, 0 (the default) at the point values; the factors multiply whatever value the parameter
// has (the B200 table's or a file's).
void set_model_bound(int bound);
int model_bound();
// The ranges as a Markdown table (parameter, point, low, high, unit, reason), for the docs.
std::string model_ranges_markdown();

}  // namespace tcsim
