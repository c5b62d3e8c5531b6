// timing_params.cpp — the timing model's parameter table (docs/timing_model.md, "Parameters").
//
// One set of parameters for every step: each row has its value, unit, kind (spec, measured,
// derived, estimate) and source, or says how an estimate was derived. kDefaultParams is the B200
// set the model runs with unless a file replaces values (load_model_params, `--model-params FILE`,
// e.g. results/params_h100.txt); model_parameters_markdown prints the table the model runs with.
// timing.cpp reads the values through p() (timing_params.h).
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim_api.h"
#include "timing_params.h"

namespace tcsim {
using namespace detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Parameters. One set for every step; where no public figure exists the value is an estimate
// and says how it was derived. Values in the units shown; timing.cpp converts them to ns.
struct Param {
  const char* name;
  double value;
  const char* unit;
  const char* kind;  // spec, measured, derived, estimate
  const char* source;
};

// The table the model runs with: kDefaultParams (the B200 set), or a file's values
// (load_model_params, `--model-params FILE`).
const Param kDefaultParams[kNumParams] = {
    {"SM clock", 1.86, "GHz", "derived",
     "2.25 PFLOPS dense BF16 (spec, glennklockwood.com/garden/processors/B200) / (148 SMs x 8192 FLOP/clk)"},
    {"tcgen05.mma issue interval", 0.5, "cycles per unit of N", "measured",
     "II = N/2 cycles for any K and type (SemiAnalysisAI/microbench-blackwell umma_throughput, umma_latency)"},
    {"tcgen05.mma latency beyond II, M=128", 136, "cycles", "measured", "SemiAnalysis umma_latency fit (SS operands)"},
    {"tcgen05.mma latency beyond II, M=64", 120, "cycles", "measured", "SemiAnalysis umma_latency fit (SS operands)"},
    {"tcgen05.mma latency beyond II, cta_group::2", 134, "cycles", "measured",
     "SemiAnalysis umma_latency: 130-138; the middle"},
    {"MMA shared-memory operand read", 128, "B/cycle/SM", "derived",
     "SS throughput below N=128 in SemiAnalysis umma_throughput"},
    {"TMA latency", 662, "ns", "derived",
     "SemiAnalysis tma2d_latency, 1 CTA/SM, small tiles: 1413 cycles at 1.965 GHz = 719 ns (the raw medians scatter "
     "490-1455 ns), less the per-box time below (54 ns) and a 1 KiB box's bytes (3 ns), which the model charges separately"},
    {"TMA throughput of one SM", 311, "GB/s", "derived",
     "bytes beyond the per-box time: 32 KB boxes at 159 ns all-in (StuartSul/gpu-experiments blackwell/098: one SM, 16 x 32 KB "
     "per launch, 4.62 us a launch timed over back-to-back launches, less one latency (0.72 us) and the GPU's gap between "
     "queued kernels (1.35 us, measured on the H200: 'evaluator: GPU gap' below)) less the 34% per-box share (H100 split)"},
    {"L2 bandwidth (chip)", 20400, "GB/s", "measured", "StuartSul/gpu-experiments blackwell/094 (TMA, working set <= ~80 MB)"},
    {"HBM bandwidth (chip)", 7200, "GB/s", "measured", "SemiAnalysis tma2d_throughput (TMA from HBM)"},
    {"global memory sector", 32, "B", "spec", "CUDA C++ Best Practices Guide: global accesses are served in 32-byte sectors"},
    {"instruction issue", 1, "cycles", "estimate", "one warp instruction per cycle per scheduler"},
    {"barrier wake-up", 20, "cycles", "estimate", "__syncthreads, cluster barrier, warp collectives (mbarrier waits: the hand-off below); not published"},
    {"tcgen05.ld rate per sub-partition", 128, "B/cycle", "estimate",
     "32 lanes x 4 B per cycle: one 32-bit register per lane per cycle; not published"},
    {"tcgen05.ld latency", 30, "cycles", "estimate", "of the order of a shared-memory load; not published"},
    {"global store rate of one SM", 32, "B/cycle", "measured",
     "H100: one CTA storing full 32-byte sectors, 64 KiB in 1.03 us beyond setup = 1 sector per cycle at 1.98 GHz "
     "(results/micro_h100.csv); carried per SM clock (risk: a wider B200 L1->L2 path)"},
    {"store buffer of one SM", 2048, "B", "estimate",
     "from the H100 store cases: a thread's last store returns about when its SM's stores have drained (one CTA: span 4.10 us, "
     "drain 4.14 us); 4 warp instructions of 512 B keep the model's spans within 0.3 us of the GPU's; carried unchanged"},
    {"remote mbarrier arrive", 75, "cycles", "measured",
     "H100: a cluster-of-2 ping-pong through mapa with .release.cta arrives takes 149 ns per hand-off, 39 ns more than in one "
     "CTA (75 cycles at 1.98 GHz; results/micro_h100.csv, 2026-11-26); carried per SM clock (risk: Blackwell's distributed "
     "shared memory path). The .release.cluster form adds the membar below"},
    {"tcgen05.alloc", 100, "cycles", "estimate", "not published"},
    {"CTA launch", 200, "ns", "estimate", "block scheduler placing a CTA on a free SM; not published"},
    {"mma.sync m16n8k16", 4, "cycles per warp", "estimate",
     "placeholder, not shared between warps, not published; --predict refuses step 00 (its global loads are not timed either)"},
    {"clusterlaunchcontrol.try_cancel round trip", 600, "ns", "estimate",
     "issue to response in shared memory: a request to the grid's launch scheduler and back, taken as about one "
     "TMA latency (719 ns above) less the data; not published"},
    {"SMs", 148, "SMs", "spec", "74 of 80 per die enabled (chipsandcheese B200 article); the SM count --predict runs with"},
    {"store: partial-sector cost", 2.0, "full sectors", "measured",
     "H100 (tests/gpu/micro.cu, results/micro_h100.csv): a 32-byte sector a warp store fills only partly costs 1.9x (one SM) "
     "to 2.15x (all SMs) a full one; carried unchanged (a property of the L1/L2 write path; risk: Blackwell may merge partial writes better)"},
    {"store: chip L2 write rate, lines", 382, "lines/ns", "measured",
     "H100 303 lines/ns (128-byte lines per warp store instruction, fit of the one-wave store cases, results/micro_h100.csv) "
     "x 1.26 = B200/H100 L2 read bandwidth (20.4 TB/s published / 16.2 TB/s H100 TMA, params_h100.txt); risk: B200's two-die L2"},
    {"store: chip L2 write rate, sectors", 261, "sectors/ns", "measured",
     "H100 207 full 32-byte sectors/ns (6.6 TB/s, same fit) x 1.26 (same rule and risk)"},
    {"CTA setup: fence.mbarrier_init", 400, "cycles", "measured",
     "H100: 16 mbarrier.init + fence + __syncthreads take 206 ns per CTA (408 cycles at 1.98 GHz; globaltimer steps of 32 ns); "
     "carried per SM clock"},
    {"TMA: SM time per box", 101, "cycles", "derived",
     "H100: 131 ns per box + bytes / 129 GB/s fits boxes of 4-32 KiB within 2% (results/micro_h100.csv; the H200 the same: "
     "1-2 KiB boxes 143 ns, results/micro_h200.csv, 2026-11-28); B200: the published all-in time of a 32 KB box (159 ns, "
     "'TMA throughput of one SM' above) split in the H100's proportion, 34% per box = 54 ns; risk: the split is Hopper's"},
    {"mbarrier hand-off", 220, "cycles", "measured",
     "H100: arrive -> blocked try_wait loop resumes, 111 ns (ping-pong of two warps, 1000 round trips) = 220 cycles at 1.98 GHz; "
     "carried per SM clock"},
    {"TMA: chip L2 requests", 218, "requests/ns", "measured",
     "H100: 16-byte-wide rows from every SM, 173 rows/ns (each row one request; results/micro_h100.csv) x 1.26 "
     "(B200/H100 L2 read bandwidth, as for stores); risk: the same"},
    {"global atomic round trip", 600, "cycles", "estimate",
     "atom.acq_rel.gpu: an L2 round trip plus the release's wait for earlier stores; not published for B200"},
    {"DSMEM: remote load latency", 191, "cycles", "measured",
     "H100: a dependent chain of ld.shared::cluster.u32 in the peer CTA, 94-99 ns a load (results/micro_h100.csv, "
     "2026-11-26); own CTA 19 ns; carried per SM clock (risk: not published for B200)"},
    {"DSMEM: SM-to-SM bandwidth", 21, "B/cycle", "measured",
     "H100: bulk copies of 8-32 KiB into the peer CTA, 41 GB/s a pair, the same with every SM's pair busy (st.shared::cluster.v4 "
     "from 4 warps: the same 41 GB/s); carried per SM clock (risk: not published for B200)"},
    {"DSMEM: bulk copy latency", 80, "cycles", "measured",
     "H100: a 16-byte cp.async.bulk shared::cta -> shared::cluster bounced between the pair, 151 ns one way, less a hand-off; "
     "carried per SM clock"},
    {"release membar (.release.cluster arrive)", 593, "cycles", "measured",
     "H100: the GPU-scope membar the compiler puts before mbarrier.arrive.release.cluster and barrier.cluster.arrive.release: "
     "ping-pong .release.cluster less .release.cta, 297 ns a hand-off (results/micro_h100.csv, 2026-11-26), on top of waiting for "
     "the warp's global stores to drain; carried per SM clock (risk: B200's two-die L2, whose far half is slower to reach: "
     "chipsandcheese B200 article)"},
    {"cluster barrier round trip", 96, "cycles", "measured",
     "H100: barrier.cluster.arrive.relaxed + wait in a cluster of 2, 49 ns each (the release form adds the membar above: 388 ns); "
     "carried per SM clock"},
    {"TMA multicast: receiver's share of a box", 0.5, "of the box's SM time", "measured",
     "H100 (results/micro_h100_multicast.csv, 2026-11-26): rank 0 multicasting every 32 KiB box or bulk copy to 4 CTAs takes "
     "1.04-1.05x its own loads (the issuer pays once), but CTAs taking turns in clusters of 2 and 4 run at 0.84 / 0.66 (boxes) "
     "and 0.74 / 0.53 (bulk copies) of their own loads, not 0.5 / 0.25: each delivery also keeps the receiving SM's TMA unit "
     "busy 0.68 / 0.55 / 0.47 / 0.37 of a box; the middle, carried per box"},
    // The two below are not kernel costs: a published gpu-mode competition time is a call's, timed with
    // events around 50 back-to-back calls (reference-kernels problems/nvidia/eval_better_bench.py), so
    // call = max(kernel + the GPU's gap between queued kernels, the host's time per call).
    {"evaluator: GPU gap between queued kernels", 1350, "ns", "measured",
     "H200: a 1-CTA kernel spinning 10 us, 50 launches back to back between two events, 11.35 us a call "
     "(tests/gpu/call_floor.cu, results/call_floor_h200.csv, 2026-11-28); carried to the B200"},
    {"evaluator: host time per call", 8540, "ns", "measured",
     "H200 host: a Python function calling one torch op (torch 2.11) on preallocated tensors, 50 calls between two "
     "events (tests/gpu/call_floor.py, results/call_floor_h200.csv, 2026-11-28); the competition's host is another CPU"},
    {"evaluator: host time per call, CuTe DSL", 20800, "ns", "measured",
     "B200 host: a compiled CuTe DSL function called with its 5 argument objects rebuilt each call (NVIDIA/cutlass "
     "issue #3418; 13.5 us with them reused); a submission in the task's CuTe DSL template builds 5 pointers per call"},
    {"L2 capacity", 126, "MB", "spec",
     "B200: 126 MB of L2 (chipsandcheese B200 article); the model's L2 keeps the most recently used 4 KiB pages up to "
     "this x the share below, and charges HBM again for a sector read after its page was evicted"},
    {"L2: share a streamed working set keeps", 0.9, "of the capacity", "measured",
     "H200 (results/micro_h200_l2.csv, make l2-sweep, 2026-11-28): every SM streaming a buffer through TMA bulk copies "
     "keeps the full L2 rate (8.6-8.8 TB/s) up to 52 MiB of the 60 MiB L2, is at 6.1 TB/s at 56 MiB and at the HBM "
     "rate (4.6 TB/s) from 64 MiB on: 54 / 60 = 0.9; carried to the B200 (risk: its L2 is split over two dies)"},
};

// Ranges: the parameters that are estimates or carried from the H100 with a risk, as factors on
// the point value (low, high) and which end makes kernels faster. Published B200 figures and spec
// values have none. One table for every step, like the values.
struct Range {
  ParamId id;
  double lo, hi;
  bool higher_is_faster;  // a rate or a capacity (B/cycle, GB/s, bytes) rather than a cost
  const char* reason;
};
const Range kRanges[] = {
    {kClockGHz, 0.85, 1.056, true,
     "derived from the dense BF16 spec; SemiAnalysis's TMA runs saw 1.965 GHz; under sustained load B200s drop to about "
     "1.58 GHz (flashinfer-ai/flashinfer PR #2899)"},
    {kTmaLatencyNs, 0.7, 1.3, false, "derived; the published small-box latencies scatter 490-1455 ns"},
    {kTmaSmBytesPerNs, 0.7, 1.2, true,
     "derived by the H100 split; one SM's published TMA rate varies 101-126 GB/s a launch; the B200's gap between queued "
     "kernels is not measured: 0.3-2.0 us gives a 32 KB box 119-224 ns all-in"},
    {kTmaBoxCycles, 0.5, 1.5, false,
     "the H100's split of the published all-in rate, whose gap between launches is the H200's (0.3-2.0 us: 40-76 ns a box); "
     "on the H100 the cluster micro's own-load ring ran 260 ns per 32 KiB box where the fitted ring takes 385 ns"},
    {kInstructionCycles, 1.0, 2.0, false, "estimate: one issue per cycle, more with dependencies or contention"},
    {kWakeCycles, 0.5, 3.0, false, "estimate, not published"},
    {kTmemLdBytesPerCycle, 0.5, 2.0, true, "estimate, not published"},
    {kTmemLdLatencyCycles, 0.5, 3.0, false, "estimate, not published"},
    {kStoreBytesPerCycle, 1.0, 2.0, true,
     "carried from the H100 per clock; a B200 SM's path to L2 may be wider (its L1 bandwidth is higher: chipsandcheese)"},
    {kStoreBufferBytes, 0.5, 2.0, true, "estimate from the H100 store cases"},
    {kRemoteArriveCycles, 0.5, 2.0, false, "carried from the H100; Blackwell's DSMEM path is not published"},
    {kTmemAllocCycles, 0.5, 10.0, false, "estimate, not published (an SM-wide allocator; could be far dearer)"},
    {kCtaLaunchNs, 0.5, 3.0, false, "estimate, not published"},
    {kClcRoundTripNs, 0.5, 2.0, false, "estimate, not published"},
    {kPartialSectorCost, 0.5, 1.0, false,
     "measured on the H100 (2x); a B200 may merge a thread's two 16-byte halves of a sector (down to 1x); only a B200 can tell"},
    {kChipWriteLinesPerNs, 0.8, 2.0, true,
     "H100 x 1.26 (the L2 read ratio); a B200's write path may scale with its two dies' L2 partitions rather than with "
     "the read rate measured through TMA; only a B200 can tell (with every SM storing, this path sets the row-per-thread "
     "epilogue's pace)"},
    {kChipWriteSectorsPerNs, 0.8, 2.0, true, "as the lines rate above"},
    {kFenceInitCycles, 0.8, 2.0, false,
     "carried from the H100 per clock; on the H100 the first cluster barrier after the inits took 1.4x what the model adds up"},
    {kMbarHandoffCycles, 0.8, 1.5, false, "carried from the H100 per clock"},
    {kTmaChipRequestsPerNs, 0.8, 1.25, true, "H100 x 1.26 (L2 read ratio); risk: the B200's two-die L2"},
    {kGlobalAtomicCycles, 0.5, 2.0, false, "estimate, not published"},
    {kDsmemLatencyCycles, 0.5, 2.0, false, "carried from the H100; not published for B200"},
    {kDsmemBytesPerCycle, 0.5, 2.0, true, "carried from the H100; not published for B200"},
    {kDsmemCopyCycles, 0.5, 2.0, false, "carried from the H100; not published for B200"},
    {kReleaseMembarCycles, 0.33, 2.5, false,
     "carried from the H100; the same micro build on the H200 (same driver, 2026-11-28) gives 196 cycles (99 ns; "
     "results/micro_h200.csv): the membar is GPU-dependent; a GPU-scope membar waits for the L2, split over two dies on the "
     "B200 (chipsandcheese)"},
    {kClusterBarrierCycles, 0.8, 2.0, false, "carried from the H100 per clock"},
    {kMulticastReceiveShare, 0.74, 1.36, false, "four H100 cases give 0.37-0.68 of a box; not published for B200"},
    {kHbmBytesPerNs, 0.82, 1.0, true,
     "the competition's B200 measured 5914.8 GB/s (gau-nernst/gpu-mode-kernels nvidia/README.md); SemiAnalysis's TMA reads 7.2 TB/s"},
    {kEvalGapNs, 0.7, 1.3, false, "measured on the H200; the B200's front end is not measured"},
    {kEvalHostCallNs, 0.425, 1.0, false,
     "the same H200 host without Python: a C++ launch with two tensor maps encoded, 3.63 us a call (results/call_floor_h200.csv); "
     "the competition's host CPU is not known"},
    {kEvalHostCallCuteDslNs, 0.65, 1.55, false,
     "13.5 us with the argument objects reused (NVIDIA/cutlass #3418); 32 us for a 19-argument CuTe DSL no-op "
     "(meta-pytorch/tritonbench PR #669)"},
    {kL2UsableShare, 0.7, 1.1, true,
     "H200 knee 52-56 MiB of 60 (0.87-0.93); a published B200 TMA sweep holds the L2 rate to ~80 MB of 126 (0.63: "
     "StuartSul/gpu-experiments blackwell/094), the two dies' L2 halves may each cache the other's data"},
};
int g_bound = 0;  // set_model_bound
double g_factor[kNumParams] = {};  // per parameter: 1, or the range's factor at the bound

Param g_params[kNumParams];
std::vector<std::string> g_param_sources;  // storage for sources read from a file
bool g_params_ready = false;
void ensure_params() {
  if (g_params_ready) return;
  for (int i = 0; i < kNumParams; ++i) g_params[i] = kDefaultParams[i], g_factor[i] = 1.0;
  g_params_ready = true;
}

}  // namespace

