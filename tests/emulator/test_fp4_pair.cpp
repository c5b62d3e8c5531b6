// test_fp4_pair.cpp — the block-scaled MMA over a CTA pair (step 15's 2-SM form; common/sim/
// mma_block_scaled.cpp): tcgen05.cp.cta_group::2.32x128b.warpx4 and tcgen05.mma.cta_group::2
// .kind::mxf4nvf4.block_scale.block16, bit for bit against the exact product, and each rule a
// kernel can break failing with its diagnostic.
//
// A cluster of 2 CTAs of 192 threads. CTA v places (ordinary stores) its 128 rows of A, its N/2
// rows of B, the scale atom of its rows of A and the whole SFB atom of B's N rows, at the same
// offsets in both CTAs. The even CTA's thread 0 copies the scales to both TMEMs with cp.cta_group::2,
// issues `num_mma` pair MMAs (M = 256, K = 64 each) and commits with a multicast to both CTAs;
// every CTA reads its 128 rows of D back. The expected side is fp4_test_kernels.h's reference.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "fp4_test_kernels.h"

using namespace tcg_test;
using namespace tcg_test::fp4;

namespace {

enum class PairFault : uint32_t {
  kNone,
  kOddIssues,      // the odd CTA issues the pair MMA
  kSfbHalves,      // each CTA holds the scales of its own half of B only (the rest another value)
  kCpOneCta,       // the scale copies use .cta_group::1 beside a .cta_group::2 MMA
  kCommitLeader,   // the commit arrives on the even CTA's barrier only; the odd CTA waits on its own
  kNoPeerSfa,      // the odd CTA's SFA atom is never placed: its cp reads what nobody wrote (poison 0xFF)
};

struct PairCase {
  const uint8_t* a = nullptr;    // 256 x kbytes packed E2M1
  const uint8_t* b = nullptr;    // n x kbytes
  const uint8_t* sfa = nullptr;  // [v][j] 512-byte atoms of rows [128v, +128)
  const uint8_t* sfb = nullptr;  // [j][2] atoms (n <= 256)
  uint32_t n = 64, num_mma = 1, idesc = 0;
  PairFault fault = PairFault::kNone;
  float* out = nullptr;  // 256 x n
};

constexpr uint32_t kPA = 0, kPB = 16384, kPSfa = 32768, kPSfb = 34816, kPBars = 43008;
constexpr uint32_t kPairSmem = kPBars + 64 + tcg::kSmemAlignSlack;
constexpr uint32_t kCols = 512, kSfaCol = 256, kSfbCol = 272;

__global__ void fp4_pair_kernel(PairCase c) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  const uint32_t done = base + kPBars, slot = done + 8;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32, v = tcg::cluster_ctarank();
  const uint32_t kbytes = 32 * c.num_mma, n_per = c.n / 2, sfb_atoms = (c.n + 127) / 128;
  if (warp == 0) {
    tcg::tmem_alloc_2sm(slot, kCols);
    tcg::tmem_relinquish_alloc_permit_2sm();
  } else if (warp == 1 && tcg::elect_one_sync()) {
    tcg::mbarrier_init(done, 1);
    tcg::fence_mbarrier_init();
  }
  for (uint32_t i = threadIdx.x; i < 128 * kbytes; i += blockDim.x)
    smem[kPA + operand_offset(true, 128, i / kbytes, i % kbytes)] = c.a[(128 * v) * kbytes + i];
  for (uint32_t i = threadIdx.x; i < n_per * kbytes; i += blockDim.x)
    smem[kPB + operand_offset(true, n_per, i / kbytes, i % kbytes)] = c.b[(n_per * v) * kbytes + i];
  if (!(c.fault == PairFault::kNoPeerSfa && v == 1))
    for (uint32_t i = threadIdx.x; i < 512 * c.num_mma; i += blockDim.x) smem[kPSfa + i] = c.sfa[512 * c.num_mma * v + i];
  for (uint32_t i = threadIdx.x; i < 1024 * c.num_mma; i += blockDim.x) {
    // The atom's byte (r%32)*16 + (r/32)*4 + s holds row r: rows [v n/2, +n/2) are this CTA's half.
    const uint32_t r = (i % 512) % 16 / 4 * 32 + (i % 512) / 16 + 128 * (i / 512 % 2);
    const bool mine = r / n_per == v;
    smem[kPSfb + i] = (c.fault == PairFault::kSfbHalves && !mine && r < c.n) ? uint8_t(0x38) : c.sfb[i];
  }
  tcg::tcgen05_fence_before_thread_sync();
  tcg::cluster_sync();  // both CTAs' operands and scales, the barriers and the TMEM address are in place
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + kPBars + 8);
  const uint32_t issuer = c.fault == PairFault::kOddIssues ? 1 : 0;
  if (v == issuer && warp == 0 && tcg::elect_one_sync()) {
    for (uint32_t j = 0; j < c.num_mma; ++j) {
      const uint32_t sfa_t = tcg::tmem_offset(tmem, 0, kSfaCol + 4 * j);
      if (c.fault == PairFault::kCpOneCta) {
        tcg::tcgen05_cp_32x128b_warpx4(sfa_t, sf_desc(base + kPSfa + 512 * j));  // BUG: .cta_group::1
      } else {
        tcg::tcgen05_cp_32x128b_warpx4_2sm(sfa_t, sf_desc(base + kPSfa + 512 * j));
        for (uint32_t t = 0; t < sfb_atoms; ++t)
          tcg::tcgen05_cp_32x128b_warpx4_2sm(tcg::tmem_offset(tmem, 0, kSfbCol + 8 * j + 4 * t),
                                             sf_desc(base + kPSfb + 512 * (2 * j + t)));
      }
    }
    const uint32_t idesc = c.idesc ? c.idesc : tcg::make_idesc_mxf4nvf4(256, c.n);
    for (uint32_t j = 0; j < c.num_mma; ++j)
      tcg::mma_mxf4nvf4_block16_ss_2sm(tmem, tcg::make_smem_desc(base + kPA + 32 * j, 16, 1024, tcg::Layout::kSwizzle128B),
                                       tcg::make_smem_desc(base + kPB + 32 * j, 16, 1024, tcg::Layout::kSwizzle128B), idesc,
                                       tcg::tmem_offset(tmem, 0, kSfaCol + 4 * j),
                                       tcg::tmem_offset(tmem, 0, kSfbCol + 8 * j), j > 0);
    if (c.fault == PairFault::kCommitLeader) tcg::mma_commit_2sm(done);  // BUG: the odd CTA's barrier never completes
    else tcg::mma_commit_2sm_multicast(done, 0b11);
  }
  tcg::mbarrier_wait_parity(done, 0);
  tcg::tcgen05_fence_after_thread_sync();
  if (warp < 4) {
    const uint32_t row = warp * 32 + lane;  // layout A: this CTA's row in lane `row`, all N columns
    for (uint32_t col = 0; col < c.n; col += 8) {
      uint32_t r[8];
      tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(tmem, warp * 32, col), r);
      tcg::tmem_wait_ld(r);
      memcpy(&c.out[(128 * v + row) * c.n + col], r, sizeof r);
    }
  }
  tcg::tcgen05_fence_before_thread_sync();
  tcg::cluster_sync();  // the pair's MMAs are done with both CTAs before either frees TMEM or exits
  tcg::tcgen05_fence_after_thread_sync();
  if (warp == 0) tcg::tmem_dealloc_2sm(tmem, kCols);
}

