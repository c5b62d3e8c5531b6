#!/usr/bin/env bash
# check_plots.sh — the "plots" suite of tests/run_all.sh (CI, no GPU): the chart and page scripts
# run on the committed CSV files and write into a temporary directory (docs/ stays untouched).
#   1. make plots PLOTS_OUT=<tmp>: progression.png and progression_nvfp4.png exist and are not
#      empty, and so is every timeline_stepNN.png it drew (none while the binaries record no
#      traces);
#   2. plots/timeline.py on a small hand-written trace (two CTAs, warps, engines, nested spans);
#      an unreadable trace is refused with exit 2;
#   3. plots/performance_doc.py writes a page that says it is generated and that the model's
#      figures are predictions;
#   4. plots/bench.sh --dry-run lists the standard runs; without a GPU it refuses with exit 2.
#   5. README.md's results table is the newest rows of results/<gpu>.csv (plots/readme_results.py
#      --check), and a README with a changed figure is refused.
#   6. the progression chart keeps one GPU's rows together: with a second GPU's rows (the H100's
#      relabelled as a B300, in results/b300.csv and mixed into another file) it draws one series
#      per GPU name, each from that GPU's rows only.
#   7. the NVFP4 chart draws without results/validation_b200.csv (its steps only) and refuses one
#      with another header (exit 2).
set -u
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "check_plots: FAIL: $*"; bad=1; }
nonempty_png() {  # a PNG file with something in it
  [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '211PNG' ]
}

# 1
if make --no-print-directory -s plots PLOTS_OUT="$tmp/img"; then
  # Every picture the docs show: the two charts, a model timeline per tcgen05 step, step 00's GPU one.
  for f in progression.png progression_nvfp4.png timeline_step00_h100.png \
           $(for s in $(make --no-print-directory -s list-steps); do
               [ "$s" = step00 ] || echo "timeline_$s.png"; done); do
    nonempty_png "$tmp/img/$f" || fail "make plots did not write $f"
  done
  echo "check_plots: make plots wrote: $(cd "$tmp/img" && ls | tr '\n' ' ')"
else
  fail "make plots exited non-zero"
fi

# 2
python3 - "$tmp/trace.json" <<'EOF'
import json, sys
ev = []
for pid in (0, 1):
    ev.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "CTA %d" % pid}})
    for tid, name in ((0, "warp 0 (TMA)"), (1, "warp 1 (MMA)"), (100, "TMA in flight #0"),
                      (101, "tensor core")):
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                   "args": {"name": name}})
    def X(tid, name, cat, ts, dur):
        ev.append({"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat, "ts": ts,
                   "dur": dur})
    X(0, "setup", "phase", 0.0, 0.2)
    X(0, "mainloop", "phase", 0.2, 2.0)
    X(1, "mainloop", "phase", 0.2, 2.2)
    for i in range(4):
        t = 0.2 + 0.5 * i
        X(0, "issue TMA", "issue", t, 0.05)
        X(100, "TMA 32 KiB", "tma", t + 0.05, 0.3)
        X(1, "wait full", "wait", t, 0.35)
        X(1, "issue MMA", "issue", t + 0.35, 0.02)
        X(101, "MMA", "mma", t + 0.37, 0.1)
json.dump({"traceEvents": ev, "displayTimeUnit": "ns", "otherData": {"step": "sample"}},
          open(sys.argv[1], "w"))
EOF
python3 plots/timeline.py "$tmp/trace.json" --out "$tmp/timeline.png" >/dev/null &&
  nonempty_png "$tmp/timeline.png" || fail "timeline.py on a hand-written trace"
echo '{"traceEvents": 3}' >"$tmp/bad.json"
python3 plots/timeline.py "$tmp/bad.json" --out "$tmp/bad.png" 2>/dev/null
[ $? = 2 ] || fail "timeline.py accepted a trace without events"

