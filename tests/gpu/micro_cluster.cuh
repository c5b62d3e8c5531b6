// micro_cluster.cuh — the cluster microbenchmarks of micro.cu (kinds 8-11), included by it inside
// its per-build namespace so that the GPU and the emulator builds run the same kernels.
//
//  * kind 8, TMA multicast: a ring of `stages` slots, one box per stage, in every CTA of a cluster
//    of mc.cluster. mode 0: each CTA loads its own boxes; mode 1: the CTAs take turns, stage kt
//    issued by rank kt % C with .multicast::cluster to all; mode 2: rank 0 issues every box to all.
//    Modes 3-5: the same with the 1-D bulk copy (cp.async.bulk [.multicast::cluster]) of the box's
//    bytes from a contiguous source (step 13's scale copies). Every consumer frees a slot on the
//    issuer's empty barrier (count C), as multicast pipelines do.
//  * kind 9, distributed shared memory between the two CTAs of each cluster: mode 0 a dependent
//    chain of ld.shared::cluster.u32 (latency), 1 st.shared::cluster.v4 by 128 threads, 2
//    ld.shared::cluster.v4 by 128 threads (bandwidth), 3 cp.async.bulk shared::cta ->
//    shared::cluster of a_bw bytes each, back to back (bandwidth), 4 the same copy bounced between
//    the two CTAs (round trip). mc.cluster 1 runs modes 0-2 on the CTA's own shared memory.
//  * kind 10, launch skew and setup: each CTA stamps its start, initialises 16 mbarriers, fences,
//    and passes its first cluster barrier; span_of 100 reports the spread of the starts within a
//    cluster instead of the span.
//  * kind 11, the release before a remote arrive: 128 threads store a 128 x 256 BF16 tile row by
//    row (mode 0, 1) or nothing (2, 3), then lane 0 of each warp arrives on rank 0's barrier with
//    .release.cluster (0, 2: a GPU-scope membar first) or .release.cta (1, 3); rank 0's span ends
//    when the last arrival has landed.
// Stamps: 2 per CTA (start, end) as the other kernels; the CTAs a case does not measure write
// equal stamps, and span_of 1 + r averages rank r only.


struct ClusterArgs {
  MicroCase mc;
  uint32_t box_bytes;
  const uint8_t* src;  // kind 8, modes 3-5: the bulk copies' source (A's buffer)
  __nv_bfloat16* c;
  uint32_t* sink;
  uint64_t* stamps;
};

__device__ inline void write_stamps(uint64_t* stamps, uint64_t t0, uint64_t t1) {
  stamps[2 * blockIdx.x] = t0;
  stamps[2 * blockIdx.x + 1] = t1;
}

