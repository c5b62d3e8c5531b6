// bounds.cpp — what bounds a launch on the timing model's clock (--predict, --trace): the model's
// own accounting, summed while it runs, not a second model. Per SM, the time each engine of the
// model is busy (the tensor core with MMAs and tcgen05.cp, the TMA unit with load boxes, the store
// path with global and TMA stores: exactly the intervals timing.cpp reserves on them); chip-wide,
// the L2 read, request and write paths and HBM; per barrier family and warp role, the time warps
// spend blocked in a wait (the family is the kernel's own wait annotation, "wait tma_full_bar",
// Phase in common/trace_buf.h; a wait without one is named by its instruction); and how many CTAs
// shared an SM, with what limits it. The harness prints it (common/harness/predict_bounds.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {

struct SmBusy {
  double engine[3] = {0, 0, 0};  // tensor core, TMA unit, store path
  uint32_t most_resident = 0;
  bool used = false;
  // While CTAs are resident: how many are in their mainloop (the MMA issuer's "mainloop" or "mma"
  // phase), and the time none was (the SM's tensor core has nothing to do: setup, epilogue, tail).
  // While one is, the engines' busy time reserved then (the mainloop's own bound).
  int in_main = 0, resident = 0;
  double last_t = 0, no_main_ns = 0, main_ns = 0, engine_main[3] = {0, 0, 0};
  void advance(double t) {
    if (resident > 0 && t > last_t) (in_main > 0 ? main_ns : no_main_ns) += t - last_t;
    last_t = std::max(last_t, t);
  }
};
struct WaitAcc {
  double ns = 0;
  // (CTA, warp) that waited; the CTA by its index in the grid, not its address (a retired CTA's
  // memory is reused by a later one, which would count their warps as one)
  std::unordered_set<uint64_t> warps;  // CTA index << 32 | warp
};

std::vector<SmBusy> g_sm;
double g_chip_busy[4] = {0, 0, 0, 0};
std::map<std::pair<std::string, std::string>, WaitAcc> g_waits;  // (barrier family, role)
// The entry of g_waits for (label, wait annotation, role), by the strings' addresses (the labels
// are string literals): a look-up per lane-0 wait without building its key's strings.
struct WaitKey {
  const char *label, *phase, *role;
  bool operator==(const WaitKey& o) const { return label == o.label && phase == o.phase && role == o.role; }
};
struct WaitKeyHash {
  size_t operator()(const WaitKey& k) const {
    return std::hash<const void*>()(k.label) ^ (std::hash<const void*>()(k.phase) * 31) ^ (std::hash<const void*>()(k.role) * 961);
  }
};
std::unordered_map<WaitKey, WaitAcc*, WaitKeyHash> g_wait_index;
Bounds g_bounds;

// sm_100 residency limits (as launch.cpp applies them).
constexpr double kSmemPerSm = 233472, kThreadsPerSm = 2048, kCtaSlots = 32;

}  // namespace

