// Step 08 — TMA-store epilogue: the accumulator goes TMEM -> registers -> 128B-swizzled staging
// buffers in shared memory -> one TMA store per 32 x 64 sub-tile, asynchronous, while the
// accumulator is already back with the MMA warp.
//
// NEW SINCE STEP 06
//   Step 06's epilogue warps read the accumulator 16 columns at a time and store each thread's
//   row straight to C in 16-byte pieces (store_c_chunk8). Here each epilogue warp (32 rows of
//   the CTA's 128) walks its rows in SUB-TILES of 32 rows x 64 columns (4 per 256-column tile):
//     1. tcgen05.ld.32x32b.x32 twice (64 FP32 columns of its row per thread), tcgen05.wait::ld;
//        after the tile's LAST sub-tile, release the accumulator right away (tmem_empty_bar, as
//        step 06, but before any store: the MMA warp may overwrite it while we still store);
//     2. the store thread (lane 0) waits with cp.async.bulk.wait_group.read 1 until the TMA store
//        issued from this staging buffer two sub-tiles ago has READ it (the one from the other
//        buffer may still run), then __syncwarp so the whole warp may overwrite it;
//     3. every lane converts its 64 values to BF16 and writes its 128-byte row of the buffer with
//        eight 16-byte st.shared, chunk j at position j ^ (row % 8): the 128B swizzle, which the
//        tensor map of C un-swizzles (tcg::swizzle_addr, the layout TMA loads use);
//     4. fence.proxy.async.shared::cta in every lane (its generic stores become visible to the
//        async proxy that the TMA store reads with), __syncwarp;
//     5. lane 0 issues cp.async.bulk.tensor.2d.global.shared::cta (one 4 KiB box: 64 columns x 32
//        rows of C) and cp.async.bulk.commit_group: one bulk group per sub-tile.
//   Two staging buffers per warp (a ring that continues across tiles), so the tcgen05.ld and
//   conversion of sub-tile s + 1 overlap the store of sub-tile s. Bulk groups belong to a thread,
//   so one fixed lane (STORE_LANE = 0) issues, commits and waits. Before exiting, lane
//   0 waits for the last reads (wait_group.read 0): the CTA's shared memory ends with it. The
//   global writes need no wait: they complete before the kernel does.
//   Edges: the TMA store clips at C's bounds (rows >= M, columns >= N are not written), so partial
//   tiles take the same path; a warp whose rows all lie beyond M, or a sub-tile whose columns do,
//   skips the store. Clipping works at the high edges only: the coordinates here are never
//   negative, and must not be (an H100 traps on a TMA store at a negative coordinate, where a
//   load zero-fills: make gpu-check). A tensor map needs C's row pitch to be a multiple of 16
//   bytes: for N % 8 != 0 (or a C not 16-byte aligned) the epilogue falls back to step 06's
//   direct stores.
//
// WHY IT IS FASTER
//   Per tile, each CTA drains 128 x 256 FP32 (128 KiB of TMEM) into 64 KiB of BF16. In step 06 a
//   warp's 16-byte store covers 32 different rows: 32 sectors of 32 B, each half written; 128 such
//   warp instructions per CTA and tile move 128 KiB of sectors for 64 KiB of data. The issue
//   measured both patterns on an H100 (2026-11-24, one wave of 132 CTAs, a 128 x 256 BF16 tile
//   each): 7.5 us per CTA in step 06's, 1.8 us coalesced. A TMA store
//   writes whole 128-byte rows of C (4 full sectors each), 16 instructions per tile, and the
//   threads only write shared memory: 64 KiB per tile, conflict-free thanks to the swizzle (each
//   8 lanes of a 16-byte st.shared hit 8 different 16-byte bank groups) at 128 B/clock, ~0.3 us at
//   1.86 GHz. While the epilogue is shorter than a mainloop (26 us per tile at K = 4096, step 06's
//   header) step 06 hides it already; what step 08 saves is
//     * the last tile of every pair, whose epilogue nothing overlaps: ~7.5 -> ~2 us of the tail;
//     * the accumulator held during the stores: released after the last tcgen05.ld, so a short
//       mainloop (small K: 2 x 256 x 256 x K / (2 x 10.2 TFLOPS) = K x 6.4 ns, below the store time
//       for K < ~1200) no longer waits for the stores of the tile before the one before;
//     * half-empty sectors: step 06 moves twice C's bytes through L2.
//   (Estimates from the issue's H100 measurement and published figures, not B200 measurements.
//   The B200 timing model, which charges half-written sectors, predicts 1837 TFLOPS against step
//   06's 1747 at 4096^3 and 2-3x step 06 at K <= 512; docs/08_tma_store_epilogue.md.)
//
// BUDGETS
//   Shared memory, stages vs staging: 227 KiB per CTA (232448 B) minus barriers and 1 KiB of
//   alignment slack leaves room for 7 stages of 32 KiB (224 KiB, step 06) and nothing else, or 6
//   stages (192 KiB) + 32 KiB of staging = 4 warps x 2 buffers x (32 rows x 128 B). A sub-tile of
//   64 columns is the widest a 128B-swizzled box allows (128 bytes of BF16); 32-column buffers
//   would halve the staging but free no 7th stage (224 + 16 KiB > 227 KiB). Six stages are
//   6 x 64 = 384 elements of K in flight, 6 x 0.41 us = 2.5 us of MMA work per pair at the
//   published rate, above the TMA latency (~0.7 us) many times over. Total: 229376 B of tiles
//   and staging + 16 barriers + the TMEM slot = 229508 B + 1 KiB slack = 230532 B <= 232448 B.
//   TMEM: as step 06, 2 accumulators x 256 columns = all 512.
//   Registers: 64 accumulator values per thread per sub-tile (two x32 loads).
//
// CONSTRAINTS
//   As step 06: any M, N >= 1; K a multiple of 8; at least 2 SMs. The TMA-store path needs
//   N % 8 == 0 and a 16-byte-aligned C (otherwise the step-06 stores run).
//
// RUN
//   make step08 && ./step08            (B200: real kernel; elsewhere: the emulator, 512^3)
//   ./step08 --predict --m 4096 --n 4096 --k 4096   (the emulator's B200 timing model)
#include <stdexcept>

