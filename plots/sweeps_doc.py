#!/usr/bin/env python3
"""sweeps_doc.py - the step pages' tables of the timing model's sweeps, as Markdown, from
results/model_b200_sweeps.csv (written by `make predict`, plots/predict_sweeps.sh).

The pages include them as `<!-- quote md: python3 plots/sweeps_doc.py TABLE -->` blocks, which
`make docs-quotes` rewrites and `make test` compares (tests/checks/docs_quotes.py). Tables:
  step08-k      steps 06 and 08 at M = N = 4096 for K = 4096, 512, 256, and at 8192^3
  step09-big    steps 06, 08, 09 at 4096^3 (results/model_b200.csv) and 8192^3
  step10-splits step 10's predicted time for each forced split count S, per shape
  nvfp4         steps 10 and 07 at the competition shapes (results/model_b200.csv) beside the
                task's speed of light and cuBLASLt's published time (results/published_b200.csv)
  nvfp4-levers  the sweep nvfp4-levers: each config's point and range at the competition shapes,
                beside speed of light, cuBLASLt and the competition entry (published_b200.csv)
  nvfp4-lever-gains  from the same rows: what each of step 11's levers saves alone (from none of
                them) and last (from the other two to all three), at the point and at both ends
  bf16-levers   step 14's levers (sweep bf16-levers, make predict-big): multicast across
                pairs and the tile order, each alone and both, at 4096^3 and 8192^3, with the
                plan that ran and HBM's busy share

  python3 plots/sweeps_doc.py TABLE [--csv FILE] [--model FILE]
"""
import argparse
import csv
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def cell(r):
    return "%s TFLOPS (%.2f µs)" % (r["tflops"], float(r["time_us"])) if r else "—"


def find(rows, **kw):
    hits = [r for r in rows if all(str(r[k]) == str(v) for k, v in kw.items())]
    return hits[-1] if hits else None


def provenance(rows):
    revs = sorted({r["git_rev"] for r in rows})
    dates = sorted({r["date"][:10] for r in rows})
    return "`make predict` → [results/model_b200_sweeps.csv](../results/model_b200_sweeps.csv) (%s, git %s)" % (
        ", ".join(dates), ", ".join(revs))


def step08_k(rows):
    L = ["| M = N | K | step 06 | step 08 |", "|---|---|---|---|"]
    sw = [r for r in rows if r["sweep"] in ("step08-k", "big")]
    for m, k in ((4096, 4096), (4096, 512), (4096, 256), (8192, 8192)):
        L.append("| %d | %d | %s | %s |" % (m, k, cell(find(sw, step=6, m=m, k=k)), cell(find(sw, step=8, m=m, k=k))))
    L += ["", "Predicted by the B200 timing model, not measured: " + provenance(sw) + "."]
    return L


def step09_big(rows, model_path):
    model = read(model_path) if os.path.exists(model_path) else []
    L = ["| | 4096³ | 8192³ |", "|---|---|---|"]
    names = {6: "step 06 (static, step-06 epilogue, 7 stages)", 8: "step 08 (static, TMA-store epilogue, 6 stages)",
             9: "step 09 (CLC)"}
    big = [r for r in rows if r["sweep"] == "big"]
    for s in (6, 8, 9):
        m4 = next((r for r in reversed(model) if r["step"] == str(s) and r["m"] == "4096" and r["n"] == "4096"
                   and r["k"] == "4096"), None)
        c4 = "%s TFLOPS (%.2f µs)" % (m4["tflops"], float(m4["median_ms"]) * 1000) if m4 else "—"
        L.append("| %s | %s | %s |" % (names[s], c4, cell(find(big, step=s))))
    L += ["", "Predicted by the B200 timing model, not measured: the 4096³ column from "
          "[results/model_b200.csv](../results/model_b200.csv), the 8192³ column from " + provenance(big) + "."]
    return L


