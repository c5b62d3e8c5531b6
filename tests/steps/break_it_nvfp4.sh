# break_it_nvfp4.sh — the "Break it" cases of the NVFP4 steps 10-13 and 15 (docs/10-13, 15),
# sourced by tests/steps/break_it.sh, whose case_ function and options they use; not run alone.

# step 10 (NVFP4 split-K). S10_ARGS: 2 tiles of 128 x 128 on 8 emulated SMs, 34 k-tiles (the
# last of one k-step): S = 4 splits of 9, 9, 8, 8 k-tiles per tile, integer inputs; all 8 CTAs
# are resident at once, so the scheduler seed decides which CTA of a tile arrives last. Each run
# also launches a second time under another seed (common/harness/workspace.cpp).
S10=steps/step10_nvfp4_split_k.cu
S10_ARGS="--m 128 --n 256 --k 8512 --inputs integer --sim-sms 8"
ARGS=$S10_ARGS case_ s10-lost-partial $S10 wrong \
  '      for (int col = 0; col < BLOCK_N; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
        tmem_wait_ld(r);
        for (int g = 0; g < 4; ++g)' '      for (int col = 0; col < BLOCK_N; col += 16) {
        uint32_t r[16];
        tmem_ld_32x32b_x16(tmem_offset(tmem_accum, quarter * 32, col), r);
        tmem_wait_ld(r);
        for (int g = 0; g < (col == 112 ? 3 : 4); ++g)  // the last 4 columns never reach the workspace'
ARGS=$S10_ARGS case_ s10-counter-before-all-stores $S10 "diag:global load before the store is visible" \
  '      tcgen05_fence_before_thread_sync();
      named_barrier_sync(EPILOGUE_BAR, EPILOGUE_THREADS);
      if (warp == 2 && lane == 0) {' '      tcgen05_fence_before_thread_sync();
      if (warp == 2 && lane == 0) {  // counts before warps 3-5 have stored'
ARGS=$S10_ARGS case_ s10-reduce-without-counter $S10 wrong \
  '      if (*reducer_flag) {' '      if (split == splits - 1) {  // "the last split finishes last"'
# Summing the partials in arrival order (the reducing CTA's own first, it is at hand): with integer
# or random inputs every FP32 sum is exact and the order never shows; with --inputs wide (block
# scales over 10 binades) the two launches of a run, whose last CTAs differ, give different bits.
ARGS="--m 128 --n 256 --k 8512 --inputs wide --sim-sms 8" case_ s10-sums-in-arrival-order $S10 wrong \
  '          for (int s = 0; s < splits; ++s) {
            uint32_t v[16];' '          for (int i = 0; i < splits; ++i) {  // "its own partial first: it is already in TMEM"
            const int s = i == 0 ? split : (i <= split ? i - 1 : i);
            uint32_t v[16];' \
  'acc[e] = s == 0 ? u32_as_float(v[e])' 'acc[e] = i == 0 ? u32_as_float(v[e])'
ARGS=$S10_ARGS case_ s10-drops-tail-k-tile $S10 wrong \
  'const int my_k_tiles = per_split + (split < extra ? 1 : 0);' 'const int my_k_tiles = per_split;'
ARGS=$S10_ARGS case_ s10-counter-not-reset $S10 "diag:must leave its counters" \
  '        if (last) st_relaxed_gpu(counters + tile, 0u);
' ''
# Without the barrier the lanes of a warp read the reducer flag at different times and disagree:
# the first report is usually the divergent warp at the next .aligned barrier (issue 31), or the
# load before the store is visible.
ARGS=$S10_ARGS case_ s10-no-barrier-after-acquire $S10 wrong \
  '      named_barrier_sync(EPILOGUE_BAR, EPILOGUE_THREADS);
      tcgen05_fence_after_thread_sync();
      // 3.' '      tcgen05_fence_after_thread_sync();  // warps 3-5 do not wait for the acquire
      // 3.'

# step 11 (NVFP4 split-K, 2 k-tiles per stage, TMA-store C). S11_ARGS: step 10's shape, where step
# 11's plan takes BLOCK_N 64 and S = 2 (17 k-tiles each: every split ends with a lone k-tile, the
# last one the 1-step tail k-tile). S11_ONE: the same on 2 SMs, BLOCK_N 128 and S = 1: the tail
# k-tile is the second of a stage.
S11=steps/step11_nvfp4_wide_copies.cu
S11_ARGS="--m 128 --n 256 --k 8512 --inputs integer --sim-sms 8"
S11_ONE="--m 128 --n 256 --k 8512 --inputs integer --sim-sms 2"
ARGS=$S11_ONE case_ s11-3d-box-over-tail $S11 wrong \
  'if (kts == KT_PER_STAGE && kt0 + kts <= full_k_tiles) {' 'if (kts == KT_PER_STAGE) {  // "the box stops at K anyway"'
ARGS=$S11_ARGS case_ s11-lone-k-tile-as-pair $S11 "diag:tx-count" \
  'if (kts == KT_PER_STAGE && kt0 + kts <= full_k_tiles) {' 'if (kt0 + KT_PER_STAGE <= full_k_tiles) {  // "a box of 2 is as cheap"'
ARGS=$S11_ARGS case_ s11-scales-of-one-k-tile $S11 wrong \
  '        for (int j = 0; j < kts; ++j) ksteps += ksteps_of(kt0 + j);' '        ksteps = ksteps_of(kt0);  // step 10'"'"'s scale bytes: one k-tile'"'"'s'
KNOBS=TCG_STEP11_BLOCK_N=64 ARGS="--m 128 --n 256 --k 4096 --inputs integer --sim-sms 4" case_ s11-n64-lower-half-scales \
  $S11 wrong 'const uint32_t sfb_half_cols = uint32_t(n0) % kSfAtomRows / 32;' \
  'const uint32_t sfb_half_cols = 0;  // "the atom starts at its tile"'
ARGS=$S11_ARGS case_ s11-no-proxy-fence $S11 "diag:missing fence.proxy.async" \
  '        fence_proxy_async_shared_cta();  // this lane' '        // this lane'
ARGS=$S11_ARGS case_ s11-no-final-wait $S11 "diag:TMA store not waited for" \
  '      if (tma_c && lane == STORE_LANE) bulk_wait_group_read<0>();
' ''

# step 12 (split-K reduced in a cluster through DSMEM). S12_ARGS: 34 k-tiles, clusters of S = 4
# forced (S12_KNOBS; the plan then takes 2 tiles of 128 x 128, one wave on 8 SMs): each rank owns
# one quarter and receives three copies.
# Reading before the peers' copies landed shows as a read of bytes a copy still writes when the
# owner gets there first, else as a CTA exiting while a peer's copy still reaches it; without the
# first cluster barrier a peer's copy completes on a receive barrier whose init was never
# published to it (that barrier is also what says "my ring is free").
S12=steps/step12_nvfp4_cluster_reduce.cu
S12_ARGS="--m 128 --n 256 --k 8512 --inputs integer --sim-sms 8"
S12_KNOBS=TCG_STEP12_SPLITS=4
KNOBS=$S12_KNOBS ARGS=$S12_ARGS case_ s12-read-before-peers-write $S12 "diag:shared memory read while a copy into it is in flight" \
  '        mbarrier_wait_parity(recv_bar(quarter), 0);  // the S - 1 peers'"'"' copies have landed' \
  '        // "the cluster barrier already synchronised the CTAs"'
KNOBS=$S12_KNOBS ARGS=$S12_ARGS case_ s12-no-cluster-barrier-before-copies $S12 "diag:before its init was published" \
  '    cluster_arrive_relaxed();
    cluster_wait();
    tcgen05_fence_after_thread_sync();
  }

  if (warp >= 2) {' '    tcgen05_fence_after_thread_sync();  // "the receive barriers order the copies"
  }

  if (warp >= 2) {'
KNOBS=$S12_KNOBS ARGS=$S12_ARGS case_ s12-exit-while-peer-copies $S12 "diag:CTA exited while its bulk copy may still read its shared memory" \
  '  if (splits > 1) {
    cluster_arrive_relaxed();
    cluster_wait();
  } else {
    __syncthreads();
  }' '  __syncthreads();  // "each CTA waited for what it receives"'
KNOBS=$S12_KNOBS ARGS=$S12_ARGS case_ s12-slot-of-the-owner $S12 wrong \
  'mapa_shared_cluster(recv_slot(quarter, split), uint32_t(owner))' 'mapa_shared_cluster(recv_slot(quarter, owner + 1), uint32_t(owner))'
# Two senders given one receive slot (split s into slot s / 2 * 2: splits 2 and 3 share slot 2, 0
# and 1 slot 0), with S = 4 forced: the two copies are in flight into the same bytes at once
# (whichever lands last wins); reported at the second one's issue, under every seed.
KNOBS=$S12_KNOBS ARGS=$S12_ARGS case_ s12-two-senders-one-slot $S12 "every:diag:asynchronous copies with overlapping destinations in flight" \
  'mapa_shared_cluster(recv_slot(quarter, split), uint32_t(owner))' 'mapa_shared_cluster(recv_slot(quarter, split / 2 * 2), uint32_t(owner))'
# A correct variant: no tcgen05.fence::after_thread_sync after the owner's wait on its receive
# barrier. That wait carries no tcgen05 ordering; the owner's tcgen05.ld depends on the MMAs,
# which the earlier wait + fence (and the cluster barrier's fences) ordered, and a later unrelated
# wait does not undo that (PTX ISA §9.7.16.6.4). It must verify (with a note).
KNOBS=$S12_KNOBS ARGS=$S12_ARGS case_ s12-owner-load-after-unrelated-wait $S12 pass \
  '        mbarrier_wait_parity(recv_bar(quarter), 0);  // the S - 1 peers'"'"' copies have landed
        tcgen05_fence_after_thread_sync();' '        mbarrier_wait_parity(recv_bar(quarter), 0);  // no fence: the MMAs were ordered before'
KNOBS=$S12_KNOBS ARGS=$S12_ARGS case_ s12-send-without-proxy-fence $S12 "diag:fence.proxy.async" \
  '      fence_proxy_async_shared_cta();  // this lane'"'"'s stores, before the bulk copy'"'"'s async-proxy read' ''

# step 13 (A and SFA multicast along N). S13_ARGS: 4 tiles of 128 x 128, 17 k-tiles, MC = 2
# and S = 2 forced: clusters of 4, stage i's A from the CTA with tile % 2 == i % 2.
# A slot freed by its own MMA alone lets a peer's multicast overwrite it while this CTA's MMAs
# still read it; without the cluster barrier after the inits a peer's copy or commit reaches a
# barrier whose init was not published to it; every CTA multicasting every stage sends two copies
# into each A slot at once (overlapping destinations in flight); without the producer's drain a peer's last
# commit arrivals may land after this CTA has gone (teardown while a peer still signals it).
S13=steps/step13_nvfp4_multicast.cu
S13_ARGS="--m 128 --n 512 --k 4160 --inputs integer --sim-sms 8"
S13_KNOBS="TCG_STEP13_MULTICAST=2 TCG_STEP13_SPLITS=2"
KNOBS=$S13_KNOBS ARGS=$S13_ARGS case_ s13-slot-freed-by-own-mma $S13 wrong \
  'mbarrier_init(mma_done_bar(s), uint32_t(mc));' 'mbarrier_init(mma_done_bar(s), 1);' \
  '        if (mc > 1) mma_commit_multicast(mma_done_bar(s), mc_mask);
        else mma_commit(mma_done_bar(s));' '        mma_commit(mma_done_bar(s));  // "my MMAs are done with the slot"'
KNOBS=$S13_KNOBS ARGS=$S13_ARGS case_ s13-no-cluster-barrier-after-init $S13 "every:diag:before its init was published" \
  '  if (mc > 1) cluster_arrive_relaxed();
  __syncthreads();
  if (mc > 1) cluster_wait();' '  __syncthreads();  // "each CTA initialised its own barriers"'
KNOBS=$S13_KNOBS ARGS=$S13_ARGS case_ s13-every-cta-multicasts $S13 "every:diag:asynchronous copies with overlapping destinations in flight" \
  'if (i % mc == mc_rank) {' 'if (true) {  // "each CTA loads A for the others too"'
KNOBS=$S13_KNOBS ARGS=$S13_ARGS case_ s13-exit-before-peers-commits $S13 "every:diag:CTA exited with asynchronous work" \
  '        mbarrier_wait_parity(mma_done_bar(s), empty_parity);
        if (s == NUM_STAGES - 1) empty_parity ^= 1;
      }
      trace.end_elected(Phase::kDrain);' '        (void)s;  // "my own MMAs are done: mainloop_done_bar said so"
      }
      trace.end_elected(Phase::kDrain);'
# The TMEM address handoff with the relaxed cluster barrier alone: it orders no memory, so the
# other warps' read of the address tcgen05.alloc wrote is not ordered after the write.
KNOBS=$S13_KNOBS ARGS=$S13_ARGS case_ s13-tmem-address-without-syncthreads $S13 "every:diag:TMEM address read before tcgen05.alloc's write" \
  '  if (mc > 1) cluster_arrive_relaxed();
  __syncthreads();
  if (mc > 1) cluster_wait();' '  if (mc > 1) cluster_arrive_relaxed();
  if (mc > 1) cluster_wait();  // "the cluster barrier synchronises every thread anyway"'
# expect_tx of one k-tile for a stage of two: the phase completes when the first half has landed,
# and the MMA reads a stage whose other copies are still in flight.
KNOBS=$S13_KNOBS ARGS=$S13_ARGS case_ s13-expect-tx-one-k-tile $S13 "every:diag:Likely causes, in order: (1) the expect_tx byte count is too small" \
  'mbarrier_arrive_expect_tx(tma_full_bar(s), uint32_t(kts) * (A_KTILE_BYTES + L::B_KTILE_BYTES) + 2 * sf_bytes);' \
  'mbarrier_arrive_expect_tx(tma_full_bar(s), (A_KTILE_BYTES + L::B_KTILE_BYTES) + 2 * sf_bytes);  // "one k-tile"'
# A multicast mask over the whole cluster: the other split's CTAs receive A and SFA they did not
# expect, over their own stage.
KNOBS=$S13_KNOBS ARGS=$S13_ARGS case_ s13-multicast-to-the-whole-cluster $S13 "every:diag:.multicast::cluster copy whose CTA mask includes" \
  '  for (int r = 0; r < mc; ++r) mc_mask = uint16_t(mc_mask | (1u << rank_of(r, split)));' \
  '  for (int r = 0; r < mc; ++r) mc_mask = uint16_t(mc_mask | (1u << rank_of(r, split)));
  const uint16_t copy_mask = uint16_t((1u << cluster_ctas) - 1);  // "every CTA of the cluster needs A"' \
  'tma_load_3d_multicast(a_tile(s), &tmap_a3, 0, m0, kt0, tma_full_bar(s), mc_mask);' \
  'tma_load_3d_multicast(a_tile(s), &tmap_a3, 0, m0, kt0, tma_full_bar(s), copy_mask);' \
  '                                    mc_mask);
          }' '                                    copy_mask);
          }' \
  'sf_bytes, tma_full_bar(s), mc_mask);' 'sf_bytes, tma_full_bar(s), copy_mask);'

