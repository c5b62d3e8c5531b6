// test_harness.cpp — unit tests of the harness's pure pieces (common/harness/internal.h):
// input generation, CPU reference, verification and CSV output (the command line:
// test_harness_cli.cpp). No GPU and no emulator needed. main() comes from another file of the test binary.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/harness/internal.h"
#include "harness_test_util.h"

using namespace tcg;
using namespace tcg::harness;

namespace {

using harness_test::contains;
using harness_test::kSpec;
using harness_test::parse;

__nv_bfloat16 bf(float x) { return bf16_from_bits(float_to_bf16_bits(x)); }

// A fresh, empty temporary directory, removed (with the files the tests made) at scope exit.
class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/test_harness_XXXXXX";
    const char* d = mkdtemp(templ);
    REQUIRE(d != nullptr);
    path_ = d;
  }
  ~TempDir() {
    for (const std::string& f : files_) std::remove(f.c_str());
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_all(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

CsvRecord sample_record() {
  CsvRecord r;
  r.step = "1";
  r.step_name = "test_step";
  r.gpu = "NVIDIA B200";
  r.sm_count = "148";
  r.m = r.n = r.k = "4096";
  r.inputs = "random";
  r.iterations = "20";
  r.verified = "yes";
  r.date = "2025-01-01T00:00:00Z";
  r.git_rev = "abc123";
  return r;
}

size_t count_of(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// BF16 and inputs
// ---------------------------------------------------------------------------------------------

TEST_CASE("float_to_bf16_bits rounds to nearest even") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3F80);
  CHECK(float_to_bf16_bits(-2.0f) == 0xC000);
  CHECK(float_to_bf16_bits(0.0f) == 0x0000);
  CHECK(float_to_bf16_bits(-0.0f) == 0x8000);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  CHECK(float_to_bf16_bits(1.0f + 0x1p-8f) == 0x3F80);
  // 1 + 3*2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  CHECK(float_to_bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3F82);
  // Just above the tie rounds up.
  CHECK(float_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f) == 0x3F81);
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::infinity()) == 0x7F80);
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7F80);  // rounds to Inf
  const uint16_t nan = float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK(std::isnan(bf16_bits_to_float(nan)));
  CHECK(bf16_bits_to_float(0x3FC0) == 1.5f);
  CHECK(bf16_bits(bf16_from_bits(0x1234)) == 0x1234);
}

TEST_CASE("inputs are deterministic and seed-dependent") {
  for (Inputs kind : {Inputs::kRandom, Inputs::kInteger}) {
    const HostInputs x = make_inputs(kind, 1, 16, 24, 32);
    const HostInputs y = make_inputs(kind, 1, 16, 24, 32);
    const HostInputs z = make_inputs(kind, 2, 16, 24, 32);
    REQUIRE(x.a.size() == 16 * 32);
    REQUIRE(x.b.size() == 24 * 32);
    bool same_xy = true, same_xz = true, same_ab = true;
    for (size_t i = 0; i < x.a.size(); ++i) {
      same_xy = same_xy && bf16_bits(x.a[i]) == bf16_bits(y.a[i]);
      same_xz = same_xz && bf16_bits(x.a[i]) == bf16_bits(z.a[i]);
      same_ab = same_ab && bf16_bits(x.a[i]) == bf16_bits(x.b[i]);
    }
    for (size_t i = 0; i < x.b.size(); ++i)
      same_xy = same_xy && bf16_bits(x.b[i]) == bf16_bits(y.b[i]);
    CHECK(same_xy);
    CHECK_FALSE(same_xz);
    CHECK_FALSE(same_ab);  // A and B come from independent streams
  }
}

TEST_CASE("inputs not generated (--predict): zeros of the generated inputs' sizes") {
  const HostInputs made = make_inputs(Inputs::kRandom, 1, 16, 24, 32);
  const HostInputs none = make_inputs(Inputs::kRandom, 1, 16, 24, 32, /*fill=*/false);
  CHECK(none.a.size() == made.a.size());
  CHECK(none.b.size() == made.b.size());
  bool zeros = true, made_nonzero = false;
  for (size_t i = 0; i < none.a.size(); ++i) {
    zeros = zeros && bf16_bits(none.a[i]) == 0;
    made_nonzero = made_nonzero || bf16_bits(made.a[i]) != 0;
  }
  CHECK(zeros);
  CHECK(made_nonzero);
}

TEST_CASE("integer inputs are integers in [-2, 2], all of them occurring") {
  std::vector<__nv_bfloat16> v(10000);
  fill_input(Inputs::kInteger, 3, 0, v.data(), v.size());
  std::set<float> seen;
  for (const __nv_bfloat16& x : v) {
    const float f = bf16_to_float(x);
    REQUIRE(f == std::round(f));
    REQUIRE(f >= -2.0f);
    REQUIRE(f <= 2.0f);
    seen.insert(f);
  }
  CHECK(seen.size() == 5);
}

