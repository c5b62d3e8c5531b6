// mbarrier_test_kernels.h — the mbarrier kernels several emulator test files share
// (test_mbarrier.cpp, test_deadlock.cpp, test_copies.cpp, test_asynchrony.cpp): one thread
// waiting on a freshly initialised barrier, and one thread loading a 64 x 16 BF16 box with
// cp.async.bulk.tensor, in the order of expect_tx and copies the test asks for, then waiting.
//
// Everything is inline in namespace tcg_test (like emulator_test_util.h), so each test file
// includes it once and the test binary links.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace tcg_test {

// Thread 0 initialises an mbarrier (count 1), reports its address, and waits on `parity`: 1 passes
// at once (the "previous phase" of a fresh barrier), 0 waits for an arrival that never comes.
inline __global__ void fresh_barrier_kernel(uint32_t parity, uint32_t* passed, uint32_t* bar_addr) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t bar = tcg::smem_addr(smem) + 64;
  if (threadIdx.x == 0) {
    tcg::mbarrier_init(bar, 1);
    *bar_addr = bar;
    tcg::mbarrier_wait_parity(bar, parity);
    *passed = 1;
  }
}

// A single thread loads one 64 x 16 BF16 box (2 KiB) with TMA and waits for it.
struct TmaCase {
  uint32_t dst_off = 0;      // TMA destination, bytes from the aligned smem base
  uint32_t bar_off = 8192;   // mbarrier, bytes from the aligned smem base
  uint32_t expect = 2048;    // bytes announced by arrive.expect_tx
  int order = 0;             // 0: expect_tx, TMA; 1: TMA, poll until the data landed, expect_tx;
                             // 2: expect_tx, TMA twice (second box at dst + 2048);
                             // 3: expect_tx without any TMA
  bool extra_arrive = false; // one more plain arrive after the above
  bool wait = true;
  uint16_t* out = nullptr;   // 1024 elements: the smem box after the wait
  uint32_t* landed_first = nullptr;  // order 1: 1 if the data was there before expect_tx
};

inline __global__ void tma_case_kernel(const __grid_constant__ CUtensorMap map, TmaCase t) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t dst = base + t.dst_off, bar = base + t.bar_off;
  if (threadIdx.x != 0) return;
  tcg::mbarrier_init(bar, 1);
  tcg::fence_mbarrier_init();
  if (t.order == 1) {
    tcg::tma_load_2d(dst, &map, 0, 0, bar);
    volatile const uint16_t* last = reinterpret_cast<const uint16_t*>(smem + t.dst_off) + 1023;
    while (*last == 0xFFFF) tcg::tcgen05_fence_before_thread_sync();  // an emulated instruction
    if (t.landed_first) *t.landed_first = 1;
    tcg::mbarrier_arrive_expect_tx(bar, t.expect);
  } else {
    tcg::mbarrier_arrive_expect_tx(bar, t.expect);
    if (t.order != 3) tcg::tma_load_2d(dst, &map, 0, 0, bar);
    if (t.order == 2) tcg::tma_load_2d(dst + 2048, &map, 0, 0, bar);
  }
  if (t.extra_arrive) tcg::mbarrier_arrive(bar);
  if (t.wait) tcg::mbarrier_wait_parity(bar, 0);
  if (t.out) memcpy(t.out, smem + t.dst_off, 2048);
}

struct Box {
  std::vector<uint16_t> data;  // 16 rows x 64 BF16
  CUtensorMap map;
  explicit Box(tcg::TmaSwizzle sw = tcg::TmaSwizzle::kNone) : data(16 * 64) {
    for (uint32_t i = 0; i < data.size(); ++i) data[i] = bf16(float(small_int(i / 64, i % 64, 5) + 5));  // 1..9
    tcg::TiledMap t;
    t.dtype = tcg::TmaDtype::kBF16;
    t.base = data.data();
    t.rank = 2;
    t.dims[0] = 64;
    t.dims[1] = 16;
    t.strides[0] = 128;
    t.box[0] = 64;
    t.box[1] = 16;
    t.swizzle = sw;
    map = tcg::make_tensor_map(t);
  }
};

inline std::string run_tma_case(const Box& box, TmaCase t, uint32_t smem_bytes = 16384 + tcg::kSmemAlignSlack) {
  const auto reg = registered(box.data, "box");
  return sim_error([&] {
    tcg::launch_kernel(tma_case_kernel, tcg::LaunchDims{dim3(1), dim3(32), smem_bytes}, nullptr, box.map, t);
  });
}

}  // namespace tcg_test
