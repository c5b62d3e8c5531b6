// test_emulator.cpp — the tcgen05 emulator (common/sim/) tested through small kernels.
//
// Every test below is a real kernel, written like the steps (kernel_common.cuh wrappers only),
// launched on one CTA in the emulator. The expected side of each check is computed here on the
// CPU from the PTX ISA as summarised in the project's reference fact sheet, shared/reference/tcgen05-facts.md ("facts §n"):
// products of small integers (exact in FP32, so results are compared bit for bit), the ISA's
// swizzle tables, the tcgen05.ld per-thread maps and the mma.sync fragment layouts.
//
// Several tests were first written to expose a check the emulator lacked (an overwritten
// mbarrier, leftover tx bytes, same-opcode divergence, a dealloc under a running MMA, ...); the
// emulator now makes each of them, and the comment above each test says what it guards.
//
// Tests that could hang a broken emulator (deadlock, livelock, spin loops) run their launch in a
// forked child with a time limit, so the suite always terminates.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;  // SimOptions, sim_error, run_isolated, operands, tile placements

namespace {

// A tensor map that loads a whole rows x k tile in one box, in the given layout (step 01's 3-D
// core-matrix view for span 0, a 2-D box otherwise).
CUtensorMap tile_map(const uint16_t* base, uint32_t rows, uint32_t k, uint32_t span) {
  tcg::TiledMap t;
  t.dtype = tcg::TmaDtype::kBF16;
  t.base = base;
  if (span == kCoreMatrices) {
    t.rank = 3;
    t.dims[0] = 8;
    t.dims[1] = rows;
    t.dims[2] = k / 8;
    t.strides[0] = uint64_t(k) * 2;
    t.strides[1] = 16;
    t.box[0] = 8;
    t.box[1] = rows;
    t.box[2] = k / 8;
  } else {
    t.rank = 2;
    t.dims[0] = k;
    t.dims[1] = rows;
    t.strides[0] = uint64_t(k) * 2;
    t.box[0] = k;
    t.box[1] = rows;
    t.swizzle = span == 128  ? tcg::TmaSwizzle::k128B
                : span == 64 ? tcg::TmaSwizzle::k64B
                : span == 32 ? tcg::TmaSwizzle::k32B
                             : tcg::TmaSwizzle::kNone;
  }
  return tcg::make_tensor_map(t);
}

// ============================================================================ the MMA test kernel
//
// One CTA of 128 threads: A (128 x k) and B (n x k) are placed in shared memory (by TMA or by
// ordinary stores), thread 0 of warp 0 issues `num_mma` tcgen05.mma (M = 128) with descriptors
// built from the case's LBO/SBO/layout and a start address advanced by `kstep` bytes per MMA,
// commits, and all 4 warps read the accumulator back.
struct MmaCase {
  const uint16_t* a = nullptr;  // 128 x k BF16 bits, row-major (global memory)
  const uint16_t* b = nullptr;  // n x k
  uint32_t k = 16, n = 64;
  uint32_t span = 128;    // smem layout of both tiles (see above)
  bool use_tma = true;    // false: ordinary stores through place_addr()
  uint32_t desc_layout = uint32_t(tcg::Layout::kSwizzle128B);
  uint32_t a_lbo = 16, a_sbo = 1024, b_lbo = 16, b_sbo = 1024;
  uint32_t a_kstep = 32, b_kstep = 32;  // start-address advance per MMA
  uint32_t num_mma = 1;
  uint32_t readout = 0;        // 0: tcgen05.ld 32x32b -> out[row * n + col]; 1: 16x256b fragments
  bool wait_for_mma = true;    // false: read TMEM without waiting for the commit barrier
  float* out = nullptr;        // 128 * n floats
  uint8_t* img_a = nullptr;    // optional: copies of the A / B smem tiles after loading
  uint8_t* img_b = nullptr;
};

constexpr uint32_t kTileA = 0, kTileB = 16384, kBars = 32768;
constexpr uint32_t kCaseSmem = kBars + 64 + tcg::kSmemAlignSlack;

__global__ void mma_case_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                MmaCase c) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t a_tile = base + kTileA, b_tile = base + kTileB;
  const uint32_t full = base + kBars, done = base + kBars + 8, slot = base + kBars + 16;
  const uint32_t issued = base + kBars + 24;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (warp == 0) {
    tcg::tmem_alloc(slot, 128);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(full, 1);
    tcg::mbarrier_init(done, 1);
    tcg::mbarrier_init(issued, 1);
    tcg::fence_mbarrier_init();
  }
  if (!c.use_tma) {
    for (uint32_t i = threadIdx.x; i < 128 * c.k; i += blockDim.x) {
      const uint32_t addr = place_addr(c.span, 128, c.k, a_tile, i / c.k, i % c.k);
      memcpy(smem + (addr - base), &c.a[i], 2);
    }
    for (uint32_t i = threadIdx.x; i < c.n * c.k; i += blockDim.x) {
      const uint32_t addr = place_addr(c.span, c.n, c.k, b_tile, i / c.k, i % c.k);
      memcpy(smem + (addr - base), &c.b[i], 2);
    }
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 16);

  if (warp == 0 && tcg::elect_one_sync()) {
    if (c.use_tma) {
      tcg::mbarrier_arrive_expect_tx(full, (128 + c.n) * c.k * 2);
      if (c.span == kCoreMatrices) {
        tcg::tma_load_3d(a_tile, &map_a, 0, 0, 0, full);
        tcg::tma_load_3d(b_tile, &map_b, 0, 0, 0, full);
      } else {
        tcg::tma_load_2d(a_tile, &map_a, 0, 0, full);
        tcg::tma_load_2d(b_tile, &map_b, 0, 0, full);
      }
      tcg::mbarrier_wait_parity(full, 0);
      tcg::tcgen05_fence_after_thread_sync();
    }
    const uint32_t idesc = tcg::make_idesc_bf16_f32(128, c.n);
    for (uint32_t s = 0; s < c.num_mma; ++s) {
      const auto layout = static_cast<tcg::Layout>(c.desc_layout);
      const uint64_t ad = tcg::make_smem_desc(a_tile + s * c.a_kstep, c.a_lbo, c.a_sbo, layout);
      const uint64_t bd = tcg::make_smem_desc(b_tile + s * c.b_kstep, c.b_lbo, c.b_sbo, layout);
      tcg::mma_bf16_ss(tmem, ad, bd, idesc, /*accumulate=*/s > 0);
    }
    tcg::mma_commit(done);
    tcg::mbarrier_arrive(issued);
  }
  if (c.wait_for_mma) {
    tcg::mbarrier_wait_parity(done, 0);
    tcg::tcgen05_fence_after_thread_sync();
  } else {
    // BUG on purpose: `issued` only says the MMAs were issued, not that they completed.
    tcg::mbarrier_wait_parity(issued, 0);
    tcg::tcgen05_fence_after_thread_sync();
  }

  if (c.readout == 0) {
    const uint32_t row = warp * 32 + lane;  // M = 128: D row m sits in TMEM lane m
    for (uint32_t col = 0; col < c.n; col += 8) {
      uint32_t r[8];
      tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, warp * 32, col), r);
      tcg::tmem_wait_ld(r);
      memcpy(&c.out[row * c.n + col], r, sizeof r);
    }
  } else {
    for (uint32_t half = 0; half < 2; ++half)
      for (uint32_t cb = 0; cb < c.n / 8; ++cb) {
        uint32_t r[4];
        tcg::tmem_ld_16x256b_x1(tcg::tmem_offset(tmem, warp * 32 + half * 16, cb * 8), r);
        tcg::tmem_wait_ld(r);
        memcpy(&c.out[(((warp * 2 + half) * (c.n / 8) + cb) * 32 + lane) * 4], r, sizeof r);
      }
  }
  if (threadIdx.x == 0 && c.img_a) {
    memcpy(c.img_a, smem + kTileA, 128 * c.k * 2);
    memcpy(c.img_b, smem + kTileB, c.n * c.k * 2);
  }
  if (!c.wait_for_mma) tcg::mbarrier_wait_parity(done, 0);  // before the TMEM is freed
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, 128);
}

