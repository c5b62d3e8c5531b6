// test_timing_model.cpp — the emulator's B200 timing model (common/sim/timing.cpp, Options::timing)
// checked against durations worked out by hand from its documented parameters.
//
// Each case is a small kernel launched on one CTA under the timing model. The durations are
// observed on the model clock, through the spans of the trace (last_trace(): a TMA copy or an MMA
// on its engine's track, the waiting thread's "mbarrier wait") or through Stats::model_ns (launch to
// last exit). The expected side is written out in the test from the parameter VALUES below, with
// the formula in a comment; nothing is read back from the model to compute it. A separate case
// checks that the model's parameter table (model_parameters_markdown(), what `stepNN
// --model-params` prints) still holds those values, so a parameter change fails there with a
// message saying which number moved, not only through the arithmetic further down.
//
// The model, as far as these cases touch it (timing.cpp):
//   * TMA copy issued at t: three servers stream its bytes at once (the SM's TMA unit, the chip's
//     L2, and HBM for sectors read for the first time in the launch); each is busy
//     bytes / bandwidth after max(t, when it was last free); the copy completes one TMA latency
//     after the slowest of them is done. Global memory is read in 32-byte sectors per box row.
//   * tcgen05.mma: the SM's tensor core is busy for the issue interval II = max(N/2 cycles, operand
//     bytes / 128 B per cycle), the MMAs back to back; each completes a fixed latency after its
//     II. A tcgen05.commit in the same CTA arrives when the MMAs before it have completed.
//   * A thread blocked on an mbarrier resumes at the completion, plus a hand-off of 220 cycles
//     (H100 measurement); the TMA unit also pays a fixed time per box (101 cycles).
//   (Stores, CTA setup and --model-params files: tests/emulator/test_timing_model_stores.cpp.)
//
// Seven deliberately broken copies of timing.cpp each made at least one case fail: TMA latency
// 700 ns, HBM time added to the TMA time instead of overlapping it, box rows charged their bytes
// rather than whole sectors, the MMA interval without the operand-read limit, MMAs not queued
// behind each other on the tensor core, copies not queued on the TMA unit, one extra ns of MMA
// latency.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;  // small_int_matrix, from_bf16

