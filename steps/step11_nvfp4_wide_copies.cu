// Step 11 — NVFP4 at the competition's level: fewer, bigger copies (two k-tiles per copy), C
// through shared memory and TMA stores, and BLOCK_N = 64 or 128 chosen per shape.
//
// NEW SINCE STEP 10
//   The split-K scheme (S CTAs per tile, the last one sums the FP32 partials in split order) and
//   its workspace are step 10's. What changes:
//   * A stage holds KT_PER_STAGE = 2 k-tiles, loaded with FOUR copies instead of eight: one 3-D
//     TMA box of A (128 B of K x 128 rows x 2 k-tiles = 32 KiB), the same for B, and one bulk copy
//     each for SFA and SFB (4 KiB: the scale atoms of consecutive k-steps are contiguous in global
//     memory, nvfp4_layout.h). The 3-D tensor map views K as (128 bytes within a k-tile) x rows x
//     (k-tile), its third stride 128 bytes: k-tile j of a stage lands at +16 KiB x j, exactly where
//     step 10's 2-D box would put it. A stage with a partial k-tile (K's 1..3-step tail, outside
//     the 3-D view) or a lone one (an odd k-tile count in a split) takes 2-D boxes, one per k-tile.
//   * C goes TMEM -> registers -> FP16 in 128B-swizzled shared memory -> one TMA store per
//     32 x 64 sub-tile (step 08's epilogue), from TMEM (S = 1) or from the reducer's sum. The
//     staging buffers reuse the A ring, idle once the last MMA has completed (mainloop_done_bar).
//     N % 8 != 0 (no tensor map for C) keeps step 10's direct stores.
//   * BLOCK_N (= MMA N) is 128 or 64, a template parameter (gemm_kernel_n128 / _n64). B's scales
//     come in 128-row atoms either way: a 64-wide tile loads its atom whole and the MMA reads its
//     half, 2 TMEM columns further for the odd half (row r of an atom sits in column r / 32; as
//     CUTLASS's sm100 block-scaled mainloop does for N = 64). 64 halves B, the partial and C per
//     CTA and doubles the tiles: 4 stages of 56 KiB fit.
//   * The plan (the planner of step 10, common/nvfp4_plan.cpp): BLOCK_N and S together, the pair
//     whose estimate (waves x (streaming + tail + C)) is smallest, with the new costs below.
//
// WHY IT IS FASTER (the B200 timing model, docs/timing_model.md, `./step11 --model-params`)
//   The SM's TMA unit charges 101 cycles (54 ns) per copy plus the bytes at 311 GB/s. Step 10's
//   k-tile: 4 copies + 36 KiB = 217 + 119 = 336 ns. Two k-tiles here: 4 copies + 72 KiB =
//   217 + 237 = 454 ns, 227 ns per k-tile (-32%); with BLOCK_N = 64, 4 copies + 56 KiB = 402 ns.
//   C: step 10 stores a row per thread, 32 half-filled sectors per warp instruction, charged
//   twice: 2.2 us per 128 x 128 tile. TMA stores write whole 128-byte rows: 0.55 us (the SM's
//   store path, 32 B per cycle, H100-measured). The split tail (partial out, atom, partials in)
//   halves with BLOCK_N = 64. Measured in the model (`./step11 --predict`, us; each lever alone
//   is the knobs of CONSTRAINTS with the other two off; results/model_b200_sweeps.csv; ranges and
//   pairs: docs/11):
//                                     128x7168x16384  128x4096x7168  128x7168x2048
//     step 10                                  17.12          10.81           6.51
//     none of the three (knobs)                17.65          11.50           6.73
//     two k-tiles per copy                     16.94          10.99           6.66
//     TMA-store C                              16.02           9.87           5.18
//     BLOCK_N = 64                             22.79           8.63           5.46
//     all three, BLOCK_N per shape             15.32 (128)     6.93 (64)      3.88 (64)
//     published competition entry (B200)       18.3            8.29           6.54
//   (kernel times; the entry's are call times: docs/13 compares like with like)
//
// SPLIT OR NOT, AND BLOCK_N (ns of the model)
//   A split of n k-tiles streams floor(n / 2) stages (454 or 402 ns) and, n odd, one lone k-tile
//   (336 / 309 ns). S > 1 adds the reducer's partial out (128 x BLOCK_N FP32 at 60 B/ns: 1.09 /
//   0.55 us), the atom (0.32 us, an estimate) and S - 1 partials in. C adds 0.55 / 0.27 us. The
//   competition shapes: 128 x 7168 x 16384: BLOCK_N 128, S = 2 (64 would leave no room to split:
//   112 tiles); 128 x 4096 x 7168: 64, S = 2; 128 x 7168 x 2048: 64, S = 1.
//
// WHAT BOUNDS IT (model traces, docs/11_nvfp4_wide_copies.md)
//   128x7168x16384: the ring's latency (3 stages), the TMA units next (busy 70% of the
//     mainloop): 16 stages land from 1.57 to 10.27 us, 0.60 us apart on average against the
//     formula's 0.454; then the partial (1.0 us), the atom, one partial in and C: 15.32 us. HBM
//     is near: 112 CTAs x 18 KiB of new bytes per 300 ns k-tile = 6.9 of 7.2 TB/s.
//   128x4096x7168: the TMA units (7 stages 0.41 us apart, last MMA done at 4.3 us, 62%), then
//     the tail (2.6 us).
//   128x7168x2048: the TMA units (4 stages landing 1.52-2.73 us), launch, setup and latency
//     (1.1 us), C (0.3 us).
//
// A AND B SWAPPED (TCG_STEP11_SWAP_AB=1: a tested experiment; the plan does not take it)
//   The competition entry's swap: the kernel computes C^T = B A^T, an N x M problem (B and SFB
//   the MMA's 128-row A side, A and SFA its BLOCK_N side, BLOCK_N now along M), with the same
//   plan, splits and workspace, and writes C column by column (a thread holds one n and all of
//   its tile's m; per m the warp writes 32 consecutive n of a row of C: 64 bytes, whole sectors).
//   At M = 128 it moves the same copies and bytes over the same tiles and splits; only the store
//   of C differs. Model, us: 16.79 / 7.71 / 4.51 against 16.82 / 7.74 / 4.69 above: a tie, a tie,
//   and 0.18 us on shape 3, all of it in how the model queues 112 CTAs' TMA stores issued at
//   the same moment (docs/11_nvfp4_wide_copies.md, "A and B swapped").
//
// SHARED MEMORY, TMEM: BLOCK_N 128: 3 stages x 72 KiB = 216 KiB; 64: 4 x 56 KiB = 224 KiB; plus
//   barriers, the TMEM slot and the reducer flag; C's staging reuses the A ring. TMEM: BLOCK_N
//   accumulator columns + stages x 64 scale columns (320 of a 512-column allocation).
//
// CONSTRAINTS
//   As step 10: any M, N >= 1, K a multiple of 64; the same workspace (partials of 128 x BLOCK_N).
//   The TMA-store path needs N % 8 == 0 and a 16-byte-aligned C. For tests and the lever table
//   (docs/11) and the published designs (docs/timing_model.md), five environment knobs switch a
//   lever off or force it:
//     TCG_STEP11_BLOCK_N=64|128   forces BLOCK_N;  TCG_STEP11_SPLITS=1..1024 forces S;
//     TCG_STEP11_WIDE_COPIES=0|1  0: every k-tile of a stage with step 10's copies (a 2-D box per
//                                 operand, one scale copy per k-tile; the plan costs them so);
//     TCG_STEP11_TMA_C=0|1        0: C with step 10's direct stores;
//     TCG_STEP11_SWAP_AB=0|1      1: A and B swapped, C^T computed and stored transposed.
//
// RUN
//   make step11 && ./step11            (B200: real kernel; elsewhere: the emulator, by default
//                                       128 x 256 x 4160 on 8 SMs: BLOCK_N 64, S = 2)
//   ./step11 --predict --m 128 --n 7168 --k 16384     (the B200 timing model)
#include "../common/kernel_common.cuh"
#include "../common/nvfp4_tensor_maps.cuh"
#include "../common/nvfp4_layout.h"
#include "../common/nvfp4_plan.h"