struct Operands {
  uint32_t k, n;
  std::vector<uint16_t> a, b;  // 128 x k, n x k
};
Operands make_operands(uint32_t k, uint32_t n, uint32_t salt = 0) {
  return Operands{k, n, small_int_matrix(128, k, salt), small_int_matrix(n, k, salt + 100)};
}

// The exact product over k in [0, k_end): D[m][n] = sum_k A[m][k] * B[n][k].
std::vector<float> reference(const Operands& op, uint32_t k_end) {
  std::vector<float> d(128 * op.n);
  for (uint32_t m = 0; m < 128; ++m)
    for (uint32_t j = 0; j < op.n; ++j) {
      double s = 0;
      for (uint32_t kk = 0; kk < k_end; ++kk) s += double(from_bf16(op.a[m * op.k + kk])) * from_bf16(op.b[j * op.k + kk]);
      d[m * op.n + j] = float(s);
    }
  return d;
}

struct CaseResult {
  std::vector<float> out;
  std::vector<uint8_t> img_a, img_b;
};
CaseResult run_case(MmaCase c, const Operands& op, bool images = false) {
  CaseResult r;
  r.out.assign(128 * op.n, NAN);
  c.a = op.a.data();
  c.b = op.b.data();
  c.k = op.k;
  c.n = op.n;
  c.out = r.out.data();
  if (images) {
    r.img_a.assign(128 * op.k * 2, 0);
    r.img_b.assign(op.n * op.k * 2, 0);
    c.img_a = r.img_a.data();
    c.img_b = r.img_b.data();
  }
  const CUtensorMap ma = tile_map(op.a.data(), 128, op.k, c.span);
  const CUtensorMap mb = tile_map(op.b.data(), op.n, op.k, c.span);
  const auto reg_a = registered(op.a, "A"), reg_b = registered(op.b, "B");
  tcg::launch_kernel(mma_case_kernel, tcg::LaunchDims{dim3(1), dim3(128), kCaseSmem}, nullptr, ma, mb, c);
  return r;
}

// The descriptor parameters of the canonical K-major layout of `span` (facts §1.3/§1.4): for the
// core-matrix layout LBO = rows * 16 (next k-group), SBO = 128 (next 8 rows) and one MMA (32 bytes
// of K = two k-groups) later starts 2 * rows * 16 bytes on; swizzled: SBO = 8 rows * span, LBO
// unused (16), and the K step is +32 bytes inside the row.
MmaCase canonical_case(uint32_t span, uint32_t n) {
  MmaCase c;
  c.span = span;
  if (span == kCoreMatrices) {
    c.desc_layout = uint32_t(tcg::Layout::kNone);
    c.a_lbo = 128 * 16;
    c.b_lbo = n * 16;
    c.a_sbo = c.b_sbo = 128;
    c.a_kstep = 2 * 128 * 16;
    c.b_kstep = 2 * n * 16;
  } else {
    c.desc_layout = uint32_t(span == 128 ? tcg::Layout::kSwizzle128B
                             : span == 64 ? tcg::Layout::kSwizzle64B
                                          : tcg::Layout::kSwizzle32B);
    c.a_lbo = c.b_lbo = 16;
    c.a_sbo = c.b_sbo = 8 * span;
    c.a_kstep = c.b_kstep = 32;
  }
  return c;
}

const char* span_name(uint32_t span) {
  return span == kCoreMatrices ? "no swizzle" : span == 32 ? "32B" : span == 64 ? "64B" : span == 128 ? "128B" : "row-major";
}

}  // namespace

// ============================================================================ 1. canonical layouts

TEST_CASE("emulator: canonical K-major layouts, one MMA and a full swizzle row, bitwise") {
  SimOptions opt(1);
  for (uint32_t span : {kCoreMatrices, 32u, 64u, 128u}) {
    // Tile width: one swizzle row (16 elements = one MMA for no swizzle and 32B; 32 for 64B;
    // 64 for 128B). A second no-swizzle case covers 4 MMAs (K = 64) below.
    const uint32_t k = span == kCoreMatrices ? 16 : span / 2;
    const Operands op = make_operands(k, 64, span);
    for (bool tma : {true, false}) {
      CAPTURE(span_name(span));
      CAPTURE(tma);
      MmaCase c = canonical_case(span, 64);
      c.use_tma = tma;
      // One MMA: K = 16 from the start of the tile.
      c.num_mma = 1;
      CaseResult one = run_case(c, op, /*images=*/true);
      const std::vector<float> ref1 = reference(op, 16);
      INFO("mismatching elements: " << count_mismatches(one.out, ref1));
      CHECK(same_bits(one.out, ref1));
      // Every MMA of the row (start + 32 j inside the swizzle row): the whole 128 x k product.
      c.num_mma = k / 16;
      CaseResult all = run_case(c, op);
      const std::vector<float> ref_all = reference(op, k);
      INFO("mismatching elements (all K): " << count_mismatches(all.out, ref_all));
      CHECK(same_bits(all.out, ref_all));
      // Where the data lies: TMA and the ordinary stores must both produce the ISA's placement.
      bool placed = true;
      for (uint32_t m = 0; m < 128 && placed; ++m)
        for (uint32_t kk = 0; kk < k; ++kk)
          placed &= memcmp(&one.img_a[isa_place(span, 128, k, m, kk)], &op.a[m * k + kk], 2) == 0;
      for (uint32_t j = 0; j < 64 && placed; ++j)
        for (uint32_t kk = 0; kk < k; ++kk)
          placed &= memcmp(&one.img_b[isa_place(span, 64, k, j, kk)], &op.b[j * k + kk], 2) == 0;
      CHECK(placed);
    }
  }
}

TEST_CASE("emulator: no-swizzle core-matrix tile of K = 64 takes 4 MMAs at +2*rows*16 bytes") {
  SimOptions opt(2);
  const Operands op = make_operands(64, 64, 7);
  for (bool tma : {true, false}) {
    CAPTURE(tma);
    MmaCase c = canonical_case(kCoreMatrices, 64);
    c.use_tma = tma;
    c.num_mma = 4;
    const CaseResult r = run_case(c, op);
    const std::vector<float> ref = reference(op, 64);
    INFO("mismatching elements: " << count_mismatches(r.out, ref));
    CHECK(same_bits(r.out, ref));
  }
}

TEST_CASE("emulator: 128B swizzle K advance: +32 bytes per MMA is right, +16 and +64 are wrong") {
  SimOptions opt(3);
  const Operands op = make_operands(64, 64, 11);  // 128 x 64: one 128-byte atom column
  const std::vector<float> ref64 = reference(op, 64), ref32 = reference(op, 32);
  for (bool tma : {true, false}) {
    CAPTURE(tma);
    MmaCase c = canonical_case(128, 64);
    c.use_tma = tma;
    c.num_mma = 4;
    CHECK(same_bits(run_case(c, op).out, ref64));  // start + 32 j, j = 0..3

    c.a_kstep = c.b_kstep = 16;  // wrong: reads k 8..23 in the second MMA, ...
    const std::vector<float> wrong16 = run_case(c, op).out;
    INFO("K step 16: mismatching elements " << count_mismatches(wrong16, ref64));
    CHECK_FALSE(same_bits(wrong16, ref64));

    c.a_kstep = c.b_kstep = 64;  // wrong: 2 MMAs read k 0..15 and 32..47 instead of 0..31
    c.num_mma = 2;
    const std::vector<float> wrong64 = run_case(c, op).out;
    CHECK_FALSE(same_bits(wrong64, ref32));

    // With 4 MMAs the third start (+128) leaves the 128-byte row: the emulator refuses it, and
    // either way the result is not the product.
    c.num_mma = 4;
    std::vector<float> out4;
    const std::string err = sim_error([&] { out4 = run_case(c, op).out; });
    INFO("K step 64 x 4: " << err);
    CHECK((!err.empty() || !same_bits(out4, ref64)));
  }
}

// ============================================================================ 2. the seed's no-swizzle attempt

