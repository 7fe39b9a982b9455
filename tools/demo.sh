#!/usr/bin/env bash
# demo.sh — the main job: load real Gluon exports and run them, checked
# against MXNet 1.9.1's own outputs.
#
#  1. the LeNet-style `Net` from the Gluon hybrid tutorial (shipped under
#     tests/fixtures/seed_net, exported by real MXNet): inspect, then run
#  2. ResNet-18 v1 from the Gluon model zoo (random weights, built and
#     exported by MXNet into the cache on first use): run, timed
# Each run's output is compared with what MXNet computed for the same input.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/tools/setup.sh"
HY="$BUILD_DIR/tools/hybridinfer"
PY="$VENV/bin/python"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

compare() {  # compare OURS.npy MXNET.npy
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, numpy as np
ours, ref = np.load(sys.argv[1]), np.load(sys.argv[2])
err = float(np.abs(ours - ref).max())
tol = 1e-4 * max(1.0, float(np.abs(ref).max()))
print(f"   output {ours.shape}: top class per sample {ours.reshape(ours.shape[0], -1).argmax(1).tolist()}")
print(f"   vs MXNet 1.9.1: max |diff| = {err:.2e} (tolerance {tol:.1e}) -> {'MATCH' if err <= tol else 'MISMATCH'}")
sys.exit(0 if err <= tol else 1)
PYEOF
}

NET="$ROOT/tests/fixtures/seed_net"
echo
echo "== hybridinfer inspect: the Gluon tutorial's Net (conv/pool/dense + dot(x, fc3_weight, transpose_b))"
"$HY" inspect --model "$NET/model-symbol.json" --shape data=4x1x28x28
echo
for mode in imperative hybrid; do
  echo "== hybridinfer run --mode $mode"
  "$HY" run --model "$NET/model-symbol.json" --input "data=$NET/input0.npy" \
    --output-dir "$OUT/net-$mode" --mode "$mode"
  compare "$OUT/net-$mode/output0.npy" "$NET/output0.npy"
done

ZOO="$CACHE/fixtures/zoo"
echo
echo "== ResNet-18 v1 (Gluon model zoo, exported by MXNet into $ZOO)"
"$PY" "$ROOT/tests/conformance/gen_fixtures.py" --set zoo --only zoo_resnet18_v1_b1 --out "$ZOO" >/dev/null
CASE="$ZOO/zoo_resnet18_v1_b1"
start=$(date +%s%N)
"$HY" run --model "$CASE/model-symbol.json" --input "data=$CASE/input0.npy" --output-dir "$OUT/resnet18"
end=$(date +%s%N)
printf '   load + forward: %d ms (OpenBLAS kernels: %s)\n' \
  $(( (end - start) / 1000000 )) "${OPENBLAS_CORETYPE:-auto}"
compare "$OUT/resnet18/output0.npy" "$CASE/output0.npy"
