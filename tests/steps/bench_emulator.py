#!/usr/bin/env python3
"""bench_emulator.py — what the emulator itself costs: CPU seconds and peak memory of fixed commands,
and a check that they do not grow.

Each command's CPU time (user + system, of the process and its children) and peak resident memory
come from the kernel's accounting (os.wait4). The CPU time is also divided by that of a reference
command measured in the same run (a fixed pure-Python workload that does not use the emulator), so
that the ratio, not the absolute time, is what is compared: it moves much less with the machine,
its load and its clock than the seconds do.

Commands (the "full" set is what `make bench-emulator` records; the "quick" set is what the check
measures, and `make bench-emulator` records it too, so that the check has rows to compare with):
  full   predict-bf16-step04    ./step04 --predict                      (BF16, 4096^3, three launches)
         predict-bf16-step09    ./step09 --predict                      (BF16, persistent, CLC)
         predict-nvfp4-step13   ./step13 --predict --m 128 --n 7168 --k 16384  (NVFP4, a competition shape)
         sim-default-step04     ./step04 --sim                          (512^3 with the arithmetic)
         breakit-s04-deadlock   build/break_it/s04-producer-parity-flipped (Break it: the deadlock report)
  quick  the same families at small shapes, each a second or two

Usage: tests/steps/bench_emulator.py [--record | --check] [options]
  --record        measure the full and quick sets and append one row per command to the CSV
                  (`make bench-emulator`)
  --check         measure the quick set and fail (exit 1) when a command's ratio to the reference is
                  more than --limit times the newest committed row's for this machine class (rows of
                  another class are used, and said so, when this class has none); writes nothing.
                  A suite of `make test`
  --set full|quick|all   with --record: which set [all]
  --bin-dir DIR   where the stepNN binaries (and build/break_it/) are [repository root]
  --rev REV       the revision to write in the rows [git rev-parse --short=12 HEAD, -dirty if modified]
  --csv FILE      [results/emulator_bench.csv]
  --limit X       [1.5]
Exit codes: 0 ok, 1 a command failed or got slower than the limit, 2 usage error.
"""
import csv
import datetime
import os
import platform
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ME = "tests/steps/bench_emulator.py"
BREAK_IT_CASE = "s04-producer-parity-flipped"
BREAK_IT_ARGS = ["--sim", "--m", "256", "--n", "256", "--k", "1024", "--inputs", "integer", "--sim-seed", "1"]

# A fixed CPU workload outside the emulator: dictionary updates and integer arithmetic (~0.6 s).
REFERENCE_SRC = ("d = {}\n"
                 "for i in range(3000000):\n"
                 "    d[i % 100003] = d.get(i % 100003, 0) + i\n")

# (id, argv relative to the binary directory, expected exit code, repeats: the minimum is kept)
FULL = [
    ("predict-bf16-step04", ["./step04", "--predict"], 0, 1),
    ("predict-bf16-step09", ["./step09", "--predict"], 0, 1),
    ("predict-nvfp4-step13", ["./step13", "--predict", "--m", "128", "--n", "7168", "--k", "16384"], 0, 1),
    ("sim-default-step04", ["./step04", "--sim"], 0, 3),
    ("breakit-s04-deadlock", ["build/break_it/" + BREAK_IT_CASE] + BREAK_IT_ARGS, 1, 3),
]
QUICK = [
    # 64 CTAs: at 32 (1024^3) the run took 0.6 s, a third of it the process's own start and
    # page faults, and two runs of it spread by half on this machine class.
    ("quick-predict-bf16-step04-64ctas", ["./step04", "--predict", "--m", "2048", "--n", "1024", "--k", "1024"], 0, 3),
    ("quick-predict-nvfp4-step13", ["./step13", "--predict", "--m", "128", "--n", "2048", "--k", "2048"], 0, 2),
    ("quick-sim-default-step04", ["./step04", "--sim"], 0, 3),
    ("quick-breakit-s04-deadlock", ["build/break_it/" + BREAK_IT_CASE] + BREAK_IT_ARGS, 1, 3),
]
FIELDS = ["date_utc", "git_rev", "machine", "set", "command_id", "command", "cpu_s", "peak_mib", "ref_cpu_s", "ratio"]


def die(msg, code=2):
    print(f"{ME}: {msg}", file=sys.stderr)
    sys.exit(code)


def machine_class():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    model = " ".join(model.replace(",", " ").split())
    return f"{platform.machine()} {os.cpu_count()} cpus {model}"


