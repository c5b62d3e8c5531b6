// tests/emulator/test_tma_store.cpp — the TMA store (cp.async.bulk.tensor global <- shared), bulk
// groups and the generic -> async proxy rule (common/sim/tma_store.cpp), with small kernels:
//  * where every byte goes: the staging buffer is written with st.shared in the layout a TMA
//    load of the same box would leave (swizzle none / 32B / 64B / 128B), the store must put
//    element (row, col) of the box at C[c1 + row][c0 + col], and nothing outside the tensor:
//    boxes clipped at the high edges and entirely outside; negative coordinates refused (an H100
//    traps on them, make gpu-check);
//  * bulk groups: wait_group.read N leaves the N newest groups reading (their buffers may not be
//    written yet, the older ones may); the global writes are asynchronous (a lazy seed shows the
//    old bytes until wait_group 0);
//  * the proxy rule: a generic store not followed by fence.proxy.async in its thread, or fenced
//    but not synchronised with the issuing thread, is reported when the store is issued;
//  * reuse: writing a buffer before the issuing thread's wait_group.read covered its store, or
//    after it without synchronising with that thread, is reported;
//  * exit: a store never committed or never waited for, a misaligned or out-of-bounds source;
//  * bounds: the rows written lie in C's registered allocation;
//  * timing: the model's store times, worked out by hand from its parameters.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"

namespace {

using tcg_test::contains;
using tcg_test::sim_error;
using Seed = tcg_test::SimOptions;

constexpr uint16_t kSentinel = 0xABCD;  // what C holds where the store must not write

// The value of box element (row, col) in the tests: distinct for every element of a box.
__host__ __device__ inline uint16_t box_value(uint32_t row, uint32_t col) { return uint16_t(0x1000 + row * 256 + col); }

// What the kernel does wrong (or right), one case per test.
enum Mode : int {
  kCorrect = 0,
  kNoFence,           // generic stores, no fence.proxy.async
  kFenceNoSync,       // every lane fences, but only elect.sync (no memory ordering) before the issue
  kReuseBeforeWait,   // the warp rewrites the buffer right after the store, no wait
  kReuseNoSyncAfterWait,  // lane 0 waits, the others rewrite after elect.sync only
  kNoWaitAtExit,      // committed, never waited for
  kNoCommit,          // issued, never committed
  kPeekGlobal,        // lane 0 reads C after wait_group.read only (the writes may be pending)
  kPeekAfterWait,     // lane 0 reads C after wait_group 0
};

// One warp writes the box's staging image (each lane a share of the 16-byte pieces, in the
// layout a TMA load of the box would leave: tcg::swizzle_addr on the absolute address), then
// lane 0 stores it to C at (c0, c1).
__global__ void store_box_kernel(const __grid_constant__ CUtensorMap map, uint32_t box0, uint32_t box1, uint32_t span,
                                 int c0, int c1, int mode, const uint16_t* peek, uint16_t* peeked, uint32_t src_offset) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t buf = tcg::smem_addr(smem) + src_offset;
  const uint32_t lane = threadIdx.x, row_bytes = box0 * 2, pieces = box1 * row_bytes / 16;
  auto write_image = [&](uint16_t salt) {
    for (uint32_t p = lane; p < pieces; p += 32) {
      const uint32_t row = p * 16 / row_bytes, col = (p * 16 % row_bytes) / 2;
      uint32_t v[4];
      for (int i = 0; i < 4; ++i)
        v[i] = uint32_t(uint16_t(box_value(row, col + 2 * i) ^ salt)) |
               uint32_t(uint16_t(box_value(row, col + 2 * i + 1) ^ salt)) << 16;
      const uint32_t lin = buf + row * row_bytes + col * 2;
      tcg::st_shared_v4(span ? tcg::swizzle_addr(lin, span) : lin, v[0], v[1], v[2], v[3]);
    }
  };
  if (src_offset == 0) write_image(0);  // the bad-source cases leave it: the store's own checks must fire
  if (mode != kNoFence) tcg::fence_proxy_async_shared_cta();
  if (mode == kFenceNoSync) (void)tcg::elect_one_sync();  // all lanes have written, but no synchronisation
  else __syncwarp();
  if (lane == 0) {
    tcg::tma_store_2d(&map, buf, c0, c1);
    if (mode != kNoCommit) tcg::bulk_commit_group();
  }
  if (mode == kReuseBeforeWait) {
    __syncwarp();
    write_image(0x5555);
  }
  if (mode == kReuseNoSyncAfterWait) {
    if (lane == 0) tcg::bulk_wait_group_read<0>();
    (void)tcg::elect_one_sync();
    write_image(0x5555);
  }
  if (lane == 0 && (mode == kPeekGlobal || mode == kPeekAfterWait)) {
    if (mode == kPeekAfterWait) tcg::bulk_wait_group<0>();
    else tcg::bulk_wait_group_read<0>();
    *peeked = *peek;  // a plain global load of one element the store writes
  }
  if (lane == 0 && mode != kNoWaitAtExit && mode != kNoCommit && mode != kPeekAfterWait && mode != kPeekGlobal)
    tcg::bulk_wait_group_read<0>();
}

