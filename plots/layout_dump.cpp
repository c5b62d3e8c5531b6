// layout_dump.cpp — print, as JSON on stdout, the shared-memory byte addresses that the address
// functions of common/descriptors.h produce, so that the layout pictures in docs/img/ are drawn
// from the same code the kernels, the emulator and the tests use (plots/draw_layouts.py runs it).
//
//   g++ -std=c++17 -I. -I"$CUDA_HOME/include" -ffunction-sections -Wl,--gc-sections
//       plots/layout_dump.cpp -o build/layout_dump && build/layout_dump      (one command line)
//   ($CUDA_HOME/include provides cuda.h and cuda_bf16.h, which step 05's source includes; see below.)
//
// Nothing here computes an address by itself: every offset below comes from
// tcg::kmajor_operand_addr() or tcg::swizzle_addr(), given a descriptor that tcg::make_smem_desc()
// encoded and tcg::decode_smem_desc() decoded. Only step 01's tile geometry is restated (see below).
//
// Step 05's data split is taken from the kernel source itself: this file includes
// steps/step05_2sm_mma.cu as the emulator build compiles it (TCG_SIM) and calls its constexpr
// tile-mapping function sim::cta_tile_2sm() and reads its shared-memory offsets. The kernel and
// its launcher are compiled too but never called; -ffunction-sections -Wl,--gc-sections drops
// them, so the tool links without the emulator (they are the only code that calls into it).
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "../common/descriptors.h"

#define TCG_SIM 1
#include "../steps/step05_2sm_mma.cu"

namespace {

using namespace tcg;

// ---- Step 01's no-swizzle K-major tile. These restate the constants of
// steps/step01_basic_tcgen05.cu (BLOCK_M, BLOCK_K, MMA_K, CORE_COLUMN_A and the make_smem_desc
// call in its k-loop); keep them in sync with that file.
constexpr uint32_t kS01BlockM = 128;                  // BLOCK_M
constexpr uint32_t kS01BlockK = 64;                   // BLOCK_K (elements of K per TMA load)
constexpr uint32_t kS01MmaK = 16;                     // MMA_K (elements of K per MMA)
constexpr uint32_t kS01Lbo = kS01BlockM * 16;         // CORE_COLUMN_A = 2048: the LBO argument
constexpr uint32_t kS01Sbo = 128;                     // the SBO argument (8 rows x 16 B)
constexpr uint32_t kS01KStep = 2 * kS01Lbo;           // a_tile + s * 2 * CORE_COLUMN_A: 4096 per MMA
constexpr uint32_t kS01DumpRows = 16;                 // rows dumped element by element

// ---- One 128B-swizzled K-major atom (8 rows x 128 B, BF16: 8 x 64 elements), as later steps use.
constexpr uint32_t kSwSpan = 128;                     // swizzle span = bytes per atom row
constexpr uint32_t kSwSbo = 8 * kSwSpan;              // 1024: next 8-row group (dense atoms)
constexpr uint32_t kSwLbo = 16;                       // unused by the hardware; field value 1
constexpr uint32_t kSwMmaStepBytes = 32;              // one K16 BF16 MMA = 32 bytes of K

constexpr uint32_t kElem = 2;                         // sizeof(bf16)

void print_hex64(const char* key, uint64_t v, bool comma = true) {
  std::printf("    \"%s\": \"0x%016llx\"%s\n", key, static_cast<unsigned long long>(v), comma ? "," : "");
}

// Step 05's CTA -> tile mapping for an M x N problem, as the kernel computes it: a 1-D grid of
// clusters of CLUSTER_SIZE CTAs along x, so %clusterid.x = blockIdx.x / 2 and %cluster_ctarank
// = blockIdx.x % 2 (ranks follow x within a cluster). The grid size restates sim::launch().
constexpr int kS05ExampleM = 640;   // 2.5 pairs of rows: the last pair's peer holds no valid row
constexpr int kS05ExampleN = 512;

void dump_step05() {
  using namespace sim;
  const int m = kS05ExampleM, n = kS05ExampleN;
  const int grid = CLUSTER_SIZE * ceil_div(m, PAIR_M) * ceil_div(n, BLOCK_N);
  std::printf("  \"step05\": {\n");
  std::printf("    \"source\": \"steps/step05_2sm_mma.cu\",\n");
  std::printf("    \"cluster_size\": %d, \"block_m\": %d, \"block_n\": %d, \"pair_m\": %d, \"b_rows\": %d,\n",
              CLUSTER_SIZE, BLOCK_M, BLOCK_N, PAIR_M, B_ROWS);
  std::printf("    \"block_k\": %d, \"num_stages\": %d, \"tmem_cols\": %u, \"pair_mask\": %u,\n", BLOCK_K,
              NUM_STAGES, TMEM_COLS, unsigned(PAIR_MASK));
  std::printf("    \"idesc\": \"0x%08x\", \"idesc_m\": %u, \"idesc_n\": %u,\n", IDESC, decode_idesc(IDESC).m,
              decode_idesc(IDESC).n);
  std::printf("    \"stage_bytes\": %u, \"pair_stage_bytes\": %u,\n", STAGE_BYTES, PAIR_STAGE_BYTES);
  // Shared-memory offsets from the 1024-byte-aligned base, identical in both CTAs.
  std::printf("    \"smem\": {\"a_tiles\": %u, \"a_stage_bytes\": %u, \"b_tiles\": %u, \"b_stage_bytes\": %u,\n",
              A_TILES, A_STAGE_BYTES, B_TILES, B_STAGE_BYTES);
  std::printf("             \"tma_full_bars\": %u, \"mma_done_bars\": %u, \"mainloop_done_bar\": %u,\n", TMA_FULL_BARS,
              MMA_DONE_BARS, MAINLOOP_DONE_BAR);
  std::printf("             \"tmem_slot\": %u, \"smem_bytes\": %u, \"launch_bytes\": %u},\n", TMEM_SLOT, SMEM_BYTES,
              SMEM_BYTES + kSmemAlignSlack);
  std::printf("    \"example\": {\"m\": %d, \"n\": %d, \"grid\": %d},\n", m, n, grid);
  // "ctas": [blockIdx.x, cluster, rank, m0, n0, b_row0, valid A/C rows, valid C columns, valid B rows]
  std::printf("    \"ctas\": [\n");
  for (int b = 0; b < grid; ++b) {
    const int cluster = b / CLUSTER_SIZE, rank = b % CLUSTER_SIZE;
    const CtaTile t = cta_tile_2sm(cluster, rank, n);
    const int rows = std::clamp(m - t.m0, 0, BLOCK_M), cols = std::clamp(n - t.n0, 0, BLOCK_N);
    const int brows = std::clamp(n - t.b_row0, 0, B_ROWS);
    std::printf("      [%d, %d, %d, %d, %d, %d, %d, %d, %d]%s\n", b, cluster, rank, t.m0, t.n0, t.b_row0, rows, cols,
                brows, b + 1 == grid ? "" : ",");
  }
  std::printf("    ]\n");
  std::printf("  }\n");
}

}  // namespace

