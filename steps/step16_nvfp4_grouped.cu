// Step 16 — NVFP4 grouped GEMM for mixture-of-experts: G GEMMs C_g = A_g . B_g^T of one N and K
// and a different, often small M_g each (the tokens routed to expert g), all in one persistent
// launch. The NVFP4 competition's fourth problem.
//
// BUILT ON STEP 11
//   Why step 11: it has what a grouped GEMM of small M needs and nothing it cannot use: wide
//   copies (one 3-D box of two k-tiles per operand), A and B swapped with C written column by
//   column (TCG_STEP11_SWAP_AB), BLOCK_N chosen per shape. Steps 12 and 13 add clusters (a split
//   reduced through DSMEM, A multicast along N); a cluster's CTAs must work on the same tile at
//   the same time, which a static walk over groups of unequal size does not give, and what the
//   multicast shares here (the tokens, Y below) is the small operand. K is not split (what that
//   costs the two small cases: docs/16_nvfp4_grouped_gemm.md). What is new:
//   * One launch walks the tiles of all groups: the groups' tiles are numbered group after group
//     (prefix sums of their tile counts, each group's M_g read from a table in device memory, as
//     a mixture-of-experts layer passes it), and CTA i of a persistent grid takes tiles i, i +
//     grid, i + 2 grid, ... Its three roles (TMA, MMA, epilogue) walk the same list on their own.
//   * Each group has its own operands, so the TMA copies need a tensor map per group. Each CTA has
//     two slots of two maps (X and Y below) in global memory (the workspace); when its walk enters
//     a group the TMA thread rewrites the other slot with tensormap.replace (the group's addresses,
//     and the rows of its tokens), then fence.proxy.tensormap::generic.release.cta and
//     .acquire.cta [map] before its first copy through it (PTX ISA §9.7.9.26, §9.7.13.4). A slot is
//     rewritten only when no copy issued through it is still to read it: the TMA thread waits for
//     the last stage it loaded through that slot to have landed (usually long since).
//   * A and B swapped, chosen per case: the MMA's 128 rows (X) take B_g, the expert's N x K weights,
//     and its BLOCK_N (Y) the tokens A_g, BLOCK_N 32, 64 or 128. A group of 40 tokens then fills
//     40 of 64 MMA columns, not 40 of 128 MMA rows. Unswapped, X = A_g and Y = B_g as in step 11.
//   * Persistent: two accumulators in TMEM (tile i in buffer i % 2), so tile i's epilogue overlaps
//     tile i + 1's mainloop; the ring of stages runs on across tiles and groups.
//   * C_g's rows past M_g are not written: the epilogue stores each element it holds only below
//     M_g (a group's C_g is its own allocation; the emulator reports a store past its end).
//
// PLAN (common/grouped_plan.cpp, the timing model's parameters; the run prints it): swap and
//   BLOCK_N with the least estimate; MC 1 unless forced. The four ranked cases, `./step16 --predict
//   --groups CASE` (us; point and range; results/model_b200_grouped.csv), all swapped, BLOCK_N 128:
//     g8-n4096-k7168   27.30 (24.71 - 38.35)   speed of light 18.833   the ring's latency
//     g8-n7168-k2048   15.09 (12.02 - 21.37)                  10.667   the ring's latency
//     g2-n3072-k4096    7.12 ( 5.32 - 10.56)                   2.406   the ring's latency, 120 of 148 SMs
//     g2-n4096-k1536    4.18 ( 3.29 -  6.44)                   1.525   the ring's latency, fixed costs
//   WHY FASTER THAN ONE LAUNCH PER GROUP: the SMs a small group leaves idle take the next group's
//   tiles, and the fixed costs (launch, setup, the first TMA round trip, the last C) are paid once
//   per CTA, not once per group. The same kernel on one group at a time (`--groups 192` then
//   `--groups 320`, model): 5.47 + 5.71 = 11.18 us against 7.12 for both; 3.11 + 3.83 = 6.94
//   against 4.18 on the last case. Unswapped or narrower token tiles were slower in the model
//   (docs/16_nvfp4_grouped_gemm.md), and MC 4 was no faster on the third case (7.14).
//
// SHARED MEMORY, TMEM: a stage is X's 2 k-tiles (32 KiB), Y's (2 x BLOCK_N x 128 B) and both scale
//   blocks (8 KiB): 4 stages of 48 or 56 KiB, or 3 of 72 KiB at BLOCK_N 128. TMEM: 2 x BLOCK_N
//   accumulator columns, then 64 scale columns per stage, in a 512-column allocation.
//
// CONSTRAINTS
//   Any M_g >= 0 (0: nothing written), N >= 1, K a multiple of 256 (the 3-D boxes view K in whole
//   k-tiles); each operand 16-byte aligned. TCG_STEP16_SWAP_AB=0|1, TCG_STEP16_BLOCK_N=32|64|128
//   and TCG_STEP16_MULTICAST=1|2|4 (MC dividing every group's tiles along X) force the plan.
//
// RUN
//   make step16 && ./step16            (B200: the real kernel, not yet run on one; elsewhere the
//                                       emulator: 5 small groups, M 1, 0, 40, 130 and 77, on 3 SMs)
//   ./step16 --groups g8-n4096-k7168 --inputs competition     (a ranked case, verified)
//   ./step16 --predict --groups g8-n4096-k7168                (the B200 timing model)
#include "../common/kernel_common.cuh"
#include "../common/grouped_plan.h"
#include "../common/nvfp4_tensor_maps.cuh"
#include "../common/nvfp4_layout.h"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_X = grouped::kBlockRows;  // = MMA M: one TMEM lane per row of X
constexpr int BLOCK_K = grouped::kKTileElems;  // FP4 elements of K per k-tile
constexpr int MMA_K = int(kMxf4K);              // K of one kind::mxf4nvf4 MMA: 64
constexpr int KSTEPS = BLOCK_K / MMA_K;         // 4 MMAs per k-tile
constexpr int KT_PER_STAGE = grouped::kKTilesPerStage;  // one 3-D box of two k-tiles per operand
constexpr int NUM_THREADS = 192;                // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue
constexpr uint32_t TMEM_COLS = 512;
constexpr uint32_t KSTEPS_PER_STAGE = KT_PER_STAGE * KSTEPS;           // 8
constexpr uint32_t SF_STAGE_BYTES = KSTEPS_PER_STAGE * kSfAtomBytes;  // 4 KiB: a 128-row atom per k-step
constexpr uint32_t SF_COLS_PER_KSTEP = 4;
constexpr uint32_t SF_TMEM_STAGE_COLS = KSTEPS_PER_STAGE * 2 * SF_COLS_PER_KSTEP;  // 64: SFX then SFY
constexpr uint32_t X_KTILE_BYTES = BLOCK_X * BLOCK_K / 2;  // 16 KiB
constexpr uint32_t X_STAGE_BYTES = KT_PER_STAGE * X_KTILE_BYTES;
constexpr uint32_t SBO_SW128 = 8 * 128;
constexpr uint32_t SBO_SF = 128;
constexpr uint32_t MAP_BYTES = 128;  // a CUtensorMap
constexpr int SLOTS = 2;             // tensor-map slots per CTA, each with X's map and Y's