TEST_CASE("emulator: the seed's failed no-swizzle attempt (row-major, LBO 16, SBO 1024) gives wrong results") {
  SimOptions opt(4);
  const Operands op = make_operands(64, 128, 21);  // BLOCK_M = BLOCK_N = 128, BLOCK_K = 64
  const std::vector<float> ref = reference(op, 64);

  // v0: the tile is stored as plain rows of 128 bytes (a 2-D TMA box {64, 128}), descriptors
  // with LBO = 16 B and SBO = 8 * BLOCK_K * 2 = 1024 B; MMA s starts 32 bytes further along K.
  MmaCase bad;
  bad.span = kRowMajor;
  bad.desc_layout = uint32_t(tcg::Layout::kNone);
  bad.a_lbo = bad.b_lbo = 16;
  bad.a_sbo = bad.b_sbo = 8 * 64 * 2;
  bad.a_kstep = bad.b_kstep = 32;
  bad.num_mma = 4;
  std::vector<float> wrong;
  const std::string err = sim_error([&] { wrong = run_case(bad, op).out; });
  INFO(err);
  REQUIRE(err.empty());  // it runs (the descriptors are well formed), it just computes garbage
  INFO("mismatching elements: " << count_mismatches(wrong, ref));
  CHECK_FALSE(same_bits(wrong, ref));
  CHECK(count_mismatches(wrong, ref) > 128 * 128 / 2);

  // v1: [8 k-groups][128 rows][8 elements] (3-D TMA box {8, 128, 8}); LBO = 128 * 16 = 2048,
  // SBO = 128, MMA s starts at s * 4096.
  MmaCase good = canonical_case(kCoreMatrices, 128);
  good.num_mma = 4;
  REQUIRE(good.a_lbo == 2048);
  REQUIRE(good.a_sbo == 128);
  REQUIRE(good.a_kstep == 4096);
  const std::vector<float> right = run_case(good, op).out;
  INFO("mismatching elements: " << count_mismatches(right, ref));
  CHECK(same_bits(right, ref));
}

// ============================================================================ 3. mbarrier semantics

namespace {

constexpr uint32_t kPhases = 6;

// Thread 0 waits on `bar` for phases 0..kPhases-1 (parity ph & 1) and logs how many arrivals it
// saw when its wait returned; threads 32 and 64 arrive once per phase (init count 2), each
// only after thread 0 acknowledged the previous phase on `ack`, so arrivals of phase ph+1
// cannot happen before thread 0 has logged phase ph.
__global__ void parity_wrap_kernel(uint32_t* log) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t bar = base, ack = base + 8;
  volatile uint32_t* arrivals = reinterpret_cast<volatile uint32_t*>(smem + 16);  // [2]
  const uint32_t tid = threadIdx.x;
  if (tid == 0) {
    tcg::mbarrier_init(bar, 2);
    tcg::mbarrier_init(ack, 1);
    tcg::fence_mbarrier_init();
    arrivals[0] = arrivals[1] = 0;
  }
  __syncthreads();
  if (tid == 0) {
    for (uint32_t ph = 0; ph < kPhases; ++ph) {
      tcg::mbarrier_wait_parity(bar, ph & 1);
      log[ph] = arrivals[0] + arrivals[1];
      tcg::mbarrier_arrive(ack);
    }
  } else if (tid == 32 || tid == 64) {
    const uint32_t who = tid / 64;
    for (uint32_t ph = 0; ph < kPhases; ++ph) {
      if (ph > 0) tcg::mbarrier_wait_parity(ack, (ph - 1) & 1);
      arrivals[who] = ph + 1;
      tcg::mbarrier_arrive(bar);
    }
  }
}

__global__ void fresh_barrier_kernel(uint32_t parity, uint32_t* passed, uint32_t* bar_addr) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t bar = tcg::smem_addr(smem) + 64;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    *bar_addr = bar;
    tcg::mbarrier_wait_parity(bar, parity);
    *passed = 1;
  }
}

// A single thread loads one 64 x 16 BF16 box (2 KiB) with TMA and waits for it.
struct TmaCase {
  uint32_t dst_off = 0;      // TMA destination, bytes from the aligned smem base
  uint32_t bar_off = 8192;   // mbarrier, bytes from the aligned smem base
  uint32_t expect = 2048;    // bytes announced by arrive.expect_tx
  int order = 0;             // 0: expect_tx, TMA; 1: TMA, poll until the data landed, expect_tx;
                             // 2: expect_tx, TMA twice (second box at dst + 2048);
                             // 3: expect_tx without any TMA
  bool extra_arrive = false; // one more plain arrive after the above
  bool wait = true;
  uint16_t* out = nullptr;   // 1024 elements: the smem box after the wait
  uint32_t* landed_first = nullptr;  // order 1: 1 if the data was there before expect_tx
};

__global__ void tma_case_kernel(const __grid_constant__ CUtensorMap map, TmaCase t) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t dst = base + t.dst_off, bar = base + t.bar_off;
  if (threadIdx.x != 0) return;
  tcg::mbarrier_init(bar, 1);
  tcg::fence_mbarrier_init();
  if (t.order == 1) {
    tcg::tma_load_2d(dst, &map, 0, 0, bar);
    volatile const uint16_t* last = reinterpret_cast<const uint16_t*>(smem + t.dst_off) + 1023;
    while (*last == 0xFFFF) tcg::tcgen05_fence_before_thread_sync();  // an emulated instruction
    if (t.landed_first) *t.landed_first = 1;
    tcg::mbarrier_arrive_expect_tx(bar, t.expect);
  } else {
    tcg::mbarrier_arrive_expect_tx(bar, t.expect);
    if (t.order != 3) tcg::tma_load_2d(dst, &map, 0, 0, bar);
    if (t.order == 2) tcg::tma_load_2d(dst + 2048, &map, 0, 0, bar);
  }
  if (t.extra_arrive) tcg::mbarrier_arrive(bar);
  if (t.wait) tcg::mbarrier_wait_parity(bar, 0);
  if (t.out) memcpy(t.out, smem + t.dst_off, 2048);
}

struct Box {
  std::vector<uint16_t> data;  // 16 rows x 64 BF16
  CUtensorMap map;
  explicit Box(tcg::TmaSwizzle sw = tcg::TmaSwizzle::kNone) : data(16 * 64) {
    for (uint32_t i = 0; i < data.size(); ++i) data[i] = bf16(float(small_int(i / 64, i % 64, 5) + 5));  // 1..9
    tcg::TiledMap t;
    t.dtype = tcg::TmaDtype::kBF16;
    t.base = data.data();
    t.rank = 2;
    t.dims[0] = 64;
    t.dims[1] = 16;
    t.strides[0] = 128;
    t.box[0] = 64;
    t.box[1] = 16;
    t.swizzle = sw;
    map = tcg::make_tensor_map(t);
  }
};

std::string run_tma_case(const Box& box, TmaCase t, uint32_t smem_bytes = 16384 + tcg::kSmemAlignSlack) {
  const auto reg = registered(box.data, "box");
  return sim_error([&] {
    tcg::launch_kernel(tma_case_kernel, tcg::LaunchDims{dim3(1), dim3(32), smem_bytes}, nullptr, box.map, t);
  });
}

}  // namespace

TEST_CASE("emulator: mbarrier phase and parity wrap over 6 phases (count 2)") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    CAPTURE(seed);
    std::vector<uint32_t> log(kPhases, 0xDEAD);
    const std::string err = sim_error([&] {
      tcg::launch_kernel(parity_wrap_kernel, tcg::LaunchDims{dim3(1), dim3(96), 1024 + tcg::kSmemAlignSlack}, nullptr,
                         log.data());
    });
    INFO(err);
    REQUIRE(err.empty());
    // The wait for phase ph returns after exactly the 2 (ph + 1) arrivals that complete it:
    // not earlier (parity aliasing / wrong completion rule), and the next phase is held back.
    for (uint32_t ph = 0; ph < kPhases; ++ph) {
      CAPTURE(ph);
      CHECK(log[ph] == 2 * (ph + 1));
    }
  }
}