__global__ void mcast_kernel(const __grid_constant__ CUtensorMap map_a, const ClusterArgs args) {
  const uint64_t t0 = globaltimer();
  const MicroCase& mc = args.mc;
  const uint32_t base = smem_addr(aligned_smem_base());
  const uint32_t nst = uint32_t(mc.stages), C = cluster_nctarank(), rank = cluster_ctarank();
  const uint32_t full_bars = base + nst * args.box_bytes, empty_bars = full_bars + 8 * nst;
  const uint16_t all = uint16_t((1u << C) - 1);
  const int how = mc.mode % 3;  // 0 own, 1 turns, 2 rank 0 issues all
  const bool bulk = mc.mode >= 3;
  auto issuer = [&](int kt) { return how == 0 ? rank : how == 1 ? uint32_t(kt) % C : 0u; };
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < nst; ++s) {
      mbarrier_init(full_bars + 8 * s, 1);
      mbarrier_init(empty_bars + 8 * s, how == 0 ? 1 : C);
    }
    fence_mbarrier_init();
    for (uint32_t s = 0; s < nst && int(s) < mc.k_tiles; ++s) mbarrier_arrive_expect_tx(full_bars + 8 * s, args.box_bytes);
  }
  cluster_sync();  // every CTA's barriers are initialised (and armed) before any box lands
  const int row = int((cluster_id_x() * uint32_t(mc.a_bh)) % uint32_t(mc.a_rows));
  if (threadIdx.x == 0) {  // producer
    for (int kt = 0; kt < mc.k_tiles; ++kt) {
      if (issuer(kt) != rank) continue;
      const uint32_t s = uint32_t(kt) % nst;
      if (kt >= int(nst)) mbarrier_wait_parity(empty_bars + 8 * s, uint32_t((kt / int(nst) - 1) & 1));
      const int col = (kt * mc.a_bw) % mc.a_cols;
      if (bulk) {  // the box's bytes, contiguous: row `row` onwards of the source, one box per k-tile
        const size_t boxes = size_t(mc.a_rows) * mc.a_cols * 2 / args.box_bytes;
        const uint8_t* src = args.src + (size_t(row) * mc.a_cols * 2 / args.box_bytes + size_t(kt)) % boxes * args.box_bytes;
        if (how == 0) bulk_load(base + s * args.box_bytes, src, args.box_bytes, full_bars + 8 * s);
        else bulk_load_multicast(base + s * args.box_bytes, src, args.box_bytes, full_bars + 8 * s, all);
      } else if (how == 0) {
        tma_load_2d(base + s * args.box_bytes, &map_a, col, row, full_bars + 8 * s);
      } else {
        tma_load_2d_multicast(base + s * args.box_bytes, &map_a, col, row, full_bars + 8 * s, all);
      }
    }
  } else if (threadIdx.x == 32) {  // consumer: takes each stage, re-arms its slot, frees it at the issuer
    for (int kt = 0; kt < mc.k_tiles; ++kt) {
      const uint32_t s = uint32_t(kt) % nst;
      mbarrier_wait_parity(full_bars + 8 * s, uint32_t((kt / int(nst)) & 1));
      if (kt + int(nst) < mc.k_tiles) mbarrier_arrive_expect_tx(full_bars + 8 * s, args.box_bytes);
      // CTA-scope release: the arrival is the message (a .release.cluster arrive would add a
      // GPU-scope membar, ~0.4 us on the H100, to every stage: the "release" cases)
      mbarrier_arrive_cluster_cta_scope(mapa_shared_cluster(empty_bars + 8 * s, issuer(kt)));
    }
  }
  __syncthreads();
  const uint64_t t1 = globaltimer();
  cluster_sync();  // no CTA exits while a peer may still arrive on its barriers
  if (threadIdx.x == 0) write_stamps(args.stamps, t0, t1);
}

