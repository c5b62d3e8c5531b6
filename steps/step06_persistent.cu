// Step 06 — persistent kernel: one CTA pair per SM pair walks many output tiles, with a static
// tile schedule and a double-buffered accumulator in TMEM.
//
// NEW SINCE STEP 05
//   Step 05 launched one CTA pair per 256 x 256 output tile: set up, compute, store, exit. Here
//   the grid is sized by the GPU, not by the problem: 2 * min(num_sms / 2, num_pair_tiles) CTAs
//   in clusters of 2 (148 SMs on a B200: 74 pairs), and each pair computes tile after tile.
//   * Static schedule: cluster c of C takes tiles c, c + C, c + 2C, ... (scheduled_tile()), so
//     the tiles in flight at any moment are about C consecutive tile numbers. Tile numbers map
//     to (pair row, column) in BANDS of BAND_PAIR_ROWS = 8 pair rows (2048 rows of C), and
//     inside a band the walk goes down M first (pair_tile_at()): consecutive tile numbers share
//     a B slab (256 rows of B), and the band's A slabs are reused by every column of the band.
//     Why: with C = 74, the tiles in flight form a block of 8 pair rows x ~9 columns, reading
//     8 A slabs and ~9 B slabs from L2, where walking along N first (step 05's order) covers
//     ~5 pair rows x all 16 columns (at 4096^3: 17 slabs in flight instead of 21). It matters
//     once the operands outgrow L2: at M = N = 16384, K = 8192 the 64 B slabs are 256 MiB, and
//     the N-first walk streams all of them from HBM again for every pair row (64 times), the
//     banded walk once per band (8 times; a band's A is 32 MiB and stays in L2). At 4096^3 all
//     of A and B (64 MiB) fit in a B200's L2 either way.
//   * Two accumulators in TMEM: one tcgen05.alloc.cta_group::2 of all 512 columns, accumulator
//     a at columns 256 a. The leader's MMA warp computes tile i into accumulator i % 2 while the
//     epilogue warps of both CTAs drain tile i - 1 from the other one. Step 05's single
//     mainloop_done_bar becomes a "full" and an "empty" barrier per accumulator:
//       tmem_full_bar[a]   (both CTAs, count 1): the leader's MMA warp commits it with
//                          .multicast::cluster after the tile's last MMA; each CTA's epilogue
//                          waits on its own;
//       tmem_empty_bar[a]  (used in the leader, count 8 = 2 CTAs x 4 epilogue warps): each
//                          epilogue warp of BOTH CTAs arrives once (mapa to the leader) after its
//                          last tcgen05.ld of the tile completed; the MMA warp waits on it
//                          before it writes that accumulator again.
//   * Every role loops over the same tiles with ring positions that CONTINUE across tiles: the
//     shared-memory ring (stage, parity) of the producer and of the MMA warp, and the
//     accumulator ring (accumulator, parity) of the MMA warp and the epilogue (RingPos).
//   * Exit: the producer drains the smem ring as in step 05; the MMA warp likewise waits until
//     both accumulators are released, so no epilogue arrival is still travelling to the
//     leader; then the cluster barrier and tcgen05.dealloc as in step 05.
//
// WHY IT IS FASTER
//   In step 05 the tensor core of a pair sits idle from the last MMA of its tile until the next
//   pair on those SMs issues its first MMA: the epilogue (each CTA reads 128 KiB of TMEM and
//   stores 64 KiB of C), the teardown (cluster barrier, dealloc, exit), the launch of the next
//   CTAs, their setup (barrier init, TMEM alloc, cluster barrier) and the first TMA round trip.
//   Here the setup happens once per SM, and the epilogue of tile i overlaps the mainloop of
//   tile i + 1. That hides it completely as long as one epilogue is shorter than one mainloop:
//   a pair's tile is 2 x 256 x 256 x K FLOP on 2 SMs; at the published cuBLAS rate (~1507
//   TFLOPS, ~10.2 per SM) that is K x 6.4 ns, 26 us at K = 4096, while storing 64 KiB per SM
//   with all 148 SMs at once (9.25 MiB at ~8 TB/s of HBM) is ~1.2 us, plus TMEM reads and
//   latency. So the epilogue is hidden for K above a few hundred. (These are estimates from
//   published figures, not measurements.)
//   The published B200 figures for this design are ~1476 TFLOPS at 4096^3 vs ~1302 for the
//   step-05 design (gau-nernst, "tcgen05 for dummies", docs/references.md, "v6" and "v5"; not measured here): 93 us
//   instead of 106 us for 256 tiles on 74 pairs, i.e. 4 rounds (3.46), ~3 us saved per round
//   — about the epilogue plus the teardown and setup estimated above.
//   What it does not fix: 256 tiles on 74 pairs leave 40 pairs idle in the 4th round (a static
//   schedule cannot rebalance; dynamic schemes such as Blackwell's cluster launch control can).
//
// BUDGETS
//   Shared memory: as step 05, 7 stages x 32 KiB = 224 KiB, plus 18 barriers (7 full, 7 empty,
//   2 tmem_full, 2 tmem_empty) and the TMEM slot: 229524 B + 1 KiB alignment slack = 230548 B
//   <= 232448 B (227 KiB), so one CTA per SM.
//   TMEM: 2 accumulators x 256 FP32 columns = 512 columns = all of an SM's TMEM (128 lanes x
//   512 columns, PTX ISA §9.7.16.1). One CTA per SM is also what that allows.
//
// CONSTRAINTS
//   Any M, N >= 1; K a multiple of 8 (TMA row pitch). At least 2 SMs (a CTA pair). As in step
//   05, a peer whose rows all lie beyond M still loads its half of B and stores nothing.
//   Correctness does not depend on all pairs being resident at once: pairs never wait for each
//   other, only the two CTAs of a pair do (and a cluster is co-scheduled by definition).
//
// RUN
//   make step06 && ./step06            (B200: real kernel; elsewhere: the emulator, 512^3)
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
constexpr int NUM_STAGES = 7;         // depth of the shared-memory ring
constexpr int ATOM_K = 64;            // elements of K in one 128-byte swizzled row
constexpr int MMA_K = 16;             // K of one kind::f16 MMA (32 bytes)
constexpr int NUM_THREADS = 192;      // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue
constexpr int NUM_EPILOGUE_WARPS = 4;
constexpr int NUM_ACCUMULATORS = 2;   // double-buffered accumulator
constexpr uint32_t TMEM_COLS = NUM_ACCUMULATORS * BLOCK_N;       // 512: the whole TMEM of the SM
constexpr int BAND_PAIR_ROWS = 8;     // schedule: pair rows per band (8 x 256 = 2048 rows of C)

