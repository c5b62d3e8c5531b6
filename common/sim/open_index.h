// open_index.h — a hash map from 64-bit keys to 32-bit values without a node per entry, for the
// timing model's hot look-ups (l2_cache.h: a page per TMA box row; event_queue.h: a bucket per
// distinct event time). Header only; included by those two.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tcsim {
namespace detail {

// A map from 64-bit keys (any value but ~0) to 32-bit values, by open addressing with linear
// probing and backward-shift erasure: no allocation per entry, and a slot holds its key and value
// side by side, so that a look-up touches one cache line (std::unordered_map's node per entry was
// a cache miss each). The L2 model's page index and the event queue's index of its times.
struct OpenIndex {
  struct Slot {
    uint64_t key = 0;  // the key + 1; 0: empty
    uint32_t val = 0;
  };
  std::vector<Slot> slots;
  size_t count = 0;
  int shift = 64;
  // Keys that differ in their low 3 bits only (8 neighbouring pages: the rows of a TMA box are a
  // page or two apart) get neighbouring slots, two cache lines for the 8; the groups of 8 are
  // scattered by a multiplicative hash.
  size_t home(uint64_t key) const {
    return (size_t(((key >> 3) * 0x9E3779B97F4A7C15ull) >> shift) + size_t(key & 7)) & (slots.size() - 1);
  }
  void clear() {
    std::fill(slots.begin(), slots.end(), Slot{});
    count = 0;
  }
  // The value slot of `k`, made (0) if missing (*fresh); valid until the next insertion.
  uint32_t* find_or_add(uint64_t k, bool* fresh) {
    if (2 * (count + 1) > slots.size()) grow();
    const uint64_t key = k + 1;
    const size_t mask = slots.size() - 1;
    for (size_t i = home(key);; i = (i + 1) & mask) {
      Slot& s = slots[i];
      if (s.key == key) {
        *fresh = false;
        return &s.val;
      }
      if (s.key == 0) {
        s.key = key;
        s.val = 0;
        count++;
        *fresh = true;
        return &s.val;
      }
    }
  }
  void erase(uint64_t k) {
    const uint64_t key = k + 1;
    const size_t mask = slots.size() - 1;
    size_t i = home(key);
    while (slots[i].key != key) {
      if (slots[i].key == 0) return;
      i = (i + 1) & mask;
    }
    // Backward shift: entries after the hole whose home is not in (hole, j] move into it.
    for (size_t j = (i + 1) & mask; slots[j].key != 0; j = (j + 1) & mask) {
      const size_t h = home(slots[j].key);
      const bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
      if (!stays) {
        slots[i] = slots[j];
        i = j;
      }
    }
    slots[i] = Slot{};
    count--;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots);
    const size_t cap = old.empty() ? 4096 : 2 * old.size();
    slots.assign(cap, Slot{});
    shift = 64 - __builtin_ctzll(cap);
    count = 0;
    for (const Slot& s : old)
      if (s.key) {
        bool fresh = false;
        *find_or_add(s.key - 1, &fresh) = s.val;
      }
  }
};

}  // namespace detail
}  // namespace tcsim