TEST_CASE("emulator: a fresh mbarrier passes try_wait.parity(1) at once") {
  SimOptions opt(1);
  uint32_t passed = 0, bar = 0;
  const std::string err = sim_error([&] {
    tcg::launch_kernel(fresh_barrier_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr,
                       1u, &passed, &bar);
  });
  INFO(err);
  CHECK(err.empty());
  CHECK(passed == 1);
}

TEST_CASE("emulator: expect_tx before or after the TMA's complete_tx both complete the phase") {
  const Box box;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    CAPTURE(seed);
    for (int order : {0, 1}) {
      CAPTURE(order);
      std::vector<uint16_t> out(1024, 0);
      uint32_t landed = 0;
      TmaCase t;
      t.order = order;
      t.out = out.data();
      t.landed_first = &landed;
      const std::string err = run_tma_case(box, t);
      INFO(err);
      CHECK(err.empty());
      CHECK(out == box.data);
      if (order == 1) CHECK(landed == 1);  // complete_tx really came first (tx-count went negative)
    }
  }
}

TEST_CASE("emulator: tx-count underflow (expect_tx smaller than the TMA box) is reported") {
  const Box box;
  for (int order : {0, 1}) {
    CAPTURE(order);
    SimOptions opt(1);
    TmaCase t;
    t.order = order;
    t.expect = 1024;  // the box is 2048 bytes
    const std::string err = run_tma_case(box, t);
    INFO(err);
    CHECK(contains(err, "tx-count underflow"));
  }
}

TEST_CASE("emulator: arrival overflow (an arrive while the phase only waits for bytes) is reported") {
  SimOptions opt(1);
  const Box box;
  TmaCase t;
  t.order = 3;  // expect_tx(2048) + its arrive; no TMA; then one arrive too many
  t.extra_arrive = true;
  t.wait = false;
  const std::string err = run_tma_case(box, t);
  INFO(err);
  CHECK(contains(err, "arrival overflow"));
}

// expect_tx announces one box but two are loaded. The first box completes the phase; the
// second one's bytes land afterwards and drive the next phase's tx-count negative. The emulator
// reports any mbarrier whose tx-count is not zero when the CTA exits.
TEST_CASE("emulator: bytes beyond expect_tx that land after the phase completed are reported") {
  const Box box;
  int detected = 0;
  std::string last;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimOptions opt(seed);
    TmaCase t;
    t.order = 2;
    t.expect = 2048;  // two 2048-byte boxes are loaded
    last = run_tma_case(box, t);
    // Either the extra bytes land before the CTA exits (tx-count underflow), or the CTA exits
    // with the second copy still in flight; both are reported.
    detected += contains(last, "tx-count") || contains(last, "exited with asynchronous work in flight");
  }
  INFO("last message: " << last);
  CHECK(detected == 8);
}

// A TMA box that would overwrite a live mbarrier (here the barrier sits 1024 bytes into the
// 2048-byte destination) corrupts the barrier on hardware; the emulator keeps mbarrier state
// outside shared memory, so it checks the destination range against the live barriers.
TEST_CASE("emulator: a TMA destination overlapping an initialised mbarrier is reported") {
  SimOptions opt(1);
  const Box box;
  TmaCase t;
  t.dst_off = 0;
  t.bar_off = 1024;  // inside [0, 2048)
  const std::string err = run_tma_case(box, t);
  INFO(err);
  CHECK(contains(err, "mbarrier"));
}

// ============================================================================ 4. deadlock

namespace {

// Producer (thread 32) / consumer (thread 0) over one smem slot with full/empty barriers. The
// producer's first wait on `empty` must use parity 1 (a fresh barrier's "previous phase");
// `flip` gets it wrong.
__global__ void producer_consumer_kernel(uint32_t flip, uint32_t* out, uint32_t* bars) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t full = base, empty = base + 8;
  volatile uint32_t* slot = reinterpret_cast<volatile uint32_t*>(smem + 64);
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(full, 1);
    tcg::mbarrier_init(empty, 1);
    tcg::fence_mbarrier_init();
    bars[0] = full;
    bars[1] = empty;
  }
  __syncthreads();
  constexpr uint32_t kIters = 5;
  if (threadIdx.x == 32) {
    for (uint32_t i = 0; i < kIters; ++i) {
      tcg::mbarrier_wait_parity(empty, ((i & 1) ^ 1) ^ flip);
      *slot = 100 + i;
      tcg::mbarrier_arrive(full);
    }
  } else if (threadIdx.x == 0) {
    for (uint32_t i = 0; i < kIters; ++i) {
      tcg::mbarrier_wait_parity(full, i & 1);
      out[i] = *slot;
      tcg::mbarrier_arrive(empty);
    }
  }
}

}  // namespace

TEST_CASE("emulator: waiting on parity 0 of a barrier nobody arrives on is a deadlock, not a hang") {
  const Isolated r = run_isolated(
      [] {
        SimOptions opt(1);
        uint32_t passed = 0, bar = 0;
        const std::string err = sim_error([&] {
          tcg::launch_kernel(fresh_barrier_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack},
                             nullptr, 0u, &passed, &bar);
        });
        return hex(bar) + "\n" + (passed ? "PASSED" : "") + err;
      },
      10.0);
  REQUIRE_FALSE(r.timed_out);
  const std::string bar = r.text.substr(0, r.text.find('\n'));
  const std::string err = r.text.substr(r.text.find('\n') + 1);
  INFO(err);
  CHECK(bar != "0x0");
  CHECK(contains(err, "deadlock"));
  CHECK(contains(err, bar));
  CHECK(contains(err, "parity 0"));
  CHECK_FALSE(contains(err, "PASSED"));
}

TEST_CASE("emulator: producer/consumer with the producer's parity flipped deadlocks; correct parity works") {
  for (uint32_t flip : {0u, 1u}) {
    CAPTURE(flip);
    const Isolated r = run_isolated(
        [flip] {
          SimOptions opt(2);
          uint32_t out[5] = {}, bars[2] = {};
          const std::string err = sim_error([&] {
            tcg::launch_kernel(producer_consumer_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024 + tcg::kSmemAlignSlack},
                               nullptr, flip, out, bars);
          });
          std::string s = hex(bars[0]) + " " + hex(bars[1]) + "\n";
          for (uint32_t v : out) s += std::to_string(v) + " ";
          return s + "\n" + err;
        },
        10.0);
    REQUIRE_FALSE(r.timed_out);
    const size_t nl1 = r.text.find('\n'), nl2 = r.text.find('\n', nl1 + 1);
    const std::string bars = r.text.substr(0, nl1), values = r.text.substr(nl1 + 1, nl2 - nl1 - 1);
    const std::string err = r.text.substr(nl2 + 1);
    INFO(err);
    if (flip == 0) {
      CHECK(err.empty());
      CHECK(values == "100 101 102 103 104 ");
    } else {
      const std::string empty_bar = bars.substr(bars.find(' ') + 1);
      CHECK(contains(err, "deadlock"));
      CHECK(contains(err, "parity"));
      CHECK(contains(err, empty_bar));  // the producer's wait on `empty` is named
    }
  }
}

// ============================================================================ 5. diagnostics

