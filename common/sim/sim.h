// sim.h — the kernel-facing side of the tcgen05 emulator.
//
// common/ptx.cuh calls these functions in the emulator build. Each models one PTX instruction
// (or CUDA built-in) with the semantics the PTX ISA defines; see docs/emulator.md for what is
// and is not modelled. Everything here runs inside an emulated CUDA thread (a fiber), except
// launch() and encode_tensor_map(), which the host side of a step calls.
#pragma once
#include <cuda.h>  // CUtensorMap
#include <vector_types.h>

#include <cstdint>
#include <functional>

#include "../tensor_map.h"
#include "sim_api.h"

namespace tcsim {

struct SrcLoc {
  const char* file;
  int line;
};

// The built-in variables of the emulated thread that is running now.
struct ThreadVars {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
};
const ThreadVars& current();

// ---- host side
// Runs `body` once per thread of every CTA of the grid, each thread a fiber. The CTAs of a
// cluster run together; clusters run one after another. Throws SimError on a kernel bug.
void launch(dim3 grid, dim3 block, dim3 cluster, uint32_t dynamic_smem_bytes, const std::function<void()>& body);
CUtensorMap encode_tensor_map(const tcg::TiledMap& m);

// ---- CUDA built-ins
uint8_t* dynamic_smem();
uint32_t cvta_shared(const void* p);
void syncthreads(SrcLoc at);
void syncwarp(SrcLoc at);
void named_barrier_sync(uint32_t id, uint32_t nthreads, SrcLoc at);
bool elect_sync(SrcLoc at);
void fence_mbarrier_init(SrcLoc at);  // fence.mbarrier_init.release.cluster: publishes this thread's inits
void tcgen05_fence_before(SrcLoc at);  // tcgen05.fence::before_thread_sync: checked ordering
void tcgen05_fence_after(SrcLoc at);   // tcgen05.fence::after_thread_sync: checked ordering

// ---- vector memory access (global or shared, through a generic pointer)
// A vector access of `bytes` (8 or 16) at `p`: must be aligned to its size (PTX ISA §5.4.2, a
// misaligned vector access is a fault on the GPU).
void check_vector_access(const void* p, uint32_t bytes, bool store, const char* what, SrcLoc at);

// ---- clusters
uint32_t cluster_ctarank(SrcLoc at);
uint32_t cluster_nctarank(SrcLoc at);
uint32_t cluster_id_x(SrcLoc at);
uint32_t sm_id(SrcLoc at);  // %smid: the emulated SM the CTA was placed on
void cluster_arrive(bool release, SrcLoc at);
void cluster_wait(SrcLoc at);
uint32_t mapa(uint32_t addr, uint32_t rank, SrcLoc at);
uint32_t ld_shared_cluster(uint32_t addr, SrcLoc at);
void st_shared_cluster(uint32_t addr, uint32_t v, SrcLoc at);
// distributed shared memory (dsmem.cpp): 16-byte remote ld/st, bulk copy shared::cta -> shared::cluster
void ld_shared_cluster_v4(uint32_t addr, uint32_t* out, SrcLoc at);
void st_shared_cluster_v4(uint32_t addr, const uint32_t* v, SrcLoc at);
void bulk_copy_smem_to_cluster(uint32_t dst, uint32_t src, uint32_t bytes, uint32_t bar, SrcLoc at);

// ---- mbarrier
void mbar_init(uint32_t bar, uint32_t count, SrcLoc at);
void mbar_arrive(uint32_t bar, SrcLoc at);
void mbar_arrive_cluster(uint32_t bar, SrcLoc at);  // remote (shared::cluster) arrive
void mbar_arrive_cluster_cta_scope(uint32_t bar, SrcLoc at);  // the same, release at CTA scope
void mbar_arrive_expect_tx_cluster(uint32_t bar, uint32_t bytes, SrcLoc at);
void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes, SrcLoc at);
void mbar_wait_parity(uint32_t bar, uint32_t parity, SrcLoc at);
bool mbar_test_wait_parity(uint32_t bar, uint32_t parity, SrcLoc at);  // non-blocking

// ---- TMA
struct TmaMode {
  int cta_group = 1;       // 2: the mbarrier may be in the destination CTA's pair peer
  bool multicast = false;  // .multicast::cluster with cta_mask
  uint16_t cta_mask = 0;
};
void tma_load(uint32_t dst, const CUtensorMap* map, int rank, const int32_t* coords, uint32_t bar, TmaMode mode,
              SrcLoc at);
void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, SrcLoc at);
void bulk_load_multicast(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, uint16_t cta_mask, SrcLoc at);
// TMA store and bulk groups (tma_store.cpp)
void tma_store(const CUtensorMap* map, int rank, const int32_t* coords, uint32_t src, SrcLoc at);
void bulk_commit_group(SrcLoc at);
void bulk_wait_group(int n, bool read_only, SrcLoc at);
void fence_proxy_async(SrcLoc at);  // fence.proxy.async.shared::cta
void st_shared_generic(uint32_t addr, const uint32_t* v, uint32_t bytes, SrcLoc at);  // st.shared.v4.b32

