// test_tensormap.cpp — tensor maps rewritten on the device (common/sim/tensormap_replace.cpp):
// tensormap.replace of a map in global memory followed by a TMA load through it, every rule the
// PTX ISA states that a kernel can break (alignment, state space, field ranges and ordinals, the
// release/acquire tensormap-proxy fence pair with its scopes and address, a map rewritten while a
// copy reads it, two unordered rewrites), and prefetch.tensormap.
//
// The maps: a 32 x 64-byte U8 tensor "A" viewed in boxes of 16 rows (the template the host
// encodes and copies into global memory), rewritten to a 20-row tensor "B" with a 32-row box, so
// a correct load at (0, 0) returns B's 20 rows and 12 zero-filled rows (PTX ISA §5.5.6).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

using namespace tcg_test;

namespace {

constexpr uint32_t kRowBytes = 64, kRowsA = 32, kRowsB = 20, kBoxRows = 32, kBoxBytes = kBoxRows * kRowBytes;
constexpr uint32_t kSmem = kBoxBytes + 1024;  // box at 0, mbarrier at kBoxBytes, a map copy at kBoxBytes + 128

using S = tcg::TensormapScope;

// What the kernels do differently (one kernel, so every case runs the same code around the rule).
enum Mode : int {
  kCorrect,          // rewrite, release.gpu, acquire.gpu [map], load
  kNoRelease,        // ... without the release
  kNoAcquire,        // ... without the acquire
  kAcquireOther,     // the acquire names the other map of the buffer
  kHostMapNoAcquire, // no rewrite: the host's map, used without an acquire
  kHostMapAcquire,   // no rewrite, with the acquire: fine
  kRewriteInFlight,  // rewrite again right after issuing the copy, before waiting for it
  kTwoWriters,       // threads 0 and 32 rewrite, nothing orders them
  kWriterOtherWarp,  // thread 32 rewrites and releases (.cta), __syncthreads, thread 0 acquires (.cta) and loads
  kWriterNoSync,     // thread 32 rewrites and releases, thread 0 acquires and loads, no barrier between
  kSharedForm,       // the .shared::cta form on a copy in shared memory, copied to global memory, then fenced
  kUseSharedMap,     // a TMA load through the map in shared memory
};

// Rewrites the map at `gmap` (the host copied the template there) to B, then loads the box at
// (0, 0) into shared memory and copies it to `out`.
__global__ void replace_kernel(CUtensorMap* gmap, const __grid_constant__ CUtensorMap tmpl, const uint8_t* b, int mode,
                               uint8_t* out) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + kBoxBytes, smap = base + kBoxBytes + 128;
  const auto rewrite = [&] {
    tcg::tensormap_replace_global_address(gmap, b);
    tcg::tensormap_replace_global_dim<1>(gmap, kRowsB);
    tcg::tensormap_replace_box_dim<1>(gmap, kBoxRows);
  };
  if (mode == kTwoWriters) {  // threads 0 and 32 rewrite the map, nothing orders them
    if (threadIdx.x == 0 || threadIdx.x == 32) rewrite();
    return;
  }
  if (threadIdx.x == 32 && (mode == kWriterOtherWarp || mode == kWriterNoSync)) {
    rewrite();
    tcg::fence_proxy_tensormap_release<S::kCta>();
  }
  if (mode == kWriterOtherWarp) __syncthreads();
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
    const CUtensorMap* use = gmap;
    if (mode == kSharedForm || mode == kUseSharedMap) {
      memcpy(smem + kBoxBytes + 128, &tmpl, sizeof tmpl);
      tcg::tensormap_replace_global_address(smap, b);
      tcg::tensormap_replace_global_dim<1>(smap, kRowsB);
      tcg::tensormap_replace_box_dim<1>(smap, kBoxRows);
      if (mode == kUseSharedMap) use = reinterpret_cast<const CUtensorMap*>(smem + kBoxBytes + 128);
      else memcpy(gmap, smem + kBoxBytes + 128, sizeof(CUtensorMap));
    } else if (mode != kHostMapNoAcquire && mode != kHostMapAcquire && mode != kWriterOtherWarp &&
               mode != kWriterNoSync) {
      rewrite();
    }
    if (mode != kNoRelease && mode != kWriterOtherWarp && mode != kWriterNoSync) tcg::fence_proxy_tensormap_release<S::kGpu>();
    if (mode == kAcquireOther) tcg::fence_proxy_tensormap_acquire<S::kGpu>(gmap + 1);
    else if (mode == kWriterOtherWarp || mode == kWriterNoSync) tcg::fence_proxy_tensormap_acquire<S::kCta>(gmap);
    else if (mode != kNoAcquire && mode != kHostMapNoAcquire) tcg::fence_proxy_tensormap_acquire<S::kGpu>(gmap);
    tcg::mbarrier_arrive_expect_tx(bar, mode == kHostMapAcquire ? 16 * kRowBytes : kBoxBytes);  // the template's box: 16 rows
    tcg::tma_load_2d(base, use, 0, 0, bar);
    if (mode == kRewriteInFlight) tcg::tensormap_replace_box_dim<1>(gmap, 16);
    tcg::mbarrier_wait_parity(bar, 0);
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < kBoxBytes; i += blockDim.x) out[i] = smem[i];
}

