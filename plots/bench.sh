#!/usr/bin/env bash
# bench.sh — `make bench`: build, then run every step this GPU can run at the standard shapes and
# append one CSV row per run to results/<gpu-slug>.csv. Each binary times cuBLAS (BF16 steps) or
# cuBLASLt (NVFP4 step) itself in the same run, so every row carries its own reference.
#
#   BF16 steps (00-06, 08, 09, 14): M = N = K = 4096, inputs random and integer
#   NVFP4 steps (07, 10-13): the competition shapes listed in results/published_b200.csv
#                       (128x7168x16384, 128x4096x7168, 128x7168x2048), inputs random
#   step 15 (dual GEMM): the four ranked shapes of results/published_b200_dual_gemm.csv
#                       (plots/dual_gemm.py shapes), inputs competition
#
# Every run passes --gpu: a binary that cannot run on this GPU exits 3 (instead of falling back
# to the emulator) and is skipped with a note. No GPU at all: one line on stderr, exit 2.
# The slug comes from the GPU's name: "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA B200" -> b200,
# "NVIDIA B300 SXM6 AC" -> b300, "NVIDIA GB300" -> gb300, "NVIDIA GeForce RTX 4090" -> rtx_4090:
# the harness's rule (common/harness/capability.cpp, gpu_slug), which also names `make
# gpu-check`'s results/gpu_check_<slug>.csv and `make calibrate`'s results/micro_<slug>.csv. Each
# row names the GPU in full (column gpu), so the charts keep one GPU's rows together.
#
# Usage: plots/bench.sh [options]
#   --bin-dir DIR   run the binaries in DIR (stepNN) and do not build
#   --no-build      run the binaries at the repository root without running make first
#   --out FILE      append to FILE instead of results/<gpu-slug>.csv
#   --steps LIST    only these steps, e.g. "00 07" (default: every stepNN binary)
#   --iters N       passed to each binary (at least N timed launches; default: the binary's)
#   --no-integer    BF16 steps: random inputs only
#   --dry-run       print the commands, run nothing (no GPU needed)
#   --slug NAME     print the file-name slug of GPU name NAME and exit (tests/checks/check_family.sh)
# Exit codes: 0 every run that could run passed, 1 a run failed (wrong result, CUDA error),
# 2 usage error or no GPU.
set -u
cd "$(dirname "$0")/.." || exit 2
me=plots/bench.sh

bin_dir="" build=1 out="" steps="" iters="" integer=1 dry=0 slug_of=unset
while [ $# -gt 0 ]; do
  case $1 in
    --bin-dir) bin_dir=${2:?}; build=0; shift ;;
    --bin-dir=*) bin_dir=${1#*=}; build=0 ;;
    --no-build) build=0 ;;
    --out) out=${2:?}; shift ;;
    --out=*) out=${1#*=} ;;
    --steps) steps=${2:?}; shift ;;
    --steps=*) steps=${1#*=} ;;
    --iters) iters=${2:?}; shift ;;
    --iters=*) iters=${1#*=} ;;
    --no-integer) integer=0 ;;
    --dry-run) dry=1 ;;
    --slug) slug_of=${2?}; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "$me: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -z "$iters" ] || [[ $iters =~ ^[1-9][0-9]*$ ]] || { echo "$me: --iters needs a positive integer" >&2; exit 2; }

# ---- the GPU (the first one CUDA will see: the harness runs on the first capable device)
gpu_slug() {  # "NVIDIA H100 80GB HBM3" -> h100
  local w out=""
  for w in $(echo "$1" | tr 'A-Z' 'a-z'); do
    case $w in
      nvidia|geforce|tesla|quadro) continue ;;
      [0-9]*gb|hbm*|pcie|sxm*|nvl|mig*|*-*gb) w=${w%%-*}; [ -n "$out" ] && break ;;
    esac
    w=${w%%-*}; w=$(echo "$w" | tr -cd 'a-z0-9')
    [ -n "$w" ] && out=${out:+${out}_}$w
    case $w in *[0-9]*) break ;; esac  # a model number (h100, b200, 4090): done
  done
  echo "${out:-gpu}"
}

[ "$slug_of" = unset ] || { gpu_slug "$slug_of"; exit 0; }

