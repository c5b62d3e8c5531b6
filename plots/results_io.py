"""results_io.py - reading the CSV files under results/, shared by the chart and page scripts.

  * the harness's rows (`stepNN --csv FILE`: results/<gpu>.csv measured on a GPU,
    results/model_b200.csv predicted by the emulator's B200 timing model);
  * results/published_b200.csv: figures other people published for a B200 (the blog post's BF16
    progression, the NVFP4 competition's speed of light and cuBLASLt times). They are quoted
    with their source and never measured here; this file is the only place that holds them.
"""
import csv
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEADER = ("step,step_name,gpu,sm_count,driver,cuda_runtime,cublas,m,n,k,dtype,inputs,iterations,"
          "median_ms,tflops,cublas_tflops,ratio,max_abs_err,verified,date,git_rev").split(",")
# results/model_b200.csv adds the range of each prediction (plots/predict.sh, from --predict's
# "range:" line): TFLOPS with every estimated or H100-carried parameter at its slow / fast end.
RANGE_COLUMNS = ["tflops_low", "tflops_high"]
MODEL_HEADER = HEADER + RANGE_COLUMNS
PUBLISHED_HEADER = ("step,step_name,kernel_in_source,m,n,k,dtype,tflops,time_us,source,"
                    "note").split(",")
MODEL_FILE = "model_b200.csv"

# Short names of our steps, for tables and chart labels.
STEP_TITLES = {
    0: "mma.sync (warm-up)",
    1: "basic tcgen05",
    2: "128B swizzle",
    3: "pipelining",
    4: "warp specialization",
    5: "2-SM MMA",
    6: "persistent",
    7: "NVFP4 block-scaled",
    8: "TMA-store epilogue",
    9: "CLC scheduler",
    10: "NVFP4 split-K",
    11: "NVFP4 wide copies, TMA-store C",
    12: "NVFP4 cluster (DSMEM) reduction",
    13: "NVFP4 A multicast along N",
    14: "BF16 B multicast, L2 tile order",
}
PUBLISHED_FILE = "published_b200.csv"
# The model held against published kernels (plots/nvfp4_validation.py run): one row per design and shape.
VALIDATION_FILE = "validation_b200.csv"
VALIDATION_HEADER = ("design,dtype,m,n,k,model_config,kernel_us,kernel_fast_us,kernel_slow_us,call_us,call_fast_us,"
                     "call_slow_us,published_us,model_over_published,in_range,within_25pct,source,note").split(",")
# The NVFP4 steps: run, predicted and charted at the competition shapes of PUBLISHED_FILE.
NVFP4_STEPS = (7, 10, 11, 12, 13)


class InputError(Exception):
    """A file that cannot be used; the message is one line naming it."""


def to_float(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def harness_csv_files(results_dir):
    """The step-run CSVs of results_dir (make bench, a step's --csv), sorted: every *.csv whose
    first line starts as the harness's header does, the model's file excepted. Published figures,
    microbenchmarks, hardware checks, the model's sweeps and validation have other headers: they
    are not step runs and are left out without a word (one rule for every script)."""
    out = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.csv"))):
        if os.path.basename(path) == MODEL_FILE:
            continue
        with open(path, newline="") as f:
            first = f.readline()
        if first.startswith(",".join(HEADER[:3]) + ","):
            out.append(path)
    return out


def read_harness_csv(path, warn=True):
    """The rows of one harness CSV (dicts; "_file" = "name:line"). A file with another header
    raises InputError; rows with the wrong number of fields are skipped with a warning."""
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames not in (HEADER, MODEL_HEADER):
            raise InputError("%s: not the harness's CSV header" % path)
        for lineno, r in enumerate(reader, start=2):
            if None in r or any(v is None for v in r.values()):
                if warn:
                    print("warning: %s:%d: wrong number of fields, skipped" % (path, lineno),
                          file=sys.stderr)
                continue
            r["_file"] = "%s:%d" % (os.path.basename(path), lineno)
            rows.append(r)
    return rows


def shape_of(r):
    try:
        return (int(r["m"]), int(r["n"]), int(r["k"]))
    except (KeyError, TypeError, ValueError):
        return None


def step_of(r):
    try:
        return int(r["step"])
    except (KeyError, TypeError, ValueError):
        return None


def flops(shape):
    m, n, k = shape
    return 2.0 * m * n * k


def row_tflops(r):
    """TFLOPS of a harness row: its tflops column, or 2MNK / median_ms when that is empty."""
    t = to_float(r.get("tflops"))
    if t is None:
        ms, s = to_float(r.get("median_ms")), shape_of(r)
        if ms and s:
            t = flops(s) / (ms * 1e-3) / 1e12
    return t


def row_range(r):
    """(low, high) TFLOPS of a model row's range, or None when the row has none."""
    lo, hi = to_float(r.get("tflops_low")), to_float(r.get("tflops_high"))
    return (lo, hi) if lo is not None and hi is not None else None


def add_ranges(csv_path, ranges_path):
    """Rewrites csv_path (a harness CSV) with the range columns, filled from ranges_path: lines
    "STEP M N K LOW HIGH" (TFLOPS); rows without a range keep them empty."""
    ranges = {}
    with open(ranges_path) as f:
        for line in f:
            p = line.split()
            if len(p) == 6:
                ranges[(int(p[0]), (int(p[1]), int(p[2]), int(p[3])))] = (p[4], p[5])
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=MODEL_HEADER, lineterminator="\n")
        w.writeheader()
        for r in rows:
            lo, hi = ranges.get((step_of(r), shape_of(r)), (r.get("tflops_low", ""), r.get("tflops_high", "")))
            r["tflops_low"], r["tflops_high"] = lo, hi
            w.writerow({k: r.get(k, "") for k in MODEL_HEADER})