namespace {

// ============================================================================ the parameters
//
// The values of the timing model's parameter table these tests were computed from (names as in
// the table; docs/timing_model.md gives the sources). GB/s is bytes per ns.
constexpr double kClockGHz = 1.86;          // "SM clock": one cycle = 1/1.86 ns = 0.5376 ns
constexpr double kMmaIICyclesPerN = 0.5;    // "tcgen05.mma issue interval": N/2 cycles
constexpr double kMmaLatency128 = 136;      // "tcgen05.mma latency beyond II, M=128" (cycles)
constexpr double kSmemOperandBpc = 128;     // "MMA shared-memory operand read" (B/cycle/SM)
constexpr double kTmaLatencyNs = 662;       // "TMA latency" (beyond the per-box time)
constexpr double kTmaSmGBs = 311;           // "TMA throughput of one SM" (bytes beyond the per-box time)
constexpr double kTmaBoxCycles = 101;       // "TMA: SM time per box"
constexpr double kL2GBs = 20400;            // "L2 bandwidth (chip)"
constexpr double kHbmGBs = 7200;            // "HBM bandwidth (chip)"
constexpr double kSectorBytes = 32;         // "global memory sector"
constexpr double kWakeCycles = 20;          // "barrier wake-up"
constexpr double kHandoffCycles = 220;      // "mbarrier hand-off": a blocked mbarrier waiter resumes this long after the phase completes

// The parameter table as the model prints it: "| name | value | unit | kind | source |" rows.
double table_value(const std::string& name) {
  std::istringstream in(tcsim::model_parameters_markdown());
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream row(line);
    while (std::getline(row, cell, '|')) {
      const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    // cells[0] is the empty text before the first '|'.
    if (cells.size() >= 3 && cells[1] == name) return std::strtod(cells[2].c_str(), nullptr);
  }
  return NAN;
}

// Fails with a message naming the parameter when the table no longer holds `assumed`.
void expect_param(const std::string& name, double assumed, const std::string& unit) {
  const double v = table_value(name);
  CHECK_MESSAGE(v == assumed, "timing-model parameter \"" << name << "\" is " << v << " " << unit
                                                          << " in common/sim/timing_params.cpp, but the hand-computed "
                                                             "expectations of tests/emulator/test_timing_model.cpp assume "
                                                          << assumed << " " << unit
                                                          << "; update those numbers together with the parameter");
}

double cycles_ns(double cycles) { return cycles / kClockGHz; }

// ============================================================================ host helpers

// Timing-model options for one scope: tcg_test::ModelScope (emulator_test_util.h).

// `bytes` of "global memory" whose first byte sits `offset` bytes past a 1024-byte boundary.
struct GlobalBuf {  // registered with the emulator, whose global-memory bounds checks it passes
  std::vector<uint8_t> raw;
  uint8_t* p = nullptr;
  tcsim::GlobalAllocation reg;
  GlobalBuf(size_t bytes, size_t offset = 0)
      : raw(bytes + 2048), p(raw.data() + ((1024 - reinterpret_cast<uintptr_t>(raw.data()) % 1024) % 1024) + offset),
        reg(p, bytes, "GlobalBuf") {}
};

// The spans of the last launch's trace with category `cat` whose name starts with `prefix`.
std::vector<tcg::trace::Span> spans(const char* cat, const std::string& prefix, int track = -1) {
  std::vector<tcg::trace::Span> out;
  for (const tcg::trace::Span& s : tcsim::last_trace().spans)
    if (s.cat == cat && s.name.compare(0, prefix.size(), prefix) == 0 && (track < 0 || s.track == track))
      out.push_back(s);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return out;
}

double end_ns(const tcg::trace::Span& s) { return s.start_ns + s.dur_ns; }

// A rows x 64 BF16 K-major tile (128 bytes a row, rows `pitch` bytes apart) as one TMA box with
// the 128-byte swizzle, the steps' A/B box.
CUtensorMap sw128_map(const void* base, uint32_t rows, uint64_t k, uint32_t box_rows) {
  tcg::TiledMap t;
  t.rank = 2;
  t.dtype = tcg::TmaDtype::kBF16;
  t.base = base;
  t.dims[0] = k;
  t.dims[1] = rows;
  t.strides[0] = k * 2;
  t.box[0] = 64;
  t.box[1] = box_rows;
  t.swizzle = tcg::TmaSwizzle::k128B;
  return tcg::make_tensor_map(t);
}

// ============================================================================ (a) one TMA load
//
// Thread 0 (lane 0 of warp 0, the traced lane) posts expect_tx, issues one 2-D TMA load of a
// 128 x 64 BF16 box (16 KiB) and waits for the mbarrier.
constexpr uint32_t kTmaTileBytes = 128 * 64 * 2;
constexpr uint32_t kTmaBar = kTmaTileBytes;

__global__ void one_tma_kernel(const __grid_constant__ CUtensorMap map) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t bar = base + kTmaBar;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tcg::mbarrier_arrive_expect_tx(bar, kTmaTileBytes);
    tcg::tma_load_2d(base, &map, 0, 0, bar);
    tcg::mbarrier_wait_parity(bar, 0);
  }
}

struct TmaTiming {
  double in_flight_ns;  // issue -> completion (the "TMA 16 KiB" span on the TMA track)
  double observed_ns;   // issue -> the waiting thread runs again (end of its "mbarrier wait")
};

