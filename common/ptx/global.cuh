// ptx/global.cuh — global memory that one CTA writes and another CTA of the same launch reads
// (split-K partials): 16-byte vector stores and loads, the gpu-scope acq_rel fetch-and-add that
// orders them, and a relaxed store to reset a counter (PTX ISA §9.7.9.8 ld, §9.7.9.10 st,
// §9.7.13.5 atom, memory consistency model §8).
//
// The pattern these wrappers exist for (PTX ISA §8.7, release and acquire patterns; §8.9.5,
// cumulativity through bar.sync): the threads of CTA X store their data with weak stores, then
// bar.sync, then one thread of X performs an atom.acq_rel.gpu on a counter (the release covers
// the other threads' stores, which bar.sync ordered before it). In CTA Y one thread performs the
// same atom (the acquire reads the value X's release wrote, or a later one of the same release
// sequence), then bar.sync, then Y's threads may load X's data with weak loads.
//
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin
// (common/sim/global_order.cpp), which records who stored each 16-byte granule and reports a
// load of data another thread stored without that release/acquire/bar.sync chain.
#pragma once
#include <vector_types.h>

#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// st.global.v4.b32 (§9.7.9.10): a weak 16-byte store of data another CTA will read; `dst` 16-byte
// aligned. The emulator records the storing thread for the visibility rule of ld_global_v4.
TCG_DEV void st_global_v4(void* dst, uint4 v TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::st_global_v4(dst, &v, 16, TCG_AT);
#else
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
#endif
}

// ld.global.v4.b32 (§9.7.9.8): a weak 16-byte load of data another thread (of this or another
// CTA) stored with st_global_v4. It sees that store only if the store happens before it (§8.9):
// the emulator reports the load otherwise ("global load before the store is visible").
TCG_DEV uint4 ld_global_v4(const void* src TCG_LOC) {
#if defined(TCG_SIM)
  uint4 v;
  ::tcsim::ld_global_v4(&v, src, 16, TCG_AT);
  return v;
#else
  uint4 v;
  asm volatile("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(src)
               : "memory");
  return v;
#endif
}

// atom.acq_rel.gpu.global.add.u32 (§9.7.13.5): old = *addr; *addr = old + v, atomically, with
// release semantics for this thread's earlier memory operations (and, cumulatively, those of
// threads that synchronised with it through bar.sync) and acquire semantics for later ones, at
// GPU scope. Returns old.
TCG_DEV uint32_t atom_add_acq_rel_gpu(uint32_t* addr, uint32_t v TCG_LOC) {
#if defined(TCG_SIM)
  return ::tcsim::atom_add_acq_rel_gpu(addr, v, TCG_AT);
#else
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  return old;
#endif
}

// st.relaxed.gpu.global.u32 (§9.7.9.10): a strong store with no ordering: resets a counter that
// every CTA of this launch has finished with (the next launch is ordered after this one by the
// kernel boundary).
TCG_DEV void st_relaxed_gpu(uint32_t* addr, uint32_t v TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::st_relaxed_gpu(addr, v, TCG_AT);
#else
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(addr), "r"(v) : "memory");
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
