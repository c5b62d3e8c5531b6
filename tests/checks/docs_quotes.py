#!/usr/bin/env python3
"""docs_quotes.py - the outputs, code excerpts and line numbers the pages quote, regenerated from
real runs and the current sources (`make docs-quotes`), and checked in `make test`.

Two markers, both invisible on a rendered page (tests/README.md, "Quoted outputs"):

  <!-- quote: CMD -->          the fenced block right below is the output (stdout and stderr) of
  ```                          `bash -c CMD` run from the repository root; trailing spaces and
  ...                          trailing blank lines are dropped. CMD may trim with a pipe
  ```                          (`| head -12`, `| grep ...`). A code excerpt is a quote of
                               `python3 tests/checks/docs_quotes.py excerpt FILE 'TEXT' N`.
  <!-- quote rc=N: CMD -->     the same, for a command that must exit with N (default: 0 or 1).
  <!-- quote $: CMD -->        the block starts with the line "$ CMD" before the output.
  <!-- quote md: CMD -->       the output is Markdown (a table from a CSV): it stands as it is
  ...                          between the marker and the line <!-- /quote -->, no fence.
  <!-- /quote -->

  <!-- excerpt diff: OLD NEW --> the ```diff block right below is an excerpt of the change from
                               source OLD to source NEW (e.g. two steps): every "-" line must be a
                               line of OLD, every "+" line one of NEW, every context line one of
                               either (leading and trailing spaces aside; "..." stands for elided
                               text, a context line that is a // comment is the page's own note).
                               Checked only: an excerpt that went stale must be edited by hand.

  118<!-- line: PATH: TEXT --> the number right before the marker is the line of PATH (from the
                               repository root) that contains TEXT; TEXT must occur exactly once,
                               or be written `TEXT #k` for its k-th occurrence.

Host addresses in an output (0x and 10 or more hex digits) are written as 0x(host): they change
from run to run. Commands and paths under build/break_it/ are the "Break it" cases of tests/steps/break_it.sh;
they are built first when missing or older than the step sources and common/.

  python3 tests/checks/docs_quotes.py --check [FILE...]   (make test) exit 1 on any difference
  python3 tests/checks/docs_quotes.py --write [FILE...]   (make docs-quotes) rewrite the pages
  python3 tests/checks/docs_quotes.py excerpt FILE TEXT N  print N lines of FILE from the line
                                                           holding TEXT (the excerpt helper)
Default files: README.md and docs/*.md.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
QUOTE = re.compile(r"^<!-- quote(?: (rc=\d+|\$|md))?: (.*?) -->\s*$")
QUOTE_END = "<!-- /quote -->"
EXCERPT_DIFF = re.compile(r"^ *<!-- excerpt diff: (\S+) (\S+) -->\s*$")
LINE_REF = re.compile(r"(\d+)<!-- line: ([^:]+?): (.*?) -->")
BREAK_IT = re.compile(r"build/break_it/([A-Za-z0-9_-]+)")
# Host addresses (the emulator's global memory lives in the host heap) change from run to run:
# 12 and more hex digits print as 0x(host). Shared-memory and TMEM addresses are short and stay.
HOST_ADDRESS = re.compile(r"0x[0-9a-f]{10,}")
_cache = {}
_built = set()


def newest_source_mtime():
    paths = glob.glob(os.path.join(ROOT, "steps", "*.cu")) + \
        glob.glob(os.path.join(ROOT, "common", "**", "*.*"), recursive=True) + \
        [os.path.join(ROOT, "tests", "steps", "break_it.sh")]
    return max(os.path.getmtime(p) for p in paths)


def ensure_break_it(text):
    """Builds the Break-it cases that `text` names, when missing or stale."""
    for name in BREAK_IT.findall(text):
        if name in _built:
            continue
        _built.add(name)
        binary = os.path.join(ROOT, "build", "break_it", name)
        src = binary + ".cu"
        if all(os.path.exists(p) and os.path.getmtime(p) >= newest_source_mtime() for p in (binary, src)):
            continue
        r = subprocess.run(["bash", "tests/steps/break_it.sh", "--build-only", name], cwd=ROOT,
                           capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(binary):
            raise SystemExit("docs_quotes: could not build the Break-it case %s:\n%s%s" % (name, r.stdout, r.stderr))


def run(cmd, rc_want):
    key = (cmd, rc_want)
    if key not in _cache:
        ensure_break_it(cmd)
        r = subprocess.run(["bash", "-c", cmd], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        ok = r.returncode in (0, 1) if rc_want is None else r.returncode == rc_want
        if not ok:
            raise SystemExit("docs_quotes: `%s` exited %d (expected %s):\n%s" % (
                cmd, r.returncode, "0 or 1" if rc_want is None else rc_want, r.stdout[-2000:]))
        lines = [HOST_ADDRESS.sub("0x(host)", l.rstrip()) for l in r.stdout.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        _cache[key] = lines
    return _cache[key]


def prefetch(files):
    """Runs the quotes' commands of `files` DOCS_QUOTES_JOBS at a time (default: the CPU count) into
    run()'s cache, so that the pages are then checked or written from it in their order. The
    Break-it cases they name are built first, one at a time; the commands naming the same case
    run one after the other (break_it.sh --run rebuilds a stale binary in place). A command that
    fails here is left out of the cache and fails again, with its message, in its page's turn."""
    import concurrent.futures
    cmds = []
    for f in files:
        for line in open(f, encoding="utf-8"):
            q = QUOTE.match(line.rstrip("\n"))
            if q:
                opt = q.group(1)
                key = (q.group(2), 0 if opt == "md" else int(opt[3:]) if opt and opt.startswith("rc=") else None)
                if key not in cmds:
                    cmds.append(key)
    groups = {}
    for cmd, rc in cmds:
        ensure_break_it(cmd)
        m = re.search(r"break_it\.sh +(?:--\S+ +)*([A-Za-z0-9_-]+)", cmd)
        groups.setdefault(m.group(1) if m else cmd, []).append((cmd, rc))

    def run_group(group):
        for cmd, rc in group:
            try:
                run(cmd, rc)
            except SystemExit:
                pass

    jobs = int(os.environ.get("DOCS_QUOTES_JOBS") or os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        list(ex.map(run_group, groups.values()))


def line_of(path, text):
    ensure_break_it(path)
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        raise SystemExit("docs_quotes: %s: no such file" % path)
    k = 1
    m = re.match(r"^(.*) #(\d+)$", text)
    if m:
        text, k = m.group(1), int(m.group(2))
    hits = [i for i, l in enumerate(open(full, encoding="utf-8").read().splitlines(), 1) if text in l]
    if (not m and len(hits) != 1) or (m and len(hits) < k):
        raise SystemExit("docs_quotes: %s: %r occurs %d times (write 'TEXT #k' or a longer TEXT)"
                         % (path, text, len(hits)))
    return hits[k - 1]


def check_excerpt(rel, i, lines, old, new):
    """Differences between the ```diff block at lines[i] and the sources OLD and NEW."""
    if i >= len(lines) or not lines[i].lstrip().startswith("```"):
        raise SystemExit("%s:%d: an excerpt marker must be followed by a fenced block" % (rel, i))
    indent = len(lines[i]) - len(lines[i].lstrip())  # a block inside a list item
    src = {}
    for p in (old, new):
        full = os.path.join(ROOT, p)
        if not os.path.exists(full):
            return ["%s:%d: %s: no such file" % (rel, i, p)]
        src[p] = [l.strip() for l in open(full, encoding="utf-8").read().splitlines()]
    bad, k = [], i + 1
    while k < len(lines) and lines[k].strip() != "```":
        l = lines[k][indent:] if lines[k][:indent].strip() == "" else lines[k]
        body = l[1:].strip() if l[:1] in "-+ " else l.strip()
        if body and not body.startswith(("...", "…")) and not l.startswith("@@") and not (
                l[:1] == " " and body.startswith("//")):  # a context comment is the page's annotation
            where = {"-": [old], "+": [new]}.get(l[:1], [old, new])
            # "..." stands for elided text: the pieces around it must appear in order in one line.
            pat = re.compile(".*".join(re.escape(piece.strip()) for piece in re.split(r"\.\.\.|…", body)))
            if not any(pat.search(x) for p in where for x in src[p]):
                bad.append("%s:%d: diff excerpt line not in %s: %r" % (rel, k + 1, " or ".join(where), l))
        k += 1
    return bad


def process(path, write):
    """Returns a list of differences (file:line: what); rewrites the file when write is set."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, diffs, i = [], [], 0
    rel = os.path.relpath(path, ROOT)
    while i < len(lines):
        line = lines[i]

        def fix_ref(m, n=i):
            want = str(line_of(m.group(2), m.group(3)))
            if m.group(1) != want:
                diffs.append("%s:%d: line %s of %s should be %s (%r)" % (rel, n + 1, m.group(1), m.group(2), want,
                                                                          m.group(3)))
            return want + m.group(0)[len(m.group(1)):]

        line = LINE_REF.sub(fix_ref, line)
        out.append(line)
        q = QUOTE.match(line)
        x = EXCERPT_DIFF.match(line)
        i += 1
        if x:
            diffs += check_excerpt(rel, i, lines, x.group(1), x.group(2))
        if not q:
            continue
        if q.group(1) == "md":
            end = i
            while end < len(lines) and lines[end].rstrip() != QUOTE_END:
                end += 1
            if end >= len(lines):
                raise SystemExit("%s:%d: a 'quote md' marker needs a closing %s line" % (rel, i, QUOTE_END))
            want = run(q.group(2), 0)
            have = [l.rstrip() for l in lines[i:end]]
            if have != want:
                first = next((k for k in range(max(len(have), len(want)))
                              if k >= len(have) or k >= len(want) or have[k] != want[k]), 0)
                diffs.append("%s:%d: the output of `%s` differs at its line %d:\n    page: %r\n    run:  %r" % (
                    rel, i + 1 + first, q.group(2), first + 1, have[first] if first < len(have) else "(end)",
                    want[first] if first < len(want) else "(end)"))
            out += want
            out.append(lines[end])
            i = end + 1
            continue
        if i >= len(lines) or not lines[i].startswith("```"):
            raise SystemExit("%s:%d: a quote marker must be followed by a fenced block" % (rel, i))
        fence = lines[i]
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        if end >= len(lines):
            raise SystemExit("%s:%d: unterminated fenced block" % (rel, i + 1))
        opt, cmd = q.group(1), q.group(2)
        want = run(cmd, int(opt[3:]) if opt and opt.startswith("rc=") else None)
        if opt == "$":
            want = ["$ " + cmd] + want
        have = [l.rstrip() for l in lines[i + 1:end]]
        if have != want:
            first = next((k for k in range(max(len(have), len(want)))
                          if k >= len(have) or k >= len(want) or have[k] != want[k]), 0)
            diffs.append("%s:%d: the output of `%s` differs at its line %d:\n    page: %r\n    run:  %r" % (
                rel, i + 2 + first, cmd, first + 1, have[first] if first < len(have) else "(end)",
                want[first] if first < len(want) else "(end)"))
        out.append(fence)
        out += want
        out.append("```")
        i = end + 1
    if write:
        text = "\n".join(out)
        if text != "\n".join(lines):
            open(path, "w", encoding="utf-8").write(text)
    return diffs


def excerpt(path, text, n):
    start = line_of(path, text)
    body = open(os.path.join(ROOT, path), encoding="utf-8").read().splitlines()
    print("\n".join(body[start - 1:start - 1 + int(n)]))


def main(argv):
    if len(argv) >= 2 and argv[1] == "excerpt":
        if len(argv) != 5:
            print("usage: docs_quotes.py excerpt FILE TEXT N", file=sys.stderr)
            return 2
        excerpt(argv[2], argv[3], argv[4])
        return 0
    if len(argv) < 2 or argv[1] not in ("--check", "--write"):
        print("usage: docs_quotes.py --check|--write [FILE...] | excerpt FILE TEXT N", file=sys.stderr)
        return 2
    write = argv[1] == "--write"
    files = argv[2:] or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    diffs, quotes = [], 0
    prefetch([os.path.abspath(f) for f in files])
    for f in files:
        f = os.path.abspath(f)
        text = open(f, encoding="utf-8").read()
        quotes += len(re.findall(r"<!-- (?:quote|line)", text))
        diffs += process(f, write)
    if write:
        print("docs_quotes: %d markers, %d updated" % (quotes, len(diffs)))
        for d in diffs:
            print("  " + d.split("\n")[0])
        return 0
    for d in diffs:
        print(d)
    if diffs:
        print("docs_quotes: %d quoted output(s) or line number(s) differ from the current run/source; "
              "`make docs-quotes` regenerates them (then read the prose around them)" % len(diffs))
        return 1
    print("docs_quotes: %d markers in %d pages match the current runs and sources" % (quotes, len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
