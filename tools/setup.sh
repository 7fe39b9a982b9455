#!/usr/bin/env bash
# setup.sh — make this machine able to build (and test, and benchmark)
# hybridinfer, then build.
#
# Idempotent: installs only what is missing, then configures and builds
# with meson.  What it installs depends on what the caller is about to do
# (SETUP_FOR, or the first argument when run rather than sourced); each
# level includes the one above it:
#
#   demo    Debian packages to build the library and the GStreamer elements
#           and run them (GStreamer's base and good plugins, a font for
#           hybridoverlay); builds the elements only.  No Python, no venv:
#           what pipelines/demo.sh needs.
#   test    (the default) + what tools/test.sh and the scripts that check
#           against MXNet need: clang and its sanitizer runtimes (the fuzz
#           targets), GObject introspection and python3-gi (the typelib and
#           its Python test), the de_DE.UTF-8 locale, and the reference venv
#           under the cache: MXNet 1.9.1, numpy < 1.24, ONNX, ONNX Runtime,
#           GluonCV 0.10.5's model zoo, motmetrics (the tracker's measures);
#           and a second venv, torch-venv, for the real ONNX exporters
#           (PyTorch 2.5.1, torchvision, Ultralytics 8.3.160: 2 to 4 minutes
#           and 6 GB from scratch); builds everything.
#   bench   + the benchmark peers no test needs: OpenVINO, in the same venv
#           (tests/bench/compare.py, layers_vs_openvino.py).
#
# Sourced by pipelines/demo.sh (SETUP_FOR=demo, through pipelines/common.sh),
# tools/test.sh, tools/demo.sh and the other pipeline scripts (test);
# usable alone: `tools/setup.sh bench`.  A lower level never removes what a
# higher one installed: the build configured by `test` keeps its options.
#
# Environment:
#   SETUP_FOR           demo, test or bench (default test)
#   HYBRIDINFER_CACHE   cache root (default ~/.cache/hybridinfer): venv, zoo fixtures
#   BUILD_DIR           build directory (default: build)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HYBRIDINFER_CACHE:-$HOME/.cache/hybridinfer}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
VENV="$CACHE/venv"
TORCH_VENV="$CACHE/torch-venv"
export HYBRIDINFER_CACHE="$CACHE"
# Run (not sourced): the level may be the first argument.
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ $# -gt 0 ]; then SETUP_FOR="$1"; fi
SETUP_FOR="${SETUP_FOR:-test}"
case "$SETUP_FOR" in
  demo | test | bench) ;;
  *)
    echo "setup.sh: SETUP_FOR must be demo, test or bench, not '$SETUP_FOR'" >&2
    # shellcheck disable=SC2317  # exit: when run, not sourced
    return 1 2>/dev/null || exit 1 ;;
esac

# To build the library and the elements (hybridoverlay draws with Pango
# and Cairo, hybridpublish speaks MQTT through libmosquitto; ONNX models are
# decoded with protobuf-c from libonnx-dev's onnx.proto), and to run
# the pipelines: videotestsrc and the converters are
# in the base plugins; v4l2src, vp8enc, pngenc and multifilesink (webcam.sh,
# file.sh, detect_ball.sh) in the good ones.  oneDNN is here although no
# pipeline switches it on: meson 1.0 keeps a compiler check's answer for the
# life of a build directory, so a libdnnl-dev installed after the first
# configure would never be seen by that build (the other test packages are
# found through pkg-config, which it asks again on each configure).
APT_DEMO=(meson ninja-build pkg-config gcc libglib2.0-dev libjson-glib-dev
  libopenblas-dev libdnnl-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  libpango1.0-dev libcairo2-dev fonts-dejavu-core libmosquitto-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev)
# The tests: the fuzz targets (clang, its sanitizer runtimes), the
# GstHybrid-1.0 typelib and the Python that reads it, the comma-decimal
# locale, the reference venv, an MQTT broker and subscriber (track-mqtt),
# and hybridpublish's Kafka side with the mock cluster its test talks to
# (librdkafka; no Kafka broker is packaged for Debian 12).
APT_TEST=(clang libclang-rt-14-dev locales
  gobject-introspection libgirepository1.0-dev python3-gi gir1.2-gstreamer-1.0
  python3 python3-venv mosquitto mosquitto-clients librdkafka-dev)

log() { printf '== %s\n' "$*" >&2; }

