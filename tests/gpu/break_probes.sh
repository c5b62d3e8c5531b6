#!/usr/bin/env bash
# break_probes.sh — the tcgen05 hardware probes must notice a wrong emulator.
#
# `make gpu-check` is only worth something if a probe fails when the emulator's model of an
# instruction is wrong. Each case below applies one small change to an emulator source (exact text
# replacements that must match exactly once, so a stale case fails loudly), compiles that file
# alone, links it with the other emulator objects, the probes' emulator side and the probe tests of
# tests/gpu/test_gpu_probes.cpp, and asserts that those tests FAIL: the probes' CPU expectation
# (tests/gpu/probe_cases.cpp) stands in for the hardware, which a B200 run replaces.
# Usage: tests/gpu/break_probes.sh [CASE-NAME-SUBSTRING]
set -u
cd "$(dirname "$0")/../.."
OUT=build/break_probes
mkdir -p "$OUT"
read -r -a PROBE_OBJS <<<"$(make -s --no-print-directory probe-objs | tail -1)" || exit 1
[ ${#PROBE_OBJS[@]} -gt 0 ] || { echo "FAIL: cannot build the probe tests"; exit 1; }
read -r -a COMMON_OBJS <<<"$(make -s --no-print-directory common-objs)" || exit 1
read -r -a LINK_LIBS <<<"$(make -s --no-print-directory link-libs)" || exit 1
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
filter=${1:-}
passed=0 failed=0

# case NAME SOURCE(common/sim/X.cpp) OLD NEW
case_() {
  local name=$1 src=$2 old=$3 new=$4
  [[ -n "$filter" && "$name" != *"$filter"* ]] && return
  local base; base=$(basename "$src" .cpp)
  local mod="$OUT/$name.cpp" obj="$OUT/$name.o" bin="$OUT/$name"
  if ! python3 - "$src" "$mod" "$old" "$new" <<'EOF'
import sys
src, dst, old, new = sys.argv[1:]
text = open(src).read()
n = text.count(old)
if n != 1:
    sys.exit(f"the text to replace occurs {n} times in {src} (expected exactly once): {old!r}")
open(dst, "w").write(text.replace(old, new).replace('#include "internal.h"', '#include "common/sim/internal.h"'))
EOF
  then
    echo "FAIL  $name: could not apply the change"; failed=$((failed + 1)); return
  fi
  local objs=()
  for o in "${COMMON_OBJS[@]}"; do [ "$o" = "build/sim/$base.o" ] || objs+=("$o"); done
  if ! g++ -std=c++17 -O2 -w -I. -I"$CUDA_HOME/include" -c "$mod" -o "$obj" 2>"$OUT/$name.log" ||
     ! g++ -o "$bin" "${PROBE_OBJS[@]}" "$obj" "${objs[@]}" "${LINK_LIBS[@]}" 2>>"$OUT/$name.log"; then
    echo "FAIL  $name: does not build"; cat "$OUT/$name.log"; failed=$((failed + 1)); return
  fi
  local out
  out=$("$bin" -tc='gpu probes*' 2>&1)
  if [ $? -ne 0 ] && grep -q "ERROR" <<<"$out"; then
    echo "ok    $name: caught ($(grep -c 'ERROR' <<<"$out") failed checks)"; passed=$((passed + 1))
  else
    echo "FAIL  $name: the probes did not notice"; failed=$((failed + 1))
  fi
}

# Control: unchanged, the same link must pass (so a failure below is the change's doing).
if [ -z "$filter" ]; then
  if g++ -o "$OUT/control" "${PROBE_OBJS[@]}" "${COMMON_OBJS[@]}" "${LINK_LIBS[@]}" &&
     "$OUT/control" -tc='gpu probes*' >/dev/null 2>&1; then
    echo "ok    control: the unchanged emulator passes the probe tests"
  else
    echo "FAIL  control: the unchanged emulator does not pass the probe tests"; exit 1
  fi
fi

case_ m64_layout_f common/sim/mma.cpp \
  'lane = lane0 + (M == 128 ? mm : (mm % 16) + 32 * (mm / 16));' 'lane = lane0 + mm;'
case_ pair_layout_b common/sim/mma.cpp 'else lane = mm + 64 * h;' 'else lane = mm;'
case_ no_accumulate common/sim/mma.cpp 'if (j.accumulate) {' 'if (false) {'
case_ scale_byte_order common/sim/mma_block_scaled.cpp \
  'const uint8_t byte = uint8_t(cell[0] >> (8 * s));' 'const uint8_t byte = uint8_t(cell[0] >> (8 * (3 - s)));'
case_ scale_column common/sim/mma_block_scaled.cpp \
  'const uint32_t lane = r % 32, col = col0 + r / 32;' 'const uint32_t lane = r % 32, col = col0 + (r / 32) % 2;'
case_ ld_16x256b_rows common/sim/tmem.cpp \
  'lane0 + t / 4 + (q >= 2 ? 8 : 0),' 'lane0 + t / 4 + (q >= 2 ? 0 : 8),'
case_ cp_one_quarter common/sim/mma_block_scaled.cpp \
  'for (uint32_t w = 0; w < 4; ++w) tmem_cell(cta, r + 32 * w, j.col + g) = cell;' \
  'tmem_cell(cta, r, j.col + g) = cell;'

echo "break_probes: $passed caught, $failed not"
[ "$failed" = 0 ]