def row_time_us(r):
    ms = to_float(r.get("median_ms"))
    if ms is not None:
        return ms * 1e3
    t, s = to_float(r.get("tflops")), shape_of(r)
    return flops(s) / (t * 1e12) * 1e6 if t and s else None


def read_model(path):
    """{(step, (m, n, k)): row} of the model CSV, the last row of each key; {} if no file."""
    if not os.path.exists(path):
        return {}
    out = {}
    for r in read_harness_csv(path):
        st, sh = step_of(r), shape_of(r)
        if st is not None and sh is not None and row_tflops(r) is not None:
            out[(st, sh)] = r
    return out


def read_validation(path):
    """{(design, (m, n, k)): row} of results/validation_b200.csv; {} if there is no file. Another
    header raises InputError."""
    if not os.path.exists(path):
        return {}
    out = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != VALIDATION_HEADER:
            raise InputError("%s: header is not %s" % (path, ",".join(VALIDATION_HEADER)))
        for i, r in enumerate(reader, start=2):
            if None in r or any(v is None for v in r.values()):
                raise InputError("%s:%d: wrong number of fields" % (path, i))
            out[(r["design"], shape_of(r))] = r
    return out


class Published:
    """results/published_b200.csv. Per BF16 step, the row whose note starts with "matches"
    (the variant with our step's structure), or the step's only row."""

    def __init__(self, path):
        if not os.path.exists(path):
            raise InputError("%s: missing (the published B200 figures)" % path)
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != PUBLISHED_HEADER:
                raise InputError("%s: header is not %s" % (path, ",".join(PUBLISHED_HEADER)))
            self.rows = [r for r in reader]
        for i, r in enumerate(self.rows, start=2):
            if None in r or any(v is None for v in r.values()):
                raise InputError("%s:%d: wrong number of fields" % (path, i))
        self.path = path
        self.file = os.path.basename(path)

    def cublas_bf16(self):
        """(TFLOPS, row) of the published cuBLAS BF16 figure."""
        for r in self.rows:
            if r["step_name"] == "cublas" and r["dtype"] == "bf16":
                return to_float(r["tflops"]), r
        raise InputError("%s: no cublas bf16 row" % self.path)

    def bf16_step(self, step):
        """The row compared with our BF16 step `step`, or None."""
        cand = [r for r in self.rows if r["step"] == str(step) and r["dtype"] == "bf16"]
        match = [r for r in cand if r["note"].startswith("matches")]
        if match:
            return match[0]
        return cand[0] if len(cand) == 1 else None

    def bf16_variants(self, step):
        """The rows of step `step` that are not the compared one (other variants in the source)."""
        chosen = self.bf16_step(step)
        return [r for r in self.rows
                if r["step"] == str(step) and r["dtype"] == "bf16" and r is not chosen]

    def bf16_steps(self):
        return sorted({int(r["step"]) for r in self.rows if r["step"] and r["dtype"] == "bf16"})

    def nvfp4_shapes(self):
        """[(m, n, k)] of the NVFP4 rows, in file order."""
        out = []
        for r in self.rows:
            if r["dtype"] == "nvfp4":
                s = shape_of(r)
                if s not in out:
                    out.append(s)
        return out

    def nvfp4(self, shape, step_name):
        """The row of an NVFP4 shape named step_name ("sol", "cublaslt"), or None."""
        for r in self.rows:
            if r["dtype"] == "nvfp4" and r["step_name"] == step_name and shape_of(r) == shape:
                return r
        return None


if __name__ == "__main__":
    # `python3 plots/results_io.py nvfp4-shapes`: the NVFP4 competition shapes, one "M N K" line
    # each, from results/published_b200.csv: the one list plots/bench.sh and plots/predict.sh run.
    # `results_io.py nvfp4-steps`: NVFP4_STEPS, one two-digit number a line: the steps that
    # plots/bench.sh and plots/predict.sh run at those shapes (one list, kept here).
    # `results_io.py add-ranges CSV RANGES`: the range columns (plots/predict.sh).
    if sys.argv[1:] == ["nvfp4-steps"]:
        for s in NVFP4_STEPS:
            print("%02d" % s)
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "add-ranges":
        add_ranges(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if sys.argv[1:] != ["nvfp4-shapes"]:
        sys.exit("usage: results_io.py nvfp4-shapes | nvfp4-steps | add-ranges CSV RANGES")
    try:
        for m, n, k in Published(os.path.join(ROOT, "results", PUBLISHED_FILE)).nvfp4_shapes():
            print(m, n, k)
    except InputError as e:
        sys.exit("results_io.py: %s" % e)
