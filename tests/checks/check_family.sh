#!/usr/bin/env bash
# check_family.sh — the build and the reports for the whole datacenter Blackwell family (B200,
# GB200: compute capability 10.0; B300, GB300: 10.3), what can be checked without such a GPU:
#   * plots/bench.sh names results/<gpu>.csv with the same slug as the C++ programs (make
#     gpu-check, make calibrate; common/harness/capability.cpp, unit-tested on the same table):
#     every row of tests/checks/gpu_names.csv through `bench.sh --slug`;
#   * an nvcc too old for the family target (sm_100f needs CUDA 12.9) stops the build with one
#     line naming the version and the need (fake nvcc 12.8 and 11.8), while 12.9, 13.0 and the
#     installed nvcc pass the check.
# That every cubin of every step (object and linked binary) loads on 10.0 and 10.3 is
# tests/checks/check_sass.sh's (cuobjdump -elf: "arch = sm_100f"; note that `cuobjdump
# --list-elf` calls the family cubin "….sm_100.cubin", which a 10.3 device loads too).
set -u
cd "$(dirname "$0")/../.."
# Run from `make -j test`: the sub-makes below are independent runs, not part of the caller's
# jobserver (whose warning would be a second line).
unset MAKEFLAGS MFLAGS MAKELEVEL
bad=0
fail() { echo "FAIL  $*"; bad=1; }

n=0
while IFS=, read -r name slug; do
  [ "$name" = name ] && continue
  got=$(bash plots/bench.sh --slug "$name")
  [ "$got" = "$slug" ] || fail "bench.sh --slug '$name' gives '$got', the harness '$slug'"
  n=$((n + 1))
done < tests/checks/gpu_names.csv
[ "$n" -ge 10 ] || fail "tests/checks/gpu_names.csv has only $n names"
[ $bad = 0 ] && echo "ok    bench.sh and the harness name results/<gpu>.csv alike for $n GPU names"

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fake_nvcc() {  # fake_nvcc VERSION -> path of an nvcc that reports that release
  mkdir -p "$tmp/$1"
  printf '#!/bin/sh\necho "nvcc: NVIDIA (R) Cuda compiler driver"\necho "Cuda compilation tools, release %s, V%s.0"\n' "$1" "$1" > "$tmp/$1/nvcc"
  chmod +x "$tmp/$1/nvcc"
  echo "$tmp/$1/nvcc"
}
for v in 12.8 11.8; do
  out=$(make --no-print-directory -s NVCC="$(fake_nvcc $v)" nvcc-check 2>&1 >/dev/null | grep -v '^make: \*\*\*')
  if make --no-print-directory -s NVCC="$(fake_nvcc $v)" nvcc-check >/dev/null 2>&1; then
    fail "nvcc $v: make nvcc-check passed"
  elif [ "$(wc -l <<<"$out")" != 1 ] || [[ $out != "Makefile: nvcc $v is too old: "*"sm_100f"*"needs CUDA 12.9 or newer" ]]; then
    fail "nvcc $v: expected one line 'Makefile: nvcc $v is too old: ... needs CUDA 12.9 or newer', got: $out"
  else
    echo "ok    nvcc $v stops the build: $out"
  fi
done
for v in 12.9 13.0; do
  make --no-print-directory -s NVCC="$(fake_nvcc $v)" nvcc-check >/dev/null 2>&1 || fail "nvcc $v: make nvcc-check failed"
done
make --no-print-directory -s nvcc-check || fail "the installed nvcc ($(nvcc --version | tail -1)) fails make nvcc-check"
[ $bad = 0 ] && echo "ok    nvcc 12.9, 13.0 and the installed one ($(nvcc --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')) pass make nvcc-check"
exit $bad
