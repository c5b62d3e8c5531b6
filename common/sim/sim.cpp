// sim.cpp — the tcgen05 emulator: CUDA threads as fibers, shared memory, mbarriers, TMA, TMEM
// and tcgen05.mma, executed with the data layouts the PTX ISA defines.
//
// Execution model (docs/emulator.md explains it for readers):
//  * Every CUDA thread is a fiber (ucontext) with its own stack. A fiber runs until it blocks
//    (barrier, mbarrier wait, warp-collective instruction) or reaches a preemption point (any
//    emulated instruction, with a probability drawn from the seed). All CTAs of a cluster are
//    resident together; clusters run one after another.
//  * Asynchronous work (TMA copies, tcgen05.mma / commit) is queued when issued and performed
//    later, at a point the seeded scheduler chooses: TMA copies in any order, tcgen05 operations
//    of one thread in issue order (they are "pipelined", PTX ISA §9.7.16.6.2). Data is moved
//    when the operation completes, so a kernel that reads too early reads stale (poisoned) data.
//  * Shared memory and TMEM start filled with NaN bit patterns for the same reason.
//  * Every rule the emulator can check is checked; a violation stops the launch with a
//    diagnostic (SimError) naming CTA, warp, lane, instruction and kernel source line.
// Fibers switch with _setjmp/_longjmp between stacks; glibc's fortified longjmp would reject
// that as a jump into an "uninitialised stack frame", so fortification is off in this file.
#undef _FORTIFY_SOURCE
#include "sim.h"

#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../descriptors.h"

namespace tcsim {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kSmemBase = 0x400;          // dynamic smem begins after 1 KiB reserved (as on sm_90+)
constexpr uint32_t kMaxDynamicSmem = 232448;   // sm_100 per-CTA dynamic shared memory limit
constexpr size_t kStackBytes = 256 * 1024;
constexpr uint32_t kTmemPoison = 0xFFC0DEADu;  // a NaN
constexpr int kNumNamedBarriers = 16;

Options g_options;
Stats g_stats;
// Incremented whenever the emulation makes progress; the watchdog thread reads it.
std::atomic<uint64_t> g_heartbeat{0};

// ---------------------------------------------------------------------------------------------
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
  size_t below(size_t n) { return size_t(next() % n); }
};

std::string hex(uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}
std::string loc(SrcLoc at) {
  if (!at.file) return "?";
  const char* f = at.file;
  if (const char* s = strstr(f, "steps/")) f = s;
  else if (const char* s2 = strstr(f, "common/")) f = s2;
  else if (const char* s3 = strstr(f, "tests/")) f = s3;
  return std::string(f) + ":" + std::to_string(at.line);
}

struct Cta;
struct Fiber;
// Threads blocked on one object (an mbarrier, a CTA barrier, a warp collective). The object
// notifies its queue when its state changes, so waking is proportional to the waiters.
using WaitQueue = std::vector<Fiber*>;

struct Mbar {
  uint32_t phase = 0;
  uint32_t expected = 0;
  int64_t pending = 0;
  int64_t tx = 0;
  SrcLoc init_at{};
  WaitQueue waiters;
};

struct PendingLd {
  uint32_t* dst;
  uint32_t lane, col;
};

// One warp's tcgen05.ld: read from TMEM at a point the scheduler chooses between the issue and
// the warp's tcgen05.wait::ld (which forces it if it has not happened yet).
struct LdBatch {
  Cta* cta;
  SrcLoc at;
  std::vector<PendingLd> regs;
  bool done = false;
};

// An asynchronous operation (a copy, an MMA, a commit, a TMEM load): performed later, when the
// scheduler picks it.
using AsyncOp = std::function<void()>;

enum class FState { kRunnable, kBlocked, kDone };

struct Fiber {
  ucontext_t ctx{};  // the initial context: fresh stack, entry fiber_entry
  jmp_buf jb;        // where the fiber resumes once it has run
  bool started = false;
  void* stack = nullptr;
  ThreadVars vars{};
  int tid = 0, warp = 0, lane = 0;
  Cta* cta = nullptr;
  FState state = FState::kBlocked;         // made runnable when the launch starts
  int run_idx = -1;                        // position in Scheduler::runnable, -1 if not there
  bool has_tc_ops = false;                 // listed in Scheduler::tc_busy
  std::function<bool()> ready;             // while blocked: may it continue?
  std::function<std::string()> waits_on;   // while blocked: what for (deadlock report)
  SrcLoc at{};                             // source line of the current instruction
  std::vector<std::shared_ptr<LdBatch>> pending_ld;  // tcgen05.ld not yet waited for
  // Ordering of tcgen05 operations against thread synchronisation (PTX ISA §9.7.16.6.4):
  // a thread synchronisation since the last tcgen05.fence::after_thread_sync, and a tcgen05
  // operation since the last tcgen05.fence::before_thread_sync (or tcgen05.commit).
  const char* sync_pending_fence = nullptr;
  SrcLoc sync_at{};
  const char* tc_pending_fence = nullptr;
  SrcLoc tc_at{};
  std::deque<AsyncOp> tc_ops;              // issued tcgen05 async ops, completed in order
};

// A warp-collective (.sync.aligned) instruction in progress.
struct Collective {
  const char* op = nullptr;
  SrcLoc at{};
  int arrived = 0;
  uint64_t generation = 0;
  std::array<void*, 32> data{};
  WaitQueue waiters;
};

struct CtaBarrier {
  uint32_t arrived = 0;
  uint32_t expected = 0;
  uint64_t generation = 0;
  WaitQueue waiters;
};

struct TmemAlloc {
  uint32_t col, ncols;
  int warp;
  SrcLoc at;
};

struct Cta {
  uint3 block_idx{};
  uint32_t rank = 0;  // %cluster_ctarank
  std::vector<uint8_t> smem_storage;
  uint8_t* smem = nullptr;
  uint32_t smem_bytes = 0;
  std::map<uint32_t, Mbar> mbars;  // keyed by shared::cta address
  std::vector<uint32_t> tmem;      // 128 lanes x 512 columns
  std::vector<TmemAlloc> allocs;
  bool relinquished = false;
  std::vector<Fiber*> fibers;
  std::vector<Collective> warps;
  std::vector<int> warp_exited;
  int exited = 0;
  CtaBarrier bars[kNumNamedBarriers];
};

struct Scheduler {
  jmp_buf main_jb;  // where a fiber returns to the scheduler
  Fiber* cur = nullptr;
  Rng rng{1};
  double p_preempt = 0.2, p_async = 0.3;
  bool failed = false;
  std::string error;
  std::vector<std::unique_ptr<Cta>> ctas;
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<AsyncOp> async_ops;  // TMA and bulk copies, tcgen05.ld reads: complete in any order
  std::vector<Fiber*> runnable;  // fibers that may run now (order irrelevant: picks are random)
  std::vector<Fiber*> tc_busy;   // fibers with queued tcgen05 operations
  size_t done = 0;               // fibers that have exited
  const std::function<void()>* body = nullptr;
  dim3 grid, block;
};

Scheduler* g_sched = nullptr;
std::vector<void*> g_stack_pool;

// ---------------------------------------------------------------------------------------------
// Failure: record the diagnostic and leave the fiber for good (or throw, on the scheduler's stack).
[[noreturn]] void fail(const std::string& msg) {
  Scheduler& s = *g_sched;
  if (s.cur) {
    s.failed = true;
    s.error = msg;
    _longjmp(s.main_jb, 1);  // never resumed
  }
  throw SimError(msg);
}

Fiber& me() {
  if (!g_sched || !g_sched->cur) {
    fprintf(stderr, "tcsim: a device function was called outside an emulated kernel\n");
    abort();
  }
  return *g_sched->cur;
}

std::string who(const Fiber& f) {
  std::ostringstream o;
  o << "CTA (" << f.cta->block_idx.x << "," << f.cta->block_idx.y << "," << f.cta->block_idx.z << ") warp " << f.warp
    << " lane " << f.lane << " (thread " << f.tid << ")";
  return o.str();
}

[[noreturn]] void fail_here(const std::string& kind, const std::string& detail) {
  Fiber& f = me();
  fail("tcsim: " + kind + "\n  " + who(f) + " at " + loc(f.at) + ":\n  " + detail);
}

void yield() {
  Scheduler& s = *g_sched;
  Fiber* f = s.cur;
  if (_setjmp(f->jb) == 0) _longjmp(s.main_jb, 1);
}

