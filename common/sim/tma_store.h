// tma_store.h — what internal.h holds of TMA stores (tma_store.cpp) and of the rules between the
// generic and the async proxy: a store in flight, a thread's committed bulk groups, and a 16-byte
// chunk of shared memory as the proxy rules see it. internal.h includes it (and declares the
// types it names by pointer).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "happens_before.h"
#include "sim.h"

namespace tcsim {
namespace detail {

struct Cta;
struct Fiber;

// TMA stores and bulk groups (tma_store.cpp): a store in flight, and a committed bulk group of
// one thread (cp.async.bulk.commit_group); a shared-memory chunk as the proxy rules see it.
struct BulkStore;
struct BulkGroup {
  std::vector<std::shared_ptr<BulkStore>> stores;
  SrcLoc at{};               // the commit_group
  bool read_waited = false;  // a wait_group(.read) of the issuing thread covered it
};
struct GenericRead {           // a generic-proxy load of a chunk (tma_store.cpp proxy rules)
  Fiber* reader = nullptr;
  SrcLoc at{};
  Stamp read, fenced;          // the load; the reader's fence.proxy.async after it (none yet: 0)
};
struct SmemChunk {             // 16 bytes of a CTA's shared memory
  Fiber* writer = nullptr;     // the thread of the last generic-proxy store (st_shared_generic)
  SrcLoc at{};                 //   and where
  Stamp fenced;                // that thread's fence.proxy.async after the store (none yet: 0)
  std::shared_ptr<BulkStore> reader;  // the last TMA store whose source covers it
  std::vector<GenericRead> reads;     // generic loads since the last async-proxy write
};

// The proxy rules (tma_store.cpp, copies.cpp).
// The proxy rule in the other direction (tma_store.cpp): the running thread loads `bytes` at `addr`
// through the generic proxy; the async proxy is about to write there on its behalf (every such
// load must be ordered before the write through fence.proxy.async).
void note_generic_read(Cta& cta, uint32_t addr, uint32_t bytes);
void check_async_write_after_reads(Cta& cta, uint32_t addr, uint32_t bytes, const char* what);
// The running thread exits: it must have committed its TMA stores and waited for their reads.
void bulk_thread_exited(Fiber& f);
// The async proxy is about to read the 16-byte piece at `a` of `cta`'s shared memory (a TMA store's
// or a bulk copy's source): fails unless its last generic store was fenced and that fence is
// ordered before the running thread's issue (tma_store.cpp).
void check_async_proxy_read(Cta& cta, uint32_t a, const char* what);

}  // namespace detail
}  // namespace tcsim
