#!/usr/bin/env python3
"""check_layers.py - the harness's files call each other in one direction only.

Reads which tcg:: functions each object of common/harness/ (and common/trace.o) defines and
uses (`nm -C`), and fails when a file calls one in its own layer or a layer above it. The layers,
lowest first, are those of common/harness/README.md; a new file must be given its layer here.

  python3 tests/checks/check_layers.py [BUILD_DIR]     (default build; the objects must be built)
"""
import os
import re
import subprocess
import sys

# Lowest first. A file may call files of lower layers only.
LAYERS = [
    ["common/trace", "harness/report", "harness/reference", "harness/groups"],
    ["harness/cli", "harness/inputs", "harness/workspace", "harness/capability"],
    ["harness/verify", "harness/nvfp4"],
    ["harness/output", "harness/predict_bounds", "harness/dual_silu"],
    ["harness/gpu", "harness/grouped_reference"],
    ["harness/traces", "harness/predict_range"],
    ["harness/gpu_nvfp4", "harness/gpu_grouped", "harness/emulator_run"],
    ["harness/gpu_run"],
    ["harness/run_step"],
]


def symbols(obj):
    out = subprocess.run(["nm", "-C", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]*\s+([TUW])\s+(tcg::\S.*)", line)
        if m:
            name = m.group(2).split("(")[0]
            (defined if m.group(1) in "TW" else used).add(name)
    return defined, used


def main(argv):
    build = argv[1] if len(argv) > 1 else "build"
    rank = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    harness_objs = sorted("harness/" + f[:-2] for f in os.listdir(os.path.join(build, "harness"))
                          if f.endswith(".o"))
    missing = [o for o in harness_objs if o not in rank]
    if missing:
        print("check_layers: FAIL: no layer for %s (add it to tests/checks/check_layers.py and "
              "common/harness/README.md)" % ", ".join(missing))
        return 1
    names = [n for n in rank if os.path.exists(os.path.join(build, n + ".o"))]
    syms = {n: symbols(os.path.join(build, n + ".o")) for n in names}
    bad = 0
    for n in names:
        defined, used = syms[n]
        for m in names:
            if m == n:
                continue
            calls = sorted((used & syms[m][0]) - defined)
            if calls and rank[m] >= rank[n]:
                print("check_layers: FAIL: %s calls %s (%s), which is not below it" %
                      (n, m, ", ".join(c.split("::")[-1] for c in calls[:4])))
                bad = 1
    # The emulator sits below the harness: it may not include any of it.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/checks/ -> root
    sim_dir = os.path.join(root, "common", "sim")
    for f in sorted(os.listdir(sim_dir)):
        for i, line in enumerate(open(os.path.join(sim_dir, f), errors="replace"), start=1):
            if re.match(r'\s*#\s*include\s+"[^"]*harness', line):
                print("check_layers: FAIL: common/sim/%s:%d includes the harness" % (f, i))
                bad = 1
    if not bad:
        print("check_layers: %d harness files, every call points down; the emulator includes "
              "none of them" % len(names))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
