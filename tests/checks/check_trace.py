#!/usr/bin/env python3
"""check_trace.py FILE... — checks that each file is a Chrome-trace timeline as our steps write it
with --trace (common/trace.h), read back with Python's own json module rather than our writer:

  * a JSON object whose "traceEvents" is a list (a file ending in .gz is read through gzip);
  * every event is a complete event ("ph": "X") or a metadata event ("ph": "M");
  * every X event has a non-empty string "name", a string "cat", numeric "ts" and "dur"
    (microseconds, finite) with dur >= 0, and integer "pid" and "tid";
  * on each track (pid, tid) the spans nest or are disjoint (touching ends allowed): a span
    that starts inside another must end inside it too;
  * every pid with spans has a process_name event, every (pid, tid) with spans a thread_name
    event, each with a non-empty args.name; and every named track has at least one span.

Prints one "ok" line per file, or the first violation, and exits 1 if any file fails (2 on
usage errors). Options: --slack-ns X (tolerance for the nesting rule, default 0.001 ns, i.e.
only the rounding of the decimal microseconds), --min-spans N (fail if a file has fewer).
"""
import gzip
import json
import math
import sys
from collections import defaultdict


class Violation(Exception):
    pass


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def reject_constant(name):
    # json.loads accepts NaN, Infinity and -Infinity by default; JSON itself does not.
    raise Violation(f"{name} is not valid JSON")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f, parse_constant=reject_constant)
    except (OSError, UnicodeDecodeError) as e:
        raise Violation(f"cannot read: {e}")
    except json.JSONDecodeError as e:
        raise Violation(f"not JSON: {e}")


def describe(e):
    return f"\"{e.get('name')}\" (pid {e.get('pid')}, tid {e.get('tid')}, ts {e.get('ts')}, dur {e.get('dur')})"


def check(doc, slack_us):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise Violation('the top level must be an object with a "traceEvents" list')
    events = doc["traceEvents"]
    spans = defaultdict(list)
    process_names, thread_names = {}, {}
    for i, e in enumerate(events):
        where = f"traceEvents[{i}]"
        if not isinstance(e, dict):
            raise Violation(f"{where} is not an object")
        ph = e.get("ph")
        for key in ("pid", "tid"):
            if not isinstance(e.get(key), int) or isinstance(e.get(key), bool):
                raise Violation(f"{where}: \"{key}\" must be an integer, not {e.get(key)!r}")
        if ph == "M":
            args = e.get("args")
            name = args.get("name") if isinstance(args, dict) else None
            if e.get("name") in ("process_name", "thread_name"):
                if not isinstance(name, str) or not name:
                    raise Violation(f"{where}: {e.get('name')} without a non-empty args.name")
                if e["name"] == "process_name":
                    process_names[e["pid"]] = name
                else:
                    thread_names[(e["pid"], e["tid"])] = name
            continue
        if ph != "X":
            raise Violation(f"{where}: unexpected \"ph\": {ph!r} (only X and M events are written)")
        if not isinstance(e.get("name"), str) or not e["name"]:
            raise Violation(f"{where}: a span needs a non-empty string \"name\"")
        if not isinstance(e.get("cat"), str):
            raise Violation(f"{where} {describe(e)}: \"cat\" must be a string")
        for key in ("ts", "dur"):
            if not is_number(e.get(key)) or not math.isfinite(e[key]):
                raise Violation(f"{where} {describe(e)}: \"{key}\" must be a finite number")
        if e["dur"] < 0:
            raise Violation(f"{where} {describe(e)}: negative duration")
        if "args" in e and not isinstance(e["args"], dict):
            raise Violation(f"{where} {describe(e)}: \"args\" must be an object")
        spans[(e["pid"], e["tid"])].append(e)

    for (pid, tid), track in spans.items():
        if pid not in process_names:
            raise Violation(f"pid {pid} has spans but no process_name")
        if (pid, tid) not in thread_names:
            raise Violation(f"track (pid {pid}, tid {tid}) has spans but no thread_name")
        # In order of start, longer first: a stack of the spans containing the current one.
        track.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_spans = []
        for e in track:
            while open_spans and open_spans[-1]["ts"] + open_spans[-1]["dur"] <= e["ts"] + slack_us:
                open_spans.pop()
            if open_spans and e["ts"] + e["dur"] > open_spans[-1]["ts"] + open_spans[-1]["dur"] + slack_us:
                raise Violation(f"on track \"{thread_names[(pid, tid)]}\" of \"{process_names[pid]}\": "
                                f"{describe(e)} partly overlaps {describe(open_spans[-1])}")
            open_spans.append(e)
    for key, name in thread_names.items():
        if key not in spans:
            raise Violation(f"track \"{name}\" (pid {key[0]}, tid {key[1]}) is named but has no spans")
    return sum(len(t) for t in spans.values()), len(process_names), len(thread_names)


def main(argv):
    slack_ns, min_spans, paths = 0.001, 0, []
    args = iter(argv)
    for a in args:
        try:
            if a in ("--slack-ns", "--min-spans"):
                value = next(args)
            elif a.startswith(("--slack-ns=", "--min-spans=")):
                a, value = a.split("=", 1)
            elif a.startswith("-"):
                raise ValueError(f"unknown option {a}")
            else:
                paths.append(a)
                continue
            if a == "--slack-ns":
                slack_ns = float(value)
                if not math.isfinite(slack_ns) or slack_ns < 0:
                    raise ValueError("--slack-ns must be a non-negative number")
            else:
                min_spans = int(value)
        except (StopIteration, ValueError) as e:
            print(f"check_trace.py: {str(e) or a + ' needs a value'} (usage: check_trace.py "
                  "[--slack-ns X] [--min-spans N] FILE...)", file=sys.stderr)
            return 2
    if not paths:
        print("usage: check_trace.py [--slack-ns X] [--min-spans N] FILE...", file=sys.stderr)
        return 2
    bad = 0
    for path in paths:
        try:
            n, procs, tracks = check(load(path), slack_ns / 1000.0)
            if n < min_spans:
                raise Violation(f"{n} spans, fewer than --min-spans {min_spans}")
            print(f"ok    {path}: {n} spans on {tracks} tracks of {procs} CTAs")
        except Violation as e:
            print(f"FAIL  {path}: {e}")
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
