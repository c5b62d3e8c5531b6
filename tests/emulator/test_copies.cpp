// test_copies.cpp — the emulator's copy engines (common/sim/copies.cpp) and tensor maps
// (common/tensor_map.cpp): the TMA destination and shared-memory bounds diagnostics, the 1-D
// cp.async.bulk (bytes, transaction, alignment and size rules), and tensor-map validation that
// names the bad parameter and the caller's line.
//
// Each test is a real kernel written like the steps (kernel_common.cuh wrappers only), launched
// on one CTA in the emulator; the expected side is computed on the CPU from the PTX ISA
// (docs/references.md lists the sections and the CUTLASS headers cited). Split from the former
// test_emulator.cpp by mechanism, as common/sim/ is split.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "mbarrier_test_kernels.h"

using namespace tcg_test;  // SimOptions, sim_error, run_isolated, operands, the shared kernels

// ============================================================================ TMA and shared-memory diagnostics

TEST_CASE("emulator: TMA and shared-memory diagnostics") {
  SUBCASE("128B-swizzled TMA destination not 1024-byte aligned") {
    SimOptions opt(1);
    const Box box(tcg::TmaSwizzle::k128B);
    TmaCase t;
    t.dst_off = 1024;  // aligned: fine
    CHECK(run_tma_case(box, t).empty());
    t.dst_off = 512;
    const std::string err = run_tma_case(box, t);
    INFO(err);
    CHECK(contains(err, "TMA destination not aligned to its swizzle repeat"));
  }
  SUBCASE("TMA box past the end of dynamic shared memory") {
    SimOptions opt(1);
    const Box box;
    TmaCase t;
    t.bar_off = 0;
    t.dst_off = 8192 - 1024;  // 2 KiB box in an 8 KiB window
    const std::string err = run_tma_case(box, t, 8192);  // the window starts 1024-aligned: base offset 0
    INFO(err);
    CHECK(contains(err, "shared memory out of bounds"));
  }
}

// ============================================================================ 1-D bulk copy
namespace {
// Thread 0 copies `bytes` from `src` into shared memory with cp.async.bulk and waits; the whole
// CTA then copies the shared bytes out to `out`.
__global__ void bulk_copy_kernel(const uint8_t* src, uint32_t bytes, uint32_t expect, uint32_t dst_off, uint8_t* out) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t bar = base + 8192;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    tcg::fence_mbarrier_init();
    tcg::mbarrier_arrive_expect_tx(bar, expect);
    tcg::bulk_load(base + dst_off, src, bytes, bar);
    tcg::mbarrier_wait_parity(bar, 0);
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = smem[dst_off + i];
}

std::string run_bulk(const std::vector<uint8_t>& src, uint32_t bytes, uint32_t expect, uint32_t dst_off,
                     std::vector<uint8_t>& out) {
  const auto reg = registered(src, "src");
  return sim_error([&] {
    tcg::launch_kernel(bulk_copy_kernel, tcg::LaunchDims{dim3(1), dim3(64), 8192 + 64 + tcg::kSmemAlignSlack}, nullptr,
                       src.data(), bytes, expect, dst_off, out.data());
  });
}
}  // namespace

TEST_CASE("emulator: 1-D cp.async.bulk copies bytes and completes the transaction") {
  std::vector<uint8_t> src(4096 + 16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7 + 3);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimOptions opt(seed);
    CAPTURE(seed);
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 4096, 4096, 0, out);
    INFO(err);
    REQUIRE(err.empty());
    CHECK(std::equal(out.begin(), out.end(), src.begin()));
  }
  SUBCASE("size not a multiple of 16") {
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 40, 40, 0, out);
    CHECK(contains(err, "multiple of 16"));
  }
  SUBCASE("misaligned destination") {
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 64, 64, 8, out);
    CHECK(contains(err, "16-byte aligned"));
  }
  SUBCASE("expect_tx smaller than the copy") {
    std::vector<uint8_t> out(4096, 0);
    const std::string err = run_bulk(src, 1024, 512, 0, out);
    CHECK(contains(err, "tx-count underflow"));
  }
  SUBCASE("copy over the live mbarrier") {
    std::vector<uint8_t> out(8192 + 64, 0);
    const std::string err = run_bulk(src, 64, 64, 8192 - 32, out);
    CHECK(contains(err, "live mbarrier"));
  }
}

// ============================================================================ tensor maps
TEST_CASE("emulator: tensor-map validation names the parameter and the caller's line") {
  alignas(16) static uint16_t data[64 * 64];
  auto base_map = [] {
    tcg::TiledMap t;
    t.rank = 2;
    t.dtype = tcg::TmaDtype::kBF16;
    t.base = data;
    t.dims[0] = 64;
    t.dims[1] = 64;
    t.strides[0] = 128;
    t.box[0] = 64;
    t.box[1] = 16;
    t.swizzle = tcg::TmaSwizzle::k128B;
    return t;
  };
  CHECK(tcg::validate(base_map()).empty());
  auto error_of = [](const tcg::TiledMap& t) -> std::string {
    try {
      tcg::make_tensor_map(t);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  tcg::TiledMap t = base_map();
  t.box[0] = 128;  // 256 bytes: wider than the 128-byte swizzle span
  std::string err = error_of(t);
  CHECK(contains(err, "boxDim[0]"));
  CHECK(contains(err, "128"));
  CHECK(contains(err, "test_copies.cpp:"));  // the caller's file:line
  t = base_map();
  t.strides[0] = 120;
  CHECK(contains(error_of(t), "globalStrides[0]"));
  t = base_map();
  t.base = reinterpret_cast<const uint8_t*>(data) + 8;
  CHECK(contains(error_of(t), "globalAddress"));
  t = base_map();
  t.box[1] = 257;
  CHECK(contains(error_of(t), "boxDim[1]"));
  t = base_map();
  t.swizzle = tcg::TmaSwizzle::kNone;
  t.box[0] = 4;  // 8 bytes: the inner box extent must be a multiple of 16 bytes
  CHECK(contains(error_of(t), "multiple of 16 bytes"));
  t = base_map();
  t.dims[1] = 0;
  CHECK(contains(error_of(t), "globalDim[1]"));
}
