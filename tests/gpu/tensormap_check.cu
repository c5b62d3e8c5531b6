// tensormap_check.cu — does a tensor map rewritten on the device load what the emulator says?
//
// One probe kernel, compiled twice like the steps (nvcc for the GPU, g++ -DTCG_SIM for the
// emulator): thread 0 copies a host-encoded tensor map (a __grid_constant__ parameter) into global
// memory, rewrites its global_address, global_dim, box_dim and (some cases) global_stride with
// tensormap.replace (PTX ISA §9.7.9.26) — in global memory, or on a copy in shared memory
// (.shared::cta) that it then copies to global memory — releases and acquires the map through
// the tensormap proxy (fence.proxy.tensormap::generic.{release,acquire}.gpu, §9.7.13.4), and loads
// one box at (0, 0) through it with cp.async.bulk.tensor; the shared-memory image is copied out.
// prefetch.tensormap (§9.7.9.15) is probed on the kernel parameter and on the rewritten map.
// The image is compared byte for byte between the GPU, the emulator and the box the CPU expects
// from the new fields (rows past the new global_dim zero-filled), and the expect_tx phase must
// complete with the new box's bytes.
//
// tensormap.replace needs sm_90a (or sm_100f): an H100/H200 runs it from the sm_90a build
// (ptxas refuses it for plain sm_90); the fences and prefetch.tensormap need sm_90.
// Not part of `make test` (CI has no GPU): `make gpu-check`. Exit: 0 all identical, 1 a mismatch,
// 3 no suitable GPU. Rows go to results/gpu_check_<gpu>.csv (probe_report.h).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "../../common/sim/sim_api.h"  // tcsim::GlobalAllocation

namespace TCG_BUILD_NS {

using namespace tcg;

constexpr uint32_t ROW = 64;                  // bytes per row (U8 elements)
constexpr uint32_t AREA = ROW * 64;           // the largest box probed: 64 rows
constexpr uint32_t BAR = AREA, SMAP = AREA + 128, SMEM_BYTES = SMAP + 128;
constexpr uint32_t OUT_BYTES = AREA + 4;      // the image, then "phase completed"
enum Variant : int { kGlobal, kShared, kPrefetchParam, kGlobalPrefetch };

// 16-byte plain copies of a 128-byte tensor map (generic proxy).
__device__ inline void copy_map(void* dst, const void* src) {
  for (int i = 0; i < 8; ++i) reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
}

__global__ void replace_probe(CUtensorMap* gmap, const __grid_constant__ CUtensorMap tmpl, const void* base,
                              uint32_t rows, uint32_t box_rows, uint64_t stride, int variant, uint32_t box_bytes,
                              uint8_t* out) {
  uint8_t* smem = aligned_smem_base();
  const uint32_t sbase = smem_addr(smem), bar = sbase + BAR, smap = sbase + SMAP;
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
    const CUtensorMap* use = gmap;
    if (variant == kPrefetchParam) {
      prefetch_tensormap(&tmpl);
      use = &tmpl;
    } else {
      if (variant == kShared) {
        copy_map(smem + SMAP, &tmpl);
        tensormap_replace_global_address(smap, base);
        tensormap_replace_global_dim<1>(smap, rows);
        tensormap_replace_box_dim<1>(smap, box_rows);
        if (stride) tensormap_replace_global_stride<0>(smap, stride);
        copy_map(gmap, smem + SMAP);
      } else {
        copy_map(gmap, &tmpl);
        tensormap_replace_global_address(gmap, base);
        tensormap_replace_global_dim<1>(gmap, rows);
        tensormap_replace_box_dim<1>(gmap, box_rows);
        if (stride) tensormap_replace_global_stride<0>(gmap, stride);
      }
      fence_proxy_tensormap_release<TensormapScope::kGpu>();
      fence_proxy_tensormap_acquire<TensormapScope::kGpu>(gmap);
      if (variant == kGlobalPrefetch) prefetch_tensormap(gmap);
    }
    mbarrier_arrive_expect_tx(bar, box_bytes);
    tma_load_2d(sbase, use, 0, 0, bar);
    uint32_t done = 0;  // bounded: a box of other bytes than expected would never complete the phase
    for (uint32_t spin = 0; spin < (1u << 24) && !done; ++spin) done = mbarrier_test_wait_parity(bar, 0);
    *reinterpret_cast<uint32_t*>(out + AREA) = done;
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < box_bytes; i += blockDim.x) out[i] = smem[i];
}

void probe(CUtensorMap* gmap, const TiledMap& t, const void* base, uint32_t rows, uint32_t box_rows, uint64_t stride,
           int variant, uint32_t box_bytes, uint8_t* out) {
  const CUtensorMap tmpl = make_tensor_map(t);
  LaunchDims d;
  d.grid = dim3(1);
  d.block = dim3(128);
  d.smem_bytes = SMEM_BYTES + kSmemAlignSlack;
  launch_kernel(replace_probe, d, nullptr, gmap, tmpl, base, rows, box_rows, stride, variant, box_bytes, out);
}

}  // namespace TCG_BUILD_NS