// Two stacked make_data(n, num_mma) halves: A rows [0, 128) from d0, [128, 256) from d1 (its own
// codes and scales), B and SFB from d0. The reference is d0's and d1's rows against B.
struct PairData {
  Fp4Data d0, d1;
  std::vector<uint8_t> a, sfa;
  PairData(uint32_t n, uint32_t num_mma) : d0(make_data(n, num_mma, 11)), d1(make_data(n, num_mma, 29)) {
    d1.codes_b = d0.codes_b, d1.b = d0.b, d1.sb = d0.sb, d1.sfb = d0.sfb;  // one B for both halves
    a = d0.a, a.insert(a.end(), d1.a.begin(), d1.a.end());
    sfa = d0.sfa, sfa.insert(sfa.end(), d1.sfa.begin(), d1.sfa.end());
  }
  std::vector<float> expected() const {
    std::vector<float> e = reference(d0), e1 = reference(d1);
    e.insert(e.end(), e1.begin(), e1.end());
    return e;
  }
};

std::vector<float> run_pair(PairCase c, const PairData& d, uint64_t seed = 1) {
  std::vector<float> out(256 * d.d0.n, NAN);
  c.a = d.a.data();
  c.b = d.d0.b.data();
  c.sfa = d.sfa.data();
  c.sfb = d.d0.sfb.data();
  c.n = d.d0.n;
  c.num_mma = d.d0.num_mma;
  c.out = out.data();
  SimOptions opt(seed);
  tcg::launch_kernel(fp4_pair_kernel, tcg::LaunchDims{dim3(2), dim3(192), kPairSmem, dim3(2)}, nullptr, c);
  return out;
}

