// test_capability.cpp — the capability rule and the names of GPUs and their code
// (common/harness/capability.cpp): which compute capabilities a step runs on, the one line a
// machine without such a GPU gets, the code the driver loaded, and a GPU's file-name slug (the
// names table tests/checks/gpu_names.csv is shared with plots/bench.sh's check). No GPU needed.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/harness/internal.h"

using namespace tcg;
using namespace tcg::harness;

namespace {

GpuSurvey one_gpu(const char* name, int major, int minor, Arch arch) {
  GpuSurvey s;
  GpuInfo g;
  g.name = name;
  g.major = major;
  g.minor = minor;
  g.sm_count = 148;
  s.devices.push_back(g);
  judge_devices(s, arch);
  return s;
}

}  // namespace

TEST_CASE("capability rule: the tcgen05 steps run on compute capability 10.0 and 10.3 only") {
  CHECK(capability_refusal(Arch::kSm100f, 10, 0) == "");  // B200, GB200
  CHECK(capability_refusal(Arch::kSm100f, 10, 3) == "");  // B300, GB300
  CHECK(capability_refusal(Arch::kSm100f, 9, 0) == "compute capability 9.0 is Hopper: no tcgen05");
  CHECK(capability_refusal(Arch::kSm100f, 12, 0) == "compute capability 12.0 is consumer Blackwell: no tcgen05");
  CHECK(capability_refusal(Arch::kSm100f, 12, 1) == "compute capability 12.1 is consumer Blackwell: no tcgen05");
  CHECK(capability_refusal(Arch::kSm100f, 11, 0) ==
        "compute capability 11.0 is not in the sm_100f family this build is for");
  CHECK(capability_refusal(Arch::kSm100f, 10, 1) == "compute capability 10.1: no sm_100f code runs here");
  CHECK(capability_refusal(Arch::kSm100f, 8, 0) == "compute capability 8.0: no sm_100f code runs here");
  // The old name of the requirement is the same value.
}

TEST_CASE("capability rule: step 00 (mma.sync) runs on 8.0 and newer, as before") {
  for (const auto& [major, minor] : {std::pair{8, 0}, {8, 9}, {9, 0}, {10, 0}, {10, 3}, {11, 0}, {12, 0}})
    CHECK(capability_refusal(Arch::kSm80Plus, major, minor) == "");
  CHECK(capability_refusal(Arch::kSm80Plus, 7, 5) == "compute capability 7.5 is below 8.0 (BF16 mma.sync)");
}

TEST_CASE("capability rule: the survey picks the first device that may run the step") {
  GpuSurvey s;
  for (const auto& [name, major, minor] : {std::tuple{"NVIDIA GeForce RTX 5090", 12, 0}, {"NVIDIA H100 80GB HBM3", 9, 0},
                                           {"NVIDIA B300 SXM6 AC", 10, 3}, {"NVIDIA B200", 10, 0}}) {
    GpuInfo g;
    g.index = static_cast<int>(s.devices.size());
    g.name = name;
    g.major = major;
    g.minor = minor;
    s.devices.push_back(g);
  }
  judge_devices(s, Arch::kSm100f);
  CHECK(s.capable == 2);  // the B300
  judge_devices(s, Arch::kSm80Plus);
  CHECK(s.capable == 0);  // step 00 runs on the RTX 5090 too
  // A device whose properties could not be read (0.0) is never picked.
  GpuSurvey bad;
  bad.devices.push_back(GpuInfo{});
  judge_devices(bad, Arch::kSm80Plus);
  CHECK(bad.capable == -1);
  CHECK(bad.devices[0].refusal == "properties unreadable");
}