// Guards: the wide inputs exist to make FP32 sums round, so their order shows in the bits: they
// must span many binades, and a sum of them must depend on its order.
TEST_CASE("wide inputs span 16 binades, and FP32 sums of their products round") {
  std::vector<__nv_bfloat16> a(4096), b(4096);
  fill_input(Inputs::kWide, 1, 0, a.data(), a.size());
  fill_input(Inputs::kWide, 1, 1, b.data(), b.size());
  std::set<int> binades;
  for (const __nv_bfloat16& x : a) {
    const float f = bf16_to_float(x);
    REQUIRE(std::isfinite(f));
    REQUIRE(std::fabs(f) <= 128.0f);
    if (f != 0) binades.insert(std::ilogb(f));
  }
  CHECK(binades.size() >= 16);
  float forward = 0, backward = 0;
  for (size_t i = 0; i < a.size(); ++i) forward += bf16_to_float(a[i]) * bf16_to_float(b[i]);
  for (size_t i = a.size(); i-- > 0;) backward += bf16_to_float(a[i]) * bf16_to_float(b[i]);
  CHECK(forward != backward);
  CHECK(std::string(inputs_name(Inputs::kWide)) == "wide");
}

TEST_CASE("random inputs are BF16 values in [-1, 1] of both signs") {
  std::vector<__nv_bfloat16> v(100000);
  fill_input(Inputs::kRandom, 1, 0, v.data(), v.size());
  double sum = 0;
  int negative = 0;
  std::set<uint16_t> bits;
  for (const __nv_bfloat16& x : v) {
    const float f = bf16_to_float(x);
    REQUIRE(std::isfinite(f));
    REQUIRE(f >= -1.0f);
    REQUIRE(f <= 1.0f);
    // Representable: converting the float back gives the same bits.
    REQUIRE(float_to_bf16_bits(f) == bf16_bits(x));
    sum += f;
    negative += f < 0;
    bits.insert(bf16_bits(x));
  }
  CHECK(std::fabs(sum / v.size()) < 0.02);  // mean of uniform [-1, 1] is 0
  CHECK(negative > 45000);
  CHECK(negative < 55000);
  CHECK(bits.size() > 1000);  // many different values, not a handful
}

// ---------------------------------------------------------------------------------------------
// Reference and verification
// ---------------------------------------------------------------------------------------------

TEST_CASE("cpu_reference: C = A * B^T on a hand example") {
  // A = [[1, 2, 3], [-1, 0, 2]] (2 x 3), B = [[1, 1, 1], [0, -1, 2], [2, 0, -0.5]] (3 x 3).
  const float a_f[] = {1, 2, 3, -1, 0, 2};
  const float b_f[] = {1, 1, 1, 0, -1, 2, 2, 0, -0.5f};
  std::vector<__nv_bfloat16> a, b;
  for (float x : a_f) a.push_back(bf(x));
  for (float x : b_f) b.push_back(bf(x));
  std::vector<float> ref(6), s(6);
  cpu_reference(a.data(), b.data(), 2, 3, 3, ref.data(), s.data());
  const float want_ref[] = {6, 4, 0.5f, 1, 4, -3};
  const float want_s[] = {6, 8, 3.5f, 3, 4, 3};
  for (int i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(ref[i] == want_ref[i]);
    CHECK(s[i] == want_s[i]);
  }
  std::vector<float> ref2(6);
  cpu_reference(a.data(), b.data(), 2, 3, 3, ref2.data(), nullptr);  // S is optional
  CHECK(ref2 == ref);
}

TEST_CASE("cpu_reference: a single long dot product (K = 37, not a multiple of any block)") {
  const int64_t k = 37;
  std::vector<__nv_bfloat16> a(k), b(k);
  double want = 0;
  for (int64_t q = 0; q < k; ++q) {
    a[q] = bf(static_cast<float>(q % 5) - 2);
    b[q] = bf(static_cast<float>(q % 3) - 1);
    want += (q % 5 - 2.0) * (q % 3 - 1.0);
  }
  float ref = 0;
  cpu_reference(a.data(), b.data(), 1, 1, k, &ref, nullptr);
  CHECK(ref == static_cast<float>(want));
}

TEST_CASE("tolerance formula on a hand example") {
  // ref = 1, S = 2, K = 256: 2^-8 + 2*256*2^-23*2 + 2^-133 = 2^-8 + 2^-13 + 2^-133.
  CHECK(bf16_tolerance(1.0, 2.0, 256) == 0x1p-8 + 0x1p-13 + std::ldexp(1.0, -133));
  CHECK(bf16_tolerance(-1.0, 2.0, 256) == bf16_tolerance(1.0, 2.0, 256));  // |ref|
  CHECK(bf16_tolerance(0.0, 0.0, 4096) == std::ldexp(1.0, -133));
}

