// ptx/sync.cuh — shared memory, threads and clusters: cvta, bar.sync, elect.sync, the cluster special
// registers, barrier.cluster, mapa and ld/st.shared::cluster (PTX ISA §9.7.9, §9.7.13, §10).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin (common/sim/).
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// ============================================================== shared memory and threads

// Dynamic shared memory of the CTA. Kernels keep all shared state here, at offsets they lay out
// explicitly (no static __shared__): the emulator models exactly this window, and 2-SM kernels
// need identical layouts in both CTAs of a pair.
TCG_DEV uint8_t* dynamic_smem() {
#if defined(TCG_SIM)
  return ::tcsim::dynamic_smem();
#else
  extern __shared__ __align__(1024) uint8_t tcg_dynamic_smem[];
  return tcg_dynamic_smem;
#endif
}

// cvta.to.shared: generic pointer -> 32-bit shared::cta address (§9.7.9.21).
TCG_DEV uint32_t smem_addr(const void* p) {
#if defined(TCG_SIM)
  return ::tcsim::cvta_shared(p);
#else
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
#endif
}

// bar.sync id, nthreads: named barrier for a subset of the CTA's warps (§9.7.13.1).
// Id 0 is the one __syncthreads() uses.
TCG_DEV void named_barrier_sync(uint32_t id, uint32_t nthreads TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::named_barrier_sync(id, nthreads, TCG_AT);
#else
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
#endif
}

// elect.sync: true in exactly one lane of the (fully converged) warp (§9.7.13.13).
// Warp-collective: all 32 lanes must execute it together.
TCG_DEV bool elect_one_sync(TCG_LOC0) {
#if defined(TCG_SIM)
  return ::tcsim::elect_sync(TCG_AT);
#else
  uint32_t elected = 0;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "elect.sync _|p, 0xffffffff;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(elected));
  return elected != 0;
#endif
}

// ============================================================== clusters (2-SM steps)
// A cluster is a group of CTAs launched together on neighbouring SMs; each CTA can address the
// others' shared memory through the shared::cluster window (§9.7.9.23, §10.1.11).

// %cluster_ctarank: this CTA's rank in its cluster, 0 .. %cluster_nctarank-1 (§10.15, §10.16).
TCG_DEV uint32_t cluster_ctarank(TCG_LOC0) {
#if defined(TCG_SIM)
  return ::tcsim::cluster_ctarank(TCG_AT);
#else
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#endif
}

// %cluster_nctarank: the number of CTAs in the cluster (§10.16).
TCG_DEV uint32_t cluster_nctarank(TCG_LOC0) {
#if defined(TCG_SIM)
  return ::tcsim::cluster_nctarank(TCG_AT);
#else
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
#endif
}

// %clusterid.x: the cluster's index in the grid along x (§10.12).
TCG_DEV uint32_t cluster_id_x(TCG_LOC0) {
#if defined(TCG_SIM)
  return ::tcsim::cluster_id_x(TCG_AT);
#else
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
#endif
}

// barrier.cluster.arrive.release / .relaxed (§9.7.13.3): this thread has arrived at the cluster
// barrier; .release orders its earlier memory operations before the others' matching wait,
// .relaxed does not (pair it with an explicit fence where ordering is needed). Warp-collective.
TCG_DEV void cluster_arrive_release(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::cluster_arrive(/*release=*/true, TCG_AT);
#else
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
TCG_DEV void cluster_arrive_relaxed(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::cluster_arrive(/*release=*/false, TCG_AT);
#else
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}

// barrier.cluster.wait.acquire (§9.7.13.3): block until every non-exited thread of the cluster
// has arrived; acquire pairs with the arrivals' release. Each wait follows this thread's arrive.
TCG_DEV void cluster_wait(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::cluster_wait(TCG_AT);
#else
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

// Arrive + wait: every thread of the cluster has reached this point.
TCG_DEV void cluster_sync(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::cluster_arrive(true, TCG_AT);
  ::tcsim::cluster_wait(TCG_AT);
#else
  cluster_arrive_release();
  cluster_wait();
#endif
}

// mapa.shared::cluster.u32 (§9.7.9.23): the shared::cluster address of the variable at the same
// offset as shared address `addr` in the shared memory of CTA `rank` of this cluster.
TCG_DEV uint32_t mapa_shared_cluster(uint32_t addr, uint32_t rank TCG_LOC) {
#if defined(TCG_SIM)
  return ::tcsim::mapa(addr, rank, TCG_AT);
#else
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
#endif
}

// ld/st.shared::cluster.u32 (§9.7.9.8, §9.7.9.10): a 32-bit load or store at a shared::cluster
// address, i.e. possibly in another CTA's shared memory (distributed shared memory).
TCG_DEV uint32_t ld_shared_cluster_u32(uint32_t addr TCG_LOC) {
#if defined(TCG_SIM)
  return ::tcsim::ld_shared_cluster(addr, TCG_AT);
#else
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
#endif
}
TCG_DEV void st_shared_cluster_u32(uint32_t addr, uint32_t v TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::st_shared_cluster(addr, v, TCG_AT);
#else
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
