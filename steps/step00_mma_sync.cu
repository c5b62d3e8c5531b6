// Step 00 — the warm-up: a BF16 GEMM from warp-level tensor-core instructions, mma.sync and
// ldmatrix, with shared-memory tiles and eight warps per block.
//
// WHAT IT TEACHES
//   Since Ampere (sm_80) the portable tensor-core MMA is a warp instruction (Hopper added the
//   warpgroup-wide wgmma, Blackwell tcgen05; mma.sync still runs on both): the 32 threads of a
//   warp together hold the operands and the result in their registers, each thread a fixed
//   handful of elements called its *fragment*. For
//   mma.sync.m16n8k16 with BF16 inputs and FP32 accumulation (PTX ISA §9.7.14.5.8), with
//   g = lane / 4 ("groupID") and t = lane % 4 ("thread in group"):
//     A (16x16, row-major)  4 registers of 2 BF16:  a[r] = A[g + 8*(r%2)][2t + 8*(r/2) + {0,1}]
//     B (16x8, "col")       2 registers of 2 BF16:  b[r] = B[2t + 8r + {0,1}][g]
//     C/D (16x8, FP32)      4 floats:               c[r] = C[g + 8*(r/2)][2t + r%2]
//   Each 8x8 quarter of A, each 8x8 half of B and each 8x8 half of C is spread the same way:
//   lane l owns row l/4, columns 2(l%4) and 2(l%4)+1. ldmatrix (§9.7.14.5.15) produces exactly
//   this spread from shared memory: lane i supplies the address of row i%8 of matrix i/8 (eight
//   contiguous 16-byte rows per matrix), and register j of every lane receives its two elements
//   of matrix j. So one ldmatrix.x4 loads a whole A fragment, and one more loads the B fragments
//   of two neighbouring n8 tiles. docs/00_mma_sync.md draws the tables.
//
// WHY B NEEDS NO TRANSPOSE
//   mma.sync's ".col" B operand is K x N stored column by column, i.e. element (k, n) at
//   n * K + k. Our B is N x K row-major: the same bytes. Row n of B in shared memory is column n
//   of the MMA's B, and its 8 consecutive K elements are one ldmatrix row, so a plain
//   (non-.trans) ldmatrix on B's rows yields b[r] = B[2t + 8r + {0,1}][g] directly.
//
// TILING
//   A block computes a 128 x 128 tile of C with 8 warps (256 threads) arranged 2 (M) x 4 (N);
//   each warp owns a 64 x 32 sub-tile = 4 x 4 MMA tiles of 16 x 8, i.e. 64 FP32 accumulators per
//   thread. Per 16-wide k-step a warp issues 4 ldmatrix.x4 for A, 2 for B and 16 mma.sync: each
//   A fragment is reused 4 times and each B fragment 4 times, which is what makes the register
//   tile worth having. A larger warp tile would reuse more but needs more registers; 64 x 32
//   fits in 128 registers per thread (__launch_bounds__(256, 2)), so two blocks share an SM and
//   one block's loads can overlap the other block's math. K advances 64 elements per
//   shared-memory tile (4 k-steps). The tiles are 2 x 18 KiB of padded shared memory.
//
// WHY IT IS NOT THE BLACKWELL WAY
//   The accumulators live in registers and every warp must itself issue its loads and MMAs;
//   one mma.sync is only 16 x 8 x 16. Register pressure caps the tile a warp can own, so the
//   operand traffic from shared memory per FLOP stays high, and issue slots are spent on
//   ldmatrix and address arithmetic. On sm_100, tcgen05.mma reads A and B straight from shared
//   memory, accumulates into Tensor Memory, and one thread issues up to 128 x 256 x 16 at once
//   (step 01).
//   This kernel is also deliberately unpipelined: load a tile, __syncthreads(), compute,
//   __syncthreads(); nothing overlaps inside a block. Measured on an H100 (sm_90, 2026-11-21):
//   275.6 TFLOPS at 4096^3, 37% of cuBLAS (Hopper's own fast path is wgmma + TMA, not
//   mma.sync; docs/00_mma_sync.md has the figures).
//
// CONSTRAINTS
//   Any M, N >= 1; K a multiple of 8 (so every 8-element, 16-byte chunk of a row is either fully
//   inside the matrix or fully outside, and 16-byte global loads are aligned). Chunks outside A
//   or B are zero-filled in shared memory; the epilogue stores only elements inside C.
//   Runs on any GPU of compute capability >= 8.0.
//
// RUN
//   make step00 && ./step00          (a GPU of cc >= 8.0: real kernel, 4096^3; else the emulator, 512^3)
//   ./step00 --m 1000 --n 1500 --k 776 --inputs integer
#include "../common/kernel_common.cuh"

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr int BLOCK_M = 128;
constexpr int BLOCK_N = 128;
constexpr int BLOCK_K = 64;             // K elements per shared-memory tile
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 16;
constexpr int WARPS_M = 2, WARPS_N = 4;
constexpr int NUM_THREADS = 32 * WARPS_M * WARPS_N;  // 256
constexpr int WARP_M = BLOCK_M / WARPS_M;            // 64 rows of C per warp
constexpr int WARP_N = BLOCK_N / WARPS_N;            // 32 columns of C per warp
constexpr int M_FRAGS = WARP_M / MMA_M;              // 4 A fragments per k-step
constexpr int N_FRAGS = WARP_N / MMA_N;              // 4 B fragments per k-step
static_assert(N_FRAGS % 2 == 0, "B fragments are loaded two n8 tiles per ldmatrix.x4");

