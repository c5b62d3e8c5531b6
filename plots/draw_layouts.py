#!/usr/bin/env python3
"""draw_layouts.py - draw the layout pictures of docs/core_matrices.md, docs/05_2sm_mma.md and
docs/06_persistent.md.

Every address in the pictures comes from plots/layout_dump.cpp, which prints (as JSON) what the
address functions of common/descriptors.h and step 05's own tile-mapping function and
shared-memory offsets return. This script builds that tool if it is missing or older than its
sources, runs it, checks a few properties of its output, and draws:

  docs/img/core_matrices_noswizzle.png  step 01's no-swizzle K-major tile: core matrices, LBO, SBO
  docs/img/swizzle128_atom.png          one 128B-swizzled atom and what each MMA K step reads
  docs/img/2sm_data_split.png           step 05: which CTA of a pair holds which rows of A, B, C,
                                        the CTA -> tile map of an example grid, and the identical
                                        shared-memory layout of both CTAs with the pair's barrier flow
  docs/img/nvfp4_sf_blocked.png         step 07: where each UE4M3 scale of a 256-row, K = 128 operand
                                        lands in the 128x4 blocked layout (common/nvfp4_layout.h, via
                                        plots/nvfp4_dump.cpp)
  docs/img/nvfp4_sf_tmem.png            step 07: one 512-byte scale atom in TMEM after
                                        tcgen05.cp.32x128b.warpx4 (lanes 0-127 x 4 columns x 4 bytes)
  docs/img/persistent_schedule.png      step 06: which CTA pair computes which output tile in which
                                        order (the kernel's own schedule functions, via
                                        plots/schedule_dump.cpp), and the accumulator ping-pong

Usage (from anywhere):  python3 plots/draw_layouts.py [--out-dir DIR] [--dump-json FILE] [--only NAME]
Needs matplotlib (pip install matplotlib), a C++17 compiler ($CXX, default g++) and the CUDA
headers ($CUDA_HOME, default: the directory above `nvcc` on the PATH, else /usr/local/cuda).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import ConnectionPatch, FancyArrowPatch, Patch, Rectangle  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL_SRC = os.path.join(ROOT, "plots", "layout_dump.cpp")
TOOL_DEPS = [TOOL_SRC, os.path.join(ROOT, "common", "descriptors.h"), os.path.join(ROOT, "common", "kernel_common.cuh"),
             os.path.join(ROOT, "steps", "step05_2sm_mma.cu")]
TOOL_BIN = os.path.join(ROOT, "build", "layout_dump")
SCHEDULE_SRC = os.path.join(ROOT, "plots", "schedule_dump.cpp")
SCHEDULE_DEPS = [SCHEDULE_SRC, os.path.join(ROOT, "common", "descriptors.h"),
                 os.path.join(ROOT, "common", "kernel_common.cuh"), os.path.join(ROOT, "steps", "step06_persistent.cu")]
SCHEDULE_BIN = os.path.join(ROOT, "build", "schedule_dump")
NVFP4_SRC = os.path.join(ROOT, "plots", "nvfp4_dump.cpp")
NVFP4_DEPS = [NVFP4_SRC, os.path.join(ROOT, "common", "descriptors.h"), os.path.join(ROOT, "common", "nvfp4_layout.h")]
NVFP4_BIN = os.path.join(ROOT, "build", "nvfp4_dump")

# Chunk / k-group colours: tab20 comes in (dark, light) pairs of one hue, so logical 16-byte
# chunks 2j and 2j+1 - the two halves that MMA K step j reads - share a hue.
TAB20 = plt.get_cmap("tab20").colors


def chunk_color(c):
    return TAB20[c % 20]


def build_tool(src=TOOL_SRC, deps=TOOL_DEPS, binary=TOOL_BIN):
    """Compile plots/layout_dump.cpp (or another dump tool) into build/ unless it is up to date."""
    if os.path.exists(binary):
        newest_src = max(os.path.getmtime(p) for p in deps)
        if os.path.getmtime(binary) >= newest_src:
            return
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    cuda_home = os.environ.get("CUDA_HOME")
    if not cuda_home:
        nvcc = shutil.which("nvcc")
        cuda_home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else "/usr/local/cuda"
    # layout_dump.cpp includes step 05's source (emulator build) for its tile-mapping function,
    # schedule_dump.cpp step 06's for its schedule; --gc-sections drops the step's kernel and
    # launcher, which would need the emulator to link.
    cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O1", "-Wall", "-Wextra", "-Wno-psabi", "-I.",
           "-I" + os.path.join(cuda_home, "include"), "-ffunction-sections", "-Wl,--gc-sections", src,
           "-o", binary]
    print("building:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True)


def run_tool():
    build_tool()
    out = subprocess.run([TOOL_BIN], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    build_tool(SCHEDULE_SRC, SCHEDULE_DEPS, SCHEDULE_BIN)
    out = subprocess.run([SCHEDULE_BIN], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    d.update(json.loads(out))
    build_tool(NVFP4_SRC, NVFP4_DEPS, NVFP4_BIN)
    out = subprocess.run([NVFP4_BIN], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    d.update(json.loads(out))
    return d


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

    check_step05(d["step05"])
    check_step06(d["step06"])
    check_nvfp4(d["nvfp4"])


def check_step05(s):
    bm, bn, pm, br, cs = s["block_m"], s["block_n"], s["pair_m"], s["b_rows"], s["cluster_size"]
    require(cs == 2 and pm == cs * bm and br * cs == bn, "a pair is 2 CTAs of 128 A rows and half of B each")
    require(s["idesc_m"] == pm and s["idesc_n"] == bn, "the pair MMA is M = 256, N = 256")
    require(s["pair_stage_bytes"] == cs * s["stage_bytes"], "the leader's barrier expects both CTAs' bytes")
    sm = s["smem"]
    ns = s["num_stages"]
    require(sm["b_tiles"] == sm["a_tiles"] + ns * sm["a_stage_bytes"], "B tiles follow the A tiles")
    require(sm["tma_full_bars"] == sm["b_tiles"] + ns * sm["b_stage_bytes"], "barriers follow the B tiles")
    require(sm["a_stage_bytes"] + sm["b_stage_bytes"] == s["stage_bytes"], "one stage = A tile + B half")
    require(sm["launch_bytes"] <= 232448, "fits the sm_100 shared-memory limit")
    ex = s["example"]
    m, n = ex["m"], ex["n"]
    require(ex["grid"] % cs == 0 and ex["grid"] == len(s["ctas"]), "the grid is whole clusters")
    covered = {}
    by_cluster = {}
    for b, cl, rank, m0, n0, b0, rows, cols, brows in s["ctas"]:
        require(cl == b // cs and rank == b % cs, "blockIdx.x = 2 * cluster + rank")
        by_cluster.setdefault(cl, {})[rank] = (m0, n0, b0)
        for r in range(m0, m0 + rows):
            require(0 <= r < m)
            covered[(r, n0)] = covered.get((r, n0), 0) + 1
        require(cols == max(0, min(n - n0, bn)), "valid columns")
    for cl, ranks in by_cluster.items():
        (m0a, n0a, b0a), (m0b, n0b, b0b) = ranks[0], ranks[1]
        require(n0a == n0b and m0b == m0a + bm and m0a % pm == 0, "a pair takes consecutive M tiles of one N tile")
        require(b0a == n0a and b0b == n0a + br, "rank r holds B rows n0 + 128 r .. +127")
    require(all(v == 1 for v in covered.values()) and
            len(covered) == m * len({n0 for _, _, _, _, n0, _, _, _, _ in s["ctas"]}),
            "every row of C is held by exactly one CTA per N tile")


def check_step06(s):
    pm, bm, bn, band = s["pair_m"], s["block_m"], s["block_n"], s["band_pair_rows"]
    require(s["num_accumulators"] * bn == s["tmem_cols"] <= 512, "the accumulators fill one TMEM allocation")
    require(s["tmem_empty_arrivals"] == s["cluster_size"] * 4, "tmem_empty counts the epilogue warps of both CTAs")
    require(s["smem"]["launch_bytes"] <= 232448, "fits the sm_100 shared-memory limit")
    for name, ex in s["examples"].items():
        tm, tn, nt, nc = ex["tiles_m"], ex["tiles_n"], ex["num_tiles"], ex["num_clusters"]
        require(nt == tm * tn and nc == min(ex["num_sms"] // s["cluster_size"], nt), name + ": grid size")
        seen = {}
        for c, walk in enumerate(ex["walk"]):
            require(len(walk) >= 1, name + ": every pair has a tile")
            for i, (ii, t, pr, pc, m0, m0p, n0) in enumerate(walk):
                require(ii == i and t == c + i * nc, name + ": tile = cluster + i * num_clusters")
                require(m0 == pm * pr and m0p == m0 + bm and n0 == bn * pc, name + ": the pair's rows and columns")
                require(0 <= pr < tm and 0 <= pc < tn, name + ": the tile lies inside C")
                seen[(pr, pc)] = seen.get((pr, pc), 0) + 1
        require(len(seen) == nt and all(v == 1 for v in seen.values()), name + ": every tile exactly once")
        # The order the pictures describe: bands of `band` pair rows top to bottom (the last one may be
        # shorter), inside a band column by column, down M first.
        for walk in ex["walk"]:
            for _, t, pr, pc, *_ in walk:
                b, k = divmod(t, band * tn)
                rows = min(band, tm - b * band)
                require((pr, pc) == (b * band + k % rows, k // rows), name + ": banded order, down M first")


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


# ------------------------------------------------------------------------------------------------
LEADER_C, PEER_C = "#4c72b0", "#dd8452"  # rank 0 (leader) blue, rank 1 (peer) orange


def rank_color(rank):
    return LEADER_C if rank % 2 == 0 else PEER_C


def draw_2sm(d, path):
    s = d["step05"]
    bm, bn, pm, br = s["block_m"], s["block_n"], s["pair_m"], s["b_rows"]
    sm, ns = s["smem"], s["num_stages"]
    ex = s["example"]
    ctas = s["ctas"]
    pair0 = {rank: (m0, n0, b0) for b, cl, rank, m0, n0, b0, *_ in ctas if cl == 0}

    fig = plt.figure(figsize=(19, 15))
    gs = fig.add_gridspec(2, 2, height_ratios=[1.3, 0.75], width_ratios=[1.15, 1.0], hspace=0.2, wspace=0.1)
    fig.suptitle("Step 05: one tcgen05.mma.cta_group::2 (M = %d, N = %d, idesc %s) over a CTA pair\n"
                 "tiles from the kernel's cta_tile_2sm(), offsets from its constants (plots/layout_dump.cpp)"
                 % (s["idesc_m"], s["idesc_n"], s["idesc"]), fontsize=15, fontweight="bold", y=0.99)

    # ---- (1) one pair: who holds which rows of A, B and C ------------------------------------
    ax = fig.add_subplot(gs[0, 0])
    kw, gap, kt = 170, 20, 34  # schematic width of K, gap to C, width of one k-tile band
    for rank in (0, 1):
        m0, n0, b0 = pair0[rank]
        dm, db = m0 - pair0[0][0], b0 - pair0[0][2]
        col = rank_color(rank)
        who = "rank %d (%s)" % (rank, "leader" if rank == 0 else "peer")
        # A rows: a k-tile band at the outer end, the label in the rest
        ax.add_patch(Rectangle((-kw - gap, dm), kw, bm, fc=col, alpha=0.55, ec="black", lw=1.2))
        ax.add_patch(Rectangle((-kw - gap, dm), kt, bm, fill=False, ec="black", lw=0.8, hatch="//"))
        ax.text(-gap - (kw - kt) / 2, dm + bm / 2, "A rows\nm0+%d .. m0+%d\nin %s's\nshared memory"
                % (dm, dm + bm - 1, who), ha="center", va="center", fontsize=10.5)
        # B rows, drawn as columns of B^T above C
        ax.add_patch(Rectangle((db, -kw - gap), br, kw, fc=col, alpha=0.55, ec="black", lw=1.2))
        ax.add_patch(Rectangle((db, -kw - gap), br, kt, fill=False, ec="black", lw=0.8, hatch="\\\\"))
        ax.text(db + br / 2, -gap - (kw - kt) / 2, "B rows\nn0+%d .. n0+%d\nin %s's\nshared memory"
                % (db, db + br - 1, who), ha="center", va="center", fontsize=10.5)
        # C rows in this CTA's TMEM
        ax.add_patch(Rectangle((0, dm), bn, bm, fc=col, alpha=0.3, ec="black", lw=1.6))
        ax.text(bn / 2, dm + bm / 2, "C rows m0+%d .. m0+%d, all %d columns,\nin %s's TMEM:\n"
                "lanes 0-%d, columns 0-%d (FP32);\nits own epilogue warps 2-5 store them"
                % (dm, dm + bm - 1, bn, who, bm - 1, bn - 1), ha="center", va="center", fontsize=11,
                fontweight="bold")
    ax.text(-kw - gap + kt / 2, pm + 5, "one k-tile\n(64 of K)", ha="center", va="top", fontsize=9.5)
    ax.text(bn + 6, -gap - kw + kt / 2, "one k-tile (64 of K)", ha="left", va="center", fontsize=9.5)
    ax.text(-gap - kw / 2, -gap - kw / 2,
            "k-tile kt, rank r's TMA:\nA box {64, %d} at (64 kt, m0)\nB box {64, %d} at (64 kt, n0 + %d r)\n"
            "%d KiB per CTA, %d KiB per pair" % (bm, br, br, s["stage_bytes"] // 1024, s["pair_stage_bytes"] // 1024),
            ha="center", va="center", fontsize=10.5, bbox=dict(boxstyle="round", fc="white", ec="#888888"))
    ax.text(-kw - gap, pm + 40,
            "m0 = %d * (cluster / tiles_n) + %d * rank,  n0 = %d * (cluster %% tiles_n).\n"
            "Every row of C needs all %d rows of B: the pair MMA reads each CTA's B half from that CTA's\n"
            "shared memory, at the offset of the leader's descriptor. Each CTA loads only its own half."
            % (pm, bm, bn, bn), ha="left", va="top", fontsize=10.5, style="italic")
    ax.set_xlim(-kw - gap - 4, bn + 110)
    ax.set_ylim(pm + 95, -kw - gap - 4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("(1) One pair = one cluster of 2 CTAs = one %d x %d output tile" % (pm, bn), fontsize=13)

    # ---- (2) the CTA -> tile map of an example grid -----------------------------------------
    ax = fig.add_subplot(gs[0, 1])
    m, n = ex["m"], ex["n"]
    for b, cl, rank, m0, n0, b0, rows, cols, brows in ctas:
        col = rank_color(rank)
        empty = rows == 0
        ax.add_patch(Rectangle((n0, m0), bn, bm, fc=col, alpha=0.12 if empty else 0.5,
                               ec=col if empty else "black", lw=1.5 if empty else 0.8, ls="--" if empty else "-"))
        ax.text(n0 + bn / 2, m0 + bm / 2, "blockIdx.x %d\ncluster %d, rank %d%s" %
                (b, cl, rank, "\nno valid row: loads its B half,\nA zero-filled, stores nothing" if empty else ""),
                ha="center", va="center", fontsize=10 if not empty else 9.2)
    for cl in sorted({c[1] for c in ctas}):
        r0 = [c for c in ctas if c[1] == cl and c[2] == 0][0]
        ax.add_patch(Rectangle((r0[4], r0[3]), bn, pm, fill=False, ec="black", lw=3.0))
    ax.plot([0, n], [m, m], color="#b00000", lw=2.5, ls=":")
    ax.text(n + 6, m, "M = %d:\nend of C" % m, color="#b00000", fontsize=10.5, va="center", fontweight="bold")
    ymax = max(c[3] for c in ctas) + bm
    ax.set_xlim(0, n + 95)
    ax.set_ylim(ymax + 8, -8)
    ax.set_xticks(sorted({c[4] for c in ctas} | {n}))
    ax.set_yticks(sorted({c[3] for c in ctas} | {ymax}))
    for sp in ("top", "right"):
        ax.spines[sp].set_visible(False)
    ax.set_xlabel("column of C (N = %d)" % n, fontsize=11)
    ax.set_ylabel("row of C", fontsize=11)
    ax.set_aspect("equal")
    ax.set_title("(2) The grid for M = %d, N = %d: %d CTAs in clusters of 2 (thick: one pair).\n"
                 "Pairs are numbered along N first; the 2 CTAs of a pair take consecutive M tiles."
                 % (m, n, ex["grid"]), fontsize=12)

    # ---- (3) shared memory of both CTAs: identical offsets, and the pair's barrier flow ------
    sub = gs[1, :].subgridspec(1, 2, width_ratios=[2.35, 1.0], wspace=0.08)
    kib = 1024.0
    row_y = {0: 0.0, 1: 2.4}  # y of each CTA's strip; 1 unit high
    axl = fig.add_subplot(sub[0, 0])
    axr = fig.add_subplot(sub[0, 1])
    cells = [("full[%d]" % i, sm["tma_full_bars"] + 8 * i) for i in range(ns)] + \
            [("done[%d]" % i, sm["mma_done_bars"] + 8 * i) for i in range(ns)] + \
            [("mainloop_done", sm["mainloop_done_bar"]), ("tmem slot", sm["tmem_slot"])]
    for rank, y in row_y.items():
        col = rank_color(rank)
        for st in range(ns):
            a = sm["a_tiles"] + st * sm["a_stage_bytes"]
            b = sm["b_tiles"] + st * sm["b_stage_bytes"]
            axl.add_patch(Rectangle((a / kib, y), sm["a_stage_bytes"] / kib, 1, fc=col, alpha=0.6, ec="black"))
            axl.text((a + sm["a_stage_bytes"] / 2) / kib, y + 0.5, "A[%d]" % st, ha="center", va="center", fontsize=10)
            axl.add_patch(Rectangle((b / kib, y), sm["b_stage_bytes"] / kib, 1, fc=col, alpha=0.35, ec="black",
                                    hatch=".."))
            axl.text((b + sm["b_stage_bytes"] / 2) / kib, y + 0.5, "B[%d]" % st, ha="center", va="center", fontsize=10)
        axl.add_patch(Rectangle((sm["tma_full_bars"] / kib, y), 2.5, 1, fc="#444444", ec="black"))
        axl.text(-3, y + 0.5, "rank %d\n(%s)" % (rank, "leader" if rank == 0 else "peer"), fontsize=11.5, color=col,
                 fontweight="bold", ha="right", va="center")
        for x in (sm["a_tiles"], sm["b_tiles"], sm["tma_full_bars"]):
            axl.text(x / kib, y + 1.08, "%d" % x, ha="center", va="top", fontsize=9)
        # the barriers, one cell per 8-byte mbarrier (and the 4-byte TMEM slot)
        for i, (name, off) in enumerate(cells):
            unused = rank == 1 and name.startswith("full")
            fc = "#dddddd" if unused else ("#f2d16b" if name.startswith("full") else
                                           "#8fd19e" if name.startswith("done") else
                                           "#c39bd3" if name.startswith("mainloop") else "#ffffff")
            axr.add_patch(Rectangle((i, y), 1, 1, fc=fc, ec="black", lw=0.8, hatch="xx" if unused else None))
            axr.text(i + 0.5, y + 0.5, name, ha="center", va="center", fontsize=7.5, rotation=90)
        for i in (0, ns, 2 * ns):
            axr.text(i, y + 1.08, "%d" % cells[i][1], ha="left", va="top", fontsize=8.5)
    axr.text(0, row_y[1] + 1.45, "rank 1's full[] are never used; they stay so that\nevery later offset is the "
             "same as in rank 0", fontsize=9, va="top", color="#555555")
    st = 2
    # the leader's descriptors: its own stage-st addresses, read at the same offsets in the peer
    for base, size in ((sm["a_tiles"], sm["a_stage_bytes"]), (sm["b_tiles"], sm["b_stage_bytes"])):
        x = (base + st * size + size / 2) / kib
        axl.add_patch(FancyArrowPatch((x, 1.35), (x, row_y[1] - 0.05), arrowstyle="-|>", mutation_scale=14,
                                      lw=1.8, color="#202020", ls="--"))
    axl.text((sm["a_tiles"] + st * sm["a_stage_bytes"]) / kib + 20, 1.45,
             "leader's MMA of a k-tile in stage %d: a_desc / b_desc hold the leader's own addresses;\n"
             "the hardware reads the peer's A[%d] and B[%d] at the same offsets (dashed)" % (st, st, st),
             ha="left", va="top", fontsize=10, fontweight="bold")
    # both CTAs' TMA copies complete on the leader's full[st]
    for rank, y in row_y.items():
        x = (sm["b_tiles"] + st * sm["b_stage_bytes"] + sm["b_stage_bytes"] * 0.8) / kib
        fig.add_artist(ConnectionPatch((x, y + 0.5), (st + 0.5, row_y[0] + 1.0), "data", "data", axesA=axl,
                                       axesB=axr, arrowstyle="-|>", mutation_scale=14, lw=2.0, color=rank_color(rank),
                                       connectionstyle="arc3,rad=%s" % ("0.12" if rank == 0 else "-0.1"), zorder=6))
    axr.text(0, -0.2, "the barriers (bytes %d-%d), magnified. full[s]: the leader's\narrive.expect_tx(%d B), then "
             "complete_tx from the copies of BOTH\nCTAs (.cta_group::2 TMA, barrier address mapa(full[s], 0))"
             % (sm["tma_full_bars"], sm["tmem_slot"] + 3, s["pair_stage_bytes"]), fontsize=9.5, va="bottom")
    # the multicast commit
    xd = ns + st + 0.5
    axr.text(ns + 0.2, 1.7, "leader: tcgen05.commit.cta_group::2\n.multicast::cluster, mask 0b%s"
             % format(s["pair_mask"], "b"), fontsize=9, va="center", color="#1a7f37", fontweight="bold",
             bbox=dict(boxstyle="round", fc="white", ec="#1a7f37"))
    axr.add_patch(FancyArrowPatch((xd, 1.35), (xd, 1.0), arrowstyle="-|>", mutation_scale=12, lw=1.8,
                                  color="#1a7f37"))
    axr.add_patch(FancyArrowPatch((xd, 2.05), (xd, row_y[1]), arrowstyle="-|>", mutation_scale=12, lw=1.8,
                                  color="#1a7f37"))
    for a in (axl, axr):
        a.set_ylim(row_y[1] + 1.9, -0.5)
        a.axis("off")
    axl.set_xlim(-14, sm["tma_full_bars"] / kib + 6)
    axr.set_xlim(-0.2, len(cells) + 0.2)
    axl.set_title("(3) Shared memory of both CTAs, identical offsets from the 1024-byte-aligned base:\n"
                  "%d stages of A (%d KiB) and of half of B (%d KiB), then the barriers; %d B with the alignment slack"
                  % (ns, sm["a_stage_bytes"] // 1024, sm["b_stage_bytes"] // 1024, sm["launch_bytes"]),
                  fontsize=12, loc="left")

    handles = [Patch(fc=LEADER_C, alpha=0.6, label="held by rank 0 (leader, even CTA): issues the MMAs"),
               Patch(fc=PEER_C, alpha=0.6, label="held by rank 1 (peer, odd CTA)"),
               Patch(fc="#f2d16b", ec="black", label="tma_full_bar[s] (\"stage full\", leader only)"),
               Patch(fc="#8fd19e", ec="black", label="mma_done_bar[s] (\"stage empty\", both CTAs)"),
               Patch(fc="#c39bd3", ec="black", label="mainloop_done_bar (both CTAs)")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=10.5, frameon=True)
    fig.subplots_adjust(left=0.04, right=0.98, top=0.925, bottom=0.07)
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------
ROUND_COLORS = ["#4c72b0", "#55a868", "#dd8452", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
ACC_COLORS = ["#4c72b0", "#dd8452"]  # accumulator 0 / 1


def draw_schedule(d, path):
    s = d["step06"]
    pm, bn, band = s["pair_m"], s["block_n"], s["band_pair_rows"]
    exs = s["examples"]
    fig = plt.figure(figsize=(20, 16))
    gs = fig.add_gridspec(2, 3, height_ratios=[1.55, 0.6], width_ratios=[1.55, 1.0, 0.42], hspace=0.22, wspace=0.16)
    fig.suptitle("Step 06: the static schedule (the i-th tile of cluster c is c + i x num_clusters) and the banded tile order\n"
                 "from the kernel's own num_clusters_for(), scheduled_tile(), pair_tile_at() (plots/schedule_dump.cpp)",
                 fontsize=15, fontweight="bold", y=0.99)

    def tile_map(ax, ex, color_of, label_of, fontsize, title):
        tm, tn = ex["tiles_m"], ex["tiles_n"]
        for c, walk in enumerate(ex["walk"]):
            for i, t, pr, pc, *_ in walk:
                ax.add_patch(Rectangle((pc, pr), 1, 1, fc=color_of(c, i), ec="white", lw=1.2, alpha=0.85))
                ax.text(pc + 0.5, pr + 0.5, label_of(c, i, t), ha="center", va="center", fontsize=fontsize)
        for b in range(band, tm, band):  # band boundaries
            ax.plot([0, tn], [b, b], color="black", lw=3.5)
        ax.plot([0, tn, tn, 0, 0], [0, 0, tm, tm, 0], color="black", lw=1.5)
        m, n = ex["m"], ex["n"]
        if m < tm * pm:
            ax.plot([0, tn], [m / pm, m / pm], color="#b00000", lw=2, ls=":")
        if n < tn * bn:
            ax.plot([n / bn, n / bn], [0, tm], color="#b00000", lw=2, ls=":")
        ax.set_xlim(-0.05, tn + 0.05)
        ax.set_ylim(tm + 0.05, -0.05)
        ax.set_xticks([j + 0.5 for j in range(tn)])
        ax.set_xticklabels([str(j) for j in range(tn)], fontsize=8.5)
        ax.set_yticks([r + 0.5 for r in range(tm)])
        ax.set_yticklabels([str(r) for r in range(tm)], fontsize=8.5)
        ax.set_xlabel("column tile pair_n (256 columns of C)", fontsize=10.5)
        ax.set_ylabel("pair row pair_m (256 rows of C)", fontsize=10.5)
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=11.5)

    # ---- (1) the B200 case: 4096 x 4096, 148 SMs -> 74 pairs, 256 tiles ------------------------
    ex = exs["b200_4096"]
    ax = fig.add_subplot(gs[0, 0])
    rounds = max(len(w) for w in ex["walk"])
    tile_map(ax, ex, lambda c, i: ROUND_COLORS[i % len(ROUND_COLORS)], lambda c, i, t: "%d" % c, 7.5,
             "(1) M = N = %d on a B200 (%d SMs): %d pairs, %d tiles, %d rounds.\n"
             "Number = the pair (cluster) that computes the tile; colour = its round i.\n"
             "Thick line: band boundary (%d pair rows). Round i = tile numbers %d i .. %d i + %d."
             % (ex["m"], ex["num_sms"], ex["num_clusters"], ex["num_tiles"], rounds, band, ex["num_clusters"],
                ex["num_clusters"], ex["num_clusters"] - 1))
    handles = [Patch(fc=ROUND_COLORS[i], alpha=0.85, label="round %d: tiles %d-%d" %
                     (i, i * ex["num_clusters"], min(ex["num_tiles"], (i + 1) * ex["num_clusters"]) - 1))
               for i in range(rounds)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.05), ncol=4, fontsize=10, frameon=True)

    # ---- (2) uneven: 1000 x 1500 on 10 SMs -> 5 pairs, 24 tiles -------------------------------
    ex = exs["uneven"]
    ax = fig.add_subplot(gs[0, 1])
    counts = [len(w) for w in ex["walk"]]
    tile_map(ax, ex, lambda c, i: ROUND_COLORS[c % len(ROUND_COLORS)],
             lambda c, i, t: "pair %d\n#%d (tile %d)" % (c, i, t), 9.5,
             "(2) M = %d, N = %d, --sim-sms %d: %d pairs, %d tiles.\n"
             "Colour = pair; #i = its i-th tile. Tiles per pair: %s.\n"
             "Dotted red: the end of C (partial tiles)."
             % (ex["m"], ex["n"], ex["num_sms"], ex["num_clusters"], ex["num_tiles"],
                ", ".join(str(x) for x in counts)))

    # ---- (3) a short last band: 2304 x 300 on 7 SMs -> 3 pairs, 18 tiles ---------------------
    ex = exs["short_band"]
    ax = fig.add_subplot(gs[0, 2])
    tile_map(ax, ex, lambda c, i: ROUND_COLORS[c % len(ROUND_COLORS)], lambda c, i, t: "%d: #%d\nt%d" % (c, i, t), 8.5,
             "(3) M = %d, N = %d, --sim-sms %d:\n%d pairs (1 SM idle), %d tiles;\n%d pair rows: bands of %d and %d\n"
             "(label: pair: #i, tile)"
             % (ex["m"], ex["n"], ex["num_sms"], ex["num_clusters"], ex["num_tiles"], ex["tiles_m"], band,
                ex["tiles_m"] - band))

    # ---- (4) the accumulator ping-pong of one pair (schematic durations) -----------------------
    ex = exs["uneven"]
    walk = ex["walk"][0]
    ax = fig.add_subplot(gs[1, :])
    ml, ep, lead, h = 1.0, 0.42, 0.25, 0.8  # schematic: one tile's mainloop, one epilogue, the producer's lead
    y_tma, y_mma, y_epi = 0.0, 1.0, 2.0   # lanes, top to bottom
    for name, y in (("producer (TMA warp), both CTAs", y_tma), ("MMA warp (leader)", y_mma),
                    ("epilogue warps, both CTAs", y_epi)):
        ax.text(-0.05, y + h / 2, name, ha="right", va="center", fontsize=11, fontweight="bold")
    n_acc = s["num_accumulators"]
    for i, t, pr, pc, *_ in walk:
        a = i % n_acc
        x = lead + i * ml
        ax.add_patch(Rectangle((x - lead, y_tma), ml, h, fc="#dddddd", ec="black"))
        ax.text(x - lead + ml / 2, y_tma + h / 2, "tile %d: k-tiles\ninto the smem ring" % t, ha="center",
                va="center", fontsize=9)
        ax.add_patch(Rectangle((x, y_mma), ml, h, fc=ACC_COLORS[a], alpha=0.75, ec="black"))
        ax.text(x + ml / 2, y_mma + h / 2, "tile %d (%d, %d)\n-> accumulator %d\n(TMEM cols %d-%d)"
                % (t, pr, pc, a, a * bn, a * bn + bn - 1), ha="center", va="center", fontsize=9)
        ax.add_patch(Rectangle((x + ml, y_epi), ep, h, fc=ACC_COLORS[a], alpha=0.45, ec="black", hatch="//"))
        ax.text(x + ml + ep / 2, y_epi + h / 2, "tile %d\nfrom\nacc %d" % (t, a), ha="center", va="center",
                fontsize=8.5)
        # tmem_full[a]: the MMA warp's commit -> the epilogues; tmem_empty[a]: the epilogues -> the MMA
        # warp, before it starts tile i + 2 on the same accumulator
        ax.add_patch(FancyArrowPatch((x + ml - 0.03, y_mma + h), (x + ml + 0.03, y_epi), arrowstyle="-|>",
                                     mutation_scale=12, color="#1a7f37", lw=1.8))
        if i + n_acc < len(walk):
            ax.add_patch(FancyArrowPatch((x + ml + ep, y_epi + 0.1), (x + n_acc * ml + 0.03, y_mma + h),
                                         arrowstyle="-|>", mutation_scale=12, color="#b00000", lw=1.5,
                                         connectionstyle="arc3,rad=0.35"))
    end = lead + len(walk) * ml + ep
    ax.text(end + 0.05, y_mma + h / 2, "then the MMA warp waits\nuntil both accumulators\nare released, the "
            "producer\ndrains the ring; cluster\nbarrier, dealloc, exit", fontsize=9.5, va="center")
    ax.set_xlim(-2.3, end + 1.15)
    ax.set_ylim(y_epi + h + 0.1, y_tma - 0.1)
    ax.axis("off")
    ax.set_title("(4) Pair 0 of (2) over time (durations schematic, not measured): the MMA warp fills accumulator i %% 2 "
                 "while the epilogues of both CTAs drain the other one.\ngreen: tmem_full[a] (multicast tcgen05.commit, "
                 "1 arrival, in each CTA); red: tmem_empty[a] (%d arrivals: every epilogue warp of both CTAs, on the "
                 "leader's barrier) lets tile i + 2 reuse accumulator a" % s["tmem_empty_arrivals"], fontsize=11.5)
    fig.subplots_adjust(left=0.04, right=0.99, top=0.925, bottom=0.03)
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------
ATOM_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]   # atom 0..3 of the example
QUARTER_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#8172b3"]  # rows 32q .. 32q + 31 of an atom


def check_nvfp4(s):
    ar, ac, ab = s["atom_rows"], s["atom_columns"], s["atom_bytes"]
    require(ar * ac == ab == 512, "an atom is 128 rows x 4 scales, one byte each")
    offs = {(r, kb): o for r, kb, o in s["blocked"]}
    require(sorted(offs.values()) == list(range(s["sf_bytes"])), "the scales fill the blocked array densely")
    atoms = {(rb, cb): o for rb, cb, o in s["atoms"]}
    require(sorted(atoms.values()) == list(range(0, s["sf_bytes"], ab)), "atoms tile the array")
    for (r, kb), o in offs.items():
        base = atoms[(r // ar, kb // ac)]
        require(base <= o < base + ab, "(row, kb) lies in its atom")
        require(o - base == 16 * (r % 32) + 4 * ((r % ar) // 32) + kb % ac, "the in-atom formula of the docs")
        require(r // ar == 0 or kb // ac != 0 or base >= 2 * ab, "atoms run K-first")
    at = {o: (r, kb) for (r, kb), o in offs.items() if r < ar and kb < ac}  # atom 0
    cells = {}
    for lane, col, byte, w, r, j, src in s["tmem"]:
        cells[(lane, col, byte)] = cells.get((lane, col, byte), 0) + 1
        require(lane // 32 == w and lane % 32 == r, "row r goes to lane r of every quarter")
        row, kb = at[src]
        require(row == 32 * col + lane % 32 and kb == byte,
                "the MMA's layout: scale kb of row r in lane r %% 32 (+32w), column r / 32, byte kb")
    require(len(cells) == 128 * 4 * 4 and all(v == 1 for v in cells.values()),
            "the copy writes every byte of 128 lanes x 4 columns exactly once")


def draw_nvfp4_blocked(d, path):
    s = d["nvfp4"]
    rows, ncol, ar, ac, ab = s["rows"], s["sf_columns"], s["atom_rows"], s["atom_columns"], s["atom_bytes"]
    offs = {(r, kb): o for r, kb, o in s["blocked"]}
    atom_of = lambda o: o // ab  # noqa: E731
    fig = plt.figure(figsize=(20, 15))
    gs = fig.add_gridspec(1, 3, width_ratios=[1.1, 0.3, 2.3], wspace=0.55)
    fig.suptitle("Step 07: where each UE4M3 scale lands in the 128 x 4 blocked layout (%d rows, K = %d: %d scale "
                 "columns, %d bytes)\noffsets from tcg::sf_blocked_offset(row, kb, K) of common/nvfp4_layout.h "
                 "(plots/nvfp4_dump.cpp)" % (rows, s["k"], ncol, s["sf_bytes"]), fontsize=15, fontweight="bold",
                 y=0.985)
    # ---- (1) the logical matrix of scales, coloured by atom ----------------------------------
    ax = fig.add_subplot(gs[0, 0])
    for (r, kb), o in offs.items():
        q = (r % ar) // 32
        ax.add_patch(Rectangle((kb, r), 1, 1, fc=ATOM_COLORS[atom_of(o)], alpha=0.45 + 0.15 * q, ec="none"))
    for x in range(ncol + 1):
        ax.plot([x, x], [0, rows], color="white" if x % ac else "black", lw=0.6 if x % ac else 2.0)
    for y in range(0, rows + 1, 32):
        ax.plot([0, ncol], [y, y], color="black", lw=2.0 if y % ar == 0 else 0.6)
    for (rb, cb, o) in s["atoms"]:
        ax.text(cb * ac + ac / 2, rb * ar + ar / 2, "atom %d\nbytes\n%d-%d" % (o // ab, o, o + ab - 1),
                ha="center", va="center", fontsize=11, fontweight="bold",
                bbox=dict(boxstyle="round", fc="white", ec="none", alpha=0.85))
    picks = [(0, 0), (0, 3), (0, 4), (1, 0), (32, 0), (33, 1), (96, 3), (127, 3), (130, 2), (255, 7)]
    ty = -10.0
    for r, kb in picks:
        ty = max(r + 0.5, ty + 17)
        ax.annotate("r%d kb%d: byte %d" % (r, kb, offs[(r, kb)]), xy=(kb + 0.5, r + 0.5),
                    xytext=(ncol + 0.5, min(ty, rows - 2)), fontsize=10.5, va="center", annotation_clip=False,
                    arrowprops=dict(arrowstyle="-|>", color="black", lw=1.0, shrinkA=0, shrinkB=0))
        ax.plot(kb + 0.5, r + 0.5, "o", ms=4, color="black")
    ax.set_xlim(0, ncol)
    ax.set_ylim(rows, 0)
    ax.set_xticks([kb + 0.5 for kb in range(ncol)])
    ax.set_xticklabels([str(kb) for kb in range(ncol)])
    ax.set_yticks(range(0, rows + 1, 32))
    ax.set_xlabel("scale column kb (K elements 16 kb .. 16 kb + 15)", fontsize=11)
    ax.set_ylabel("row of A (or B)", fontsize=11)
    ax.set_title("(1) the %d x %d scales, coloured by atom\n(shade: row quarter (r %% 128) / 32)" % (rows, ncol),
                 fontsize=12, loc="left")
    # ---- (2) the byte array: atoms run K-first ------------------------------------------------
    ax = fig.add_subplot(gs[0, 1])
    for (rb, cb, o) in s["atoms"]:
        ax.add_patch(Rectangle((0, o), 1, ab, fc=ATOM_COLORS[o // ab], alpha=0.7, ec="black", lw=1.5))
        ax.text(0.5, o + ab / 2, "atom %d\nrows %d-%d\nkb %d-%d" % (o // ab, rb * ar, rb * ar + ar - 1, cb * ac,
                                                                     cb * ac + ac - 1),
                ha="center", va="center", fontsize=10.5, fontweight="bold")
    ax.set_xlim(0, 1)
    ax.set_ylim(s["sf_bytes"], 0)
    ax.set_xticks([])
    ax.set_yticks(range(0, s["sf_bytes"] + 1, ab))
    ax.set_ylabel("byte offset in the scale array", fontsize=11)
    ax.set_title("(2) memory:\natoms K-first", fontsize=12, loc="left")
    # ---- (3) atom 0 byte by byte: 32 lines of 16 bytes ----------------------------------------
    ax = fig.add_subplot(gs[0, 2])
    at = {o: (r, kb) for (r, kb), o in offs.items() if o < ab}
    for o, (r, kb) in at.items():
        line, b = divmod(o, 16)
        q = r // 32
        ax.add_patch(Rectangle((b, line), 1, 1, fc=QUARTER_COLORS[q], alpha=0.35 + 0.12 * kb, ec="white", lw=0.8))
        ax.text(b + 0.5, line + 0.5, "r%d k%d" % (r, kb), ha="center", va="center", fontsize=7.3)
    for x in range(0, 17, 4):
        ax.plot([x, x], [0, ab // 16], color="black", lw=1.8)
    ax.set_xlim(0, 16)
    ax.set_ylim(ab // 16, 0)
    ax.set_xticks([b + 0.5 for b in range(16)])
    ax.set_xticklabels([str(b) for b in range(16)])
    ax.set_yticks([l + 0.5 for l in range(ab // 16)])
    ax.set_yticklabels(["%d (+%d)" % (l, 16 * l) for l in range(ab // 16)], fontsize=8)
    ax.set_xlabel("byte within the 16-byte line", fontsize=11)
    ax.set_ylabel("line l (byte offset in the atom)", fontsize=11)
    ax.set_title("(3) atom 0 (bytes 0-511), one cell per byte: rK kS = the scale of row R, scale column S.\n"
                 "offset = 16 (r % 32) + 4 ((r % 128) / 32) + kb % 4: line l holds rows l, l+32, l+64, l+96,\n"
                 "4 scales each; exactly the 32 x 16-byte source of one tcgen05.cp.32x128b.warpx4",
                 fontsize=12, loc="left")
    handles = [Patch(fc=QUARTER_COLORS[q], alpha=0.6, label="rows %d-%d of the atom" % (32 * q, 32 * q + 31))
               for q in range(4)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.04), ncol=2, fontsize=10)
    fig.subplots_adjust(left=0.05, right=0.98, top=0.9, bottom=0.07)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def draw_nvfp4_tmem(d, path):
    s = d["nvfp4"]
    ab = s["atom_bytes"]
    at = {o: (r, kb) for r, kb, o in s["blocked"] if o < ab}
    fig = plt.figure(figsize=(17, 30))
    ax = fig.add_axes([0.05, 0.05, 0.92, 0.88])
    fig.suptitle("Step 07: one 512-byte scale atom in TMEM after tcgen05.cp.32x128b.warpx4 (descriptor %s: "
                 "no swizzle, SBO %d B)\nbyte j of source line l -> lane l + 32 w (w = 0..3), column C0 + j / 4, "
                 "byte j %% 4: every 32-lane quarter holds the same copy\n(mapping restated in "
                 "plots/nvfp4_dump.cpp from the emulator's run_cp(); offsets from tcg::sf_blocked_offset())"
                 % (s["cp_desc"], s["cp_sbo"]), fontsize=14, fontweight="bold", y=0.995)
    for lane, col, byte, w, r, j, src in s["tmem"]:
        row, kb = at[src]
        x = 4 * col + byte
        ax.add_patch(Rectangle((x, lane), 1, 1, fc=QUARTER_COLORS[col], alpha=0.3 + 0.13 * kb if w == 0 else
                               0.12 + 0.07 * kb, ec="white", lw=0.5))
        ax.text(x + 0.5, lane + 0.5, "r%d k%d" % (row, kb), ha="center", va="center", fontsize=6.2,
                color="black" if w == 0 else "#555555")
    for x in range(0, 17, 4):
        ax.plot([x, x], [0, 128], color="black", lw=2.0)
    for y in range(0, 129, 32):
        ax.plot([-5, 16], [y, y], color="black", lw=2.5, clip_on=False)
    for w in range(4):
        ax.text(-0.4, 32 * w + 16, "lane quarter %d\nlanes %d-%d\n%s" % (
            w, 32 * w, 32 * w + 31, "(warp %d reads it)\n" % w + ("original" if w == 0 else "replica of quarter 0")),
            ha="right", va="center", fontsize=12, fontweight="bold")
    ax.set_xlim(-5, 16)
    ax.set_ylim(128, 0)
    ax.set_xticks([x + 0.5 for x in range(16)])
    ax.set_xticklabels(["C0+%d\nbyte %d" % (x // 4, x % 4) for x in range(16)], fontsize=8.5)
    ax.xaxis.tick_top()
    ax.set_yticks([y + 0.5 for y in range(0, 128, 4)])
    ax.set_yticklabels([str(y) for y in range(0, 128, 4)], fontsize=8)
    ax.tick_params(axis="y", pad=1)
    for c in range(4):
        ax.text(4 * c + 2, 129.5, "column C0+%d:\nrows %d-%d\n(rK kS: scale S of row R)" % (c, 32 * c, 32 * c + 31),
                ha="center", va="top", fontsize=11, color=QUARTER_COLORS[c], fontweight="bold")
    ax.text(-4.9, 129.5, "the MMA reads the 4 scales of row r\nin column C0 + r / 32, lane r % 32\n"
            "(of the quarter of the warp's lanes);\none atom = 4 TMEM columns", fontsize=11, va="top")
    for sp in ax.spines.values():
        sp.set_visible(False)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "img"), help="where the PNGs go [docs/img]")
    ap.add_argument("--dump-json", help="also save the tool's JSON here")
    ap.add_argument("--only", help="draw only the pictures whose file name contains this text")
    args = ap.parse_args()

    d = run_tool()
    check_dump(d)
    if args.dump_json:
        with open(args.dump_json, "w") as f:
            json.dump(d, f, indent=1)
    os.makedirs(args.out_dir, exist_ok=True)
    pictures = [("core_matrices_noswizzle.png", draw_noswizzle), ("swizzle128_atom.png", draw_swizzle),
                ("2sm_data_split.png", draw_2sm), ("persistent_schedule.png", draw_schedule),
                ("nvfp4_sf_blocked.png", draw_nvfp4_blocked), ("nvfp4_sf_tmem.png", draw_nvfp4_tmem)]
    for name, draw in pictures:
        if args.only and args.only not in name:
            continue
        out = os.path.join(args.out_dir, name)
        draw(d, out)
        print("wrote", os.path.relpath(out, ROOT) if os.path.abspath(out).startswith(ROOT + os.sep) else out)


if __name__ == "__main__":
    main()