TmaTiming time_one_tma(size_t base_offset, bool skip_math) {
  GlobalBuf g(size_t(128) * 128 + 64, base_offset);
  const std::vector<uint16_t> a = small_int_matrix(128, 64, 7);
  memcpy(g.p, a.data(), a.size() * 2);
  const CUtensorMap map = sw128_map(g.p, 128, 64, 128);
  ModelScope scope(skip_math, /*trace=*/true);
  tcg::launch_kernel(one_tma_kernel, tcg::LaunchDims{dim3(1), dim3(32), kTmaBar + 64 + tcg::kSmemAlignSlack}, nullptr,
                     map);
  const auto tma = spans(tcg::trace::kCatTma, "TMA");
  const auto wait = spans(tcg::trace::kCatWait, "mbarrier wait", 0);
  REQUIRE(tma.size() == 1);
  REQUIRE(wait.size() == 1);
  CHECK(wait[0].start_ns >= tma[0].start_ns);  // the thread blocked after issuing
  return TmaTiming{tma[0].dur_ns, end_ns(wait[0]) - tma[0].start_ns};
}

// ============================================================================ (b) tcgen05.mma
//
// Warp 0 allocates 256 TMEM columns; thread 32 (lane 0 of warp 1, traced) issues `count` MMAs
// M = 128, N = `n`, K = 16 (BF16, cta_group::1) on 128B-swizzled tiles, commits to an mbarrier and
// waits for it. The tiles hold whatever shared memory holds: only the timing is looked at.
constexpr uint32_t kMmaTileA = 0, kMmaTileB = 16384, kMmaBars = 16384 + 32768;

__global__ void mma_timing_kernel(uint32_t n, uint32_t count) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t done = base + kMmaBars, slot = base + kMmaBars + 8;
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) {
    tcg::tmem_alloc(slot, 256);
  } else if (threadIdx.x == 32) {
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kMmaBars + 8);
  if (threadIdx.x == 32) {
    const uint32_t idesc = tcg::make_idesc_bf16_f32(128, n);
    for (uint32_t i = 0; i < count; ++i) {
      const uint64_t ad = tcg::make_smem_desc(base + kMmaTileA + 32 * (i % 4), 16, 1024, tcg::Layout::kSwizzle128B);
      const uint64_t bd = tcg::make_smem_desc(base + kMmaTileB + 32 * (i % 4), 16, 1024, tcg::Layout::kSwizzle128B);
      tcg::mma_bf16_ss(tmem, ad, bd, idesc, /*accumulate=*/i > 0);
    }
    tcg::mma_commit(done);
    tcg::mbarrier_wait_parity(done, 0);
    tcg::tcgen05_fence_after_thread_sync();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, 256);
}

struct MmaTiming {
  std::vector<tcg::trace::Span> busy;  // the tensor core's spans, one per MMA
  double observed_ns;                  // first MMA issue -> the waiting thread runs again
};

MmaTiming time_mmas(uint32_t n, uint32_t count) {
  ModelScope scope(/*skip_math=*/true, /*trace=*/true);
  tcg::launch_kernel(mma_timing_kernel, tcg::LaunchDims{dim3(1), dim3(128), kMmaBars + 64 + tcg::kSmemAlignSlack},
                     nullptr, n, count);
  MmaTiming r;
  r.busy = spans(tcg::trace::kCatMma, "MMA 128x" + std::to_string(n));
  const auto wait = spans(tcg::trace::kCatWait, "mbarrier wait", 1);
  REQUIRE(r.busy.size() == count);
  REQUIRE(wait.size() == 1);
  r.observed_ns = end_ns(wait[0]) - r.busy[0].start_ns;
  return r;
}

// ============================================================================ (c), (d) a pipelined k-loop
//
// Step 04's pattern at BLOCK_N = 128 on one CTA of 192 threads: warp 0 (producer) fills a ring of
// 7 stages with TMA loads of A (128 x 64) and B (128 x 64), 16 KiB each; warp 1 (MMA) issues
// 4 * `repeat` MMAs 128 x 128 x 16 per k-tile (each K step `repeat` times, so repeat > 1 makes the
// tensor core the bottleneck) and commits each stage back to the producer; warps 2..5 read the
// FP32 accumulator and store it to `out` (128 x 128 floats). D = repeat * A * B^T.
constexpr uint32_t kPipeN = 128, kPipeStages = 7, kPipeTile = 128 * 64 * 2;
constexpr uint32_t kPipeA = 0, kPipeB = kPipeStages * kPipeTile, kPipeBars = 2 * kPipeStages * kPipeTile;
constexpr uint32_t kPipeSmem = kPipeBars + (2 * kPipeStages + 2) * 8;

