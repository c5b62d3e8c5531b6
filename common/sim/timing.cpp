// timing.cpp — the B200 timing model (work in progress: stubs so the rest links).
#include "internal.h"

namespace tcsim {
namespace {
tcg::trace::Trace g_trace;
}
void trace_phase(const char*, bool, SrcLoc) {}
const tcg::trace::Trace& last_trace() { return g_trace; }
std::string model_parameters_markdown() { return ""; }
}  // namespace tcsim