struct Buffers {
  std::vector<uint8_t> a = std::vector<uint8_t>(kRowsA * kRowBytes), b = std::vector<uint8_t>(kRowsB * kRowBytes);
  std::vector<uint8_t> maps_storage = std::vector<uint8_t>(3 * 128 + 128);  // two maps, 128-byte aligned
  CUtensorMap* gmap = nullptr;
  CUtensorMap tmpl{};
  Buffers() {
    for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(1 + i % 97);
    for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(101 + i % 89);
    uint8_t* p = maps_storage.data();
    p += (128 - reinterpret_cast<uintptr_t>(p) % 128) % 128;
    gmap = reinterpret_cast<CUtensorMap*>(p);
    tcg::TiledMap t;
    t.rank = 2;
    t.dtype = tcg::TmaDtype::kU8;
    t.base = a.data();
    t.dims[0] = kRowBytes;
    t.dims[1] = kRowsA;
    t.strides[0] = kRowBytes;
    t.box[0] = kRowBytes;
    t.box[1] = 16;
    tmpl = tcg::make_tensor_map(t);
    gmap[0] = tmpl;  // the host's copies, before the launch
    gmap[1] = tmpl;
  }
};

std::string run_mode(int mode, std::vector<uint8_t>* out_image = nullptr, dim3 block = dim3(64)) {
  Buffers buf;
  const auto ra = registered(buf.a, "A"), rb = registered(buf.b, "B");
  const tcsim::GlobalAllocation rm(buf.gmap, 256, "tensor maps");
  std::vector<uint8_t> out(kBoxBytes, 0xEE);
  const std::string err = sim_error([&] {
    tcg::launch_kernel(replace_kernel, tcg::LaunchDims{dim3(1), block, kSmem + tcg::kSmemAlignSlack}, nullptr, buf.gmap,
                       buf.tmpl, buf.b.data(), mode, out.data());
  });
  if (out_image) *out_image = out;
  return err;
}

std::vector<uint8_t> expected_box() {  // B's 20 rows, then zeros
  Buffers buf;
  std::vector<uint8_t> e(kBoxBytes, 0);
  std::memcpy(e.data(), buf.b.data(), buf.b.size());
  return e;
}

}  // namespace

