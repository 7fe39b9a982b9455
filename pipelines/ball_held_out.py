#!/usr/bin/env python3
"""The shipped ball detector on its held-out frames: MXNet fp32 beside ours
in fp32 and in a reduced precision (TAP).

The held-out set is the one train_ball_detector.py scores the model on and
writes into the sidecar (frame sizes, a motion, background patterns, colours
and a seed the training never saw: make_specs with VAL_SIZES, VAL_MOTIONS,
VAL_PATTERNS and VAL_SEED), rendered by GStreamer once and kept under
--cache.  Every frame goes through real MXNet 1.9.1 (fp32, the reference),
`hybridinfer run` in fp32 and `hybridinfer run --precision P` (hybrid mode),
and each is scored as the training script scores it: mean IoU with the
ball's box, AP@0.5, balls found and false boxes at the element's 0.5
threshold.

Checks, per frame [class_id, score, x1, y1, x2, y2]:
  - fp32: every value within 1e-4 * max(1, max|MXNet|) of MXNet's (as
    verify_ball_detector.py);
  - P (bf16): within docs/PRECISION.md's tolerance, 2^-7 * 16 * max(1,
    max|MXNet|), taken per quantity (the scores against the scores' largest,
    the box against the boxes' largest: one bound over the whole row would
    let the score off by 12); the class MXNet's; and the same decision at the
    0.5 threshold (ball / no ball) unless MXNet's score lies within the
    tolerance of it.
On a CPU without AVX512_BF16 (or with HYBRIDINFER_NO_BF16=1) a bf16 run is
one '# SKIP' line and exit 77.

--precision int8: the model is first quantized by `hybridinfer quantize`
(naive calibration) on frames of the training set (make_specs with the
training sizes, motions, patterns and SEED: the first CALIB_CLIPS clips of
the sequence the training rendered), then the held-out frames run through
the int8 files in `hybridinfer run` and in real MXNet 1.9.1 (its oneDNN int8
kernels).  Checked against MXNet's int8 run of the same files (what int8
can be held to; int8 against fp32 is a model's accuracy, reported): both
compute the same integers, so every value within fp32's bound, the classes
MXNet's and the same ball / no ball decisions.  The accuracy of every run
is printed beside fp32's (and bf16's where the CPU has it).

  ~/.cache/hybridinfer/venv/bin/python pipelines/ball_held_out.py --precision bf16|int8 \\
      --build build [--cache DIR]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import train_ball_detector as tb  # noqa: E402

MODELS = os.path.join(HERE, "models")
SYMBOL = os.path.join(MODELS, "ball-symbol.json")
PARAMS = os.path.join(MODELS, "ball-0000.params")
# How far each precision may be from MXNet's fp32 (docs/PRECISION.md),
# relative to max(1, max|MXNet|).
TOLERANCE = {"fp32": 1e-4, "bf16": 2.0 ** -7 * 16}
THRESHOLD = 0.5  # the element's default score threshold, as in the sidecar
VAL_CLIPS = 150  # train_ball_detector.py's --val-clips default
# Calibration: the first clips of the training sequence (6 frames or fewer
# each), in batches of CALIB_BATCH frames, one forward each.
CALIB_CLIPS = 40
CALIB_BATCH = 64


def held_out_set(cache):
    """(x, boxes, has) of the held-out frames, rendered once into cache."""
    path = os.path.join(cache, "ball-held-out-%d-%d.npz" % (tb.VAL_SEED, VAL_CLIPS))
    if os.path.exists(path):
        d = np.load(path)
        return d["x"], d["boxes"], d["has"]
    specs = tb.make_specs(tb.VAL_SIZES, tb.VAL_MOTIONS, tb.VAL_PATTERNS, VAL_CLIPS,
                          random.Random(tb.VAL_SEED))
    x, boxes, has, _ = tb.build_set(specs, 2)
    os.makedirs(cache, exist_ok=True)
    tmp = path + ".tmp.npz"
    np.savez(tmp, x=x, boxes=boxes, has=has)
    os.replace(tmp, path)
    return x, boxes, has


def calibration_set(cache):
    """Training frames for calibration, rendered once into cache."""
    path = os.path.join(cache, "ball-calib-%d-%d.npy" % (tb.SEED, CALIB_CLIPS))
    if not os.path.exists(path):
        specs = tb.make_specs(tb.TRAIN_SIZES, tb.TRAIN_MOTIONS, tb.TRAIN_PATTERNS,
                              CALIB_CLIPS, random.Random(tb.SEED))
        x, _, _, _ = tb.build_set(specs, 2)
        os.makedirs(cache, exist_ok=True)
        np.save(path + ".tmp.npy", x)
        os.replace(path + ".tmp.npy", path)
    return np.load(path)


def int8_model(tool, cache, work):
    """Prefix of the detector quantized on training frames, made in work
    (each run: the frames are cached, the quantizer is what is tested)."""
    x = calibration_set(cache)
    calib = os.path.join(work, "calib")
    os.makedirs(calib)
    for k in range(0, len(x), CALIB_BATCH):
        np.save(os.path.join(calib, "batch%03d.npy" % (k // CALIB_BATCH)),
                x[k:k + CALIB_BATCH])
    prefix = os.path.join(work, "ball-int8-naive")
    subprocess.run([tool, "quantize", SYMBOL, "--params", PARAMS, "--calib", calib,
                    "--calib-mode", "naive", "-o", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    print("# quantized on %d training frames (the first %d clips)" % (len(x), CALIB_CLIPS))
    return prefix


def mxnet_rows(x, symbol=SYMBOL, params=PARAMS):
    import warnings

    import mxnet as mx
    with warnings.catch_warnings():  # "Cannot decide type for ... data"
        warnings.simplefilter("ignore", UserWarning)
        net = mx.gluon.SymbolBlock.imports(symbol, ["data"], params)
    return np.concatenate([net(mx.nd.array(x[i:i + 256])).asnumpy()
                           for i in range(0, len(x), 256)])[:, 0, :]


def cli_rows(tool, x, precision, symbol=SYMBOL):
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "x.npy"), x)
        subprocess.run([tool, "run", "--model", symbol, "--precision", precision,
                        "--input", "data=" + os.path.join(tmp, "x.npy"),
                        "--output-dir", os.path.join(tmp, "out")], check=True)
        return np.load(os.path.join(tmp, "out", "output0.npy"))[:, 0, :]


def worst(ours, ref, cols):
    """max |ours - ref| / max(1, max|ref|) over the given columns."""
    return float(np.abs(ours[:, cols] - ref[:, cols]).max()
                 / max(1.0, float(np.abs(ref[:, cols]).max())))


def check(name, ours, ref, tol):
    """-> (ok, TAP description)."""
    score_err, box_err = worst(ours, ref, [1]), worst(ours, ref, [2, 3, 4, 5])
    classes_ok = bool((ours[:, 0] == ref[:, 0]).all())
    decided = (ours[:, 1] >= THRESHOLD) == (ref[:, 1] >= THRESHOLD)
    near = np.abs(ref[:, 1] - THRESHOLD) <= tol
    decisions_ok = bool((decided | near).all())
    box_px = float(np.abs(ours[:, 2:] - ref[:, 2:]).max())
    ok = score_err <= tol and box_err <= tol and classes_ok and decisions_ok
    return ok, (f"{name} vs MXNet fp32 on {len(ref)} held-out frames: score "
                f"{score_err:.1e}, box {box_err:.1e} ({box_px:.2f} px) of tolerance "
                f"{tol:.1e}; classes {'as MXNet' if classes_ok else 'DIFFER'}; "
                f"ball/no ball {int(decided.sum())}/{len(ref)} as MXNet"
                f"{'' if decisions_ok else ' (OTHERS NOT NEAR THE THRESHOLD)'}")


def int8_check(ours, ref):
    """ours' int8 rows against MXNet's on the same int8 files -> (ok, TAP
    description).  Both compute the same integers (docs/PRECISION.md,
    int8); only the float decoding after the last dequantize may round
    apart, so each value is held to fp32's bound."""
    tol = TOLERANCE["fp32"]
    ok, what = check("hybridinfer int8", ours, ref, tol)
    exact = int((ours == ref).all(axis=1).sum())
    return ok, what.replace("vs MXNet fp32", "vs MXNet int8 (the same files)") + (
        f"; {exact} rows equal")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--precision", choices=sorted(TOLERANCE) + ["int8"], default="bf16")
    ap.add_argument("--cache", help="where the rendered frames are kept "
                    "(default: BUILD/tests/ball-held-out)")
    args = ap.parse_args()
    has_bf16 = ("avx512_bf16" in open("/proc/cpuinfo").read()
                and os.environ.get("HYBRIDINFER_NO_BF16") != "1")
    # HYBRIDINFER_NO_BF16=1 hides the feature from the engine: the same skip
    if args.precision == "bf16" and not has_bf16:
        print("1..0 # SKIP precision bf16 needs a CPU with AVX512_BF16; this one has none")
        sys.exit(77)
    cache = args.cache or os.path.join(args.build, "tests", "ball-held-out")
    tool = os.path.join(args.build, "tools", "hybridinfer")

    x, boxes, has = held_out_set(cache)
    ref = mxnet_rows(x)
    runs = [("MXNet 1.9.1 fp32", ref), ("hybridinfer fp32", cli_rows(tool, x, "fp32"))]
    if args.precision == "bf16" or (args.precision == "int8" and has_bf16):
        runs.append(("hybridinfer bf16", cli_rows(tool, x, "bf16")))
    work = tempfile.mkdtemp(prefix="ball-held-out-")
    if args.precision == "int8":
        prefix = int8_model(tool, cache, work)
        mx_int8 = mxnet_rows(x, prefix + "-symbol.json", prefix + "-0000.params")
        runs.append(("MXNet 1.9.1 int8", mx_int8))
        runs.append(("hybridinfer int8", cli_rows(tool, x, "fp32", prefix + "-symbol.json")))

    checked = [(k, name) for k, (name, _) in enumerate(runs) if name.startswith("hybridinfer")]
    print("1..%d" % len(checked))
    # The sidecar's figures, re-computed for each engine on the same frames
    for name, rows in runs:
        res = tb.evaluate(rows, boxes, has, ["-"] * len(rows), THRESHOLD)
        res.pop("mean_iou_by_background")
        print("# %-18s %s" % (name, json.dumps(res)))
    failed = 0
    for n, (k, name) in enumerate(checked, 1):
        precision = name.split()[-1]
        if precision == "int8":
            ok, what = int8_check(runs[k][1], mx_int8)
        else:
            ok, what = check(name, runs[k][1], ref, TOLERANCE[precision])
        print(f"{'ok' if ok else 'not ok'} {n} - {what}")
        failed += not ok
    shutil.rmtree(work)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
