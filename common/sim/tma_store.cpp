// tma_store.cpp — the TMA store (cp.async.bulk.tensor global <- shared), the per-thread bulk
// async-groups that track it, and the generic -> async proxy rule for shared memory.
//
// Models (PTX ISA §9.7.9.25.5.2 cp.async.bulk.tensor, §9.7.9.25.6.1 cp.async.bulk.commit_group,
// §9.7.9.25.6.2 cp.async.bulk.wait_group, §9.7.12.4 fence.proxy.async, memory model §8.6 proxies):
//  * A store writes one box of a tensor map from shared memory laid out as a TMA load of that
//    box leaves it (dense, dimension 0 fastest, swizzled on the absolute shared address, §5.5.7);
//    elements outside the tensor are not written (clipping at the high edges; a negative
//    coordinate is refused: an H100 traps on it, see tests/gpu/tma_check.cu). It happens in two asynchronous
//    steps, each at a point the seed picks: the READ of the source (into a snapshot), and after
//    it the WRITE of the in-bounds elements to global memory.
//  * Bulk groups are per thread: a store joins the thread's open group, commit_group closes it,
//    wait_group N / wait_group.read N block until every group but the N most recently committed
//    has completed (.read: has read its source; the writes may still be in flight). A wait
//    forces the operations it waits for if the seed has not performed them yet.
//  * The proxy rule. Generic-proxy stores to shared memory (st_shared_generic, i.e. st.shared)
//    that the async proxy then reads need fence.proxy.async in the writing thread after the store
//    and, when another thread issues the TMA store, a synchronisation between that fence and the
//    issue. Checked per 16-byte chunk of the source when the store is issued ("missing
//    fence.proxy.async" / "TMA store source not ordered after its writer").
//  * Reuse of a source: a generic store into a chunk that a TMA store reads must come after the
//    issuing thread's wait_group.read covered that store, and, for another thread, after a
//    synchronisation with it ("shared memory overwritten under a TMA store"). Checked as a
//    protocol, so a seed that happened to perform the read early does not hide the bug.
//  * Exit: a thread must have committed its stores and waited for their reads (nothing else can
//    order the reads before the CTA's shared memory ends or is reused): "TMA store not waited for".
//  * Timing (timing.cpp, model_tma_store): the SM's store path and the chip's L2 write path, not the
//    TMA unit (an H100 ran TMA stores beside TMA loads at no cost to them: docs/timing_model.md).
// Not modelled: other store forms (1-D bulk, im2col, reductions, .L2::cache_hint), generic stores
// that do not go through st_shared_generic (plain C++ pointer writes are invisible here).
#include <algorithm>
#include <cstring>

#include "internal.h"