// Every emulated instruction passes here: it counts, checks the budget and may be preempted.
void tick(SrcLoc at) {
  Fiber& f = me();
  f.at = at;
  g_heartbeat.fetch_add(1, std::memory_order_relaxed);
  if (++g_stats.instructions > g_options.instruction_budget)
    fail_here("livelock (instruction budget exhausted)",
              "the launch executed more than " + std::to_string(g_options.instruction_budget) +
                  " emulated instructions; a thread probably spins forever. Raise the budget if the problem is just big.");
  if (g_sched->rng.uniform() < g_sched->p_preempt) yield();
}

void set_runnable(Fiber* f) {
  Scheduler& s = *g_sched;
  f->state = FState::kRunnable;
  f->ready = nullptr;
  f->waits_on = nullptr;
  if (f->run_idx < 0) {
    f->run_idx = int(s.runnable.size());
    s.runnable.push_back(f);
  }
}

void unset_runnable(Fiber* f) {
  Scheduler& s = *g_sched;
  if (f->run_idx < 0) return;
  Fiber* last = s.runnable.back();
  s.runnable[size_t(f->run_idx)] = last;
  last->run_idx = f->run_idx;
  s.runnable.pop_back();
  f->run_idx = -1;
}

// Blocks the running thread on `q` until ready() holds; whoever changes the state that
// ready() reads calls notify(q).
void block_until(WaitQueue& q, std::function<bool()> ready, std::function<std::string()> waits_on) {
  if (ready()) return;
  Fiber& f = me();
  f.state = FState::kBlocked;
  f.ready = std::move(ready);
  f.waits_on = std::move(waits_on);
  unset_runnable(&f);
  q.push_back(&f);
  yield();
}

void notify(WaitQueue& q) {
  size_t keep = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    Fiber* f = q[i];
    if (f->state == FState::kBlocked && f->ready && f->ready()) set_runnable(f);
    else q[keep++] = f;
  }
  q.resize(keep);
}

// A thread synchronisation (mbarrier wait, bar.sync, __syncwarp) just completed in this thread.
void note_thread_sync(const char* what, SrcLoc at) {
  Fiber& f = me();
  f.sync_pending_fence = what;
  f.sync_at = at;
}

// A thread synchronisation that other threads will rely on (bar.sync, mbarrier.arrive) is about
// to happen: tcgen05 operations this thread issued before it must be fenced first.
void check_fence_before(const char* what) {
  Fiber& f = me();
  if (f.tc_pending_fence)
    fail_here("missing tcgen05.fence::before_thread_sync",
              std::string(what) + " follows " + f.tc_pending_fence + " at " + loc(f.tc_at) +
                  " with no tcgen05.fence::before_thread_sync (or tcgen05.commit) in between, so other threads "
                  "synchronising with this one are not ordered after that tcgen05 operation (PTX ISA §9.7.16.6.4)");
}

// A tcgen05 operation is being issued: it must be fenced after any earlier thread sync.
void tcgen05_op(const char* what) {
  Fiber& f = me();
  if (f.sync_pending_fence)
    fail_here("missing tcgen05.fence::after_thread_sync",
              std::string(what) + " follows " + f.sync_pending_fence + " at " + loc(f.sync_at) +
                  " with no tcgen05.fence::after_thread_sync in between, so it is not ordered after that "
                  "synchronisation and may act on stale data (PTX ISA §9.7.16.6.4)");
  f.tc_pending_fence = what;
  f.tc_at = f.at;
}

void push_tc_op(Fiber& f, AsyncOp op) {
  f.tc_ops.push_back(std::move(op));
  if (!f.has_tc_ops) {
    f.has_tc_ops = true;
    g_sched->tc_busy.push_back(&f);
  }
}

// ---------------------------------------------------------------------------------------------
// Shared memory addressing. A shared::cta address is kSmemBase + offset (rank bits at 24+ are
// reserved for shared::cluster addresses of 2-SM steps).
struct SmemRef {
  Cta* cta;
  uint32_t off;  // byte offset into cta->smem
};

SmemRef smem_ref(Cta& cta, uint32_t addr, uint32_t bytes, const char* what) {
  const uint32_t rank = addr >> 24, a = addr & 0xFFFFFFu;
  if (rank != cta.rank)
    fail_here("shared memory access outside this CTA",
              std::string(what) + " at shared address " + hex(addr) + " names CTA rank " + std::to_string(rank) +
                  "; this CTA is rank " + std::to_string(cta.rank));
  if (a < kSmemBase || uint64_t(a) + bytes > uint64_t(kSmemBase) + cta.smem_bytes)
    fail_here("shared memory out of bounds",
              std::string(what) + " touches [" + hex(addr) + ", " + hex(uint64_t(addr) + bytes) +
                  ") but the CTA's dynamic shared memory is [" + hex(kSmemBase) + ", " +
                  hex(uint64_t(kSmemBase) + cta.smem_bytes) + ")");
  return SmemRef{&cta, a - kSmemBase};
}

uint8_t* smem_ptr(Cta& cta, uint32_t addr, uint32_t bytes, const char* what) {
  SmemRef r = smem_ref(cta, addr, bytes, what);
  return cta.smem + r.off;
}

// Fails if [addr, addr + bytes) covers an initialised mbarrier: its state would be destroyed.
void check_no_mbarrier_in(Cta& cta, uint32_t addr, uint32_t bytes, const char* what) {
  const uint32_t a = addr & 0xFFFFFFu;
  auto it = cta.mbars.lower_bound(a >= 7 ? a - 7 : 0);
  if (it != cta.mbars.end() && it->first < a + bytes)
    fail_here("write over a live mbarrier",
              std::string(what) + " writes [" + hex(addr) + ", " + hex(uint64_t(addr) + bytes) +
                  "), which contains the mbarrier at " + hex(it->first) + " (initialised at " + loc(it->second.init_at) +
                  ")");
}

Mbar& mbar_at(Cta& cta, uint32_t bar, const char* what) {
  if (bar % 8 != 0)
    fail_here("misaligned mbarrier", std::string(what) + ": mbarrier address " + hex(bar) + " is not 8-byte aligned");
  smem_ref(cta, bar, 8, what);
  auto it = cta.mbars.find(bar & 0xFFFFFFu);
  if (it == cta.mbars.end())
    fail_here("uninitialised mbarrier",
              std::string(what) + " uses the mbarrier at " + hex(bar) + ", which no mbarrier.init has initialised");
  return it->second;
}

std::string describe_mbar(const Mbar& b) {
  std::ostringstream o;
  o << "the barrier is in phase " << b.phase << " (parity " << (b.phase & 1) << ") with " << b.pending << " of "
    << b.expected << " arrivals pending and tx-count " << b.tx;
  return o.str();
}

// Phase completion: pending arrivals and tx-count both zero (PTX ISA §9.7.13.15.2).
void mbar_check_phase(Mbar& b, uint32_t addr, const std::string& by) {
  if (b.pending == 0 && b.tx < 0)
    fail("tcsim: mbarrier tx-count underflow\n  the mbarrier at " + hex(addr) + " (initialised at " + loc(b.init_at) +
         ") received " + std::to_string(-b.tx) + " bytes more than expect_tx announced for phase " +
         std::to_string(b.phase) + "; last update by " + by + ". Is the expect_tx byte count too small?");
  if (b.pending == 0 && b.tx == 0) {
    b.phase++;
    b.pending = b.expected;
    notify(b.waiters);
  }
}

void mbar_do_arrive(Mbar& b, uint32_t addr, uint32_t count, const std::string& by) {
  if (b.pending < int64_t(count))
    fail("tcsim: mbarrier arrival overflow\n  " + by + " arrives on the mbarrier at " + hex(addr) +
         " but its current phase has no pending arrivals left (" + describe_mbar(b) + ")");
  b.pending -= count;
  mbar_check_phase(b, addr, by);
}

void mbar_add_tx(Mbar& b, uint32_t addr, int64_t delta, const std::string& by) {
  b.tx += delta;
  constexpr int64_t kLimit = (1 << 20) - 1;  // PTX ISA §9.7.13.15.1: tx-count range
  if (b.tx > kLimit || b.tx < -kLimit)
    fail("tcsim: mbarrier tx-count out of range\n  " + by + " moves the tx-count of the mbarrier at " + hex(addr) +
         " to " + std::to_string(b.tx) + ", outside +-(2^20-1)");
}

// ---------------------------------------------------------------------------------------------
// TMEM
uint32_t& tmem_cell(Cta& cta, uint32_t lane, uint32_t col) { return cta.tmem[size_t(lane) * tcg::kTmemColumns + col]; }

const TmemAlloc* tmem_find(const Cta& cta, uint32_t col, uint32_t ncols) {
  for (const TmemAlloc& a : cta.allocs)
    if (col >= a.col && col + ncols <= a.col + a.ncols) return &a;
  return nullptr;
}

