// step.h — the contract between a step (steps/stepNN_*.cu) and the harness (common/harness/run_step.cpp).
//
// Every step source is compiled twice: by nvcc into namespace `gpu` and by g++ (-DTCG_SIM) into
// namespace `sim`. Both builds define `launch(const GemmArgs&)` and `kSpec`; the GPU build also
// emits main(), which hands both launchers to the harness. The harness picks one at run time:
// the real kernel on a capable GPU, otherwise the emulator (common/sim/).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "trace_buf.h"

namespace tcg {

// The operands of an NVFP4 (block-scaled FP4) step, StepSpec::operands == Operands::kNVFP4:
// C = (A . SFA) * (B . SFB)^T with FP32 accumulation and FP16 output. A and B are E2M1 values
// packed two per byte, K-major (the element with the lower K index in the low nibble), one UE4M3
// scale per 16 consecutive K elements of a row, stored in the 128x4 "blocked" layout cuBLAS and
// CUTLASS use (CUTLASS cutlass/detail/sm100_blockscaled_layout.hpp; cuBLAS's block scaling factors layout): rows padded to a multiple of 128 and scale columns to a multiple of 4.
struct Nvfp4Operands {
  const uint8_t* a = nullptr;    // M rows of K/2 bytes
  const uint8_t* b = nullptr;    // N rows of K/2 bytes
  const uint8_t* sfa = nullptr;  // round_up(M, 128) * round_up(K/16, 4) bytes
  const uint8_t* sfb = nullptr;  // round_up(N, 128) * round_up(K/16, 4) bytes
  __half* c = nullptr;           // M x N row-major FP16
  // The second B of the dual GEMM (Operands::kNVFP4DualSilu, step 15): C = silu(A . B1^T) *
  // (A . B2^T), B1 in b / sfb above, B2 here, laid out as B. Null for every other step.
  const uint8_t* b2 = nullptr;   // N rows of K/2 bytes
  const uint8_t* sfb2 = nullptr; // round_up(N, 128) * round_up(K/16, 4) bytes
};

// One group of a grouped NVFP4 GEMM (Operands::kNVFP4Grouped, step 16): C_g = A_g . B_g^T, every
// group with its own operands laid out as Nvfp4Operands says, M_g rows of A_g and C_g (0 legal:
// the group writes nothing), N and K shared. The kernel reads a table of these from device memory,
// as a mixture-of-experts layer passes its experts' pointers and token counts.
struct GroupDesc {
  const uint8_t* a = nullptr;    // M_g rows of K/2 bytes
  const uint8_t* b = nullptr;    // N rows of K/2 bytes
  const uint8_t* sfa = nullptr;  // round_up(M_g, 128) * round_up(K/16, 4) bytes
  const uint8_t* sfb = nullptr;  // round_up(N, 128) * round_up(K/16, 4) bytes
  __half* c = nullptr;           // M_g x N row-major FP16
  int32_t m = 0;                 // M_g
  int32_t reserved = 0;
};
// The groups of a launch: the table in device memory (host memory under the emulator), and the
// M list on the host, which the plan reads (the caller knows the sizes when it picks a kernel).
struct GroupedOperands {
  const GroupDesc* desc = nullptr;
  int count = 0;
  const int64_t* host_m = nullptr;
};

// C = A * B^T. A is M x K row-major, B is N x K row-major (both K-major, like nn.Linear weights),
// C is M x N row-major BF16, accumulated in FP32. (NVFP4 steps use `fp4` instead of a, b, c.)
struct GemmArgs {
  int m = 0, n = 0, k = 0;
  const __nv_bfloat16* a = nullptr;  // device memory (host memory under the emulator)
  const __nv_bfloat16* b = nullptr;
  __nv_bfloat16* c = nullptr;
  Nvfp4Operands fp4;                 // Operands::kNVFP4 steps only
  GroupedOperands groups;            // Operands::kNVFP4Grouped (step 16) only; m = the sum of M_g
  cudaStream_t stream = nullptr;     // ignored by the emulator
  TraceBuf trace;                    // enabled: launch the traced kernel (--trace; GPU only)
  // Scratch memory of a step with a StepSpec::workspace (split-K partials and counters):
  // StepWorkspace::bytes of device memory (host memory under the emulator), null otherwise.
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// The global scratch memory a step needs for a problem: `bytes` in all, of which the first
// `zeroed_bytes` (counters) must be 0 before the first launch and are 0 again after every launch
// (the kernel resets them; the harness checks it). The rest is poisoned with 0xFF bytes (FP32
// NaN) before each checked launch: a kernel may not rely on its contents.
struct StepWorkspace {
  size_t bytes = 0;
  size_t zeroed_bytes = 0;
};
// The workspace for an m x n x k problem on a GPU of `num_sms` SMs (the same SM count the launch
// will see through tcg::num_sms()).
using WorkspaceFn = StepWorkspace (*)(int m, int n, int k, int num_sms);

// What a step multiplies.
enum class Operands {
  kBF16,   // BF16 A and B, BF16 C (steps 00-06)
  kNVFP4,  // NVFP4 A and B with UE4M3 block scales, FP16 C (steps 07, 10-13)
  kNVFP4DualSilu,  // NVFP4 A, B1 and B2, FP16 C = silu(A . B1^T) * (A . B2^T) (step 15)
  kNVFP4Grouped,   // G NVFP4 GEMMs C_g = A_g . B_g^T of one N and K, M_g each (step 16, --groups)
};
// The NVFP4 kinds share the inputs, the scale layout and the K rule.
constexpr bool is_nvfp4(Operands o) {
  return o == Operands::kNVFP4 || o == Operands::kNVFP4DualSilu || o == Operands::kNVFP4Grouped;
}

using LaunchFn = void (*)(const GemmArgs&);

enum class Arch {
  kSm80Plus,  // mma.sync: any compute capability >= 8.0
  kSm100f,    // tcgen05, built for the datacenter Blackwell family: compute capability 10.0 and
              // 10.3 (B200, GB200, B300, GB300); consumer Blackwell (12.x) has no tcgen05
};

// What a step's GPU build holds (TCG_STEP_MAIN fills it in): the -gencode code= targets it was
// compiled for (the Makefile's TCG_GPU_CODE, e.g. "sm_100f"), and a function returning the SASS
// version (cudaFuncAttributes::binaryVersion, 100 = sm_100) of the code the driver loads on the
// current device, or 0 if none loads there.
struct GpuCode {
  const char* targets;
  int (*binary_version)();
};

// A persistent step's unit of work: its CTAs walk several output tiles (a grid sized by the SM
// count, or tiles taken over with cluster launch control), each tile of m x n outputs computed by
// a cluster of `cluster` CTAs. Given no --sim-sms, the emulator then emulates a GPU on which every
// cluster runs at least two tiles, so what the step teaches (a double-buffered accumulator, rings
// carried across tiles) is exercised by the default run. m = 0: not persistent.
struct PersistentTile {
  int m = 0, n = 0, cluster = 1;
};

// A step's plan for an m x n x k problem on a GPU of `num_sms` SMs (the NVFP4 steps 10-13:
// common/nvfp4_plan.h): the one line the report prints ("BLOCK_N 64, S 2, MC 4, clusters of 8,
// 16 CTAs"), and what of the step's new code this plan does not run ("" if none). A knob the
// problem or the GPU cannot honour throws UsageError; the harness asks before it prints anything.
struct StepPlan {
  std::string line, left_out;
};
using PlanFn = StepPlan (*)(int m, int n, int k, int num_sms);
// A grouped step's plan (step 16): the M of each of `count` groups, N, K, the SM count.
using GroupedPlanFn = StepPlan (*)(const int64_t* m, int count, int n, int k, int num_sms);

// The problem and emulated GPU a plain emulator run of a step uses when none of --m, --n, --k and
// --sim-sms is given: one on which the step's plan runs what the step adds (a split, a cluster, a
// multicast), where the usual 512^3 on 148 SMs would not. m = 0: the usual defaults.
struct SimDefault {
  int m = 0, n = 0, k = 0, sms = 0;
};

struct StepSpec {
  int number;           // 0, 1, 2, ...
  const char* name;     // short identifier, e.g. "basic_tcgen05" (CSV "step_name")
  const char* title;    // one line for the report
  Arch arch;
  int k_multiple;       // K must be a multiple of this (TMA global strides are 16-byte multiples)
  Operands operands = Operands::kBF16;
  WorkspaceFn workspace = nullptr;  // null: the step needs no global scratch memory
  // CTAs per cluster (2 for the CTA-pair steps): the emulated GPU (--sim-sms) must hold one
  // cluster, so a pair step refuses fewer than 2 SMs with a usage error.
  int cluster_size = 1;
  // Which epilogue a launch of this shape runs, for the report's "epilogue:" line (steps with a
  // fallback, e.g. step 08's TMA stores or step 06's stores when N % 8 != 0); null: no line.
  const char* (*epilogue)(int64_t m, int64_t n, int64_t k) = nullptr;
  bool repeat = false;  // launch twice and require bitwise the same C (as for a step with a workspace)
  PersistentTile persistent{};      // persistent steps only (above)
  PlanFn plan = nullptr;            // null: the step has one plan, nothing to print
  // --help's lines for the step's environment knobs (tests and the levers' tables), each with
  // its values; null: none.
  const char* knobs = nullptr;
  SimDefault sim_default{};
  // Grouped steps (Operands::kNVFP4Grouped): the plan, and the groups of a run without --groups
  // (a list of M; N and K from sim_default, on sim_default.sms SMs in the emulator).
  GroupedPlanFn grouped_plan = nullptr;
  const char* default_groups = nullptr;
};

// A bad value in a step's own setting (e.g. an environment knob such as TCG_STEP11_BLOCK_N):
// thrown from the step's host code, reported by run_step as one line with exit code 2.
// Its members are defined once, in the harness (run_step.cpp): the GPU and emulator builds of a
// step may share no definition (tests/checks/check_symbols.sh).
struct UsageError : std::invalid_argument {
  explicit UsageError(const std::string& what);
  ~UsageError() override;
};
// A step's environment knob (tests, the lever tables): its value when it is one of `allowed`,
// `unset` when the variable is not set; any other value is a UsageError naming the allowed ones.
int env_knob(const char* name, std::initializer_list<int> allowed, int unset);
// The same for a knob that takes any integer from `lo` to `hi`.
int env_knob_range(const char* name, int lo, int hi, int unset);

// Parses the command line, runs the step on the GPU or in the emulator, verifies and reports.
// Returns the process exit code: 0 ok, 1 verification or emulator failure, 2 usage error,
// 3 cannot run here. `sim_launch` may be null (no emulator build); `gpu_code` (null: unknown) lets
// the harness name the code the driver loaded.
int run_step(const StepSpec& spec, LaunchFn gpu_launch, LaunchFn sim_launch, int argc, char** argv,
             const GpuCode* gpu_code = nullptr);

}  // namespace tcg
