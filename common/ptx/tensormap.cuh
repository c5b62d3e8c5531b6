// ptx/tensormap.cuh — tensor maps rewritten on the device: tensormap.replace (PTX ISA §9.7.9.26),
// the tensormap-proxy fences that order the rewrite before a TMA copy reads the map (§9.7.13.4),
// and prefetch.tensormap (§9.7.9.15).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin
// (common/sim/tensormap_replace.cpp).
//
// tensormap.replace needs sm_90a or sm_100f (and later families); the fences and the prefetch
// need sm_90. A rewritten map in global memory becomes visible to cp.async.bulk.tensor only
// through a release by the writer (fence.proxy.tensormap::generic.release.<scope>) and an acquire
// on that map by the copying thread (fence.proxy.tensormap::generic.acquire.<scope> [map], 128)
// ordered after it; a map the host wrote before the launch needs the acquire too (§8.9.4).
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// The .scope of a tensormap proxy fence: the threads that must see the ordering.
enum class TensormapScope : uint32_t { kCta, kCluster, kGpu, kSys };

#if defined(TCG_SIM)
#define TCG_TMAP_REPLACE(shared, addr, field, ord, v) \
  ::tcsim::tensormap_replace(shared, uint64_t(addr), ::tcsim::TmapField::field, ord, uint64_t(v), TCG_AT)
#endif

// ============================================================== tensormap.replace (§9.7.9.26)
// .global forms: `map` is a generic pointer to a 128-byte-aligned CUtensorMap in global memory.
// .shared::cta forms: `smem_map` is the shared::cta address of a 128-byte-aligned copy.

// The tensor's global address (16-byte aligned, as cuTensorMapEncodeTiled requires).
TCG_DEV void tensormap_replace_global_address(CUtensorMap* map, const void* base TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kGlobalAddress, 0, reinterpret_cast<uintptr_t>(base));
#else
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(__cvta_generic_to_global(map)),
               "l"(base)
               : "memory");
#endif
}
TCG_DEV void tensormap_replace_global_address(uint32_t smem_map, const void* base TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(true, smem_map, kGlobalAddress, 0, reinterpret_cast<uintptr_t>(base));
#else
  asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(smem_map), "l"(base)
               : "memory");
#endif
}

// The rank, zero-based: the new value is the rank minus one (§9.7.9.26).
TCG_DEV void tensormap_replace_rank(CUtensorMap* map, uint32_t rank_minus_one TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kRank, 0, rank_minus_one);
#else
  asm volatile("tensormap.replace.tile.rank.global.b1024.b32 [%0], %1;" ::"l"(__cvta_generic_to_global(map)),
               "r"(rank_minus_one)
               : "memory");
#endif
}

// The box extent of dimension Ord (1..256 elements).
template <int Ord>
TCG_DEV void tensormap_replace_box_dim(CUtensorMap* map, uint32_t extent TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kBoxDim, Ord, extent);
#else
  asm volatile("tensormap.replace.tile.box_dim.global.b1024.b32 [%0], %1, %2;" ::"l"(__cvta_generic_to_global(map)),
               "n"(Ord), "r"(extent)
               : "memory");
#endif
}
template <int Ord>
TCG_DEV void tensormap_replace_box_dim(uint32_t smem_map, uint32_t extent TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(true, smem_map, kBoxDim, Ord, extent);
#else
  asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], %1, %2;" ::"r"(smem_map), "n"(Ord),
               "r"(extent)
               : "memory");
#endif
}

// The tensor's extent in dimension Ord (elements, at least 1).
template <int Ord>
TCG_DEV void tensormap_replace_global_dim(CUtensorMap* map, uint32_t extent TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kGlobalDim, Ord, extent);
#else
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], %1, %2;" ::"l"(__cvta_generic_to_global(map)),
               "n"(Ord), "r"(extent)
               : "memory");
#endif
}
template <int Ord>
TCG_DEV void tensormap_replace_global_dim(uint32_t smem_map, uint32_t extent TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(true, smem_map, kGlobalDim, Ord, extent);
#else
  asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], %1, %2;" ::"r"(smem_map), "n"(Ord),
               "r"(extent)
               : "memory");
#endif
}

// The byte stride of dimension Ord + 1 (cuTensorMapEncodeTiled's globalStrides[Ord]): a multiple
// of 16 below 2^40.
template <int Ord>
TCG_DEV void tensormap_replace_global_stride(CUtensorMap* map, uint64_t stride_bytes TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kGlobalStride, Ord, stride_bytes);
#else
  asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], %1, %2;" ::"l"(
                   __cvta_generic_to_global(map)),
               "n"(Ord), "l"(stride_bytes)
               : "memory");
#endif
}
template <int Ord>
TCG_DEV void tensormap_replace_global_stride(uint32_t smem_map, uint64_t stride_bytes TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(true, smem_map, kGlobalStride, Ord, stride_bytes);
#else
  asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], %1, %2;" ::"r"(smem_map), "n"(Ord),
               "l"(stride_bytes)
               : "memory");
#endif
}

