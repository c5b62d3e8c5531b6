// test_residency.cpp — CTAs sharing SMs in the emulator (common/sim/launch.cpp,
// tmem.cpp): where CTAs become resident, and the TMEM allocator the CTAs of one SM share.
//
// Each test is a small real kernel written with the kernel_common.cuh wrappers only, launched in
// the emulator with a chosen number of SMs. What is checked, and why it matters:
//  * tcgen05.alloc does not always return column 0 (the allocator hands out whatever block is
//    free; on a B200 a second CTA on the SM gets other columns), so a kernel that assumes 0 fails;
//  * several CTAs on one SM share its 512 columns: an allocation waits until a co-resident CTA
//    frees enough, and a correct kernel still finishes under every seed;
//  * two CTAs that each hold half the TMEM and want more deadlock, and the report names who holds
//    which columns;
//  * launch limits (a cluster needs as many SMs as it has CTAs).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace {

using tcg_test::contains;
using tcg_test::sim_error;

// tcg_test::SimOptions (the seed) plus the SMs of the emulated GPU, for one scope.
struct ResidencyOptions : tcg_test::SimOptions {
  ResidencyOptions(uint64_t seed, int sms, int ctas_per_sm = 0) : tcg_test::SimOptions(seed) {
    tcsim::Options o = tcsim::options();
    o.num_sms = sms;
    o.ctas_per_sm = ctas_per_sm;
    tcsim::set_options(o);
  }
};

// Warp 0 allocates `ncols` (twice if `second` > 0: `ncols`, then `second` more), records the
// column it got, runs a few barrier rounds so that other CTAs interleave, frees and exits.
__global__ void alloc_kernel(uint32_t* cols, uint32_t ncols, uint32_t second, int rounds) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t slot = tcg::smem_addr(smem), slot2 = slot + 4;
  if (threadIdx.x / 32 == 0) {
    tcg::tmem_alloc(slot, ncols);
    if (second) tcg::tmem_alloc(slot2, second);
  }
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t taddr = *reinterpret_cast<volatile uint32_t*>(smem);
  if (threadIdx.x == 0) cols[blockIdx.x] = tcg::tmem_column(taddr);
  for (int i = 0; i < rounds; ++i) __syncthreads();
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (threadIdx.x / 32 == 0) {
    if (second) tcg::tmem_dealloc(*reinterpret_cast<volatile uint32_t*>(smem + 4), second);
    tcg::tmem_dealloc(taddr, ncols);
  }
}

void run_alloc(std::vector<uint32_t>& cols, uint32_t ncols, uint32_t second = 0, int rounds = 4,
               uint32_t smem = 2048) {
  tcg::launch_kernel(alloc_kernel, tcg::LaunchDims{dim3(unsigned(cols.size())), dim3(64), smem}, nullptr,
                     cols.data(), ncols, second, rounds);
}

// Reads TMEM column 0 instead of the allocated address: the learner's bug.
__global__ void column_zero_kernel() {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t slot = tcg::smem_addr(smem);
  if (threadIdx.x / 32 == 0) tcg::tmem_alloc(slot, 128);
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  const uint32_t taddr = tcg::tmem_addr(0, 0);  // BUG on purpose: not *slot
  uint32_t r[8];
  tcg::tmem_ld_32x32b_x8(tcg::tmem_offset(taddr, 32 * (threadIdx.x / 32), 0), r);
  tcg::tmem_wait_ld(r);
  tcg::tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcg::tcgen05_fence_after_thread_sync();
  if (threadIdx.x / 32 == 0) tcg::tmem_dealloc(*reinterpret_cast<volatile uint32_t*>(smem), 128);
}

}  // namespace

// Guards: an allocator that always answers column 0 would let "TMEM column 0" kernels pass.
TEST_CASE("residency: tcgen05.alloc returns seeded free blocks, not always column 0") {
  std::set<uint32_t> seen;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    ResidencyOptions opt(seed, 148);
    std::vector<uint32_t> cols(1, 999);
    CHECK(sim_error([&] { run_alloc(cols, 128); }) == "");
    CHECK(cols[0] % 128 == 0);  // a block aligned to its size
    CHECK(cols[0] < 512);
    seen.insert(cols[0]);
  }
  CHECK(seen.size() >= 2);
}

TEST_CASE("residency: a kernel that uses TMEM column 0 instead of its allocation is reported") {
  int caught = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    ResidencyOptions opt(seed, 148);
    const std::string err = sim_error([] {
      tcg::launch_kernel(column_zero_kernel, tcg::LaunchDims{dim3(1), dim3(128), 1024}, nullptr);
    });
    if (!err.empty()) {
      CHECK(contains(err, "TMEM access outside the allocation"));
      ++caught;
    }
  }
  CHECK(caught >= 1);
}

// Guards: CTAs on one SM must share its 512 columns (an allocator per CTA would hand both CTAs
// the same columns), allocations must wait rather than fail, and a correct kernel with several
// CTAs per SM must pass under every seed.
TEST_CASE("residency: CTAs on one SM share TMEM; an allocation waits until another CTA frees columns") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    ResidencyOptions opt(seed, /*sms=*/1);
    std::vector<uint32_t> cols(6, 999);
    INFO("seed " << seed);
    CHECK(sim_error([&] { run_alloc(cols, 512); }) == "");  // each takes all 512: strictly one at a time
    for (uint32_t c : cols) CHECK(c == 0);
    std::vector<uint32_t> half(6, 999);
    CHECK(sim_error([&] { run_alloc(half, 256); }) == "");
    for (uint32_t c : half) CHECK((c == 0 || c == 256));
  }
  // With one CTA per SM nothing is shared, and everything still runs.
  ResidencyOptions opt(3, 2, /*ctas_per_sm=*/1);
  std::vector<uint32_t> cols(5, 999);
  CHECK(sim_error([&] { run_alloc(cols, 512); }) == "");
}

// Guards: a report for TMEM waits must say who holds the columns.
TEST_CASE("residency: two CTAs that each hold half of TMEM and want more deadlock, with the holders named") {
  int deadlocks = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    ResidencyOptions opt(seed, /*sms=*/1);
    std::vector<uint32_t> cols(2, 999);
    const std::string err = sim_error([&] { run_alloc(cols, 256, /*second=*/256); });
    if (err.empty()) continue;  // one CTA got both halves first: no deadlock under this schedule
    INFO(err);
    CHECK(contains(err, "tcsim: deadlock"));
    CHECK(contains(err, "waits for free TMEM"));
    CHECK(contains(err, "holds [0, 256)"));
    CHECK(contains(err, "holds [256, 512)"));
    ++deadlocks;
  }
  CHECK(deadlocks >= 1);
}

TEST_CASE("residency: launch limits") {
  {
    ResidencyOptions opt(1, /*sms=*/1);
    std::vector<uint32_t> cols(2, 0);
    const std::string err = sim_error([&] {
      tcg::launch_kernel(alloc_kernel, tcg::LaunchDims{dim3(2), dim3(64), 2048, dim3(2, 1, 1)}, nullptr, cols.data(),
                         32u, 0u, 0);
    });
    CHECK(contains(err, "needs 2 SMs"));
  }
  {
    ResidencyOptions opt(1, 148);
    std::vector<uint32_t> cols(1, 0);
    const std::string err = sim_error([&] { run_alloc(cols, 32, 0, 0, 232448 + 1024); });
    CHECK(contains(err, "232448"));
  }
}