namespace {

struct TmemCase {
  uint32_t alloc0 = 32;     // columns warp 0 allocates (0: none)
  uint32_t alloc1 = 0;      // columns warp 1 allocates (0: none)
  bool dealloc = true;
  int ld_warp = -1;         // warp that executes one tcgen05.ld (or none)
  int ld_shape = 0;         // 0: 32x32b.x8, 1: 32x32b.x16, 2: 16x256b.x1
  uint32_t ld_lane = 0, ld_col = 0;  // relative to warp 0's allocation
};

__global__ void tmem_kernel(TmemCase t) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const int warp = int(threadIdx.x / 32);
  if (warp == 0 && t.alloc0) tcg::tmem_alloc(base, t.alloc0);
  if (warp == 1 && t.alloc1) tcg::tmem_alloc(base + 4, t.alloc1);
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem0 = *reinterpret_cast<volatile uint32_t*>(smem);
  const uint32_t tmem1 = *reinterpret_cast<volatile uint32_t*>(smem + 4);
  if (warp == t.ld_warp) {
    const uint32_t addr = tcg::tmem_offset(tmem0, t.ld_lane, t.ld_col);
    if (t.ld_shape == 0) {
      uint32_t r[8];
      tcg::tmem_ld_32x32b_x8(addr, r);
      tcg::tmem_wait_ld(r);
    } else if (t.ld_shape == 1) {
      uint32_t r[16];
      tcg::tmem_ld_32x32b_x16(addr, r);
      tcg::tmem_wait_ld(r);
    } else {
      uint32_t r[4];
      tcg::tmem_ld_16x256b_x1(addr, r);
      tcg::tmem_wait_ld(r);
    }
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (t.dealloc && warp == 0 && t.alloc0) tcg::tmem_dealloc(tmem0, t.alloc0);
  if (t.dealloc && warp == 1 && t.alloc1) tcg::tmem_dealloc(tmem1, t.alloc1);
}

std::string run_tmem(const TmemCase& t) {
  SimOptions opt(1);
  return sim_error([&] {
    tcg::launch_kernel(tmem_kernel, tcg::LaunchDims{dim3(1), dim3(128), 1024 + tcg::kSmemAlignSlack}, nullptr, t);
  });
}

// One MMA with descriptors built in the kernel (so that addresses are real) and then altered.
struct RawMma {
  uint32_t a_off = kTileA, b_off = kTileB;  // operand starts, bytes from the aligned base
  uint32_t layout = uint32_t(tcg::Layout::kSwizzle128B);
  uint64_t a_xor = 0, b_xor = 0;            // bits flipped in the finished descriptors
  uint32_t idesc = tcg::make_idesc_bf16_f32(128, 64);
  uint32_t alloc_cols = 128;
  uint32_t* completed = nullptr;            // set to 1 once the MMA's commit arrived
};

__global__ void raw_mma_kernel(RawMma r) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t done = base + kBars + 8, slot = base + kBars + 16;
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) {
    tcg::tmem_alloc(slot, r.alloc_cols);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 16);
  if (warp == 0 && tcg::elect_one_sync()) {
    const auto layout = static_cast<tcg::Layout>(r.layout);
    const uint64_t ad = tcg::make_smem_desc(base + r.a_off, 16, 1024, layout) ^ r.a_xor;
    const uint64_t bd = tcg::make_smem_desc(base + r.b_off, 16, 1024, layout) ^ r.b_xor;
    tcg::mma_bf16_ss(tmem, ad, bd, r.idesc, false);
    tcg::mma_commit(done);
    tcg::mbarrier_wait_parity(done, 0);
    if (r.completed) *r.completed = 1;
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc(tmem, r.alloc_cols);
}

std::string run_raw(RawMma r, uint32_t* completed = nullptr) {
  SimOptions opt(1);
  r.completed = completed;
  return sim_error([&] {
    tcg::launch_kernel(raw_mma_kernel, tcg::LaunchDims{dim3(1), dim3(128), kCaseSmem}, nullptr, r);
  });
}

// All threads spin on a shared flag that nobody sets. With `tick`, every iteration executes
// __syncwarp (an emulated instruction); without, the loop is plain C++ loads.
__global__ void spin_kernel(int tick) {
  uint8_t* smem = tcg::aligned_smem_base();
  volatile uint32_t* flag = reinterpret_cast<volatile uint32_t*>(smem);
  if (threadIdx.x == 0) *flag = 0;
  __syncthreads();
  if (tick) {
    while (*flag == 0) __syncwarp();
  } else if (threadIdx.x == 0) {
    while (*flag == 0) {
    }
  }
}

// Warp 0 with its lanes split in two halves that execute different warp-collective code.
__global__ void divergent_kernel(int variant) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t lane = threadIdx.x % 32;
  if (variant == 0) {  // different instructions: elect.sync vs tcgen05.wait::ld
    if (lane < 16) {
      (void)tcg::elect_one_sync();
    } else {
      uint32_t r[4];
      tcg::tmem_wait_ld(r);
    }
    return;
  }
  if (variant == 1) {  // the same opcode at two different instructions (source lines)
    if (lane < 16) {
      (void)tcg::elect_one_sync();
    } else {
      (void)tcg::elect_one_sync();
    }
    return;
  }
  tcg::tmem_alloc(base, 32);
  tcg::tcgen05_fence_before_thread_sync();
  __syncwarp();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem);
  uint32_t buf[16] = {};
  if (variant == 2) {  // tcgen05.ld.32x32b.x8 in half the warp, .x16 in the other half
    if (lane < 16) tcg::tmem_ld_32x32b_x8(tmem, reinterpret_cast<uint32_t(&)[8]>(buf));
    else tcg::tmem_ld_32x32b_x16(tmem, buf);
    tcg::tmem_wait_ld(buf);
  } else if (variant == 3) {  // half the warp has exited before a .sync.aligned tcgen05.ld
    // Lanes 16-31 arrive on `gone` and exit at once (no emulated instruction in between);
    // lanes 0-15 start only when all 16 arrived, i.e. after the other half exited.
    const uint32_t gone = base + 64;
    if (lane == 0) {
      tcg::mbarrier_init(gone, 16);
      tcg::fence_mbarrier_init();
    }
    __syncwarp();
    if (lane >= 16) {
      tcg::mbarrier_arrive(gone);
      return;
    }
    tcg::mbarrier_wait_parity(gone, 0);
    tcg::tmem_ld_32x32b_x8(tmem, reinterpret_cast<uint32_t(&)[8]>(buf));
    tcg::tmem_wait_ld(buf);
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncwarp();
  tcg::tmem_dealloc(tmem, 32);
}

std::string run_divergent(int variant) {
  SimOptions opt(1);
  return sim_error([&] {
    tcg::launch_kernel(divergent_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr,
                       variant);
  });
}

}  // namespace

TEST_CASE("emulator: TMEM diagnostics") {
  SUBCASE("a correct allocate / read / free runs clean") {
    TmemCase t;
    t.ld_warp = 1;
    t.ld_lane = 32;  // warp 1 reads its own quarter, lanes 32..63
    const std::string err = run_tmem(t);
    INFO(err);
    CHECK(err.empty());
  }
  SUBCASE("TMEM not freed at exit") {
    TmemCase t;
    t.dealloc = false;
    const std::string err = run_tmem(t);
    INFO(err);
    CHECK(contains(err, "TMEM leak"));
  }
  SUBCASE("tcgen05.ld from the wrong warp quarter") {
    TmemCase t;
    t.ld_warp = 1;
    t.ld_lane = 0;  // lanes 0..31 belong to warp 0 (warp % 4 == 0)
    const std::string err = run_tmem(t);
    INFO(err);
    CHECK(contains(err, "lane quarter"));
  }
  SUBCASE("16x256b at lane 32w+16 is fine, at 32w+24 it crosses the quarter") {
    TmemCase t;
    t.ld_warp = 2;
    t.ld_shape = 2;
    t.ld_lane = 64 + 16;
    CHECK(run_tmem(t).empty());
    t.ld_lane = 64 + 24;
    const std::string err = run_tmem(t);
    INFO(err);
    CHECK(contains(err, "lane quarter"));
  }
  SUBCASE("tcgen05.ld outside the allocation") {
    TmemCase t;
    t.ld_warp = 0;
    t.ld_col = 32;  // 32 columns allocated: [0, 32)
    std::string err = run_tmem(t);
    INFO(err);
    CHECK(contains(err, "TMEM access outside the allocation"));
    t.ld_shape = 1;
    t.ld_col = 24;  // x16: columns 24..39
    err = run_tmem(t);
    CHECK(contains(err, "TMEM access outside the allocation"));
  }
  SUBCASE("alloc of 48 columns") {
    TmemCase t;
    t.alloc0 = 48;
    const std::string err = run_tmem(t);
    INFO(err);
    CHECK(contains(err, "power of two"));
  }
  SUBCASE("alloc over capacity: 512 + 32 and 512 + 512") {
    TmemCase t;
    t.alloc0 = 512;
    t.alloc1 = 32;
    std::string err = run_tmem(t);
    INFO(err);
    CHECK(contains(err, "over capacity"));
    t.alloc1 = 512;
    err = run_tmem(t);
    CHECK(contains(err, "over capacity"));
    t.alloc0 = 256;
    t.alloc1 = 256;  // exactly full is fine
    CHECK(run_tmem(t).empty());
  }
  SUBCASE("MMA accumulator outside the allocation") {
    RawMma r;
    r.alloc_cols = 32;  // N = 64 needs 64 columns
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "TMEM access outside the allocation"));
  }
}

