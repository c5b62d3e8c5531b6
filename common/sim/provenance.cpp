// provenance.cpp — who wrote what: per TMEM cell, whether a tcgen05.mma or tcgen05.cp issued since
// its allocation writes it; per 128 bytes of shared memory, the TMA load that last wrote it and
// the layout its tensor map gave the bytes. Two mistakes of meaning, which on a GPU only show as
// wrong numbers (the emulator's NaN poison in C), are reported at the instruction that makes them:
//  * a read of TMEM that nothing wrote since the allocation (PTX ISA §9.7.16.7.1: tcgen05.alloc
//    gives columns, not values): a tcgen05.ld of such cells (an epilogue reading columns past the
//    instruction descriptor's N, lanes an M = 64 MMA does not write, a load issued before any
//    MMA), or a tcgen05.mma with enable-input-d set on cells no MMA wrote (`accumulate = true` on
//    a tile's first MMA, §9.7.16.10.9: D = A*B + D);
//  * an MMA operand descriptor whose layout type is not the swizzle mode with which the TMA wrote
//    those bytes (§9.7.16.4.1 layout type, §9.7.16.3.3 canonical layouts, §5.5.7 tensor swizzle
//    modes), and, where the box makes the layout certain (a K-major operand whose box rows are one
//    swizzle span wide, so groups of 8 rows lie 8 spans apart), an SBO the bytes cannot have.
// Both are decided at issue, from what was issued before (not from what has completed), so they
// fire under every seed; a correct kernel always issues the writer before its reader (the reader
// waits for a barrier the writer's completion signals). Options::provenance_checks turns them on
// (the harness does, for every step; unit tests of other rules read the poison on purpose).
#include <algorithm>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {

size_t cell(uint32_t lane, uint32_t col) { return size_t(lane) * tcg::kTmemColumns + col; }

bool has_lane(const uint64_t (&lanes)[2], uint32_t l) { return (lanes[l / 64] >> (l % 64)) & 1u; }

bool covers(const TmemWriteSite& s, const TmemUse& u) {
  return s.col0 <= u.col0 && u.col0 + u.ncols <= s.col0 + s.ncols && (u.lanes[0] & ~s.lanes[0]) == 0 &&
         (u.lanes[1] & ~s.lanes[1]) == 0;
}

// "lanes 0-127", "lanes 0-15, 32-47, 64-79, 96-111"
std::string lanes_str(const uint64_t (&lanes)[2]) {
  std::string s;
  for (uint32_t l = 0; l < 128;) {
    if (!has_lane(lanes, l)) {
      ++l;
      continue;
    }
    uint32_t e = l;
    while (e + 1 < 128 && has_lane(lanes, e + 1)) ++e;
    s += (s.empty() ? "" : ", ") + std::to_string(l) + (e > l ? "-" + std::to_string(e) : "");
    l = e + 1;
  }
  return (s.find_first_of(",-") != std::string::npos ? "lanes " : "lane ") + s;
}

tcg::Layout layout_of_span(uint32_t span) {
  switch (span) {
    case 32: return tcg::Layout::kSwizzle32B;
    case 64: return tcg::Layout::kSwizzle64B;
    case 128: return tcg::Layout::kSwizzle128B;
    default: return tcg::Layout::kNone;
  }
}

std::string layout_name(uint32_t layout) {
  switch (static_cast<tcg::Layout>(layout)) {
    case tcg::Layout::kNone: return "no swizzle (layout type 0, interleaved 8 x 16-byte core matrices)";
    case tcg::Layout::kSwizzle32B: return "32B swizzle (layout type 6)";
    case tcg::Layout::kSwizzle64B: return "64B swizzle (layout type 4)";
    case tcg::Layout::kSwizzle128B: return "128B swizzle (layout type 2)";
    default: return "layout type " + std::to_string(layout);
  }
}

std::string map_swizzle_name(uint32_t span) {
  return span ? "CU_TENSOR_MAP_SWIZZLE_" + std::to_string(span) + "B" : std::string("CU_TENSOR_MAP_SWIZZLE_NONE");
}

}  // namespace

