// dsmem.cpp — distributed shared memory beyond 32-bit words: 16-byte loads and stores through the
// shared::cluster window, and the bulk copy from the issuing CTA's shared memory into another
// CTA's, completing on the destination CTA's mbarrier.
//
// Models (PTX ISA §9.7.9.8 ld, §9.7.9.10 st, §5.4.2 vector alignment, §9.7.9.25.4.1 cp.async.bulk
// shared::cluster <- shared::cta, §9.7.12.4 fence.proxy.async):
//  * ld/st.shared::cluster.v4.b32: the address must be 16-byte aligned and name a running CTA of
//    the cluster, in bounds of its dynamic shared memory; a store may not cover a live mbarrier.
//    The access is recorded for the exit check (a peer must not exit before a cluster barrier
//    that follows the access, launch.cpp).
//  * The bulk copy: size a non-zero multiple of 16, both addresses 16-byte aligned; the source a
//    shared::cta address of the issuing CTA (its rank bits name this CTA), the destination and the
//    mbarrier shared::cluster addresses in one and the same CTA of the cluster (the copy completes
//    on the destination CTA's barrier), the barrier initialised there and its init published to
//    the async proxy and the cluster, the destination CTA still running, no live mbarrier under
//    the destination. The source is read in the async proxy: every 16-byte piece written by
//    st_shared_v4 must have been fenced (fence.proxy.async) and the fence ordered before the
//    issue (tma_store.cpp's rule). The copy is asynchronous: the source is read and the
//    destination written at a point the seed picks, then complete_tx(bytes) on the barrier; both
//    CTAs count as targets, so neither may exit while it is in flight.
//  * Timing (timing.cpp, model_dsmem_*): the path between two SMs of a cluster, measured on the H100.
// Not modelled: a generic store over the source while the copy is in flight (it shows only as
// wrong data under a seed that performs the copy late).
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {
void check_aligned16(uint32_t addr, const char* what) {
  if (addr % 16 != 0)
    fail_here("misaligned vector access", std::string(what) + " at " + hex(addr) + " is " + std::to_string(addr % 16) +
                                              " bytes past a 16-byte boundary; a 16-byte access must be 16-byte "
                                              "aligned (PTX ISA §5.4.2) and faults with \"misaligned address\" on the GPU");
}
}  // namespace

void ld_shared_cluster_v4(uint32_t addr, uint32_t* out, SrcLoc at) {
  tick(at);
  const char* what = "ld.shared::cluster.v4.b32";
  check_aligned16(addr, what);
  SmemRef r = smem_ref_cluster(addr, 16, what);
  note_remote_access(*r.cta, what);
  copy_check_read(*r.cta, addr, addr + 16, what);  // async_smem_writes.cpp
  memcpy(out, r.cta->smem + r.off, 16);
  if (timed()) model_dsmem_access(me(), *r.cta, 16, /*load=*/true);
}

void st_shared_cluster_v4(uint32_t addr, const uint32_t* v, SrcLoc at) {
  tick(at);
  const char* what = "st.shared::cluster.v4.b32";
  check_aligned16(addr, what);
  SmemRef r = smem_ref_cluster(addr, 16, what);
  check_no_mbarrier_in(*r.cta, addr, 16, what);
  note_remote_access(*r.cta, what);
  memcpy(r.cta->smem + r.off, v, 16);
  if (timed()) model_dsmem_access(me(), *r.cta, 16, /*load=*/false);
}

void bulk_copy_smem_to_cluster(uint32_t dst, uint32_t src, uint32_t bytes, uint32_t bar, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& self = *f.cta;
  const char* what = "cp.async.bulk.shared::cluster.shared::cta";
  if (bytes == 0 || bytes % 16 != 0)
    fail_here("bad bulk copy", std::string(what) + " of " + std::to_string(bytes) +
                                   " bytes; the size must be a non-zero multiple of 16 (PTX ISA §9.7.9.25.4.1)");
  if ((dst & kOffsetMask) % 16 != 0 || (src & kOffsetMask) % 16 != 0)
    fail_here("misaligned bulk copy", std::string(what) + " needs 16-byte aligned addresses; destination " + hex(dst) +
                                          ", source " + hex(src) + " (PTX ISA §9.7.9.25.4.1)");
  // The source: shared::cta of this CTA (smem_ref refuses another CTA's rank bits).
  smem_ref(self, src, bytes, "cp.async.bulk source (shared::cta)");
  Cta& dcta = cluster_cta(dst, "cp.async.bulk destination");
  check_target_alive(dcta, what);
  smem_ref(dcta, dst, bytes, "cp.async.bulk destination");
  check_no_mbarrier_in(dcta, dst, bytes, "cp.async.bulk destination");
  if ((bar >> kRankShift) != dcta.rank)
    fail_here("bulk copy mbarrier in the wrong CTA",
              std::string(what) + " writes to " + cta_name(dcta) + " but signals the mbarrier at " + hex(bar) +
                  " in CTA rank " + std::to_string(bar >> kRankShift) +
                  "; the copy completes on a barrier in the destination CTA (map both with mapa to the same rank)");
  const Mbar& b = mbar_at_cluster(bar, "cp.async.bulk completion mbarrier");
  check_mbar_published(b, bar, /*async_proxy=*/true, /*remote=*/&dcta != &self, what);
  for (uint32_t a = src; a < src + bytes; a += 16) check_async_proxy_read(self, a, what);
  note_remote_access(dcta, what);
  // The complete_tx releases at cluster scope (§9.7.9.25.4.1): a wait that sees the phase complete
  // is ordered after the issue, and so after this access (what the destination's exit check asks).
  auto carried = std::make_shared<HbClock>(hb_release(f));
  // Its completion, as an agent of its own: a thread that learns it (the destination's wait, then
  // any synchronisation, relaxed ones included, as for tcgen05 completions) knows the source has
  // been read. The source CTA's exit asks for it (launch.cpp).
  const uint32_t copy_agent = ++g_sched->next_agent;
  carried->at(copy_agent).committed = 1;
  if (&dcta != &self) self.outgoing_copies.push_back(RemoteAccess{Stamp{copy_agent, 1}, &f, what, at});
  const Origin by{"the bulk copy", false, &f, at, &dcta};
  Cta* sp = &self;
  Cta* dp = &dcta;
  auto w = copy_write_issued(dcta, dst, bytes, dcta, bar, "DSMEM bulk copy", false);  // async_smem_writes.cpp
  AsyncOp op{[sp, dp, dst, src, bytes, bar, by, carried, w] {
               copy_write_landed(*w);
               memcpy(dp->smem + (dst & kOffsetMask) - kSmemBase, sp->smem + (src & kOffsetMask) - kSmemBase, bytes);
               Mbar& mb = dp->mbars.find(bar & kOffsetMask)->second;
               g_stats.tma_copies++;
               g_stats.tma_bytes += bytes;
               mbar_note_async(mb, by);  // launch.cpp: the destination's exit ordered after it
               mb.hb_acc.join(*carried);
               mbar_add_tx(mb, bar, -int64_t(bytes), by);
               mbar_check_phase(mb, bar, by);
             },
             (1u << self.rank) | (1u << dcta.rank), "a bulk copy into another CTA's shared memory", &f, at};
  if (timed()) {
    op.t = model_dsmem_copy(self, dcta, bytes);
    if (trace_cta(self))
      trace_async(self, "TMA", "DSMEM copy " + std::to_string(bytes) + " B", tcg::trace::kCatTma, f.t, op.t);
  }
  push_async(std::move(op));
}

}  // namespace tcsim
