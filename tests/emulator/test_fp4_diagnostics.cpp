// test_fp4_diagnostics.cpp — what the emulator reports when an NVFP4 kernel breaks a rule of
// block scaling (step 07; common/sim/mma_block_scaled.cpp, tmem.cpp): bad instruction
// descriptors, scale-factor TMEM addresses, invalid UE4M3 scales, unequal 32-lane replicas,
// scales no tcgen05.cp wrote or wrote unordered, tcgen05.cp's own diagnostics; and the
// statistics of block-scaled MMAs. The formats and the correct MMA are in test_fp4.cpp.
//
// Every test is a small real kernel written with the ptx.cuh wrappers only, launched in the
// emulator on one CTA. The expected side is computed here from the PTX ISA
// (§9.7.16.10.7; docs/references.md): the E2M1 / UE4M3 tables of
// §5.2.3, the 512-byte scale-factor atom (byte (r%32)*16 + (r/32)*4 + s for row r, block s), the
// 32x128b.warpx4 placement (byte j of source row r -> lanes r + 32w, column C0 + j/4, byte j%4)
// and D += sum_s sa*sb*dot16. Operands and scales are chosen so every sum is exact in FP32 (the
// test checks that precondition), so results are compared bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"
#include "emulator_test_util.h"
#include "fp4_test_kernels.h"

using namespace tcg_test;       // SimOptions, sim_error, contains, hex
using namespace tcg_test::fp4;  // Fp4Case, Fp4Data, make_data, reference, run_fp4, fp4_error

// ============================================================================ diagnostics

TEST_CASE("fp4: instruction-descriptor diagnostics") {
  SimOptions opt(1);
  const Fp4Data d = make_data(64, 1, 8);
  const uint32_t good = tcg::make_idesc_mxf4nvf4(128, 64);
  struct Bad {
    uint32_t idesc;
    const char* kind;
    const char* detail;
  } cases[] = {
      {(good & ~(7u << 7)) | 5u << 7, "bad instruction descriptor", "E2M1 = 1"},   // the f8f6f4 E2M1 code
      {good | 1u << 15, "bad instruction descriptor", "transpose"},
      {good | 1u << 16, "bad instruction descriptor", "transpose"},
      {tcg::make_idesc_mxf4nvf4(128, 64, false), "unsupported instruction descriptor", "UE8M0"},
      {tcg::make_idesc_mxf4nvf4(128, 64, true, 2, 0), "scale-factor ID out of range", "SFA_ID = 2"},
      {tcg::make_idesc_mxf4nvf4(128, 64, true, 0, 1), "scale-factor ID out of range", "SFB_ID = 1"},
      {good | 1u << 3, "bad instruction descriptor", "reserved"},
      {good | 1u << 6, "bad instruction descriptor", "reserved"},
      {good | 1u << 2, "unsupported instruction descriptor", "sparse"},
      {good | 1u << 31, "bad instruction descriptor", "K = 96"},
      {good | 1u << 13, "unsupported instruction descriptor", "negate"},
      {tcg::make_idesc_mxf4nvf4(64, 64), "invalid MMA shape", "M = 64"},
      {tcg::make_idesc_mxf4nvf4(256, 64), "invalid MMA shape", "M = 256"},
      {tcg::make_idesc_mxf4nvf4(128, 260), "invalid MMA shape", "M = 0"},
  };
  for (const Bad& b : cases) {
    CAPTURE(hex(b.idesc));
    Fp4Case c;
    c.idesc = b.idesc;
    const std::string err = fp4_error(c, d);
    INFO(err);
    CHECK(contains(err, std::string("tcsim: ") + b.kind));
    CHECK(contains(err, b.detail));
  }
}