// A rows x cols BF16 matrix C filled with the sentinel, with kGuardRows rows of guard memory
// (also the sentinel) before and after it: a store that wrote outside the tensor shows there.
constexpr int kGuardRows = 40;
struct Plane {
  int rows, cols;
  std::vector<uint16_t> storage;
  uint16_t* v;  // C[0][0]
  // Only C is registered with the emulator (common/sim/global_memory.cpp), not the guard rows: a
  // store row outside the tensor's bounds is reported before it could reach them.
  tcsim::GlobalAllocation registered_c;
  Plane(int r, int c)
      : rows(r), cols(c), storage(size_t(r + 2 * kGuardRows) * c, kSentinel), v(storage.data() + size_t(kGuardRows) * c),
        registered_c(v, size_t(r) * c * 2, "C") {}
};

tcg::TiledMap store_map(Plane& c, uint32_t box0, uint32_t box1, tcg::TmaSwizzle sw) {
  tcg::TiledMap t;
  t.rank = 2;
  t.base = c.v;
  t.dims[0] = uint64_t(c.cols);
  t.dims[1] = uint64_t(c.rows);
  t.strides[0] = uint64_t(c.cols) * 2;
  t.box[0] = box0;
  t.box[1] = box1;
  t.swizzle = sw;
  return t;
}

std::string run_store(Plane& c, uint32_t box0, uint32_t box1, tcg::TmaSwizzle sw, int c0, int c1, int mode = kCorrect,
                      const uint16_t* peek = nullptr, uint16_t* peeked = nullptr, uint32_t src_offset = 0) {
  const CUtensorMap map = tcg::make_tensor_map(store_map(c, box0, box1, sw));
  uint16_t dummy = 0;
  return sim_error([&] {
    tcg::launch_kernel(store_box_kernel, tcg::LaunchDims{dim3(1), dim3(32), 64 * 1024 + 1024}, nullptr, map, box0, box1,
                       tcg::tma_swizzle_span(sw), c0, c1, mode, peek ? peek : c.v, peeked ? peeked : &dummy,
                       src_offset);
  });
}

// Every element of C and of the guards: the box's value inside the box and the tensor, the
// sentinel elsewhere.
size_t count_wrong(const Plane& c, uint32_t box0, uint32_t box1, int c0, int c1, std::string* first) {
  size_t wrong = 0;
  for (int r = -kGuardRows; r < c.rows + kGuardRows; ++r)
    for (int k = 0; k < c.cols; ++k) {
      const bool in_box = r >= 0 && r < c.rows && r >= c1 && r < c1 + int(box1) && k >= c0 && k < c0 + int(box0);
      const uint16_t want = in_box ? box_value(uint32_t(r - c1), uint32_t(k - c0)) : kSentinel;
      const uint16_t got = c.v[ptrdiff_t(r) * c.cols + k];
      if (got != want && wrong++ == 0)
        *first = "C[" + std::to_string(r) + "][" + std::to_string(k) + "] = " + tcg_test::hex(got) + ", expected " +
                 tcg_test::hex(want);
    }
  return wrong;
}

}  // namespace

