#!/usr/bin/env python3
"""validation_table.py — the timing model against the H100 on the microbenchmark kernels.

Reads the measured rows (results/micro_h100.csv, `make calibrate` on the GPU; several runs are
averaged) and the model's predictions for the same cases (`build/tests/micro --sim
--model-params results/params_h100.txt`, saved as results/micro_h100_model.csv) and prints the
Markdown table of docs/timing_model.md: measured, predicted, predicted / measured. One-wave cases
compare the mean CTA span (globaltimer on the GPU, the model clock in the emulator); cases with
more CTAs than one wave compare the kernel time above an empty launch. Cases whose measurements
set a parameter are marked "fit"; the others were not used for any parameter ("check").
usage: validation_table.py MEASURED.csv PREDICTED.csv
"""
import csv
import sys
from collections import defaultdict

FIT = ("store row-per-thread 1 CTA", "store coalesced 1 CTA", "store lane-pairs 1 CTA", "store row-per-thread one wave",
       "store coalesced one wave", "store lane-pairs one wave", "tma latency box 64x8", "tma 16B rows 8x256 x8, 1 CTA",
       "tma 16B rows 8x256 x8, all SMs", "tma sw128 64x256, 1 CTA", "tma sw128 64x128 x2, 1 CTA",
       "tma sw128 64x256, all SMs, HBM", "setup:", "mbarrier ping-pong")
# Cluster cases whose measurements set a parameter (exact names: longer names share their start).
FIT_EXACT = ("cluster barrier relaxed x1000", "dsmem ld.u32 chain x1000, peer", "dsmem bulk copy 8 KiB x64, peer",
             "dsmem bulk copy 32 KiB x16, peer", "dsmem bulk bounce 16 B x500",
             # the multicast receiver's share: fitted to the second run's rows (results/micro_h100_multicast.csv)
             "mcast 64x256 sw128, cluster 2, turns, all SMs", "mcast 64x256 sw128, cluster 4, turns, all SMs",
             "mcast bulk 32 KiB, cluster 2, turns, all SMs", "mcast bulk 32 KiB, cluster 4, turns, all SMs")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    meas = defaultdict(list)
    with open(argv[1]) as f:
        for r in csv.DictReader(f):
            meas[r["case"]].append((float(r["time_us"]), float(r["cta_span_us"]), int(r["grid"])))
    rows = []
    with open(argv[2]) as f:
        for r in csv.DictReader(f):
            rows.append(r)
    print("| kernel | grid | compared | measured (us) | predicted (us) | predicted / measured | use |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        name = r["case"]
        if name not in meas or name.startswith("empty grid"):
            continue
        m = meas[name]
        grid = m[0][2]
        multi_wave = grid > 132 and not name.startswith("tma") and not name.startswith("store")
        multi_wave = multi_wave or name.startswith("store") and grid >= 512
        if multi_wave:
            what, mv, pv = "kernel", sum(x[0] for x in m) / len(m), float(r["predicted_us"])
        else:
            what, mv, pv = "CTA span", sum(x[1] for x in m) / len(m), float(r["predicted_cta_span_us"])
        use = "fit" if (any(name.startswith(p) for p in FIT) and "pitch" not in name) or name in FIT_EXACT else "check"
        if "start spread" in name:  # both about 0: a ratio says nothing
            what = "start spread"
            print("| %s | %d | %s | %.3f | %.3f | - | %s |" % (name, grid, what, mv, pv, use))
            continue
        print("| %s | %d | %s | %.2f | %.2f | %.2f | %s |" % (name, grid, what, mv, pv, pv / mv if mv > 0 else float("nan"), use))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
