// Step 13 — NVFP4 with A multicast: the MC CTAs that compute neighbouring tiles of C along N
// need the same rows of A and of its scales; one of them loads each stage's A and SFA for all of
// them with a .multicast::cluster copy, so each SM's TMA unit carries a share of A, not all of it.
//
// NEW SINCE STEP 12
//   * Clusters of MC x S CTAs (MC = 1, 2 or 4 tiles along N, each with its S splits): rank =
//     (tile % MC) * S + split. The CTAs of one split share A's k-tiles.
//   * Stage i's A (one 3-D box of two k-tiles) and SFA (one bulk copy) are issued by the CTA with
//     tile % MC == i % MC, with cp.async.bulk{.tensor} ... .multicast::cluster into all MC CTAs:
//     the bytes land at the same offset in each, and each one's tma_full_bar[s] gets their
//     complete_tx. Every CTA still expects the whole stage and loads its own B and SFB.
//   * A slot is free only when all MC CTAs have read it: mma_done_bar counts MC arrivals, and
//     each MMA warp commits with tcgen05.commit ... .multicast::cluster to the MC CTAs' barriers.
//   * A cluster barrier after the barrier inits (the peers' copies and commits signal them),
//     relaxed, around the __syncthreads that publishes the TMEM address.
//
// WHY IT CAN BE FASTER (model; per two-k-tile stage on one SM's TMA unit, 54 ns a copy + 311 B/ns)
//   Step 12: 4 copies, 72 KiB (BLOCK_N 128) or 56 KiB (64): 454 or 402 ns.
//   MC = 2:  B + SFB, and A + SFA issued on one stage in two for both CTAs (the issuer pays once),
//            received on the other at half a box's cost (H100-measured):     397 or 345 ns.
//   MC = 4:  the same, A issued on one stage in four:                        369 or 316 ns.
//   Once the TMA unit has less to do, the ring's latency shows (a slot comes back one TMA latency
//   + its copies + its MMAs + two hand-offs after it was freed: 3 stages of BLOCK_N 128 give a
//   stage every ~535 ns at best), HBM is near its rate on the first shape, and the cluster barrier after the inits
//   is paid once. Measured in the model (`./step13 --predict`, us; the plan's choice in brackets):
//                                     128x7168x16384    128x4096x7168    128x7168x2048
//     step 12                                 13.91             6.20             3.88
//     step 13 (BLOCK_N, MC, S)         14.12 (128, 2, 2)  6.20 (64, 1, 2)  4.01 (64, 4, 1)
//     published competition entry (B200)       18.3             8.29             6.54
//   (kernel times against the entry's call times: docs/13 compares like with like). At these TMA
//   figures the planner's estimate still favours multicast on the first and third shapes, but the
//   model runs the first 0.21 us slower than step 12 (the third, 0.13 us slower, is within the
//   model's noise: docs/13). The second shape keeps step 12's plan:
//   clusters of 4 for its 128 CTAs would not all fit at once if a GPC has 14 SMs (the planner's assumption, common/nvfp4_plan.cpp), and with
//   BLOCK_N 128 the ring's latency eats the gain.
//
// SHARED MEMORY, TMEM: step 12's (each CTA still holds all of A: multicast saves copies and
//   bytes on the TMA units, not shared memory).
//
// CONSTRAINTS
//   Step 12's, and MC divides the number of tiles along N; MC x S <= 8 (the portable cluster
//   size), and no larger than the GPU. TCG_STEP13_BLOCK_N=64|128, TCG_STEP13_MULTICAST=
//   1|2|4 and TCG_STEP13_SPLITS=1|2|4 force the plan (tests, the levers' table).
//
// RUN
//   make step13 && ./step13            (B200: real kernel; elsewhere: the emulator, by default
//                                       128 x 256 x 4160 on 8 SMs: S = 2, MC = 4)
//   ./step13 --predict --m 128 --n 7168 --k 2048      (the B200 timing model)
#include "../common/kernel_common.cuh"
#include "../common/nvfp4_tensor_maps.cuh"
#include "../common/nvfp4_layout.h"
#include "../common/nvfp4_plan.h"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;           // = MMA M: one TMEM lane per output row
constexpr int BLOCK_K = 256;           // FP4 elements of K per k-tile: one 128-byte swizzle atom row
constexpr int MMA_K = int(kMxf4K);     // K of one kind::mxf4nvf4 MMA: 64 elements = 32 bytes
constexpr int KSTEPS = BLOCK_K / MMA_K;  // 4 MMAs per k-tile
constexpr int KT_PER_STAGE = 2;        // k-tiles per stage, loaded by one box per operand
constexpr int NUM_THREADS = 192;       // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue
constexpr uint32_t TMEM_COLS = 512;    // power of two >= accumulator + scale columns
constexpr int SUB_N = 64;              // C sub-tile: 64 FP16 columns = one 128-byte swizzled row
constexpr int SUB_M = 32;              //   x the 32 rows (TMEM lanes) of one epilogue warp
constexpr int STORE_LANE = 0;          // the lane that issues, commits and waits for its warp's TMA stores
constexpr uint32_t SMEM_LIMIT = 232448;  // the sm_100 opt-in maximum per CTA

