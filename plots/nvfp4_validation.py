#!/usr/bin/env python3
"""nvfp4_validation.py - the timing model held against kernels someone measured on a B200: the
published NVFP4 competition kernels (gau-nernst's worklog) and the BF16 ladder ("tcgen05 for
dummies"), predicted point / fast end / slow end beside the published time.

  run [--reuse-kernels]
         predict every published NVFP4 design at the three competition shapes and write
         results/validation_b200.csv (about 3 CPU minutes: 12 `--predict` runs of steps 07, 10, 11);
         the BF16 rows come from results/model_b200.csv (`make predict`)
  table  the Markdown table of docs/timing_model.md ("Held against measured kernels") from the
         CSV; the page quotes it as a `quote md` block, so `make test` (docs_quotes.py --check)
         fails when the page and the CSV differ
  call KERNEL_US [FAST_US SLOW_US]
         what the gpu-mode evaluator would report for a kernel of that predicted time (point, and
         the range's ends): max(kernel + GPU gap, host time per call), with the two "evaluator:"
         parameters of the model's table (./step01 --model-params)

Each NVFP4 design is a configuration of one of our steps (its knobs), except the CuTe DSL
template, whose one-stage ring no step has: its time is composed from the same parameter table
(a k-tile = one TMA round trip + its four copies + its four MMAs + two hand-offs, in series).
A published NVFP4 time is a call's (reference-kernels problems/nvidia/eval_better_bench.py: events
around 50 back-to-back calls on 50 inputs, L2 evicted before): predicted call = max(kernel + gap,
host per call). The BF16 ladder was timed kernel against kernel: compared without the terms.
No parameter is set from these rows.
"""
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
from results_io import VALIDATION_HEADER, Published, read_model, flops, row_tflops, row_range  # noqa: E402

CSV = os.path.join(ROOT, "results", "validation_b200.csv")
HEADER = VALIDATION_HEADER
SHAPES = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]

# design -> (step, knobs per shape, what differs from the published code)
DESIGNS = [
    ("gau-template", None, [{}, {}, {}],
     "one stage: composed from the parameter table (no step has a one-stage ring); its host time per call is CuTe DSL's "
     "('evaluator: host time per call, CuTe DSL'), not a torch op's"),
    ("gau-v0", 7, [{}, {}, {}], "step 07 as it is: 128 x 128 tiles, 6 stages, a CTA per tile, row-per-thread FP16 C"),
    ("gau-v1", 10, [{"TCG_STEP10_SPLITS": "2"}, {"TCG_STEP10_SPLITS": "4"}, {"TCG_STEP10_SPLITS": "2"}],
     "split-K by step 10's workspace (partials out, counter, last CTA sums and stores FP16 C) where v1 adds FP32 "
     "atomics into an FP32 output: the model carries the reducer's tail v1 does not have"),
    ("gau-v3b", 11, [dict(TCG_STEP11_SWAP_AB="1", TCG_STEP11_BLOCK_N="64", TCG_STEP11_SPLITS="1",
                          TCG_STEP11_WIDE_COPIES="0", TCG_STEP11_TMA_C="0")] * 3,
     "A and B swapped, 128 x 64 tiles, a copy per operand and k-tile, direct stores; on 128 x 4096 x 7168 v3b runs "
     "64 x 64 tiles (128 CTAs), which no step has: the model runs 64 CTAs of 128 x 64"),
    ("gau-v4", 11, [dict(TCG_STEP11_SWAP_AB="1", TCG_STEP11_BLOCK_N=bn, TCG_STEP11_SPLITS=s,
                         TCG_STEP11_WIDE_COPIES="0", TCG_STEP11_TMA_C="0")
                    for bn, s in (("128", "2"), ("64", "2"), ("64", "1"))],
     "as v3b with split-K 2 on the first two shapes: step 11's workspace reduction where v4 adds FP32 atomics"),
]


def model_params():
    """{name: (point, low, high)} from ./step01 --model-params (the table, then the ranges)."""
    out = subprocess.run([os.path.join(ROOT, "step01"), "--model-params"], capture_output=True, text=True,
                         check=True).stdout
    vals, in_ranges = {}, False
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:3] == ["parameter", "point", "low"]:
            in_ranges = True
            continue
        if len(cells) < 4 or cells[0] in ("parameter",) or set(cells[0]) <= set("-"):
            continue
        try:
            if in_ranges:
                vals[cells[0]] = (float(cells[1]), float(cells[2]), float(cells[3]))
            elif cells[0] not in vals:
                v = float(cells[1])
                vals[cells[0]] = (v, v, v)
        except ValueError:
            continue
    return vals


