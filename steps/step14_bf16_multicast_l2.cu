// Step 14 — BF16 with B multicast across CTA pairs and an L2-aware tile order: step 09's kernel
// (2-SM MMA, persistent, tiles taken over with cluster launch control, TMA-store epilogue) in
// clusters of P CTA pairs stacked along M. The P pairs of a cluster compute tiles of one column of
// C, so they need the same rows of B: each stage's B is loaded once for all of them, by one pair
// in turn, with a .multicast::cluster copy; and cluster tiles are numbered in supergroups of G
// rows so that the clusters running at once share their rows of A and B in L2.
//
// NEW SINCE STEP 09
//   * Clusters of 2P CTAs (P = 1, 2 or 4; the plan picks it, TCG_STEP14_PAIRS forces it): rank
//     2q + r is CTA r of pair q; the cluster's tile is P pair tiles of one column of tiles, pair q
//     taking pair row P x (cluster row) + q. The grid has one cluster per cluster tile, and
//     try_cancel hands out cluster tiles (first_ctaid / 2P).
//   * B: stage kt's two 128-row halves are issued by the pair q = kt % P, CTA r its half r, with
//     cp.async.bulk.tensor.cta_group::2 ... .multicast::cluster to the CTAs of rank r in every
//     pair (mask 0b0101... << r): the bytes land at the same offset in each, and each signals the
//     tma_full_bar of its own pair's leader (the .cta_group::2 form picks the barrier in the
//     destination's pair by the barrier operand's parity, PTX ISA §9.7.9.25.5.2). Every leader
//     still expects the whole stage (A of both CTAs, B of both halves), whoever issued the B.
//     A stays each CTA's own.
//   * A slot is free only when every pair's MMAs have read it (its B may be refilled for all of
//     them by another pair): mma_done_bar counts P arrivals, and each leader's MMA warp commits
//     with .multicast::cluster to all 2P CTAs.
//   * Tile order (pair_tile_at): supergroups of G cluster rows, column by column inside one, down
//     M first; G from the plan (TCG_STEP14_GROUP forces it; G = 1 is row after row, "linear").
//     Step 09's bands were this order with G fixed at 8 pair rows.
//   * The scheduler ring: rank 0 asks for tiles and arms sched_full_bar in all 2P CTAs; every
//     consumer of the cluster (the producer and 4 epilogue warps of each CTA, each leader's MMA
//     warp) releases the slot on rank 0's sched_empty_bar: 11 P arrivals.
//
// WHAT IT CHANGES (model; per stage of 64 of K on one SM's TMA unit: 54 ns a box + 311 B/ns)
//   Step 09: A (16 KiB) + B half (16 KiB), 2 boxes: 2 x 107 = 214 ns, against 275 ns of MMAs
//   (4 x N/2 cycles at N = 256): the tensor core, not the TMA unit, paces it.
//   P = 2: the issuing pair's SMs pay A + B (214 ns), the other pair's A + half a box as the
//   receiver's share (H100-measured, 0.5): 160 ns; over two stages 187 ns a stage. P = 4: 174 ns.
//   Both were already under the MMAs, so the saving does not show as time. B is also read from L2
//   once per cluster instead of once per pair.
//   In the model (`--predict`, results/model_b200_sweeps.csv): the plan takes P = 1 at 4096^3 and
//   8192^3, 1837 and 2208 TFLOPS, as step 09; forced, P = 4 gives 1839 at 4096^3 and multicast
//   2064 at 8192^3.
//   The tile order: at 4096^3 A, B and C are 96 MiB, within the model's L2 (126 MB x 0.9), so
//   every order reads each byte from HBM once. At 8192^3 A and B are 256 MiB: row after row
//   (G = 1) the clusters at once span all 32 columns and B no longer fits, so each row of tiles
//   reads much of it from HBM again; in supergroups the clusters at once read ~75 MB of A and B,
//   which stay. In the model that moves HBM from 57% of the kernel to 22%, not the time: the
//   tensor core paces either way, and HBM has room.
//   docs/14_bf16_multicast_l2.md has the model's numbers per lever, shape and range.
//
// BUDGETS
//   Shared memory and TMEM: step 09's (the ring is the same; multicast saves copies and L2 reads,
//   not shared memory): 230608 B with the alignment slack, 512 TMEM columns.
//
// CONSTRAINTS
//   Step 09's, and at least 2P SMs. A cluster tile reaching past M still runs all P pairs (the
//   B they share needs every issuer): the pairs past M load zeros (TMA fills rows out of bounds)
//   and store nothing. TCG_STEP14_PAIRS=1|2|4 and TCG_STEP14_GROUP=1..64 force the plan.
//
// RUN
//   make step14 && ./step14            (B200: real kernel; elsewhere: the emulator, by default
//                                       1024 x 768 x 512 on 8 SMs: P = 4, 3 cluster tiles, 2 canceled)
//   ./step14 --predict --m 8192 --n 8192 --k 8192    (the B200 timing model; TCG_STEP14_GROUP=1: linear)
#include <cstdio>