#include "../common/kernel_common.cuh"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int CLUSTER_SIZE = 2;       // one CTA pair: rank 0 (leader) and rank 1 (peer)
constexpr int BLOCK_M = 128;          // A and C rows per CTA: one TMEM lane per output row
constexpr int BLOCK_N = 256;          // = MMA N: one TMEM column per output column, in both CTAs
constexpr int PAIR_M = CLUSTER_SIZE * BLOCK_M;          // = MMA M = 256: output rows per pair
constexpr int B_ROWS = BLOCK_N / CLUSTER_SIZE;          // B rows per CTA: each holds half of N
constexpr int BLOCK_K = 64;           // elements of K per stage: 1 swizzle atom (4 MMA k-steps)
constexpr int NUM_STAGES = 6;         // depth of the shared-memory ring (7 in step 06: see BUDGETS)
constexpr int ATOM_K = 64;            // elements of K in one 128-byte swizzled row
constexpr int MMA_K = 16;             // K of one kind::f16 MMA (32 bytes)
constexpr int NUM_THREADS = 192;      // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue
constexpr int NUM_EPILOGUE_WARPS = 4;
constexpr int NUM_ACCUMULATORS = 2;   // double-buffered accumulator
constexpr uint32_t TMEM_COLS = NUM_ACCUMULATORS * BLOCK_N;       // 512: the whole TMEM of the SM
constexpr int BAND_PAIR_ROWS = 8;     // schedule: pair rows per band (8 x 256 = 2048 rows of C)
constexpr int SUB_N = 64;             // epilogue sub-tile: 64 columns of BF16 = one 128-byte swizzled row
constexpr int SUB_M = 32;             //   x the 32 rows (TMEM lanes) of one epilogue warp
constexpr int NUM_SUBTILES = BLOCK_N / SUB_N;                     // 4 per tile
constexpr int NUM_STAGING = 2;        // staging buffers per epilogue warp (double-buffered)
constexpr int STORE_LANE = 0;         // the lane that issues, commits and waits for the warp's TMA stores