namespace detail {

double p(ParamId id) {
  ensure_params();
  return g_params[id].value * g_factor[id];
}

}  // namespace detail

void set_model_bound(int bound) {
  ensure_params();
  g_bound = bound < 0 ? -1 : bound > 0 ? 1 : 0;
  for (int i = 0; i < kNumParams; ++i) g_factor[i] = 1.0;
  if (g_bound != 0)
    for (const Range& r : kRanges) g_factor[r.id] = (g_bound < 0) == r.higher_is_faster ? r.hi : r.lo;
}
int model_bound() { return g_bound; }

std::string model_ranges_markdown() {
  ensure_params();
  std::string out = "| parameter | point | low | high | unit | why a range |\n|---|---|---|---|---|---|\n";
  char v[96];
  for (const Range& r : kRanges) {
    const Param& q = g_params[r.id];
    snprintf(v, sizeof v, "%g | %g | %g", q.value, q.value * r.lo, q.value * r.hi);
    out += std::string("| ") + q.name + " | " + v + " | " + q.unit + " | " + r.reason + " |\n";
  }
  return out;
}

std::string model_parameters_markdown() {
  std::string out = "| parameter | value | unit | kind | source |\n|---|---|---|---|---|\n";
  char v[32];
  ensure_params();
  for (const Param& q : g_params) {
    snprintf(v, sizeof v, "%g", q.value);
    out += std::string("| ") + q.name + " | " + v + " | " + q.unit + " | " + q.kind + " | " + q.source + " |\n";
  }
  return out;
}