#include "../common/kernel_common.cuh"
#include "../common/bf16_plan.h"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int PAIR_SIZE = 2;          // one CTA pair: rank 2q (leader) and 2q + 1 (peer)
constexpr int MAX_PAIRS = 4;          // P <= 4: clusters of at most 8 CTAs (the portable size)
static_assert(PAIR_SIZE * MAX_PAIRS <= 8 && MAX_PAIRS <= 8, "a cluster of P pairs fits the portable cluster size and the 16-bit masks");
constexpr int BLOCK_M = 128;          // A and C rows per CTA: one TMEM lane per output row
constexpr int BLOCK_N = 256;          // = MMA N: one TMEM column per output column, in both CTAs
constexpr int PAIR_M = PAIR_SIZE * BLOCK_M;             // = MMA M = 256: output rows per pair
constexpr int B_ROWS = BLOCK_N / PAIR_SIZE;             // B rows per CTA: each holds half of N
constexpr int BLOCK_K = 64;           // elements of K per stage: 1 swizzle atom (4 MMA k-steps)
constexpr int NUM_STAGES = 6;         // depth of the shared-memory ring (7 in step 06: see BUDGETS)
constexpr int ATOM_K = 64;            // elements of K in one 128-byte swizzled row
constexpr int MMA_K = 16;             // K of one kind::f16 MMA (32 bytes)
constexpr int NUM_THREADS = 224;      // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue, warp 6: scheduler
constexpr int NUM_EPILOGUE_WARPS = 4;
constexpr int NUM_ACCUMULATORS = 2;   // double-buffered accumulator
constexpr uint32_t TMEM_COLS = NUM_ACCUMULATORS * BLOCK_N;       // 512: the whole TMEM of the SM
constexpr int SUB_N = 64;             // epilogue sub-tile: 64 columns of BF16 = one 128-byte swizzled row
constexpr int SUB_M = 32;             //   x the 32 rows (TMEM lanes) of one epilogue warp
constexpr int NUM_SUBTILES = BLOCK_N / SUB_N;                     // 4 per tile
constexpr int NUM_STAGING = 2;        // staging buffers per epilogue warp (double-buffered)
constexpr int STORE_LANE = 0;         // the lane that issues, commits and waits for the warp's TMA stores
constexpr int SCHEDULER_WARP = 6;     // the leader's warp 6 asks for tiles (try_cancel); the peer's is idle
constexpr int NUM_SCHED_SLOTS = 2;    // the scheduler ring: try_cancel responses in flight or being read

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
// The scheduler ring (new): slot s holds a 16-byte try_cancel response (naturally aligned, §9.7.13.17),
// sched_full_bar[s] (both CTAs, count 1 + 16 transaction bytes: the multicast response landed here)
// and sched_empty_bar[s] (used in the leader: every consumer of the pair has read the response).
constexpr uint32_t CLC_RESPONSES = (TMEM_SLOT + 4 + 15) / 16 * 16;
constexpr uint32_t SCHED_FULL_BARS = CLC_RESPONSES + NUM_SCHED_SLOTS * 16;
constexpr uint32_t SCHED_EMPTY_BARS = SCHED_FULL_BARS + NUM_SCHED_SLOTS * 8;
constexpr uint32_t SMEM_BYTES = SCHED_EMPTY_BARS + NUM_SCHED_SLOTS * 8;
constexpr uint32_t CLC_RESPONSE_BYTES = 16;