def step10_splits(rows):
    sw = [r for r in rows if r["sweep"] == "step10-splits"]
    shapes = []
    for r in sw:
        key = (int(r["m"]), int(r["n"]), int(r["k"]))
        if key not in shapes:
            shapes.append(key)
    splits = sorted({int(r["splits"]) for r in sw})
    L = ["| M × N × K (k-tiles) | " + " | ".join("S = %d" % s for s in splits) + " |",
         "|---|" + "---:|" * len(splits)]
    for m, n, k in shapes:
        times = {int(r["splits"]): float(r["time_us"]) for r in sw if (int(r["m"]), int(r["n"]), int(r["k"])) == (m, n, k)}
        best = min(times, key=lambda s: (times[s], s))
        cells = []
        for s in splits:
            if s not in times:
                cells.append("")
            else:
                cells.append(("**%.2f**" if s == best else "%.2f") % times[s])
        L.append("| %d × %d × %d (%d) | %s |" % (m, n, k, (k + 255) // 256, " | ".join(cells)))
    L += ["", "µs, predicted by the B200 timing model with S forced (`TCG_STEP10_SPLITS=S ./step10 --predict "
          "--m M --n N --k K`), the fastest in bold: " + provenance(sw) + "."]
    return L


def nvfp4(model_path):
    model = read(model_path)
    pub = read(os.path.join(ROOT, "results", "published_b200.csv"))
    L = ["| M × N × K | step 10, µs (predicted) | / SOL | step 07, µs (predicted) | / SOL | SOL, µs | "
         "cuBLASLt (published), µs |", "|---|---:|---:|---:|---:|---:|---:|"]
    for p in [r for r in pub if r["step_name"] == "sol"]:
        shape = (p["m"], p["n"], p["k"])
        sol = float(p["time_us"])
        cub = next((float(r["time_us"]) for r in pub if r["step_name"] == "cublaslt" and (r["m"], r["n"], r["k"]) == shape),
                   None)
        cells = []
        for step in ("10", "7"):
            r = next((r for r in reversed(model) if r["step"] == step and (r["m"], r["n"], r["k"]) == shape), None)
            t = float(r["median_ms"]) * 1000 if r else None
            cells += ["%.2f" % t if t else "—", "%.2f" % (t / sol) if t else "—"]
        L.append("| %s × %s × %s | %s | %.3f | %s |" % (shape + (" | ".join(cells), sol, "%.2f" % cub if cub else "—")))
    L += ["", "Predicted: [results/model_b200.csv](../results/model_b200.csv) (`make predict`); SOL and cuBLASLt: "
          "[results/published_b200.csv](../results/published_b200.csv) ([gpumode-nvfp4](references.md#gpumode-nvfp4), "
          "[gau-nvfp4-worklog](references.md#gau-nvfp4-worklog))."]
    return L


# nvfp4-levers: the page's name of each config of plots/predict_sweeps.sh's NVFP4_LEVERS; a config
# not here shows as "step N" (a new step's rows need no change here to appear).
LEVER_LABELS = {
    "step10": "step 10",
    "none": "step 11, none of the levers",
    "copies": "two k-tiles per copy",
    "c": "TMA-store C",
    "bn64": "BLOCK_N = 64",
    "copies+c": "copies + C",
    "copies+bn64": "copies + BLOCK_N 64",
    "c+bn64": "C + BLOCK_N 64",
    "all": "all three (BLOCK_N 64)",
    "step11": "**step 11** (its plan: BLOCK_N per shape)",
    "step12": "[step 12](12_nvfp4_cluster_reduce.md) (cluster reduction)",
    "step13-mc1": "step 13, no multicast (MC = 1)",
    "mc2": "A multicast to 2 tiles (MC = 2)",
    "mc4": "A multicast to 4 tiles (MC = 4)",
    "mc2-bn64-s2": "MC = 2, BLOCK_N 64, S = 2 (128 CTAs in clusters of 4)",
    "step13": "**[step 13](13_nvfp4_multicast.md)** (its plan: MC per shape)",
}


def knobs(r):
    """The row's env without the TCG_STEPnn_ prefix, as code; "—" when the step runs its own plan."""
    env = r.get("env") or ""
    short = " ".join(a.split("_", 2)[2] if a.startswith("TCG_STEP") else a for a in env.split())
    return "`%s`" % short if short else "—"


NOISE_FILE = os.path.join(ROOT, "results", "model_b200_noise.csv")


def noise_spreads():
    """{(config, (m, n, k)): spread in us} from results/model_b200_noise.csv (plots/predict_noise.py:
    the point over issue order and seeded orders of equal-time events); {} without the file."""
    if not os.path.exists(NOISE_FILE):
        return {}
    return {(r["config"], (r["m"], r["n"], r["k"])): float(r["spread_us"]) for r in read(NOISE_FILE)}


def tie(delta, spread_a, spread_b):
    """A difference within the larger of the two configs' noise spreads is a tie."""
    return spread_a is not None and spread_b is not None and abs(delta) <= max(spread_a, spread_b)


def nvfp4_levers(rows, only=None):
    sw = [r for r in rows if r["sweep"] == "nvfp4-levers" and (not only or r["config"] in only)]
    pub = read(os.path.join(ROOT, "results", "published_b200.csv"))
    shapes = [(p["m"], p["n"], p["k"]) for p in pub if p["step_name"] == "sol"]

    def published(name):
        t = {(p["m"], p["n"], p["k"]): float(p["time_us"]) for p in pub if p["step_name"] == name}
        return [t.get(sh) for sh in shapes]

    def run_of(config, sh):
        hits = [r for r in sw if r["config"] == config and (r["m"], r["n"], r["k"]) == sh]
        return hits[-1] if hits else None

    noise = noise_spreads()

    def point_range(r):
        if not r:
            return "—"
        sp = noise.get((r["config"], (r["m"], r["n"], r["k"])))
        return "%.2f%s (%.2f-%.2f)" % (float(r["time_us"]), " ±%.2f" % (sp / 2) if sp is not None else "",
                                       float(r["time_low_us"]), float(r["time_high_us"]))

    sol, cub, entry = published("sol"), published("cublaslt"), published("entry")
    L = ["| | step: knobs | " + " | ".join("%s × %s × %s" % sh for sh in shapes) + " |",
         "|---|---|" + "---:|" * len(shapes)]
    for label, vals in (("speed of light (published)", sol), ("cuBLASLt (published, B200)", cub),
                        ("competition entry (published, B200)", entry)):
        L.append("| %s | | %s |" % (label, " | ".join("%g" % v if v else "—" for v in vals)))
    configs = []
    for r in sw:
        if r["config"] not in configs:
            configs.append(r["config"])
    for c in configs:
        first = next(r for r in sw if r["config"] == c)
        L.append("| %s | %s: %s | %s |" % (LEVER_LABELS.get(c, "step %s" % first["step"]), first["step"], knobs(first),
                                           " | ".join(point_range(run_of(c, sh)) for sh in shapes)))
    for c in ("step11", "step12", "step13"):
        runs = [run_of(c, sh) for sh in shapes]
        if not all(runs):
            continue
        for name, ref in (("SOL", sol), ("entry", entry)):
            L.append("| step %s / %s | | %s |" % (c[4:], name, " | ".join(
                "%.2f" % (float(r["time_us"]) / v) if v else "—" for r, v in zip(runs, ref))))
    for before, after in (("step10", "step11"), ("step11", "step12"), ("step12", "step13")):
        ra, rb = [run_of(before, sh) for sh in shapes], [run_of(after, sh) for sh in shapes]
        if not noise or not all(ra) or not all(rb):
            continue
        cells = []
        for a, b, sh in zip(ra, rb, shapes):
            d = float(b["time_us"]) - float(a["time_us"])
            t = tie(d, noise.get((before, sh)), noise.get((after, sh)))
            cells.append("%+.2f%s" % (d, " (a tie: within the noise)" if t else ""))
        L.append("| step %s − step %s | | %s |" % (after[4:], before[4:], " | ".join(cells)))
    L += ["", "µs: the B200 timing model's point" + (" ± half its noise spread (the point over issue order and "
          "seeded orders of equal-time events: [results/model_b200_noise.csv](../results/model_b200_noise.csv), "
          "`python3 plots/predict_noise.py`; two configs closer than their spread are a tie)" if noise else "") +
          " (range: every estimated or H100-carried parameter at its fast and "
          "at its slow end), `KNOBS ./stepNN --predict --m M --n N --k K` with each knob as `TCG_STEPNN_KNOB=VALUE` "
          "(\"—\": the step's own plan): " + provenance(sw) + " (`bash plots/predict_sweeps.sh --only nvfp4-levers`). "
          "Published: [results/published_b200.csv](../results/published_b200.csv) "
          "([gpumode-nvfp4](references.md#gpumode-nvfp4), [gau-nvfp4-worklog](references.md#gau-nvfp4-worklog))."]
    return L


# nvfp4-lever-gains: (lever, its config alone, the pair without it) among step 11's configs.
LEVER_GAINS = (("two k-tiles per copy", "copies", "c+bn64"), ("TMA-store C", "c", "copies+bn64"),
               ("BLOCK_N = 64", "bn64", "copies+c"))
SHORT = {"none": "none", "copies": "copies", "c": "C", "bn64": "BLOCK_N 64", "copies+c": "copies + C",
         "copies+bn64": "copies + BLOCK_N 64", "c+bn64": "C + BLOCK_N 64", "all": "all three"}


def nvfp4_lever_gains(rows):
    sw = [r for r in rows if r["sweep"] == "nvfp4-levers"]
    shapes = []
    for r in sw:
        if (r["m"], r["n"], r["k"]) not in shapes:
            shapes.append((r["m"], r["n"], r["k"]))

    def t(config, sh):
        hits = [r for r in sw if r["config"] == config and (r["m"], r["n"], r["k"]) == sh]
        return tuple(float(hits[-1][c]) for c in ("time_us", "time_low_us", "time_high_us")) if hits else None

    noise = noise_spreads()

    def saved(before, after, sh):
        a, b = t(before, sh), t(after, sh)
        if not a or not b:
            return "—"
        d = tuple(y - x for x, y in zip(a, b))
        is_tie = tie(d[0], noise.get((before, sh)), noise.get((after, sh)))
        return "%s%+.2f (%+.2f / %+.2f)" % (("tie: " if is_tie else "",) + d)

    L = ["| lever | from → to | " + " | ".join("%s × %s × %s" % sh for sh in shapes) + " |",
         "|---|---|" + "---:|" * len(shapes)]
    for name, alone, pair in LEVER_GAINS:
        L.append("| %s, alone | none → %s | %s |" % (name, SHORT[alone], " | ".join(
            saved("none", alone, sh) for sh in shapes)))
        L.append("| %s, last | %s → all three | %s |" % (name, SHORT[pair], " | ".join(
            saved(pair, "all", sh) for sh in shapes)))
    L += ["", "µs that the lever adds to the time (negative: it saves them), at the point (at the fast end / at the slow "
          "end of every estimated or H100-carried parameter), from the configs of the table above: " + provenance(sw) + "." +
          (" \"tie\": the gain at the point is within the noise spread of one of the two configs "
           "([results/model_b200_noise.csv](../results/model_b200_noise.csv)); the model cannot tell them apart."
           if noise else "")]
    return L


# bf16-levers: the page's name of each config of plots/predict_sweeps.sh's BF16_LEVERS.
BF16_LABELS = {
    "neither": "neither (step 09's kernel)",
    "order": "order alone",
    "multicast": "multicast alone (P = 4)",
    "p4": "both, P = 4 forced",
    "step14": "**step 14's plan**",
    "p2": "both, P = 2 forced",
    "step09": "[step 09](09_clc_scheduler.md) itself (its order: groups of 8 pair rows)",
}


def bf16_levers(rows, model_path):
    by = {}
    for r in rows:
        if r["sweep"] == "bf16-levers":
            by[(r["config"], int(r["m"]))] = r
    configs = []
    for (c, _m) in by:
        if c not in configs:
            configs.append(c)
    # Step 09 itself beside them: 4096^3 from the main table, 8192^3 from the sweep "big".
    for r in (read(model_path) if os.path.exists(model_path) else []):
        if r["step"].lstrip("0") == "9" and r["m"] == r["n"] == r["k"] == "4096":
            by[("step09", 4096)] = dict(r, time_us="%.2f" % (float(r["median_ms"]) * 1e3),
                                        time_low_us="%.2f" % (2 * 4096.0 ** 3 / float(r["tflops_high"]) / 1e6),
                                        time_high_us="%.2f" % (2 * 4096.0 ** 3 / float(r["tflops_low"]) / 1e6),
                                        spread_us="", plan="", env="")
    big9 = find([r for r in rows if r["sweep"] == "big"], step=9, m=8192)
    if big9:
        by[("step09", 8192)] = big9
    if ("step09", 4096) in by or ("step09", 8192) in by:
        configs.append("step09")

    def tflops_cell(r):
        if not r:
            return "—"
        flops = 2.0 * int(r["m"]) * int(r["n"]) * int(r["k"])
        t = float(r["time_us"])
        noise = ""
        if r.get("spread_us"):
            # half the spread of the point's time, as TFLOPS at the point
            noise = " ±%.0f" % (flops / (t - float(r["spread_us"]) / 2) / 1e6 - flops / t / 1e6)
        return "%.0f%s (%.0f-%.0f)" % (float(r["tflops"]), noise, flops / float(r["time_high_us"]) / 1e6,
                                       flops / float(r["time_low_us"]) / 1e6)

    L = ["| lever | knobs | 4096³ | plan | 8192³ | plan | HBM busy at 8192³ |", "|---|---|---:|---|---:|---|---:|"]
    for c in configs:
        a, b = by.get((c, 4096)), by.get((c, 8192))
        first = a or b
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            BF16_LABELS.get(c, c), knobs(first), tflops_cell(a), (a or {}).get("plan") or "—", tflops_cell(b),
            (b or {}).get("plan") or "—", ("%s%%" % b["hbm_share"]) if b and b.get("hbm_share") else "—"))
    used = [r for r in by.values()]
    L += ["", "TFLOPS: the B200 timing model's point ± half its noise spread at 4096³ (the point over issue order "
          "and 2 seeded orders of equal-time events; none was run at 8192³) and its range (every estimated or "
          "H100-carried parameter at its slow and at its fast end); `KNOBS ./step14 --predict --m S --n S --k S` "
          "with each knob as `TCG_STEP14_KNOB=VALUE` (\"—\": the step's own plan); step 09's 4096³ row is "
          "[results/model_b200.csv](../results/model_b200.csv)'s. " + provenance([r for r in used if r.get("sweep") == "bf16-levers"]) +
          " (`make predict-big`, about 11 CPU minutes: not part of `make predict`)."]
    return L


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", choices=["step08-k", "step09-big", "step10-splits", "nvfp4", "nvfp4-levers",
                                          "nvfp4-lever-gains", "bf16-levers"])
    ap.add_argument("--csv", default=os.path.join(ROOT, "results", "model_b200_sweeps.csv"))
    ap.add_argument("--model", default=os.path.join(ROOT, "results", "model_b200.csv"))
    ap.add_argument("--configs", help="nvfp4-levers: only these configs, comma-separated (e.g. step12,mc2,step13)")
    a = ap.parse_args()
    if a.table == "nvfp4":
        print("\n".join(nvfp4(a.model)))
        return 0
    if not os.path.exists(a.csv):
        print("sweeps_doc.py: %s: missing (run make predict)" % os.path.relpath(a.csv, ROOT), file=sys.stderr)
        return 1
    rows = read(a.csv)
    if a.table == "step08-k":
        L = step08_k(rows)
    elif a.table == "step09-big":
        L = step09_big(rows, a.model)
    elif a.table == "nvfp4-levers":
        L = nvfp4_levers(rows, a.configs.split(",") if a.configs else None)
    elif a.table == "nvfp4-lever-gains":
        L = nvfp4_lever_gains(rows)
    elif a.table == "bf16-levers":
        L = bf16_levers(rows, a.model)
    else:
        L = step10_splits(rows)
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    sys.exit(main())
