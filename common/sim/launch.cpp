// launch.cpp — a kernel launch in the emulator: the grid, its clusters, where they run, and the
// checks made when a CTA exits.
//
// Models: a grid of CTAs launched in clusters (cudaLaunchKernelEx with a cluster dimension; the
// grid must be a whole number of clusters, at most 8 CTAs each, the portable limit: CUDA
// Programming Guide, "Thread Block Clusters"); %cluster_ctarank = x + y*X + z*X*Y inside the
// cluster, %clusterid = the cluster's index (PTX ISA §10.12-10.16).
// Residency: the GPU has Options::num_sms SMs. Clusters become resident in grid order, all CTAs
// of a cluster at once on distinct SMs (an aligned group of cluster-size SMs, so a CTA pair sits
// on an SM pair), each SM holding as many CTAs as its 228 KiB of shared memory (the CTA's
// dynamic shared memory + 1 KiB reserved each), 2048 threads and 32 CTA slots allow (the CUDA
// occupancy rules for compute capability 10.0; registers are not counted: the emulator build does
// not know them) or Options::ctas_per_sm. Among the SM groups with room, the seed picks one. The
// CTAs of one SM share its TMEM (tmem.cpp). A cluster is retired when all its threads have
// exited, which makes room for the next.
// When the last thread of a CTA exits, its resources die with it, so the emulator checks that
// nothing can still reach them, on the happens-before relation (happens_before.h: what happens
// before the CTA's end is what happens before one of its threads' exits): no asynchronous
// operation in flight towards its shared memory, mbarriers or TMEM, nor one that landed on a
// barrier phase no wait of the CTA saw complete, nor an MMA / tcgen05.cp on its shared memory or
// TMEM whose completion (commit + wait) no thread of it is ordered after; so these are reported
// under every seed, not only when a seed delays the operation past the exit. No access from
// another CTA of the cluster that does not happen before the CTA's end (CUDA Programming Guide,
// "Distributed Shared Memory": a CTA must not exit while others may still access its shared
// memory); no TMEM left allocated (PTX ISA §9.7.16.7.1); no transaction bytes announced and never
// delivered (§9.7.13.15).
#include <algorithm>
#include <cstring>
#include <sstream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace detail {

namespace {
constexpr uint32_t kSmemPerSm = 233472;  // 228 KiB of shared memory per SM (sm_100)
constexpr uint32_t kSmemReservedPerCta = 1024;
constexpr uint32_t kThreadsPerSm = 2048;
constexpr uint32_t kCtasPerSm = 32;

// The asynchronous operations of `cl` that still target `rank`.
const AsyncOp* pending_towards(Scheduler& s, const Cluster* cl, uint32_t rank) {
  const uint32_t bit = 1u << rank;
  for (const AsyncOp& op : s.async_ops)
    if (op.cluster == cl && (op.targets & bit)) return &op;
  for (Fiber* f : s.tc_busy)
    for (const AsyncOp& op : f->tc_ops)
      if (op.cluster == cl && (op.targets & bit)) return &op;
  return nullptr;
}

bool sm_has_room(const Scheduler& s, const Sm& sm) {
  return sm.resident.size() < s.max_ctas_per_sm && sm.smem_used + s.smem_per_cta <= kSmemPerSm &&
         sm.threads_used + s.block.x <= kThreadsPerSm;
}
}  // namespace