namespace detail {

void prov_tmem_allocated(Cta& cta, uint32_t col, uint32_t ncols) {
  Sm& sm = *cta.sm;
  if (sm.tmem_written.empty()) sm.tmem_written.assign(size_t(tcg::kTmemLanes) * tcg::kTmemColumns, 0);
  for (uint32_t lane = 0; lane < tcg::kTmemLanes; ++lane) std::fill_n(&sm.tmem_written[cell(lane, col)], ncols, 0);
  auto& w = cta.tmem_writes;
  w.erase(std::remove_if(w.begin(), w.end(), [&](const TmemWriteSite& s) { return s.col0 < col + ncols && col < s.col0 + s.ncols; }),
          w.end());
}

void prov_tmem_written(Cta& cta, const TmemUse& u, const char* what, SrcLoc at, uint32_t m, uint32_t n) {
  // A site already recorded since the allocation has marked its cells: nothing to do (an MMA
  // loop writes the same cells K / 16 times).
  for (const TmemWriteSite& s : cta.tmem_writes)
    if (s.at.line == at.line && s.at.file == at.file && covers(s, u) && s.col0 == u.col0 && s.ncols == u.ncols)
      return;
  Sm& sm = *cta.sm;
  if (sm.tmem_written.empty()) sm.tmem_written.assign(size_t(tcg::kTmemLanes) * tcg::kTmemColumns, 0);
  for (uint32_t lane = 0; lane < tcg::kTmemLanes; ++lane)
    if (has_lane(u.lanes, lane)) std::fill_n(&sm.tmem_written[cell(lane, u.col0)], u.ncols, 1);
  TmemWriteSite s;
  s.at = at;
  s.what = what;
  s.col0 = u.col0;
  s.ncols = u.ncols;
  s.lanes[0] = u.lanes[0];
  s.lanes[1] = u.lanes[1];
  s.m = m;
  s.n = n;
  cta.tmem_writes.push_back(s);
}

void prov_check_tmem_read(Cta& cta, const TmemUse& u, const char* what, bool mma_accumulate) {
  if (!g_options.provenance_checks) return;
  for (const TmemWriteSite& s : cta.tmem_writes)
    if (covers(s, u)) return;
  const Sm& sm = *cta.sm;
  uint32_t bad_lane = 0, bad_col = 0, nbad = 0;
  for (uint32_t lane = 0; lane < tcg::kTmemLanes; ++lane) {
    if (!has_lane(u.lanes, lane)) continue;
    for (uint32_t c = u.col0; c < u.col0 + u.ncols; ++c)
      if (sm.tmem_written.empty() || !sm.tmem_written[cell(lane, c)]) {
        if (nbad++ == 0) bad_lane = lane, bad_col = c;
      }
  }
  if (nbad == 0) return;
  const TmemAlloc* alloc = tmem_find(cta, u.col0, u.ncols);
  const std::string alloc_at = alloc ? " (tcgen05.alloc at " + loc(alloc->at) + ")" : "";
  std::string written;
  size_t shown = 0;
  for (const TmemWriteSite& s : cta.tmem_writes) {
    if (alloc && (s.col0 < alloc->col || s.col0 >= alloc->col + alloc->ncols)) continue;
    if (shown++ < 4)
      written += "\n    " + lanes_str(s.lanes) + " x " + tmem_cols(cta, s.col0, s.ncols) + " by the " + s.what + " at " +
                 loc(s.at) + (s.m ? " (instruction descriptor M = " + std::to_string(s.m) + ", N = " + std::to_string(s.n) + ")" : "");
  }
  if (shown > 4) written += "\n    and " + std::to_string(shown - 4) + " more";
  // Why: the lanes no MMA writes (M), the columns past every MMA's N, or nothing issued yet.
  bool lane_never = true, col_beyond = true;
  for (const TmemWriteSite& s : cta.tmem_writes) {
    if (has_lane(s.lanes, bad_lane)) lane_never = false;
    if (has_lane(s.lanes, bad_lane) && bad_col < s.col0 + s.ncols) col_beyond = false;
  }
  std::string why;
  if (shown == 0)
    why = mma_accumulate
              ? " No MMA wrote this accumulator before: the first MMA into it must pass accumulate = false "
                "(enable-input-d false, so D = A*B); later ones accumulate (PTX ISA §9.7.16.10.9)."
              : " Nothing has written this allocation yet: is the load issued before the MMAs that fill it, e.g. "
                "without waiting for their tcgen05.commit (PTX ISA §9.7.16.6.4.2)?";
  else if (mma_accumulate)
    why = " These cells were never written by an MMA: the first MMA into an accumulator must pass accumulate = "
          "false (enable-input-d false, so D = A*B), PTX ISA §9.7.16.10.9.";
  else if (lane_never)
    why = " No MMA writes lane " + std::to_string(bad_lane) +
          ": the instruction descriptor's M decides which lanes D occupies (M = 64: layout F, 16 lanes of each "
          "quarter; M = 128: all 128, PTX ISA §9.7.16.10.5, §9.7.16.4.2).";
  else if (col_beyond)
    why = " The column lies past every MMA's D: an MMA writes N columns from its D address, so the instruction "
          "descriptor's N (PTX ISA §9.7.16.4.2) must cover every column the epilogue reads.";
  fail_here(mma_accumulate ? "MMA accumulates into TMEM that no MMA wrote" : "tcgen05.ld of TMEM that no MMA or copy wrote",
            std::string(what) + " reads " + lanes_str(u.lanes) + " x " + tmem_cols(cta, u.col0, u.ncols) + " of " +
                cta_name(cta) + ", but no tcgen05.mma or tcgen05.cp issued since the allocation" + alloc_at +
                " writes lane " + std::to_string(bad_lane) + ", " + tmem_cols(cta, bad_col, 1) +
                (nbad > 1 ? " (nor " + std::to_string(nbad - 1) + " more of these cells)" : "") +
                ": they hold whatever the allocation left there (undefined; the emulator's NaN poison; PTX ISA "
                "§9.7.16.7.1)." +
                why + (shown ? " Written since the allocation:" + written : ""));
}

void prov_tma_wrote(Cta& cta, uint32_t off, uint32_t bytes, uint32_t swizzle_span, uint32_t row_bytes, uint32_t rows,
                    SrcLoc at) {
  const uint32_t a = (off & kOffsetMask) - kSmemBase;
  if (cta.tma_piece.empty()) cta.tma_piece.assign(cta.smem_bytes / 128 + 1, 0);
  size_t idx = 0;
  for (size_t i = 0; i < cta.tma_sites.size() && !idx; ++i) {
    const TmaWriteSite& s = cta.tma_sites[i];
    if (s.at.line == at.line && s.at.file == at.file && s.swizzle_span == swizzle_span && s.row_bytes == row_bytes &&
        s.rows == rows)
      idx = i + 1;
  }
  if (!idx) {
    if (cta.tma_sites.size() >= 65535) return;  // (never for a real kernel: one per distinct copy)
    cta.tma_sites.push_back(TmaWriteSite{at, swizzle_span, row_bytes, rows});
    idx = cta.tma_sites.size();
  }
  for (uint32_t p = a / 128; p < (a + bytes + 127) / 128 && p < cta.tma_piece.size(); ++p) cta.tma_piece[p] = uint16_t(idx);
}

void prov_check_operand(Cta& cta, const tcg::SmemDesc& d, bool mn_major, const char* operand) {
  if (!g_options.provenance_checks || cta.tma_piece.empty()) return;
  const uint32_t addr = (mn_major ? tcg::mnmajor_operand_addr(d, 0, 0, 2) : tcg::kmajor_operand_addr(d, 0, 0)) & kOffsetMask;
  if (addr < kSmemBase || addr - kSmemBase >= cta.smem_bytes) return;  // bounds are checked when the MMA reads
  const uint16_t idx = cta.tma_piece[(addr - kSmemBase) / 128];
  if (!idx) return;  // not written by a TMA load (plain stores, a bulk copy): nothing to compare
  const TmaWriteSite& s = cta.tma_sites[idx - 1];
  const tcg::Layout want = layout_of_span(s.swizzle_span);
  // Built only for a report (one per MMA operand was a measurable share of a --predict run).
  const auto desc = [&] {
    return std::string("the descriptor of ") + operand + " (start " + hex(d.start) + ", " + layout_name(d.layout) +
           ", LBO " + std::to_string(d.lbo) + ", SBO " + std::to_string(d.sbo) + ")";
  };
  if (d.layout != uint32_t(want))
    fail_here("MMA operand layout differs from what the TMA wrote",
              desc() + " reads shared memory that the TMA load at " + loc(s.at) + " wrote through a tensor map with " +
                  map_swizzle_name(s.swizzle_span) + " (box rows of " + std::to_string(s.row_bytes) +
                  " bytes): the bytes are laid out for " + layout_name(uint32_t(want)) +
                  ", so the MMA would read them in another order. The descriptor's layout type (bits 61-63, PTX ISA "
                  "§9.7.16.4.1) must name the swizzle mode of the tensor map that placed the tile (§5.5.7 swizzle "
                  "modes, §9.7.16.3.3 canonical layouts)");
  // A K-major operand from a box whose rows are exactly one swizzle span: row r lies at r * span,
  // so the groups of 8 rows that SBO steps between are 8 spans apart, whatever the kernel meant.
  if (!mn_major && s.swizzle_span && s.row_bytes == s.swizzle_span && s.rows > 8 && d.sbo != 8 * s.swizzle_span)
    fail_here("MMA operand layout differs from what the TMA wrote",
              desc() + " reads shared memory that the TMA load at " + loc(s.at) + " wrote as " + std::to_string(s.rows) +
                  " rows of " + std::to_string(s.row_bytes) + " bytes (" + map_swizzle_name(s.swizzle_span) +
                  "): each row is one swizzle span, so 8-row groups lie " + std::to_string(8 * s.swizzle_span) +
                  " bytes apart and the descriptor's SBO (stride byte offset, PTX ISA §9.7.16.4.1, the K-major "
                  "canonical layout of §9.7.16.3.3) must be " + std::to_string(8 * s.swizzle_span) + ", not " +
                  std::to_string(d.sbo));
}

}  // namespace detail
}  // namespace tcsim
