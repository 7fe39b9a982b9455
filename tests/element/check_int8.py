#!/usr/bin/env python3
"""An int8 model through hybridinfer in a pipeline, against real MXNet's int8.

The colors test model (tests/element/models, make_models.py) is quantized
here by real MXNet 1.9.1 (`quantize_net_v2`, naive calibration on solid
frames of its nine colours and two ramps) and exported into a temporary
folder, as a user would make an int8 model.  For each case gst-launch-1.0
runs videotestsrc through hybridinfer with that int8 model into a filesink
(check_mxnet.py's way: the raw frames land in a file, `-m` prints the
element's messages); the same frames, pre-processed in numpy, go through
MXNet's own int8 model (its oneDNN kernels).  The element's top label must
be MXNet's, and, on a frame of one of the model's colours, that colour; its
scores must be MXNet's within SCORE_TOL.

Why not check_mxnet.py's 1e-4: the element converts and resizes frames in
float32, numpy in float64, and a value that lands on the other side of a
rounding in the first quantize moves one int8 step; the layers after it
are exact, so such a step is all the scores can differ by.  On these
frames no value takes that step: the largest difference is 1.3e-5
(2026-12-02, float rounding of the last scale and the softmax).

On the CPU in hybrid mode the element converts each frame straight into
the model's int8 input, rounded as its first quantize node would, and the
forward skips that node (no float input is written): the last two cases
count the element's log line for it, on every frame in hybrid mode and on
none in imperative mode, which takes the frames as floats.

The same frames also go through a QDQ ONNX file of the colors model: MXNet's
ONNX export of it (mx.onnx.export_model), quantized by ONNX Runtime's
quantize_static on the same calibration frames (uint8 activations, int8
weights per channel), given to the element as it is (qdq=int8, the
default: its scales become the ranges of the int8 layers).  The reference
is MXNet running the int8 export `hybridinfer quantize FILE.onnx` writes
of that file, with the same tolerance; the element's log must say how
many int8 layers the file became.

The environment must point GStreamer at the plugin (meson's element tests
do).  Prints TAP.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

# MXNet's quantized ops exist only with its oneDNN kernels (the default; said
# here so that an environment that turned them off does not hide them).
os.environ["MXNET_MKLDNN_ENABLED"] = "1"
import numpy as np  # noqa: E402
import mxnet as mx  # noqa: E402
from mxnet.contrib import quantization  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mxnet as cm  # noqa: E402  (frames, pre-processing, messages)

N_FRAMES = 3
SIZE = 32               # the colors model's input (its __shape__)
SCORE_TOL = 1e-2        # softmax scores: one int8 step of the first quantize
MODEL = "colors-int8"

# name, pattern, format, width, height, colorimetry, element options, the
# label the frame's colour must get (None: a mixed frame, MXNet's label only)
CASES = [
    ("int8-red-rgb", "red", "RGB", 64, 48, None, "", "red"),
    ("int8-green-nv12", "green", "NV12", 64, 48, "bt601", "", "green"),
    ("int8-blue-i420", "blue", "I420", 64, 48, "bt601", "", "blue"),
    ("int8-white-bgrx", "white", "BGRx", 40, 30, None, "", "white"),
    ("int8-smpte-rgb", "smpte", "RGB", 64, 48, None, "", None),
    ("int8-ball-i420-letterbox", cm.BALL, "I420", 96, 54, "bt601",
     "resize=letterbox", None),
]

# Which way frames reach the model: (name, element options, how many of
# N_FRAMES must be quantized straight into its int8 input).
PATH_CASES = [
    ("int8-frames-quantized-hybrid", ["mode=hybrid"], N_FRAMES),
    ("int8-frames-as-floats-imperative", ["mode=imperative"], 0),
]
QUANTIZED_LOG = "quantized straight into the model's int8 input"

# The QDQ file's cases: frames of CASES through the file (name, then as CASES)
QDQ_CASES = [("qdq-" + c[0],) + c[1:] for c in CASES[:3] + CASES[4:5]]
QDQ_INT8_LAYERS = 2     # the colors model's convolution and its dense layer
QDQ_QUANTIZE = r"""
import sys
import numpy as np
bench, prefix, size, src, dst, calib = sys.argv[1:7]
sys.path.insert(0, bench)
from compare import export_onnx  # MXNet's mx.onnx.export_model, as the bench runs it
err = export_onnx(prefix, (1, 3, int(size), int(size)), src)
if err:
    sys.exit("MXNet's ONNX export: " + err)
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)
frames = np.load(calib)


class Reader(CalibrationDataReader):
    def __init__(self):
        self.it = iter([{"data": frames[i:i + 1]} for i in range(len(frames))])

    def get_next(self):
        return next(self.it, None)


quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                per_channel=True)
"""


def calibration_frames():
    """Solid frames of the model's nine colours (0..255, as the element
    feeds it) and a horizontal and a vertical ramp."""
    colours = [(0, 0, 0), (1, 1, 1), (0.5, 0.5, 0.5), (1, 0, 0), (0, 1, 0),
               (0, 0, 1), (1, 1, 0), (0, 1, 1), (1, 0, 1)]
    frames = [np.ones((3, SIZE, SIZE)) * np.array(c)[:, None, None] * 255
              for c in colours]
    ramp = np.linspace(0, 255, SIZE)
    frames.append(np.broadcast_to(ramp[None, None, :], (3, SIZE, SIZE)))
    frames.append(np.broadcast_to(ramp[None, :, None], (3, SIZE, SIZE)))
    frames.append(np.zeros((3, SIZE, SIZE)))    # 12: two batches of six
    return np.stack(frames).astype(np.float32)


def make_int8_model(models, out):
    """quantize_net_v2's export of the colors model into out/colors-int8,
    with the fp32 model's sidecar beside it (its scale, its input size)."""
    net = mx.gluon.SymbolBlock.imports(
        os.path.join(models, "colors-shaped-symbol.json"), ["data"],
        os.path.join(models, "colors-shaped-0000.params"))
    calib = calibration_frames()
    qnet = quantization.quantize_net_v2(
        net, quantized_dtype="auto", quantize_mode="full", exclude_layers=None,
        calib_data=mx.io.NDArrayIter(calib, batch_size=6),
        num_calib_examples=len(calib), calib_mode="naive", ctx=mx.cpu(),
        logger=None)
    qnet.hybridize(static_alloc=True, static_shape=True)
    qnet(mx.nd.array(calib[:1]))
    prefix = os.path.join(out, MODEL)
    qnet.export(prefix, epoch=0)
    shutil.copy(os.path.join(models, "colors-shaped-model.json"),
                prefix + "-model.json")
    with open(prefix + "-symbol.json") as f:
        ops = {n["op"] for n in json.load(f)["nodes"]}
    if "_contrib_quantize_v2" not in ops or "_sg_mkldnn_conv" not in ops:
        raise RuntimeError("MXNet wrote no int8 model: ops %s" % sorted(ops))
    return prefix


def make_qdq_model(models, tool, out):
    """The colors model as a QDQ ONNX file (MXNet's ONNX export, quantized by
    ONNX Runtime), its sidecar beside it; and the reference: MXNet's net of
    the int8 export `hybridinfer quantize` writes of that file."""
    fp32 = os.path.join(out, "colors.onnx")
    qdq = os.path.join(out, "colors-qdq.onnx")
    calib = os.path.join(out, "calib.npy")
    np.save(calib, calibration_frames())
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), "bench")
    # its own process: ONNX Runtime apart from this one's MXNet
    proc = subprocess.run(
        [sys.executable, "-c", QDQ_QUANTIZE, bench,
         os.path.join(models, "colors-shaped"), str(SIZE), fp32, qdq, calib],
        capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError("making the QDQ file: %s" % proc.stderr[-2000:])
    shutil.copy(os.path.join(models, "colors-shaped-model.json"),
                os.path.join(out, "colors-qdq-model.json"))
    ref = os.path.join(out, "colors-qdq-mxnet-int8")
    subprocess.run([tool, "quantize", qdq, "-o", ref], check=True,
                   capture_output=True, timeout=300)
    net = mx.gluon.SymbolBlock.imports(ref + "-symbol.json", ["data"],
                                       ref + "-0000.params")
    return qdq, net


def check_qdq_log(args, qdq):
    """The element says, at start, how many int8 layers the file became."""
    cmd = [args.gst_launch, "videotestsrc", "num-buffers=1", "!",
           "video/x-raw,format=RGB,width=64,height=48", "!", "hybridinfer",
           "model=%s" % qdq, "device=cpu", "!", "fakesink"]
    env = dict(os.environ, GST_DEBUG="hybridinfer:5", GST_DEBUG_NO_COLOR="1")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                         env=env)
    if out.returncode != 0:
        return "gst-launch failed:\n%s" % out.stderr[-2000:]
    want = ": int8: %d int8 layers from " % QDQ_INT8_LAYERS
    if want not in out.stderr:
        return "the log does not say '%s'" % want.strip()
    return None


def run_pipeline(gst_launch, prefix, labels, case, raw_path):
    name, pattern, fmt, w, h, colorimetry, opts, _ = case
    return cm.launch(gst_launch, pattern, fmt, w, h, colorimetry, prefix,
                     labels, "input-size=%dx%d %s" % (SIZE, SIZE, opts),
                     raw_path, N_FRAMES)