// ---- tensor maps rewritten on the device (tensormap_replace.cpp)
// The fields tensormap.replace names (PTX ISA §9.7.9.26), and the scopes of its proxy fences.
enum class TmapField : uint32_t {
  kGlobalAddress, kRank, kBoxDim, kGlobalDim, kGlobalStride, kElementStride,
  kElemtype, kInterleaveLayout, kSwizzleMode, kSwizzleAtomicity, kFillMode
};
enum class FenceScope : uint32_t { kCta, kCluster, kGpu, kSys };
// `shared`: the .shared::cta form (`addr` a shared::cta address), else .global (`addr` a generic
// pointer). `ord`: the dimension for box_dim, global_dim, global_stride, element_stride.
void tensormap_replace(bool shared, uint64_t addr, TmapField field, int ord, uint64_t new_val, SrcLoc at);
void fence_proxy_tensormap_release(FenceScope scope, SrcLoc at);
void fence_proxy_tensormap_acquire(FenceScope scope, const void* addr, uint32_t size, SrcLoc at);
void prefetch_tensormap(const void* addr, SrcLoc at);

// ---- cluster launch control (clc.cpp)
void clc_try_cancel(uint32_t response, uint32_t bar, bool multicast, SrcLoc at);
void clc_load_response(uint32_t response, uint32_t* words, SrcLoc at);  // ld.shared.v4.b32 of a response
bool clc_query_is_canceled(const uint32_t* words, SrcLoc at);
uint32_t clc_query_first_ctaid(const uint32_t* words, int dim, SrcLoc at);

// ---- tcgen05
// cta_group: 1 or 2 (the .cta_group qualifier)
void tmem_alloc(uint32_t dst, uint32_t ncols, int cta_group, SrcLoc at);
void tmem_dealloc(uint32_t taddr, uint32_t ncols, int cta_group, SrcLoc at);
void tmem_relinquish(int cta_group, SrcLoc at);
// ld.shared.b32 of the slot tcgen05.alloc wrote the TMEM address to (tmem_slot.cpp): checked to be
// ordered after that write.
uint32_t tmem_slot_load(uint32_t addr, SrcLoc at);
void mma_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, bool accumulate, int cta_group,
             SrcLoc at);
void tcgen05_commit(uint32_t bar, int cta_group, bool multicast, uint16_t cta_mask, SrcLoc at);
// kind::mxf4nvf4.block_scale.block16 and tcgen05.cp.32x128b.warpx4 (mma_block_scaled.cpp)
void mma_mxf4nvf4_block16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, uint32_t sfa_tmem,
                          uint32_t sfb_tmem, bool accumulate, int cta_group, SrcLoc at);
void tcgen05_cp_32x128b_warpx4(uint32_t taddr, uint64_t s_desc, int cta_group, SrcLoc at);

enum class LdShape { k32x32b, k16x256b };
void tmem_ld(LdShape shape, int num, uint32_t taddr, uint32_t* regs, SrcLoc at);
void tmem_wait_ld(SrcLoc at);
// The running thread reads `bytes` of registers at `regs` (`use`: the helper that reads them, e.g.
// the epilogue's store_c_chunk8): none may be the destination of a tcgen05.ld it has not yet
// waited for with tcgen05.wait::ld (reported here, at the first use the emulator can see).
void tmem_regs_used(const void* regs, uint32_t bytes, const char* use, SrcLoc at);

// ---- tracing: a kernel annotation (common/ptx/trace.cuh) opening or closing a named phase of the
// calling warp ("setup", "mainloop", "epilogue", ...). Under the timing model with tracing on, the
// emulator records it as a span on the warp's track (lane 0's clock) when `draw` (the coarse
// phases), checks that every end closes the innermost open begin of the same name and that none is
// open when the thread exits (the fine ones too: the GPU trace would report them unpaired);
// otherwise it costs nothing.
void trace_phase(const char* name, bool begin, bool draw, SrcLoc at, int arg = -1);

// ---- global memory one thread stores and another loads (global_order.cpp): the stores and
// loads of common/ptx/global.cuh, checked for visibility (PTX ISA §8.9), and the atomics and
// strong stores that order them
void st_global_v4(void* dst, const void* src, uint32_t bytes, SrcLoc at);
void ld_global_v4(void* dst, const void* src, uint32_t bytes, SrcLoc at);
uint32_t atom_add_acq_rel_gpu(uint32_t* addr, uint32_t v, SrcLoc at);
void st_relaxed_gpu(uint32_t* addr, uint32_t v, SrcLoc at);

// ---- warp MMA
void ldmatrix(int num, uint32_t addr, uint32_t* regs, SrcLoc at);
void mma_sync_m16n8k16_bf16(float* d, const uint32_t* a, const uint32_t* b, const float* c, SrcLoc at);

// The timing model's clock of the calling thread (ns since the launch), or -1 when the model is off.
double model_now_ns();

}  // namespace tcsim