TEST_CASE("emulator: tensormap.replace of a map in global memory, fenced, is what the next TMA load reads") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    CAPTURE(seed);
    for (int mode : {kCorrect, kSharedForm, kWriterOtherWarp}) {
      CAPTURE(mode);
      std::vector<uint8_t> img;
      const std::string err = run_mode(mode, &img);
      INFO(err);
      REQUIRE(err.empty());
      CHECK(img == expected_box());
    }
  }
  SimOptions opt(1);
  std::vector<uint8_t> img;
  REQUIRE(run_mode(kHostMapAcquire, &img).empty());  // the template: A's first 16 rows
  Buffers buf;
  CHECK(std::equal(buf.a.begin(), buf.a.begin() + 16 * kRowBytes, img.begin()));
}

TEST_CASE("emulator: tensormap proxy fences that are missing, misplaced or mis-scoped are reported") {
  SimOptions opt(1);
  SUBCASE("no release after the rewrite") {
    const std::string err = run_mode(kNoRelease);
    INFO(err);
    CHECK(contains(err, "tensor map rewrite not ordered before its use"));
    CHECK(contains(err, "ran no fence.proxy.tensormap::generic.release"));
    CHECK(contains(err, "warp 0 lane 0"));
  }
  SUBCASE("no acquire before the load") {
    const std::string err = run_mode(kNoAcquire);
    INFO(err);
    CHECK(contains(err, "tensor map used without its proxy fence"));
    CHECK(contains(err, "rewritten (tensormap.replace.global) by"));
  }
  SUBCASE("the acquire names another map") {
    const std::string err = run_mode(kAcquireOther);
    INFO(err);
    CHECK(contains(err, "tensor map used without its proxy fence"));
    CHECK(contains(err, "its acquire fences name"));
  }
  SUBCASE("a map the host wrote needs the acquire too") {
    const std::string err = run_mode(kHostMapNoAcquire);
    INFO(err);
    CHECK(contains(err, "not acquired at kernel start"));
  }
}

TEST_CASE("emulator: a rewrite by another thread needs a barrier between release and acquire") {
  // Whichever runs first, the use or the rewrite, the race is reported on every seed.
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimOptions opt(seed);
    CAPTURE(seed);
    const std::string err = run_mode(kWriterNoSync);
    INFO(err);
    CHECK((contains(err, "tensor map rewrite not ordered before its use") ||
           contains(err, "tensor map rewritten while a copy reads it")));
    CHECK(contains(err, "warp 1 lane 0"));  // the writer, thread 32
  }
}

TEST_CASE("emulator: rewriting a tensor map while a copy reads it, or from two unordered threads, is a race") {
  bool caught = false;
  for (uint64_t seed = 1; seed <= 8 && !caught; ++seed) {
    SimOptions opt(seed);
    const std::string err = run_mode(kRewriteInFlight);
    if (err.empty()) continue;  // the copy had read the map by then under this seed
    INFO(err);
    CHECK(contains(err, "tensor map rewritten while a copy reads it"));
    caught = true;
  }
  CHECK(caught);
  SimOptions opt(1);
  const std::string err = run_mode(kTwoWriters);
  INFO(err);
  CHECK(contains(err, "unordered tensor map rewrites"));
}

TEST_CASE("emulator: a TMA load through a map in shared memory is refused") {
  SimOptions opt(1);
  const std::string err = run_mode(kUseSharedMap);
  INFO(err);
  CHECK(contains(err, "tensor map in shared memory"));
}

