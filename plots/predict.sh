#!/usr/bin/env bash
# predict.sh — `make predict`: the emulator's B200 timing model for every tcgen05 step, then the
# page that sets its predictions beside the published B200 figures. No GPU needed.
#
#   1. ./stepNN --predict --csv ... for steps 01-06, 08, 09, 14 at M = N = K = 4096 and steps 07, 10-13 at the three
#      NVFP4 competition shapes listed in results/published_b200.csv; each prints
#      "predicted B200: <X> TFLOPS" and its range ("range: B200 LO - HI TFLOPS", written to the
#      CSV's last two columns, tflops_low and tflops_high) and appends a row whose gpu column names the model. The rows
#      go to a temporary file that REPLACES results/model_b200.csv only when every run passed
#      (a failed run leaves the old file as it was).
#   2. ./step01 --model-params: the model's parameter table (Markdown), for the page.
#   2b. plots/predict_sweeps.sh: the sweeps the step pages quote (step 08's K sweep, 8192^3 for
#      steps 06/08/09, step 10's split counts, the NVFP4 levers of steps 10-13 with their ranges)
#      -> results/model_b200_sweeps.csv
#   2c. plots/nvfp4_validation.py run: the published NVFP4 kernels and the BF16 ladder against the
#      model -> results/validation_b200.csv (its BF16 rows from the new model_b200.csv)
#   2d. plots/dual_gemm.py predict: step 15 at the dual GEMM's four ranked shapes
#      -> results/model_b200_dual_gemm.csv (docs/15_nvfp4_dual_gemm.md's table)
#   2e. plots/grouped_gemm.py predict: step 16 at the grouped GEMM's four ranked cases
#      -> results/model_b200_grouped.csv (docs/16_nvfp4_grouped_gemm.md's table)
#   3. plots/performance_doc.py writes docs/performance.md from results/model_b200.csv,
#      results/published_b200.csv and that table.
#
# Usage: plots/predict.sh [options]          (make predict builds the steps first)
#   --bin-dir DIR   the stepNN binaries [repository root]
#   --csv FILE      the model rows [results/model_b200.csv]
#   --doc FILE      the page [docs/performance.md]
#   --steps LIST    only these steps, e.g. "01 07" (the CSV keeps the other steps' rows)
#   --doc-only      skip step 1: rewrite the page from the CSV that is there
# Environment: PREDICT_JOBS   runs at once, here and in predict_sweeps.sh [the CPU count]
# Exit codes: 0 done, 1 a run failed, 2 usage error or a binary without --predict.
set -u
cd "$(dirname "$0")/.." || exit 2
me=plots/predict.sh

bdir=. csv=results/model_b200.csv doc=docs/performance.md steps="01 02 03 04 05 06 07 08 09 10 11 12 13 14" run=1 only=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin-dir) bdir=${2:?}; shift ;;
    --bin-dir=*) bdir=${1#*=} ;;
    --csv) csv=${2:?}; shift ;;
    --csv=*) csv=${1#*=} ;;
    --doc) doc=${2:?}; shift ;;
    --doc=*) doc=${1#*=} ;;
    --steps) steps=${2:?}; only=1; shift ;;
    --steps=*) steps=${1#*=}; only=1 ;;
    --doc-only) run=0 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "$me: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v python3 >/dev/null || { echo "$me: python3 not found" >&2; exit 2; }

tmpdir=$(mktemp -d) || exit 2
trap 'rm -rf "$tmpdir"' EXIT