install_packages() {  # install_packages PACKAGE...
  local missing=()
  for p in "$@"; do
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
  # motmetrics scores hybridtrack (MOTA, IDF1: tests/track/mot_eval.py).  Its pandas and
  # scipy would pull numpy 2, which MXNet cannot load: every pin kept, pandas below 2.3.
  if ! "$VENV/bin/python" -c "import motmetrics" 2>/dev/null; then
    log "adding motmetrics (the tracker's measures) to $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check motmetrics "numpy<1.24" \
      "pandas<2.3" "scipy<1.11" \
      || log "motmetrics did not install: the track-mot test will not run"
  fi
}

# The real ONNX exporters (tests/conformance/torch_exports.py): torch.onnx for
# torchvision's models and Ultralytics' export of YOLOv8n.  A venv of their
# own, because torch needs a numpy that MXNet 1.9.1 cannot load.  PyPI's torch
# wheel pulls its CUDA libraries (nvidia-*-cu12) even where no GPU is: about
# 6 GB installed.  Ultralytics' ONNX export checks for onnx, onnxslim and
# onnxruntime and would try to pip-install them at export time if absent, so
# they are installed here, pinned, and the export runs offline.
TORCH_PACKAGES=("torch==2.5.1" "torchvision==0.20.1" "onnx==1.17.0" "onnxslim==0.1.98"
  "onnxruntime==1.20.1" "ultralytics==8.3.160")
install_torch_venv() {
  # The pinned versions read from the installed metadata, not by importing: importing torch
  # takes seconds on every setup.  A venv with other versions is brought to the pins.
  if [ -x "$TORCH_VENV/bin/python" ] && "$TORCH_VENV/bin/python" - "${TORCH_PACKAGES[@]}" <<'PY'
import sys
from importlib import metadata
def installed(pin):
    name, version = pin.split("==")
    try:
        return metadata.version(name) == version
    except metadata.PackageNotFoundError:
        return False
sys.exit(not all(installed(pin) for pin in sys.argv[1:]))
PY
  then
    return 0
  fi
  log "installing the exporters' venv in $TORCH_VENV (${TORCH_PACKAGES[*]}; about 6 GB)"
  local start=$SECONDS
  mkdir -p "$CACHE"
  if ! { python3 -m venv "$TORCH_VENV" \
           && "$TORCH_VENV/bin/pip" install -q --disable-pip-version-check "${TORCH_PACKAGES[@]}"; }
  then
    log "the exporters' venv did not install into $TORCH_VENV: the onnx-torch-exports test" \
      "needs it (rerun tools/setup.sh test once PyPI is reachable)"
    return 1
  fi
  log "exporters' venv ready in $((SECONDS - start)) s ($(du -sh "$TORCH_VENV" | cut -f1))"
}

# OpenVINO is a peer in tests/bench/compare.py only (no test uses it): one
# wheel (~60 MB, ~180 MB installed, no system packages; 2026.4.1 takes numpy
# 1.23), installed with the same numpy pin so that pip picks a release that
# keeps it.  A venv that cannot get it still works for everything else:
# compare.py then leaves its column empty and says how to add it.
install_bench_peers() {
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

# Configures (again each time: meson then finds what a higher level has
# installed since, the introspection tools) and builds: everything, or for
# `demo` the GStreamer plugin and the libraries it links (about half the
# objects; a later `test` builds the rest).  The reference options are given
# only where the venv exists, so that `demo` after `test` keeps the options
# `test` set.
build() {
  local opts=() targets=()
  if [ -x "$VENV/bin/python" ]; then
    opts=(-Dzoo_fixtures="$CACHE/fixtures/zoo" -Dreference_python="$VENV/bin/python")
  fi
  if [ "$SETUP_FOR" = demo ]; then targets=(gst-plugin/libgsthybridinfer.so); fi
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" "$ROOT" "${opts[@]}" >/dev/null
  else
    meson setup --reconfigure "$BUILD_DIR" "$ROOT" "${opts[@]}" >/dev/null
  fi
  local log="$BUILD_DIR/build.log" start=$SECONDS
  if ! ninja -C "$BUILD_DIR" "${targets[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    log "build failed"
    return 1
  fi
  log "built ${targets[*]:-everything} in $BUILD_DIR ($((SECONDS - start)) s)"
}

install_packages "${APT_DEMO[@]}"
if [ "$SETUP_FOR" != demo ]; then
  install_packages "${APT_TEST[@]}"
  install_test_locale
  install_venv
  install_torch_venv
  if [ "$SETUP_FOR" = bench ]; then install_bench_peers; fi
fi
tune_blas
build
