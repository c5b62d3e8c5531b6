// trace_buf.h — the GPU timeline recorder's vocabulary and buffer layout, shared by the kernels
// (common/ptx/trace.cuh records into it), the launch arguments (GemmArgs::trace, common/step.h)
// and the harness (common/harness/traces.cpp allocates it and turns it into a tcg::trace::Trace).
// docs/tracing.md explains the whole path.
//
// The buffer: for each traced CTA (TraceBuf::cta_ids[slot]), each warp of it and each of two
// streams, `capacity` records of 16 bytes. Stream kTraceWarpStream holds the annotations a warp
// makes in warp-uniform code (recorded by lane 0), stream kTraceElectedStream those in code that
// one elected thread runs alone (recorded by that thread): two recording threads, so two streams
// that never share a counter. Record 0 of a stream is its header (TraceStreamHeader); records
// 1, 2, ... follow in the order they were made, up to the first whose stamp is 0. The harness
// zeroes the buffer before the launch (%globaltimer is never 0). Per annotation the kernel reads
// the timer and stores one record: nothing else, so that tracing disturbs the kernel little.
#pragma once
#include <cuda_runtime_api.h>  // __host__ __device__ for g++ too

#include <cstddef>
#include <cstdint>

namespace tcg {

constexpr uint32_t kTraceMaxCtas = 64;     // --trace-ctas takes at most this many
constexpr uint32_t kTraceMaxWarps = 32;    // 1024 threads
constexpr uint32_t kTraceStreams = 2;
constexpr uint32_t kTraceWarpStream = 0;     // warp-uniform code: lane 0 records
constexpr uint32_t kTraceElectedStream = 1;  // elected-thread code: that thread records
// Records of a stream kept free for the coarse phases: once a stream has only this many left,
// fine spans are dropped (and counted), so that a long k-loop cannot crowd out the "teardown" or
// the end of "mma". A fine span is kept or dropped whole: the end of a fine span whose begin was
// stored may use the reserve, the end of one whose begin was dropped is dropped too. So a stream
// always holds properly nested begin/end pairs (reserve >= the deepest nesting of fine spans plus
// the coarse records that follow).
constexpr uint32_t kTraceCoarseReserve = 16;
constexpr uint32_t kTraceMinCapacity = 2 * kTraceCoarseReserve;
constexpr uint32_t kTraceMaxCapacity = 1u << 15;  // the recorder counts records in 16 bits

// What a kernel annotates. A wait span covers the mbarrier wait and the tcgen05 fence that
// completes its acquire, when one follows. The coarse phases (one span per warp and role) are recorded on the GPU
// and by the emulator's timing model (tcsim::trace_phase, under the same names); the fine spans
// only on the GPU, because the emulator records every wait and issue by itself.
enum class Phase : uint32_t {
  // coarse
  kSetup,     // kernel start .. after the setup barrier (barrier init, TMEM alloc)
  kMainloop,  // the k-loop of a single-stream kernel (steps 00-03)
  kEpilogue,  // TMEM or registers -> global memory (with the epilogue warps' own waits)
  kTeardown,  // the final barrier and TMEM dealloc
  kProducer,  // the TMA warp's loop (steps 04-07)
  kMma,       // the MMA warp's loop (steps 04-07)
  // fine (GPU only)
  kKTile,           // one k-tile of step 00 (arg: its index)
  kLoadTiles,       // step 00: global -> shared copies of the A and B tiles
  kMmaSync,         // step 00: ldmatrix + mma.sync over one k-tile
  kWaitTmaFull,     // waiting on tma_full_bar[arg]: the stage's bytes have landed
  kWaitMmaDone,     // waiting on mma_done_bar[arg]: the stage's MMAs are done (stage empty)
  kWaitMainloopDone,  // waiting on mainloop_done_bar: every MMA is done
  kWaitTmemFull,    // waiting on tmem_full_bar[arg]: accumulator arg is complete
  kWaitTmemEmpty,   // waiting on tmem_empty_bar[arg]: accumulator arg has been drained
  kDrain,           // before exiting: waiting until no commit or arrival is still in flight
  kCount
};

__host__ __device__ constexpr bool phase_is_fine(Phase p) { return p >= Phase::kKTile; }

// How the harness and the emulator show a phase. `arg`: how a record's argument appears: nullptr
// not at all, "[]" as an index appended to the name ("wait tma_full_bar[2]"), otherwise as
// Perfetto argument of that name.
struct PhaseInfo {
  const char* name;
  const char* cat;  // one of tcg::trace::kCat* (common/trace.h)
  const char* arg;
};
inline PhaseInfo phase_info(Phase p) {
  switch (p) {
    case Phase::kSetup: return {"setup", "phase", nullptr};
    case Phase::kMainloop: return {"mainloop", "phase", nullptr};
    case Phase::kEpilogue: return {"epilogue", "phase", nullptr};
    case Phase::kTeardown: return {"teardown", "phase", nullptr};
    case Phase::kProducer: return {"producer", "phase", nullptr};
    case Phase::kMma: return {"mma", "phase", nullptr};
    case Phase::kKTile: return {"k-tile", "phase", "k-tile"};
    case Phase::kLoadTiles: return {"load A, B tiles", "issue", nullptr};
    case Phase::kMmaSync: return {"ldmatrix + mma.sync", "compute", nullptr};
    case Phase::kWaitTmaFull: return {"wait tma_full_bar", "wait", "[]"};
    case Phase::kWaitMmaDone: return {"wait mma_done_bar", "wait", "[]"};
    case Phase::kWaitMainloopDone: return {"wait mainloop_done_bar", "wait", nullptr};
    case Phase::kWaitTmemFull: return {"wait tmem_full_bar", "wait", "[]"};
    case Phase::kWaitTmemEmpty: return {"wait tmem_empty_bar", "wait", "[]"};
    case Phase::kDrain: return {"drain", "wait", nullptr};
    case Phase::kCount: break;
  }
  return {nullptr, nullptr, nullptr};
}

// One annotation: when, which phase, begin or end, and the kernel's argument (stage, k-tile...).
struct alignas(16) TraceRecord {
  unsigned long long stamp;  // %globaltimer, nanoseconds
  uint32_t what;             // uint32_t(Phase) << 1 | 1 for begin, 0 for end
  uint32_t arg;
};
// Record 0 of each stream: written when the kernel starts (smid) and when an annotation is
// dropped.
struct alignas(16) TraceStreamHeader {
  uint32_t smid;     // %smid: the SM the CTA ran on
  uint32_t dropped;  // annotations that found the stream full (fine spans past the reserve)
  uint32_t unused[2];
};
static_assert(sizeof(TraceRecord) == 16 && sizeof(TraceStreamHeader) == 16, "16-byte records");

// The recorder's rule (common/ptx/trace.cuh, and the tests' fake recorder): whether annotation
// `p` (a begin or an end) goes into a stream that holds `stored` records, or is dropped.
// `skipped` counts the fine spans of the stream whose begin was dropped and whose end has not come
// yet; their ends are dropped too, the ends of stored fine begins may use the reserve.
__host__ __device__ inline bool trace_admit(uint32_t stored, uint32_t& skipped, uint32_t capacity, Phase p,
                                            bool is_begin) {
  if (phase_is_fine(p) && is_begin) {
    if (skipped == 0 && 1 + stored < capacity - kTraceCoarseReserve) return true;
    ++skipped;
    return false;
  }
  if (phase_is_fine(p) && skipped > 0) {
    --skipped;
    return false;
  }
  return 1 + stored < capacity;
}

// Passed by value to a traced kernel (a __grid_constant__ parameter). Default: tracing off.
struct TraceBuf {
  TraceRecord* records = nullptr;  // device memory, num_ctas * kTraceMaxWarps * kTraceStreams * capacity
  uint32_t capacity = 0;           // records per stream, header included (kTraceMinCapacity ..
                                   // kTraceMaxCapacity; the whole buffer below 2^32 records)
  uint32_t num_ctas = 0;           // how many of cta_ids are used; 0: off
  uint32_t cta_ids[kTraceMaxCtas] = {};  // linear CTA indices (blockIdx.x + gridDim.x * (...))

  __host__ __device__ bool enabled() const { return records != nullptr && num_ctas > 0; }
  // Index of record 0 of the stream of warp `warp` of cta_ids[slot].
  __host__ __device__ size_t stream_offset(uint32_t slot, uint32_t warp, uint32_t stream) const {
    return ((size_t(slot) * kTraceMaxWarps + warp) * kTraceStreams + stream) * capacity;
  }
  __host__ __device__ size_t total_records() const { return stream_offset(num_ctas, 0, 0); }
};

}  // namespace tcg
