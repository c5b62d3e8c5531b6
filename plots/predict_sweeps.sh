#!/usr/bin/env bash
# predict_sweeps.sh — the timing model's sweeps that the step pages quote, for `make predict`
# (plots/predict.sh runs it after the main table). No GPU needed. One row per run in
# results/model_b200_sweeps.csv, which REPLACES the file only when every run passed:
#   step08-k       steps 06 and 08 at M = N = 4096, K = 4096, 512, 256   (docs/08_tma_store_epilogue.md)
#   big            steps 06, 08 and 09 at 8192^3                          (docs/08, docs/09)
#   step10-splits  step 10 with its split count S forced (TCG_STEP10_SPLITS, steps/step10_*.cu)
#                  at the shapes of its split table                       (docs/10_nvfp4_split_k.md)
# Each row: sweep,step,m,n,k,splits,tflops,time_us,date,git_rev (splits empty: the step's own
# choice). plots/sweeps_doc.py prints the pages' tables from it.
#
# Usage: plots/predict_sweeps.sh [--bin-dir DIR] [--csv FILE] [--only SWEEP]
set -u
cd "$(dirname "$0")/.." || exit 2
me=plots/predict_sweeps.sh
bdir=. csv=results/model_b200_sweeps.csv only=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin-dir) bdir=${2:?}; shift ;;
    --csv) csv=${2:?}; shift ;;
    --only) only=${2:?}; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "$me: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
tmpdir=$(mktemp -d) || exit 2
trap 'rm -rf "$tmpdir"' EXIT
out=$tmpdir/sweeps.csv
echo "sweep,step,m,n,k,splits,tflops,time_us,date,git_rev" >"$out"
failed=0

# run SWEEP STEP M N K [SPLITS]
run() {
  local sweep=$1 step=$2 m=$3 n=$4 k=$5 splits=${6:-} row
  [ -z "$only" ] || [ "$only" = "$sweep" ] || return 0
  local bin=$bdir/step$step rowcsv=$tmpdir/row.csv
  [ -x "$bin" ] || { echo "$me: $bin: not built" >&2; failed=1; return; }
  rm -f "$rowcsv"
  echo "-- ${splits:+TCG_STEP10_SPLITS=$splits }$bin --predict --m $m --n $n --k $k"
  if ! TCG_STEP10_SPLITS=$splits "$bin" --predict --m "$m" --n "$n" --k "$k" --csv "$rowcsv" >"$tmpdir/log" 2>&1; then
    cat "$tmpdir/log" >&2; echo "$me: step$step ${m}x${n}x${k} failed" >&2; failed=1; return
  fi
  row=$(python3 - "$rowcsv" <<'EOF'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[-1]
print("%s,%.2f,%s,%s" % (r["tflops"], float(r["median_ms"]) * 1000, r["date"], r["git_rev"]))
EOF
  ) || { failed=1; return; }
  echo "$sweep,$((10#$step)),$m,$n,$k,$splits,$row" >>"$out"
}

for k in 4096 512 256; do
  for s in 06 08; do run step08-k $s 4096 4096 $k; done
done
for s in 06 08 09; do run big $s 8192 8192 8192; done
# Step 10's split table: the three competition shapes and four of other K and N.
for s in 1 2 3 4; do run step10-splits 10 128 7168 16384 $s; done
for s in 1 2 3 4 5 6; do run step10-splits 10 128 4096 7168 $s; done
for s in 1 2 3 4; do run step10-splits 10 128 7168 2048 $s; done
for s in 3 4 5 6 8; do run step10-splits 10 128 2048 16384 $s; done
for k in 2560 3072 3584; do for s in 1 2; do run step10-splits 10 128 7168 $k $s; done; done

if [ $failed != 0 ]; then echo "$me: a run failed; $csv left as it was" >&2; exit 1; fi
if [ -n "$only" ] && [ -s "$csv" ]; then  # keep the other sweeps' rows
  awk -F, -v s="$only" 'NR > 1 && $1 != s' "$csv" >>"$out"
fi
cp "$out" "$csv.tmp" && mv "$csv.tmp" "$csv" || { echo "$me: cannot write $csv" >&2; exit 1; }
echo "== wrote $csv ($(($(wc -l <"$csv") - 1)) rows)"