# step 15 (the dual GEMM with SiLU). S15_ARGS: 2 x 2 tiles of 128 x 128 (per product), 17 k-tiles
# (the last of one k-step), integer inputs, on 8 SMs, one-CTA MMAs forced (TCG_STEP15_CTA_GROUP=1):
# the plan takes S = 2 (clusters of 2), so every CTA exchanges both accumulators' quarters. The
# new hazards, each caught at its issue: the second accumulator half over the first (the two MMAs of a k-step write the same TMEM cells
# unordered); the epilogue waiting for a commit issued before the last k-step's second MMA (its
# tcgen05.ld of y reads cells that MMA still writes); a slot freed by a commit between the two
# products (the producer's next copy lands on A while the second MMA reads it; under some seeds
# the refilled stage's scale copy to TMEM, over the columns that MMA still reads, is reported first).
S15=steps/step15_nvfp4_dual_gemm.cu
S15_ARGS="--m 256 --n 256 --k 4160 --inputs integer --sim-sms 8"
KNOBS="TCG_STEP15_CTA_GROUP=1" ARGS=$S15_ARGS case_ s15-accumulators-overlap $S15 "every:diag:(its accumulator D) writes TMEM" \
  'static constexpr uint32_t ACC2_COL = BN;' 'static constexpr uint32_t ACC2_COL = BN / 2;  // "half the columns are enough"'
