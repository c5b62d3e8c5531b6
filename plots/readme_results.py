#!/usr/bin/env python3
"""readme_results.py - the README's table of measured results, made from results/<gpu>.csv.

For every GPU file under results/ (every harness CSV but the model's), the newest row of each
(GPU, step, shape, inputs) becomes one table row, so the README always shows the latest
measurement, with its date and git revision, and never a figure typed by hand. The table sits in
README.md between the lines `<!-- results:begin -->` and `<!-- results:end -->`.

  python3 plots/readme_results.py            # prints the table
  python3 plots/readme_results.py --write    # rewrites the table in README.md (make readme)
  python3 plots/readme_results.py --check    # exit 1 if README.md's table is not the current one
  (--write and --check take another README's path as a second argument, for the tests)

Exit 2 with a one-line message for a bad argument, a missing README marker or an unreadable CSV.
"""
import os
import sys

from results_io import (ROOT, InputError, harness_csv_files, read_harness_csv, row_tflops, shape_of,
                        step_of, to_float)

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def measured_rows(results_dir):
    """The newest row of each (gpu, step, shape, inputs), verified rows only, sorted."""
    latest = {}
    for path in harness_csv_files(results_dir):  # published figures, micros, checks: other formats
        for r in read_harness_csv(path):
            st, sh = step_of(r), shape_of(r)
            if st is None or sh is None or r.get("verified") != "yes":
                continue
            key = (r["gpu"], st, sh, r["inputs"])
            if key not in latest or r["date"] >= latest[key]["date"]:
                latest[key] = r
    # Steps in order; per step the larger shape first; random before integer.
    return [latest[k] for k in sorted(latest, key=lambda k: (k[0], k[1], -k[2][0] * k[2][1] * k[2][2],
                                                              k[2], k[3] != "random"))]


def shape_text(sh):
    m, n, k = sh
    return "%d³" % m if m == n == k else "%d x %d x %d" % (m, n, k)


def table(rows):
    out = ["| step | GPU | shape | inputs | TFLOPS | cuBLAS TFLOPS | % of cuBLAS | date | git rev |",
           "|---|---|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        t, c = row_tflops(r), to_float(r.get("cublas_tflops"))
        pct = "%.1f%%" % (100.0 * t / c) if t and c else "–"
        out.append("| %02d | %s | %s | %s | %.1f | %s | %s | %s | `%s` |" % (
            step_of(r), r["gpu"], shape_text(shape_of(r)), r["inputs"], t,
            "%.1f" % c if c else "–", pct, r["date"][:10], r["git_rev"]))
    return "\n".join(out) + "\n"


def splice(readme_text, new_table, path):
    if readme_text.count(BEGIN) != 1 or readme_text.count(END) != 1:
        raise InputError("%s: needs exactly one %s and one %s line" % (path, BEGIN, END))
    head, rest = readme_text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + new_table + END + tail


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--print"
    if len(argv) > 3 or mode not in ("--print", "--write", "--check") or \
            (len(argv) == 3 and mode == "--print"):
        print("readme_results.py: usage: readme_results.py [--write | --check] [README]",
              file=sys.stderr)
        return 2
    readme = argv[2] if len(argv) == 3 else os.path.join(ROOT, "README.md")
    try:
        new_table = table(measured_rows(os.path.join(ROOT, "results")))
        if mode == "--print":
            sys.stdout.write(new_table)
            return 0
        text = open(readme, encoding="utf-8").read()
        new_text = splice(text, new_table, readme)
    except (InputError, OSError) as e:
        print("readme_results.py: %s" % e, file=sys.stderr)
        return 2
    if mode == "--check":
        if new_text != text:
            print("readme_results.py: README.md's results table is not the latest rows of "
                  "results/*.csv: run make readme", file=sys.stderr)
            return 1
        return 0
    if new_text != text:
        with open(readme, "w", encoding="utf-8") as f:
            f.write(new_text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
