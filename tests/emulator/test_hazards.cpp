// tests/emulator/test_hazards.cpp — the ordering of asynchronous tcgen05 operations (PTX ISA §9.7.16.6)
// and the bounds of raw global accesses, each against a small hand-made kernel.
//
// Ordering: every pipelined pair the emulator can issue (§9.7.16.6.2: mma -> mma with the same
// accumulator, shape and kind; cp -> mma, also across threads with fence + sync + fence,
// §9.7.16.6.4.3) passes; every non-pipelined pair on overlapping TMEM cells (mma -> mma with a
// different accumulator, shape or kind, mma -> cp, cp -> cp, mma -> ld, ld -> mma, in one thread
// and across threads) is reported as a TMEM hazard naming both instructions, their lines, the
// cells and the rule, under every seed, and passes once the completion that makes it legal
// (tcgen05.commit + mbarrier wait, tcgen05.wait::ld, §9.7.16.6.4.2 / §9.7.16.6.4.4) lies between.
// Bounds: cp.async.bulk sources, TMA box rows read through a tensor map, 16-byte stores to global
// memory, each inside, straddling the end of and outside a registered allocation, and with
// nothing registered; a box past the tensor's edge keeps its zero fill.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;  // SimOptions, sim_error, contains, registered

namespace {

// ============================================================================ ordering kernels
//
// One CTA of 128 threads. Warp 0 allocates 512 TMEM columns; shared memory holds A and B tiles
// (their values do not matter: the MMAs' results are never checked here) and valid UE4M3 scale
// atoms (1.0). D lives at column 0, scale factors at 256 and up. Each scenario ends with the
// issuing threads waiting for their operations, so the teardown is legal whatever the scenario.
constexpr uint32_t kA = 0, kB = 4096, kSf = 8192, kBars = 12288;
constexpr uint32_t kHazSmem = kBars + 64 + tcg::kSmemAlignSlack;

enum class Scn : int {
  kMmaMmaSameAcc,    // f16 -> f16, same D, shape, kind: pipelined
  kMmaMmaOtherAcc,   // f16 at column 0 -> f16 at column 32 (overlapping D)
  kMmaMmaOtherShape, // N = 64 -> N = 128 at the same address
  kMmaMmaOtherKind,  // kind::f16 -> kind::mxf4nvf4 into the same D
  kCpMma,            // cp -> mma (the scales it reads): pipelined
  kMmaCp,            // mma reads scales -> cp overwrites them
  kCpCp,             // cp -> cp into the same columns
  kMmaLd,            // lane 0's mma -> its warp's tcgen05.ld of D
  kLdMma,            // a warp's tcgen05.ld of D -> lane 0's mma into D
  kCpMmaThreads,     // warp 1's cp -> thread 0's mma: fence + mbarrier + fence (pipelined across threads)
  kMmaLdThreads,     // thread 0's mma -> warp 1's ld: commit + wait (fixed) or fence + arrive only
  kLdMmaThreads,     // warp 1's ld -> thread 0's mma: wait::ld before the arrive (fixed) or after it
};

__device__ inline uint64_t operand_desc(uint32_t addr, uint32_t rows) {  // core matrices, 32 bytes a row
  return tcg::make_smem_desc(addr, rows * 16, 128, tcg::Layout::kNone);
}

__global__ void hazard_kernel(int scenario, int fixed) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t bar0 = base + kBars, bar1 = bar0 + 8, slot = bar0 + 16;
  const uint32_t warp = threadIdx.x / 32;
  const Scn s = Scn(scenario);
  if (warp == 0) {
    tcg::tmem_alloc(slot, 512);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(bar0, 1);
    tcg::mbarrier_init(bar1, 1);
    tcg::fence_mbarrier_init();
  }
  for (uint32_t i = threadIdx.x; i < 2048; i += blockDim.x) smem[kSf + i] = 0x38;  // UE4M3 1.0
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 16);

  auto f16 = [&](uint32_t col, uint32_t n) {
    tcg::mma_bf16_ss(tcg::tmem_offset(tmem, 0, col), operand_desc(base + kA, 128), operand_desc(base + kB, n),
                     tcg::make_idesc_bf16_f32(128, n), false);
  };
  auto mxf4 = [&](uint32_t col, uint32_t sfa, uint32_t sfb, uint32_t n) {
    tcg::mma_mxf4nvf4_block16_ss(tcg::tmem_offset(tmem, 0, col), operand_desc(base + kA, 128),
                                 operand_desc(base + kB, n), tcg::make_idesc_mxf4nvf4(128, n),
                                 tcg::tmem_offset(tmem, 0, sfa), tcg::tmem_offset(tmem, 0, sfb), false);
  };
  auto cp = [&](uint32_t col, uint32_t atom) {
    tcg::tcgen05_cp_32x128b_warpx4(tcg::tmem_offset(tmem, 0, col),
                                   tcg::make_smem_desc(base + kSf + 512 * atom, 0, 128, tcg::Layout::kNone));
  };
  uint32_t phase1 = 0;
  auto complete = [&] {  // the issuing thread waits for its operations (legalises the next one)
    tcg::mma_commit(bar1);
    tcg::mbarrier_wait_parity(bar1, phase1);
    phase1 ^= 1;
    tcg::tcgen05_fence_after_thread_sync();
  };
  uint32_t r[8];
  auto ld_d = [&] {  // the warp's lane quarter of D, columns 0-7
    tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, 32 * (warp % 4), 0), r);
  };

  switch (s) {
    case Scn::kMmaMmaSameAcc:
    case Scn::kMmaMmaOtherAcc:
    case Scn::kMmaMmaOtherShape:
    case Scn::kMmaMmaOtherKind:
    case Scn::kCpMma:
    case Scn::kMmaCp:
    case Scn::kCpCp:
      if (warp == 0 && tcg::elect_one_sync()) {
        if (s == Scn::kMmaMmaOtherKind || s == Scn::kCpMma || s == Scn::kMmaCp) {
          cp(256, 0);
          cp(260, 1);
        }
        if (s == Scn::kCpCp) cp(256, 0);
        if (s == Scn::kCpMma || s == Scn::kMmaCp) mxf4(0, 256, 260, 64);
        if (s <= Scn::kMmaMmaOtherKind) f16(0, 64);
        if (fixed) complete();
        if (s == Scn::kMmaMmaSameAcc) f16(0, 64);
        if (s == Scn::kMmaMmaOtherAcc) f16(32, 64);
        if (s == Scn::kMmaMmaOtherShape) f16(0, 128);
        if (s == Scn::kMmaMmaOtherKind) mxf4(0, 256, 260, 64);
        if (s == Scn::kMmaCp || s == Scn::kCpCp) cp(256, 2);
        complete();
      }
      break;
    case Scn::kMmaLd:
      if (warp == 0) {
        if (tcg::elect_one_sync()) {
          f16(0, 64);
          if (fixed) tcg::mma_commit(bar1);
        }
        if (fixed) {
          tcg::mbarrier_wait_parity(bar1, 0);
          tcg::tcgen05_fence_after_thread_sync();
        }
        ld_d();
        tcg::tmem_wait_ld(r);
        if (!fixed && tcg::elect_one_sync()) complete();
      }
      break;
    case Scn::kLdMma:
      if (warp == 0) {
        ld_d();
        if (fixed) tcg::tmem_wait_ld(r);
        if (tcg::elect_one_sync()) {
          f16(0, 64);
          complete();
        }
        if (!fixed) tcg::tmem_wait_ld(r);
      }
      break;
    case Scn::kCpMmaThreads:  // fixed: the §9.7.16.6.4.3 pattern; not fixed: no synchronisation at all
      if (warp == 1 && tcg::elect_one_sync()) {
        cp(256, 0);
        cp(260, 1);
        if (fixed) {
          tcg::tcgen05_fence_before_thread_sync();
          tcg::mbarrier_arrive(bar0);
        }
        tcg::mma_commit(bar1);
        tcg::mbarrier_wait_parity(bar1, 0);
      }
      if (warp == 0 && tcg::elect_one_sync()) {
        if (fixed) {
          tcg::mbarrier_wait_parity(bar0, 0);
          tcg::tcgen05_fence_after_thread_sync();
        }
        mxf4(0, 256, 260, 64);
        tcg::mma_commit(bar0);  // bar0 is unused without the fix; with it, its next phase
        tcg::mbarrier_wait_parity(bar0, fixed ? 1 : 0);
      }
      break;
    case Scn::kMmaLdThreads:
      if (warp == 0 && tcg::elect_one_sync()) {
        f16(0, 64);
        if (fixed) {
          tcg::mma_commit(bar0);  // completion, then the signal (§9.7.16.6.4.4)
        } else {
          tcg::tcgen05_fence_before_thread_sync();  // orders the issue only: not enough for mma -> ld
          tcg::mbarrier_arrive(bar0);
        }
      }
      if (warp == 1) {
        tcg::mbarrier_wait_parity(bar0, 0);
        tcg::tcgen05_fence_after_thread_sync();
        ld_d();
        tcg::tmem_wait_ld(r);
      }
      if (!fixed && warp == 0 && tcg::elect_one_sync()) complete();
      break;
    case Scn::kLdMmaThreads:
      if (warp == 1) {
        ld_d();
        if (fixed) tcg::tmem_wait_ld(r);
        tcg::tcgen05_fence_before_thread_sync();
        if (tcg::elect_one_sync()) tcg::mbarrier_arrive(bar0);
        if (!fixed) tcg::tmem_wait_ld(r);  // BUG: the load may still read after the MMA wrote
      }
      if (warp == 0 && tcg::elect_one_sync()) {
        tcg::mbarrier_wait_parity(bar0, 0);
        tcg::tcgen05_fence_after_thread_sync();
        f16(0, 64);
        complete();
      }
      break;
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, 512);
}

