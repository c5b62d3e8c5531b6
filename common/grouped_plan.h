// grouped_plan.h — the plan of the grouped NVFP4 GEMM (step 16): for the groups' M (known on the
// host, as the caller of a mixture-of-experts layer knows them), N, K and the SM count, whether A
// and B are swapped and the tile width BLOCK_N (the MMA's N: tokens when swapped, columns of C
// otherwise), the pair whose estimated time is least, costed with the timing model's parameter
// table (tcsim::model_param; one source of numbers). grouped_plan.cpp says what it weighs. Host
// code only.
#pragma once
#include <cstdint>
#include <string>

namespace tcg::grouped {

constexpr int kBlockRows = 128;  // the MMA's M: rows of the operand on the 128-row side
constexpr int kKTileElems = 256;  // K elements per k-tile (one 128-byte swizzle row of FP4)
constexpr int kKTilesPerStage = 2;
// The widths the kernel has, and its ring's depth for each: as many stages of X's two k-tiles
// (32 KiB), Y's (2 x BLOCK_N x 128 B) and both scale blocks (8 KiB) as the shared memory holds
// beside 2 KiB of slack and barriers, and whose scale columns (64 each) TMEM holds beside the two
// accumulators (2 x BLOCK_N of 512 columns); at most 4.
constexpr int kBlockNs[3] = {32, 64, 128};
constexpr uint32_t stage_bytes(int block_n) {
  return uint32_t(kKTilesPerStage) * (kBlockRows * 128 + uint32_t(block_n) * 128 + 2 * 4 * 512);
}
constexpr int stages_for(int block_n) {
  const int by_smem = int((232448u - 2048u) / stage_bytes(block_n)), by_tmem = (512 - 2 * block_n) / 64;
  return by_smem < by_tmem ? (by_smem < 4 ? by_smem : 4) : (by_tmem < 4 ? by_tmem : 4);
}
static_assert(stages_for(32) == 4 && stages_for(64) == 4 && stages_for(128) == 3, "the ring's depths step 16 states");

// The X operand is the one on the MMA's 128-row side, Y the one on its BLOCK_N side. Swapped:
// X = B_g (N rows, the expert's weights), Y = A_g (M_g rows, its tokens); else the other way round.
struct Tiles {
  int x, y;  // tiles along X's rows (128 each) and along Y's rows (BLOCK_N each)
};
inline Tiles tiles_of(int64_t m, int n, int block_n, bool swap) {
  const int64_t xr = swap ? n : m, yr = swap ? m : n;
  return {int((xr + kBlockRows - 1) / kBlockRows), int((yr + block_n - 1) / block_n)};
}

struct Forced {
  int block_n = 0;  // 0: the planner's choice
  int swap = -1;    // -1: the planner's choice; 0 or 1 forced
  int mc = 0;       // 0: the planner's choice
};

struct Plan {
  int block_n = 64;
  bool swap = true;
  int mc = 1;                 // CTAs of a cluster sharing Y's copies (multicast), 1, 2 or 4
  int tiles = 0;              // all groups' tiles
  int ctas = 0;               // the persistent grid: min(tiles, the CTAs resident at once in clusters of MC)
  int max_tiles_per_cta = 0;  // ceil(tiles / ctas): the static walk gives CTA i tiles i, i + ctas, ...
  double rows_used = 0;       // the share of the MMA rows x columns that hold real rows of C
  double ns = 0;              // the estimate the choice was made on
  std::string line() const;   // "A and B swapped (B_g on the MMA's 128 rows), BLOCK_N 64 (tokens), ..."
};

// The plan; a forced knob that cannot be honoured throws tcg::UsageError (one line).
Plan plan(const int64_t* m, int count, int n, int k, int sms, const Forced& forced);

}  // namespace tcg::grouped
