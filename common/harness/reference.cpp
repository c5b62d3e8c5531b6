// reference.cpp — the CPU reference GEMM: ref = A * B^T summed in double, and
// S = |A| * |B|^T (the scale the tolerance needs), blocked for the caches, vectorised and spread
// over the CPU's cores. At 2048^3 it takes ~0.45 s on two Zen 4 cores (0.25 s without S), where
// the plain loop it replaced took 5.2 s (2.5 s).
//
// It takes plain floats, so it serves every input type that decodes exactly to float: BF16 today
// (cpu_reference, inputs.cpp); NVFP4 values times their scale factors later.
//
// The result is bit for bit that of the naive loop
//     double d = 0; for (q = 0; q < k; ++q) d += double(a[i][q]) * double(b[j][q]);
// because every C element is summed in exactly that order, in one double: the speed comes from
// computing many elements side by side, never from reordering or splitting one sum. (A product of
// two floats has at most 48 significant bits, so it is exact in double, and a fused multiply-add
// then gives the same bits as a multiply and an add.) Threads, block sizes and instruction set
// change how fast the answer comes, never the answer.
//
// How (the GotoBLAS layout, with double accumulators):
//   * B is packed once into panels of kNr columns, K-major: panel[q][0..kNr) = B[j0..j0+kNr)[q],
//     so one k-step of a micro-tile reads kNr consecutive floats. Zeros pad the last panel.
//   * C is cut into work items of up to kMc rows x kNc columns, which the threads take from an
//     atomic counter. For each item and each K block of kKc, the item's kMc x kKc slice of A is
//     packed into doubles, kMr rows interleaved, each value followed (kMr places later) by its
//     absolute value, so the micro-tile broadcasts both straight from memory.
//   * The micro-tile keeps kMr x kNr sums of ref and as many of S in vector registers for a whole
//     K block; between K blocks they wait in the thread's double buffers (a work item's size).
// Sizes: a B panel's K block (kKc x kNr floats, 8 KiB) stays in L1; the packed A slice
// (2 x kMc x kKc doubles, 384 KiB) in L2. Timings varied by less than their noise (~10%) for
// kKc 128-512, kMc 48-192 and kNc 256-1024.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/harness/internal.h"

namespace tcg::harness {

namespace {

constexpr int kNr = 8;        // columns of a micro-tile
constexpr int64_t kKc = 256;  // K block
constexpr int64_t kMc = 96;   // rows of a work item (a multiple of every kMr used below)
constexpr int64_t kNc = 512;  // columns of a work item (a multiple of kNr)

// GCC/Clang vector extensions: portable (every target lowers them to the instructions it has)
// and as wide as the instruction set of the function they are inlined into. Vec<W>: W doubles,
// the W floats they are widened from, and W 64-bit integers for taking |x| with a mask.
template <int W>
struct Vec {
  typedef double D __attribute__((vector_size(8 * W)));
  typedef float F __attribute__((vector_size(4 * W)));
  typedef unsigned long long U __attribute__((vector_size(8 * W)));
};

// The helpers pass vectors by pointer: a 32-byte vector as a by-value argument or result has a
// different calling convention with and without AVX, which GCC warns about (-Wpsabi). Unaligned
// loads go through memcpy, which the compiler turns into a plain move.
//
// The widening is spelt element by element: GCC 12 turns that into a single cvtps2pd, whereas
// __builtin_convertvector of a 4-wide vector goes through two halves, the stack and a shuffle.
template <int W, size_t... I>
inline __attribute__((always_inline)) void load_widened(const float* p, typename Vec<W>::D* out,
                                                        std::index_sequence<I...>) {
  typename Vec<W>::F f;
  std::memcpy(&f, p, sizeof f);
  *out = typename Vec<W>::D{static_cast<double>(f[I])...};
}
template <int W>
inline __attribute__((always_inline)) void load_widened(const float* p, typename Vec<W>::D* out) {
  load_widened<W>(p, out, std::make_index_sequence<W>());
}
template <int W>
inline __attribute__((always_inline)) void abs_of(const typename Vec<W>::D* x,
                                                  typename Vec<W>::D* out) {
  typedef typename Vec<W>::U U;
  *out = reinterpret_cast<typename Vec<W>::D>(reinterpret_cast<U>(*x) & 0x7FFFFFFFFFFFFFFFull);
}

// What every thread reads; nothing in it changes while they run.
struct Problem {
  const float* a;   // m x k row-major
  const float* bp;  // B packed: ceil(n / kNr) panels of k x kNr floats
  int64_t m, n, k;
  int64_t items_n;  // work items across C: ceil(n / kNc)
  int64_t ldc;      // row stride of the scratch sums: kNc, or less when n is smaller
  float* ref;
  float* s;  // may be null
};

// Rows per micro-tile are 2 or 4 (see the versions below); buffers sized for kMaxMr fit both.
constexpr int64_t kMaxMr = 4;

// Per-thread buffers, allocated before the threads start: a std::bad_alloc inside a thread would
// terminate the process instead of reaching run_step's handler. Sized for the problem (a small one
// needs far less than a whole block) and left uninitialised: compute_item writes every element
// it reads.
struct Scratch {
  std::unique_ptr<double[]> ap;     // packed A slice: groups of kc x (kMr values, kMr |values|)
  std::unique_ptr<double[]> c, cs;  // rows x ldc sums of ref and S, kept from K block to block
  Scratch(int64_t rows, int64_t ldc, int64_t kc)
      : ap(new double[static_cast<size_t>(2 * rows * kc)]),
        c(new double[static_cast<size_t>(rows * ldc)]),
        cs(new double[static_cast<size_t>(rows * ldc)]) {}
};

// kMr x kNr elements of C (row stride ldc in the scratch sums) over one K block of length kc, in
// vectors of W doubles. ap: kc x 2kMr doubles; bp: kc x kNr floats (the panel, at this K block).
template <int kMr, int W, bool kWithS>
inline __attribute__((always_inline)) void micro_tile(int64_t kc, const double* ap, const float* bp,
                                                      double* c, double* cs, int64_t ldc) {
  typedef typename Vec<W>::D D;
  constexpr int kV = kNr / W;  // vectors per row
  D acc[kMr][kV], acs[kMr][kV];
#pragma GCC unroll 16
  for (int r = 0; r < kMr; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      std::memcpy(&acc[r][v], c + r * ldc + v * W, sizeof(D));
      if (kWithS) std::memcpy(&acs[r][v], cs + r * ldc + v * W, sizeof(D));
    }
  }
  for (int64_t q = 0; q < kc; ++q) {
    D b[kV], ab[kV];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      load_widened<W>(bp + q * kNr + v * W, &b[v]);
      if (kWithS) abs_of<W>(&b[v], &ab[v]);
    }
#pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r) {
      const double x = ap[q * 2 * kMr + r], ax = ap[q * 2 * kMr + kMr + r];
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) {
        acc[r][v] += x * b[v];
        if (kWithS) acs[r][v] += ax * ab[v];
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < kMr; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      std::memcpy(c + r * ldc + v * W, &acc[r][v], sizeof(D));
      if (kWithS) std::memcpy(cs + r * ldc + v * W, &acs[r][v], sizeof(D));
    }
  }
}

