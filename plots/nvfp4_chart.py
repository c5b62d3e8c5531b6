#!/usr/bin/env python3
"""nvfp4_chart.py - the NVFP4 steps (07, 10-13) and the published competition kernels at the three
competition shapes: time in microseconds, one panel per shape (M x N x K, from
results/published_b200.csv). Lower is faster.

Left of each panel, our steps (results_io.NVFP4_STEPS), all PREDICTED by the B200 timing model:
  kernel        results/model_b200.csv (`make predict`): the kernel alone, a dot, with the model's
                range (every estimated or carried parameter at its fast / slow end) as a whisker;
  call          that kernel through the gpu-mode evaluator's terms (plots/nvfp4_validation.py
                call_times: max(kernel + GPU gap, host time per call), the "evaluator:" rows of
                ./step01 --model-params), an open square with its whisker: what the evaluator
                would report, to set beside the published call times;
  measured      a verified row of results/<gpu>.csv at the shape (none until a B200 runs
                `make bench`), a triangle.
Right of each panel, the published kernels of gau-nernst's worklog (results/validation_b200.csv,
`python3 plots/nvfp4_validation.py run`):
  published     the time measured on the competition's B200 by its evaluator (a call time), a
                diamond: published, not measured here;
  call          the model's prediction of that design's call (its configuration: the CSV's
                model_config), an open square with its whisker: call against call, like with like.
Across each panel: the task's speed of light (max(FP4 math, DRAM) at 1.5 GHz, gpu-mode task.yml),
and the published call times of the competition entry and of cuBLASLt (torch._scaled_mm).
A design past the panel's top is written at the top with its figures instead of drawn.

Usage:  python3 plots/nvfp4_chart.py [--results DIR] [--out FILE]
  --results DIR   directory of the CSV files [results/]
  --out FILE      the PNG [docs/img/progression_nvfp4.png]
"""
import argparse
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from progression import GPU_COLORS, MODEL_COLOR, PUBLISHED_COLOR, measured_rows  # noqa: E402
from results_io import (ROOT, MODEL_FILE, NVFP4_STEPS, PUBLISHED_FILE, VALIDATION_FILE,  # noqa: E402
                        InputError, Published, flops, read_model, read_validation, row_range,
                        row_time_us, shape_of, step_of)
import nvfp4_validation  # noqa: E402  (the evaluator's terms: one definition for the table and the chart)

KERNEL_COLOR = "#404040"   # predicted kernel
CALL_COLOR = "#1f4e9c"     # predicted call
# The published designs of the validation CSV, in the worklog's order, with their short labels.
DESIGNS = [("gau-template", "template\n(CuTe DSL)"), ("gau-v0", "v0"), ("gau-v1", "v1"),
           ("gau-v3b", "v3b"), ("gau-v4", "v4")]


def us_of(tflops, shape):
    return flops(shape) / (tflops * 1e12) * 1e6


def step_predictions(model, shapes):
    """{(step, shape): (kernel_us, fast_us, slow_us)} of the model CSV's rows with a range."""
    out = {}
    for (st, sh), r in model.items():
        rng = row_range(r)
        if st in NVFP4_STEPS and sh in shapes and rng and row_time_us(r):
            out[(st, sh)] = (row_time_us(r), us_of(rng[1], sh), us_of(rng[0], sh))
    return out


def measured(rows, shapes):
    """{(gpu, step, shape): kernel_us}: the newest verified row of each."""
    best = {}
    for r in rows:
        st, sh = step_of(r), shape_of(r)
        if st not in NVFP4_STEPS or sh not in shapes or r["verified"] != "yes" or row_time_us(r) is None:
            continue
        key = (r["gpu"], st, sh)
        if key not in best or r["date"] > best[key]["date"]:
            best[key] = r
    return {k: row_time_us(r) for k, r in best.items()}


def whisker(ax, x, pt, lo, hi, color, marker, filled, size=6.5, zorder=3):
    ax.errorbar([x], [pt], yerr=[[pt - lo], [hi - pt]], fmt=marker, color=color, ms=size,
                mfc=color if filled else "white", mec=color, mew=1.3, ecolor=color, elinewidth=1.2,
                capsize=3.5, zorder=zorder)


