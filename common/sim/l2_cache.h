// l2_cache.h — the timing model's L2 (timing.cpp charges HBM for what it says is not there).
//
// Models a finite L2 as an LRU of 4 KiB pages, each with the 32-byte sectors of it that were read
// or written: it holds sectors up to `capacity` bytes (the table's L2 capacity x the share a
// streamed working set keeps, docs/timing_model.md "L2 capacity"); the least recently used page
// goes first, with all its sectors, and a sector read again after its page went is read from HBM
// again. Writes (TMA stores, global stores) take room like reads; their write-back to HBM is not
// charged. One look-up per page a range touches, the page's sectors taken 64 at a time; the
// recency order is a queue of stamped uses (below). Included by timing.cpp only.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "open_index.h"

namespace tcsim {
namespace detail {

// Page number -> index in `pages`: open addressing (open_index.h; a look-up per row of every TMA
// box: std::unordered_map's node per entry was a cache miss each).
using PageIndex = OpenIndex;

// The recency order is kept lazily: each use of a page stamps it (a counter) and appends (page,
// stamp) to a queue; the least recently used page is the first queue entry whose stamp is still
// its page's (later uses left newer entries behind it). A use writes its own page's entry and the
// queue's tail only: a linked list's unlink wrote its two neighbours, at random places. The queue
// is squeezed (stale entries dropped, order kept) when most of it is stale.
struct L2Cache {
  static constexpr uint32_t kNone = ~0u;
  struct Page {
    uint64_t page = 0;
    std::array<uint64_t, 2> bits{};  // its sectors in L2
    uint64_t stamp = 0;              // its last use (0: not in L2)
  };
  struct Use {
    uint32_t idx;    // into `pages`
    uint64_t stamp;  // the page's stamp when it was used
  };
  std::vector<Page> pages;
  std::vector<uint32_t> spare;  // indices of evicted pages, for reuse
  PageIndex where;              // page -> index in `pages`
  std::vector<Use> uses;        // uses[head..]: in order of use, oldest first (some stale)
  size_t head = 0;
  uint64_t clock = 0;
  uint32_t mru = kNone;
  uint64_t resident = 0, capacity = 0;  // bytes of sectors in L2; the most it keeps
  uint64_t evicted_sectors = 0;         // since the launch began

  void reset(uint64_t bytes) {
    pages.clear();
    spare.clear();
    where.clear();
    uses.clear();
    head = 0;
    clock = 0;
    mru = kNone;
    resident = evicted_sectors = 0;
    capacity = bytes;
  }
  bool live(const Use& u) const { return pages[u.idx].stamp == u.stamp; }
  // The page's entry, now the most recently used.
  Page& use(uint64_t page) {
    bool fresh = false;
    uint32_t& at = *where.find_or_add(page, &fresh);
    if (fresh) {
      if (spare.empty()) {
        at = uint32_t(pages.size());
        pages.emplace_back();
      } else {
        at = spare.back();
        spare.pop_back();
      }
      pages[at] = Page{};
      pages[at].page = page;
    } else if (mru == at) {
      return pages[at];
    }
    const uint32_t i = at;
    pages[i].stamp = ++clock;
    uses.push_back(Use{i, clock});
    mru = i;
    if (uses.size() - head > 4096 && uses.size() - head > 2 * where.count) squeeze();
    return pages[i];
  }
  void squeeze() {
    size_t n = 0;
    for (size_t k = head; k < uses.size(); ++k)
      if (live(uses[k])) uses[n++] = uses[k];
    uses.resize(n);
    head = 0;
  }
  // Evicts least recently used pages, never `keep` (the page in use), until the sectors fit.
  void evict(uint32_t keep) {
    while (resident > capacity) {
      while (head < uses.size() && !live(uses[head])) ++head;
      if (head == uses.size() || uses[head].idx == keep) return;
      const uint32_t i = uses[head++].idx;
      Page& g = pages[i];
      const uint64_t n = uint64_t(__builtin_popcountll(g.bits[0]) + __builtin_popcountll(g.bits[1]));
      resident -= 32 * n;
      evicted_sectors += n;
      g.stamp = 0;
      where.erase(g.page);
      spare.push_back(i);
    }
  }
  // Adds the sector bytes of [addr, addr+len) to *bytes and those not in L2 (read from HBM) to
  // *fresh; all of them are in L2 afterwards.
  void sectors(uint64_t addr, uint64_t len, uint64_t* bytes, uint64_t* fresh) {
    const uint64_t first = addr / 32, last = (addr + len - 1) / 32;
    *bytes += (last - first + 1) * 32;
    for (uint64_t sct = first; sct <= last;) {
      const uint64_t page = sct >> 7, end = std::min(last, page << 7 | 127);  // this page's part: [sct, end]
      Page& g = use(page);
      for (int w = 0; w < 2; ++w) {
        const uint64_t lo = std::max(sct & 127, uint64_t(64 * w)), hi = std::min(end & 127, uint64_t(64 * w + 63));
        if (lo > hi) continue;
        const uint64_t n = hi - lo + 1;
        const uint64_t mask = (n == 64 ? ~0ull : ((1ull << n) - 1)) << (lo - 64 * w);
        const uint64_t added = 32 * uint64_t(__builtin_popcountll(mask & ~g.bits[w]));
        *fresh += added;
        resident += added;
        g.bits[w] |= mask;
      }
      evict(mru);
      sct = end + 1;
    }
  }
};

}  // namespace detail
}  // namespace tcsim