// ============================================================================ one instruction's rules
namespace {

enum Bad : int {
  kOk, kParamMap, kMisaligned, kBoxZero, kBox257, kGlobalDimZero, kStride24, kStrideHuge, kElemStride9, kRank6,
  kElemtype16, kSwizzle5, kInterleave3, kFill2, kAtomicity4, kBoxOrd2, kStrideOrd1, kAddrMisaligned,
  kSharedMisaligned, kRevalidateInner, kRevalidateSwizzle, kUnmodelledStride, kAcquireParam, kAcquireSize,
  kPrefetchParam, kPrefetchShared,
};

__global__ void rule_kernel(CUtensorMap* gmap, const __grid_constant__ CUtensorMap tmpl, int bad) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + kBoxBytes;
  if (threadIdx.x != 0) return;
  CUtensorMap* m = gmap;
  switch (bad) {
    case kOk: tcg::tensormap_replace_box_dim<1>(m, 256); break;
    case kParamMap: tcg::tensormap_replace_box_dim<1>(const_cast<CUtensorMap*>(&tmpl), 8); break;
    case kMisaligned:
      tcg::tensormap_replace_box_dim<1>(reinterpret_cast<CUtensorMap*>(reinterpret_cast<uint8_t*>(m) + 64), 8);
      break;
    case kBoxZero: tcg::tensormap_replace_box_dim<1>(m, 0); break;
    case kBox257: tcg::tensormap_replace_box_dim<0>(m, 257); break;
    case kGlobalDimZero: tcg::tensormap_replace_global_dim<0>(m, 0); break;
    case kStride24: tcg::tensormap_replace_global_stride<0>(m, 24); break;
    case kStrideHuge: tcg::tensormap_replace_global_stride<0>(m, uint64_t(1) << 40); break;
    case kElemStride9: tcg::tensormap_replace_element_stride<1>(m, 9); break;
    case kRank6: tcg::tensormap_replace_rank(m, 5); break;
    case kElemtype16: tcg::tensormap_replace_elemtype<16>(m); break;
    case kSwizzle5: tcg::tensormap_replace_swizzle_mode<5>(m); break;
    case kInterleave3: tcg::tensormap_replace_interleave_layout<3>(m); break;
    case kFill2: tcg::tensormap_replace_fill_mode<2>(m); break;
    case kAtomicity4: tcg::tensormap_replace_swizzle_atomicity<4>(m); break;
    case kBoxOrd2: tcg::tensormap_replace_box_dim<2>(m, 8); break;          // rank 2: ordinals 0, 1
    case kStrideOrd1: tcg::tensormap_replace_global_stride<1>(m, 64); break;  // rank 2: one stride
    case kAddrMisaligned: tcg::tensormap_replace_global_address(m, reinterpret_cast<const uint8_t*>(m) + 8); break;
    case kSharedMisaligned: {
      memcpy(smem + kBoxBytes + 192, &tmpl, sizeof tmpl);
      tcg::tensormap_replace_box_dim<1>(base + kBoxBytes + 192, 8);
      break;
    }
    case kAcquireParam: tcg::fence_proxy_tensormap_acquire<S::kGpu>(&tmpl); break;
    case kAcquireSize: ::tcsim::fence_proxy_tensormap_acquire(::tcsim::FenceScope::kGpu, m, 64, {__FILE__, __LINE__}); break;
    case kPrefetchParam: tcg::prefetch_tensormap(&tmpl); break;
    case kPrefetchShared: {
      memcpy(smem + kBoxBytes + 128, &tmpl, sizeof tmpl);
      tcg::prefetch_tensormap(reinterpret_cast<const CUtensorMap*>(smem + kBoxBytes + 128));
      break;
    }
    default: {  // rewrites that pass their own ranges but leave a map the next load must refuse
      if (bad == kRevalidateInner) tcg::tensormap_replace_box_dim<0>(m, 8);  // 8 bytes: not a multiple of 16
      if (bad == kRevalidateSwizzle) tcg::tensormap_replace_swizzle_mode<1>(m);  // 64-byte rows, 32B span
      if (bad == kUnmodelledStride) tcg::tensormap_replace_element_stride<0>(m, 2);
      tcg::fence_proxy_tensormap_release<S::kCta>();
      tcg::fence_proxy_tensormap_acquire<S::kCta>(m);
      tcg::mbarrier_init(bar, 1);
      tcg::fence_mbarrier_init();
      tcg::mbarrier_arrive_expect_tx(bar, 16 * kRowBytes);
      tcg::tma_load_2d(base, m, 0, 0, bar);
      tcg::mbarrier_wait_parity(bar, 0);
    }
  }
}