constexpr uint32_t KSTEPS_PER_STAGE = KT_PER_STAGE * KSTEPS;   // 8
constexpr uint32_t SF_STAGE_BYTES = KSTEPS_PER_STAGE * kSfAtomBytes;  // 4 KiB: one 128-row scale atom per k-step
constexpr uint32_t SF_COLS_PER_KSTEP = 4;  // TMEM columns one atom fills (tcgen05.cp .32x128b.warpx4)
constexpr uint32_t SF_TMEM_STAGE_COLS = KSTEPS_PER_STAGE * 2 * SF_COLS_PER_KSTEP;  // 64: SFA then SFB
constexpr uint32_t A_KTILE_BYTES = BLOCK_M * BLOCK_K / 2;  // 128 x 128 B = 16 KiB
constexpr uint32_t A_STAGE_BYTES = KT_PER_STAGE * A_KTILE_BYTES;  // 32 KiB
constexpr uint32_t STAGING_BYTES = SUB_M * SUB_N * 2;  // 4 KiB: one 32 x 64 FP16 sub-tile of C
constexpr uint32_t SBO_SW128 = 8 * 128;
constexpr uint32_t SBO_SF = 128;

// Everything that depends on BLOCK_N (= MMA N: one TMEM column per output column), 128 or 64.
// Shared memory, offsets from a 1024-byte-aligned base; k-tile j of stage s at
// a_tile(s) + j * A_KTILE_BYTES (a 3-D box writes its k-tiles one after the other), B likewise.
// B's scales come in 128-row atoms whatever BLOCK_N: with 64 a CTA loads its tile's whole atom
// and the MMA reads its half, TMEM columns +2 for the odd 64-row half (the layout puts row r of
// an atom in column r / 32: rows 64-127 are columns 2 and 3).
template <int BN>
struct Cfg {
  static constexpr int BLOCK_N = BN;
  static constexpr uint32_t B_KTILE_BYTES = BN * BLOCK_K / 2;           // 16 or 8 KiB
  static constexpr uint32_t B_STAGE_BYTES = KT_PER_STAGE * B_KTILE_BYTES;
  static constexpr uint32_t STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES + 2 * SF_STAGE_BYTES;  // 72 or 56 KiB
  static constexpr int NUM_STAGES = int((SMEM_LIMIT - kSmemAlignSlack - 1024) / STAGE_BYTES);  // 3 or 4
  static constexpr uint32_t A_TILES = 0;
  static constexpr uint32_t B_TILES = A_TILES + NUM_STAGES * A_STAGE_BYTES;
  static constexpr uint32_t SFA_TILES = B_TILES + NUM_STAGES * B_STAGE_BYTES;
  static constexpr uint32_t SFB_TILES = SFA_TILES + NUM_STAGES * SF_STAGE_BYTES;
  static constexpr uint32_t TMA_FULL_BARS = SFB_TILES + NUM_STAGES * SF_STAGE_BYTES;
  static constexpr uint32_t MMA_DONE_BARS = TMA_FULL_BARS + NUM_STAGES * 8;
  static constexpr uint32_t MAINLOOP_DONE_BAR = MMA_DONE_BARS + NUM_STAGES * 8;
  static constexpr uint32_t RECV_BARS = MAINLOOP_DONE_BAR + 8;  // one per quarter: its owner's S - 1 copies
  static constexpr uint32_t TMEM_SLOT = RECV_BARS + 4 * 8;
  static constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;
  // After the mainloop the ring is free: C staging, then the four quarters' send buffers, then
  // the receive slots of the quarters this CTA owns (4 / S of them, S slots each: 4 in all).
  static constexpr int SUBTILES = BN / SUB_N;   // per epilogue warp: 2 or 1
  static constexpr uint32_t QUARTER_BYTES = 32 * BN * 4;  // 32 rows x BLOCK_N FP32: 16 or 8 KiB
  static constexpr uint32_t STAGING = A_TILES;  // C staging: warp q's sub-tiles
  static constexpr uint32_t SEND = STAGING + 4 * SUBTILES * STAGING_BYTES;
  static constexpr uint32_t RECV = SEND + 4 * QUARTER_BYTES;
  static constexpr uint32_t RECV_END = RECV + 4 * QUARTER_BYTES;
  static constexpr uint32_t SF_TMEM_BASE = BN;
  static constexpr uint32_t IDESC = make_idesc_mxf4nvf4(BLOCK_M, BN);
  static_assert(B_KTILE_BYTES % 1024 == 0 && A_KTILE_BYTES % 1024 == 0 && STAGING_BYTES % 1024 == 0,
                "128B-swizzled tiles must be 1024-byte aligned");
  static_assert(4 * SUBTILES * STAGING_BYTES <= NUM_STAGES * A_STAGE_BYTES && RECV_END <= TMA_FULL_BARS,
                "C staging, send and receive buffers fit in the drained ring");
  static_assert(SMEM_BYTES + kSmemAlignSlack <= SMEM_LIMIT, "exceeds the sm_100 shared-memory limit");
  static_assert(SF_TMEM_BASE + NUM_STAGES * SF_TMEM_STAGE_COLS <= TMEM_COLS, "TMEM columns");
  static_assert(is_valid_mxf4_shape_cta1(BLOCK_M, BN) && BN % SUB_N == 0 && BN <= int(kSfAtomRows),
                "invalid kind::mxf4nvf4 shape, or a tile wider than one scale atom");
};
static_assert(Cfg<128>::NUM_STAGES == 3 && Cfg<64>::NUM_STAGES == 4, "the header's stage counts");

