#!/usr/bin/env python3
"""layout_data.py - the data behind the layout pictures (plots/draw_layouts.py draws them).

Builds the dump tools (plots/layout_dump.cpp, plots/schedule_dump.cpp, plots/nvfp4_dump.cpp) into
build/ when they are missing or older than their sources, runs them, merges their JSON, and checks
that what they print has the properties the pictures state in words (run_tool, check_dump). Every
address comes from the code the kernels, the emulator and the tests use; nothing is restated here.
"""
import json
import os
import shutil
import subprocess
import sys

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
