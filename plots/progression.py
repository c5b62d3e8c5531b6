#!/usr/bin/env python3
"""progression.py - the step-by-step BF16 chart: measured, predicted and published, side by side.

Per BF16 step (00..06, 08, 09: every step but the NVFP4 ones) up to three kinds of bar, never mixed up:
  measured   one bar per GPU (rows grouped by their gpu column, the device's full name: a B200's
             and a B300's rows are two series, whichever files hold them), read ONLY from the
             harness's rows in results/<gpu>.csv
             (`stepNN --csv FILE`, `make bench`); nothing is estimated or filled in;
  model      the emulator's B200 timing model, results/model_b200.csv (`make predict`): a
             PREDICTION, not a measurement (hatched);
  published  the B200 figures of gau-nernst's blog post "tcgen05 for dummies" (docs/references.md,
             id gau-tcgen05), from results/published_b200.csv ("published, not measured here").
Top panel: TFLOPS (and a cuBLAS group: each GPU's cuBLAS timed in the same runs, the published
cuBLAS). Bottom panel: % of cuBLAS - measured: each row's own ratio column (cuBLAS timed in the
same run); model and published: divided by the PUBLISHED cuBLAS figure (the model has no cuBLAS).

Measured rows: verified == yes and a tflops value (emulator rows have none, --no-check runs say
"skipped"); per GPU the 4096^3 shape, or its largest shape if it has no 4096^3 row; per step the
newest inputs=random row (inputs=integer if the step has no random row; hatched "//").
Model rows: the 4096^3 rows of results/model_b200.csv (the last one per step).

Usage:  python3 plots/progression.py [--results DIR] [--out FILE]
  --results DIR   directory of the CSV files [results/]
  --out FILE      the PNG [docs/img/progression.png]
Needs matplotlib (Agg backend, no display). Exit 2 with one line if an input cannot be used.
"""
import argparse
import glob
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_io import (ROOT, MODEL_FILE, NVFP4_STEPS, PUBLISHED_FILE, STEP_TITLES, InputError,  # noqa: E402
                        Published, harness_csv_files, read_harness_csv, read_model, row_range, row_tflops, shape_of, step_of,
                        to_float)

PREFERRED_SHAPE = (4096, 4096, 4096)
GPU_COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
MODEL_COLOR = "#7f7f7f"
PUBLISHED_COLOR = "#ff7f0e"
PUBLISHED_LABEL = "published (gau-nernst, tcgen05 for dummies), not measured here"
MODEL_LABEL = "B200 timing model (prediction, not a measurement)"


# ------------------------------------------------------------------------------------------------
# Reading and selecting
# ------------------------------------------------------------------------------------------------

def measured_rows(results_dir):
    """Harness rows of every step-run CSV of results_dir (results_io.harness_csv_files)."""
    rows, files = [], []
    for path in harness_csv_files(results_dir):
        try:
            rows += read_harness_csv(path)
            files.append(path)
        except InputError as e:  # a harness CSV of another version: say so
            print("warning: %s, skipped" % e, file=sys.stderr)
    return files, rows


def usable(r):
    return (r["verified"].strip() == "yes" and r["tflops"].strip() != ""
            and to_float(r["tflops"]) is not None and step_of(r) is not None
            and shape_of(r) is not None and r["dtype"] == "bf16")


def select_measured(rows):
    """{gpu: {"shape", "steps": {step: row}, "cublas": median or None, "n_rows"}}"""
    by_gpu = {}
    for r in rows:
        if usable(r):
            by_gpu.setdefault(r["gpu"], []).append(r)
    out = {}
    for gpu, grows in by_gpu.items():
        shapes = {shape_of(r) for r in grows}
        shape = PREFERRED_SHAPE if PREFERRED_SHAPE in shapes else max(
            shapes, key=lambda s: (s[0] * s[1] * s[2], s))
        srows = [r for r in grows if shape_of(r) == shape]
        steps = {}
        for step in sorted({step_of(r) for r in srows}):
            cand = [r for r in srows if step_of(r) == step]
            pool = ([r for r in cand if r["inputs"] == "random"]
                    or [r for r in cand if r["inputs"] == "integer"] or cand)
            steps[step] = max(pool, key=lambda r: (r["date"], r["_file"]))  # the newest
        cub = [c for c in (to_float(r["cublas_tflops"]) for r in steps.values()) if c]
        out[gpu] = {"shape": shape, "steps": steps, "n_rows": len(srows),
                    "cublas": statistics.median(cub) if cub else None}
    return out


def ratio_of(r):
    q = to_float(r["ratio"])
    if q is None:
        t, c = to_float(r["tflops"]), to_float(r["cublas_tflops"])
        q = t / c if t is not None and c else None
    return q


def shape_str(s):
    return "M=N=K=%d" % s[0] if s[0] == s[1] == s[2] else "%dx%dx%d (MxNxK)" % s


def span_of(dates):
    dates = sorted(d.replace("T", " ").replace("Z", "") for d in dates)
    if not dates:
        return "no dates"
    if dates[0] == dates[-1]:
        return dates[0] + " UTC"
    if dates[0][:10] == dates[-1][:10]:
        return "%s %s-%s UTC" % (dates[0][:10], dates[0][11:19], dates[-1][11:19])
    return "%s - %s UTC" % (dates[0], dates[-1])