std::string pair_error(PairCase c, const PairData& d) {
  return sim_error([&] { run_pair(c, d); });
}

}  // namespace

TEST_CASE("fp4 pair: is_valid_mxf4_shape_cta2 and the M = 256 idesc (CUTLASS SM100_MMA_MXF4_2x1SM_SS)") {
  CHECK(tcg::is_valid_mxf4_shape_cta2(256, 16));
  CHECK(tcg::is_valid_mxf4_shape_cta2(256, 256));
  CHECK(tcg::is_valid_mxf4_shape_cta2(128, 128));
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta2(256, 8));    // N % 16
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta2(256, 72));
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta2(256, 272));
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta2(64, 64));
  // M >> 4 = 16 in bits 24-28 (bit 28), N >> 3 = 16 in bits 17-22, E2M1 = 1 in 7-9 and 10-12:
  // hand-encoded from PTX ISA §9.7.16.4.2 Table 44 (CUTLASS's make_instr_desc_block_scaled writes
  // m_dim = M >> 4 for the 2x1SM atom too; tests/unit/test_cutlass.cpp checks it bit for bit).
  CHECK(tcg::make_idesc_mxf4nvf4(256, 128) == 0x10200480u);
  CHECK(tcg::decode_idesc_block_scaled(tcg::make_idesc_mxf4nvf4(256, 128)).m == 256);
}

TEST_CASE("fp4 pair: cp.cta_group::2 and the pair MMA, bit for bit, in both CTAs' TMEM") {
  for (uint32_t n : {32u, 128u, 256u}) {
    CAPTURE(n);
    const PairData d(n, 2);
    const std::vector<float> exact = d.expected();
    REQUIRE(exact_in_fp32(d.d0, reference(d.d0)));
    REQUIRE(exact_in_fp32(d.d1, reference(d.d1)));
    std::vector<float> got;
    const std::string err = sim_error([&] { got = run_pair(PairCase{}, d); });
    INFO(err);
    REQUIRE(err.empty());
    CHECK(memcmp(got.data(), exact.data(), 4 * exact.size()) == 0);
  }
}

TEST_CASE("fp4 pair: each rule a kernel can break is reported") {
  const PairData d(64, 1);
  PairCase c;
  SUBCASE("the odd CTA issues the MMA") {
    c.fault = PairFault::kOddIssues;
    CHECK(contains(pair_error(c, d), "issued by the odd CTA of the pair"));
  }
  SUBCASE("each CTA holds only its half of SFB") {
    c.fault = PairFault::kSfbHalves;
    CHECK(contains(pair_error(c, d), "the pair's B scale factors differ"));
  }
  SUBCASE("cp.cta_group::1 beside a pair MMA") {
    c.fault = PairFault::kCpOneCta;
    CHECK(contains(pair_error(c, d), "mixed .cta_group in one kernel"));
  }
  SUBCASE("the commit reaches the even CTA only") {
    c.fault = PairFault::kCommitLeader;
    CHECK(contains(pair_error(c, d), "deadlock"));
  }
  SUBCASE("the odd CTA's SFA atom never placed") {
    c.fault = PairFault::kNoPeerSfa;
    // The peer's copy read the peer's own (never written, 0xFF) shared memory, not the leader's.
    const std::string e = pair_error(c, d);
    CHECK(contains(e, "bad UE4M3 scale factor"));
    CHECK(contains(e, "scales of A row 0 (TMEM lane 0 + 32w, column 256 of CTA (1,0,0) rank 1)"));
  }
  SUBCASE("N not a multiple of 16") {
    c.idesc = tcg::make_idesc_mxf4nvf4(256, 72);
    CHECK(contains(pair_error(c, d), "needs M in {128, 256} (across the pair) and N a multiple of 16"));
  }
  SUBCASE("M = 128 over the pair (layout B) is not modelled") {
    c.idesc = tcg::make_idesc_mxf4nvf4(128, 64);
    CHECK(contains(pair_error(c, d), "not modelled for kind::mxf4nvf4"));
  }
  SUBCASE("M = 128 with cta_group::1's idesc shape check still applies to one CTA") {
    c.idesc = tcg::make_idesc_mxf4nvf4(64, 64);
    CHECK(contains(pair_error(c, d), "invalid MMA shape"));
  }
}