void cta_finished(Cta& cta) {
  Scheduler& s = *g_sched;
  cta.finished = true;
  if (s.timed) bounds_cta_exit(*cta.sm, s.cur ? s.cur->t : s.now);
  const std::string name = cta_name(cta);
  if (const AsyncOp* op = pending_towards(s, cta.cluster, cta.rank))
    fail("tcsim: CTA exited with asynchronous work in flight\n  " + name + " exited while " + op->what +
         " issued by " + (op->issuer ? who(*op->issuer) : std::string("?")) + " at " + loc(op->at) +
         " still targets its shared memory, mbarriers or TMEM; a CTA's resources end with it, so wait for that "
         "operation's completion (its mbarrier) before the CTA exits");
  // What happens before the CTA's end: everything that happens before one of its threads' exits
  // (happens_before.h), i.e. the join of their clocks.
  HbClock end;
  const std::vector<Known>* joined = nullptr;  // the entries of the last clock joined
  for (const Fiber* f : cta.fibers) {
    // Threads past the same barrier share one set of entries: joined once, they add nothing more.
    if (&f->hb.entries() != joined) end.join(f->hb);
    joined = &f->hb.entries();
    end.at(f->agent).epoch = std::max(end.at(f->agent).epoch, f->epoch);
  }
  // Another CTA's access must happen before this CTA's end (a cluster barrier after the access).
  for (const RemoteAccess& ra : cta.remote_accesses) {
    if (!ra.by || ra.by->cta->finished) continue;  // that CTA is gone: it cannot reach us any more
    if (!end.knows(ra.stamp.agent, ra.stamp.epoch))
      fail("tcsim: CTA exited while its cluster peer can still reach it\n  " + name + " exited, but " +
           cta_name(*ra.by->cta) + " is still running and its " + ra.what + " (" + who(*ra.by) + " at " +
           loc(ra.at) + ") reached into this CTA, and no thread of this CTA is ordered after that access. A CTA "
           "whose shared memory or TMEM other CTAs use must not exit before a cluster barrier (arrive + wait in "
           "every CTA) that follows their last access");
  }
  // Its bulk copies into other CTAs read this CTA's shared memory until they complete there.
  for (const RemoteAccess& oc : cta.outgoing_copies) {
    const Known* k = end.find(oc.stamp.agent);
    if (!k || k->committed == 0)
      fail("tcsim: CTA exited while its bulk copy may still read its shared memory\n  " + name + " exited, but the " +
           oc.what + " issued by " + (oc.by ? who(*oc.by) : std::string("?")) + " at " + loc(oc.at) +
           " completes on a barrier of another CTA, and no thread of this CTA is ordered after that completion. The "
           "copy reads this CTA's shared memory until then: wait for it through the destination (e.g. a cluster "
           "barrier after the destination's wait on its barrier) before the CTA exits (PTX ISA §9.7.9.25.4.1, "
           "§9.7.13.3)");
  }
  for (const auto& [addr, b] : cta.mbars)
    if (b.tx != 0)
      fail("tcsim: mbarrier tx-count " + std::string(b.tx < 0 ? "underflow" : "left over") + "\n  " + name +
           " exited with tx-count " + std::to_string(b.tx) + " on the mbarrier at " + hex((cta.rank << kRankShift) | addr) +
           " (initialised at " + loc(b.init_at) + "): " +
           (b.tx < 0 ? "TMA copies delivered more bytes than expect_tx announced"
                     : "expect_tx announced bytes that no TMA copy delivered"));
  if (!cta.allocs.empty()) {
    const TmemAlloc& a = cta.allocs.front();
    fail("tcsim: TMEM leak\n  " + name + " exited with TMEM still allocated: " + describe_allocs(cta) +
         " (the first by warp " + std::to_string(a.warp) + " at " + loc(a.at) +
         "). Every tcgen05.alloc needs a tcgen05.dealloc before the CTA exits (PTX ISA §9.7.16.7.1).");
  }
  // Asynchronous work that has landed, but that no thread of the CTA is ordered after: on the GPU
  // it may still be in flight when the CTA's shared memory and TMEM are handed to the next CTA.
  // Checked whether or not this run happened to perform it early, so under every seed.
  for (const auto& [addr, b] : cta.mbars)
    if (b.async_phase_end > b.observed)
      fail("tcsim: CTA exited with asynchronous work it never waited for\n  " + name + " exited, but " + b.async_by.text() +
           " completed on the mbarrier at " + hex((cta.rank << kRankShift) | addr) + " (initialised at " +
           loc(b.init_at) + ") in its phase " + std::to_string(b.async_phase_end - 1) + ", and no wait of this CTA "
           "saw that phase complete (waits saw " + std::to_string(b.observed) + " phases). Nothing orders the "
           "operation before the CTA's end, so on a GPU it may still write the CTA's shared memory or arrive on "
           "its barrier after the CTA is gone: wait for that phase before exiting (a ring's drain; PTX ISA "
           "§9.7.13.15, §9.7.16.6.4.4)");
  for (const auto& op : cta.tc_targets) {
    const Known* k = end.find(op->agent);
    if (!k || k->committed < op->need)
      fail("tcsim: CTA exited with asynchronous work it never waited for\n  " + name + " exited, but the " +
           op->name + " issued by " + who(*op->issuer) + " at " + loc(op->at) + " uses its shared memory or TMEM, "
           "and no thread of this CTA is ordered after its completion (a tcgen05.commit after it and a wait on "
           "that commit's mbarrier, PTX ISA §9.7.16.6.4.4): on a GPU it may still run when the CTA is gone");
  }
}

