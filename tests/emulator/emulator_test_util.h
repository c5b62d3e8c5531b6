// emulator_test_util.h — host helpers shared by the emulator's doctest files (every test_*.cpp
// of tests/emulator/): seed scoping, capturing a SimError, running a launch that could hang
// in a forked child, exact small-integer BF16 operands, and the canonical K-major tile placements
// the kernels write with ordinary stores.
//
// Everything lives in namespace tcg_test and is inline, so each test file includes it once and
// uses only what it needs.
#pragma once
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/kernel_common.cuh"

namespace tcg_test {

// ============================================================================ host helpers

// Sets the emulator's seed (and instruction budget) for one scope.
struct SimOptions {
  tcsim::Options saved = tcsim::options();
  explicit SimOptions(uint64_t seed, uint64_t budget = tcsim::Options{}.instruction_budget) {
    tcsim::Options o = saved;
    o.seed = seed;
    o.instruction_budget = budget;
    tcsim::set_options(o);
  }
  ~SimOptions() { tcsim::set_options(saved); }
  SimOptions(const SimOptions&) = delete;
  SimOptions& operator=(const SimOptions&) = delete;
};

// Runs the B200 timing model (docs/timing_model.md) for one scope and restores the options on
// every exit, a failed REQUIRE included. skip_math: timing only, no arithmetic; trace: record CTA
// 0's spans (tcsim::last_trace()); sms > 0: the emulated GPU's SM count.
struct ModelScope {
  tcsim::Options saved = tcsim::options();
  ModelScope(bool skip_math, bool trace, int sms = 0) {
    tcsim::Options o = saved;
    o.timing = true;
    o.skip_math = skip_math;
    o.trace = trace;
    o.trace_ctas = {0};
    if (sms > 0) o.num_sms = sms;
    tcsim::set_options(o);
  }
  ~ModelScope() { tcsim::set_options(saved); }
  ModelScope(const ModelScope&) = delete;
  ModelScope& operator=(const ModelScope&) = delete;
};

// Runs f(); returns the SimError's message, or "" when the launch succeeded.
template <class F>
inline std::string sim_error(F&& f) {
  try {
    f();
  } catch (const tcsim::SimError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The emulator checks every raw global access of a kernel (TMA box rows, cp.async.bulk sources,
// 16-byte stores) against the registered allocations (common/sim/global_memory.cpp), as the
// harness registers its operands: a test registers the host buffers it passes to a kernel for as
// long as the launch runs, e.g. `const auto reg_a = registered(a, "A");`.
template <class T>
inline tcsim::GlobalAllocation registered(const std::vector<T>& v, const char* name) {
  return tcsim::GlobalAllocation(v.data(), v.size() * sizeof(T), name);
}

// A rows x k row-major BF16 tensor, loaded `box_rows` rows at a time (128B swizzle when k = 64).
inline CUtensorMap map2d(const void* base, uint32_t rows, uint32_t k, uint32_t box_rows, bool swizzle128) {
  tcg::TiledMap t;
  t.base = base;
  t.dims[0] = k;
  t.dims[1] = rows;
  t.strides[0] = uint64_t(k) * 2;
  t.box[0] = k;
  t.box[1] = box_rows;
  t.swizzle = swizzle128 ? tcg::TmaSwizzle::k128B : tcg::TmaSwizzle::kNone;
  return tcg::make_tensor_map(t);
}

// The emulator prints addresses as "0x%llx".
inline std::string hex(uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

// Runs fn() in a forked child with a time limit. fn returns a string (typically a SimError
// message) that is passed back through a pipe.
struct Isolated {
  bool timed_out = false;   // the child was still running at the limit and was killed
  bool exited = false;      // the child returned from fn() normally
  std::string text;
};
inline Isolated run_isolated(const std::function<std::string()>& fn, double limit_s) {
  Isolated r;
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);  // diagnostics the emulator prints itself (the watchdog) come back too
    std::string s;
    try {
      s = fn();
    } catch (const std::exception& e) {
      s = std::string("unexpected exception: ") + e.what();
    }
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t w = write(fds[1], s.data() + off, s.size() - off);
      if (w <= 0) break;
      off += size_t(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  int remaining_ms = int(limit_s * 1000);
  char buf[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const auto t0 = std::chrono::steady_clock::now();
    const int n = poll(&p, 1, remaining_ms);
    remaining_ms -= int(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (n == 0 || remaining_ms <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    const ssize_t got = read(fds[0], buf, sizeof buf);
    if (got <= 0) break;  // EOF: the child is done
    r.text.append(buf, size_t(got));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exited = !r.timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

// BF16 bit patterns of small integers (exact: at most 8 significant bits).
inline uint16_t bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (u & 0xFFFFu) throw std::logic_error("value is not exactly representable in BF16");
  return uint16_t(u >> 16);
}
inline float from_bf16(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// A deterministic pseudo-random integer in [-4, 4] for element (r, k).
inline int small_int(uint32_t r, uint32_t k, uint32_t salt) {
  uint32_t h = (r + 1) * 0x9E3779B1u ^ (k + 0x7F4A7C15u) * 0x85EBCA6Bu ^ (salt + 3) * 0xC2B2AE35u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return int(h % 9) - 4;
}

// A rows x k row-major matrix of small_int(row, k, salt) as BF16 bits.
inline std::vector<uint16_t> small_int_matrix(uint32_t rows, uint32_t k, uint32_t salt) {
  std::vector<uint16_t> v(size_t(rows) * k);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t kk = 0; kk < k; ++kk) v[r * k + kk] = bf16(float(small_int(r, kk, salt)));
  return v;
}

inline bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}
inline size_t count_mismatches(const std::vector<float>& x, const std::vector<float>& y) {
  size_t n = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) n += memcmp(&x[i], &y[i], 4) != 0;
  return n;
}
inline bool any_nan(const std::vector<float>& x) {
  for (float v : x)
    if (std::isnan(v)) return true;
  return false;
}

// ============================================================================ shared-memory tile layouts
//
// `span` names how a K-major tile of `rows` x `k` BF16 elements lies in shared memory:
//   0          no swizzle, core matrices: [k/8 k-groups][rows][8 elements] (step 01's layout; one
//              8-row x 16-byte core matrix = 128 contiguous bytes)
//   1          plain row-major, rows of k*2 bytes, no swizzle (the failed first attempt in "tcgen05 for dummies")
//   32/64/128  one swizzle-atom column: rows of `span` bytes (k*2 == span), 16-byte chunks XOR-
//              swizzled on absolute address bits (PTX ISA §5.5.7; CUTLASS cute/swizzle.hpp)
constexpr uint32_t kCoreMatrices = 0, kRowMajor = 1;

// Absolute shared address of element (row, kk) of a tile placed at `tile` (1024-byte aligned).
// Used by the kernels' ordinary stores; the swizzle comes from tcg::swizzle_addr.
__device__ inline uint32_t place_addr(uint32_t span, uint32_t rows, uint32_t k, uint32_t tile, uint32_t row,
                                      uint32_t kk) {
  if (span == kCoreMatrices) return tile + (kk / 8) * rows * 16 + row * 16 + (kk % 8) * 2;
  if (span == kRowMajor) return tile + row * k * 2 + kk * 2;
  return tcg::swizzle_addr(tile + row * span + kk * 2, span);
}

// The same placement written from the ISA's TMA swizzle tables instead of tcg::swizzle_addr
// (PTX ISA §5.5.7; CUtensorMapSwizzle in cuda.h: in 128-byte line L, logical 16-byte chunk c is stored at chunk c ^ (L % 8) for
// 128B, c ^ (L % 4) for 64B, c ^ (L % 2) for 32B). Byte offset from a 1024-aligned tile start.
inline uint32_t isa_place(uint32_t span, uint32_t rows, uint32_t k, uint32_t row, uint32_t kk) {
  if (span == kCoreMatrices) return (kk / 8) * rows * 16 + row * 16 + (kk % 8) * 2;
  if (span == kRowMajor) return row * k * 2 + kk * 2;
  const uint32_t off = row * span + kk * 2, line = off / 128, chunk = (off % 128) / 16;
  return line * 128 + 16 * (chunk ^ (line % (span / 16))) + off % 16;
}

}  // namespace tcg_test
