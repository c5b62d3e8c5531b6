#!/usr/bin/env bash
# break_it.sh — the "Break it" experiments of docs/0N_*.md, run as tests.
#
# Each case applies one small source change to a step (exact text replacements that must each
# match exactly once, so the test fails loudly if the kernel is edited and the case goes
# stale), rebuilds that step for the emulator only (g++ -DTCG_SIM -DTCG_SIM_MAIN), runs it,
# and asserts that the emulator catches the bug:
#   deadlock     the run exits 1 with the emulator's deadlock report
#   diag:TEXT    the run exits 1 with an emulator diagnostic containing TEXT
#   wrong        under at least one of the scheduler seeds 1..6, the run exits 1 because the
#                result is wrong, or differs between two launches (step 10's repeat check), or an
#                emulator diagnostic fires; no run may crash
#   every:EXPECT EXPECT under every one of the seeds 1..6, not just one (a rule checked as a
#                protocol, whatever the interleaving did)
#   pass         a correct change: under every seed 1..6 the run verifies (exit 0). A check that
#                refuses one of these refuses a correct program
# Each case runs with SHAPE below, or with the arguments in ARGS when the case sets it
# (ARGS="--m ... --sim-sms N" case_ ...): a case that needs several tiles per CTA pair (step 06)
# passes its own shape and emulated SM count. KNOBS="TCG_STEP12_SPLITS=4 ..." sets a step's
# environment knobs for the case's runs (the plan a case needs, e.g. clusters of 4).
# Usage: tests/steps/break_it.sh [--build-only|--diff] [CASE-NAME-SUBSTRING]
#   --build-only NAME  only write build/break_it/NAME.cu and build NAME (tests/checks/docs_quotes.py
#                      runs the commands the pages quote with them)
#   --diff NAME        print the change of case NAME as a diff against the current step source
#                      (the diffs the pages quote)
#   --run NAME SEED    build NAME if it is older than its sources, run it under SEED with its
#                      case's arguments, print the command line and the output from the first
#                      "tcsim:" or "check:" line on (no timings; the outputs the pages quote)
set -u
cd "$(dirname "$0")/../.."
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
OUT=build/break_it
mkdir -p "$OUT"
read -r -a COMMON_OBJS <<<"$(make -s --no-print-directory common-objs)" || exit 1
read -r -a LINK_LIBS <<<"$(make -s --no-print-directory link-libs)" || exit 1
[ ${#COMMON_OBJS[@]} -gt 0 ] || { echo "break_it.sh: make common-objs printed nothing"; exit 1; }
SHAPE=(--m 256 --n 256 --k 1024 --inputs integer)
build_only=0 diff_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
if [ "${1:-}" = --diff ]; then diff_only=1; build_only=1; shift; fi
run_seed=""
if [ "${1:-}" = --run ]; then run_seed=${3:?usage: break_it.sh --run NAME SEED}; build_only=1; shift; fi
filter=${1:-}
passed=0 failed=0
# In the plain test mode the cases run BREAK_IT_JOBS at a time (default: the CPU count; each
# builds and runs its own binary under build/break_it/), their lines printed in the order of the
# cases; --build-only, --diff and --run take one case at a time.
jobs_max=${BREAK_IT_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || { echo "break_it.sh: BREAK_IT_JOBS must be a positive integer, not '$jobs_max'"; exit 2; }
parallel=0
[ "$build_only" = 0 ] && [ "$jobs_max" -gt 1 ] && parallel=1
n_cases=0
if [ $parallel = 1 ]; then
  par_dir=$(mktemp -d) || exit 2
  trap 'rm -rf "$par_dir"' EXIT
fi

# case_ NAME SOURCE EXPECT OLD NEW [OLD2 NEW2 ...]: in parallel, case_one in a subshell whose
# lines and counts go to files that collect_cases prints and adds up at the end.
case_() {
  [[ -n "$filter" && "$1" != *"$filter"* ]] && return
  if [ $parallel = 0 ]; then case_one "$@"; return; fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  local i=$n_cases
  n_cases=$((n_cases + 1))
  ( passed=0 failed=0; case_one "$@"; echo "$passed $failed" >"$par_dir/count.$i" ) >"$par_dir/out.$i" 2>&1 &
}
collect_cases() {
  wait
  local i p f
  for ((i = 0; i < n_cases; ++i)); do
    cat "$par_dir/out.$i"
    if read -r p f <"$par_dir/count.$i" 2>/dev/null; then
      passed=$((passed + p)) failed=$((failed + f))
    else
      failed=$((failed + 1)); echo "FAIL  case $i: its subshell left no count"
    fi
  done
}

case_one() {
  local name=$1 src=$2 expect=$3
  shift 3
  [[ -n "$filter" && "$name" != *"$filter"* ]] && return
  [[ $build_only = 1 && "$name" != "$filter" ]] && return
  local mod="$OUT/$name.cu" bin="$OUT/$name"
  if ! python3 - "$src" "$mod" "$@" <<'EOF'
import sys
src, dst, *edits = sys.argv[1:]
text = open(src).read()
for old, new in zip(edits[0::2], edits[1::2]):
    n = text.count(old)
    if n != 1:
        sys.exit(f"the text to replace occurs {n} times in {src} (expected exactly once): {old!r}")
    text = text.replace(old, new)
# keep #include "../common/..." working from build/break_it/
open(dst, "w").write(text.replace('#include "../common/', '#include "common/'))
EOF
  then
    echo "FAIL  $name: could not apply the change"; failed=$((failed + 1)); return
  fi
  if [ $diff_only = 1 ]; then
    python3 - "$src" "$mod" <<'EOF'
import difflib, sys
src, mod = sys.argv[1:]
a = open(src).read().replace('#include "../common/', '#include "common/').splitlines()
b = open(mod).read().splitlines()
for line in list(difflib.unified_diff(a, b, lineterm="", n=0))[2:]:
    print(line)
EOF
    passed=$((passed + 1)); return
  fi
  if [ -n "$run_seed" ] && [ -x "$bin" ] && [ -z "$(find "$src" "$0" "${COMMON_OBJS[@]}" -newer "$bin" 2>/dev/null | head -1)" ]; then
    :  # the binary is newer than its step, this script and common/: no rebuild
  elif ! g++ -std=c++17 -O1 -w -Wno-psabi -I. -I"$CUDA_HOME/include" -DTCG_SIM -DTCG_SIM_MAIN -x c++ "$mod" -x none \
      "${COMMON_OBJS[@]}" \
      "${LINK_LIBS[@]}" -o "$bin" 2>"$OUT/$name.log"; then
    echo "FAIL  $name: does not compile"; cat "$OUT/$name.log"; failed=$((failed + 1)); return
  fi
  if [ -n "$run_seed" ]; then
    if [ -n "${ARGS:-}" ]; then read -r -a run_args <<<"$ARGS"; else run_args=("${SHAPE[@]}"); fi
    read -r -a knobs <<<"${KNOBS:-}"
    echo "\$ ${KNOBS:+$KNOBS }$bin --sim ${run_args[*]} --sim-seed $run_seed"
    env "${knobs[@]}" "$bin" --sim "${run_args[@]}" --sim-seed "$run_seed" 2>&1 | sed -n '/^\(tcsim\|check\|step[0-9]*: error\):/,$p' | grep -v '^\(wall\|emulated\):'
    passed=$((passed + 1)); return
  fi
  if [ $build_only = 1 ]; then echo "built $bin"; passed=$((passed + 1)); return; fi
  local ok=0 how="" out rc seed run_args knobs every=0 hits=0 missed=""
  read -r -a knobs <<<"${KNOBS:-}"
  if [ -n "${ARGS:-}" ]; then read -r -a run_args <<<"$ARGS"; else run_args=("${SHAPE[@]}"); fi
  if [[ $expect == every:* ]]; then every=1; expect=${expect#every:}; fi
  [ "$expect" = pass ] && every=1  # a correct change must verify under every seed
  for seed in 1 2 3 4 5 6; do
    out=$(env "${knobs[@]}" "$bin" --sim "${run_args[@]}" --sim-seed $seed 2>&1); rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then how="seed $seed: crashed (exit $rc)"; ok=0; hits=-99; break; fi
    ok=0
    case $expect in
      deadlock)
        if [ $rc = 1 ] && grep -q "tcsim: deadlock" <<<"$out"; then ok=1; how="seed $seed: deadlock report"; fi ;;
      diag:*)
        if [ $rc = 1 ] && grep -qF "${expect#diag:}" <<<"$out"; then ok=1; how="seed $seed: \"${expect#diag:}\""; fi ;;
      wrong)
        if [ $rc = 1 ] && grep -qE "check: +FAIL|tcsim: |depends on the order in which the CTAs ran" <<<"$out"; then
          ok=1; how="seed $seed: $(grep -oE 'FAIL: [0-9]+ of [0-9]+ elements wrong|tcsim: [A-Za-z0-9_ -]+|C\[[0-9]+\]\[[0-9]+\] is 0x[0-9a-f]+ in the first launch and 0x[0-9a-f]+ in the second' <<<"$out" | head -1)"; fi ;;
      pass)
        if [ $rc = 0 ]; then ok=1; how="seed $seed: verified"
        else how="seed $seed: refused: $(grep -m1 -oE 'FAIL: [0-9]+ of [0-9]+ elements wrong|tcsim: .*' <<<"$out")"; fi ;;
    esac
    if [ $every = 1 ]; then
      if [ $ok = 1 ]; then hits=$((hits + 1)); else missed="$missed $seed"; fi
      continue
    fi
    [ $ok = 1 ] && break
  done
  if [ $every = 1 ]; then
    if [ $hits = 6 ]; then ok=1; how="every seed 1-6: ${how#seed 6: }"; else ok=0; how="${how:+$how; }missed under seed(s)$missed"; fi
  fi
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
    if [ "$expect" = pass ]; then echo "ok    $name — a correct change, not refused ($how)"; else echo "ok    $name — caught ($how)"; fi
  else
    failed=$((failed + 1)); echo "FAIL  $name — expected $expect, not caught ${how:+($how)}"; echo "$out" | tail -5
  fi
}