TEST_CASE("emulator: descriptor and shape diagnostics") {
  SUBCASE("a valid 128B-swizzle MMA runs (the control for the cases below)") {
    uint32_t completed = 0;
    const std::string err = run_raw(RawMma{}, &completed);
    INFO(err);
    CHECK(err.empty());
    CHECK(completed == 1);
  }
  SUBCASE("bit 46 cleared") {
    RawMma r;
    r.a_xor = uint64_t(1) << 46;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "bits 46-48"));
  }
  SUBCASE("layout type 3") {
    RawMma r;
    r.layout = 3;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "layout type 3"));
  }
  SUBCASE("swizzled start not on its 1024-byte repeat (+128), while +96 is a legal K step") {
    RawMma r;
    r.a_off = kTileA + 96;
    CHECK(run_raw(r).empty());
    r.a_off = kTileA + 128;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "swizzle repeat"));
  }
  SUBCASE("M = 256 with cta_group::1") {
    RawMma r;
    r.idesc = tcg::make_idesc_bf16_f32(256, 128);
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "invalid MMA shape"));
  }
  SUBCASE("N = 264") {
    RawMma r;
    r.idesc = tcg::make_idesc_bf16_f32(128, 264);
    r.alloc_cols = 512;
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "invalid MMA shape"));
  }
  // make_idesc_f16 cannot store N = 12 (the field holds N >> 3); it encodes M = 0 for shapes it
  // cannot represent, so the emulator reports an invalid shape instead of running N = 8.
  SUBCASE("N = 12 (not a multiple of 8)") {
    RawMma r;
    r.idesc = tcg::make_idesc_bf16_f32(128, 12);
    const std::string err = run_raw(r);
    INFO(err);
    CHECK(contains(err, "invalid MMA shape"));
  }
}

TEST_CASE("emulator: TMA and shared-memory diagnostics") {
  SUBCASE("128B-swizzled TMA destination not 1024-byte aligned") {
    SimOptions opt(1);
    const Box box(tcg::TmaSwizzle::k128B);
    TmaCase t;
    t.dst_off = 1024;  // aligned: fine
    CHECK(run_tma_case(box, t).empty());
    t.dst_off = 512;
    const std::string err = run_tma_case(box, t);
    INFO(err);
    CHECK(contains(err, "TMA destination not aligned to its swizzle repeat"));
  }
  SUBCASE("TMA box past the end of dynamic shared memory") {
    SimOptions opt(1);
    const Box box;
    TmaCase t;
    t.bar_off = 0;
    t.dst_off = 8192 - 1024;  // 2 KiB box in an 8 KiB window
    const std::string err = run_tma_case(box, t, 8192);  // the window starts 1024-aligned: base offset 0
    INFO(err);
    CHECK(contains(err, "shared memory out of bounds"));
  }
}

TEST_CASE("emulator: a spin loop on a shared flag exhausts the instruction budget (livelock)") {
  const Isolated r = run_isolated(
      [] {
        SimOptions opt(1, /*budget=*/20000);
        return sim_error([] {
          tcg::launch_kernel(spin_kernel, tcg::LaunchDims{dim3(1), dim3(64), 1024 + tcg::kSmemAlignSlack}, nullptr, 1);
        });
      },
      10.0);
  REQUIRE_FALSE(r.timed_out);
  INFO(r.text);
  CHECK(contains(r.text, "livelock"));
}

// The same spin without any emulated instruction in its body (a plain volatile load loop, as a
// kernel may poll a flag written by another warp) never returns to the scheduler: threads switch
// only at emulated instructions. The watchdog notices that nothing progresses and ends the
// process with "livelock (no progress)" instead of hanging; here it runs in a forked child.
TEST_CASE("emulator: a spin loop without emulated instructions is diagnosed, not hung") {
  const Isolated r = run_isolated(
      [] {
        SimOptions opt(1, /*budget=*/20000);
        tcsim::Options o = tcsim::options();
        o.watchdog_seconds = 0.5;
        tcsim::set_options(o);
        return sim_error([] {
          tcg::launch_kernel(spin_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr, 0);
        });
      },
      3.0);
  INFO(r.text);
  CHECK_FALSE(r.timed_out);
  CHECK(contains(r.text, "livelock (no progress)"));
  CHECK(contains(r.text, "test_emulator.cpp"));
}

TEST_CASE("emulator: divergent warp at a .sync.aligned instruction") {
  const std::string err = run_divergent(0);
  INFO(err);
  CHECK(contains(err, "divergent"));
}

// Lanes 0-15 and 16-31 execute elect.sync at two different instructions (source lines):
// .sync.aligned needs the warp at the SAME instruction, not just the same opcode.
TEST_CASE("emulator: the same warp-collective opcode at two different instructions is divergent") {
  const std::string err = run_divergent(1);
  INFO(err);
  CHECK(contains(err, "divergent"));
}

// Half the warp executes tcgen05.ld.32x32b.x8, the other half .x16: different instructions,
// so the emulator compares shape and .num across lanes (16-element buffers keep a regression
// from overrunning the stack).
TEST_CASE("emulator: tcgen05.ld with different .num in the two halves of a warp is divergent") {
  const std::string err = run_divergent(2);
  INFO(err);
  CHECK(contains(err, "divergent"));
}

// Lanes 16-31 exit, then lanes 0-15 execute tcgen05.ld: a .sync.aligned tcgen05 instruction
// needs every thread of the warp, so a warp with exited lanes cannot execute it.
TEST_CASE("emulator: a .sync.aligned tcgen05.ld after half of the warp exited is reported") {
  int detected = 0;
  std::string last;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    last = sim_error([&] {
      tcg::launch_kernel(divergent_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr, 3);
    });
    detected += !last.empty();
  }
  INFO("last message: " << last);
  CHECK(detected == 4);
}

// The accumulator is freed while the MMA that writes it may still be in flight (commit issued,
// never waited for before tcgen05.dealloc). The emulator re-checks the allocation when the MMA
// completes, and requires a tcgen05.fence::after_thread_sync after the __syncwarp.
namespace {
__global__ void early_dealloc_kernel(uint32_t* unused) {
  (void)unused;
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t done = base + kBars + 8, slot = base + kBars + 16;
  const uint32_t warp = threadIdx.x / 32;
  if (warp == 0) {
    tcg::tmem_alloc(slot, 64);
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kBars + 16);
  if (warp == 0) {
    if (tcg::elect_one_sync()) {
      const uint64_t ad = tcg::make_smem_desc(base + kTileA, 16, 1024, tcg::Layout::kSwizzle128B);
      const uint64_t bd = tcg::make_smem_desc(base + kTileB, 16, 1024, tcg::Layout::kSwizzle128B);
      tcg::mma_bf16_ss(tmem, ad, bd, tcg::make_idesc_bf16_f32(128, 64), false);
      tcg::mma_commit(done);
    }
    __syncwarp();
    tcg::tmem_dealloc(tmem, 64);  // BUG: nobody waited for `done`
  }
}
}  // namespace

TEST_CASE("emulator: tcgen05.dealloc while an MMA into those columns is in flight is reported") {
  int detected = 0;
  std::string last;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimOptions opt(seed);
    last = sim_error([] {
      tcg::launch_kernel(early_dealloc_kernel, tcg::LaunchDims{dim3(1), dim3(128), kCaseSmem}, nullptr, nullptr);
    });
    detected += !last.empty();
  }
  INFO("last message: " << last);
  CHECK(detected >= 1);
}

// ============================================================================ 6. asynchrony

