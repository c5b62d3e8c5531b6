// workspace.cpp — the global scratch memory of a step that declares one
// (StepSpec::workspace, common/step.h: split-K partials and per-tile counters), for both drivers:
// its size, checked; its preparation (counters 0 once, everything else poisoned with 0xFF bytes,
// an FP32 NaN, before every checked launch, so a kernel that reads a partial nobody wrote fails
// verification); the check that a launch left its counters at 0 again; and the comparison of
// two launches' outputs, bit for bit, that shows the result does not depend on which CTA
// finished first.
#include <cstring>
#include <stdexcept>

#include "common/harness/internal.h"

namespace tcg::harness {

StepWorkspace workspace_for(const StepSpec& spec, const Options& o, int num_sms) {
  if (spec.workspace == nullptr) return {};
  const StepWorkspace w = spec.workspace(static_cast<int>(o.m), static_cast<int>(o.n), static_cast<int>(o.k), num_sms);
  if (w.zeroed_bytes > w.bytes || w.bytes > kMaxWorkspaceBytes)
    throw std::logic_error(strf("step %02d asks for a workspace of %zu bytes (%zu of them counters); at most %zu "
                                "bytes, counters included",
                                spec.number, w.bytes, w.zeroed_bytes, kMaxWorkspaceBytes));
  return w;
}

void prepare_workspace(uint8_t* ws, const StepWorkspace& w, bool zero_counters) {
  if (w.bytes == 0) return;
  if (zero_counters) std::memset(ws, 0, w.zeroed_bytes);
  std::memset(ws + w.zeroed_bytes, 0xFF, w.bytes - w.zeroed_bytes);
}

std::string counters_not_reset(const uint8_t* counters, size_t zeroed_bytes) {
  for (size_t i = 0; i < zeroed_bytes; ++i)
    if (counters[i] != 0)
      return strf("workspace counter byte %zu (32-bit counter %zu) is 0x%02x after the launch, not 0: the kernel "
                  "must leave its counters as it found them, or the next launch starts from a wrong count",
                  i, i / 4, counters[i]);
  return "";
}

std::string repeat_difference(const __half* first, const __half* second, int64_t count, int64_t n) {
  for (int64_t i = 0; i < count; ++i) {
    uint16_t a, b;
    std::memcpy(&a, first + i, 2);
    std::memcpy(&b, second + i, 2);
    if (a != b)
      return strf("C[%lld][%lld] is 0x%04x in the first launch and 0x%04x in the second: the result depends on the "
                  "order in which the CTAs ran",
                  static_cast<long long>(i / n), static_cast<long long>(i % n), a, b);
  }
  return "";
}

}  // namespace tcg::harness
