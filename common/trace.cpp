// trace.cpp — Chrome-trace JSON for tcg::trace::Trace (common/trace.h), and the rules every trace
// must satisfy.
//
// Times. A span's start and end are each rounded to a whole nanosecond before they are written,
// and its duration is the difference of the two rounded values. Rounding is monotone, so spans
// that nest, touch or are disjoint in the Trace still do in the file (a partial overlap below
// 0.5 ns may become a touch). "ts" and "dur" are microseconds with three decimals, printed from
// the integer nanoseconds (no binary fraction can turn 1.000 into 0.999...).
//
// The file is always valid JSON that Perfetto opens: strings are escaped, a non-finite start or
// duration is written as 0 and a negative duration as 0 (check_trace reports both; the writer
// does not hide them from it). Every CTA that has spans gets a process_name ("CTA <pid>" unless
// Trace::cta_names names it) and every track that has spans a thread_name ("warp <tid>", or
// "async <tid>" for tracks from kAsyncTrackBase on, unless Trace::track_names names it); names
// given for a CTA or track without spans are left out, so that the file never shows empty tracks.
#include "common/trace.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <tuple>

namespace tcg::trace {

namespace {

void append_escaped(std::string& out, const std::string& s) {
  out += '"';
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  out += '"';
}

// Whole nanoseconds; a non-finite value counts as 0 (see the top of the file).
long long whole_ns(double ns) { return std::isfinite(ns) ? std::llround(ns) : 0; }

// Integer nanoseconds as microseconds with exactly three decimals: 1234 -> "1.234".
void append_us(std::string& out, long long ns) {
  const bool negative = ns < 0;
  const unsigned long long a = negative ? 0ULL - static_cast<unsigned long long>(ns)
                                        : static_cast<unsigned long long>(ns);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", negative ? "-" : "", a / 1000, a % 1000);
  out += buf;
}

struct Rounded {
  const Span* span;
  long long start, end;  // whole ns, end >= start
};

Rounded round_span(const Span& s) {
  const long long start = whole_ns(s.start_ns);
  const double end_exact = s.start_ns + s.dur_ns;
  long long end = std::isfinite(end_exact) && std::isfinite(s.dur_ns) ? std::llround(end_exact) : start;
  if (end < start) end = start;
  return {&s, start, end};
}

// (pid, tid, start, longer first), then name, for a deterministic order where a parent precedes
// the spans it contains.
bool span_order(const Rounded& a, const Rounded& b) {
  return std::make_tuple(a.span->cta, a.span->track, a.start, b.end, a.span->name) <
         std::make_tuple(b.span->cta, b.span->track, b.start, a.end, b.span->name);
}

std::string default_track_name(int track) {
  return track >= kAsyncTrackBase ? "async " + std::to_string(track) : "warp " + std::to_string(track);
}

void append_meta_event(std::string& out, const char* what, uint32_t pid, int tid, const std::string& name) {
  out += "{\"name\":\"";
  out += what;
  out += "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"args\":{\"name\":";
  append_escaped(out, name);
  out += "}}";
}

std::string interval(const Span& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, " [%.3f ns, +%.3f ns]", s.start_ns, s.dur_ns);
  return buf;
}

std::string describe(const Trace& t, const Span& s) {
  const auto it = t.track_names.find({s.cta, s.track});
  const std::string track = it != t.track_names.end() ? it->second : default_track_name(s.track);
  return "CTA " + std::to_string(s.cta) + ", " + track + " (tid " + std::to_string(s.track) + "): \"" +
         s.name + "\"" + interval(s);
}

}  // namespace