std::string run_rule(int bad) {
  Buffers buf;
  const auto ra = registered(buf.a, "A");
  const tcsim::GlobalAllocation rm(buf.gmap, 256, "tensor maps");
  return sim_error([&] {
    tcg::launch_kernel(rule_kernel, tcg::LaunchDims{dim3(1), dim3(32), kSmem + tcg::kSmemAlignSlack}, nullptr, buf.gmap,
                       buf.tmpl, bad);
  });
}

}  // namespace

TEST_CASE("emulator: tensormap.replace checks alignment, state space, field ranges and ordinals") {
  SimOptions opt(1);
  CHECK(run_rule(kOk).empty());
  CHECK(run_rule(kPrefetchParam).empty());
  const struct {
    int bad;
    const char* expect;
  } cases[] = {
      {kParamMap, "tensormap.replace outside its state space"},
      {kMisaligned, "must be 128-byte aligned"},
      {kSharedMisaligned, "must be 128-byte aligned"},
      {kBoxZero, "box_dim[1] = 0: must be 1..256"},
      {kBox257, "box_dim[0] = 257: must be 1..256"},
      {kGlobalDimZero, "global_dim[0] = 0: must be at least 1"},
      {kStride24, "global_stride[0] = 24: must be a multiple of 16"},
      {kStrideHuge, "below 2^40"},
      {kElemStride9, "element_stride[1] = 9: must be 1..8"},
      {kRank6, "rank = 5: takes the rank minus one"},
      {kElemtype16, "elemtype = 16"},
      {kSwizzle5, "swizzle_mode = 5"},
      {kInterleave3, "interleave_layout = 3"},
      {kFill2, "fill_mode = 2"},
      {kAtomicity4, "swizzle_atomicity = 4"},
      {kBoxOrd2, "box_dim with ordinal 2: the map has rank 2"},
      {kStrideOrd1, "global_stride with ordinal 1"},
      {kAddrMisaligned, "16-byte aligned address"},
      {kRevalidateInner, "not a multiple of 16"},
      {kRevalidateSwizzle, "more than the 32B swizzle span"},
      {kUnmodelledStride, "element stride 2 in dimension 0, which the emulator does not model"},
      {kAcquireParam, "proxy fence outside .global"},
      {kAcquireSize, "128 is the only size"},
      {kPrefetchShared, "tensor map in shared memory"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.bad);
    const std::string err = run_rule(c.bad);
    INFO(err);
    CHECK(contains(err, c.expect));
  }
}

// ============================================================================ fence scopes across CTAs
namespace {

// A cluster of 2: CTA 0's thread 0 rewrites the map and releases at scope `rel`; after the
// cluster barrier CTA 1's thread 0 acquires at scope `acq` and loads through the map.
template <S Rel, S Acq>
__global__ void scope_kernel(CUtensorMap* gmap, const uint8_t* b, uint8_t* out) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + kBoxBytes, rank = tcg::cluster_ctarank();
  if (rank == 0 && threadIdx.x == 0) {
    tcg::tensormap_replace_global_address(gmap, b);
    tcg::tensormap_replace_global_dim<1>(gmap, kRowsB);
    tcg::tensormap_replace_box_dim<1>(gmap, kBoxRows);
    tcg::fence_proxy_tensormap_release<Rel>();
  }
  tcg::cluster_sync();
  if (rank == 1 && threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
    tcg::fence_proxy_tensormap_acquire<Acq>(gmap);
    tcg::mbarrier_arrive_expect_tx(bar, kBoxBytes);
    tcg::tma_load_2d(base, gmap, 0, 0, bar);
    tcg::mbarrier_wait_parity(bar, 0);
  }
  tcg::cluster_sync();
  if (rank == 1)
    for (uint32_t i = threadIdx.x; i < kBoxBytes; i += blockDim.x) out[i] = smem[i];
}