def check_case(args, case, prefix, net, labels, worst):
    name, pattern, fmt, w, h, colorimetry, opts, colour = case
    labels_path = os.path.join(args.models, "colors.txt")
    raw_path = os.path.join(os.path.dirname(prefix), name + ".raw")
    msgs = run_pipeline(args.gst_launch, prefix, labels_path, case, raw_path)
    if len(msgs) != N_FRAMES:
        return "%d messages for %d frames" % (len(msgs), N_FRAMES)
    raw = np.fromfile(raw_path, np.uint8)
    size = cm.frame_size(fmt, w, h)
    if raw.size != N_FRAMES * size:
        return "%d bytes of frames, expected %d" % (raw.size, N_FRAMES * size)
    o = cm.options(opts)
    for i, msg in enumerate(msgs):
        x, _ = cm.tensor(raw[i * size:(i + 1) * size], fmt, w, h, o,
                         (1, 3, SIZE, SIZE), colorimetry)
        ref = net(mx.nd.array(x)).asnumpy().ravel()
        ids = [int(v) for v in cm.array(msg, "class-ids", "int")]
        scores = [float(v) for v in cm.array(msg, "scores", "float")]
        names = cm.array(msg, "labels", "string")
        if sorted(ids) != list(range(ref.size)) or len(scores) != ref.size:
            return "frame %d: class-ids %s: expected every class" % (i, ids)
        ours = np.zeros(ref.size)
        ours[ids] = scores
        err = float(np.max(np.abs(ours - ref)))
        worst[0] = max(worst[0], err)
        if err > SCORE_TOL:
            return "frame %d: scores off MXNet's int8 by %g (tolerance %g)" % (
                i, err, SCORE_TOL)
        best = int(np.argmax(ref))
        second = float(np.sort(ref)[-2])
        if ids[0] != best and ref[best] - second > SCORE_TOL:
            return "frame %d: label %s, MXNet's int8 model says %s" % (
                i, names[0], labels[best])
        if colour and names[0] != colour:
            return "frame %d: a %s frame labelled %s" % (i, colour, names[0])
    return None


def check_path(args, case, prefix):
    """The element's log (GST_DEBUG level 6) says of each frame whether it
    went to the model quantized; the frames must still get labels."""
    name, opts, want = case
    cmd = [args.gst_launch, "-m", "videotestsrc",
           "num-buffers=%d" % N_FRAMES, "pattern=smpte", "!",
           "video/x-raw,format=RGB,width=64,height=48", "!", "hybridinfer",
           "model=%s-symbol.json" % prefix, "device=cpu",
           "post-messages=true", "input-size=%dx%d" % (SIZE, SIZE)] + opts \
        + ["!", "fakesink"]
    env = dict(os.environ, GST_DEBUG="hybridinfer:6", GST_DEBUG_NO_COLOR="1")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                         env=env)
    if out.returncode != 0:
        return "gst-launch failed:\n%s" % out.stderr[-2000:]
    results = out.stdout.count("(element): hybridinfer,")
    if results != N_FRAMES:
        return "%d results for %d frames" % (results, N_FRAMES)
    got = out.stderr.count(QUANTIZED_LOG)
    if got != want:
        return "%d of %d frames quantized straight into the int8 input, " \
            "expected %d" % (got, N_FRAMES, want)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gst-launch", default="gst-launch-1.0")
    ap.add_argument("--models", required=True)
    ap.add_argument("--tool", required=True, help="the hybridinfer tool")
    args = ap.parse_args()
    with open(os.path.join(args.models, "colors.txt")) as f:
        labels = f.read().splitlines()
    with tempfile.TemporaryDirectory(prefix="hy-int8-element-") as tmp:
        prefix = make_int8_model(args.models, tmp)
        net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                           prefix + "-0000.params")
        qdq, qdq_net = make_qdq_model(args.models, args.tool, tmp)
        worst = [0.0]

        def check(case):
            if case == ("qdq-log",):
                return check_qdq_log(args, qdq)
            if len(case) == 3:
                return check_path(args, case, prefix)
            if case[0].startswith("qdq-"):
                return check_case(args, case, qdq, qdq_net, labels, worst)
            return check_case(args, case, prefix, net, labels, worst)
        status = cm.run_tap(CASES + PATH_CASES + QDQ_CASES + [("qdq-log",)], check)
        print("# largest score difference from MXNet's int8 model: %g"
              % worst[0])
        return status


if __name__ == "__main__":
    sys.exit(main())
