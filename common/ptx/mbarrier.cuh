// ptx/mbarrier.cuh — mbarrier: init, fence.mbarrier_init, arrive (local and shared::cluster), expect_tx,
// try_wait / test_wait (PTX ISA §9.7.13.15).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin (common/sim/).
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

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

// mbarrier.arrive.release.cta.shared::cluster (§9.7.13.15.13): the same remote arrival, its release
// at CTA scope (CUTLASS's ClusterBarrier::arrive(cta_id) form). It orders this thread's earlier
// accesses only for its own CTA, so no GPU-scope membar (waiting for earlier global stores) comes
// before it; enough where the arrival itself is the message (a TMEM slot or a ring stage freed).
TCG_DEV void mbarrier_arrive_cluster_cta_scope(uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mbar_arrive_cluster_cta_scope(bar, TCG_AT);
#else
  asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");
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

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