TEST_CASE("fp4: scale-factor TMEM address diagnostics") {
  SimOptions opt(1);
  const Fp4Data d = make_data(256, 1, 9);
  {
    Fp4Case c;  // lane 32
    c.sfa_addr_or = 32u << 16;
    const std::string err = fp4_error(c, d);
    INFO(err);
    CHECK(contains(err, "tcsim: misaligned scale-factor TMEM address"));
    CHECK(contains(err, "lane 0"));
  }
  {
    Fp4Case c;  // a byte index in bits 30-31 (CUTLASS's tmem_ptr<uint8_t> + 1)
    c.sfa_addr_or = 1u << 30;
    const std::string err = fp4_error(c, d);
    INFO(err);
    CHECK(contains(err, "tcsim: misaligned scale-factor TMEM address"));
    CHECK(contains(err, "bits 30-31"));
  }
  {
    Fp4Case c;  // N = 256 needs 8 SFB columns; 508 + 8 > 512
    c.sfb_col = 508;
    const std::string err = fp4_error(c, d);
    INFO(err);
    CHECK(contains(err, "tcsim: TMEM access outside the allocation"));
    CHECK(contains(err, "scale factors of B"));
  }
  {
    Fp4Case c;  // SFB on top of D (columns 0..255)
    c.sfb_col = 200;
    const std::string err = fp4_error(c, d);
    INFO(err);
    CHECK(contains(err, "tcsim: scale factors overlap the accumulator"));
  }
}

TEST_CASE("fp4: invalid UE4M3 scales: sign bit set, NaN") {
  SimOptions opt(2);
  {
    Fp4Data d = make_data(64, 1, 10);
    d.sfa[(77 % 32) * 16 + (77 / 32) * 4 + 2] |= 0x80;  // row 77, block 2: a negative E4M3 byte
    const std::string err = fp4_error(Fp4Case{}, d);
    INFO(err);
    CHECK(contains(err, "tcsim: bad UE4M3 scale factor (sign bit set)"));
    CHECK(contains(err, "A row 77"));
    CHECK(contains(err, "byte 2"));
  }
  {
    Fp4Data d = make_data(64, 1, 11);
    d.sfb[(40 % 32) * 16 + (40 / 32) * 4 + 1] = 0x7F;  // row 40 of B, block 1
    const std::string err = fp4_error(Fp4Case{}, d);
    INFO(err);
    CHECK(contains(err, "tcsim: UE4M3 scale factor is NaN"));
    CHECK(contains(err, "B row 40"));
  }
}

TEST_CASE("fp4: the four 32-lane replicas of a scale must be identical") {
  SimOptions opt(1);
  const Fp4Data d = make_data(64, 1, 12);
  Fp4Case c;
  c.fault = Fault::kScalesFromD;  // D rows differ from quarter to quarter
  const std::string err = fp4_error(c, d);
  INFO(err);
  CHECK(contains(err, "tcsim: scale-factor replicas differ"));
}

TEST_CASE("fp4: an MMA reading scales no tcgen05.cp wrote (none issued, or issued after the MMA)") {
  const Fp4Data d = make_data(64, 1, 13);
  int hazards = 0;
  for (Fault f : {Fault::kNoCp, Fault::kMmaBeforeCp})
    for (uint64_t seed : {1, 2, 3, 4}) {
      CAPTURE(int(f));
      CAPTURE(seed);
      SimOptions opt(seed);
      Fp4Case c;
      c.fault = f;
      const std::string err = fp4_error(c, d);
      INFO(err);
      if (f == Fault::kNoCp) {
        CHECK(contains(err, "tcsim: scale factors read before any tcgen05.cp wrote them"));
        continue;
      }
      // The copies after the MMA: mma -> cp is not a pipelined pair (PTX ISA §9.7.16.6.2), reported
      // at the copy; unless the MMA was already performed by then and read the poison.
      const bool hazard = contains(err, "tcsim: TMEM hazard between asynchronous tcgen05 operations");
      CHECK((hazard || contains(err, "tcsim: scale factors read before any tcgen05.cp wrote them")));
      if (hazard) CHECK(contains(err, "mma -> cp is not one of the pipelined pairs"));
      hazards += hazard;
    }
  CHECK(hazards > 0);
}

