#!/usr/bin/env bash
# check_symbols.sh [STEP_SOURCE...] — the two builds of a kernel must not share linker symbols
# (DEVELOPERS.md): the GPU and emulator objects of one step are linked into one binary, and a
# header function whose body depends on TCG_SIM, emitted by both, would silently be merged into
# one copy. At -O2 the optimizer usually inlines such functions and hides the problem, so this
# builds both halves at -O0 and compares their externally visible symbols with nm.
# Default: every step.
set -u
cd "$(dirname "$0")/../.."
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
out=build/check_symbols
mkdir -p "$out"
[ $# -gt 0 ] || set -- steps/step[0-9][0-9]_*.cu
syms() { nm -C --defined-only "$1" | awk '$2 ~ /^[TWVu]$/ {$1=""; $2=""; sub(/^  /, ""); print}' | sort -u; }
bad=0
for src in "$@"; do
  g++ -std=c++17 -O0 -w -Wno-psabi -I. -I"$CUDA_HOME/include" -DTCG_SIM -x c++ -c "$src" -o "$out/sim.o" || exit 1
  nvcc -std=c++17 -O0 -Xcompiler -O0 -I. -gencode arch=compute_100f,code=sm_100f -c "$src" -o "$out/gpu.o" || exit 1
  shared=$(comm -12 <(syms "$out/gpu.o") <(syms "$out/sim.o") | grep -E 'tcg::|gpu::|sim::' || true)
  if [ -n "$shared" ]; then
    echo "FAIL: the GPU and emulator builds of $src both define:"; echo "$shared"; bad=1
  else
    echo "ok: the GPU and emulator builds of $src share no tcg::/gpu::/sim:: symbols"
  fi
done
exit $bad