__global__ void pipeline_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                uint32_t k_tiles, uint32_t repeat, float* out) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  auto full = [&](uint32_t s) { return base + kPipeBars + 8 * s; };
  auto empty = [&](uint32_t s) { return base + kPipeBars + 8 * (kPipeStages + s); };
  const uint32_t done = base + kPipeBars + 16 * kPipeStages, slot = done + 8;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 1) {
    tcg::tmem_alloc(slot, kPipeN);
  } else if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kPipeStages; ++s) {
      tcg::mbarrier_init(full(s), 1);
      tcg::mbarrier_init(empty(s), 1);
    }
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + (slot - base));

  if (threadIdx.x == 0) {  // producer
    for (uint32_t kt = 0; kt < k_tiles + kPipeStages; ++kt) {
      const uint32_t s = kt % kPipeStages;
      tcg::mbarrier_wait_parity(empty(s), (kt / kPipeStages + 1) % 2);  // first pass: passes at once
      if (kt >= k_tiles) continue;  // drain: every stage's last commit has arrived
      tcg::mbarrier_arrive_expect_tx(full(s), 2 * kPipeTile);
      tcg::tma_load_2d(base + kPipeA + s * kPipeTile, &map_a, int32_t(kt * 64), 0, full(s));
      tcg::tma_load_2d(base + kPipeB + s * kPipeTile, &map_b, int32_t(kt * 64), 0, full(s));
    }
  } else if (threadIdx.x == 32) {  // MMA issuer
    const uint32_t idesc = tcg::make_idesc_bf16_f32(128, kPipeN);
    for (uint32_t kt = 0; kt < k_tiles; ++kt) {
      const uint32_t s = kt % kPipeStages;
      tcg::mbarrier_wait_parity(full(s), (kt / kPipeStages) % 2);
      tcg::tcgen05_fence_after_thread_sync();
      for (uint32_t r = 0; r < repeat; ++r)
        for (uint32_t ks = 0; ks < 4; ++ks) {
          const uint64_t ad = tcg::make_smem_desc(base + kPipeA + s * kPipeTile + 32 * ks, 16, 1024, tcg::Layout::kSwizzle128B);
          const uint64_t bd = tcg::make_smem_desc(base + kPipeB + s * kPipeTile + 32 * ks, 16, 1024, tcg::Layout::kSwizzle128B);
          tcg::mma_bf16_ss(tmem, ad, bd, idesc, /*accumulate=*/kt > 0 || r > 0 || ks > 0);
        }
      tcg::mma_commit(empty(s));
    }
    tcg::mma_commit(done);
  } else if (warp >= 2) {  // epilogue: TMEM -> registers -> global
    tcg::mbarrier_wait_parity(done, 0);
    tcg::tcgen05_fence_after_thread_sync();
    const uint32_t quarter = warp % 4, row = quarter * 32 + lane;
    for (uint32_t col = 0; col < kPipeN; col += 16) {
      uint32_t r[16];
      tcg::tmem_ld_32x32b_x16(tcg::tmem_offset(tmem, quarter * 32, col), r);
      tcg::tmem_wait_ld(r);
      for (uint32_t q = 0; q < 4; ++q)
        tcg::store_16B(out + row * kPipeN + col + 4 * q, make_uint4(r[4 * q], r[4 * q + 1], r[4 * q + 2], r[4 * q + 3]));
    }
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 1) tcg::tmem_dealloc(tmem, kPipeN);
}

struct PipelineRun {
  double model_ns;
  std::vector<float> out;   // 128 x 128
  std::vector<float> want;  // repeat * A * B^T, exact (small integers)
  tcsim::Stats stats;
  std::vector<tcg::trace::Span> trace;
};