KNOBS="TCG_STEP15_CTA_GROUP=1" ARGS=$S15_ARGS case_ s15-epilogue-before-second-product $S15 "every:diag:tcgen05.ld.32x32b (its source) reads TMEM" \
  '            mma_mxf4nvf4_block16_ss(tmem_accum2, a_desc, b2_desc, L::IDESC, sfa_tmem, sfb2_atom_tmem + sfb_half_cols,
                                    accumulate);' '            if (i == my_stages - 1 && j == kts_of_stage(i) - 1 && ks == ksteps_of(kt0 + j) - 1)
              mma_commit(mainloop_done_bar);  // "x is complete: the epilogue may start"
            mma_mxf4nvf4_block16_ss(tmem_accum2, a_desc, b2_desc, L::IDESC, sfa_tmem, sfb2_atom_tmem + sfb_half_cols,
                                    accumulate);' \
  '      } else {
        mma_commit(mainloop_done_bar);
      }' '      }'
# The 2-SM pair's hazard: the leader arms its full barrier for its own boxes only, forgetting that
# the peer's .cta_group::2 copies complete on it too; the phase can then complete with the peer's
# boxes still in flight, and the pair MMA reads the peer's shared memory a copy is still writing.
KNOBS="TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=64" ARGS="--m 256 --n 128 --k 4160 --inputs integer --sim-sms 4" \
  case_ s15-pair-leader-expects-own-bytes $S15 "wrong" \
  '            mbarrier_arrive_expect_tx(tma_full_bar(s), 2 * uint32_t(kts) * (A_KTILE_BYTES + L::B_RINGS * L::B_KTILE_BYTES));' \
  '            mbarrier_arrive_expect_tx(tma_full_bar(s), uint32_t(kts) * (A_KTILE_BYTES + L::B_RINGS * L::B_KTILE_BYTES));  // "my boxes"'