gpu_name=""
if [ "$dry" = 0 ]; then
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "$me: no GPU here (nvidia-smi not found); make bench needs an NVIDIA GPU (make predict runs the B200 model without one)" >&2
    exit 2
  fi
  dev=${CUDA_VISIBLE_DEVICES:-0}; dev=${dev%%,*}
  [[ $dev =~ ^[0-9]+$ ]] || dev=0
  gpu_name=$(nvidia-smi -i "$dev" --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  if [ -z "$gpu_name" ]; then
    echo "$me: no GPU here (nvidia-smi lists none); make bench needs an NVIDIA GPU (make predict runs the B200 model without one)" >&2
    exit 2
  fi
  driver=$(nvidia-smi -i "$dev" --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
else
  gpu_name="NVIDIA (dry run)" driver="?"
fi
slug=$(gpu_slug "$gpu_name")
[ -n "$out" ] || out=results/$slug.csv

# ---- build
if [ "$build" = 1 ] && [ "$dry" = 0 ]; then
  echo "== make all"
  make --no-print-directory -j"$(nproc 2>/dev/null || echo 4)" all >/dev/null || { echo "$me: make all failed" >&2; exit 1; }
fi
bdir=${bin_dir:-.}
[ -d "$bdir" ] || { echo "$me: --bin-dir $bdir: no such directory" >&2; exit 2; }
if [ -z "$steps" ]; then
  for b in "$bdir"/step[0-9][0-9]; do [ -x "$b" ] && steps="$steps ${b##*/step}"; done
fi
[ -n "${steps// /}" ] || { echo "$me: no step binaries in $bdir (run make all)" >&2; exit 2; }

# Steps 07 and 10-13's shapes: the NVFP4 competition shapes of results/published_b200.csv.
mapfile -t nvfp4_shapes < <(python3 plots/results_io.py nvfp4-shapes) && [ ${#nvfp4_shapes[@]} -gt 0 ] ||
  { echo "$me: no NVFP4 shapes in results/published_b200.csv" >&2; exit 2; }
nvfp4_steps=" $(python3 plots/results_io.py nvfp4-steps | tr '\n' ' ')" || exit 2  # the steps run at those shapes

# Step 15's: the dual GEMM competition's ranked shapes.
mapfile -t dual_shapes < <(python3 plots/dual_gemm.py shapes) && [ ${#dual_shapes[@]} -gt 0 ] ||
  { echo "$me: no shapes in results/published_b200_dual_gemm.csv" >&2; exit 2; }

echo "== bench on $gpu_name (driver $driver) -> $out"
ran=0 skipped=() failed=()
for s in $steps; do
  s=$(printf '%02d' "$((10#$s))")
  bin=$bdir/step$s
  [ -x "$bin" ] || { echo "$me: $bin: not built" >&2; failed+=("step$s (no binary)"); continue; }
  if [ "$s" = 15 ]; then  # the dual GEMM
    runs=()
    for sh in "${dual_shapes[@]}"; do runs+=("$sh competition"); done
  elif [[ $nvfp4_steps == *" $s "* ]]; then  # results_io.py NVFP4_STEPS
    runs=()
    for sh in "${nvfp4_shapes[@]}"; do runs+=("$sh random"); done
  else
    runs=("4096 4096 4096 random")
    [ "$integer" = 1 ] && runs+=("4096 4096 4096 integer")
  fi
  for r in "${runs[@]}"; do
    set -- $r
    cmd=("$bin" --gpu --m "$1" --n "$2" --k "$3" --inputs "$4" --csv "$out")
    [ -n "$iters" ] && cmd+=(--iters "$iters")
    echo "-- ${cmd[*]}"
    [ "$dry" = 1 ] && continue
    errf=$(mktemp)
    "${cmd[@]}" 2>"$errf"
    rc=$?
    if [ "$rc" = 3 ]; then
      echo "skip step$s: cannot run on this GPU: $(tail -1 "$errf")"
      skipped+=("step$s"); rm -f "$errf"; break  # the other shapes of this step cannot run either
    fi
    cat "$errf" >&2; rm -f "$errf"
    if [ "$rc" = 0 ]; then ran=$((ran + 1)); else failed+=("step$s $1x$2x$3 $4 (exit $rc)"); fi
  done
done

[ "$dry" = 1 ] && exit 0
echo "== bench: $ran run(s) appended to $out; skipped (cannot run on $gpu_name): ${skipped[*]:-none}; failed: ${failed[*]:-none}"
[ ${#failed[@]} = 0 ] || exit 1
[ "$ran" -gt 0 ] || echo "$me: no step could run on $gpu_name" >&2
exit 0