// Shared memory, offsets from a 1024-byte-aligned base, identical in both CTAs (the pair MMA,
// the multicast commits and the pair allocation address the peer at the leader's offsets):
// NUM_STAGES A tiles, NUM_STAGES B halves, tma_full_bar[s] ("stage full", used in the leader),
// mma_done_bar[s] ("stage empty", both), tmem_full_bar[a] ("accumulator full", both),
// tmem_empty_bar[a] ("accumulator empty", used in the leader), the TMEM address slot; the
// staging buffers, NUM_STAGING per epilogue warp (each SUB_M rows of 128 B, 128B-swizzled), come
// right after the B tiles so they stay 1024-byte aligned.
constexpr uint32_t A_STAGE_BYTES = BLOCK_M * BLOCK_K * 2;       // 128 x 64 BF16 = 16 KiB
constexpr uint32_t B_STAGE_BYTES = B_ROWS * BLOCK_K * 2;        // 128 x 64 BF16 = 16 KiB
constexpr uint32_t A_TILES = 0;
constexpr uint32_t B_TILES = A_TILES + NUM_STAGES * A_STAGE_BYTES;
constexpr uint32_t STAGING_BYTES = SUB_M * SUB_N * 2;           // 32 x 64 BF16 = 4 KiB
constexpr uint32_t STAGING = B_TILES + NUM_STAGES * B_STAGE_BYTES;
constexpr uint32_t TMA_FULL_BARS = STAGING + NUM_EPILOGUE_WARPS * NUM_STAGING * STAGING_BYTES;
constexpr uint32_t MMA_DONE_BARS = TMA_FULL_BARS + NUM_STAGES * 8;
constexpr uint32_t TMEM_FULL_BARS = MMA_DONE_BARS + NUM_STAGES * 8;
constexpr uint32_t TMEM_EMPTY_BARS = TMEM_FULL_BARS + NUM_ACCUMULATORS * 8;
constexpr uint32_t TMEM_SLOT = TMEM_EMPTY_BARS + NUM_ACCUMULATORS * 8;  // tcgen05.alloc writes the address here
constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;

constexpr uint32_t STAGE_BYTES = (BLOCK_M + B_ROWS) * BLOCK_K * 2;  // what one CTA's TMA delivers per k-tile
constexpr uint32_t PAIR_STAGE_BYTES = CLUSTER_SIZE * STAGE_BYTES;  // what the leader's tma_full_bar receives
constexpr uint32_t ATOM_COLUMN_A = BLOCK_M * 128;                   // bytes of one 128-byte-wide atom column
constexpr uint32_t ATOM_COLUMN_B = B_ROWS * 128;
constexpr uint32_t SBO_SW128 = 8 * 128;                             // next 8-row group
constexpr uint32_t TMEM_EMPTY_ARRIVALS = CLUSTER_SIZE * NUM_EPILOGUE_WARPS;  // 8: every epilogue warp of the pair
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0 && STAGING_BYTES % 1024 == 0,
              "128B-swizzled tiles and staging buffers must be 1024-byte aligned");
static_assert(SUB_N * 2 == 128 && SUB_M == 32 && BLOCK_N % SUB_N == 0, "a sub-tile is one warp's rows x one 128-byte swizzle span");
static_assert(SMEM_BYTES + kSmemAlignSlack <= 232448, "exceeds the sm_100 shared-memory limit");
static_assert(TMEM_COLS <= kTmemColumns && is_valid_tmem_alloc(TMEM_COLS), "the accumulators must fit one TMEM allocation");
static_assert(is_valid_f16_shape_cta2(PAIR_M, BLOCK_N), "not a cta_group::2 kind::f16 shape (PTX ISA Table 39)");
static_assert(NUM_THREADS == 32 * (2 + NUM_EPILOGUE_WARPS), "warp 0 producer, warp 1 MMA, then the epilogue warps");
constexpr uint32_t IDESC = make_idesc_bf16_f32(PAIR_M, BLOCK_N);  // M = 256: the whole pair
constexpr uint16_t PAIR_MASK = 0b11;                               // multicast to cluster ranks 0 and 1

