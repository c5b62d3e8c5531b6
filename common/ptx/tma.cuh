// ptx/tma.cuh — asynchronous copies global -> shared: TMA tensor tiles (plain, multicast, 2-CTA)
// and the 1-D bulk copy (PTX ISA §9.7.9.25).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin (common/sim/).
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// ============================================================== TMA (§9.7.9.25.5.2)

// cp.async.bulk.tensor.{2,3}d global -> shared: copy one box of the tensor map at element
// coordinates {c0 (innermost), c1, c2} to `dst`, then complete_tx(box bytes) on `bar`.
// Out-of-bounds elements are written as zeros and still count towards the bytes.
TCG_DEV void tma_load_2d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[2] = {c0, c1};
  ::tcsim::tma_load(dst, map, 2, c, bar, ::tcsim::TmaMode{}, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
#endif
}

TCG_DEV void tma_load_3d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2,
                         uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[3] = {c0, c1, c2};
  ::tcsim::tma_load(dst, map, 3, c, bar, ::tcsim::TmaMode{}, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
#endif
}

// The same with .multicast::cluster (§9.7.9.25.5.2): the box is written at offset `dst` in the
// shared memory of every CTA whose bit is set in `cta_mask` (bit i = cluster rank i), and each of
// those CTAs' mbarrier at offset `bar` receives complete_tx of the box bytes.
TCG_DEV void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar,
                                   uint16_t cta_mask TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[2] = {c0, c1};
  ::tcsim::tma_load(dst, map, 2, c, bar, ::tcsim::TmaMode{1, true, cta_mask}, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
      : "memory");
#endif
}

TCG_DEV void tma_load_3d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2,
                                   uint32_t bar, uint16_t cta_mask TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[3] = {c0, c1, c2};
  ::tcsim::tma_load(dst, map, 3, c, bar, ::tcsim::TmaMode{1, true, cta_mask}, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(cta_mask)
      : "memory");
#endif
}

// The .cta_group::2 form (§9.7.9.25.5.2): `bar` may name the mbarrier of the destination CTA's
// pair peer instead of its own, so both CTAs of a pair can signal one barrier in the leader
// (even) CTA: pass the leader's barrier, mapa_shared_cluster(bar, rank & ~1).
TCG_DEV void tma_load_2d_2sm(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[2] = {c0, c1};
  ::tcsim::tma_load(dst, map, 2, c, bar, ::tcsim::TmaMode{2, false, 0}, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
#endif
}

// The 3-D box of tma_load_3d with .cta_group::2 (the barrier may be the pair peer's), as above.
TCG_DEV void tma_load_3d_2sm(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2,
                             uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[3] = {c0, c1, c2};
  ::tcsim::tma_load(dst, map, 3, c, bar, ::tcsim::TmaMode{2, false, 0}, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
#endif
}

// Both: .cta_group::2 with .multicast::cluster (§9.7.9.25.5.2). The box lands at offset `dst` in
// every CTA of `cta_mask`; each destination signals the mbarrier at offset `bar` in the CTA of its
// own pair whose parity is that of `bar`'s CTA: pass the leader's (even) barrier, and every
// destination's bytes count on its pair's leader's barrier.
TCG_DEV void tma_load_2d_2sm_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar,
                                       uint16_t cta_mask TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[2] = {c0, c1};
  ::tcsim::tma_load(dst, map, 2, c, bar, ::tcsim::TmaMode{2, true, cta_mask}, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
      : "memory");
#endif
}

// cp.async.bulk global -> shared (§9.7.9.25.4.1): copy `bytes` contiguous bytes (a multiple of
// 16; both addresses 16-byte aligned), then complete_tx(bytes) on `bar`. No tensor map: the
// 1-D form, used for data that is already laid out as shared memory wants it.
TCG_DEV void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::bulk_load(dst, src, bytes, bar, TCG_AT);
#else
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}

// The same with .multicast::cluster (§9.7.9.25.4.1): the bytes land at offset `dst` in every CTA
// of `cta_mask`, and each one's mbarrier at offset `bar` receives complete_tx(bytes).
TCG_DEV void bulk_load_multicast(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar,
                                 uint16_t cta_mask TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::bulk_load_multicast(dst, src, bytes, bar, cta_mask, TCG_AT);
#else
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(cta_mask)
      : "memory");
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
