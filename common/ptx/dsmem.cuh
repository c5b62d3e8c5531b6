// ptx/dsmem.cuh — distributed shared memory beyond the 32-bit ld/st of sync.cuh: 16-byte remote
// loads and stores, and the bulk copy from this CTA's shared memory into another CTA's
// (PTX ISA §9.7.9.8, §9.7.9.10, §9.7.9.25.4.1). Addresses of other CTAs come from
// mapa_shared_cluster (sync.cuh); every CTA touched must still be running (a cluster barrier before
// a CTA exits keeps it alive for its peers).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin
// (common/sim/dsmem.cpp). All of them exist on sm_90, so tests/gpu/micro.cu times them on an H100.
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// ld.shared::cluster.v4.b32 (§9.7.9.8): 16 bytes at a shared::cluster address (16-byte aligned,
// §5.4.2), possibly in another CTA of the cluster.
TCG_DEV void ld_shared_cluster_v4(uint32_t addr, uint32_t out[4] TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::ld_shared_cluster_v4(addr, out, TCG_AT);
#else
  asm volatile("ld.shared::cluster.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
               : "r"(addr)
               : "memory");
#endif
}

// st.shared::cluster.v4.b32 (§9.7.9.10): 16 bytes to a shared::cluster address (16-byte aligned).
TCG_DEV void st_shared_cluster_v4(uint32_t addr, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3 TCG_LOC) {
#if defined(TCG_SIM)
  const uint32_t v[4] = {v0, v1, v2, v3};
  ::tcsim::st_shared_cluster_v4(addr, v, TCG_AT);
#else
  asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v0), "r"(v1), "r"(v2), "r"(v3)
               : "memory");
#endif
}

// cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes (§9.7.9.25.4.1): copy
// `bytes` (a non-zero multiple of 16; both addresses 16-byte aligned) from this CTA's shared memory
// at `src` (shared::cta) to `dst` (shared::cluster, usually another CTA's, from mapa), then
// complete_tx(bytes) on the mbarrier `bar`, which must be in the destination's CTA (a mapa'd
// address too). The source is read in the async proxy: ordinary stores to it need
// fence_proxy_async_shared_cta first; it may be rewritten only once the copy is known complete
// (the destination's barrier, e.g. relayed back by the receiver).
TCG_DEV void bulk_copy_smem_to_cluster(uint32_t dst, uint32_t src, uint32_t bytes, uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::bulk_copy_smem_to_cluster(dst, src, bytes, bar, TCG_AT);
#else
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "r"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