namespace {
__global__ void tma_race_kernel(const __grid_constant__ CUtensorMap map, uint16_t* out, int wait_first) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t bar = base + 4096, issued = base + 4104;
  if (threadIdx.x != 0 && threadIdx.x != 32) return;  // bystanders would only give the copy time
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::mbarrier_init(issued, 1);
    tcg::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // producer
    tcg::mbarrier_arrive_expect_tx(bar, 2048);
    tcg::tma_load_2d(base, &map, 0, 0, bar);
    tcg::mbarrier_arrive(issued);
  } else if (threadIdx.x == 32) {  // consumer
    if (wait_first) tcg::mbarrier_wait_parity(bar, 0);
    else tcg::mbarrier_wait_parity(issued, 0);  // BUG on purpose: issued, not landed
    const uint16_t* tile = reinterpret_cast<const uint16_t*>(smem);
    for (uint32_t i = 0; i < 1024; ++i) out[i] = tile[i];
    tcg::mbarrier_wait_parity(bar, 0);
  }
}
}  // namespace

// The readers wait only for "issued", then run tcgen05.ld + wait::ld: a real bug. mma -> ld is not
// a pipelined pair (PTX ISA §9.7.16.6.2), so the load is reported as a TMEM hazard under every
// seed (tests/test_emulator_hazards.cpp has the rule's own tests); waiting for the commit is right.
TEST_CASE("emulator: reading TMEM without waiting for the MMA's commit is reported under every seed") {
  const Operands op = make_operands(64, 64, 31);
  const std::vector<float> ref = reference(op, 64);
  MmaCase c = canonical_case(128, 64);
  c.num_mma = 4;
  c.use_tma = false;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    SimOptions opt(seed);
    c.wait_for_mma = false;
    const std::string err = sim_error([&] { run_case(c, op); });
    INFO(err);
    CHECK(contains(err, "tcsim: TMEM hazard between asynchronous tcgen05 operations"));
    CHECK(contains(err, "mma -> ld"));  // not a pipelined pair, in the MMA's warp or another
    c.wait_for_mma = true;
    CHECK(same_bits(run_case(c, op).out, ref));
  }
}

TEST_CASE("emulator: reading a TMA tile without waiting for the full barrier sees 0xFFFF under some seed") {
  const Box box;
  const auto reg = registered(box.data, "box");
  int poisoned = 0, wrong_when_waiting = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimOptions opt(seed);
    for (int wait_first : {0, 1}) {
      std::vector<uint16_t> out(1024, 0);
      tcg::launch_kernel(tma_race_kernel, tcg::LaunchDims{dim3(1), dim3(64), 8192 + tcg::kSmemAlignSlack}, nullptr,
                         box.map, out.data(), wait_first);
      bool has_poison = false;
      for (uint16_t v : out) has_poison |= v == 0xFFFF;
      if (wait_first) wrong_when_waiting += out != box.data;
      else poisoned += has_poison;
    }
  }
  MESSAGE("seeds (of 8) where the unsynchronised read saw 0xFFFF: " << poisoned);
  CHECK(poisoned >= 1);
  CHECK(wrong_when_waiting == 0);
}

// ============================================================================ 7. determinism

TEST_CASE("emulator: the same seed reproduces the schedule, different seeds change it") {
  const Operands op = make_operands(64, 64, 41);
  MmaCase c = canonical_case(128, 64);
  c.num_mma = 4;
  auto stats_for = [&](uint64_t seed) {
    SimOptions opt(seed);
    (void)run_case(c, op);
    return tcsim::last_stats();
  };
  const tcsim::Stats a = stats_for(5), b = stats_for(5);
  CHECK(a.fiber_switches == b.fiber_switches);
  CHECK(a.instructions == b.instructions);
  CHECK(a.barrier_waits == b.barrier_waits);
  CHECK(a.mmas == b.mmas);
  CHECK(a.tma_copies == b.tma_copies);
  CHECK(a.mmas == 4);
  CHECK(a.tma_copies == 2);
  const tcsim::Stats s1 = stats_for(1), s2 = stats_for(2);
  CHECK(s1.fiber_switches != s2.fiber_switches);
  std::set<uint64_t> switches;
  for (uint64_t seed = 1; seed <= 4; ++seed) switches.insert(stats_for(seed).fiber_switches);
  CHECK(switches.size() >= 3);
}

// ============================================================================ 8. tcgen05.ld 16x256b

TEST_CASE("emulator: tcgen05.ld.16x256b per-thread map (facts §6.4)") {
  SimOptions opt(6);
  // D[m][n] = m + 128 n, unique per element: A[m][0] = m, A[m][1] = 1; B[n][0] = 1, B[n][1] = 128 n.
  const uint32_t N = 64;
  Operands op{64, N, std::vector<uint16_t>(128 * 64, 0), std::vector<uint16_t>(N * 64, 0)};
  for (uint32_t m = 0; m < 128; ++m) {
    op.a[m * 64 + 0] = bf16(float(m));
    op.a[m * 64 + 1] = bf16(1.f);
  }
  for (uint32_t n = 0; n < N; ++n) {
    op.b[n * 64 + 0] = bf16(1.f);
    op.b[n * 64 + 1] = bf16(float(128 * n));
  }
  MmaCase c = canonical_case(128, N);
  c.readout = 1;
  const std::vector<float> out = run_case(c, op).out;
  // Warp w, half h reads lanes L0 = 32w + 16h; column block cb starts at C0 = 8 cb. Thread t:
  // r0 = (L0 + t/4, C0 + 2(t%4)), r1 = column + 1, r2/r3 = the same at lane + 8 — the mma.sync
  // m16n8 accumulator fragment (c0, c1 at row g, c2, c3 at row g + 8, columns 2t, 2t+1).
  size_t bad = 0;
  for (uint32_t w = 0; w < 4; ++w)
    for (uint32_t h = 0; h < 2; ++h)
      for (uint32_t cb = 0; cb < N / 8; ++cb)
        for (uint32_t t = 0; t < 32; ++t)
          for (uint32_t r = 0; r < 4; ++r) {
            const uint32_t lane = 32 * w + 16 * h + t / 4 + (r >= 2 ? 8 : 0);
            const uint32_t col = 8 * cb + 2 * (t % 4) + (r % 2);
            const float expect = float(lane + 128 * col);
            const float got = out[(((w * 2 + h) * (N / 8) + cb) * 32 + t) * 4 + r];
            bad += memcmp(&got, &expect, 4) != 0;
          }
  CHECK(bad == 0);
}

// ============================================================================ 9. ldmatrix and mma.sync

namespace {
struct WarpMma {
  const uint16_t* a;   // 16 x 16 row-major
  const uint16_t* bt;  // B^T: 8 (n) x 16 (k) row-major, i.e. B "col"
  const float* c;      // 16 x 8
  uint32_t* a_regs;    // [32][4]
  uint32_t* b_regs;    // [32][2]
  uint32_t* p_regs;    // [32][4]: ldmatrix.x4 with rows given in reverse order
  float* d;            // [32][4]
};

__global__ void warp_mma_kernel(WarpMma w) {
  uint8_t* smem = tcg::aligned_smem_base();
  uint16_t* A = reinterpret_cast<uint16_t*>(smem);
  uint16_t* Bt = reinterpret_cast<uint16_t*>(smem + 512);
  const uint32_t lane = threadIdx.x, g = lane / 4, t = lane % 4;
  for (uint32_t i = lane; i < 256; i += 32) A[i] = w.a[i];
  for (uint32_t i = lane; i < 128; i += 32) Bt[i] = w.bt[i];
  __syncwarp();
  uint32_t a[4], b[2], p[4];
  // x4: lane l gives row l % 16, k-block l / 16: matrices (rows 0-7, k 0-7), (8-15, 0-7),
  // (0-7, 8-15), (8-15, 8-15) = fragments a0..a3. x2: lanes 0-15 give B^T rows (n) l % 8,
  // k-block (l / 8) % 2 = b0, b1.
  tcg::ldmatrix_x4(a, tcg::smem_addr(A + (lane % 16) * 16 + (lane / 16) * 8));
  tcg::ldmatrix_x2(b, tcg::smem_addr(Bt + (lane % 8) * 16 + ((lane / 8) % 2) * 8));
  tcg::ldmatrix_x4(p, tcg::smem_addr(A + (15 - lane % 16) * 16 + (lane / 16) * 8));
  float c[4], d[4];
  for (uint32_t r = 0; r < 4; ++r) c[r] = w.c[(g + 8 * (r / 2)) * 8 + 2 * t + r % 2];
  tcg::mma_m16n8k16_bf16(d, a, b, c);
  for (uint32_t r = 0; r < 4; ++r) {
    w.a_regs[lane * 4 + r] = a[r];
    w.p_regs[lane * 4 + r] = p[r];
    w.d[lane * 4 + r] = d[r];
  }
  for (uint32_t r = 0; r < 2; ++r) w.b_regs[lane * 2 + r] = b[r];
}
}  // namespace

