#!/usr/bin/env python3
"""layout_figures_steps.py - the pictures of plots/draw_layouts.py that show how a step divides
its work: step 05's CTA pair and step 06's persistent schedule.

  draw_2sm       docs/img/2sm_data_split.png       which CTA of a pair holds which rows of A, B, C;
                                                   the CTA -> tile map; both CTAs' shared memory
  draw_schedule  docs/img/persistent_schedule.png  which pair computes which tile in which order,
                                                   and the accumulator ping-pong

Each takes the checked dump of layout_data.run_tool() and the PNG's path.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import ConnectionPatch, FancyArrowPatch, Patch, Rectangle  # noqa: E402

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

