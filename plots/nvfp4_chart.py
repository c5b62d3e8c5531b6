#!/usr/bin/env python3
"""nvfp4_chart.py - the NVFP4 steps (07, 10-13) at the three competition shapes: time in microseconds.

Per shape (M x N x K, from results/published_b200.csv), bars of, for each NVFP4 step
(results_io.NVFP4_STEPS):
  measured     its rows of results/<gpu>.csv with verified == yes (none until a B200 runs
               `make bench`), and the cuBLASLt time of the same runs (from cublas_tflops);
  model        results/model_b200.csv (`make predict`): a PREDICTION, not a measurement (hatched);
  published    cuBLASLt through torch._scaled_mm on a B200 (gau-nernst's competition worklog),
               not measured here;
and the task's speed of light (max(FP4 math, DRAM) at 1.5 GHz, gpu-mode task.yml) as a black
line across each group. Lower is faster.

Usage:  python3 plots/nvfp4_chart.py [--results DIR] [--out FILE]
  --results DIR   directory of the CSV files [results/]
  --out FILE      the PNG [docs/img/progression_nvfp4.png]
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from progression import (GPU_COLORS, MODEL_COLOR, MODEL_LABEL, PUBLISHED_COLOR,  # noqa: E402
                         lighten, measured_rows, model_caption)
from results_io import (ROOT, MODEL_FILE, NVFP4_STEPS, PUBLISHED_FILE, InputError,  # noqa: E402
                        Published, flops, read_model, row_time_us, shape_of, step_of, to_float)


def measured(rows, shapes, step):
    """{gpu: {shape: (kernel_us, cublaslt_us or None, row)}}: the newest verified row of `step`."""
    out = {}
    for r in rows:
        if step_of(r) != step or r["verified"] != "yes" or shape_of(r) not in shapes:
            continue
        us = row_time_us(r)
        if us is None:
            continue
        c = to_float(r["cublas_tflops"])
        lt = flops(shape_of(r)) / (c * 1e12) * 1e6 if c else None
        cur = out.setdefault(r["gpu"], {}).get(shape_of(r))
        if cur is None or r["date"] > cur[2]["date"]:
            out[r["gpu"]][shape_of(r)] = (us, lt, r)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "results"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "progression_nvfp4.png"))
    args = ap.parse_args()
    try:
        pub = Published(os.path.join(args.results, PUBLISHED_FILE))
        model = read_model(os.path.join(args.results, MODEL_FILE))
    except (InputError, OSError) as e:
        print("nvfp4_chart.py: %s" % e, file=sys.stderr)
        return 2
    shapes = pub.nvfp4_shapes()
    if not shapes:
        print("nvfp4_chart.py: %s has no nvfp4 rows" % pub.path, file=sys.stderr)
        return 2
    _, rows = measured_rows(args.results)

    # series: (label, color, hatch, {shape: us})
    series = []
    lt_done = set()  # one cuBLASLt series per GPU (the same library call whichever step ran it)
    for step in NVFP4_STEPS:
        meas = measured(rows, shapes, step)
        for gi, g in enumerate(sorted(meas)):
            col = GPU_COLORS[gi % len(GPU_COLORS)]
            series.append(("measured: step %02d on %s" % (step, g), col if step == NVFP4_STEPS[0] else
                           lighten(col, 0.25), None, {s: v[0] for s, v in meas[g].items()}))
            if g not in lt_done:
                lt_done.add(g)
                series.append(("measured: cuBLASLt on " + g + " (same runs)", lighten(col), None,
                               {s: v[1] for s, v in meas[g].items() if v[1]}))
    mvals = {}
    for step in NVFP4_STEPS:
        vals = {s: row_time_us(r) for (st, s), r in model.items() if st == step and s in shapes}
        mvals.update(vals)
        series.append(("step %02d: %s" % (step, MODEL_LABEL), lighten(MODEL_COLOR, 0.5 if step == NVFP4_STEPS[0]
                                                                       else 0.8), "xx" if step == NVFP4_STEPS[0]
                       else "//", vals))
    series.append(("cuBLASLt via torch._scaled_mm, published (gau-nernst worklog), not measured "
                   "here", PUBLISHED_COLOR, None,
                   {s: to_float(pub.nvfp4(s, "cublaslt")["time_us"]) for s in shapes
                    if pub.nvfp4(s, "cublaslt")}))
    sol = {s: to_float(pub.nvfp4(s, "sol")["time_us"]) for s in shapes if pub.nvfp4(s, "sol")}

    n = len(series)
    width = min(0.8 / n, 0.28)
    fig, ax = plt.subplots(figsize=(max(8.5, 2.2 + 3.2 * len(shapes) * max(1, n / 3)), 5.6))
    ymax = max([v for *_, vals in series for v in vals.values() if v] + list(sol.values())) * 1.2
    for si, (label, color, hatch, vals) in enumerate(series):
        off = (si - (n - 1) / 2) * width
        for ci, s in enumerate(shapes):
            v = vals.get(s)
            if v is None:
                continue
            ax.bar(ci + off, v, width, color=color, hatch=hatch, linewidth=0.7,
                   edgecolor=MODEL_COLOR if hatch else "black")
            txt = "%.2f" % v + ("\n%.1fx SOL" % (v / sol[s]) if s in sol else "")
            ax.text(ci + off, v + 0.01 * ymax, txt, ha="center", va="bottom", fontsize=7.5)
    for ci, s in enumerate(shapes):
        if s in sol:
            ax.hlines(sol[s], ci - 0.45, ci + 0.45, colors="black", linewidth=1.6)
            ax.text(ci + 0.45, sol[s], " SOL %.3f" % sol[s], va="center", fontsize=7.5)
    if not mvals:
        ax.text(0.5, 0.95, "no model rows yet (make predict)", transform=ax.transAxes,
                ha="center", va="top", fontsize=8.5, color="0.4")
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels(["M=%d N=%d K=%d" % s for s in shapes], fontsize=9)
    ax.set_xlim(-0.6, len(shapes) - 0.2)
    ax.set_ylim(0, ymax)
    ax.set_ylabel("time, microseconds (lower is faster)", fontsize=9)
    ax.grid(axis="y", color="0.88", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title("Steps %s, NVFP4 GEMM at the competition shapes (B200)\n%s;\nSOL: "
                 "gpu-mode reference-kernels nvfp4_gemm task.yml (a bound, not a kernel)" %
                 (" and ".join("%02d" % s for s in NVFP4_STEPS),
                  model_caption(model).replace("M=N=K=4096; ", "")), fontsize=9, loc="left")
    handles = [Patch(facecolor=c, hatch=h, edgecolor=MODEL_COLOR if h else "black", label=lbl)
               for lbl, c, h, _ in series]
    handles.append(Line2D([0], [0], color="black", linewidth=1.6,
                          label="speed of light: max(FP4 math, DRAM) at 1.5 GHz (task.yml)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -0.1), ncol=2, fontsize=7.5,
              frameon=False)
    fig.subplots_adjust(left=0.08, right=0.97, top=0.88, bottom=0.22)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
