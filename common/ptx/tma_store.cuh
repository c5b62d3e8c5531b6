// ptx/tma_store.cuh — the TMA store (shared -> global) and what it needs: bulk async-groups and
// the generic -> async proxy fence (PTX ISA §9.7.9.25.5.2, §9.7.9.25.6, §9.7.12.4).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin
// (common/sim/tma_store.cpp). All of them exist on sm_90 too, so tests/gpu/ can check them on an H100.
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group (§9.7.9.25.5.2): write one box of
// the tensor map at element coordinates {c0 (innermost), c1} from shared memory at `src` (laid
// out as a TMA load of that box would leave it, swizzle included). Elements outside the tensor
// are not written: partial tiles need no special path. Asynchronous: the store joins this
// thread's open bulk group; the source may be overwritten only after a wait_group.read that
// covers it, and it reads shared memory in the async proxy (fence_proxy_async_shared_cta first).
TCG_DEV void tma_store_2d(const CUtensorMap* map, uint32_t src, int32_t c0, int32_t c1 TCG_LOC) {
#if defined(TCG_SIM)
  const int32_t c[2] = {c0, c1};
  ::tcsim::tma_store(map, 2, c, src, TCG_AT);
#else
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(map), "r"(src),
               "r"(c0), "r"(c1)
               : "memory");
#endif
}

// cp.async.bulk.commit_group (§9.7.9.25.6.1): closes this thread's open bulk group (the bulk
// copies it issued since its last commit). Groups are per thread.
TCG_DEV void bulk_commit_group(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::bulk_commit_group(TCG_AT);
#else
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}

// cp.async.bulk.wait_group.read N (§9.7.9.25.6.2): wait until at most N of this thread's most
// recent bulk groups still READ their shared-memory sources: the older groups' sources may be
// reused. Their global writes may still be in flight.
template <int N>
TCG_DEV void bulk_wait_group_read(TCG_LOC0) {
  static_assert(N >= 0 && N <= 63, "wait_group takes a small non-negative constant");
#if defined(TCG_SIM)
  ::tcsim::bulk_wait_group(N, /*read_only=*/true, TCG_AT);
#else
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#endif
}

// cp.async.bulk.wait_group N (§9.7.9.25.6.2): the same, but waits until the older groups are
// complete, global writes included.
template <int N>
TCG_DEV void bulk_wait_group(TCG_LOC0) {
  static_assert(N >= 0 && N <= 63, "wait_group takes a small non-negative constant");
#if defined(TCG_SIM)
  ::tcsim::bulk_wait_group(N, /*read_only=*/false, TCG_AT);
#else
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// fence.proxy.async.shared::cta (§9.7.12.4, memory model §8.6 "proxies"): orders this thread's
// earlier generic-proxy accesses to shared memory (ordinary stores) before later async-proxy
// accesses (a TMA store's read, an MMA's operand fetch) that are ordered after this fence by a
// synchronisation. Each writing thread fences its own stores, then the threads synchronise,
// then one of them issues the TMA store.
TCG_DEV void fence_proxy_async_shared_cta(TCG_LOC0) {
#if defined(TCG_SIM)
  ::tcsim::fence_proxy_async(TCG_AT);
#else
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// st.shared.v4.b32 (§9.7.9.10): one 16-byte generic-proxy store to shared memory at shared::cta
// address `addr` (16-byte aligned). Kernels write data that the async proxy will read (a TMA
// store's staging buffer) through this wrapper, so the emulator sees the write and can check the
// proxy fence and the reuse of a buffer a TMA store still reads.
TCG_DEV void st_shared_v4(uint32_t addr, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3 TCG_LOC) {
#if defined(TCG_SIM)
  const uint32_t v[4] = {v0, v1, v2, v3};
  ::tcsim::st_shared_generic(addr, v, 16, TCG_AT);
#else
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v0), "r"(v1), "r"(v2), "r"(v3) : "memory");
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
