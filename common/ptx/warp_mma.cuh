// ptx/warp_mma.cuh — the warp-level tensor-core path of step 00: ldmatrix and mma.sync (PTX ISA §9.7.14).
// One wrapper per instruction: the PTX string, and under TCG_SIM the emulator's twin (common/sim/).
#pragma once
#include "build.h"

namespace tcg {
inline namespace TCG_ABI_NS {

// ============================================================== warp MMA (step 00)

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 (§9.7.14.5.15): four 8x8 b16 matrices; lane i gives
// the address of row i%8 of matrix i/8; register j of lane l receives matrix j, row l/4,
// elements 2*(l%4) and 2*(l%4)+1.
TCG_DEV void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::ldmatrix(4, addr, r, TCG_AT);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

// Same with two matrices; lanes 0..15 give the row addresses.
TCG_DEV void ldmatrix_x2(uint32_t (&r)[2], uint32_t addr TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::ldmatrix(2, addr, r, TCG_AT);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (§9.7.14.5.8): d = a * b + c for a 16x16
// A fragment (4 regs of 2 BF16), a 16x8 B fragment (2 regs) and a 16x8 FP32 accumulator (4).
TCG_DEV void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                               const float (&c)[4] TCG_LOC) {
#if defined(TCG_SIM)
  ::tcsim::mma_sync_m16n8k16_bf16(d, a, b, c, TCG_AT);
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
#endif
}

}  // inline namespace TCG_ABI_NS
}  // namespace tcg