std::string run_hazard(Scn s, bool fixed) {
  return sim_error([&] {
    tcg::launch_kernel(hazard_kernel, tcg::LaunchDims{dim3(1), dim3(128), kHazSmem}, nullptr, int(s), int(fixed));
  });
}

const uint64_t kSeeds[] = {1, 2, 3, 4, 5, 6};

// Checks the report of an unordered pair: the category, the pair, the cells and both lines.
void check_report(const std::string& err, const char* pair, const char* cells) {
  CHECK(contains(err, "tcsim: TMEM hazard between asynchronous tcgen05 operations"));
  CHECK(contains(err, pair));
  CHECK(contains(err, cells));
  const size_t first = err.find("test_hazards.cpp:");
  CHECK(first != std::string::npos);
  CHECK(err.find("test_hazards.cpp:", first + 1) != std::string::npos);  // the other instruction's line
  CHECK(contains(err, "§9.7.16.6"));
}

}  // namespace

TEST_CASE("hazards: pipelined pairs in one thread pass under every seed (mma -> mma same accumulator, cp -> mma)") {
  for (uint64_t seed : kSeeds)
    for (Scn s : {Scn::kMmaMmaSameAcc, Scn::kCpMma}) {
      CAPTURE(seed);
      CAPTURE(int(s));
      SimOptions opt(seed);
      const std::string err = run_hazard(s, /*fixed=*/false);
      INFO(err);
      CHECK(err == "");
    }
}