def gpu_caption(gpu, sel):
    rows = list(sel["steps"].values())
    drivers = sorted({r["driver"].split(" (")[0] for r in rows if r["driver"]})
    return "measured: %s (%s SMs), %s; rows %s; git %s; driver %s; CUDA %s; cuBLAS %s" % (
        gpu, "/".join(sorted({r["sm_count"] for r in rows})), shape_str(sel["shape"]),
        span_of(r["date"] for r in rows), ", ".join(sorted({r["git_rev"] for r in rows})),
        ", ".join(drivers) or "?", ", ".join(sorted({r["cuda_runtime"] for r in rows})) or "?",
        ", ".join(sorted({r["cublas"] for r in rows if r["cublas"]})) or "?")


def model_caption(model_rows):
    if not model_rows:
        return "model: no rows yet (run `make predict`: results/model_b200.csv)"
    rows = list(model_rows.values())
    return "model: %s, M=N=K=4096; rows %s; git %s" % (
        ", ".join(sorted({r["gpu"] for r in rows})), span_of(r["date"] for r in rows),
        ", ".join(sorted({r["git_rev"] for r in rows})))


# ------------------------------------------------------------------------------------------------
# Drawing
# ------------------------------------------------------------------------------------------------

def lighten(color, amount=0.55):
    r, g, b = mcolors.to_rgb(color)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def repo_steps():
    out = set()
    for p in glob.glob(os.path.join(ROOT, "steps", "step[0-9][0-9]_*.cu")):
        out.add(int(os.path.basename(p)[4:6]))
    return sorted(s for s in out if s in STEP_TITLES and s not in NVFP4_STEPS)


MODEL_RANGES = {}  # step -> (low, high) TFLOPS of the model's range (drawn as an error bar)


def build_series(sel, model, pub):
    """[(key, label, color, hatch, {category: (value, pct, note)})]; categories are step numbers
    and "cublas". pct is a fraction of cuBLAS (see the module docstring) or None."""
    pub_cublas, _ = pub.cublas_bf16()
    series = []
    for gi, g in enumerate(sorted(sel)):
        vals = {}
        for s, r in sel[g]["steps"].items():
            vals[s] = (float(r["tflops"]), ratio_of(r), "int" if r["inputs"] != "random" else "")
        if sel[g]["cublas"]:
            vals["cublas"] = (sel[g]["cublas"], None, "")
        series.append(("gpu", "measured: " + g, GPU_COLORS[gi % len(GPU_COLORS)], None, vals))
    mvals = {}
    for (s, shape), r in model.items():
        if shape == PREFERRED_SHAPE and s not in NVFP4_STEPS:
            t = row_tflops(r)
            mvals[s] = (t, t / pub_cublas, "")
            if row_range(r):
                MODEL_RANGES[s] = row_range(r)
    series.append(("model", MODEL_LABEL + "; whisker: its range", MODEL_COLOR, "xx", mvals))
    pvals = {"cublas": (pub_cublas, None, "")}
    for s in pub.bf16_steps():
        p = pub.bf16_step(s)
        if p is not None:
            t = to_float(p["tflops"])
            pvals[s] = (t, t / pub_cublas, p["kernel_in_source"].split(" ")[0])
    series.append(("published", PUBLISHED_LABEL, PUBLISHED_COLOR, None, pvals))
    return series