PipelineRun run_pipeline(uint32_t k_tiles, uint32_t repeat, bool skip_math) {
  const uint32_t k = 64 * k_tiles;
  GlobalBuf ga(size_t(128) * k * 2), gb(size_t(kPipeN) * k * 2), gout(size_t(128) * kPipeN * 4);
  const std::vector<uint16_t> a = small_int_matrix(128, k, 1), b = small_int_matrix(kPipeN, k, 2);
  memcpy(ga.p, a.data(), a.size() * 2);
  memcpy(gb.p, b.data(), b.size() * 2);
  float* out = reinterpret_cast<float*>(gout.p);
  std::fill(out, out + 128 * kPipeN, NAN);
  const CUtensorMap ma = sw128_map(ga.p, 128, k, 128), mb = sw128_map(gb.p, kPipeN, k, kPipeN);
  PipelineRun r;
  {
    ModelScope scope(skip_math, /*trace=*/true);
    tcg::launch_kernel(pipeline_kernel, tcg::LaunchDims{dim3(1), dim3(192), kPipeSmem + tcg::kSmemAlignSlack}, nullptr,
                       ma, mb, k_tiles, repeat, out);
    r.model_ns = tcsim::last_stats().model_ns;
    r.stats = tcsim::last_stats();
    r.trace = tcsim::last_trace().spans;
  }
  r.out.assign(out, out + 128 * kPipeN);
  r.want.resize(size_t(128) * kPipeN);
  for (uint32_t m = 0; m < 128; ++m)
    for (uint32_t n = 0; n < kPipeN; ++n) {
      double s = 0;
      for (uint32_t kk = 0; kk < k; ++kk) s += double(from_bf16(a[m * k + kk])) * from_bf16(b[n * k + kk]);
      r.want[m * kPipeN + n] = float(repeat * s);
    }
  return r;
}

}  // namespace

// ============================================================================ the cases

TEST_CASE("timing model: the parameter table holds the values these tests were computed from") {
  expect_param("SM clock", kClockGHz, "GHz");
  expect_param("tcgen05.mma issue interval", kMmaIICyclesPerN, "cycles per unit of N");
  expect_param("tcgen05.mma latency beyond II, M=128", kMmaLatency128, "cycles");
  expect_param("MMA shared-memory operand read", kSmemOperandBpc, "B/cycle/SM");
  expect_param("TMA latency", kTmaLatencyNs, "ns");
  expect_param("TMA throughput of one SM", kTmaSmGBs, "GB/s");
  expect_param("L2 bandwidth (chip)", kL2GBs, "GB/s");
  expect_param("HBM bandwidth (chip)", kHbmGBs, "GB/s");
  expect_param("global memory sector", kSectorBytes, "B");
  expect_param("barrier wake-up", kWakeCycles, "cycles");
  expect_param("TMA: SM time per box", kTmaBoxCycles, "cycles");
  expect_param("mbarrier hand-off", kHandoffCycles, "cycles");
}

// (a) One TMA load of a 128 x 64 BF16 tile (16 KiB, 128 rows of 128 bytes = 4 whole sectors each).
// All 16384 bytes are read for the first time, so HBM streams them too, but the servers run
// concurrently and the slowest sets the end:
//   TMA unit 101 cycles per box (54.301 ns) + 16384 B / 311 GB/s (52.682 ns) = 106.983 ns;
//   L2 16384 / 20400 = 0.803 ns, 128 requests / 218 per ns = 0.587 ns; HBM 16384 / 7200 = 2.276 ns
//   in flight = 662 ns latency + 106.983 ns = 768.983 ns
//   seen by the waiting thread = 768.983 + 220 cycles / 1.86 GHz (118.280 ns hand-off) = 887.262 ns
TEST_CASE("timing model: one TMA load of a 16 KiB tile, issue to mbarrier completion") {
  const double stream = std::max({cycles_ns(kTmaBoxCycles) + 16384.0 / kTmaSmGBs, 16384.0 / kL2GBs, 16384.0 / kHbmGBs});
  CHECK(stream == doctest::Approx(106.983).epsilon(1e-5));
  const double in_flight = kTmaLatencyNs + stream;                // 768.983 ns
  const double observed = in_flight + cycles_ns(kHandoffCycles);  // 887.262 ns
  CHECK(in_flight == doctest::Approx(768.983).epsilon(1e-5));
  CHECK(observed == doctest::Approx(887.262).epsilon(1e-5));
  for (bool skip_math : {true, false}) {
    CAPTURE(skip_math);
    const TmaTiming t = time_one_tma(0, skip_math);
    CHECK(t.in_flight_ns == doctest::Approx(in_flight).epsilon(1e-9));
    CHECK(t.observed_ns == doctest::Approx(observed).epsilon(1e-9));
  }
}