# Steps 07 and 10-13's shapes: the NVFP4 competition shapes of results/published_b200.csv.
mapfile -t nvfp4_shapes < <(python3 plots/results_io.py nvfp4-shapes) && [ ${#nvfp4_shapes[@]} -gt 0 ] ||
  { echo "$me: no NVFP4 shapes in results/published_b200.csv" >&2; exit 2; }
nvfp4_steps=" $(python3 plots/results_io.py nvfp4-steps | tr '\n' ' ')" || exit 2  # the steps run at those shapes

if [ "$run" = 1 ]; then
  tmpcsv=$tmpdir/model.csv
  failed=()
  # The runs go PREDICT_JOBS at a time (default: the CPU count), each into its own files; their
  # rows and lines are then taken in the order of the list, so the CSV is the same as one at a time.
  runs=()
  for s in $steps; do
    s=$(printf '%02d' "$((10#$s))")
    bin=$bdir/step$s
    [ -x "$bin" ] || { echo "$me: $bin: not built (run make all, or make predict)" >&2; exit 2; }
    if [[ $nvfp4_steps == *" $s "* ]]; then  # results_io.py NVFP4_STEPS
      shapes=("${nvfp4_shapes[@]}")
    else
      shapes=("4096 4096 4096")
    fi
    for sh in "${shapes[@]}"; do runs+=("$s $sh"); done
  done
  jobs_max=${PREDICT_JOBS:-$(nproc 2>/dev/null || echo 1)}
  [[ $jobs_max =~ ^[1-9][0-9]*$ ]] || { echo "$me: PREDICT_JOBS must be a positive integer, not '$jobs_max'" >&2; exit 2; }
  for i in "${!runs[@]}"; do
    set -- ${runs[$i]}
    cmd=("$bdir/step$1" --predict --m "$2" --n "$3" --k "$4" --csv "$tmpdir/csv.$i")
    echo "-- ${cmd[*]}"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    { "${cmd[@]}" >"$tmpdir/out.$i" 2>"$tmpdir/err.$i"; echo $? >"$tmpdir/rc.$i"; } &
  done
  wait
  for i in "${!runs[@]}"; do
    set -- ${runs[$i]}
    s=$1
    shift
    rc=$(cat "$tmpdir/rc.$i" 2>/dev/null || echo "?")
    line=$(grep -m1 '^predicted B200:' "$tmpdir/out.$i")
    if [ "$rc" != 0 ] || [ -z "$line" ]; then
      cat "$tmpdir/out.$i"; cat "$tmpdir/err.$i" >&2
      why="exit $rc"; [ -n "$line" ] || why="$why, no 'predicted B200' line"
      failed+=("step$s ${1}x${2}x${3} ($why)")
      continue
    fi
    # One header, then every run's row in the list's order.
    if [ -s "$tmpcsv" ]; then tail -n +2 "$tmpdir/csv.$i" >>"$tmpcsv"; else cat "$tmpdir/csv.$i" >"$tmpcsv"; fi
    echo "   step$s ${1}x${2}x${3}: $line"
    # The range (--predict's "range:" line): low and high TFLOPS into the CSV's range columns.
    rline=$(grep -m1 '^range:' "$tmpdir/out.$i")
    [ -n "$rline" ] && echo "   step$s ${1}x${2}x${3}: $rline" &&
      sed -E 's/^range: +B200 ([0-9.]+) - ([0-9.]+) TFLOPS.*/\1 \2/' <<<"$rline" |
      { read -r lo hi; echo "$((10#$s)) $1 $2 $3 $lo $hi" >>"$tmpdir/ranges"; }
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "$me: failed: ${failed[*]}; $csv left as it was" >&2
    exit 1
  fi
  touch "$tmpdir/ranges"
  python3 plots/results_io.py add-ranges "$tmpcsv" "$tmpdir/ranges" || { echo "$me: cannot add the ranges" >&2; exit 1; }
  # --steps: the other steps' rows of the old file stay (the step is the first column).
  if [ -n "$only" ] && [ -s "$csv" ]; then
    keep=" $(for s in $steps; do printf '%d ' "$((10#$s))"; done)"
    { cat "$tmpcsv"; awk -F, -v keep="$keep" 'NR > 1 && index(keep, " " $1 " ") == 0' "$csv"; } >"$tmpdir/merged.csv" &&
      mv "$tmpdir/merged.csv" "$tmpcsv"
  fi
  mkdir -p "$(dirname "$csv")" && cp "$tmpcsv" "$csv.tmp" && mv "$csv.tmp" "$csv" || {
    echo "$me: cannot write $csv" >&2; exit 1; }
  echo "== wrote $csv ($(($(wc -l <"$csv") - 1)) rows)"
fi

# The sweeps the step pages quote (plots/predict_sweeps.sh: results/model_b200_sweeps.csv), with a
# full run only (not --steps or --doc-only).
if [ "$run" = 1 ] && [ -z "$only" ]; then
  bash plots/predict_sweeps.sh --bin-dir "$bdir" || exit 1
  # The model held against the published NVFP4 kernels and the BF16 ladder (docs/timing_model.md,
  # its validation table): results/validation_b200.csv. The noise of the lever tables
  # (results/model_b200_noise.csv, about 30 CPU minutes) is a separate run: python3 plots/predict_noise.py.
  python3 plots/nvfp4_validation.py run || exit 1
  # Step 15 at the dual GEMM's ranked shapes (results/model_b200_dual_gemm.csv; its page's table).
  python3 plots/dual_gemm.py predict "$bdir" || exit 1
  # Step 16 at the grouped GEMM's ranked cases (results/model_b200_grouped.csv; its page's table).
  python3 plots/grouped_gemm.py predict "$bdir" || exit 1
fi

# The parameter table the model ran with.
params=$tmpdir/params.md
"$bdir/step01" --model-params >"$params" || { echo "$me: $bdir/step01 --model-params failed" >&2; exit 1; }

python3 plots/performance_doc.py --model "$csv" --out "$doc" --model-params "$params"