template <int BN>
struct Cfg {
  static constexpr uint32_t Y_KTILE_BYTES = BN * BLOCK_K / 2;
  static constexpr uint32_t Y_STAGE_BYTES = KT_PER_STAGE * Y_KTILE_BYTES;
  static constexpr int NUM_STAGES = grouped::stages_for(BN);  // 4, 4, 3 (the planner's own)
  static constexpr uint32_t X_TILES = 0;
  static constexpr uint32_t Y_TILES = X_TILES + NUM_STAGES * X_STAGE_BYTES;
  static constexpr uint32_t SFX_TILES = Y_TILES + NUM_STAGES * Y_STAGE_BYTES;
  static constexpr uint32_t SFY_TILES = SFX_TILES + NUM_STAGES * SF_STAGE_BYTES;
  static constexpr uint32_t TMA_FULL_BARS = SFY_TILES + NUM_STAGES * SF_STAGE_BYTES;
  static constexpr uint32_t MMA_DONE_BARS = TMA_FULL_BARS + NUM_STAGES * 8;
  static constexpr uint32_t ACC_FULL_BARS = MMA_DONE_BARS + NUM_STAGES * 8;  // two: one per accumulator
  static constexpr uint32_t ACC_EMPTY_BARS = ACC_FULL_BARS + 2 * 8;
  static constexpr uint32_t TMEM_SLOT = ACC_EMPTY_BARS + 2 * 8;
  static constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;
  static constexpr uint32_t SF_TMEM_BASE = 2 * BN;  // after the two accumulators
  static constexpr uint32_t IDESC = make_idesc_mxf4nvf4(BLOCK_X, BN);
  static_assert(Y_KTILE_BYTES % 1024 == 0, "128B-swizzled tiles must be 1024-byte aligned");
  static_assert(SMEM_BYTES + kSmemAlignSlack <= 232448, "exceeds the sm_100 shared-memory limit");
  static_assert(SF_TMEM_BASE + NUM_STAGES * SF_TMEM_STAGE_COLS <= TMEM_COLS, "TMEM columns");
  static_assert(is_valid_mxf4_shape_cta1(BLOCK_X, BN) && BN <= int(kSfAtomRows) && BN % 32 == 0,
                "invalid kind::mxf4nvf4 shape, or a tile wider than one scale atom");
};

