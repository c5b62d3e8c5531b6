#!/usr/bin/env bash
# run_all.sh — what `make test` runs, in order, after `make all` has built every step
# (nvcc for sm_100a / sm_80+, and g++ for the emulator):
#   1. no register spills in any kernel (ptxas report), the SASS of every kernel has no local
#      memory and contains the tensor-core/TMA/TMEM instructions it should (cuobjdump), and the
#      GPU and emulator builds of a kernel share no linker symbols; the harness's files call
#      each other in one direction only (tests/check_layers.py)
#   2. the doctest suite (encoders, CUTLASS cross-check, emulator fidelity, the timing model's
#      durations against hand-computed values, harness)
#   3. every step in the emulator at edge-case shapes, integer inputs bitwise, random inputs
#      under three scheduler seeds
#   4. the B200 timing model and traces through the binaries (tests/run_predict.sh): `--predict`
#      for steps 01-08 prints one positive "predicted B200: X TFLOPS" line in time, step 04's
#      `--trace` file passes tests/check_trace.py, an unwritable --trace path exits 2 with a
#      one-line error
#   5. the "Break it" experiments: each deliberate bug must be caught by the emulator
#   6. the charts and the performance page from the committed CSV files (plots/check_plots.sh:
#      `make plots` into a temporary directory, timeline.py on a hand-written trace)
# Prints a closing "tests: N passed, N failed" line (one per suite) and exits non-zero on any
# failure.
set -u
cd "$(dirname "$0")/.."
passed=0 failed=0
suite() {  # suite NAME COMMAND...
  local name=$1; shift
  echo "==== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "==== $name FAILED"; fi
}
suite "register spills" make --no-print-directory check-spills
suite "SASS contents" bash tests/check_sass.sh
suite "build separation" bash tests/check_symbols.sh
suite "harness layers" python3 tests/check_layers.py
suite "unit tests (doctest)" make --no-print-directory unit-tests
suite "steps in the emulator" bash tests/run_steps.sh $(make --no-print-directory -s list-steps)
suite "timing model and traces" bash tests/run_predict.sh
suite "break it" bash tests/break_it.sh
suite "plots" bash plots/check_plots.sh
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
