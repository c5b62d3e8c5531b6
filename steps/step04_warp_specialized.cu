// Step 04 — warp specialization: a TMA warp, an MMA warp and four epilogue warps.
//
// NEW SINCE STEP 03
//   In step 03 one thread did everything in one instruction stream, so a wait for the TMA held
//   up the next MMA issue and vice versa. Here each job gets its own warp and its own loop:
//     warp 0      producer: waits until a stage is empty, posts expect_tx, issues the TMA;
//     warp 1      MMA: allocates TMEM, waits until a stage is full, issues its MMAs, commits
//                 to the stage's empty barrier (mma_done_bar) so the producer may refill it;
//                 after the last k-tile it commits once more, to mainloop_done_bar;
//     warps 2..5  epilogue: wait for mainloop_done_bar, then TMEM -> registers -> global.
//   Producer and consumer keep separate phase variables. The producer starts on the opposite
//   parity (1): a fresh mbarrier counts its not-yet-existing previous phase as complete, so the
//   producer's first pass over the ring does not wait for empty stages that were never full.
//   The epilogue cannot tell "mainloop finished" from the reused per-stage barriers (their
//   phases repeat), hence the extra mainloop_done_bar, committed after the last MMA.
//
// WHY IT IS FASTER
//   Neither engine waits for the other's issuing thread: the MMA warp has the next stage's MMAs
//   queued as soon as its data lands, and the producer refills a stage the moment the MMAs that
//   read it retire. The bigger N tile halves the A traffic per FLOP: a k-tile is now
//   (128 + 256) x 64 BF16 = 48 KiB for 2 x 128 x 256 x 64 = 4.2 MFLOP, i.e. 85 FLOP per byte
//   the TMA writes to shared memory, vs 64 with BLOCK_N = 128.
//
// SHARED-MEMORY ARITHMETIC (why BLOCK_N = 256 and 4 stages)
//   One stage = 128 x 64 x 2 B (A) + 256 x 64 x 2 B (B) = 16 KiB + 32 KiB = 48 KiB.
//   4 stages = 192 KiB; + barriers + 1 KiB alignment slack = ~193 KiB <= 227 KiB (sm_100).
//   A 5th stage would need 240 KiB: too much. TMEM: 256 FP32 columns for the accumulator.
//   The published B200 figure for this design is ~1209 TFLOPS at 4096^3 vs ~1507 for cuBLAS
//   (gau-nernst, "tcgen05 for dummies", docs/references.md, "v4"; not measured here).
//
// CONSTRAINTS
//   Any M, N >= 1; K a multiple of 8 (TMA row pitch). Tiles must be 1024-byte aligned.
//
// RUN
//   make step04 && ./step04            (B200: real kernel; elsewhere: the emulator, 512^3)
#include "../common/kernel_common.cuh"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;          // = MMA M: one TMEM lane per output row
constexpr int BLOCK_N = 256;          // = MMA N: one TMEM column per output column
constexpr int BLOCK_K = 64;           // elements of K per stage: 1 swizzle atom (4 MMA k-steps)
constexpr int NUM_STAGES = 4;         // depth of the shared-memory ring
constexpr int ATOM_K = 64;            // elements of K in one 128-byte swizzled row
constexpr int MMA_K = 16;             // K of one kind::f16 MMA (32 bytes)
constexpr int NUM_THREADS = 192;      // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue
constexpr uint32_t TMEM_COLS = 256;   // power of two >= BLOCK_N

// Shared memory, offsets from a 1024-byte-aligned base: NUM_STAGES A tiles, NUM_STAGES B tiles,
// one tma_full_bar ("stage full") and one mma_done_bar ("stage empty") per stage, and
// mainloop_done_bar.
constexpr uint32_t A_STAGE_BYTES = BLOCK_M * BLOCK_K * 2;       // 128 x 64 BF16 = 16 KiB
constexpr uint32_t B_STAGE_BYTES = BLOCK_N * BLOCK_K * 2;       // 256 x 64 BF16 = 32 KiB
constexpr uint32_t A_TILES = 0;
constexpr uint32_t B_TILES = A_TILES + NUM_STAGES * A_STAGE_BYTES;
constexpr uint32_t TMA_FULL_BARS = B_TILES + NUM_STAGES * B_STAGE_BYTES;
constexpr uint32_t MMA_DONE_BARS = TMA_FULL_BARS + NUM_STAGES * 8;
constexpr uint32_t MAINLOOP_DONE_BAR = MMA_DONE_BARS + NUM_STAGES * 8;
constexpr uint32_t TMEM_SLOT = MAINLOOP_DONE_BAR + 8;           // tcgen05.alloc writes the address here
constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;