def draw(series, cats, ax_t, ax_p, pub_cublas):
    n = len(series)
    width = min(0.8 / n, 0.3)
    ymax = max([v[0] for *_, vals in series for v in vals.values()] + [hi for _, hi in MODEL_RANGES.values()]
               + [1.0]) * 1.28
    pmax = max([v[1] for *_, vals in series for v in vals.values() if v[1] is not None]
               + [1.0]) * 1.3
    for si, (key, label, color, hatch, vals) in enumerate(series):
        off = (si - (n - 1) / 2) * width
        for ci, c in enumerate(cats):
            if c not in vals:
                continue
            t, pct, note = vals[c]
            face = lighten(color) if c == "cublas" or key == "model" else color
            h = "//" if note == "int" else hatch
            ax_t.bar(ci + off, t, width, color=face, edgecolor=color if key == "model" else "black",
                     linewidth=0.7, hatch=h)
            txt = "%.0f" % t + (" (%s)" % note if note else "")
            top = t
            if key == "model" and c in MODEL_RANGES:  # the range: every uncertain parameter at its slow / fast end
                lo, hi = MODEL_RANGES[c]
                ax_t.errorbar(ci + off, t, yerr=[[max(t - lo, 0)], [max(hi - t, 0)]], fmt="none", ecolor="0.15",
                              elinewidth=0.9, capsize=2.5)
                top = max(t, hi)
            ax_t.text(ci + off, top + 0.012 * ymax, txt, ha="center", va="bottom", fontsize=7,
                      rotation=90)
            if pct is not None and c != "cublas":
                ax_p.bar(ci + off, 100 * pct, width, color=face,
                         edgecolor=color if key == "model" else "black", linewidth=0.7, hatch=h)
                ax_p.text(ci + off, 100 * pct + 0.012 * 100 * pmax, "%.0f%%" % (100 * pct),
                          ha="center", va="bottom", fontsize=7, rotation=90)
        if not vals:
            ax_t.text(0.5, 0.93, "no %s rows yet" % key, transform=ax_t.transAxes, ha="center",
                      fontsize=8, color="0.4")
    ax_t.set_ylim(0, ymax)
    ax_p.set_ylim(0, 100 * pmax)
    ax_p.axhline(100, color="0.5", linewidth=0.8, linestyle="--")
    ax_t.set_ylabel("TFLOPS (BF16 in, FP32 accumulate)", fontsize=9)
    ax_p.set_ylabel("% of cuBLAS", fontsize=9)
    ax_p.set_xticks(range(len(cats)))
    ax_p.set_xticklabels([("step %02d\n%s" % (c, STEP_TITLES[c].replace(" (", "\n(")))
                          if c != "cublas" else "cuBLAS" for c in cats], fontsize=8.5)
    for ax in (ax_t, ax_p):
        ax.set_xlim(-0.6, len(cats) - 0.4)
        ax.grid(axis="y", color="0.88", linewidth=0.8)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    ax_p.set_title("%% of cuBLAS. Measured: each row's own ratio (cuBLAS timed in the same run). "
                   "Model and published: %% of the PUBLISHED cuBLAS, %.2f TFLOPS (tcgen05 for dummies; the "
                   "model runs no cuBLAS)." % pub_cublas, fontsize=8, color="0.25", loc="left")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "results"),
                    help="directory of the CSV files [results/]")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "progression.png"),
                    help="PNG to write [docs/img/progression.png]")
    args = ap.parse_args()
    try:
        pub = Published(os.path.join(args.results, PUBLISHED_FILE))
        pub_cublas, _ = pub.cublas_bf16()
        model = read_model(os.path.join(args.results, MODEL_FILE))
    except (InputError, OSError) as e:
        print("progression.py: %s" % e, file=sys.stderr)
        return 2
    files, rows = measured_rows(args.results)
    sel = select_measured(rows)
    print("read %d measured rows from %d file(s) in %s; %d usable; %d model rows" % (
        len(rows), len(files), args.results, sum(usable(r) for r in rows), len(model)))
    for g in sorted(sel):
        for step, r in sorted(sel[g]["steps"].items()):
            print("  %s step %02d: %s TFLOPS, cuBLAS %s, ratio %s, inputs %s (%s)" % (
                g, step, r["tflops"], r["cublas_tflops"], r["ratio"], r["inputs"], r["_file"]))

    series = build_series(sel, model, pub)
    cats = sorted({c for *_, vals in series for c in vals if c != "cublas"} | set(repo_steps()))
    cats.append("cublas")
    captions = [gpu_caption(g, sel[g]) for g in sorted(sel)] or ["measured: no verified rows"]
    captions.append(model_caption(model))
    captions.append("published: gau-nernst, 'tcgen05 for dummies' (gau-nernst.github.io/tcgen05), B200 (Modal), M=N=K=4096, cuBLAS "
                    "via PyTorch 2.9.1 + CUDA 13 (%s)" % pub.file)
    width = max(11.0, 1.2 + 0.45 * len(series) * len(cats))
    height = 8.2 + 0.16 * len(captions)
    fig, (ax_t, ax_p) = plt.subplots(2, 1, figsize=(width, height), sharex=True,
                                     gridspec_kw={"height_ratios": [3, 2], "hspace": 0.16})
    draw(series, cats, ax_t, ax_p, pub_cublas)
    fig.suptitle("BF16 GEMM step by step, M=N=K=4096: measured here, predicted by the B200 "
                 "timing model, published (different GPUs and sources)", fontsize=11.5, x=0.01,
                 ha="left", y=1 - 0.1 / height)
    fig.text(0.01, 1 - 0.42 / height, "\n".join(captions), fontsize=7.5, color="0.25",
             va="top", ha="left", linespacing=1.35)
    handles = [Patch(facecolor=c if k != "model" else lighten(c), hatch=h,
                     edgecolor=c if k == "model" else "black", label=lbl)
               for k, lbl, c, h, _ in series]
    if any(v[2] == "int" for k, *_, vals in series if k == "gpu" for v in vals.values()):
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="//",
                             label="integer inputs (the step has no random row)"))
    handles.append(Patch(facecolor=lighten(GPU_COLORS[0]), edgecolor="black",
                         label="cuBLAS group: each GPU's median cuBLAS of the kept rows; "
                               "published cuBLAS"))
    fig.legend(handles=handles, loc="lower left", ncol=2, fontsize=8, frameon=False,
               bbox_to_anchor=(0.01, 0.0))
    fig.subplots_adjust(left=0.07, right=0.99, top=1 - (0.62 + 0.16 * len(captions)) / height,
                        bottom=(1.15 + 0.16 * ((len(handles) + 1) // 2)) / height)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