# Stages of one k-tile (pairs of BLOCK_N 128): the host's 3-D tensor maps must have the kernel's
# k-tiles per stage as their box depth; maps made for the usual two land each box's second k-tile
# past its slot, over the next stage's operands or the scale ring (copies in flight with overlapping
# destinations, a read of bytes a copy still writes, or scale atoms it wrote over: a UE4M3 byte with
# its sign bit set), whichever comes first: under every seed an emulator diagnostic.
KNOBS="TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1" ARGS=$S15_ARGS \
  case_ s15-maps-two-ktiles-for-one-ktile-stages $S15 "every:diag:tcsim: " \
  '  const int stage_k_tiles = p.one_ktile_stages ? 1 : KT_PER_STAGE;' '  const int stage_k_tiles = KT_PER_STAGE;  // "the step'"'"'s usual boxes"'
# A pair takes its scales from a ring of their own, one copy per operand for two stages,
# completing on the slot's barrier, not on the stage's: an MMA warp that waits only for the
# stage's operands copies scale atoms to TMEM while their TMA copy is still writing them.
KNOBS="TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1" ARGS=$S15_ARGS \
  case_ s15-scales-read-before-their-copy-lands $S15 "every:diag:tcgen05.cp" \
  '        if (L::SF_SPAN == 2 && i % 2 == 0) mbarrier_wait_parity(sf_full_bar(sf_slot), uint32_t(u / L::SF_SLOTS) & 1);' \
  '        (void)u;  // "the stage'"'"'s barrier covers its scales"'
