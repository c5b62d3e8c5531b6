#!/usr/bin/env python3
"""progression.py - the step-by-step TFLOPS chart: what we measured, next to a published reference.

  left panel   "Measured": TFLOPS per step and cuBLAS, read ONLY from the harness's CSV files
               (results/*.csv, written by `stepNN --csv FILE`). Nothing is estimated or filled in:
               a step with no verified row for a GPU has no bar for that GPU.
  right panel  "Published B200 reference (not measured here)": the TFLOPS of the v1..v6 kernels of
               seed 001_8ff71249f181e60e.txt, hard-coded below (PUBLISHED_B200) with the citation.

Row selection (left panel):
  * only rows with verified == yes and a non-empty tflops (emulator rows have no tflops, rows of
    --no-check runs say verified=skipped: both are left out);
  * grouped by GPU name and shape (m, n, k); the shape drawn is 4096x4096x4096, or the largest
    shape (by m*n*k) a GPU has if it has no 4096^3 row;
  * per (GPU, shape, step): the rows with inputs=random, or the inputs=integer rows if that step
    has no random row; of those, the row with the highest tflops;
  * the cuBLAS bar of a GPU is the median of cublas_tflops over the rows kept for its steps;
  * the "% of cuBLAS" printed on a step's bar is that row's own ratio column (the kernel against
    cuBLAS timed in the same run, same clocks), not a ratio to the median bar.

Usage (from anywhere):  python3 plots/progression.py [--results DIR] [--out FILE]
  --results DIR   directory of the CSV files [results/]
  --out FILE      the PNG to write [docs/img/progression.png]
Needs matplotlib (pip install matplotlib); Agg backend, no display needed.
"""
import argparse
import csv
import glob
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEADER = ("step,step_name,gpu,sm_count,driver,cuda_runtime,cublas,m,n,k,dtype,inputs,iterations,"
          "median_ms,tflops,cublas_tflops,ratio,max_abs_err,verified,date,git_rev").split(",")

PREFERRED_SHAPE = (4096, 4096, 4096)

# ------------------------------------------------------------------------------------------------
# PUBLISHED REFERENCE - NOT OUR MEASUREMENT.
# Source: shared/seeds/001_8ff71249f181e60e.txt (beside the repository), "tcgen05 for dummies" (Dec 21, 2025),
# tables "Kernel name / TFLOPS" of each section and of "Closing remarks". Measured by that post's
# author on a B200 (Modal), BF16, M=N=K=4096; cuBLAS through PyTorch 2.9.1 + CUDA 13.
# Where the post has two variants of a version, the higher one is the bar and the other is quoted
# in the panel's subtitle (PUBLISHED_NOTE). Our step NN follows the post's vN (steps 05 and 06 do
# not exist in this repository yet).
# ------------------------------------------------------------------------------------------------
PUBLISHED_SOURCE = "published, seed 001_8ff71249f181e60e.txt; B200; not our measurement"
PUBLISHED_CUBLAS = 1506.74  # "CuBLAS (PyTorch 2.9.1 + CUDA 13)"
PUBLISHED_B200 = [
    # (our step, post's version, what it adds, TFLOPS)
    (1, "v1", "basic tcgen05", 254.62),          # v1a: 2-D 16-byte TMA   (v1b, one 3-D TMA: 252.81)
    (2, "v2", "128B swizzle", 695.43),           # v2b: 3-D 128-byte TMA  (v2a, 2-D TMA: 681.20)
    (3, "v3", "pipelining", 939.61),
    (4, "v4", "warp\nspecialization", 1208.83),
    (5, "v5", "2-SM MMA", 1302.29),
    (6, "v6", "persistent\n(static sched.)", 1475.93),  # "v6 (persistent w/ static scheduling)"
]
PUBLISHED_NOTE = ("v1 = v1a, 2-D 16-byte TMA (v1b, one 3-D TMA: 252.81);  "
                  "v2 = v2b, 3-D 128-byte TMA (v2a, 2-D: 681.20)")

