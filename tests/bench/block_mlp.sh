#!/bin/sh
# The block API's hybridize benchmark: the Gluon book's 512-256-128-2 MLP,
# 1000 forwards at batch 1 before and after hy_block_hybridize()
# (docs/examples/mlp.c --bench: best of 5 rounds each), against the seeds'
# figure of a 2x speed-up.  A benchmark, not a test: it reports, and fails
# only with --require.
#
#   tests/bench/block_mlp.sh [--build DIR] [--threads N] [--require RATIO]
#
# --threads sets OPENBLAS_NUM_THREADS (default: OpenBLAS's own choice).
# With the MXNet venv present (~/.cache/hybridinfer/venv), MXNet's own
# ratio on this machine is printed too, for scale.
set -eu

build=build
threads=
require=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --require) require=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--threads N] [--require RATIO]" >&2; exit 2 ;;
  esac
done

mlp=$build/docs/examples/mlp
if [ ! -x "$mlp" ]; then
  echo "$mlp not found: build first (ninja -C $build)" >&2
  exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ -n "$threads" ]; then
  export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads"
fi
# OpenBLAS's AVX-512 kernels where it would not pick them itself (README:
# "OpenBLAS on AVX-512 CPUs"), as tools/setup.sh does.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo \
   && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo \
   && grep -qw avx512dq /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
echo "hybridinfer (OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-default}," \
  "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-default}):"
"$mlp" --bench --out "$out" | tee "$out/log" | grep -v '^wrote'
ratio=$(sed -n 's/^ *speed-up: \([0-9.]*\)x$/\1/p' "$out/log")

venv_python=${HYBRIDINFER_VENV:-$HOME/.cache/hybridinfer/venv}/bin/python
if [ -x "$venv_python" ]; then
  echo "MXNet 1.9.1, the same measure (best of 5 rounds of 1000 net(x)):"
  "$venv_python" - <<'PY' 2>/dev/null || true
import time, warnings
warnings.filterwarnings("ignore")
import mxnet as mx
from mxnet.gluon import nn
net = nn.HybridSequential()
net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
net.initialize(mx.init.Xavier())
x = mx.nd.random.normal(shape=(1, 512))
def bench():
    best = 1e9
    for _ in range(5):
        mx.nd.waitall(); t = time.time()
        for _ in range(1000):
            net(x)
        mx.nd.waitall(); best = min(best, time.time() - t)
    return best
before = bench(); net.hybridize(static_alloc=True, static_shape=True); net(x); after = bench()
print("  before hybridizing: %.4f s\n  after hybridizing:  %.4f s\n  speed-up: %.2fx"
      % (before, after, before / after))
PY
fi

target=2.0
if awk "BEGIN { exit !($ratio >= $target) }"; then
  echo "hybridize speed-up ${ratio}x: meets the seeds' ${target}x"
else
  echo "hybridize speed-up ${ratio}x: below the seeds' ${target}x"
fi
if [ -n "$require" ] && ! awk "BEGIN { exit !($ratio >= $require) }"; then
  exit 1
fi
