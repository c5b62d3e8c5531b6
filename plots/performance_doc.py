#!/usr/bin/env python3
"""performance_doc.py - writes docs/performance.md: the emulator's B200 timing model next to the
published B200 figures. Run by `make predict` (plots/predict.sh) after it has rewritten
results/model_b200.csv; it reads only CSV files and the model's parameter table:

  --model FILE         the model's rows (harness CSV) [results/model_b200.csv]
  --published FILE     published B200 figures [results/published_b200.csv]
  --model-params FILE  the Markdown table `./step01 --model-params` printed; absent or empty:
                       the page says so (with --model-params-note TEXT as the reason)
  --out FILE           the page [docs/performance.md]
  --rev REV, --date D  what the header says (default: `git rev-parse`, now in UTC)

Exit codes: 0 written, 2 an input cannot be used (one line on stderr).
"""
import argparse
import csv
import datetime
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_io import (ROOT, MODEL_FILE, NVFP4_STEPS, PUBLISHED_FILE, STEP_TITLES, InputError,  # noqa: E402
                        Published, flops, read_model, row_range, row_tflops, row_time_us, to_float)

WITHIN = 0.25  # "within 25%": |model / published - 1| <= WITHIN
BF16_SHAPE = (4096, 4096, 4096)


def git_rev():
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        # The files make predict itself rewrites do not make the revision dirty: a page generated
        # right after a commit names that commit. Any other change does, and the page says so.
        generated = [":!results/model_b200.csv", ":!results/model_b200_sweeps.csv", ":!results/validation_b200.csv",
                     ":!results/model_b200_dual_gemm.csv", ":!results/model_b200_grouped.csv",
                     ":!docs/performance.md", ":!docs/img"]
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "."] + generated, cwd=ROOT).returncode != 0
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt(x, spec="%.1f"):
    return "—" if x is None else spec % x


def rel(path, start):
    return os.path.relpath(path, start).replace(os.sep, "/")


def range_text(r, time_shape=None):
    """A model row's range: "LOW - HIGH" TFLOPS, or with time_shape the times in us (slow - fast)."""
    rg = row_range(r) if r else None
    if not rg:
        return "—"
    if time_shape:
        f = flops(time_shape)
        return "%.2f - %.2f" % (f / (rg[0] * 1e6), f / (rg[1] * 1e6))
    return "%.0f - %.0f" % rg


def noise_spreads():
    """{(config, (m, n, k)): spread in us} of results/model_b200_noise.csv (plots/predict_noise.py);
    the configs stepNN are the steps' own plans. {} without the file."""
    path = os.path.join(ROOT, "results", "model_b200_noise.csv")
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        return {(r["config"], (int(r["m"]), int(r["n"]), int(r["k"]))): float(r["spread_us"])
                for r in csv.DictReader(f)}


def claims(model, pub):
    """Each step against the one it builds on, at the point and at both ends of the range (the
    same parameter set for both steps at each end): does the later step stay faster?"""
    L = []
    pairs = [((a, BF16_SHAPE), (b, BF16_SHAPE), "%02d vs %02d" % (b, a))
             for a, b in ((1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 8), (8, 9))]
    pairs += [((a, sh), (b, sh), "%02d vs %02d at %d x %d x %d" % ((b, a) + sh))
              for a, b in ((7, 10), (10, 11), (11, 12), (12, 13)) for sh in pub.nvfp4_shapes()]
    noise = noise_spreads()
    for ka, kb, label in pairs:
        ra, rb = model.get(ka), model.get(kb)
        if not ra or not rb:
            continue
        pa, pb = row_tflops(ra), row_tflops(rb)
        ga, gb = row_range(ra), row_range(rb)
        ends = [("point", pa, pb)]
        if ga and gb:
            ends += [("slow end", ga[0], gb[0]), ("fast end", ga[1], gb[1])]
        signs = {name: (b > a * 1.005) - (b < a * 0.995) for name, a, b in ends}
        what = "; ".join("%s %.0f vs %.0f" % (name, b, a) for name, a, b in ends)
        if len(ends) < 3:
            verdict = "no range in the CSV"
        elif all(v == signs["point"] for v in signs.values()):
            verdict = {1: "faster across the range", -1: "slower across the range",
                       0: "the same (within 0.5%) across the range"}[signs["point"]]
        else:
            verdict = "**the order changes within the range** (%s)" % ", ".join(
                "%s: %s" % (n, {1: "faster", -1: "slower", 0: "equal"}[v]) for n, v in signs.items())
        # The model's own noise (plots/predict_noise.py): a difference within it is a tie.
        na, nb = noise.get(("step%02d" % ka[0], ka[1])), noise.get(("step%02d" % kb[0], kb[1]))
        if na is not None and nb is not None and ka[1] != BF16_SHAPE:
            f = flops(ka[1])
            dt = abs(f / (pa * 1e6) - f / (pb * 1e6))
            if dt <= max(na, nb):
                verdict = "**a tie at the point**: %.2f µs apart, within the model's noise (%.2f µs); %s" % (
                    dt, max(na, nb), verdict)
        L.append("* step %s: %s (TFLOPS, later vs earlier: %s)." % (label, verdict, what))
    return L


