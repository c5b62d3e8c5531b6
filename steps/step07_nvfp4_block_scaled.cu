// Step 07 — NVFP4: block-scaled FP4 operands (kind::mxf4nvf4), FP16 output.
//
// NEW SINCE STEP 04
//   The warps and the ring are step 04's (warp 0 TMA producer, warp 1 MMA issuer owning TMEM,
//   warps 2..5 epilogue); what changes is what flows through them:
//   * A and B are E2M1 (4-bit) values packed two per byte, K-major. The tensor maps see bytes:
//     UINT8 dims {K/2, rows}, box {128 B, 128 rows}, SWIZZLE_128B, so one box row holds 256 FP4
//     values of K. A k-tile (BLOCK_K = 256 elements) is exactly one 128-byte swizzle atom column,
//     and the 4 MMAs of a stage (K = 64 each, 32 bytes) step +32 bytes inside the 128-byte row,
//     the same +32 as step 04's BF16 K = 16 steps.
//   * Every 16 consecutive K elements of a row share one UE4M3 scale. The scales come in the
//     128x4 "blocked" layout (common/nvfp4_layout.h): one 512-byte atom holds the 4 scales (64 K
//     elements = one MMA) of 128 rows, and the atoms of one 128-row block run K-first, so the
//     scales of a stage's 4 k-steps for the tile's 128 rows are 4 consecutive atoms = 2 KiB of
//     contiguous global memory. The producer fetches them with one 1-D bulk copy per operand,
//     on the same tma_full_bar as the tiles (expect_tx counts them).
//   * The MMA reads scales from TMEM, not shared memory. After the full-barrier wait the MMA
//     thread copies each atom to TMEM with tcgen05.cp.32x128b.warpx4 (32 lines of 16 bytes,
//     replicated to the four lane quarters: row r's 4 scales land in lane r%32, column (r/32)),
//     then issues the MMA with the two TMEM scale addresses. cp and MMA of one thread are
//     executed in issue order (PTX ISA §9.7.16.6.2, "cp -> mma"), so no fence sits between them.
//     Each stage has its own TMEM scale columns, so a copy for stage s+1 never overwrites scales
//     that a still-running MMA of stage s reads.
//   * The accumulator is FP32 as before; the epilogue rounds to FP16 (__float2half_rn).
//
// WHY
//   NVFP4 halves the bytes per element again relative to FP8 (4.5 bits per element with the
//   scales) and doubles the tensor-core rate relative to FP8: B200 dense FP4 is 9 PFLOPS vs
//   2.25 for BF16 (published HGX B200 spec, collected at glennklockwood.com/garden/processors/B200;
//   docs/references.md).
//
// SHARED-MEMORY ARITHMETIC (BLOCK_N = 128, 6 stages)
//   One stage = A 128 rows x 128 B (16 KiB) + B 128 x 128 B (16 KiB) + SFA 4 atoms (2 KiB)
//   + SFB 4 atoms (2 KiB) = 36 KiB, for 2 x 128 x 128 x 256 = 8.4 MFLOP: 228 FLOP per byte.
//   6 stages = 216 KiB; + 13 barriers + the TMEM slot + 1 KiB alignment slack = 217.1 KiB
//   <= 227 KiB (sm_100). A 7th stage would need 253 KiB.
//   TMEM: 128 FP32 accumulator columns + per stage 16 SFA columns (4 k-steps x 4) + 16 SFB
//   columns (4 k-steps x BLOCK_N/32) = 128 + 6 x 32 = 320 -> allocate 512.
//
// WHY BLOCK_N = 128 AND WHAT BOUNDS THE COMPETITION SHAPES
//   The competition shapes have M = 128 and large N, K, e.g. 128 x 7168 x 16384 with FP16 C.
//   Bytes: A 1.0 MiB + B 56 MiB + SFA 0.125 MiB + SFB 7 MiB + C 1.75 MiB = 69.1 MB; at the
//   published 8 TB/s HBM3e that is 8.6 us. FLOPs: 2 x 128 x 7168 x 16384 = 30.1 GFLOP; at the
//   published 9 PFLOPS dense FP4 that is 3.3 us. So the shape is memory-bound (about 435 FLOP per
//   byte against a ridge of 9e15 / 8e12 = 1125), and with M = 128 there is only one row of
//   tiles: the grid is N / BLOCK_N CTAs. BLOCK_N = 128 gives 56 CTAs streaming B for
//   128 x 7168 (256 would give 28 of 148 SMs); spreading K over more CTAs is a later step.
//   (Published figures, not measured here.)
//
// CONSTRAINTS
//   Any M, N >= 1; K a multiple of 64. K % 16 would do for the scale blocks and K % 32 for the TMA
//   row pitch (K/2 bytes, a multiple of 16), but one MMA consumes K = 64 and one scale atom
//   covers exactly 64 elements of K: a tail of 16..48 would need a masked MMA. The last k-tile
//   may hold 1..4 MMA k-steps; the TMA zero-fills past K, and only the scale atoms that exist are
//   loaded and used.
//
// RUN
//   make step07 && ./step07            (B200: real kernel; elsewhere: the emulator)
#include "../common/kernel_common.cuh"
#include "../common/nvfp4_layout.h"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;           // = MMA M: one TMEM lane per output row
constexpr int BLOCK_N = 128;           // = MMA N: one TMEM column per output column
constexpr int BLOCK_K = 256;           // FP4 elements of K per stage: one 128-byte swizzle atom row
constexpr int MMA_K = int(kMxf4K);     // K of one kind::mxf4nvf4 MMA: 64 elements = 32 bytes
constexpr int KSTEPS = BLOCK_K / MMA_K;  // 4 MMAs per stage
constexpr int NUM_STAGES = 6;
constexpr int NUM_THREADS = 192;       // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue
constexpr uint32_t TMEM_COLS = 512;    // power of two >= accumulator + scale columns