# A pair's teardown: the warps that reach into the other CTA (the leader's MMAs and commits, the
# copies completing on the leader's barriers) must arrive releasing; with every warp relaxed, no
# thread of the peer is ordered after the leader's MMAs when it exits.
KNOBS="TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=64" ARGS="--m 256 --n 128 --k 4160 --inputs integer --sim-sms 4" \
  case_ s15-pair-teardown-all-relaxed $S15 "every:diag:CTA exited while its cluster peer can still reach it" \
  '  if (PAIR && warp < 2) cluster_arrive_release();' '  if (false) cluster_arrive_release();  // "the membar is too slow for anyone"'
# Pairs of BLOCK_N 128 fuse the products: one MMA of N = 256 takes B's first 128 rows from the
# even CTA and the next 128 from the odd one, so the odd CTA must load B2's rows; loading B1 in both
# computes y = x: no hazard, a wrong C (integer inputs: caught bitwise).
KNOBS="TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128" ARGS=$S15_ARGS \
  case_ s15-fused-odd-cta-loads-b1 $S15 "wrong" \
  '  const CUtensorMap *b_map = L::FUSED && half ? &maps.b2 : &maps.b1, *b_map3 = L::FUSED && half ? &maps.b2_3d : &maps.b1_3d;' \
  '  const CUtensorMap *b_map = &maps.b1, *b_map3 = &maps.b1_3d;  // "each CTA its rows of B1"'
