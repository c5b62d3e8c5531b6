// Step 10 — NVFP4 split-K for skinny shapes: K spread over S CTAs per output tile, the FP32
// partials combined in a fixed order, so C is the same bit for bit on every run.
//
// NEW SINCE STEP 07
//   The warps, ring, MMAs and scale copies are step 07's. What changes:
//   * Each 128 x 128 output tile is computed by S CTAs ("splits"); split s runs the k-tiles
//     [s * q + min(s, r), +q + (s < r)) with q, r = k_tiles / S, k_tiles % S, so the k-tiles are
//     shared out as evenly as they can be and the tail k-tile (1..4 k-steps) is in the last split.
//     The grid is tiles x S CTAs: CTA b is split b / tiles of tile b % tiles.
//   * S is chosen at launch by the planner of steps 10-13 (common/nvfp4_plan.cpp, with the timing
//     model's own parameters): at most one wave (tiles x S <= SMs), at most one split per k-tile,
//     and among those the S for which the reducing CTA finishes first (SPLIT OR NOT below); the
//     run prints it (`plan:`). S = 1 is step 07 exactly: C straight from TMEM, no workspace.
//   * With S > 1 every CTA writes its FP32 partial tile (64 KiB) to its own slot of a global
//     workspace (StepSpec::workspace, allocated by the harness), then the epilogue warps meet at a
//     named barrier and one thread adds 1 to the tile's counter with atom.acq_rel.gpu. The CTA
//     that sees S - 1 (it arrived last) resets the counter to 0 for the next launch, and its
//     epilogue sums the S partials IN THE ORDER split 0, 1, ..., S - 1 (its own from TMEM, the
//     others from the workspace), rounds to FP16 and stores C. No CTA ever waits for another, so
//     the kernel cannot deadlock whichever CTAs are resident.
//   * Ordering (PTX ISA §8, common/ptx/global.cuh): the partial stores of the 128 epilogue threads
//     -> bar.sync -> release (the atom) in the writer; the atom (acquire) -> bar.sync -> loads in
//     the reducer. The read-modify-writes of one counter form a release sequence, so the last CTA
//     acquires every earlier writer's release. The emulator checks this chain for every load.
//
// DETERMINISM AND WHAT IT COSTS
//   FP32 addition is not associative: (p0 + p1) + p2 and (p0 + p2) + p1 can differ in the last
//   bit, and after the FP16 rounding occasionally in C. Summing in arrival order (or with atomic
//   float adds into C) would make C depend on which CTA finished first, which changes from run to
//   run. Here the order is fixed by split index, whoever reduces. The price: the reducing CTA
//   cannot add a partial as it arrives; every CTA, the last one included, writes its whole
//   partial (it learns that it is last only after its release), and the last one reads S - 1 of
//   them back: (S - 1) x 64 KiB through one SM, 1.10 us each at the model's 32 B/cycle per SM
//   (H100-measured, docs/timing_model.md). That tail is what keeps S small.
//
// WHAT A K-TILE COSTS (the B200 timing model, docs/timing_model.md, `./step10 --model-params`)
//   A k-tile is four copies on the CTA's SM's TMA unit: the A box and the B box (128 rows x 128 B,
//   16 KiB each) and the SFA and SFB bulk copies (2 KiB each). The model charges 101 cycles per
//   copy plus the bytes at 311 GB/s: 4 x 54 ns + 36 KiB / 311 GB/s = 217 + 119 = 336 ns. Two
//   thirds of it is per-copy time, and the two 2 KiB scale copies take 36% of it for 11% of the
//   bytes. The first copies land one TMA latency (662 ns) after the setup (0.26 us).
//
// SPLIT OR NOT (model figures, in k-tiles of 336 ns)
//   Splitting saves streaming on every CTA: ceil(k_tiles / S) k-tiles instead of k_tiles. It adds
//   to the reducing CTA, after its mainloop: its own 64 KiB partial written (2048 full sectors at
//   1 per cycle: 1.10 us = 3.3 k-tiles), the atom (600 cycles, an estimate: 0.32 us = 1.0 k-tile)
//   and S - 1 partials read (3.3 k-tiles each): 1.0 + 3.3 S k-tiles. The C store (2.2 us) is the
//   same for every S. The planner takes the S with the least sum (a tie keeps the smaller S).
//   Measured in the model (`TCG_STEP10_SPLITS=S ./step10 --predict`, results/model_b200_sweeps.csv;
//   * = two waves):
//     S                          1      2      3      4      5      6
//     128 x 7168 x 16384     25.31  17.12  25.43* 23.09*                  us: S = 2 (SM count)
//     128 x 4096 x 7168      13.22  11.06  10.81  11.15  16.54* 16.99*    us: S = 3
//     128 x 7168 x 2048       6.51   7.72  12.36* 13.15*                  us: S = 1
//     128 x 2048 x 16384                   14.84  13.94  14.04  14.46     us: S = 4 (S = 8: 15.92)
//     128 x 7168 x 2560 / 3072 / 3584 (10 / 12 / 14 k-tiles): S = 1 7.18 / 7.85 / 8.52,
//       S = 2 8.06 / 8.44 / 8.73: S = 1 stays ahead, by 0.88 down to 0.21 us.
//   The rule's estimate picks the fastest S of every row: S = 3 -> 4 on the second shape saves
//   3 k-tiles (1.01 us) and costs 3.3 (1.10 us): +0.34 us measured, +0.09 estimated. The old rule
//   (at least 8 k-tiles per split, S <= 4) would take S = 4 on the first shape (two waves); a
//   second wave never paid.
//
// WHAT BOUNDS IT (model; speed of light (SOL) and cuBLASLt: published, results/published_b200.csv)
//   128 x 7168 x 16384, S = 2, 112 CTAs of 32 k-tiles: 17.12 us = 1.90 x SOL (8.994 us). The
//     SMs' TMA units: 0.26 + 0.66 + 32 x 0.336 = 11.7 us until the last copy lands (the
//     streaming is 63% of the time), then the partial (1.1 us), the atom, one partial read
//     (1.1 us) and C (2.2 us). HBM is close: each CTA brings 18 KiB of new bytes per k-tile
//     (B and SFB; A and SFA come from L2 after the first tile reads them),
//     112 x 18 KiB / 336 ns = 6.1 TB/s of the 7.2 (the range's low end, 5.9, is below it).
//     148 SMs sharing the 3584 k-tiles evenly would stream 24.2 k-tiles = 8.1 us each.
//   128 x 4096 x 7168, S = 3, 96 CTAs of 10 or 9 k-tiles: 10.81 us = 4.59 x SOL (2.354 us). The
//     mainloop ends at 4.9 us; the reducer's tail (partial out, atom, 2 partials in, C) runs to
//     10.6 us: 52% of the time.
//   128 x 7168 x 2048, S = 1, 56 CTAs of 8 k-tiles: 6.51 us = 4.88 x SOL (1.333 us). Streaming
//     2.69 us (41%); C stored one row per thread, 16-byte chunks in half-filled sectors (64 warp
//     instructions x 64 cycles = 2.2 us; 4.30 to 6.33 us in the trace, 31%); setup and latency
//     0.9 us.
//   cuBLASLt (published): 22.4 / 12.5 / 8.49 us; step 10 (model) is at 0.76 / 0.86 / 0.77 x.
//   Not reachable by a rule or a constant: 1.5 x SOL (13.5 / 3.5 / 2.0 us). What would move it,
//   in the same model (estimates, not built): a 3-D box covering two k-tiles (one 32 KiB A box,
//   one B box, 4 KiB scale copies: 227 ns per k-tile, -32%); C through shared memory and a TMA
//   store (full sectors: 0.55 us instead of 2.2, step 08); TMA multicast of A and SFA within a
//   cluster of 2 along N, issued by the two CTAs in turn (3 copies and 27 KiB per k-tile per CTA,
//   252 ns, -25%: on an H100 the issuer pays a multicast box once, and the model now charges the
//   issuing SM, docs/timing_model.md "Cluster mechanisms"); BLOCK_N = 64 (twice the
//   tiles, half the partial and C bytes: 4 copies and 27 KiB per k-tile, 306 ns; the scale path
//   here assumes 128-row SFB atoms, so it is not a constant to change).
//
// SHARED MEMORY, TMEM: step 07's (6 stages of 36 KiB, 217.1 KiB; 512 TMEM columns), plus a 4-byte
//   "this CTA reduces" flag. A 7th stage does not fit (253 KiB), and would not help: a stage is
//   back in 336 + 662 ns of TMA + two hand-offs of 118 ns, about 3.7 stages' streaming, which six
//   stages cover with room to spare. NUM_STAGES is a compile-time constant: to see its effect in
//   the model, change it, rebuild and run `./step10 --predict` at the shapes above.
//
// CONSTRAINTS
//   As step 07: any M, N >= 1, K a multiple of 64. Workspace: 4 bytes per tile (counters, zero
//   before the first launch, zero again after each) + tiles x S x 64 KiB of partials, none when
//   S = 1. Two launches that share a workspace must not run concurrently.
//
// RUN
//   make step10 && ./step10            (B200: real kernel; elsewhere: the emulator, by default
//                                       128 x 512 x 4160 on 8 SMs, where the plan splits K)
//   ./step10 --predict --m 128 --n 7168 --k 16384     (the B200 timing model)
//   TCG_STEP10_SPLITS=3 ./step10 --predict ...        (S forced: the sweep `make predict` writes)
#include "../common/kernel_common.cuh"
#include "../common/nvfp4_tensor_maps.cuh"
#include "../common/nvfp4_layout.h"
#include "../common/nvfp4_plan.h"

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
constexpr uint32_t EPILOGUE_BAR = 1;   // named barrier of the 4 epilogue warps (0 is __syncthreads)
constexpr uint32_t EPILOGUE_THREADS = 128;