// Shared memory, offsets from a 1024-byte-aligned base, identical in both CTAs (the pair MMA,
// the multicast commits and the pair allocation address the peer at the leader's offsets):
// NUM_STAGES A tiles, NUM_STAGES B halves, tma_full_bar[s] ("stage full", used in the leader),
// mma_done_bar[s] ("stage empty", both), tmem_full_bar[a] ("accumulator full", both),
// tmem_empty_bar[a] ("accumulator empty", used in the leader), the TMEM address slot.
constexpr uint32_t A_STAGE_BYTES = BLOCK_M * BLOCK_K * 2;       // 128 x 64 BF16 = 16 KiB
constexpr uint32_t B_STAGE_BYTES = B_ROWS * BLOCK_K * 2;        // 128 x 64 BF16 = 16 KiB
constexpr uint32_t A_TILES = 0;
constexpr uint32_t B_TILES = A_TILES + NUM_STAGES * A_STAGE_BYTES;
constexpr uint32_t TMA_FULL_BARS = B_TILES + NUM_STAGES * B_STAGE_BYTES;
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
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0, "128B-swizzled tiles must be 1024-byte aligned");
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
                __nv_bfloat16* c, int m, int n, int k, const __grid_constant__ TraceBuf trace_buf) {
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
    // quarters 2, 3, 0, 1 (§9.7.16.8.1).
    const auto epilogue_span = trace.span(Phase::kEpilogue);  // ends with this block
    const int quarter = warp % 4;
    RingPos accum;  // waits for parity accum.phase ("full")
    for (int i = 0; scheduled_tile(cluster, i, num_clusters) < num_tiles; ++i) {
      const CtaTile tile = cta_tile_2sm(scheduled_tile(cluster, i, num_clusters), int(cta_rank), m, n);
      // This tile's MMAs are complete.
      mbarrier_wait_parity(tmem_full_bar(accum.slot), accum.phase, trace.span(Phase::kWaitTmemFull, accum.slot));
      tcgen05_fence_after_thread_sync();
      const uint32_t acc_tmem = tmem_offset(tmem_base, uint32_t(quarter * 32), uint32_t(accum.slot * BLOCK_N));
      const int row = tile.m0 + quarter * 32 + lane;
      for (int col = 0; col < BLOCK_N; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(acc_tmem, 0, uint32_t(col)), r);
        tmem_wait_ld(r);
        store_c_chunk8(c, m, n, row, tile.n0 + col, r);
        store_c_chunk8(c, m, n, row, tile.n0 + col + 8, r + 8);
      }
      // Release the accumulator to the leader's MMA warp. Every tcgen05.ld of this warp has
      // completed (tcgen05.wait::ld, §9.7.16.8.5), and the fence orders them before the arrival
      // (§9.7.16.6.4). One lane per warp: the barrier counts warps. The arrival goes to the
      // leader's barrier (the same offset, mapa) from both CTAs.
      tcgen05_fence_before_thread_sync();
      if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
      accum.advance(NUM_ACCUMULATORS);
    }
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

constexpr StepSpec spec{6, "persistent", "persistent CTA pairs, static tile schedule, double-buffered TMEM", Arch::kSm100f,
                        8, Operands::kBF16, nullptr, CLUSTER_SIZE, nullptr, false,
                        PersistentTile{PAIR_M, BLOCK_N, CLUSTER_SIZE}};

void launch(const GemmArgs& g) {
  const int sms = num_sms();
  if (sms < CLUSTER_SIZE)
    throw std::runtime_error("step06 needs at least " + std::to_string(CLUSTER_SIZE) + " SMs (one CTA pair); the GPU has " +
                             std::to_string(sms));
  const CUtensorMap tmap_a = make_kmajor_sw128_map(g.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_kmajor_sw128_map(g.b, g.n, g.k, B_ROWS);
  LaunchDims d;
  d.grid = dim3(unsigned(CLUSTER_SIZE * num_clusters_for(sms, g.m, g.n)));
  d.block = dim3(NUM_THREADS);
  d.cluster = dim3(CLUSTER_SIZE, 1, 1);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, g.c, g.m, g.n, g.k, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