TEST_CASE("emulator: ldmatrix x4/x2 and mma.sync m16n8k16 fragments (PTX ISA 9.7.14.5.8)") {
  SimOptions opt(7);
  std::vector<uint16_t> A(256), Bt(128);
  std::vector<float> C(128);
  for (uint32_t i = 0; i < 256; ++i) A[i] = bf16(float(small_int(i / 16, i % 16, 51)));
  for (uint32_t i = 0; i < 128; ++i) Bt[i] = bf16(float(small_int(i / 16, i % 16, 52)));
  for (uint32_t i = 0; i < 128; ++i) C[i] = float(small_int(i / 8, i % 8, 53) * 3);
  std::vector<uint32_t> a_regs(128), b_regs(64), p_regs(128);
  std::vector<float> d(128);
  WarpMma w{A.data(), Bt.data(), C.data(), a_regs.data(), b_regs.data(), p_regs.data(), d.data()};
  const std::string err = sim_error([&] {
    tcg::launch_kernel(warp_mma_kernel, tcg::LaunchDims{dim3(1), dim3(32), 1024 + tcg::kSmemAlignSlack}, nullptr, w);
  });
  INFO(err);
  REQUIRE(err.empty());
  auto pair = [](uint16_t lo, uint16_t hi) { return uint32_t(lo) | uint32_t(hi) << 16; };
  size_t bad_a = 0, bad_b = 0, bad_p = 0, bad_d = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t g = l / 4, t = l % 4;
    // A fragment: a[r] holds A[g + 8 (r % 2)][2t + 8 (r / 2)] (low half) and the next column.
    for (uint32_t r = 0; r < 4; ++r) {
      const uint32_t row = g + 8 * (r % 2), col = 2 * t + 8 * (r / 2);
      bad_a += a_regs[l * 4 + r] != pair(A[row * 16 + col], A[row * 16 + col + 1]);
      // Reversed rows: matrix r's row g came from the address of lane 8r + g, which named
      // A row 15 - (8r + g) % 16, k-block (8r + g) / 16.
      const uint32_t src = 8 * r + g, prow = 15 - src % 16, pcol = (src / 16) * 8 + 2 * t;
      bad_p += p_regs[l * 4 + r] != pair(A[prow * 16 + pcol], A[prow * 16 + pcol + 1]);
    }
    // B fragment: b[r] holds B[k = 2t + 8r][n = g] and B[k + 1][g]; B[k][n] = Bt[n][k].
    for (uint32_t r = 0; r < 2; ++r)
      bad_b += b_regs[l * 2 + r] != pair(Bt[g * 16 + 2 * t + 8 * r], Bt[g * 16 + 2 * t + 8 * r + 1]);
    // D fragment: d[r] = D[g + 8 (r / 2)][2t + r % 2], D = A B + C.
    for (uint32_t r = 0; r < 4; ++r) {
      const uint32_t row = g + 8 * (r / 2), col = 2 * t + r % 2;
      double s = C[row * 8 + col];
      for (uint32_t k = 0; k < 16; ++k) s += double(from_bf16(A[row * 16 + k])) * from_bf16(Bt[col * 16 + k]);
      const float expect = float(s);
      bad_d += memcmp(&d[l * 4 + r], &expect, 4) != 0;
    }
  }
  CHECK(bad_a == 0);
  CHECK(bad_p == 0);
  CHECK(bad_b == 0);
  CHECK(bad_d == 0);
}

// ============================================================================ 1-D bulk copy
namespace {
// Thread 0 copies `bytes` from `src` into shared memory with cp.async.bulk and waits; the whole
// CTA then copies the shared bytes out to `out`.
__global__ void bulk_copy_kernel(const uint8_t* src, uint32_t bytes, uint32_t expect, uint32_t dst_off, uint8_t* out) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t bar = base + 8192;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
    tcg::mbarrier_arrive_expect_tx(bar, expect);
    tcg::bulk_load(base + dst_off, src, bytes, bar);
    tcg::mbarrier_wait_parity(bar, 0);
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = smem[dst_off + i];
}

std::string run_bulk(const std::vector<uint8_t>& src, uint32_t bytes, uint32_t expect, uint32_t dst_off,
                     std::vector<uint8_t>& out) {
  const auto reg = registered(src, "src");
  return sim_error([&] {
    tcg::launch_kernel(bulk_copy_kernel, tcg::LaunchDims{dim3(1), dim3(64), 8192 + 64 + tcg::kSmemAlignSlack}, nullptr,
                       src.data(), bytes, expect, dst_off, out.data());
  });
}
}  // namespace

TEST_CASE("emulator: 1-D cp.async.bulk copies bytes and completes the transaction") {
  std::vector<uint8_t> src(4096 + 16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7 + 3);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    CAPTURE(seed);
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 4096, 4096, 0, out);
    INFO(err);
    REQUIRE(err.empty());
    CHECK(std::equal(out.begin(), out.end(), src.begin()));
  }
  SUBCASE("size not a multiple of 16") {
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 40, 40, 0, out);
    CHECK(contains(err, "multiple of 16"));
  }
  SUBCASE("misaligned destination") {
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 64, 64, 8, out);
    CHECK(contains(err, "16-byte aligned"));
  }
  SUBCASE("expect_tx smaller than the copy") {
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 1024, 512, 0, out);
    CHECK(contains(err, "tx-count underflow"));
  }
  SUBCASE("copy over the live mbarrier") {
    std::vector<uint8_t> out(8192 + 64, 0);
    const std::string err = run_bulk(src, 64, 64, 8192 - 32, out);
    CHECK(contains(err, "live mbarrier"));
  }
}

// ============================================================================ tensor maps
TEST_CASE("emulator: tensor-map validation names the parameter and the caller's line") {
  alignas(16) static uint16_t data[64 * 64];
  auto base_map = [] {
    tcg::TiledMap t;
    t.rank = 2;
    t.dtype = tcg::TmaDtype::kBF16;
    t.base = data;
    t.dims[0] = 64;
    t.dims[1] = 64;
    t.strides[0] = 128;
    t.box[0] = 64;
    t.box[1] = 16;
    t.swizzle = tcg::TmaSwizzle::k128B;
    return t;
  };
  CHECK(tcg::validate(base_map()).empty());
  auto error_of = [](const tcg::TiledMap& t) -> std::string {
    try {
      tcg::make_tensor_map(t);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  tcg::TiledMap t = base_map();
  t.box[0] = 128;  // 256 bytes: wider than the 128-byte swizzle span
  std::string err = error_of(t);
  CHECK(contains(err, "boxDim[0]"));
  CHECK(contains(err, "128"));
  CHECK(contains(err, "test_emulator.cpp:"));  // the caller's file:line
  t = base_map();
  t.strides[0] = 120;
  CHECK(contains(error_of(t), "globalStrides[0]"));
  t = base_map();
  t.base = reinterpret_cast<const uint8_t*>(data) + 8;
  CHECK(contains(error_of(t), "globalAddress"));
  t = base_map();
  t.box[1] = 257;
  CHECK(contains(error_of(t), "boxDim[1]"));
  t = base_map();
  t.swizzle = tcg::TmaSwizzle::kNone;
  t.box[0] = 4;  // 8 bytes: the inner box extent must be a multiple of 16 bytes
  CHECK(contains(error_of(t), "multiple of 16 bytes"));
  t = base_map();
  t.dims[1] = 0;
  CHECK(contains(error_of(t), "globalDim[1]"));
}
