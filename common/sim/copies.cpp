// copies.cpp — asynchronous copies from global to shared memory: TMA tensor tiles (2-D/3-D, with
// swizzle, multicast and the 2-CTA form) and 1-D bulk copies (plain and multicast).
//
// Models (PTX ISA §9.7.9.25.5.2 cp.async.bulk.tensor, §9.7.9.25.4.1 cp.async.bulk, §5.5 tensor
// tiles, PTX ISA §5.5.3): a box of the tensor map is read at element coordinates {c0 (innermost),
// c1, c2}, laid out densely (dimension 0 fastest), swizzled by the map's mode on the absolute
// shared address (§5.5.7), out-of-bounds elements written as zero and counted in the bytes; when
// the copy lands, complete_tx(box bytes) on its mbarrier. Copies complete in any order, at a point
// the seed picks. Destinations are shared::cluster addresses:
//  * plain (.cta_group::1): the mbarrier must be in the destination's CTA;
//  * .cta_group::2: the mbarrier may be in the destination CTA or its pair peer (rank ^ 1), so
//    both CTAs of a pair can signal the leader's barrier;
//  * .multicast::cluster with a 16-bit CTA mask: the box lands at the same offset in every
//    masked CTA, each delivery a separate completion; with .cta_group::1 each destination's own
//    mbarrier at the barrier's offset receives the bytes, with .cta_group::2 the one in the
//    destination's pair whose parity matches the barrier operand's CTA.
// Checked: tensor-map origin and rank (and, for a map rewritten on the device or kept in global
// memory, tensormap_replace.cpp's rules), destination alignment (128 B; 8 x the swizzle span for
// swizzled maps), bounds, writes over live mbarriers, the mask, the barrier's existence at the
// offset in the CTA that receives the bytes, and that its init was published to the async proxy;
// the global bytes read (a bulk copy's source, a box's in-bounds rows) lie inside one registered
// allocation (global_memory.cpp).
#include <algorithm>
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {

// A copy (TMA or bulk) has written its bytes: count them and complete_tx on its mbarrier.
void copy_landed(Cta& cta, uint32_t bar, uint32_t bytes, const Origin& by, Clock::time_point t0) {
  g_stats.tma_copies++;
  g_stats.tma_bytes += bytes;
  Mbar& b = cta.mbars.find(bar & kOffsetMask)->second;
  mbar_note_async(b, by);  // the CTA's exit must be ordered after this (launch.cpp)
  mbar_add_tx(b, bar, -int64_t(bytes), by);
  mbar_check_phase(b, bar, by);
  g_stats.copy_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

void run_tma(Cta& cta, const SimMap& m, uint32_t dst, std::array<int32_t, 3> c, Cta& bar_cta, uint32_t bar,
             const Origin& by) {
  const auto t0 = Clock::now();
  if (g_options.skip_math) {  // timing only: the bytes are counted, not moved
    const uint32_t n = m.box[0] * m.elem_bytes * (m.rank > 1 ? m.box[1] : 1) * (m.rank > 2 ? m.box[2] : 1);
    return copy_landed(bar_cta, bar, n, by, t0);
  }
  const uint32_t eb = m.elem_bytes;
  const uint32_t row_bytes = m.box[0] * eb;
  std::vector<uint8_t> row(row_bytes);
  const uint32_t n1 = m.rank > 1 ? m.box[1] : 1, n2 = m.rank > 2 ? m.box[2] : 1;
  const uint8_t* gbase = reinterpret_cast<const uint8_t*>(m.base);
  for (uint32_t i2 = 0; i2 < n2; ++i2)
    for (uint32_t i1 = 0; i1 < n1; ++i1) {
      const int64_t g1 = int64_t(c[1]) + i1, g2 = int64_t(c[2]) + i2;
      const bool row_in = (m.rank < 2 || (g1 >= 0 && g1 < int64_t(m.dims[1]))) &&
                          (m.rank < 3 || (g2 >= 0 && g2 < int64_t(m.dims[2])));
      for (uint32_t i0 = 0; i0 < m.box[0]; ++i0) {
        const int64_t g0 = int64_t(c[0]) + i0;
        uint8_t* out = row.data() + size_t(i0) * eb;
        if (row_in && g0 >= 0 && g0 < int64_t(m.dims[0])) {
          const uint8_t* src = gbase + g0 * eb + (m.rank > 1 ? g1 * int64_t(m.strides[0]) : 0) +
                               (m.rank > 2 ? g2 * int64_t(m.strides[1]) : 0);
          memcpy(out, src, eb);
        } else {
          memset(out, 0, eb);  // out-of-bounds elements are filled with zeros (OOB_FILL_NONE)
        }
      }
      const uint32_t lin = (i1 + n1 * i2) * row_bytes;  // box laid out densely, dim 0 fastest
      for (uint32_t ch = 0; ch < row_bytes; ch += 16) {
        const uint32_t a = m.swizzle_span ? tcg::swizzle_addr(dst + lin + ch, m.swizzle_span) : dst + lin + ch;
        memcpy(cta.smem + (a & kOffsetMask) - kSmemBase, row.data() + ch, 16);
      }
    }
  copy_landed(bar_cta, bar, row_bytes * n1 * n2, by, t0);
}

// Where a copy that lands in `dst_cta` signals: checks the barrier and returns its CTA.
Cta& signal_cta(Cta& dst_cta, uint32_t bar, const TmaMode& mode, uint32_t bar_rank, const char* what) {
  Cluster& cl = *dst_cta.cluster;
  uint32_t rank = bar_rank;
  if (mode.multicast)
    rank = mode.cta_group == 2 ? ((dst_cta.rank & ~1u) | (bar_rank & 1u)) : dst_cta.rank;
  if (rank >= cl.ctas.size())
    fail_here("cta_group::2 outside a CTA pair", std::string(what) + " signals CTA rank " + std::to_string(rank) +
                                                     ", which the cluster does not have");
  Cta& bc = *cl.ctas[rank];
  if (!mode.multicast) {
    const bool ok = mode.cta_group == 2 ? (rank == dst_cta.rank || rank == (dst_cta.rank ^ 1u)) : rank == dst_cta.rank;
    if (!ok)
      fail_here("TMA mbarrier in the wrong CTA",
                std::string(what) + " writes to " + cta_name(dst_cta) + " but signals the mbarrier at " + hex(bar) +
                    " in CTA rank " + std::to_string(rank) +
                    (mode.cta_group == 2 ? "; with .cta_group::2 the mbarrier must be in the destination CTA or its pair peer"
                                         : "; without .cta_group::2 the mbarrier must be in the destination CTA") +
                    " (PTX ISA §9.7.9.25.5.2)");
  }
  return bc;
}

// The CTAs a 16-bit .multicast::cluster mask names (bit i = cluster rank i): none outside the
// cluster, at least one.
std::vector<Cta*> mask_ctas(Cluster& cl, uint16_t mask, const char* what) {
  if (mask == 0) fail_here("bad multicast mask", std::string(what) + " with an empty CTA mask");
  std::vector<Cta*> dests;
  for (uint32_t r = 0; r < 16; ++r)
    if (mask >> r & 1u) {
      if (r >= cl.ctas.size())
        fail_here("multicast mask names a CTA outside the cluster",
                  std::string(what) + " with CTA mask " + hex(mask) + ": bit " + std::to_string(r) +
                      " is set but the cluster has " + std::to_string(cl.ctas.size()) + " CTA(s)");
      dests.push_back(cl.ctas[r]);
    }
  return dests;
}

}  // namespace

namespace detail {
// Those bytes must lie in the allocation the map was made for (global_memory.cpp): a box past the
// tensor's edge is fine, a map whose dims or strides exceed its buffer is not. One check of the
// span from the lowest to the highest byte covers every row when it passes.
void check_box_in_allocation(const std::vector<std::pair<uint64_t, uint32_t>>& rows, const char* what) {
  if (rows.empty()) return;
  uint64_t first = rows.front().first, last = first;
  for (const auto& r : rows) first = std::min(first, r.first), last = std::max(last, r.first + r.second);
  if (global_range_ok(reinterpret_cast<const void*>(first), last - first)) return;
  for (const auto& r : rows)  // fails at the first row outside its allocation
    check_global_range(reinterpret_cast<const void*>(r.first), r.second, what);
}

TensorMapInfo decode_tensor_map(const CUtensorMap* map, int rank, const char* what) {
  SimMap m;
  memcpy(&m, map, sizeof m);
  if (m.magic != kMapMagic)
    fail_here("bad tensor map", std::string(what) + " with a tensor map that encode_tensor_map() did not produce");
  if (int(m.rank) != rank)
    fail_here("bad tensor map", std::string(what) + " (" + std::to_string(rank) + "d) with a rank-" +
                                    std::to_string(m.rank) + " tensor map");
  tensormap_use(map, m, what, /*async_read=*/false);  // a TMA store's map (tma_store.cpp)
  TensorMapInfo i{m.rank, m.elem_bytes, m.swizzle_span, m.base, {m.dims[0], m.dims[1], m.dims[2]},
                  {m.strides[0], m.strides[1]}, {m.box[0], m.box[1], m.box[2]}};
  return i;
}
}  // namespace detail

CUtensorMap encode_tensor_map(const tcg::TiledMap& m) {
  const std::string err = tcg::validate(m);
  if (!err.empty()) throw std::runtime_error(err);
  SimMap s{};
  s.magic = kMapMagic;
  s.rank = m.rank;
  s.elem_bytes = tcg::tma_dtype_bytes(m.dtype);
  s.swizzle_span = tcg::tma_swizzle_span(m.swizzle);
  s.base = reinterpret_cast<uint64_t>(m.base);
  for (int i = 0; i < 3; ++i) s.dims[i] = m.dims[i], s.box[i] = m.box[i];
  for (int i = 0; i < 2; ++i) s.strides[i] = m.strides[i];
  using D = tcg::TmaDtype;
  s.elemtype = m.dtype == D::kU8 ? 0 : m.dtype == D::kF16 ? 6 : m.dtype == D::kF32 ? 7 : 10;  // PTX ISA Table 33
  for (uint32_t& e : s.elem_strides) e = 1;
  s.swizzle_mode = uint32_t(m.swizzle);  // the same numbering as Table 33's .swizzle_mode
  CUtensorMap out{};
  memcpy(&out, &s, sizeof s);
  return out;
}

void tma_load(uint32_t dst, const CUtensorMap* map, int rank, const int32_t* coords, uint32_t bar, TmaMode mode,
              SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& self = *f.cta;
  Cluster& cl = *self.cluster;
  const char* what = mode.multicast ? "cp.async.bulk.tensor.multicast" : "cp.async.bulk.tensor";
  SimMap m;
  memcpy(&m, map, sizeof m);
  if (m.magic != kMapMagic)
    fail_here("bad tensor map", "cp.async.bulk.tensor with a tensor map that encode_tensor_map() did not produce");
  if (int(m.rank) != rank)
    fail_here("bad tensor map", "cp.async.bulk.tensor." + std::to_string(rank) + "d with a rank-" +
                                    std::to_string(m.rank) + " tensor map");
  const std::shared_ptr<bool> map_read = tensormap_use(map, m, what);  // tensormap_replace.cpp
  const uint32_t bytes = m.box[0] * m.elem_bytes * (rank > 1 ? m.box[1] : 1) * (rank > 2 ? m.box[2] : 1);
  const uint32_t align = m.swizzle_span ? 8 * m.swizzle_span : 128;
  if ((dst & kOffsetMask) % align != 0)
    fail_here(m.swizzle_span ? "TMA destination not aligned to its swizzle repeat" : "misaligned TMA destination",
              "cp.async.bulk.tensor destination " + hex(dst) + " must be " + std::to_string(align) +
                  "-byte aligned" + (m.swizzle_span ? " (the swizzle pattern repeats every 8 rows of the span)" : ""));
  // The destinations: one CTA, or every CTA of the mask at the same offset.
  std::vector<Cta*> dests;
  if (mode.multicast) dests = mask_ctas(cl, mode.cta_mask, what);
  else dests.push_back(&cluster_cta(dst, what));
  const uint32_t bar_rank = bar >> kRankShift;
  if (bar_rank >= cl.ctas.size())
    fail_here("shared::cluster address outside the cluster",
              std::string(what) + " completion mbarrier " + hex(bar) + " names CTA rank " + std::to_string(bar_rank));
  std::array<int32_t, 3> c{0, 0, 0};
  for (int i = 0; i < rank; ++i) c[size_t(i)] = coords[i];
  const std::vector<std::pair<uint64_t, uint32_t>> segments = box_segments(m, c.data(), rank);
  check_box_in_allocation(segments, "cp.async.bulk.tensor (a row of the box, read through the tensor map)");
  const Origin by{"the TMA copy", false, &f, at};
  // Timing model: the box is read from global memory once, and the ISSUING SM's TMA unit pays for
  // it once (H100: rank 0 multicasting every box to 2 or 4 CTAs takes 1.04-1.07x the time of
  // loading them for itself alone); each other destination's TMA unit is busy a share of the box
  // (H100: CTAs taking turns gain less than 1/C; docs/timing_model.md, "Cluster mechanisms").
  double t_done = 0;
  if (timed()) {
    TmaRows rows;
    rows.bytes = bytes;
    rows.segments = segments;
    t_done = model_copy(self, rows);
    if (trace_cta(self))
      trace_async(self, "TMA", "TMA " + std::to_string(bytes / 1024) + " KiB", tcg::trace::kCatTma, f.t, t_done);
  }
  for (Cta* d : dests) {
    const uint32_t d_dst = (d->rank << kRankShift) | (dst & kOffsetMask);
    check_target_alive(*d, what);
    smem_ref(*d, d_dst, bytes, "cp.async.bulk.tensor destination");
    check_no_mbarrier_in(*d, d_dst, bytes, "cp.async.bulk.tensor destination");
    // The layout the bytes will have, for the MMAs that read them (provenance.cpp).
    prov_tma_wrote(*d, d_dst, bytes, m.swizzle_span, m.box[0] * m.elem_bytes, (rank > 1 ? m.box[1] : 1) * (rank > 2 ? m.box[2] : 1), at);
    Cta& bc = signal_cta(*d, bar, mode, bar_rank, what);
    const uint32_t d_bar = (bc.rank << kRankShift) | (bar & kOffsetMask);
    const Mbar& b = mbar_at_cluster(d_bar, "cp.async.bulk.tensor completion mbarrier");
    check_mbar_published(b, d_bar, /*async_proxy=*/true, /*remote=*/&bc != &self, what);
    // The copy, not the issuing thread, reaches into the other CTA: a CTA whose own barrier
    // receives the bytes is checked at exit against their landing (in flight, or landed in a
    // phase none of its waits saw: launch.cpp), so once it has waited for the copy it may exit
    // without a cluster barrier. Bytes that land in a CTA whose pair peer's barrier counts them
    // (.cta_group::2) are not on any of its barriers: for that CTA the issue must be ordered
    // before its exit, as for any other remote access.
    if (&bc != d) note_remote_access(*d, what);
    Cta* dp = d;
    Cta* bp = &bc;
    // Its destination, until a wait has seen its bytes land (async_smem_writes.cpp).
    auto w = copy_write_issued(*d, d_dst, bytes, bc, d_bar, mode.multicast ? "multicast TMA copy" : "TMA copy",
                               mode.multicast);
    AsyncOp op{[dp, m, d_dst, c, bp, d_bar, by, w, map_read] {
                 if (map_read) *map_read = true;  // the map was read before the first box lands
                 copy_write_landed(*w);
                 run_tma(*dp, m, d_dst, c, *bp, d_bar, by);
               },
               (1u << d->rank) | (1u << bc.rank), "a TMA copy", &f, at};
    op.t = timed() && mode.multicast && d != &self ? model_multicast_receive(*d, bytes, t_done) : t_done;
    push_async(std::move(op));
  }
}

void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  if (bytes == 0 || bytes % 16 != 0)
    fail_here("bad bulk copy", "cp.async.bulk of " + std::to_string(bytes) + " bytes; the size must be a non-zero multiple of 16");
  if ((dst & kOffsetMask) % 16 != 0 || reinterpret_cast<uintptr_t>(src) % 16 != 0)
    fail_here("misaligned bulk copy", "cp.async.bulk needs 16-byte aligned addresses; destination " + hex(dst) +
                                          ", source " + hex(reinterpret_cast<uintptr_t>(src)));
  check_global_range(src, bytes, "cp.async.bulk source");
  Cta& cta = cluster_cta(dst, "cp.async.bulk destination");
  check_target_alive(cta, "cp.async.bulk");
  smem_ref(cta, dst, bytes, "cp.async.bulk destination");
  check_no_mbarrier_in(cta, dst, bytes, "cp.async.bulk destination");
  if ((bar >> kRankShift) != cta.rank)
    fail_here("TMA mbarrier in the wrong CTA", "cp.async.bulk writes to " + cta_name(cta) + " but signals the mbarrier at " +
                                                   hex(bar) + " in another CTA; it must be in the destination CTA");
  const Mbar& b = mbar_at_cluster(bar, "cp.async.bulk completion mbarrier");
  check_mbar_published(b, bar, /*async_proxy=*/true, /*remote=*/&cta != f.cta, "cp.async.bulk");
  note_remote_access(cta, "cp.async.bulk");
  const Origin by{"the bulk copy", false, &f, at};
  Cta* cp = &cta;
  auto w = copy_write_issued(cta, dst, bytes, cta, bar, "bulk copy", false);  // async_smem_writes.cpp
  AsyncOp op{[cp, dst, src, bytes, bar, by, w] {
               copy_write_landed(*w);
               const auto t0 = Clock::now();
               memcpy(cp->smem + (dst & kOffsetMask) - kSmemBase, src, bytes);  // small: kept in timing-only runs
               copy_landed(*cp, bar, bytes, by, t0);
             },
             1u << cta.rank, "a bulk copy", &f, at};
  if (timed()) {
    TmaRows rows;
    rows.bytes = bytes;
    rows.segments.emplace_back(reinterpret_cast<uint64_t>(src), bytes);
    op.t = model_copy(cta, rows);
    if (trace_cta(*f.cta))
      trace_async(*f.cta, "TMA", "bulk " + std::to_string(bytes) + " B", tcg::trace::kCatTma, f.t, op.t);
  }
  push_async(std::move(op));
}