KNOBS="TCG_STEP15_CTA_GROUP=1" ARGS=$S15_ARGS case_ s15-slot-freed-after-first-product $S15 "diag:(operand A) issued by" \
  '            mma_mxf4nvf4_block16_ss(tmem_accum2, a_desc, b2_desc, L::IDESC, sfa_tmem, sfb2_atom_tmem + sfb_half_cols,
                                    accumulate);' '' \
  '        // One commit after both products'"'"' MMAs: the slot (A, B1, B2 and their scales) is freed only
        // when the last MMA reading it has completed.
        mma_commit(mma_done_bar(s));' '        mma_commit(mma_done_bar(s));  // "the slot is free once x has its stage"
        for (int j = 0; j < kts_of_stage(i); ++j)
          for (int ks = 0; ks < ksteps_of(kt0 + j); ++ks) {
            const uint32_t q = uint32_t(j * KSTEPS + ks);
            const uint32_t sfa_tmem = tmem_offset(tmem_accum, 0, sf_cols + q * SF_COLS_PER_KSTEP);
            const uint32_t sfb2_atom_tmem =
                tmem_offset(tmem_accum, 0, sf_cols + (2 * KSTEPS_PER_STAGE + q) * SF_COLS_PER_KSTEP);
            const uint64_t a_desc =
                make_smem_desc(a_tile(s) + j * A_KTILE_BYTES + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            const uint64_t b2_desc =
                make_smem_desc(b2_tile(s) + j * L::B_KTILE_BYTES + ks * 32, 16, SBO_SW128, Layout::kSwizzle128B);
            mma_mxf4nvf4_block16_ss(tmem_accum2, a_desc, b2_desc, L::IDESC, sfa_tmem, sfb2_atom_tmem + sfb_half_cols,
                                    i > 0 || j > 0 || ks > 0);
          }'
