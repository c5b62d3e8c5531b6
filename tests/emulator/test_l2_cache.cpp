// test_l2_cache.cpp — the timing model's finite L2 (common/sim/l2_cache.h): an LRU of 4 KiB pages
// holding the sectors read or written, up to a capacity; a sector read again after its page was
// evicted is read from HBM again (timing.cpp charges HBM for the `fresh` bytes).
//
// An L2 without a capacity (the model before it had one: every sector read once from HBM in a
// launch) fails the second case: the second sweep would read nothing from HBM.
#include <doctest/doctest.h>

#include <list>
#include <unordered_map>

#include "../../common/sim/l2_cache.h"

namespace {

using tcsim::detail::L2Cache;

// Reads [base, base + bytes) in 128-byte rows (a TMA box's rows); returns the bytes from HBM.
uint64_t sweep(L2Cache& c, uint64_t base, uint64_t bytes) {
  uint64_t total = 0, fresh = 0;
  for (uint64_t a = base; a < base + bytes; a += 128) c.sectors(a, 128, &total, &fresh);
  CHECK(total == bytes);
  return fresh;
}

}  // namespace

TEST_CASE("L2 model: a working set within the capacity comes from HBM once") {
  L2Cache c;
  c.reset(1 << 20);
  CHECK(sweep(c, 1 << 24, 512 << 10) == 512 << 10);
  CHECK(sweep(c, 1 << 24, 512 << 10) == 0);
  CHECK(c.resident == 512 << 10);
  CHECK(c.evicted_sectors == 0);
}

TEST_CASE("L2 model: a cyclic sweep past the capacity comes from HBM every time (LRU)") {
  L2Cache c;
  c.reset(1 << 20);
  CHECK(sweep(c, 1 << 24, 2 << 20) == 2 << 20);
  CHECK(sweep(c, 1 << 24, 2 << 20) == 2 << 20);
  CHECK(c.resident <= 1 << 20);
  CHECK(c.resident > (1 << 20) - 4096);  // evicted a page at a time: it stays nearly full
}

TEST_CASE("L2 model: a page used again is kept; the least recently used one goes") {
  L2Cache c;
  c.reset(64 << 10);  // 16 pages
  sweep(c, 0, 4096);  // page 0
  for (uint64_t p = 1; p < 40; ++p) {
    sweep(c, p * 4096, 4096);
    CHECK(sweep(c, 0, 4096) == 0);  // page 0, touched after every other page, is never the LRU
  }
  CHECK(sweep(c, 1 * 4096, 4096) == 4096);   // page 1 went long ago
  CHECK(sweep(c, 39 * 4096, 4096) == 0);     // page 39 is recent
}

TEST_CASE("L2 model: a page holds only the sectors read; a partial row costs its whole sectors") {
  L2Cache c;
  c.reset(1 << 20);
  uint64_t total = 0, fresh = 0;
  c.sectors(4096 + 16, 16, &total, &fresh);  // one 32-byte sector
  CHECK(total == 32);
  CHECK(fresh == 32);
  CHECK(c.resident == 32);
  total = fresh = 0;
  c.sectors(4096, 128, &total, &fresh);  // the line: 3 more sectors
  CHECK(fresh == 96);
  CHECK(c.resident == 128);
}

TEST_CASE("L2 model: the page index agrees with a std::unordered_map through insertions and erasures") {
  // Linear probing with backward-shift erasure: an erasure that left a hole before an entry whose
  // probe passed it would lose that entry (find_or_add would report it fresh).
  tcsim::detail::PageIndex idx;
  std::unordered_map<uint64_t, uint32_t> ref;
  uint64_t x = 12345;
  for (int step = 0; step < 200000; ++step) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t page = (x >> 33) % 20000;  // collisions and wrap-around in a table of 4096+
    if ((x >> 20) % 3 == 0) {
      idx.erase(page);
      ref.erase(page);
    } else {
      bool fresh = false;
      uint32_t* v = idx.find_or_add(page, &fresh);
      const bool ref_fresh = ref.count(page) == 0;
      REQUIRE(fresh == ref_fresh);
      if (fresh) *v = uint32_t(step), ref[page] = uint32_t(step);
      else REQUIRE(*v == ref[page]);
    }
    REQUIRE(idx.count == ref.size());
  }
}

namespace {
// The same model written the obvious way (a std::list in recency order): the reference for the
// stamped-queue LRU of l2_cache.h.
struct ListLru {
  struct Entry {
    uint64_t page;
    uint64_t bits[2];
  };
  std::list<Entry> order;  // most recent first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> at;
  uint64_t resident = 0, capacity = 0, evicted = 0;
  uint64_t sectors(uint64_t addr, uint64_t len) {
    uint64_t fresh = 0;
    for (uint64_t sct = addr / 32, last = (addr + len - 1) / 32; sct <= last; ++sct) {
      const uint64_t page = sct >> 7;
      auto it = at.find(page);
      if (it == at.end()) {
        order.push_front(Entry{page, {0, 0}});
        at[page] = order.begin();
      } else if (it->second != order.begin()) {
        order.splice(order.begin(), order, it->second);
      }
      Entry& e = order.front();
      const uint64_t bit = 1ull << (sct & 63);
      if (!(e.bits[(sct & 127) / 64] & bit)) fresh += 32, resident += 32;
      e.bits[(sct & 127) / 64] |= bit;
      while (resident > capacity && order.size() > 1) {  // never the page in use (the front)
        const Entry& v = order.back();
        const uint64_t n = uint64_t(__builtin_popcountll(v.bits[0]) + __builtin_popcountll(v.bits[1]));
        resident -= 32 * n;
        evicted += n;
        at.erase(v.page);
        order.pop_back();
      }
    }
    return fresh;
  }
};
}  // namespace

TEST_CASE("L2 model: the stamped-queue LRU evicts exactly as a list in recency order") {
  // Random reads over 48 pages with room for about 12: every call's HBM bytes, the resident bytes
  // and the evicted sectors must match the list's. A queue that took the first entry (stale or
  // not) as the least recently used page, or never squeezed, fails here or runs out of memory.
  for (uint64_t cap : {uint64_t(48) << 10, uint64_t(5000), uint64_t(1) << 20}) {
    L2Cache c;
    c.reset(cap);
    ListLru ref;
    ref.capacity = cap;
    uint64_t x = 987654321;
    for (int step = 0; step < 300000; ++step) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t page = (x >> 33) % 48, off = (x >> 20) % 4096, len = 1 + (x >> 45) % 600;
      uint64_t total = 0, fresh = 0;
      c.sectors(page * 4096 + off, len, &total, &fresh);
      REQUIRE(fresh == ref.sectors(page * 4096 + off, len));
      REQUIRE(c.resident == ref.resident);
      REQUIRE(c.evicted_sectors == ref.evicted);
    }
    CHECK(c.uses.size() - c.head <= 2 * c.where.count + 4096);  // squeezed as it goes
  }
}
