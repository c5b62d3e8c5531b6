// mma_block_scaled.cpp — NVFP4 block scaling (step 07): tcgen05.cp.32x128b.warpx4, which copies
// scale factors from shared memory to TMEM, and tcgen05.mma.cta_group::1.kind::mxf4nvf4
// .block_scale.block16, which multiplies packed E2M1 operands with one UE4M3 scale per 16
// K-elements of every row of A and of B.
//
// Models (PTX ISA 9.0: §9.7.16.9.2 tcgen05.cp, §9.7.16.2.3 data-movement shapes, §9.7.16.10.7
// block scaling, §9.7.16.4.2 Table 44 block-scaled instruction descriptor, §9.7.16.10.9
// tcgen05.mma, §9.7.16.6.2 / §9.7.16.6.4 pipelining and cross-thread ordering, §5.2.3 E2M1 and
// UE4M3; PTX ISA §9.7.16.10.7; CUTLASS SM100_MMA_MXF4_SS / tmem_sf_frg where the ISA's figures are missing):
//  * tcgen05.cp.32x128b.warpx4: 32 rows x 16 bytes from a K-major, unswizzled shared-memory
//    descriptor (row r at start + (r/8)*SBO + (r%8)*16) into TMEM, multicast to all four 32-lane
//    quarters: byte j of row r lands in lanes r + 32w (w = 0..3), column C0 + j/4, byte j%4. It
//    is asynchronous: it joins the issuing thread's in-order tcgen05 queue (so it is performed
//    before that thread's later MMAs, §9.7.16.6.2 pair "cp -> mma"), reads shared memory when it
//    is performed, and completes through tcgen05.commit. A copy issued by ANOTHER thread is
//    ordered before an MMA only through the §9.7.16.6.4.3 pattern (cp; fence::before_thread_sync;
//    a releasing sync | the MMA thread's sync; fence::after_thread_sync; mma): the emulator then
//    performs the copy before the MMA; otherwise the two complete in whatever order the seed picks.
//  * .cta_group::2 forms (step 15's pair; the ISA says only that the copy writes the Tensor Memory
//    of both CTAs of the pair and the MMA computes over both; what each CTA supplies follows
//    CUTLASS's SM100_MMA_MXF4_2x1SM_SS, whose scale-factor atom is a one-CTA MMA of M/2 rows and
//    N rounded up to 128, and its block-scaled mainloop, which loads SFA per CTA and all of SFB in
//    each, then issues tcgen05.cp.cta_group::2 from the even CTA): a cp reads the source descriptor
//    in EACH CTA's shared memory and writes that CTA's TMEM at the same address; the pair MMA,
//    issued by the even CTA, M = 256 (M = 128, layout B, is not modelled), N a multiple of 16 in
//    [16, 256]: CTA v gives A rows [128v, +128) and B rows [v N/2, +N/2) from its shared memory,
//    its own SFA (128 rows) and a full SFB (N rows) from its own TMEM; its TMEM gets D rows
//    [128v, +128). The two CTAs' SFB copies must be equal (which copy the hardware reads for
//    which columns is not documented): a difference is reported.
//  * tcgen05.mma kind::mxf4nvf4 block16, cta_group::1 (M = 128, N = 8..256 step 8, K = 64):
//    A (128 rows) and B (N rows) are 32 bytes per row of packed E2M1 (lower K index in the low
//    nibble), fetched through the decoded descriptors exactly as kind::f16 fetches its operands
//    (any canonical K-major layout: none, 32/64/128B swizzle); the mxf4 kinds cannot transpose.
//    Scales (§9.7.16.10.7, CUTLASS tmem_sf_frg in cute/atom/mma_traits_sm100_frag.hpp): the scale of row r of A for K block s (16 elements) is
//    byte s of the TMEM cell in lane r%32 (+32w for each quarter w), column (SFA column) + r/32;
//    the same for B with its N rows. The four quarters must hold identical copies (the ISA
//    requires the duplication); the emulator reads all four and reports a difference.
//  * Arithmetic, in FP32: for every (m, n), acc = 0; for s = 0..3 in order: dot_s = the 16
//    products A*B of block s summed in k order; acc += (sa_s * sb_s) * dot_s; then D = D + acc
//    (or acc when enable-input-d is false). Exact whenever the values are (products of E2M1
//    values are multiples of 1/4 up to 36); the hardware's own order is not documented.
//  * D is written in layout D (row m in lane m, columns from the D address), as kind::f16 M = 128.
// Diagnostics: the idesc fields (formats, scale type, reserved bits, transpose, negate, shape, SF
// IDs, K size), D / SF addresses (lane field, allocation, overlap with D), scales never written by
// a tcgen05.cp (TMEM still holds the allocator's poison), replicas that differ, UE4M3 bytes with
// the sign bit set or NaN; tcgen05.cp sources (layout, fixed and reserved bits, bounds) and
// destinations (lane field, allocation); TMEM freed under a pending copy or MMA. The copy's
// destination and the MMA's D and scale cells are recorded for the ordering rules of
// tmem_hazards.cpp (an MMA -> cp on the same scale columns, without a completion between, is a
// hazard: that pair is not pipelined).
#include <cmath>
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {

constexpr uint32_t kCpRows = 32, kCpRowBytes = 16, kCpColumns = 4;  // .32x128b: 32 lanes x 4 columns
constexpr uint32_t kM = 128, kK = tcg::kMxf4K, kBlocks = tcg::kMxf4K / tcg::kNvfp4BlockSize;

[[noreturn]] void fail_async(const std::string& kind, const std::string& issued_by, const std::string& detail) {
  fail("tcsim: " + kind + "\n  " + issued_by + ":\n  " + detail);
}

// ------------------------------------------------------------------ tcgen05.cp.32x128b.warpx4

struct CpJob {
  Cta* ctas[2];  // cta_group::1: {issuer, nullptr}; cta_group::2: both CTAs of the pair
  uint32_t col;
  tcg::SmemDesc src;
  std::shared_ptr<TcOp> rec;  // its ordering record (tmem_hazards.cpp)
  std::string by;             // "<thread> at <line>" of the issue
};

uint32_t cp_row_addr(const tcg::SmemDesc& d, uint32_t r) { return d.start + (r / 8) * d.sbo + (r % 8) * 16; }

void run_cp(const CpJob& j) {
  j.rec->done = true;
  for (Cta* c : j.ctas) {
    if (!c) continue;
    Cta& cta = *c;
    if (!tmem_find(cta, j.col, kCpColumns))
      fail_async("TMEM deallocated under a pending tcgen05.cp", "the tcgen05.cp issued by " + j.by,
                 "it writes TMEM columns [" + std::to_string(j.col) + ", " + std::to_string(j.col + kCpColumns) +
                     ") of " + cta_name(cta) + ", which were freed before the copy was performed (" +
                     describe_allocs(cta) + "); wait for its tcgen05.commit before tcgen05.dealloc");
    // Each CTA's own shared memory at the descriptor's offset into its own TMEM (cta_group::2: both).
    for (uint32_t r = 0; r < kCpRows; ++r) {
      const uint8_t* row = cta.smem + ((cp_row_addr(j.src, r) & kOffsetMask) - kSmemBase);
      for (uint32_t g = 0; g < kCpColumns; ++g) {
        uint32_t cell;
        memcpy(&cell, row + 4 * g, 4);  // bytes 4g..4g+3 of the row, little-endian: byte j%4 of column j/4
        for (uint32_t w = 0; w < 4; ++w) tmem_cell(cta, r + 32 * w, j.col + g) = cell;
      }
    }
  }
}

// ------------------------------------------------------------------ tcgen05.mma kind::mxf4nvf4

struct Mxf4Job {
  Cta* ctas[2];  // cta_group::1: {issuer, nullptr}; cta_group::2: {even, odd}
  uint32_t d_tmem, sfa, sfb;
  tcg::SmemDesc a, b;
  uint32_t n;
  bool accumulate;
  std::shared_ptr<TcOp> rec;                 // its ordering record (tmem_hazards.cpp)
  std::vector<std::shared_ptr<TcOp>> after;  // other threads' copies ordered before this MMA
  std::string by;
};

uint32_t sf_columns(uint32_t rows) { return (rows + 31) / 32; }

const char* hint_poison =
    "no tcgen05.cp has written this cell since tcgen05.alloc (it still holds the allocator's poison). Either no "
    "copy targets it (check the scale-factor address), or the copy is not ordered before this MMA: a tcgen05.cp "
    "of the MMA's own thread must be issued before it (PTX ISA §9.7.16.6.2, pair cp -> mma); one of another "
    "thread needs tcgen05.fence::before_thread_sync, a synchronisation with the MMA thread (mbarrier, bar.sync) "
    "and tcgen05.fence::after_thread_sync before the MMA (§9.7.16.6.4.3)";

// Reads the 4 scales of `rows` rows of one operand from TMEM and checks them; out[r * 4 + s].
void read_scales(const Mxf4Job& j, Cta& cta, uint32_t addr, uint32_t rows, const char* operand, float* out) {
  const uint32_t col0 = tcg::tmem_column(addr);
  // The texts of a report are made only when one is made (this runs for every row of every MMA).
  const auto issued = [&j] { return "the tcgen05.mma.kind::mxf4nvf4 issued by " + j.by; };
  for (uint32_t r = 0; r < rows; ++r) {
    const uint32_t lane = r % 32, col = col0 + r / 32;
    // By reference: a copy capture would copy the whole CTA (its shared memory) for every row.
    const auto where = [&] {
      return std::string(operand) + " row " + std::to_string(r) + " (TMEM lane " + std::to_string(lane) +
             " + 32w, column " + std::to_string(col) + (j.ctas[1] ? " of " + cta_name(cta) : std::string()) + ")";
    };
    uint32_t cell[4];
    for (uint32_t w = 0; w < 4; ++w) {
      cell[w] = tmem_cell(cta, lane + 32 * w, col);
      if (cell[w] == kTmemPoison)
        fail_async("scale factors read before any tcgen05.cp wrote them", issued(),
                   "the scales of " + where() + ", lane quarter " + std::to_string(w) + ": " + hint_poison);
    }
    for (uint32_t w = 1; w < 4; ++w)
      if (cell[w] != cell[0])
        fail_async("scale-factor replicas differ", issued(),
                   "the scales of " + where() + " are " + hex(cell[0]) + " in lane " + std::to_string(lane) + " but " +
                       hex(cell[w]) + " in lane " + std::to_string(lane + 32 * w) +
                       "; block scaling requires the scale factors duplicated in all four 32-lane quarters of TMEM "
                       "(PTX ISA §9.7.16.10.7), which tcgen05.cp.32x128b.warpx4 does");
    // Timing only (--predict): tensor copies count their bytes without moving them, so a scale a TMA
    // brought in holds whatever shared memory held; its value is neither checked nor used.
    for (uint32_t s = 0; s < kBlocks && !g_options.skip_math; ++s) {
      const uint8_t byte = uint8_t(cell[0] >> (8 * s));
      if (byte & 0x80u)
        fail_async("bad UE4M3 scale factor (sign bit set)", issued(),
                   "byte " + std::to_string(s) + " (K block " + std::to_string(s) + ") of the scales of " + where() +
                       " is " + hex(byte) + "; UE4M3 is unsigned and its most significant bit must be 0 (PTX ISA "
                       "§5.2.3). An E4M3 cast of a negative scale?");
      if (byte == 0x7Fu)
        fail_async("UE4M3 scale factor is NaN", issued(),
                   "byte " + std::to_string(s) + " (K block " + std::to_string(s) + ") of the scales of " + where() +
                       " is 0x7f, the UE4M3 NaN (the largest finite scale is 448 = 0x7e)");
      out[r * kBlocks + s] = tcg::ue4m3_to_float(byte);
    }
  }
}

// The 32 bytes (64 E2M1 values) of row `row` of an operand, decoded into out[0..63]. Each
// 16-byte half is contiguous in every canonical K-major layout (a core-matrix row or a swizzled
// 16-byte unit), as in the kind::f16 fetch.
void fetch_fp4_row(const Mxf4Job& j, const Cta& cta, const tcg::SmemDesc& d, uint32_t row, const char* operand,
                   float* out) {
  static const auto table = [] {
    std::array<float, 16> t{};
    for (uint32_t c = 0; c < 16; ++c) t[c] = tcg::e2m1_to_float(uint8_t(c));
    return t;
  }();
  for (uint32_t h = 0; h < 2; ++h) {
    const uint32_t addr = tcg::kmajor_operand_addr(d, row, 16 * h);
    const uint32_t a = addr & kOffsetMask;
    if (a < kSmemBase || a + 16 > kSmemBase + cta.smem_bytes)
      fail("tcsim: shared memory out of bounds\n  tcgen05.mma.kind::mxf4nvf4 (issued by " + j.by + ") operand " +
           operand + " read at " + hex(addr) + " (row " + std::to_string(row) + ", bytes " + std::to_string(16 * h) +
           "-" + std::to_string(16 * h + 15) + ") lies outside the dynamic shared memory [" + hex(kSmemBase) + ", " +
           hex(kSmemBase + cta.smem_bytes) + ") of " + cta_name(cta) + "; check the descriptor's start/LBO/SBO");
    const uint8_t* p = cta.smem + (a - kSmemBase);
    for (uint32_t b = 0; b < 16; ++b) {
      out[32 * h + 2 * b] = table[p[b] & 15u];     // the lower K index in bits 3-0 (§9.7.16.10.4)
      out[32 * h + 2 * b + 1] = table[p[b] >> 4];
    }
  }
}

void run_mxf4(const Mxf4Job& j) {
  tc_perform_first(j.after);  // copies of other threads ordered before it (§9.7.16.6.4.3)
  j.rec->done = true;
  const auto t0 = Clock::now();
  const uint32_t nctas = j.ctas[1] ? 2 : 1;
  const uint32_t N = j.n, N8 = N / 8, n_per = N / nctas;  // B rows each CTA supplies
  const uint32_t d_col = tcg::tmem_column(j.d_tmem);
  const std::pair<uint32_t, uint32_t> regions[3] = {{d_col, N}, {tcg::tmem_column(j.sfa), kCpColumns},
                                                    {tcg::tmem_column(j.sfb), sf_columns(N)}};
  for (uint32_t v = 0; v < nctas; ++v) {
    Cta& cta = *j.ctas[v];
    for (const auto& [col, ncols] : regions)
      if (!tmem_find(cta, col, ncols))
        fail_async("TMEM deallocated under a running MMA", "the tcgen05.mma.kind::mxf4nvf4 issued by " + j.by,
                   "it uses TMEM columns [" + std::to_string(col) + ", " + std::to_string(col + ncols) + ") of " +
                       cta_name(cta) + ", freed before the MMA was performed (" + describe_allocs(cta) +
                       "); wait for its tcgen05.commit before tcgen05.dealloc (PTX ISA §9.7.16.7.1, §9.7.16.6.4.2)");
    check_no_pending_ld(cta, 0, 128, d_col, N, "the tcgen05.mma.kind::mxf4nvf4 issued by " + j.by);
  }
  thread_local std::vector<float> sa, sb, sb_peer, A;
  sa.resize(kM * kBlocks);
  sb.resize(size_t(N) * kBlocks);
  A.resize(size_t(kM) * kK);
  read_scales(j, *j.ctas[0], j.sfb, N, "B", sb.data());
  if (nctas == 2) {  // each CTA's tensor core scales B with its own TMEM's copy: both must hold the same
    sb_peer.resize(sb.size());
    read_scales(j, *j.ctas[1], j.sfb, N, "B", sb_peer.data());
    for (uint32_t i = 0; i < N * kBlocks; ++i)
      if (memcmp(&sb[i], &sb_peer[i], 4) != 0)
        fail_async("the pair's B scale factors differ", "the tcgen05.mma.cta_group::2.kind::mxf4nvf4 issued by " + j.by,
                   "B row " + std::to_string(i / kBlocks) + ", K block " + std::to_string(i % kBlocks) + ": " +
                       std::to_string(sb[i]) + " in " + cta_name(*j.ctas[0]) + "'s TMEM, " + std::to_string(sb_peer[i]) +
                       " in " + cta_name(*j.ctas[1]) + "'s. A pair MMA computes all N columns in each CTA, so each "
                       "CTA's TMEM must hold the scales of all N rows of B at the SFB address (CUTLASS's "
                       "SM100_MMA_MXF4_2x1SM_SS: a scale-factor atom of N rounded up to 128 per CTA); load SFB whole "
                       "into both CTAs' shared memory before the tcgen05.cp.cta_group::2");
  }
  if (g_options.skip_math) {  // timing only: the scale checks above (and SFA's below), no arithmetic
    for (uint32_t v = 0; v < nctas; ++v) read_scales(j, *j.ctas[v], j.sfa, kM, "A", sa.data());
    g_stats.mmas++;
    g_stats.mma_flops += 2ull * nctas * kM * N * kK;
    return;
  }
  // B transposed to [k][n] and its scales to [s][n], 8 columns per vector (GCC vector extension),
  // so each output column is its own lane: the same arithmetic, in the same order, as a scalar loop.
  // Row n of B comes from CTA n / n_per's shared memory (cta_group::2: the two halves of N).
  typedef float f32x8 __attribute__((vector_size(32)));
  thread_local std::vector<f32x8> Bt8, Sb8, acc8, dot8;
  Bt8.resize(size_t(kK) * N8);
  Sb8.resize(size_t(kBlocks) * N8);
  acc8.resize(N8);
  dot8.resize(N8);
  float* Bt = reinterpret_cast<float*>(Bt8.data());
  float* Sbt = reinterpret_cast<float*>(Sb8.data());
  float row[kK];
  for (uint32_t n = 0; n < N; ++n) {
    fetch_fp4_row(j, *j.ctas[n / n_per], j.b, n % n_per, "B", row);
    for (uint32_t k = 0; k < kK; ++k) Bt[k * N + n] = row[k];
    for (uint32_t s = 0; s < kBlocks; ++s) Sbt[s * N + n] = sb[n * kBlocks + s];
  }
  for (uint32_t v = 0; v < nctas; ++v) {
    Cta& cta = *j.ctas[v];
    read_scales(j, cta, j.sfa, kM, "A", sa.data());
    for (uint32_t m = 0; m < kM; ++m) fetch_fp4_row(j, cta, j.a, m, "A", &A[size_t(m) * kK]);
    for (uint32_t m = 0; m < kM; ++m) {
      for (uint32_t q = 0; q < N8; ++q) acc8[q] = f32x8{0, 0, 0, 0, 0, 0, 0, 0};
      for (uint32_t s = 0; s < kBlocks; ++s) {
        for (uint32_t q = 0; q < N8; ++q) dot8[q] = f32x8{0, 0, 0, 0, 0, 0, 0, 0};
        for (uint32_t k = 16 * s; k < 16 * s + 16; ++k) {
          const float x = A[size_t(m) * kK + k];
          const f32x8 a = {x, x, x, x, x, x, x, x};
          const f32x8* b = &Bt8[size_t(k) * N8];
          for (uint32_t q = 0; q < N8; ++q) dot8[q] += a * b[q];
        }
        const float y = sa[m * kBlocks + s];
        const f32x8 sam = {y, y, y, y, y, y, y, y};
        const f32x8* sbs = &Sb8[size_t(s) * N8];
        for (uint32_t q = 0; q < N8; ++q) acc8[q] += (sam * sbs[q]) * dot8[q];
      }
      // Layout D (§9.7.16.10.5; layout A for the pair's M = 256): row m of this CTA's rows in lane m.
      uint32_t* cells = &tmem_cell(cta, m, d_col);
      const float* acc = reinterpret_cast<const float*>(acc8.data());
      if (j.accumulate) {
        for (uint32_t n = 0; n < N; ++n) {
          float old;
          memcpy(&old, &cells[n], 4);
          const float d = old + acc[n];
          memcpy(&cells[n], &d, 4);
        }
      } else {
        memcpy(cells, acc, 4 * N);
      }
    }
  }
  g_stats.mmas++;
  g_stats.mma_flops += 2ull * nctas * kM * N * kK;  // FP4 multiply-adds, counted like kind::f16's
  g_stats.mma_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

void check_idesc_block_scaled(const tcg::IdescBlockScaled& id, uint32_t raw, int cta_group) {
  // Built only for a report (one per call was a measurable share of a --predict run).
  const auto name = [&] { return "instruction descriptor " + hex(raw) + " (kind::mxf4nvf4, PTX ISA §9.7.16.4.2 Table 44)"; };
  if (id.sparse) fail_here("unsupported instruction descriptor", name() + ": bit 2 asks for a sparse MMA, which is not modelled");
  if (id.sparse_sel || id.reserved3 || id.reserved6)
    fail_here("bad instruction descriptor", name() + ": reserved bits 0-1, 3 or 6 are not zero");
  if (id.a_format != tcg::kMxf4FormatE2M1 || id.b_format != tcg::kMxf4FormatE2M1)
    fail_here("bad instruction descriptor",
              name() + ": A/B formats are " + std::to_string(id.a_format) + "/" + std::to_string(id.b_format) +
                  " in bits 7-9 / 10-12; kind::mxf4nvf4 takes E2M1 = 1 for both (5 is E2M1's code under kind::f8f6f4 "
                  "and mxf8f6f4, not here)");
  if (id.a_mn_major || id.b_mn_major)
    fail_here("bad instruction descriptor",
              name() + ": transpose bit 15 (A) or 16 (B) is set; the mxf4 kinds support only K-major operands "
                     "(PTX ISA §9.7.16.10.1 Table 49): the transpose bits must be 0");
  if (id.negate_a || id.negate_b)
    fail_here("unsupported instruction descriptor",
              name() + ": negate bit 13 or 14 is set. The ISA's Table 49 lists negation for kind::mxf4nvf4, but "
                     "CUTLASS documents it as valid only for the F16/BF16/TF32 and MXF8F6F4 formats; the emulator "
                     "does not model it");
  if (id.scale_type != uint32_t(tcg::ScaleType::kUE4M3))
    fail_here("unsupported instruction descriptor",
              name() + ": bit 23 selects UE8M0 scales; only UE4M3 (bit 23 = 0, NVFP4) is modelled with .block16");
  if (id.k_size)
    fail_here("bad instruction descriptor", name() + ": bit 31 selects K = 96, which exists only on sm_103a; sm_100a MMAs have K = 64");
  if (id.sfa_id || id.sfb_id)
    fail_here("scale-factor ID out of range",
              name() + ": SFA_ID = " + std::to_string(id.sfa_id) + " (bits 29-30), SFB_ID = " + std::to_string(id.sfb_id) +
                  " (bits 4-5); with .block16 every MMA uses all four bytes of each scale cell, so both IDs must be 0 "
                  "(PTX ISA §9.7.16.10.7.2)");
  if (cta_group == 2) {
    if (id.m == 128 && tcg::is_valid_mxf4_shape_cta2(id.m, id.n))
      fail_here("unsupported MMA shape", name() + ": M = 128 across a CTA pair (64 rows per CTA, D in layout B) is valid "
                                                "but not modelled for kind::mxf4nvf4; use M = 256");
    if (!tcg::is_valid_mxf4_shape_cta2(id.m, id.n))
      fail_here("invalid MMA shape",
                name() + ": M = " + std::to_string(id.m) + ", N = " + std::to_string(id.n) +
                    "; kind::mxf4nvf4 with cta_group::2 needs M in {128, 256} (across the pair) and N a multiple of 16 "
                    "in [16, 256] (PTX ISA §9.7.16.2.1; CUTLASS SM100_MMA_MXF4_2x1SM_SS)");
    return;
  }
  if (!tcg::is_valid_mxf4_shape_cta1(id.m, id.n))
    fail_here("invalid MMA shape",
              name() + ": M = " + std::to_string(id.m) + ", N = " + std::to_string(id.n) +
                  "; kind::mxf4nvf4 with cta_group::1 needs M = 128 and N a multiple of 8 in [8, 256] (PTX ISA "
                  "§9.7.16.2.1)");
}

// A scale-factor address: lane field 0 (the four quarters each hold a copy at their lanes 0-31),
// columns inside one allocation.
void check_sf_addr(Cta& cta, uint32_t addr, uint32_t rows, const char* operand) {
  const std::string what = std::string("tcgen05.mma.kind::mxf4nvf4 scale factors of ") + operand;
  if (tcg::tmem_lane(addr) >> 14)
    fail_here("misaligned scale-factor TMEM address",
              what + " at " + hex(addr) + ": bits 30-31 (a byte index inside the 32-bit cell, which CUTLASS mirrors "
                                          "into the idesc SF ID) must be 0 with .block16, whose scales fill all 4 bytes");
  if (tcg::tmem_lane(addr) != 0)
    fail_here("misaligned scale-factor TMEM address",
              what + " at " + hex(addr) + " names lane " + std::to_string(tcg::tmem_lane(addr)) +
                  "; the scales of row r sit in lane r % 32 of EVERY 32-lane quarter (they are duplicated, PTX ISA "
                  "§9.7.16.10.7), so the address must name lane 0");
  tmem_check_range(cta, 0, tcg::kTmemLanes, tcg::tmem_column(addr), sf_columns(rows), what.c_str());
}

}  // namespace

void tcgen05_cp_32x128b_warpx4(uint32_t taddr, uint64_t s_desc, int cta_group, SrcLoc at) {
  tick(at);
  use_cta_group(cta_group, "tcgen05.cp");
  tcgen05_op("tcgen05.cp");
  Fiber& f = me();
  Cta& cta = *f.cta;
  // .cta_group::2: the copy writes the TMEM of both CTAs of the pair (§9.7.16.9.2), each from its
  // own shared memory at the descriptor's offset (CUTLASS loads SFA per CTA and copies it so).
  Cta* ctas[2] = {&cta, cta_group == 2 ? &pair_peer(cta, "tcgen05.cp") : nullptr};
  const char* name = cta_group == 2 ? "tcgen05.cp.cta_group::2.32x128b.warpx4" : "tcgen05.cp.32x128b.warpx4";
  const tcg::SmemDesc d = tcg::decode_smem_desc(s_desc);
  check_smem_desc(d, "tcgen05.cp source", s_desc);
  if (d.layout != uint32_t(tcg::Layout::kNone))
    fail_here("unsupported shared-memory descriptor",
              "tcgen05.cp.32x128b source descriptor " + hex(s_desc) + " has layout type " + std::to_string(d.layout) +
                  "; only the unswizzled K-major source (layout 0: row r at start + (r/8)*SBO + (r%8)*16), the one "
                  "CUTLASS and DeepGEMM use for scale factors, is modelled");
  for (Cta* c : ctas)
    for (uint32_t r = 0; c && r < kCpRows; ++r) {
      const uint32_t a = cp_row_addr(d, r) & kOffsetMask;
      if (a < kSmemBase || a + kCpRowBytes > kSmemBase + c->smem_bytes)
        fail_here("shared memory out of bounds",
                  "tcgen05.cp source row " + std::to_string(r) + " at " + hex(cp_row_addr(d, r)) +
                      " (start + (r/8)*SBO + (r%8)*16 with start " + hex(d.start) + ", SBO " + std::to_string(d.sbo) +
                      ") lies outside the dynamic shared memory [" + hex(kSmemBase) + ", " +
                      hex(kSmemBase + c->smem_bytes) + ") of " + cta_name(*c));
    }
  // .warpx4 multicasts the 32 rows into all four warps' lane quarters (§9.7.16.9.2): row r goes to
  // lane r of each quarter, so the address names lane 0. The issuing warp does not matter (one
  // thread issues it; the tcgen05.ld/st quarter rule of §9.7.16.8.1 is about warps' own lanes).
  if (tcg::tmem_lane(taddr) != 0)
    fail_here("bad TMEM address",
              "tcgen05.cp.32x128b.warpx4 to " + hex(taddr) + " (lane " + std::to_string(tcg::tmem_lane(taddr)) +
                  "): .warpx4 writes row r to lane r of each of the four 32-lane quarters, so the destination must "
                  "name lane 0");
  const uint32_t col = tcg::tmem_column(taddr);
  std::vector<std::pair<Cta*, TmemUse>> uses;
  uint32_t targets = 0;
  for (Cta* c : ctas) {
    if (!c) continue;
    tmem_check_range(*c, 0, tcg::kTmemLanes, col, kCpColumns, name);
    if (c != &cta) note_remote_access(*c, name);
    copy_check_desc_read(*c, d, false, kCpRows, kCpRowBytes, name, "source");  // async_smem_writes.cpp
    TmemUse dst;  // .warpx4: rows 0-31 into lanes r + 32w of every quarter, 4 columns
    or_lanes(dst.lanes, 0, 128);
    dst.col0 = col;
    dst.ncols = kCpColumns;
    dst.write = true;
    dst.role = "destination";
    prov_tmem_written(*c, dst, name, at, 0, 0);  // provenance.cpp
    uses.emplace_back(c, dst);
    targets |= 1u << c->rank;
  }
  TcOp rec;
  rec.kind = TcKind::kCp;
  rec.name = name;
  rec.cta_group = cta_group;
  CpJob j{{ctas[0], ctas[1]}, col, d, tc_issue(rec, std::move(uses), {&f}, nullptr), who(f) + " at " + loc(at)};
  AsyncOp op{[j] { run_cp(j); }, targets, "a tcgen05.cp", &f, at};
  if (timed()) {
    op.t = model_tcgen05_cp(cta, kCpRows * kCpRowBytes);
    if (ctas[1]) op.t = std::max(op.t, model_tcgen05_cp(*ctas[1], kCpRows * kCpRowBytes));
  }
  push_tc_op(f, std::move(op));
}

void mma_mxf4nvf4_block16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, uint32_t sfa_tmem,
                          uint32_t sfb_tmem, bool accumulate, int cta_group, SrcLoc at) {
  tick(at);
  use_cta_group(cta_group, "tcgen05.mma");
  tcgen05_op("tcgen05.mma");
  Fiber& f = me();
  Cta& cta = *f.cta;
  Cta* ctas[2] = {&cta, nullptr};
  if (cta_group == 2)
    ctas[1] = &pair_mma_peer(cta, "tcgen05.mma.cta_group::2.kind::mxf4nvf4",
                             "descriptors, TMEM and scale-factor addresses");
  const char* name = cta_group == 2 ? "tcgen05.mma.cta_group::2.kind::mxf4nvf4" : "tcgen05.mma.kind::mxf4nvf4";
  const tcg::IdescBlockScaled id = tcg::decode_idesc_block_scaled(idesc);
  check_idesc_block_scaled(id, idesc, cta_group);
  const tcg::SmemDesc a = tcg::decode_smem_desc(a_desc), b = tcg::decode_smem_desc(b_desc);
  check_smem_desc(a, "A", a_desc);
  check_smem_desc(b, "B", b_desc);
  if (tcg::tmem_lane(d_tmem) != 0)
    fail_here("bad TMEM address", "an M = " + std::to_string(id.m) +
                                      " MMA writes all 128 lanes (of each CTA); the D address must name lane 0, found "
                                      "lane " + std::to_string(tcg::tmem_lane(d_tmem)));
  const uint32_t N = id.n, d_col = tcg::tmem_column(d_tmem);
  const uint32_t b_rows = N / uint32_t(cta_group);  // rows of B each CTA's shared memory supplies
  for (Cta* c : ctas)
    if (c) {
      tmem_check_range(*c, 0, tcg::kTmemLanes, d_col, N, "tcgen05.mma D");
      check_sf_addr(*c, sfa_tmem, kM, "A");  // its own 128 rows of A
      check_sf_addr(*c, sfb_tmem, N, "B");   // all N rows of B, in each CTA
    }
  const struct {
    const char* name;
    uint32_t col, ncols;
  } sf[2] = {{"A", tcg::tmem_column(sfa_tmem), kCpColumns}, {"B", tcg::tmem_column(sfb_tmem), sf_columns(N)}};
  for (const auto& s : sf)
    if (s.col < d_col + N && d_col < s.col + s.ncols)
      fail_here("scale factors overlap the accumulator",
                std::string("the scales of ") + s.name + " in TMEM columns [" + std::to_string(s.col) + ", " +
                    std::to_string(s.col + s.ncols) + ") overlap D's columns [" + std::to_string(d_col) + ", " +
                    std::to_string(d_col + N) + "): the MMA would read scales it is overwriting");
  // The cells it touches in each CTA: D (all 128 lanes), and the scale factors it reads. Copies of
  // other threads that this MMA is ordered after by fence + synchronisation + fence (a pipelined
  // pair across threads, PTX ISA §9.7.16.6.4.3) come back in `after` and are performed first.
  std::vector<std::pair<Cta*, TmemUse>> uses;
  const char* roles[3] = {"accumulator D", "scale factors of A", "scale factors of B"};
  const uint32_t cols[3][2] = {{d_col, N}, {sf[0].col, sf[0].ncols}, {sf[1].col, sf[1].ncols}};
  uint32_t targets = 0;
  for (Cta* c : ctas) {
    if (!c) continue;
    if (c != &cta) note_remote_access(*c, name);
    for (int i = 0; i < 3; ++i) {
      TmemUse u;
      or_lanes(u.lanes, 0, 128);
      u.col0 = cols[i][0];
      u.ncols = cols[i][1];
      u.write = i == 0;
      u.role = roles[i];
      uses.emplace_back(c, u);
    }
    copy_check_desc_read(*c, a, false, kM, 32, name, "operand A");  // async_smem_writes.cpp
    copy_check_desc_read(*c, b, false, b_rows, 32, name, "operand B");
    prov_check_operand(*c, a, false, "A");  // provenance.cpp, as for kind::f16
    prov_check_operand(*c, b, false, "B");
    targets |= 1u << c->rank;
  }
  for (const auto& [c, u] : uses)
    if (u.write) {
      if (accumulate) prov_check_tmem_read(*c, u, name, /*mma_accumulate=*/true);
      prov_tmem_written(*c, u, name, at, id.m, N);
    }
  TcOp rec;
  rec.kind = TcKind::kMma;
  rec.name = name;
  rec.cta_group = cta_group;
  rec.d_tmem = d_tmem;
  rec.m = id.m;
  rec.n = N;
  rec.mma_kind = 1;
  Mxf4Job j{{ctas[0], ctas[1]}, d_tmem, sfa_tmem, sfb_tmem, a, b, N, accumulate, nullptr, {}, who(f) + " at " + loc(at)};
  j.rec = tc_issue(rec, std::move(uses), {&f}, &j.after);
  AsyncOp op{[j] { run_mxf4(j); }, targets, "a tcgen05.mma", &f, at};
  // 64 FP4 = 32 bytes a row; each SM reads its 128 rows of A and its N / cta_group rows of B.
  if (timed()) op.t = model_mma(cta, ctas[1], kM, N, kM * 32, b_rows * 32, cta_group == 2);
  push_tc_op(f, std::move(op));
}

}  // namespace tcsim