constexpr uint32_t STAGE_BYTES = (BLOCK_M + B_ROWS) * BLOCK_K * 2;  // what one CTA's TMA delivers per k-tile
constexpr uint32_t PAIR_STAGE_BYTES = PAIR_SIZE * STAGE_BYTES;     // what the leader's tma_full_bar receives
constexpr uint32_t ATOM_COLUMN_A = BLOCK_M * 128;                   // bytes of one 128-byte-wide atom column
constexpr uint32_t ATOM_COLUMN_B = B_ROWS * 128;
constexpr uint32_t SBO_SW128 = 8 * 128;                             // next 8-row group
constexpr uint32_t TMEM_EMPTY_ARRIVALS = PAIR_SIZE * NUM_EPILOGUE_WARPS;     // 8: every epilogue warp of the pair
// Who reads every response, per pair: the producer and the 4 epilogue warps of both CTAs, and the
// leader's MMA warp; the cluster's P pairs all release rank 0's sched_empty_bar.
constexpr uint32_t SCHED_CONSUMERS_PER_PAIR = PAIR_SIZE * (1 + NUM_EPILOGUE_WARPS) + 1;  // 11
static_assert(CLC_RESPONSES % 16 == 0, "a try_cancel response is a naturally aligned 16-byte location");static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0 && STAGING_BYTES % 1024 == 0,
              "128B-swizzled tiles and staging buffers must be 1024-byte aligned");
static_assert(SUB_N * 2 == 128 && SUB_M == 32 && BLOCK_N % SUB_N == 0, "a sub-tile is one warp's rows x one 128-byte swizzle span");
static_assert(SMEM_BYTES + kSmemAlignSlack <= 232448, "exceeds the sm_100 shared-memory limit");
static_assert(TMEM_COLS <= kTmemColumns && is_valid_tmem_alloc(TMEM_COLS), "the accumulators must fit one TMEM allocation");
static_assert(is_valid_f16_shape_cta2(PAIR_M, BLOCK_N), "not a cta_group::2 kind::f16 shape (PTX ISA Table 39)");
static_assert(NUM_THREADS == 32 * (3 + NUM_EPILOGUE_WARPS) && SCHEDULER_WARP == 2 + NUM_EPILOGUE_WARPS,
              "warp 0 producer, warp 1 MMA, then the epilogue warps, then the scheduler");
constexpr uint32_t IDESC = make_idesc_bf16_f32(PAIR_M, BLOCK_N);  // M = 256: the whole pair
constexpr uint16_t PAIR_MASK = 0b11;                               // ranks 0 and 1; << 2q for pair q
// The CTAs of rank r in every one of the P pairs (ranks r, r + 2, ...): B half r's multicast mask.
__host__ __device__ constexpr uint16_t same_half_mask(int pairs, int r) {
  uint16_t m = 0;
  for (int q = 0; q < pairs; ++q) m = uint16_t(m | (1u << (2 * q + r)));
  return m;
}

// ------------------------------------------------------------------------------------- schedule
// The grid has one cluster per cluster tile: P pair tiles of one column of tiles, stacked along M.
// Cluster c's own tile is number c; a tile taken over by try_cancel is the number of the canceled
// cluster (its first CTA's %ctaid.x / 2P). Numbers map to tiles in supergroups of G cluster rows:
// inside a group column by column, down M first (the last group may be shorter). Clusters launch,
// and are canceled, in about grid order, so the clusters running at once hold about consecutive
// numbers: G rows of A and about (clusters at once) / G columns of B, which the plan keeps small.
struct Order {
  int pairs;  // P: pair tiles per cluster tile, along M
  int group;  // G: cluster rows per supergroup
};
__host__ __device__ constexpr int cluster_rows(int m, int pairs) { return ceil_div(ceil_div(m, PAIR_M), pairs); }
__host__ __device__ constexpr int num_cluster_tiles(int m, int n, int pairs) {
  return cluster_rows(m, pairs) * ceil_div(n, BLOCK_N);
}

// Tile number -> the tile of pair q of the cluster that holds it.
struct PairTile {
  int pair_m;  // pair row: output rows 256 pair_m .. +255
  int pair_n;  // column tile: output columns 256 pair_n .. +255
};
__host__ __device__ constexpr PairTile pair_tile_at(int tile, int q, int m, int n, Order o) {
  const int rows = cluster_rows(m, o.pairs), tiles_n = ceil_div(n, BLOCK_N);
  const int group = tile / (o.group * tiles_n);
  const int in_group = tile % (o.group * tiles_n);
  const int group_rows = rows - group * o.group < o.group ? rows - group * o.group : o.group;
  return {(group * o.group + in_group % group_rows) * o.pairs + q, in_group / group_rows};
}