// Scale factors per stage: one 512-byte atom per 128 rows per k-step.
constexpr uint32_t SFA_ATOMS_PER_KSTEP = BLOCK_M / kSfAtomRows;  // 1
constexpr uint32_t SFB_ATOMS_PER_KSTEP = BLOCK_N / kSfAtomRows;  // 1
constexpr uint32_t SFA_STAGE_BYTES = KSTEPS * SFA_ATOMS_PER_KSTEP * kSfAtomBytes;  // 2 KiB
constexpr uint32_t SFB_STAGE_BYTES = KSTEPS * SFB_ATOMS_PER_KSTEP * kSfAtomBytes;  // 2 KiB

// TMEM columns: accumulator at 0..BLOCK_N-1, then per stage SFA (M/32 columns per k-step) and
// SFB (N/32 columns per k-step), the layout tcgen05.cp.32x128b.warpx4 writes (CUTLASS tmem_sf_frg in cute/atom/mma_traits_sm100_frag.hpp).
constexpr uint32_t SFA_COLS_PER_KSTEP = BLOCK_M / 32;  // 4
constexpr uint32_t SFB_COLS_PER_KSTEP = BLOCK_N / 32;  // 4
constexpr uint32_t SF_TMEM_STAGE_COLS = KSTEPS * (SFA_COLS_PER_KSTEP + SFB_COLS_PER_KSTEP);  // 32
constexpr uint32_t SF_TMEM_BASE = BLOCK_N;
static_assert(SF_TMEM_BASE + NUM_STAGES * SF_TMEM_STAGE_COLS <= TMEM_COLS, "TMEM columns");