#include <cstdlib>

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;           // = MMA M: one TMEM lane per output row
constexpr int BLOCK_K = 256;           // FP4 elements of K per k-tile: one 128-byte swizzle atom row
constexpr int MMA_K = int(kMxf4K);     // K of one kind::mxf4nvf4 MMA: 64 elements = 32 bytes
constexpr int KSTEPS = BLOCK_K / MMA_K;  // 4 MMAs per k-tile
constexpr int KT_PER_STAGE = 2;        // k-tiles per stage, loaded by one box per operand
constexpr int NUM_THREADS = 192;       // warp 0: TMA, warp 1: MMA, warps 2..5: epilogue
constexpr uint32_t TMEM_COLS = 512;    // power of two >= accumulator + scale columns
constexpr uint32_t EPILOGUE_BAR = 1;   // named barrier of the 4 epilogue warps (0 is __syncthreads)
constexpr uint32_t EPILOGUE_THREADS = 128;
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
  static constexpr uint32_t TMEM_SLOT = MAINLOOP_DONE_BAR + 8;
  static constexpr uint32_t REDUCER_FLAG = TMEM_SLOT + 4;  // 1: this CTA arrived last and reduces its tile
  static constexpr uint32_t SMEM_BYTES = REDUCER_FLAG + 4;
  static constexpr uint32_t STAGING = A_TILES;  // C staging after the mainloop: warp q's sub-tiles
  static constexpr int SUBTILES = BN / SUB_N;   // per epilogue warp: 2 or 1
  static constexpr uint32_t SF_TMEM_BASE = BN;
  static constexpr uint32_t IDESC = make_idesc_mxf4nvf4(BLOCK_M, BN);
  static constexpr uint32_t PARTIAL_BYTES = BLOCK_M * BN * 4;  // 64 or 32 KiB of FP32
  static_assert(B_KTILE_BYTES % 1024 == 0 && A_KTILE_BYTES % 1024 == 0 && STAGING_BYTES % 1024 == 0,
                "128B-swizzled tiles must be 1024-byte aligned");
  static_assert(4 * SUBTILES * STAGING_BYTES <= NUM_STAGES * A_STAGE_BYTES, "C staging fits in the A ring");
  static_assert(SMEM_BYTES + kSmemAlignSlack <= SMEM_LIMIT, "exceeds the sm_100 shared-memory limit");
  static_assert(SF_TMEM_BASE + NUM_STAGES * SF_TMEM_STAGE_COLS <= TMEM_COLS, "TMEM columns");
  static_assert(is_valid_mxf4_shape_cta1(BLOCK_M, BN) && BN % SUB_N == 0 && BN <= int(kSfAtomRows),
                "invalid kind::mxf4nvf4 shape, or a tile wider than one scale atom");
};
static_assert(Cfg<128>::NUM_STAGES == 3 && Cfg<64>::NUM_STAGES == 4, "the header's stage counts");

