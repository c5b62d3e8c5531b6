// test_groups.cpp — the groups of a grouped GEMM (common/harness/groups.cpp: presets, lists,
// files, the one-line errors) and the grouped NVFP4 CPU reference
// (common/harness/grouped_reference.cpp) against a plain per-group sum of the decoded operands.
// No GPU and no emulator.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness/grouped_reference.h"
#include "common/harness/groups.h"
#include "common/harness/internal.h"

using namespace tcg::harness;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string parse(const std::string& value, GroupList* g) { return parse_groups(value, g); }

// A file in the temporary directory, removed at the end of the scope.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/tcg_groups_XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    path = name;
    std::FILE* f = fdopen(fd, "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("groups: the four ranked cases of the competition are presets with their N and K") {
  const auto& p = group_presets();
  REQUIRE(p.size() == 4);
  CHECK(p[0].m == std::vector<int64_t>{80, 176, 128, 72, 64, 248, 96, 160});
  CHECK((p[0].n == 4096 && p[0].k == 7168));
  CHECK(p[1].m == std::vector<int64_t>{40, 76, 168, 72, 164, 148, 196, 160});
  CHECK((p[1].n == 7168 && p[1].k == 2048));
  CHECK(p[2].m == std::vector<int64_t>{192, 320});
  CHECK((p[2].n == 3072 && p[2].k == 4096));
  CHECK(p[3].m == std::vector<int64_t>{128, 384});
  CHECK((p[3].n == 4096 && p[3].k == 1536));
  CHECK(p[0].speed_of_light_us == doctest::Approx(18.833));
  CHECK(p[3].speed_of_light_us == doctest::Approx(1.525));
  for (const GroupList& g : p) {
    GroupList out;
    CHECK(parse(g.name, &out).empty());
    CHECK(out.m == g.m);
    CHECK(out.n == g.n);
    CHECK(contains(group_presets_help(), g.name));
    CHECK(g.k % kNvfp4KMultiple == 0);
  }
}

TEST_CASE("groups: a list of M, blanks allowed, M = 0 legal") {
  GroupList g;
  REQUIRE(parse("80,176, 128 ,0,1,7", &g).empty());
  CHECK(g.m == std::vector<int64_t>{80, 176, 128, 0, 1, 7});
  CHECK(g.name.empty());
  CHECK((g.n == 0 && g.k == 0));  // the step's --n and --k decide
  REQUIRE(parse("0", &g).empty());
  CHECK(g.m == std::vector<int64_t>{0});
}

TEST_CASE("groups: bad lists get one line naming the group") {
  GroupList g;
  const struct {
    const char* value;
    const char* expect;
  } cases[] = {
      {"80,,72", "an empty entry after group 1"},
      {"80,72,", "an empty entry after group 2"},
      {",80", "an empty entry after group 0"},
      {"80,-5", "group 2 (\"-5\"): M must be 0 or more"},
      {"80,7x", "group 2 (\"7x\"): not a number"},
      {"80,1048577", "M above 1048576"},
      {"80,99999999999999999999999", "M above"},
      {"moe", "not a preset (g8-n4096-k7168"},
      {"", "not a preset"},
      {" , ", "an empty entry"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.value);
    const std::string err = parse(c.value, &g);
    INFO(err);
    CHECK(contains(err, c.expect));
    CHECK(err.find('\n') == std::string::npos);
  }
  std::string many;
  for (int i = 0; i < 1025; ++i) many += (i ? "," : "") + std::to_string(i % 200);
  CHECK(contains(parse(many, &g), "1025 groups, more than 1024"));
}

TEST_CASE("groups: a file of M, with newlines and comments") {
  GroupList g;
  {
    TempFile f("# tokens per expert\n80, 176\n128\n\n0   # an idle expert\n72\n");
    REQUIRE(parse(f.path, &g).empty());
    CHECK(g.m == std::vector<int64_t>{80, 176, 128, 0, 72});
  }
  {
    TempFile f("# nothing\n\n");
    CHECK(contains(parse(f.path, &g), "no groups"));
  }
  {
    TempFile f("80\n-1\n");
    const std::string err = parse(f.path, &g);
    CHECK(contains(err, "--groups file /tmp/tcg_groups_"));
    CHECK(contains(err, "group 2 (\"-1\")"));
  }
  CHECK(contains(parse("/nonexistent/groups.txt", &g), "or a readable file"));
}

TEST_CASE("grouped NVFP4 reference: each group its own operands, the plain sum of the decoded values") {
  GroupList groups;
  groups.m = {3, 0, 17, 1};  // M not a multiple of 8, an empty group, M = 1
  groups.n = 24;
  groups.k = 128;
  const GroupedNvfp4Inputs in = make_grouped_nvfp4_inputs(Inputs::kInteger, 7, groups);
  REQUIRE(in.groups.size() == 4);
  std::vector<std::vector<float>> ref, s;
  cpu_reference_grouped_nvfp4(in, groups, &ref, &s, 1);
  REQUIRE(ref.size() == 4);
  CHECK(ref[1].empty());
  CHECK(in.groups[1].a.data.empty());
  for (size_t g = 0; g < groups.m.size(); ++g) {
    const int64_t m = groups.m[g], n = groups.n, k = groups.k;
    if (m == 0) continue;
    const auto& a = in.groups[g].a;
    const auto& b = in.groups[g].b;
    const std::vector<float> af = dequantize_nvfp4(a.data.data(), a.sf.data(), m, k);
    const std::vector<float> bf = dequantize_nvfp4(b.data.data(), b.sf.data(), n, k);
    size_t diff = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double d = 0, da = 0;
        for (int64_t q = 0; q < k; ++q) {
          d += double(af[size_t(i * k + q)]) * bf[size_t(j * k + q)];
          da += std::abs(double(af[size_t(i * k + q)]) * bf[size_t(j * k + q)]);
        }
        diff += float(d) != ref[g][size_t(i * n + j)] || float(da) != s[g][size_t(i * n + j)];
      }
    CAPTURE(g);
    CHECK(diff == 0);
  }
  // Every group has its own B and its own A stream: group 0's and group 3's operands differ.
  CHECK(in.groups[0].b.data != in.groups[3].b.data);
  CHECK(group_seed(7, 0) != group_seed(7, 1));
  CHECK(group_seed(7, 0) != group_seed(8, 0));
  // The same seed gives the same inputs.
  const GroupedNvfp4Inputs again = make_grouped_nvfp4_inputs(Inputs::kInteger, 7, groups);
  CHECK(again.groups[2].a.data == in.groups[2].a.data);
  CHECK(again.groups[2].b.sf == in.groups[2].b.sf);
}

TEST_CASE("grouped NVFP4 inputs: N and K must be set, K a multiple of 64") {
  GroupList groups;
  groups.m = {8};
  groups.n = 16;
  groups.k = 0;
  CHECK_THROWS_AS(make_grouped_nvfp4_inputs(Inputs::kRandom, 1, groups), std::invalid_argument);
  groups.k = 96;
  try {
    make_grouped_nvfp4_inputs(Inputs::kRandom, 1, groups);
    CHECK(false);
  } catch (const std::invalid_argument& e) {
    CHECK(contains(e.what(), "K = 96 is not a multiple of 64"));
  }
  groups.k = 64;
  groups.m = {0, 5};
  const GroupedNvfp4Inputs in = make_grouped_nvfp4_inputs(Inputs::kRandom, 1, groups);
  CHECK(in.groups[1].a.rows == 5);
}
