// ptx.cuh — every inline-PTX instruction the steps use, one small wrapper each.
//
// Each wrapper has two bodies: the PTX string for nvcc, and (under TCG_SIM, the g++ build) a
// call into the emulator, common/sim/, which implements the instruction with the semantics the
// PTX ISA gives. Kernels call only these wrappers and contain no asm of their own, so the same
// kernel source runs on a B200 and in the emulator.
//
// In the emulator build every wrapper also receives the caller's file and line (hidden default
// arguments, TCG_LOC), so a diagnostic such as a deadlock report names the kernel line that
// waits, not this file.
//
// Section numbers are those of the PTX ISA 9.0 (tcgen05 is §9.7.16; later ISA versions number
// it §9.7.17 but keep the anchors).
#pragma once
#include <cstdint>

#include "descriptors.h"

// The two builds of a kernel are linked into one binary, so everything a header defines for
// them lives in a per-build inline namespace: tcg::gpu_build or tcg::sim_build. The spelling
// stays tcg::name, but the linker symbols differ, so a function whose body depends on TCG_SIM
// can never be merged with the other build's copy (an ODR violation that would otherwise show
// up only when the optimizer does not inline it).
#if defined(TCG_SIM)
#define TCG_BUILD_NS sim
#define TCG_ABI_NS sim_build
#else
#define TCG_BUILD_NS gpu
#define TCG_ABI_NS gpu_build
#endif

#if defined(TCG_SIM)
#include "sim/sim.h"
#define TCG_DEV inline
#define TCG_LOC0 const char* tcg_file = __builtin_FILE(), int tcg_line = __builtin_LINE()
#define TCG_LOC , TCG_LOC0
#define TCG_AT ::tcsim::SrcLoc{tcg_file, tcg_line}
#else
#include <cuda.h>  // CUtensorMap
#define TCG_DEV __device__ __forceinline__
#define TCG_LOC0
#define TCG_LOC
#endif

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

// ============================================================== mbarrier (§9.7.13.15)

// mbarrier.init: phase 0, `count` expected arrivals, tx-count 0 (§9.7.13.15.9).
TCG_DEV void mbarrier_init(uint32_t bar, uint32_t count TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mbar_init(bar, count, TCG_AT);
#else
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
#endif
}

// fence.mbarrier_init: make this thread's mbarrier.init visible to the async proxy (TMA,
// tcgen05.commit) and the cluster; a CTA barrier must still follow before others use them
// (§9.7.13.4, membar/fence).
TCG_DEV void fence_mbarrier_init(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::fence_mbarrier_init(TCG_AT);
#else
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// mbarrier.arrive: one arrival on the current phase (§9.7.13.15.13). Release semantics.
TCG_DEV void mbarrier_arrive(uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mbar_arrive(bar, TCG_AT);
#else
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
#endif
}

// mbarrier.arrive.release.cluster.shared::cluster (§9.7.13.15.13): one arrival on the mbarrier at
// shared::cluster address `bar` (from mapa_shared_cluster), which may be in another CTA.
TCG_DEV void mbarrier_arrive_cluster(uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mbar_arrive_cluster(bar, TCG_AT);
#else
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");
#endif
}

// mbarrier.arrive.expect_tx: raise the tx-count by `bytes`, then arrive once (§9.7.13.15.12,
// §9.7.13.15.13). The phase can only complete once the TMA copies tracked by this barrier have
// delivered those bytes.
TCG_DEV void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mbar_arrive_expect_tx(bar, bytes, TCG_AT);
#else
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
#endif
}

// The same on a shared::cluster address (§9.7.13.15.12): expect_tx then arrive on an mbarrier
// that may be in another CTA of the cluster.
TCG_DEV void mbarrier_arrive_expect_tx_cluster(uint32_t bar, uint32_t bytes TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mbar_arrive_expect_tx_cluster(bar, bytes, TCG_AT);
#else
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
#endif
}

