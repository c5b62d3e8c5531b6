#!/usr/bin/env python3
"""predict_noise.py - the timing model's own noise for the NVFP4 lever tables (pages 11 and 13):
every config of plots/predict_sweeps.sh's NVFP4_LEVERS list (read from that script: one list) at
the three competition shapes, run with `--predict --predict-noise SEEDS`, its point's spread over
issue order and SEEDS seeded orders of equal-time events (docs/timing_model.md, "Noise") written
to results/model_b200_noise.csv (with the point and the range of the same run). plots/sweeps_doc.py shows a lever whose gain is within the spread
of the two configs it compares as a tie.

  python3 plots/predict_noise.py [--seeds N] [--configs a,b,...]   (about 5 emulations a row)
"""
import argparse
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "results", "model_b200_noise.csv")
SHAPES = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]
NOISE_RE = re.compile(r"^noise: +([0-9.]+) - ([0-9.]+) us .* and ([0-9]+) seeded orders")
POINT_RE = re.compile(r"^predicted B200: .*\(([0-9.]+) us;")
RANGE_RE = re.compile(r"^range: .*\(([0-9.]+) - ([0-9.]+) us;")


def lever_configs():
    text = open(os.path.join(ROOT, "plots", "predict_sweeps.sh")).read()
    block = re.search(r"NVFP4_LEVERS='\n(.*?)'", text, re.S).group(1)
    out = []
    for line in block.splitlines():
        words = line.split()
        if words:
            out.append((words[0], int(words[1]), dict(w.split("=", 1) for w in words[2:])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--configs", help="only these configs, comma-separated")
    a = ap.parse_args()
    only = set(a.configs.split(",")) if a.configs else None
    rows = []
    if only and os.path.exists(OUT):
        with open(OUT, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["config"] not in only]
    # The cheapest shape first, and the file rewritten after every row: a run cut short keeps its rows.
    jobs = [(sh, c) for sh in reversed(SHAPES) for c in lever_configs() if not only or c[0] in only]
    for (m, n, k), (config, step, knobs) in jobs:
        cmd = [os.path.join(ROOT, "step%02d" % step), "--predict", "--m", str(m), "--n", str(n), "--k", str(k),
               "--predict-noise", str(a.seeds)]
        out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **knobs))
        point = noise = rng = None
        for line in out.stdout.splitlines():
            point = POINT_RE.match(line) or point
            noise = NOISE_RE.match(line) or noise
            rng = RANGE_RE.match(line) or rng
        if out.returncode != 0 or not point or not noise:
            sys.exit("predict_noise.py: %s %s failed:\n%s" % (config, (m, n, k), out.stdout[-2000:] + out.stderr))
        lo, hi = float(noise.group(1)), float(noise.group(2))
        rows.append(dict(config=config, step=step, m=m, n=n, k=k, time_us=point.group(1),
                         time_slow_us=rng.group(1) if rng else "", time_fast_us=rng.group(2) if rng else "",
                         noise_low_us="%.2f" % lo,
                         noise_high_us="%.2f" % hi, spread_us="%.2f" % (hi - lo), seeds=noise.group(3)))
        print("%-12s %s: %s us, noise %.2f - %.2f" % (config, (m, n, k), point.group(1), lo, hi), file=sys.stderr)
        write(rows)
    return 0


def write(rows):
    with open(OUT, "w", newline="") as f:
        w = csv.DictWriter(f, ["config", "step", "m", "n", "k", "time_us", "time_slow_us", "time_fast_us", "noise_low_us",
                               "noise_high_us", "spread_us", "seeds"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
