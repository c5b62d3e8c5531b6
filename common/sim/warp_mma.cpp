// warp_mma.cpp — the warp-level tensor-core path of step 00: ldmatrix and mma.sync.
//
// Models (PTX ISA §9.7.14.5.15 ldmatrix, §9.7.14.5.8 mma.sync m16n8k16 with .bf16): the fragment
// layouts, i.e. which lane holds which elements of A, B, C/D, and which lane supplies which row
// address; all 32 lanes participate (warp-collective); row addresses 16-byte aligned.
#include <cstring>

#include "internal.h"

namespace tcsim {
using namespace detail;

void ldmatrix(int num, uint32_t addr, uint32_t* regs, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  Cta& cta = *f.cta;
  struct Args {
    uint32_t addr;
    uint32_t* regs;
    int num;
  } args{addr, regs, num};
  collective("ldmatrix", &args, [&cta, num](Collective& c) {
    for (void* d : c.data)
      if (d && static_cast<Args*>(d)->num != num)
        fail_here("divergent warp at a .sync.aligned instruction", "ldmatrix with different .num in different lanes");
    // Matrix i's row r comes from the address lane 8*i + r supplied.
    uint32_t row_addr[32];
    for (int l = 0; l < 8 * num; ++l) {
      if (!c.data[size_t(l)]) fail_here("ldmatrix", "a lane that must supply a row address did not participate");
      row_addr[l] = static_cast<Args*>(c.data[size_t(l)])->addr;
      if (row_addr[l] % 16) fail_here("misaligned ldmatrix row", "row address " + hex(row_addr[l]) + " is not 16-byte aligned");
    }
    for (int l = 0; l < 32; ++l) {
      if (!c.data[size_t(l)]) continue;
      Args& a = *static_cast<Args*>(c.data[size_t(l)]);
      for (int j = 0; j < num; ++j)
        memcpy(&a.regs[j], smem_ptr(cta, row_addr[8 * j + l / 4] + 4 * uint32_t(l % 4), 4, "ldmatrix"), 4);
    }
  });
}

void mma_sync_m16n8k16_bf16(float* d, const uint32_t* a, const uint32_t* b, const float* c, SrcLoc at) {
  tick(at);
  if (timed()) model_spend(me(), model_warp_mma(*me().cta));
  struct Args {
    float* d;
    const uint32_t *a, *b;
    const float* c;
  } args{d, a, b, c};
  collective("mma.sync.m16n8k16", &args, [](Collective& col) {
    float A[16][16], B[16][8], C[16][8];
    auto lo = [](uint32_t r) { return f16_bits_to_float(uint16_t(r & 0xFFFF), true); };
    auto hi = [](uint32_t r) { return f16_bits_to_float(uint16_t(r >> 16), true); };
    for (int l = 0; l < 32; ++l) {
      if (!col.data[size_t(l)]) fail_here("mma.sync", "all 32 lanes must participate");
      const Args& x = *static_cast<Args*>(col.data[size_t(l)]);
      const int g = l / 4, t = l % 4;
      // Fragment layouts of PTX ISA §9.7.14.5.8 (m16n8k16, .bf16): A rows g / g+8, columns
      // 2t.. and 2t+8..; B rows (k) 2t.. and 2t+8.., column g; C/D rows g / g+8, columns 2t..
      for (int r = 0; r < 4; ++r) {
        const int row = g + 8 * (r % 2), colk = 2 * t + 8 * (r / 2);
        A[row][colk] = lo(x.a[r]);
        A[row][colk + 1] = hi(x.a[r]);
      }
      for (int r = 0; r < 2; ++r) {
        B[2 * t + 8 * r][g] = lo(x.b[r]);
        B[2 * t + 8 * r + 1][g] = hi(x.b[r]);
      }
      for (int r = 0; r < 4; ++r) C[g + 8 * (r / 2)][2 * t + r % 2] = x.c[r];
    }
    const auto t0 = Clock::now();
    float D[16][8];
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        float acc = 0.f;
        for (int k = 0; k < 16; ++k) acc += A[i][k] * B[k][j];
        D[i][j] = acc + C[i][j];
      }
    for (int l = 0; l < 32; ++l) {
      const Args& x = *static_cast<Args*>(col.data[size_t(l)]);
      const int g = l / 4, t = l % 4;
      for (int r = 0; r < 4; ++r) x.d[r] = D[g + 8 * (r / 2)][2 * t + r % 2];
    }
    g_stats.mmas++;
    g_stats.mma_flops += 2ull * 16 * 8 * 16;
    g_stats.mma_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  });
}

}  // namespace tcsim