// Guards: the store un-swizzles exactly as the load swizzles (same address function), and clips
// at both edges of both dimensions without writing outside the tensor.
TEST_CASE("TMA store: every element lands at its coordinates, every swizzle mode, clipped at the tensor's bounds") {
  using S = tcg::TmaSwizzle;
  struct Case {
    const char* name;
    S sw;
    uint32_t box0, box1;
    int c0, c1;
  };
  const Case cases[] = {
      {"128B, interior", S::k128B, 64, 32, 8, 4},
      {"128B, clipped at both high edges", S::k128B, 64, 32, 64, 24},  // cols 64..127 of 104, rows 24..55 of 40
      {"64B, clipped", S::k64B, 32, 16, 80, 30},
      {"32B, interior", S::k32B, 16, 8, 16, 8},
      {"none, 16-byte rows, clipped", S::kNone, 8, 16, 96, 32},
      {"none, 128-byte rows (no swizzle)", S::kNone, 64, 8, 0, 0},
      {"128B, box entirely past the end", S::k128B, 64, 32, 128, 64},
  };
  for (uint64_t seed : {1, 2, 4}) {
    Seed s(seed);
    for (const Case& k : cases) {
      Plane c(40, 104);
      INFO(k.name << ", seed " << seed);
      CHECK(run_store(c, k.box0, k.box1, k.sw, k.c0, k.c1) == "");
      std::string first;
      const size_t wrong = count_wrong(c, k.box0, k.box1, k.c0, k.c1, &first);
      INFO(first);
      CHECK(wrong == 0);
    }
  }
}

// Guards: the writes to global memory are asynchronous, and wait_group (without .read) completes them.
TEST_CASE("TMA store: the global writes are asynchronous; wait_group 0 completes them, wait_group.read 0 need not") {
  int stale = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Seed s(seed);
    Plane c(40, 104);
    uint16_t seen = 0;
    const uint16_t* elem = &c.v[4 * 104 + 8];  // box element (0, 0) at (c0, c1) = (8, 4)
    CHECK(run_store(c, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kPeekAfterWait, elem, &seen) == "");
    CHECK(seen == box_value(0, 0));  // after wait_group 0: written, under every seed
    Plane d(40, 104);
    const uint16_t* elem_d = &d.v[4 * 104 + 8];
    CHECK(run_store(d, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kPeekGlobal, elem_d, &seen) == "");
    stale += seen == kSentinel;
    std::string first;
    CHECK(count_wrong(d, 64, 32, 8, 4, &first) == 0);  // written by the end of the kernel anyway
  }
  MESSAGE("seeds (of 8) where C still held the old bytes after wait_group.read 0: " << stale);
  CHECK(stale >= 1);
}

namespace {
// One thread issues three stores from three 4 KiB buffers, one group each, then wait_group.read 1:
// the two older buffers are free again, the newest one is not. `rewrite` names the buffer the
// warp then writes (after a __syncwarp).
__global__ void three_groups_kernel(const __grid_constant__ CUtensorMap map, int rewrite) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  for (int b = 0; b < 3; ++b) {
    for (uint32_t p = threadIdx.x; p < 256; p += 32) tcg::st_shared_v4(base + b * 4096 + p * 16, b, p, 0, 0);
    tcg::fence_proxy_async_shared_cta();
    __syncwarp();
    if (threadIdx.x == 0) {
      tcg::tma_store_2d(&map, base + b * 4096, 0, 32 * b);
      tcg::bulk_commit_group();
    }
  }
  if (threadIdx.x == 0) tcg::bulk_wait_group_read<1>();
  __syncwarp();
  tcg::st_shared_v4(base + rewrite * 4096 + threadIdx.x * 16, 7, 7, 7, 7);
  if (threadIdx.x == 0) tcg::bulk_wait_group_read<0>();
}
}  // namespace