// The workspace, as step 10: per-tile counters, then one FP32 partial per (tile, split), granule
// (g, r) (4 columns of one row) at 16 * (128 g + r).
__host__ __device__ constexpr uint32_t granule_offset(uint32_t col_group, uint32_t row) {
  return 16u * (col_group * BLOCK_M + row);
}
__host__ __device__ constexpr size_t counter_bytes(int tiles) { return (size_t(tiles) * 4 + 255) / 256 * 256; }

// The kernel for one BLOCK_N; gemm_kernel_n128 / _n64 below are its two entry points.
template <int BN, bool kTrace>
__device__ __forceinline__ void gemm_body(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b,
                                          const CUtensorMap& tmap_a3, const CUtensorMap& tmap_b3,
                                          const CUtensorMap& tmap_c, bool tma_c, bool c_transposed, bool wide_copies,
                                          const uint8_t* sfa, const uint8_t* sfb, __half* c, int m, int n, int k, int splits,
                                          uint32_t* counters, uint8_t* partials, const TraceBuf& trace_buf) {
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
  volatile uint32_t* reducer_flag = reinterpret_cast<uint32_t*>(smem + L::REDUCER_FLAG);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int tiles = ceil_div(m, BLOCK_M) * tiles_n;
  const int tile = int(blockIdx.x) % tiles, split = int(blockIdx.x) / tiles;
  const int m0 = tile / tiles_n * BLOCK_M, n0 = tile % tiles_n * BLOCK_N;

  if (warp == 1) {
    tmem_alloc(smem_base + L::TMEM_SLOT, TMEM_COLS);
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
  // The k-tiles the 3-D maps cover, which one box per operand may load (none when the lever is
  // off, TCG_STEP11_WIDE_COPIES=0: every k-tile then takes step 10's copies).
  const int full_k_tiles = wide_copies ? num_ksteps / KSTEPS : 0;
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
        mbarrier_wait_parity(mma_done_bar(s), empty_parity, trace.span_elected(Phase::kWaitMmaDone, s));
        mbarrier_arrive_expect_tx(tma_full_bar(s), uint32_t(kts) * (A_KTILE_BYTES + L::B_KTILE_BYTES) + 2 * sf_bytes);
        if (kts == KT_PER_STAGE && kt0 + kts <= full_k_tiles) {  // one box per operand
          tma_load_3d(a_tile(s), &tmap_a3, 0, m0, kt0, tma_full_bar(s));
          tma_load_3d(b_tile(s), &tmap_b3, 0, n0, kt0, tma_full_bar(s));
        } else {  // a partial or lone k-tile (or the lever off): step 10's boxes, one per k-tile
          for (int j = 0; j < kts; ++j) {
            tma_load_2d(a_tile(s) + j * A_KTILE_BYTES, &tmap_a, (kt0 + j) * BLOCK_K / 2, m0, tma_full_bar(s));
            tma_load_2d(b_tile(s) + j * L::B_KTILE_BYTES, &tmap_b, (kt0 + j) * BLOCK_K / 2, n0, tma_full_bar(s));
          }
        }
        // The scales: one copy per array for the stage (the lever off: one per k-tile, as step 10).
        for (int j = 0; j < (wide_copies ? 1 : kts); ++j) {
          const uint32_t kstep = uint32_t((kt0 + j) * KSTEPS), off = uint32_t(j * KSTEPS) * kSfAtomBytes;
          const uint32_t bytes = wide_copies ? sf_bytes : uint32_t(ksteps_of(kt0 + j)) * kSfAtomBytes;
          bulk_load(sfa_tile(s) + off, sfa + sf_atom_offset(sfa_row_block, kstep, uint32_t(k)), bytes, tma_full_bar(s));
          bulk_load(sfb_tile(s) + off, sfb + sf_atom_offset(sfb_row_block, kstep, uint32_t(k)), bytes, tma_full_bar(s));
        }
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
    uint8_t* const slots = partials + size_t(tile) * size_t(splits) * L::PARTIAL_BYTES;
    bool write_c = true;
    if (splits > 1) {
      // 1.-2. As step 10: this split's partial to its slot, bar.sync, count with acq_rel.
      uint8_t* const mine = slots + size_t(split) * L::PARTIAL_BYTES;
      for (int col = 0; col < BLOCK_N; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
        tmem_wait_ld(r);
        for (int g = 0; g < 4; ++g)
          st_global_v4(mine + granule_offset(uint32_t(col / 4 + g), uint32_t(tile_row)),
                       make_uint4(r[4 * g], r[4 * g + 1], r[4 * g + 2], r[4 * g + 3]));
      }
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
      write_c = *reducer_flag != 0;
    }
    if (write_c) {
      // 3. C = ((p0 + p1) + p2) + ... in split order (S = 1: the accumulator), 64 columns at a time.
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
              for (int g = 0; g < 4; ++g) {
                const uint4 q = ld_global_v4(slots + size_t(s) * L::PARTIAL_BYTES +
                                             granule_offset(uint32_t(col / 4 + g), uint32_t(tile_row)));
                v[4 * g] = q.x, v[4 * g + 1] = q.y, v[4 * g + 2] = q.z, v[4 * g + 3] = q.w;
              }
            }
            for (int e = 0; e < 16; ++e) acc[e] = s == 0 ? u32_as_float(v[e]) : acc[e] + u32_as_float(v[e]);
          }
          for (int e = 0; e < 16; ++e) memcpy(&out[e], &acc[e], 4);
        }
        const int col0 = n0 + sub * SUB_N;
        if (c_transposed) {  // A and B swapped: this thread's accumulator row is column `row` of C
          // C[col][row], C's rows being `m` (the kernel's M = the problem's N) elements long. For
          // each column the warp's 32 lanes write 32 consecutive elements of one row of C: 64
          // contiguous bytes, two whole sectors per store instruction, as many bytes per sector
          // as a TMA store moves. A TMA store would need the tile transposed in shared memory
          // first, with the same 2-byte stores (a thread holds one element of each row of C).
          for (int j = 0; j < SUB_N; ++j)  // constant bounds: unrolled, r stays in registers
            if (row < m && col0 + j < n)
              store_2B(c + size_t(col0 + j) * m + row, __float2half_rn(u32_as_float(r[j])));
          continue;
        }
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

  trace.begin(Phase::kTeardown);
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc(tmem_accum, TMEM_COLS);
  trace.end(Phase::kTeardown);
}