// A parameter file: one parameter a line, `name = value` or `name = value ; kind ; source`, with
// the names --model-params prints; `#` starts a comment line; parameters not named keep their B200
// value. Every line is checked before any value is taken, so a bad file changes nothing.
std::string load_model_params(const std::string& path) {
  ensure_params();
  std::ifstream in(path);
  if (!in) return "--model-params: cannot read '" + path + "'";
  Param next[kNumParams];
  for (int i = 0; i < kNumParams; ++i) next[i] = g_params[i];
  std::vector<std::string> sources;
  sources.reserve(2 * kNumParams);
  std::string line;
  int lineno = 0;
  auto trim = [](std::string x) {
    const size_t a = x.find_first_not_of(" \t\r"), b = x.find_last_not_of(" \t\r");
    return a == std::string::npos ? std::string() : x.substr(a, b - a + 1);
  };
  std::vector<std::pair<int, std::array<std::string, 2>>> texts;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    const size_t eq = t.find('=');
    if (eq == std::string::npos) return where + "expected 'name = value', got '" + t + "'";
    const std::string name = trim(t.substr(0, eq));
    std::string rest = t.substr(eq + 1), kind, source;
    const size_t semi = rest.find(';');
    if (semi != std::string::npos) {
      const std::string tail = rest.substr(semi + 1);
      rest = rest.substr(0, semi);
      const size_t semi2 = tail.find(';');
      kind = trim(tail.substr(0, semi2));
      source = semi2 == std::string::npos ? "" : trim(tail.substr(semi2 + 1));
    }
    int id = -1;
    for (int i = 0; i < kNumParams; ++i)
      if (name == kDefaultParams[i].name) id = i;
    if (id < 0) return where + "unknown parameter '" + name + "' (--model-params prints the names)";
    const std::string v = trim(rest);
    char* end = nullptr;
    const double value = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(value) || value < 0)
      return where + "'" + v + "' is not a non-negative number (parameter '" + name + "')";
    if ((id == kClockGHz || id == kSms || id == kL2BytesPerNs || id == kHbmBytesPerNs || id == kTmaSmBytesPerNs ||
         id == kStoreBytesPerCycle || id == kChipWriteSectorsPerNs || id == kChipWriteLinesPerNs || id == kTmaChipRequestsPerNs || id == kTmemLdBytesPerCycle ||
         id == kSmemOperandBytesPerCycle || id == kSectorBytes || id == kDsmemBytesPerCycle) && value == 0)
      return where + "parameter '" + name + "' is a rate or a count and cannot be 0";
    if (kind.size() && kind != "spec" && kind != "measured" && kind != "derived" && kind != "estimate")
      return where + "kind '" + kind + "' is not one of spec, measured, derived, estimate";
    next[id].value = value;
    texts.push_back({id, {kind, source}});
  }
  g_param_sources.clear();
  g_param_sources.reserve(2 * texts.size());
  for (auto& [id, ks] : texts) {
    g_param_sources.push_back(ks[0]);
    if (!ks[0].empty()) next[id].kind = g_param_sources.back().c_str();
    g_param_sources.push_back(ks[1]);
    if (!ks[1].empty()) next[id].source = g_param_sources.back().c_str();
  }
  for (int i = 0; i < kNumParams; ++i) g_params[i] = next[i];
  return "";
}

double model_param(const std::string& name) {
  ensure_params();
  for (const Param& q : g_params)
    if (name == q.name) return q.value;
  throw SimError("tcsim: no timing-model parameter named '" + name + "'");
}

void reset_model_params() {
  ensure_params();
  for (int i = 0; i < kNumParams; ++i) g_params[i] = kDefaultParams[i];
  g_param_sources.clear();
}

}  // namespace tcsim