std::string describe_allocs(const Cta& cta) {
  if (cta.allocs.empty()) return "no TMEM is allocated";
  std::string s = "allocated columns:";
  for (const TmemAlloc& a : cta.allocs)
    s += " [" + std::to_string(a.col) + ", " + std::to_string(a.col + a.ncols) + ")";
  return s;
}

// Checks that [lane0, lane0+nlanes) x [col0, col0+ncols) lies in one allocation.
void tmem_check_range(Cta& cta, uint32_t lane0, uint32_t nlanes, uint32_t col0, uint32_t ncols, const char* what) {
  if (lane0 + nlanes > tcg::kTmemLanes || col0 + ncols > tcg::kTmemColumns || !tmem_find(cta, col0, ncols))
    fail_here("TMEM access outside the allocation",
              std::string(what) + " touches lanes [" + std::to_string(lane0) + ", " + std::to_string(lane0 + nlanes) +
                  ") x columns [" + std::to_string(col0) + ", " + std::to_string(col0 + ncols) + "); " +
                  describe_allocs(cta));
}

// ---------------------------------------------------------------------------------------------
// Warp collectives (.sync.aligned): all live lanes of the warp must execute the same instruction.
// The last lane to arrive performs `op` with every lane's data; the others wait for it.
int live_lanes(const Cta& cta, int warp) {
  const int first = warp * 32;
  const int n = std::min<int>(32, int(cta.fibers.size()) - first);
  return n - cta.warp_exited[warp];
}

bool same_loc(SrcLoc a, SrcLoc b) { return a.line == b.line && (a.file == b.file || (a.file && b.file && !strcmp(a.file, b.file))); }

// full_warp: tcgen05's .sync.aligned instructions need all 32 lanes of the warp (PTX ISA
// §9.7.16.7.1, §9.7.16.8.3); a warp with exited lanes cannot execute them.
void collective(const char* name, void* data, const std::function<void(Collective&)>& op, bool full_warp = false) {
  Fiber& f = me();
  Cta& cta = *f.cta;
  Collective& c = cta.warps[f.warp];
  if (c.arrived > 0 && (c.op != name || !same_loc(c.at, f.at)))
    fail_here("divergent warp at a .sync.aligned instruction",
              std::string("this lane executes ") + name + " while other lanes of the warp wait in " + c.op + " at " +
                  loc(c.at) + "; every lane of the warp must execute the same warp-collective instruction together");
  if (full_warp && live_lanes(cta, f.warp) != 32)
    fail_here("divergent warp at a .sync.aligned instruction",
              std::string(name) + " needs all 32 lanes of the warp, but only " +
                  std::to_string(live_lanes(cta, f.warp)) + " are still running");
  if (c.arrived == 0) {
    c.op = name;
    c.at = f.at;
  }
  c.data[f.lane] = data;
  c.arrived++;
  if (c.arrived == live_lanes(cta, f.warp)) {
    op(c);
    c.arrived = 0;
    c.op = nullptr;
    c.generation++;
    c.data.fill(nullptr);
    notify(c.waiters);
    return;
  }
  const uint64_t gen = c.generation;
  block_until(c.waiters, [&c, gen] { return c.generation != gen; },
              [&c, &cta, &f, name] {
                return std::string(name) + " (warp-collective): " + std::to_string(c.arrived) + " of " +
                       std::to_string(live_lanes(cta, f.warp)) + " lanes of the warp have arrived";
              });
}

// ---------------------------------------------------------------------------------------------
// Decoded tensor map, as stored in the 128 opaque bytes of a CUtensorMap by encode_tensor_map().
constexpr uint32_t kMapMagic = 0x54434D41;  // "TCMA"
struct SimMap {
  uint32_t magic;
  uint32_t rank, elem_bytes, swizzle_span;
  uint64_t base;
  uint64_t dims[3];
  uint64_t strides[2];
  uint32_t box[3];
};
static_assert(sizeof(SimMap) <= sizeof(CUtensorMap), "emulated tensor map must fit a CUtensorMap");