// mbarrier.try_wait.parity in a loop (§9.7.13.15.16): returns once the phase with parity
// `parity` has completed, i.e. once the barrier's current phase parity differs from `parity`.
// Acquire semantics: data the completed phase tracked (TMA bytes) is visible afterwards.
TCG_DEV void mbarrier_wait_parity(uint32_t bar, uint32_t parity TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mbar_wait_parity(bar, parity, TCG_AT);
#else
  uint32_t done;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

// mbarrier.test_wait.parity (§9.7.13.15.16): non-blocking; true once the phase with parity
// `parity` has completed. For bounded waits (tests); kernels use mbarrier_wait_parity.
TCG_DEV bool mbarrier_test_wait_parity(uint32_t bar, uint32_t parity TCG_LOC) {
#if defined(TCG_SIM)
  return ::tcsim::mbar_test_wait_parity(bar, parity, TCG_AT);
#else
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
#endif
}

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

// ============================================================== tcgen05 (§9.7.16)

// tcgen05.alloc: allocate `ncols` TMEM columns (power of two, 32..512) for all 128 lanes and
// write the base address to shared memory at `dst` (§9.7.16.7.1). Warp-collective.
TCG_DEV void tmem_alloc(uint32_t dst, uint32_t ncols TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_alloc(dst, ncols, 1, TCG_AT);
#else
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(dst), "r"(ncols)
               : "memory");
#endif
}

// tcgen05.dealloc: free an allocation; every column must be freed before the CTA exits
// (§9.7.16.7.1).
TCG_DEV void tmem_dealloc(uint32_t taddr, uint32_t ncols TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_dealloc(taddr, ncols, 1, TCG_AT);
#else
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
#endif
}

// tcgen05.relinquish_alloc_permit (§9.7.16.7.1): this CTA will not allocate again, so a CTA waiting for TMEM
// on the same SM may proceed. Warp-collective.
TCG_DEV void tmem_relinquish_alloc_permit(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::tmem_relinquish(1, TCG_AT);
#else
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
#endif
}

// tcgen05.mma.cta_group::1.kind::f16 (§9.7.16.10.9): D[tmem] (+)= A[smem] * B[smem]^T for one
// M x N x 16 block. `accumulate` is the enable-input-d predicate: false overwrites D.
// Issued by ONE thread; runs asynchronously; completion is observed through tcgen05.commit.
TCG_DEV void mma_bf16_ss(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                         bool accumulate TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mma_f16(d_tmem, a_desc, b_desc, idesc, accumulate, 1, TCG_AT);
#else
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %4, 0;\n\t"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate))
      : "memory");
#endif
}

// tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 (§9.7.16.10.9, block scaling
// §9.7.16.10.7): D[tmem] (+)= (A * SFA) * (B * SFB)^T for one 128 x N x 64 block of packed E2M1
// operands (32 bytes of K per row, through the same smem descriptors as kind::f16), with one UE4M3
// scale per 16 K-elements per row read from TMEM at `sfa_tmem` / `sfb_tmem` (the layout
// tcgen05_cp_32x128b_warpx4 writes: row r's 4 scales in lane r%32 (+32w), column +r/32, byte s).
// `idesc` from make_idesc_mxf4nvf4. One thread issues it; asynchronous, completion via commit.
TCG_DEV void mma_mxf4nvf4_block16_ss(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                     uint32_t sfa_tmem, uint32_t sfb_tmem, bool accumulate TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mma_mxf4nvf4_block16(d_tmem, a_desc, b_desc, idesc, sfa_tmem, sfb_tmem, accumulate, 1, TCG_AT);
#else
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %4, 0;\n\t"
      "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n\t}" ::"r"(
          d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate)), "r"(sfa_tmem), "r"(sfb_tmem)
      : "memory");
#endif
}