# Short names of our steps, for the x labels (the CSV's step_name is used when present).
OUR_STEP_NAMES = {
    0: "mma.sync\n(warm-up)",
    1: "basic tcgen05",
    2: "128B swizzle",
    3: "pipelining",
    4: "warp\nspecialization",
    5: "2-SM MMA",
    6: "persistent",
}

GPU_COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
PUBLISHED_COLOR = "#ff7f0e"


# ------------------------------------------------------------------------------------------------
# Reading and selecting
# ------------------------------------------------------------------------------------------------

def to_float(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def read_rows(results_dir):
    """All rows of every results_dir/*.csv with the harness's header; warnings on stderr."""
    rows, files = [], sorted(glob.glob(os.path.join(results_dir, "*.csv")))
    for path in files:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != HEADER:
                print(f"warning: {path}: not the harness's CSV header, skipped", file=sys.stderr)
                continue
            for lineno, r in enumerate(reader, start=2):
                if None in r or any(v is None for v in r.values()):
                    print(f"warning: {path}:{lineno}: wrong number of fields, skipped",
                          file=sys.stderr)
                    continue
                r["_file"] = f"{os.path.basename(path)}:{lineno}"
                rows.append(r)
    return files, rows


def usable(r):
    if r["verified"].strip() != "yes" or r["tflops"].strip() == "":
        return False
    try:
        int(r["step"]), int(r["m"]), int(r["n"]), int(r["k"])
    except ValueError:
        return False
    return to_float(r["tflops"]) is not None


def select(rows):
    """{gpu: {"shape": (m,n,k), "steps": {step: row}, "cublas": float|None, "rows": [...]}}"""
    by_gpu = {}
    for r in rows:
        if usable(r):
            by_gpu.setdefault(r["gpu"], []).append(r)
    out = {}
    for gpu, grows in by_gpu.items():
        shapes = {(int(r["m"]), int(r["n"]), int(r["k"])) for r in grows}
        shape = PREFERRED_SHAPE if PREFERRED_SHAPE in shapes else max(
            shapes, key=lambda s: (s[0] * s[1] * s[2], s))
        srows = [r for r in grows if (int(r["m"]), int(r["n"]), int(r["k"])) == shape]
        steps = {}
        for step in sorted({int(r["step"]) for r in srows}):
            cand = [r for r in srows if int(r["step"]) == step]
            rnd = [r for r in cand if r["inputs"] == "random"]
            pool = rnd or [r for r in cand if r["inputs"] == "integer"] or cand
            steps[step] = max(pool, key=lambda r: float(r["tflops"]))
        cub = [to_float(r["cublas_tflops"]) for r in steps.values()]
        cub = [c for c in cub if c is not None]
        out[gpu] = {"shape": shape, "steps": steps,
                    "cublas": statistics.median(cub) if cub else None,
                    "n_rows": len(srows)}
    return out


def ratio_of(r):
    q = to_float(r["ratio"])
    if q is None:
        t, c = to_float(r["tflops"]), to_float(r["cublas_tflops"])
        q = t / c if t is not None and c else None
    return q


def shape_str(s):
    return "M=N=K=%d" % s[0] if s[0] == s[1] == s[2] else "%dx%dx%d (MxNxK)" % s


def short_date(d):
    return d.replace("T", " ").replace("Z", " UTC")


def gpu_caption(gpu, sel):
    rows = list(sel["steps"].values())
    dates = sorted(r["date"] for r in rows)
    if not dates:
        span = "no dates"
    elif dates[0] == dates[-1]:
        span = short_date(dates[0])
    elif dates[0][:10] == dates[-1][:10]:
        span = "%s %s-%s UTC" % (dates[0][:10], dates[0][11:19], dates[-1][11:19])
    else:
        span = "%s - %s" % (short_date(dates[0]), short_date(dates[-1]))
    revs = sorted({r["git_rev"] for r in rows})
    cublas = sorted({r["cublas"] for r in rows if r["cublas"]})
    sms = sorted({r["sm_count"] for r in rows})
    drivers = sorted({r["driver"].split(" (")[0] for r in rows if r["driver"]})
    return "%s (%s SMs), %s\nrows %s; git %s\ndriver %s; cuBLAS %s" % (
        gpu, "/".join(sms), shape_str(sel["shape"]), span, ", ".join(revs),
        ", ".join(drivers) or "?", ", ".join(cublas) or "?")


# ------------------------------------------------------------------------------------------------
# Drawing
# ------------------------------------------------------------------------------------------------

def label_bar(ax, x, h, text, fontsize, rotate, ymax):
    """Value label just above a bar (vertical when bars are narrow)."""
    ax.text(x, h + 0.012 * ymax, text, ha="center", va="bottom", fontsize=fontsize,
            rotation=90 if rotate else 0, linespacing=1.15)


def lighten(color, amount=0.55):
    r, g, b = mcolors.to_rgb(color)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def panel_title(ax, title, subtitle, lines):
    """Bold title with a smaller grey subtitle under it, above the axes, left-aligned. `lines` is
    the subtitle height reserved in both panels, so that the two titles sit at the same height."""
    top = 8 + 13 * lines  # points above the axes
    ax.set_title(title, fontsize=13, fontweight="bold", loc="left", pad=top)
    ax.annotate(subtitle, xy=(0, 1), xycoords="axes fraction", xytext=(0, top - 3),
                textcoords="offset points", ha="left", va="top", fontsize=8.5, color="0.25",
                linespacing=1.3)


def repo_steps():
    """Step numbers that have a kernel in steps/ (to say which ones have no measured row)."""
    out = set()
    for p in glob.glob(os.path.join(ROOT, "steps", "step[0-9][0-9]_*.cu")):
        out.add(int(os.path.basename(p)[4:6]))
    return sorted(out)


def step_label(step, name_from_csv=None):
    name = OUR_STEP_NAMES.get(step) or (name_from_csv or "").replace("_", " ")
    return "step %02d\n%s" % (step, name)


def measured_subtitle(sel):
    gpus = sorted(sel)
    if not gpus:
        return "no verified GPU rows with TFLOPS in the results CSV files"
    return "\n".join(gpu_caption(g, sel[g]) for g in gpus)


def missing_steps_note(ax, sel):
    """Say in the panel which steps of steps/ have no bar, so that a gap is not read as zero."""
    missing = [s for s in repo_steps() if all(s not in v["steps"] for v in sel.values())]
    if missing:
        ax.text(0.99, 0.985, "no verified GPU row yet:\nstep%s %s" % (
            "s" if len(missing) > 1 else "", ", ".join("%02d" % s for s in missing)),
            transform=ax.transAxes, ha="right", va="top", fontsize=8, color="0.35",
            bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.8"))


def draw_measured(ax, sel, ymax, lines):
    gpus = sorted(sel)
    panel_title(ax, "Measured (this repository)", measured_subtitle(sel), lines)
    if not gpus:
        ax.set_xticks([])
        missing_steps_note(ax, sel)
        ax.text(0.5, 0.55, "no measured rows yet\n\nrun a step on a GPU with\n"
                "--csv results/<gpu>_stepNN.csv,\nthen run this script again",
                transform=ax.transAxes, ha="center", va="center", fontsize=10, color="0.45",
                linespacing=1.4)
        return None
    steps = sorted({s for g in gpus for s in sel[g]["steps"]})
    names = {}
    for g in gpus:
        for s, r in sel[g]["steps"].items():
            names.setdefault(s, r["step_name"])
    ncat = len(steps) + 1  # + cuBLAS
    G = len(gpus)
    width = 0.8 / G if G > 1 else 0.6
    rotate = G > 1  # narrow bars: vertical, shorter labels
    fs = 8.5 if G == 1 else 8
    for gi, g in enumerate(gpus):
        color = GPU_COLORS[gi % len(GPU_COLORS)]
        off = (gi - (G - 1) / 2) * width
        for ci, s in enumerate(steps):
            r = sel[g]["steps"].get(s)
            if r is None:
                continue  # no measured row: no bar
            t = float(r["tflops"])
            integer = r["inputs"] != "random"
            ax.bar(ci + off, t, width, color=color, edgecolor="black", linewidth=0.6,
                   hatch="//" if integer else None)
            q = ratio_of(r)
            if rotate:
                txt = "%.1f" % t + (" (%.0f%%)" % (100 * q) if q is not None else "")
                txt += " int" if integer else ""
            else:
                txt = "%.1f" % t + ("\n%.0f%% of cuBLAS" % (100 * q) if q is not None else "")
                txt += "\n(integer inputs)" if integer else ""
            label_bar(ax, ci + off, t, txt, fs, rotate, ymax)
        c = sel[g]["cublas"]
        if c is not None:
            x = len(steps) + off
            ax.bar(x, c, width, color=lighten(color), edgecolor=color, linewidth=1.5)
            label_bar(ax, x, c, "%.1f" % c, fs, rotate, ymax)
    ax.set_xticks(range(ncat))
    ax.set_xticklabels([step_label(s, names.get(s)) for s in steps] + ["cuBLAS\n(same runs)"],
                       fontsize=9)
    ax.set_xlim(-0.6, ncat - 0.4)
    missing_steps_note(ax, sel)

    # Key and notes go under the axes, where they cannot cover a bar or a label.
    handles = [Patch(facecolor=GPU_COLORS[i % len(GPU_COLORS)], edgecolor="black", label=g)
               for i, g in enumerate(gpus)]
    handles.append(Patch(facecolor=lighten(GPU_COLORS[0]), edgecolor=GPU_COLORS[0],
                         linewidth=1.5, label="cuBLAS (light shade): median of the kept rows"))
    if any(r["inputs"] != "random" for g in gpus for r in sel[g]["steps"].values()):
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="//",
                             label="integer inputs (step has no random row)"))
    note = "% of cuBLAS: each row's own ratio column (cuBLAS timed in the same run)"
    return handles, note