__global__ void dsmem_bench_kernel(const ClusterArgs args) {
  const MicroCase& mc = args.mc;
  uint8_t* smem = aligned_smem_base();
  const uint32_t base = smem_addr(smem), t = threadIdx.x;
  const uint32_t C = cluster_nctarank(), rank = cluster_ctarank(), peer = C > 1 ? rank ^ 1u : rank;
  const uint32_t region = 64 * 1024, bar = base + 2 * region, peer_base = mapa_shared_cluster(base, peer);
  // Shared memory: [0, 64 KiB) the source / chain, [64, 128 KiB) the destination, then 2 barriers.
  for (uint32_t i = t; i < region / 4; i += blockDim.x)  // chain: word i holds the offset of word i + 33 (mod)
    reinterpret_cast<volatile uint32_t*>(smem)[i] = ((i + 33) % (region / 4)) * 4;
  if (t == 0) {
    mbarrier_init(bar, 1);
    mbarrier_init(bar + 8, 1);
    fence_mbarrier_init();
  }
  const uint32_t total = uint32_t(mc.k_tiles) * uint32_t(mc.a_bw);
  if (t == 0 && mc.mode == 3 && rank == 1) mbarrier_arrive_expect_tx(bar, total);
  fence_proxy_async_shared_cta();  // the chain words are the copies' source
  cluster_sync();
  const uint64_t t0 = globaltimer();
  uint64_t t1 = t0;
  uint32_t acc = 0;
  if (mc.mode == 0 && rank == 0 && t == 0) {
    uint32_t off = 0;
    for (int i = 0; i < mc.k_tiles; ++i) off = ld_shared_cluster_u32(peer_base + off);
    acc = off;
    t1 = globaltimer();
  } else if ((mc.mode == 1 || mc.mode == 2) && rank == 0 && t < 128) {
    for (int i = 0; i < mc.k_tiles; ++i) {
      const uint32_t a = peer_base + region + ((uint32_t(i) * 128 + t) * 16) % region;
      if (mc.mode == 1) {
        st_shared_cluster_v4(a, t, uint32_t(i), 0, 0);
      } else {
        uint32_t v[4];
        ld_shared_cluster_v4(a, v);
        acc ^= v[0] ^ v[1] ^ v[2] ^ v[3];
      }
    }
  } else if (mc.mode == 3 && rank == 0 && t == 0) {
    for (int i = 0; i < mc.k_tiles; ++i)
      bulk_copy_smem_to_cluster(peer_base + region, base, uint32_t(mc.a_bw), mapa_shared_cluster(bar, peer));
  } else if (mc.mode == 3 && rank == 1 && t == 0) {
    mbarrier_wait_parity(bar, 0);
    t1 = globaltimer();
  } else if (mc.mode == 4 && t == 0) {  // bounce: rank 0 sends, rank 1 returns, k_tiles round trips
    for (int i = 0; i < mc.k_tiles; ++i) {
      const uint32_t parity = uint32_t(i) & 1u;
      if (rank == 0) {
        mbarrier_arrive_expect_tx(bar, uint32_t(mc.a_bw));
        bulk_copy_smem_to_cluster(peer_base + region, base, uint32_t(mc.a_bw), mapa_shared_cluster(bar + 8, peer));
        mbarrier_wait_parity(bar, parity);
      } else {
        mbarrier_arrive_expect_tx(bar + 8, uint32_t(mc.a_bw));
        mbarrier_wait_parity(bar + 8, parity);
        bulk_copy_smem_to_cluster(peer_base + region, base, uint32_t(mc.a_bw), mapa_shared_cluster(bar, peer));
      }
    }
    t1 = globaltimer();
  }
  if (mc.mode == 1 || mc.mode == 2) {  // the stores are complete (visible to the peer) after the barrier
    cluster_sync();
    t1 = globaltimer();
  }
  if (acc == 0x12345679u) args.sink[0] = acc;  // keeps the loads
  __syncthreads();
  if (t == 0 && (mc.mode != 3 || rank == 1)) write_stamps(args.stamps, t0, t1);
  else if (t == 0) write_stamps(args.stamps, t0, t0);
  cluster_sync();
}

__global__ void skew_kernel(uint64_t* stamps) {
  const uint64_t t0 = globaltimer();
  const uint32_t base = smem_addr(aligned_smem_base());
  if (threadIdx.x == 0) {
    for (int i = 0; i < 16; ++i) mbarrier_init(base + 8 * i, 1);
    fence_mbarrier_init();
  }
  cluster_sync();
  if (threadIdx.x == 0) write_stamps(stamps, t0, globaltimer());
}

__global__ void release_kernel(const ClusterArgs args) {
  const MicroCase& mc = args.mc;
  const uint32_t base = smem_addr(aligned_smem_base()), rank = cluster_ctarank(), C = cluster_nctarank();
  const int t = int(threadIdx.x);
  if (t == 0) {
    mbarrier_init(base, 4 * C);  // lane 0 of 4 warps in each CTA
    fence_mbarrier_init();
  }
  cluster_sync();
  const uint64_t t0 = globaltimer();
  if (mc.mode <= 1) store_tile(args.c, 4096, int(blockIdx.x % 32) * kTileRows, int(blockIdx.x / 32) * 256, 256, 1, t);
  __syncwarp();
  if (t % 32 == 0) {
    const uint32_t leader_bar = mapa_shared_cluster(base, 0);
    if (mc.mode == 0 || mc.mode == 2) mbarrier_arrive_cluster(leader_bar);
    else mbarrier_arrive_cluster_cta_scope(leader_bar);
  }
  uint64_t t1 = t0;
  if (rank == 0 && t == 0) {
    mbarrier_wait_parity(base, 0);
    t1 = globaltimer();
  }
  __syncthreads();
  if (t == 0) write_stamps(args.stamps, t0, t1);
  cluster_sync();  // no CTA exits while its barrier may still receive arrivals
}
