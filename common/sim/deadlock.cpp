// deadlock.cpp — the deadlock report (scheduler.cpp calls it when every thread is blocked and no
// asynchronous work is pending): what each blocked thread waits on, lanes of a warp and warps of a
// CTA that wait on the same thing at the same line on one line, and CTAs whose blocked threads are
// all in the same state printed once ("CTAs (1,0,0)-(7,0,0): the same as CTA (0,0,0)"), so that a
// deadlock of a whole grid reads as one pattern, not one per CTA.
#include <algorithm>
#include <sstream>

#include "internal.h"

namespace tcsim {
namespace detail {

namespace {
// One CTA's blocked threads, a line per run of lanes of one warp that wait on the same thing at
// the same line. With `norm`, the names of the CTAs of its cluster are replaced by their rank
// relative to this one, so CTAs in the same state give the same text.
std::string blocked_lines(const Cta& cta, bool norm) {
  std::ostringstream o;
  auto text = [&](const Fiber& f) {
    std::string w = f.waits_on ? f.waits_on() : "?";
    if (!norm) return w;
    for (const Cta* c : cta.cluster->ctas) {
      const std::string name = cta_name(*c), tag = c == &cta ? "\x01self" : "\x01rank" + std::to_string(c->rank);
      for (size_t p = w.find(name); p != std::string::npos; p = w.find(name, p + tag.size())) w.replace(p, name.size(), tag);
    }
    return w;
  };
  struct Run {
    int warp, lane0, lane1;
    std::string where, what;
  };
  std::vector<Run> runs;
  size_t i = 0;
  while (i < cta.fibers.size()) {
    const Fiber& f = *cta.fibers[i];
    if (f.state != FState::kBlocked) {
      ++i;
      continue;
    }
    const std::string what = text(f);
    const std::string where = loc(f.at);
    size_t j = i + 1;
    while (j < cta.fibers.size() && cta.fibers[j]->warp == f.warp && cta.fibers[j]->state == FState::kBlocked &&
           loc(cta.fibers[j]->at) == where && text(*cta.fibers[j]) == what)
      ++j;
    runs.push_back(Run{f.warp, f.lane, cta.fibers[j - 1]->lane, where, what});
    i = j;
  }
  // Consecutive warps whose lanes wait on the same thing at the same line: one line ("warps 2-5").
  for (size_t r = 0; r < runs.size();) {
    size_t e = r + 1;
    while (e < runs.size() && runs[e].warp == runs[e - 1].warp + 1 && runs[e].lane0 == runs[r].lane0 &&
           runs[e].lane1 == runs[r].lane1 && runs[e].where == runs[r].where && runs[e].what == runs[r].what)
      ++e;
    o << "  " << (norm ? std::string("CTA") : cta_name(cta));
    if (e - r == 1) o << " warp " << runs[r].warp;
    else o << " warps " << runs[r].warp << "-" << runs[e - 1].warp;
    if (runs[r].lane0 == runs[r].lane1) o << " lane " << runs[r].lane0;
    else o << " lanes " << runs[r].lane0 << "-" << runs[r].lane1;
    o << " at " << runs[r].where << ": " << runs[r].what << "\n";
    r = e;
  }
  return o.str();
}
}  // namespace

// CTAs whose blocked threads are in the same state (the same lines, waiting on the same things,
// up to the names of the CTAs themselves) are reported once: "CTAs (1,0,0)-(7,0,0): the same as
// CTA (0,0,0)", so a deadlock of a whole grid reads as one pattern, not one per CTA.
std::string deadlock_report(Scheduler& s) {
  std::ostringstream o;
  o << "tcsim: deadlock\n  every thread is blocked and no asynchronous operation is pending. Blocked threads:\n";
  struct Group {
    std::string key;
    const Cta* first;
    std::vector<const Cta*> more;
  };
  std::vector<Group> groups;
  for (auto& clp : s.clusters)
    for (Cta* ctap : clp->ctas) {
      const std::string key = blocked_lines(*ctap, true);
      if (key.empty()) continue;
      bool found = false;
      for (Group& g : groups)
        if (g.key == key) {
          g.more.push_back(ctap);
          found = true;
          break;
        }
      if (!found) groups.push_back(Group{key, ctap, {}});
    }
  auto linear = [&s](const Cta* c) {
    return uint64_t(c->block_idx.x) + uint64_t(s.grid.x) * (c->block_idx.y + uint64_t(s.grid.y) * c->block_idx.z);
  };
  auto id = [](const Cta* c) {
    return "(" + std::to_string(c->block_idx.x) + "," + std::to_string(c->block_idx.y) + "," + std::to_string(c->block_idx.z) + ")";
  };
  for (Group& g : groups) {
    o << blocked_lines(*g.first, false);
    if (g.more.empty()) continue;
    std::sort(g.more.begin(), g.more.end(), [&](const Cta* a, const Cta* b) { return linear(a) < linear(b); });
    std::string list;
    for (size_t i = 0; i < g.more.size();) {  // runs of consecutive CTAs as "first-last"
      size_t j = i;
      while (j + 1 < g.more.size() && linear(g.more[j + 1]) == linear(g.more[j]) + 1) ++j;
      list += (list.empty() ? "" : ", ") + id(g.more[i]) + (j > i ? "-" + id(g.more[j]) : "");
      i = j + 1;
    }
    o << "  " << (g.more.size() == 1 ? "CTA " : "CTAs ") << list << ": the same as " << cta_name(*g.first)
      << (g.first->cluster->ctas.size() > 1 ? " (with their own cluster's CTAs)" : "") << "\n";
  }
  return o.str();
}

}  // namespace detail
}  // namespace tcsim