// Where a tile of the walk is: its group, and its first row of X and of Y.
struct TileAt {
  int group = 0, x0 = 0, y0 = 0;
};
// The walk over all groups' tiles, numbered group after group; a role moves forward through it
// (tile numbers only grow), so each group's M_g is read from the table once per role.
template <int BN>
struct TileWalk {
  const GroupDesc* groups;
  int count, n;
  bool swap;
  int group = 0, first = 0;  // the current group and the number of its first tile
  __device__ int tiles_y(int m) const { return swap ? ceil_div(m, BN) : ceil_div(n, BN); }
  __device__ int tiles_of(int m) const { return tiles_x(m) * tiles_y(m); }
  __device__ int tiles_x(int m) const { return swap ? ceil_div(n, BLOCK_X) : ceil_div(m, BLOCK_X); }
  // Tile `t` of the walk; false past the last group's last tile.
  __device__ bool find(int t, TileAt* at) {
    for (; group < count; ++group) {
      const int m = groups[group].m, tiles = tiles_of(m);
      if (t < first + tiles) {
        // Y-major within a group: consecutive tiles (the MC CTAs of a cluster) share Y's rows.
        const int local = t - first, tx = tiles_x(m);
        *at = TileAt{group, local % tx * BLOCK_X, local / tx * BN};
        return true;
      }
      first += tiles;
    }
    return false;
  }
};