// A quarter's 32 rows x BLOCK_N FP32 in shared memory (send and receive buffers) as 16-byte
// granules, column group first: granule (g, lane) at 16 * (32 g + lane). A warp's 16-byte store
// or load of one column group covers 512 contiguous bytes: no bank conflicts.
__host__ __device__ constexpr uint32_t granule_offset(uint32_t col_group, uint32_t lane) {
  return 16u * (col_group * 32 + lane);
}
// Which rank of the cluster sums quarter q: ranks own 4 / S consecutive quarters.
__host__ __device__ constexpr int quarter_owner(int q, int s) { return q * s / 4; }

// The kernel for one BLOCK_N; gemm_kernel_n128 / _n64 below are its two entry points.
template <int BN, bool kTrace>
__device__ __forceinline__ void gemm_body(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b,
                                          const CUtensorMap& tmap_a3, const CUtensorMap& tmap_b3,
                                          const CUtensorMap& tmap_c, bool tma_c, const uint8_t* sfa,
                                          const uint8_t* sfb, __half* c, int m, int n, int k, int splits, int mc,
                                          const TraceBuf& trace_buf) {
  using L = Cfg<BN>;
  constexpr int BLOCK_N = BN, NUM_STAGES = L::NUM_STAGES;
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  auto a_tile = [&](int s) { return smem_base + L::A_TILES + s * A_STAGE_BYTES; };
  auto b_tile = [&](int s) { return smem_base + L::B_TILES + s * L::B_STAGE_BYTES; };
  auto sfa_tile = [&](int s) { return smem_base + L::SFA_TILES + s * SF_STAGE_BYTES; };
  auto sfb_tile = [&](int s) { return smem_base + L::SFB_TILES + s * SF_STAGE_BYTES; };
  auto tma_full_bar = [&](int s) { return smem_base + L::TMA_FULL_BARS + 8 * s; };
  auto mma_done_bar = [&](int s) { return smem_base + L::MMA_DONE_BARS + 8 * s; };
  auto staging = [&](int quarter, int sub) {
    return smem_base + L::STAGING + (quarter * L::SUBTILES + sub) * STAGING_BYTES;
  };
  const uint32_t mainloop_done_bar = smem_base + L::MAINLOOP_DONE_BAR;
  const uint32_t tmem_slot = smem_base + L::TMEM_SLOT;  // where tcgen05.alloc writes the TMEM address
  auto recv_bar = [&](int quarter) { return smem_base + L::RECV_BARS + 8 * quarter; };
  auto send_buf = [&](int quarter) { return smem_base + L::SEND + quarter * L::QUARTER_BYTES; };
  // The receive slot of quarter q (owned here) for the partial of split s.
  auto recv_slot = [&](int quarter, int s) {
    return smem_base + L::RECV + ((quarter % (4 / splits)) * splits + s) * L::QUARTER_BYTES;
  };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int tiles = ceil_div(m, BLOCK_M) * tiles_n;
  (void)tiles;
  // The S CTAs of a tile are consecutive, and MC consecutive tiles of one row of tiles (they
  // share A's rows) make one cluster of MC x S CTAs: rank = (tile % MC) * S + split.
  const int tile = int(blockIdx.x) / splits, split = int(blockIdx.x) % splits;
  const int m0 = tile / tiles_n * BLOCK_M, n0 = tile % tiles_n * BLOCK_N;
  const int mc_rank = tile % mc;  // this CTA's place among the MC tiles
  const int cluster_ctas = mc * splits;
  auto rank_of = [&](int mc_r, int s) { return uint32_t(mc_r * splits + s); };
  // The MC CTAs of this split: they load the same k-tiles of A, and free each stage together.
  uint16_t mc_mask = 0;
  for (int r = 0; r < mc; ++r) mc_mask = uint16_t(mc_mask | (1u << rank_of(r, split)));

  if (warp == 1) {
    tmem_alloc(smem_base + L::TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit();
  } else if (warp == 0 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);
      mbarrier_init(mma_done_bar(s), uint32_t(mc));  // a stage is free when all MC CTAs' MMAs have read it
    }
    mbarrier_init(mainloop_done_bar, 1);
    for (int q = 0; q < 4; ++q) mbarrier_init(recv_bar(q), 1);  // the owner's expect_tx; S - 1 copies' bytes
    fence_mbarrier_init();
  }
  // MC > 1: the peers' multicast copies and commits will signal this CTA's barriers, so every
  // CTA of the cluster waits until every CTA's inits are done: fence.mbarrier_init.release.cluster
  // above, then this barrier's wait (PTX ISA §9.7.13.4); relaxed, as in step 12. A relaxed
  // cluster barrier orders no memory (§9.7.13.3), so the TMEM address tcgen05.alloc wrote to
  // the slot still needs __syncthreads; between the arrive and the wait it costs nothing extra.
  tcgen05_fence_before_thread_sync();
  if (mc > 1) cluster_arrive_relaxed();
  __syncthreads();
  if (mc > 1) cluster_wait();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  const int num_ksteps = k / MMA_K;  // K % 64 == 0
  const int num_k_tiles = ceil_div(num_ksteps, KSTEPS);
  const int full_k_tiles = num_ksteps / KSTEPS;  // the k-tiles the 3-D maps cover
  auto ksteps_of = [&](int kt) { const int left = num_ksteps - kt * KSTEPS; return left < KSTEPS ? left : KSTEPS; };
  // This split's k-tiles, as step 10: [kt_begin, kt_begin + my_k_tiles), in stages of up to 2.
  const int per_split = num_k_tiles / splits, extra = num_k_tiles % splits;
  const int kt_begin = split * per_split + (split < extra ? split : extra);
  const int my_k_tiles = per_split + (split < extra ? 1 : 0);
  const int my_stages = ceil_div(my_k_tiles, KT_PER_STAGE);
  auto kts_of_stage = [&](int i) { const int left = my_k_tiles - i * KT_PER_STAGE; return left < KT_PER_STAGE ? left : KT_PER_STAGE; };

  if (warp == 0) {
    // ---------------------------------------------------------------- producer (TMA) warp
    if (elect_one_sync()) {
      const auto producer_span = trace.span_elected(Phase::kProducer);  // ends with this block
      const uint32_t sfa_row_block = uint32_t(m0) / kSfAtomRows, sfb_row_block = uint32_t(n0) / kSfAtomRows;
      uint32_t empty_parity = 1;
      for (int i = 0; i < my_stages; ++i) {
        const int kt0 = kt_begin + i * KT_PER_STAGE, kts = kts_of_stage(i), s = i % NUM_STAGES;
        int ksteps = 0;
        for (int j = 0; j < kts; ++j) ksteps += ksteps_of(kt0 + j);
        const uint32_t sf_bytes = uint32_t(ksteps) * kSfAtomBytes;  // one atom per k-step, for A and for B
        // Slot s is free in all MC CTAs (mma_done_bar counts their MMAs' commits): this CTA may
        // write it in every one of them.
        mbarrier_wait_parity(mma_done_bar(s), empty_parity, trace.span_elected(Phase::kWaitMmaDone, s));
        // Every CTA expects the whole stage, A included, whoever issues it: a peer's multicast may
        // land before this arrive (the tx-count goes below zero; the phase waits for the arrive).
        mbarrier_arrive_expect_tx(tma_full_bar(s), uint32_t(kts) * (A_KTILE_BYTES + L::B_KTILE_BYTES) + 2 * sf_bytes);
        const bool whole = kts == KT_PER_STAGE && kt0 + kts <= full_k_tiles;  // one box per operand
        if (i % mc == mc_rank) {  // this CTA's turn: A and SFA for the MC CTAs of its split
          if (whole) {
            tma_load_3d_multicast(a_tile(s), &tmap_a3, 0, m0, kt0, tma_full_bar(s), mc_mask);
          } else {  // a partial or lone k-tile: step 10's boxes, one per k-tile
            for (int j = 0; j < kts; ++j)
              tma_load_2d_multicast(a_tile(s) + j * A_KTILE_BYTES, &tmap_a, (kt0 + j) * BLOCK_K / 2, m0, tma_full_bar(s),
                                    mc_mask);
          }
          bulk_load_multicast(sfa_tile(s), sfa + sf_atom_offset(sfa_row_block, uint32_t(kt0 * KSTEPS), uint32_t(k)),
                              sf_bytes, tma_full_bar(s), mc_mask);
        }
        if (whole) {
          tma_load_3d(b_tile(s), &tmap_b3, 0, n0, kt0, tma_full_bar(s));
        } else {
          for (int j = 0; j < kts; ++j)
            tma_load_2d(b_tile(s) + j * L::B_KTILE_BYTES, &tmap_b, (kt0 + j) * BLOCK_K / 2, n0, tma_full_bar(s));
        }
        bulk_load(sfb_tile(s), sfb + sf_atom_offset(sfb_row_block, uint32_t(kt0 * KSTEPS), uint32_t(k)), sf_bytes,
                  tma_full_bar(s));
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      trace.begin_elected(Phase::kDrain);
      for (int i = my_stages; i < my_stages + NUM_STAGES; ++i) {
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
      // BLOCK_N = 64: this tile's rows of B are half of a scale atom, columns 2-3 for the odd half.
      const uint32_t sfb_half_cols = uint32_t(n0) % kSfAtomRows / 32;
      for (int i = 0; i < my_stages; ++i) {
        const int kt0 = kt_begin + i * KT_PER_STAGE, s = i % NUM_STAGES;
        mbarrier_wait_parity(tma_full_bar(s), full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
        tcgen05_fence_after_thread_sync();
        const uint32_t sf_cols = L::SF_TMEM_BASE + s * SF_TMEM_STAGE_COLS;
        for (int j = 0; j < kts_of_stage(i); ++j)
          for (int ks = 0; ks < ksteps_of(kt0 + j); ++ks) {
            const uint32_t q = uint32_t(j * KSTEPS + ks);  // k-step of the stage; its scale atoms are the q-th
            const uint32_t sfa_tmem = tmem_offset(tmem_accum, 0, sf_cols + q * SF_COLS_PER_KSTEP);
            const uint32_t sfb_atom_tmem =
                tmem_offset(tmem_accum, 0, sf_cols + (KSTEPS_PER_STAGE + q) * SF_COLS_PER_KSTEP);
            tcgen05_cp_32x128b_warpx4(sfa_tmem, make_smem_desc(sfa_tile(s) + q * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
            tcgen05_cp_32x128b_warpx4(sfb_atom_tmem,
                                      make_smem_desc(sfb_tile(s) + q * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
            const uint64_t a_desc =
                make_smem_desc(a_tile(s) + j * A_KTILE_BYTES + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            const uint64_t b_desc =
                make_smem_desc(b_tile(s) + j * L::B_KTILE_BYTES + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            mma_mxf4nvf4_block16_ss(tmem_accum, a_desc, b_desc, L::IDESC, sfa_tmem, sfb_atom_tmem + sfb_half_cols,
                                    /*accumulate=*/i > 0 || j > 0 || ks > 0);
          }
        // Frees slot s in every CTA of the split's MC (each of them may refill it for all).
        if (mc > 1) mma_commit_multicast(mma_done_bar(s), mc_mask);
        else mma_commit(mma_done_bar(s));
        if (s == NUM_STAGES - 1) full_parity ^= 1;
      }
      mma_commit(mainloop_done_bar);
    }
  } else if (splits > 1) {
    // ---------------------------------------------------------------- epilogue warps 2..5, part 1
    // After the last MMA: a warp whose quarter another rank sums writes its 32 rows into its send
    // buffer; the owner's warp arms its receive barrier for the S - 1 copies to come.
    const auto epilogue_span = trace.span(Phase::kEpilogue);  // ends with this block
    mbarrier_wait_parity(mainloop_done_bar, 0, trace.span(Phase::kWaitMainloopDone));
    tcgen05_fence_after_thread_sync();
    const int quarter = warp % 4;
    if (quarter_owner(quarter, splits) == split) {
      if (lane == 0) mbarrier_arrive_expect_tx(recv_bar(quarter), uint32_t(splits - 1) * L::QUARTER_BYTES);
    } else {
      for (int col = 0; col < BLOCK_N; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
        tmem_wait_ld(r);
        for (int g = 0; g < 4; ++g)
          st_shared_v4(send_buf(quarter) + granule_offset(uint32_t(col / 4 + g), uint32_t(lane)), r[4 * g],
                       r[4 * g + 1], r[4 * g + 2], r[4 * g + 3]);
      }
      fence_proxy_async_shared_cta();  // this lane's stores, before the bulk copy's async-proxy read
    }
  }

  // S > 1: the cluster barrier. Every thread of every CTA of the tile arrives, the epilogue warps
  // after their CTA's last MMA completed: from here every CTA's ring may be overwritten by its
  // peers' copies (its MMAs' reads are complete, not merely ordered), every receive barrier is
  // armed, and its init is published (fence.mbarrier_init.release.cluster at setup, then this
  // barrier's wait, PTX ISA §9.7.13.4). Nothing a peer reads was written with plain stores, so the
  // arrive needs no release: .relaxed spares the GPU-scope membar a releasing arrive costs (388 vs
  // 49 ns on the H100). The send buffers are this CTA's own: __syncwarp orders them below.
  if (splits > 1) {
    tcgen05_fence_before_thread_sync();
    cluster_arrive_relaxed();
    cluster_wait();
    tcgen05_fence_after_thread_sync();
  }

  if (warp >= 2) {
    // ---------------------------------------------------------------- epilogue warps 2..5, part 2
    const auto epilogue_span = trace.span(Phase::kEpilogue);  // ends with this block
    if (splits == 1) {
      mbarrier_wait_parity(mainloop_done_bar, 0, trace.span(Phase::kWaitMainloopDone));
      tcgen05_fence_after_thread_sync();
    }
    const int quarter = warp % 4;
    const int tile_row = quarter * 32 + lane;  // = TMEM lane
    const int row = m0 + tile_row;
    const int owner = quarter_owner(quarter, splits);
    if (owner != split) {
      // Send: one bulk copy of the quarter into the owner's slot [split], completing there; every
      // lane's fenced stores to the send buffer before lane 0's copy. The owner: the same tile's
      // CTA of that split.
      __syncwarp();
      const uint32_t owner_rank = rank_of(mc_rank, owner);
      if (lane == 0)
        bulk_copy_smem_to_cluster(mapa_shared_cluster(recv_slot(quarter, split), owner_rank), send_buf(quarter),
                                  L::QUARTER_BYTES, mapa_shared_cluster(recv_bar(quarter), owner_rank));
    } else {
      if (splits > 1) {
        mbarrier_wait_parity(recv_bar(quarter), 0);  // the S - 1 peers' copies have landed
        tcgen05_fence_after_thread_sync();
      }
      // C = ((p0 + p1) + p2) + ... in split order (S = 1: the accumulator), 64 columns at a time;
      // this CTA's own partial from TMEM, the others from its receive slots.
      const uint32_t my_slot = mapa_shared_cluster(recv_slot(quarter, 0), rank_of(mc_rank, split));
      for (int sub = 0; sub < L::SUBTILES; ++sub) {
        uint32_t r[SUB_N];
        for (int col = sub * SUB_N; col < (sub + 1) * SUB_N; col += 16) {
          uint32_t* const out = r + (col - sub * SUB_N);
          uint32_t own[16];
          tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), own);
          tmem_wait_ld(own);
          if (splits == 1) {
            for (int e = 0; e < 16; ++e) out[e] = own[e];
            continue;
          }
          float acc[16];
          for (int s = 0; s < splits; ++s) {
            uint32_t v[16];
            if (s == split) {
              for (int e = 0; e < 16; ++e) v[e] = own[e];
            } else {
              for (int g = 0; g < 4; ++g)
                ld_shared_cluster_v4(my_slot + uint32_t(s) * L::QUARTER_BYTES +
                                         granule_offset(uint32_t(col / 4 + g), uint32_t(lane)),
                                     v + 4 * g);
            }
            for (int e = 0; e < 16; ++e) acc[e] = s == 0 ? u32_as_float(v[e]) : acc[e] + u32_as_float(v[e]);
          }
          for (int e = 0; e < 16; ++e) memcpy(&out[e], &acc[e], 4);
        }
        const int col0 = n0 + sub * SUB_N;
        if (!tma_c) {  // N % 8 != 0 or C misaligned: step 10's direct stores
          for (int j = 0; j < SUB_N; j += 8) store_c_chunk8_f16(c, m, n, row, col0 + j, r + j);
          continue;
        }
        // Row `lane` of the warp's sub-tile, 128B-swizzled (chunk j at j ^ (lane % 8)), as step 08;
        // each buffer is used once, so no store waits for an earlier one.
        const uint32_t buf = staging(quarter, sub);
        for (int j = 0; j < SUB_N / 8; ++j)
          st_shared_v4(swizzle_addr(buf + uint32_t(lane) * 128 + uint32_t(j) * 16, 128),
                       pack_half2(u32_as_float(r[8 * j + 0]), u32_as_float(r[8 * j + 1])),
                       pack_half2(u32_as_float(r[8 * j + 2]), u32_as_float(r[8 * j + 3])),
                       pack_half2(u32_as_float(r[8 * j + 4]), u32_as_float(r[8 * j + 5])),
                       pack_half2(u32_as_float(r[8 * j + 6]), u32_as_float(r[8 * j + 7])));
        fence_proxy_async_shared_cta();  // this lane's generic stores, before the async proxy's read
        tcgen05_fence_before_thread_sync();  // the tcgen05.ld above, before the __syncwarp
        __syncwarp();
        tcgen05_fence_after_thread_sync();   // the next sub-tile's tcgen05.ld, after it
        const int row0 = m0 + quarter * SUB_M;
        if (lane == STORE_LANE) {
          if (row0 < m && col0 < n) tma_store_2d(&tmap_c, buf, col0, row0);  // clipped at M and N
          bulk_commit_group();
        }
      }
      // The CTA's shared memory ends with it: the stores must have read their staging buffers.
      if (tma_c && lane == STORE_LANE) bulk_wait_group_read<0>();
    }
  }

  // Teardown. S > 1: a second cluster barrier, so that no CTA exits (and frees the shared memory
  // a peer's copy reads or writes) before every receive barrier of the cluster has completed.
  // Only the order of execution matters here (every owner waited for its copies before arriving),
  // so this arrive is relaxed too.
  trace.begin(Phase::kTeardown);
  tcgen05_fence_before_thread_sync();
  if (cluster_ctas > 1) {
    cluster_arrive_relaxed();
    cluster_wait();
  } else {
    __syncthreads();
  }
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc(tmem_accum, TMEM_COLS);
  trace.end(Phase::kTeardown);
}

#define TCG_STEP13_PARAMS                                                                                           \
  const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,                          \
      const __grid_constant__ CUtensorMap tmap_a3, const __grid_constant__ CUtensorMap tmap_b3,                    \
      const __grid_constant__ CUtensorMap tmap_c, bool tma_c, const uint8_t *sfa, const uint8_t *sfb, __half *c,   \
      int m, int n, int k, int splits, int mc, const __grid_constant__ TraceBuf trace_buf
#define TCG_STEP13_ARGS tmap_a, tmap_b, tmap_a3, tmap_b3, tmap_c, tma_c, sfa, sfb, c, m, n, k, splits, mc, trace_buf
template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS) gemm_kernel_n128(TCG_STEP13_PARAMS) {
  gemm_body<128, kTrace>(TCG_STEP13_ARGS);
}
template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS) gemm_kernel_n64(TCG_STEP13_PARAMS) {
  gemm_body<64, kTrace>(TCG_STEP13_ARGS);
}

// The plans this kernel runs; the planner (common/nvfp4_plan.cpp) picks the one the timing model's
// costs say finishes first: BLOCK_N 64 or 128, S = 1, 2 or 4 (it picks 1 or 2: step 12), MC = 1, 2
// or 4, in clusters of MC x S <= 8. TCG_STEP13_BLOCK_N, _MULTICAST and _SPLITS force them.
static const nvfp4::PlanRules kPlanRules{"TCG_STEP13_", {64, 128}, {1, 2, 4}, /*max_chosen_splits=*/2, {1, 2, 4},
                                         KT_PER_STAGE, Cfg<128>::NUM_STAGES, Cfg<64>::NUM_STAGES,
                                         nvfp4::Reduction::kCluster, nvfp4::CStore::kTma, /*teaches_split=*/true,
                                         /*teaches_multicast=*/true};
static nvfp4::Plan plan_for(int m, int n, int k, int sms) {
  nvfp4::Forced f;
  f.block_n = env_knob("TCG_STEP13_BLOCK_N", {64, 128}, 0);
  f.mc = env_knob("TCG_STEP13_MULTICAST", {1, 2, 4}, 0);
  f.splits = env_knob("TCG_STEP13_SPLITS", {1, 2, 4}, 0);
  return nvfp4::plan(kPlanRules, m, n, k, sms, f);
}
static StepPlan plan_line(int m, int n, int k, int sms) {
  const nvfp4::Plan p = plan_for(m, n, k, sms);
  return {p.line(), nvfp4::left_out(kPlanRules, p)};
}

constexpr StepSpec spec{13, "nvfp4_multicast", "NVFP4 split-K in a cluster, A and its scales multicast along N",
                        Arch::kSm100f, /*k_multiple=*/64, Operands::kNVFP4, nullptr, /*cluster_size=*/1,
                        /*epilogue=*/nullptr, /*repeat=*/true, /*persistent=*/{}, &plan_line,
                        "  TCG_STEP13_BLOCK_N=64|128   forces BLOCK_N\n"
                        "  TCG_STEP13_MULTICAST=1|2|4  forces MC, the tiles along N sharing A (MC must divide them)\n"
                        "  TCG_STEP13_SPLITS=1|2|4     forces S (at most one per k-tile; MC x S <= 8)\n",
                        /*sim_default=*/{128, 256, 4160, 8}};

// The planner assumed nvfp4::resident_ctas() clusters fit at once; on a GPU launch() asks the driver.
constexpr const char* kOneWaveHint = "the plan assumed one wave; TCG_STEP13_MULTICAST=1 to compare";

void launch(const GemmArgs& g) {
  const Nvfp4Operands& f = g.fp4;
  const nvfp4::Plan p = plan_for(g.m, g.n, g.k, num_sms());
  const CUtensorMap tmap_a = make_fp4_kmajor_sw128_map(f.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_fp4_kmajor_sw128_map(f.b, g.n, g.k, p.block_n);
  const CUtensorMap tmap_a3 = make_fp4_kmajor_sw128_map_3d(f.a, g.m, g.k, BLOCK_M, KT_PER_STAGE);
  const CUtensorMap tmap_b3 = make_fp4_kmajor_sw128_map_3d(f.b, g.n, g.k, p.block_n, KT_PER_STAGE);
  // The TMA store needs C's rows 16-byte aligned (a tensor map's row pitch).
  const bool tma_c = g.n % 8 == 0 && reinterpret_cast<uintptr_t>(f.c) % 16 == 0;
  const CUtensorMap tmap_c = tma_c ? make_f16_c_store_map(f.c, g.m, g.n, SUB_N, SUB_M) : CUtensorMap{};
  LaunchDims d;
  d.grid = dim3(unsigned(p.tiles * p.splits));
  d.block = dim3(NUM_THREADS);
  d.cluster = dim3(unsigned(p.cluster), 1, 1);
  if (p.block_n == 64) {
    d.smem_bytes = Cfg<64>::SMEM_BYTES + kSmemAlignSlack;
    note_if_clusters_do_not_fit(gemm_kernel_n64<false>, d, "step13", kOneWaveHint);
    launch_kernel(TCG_TRACED(gemm_kernel_n64, g.trace), d, g.stream, tmap_a, tmap_b, tmap_a3, tmap_b3, tmap_c, tma_c,
                  f.sfa, f.sfb, f.c, g.m, g.n, g.k, p.splits, p.mc, g.trace);
  } else {
    d.smem_bytes = Cfg<128>::SMEM_BYTES + kSmemAlignSlack;
    note_if_clusters_do_not_fit(gemm_kernel_n128<false>, d, "step13", kOneWaveHint);
    launch_kernel(TCG_TRACED(gemm_kernel_n128, g.trace), d, g.stream, tmap_a, tmap_b, tmap_a3, tmap_b3, tmap_c, tma_c,
                  f.sfa, f.sfb, f.c, g.m, g.n, g.k, p.splits, p.mc, g.trace);
  }
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