// One work item: rows [i0, i0 + mc) and columns [j0, j0 + nc) of C.
template <int kMr, int W, bool kWithS>
inline __attribute__((always_inline)) void compute_item(const Problem& p, Scratch& w, int64_t i0,
                                                        int64_t mc, int64_t j0, int64_t nc) {
  static_assert(kMc % kMr == 0 && kMaxMr % kMr == 0 && kNr % W == 0,
                "blocks and buffers must hold whole micro-tiles");
  const int64_t mc_pad = (mc + kMr - 1) / kMr * kMr;
  const int64_t nc_pad = (nc + kNr - 1) / kNr * kNr;
  for (int64_t r = 0; r < mc_pad; ++r) {
    std::fill_n(w.c.get() + r * p.ldc, nc_pad, 0.0);
    if (kWithS) std::fill_n(w.cs.get() + r * p.ldc, nc_pad, 0.0);
  }
  for (int64_t k0 = 0; k0 < p.k; k0 += kKc) {
    const int64_t kc = std::min(kKc, p.k - k0);
    // Pack A[i0.., k0..]; the rows that pad the last group to kMr are zeros.
    for (int64_t g = 0; g < mc_pad; g += kMr) {
      double* dst = w.ap.get() + g * 2 * kc;
      for (int r = 0; r < kMr; ++r) {
        const float* src = g + r < mc ? p.a + (i0 + g + r) * p.k + k0 : nullptr;
        for (int64_t q = 0; q < kc; ++q) {
          const double x = src != nullptr ? src[q] : 0.0;
          dst[q * 2 * kMr + r] = x;
          dst[q * 2 * kMr + kMr + r] = std::fabs(x);
        }
      }
    }
    for (int64_t jj = 0; jj < nc_pad; jj += kNr) {
      const float* bp = p.bp + (j0 + jj) / kNr * (p.k * kNr) + k0 * kNr;
      for (int64_t g = 0; g < mc_pad; g += kMr)
        micro_tile<kMr, W, kWithS>(kc, w.ap.get() + g * 2 * kc, bp, w.c.get() + g * p.ldc + jj,
                                   w.cs.get() + g * p.ldc + jj, p.ldc);
    }
  }
  for (int64_t r = 0; r < mc; ++r) {
    float* dst = p.ref + (i0 + r) * p.n + j0;
    const double* src = w.c.get() + r * p.ldc;
    for (int64_t j = 0; j < nc; ++j) dst[j] = static_cast<float>(src[j]);
    if (kWithS) {
      float* dst_s = p.s + (i0 + r) * p.n + j0;
      const double* src_s = w.cs.get() + r * p.ldc;
      for (int64_t j = 0; j < nc; ++j) dst_s[j] = static_cast<float>(src_s[j]);
    }
  }
}