S1=steps/step01_basic_tcgen05.cu
S2=steps/step02_swizzle128.cu
S3=steps/step03_pipeline.cu
S4=steps/step04_warp_specialized.cu
S5=steps/step05_2sm_mma.cu

# step 01
case_ s01-no-full-wait $S1 wrong \
  '      mbarrier_wait_parity(tma_full_bar, phase, trace.span_elected(Phase::kWaitTmaFull, 0));
' ''
case_ s01-expect-tx-short $S1 "diag:tx-count underflow" \
  'mbarrier_arrive_expect_tx(tma_full_bar, STAGE_BYTES);' 'mbarrier_arrive_expect_tx(tma_full_bar, STAGE_BYTES - 1024);'
case_ s01-expect-tx-long $S1 deadlock \
  'mbarrier_arrive_expect_tx(tma_full_bar, STAGE_BYTES);' 'mbarrier_arrive_expect_tx(tma_full_bar, STAGE_BYTES + 16);'
case_ s01-lbo-sbo-swapped $S1 wrong \
  'CORE_COLUMN_A, 128, Layout::kNone' '128, CORE_COLUMN_A, Layout::kNone'
case_ s01-always-accumulate $S1 "every:diag:MMA accumulates into TMEM that no MMA wrote" \
  '/*accumulate=*/kt > 0 || s > 0' '/*accumulate=*/true'