def bf16_table(model, pub):
    cublas, _ = pub.cublas_bf16()
    lines = ["| step | model TFLOPS (predicted) | model range | published B200 TFLOPS | kernel in the source "
             "| model / published | within 25% | model, % of published cuBLAS |",
             "|---|---:|---:|---:|---|---:|:---:|---:|"]
    notes = []
    # Steps with a published figure, and steps the model predicts at 4096^3 without one (step 08).
    steps = sorted(set(pub.bf16_steps()) | {s for (s, shape) in model if shape == BF16_SHAPE})
    for step in steps:
        p = pub.bf16_step(step)
        if p is None:
            r = model.get((step, BF16_SHAPE))
            t = row_tflops(r) if r else None
            lines.append("| %02d %s | %s | %s | — | no published figure | — | — | %s |" % (
                step, STEP_TITLES.get(step, ""), fmt(t), range_text(r),
                fmt(None if t is None else 100 * t / cublas, "%.0f%%")))
            continue
        r = model.get((step, BF16_SHAPE))
        t = row_tflops(r) if r else None
        pt = to_float(p["tflops"])
        q = t / pt if t is not None and pt else None
        within = "—" if q is None else ("yes" if abs(q - 1) <= WITHIN else "no")
        lines.append("| %02d %s | %s | %s | %s | %s | %s | %s | %s |" % (
            step, STEP_TITLES.get(step, p["step_name"]), fmt(t), range_text(r), fmt(pt, "%.2f"),
            p["kernel_in_source"], fmt(q, "%.2f"), within,
            fmt(None if t is None else 100 * t / cublas, "%.0f%%")))
        others = pub.bf16_variants(step)
        if others:
            notes.append("* step %02d is compared with **%s** (%s): %s. Other variant%s in the "
                         "source: %s." % (
                             step, p["kernel_in_source"], p["tflops"], p["note"],
                             "s" if len(others) > 1 else "",
                             "; ".join("%s %s (%s)" % (o["kernel_in_source"], o["tflops"],
                                                       o["note"]) for o in others)))
    lines.append("| cuBLAS | — | — | %.2f | %s | — | — | 100%% |" % (cublas, pub.cublas_bf16()[1][
        "kernel_in_source"]))
    return lines, notes