// Takes work items from `next` until none are left. kMrS rows per micro-tile when S is wanted,
// kMr when not (half the accumulators, so room for more rows).
template <int kMrS, int kMr, int W>
inline __attribute__((always_inline)) void work(const Problem& p, Scratch& w,
                                                std::atomic<int64_t>& next) {
  const int64_t items = (p.m + kMc - 1) / kMc * p.items_n;
  for (int64_t it = next.fetch_add(1); it < items; it = next.fetch_add(1)) {
    const int64_t i0 = it / p.items_n * kMc, j0 = it % p.items_n * kNc;
    const int64_t mc = std::min(kMc, p.m - i0), nc = std::min(kNc, p.n - j0);
    if (p.s != nullptr)
      compute_item<kMrS, W, true>(p, w, i0, mc, j0, nc);
    else
      compute_item<kMr, W, false>(p, w, i0, mc, j0, nc);
  }
}

using WorkFn = void (*)(const Problem&, Scratch&, std::atomic<int64_t>&);

// One compiled version per instruction set, all with identical results (see the top). The rows
// per micro-tile are what fits the registers: kMr x (kNr / W) accumulators for ref and as many
// for S, plus B, |B| and the broadcasts. Measured at 2048^3 on two Zen 4 cores.
//
// Portable: the Makefile's flags (on x86-64 that is SSE2, 16 registers of 2 doubles); any other
// architecture gets whatever its compiler makes of the vector extensions. ~1.25 s (0.55 s without
// S).
void work_portable(const Problem& p, Scratch& w, std::atomic<int64_t>& next) {
  work<2, 2, 2>(p, w, next);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// AVX2 + FMA (x86-64-v3: Intel since 2013, AMD since 2015), chosen at run time so the binary still
// runs on any x86-64: twice the vector width, and multiply-add in one instruction. ~0.45 s
// (0.25 s without S). With S, 3 rows spill registers and run at half speed; an AVX-512 version (32
// registers, 4 to 8 rows, 4- or 8-wide) measured no faster on Zen 4, so there is none.
#define TCG_REFERENCE_AVX2 1
__attribute__((target("avx2,fma"))) void work_avx2(const Problem& p, Scratch& w,
                                                   std::atomic<int64_t>& next) {
  work<2, 4, 4>(p, w, next);
}
#endif

WorkFn pick_work(ReferencePath path) {
#ifdef TCG_REFERENCE_AVX2
  __builtin_cpu_init();
  if (path == ReferencePath::kFastest && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma"))
    return work_avx2;
#endif
  (void)path;  // unused where there is no other version
  return work_portable;
}

}  // namespace

unsigned reference_threads(unsigned requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? hw : 1;  // 0 means "unknown"
}

void reference_gemm(const float* a, const float* b, int64_t m, int64_t n, int64_t k, float* ref,
                    float* s, unsigned threads, ReferencePath path) {
  if (m <= 0 || n <= 0) return;
  const int64_t panels = (n + kNr - 1) / kNr;
  std::vector<float> bp(static_cast<size_t>(panels * k * kNr), 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    const float* src = b + j * k;
    float* dst = bp.data() + j / kNr * (k * kNr) + j % kNr;
    for (int64_t q = 0; q < k; ++q) dst[q * kNr] = src[q];
  }

  const Problem p{a, bp.data(), m, n, k, (n + kNc - 1) / kNc, std::min(kNc, panels * kNr),
                  ref, s};
  const int64_t items = (m + kMc - 1) / kMc * p.items_n;
  const int64_t want = std::min<int64_t>(reference_threads(threads), items);
  const int64_t rows = std::min(kMc, (m + kMaxMr - 1) / kMaxMr * kMaxMr);
  std::vector<Scratch> scratch;
  scratch.reserve(static_cast<size_t>(want));
  for (int64_t t = 0; t < want; ++t) scratch.emplace_back(rows, p.ldc, std::min(kKc, k));
  const WorkFn fn = pick_work(path);
  std::atomic<int64_t> next{0};
  std::vector<std::thread> helpers;
  // Reserved first: a reallocation failing while helpers run would destroy joinable threads.
  helpers.reserve(static_cast<size_t>(want - 1));
  for (int64_t t = 1; t < want; ++t) {
    try {
      helpers.emplace_back(fn, std::cref(p), std::ref(scratch[static_cast<size_t>(t)]),
                           std::ref(next));
    } catch (const std::system_error&) {
      break;  // no more threads to be had: those started and this one share the items
    }
  }
  fn(p, scratch[0], next);
  for (std::thread& t : helpers) t.join();
}

}  // namespace tcg::harness