case_ s01-no-dealloc $S1 "diag:TMEM leak" \
  '  if (warp == 0) tmem_dealloc(tmem_accum, TMEM_COLS);' ''
case_ s01-no-fence-after-handoff $S1 "diag:missing tcgen05.fence::after_thread_sync" \
  '  __syncthreads();
  tcgen05_fence_after_thread_sync();

  // Epilogue.' '  __syncthreads();

  // Epilogue.'
case_ s01-no-fence-before-teardown $S1 "diag:missing tcgen05.fence::before_thread_sync" \
  '  // Every warp must be done reading TMEM before it is freed.
  tcgen05_fence_before_thread_sync();' '  // Every warp must be done reading TMEM before it is freed.'
# step 02
case_ s02-descriptor-without-swizzle $S2 "every:diag:MMA operand layout differs from what the TMA wrote" \
  'a_tile + i * ATOM_COLUMN_A + s * 32, 16, SBO_SW128, Layout::kSwizzle128B' \
  'a_tile + i * ATOM_COLUMN_A + s * 32, 16, SBO_SW128, Layout::kNone'
case_ s02-k-step-16-bytes $S2 wrong \
  'a_tile + i * ATOM_COLUMN_A + s * 32,' 'a_tile + i * ATOM_COLUMN_A + s * 16,'
# The SBO of a 128B-swizzled K-major tile whose box rows are 128 bytes can only be 1024.
case_ s02-sbo-half-an-atom $S2 "every:diag:must be 1024, not 512" \
  'constexpr uint32_t SBO_SW128 = 8 * 128;' 'constexpr uint32_t SBO_SW128 = 4 * 128;  // "four rows of 128 bytes"'
# step 03
case_ s03-no-full-wait $S3 "every:diag:shared memory read while a copy into it is in flight" \
  '      mbarrier_wait_parity(tma_full_bar(s), parity(kt), trace.span_elected(Phase::kWaitTmaFull, s));
' ''
case_ s03-refill-without-waiting $S3 wrong \
  '        mbarrier_wait_parity(mma_done_bar(prev % NUM_STAGES), parity(prev),
                             trace.span_elected(Phase::kWaitMmaDone, prev % NUM_STAGES));
' ''
# step 04
case_ s04-producer-parity-flipped $S4 deadlock \
  'uint32_t empty_parity = 1;' 'uint32_t empty_parity = 0;'
case_ s04-no-full-wait $S4 "every:diag:shared memory read while a copy into it is in flight" \
  '        mbarrier_wait_parity(tma_full_bar(s), full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
' ''
case_ s04-expect-tx-half $S4 "diag:tx-count underflow" \
  'mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES);' 'mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES / 2);'
case_ s04-epilogue-ignores-lane-quarters $S4 "diag:lane quarter" \
  'tmem_offset(tmem_accum, quarter * 32, col)' 'tmem_offset(tmem_accum, (warp - 2) * 32, col)'
case_ s04-epilogue-does-not-wait $S4 wrong \
  '    mbarrier_wait_parity(mainloop_done_bar, 0, trace.span(Phase::kWaitMainloopDone));
' ''
case_ s04-no-fence-after-full-wait $S4 "diag:missing tcgen05.fence::after_thread_sync" \
  'full_parity, trace.span_elected(Phase::kWaitTmaFull, s));
        tcgen05_fence_after_thread_sync();' 'full_parity, trace.span_elected(Phase::kWaitTmaFull, s));'
case_ s04-no-wait-ld $S4 "every:diag:tcgen05.ld registers used before tcgen05.wait::ld" \
  '      tmem_wait_ld(r);
      store_c_chunk8' '      store_c_chunk8'
case_ s04-epilogue-loads-before-waiting $S4 wrong \
  '    mbarrier_wait_parity(mainloop_done_bar, 0, trace.span(Phase::kWaitMainloopDone));
    tcgen05_fence_after_thread_sync();