// (a') The same box from a base 16 bytes past a sector boundary: every 128-byte row now straddles
// 5 sectors, so the L2 reads 128 x 5 x 32 = 20480 B (1.004 ns at 20400 GB/s), but the SM's TMA
// unit pays for the 16384 bytes it writes to shared memory, as on the H100, where 16-byte-wide
// rows ran at the box-bytes rate of the per-box fit (results/micro_h100.csv): the same 768.983 ns.
TEST_CASE("timing model: a TMA box whose rows straddle sectors costs the TMA unit its bytes, the L2 its sectors") {
  const double in_flight = kTmaLatencyNs + cycles_ns(kTmaBoxCycles) + 16384.0 / kTmaSmGBs;
  CHECK(in_flight == doctest::Approx(768.983).epsilon(1e-5));
  const TmaTiming t = time_one_tma(16, /*skip_math=*/true);
  CHECK(t.in_flight_ns == doctest::Approx(in_flight).epsilon(1e-9));
  CHECK(t.observed_ns == doctest::Approx(in_flight + cycles_ns(kHandoffCycles)).epsilon(1e-9));
}

// (b) One tcgen05.mma.cta_group::1 M = 128, N = 256, K = 16 BF16:
//   II = max(N/2 = 128 cycles, operands (128 + 256) rows x 32 B / 128 B/cycle = 96 cycles) = 128 cycles
//   issue -> complete (= tcgen05.commit arrival, same CTA) = (128 + 136) cycles / 1.86 GHz = 141.935 ns
//   seen by the thread waiting on the commit's mbarrier = (128 + 136 + 220) / 1.86 = 260.215 ns
TEST_CASE("timing model: one tcgen05.mma 128x256x16, issue to commit completion") {
  const double ii = std::max(kMmaIICyclesPerN * 256, (128 + 256) * 32 / kSmemOperandBpc);  // 128 cycles
  CHECK(ii == 128);
  const double complete = cycles_ns(ii + kMmaLatency128);  // 141.935 ns
  CHECK(complete == doctest::Approx(141.935).epsilon(1e-5));
  const MmaTiming t = time_mmas(256, 1);
  CHECK(t.busy[0].dur_ns == doctest::Approx(cycles_ns(128)).epsilon(1e-9));  // 68.817 ns
  CHECK(t.observed_ns == doctest::Approx(complete + cycles_ns(kHandoffCycles)).epsilon(1e-9));
  CHECK(t.observed_ns == doctest::Approx(260.215).epsilon(1e-5));
}

// (b') The four MMAs of one 64-wide k-tile, issued back to back: the tensor core runs them one
// II after another, and the commit arrives one latency after the last:
//   (4 x 128 + 136) cycles / 1.86 = 348.387 ns; + hand-off (220 cycles) = 466.667 ns
TEST_CASE("timing model: four MMAs back to back occupy the tensor core one issue interval each") {
  const MmaTiming t = time_mmas(256, 4);
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(t.busy[i].start_ns - t.busy[0].start_ns == doctest::Approx(i * cycles_ns(128)).epsilon(1e-9));
    CHECK(t.busy[i].dur_ns == doctest::Approx(cycles_ns(128)).epsilon(1e-9));
  }
  CHECK(t.observed_ns == doctest::Approx(cycles_ns(4 * 128 + kMmaLatency128 + kHandoffCycles)).epsilon(1e-9));
  CHECK(t.observed_ns == doctest::Approx(466.667).epsilon(1e-5));
}