void admit_clusters(Scheduler& s) {
  const uint32_t csize = s.cluster_shape.x * s.cluster_shape.y * s.cluster_shape.z;
  while (s.next_cluster < s.num_clusters && s.resident_ctas + csize <= s.max_resident_ctas) {
    // SM groups (csize aligned SMs) with room for one CTA on each.
    std::vector<uint32_t> groups;
    for (uint32_t g = 0; g + csize <= s.sms.size(); g += csize) {
      bool room = true;
      for (uint32_t i = 0; i < csize; ++i) room = room && sm_has_room(s, s.sms[g + i]);
      if (room) groups.push_back(g);
    }
    if (groups.empty()) return;  // wait for a cluster to retire
    uint32_t g = groups[s.rng.below(groups.size())];
    if (s.timed) {  // the timing model: the least loaded SM group first, like the block scheduler
      auto load = [&s, csize](uint32_t grp) {
        size_t n = 0;
        for (uint32_t i = 0; i < csize; ++i) n += s.sms[grp + i].resident.size();
        return n;
      };
      g = *std::min_element(groups.begin(), groups.end(), [&](uint32_t a, uint32_t b) { return load(a) < load(b); });
    }
    // Cluster index -> cluster coordinates, x fastest (grid order).
    const dim3 grid_c(s.grid.x / s.cluster_shape.x, s.grid.y / s.cluster_shape.y, s.grid.z / s.cluster_shape.z);
    const uint64_t ci = s.next_cluster++;
    clc_skip_canceled(s);
    const uint32_t cx = uint32_t(ci % grid_c.x), cy = uint32_t(ci / grid_c.x % grid_c.y),
                   cz = uint32_t(ci / (uint64_t(grid_c.x) * grid_c.y));
    auto clp = std::make_unique<Cluster>();
    Cluster& cl = *clp;
    cl.id = uint3{cx, cy, cz};
    cl.shape = s.cluster_shape;
    cl.threads = csize * s.block.x;
    const dim3 cs = s.cluster_shape;
    for (uint32_t r = 0; r < csize; ++r) {
      auto cta = std::make_unique<Cta>();
      cta->block_idx = uint3{cx * cs.x + r % cs.x, cy * cs.y + (r / cs.x) % cs.y, cz * cs.z + r / (cs.x * cs.y)};
      cta->rank = r;
      cta->cluster = &cl;
      cta->sm = &s.sms[g + r];
      if (cta->sm->tmem.empty()) cta->sm->tmem.assign(size_t(tcg::kTmemLanes) * tcg::kTmemColumns, kTmemPoison);
      cta->sm->resident.push_back(cta.get());
      if (s.timed) bounds_resident(*cta->sm);
      cta->sm->smem_used += s.smem_per_cta;
      cta->sm->threads_used += s.block.x;
      cta->smem_bytes = s.smem_per_cta - kSmemReservedPerCta;
      cta->smem_storage.assign(size_t(cta->smem_bytes) + 1024, 0xFF);  // 0xFFFF is a BF16 NaN
      cta->smem = cta->smem_storage.data();
      const uint32_t nwarps = (s.block.x + 31) / 32;
      cta->warps.assign(nwarps, Collective{});
      cta->warp_exited.assign(nwarps, 0);
      for (auto& b : cta->bars) b.expected = s.block.x;
      cl.ctas.push_back(cta.get());
      cl.owned_ctas.push_back(std::move(cta));
      g_stats.ctas++;
    }
    for (Cta* cta : cl.ctas)
      for (uint32_t t = 0; t < s.block.x; ++t) create_fiber(s, cl, cta, t);
    s.resident_ctas += csize;
    s.clusters.push_back(std::move(clp));
  }
}

