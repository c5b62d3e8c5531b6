// capability.cpp — which GPUs a step's build runs on, and how the reports name them: the
// capability rule (a step's Arch and a device's compute capability: may its code run there, and if
// not, why not, in a phrase), the refusal line of a machine without such a GPU, the code the
// driver loaded (the binary's -gencode targets and the SASS version the driver picked), and the
// file-name slug of a GPU ("NVIDIA B300 SXM6 AC" -> "b300": results/<slug>.csv). Pure functions,
// unit-tested in tests/unit/test_capability.cpp; gpu.cpp applies them to the devices it finds.
//
// The rule for tcgen05 steps: they are built for sm_100f, the datacenter Blackwell family, whose
// code loads on compute capability 10.0 (B200, GB200) and 10.3 (B300, GB300). Consumer Blackwell
// (12.x) has no tcgen05 at all; 11.0 (Thor) is another family; Hopper (9.x) has wgmma instead.
#include <cctype>
#include <string>

#include "common/harness/internal.h"

namespace tcg::harness {

std::string capability_refusal(Arch arch, int major, int minor) {
  const std::string cc = strf("compute capability %d.%d", major, minor);
  if (arch == Arch::kSm80Plus)
    return major >= 8 ? "" : cc + " is below 8.0 (BF16 mma.sync)";
  if (major == 10 && (minor == 0 || minor == 3)) return "";
  if (major == 12) return cc + " is consumer Blackwell: no tcgen05";
  if (major == 11) return cc + " is not in the sm_100f family this build is for";
  if (major == 9) return cc + " is Hopper: no tcgen05";
  return cc + ": no sm_100f code runs here";
}

void judge_devices(GpuSurvey& s, Arch arch) {
  s.capable = -1;
  for (size_t d = 0; d < s.devices.size(); ++d) {
    GpuInfo& g = s.devices[d];
    g.refusal = g.major == 0 && g.minor == 0 ? "properties unreadable" : capability_refusal(arch, g.major, g.minor);
    if (s.capable < 0 && g.refusal.empty()) s.capable = static_cast<int>(d);
  }
}

std::string describe_found(const GpuSurvey& s) {
  if (!s.error.empty()) return "no CUDA device: " + s.error;
  if (s.devices.empty()) return "no CUDA device";
  std::string found;
  for (const GpuInfo& g : s.devices) {
    if (!found.empty()) found += ", ";
    found += g.refusal.empty() ? strf("%s (cc %d.%d)", g.name.c_str(), g.major, g.minor)
                               : strf("%s (%s)", g.name.c_str(), g.refusal.c_str());
  }
  return found;
}

std::string need_long(Arch arch) {
  return arch == Arch::kSm100f
             ? "a datacenter Blackwell GPU (compute capability 10.0 or 10.3: B200, GB200, B300, GB300)"
             : "a GPU with compute capability >= 8.0";
}
std::string need_short(Arch arch) {
  return arch == Arch::kSm100f ? "datacenter Blackwell GPU" : "GPU with compute capability >= 8.0";
}

std::string refusal_line(const std::string& prog, Arch arch, const GpuSurvey& s) {
  return prog + ": needs " + need_long(arch) + "; found " + describe_found(s);
}

std::string loaded_code(const std::string& targets, int binary_version) {
  if (binary_version <= 0) return "";
  const std::string sass = strf("sm_%d", binary_version);
  std::string ptx;
  size_t pos = 0;
  while (pos < targets.size()) {
    const size_t end = std::min(targets.find(' ', pos), targets.size());
    const std::string t = targets.substr(pos, end - pos);
    pos = end + 1;
    // "sm_100f" / "sm_100a" / "sm_100": the number, then at most one letter.
    if (t.compare(0, sass.size(), sass) == 0 &&
        (t.size() == sass.size() || (t.size() == sass.size() + 1 && std::isalpha(static_cast<unsigned char>(t.back())))))
      return t + " code";
    if (t.compare(0, 8, "compute_") == 0) ptx = t;
  }
  if (!ptx.empty()) return ptx + " PTX compiled by the driver for " + sass;
  return sass + " code";
}

std::string gpu_slug(const std::string& name) {
  std::string slug, word;
  for (char ch : name + " ") {
    if (!std::isspace(static_cast<unsigned char>(ch))) {
      word += char(std::tolower(static_cast<unsigned char>(ch)));
      continue;
    }
    if (word == "nvidia" || word == "geforce" || word == "tesla" || word == "quadro") word.clear();
    std::string w;
    for (char c : word.substr(0, word.find('-')))
      if (std::isalnum(static_cast<unsigned char>(c))) w += c;
    word.clear();
    if (w.empty()) continue;
    slug += (slug.empty() ? "" : "_") + w;
    if (w.find_first_of("0123456789") != std::string::npos) break;  // the model number: done
  }
  return slug.empty() ? "gpu" : slug;
}

}  // namespace tcg::harness