// ------------------------------------------------------------------------------------- schedule
// The kernel and plots/schedule_dump.cpp (the picture in docs/06_persistent.md) both call these.

// Output tiles of one pair (256 x 256), and how many pairs the grid has: one per SM pair, but
// never more pairs than tiles. (A pair needs two SMs; launch() rejects a GPU with fewer.)
__host__ __device__ constexpr int num_pair_tiles(int m, int n) { return ceil_div(m, PAIR_M) * ceil_div(n, BLOCK_N); }
__host__ __device__ constexpr int num_clusters_for(int num_sms, int m, int n) {
  return num_sms / CLUSTER_SIZE < num_pair_tiles(m, n) ? num_sms / CLUSTER_SIZE : num_pair_tiles(m, n);
}

// The static schedule: the i-th tile of cluster `cluster` (of `num_clusters`). Every tile number
// in [0, num_tiles) is taken by exactly one cluster; cluster c takes
// ceil((num_tiles - c) / num_clusters) of them.
__host__ __device__ constexpr int scheduled_tile(int cluster, int i, int num_clusters) {
  return cluster + i * num_clusters;
}

// Tile number -> the pair's tile: bands of BAND_PAIR_ROWS pair rows (the last band may be
// shorter), inside a band column by column, down M first. Consecutive tile numbers (tiles that
// run at the same time on neighbouring pairs) share their 256 rows of B; a band's A rows are
// reused by every column of the band.
struct PairTile {
  int pair_m;  // pair row: output rows 256 pair_m .. +255
  int pair_n;  // column tile: output columns 256 pair_n .. +255
};
__host__ __device__ constexpr PairTile pair_tile_at(int tile, int m, int n) {
  const int tiles_m = ceil_div(m, PAIR_M), tiles_n = ceil_div(n, BLOCK_N);
  const int band = tile / (BAND_PAIR_ROWS * tiles_n);
  const int in_band = tile % (BAND_PAIR_ROWS * tiles_n);
  const int band_rows = tiles_m - band * BAND_PAIR_ROWS < BAND_PAIR_ROWS ? tiles_m - band * BAND_PAIR_ROWS : BAND_PAIR_ROWS;
  return {band * BAND_PAIR_ROWS + in_band % band_rows, in_band / band_rows};
}

// Which rows a CTA holds for one tile: as in step 05, the two CTAs of the pair take consecutive
// 128-row M tiles of the same N tile, and rank r holds B rows n0 + 128 r .. +127.
struct CtaTile {
  int m0;      // first row of A and of C held by this CTA (128 rows)
  int n0;      // first column of C of the pair's tile (256 columns, in both CTAs)
  int b_row0;  // first row of B held by this CTA (128 rows): its half of the 256
};
__host__ __device__ constexpr CtaTile cta_tile_2sm(int tile, int cta_rank, int m, int n) {
  const PairTile p = pair_tile_at(tile, m, n);
  return {p.pair_m * PAIR_M + cta_rank * BLOCK_M, p.pair_n * BLOCK_N, p.pair_n * BLOCK_N + cta_rank * B_ROWS};
}