namespace detail {

void bounds_reset(const Scheduler& s) {
  g_sm.assign(s.sms.size(), SmBusy{});
  std::fill(std::begin(g_chip_busy), std::end(g_chip_busy), 0.0);
  g_waits.clear();
  g_wait_index.clear();
  g_bounds = Bounds{};
}

void bounds_engine(const Sm& sm, BoundsEngine e, double ns) {
  if (sm.id >= g_sm.size()) return;
  g_sm[sm.id].engine[int(e)] += ns;
  if (g_sm[sm.id].in_main > 0) g_sm[sm.id].engine_main[int(e)] += ns;
}

void bounds_chip(BoundsChip c, double ns) { g_chip_busy[int(c)] += ns; }

void bounds_resident(const Sm& sm) {
  if (sm.id >= g_sm.size()) return;
  SmBusy& m = g_sm[sm.id];
  m.used = true;
  m.most_resident = std::max<uint32_t>(m.most_resident, uint32_t(sm.resident.size()));
  m.advance(g_sched->now);
  m.resident++;
  g_bounds.ctas++;
}

void bounds_cta_exit(const Sm& sm, double t) {
  if (sm.id >= g_sm.size()) return;
  g_sm[sm.id].advance(t);
  g_sm[sm.id].resident--;
}

void bounds_phase(Fiber& f, const char* name, bool begin, bool draw, int arg) {
  if (!strncmp(name, "wait ", 5)) {
    if (begin) f.wait_phase = name, f.wait_arg = arg;
    else if (f.wait_phase && !strcmp(f.wait_phase, name)) f.wait_phase = nullptr;
    return;
  }
  if (begin && draw && !f.role && strcmp(name, "setup") && strcmp(name, "teardown")) f.role = name;
  if (draw && f.lane == 0 && (!strcmp(name, "mainloop") || !strcmp(name, "mma"))) {
    // A pair's MMAs (cta_group::2, issued by the even CTA) run on both SMs of the pair: its
    // mainloop counts for the peer's SM too, whose own MMA warp issues nothing.
    std::vector<const Sm*> sms{f.cta->sm};
    const std::vector<Cta*>& ctas = f.cta->cluster->ctas;
    if (g_sched->cta_group == 2 && (f.cta->rank ^ 1u) < ctas.size()) sms.push_back(ctas[f.cta->rank ^ 1u]->sm);
    for (const Sm* sm : sms) {
      if (sm->id >= g_sm.size()) continue;
      SmBusy& m = g_sm[sm->id];
      m.advance(f.t);
      m.in_main += begin ? 1 : -1;
    }
  }
}

std::string wait_span_name(const Fiber& f, const char* label) {
  const bool mbar = label && !strcmp(label, "mbarrier wait");
  if (!mbar || !f.wait_phase) return label ? label : "wait";
  return std::string(f.wait_phase) + (f.wait_arg >= 0 ? "[" + std::to_string(f.wait_arg) + "]" : "");
}

void bounds_wait(const Fiber& f, const char* label, double ns) {
  if (f.lane != 0) return;  // a warp's wait, counted once
  const bool mbar = label && !strcmp(label, "mbarrier wait");
  WaitAcc*& slot = g_wait_index[WaitKey{label, mbar ? f.wait_phase : nullptr, f.role}];
  if (!slot) {
    const std::string family = mbar && f.wait_phase ? std::string(f.wait_phase + 5)
                               : mbar               ? "mbarrier (no wait annotation)"
                                                    : std::string(label ? label : "wait");
    slot = &g_waits[{family, f.role ? f.role : "setup"}];
  }
  WaitAcc& w = *slot;
  w.ns += ns;
  w.warps.insert(uint64_t(linear_cta(*f.cta)) << 32 | uint32_t(f.warp));
}

void bounds_finish(const Scheduler& s) {
  Bounds& b = g_bounds;  // (b.ctas was counted as CTAs became resident)
  b.kernel_ns = s.end;
  if (s.end <= 0) return;
  double sum[3] = {0, 0, 0}, mx[3] = {0, 0, 0}, no_main = 0, main = 0, in_main[3] = {0, 0, 0};
  for (const SmBusy& m : g_sm) {
    if (!m.used) continue;
    b.sms_used++;
    no_main += m.no_main_ns;
    main += m.main_ns;
    for (int e = 0; e < 3; ++e) in_main[e] += m.engine_main[e];
    b.ctas_per_sm = std::max(b.ctas_per_sm, int(m.most_resident));
    for (int e = 0; e < 3; ++e) sum[e] += m.engine[e], mx[e] = std::max(mx[e], m.engine[e]);
  }
  const double n = std::max(1, b.sms_used);
  b.tensor_core = sum[0] / n / s.end, b.tma_unit = sum[1] / n / s.end, b.store_path = sum[2] / n / s.end;
  b.tensor_core_max = mx[0] / s.end, b.tma_unit_max = mx[1] / s.end, b.store_path_max = mx[2] / s.end;
  b.l2_read = g_chip_busy[0] / s.end, b.l2_requests = g_chip_busy[1] / s.end, b.hbm = g_chip_busy[2] / s.end;
  b.l2_write = g_chip_busy[3] / s.end;
  b.no_mainloop = no_main / n / s.end;
  b.mainloop = main / n / s.end;
  if (main > 0)
    b.tensor_core_in_mainloop = in_main[0] / main, b.tma_unit_in_mainloop = in_main[1] / main,
    b.store_path_in_mainloop = in_main[2] / main;
  // What limits the CTAs per SM: the first of the three limits to bind.
  const double by_smem = std::floor(kSmemPerSm / std::max(1u, s.smem_per_cta));
  const double by_threads = std::floor(kThreadsPerSm / std::max(1u, s.block.x));
  const double by_slots = std::min<double>(kCtaSlots, s.max_ctas_per_sm);
  b.ctas_per_sm_limit = int(std::min({by_smem, by_threads, by_slots}));
  b.smem_per_cta = s.smem_per_cta;
  b.smem_per_sm = uint32_t(kSmemPerSm);
  b.limited_by = by_smem <= by_threads && by_smem <= by_slots ? "shared memory"
                 : by_threads <= by_slots                     ? "threads"
                 : s.max_ctas_per_sm < kCtaSlots              ? "--sim-ctas-per-sm"
                                                              : "CTA slots";
  for (const auto& [key, w] : g_waits) {
    Bounds::Wait x;
    x.barrier = key.first;
    x.role = key.second;
    x.warps = int(w.warps.size());
    std::map<uint32_t, bool> ctas;
    for (const uint64_t cw : w.warps) ctas[uint32_t(cw >> 32)] = true;
    x.ctas = int(ctas.size());
    x.share = w.ns / double(w.warps.size()) / s.end;
    b.waits.push_back(x);
  }
  std::sort(b.waits.begin(), b.waits.end(), [](const Bounds::Wait& a, const Bounds::Wait& c) { return a.share > c.share; });
}

}  // namespace detail

const Bounds& last_bounds() { return g_bounds; }

}  // namespace tcsim