def git_rev():
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measure(argv, cwd, expected_rc):
    """CPU seconds (user + system) and peak resident MiB of one run of argv."""
    try:
        p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as e:
        die(f"cannot run {' '.join(argv)}: {e}", 1)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != expected_rc:
        tail = err.decode(errors="replace").strip().splitlines()[-3:]
        die(f"{' '.join(argv)} exited {p.returncode}, expected {expected_rc}" + "".join("\n  " + t for t in tail), 1)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def best_of(argv, cwd, expected_rc, repeats):
    runs = [measure(argv, cwd, expected_rc) for _ in range(repeats)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def ensure_break_it(bin_dir):
    """The Break it binary, built (outside the measurement) when missing or older than its sources."""
    path = os.path.join(bin_dir, "build", "break_it", BREAK_IT_CASE)
    if os.path.abspath(bin_dir) == ROOT:
        r = subprocess.run(["bash", "tests/steps/break_it.sh", "--run", BREAK_IT_CASE, "1"], cwd=ROOT,
                           capture_output=True, text=True)
        if not os.access(path, os.X_OK):
            die(f"could not build the Break it case {BREAK_IT_CASE}:\n{r.stdout}{r.stderr}", 1)
    return os.access(path, os.X_OK)


def run_set(commands, bin_dir, ref_cpu):
    have_break_it = ensure_break_it(bin_dir)
    rows = []
    for cid, argv, rc, repeats in commands:
        exe = os.path.join(bin_dir, argv[0])
        if not os.access(exe, os.X_OK):
            if "break_it" in argv[0] and not have_break_it:
                print(f"  {cid:28s} not measured: no {exe} (the Break it binary is built from this checkout)")
                continue
            die(f"{exe} not found (make all)", 1)
        cpu, mib = best_of([exe] + argv[1:], bin_dir, rc, repeats)
        rows.append({"command_id": cid, "command": " ".join(argv), "cpu_s": cpu, "peak_mib": mib,
                     "ratio": cpu / ref_cpu})
        print(f"  {cid:28s} {cpu:8.2f} s CPU {mib:8.0f} MiB peak   {cpu / ref_cpu:7.2f} x reference", flush=True)
    return rows


def reference_cpu():
    cpu, _ = best_of([sys.executable, "-c", REFERENCE_SRC], ROOT, 0, 3)
    print(f"  {'reference (python workload)':28s} {cpu:8.2f} s CPU", flush=True)
    return cpu


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    args = sys.argv[1:]
    mode, which, bin_dir, rev, csv_path, limit = None, "all", ROOT, None, os.path.join(ROOT, "results/emulator_bench.csv"), 1.5
    i = 0
    while i < len(args):
        a = args[i]
        val = lambda: args[i + 1] if i + 1 < len(args) else die(f"{a} needs a value")
        if a in ("--record", "--check"):
            mode = a[2:]
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a in ("--set", "--bin-dir", "--rev", "--csv", "--limit"):
            v = val()
            i += 1
            if a == "--set":
                if v not in ("full", "quick", "all"):
                    die(f"--set {v}: full, quick or all")
                which = v
            elif a == "--bin-dir":
                bin_dir = os.path.abspath(v)
            elif a == "--rev":
                rev = v
            elif a == "--csv":
                csv_path = os.path.abspath(v)
            else:
                try:
                    limit = float(v)
                except ValueError:
                    die(f"--limit {v}: not a number")
                if limit <= 1.0:
                    die(f"--limit {v}: must be above 1")
        else:
            die(f"unknown option '{a}' (see --help)")
        i += 1
    if mode is None:
        die("say --record or --check (see --help)")
    machine = machine_class()
    print(f"{ME}: {machine}, binaries in {os.path.relpath(bin_dir, ROOT) if bin_dir.startswith(ROOT) else bin_dir}")
    ref = reference_cpu()

    if mode == "record":
        sets = [("full", FULL), ("quick", QUICK)] if which == "all" else [(which, FULL if which == "full" else QUICK)]
        rev = rev or git_rev()
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
        out = []
        for name, commands in sets:
            print(f"{name} set:")
            for r in run_set(commands, bin_dir, ref):
                out.append({"date_utc": date, "git_rev": rev, "machine": machine, "set": name, "command_id": r["command_id"],
                            "command": r["command"], "cpu_s": f"{r['cpu_s']:.2f}", "peak_mib": f"{r['peak_mib']:.0f}",
                            "ref_cpu_s": f"{ref:.3f}", "ratio": f"{r['ratio']:.3f}"})
        new = not os.path.exists(csv_path)
        with open(csv_path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerows(out)
        print(f"{ME}: appended {len(out)} rows to {os.path.relpath(csv_path, ROOT)}")
        return 0

    # --check: the quick set against the newest committed row of each command.
    rows = [r for r in read_rows(csv_path) if r.get("set") == "quick"]
    if not rows:
        die(f"no quick-set rows in {os.path.relpath(csv_path, ROOT)}: run make bench-emulator and commit its rows", 1)
    print("quick set:")
    measured = run_set(QUICK, bin_dir, ref)
    failed = 0
    for m in measured:
        same = [r for r in rows if r["command_id"] == m["command_id"] and r["machine"] == machine]
        base = same or [r for r in rows if r["command_id"] == m["command_id"]]
        if not base:
            print(f"FAIL  {m['command_id']}: no committed row to compare with")
            failed += 1
            continue
        b = base[-1]
        committed = float(b["ratio"])
        note = "" if same else f" (no row for this machine class; the newest of {b['machine']})"
        verdict = m["ratio"] <= limit * committed
        print(f"{'ok  ' if verdict else 'FAIL'}  {m['command_id']}: {m['ratio']:.2f} x reference, committed "
              f"{committed:.2f} at {b['git_rev']}{note}; limit {limit:g} x = {limit * committed:.2f}")
        failed += not verdict
    print(f"{ME}: {len(measured) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
