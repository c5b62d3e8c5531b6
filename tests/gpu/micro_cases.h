// micro_cases.h — the cases of the timing model's microbenchmarks (tests/gpu/micro.cu): what
// each kernel is asked to do (MicroCase, plain data shared by the GPU and emulator builds) and the
// list that `micro` runs, with the bytes each case moves for its rate. Adding a case: one row
// here, named so that results/micro_<gpu>.csv and tests/gpu/fit_params.py can find it.
#pragma once
#include <vector>

// One case: plain data, shared by both builds (no functions, so no shared linker symbols).
struct MicroCase {
  const char* name;
  int kind;         // 0 store, 1 ring, 2 empty, 3 setup, 4 ping-pong local, 5 ping-pong cluster, 6 cluster barriers,
                    // 7 ring + TMA stores, 8 TMA multicast, 9 distributed shared memory, 10 cluster launch skew,
                    // 11 release before a remote arrive
  int grid;         // CTAs; -1: one per SM
  int pattern;      // stores: 1 row per thread, 2 coalesced (kind 0, and the ring's epilogue); 0 none
  int stages;       // ring
  int k_tiles;      // ring; iterations for kinds 4-6
  int a_bw, a_bh, a_boxes;  // ring: A box width (elements; 0 = 1-D bulk copy of a_bh x 128 B), rows, boxes per stage
  int b_bw, b_bh, b_boxes;  // ring: B box (0 boxes: none)
  int a_rows, a_cols;       // A tensor extent (BF16 elements); B has b_rows x a_cols
  int b_rows;
  int tiles_m;              // ring: CTA c works on tile (c % tiles_m, c / tiles_m)
  int tma_stores = 0;       // kind 7 (ring + TMA stores): 64 x 32 boxes stored by warp 2
  // Cluster cases (kinds 8-11, micro_cluster.cuh): CTAs per cluster (0: no cluster), what the
  // kernel does (per kind), and which CTAs' span the row reports (0: all; 1 + r: rank r only;
  // 100: the spread of the CTAs' start times within a cluster, averaged over clusters).
  int cluster = 0;
  int mode = 0;
  int span_of = 0;
};

