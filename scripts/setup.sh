#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for lowbit: the apt packages that the
# build, the tests and the benchmarks need, ONE Python venv at .venv with
# requirements.txt, and the `lowbit` Python package built from this tree into
# it. Idempotent: a second run installs nothing and takes ~1 s.
#
# Environment:
#   LOWBIT_NO_APT=1   never call apt-get; only report missing packages
#   PYTHON=...        the interpreter to build .venv from (default: python3 on
#                     PATH, e.g. pyenv's; falls back to Debian's /usr/bin/python3)
#   LOWBIT_PY_CUDA=ON|OFF        the Python package with / without CUDA kernels
#                                (default: with them where nvidia-smi sees a GPU)
#   LOWBIT_NO_PYTHON_PACKAGE=1   do not build the Python package
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

log() { printf 'setup: %s\n' "$*" >&2; }

# ---- apt ------------------------------------------------------------------
# Build: g++ cmake pkg-config. Model/oracle/tests: Boost (reference/),
# RapidCheck + GoogleTest (proptests/), Highway (simd/), CLI11 (tools/),
# Google Benchmark (bench/). g++-aarch64-linux-gnu: the test that the SIMD
# sources still compile for Arm servers (simd/CMakeLists.txt,
# tests/aarch64/). python3-venv only if no usable venv module.
packages=(g++ make cmake pkg-config libboost-dev librapidcheck-dev libhwy-dev
          libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev g++-aarch64-linux-gnu
          clang libclang-rt-dev  # clang + its sanitizer/libFuzzer runtimes: scripts/sanitize.sh, fuzz.sh
          python3-dev  # headers for the Python package's extension when .venv is Debian's python3
          ccache  # scripts/test.sh: the package, the tree and the subdirectory test share objects
          chromium chromium-driver fonts-dejavu-core)  # the docs site's browser test (docs/notebooks/browser_test.py)

missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' \
      || printf '%s\n' "$p"
  done
}

