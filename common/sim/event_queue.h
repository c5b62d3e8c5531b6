// event_queue.h — the timing model's event queue (timed_run.cpp run_grid_timed, timing.cpp
// heap_push): events come out in the order of their model time, equal times in the order they
// were pushed (their issue number, `seq`).
//
// Most events share their time with others (the lanes of a warp woken by one barrier phase, or
// resuming after the same wake-up cost: over 90% of the pushes of a --predict), so the queue keeps
// one FIFO per distinct time ("bucket") and a min-heap of the buckets' times: a push to a time
// that already has a bucket is an append, and the heap holds the distinct times only. The order is
// exactly that of one heap of (time, seq): within a bucket the events are in push order, which
// is seq order. Buckets and their storage are reused, so a run allocates only while the number
// of distinct pending times grows. internal.h includes it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "open_index.h"

namespace tcsim {
namespace detail {

struct Fiber;

struct Event {
  double t;
  uint64_t seq;
  int kind;  // 0: thread, 1: async op (by seq), 2: tcgen05 queue head of `f`
  Fiber* f;
  uint64_t stamp;
  // kind 0: about where the thread's stack pointer will be when it resumes (its saved one, or the
  // frame of the yield that queued it), so that the run loop can fetch its stack without first
  // reading its Fiber (timed_run.cpp).
  const char* sp = nullptr;
};

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  // The earliest event (equal times: the first pushed). Not empty().
  const Event& front() const {
    const Bucket& b = buckets_[heap_.front().id];
    return b.ev[b.head];
  }
  // The events that follow front() at its time (up to n of them), for prefetching.
  // The candidates for the event after front(): the next of its bucket, and the first of the
  // buckets that are the heap's children of the root (the next times).
  template <class F>
  void for_next(F&& f) const {
    const Bucket& b = buckets_[heap_.front().id];
    if (b.head + 1 < b.ev.size()) f(b.ev[b.head + 1]);
    for (size_t i = 1; i < 3 && i < heap_.size(); ++i) {
      const Bucket& c = buckets_[heap_[i].id];
      f(c.ev[c.head]);
    }
  }
  void push(const Event& e) {
    const uint64_t key = key_of(e.t);
    if (has_last_ && key == last_key_) {  // the same time as the last push (a notify's lanes)
      buckets_[last_id_].ev.push_back(e);
      return;
    }
    bool fresh = false;
    uint32_t* slot = index_.find_or_add(key, &fresh);
    uint32_t id;
    if (!fresh) {
      id = *slot;
    } else {
      if (free_.empty()) {
        id = uint32_t(buckets_.size());
        buckets_.emplace_back();
      } else {
        id = free_.back();
        free_.pop_back();
      }
      *slot = id;
      heap_.push_back(Top{e.t, id});
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
    buckets_[id].ev.push_back(e);
    has_last_ = true;
    last_key_ = key;
    last_id_ = id;
  }
  Event pop() {  // not empty()
    const uint32_t id = heap_.front().id;
    Bucket& b = buckets_[id];
    const Event e = b.ev[b.head++];
    if (b.head == b.ev.size()) {  // the time has no event left: retire its bucket
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
      index_.erase(key_of(e.t));
      if (id == last_id_) has_last_ = false;
      b.ev.clear();
      b.head = 0;
      free_.push_back(id);
    } else if (b.head >= 1024 && 2 * b.head >= b.ev.size()) {  // a long-lived time: drop what was taken
      b.ev.erase(b.ev.begin(), b.ev.begin() + long(b.head));
      b.head = 0;
    }
    return e;
  }

 private:
  struct Bucket {
    std::vector<Event> ev;
    size_t head = 0;  // ev[head..] are pending
  };
  struct Top {
    double t;
    uint32_t id;
  };
  static bool later(const Top& a, const Top& b) { return a.t > b.t; }  // min-heap; live times are distinct
  static uint64_t key_of(double t) {
    t += 0.0;  // -0 and +0 are one time
    uint64_t k;
    std::memcpy(&k, &t, sizeof k);
    return k;
  }
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_;
  std::vector<Top> heap_;
  OpenIndex index_;  // time (bits) -> its bucket (open_index.h)
  // The bucket of the last push while it lives: a push at the same time skips the index.
  bool has_last_ = false;
  uint64_t last_key_ = 0;
  uint32_t last_id_ = 0;
};

}  // namespace detail
}  // namespace tcsim