#define TCG_STEP11_PARAMS                                                                                           \
  const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,                          \
      const __grid_constant__ CUtensorMap tmap_a3, const __grid_constant__ CUtensorMap tmap_b3,                    \
      const __grid_constant__ CUtensorMap tmap_c, bool tma_c, bool c_transposed, bool wide_copies,                  \
      const uint8_t *sfa, const uint8_t *sfb, __half *c, int m, int n, int k, int splits, uint32_t *counters,        \
      uint8_t *partials, const __grid_constant__ TraceBuf trace_buf
#define TCG_STEP11_ARGS                                                                                             \
  tmap_a, tmap_b, tmap_a3, tmap_b3, tmap_c, tma_c, c_transposed, wide_copies, sfa, sfb, c, m, n, k, splits, counters, \
      partials, trace_buf
template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS) gemm_kernel_n128(TCG_STEP11_PARAMS) {
  gemm_body<128, kTrace>(TCG_STEP11_ARGS);
}
template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS) gemm_kernel_n64(TCG_STEP11_PARAMS) {
  gemm_body<64, kTrace>(TCG_STEP11_ARGS);
}

// The plans this kernel runs; the planner (common/nvfp4_plan.cpp) picks the one the timing model's
// costs say finishes first: BLOCK_N 64 or 128, S from 1 to the k-tiles (one wave), partials through
// the workspace (step 10), no clusters; costed with or without the wide copies. Each lever can be
// switched off or forced by its knob. TCG_STEP11_SWAP_AB=1 swaps A and B: the kernel computes
// C^T = B A^T, an N x M problem whose tiles are 128 rows of N by BLOCK_N of M (planned as any
// shape), and writes each tile back transposed.
struct SplitPlan : nvfp4::Plan {
  bool wide_copies, swap_ab, tma_c;
};
static nvfp4::PlanRules plan_rules(bool wide_copies) {
  return {"TCG_STEP11_", {64, 128}, /*splits: any*/ {}, 0, {1}, wide_copies ? KT_PER_STAGE : 1, Cfg<128>::NUM_STAGES,
          Cfg<64>::NUM_STAGES, nvfp4::Reduction::kWorkspace, nvfp4::CStore::kTma, false, false};
}
static SplitPlan plan_for(int m, int n, int k, int sms) {
  const bool wide_copies = env_knob("TCG_STEP11_WIDE_COPIES", {0, 1}, 1) == 1;
  const bool swap_ab = env_knob("TCG_STEP11_SWAP_AB", {0, 1}, 0) == 1;
  const bool tma_c = env_knob("TCG_STEP11_TMA_C", {0, 1}, 1) == 1;
  if (swap_ab) std::swap(m, n);  // the kernel's M and N
  nvfp4::Forced f;
  f.block_n = env_knob("TCG_STEP11_BLOCK_N", {64, 128}, 0);
  f.splits = env_knob_range("TCG_STEP11_SPLITS", 1, 1024, 0);
  SplitPlan p{nvfp4::plan(plan_rules(wide_copies), m, n, k, sms, f), wide_copies, swap_ab, tma_c};
  return p;
}
static StepPlan plan_line(int m, int n, int k, int sms) {
  const SplitPlan p = plan_for(m, n, k, sms);
  return {p.line() + (p.wide_copies ? "" : ", a copy per k-tile") + (p.tma_c ? "" : ", C by direct stores") +
              (p.swap_ab ? ", A and B swapped" : ""),
          ""};
}