int main() {
  std::printf("{\n");

  // -------------------------------------------------------------------------------- (a)
  // Element (row, k) of the A (or B) tile: MMA k-step s = k / 16 uses the descriptor the kernel
  // builds for step s; inside it, element k % 16 is byte 2 * (k % 16) of the 32-byte K slice.
  std::printf("  \"noswizzle\": {\n");
  std::printf("    \"source\": \"steps/step01_basic_tcgen05.cu\",\n");
  std::printf("    \"block_m\": %u, \"block_k\": %u, \"mma_k\": %u, \"elem_bytes\": %u,\n", kS01BlockM, kS01BlockK,
              kS01MmaK, kElem);
  std::printf("    \"lbo\": %u, \"sbo\": %u, \"k_step_bytes\": %u, \"tile_bytes\": %u,\n", kS01Lbo, kS01Sbo, kS01KStep,
              kS01BlockM * kS01BlockK * kElem);
  std::printf("    \"descriptors\": [");
  for (uint32_t s = 0; s < kS01BlockK / kS01MmaK; ++s)
    std::printf("%s\"0x%016llx\"", s ? ", " : "",
                static_cast<unsigned long long>(make_smem_desc(s * kS01KStep, kS01Lbo, kS01Sbo, Layout::kNone)));
  std::printf("],\n");
  // "elements": [row, k, byte offset of the element from the tile base]
  std::printf("    \"elements\": [\n");
  for (uint32_t row = 0; row < kS01DumpRows; ++row)
    for (uint32_t k = 0; k < kS01BlockK; ++k) {
      const uint32_t s = k / kS01MmaK;
      const SmemDesc d = decode_smem_desc(make_smem_desc(s * kS01KStep, kS01Lbo, kS01Sbo, Layout::kNone));
      const uint32_t addr = kmajor_operand_addr(d, row, (k % kS01MmaK) * kElem);
      const bool last = row + 1 == kS01DumpRows && k + 1 == kS01BlockK;
      std::printf("      [%u, %u, %u]%s\n", row, k, addr, last ? "" : ",");
    }
  std::printf("    ],\n");
  // "core_matrices": [row group g, k-group j, byte offset of its first element (row 8g, k 8j)]
  // for the whole 128-row tile.
  std::printf("    \"core_matrices\": [\n");
  for (uint32_t g = 0; g < kS01BlockM / 8; ++g)
    for (uint32_t j = 0; j < kS01BlockK / 8; ++j) {
      const uint32_t k = 8 * j, s = k / kS01MmaK;
      const SmemDesc d = decode_smem_desc(make_smem_desc(s * kS01KStep, kS01Lbo, kS01Sbo, Layout::kNone));
      const uint32_t addr = kmajor_operand_addr(d, 8 * g, (k % kS01MmaK) * kElem);
      const bool last = g + 1 == kS01BlockM / 8 && j + 1 == kS01BlockK / 8;
      std::printf("      [%u, %u, %u]%s\n", g, j, addr, last ? "" : ",");
    }
  std::printf("    ]\n");
  std::printf("  },\n");

  // -------------------------------------------------------------------------------- (b)
  // Where the TMA (SWIZZLE_128B) stores logical 16-byte chunk c of atom row r: the unswizzled
  // address r * 128 + c * 16, passed through the XOR swizzle. The atom sits at offset 0 of a
  // 1024-byte-aligned region, so absolute and relative address bits agree.
  std::printf("  \"swizzle128\": {\n");
  std::printf("    \"span\": %u, \"sbo\": %u, \"mma_step_bytes\": %u,\n", kSwSpan, kSwSbo, kSwMmaStepBytes);
  std::printf("    \"descriptors\": [");
  for (uint32_t j = 0; j < kSwSpan / kSwMmaStepBytes; ++j)
    std::printf("%s\"0x%016llx\"", j ? ", " : "",
                static_cast<unsigned long long>(
                    make_smem_desc(j * kSwMmaStepBytes, kSwLbo, kSwSbo, Layout::kSwizzle128B)));
  std::printf("],\n");
  // "store": [row, logical chunk, physical byte address, physical chunk]
  std::printf("    \"store\": [\n");
  for (uint32_t r = 0; r < 8; ++r)
    for (uint32_t c = 0; c < 8; ++c) {
      const uint32_t phys = swizzle_addr(r * kSwSpan + c * 16, kSwSpan);
      std::printf("      [%u, %u, %u, %u]%s\n", r, c, phys, (phys % kSwSpan) / 16, r == 7 && c == 7 ? "" : ",");
    }
  std::printf("    ],\n");
  // "mma_reads": [K step j, row, half h (byte 16h of the 32-byte slice), physical byte address,
  // physical chunk]: the descriptor of step j has start = 32 * j and is otherwise unchanged.
  std::printf("    \"mma_reads\": [\n");
  const uint32_t steps = kSwSpan / kSwMmaStepBytes;
  for (uint32_t j = 0; j < steps; ++j) {
    const SmemDesc d = decode_smem_desc(make_smem_desc(j * kSwMmaStepBytes, kSwLbo, kSwSbo, Layout::kSwizzle128B));
    for (uint32_t r = 0; r < 8; ++r)
      for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t addr = kmajor_operand_addr(d, r, 16 * h);
        const bool last = j + 1 == steps && r == 7 && h == 1;
        std::printf("      [%u, %u, %u, %u, %u]%s\n", j, r, h, addr, (addr % kSwSpan) / 16, last ? "" : ",");
      }
  }
  std::printf("    ]\n");
  std::printf("  },\n");

  // -------------------------------------------------------------------------------- encodings
  // Values quoted in docs/core_matrices.md and docs/01_basic_tcgen05.md.
  std::printf("  \"encodings\": {\n");
  std::printf("    \"idesc_bf16_f32_128x128\": \"0x%08x\",\n", make_idesc_bf16_f32(128, 128));
  print_hex64("smem_desc_noswizzle_start0_lbo2048_sbo128", make_smem_desc(0, kS01Lbo, kS01Sbo, Layout::kNone));
  print_hex64("smem_desc_sw128_start0x8000_sbo1024", make_smem_desc(0x8000, kSwLbo, kSwSbo, Layout::kSwizzle128B));
  print_hex64("smem_desc_seed001_first_try_start0_lbo16_sbo1024",
              make_smem_desc(0, 16, 8 * kS01BlockK * kElem, Layout::kNone), false);
  std::printf("  },\n");

  // -------------------------------------------------------------------------------- cautionary
  // The blog post's first attempt: a plain row-major 128 x 64 tile (128 B per row, what a 2-D TMA box
  // {64, 128} writes) described as no-swizzle with LBO = 16 and SBO = 8 * 64 * 2 = 1024.
  // "reads": [row, half h, byte address the MMA of k-step 0 reads]. docs/core_matrices.md turns
  // each address back into the (row, k) the row-major tile holds there.
  std::printf("  \"seed001_first_try\": {\n");
  std::printf("    \"lbo\": 16, \"sbo\": %u, \"row_pitch\": %u,\n", 8 * kS01BlockK * kElem, kS01BlockK * kElem);
  std::printf("    \"reads\": [\n");
  {
    const SmemDesc d = decode_smem_desc(make_smem_desc(0, 16, 8 * kS01BlockK * kElem, Layout::kNone));
    for (uint32_t r = 0; r < kS01DumpRows; ++r)
      for (uint32_t h = 0; h < 2; ++h)
        std::printf("      [%u, %u, %u]%s\n", r, h, kmajor_operand_addr(d, r, 16 * h),
                    r + 1 == kS01DumpRows && h == 1 ? "" : ",");
  }
  std::printf("    ]\n");
  std::printf("  },\n");

  // -------------------------------------------------------------------------------- (c)
  // Step 05: which CTA of which pair holds which rows of A, B and C, for an example problem,
  // and the shared-memory layout both CTAs of a pair share.
  dump_step05();

  std::printf("}\n");
  return 0;
}