// The traversal stride of dimension Ord (1..8 elements).
template <int Ord>
TCG_DEV void tensormap_replace_element_stride(CUtensorMap* map, uint32_t stride TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kElementStride, Ord, stride);
#else
  asm volatile("tensormap.replace.tile.element_stride.global.b1024.b32 [%0], %1, %2;" ::"l"(
                   __cvta_generic_to_global(map)),
               "n"(Ord), "r"(stride)
               : "memory");
#endif
}

// The enumerated fields take an immediate (§9.7.9.26, Table 33 gives the values): .elemtype 0..15
// (PTX's numbering, not CUtensorMapDataType's), .interleave_layout 0..2, .swizzle_mode 0..4,
// .swizzle_atomicity 0..3 (sm_100 and later), .fill_mode 0..1.
template <uint32_t V>
TCG_DEV void tensormap_replace_elemtype(CUtensorMap* map TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kElemtype, 0, V);
#else
  asm volatile("tensormap.replace.tile.elemtype.global.b1024.b32 [%0], %1;" ::"l"(__cvta_generic_to_global(map)),
               "n"(V)
               : "memory");
#endif
}
template <uint32_t V>
TCG_DEV void tensormap_replace_interleave_layout(CUtensorMap* map TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kInterleaveLayout, 0, V);
#else
  asm volatile("tensormap.replace.tile.interleave_layout.global.b1024.b32 [%0], %1;" ::"l"(
                   __cvta_generic_to_global(map)),
               "n"(V)
               : "memory");
#endif
}
template <uint32_t V>
TCG_DEV void tensormap_replace_swizzle_mode(CUtensorMap* map TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kSwizzleMode, 0, V);
#else
  asm volatile("tensormap.replace.tile.swizzle_mode.global.b1024.b32 [%0], %1;" ::"l"(__cvta_generic_to_global(map)),
               "n"(V)
               : "memory");
#endif
}
template <uint32_t V>
TCG_DEV void tensormap_replace_swizzle_atomicity(CUtensorMap* map TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kSwizzleAtomicity, 0, V);
#else
  asm volatile("tensormap.replace.tile.swizzle_atomicity.global.b1024.b32 [%0], %1;" ::"l"(
                   __cvta_generic_to_global(map)),
               "n"(V)
               : "memory");
#endif
}
template <uint32_t V>
TCG_DEV void tensormap_replace_fill_mode(CUtensorMap* map TCG_LOC) {
#if defined(TCG_SIM)
  TCG_TMAP_REPLACE(false, map, kFillMode, 0, V);
#else
  asm volatile("tensormap.replace.tile.fill_mode.global.b1024.b32 [%0], %1;" ::"l"(__cvta_generic_to_global(map)),
               "n"(V)
               : "memory");
#endif
}

// ============================================================== proxy fences (§9.7.13.4)

// fence.proxy.tensormap::generic.release.<scope>: this thread's earlier generic-proxy writes
// (tensormap.replace included, a weak write of the whole object) are released towards the
// tensormap proxy of the threads in `S`.
template <TensormapScope S>
TCG_DEV void fence_proxy_tensormap_release(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::fence_proxy_tensormap_release(::tcsim::FenceScope(uint32_t(S)), TCG_AT);
#else
  if constexpr (S == TensormapScope::kCta) asm volatile("fence.proxy.tensormap::generic.release.cta;" ::: "memory");
  else if constexpr (S == TensormapScope::kCluster)
    asm volatile("fence.proxy.tensormap::generic.release.cluster;" ::: "memory");
  else if constexpr (S == TensormapScope::kGpu) asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
  else asm volatile("fence.proxy.tensormap::generic.release.sys;" ::: "memory");
#endif
}

// fence.proxy.tensormap::generic.acquire.<scope> [map], 128: this thread's later TMA copies
// through `map` (a generic address of global memory; 128 is the only size) see what a release
// ordered before the fence published.
template <TensormapScope S>
TCG_DEV void fence_proxy_tensormap_acquire(const CUtensorMap* map TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::fence_proxy_tensormap_acquire(::tcsim::FenceScope(uint32_t(S)), map, 128, TCG_AT);
#else
  if constexpr (S == TensormapScope::kCta)
    asm volatile("fence.proxy.tensormap::generic.acquire.cta [%0], 128;" ::"l"(map) : "memory");
  else if constexpr (S == TensormapScope::kCluster)
    asm volatile("fence.proxy.tensormap::generic.acquire.cluster [%0], 128;" ::"l"(map) : "memory");
  else if constexpr (S == TensormapScope::kGpu)
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
  else asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(map) : "memory");
#endif
}

// ============================================================== prefetch.tensormap (§9.7.9.15)
// Brings the tensor map at `map` (generic address of a kernel parameter, constant or global
// memory) into the TMA unit's cache ahead of the first copy through it; no effect on results.
TCG_DEV void prefetch_tensormap(const CUtensorMap* map TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::prefetch_tensormap(map, TCG_AT);
#else
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
#endif
}

#if defined(TCG_SIM)
#undef TCG_TMAP_REPLACE
#endif

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