def nvfp4_table(model, pub):
    lines = ["| M x N x K | step | model time, us (predicted) | model range, us | model TFLOPS | speed of light, us "
             "| model / SOL | cuBLASLt (published), us | model / cuBLASLt | competition entry "
             "(published), us | model / entry |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for shape in pub.nvfp4_shapes():
        sol, lt, ent = pub.nvfp4(shape, "sol"), pub.nvfp4(shape, "cublaslt"), pub.nvfp4(shape, "entry")
        sol_us = to_float(sol["time_us"]) if sol else None
        lt_us = to_float(lt["time_us"]) if lt else None
        ent_us = to_float(ent["time_us"]) if ent else None
        for step in NVFP4_STEPS:
            r = model.get((step, shape))
            us = row_time_us(r) if r else None
            t = row_tflops(r) if r else None
            lines.append("| %d x %d x %d | %02d %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                shape + (step, STEP_TITLES.get(step, ""), fmt(us, "%.2f"), range_text(r, shape), fmt(t, "%.0f"),
                         fmt(sol_us, "%.3f"), fmt(us / sol_us if us and sol_us else None, "%.2f"),
                         fmt(lt_us, "%.2f"), fmt(us / lt_us if us and lt_us else None, "%.2f"),
                         fmt(ent_us, "%.2f"), fmt(us / ent_us if us and ent_us else None, "%.2f"))))
    return lines


def model_provenance(model):
    rows = list(model.values())
    if not rows:
        return None
    gpus = sorted({r["gpu"] for r in rows})
    revs = sorted({r["git_rev"] for r in rows})
    dates = sorted(r["date"] for r in rows)
    return "%d rows; gpu column \"%s\"; binaries at git %s; run %s%s" % (
        len(rows), "\", \"".join(gpus), ", ".join(revs), dates[0],
        "" if dates[0] == dates[-1] else " to " + dates[-1])