def label(ax, x, y, txt, color, side="right"):
    ax.annotate(txt, (x, y), xytext=(5 if side == "right" else -5, 0), textcoords="offset points",
                ha="left" if side == "right" else "right", va="center", fontsize=6.8, color=color)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "results"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "progression_nvfp4.png"))
    args = ap.parse_args()
    try:
        pub = Published(os.path.join(args.results, PUBLISHED_FILE))
        model = read_model(os.path.join(args.results, MODEL_FILE))
        valid = read_validation(os.path.join(args.results, VALIDATION_FILE))
    except (InputError, OSError) as e:
        print("nvfp4_chart.py: %s" % e, file=sys.stderr)
        return 2
    shapes = pub.nvfp4_shapes()
    if not shapes:
        print("nvfp4_chart.py: %s has no nvfp4 rows" % pub.path, file=sys.stderr)
        return 2
    steps = step_predictions(model, shapes)
    meas = measured(measured_rows(args.results)[1], shapes)
    try:  # the evaluator's terms come from the parameter table (./step01 --model-params)
        params = nvfp4_validation.model_params()
    except (OSError, subprocess.CalledProcessError) as e:
        print("nvfp4_chart.py: no evaluator terms (%s): the steps' predicted calls are left out" % e,
              file=sys.stderr)
        params = None

    # x positions: the steps, a gap, the published designs
    step_x = {st: i for i, st in enumerate(NVFP4_STEPS)}
    design_x = {d: len(NVFP4_STEPS) + 0.7 + 1.3 * i for i, (d, _) in enumerate(DESIGNS)}
    xmax = max(design_x.values()) + 0.75
    off = 0.17

    fig, axes = plt.subplots(len(shapes), 1, figsize=(11, 3.9 * len(shapes) + 1.9), sharex=True)
    axes = list(axes) if len(shapes) > 1 else [axes]
    for ax, sh in zip(axes, shapes):
        sol = pub.nvfp4(sh, "sol")
        entry = pub.nvfp4(sh, "entry")
        lt = pub.nvfp4(sh, "cublaslt")
        lines = [(float(r["time_us"]), txt, style) for r, txt, style in (
            (sol, "speed of light %s", ("black", "-")),
            (entry, "entry, published %s", (PUBLISHED_COLOR, "--")),
            (lt, "cuBLASLt, published %s", (PUBLISHED_COLOR, ":"))) if r]
        # The panel's scale: everything but the template (several times slower) and its whiskers.
        vals = [v for (st, s), t in steps.items() if s == sh for v in t]
        calls = {}
        if params:
            for st in NVFP4_STEPS:
                if (st, sh) in steps:
                    calls[st] = nvfp4_validation.call_times(*steps[(st, sh)], params)
                    vals += calls[st]
        vals += [v for (g, st, s), v in meas.items() if s == sh]
        for d, _ in DESIGNS[1:]:
            r = valid.get((d, sh))
            if r:
                vals += [float(r[c]) for c in ("call_us", "call_fast_us", "call_slow_us", "published_us")]
        vals += [v for v, _, _ in lines]
        top = max(vals) * 1.12 if vals else 1.0

        for v, txt, (col, ls) in lines:
            ax.axhline(v, color=col, linestyle=ls, linewidth=1.3, zorder=1)
            ax.text(xmax + 0.05, v, txt % ("%.3g" % v), va="center", fontsize=7, color=col)
        for st in NVFP4_STEPS:
            x = step_x[st]
            if (st, sh) in steps:
                pt, lo, hi = steps[(st, sh)]
                whisker(ax, x - off, pt, lo, hi, KERNEL_COLOR, "o", True)
                label(ax, x - off, pt, "%.2f" % pt, KERNEL_COLOR, "left")
            if st in calls:
                pt, lo, hi = calls[st]
                whisker(ax, x + off, pt, lo, hi, CALL_COLOR, "s", False)
                label(ax, x + off, pt, "%.2f" % pt, CALL_COLOR)
            for gi, g in enumerate(sorted({g for g, _, _ in meas})):
                v = meas.get((g, st, sh))
                if v is not None:
                    ax.plot([x], [v], "^", color=GPU_COLORS[gi % len(GPU_COLORS)], ms=8, zorder=4)
                    label(ax, x, v, "%.2f" % v, GPU_COLORS[gi % len(GPU_COLORS)])
        for d, _ in DESIGNS:
            r = valid.get((d, sh))
            if not r:
                continue
            x = design_x[d]
            pt, lo, hi = (float(r[c]) for c in ("call_us", "call_fast_us", "call_slow_us"))
            pub_us = float(r["published_us"])
            if pt > top or pub_us > top:  # off the panel: its figures at the top
                ax.annotate("off scale:\npublished %.1f\npredicted call\n%.1f (%.1f-%.1f)" % (pub_us, pt, lo, hi),
                            (x, top), xytext=(0, -4), textcoords="offset points", ha="center", va="top",
                            fontsize=6.6, color="0.25")
                ax.annotate("", (x, top), xytext=(x, top * 0.62),
                            arrowprops=dict(arrowstyle="->", color="0.45", lw=1.0))
                continue
            whisker(ax, x - off, pt, lo, min(hi, top), CALL_COLOR, "s", False)
            label(ax, x - off, pt, "%.2f" % pt, CALL_COLOR, "left")
            ax.plot([x + off], [pub_us], "D", color=PUBLISHED_COLOR, mec="black", mew=0.6, ms=7, zorder=4)
            label(ax, x + off, pub_us, "%.2f" % pub_us, "#b35900")
        ax.axvline(len(NVFP4_STEPS) - 0.2, color="0.75", linewidth=0.8)
        ax.set_ylim(0, top)
        ax.set_xlim(-0.6, xmax)
        ax.set_ylabel("µs (lower is faster)", fontsize=8.5)
        ax.set_title("M=%d N=%d K=%d" % sh, fontsize=9.5, loc="left", fontweight="bold")
        ax.grid(axis="y", color="0.9", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.tick_params(labelsize=8)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        if not steps:
            ax.text(0.2, 0.5, "no model rows yet (make predict)", transform=ax.transAxes, fontsize=8, color="0.4")
        if not valid:
            ax.text(0.75, 0.5, "no validation rows (plots/nvfp4_validation.py run)", transform=ax.transAxes,
                    fontsize=8, color="0.4", ha="center")
    ticks = [step_x[st] for st in NVFP4_STEPS] + [design_x[d] for d, _ in DESIGNS]
    axes[-1].set_xticks(ticks)
    axes[-1].set_xticklabels(["step %02d" % st for st in NVFP4_STEPS] + [lbl for _, lbl in DESIGNS], fontsize=8)
    for lo_x, hi_x, txt in ((-0.6, len(NVFP4_STEPS) - 0.2, "our steps"),
                            (len(NVFP4_STEPS) - 0.2, xmax, "published kernels (gau-nernst's competition worklog)")):
        axes[-1].annotate(txt, ((lo_x + hi_x) / 2, 0), xycoords=("data", "axes fraction"), xytext=(0, -30),
                          textcoords="offset points", ha="center", va="top", fontsize=8.5, fontweight="bold")

    revs = sorted({r["git_rev"] for (st, s), r in model.items() if st in NVFP4_STEPS and s in shapes})
    fig.suptitle("NVFP4 GEMM at the competition shapes, B200: every blue or grey figure is a PREDICTION of the "
                 "timing model (no B200 was measured here);\norange figures are B200 call times published by "
                 "gau-nernst (gpu-mode-kernels, nvidia/nvfp4_gemm/README.md), timed by the competition's evaluator",
                 fontsize=9, x=0.02, ha="left")
    handles = [
        Line2D([0], [0], marker="o", color=KERNEL_COLOR, mfc=KERNEL_COLOR, linestyle="none", ms=6,
               label="predicted kernel time (results/model_b200.csv, git %s)" % ", ".join(revs or ["-"])),
        Line2D([0], [0], marker="s", color=CALL_COLOR, mfc="white", mew=1.3, linestyle="none", ms=6,
               label="predicted call: max(kernel + GPU gap, host time per call), the evaluator's terms"),
        Line2D([0], [0], color="0.3", linewidth=1.2, marker="_", ms=8,
               label="whisker: the model's range (each estimated parameter at its fast / slow end)"),
        Line2D([0], [0], marker="D", color=PUBLISHED_COLOR, mec="black", mew=0.6, linestyle="none", ms=6,
               label="published B200 call time of that design (not measured here)"),
        Line2D([0], [0], color="black", linewidth=1.3,
               label="speed of light: max(FP4 math, DRAM) at 1.5 GHz (gpu-mode task.yml; a bound, not a kernel)"),
        Line2D([0], [0], color=PUBLISHED_COLOR, linestyle="--", linewidth=1.3,
               label="gau-nernst's competition entry (per-shape mix), published call time"),
        Line2D([0], [0], color=PUBLISHED_COLOR, linestyle=":", linewidth=1.3,
               label="cuBLASLt via torch._scaled_mm, published call time"),
    ]
    for gi, g in enumerate(sorted({g for g, _, _ in meas})):
        handles.append(Line2D([0], [0], marker="^", color=GPU_COLORS[gi % len(GPU_COLORS)], linestyle="none",
                              ms=7, label="measured kernel time on %s (results/)" % g))
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.02, 0.0), ncol=2, fontsize=7.3, frameon=False)
    fig.subplots_adjust(left=0.07, right=0.86, top=1 - 0.75 / fig.get_figheight(),
                        bottom=1.6 / fig.get_figheight(), hspace=0.28)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