TEST_CASE("fp4: a tcgen05.cp of another thread is ordered before the MMA only through fence + sync + fence") {
  const Fp4Data d = make_data(64, 1, 14);
  const std::vector<float> ref = reference(d);
  int caught[2] = {0, 0};
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    CAPTURE(seed);
    SimOptions opt(seed);
    Fp4Case c;
    c.fault = Fault::kCpOtherThreadSynced;  // PTX ISA §9.7.16.6.4.3: right under every seed
    std::vector<float> out;
    const std::string ok = sim_error([&] { out = run_fp4(c, d); });
    INFO(ok);
    CHECK(ok == "");
    CHECK(same_bits(out, ref));
    // No synchronisation after the copies (none at all, or a signal sent before them): nothing
    // orders copy and MMA, reported as a TMEM hazard at whichever is issued second; or, if the
    // MMA was performed before the copies were issued, it read the allocator's poison.
    for (int v = 0; v < 2; ++v) {
      c.fault = v == 0 ? Fault::kCpOtherThread : Fault::kCpAfterSignal;
      const std::string err = sim_error([&] { out = run_fp4(c, d); });
      INFO(err);
      const bool hazard = contains(err, "tcsim: TMEM hazard between asynchronous tcgen05 operations");
      CHECK((hazard || contains(err, "tcsim: scale factors read before any tcgen05.cp wrote them")));
      caught[v] += hazard;
    }
  }
  MESSAGE("unsynchronised copies reported as TMEM hazards under " << caught[0] << " and " << caught[1]
                                                                  << " of 16 seeds (the others read the poison)");
  CHECK(caught[0] > 0);
  CHECK(caught[1] > 0);
}

TEST_CASE("fp4: tcgen05.cp diagnostics") {
  SimOptions opt(1);
  const Fp4Data d = make_data(64, 1, 15);
  struct Bad {
    uint32_t taddr_or;
    int col;
    uint64_t desc_xor;
    const char* kind;
    const char* detail;
  } cases[] = {
      {32u << 16, -1, 0, "bad TMEM address", "must name lane 0"},
      {0, 510, 0, "TMEM access outside the allocation", "tcgen05.cp"},
      {0, -1, uint64_t(2) << 61, "unsupported shared-memory descriptor", "layout type 2"},
      {0, -1, uint64_t(1) << 46, "bad shared-memory descriptor", "bits 46-48"},
      {0, -1, uint64_t(1) << 55, "bad shared-memory descriptor", "reserved"},
      {0, -1, uint64_t(0x3000), "shared memory out of bounds", "tcgen05.cp source row 0"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.detail);
    Fp4Case c;
    c.cp_taddr_or = b.taddr_or;
    c.cp_col = b.col;
    c.cp_desc_xor = b.desc_xor;
    const std::string err = fp4_error(c, d);
    INFO(err);
    CHECK(contains(err, std::string("tcsim: ") + b.kind));
    CHECK(contains(err, b.detail));
  }
  // Freeing the columns before the copy was performed (no commit waited for): a lazy seed performs
  // it late.
  SimOptions lazy(4);
  Fp4Case c;
  c.fault = Fault::kDeallocUnderCp;
  const std::string err = fp4_error(c, d);
  INFO(err);
  CHECK(contains(err, "tcsim: TMEM deallocated under a pending tcgen05.cp"));
}

TEST_CASE("fp4: emulator statistics count block-scaled MMAs and their FP4 flops") {
  SimOptions opt(1);
  const Fp4Data d = make_data(256, 4, 16);
  Fp4Case c;
  run_fp4(c, d);
  CHECK(tcsim::last_stats().mmas == 4);
  CHECK(tcsim::last_stats().mma_flops == 4ull * 2 * 128 * 256 * 64);
}
