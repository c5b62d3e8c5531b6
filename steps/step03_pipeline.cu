// Step 03 — pipelining: a ring of NUM_STAGES shared-memory buffers, one instruction stream.
//
// NEW SINCE STEP 02
//   Step 02 loaded a stage, waited, computed, waited, and only then loaded the next: TMA and
//   tensor core took turns. Now the shared memory holds NUM_STAGES stages. The issuing thread
//   starts loads for the first NUM_STAGES k-tiles up front, and each time the MMAs of a k-tile
//   have finished with their stage it refills that stage with the k-tile NUM_STAGES further on.
//   Each stage has its own pair of barriers: tma_full_bar[s] (the TMA delivered the stage) and
//   mma_done_bar[s] (tcgen05.commit: the MMAs reading the stage have finished).
//
//   The issuing thread waits for the MMAs of the PREVIOUS k-tile, not the current one: the
//   current k-tile's MMAs are already queued on the tensor core while it waits, so the tensor
//   core never runs dry waiting for this thread ("Ampere-style" software pipelining, but the
//   copies are TMA and the MMAs are asynchronous).
//
// WHY IT IS FASTER
//   A stage is 128 x 64 BF16 of A plus 128 x 64 of B = 32 KiB; four stages = 128 KiB, so up to
//   96 KiB of loads are in flight while the tensor core works on the fourth 32 KiB. A k-tile's
//   4 MMAs (128x128x16 each) take the tensor core about as long as its 32 KiB take to arrive
//   at full bandwidth, so with loads three k-tiles ahead the load latency (~1 us) is hidden
//   instead of paid every k-tile. The published B200 figure for this design is ~940 TFLOPS at
//   4096^3 vs ~1507 for cuBLAS (gau-nernst, "tcgen05 for dummies", docs/references.md, "v3"; not measured here).
//
// PHASES
//   k-tile kt uses stage kt % NUM_STAGES for the (kt / NUM_STAGES)-th time, so the barrier
//   phases it waits for have parity (kt / NUM_STAGES) & 1.
//
// CONSTRAINTS
//   Any M, N >= 1; K a multiple of 8 (TMA row pitch). Tiles must be 1024-byte aligned.
//
// RUN
//   make step03 && ./step03            (B200: real kernel; elsewhere: the emulator, 512^3)
#include "../common/kernel_common.cuh"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;          // = MMA M: one TMEM lane per output row
constexpr int BLOCK_N = 128;          // = MMA N: one TMEM column per output column
constexpr int BLOCK_K = 64;           // elements of K per stage: 1 swizzle atom (4 MMA k-steps)
constexpr int NUM_STAGES = 4;         // depth of the shared-memory ring
constexpr int ATOM_K = 64;            // elements of K in one 128-byte swizzled row
constexpr int MMA_K = 16;             // K of one kind::f16 MMA (32 bytes)
constexpr int NUM_THREADS = 128;      // 4 warps: together they reach all 128 TMEM lanes
constexpr uint32_t TMEM_COLS = 128;   // power of two >= BLOCK_N