// Guards: wait_group.read N counts groups from the newest (a wrong count would free a buffer too early or hang).
TEST_CASE("TMA store: wait_group.read N frees all but the N newest groups' buffers") {
  std::vector<uint16_t> c(size_t(96) * 64, kSentinel);
  tcg::TiledMap t;
  t.base = c.data();
  t.dims[0] = 64;
  t.dims[1] = 96;
  t.strides[0] = 128;
  t.box[0] = 64;
  t.box[1] = 32;
  t.swizzle = tcg::TmaSwizzle::k128B;
  const CUtensorMap map = tcg::make_tensor_map(t);
  const auto reg_c = tcg_test::registered(c, "C");
  for (uint64_t seed : {1, 2, 4}) {
    Seed s(seed);
    for (int b = 0; b < 2; ++b) {
      INFO("buffer " << b << " (older than the newest), seed " << seed);
      CHECK(sim_error([&] { tcg::launch_kernel(three_groups_kernel, tcg::LaunchDims{dim3(1), dim3(32), 13 * 1024}, nullptr, map, b); }) ==
            "");
    }
    const std::string err =
        sim_error([&] { tcg::launch_kernel(three_groups_kernel, tcg::LaunchDims{dim3(1), dim3(32), 13 * 1024}, nullptr, map, 2); });
    INFO(err);
    CHECK(contains(err, "shared memory overwritten under a TMA store"));
    CHECK(contains(err, "before a cp.async.bulk.wait_group.read of that thread covered the store"));
  }
}

TEST_CASE("TMA store: generic stores need fence.proxy.async, and a synchronisation after it, before the store") {
  for (uint64_t seed : {1, 2, 4}) {
    Seed s(seed);
    INFO("seed " << seed);
    Plane c(40, 104);
    std::string err = run_store(c, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kNoFence);
    INFO(err);
    CHECK(contains(err, "missing fence.proxy.async"));
    CHECK(contains(err, "fence.proxy.async.shared::cta"));
    Plane d(40, 104);
    err = run_store(d, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kFenceNoSync);
    INFO(err);
    CHECK(contains(err, "TMA store source not ordered after its writer"));
  }
}

TEST_CASE("TMA store: a staging buffer rewritten before wait_group.read, or without synchronising after it, is reported") {
  for (uint64_t seed : {1, 2, 4}) {
    Seed s(seed);
    INFO("seed " << seed);
    Plane c(40, 104);
    std::string err = run_store(c, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kReuseBeforeWait);
    INFO(err);
    CHECK(contains(err, "shared memory overwritten under a TMA store"));
    Plane d(40, 104);
    err = run_store(d, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kReuseNoSyncAfterWait);
    INFO(err);
    CHECK(contains(err, "the wait does not happen before this write"));
  }
}

TEST_CASE("TMA store: exiting before the store is committed and waited for, a bad source, negative coordinates") {
  Seed s(1);
  Plane c(40, 104);
  std::string err = run_store(c, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kNoWaitAtExit);
  INFO(err);
  CHECK(contains(err, "TMA store not waited for"));
  CHECK(contains(err, "not covered by a cp.async.bulk.wait_group"));
  err = run_store(c, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kNoCommit);
  INFO(err);
  CHECK(contains(err, "never committed"));
  for (auto [c0, c1] : {std::pair<int, int>{-8, 4}, {8, -1}, {-64, -32}}) {
    Plane d(40, 104);
    err = run_store(d, 64, 32, tcg::TmaSwizzle::k128B, c0, c1, kCorrect);
    INFO(err);
    CHECK(contains(err, "TMA store at a negative coordinate"));
  }
  err = run_store(c, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kCorrect, nullptr, nullptr, /*src_offset=*/512);
  INFO(err);
  CHECK(contains(err, "TMA source not aligned to its swizzle repeat"));
  err = run_store(c, 64, 32, tcg::TmaSwizzle::k128B, 8, 4, kCorrect, nullptr, nullptr, /*src_offset=*/62 * 1024);
  INFO(err);
  CHECK(contains(err, "shared memory out of bounds"));
}

