// Step 02 — 128-byte swizzle: wide TMA boxes and the swizzled K-major layout.
//
// NEW SINCE STEP 01
//   Step 01 loaded each tile as 16-byte-wide columns of core matrices. Here every TMA box is
//   128 bytes (64 BF16) wide along K, with CU_TENSOR_MAP_SWIZZLE_128B, and the descriptors say
//   "128B swizzle" (layout type 2). Three things change, all visible in the diff:
//     * tensor maps: 2-D {K, rows}, box {64, BLOCK}, swizzle 128B (make_kmajor_sw128_map);
//     * one stage holds BLOCK_K / 64 = 2 "atom columns" per operand, each BLOCK_rows x 128 B,
//       placed BLOCK_rows * 128 bytes apart — one TMA per atom column;
//     * descriptors: SBO = 1024 (eight 128-byte rows = one 8-row group), LBO unused, and the
//       MMA's K step advances the start address by 32 bytes INSIDE the 128-byte row.
//
// WHY THE +32 BYTES WORK (docs/core_matrices.md has the picture)
//   In a 1024-byte-aligned atom of 8 rows x 128 B, TMA stores logical 16-byte chunk c of row r
//   at chunk c ^ r (the swizzle XORs address bits [4,7) with bits [7,10)). The MMA applies the
//   same XOR to the addresses it generates: for K step j it forms start + 32j + 16h + 128r
//   (h = 0, 1), whose bits [7,10) are still r, so it reads chunk (2j + h) ^ r — exactly where
//   TMA put logical chunk 2j + h. That requires the atom to start on a 1024-byte boundary.
//
// WHY IT IS FASTER
//   Same serial schedule as step 01, but the TMA now moves 128-byte rows instead of 16-byte
//   pieces, and a stage is twice as deep (BLOCK_K = 128: 64 KiB per stage, 8 MMAs per wait
//   instead of 4), so the fixed cost of each load/wait round trip is paid half as often. The
//   published B200 figure for this design (2-D 128-byte boxes) is ~681 TFLOPS at 4096^3 vs
//   ~1507 for cuBLAS (gau-nernst, "tcgen05 for dummies", docs/references.md, "v2a"; not measured here).
//
// CONSTRAINTS
//   Any M, N >= 1; K a multiple of 8 (TMA row pitch). Tiles must be 1024-byte aligned.
//
// RUN
//   make step02 && ./step02            (B200: real kernel; elsewhere: the emulator, 512^3)
#include "../common/kernel_common.cuh"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;          // = MMA M: one TMEM lane per output row
constexpr int BLOCK_N = 128;          // = MMA N: one TMEM column per output column
constexpr int BLOCK_K = 128;          // elements of K per stage: 2 swizzle atoms (8 MMA k-steps)
constexpr int ATOM_K = 64;            // elements of K in one 128-byte swizzled row
constexpr int MMA_K = 16;             // K of one kind::f16 MMA (32 bytes)
constexpr int NUM_THREADS = 128;      // 4 warps: together they reach all 128 TMEM lanes
constexpr uint32_t TMEM_COLS = 128;   // power of two >= BLOCK_N

// Shared memory, offsets from a 1024-byte-aligned base.
constexpr uint32_t A_TILE = 0;                                  // 128 x 128 BF16 = 32 KiB
constexpr uint32_t B_TILE = A_TILE + BLOCK_M * BLOCK_K * 2;     // 128 x 128 BF16 = 32 KiB
constexpr uint32_t TMA_FULL_BAR = B_TILE + BLOCK_N * BLOCK_K * 2;
constexpr uint32_t MMA_DONE_BAR = TMA_FULL_BAR + 8;
constexpr uint32_t TMEM_SLOT = MMA_DONE_BAR + 8;                // tcgen05.alloc writes the address here
constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;

constexpr uint32_t STAGE_BYTES = (BLOCK_M + BLOCK_N) * BLOCK_K * 2;  // what the TMA delivers per k-tile
constexpr uint32_t ATOM_COLUMN_A = BLOCK_M * 128;                   // bytes of one 128-byte-wide atom column
constexpr uint32_t ATOM_COLUMN_B = BLOCK_N * 128;
constexpr uint32_t SBO_SW128 = 8 * 128;                             // next 8-row group
static_assert(A_TILE % 1024 == 0 && B_TILE % 1024 == 0, "128B-swizzled tiles must be 1024-byte aligned");
constexpr uint32_t IDESC = make_idesc_bf16_f32(BLOCK_M, BLOCK_N);

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                __nv_bfloat16* c, int m, int n, int k, const __grid_constant__ TraceBuf trace_buf) {
  // Timeline annotations for --trace, as in step 01 (docs/tracing.md).
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
      for (int i = 0; i < BLOCK_K / ATOM_K; ++i) {
        tma_load_2d(a_tile + i * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + i * ATOM_K, m0, tma_full_bar);
        tma_load_2d(b_tile + i * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + i * ATOM_K, n0, tma_full_bar);
      }
      mbarrier_wait_parity(tma_full_bar, phase, trace.span_elected(Phase::kWaitTmaFull, 0));
      tcgen05_fence_after_thread_sync();

      // 2. Issue the MMAs, then commit: mma_done_bar fires once they have finished reading
      //    shared memory and writing TMEM.
      for (int i = 0; i < BLOCK_K / ATOM_K; ++i)
        for (int s = 0; s < ATOM_K / MMA_K; ++s) {  // K step s: +32 bytes inside the 128-byte row
          const uint64_t a_desc = make_smem_desc(a_tile + i * ATOM_COLUMN_A + s * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          const uint64_t b_desc = make_smem_desc(b_tile + i * ATOM_COLUMN_B + s * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          mma_bf16_ss(tmem_accum, a_desc, b_desc, IDESC, /*accumulate=*/kt > 0 || i > 0 || s > 0);
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

constexpr StepSpec spec{2, "swizzle128", "128-byte swizzle: 128-byte TMA boxes, SW128 descriptors", Arch::kSm100f, 8};

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
