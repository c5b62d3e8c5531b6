// mma.cpp — tcgen05.mma (kind::f16) and tcgen05.commit: the tensor core reading shared memory
// through descriptors and accumulating into TMEM.
//
// Models (PTX ISA §9.7.16.4.1 shared-memory descriptor, §9.7.16.4.2 instruction descriptor,
// §9.7.16.3 canonical layouts, §9.7.16.10.5 data-path layouts, §9.7.16.10.9 tcgen05.mma,
// §9.7.16.12.1 tcgen05.commit, §9.7.16.5 CTA pairs, §9.7.16.10.5 data-path layouts; CUTLASS cute/atom/mma_traits_sm100_frag.hpp and mma_traits_sm100.hpp):
//  * A and B are fetched ONLY through the decoded descriptors (start, LBO, SBO, layout type,
//    swizzle on the address): the emulator never sees the logical matrices. K = 16 per MMA.
//  * cta_group::1: M = 64 (layout F) or 128 (layout D, row m in lane m), N multiple of 8 <= 256.
//  * cta_group::2 (issued by one thread of the even CTA of a pair): the descriptors' offsets are
//    read in BOTH CTAs' shared memory. M = 256: CTA v supplies A rows [128v, 128v+128) and B rows
//    (N index) [v*N/2, (v+1)*N/2); its TMEM receives D rows [128v, +128) in lanes 0-127, all N
//    columns (layout A). M = 128: 64 A rows per CTA, the same B split; CTA v's TMEM holds rows
//    [64v, +64) with columns [0, N/2) in lanes 0-63 and [N/2, N) in lanes 64-127 (layout B).
//  * The MMAs and commits of one thread complete in issue order, asynchronously; a commit
//    arrives once on its mbarrier (or, with .multicast::cluster, on the mbarrier at that offset
//    in every CTA of the mask) after all of them. The arrivals of different commits are not
//    ordered among themselves: they land in any order the seed picks. Only some pairs of
//    asynchronous tcgen05 operations are ordered by issue (PTX ISA §9.7.16.6.2): each MMA records
//    the accumulator cells it writes, and tmem_hazards.cpp reports a conflict with an operation
//    the ISA does not order before it; a commit's arrival carries the committing thread's clock.
// Accumulation: each output is a float sum over k in order, then + D: the hardware's order and
// internal precision are unspecified (the PTX ISA does not specify them), so bitwise checks use exact inputs.
#include <cmath>
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace detail {

float f16_bits_to_float(uint16_t h, bool bf16) {
  if (bf16) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0) v = std::ldexp(float(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(float(man | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

// The checks every tcgen05 operand descriptor passes (also used by tcgen05.cp and the
// block-scaled MMA, mma_block_scaled.cpp).
void check_smem_desc(const tcg::SmemDesc& d, const char* operand, uint64_t raw) {
  // Built only for a report (one per call was a measurable share of a --predict run).
  const auto name = [&] { return std::string(operand) + " descriptor " + hex(raw); };
  if (d.fixed46_48 != 1)
    fail_here("bad shared-memory descriptor",
              name() + ": bits 46-48 must hold the fixed value 0b001 (PTX ISA §9.7.16.4.1), found " +
                  std::to_string(d.fixed46_48));
  if (d.reserved != 0)
    fail_here("bad shared-memory descriptor", name() + ": reserved bits 14-15, 30-31 or 53-60 are not zero");
  if (!tcg::layout_is_valid(d.layout))
    fail_here("bad shared-memory descriptor",
              name() + ": layout type " + std::to_string(d.layout) + " in bits 61-63 is invalid (0, 1, 2, 4, 6 are defined)");
  if (d.layout == uint32_t(tcg::Layout::kSwizzle128B_Base32B))
    fail_here("unsupported shared-memory descriptor", name() + ": the 128B-base-32B layout is not modelled");
  if (d.lbo_mode != 0)
    fail_here("bad shared-memory descriptor", name() + ": bit 52 (absolute LBO mode) is only valid on sm_103a");
  if (d.base_offset != 0)
    fail_here("unsupported shared-memory descriptor",
              name() + ": a non-zero base offset (bits 49-51) is not modelled; place swizzle atoms on their repeat boundary");
  const tcg::Layout l = static_cast<tcg::Layout>(d.layout);
  if (l != tcg::Layout::kNone) {
    const uint32_t rep = tcg::layout_repeat_bytes(l), w = tcg::layout_row_bytes(l);
    if ((d.start % rep) >= w)
      fail_here("swizzled operand not aligned to its swizzle repeat",
                name() + ": start address " + hex(d.start) + " is " + std::to_string(d.start % rep) + " bytes into a " +
                    std::to_string(rep) + "-byte swizzle repeat; a " + std::to_string(w) +
                    "B-swizzled atom must start on a " + std::to_string(rep) +
                    "-byte boundary (only an advance of less than one " + std::to_string(w) +
                    "-byte row, the K step, is allowed)");
  }
}

}  // namespace detail

namespace {

struct MmaJob {
  uint32_t d_tmem;
  tcg::SmemDesc a, b;
  tcg::Idesc id;
  bool accumulate;
  int cta_group;
  Cta* ctas[2];  // cta_group::1: {issuer, nullptr}; cta_group::2: {even, odd}
  std::shared_ptr<TcOp> rec;                 // its ordering record (tmem_hazards.cpp)
  std::vector<std::shared_ptr<TcOp>> after;  // other threads' pipelined predecessors, performed first
};



void check_idesc(const tcg::Idesc& id, uint32_t raw, int cta_group) {
  // Built only for a report (one per call was a measurable share of a --predict run).
  const auto name = [&] { return "instruction descriptor " + hex(raw); };
  if (id.sparse || id.sparse_sel)
    fail_here("unsupported instruction descriptor", name() + ": sparse MMA is not modelled");
  if (id.saturate || id.reserved6 || id.reserved23 || id.reserved29 || id.max_shift)
    fail_here("bad instruction descriptor", name() + ": reserved/saturate/max-shift bits must be zero for kind::f16");
  if (id.d_format != uint32_t(tcg::DType::kF32))
    fail_here("unsupported instruction descriptor",
              name() + ": D format " + std::to_string(id.d_format) + " (only F32 = 1 is modelled for kind::f16)");
  if (id.a_format > 1 || id.b_format > 1)
    fail_here("bad instruction descriptor",
              name() + ": A/B formats for kind::f16 must be F16 (0) or BF16 (1), found " + std::to_string(id.a_format) +
                  "/" + std::to_string(id.b_format));
  if (cta_group == 1 && !tcg::is_valid_f16_shape_cta1(id.m, id.n))
    fail_here("invalid MMA shape",
              name() + ": M = " + std::to_string(id.m) + ", N = " + std::to_string(id.n) +
                  "; kind::f16 with cta_group::1 needs M in {64, 128} and N a multiple of 8 in [8, 256] (PTX ISA "
                  "§9.7.16.2.1)");
  if (cta_group == 2 && !tcg::is_valid_f16_shape_cta2(id.m, id.n))
    fail_here("invalid MMA shape",
              name() + ": M = " + std::to_string(id.m) + ", N = " + std::to_string(id.n) +
                  "; kind::f16 with cta_group::2 needs M in {128, 256} (across the pair) and N a multiple of 16 in "
                  "[16, 256] (PTX ISA §9.7.16.2.1)");
}


// Reads element (row, k) of an operand from `cta`'s shared memory through descriptor `d`.
uint16_t fetch(const Cta& cta, const tcg::SmemDesc& d, bool mn_major, uint32_t row, uint32_t k, const char* operand) {
  const uint32_t addr = mn_major ? tcg::mnmajor_operand_addr(d, row, k, 2) : tcg::kmajor_operand_addr(d, row, 2 * k);
  const uint32_t a = addr & kOffsetMask;
  if (a < kSmemBase || a + 2 > kSmemBase + cta.smem_bytes)
    fail("tcsim: shared memory out of bounds\n  tcgen05.mma operand " + std::string(operand) + " read at " + hex(addr) +
         " (row " + std::to_string(row) + ", k " + std::to_string(k) + ") lies outside the dynamic shared memory [" +
         hex(kSmemBase) + ", " + hex(kSmemBase + cta.smem_bytes) + ") of " + cta_name(cta) +
         "; check the descriptor's start/LBO/SBO");
  uint16_t v;
  memcpy(&v, cta.smem + (a - kSmemBase), 2);
  return v;
}

// The 16 K-elements of row `row` of an operand. K-major rows are two 16-byte chunks, each
// contiguous in every canonical layout (a core-matrix row, or one swizzled 16-byte unit), so
// they are fetched a chunk at a time; MN-major operands element by element.
void fetch_row(const Cta& cta, const tcg::SmemDesc& d, bool mn_major, uint32_t row, bool bf16, const char* operand,
               float* out) {
  if (mn_major) {
    for (uint32_t k = 0; k < 16; ++k) out[k] = f16_bits_to_float(fetch(cta, d, true, row, k, operand), bf16);
    return;
  }
  for (uint32_t c = 0; c < 2; ++c) {
    const uint32_t addr = tcg::kmajor_operand_addr(d, row, 16 * c);
    const uint32_t a = addr & kOffsetMask;
    if (a % 16 != 0 || a < kSmemBase || a + 16 > kSmemBase + cta.smem_bytes) {
      for (uint32_t k = 0; k < 8; ++k) out[8 * c + k] = f16_bits_to_float(fetch(cta, d, false, row, 8 * c + k, operand), bf16);
      continue;
    }
    uint16_t h[8];
    memcpy(h, cta.smem + (a - kSmemBase), 16);
    for (uint32_t k = 0; k < 8; ++k) out[8 * c + k] = f16_bits_to_float(h[k], bf16);
  }
}

void run_mma(const MmaJob& j) {
  tc_perform_first(j.after);
  j.rec->done = true;
  const auto t0 = Clock::now();
  const uint32_t M = j.id.m, N = j.id.n, K = 16;
  const uint32_t nctas = j.cta_group == 2 ? 2 : 1;
  const uint32_t m_per = M / nctas, n_per = N / nctas;  // rows of A / of B each CTA supplies
  const uint32_t col0 = tcg::tmem_column(j.d_tmem), lane0 = tcg::tmem_lane(j.d_tmem);
  const uint32_t d_cols = (j.cta_group == 2 && M == 128) ? N / 2 : N;
  for (uint32_t v = 0; v < nctas; ++v)
    if (!tmem_find(*j.ctas[v], col0, d_cols))
      fail("tcsim: TMEM deallocated under a running MMA\n  the tcgen05.mma issued at " + loc(j.rec->at) +
           " writing TMEM columns [" + std::to_string(col0) + ", " + std::to_string(col0 + d_cols) + ") of " +
           cta_name(*j.ctas[v]) + " completed after those columns were freed (" + describe_allocs(*j.ctas[v]) +
           "); wait for the MMA's tcgen05.commit before tcgen05.dealloc (PTX ISA §9.7.16.7.1, §9.7.16.6.4.2)");
  for (uint32_t v = 0; v < nctas; ++v)
    check_no_pending_ld(*j.ctas[v], lane0, 128, col0, d_cols, "the tcgen05.mma issued at " + loc(j.rec->at));
  if (g_options.skip_math) {  // timing only: the checks above, no arithmetic
    g_stats.mmas++;
    g_stats.mma_flops += 2ull * M * N * K;
    return;
  }
  const bool a_bf16 = j.id.a_format == 1, b_bf16 = j.id.b_format == 1;
  // B transposed to [k][n], so the inner loop runs over 8 columns at a time (GCC vector
  // extension: SSE on any x86-64) while each output still sums its K products in order
  // k = 0..15, then adds the old D: the same arithmetic as a scalar loop, bit for bit.
  typedef float f32x8 __attribute__((vector_size(32)));
  thread_local std::vector<f32x8> A8, Bt8;  // A[m][k] splatted; B^T[k][n/8]
  const uint32_t N8 = N / 8;                // N is a multiple of 8 for every valid shape
  A8.resize(size_t(M) * K);
  Bt8.resize(size_t(K) * N8);
  float* Bt = reinterpret_cast<float*>(Bt8.data());
  const float sa = j.id.negate_a ? -1.f : 1.f, sb = j.id.negate_b ? -1.f : 1.f;
  for (uint32_t v = 0; v < nctas; ++v) {
    float row[K];
    for (uint32_t m = 0; m < m_per; ++m) {
      fetch_row(*j.ctas[v], j.a, j.id.a_mn_major, m, a_bf16, "A", row);
      for (uint32_t k = 0; k < K; ++k) {
        const float x = sa * row[k];
        A8[(v * m_per + m) * K + k] = f32x8{x, x, x, x, x, x, x, x};
      }
    }
    for (uint32_t n = 0; n < n_per; ++n) {
      fetch_row(*j.ctas[v], j.b, j.id.b_mn_major, n, b_bf16, "B", row);
      for (uint32_t k = 0; k < K; ++k) Bt[k * N + v * n_per + n] = sb * row[k];
    }
  }
  thread_local std::vector<f32x8> acc8;
  acc8.resize(N8);
  const float* acc = reinterpret_cast<const float*>(acc8.data());
  for (uint32_t m = 0; m < M; ++m) {
    const f32x8* a = &A8[size_t(m) * K];
    for (uint32_t q = 0; q < N8; ++q) acc8[q] = f32x8{0, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t k = 0; k < K; ++k) {
      const f32x8* b = &Bt8[size_t(k) * N8];
      for (uint32_t q = 0; q < N8; ++q) acc8[q] += a[k] * b[q];
    }
    // Where row m, column n of D lives (data-path layouts, §9.7.16.10.5): a run of columns of
    // one lane (layouts D, F, A), or two runs of N/2 in lanes mm and mm + 64 (layout B).
    Cta& cta = *j.ctas[m / m_per];
    const uint32_t mm = m % m_per;
    const bool layout_b = j.cta_group == 2 && M == 128;
    const uint32_t run = layout_b ? N / 2 : N;
    for (uint32_t h = 0; h < N / run; ++h) {
      uint32_t lane;
      if (j.cta_group == 1) lane = lane0 + (M == 128 ? mm : (mm % 16) + 32 * (mm / 16));  // layout D / F
      else lane = mm + 64 * h;                                                             // layout A / B
      uint32_t* cells = &tmem_cell(cta, lane, col0);
      const float* src = acc + h * run;
      if (j.accumulate) {
        for (uint32_t n = 0; n < run; ++n) {
          float old;
          memcpy(&old, &cells[n], 4);
          const float d = src[n] + old;
          memcpy(&cells[n], &d, 4);
        }
      } else {
        memcpy(cells, src, 4 * run);
      }
    }
  }
  g_stats.mmas++;
  g_stats.mma_flops += 2ull * M * N * K;
  g_stats.mma_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

void mma_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, bool accumulate, int cta_group,
             SrcLoc at) {
  tick(at);
  use_cta_group(cta_group, "tcgen05.mma");
  tcgen05_op("tcgen05.mma");
  Fiber& f = me();
  Cta& cta = *f.cta;
  MmaJob j{d_tmem, tcg::decode_smem_desc(a_desc), tcg::decode_smem_desc(b_desc), tcg::decode_idesc(idesc), accumulate,
           cta_group, {&cta, nullptr}, nullptr, {}};
  if (cta_group == 2) j.ctas[1] = &pair_mma_peer(cta, "tcgen05.mma.cta_group::2", "descriptors and TMEM address");
  check_idesc(j.id, idesc, cta_group);
  check_smem_desc(j.a, "A", a_desc);
  check_smem_desc(j.b, "B", b_desc);
  const uint32_t lane0 = tcg::tmem_lane(d_tmem), col0 = tcg::tmem_column(d_tmem);
  if ((cta_group == 2 || j.id.m == 128) && lane0 != 0)
    fail_here("bad TMEM address", "an M = " + std::to_string(j.id.m) +
                                      " MMA writes all 128 lanes; the D address must name lane 0, found lane " +
                                      std::to_string(lane0));
  if (cta_group == 1 && j.id.m == 64 && lane0 != 0 && lane0 != 16)
    fail_here("bad TMEM address", "an M = 64 MMA's D address must name lane 0 or 16, found " + std::to_string(lane0));
  const uint32_t d_cols = (cta_group == 2 && j.id.m == 128) ? j.id.n / 2 : j.id.n;
  for (int v = 0; v < cta_group; ++v) {
    Cta& c = *j.ctas[v];
    if (cta_group == 1)
      tmem_check_range(c, j.id.m == 128 ? 0 : lane0, j.id.m == 128 ? 128 : 128 - lane0, col0, d_cols, "tcgen05.mma D");
    else
      tmem_check_range(c, 0, 128, col0, d_cols, "tcgen05.mma.cta_group::2 D");
  }
  if (cta_group == 2) note_remote_access(*j.ctas[1], "tcgen05.mma.cta_group::2");
  // The accumulator cells it writes (and, with enable-input-d, reads): all 128 lanes, or the
  // four 16-lane blocks of layout F for M = 64 (§9.7.16.10.5).
  std::vector<std::pair<Cta*, TmemUse>> uses;
  for (int v = 0; v < cta_group; ++v) {
    TmemUse u;
    if (cta_group == 1 && j.id.m == 64)
      for (uint32_t q = 0; q < 4; ++q) or_lanes(u.lanes, lane0 + 32 * q, 16);
    else
      or_lanes(u.lanes, 0, 128);
    u.col0 = col0;
    u.ncols = d_cols;
    u.write = true;
    u.role = "accumulator D";
    uses.emplace_back(j.ctas[v], u);
  }
  // What wrote the operands and the accumulator (provenance.cpp): the descriptors' layouts against
  // the TMA that placed the tiles, enable-input-d against cells no MMA wrote; then D is written.
  const char* mma_name = cta_group == 2 ? "tcgen05.mma.cta_group::2.kind::f16" : "tcgen05.mma.kind::f16";
  for (int v = 0; v < cta_group; ++v) {
    // No copy may still write the operands (async_smem_writes.cpp), then their layouts.
    copy_check_desc_read(*j.ctas[v], j.a, j.id.a_mn_major, cta_group == 2 ? j.id.m / 2 : j.id.m, 32, mma_name, "operand A");
    copy_check_desc_read(*j.ctas[v], j.b, j.id.b_mn_major, cta_group == 2 ? j.id.n / 2 : j.id.n, 32, mma_name, "operand B");
    prov_check_operand(*j.ctas[v], j.a, j.id.a_mn_major, "A");
    prov_check_operand(*j.ctas[v], j.b, j.id.b_mn_major, "B");
  }
  for (const auto& [c, u] : uses) {
    if (accumulate) prov_check_tmem_read(*c, u, mma_name, /*mma_accumulate=*/true);
    prov_tmem_written(*c, u, mma_name, at, j.id.m, j.id.n);
  }
  TcOp rec;
  rec.kind = TcKind::kMma;
  rec.name = mma_name;
  rec.cta_group = cta_group;
  rec.d_tmem = d_tmem;
  rec.m = j.id.m;
  rec.n = j.id.n;
  j.rec = tc_issue(rec, std::move(uses), {&f}, &j.after);
  uint32_t targets = 1u << cta.rank;
  if (cta_group == 2) targets |= 1u << j.ctas[1]->rank;
  AsyncOp op{[j] { run_mma(j); }, targets, "a tcgen05.mma", &f, at};
  if (timed()) {
    // Operand bytes each SM reads from its shared memory for one K = 16 step (32 bytes a row).
    const uint32_t rows_a = cta_group == 2 ? j.id.m / 2 : j.id.m, rows_b = cta_group == 2 ? j.id.n / 2 : j.id.n;
    op.t = model_mma(cta, j.ctas[1], cta_group == 2 ? j.id.m / 2 : j.id.m, j.id.n, rows_a * 32, rows_b * 32, cta_group == 2);
  }
  push_tc_op(f, std::move(op));
}

void tcgen05_commit(uint32_t bar, int cta_group, bool multicast, uint16_t cta_mask, SrcLoc at) {
  tick(at);
  use_cta_group(cta_group, "tcgen05.commit");
  Fiber& f = me();
  f.tc_pending_fence = nullptr;  // commit implies tcgen05.fence::before_thread_sync (§9.7.16.12.1)
  Cta& self = *f.cta;
  Cluster& cl = *self.cluster;
  if (cta_group == 2) pair_peer(self, "tcgen05.commit");
  const char* what = multicast ? "tcgen05.commit.multicast" : "tcgen05.commit";
  std::vector<Cta*> targets;
  if (multicast) {
    if (cta_mask == 0) fail_here("bad multicast mask", std::string(what) + " with an empty CTA mask");
    for (uint32_t r = 0; r < 16; ++r)
      if (cta_mask >> r & 1u) {
        if (r >= cl.ctas.size())
          fail_here("multicast mask names a CTA outside the cluster",
                    std::string(what) + " with CTA mask " + hex(cta_mask) + ": bit " + std::to_string(r) +
                        " is set but the cluster has " + std::to_string(cl.ctas.size()) + " CTA(s)");
        targets.push_back(cl.ctas[r]);
      }
  } else {
    targets.push_back(&cluster_cta(bar, what));
  }
  uint32_t mask = 0;
  std::vector<std::pair<Cta*, uint32_t>> arrivals;
  for (Cta* t : targets) {
    const uint32_t tbar = (t->rank << kRankShift) | (bar & kOffsetMask);
    const Mbar& b = mbar_at_cluster(tbar, what);
    // The arrival reaches into the target, not this thread: the target's exit is checked against
    // the arrival's landing (in flight, or in a phase none of its waits saw: launch.cpp).
    check_mbar_published(b, tbar, /*async_proxy=*/true, /*remote=*/t != &self, what);
    arrivals.emplace_back(t, tbar);
    mask |= 1u << t->rank;
  }
  const Origin by{what, true, &f, at};
  // The commit's place in this thread's tcgen05 queue is when its MMAs have completed; the
  // arrival itself then travels separately, one per destination CTA. The ISA orders each arrival
  // after the operations its commit tracks, not the arrivals of different commits (or of
  // different destinations) among themselves, so they land in any order (seeded).
  Fiber* fp = &f;
  // The arrival carries this thread's tcgen05 ordering: a thread that waits for it knows every
  // operation issued before the commit complete (tmem_hazards.cpp).
  const std::shared_ptr<const HbClock> carried = tc_commit_clock(f);
  push_tc_op(f, AsyncOp{[arrivals, by, fp, at, carried] {
                          for (const auto& [t, tbar] : arrivals) {
                            Cta* tp = t;
                            const uint32_t b_addr = tbar;
                            AsyncOp arrival{[tp, b_addr, by, carried] {
                                              Mbar& b = tp->mbars.find(b_addr & kOffsetMask)->second;
                                              mbar_note_async(b, by);  // launch.cpp: exit ordered after it
                                              mbar_do_arrive(b, b_addr, 1, by, carried.get());
                                            },
                                            1u << t->rank, "a tcgen05.commit arrival", fp, at};
                            // Timing model: at once in the issuing CTA, a DSMEM hop to another.
                            if (timed()) arrival.t = g_sched->now + (t == fp->cta ? 0.0 : model_remote_arrive_ns());
                            push_async(std::move(arrival));
                          }
                        },
                        mask, "a tcgen05.commit (waiting for its MMAs)", &f, at});
}

}  // namespace tcsim
