// l2_cache.h — the timing model's L2 (timing.cpp charges HBM for what it says is not there).
//
// Models a finite L2 as an LRU of 4 KiB pages, each with the 32-byte sectors of it that were read
// or written: it holds sectors up to `capacity` bytes (the table's L2 capacity x the share a
// streamed working set keeps, docs/timing_model.md "L2 capacity"); the least recently used page
// goes first, with all its sectors, and a sector read again after its page went is read from HBM
// again. Writes (TMA stores, global stores) take room like reads; their write-back to HBM is not
// charged. One look-up per page a range touches, the page's sectors taken 64 at a time; the
// recency list is intrusive (indices into a vector). Included by timing.cpp only.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tcsim {
namespace detail {

struct L2Cache {
  static constexpr uint32_t kNone = ~0u;
  struct Page {
    uint64_t page = 0;
    std::array<uint64_t, 2> bits{};       // its sectors in L2
    uint32_t prev = kNone, next = kNone;  // towards the most / least recently used
  };
  std::vector<Page> pages;
  std::vector<uint32_t> spare;                   // indices of evicted pages, for reuse
  std::unordered_map<uint64_t, uint32_t> where;  // page -> index in `pages`
  uint32_t mru = kNone, lru = kNone;
  uint64_t resident = 0, capacity = 0;  // bytes of sectors in L2; the most it keeps
  uint64_t evicted_sectors = 0;         // since the launch began

  void reset(uint64_t bytes) {
    pages.clear();
    spare.clear();
    where.clear();
    mru = lru = kNone;
    resident = evicted_sectors = 0;
    capacity = bytes;
  }
  void unlink(uint32_t i) {
    Page& g = pages[i];
    (g.prev == kNone ? mru : pages[g.prev].next) = g.next;
    (g.next == kNone ? lru : pages[g.next].prev) = g.prev;
    g.prev = g.next = kNone;
  }
  void push_front(uint32_t i) {
    pages[i].next = mru;
    if (mru != kNone) pages[mru].prev = i;
    mru = i;
    if (lru == kNone) lru = i;
  }
  // The page's entry, now the most recently used.
  Page& use(uint64_t page) {
    auto [it, fresh] = where.try_emplace(page, 0u);
    if (fresh) {
      if (spare.empty()) {
        it->second = uint32_t(pages.size());
        pages.emplace_back();
      } else {
        it->second = spare.back();
        spare.pop_back();
      }
      pages[it->second] = Page{};
      pages[it->second].page = page;
    } else if (mru == it->second) {
      return pages[it->second];
    } else {
      unlink(it->second);
    }
    push_front(it->second);
    return pages[it->second];
  }
  // Evicts least recently used pages, never `keep` (the page in use), until the sectors fit.
  void evict(uint32_t keep) {
    while (resident > capacity && lru != kNone && lru != keep) {
      const uint32_t i = lru;
      Page& g = pages[i];
      const uint64_t n = uint64_t(__builtin_popcountll(g.bits[0]) + __builtin_popcountll(g.bits[1]));
      resident -= 32 * n;
      evicted_sectors += n;
      unlink(i);
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