apt_install() {
  local missing
  mapfile -t missing < <(missing_packages "$@")
  ((${#missing[@]})) || return 0
  if [[ ${LOWBIT_NO_APT:-0} == 1 ]]; then
    log "missing apt packages (LOWBIT_NO_APT=1, not installing): ${missing[*]}"
    return 1
  fi
  local sudo=()
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { log "need root or sudo to install: ${missing[*]}"; return 1; }
    sudo=(sudo)
  fi
  log "installing: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

apt_install "${packages[@]}"

# ---- Python venv ------------------------------------------------------------
python_ok() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; }

pick_python() {
  local candidates=() c
  [[ -n ${PYTHON:-} ]] && candidates+=("$PYTHON")
  candidates+=("$(command -v python3 || true)" /usr/bin/python3)
  for c in "${candidates[@]}"; do
    [[ -n $c && -x $c ]] && python_ok "$c" && { printf '%s\n' "$c"; return 0; }
  done
  # Debian's python3 ships without venv/ensurepip until python3-venv is in.
  apt_install python3 python3-venv >&2
  python_ok /usr/bin/python3 && { printf '%s\n' /usr/bin/python3; return 0; }
  return 1
}

venv=.venv
stamp=$venv/.lowbit-requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c 'import sys' 2>/dev/null \
   && [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  log "$venv requirements are up to date"
else
  if ! [[ -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
    python=$(pick_python) || { log "no Python >= 3.10 with the venv module"; exit 1; }
    log "creating $venv from $python ($("$python" --version 2>&1))"
    rm -rf "$venv"
    "$python" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt
  printf '%s\n' "$want" >"$stamp"
  log "$venv ready: $("$venv/bin/python" -c 'import ml_dtypes, numpy; print("ml_dtypes", ml_dtypes.__version__, "numpy", numpy.__version__)')"
fi

# ---- headers from PyPI (requirements-headers.txt): CUTLASS ---------------------
# Their own stamp; --no-deps because only the headers are used.
headers_stamp=$venv/.lowbit-headers.sha256
headers_want=$(sha256sum requirements-headers.txt | cut -d' ' -f1)
if [[ -f $headers_stamp && $(cat "$headers_stamp") == "$headers_want" ]]; then
  log "$venv headers are up to date"
else
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r requirements-headers.txt
  printf '%s\n' "$headers_want" >"$headers_stamp"
  log "headers installed: CUTLASS $("$venv/bin/python" -m pip show nvidia-cutlass 2>/dev/null | sed -n 's/^Version: //p')"
fi

# ---- live peers: torch, torchao, ModelOpt (requirements-peers.txt) ----------
# The libraries that the recipe profiles reproduce, for the live-peer tests
# (tests/peers). Their own stamp, so a change to one list reinstalls only it.
# LOWBIT_NO_PEERS=1 leaves them out (~5.7 GB): the peers test then reports
# itself skipped, naming this variable.
peers_stamp=$venv/.lowbit-peers.sha256
peers_want=$(sha256sum requirements-peers.txt | cut -d' ' -f1)
if [[ ${LOWBIT_NO_PEERS:-0} == 1 ]]; then
  log "not installing the live peers (LOWBIT_NO_PEERS=1)"
elif [[ -f $peers_stamp && $(cat "$peers_stamp") == "$peers_want" ]]; then
  log "$venv live peers are up to date"
else
  log "installing the live peers (torch, torchao, ModelOpt; first time: ~2 min)"
  start=$(date +%s)
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements-peers.txt
  printf '%s\n' "$peers_want" >"$peers_stamp"
  log "live peers installed in $(( $(date +%s) - start )) s: $("$venv/bin/python" -c 'import torch, torchao, modelopt; print("torch", torch.__version__, "torchao", torchao.__version__, "modelopt", modelopt.__version__)' 2>/dev/null)"
fi

# ---- the Python package `lowbit` ----------------------------------------------
# Built from this tree with CMake (pyproject.toml) and installed into .venv;
# the build directory persists (build/python-<tag>), so a reinstall compiles
# only what changed. Reinstalled when a source it is built from is newer than
# the last install. The CUDA kernels are built when nvcc is found and a GPU
# is present (LOWBIT_PY_CUDA=ON/OFF decides instead). LOWBIT_NO_PYTHON_PACKAGE=1
# skips it.
if [[ ${LOWBIT_NO_PYTHON_PACKAGE:-0} == 1 ]]; then
  log "not installing the lowbit Python package (LOWBIT_NO_PYTHON_PACKAGE=1)"
  exit 0
fi
package_stamp=$venv/.lowbit-package.stamp
package_sources=(pyproject.toml CMakeLists.txt cmake formats registry simd cuda check reference python/src
                 python/lowbit python/CMakeLists.txt)
if [[ -f $package_stamp ]] && "$venv/bin/python" -c 'import lowbit' 2>/dev/null \
   && [[ -z $(find "${package_sources[@]}" -newer "$package_stamp" -type f -print -quit 2>/dev/null) ]]; then
  log "the lowbit Python package is up to date"
  exit 0
fi
# The CUDA kernels only where a GPU can run them: on a machine with nvcc but
# no GPU (CI) they would double the first build for nothing (the CMake build
# of the tree still compiles the package's CUDA path, python/CMakeLists.txt).
if [[ -z ${LOWBIT_PY_CUDA:-} ]]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    export LOWBIT_PY_CUDA=ON
  else
    export LOWBIT_PY_CUDA=OFF
  fi
fi
log "building and installing the lowbit Python package into $venv (CUDA kernels: $LOWBIT_PY_CUDA; first time: minutes)"
start=$(date +%s)
# With ccache the tree's own build (scripts/test.sh) reuses these objects: the
# libraries compile with the same flags in both (CMake reads the launcher from
# the environment), and by the same compiler name (ccache's key holds it):
# CMake's own default, c++, where scikit-build-core would take Python's (g++).
launcher=${CMAKE_CXX_COMPILER_LAUNCHER-$(command -v ccache || true)}
CC=${CC:-cc} CXX=${CXX:-c++} CMAKE_C_COMPILER_LAUNCHER=$launcher CMAKE_CXX_COMPILER_LAUNCHER=$launcher \
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
touch "$package_stamp"
log "lowbit Python package installed in $(( $(date +%s) - start )) s: $("$venv/bin/python" -c 'import lowbit; i = lowbit.build_info(); print("backends", i["backends"], "cuda" if i["cuda"] else "CPU only")')"
