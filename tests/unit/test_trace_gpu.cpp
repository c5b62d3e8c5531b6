// test_trace_gpu.cpp — the GPU timeline's host half (common/harness/traces.cpp): record buffers as
// a traced kernel leaves them (written here by a fake recorder that follows the kernel's rule,
// trace_admit) turned into spans: nesting, times relative to the launch's first stamp, track
// numbers and names, CTA names, broken annotations reported, dropped records counted, the
// observed timer step; trace_capacity; first_bitwise_difference (the traced launch's C against
// the checked one's); and write_trace, which finishes the traces of both clocks.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/harness/gpu.h"
#include "common/harness/internal.h"

using namespace tcg;
using tcg::harness::GpuTrace;
using tcg::harness::trace_from_records;

namespace {

// A zeroed record buffer for `ctas` and the recorder of one of its streams, on the host.
struct FakeLaunch {
  TraceBuf layout;
  std::vector<TraceRecord> records;
  FakeLaunch(std::vector<uint32_t> ctas, uint32_t capacity) {
    layout.num_ctas = uint32_t(ctas.size());
    for (size_t i = 0; i < ctas.size(); ++i) layout.cta_ids[i] = ctas[i];
    layout.capacity = capacity;
    records.assign(layout.total_records(), TraceRecord{});
  }
  GpuTrace convert() const { return trace_from_records(layout, records.data()); }
};

class FakeStream {
 public:
  FakeStream(FakeLaunch& l, uint32_t slot, uint32_t warp, uint32_t stream, uint32_t smid = 7)
      : l_(l), base_(l.records.data() + l.layout.stream_offset(slot, warp, stream)) {
    reinterpret_cast<TraceStreamHeader*>(base_)->smid = smid;
  }
  FakeStream& begin(Phase p, uint64_t t, uint32_t arg = 0) { return add(p, true, t, arg); }
  FakeStream& end(Phase p, uint64_t t, uint32_t arg = 0) { return add(p, false, t, arg); }