TEST_CASE("hazards: non-pipelined pairs in one thread are reported, and pass after commit + wait / wait::ld") {
  struct Case {
    Scn s;
    const char* pair;
    const char* cells;
  } cases[] = {
      {Scn::kMmaMmaOtherAcc, "the same .cta_group, accumulator address, shape and kind", "columns [32, 64)"},
      {Scn::kMmaMmaOtherShape, "the same .cta_group, accumulator address, shape and kind", "columns [0, 64)"},
      {Scn::kMmaMmaOtherKind, "the same .cta_group, accumulator address, shape and kind", "columns [0, 64)"},
      {Scn::kMmaCp, "mma -> cp is not one of the pipelined pairs", "lanes 0-127 x columns [256, 260)"},
      {Scn::kCpCp, "cp -> cp is not one of the pipelined pairs", "lanes 0-127 x columns [256, 260)"},
      {Scn::kMmaLd, "mma -> ld is not one of the pipelined pairs", "lanes 0-31 x columns [0, 8)"},
      {Scn::kLdMma, "ld -> mma is not one of the pipelined pairs", "lanes 0-31 x columns [0, 8)"},
  };
  for (const Case& c : cases)
    for (uint64_t seed : kSeeds) {
      CAPTURE(int(c.s));
      CAPTURE(seed);
      SimOptions opt(seed);
      const std::string err = run_hazard(c.s, /*fixed=*/false);
      INFO(err);
      check_report(err, c.pair, c.cells);
      const std::string ok = run_hazard(c.s, /*fixed=*/true);
      INFO(ok);
      CHECK(ok == "");
    }
}