constexpr uint32_t SFA_ATOMS_PER_KSTEP = BLOCK_M / kSfAtomRows;  // 1
constexpr uint32_t SFB_ATOMS_PER_KSTEP = BLOCK_N / kSfAtomRows;  // 1
constexpr uint32_t SFA_STAGE_BYTES = KSTEPS * SFA_ATOMS_PER_KSTEP * kSfAtomBytes;  // 2 KiB
constexpr uint32_t SFB_STAGE_BYTES = KSTEPS * SFB_ATOMS_PER_KSTEP * kSfAtomBytes;  // 2 KiB

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
constexpr uint32_t REDUCER_FLAG = TMEM_SLOT + 4;  // 1: this CTA arrived last and reduces its tile
constexpr uint32_t SMEM_BYTES = REDUCER_FLAG + 4;

constexpr uint32_t AB_STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;
constexpr uint32_t SBO_SW128 = 8 * 128;
constexpr uint32_t SBO_SF = 128;
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0, "128B-swizzled tiles must be 1024-byte aligned");
static_assert(SMEM_BYTES + kSmemAlignSlack <= 232448, "exceeds the sm_100 shared-memory limit");
static_assert(is_valid_mxf4_shape_cta1(BLOCK_M, BLOCK_N), "invalid kind::mxf4nvf4 shape");
constexpr uint32_t IDESC = make_idesc_mxf4nvf4(BLOCK_M, BLOCK_N);

