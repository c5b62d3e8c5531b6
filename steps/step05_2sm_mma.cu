// Step 05 — 2-SM MMA: a cluster of two CTAs computes one 256 x 256 tile with tcgen05.mma.cta_group::2.
//
// NEW SINCE STEP 04
//   The kernel is launched in clusters of 2 CTAs, a "CTA pair" (PTX ISA §9.7.16.5.1). One
//   tcgen05.mma.cta_group::2 with M = 256, N = 256 spans both SMs of the pair:
//     rank 0 ("leader", even)  holds A rows m0 .. m0+127 and B rows n0 .. n0+127,
//     rank 1 ("peer", odd)     holds A rows m0+128 .. m0+255 and B rows n0+128 .. n0+255,
//   each in its own shared memory, and each CTA's TMEM receives ITS 128 rows of the 256 x 256
//   result, all 256 columns (lanes 0-127, data-path layout A). Only the leader's MMA warp issues
//   MMAs; its descriptors hold its own shared addresses and the hardware reads the peer's halves
//   at the same offsets, so both CTAs must lay out shared memory identically (they do: same
//   kernel, same offsets from the same aligned base). What changes, role by role:
//     warp 0      producer, in both CTAs: waits until its stage is empty, loads its A half and
//                 B half with the .cta_group::2 TMA, whose copies complete on the LEADER's
//                 tma_full_bar (mapa); only the leader posts expect_tx, for the pair's bytes;
//     warp 1      allocates TMEM in both CTAs (tcgen05.alloc.cta_group::2); in the leader only,
//                 waits until a stage is full, issues the pair MMAs and commits with
//                 .multicast::cluster to mma_done_bar in BOTH CTAs, so both producers may
//                 refill; after the last k-tile, the same to mainloop_done_bar;
//     warps 2..5  epilogue, in both CTAs: unchanged, each CTA drains its own TMEM.
//   A cluster barrier (barrier.cluster) replaces __syncthreads at setup, because the peer's TMA
//   completes on the leader's barrier, which must be initialised first, and at teardown, because
//   neither CTA may free TMEM or exit while its peer can still reach its shared memory or TMEM.
//
// WHY IT IS FASTER
//   Per k-tile (64 of K) a step-04 CTA stages A 128 x 64 + B 256 x 64 = 48 KiB for
//   2 x 128 x 256 x 64 = 4.19 MFLOP: 85 FLOP per byte the TMA writes to shared memory (and reads
//   from L2/global). A pair stages A 256 x 64 + B 256 x 64 = 64 KiB for 2 x 256 x 256 x 64 =
//   8.39 MFLOP: 128 FLOP per byte. Per SM that is 16 + 16 KiB instead of 16 + 32 KiB for the same
//   4.19 MFLOP: 0.0078 instead of 0.0117 bytes per FLOP, a third less TMA traffic, because the B
//   half each SM does not hold is read from the peer's shared memory instead of being loaded
//   twice. At 4096^3 the whole problem moves 1 GiB from global memory into shared memory instead
//   of 1.5 GiB. The smaller stages also buy a deeper ring: 7 stages instead of 4.
//   What stays: one tile per pair, then exit. The epilogue (TMEM -> registers -> global) and the
//   setup of the next CTAs still leave the tensor core idle (step 06's persistent kernel).
//   The published B200 figure for this design is ~1302 TFLOPS at 4096^3 vs ~1209 for the
//   step-04 design (gau-nernst, "tcgen05 for dummies", docs/references.md, "v5" and "v4"; not measured here).
//
// SHARED-MEMORY ARITHMETIC (why 7 stages)
//   One stage = 128 x 64 x 2 B (A) + 128 x 64 x 2 B (half of B) = 16 KiB + 16 KiB = 32 KiB.
//   7 stages = 224 KiB; + 15 barriers + TMEM slot (124 B) + 1 KiB alignment slack = 230524 B
//   <= 232448 B = 227 KiB (sm_100). An 8th stage would need 256 KiB. TMEM: 256 FP32 columns.
//
// CONSTRAINTS
//   Any M, N >= 1; K a multiple of 8 (TMA row pitch). Tiles must be 1024-byte aligned. Launched
//   with clusters of 2 CTAs along x (grid always even); when M is not a multiple of 256 the peer
//   of the last pair row may hold no valid rows: it still loads its half of B (the leader's
//   result needs it), its A box is zero-filled by the TMA, and its epilogue stores nothing.
//
// RUN
//   make step05 && ./step05            (B200: real kernel; elsewhere: the emulator, 512^3)
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
constexpr uint32_t TMEM_COLS = 256;   // power of two >= BLOCK_N