 private:
  // What PhaseTrace::record does.
  FakeStream& add(Phase p, bool is_begin, uint64_t t, uint32_t arg) {
    if (trace_admit(stored_, skipped_, l_.layout.capacity, p, is_begin))
      base_[++stored_] = TraceRecord{t, uint32_t(p) << 1 | uint32_t(is_begin), arg};
    else
      ++reinterpret_cast<TraceStreamHeader*>(base_)->dropped;
    return *this;
  }
  FakeLaunch& l_;
  TraceRecord* base_;
  uint32_t stored_ = 0, skipped_ = 0;
};

const trace::Span* find(const trace::Trace& t, uint32_t cta, int track, const std::string& name) {
  for (const trace::Span& s : t.spans)
    if (s.cta == cta && s.track == track && s.name == name) return &s;
  return nullptr;
}

bool any_error_contains(const GpuTrace& g, const std::string& what) {
  for (const std::string& e : g.errors)
    if (e.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("trace_from_records: nested spans, relative times, tracks and names") {
  FakeLaunch l({5, 9}, 64);
  // CTA 5, warp 0, warp-uniform stream: setup, then a mainloop holding one k-tile, which holds
  // the tile loads and the mma.sync.
  FakeStream(l, 0, 0, kTraceWarpStream, 12)
      .begin(Phase::kSetup, 1000)
      .end(Phase::kSetup, 1100)
      .begin(Phase::kMainloop, 1100)
      .begin(Phase::kKTile, 1110, 3)
      .begin(Phase::kLoadTiles, 1120)
      .end(Phase::kLoadTiles, 1400)
      .begin(Phase::kMmaSync, 1400)
      .end(Phase::kMmaSync, 1900)
      .end(Phase::kKTile, 1910, 3)
      .end(Phase::kMainloop, 2000);
  // CTA 5, warp 1: setup in lane 0's stream, the producer loop in its elected thread's stream.
  FakeStream(l, 0, 1, kTraceWarpStream, 12).begin(Phase::kSetup, 1000).end(Phase::kSetup, 1100);
  FakeStream(l, 0, 1, kTraceElectedStream, 12)
      .begin(Phase::kProducer, 1150)
      .begin(Phase::kWaitMmaDone, 1200, 2)
      .end(Phase::kWaitMmaDone, 1232, 2)
      .end(Phase::kProducer, 3000);
  // CTA 9 starts earliest: its first stamp is the launch's time zero.
  FakeStream(l, 1, 3, kTraceWarpStream, 40).begin(Phase::kEpilogue, 900).end(Phase::kEpilogue, 5000);

  const GpuTrace g = l.convert();
  CHECK(g.errors.empty());
  CHECK(g.records == 10 + 2 + 4 + 2);
  CHECK(g.dropped == 0);
  CHECK(g.silent_ctas.empty());
  REQUIRE(g.trace.spans.size() == 9);

  const trace::Span* setup = find(g.trace, 5, 0, "setup");
  REQUIRE(setup != nullptr);
  CHECK(setup->start_ns == 100);  // 1000 - 900
  CHECK(setup->dur_ns == 100);
  CHECK(setup->cat == std::string(trace::kCatPhase));
  const trace::Span* ktile = find(g.trace, 5, 0, "k-tile");
  REQUIRE(ktile != nullptr);
  CHECK(ktile->start_ns == 210);
  CHECK(ktile->dur_ns == 800);
  CHECK(ktile->args.at("k-tile") == "3");
  const trace::Span* load = find(g.trace, 5, 0, "load A, B tiles");
  REQUIRE(load != nullptr);
  CHECK(load->cat == std::string(trace::kCatIssue));
  CHECK(find(g.trace, 5, 0, "ldmatrix + mma.sync") != nullptr);
  // The elected stream of warp 1 is track 3; the wait is named by its stage.
  const trace::Span* wait = find(g.trace, 5, 3, "wait mma_done_bar[2]");
  REQUIRE(wait != nullptr);
  CHECK(wait->cat == std::string(trace::kCatWait));
  CHECK(wait->start_ns == 300);
  CHECK(wait->dur_ns == 32);
  CHECK(find(g.trace, 5, 3, "producer") != nullptr);
  CHECK(find(g.trace, 9, 6, "epilogue") != nullptr);

  // Tracks are named by warp, stream and role (the first coarse phase besides setup/teardown).
  CHECK(g.trace.track_names.at({5, 0}) == "warp 0 (mainloop)");
  CHECK(g.trace.track_names.at({5, 2}) == "warp 1 (producer)");
  CHECK(g.trace.track_names.at({5, 3}) == "warp 1 (elected, producer)");
  CHECK(g.trace.track_names.at({9, 6}) == "warp 3 (epilogue)");
  CHECK(g.trace.cta_names.at(5) == "CTA 5 (SM 12)");
  CHECK(g.trace.cta_names.at(9) == "CTA 9 (SM 40)");
  CHECK(g.trace.meta.at("dropped_records") == "0");

  // The timer steps seen between consecutive stamps of a stream: 10, 32, 50, ... -> 10; gcd 2.
  CHECK(g.min_step_ns == 10);
  CHECK(g.gcd_step_ns == 2);
  CHECK(trace::check_trace(g.trace) == "");
}

TEST_CASE("trace_from_records: broken annotations are errors, their spans left out") {
  SUBCASE("a begin never ended") {
    FakeLaunch l({0}, 32);
    FakeStream(l, 0, 2, kTraceWarpStream)
        .begin(Phase::kEpilogue, 100)
        .begin(Phase::kWaitMainloopDone, 110)
        .end(Phase::kWaitMainloopDone, 150);
    const GpuTrace g = l.convert();
    REQUIRE(g.errors.size() == 1);
    CHECK(any_error_contains(g, "CTA 0, warp 2: \"epilogue\" begun at +0.000 us never ended"));
    REQUIRE(g.trace.spans.size() == 1);
    CHECK(g.trace.spans[0].name == "wait mainloop_done_bar");
  }
  SUBCASE("an end without a begin") {
    FakeLaunch l({0}, 32);
    FakeStream(l, 0, 0, kTraceElectedStream).end(Phase::kMma, 100);
    const GpuTrace g = l.convert();
    REQUIRE(g.errors.size() == 1);
    CHECK(any_error_contains(g, "CTA 0, warp 0 (elected): end of \"mma\""));
    CHECK(any_error_contains(g, "without a begin"));
    CHECK(g.trace.spans.empty());
  }
  SUBCASE("an inner span still open when its parent ends") {
    FakeLaunch l({0}, 32);
    FakeStream(l, 0, 1, kTraceElectedStream)
        .begin(Phase::kMma, 100)
        .begin(Phase::kWaitTmaFull, 120, 1)
        .end(Phase::kMma, 200);
    const GpuTrace g = l.convert();
    REQUIRE(g.errors.size() == 1);
    CHECK(any_error_contains(g, "\"wait tma_full_bar\" begun at +0.020 us is not ended before \"mma\" ends"));
    REQUIRE(g.trace.spans.size() == 1);
    CHECK(g.trace.spans[0].name == "mma");
    CHECK(g.trace.spans[0].dur_ns == 100);
  }
  SUBCASE("an unknown phase") {
    FakeLaunch l({0}, 32);
    TraceRecord* s = l.records.data() + l.layout.stream_offset(0, 4, kTraceWarpStream);
    s[1] = TraceRecord{100, uint32_t(Phase::kCount) << 1 | 1, 0};
    const GpuTrace g = l.convert();
    REQUIRE(g.errors.size() == 1);
    CHECK(any_error_contains(g, "CTA 0, warp 4: record 1 has an unknown phase"));
  }
}

TEST_CASE("trace_from_records: a stream ends at its first zero stamp, or at its capacity") {
  FakeLaunch l({0}, 32);
  TraceRecord* s = l.records.data() + l.layout.stream_offset(0, 0, kTraceWarpStream);
  s[1] = TraceRecord{100, uint32_t(Phase::kSetup) << 1 | 1, 0};
  s[2] = TraceRecord{150, uint32_t(Phase::kSetup) << 1, 0};
  s[4] = TraceRecord{900, uint32_t(Phase::kEpilogue) << 1 | 1, 0};  // after the end: not read
  // Stream 1 of warp 1: full to the last record, no zero stamp after it.
  TraceRecord* f = l.records.data() + l.layout.stream_offset(0, 1, kTraceElectedStream);
  for (uint32_t i = 1; i < 32; ++i) f[i] = TraceRecord{200 + i, uint32_t(Phase::kMma) << 1 | (i % 2), 0};
  f[31] = TraceRecord{300, uint32_t(Phase::kTeardown) << 1 | 1, 0};  // begun, never ended
  const GpuTrace g = l.convert();
  CHECK(g.records == 2 + 31);
  REQUIRE(g.errors.size() == 1);
  CHECK(any_error_contains(g, "\"teardown\" begun at +0.200 us never ended"));
  CHECK(g.trace.spans.size() == 1 + 15);
}

TEST_CASE("trace_from_records: full streams drop fine spans whole and count them") {
  const uint32_t cap = kTraceMinCapacity;  // 32 records: 31 after the header
  FakeLaunch l({0, 1}, cap);
  FakeStream st(l, 0, 1, kTraceElectedStream);
  st.begin(Phase::kMma, 1000);  // stamps are never 0: a zero stamp ends a stream
  uint64_t t = 1010;
  for (uint32_t kt = 0; kt < 40; ++kt, t += 10) st.begin(Phase::kWaitTmaFull, t, kt % 4).end(Phase::kWaitTmaFull, t + 5, kt % 4);
  // Nested fine spans reaching into the reserve: kept or dropped whole.
  st.begin(Phase::kKTile, t).begin(Phase::kLoadTiles, t + 1).end(Phase::kLoadTiles, t + 2).end(Phase::kKTile, t + 3);
  st.end(Phase::kMma, t + 10);
  const GpuTrace g = l.convert();
  CHECK(g.errors.empty());
  // Fine begins are stored while 1 + stored < cap - reserve = 16: the mma begin and 7 waits
  // (records 2..15) ... then everything fine is dropped; the coarse end still fits.
  CHECK(g.records == 1 + 7 * 2 + 1);
  CHECK(g.dropped == (40 - 7) * 2 + 4);
  CHECK(g.trace.meta.at("dropped_records") == std::to_string(g.dropped));
  CHECK(find(g.trace, 0, 3, "mma") != nullptr);
  CHECK(find(g.trace, 0, 3, "wait tma_full_bar[2]") != nullptr);
  // CTA 1 recorded nothing: not in the grid.
  CHECK(g.silent_ctas == std::vector<uint32_t>{1});
  CHECK(trace::check_trace(g.trace) == "");
}

TEST_CASE("trace_admit: the end of a stored fine begin may use the reserve") {
  const uint32_t cap = 40;
  uint32_t skipped = 0;
  // One record below the fine limit: a fine begin is stored, and its end goes into the reserve.
  const uint32_t stored = cap - kTraceCoarseReserve - 2;
  CHECK(trace_admit(stored, skipped, cap, Phase::kKTile, true));
  CHECK_FALSE(trace_admit(stored + 1, skipped, cap, Phase::kLoadTiles, true));  // dropped ...
  CHECK(skipped == 1);
  CHECK_FALSE(trace_admit(stored + 1, skipped, cap, Phase::kLoadTiles, false));  // ... with its end
  CHECK(skipped == 0);
  CHECK(trace_admit(stored + 1, skipped, cap, Phase::kKTile, false));
  // Coarse records fill the stream to the end, then they too are dropped.
  CHECK(trace_admit(cap - 2, skipped, cap, Phase::kTeardown, true));
  CHECK_FALSE(trace_admit(cap - 1, skipped, cap, Phase::kTeardown, false));
}

TEST_CASE("trace_capacity: 4096 records per stream, less when many CTAs are traced") {
  CHECK(harness::trace_capacity(1) == 4096);
  CHECK(harness::trace_capacity(4) == 4096);
  CHECK(harness::trace_capacity(64) == 1024);
  CHECK(harness::trace_capacity(1u << 20) == kTraceMinCapacity);
  // The buffer of 64 CTAs stays within 64 MiB.
  CHECK(size_t(64) * kTraceMaxWarps * kTraceStreams * harness::trace_capacity(64) * sizeof(TraceRecord) <=
        (size_t(64) << 20));
}

TEST_CASE("first_bitwise_difference: the first element whose bits differ, as C[row][col] in hex") {
  // A 3 x 4 C of 16-bit elements.
  std::vector<uint16_t> checked(12), traced(12);
  for (size_t i = 0; i < checked.size(); ++i) checked[i] = traced[i] = uint16_t(0x3f80 + i);
  const size_t bytes = checked.size() * sizeof(uint16_t);
  CHECK(harness::first_bitwise_difference(traced.data(), checked.data(), bytes, 2, 4).empty());
  // Only the high byte of element 6 (row 1, column 2) differs, and element 9 too: the first is named.
  traced[6] = uint16_t(checked[6] ^ 0x8000);
  traced[9] = 0xffff;
  CHECK(harness::first_bitwise_difference(traced.data(), checked.data(), bytes, 2, 4) ==
        "C[1][2] is 0xbf86 in the traced launch, 0x3f86 in the checked one");
  // +0 and -0 are equal as numbers but not bit for bit.
  std::vector<float> zero{0.0f}, minus_zero{-0.0f};
  CHECK(harness::first_bitwise_difference(minus_zero.data(), zero.data(), sizeof(float), 4, 1) ==
        "C[0][0] is 0x80000000 in the traced launch, 0x00000000 in the checked one");
}

TEST_CASE("write_trace: one finishing path for both clocks, with its exit codes") {
  const StepSpec spec{4, "test_step", "a step for the tests", Arch::kSm100f, 8};
  harness::Options o;
  o.m = 256;
  o.n = 128;
  o.k = 64;
  o.trace_ctas = {0, 7};
  char dir[] = "/tmp/test_write_trace_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  o.trace_path = std::string(dir) + "/t.json";
  auto span = [](double start, double dur) {
    trace::Span s;
    s.cta = 0;
    s.track = 1;
    s.name = "mma";
    s.cat = trace::kCatPhase;
    s.start_ns = start;
    s.dur_ns = dur;
    return s;
  };
  trace::Trace t;
  t.cta_names[0] = "CTA 0";
  t.spans = {span(0, 100), span(10, 20)};
  // A span that begins where another ends, off by the rounding of start + duration in doubles
  // (0.1 + 0.2 > 0.3): touching, not overlapping, under check_trace's default slack.
  t.spans.push_back(span(0.1, 0.2));
  t.spans.push_back(span(0.3, 1));
  CHECK(trace::check_trace(t, 0.0) != "");  // without the slack it would be a partial overlap
  CHECK(harness::write_trace(spec, o, t, {7}, "a test clock") == 0);
  CHECK(t.meta.at("step") == "step04");
  CHECK(t.meta.at("shape") == "M=256 N=128 K=64");
  FILE* f = std::fopen(o.trace_path.c_str(), "r");
  CHECK(f != nullptr);
  if (f) std::fclose(f);

  trace::Trace overlap = t;
  overlap.spans.push_back(span(50, 100));  // starts inside [0, 100) and ends after it
  CHECK(harness::write_trace(spec, o, overlap, {}, "a test clock") == 1);

  trace::Trace nothing;  // no traced CTA recorded anything: bad use
  CHECK(harness::write_trace(spec, o, nothing, {0, 7}, "a test clock") == 2);

  harness::Options unwritable = o;
  unwritable.trace_path = std::string(dir) + "/no/such/dir/t.json";
  CHECK(harness::write_trace(spec, unwritable, t, {}, "a test clock") == 2);
  std::remove(o.trace_path.c_str());
  rmdir(dir);
}