def call_times(kernel, fast, slow, P, host_param="evaluator: host time per call"):
    """The evaluator's call: max(kernel + GPU gap, host per call), at the point and both ends."""
    gap, host = P["evaluator: GPU gap between queued kernels"], P[host_param]
    return (max(kernel + gap[0] / 1e3, host[0] / 1e3), max(fast + gap[1] / 1e3, host[1] / 1e3),
            max(slow + gap[2] / 1e3, host[2] / 1e3))


def template_kernel(shape, P, end):
    """The CuTe DSL template's kernel (us): one stage, so every k-tile waits for its copies and its
    MMAs in series; end 0 point, 1 fast, 2 slow (the parameters' ends that make kernels faster /
    slower). Setup and the row-per-thread FP16 epilogue of a 128 x 128 tile as the model charges
    them (CTA setup and the store path's rates)."""
    m, n, k = shape
    def v(name, rate=False):
        pt, lo, hi = P[name]
        if end == 0:
            return pt
        want_fast = end == 1
        return (hi if rate else lo) if want_fast else (lo if rate else hi)
    clock = v("SM clock", rate=True)  # GHz
    ktile_bytes = 16384 * 2 + 2048 * 2
    ktile_ns = (v("TMA latency") + 4 * v("TMA: SM time per box") / clock
                + ktile_bytes / v("TMA throughput of one SM", rate=True)
                + (4 * 128 * v("tcgen05.mma issue interval") + v("tcgen05.mma latency beyond II, M=128")) / clock
                + 2 * v("mbarrier hand-off") / clock)
    k_tiles = k // 256
    setup_ns = v("CTA launch") + v("CTA setup: fence.mbarrier_init") / clock + v("tcgen05.alloc") / clock
    # C: 128 rows x 256 B per CTA, a row per thread in 16-byte stores: 32 half-filled sectors per
    # warp instruction, 16 instructions per warp, on the SM's store path.
    c_ns = 4 * 16 * 32 * v("store: partial-sector cost") * v("global memory sector") / (
        v("global store rate of one SM", rate=True) * clock)
    return (setup_ns + k_tiles * ktile_ns + c_ns) / 1e3


PREDICT_RE = re.compile(r"^predicted B200: .*\(([0-9.]+) us;")
RANGE_RE = re.compile(r"^range: .*\(([0-9.]+) - ([0-9.]+) us;")