' '' \
  '      tmem_wait_ld(r);' '      mbarrier_wait_parity(mainloop_done_bar, 0);
      tcgen05_fence_after_thread_sync();
      tmem_wait_ld(r);'

case_ s04-no-drain $S4 "every:diag:CTA exited with asynchronous work" \
  '      for (int kt = num_k_tiles; kt < num_k_tiles + NUM_STAGES; ++kt) {
        const int s = kt % NUM_STAGES;
        mbarrier_wait_parity(mma_done_bar(s), empty_parity);' \
  '      for (int kt = num_k_tiles; kt < num_k_tiles + NUM_STAGES && false; ++kt) {
        const int s = kt % NUM_STAGES;
        mbarrier_wait_parity(mma_done_bar(s), empty_parity);'
# The drain that skips the last stage's wait: that stage's commit arrival is not ordered
# before the CTA's exit. Reported under every
# seed, whether it is still in flight or landed unobserved.
case_ s04-drain-skips-last-stage $S4 "every:diag:CTA exited with asynchronous work" \
  'for (int kt = num_k_tiles; kt < num_k_tiles + NUM_STAGES; ++kt) {' \
  'for (int kt = num_k_tiles; kt < num_k_tiles + NUM_STAGES - 1; ++kt) {  // "the last stage is the final commit'"'"'s"'
# Mistakes of meaning that used to end in "FAIL ... NaN", named at the instruction under every seed.
case_ s04-idesc-n-half-of-block-n $S4 "every:diag:tcgen05.ld of TMEM that no MMA or copy wrote" \
  'make_idesc_bf16_f32(BLOCK_M, BLOCK_N)' 'make_idesc_bf16_f32(BLOCK_M, 128)  /* "N = 128 is the usual tile" */'
case_ s04-always-accumulate $S4 "every:diag:MMA accumulates into TMEM that no MMA wrote" \
  '/*accumulate=*/kt > 0 || i > 0 || ks > 0' '/*accumulate=*/true'
case_ s04-tensor-map-without-swizzle $S4 "every:diag:MMA operand layout differs from what the TMA wrote" \
  '  t.swizzle = TmaSwizzle::k128B;' '  t.swizzle = TmaSwizzle::kNone;'
# Correct changes a learner tries: none may be refused (every seed must verify).
case_ s04-two-stages $S4 pass 'constexpr int NUM_STAGES = 4;' 'constexpr int NUM_STAGES = 2;'
case_ s04-three-stages $S4 pass 'constexpr int NUM_STAGES = 4;' 'constexpr int NUM_STAGES = 3;'
case_ s04-block-n-128 $S4 pass 'constexpr int BLOCK_N = 256;' 'constexpr int BLOCK_N = 128;'
case_ s04-512-tmem-columns $S4 pass 'constexpr uint32_t TMEM_COLS = 256;' 'constexpr uint32_t TMEM_COLS = 512;'
case_ s04-block-k-128 $S4 pass 'constexpr int BLOCK_K = 64; ' 'constexpr int BLOCK_K = 128;' \
  'constexpr int NUM_STAGES = 4;' 'constexpr int NUM_STAGES = 2;'
case_ s04-expect-tx-after-copies $S4 pass \
  '        mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES);
        for (int i = 0; i < BLOCK_K / ATOM_K; ++i) {
          tma_load_2d(a_tile(s) + i * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + i * ATOM_K, m0, tma_full_bar(s));
          tma_load_2d(b_tile(s) + i * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + i * ATOM_K, n0, tma_full_bar(s));
        }' '        for (int i = 0; i < BLOCK_K / ATOM_K; ++i) {
          tma_load_2d(a_tile(s) + i * ATOM_COLUMN_A, &tmap_a, kt * BLOCK_K + i * ATOM_K, m0, tma_full_bar(s));
          tma_load_2d(b_tile(s) + i * ATOM_COLUMN_B, &tmap_b, kt * BLOCK_K + i * ATOM_K, n0, tma_full_bar(s));
        }
        mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES);  // "after the copies"'
case_ s04-tmem-column-zero $S4 "diag:TMEM access outside the allocation" \
  'const uint32_t tmem_accum = tmem_address_from_slot(tmem_slot);' 'const uint32_t tmem_accum = 0;  // "the allocation starts at column 0"'
case_ s04-no-fence-mbarrier-init $S4 "diag:mbarrier init not fenced for the async proxy" \
  '    mbarrier_init(mainloop_done_bar, 1);  // one arrival: the final tcgen05.commit
    fence_mbarrier_init();' '    mbarrier_init(mainloop_done_bar, 1);  // one arrival: the final tcgen05.commit'
# step 03
case_ s03-no-drain $S3 "every:diag:CTA exited with asynchronous work" \
  'for (int kt = num_k_tiles > NUM_STAGES ? num_k_tiles - NUM_STAGES : 0; kt < num_k_tiles; ++kt)' \
  'for (int kt = num_k_tiles - 1; kt < num_k_tiles; ++kt)'

# step 05 (SHAPE is one CTA pair: 2 CTAs, 16 k-tiles over 7 stages)
case_ s05-peer-issues-mmas $S5 deadlock \
  'if (is_leader && elect_one_sync())' 'if (elect_one_sync())'
