#!/usr/bin/env bash
# predict_sweeps.sh — the timing model's sweeps that the step pages quote, for `make predict`
# (plots/predict.sh runs it after the main table). No GPU needed. One row per run in
# results/model_b200_sweeps.csv, which REPLACES the file only when every run passed:
#   step08-k       steps 06 and 08 at M = N = 4096, K = 4096, 512, 256   (docs/08_tma_store_epilogue.md)
#   big            steps 06, 08 and 09 at 8192^3                          (docs/08, docs/09)
#   step10-splits  step 10 with its split count S forced (TCG_STEP10_SPLITS, steps/step10_*.cu)
#                  at the shapes of its split table                       (docs/10_nvfp4_split_k.md)
#   nvfp4-levers   steps 10-13 at the three competition shapes, step 11 with each lever switched
#                  off or forced by its environment knobs, step 13 with its multicast forced
#                  (the table NVFP4_LEVERS below: one line per config, any step, any VAR=VALUE)
#                                                   (docs/11_nvfp4_wide_copies.md, docs/13_nvfp4_multicast.md)
#   bf16-levers    step 14 with multicast across pairs and the tile order each forced off (the
#                  table BF16_LEVERS below) at 4096^3, with the model's noise (--predict-noise 2),
#                  and at 8192^3 without it; about 11 CPU minutes, so only with --only bf16-levers
#                  (make predict-big), not in a full run           (docs/14_bf16_multicast_l2.md)
# Each row: sweep,step,m,n,k,splits,tflops,time_us,date,git_rev,config,env,time_low_us,time_high_us,
# hbm_share,spread_us,plan
# (splits empty: the step's own choice; config: the row's name in its sweep; env: the VAR=VALUE
# assignments of the run, space-separated; time_low_us / time_high_us: the range line of
# --predict, every estimated or H100-carried parameter at its fast / slow end; hbm_share: the
# share of the kernel HBM was busy, from the bounds lines; spread_us: the noise line's spread,
# empty where the run asked for none; plan: the plan the step printed, in short, where the
# script knows its form: step 14's "P 4 G 2").
# plots/sweeps_doc.py prints the pages' tables from it.
#
# Usage: plots/predict_sweeps.sh [--bin-dir DIR] [--csv FILE] [--only SWEEP]
#   --only SWEEP runs that sweep alone and replaces its rows in the CSV in place, keeping the
#   other sweeps' rows (e.g. --only nvfp4-levers after a change to steps 10-13, without the
#   8192^3 runs).
# Environment: PREDICT_JOBS   runs at once [the CPU count]
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
header="sweep,step,m,n,k,splits,tflops,time_us,date,git_rev,config,env,time_low_us,time_high_us,hbm_share,spread_us,plan"
echo "$header" >"$out"
failed=0
# The steps' environment knobs of the caller (e.g. an exported TCG_STEP11_BLOCK_N) stay out of
# every run: a row's env column says all that was set.
unset_knobs=()
for v in $(compgen -e); do [[ $v == TCG_STEP* ]] && unset_knobs+=(-u "$v"); done