// Shared memory, offsets from a 1024-byte-aligned base: NUM_STAGES A tiles, NUM_STAGES B tiles,
// one tma_full_bar ("stage full") and one mma_done_bar ("stage empty") per stage, and
// mainloop_done_bar. The layout is the same in both CTAs of the pair, and it must be: the pair
// MMA reads the peer's tiles at the leader's descriptor addresses, and a multicast commit
// arrives at the same barrier offset in every CTA of its mask. tma_full_bar is used in the
// leader only; the peer keeps the slots so that everything after them stays at the same offset.
constexpr uint32_t A_STAGE_BYTES = BLOCK_M * BLOCK_K * 2;       // 128 x 64 BF16 = 16 KiB
constexpr uint32_t B_STAGE_BYTES = B_ROWS * BLOCK_K * 2;        // 128 x 64 BF16 = 16 KiB
constexpr uint32_t A_TILES = 0;
constexpr uint32_t B_TILES = A_TILES + NUM_STAGES * A_STAGE_BYTES;
constexpr uint32_t TMA_FULL_BARS = B_TILES + NUM_STAGES * B_STAGE_BYTES;
constexpr uint32_t MMA_DONE_BARS = TMA_FULL_BARS + NUM_STAGES * 8;
constexpr uint32_t MAINLOOP_DONE_BAR = MMA_DONE_BARS + NUM_STAGES * 8;
constexpr uint32_t TMEM_SLOT = MAINLOOP_DONE_BAR + 8;           // tcgen05.alloc writes the address here
constexpr uint32_t SMEM_BYTES = TMEM_SLOT + 4;

constexpr uint32_t STAGE_BYTES = (BLOCK_M + B_ROWS) * BLOCK_K * 2;  // what one CTA's TMA delivers per k-tile
constexpr uint32_t PAIR_STAGE_BYTES = CLUSTER_SIZE * STAGE_BYTES;  // what the leader's tma_full_bar receives
constexpr uint32_t ATOM_COLUMN_A = BLOCK_M * 128;                   // bytes of one 128-byte-wide atom column
constexpr uint32_t ATOM_COLUMN_B = B_ROWS * 128;
constexpr uint32_t SBO_SW128 = 8 * 128;                             // next 8-row group
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0, "128B-swizzled tiles must be 1024-byte aligned");
static_assert(SMEM_BYTES + kSmemAlignSlack <= 232448, "exceeds the sm_100 shared-memory limit");
static_assert(is_valid_f16_shape_cta2(PAIR_M, BLOCK_N), "not a cta_group::2 kind::f16 shape (PTX ISA Table 39)");
constexpr uint32_t IDESC = make_idesc_bf16_f32(PAIR_M, BLOCK_N);  // M = 256: the whole pair
constexpr uint16_t PAIR_MASK = 0b11;                               // multicast to cluster ranks 0 and 1

