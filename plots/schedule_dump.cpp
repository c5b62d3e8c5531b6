// schedule_dump.cpp — print, as JSON on stdout, step 06's tile schedule for a few example problems,
// computed by the kernel's own functions, so that docs/img/persistent_schedule.png is drawn from
// the code that decides which CTA pair computes which tile (plots/draw_layouts.py runs it).
//
//   g++ -std=c++17 -I. -I"$CUDA_HOME/include" -ffunction-sections -Wl,--gc-sections
//       plots/schedule_dump.cpp -o build/schedule_dump && build/schedule_dump      (one command line)
//
// As plots/layout_dump.cpp does for step 05, this file includes steps/step06_persistent.cu as the
// emulator build compiles it (TCG_SIM) and calls its constexpr functions num_clusters_for(),
// num_pair_tiles(), scheduled_tile(), pair_tile_at() and cta_tile_2sm(); nothing here restates
// the schedule. The kernel and its launcher are compiled but never called, and
// -ffunction-sections -Wl,--gc-sections drops them, so the tool links without the emulator.
// (It is a separate tool from layout_dump because both step sources define the same names.)
#include <cstdio>

#define TCG_SIM 1
#include "../steps/step06_persistent.cu"

namespace {

using namespace sim;

struct Example {
  const char* what;
  int m, n, num_sms;
};

// 1) the B200 case of the published figures; 2) a problem of tests/steps/run_steps.sh with uneven tile
// counts and partial tiles; 3) a second band that is shorter than BAND_PAIR_ROWS.
constexpr Example kExamples[] = {
    {"b200_4096", 4096, 4096, 148},
    {"uneven", 1000, 1500, 10},
    {"short_band", 2304, 300, 7},
};

void dump_example(const Example& e, bool last) {
  const int clusters = num_clusters_for(e.num_sms, e.m, e.n), tiles = num_pair_tiles(e.m, e.n);
  std::printf("    \"%s\": {\"m\": %d, \"n\": %d, \"num_sms\": %d, \"num_clusters\": %d, \"num_tiles\": %d,\n", e.what,
              e.m, e.n, e.num_sms, clusters, tiles);
  std::printf("      \"tiles_m\": %d, \"tiles_n\": %d,\n", ceil_div(e.m, PAIR_M), ceil_div(e.n, BLOCK_N));
  // "walk": per cluster, in the order the kernel visits them (the loop every role runs):
  // [i, tile, pair_m, pair_n, leader m0, peer m0, n0]
  std::printf("      \"walk\": [\n");
  for (int c = 0; c < clusters; ++c) {
    std::printf("        [");
    for (int i = 0; scheduled_tile(c, i, clusters) < tiles; ++i) {
      const int t = scheduled_tile(c, i, clusters);
      const PairTile p = pair_tile_at(t, e.m, e.n);
      const CtaTile leader = cta_tile_2sm(t, 0, e.m, e.n), peer = cta_tile_2sm(t, 1, e.m, e.n);
      std::printf("%s[%d, %d, %d, %d, %d, %d, %d]", i ? ", " : "", i, t, p.pair_m, p.pair_n, leader.m0, peer.m0,
                  leader.n0);
    }
    std::printf("]%s\n", c + 1 == clusters ? "" : ",");
  }
  std::printf("      ]\n    }%s\n", last ? "" : ",");
}

}  // namespace

int main() {
  std::printf("{\n  \"step06\": {\n");
  std::printf("    \"source\": \"steps/step06_persistent.cu\",\n");
  std::printf("    \"cluster_size\": %d, \"pair_m\": %d, \"block_m\": %d, \"block_n\": %d, \"band_pair_rows\": %d,\n",
              CLUSTER_SIZE, PAIR_M, BLOCK_M, BLOCK_N, BAND_PAIR_ROWS);
  std::printf("    \"num_accumulators\": %d, \"tmem_cols\": %u, \"num_stages\": %d, \"tmem_empty_arrivals\": %u,\n",
              NUM_ACCUMULATORS, TMEM_COLS, NUM_STAGES, TMEM_EMPTY_ARRIVALS);
  std::printf("    \"smem\": {\"tma_full_bars\": %u, \"mma_done_bars\": %u, \"tmem_full_bars\": %u, "
              "\"tmem_empty_bars\": %u, \"tmem_slot\": %u, \"launch_bytes\": %u},\n",
              TMA_FULL_BARS, MMA_DONE_BARS, TMEM_FULL_BARS, TMEM_EMPTY_BARS, TMEM_SLOT, SMEM_BYTES + kSmemAlignSlack);
  std::printf("    \"examples\": {\n");
  const int count = int(sizeof(kExamples) / sizeof(kExamples[0]));
  for (int i = 0; i < count; ++i) dump_example(kExamples[i], i + 1 == count);
  std::printf("    }\n  }\n}\n");
  return 0;
}
