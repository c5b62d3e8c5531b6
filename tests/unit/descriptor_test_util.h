// descriptor_test_util.h — what the hand-computed encoder tests share (test_descriptors.cpp,
// test_operand_addressing.cpp): a volatile round trip that keeps the compiler from folding a
// constexpr call, and step 01's tile geometry that both files work their examples on.
//
// Everything is inline in namespace desc_test, so each test file includes it once and links.
#pragma once
#include <cstdint>

namespace desc_test {

// Pass a value through a volatile so that the compiler cannot fold the call that follows.
template <class T>
T rt(T v) {
  volatile T x = v;
  return x;
}

// Step 01 geometry (steps/step01_basic_tcgen05.cu): BLOCK_M = BLOCK_N = 128, BLOCK_K = 64 bf16.
inline constexpr uint32_t kRows = 128, kBlockK = 64, kMmaK = 16;
inline constexpr uint32_t kS01Lbo = kRows * 16;  // 128 rows x 16 B = 2048 B between k-groups
inline constexpr uint32_t kS01Sbo = 8 * 16;      // one 8x16 B core matrix = 128 B between 8-row groups

}  // namespace desc_test
