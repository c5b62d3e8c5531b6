#!/usr/bin/env python3
"""draw_layouts.py - draw the shared-memory layout pictures of docs/core_matrices.md.

Every address in the pictures comes from plots/layout_dump.cpp, which prints (as JSON) what the
address functions of common/descriptors.h return. This script builds that tool if it is missing
or older than its sources, runs it, checks a few properties of its output, and draws:

  docs/img/core_matrices_noswizzle.png  step 01's no-swizzle K-major tile: core matrices, LBO, SBO
  docs/img/swizzle128_atom.png          one 128B-swizzled atom and what each MMA K step reads

Usage (from anywhere):  python3 plots/draw_layouts.py [--out-dir DIR] [--dump-json FILE]
Needs matplotlib (pip install matplotlib) and a C++17 compiler ($CXX, default g++).
"""
import argparse
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL_SRC = os.path.join(ROOT, "plots", "layout_dump.cpp")
TOOL_DEPS = [TOOL_SRC, os.path.join(ROOT, "common", "descriptors.h")]
TOOL_BIN = os.path.join(ROOT, "build", "layout_dump")

# Chunk / k-group colours: tab20 comes in (dark, light) pairs of one hue, so logical 16-byte
# chunks 2j and 2j+1 - the two halves that MMA K step j reads - share a hue.
TAB20 = plt.get_cmap("tab20").colors


def chunk_color(c):
    return TAB20[c % 20]