void retire_clusters(Scheduler& s) {
  s.retire_pending = false;
  for (size_t i = 0; i < s.clusters.size();) {
    Cluster& cl = *s.clusters[i];
    if (cl.done != cl.fibers.size()) {
      ++i;
      continue;
    }
    for (Cta* cta : cl.ctas) {
      Sm& sm = *cta->sm;
      sm.resident.erase(std::find(sm.resident.begin(), sm.resident.end(), cta));
      sm.smem_used -= s.smem_per_cta;
      sm.threads_used -= s.block.x;
    }
    // Drop the cluster's finished bookkeeping from the asynchronous pool (loads already waited).
    s.async_ops.erase(std::remove_if(s.async_ops.begin(), s.async_ops.end(),
                                     [&cl](const AsyncOp& op) { return op.cluster == &cl && op.targets == 0; }),
                      s.async_ops.end());
    for (auto& f : cl.fibers) release_stack(f->stack);
    s.resident_ctas -= uint32_t(cl.ctas.size());
    s.clusters.erase(s.clusters.begin() + long(i));
    s.admit_pending = true;  // its SMs have room again
  }
}

}  // namespace detail

// =============================================================================================
// Public API
void set_options(const Options& o) { g_options = o; }
const Options& options() { return g_options; }
const Stats& last_stats() { return g_stats; }

const ThreadVars& current() { return me().vars; }

namespace {
// A launch allocates and frees hundreds of MB in small and large blocks (happens-before clocks,
// shared memory and TMEM of each CTA, the harness's buffers). glibc returns freed memory at the
// top of its heap, and every block above its mmap threshold, to the kernel, so that the next
// launch (the --predict range runs three) faults the same pages in again, zeroed: a tenth of a
// --predict's system time and more. Keep them in the process instead (measured, 2026-12-07: the
// peak of ./step04 --predict the same, of a 64-CTA --predict 5% higher).
void keep_freed_memory() {
#if defined(__GLIBC__)
  static const bool done = [] {
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)done;
#endif
}
}  // namespace