TEST_CASE("capability rule: the one refusal line names the requirement and why each GPU does not meet it") {
  const std::string need =
      "step05: needs a datacenter Blackwell GPU (compute capability 10.0 or 10.3: B200, GB200, B300, GB300); found ";
  GpuSurvey s = one_gpu("NVIDIA H100 80GB HBM3", 9, 0, Arch::kSm100f);
  CHECK(s.capable == -1);
  CHECK(refusal_line("step05", Arch::kSm100f, s) == need + "NVIDIA H100 80GB HBM3 (compute capability 9.0 is Hopper: no tcgen05)");
  s = one_gpu("NVIDIA GeForce RTX 5090", 12, 0, Arch::kSm100f);
  CHECK(s.capable == -1);
  CHECK(refusal_line("step05", Arch::kSm100f, s) ==
        need + "NVIDIA GeForce RTX 5090 (compute capability 12.0 is consumer Blackwell: no tcgen05)");
  s = one_gpu("NVIDIA Jetson AGX Thor", 11, 0, Arch::kSm100f);
  CHECK(s.capable == -1);
  CHECK(refusal_line("step05", Arch::kSm100f, s) ==
        need + "NVIDIA Jetson AGX Thor (compute capability 11.0 is not in the sm_100f family this build is for)");
  // A usable GPU is listed with its compute capability only; no devices at all says so.
  CHECK(describe_found(one_gpu("NVIDIA B300 SXM6 AC", 10, 3, Arch::kSm100f)) == "NVIDIA B300 SXM6 AC (cc 10.3)");
  GpuSurvey none;
  none.error = "cudaErrorNoDevice: no CUDA-capable device is detected";
  CHECK(refusal_line("step00", Arch::kSm80Plus, none) ==
        "step00: needs a GPU with compute capability >= 8.0; found no CUDA device: cudaErrorNoDevice: no CUDA-capable "
        "device is detected");
  CHECK(refusal_line("step00", Arch::kSm80Plus, one_gpu("Tesla T4", 7, 5, Arch::kSm80Plus)) ==
        "step00: needs a GPU with compute capability >= 8.0; found Tesla T4 (compute capability 7.5 is below 8.0 "
        "(BF16 mma.sync))");
  CHECK(need_short(Arch::kSm100f) == "datacenter Blackwell GPU");
}

TEST_CASE("loaded code: the target the driver picked, named as the build named it") {
  CHECK(loaded_code("sm_100f", 100) == "sm_100f code");  // on a B200 and on a B300 alike
  CHECK(loaded_code("sm_100a sm_103a", 103) == "sm_103a code");
  CHECK(loaded_code("sm_100a sm_103a", 100) == "sm_100a code");
  CHECK(loaded_code("sm_90 sm_100f", 90) == "sm_90 code");
  CHECK(loaded_code("sm_80 sm_90 sm_100 compute_100", 100) == "sm_100 code");
  CHECK(loaded_code("sm_80 sm_90 sm_100 compute_100", 80) == "sm_80 code");
  // sm_1000 is not sm_100 with a suffix.
  CHECK(loaded_code("sm_1000", 100) == "sm_100 code");
  // Step 00 on consumer Blackwell: no SASS for 12.0, the driver compiles the PTX.
  CHECK(loaded_code("sm_80 sm_90 sm_100 compute_100", 120) == "compute_100 PTX compiled by the driver for sm_120");
  CHECK(loaded_code("", 103) == "sm_103 code");  // a build that did not say what it holds
  CHECK(loaded_code("sm_100f", 0) == "");         // nothing loaded
}

TEST_CASE("GPU slug: results/<slug>.csv per GPU model, the names table shared with plots/bench.sh") {
  std::string path = __FILE__;
  path = path.substr(0, path.rfind('/') + 1) + "../checks/gpu_names.csv";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "name,slug");
  int rows = 0;
  while (std::getline(in, line)) {
    const size_t comma = line.rfind(',');
    REQUIRE(comma != std::string::npos);
    CHECK_MESSAGE(gpu_slug(line.substr(0, comma)) == line.substr(comma + 1), line);
    ++rows;
  }
  CHECK(rows >= 10);
  CHECK(gpu_slug("") == "gpu");
  CHECK(gpu_slug("NVIDIA") == "gpu");
}