// Shared memory, offsets from a 1024-byte-aligned base.
constexpr uint32_t A_STAGE_BYTES = BLOCK_M * BLOCK_K / 2;  // 128 x 128 B = 16 KiB
constexpr uint32_t B_STAGE_BYTES = BLOCK_N * BLOCK_K / 2;  // 128 x 128 B = 16 KiB
constexpr uint32_t A_TILES = 0;
constexpr uint32_t B_TILES = A_TILES + NUM_STAGES * A_STAGE_BYTES;
constexpr uint32_t SFA_TILES = B_TILES + NUM_STAGES * B_STAGE_BYTES;
constexpr uint32_t SFB_TILES = SFA_TILES + NUM_STAGES * SFA_STAGE_BYTES;
constexpr uint32_t TMA_FULL_BARS = SFB_TILES + NUM_STAGES * SFB_STAGE_BYTES;
constexpr uint32_t MMA_DONE_BARS = TMA_FULL_BARS + NUM_STAGES * 8;
constexpr uint32_t MAINLOOP_DONE_BAR = MMA_DONE_BARS + NUM_STAGES * 8;
constexpr uint32_t TMEM_SLOT = MAINLOOP_DONE_BAR + 8;
constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;

constexpr uint32_t AB_STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;  // full boxes, even past K
constexpr uint32_t SBO_SW128 = 8 * 128;      // next 8-row group of a 128B-swizzled tile
constexpr uint32_t SBO_SF = 128;             // scale atom: 8 lines of 16 B per core matrix
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0, "128B-swizzled tiles must be 1024-byte aligned");
static_assert(SMEM_BYTES + kSmemAlignSlack <= 232448, "exceeds the sm_100 shared-memory limit");
static_assert(is_valid_mxf4_shape_cta1(BLOCK_M, BLOCK_N), "invalid kind::mxf4nvf4 shape");
constexpr uint32_t IDESC = make_idesc_mxf4nvf4(BLOCK_M, BLOCK_N);  // E2M1 x E2M1, UE4M3 scales

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &h, 4);
  return u;
}