// Which rows a CTA holds for one tile: as in step 05, the two CTAs of a pair take consecutive
// 128-row M tiles of the same N tile, and CTA r of the pair holds B rows n0 + 128 r .. +127.
struct CtaTile {
  int m0;      // first row of A and of C held by this CTA (128 rows)
  int n0;      // first column of C of the pair's tile (256 columns, in both CTAs)
  int b_row0;  // first row of B held by this CTA (128 rows): its half of the 256
};
__host__ __device__ constexpr CtaTile cta_tile_2sm(int tile, int cta_rank, int m, int n, Order o) {
  const PairTile p = pair_tile_at(tile, cta_rank / PAIR_SIZE, m, n, o);
  const int r = cta_rank % PAIR_SIZE;
  return {p.pair_m * PAIR_M + r * BLOCK_M, p.pair_n * BLOCK_N, p.pair_n * BLOCK_N + r * B_ROWS};
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
                Order order, const __grid_constant__ TraceBuf trace_buf) {
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
  auto clc_response = [&](int s) { return smem_base + CLC_RESPONSES + CLC_RESPONSE_BYTES * s; };
  auto sched_full_bar = [&](int s) { return smem_base + SCHED_FULL_BARS + 8 * s; };
  auto sched_empty_bar = [&](int s) { return smem_base + SCHED_EMPTY_BARS + 8 * s; };
  const uint32_t tmem_slot = smem_base + TMEM_SLOT;  // where tcgen05.alloc writes the TMEM address

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t cta_rank = cluster_ctarank();
  const int pairs = order.pairs, cluster_ctas = PAIR_SIZE * pairs;
  const int pair = int(cta_rank) / PAIR_SIZE, half = int(cta_rank) % PAIR_SIZE;  // CTA `half` of pair `pair`
  const bool is_leader = half == 0;                // the even CTA of the pair issues the MMAs
  const uint32_t leader_rank = cta_rank & ~1u;
  constexpr uint32_t SCHED_RANK = 0;               // the CTA whose warp 6 asks for tiles for the cluster
  const uint16_t pair_mask = uint16_t(PAIR_MASK << (PAIR_SIZE * pair));      // this pair's two CTAs
  const uint16_t cluster_mask = uint16_t((1u << cluster_ctas) - 1);          // every CTA of the cluster
  const uint16_t b_mask = same_half_mask(pairs, half);  // the CTAs that hold the same half of B
  const int own_tile = int(cluster_id_x());  // the tile of this cluster; more come from try_cancel
  const int num_k_tiles = ceil_div(k, BLOCK_K);

  // A consumer of the scheduler ring (producer, MMA, epilogue): wait until the slot's response
  // has landed in this CTA, decode it, and hand the slot back to the leader's scheduler. Returns
  // the next tile number, or -1 when the cancel failed: no cluster was left to take over, all the
  // grid's tiles are handed out, and this role is done. `whole_warp`: all 32 lanes call it (they
  // all need the tile) and one arrival stands for the warp.
  auto next_tile = [&](RingPos& sched, bool whole_warp) {
    mbarrier_wait_parity(sched_full_bar(sched.slot), sched.phase);
    const ClcResponse response = clc_load_response(clc_response(sched.slot));
    // get_first_ctaid is undefined for a failed response (§9.7.13.18): test is_canceled first.
    const int tile = clc_query_is_canceled(response) ? int(clc_query_first_ctaid_x(response)) / cluster_ctas : -1;
    // This generic-proxy read must come before the next try_cancel's async-proxy write into the
    // slot (the ISA's example fences here, §9.7.13.17); the arrival then releases it.
    fence_proxy_async_shared_cta();
    if (whole_warp) __syncwarp();
    if (!whole_warp || lane == 0) mbarrier_arrive_cluster(mapa_shared_cluster(sched_empty_bar(sched.slot), SCHED_RANK));
    sched.advance(NUM_SCHED_SLOTS);
    return tile;
  };

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
      mbarrier_init(mma_done_bar(s), uint32_t(pairs));  // every pair's leader's multicast tcgen05.commit
    }
    for (int a = 0; a < NUM_ACCUMULATORS; ++a) {
      mbarrier_init(tmem_full_bar(a), 1);                     // the leader's multicast tcgen05.commit
      mbarrier_init(tmem_empty_bar(a), TMEM_EMPTY_ARRIVALS);  // every epilogue warp of both CTAs (leader only)
    }
    for (int s = 0; s < NUM_SCHED_SLOTS; ++s) {
      mbarrier_init(sched_full_bar(s), 1);  // the scheduler's arrive.expect_tx(16), in every CTA
      mbarrier_init(sched_empty_bar(s), SCHED_CONSUMERS_PER_PAIR * uint32_t(pairs));  // every consumer (rank 0 only)
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
      RingPos sched;  // the scheduler ring, read in order by every consumer: waits for parity sched.phase ("full")
      for (int tile_no = own_tile; tile_no >= 0; tile_no = next_tile(sched, false)) {
        const CtaTile tile = cta_tile_2sm(tile_no, int(cta_rank), m, n, order);
        for (int kt = 0; kt < num_k_tiles; ++kt) {
          // Every pair's MMAs have read this slot (mma_done_bar counts P commits): this CTA may
          // refill it, here and, with B's multicast, in the other pairs. A fresh barrier counts
          // its previous (nonexistent) phase, parity 1, as complete: the first lap does not wait.
          mbarrier_wait_parity(mma_done_bar(stage.slot), stage.phase ^ 1,
                               trace.span_elected(Phase::kWaitMmaDone, stage.slot));
          // Both CTAs' copies complete on the leader's tma_full_bar (§9.7.9.25.5.2); its single
          // arrival announces the pair's bytes, both B halves included whichever pair issues them
          // (a peer pair's multicast may land first: the phase still waits for this arrival).
          if (is_leader) mbarrier_arrive_expect_tx(tma_full_bar(stage.slot), PAIR_STAGE_BYTES);
          const uint32_t leader_full_bar = mapa_shared_cluster(tma_full_bar(stage.slot), leader_rank);
          for (int j = 0; j < BLOCK_K / ATOM_K; ++j) {
            tma_load_2d_2sm(a_tile(stage.slot) + j * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + j * ATOM_K, tile.m0,
                            leader_full_bar);
            // B half `half`: pair kt % P issues it for the P pairs (P = 1: step 09's own copy).
            if (pairs == 1)
              tma_load_2d_2sm(b_tile(stage.slot) + j * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + j * ATOM_K, tile.b_row0,
                              leader_full_bar);
            else if (kt % pairs == pair)
              tma_load_2d_2sm_multicast(b_tile(stage.slot) + j * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + j * ATOM_K,
                                        tile.b_row0, leader_full_bar, b_mask);
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
      RingPos sched;  // the scheduler ring
      for (int tile_no = own_tile; tile_no >= 0; tile_no = next_tile(sched, false)) {
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
          // One of the P arrivals that free the stage, in every CTA of the cluster, once these MMAs
          // have read it (§9.7.16.12.1): any pair may refill it for this one.
          mma_commit_2sm_multicast(mma_done_bar(stage.slot), cluster_mask);
          stage.advance(NUM_STAGES);
        }
        // Accumulator full in both CTAs once every MMA of the tile has completed: a commit tracks
        // all earlier tcgen05 operations of this thread (§9.7.16.12.1).
        mma_commit_2sm_multicast(tmem_full_bar(accum.slot), pair_mask);
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
  } else if (warp == SCHEDULER_WARP) {
    // ---------------------------------------------------------------- scheduler warp, rank 0 only
    // Asks for the cluster's next tile while the roles work on the current ones: one try_cancel at
    // a time, its response multicast into slot s of every CTA's ring. A slot is reused only once
    // all the cluster's consumers have read it (sched_empty_bar), so the ring keeps the scheduler at
    // most NUM_SCHED_SLOTS responses ahead of the slowest consumer (the epilogue): a cluster never holds
    // more than that in reserve, which is what keeps the end of the grid balanced. It stops at the
    // first failed response: another try_cancel after one is seen to fail is undefined (§9.7.13.17).
    if (cta_rank == SCHED_RANK && elect_one_sync()) {
      RingPos slot;
      for (bool more = true; more;) {
        // Everyone has read this slot's previous response (a fresh barrier passes parity 1).
        mbarrier_wait_parity(sched_empty_bar(slot.slot), slot.phase ^ 1);
        // Arm the slot's sched_full_bar in both CTAs: one arrival and the 16 bytes each will
        // receive (the complete_tx may land before the peer's arrival; the phase needs both).
        for (uint32_t r = 0; r < uint32_t(cluster_ctas); ++r)
          mbarrier_arrive_expect_tx_cluster(mapa_shared_cluster(sched_full_bar(slot.slot), r),
                                            CLC_RESPONSE_BYTES);
        clc_try_cancel_multicast(clc_response(slot.slot), sched_full_bar(slot.slot));
        mbarrier_wait_parity(sched_full_bar(slot.slot), slot.phase);
        more = clc_query_is_canceled(clc_load_response(clc_response(slot.slot)));
        fence_proxy_async_shared_cta();  // as in next_tile: this read before a later try_cancel's write
        slot.advance(NUM_SCHED_SLOTS);
      }
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
    RingPos sched;    // the scheduler ring
    int staging_buf = 0;  // the staging ring: continues across tiles, like the other rings
    for (int tile_no = own_tile; tile_no >= 0; tile_no = next_tile(sched, true)) {
      const CtaTile tile = cta_tile_2sm(tile_no, int(cta_rank), m, n, order);
      mbarrier_wait_parity(tmem_full_bar(accum.slot), accum.phase,
                           trace.span(Phase::kWaitTmemFull, accum.slot));  // this tile's MMAs are complete
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

// The plan (common/bf16_plan.cpp): P and G for this problem, or the knobs' values.
static bf16::Plan plan_for(int m, int n, int k, int sms) {
  bf16::Forced f;
  f.pairs = env_knob("TCG_STEP14_PAIRS", {1, 2, 4}, 0);
  f.group = env_knob_range("TCG_STEP14_GROUP", 1, 64, 0);
  return bf16::plan(m, n, k, sms, f);
}
static StepPlan plan_line(int m, int n, int k, int sms) {
  const bf16::Plan p = plan_for(m, n, k, sms);
  return {p.line(), p.pairs == 1 ? "B multicast (P = 1: each pair loads its own B)" : ""};
}

constexpr StepSpec spec{14, "bf16_multicast_l2", "step 09 + B multicast across CTA pairs, supergroup tile order",
                        Arch::kSm100f, 8, Operands::kBF16, nullptr, PAIR_SIZE, &epilogue_of, /*repeat=*/true,
                        PersistentTile{PAIR_M, BLOCK_N, PAIR_SIZE}, &plan_line,
                        "  TCG_STEP14_PAIRS=1|2|4   forces P, the CTA pairs per cluster sharing B's copies (2P <= SMs)\n"
                        "  TCG_STEP14_GROUP=1..64   forces G, cluster rows per supergroup of the tile order (1: row after row)\n",
                        /*sim_default=*/{1024, 768, 512, 8}};

void launch(const GemmArgs& g) {
  const int sms = num_sms();
  const bf16::Plan p = plan_for(g.m, g.n, g.k, sms);
  const CUtensorMap tmap_a = make_kmajor_sw128_map(g.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_kmajor_sw128_map(g.b, g.n, g.k, B_ROWS);
  // The TMA-store epilogue needs C's rows 16-byte aligned (a tensor map's row pitch).
  const bool tma_epilogue = g.n % 8 == 0 && reinterpret_cast<uintptr_t>(g.c) % 16 == 0;
  const CUtensorMap tmap_c = tma_epilogue ? make_c_store_map(g.c, g.m, g.n) : CUtensorMap{};
  LaunchDims d;
  // As large as the tile grid: one cluster of 2P CTAs per cluster tile. The clusters the GPU
  // launches first take over the others' tiles with try_cancel.
  const int cluster_ctas = PAIR_SIZE * p.pairs;
  d.grid = dim3(unsigned(cluster_ctas * num_cluster_tiles(g.m, g.n, p.pairs)));
  d.block = dim3(NUM_THREADS);
  d.cluster = dim3(unsigned(cluster_ctas), 1, 1);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  // The plan assumed SMs / 2P clusters at once (the model places clusters on any SMs); a cluster
  // runs inside one GPC, so on a GPU ask the driver, and say so once if fewer fit.
  static bool told = false;
  const int fit = told ? -1 : max_active_clusters(gemm_kernel<false>, d);
  if (fit >= 0 && fit < p.at_once)
    std::fprintf(stderr, "step14: note: %d clusters of %d CTAs fit at once on this GPU, the plan assumed %d "
                 "(TCG_STEP14_PAIRS=2 to compare)\n", fit, cluster_ctas, p.at_once);
  told = true;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, tmap_c, tma_epilogue, g.c, g.m, g.n, g.k,
                Order{p.pairs, p.group}, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