// The rows a TMA store writes are checked against the allocation, as its loads are: a box past
// the tensor's edge is clipped (no access), but a tensor map that describes more rows than its
// buffer holds writes past the buffer's end, which compute-sanitizer reports on a GPU.
TEST_CASE("TMA store: a tensor map larger than its buffer is reported at the store") {
  Seed s(1);
  Plane c(40, 104);
  tcg::TiledMap t = store_map(c, 64, 32, tcg::TmaSwizzle::k128B);
  t.dims[1] = 48;  // 8 rows more than C (the guard rows lie there, unregistered)
  const CUtensorMap map = tcg::make_tensor_map(t);
  uint16_t dummy = 0;
  const auto launch = [&](int c1) {
    return sim_error([&] {
      tcg::launch_kernel(store_box_kernel, tcg::LaunchDims{dim3(1), dim3(32), 64 * 1024 + 1024}, nullptr, map, 64u, 32u,
                         tcg::tma_swizzle_span(tcg::TmaSwizzle::k128B), 8, c1, int(kCorrect), c.v, &dummy, 0u);
    });
  };
  CHECK(launch(0) == "");  // rows 0-31: inside C
  CHECK(c.v[8] == box_value(0, 0));
  const std::string err = launch(16);  // rows 16-47: rows 40-47 lie past C's end
  INFO(err);
  CHECK(contains(err, "tcsim: global memory access out of bounds"));
  CHECK(contains(err, "store; a row of the box, written through the tensor map"));
  CHECK(contains(err, "C"));
}


// Guards: the timing model charges a TMA store as one store of its in-bounds sectors on the SM's
// store path and the chip's L2 write path (timing.cpp, model_tma_store), and the issuing thread's
// wait_group 0 waits for it. C is 64 x 64 BF16 with 128-byte rows, 128-byte aligned; one 64 x 32
// box at row 0: 32 rows of 128 bytes = 128 full sectors in 32 lines. The SM's path (32 B per cycle
// at 1.86 GHz) takes 4096 / 32 / 1.86 = 68.82 ns, the chip's 32 / 382 + 128 / 261 = 0.57 ns. At
// column 8 each row starts 16 bytes into a sector: 3 full + 2 partial sectors (2 each) = 7 units
// of 32 bytes per row, 7 / 4 of the aligned cost. A box entirely outside C writes nothing and is
// charged nothing; the waiting thread's wake-up is the same in all three, and the two instructions
// it issues between the store and its wait (commit_group, wait_group: 1 cycle each) overlap the
// store, so the difference is the SM's share less 2 cycles.
TEST_CASE("TMA store: the timing model charges the box's sectors on the SM's store path") {
  const tcg_test::ModelScope model(/*skip_math=*/false, /*trace=*/false);
  Seed s(1);
  std::vector<uint16_t> raw(64 * 64 + 64, kSentinel);
  uint16_t* c = raw.data() + (128 - reinterpret_cast<uintptr_t>(raw.data()) % 128) % 128 / 2;
  const tcsim::GlobalAllocation reg(c, 64 * 64 * 2, "C");
  tcg::TiledMap t;
  t.rank = 2;
  t.base = c;
  t.dims[0] = t.dims[1] = 64;
  t.strides[0] = 128;
  t.box[0] = 64;
  t.box[1] = 32;
  t.swizzle = tcg::TmaSwizzle::k128B;
  const CUtensorMap map = tcg::make_tensor_map(t);
  uint16_t dummy = 0;
  const auto model_ns = [&](int c0, int c1) {
    const std::string err = sim_error([&] {
      tcg::launch_kernel(store_box_kernel, tcg::LaunchDims{dim3(1), dim3(32), 64 * 1024 + 1024}, nullptr, map, 64u, 32u,
                         tcg::tma_swizzle_span(tcg::TmaSwizzle::k128B), c0, c1, int(kCorrect), c, &dummy, 0u);
    });
    REQUIRE(err == "");
    return tcsim::last_stats().model_ns;
  };
  const double aligned = model_ns(0, 0), offset = model_ns(8, 0), outside = model_ns(64, 0);
  CHECK(tcsim::model_param("global store rate of one SM") == 32);
  const double overlap = 2 / 1.86;
  CHECK(aligned - outside == doctest::Approx(4096 / 32 / 1.86 - overlap).epsilon(1e-4));
  // At column 8 the box's last 8 columns are clipped: 112 bytes per row, sectors 16+32+32+32 bytes.
  CHECK(offset - outside == doctest::Approx(32 * (3 + 2.0) * 32 / 32 / 1.86 - overlap).epsilon(1e-4));
}