def predict(step, knobs, shape):
    m, n, k = shape
    env = dict(os.environ, **knobs)
    out = subprocess.run([os.path.join(ROOT, "step%02d" % step), "--predict", "--m", str(m), "--n", str(n),
                          "--k", str(k)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("nvfp4_validation.py: step%02d %s failed:\n%s" % (step, knobs, out.stdout + out.stderr))
    point = slow = fast = plan = None
    for line in out.stdout.splitlines():
        if PREDICT_RE.match(line):
            point = float(PREDICT_RE.match(line).group(1))
        elif RANGE_RE.match(line):
            slow, fast = map(float, RANGE_RE.match(line).groups())
        elif line.startswith("plan:"):
            plan = line[5:].strip()
    return point, fast, slow, plan


def row(design, dtype, shape, config, kernel, fast, slow, call, published, source, note):
    c = call if call else (kernel, fast, slow)
    ratio = c[0] / published
    return dict(design=design, dtype=dtype, m=shape[0], n=shape[1], k=shape[2], model_config=config,
                kernel_us="%.2f" % kernel, kernel_fast_us="%.2f" % fast, kernel_slow_us="%.2f" % slow,
                call_us="%.2f" % c[0] if call else "", call_fast_us="%.2f" % c[1] if call else "",
                call_slow_us="%.2f" % c[2] if call else "", published_us="%.2f" % published,
                model_over_published="%.2f" % ratio, in_range="yes" if c[1] <= published <= c[2] else "no",
                within_25pct="yes" if abs(ratio - 1) <= 0.25 else "no", source=source, note=note)


def run(reuse=False):
    """reuse: take the emulated kernels' figures from the CSV that is there (the call terms, the
    composed template and the BF16 rows are recomputed): for a change of the evaluator's terms."""
    pub = Published(os.path.join(ROOT, "results", "published_b200.csv"))
    P = model_params()
    old = {}
    if reuse:
        with open(CSV, newline="") as fh:
            old = {(r["design"], (int(r["m"]), int(r["n"]), int(r["k"]))): r for r in csv.DictReader(fh)}
    rows = []
    for design, step, knobs, note in DESIGNS:
        for shape, kn in zip(SHAPES, knobs):
            prow = pub.nvfp4(shape, design)
            if step is None:
                kernel, fast, slow = (template_kernel(shape, P, e) for e in (0, 1, 2))
                config = "composed from the parameter table: one-stage ring, 128 x 128 tiles, a CTA per tile"
            elif (design, shape) in old:
                o = old[(design, shape)]
                kernel, fast, slow = (float(o[c]) for c in ("kernel_us", "kernel_fast_us", "kernel_slow_us"))
                config = o["model_config"]
            else:
                kernel, fast, slow, plan = predict(step, kn, shape)
                config = "step%02d %s(plan: %s)" % (step, "".join("%s=%s " % kv for kv in kn.items()), plan)
            print("%-12s %-16s kernel %.2f (%.2f - %.2f)" % (design, "x".join(map(str, shape)), kernel, fast, slow),
                  file=sys.stderr)
            host = "evaluator: host time per call" + (", CuTe DSL" if step is None else "")
            rows.append(row(design, "nvfp4", shape, config, kernel, fast, slow, call_times(kernel, fast, slow, P, host),
                            float(prow["time_us"]), prow["source"].split(" (")[0], note))
    # The BF16 ladder: kernel against kernel, from make predict's rows.
    model = read_model(os.path.join(ROOT, "results", "model_b200.csv"))
    for step in pub.bf16_steps():
        prow = pub.bf16_step(step)
        if not prow or not prow["tflops"]:
            continue
        shape = tuple(int(prow[c]) for c in "mnk")
        mrow = model.get((step, shape))
        if not mrow or not row_range(mrow):
            continue
        f = flops(shape)
        us = lambda tf: f / (tf * 1e12) * 1e6  # noqa: E731
        lo, hi = row_range(mrow)
        rows.append(row("step%02d vs %s" % (step, prow["kernel_in_source"].split(" (")[0]), "bf16", shape,
                        "step%02d as it is (results/model_b200.csv)" % step, us(row_tflops(mrow)), us(hi),
                        us(lo), None, us(float(prow["tflops"])), prow["source"].split(" (")[0],
                        "kernel time against the blog's kernel time (no evaluator terms)"))
    with open(CSV, "w", newline="") as fh:
        w = csv.DictWriter(fh, HEADER, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print("nvfp4_validation.py: wrote %s (%d rows)" % (os.path.relpath(CSV, ROOT), len(rows)), file=sys.stderr)


def table():
    with open(CSV, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or list(rows[0].keys()) != HEADER:
        sys.exit("nvfp4_validation.py: %s: missing or another header (run: python3 plots/nvfp4_validation.py run)"
                 % os.path.relpath(CSV, ROOT))
    print("| design | shape | kernel, predicted µs (fast - slow) | call, predicted µs (fast - slow) | published µs "
          "| predicted / published | in range | within 25% |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        call = "%s (%s - %s)" % (r["call_us"], r["call_fast_us"], r["call_slow_us"]) if r["call_us"] else "—"
        print("| %s | %s × %s × %s | %s (%s - %s) | %s | %s | %s | %s | %s |" % (
            r["design"], r["m"], r["n"], r["k"], r["kernel_us"], r["kernel_fast_us"], r["kernel_slow_us"], call,
            r["published_us"], r["model_over_published"], r["in_range"], r["within_25pct"]))
    for dtype in ("nvfp4", "bf16"):
        sel = [r for r in rows if r["dtype"] == dtype]
        print()
        print("%s: %d rows, %d with the published time inside the predicted range, %d with the point within 25%%."
              % (dtype.upper(), len(sel), sum(r["in_range"] == "yes" for r in sel),
                 sum(r["within_25pct"] == "yes" for r in sel)))
    print()
    print("From [results/validation_b200.csv](../results/validation_b200.csv) (`python3 plots/nvfp4_validation.py "
          "run`); NVFP4 rows compare the predicted *call* (max(kernel + GPU gap, host per call), the \"evaluator:\" "
          "parameters) with the published call time, BF16 rows kernel with kernel.")


def main(argv):
    if argv in (["run"], ["run", "--reuse-kernels"]):
        run(reuse=len(argv) == 2)
    elif argv[:1] == ["table"] and len(argv) == 1:
        table()
    elif argv[:1] == ["call"] and len(argv) in (2, 4):
        try:
            t = [float(x) for x in argv[1:]]
        except ValueError:
            sys.exit("nvfp4_validation.py: call takes times in us")
        t = t if len(t) == 3 else t * 3
        c = call_times(t[0], t[1], t[2], model_params())
        print("call: %.2f us (%.2f - %.2f): max(kernel + 'evaluator: GPU gap between queued kernels', "
              "'evaluator: host time per call')" % c)
    else:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