namespace tcsim {

namespace detail {
struct BulkStore {
  Fiber* issuer = nullptr;
  SrcLoc at{};
  Cta* cta = nullptr;
  TensorMapInfo map{};
  int32_t c[3] = {0, 0, 0};
  std::vector<uint32_t> chunk_addrs;  // shared::cta address of each 16-byte piece of the box, in box order
  std::vector<uint8_t> data;          // the source as read
  bool read = false, written = false;
  Stamp released;  // the issuer's wait_group(.read) that covered it (happens_before.h); none yet: 0
  double t_read = 0, t_written = 0;
};
}  // namespace detail

using namespace detail;

namespace {

uint32_t box_bytes(const TensorMapInfo& m) { return m.box[0] * m.elem_bytes * m.box[1] * (m.rank > 2 ? m.box[2] : 1); }

SmemChunk& chunk_at(Cta& cta, uint32_t addr) {
  if (cta.chunks.empty()) cta.chunks.resize(cta.smem_bytes / 16 + 1);
  return cta.chunks[((addr & kOffsetMask) - kSmemBase) / 16];
}

void perform_read(BulkStore& s) {
  if (s.read) return;
  s.read = true;
  s.data.resize(s.chunk_addrs.size() * 16);
  for (size_t i = 0; i < s.chunk_addrs.size(); ++i)
    memcpy(s.data.data() + 16 * i, s.cta->smem + (s.chunk_addrs[i] & kOffsetMask) - kSmemBase, 16);
}

void perform_write(BulkStore& s) {
  if (s.written) return;
  perform_read(s);
  s.written = true;
  if (g_options.skip_math) return;  // timing only: the bytes are counted, not moved
  const TensorMapInfo& m = s.map;
  const uint32_t eb = m.elem_bytes, row_bytes = m.box[0] * eb;
  const uint32_t n1 = m.rank > 1 ? m.box[1] : 1, n2 = m.rank > 2 ? m.box[2] : 1;
  uint8_t* gbase = reinterpret_cast<uint8_t*>(m.base);
  for (uint32_t i2 = 0; i2 < n2; ++i2)
    for (uint32_t i1 = 0; i1 < n1; ++i1) {
      const int64_t g1 = int64_t(s.c[1]) + i1, g2 = int64_t(s.c[2]) + i2;
      if ((m.rank > 1 && (g1 < 0 || g1 >= int64_t(m.dims[1]))) || (m.rank > 2 && (g2 < 0 || g2 >= int64_t(m.dims[2]))))
        continue;  // a row outside the tensor: clipped
      const uint8_t* row = s.data.data() + size_t(i1 + n1 * i2) * row_bytes;
      for (uint32_t i0 = 0; i0 < m.box[0]; ++i0) {
        const int64_t g0 = int64_t(s.c[0]) + i0;
        if (g0 < 0 || g0 >= int64_t(m.dims[0])) continue;  // clipped
        memcpy(gbase + g0 * eb + (m.rank > 1 ? g1 * int64_t(m.strides[0]) : 0) + (m.rank > 2 ? g2 * int64_t(m.strides[1]) : 0),
               row + size_t(i0) * eb, eb);
      }
    }
  s.data.clear();
  s.data.shrink_to_fit();
}

std::string describe(const BulkStore& s) { return "the TMA store issued by " + who(*s.issuer) + " at " + loc(s.at); }

}  // namespace

namespace detail {
// The async proxy is about to read the 16-byte piece of `cta`'s shared memory at `a` (a TMA
// store's or a bulk copy's source): the last generic store to it was fenced by its writer, and
// that fence is ordered before the running thread's issue.
void check_async_proxy_read(Cta& cta, uint32_t a, const char* what) {
  Fiber& f = me();
  SmemChunk& ch = chunk_at(cta, a);
  if (!ch.writer) return;  // never written by a generic store (e.g. a TMA load put it there)
  if (ch.fenced && hb_ordered(f, ch.fenced)) return;  // the common case: checked per 16 bytes
  const bool store = strstr(what, "store") != nullptr;
  const std::string op = store ? "store" : "copy";
  if (!ch.fenced)
    fail_here("missing fence.proxy.async",
              std::string(what) + " reads shared memory at " + hex(a) + ", which " + who(*ch.writer) + " wrote at " +
                  loc(ch.at) + " with an ordinary (generic-proxy) store and no fence.proxy.async.shared::cta after "
                  "it; the " + (store ? "TMA store" : "bulk copy") + " reads in the async proxy and may see the old bytes. Each writing thread "
                  "fences its stores, then the threads synchronise, then one issues the " + op + " (PTX ISA §9.7.12.4, "
                  "memory model §8.6)");
  if (!hb_ordered(f, ch.fenced))
    fail_here(std::string(store ? "TMA store" : "bulk copy") + " source not ordered after its writer",
              std::string(what) + " reads shared memory at " + hex(a) + ", which " + who(*ch.writer) + " wrote at " +
                  loc(ch.at) + " and fenced, but that fence.proxy.async does not happen before this " + op +
                  ": no release of the writer after its fence (a __syncwarp, bar.sync, mbarrier arrive) is "
                  "acquired by this thread");
}
}  // namespace detail

void tma_store(const CUtensorMap* map, int rank, const int32_t* coords, uint32_t src, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  const char* what = "cp.async.bulk.tensor (store)";
  const TensorMapInfo m = decode_tensor_map(map, rank, what);
  const uint32_t bytes = box_bytes(m);
  const uint32_t align = m.swizzle_span ? 8 * m.swizzle_span : 128;
  if ((src & kOffsetMask) % align != 0)
    fail_here(m.swizzle_span ? "TMA source not aligned to its swizzle repeat" : "misaligned TMA source",
              std::string(what) + " source " + hex(src) + " must be " + std::to_string(align) + "-byte aligned" +
                  (m.swizzle_span ? " (the swizzle pattern repeats every 8 rows of the span)" : ""));
  for (int i = 0; i < rank; ++i)
    if (coords[i] < 0)
      fail_here("TMA store at a negative coordinate",
                std::string(what) + " with coordinate " + std::to_string(i) + " = " + std::to_string(coords[i]) +
                    ": an H100 stops such a store with an illegal-instruction error (make gpu-check: a negative row, "
                    "a negative column, with and without swizzle, 2026-11-24), where a load at negative coordinates "
                    "zero-fills; clipping only helps past the high edges");
  smem_ref(cta, src, bytes, "cp.async.bulk.tensor store source");  // shared::cta: this CTA, in bounds
  check_no_mbarrier_in(cta, src, bytes, "cp.async.bulk.tensor store source");
  auto s = std::make_shared<BulkStore>();
  s->issuer = &f;
  s->at = at;
  s->cta = &cta;
  s->map = m;
  for (int i = 0; i < rank; ++i) s->c[i] = coords[i];
  // The 16-byte pieces of the source, where the swizzle put them (rows of the box are whole
  // multiples of 16 bytes: validate() requires it).
  for (uint32_t lin = 0; lin < bytes; lin += 16)
    s->chunk_addrs.push_back(m.swizzle_span ? tcg::swizzle_addr(src + lin, m.swizzle_span) : src + lin);
  // The proxy rule, per piece: the last generic store to it was fenced by its writer, and that
  // fence is ordered before this issue (the same thread, or a synchronisation since the fence).
  for (uint32_t a : s->chunk_addrs) check_async_proxy_read(cta, a, what);
  for (uint32_t a : s->chunk_addrs) chunk_at(cta, a).reader = s;
  // No targets for the CTA-exit check: a wait_group performs what it waits for, and the issuing
  // thread cannot exit before its stores' reads were waited for (bulk_thread_exited), which is
  // before its CTA can exit; the writes need no CTA resource.
  AsyncOp rd{[s] { perform_read(*s); }, 0u, "a TMA store reading its source", &f, at};
  AsyncOp wr{[s] { perform_write(*s); }, 0u, "a TMA store", &f, at};
  // The rows it writes must lie in C's allocation, as its loads must (compute-sanitizer's memcheck
  // reports a TMA store through a map larger than its buffer on a GPU).
  std::vector<std::pair<uint64_t, uint32_t>> segments = box_segments(m, s->c, rank);
  check_box_in_allocation(segments, "cp.async.bulk.tensor (store; a row of the box, written through the tensor map)");
  if (timed()) {
    TmaRows rows;
    rows.bytes = bytes;
    rows.segments = std::move(segments);
    s->t_written = model_tma_store(cta, rows, &s->t_read);
    rd.t = s->t_read;
    wr.t = s->t_written;
    if (trace_cta(cta))
      trace_async(cta, "TMA store", "TMA store " + std::to_string(bytes / 1024) + " KiB", tcg::trace::kCatStore, f.t,
                  s->t_written);
  }
  push_async(std::move(rd));
  push_async(std::move(wr));
  f.bulk_open.push_back(std::move(s));
}

void bulk_commit_group(SrcLoc at) {
  tick(at);
  Fiber& f = me();
  // An empty group is legal (it completes at once); keep it so wait_group's counting matches.
  BulkGroup g;
  g.stores = std::move(f.bulk_open);
  g.at = at;
  f.bulk_open.clear();
  f.bulk_groups.push_back(std::move(g));
}

void bulk_wait_group(int n, bool read_only, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  const size_t keep = size_t(n);
  const size_t older = f.bulk_groups.size() > keep ? f.bulk_groups.size() - keep : 0;
  if (timed()) {  // the thread waits for the model's completion times
    double done = f.t;
    for (size_t i = 0; i < older; ++i)
      for (const auto& s : f.bulk_groups[i].stores) done = std::max(done, read_only ? s->t_read : s->t_written);
    if (done > f.t) {
      if (f.traced) trace_span(*f.cta, f.warp, read_only ? "wait_group.read" : "wait_group", tcg::trace::kCatWait, f.t, done);
      model_spend(f, done - f.t);
    }
  }
  const Stamp now = hb_stamp(f);
  for (size_t i = 0; i < older; ++i) {
    BulkGroup& g = f.bulk_groups[i];
    for (const auto& s : g.stores) {
      if (read_only) perform_read(*s);
      else perform_write(*s);
      if (!s->released) s->released = now;
    }
    g.read_waited = true;
  }
  // Groups at the front whose stores are all written are finished: nothing can wait on them.
  while (!f.bulk_groups.empty() && f.bulk_groups.front().read_waited &&
         std::all_of(f.bulk_groups.front().stores.begin(), f.bulk_groups.front().stores.end(),
                     [](const std::shared_ptr<BulkStore>& s) { return s->written; }))
    f.bulk_groups.pop_front();
}

void fence_proxy_async(SrcLoc at) {
  tick(at);
  Fiber& f = me();
  const Stamp now = hb_stamp(f);
  // Generic loads it has acquired so far are now ordered before its later async-proxy writes. (With
  // no load recorded anywhere, none can be among them: an older snapshot is as good.)
  if (g_sched->generic_reads) f.hb_at_proxy_fence = f.hb;
  for (uint32_t i : f.unfenced_chunks) {
    SmemChunk& ch = f.cta->chunks[i];
    if (ch.writer == &f && !ch.fenced) ch.fenced = now;
  }
  f.unfenced_chunks.clear();
  for (uint32_t i : f.unfenced_reads)
    for (GenericRead& r : f.cta->chunks[i].reads)
      if (r.reader == &f && !r.fenced) r.fenced = now;
  f.unfenced_reads.clear();
}

void st_shared_generic(uint32_t addr, const uint32_t* v, uint32_t bytes, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  if (addr % bytes != 0)
    fail_here("misaligned vector access", "st.shared.v4.b32 at " + hex(addr) + " is not " + std::to_string(bytes) +
                                              "-byte aligned (PTX ISA §5.4.2)");
  SmemRef r = smem_ref(cta, addr, bytes, "st.shared.v4.b32");
  check_no_mbarrier_in(cta, addr, bytes, "st.shared.v4.b32");
  SmemChunk& ch = chunk_at(cta, addr);
  if (ch.reader) {
    const BulkStore& s = *ch.reader;
    if (!s.released)
      fail_here("shared memory overwritten under a TMA store",
                "st.shared.v4.b32 writes " + hex(addr) + ", the source of " + describe(s) +
                    ", before a cp.async.bulk.wait_group.read of that thread covered the store; the store may still "
                    "read the buffer and would write the new bytes (or a mix) to global memory (PTX ISA §9.7.9.25.6.2)");
    if (!hb_ordered(f, s.released))
      fail_here("shared memory overwritten under a TMA store",
                "st.shared.v4.b32 writes " + hex(addr) + ", the source of " + describe(s) +
                    "; that thread's wait_group.read covered the store, but the wait does not happen before this "
                    "write (no release of that thread after the wait, a __syncwarp, bar.sync or mbarrier arrive, is "
                    "acquired by this thread), so the write is not ordered after the read");
    ch.reader.reset();
  }
  memcpy(cta.smem + r.off, v, bytes);
  if (ch.writer != &f || ch.fenced) f.unfenced_chunks.push_back(uint32_t(&ch - cta.chunks.data()));
  ch.writer = &f;
  ch.at = at;
  ch.fenced = Stamp{};
}

namespace detail {

void note_generic_read(Cta& cta, uint32_t addr, uint32_t bytes) {
  Fiber& f = me();
  for (uint32_t a = addr & ~15u; a < addr + bytes; a += 16) {
    SmemChunk& ch = chunk_at(cta, a);
    auto it = std::find_if(ch.reads.begin(), ch.reads.end(), [&f](const GenericRead& r) { return r.reader == &f; });
    if (it == ch.reads.end()) {
      it = ch.reads.insert(ch.reads.end(), GenericRead{&f, f.at, {}, {}});
      g_sched->generic_reads++;
    }
    it->at = f.at;
    it->read = hb_stamp(f);  // its latest read of the chunk; a fence must follow that one
    it->fenced = Stamp{};
    f.unfenced_reads.push_back(uint32_t(&ch - cta.chunks.data()));
  }
}

// The generic -> async direction's converse: the async proxy is about to write `bytes` at `addr` of
// `cta` on behalf of the running thread. Every generic load of those bytes since the last async write
// must be ordered before it through a proxy fence (PTX ISA §8.6 proxies, §8.9 causality order: only a
// proxy-preserved base causality order constrains which value a load of another proxy returns): the
// reader's fence.proxy.async after its load happens before this issue, or this thread executed
// fence.proxy.async after it had acquired the load. Without it the load may return the new bytes.
void check_async_write_after_reads(Cta& cta, uint32_t addr, uint32_t bytes, const char* what) {
  Fiber& u = me();
  for (uint32_t a = addr & ~15u; a < addr + bytes; a += 16) {
    SmemChunk& ch = chunk_at(cta, a);
    for (const GenericRead& r : ch.reads) {
      const bool ok = r.reader == &u ? bool(r.fenced)
                                     : (r.fenced && hb_ordered(u, r.fenced)) ||
                                           u.hb_at_proxy_fence.knows(r.read.agent, r.read.epoch);
      if (ok) continue;
      const bool ordered = hb_ordered(u, r.read);
      fail_here("generic-proxy read not fenced before an async-proxy write",
                std::string(what) + " writes shared memory at " + hex((cta.rank << kRankShift) | (a & kOffsetMask)) +
                    " of " + cta_name(cta) + " through the async proxy, which " +
                    (r.reader == &u ? std::string("this thread") : who(*r.reader)) + " read at " + loc(r.at) +
                    " with an ordinary (generic-proxy) load, and " +
                    (ordered ? std::string("no fence.proxy.async orders that load before this write: the reader "
                                           "fences after its load and before the release this thread acquires, or "
                                           "this thread fences after acquiring it (PTX ISA §8.6, the example of "
                                           "§9.7.13.17). Without it the load may return the new bytes")
                             : std::string("that load does not even happen before this write (no release of the "
                                           "reader after the load is acquired by this thread)")));
    }
    g_sched->generic_reads -= ch.reads.size();
    ch.reads.clear();  // this write is what later loads read
  }
}

}  // namespace detail

namespace detail {
void bulk_thread_exited(Fiber& f) {
  if (!f.bulk_open.empty())
    fail("tcsim: TMA store not waited for\n  " + who(f) + " exited with " + describe(*f.bulk_open.front()) +
         " never committed (cp.async.bulk.commit_group), so no wait_group could cover it; its read of shared memory "
         "is not ordered before the CTA's end");
  for (const BulkGroup& g : f.bulk_groups)
    if (!g.read_waited && !g.stores.empty())
      fail("tcsim: TMA store not waited for\n  " + who(f) + " exited with the bulk group committed at " + loc(g.at) +
           " (" + describe(*g.stores.front()) + ") not covered by a cp.async.bulk.wait_group(.read); only that wait "
           "orders the store's read of shared memory before the CTA's shared memory ends");
  // Its global writes complete before the kernel does; performing the outstanding ones now is one
  // of the orders the hardware allows (and the emulator drops a finished cluster's CTA-less work).
  for (const BulkGroup& g : f.bulk_groups)
    for (const auto& s : g.stores) perform_write(*s);
  f.bulk_groups.clear();
}
}  // namespace detail

}  // namespace tcsim