def place_key(fig, ax, handles, note):
    """Put the key and the note under the x tick labels (measured after layout, so they never
    cover a label however many lines the labels have)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bottoms = [t.get_window_extent(renderer).y0 for t in ax.get_xticklabels() if t.get_text()]
    y_px = (min(bottoms) if bottoms else ax.get_window_extent(renderer).y0) - 6
    y = ax.transAxes.inverted().transform((0, y_px))[1]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, y), ncol=2, fontsize=8,
              frameon=False, borderaxespad=0, handlelength=1.6, columnspacing=1.5)
    ax.annotate(note, xy=(0, y), xycoords="axes fraction",
                xytext=(0, -6 - 13 * ((len(handles) + 1) // 2)), textcoords="offset points",
                ha="left", va="top", fontsize=8, color="0.25")


def draw_published(ax, ymax, lines):
    for i, (step, ver, what, t) in enumerate(PUBLISHED_B200):
        ax.bar(i, t, 0.6, color=PUBLISHED_COLOR, edgecolor="black", linewidth=0.6, alpha=0.85)
        label_bar(ax, i, t, "%.2f\n%.0f%% of cuBLAS" % (t, 100 * t / PUBLISHED_CUBLAS), 8.5, False,
                  ymax)
    i = len(PUBLISHED_B200)
    ax.bar(i, PUBLISHED_CUBLAS, 0.6, color=lighten(PUBLISHED_COLOR), edgecolor=PUBLISHED_COLOR,
           linewidth=1.5)
    label_bar(ax, i, PUBLISHED_CUBLAS, "%.2f" % PUBLISHED_CUBLAS, 8.5, False, ymax)
    ax.set_xticks(range(len(PUBLISHED_B200) + 1))
    ax.set_xticklabels(["step %02d (%s)\n%s" % (s, v, w) for s, v, w, _ in PUBLISHED_B200]
                       + ["cuBLAS\n(PyTorch 2.9.1\n+ CUDA 13)"], fontsize=9)
    ax.set_xlim(-0.6, len(PUBLISHED_B200) + 0.6)
    panel_title(ax, "Published B200 reference (not measured here)",
                PUBLISHED_SOURCE + "\nBF16, M=N=K=4096; " + PUBLISHED_NOTE, lines)
    ax.set_facecolor("#fbf6ef")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "results"),
                    help="directory of the harness's CSV files [results/]")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "progression.png"),
                    help="PNG to write [docs/img/progression.png]")
    args = ap.parse_args()

    files, rows = read_rows(args.results)
    sel = select(rows)
    print("read %d rows from %d file(s) in %s; %d verified rows with TFLOPS" % (
        len(rows), len(files), args.results, sum(usable(r) for r in rows)))
    for g in sorted(sel):
        s = sel[g]
        print("  %s, %s (%d usable rows of that shape):" % (g, shape_str(s["shape"]), s["n_rows"]))
        for step, r in sorted(s["steps"].items()):
            print("    step %02d %-18s %8s TFLOPS  cuBLAS %8s  ratio %s  inputs %s  (%s)" % (
                step, r["step_name"], r["tflops"], r["cublas_tflops"], r["ratio"], r["inputs"],
                r["_file"]))
        print("    cuBLAS bar (median): %s" % ("%.2f" % s["cublas"] if s["cublas"] else "-"))

    vals = [PUBLISHED_CUBLAS] + [t for *_, t in PUBLISHED_B200]
    for s in sel.values():
        vals += [float(r["tflops"]) for r in s["steps"].values()]
        if s["cublas"]:
            vals.append(s["cublas"])
    # Room for the labels above the bars (vertical labels need more).
    ymax = max(vals) * (1.22 if len(sel) <= 1 else 1.32)

    G = max(1, len(sel))
    n_left = max(3, 1 + len({st for s in sel.values() for st in s["steps"]})) * (1 + 0.3 * (G - 1))
    n_right = len(PUBLISHED_B200) + 1
    lines = max(2, measured_subtitle(sel).count("\n") + 1)  # subtitle lines above the panels
    legend_rows = (G + 1 + 1 + 1) // 2 + 2  # key rows + note lines under the left panel
    height = 4.6 + 0.18 * lines + 0.17 * legend_rows
    fig, (axl, axr) = plt.subplots(
        1, 2, figsize=(min(26.0, 5.0 + 1.3 * (n_left + n_right)), height), sharey=True,
        gridspec_kw={"width_ratios": [n_left, n_right], "wspace": 0.06})
    for ax in (axl, axr):
        ax.set_ylim(0, ymax)
        ax.grid(axis="y", color="0.88", linewidth=0.8)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    axl.set_ylabel("TFLOPS (BF16 in, FP32 accumulate)", fontsize=10)
    key = draw_measured(axl, sel, ymax, lines)
    draw_published(axr, ymax, lines)
    fig.suptitle("BF16 GEMM, step by step: measured here vs. the published B200 progression "
                 "(same TFLOPS scale; different GPUs)", fontsize=12, x=0.01, ha="left",
                 y=1 - 0.12 / height)
    fig.subplots_adjust(left=0.06, right=0.99, top=1 - (0.75 + 0.18 * lines) / height,
                        bottom=(0.75 + 0.17 * legend_rows) / height)
    if key:
        place_key(fig, axl, *key)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=130)
    print("wrote %s" % os.path.abspath(args.out))


if __name__ == "__main__":
    main()
