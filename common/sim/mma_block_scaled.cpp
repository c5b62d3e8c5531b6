// mma_block_scaled.cpp — tcgen05.mma kind::mxf4nvf4 (NVFP4 block scaling) and tcgen05.cp
// 32x128b.warpx4 (scale factors from shared memory to TMEM). Work in progress: the API exists so
// kernels compile; the model follows.
#include "internal.h"

namespace tcsim {
using namespace detail;

void mma_mxf4nvf4_block16(uint32_t, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t, bool, int, SrcLoc at) {
  tick(at);
  fail_here("not modelled yet", "tcgen05.mma.kind::mxf4nvf4 is not implemented in the emulator yet");
}

void tcgen05_cp_32x128b_warpx4(uint32_t, uint64_t, int, SrcLoc at) {
  tick(at);
  fail_here("not modelled yet", "tcgen05.cp.32x128b.warpx4 is not implemented in the emulator yet");
}

}  // namespace tcsim
