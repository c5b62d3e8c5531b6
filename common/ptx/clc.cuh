// ptx/clc.cuh — cluster launch control: ask the hardware for a cluster of this grid that has not
// started yet, cancel it and take over its work (PTX ISA §9.7.13.17 try_cancel, §9.7.13.18
// query_cancel), and the 16-byte shared-memory load that brings the response into registers.
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin
// (common/sim/clc.cpp).
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// ============================================================== cluster launch control (§9.7.13.17-18)

// The opaque 16-byte response of a try_cancel, as four 32-bit registers. Only query_cancel may
// interpret it (its encoding is not architectural).
struct ClcResponse {
  uint32_t w[4];
};

// clusterlaunchcontrol.try_cancel (§9.7.13.17): asynchronously try to cancel the launch of a
// cluster of this grid that has not started; the 16-byte response lands at `response` (16-byte
// aligned, shared::cta) and a complete_tx of 16 bytes is performed on `bar` (shared::cta), which
// must expect them (arrive.expect_tx(16)). Read the response only after that phase completed.
// Once a thread of this CTA has seen a failed response, issuing another try_cancel is undefined.
TCG_DEV void clc_try_cancel(uint32_t response, uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::clc_try_cancel(response, bar, /*multicast=*/false, TCG_AT);
#else
  asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];" ::"r"(
                   response),
               "r"(bar)
               : "memory");
#endif
}

// The .multicast::cluster::all form (§9.7.13.17, sm_100a): one cancellation, whose response is
// written at offset `response` of EVERY CTA of the cluster, each CTA's mbarrier at offset `bar`
// receiving complete_tx(16). Undefined if any CTA of the cluster has exited.
TCG_DEV void clc_try_cancel_multicast(uint32_t response, uint32_t bar TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::clc_try_cancel(response, bar, /*multicast=*/true, TCG_AT);
#else
  asm volatile(
      "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128"
      " [%0], [%1];" ::"r"(response),
      "r"(bar)
      : "memory");
#endif
}

// ld.shared.v4.b32 (§9.7.9.8): the response into registers (the ISA's example loads it with one
// 16-byte generic-proxy load after the mbarrier wait; the address must be 16-byte aligned).
TCG_DEV ClcResponse clc_load_response(uint32_t response TCG_LOC) {
  ClcResponse r;
#if defined(TCG_SIM)
  ::tcsim::clc_load_response(response, r.w, TCG_AT);
#else
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
               : "r"(response)
               : "memory");
#endif
  return r;
}

// clusterlaunchcontrol.query_cancel.is_canceled (§9.7.13.18): did the try_cancel cancel a cluster?
TCG_DEV bool clc_query_is_canceled(const ClcResponse& r TCG_LOC) {
#if defined(TCG_SIM)
  return ::tcsim::clc_query_is_canceled(r.w, TCG_AT);
#else
  uint32_t canceled;
  asm volatile(
      "{\n\t.reg .pred p;\n\t.reg .b128 resp;\n\t"
      "mov.b128 resp, {%1, %2};\n\t"
      "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, resp;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(canceled)
      : "l"(uint64_t(r.w[0]) | uint64_t(r.w[1]) << 32), "l"(uint64_t(r.w[2]) | uint64_t(r.w[3]) << 32));
  return canceled != 0;
#endif
}

// clusterlaunchcontrol.query_cancel.get_first_ctaid::x (§9.7.13.18): %ctaid.x of the first CTA
// of the canceled cluster. Undefined for a failed response: call it only after is_canceled.
TCG_DEV uint32_t clc_query_first_ctaid_x(const ClcResponse& r TCG_LOC) {
#if defined(TCG_SIM)
  return ::tcsim::clc_query_first_ctaid(r.w, 0, TCG_AT);
#else
  uint32_t x;
  asm volatile(
      "{\n\t.reg .b128 resp;\n\t"
      "mov.b128 resp, {%1, %2};\n\t"
      "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %0, resp;\n\t}"
      : "=r"(x)
      : "l"(uint64_t(r.w[0]) | uint64_t(r.w[1]) << 32), "l"(uint64_t(r.w[2]) | uint64_t(r.w[3]) << 32));
  return x;
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