// Converts 8 FP32 accumulators (raw bits) for C[row][col .. col+7] to FP16 and stores those inside
// the m x n matrix: one 16-byte store when the chunk is inside and 16-byte aligned (C 16-byte
// aligned and n % 8 == 0), element by element otherwise.
__device__ __forceinline__ void store_c_chunk8_f16(__half* c, int m, int n, int row, int col,
                                                   const uint32_t* r TCG_LOC) {
  if (row >= m || col >= n) return;
  __half* out = c + size_t(row) * n + col;
  if (n % 8 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0 && col + 8 <= n) {
    store_16B(out, make_uint4(pack_half2(u32_as_float(r[0]), u32_as_float(r[1])),
                              pack_half2(u32_as_float(r[2]), u32_as_float(r[3])),
                              pack_half2(u32_as_float(r[4]), u32_as_float(r[5])),
                              pack_half2(u32_as_float(r[6]), u32_as_float(r[7])))
#if defined(TCG_SIM)
                  , tcg_file, tcg_line
#endif
    );
  } else {
    for (int i = 0; i < 8 && col + i < n; ++i) out[i] = __float2half_rn(u32_as_float(r[i]));
  }
}

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                const uint8_t* sfa, const uint8_t* sfb, __half* c, int m, int n, int k,
                const __grid_constant__ TraceBuf trace_buf) {
  // Timeline annotations for --trace, as in step 04 (docs/tracing.md).
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  auto a_tile = [&](int s) { return smem_base + A_TILES + s * A_STAGE_BYTES; };
  auto b_tile = [&](int s) { return smem_base + B_TILES + s * B_STAGE_BYTES; };
  auto sfa_tile = [&](int s) { return smem_base + SFA_TILES + s * SFA_STAGE_BYTES; };
  auto sfb_tile = [&](int s) { return smem_base + SFB_TILES + s * SFB_STAGE_BYTES; };
  auto tma_full_bar = [&](int s) { return smem_base + TMA_FULL_BARS + 8 * s; };
  auto mma_done_bar = [&](int s) { return smem_base + MMA_DONE_BARS + 8 * s; };
  const uint32_t mainloop_done_bar = smem_base + MAINLOOP_DONE_BAR;
  const uint32_t tmem_slot = smem_base + TMEM_SLOT;  // where tcgen05.alloc writes the TMEM address

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int m0 = int(blockIdx.x) / tiles_n * BLOCK_M, n0 = int(blockIdx.x) % tiles_n * BLOCK_N;

  if (warp == 1) {
    tmem_alloc(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit();
  } else if (warp == 0 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);  // one arrival: the producer's expect_tx
      mbarrier_init(mma_done_bar(s), 1);  // one arrival: the MMA warp's tcgen05.commit
    }
    mbarrier_init(mainloop_done_bar, 1);
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  const int num_ksteps = k / MMA_K;                  // K % 64 == 0
  const int num_k_tiles = ceil_div(num_ksteps, KSTEPS);
  // k-steps of k-tile kt: KSTEPS except possibly in the last one.
  auto ksteps_of = [&](int kt) { const int left = num_ksteps - kt * KSTEPS; return left < KSTEPS ? left : KSTEPS; };

  if (warp == 0) {
    // ---------------------------------------------------------------- producer (TMA) warp
    if (elect_one_sync()) {
      const auto producer_span = trace.span_elected(Phase::kProducer);  // ends with this block
      // This tile's scale atoms: row block m0/128 (n0/128), atoms K-first, so the atoms of
      // k-steps kt*4 .. kt*4+3 are consecutive 512-byte blocks.
      const uint32_t sfa_row_block = uint32_t(m0) / kSfAtomRows, sfb_row_block = uint32_t(n0) / kSfAtomRows;
      uint32_t empty_parity = 1;
      for (int kt = 0; kt < num_k_tiles; ++kt) {
        const int s = kt % NUM_STAGES;
        const uint32_t sf_bytes_a = ksteps_of(kt) * SFA_ATOMS_PER_KSTEP * kSfAtomBytes;
        const uint32_t sf_bytes_b = ksteps_of(kt) * SFB_ATOMS_PER_KSTEP * kSfAtomBytes;
        mbarrier_wait_parity(mma_done_bar(s), empty_parity, trace.span_elected(Phase::kWaitMmaDone, s));
        mbarrier_arrive_expect_tx(tma_full_bar(s), AB_STAGE_BYTES + sf_bytes_a + sf_bytes_b);
        tma_load_2d(a_tile(s), &tmap_a, kt * BLOCK_K / 2, m0, tma_full_bar(s));
        tma_load_2d(b_tile(s), &tmap_b, kt * BLOCK_K / 2, n0, tma_full_bar(s));
        bulk_load(sfa_tile(s), sfa + sf_atom_offset(sfa_row_block, uint32_t(kt * KSTEPS), uint32_t(k)), sf_bytes_a,
                  tma_full_bar(s));
        bulk_load(sfb_tile(s), sfb + sf_atom_offset(sfb_row_block, uint32_t(kt * KSTEPS), uint32_t(k)), sf_bytes_b,
                  tma_full_bar(s));
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      // Drain, as in step 04: wait until the MMAs have released every stage.
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
        mbarrier_wait_parity(tma_full_bar(s), full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
        tcgen05_fence_after_thread_sync();
        const uint32_t sf_cols = SF_TMEM_BASE + s * SF_TMEM_STAGE_COLS;
        for (int ks = 0; ks < ksteps_of(kt); ++ks) {
          // Scales of k-step ks: one atom per 128 rows -> 4 TMEM columns, lanes 0..127.
          const uint32_t sfa_tmem = tmem_offset(tmem_accum, 0, sf_cols + ks * SFA_COLS_PER_KSTEP);
          const uint32_t sfb_tmem =
              tmem_offset(tmem_accum, 0, sf_cols + KSTEPS * SFA_COLS_PER_KSTEP + ks * SFB_COLS_PER_KSTEP);
          for (uint32_t i = 0; i < SFA_ATOMS_PER_KSTEP; ++i)
            tcgen05_cp_32x128b_warpx4(
                tmem_offset(sfa_tmem, 0, 4 * i),
                make_smem_desc(sfa_tile(s) + (ks * SFA_ATOMS_PER_KSTEP + i) * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
          for (uint32_t i = 0; i < SFB_ATOMS_PER_KSTEP; ++i)
            tcgen05_cp_32x128b_warpx4(
                tmem_offset(sfb_tmem, 0, 4 * i),
                make_smem_desc(sfb_tile(s) + (ks * SFB_ATOMS_PER_KSTEP + i) * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
          // K step ks: +32 bytes (64 FP4) inside the 128-byte swizzled row.
          const uint64_t a_desc = make_smem_desc(a_tile(s) + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          const uint64_t b_desc = make_smem_desc(b_tile(s) + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          mma_mxf4nvf4_block16_ss(tmem_accum, a_desc, b_desc, IDESC, sfa_tmem, sfb_tmem,
                                  /*accumulate=*/kt > 0 || ks > 0);
        }
        mma_commit(mma_done_bar(s));  // stage s (smem and its TMEM scale columns) is free again
        if (s == NUM_STAGES - 1) full_parity ^= 1;
      }
      mma_commit(mainloop_done_bar);
    }
  } else {
    // ---------------------------------------------------------------- epilogue warps 2..5
    const auto epilogue_span = trace.span(Phase::kEpilogue);  // ends with this block
    mbarrier_wait_parity(mainloop_done_bar, 0, trace.span(Phase::kWaitMainloopDone));
    tcgen05_fence_after_thread_sync();
    const int quarter = warp % 4;
    const int row = m0 + quarter * 32 + lane;
    for (int col = 0; col < BLOCK_N; col += 16) {
      uint32_t r[16];
      tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
      tmem_wait_ld(r);
      store_c_chunk8_f16(c, m, n, row, n0 + col, r);
      store_c_chunk8_f16(c, m, n, row, n0 + col + 8, r + 8);
    }
  }

  trace.begin(Phase::kTeardown);
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc(tmem_accum, TMEM_COLS);
  trace.end(Phase::kTeardown);
}

// A 2-D byte view of a rows x K packed-E2M1 matrix (K/2 bytes per row) whose box is one 128-byte
// swizzle atom column: 128 bytes (256 FP4 values) of K by box_rows rows.
static CUtensorMap make_fp4_kmajor_sw128_map(const uint8_t* base, int rows, int k, int box_rows) {
  TiledMap t;
  t.rank = 2;
  t.dtype = TmaDtype::kU8;
  t.base = base;
  t.dims[0] = uint64_t(k) / 2;
  t.dims[1] = uint64_t(rows);
  t.strides[0] = uint64_t(k) / 2;
  t.box[0] = BLOCK_K / 2;
  t.box[1] = uint32_t(box_rows);
  t.swizzle = TmaSwizzle::k128B;
  return make_tensor_map(t);
}

constexpr StepSpec spec{7, "nvfp4_block_scaled", "NVFP4 block-scaled MMA (kind::mxf4nvf4), FP16 out", Arch::kSm100f,
                        /*k_multiple=*/64, Operands::kNVFP4};

void launch(const GemmArgs& g) {
  const Nvfp4Operands& f = g.fp4;
  const CUtensorMap tmap_a = make_fp4_kmajor_sw128_map(f.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_fp4_kmajor_sw128_map(f.b, g.n, g.k, BLOCK_N);
  LaunchDims d;
  d.grid = dim3(unsigned(ceil_div(g.m, BLOCK_M) * ceil_div(g.n, BLOCK_N)));
  d.block = dim3(NUM_THREADS);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, f.sfa, f.sfb, f.c, g.m, g.n, g.k,
                g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