// ============================================================================ timing
namespace {
// One warp writes three 4 KiB staging buffers; lane 0 stores them back to back (the third box
// half past the right edge of C), then waits for their reads.
__global__ void three_stores_kernel(const __grid_constant__ CUtensorMap map) {
  uint8_t* smem = tcg::aligned_smem_base();
  const uint32_t base = tcg::smem_addr(smem);
  for (uint32_t p = threadIdx.x; p < 3 * 256; p += 32) tcg::st_shared_v4(base + p * 16, p, 0, 0, 0);
  tcg::fence_proxy_async_shared_cta();
  __syncwarp();
  if (threadIdx.x == 0) {
    tcg::tma_store_2d(&map, base, 0, 0);
    tcg::tma_store_2d(&map, base + 4096, 0, 32);
    tcg::tma_store_2d(&map, base + 8192, 32, 64);  // columns 32..95 of 64: half clipped
    tcg::bulk_commit_group();
    tcg::bulk_wait_group_read<0>();
  }
}
}  // namespace

// The model (common/sim/timing.cpp, model_tma_store): a store's in-bounds 32-byte sectors go
// through the SM's store path at the parameter "global store rate of one SM", 32 B/cycle at
// 1.86 GHz, one store after the other; it completes when the path has taken them. So, from the
// first store's issue: a 4 KiB box (32 rows x 128 B = 128 whole sectors) ends after
// 4096 / 32 = 128 cycles = 68.817 ns, the second after 137.634 ns, the half-clipped third
// (32 x 64 B = 2048 B) after 137.634 + 34.409 = 172.043 ns. (The chip's L2 write path: 32 lines and
// 128 sectors per box at 382 lines/ns and 261 sectors/ns = 0.57 ns each, hidden.)
TEST_CASE("TMA store timing: in-bounds sectors through the SM's store path, one store after another") {
  const std::string table = tcsim::model_parameters_markdown();
  REQUIRE_MESSAGE(contains(table, "| global store rate of one SM | 32 | B/cycle |"),
                  "the store-rate parameter changed: update the expected times below");
  REQUIRE(contains(table, "| SM clock | 1.86 | GHz |"));
  std::vector<uint16_t> c(size_t(96) * 64 + 512, kSentinel);  // C from a 1024-byte boundary: rows = whole sectors
  uint16_t* c0 = c.data() + (1024 - reinterpret_cast<uintptr_t>(c.data()) % 1024) % 1024 / 2;
  const tcsim::GlobalAllocation reg(c0, 96 * 64 * 2, "C");
  tcg::TiledMap t;
  t.base = c0;
  t.dims[0] = 64;
  t.dims[1] = 96;
  t.strides[0] = 128;
  t.box[0] = 64;
  t.box[1] = 32;
  t.swizzle = tcg::TmaSwizzle::k128B;
  const CUtensorMap map = tcg::make_tensor_map(t);
  std::string err;
  std::vector<tcg::trace::Span> stores;
  {
    const tcg_test::ModelScope model(/*skip_math=*/false, /*trace=*/true);
    err = sim_error([&] { tcg::launch_kernel(three_stores_kernel, tcg::LaunchDims{dim3(1), dim3(32), 13 * 1024}, nullptr, map); });
    for (const tcg::trace::Span& s : tcsim::last_trace().spans)
      if (s.name.compare(0, 9, "TMA store") == 0) stores.push_back(s);
  }
  REQUIRE(err == "");
  REQUIRE(stores.size() == 3);
  std::sort(stores.begin(), stores.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  const double t0 = stores[0].start_ns, cyc = 1 / 1.86;
  CHECK(stores[0].start_ns + stores[0].dur_ns - t0 == doctest::Approx(4096 / 32 * cyc).epsilon(1e-9));
  CHECK(stores[1].start_ns + stores[1].dur_ns - t0 == doctest::Approx(2 * 4096 / 32 * cyc).epsilon(1e-9));
  CHECK(stores[2].start_ns + stores[2].dur_ns - t0 == doctest::Approx((2 * 4096 + 2048) / 32 * cyc).epsilon(1e-9));
}