TEST_CASE("verify: exact match passes") {
  const int64_t m = 3, n = 4, k = 8;
  std::vector<float> ref(m * n), s(m * n);
  std::vector<__nv_bfloat16> out(m * n);
  for (int64_t i = 0; i < m * n; ++i) {
    ref[i] = static_cast<float>(i) - 5;
    s[i] = 20;
    out[i] = bf(ref[i]);
  }
  for (Inputs kind : {Inputs::kInteger, Inputs::kRandom}) {
    const VerifyResult r = verify(kind, out.data(), ref.data(), s.data(), m, n, k);
    CHECK(r.passed());
    CHECK(r.total == 12);
    CHECK(r.mismatches == 0);
    CHECK(r.nonfinite == 0);
    CHECK(r.max_abs_err == 0);
    CHECK(contains(format_verify(r), "PASS"));
  }
}

TEST_CASE("verify: integer inputs compare BF16_RN(reference) exactly") {
  // 257 is not a BF16 value: BF16_RN(257) = 256 (tie to even), so 256 is the right answer...
  std::vector<float> ref = {257.0f, 0.0f};
  std::vector<__nv_bfloat16> out = {bf(256.0f), bf16_from_bits(0x8000)};  // ...and -0 == +0
  CHECK(verify(Inputs::kInteger, out.data(), ref.data(), nullptr, 1, 2, 16).passed());
  // ...while 258 (the other neighbour) is wrong.
  out[0] = bf(258.0f);
  const VerifyResult r = verify(Inputs::kInteger, out.data(), ref.data(), nullptr, 1, 2, 16);
  CHECK_FALSE(r.passed());
  CHECK(r.mismatches == 1);
  CHECK(r.max_abs_err == 2.0);
  CHECK(contains(format_verify(r), "C[0][0]: expected 256, got 258 (exact)"));
}

TEST_CASE("verify: one wrong element is reported with its coordinates") {
  const int64_t m = 4, n = 5, k = 64;
  std::vector<float> ref(m * n, 1.0f), s(m * n, 1.0f);
  std::vector<__nv_bfloat16> out(m * n, bf(1.0f));
  out[2 * n + 3] = bf(-1.0f);  // C[2][3]
  for (Inputs kind : {Inputs::kInteger, Inputs::kRandom}) {
    const VerifyResult r = verify(kind, out.data(), ref.data(), s.data(), m, n, k);
    CHECK_FALSE(r.passed());
    CHECK(r.mismatches == 1);
    CHECK(r.nonfinite == 0);
    REQUIRE(r.first.size() == 1);
    CHECK(r.first[0].i == 2);
    CHECK(r.first[0].j == 3);
    CHECK(r.max_i == 2);
    CHECK(r.max_j == 3);
    CHECK(r.max_abs_err == 2.0);
    const std::string text = format_verify(r);
    CHECK(contains(text, "FAIL: 1 of 20 elements wrong, 0 NaN/Inf"));
    CHECK(contains(text, "at C[2][3]"));
    CHECK(contains(text, "C[2][3]: expected 1, got -1"));
  }
}

TEST_CASE("verify: NaN and Inf are detected and counted") {
  const int64_t m = 2, n = 8, k = 8;
  std::vector<float> ref(m * n, 0.5f), s(m * n, 1.0f);
  std::vector<__nv_bfloat16> out(m * n, bf(0.5f));
  out[0] = bf16_from_bits(0xFFFF);  // the NaN the harness poisons C with
  out[9] = bf16_from_bits(0x7F80);  // +Inf
  for (Inputs kind : {Inputs::kInteger, Inputs::kRandom}) {
    const VerifyResult r = verify(kind, out.data(), ref.data(), s.data(), m, n, k);
    CHECK(r.nonfinite == 2);
    CHECK(r.mismatches == 2);
    CHECK(r.max_abs_err == 0);  // over the finite outputs only
    REQUIRE(r.first.size() == 2);
    CHECK(r.first[1].i == 1);
    CHECK(r.first[1].j == 1);
    CHECK(contains(format_verify(r), "2 NaN/Inf"));
    CHECK(contains(format_verify(r), "got -nan"));  // 0xFFFF has the sign bit set
    CHECK(contains(format_verify(r), "got inf"));
  }
}