// (b'') N = 64: N/2 = 32 cycles, but reading the operands takes (128 + 64) x 32 B / 128 B/cycle =
// 48 cycles, and that sets the interval: (48 + 136) / 1.86 = 98.925 ns; + hand-off = 217.204 ns.
TEST_CASE("timing model: a narrow MMA is limited by its shared-memory operand reads") {
  const double ii = std::max(kMmaIICyclesPerN * 64, (128 + 64) * 32 / kSmemOperandBpc);
  CHECK(ii == 48);
  const MmaTiming t = time_mmas(64, 1);
  CHECK(t.busy[0].dur_ns == doctest::Approx(cycles_ns(48)).epsilon(1e-9));
  CHECK(t.observed_ns == doctest::Approx(cycles_ns(48 + kMmaLatency128 + kHandoffCycles)).epsilon(1e-9));
  CHECK(t.observed_ns == doctest::Approx(217.204).epsilon(1e-5));
}

// (c) Steady state of a pipelined k-loop: with enough stages in flight, each further k-tile adds
// max(TMA time, MMA time) to the kernel, so (time(16 k-tiles) - time(8 k-tiles)) / 8 is that.
// One k-tile = A 128 x 64 + B 128 x 64 BF16 = 32768 B; its MMAs are 4 x 128x128x16 per repeat,
// II = max(128/2 = 64, (128 + 128) x 32 / 128 = 64) = 64 cycles each.
//   repeat 1: TMA 2 boxes x (101 cycles + 16384 B / 311 GB/s) = 213.965 ns  vs  MMA 4 x 64 / 1.86 = 137.634 ns -> 213.965 ns
//   repeat 3: TMA 213.965 ns  vs  MMA 12 x 64 / 1.86 = 412.903 ns                                           -> 412.903 ns
// (L2 32768 / 20400 = 1.6 ns and HBM 32768 / 7200 = 4.55 ns per k-tile stay hidden.) Seven stages
// keep the TMA unit busy: a stage's refill is issued about 214.0 (its stream) + 662 + 118.3 (MMA
// warp hand-off) + 137.6 + 73.1 (its MMAs) + 118.3 (producer hand-off) = 1323 ns after its load
// began streaming, before the queued loads of the other stages run out at 7 x 214.0 = 1498 ns
// (six would run out at 1284 ns). With
// repeat 3 the tensor core is the busy engine and the loads stay ahead of it. The global operands
// are 1024-byte aligned, so every 128-byte box row is exactly 4 sectors.
TEST_CASE("timing model: one k-tile at steady state costs max(TMA bytes / bandwidth, MMA time)") {
  struct Case {
    uint32_t repeat;
    double expected;
  };
  const double tma = 2.0 * (cycles_ns(kTmaBoxCycles) + kPipeTile / kTmaSmGBs);  // 213.965 ns
  const double mma1 = cycles_ns(4 * 64);            // 137.634 ns
  CHECK(tma == doctest::Approx(213.965).epsilon(1e-5));
  for (const Case c : {Case{1, std::max(tma, mma1)}, Case{3, std::max(tma, 3 * mma1)}}) {
    CAPTURE(c.repeat);
    const PipelineRun r8 = run_pipeline(8, c.repeat, /*skip_math=*/true);
    const PipelineRun r16 = run_pipeline(16, c.repeat, /*skip_math=*/true);
    const double per_tile = (r16.model_ns - r8.model_ns) / 8;
    INFO("repeat " << c.repeat << ": 8 k-tiles " << r8.model_ns << " ns, 16 k-tiles " << r16.model_ns
                   << " ns, per k-tile " << per_tile << " ns (expected " << c.expected << ")");
    CHECK(per_tile == doctest::Approx(c.expected).epsilon(1e-6));
  }
  CHECK(std::max(tma, mma1) == doctest::Approx(213.965).epsilon(1e-5));
  CHECK(std::max(tma, 3 * mma1) == doctest::Approx(412.903).epsilon(1e-5));
}