#if !defined(TCG_SIM)
#include "probe_report.h"  // results/gpu_check_<gpu>.csv

namespace sim {
void probe(CUtensorMap* gmap, const tcg::TiledMap& t, const void* base, uint32_t rows, uint32_t box_rows,
           uint64_t stride, int variant, uint32_t box_bytes, uint8_t* out);
}

// tensormap_check [--emulator-only]: the flag compares the emulator with the CPU's box alone (no
// GPU needed, no rows written), to check the probe itself before a GPU run.
int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const bool emu_only = argc == 2 && std::string(argv[1]) == "--emulator-only";
  if (argc != 1 && !emu_only) {
    std::printf("usage: tensormap_check [--emulator-only]\n");
    return 2;
  }
  int devices = 0;
  cudaDeviceProp prop{};
  if (!emu_only && (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 ||
                    cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major < 9)) {
    std::printf("tensormap_check: needs a GPU of compute capability >= 9.0; none found\n");
    return 3;
  }
  const std::string code = emu_only ? "none" : probe::loaded_code_of(gpu::replace_probe);
  if (code.empty()) {
    std::printf("tensormap_check: none of this binary's code (" TCG_GPU_CODE ") loads on %s (cc %d.%d)\n", prop.name,
                prop.major, prop.minor);
    return 3;
  }
  if (emu_only) std::printf("tensormap_check: the emulator against the CPU's boxes (no GPU)\n");
  else std::printf("tensormap_check: %s (cc %d.%d, %s) against the tcgen05 emulator\n", prop.name, prop.major, prop.minor,
                   code.c_str());
  probe::Report report(prop);
  using gpu::kGlobal, gpu::kShared, gpu::kPrefetchParam, gpu::kGlobalPrefetch;
  struct Case {
    const char* name;
    const char* insn;
    int variant;
    uint32_t rows, box_rows;
    uint64_t stride;  // 0: the template's
  };
  const char* kRep = "tensormap.replace.tile.{global_address,global_dim,box_dim}.global.b1024 + fence.proxy.tensormap::generic";
  const char* kRepStride = "tensormap.replace.tile.{global_address,global_dim,box_dim,global_stride}.global.b1024 + fence.proxy.tensormap::generic";
  const char* kRepShared = "tensormap.replace.tile.{global_address,global_dim,box_dim,global_stride}.shared::cta.b1024 + fence.proxy.tensormap::generic";
  const Case cases[] = {
      {"global map: address, global_dim 20, box_dim 32 (12 rows zero-filled)", kRep, kGlobal, 20, 32, 0},
      {"global map: the same with global_stride[0] = 128 B (every other row)", kRepStride, kGlobal, 20, 32, 128},
      {"shared::cta copy, then global: address, global_dim 20, box 48, stride 128 B", kRepShared, kShared, 20, 48, 128},
      {"prefetch.tensormap of the __grid_constant__ map, then a load (template)", "prefetch.tensormap", kPrefetchParam, 0, 16, 0},
      {"global map rewritten (global_dim 24, box 64), prefetch.tensormap of it, load", "prefetch.tensormap + tensormap.replace", kGlobalPrefetch, 24, 64, 0},
  };
  // A: the template's tensor (32 rows of 64 bytes, boxes of 16 rows); B: what the rewrites point
  // at (64 rows of 128 bytes, so a stride of 64 or 128 bytes stays inside it). Bytes never 0.
  std::vector<uint8_t> a(32 * gpu::ROW), b(64 * 128);
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(1 + (i * 2654435761u >> 9) % 120);
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(130 + (i * 40503u >> 5) % 120);
  std::vector<uint8_t> emu_maps(256 + 128);
  uint8_t* emu_map_p = emu_maps.data() + (128 - reinterpret_cast<uintptr_t>(emu_maps.data()) % 128) % 128;
  const tcsim::GlobalAllocation ra(a.data(), a.size(), "A"), rb(b.data(), b.size(), "B"),
      rm(emu_map_p, 128, "tensor map");
  uint8_t *dev_a = nullptr, *dev_b = nullptr, *dev_out = nullptr;
  CUtensorMap* dev_map = nullptr;
  if (!emu_only) {
    CUDA_CHECK(cudaMalloc(&dev_a, a.size()));
    CUDA_CHECK(cudaMalloc(&dev_b, b.size()));
    CUDA_CHECK(cudaMalloc(&dev_out, gpu::OUT_BYTES));
    CUDA_CHECK(cudaMalloc(&dev_map, 128));  // cudaMalloc: 256-byte aligned
    CUDA_CHECK(cudaMemcpy(dev_a, a.data(), a.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dev_b, b.data(), b.size(), cudaMemcpyHostToDevice));
  }
  int failed = 0;
  for (const Case& c : cases) {
    tcg::TiledMap t;
    t.rank = 2;
    t.dtype = tcg::TmaDtype::kU8;
    t.dims[0] = gpu::ROW;
    t.dims[1] = 32;
    t.strides[0] = gpu::ROW;
    t.box[0] = gpu::ROW;
    t.box[1] = 16;
    const uint32_t box_bytes = c.box_rows * gpu::ROW;
    // The box the new fields describe: rows below global_dim from B at the new stride, zeros after.
    std::vector<uint8_t> expect(box_bytes, 0);
    const bool rewritten = c.variant != kPrefetchParam;
    const uint64_t stride = c.stride ? c.stride : gpu::ROW;
    for (uint32_t r = 0; r < c.box_rows; ++r)
      if (rewritten ? r < c.rows : r < 32)
        std::memcpy(expect.data() + r * gpu::ROW, rewritten ? b.data() + r * stride : a.data() + r * gpu::ROW, gpu::ROW);
    std::vector<uint8_t> gpu_img(gpu::OUT_BYTES), emu(gpu::OUT_BYTES, 0xEE);
    tcg::TiledMap g = t, e = t;
    g.base = dev_a;
    e.base = a.data();
    if (!emu_only) {
      CUDA_CHECK(cudaMemset(dev_out, 0xEE, gpu::OUT_BYTES));
      CUDA_CHECK(cudaMemset(dev_map, 0, 128));
      gpu::probe(dev_map, g, dev_b, c.rows, c.box_rows, c.stride, c.variant, box_bytes, dev_out);
      const cudaError_t run = cudaDeviceSynchronize();
      if (run != cudaSuccess) {  // an illegal instruction ends the context: report it, stop
        std::printf("FAIL  %-75s GPU: %s\n", c.name, cudaGetErrorString(run));
        report.add("tensormap", c.insn, c.name, "error", std::string("GPU: ") + cudaGetErrorString(run));
        ++failed;
        break;
      }
      CUDA_CHECK(cudaMemcpy(gpu_img.data(), dev_out, gpu::OUT_BYTES, cudaMemcpyDeviceToHost));
    }
    std::string emu_error;
    try {
      std::memset(emu_map_p, 0, 128);
      sim::probe(reinterpret_cast<CUtensorMap*>(emu_map_p), e, b.data(), c.rows, c.box_rows, c.stride, c.variant,
                 box_bytes, emu.data());
    } catch (const std::exception& ex) {
      emu_error = ex.what();
    }
    uint32_t gpu_done = 0, emu_done = 0;
    std::memcpy(&gpu_done, gpu_img.data() + gpu::AREA, 4);
    std::memcpy(&emu_done, emu.data() + gpu::AREA, 4);
    if (emu_only) {  // the emulator stands in for the GPU: compared with the CPU's box only
      gpu_img = emu;
      gpu_done = emu_done;
    }
    size_t gpu_vs_emu = 0, gpu_vs_cpu = 0;
    for (uint32_t i = 0; i < box_bytes; ++i) {
      gpu_vs_emu += gpu_img[i] != emu[i];
      gpu_vs_cpu += gpu_img[i] != expect[i];
    }
    char detail[256];
    std::snprintf(detail, sizeof detail,
                  "%u-byte box: GPU vs emulator %zu bytes differ, GPU vs the new fields' box %zu; phase completed: "
                  "GPU %s, emulator %s%s%s",
                  box_bytes, gpu_vs_emu, gpu_vs_cpu, gpu_done ? "yes" : "no", emu_done ? "yes" : "no",
                  emu_error.empty() ? "" : "; emulator: ", emu_error.substr(0, 120).c_str());
    const bool ok = gpu_vs_emu == 0 && gpu_vs_cpu == 0 && gpu_done && emu_done && emu_error.empty();
    failed += !ok;
    std::printf("%s  %-75s %s\n", ok ? "ok  " : "FAIL", c.name, detail);
    if (!emu_only) report.add("tensormap", c.insn, c.name, ok ? "identical" : "MISMATCH", detail);
  }
  if (emu_only) {
    std::printf("tensormap_check: %zu cases, %d failed (emulator only)\n", std::size(cases), failed);
    return failed ? 1 : 0;
  }
  CUDA_CHECK(cudaFree(dev_a));
  CUDA_CHECK(cudaFree(dev_b));
  CUDA_CHECK(cudaFree(dev_out));
  CUDA_CHECK(cudaFree(dev_map));
  std::printf("tensormap_check: %zu cases, %d failed\n", std::size(cases), failed);
  return failed || !report.write() ? 1 : 0;
}
#endif