// Shared memory, offsets from a 1024-byte-aligned base: NUM_STAGES A tiles, NUM_STAGES B tiles,
// then one tma_full_bar and one mma_done_bar per stage.
constexpr uint32_t A_STAGE_BYTES = BLOCK_M * BLOCK_K * 2;       // 128 x 64 BF16 = 16 KiB
constexpr uint32_t B_STAGE_BYTES = BLOCK_N * BLOCK_K * 2;       // 128 x 64 BF16 = 16 KiB
constexpr uint32_t A_TILES = 0;
constexpr uint32_t B_TILES = A_TILES + NUM_STAGES * A_STAGE_BYTES;
constexpr uint32_t TMA_FULL_BARS = B_TILES + NUM_STAGES * B_STAGE_BYTES;
constexpr uint32_t MMA_DONE_BARS = TMA_FULL_BARS + NUM_STAGES * 8;
constexpr uint32_t TMEM_SLOT = MMA_DONE_BARS + NUM_STAGES * 8;  // tcgen05.alloc writes the address here
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
  // Timeline annotations for --trace, as in step 01 (docs/tracing.md); the waits name the stage.
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  auto a_tile = [&](int s) { return smem_base + A_TILES + s * A_STAGE_BYTES; };
  auto b_tile = [&](int s) { return smem_base + B_TILES + s * B_STAGE_BYTES; };
  auto tma_full_bar = [&](int s) { return smem_base + TMA_FULL_BARS + 8 * s; };
  auto mma_done_bar = [&](int s) { return smem_base + MMA_DONE_BARS + 8 * s; };
  const uint32_t tmem_slot = smem_base + TMEM_SLOT;  // where tcgen05.alloc writes the TMEM address

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // One CTA per output tile, numbered along N first; a 1-D grid because gridDim.y stops at
  // 65535 tiles while gridDim.x reaches 2^31 - 1.
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int m0 = int(blockIdx.x) / tiles_n * BLOCK_M, n0 = int(blockIdx.x) % tiles_n * BLOCK_N;

  // Setup: warp 0 allocates the accumulator in TMEM (a warp-wide instruction), one thread of
  // warp 1 initialises the barriers. Both results live in shared memory, so a CTA barrier
  // publishes them; the tcgen05 fences order the allocation with that barrier (§9.7.16.6.4).
  if (warp == 0) {
    tmem_alloc(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit();
  } else if (warp == 1 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);  // one arrival: the thread that posts expect_tx
      mbarrier_init(mma_done_bar(s), 1);  // one arrival: tcgen05.commit
    }
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  // The mainloop is driven by ONE thread: it loads, waits, issues the MMAs and refills stages.
  // The other threads cannot usefully wait on these barriers: their phases repeat and
  // try_wait.parity only tells the current phase from the previous one, so a thread that is
  // not in lockstep with the issuer could not know which k-tile a parity refers to.
  const int num_k_tiles = ceil_div(k, BLOCK_K);
  auto parity = [](int kt) { return uint32_t(kt / NUM_STAGES) & 1; };

  // Load k-tile kt into stage kt % NUM_STAGES. The stage's tma_full_bar phase completes when
  // this thread has arrived AND the TMA has delivered STAGE_BYTES (zero-filled edges count too).
  auto load = [&](int kt) {
    const int s = kt % NUM_STAGES;
    mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES);
    for (int i = 0; i < BLOCK_K / ATOM_K; ++i) {
      tma_load_2d(a_tile(s) + i * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + i * ATOM_K, m0, tma_full_bar(s));
      tma_load_2d(b_tile(s) + i * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + i * ATOM_K, n0, tma_full_bar(s));
    }
  };

  if (warp == 0 && elect_one_sync()) {
    const auto mainloop_span = trace.span_elected(Phase::kMainloop);  // ends with this block
    for (int kt = 0; kt < num_k_tiles && kt < NUM_STAGES; ++kt) load(kt);  // fill the ring
    for (int kt = 0; kt < num_k_tiles; ++kt) {
      const int s = kt % NUM_STAGES;
      mbarrier_wait_parity(tma_full_bar(s), parity(kt), trace.span_elected(Phase::kWaitTmaFull, s));
      tcgen05_fence_after_thread_sync();

      // Issue the MMAs, then commit: mma_done_bar(s) fires once they have finished reading
      // shared memory and writing TMEM.
      for (int i = 0; i < BLOCK_K / ATOM_K; ++i)
        for (int ks = 0; ks < ATOM_K / MMA_K; ++ks) {  // K step ks: +32 bytes inside the 128-byte row
          const uint64_t a_desc = make_smem_desc(a_tile(s) + i * ATOM_COLUMN_A + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          const uint64_t b_desc = make_smem_desc(b_tile(s) + i * ATOM_COLUMN_B + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          mma_bf16_ss(tmem_accum, a_desc, b_desc, IDESC, /*accumulate=*/kt > 0 || i > 0 || ks > 0);
        }
      mma_commit(mma_done_bar(s));

      // Refill the stage the PREVIOUS k-tile used, once its MMAs have finished with it.
      const int prev = kt - 1;
      if (prev >= 0 && prev + NUM_STAGES < num_k_tiles) {
        mbarrier_wait_parity(mma_done_bar(prev % NUM_STAGES), parity(prev),
                             trace.span_elected(Phase::kWaitMmaDone, prev % NUM_STAGES));
        load(prev + NUM_STAGES);
      }
    }
    // Drain: wait for the commits of the stages that were not refilled (the last NUM_STAGES
    // k-tiles). The last one covers every MMA (a commit tracks every earlier tcgen05 operation
    // of this thread, PTX ISA §9.7.16.12.1); waiting for all of them also leaves no commit
    // arrival in flight towards this CTA's barriers when it exits, because the ISA orders each
    // arrival after its own MMAs but not the arrivals of different commits among themselves.
    trace.begin_elected(Phase::kDrain);
    for (int kt = num_k_tiles > NUM_STAGES ? num_k_tiles - NUM_STAGES : 0; kt < num_k_tiles; ++kt)
      mbarrier_wait_parity(mma_done_bar(kt % NUM_STAGES), parity(kt));
    trace.end_elected(Phase::kDrain);
  }
  // The issuer reaches this barrier only after it saw the last MMAs complete. The fences make
  // that observation hold for the threads about to read TMEM (PTX ISA §9.7.16.6.4.3).
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();

  // Epilogue. With M = 128 the accumulator row i sits in TMEM lane i (data-path layout D), and
  // warp w may only read lanes 32w..32w+31, so warp w writes output rows m0 + 32w + lane.
  trace.begin(Phase::kEpilogue);
  const int row = m0 + warp * 32 + lane;
  for (int col = 0; col < BLOCK_N; col += 8) {
    uint32_t r[8];
    tmem_ld_32x32b_x8(tmem_offset(tmem_accum, warp * 32, col), r);
    tmem_wait_ld(r);
    store_c_chunk8(c, m, n, row, n0 + col, r);
  }
  trace.end(Phase::kEpilogue);

  trace.begin(Phase::kTeardown);
  // Every warp must be done reading TMEM before it is freed.
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 0) tmem_dealloc(tmem_accum, TMEM_COLS);
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

constexpr StepSpec spec{3, "pipeline", "pipelining: a NUM_STAGES-deep TMA ring, one instruction stream", Arch::kSm100f, 8};

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