# 3
if python3 plots/performance_doc.py --out "$tmp/performance.md" --rev test --date test >/dev/null; then
  grep -q "do not edit" "$tmp/performance.md" && grep -q "No B200 was available" "$tmp/performance.md" &&
    grep -q "prediction" "$tmp/performance.md" || fail "performance.md lacks its generated/prediction notes"
  # The tables must carry the CSV's numbers: each model row's figure in its step's (or shape's) row.
  python3 - "$tmp/performance.md" results/model_b200.csv <<'PY' || fail "performance.md does not show the model CSV's figures"
import csv, sys
page = open(sys.argv[1]).read().splitlines()
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows, "no model rows"
for r in rows:
    step, m, n, k = int(r["step"]), r["m"], r["n"], r["k"]
    if r["dtype"] == "bf16":
        lead, want = "| %02d " % step, "| %.1f |" % float(r["tflops"])
    else:
        lead, want = "| %s x %s x %s | %02d " % (m, n, k, step), "| %.2f |" % (float(r["median_ms"]) * 1e3)
    line = [l for l in page if l.startswith(lead)]
    assert len(line) == 1 and want in line[0], (lead, want, line)
PY
else
  fail "performance_doc.py exited non-zero"
fi

# 4
n=$(bash plots/bench.sh --dry-run --bin-dir . | grep -c -- '--gpu')
[ "$n" -ge 3 ] || fail "bench.sh --dry-run listed $n runs"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  bash plots/bench.sh >/dev/null 2>&1
  [ $? = 2 ] || fail "bench.sh without a GPU did not exit 2"
fi

# 5
python3 plots/readme_results.py --check || fail "README.md's results table is stale (make readme)"
sed 's/^| 00 \(.*\) | [0-9.]* | \([0-9.]*\) |/| 00 \1 | 1.0 | \2 |/' README.md > "$tmp/README.md"
cmp -s README.md "$tmp/README.md" && fail "could not alter a figure of README.md's results table"
python3 plots/readme_results.py --check "$tmp/README.md" 2>/dev/null
[ $? = 1 ] || fail "readme_results.py --check accepted a README with an altered figure"

# 6
mkdir -p "$tmp/results"
cp results/h100.csv results/model_b200.csv results/published_b200.csv "$tmp/results/"
sed '2,$ s/,NVIDIA H100 80GB HBM3,132,/,NVIDIA B300 SXM6 AC,160,/' results/h100.csv > "$tmp/results/b300.csv"
{ head -1 results/h100.csv; sed -n '2p' "$tmp/results/b300.csv"; } > "$tmp/results/mixed.csv"
if out=$(python3 plots/progression.py --results "$tmp/results" --out "$tmp/two_gpus.png" 2>&1); then
  python3 - "$out" <<'PY' || fail "progression.py mixed two GPUs' rows (output: $out)"
import re, sys
lines = [m.groups() for m in re.finditer(r"^  (.+) step \d\d: .* \((\S+):\d+\)$", sys.argv[1], re.M)]
gpus = {g for g, _ in lines}
assert gpus == {"NVIDIA H100 80GB HBM3", "NVIDIA B300 SXM6 AC"}, gpus
for g, f in lines:
    assert (f == "h100.csv") == g.startswith("NVIDIA H100"), (g, f)
PY
else
  fail "progression.py with two GPUs exited non-zero: $out"
fi

# 7
mkdir -p "$tmp/nv"
cp results/model_b200.csv results/published_b200.csv "$tmp/nv/"
python3 plots/nvfp4_chart.py --results "$tmp/nv" --out "$tmp/nv/no_validation.png" >/dev/null &&
  nonempty_png "$tmp/nv/no_validation.png" || fail "nvfp4_chart.py without results/validation_b200.csv"
echo "design,shape,nonsense" > "$tmp/nv/validation_b200.csv"
python3 plots/nvfp4_chart.py --results "$tmp/nv" --out "$tmp/nv/bad.png" 2>/dev/null
[ $? = 2 ] || fail "nvfp4_chart.py accepted a validation CSV with another header"

[ "$bad" = 0 ] && echo "check_plots: ok"
exit $bad
