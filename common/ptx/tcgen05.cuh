// ptx/tcgen05.cuh — tcgen05: TMEM alloc/dealloc, MMA (kind::f16, 2-SM, block-scaled), commit, fences,
// tcgen05.cp, tcgen05.ld / wait::ld (PTX ISA §9.7.16).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin (common/sim/).
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

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

// The TMEM address tcgen05.alloc wrote to shared memory at `slot` (ld.shared.b32). Every thread
// that uses the allocation reads it through this load, after a synchronisation that orders it after
// the alloc's write (§9.7.16.7.1: the address is written to shared memory; a CTA barrier with the
// tcgen05 fences around it, not a relaxed cluster barrier, §9.7.13.3).
TCG_DEV uint32_t tmem_address_from_slot(uint32_t slot TCG_LOC) {
#if defined(TCG_SIM)
  return ::tcsim::tmem_slot_load(slot, TCG_AT);
#else
  uint32_t taddr;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(taddr) : "r"(slot) : "memory");
  return taddr;
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

// tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16 (§9.7.16.10.9, §9.7.16.10.7): the
// block-scaled MMA over the pair, issued by one thread of the even CTA; M = 256, N a multiple of 16
// in [16, 256]. Each CTA supplies its 128 rows of A and N/2 rows of B at the descriptors' offsets
// in its own shared memory, and from its own TMEM at `sfa_tmem` / `sfb_tmem` the scales of its 128
// rows of A and of ALL N rows of B (CUTLASS SM100_MMA_MXF4_2x1SM_SS); its TMEM gets its 128 rows of D.
TCG_DEV void mma_mxf4nvf4_block16_ss_2sm(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                         uint32_t sfa_tmem, uint32_t sfb_tmem, bool accumulate TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mma_mxf4nvf4_block16(d_tmem, a_desc, b_desc, idesc, sfa_tmem, sfb_tmem, accumulate, 2, TCG_AT);
#else
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %4, 0;\n\t"
      "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n\t}" ::"r"(
          d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate)), "r"(sfa_tmem), "r"(sfb_tmem)
      : "memory");
#endif
}

// tcgen05.cp.cta_group::2.32x128b.warpx4 (§9.7.16.9.2): as tcgen05_cp_32x128b_warpx4, into the
// TMEM of both CTAs of the pair, each CTA's from its own shared memory at the descriptor's offset.
TCG_DEV void tcgen05_cp_32x128b_warpx4_2sm(uint32_t taddr, uint64_t s_desc TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tcgen05_cp_32x128b_warpx4(taddr, s_desc, 2, TCG_AT);
#else
  asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(s_desc) : "memory");
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

// The same with 32 columns (32 registers per thread): a 64-column epilogue sub-tile is two of them.
TCG_DEV void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t* r TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::tmem_ld(::tcsim::LdShape::k32x32b, 32, taddr, r, TCG_AT);
#else
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
        "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]),
        "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]),
        "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
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

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