std::string to_chrome_json(const Trace& t) {
  std::vector<Rounded> spans;
  spans.reserve(t.spans.size());
  for (const Span& s : t.spans) spans.push_back(round_span(s));
  std::stable_sort(spans.begin(), spans.end(), span_order);

  std::set<uint32_t> ctas;
  std::set<std::pair<uint32_t, int>> tracks;
  for (const Rounded& r : spans) {
    ctas.insert(r.span->cta);
    tracks.insert({r.span->cta, r.span->track});
  }

  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  auto next = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const uint32_t cta : ctas) {
    const auto it = t.cta_names.find(cta);
    next();
    append_meta_event(out, "process_name", cta, 0, it != t.cta_names.end() ? it->second : "CTA " + std::to_string(cta));
  }
  for (const auto& track : tracks) {
    const auto it = t.track_names.find(track);
    next();
    append_meta_event(out, "thread_name", track.first, track.second,
                      it != t.track_names.end() ? it->second : default_track_name(track.second));
  }
  for (const Rounded& r : spans) {
    const Span& s = *r.span;
    next();
    out += "{\"name\":";
    append_escaped(out, s.name);
    out += ",\"cat\":";
    append_escaped(out, s.cat);
    out += ",\"ph\":\"X\",\"ts\":";
    append_us(out, r.start);
    out += ",\"dur\":";
    append_us(out, r.end - r.start);
    out += ",\"pid\":" + std::to_string(s.cta) + ",\"tid\":" + std::to_string(s.track);
    if (!s.args.empty()) {
      out += ",\"args\":{";
      bool first_arg = true;
      for (const auto& [key, value] : s.args) {
        if (!first_arg) out += ',';
        first_arg = false;
        append_escaped(out, key);
        out += ':';
        append_escaped(out, value);
      }
      out += '}';
    }
    out += '}';
  }
  out += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{";
  bool first_meta = true;
  for (const auto& [key, value] : t.meta) {
    if (!first_meta) out += ',';
    first_meta = false;
    out += '\n';
    append_escaped(out, key);
    out += ':';
    append_escaped(out, value);
  }
  out += "\n}}\n";
  return out;
}

std::string write_chrome_json(const Trace& t, const std::string& path) {
  const std::string text = to_chrome_json(t);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "cannot write " + path + ": " + std::strerror(errno);
  const size_t written = std::fwrite(text.data(), 1, text.size(), f);
  const bool write_failed = written != text.size() || std::ferror(f) != 0;
  const int saved = errno;
  const bool close_failed = std::fclose(f) != 0;
  if (write_failed || close_failed)
    return "cannot write " + path + ": " + std::strerror(write_failed ? saved : errno);
  return "";
}

std::string check_trace(const Trace& t, double slack_ns) {
  for (const Span& s : t.spans) {
    if (s.name.empty()) return describe(t, s) + ": a span without a name";
    if (s.cat.empty()) return describe(t, s) + ": a span without a category";
    if (!std::isfinite(s.start_ns)) return describe(t, s) + ": start is not a finite number";
    if (!std::isfinite(s.dur_ns)) return describe(t, s) + ": duration is not a finite number";
    if (s.dur_ns < 0) return describe(t, s) + ": negative duration";
  }
  // Per track, in order of start (longer first): a stack of the spans that contain the current
  // one. A span must end before the next one starts (then it is popped) or contain it.
  std::vector<const Span*> order;
  order.reserve(t.spans.size());
  for (const Span& s : t.spans) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const Span* a, const Span* b) {
    return std::make_tuple(a->cta, a->track, a->start_ns, -a->dur_ns) <
           std::make_tuple(b->cta, b->track, b->start_ns, -b->dur_ns);
  });
  std::vector<const Span*> open;
  for (size_t i = 0; i < order.size(); ++i) {
    const Span& s = *order[i];
    if (i > 0 && (order[i - 1]->cta != s.cta || order[i - 1]->track != s.track)) open.clear();
    while (!open.empty() && open.back()->start_ns + open.back()->dur_ns <= s.start_ns + slack_ns) open.pop_back();
    if (!open.empty()) {
      const Span& parent = *open.back();
      if (s.start_ns + s.dur_ns > parent.start_ns + parent.dur_ns + slack_ns)
        return describe(t, s) + " partly overlaps \"" + parent.name + "\"" + interval(parent);
    }
    open.push_back(&s);
  }
  return "";
}

}  // namespace tcg::trace