// The workspace: per-tile counters, then one 64 KiB FP32 partial per (tile, split). A partial is
// stored in 16-byte granules (4 consecutive columns of one row) ordered column group first, row
// second: granule (g, r) at 16 * (128 g + r). The 32 lanes of an epilogue warp hold 32
// consecutive rows, so each of their 16-byte stores and loads covers 512 contiguous bytes.
constexpr uint32_t PARTIAL_BYTES = BLOCK_M * BLOCK_N * 4;  // 64 KiB
__host__ __device__ constexpr uint32_t granule_offset(uint32_t col_group, uint32_t row) {
  return 16u * (col_group * BLOCK_M + row);
}
__host__ __device__ constexpr size_t counter_bytes(int tiles) { return (size_t(tiles) * 4 + 255) / 256 * 256; }

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                const uint8_t* sfa, const uint8_t* sfb, __half* c, int m, int n, int k, int splits,
                uint32_t* counters, uint8_t* partials, const __grid_constant__ TraceBuf trace_buf) {
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
  volatile uint32_t* reducer_flag = reinterpret_cast<uint32_t*>(smem + REDUCER_FLAG);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int tiles = ceil_div(m, BLOCK_M) * tiles_n;
  const int tile = int(blockIdx.x) % tiles, split = int(blockIdx.x) / tiles;
  const int m0 = tile / tiles_n * BLOCK_M, n0 = tile % tiles_n * BLOCK_N;

  if (warp == 1) {
    tmem_alloc(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit();
  } else if (warp == 0 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);
      mbarrier_init(mma_done_bar(s), 1);
    }
    mbarrier_init(mainloop_done_bar, 1);
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  const int num_ksteps = k / MMA_K;  // K % 64 == 0
  const int num_k_tiles = ceil_div(num_ksteps, KSTEPS);
  auto ksteps_of = [&](int kt) { const int left = num_ksteps - kt * KSTEPS; return left < KSTEPS ? left : KSTEPS; };
  // This split's k-tiles: [kt_begin, kt_begin + my_k_tiles); splits <= num_k_tiles, so never empty.
  const int per_split = num_k_tiles / splits, extra = num_k_tiles % splits;
  const int kt_begin = split * per_split + (split < extra ? split : extra);
  const int my_k_tiles = per_split + (split < extra ? 1 : 0);

  if (warp == 0) {
    // ---------------------------------------------------------------- producer (TMA) warp
    if (elect_one_sync()) {
      const auto producer_span = trace.span_elected(Phase::kProducer);  // ends with this block
      const uint32_t sfa_row_block = uint32_t(m0) / kSfAtomRows, sfb_row_block = uint32_t(n0) / kSfAtomRows;
      uint32_t empty_parity = 1;
      for (int i = 0; i < my_k_tiles; ++i) {
        const int kt = kt_begin + i, s = i % NUM_STAGES;
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
      trace.begin_elected(Phase::kDrain);
      for (int i = my_k_tiles; i < my_k_tiles + NUM_STAGES; ++i) {
        const int s = i % NUM_STAGES;
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
      for (int i = 0; i < my_k_tiles; ++i) {
        const int kt = kt_begin + i, s = i % NUM_STAGES;
        mbarrier_wait_parity(tma_full_bar(s), full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
        tcgen05_fence_after_thread_sync();
        const uint32_t sf_cols = SF_TMEM_BASE + s * SF_TMEM_STAGE_COLS;
        for (int ks = 0; ks < ksteps_of(kt); ++ks) {
          const uint32_t sfa_tmem = tmem_offset(tmem_accum, 0, sf_cols + ks * SFA_COLS_PER_KSTEP);
          const uint32_t sfb_tmem =
              tmem_offset(tmem_accum, 0, sf_cols + KSTEPS * SFA_COLS_PER_KSTEP + ks * SFB_COLS_PER_KSTEP);
          for (uint32_t j = 0; j < SFA_ATOMS_PER_KSTEP; ++j)
            tcgen05_cp_32x128b_warpx4(
                tmem_offset(sfa_tmem, 0, 4 * j),
                make_smem_desc(sfa_tile(s) + (ks * SFA_ATOMS_PER_KSTEP + j) * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
          for (uint32_t j = 0; j < SFB_ATOMS_PER_KSTEP; ++j)
            tcgen05_cp_32x128b_warpx4(
                tmem_offset(sfb_tmem, 0, 4 * j),
                make_smem_desc(sfb_tile(s) + (ks * SFB_ATOMS_PER_KSTEP + j) * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
          const uint64_t a_desc = make_smem_desc(a_tile(s) + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          const uint64_t b_desc = make_smem_desc(b_tile(s) + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
          mma_mxf4nvf4_block16_ss(tmem_accum, a_desc, b_desc, IDESC, sfa_tmem, sfb_tmem,
                                  /*accumulate=*/i > 0 || ks > 0);
        }
        mma_commit(mma_done_bar(s));
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
    const int tile_row = quarter * 32 + lane;  // = TMEM lane
    const int row = m0 + tile_row;
    if (splits == 1) {
      for (int col = 0; col < BLOCK_N; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
        tmem_wait_ld(r);
        store_c_chunk8_f16(c, m, n, row, n0 + col, r);
        store_c_chunk8_f16(c, m, n, row, n0 + col + 8, r + 8);
      }
    } else {
      // 1. This split's partial to its workspace slot.
      uint8_t* const slots = partials + size_t(tile) * size_t(splits) * PARTIAL_BYTES;
      uint8_t* const mine = slots + size_t(split) * PARTIAL_BYTES;
      for (int col = 0; col < BLOCK_N; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
        tmem_wait_ld(r);
        for (int g = 0; g < 4; ++g)
          st_global_v4(mine + granule_offset(uint32_t(col / 4 + g), uint32_t(tile_row)),
                       make_uint4(r[4 * g], r[4 * g + 1], r[4 * g + 2], r[4 * g + 3]));
      }
      // 2. Every epilogue thread's stores, then one release on the tile's counter. The thread that
      //    sees S - 1 arrivals before its own is the last: it resets the counter (all S CTAs of
      //    this launch have counted) and its CTA reduces.
      tcgen05_fence_before_thread_sync();
      named_barrier_sync(EPILOGUE_BAR, EPILOGUE_THREADS);
      if (warp == 2 && lane == 0) {
        const uint32_t arrived_before = atom_add_acq_rel_gpu(counters + tile, 1u);
        const bool last = arrived_before == uint32_t(splits - 1);
        if (last) st_relaxed_gpu(counters + tile, 0u);
        *reducer_flag = last ? 1u : 0u;
      }
      named_barrier_sync(EPILOGUE_BAR, EPILOGUE_THREADS);
      tcgen05_fence_after_thread_sync();
      // 3. The last CTA: C = ((p0 + p1) + p2) + ..., always in split order; its own partial comes
      //    from TMEM (the same bits it stored).
      if (*reducer_flag) {
        for (int col = 0; col < BLOCK_N; col += 16) {
          uint32_t own[16];
          tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), own);
          tmem_wait_ld(own);
          float acc[16];
          for (int s = 0; s < splits; ++s) {
            uint32_t v[16];
            if (s == split) {
              for (int e = 0; e < 16; ++e) v[e] = own[e];
            } else {
              for (int g = 0; g < 4; ++g) {
                const uint4 q = ld_global_v4(slots + size_t(s) * PARTIAL_BYTES +
                                             granule_offset(uint32_t(col / 4 + g), uint32_t(tile_row)));
                v[4 * g] = q.x, v[4 * g + 1] = q.y, v[4 * g + 2] = q.z, v[4 * g + 3] = q.w;
              }
            }
            for (int e = 0; e < 16; ++e) acc[e] = s == 0 ? u32_as_float(v[e]) : acc[e] + u32_as_float(v[e]);
          }
          uint32_t r[16];
          for (int e = 0; e < 16; ++e) memcpy(&r[e], &acc[e], 4);
          store_c_chunk8_f16(c, m, n, row, n0 + col, r);
          store_c_chunk8_f16(c, m, n, row, n0 + col + 8, r + 8);
        }
      }
    }
  }

  trace.begin(Phase::kTeardown);
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc(tmem_accum, TMEM_COLS);
  trace.end(Phase::kTeardown);
}

// The plans this kernel runs; the planner (common/nvfp4_plan.cpp) picks the one the timing model's
// costs say finishes first (SPLIT OR NOT): BLOCK_N 128, S from 1 to the k-tiles (at most one wave
// unless forced), partials through the workspace, no clusters. TCG_STEP10_SPLITS=S forces S (even
// past one wave): the split-count sweep of docs/10_nvfp4_split_k.md that `make predict` writes.
static const nvfp4::PlanRules kPlanRules{"TCG_STEP10_", {BLOCK_N}, /*splits: any*/ {}, 0, {1}, /*k-tiles per stage=*/1,
                                         NUM_STAGES, NUM_STAGES, nvfp4::Reduction::kWorkspace,
                                         nvfp4::CStore::kRowPerThread, /*teaches_split=*/true, /*teaches_multicast=*/false};
static nvfp4::Plan plan_for(int m, int n, int k, int sms) {
  nvfp4::Forced f;
  f.splits = env_knob_range("TCG_STEP10_SPLITS", 1, 1024, 0);
  return nvfp4::plan(kPlanRules, m, n, k, sms, f);
}
static StepPlan plan_line(int m, int n, int k, int sms) {
  const nvfp4::Plan p = plan_for(m, n, k, sms);
  return {p.line(), nvfp4::left_out(kPlanRules, p)};
}

// StepSpec::workspace: counters + partials when the launch splits K, nothing otherwise.
static StepWorkspace workspace_for_problem(int m, int n, int k, int sms) {
  const nvfp4::Plan p = plan_for(m, n, k, sms);
  if (p.splits == 1) return {};
  StepWorkspace w;
  w.zeroed_bytes = counter_bytes(p.tiles);
  w.bytes = w.zeroed_bytes + size_t(p.tiles) * size_t(p.splits) * PARTIAL_BYTES;
  return w;
}

constexpr StepSpec spec{10, "nvfp4_split_k", "NVFP4 split-K, deterministic reduction, FP16 out", Arch::kSm100f,
                        /*k_multiple=*/64, Operands::kNVFP4, &workspace_for_problem, /*cluster_size=*/1,
                        /*epilogue=*/nullptr, /*repeat=*/false, /*persistent=*/{}, &plan_line,
                        "  TCG_STEP10_SPLITS=1..1024   forces S (at most one per k-tile; past one wave too)\n",
                        /*sim_default=*/{128, 512, 4160, 8}};

void launch(const GemmArgs& g) {
  const Nvfp4Operands& f = g.fp4;
  const int sms = num_sms();
  const nvfp4::Plan p = plan_for(g.m, g.n, g.k, sms);
  const StepWorkspace need = workspace_for_problem(g.m, g.n, g.k, sms);
  if (g.workspace_bytes < need.bytes || (need.bytes > 0 && g.workspace == nullptr))
    throw std::invalid_argument("step 10: " + std::to_string(p.splits) + " splits need a workspace of " +
                                std::to_string(need.bytes) + " bytes; got " + std::to_string(g.workspace_bytes));
  uint8_t* ws = static_cast<uint8_t*>(g.workspace);
  uint32_t* counters = reinterpret_cast<uint32_t*>(ws);
  uint8_t* partials = ws ? ws + need.zeroed_bytes : nullptr;
  const CUtensorMap tmap_a = make_fp4_kmajor_sw128_map(f.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_fp4_kmajor_sw128_map(f.b, g.n, g.k, BLOCK_N);
  LaunchDims d;
  d.grid = dim3(unsigned(p.tiles * p.splits));
  d.block = dim3(NUM_THREADS);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, f.sfa, f.sfb, f.c, g.m, g.n, g.k,
                p.splits, counters, partials, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