def page(args, model, pub, params, params_note):
    out_dir = os.path.dirname(os.path.abspath(args.out))
    model_link = rel(args.model, out_dir)
    pub_link = rel(args.published, out_dir)
    L = []
    L.append("<!-- generated by `make predict` (plots/predict.sh -> plots/performance_doc.py); "
             "do not edit: edit those scripts or the CSV files and run make predict again -->")
    L.append("# Performance: the B200 timing model and published figures")
    L.append("")
    L.append("*Generated by `make predict` on %s at git revision `%s`%s; do not edit.*" % (
        args.date, args.rev, " (the sources had uncommitted changes: regenerate after committing them)"
        if args.rev.endswith("-dirty") else ""))
    L.append("")
    L.append("**No B200 was available to this project.** Every \"model\" figure on this page is a "
             "**prediction** of the emulator's B200 timing model ([timing_model.md](%s), run "
             "as `./stepNN --predict`, timing only, no arithmetic), not a measurement. The "
             "\"published\" figures were measured by other people on a B200 and are quoted with "
             "their source ([%s](%s)); they were not measured here either. What this project "
             "did measure (on an H100, where only step 00 can run) is in the README's Results "
             "section and `results/<gpu>.csv`." % (
                 rel(os.path.join(ROOT, "docs", "timing_model.md"), out_dir), pub.file, pub_link))
    L.append("")
    prov = model_provenance(model)
    L.append("Model rows: [%s](%s)%s." % (
        os.path.basename(args.model), model_link,
        " — " + prov if prov else " — **none yet**: the file is missing or has no rows "
        "(the steps' `--predict` flag may not be built in; run `make predict`)"))
    L.append("")
    L.append("## BF16 steps 01-06, 08 and 09, M = N = K = 4096")
    L.append("")
    L.append("Published: gau-nernst, \"tcgen05 for dummies\" ([gau-tcgen05](references.md#gau-tcgen05), B200 on "
             "Modal, BF16, M = N = K = 4096; cuBLAS through PyTorch 2.9.1 + CUDA 13). "
             "\"within 25%%\" means |model / published - 1| <= %d%%. The last column divides the "
             "model by the *published* cuBLAS figure (no cuBLAS can run in the model)." % (
                 100 * WITHIN))
    L.append("")
    tab, notes = bf16_table(model, pub)
    L += tab
    L.append("")
    L += notes
    L.append("")
    L.append("Why a step misses (the model mostly errs on the fast side: what it leaves out only costs "
             "time), and what bounds each step in the model: [timing_model.md, \"Predictions "
             "against published figures\"](%s#predictions-against-published-figures). No "
             "parameter was changed to bring a step closer." % rel(
                 os.path.join(ROOT, "docs", "timing_model.md"), out_dir))
    L.append("")
    L.append("## NVFP4 steps 07 and 10-13, the competition shapes")
    L.append("")
    L.append("Speed of light (SOL): max(FP4 math time, DRAM time) at 1.5 GHz, as the task "
             "computes it ([gpumode-nvfp4](references.md#gpumode-nvfp4), `task.yml`); "
             "it is a bound, not a kernel. cuBLASLt (through `torch._scaled_mm`): B200 times "
             "from gau-nernst's competition worklog ([gau-nvfp4-worklog](references.md#gau-nvfp4-worklog)); "
             "the competition entry: the best times that worklog reports for a hand-written kernel "
             "(split-K 2, A and B swapped). All are held in [%s](%s)."
             % (pub.file, pub_link))
    L.append("")
    L += nvfp4_table(model, pub)
    L.append("")
    L.append("![NVFP4 steps 07 and 10-13 beside the published competition kernels](%s)" % rel(
        os.path.join(ROOT, "docs", "img", "progression_nvfp4.png"), out_dir))
    L.append("")
    L.append("The chart of this table and of the published kernels held against the model (results/validation_b200.csv), "
             "drawn by `make plots` (plots/nvfp4_chart.py): predicted kernel and call times with the model's range; "
             "published call times beside the model's predicted call ([docs/10](10_nvfp4_split_k.md#results-b200-timing-model) "
             "says what is drawn).")
    L.append("")
    L.append("## Which step beats which, across the range")
    L.append("")
    L.append("\"model range\" above runs the model twice more: with every parameter that is an "
             "estimate or carried from the H100 at the end of its range that makes kernels slower, "
             "then at the end that makes them faster (the ranges and their reasons: the table at the "
             "end of this page; [timing_model.md, \"Ranges\"](%s#ranges)). Both steps of a "
             "comparison run with the same parameters at each end, so a claim holds across the "
             "range when the order is the same at the point and at both ends:" % rel(
                 os.path.join(ROOT, "docs", "timing_model.md"), out_dir))
    L.append("")
    L += claims(model, pub) or ["* no model rows with ranges yet (run `make predict`)."]
    L.append("")
    L.append("## The model's parameters")
    L.append("")
    if params:
        L.append("As printed by `./step01 --model-params` (the table the model runs with; "
                 "[timing_model.md](%s) explains each row):" % rel(
                     os.path.join(ROOT, "docs", "timing_model.md"), out_dir))
        L.append("")
        L += params.rstrip("\n").split("\n")
    else:
        L.append("*Not available: %s. The model's description and parameters are in "
                 "[timing_model.md](%s).*" % (params_note or "`./step01 --model-params` printed "
                                              "nothing", rel(os.path.join(
                                                  ROOT, "docs", "timing_model.md"), out_dir)))
    L.append("")
    L.append("## Regenerating")
    L.append("")
    L.append("```")
    L.append("make predict     # ./stepNN --predict for steps 01-13, rewrites "
             "results/model_b200.csv, then this page")
    L.append("make plots       # the charts (docs/img/progression.png, timelines)")
    L.append("make bench       # on a GPU: measured rows in results/<gpu>.csv")
    L.append("```")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "results", MODEL_FILE))
    ap.add_argument("--published", default=os.path.join(ROOT, "results", PUBLISHED_FILE))
    ap.add_argument("--model-params", default=None)
    ap.add_argument("--model-params-note", default=None)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--rev", default=None)
    ap.add_argument("--date", default=None)
    args = ap.parse_args()
    args.rev = args.rev or git_rev()
    args.date = args.date or datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    try:
        pub = Published(args.published)
        model = read_model(args.model)
        params = ""
        if args.model_params and os.path.exists(args.model_params):
            with open(args.model_params) as f:
                params = f.read()
            if "|" not in params:  # not a Markdown table: treat as missing, keep the reason
                args.model_params_note = args.model_params_note or "its output had no table"
                params = ""
    except (InputError, OSError) as e:
        print("performance_doc.py: %s" % e, file=sys.stderr)
        return 2
    text = page(args, model, pub, params, args.model_params_note)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print("wrote %s (%d model rows)" % (args.out, len(model)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
