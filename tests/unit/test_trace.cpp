// test_trace.cpp — Chrome-trace output (common/trace.h): JSON escaping and validity, time
// formatting, the order of events, metadata, and check_trace's rules (partial overlap on one
// track, negative or non-finite durations, unnamed spans; nesting and touching ends accepted).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "common/trace.h"

using namespace tcg::trace;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A strict JSON syntax check (RFC 8259 grammar; no NaN, no trailing commas, no control
// characters in strings), enough to know that a JSON reader accepts the file.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool valid() {
    ws();
    if (!value()) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool lit(const char* w) {
    const std::string word(w);
    if (s_.compare(i_, word.size(), word) != 0) return false;
    i_ += word.size();
    return true;
  }
  bool value() {
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return string();
    if (c == 't') return lit("true");
    if (c == 'f') return lit("false");
    if (c == 'n') return lit("null");
    return number();
  }
  bool object() {
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      ws();
      if (!string()) return false;
      ws();
      if (i_ >= s_.size() || s_[i_++] != ':') return false;
      ws();
      if (!value()) return false;
      ws();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == '}') return ++i_, true;
      if (s_[i_++] != ',') return false;
    }
  }
  bool array() {
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    for (;;) {
      ws();
      if (!value()) return false;
      ws();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ']') return ++i_, true;
      if (s_[i_++] != ',') return false;
    }
  }
  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int h = 0; h < 4; ++h)
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return false;
        }
      }
    }
    return false;
  }
  bool number() {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    size_t digits = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_, ++digits;
    if (digits == 0) return false;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      size_t frac = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_, ++frac;
      if (frac == 0) return false;
    }
    return i_ > start;
  }
  const std::string& s_;
  size_t i_ = 0;
};

bool valid_json(const std::string& s) { return JsonChecker(s).valid(); }

Span span(uint32_t cta, int track, const std::string& name, double start, double dur,
          const char* cat = kCatPhase) {
  Span s;
  s.cta = cta;
  s.track = track;
  s.name = name;
  s.cat = cat;
  s.start_ns = start;
  s.dur_ns = dur;
  return s;
}

}  // namespace

TEST_CASE("to_chrome_json: escapes strings and stays valid JSON") {
  Trace t;
  Span s = span(0, 1, "wait \"full\" \\ bar\n\ttab\x01", 0, 10);
  s.args["stage"] = "2";
  s.args["quote\""] = "a\rb";
  t.spans.push_back(s);
  t.track_names[{0, 1}] = "warp 1 (MMA) \"x\"";
  t.cta_names[0] = "CTA 0\\";
  t.meta["device"] = "NVIDIA H100 80GB HBM3";
  t.meta["note"] = "line1\nline2 \x7f";
  const std::string j = to_chrome_json(t);
  CHECK(valid_json(j));
  CHECK(contains(j, R"("name":"wait \"full\" \\ bar\n\ttab\u0001")"));
  CHECK(contains(j, R"("quote\"":"a\rb")"));
  CHECK(contains(j, R"("stage":"2")"));
  CHECK(contains(j, R"({"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"warp 1 (MMA) \"x\""}})"));
  CHECK(contains(j, R"({"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"CTA 0\\"}})"));
  CHECK(contains(j, R"("otherData":{)"));
  CHECK(contains(j, R"("note":"line1\nline2 \u007f")"));
  CHECK(contains(j, R"("displayTimeUnit":"ns")"));
  // UTF-8 passes through.
  Trace u;
  u.spans.push_back(span(0, 0, "µs \xE2\x86\x92 ns", 0, 1));
  CHECK(valid_json(to_chrome_json(u)));
  CHECK(contains(to_chrome_json(u), "\xE2\x86\x92"));
}

TEST_CASE("to_chrome_json: microseconds with nanosecond resolution") {
  Trace t;
  t.spans.push_back(span(3, 2, "a", 1234.4, 1000.2));  // [1234, 2235) after rounding
  t.spans.push_back(span(3, 2, "b", 0, 0.4));           // zero after rounding
  t.spans.push_back(span(3, 2, "c", 5e9, 7));           // 5 s into the kernel
  const std::string j = to_chrome_json(t);
  CHECK(valid_json(j));
  CHECK(contains(j, R"("name":"a","cat":"phase","ph":"X","ts":1.234,"dur":1.001,"pid":3,"tid":2)"));
  CHECK(contains(j, R"("name":"b","cat":"phase","ph":"X","ts":0.000,"dur":0.000,"pid":3,"tid":2)"));
  CHECK(contains(j, R"("ts":5000000.000,"dur":0.007)"));
}

TEST_CASE("to_chrome_json: sorted by pid, tid, start, longer first; default names") {
  Trace t;
  t.spans.push_back(span(1, 0, "late", 50, 10));
  t.spans.push_back(span(0, 5, "other warp", 0, 10));
  t.spans.push_back(span(0, 1, "child", 10, 5));
  t.spans.push_back(span(0, 1, "parent", 10, 20));
  t.spans.push_back(span(0, 1, "first", 0, 5));
  t.spans.push_back(span(0, 100, "TMA", 3, 4, kCatTma));
  t.track_names[{7, 3}] = "a track without spans";
  t.cta_names[9] = "a CTA without spans";
  const std::string j = to_chrome_json(t);
  CHECK(valid_json(j));
  const size_t first = j.find("\"first\""), parent = j.find("\"parent\""), child = j.find("\"child\"");
  const size_t other = j.find("\"other warp\""), tma = j.find("\"TMA\""), late = j.find("\"late\"");
  REQUIRE(late != std::string::npos);
  CHECK(first < parent);
  CHECK(parent < child);
  CHECK(child < other);
  CHECK(other < tma);
  CHECK(tma < late);
  // Metadata first; defaults for what the Trace does not name; nothing for empty tracks.
  CHECK(j.find("process_name") < first);
  CHECK(contains(j, R"("pid":1,"tid":0,"args":{"name":"CTA 1"})"));
  CHECK(contains(j, R"("pid":0,"tid":5,"args":{"name":"warp 5"})"));
  CHECK(contains(j, R"("pid":0,"tid":100,"args":{"name":"async 100"})"));
  CHECK_FALSE(contains(j, "without spans"));
}