#if !defined(TCG_SIM)
// The list and the rates are host code of the GPU build only (one definition, no symbol shared
// with the emulator build: tests/checks/check_symbols.sh).
namespace micro_cases {

// name, kind, grid, pattern, stages, k_tiles, A box (bw, bh, boxes), B box, A rows, cols, B rows, tiles_m[, TMA stores]
inline const std::vector<MicroCase>& cases() {
  static const std::vector<MicroCase> v = {
      // stores: 128 x 256 BF16 tiles, 1 CTA / one per SM / 512 tiles (4096 x 4096 C)
      {"store row-per-thread 1 CTA", 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store coalesced 1 CTA", 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store row-per-thread one wave", 0, -1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store coalesced one wave", 0, -1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store row-per-thread 512 tiles", 0, 512, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store coalesced 512 tiles", 0, 512, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store lane-pairs 1 CTA", 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store lane-pairs one wave", 0, -1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store lane-pairs 512 tiles", 0, 512, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store row-per-thread 2048 tiles (8192^2 C, HBM)", 0, 2048, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"store coalesced 2048 tiles (8192^2 C, HBM)", 0, 2048, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      // TMA latency: one stage, so every box waits for the previous one (64 boxes)
      {"tma latency box 64x8 sw128 (1 KiB)", 1, 1, 0, 1, 64, 64, 8, 1, 0, 0, 0, 2048, 2048, 0, 1},
      {"tma latency box 64x256 sw128 (32 KiB)", 1, 1, 0, 1, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 1},
      {"tma latency box 8x256 16B rows (4 KiB)", 1, 1, 0, 1, 64, 8, 256, 1, 0, 0, 0, 2048, 2048, 0, 1},
      // TMA throughput: 4 stages of 32 KiB, 64 stages per CTA (2 MiB), L2-resident 8 MiB tensor
      {"tma 16B rows 8x256 x8, 1 CTA, L2", 1, 1, 0, 4, 64, 8, 256, 8, 0, 0, 0, 2048, 2048, 0, 8},
      {"tma 16B rows 8x256 x8, all SMs, L2", 1, -1, 0, 4, 64, 8, 256, 8, 0, 0, 0, 2048, 2048, 0, 8},
      {"tma sw128 64x256, 1 CTA, L2", 1, 1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 8},
      {"tma sw128 64x256, all SMs, L2", 1, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 8},
      {"tma sw128 64x128 x2, 1 CTA, L2", 1, 1, 0, 4, 64, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16},
      {"tma sw128 64x128 x2, all SMs, L2", 1, -1, 0, 4, 64, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16},
      {"tma sw128 64x64 x4, all SMs, L2", 1, -1, 0, 4, 64, 64, 64, 4, 0, 0, 0, 2048, 2048, 0, 32},
      {"tma sw128 64x256, all SMs, HBM (264 MiB)", 1, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 33792, 4096, 0, 132},
      {"bulk 1-D 32 KiB, 1 CTA, L2", 1, 1, 0, 4, 64, 0, 256, 1, 0, 0, 0, 2048, 2048, 0, 1},
      {"bulk 1-D 32 KiB, all SMs, L2", 1, -1, 0, 4, 64, 0, 256, 1, 0, 0, 0, 2048, 2048, 0, 1},
      // step 04's ring without tensor cores at 4096^3: A box 64x128, B box 64xBN, 64 k-tiles, one wave
      {"ring BN=256 4 stages", 1, -1, 0, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32},
      {"ring BN=256 4 stages + row-per-thread epilogue", 1, -1, 1, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32},
      {"ring BN=128 4 stages", 1, -1, 0, 4, 64, 64, 128, 1, 64, 128, 1, 4096, 4096, 4096, 32},
      {"ring BN=128 7 stages", 1, -1, 0, 7, 64, 64, 128, 1, 64, 128, 1, 4096, 4096, 4096, 32},
      {"ring BN=128 6 stages + row-per-thread epilogue", 1, -1, 1, 6, 64, 64, 128, 1, 64, 128, 1, 4096, 4096, 4096, 32},
      {"ring BN=256 4 stages, 512 tiles + row-per-thread epilogue", 1, 512, 1, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32},
      // what makes step 04's stage (16 + 32 KiB boxes) cheaper than its boxes: one CTA; the pitch; one tensor
      {"ring BN=256 4 stages, 1 CTA", 1, 1, 0, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32},
      {"tma sw128 64x256, 1 CTA, L2, 8 KiB pitch", 1, 1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 4096, 0, 8},
      {"tma sw128 64x128 x2, 1 CTA, L2, 8 KiB pitch", 1, 1, 0, 4, 64, 64, 128, 2, 0, 0, 0, 2048, 4096, 0, 16},
      {"ring 64x128 + 64x256 one 2048-col tensor pair, 1 CTA", 1, 1, 0, 4, 64, 64, 128, 1, 64, 256, 1, 2048, 2048, 2048, 8},
      // the time per copy of small copies (NVFP4 scale factors: 2 KiB bulk copies beside 16 KiB boxes):
      // one CTA, L2-resident, 16 copies per stage, 4 stages (64 in flight) or 4 per stage (16 in flight)
      {"tma small: sw128 64x16 (2 KiB) x16, 1 CTA, L2", 1, 1, 0, 4, 64, 64, 16, 16, 0, 0, 0, 2048, 2048, 0, 1},
      {"tma small: sw128 64x16 (2 KiB) x4, 1 CTA, L2", 1, 1, 0, 4, 256, 64, 16, 4, 0, 0, 0, 2048, 2048, 0, 1},
      {"tma small: sw128 64x8 (1 KiB) x16, 1 CTA, L2", 1, 1, 0, 4, 64, 64, 8, 16, 0, 0, 0, 2048, 2048, 0, 1},
      {"tma small: bulk 1-D 2 KiB x16, 1 CTA, L2", 1, 1, 0, 4, 64, 0, 16, 16, 0, 0, 0, 2048, 2048, 0, 1},
      {"tma small: bulk 1-D 512 B x16, 1 CTA, L2", 1, 1, 0, 4, 64, 0, 4, 16, 0, 0, 0, 2048, 2048, 0, 1},
      {"tma small: bulk 1-D 8 KiB x4, 1 CTA, L2", 1, 1, 0, 4, 256, 0, 64, 4, 0, 0, 0, 2048, 2048, 0, 1},
      // an NVFP4 k-tile's copies (gau-nernst v0: two 16 KiB boxes, two 2 KiB bulk copies), 6 stages
      {"tma small: 2 bulk 2 KiB + 2 boxes 64x128, 6 stages, 1 CTA", 1, 1, 0, 6, 64, 0, 16, 2, 64, 128, 2, 2048, 2048, 2048, 1},
      {"tma small: 2 boxes 64x128, 6 stages, 1 CTA", 1, 1, 0, 6, 64, 0, 16, 0, 64, 128, 2, 2048, 2048, 2048, 1},
      {"tma small: 2 bulk 2 KiB + 2 boxes 64x128, 6 stages, 32 CTAs", 1, 32, 0, 6, 64, 0, 16, 2, 64, 128, 2, 2048, 2048, 2048, 1},
      // CTA launch and setup
      {"empty grid, one per SM (event time)", 2, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"empty grid, 1056 CTAs (event time)", 2, 1056, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"setup: 16 mbarrier.init + fence + syncthreads", 3, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"mbarrier ping-pong in a CTA x1000", 4, 1, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"mbarrier ping-pong across a cluster (mapa) x1000", 5, 2, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {"cluster barrier x1000", 6, 2, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      // the same without the release: the remote arrive at CTA scope, the cluster barrier relaxed
      {"mbarrier ping-pong across a cluster (mapa, release.cta) x1000", 5, 2, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0},
      {"cluster barrier relaxed x1000", 6, 2, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0},
      // TMA loads and TMA stores on one SM (kind 7; the last field: 4 KiB stores): if loads + stores
      // take the sum of loads and stores, the stores hold the TMA unit; their max, they do not
      {"tma mix: loads 64x128 x2, 1 CTA", 7, 1, 0, 4, 64, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16, 0},
      {"tma mix: stores 64x32 x128, 1 CTA", 7, 1, 0, 4, 0, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16, 128},
      {"tma mix: loads + stores, 1 CTA", 7, 1, 0, 4, 64, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16, 128},
      {"tma mix: loads 64x128 x2, all SMs", 7, -1, 0, 4, 64, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16, 0},
      {"tma mix: stores 64x32 x128, all SMs", 7, -1, 0, 4, 0, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16, 128},
      {"tma mix: loads + stores, all SMs", 7, -1, 0, 4, 64, 64, 128, 2, 0, 0, 0, 2048, 2048, 0, 16, 128},
      // step 08's proportions: a tile's 64 k-tiles of step 04's boxes, with its 16 stores of 4 KiB
      {"tma mix: step-08 k-loop, 1 CTA", 7, 1, 0, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32, 0},
      {"tma mix: step-08 k-loop + 16 stores, 1 CTA", 7, 1, 0, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32, 16},
      {"tma mix: step-08 k-loop, all SMs", 7, -1, 0, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32, 0},
      {"tma mix: step-08 k-loop + 16 stores, all SMs", 7, -1, 0, 4, 64, 64, 128, 1, 64, 256, 1, 4096, 4096, 4096, 32, 16},
      // TMA multicast (kind 8; the last three fields: cluster, mode, span_of): 4 stages, one box
      // each, 64 stages; mode 0 own loads, 1 turns + multicast to all, 2 rank 0 multicasts all
      {"mcast 64x256 sw128, cluster 1, own loads, 1 CTA", 8, 1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 1, 0, 0},
      {"mcast 64x256 sw128, cluster 2, rank 0 issues all, 1 cluster", 8, 2, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 2, 0},
      {"mcast 64x256 sw128, cluster 4, rank 0 issues all, 1 cluster", 8, 4, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 4, 2, 0},
      {"mcast 64x256 sw128, cluster 4, rank 0 issues all, 1 cluster: rank 3 span", 8, 4, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 4, 2, 4},
      {"mcast 64x256 sw128, cluster 2, turns, 1 cluster", 8, 2, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 1, 0},
      {"mcast 64x256 sw128, cluster 4, turns, 1 cluster", 8, 4, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 4, 1, 0},
      {"mcast 64x256 sw128, cluster 2, own loads, all SMs", 8, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 0, 0},
      {"mcast 64x256 sw128, cluster 2, turns, all SMs", 8, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 1, 0},
      {"mcast 64x256 sw128, cluster 4, turns, all SMs", 8, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 4, 1, 0},
      {"mcast 8x256 16B rows, cluster 2, own loads, all SMs", 8, -1, 0, 4, 64, 8, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 0, 0},
      {"mcast 8x256 16B rows, cluster 2, turns, all SMs", 8, -1, 0, 4, 64, 8, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 1, 0},
      {"mcast 8x256 16B rows, cluster 4, turns, all SMs", 8, -1, 0, 4, 64, 8, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 4, 1, 0},
      // the same with 1-D bulk copies of the box's 32 KiB (modes 3-5: own, turns, rank 0 issues all)
      {"mcast bulk 32 KiB, cluster 1, own loads, 1 CTA", 8, 1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 1, 3, 0},
      {"mcast bulk 32 KiB, cluster 4, rank 0 issues all, 1 cluster", 8, 4, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 4, 5, 0},
      {"mcast bulk 32 KiB, cluster 2, own loads, all SMs", 8, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 3, 0},
      {"mcast bulk 32 KiB, cluster 2, turns, all SMs", 8, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 2, 4, 0},
      {"mcast bulk 32 KiB, cluster 4, turns, all SMs", 8, -1, 0, 4, 64, 64, 256, 1, 0, 0, 0, 2048, 2048, 0, 0, 0, 4, 4, 0},
      // distributed shared memory (kind 9; k_tiles: iterations, a_bw: bytes per copy): mode 0
      // ld.u32 chain (latency), 1 st.v4 / 2 ld.v4 by 128 threads, 3 bulk copies, 4 bulk bounce
      {"dsmem ld.u32 chain x1000, own CTA", 9, 1, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1},
      {"dsmem ld.u32 chain x1000, peer", 9, 2, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1},
      {"dsmem st.v4 x128 threads x256, peer", 9, 2, 0, 0, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1},
      {"dsmem ld.v4 x128 threads x256, peer", 9, 2, 0, 0, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1},
      {"dsmem st.v4 x128 threads x256, own CTA", 9, 1, 0, 0, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1},
      {"dsmem st.v4 x128 threads x256, peer, all SMs", 9, -1, 0, 0, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1},
      {"dsmem bulk copy 1 KiB x256, peer", 9, 2, 0, 0, 256, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 2},
      {"dsmem bulk copy 8 KiB x64, peer", 9, 2, 0, 0, 64, 8192, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 2},
      {"dsmem bulk copy 32 KiB x16, peer", 9, 2, 0, 0, 16, 32768, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 2},
      {"dsmem bulk copy 32 KiB x16, peer, all SMs", 9, -1, 0, 0, 16, 32768, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 2},
      {"dsmem bulk bounce 16 B x500", 9, 2, 0, 0, 500, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 4, 1},
      {"dsmem bulk bounce 4 KiB x500", 9, 2, 0, 0, 500, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 4, 1},
      // cluster launch skew (kind 10): CTA start to its first cluster barrier, and the starts' spread
      {"skew cluster 1: start to first barrier, all SMs", 10, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0},
      {"skew cluster 2: start to first cluster barrier, all SMs", 10, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0},
      {"skew cluster 4: start to first cluster barrier, all SMs", 10, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0},
      {"skew cluster 2: start spread in a cluster, all SMs", 10, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 100},
      {"skew cluster 4: start spread in a cluster, all SMs", 10, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 100},
      // the release before a remote arrive (kind 11): 128 x 256 row-per-thread tile, then lane 0 of
      // each warp arrives on rank 0; mode 0 .release.cluster, 1 .release.cta, 2/3 the same without stores
      {"release: tile + arrive.release.cluster, cluster 2", 11, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1},
      {"release: tile + arrive.release.cta, cluster 2", 11, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1},
      {"release: arrive.release.cluster only, cluster 2", 11, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1},
      {"release: arrive.release.cta only, cluster 2", 11, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 1},
      {"release: tile + arrive.release.cluster, cluster 2, all SMs", 11, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1},
      {"release: tile + arrive.release.cta, cluster 2, all SMs", 11, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1},
  };
  return v;
}

// Bytes a case moves (for a rate), 0 when it is not about bytes.
inline double case_bytes(const MicroCase& mc, int sms) {
  const int grid = mc.grid < 0 ? sms : mc.grid;
  if (mc.kind == 0) return double(grid) * 128 * 256 * 2;
  if (mc.kind == 8) return double(grid) * mc.k_tiles * mc.a_bw * mc.a_bh * 2;  // bytes landed, all CTAs
  const double senders = mc.cluster > 1 ? grid / 2 : grid;  // kind 9: rank 0 of each pair sends (or reads)
  if (mc.kind == 9 && (mc.mode == 1 || mc.mode == 2)) return senders * mc.k_tiles * 128 * 16;
  if (mc.kind == 9 && mc.mode == 3) return senders * mc.k_tiles * mc.a_bw;
  if (mc.kind == 1 || mc.kind == 7) {
    const double a = mc.a_bw ? double(mc.a_bw) * mc.a_bh * 2 : double(mc.a_bh) * 128;
    return double(grid) * (mc.k_tiles * (mc.a_boxes * a + mc.b_boxes * double(mc.b_bw) * mc.b_bh * 2) + mc.tma_stores * 4096.0);
  }
  return 0;
}

}  // namespace micro_cases
#endif