// A position in a ring of `size` slots guarded by mbarriers: the slot, and the parity of the
// barrier phase that the current lap of the ring waits for. Phases of a slot's barrier alternate
// 0, 1, 0, ... once per lap, so the parity flips each time the position wraps to slot 0. Each
// role keeps its own positions for the whole kernel: they carry on from tile to tile, because
// the barriers do (a barrier's phase is never reset).
struct RingPos {
  int slot = 0;
  uint32_t phase = 0;
  __host__ __device__ void advance(int size) {
    if (++slot == size) {
      slot = 0;
      phase ^= 1;
    }
  }
};

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                const __grid_constant__ CUtensorMap tmap_c, bool tma_epilogue, __nv_bfloat16* c, int m, int n, int k,
                const __grid_constant__ TraceBuf trace_buf) {
  // Timeline annotations for --trace, as in step 05 (docs/tracing.md). Each role's phase spans
  // all its tiles; the waits name the barrier and the stage or accumulator, so a tile boundary
  // shows as the MMA warp's wait on tmem_empty_bar and the epilogue's wait on tmem_full_bar.
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  auto a_tile = [&](int s) { return smem_base + A_TILES + s * A_STAGE_BYTES; };
  auto b_tile = [&](int s) { return smem_base + B_TILES + s * B_STAGE_BYTES; };
  auto tma_full_bar = [&](int s) { return smem_base + TMA_FULL_BARS + 8 * s; };
  auto mma_done_bar = [&](int s) { return smem_base + MMA_DONE_BARS + 8 * s; };
  auto tmem_full_bar = [&](int a) { return smem_base + TMEM_FULL_BARS + 8 * a; };
  auto tmem_empty_bar = [&](int a) { return smem_base + TMEM_EMPTY_BARS + 8 * a; };
  auto staging = [&](int quarter, int buf) { return smem_base + STAGING + (quarter * NUM_STAGING + buf) * STAGING_BYTES; };
  const uint32_t tmem_slot = smem_base + TMEM_SLOT;  // where tcgen05.alloc writes the TMEM address

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t cta_rank = cluster_ctarank();
  const bool is_leader = (cta_rank & 1) == 0;      // the even CTA of the pair issues the MMAs
  const uint32_t leader_rank = cta_rank & ~1u;
  const int cluster = int(cluster_id_x());
  const int num_clusters = int(gridDim.x) / CLUSTER_SIZE;
  const int num_tiles = num_pair_tiles(m, n);
  const int num_k_tiles = ceil_div(k, BLOCK_K);

  // Setup, once per CTA for the whole kernel (step 05 did this once per tile): warp 1 of each
  // CTA allocates both accumulators (cta_group::2: same columns, same address in both CTAs),
  // one thread of warp 0 initialises the barriers, and a cluster barrier publishes both before
  // anyone uses them (fence.mbarrier_init releases at cluster scope, §9.7.13.4; the tcgen05
  // fences order the allocation with the barrier, §9.7.16.6.4).
  if (warp == 1) {
    tmem_alloc_2sm(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit_2sm();
  } else if (warp == 0 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);  // one arrival: the leader's expect_tx (leader only)
      mbarrier_init(mma_done_bar(s), 1);  // one arrival: the leader's multicast tcgen05.commit
    }
    for (int a = 0; a < NUM_ACCUMULATORS; ++a) {
      mbarrier_init(tmem_full_bar(a), 1);                     // the leader's multicast tcgen05.commit
      mbarrier_init(tmem_empty_bar(a), TMEM_EMPTY_ARRIVALS);  // every epilogue warp of both CTAs (leader only)
    }
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_base = tmem_address_from_slot(tmem_slot);  // accumulator a: columns 256 a .. 256 a + 255
  trace.end(Phase::kSetup);

  if (warp == 0) {
    // ---------------------------------------------------------------- producer (TMA) warp, both CTAs
    if (elect_one_sync()) {
      const auto producer_span = trace.span_elected(Phase::kProducer);  // ends with this block
      RingPos stage;  // carries on across tiles; waits for phase parity stage.phase ^ 1 ("empty")
      for (int i = 0; scheduled_tile(cluster, i, num_clusters) < num_tiles; ++i) {
        const CtaTile tile = cta_tile_2sm(scheduled_tile(cluster, i, num_clusters), int(cta_rank), m, n);
        for (int kt = 0; kt < num_k_tiles; ++kt) {
          // A fresh barrier counts its previous (nonexistent) phase, parity 1, as complete, so
          // the first lap over the ring does not wait.
          mbarrier_wait_parity(mma_done_bar(stage.slot), stage.phase ^ 1,
                               trace.span_elected(Phase::kWaitMmaDone, stage.slot));  // the MMAs that read it are done
          // Both CTAs' copies complete on the leader's tma_full_bar (§9.7.9.25.5.2); its single
          // arrival announces the pair's bytes (see step 05).
          if (is_leader) mbarrier_arrive_expect_tx(tma_full_bar(stage.slot), PAIR_STAGE_BYTES);
          const uint32_t leader_full_bar = mapa_shared_cluster(tma_full_bar(stage.slot), leader_rank);
          for (int j = 0; j < BLOCK_K / ATOM_K; ++j) {
            tma_load_2d_2sm(a_tile(stage.slot) + j * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + j * ATOM_K, tile.m0,
                            leader_full_bar);
            tma_load_2d_2sm(b_tile(stage.slot) + j * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + j * ATOM_K, tile.b_row0,
                            leader_full_bar);
          }
          stage.advance(NUM_STAGES);
        }
      }
      // Drain, as in step 05: wait until the MMAs have released every stage, as if loading
      // NUM_STAGES more k-tiles; nothing else waits for the last commits' arrivals here.
      trace.begin_elected(Phase::kDrain);
      for (int s = 0; s < NUM_STAGES; ++s) {
        mbarrier_wait_parity(mma_done_bar(stage.slot), stage.phase ^ 1);
        stage.advance(NUM_STAGES);
      }
      trace.end_elected(Phase::kDrain);
    }
  } else if (warp == 1) {
    // ---------------------------------------------------------------- MMA warp, leader only
    if (is_leader && elect_one_sync()) {
      const auto mma_span = trace.span_elected(Phase::kMma);  // ends with this block
      RingPos stage;  // the smem ring, in step with the producers: waits for parity stage.phase ("full")
      RingPos accum;  // the accumulator ring: waits for parity accum.phase ^ 1 ("empty")
      for (int i = 0; scheduled_tile(cluster, i, num_clusters) < num_tiles; ++i) {
        // Both CTAs' epilogues must be done reading this accumulator (tile i - 2) before the
        // first MMA below overwrites it. A fresh tmem_empty_bar passes parity 1: both
        // accumulators start empty.
        mbarrier_wait_parity(tmem_empty_bar(accum.slot), accum.phase ^ 1,
                             trace.span_elected(Phase::kWaitTmemEmpty, accum.slot));
        tcgen05_fence_after_thread_sync();
        const uint32_t d_tmem = tmem_offset(tmem_base, 0, uint32_t(accum.slot * BLOCK_N));
        for (int kt = 0; kt < num_k_tiles; ++kt) {
          mbarrier_wait_parity(tma_full_bar(stage.slot), stage.phase,
                               trace.span_elected(Phase::kWaitTmaFull, stage.slot));  // both CTAs' halves have landed
          tcgen05_fence_after_thread_sync();
          for (int j = 0; j < BLOCK_K / ATOM_K; ++j)
            for (int ks = 0; ks < ATOM_K / MMA_K; ++ks) {  // K step ks: +32 bytes inside the 128-byte row
              const uint64_t a_desc = make_smem_desc(a_tile(stage.slot) + j * ATOM_COLUMN_A + ks * 32, 16, SBO_SW128,
                                                     Layout::kSwizzle128B);
              const uint64_t b_desc = make_smem_desc(b_tile(stage.slot) + j * ATOM_COLUMN_B + ks * 32, 16, SBO_SW128,
                                                     Layout::kSwizzle128B);
              // The first MMA of a tile overwrites the accumulator (enable-input-d false).
              mma_bf16_ss_2sm(d_tmem, a_desc, b_desc, IDESC, /*accumulate=*/kt > 0 || j > 0 || ks > 0);
            }
          // Stage empty in both CTAs once these MMAs have read it (§9.7.16.12.1).
          mma_commit_2sm_multicast(mma_done_bar(stage.slot), PAIR_MASK);
          stage.advance(NUM_STAGES);
        }
        // Accumulator full in both CTAs once every MMA of the tile has completed: a commit tracks
        // all earlier tcgen05 operations of this thread (§9.7.16.12.1).
        mma_commit_2sm_multicast(tmem_full_bar(accum.slot), PAIR_MASK);
        accum.advance(NUM_ACCUMULATORS);
      }
      // Drain: wait until the epilogues of both CTAs have released both accumulators, as if
      // starting NUM_ACCUMULATORS more tiles. Nothing else waits for the last tiles' arrivals on
      // tmem_empty_bar, which the peer's warps send into this CTA; after this, none is in flight.
      trace.begin_elected(Phase::kDrain);
      for (int a = 0; a < NUM_ACCUMULATORS; ++a) {
        mbarrier_wait_parity(tmem_empty_bar(accum.slot), accum.phase ^ 1);
        accum.advance(NUM_ACCUMULATORS);
      }
      trace.end_elected(Phase::kDrain);
    }
  } else {
    // ---------------------------------------------------------------- epilogue warps 2..5, both CTAs
    // This CTA's accumulator row i (output row m0 + i) is TMEM lane i (M = 256 over the pair,
    // data-path layout A); warp w may only read lanes 32*(w%4)..+31: warps 2, 3, 4, 5 take lane
    // quarters 2, 3, 0, 1 (§9.7.16.8.1). Each warp stores its own 32 rows through its own staging
    // buffers, so the warps never wait for each other.
    const auto epilogue_span = trace.span(Phase::kEpilogue);  // ends with this block
    const int quarter = warp % 4;
    RingPos accum;    // waits for parity accum.phase ("full")
    int staging_buf = 0;  // the staging ring: continues across tiles, like the other rings
    for (int i = 0; scheduled_tile(cluster, i, num_clusters) < num_tiles; ++i) {
      const CtaTile tile = cta_tile_2sm(scheduled_tile(cluster, i, num_clusters), int(cta_rank), m, n);
      // This tile's MMAs are complete.
      mbarrier_wait_parity(tmem_full_bar(accum.slot), accum.phase, trace.span(Phase::kWaitTmemFull, accum.slot));
      tcgen05_fence_after_thread_sync();
      const uint32_t acc_tmem = tmem_offset(tmem_base, uint32_t(quarter * 32), uint32_t(accum.slot * BLOCK_N));
      const int row0 = tile.m0 + quarter * SUB_M;  // the warp's first row of C
      for (int sub = 0; sub < NUM_SUBTILES; ++sub) {
        const int col0 = tile.n0 + sub * SUB_N;
        uint32_t r[SUB_N];
        tmem_ld_32x32b_x32(tmem_offset(acc_tmem, 0, uint32_t(sub * SUB_N)), r);
        tmem_ld_32x32b_x32(tmem_offset(acc_tmem, 0, uint32_t(sub * SUB_N + 32)), r + 32);
        tmem_wait_ld(r);
        tcgen05_fence_before_thread_sync();  // orders the loads before the arrival and the __syncwarps below
        if (sub == NUM_SUBTILES - 1) {
          // The last tcgen05.ld of the tile has completed (wait::ld): release the accumulator to
          // the leader's MMA warp now, before storing (one lane per warp; the barrier counts warps).
          if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
          accum.advance(NUM_ACCUMULATORS);
        }
        if (!tma_epilogue) {  // N % 8 != 0: no tensor map for C, step 06's direct stores
          for (int j = 0; j < SUB_N; j += 8) store_c_chunk8(c, m, n, row0 + lane, col0 + j, r + j);
          tcgen05_fence_after_thread_sync();
          continue;
        }
        // The store issued from this buffer NUM_STAGING sub-tiles ago must have read it: at most
        // NUM_STAGING - 1 newer groups may still be reading. Then the warp may overwrite it.
        const uint32_t buf = staging(quarter, staging_buf);
        if (lane == STORE_LANE) bulk_wait_group_read<NUM_STAGING - 1>();
        __syncwarp();
        // Row `lane` of the sub-tile, 128B-swizzled: 16-byte chunk j lands at j ^ (lane % 8).
        for (int j = 0; j < SUB_N / 8; ++j)
          st_shared_v4(swizzle_addr(buf + uint32_t(lane) * 128 + uint32_t(j) * 16, 128),
                       pack_bf16x2(u32_as_float(r[8 * j + 0]), u32_as_float(r[8 * j + 1])),
                       pack_bf16x2(u32_as_float(r[8 * j + 2]), u32_as_float(r[8 * j + 3])),
                       pack_bf16x2(u32_as_float(r[8 * j + 4]), u32_as_float(r[8 * j + 5])),
                       pack_bf16x2(u32_as_float(r[8 * j + 6]), u32_as_float(r[8 * j + 7])));
        // Each lane's generic stores, then the warp's: visible to the async proxy of lane 0's store.
        fence_proxy_async_shared_cta();
        __syncwarp();
        tcgen05_fence_after_thread_sync();  // the next tcgen05.ld comes after this synchronisation
        if (lane == STORE_LANE) {
          if (row0 < m && col0 < n) tma_store_2d(&tmap_c, buf, col0, row0);  // clipped at M and N
          bulk_commit_group();  // one group per sub-tile, also an empty one: the waits count groups
        }
        staging_buf = (staging_buf + 1) % NUM_STAGING;
      }
    }
    // The CTA's shared memory ends with it: the last stores must have read their staging buffers.
    if (lane == STORE_LANE) bulk_wait_group_read<0>();
  }

  trace.begin(Phase::kTeardown);
  // As in step 05: every warp of BOTH CTAs must be done with TMEM before the pair's allocation
  // is freed, and no CTA may exit while its peer can still reach its shared memory.
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc_2sm(tmem_base, TMEM_COLS);
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

// C as the TMA store sees it: row-major M x N BF16, one box = one staging buffer (SUB_N columns x
// SUB_M rows), 128B-swizzled like the buffer the epilogue wrote.
static CUtensorMap make_c_store_map(__nv_bfloat16* c, int m, int n) {
  TiledMap t;
  t.rank = 2;
  t.dtype = TmaDtype::kBF16;
  t.base = c;
  t.dims[0] = uint64_t(n);
  t.dims[1] = uint64_t(m);
  t.strides[0] = uint64_t(n) * 2;  // a multiple of 16 bytes: N % 8 == 0
  t.box[0] = SUB_N;
  t.box[1] = SUB_M;
  t.swizzle = TmaSwizzle::k128B;
  return make_tensor_map(t);
}

// The report's "epilogue:" line: the TMA-store epilogue needs a tensor map of C, whose row pitch
// must be a multiple of 16 bytes (N % 8 == 0; the harness's C buffers are 256-byte aligned).
const char* epilogue_of(int64_t, int64_t n, int64_t) {
  return n % 8 == 0 ? "TMA stores (tcgen05.ld -> swizzled shared memory -> cp.async.bulk.tensor), N % 8 == 0"
                    : "step 06's direct global stores from registers (N % 8 != 0: no tensor map for C)";
}

constexpr StepSpec spec{8, "tma_store_epilogue", "step 06 + TMA-store epilogue through swizzled smem, early TMEM release",
                        Arch::kSm100f, 8, Operands::kBF16, nullptr, CLUSTER_SIZE, &epilogue_of, false,
                        PersistentTile{PAIR_M, BLOCK_N, CLUSTER_SIZE}};

void launch(const GemmArgs& g) {
  const int sms = num_sms();
  if (sms < CLUSTER_SIZE)
    throw std::runtime_error("step08 needs at least " + std::to_string(CLUSTER_SIZE) + " SMs (one CTA pair); the GPU has " +
                             std::to_string(sms));
  const CUtensorMap tmap_a = make_kmajor_sw128_map(g.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_kmajor_sw128_map(g.b, g.n, g.k, B_ROWS);
  // The TMA-store epilogue needs C's rows 16-byte aligned (a tensor map's row pitch).
  const bool tma_epilogue = g.n % 8 == 0 && reinterpret_cast<uintptr_t>(g.c) % 16 == 0;
  const CUtensorMap tmap_c = tma_epilogue ? make_c_store_map(g.c, g.m, g.n) : CUtensorMap{};
  LaunchDims d;
  d.grid = dim3(unsigned(CLUSTER_SIZE * num_clusters_for(sms, g.m, g.n)));
  d.block = dim3(NUM_THREADS);
  d.cluster = dim3(CLUSTER_SIZE, 1, 1);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, tmap_c, tma_epilogue, g.c, g.m, g.n, g.k, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