case_ s05-commit-not-multicast $S5 deadlock \
  'mma_commit_2sm_multicast(mma_done_bar(s), PAIR_MASK);' 'mma_commit_2sm(mma_done_bar(s));'
case_ s05-mainloop-done-leader-only $S5 deadlock \
  'mma_commit_2sm_multicast(mainloop_done_bar, PAIR_MASK);' 'mma_commit_2sm_multicast(mainloop_done_bar, 0b01);'
case_ s05-each-cta-tracks-own-stage $S5 "every:diag:shared memory read while a copy into it is in flight" \
  'if (is_leader) mbarrier_arrive_expect_tx(tma_full_bar(s), PAIR_STAGE_BYTES);' \
  'mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES);' \
  'const uint32_t leader_full_bar = mapa_shared_cluster(tma_full_bar(s), leader_rank);' \
  'const uint32_t leader_full_bar = tma_full_bar(s);'
case_ s05-expect-tx-one-cta $S5 "every:diag:Likely causes, in order: (1) the expect_tx byte count is too small" \
  'mbarrier_arrive_expect_tx(tma_full_bar(s), PAIR_STAGE_BYTES);' 'mbarrier_arrive_expect_tx(tma_full_bar(s), STAGE_BYTES);'
case_ s05-b-rows-not-split $S5 wrong \
  'b_row0 = tile.b_row0;' 'b_row0 = tile.n0;'
case_ s05-no-cluster-sync-after-init $S5 "diag:mbarrier used by another CTA before its init was published" \
  '  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum' '  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum'
# Reported at the pair dealloc (issue 31): the peer's epilogue loads are not ordered before the
# leader's tcgen05.dealloc of the pair's columns without the cluster barrier, under every seed.
case_ s05-no-cluster-sync-before-exit $S5 "every:diag:TMEM deallocated under a pending tcgen05.ld" \
  '  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc_2sm' '  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc_2sm'
# .aligned barriers in a diverged warp (PTX ISA §9.7.13.3): the teardown's cluster barrier in an
# elect_one_sync() branch (one lane of each warp), and a warp split across two branches that each
# reach a cluster barrier: both named, with both places, under every seed.
case_ s05-cluster-sync-in-elect $S5 "every:diag:divergent warp at a .sync.aligned instruction" \
  '  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc_2sm' '  tcgen05_fence_before_thread_sync();
  if (elect_one_sync()) cluster_sync();  // "one thread per warp is enough"
  tcgen05_fence_after_thread_sync();
  if (warp == 1) tmem_dealloc_2sm'
case_ s05-warp-split-at-cluster-sync $S5 "every:diag:divergent warp at a .sync.aligned instruction" \
  '  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum' '  tcgen05_fence_before_thread_sync();
  if (lane < 16) cluster_sync();  // "each half of the warp reaches the barrier"
  else cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_accum'
case_ s05-alloc-cta-group-1 $S5 "diag:mixed .cta_group in one kernel" \
  '    tmem_alloc_2sm(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit_2sm();' '    tmem_alloc(smem_base + TMEM_SLOT, TMEM_COLS);
    tmem_relinquish_alloc_permit();'
case_ s05-idesc-m128 $S5 wrong \
  'make_idesc_bf16_f32(PAIR_M, BLOCK_N)' 'make_idesc_bf16_f32(BLOCK_M, BLOCK_N)'
case_ s05-dealloc-in-leader-only $S5 "diag:TMEM leak" \
  'if (warp == 1) tmem_dealloc_2sm' 'if (warp == 1 && is_leader) tmem_dealloc_2sm'

# step 06. SHAPE has a single tile, so these run 8 tiles of 256 x 256 on 2 CTA pairs (--sim-sms 4):
# 4 tiles per pair, each accumulator used twice, 16 k-tiles per pair over the 7 stages.
S6=steps/step06_persistent.cu
S6_ARGS="--m 1024 --n 512 --k 256 --inputs integer --sim-sms 4"
ARGS=$S6_ARGS case_ s06-release-before-last-load $S6 wrong \
  '        uint32_t r[16];
' '        uint32_t r[16];
        if (col == BLOCK_N - 16) {  // "only one chunk left: let the MMA warp start on this accumulator"
          tcgen05_fence_before_thread_sync();
          if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
        }
' \
  '      tcgen05_fence_before_thread_sync();
      if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
      accum.advance' '      accum.advance'
# The subtler form: released after the last tcgen05.ld is issued but before its tcgen05.wait::ld.
# The fence does not wait for the load (ld -> mma is not a pipelined pair, PTX ISA §9.7.16.6.2;
# the load must complete before the signal, §9.7.16.6.4.4): a TMEM hazard at the next MMA into
# that accumulator, under every seed (before issue 22 no seed of 1-12 caught it).
ARGS=$S6_ARGS case_ s06-release-before-last-wait-ld $S6 "diag:TMEM hazard between asynchronous tcgen05 operations" \
  '        tmem_ld_32x32b_x16(tmem_offset(acc_tmem, 0, uint32_t(col)), r);
