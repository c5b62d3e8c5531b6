#!/usr/bin/env python3
"""check_citations.py - every citation in the repository points at something a reader can open.

Fails (exit 1, one line per offence: file:line and the text) when a tracked text file
  * cites material outside the repository: the notes the project was started from (a "fact
    sheet", its sections, a path into the reference folder that sits beside the repository, or one of their file
    names, which look like 00N_ followed by 16 hex digits), or a local path of the machine that built it;
  * links to an entry of docs/references.md (`references.md#ID`) that does not exist there;
and when a page's published-figure source in results/published_b200.csv names no id of
docs/references.md. The public sources themselves are listed, with addresses, in
docs/references.md.

  python3 tests/checks/check_citations.py            (from anywhere inside the repository)
  python3 tests/checks/check_citations.py FILE...    (only those files; used by the self-test)
"""
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Built from pieces so that this file does not match itself.
FORBIDDEN = [
    (re.compile(r"\bfacts?[ -]" + "sheets?" + r"\b", re.I), "a fact-sheet is not part of the repository"),
    (re.compile(r"\bfacts\s*" + "§"), "a fact-sheet section is not part of the repository"),
    (re.compile(r"\bfacts\s+\d+\.\d+\b"), "a fact-sheet section is not part of the repository"),
    (re.compile(r"(\.\./)?\bshared/(reference|seeds)\b"), "shared/ is not part of the repository"),
    (re.compile(r"(tcgen05|b200-timing)-" + "facts"), "a fact-sheet is not part of the repository"),
    (re.compile(r"\b00[0-4]_[0-9a-f]{16}\b"), "a seed file name is not a public source"),
    (re.compile(r"\bseeds? 00[0-4]\b", re.I), "a seed number is not a public source"),
    (re.compile("/" + "work/" + r"(shared|main|wt)\b"), "a local path is not part of the repository"),
]
REF_LINK = re.compile(r"\]\((?:[A-Za-z0-9_./-]*/)?references\.md#([A-Za-z0-9_-]+)\)")  # a Markdown link
ANCHOR = re.compile(r'<a id="([A-Za-z0-9_-]+)"></a>')


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f]


def read_text(path):
    try:
        with open(os.path.join(ROOT, path), "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if b"\0" in data[:4096]:
        return None  # binary (a figure): its drawn text comes from the plot scripts checked here
    return data.decode("utf-8", errors="replace")


def main(argv):
    files = argv[1:] or tracked_files()
    me = os.path.relpath(os.path.abspath(__file__), ROOT)
    refs_path = os.path.join(ROOT, "docs", "references.md")
    anchors = set(ANCHOR.findall(open(refs_path, encoding="utf-8").read())) if os.path.exists(refs_path) else set()
    bad = 0
    for f in files:
        if os.path.relpath(os.path.join(ROOT, f), ROOT) == me:
            continue
        text = read_text(f)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for pat, why in FORBIDDEN:
                m = pat.search(line)
                if m:
                    print("%s:%d: %s: %r" % (f, n, why, m.group(0)))
                    bad += 1
            for ref in REF_LINK.findall(line):
                if ref not in anchors:
                    print("%s:%d: references.md has no entry '%s'" % (f, n, ref))
                    bad += 1
    pub = os.path.join(ROOT, "results", "published_b200.csv")
    if not argv[1:] and os.path.exists(pub):
        with open(pub, newline="", encoding="utf-8") as fh:
            for n, row in enumerate(csv.DictReader(fh), 2):
                ref = (row.get("source") or "").split(" ")[0]
                if ref not in anchors:
                    print("results/published_b200.csv:%d: source '%s' is not an id of docs/references.md" % (n, ref))
                    bad += 1
    if bad:
        print("check_citations: %d citation(s) of material a reader cannot open (docs/references.md "
              "lists the public sources)" % bad)
        return 1
    print("check_citations: %d files, every citation public, every references.md link resolves (%d entries)"
          % (len(files), len(anchors)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