template <int BN, bool kTrace>
__device__ __forceinline__ void gemm_body(const CUtensorMap& tmpl_x, const CUtensorMap& tmpl_y, CUtensorMap* slots,
                                          const GroupDesc* groups, int count, int n, int k, bool swap, int mc,
                                          const TraceBuf& trace_buf) {
  using L = Cfg<BN>;
  constexpr int NUM_STAGES = L::NUM_STAGES;
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  auto x_tile = [&](int s) { return smem_base + L::X_TILES + s * X_STAGE_BYTES; };
  auto y_tile = [&](int s) { return smem_base + L::Y_TILES + s * L::Y_STAGE_BYTES; };
  auto sfx_tile = [&](int s) { return smem_base + L::SFX_TILES + s * SF_STAGE_BYTES; };
  auto sfy_tile = [&](int s) { return smem_base + L::SFY_TILES + s * SF_STAGE_BYTES; };
  auto tma_full_bar = [&](int s) { return smem_base + L::TMA_FULL_BARS + 8 * s; };
  auto mma_done_bar = [&](int s) { return smem_base + L::MMA_DONE_BARS + 8 * s; };
  auto acc_full_bar = [&](int b) { return smem_base + L::ACC_FULL_BARS + 8 * b; };
  auto acc_empty_bar = [&](int b) { return smem_base + L::ACC_EMPTY_BARS + 8 * b; };
  const uint32_t tmem_slot = smem_base + L::TMEM_SLOT;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // MC > 1: clusters of MC CTAs walk MC consecutive tiles at a time, which share Y's rows; rank
  // r issues Y's box and scales of every MC-th stage for all of them (.multicast::cluster).
  const int mc_rank = int(blockIdx.x) % mc;
  const uint16_t mc_mask = uint16_t((1u << mc) - 1u);

  if (warp == 1) {
    tmem_alloc(tmem_slot, TMEM_COLS);
    tmem_relinquish_alloc_permit();
  } else if (warp == 0 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);
      mbarrier_init(mma_done_bar(s), uint32_t(mc));  // free once all MC CTAs' MMAs have read it
    }
    for (int b = 0; b < 2; ++b) {
      mbarrier_init(acc_full_bar(b), 1);   // the MMA warp's commit
      mbarrier_init(acc_empty_bar(b), 4);  // one arrival per epilogue warp
    }
    fence_mbarrier_init();
  }
  // MC > 1: the peers' multicast copies and commits signal this CTA's barriers, so no CTA goes on
  // before every CTA's inits are published (as step 13; relaxed, the slot's address still needs
  // __syncthreads).
  tcgen05_fence_before_thread_sync();
  if (mc > 1) cluster_arrive_relaxed();
  __syncthreads();
  if (mc > 1) cluster_wait();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_base = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  const int k_tiles = k / BLOCK_K;  // K % 256 == 0
  const int stages_per_tile = ceil_div(k_tiles, KT_PER_STAGE);
  auto kts_of_stage = [&](int i) { const int left = k_tiles - i * KT_PER_STAGE; return left < KT_PER_STAGE ? left : KT_PER_STAGE; };
  TileWalk<BN> walk{groups, count, n, swap};
  const int grid = int(gridDim.x);

  if (warp == 0) {
    // ---------------------------------------------------------------- producer (TMA) warp
    if (elect_one_sync()) {
      const auto producer_span = trace.span_elected(Phase::kProducer);
      uint32_t empty_parity = 1;
      int stage = 0;                          // stages issued so far, over all tiles
      int slot = -1, slot_group = -1;         // the slot in use and the group it holds
      int last_stage0 = -1, last_stage1 = -1;  // the last stage loaded through slot 0 and 1 (registers)
      CUtensorMap* mine = slots + size_t(blockIdx.x) * SLOTS * 2;  // this CTA's slots: [slot][X, Y]
      TileAt at;
      for (int t = int(blockIdx.x); walk.find(t, &at); t += grid) {
        const GroupDesc& gd = groups[at.group];
        const uint8_t* x_ops = swap ? gd.b : gd.a;   // X: the MMA's 128 rows
        const uint8_t* y_ops = swap ? gd.a : gd.b;
        const uint8_t* sfx = swap ? gd.sfb : gd.sfa;
        const uint8_t* sfy = swap ? gd.sfa : gd.sfb;
        if (at.group != slot_group) {
          // Enter a group: rewrite the other slot for it. Every copy issued through it must have
          // read the map first (a copy reads its map asynchronously, after the issue), and copies
          // land in no particular order: each stage up to the slot's last one must have landed,
          // i.e. its full barrier completed that stage's phase. A stage NUM_STAGES or more back
          // had, before its ring slot was refilled; the others are waited for here.
          slot = slot < 0 ? 0 : slot ^ 1;
          const int last = slot == 0 ? last_stage0 : last_stage1;
          for (int j = stage - NUM_STAGES > 0 ? stage - NUM_STAGES : 0; j <= last; ++j)
            mbarrier_wait_parity(tma_full_bar(j % NUM_STAGES), uint32_t(j / NUM_STAGES) & 1u);
          CUtensorMap* mx = mine + slot * 2;
          CUtensorMap* my = mx + 1;
          if (last < 0) {  // first use: the templates' bytes into the slot (16-byte stores)
            for (uint32_t i = 0; i < MAP_BYTES / 16; ++i) {
              uint4 v, w;
              memcpy(&v, reinterpret_cast<const uint8_t*>(&tmpl_x) + 16 * i, 16);
              memcpy(&w, reinterpret_cast<const uint8_t*>(&tmpl_y) + 16 * i, 16);
              st_global_v4(reinterpret_cast<uint8_t*>(mx) + 16 * i, v);
              st_global_v4(reinterpret_cast<uint8_t*>(my) + 16 * i, w);
            }
          }
          const uint32_t x_rows = uint32_t(swap ? n : gd.m), y_rows = uint32_t(swap ? gd.m : n);
          tensormap_replace_global_address(mx, x_ops);
          tensormap_replace_global_dim<1>(mx, x_rows);
          tensormap_replace_global_address(my, y_ops);
          tensormap_replace_global_dim<1>(my, y_rows);
          // The rewrite (weak generic-proxy writes) released to the tensormap proxy of this CTA,
          // and acquired for this thread's copies through each map (§9.7.13.4).
          fence_proxy_tensormap_release<TensormapScope::kCta>();
          fence_proxy_tensormap_acquire<TensormapScope::kCta>(mx);
          fence_proxy_tensormap_acquire<TensormapScope::kCta>(my);
          slot_group = at.group;
        }
        const CUtensorMap* mx = mine + slot * 2;
        const CUtensorMap* my = mx + 1;
        const uint32_t sfx_block = uint32_t(at.x0) / kSfAtomRows, sfy_block = uint32_t(at.y0) / kSfAtomRows;
        for (int i = 0; i < stages_per_tile; ++i, ++stage) {
          const int s = stage % NUM_STAGES, kt0 = i * KT_PER_STAGE, kts = kts_of_stage(i);
          const uint32_t sf_bytes = uint32_t(kts * KSTEPS) * kSfAtomBytes;
          mbarrier_wait_parity(mma_done_bar(s), empty_parity, trace.span_elected(Phase::kWaitMmaDone, s));
          // A lone last k-tile still comes in a box of two: the second lies past K, is filled with
          // zeros and counted in the box's bytes (PTX ISA §5.5.6); no MMA reads it.
          mbarrier_arrive_expect_tx(tma_full_bar(s), X_STAGE_BYTES + L::Y_STAGE_BYTES + 2 * sf_bytes);
          tma_load_3d(x_tile(s), mx, 0, at.x0, kt0, tma_full_bar(s));
          bulk_load(sfx_tile(s), sfx + sf_atom_offset(sfx_block, uint32_t(kt0 * KSTEPS), uint32_t(k)), sf_bytes,
                    tma_full_bar(s));
          if (mc == 1) {
            tma_load_3d(y_tile(s), my, 0, at.y0, kt0, tma_full_bar(s));
            bulk_load(sfy_tile(s), sfy + sf_atom_offset(sfy_block, uint32_t(kt0 * KSTEPS), uint32_t(k)), sf_bytes,
                      tma_full_bar(s));
          } else if (stage % mc == mc_rank) {  // this CTA's turn: Y for the MC CTAs (every one expects it)
            tma_load_3d_multicast(y_tile(s), my, 0, at.y0, kt0, tma_full_bar(s), mc_mask);
            bulk_load_multicast(sfy_tile(s), sfy + sf_atom_offset(sfy_block, uint32_t(kt0 * KSTEPS), uint32_t(k)),
                                sf_bytes, tma_full_bar(s), mc_mask);
          }
          (slot == 0 ? last_stage0 : last_stage1) = stage;
          if (s == NUM_STAGES - 1) empty_parity ^= 1;
        }
      }
      // Every slot's last MMA has read it before the CTA (and its shared memory) ends.
      trace.begin_elected(Phase::kDrain);
      for (int i = 0; i < NUM_STAGES; ++i, ++stage) {
        const int s = stage % NUM_STAGES;
        mbarrier_wait_parity(mma_done_bar(s), empty_parity);
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      trace.end_elected(Phase::kDrain);
    }
  } else if (warp == 1) {
    // ---------------------------------------------------------------- MMA warp
    if (elect_one_sync()) {
      const auto mma_span = trace.span_elected(Phase::kMma);
      uint32_t full_parity = 0;
      int stage = 0, local = 0;
      TileAt at;
      for (int t = int(blockIdx.x); walk.find(t, &at); t += grid, ++local) {
        const int buf = local % 2;
        // The epilogue has read this accumulator's previous tile (a fresh barrier passes parity 1).
        mbarrier_wait_parity(acc_empty_bar(buf), (uint32_t(local / 2) & 1u) ^ 1u);
        tcgen05_fence_after_thread_sync();
        const uint32_t tmem_acc = tmem_offset(tmem_base, 0, uint32_t(buf * BN));
        // The tile's rows of Y are a BN-row part of a 128-row scale atom: columns + y0 % 128 / 32.
        const uint32_t sfy_cols = uint32_t(at.y0) % kSfAtomRows / 32;
        for (int i = 0; i < stages_per_tile; ++i, ++stage) {
          const int s = stage % NUM_STAGES;
          mbarrier_wait_parity(tma_full_bar(s), full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
          tcgen05_fence_after_thread_sync();
          const uint32_t sf_cols = L::SF_TMEM_BASE + s * SF_TMEM_STAGE_COLS;
          for (int j = 0; j < kts_of_stage(i); ++j)
            for (int ks = 0; ks < KSTEPS; ++ks) {
              const uint32_t q = uint32_t(j * KSTEPS + ks);
              const uint32_t sfx_tmem = tmem_offset(tmem_base, 0, sf_cols + q * SF_COLS_PER_KSTEP);
              const uint32_t sfy_tmem = tmem_offset(tmem_base, 0, sf_cols + (KSTEPS_PER_STAGE + q) * SF_COLS_PER_KSTEP);
              tcgen05_cp_32x128b_warpx4(sfx_tmem, make_smem_desc(sfx_tile(s) + q * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
              tcgen05_cp_32x128b_warpx4(sfy_tmem, make_smem_desc(sfy_tile(s) + q * kSfAtomBytes, 0, SBO_SF, Layout::kNone));
              const uint64_t x_desc =
                  make_smem_desc(x_tile(s) + j * X_KTILE_BYTES + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
              const uint64_t y_desc =
                  make_smem_desc(y_tile(s) + j * L::Y_KTILE_BYTES + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
              mma_mxf4nvf4_block16_ss(tmem_acc, x_desc, y_desc, L::IDESC, sfx_tmem, sfy_tmem + sfy_cols,
                                      /*accumulate=*/i > 0 || j > 0 || ks > 0);
            }
          // Frees slot s once these MMAs have read it, in every CTA of the cluster (any may refill it).
          if (mc > 1) mma_commit_multicast(mma_done_bar(s), mc_mask);
          else mma_commit(mma_done_bar(s));
          if (s == NUM_STAGES - 1) full_parity ^= 1;
        }
        mma_commit(acc_full_bar(buf));  // the tile's accumulator is complete
      }
    }
  } else {
    // ---------------------------------------------------------------- epilogue warps 2..5
    const auto epilogue_span = trace.span(Phase::kEpilogue);
    const int quarter = warp % 4;  // TMEM lanes 32 quarter .. 32 quarter + 31
    int local = 0;
    TileAt at;
    for (int t = int(blockIdx.x); walk.find(t, &at); t += grid, ++local) {
      const int buf = local % 2;
      mbarrier_wait_parity(acc_full_bar(buf), uint32_t(local / 2) & 1u, trace.span(Phase::kWaitMainloopDone));
      tcgen05_fence_after_thread_sync();
      const GroupDesc& gd = groups[at.group];
      const int m = gd.m;
      __half* const c = gd.c;
      const int xr = at.x0 + quarter * 32 + lane;  // this thread's row of X: a column of C if swapped
      for (int col = 0; col < BN; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(tmem_base, uint32_t(quarter * 32), uint32_t(buf * BN + col)), r);
        tmem_wait_ld(r);
        if (swap) {
          // C_g[y0 + col + j][xr]: per j the warp's lanes write 32 consecutive elements of a row
          // (64 bytes, whole sectors). Rows at or past M_g are not C_g's.
          for (int j = 0; j < 16; ++j)
            if (at.y0 + col + j < m && xr < n)
              store_2B(c + size_t(at.y0 + col + j) * size_t(n) + size_t(xr), __float2half_rn(u32_as_float(r[j])));
        } else {
          for (int j = 0; j < 16; j += 8) store_c_chunk8_f16(c, m, n, xr, at.y0 + col + j, r + j);
        }
      }
      // This warp's reads of the accumulator are complete: the MMA warp may overwrite it.
      tcgen05_fence_before_thread_sync();
      __syncwarp();
      if (lane == 0) mbarrier_arrive(acc_empty_bar(buf));
    }
  }

  // Teardown. MC > 1: a cluster barrier, so that no CTA exits while a peer's copy or commit may
  // still reach its shared memory (every CTA drained its own ring first).
  trace.begin(Phase::kTeardown);
  tcgen05_fence_before_thread_sync();
  if (mc > 1) {
    cluster_arrive_relaxed();
    cluster_wait();
  } else {
    __syncthreads();
  }
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc(tmem_base, TMEM_COLS);
  trace.end(Phase::kTeardown);
}

#define TCG_STEP16_PARAMS                                                                                     \
  const __grid_constant__ CUtensorMap tmpl_x, const __grid_constant__ CUtensorMap tmpl_y, CUtensorMap *slots, \
      const GroupDesc *groups, int count, int n, int k, bool swap, int mc, const __grid_constant__ TraceBuf trace_buf
#define TCG_STEP16_ARGS tmpl_x, tmpl_y, slots, groups, count, n, k, swap, mc, trace_buf
template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS) gemm_kernel_n128(TCG_STEP16_PARAMS) {
  gemm_body<128, kTrace>(TCG_STEP16_ARGS);
}
template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS) gemm_kernel_n64(TCG_STEP16_PARAMS) {
  gemm_body<64, kTrace>(TCG_STEP16_ARGS);
}
template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS) gemm_kernel_n32(TCG_STEP16_PARAMS) {
  gemm_body<32, kTrace>(TCG_STEP16_ARGS);
}

// The plan (common/grouped_plan.cpp): swap and BLOCK_N with the least estimate, unless forced.
static grouped::Plan plan_for(const int64_t* m, int count, int n, int k, int sms) {
  grouped::Forced f;
  f.block_n = env_knob("TCG_STEP16_BLOCK_N", {32, 64, 128}, 0);
  f.swap = env_knob("TCG_STEP16_SWAP_AB", {0, 1}, -1);
  f.mc = env_knob("TCG_STEP16_MULTICAST", {1, 2, 4}, 0);
  return grouped::plan(m, count, n, k, sms, f);
}
static StepPlan plan_line(const int64_t* m, int count, int n, int k, int sms) {
  return {plan_for(m, count, n, k, sms).line(), ""};
}

// Two slots of two tensor maps per CTA of the persistent grid (at most one per SM).
static StepWorkspace workspace(int, int, int, int sms) {
  return {size_t(sms) * SLOTS * 2 * MAP_BYTES, 0};
}

constexpr StepSpec spec{16, "nvfp4_grouped", "NVFP4 grouped GEMM: all experts' GEMMs in one persistent launch",
                        Arch::kSm100f, /*k_multiple=*/BLOCK_K, Operands::kNVFP4Grouped, &workspace,
                        /*cluster_size=*/1, /*epilogue=*/nullptr, /*repeat=*/true, /*persistent=*/{}, nullptr,
                        "  TCG_STEP16_SWAP_AB=0|1       forces the swap: 1 puts B_g (weights) on the MMA's 128 rows\n"
                        "                               and the tokens on its BLOCK_N, 0 puts A_g (tokens) there\n"
                        "  TCG_STEP16_BLOCK_N=32|64|128 forces BLOCK_N (tokens if swapped, columns of C if not)\n"
                        "  TCG_STEP16_MULTICAST=1|2|4   forces MC, the CTAs of a cluster sharing Y's copies (MC must\n"
                        "                               divide every group's tiles along X)\n",
                        /*sim_default=*/{0, 256, 768, 3}, &plan_line, "1,0,40,130,77"};

void launch(const GemmArgs& g) {
  const GroupedOperands& G = g.groups;
  const grouped::Plan p = plan_for(G.host_m, G.count, g.n, g.k, num_sms());
  if (p.tiles == 0) return;  // every group empty: nothing to write
  // The templates: X and Y as 3-D views of K in whole k-tiles, with the group table as a stand-in
  // address (16-byte aligned, never read through them): each CTA rewrites its copies' address and
  // rows for every group it enters before any copy.
  const auto* stand_in = reinterpret_cast<const uint8_t*>(G.desc);
  const CUtensorMap tmpl_x = make_fp4_kmajor_sw128_map_3d(stand_in, BLOCK_X, g.k, BLOCK_X, KT_PER_STAGE);
  const CUtensorMap tmpl_y = make_fp4_kmajor_sw128_map_3d(stand_in, p.block_n, g.k, p.block_n, KT_PER_STAGE);
  auto* slots = static_cast<CUtensorMap*>(g.workspace);
  LaunchDims d;
  d.grid = dim3(unsigned(p.ctas));
  d.block = dim3(NUM_THREADS);
  d.cluster = dim3(unsigned(p.mc), 1, 1);
  if (p.block_n == 128) {
    d.smem_bytes = Cfg<128>::SMEM_BYTES + kSmemAlignSlack;
    launch_kernel(TCG_TRACED(gemm_kernel_n128, g.trace), d, g.stream, tmpl_x, tmpl_y, slots, G.desc, G.count, g.n, g.k,
                  p.swap, p.mc, g.trace);
  } else if (p.block_n == 64) {
    d.smem_bytes = Cfg<64>::SMEM_BYTES + kSmemAlignSlack;
    launch_kernel(TCG_TRACED(gemm_kernel_n64, g.trace), d, g.stream, tmpl_x, tmpl_y, slots, G.desc, G.count, g.n, g.k,
                  p.swap, p.mc, g.trace);
  } else {
    d.smem_bytes = Cfg<32>::SMEM_BYTES + kSmemAlignSlack;
    launch_kernel(TCG_TRACED(gemm_kernel_n32, g.trace), d, g.stream, tmpl_x, tmpl_y, slots, G.desc, G.count, g.n, g.k,
                  p.swap, p.mc, g.trace);
  }
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