// StepSpec::workspace: counters + partials when the launch splits K, nothing otherwise.
static StepWorkspace workspace_for_problem(int m, int n, int k, int sms) {
  const SplitPlan p = plan_for(m, n, k, sms);
  if (p.splits == 1) return {};
  StepWorkspace w;
  w.zeroed_bytes = counter_bytes(p.tiles);
  w.bytes = w.zeroed_bytes + size_t(p.tiles) * size_t(p.splits) * size_t(BLOCK_M * p.block_n * 4);
  return w;
}

constexpr StepSpec spec{11, "nvfp4_wide_copies", "NVFP4 split-K, two k-tiles per copy, TMA-store C, BLOCK_N 64 or 128",
                        Arch::kSm100f, /*k_multiple=*/64, Operands::kNVFP4, &workspace_for_problem, /*cluster_size=*/1,
                        /*epilogue=*/nullptr, /*repeat=*/false, /*persistent=*/{}, &plan_line,
                        "  TCG_STEP11_BLOCK_N=64|128   forces BLOCK_N\n"
                        "  TCG_STEP11_SPLITS=1..1024   forces S (at most one per k-tile; past one wave too)\n"
                        "  TCG_STEP11_WIDE_COPIES=0|1  0: step 10's copies, one per operand and k-tile [1]\n"
                        "  TCG_STEP11_TMA_C=0|1        0: C with step 10's direct stores [1]\n"
                        "  TCG_STEP11_SWAP_AB=0|1      1: A and B swapped, C^T computed and stored transposed [0]\n",
                        /*sim_default=*/{128, 256, 4160, 8}};

