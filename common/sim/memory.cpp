// memory.cpp — shared memory as kernels address it: each CTA's dynamic shared memory, the
// shared::cluster window through which the CTAs of a cluster reach each other's (distributed
// shared memory), and the special registers that name a CTA's place in its cluster and its SM.
//
// Models (PTX ISA §5.1.3 state spaces, §9.7.9.23 mapa, §9.7.9.8/9.7.9.10 ld/st, §10.8 %smid,
// §10.12-10.16):
//  * A shared::cta address of CTA rank r is (r << 24) | (0x400 + offset): the dynamic window
//    starts after the 1 KiB the sm_90+ runtime reserves, and the CTA's rank sits in bits 24 and
//    up. That is what makes a shared::cta address usable as a shared::cluster address of the
//    same CTA, and CUTLASS's "peer bit" trick (clearing bit 24 names the even CTA of a pair;
//    CUTLASS cute/arch/copy_sm100_tma.hpp) work. mapa replaces the rank bits.
//  * Every access through an emulated instruction is bounds-checked in the CTA it lands in, and
//    an access to another CTA is recorded for the exit check (launch.cpp) and refused once that
//    CTA has exited.
//  * Memory is sequentially consistent: a remote st is visible to the next ld anywhere.
//  * A vector access through a generic pointer outside this CTA's shared memory is a global
//    access: it must lie inside a registered allocation (global_memory.cpp).
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace detail {

SmemRef smem_ref(Cta& cta, uint32_t addr, uint32_t bytes, const char* what) {
  const uint32_t rank = addr >> kRankShift, a = addr & kOffsetMask;
  if (rank != cta.rank)
    fail_here("shared memory access outside this CTA",
              std::string(what) + " at shared address " + hex(addr) + " names CTA rank " + std::to_string(rank) +
                  "; this CTA is rank " + std::to_string(cta.rank) +
                  " and the instruction takes a shared::cta address (use the shared::cluster form for another CTA)");
  if (a < kSmemBase || uint64_t(a) + bytes > uint64_t(kSmemBase) + cta.smem_bytes)
    fail_here("shared memory out of bounds",
              std::string(what) + " touches [" + hex(addr) + ", " + hex(uint64_t(addr) + bytes) +
                  ") but the CTA's dynamic shared memory is [" + hex((cta.rank << kRankShift) | kSmemBase) + ", " +
                  hex((uint64_t(cta.rank) << kRankShift) + kSmemBase + cta.smem_bytes) + ")");
  return SmemRef{&cta, a - kSmemBase};
}

uint8_t* smem_ptr(Cta& cta, uint32_t addr, uint32_t bytes, const char* what) {
  SmemRef r = smem_ref(cta, addr, bytes, what);
  return cta.smem + r.off;
}

Cta& cluster_cta(uint32_t addr, const char* what) {
  Fiber& f = me();
  const Cluster& cl = *f.cta->cluster;
  const uint32_t rank = addr >> kRankShift;
  if (rank >= cl.ctas.size())
    fail_here("shared::cluster address outside the cluster",
              std::string(what) + " at " + hex(addr) + " names CTA rank " + std::to_string(rank) + ", but the cluster has " +
                  std::to_string(cl.ctas.size()) + " CTA(s)");
  return *cl.ctas[rank];
}

SmemRef smem_ref_cluster(uint32_t addr, uint32_t bytes, const char* what) {
  Cta& target = cluster_cta(addr, what);
  check_target_alive(target, what);
  return smem_ref(target, addr, bytes, what);
}

void check_target_alive(Cta& target, const char* what) {
  if (target.finished)
    fail_here("access to a CTA that has exited",
              std::string(what) + " reaches into " + cta_name(target) +
                  ", which has already exited: its shared memory, mbarriers and TMEM no longer exist. A cluster "
                  "barrier before exit (in every CTA) keeps a CTA alive while its peers still use it");
}

void note_remote_access(Cta& target, const char* what) {
  Fiber& f = me();
  if (&target == f.cta) return;
  check_target_alive(target, what);
  RemoteAccess ra{hb_stamp(f), &f, what, f.at};  // the exit must happen after it (launch.cpp)
  for (RemoteAccess& r : target.remote_accesses)
    if (r.by == &f) {
      r = ra;  // its latest access: the earlier ones happen before it
      return;
    }
  target.remote_accesses.push_back(ra);
}

// Fails if [addr, addr + bytes) covers an initialised mbarrier: its state would be destroyed.
void check_no_mbarrier_in(Cta& cta, uint32_t addr, uint32_t bytes, const char* what) {
  const uint32_t a = addr & kOffsetMask;
  auto it = cta.mbars.lower_bound(a >= 7 ? a - 7 : 0);
  if (it != cta.mbars.end() && it->first < a + bytes)
    fail_here("write over a live mbarrier",
              std::string(what) + " writes [" + hex(addr) + ", " + hex(uint64_t(addr) + bytes) + ") of " +
                  cta_name(cta) + ", which contains the mbarrier at " + hex((cta.rank << kRankShift) | it->first) +
                  " (initialised at " + loc(it->second.init_at) + ")");
}

}  // namespace detail