constexpr uint32_t STAGE_BYTES = (BLOCK_M + BLOCK_N) * BLOCK_K * 2;  // what the TMA delivers per k-tile
constexpr uint32_t ATOM_COLUMN_A = BLOCK_M * 128;                   // bytes of one 128-byte-wide atom column
constexpr uint32_t ATOM_COLUMN_B = BLOCK_N * 128;
constexpr uint32_t SBO_SW128 = 8 * 128;                             // next 8-row group
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0, "128B-swizzled tiles must be 1024-byte aligned");
static_assert(SMEM_BYTES + kSmemAlignSlack <= 232448, "exceeds the sm_100 shared-memory limit");
constexpr uint32_t IDESC = make_idesc_bf16_f32(BLOCK_M, BLOCK_N);

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                __nv_bfloat16* c, int m, int n, int k, const __grid_constant__ TraceBuf trace_buf) {
  // Timeline annotations for --trace (docs/tracing.md), free in gemm_kernel<false>. Each role
  // gets its coarse phase: "producer" and "mma" inside the elected thread that runs them (the
  // *_elected annotations), "epilogue" for the warp-uniform epilogue warps; the waits name the
  // barrier and the stage.
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  auto a_tile = [&](int s) { return smem_base + A_TILES + s * A_STAGE_BYTES; };
  auto b_tile = [&](int s) { return smem_base + B_TILES + s * B_STAGE_BYTES; };
  auto tma_full_bar = [&](int s) { return smem_base + TMA_FULL_BARS + 8 * s; };
  auto mma_done_bar = [&](int s) { return smem_base + MMA_DONE_BARS + 8 * s; };
  const uint32_t mainloop_done_bar = smem_base + MAINLOOP_DONE_BAR;
  const uint32_t tmem_slot = smem_base + TMEM_SLOT;  // where tcgen05.alloc writes the TMEM address

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // One CTA per output tile, numbered along N first; a 1-D grid because gridDim.y stops at
  // 65535 tiles while gridDim.x reaches 2^31 - 1.
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int m0 = int(blockIdx.x) / tiles_n * BLOCK_M, n0 = int(blockIdx.x) % tiles_n * BLOCK_N;

  // Setup: the MMA warp allocates the accumulator in TMEM (a warp-wide instruction), one thread
  // of the producer warp initialises the barriers. Both results live in shared memory, so a CTA
  // barrier publishes them; the tcgen05 fences order the allocation with that barrier
  // (§9.7.16.6.4).
  if (warp == 1) {
    tmem_alloc(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit();
  } else if (warp == 0 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);  // one arrival: the producer's expect_tx
      mbarrier_init(mma_done_bar(s), 1);  // one arrival: the MMA warp's tcgen05.commit
    }
    mbarrier_init(mainloop_done_bar, 1);  // one arrival: the final tcgen05.commit
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  const int num_k_tiles = ceil_div(k, BLOCK_K);

  if (warp == 0) {
    // ---------------------------------------------------------------- producer (TMA) warp
    if (elect_one_sync()) {
      const auto producer_span = trace.span_elected(Phase::kProducer);  // ends with this block
      uint32_t empty_parity = 1;  // opposite parity: the first pass over the ring does not wait
      for (int kt = 0; kt < num_k_tiles; ++kt) {
        const int s = kt % NUM_STAGES;
        // The MMAs that read stage s are done.
        mbarrier_wait_parity(mma_done_bar(s), empty_parity, trace.span_elected(Phase::kWaitMmaDone, s));
        mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES);
        for (int i = 0; i < BLOCK_K / ATOM_K; ++i) {
          tma_load_2d(a_tile(s) + i * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + i * ATOM_K, m0, tma_full_bar(s));
          tma_load_2d(b_tile(s) + i * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + i * ATOM_K, n0, tma_full_bar(s));
        }
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      // Drain: wait until the MMAs have released every stage, as if loading NUM_STAGES more
      // k-tiles. Nothing else waits for the last stages' commit arrivals, and the ISA does not
      // order them before the final commit's, so without this one could still be in flight
      // towards this CTA's barriers when it exits.
      trace.begin_elected(Phase::kDrain);
      for (int kt = num_k_tiles; kt < num_k_tiles + NUM_STAGES; ++kt) {
        const int s = kt % NUM_STAGES;
        mbarrier_wait_parity(mma_done_bar(s), empty_parity);
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      trace.end_elected(Phase::kDrain);
    }
  } else if (warp == 1) {
    // ---------------------------------------------------------------- MMA warp
    if (elect_one_sync()) {
      const auto mma_span = trace.span_elected(Phase::kMma);  // ends with this block
      uint32_t full_parity = 0;
      for (int kt = 0; kt < num_k_tiles; ++kt) {
        const int s = kt % NUM_STAGES;
        // The TMA has delivered stage s.
        mbarrier_wait_parity(tma_full_bar(s), full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
        tcgen05_fence_after_thread_sync();
        for (int i = 0; i < BLOCK_K / ATOM_K; ++i)
          for (int ks = 0; ks < ATOM_K / MMA_K; ++ks) {  // K step ks: +32 bytes inside the 128-byte row
            const uint64_t a_desc = make_smem_desc(a_tile(s) + i * ATOM_COLUMN_A + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            const uint64_t b_desc = make_smem_desc(b_tile(s) + i * ATOM_COLUMN_B + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            mma_bf16_ss(tmem_accum, a_desc, b_desc, IDESC, /*accumulate=*/kt > 0 || i > 0 || ks > 0);
          }
        mma_commit(mma_done_bar(s));  // stage s is empty once these MMAs have read it
        if (s == NUM_STAGES - 1) full_parity ^= 1;
      }
      mma_commit(mainloop_done_bar);  // tracks every earlier MMA of this thread (§9.7.16.12.1)
    }
  } else {
    // ---------------------------------------------------------------- epilogue warps 2..5
    const auto epilogue_span = trace.span(Phase::kEpilogue);  // ends with this block
    mbarrier_wait_parity(mainloop_done_bar, 0, trace.span(Phase::kWaitMainloopDone));
    tcgen05_fence_after_thread_sync();
    // With M = 128 the accumulator row i sits in TMEM lane i (data-path layout D), and warp w may
    // only read lanes 32*(w%4)..+31: warps 2, 3, 4, 5 take lane quarters 2, 3, 0, 1.
    const int quarter = warp % 4;
    const int row = m0 + quarter * 32 + lane;
    for (int col = 0; col < BLOCK_N; col += 16) {
      uint32_t r[16];
      tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
      tmem_wait_ld(r);
      store_c_chunk8(c, m, n, row, n0 + col, r);
      store_c_chunk8(c, m, n, row, n0 + col + 8, r + 8);
    }
  }

  trace.begin(Phase::kTeardown);
  // Every warp must be done reading TMEM before it is freed.
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc(tmem_accum, TMEM_COLS);
  trace.end(Phase::kTeardown);
}

// A 2-D view of a row-major rows x K BF16 matrix whose box is one 128B-swizzled atom column:
// 64 elements (128 bytes) of K by box_rows rows. TMA applies the 128B swizzle as it writes.
static CUtensorMap make_kmajor_sw128_map(const __nv_bfloat16* base, int rows, int k, int box_rows) {
  TiledMap t;
  t.rank = 2;
  t.dtype = TmaDtype::kBF16;
  t.base = base;
  t.dims[0] = uint64_t(k);
  t.dims[1] = uint64_t(rows);
  t.strides[0] = uint64_t(k) * 2;  // next row
  t.box[0] = ATOM_K;
  t.box[1] = uint32_t(box_rows);
  t.swizzle = TmaSwizzle::k128B;
  return make_tensor_map(t);
}

constexpr StepSpec spec{4, "warp_specialized", "warp specialization: TMA warp, MMA warp, 4 epilogue warps", Arch::kSm100f, 8};

void launch(const GemmArgs& g) {
  const CUtensorMap tmap_a = make_kmajor_sw128_map(g.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_kmajor_sw128_map(g.b, g.n, g.k, BLOCK_N);
  LaunchDims d;
  d.grid = dim3(unsigned(ceil_div(g.m, BLOCK_M) * ceil_div(g.n, BLOCK_N)));
  d.block = dim3(NUM_THREADS);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, g.c, g.m, g.n, g.k, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
