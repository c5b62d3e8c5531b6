#!/usr/bin/env bash
# make_plots.sh — `make plots`: the charts, from the committed CSV files and the model's traces.
#
#   progression.png         BF16 steps: measured (results/<gpu>.csv), model (results/model_b200.csv),
#                           published (results/published_b200.csv); TFLOPS and % of cuBLAS
#   progression_nvfp4.png   steps 07 and 10-13 at the competition shapes (model, with ranges) beside the
#                           published kernels (results/validation_b200.csv), speed of light, cuBLASLt
#   timeline_stepNN.png     steps 01-15: `./stepNN --predict --trace FILE` (the B200 timing model's
#                           per-warp timeline, CTAs 0 and 1) drawn by plots/timeline.py, at
#                           M = N = K = 1024 (one wave, 16 k-tiles of 64: every warp's loop fits
#                           on one page); steps 06, 08, 09 and 14 at 4096 x 4096 x 512, so that each CTA pair
#                           computes several tiles and the double-buffered accumulator shows;
#                           step 07 at the smallest NVFP4 competition shape, 128 x 7168 x 2048;
#                           step 10 at 128 x 4096 x 7168 (3 splits), CTAs 0, 32, 64: tile 0's three splits.
#                           steps 11 and 12 at the same shape: step 11 CTAs 0 and 64 (tile 0's two splits,
#                           BLOCK_N 64), step 12 CTAs 0 and 1 (tile 0's cluster of two).
#                           step 16 (groups, not --m): three groups of M 80, 176 and 128 at N = 1024,
#                           K = 2048 on 4 SMs, CTAs 0 and 1, each walking tiles of several groups.
#   timeline_step00_h100.png  step 00's GPU trace, results/traces/step00_h100.json (%globaltimer
#                           on an H100, measured; the first 12 us of CTAs 0 and 1).
#
# Usage: plots/make_plots.sh [options]      (make plots builds the steps first)
#   --out DIR        where the PNGs go [docs/img]
#   --results DIR    the CSV files [results]
#   --bin-dir DIR    the stepNN binaries [repository root]
#   --keep-traces DIR  also keep the trace JSON files there
#   --no-timelines   only the two charts
# Exit codes: 0 done, 1 a script or a traced run failed, 2 usage error.
set -u
cd "$(dirname "$0")/.." || exit 2
me=plots/make_plots.sh

out=docs/img results=results bdir=. keep="" timelines=1
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?}; shift ;;
    --out=*) out=${1#*=} ;;
    --results) results=${2:?}; shift ;;
    --results=*) results=${1#*=} ;;
    --bin-dir) bdir=${2:?}; shift ;;
    --bin-dir=*) bdir=${1#*=} ;;
    --keep-traces) keep=${2:?}; shift ;;
    --keep-traces=*) keep=${1#*=} ;;
    --no-timelines) timelines=0 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "$me: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
python3 -c "import matplotlib" 2>/dev/null || {
  echo "$me: python3 with matplotlib is needed (pip install matplotlib)" >&2; exit 2; }
mkdir -p "$out" || exit 2

fail=0
python3 plots/progression.py --results "$results" --out "$out/progression.png" || fail=1
python3 plots/nvfp4_chart.py --results "$results" --out "$out/progression_nvfp4.png" || fail=1

trace_ctas() {  # the CTAs of step $1's timeline
  case $1 in
    10) echo "0,32,64" ;;
    11) echo "0,64" ;;  # BLOCK_N 64, S = 2: tile 0's two splits
    *) echo "0,1" ;;  # step 12: the cluster of tile 0 (S = 2); step 13: two of the 4 CTAs taking turns with A
  esac
}

trace_shape() {  # the shape of step $1's timeline (see the top of this file)
  case $1 in
    06|08|09|14) echo "4096 4096 512" ;;  # step 14: CTAs 0 and 1 are the first pair of a cluster
    07|13) echo "128 7168 2048" ;;  # step 13: MC = 4, BLOCK_N 64, S = 1
    10|11|12) echo "128 4096 7168" ;;  # step 10: S = 3, CTAs 0, 32, 64 are tile 0's three splits
    15) echo "256 3072 4096" ;;  # the dual GEMM's third ranked shape: S = 2, CTAs 0 and 1 are tile 0's cluster
    16) echo "0 1024 2048" ;;  # N and K of the grouped GEMM's timeline (its groups: below)
    *) echo "1024 1024 1024" ;;
  esac
}

gpu_trace=$results/traces/step00_h100.json
if [ "$timelines" = 1 ] && [ -f "$gpu_trace" ]; then
  # The title from the trace's own metadata (device, shape, clock), not written out here.
  python3 plots/timeline.py "$gpu_trace" --out "$out/timeline_step00_h100.png" --ctas 2 --tmax 12 || fail=1
fi
if [ "$timelines" = 1 ]; then
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  for s in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16; do
    bin=$bdir/step$s
    [ -x "$bin" ] || { echo "$me: $bin not built (make all)" >&2; fail=1; continue; }
    set -- $(trace_shape "$s")
    json=$tmp/step$s.json
    ctas=$(trace_ctas "$s")
    shape_args=(--m "$1" --n "$2" --k "$3")
    # The grouped GEMM takes its groups' M, not --m.
    [ "$s" = 16 ] && shape_args=(--groups 80,176,128 --n "$2" --k "$3" --sim-sms 4) && set -- "80,176,128" "$2" "$3"
    "$bin" --predict --trace "$json" --trace-ctas "$ctas" "${shape_args[@]}" \
      >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" != 0 ] || [ ! -s "$json" ]; then
      cat "$tmp/out" "$tmp/err" >&2
      echo "$me: step$s --predict --trace failed (exit $rc) or wrote no trace" >&2
      fail=1; continue
    fi
    [ -z "$keep" ] || { mkdir -p "$keep" && cp "$json" "$keep/"; }
    python3 plots/timeline.py "$json" --out "$out/timeline_step$s.png" --ctas "$(tr -cd , <<<"$ctas" | wc -c | awk '{print $1 + 1}')" \
      --title "step $s, B200 timing model (a prediction, not a measurement): M=$1 N=$2 K=$3, CTAs ${ctas//,/, }" \
      || fail=1
  done
fi
exit $fail