// A copy (TMA or bulk) has written its bytes: count them and complete_tx on its mbarrier.
void copy_landed(Cta& cta, uint32_t bar, uint32_t bytes, const std::string& by, Clock::time_point t0) {
  g_stats.tma_copies++;
  g_stats.tma_bytes += bytes;
  Mbar& b = cta.mbars.find(bar & 0xFFFFFFu)->second;
  mbar_add_tx(b, bar, -int64_t(bytes), by);
  mbar_check_phase(b, bar, by);
  g_stats.copy_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

void run_tma(Cta& cta, const SimMap& m, uint32_t dst, std::array<int32_t, 3> c, uint32_t bar, const std::string& by) {
  const auto t0 = Clock::now();
  const uint32_t eb = m.elem_bytes;
  const uint32_t row_bytes = m.box[0] * eb;
  std::vector<uint8_t> row(row_bytes);
  const uint32_t n1 = m.rank > 1 ? m.box[1] : 1, n2 = m.rank > 2 ? m.box[2] : 1;
  const uint8_t* gbase = reinterpret_cast<const uint8_t*>(m.base);
  for (uint32_t i2 = 0; i2 < n2; ++i2)
    for (uint32_t i1 = 0; i1 < n1; ++i1) {
      const int64_t g1 = int64_t(c[1]) + i1, g2 = int64_t(c[2]) + i2;
      const bool row_in = (m.rank < 2 || (g1 >= 0 && g1 < int64_t(m.dims[1]))) &&
                          (m.rank < 3 || (g2 >= 0 && g2 < int64_t(m.dims[2])));
      for (uint32_t i0 = 0; i0 < m.box[0]; ++i0) {
        const int64_t g0 = int64_t(c[0]) + i0;
        uint8_t* out = row.data() + size_t(i0) * eb;
        if (row_in && g0 >= 0 && g0 < int64_t(m.dims[0])) {
          const uint8_t* src = gbase + g0 * eb + (m.rank > 1 ? g1 * int64_t(m.strides[0]) : 0) +
                               (m.rank > 2 ? g2 * int64_t(m.strides[1]) : 0);
          memcpy(out, src, eb);
        } else {
          memset(out, 0, eb);  // out-of-bounds elements are filled with zeros (OOB_FILL_NONE)
        }
      }
      const uint32_t lin = (i1 + n1 * i2) * row_bytes;  // box laid out densely, dim 0 fastest
      for (uint32_t ch = 0; ch < row_bytes; ch += 16) {
        const uint32_t a = m.swizzle_span ? tcg::swizzle_addr(dst + lin + ch, m.swizzle_span) : dst + lin + ch;
        memcpy(cta.smem + (a & 0xFFFFFFu) - kSmemBase, row.data() + ch, 16);
      }
    }
  copy_landed(cta, bar, row_bytes * n1 * n2, by, t0);
}

// ---------------------------------------------------------------------------------------------
// tcgen05.mma kind::f16, cta_group::1. Operands are fetched ONLY through the decoded
// descriptors: the emulator never sees the logical matrices.
struct MmaJob {
  uint32_t d_tmem;
  tcg::SmemDesc a, b;
  tcg::Idesc id;
  bool accumulate;
};

float f16_bits_to_float(uint16_t h, bool bf16) {
  if (bf16) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0) v = std::ldexp(float(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(float(man | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

void check_smem_desc(const tcg::SmemDesc& d, const char* operand, uint64_t raw) {
  const std::string name = std::string(operand) + " descriptor " + hex(raw);
  if (d.fixed46_48 != 1)
    fail_here("bad shared-memory descriptor",
              name + ": bits 46-48 must hold the fixed value 0b001 (PTX ISA §9.7.16.4.1), found " +
                  std::to_string(d.fixed46_48));
  if (d.reserved != 0)
    fail_here("bad shared-memory descriptor", name + ": reserved bits 14-15, 30-31 or 53-60 are not zero");
  if (!tcg::layout_is_valid(d.layout))
    fail_here("bad shared-memory descriptor",
              name + ": layout type " + std::to_string(d.layout) + " in bits 61-63 is invalid (0, 1, 2, 4, 6 are defined)");
  if (d.layout == uint32_t(tcg::Layout::kSwizzle128B_Base32B))
    fail_here("unsupported shared-memory descriptor", name + ": the 128B-base-32B layout is not modelled");
  if (d.lbo_mode != 0)
    fail_here("bad shared-memory descriptor", name + ": bit 52 (absolute LBO mode) is only valid on sm_103a");
  if (d.base_offset != 0)
    fail_here("unsupported shared-memory descriptor",
              name + ": a non-zero base offset (bits 49-51) is not modelled; place swizzle atoms on their repeat boundary");
  const tcg::Layout l = static_cast<tcg::Layout>(d.layout);
  if (l != tcg::Layout::kNone) {
    const uint32_t rep = tcg::layout_repeat_bytes(l), w = tcg::layout_row_bytes(l);
    if ((d.start % rep) >= w)
      fail_here("swizzled operand not aligned to its swizzle repeat",
                name + ": start address " + hex(d.start) + " is " + std::to_string(d.start % rep) + " bytes into a " +
                    std::to_string(rep) + "-byte swizzle repeat; a " + std::to_string(w) +
                    "B-swizzled atom must start on a " + std::to_string(rep) +
                    "-byte boundary (only an advance of less than one " + std::to_string(w) +
                    "-byte row, the K step, is allowed)");
  }
}

void check_idesc(const tcg::Idesc& id, uint32_t raw) {
  const std::string name = "instruction descriptor " + hex(raw);
  if (id.sparse || id.sparse_sel)
    fail_here("unsupported instruction descriptor", name + ": sparse MMA is not modelled");
  if (id.saturate || id.reserved6 || id.reserved23 || id.reserved29 || id.max_shift)
    fail_here("bad instruction descriptor", name + ": reserved/saturate/max-shift bits must be zero for kind::f16");
  if (id.d_format != uint32_t(tcg::DType::kF32))
    fail_here("unsupported instruction descriptor",
              name + ": D format " + std::to_string(id.d_format) + " (only F32 = 1 is modelled for kind::f16)");
  if (id.a_format > 1 || id.b_format > 1)
    fail_here("bad instruction descriptor",
              name + ": A/B formats for kind::f16 must be F16 (0) or BF16 (1), found " + std::to_string(id.a_format) +
                  "/" + std::to_string(id.b_format));
  if (!tcg::is_valid_f16_shape_cta1(id.m, id.n))
    fail_here("invalid MMA shape",
              name + ": M = " + std::to_string(id.m) + ", N = " + std::to_string(id.n) +
                  "; kind::f16 with cta_group::1 needs M in {64, 128} and N a multiple of 8 in [8, 256] (PTX ISA "
                  "§9.7.16.2.1)");
}

void run_mma(Cta& cta, const MmaJob& j) {
  const auto t0 = Clock::now();
  const uint32_t M = j.id.m, N = j.id.n, K = 16;
  if (!tmem_find(cta, tcg::tmem_column(j.d_tmem), N))
    fail("tcsim: TMEM deallocated under a running MMA\n  a tcgen05.mma writing TMEM columns [" +
         std::to_string(tcg::tmem_column(j.d_tmem)) + ", " + std::to_string(tcg::tmem_column(j.d_tmem) + N) +
         ") completed after those columns were freed (" + describe_allocs(cta) +
         "); wait for the MMA's tcgen05.commit before tcgen05.dealloc");
  const bool a_bf16 = j.id.a_format == 1, b_bf16 = j.id.b_format == 1;
  std::vector<float> A(size_t(M) * K), B(size_t(N) * K);
  auto fetch = [&](const tcg::SmemDesc& d, bool mn_major, uint32_t row, uint32_t k) -> uint16_t {
    const uint32_t addr = mn_major ? tcg::mnmajor_operand_addr(d, row, k, 2) : tcg::kmajor_operand_addr(d, row, 2 * k);
    const uint32_t a = addr & 0xFFFFFFu;
    if (a < kSmemBase || a + 2 > kSmemBase + cta.smem_bytes)
      fail("tcsim: shared memory out of bounds\n  tcgen05.mma operand read at " + hex(addr) + " (row " +
           std::to_string(row) + ", k " + std::to_string(k) + ") lies outside the CTA's dynamic shared memory [" +
           hex(kSmemBase) + ", " + hex(kSmemBase + cta.smem_bytes) + "); check the descriptor's start/LBO/SBO");
    uint16_t v;
    memcpy(&v, cta.smem + (a - kSmemBase), 2);
    return v;
  };
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t k = 0; k < K; ++k) A[m * K + k] = f16_bits_to_float(fetch(j.a, j.id.a_mn_major, m, k), a_bf16);
  for (uint32_t n = 0; n < N; ++n)
    for (uint32_t k = 0; k < K; ++k) B[n * K + k] = f16_bits_to_float(fetch(j.b, j.id.b_mn_major, n, k), b_bf16);
  if (j.id.negate_a)
    for (float& x : A) x = -x;
  if (j.id.negate_b)
    for (float& x : B) x = -x;
  const uint32_t lane0 = tcg::tmem_lane(j.d_tmem), col0 = tcg::tmem_column(j.d_tmem);
  for (uint32_t m = 0; m < M; ++m) {
    // Data-path layout D (M = 128): row m -> lane m. Layout F (M = 64): rows in 16-row groups,
    // one group per 32-lane sub-partition (PTX ISA §9.7.16.10.5).
    const uint32_t lane = lane0 + (M == 128 ? m : (m % 16) + 32 * (m / 16));
    const float* a = &A[m * K];
    uint32_t* drow = &tmem_cell(cta, lane, col0);
    for (uint32_t n = 0; n < N; ++n) {
      const float* b = &B[n * K];
      float acc = 0.f;
      for (uint32_t k = 0; k < K; ++k) acc += a[k] * b[k];
      float d;
      if (j.accumulate) {
        memcpy(&d, &drow[n], 4);
        acc += d;
      }
      memcpy(&drow[n], &acc, 4);
    }
  }
  g_stats.mmas++;
  g_stats.mma_flops += 2ull * M * N * K;
  g_stats.mma_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---------------------------------------------------------------------------------------------
// The watchdog. The emulator switches threads only at emulated instructions, so a kernel that
// spins on ordinary memory (a volatile flag) never gives the other threads a chance and the
// instruction budget is never consulted. This thread notices that nothing has progressed for
// `seconds` and ends the process with a diagnostic instead of letting it hang.
class Watchdog {
 public:
  explicit Watchdog(double seconds) : seconds_(seconds) {
    if (seconds_ > 0) thread_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    uint64_t last = g_heartbeat.load();
    auto since = Clock::now();
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
      const uint64_t now = g_heartbeat.load();
      if (now != last) {
        last = now;
        since = Clock::now();
      } else if (std::chrono::duration<double>(Clock::now() - since).count() > seconds_) {
        // The stuck fiber cannot be interrupted safely; report what it last did and end.
        const Fiber* f = g_sched ? g_sched->cur : nullptr;
        fprintf(stderr,
                "tcsim: livelock (no progress)\n  %s has run for %.0f s without executing an emulated "
                "instruction since %s.\n  A spin loop on ordinary memory? The emulator switches threads only at "
                "PTX instructions and barriers; wait on an mbarrier or a barrier instead.\n",
                f ? who(*f).c_str() : "a thread", seconds_, f ? loc(f->at).c_str() : "?");
        fflush(stderr);
        _exit(1);
      }
    }
  }
  double seconds_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// ---------------------------------------------------------------------------------------------
// The scheduler.
void fiber_entry() {
  Scheduler& s = *g_sched;
  (*s.body)();
  Fiber& f = *s.cur;
  f.state = FState::kDone;
  unset_runnable(&f);
  s.done++;
  Cta& cta = *f.cta;
  cta.exited++;
  cta.warp_exited[f.warp]++;
  // __syncthreads counts exited threads as arrived, so an exit can complete it.
  CtaBarrier& b0 = cta.bars[0];
  if (b0.arrived > 0 && b0.arrived + uint32_t(cta.exited) >= b0.expected) {
    b0.arrived = 0;
    b0.generation++;
    notify(b0.waiters);
  }
  Collective& c = cta.warps[f.warp];
  if (c.arrived > 0)
    fail("tcsim: divergent warp at a .sync.aligned instruction\n  " + who(f) + " exited while other lanes of its warp wait in " +
         c.op + " at " + loc(c.at));
  for (const auto& b : f.pending_ld)
    if (!b->done)
      fail("tcsim: tcgen05.ld never waited for\n  " + who(f) + " exited with the tcgen05.ld issued at " + loc(b->at) +
           " still outstanding; tcgen05.wait::ld must come before its registers are used");
  // Other outstanding asynchronous work of an exited thread still completes (nothing cancels it).
  _longjmp(s.main_jb, 1);
}

void* get_stack() {
  if (!g_stack_pool.empty()) {
    void* p = g_stack_pool.back();
    g_stack_pool.pop_back();
    return p;
  }
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw SimError("tcsim: cannot allocate fiber stacks");
  mprotect(p, page, PROT_NONE);  // guard page: a stack overflow faults instead of corrupting memory
  return p;
}

// getcontext() lives in its own frame so that no local of the launch loop can be clobbered.
__attribute__((noinline)) void create_fiber(Scheduler& s, Cta* cta, uint32_t t) {
  auto f = std::make_unique<Fiber>();
  f->vars.thread_idx = uint3{t, 0, 0};
  f->vars.block_idx = cta->block_idx;
  f->vars.block_dim = s.block;
  f->vars.grid_dim = s.grid;
  f->tid = int(t);
  f->warp = int(t / 32);
  f->lane = int(t % 32);
  f->cta = cta;
  f->stack = get_stack();
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  getcontext(&f->ctx);
  f->ctx.uc_stack.ss_sp = static_cast<char*>(f->stack) + page;
  f->ctx.uc_stack.ss_size = kStackBytes;
  f->ctx.uc_link = nullptr;  // fiber_entry never returns: it jumps back to the scheduler
  makecontext(&f->ctx, fiber_entry, 0);
  cta->fibers.push_back(f.get());
  set_runnable(f.get());
  s.fibers.push_back(std::move(f));
}

std::string deadlock_report(Scheduler& s) {
  std::ostringstream o;
  o << "tcsim: deadlock\n  every thread is blocked and no asynchronous operation is pending. Blocked threads:\n";
  for (auto& ctap : s.ctas) {
    Cta& cta = *ctap;
    // Group consecutive lanes of one warp that wait on the same thing at the same line.
    size_t i = 0;
    while (i < cta.fibers.size()) {
      Fiber& f = *cta.fibers[i];
      if (f.state != FState::kBlocked) {
        ++i;
        continue;
      }
      const std::string what = f.waits_on ? f.waits_on() : "?";
      const std::string where = loc(f.at);
      size_t j = i + 1;
      while (j < cta.fibers.size() && cta.fibers[j]->warp == f.warp && cta.fibers[j]->state == FState::kBlocked &&
             loc(cta.fibers[j]->at) == where && (cta.fibers[j]->waits_on ? cta.fibers[j]->waits_on() : "?") == what)
        ++j;
      o << "  CTA (" << cta.block_idx.x << "," << cta.block_idx.y << "," << cta.block_idx.z << ") warp " << f.warp;
      if (j - i == 1) o << " lane " << f.lane;
      else o << " lanes " << f.lane << "-" << cta.fibers[j - 1]->lane;
      o << " at " << where << ": " << what << "\n";
      i = j;
    }
  }
  return o.str();
}

void run_cluster(Scheduler& s) {
  for (;;) {
    if (s.failed) throw SimError(s.error);
    // Asynchronous operations that may complete now: any TMA copy, and the oldest tcgen05
    // operation of each thread that has some.
    const size_t n_async = s.async_ops.size() + s.tc_busy.size();
    if (s.runnable.empty() && n_async == 0) {
      if (s.done == s.fibers.size()) return;
      throw SimError(deadlock_report(s));
    }
    if (n_async > 0 && (s.runnable.empty() || s.rng.uniform() < s.p_async)) {
      const size_t pick = s.rng.below(n_async);
      if (pick < s.async_ops.size()) {
        AsyncOp op = std::move(s.async_ops[pick]);
        s.async_ops[pick] = std::move(s.async_ops.back());
        s.async_ops.pop_back();
        op();
      } else {
        const size_t i = pick - s.async_ops.size();
        Fiber& f = *s.tc_busy[i];
        AsyncOp op = std::move(f.tc_ops.front());
        f.tc_ops.pop_front();
        if (f.tc_ops.empty()) {
          f.has_tc_ops = false;
          s.tc_busy[i] = s.tc_busy.back();
          s.tc_busy.pop_back();
        }
        op();
      }
      g_heartbeat.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    Fiber* f = s.runnable[s.rng.below(s.runnable.size())];
    g_heartbeat.fetch_add(1, std::memory_order_relaxed);
    s.cur = f;
    g_stats.fiber_switches++;
    // A fiber is started once with setcontext (a fresh stack needs ucontext) and afterwards
    // resumed with _longjmp, which, unlike swapcontext, does not save and restore the signal
    // mask with a system call on every switch.
    if (_setjmp(s.main_jb) == 0) {
      if (!f->started) {
        f->started = true;
        setcontext(&f->ctx);
      }
      _longjmp(f->jb, 1);
    }
    s.cur = nullptr;
  }
}

}  // namespace

// =============================================================================================
// Public API
void set_options(const Options& o) { g_options = o; }
const Options& options() { return g_options; }
const Stats& last_stats() { return g_stats; }

const ThreadVars& current() { return me().vars; }

CUtensorMap encode_tensor_map(const tcg::TiledMap& m) {
  const std::string err = tcg::validate(m);
  if (!err.empty()) throw std::runtime_error(err);
  SimMap s{};
  s.magic = kMapMagic;
  s.rank = m.rank;
  s.elem_bytes = tcg::tma_dtype_bytes(m.dtype);
  s.swizzle_span = tcg::tma_swizzle_span(m.swizzle);
  s.base = reinterpret_cast<uint64_t>(m.base);
  for (int i = 0; i < 3; ++i) s.dims[i] = m.dims[i], s.box[i] = m.box[i];
  for (int i = 0; i < 2; ++i) s.strides[i] = m.strides[i];
  CUtensorMap out{};
  memcpy(&out, &s, sizeof s);
  return out;
}

void launch(dim3 grid, dim3 block, dim3 cluster, uint32_t smem_bytes, const std::function<void()>& body) {
  if (smem_bytes > kMaxDynamicSmem)
    throw SimError("tcsim: launch asks for " + std::to_string(smem_bytes) +
                   " bytes of dynamic shared memory; sm_100 allows at most " + std::to_string(kMaxDynamicSmem));
  const uint32_t nthreads = block.x * block.y * block.z;
  if (nthreads == 0 || nthreads > 1024) throw SimError("tcsim: block of " + std::to_string(nthreads) + " threads");
  if (grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z)
    throw SimError("tcsim: grid is not a whole number of clusters");
  if (block.y != 1 || block.z != 1) throw SimError("tcsim: only 1-D thread blocks are modelled");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
    throw SimError("tcsim: invalid grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
                   std::to_string(grid.z) + "): x must be in 1..2^31-1, y and z in 1..65535 (as on the GPU)");
  g_stats = Stats{};
  const auto t0 = Clock::now();
  Scheduler s;
  s.rng.s = g_options.seed * 0x2545F4914F6CDD1Dull + 12345;
  // Each seed explores a different regime: how eagerly threads are preempted and how soon
  // asynchronous operations complete relative to the issuing threads.
  // The seed picks a regime for asynchronous work (TMA copies, MMAs, commits):
  //   seed % 4 == 0  lazy:  it completes when no thread can run, otherwise only at one
  //                  scheduling step in 2000 (it must still complete under a thread that polls
  //                  memory), so a read that forgot to wait sees stale data;
  //   seed % 4 == 2  eager: it completes as soon as it is issued, before any thread runs again;
  //   otherwise      it completes at random points in between.
  // Every seed also draws how often threads are preempted at an instruction.
  s.p_preempt = 0.02 + 0.5 * s.rng.uniform();
  const double p_random = 0.02 + 0.9 * s.rng.uniform();
  s.p_async = g_options.seed % 4 == 0 ? 0.0005 : g_options.seed % 4 == 2 ? 1.0 : p_random;
  s.body = &body;
  s.grid = grid;
  s.block = block;
  g_sched = &s;
  Watchdog watchdog(g_options.watchdog_seconds);
  struct Reset {
    ~Reset() {
      for (auto& f : g_sched->fibers) g_stack_pool.push_back(f->stack);
      g_sched = nullptr;
    }
  } reset;
  const uint32_t cluster_size = cluster.x * cluster.y * cluster.z;
  for (uint32_t cz = 0; cz < grid.z; cz += cluster.z)
    for (uint32_t cy = 0; cy < grid.y; cy += cluster.y)
      for (uint32_t cx = 0; cx < grid.x; cx += cluster.x) {
        for (auto& f : s.fibers) g_stack_pool.push_back(f->stack);
        s.fibers.clear();
        s.ctas.clear();
        s.async_ops.clear();
        s.runnable.clear();
        s.tc_busy.clear();
        s.done = 0;
        for (uint32_t r = 0; r < cluster_size; ++r) {
          auto cta = std::make_unique<Cta>();
          cta->block_idx = uint3{cx + r % cluster.x, cy + (r / cluster.x) % cluster.y, cz + r / (cluster.x * cluster.y)};
          cta->rank = r;
          cta->smem_bytes = smem_bytes;
          cta->smem_storage.assign(size_t(smem_bytes) + 1024, 0xFF);  // 0xFFFF is a BF16 NaN
          cta->smem = cta->smem_storage.data();
          cta->tmem.assign(size_t(tcg::kTmemLanes) * tcg::kTmemColumns, kTmemPoison);
          const uint32_t nwarps = (nthreads + 31) / 32;
          cta->warps.assign(nwarps, Collective{});
          cta->warp_exited.assign(nwarps, 0);
          for (auto& b : cta->bars) b.expected = nthreads;
          for (uint32_t t = 0; t < nthreads; ++t) create_fiber(s, cta.get(), t);
          s.ctas.push_back(std::move(cta));
          g_stats.ctas++;
        }
        run_cluster(s);  // returns once every thread exited and all asynchronous work completed
        for (auto& cta : s.ctas) {
          for (const auto& [addr, b] : cta->mbars)
            if (b.tx != 0)
              throw SimError("tcsim: mbarrier tx-count " + std::string(b.tx < 0 ? "underflow" : "left over") +
                             "\n  CTA (" + std::to_string(cta->block_idx.x) + "," + std::to_string(cta->block_idx.y) +
                             "," + std::to_string(cta->block_idx.z) + ") exited with tx-count " + std::to_string(b.tx) +
                             " on the mbarrier at " + hex(addr) + " (initialised at " + loc(b.init_at) + "): " +
                             (b.tx < 0 ? "TMA copies delivered more bytes than expect_tx announced"
                                       : "expect_tx announced bytes that no TMA copy delivered"));
          if (!cta->allocs.empty()) {
            const TmemAlloc& a = cta->allocs.front();
            throw SimError("tcsim: TMEM leak\n  CTA (" + std::to_string(cta->block_idx.x) + "," +
                           std::to_string(cta->block_idx.y) + "," + std::to_string(cta->block_idx.z) +
                           ") exited with TMEM still allocated: " + describe_allocs(*cta) + " (the first by warp " +
                           std::to_string(a.warp) + " at " + loc(a.at) +
                           "). Every tcgen05.alloc needs a tcgen05.dealloc before the CTA exits.");
          }
        }
      }
  g_stats.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

uint8_t* dynamic_smem() { return me().cta->smem; }

uint32_t cvta_shared(const void* p) {
  Cta& cta = *me().cta;
  const uint8_t* q = static_cast<const uint8_t*>(p);
  if (q < cta.smem || q > cta.smem + cta.smem_bytes)
    fail_here("generic address is not in shared memory",
              "cvta.to.shared of a pointer that does not point into this CTA's dynamic shared memory");
  return (cta.rank << 24) | (kSmemBase + uint32_t(q - cta.smem));
}

void syncthreads(SrcLoc at) { named_barrier_sync(0, 0, at); }

void named_barrier_sync(uint32_t id, uint32_t nthreads, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  if (id >= kNumNamedBarriers) fail_here("bad named barrier", "barrier id " + std::to_string(id) + " is not in 0..15");
  CtaBarrier& b = cta.bars[id];
  const uint32_t total = uint32_t(cta.fibers.size());
  const uint32_t expected = nthreads ? nthreads : total;
  if (nthreads % 32 != 0 || expected > total)
    fail_here("bad named barrier", "bar.sync thread count " + std::to_string(nthreads) +
                                       " must be a multiple of 32 and at most the block size");
  check_fence_before(nthreads == 0 && id == 0 ? "__syncthreads" : "bar.sync");
  b.expected = expected;
  b.arrived++;
  // __syncthreads (count 0): threads that already exited count as arrived.
  const uint32_t have = b.arrived + (nthreads ? 0u : uint32_t(cta.exited));
  const char* what = nthreads == 0 && id == 0 ? "__syncthreads" : "bar.sync";
  if (have >= expected) {
    b.arrived = 0;
    b.generation++;
    notify(b.waiters);
    note_thread_sync(what, at);
    return;
  }
  const uint64_t gen = b.generation;
  CtaBarrier* bp = &b;
  Cta* cp = &cta;
  block_until(
      b.waiters, [bp, gen] { return bp->generation != gen; },
      [bp, id, nthreads, cp] {
        return std::string(id == 0 && nthreads == 0 ? "__syncthreads" : "bar.sync " + std::to_string(id)) + ": " +
               std::to_string(bp->arrived + (nthreads ? 0 : cp->exited)) + " of " + std::to_string(bp->expected) +
               " threads have arrived";
      });
  note_thread_sync(what, at);
}

void syncwarp(SrcLoc at) {
  tick(at);
  check_fence_before("__syncwarp");
  collective("__syncwarp", nullptr, [](Collective&) {});
  note_thread_sync("__syncwarp", at);
}

bool elect_sync(SrcLoc at) {
  tick(at);
  bool elected = false;
  collective("elect.sync", &elected, [](Collective& c) {
    for (void* d : c.data)
      if (d) {
        *static_cast<bool*>(d) = true;  // the lowest participating lane
        break;
      }
  }, /*full_warp=*/true);  // membermask 0xffffffff: all 32 lanes
  return elected;
}

void fence(SrcLoc at) { tick(at); }

void tcgen05_fence_before(SrcLoc at) {
  tick(at);
  me().tc_pending_fence = nullptr;
}

void tcgen05_fence_after(SrcLoc at) {
  tick(at);
  me().sync_pending_fence = nullptr;
}

// ---- mbarrier
void mbar_init(uint32_t bar, uint32_t count, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  if (bar % 8 != 0) fail_here("misaligned mbarrier", "mbarrier.init at " + hex(bar) + " is not 8-byte aligned");
  smem_ref(*f.cta, bar, 8, "mbarrier.init");
  if (count < 1 || count > (1u << 20) - 1)
    fail_here("bad mbarrier count", "mbarrier.init with count " + std::to_string(count) + " (must be 1..2^20-1)");
  Mbar& b = f.cta->mbars[bar & 0xFFFFFFu];
  if (!b.waiters.empty())
    fail_here("mbarrier re-initialised while in use",
              "mbarrier.init of the mbarrier at " + hex(bar) + " while " + std::to_string(b.waiters.size()) +
                  " thread(s) wait on it (initialised before at " + loc(b.init_at) + ")");
  b = Mbar{};
  b.expected = count;
  b.pending = count;
  b.init_at = at;
}

void mbar_arrive(uint32_t bar, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Mbar& b = mbar_at(*f.cta, bar, "mbarrier.arrive");
  check_fence_before("mbarrier.arrive");
  mbar_do_arrive(b, bar, 1, who(f) + " at " + loc(at));
}

void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Mbar& b = mbar_at(*f.cta, bar, "mbarrier.arrive.expect_tx");
  check_fence_before("mbarrier.arrive.expect_tx");
  const std::string by = who(f) + " at " + loc(at);
  mbar_add_tx(b, bar, int64_t(bytes), by);
  mbar_do_arrive(b, bar, 1, by);
}

void mbar_wait_parity(uint32_t bar, uint32_t parity, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Mbar* b = &mbar_at(*f.cta, bar, "mbarrier.try_wait.parity");
  if (parity > 1) fail_here("bad parity", "mbarrier.try_wait.parity with parity " + std::to_string(parity));
  // try_wait.parity(P) succeeds once the phase with parity P has completed, i.e. when the
  // current phase's parity is no longer P (PTX ISA §9.7.13.15.16).
  if ((b->phase & 1) == parity) g_stats.barrier_waits++;
  block_until(b->waiters, [b, parity] { return (b->phase & 1) != parity; },
              [b, bar, parity] {
                return "mbarrier.try_wait.parity on the mbarrier at " + hex(bar) + " for parity " +
                       std::to_string(parity) + "; " + describe_mbar(*b) + " (initialised at " + loc(b->init_at) + ")";
              });
  note_thread_sync("mbarrier.try_wait.parity", at);
}

// ---- TMA
void tma_load(uint32_t dst, const CUtensorMap* map, int rank, const int32_t* coords, uint32_t bar, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  SimMap m;
  memcpy(&m, map, sizeof m);
  if (m.magic != kMapMagic)
    fail_here("bad tensor map", "cp.async.bulk.tensor with a tensor map that encode_tensor_map() did not produce");
  if (int(m.rank) != rank)
    fail_here("bad tensor map", "cp.async.bulk.tensor." + std::to_string(rank) + "d with a rank-" +
                                    std::to_string(m.rank) + " tensor map");
  const uint32_t bytes = m.box[0] * m.elem_bytes * (rank > 1 ? m.box[1] : 1) * (rank > 2 ? m.box[2] : 1);
  const uint32_t align = m.swizzle_span ? 8 * m.swizzle_span : 128;
  if ((dst & 0xFFFFFFu) % align != 0)
    fail_here(m.swizzle_span ? "TMA destination not aligned to its swizzle repeat" : "misaligned TMA destination",
              "cp.async.bulk.tensor destination " + hex(dst) + " must be " + std::to_string(align) +
                  "-byte aligned" + (m.swizzle_span ? " (the swizzle pattern repeats every 8 rows of the span)" : ""));
  smem_ref(cta, dst, bytes, "cp.async.bulk.tensor destination");
  check_no_mbarrier_in(cta, dst, bytes, "cp.async.bulk.tensor destination");
  mbar_at(cta, bar, "cp.async.bulk.tensor completion mbarrier");
  std::array<int32_t, 3> c{0, 0, 0};
  for (int i = 0; i < rank; ++i) c[size_t(i)] = coords[i];
  const std::string by = "the TMA copy issued by " + who(f) + " at " + loc(at);
  Cta* cp = &cta;
  g_sched->async_ops.push_back([cp, m, dst, c, bar, by] { run_tma(*cp, m, dst, c, bar, by); });
}

void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  if (bytes == 0 || bytes % 16 != 0)
    fail_here("bad bulk copy", "cp.async.bulk of " + std::to_string(bytes) + " bytes; the size must be a non-zero multiple of 16");
  if ((dst & 0xFFFFFFu) % 16 != 0 || reinterpret_cast<uintptr_t>(src) % 16 != 0)
    fail_here("misaligned bulk copy", "cp.async.bulk needs 16-byte aligned addresses; destination " + hex(dst) +
                                          ", source " + hex(reinterpret_cast<uintptr_t>(src)));
  smem_ref(cta, dst, bytes, "cp.async.bulk destination");
  check_no_mbarrier_in(cta, dst, bytes, "cp.async.bulk destination");
  mbar_at(cta, bar, "cp.async.bulk completion mbarrier");
  const std::string by = "the bulk copy issued by " + who(f) + " at " + loc(at);
  Cta* cp = &cta;
  g_sched->async_ops.push_back([cp, dst, src, bytes, bar, by] {
    const auto t0 = Clock::now();
    memcpy(cp->smem + (dst & 0xFFFFFFu) - kSmemBase, src, bytes);
    copy_landed(*cp, bar, bytes, by, t0);
  });
}

// ---- tcgen05
void tmem_alloc(uint32_t dst, uint32_t ncols, SrcLoc at) {
  tick(at);
  tcgen05_op("tcgen05.alloc");
  Fiber& f = me();
  struct Args {
    uint32_t dst, ncols;
  } args{dst, ncols};
  Cta& cta = *f.cta;
  const int warp = f.warp;
  collective("tcgen05.alloc", &args, [&cta, warp, at](Collective& c) {
    const Args* first = nullptr;
    for (void* d : c.data)
      if (d && !first) first = static_cast<Args*>(d);
    const Args& a0 = *first;
    for (void* d : c.data)
      if (d && (static_cast<Args*>(d)->dst != a0.dst || static_cast<Args*>(d)->ncols != a0.ncols))
        fail_here("divergent warp at a .sync.aligned instruction", "tcgen05.alloc with different operands in different lanes");
    if (!tcg::is_valid_tmem_alloc(a0.ncols))
      fail_here("bad TMEM allocation", "tcgen05.alloc of " + std::to_string(a0.ncols) +
                                           " columns; the count must be a power of two in [32, 512]");
    if (cta.relinquished)
      fail_here("TMEM allocation after relinquish", "tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit");
    uint32_t used = 0;
    for (const TmemAlloc& a : cta.allocs) used += a.ncols;
    uint32_t col = 0;
    for (; col + a0.ncols <= tcg::kTmemColumns; col += a0.ncols) {
      bool clash = false;
      for (const TmemAlloc& a : cta.allocs)
        if (col < a.col + a.ncols && a.col < col + a0.ncols) clash = true;
      if (!clash) break;
    }
    if (col + a0.ncols > tcg::kTmemColumns)
      fail_here("TMEM over capacity", "tcgen05.alloc of " + std::to_string(a0.ncols) + " columns with " +
                                          std::to_string(used) + " of 512 already allocated (" + describe_allocs(cta) +
                                          "); on hardware this would wait for another CTA to free TMEM");
    cta.allocs.push_back(TmemAlloc{col, a0.ncols, warp, at});
    const uint32_t taddr = tcg::tmem_addr(0, col);
    if (a0.dst % 4) fail_here("misaligned store", "tcgen05.alloc destination " + hex(a0.dst) + " is not 4-byte aligned");
    check_no_mbarrier_in(cta, a0.dst, 4, "tcgen05.alloc destination");
    memcpy(smem_ptr(cta, a0.dst, 4, "tcgen05.alloc destination"), &taddr, 4);
  }, /*full_warp=*/true);
}

void tmem_dealloc(uint32_t taddr, uint32_t ncols, SrcLoc at) {
  tick(at);
  tcgen05_op("tcgen05.dealloc");
  Fiber& f = me();
  Cta& cta = *f.cta;
  struct Args {
    uint32_t taddr, ncols;
  } args{taddr, ncols};
  collective("tcgen05.dealloc", &args, [&cta](Collective& c) {
    const Args* a0 = nullptr;
    for (void* d : c.data)
      if (d) {
        if (!a0) a0 = static_cast<Args*>(d);
        else if (static_cast<Args*>(d)->taddr != a0->taddr || static_cast<Args*>(d)->ncols != a0->ncols)
          fail_here("divergent warp at a .sync.aligned instruction", "tcgen05.dealloc with different operands in different lanes");
      }
    const uint32_t col = tcg::tmem_column(a0->taddr);
    for (size_t i = 0; i < cta.allocs.size(); ++i)
      if (cta.allocs[i].col == col && cta.allocs[i].ncols == a0->ncols && tcg::tmem_lane(a0->taddr) == 0) {
        cta.allocs.erase(cta.allocs.begin() + long(i));
        return;
      }
    fail_here("bad TMEM deallocation", "tcgen05.dealloc of address " + hex(a0->taddr) + ", " + std::to_string(a0->ncols) +
                                           " columns, matches no allocation; " + describe_allocs(cta));
  }, /*full_warp=*/true);
}

void tmem_relinquish(SrcLoc at) {
  tick(at);
  tcgen05_op("tcgen05.relinquish_alloc_permit");
  Cta& cta = *me().cta;
  collective("tcgen05.relinquish_alloc_permit", nullptr, [&cta](Collective&) { cta.relinquished = true; },
             /*full_warp=*/true);
}

void mma_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, bool accumulate, SrcLoc at) {
  tick(at);
  tcgen05_op("tcgen05.mma");
  Fiber& f = me();
  Cta& cta = *f.cta;
  MmaJob j{d_tmem, tcg::decode_smem_desc(a_desc), tcg::decode_smem_desc(b_desc), tcg::decode_idesc(idesc), accumulate};
  check_idesc(j.id, idesc);
  check_smem_desc(j.a, "A", a_desc);
  check_smem_desc(j.b, "B", b_desc);
  const uint32_t lane0 = tcg::tmem_lane(d_tmem), col0 = tcg::tmem_column(d_tmem);
  if (j.id.m == 128 && lane0 != 0)
    fail_here("bad TMEM address", "an M = 128 MMA writes all 128 lanes; the D address must name lane 0, found lane " +
                                      std::to_string(lane0));
  if (j.id.m == 64 && lane0 != 0 && lane0 != 16)
    fail_here("bad TMEM address", "an M = 64 MMA's D address must name lane 0 or 16, found " + std::to_string(lane0));
  tmem_check_range(cta, j.id.m == 128 ? 0 : lane0, j.id.m == 128 ? 128 : 128 - lane0, col0, j.id.n, "tcgen05.mma D");
  Cta* cp = &cta;
  push_tc_op(f, [cp, j] { run_mma(*cp, j); });
}

void tcgen05_commit(uint32_t bar, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  f.tc_pending_fence = nullptr;  // commit implies tcgen05.fence::before_thread_sync (§9.7.16.12.1)
  Cta& cta = *f.cta;
  mbar_at(cta, bar, "tcgen05.commit");
  const std::string by = "the tcgen05.commit issued by " + who(f) + " at " + loc(at);
  Cta* cp = &cta;
  push_tc_op(f, [cp, bar, by] {
    Mbar& b = cp->mbars.find(bar & 0xFFFFFFu)->second;
    mbar_do_arrive(b, bar, 1, by);
  });
}

// Reads a tcgen05.ld's TMEM cells into the destination registers (once).
void run_ld(LdBatch& b) {
  if (b.done) return;
  for (const PendingLd& p : b.regs)
    if (!tmem_find(*b.cta, p.col, 1))
      fail("tcsim: TMEM deallocated under a pending tcgen05.ld\n  the tcgen05.ld issued at " + loc(b.at) +
           " reads column " + std::to_string(p.col) + ", which was freed before the load completed (" +
           describe_allocs(*b.cta) + "); tcgen05.wait::ld before tcgen05.dealloc");
  for (const PendingLd& p : b.regs) *p.dst = tmem_cell(*b.cta, p.lane, p.col);
  b.done = true;
}

void tmem_ld(LdShape shape, int num, uint32_t taddr, uint32_t* regs, SrcLoc at) {
  tick(at);
  tcgen05_op("tcgen05.ld");
  Fiber& f = me();
  Cta& cta = *f.cta;
  const char* name = shape == LdShape::k32x32b ? "tcgen05.ld.32x32b" : "tcgen05.ld.16x256b";
  struct Args {
    uint32_t taddr;
    uint32_t* regs;
    Fiber* fiber;
    LdShape shape;
    int num;
  } args{taddr, regs, &f, shape, num};
  const int nregs = shape == LdShape::k32x32b ? num : 4 * num;
  for (int i = 0; i < nregs; ++i) regs[i] = kTmemPoison;  // registers are undefined until tcgen05.wait::ld
  collective(name, &args, [&cta, shape, num, name](Collective& c) {
    const Args* a0 = nullptr;
    for (void* d : c.data)
      if (d) {
        if (!a0) a0 = static_cast<Args*>(d);
        else if (static_cast<Args*>(d)->taddr != a0->taddr || static_cast<Args*>(d)->shape != a0->shape ||
                 static_cast<Args*>(d)->num != a0->num)
          fail_here("divergent warp at a .sync.aligned instruction",
                    std::string(name) + ": all lanes must execute the same shape and .num with the same TMEM address");
      }
    const uint32_t lane0 = tcg::tmem_lane(a0->taddr), col0 = tcg::tmem_column(a0->taddr);
    const int warp = a0->fiber->warp;
    const uint32_t quarter = uint32_t(warp % 4);
    const uint32_t nlanes = shape == LdShape::k32x32b ? 32 : 16;
    const uint32_t ncols = shape == LdShape::k32x32b ? uint32_t(num) : 8u * uint32_t(num);
    // PTX ISA §9.7.16.8.1: warp w of a warpgroup reaches TMEM lanes 32*(w%4) .. 32*(w%4)+31 only.
    if (lane0 / 32 != quarter || (lane0 % 32) + nlanes > 32)
      fail_here("TMEM lane quarter violation",
                std::string(name) + " at lanes [" + std::to_string(lane0) + ", " + std::to_string(lane0 + nlanes) +
                    ") from warp " + std::to_string(warp) + ", which may only access lanes [" +
                    std::to_string(32 * quarter) + ", " + std::to_string(32 * quarter + 32) + ") (warp % 4 = " +
                    std::to_string(quarter) + ")");
    tmem_check_range(cta, lane0, nlanes, col0, ncols, name);
    auto batch = std::make_shared<LdBatch>();
    batch->cta = &cta;
    batch->at = a0->fiber->at;
    for (void* d : c.data) {
      if (!d) continue;
      Args& a = *static_cast<Args*>(d);
      const uint32_t t = uint32_t(a.fiber->lane);
      if (shape == LdShape::k32x32b) {
        for (int i = 0; i < num; ++i) batch->regs.push_back({&a.regs[i], lane0 + t, col0 + uint32_t(i)});
      } else {  // 16x256b: PTX ISA §9.7.16.8.3 (thread t: lanes t/4 and t/4+8, column pair 2*(t%4))
        for (int i = 0; i < num; ++i)
          for (int r = 0; r < 4; ++r)
            batch->regs.push_back({&a.regs[4 * i + r], lane0 + t / 4 + (r >= 2 ? 8 : 0),
                                   col0 + 8 * uint32_t(i) + 2 * (t % 4) + uint32_t(r % 2)});
      }
      a.fiber->pending_ld.push_back(batch);
    }
    // The read happens asynchronously: when the scheduler picks this operation, or at the latest
    // at tcgen05.wait::ld. A kernel that loads before the MMAs finished reads stale TMEM.
    g_sched->async_ops.push_back([batch] { run_ld(*batch); });
  }, /*full_warp=*/true);
}

void tmem_wait_ld(SrcLoc at) {
  tick(at);
  Fiber& f = me();
  tcgen05_op("tcgen05.wait::ld");
  collective("tcgen05.wait::ld", nullptr, [](Collective&) {}, /*full_warp=*/true);
  for (const auto& b : f.pending_ld) run_ld(*b);
  f.pending_ld.clear();
}

// ---- warp MMA
void ldmatrix(int num, uint32_t addr, uint32_t* regs, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  struct Args {
    uint32_t addr;
    uint32_t* regs;
    int num;
  } args{addr, regs, num};
  collective("ldmatrix", &args, [&cta, num](Collective& c) {
    for (void* d : c.data)
      if (d && static_cast<Args*>(d)->num != num)
        fail_here("divergent warp at a .sync.aligned instruction", "ldmatrix with different .num in different lanes");
    // Matrix i's row r comes from the address lane 8*i + r supplied.
    uint32_t row_addr[32];
    for (int l = 0; l < 8 * num; ++l) {
      if (!c.data[size_t(l)]) fail_here("ldmatrix", "a lane that must supply a row address did not participate");
      row_addr[l] = static_cast<Args*>(c.data[size_t(l)])->addr;
      if (row_addr[l] % 16) fail_here("misaligned ldmatrix row", "row address " + hex(row_addr[l]) + " is not 16-byte aligned");
    }
    for (int l = 0; l < 32; ++l) {
      if (!c.data[size_t(l)]) continue;
      Args& a = *static_cast<Args*>(c.data[size_t(l)]);
      for (int j = 0; j < num; ++j)
        memcpy(&a.regs[j], smem_ptr(cta, row_addr[8 * j + l / 4] + 4 * uint32_t(l % 4), 4, "ldmatrix"), 4);
    }
  });
}

void mma_sync_m16n8k16_bf16(float* d, const uint32_t* a, const uint32_t* b, const float* c, SrcLoc at) {
  tick(at);
  struct Args {
    float* d;
    const uint32_t *a, *b;
    const float* c;
  } args{d, a, b, c};
  collective("mma.sync.m16n8k16", &args, [](Collective& col) {
    float A[16][16], B[16][8], C[16][8];
    auto lo = [](uint32_t r) { return f16_bits_to_float(uint16_t(r & 0xFFFF), true); };
    auto hi = [](uint32_t r) { return f16_bits_to_float(uint16_t(r >> 16), true); };
    for (int l = 0; l < 32; ++l) {
      if (!col.data[size_t(l)]) fail_here("mma.sync", "all 32 lanes must participate");
      const Args& x = *static_cast<Args*>(col.data[size_t(l)]);
      const int g = l / 4, t = l % 4;
      // Fragment layouts of PTX ISA §9.7.14.5.8 (m16n8k16, .bf16): A rows g / g+8, columns
      // 2t.. and 2t+8..; B rows (k) 2t.. and 2t+8.., column g; C/D rows g / g+8, columns 2t..
      for (int r = 0; r < 4; ++r) {
        const int row = g + 8 * (r % 2), colk = 2 * t + 8 * (r / 2);
        A[row][colk] = lo(x.a[r]);
        A[row][colk + 1] = hi(x.a[r]);
      }
      for (int r = 0; r < 2; ++r) {
        B[2 * t + 8 * r][g] = lo(x.b[r]);
        B[2 * t + 8 * r + 1][g] = hi(x.b[r]);
      }
      for (int r = 0; r < 4; ++r) C[g + 8 * (r / 2)][2 * t + r % 2] = x.c[r];
    }
    const auto t0 = Clock::now();
    float D[16][8];
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        float acc = 0.f;
        for (int k = 0; k < 16; ++k) acc += A[i][k] * B[k][j];
        D[i][j] = acc + C[i][j];
      }
    for (int l = 0; l < 32; ++l) {
      const Args& x = *static_cast<Args*>(col.data[size_t(l)]);
      const int g = l / 4, t = l % 4;
      for (int r = 0; r < 4; ++r) x.d[r] = D[g + 8 * (r / 2)][2 * t + r % 2];
    }
    g_stats.mmas++;
    g_stats.mma_flops += 2ull * 16 * 8 * 16;
    g_stats.mma_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  });
}

}  // namespace tcsim