// cp.async.bulk ... .multicast::cluster (§9.7.9.25.4.1): the same bytes land at offset `dst` in
// every CTA of the mask, each delivery completing the mbarrier at offset `bar` in its own CTA.
// The rules of the plain form per destination (alignment, size, bounds, no live mbarrier under
// the bytes, a published mbarrier at that offset, a live CTA), plus the mask's. Timing model: as
// for the tensor form, the issuing SM's TMA unit pays once, each other destination's a share.
void bulk_load_multicast(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, uint16_t cta_mask, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& self = *f.cta;
  const char* what = "cp.async.bulk.multicast";
  if (bytes == 0 || bytes % 16 != 0)
    fail_here("bad bulk copy", std::string(what) + " of " + std::to_string(bytes) +
                                   " bytes; the size must be a non-zero multiple of 16");
  if ((dst & kOffsetMask) % 16 != 0 || reinterpret_cast<uintptr_t>(src) % 16 != 0)
    fail_here("misaligned bulk copy", std::string(what) + " needs 16-byte aligned addresses; destination " + hex(dst) +
                                          ", source " + hex(reinterpret_cast<uintptr_t>(src)));
  check_global_range(src, bytes, "cp.async.bulk.multicast source");
  const std::vector<Cta*> dests = mask_ctas(*self.cluster, cta_mask, what);
  // The operands name offsets; a shared::cluster rank in them must still be a CTA of the cluster.
  for (const uint32_t a : {dst, bar})
    if ((a >> kRankShift) >= self.cluster->ctas.size())
      fail_here("shared::cluster address outside the cluster",
                std::string(what) + " operand " + hex(a) + " names CTA rank " + std::to_string(a >> kRankShift));
  const Origin by{"the multicast bulk copy", false, &f, at};
  double t_done = 0;
  if (timed()) {
    TmaRows rows;
    rows.bytes = bytes;
    rows.segments.emplace_back(reinterpret_cast<uint64_t>(src), bytes);
    t_done = model_copy(self, rows);
    if (trace_cta(self))
      trace_async(self, "TMA", "bulk " + std::to_string(bytes) + " B multicast", tcg::trace::kCatTma, f.t, t_done);
  }
  for (Cta* d : dests) {
    const uint32_t d_dst = (d->rank << kRankShift) | (dst & kOffsetMask);
    const uint32_t d_bar = (d->rank << kRankShift) | (bar & kOffsetMask);
    check_target_alive(*d, what);
    smem_ref(*d, d_dst, bytes, "cp.async.bulk.multicast destination");
    check_no_mbarrier_in(*d, d_dst, bytes, "cp.async.bulk.multicast destination");
    const Mbar& b = mbar_at_cluster(d_bar, "cp.async.bulk.multicast completion mbarrier");
    check_mbar_published(b, d_bar, /*async_proxy=*/true, /*remote=*/d != &self, what);  // exit: as tma_load
    Cta* cp = d;
    auto w = copy_write_issued(*d, d_dst, bytes, *d, d_bar, "multicast bulk copy", true);  // async_smem_writes.cpp
    AsyncOp op{[cp, d_dst, src, bytes, d_bar, by, w] {
                 copy_write_landed(*w);
                 const auto t0 = Clock::now();
                 memcpy(cp->smem + (d_dst & kOffsetMask) - kSmemBase, src, bytes);
                 copy_landed(*cp, d_bar, bytes, by, t0);
               },
               1u << d->rank, "a bulk copy", &f, at};
    op.t = timed() && d != &self ? model_multicast_receive(*d, bytes, t_done) : t_done;
    push_async(std::move(op));
  }
}

}  // namespace tcsim
