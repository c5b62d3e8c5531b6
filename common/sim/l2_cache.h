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
#include <vector>

namespace tcsim {
namespace detail {

// Page number -> index, open addressing with linear probing (a look-up per row of every TMA box:
// std::unordered_map's node per entry was a cache miss each).
struct PageIndex {
  std::vector<uint64_t> keys;  // page + 1; 0: empty
  std::vector<uint32_t> vals;
  size_t count = 0;
  int shift = 64;
  size_t home(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift); }
  void clear() {
    std::fill(keys.begin(), keys.end(), 0);
    count = 0;
  }
  // The value slot of `page`, made (0) if missing (*fresh); valid until the next insertion.
  uint32_t* find_or_add(uint64_t page, bool* fresh) {
    if (2 * (count + 1) > keys.size()) grow();
    const uint64_t key = page + 1;
    const size_t mask = keys.size() - 1;
    for (size_t i = home(key);; i = (i + 1) & mask) {
      if (keys[i] == key) {
        *fresh = false;
        return &vals[i];
      }
      if (keys[i] == 0) {
        keys[i] = key;
        vals[i] = 0;
        count++;
        *fresh = true;
        return &vals[i];
      }
    }
  }
  void erase(uint64_t page) {
    const uint64_t key = page + 1;
    const size_t mask = keys.size() - 1;
    size_t i = home(key);
    while (keys[i] != key) {
      if (keys[i] == 0) return;
      i = (i + 1) & mask;
    }
    // Backward shift: entries after the hole whose home is not in (hole, j] move into it.
    for (size_t j = (i + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
      const size_t h = home(keys[j]);
      const bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
      if (!stays) {
        keys[i] = keys[j];
        vals[i] = vals[j];
        i = j;
      }
    }
    keys[i] = 0;
    count--;
  }
  void grow() {
    std::vector<uint64_t> old_keys = std::move(keys);
    std::vector<uint32_t> old_vals = std::move(vals);
    const size_t cap = old_keys.empty() ? 4096 : 2 * old_keys.size();
    keys.assign(cap, 0);
    vals.assign(cap, 0);
    shift = 64 - __builtin_ctzll(cap);
    count = 0;
    for (size_t i = 0; i < old_keys.size(); ++i)
      if (old_keys[i]) {
        bool fresh = false;
        *find_or_add(old_keys[i] - 1, &fresh) = old_vals[i];
      }
  }
};

struct L2Cache {
  static constexpr uint32_t kNone = ~0u;
  struct Page {
    uint64_t page = 0;
    std::array<uint64_t, 2> bits{};       // its sectors in L2
    uint32_t prev = kNone, next = kNone;  // towards the most / least recently used
  };
  std::vector<Page> pages;
  std::vector<uint32_t> spare;                   // indices of evicted pages, for reuse
  PageIndex where;                               // page -> index in `pages`
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
    } else {
      unlink(at);
    }
    const uint32_t i = at;
    push_front(i);
    return pages[i];
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
