// Step 01 — the basic tcgen05 GEMM: TMA, mbarrier, TMEM, shared-memory descriptors,
// tcgen05.mma, tcgen05.ld.
//
// NEW SINCE STEP 00
//   Step 00 had every warp load fragments into registers (ldmatrix) and issue mma.sync. On
//   Blackwell the tensor core reads A and B straight from shared memory and accumulates into
//   Tensor Memory (TMEM), a 128-lane x 512-column x 32-bit scratchpad next to it. One thread
//   issues a whole 128 x 128 x 16 MMA. The pieces, each in ../common/ptx.cuh:
//     * TMA (cp.async.bulk.tensor): one thread copies a whole tile global -> shared;
//     * mbarrier: the TMA reports its bytes to it (tma_full_bar); tcgen05.commit arrives on
//       another (mma_done_bar) when the MMAs have finished;
//     * tcgen05.alloc/dealloc: one warp reserves TMEM columns for the accumulator;
//     * shared-memory descriptors tell the MMA how the tile is laid out (docs/core_matrices.md);
//     * tcgen05.ld moves the accumulator TMEM -> registers for the epilogue.
//
// WHY IT IS (NOT YET) FAST
//   Everything is serial: load a 128x64 A tile and a 128x64 B tile (32 KiB), wait, run 4 MMAs,
//   wait, repeat. The tensor core idles during every load and the TMA idles during every MMA.
//   The no-swizzle layout also forces 16-byte-wide TMA boxes (one core-matrix column), which
//   the TMA engine moves slowly. The published B200 figure for this design (one 3-D TMA box per
//   operand) is ~253 TFLOPS at 4096^3 against ~1507 for cuBLAS (gau-nernst, "tcgen05 for dummies", docs/references.md,
//   "v1b"; not measured here).
//
// DATA LAYOUT (K-major, no swizzle)
//   The MMA consumes 8-row x 16-byte "core matrices", each stored as 128 contiguous bytes. One
//   3-D TMA box {8 elements, 128 rows, 8 k-groups} writes exactly that: k-group j (16 bytes of
//   K) of all 128 rows is a 2 KiB block at j * 2048, row r at r * 16 inside it. So
//     SBO (next 8-row group)           = 8 * 16        = 128 bytes
//     LBO (next core matrix along K)   = BLOCK_M * 16  = 2048 bytes
//   and MMA k-step s (16 elements = 2 k-groups) starts at s * 4096.
//
// CONSTRAINTS
//   Any M, N >= 1 (TMA zero-fills rows past the edge; the epilogue stores only valid elements);
//   K a multiple of 8 (the TMA row pitch K*2 bytes must be a multiple of 16). K need not be a
//   multiple of BLOCK_K: the last k-tile is zero-filled.
//
// RUN
//   make step01 && ./step01            (B200: real kernel; elsewhere: the emulator, 512^3)
//   ./step01 --m 1000 --n 1500 --k 776 --inputs integer
#include "../common/kernel_common.cuh"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;          // = MMA M: one TMEM lane per output row
constexpr int BLOCK_N = 128;          // = MMA N: one TMEM column per output column
constexpr int BLOCK_K = 64;           // elements of K per TMA load (4 MMA k-steps)
constexpr int MMA_K = 16;             // K of one kind::f16 MMA (32 bytes)
constexpr int NUM_THREADS = 128;      // 4 warps: together they reach all 128 TMEM lanes
constexpr uint32_t TMEM_COLS = 128;   // power of two >= BLOCK_N

// Shared memory, offsets from a 1024-byte-aligned base.
constexpr uint32_t A_TILE = 0;                                  // 128 x 64 BF16 = 16 KiB
constexpr uint32_t B_TILE = A_TILE + BLOCK_M * BLOCK_K * 2;     // 128 x 64 BF16 = 16 KiB
constexpr uint32_t TMA_FULL_BAR = B_TILE + BLOCK_N * BLOCK_K * 2;
constexpr uint32_t MMA_DONE_BAR = TMA_FULL_BAR + 8;
constexpr uint32_t TMEM_SLOT = MMA_DONE_BAR + 8;                // tcgen05.alloc writes the address here
constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;