TEST_CASE("to_chrome_json: non-finite and negative values still give valid JSON") {
  Trace t;
  t.spans.push_back(span(0, 0, "nan", std::nan(""), 5));
  t.spans.push_back(span(0, 1, "inf", 0, std::numeric_limits<double>::infinity()));
  t.spans.push_back(span(0, 2, "negative", 10, -3));
  const std::string j = to_chrome_json(t);
  CHECK(valid_json(j));
  CHECK_FALSE(contains(j, "nan,"));
  CHECK_FALSE(contains(j, "inf,"));
  CHECK(contains(j, R"("name":"negative","cat":"phase","ph":"X","ts":0.010,"dur":0.000)"));
  CHECK(valid_json(to_chrome_json(Trace{})));
}

TEST_CASE("write_chrome_json: writes the file, or says why not") {
  Trace t;
  t.spans.push_back(span(0, 0, "setup", 0, 100));
  char templ[] = "/tmp/test_trace_XXXXXX";
  const char* dir = mkdtemp(templ);
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/t.json";
  CHECK(write_chrome_json(t, path).empty());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == to_chrome_json(t));
  std::remove(path.c_str());
  const std::string err = write_chrome_json(t, std::string(dir) + "/no/such/dir/t.json");
  CHECK(contains(err, "cannot write"));
  CHECK(err.find('\n') == std::string::npos);
  rmdir(dir);
}

TEST_CASE("check_trace: accepts nesting, touching ends and separate tracks") {
  Trace t;
  t.spans.push_back(span(0, 0, "mainloop", 0, 100));
  t.spans.push_back(span(0, 0, "k-tile", 0, 50));    // shares the parent's start
  t.spans.push_back(span(0, 0, "k-tile", 50, 50));   // touches its sibling, shares the parent's end
  t.spans.push_back(span(0, 0, "load", 60, 10));
  t.spans.push_back(span(0, 0, "epilogue", 100, 20));  // touches the mainloop
  t.spans.push_back(span(0, 0, "empty", 120, 0));
  t.spans.push_back(span(0, 0, "same", 200, 10));
  t.spans.push_back(span(0, 0, "same", 200, 10));    // identical spans nest
  t.spans.push_back(span(0, 1, "overlaps only across tracks", 40, 100));
  t.spans.push_back(span(1, 0, "overlaps only across CTAs", 40, 100));
  CHECK(check_trace(t) == "");
  CHECK(check_trace(Trace{}) == "");
}

TEST_CASE("check_trace: partial overlap on one track names both spans") {
  Trace t;
  t.spans.push_back(span(2, 3, "wait full", 0, 100));
  t.spans.push_back(span(2, 3, "issue", 60, 100));
  t.track_names[{2, 3}] = "warp 3 (MMA)";
  const std::string e = check_trace(t);
  CHECK(contains(e, "partly overlaps"));
  CHECK(contains(e, "\"wait full\""));
  CHECK(contains(e, "\"issue\""));
  CHECK(contains(e, "CTA 2"));
  CHECK(contains(e, "warp 3 (MMA)"));
  // Overlap by less than the slack is a touch; by more it is not.
  Trace u;
  u.spans.push_back(span(0, 0, "a", 0, 100.4));
  u.spans.push_back(span(0, 0, "b", 100, 50));
  CHECK(check_trace(u) != "");
  CHECK(check_trace(u, 0.5) == "");
  CHECK(check_trace(u, 0.3) != "");
  // A child that outlives its parent (inside a grandparent) is caught too.
  Trace v;
  v.spans.push_back(span(0, 0, "grandparent", 0, 1000));
  v.spans.push_back(span(0, 0, "parent", 10, 100));
  v.spans.push_back(span(0, 0, "child", 50, 100));
  CHECK(contains(check_trace(v), "\"child\""));
}

TEST_CASE("check_trace: negative, NaN and infinite durations; unnamed spans") {
  auto one = [](const Span& s) {
    Trace t;
    t.spans.push_back(span(0, 0, "fine", 0, 1));
    t.spans.push_back(s);
    return check_trace(t);
  };
  CHECK(contains(one(span(0, 0, "back", 10, -1)), "negative duration"));
  CHECK(contains(one(span(0, 0, "nan", 10, std::nan(""))), "not a finite number"));
  CHECK(contains(one(span(0, 0, "nan start", std::nan(""), 1)), "not a finite number"));
  CHECK(contains(one(span(0, 0, "inf", 10, std::numeric_limits<double>::infinity())), "not a finite number"));
  CHECK(contains(one(span(0, 0, "", 10, 1)), "without a name"));
  CHECK(contains(one(span(0, 0, "no category", 10, 1, "")), "without a category"));
  CHECK(one(span(0, 0, "zero", 10, 0)) == "");
}
