#!/usr/bin/env bash
# run_steps.sh STEP... — runs every step binary in the tcgen05 emulator at shapes chosen to
# exercise the edges: non-square problems, partial tiles in M and N, K of a single tile, K
# not a multiple of the K tile, and enough k-tiles that every pipeline stage's barrier parity
# wraps (18 k-tiles of 64 over 4 stages: each stage is filled 4-5 times; over step 05's 7
# stages, 2-3 times).
# `integer` inputs are compared bitwise; `random` inputs run under scheduler seeds 1, 2 and 3.
# Steps that run on CTA pairs (PAIR_STEPS, clusters of 2 computing 256-row tiles) also run at
# M = 129, 257 and 383: a pair whose second CTA has 1 valid row, pairs whose second CTA has none,
# and a leader with a partial tile; integer inputs bitwise, random inputs under seeds 1, 2, 3.
# Persistent steps (PERSISTENT_STEPS: the grid is sized by the SM count, each pair walks several
# tiles) also run on emulated GPUs of a few SMs (--sim-sms): one tile per pair, several tiles per
# pair with the smem ring wrapping inside tiles, uneven tile counts, more SM pairs than tiles
# (grid capped), an odd SM count (one SM idle), two bands of the tile order, one pair walking 16
# tiles; integer inputs bitwise, random inputs under seeds 1, 2, 3 (and 5).
# Steps whose epilogue writes C with TMA stores (TMA_STORE_STEPS) need N % 8 == 0 for it (most
# shapes above have N = 300 and take the fallback), so they also run with N % 8 == 0 and partial
# tiles everywhere: boxes clipped at M and N, sub-tiles wholly beyond N (N = 72), a peer CTA with
# one valid row, one k-tile, one pair walking 9 tiles (the staging ring wraps), more SM pairs than
# tiles; integer inputs bitwise, random inputs under seeds 1, 2, 3 (and 5).
# Steps that schedule tiles with cluster launch control (CLC_STEPS: one pair per tile, pairs take
# over not-yet-launched pairs' tiles with try_cancel) run with fewer SM pairs than tiles, where
# the run must report canceled clusters (and at least one failed request: the last ask of every
# launched pair finds nothing left), and with more
# SMs than tiles, where none can be canceled: the scheduler ring's parity wraps, one k-tile, partial
# tiles, the adversarial seeds 4 and 8 (canceled clusters handed out out of launch order), integer
# inputs bitwise, random inputs under seeds 1, 2, 3 (and 5, 8).
# Prints one line per run and a closing "N passed, N failed" line; exits 1 on any failure.
# Several steps run RUN_STEPS_JOBS at a time (default: the CPU count; each emulator run uses one
# core), one process per step, their lines printed in the order of the arguments.
set -u
cd "$(dirname "$0")/../.."
jobs_max=${RUN_STEPS_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || { echo "run_steps.sh: RUN_STEPS_JOBS must be a positive integer, not '$jobs_max'"; exit 2; }
if [ $# -gt 1 ] && [ "$jobs_max" -gt 1 ]; then
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  steps=("$@")
  # The later steps are the longer ones: start them first, so the last to finish is a short one.
  for ((i = ${#steps[@]} - 1; i >= 0; --i)); do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    { RUN_STEPS_JOBS=1 bash "$0" "${steps[$i]}" >"$tmp/out.$i" 2>&1; echo $? >"$tmp/rc.$i"; } &
  done
  wait
  total_passed=0 total_failed=0 rc=0
  for i in "${!steps[@]}"; do
    grep -v '^emulator step runs: ' "$tmp/out.$i"
    line=$(grep '^emulator step runs: ' "$tmp/out.$i")
    [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]] &&
      total_passed=$((total_passed + BASH_REMATCH[1])) total_failed=$((total_failed + BASH_REMATCH[2]))
    [ "$(cat "$tmp/rc.$i" 2>/dev/null)" = 0 ] || rc=1
  done
  echo "emulator step runs: $total_passed passed, $total_failed failed ($# steps, $jobs_max at a time)"
  exit $rc
fi
PAIR_STEPS=" step05 step06 step08 step09 "   # add later 2-SM steps here
PERSISTENT_STEPS=" step06 step08 "     # grid from the SM count (tcg::num_sms(), --sim-sms in the emulator)
TMA_STORE_STEPS=" step08 step09 "  # epilogue through TMA stores: only when N % 8 == 0 (else step 06's stores)
CLC_STEPS=" step09 "            # one pair per tile, tiles taken over with clusterlaunchcontrol.try_cancel
NVFP4_STEPS=" step07 "          # Operands::kNVFP4: K must be a multiple of 64 (one kind::mxf4nvf4 MMA)
SPLITK_STEPS=" step10 step11 step12 step13 "  # NVFP4 split-K: S splits per tile, one wave at most (--sim-sms), by the model's costs
WIDE_COPY_STEPS=" step11 "      # NVFP4, 2 k-tiles per stage (3-D boxes, 2-D for a tail or lone k-tile), C by TMA stores
CLUSTER_REDUCE_STEPS=" step12 "  # NVFP4 split-K in a cluster of S = 1, 2, 4 CTAs, partials exchanged through DSMEM
MULTICAST_STEPS=" step13 "      # step 12 in clusters of MC x S CTAs, A and SFA multicast to the MC tiles along N
PAIR_MULTICAST_STEPS=" step14 "  # step 09 in clusters of P CTA pairs sharing B's multicast copies, supergroup tile order
DUAL_GEMM_STEPS=" step15 "      # NVFP4 C = silu(A B1^T) * (A B2^T): step 12's mainloop with two B, two accumulators, S 1|2
GROUPED_STEPS=" step16 "        # NVFP4 grouped GEMM (--groups): a persistent walk over all groups' tiles, tensor maps rewritten
passed=0 failed=0 expected=0
run() {  # run STEP ARGS...  (an environment assignment before it, e.g. TCG_STEP11_BLOCK_N=64, is shown;
  local step=$1; shift  # PLAN_HAS=TEXT before it: the run must also print a "plan:" line containing TEXT)
  local out env_shown=${TCG_STEP11_BLOCK_N:+TCG_STEP11_BLOCK_N=$TCG_STEP11_BLOCK_N }
  env_shown+=${TCG_STEP11_SWAP_AB:+TCG_STEP11_SWAP_AB=$TCG_STEP11_SWAP_AB }
  env_shown+=${TCG_STEP11_SPLITS:+TCG_STEP11_SPLITS=$TCG_STEP11_SPLITS }
  env_shown+=${TCG_STEP11_WIDE_COPIES:+TCG_STEP11_WIDE_COPIES=$TCG_STEP11_WIDE_COPIES }${TCG_STEP11_TMA_C:+TCG_STEP11_TMA_C=$TCG_STEP11_TMA_C }
  env_shown+=${TCG_STEP12_SPLITS:+TCG_STEP12_SPLITS=$TCG_STEP12_SPLITS }${TCG_STEP12_BLOCK_N:+TCG_STEP12_BLOCK_N=$TCG_STEP12_BLOCK_N }
  env_shown+=${TCG_STEP13_MULTICAST:+TCG_STEP13_MULTICAST=$TCG_STEP13_MULTICAST }${TCG_STEP13_SPLITS:+TCG_STEP13_SPLITS=$TCG_STEP13_SPLITS }
  env_shown+=${TCG_STEP13_BLOCK_N:+TCG_STEP13_BLOCK_N=$TCG_STEP13_BLOCK_N }
  env_shown+=${TCG_STEP14_PAIRS:+TCG_STEP14_PAIRS=$TCG_STEP14_PAIRS }${TCG_STEP14_GROUP:+TCG_STEP14_GROUP=$TCG_STEP14_GROUP }
  env_shown+=${TCG_STEP15_SPLITS:+TCG_STEP15_SPLITS=$TCG_STEP15_SPLITS }${TCG_STEP15_BLOCK_N:+TCG_STEP15_BLOCK_N=$TCG_STEP15_BLOCK_N }
  env_shown+=${TCG_STEP15_CTA_GROUP:+TCG_STEP15_CTA_GROUP=$TCG_STEP15_CTA_GROUP }
  env_shown+=${TCG_STEP15_STAGE_KTILES:+TCG_STEP15_STAGE_KTILES=$TCG_STEP15_STAGE_KTILES }
  env_shown+=${TCG_STEP16_SWAP_AB:+TCG_STEP16_SWAP_AB=$TCG_STEP16_SWAP_AB }${TCG_STEP16_BLOCK_N:+TCG_STEP16_BLOCK_N=$TCG_STEP16_BLOCK_N }
  env_shown+=${TCG_STEP16_MULTICAST:+TCG_STEP16_MULTICAST=$TCG_STEP16_MULTICAST }
  if out=$(./"$step" --sim "$@" 2>&1) && { [ -z "${PLAN_HAS:-}" ] || grep -q "^plan: .*$PLAN_HAS" <<<"$out"; }; then
    passed=$((passed + 1))
    printf 'ok    %s%s %s  [%s%s]\n' "$env_shown" "$step" "$*" "$(grep -o 'wall: *[0-9.]* s' <<<"$out" | tr -s ' ')" \
      "${PLAN_HAS:+; plan has $PLAN_HAS}"
  else
    failed=$((failed + 1))
    printf 'FAIL  %s%s %s%s\n%s\n' "$env_shown" "$step" "$*" "${PLAN_HAS:+ (want a plan with $PLAN_HAS)}" "$out"
  fi
}
refused() {  # refused STEP KNOB=VALUE... -- ARGS...: exit 2 with exactly one line, before any header
  local step=$1 knobs=() out rc; shift
  while [ "$1" != -- ]; do knobs+=("$1"); shift; done; shift
  out=$(env "${knobs[@]}" ./"$step" --sim "$@" 2>&1); rc=$?
  if [ $rc = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && [[ "$out" == "$step: "* ]]; then
    passed=$((passed + 1)); echo "ok    ${knobs[*]} $step $*: exit 2, '$out'"
  else
    failed=$((failed + 1)); printf 'FAIL  %s %s %s: exit %s (want 2 and one line)\n%s\n' "${knobs[*]}" "$step" "$*" "$rc" "$out"
  fi
}
run_clc() {  # run_clc STEP some|none ARGS...: passes only if the run verifies, reports failed requests,
  local step=$1 want=$2; shift 2  # and its canceled-cluster count (the "clc:" line) is > 0 (some) or 0 (none)
  local out n nfail
  local got=x
  if out=$(./"$step" --sim "$@" 2>&1) && n=$(grep -o 'clc: *[0-9]* clusters canceled' <<<"$out" | grep -o '[0-9]*') &&
     nfail=$(grep -o '[0-9]* requests failed' <<<"$out" | grep -o '^[0-9]*') && [ "$nfail" -gt 0 ]; then
    if [ "$n" -gt 0 ]; then got=some; else got=none; fi
  fi
  if [ "$got" = "$want" ]; then
    passed=$((passed + 1))
    printf 'ok    %s %s  [%s canceled; %s]\n' "$step" "$*" "$n" "$(grep -o 'wall: *[0-9.]* s' <<<"$out" | tr -s ' ')"
  else
    failed=$((failed + 1))
    printf 'FAIL  %s %s (expected %s canceled clusters)\n%s\n' "$step" "$*" "$want" "$out"
  fi
}
for step in "$@"; do
  if [[ "$SPLITK_STEPS" == *" $step "* ]]; then
    # The split count S comes from the tile count and the emulated SM count (the S the comments
    # give is step 10's plan; steps 11-13 plan their own, and their blocks below force theirs).
    # The default run (no shape, no --sim-sms: the step's own default problem) must split K (and
    # in step 13 multicast), and every emulated GPU of 1 to 8 SMs must get a plan. Every run also
    # launches a second time under another scheduler seed (other CTAs arrive last) and requires
    # bitwise the same C and the tile counters back at 0 (common/harness/workspace.cpp). The `wide`
    # inputs (block scales over 10 binades) make the FP32 sums round, so that check sees the order
    # of the partials' reduction (with integer or random inputs every sum is exact).
    expected=$((expected + 30))
    [ -x "./$step" ] || { echo "FAIL  $step: binary missing"; failed=$((failed + 1)); continue; }
    if [ "$step" = step13 ]; then PLAN_HAS="S 2, MC [24]" run "$step"; else PLAN_HAS="S [2-9]" run "$step"; fi
    for sms in 1 2 3 4 5 6 7 8; do PLAN_HAS="CTAs" run "$step" --sim-sms $sms; done
    # Every knob value the step or the problem cannot take: one line, exit 2, nothing else.
    case $step in
      step10) bad=("TCG_STEP10_SPLITS=0 --" "TCG_STEP10_SPLITS=two --" "TCG_STEP10_SPLITS=18 --"
                   "TCG_STEP10_SPLITS=2 -- --k 64" "TCG_STEP10_SPLITS=40 -- --predict --k 4096") ;;
      step11) bad=("TCG_STEP11_BLOCK_N=96 --" "TCG_STEP11_WIDE_COPIES=2 --" "TCG_STEP11_TMA_C=yes --"
                   "TCG_STEP11_SWAP_AB=2 -- --predict" "TCG_STEP11_SPLITS=0 --" "TCG_STEP11_SPLITS=2 -- --k 64") ;;
      step12) bad=("TCG_STEP12_SPLITS=3 --" "TCG_STEP12_SPLITS=4 -- --k 128" "TCG_STEP12_SPLITS=2 -- --sim-sms 1"
                   "TCG_STEP12_BLOCK_N=32 --" "TCG_STEP12_SPLITS=4 -- --predict --k 512") ;;
      step13) bad=("TCG_STEP13_MULTICAST=3 --" "TCG_STEP13_MULTICAST=4 TCG_STEP13_SPLITS=4 --"
                   "TCG_STEP13_MULTICAST=4 -- --n 100" "TCG_STEP13_MULTICAST=2 -- --sim-sms 1"
                   "TCG_STEP13_SPLITS=4 -- --k 512" "TCG_STEP13_SPLITS=2 TCG_STEP13_MULTICAST=4 -- --sim-sms 7"
                   "TCG_STEP13_BLOCK_N=256 -- --predict") ;;
    esac
    expected=$((expected + ${#bad[@]}))
    for b in "${bad[@]}"; do read -r -a words <<<"$b"; refused "$step" "${words[@]}"; done
    run "$step" --m 128 --n 256 --k 8192 --inputs integer --sim-sms 8                # S = 4 divides 32 k-tiles
    run "$step" --m 128 --n 256 --k 8512 --inputs integer --sim-sms 8                # S = 4, 34 k-tiles: 9,9,8,8, 1-step tail
    run "$step" --m 128 --n 256 --k 8512 --inputs random --sim-sms 8 --sim-seed 1
    run "$step" --m 128 --n 256 --k 6208 --inputs random --sim-sms 6 --sim-seed 2    # S = 3, 25 k-tiles: 9,8,8
    run "$step" --m 128 --n 128 --k 4096 --inputs integer                             # 148 SMs allow 16 splits, the tail makes 2 best
    run "$step" --m 128 --n 128 --k 4160 --inputs random --sim-seed 3                 # S = 3 of 17 k-tiles: 6, 6, 5 with the tail
    run "$step" --m 200 --n 128 --k 64 --inputs integer                               # 1 k-tile: S = 1 (step 07's epilogue)
    run "$step" --m 50 --n 300 --k 4096 --inputs integer --sim-sms 12                 # M < 128, N % 128 != 0: 3 tiles, S = 2
    run "$step" --m 50 --n 300 --k 4096 --inputs random --sim-sms 12 --sim-seed 4
    run "$step" --m 384 --n 136 --k 8256 --inputs integer --sim-sms 20 --sim-seed 5  # 6 tiles, S = 3 of 33 k-tiles: 11 each
    run "$step" --m 256 --n 512 --k 4096 --inputs integer --sim-sms 4                 # 8 tiles > 4 SMs: S = 1
    run "$step" --m 1 --n 1000 --k 4160 --inputs random --sim-sms 24 --sim-seed 6     # N % 8 != 0, 8 tiles, S = 3 of 17
    run "$step" --m 128 --n 7168 --k 2048 --inputs integer                            # competition shape 3: 8 k-tiles, S = 1
    run "$step" --m 128 --n 1792 --k 4096 --inputs integer --sim-sms 37               # shape 1 scaled by 1/4: 14 tiles, S = 2
    run "$step" --m 128 --n 1024 --k 7168 --inputs random --sim-sms 37 --sim-seed 2  # shape 2 scaled: 8 tiles, S = 4 of 28
    run "$step" --m 128 --n 1024 --k 7168 --inputs random --sim-sms 37 --sim-seed 5
    run "$step" --m 128 --n 256 --k 8512 --inputs wide --sim-sms 8 --sim-seed 1      # S = 4: the reduction's order
    run "$step" --m 128 --n 128 --k 4160 --inputs wide --sim-seed 3                   #   shows in C's bits
    run "$step" --m 128 --n 256 --k 8512 --inputs competition --sim-sms 8 --sim-seed 2  # the competition's inputs and check
    run "$step" --m 50 --n 300 --k 4096 --inputs wide --sim-sms 12 --sim-seed 4
    run "$step" --m 128 --n 1024 --k 7168 --inputs wide --sim-sms 37 --sim-seed 2
    if [[ "$WIDE_COPY_STEPS" == *" $step "* ]]; then
      # Stages of 2 k-tiles: a split of an odd k-tile count ends with a lone k-tile (2-D boxes),
      # K with no whole k-tile has no 3-D box at all, and C goes out by TMA stores only when
      # N % 8 == 0: boxes clipped at M and N, a sub-tile wholly beyond N (N = 136, 72), S > 1 too.
      expected=$((expected + 8))
      run "$step" --m 50 --n 200 --k 4160 --inputs integer --sim-sms 12                 # 2 tiles, S = 4 of 17: 5,4,4,4; C clipped
      run "$step" --m 50 --n 200 --k 4160 --inputs random --sim-sms 12 --sim-seed 3
      run "$step" --m 130 --n 72 --k 1792 --inputs integer                            # 2 row tiles, 7 k-tiles, sub-tile 1 beyond N
      run "$step" --m 130 --n 72 --k 1792 --inputs random --sim-seed 1
      run "$step" --m 128 --n 136 --k 192 --inputs integer                            # K of 3 k-steps: no whole k-tile
      run "$step" --m 256 --n 256 --k 3328 --inputs integer --sim-sms 4                 # 4 tiles, S = 1 of 13 k-tiles: stage parities wrap
      run "$step" --m 256 --n 256 --k 3328 --inputs random --sim-sms 4 --sim-seed 2
      run "$step" --m 128 --n 4096 --k 7168 --inputs integer                          # competition shape 2 itself (BLOCK_N 64, S = 2)
      # BLOCK_N forced both ways (the plan picks per shape): 64 on odd and even 64-column tiles
      # (the MMA reads the upper half of a scale atom at +2 TMEM columns), with and without splits.
      expected=$((expected + 6))
      TCG_STEP11_BLOCK_N=64 run "$step" --m 128 --n 256 --k 8512 --inputs integer --sim-sms 8    # 4 tiles, splits, tail
      TCG_STEP11_BLOCK_N=64 run "$step" --m 200 --n 200 --k 4160 --inputs random --sim-sms 40 --sim-seed 2
      TCG_STEP11_BLOCK_N=64 run "$step" --m 130 --n 72 --k 1792 --inputs integer          # N tile 1: 8 columns
      TCG_STEP11_BLOCK_N=128 run "$step" --m 128 --n 4096 --k 1792 --inputs integer --sim-sms 64
      TCG_STEP11_BLOCK_N=128 run "$step" --m 50 --n 200 --k 4160 --inputs random --sim-sms 40 --sim-seed 4
      TCG_STEP11_BLOCK_N=64 run "$step" --m 1 --n 1000 --k 4160 --inputs random --sim-sms 24 --sim-seed 6  # N % 8 != 0
      # A and B swapped (the kernel computes C^T, an N x M problem, and stores C column by column):
      # partial tiles of both operands, odd N (C's rows and a warp's 64 bytes off any alignment),
      # one k-step, parities that wrap, splits with a tail and in the wide inputs' order, BLOCK_N
      # forced both ways.
      expected=$((expected + 14))
      # S forced (the published designs of docs/timing_model.md), with step 10's copies and stores
      TCG_STEP11_SWAP_AB=1 TCG_STEP11_SPLITS=3 TCG_STEP11_WIDE_COPIES=0 TCG_STEP11_TMA_C=0 PLAN_HAS="S 3" \
        run "$step" --m 128 --n 256 --k 8512 --inputs wide --sim-sms 8 --sim-seed 1
      TCG_STEP11_SWAP_AB=1 run "$step" --m 128 --n 256 --k 8512 --inputs integer --sim-sms 8    # 2 tiles, 34 k-tiles, splits
      TCG_STEP11_SWAP_AB=1 run "$step" --m 200 --n 300 --k 4160 --inputs integer                # partial in M and N, S > 1
      TCG_STEP11_SWAP_AB=1 run "$step" --m 200 --n 300 --k 4160 --inputs random --sim-seed 1
      TCG_STEP11_SWAP_AB=1 run "$step" --m 130 --n 72 --k 1792 --inputs integer                # N < 128: 72 lanes of 128
      TCG_STEP11_SWAP_AB=1 run "$step" --m 128 --n 136 --k 64 --inputs integer                  # K of one k-step
      TCG_STEP11_SWAP_AB=1 run "$step" --m 256 --n 256 --k 3328 --inputs integer --sim-sms 4    # S = 1, 13 k-tiles: parities wrap
      TCG_STEP11_SWAP_AB=1 run "$step" --m 1 --n 1000 --k 4160 --inputs random --sim-sms 24 --sim-seed 6  # M = 1: 1 column
      TCG_STEP11_SWAP_AB=1 run "$step" --m 70 --n 1001 --k 1088 --inputs integer --sim-sms 24   # odd N, 1-step K tail
      TCG_STEP11_SWAP_AB=1 run "$step" --m 128 --n 1024 --k 7168 --inputs wide --sim-sms 37 --sim-seed 2
      TCG_STEP11_SWAP_AB=1 TCG_STEP11_BLOCK_N=128 run "$step" --m 128 --n 1792 --k 4096 --inputs integer --sim-sms 37
      TCG_STEP11_SWAP_AB=1 TCG_STEP11_BLOCK_N=64 run "$step" --m 200 --n 200 --k 4160 --inputs random --sim-sms 40 --sim-seed 2
      TCG_STEP11_SWAP_AB=1 run "$step" --m 128 --n 7168 --k 2048 --inputs integer               # competition shape 3
      # A bad value of the knob: one line, exit 2.
      if out=$(TCG_STEP11_SWAP_AB=yes ./"$step" --sim --m 128 --n 128 --k 256 2>&1); then rc=0; else rc=$?; fi
      if [ "$rc" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ]; then
        passed=$((passed + 1)); echo "ok    TCG_STEP11_SWAP_AB=yes $step: exit 2, '$out'"
      else
        failed=$((failed + 1)); printf 'FAIL  TCG_STEP11_SWAP_AB=yes %s: exit %s (want 2, one line)\n%s\n' "$step" "$rc" "$out"
      fi
      # The lever knobs of docs/11's table: each lever off alone and all off, on whole and partial
      # tiles, splits with a lone k-tile and the 1-step tail (per-k-tile scale copies of 1-4 atoms).
      expected=$((expected + 7))
      TCG_STEP11_WIDE_COPIES=0 run "$step" --m 128 --n 256 --k 1024 --inputs integer
      TCG_STEP11_WIDE_COPIES=0 run "$step" --m 128 --n 256 --k 8512 --inputs integer --sim-sms 8    # S = 3, tail
      TCG_STEP11_WIDE_COPIES=0 run "$step" --m 50 --n 200 --k 4160 --inputs random --sim-sms 12 --sim-seed 3
      TCG_STEP11_TMA_C=0 run "$step" --m 128 --n 256 --k 1024 --inputs integer
      TCG_STEP11_TMA_C=0 run "$step" --m 130 --n 72 --k 1792 --inputs random --sim-seed 1
      TCG_STEP11_WIDE_COPIES=0 TCG_STEP11_TMA_C=0 TCG_STEP11_BLOCK_N=128 run "$step" --m 50 --n 200 --k 4160 --inputs integer --sim-sms 12
      TCG_STEP11_WIDE_COPIES=0 TCG_STEP11_TMA_C=0 TCG_STEP11_BLOCK_N=64 run "$step" --m 200 --n 200 --k 4160 --inputs random --sim-sms 40 --sim-seed 2
      # A knob's bad value is a usage error: one line naming it, exit code 2.
      expected=$((expected + 1))
      err=$(TCG_STEP11_TMA_C=2 ./"$step" --sim --m 128 --n 256 --k 1024 2>&1 >/dev/null)
      if [ $? = 2 ] && grep -qx "$step: TCG_STEP11_TMA_C must be 0 or 1, got '2'" <<<"$err"; then
        passed=$((passed + 1)); echo "ok    TCG_STEP11_TMA_C=2 $step: exit code 2, one line"
      else
        failed=$((failed + 1)); printf 'FAIL  TCG_STEP11_TMA_C=2 %s: want exit code 2 and one error line\n%s\n' "$step" "$err"
      fi
    fi
    if [[ "$CLUSTER_REDUCE_STEPS" == *" $step "* ]]; then
      # Clusters of S CTAs per tile; rank r sums quarters [4r/S, 4(r+1)/S) from S - 1 bulk copies.
      # S and BLOCK_N forced (the plan takes S <= 2): clusters of 4 with odd k-tile counts and the
      # tail, BLOCK_N 64 with odd and even halves of a scale atom, partial tiles (rows past M in
      # a sender's quarter, columns past N), N % 8 != 0; every run launches twice (bitwise the same).
      expected=$((expected + 9))
      # 2 tiles of BLOCK_N 128 (the plan's choice with S forced), 34 k-tiles: 9,9,8,8
      TCG_STEP12_SPLITS=4 PLAN_HAS="BLOCK_N 128, S 4, MC 1, clusters of 4, 8 CTAs" \
        run "$step" --m 128 --n 256 --k 8512 --inputs integer --sim-sms 8
      TCG_STEP12_SPLITS=4 PLAN_HAS="BLOCK_N 128, S 4, MC 1, clusters of 4, 8 CTAs" \
        run "$step" --m 128 --n 256 --k 8512 --inputs random --sim-sms 8 --sim-seed 3
      TCG_STEP12_SPLITS=4 TCG_STEP12_BLOCK_N=64 PLAN_HAS="S 4, MC 1, clusters of 4, 16 CTAs" \
        run "$step" --m 50 --n 200 --k 4160 --inputs integer --sim-sms 16                            # 2 waves: 16 SMs hold 12
      TCG_STEP12_SPLITS=4 TCG_STEP12_BLOCK_N=128 PLAN_HAS="S 4" run "$step" --m 130 --n 72 --k 1792 --inputs random --sim-sms 8 --sim-seed 1
      TCG_STEP12_SPLITS=2 TCG_STEP12_BLOCK_N=64 PLAN_HAS="S 2" run "$step" --m 128 --n 256 --k 4160 --inputs integer --sim-sms 8
      TCG_STEP12_SPLITS=2 TCG_STEP12_BLOCK_N=128 PLAN_HAS="S 2" run "$step" --m 1 --n 1000 --k 4160 --inputs random --sim-sms 24 --sim-seed 6
      TCG_STEP12_SPLITS=1 PLAN_HAS="no clusters" run "$step" --m 200 --n 300 --k 1088 --inputs integer
      PLAN_HAS="BLOCK_N 64, S 2" run "$step" --m 128 --n 4096 --k 7168 --inputs integer            # competition shape 2
      PLAN_HAS="BLOCK_N 64, S 1" run "$step" --m 128 --n 7168 --k 2048 --inputs random --sim-seed 2 # competition shape 3
    fi
    if [[ "$MULTICAST_STEPS" == *" $step "* ]]; then
      # Clusters of MC x S: stage i's A and SFA multicast by the CTA of tile % MC == i % MC, slots
      # freed by MC commits. MC, S, BLOCK_N forced: clusters of 2, 4 and 8, odd k-tile counts (a
      # lone last k-tile: 2-D multicast boxes), K of one k-tile, two rows of tiles (M > 128),
      # columns past N and N % 8 != 0, stage parities wrapping; every run launches twice.
      expected=$((expected + 9))
      TCG_STEP13_MULTICAST=2 TCG_STEP13_SPLITS=1 PLAN_HAS="MC 2, clusters of 2" \
        run "$step" --m 200 --n 512 --k 4160 --inputs integer --sim-sms 8   # 17 k-tiles
      TCG_STEP13_MULTICAST=4 TCG_STEP13_SPLITS=2 PLAN_HAS="S 2, MC 4, clusters of 8" \
        run "$step" --m 128 --n 512 --k 8512 --inputs random --sim-sms 8 --sim-seed 3
      TCG_STEP13_MULTICAST=2 TCG_STEP13_SPLITS=4 TCG_STEP13_BLOCK_N=64 PLAN_HAS="S 4, MC 2, clusters of 8" \
        run "$step" --m 128 --n 256 --k 8512 --inputs integer --sim-sms 32
      TCG_STEP13_MULTICAST=4 TCG_STEP13_BLOCK_N=64 PLAN_HAS="MC 4" run "$step" --m 130 --n 256 --k 1792 --inputs random --sim-sms 8 --sim-seed 1
      TCG_STEP13_MULTICAST=2 PLAN_HAS="MC 2" run "$step" --m 1 --n 1004 --k 4160 --inputs random --sim-sms 24 --sim-seed 6   # N % 8 != 0: direct stores
      TCG_STEP13_MULTICAST=2 TCG_STEP13_SPLITS=1 PLAN_HAS="MC 2" run "$step" --m 128 --n 256 --k 256 --inputs integer      # K of one k-tile
      TCG_STEP13_MULTICAST=4 TCG_STEP13_SPLITS=1 PLAN_HAS="MC 4" \
        run "$step" --m 256 --n 512 --k 3328 --inputs integer --sim-sms 8  # 13 k-tiles, 2 rows
      PLAN_HAS="BLOCK_N 64, S 1, MC 4" run "$step" --m 128 --n 7168 --k 2048 --inputs integer               # competition shape 3
      PLAN_HAS="BLOCK_N 128, S 2, MC 2" run "$step" --m 128 --n 7168 --k 16384 --inputs random --sim-seed 2 --sim-sms 148  # shape 1
    fi
    continue
  fi
  if [[ "$GROUPED_STEPS" == *" $step "* ]]; then
    # The grouped GEMM: every run launches twice (bitwise the same C_g in every group). Groups with
    # M = 1, M = 0, M not a multiple of 8, more tiles than SMs (each CTA enters several groups and
    # rewrites its tensor-map slots), every (swap, BLOCK_N), an odd k-tile count (a lone k-tile in
    # a box of two), the ring wrapping within a tile; integer inputs bitwise, random, wide and the
    # competition's inputs within tolerance. Small N and K keep it cheap; the ranked presets at
    # full size take minutes (docs/16_nvfp4_grouped_gemm.md).
    expected=$((expected + 25))
    [ -x "./$step" ] || { echo "FAIL  $step: binary missing"; failed=$((failed + 1)); continue; }
    PLAN_HAS="A and B swapped" run "$step"                                   # default: 5 groups on 3 SMs
    for b in "TCG_STEP16_BLOCK_N=48 --" "TCG_STEP16_SWAP_AB=2 --" "-- --groups 80,,72" "-- --groups 80,-1" \
             "-- --groups 40 --k 320" "-- --m 64" "-- --groups g2-n4096-k1536 --n 512" \
             "TCG_STEP16_MULTICAST=4 TCG_STEP16_SWAP_AB=0 -- --groups 1,0,40 --n 512 --k 256" "TCG_STEP16_MULTICAST=4 -- --sim-sms 2"; do
      read -r -a words <<<"$b"; refused "$step" "${words[@]}"
    done
    G=(--groups 1,0,40,130,77,8,3 --n 200 --k 768 --sim-sms 2)                # M 1, 0, not % 8; 3 k-tiles; 2 SMs
    for sw in 0 1; do for bn in 32 64 128; do
      TCG_STEP16_SWAP_AB=$sw TCG_STEP16_BLOCK_N=$bn PLAN_HAS="BLOCK_N $bn" run "$step" "${G[@]}" --inputs integer
    done; done
    TCG_STEP16_SWAP_AB=1 TCG_STEP16_BLOCK_N=64 run "$step" "${G[@]}" --inputs random --sim-seed 2
    for mc in 2 4; do                                                         # Y (the tokens) multicast to MC CTAs
      TCG_STEP16_MULTICAST=$mc TCG_STEP16_BLOCK_N=32 PLAN_HAS="MC $mc" run "$step" --groups 1,0,40,130,77 --n 512 --k 768 --inputs integer --sim-sms 8
    done
    TCG_STEP16_MULTICAST=4 PLAN_HAS="MC 4" run "$step" --groups 1,0,40,130,77 --n 512 --k 768 --inputs wide --sim-sms 8 --sim-seed 6
    TCG_STEP16_SWAP_AB=0 TCG_STEP16_BLOCK_N=128 run "$step" "${G[@]}" --inputs wide --sim-seed 3
    run "$step" --groups 0,0 --n 128 --k 256                                   # every group empty: nothing written
    run "$step" --groups 130,3 --n 136 --k 4096 --inputs integer --sim-sms 2   # 16 k-tiles: the ring wraps in a tile
    run "$step" --groups 40,76,168,72,164,148,196,160 --n 256 --k 512 --inputs competition --sim-sms 5 --sim-seed 4
    run "$step" --groups 5,9,1,0,33,17,2,64,65,0,7,12,3,1,90,8,16,4,31,6 --n 128 --k 256 --inputs wide --sim-sms 3 --sim-seed 5
    continue
  fi
  if [[ "$DUAL_GEMM_STEPS" == *" $step "* ]]; then
    # The dual GEMM: every run launches twice (bitwise the same C). Integer inputs: x and y exact,
    # C bitwise but where the FP32 epilogue's error straddles an FP16 rounding boundary (dual_silu.cpp);
    # K kept small enough that few products pass 65504 (those are counted and must be Inf). The
    # competition's inputs are also checked with its rtol = atol = 1e-3. The ranked shapes run
    # scaled along N on an emulated GPU on which the plan is the full shape's (BLOCK_N 128, and
    # S 2 or 1); the full shapes take minutes: docs/15_nvfp4_dual_gemm.md.
    expected=$((expected + 41))
    [ -x "./$step" ] || { echo "FAIL  $step: binary missing"; failed=$((failed + 1)); continue; }
    PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 64" run "$step"                    # default: a pair per 256-row tile
    for b in "TCG_STEP15_SPLITS=4 --" "TCG_STEP15_BLOCK_N=256 --" "TCG_STEP15_SPLITS=2 -- --k 128" \
             "TCG_STEP15_SPLITS=2 -- --sim-sms 1" "TCG_STEP15_SPLITS=x -- --predict" \
             "TCG_STEP15_CTA_GROUP=3 --" "TCG_STEP15_CTA_GROUP=2 TCG_STEP15_SPLITS=2 --" \
             "TCG_STEP15_STAGE_KTILES=3 --" "TCG_STEP15_STAGE_KTILES=1 TCG_STEP15_CTA_GROUP=1 --"; do
      read -r -a words <<<"$b"; refused "$step" "${words[@]}"
    done
    run "$step" --m 200 --n 296 --k 1088 --inputs integer                  # partial M/N, 5 k-tiles (1-step tail), TMA-store C
    run "$step" --m 200 --n 296 --k 1088 --inputs random --sim-seed 1
    run "$step" --m 200 --n 296 --k 1088 --inputs competition --sim-seed 2
    run "$step" --m 200 --n 300 --k 4160 --inputs random --sim-seed 3      # N % 8 != 0: direct stores, 17 k-tiles
    run "$step" --m 128 --n 256 --k 256 --inputs integer                   # K of one k-tile
    run "$step" --m 1 --n 8 --k 64 --inputs integer                        # one k-step, one row
    TCG_STEP15_SPLITS=2 TCG_STEP15_BLOCK_N=64 PLAN_HAS="BLOCK_N 64, S 2" \
      run "$step" --m 130 --n 200 --k 2112 --inputs integer --sim-sms 16   # odd scale-atom halves, 9 k-tiles: 5 + 4
    TCG_STEP15_SPLITS=2 TCG_STEP15_BLOCK_N=64 PLAN_HAS="BLOCK_N 64, S 2" \
      run "$step" --m 130 --n 200 --k 2112 --inputs random --sim-sms 16 --sim-seed 4
    TCG_STEP15_SPLITS=2 PLAN_HAS="S 2" run "$step" --m 256 --n 256 --k 512 --inputs integer --sim-sms 8   # S = 2 of 2 k-tiles: a lone one each (2-D boxes)
    TCG_STEP15_SPLITS=1 PLAN_HAS="S 1" run "$step" --m 256 --n 256 --k 4160 --inputs integer --sim-sms 8  # ring wraps 4-5 times
    run "$step" --m 256 --n 256 --k 4160 --inputs wide --sim-sms 8 --sim-seed 5                         # sums round: the order shows
    run "$step" --m 256 --n 256 --k 4160 --inputs competition --sim-sms 8 --sim-seed 6
    PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 64, S 1, MC 1, clusters of 2, 16 CTAs" \
      run "$step" --m 256 --n 512 --k 7168 --inputs competition --sim-sms 28   # ranked shape 1 (256 x 4096 x 7168), N / 8
    PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 128, S 1, MC 1, clusters of 2, 16 CTAs, stages of 1 k-tile" \
      run "$step" --m 512 --n 512 --k 7168 --inputs competition --sim-sms 28   # ranked shape 2 (512 x 4096 x 7168), N / 8
    PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 64, S 1, MC 1, clusters of 2, 12 CTAs" \
      run "$step" --m 256 --n 384 --k 4096 --inputs competition --sim-sms 12   # ranked shape 3 (256 x 3072 x 4096), N / 8
    PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 128, S 1, MC 1, clusters of 2, 12 CTAs, stages of 1 k-tile" \
      run "$step" --m 512 --n 384 --k 7168 --inputs competition --sim-sms 12   # ranked shape 4 (512 x 3072 x 7168), N / 8
    run "$step" --m 256 --n 512 --k 1024 --inputs integer --sim-sms 28 --sim-seed 2   # 4 tiles of both products, S = 2
    # The 2-SM pair (cta_group::2): partial 256-row tiles and N, a K tail of one k-step and K of one
    # k-step, both tile widths (BLOCK_N 64: 3 stages, 128: 2, or 5 of one k-tile), the three input kinds.
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=64 PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 64" \
      run "$step" --m 300 --n 200 --k 1088 --inputs integer --sim-sms 8
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=64 run "$step" --m 300 --n 200 --k 1088 --inputs random --sim-sms 8 --sim-seed 3
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=64 run "$step" --m 383 --n 136 --k 256 --inputs integer --sim-sms 8   # K of one k-tile: one scale use
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=64 run "$step" --m 300 --n 200 --k 4160 --inputs competition --sim-sms 8 --sim-seed 5  # 5 scale uses over 3 slots
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=2 PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 128" \
      run "$step" --m 256 --n 256 --k 4160 --inputs integer --sim-sms 8   # ring wraps 4-5 times
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=2 run "$step" --m 200 --n 136 --k 64 --inputs integer --sim-sms 8
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=2 run "$step" --m 512 --n 256 --k 1024 --inputs competition --sim-sms 8 --sim-seed 4
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1 PLAN_HAS="2-SM pairs (tiles of 256 rows), BLOCK_N 128, S 1, MC 1, clusters of 2, 4 CTAs, stages of 1 k-tile" \
      run "$step" --m 256 --n 256 --k 4160 --inputs integer --sim-sms 8   # ring wraps 3-4 times (5 stages)
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1 run "$step" --m 200 --n 136 --k 64 --inputs integer --sim-sms 8
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1 run "$step" --m 512 --n 256 --k 1024 --inputs competition --sim-sms 8 --sim-seed 4
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1 run "$step" --m 300 --n 200 --k 1088 --inputs integer --sim-sms 8
    # Pairs of BLOCK_N 128 fuse the products (one MMA of N 256, the odd CTA loading B2): K of one
    # k-tile, a second N tile of 8 rows (B1's and B2's boxes clipped alike), random inputs.
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=2 run "$step" --m 300 --n 136 --k 256 --inputs integer --sim-sms 8
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1 run "$step" --m 300 --n 136 --k 256 --inputs integer --sim-sms 8
    TCG_STEP15_CTA_GROUP=2 TCG_STEP15_BLOCK_N=128 TCG_STEP15_STAGE_KTILES=1 run "$step" --m 383 --n 264 --k 1088 --inputs random --sim-sms 8 --sim-seed 2
    continue
  fi
  if [[ "$NVFP4_STEPS" == *" $step "* ]]; then
    # K % 64 == 0; k-tiles of 256 (4 MMA k-steps) over 6 stages. 4160 = 16 k-tiles + one of a
    # single k-step: every stage's parity wraps 2-3 times, and the last stage loads one scale atom.
    # M = 128 with large N and K: the competition shapes (128 x 7168 x 16384 ...) scaled down.
    expected=$((expected + 12))
    [ -x "./$step" ] || { echo "FAIL  $step: binary missing"; failed=$((failed + 1)); continue; }
    run "$step" --m 200 --n 300 --k 4160 --inputs competition --sim-seed 3  # the competition's inputs and check
    run "$step" --m 200 --n 300 --k 4160 --inputs integer               # partial M/N, 17 k-tiles, 1-step tail
    run "$step" --m 200 --n 300 --k 4160 --inputs random --sim-seed 1
    run "$step" --m 200 --n 300 --k 4160 --inputs random --sim-seed 2
    run "$step" --m 128 --n 256 --k 64 --inputs integer                 # K = one MMA k-step
    run "$step" --m 384 --n 136 --k 1088 --inputs random --sim-seed 3   # 3 row tiles, 1-step K tail
    run "$step" --m 1 --n 8 --k 64 --inputs integer                     # smallest problem
    run "$step" --m 256 --n 512 --k 512 --inputs integer --sim-seed 4   # whole tiles only
    run "$step" --m 128 --n 7168 --k 2048 --inputs integer              # competition-like, scaled down
    run "$step" --m 128 --n 4096 --k 1792 --inputs random --sim-seed 1  #   7 whole k-tiles
    run "$step" --m 128 --n 1536 --k 3136 --inputs random --sim-seed 2  #   13 k-tiles, 1-step tail
    run "$step" --m 128 --n 1000 --k 2560 --inputs random --sim-seed 3  #   N % 8 != 0: scalar stores
    continue
  fi
  expected=$((expected + 7))
  [ -x "./$step" ] || { echo "FAIL  $step: binary missing"; failed=$((failed + 1)); continue; }
  run "$step" --m 200 --n 300 --k 1096 --inputs integer               # partial M/N, 18 k-tiles
  run "$step" --m 200 --n 300 --k 1096 --inputs random --sim-seed 1
  run "$step" --m 200 --n 300 --k 1096 --inputs random --sim-seed 2
  run "$step" --m 128 --n 256 --k 64 --inputs integer                 # K = one 64-wide tile
  run "$step" --m 384 --n 136 --k 200 --inputs random --sim-seed 3    # 3 row tiles, K tail
  run "$step" --m 1 --n 8 --k 8 --inputs integer                      # smallest problem
  run "$step" --m 256 --n 512 --k 512 --inputs integer --sim-seed 4   # whole tiles only
  if [[ "$PAIR_STEPS" == *" $step "* ]]; then
    expected=$((expected + 6))
    run "$step" --m 129 --n 300 --k 1096 --inputs integer               # peer CTA: 1 valid row
    run "$step" --m 129 --n 300 --k 1096 --inputs random --sim-seed 3
    run "$step" --m 257 --n 136 --k 200 --inputs integer --sim-seed 4   # 2nd pair: leader 1 row, peer none
    run "$step" --m 257 --n 136 --k 200 --inputs random --sim-seed 1
    run "$step" --m 383 --n 520 --k 1096 --inputs integer --sim-seed 2  # 2nd pair: leader 127 rows, peer none
    run "$step" --m 383 --n 520 --k 456 --inputs random --sim-seed 2
  fi
  if [[ "$PERSISTENT_STEPS" == *" $step "* ]]; then
    expected=$((expected + 12))
    run "$step" --m 512 --n 512 --k 512 --inputs integer --sim-sms 8                  # 4 tiles on 4 pairs: one each
    run "$step" --m 1024 --n 768 --k 1096 --inputs integer --sim-sms 4 --sim-seed 4  # 12 tiles on 2 pairs: 6 each,
    run "$step" --m 1024 --n 768 --k 1096 --inputs random --sim-sms 4 --sim-seed 1   #   18 k-tiles per tile over 7 stages
    run "$step" --m 1024 --n 768 --k 1096 --inputs random --sim-sms 4 --sim-seed 2
    run "$step" --m 1024 --n 768 --k 1096 --inputs random --sim-sms 4 --sim-seed 3
    run "$step" --m 1000 --n 1500 --k 776 --inputs integer --sim-sms 10               # 24 tiles on 5 pairs: 5,5,5,5,4;
    run "$step" --m 1000 --n 1500 --k 776 --inputs random --sim-sms 10 --sim-seed 5   #   partial tiles, N % 8 != 0
    run "$step" --m 383 --n 520 --k 456 --inputs integer --sim-sms 16 --sim-seed 2    # 6 tiles, 8 SM pairs: grid of 6 pairs
    run "$step" --m 2304 --n 300 --k 136 --inputs integer --sim-sms 7 --sim-seed 4    # 18 tiles on 3 pairs (1 SM idle),
    run "$step" --m 2304 --n 300 --k 136 --inputs random --sim-sms 7 --sim-seed 3     #   bands of 8 and 1 pair rows
    run "$step" --m 1024 --n 1024 --k 64 --inputs integer --sim-sms 2                 # one pair, 16 tiles of one k-tile
    run "$step" --m 1024 --n 1024 --k 64 --inputs random --sim-sms 3 --sim-seed 2     # the same on 3 SMs (1 idle)
  fi
  if [[ "$TMA_STORE_STEPS" == *" $step "* ]]; then
    expected=$((expected + 10))
    run "$step" --m 200 --n 296 --k 1096 --inputs integer                             # partial M/N, 18 k-tiles
    run "$step" --m 200 --n 296 --k 1096 --inputs random --sim-seed 1
    run "$step" --m 200 --n 296 --k 1096 --inputs random --sim-seed 2
    run "$step" --m 200 --n 296 --k 1096 --inputs random --sim-seed 3
    run "$step" --m 129 --n 520 --k 64 --inputs integer --sim-seed 4                  # one k-tile, peer 1 row
    run "$step" --m 1000 --n 1496 --k 776 --inputs integer --sim-sms 10               # 24 tiles on 5 pairs, partial
    run "$step" --m 1000 --n 1496 --k 776 --inputs random --sim-sms 10 --sim-seed 5
    run "$step" --m 2304 --n 72 --k 136 --inputs integer --sim-sms 3 --sim-seed 4     # 9 tiles on 1 pair, N = 72
    run "$step" --m 2304 --n 72 --k 136 --inputs random --sim-sms 3 --sim-seed 2
    run "$step" --m 300 --n 264 --k 200 --inputs integer --sim-sms 16 --sim-seed 2    # 4 tiles, 8 SM pairs
  fi
  if [[ "$CLC_STEPS" == *" $step "* ]]; then
    expected=$((expected + 12))
    run_clc "$step" some --m 1024 --n 768 --k 1096 --inputs integer --sim-sms 4 --sim-seed 4  # 12 tiles, 2 pairs launched:
    run_clc "$step" some --m 1024 --n 768 --k 1096 --inputs random --sim-sms 4 --sim-seed 1   #   10 canceled, both rings wrap
    run_clc "$step" some --m 1024 --n 768 --k 1096 --inputs random --sim-sms 4 --sim-seed 2
    run_clc "$step" some --m 1024 --n 768 --k 1096 --inputs random --sim-sms 4 --sim-seed 3
    run_clc "$step" some --m 1000 --n 1496 --k 776 --inputs integer --sim-sms 10             # 24 partial tiles, 5 pairs
    run_clc "$step" some --m 1000 --n 1500 --k 776 --inputs random --sim-sms 10 --sim-seed 5 #   N % 8 != 0: direct stores
    run_clc "$step" some --m 2304 --n 72 --k 136 --inputs integer --sim-sms 3 --sim-seed 4   # 9 tiles on 1 pair, N = 72
    run_clc "$step" some --m 1024 --n 1024 --k 64 --inputs integer --sim-sms 2               # 16 tiles of one k-tile, 1 pair
    run_clc "$step" some --m 1024 --n 1024 --k 64 --inputs random --sim-sms 6 --sim-seed 8   #   3 pairs, out-of-order cancels
    run_clc "$step" some --m 129 --n 520 --k 64 --inputs integer --sim-sms 2 --sim-seed 4    # 3 tiles, peer 1 row, 1 k-tile
    run_clc "$step" none --m 512 --n 512 --k 512 --inputs integer --sim-sms 16               # 4 tiles, 8 SM pairs: all
    run_clc "$step" none --m 300 --n 264 --k 200 --inputs random --sim-sms 16 --sim-seed 2   #   launched, every cancel fails
  fi
  if [[ "$PAIR_MULTICAST_STEPS" == *" $step "* ]]; then
    # Clusters of P pairs along M: stage kt's B halves multicast by pair kt % P, a slot freed by P
    # commits, tiles in supergroups of G cluster rows. P and G forced: clusters of 4 and 8, cluster
    # tiles reaching past M (pairs with no rows: 5 pair rows in clusters of 2 and of 4, 9 in
    # clusters of 4), groups the rows do not fill, partial tiles, N % 8 != 0 (direct stores), one
    # k-tile (the turn restarts every tile), try_cancel handing out cluster tiles or none; every
    # run launches twice and requires bitwise the same C (the step's repeat check).
    expected=$((expected + 18))
    PLAN_HAS="P 1 (clusters of 2 CTAs)" run "$step"   # the default run: every P ties in the model, the plan keeps 1
    TCG_STEP14_PAIRS=4 PLAN_HAS="P 4 (clusters of 8 CTAs, B multicast)" run "$step"  # the default problem, multicast
    TCG_STEP14_PAIRS=2 TCG_STEP14_GROUP=1 PLAN_HAS="P 2" run "$step" --m 1000 --n 1496 --k 776 --inputs integer --sim-sms 8
    TCG_STEP14_PAIRS=2 TCG_STEP14_GROUP=2 run "$step" --m 1000 --n 1496 --k 776 --inputs random --sim-sms 8 --sim-seed 1
    TCG_STEP14_PAIRS=2 run "$step" --m 1200 --n 768 --k 1096 --inputs integer --sim-sms 8 --sim-seed 4   # 5 pair rows: the 3rd cluster row's 2nd pair has none
    TCG_STEP14_PAIRS=2 TCG_STEP14_GROUP=2 run "$step" --m 1200 --n 768 --k 1096 --inputs random --sim-sms 12 --sim-seed 3  # groups of 2 of 3 rows
    TCG_STEP14_PAIRS=4 PLAN_HAS="P 4" run "$step" --m 1200 --n 520 --k 1096 --inputs integer --sim-sms 8   # 5 pair rows in clusters of 4
    TCG_STEP14_PAIRS=4 TCG_STEP14_GROUP=2 run "$step" --m 2304 --n 520 --k 136 --inputs random --sim-sms 16 --sim-seed 2  # 9 pair rows, 3 cluster rows
    TCG_STEP14_PAIRS=4 run "$step" --m 1000 --n 1500 --k 776 --inputs random --sim-sms 8 --sim-seed 5    # N % 8 != 0: direct stores
    TCG_STEP14_PAIRS=2 run "$step" --m 1024 --n 1024 --k 64 --inputs integer --sim-sms 4                 # one k-tile: 8 cluster tiles on one cluster
    TCG_STEP14_PAIRS=1 PLAN_HAS="P 1" run "$step" --m 1000 --n 1496 --k 776 --inputs integer --sim-sms 10  # step 09's kernel, with the order
    TCG_STEP14_PAIRS=2 run_clc "$step" some --m 1300 --n 520 --k 1096 --inputs integer --sim-sms 8
    TCG_STEP14_PAIRS=2 run_clc "$step" none --m 512 --n 512 --k 512 --inputs integer --sim-sms 16
    for b in "TCG_STEP14_PAIRS=3 --" "TCG_STEP14_PAIRS=4 -- --sim-sms 6" "TCG_STEP14_GROUP=0 --" "TCG_STEP14_GROUP=5 -- --m 512" \
             "TCG_STEP14_GROUP=two --"; do read -r -a words <<<"$b"; refused "$step" "${words[@]}"; done
  fi
done
echo "emulator step runs: $passed passed, $failed failed"
# A run that executed nothing must not pass: 7 runs per step (13 for a pair step, 25 for a
# persistent pair step, 12 for an NVFP4 step, 10 more for a TMA-store step, 12 more for a CLC
# step, 30 for a split-K step, 23 for the dual GEMM), at least one step.
if [ $# -eq 0 ] || [ "$passed" -ne "$expected" ]; then echo "expected $expected passing runs for $# step(s)"; exit 1; fi
[ "$failed" = 0 ]