// tcgen05.cp.cta_group::1.32x128b.warpx4 (§9.7.16.9.2): copy 32 rows x 16 bytes from shared
// memory (described by `s_desc`, K-major, no swizzle: row r at start + (r/8)*SBO + (r%8)*16) to
// TMEM at `taddr`, replicated into all four 32-lane quarters: byte j of row r lands in lanes
// r + 32w (w = 0..3), column (column of taddr) + j/4, byte j%4. One 512-byte scale-factor atom
// (128 rows x 4 scales) per instruction. One thread issues it; asynchronous, ordered before this
// thread's later tcgen05.mma; completion via tcgen05.commit.
TCG_DEV void tcgen05_cp_32x128b_warpx4(uint32_t taddr, uint64_t s_desc TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_cp_32x128b_warpx4(taddr, s_desc, 1, TCG_AT);
#else
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(s_desc) : "memory");
#endif
}

// tcgen05.commit: once every tcgen05 async operation this thread issued so far has completed,
// arrive once on `bar` (§9.7.16.12.1). Implies tcgen05.fence::before_thread_sync.
TCG_DEV void mma_commit(uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_commit(bar, 1, false, 0, TCG_AT);
#else
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar)
               : "memory");
#endif
}

// tcgen05.commit ... .multicast::cluster (§9.7.16.12.1): like mma_commit, but the arrival goes to
// the mbarrier at offset `bar` in every CTA whose bit is set in `cta_mask`.
TCG_DEV void mma_commit_multicast(uint32_t bar, uint16_t cta_mask TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_commit(bar, 1, true, cta_mask, TCG_AT);
#else
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(bar),
      "h"(cta_mask)
      : "memory");
#endif
}

// ---------------------------------------------------------------- 2-SM (cta_group::2) forms
// A CTA pair is two CTAs of a cluster whose ranks differ only in bit 0 (§9.7.16.5.1). With
// .cta_group::2 one tcgen05 instruction acts on both CTAs of the pair. Every tcgen05 instruction
// of a kernel must use the same .cta_group (§9.7.16.5).

// tcgen05.alloc.cta_group::2: one warp of EACH CTA of the pair executes it (same warp id, same
// `dst` offset); the same `ncols` columns are allocated in both CTAs' TMEM and the address is
// written to `dst` in both (§9.7.16.7.1).
TCG_DEV void tmem_alloc_2sm(uint32_t dst, uint32_t ncols TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_alloc(dst, ncols, 2, TCG_AT);
#else
  asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(dst), "r"(ncols)
               : "memory");
#endif
}

// tcgen05.dealloc.cta_group::2: frees the pair's allocation; one warp of each CTA (§9.7.16.7.1).
TCG_DEV void tmem_dealloc_2sm(uint32_t taddr, uint32_t ncols TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_dealloc(taddr, ncols, 2, TCG_AT);
#else
  asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
#endif
}

// tcgen05.relinquish_alloc_permit.cta_group::2 (§9.7.16.7.1).
TCG_DEV void tmem_relinquish_alloc_permit_2sm(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::tmem_relinquish(2, TCG_AT);
#else
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
#endif
}

// tcgen05.mma.cta_group::2.kind::f16 (§9.7.16.10.9): one MMA over the pair, issued by one thread
// of the even CTA. M = 256: each CTA supplies 128 rows of A from its own shared memory and N/2
// rows of B, at the descriptors' offsets in each CTA (so both CTAs lay out shared memory
// identically); each CTA's TMEM receives its own 128 rows of D, all N columns.
TCG_DEV void mma_bf16_ss_2sm(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                             bool accumulate TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mma_f16(d_tmem, a_desc, b_desc, idesc, accumulate, 2, TCG_AT);
#else
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %4, 0;\n\t"
      "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n\t}" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate))
      : "memory");
#endif
}

// tcgen05.commit.cta_group::2 (§9.7.16.12.1): once the pair MMAs this thread issued so far have
// completed, arrive once on the mbarrier at shared::cluster address `bar`.
TCG_DEV void mma_commit_2sm(uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_commit(bar, 2, false, 0, TCG_AT);
#else
  asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar)
               : "memory");
#endif
}

