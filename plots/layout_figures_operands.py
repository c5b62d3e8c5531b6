#!/usr/bin/env python3
"""layout_figures_operands.py - the operand-layout pictures of plots/draw_layouts.py: where the
bytes of an operand lie in shared memory and TMEM.

  draw_noswizzle      docs/img/core_matrices_noswizzle.png  step 01's no-swizzle K-major tile
  draw_swizzle        docs/img/swizzle128_atom.png          one 128B-swizzled atom, what each K step reads
  draw_nvfp4_blocked  docs/img/nvfp4_sf_blocked.png         step 07's scales in the 128x4 blocked layout
  draw_nvfp4_tmem     docs/img/nvfp4_sf_tmem.png            one scale atom in TMEM after tcgen05.cp

Each takes the checked dump of layout_data.run_tool() and the PNG's path.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle  # noqa: E402

# Chunk / k-group colours: tab20 comes in (dark, light) pairs of one hue, so logical 16-byte
# chunks 2j and 2j+1 - the two halves that MMA K step j reads - share a hue.
TAB20 = plt.get_cmap("tab20").colors


def chunk_color(c):
    return TAB20[c % 20]


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



ATOM_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]   # atom 0..3 of the example
QUARTER_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#8172b3"]  # rows 32q .. 32q + 31 of an atom


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