' '        tmem_ld_32x32b_x16(tmem_offset(acc_tmem, 0, uint32_t(col)), r);
        if (col == BLOCK_N - 16) {  // "the last load is issued: the accumulator can go"
          tcgen05_fence_before_thread_sync();
          if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
        }
' \
  '      tcgen05_fence_before_thread_sync();
      if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
      accum.advance' '      accum.advance'
ARGS=$S6_ARGS case_ s06-mma-ignores-tmem-empty $S6 wrong \
  '        mbarrier_wait_parity(tmem_empty_bar(accum.slot), accum.phase ^ 1,
                             trace.span_elected(Phase::kWaitTmemEmpty, accum.slot));
        tcgen05_fence_after_thread_sync();
        const uint32_t d_tmem' '        const uint32_t d_tmem'
ARGS=$S6_ARGS case_ s06-accumulator-parity-per-tile $S6 wrong \
  '        mma_commit_2sm_multicast(tmem_full_bar(accum.slot), PAIR_MASK);
        accum.advance(NUM_ACCUMULATORS);' '        mma_commit_2sm_multicast(tmem_full_bar(accum.slot), PAIR_MASK);
        accum.slot ^= 1;  // "one parity for both accumulators, flipped every tile"
        accum.phase ^= 1;' \
  '      if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
      accum.advance(NUM_ACCUMULATORS);' '      if (elect_one_sync()) mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
      accum.slot ^= 1;
      accum.phase ^= 1;'