// ... with .multicast::cluster: arrive on the mbarrier at offset `bar` in every CTA of `cta_mask`
// (both CTAs of the pair: 0b11 << (rank & ~1)).
TCG_DEV void mma_commit_2sm_multicast(uint32_t bar, uint16_t cta_mask TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_commit(bar, 2, true, cta_mask, TCG_AT);
#else
  asm volatile(
      "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(bar),
      "h"(cta_mask)
      : "memory");
#endif
}

// tcgen05.fence::before_thread_sync / ::after_thread_sync (§9.7.16.11.1): order tcgen05
// operations against a thread synchronisation (barrier, mbarrier) that follows / precedes it.
TCG_DEV void tcgen05_fence_before_thread_sync(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_fence_before(TCG_AT);
#else
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
#endif
}
TCG_DEV void tcgen05_fence_after_thread_sync(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_fence_after(TCG_AT);
#else
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
#endif
}

// tcgen05.ld.sync.aligned.32x32b.xN.b32 (§9.7.16.8.3): thread t of the warp receives TMEM lane
// (lane of taddr) + t, columns (column of taddr) .. +N-1, one 32-bit register per column.
// Warp w may only touch lanes 32*(w%4) .. +31 (§9.7.16.8.1). Asynchronous: the registers are
// valid only after tmem_wait_ld(), which takes the same array so the compiler cannot hoist a
// use of them above the wait.
TCG_DEV void tmem_ld_32x32b_x8(uint32_t taddr, uint32_t (&r)[8] TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_ld(::tcsim::LdShape::k32x32b, 8, taddr, r, TCG_AT);
#else
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
               : "r"(taddr));
#endif
}

TCG_DEV void tmem_ld_32x32b_x16(uint32_t taddr, uint32_t (&r)[16] TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_ld(::tcsim::LdShape::k32x32b, 16, taddr, r, TCG_AT);
#else
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
      "%14, %15}, [%16];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
        "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
      : "r"(taddr));
#endif
}

// tcgen05.ld.sync.aligned.16x256b.x1.b32 (§9.7.16.8.3): 16 lanes x 256 bits; thread t receives lane t/4 (regs
// 0,1) and lane t/4+8 (regs 2,3), columns 2*(t%4) and +1 — an mma.sync accumulator fragment.
TCG_DEV void tmem_ld_16x256b_x1(uint32_t taddr, uint32_t (&r)[4] TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_ld(::tcsim::LdShape::k16x256b, 1, taddr, r, TCG_AT);
#else
  asm volatile("tcgen05.ld.sync.aligned.16x256b.x1.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(taddr));
#endif
}

// tcgen05.wait::ld: block until this thread's earlier tcgen05.ld have completed (§9.7.16.8.5).
// The registers are passed as read-write operands: they are "produced" here as far as the
// compiler is concerned, so no use of them can be scheduled before the wait.
template <int N>
TCG_DEV void tmem_wait_ld(uint32_t (&r)[N] TCG_LOC) {
#if defined(TCG_SIM)
  (void)r;
  ::tcsim::tmem_wait_ld(TCG_AT);
#else
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i]));
#endif
}

// ============================================================== warp MMA (step 00)

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 (§9.7.14.5.15): four 8x8 b16 matrices; lane i gives
// the address of row i%8 of matrix i/8; register j of lane l receives matrix j, row l/4,
// elements 2*(l%4) and 2*(l%4)+1.
TCG_DEV void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::ldmatrix(4, addr, r, TCG_AT);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

// Same with two matrices; lanes 0..15 give the row addresses.
TCG_DEV void ldmatrix_x2(uint32_t (&r)[2], uint32_t addr TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::ldmatrix(2, addr, r, TCG_AT);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (§9.7.14.5.8): d = a * b + c for a 16x16
// A fragment (4 regs of 2 BF16), a 16x8 B fragment (2 regs) and a 16x8 FP32 accumulator (4).
TCG_DEV void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                               const float (&c)[4] TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mma_sync_m16n8k16_bf16(d, a, b, c, TCG_AT);
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
