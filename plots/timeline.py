#!/usr/bin/env python3
"""timeline.py - draws a Chrome-trace JSON (common/trace.h) as a timeline PNG.

The trace: {"traceEvents": [...], "otherData": {...}} (a bare event list is accepted too).
Complete events ("ph": "X") are spans: "pid" = CTA, "tid" = track (0..63 warps, 100+ the
asynchronous engines: TMA copies, the tensor core), "cat" one of phase / wait / issue / tma / mma
/ tmem_ld / store / compute, "ts" and "dur" in microseconds. Metadata events ("ph": "M",
process_name / thread_name) name CTAs and tracks.

The picture: one row per track of the chosen CTAs (warps first, then engines), time in
microseconds across. Spans are coloured by category (phase spans by phase name: setup, mainloop,
epilogue, teardown); spans of one track nest, and a nested span is drawn thinner on top of its
parent (a phase is the pale band behind its warp's waits and issues), so what a warp waits on
inside its main loop stays visible.

Usage:  python3 plots/timeline.py TRACE.json --out FILE.png [options]
  --ctas N          draw the first N CTAs (lowest pid) [2]
  --cta PID         draw this CTA (repeatable; overrides --ctas)
  --tmax US         cut the time axis at US microseconds
  --title TEXT      title (default: from the trace's otherData)
Exit codes: 0 written, 2 unreadable trace or no spans (one line on stderr).
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

ASYNC_BASE = 100
PHASE_COLORS = [("setup", "#f3e3b3"), ("mainloop", "#dcdcdc"), ("epilogue", "#cfe2f3"),
                ("teardown", "#f4cccc")]
PHASE_OTHER = "#e6e6e6"
CATEGORIES = [  # (cat, colour, legend text), in legend order; phases: PHASE_COLORS
    ("phase", PHASE_OTHER, "phase: "),  # + the names seen that PHASE_COLORS lacks
    ("wait", "#d62728", "wait (a barrier that blocked)"),
    ("issue", "#1f77b4", "issuing work (TMA copies, MMAs; step 00: its loads)"),
    ("tma", "#2ca02c", "TMA copy in flight"),
    ("mma", "#9467bd", "tensor core (MMA in flight)"),
    ("tmem_ld", "#ff7f0e", "tcgen05.ld .. wait::ld"),
    ("store", "#8c564b", "global stores (st.global)"),
    ("tma_store", "#e377c2", "TMA stores in flight (cp.async.bulk.tensor)"),
    ("compute", "#17becf", "warp-level MMA (mma.sync)"),
]
COLORS = {c: col for c, col, _ in CATEGORIES}
OTHER_COLOR = "#bcbd22"


class TraceError(Exception):
    pass


def load(path):
    """(spans, cta_names, track_names, other). spans: dicts pid, tid, name, cat, ts, dur."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise TraceError("%s: cannot read a JSON trace (%s)" % (path, e))
    if isinstance(doc, dict):
        events, other = doc.get("traceEvents"), doc.get("otherData") or {}
    else:
        events, other = doc, {}
    if not isinstance(events, list):
        raise TraceError("%s: no traceEvents list" % path)
    spans, cta_names, track_names, bad = [], {}, {}, 0
    for e in events:
        if not isinstance(e, dict):
            bad += 1
            continue
        ph = e.get("ph")
        if ph == "M":
            name = (e.get("args") or {}).get("name")
            if e.get("name") == "process_name" and name is not None:
                cta_names[e.get("pid")] = str(name)
            elif e.get("name") == "thread_name" and name is not None:
                track_names[(e.get("pid"), e.get("tid"))] = str(name)
            continue
        if ph != "X":
            continue
        try:
            ts, dur = float(e["ts"]), float(e.get("dur", 0.0))
            pid, tid = int(e["pid"]), int(e["tid"])
        except (KeyError, TypeError, ValueError):
            bad += 1
            continue
        if not (math.isfinite(ts) and math.isfinite(dur)) or dur < 0:
            bad += 1
            continue
        spans.append({"pid": pid, "tid": tid, "name": str(e.get("name", "")),
                      "cat": str(e.get("cat", "")), "ts": ts, "dur": dur})
    if bad:
        print("warning: %s: %d malformed event(s) skipped" % (path, bad), file=sys.stderr)
    if not spans:
        raise TraceError("%s: no spans (complete events, \"ph\": \"X\")" % path)
    return spans, cta_names, track_names, other


def nest_depths(spans):
    """Depth of each span in its track: 0 for the outermost; a span inside another gets its
    parent's depth + 1 (spans sorted by start, longer first, as trace.h writes them)."""
    spans.sort(key=lambda s: (s["ts"], -s["dur"]))
    stack = []  # ends of the open spans
    for s in spans:
        end = s["ts"] + s["dur"]
        while stack and stack[-1] <= s["ts"] + 1e-9:  # spans that ended before this one
            stack.pop()
        while stack and stack[-1] < end - 1e-9:  # a partial overlap (a broken trace)
            stack.pop()
        s["depth"] = len(stack)
        stack.append(end)


def track_label(pid, tid, track_names, cta_names, several):
    name = track_names.get((pid, tid)) or (
        "warp %d" % tid if tid < ASYNC_BASE else "async %d" % (tid - ASYNC_BASE))
    if several:
        name = "CTA %d: %s" % (pid, name)  # the long CTA names (block index, SM) would crowd the axis
    return name


