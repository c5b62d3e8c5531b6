#!/usr/bin/env bash
# run_all.sh — what `make test` runs, in order, after `make all` has built every step
# (nvcc for sm_100f / sm_80+, and g++ for the emulator):
#   1. no register spills in any kernel (ptxas report), the SASS of every kernel has no local
#      memory and contains the tensor-core/TMA/TMEM instructions it should (cuobjdump), and the
#      GPU and emulator builds of a kernel share no linker symbols; the harness's files call
#      each other in one direction only (tests/checks/check_layers.py)
#      (the hardware probes of `make gpu-check` and the microbenchmarks too: their sm_100f build
#      and SASS); every cubin loads on the GPUs its program is for (the tcgen05 steps and probes:
#      compute capability 10.0 and 10.3), a GPU's name gives the same results/<gpu>.csv in
#      bench.sh as in the C++ programs, and an nvcc older than 12.9 stops the build in one line
#      (tests/checks/check_family.sh)
#   2. the doctest suite (encoders, CUTLASS cross-check, emulator fidelity, the timing model's
#      durations against hand-computed values, harness)
#   3. every step in the emulator at edge-case shapes, integer inputs bitwise, random inputs
#      under three scheduler seeds
#   4. the B200 timing model and traces through the binaries (tests/steps/run_predict.sh): `--predict`
#      for steps 01-13 prints one positive "predicted B200: X TFLOPS" line in time, step 04's
#      `--trace` file passes tests/checks/check_trace.py, an unwritable --trace path exits 2 with a
#      one-line error
#   5. the "Break it" experiments: each deliberate bug must be caught by the emulator; the
#      emulator's own speed (tests/steps/bench_emulator.py --check: the quick set's CPU time,
#      relative to a reference command of the same run, at most 1.5x the newest committed row of
#      results/emulator_bench.csv); and deliberately broken copies of the emulator, each of which
#      the tcgen05 probes must notice
#   6. the charts and the performance page from the committed CSV files (plots/check_plots.sh:
#      `make plots` into a temporary directory, timeline.py on a hand-written trace)
#   7. citations: no tracked file cites material outside the repository, every references.md#id
#      link names an entry of docs/references.md (tests/checks/check_citations.py)
#   8. every output, diff, table and line number a page quotes equals a rerun of its command or the
#      current source (tests/checks/docs_quotes.py --check; `make docs-quotes` regenerates them)
# Prints a closing "tests: N passed, N failed" line (one per suite) and exits non-zero on any
# failure.
set -u
cd "$(dirname "$0")/.."
passed=0 failed=0
times=()
suite() {  # suite NAME COMMAND...  (its wall seconds go to the closing summary: CI's budget is 15 min)
  local name=$1 t0=$SECONDS; shift
  echo "==== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "==== $name FAILED"; fi
  times+=("$(printf '%5d s  %s' $((SECONDS - t0)) "$name")")
}
suite "register spills" make --no-print-directory check-spills
suite "SASS contents" bash tests/checks/check_sass.sh
suite "build separation" bash tests/checks/check_symbols.sh
suite "hardware probes and microbenchmarks: sm_100f builds, SASS, build separation, the tcgen05 and tensormap probes with the emulator" bash -c '
  make --no-print-directory -s build/tests/tcgen05_check build/tests/tma_check build/tests/micro &&
  bash tests/checks/check_sass.sh tests/tcgen05_check tests/tma_check tests/micro &&
  bash tests/checks/check_symbols.sh tests/gpu/tcgen05_check.cu && csv=$(mktemp) &&
  TCG_GPU_CHECK_CSV=$csv build/tests/tcgen05_check --emulator-as-gpu | tail -1 && [ "$(wc -l < "$csv")" -gt 50 ]; rc=$?; rm -f "$csv"; [ $rc = 0 ] || exit $rc
  make --no-print-directory -s build/tests/tensormap_check && bash tests/checks/check_symbols.sh tests/gpu/tensormap_check.cu &&
  build/tests/tensormap_check --emulator-only | tail -1'
suite "datacenter Blackwell family: cubins, GPU file names, nvcc version" bash tests/checks/check_family.sh
suite "harness layers" python3 tests/checks/check_layers.py
suite "unit tests (doctest)" make --no-print-directory unit-tests
suite "steps in the emulator" bash tests/steps/run_steps.sh $(make --no-print-directory -s list-steps)
suite "timing model and traces" bash tests/steps/run_predict.sh
suite "microbenchmarks in the timing model" bash tests/gpu/run_micro_sim.sh
suite "break it" bash tests/steps/break_it.sh
suite "emulator speed: no command more than 1.5x slower than its committed row" python3 tests/steps/bench_emulator.py --check
suite "break the emulator: the tcgen05 probes notice" bash tests/gpu/break_probes.sh
suite "plots" bash plots/check_plots.sh
suite "citations: every source public, every references.md link resolves" python3 tests/checks/check_citations.py
suite "quoted outputs and line numbers in the pages" python3 tests/checks/docs_quotes.py --check
echo "wall time per suite:"; printf '  %s\n' "${times[@]}"
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