def build_tool():
    """Compile plots/layout_dump.cpp into build/layout_dump unless it is up to date."""
    if os.path.exists(TOOL_BIN):
        newest_src = max(os.path.getmtime(p) for p in TOOL_DEPS)
        if os.path.getmtime(TOOL_BIN) >= newest_src:
            return
    os.makedirs(os.path.dirname(TOOL_BIN), exist_ok=True)
    cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O1", "-Wall", "-Wextra", "-I.", TOOL_SRC, "-o", TOOL_BIN]
    print("building:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True)


def run_tool():
    build_tool()
    out = subprocess.run([TOOL_BIN], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


# ------------------------------------------------------------------------------------------------
# Consistency checks: the pictures state these properties in words, so make sure the code agrees.
def require(cond, what="layout property"):
    if not cond:  # not `assert`: these checks must also run under python -O
        raise SystemExit("draw_layouts.py: layout_dump output contradicts the pictures: " + what)


def check_dump(d):
    ns = d["noswizzle"]
    offs = {(r, k): a for r, k, a in ns["elements"]}
    require(offs[(0, 0)] == 0)
    require(offs[(0, 8)] - offs[(0, 0)] == ns["lbo"], "LBO: next 16 B of K")
    require(offs[(8, 0)] - offs[(0, 0)] == ns["sbo"], "SBO: next 8 rows")
    require(offs[(0, 16)] - offs[(0, 0)] == ns["k_step_bytes"], "k-step advance")
    for (r, k), a in offs.items():  # inside a core matrix: row pitch 16 B, elements 2 B apart
        base = offs[(r - r % 8, k - k % 8)]
        require(a - base == (r % 8) * 16 + (k % 8) * ns["elem_bytes"])
    cms = sorted(a for _, _, a in ns["core_matrices"])
    require(cms == list(range(0, ns["tile_bytes"], 128)), "core matrices tile the 16 KiB densely")

    sw = d["swizzle128"]
    phys_of = {(r, c): p for r, c, _, p in sw["store"]}
    logical_at = {(r, p): c for (r, c), p in phys_of.items()}
    for (r, c), p in phys_of.items():
        require(p == c ^ r, "128B swizzle: physical chunk = logical chunk XOR row")
    for j, r, h, addr, p in sw["mma_reads"]:
        require(addr // sw["span"] == r, "the MMA stays inside atom row r")
        require(logical_at[(r, p)] == 2 * j + h, "K step j reads logical chunks 2j and 2j+1")


# ------------------------------------------------------------------------------------------------
def arrow(ax, p0, p1, text, color="black", text_xy=None, ha="center", va="center", fontsize=10, rad=0.0):
    ax.add_patch(FancyArrowPatch(p0, p1, arrowstyle="-|>", mutation_scale=16, lw=2.0, color=color,
                                 connectionstyle=f"arc3,rad={rad}", zorder=5))
    if text:
        tx, ty = text_xy if text_xy else ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2)
        ax.text(tx, ty, text, ha=ha, va=va, fontsize=fontsize, color=color, zorder=6, fontweight="bold",
                bbox=dict(boxstyle="round,pad=0.25", fc="white", ec=color, lw=1.0, alpha=0.95))


def draw_noswizzle(d, path):
    ns = d["noswizzle"]
    lbo, sbo, kstep = ns["lbo"], ns["sbo"], ns["k_step_bytes"]
    block_k, mma_k = ns["block_k"], ns["mma_k"]
    rows = 1 + max(r for r, _, _ in ns["elements"])
    offs = {(r, k): a for r, k, a in ns["elements"]}
    n_kgroups = block_k // 8

    fig = plt.figure(figsize=(17, 12.5))
    gs = fig.add_gridspec(2, 2, height_ratios=[1.0, 1.05], width_ratios=[2.3, 1.0], hspace=0.32, wspace=0.12)
    fig.suptitle("Step 01: K-major BF16 tile, no swizzle (BLOCK_M 128 x BLOCK_K 64, LBO = %d B, SBO = %d B)\n"
                 "addresses from tcg::kmajor_operand_addr() with the descriptors the kernel builds"
                 % (lbo, sbo), fontsize=15, fontweight="bold", y=0.985)

    # ---- (1) logical view: the first 16 rows x 64 k, coloured by core matrix ---------------
    ax = fig.add_subplot(gs[0, :])
    for r in range(rows):
        for k in range(block_k):
            j = k // 8
            g = r // 8
            ax.add_patch(Rectangle((k, r), 1, 1, fc=chunk_color(j), ec="white", lw=0.4, alpha=1.0 if g == 0 else 0.75))
    for g in range(rows // 8):
        for j in range(n_kgroups):
            ax.add_patch(Rectangle((8 * j, 8 * g), 8, 8, fill=False, ec="black", lw=1.6))
            a = offs[(8 * g, 8 * j)]
            ax.text(8 * j + 4, 8 * g + 4, "core matrix\nrows %d-%d, k %d-%d\nbytes %d-%d"
                    % (8 * g, 8 * g + 7, 8 * j, 8 * j + 7, a, a + 127),
                    ha="center", va="center", fontsize=8.3, zorder=4,
                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.85))
    # MMA k-step brackets above the grid
    for s in range(block_k // mma_k):
        x0, x1 = s * mma_k + 0.15, (s + 1) * mma_k - 0.15
        ax.plot([x0, x0, x1, x1], [-0.4, -0.9, -0.9, -0.4], color="black", lw=1.4, clip_on=False)
        ax.text((x0 + x1) / 2, -1.15, "MMA k-step s=%d (k %d-%d)\ndescriptor start = tile + %d B"
                % (s, s * mma_k, s * mma_k + mma_k - 1, offs[(0, s * mma_k)]),
                ha="center", va="bottom", fontsize=10, clip_on=False)
    arrow(ax, (0.8, 1.4), (15.4, 1.4), "LBO = +%d B (next 16 B of K)" % (offs[(0, 8)] - offs[(0, 0)]),
          color="#b00000", text_xy=(8, 1.4), fontsize=9.5)
    arrow(ax, (1.2, 4.5), (1.2, 11.5), "SBO = +%d B\n(next 8 rows)" % (offs[(8, 0)] - offs[(0, 0)]),
          color="#0040b0", text_xy=(2.6, 8.0), ha="left")
    arrow(ax, (20, 14.6), (36, 14.6), "k-step: +%d B (= 2 x LBO)" % (offs[(8, 32)] - offs[(8, 16)]),
          color="#006000", text_xy=(28, 14.6))
    ax.set_xlim(0, block_k)
    ax.set_ylim(rows, 0)
    ax.set_xticks(range(0, block_k + 1, 8))
    ax.set_yticks(range(0, rows + 1, 4))
    ax.set_xlabel("k (BF16 element index inside the 64-wide K block)", fontsize=11)
    ax.set_ylabel("row (M for A, N for B)", fontsize=11)
    ax.set_title("(1) Logical view: rows 0-15 of the tile (rows 16-127 continue the pattern), "
                 "colour = 16-byte k-group", fontsize=12, pad=48)
    ax.set_aspect("equal")

    # ---- (2) physical view: the whole 16 KiB tile as 8 lines of 2 KiB ------------------------
    ax = fig.add_subplot(gs[1, 0])
    line = lbo  # one 2 KiB line per k-group
    cells_per_line = line // 128
    for g, j, a in ns["core_matrices"]:
        x, y = (a % line) // 128, a // line
        shown = g < rows // 8
        ax.add_patch(Rectangle((x, y), 1, 1, fc=chunk_color(j), ec="black" if shown else "white",
                               lw=1.6 if shown else 0.6, alpha=1.0 if shown else 0.35))
        ax.text(x + 0.5, y + 0.5, "%d" % (8 * g), ha="center", va="center",
                fontsize=8.5, fontweight="bold" if shown else "normal")
    # annotations outside the grid: SBO above it, LBO and the k-step on its right
    arrow(ax, (0.5, -0.15), (1.5, -0.15), "", color="#0040b0")
    ax.text(1.7, -0.25, "SBO = +%d B: next 8 rows" % sbo, color="#0040b0", fontsize=10, fontweight="bold",
            va="bottom", bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="#0040b0"))
    arrow(ax, (cells_per_line + 0.25, 0.5), (cells_per_line + 0.25, 1.5), "", color="#b00000")
    ax.text(cells_per_line + 0.45, 1.0, "LBO = +%d B:\nnext 16 B of K" % lbo, color="#b00000", fontsize=10,
            fontweight="bold", va="center", bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="#b00000"))
    arrow(ax, (cells_per_line + 0.25, 2.5), (cells_per_line + 0.25, 4.5), "", color="#006000")
    ax.text(cells_per_line + 0.45, 3.5, "k-step = +%d B:\nnext MMA" % kstep, color="#006000", fontsize=10,
            fontweight="bold", va="center", bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="#006000"))
    for sp in ("top", "right"):
        ax.spines[sp].set_visible(False)
    ax.set_xlim(0, cells_per_line + 3.2)
    ax.set_ylim(n_kgroups, -0.9)
    ax.set_xticks([i + 0.5 for i in range(cells_per_line)])
    ax.set_xticklabels([str(128 * i) for i in range(cells_per_line)], fontsize=8, rotation=45)
    ax.spines["left"].set_bounds(0, n_kgroups)
    ax.spines["bottom"].set_bounds(0, cells_per_line)
    ax.set_yticks([i + 0.5 for i in range(n_kgroups)])
    ax.set_yticklabels(["%d\n(k %d-%d)" % (line * i, 8 * i, 8 * i + 7) for i in range(n_kgroups)], fontsize=8.5)
    ax.set_xlabel("byte offset inside the 2 KiB line (one 128-byte cell = one core matrix)", fontsize=11)
    ax.set_ylabel("line start (bytes): one line per 16-byte k-group", fontsize=11)
    ax.set_title("(2) Physical view: the whole 16 KiB tile in shared memory\n"
                 "cell text = first row of the core matrix; outlined = rows 0-15 of panel (1)", fontsize=12, pad=22)
    ax.set_aspect("equal")

    # ---- (3) one core matrix: 8 rows x 16 bytes, contiguous ------------------------------------
    ax = fig.add_subplot(gs[1, 1])
    for r in range(8):
        for k in range(8):
            ax.add_patch(Rectangle((k, r), 1, 1, fc=chunk_color(0), ec="white", lw=1.0,
                                   alpha=0.45 + 0.55 * (r % 2)))
            ax.text(k + 0.5, r + 0.5, "%d" % offs[(r, k)], ha="center", va="center", fontsize=9)
    ax.add_patch(Rectangle((0, 0), 8, 8, fill=False, ec="black", lw=2))
    ax.set_xlim(0, 8)
    ax.set_ylim(8, 0)
    ax.set_xticks([i + 0.5 for i in range(8)])
    ax.set_xticklabels([str(i) for i in range(8)])
    ax.set_yticks([i + 0.5 for i in range(8)])
    ax.set_yticklabels([str(i) for i in range(8)])
    ax.set_xlabel("k (element inside the 16-byte row)", fontsize=11)
    ax.set_ylabel("row inside the core matrix", fontsize=11)
    ax.set_title("(3) One core matrix (rows 0-7, k 0-7):\n8 rows x 16 B = 128 contiguous bytes\n"
                 "cell text = byte offset", fontsize=12)
    ax.set_aspect("equal")

    handles = [Patch(fc=chunk_color(j), ec="black", label="k-group %d: k %d-%d (MMA k-step %d)"
                     % (j, 8 * j, 8 * j + 7, j // 2)) for j in range(n_kgroups)]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=10, frameon=True,
               title="colour = 16-byte k-group (two per MMA k-step)", title_fontsize=10)
    fig.subplots_adjust(left=0.06, right=0.98, top=0.835, bottom=0.11)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_swizzle(d, path):
    sw = d["swizzle128"]
    span = sw["span"]
    nchunks = span // 16
    logical_at = {(r, p): c for r, c, _, p in sw["store"]}
    steps = span // sw["mma_step_bytes"]

    fig = plt.figure(figsize=(17, 9.6))
    gs = fig.add_gridspec(2, 3, width_ratios=[1.45, 1, 1], hspace=0.42, wspace=0.22)
    fig.suptitle("One 128B-swizzled K-major atom (8 rows x 128 B = 8 x 64 BF16, 1024-B aligned, SBO = %d B)\n"
                 "addresses from tcg::swizzle_addr() (TMA store) and tcg::kmajor_operand_addr() (MMA read)"
                 % sw["sbo"], fontsize=15, fontweight="bold")

    def grid(ax, title, highlight=None):
        for r in range(8):
            for p in range(nchunks):
                c = logical_at[(r, p)]
                on = highlight is None or (r, p) in highlight
                ax.add_patch(Rectangle((p, r), 1, 1, fc=chunk_color(c) if on else "#eeeeee",
                                       ec="white" if highlight is None else "#bbbbbb", lw=1.0))
                if on:
                    label = "%d" % c if highlight is None else "%d\n%s" % (c, highlight[(r, p)])
                    ax.text(p + 0.5, r + 0.5, label, ha="center", va="center",
                            fontsize=13 if highlight is None else 9, fontweight="bold")
        ax.set_xlim(0, nchunks)
        ax.set_ylim(8, 0)
        ax.set_xticks([i + 0.5 for i in range(nchunks)])
        ax.set_yticks([i + 0.5 for i in range(8)])
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=11.5)

    ax = fig.add_subplot(gs[:, 0])
    grid(ax, "(1) Where the TMA (SWIZZLE_128B) puts each chunk\n"
             "text/colour = logical chunk c (k 8c..8c+7) stored there;\nlogical chunk c of row r sits at "
             "physical chunk c XOR r")
    ax.set_xticklabels(["%d\n(+%d B)" % (i, 16 * i) for i in range(nchunks)], fontsize=9)
    ax.set_yticklabels(["%d (+%d B)" % (r, span * r) for r in range(8)], fontsize=9)
    ax.set_xlabel("physical 16-byte chunk inside the 128-byte row", fontsize=11)
    ax.set_ylabel("atom row r (byte offset of the row)", fontsize=11)

    reads = {}
    for j, r, h, _, p in sw["mma_reads"]:
        reads.setdefault(j, {})[(r, p)] = "lo" if h == 0 else "hi"
    for j in range(steps):
        ax = fig.add_subplot(gs[j // 2, 1 + j % 2])
        grid(ax, "(2.%d) MMA K step j=%d: start + %d B\nreads logical chunks %d, %d (k %d-%d)"
             % (j, j, j * sw["mma_step_bytes"], 2 * j, 2 * j + 1, 16 * j, 16 * j + 15), highlight=reads[j])
        ax.set_xticklabels([str(i) for i in range(nchunks)], fontsize=9)
        ax.set_yticklabels([str(i) for i in range(8)], fontsize=9)
        ax.set_xlabel("physical chunk", fontsize=10)
        ax.set_ylabel("atom row", fontsize=10)

    handles = [Patch(fc=chunk_color(c), ec="black", label="chunk %d: k %d-%d (K step %d, %s half)"
                     % (c, 8 * c, 8 * c + 7, c // 2, "lo" if c % 2 == 0 else "hi")) for c in range(nchunks)]
    handles.append(Patch(fc="#eeeeee", ec="#bbbbbb", label="not read by this K step"))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=10, frameon=True,
               title="colour = logical 16-byte chunk; in (2.j) 'lo'/'hi' = first/second 16 B of the MMA's "
                     "32-byte K slice", title_fontsize=10)
    fig.text(0.5, 0.148, "The MMA of step j forms row r's unswizzled address r*128 + 32j + 16h (h = lo 0 / hi 1) and "
             "applies the same XOR as the TMA, so it lands on logical chunk 2j+h: no gathering is needed.",
             ha="center", fontsize=11, style="italic")
    fig.subplots_adjust(left=0.07, right=0.98, top=0.86, bottom=0.235)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "img"), help="where the PNGs go [docs/img]")
    ap.add_argument("--dump-json", help="also save the tool's JSON here")
    args = ap.parse_args()

    d = run_tool()
    check_dump(d)
    if args.dump_json:
        with open(args.dump_json, "w") as f:
            json.dump(d, f, indent=1)
    os.makedirs(args.out_dir, exist_ok=True)
    outs = [os.path.join(args.out_dir, "core_matrices_noswizzle.png"), os.path.join(args.out_dir, "swizzle128_atom.png")]
    draw_noswizzle(d, outs[0])
    draw_swizzle(d, outs[1])
    for o in outs:
        print("wrote", os.path.relpath(o, ROOT) if os.path.abspath(o).startswith(ROOT + os.sep) else o)


if __name__ == "__main__":
    main()
