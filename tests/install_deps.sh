#!/usr/bin/env bash
# install_deps.sh — installs what `make test` needs and the machine lacks; `make test` runs it
# first, and .ci/run is `make test`. What it checks, and what it installs when missing:
#   doctest.h            apt: doctest-dev                (the unit tests)
#   python3, pip         apt: python3, python3-pip
#   CUTLASS headers      pip: nvidia-cutlass==4.2.0.0    (the encoder cross-check; that test
#                                                         fails, never skips, without them)
#   cuobjdump, nvdisasm  pip: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm (the SASS check; only
#                                                         when the CUDA toolkit has none)
#   matplotlib           pip: matplotlib                 (the "plots" suite)
# The CUDA toolkit itself (nvcc, cuBLAS; CUDA >= 12.8) must already be installed.
# Exit 0 when everything is there (installing nothing prints nothing); exit 1 with one line
# saying what is missing and why it could not be installed (no root, no network, ...).
set -uo pipefail
cd "$(dirname "$0")/.."

fail() { echo "install_deps: $*" >&2; exit 1; }
log=$(mktemp); trap 'rm -f "$log"' EXIT
# Runs an install command quietly; on failure prints its last line in the one-line message.
quiet() {  # quiet WHAT COMMAND...
  local what=$1; shift
  "$@" >"$log" 2>&1 || fail "could not install $what ($(grep -v '^\s*$' "$log" | tail -1 | cut -c1-160))"
}

export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
command -v nvcc >/dev/null || fail "nvcc not found: install the CUDA toolkit (>= 12.8) and put its bin/ on PATH"

need_apt=()
[ -f /usr/include/doctest/doctest.h ] || need_apt+=(doctest-dev)
command -v python3 >/dev/null || need_apt+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    sudo -n true 2>/dev/null || fail "need root (or password-less sudo) to apt-get install ${need_apt[*]}; install them and rerun"
    SUDO="sudo -n"
  fi
  echo "install_deps: apt-get install ${need_apt[*]}"
  quiet "${need_apt[*]} (apt-get update)" $SUDO apt-get update -qq
  quiet "${need_apt[*]}" $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

# pip into the user's Python; Debian's "externally managed" interpreter needs the override flag.
pip_install() {  # pip_install WHAT PACKAGE...
  local what=$1; shift
  echo "install_deps: pip install $*"
  python3 -m pip install -q "$@" >"$log" 2>&1 ||
    quiet "$what" python3 -m pip install -q --break-system-packages "$@"
}
python3 -c "import cutlass_library" 2>/dev/null || pip_install "the CUTLASS headers" nvidia-cutlass==4.2.0.0
python3 -c "import matplotlib" 2>/dev/null || pip_install matplotlib matplotlib
if ! command -v cuobjdump >/dev/null || ! command -v nvdisasm >/dev/null; then
  python3 -c "import nvidia, os, sys; d = os.path.join(list(nvidia.__path__)[0], 'cu13', 'bin'); sys.exit(not (os.path.exists(d + '/cuobjdump') and os.path.exists(d + '/nvdisasm')))" 2>/dev/null ||
    pip_install "cuobjdump/nvdisasm" nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37
fi
exit 0