// Shared-memory rows are padded from 64 to 72 elements (128 -> 144 bytes).
// ldmatrix reads each 8x8 matrix as 8 rows of 16 bytes, all at the same K offset. Shared memory
// has 32 banks of 4 bytes, so one pass serves 128 bytes without conflict only if the 8 rows fall
// into 8 different 16-byte bank groups. With a 128-byte pitch every row starts at the same bank
// (8-way conflict). With 144 bytes row r starts 16*r bytes further along the banks (mod 128):
// the 8 rows hit the 8 groups exactly once. The pitch must stay a multiple of 16 bytes because
// every ldmatrix row address must be 16-byte aligned.
constexpr int SMEM_PITCH = BLOCK_K + 8;                 // elements per shared-memory row
constexpr uint32_t ROW_BYTES = SMEM_PITCH * 2;          // 144
static_assert(ROW_BYTES % 16 == 0 && (ROW_BYTES / 16) % 2 == 1,
              "pitch: a multiple of 16 bytes, and an odd number of 16-byte units");

// Shared memory, offsets from the dynamic shared-memory base (only 16-byte alignment needed).
constexpr uint32_t A_TILE = 0;                              // 128 x 72 BF16 = 18 KiB
constexpr uint32_t B_TILE = A_TILE + BLOCK_M * ROW_BYTES;   // 128 x 72 BF16 = 18 KiB
constexpr uint32_t SMEM_BYTES = B_TILE + BLOCK_N * ROW_BYTES;

constexpr int CHUNKS_PER_ROW = BLOCK_K / 8;  // 16-byte chunks of one tile row
constexpr int CHUNKS_PER_THREAD = BLOCK_M * CHUNKS_PER_ROW / NUM_THREADS;  // 4, for each of A and B
static_assert(BLOCK_M == BLOCK_N, "A and B tiles share the copy loop");
static_assert(BLOCK_M * CHUNKS_PER_ROW % NUM_THREADS == 0, "every thread copies the same number of chunks");