// Which rows a CTA holds. Cluster c computes the 256 x 256 output tile (pair_m, pair_n), pairs
// numbered along N first as the CTAs of step 04 were; inside the pair the two CTAs take
// consecutive 128-row M tiles of the same N tile, because a pair MMA splits M (and B's rows)
// between the CTAs by rank. The kernel and plots/layout_dump.cpp both call this function.
struct CtaTile {
  int m0;      // first row of A and of C held by this CTA (128 rows)
  int n0;      // first column of C of the pair's tile (256 columns, in both CTAs)
  int b_row0;  // first row of B held by this CTA (128 rows): its half of the 256
};
__host__ __device__ constexpr CtaTile cta_tile_2sm(int cluster_id, int cta_rank, int n) {
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int pair_m = cluster_id / tiles_n, pair_n = cluster_id % tiles_n;
  return {pair_m * PAIR_M + cta_rank * BLOCK_M, pair_n * BLOCK_N, pair_n * BLOCK_N + cta_rank * B_ROWS};
}

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                __nv_bfloat16* c, int m, int n, int k, const __grid_constant__ TraceBuf trace_buf) {
  // Timeline annotations for --trace, as in step 04 (docs/tracing.md). Both CTAs of a pair
  // record their own timeline; only the leader's MMA warp has an "mma" phase.
  PhaseTrace<kTrace> trace(trace_buf);
  trace.begin(Phase::kSetup);
  uint8_t* smem = aligned_smem_base();
  const uint32_t smem_base = smem_addr(smem);
  auto a_tile = [&](int s) { return smem_base + A_TILES + s * A_STAGE_BYTES; };
  auto b_tile = [&](int s) { return smem_base + B_TILES + s * B_STAGE_BYTES; };
  auto tma_full_bar = [&](int s) { return smem_base + TMA_FULL_BARS + 8 * s; };
  auto mma_done_bar = [&](int s) { return smem_base + MMA_DONE_BARS + 8 * s; };
  const uint32_t mainloop_done_bar = smem_base + MAINLOOP_DONE_BAR;
  const uint32_t tmem_slot = smem_base + TMEM_SLOT;  // where tcgen05.alloc writes the TMEM address

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // One cluster (CTA pair) per 256 x 256 output tile; a 1-D grid because gridDim.y stops at
  // 65535 while gridDim.x reaches 2^31 - 1. With clusters of 2 along x, blockIdx.x = 2 * cluster
  // + rank, but the special registers say what the hardware pairs.
  const uint32_t cta_rank = cluster_ctarank();
  const bool is_leader = (cta_rank & 1) == 0;      // the even CTA of the pair issues the MMAs
  const uint32_t leader_rank = cta_rank & ~1u;
  const CtaTile tile = cta_tile_2sm(int(cluster_id_x()), int(cta_rank), n);
  const int m0 = tile.m0, n0 = tile.n0, b_row0 = tile.b_row0;

  // Setup: the MMA warp of EACH CTA allocates the accumulator in TMEM (cta_group::2: one warp
  // per CTA, same warp, same slot offset; both get the same address), one thread of each
  // producer warp initialises that CTA's barriers. The peer's TMA will complete_tx on the
  // leader's barriers, so a CLUSTER barrier publishes the initialisation (fence.mbarrier_init
  // releases it at cluster scope, §9.7.13.4) before any CTA starts loading; the tcgen05 fences
  // order the allocation with that barrier (§9.7.16.6.4).
  if (warp == 1) {
    tmem_alloc_2sm(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit_2sm();
  } else if (warp == 0 && elect_one_sync()) {
    for (int s = 0; s < NUM_STAGES; ++s) {
      mbarrier_init(tma_full_bar(s), 1);  // one arrival: the leader's expect_tx (leader only)
      mbarrier_init(mma_done_bar(s), 1);  // one arrival: the leader's multicast tcgen05.commit
    }
    mbarrier_init(mainloop_done_bar, 1);  // one arrival: the final multicast tcgen05.commit
    fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);
  trace.end(Phase::kSetup);

  const int num_k_tiles = ceil_div(k, BLOCK_K);

  if (warp == 0) {
    // ---------------------------------------------------------------- producer (TMA) warp, both CTAs
    if (elect_one_sync()) {
      const auto producer_span = trace.span_elected(Phase::kProducer);  // ends with this block
      uint32_t empty_parity = 1;  // opposite parity: the first pass over the ring does not wait
      for (int kt = 0; kt < num_k_tiles; ++kt) {
        const int s = kt % NUM_STAGES;
        // The MMAs that read stage s are done.
        mbarrier_wait_parity(mma_done_bar(s), empty_parity, trace.span_elected(Phase::kWaitMmaDone, s));
        // Both CTAs' copies complete on the leader's tma_full_bar[s] (the .cta_group::2 TMA may
        // signal the destination's pair peer, §9.7.9.25.5.2), so its single arrival announces
        // the pair's bytes. The peer's bytes may land before that arrival: the tx-count just
        // dips below zero, and the phase cannot complete while the arrival is pending.
        if (is_leader) mbarrier_arrive_expect_tx(tma_full_bar(s), PAIR_STAGE_BYTES);
        const uint32_t leader_full_bar = mapa_shared_cluster(tma_full_bar(s), leader_rank);
        for (int i = 0; i < BLOCK_K / ATOM_K; ++i) {
          tma_load_2d_2sm(a_tile(s) + i * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + i * ATOM_K, m0, leader_full_bar);
          tma_load_2d_2sm(b_tile(s) + i * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + i * ATOM_K, b_row0, leader_full_bar);
        }
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      // Drain: wait until the MMAs have released every stage, as if loading NUM_STAGES more
      // k-tiles. Nothing else waits for the last stages' commit arrivals, and the ISA does not
      // order them before the final commit's, so without this one could still be in flight
      // towards this CTA's barriers when it exits.
      trace.begin_elected(Phase::kDrain);
      for (int kt = num_k_tiles; kt < num_k_tiles + NUM_STAGES; ++kt) {
        const int s = kt % NUM_STAGES;
        mbarrier_wait_parity(mma_done_bar(s), empty_parity);
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      trace.end_elected(Phase::kDrain);
    }
  } else if (warp == 1) {
    // ---------------------------------------------------------------- MMA warp, leader only
    if (is_leader && elect_one_sync()) {
      const auto mma_span = trace.span_elected(Phase::kMma);  // ends with this block
      uint32_t full_parity = 0;
      for (int kt = 0; kt < num_k_tiles; ++kt) {
        const int s = kt % NUM_STAGES;
        // Both CTAs' halves of stage s have landed.
        mbarrier_wait_parity(tma_full_bar(s), full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
        tcgen05_fence_after_thread_sync();
        // The descriptors hold the leader's addresses; the MMA reads the peer's A and B halves
        // at the same offsets in the peer's shared memory, and writes each CTA's 128 rows of D
        // to that CTA's TMEM at tmem_accum.
        for (int i = 0; i < BLOCK_K / ATOM_K; ++i)
          for (int ks = 0; ks < ATOM_K / MMA_K; ++ks) {  // K step ks: +32 bytes inside the 128-byte row
            const uint64_t a_desc = make_smem_desc(a_tile(s) + i * ATOM_COLUMN_A + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            const uint64_t b_desc = make_smem_desc(b_tile(s) + i * ATOM_COLUMN_B + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            mma_bf16_ss_2sm(tmem_accum, a_desc, b_desc, IDESC, /*accumulate=*/kt > 0 || i > 0 || ks > 0);
          }
        // Stage s is empty in BOTH CTAs once these MMAs have read it: the multicast commit
        // arrives on mma_done_bar[s] at the same offset in every CTA of the mask (§9.7.16.12.1).
        mma_commit_2sm_multicast(mma_done_bar(s), PAIR_MASK);
        if (s == NUM_STAGES - 1) full_parity ^= 1;
      }
      mma_commit_2sm_multicast(mainloop_done_bar, PAIR_MASK);  // tracks every earlier MMA of this thread
    }
  } else {
    // ---------------------------------------------------------------- epilogue warps 2..5, both CTAs
    const auto epilogue_span = trace.span(Phase::kEpilogue);  // ends with this block
    mbarrier_wait_parity(mainloop_done_bar, 0, trace.span(Phase::kWaitMainloopDone));
    tcgen05_fence_after_thread_sync();
    // With M = 256 over the pair, this CTA's accumulator row i (output row m0 + i) sits in its own
    // TMEM lane i (data-path layout A), and warp w may only read lanes 32*(w%4)..+31: warps 2, 3,
    // 4, 5 take lane quarters 2, 3, 0, 1.
    const int quarter = warp % 4;
    const int row = m0 + quarter * 32 + lane;
    for (int col = 0; col < BLOCK_N; col += 16) {
      uint32_t r[16];
      tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
      tmem_wait_ld(r);
      store_c_chunk8(c, m, n, row, n0 + col, r);
      store_c_chunk8(c, m, n, row, n0 + col + 8, r + 8);
    }
  }

  trace.begin(Phase::kTeardown);
  // Every warp of BOTH CTAs must be done reading TMEM before the pair's allocation is freed, and
  // no CTA may exit while its peer can still reach its shared memory: a cluster barrier.
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc_2sm(tmem_accum, TMEM_COLS);
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

constexpr StepSpec spec{5, "2sm_mma", "2-SM MMA: CTA pairs in clusters of 2, tcgen05.mma.cta_group::2", Arch::kSm100f, 8,
                        Operands::kBF16, nullptr, CLUSTER_SIZE};

void launch(const GemmArgs& g) {
  const CUtensorMap tmap_a = make_kmajor_sw128_map(g.a, g.m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_kmajor_sw128_map(g.b, g.n, g.k, B_ROWS);
  LaunchDims d;
  d.grid = dim3(unsigned(CLUSTER_SIZE * ceil_div(g.m, PAIR_M) * ceil_div(g.n, BLOCK_N)));
  d.block = dim3(NUM_THREADS);
  d.cluster = dim3(CLUSTER_SIZE, 1, 1);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, tmap_a, tmap_b, g.c, g.m, g.n, g.k, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