def default_title(path, other, ctas):
    keys = [k for k in ("step", "shape", "clock", "device", "source") if k in other]
    bits = ["%s %s" % (k, other[k]) for k in keys]
    if not bits:
        bits = ["%s: %s" % (k, v) for k, v in sorted(other.items())][:4]
    return "%s — CTA%s %s\n%s" % (
        os.path.basename(path), "s" if len(ctas) > 1 else "", ", ".join(map(str, ctas)),
        "; ".join(bits) if bits else "(no otherData in the trace)")


def draw(path, out, n_ctas=2, cta_ids=None, tmax=None, title=None):
    spans, cta_names, track_names, other = load(path)
    pids = sorted({s["pid"] for s in spans})
    if cta_ids:
        missing = [c for c in cta_ids if c not in pids]
        if missing:
            raise TraceError("%s: no spans for CTA %s (the trace has %s)" % (
                path, ", ".join(map(str, missing)), ", ".join(map(str, pids[:16]))))
        ctas = list(cta_ids)
    else:
        ctas = pids[:max(1, n_ctas)]
    chosen = [s for s in spans if s["pid"] in ctas]
    t0 = min(s["ts"] for s in chosen)
    tracks = sorted({(s["pid"], s["tid"]) for s in chosen},
                    key=lambda pt: (ctas.index(pt[0]), pt[1] >= ASYNC_BASE, pt[1]))
    row = {t: i for i, t in enumerate(tracks)}
    by_track = {}
    for s in chosen:
        by_track.setdefault((s["pid"], s["tid"]), []).append(s)
    for ss in by_track.values():
        nest_depths(ss)

    end = max(s["ts"] + s["dur"] for s in chosen) - t0
    xmax = tmax if tmax else end * 1.01 or 1.0
    height = 1.6 + 0.32 * len(tracks)
    fig, ax = plt.subplots(figsize=(13, min(height, 40)))
    seen = set()
    # Outer spans first; bars: (x, width) lists per (track, colour, depth) for broken_barh.
    # A phase span's colour says which phase it is (PHASE_COLORS).
    phases = dict(PHASE_COLORS)
    groups, phases_seen, other_phases = {}, set(), set()
    for s in chosen:
        cat = s["cat"]
        if cat == "store" and s["name"].startswith("TMA store"):  # the TMA engine's, not a warp's
            cat = "tma_store"
        color = COLORS.get(cat, OTHER_COLOR)
        if cat == "phase":
            pname = s["name"].split()[0].lower() if s["name"].strip() else ""
            if pname in phases:
                color = phases[pname]
                phases_seen.add(pname)
            else:
                seen.add("phase")
                other_phases.add(pname or "(unnamed)")
        else:
            seen.add(cat)
        groups.setdefault((row[(s["pid"], s["tid"])], color, s["depth"]), []).append(
            (s["ts"] - t0, max(s["dur"], xmax * 1e-4)))
    for (r, color, depth), bars in sorted(groups.items(), key=lambda kv: kv[0][2]):
        h = 0.8 * (0.7 ** min(depth, 4))
        ax.broken_barh(bars, (r - h / 2, h), facecolors=color, edgecolors="none",
                       zorder=2 + depth)
    several = len(ctas) > 1
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([track_label(p, t, track_names, cta_names, several) for p, t in tracks],
                       fontsize=7.5)
    ax.set_ylim(len(tracks) - 0.5, -0.5)
    for i in range(1, len(tracks)):  # a line between CTAs
        if tracks[i][0] != tracks[i - 1][0]:
            ax.axhline(i - 0.5, color="0.3", linewidth=0.8)
    ax.set_xlim(0, xmax)
    ax.set_xlabel("time from the first span of the drawn CTAs, microseconds", fontsize=9)
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title or default_title(path, other, ctas), fontsize=9.5, loc="left")
    known = [c for c, _, _ in CATEGORIES]
    handles = [Patch(facecolor=col, label="phase: " + p) for p, col in PHASE_COLORS
               if p in phases_seen]
    handles += [Patch(facecolor=col, label=lbl + (", ".join(sorted(other_phases)) if c == "phase" else ""))
                for c, col, lbl in CATEGORIES if c in seen]
    if seen - set(known):
        handles.append(Patch(facecolor=OTHER_COLOR, label="other: " + ", ".join(
            sorted(seen - set(known)))))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7.5,
              frameon=False)
    fig.subplots_adjust(left=0.16, right=0.79, top=1 - 0.75 / min(height, 40),
                        bottom=0.55 / min(height, 40) + 0.02)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return len(chosen), len(tracks), ctas


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ctas", type=int, default=2)
    ap.add_argument("--cta", type=int, action="append")
    ap.add_argument("--tmax", type=float)
    ap.add_argument("--title")
    args = ap.parse_args()
    try:
        n, t, ctas = draw(args.trace, args.out, args.ctas, args.cta, args.tmax, args.title)
    except TraceError as e:
        print("timeline.py: %s" % e, file=sys.stderr)
        return 2
    print("wrote %s (%d spans on %d tracks, CTA %s)" % (args.out, n, t,
                                                          ", ".join(map(str, ctas))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