ARGS=$S6_ARGS case_ s06-ring-reset-per-tile $S6 wrong \
  '      RingPos stage;  // carries on across tiles; waits for phase parity stage.phase ^ 1 ("empty")
      for (int i = 0; scheduled_tile(cluster, i, num_clusters) < num_tiles; ++i) {' \
  '      RingPos stage;  // carries on across tiles; waits for phase parity stage.phase ^ 1 ("empty")
      for (int i = 0; scheduled_tile(cluster, i, num_clusters) < num_tiles; ++i) {
        stage = RingPos{};  // "each tile starts a fresh pipeline"'
ARGS=$S6_ARGS case_ s06-schedule-strides-over-ctas $S6 wrong \
  'const int num_clusters = int(gridDim.x) / CLUSTER_SIZE;' 'const int num_clusters = int(gridDim.x);  // "one tile per CTA of the grid"'
# Both accumulators on the same TMEM columns, run as a learner runs it (no --sim-sms; the default
# shape): the emulated GPU then gives each pair two tiles (common/harness/emulator_run.cpp), so
# the second tile's MMAs overwrite columns the first tile's epilogue still reads.
ARGS="--inputs integer" case_ s06-accumulators-share-columns-default-run $S6 wrong \
  'const uint32_t d_tmem = tmem_offset(tmem_base, 0, uint32_t(accum.slot * BLOCK_N));' \
  'const uint32_t d_tmem = tmem_offset(tmem_base, 0, 0u);  // "one accumulator is enough"' \
  'uint32_t(quarter * 32), uint32_t(accum.slot * BLOCK_N));' 'uint32_t(quarter * 32), 0u);'
ARGS=$S6_ARGS case_ s06-peer-releases-own-accumulator $S6 deadlock \
  'mbarrier_arrive_cluster(mapa_shared_cluster(tmem_empty_bar(accum.slot), leader_rank));
      accum.advance' 'mbarrier_arrive_cluster(tmem_empty_bar(accum.slot));
      accum.advance'

# step 07 (NVFP4). SHAPE (256 x 256 x 1024, integer inputs: scales 0.5, 1, 2) has 4 CTAs of
# 128 x 128 and 4 k-tiles of 256, so a scale from the wrong k-block, row block or TMEM column
# changes results.
S7=steps/step07_nvfp4_block_scaled.cu
case_ s07-scales-wrong-k-block $S7 wrong \
  'sfa + sf_atom_offset(sfa_row_block, uint32_t(kt * KSTEPS)' 'sfa + sf_atom_offset(sfa_row_block, uint32_t(kt)'
case_ s07-no-tcgen05-cp-for-sfb $S7 "diag:tcgen05.cp" \
  '          for (uint32_t i = 0; i < SFB_ATOMS_PER_KSTEP; ++i)
            tcgen05_cp_32x128b_warpx4(' '          for (uint32_t i = 0; i < 0; ++i)  // "SFB is already in TMEM"
            tcgen05_cp_32x128b_warpx4('
case_ s07-sfb-of-wrong-tile $S7 wrong \
  'sfb_row_block = uint32_t(n0) / kSfAtomRows' 'sfb_row_block = uint32_t(m0) / kSfAtomRows'
case_ s07-idesc-ue8m0-scales $S7 wrong \
  'make_idesc_mxf4nvf4(BLOCK_M, BLOCK_N)' 'make_idesc_mxf4nvf4(BLOCK_M, BLOCK_N, /*ue4m3_scales=*/false)'
case_ s07-epilogue-wrong-column $S7 wrong \
  'tmem_offset(tmem_accum, quarter * 32, col)' 'tmem_offset(tmem_accum, quarter * 32, col + 1)'
case_ s07-expect-tx-without-scales $S7 wrong \
  'AB_STAGE_BYTES + sf_bytes_a + sf_bytes_b' 'AB_STAGE_BYTES'
# The two of issue 22. One set of TMEM scale columns for every stage: the tcgen05.cp of the next
# k-tile overwrites scales an earlier MMA may still read (mma -> cp is not a pipelined pair, PTX ISA
# §9.7.16.6.2), caught at the copy under every seed. A whole stage of scale atoms fetched for the
# last k-tile too: with K = 1088 (17 k-steps) the bulk copy of the last row block reads 1.5 KiB past
# the end of the scale array (a memcheck error on a GPU), caught at the copy.
case_ s07-one-set-of-scale-columns $S7 "diag:TMEM hazard between asynchronous tcgen05 operations" \
  'const uint32_t sf_cols = SF_TMEM_BASE + s * SF_TMEM_STAGE_COLS;' \
  'const uint32_t sf_cols = SF_TMEM_BASE;  // "the scales are copied right before their MMAs"'
ARGS="--m 256 --n 256 --k 1088 --inputs integer" case_ s07-scale-copy-whole-stage $S7 \
  "diag:global memory access out of bounds" \
  'const uint32_t sf_bytes_a = ksteps_of(kt) * SFA_ATOMS_PER_KSTEP * kSfAtomBytes;' \
  'const uint32_t sf_bytes_a = SFA_STAGE_BYTES;  // "always a whole stage of atoms"' \
  'const uint32_t sf_bytes_b = ksteps_of(kt) * SFB_ATOMS_PER_KSTEP * kSfAtomBytes;' \
  'const uint32_t sf_bytes_b = SFB_STAGE_BYTES;'

# step 08 (TMA-store epilogue). 8 tiles of 256 x 256 on 2 CTA pairs (--sim-sms 4), N % 8 == 0 so the
# TMA-store path runs: 2 tiles per accumulator, 32 sub-tiles per epilogue warp through its 2 buffers.
S8=steps/step08_tma_store_epilogue.cu
S8_ARGS="--m 1024 --n 512 --k 256 --inputs integer --sim-sms 4"
ARGS=$S8_ARGS case_ s08-no-proxy-fence $S8 "diag:missing fence.proxy.async" \
  '        fence_proxy_async_shared_cta();
' ''
ARGS=$S8_ARGS case_ s08-staging-reused-before-wait $S8 "diag:shared memory overwritten under a TMA store" \
  '        if (lane == STORE_LANE) bulk_wait_group_read<NUM_STAGING - 1>();
' ''
ARGS=$S8_ARGS case_ s08-wait-lets-too-many-groups-read $S8 "diag:shared memory overwritten under a TMA store" \
  'bulk_wait_group_read<NUM_STAGING - 1>();' 'bulk_wait_group_read<NUM_STAGING>();  // "one per buffer may be in flight"'
ARGS=$S8_ARGS case_ s08-store-before-warp-wrote $S8 "diag:TMA store source not ordered after its writer" \
  '        fence_proxy_async_shared_cta();
        __syncwarp();' '        fence_proxy_async_shared_cta();'
ARGS=$S8_ARGS case_ s08-no-final-wait $S8 "diag:TMA store not waited for" \
  '    if (lane == STORE_LANE) bulk_wait_group_read<0>();
' ''
ARGS=$S8_ARGS case_ s08-release-before-last-load $S8 wrong \
  'if (sub == NUM_SUBTILES - 1) {' 'if (sub == NUM_SUBTILES - 2) {  // "the last sub-tile is nearly done"'
ARGS=$S8_ARGS case_ s08-staging-not-swizzled $S8 wrong \
  'swizzle_addr(buf + uint32_t(lane) * 128 + uint32_t(j) * 16, 128)' 'buf + uint32_t(lane) * 128 + uint32_t(j) * 16'

# step 09 (cluster launch control). 12 tiles of 256 x 256 on an emulated GPU of 4 SMs: 2 pairs
# launch, the other 10 clusters are canceled and their tiles taken over; both rings wrap.
S9=steps/step09_clc_scheduler.cu
S9_ARGS="--m 1024 --n 768 --k 256 --inputs integer --sim-sms 4"
ARGS=$S9_ARGS case_ s09-ctaid-as-tile-number $S9 wrong \
  'int(clc_query_first_ctaid_x(response)) / CLUSTER_SIZE' 'int(clc_query_first_ctaid_x(response)) /* "the canceled CTA'"'"'s id is the tile" */'
ARGS=$S9_ARGS case_ s09-ctaid-without-is-canceled $S9 "diag:get_first_ctaid of a failed try_cancel" \
  'const int tile = clc_query_is_canceled(response) ? int(clc_query_first_ctaid_x(response)) / CLUSTER_SIZE : -1;' \
  'const int candidate = int(clc_query_first_ctaid_x(response)) / CLUSTER_SIZE;  // "decode first, check later"
    const int tile = clc_query_is_canceled(response) ? candidate : -1;'
ARGS=$S9_ARGS case_ s09-sched-ring-phase-not-flipped $S9 wrong \
  '    sched.advance(NUM_SCHED_SLOTS);
    return tile;' '    sched.slot = (sched.slot + 1) % NUM_SCHED_SLOTS;  // "next slot" (the parity stays)
    return tile;'
ARGS=$S9_ARGS case_ s09-response-read-before-wait $S9 "diag:try_cancel response read before its mbarrier completed" \
  '    mbarrier_wait_parity(sched_full_bar(sched.slot), sched.phase);
    const ClcResponse response' '    const ClcResponse response'
ARGS=$S9_ARGS case_ s09-retry-after-failed-cancel $S9 "diag:try_cancel after a failed try_cancel" \
  '        more = clc_query_is_canceled(clc_load_response(clc_response(slot.slot)));' \
  '        more = clc_query_is_canceled(clc_load_response(clc_response(slot.slot))) || tries++ < 1;  // "try once more"' \
  '      RingPos slot;
      for (bool more = true; more;) {' '      RingPos slot;
      int tries = 0;
      for (bool more = true; more;) {'
# The response read with a generic load and the next try_cancel's async-proxy write into the same
# slot, with no fence.proxy.async between them (issue 31): reported at that try_cancel, every seed.
ARGS=$S9_ARGS case_ s09-no-proxy-fence-after-response $S9 "every:diag:generic-proxy read not fenced before an async-proxy write" \
  '    fence_proxy_async_shared_cta();
    if (whole_warp) __syncwarp();' '    if (whole_warp) __syncwarp();'
ARGS=$S9_ARGS case_ s09-peer-full-bar-not-armed $S9 deadlock \
  'for (uint32_t r = 0; r < CLUSTER_SIZE; ++r)
          mbarrier_arrive_expect_tx_cluster' 'for (uint32_t r = 0; r < 1; ++r)  // "the response comes to the leader"
          mbarrier_arrive_expect_tx_cluster'
ARGS=$S9_ARGS case_ s09-consumer-count-without-mma $S9 wrong \
  'constexpr uint32_t SCHED_CONSUMERS = CLUSTER_SIZE * (1 + NUM_EPILOGUE_WARPS) + 1;' \
  'constexpr uint32_t SCHED_CONSUMERS = CLUSTER_SIZE * (1 + NUM_EPILOGUE_WARPS);  // "producer and epilogue of both CTAs"'

# step 14 (B multicast across the CTA pairs of a cluster). 12 tiles of 256 x 256 in clusters of
# 2 pairs (6 cluster tiles) on an emulated GPU of 4 SMs: one cluster at a time, 5 tiles canceled.
S14=steps/step14_bf16_multicast_l2.cu
S14_ARGS="--m 1024 --n 768 --k 512 --inputs integer --sim-sms 4"
S14_KNOBS="TCG_STEP14_PAIRS=2"
# Each pair frees its slots for itself alone: the other pair refills its B half while this one's
# MMAs may still read it.
KNOBS=$S14_KNOBS ARGS=$S14_ARGS case_ s14-slot-freed-by-own-pair $S14 "every:diag:asynchronous copies with overlapping destinations in flight" \
  '      mbarrier_init(mma_done_bar(s), uint32_t(pairs));' '      mbarrier_init(mma_done_bar(s), 1);  // "the pair'"'"'s own MMAs free the slot"' \
  '          mma_commit_2sm_multicast(mma_done_bar(stage.slot), cluster_mask);' \
  '          mma_commit_2sm_multicast(mma_done_bar(stage.slot), pair_mask);'
# The leader expects only the bytes of the copies its own pair issues: no B when another pair's turn.
KNOBS=$S14_KNOBS ARGS=$S14_ARGS case_ s14-expect-tx-forgets-multicast $S14 wrong \
  '          if (is_leader) mbarrier_arrive_expect_tx(tma_full_bar(stage.slot), PAIR_STAGE_BYTES);' \
  '          if (is_leader)  // "the bytes our copies bring"
            mbarrier_arrive_expect_tx(tma_full_bar(stage.slot),
                                      kt % pairs == pair ? PAIR_STAGE_BYTES : PAIR_STAGE_BYTES - PAIR_SIZE * B_STAGE_BYTES);'
# No drain before the teardown ("the cluster barrier waits for everyone"): the barrier orders the
# other pairs' last commits, not their multicast arrivals on this CTA's mma_done_bar, which may
# still be in flight when it exits.
KNOBS=$S14_KNOBS ARGS=$S14_ARGS case_ s14-exit-before-peer-pairs-commits $S14 "every:diag:CTA exited with asynchronous work" \
  '      for (int s = 0; s < NUM_STAGES; ++s) {
        mbarrier_wait_parity(mma_done_bar(stage.slot), stage.phase ^ 1);
        stage.advance(NUM_STAGES);
      }' '      // "the cluster barrier at the teardown waits for every pair"'

# Steps 10-13 (NVFP4 split-K, wide copies, cluster reduction, multicast): their own file.
source tests/steps/break_it_nvfp4.sh
# Step 16 (grouped GEMM, tensor maps rewritten on the device): its own file.
source tests/steps/break_it_grouped.sh

[ $parallel = 1 ] && collect_cases
[ $diff_only = 1 ] || [ -n "$run_seed" ] || echo "break-it cases: $passed passed, $failed failed"
[ "$failed" = 0 ] && { [ "$passed" -gt 0 ] || [ $build_only = 0 ]; }