uint8_t* dynamic_smem() { return me().cta->smem; }

namespace {
// Out of line: its strings would otherwise make every vector access's frame (on a thread's stack
// at each switch) several hundred bytes deeper.
[[noreturn, gnu::noinline, gnu::cold]] void fail_misaligned(uintptr_t a, uint32_t bytes, const char* what) {
  fail_here("misaligned vector access",
            std::string(what) + " at " + hex(a) + ", which is " + std::to_string(a % bytes) + " bytes past a " +
                std::to_string(bytes) + "-byte boundary; on the GPU a vector access must be aligned to its size "
                "and this one faults with \"misaligned address\" (PTX ISA §5.4.2)");
}
}  // namespace

void check_vector_access(const void* p, uint32_t bytes, bool store, const char* what, SrcLoc at) {
  tick(at);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (a % bytes != 0) fail_misaligned(a, bytes, what);
  Fiber& f = me();
  const uint8_t* q = static_cast<const uint8_t*>(p);
  if (q < f.cta->smem || q >= f.cta->smem + f.cta->smem_bytes + 1024) {  // global, not this CTA's shared memory
    check_global_range(p, bytes, what);  // inside an allocation (global_memory.cpp)
    if (timed()) {  // through the SM's path to L2
      if (store) model_global_store(f, p, bytes);
      else model_global_access(f, bytes, false);
    }
  }
}

uint32_t cvta_shared(const void* p) {
  Cta& cta = *me().cta;
  const uint8_t* q = static_cast<const uint8_t*>(p);
  if (q < cta.smem || q > cta.smem + cta.smem_bytes)
    fail_here("generic address is not in shared memory",
              "cvta.to.shared of a pointer that does not point into this CTA's dynamic shared memory");
  return (cta.rank << kRankShift) | (kSmemBase + uint32_t(q - cta.smem));
}

uint32_t sm_id(SrcLoc at) {
  tick(at);
  return me().cta->sm->id;
}

uint32_t cluster_ctarank(SrcLoc at) {
  tick(at);
  return me().cta->rank;
}

uint32_t cluster_nctarank(SrcLoc at) {
  tick(at);
  return uint32_t(me().cta->cluster->ctas.size());
}

uint32_t cluster_id_x(SrcLoc at) {
  tick(at);
  return me().cta->cluster->id.x;
}

uint32_t mapa(uint32_t addr, uint32_t rank, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  // The source must be a valid shared address of this CTA (§9.7.9.23: "a" is a shared::cta
  // address of the executing CTA); 0 bytes: the address itself only has to lie in the window.
  smem_ref(*f.cta, addr, 0, "mapa source");
  if (rank >= f.cta->cluster->ctas.size())
    fail_here("mapa to a CTA outside the cluster", "mapa.shared::cluster to CTA rank " + std::to_string(rank) +
                                                        "; the cluster has " +
                                                        std::to_string(f.cta->cluster->ctas.size()) + " CTA(s)");
  return (rank << kRankShift) | (addr & kOffsetMask);
}

uint32_t ld_shared_cluster(uint32_t addr, SrcLoc at) {
  tick(at);
  if (addr % 4) fail_here("misaligned shared load", "ld.shared::cluster.u32 at " + hex(addr) + " is not 4-byte aligned");
  SmemRef r = smem_ref_cluster(addr, 4, "ld.shared::cluster");
  note_remote_access(*r.cta, "ld.shared::cluster");
  copy_check_read(*r.cta, addr, addr + 4, "ld.shared::cluster");  // async_smem_writes.cpp
  uint32_t v;
  memcpy(&v, r.cta->smem + r.off, 4);
  if (timed()) model_dsmem_access(me(), *r.cta, 4, /*load=*/true);
  return v;
}

void st_shared_cluster(uint32_t addr, uint32_t v, SrcLoc at) {
  tick(at);
  if (addr % 4) fail_here("misaligned shared store", "st.shared::cluster.u32 at " + hex(addr) + " is not 4-byte aligned");
  SmemRef r = smem_ref_cluster(addr, 4, "st.shared::cluster");
  check_no_mbarrier_in(*r.cta, addr, 4, "st.shared::cluster");
  note_remote_access(*r.cta, "st.shared::cluster");
  memcpy(r.cta->smem + r.off, &v, 4);
  if (timed()) model_dsmem_access(me(), *r.cta, 4, /*load=*/false);
}

}  // namespace tcsim