// Copies rows [row0, row0 + 128) x columns [k0, k0 + 64) of a rows x k row-major matrix into a
// padded shared tile, 16 bytes per copy. Consecutive threads take consecutive chunks of a row, so
// a warp reads 4 whole 128-byte row segments from global memory, and each group of 8 threads
// writes one full 128-byte shared row (no bank conflict). Chunks outside the matrix become zeros:
// zero rows of A/B contribute nothing to the valid part of C, and zero K columns add 0 to it.
__device__ __forceinline__ void load_tile(uint8_t* tile, const __nv_bfloat16* src, int rows, int k, int row0,
                                          int k0) {
  for (int i = 0; i < CHUNKS_PER_THREAD; ++i) {
    const int chunk = int(threadIdx.x) + i * NUM_THREADS;
    const int r = chunk / CHUNKS_PER_ROW, c = chunk % CHUNKS_PER_ROW;
    const int grow = row0 + r, gk = k0 + 8 * c;
    uint4 v = make_uint4(0, 0, 0, 0);
    // K % 8 == 0, so gk < k means all 8 elements are inside, and the address is 16-byte aligned
    // (row pitch 2K bytes is a multiple of 16; cudaMalloc'd bases are 256-byte aligned).
    if (grow < rows && gk < k)
      v = *reinterpret_cast<const uint4*>(src + size_t(grow) * size_t(k) + size_t(gk));
    store_16B(tile + r * ROW_BYTES + c * 16, v);
  }
}