TEST_CASE("hazards: across threads, cp -> mma needs fence + sync + fence; mma -> ld and ld -> mma need the completion") {
  for (uint64_t seed : kSeeds) {
    CAPTURE(seed);
    SimOptions opt(seed);
    for (Scn s : {Scn::kCpMmaThreads, Scn::kMmaLdThreads, Scn::kLdMmaThreads}) {
      CAPTURE(int(s));
      const std::string ok = run_hazard(s, /*fixed=*/true);
      INFO(ok);
      CHECK(ok == "");
    }
    // Synchronised after the issue, but the pair is not pipelined: the completion must come first.
    std::string err = run_hazard(Scn::kMmaLdThreads, false);
    INFO(err);
    check_report(err, "its thread synchronised with this one after issuing it, but mma -> ld", "lanes 32-63 x columns [0, 8)");
    err = run_hazard(Scn::kLdMmaThreads, false);
    INFO(err);
    check_report(err, "its thread synchronised with this one after issuing it, but ld -> mma", "lanes 32-63 x columns [0, 8)");
    // No synchronisation at all: whichever of the two is issued second is reported (or, if the
    // MMA was already performed before the copy was issued, it read the allocator's poison).
    err = run_hazard(Scn::kCpMmaThreads, false);
    INFO(err);
    CHECK((contains(err, "tcsim: TMEM hazard between asynchronous tcgen05 operations") ||
           contains(err, "tcsim: scale factors read before any tcgen05.cp wrote them")));
  }
}

// ============================================================================ global bounds
namespace {

// Thread 0 copies `bytes` from `src` with cp.async.bulk; thread 1 stores 16 bytes at `store_to`
// (when not null); one TMA box of `map` (rows x 64 BF16 at c1) when `use_map`.
__global__ void bounds_kernel(const uint8_t* src, uint32_t bytes, uint8_t* store_to, const __grid_constant__ CUtensorMap map,
                              int use_map, int c1) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + 16384;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
    if (use_map) {
      tcg::mbarrier_arrive_expect_tx(bar, 16 * 128);
      tcg::tma_load_2d(base, &map, 0, c1, bar);
    } else {
      tcg::mbarrier_arrive_expect_tx(bar, bytes);
      tcg::bulk_load(base, src, bytes, bar);
    }
    tcg::mbarrier_wait_parity(bar, 0);
  }
  if (threadIdx.x == 1 && store_to) tcg::store_16B(store_to, make_uint4(1, 2, 3, 4));
  __syncthreads();
}