# run_env SWEEP CONFIG STEP M N K [VAR=VALUE ...]: one --predict run, its point and range (and its
# noise over $noise_seeds seeded orders where that is set).
# The runs go PREDICT_JOBS at a time (default: the CPU count), each into its own files (run I:
# $tmpdir/*.I); the rows are then taken in the order of the list, as one at a time would write them.
jobs_max=${PREDICT_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || { echo "$me: PREDICT_JOBS must be a positive integer, not '$jobs_max'" >&2; exit 2; }
n_runs=0
run_env() {
  [ -z "$only" ] || [ "$only" = "$1" ] || return 0
  n_runs=$((n_runs + 1))
  echo "-- ${*:7}${7:+ }$bdir/step$3 --predict --m $4 --n $5 --k $6"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$n_runs" "$@" &
}
noise_seeds=""
# run_one I SWEEP CONFIG STEP M N K [VAR=VALUE ...]: writes row.I, or fail.I.
run_one() {
  local i=$1 sweep=$2 config=$3 step=$4 m=$5 n=$6 k=$7 row point fast slow
  shift 7
  local bin=$bdir/step$step rowcsv=$tmpdir/row.$i.csv log=$tmpdir/log.$i splits=""
  [ -x "$bin" ] || { echo "$me: $bin: not built" >&2; touch "$tmpdir/fail.$i"; return; }
  [[ " $* " =~ \ TCG_STEP10_SPLITS=([0-9]+)\  ]] && splits=${BASH_REMATCH[1]}
  if ! env "${unset_knobs[@]}" "$@" "$bin" --predict ${noise_seeds:+--predict-noise $noise_seeds} --m "$m" --n "$n" \
      --k "$k" --csv "$rowcsv" >"$log" 2>&1; then
    cat "$log" >&2; echo "$me: ${*:+$* }step$step ${m}x${n}x${k} failed" >&2; touch "$tmpdir/fail.$i"; return
  fi
  row=$(python3 - "$rowcsv" "$log" <<'EOF'
import csv, re, sys
r = list(csv.DictReader(open(sys.argv[1])))[-1]
# "range:    B200 LO - HI TFLOPS (SLOW - FAST us; ...)" (common/harness/predict_range.cpp)
m = re.search(r"^range: .*\(([0-9.]+) - ([0-9.]+) us", open(sys.argv[2]).read(), re.M)
if not m:
    sys.exit("no range: line in the --predict output")
log = open(sys.argv[2]).read()
# "          busy, ...; chip: L2 reads 44%, ..., HBM 12%, ..." and "noise:    LO - HI us (spread S us, ...)"
hbm = re.search(r"chip: .*\bHBM ([0-9]+)%", log)
spread = re.search(r"^noise: .*\(spread ([0-9.]+) us", log, re.M)
# step 14: "plan:     P 4 (clusters of 8 CTAs, B multicast), G 2 (supergroups), ..."
plan = re.search(r"^plan: +P ([0-9]+) .*?, G ([0-9]+) ", log, re.M)
print("%s,%.2f,%s,%s" % (r["tflops"], float(r["median_ms"]) * 1000, r["date"], r["git_rev"]), m.group(2), m.group(1),
      hbm.group(1) if hbm else "", spread.group(1) if spread else "",
      "P %s G %s" % plan.groups() if plan else "", sep="|")  # not a tab: read would merge empty fields
EOF
  ) || { touch "$tmpdir/fail.$i"; return; }
  IFS='|' read -r point fast slow hbm spread plan <<<"$row"
  echo "$sweep,$((10#$step)),$m,$n,$k,$splits,$point,$config,$*,$fast,$slow,$hbm,$spread,$plan" >"$tmpdir/row.$i"
}
# run SWEEP STEP M N K [SPLITS]: step 10's split sweep and the plain rows (config empty).
run() {
  run_env "$1" "" "$2" "$3" "$4" "$5" ${6:+TCG_STEP10_SPLITS=$6}
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

# The NVFP4 levers (docs/11's table): CONFIG STEP [VAR=VALUE ...] per line, each run at the three
# competition shapes; plots/sweeps_doc.py nvfp4-levers prints the rows in this order (a config it
# has no label for shows as its env). Step 11's levers: two k-tiles per copy
# (TCG_STEP11_WIDE_COPIES), TMA-store C (TCG_STEP11_TMA_C), BLOCK_N 64 (TCG_STEP11_BLOCK_N; 128 is
# step 10's).
NVFP4_LEVERS='
step10       10
none         11 TCG_STEP11_WIDE_COPIES=0 TCG_STEP11_TMA_C=0 TCG_STEP11_BLOCK_N=128
copies       11 TCG_STEP11_WIDE_COPIES=1 TCG_STEP11_TMA_C=0 TCG_STEP11_BLOCK_N=128
c            11 TCG_STEP11_WIDE_COPIES=0 TCG_STEP11_TMA_C=1 TCG_STEP11_BLOCK_N=128
bn64         11 TCG_STEP11_WIDE_COPIES=0 TCG_STEP11_TMA_C=0 TCG_STEP11_BLOCK_N=64
copies+c     11 TCG_STEP11_WIDE_COPIES=1 TCG_STEP11_TMA_C=1 TCG_STEP11_BLOCK_N=128
copies+bn64  11 TCG_STEP11_WIDE_COPIES=1 TCG_STEP11_TMA_C=0 TCG_STEP11_BLOCK_N=64
c+bn64       11 TCG_STEP11_WIDE_COPIES=0 TCG_STEP11_TMA_C=1 TCG_STEP11_BLOCK_N=64
all          11 TCG_STEP11_WIDE_COPIES=1 TCG_STEP11_TMA_C=1 TCG_STEP11_BLOCK_N=64
step11       11
step12       12
step13-mc1   13 TCG_STEP13_MULTICAST=1
mc2          13 TCG_STEP13_MULTICAST=2
mc4          13 TCG_STEP13_MULTICAST=4
mc2-bn64-s2  13 TCG_STEP13_MULTICAST=2 TCG_STEP13_BLOCK_N=64 TCG_STEP13_SPLITS=2
step13       13
'
while read -r config step knobs; do
  [ -n "$config" ] || continue
  for shape in "128 7168 16384" "128 4096 7168" "128 7168 2048"; do
    # shellcheck disable=SC2086  # the shape and the knobs split into words on purpose
    run_env nvfp4-levers "$config" "$step" $shape $knobs
  done
done <<<"$NVFP4_LEVERS"

# Step 14's levers (docs/14's table): CONFIG STEP [VAR=VALUE ...]; "neither" is step 09's kernel
# (one pair per cluster, tiles row after row); multicast and p4 force P = 4 (the largest
# cluster), p2 P = 2 (4096^3 only), whatever the plan would take.
BF16_LEVERS='
neither      14 TCG_STEP14_PAIRS=1 TCG_STEP14_GROUP=1
order        14 TCG_STEP14_PAIRS=1
multicast    14 TCG_STEP14_PAIRS=4 TCG_STEP14_GROUP=1
p4           14 TCG_STEP14_PAIRS=4
step14       14
p2           14 TCG_STEP14_PAIRS=2
'
if [ "$only" = bf16-levers ]; then
  noise_seeds=2
  while read -r config step knobs; do
    [ -n "$config" ] || continue
    # shellcheck disable=SC2086  # the knobs split into words on purpose
    run_env bf16-levers "$config" "$step" 4096 4096 4096 $knobs
  done <<<"$BF16_LEVERS"
  noise_seeds=""
  while read -r config step knobs; do
    [ -n "$config" ] && [ "$config" != p2 ] && [ "$config" != p4 ] || continue
    # shellcheck disable=SC2086
    run_env bf16-levers "$config" "$step" 8192 8192 8192 $knobs
  done <<<"$BF16_LEVERS"
fi

wait
for ((i = 1; i <= n_runs; ++i)); do
  if [ -e "$tmpdir/fail.$i" ] || [ ! -s "$tmpdir/row.$i" ]; then failed=1; else cat "$tmpdir/row.$i" >>"$out"; fi
done
if [ $failed != 0 ]; then echo "$me: a run failed; $csv left as it was" >&2; exit 1; fi
if [ -s "$csv" ]; then
  # Keep the rows of the sweeps this run did not run (bf16-levers in a full run; every other sweep
  # with --only), under this header (a column they lack is empty); a sweep that ran replaces its
  # old rows where they stood (at the end, for a new sweep).
  python3 - "$csv" "$out" "$only" <<'EOF' || { echo "$me: cannot merge into $csv" >&2; exit 1; }
import csv, sys
old_path, new_path, only = sys.argv[1:]
new = list(csv.DictReader(open(new_path, newline="")))
cols = open(new_path).readline().strip().split(",")
ran = {only} if only else {r["sweep"] for r in new}
rows, placed = [], False
for r in csv.DictReader(open(old_path, newline="")):
    if r["sweep"] not in ran:
        rows.append(r)
    elif not placed:
        rows += new
        placed = True
if not placed:
    rows += new
with open(new_path, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c) or "" for c in cols})
EOF
fi
cp "$out" "$csv.tmp" && mv "$csv.tmp" "$csv" || { echo "$me: cannot write $csv" >&2; exit 1; }
echo "== wrote $csv ($(($(wc -l <"$csv") - 1)) rows)"