// (d) The arithmetic does not move the clock: the same kernel with and without skip_math gives
// the same model time and the same trace, and the full run computes the right product.
TEST_CASE("timing model: timing-only and full-arithmetic runs give the same model time") {
  for (uint32_t repeat : {1u, 3u}) {
    CAPTURE(repeat);
    const PipelineRun fast = run_pipeline(8, repeat, /*skip_math=*/true);
    const PipelineRun full = run_pipeline(8, repeat, /*skip_math=*/false);
    CHECK(fast.model_ns > 0);
    CHECK(fast.model_ns == full.model_ns);
    CHECK(fast.stats.mmas == full.stats.mmas);
    CHECK(fast.stats.mma_flops == full.stats.mma_flops);
    CHECK(fast.stats.tma_bytes == full.stats.tma_bytes);
    REQUIRE(fast.trace.size() == full.trace.size());
    for (size_t i = 0; i < fast.trace.size(); ++i) {
      CAPTURE(i);
      CHECK(fast.trace[i].name == full.trace[i].name);
      CHECK(fast.trace[i].track == full.trace[i].track);
      CHECK(fast.trace[i].start_ns == full.trace[i].start_ns);
      CHECK(fast.trace[i].dur_ns == full.trace[i].dur_ns);
    }
    CHECK(full.out == full.want);  // small integers: exact in FP32
    CHECK(fast.out != fast.want);  // timing only: C was never computed (still NaN)
  }
}

// ============================================================================ trace annotations
//
// The kernels' phase annotations (common/ptx/trace.cuh) must pair up and nest, or the GPU trace
// reports them unpaired; only a B200 could show that for steps 01-10. In a traced emulator run the
// emulator checks every annotation, the fine ones (drawn only on the GPU) included.
namespace {
__global__ void annotated_kernel(int mode) {
  const tcg::TraceBuf off;  // tracing off on the GPU; the emulator build reports to tcsim anyway
  tcg::PhaseTrace<false> trace(off);
  if (mode == 3) trace.end(tcg::Phase::kMainloop);  // an end without a begin
  trace.begin(tcg::Phase::kSetup);
  __syncthreads();                                    // something to time: spans of 0 ns are not drawn
  trace.begin(tcg::Phase::kWaitTmaFull, 2);           // a fine span inside a coarse one
  __syncthreads();
  if (mode == 1) trace.end(tcg::Phase::kSetup);       // ends the outer phase first
  trace.end(tcg::Phase::kWaitTmaFull, 2);
  if (mode == 2) return;                              // exits with "setup" still open
  trace.end(tcg::Phase::kSetup);
}

std::string run_annotated(int mode) {
  ModelScope scope(/*skip_math=*/true, /*trace=*/true);
  return sim_error([&] { tcg::launch_kernel(annotated_kernel, tcg::LaunchDims{dim3(1), dim3(32), 64}, nullptr, mode); });
}
}  // namespace

TEST_CASE("trace annotations: pairs that nest are drawn (coarse) or only checked (fine)") {
  CHECK(run_annotated(0) == "");
  const auto setup = spans(tcg::trace::kCatPhase, "setup", 0);
  CHECK(setup.size() == 1);
  CHECK(spans(tcg::trace::kCatPhase, "wait tma_full_bar", 0).empty());  // fine: GPU only
}

TEST_CASE("trace annotations: an end that is not the innermost open phase is reported") {
  const std::string err = run_annotated(1);
  CHECK(contains(err, "trace annotation ends a phase that is not the innermost open one"));
  CHECK(contains(err, "end of \"setup\""));
  CHECK(contains(err, "\"wait tma_full_bar\""));
  CHECK(contains(run_annotated(3), "no phase is open"));
}

TEST_CASE("trace annotations: a phase still open when the thread exits is reported") {
  const std::string err = run_annotated(2);
  CHECK(contains(err, "trace annotation never ended"));
  CHECK(contains(err, "inside phase \"setup\""));
}
