#!/usr/bin/env bash
# setup.sh — make this machine able to build and test hybridinfer, then build.
#
# Idempotent: installs only what is missing (Debian 12 packages as root; the
# MXNet 1.9.1 reference in a Python venv under the cache), then configures
# and builds with meson.  Sourced by demo.sh and test.sh; usable alone.
#
# Environment:
#   HYBRIDINFER_CACHE   cache root (default ~/.cache/hybridinfer): venv, zoo fixtures
#   BUILD_DIR           build directory (default: build)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HYBRIDINFER_CACHE:-$HOME/.cache/hybridinfer}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
VENV="$CACHE/venv"
export HYBRIDINFER_CACHE="$CACHE"

APT_PACKAGES=(meson ninja-build pkg-config gcc locales libglib2.0-dev libjson-glib-dev
  libopenblas-dev libdnnl-dev python3 python3-venv clang libclang-rt-14-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good libpango1.0-dev libcairo2-dev fonts-dejavu-core
  gobject-introspection libgirepository1.0-dev python3-gi gir1.2-gstreamer-1.0)

log() { printf '== %s\n' "$*" >&2; }

install_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# A comma-decimal locale for the test that exports under one (exports must
# spell numbers as MXNet reads them, whatever LC_NUMERIC says).
install_test_locale() {
  locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$' && return 0
  log "generating the de_DE.UTF-8 locale"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo localedef -i de_DE -f UTF-8 de_DE.UTF-8
}

# MXNet 1.9.1 (the reference we must match) needs numpy < 1.24.
# OpenVINO is a peer in tests/bench/compare.py only: one wheel (~60 MB, ~180 MB
# installed, no system packages; 2026.4.1 takes numpy 1.23), installed with the
# same numpy pin so that pip picks a release that keeps it.  A venv that cannot
# get it still works for everything else: compare.py then says how to add it.
install_venv() {
  if ! { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import mxnet, numpy" 2>/dev/null; }; then
    log "creating the MXNet reference venv in $VENV"
    mkdir -p "$CACHE"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check \
      "mxnet==1.9.1" "numpy<1.24" onnx onnxruntime
  fi
  # GluonCV's model zoo makes the detection references (gen_fixtures.py --set zoo).  Its
  # declared requirements pull opencv, pandas and matplotlib and a newer numpy; the model zoo
  # needs none of them, only what its package imports on load.
  if ! "$VENV/bin/python" -c "import gluoncv" 2>/dev/null; then
    log "adding GluonCV 0.10.5 (detection references) to $VENV"
    { "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps "gluoncv==0.10.5" \
      && "$VENV/bin/pip" install -q --disable-pip-version-check "numpy<1.24" tqdm portalocker \
        Pillow "scipy<1.11"; } \
      || log "GluonCV did not install: the detection zoo cases will be skipped"
  fi
  if ! "$VENV/bin/python" -c "import openvino" 2>/dev/null; then
    log "adding OpenVINO (a benchmark peer) to $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "numpy<1.24" openvino \
      || log "OpenVINO did not install: tests/bench/compare.py will leave its column empty"
  fi
}

# OpenBLAS 0.3.21 files AVX-512 CPUs it does not know (Zen 4/5) under its
# AVX2 "Haswell" kernels; its SkylakeX kernels run about twice as fast there.
# The variable is read when the library loads, so it must be set up front.
# (The hybridinfer tool does this by itself; tests and scripts use this.)
tune_blas() {
  if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo \
     && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo \
     && grep -qw avx512dq /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=SkylakeX
  fi
}

# The CUDA toolkit where NVIDIA installs it: meson finds nvcc on PATH and
# then builds the CUDA backend too (no GPU is needed to build it).
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

build() {
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" "$ROOT" -Dzoo_fixtures="$CACHE/fixtures/zoo" -Dreference_python="$VENV/bin/python" >/dev/null
  else
    meson setup --reconfigure "$BUILD_DIR" "$ROOT" -Dzoo_fixtures="$CACHE/fixtures/zoo" -Dreference_python="$VENV/bin/python" >/dev/null
  fi
  local log="$BUILD_DIR/build.log"
  if ! ninja -C "$BUILD_DIR" >"$log" 2>&1; then
    cat "$log" >&2
    log "build failed"
    return 1
  fi
}

install_packages
install_test_locale
install_venv
tune_blas
build