TEST_CASE("verify: random inputs pass inside the tolerance and fail outside") {
  const int64_t k = 256;
  const float ref = 1.0f, s = 2.0f;
  const double tol = bf16_tolerance(ref, s, k);  // 2^-8 + 2^-13 + tiny
  // 1 + 2^-7 (the next BF16 value above 1) is 2^-7 away: beyond tol.
  std::vector<__nv_bfloat16> out = {bf(1.0f + 0x1p-7f)};
  VerifyResult r = verify(Inputs::kRandom, out.data(), &ref, &s, 1, 1, k);
  CHECK_FALSE(r.passed());
  CHECK(r.first[0].tol == tol);
  CHECK(contains(format_verify(r), "(tol 0.00403)"));
  // With a larger S (much cancellation) the same output is accepted: 2*256*2^-23*64 = 2^-8.
  const float s_big = 64.0f;
  r = verify(Inputs::kRandom, out.data(), &ref, &s_big, 1, 1, k);
  CHECK(r.passed());
  CHECK(r.max_ratio == doctest::Approx(0x1p-7 / bf16_tolerance(ref, s_big, k)));
  CHECK(contains(format_verify(r), "max err/tol"));
}

TEST_CASE("verify: at most 8 mismatches are listed") {
  const int64_t m = 4, n = 4;
  std::vector<float> ref(m * n, 1.0f);
  std::vector<__nv_bfloat16> out(m * n, bf(3.0f));
  const VerifyResult r = verify(Inputs::kInteger, out.data(), ref.data(), nullptr, m, n, 8);
  CHECK(r.mismatches == 16);
  CHECK(r.first.size() == 8);
  CHECK(contains(format_verify(r), "... and 8 more"));
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

TEST_CASE("csv_field quotes only when needed") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("") == "");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
}

TEST_CASE("csv_line has the header's columns in order") {
  CsvRecord r = sample_record();
  r.gpu = "Weird GPU, rev 2";
  const std::string line = csv_line(r);
  CHECK(line.back() == '\n');
  CHECK(line ==
        "1,test_step,\"Weird GPU, rev 2\",148,,,,4096,4096,4096,bf16,random,20,,,,,,yes,"
        "2025-01-01T00:00:00Z,abc123\n");
  const std::string header = csv_header();
  CHECK(header.rfind("step,step_name,gpu,sm_count,driver,cuda_runtime,cublas,m,n,k,dtype,", 0) ==
        0);
  CHECK(count_of(header, ",") == count_of(csv_line(sample_record()), ","));
}

TEST_CASE("csv_append writes the header once") {
  TempDir dir;
  const std::string path = dir.file("results.csv");
  CHECK(csv_check(path).empty());  // a missing file is fine
  REQUIRE(csv_append(path, sample_record()).empty());
  REQUIRE(csv_append(path, sample_record()).empty());
  const std::string text = read_all(path);
  CHECK(count_of(text, csv_header()) == 1);
  CHECK(text == csv_header() + csv_line(sample_record()) + csv_line(sample_record()));
  CHECK(csv_check(path).empty());

  // An empty existing file gets the header too.
  const std::string empty = dir.file("empty.csv");
  write_all(empty, "");
  REQUIRE(csv_append(empty, sample_record()).empty());
  CHECK(read_all(empty) == csv_header() + csv_line(sample_record()));
}

TEST_CASE("csv refuses files that are not ours, and leaves them alone") {
  TempDir dir;
  const std::string foreign = dir.file("foreign.csv");
  write_all(foreign, "name,value\nx,1\n");
  CHECK(contains(csv_check(foreign), "not this harness's CSV header"));
  CHECK(contains(csv_append(foreign, sample_record()), "refusing"));
  CHECK(read_all(foreign) == "name,value\nx,1\n");

  // Our header, but a last row cut short: appending would glue two rows together.
  const std::string cut = dir.file("cut.csv");
  write_all(cut, csv_header() + "1,test_st");
  CHECK(contains(csv_check(cut), "newline"));
  CHECK(contains(csv_append(cut, sample_record()), "newline"));
  CHECK(read_all(cut) == csv_header() + "1,test_st");

  // A file holding only part of the header.
  const std::string partial = dir.file("partial.csv");
  write_all(partial, "step,step_name\n");
  CHECK_FALSE(csv_check(partial).empty());

  // A directory is no CSV file.
  CHECK(contains(csv_check(dir.path()), "directory"));
  CHECK_FALSE(csv_append(dir.path(), sample_record()).empty());
}

TEST_CASE("format_version and utc_iso8601") {
  CHECK(format_version(13000) == "13.0");
  CHECK(format_version(12080) == "12.8");
  CHECK(format_version(0).empty());
  CHECK(utc_iso8601(0) == "1970-01-01T00:00:00Z");
  CHECK(utc_iso8601(1700000000) == "2023-11-14T22:13:20Z");
}

TEST_CASE("program_name and inputs_name") {
  CHECK(program_name(kSpec) == "step01");
  const StepSpec twelve = {12, "x", "y", Arch::kSm80Plus, 8};
  CHECK(program_name(twelve) == "step12");
  CHECK(std::string(inputs_name(Inputs::kRandom)) == "random");
  CHECK(std::string(inputs_name(Inputs::kInteger)) == "integer");
}