template <bool kTrace>
__global__ void __launch_bounds__(NUM_THREADS, 2)
    gemm_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int m, int n, int k,
                const __grid_constant__ TraceBuf trace_buf) {
  // Timeline annotations for --trace (docs/tracing.md). gemm_kernel<true> records a %globaltimer
  // stamp at each begin/end; in gemm_kernel<false>, which every other launch runs, they compile
  // to nothing (if constexpr), so the timed kernel is exactly the kernel without them.
  PhaseTrace<kTrace> trace(trace_buf);
  uint8_t* smem = dynamic_smem();
  const uint32_t a_tile = smem_addr(smem + A_TILE), b_tile = smem_addr(smem + B_TILE);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;

  // A one-dimensional grid, N tiles fastest: blocks that run at the same time share A row panels
  // in L2, and gridDim.x (up to 2^31 - 1, where gridDim.y stops at 65535) covers every allowed
  // shape, even M = 2^24 with a small N.
  const int tiles_n = ceil_div(n, BLOCK_N);
  const int m0 = int(blockIdx.x) / tiles_n * BLOCK_M, n0 = int(blockIdx.x) % tiles_n * BLOCK_N;

  // The row each lane hands to ldmatrix, as a byte offset inside the tile (k-step 0).
  // A, one x4 per 16x16 fragment: matrices 0..3 are (rows 0-7, k 0-7), (rows 8-15, k 0-7),
  // (rows 0-7, k 8-15), (rows 8-15, k 8-15) -> registers a[0..3] in the order §9.7.14.5.8 wants.
  // Lane i addresses row i%8 of matrix i/8: row (i % 16), K half (i / 16).
  const uint32_t a_lane = uint32_t(warp_m * WARP_M + lane % 16) * ROW_BYTES + uint32_t(lane / 16) * 16;
  // B, one x4 per pair of n8 tiles: matrices are (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7),
  // (n 8-15, k 8-15) -> b[0], b[1] of the first n8 tile, then b[0], b[1] of the second.
  // Lane i addresses row i%8 of matrix i/8: n row (i%8) + 8*(i/16), K half (i/8) % 2.
  const uint32_t b_lane =
      uint32_t(warp_n * WARP_N + lane % 8 + 8 * (lane / 16)) * ROW_BYTES + uint32_t((lane / 8) % 2) * 16;

  // The accumulators: 64 floats per thread, which must stay in registers. Registers cannot be
  // indexed at run time, so every loop over acc/af/bf below has a compile-time trip count and
  // nvcc unrolls it completely (ptxas reports "0 bytes stack frame"; a loop it could not unroll
  // would move the arrays to local memory).
  float acc[M_FRAGS][N_FRAGS][4];
  for (int i = 0; i < M_FRAGS; ++i)
    for (int j = 0; j < N_FRAGS; ++j)
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

  trace.begin(Phase::kMainloop);
  for (int k0 = 0; k0 < k; k0 += BLOCK_K) {
    const auto k_tile_span = trace.span(Phase::kKTile, k0 / BLOCK_K);  // ends with this block
    trace.begin(Phase::kLoadTiles);
    load_tile(smem + A_TILE, a, m, k, m0, k0);
    load_tile(smem + B_TILE, b, n, k, n0, k0);
    trace.end(Phase::kLoadTiles);
    __syncthreads();  // the tiles are complete before any warp reads them

    trace.begin(Phase::kMmaSync);
    for (int ks = 0; ks < BLOCK_K / MMA_K; ++ks) {
      const uint32_t k_bytes = uint32_t(ks * MMA_K) * 2;
      uint32_t af[M_FRAGS][4], bf[N_FRAGS][2];
      for (int i = 0; i < M_FRAGS; ++i)
        ldmatrix_x4(af[i], a_tile + a_lane + uint32_t(i * MMA_M) * ROW_BYTES + k_bytes);
      for (int j = 0; j < N_FRAGS; j += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, b_tile + b_lane + uint32_t(j * MMA_N) * ROW_BYTES + k_bytes);
        bf[j][0] = r[0];
        bf[j][1] = r[1];
        bf[j + 1][0] = r[2];
        bf[j + 1][1] = r[3];
      }
      for (int i = 0; i < M_FRAGS; ++i)
        for (int j = 0; j < N_FRAGS; ++j) mma_m16n8k16_bf16(acc[i][j], af[i], bf[j], acc[i][j]);
    }
    trace.end(Phase::kMmaSync);
    __syncthreads();  // every warp is done reading before the next iteration overwrites the tiles
  }
  trace.end(Phase::kMainloop);

  // Epilogue. For the MMA tile (i, j) whose top-left corner is C[row0][col0], acc[i][j][r] is
  // C[row0 + g + 8*(r/2)][col0 + 2t + r%2] (§9.7.14.5.8): each lane holds pairs of
  // horizontally adjacent elements, which become one 4-byte store when N is even (then the pair
  // is 4-byte aligned and either both or neither are inside C).
  trace.begin(Phase::kEpilogue);
  const int g = lane / 4, t = lane % 4;
  for (int i = 0; i < M_FRAGS; ++i)
    for (int j = 0; j < N_FRAGS; ++j)
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_m * WARP_M + i * MMA_M + g + 8 * h;
        const int col = n0 + warp_n * WARP_N + j * MMA_N + 2 * t;
        if (row >= m || col >= n) continue;
        __nv_bfloat16* out = c + size_t(row) * size_t(n) + size_t(col);
        const float lo = acc[i][j][2 * h], hi = acc[i][j][2 * h + 1];
        if (n % 2 == 0) {
          *reinterpret_cast<uint32_t*>(out) = pack_bf16x2(lo, hi);
        } else {
          out[0] = __float2bfloat16_rn(lo);
          if (col + 1 < n) out[1] = __float2bfloat16_rn(hi);
        }
      }
  trace.end(Phase::kEpilogue);
}

constexpr StepSpec spec{0, "mma_sync", "warm-up: mma.sync.m16n8k16 + ldmatrix, shared-memory tiles",
                        Arch::kSm80Plus, 8};

void launch(const GemmArgs& g) {
  LaunchDims d;
  d.grid = dim3(unsigned(ceil_div(g.m, BLOCK_M) * ceil_div(g.n, BLOCK_N)));
  d.block = dim3(NUM_THREADS);
  d.smem_bytes = SMEM_BYTES;
  launch_kernel(TCG_TRACED(gemm_kernel, g.trace), d, g.stream, g.a, g.b, g.c, g.m, g.n, g.k, g.trace);
}

}  // namespace TCG_BUILD_NS

TCG_STEP_MAIN(spec)
