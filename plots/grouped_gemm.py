#!/usr/bin/env python3
"""grouped_gemm.py - step 16 (the NVFP4 grouped GEMM) at the competition's four ranked cases, the
presets of ./step16 --groups, and the page docs/16_nvfp4_grouped_gemm.md's table.

  python3 plots/grouped_gemm.py predict [BINDIR]   ./step16 --predict --groups PRESET at each case;
                                                   rewrites results/model_b200_grouped.csv (a minute
                                                   or two in all)
  python3 plots/grouped_gemm.py table              the page's table (Markdown) from that CSV

The speed of light is the one the competition's task states per case (./step16 prints it); the
model's time is the kernel alone.
"""
import csv
import datetime
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODEL = os.path.join(ROOT, "results", "model_b200_grouped.csv")
PRESETS = ["g8-n4096-k7168", "g8-n7168-k2048", "g2-n3072-k4096", "g2-n4096-k1536"]
FIELDS = ["case", "groups_m", "n", "k", "plan", "time_us", "time_us_fast", "time_us_slow", "speed_of_light_us",
          "ratio_to_speed_of_light", "pace", "git_rev", "date"]


def predict(bindir):
    rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True).stdout.strip() or "unknown"
    rows = []
    for preset in PRESETS:
        cmd = [os.path.join(bindir, "step16"), "--predict", "--groups", preset]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        out = r.stdout + r.stderr
        point = re.search(r"^predicted B200: .*\(([0-9.]+) us;", out, re.M)
        rng = re.search(r"^range: .*\(([0-9.]+) - ([0-9.]+) us;", out, re.M)
        plan = re.search(r"^plan: +(.*)$", out, re.M)
        groups = re.search(r"^groups: .*M = ([0-9,]+)", out, re.M)
        shape = re.search(r"^shape: +M=\d+ N=(\d+) K=(\d+)", out, re.M)
        sol = re.search(r"^bound: .*: ([0-9.]+) us", out, re.M)
        pace = re.search(r"^pace: +(.*?)[:;(]", out, re.M)
        if r.returncode != 0 or not (point and rng and plan and groups and shape and sol):
            sys.exit("grouped_gemm.py: %s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, out))
        rows.append({"case": preset, "groups_m": groups.group(1), "n": shape.group(1), "k": shape.group(2),
                     "plan": plan.group(1), "time_us": point.group(1), "time_us_fast": rng.group(2),
                     "time_us_slow": rng.group(1), "speed_of_light_us": sol.group(1),
                     "ratio_to_speed_of_light": "%.2f" % (float(point.group(1)) / float(sol.group(1))),
                     "pace": pace.group(1).strip() if pace else "", "git_rev": rev,
                     "date": datetime.date.today().isoformat()})
    with open(MODEL, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print("grouped_gemm.py: wrote %s (%d cases)" % (os.path.relpath(MODEL, ROOT), len(rows)))


def table():
    with open(MODEL, newline="") as f:
        rows = list(csv.DictReader(f))
    print("| case (M per group; N, K) | speed of light | step 16, predicted (range) | x speed of light | bound |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s (%s; %s, %s) | %s | %s (%s – %s) | %s | %s |" % (
            r["case"], r["groups_m"].replace(",", ", "), r["n"], r["k"], r["speed_of_light_us"], r["time_us"],
            r["time_us_fast"], r["time_us_slow"], r["ratio_to_speed_of_light"], r["pace"]))
    print()
    print("All times in µs. Speed of light: the task's bound per case. Step 16: the B200 timing model's kernel "
          "time (`python3 plots/grouped_gemm.py predict`), range: every estimated parameter at its fast and slow "
          "end (docs/timing_model.md, \"Ranges\"). Bound: the model's own `pace:` line.")


def main():
    if sys.argv[1:2] == ["predict"] and len(sys.argv) <= 3:
        predict(sys.argv[2] if len(sys.argv) == 3 else ROOT)
    elif sys.argv[1:] == ["table"]:
        table()
    else:
        sys.exit("usage: grouped_gemm.py predict [BINDIR] | table")


if __name__ == "__main__":
    main()