void launch(const GemmArgs& g) {
  const Nvfp4Operands& f = g.fp4;
  const int sms = num_sms();
  const SplitPlan p = plan_for(g.m, g.n, g.k, sms);
  const StepWorkspace need = workspace_for_problem(g.m, g.n, g.k, sms);
  if (g.workspace_bytes < need.bytes || (need.bytes > 0 && g.workspace == nullptr))
    throw std::invalid_argument("step 11: " + std::to_string(p.splits) + " splits need a workspace of " +
                                std::to_string(need.bytes) + " bytes; got " + std::to_string(g.workspace_bytes));
  uint8_t* ws = static_cast<uint8_t*>(g.workspace);
  uint32_t* counters = reinterpret_cast<uint32_t*>(ws);
  uint8_t* partials = ws ? ws + need.zeroed_bytes : nullptr;
  // A and B swapped: B (and SFB) is the MMA's A operand, A (and SFA) its B; the kernel's M x N
  // is the problem's N x M, and it stores C transposed, without TMA stores.
  const uint8_t *mma_a = f.a, *mma_b = f.b, *mma_sfa = f.sfa, *mma_sfb = f.sfb;
  int m = g.m, n = g.n;
  if (p.swap_ab) std::swap(mma_a, mma_b), std::swap(mma_sfa, mma_sfb), std::swap(m, n);
  const CUtensorMap tmap_a = make_fp4_kmajor_sw128_map(mma_a, m, g.k, BLOCK_M);
  const CUtensorMap tmap_b = make_fp4_kmajor_sw128_map(mma_b, n, g.k, p.block_n);
  const CUtensorMap tmap_a3 = make_fp4_kmajor_sw128_map_3d(mma_a, m, g.k, BLOCK_M, KT_PER_STAGE);
  const CUtensorMap tmap_b3 = make_fp4_kmajor_sw128_map_3d(mma_b, n, g.k, p.block_n, KT_PER_STAGE);
  // The TMA store needs C's rows 16-byte aligned (a tensor map's row pitch).
  const bool tma_c = !p.swap_ab && p.tma_c && g.n % 8 == 0 &&
                     reinterpret_cast<uintptr_t>(f.c) % 16 == 0;
  const CUtensorMap tmap_c = tma_c ? make_f16_c_store_map(f.c, g.m, g.n, SUB_N, SUB_M) : CUtensorMap{};
  LaunchDims d;
  d.grid = dim3(unsigned(p.tiles * p.splits));
  d.block = dim3(NUM_THREADS);
  if (p.block_n == 64) {
    d.smem_bytes = Cfg<64>::SMEM_BYTES + kSmemAlignSlack;
    launch_kernel(TCG_TRACED(gemm_kernel_n64, g.trace), d, g.stream, tmap_a, tmap_b, tmap_a3, tmap_b3, tmap_c, tma_c,
                  p.swap_ab, p.wide_copies, mma_sfa, mma_sfb, f.c, m, n, g.k, p.splits, counters, partials, g.trace);
  } else {
    d.smem_bytes = Cfg<128>::SMEM_BYTES + kSmemAlignSlack;
    launch_kernel(TCG_TRACED(gemm_kernel_n128, g.trace), d, g.stream, tmap_a, tmap_b, tmap_a3, tmap_b3, tmap_c, tma_c,
                  p.swap_ab, p.wide_copies, mma_sfa, mma_sfb, f.c, m, n, g.k, p.splits, counters, partials, g.trace);
  }
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