void launch(dim3 grid, dim3 block, dim3 cluster, uint32_t smem_bytes, const std::function<void()>& body) {
  keep_freed_memory();
  if (smem_bytes > kMaxDynamicSmem)
    throw SimError("tcsim: launch asks for " + std::to_string(smem_bytes) +
                   " bytes of dynamic shared memory; sm_100 allows at most " + std::to_string(kMaxDynamicSmem));
  const uint32_t nthreads = block.x * block.y * block.z;
  if (nthreads == 0 || nthreads > 1024) throw SimError("tcsim: block of " + std::to_string(nthreads) + " threads");
  if (block.y != 1 || block.z != 1) throw SimError("tcsim: only 1-D thread blocks are modelled");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
    throw SimError("tcsim: invalid grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
                   std::to_string(grid.z) + "): x must be in 1..2^31-1, y and z in 1..65535 (as on the GPU)");
  const uint32_t cluster_size = cluster.x * cluster.y * cluster.z;
  if (g_options.num_sms < 1 || g_options.num_sms > 1024)
    throw SimError("tcsim: --sim-sms " + std::to_string(g_options.num_sms) + " is not in 1..1024");
  if (smem_bytes + kSmemReservedPerCta > kSmemPerSm || nthreads > kThreadsPerSm)
    throw SimError("tcsim: a CTA of " + std::to_string(nthreads) + " threads and " + std::to_string(smem_bytes) +
                   " bytes of shared memory does not fit on an SM");
  if (cluster_size == 0 || cluster_size > 8)
    throw SimError("tcsim: cluster (" + std::to_string(cluster.x) + ", " + std::to_string(cluster.y) + ", " +
                   std::to_string(cluster.z) + ") has " + std::to_string(cluster_size) +
                   " CTAs; a portable cluster has 1 to 8");
  if (grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z)
    throw SimError("tcsim: grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
                   std::to_string(grid.z) + ") is not a whole number of clusters (" + std::to_string(cluster.x) +
                   ", " + std::to_string(cluster.y) + ", " + std::to_string(cluster.z) + ")");
  if (cluster_size > uint32_t(g_options.num_sms))
    throw SimError("tcsim: a cluster of " + std::to_string(cluster_size) + " CTAs needs " + std::to_string(cluster_size) +
                   " SMs (its CTAs run on distinct SMs), but the emulated GPU has " + std::to_string(g_options.num_sms) +
                   " (--sim-sms)");
  g_stats = Stats{};
  global_order_reset();
  tensormap_reset();
  const auto t0 = Clock::now();
  Scheduler s;
  s.rng.s = g_options.seed * 0x2545F4914F6CDD1Dull + 12345;
  // Each seed explores a different regime: how eagerly threads are preempted and how soon
  // asynchronous operations complete relative to the issuing threads.
  // The seed picks a regime for asynchronous work (copies, MMAs, commits, remote arrivals):
  //   seed % 4 == 0  lazy:  it completes when no thread can run, otherwise only at one
  //                  scheduling step in 10000 (it must still complete under a thread that polls
  //                  memory), so a read that forgot to wait sees stale data; and nine times in
  //                  ten when it must complete, it does so in the most adversarial order (the
  //                  tcgen05 queues first, then the newest copy or arrival), so unordered
  //                  operations (copies, commit arrivals) really land out of issue order;
  //   seed % 4 == 2  eager: it completes as soon as it is issued, before any thread runs again;
  //   otherwise      it completes at random points in between.
  // Every seed also draws how often threads are preempted at an instruction.
  s.p_preempt = 0.02 + 0.5 * s.rng.uniform();
  const double p_random = 0.02 + 0.9 * s.rng.uniform();
  s.p_async = g_options.seed % 4 == 0 ? 0.0001 : g_options.seed % 4 == 2 ? 1.0 : p_random;
  s.p_newest_first = g_options.seed % 4 == 0 ? 0.9 : 0.0;
  if (g_options.timing) {
    // The timing model runs every CTA the GPU would hold at once, in clock order, with no
    // randomness (timed_run.cpp run_grid_timed, timing.cpp).
    s.timed = true;
    s.p_preempt = 0;
  }
  model_begin_launch();
  trace_begin_launch(s);
  // The timing model: a thread exits only once its global stores have drained (timing.cpp).
  const std::function<void()> timed_body = [&body] {
    body();
    if (timed()) model_thread_exit(me());
  };
  s.body = s.timed ? &timed_body : &body;
  s.grid = grid;
  s.block = block;
  s.cluster_shape = cluster;
  s.num_clusters = uint64_t(grid.x / cluster.x) * (grid.y / cluster.y) * (grid.z / cluster.z);
  s.smem_per_cta = smem_bytes + kSmemReservedPerCta;
  s.max_ctas_per_sm = std::min<uint32_t>(kCtasPerSm, g_options.ctas_per_sm > 0 ? uint32_t(g_options.ctas_per_sm) : kCtasPerSm);
  s.max_resident_ctas = std::max<uint32_t>(cluster_size, uint32_t(std::max(1, g_options.max_resident_ctas)));
  if (s.timed) s.max_resident_ctas = uint32_t(g_options.num_sms) * kCtasPerSm;  // as many as fit
  s.sms.resize(size_t(g_options.num_sms));
  for (size_t i = 0; i < s.sms.size(); ++i) s.sms[i].id = uint32_t(i);  // TMEM storage: on first use
  bounds_reset(s);
  g_sched = &s;
  const std::shared_ptr<void> watchdog = start_watchdog(g_options.watchdog_seconds);
  struct Reset {
    ~Reset() {
      for (auto& cl : g_sched->clusters)
        for (auto& f : cl->fibers) release_stack(f->stack);
      g_sched = nullptr;
    }
  } reset;
  run_grid(s);  // returns once every cluster has run and all asynchronous work completed
  if (s.timed) {
    g_stats.model_ns = s.end;
    bounds_finish(s);
    trace_end_launch(s);
  }

  g_stats.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace tcsim
