#!/usr/bin/env bash
# run_micro_sim.sh — the timing model's microbenchmark kernels (tests/gpu/micro.cu) in the
# emulator, with the B200 table and with results/params_h100.txt: every case must run (the
# emulator checks the kernels' barriers, copies and exits as for the steps) and predict a positive
# time (the empty grid excepted); a bad parameter file must exit 2 naming its line; and the H100
# predictions must equal the committed results/micro_h100_model.csv, and the H100 parameter file
# the fit of results/micro_h100.csv (tests/gpu/fit_params.py), from which the validation table of
# docs/timing_model.md is made, which must match (regenerate them when the model or the
# measurements change).
set -uo pipefail
cd "$(dirname "$0")/../.."
make --no-print-directory -s build/tests/micro >/dev/null || { echo "FAIL build/tests/micro does not build"; exit 1; }
fail=0
check_run() {  # label, args...
  local label=$1; shift
  local out
  if ! out=$(build/tests/micro --sim "$@" 2>&1); then echo "FAIL micro --sim ($label) exited non-zero:"; echo "$out" | tail -5; fail=1; return; fi
  local parsed n bad
  # "N CASE;CASE...": the rows read and the cases without a positive time (empty grids excepted).
  if ! parsed=$(echo "$out" | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
bad = [r["case"] for r in rows if not r["case"].startswith("empty grid") and float(r["predicted_us"]) <= 0]
print(len(rows), ";".join(bad))'); then echo "FAIL micro --sim ($label): its CSV could not be read"; fail=1; return; fi
  n=${parsed%% *} bad=${parsed#* }
  if ! [ "$n" -gt 0 ] 2>/dev/null; then echo "FAIL micro --sim ($label): no rows"; fail=1; return; fi
  if [ -n "$bad" ]; then echo "FAIL micro --sim ($label): no positive time for $bad"; fail=1; return; fi
  echo "ok   micro --sim ($label): $n cases"
  [ "$label" = "H100" ] && { if ! diff <(echo "$out") results/micro_h100_model.csv >/dev/null; then
    echo "FAIL micro --sim (H100) differs from results/micro_h100_model.csv (regenerate it and the validation table)"; fail=1; fi; }
}
# The measured lines of results/params_h100.txt are exactly what the fit prints from the CSV.
if diff <(python3 tests/gpu/fit_params.py --all-runs results/micro_h100.csv | grep -v '^#') \
        <(grep -v '^#' results/params_h100.txt | grep 'fit_params.py') >/dev/null; then
  echo "ok   results/params_h100.txt = fit_params.py --all-runs results/micro_h100.csv"
else echo "FAIL results/params_h100.txt differs from fit_params.py --all-runs results/micro_h100.csv"; fail=1; fi
# The H100 validation table in docs/timing_model.md is what validation_table.py prints from them.
if python3 tests/gpu/validation_table.py results/micro_h100.csv results/micro_h100_model.csv |
   python3 -c 'import sys; sys.exit(0 if sys.stdin.read() in open("docs/timing_model.md").read() else 1)'; then
  echo "ok   docs/timing_model.md's validation table = validation_table.py results/micro_h100*.csv"
else echo "FAIL docs/timing_model.md's validation table differs from tests/gpu/validation_table.py's output"; fail=1; fi
# ... and so is its table of the second multicast run (results/micro_h100_multicast.csv).
if python3 tests/gpu/validation_table.py results/micro_h100_multicast.csv results/micro_h100_model.csv |
   python3 -c 'import sys; sys.exit(0 if sys.stdin.read() in open("docs/timing_model.md").read() else 1)'; then
  echo "ok   docs/timing_model.md's multicast table = validation_table.py results/micro_h100_multicast.csv"
else echo "FAIL docs/timing_model.md's multicast table differs from tests/gpu/validation_table.py's output"; fail=1; fi
check_run "B200"
check_run "H100" --model-params results/params_h100.txt
tmp=$(mktemp); printf 'SMs = 132\nnot a line\n' >"$tmp"
out=$(build/tests/micro --sim --model-params "$tmp" 2>&1); rc=$?
if [ $rc = 2 ] && echo "$out" | grep -q "$tmp:2: expected 'name = value'"; then echo "ok   bad parameter file: exit 2, names line 2"
else echo "FAIL bad parameter file: exit $rc, said: $out"; fail=1; fi
out=$(./step01 --predict --model-params "$tmp" 2>&1); rc=$?
if [ $rc = 2 ] && echo "$out" | grep -q "$tmp:2:"; then echo "ok   step01 --model-params bad file: exit 2, names line 2"
else echo "FAIL step01 --model-params bad file: exit $rc, said: $out"; fail=1; fi
rm -f "$tmp"
exit $fail