std::string run_bounds(const uint8_t* src, uint32_t bytes, uint8_t* store_to, const CUtensorMap* map = nullptr,
                       int c1 = 0) {
  static const std::vector<uint16_t> dummy(64 * 16, 0);
  const CUtensorMap m = map ? *map : map2d(dummy.data(), 16, 64, 16, false);
  return sim_error([&] {
    tcg::launch_kernel(bounds_kernel, tcg::LaunchDims{dim3(1), dim3(32), 16384 + 64 + tcg::kSmemAlignSlack}, nullptr,
                       src, bytes, store_to, m, map ? 1 : 0, c1);
  });
}

}  // namespace

TEST_CASE("bounds: cp.async.bulk sources inside, straddling the end of, and outside an allocation") {
  SimOptions opt(1);
  alignas(256) static uint8_t mem[4096];
  const tcsim::GlobalAllocation reg(mem, 1024, "scales");  // the first KiB is the allocation
  CHECK(run_bounds(mem, 1024, nullptr) == "");
  CHECK(run_bounds(mem + 512, 512, nullptr) == "");
  std::string err = run_bounds(mem + 512, 1024, nullptr);  // the over-reading scale copy
  INFO(err);
  CHECK(contains(err, "tcsim: global memory access out of bounds"));
  CHECK(contains(err, "cp.async.bulk source"));
  CHECK(contains(err, "\"scales\""));
  CHECK(contains(err, "its last 512 bytes lie past that allocation's end"));
  CHECK(contains(err, "test_hazards.cpp:"));
  err = run_bounds(mem + 2048, 64, nullptr);
  INFO(err);
  CHECK(contains(err, "outside every allocation: it starts 1024 bytes past the end of the nearest, \"scales\""));
}

TEST_CASE("bounds: an access with nothing registered is reported, with how to register") {
  SimOptions opt(1);
  alignas(256) static uint8_t mem[256];
  const std::string err = run_bounds(mem, 64, nullptr);
  INFO(err);
  CHECK(contains(err, "no global allocation is registered"));
  CHECK(contains(err, "tcsim::GlobalAllocation"));
}

TEST_CASE("bounds: 16-byte stores to global memory") {
  SimOptions opt(1);
  alignas(256) static uint8_t mem[4096], dst[512];
  const tcsim::GlobalAllocation r1(mem, 64, "src"), r2(dst, 256, "C");
  CHECK(run_bounds(mem, 64, dst + 240) == "");
  const std::string err = run_bounds(mem, 64, dst + 256);
  INFO(err);
  CHECK(contains(err, "16-byte store"));
  CHECK(contains(err, "starts 0 bytes past the end of the nearest, \"C\""));
}

TEST_CASE("bounds: TMA boxes keep their zero fill past the tensor's edge, but a map larger than its buffer is reported") {
  SimOptions opt(1);
  std::vector<uint16_t> m(64 * 40, 0x3F80);  // 40 rows of 64 BF16
  const auto reg = registered(m, "A");
  const CUtensorMap ok = map2d(m.data(), 40, 64, 16, false);
  for (int c1 : {0, 24, 32, 40, -8}) {  // rows 32-47 and -8..7 partly out of the tensor: zero fill
    CAPTURE(c1);
    CHECK(run_bounds(nullptr, 0, nullptr, &ok, c1) == "");
  }
  const CUtensorMap too_big = map2d(m.data(), 48, 64, 16, false);  // dims say 48 rows, the buffer has 40
  CHECK(run_bounds(nullptr, 0, nullptr, &too_big, 16) == "");
  const std::string err = run_bounds(nullptr, 0, nullptr, &too_big, 32);
  INFO(err);
  CHECK(contains(err, "tcsim: global memory access out of bounds"));
  CHECK(contains(err, "cp.async.bulk.tensor"));
  CHECK(contains(err, "\"A\""));
}

TEST_CASE("bounds: registering overlapping allocations is refused") {
  alignas(256) static uint8_t mem[1024];
  const tcsim::GlobalAllocation r(mem, 512, "first");
  std::string what;
  try {
    tcsim::register_global(mem + 256, 512, "second");
  } catch (const std::invalid_argument& e) {
    what = e.what();
  }
  CHECK(contains(what, "\"second\" overlaps \"first\""));
}
