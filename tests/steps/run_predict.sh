#!/usr/bin/env bash
# run_predict.sh — the B200 timing model and the emulator's traces as a user meets them, through
# the step binaries (built by `make all`; no GPU needed):
#   * `./stepNN --predict --m 256 --n 256 --k 512` for steps 01-13, 15 (07, 10-13, 15: NVFP4, K must be a
#     multiple of 64, which 512 is), and step 16 with three groups (--groups 40,200,1) of that N and K, exits 0 within the time limit and prints exactly one line
#     "predicted B200: X TFLOPS ..." with X > 0, and one "range: B200 LO - HI TFLOPS" line with
#     LO <= X <= HI, and says that no inputs were generated (timing only);
#   * `--predict-noise 2` (steps 04 and 13): one "noise: LO - HI us" line holding the point, and
#     the point the same as without the flag;
#   * `./step04 --sim --m 384 --n 320 --k 448 --trace FILE` (partial tiles in M and N, a K tail)
#     exits 0, says it wrote the file, and tests/checks/check_trace.py accepts it;
#   * a --trace path that cannot be written (/nonexistent/dir/t.json) gives exit code 2 and a
#     one-line error on stderr naming the file (the emulator's "running in the tcgen05 emulator"
#     notice aside), and no "trace: wrote" line; the same for other bad use: --trace-ctas naming
#     no CTA of the grid, --predict or an emulator --trace for step 00 (no timing model), and
#     --trace-ctas without --trace, --predict with --check.
#   The traced run must also hold the phases the kernel annotates and the emulator's own spans.
# Prints one line per check and a closing "N passed, N failed" line; exits 1 on any failure.
set -u
cd "$(dirname "$0")/../.."
LIMIT=${PREDICT_TIME_LIMIT:-30}   # seconds per run (each takes well under 1 s on 2 cores)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
bad() {  # bad WHAT [OUTPUT]
  failed=$((failed + 1))
  printf 'FAIL  %s\n' "$1"
  [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/      /'
  return 0
}

# ---------------------------------------------------------------- --predict, steps 01-13, 15 and 16
for n in 01 02 03 04 05 06 07 08 09 10 11 12 13 15 16; do
  step=step$n
  args=(--predict --m 256 --n 256 --k 512)
  [ $n = 16 ] && args=(--predict --groups 40,200,1 --n 256 --k 512)  # the grouped GEMM takes groups, not --m
  what="$step ${args[*]}"
  if [ ! -x "./$step" ]; then bad "$what: ./$step missing (make all)"; continue; fi
  out=$(timeout "$LIMIT" "./$step" "${args[@]}" 2>&1)
  rc=$?
  if [ "$rc" = 124 ]; then bad "$what: still running after ${LIMIT} s" "$out"; continue; fi
  if [ "$rc" != 0 ]; then bad "$what: exit code $rc, expected 0" "$out"; continue; fi
  lines=$(grep -E '^predicted B200: [0-9.]+ TFLOPS' <<<"$out")
  count=$(grep -cE '^predicted B200' <<<"$out")
  if [ "$count" != 1 ] || [ -z "$lines" ]; then
    bad "$what: expected exactly one 'predicted B200: X TFLOPS' line, found $count" "$out"
    continue
  fi
  tflops=$(sed -E 's/^predicted B200: ([0-9.]+) TFLOPS.*/\1/' <<<"$lines")
  if ! awk -v x="$tflops" 'BEGIN { exit !(x + 0 > 0) }'; then
    bad "$what: predicted $tflops TFLOPS, expected a positive number" "$out"
    continue
  fi
  # The range (docs/timing_model.md, "Ranges"): one "range:" line, low <= point <= high.
  rline=$(grep -E '^range: +B200 [0-9.]+ - [0-9.]+ TFLOPS' <<<"$out")
  if [ "$(grep -c '^range:' <<<"$out")" != 1 ] || [ -z "$rline" ]; then
    bad "$what: expected exactly one 'range: B200 LOW - HIGH TFLOPS' line" "$out"
    continue
  fi
  read -r lo hi < <(sed -E 's/^range: +B200 ([0-9.]+) - ([0-9.]+) TFLOPS.*/\1 \2/' <<<"$rline")
  if ! awk -v l="$lo" -v p="$tflops" -v h="$hi" 'BEGIN { exit !(l + 0 > 0 && l <= p + 0.05 && p <= h + 0.05) }'; then
    bad "$what: range $lo - $hi does not hold the point $tflops" "$out"
    continue
  fi
  # Timing only: no inputs are generated (their values cost nothing in the model), and it says so.
  if ! grep -q '^inputs:   none generated: timing only' <<<"$out"; then
    bad "$what: expected an 'inputs:   none generated: timing only' line" "$out"
    continue
  fi
  ok "$what: $tflops TFLOPS, range $lo - $hi"
done

# ---------------------------------------------------------------- --predict-noise
# The model's noise (docs/timing_model.md, "Noise"): one "noise:" line whose low end is at most the
# point and whose high end at least it (issue order is one of the orders), for a BF16 and an NVFP4
# step; and the point without the flag is the point with it (seeded orders change nothing else).
for step in step04 step13; do
  args=(--predict --m 256 --n 512 --k 1024 --predict-noise 2)
  what="$step ${args[*]}"
  [ -x "./$step" ] || { bad "$what: ./$step missing (make all)"; continue; }
  out=$(timeout "$LIMIT" "./$step" "${args[@]}" 2>&1)
  plain=$(timeout "$LIMIT" "./$step" --predict --m 256 --n 512 --k 1024 2>&1 | grep '^predicted')
  nline=$(grep -E '^noise: +[0-9.]+ - [0-9.]+ us \(spread' <<<"$out")
  point=$(sed -nE 's/^predicted B200: .*\(([0-9.]+) us;.*/\1/p' <<<"$out")
  read -r nlo nhi < <(sed -E 's/^noise: +([0-9.]+) - ([0-9.]+) us.*/\1 \2/' <<<"$nline")
  if [ -z "$nline" ] || [ "$(grep -c '^noise:' <<<"$out")" != 1 ]; then
    bad "$what: expected exactly one 'noise: LO - HI us' line" "$out"
  elif [ "$(grep '^predicted' <<<"$out")" != "$plain" ]; then
    bad "$what: the point differs from a run without --predict-noise" "$out"
  elif ! awk -v l="$nlo" -v p="$point" -v h="$nhi" 'BEGIN { exit !(l <= p + 0.005 && p <= h + 0.005) }'; then
    bad "$what: noise $nlo - $nhi does not hold the point $point" "$out"
  else
    ok "$what: point $point us, noise $nlo - $nhi us"
  fi
done

# ---------------------------------------------------------------- --trace in the emulator
trace="$tmp/t.json"
args=(--sim --m 384 --n 320 --k 448 --trace "$trace")
what="step04 ${args[*]}"
if [ ! -x ./step04 ]; then
  bad "$what: ./step04 missing (make all)"
else
  out=$(timeout "$LIMIT" ./step04 "${args[@]}" 2>&1)
  rc=$?
  if [ "$rc" != 0 ]; then
    bad "$what: exit code $rc, expected 0" "$out"
  elif ! grep -q "^trace: *wrote $trace" <<<"$out" || [ ! -s "$trace" ]; then
    bad "$what: no 'trace: wrote $trace' line or no file" "$out"
  elif ! check=$(timeout "$LIMIT" python3 tests/checks/check_trace.py --min-spans 100 "$trace" 2>&1); then
    bad "$what: tests/checks/check_trace.py rejects the trace" "$check"
  elif missing=$(python3 - "$trace" <<'PY'
import json, sys
names = {e.get("name") for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"}
want = ["setup", "producer", "mma", "epilogue", "teardown", "TMA 16 KiB", "wait tma_full_bar[0]", "wait mma_done_bar[0]",
        "tcgen05.ld"]
print(" ".join(w for w in want if w not in names))
PY
) && [ -n "$missing" ]; then
    bad "$what: the trace lacks the spans: $missing" "$out"
  else
    ok "$what; check_trace.py: ${check#ok    }"
  fi

  # Bad use that must be refused with exit code 2, one line on stderr (the emulator's "running in
  # the tcgen05 emulator" notice aside) and no trace written.
  refuse() {  # refuse STEP PATTERN ARGS...
    local step=$1 pattern=$2; shift 2
    rm -f "$tmp/never.json"
    timeout "$LIMIT" ./"$step" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? errs
    errs=$(grep -v 'running in the tcgen05 emulator' "$tmp/err" | grep -v '^$')
    if [ "$rc" = 2 ] && [ "$(grep -c . <<<"$errs")" = 1 ] && grep -q -- "$pattern" <<<"$errs" &&
       [ ! -e "$tmp/never.json" ] && ! grep -q '^trace: *wrote' "$tmp/out"; then
      ok "$step $*: exit code 2, \"$errs\""
    else
      bad "$step $*: expected exit code 2, one line matching '$pattern' and no trace (got $rc)" "$(cat "$tmp/out" "$tmp/err")"
    fi
  }
  badpath=/nonexistent/dir/t.json
  refuse step04 "cannot write $badpath" --sim --m 384 --n 320 --k 448 --trace "$badpath"
  refuse step04 "none of the CTAs 99 recorded anything" --sim --m 256 --n 256 --k 64 --trace "$tmp/never.json" --trace-ctas 99
  refuse step00 "timing model covers the tcgen05 steps" --predict --m 256 --n 256 --k 64
  refuse step00 "trace this step on a GPU" --sim --m 256 --n 256 --k 64 --trace "$tmp/never.json"
  refuse step04 "needs --trace FILE" --sim --trace-ctas 1
  # a flag a step cannot run: one line, exit 2, before any header (a pair step on one SM)
  refuse step08 "needs at least 2 SMs" --sim-sms 1
  refuse step05 "needs at least 2 SMs" --sim --sim-sms 1
  refuse step04 "--check and --predict contradict" --predict --check
fi

# ---------------------------------------------------------------- the command line's messages
# A flag the step cannot run is refused before anything else is printed: exactly one line, exit 2.
for args in "step08 --sim-sms 1" "step06 --sim-sms 1 --m 256" "step09 --predict --sim-sms 1"; do
  set -- $args
  out=$(timeout "$LIMIT" ./"$@" 2>&1); rc=$?
  if [ "$rc" = 2 ] && [ "$(grep -c . <<<"$out")" = 1 ]; then ok "$args: exit 2, one line: $out"
  else bad "$args: expected exit 2 and exactly one line (got exit $rc)" "$out"; fi
done
# Without a GPU, the first line says so plainly; the runtime's words only under --verbose.
first=$(timeout "$LIMIT" ./step04 --m 128 --n 128 --k 64 2>&1 | head -1)
case $first in
  *"no GPU here: running in the tcgen05 emulator"*)
    if grep -q cudaError <<<"$first"; then bad "step04 without a GPU: the runtime's error text without --verbose" "$first"
    else ok "step04 without a GPU: \"$first\""; fi
    verbose=$(timeout "$LIMIT" ./step04 --m 128 --n 128 --k 64 --verbose 2>&1 | head -1)
    if grep -q "found" <<<"$verbose"; then ok "step04 --verbose names what the runtime found: \"$verbose\""
    else bad "step04 --verbose: expected the runtime's words" "$verbose"; fi ;;
  *"running in the tcgen05 emulator"*) ok "step04 on a machine with a GPU that cannot run it: \"$first\"" ;;
  *) ok "step04 ran on a GPU" ;;
esac
# Step 08 says which epilogue ran: TMA stores when N % 8 == 0, step 06's stores otherwise.
for n_want in "256:epilogue: TMA stores" "260:epilogue: step 06's direct global stores"; do
  n=${n_want%%:*} want=${n_want#*:}
  out=$(timeout "$LIMIT" ./step08 --sim --m 256 --n "$n" --k 64 --inputs integer 2>&1); rc=$?
  if [ "$rc" = 0 ] && grep -q "^$want" <<<"$out"; then ok "step08 --n $n: \"$(grep '^epilogue:' <<<"$out")\""
  else bad "step08 --n $n: expected exit 0 and a line starting '$want'" "$out"; fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
