#!/usr/bin/env python3
"""dual_gemm.py - step 15's ranked shapes (the NVFP4 dual GEMM competition's) and what the page
docs/15_nvfp4_dual_gemm.md sets side by side.

  python3 plots/dual_gemm.py shapes           the ranked shapes, one "M N K" line each, from
                                              results/published_b200_dual_gemm.csv (plots/bench.sh)
  python3 plots/dual_gemm.py predict [BINDIR] ./step15 --predict --inputs competition at each shape;
                                              rewrites results/model_b200_dual_gemm.csv (seconds each)
  python3 plots/dual_gemm.py table            the page's table (Markdown) from the two CSVs

Published times are call times measured by the competition's evaluator; the model predicts the
kernel alone. The column "predicted call" puts the kernel through the evaluator's terms, the same
function as the NVFP4 validation (plots/nvfp4_validation.py call_times: max(kernel + the GPU's gap
between queued kernels, the host's time per call), the "evaluator:" rows of the parameter table).
"""
import csv
import datetime
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PUBLISHED = os.path.join(ROOT, "results", "published_b200_dual_gemm.csv")
MODEL = os.path.join(ROOT, "results", "model_b200_dual_gemm.csv")
MODEL_FIELDS = ["m", "n", "k", "plan", "time_us", "time_us_fast", "time_us_slow", "pace", "git_rev", "date"]


def published():
    with open(PUBLISHED, newline="") as f:
        return list(csv.DictReader(f))


def shapes():
    seen = []
    for r in published():
        s = (int(r["m"]), int(r["n"]), int(r["k"]))
        if s not in seen:
            seen.append(s)
    return seen


def predict(bindir):
    rows = []
    rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True).stdout.strip() or "unknown"
    for m, n, k in shapes():
        cmd = [os.path.join(bindir, "step15"), "--predict", "--m", str(m), "--n", str(n), "--k", str(k),
               "--inputs", "competition"]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        out = r.stdout + r.stderr
        point = re.search(r"^predicted B200: .*\(([0-9.]+) us;", out, re.M)
        rng = re.search(r"^range: .*\(([0-9.]+) - ([0-9.]+) us;", out, re.M)
        plan = re.search(r"^plan: +(.*)$", out, re.M)
        pace = re.search(r"^pace: +(.*?) *(?:[:;(]|$)", out, re.M)
        if r.returncode != 0 or not (point and rng and plan):
            sys.exit("dual_gemm.py: %s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, out))
        rows.append({"m": m, "n": n, "k": k, "plan": plan.group(1), "time_us": point.group(1),
                     "time_us_fast": rng.group(2), "time_us_slow": rng.group(1),
                     "pace": pace.group(1) if pace else "", "git_rev": rev,
                     "date": datetime.date.today().isoformat()})
    with open(MODEL, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=MODEL_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print("dual_gemm.py: wrote %s (%d shapes)" % (os.path.relpath(MODEL, ROOT), len(rows)))


def table():
    pub = published()
    with open(MODEL, newline="") as f:
        model = {(int(r["m"]), int(r["n"]), int(r["k"])): r for r in csv.DictReader(f)}

    def time_of(shape, prefix):
        for r in pub:
            if (int(r["m"]), int(r["n"]), int(r["k"])) == shape and r["what"].startswith(prefix):
                return r["time_us"]
        return "—"

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import nvfp4_validation  # the evaluator's terms, one definition for both tables
    params = nvfp4_validation.model_params()
    print("| M x N x K | speed of light | reference | gau-nernst v1 | gau-nernst v2 | step 15, predicted (range) "
          "| predicted call (range) | plan |")
    print("|---|---|---|---|---|---|---|---|")
    for s in shapes():
        r = model.get(s)
        pred = "%s (%s – %s)" % (r["time_us"], r["time_us_fast"], r["time_us_slow"]) if r else "not predicted"
        plan = r["plan"] if r else ""
        call = "—"
        if r:
            c = nvfp4_validation.call_times(float(r["time_us"]), float(r["time_us_fast"]), float(r["time_us_slow"]),
                                            params)
            call = "%.2f (%.2f – %.2f)" % c
        print("| %d x %d x %d | %s | %s | %s | %s | %s | %s | %s |" % (
            s[0], s[1], s[2], time_of(s, "speed of light"), time_of(s, "reference"), time_of(s, "gau-nernst v1"),
            time_of(s, "gau-nernst v2"), pred, call, plan))
    print()
    print("All times in µs. Speed of light: the task's bound (kernel time). Reference, v1, v2: call times "
          "measured by the competition's evaluator ([gau-nvfp4-dual](references.md#gau-nvfp4-dual)). Step 15: "
          "the B200 timing model's kernel time at `--inputs competition`, revision %s (`python3 plots/dual_gemm.py "
          "predict`). Predicted call: that kernel time through the evaluator's terms, max(kernel + GPU gap, host "
          "time per call), the \"evaluator:\" parameters measured on the H200 (docs/timing_model.md, \"Held against "
          "measured NVFP4 kernels\"), at the point and at both ends." % (
              next(iter(model.values()))["git_rev"] if model else "—"))


def main():
    if sys.argv[1:] == ["shapes"]:
        for m, n, k in shapes():
            print(m, n, k)
    elif sys.argv[1:2] == ["predict"] and len(sys.argv) <= 3:
        predict(sys.argv[2] if len(sys.argv) == 3 else ROOT)
    elif sys.argv[1:] == ["table"]:
        table()
    else:
        sys.exit("usage: dual_gemm.py shapes | predict [BINDIR] | table")


if __name__ == "__main__":
    main()
