#!/usr/bin/env python3
"""fit_params.py — a timing-model parameter file from `make calibrate`'s measurements.

Reads results/micro_<gpu>.csv (tests/gpu/micro.cu on a GPU), takes the rows of its latest run
(several runs of one day are averaged when --all-runs is given) and prints a parameter file that
`--model-params FILE` reads, with the fit used for each value (docs/timing_model.md, "The
parameters"). On a B200 this turns `make calibrate` into the model's parameters in one command;
on the H100 it reproduces results/params_h100.txt (tests/gpu/run_micro_sim.sh checks that).
The tcgen05 parameters need the sm_100a microbenchmarks, which do not exist yet: they are not
written, so the file keeps the table's published values for them.
usage: fit_params.py [--all-runs] MICRO.csv
"""
import csv
import sys
from collections import defaultdict


def load(path, all_runs):
    rows = list(csv.DictReader(open(path)))
    if not rows:
        raise SystemExit("fit_params: %s has no rows" % path)
    if not all_runs:
        last = max(r["date"] for r in rows)
        rows = [r for r in rows if r["date"] == last]
    by = defaultdict(list)
    for r in rows:
        by[r["case"]].append(r)
    return rows, by


def main(argv):
    args = [a for a in argv[1:] if a != "--all-runs"]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    rows, by = load(args[0], "--all-runs" in argv)

    def span(name):  # mean CTA span, ns
        if name not in by:
            raise SystemExit("fit_params: no measurement of '%s' in %s" % (name, args[0]))
        return 1000 * sum(float(r["cta_span_us"]) for r in by[name]) / len(by[name])

    gpu, sms = rows[0]["gpu"], int(rows[0]["sms"])
    seen = [float(r["sm_clock_seen_mhz"]) for r in rows if r["sm_clock_seen_mhz"].replace(".", "").isdigit()]
    ghz = (max(seen) if seen else float(rows[0]["max_sm_clock_mhz"])) / 1000
    setup = span("setup: 16 mbarrier.init + fence + syncthreads")
    handoff = span("mbarrier ping-pong in a CTA x1000") / 2000
    # Remote arrives: with .release.cta (no membar) a hand-off costs the hop; .release.cluster adds
    # the GPU-scope membar the compiler puts before it (micro_cluster.cuh, "release" cases).
    cta_handoff = span("mbarrier ping-pong across a cluster (mapa, release.cta) x1000") / 2000
    remote = cta_handoff - handoff
    membar = span("mbarrier ping-pong across a cluster (mapa) x1000") / 2000 - cta_handoff
    cluster_bar = span("cluster barrier relaxed x1000") / 1000
    # Distributed shared memory between the two SMs of a cluster: a dependent chain of remote
    # loads (latency), bulk copies back to back (bytes per ns), a 16-byte copy bounced (one way,
    # less the hand-off that wakes the receiver).
    dsmem_lat = span("dsmem ld.u32 chain x1000, peer") / 1000
    big = ["dsmem bulk copy 8 KiB x64, peer", "dsmem bulk copy 32 KiB x16, peer"]
    dsmem_rate = sum(float(by[n][0]["bytes"]) / span(n) for n in big) / len(big)
    dsmem_copy = span("dsmem bulk bounce 16 B x500") / 1000 - handoff
    # TMA, one CTA, 4 stages, 64 stages of 32 KiB: one 32 KiB box or two 16 KiB boxes per stage.
    t32 = span("tma sw128 64x256, 1 CTA, L2") / 64
    t16 = span("tma sw128 64x128 x2, 1 CTA, L2") / 128
    box = 2 * t16 - t32
    rate = 16384 / (t32 - t16)
    latency = span("tma latency box 64x8 sw128 (1 KiB)") / 64 - box - 1024 / rate - 2 * handoff
    hbm = float(sum(float(r["bytes"]) for r in by["tma sw128 64x256, all SMs, HBM (264 MiB)"])) / len(
        by["tma sw128 64x256, all SMs, HBM (264 MiB)"]) / span("tma sw128 64x256, all SMs, HBM (264 MiB)")
    rows16 = sms * 64 * 8 * 256  # every SM: 64 stages of 8 boxes of 256 rows
    requests = rows16 / span("tma 16B rows 8x256 x8, all SMs, L2")
    # Stores of one 128 x 256 BF16 tile per CTA: 128 warp instructions; coalesced 4 lines and 16
    # full sectors each, lane pairs 16 lines and 16 full sectors, row per thread 32 lines and 32
    # half-filled sectors. Setup (the CTA span's fixed part) is subtracted.
    coal1 = span("store coalesced 1 CTA") - setup
    row1 = span("store row-per-thread 1 CTA") - setup
    store_bpc = 65536 / (coal1 * ghz)
    partial = row1 / coal1 / 2
    tc = span("store coalesced one wave") - setup
    tlp = span("store lane-pairs one wave") - setup
    per_line = (tlp - tc) / (sms * 128 * 12)
    per_sector = (tc - sms * 128 * 4 * per_line) / (sms * 128 * 16)
    dates = sorted(set(r["date"] for r in rows))
    print("# Timing-model parameters fitted by tests/gpu/fit_params.py from %s" % args[0])
    print("# %s, %d SMs, driver %s, runs %s" % (gpu, sms, rows[0]["driver"], ", ".join(dates)))
    src = "fit_params.py on %s (%s)" % (args[0].split("/")[-1], dates[-1][:10])
    out = [
        ("SM clock", ghz, "measured", "nvidia-smi clocks.sm seen during the run"),
        ("SMs", sms, "spec", "cudaDevAttrMultiProcessorCount"),
        ("TMA throughput of one SM", rate, "measured", "one CTA: 16 KiB / (t(32 KiB box) - t(16 KiB box))"),
        ("TMA: SM time per box", box * ghz, "measured", "one CTA: 2 t(16 KiB box) - t(32 KiB box)"),
        ("TMA latency", latency, "measured", "1 KiB boxes one at a time, less the box time and two hand-offs"),
        ("HBM bandwidth (chip)", hbm, "measured", "every SM, 264 MiB read once"),
        ("TMA: chip L2 requests", requests, "measured", "16-byte rows from every SM"),
        ("global store rate of one SM", store_bpc, "measured", "one CTA, coalesced stores, less setup"),
        ("store: partial-sector cost", partial, "measured", "one CTA: row-per-thread / coalesced time / 2 (twice the sectors)"),
        ("store: chip L2 write rate, lines", 1 / per_line, "measured", "one wave: lane pairs vs coalesced (same sectors)"),
        ("store: chip L2 write rate, sectors", 1 / per_sector, "measured", "one wave: coalesced less its lines"),
        ("CTA setup: fence.mbarrier_init", setup * ghz, "measured", "16 mbarrier.init + fence + __syncthreads"),
        ("mbarrier hand-off", handoff * ghz, "measured", "ping-pong of two warps"),
        ("remote mbarrier arrive", remote * ghz, "measured", "cluster-of-2 ping-pong through mapa, .release.cta, less a hand-off"),
        ("release membar (.release.cluster arrive)", membar * ghz, "measured",
         "cluster-of-2 ping-pong: .release.cluster less .release.cta arrives"),
        ("cluster barrier round trip", cluster_bar * ghz, "measured", "barrier.cluster.arrive.relaxed + wait, cluster of 2"),
        ("DSMEM: remote load latency", dsmem_lat * ghz, "measured", "dependent ld.shared::cluster.u32 chain in the peer CTA"),
        ("DSMEM: SM-to-SM bandwidth", dsmem_rate / ghz, "measured", "bulk copies of 8 and 32 KiB into the peer, back to back"),
        ("DSMEM: bulk copy latency", dsmem_copy * ghz, "measured", "16-byte bulk copy bounced between the pair, less a hand-off"),
    ]
    for name, value, kind, how in out:
        print("%s = %.4g ; %s ; %s: %s" % (name, value, kind, src, how))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