template <S Rel, S Acq>
std::string run_scope(std::vector<uint8_t>* img) {
  Buffers buf;
  const auto ra = registered(buf.a, "A"), rb = registered(buf.b, "B");
  const tcsim::GlobalAllocation rm(buf.gmap, 256, "tensor maps");
  std::vector<uint8_t> out(kBoxBytes, 0xEE);
  tcg::LaunchDims d{dim3(2), dim3(32), kSmem + tcg::kSmemAlignSlack};
  d.cluster = dim3(2);
  const std::string err = sim_error([&] { tcg::launch_kernel(scope_kernel<Rel, Acq>, d, nullptr, buf.gmap, buf.b.data(), out.data()); });
  *img = out;
  return err;
}

}  // namespace

TEST_CASE("emulator: each tensormap fence's scope must include the other thread") {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SimOptions opt(seed);
    CAPTURE(seed);
    std::vector<uint8_t> img;
    std::string err = run_scope<S::kCluster, S::kCluster>(&img);
    INFO(err);
    CHECK(err.empty());
    CHECK(img == expected_box());
    err = run_scope<S::kGpu, S::kSys>(&img);
    CHECK(err.empty());
    CHECK(img == expected_box());
    err = run_scope<S::kCta, S::kCluster>(&img);  // the release does not reach CTA 1
    CHECK(contains(err, "has scope .cta, which does not include the copying thread"));
    CHECK(contains(err, "by CTA (1,0,0) rank 1 warp 0 lane 0"));
    err = run_scope<S::kCluster, S::kCta>(&img);  // the acquire does not reach CTA 0
    CHECK(contains(err, "its scope .cta does not include the rewriting thread"));
  }
}

// ============================================================================ a map copied with st.global.v4
namespace {

// Thread 0 copies the template map into global memory with 16-byte generic stores (as a kernel
// that builds its groups' maps from one template does), then fences (or not) and loads through it.
__global__ void copy_map_kernel(CUtensorMap* gmap, const __grid_constant__ CUtensorMap tmpl, bool release,
                                uint8_t* out) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem), bar = base + kBoxBytes;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 8; ++i) tcg::st_global_v4(reinterpret_cast<uint4*>(gmap) + i, reinterpret_cast<const uint4*>(&tmpl)[i]);
    if (release) tcg::fence_proxy_tensormap_release<S::kCta>();
    tcg::fence_proxy_tensormap_acquire<S::kCta>(gmap);
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
    tcg::mbarrier_arrive_expect_tx(bar, 16 * kRowBytes);
    tcg::tma_load_2d(base, gmap, 0, 0, bar);
    tcg::mbarrier_wait_parity(bar, 0);
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < 16 * kRowBytes; i += blockDim.x) out[i] = smem[i];
}

}  // namespace

TEST_CASE("emulator: a tensor map copied into global memory with st.global.v4 needs the fence pair too") {
  SimOptions opt(1);
  Buffers buf;
  std::memset(buf.gmap, 0, 128);  // not yet a map: the kernel's copy makes it one
  const auto ra = registered(buf.a, "A");
  const tcsim::GlobalAllocation rm(buf.gmap, 256, "tensor maps");
  std::vector<uint8_t> out(16 * kRowBytes, 0xEE);
  const auto run = [&](bool release) {
    return sim_error([&] {
      tcg::launch_kernel(copy_map_kernel, tcg::LaunchDims{dim3(1), dim3(32), kSmem + tcg::kSmemAlignSlack}, nullptr,
                         buf.gmap, buf.tmpl, release, out.data());
    });
  };
  std::string err = run(true);
  INFO(err);
  CHECK(err.empty());
  CHECK(std::equal(buf.a.begin(), buf.a.begin() + 16 * kRowBytes, out.begin()));
  err = run(false);
  CHECK(contains(err, "rewritten by st.global.v4 (a tensor map's bytes) in"));
  CHECK(contains(err, "tensor map rewrite not ordered before its use"));
  CHECK(contains(err, "ran no fence.proxy.tensormap::generic.release"));
}
