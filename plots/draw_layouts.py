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
# The work is split by concern: layout_data.py builds, runs and checks the dump tools;
# layout_figures_operands.py and layout_figures_steps.py draw the pictures from their output.
import argparse
import json
import os

from layout_data import ROOT, check_dump, run_tool
from layout_figures_operands import draw_noswizzle, draw_nvfp4_blocked, draw_nvfp4_tmem, draw_swizzle
from layout_figures_steps import draw_2sm, draw_schedule


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
