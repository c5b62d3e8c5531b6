// provenance.h — what wrote each TMEM cell and each piece of shared memory (provenance.cpp):
// the checks of mistakes of meaning, which on hardware end in wrong numbers, named at the
// instruction instead. internal.h includes it (kernels and the harness never do).
#pragma once
#include <cstdint>
#include <vector>

#include "../descriptors.h"
#include "sim.h"
#include "tmem_hazards.h"

namespace tcsim {
namespace detail {

struct Cta;

// A tcgen05.mma or tcgen05.cp that wrote TMEM cells of an allocation (one record per distinct
// instruction, place and cells), for the report of a read of cells none of them wrote.
struct TmemWriteSite {
  SrcLoc at{};
  const char* what = "";
  uint32_t col0 = 0, ncols = 0;  // absolute columns
  uint64_t lanes[2] = {0, 0};
  uint32_t m = 0, n = 0;         // MMA: the instruction descriptor's shape (0 for a copy)
};

// The TMA load that last wrote a 128-byte piece of shared memory: its place and what the tensor
// map says about the bytes' layout (swizzle span 0/32/64/128, bytes per box row, box rows).
struct TmaWriteSite {
  SrcLoc at{};
  uint32_t swizzle_span = 0, row_bytes = 0, rows = 0;
};

// tcgen05.alloc gave `cta` the columns [col, col + ncols): no cell of them is written yet.
void prov_tmem_allocated(Cta& cta, uint32_t col, uint32_t ncols);
// A tcgen05.mma / tcgen05.cp issued now writes the cells `u` of `cta` (m, n: the MMA's shape).
void prov_tmem_written(Cta& cta, const TmemUse& u, const char* what, SrcLoc at, uint32_t m, uint32_t n);
// A tcgen05.ld (what = its name) or an MMA with enable-input-d (reads its D) is issued: every cell
// of `u` must have been written by an MMA or copy issued since the allocation; else a report with
// the rule, the cells relative to the allocation and what was written.
void prov_check_tmem_read(Cta& cta, const TmemUse& u, const char* what, bool mma_accumulate);
// A TMA load issued now writes `bytes` at shared::cta offset `off` (with the rank bits) of `cta`.
void prov_tma_wrote(Cta& cta, uint32_t off, uint32_t bytes, uint32_t swizzle_span, uint32_t row_bytes, uint32_t rows,
                    SrcLoc at);
// An MMA issued now reads operand `operand` ("A"/"B") of `cta` through descriptor `d`: the layout
// it names must be the one the TMA that wrote those bytes left (swizzle mode; for a K-major
// operand whose box rows are one swizzle span, the 8-row stride SBO).
void prov_check_operand(Cta& cta, const tcg::SmemDesc& d, bool mn_major, const char* operand);

}  // namespace detail
}  // namespace tcsim