constexpr uint32_t STAGE_BYTES = (BLOCK_M + BLOCK_N) * BLOCK_K * 2;  // what the TMA delivers per k-tile
constexpr uint32_t CORE_COLUMN_A = BLOCK_M * 16;                    // bytes of one 16-byte k-group, all rows
constexpr uint32_t CORE_COLUMN_B = BLOCK_N * 16;
constexpr uint32_t IDESC = make_idesc_bf16_f32(BLOCK_M, BLOCK_N);

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                __nv_bfloat16* c, int m, int n, int k, const __grid_constant__ TraceBuf trace_buf) {
  // Timeline annotations for --trace (docs/tracing.md): free in gemm_kernel<false>, which every
  // launch but the traced one runs. The mainloop runs in one elected thread, so its annotations
  // are the *_elected ones (that thread records them); the others are warp-uniform. A wait span
  // includes the tcgen05 fence that completes the wait's acquire.
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  const uint32_t a_tile = smem_base + A_TILE, b_tile = smem_base + B_TILE;
  const uint32_t tma_full_bar = smem_base + TMA_FULL_BAR, mma_done_bar = smem_base + MMA_DONE_BAR;
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
    mbarrier_init(tma_full_bar, 1);  // one arrival: the thread that posts expect_tx
    mbarrier_init(mma_done_bar, 1);  // one arrival: tcgen05.commit
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  // The mainloop is driven by ONE thread: it loads, waits, issues the MMAs and waits again.
  // The other threads cannot usefully wait on these barriers: their phases repeat every k-tile
  // and try_wait.parity only tells the current phase from the previous one, so a thread that
  // is not in lockstep with the issuer could not know which k-tile a parity refers to.
  const int num_k_tiles = ceil_div(k, BLOCK_K);
  if (warp == 0 && elect_one_sync()) {
    const auto mainloop_span = trace.span_elected(Phase::kMainloop);  // ends with this block
    uint32_t phase = 0;  // both barriers complete once per k-tile, so one parity serves both
    for (int kt = 0; kt < num_k_tiles; ++kt) {
      // 1. Load the A and B tiles. The barrier's phase completes when this thread has arrived
      //    AND the TMA has delivered STAGE_BYTES (zero-filled edges count too).
      mbarrier_arrive_expect_tx(tma_full_bar, STAGE_BYTES);
      tma_load_3d(a_tile, &tmap_a, 0, m0, kt * (BLOCK_K / 8), tma_full_bar);
      tma_load_3d(b_tile, &tmap_b, 0, n0, kt * (BLOCK_K / 8), tma_full_bar);
      mbarrier_wait_parity(tma_full_bar, phase, trace.span_elected(Phase::kWaitTmaFull, 0));
      tcgen05_fence_after_thread_sync();

      // 2. Issue the MMAs, then commit: mma_done_bar fires once they have finished reading
      //    shared memory and writing TMEM.
      for (int s = 0; s < BLOCK_K / MMA_K; ++s) {
        const uint64_t a_desc = make_smem_desc(a_tile + s * 2 * CORE_COLUMN_A, CORE_COLUMN_A, 128, Layout::kNone);
        const uint64_t b_desc = make_smem_desc(b_tile + s * 2 * CORE_COLUMN_B, CORE_COLUMN_B, 128, Layout::kNone);
        mma_bf16_ss(tmem_accum, a_desc, b_desc, IDESC, /*accumulate=*/kt > 0 || s > 0);
      }
      mma_commit(mma_done_bar);

      // 3. Wait for the MMAs before the next TMA may overwrite the tiles.
      mbarrier_wait_parity(mma_done_bar, phase, trace.span_elected(Phase::kWaitMmaDone, 0));
      phase ^= 1;
    }
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

// A 3-D view of a row-major rows x K BF16 matrix whose box is {8 elements, box_rows rows,
// BLOCK_K/8 k-groups}: dimension 2 steps 16 bytes along K, so a box lands in shared memory as
// k-group-major blocks of box_rows x 16 bytes — the no-swizzle core-matrix layout.
static CUtensorMap make_kmajor_core_matrix_map(const __nv_bfloat16* base, int rows, int k, int box_rows) {
  TiledMap t;
  t.rank = 3;
  t.dtype = TmaDtype::kBF16;
  t.base = base;
  t.dims[0] = 8;
  t.dims[1] = uint64_t(rows);
  t.dims[2] = uint64_t(k / 8);
  t.strides[0] = uint64_t(k) * 2;  // next row
  t.strides[1] = 16;               // next k-group
  t.box[0] = 8;
  t.box[1] = uint32_t(box_rows);
  t.box[2] = BLOCK_K / 8;
  t.swizzle = TmaSwizzle::kNone;
  return make_tensor_map(t);
}

constexpr StepSpec spec{1, "basic_tcgen05", "basic tcgen05: TMA + mbarrier + TMEM + tcgen05.mma", Arch::kSm100f, 8};

void launch(const GemmArgs& g) {
  const CUtensorMap tmap_a = make_kmajor_core_matrix_map(g.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_kmajor_core_matrix_map(g.b, g.n, g.k, BLOCK_N);
  LaunchDims d;
  d.grid = dim3(unsigned(ceil_div(g.m, BLOCK_M) * ceil_div(g.n, BLOCK_N)));
  d.block = dim3(NUM_THREADS);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, g.c, g.m, g.n, g.k, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
