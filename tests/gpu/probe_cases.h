// probe_cases.h — the tcgen05 hardware probes' cases and their expected results, computed on the
// CPU without the emulator (tests/gpu/tcgen05_check.cu runs them on a B200 and in the emulator;
// tests/gpu/test_gpu_probes.cpp runs the emulator side against these expectations in `make test`).
//
// A case is a small program for one CTA of 128 threads (tests/gpu/tcgen05_check.cu, mma_probe):
// a shared-memory image (operands and scale atoms, laid out here with our own placement code,
// not the emulator's address functions), a list of tcgen05 operations that thread 0 issues in
// order (MMA kind::f16, MMA kind::mxf4nvf4.block16, tcgen05.cp.32x128b.warpx4, commit + wait), and
// a read-back of TMEM columns by all four warps with one tcgen05.ld shape. The output is the raw
// register dump: thread t's registers in order, so the expectation also encodes the tcgen05.ld
// mapping (PTX ISA §9.7.16.8.3) and the accumulator's data-path layout (§9.7.16.10.5).
//
// Plain C++ (no CUDA, no emulator): the same file builds into the probe program and the unit tests.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace probe {

// ---------------------------------------------------------------- what the kernel executes
enum OpKind : uint32_t { kOpMmaF16 = 0, kOpMmaFp4 = 1, kOpCp = 2, kOpSync = 3 };

// One tcgen05 operation; byte offsets are relative to the (1024-byte aligned) image in shared
// memory. Descriptors are built in the kernel with tcg::make_smem_desc from these fields.
struct ProbeOp {
  uint32_t kind = kOpSync;
  uint32_t d_lane = 0, d_col = 0;                     // MMA D / cp destination (TMEM lane, column)
  uint32_t a_off = 0, a_lbo = 0, a_sbo = 0, a_layout = 0;  // A (or the cp source: off, sbo)
  uint32_t b_off = 0, b_lbo = 0, b_sbo = 0, b_layout = 0;  // B
  uint32_t idesc = 0;
  uint32_t accumulate = 0;
  uint32_t sfa_col = 0, sfb_col = 0;                  // kind::mxf4nvf4: scale TMEM columns
};

enum LdShape : uint32_t { kLd32x32bX8 = 0, kLd32x32bX16 = 1, kLd16x256bX1 = 2 };
const char* ld_shape_name(uint32_t shape);

// The read-back: TMEM columns [col0, col0 + ncols) of all 128 lanes, warp w reading lane quarter w.
// Thread t of the CTA writes its registers to out[t * ncols + i], i in issue order.
struct ReadSpec {
  uint32_t shape = kLd32x32bX16;
  uint32_t col0 = 0;
  uint32_t ncols = 0;  // a multiple of 16
};

constexpr uint32_t kImageMax = 196608;  // shared-memory image bytes (192 KiB)
constexpr uint32_t kProbeThreads = 128;

// What a case's comparison means.
enum class Expect {
  kExact,       // arithmetic exact: GPU, emulator and CPU agree bit for bit
  kRounded,     // inputs not exact: bitwise first; a difference within `bound` is reported, not failed
  kExperiment,  // behaviour the ISA leaves open or forbids (the emulator refuses it): the GPU's
                // result is classified against hypotheses and recorded, the emulator's refusal too
};

struct Case {
  std::string family;       // "tcgen05.mma kind::f16", ...
  std::string instruction;  // the PTX instruction(s) probed
  std::string config;       // the configuration, for the report
  std::vector<uint8_t> image;
  std::vector<ProbeOp> ops;
  uint32_t syncs = 0;  // kOpSync ops (the kernel's final commit waits for parity syncs % 2)
  ReadSpec read;
  Expect expect = Expect::kExact;
  std::vector<uint32_t> want;     // expected register dump (kProbeThreads * read.ncols words)
  std::vector<uint8_t> defined;   // 1 where the TMEM cell behind a word holds a D element
  std::vector<float> bound;       // kRounded: the largest acceptable |difference| per word
  std::string refusal;            // kExperiment: the emulator diagnostic it must report
  // kExperiment: hypotheses, each a name and a full expected dump (same mask).
  std::vector<std::pair<std::string, std::vector<uint32_t>>> hypotheses;
  uint32_t ctas = 1;  // dumps of several CTAs follow each other (CTA c's thread t at (c*128 + t) * ncols)
};

// ---------------------------------------------------------------- the CTA-pair probe
// tcgen05.mma.cta_group::2.kind::f16 over a cluster of two CTAs (tests/gpu/tcgen05_check.cu,
// pair_probe): A is M x 64 and B is N x 64 BF16 in global memory (row-major = K-major); CTA v loads
// A rows [vM/2, +M/2) and B rows [vN/2, +N/2) with the .cta_group::2 TMA (128B swizzle) signalling
// the even CTA's mbarrier; the even CTA issues four MMAs and a multicast commit to both; each CTA
// then reads its own TMEM (32x32b.x16) and dumps it. `want` holds both CTAs' dumps.
struct PairCase {
  Case c;  // family, instruction, config, read (ncols per CTA), want / defined for 2 x 128 threads
  uint32_t M = 256, N = 128;
  std::vector<uint16_t> a, b;  // BF16 bits, row-major M x 64 and N x 64
};
std::vector<PairCase> pair_cases();

// Every tcgen05 case of the single-CTA probe, in report order.
std::vector<Case> mma_cases();

// ---------------------------------------------------------------- comparison
struct Comparison {
  size_t compared = 0;     // defined words
  size_t differing = 0;    // bitwise
  size_t first = SIZE_MAX; // first differing word
  uint32_t first_got = 0, first_want = 0;
  double max_diff = 0;     // largest |got - want| as FP32 values (NaN counts as infinite)
  size_t max_at = SIZE_MAX;
  size_t over_bound = 0;   // kRounded: words whose difference exceeds the bound
};
Comparison compare(const Case& c, const std::vector<uint32_t>& got, const std::vector<uint32_t>& want);

// Where word i of the dump comes from: thread, register, TMEM lane and column, for messages.
std::string describe_word(const Case& c, size_t i);

// One line: "bitwise identical (N words)" or "N of M words differ; first word ... got X want Y;
// largest difference D at ...".
std::string summarize(const Case& c, const Comparison& r);

// kExperiment: the name of the hypothesis the dump matches bitwise, or "none".
std::string classify(const Case& c, const std::vector<uint32_t>& got);

// ---------------------------------------------------------------- tcgen05.alloc probe
// One record per CTA: the SM it ran on, the address tcgen05.alloc returned, and %globaltimer
// right after the allocation and right before the deallocation.
struct AllocRecord {
  uint32_t smid, taddr;
  uint64_t t_alloc, t_free;
};
struct AllocVerdict {
  bool ok = true;
  size_t overlapping_pairs = 0;  // CTA pairs on one SM holding TMEM at the same time
  std::string detail;            // first violation, or a summary
};
// Addresses in range (lane 0, columns inside 512), aligned to the allocation size, and disjoint
// for every two CTAs of one SM whose holding intervals overlap.
AllocVerdict check_alloc(const std::vector<AllocRecord>& recs, uint32_t ncols);

// For tests: a hook that breaks the CPU expectation on purpose (0: none). 1: the M = 64 layout
// puts row r in lane r (as M = 128 does); 2: the accumulate flag is ignored; 3: the scale of
// K block s is read from byte 3 - s of its TMEM cell; 4: a pair MMA's odd CTA holds the even
// CTA's rows. Each must make a probe fail.
void set_broken_expectation(int which);

}  // namespace probe
