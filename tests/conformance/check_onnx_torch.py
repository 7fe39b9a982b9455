#!/usr/bin/env python3
"""ONNX files made by the real exporters (PyTorch, Ultralytics) through `hybridinfer run`,
against ONNX Runtime.

    check_onnx_torch.py TOOL WORK_DIR [--torch-python PATH]

torch_exports.py, run by the torch venv (default $HYBRIDINFER_CACHE/torch-venv/bin/python,
made by tools/setup.sh test), exports torchvision's ResNet-50 and MobileNetV3-Small and
torchvision's SSDlite320 (its backbone and head; and the whole detector) and Ultralytics'
YOLOv8n (plain, and with nms=True) with seeded random weights into
$HYBRIDINFER_CACHE/onnx/torch-exports-vN/ once; this script (the reference venv: numpy, onnx,
onnxruntime) then runs each model in hybrid and in imperative mode and compares every output
with ONNX Runtime's as check_onnx.py does (max|ours - ort| <= 1e-4 * max(1, max|ort|)), the
same for the nms=True file cut before its NonZero, runs the whole nms=True file (its NonZero,
NonMaxSuppression and the shape arithmetic after them as one op) on two images, one that fills
its 300 rows and one that leaves most of them padding, comparing output0 row by row with ONNX
Runtime's, and requires the whole SSDlite detector to be refused with the importer's message.
Prints TAP.
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import onnx.utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_onnx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# Bump when torch_exports.py changes what it writes, so that a stale cache is not reused.
EXPORTS_VERSION = 2
MODELS = ("resnet50", "mobilenet_v3_small", "ssdlite320-head", "yolov8n")
# Exports the importer must refuse, with what the message must hold.  torchvision's whole
# SSDlite detector computes every shape from the transform's resize on from the image at run
# time, with 180 NonZero and an If.
REFUSED = {"ssdlite320": "not supported"}
WHOLE_NMS = "yolov8n-nms"
# What of the nms=True graph the importer takes: everything before its NonZero (the head,
# ReduceMax, ArgMax, the Greater against the score threshold), cut out with
# onnx.utils.extract_model at the values its data-dependent tail reads.
NMS_STATIC_OUTPUTS = ["/Gather_output_0", "/Gather_2_output_0", "/Gather_1_output_0",
                      "/Greater_output_0"]
EXPORT_TIMEOUT_S = 900


def cache_dir():
    base = os.environ.get("HYBRIDINFER_CACHE") or os.path.expanduser("~/.cache/hybridinfer")
    return os.path.join(base, "onnx", "torch-exports-v%d" % EXPORTS_VERSION)


def image_feeds(m):
    """Each graph input as an image would come: values in [0, 1] (YOLOv8's input is scaled
    so; the classifiers take it as well as normalised data)."""
    rng = np.random.default_rng(20261202)
    feeds = {}
    for vi in m.graph.input:
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.uniform(0.0, 1.0, size=dims).astype(np.float32)
    return feeds


def check_yolo_scores(case_dir, path, feeds):
    """YOLOv8's 80 score rows on their own: the box rows, in pixels, set the whole output's
    tolerance, loose for scores in (0, 1)."""
    ref = np.asarray(check_onnx.ort_outputs(path, feeds)[0], dtype=np.float64)[:, 4:]
    parts, ok = [], True
    for mode in ("hybrid", "imperative"):
        ours = np.load(os.path.join(case_dir, "out-" + mode, "output0.npy"))[:, 4:]
        good, text = check_onnx.compare(ours, ref)
        ok = ok and good
        parts.append("scores %s %s" % (mode, text))
    return ok, "; ".join(parts)


# Runs of the whole nms=True file: the score threshold it compares with (None: the file's own,
# 0.25).  With the seeded random weights, any image gives thousands of boxes over 0.25 (the 300
# rows full: the Slice to 300 at work, no padding); a copy of the file with the threshold
# initializer raised to 0.95 keeps about a hundred (the rest of the rows the Pad's zeros).
NMS_THRESHOLD = "/Constant_6_output_0"
NMS_IMAGES = {
    "file as exported": None,
    "score threshold raised to 0.95": 0.95,
}
# Two scores closer than this may come in either order: the head's float sums differ from
# ONNX Runtime's in the last bits, which can swap boxes of nearly equal score.
NEAR_TIE = 1e-5


def compare_detections(ours, ref):
    """output0's rows against ORT's: each row as the same row (within check_onnx's tolerance),
    or, where ORT's scores nearly tie, as one of the rows it ties with.  -> (ok, text)"""
    if ours.shape != ref.shape:
        return False, "shape %s, ORT %s" % (ours.shape, ref.shape)
    ours, ref = ours.reshape(-1, ours.shape[-1]), ref.reshape(-1, ref.shape[-1])
    tol = check_onnx.RTOL * max(1.0, float(np.max(np.abs(ref))) if ref.size else 0.0)
    worst, swapped = 0.0, 0
    for i in range(len(ref)):
        diff = float(np.max(np.abs(ours[i] - ref[i])))
        if diff > tol:
            ties = [j for j in range(max(0, i - 4), min(len(ref), i + 5))
                    if abs(ref[j, 4] - ref[i, 4]) <= NEAR_TIE]
            alt = min(float(np.max(np.abs(ours[i] - ref[j]))) for j in ties)
            if alt <= tol:
                swapped += 1
                diff = alt
        worst = max(worst, diff)
    return worst <= tol, "max|diff| %.3g tol %.3g, %d rows of nearly tied scores swapped" % (
        worst, tol, swapped)


def check_whole_nms(tool, work, path, label, threshold):
    """The whole nms=True file in both modes against ORT, on image_feeds' noise; says how many
    of the 300 rows are detections (the rest are the Pad's zeros), and needs at least one."""
    case_dir = os.path.join(work, "torch-yolov8n-nms-" + ("%g" % threshold if threshold
                                                          else "whole"))
    os.makedirs(case_dir, exist_ok=True)
    m = onnx.load(path)
    if threshold is not None:
        from onnx import numpy_helper
        init = [i for i in m.graph.initializer if i.name == NMS_THRESHOLD]
        if len(init) != 1:
            return False, "no initializer %s to raise" % NMS_THRESHOLD
        init[0].CopyFrom(numpy_helper.from_array(np.array(threshold, np.float32), NMS_THRESHOLD))
        path = os.path.join(case_dir, "yolov8n-nms-threshold.onnx")
        onnx.save(m, path)
    feeds = image_feeds(m)
    ref = np.asarray(check_onnx.ort_outputs(path, feeds)[0], dtype=np.float64)
    rows = int(np.count_nonzero(np.any(ref[0] != 0, axis=-1)))
    parts, ok = ["%d of %d rows detections" % (rows, ref.shape[1])], rows > 0
    for mode in ("hybrid", "imperative"):
        proc, out_dir = check_onnx.run_tool(tool, path, feeds, case_dir, mode)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            return False, "%s: exit %d: %s" % (mode, proc.returncode, err[-1] if err else "")
        good, text = compare_detections(np.load(os.path.join(out_dir, "output0.npy")), ref)
        ok = ok and good
        parts.append("%s %s" % (mode, text))
    return ok, "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("work")
    ap.add_argument("--torch-python")
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    torch_python = args.torch_python or os.path.join(
        os.path.dirname(os.path.dirname(cache_dir())), "torch-venv", "bin", "python")
    out = cache_dir()
    missing = [m for m in MODELS + tuple(REFUSED) + (WHOLE_NMS,)
               if not os.path.isfile(os.path.join(out, m + ".onnx"))]
    if missing and not os.access(torch_python, os.X_OK):
        # A TAP plan of 0 with SKIP is meson's skip (an exit status of 77 would read as an
        # error under protocol tap).
        print("1..0 # SKIP no torch venv at %s (tools/setup.sh test makes it)" % torch_python)
        return 0
    if missing:
        start = time.monotonic()
        proc = subprocess.run([torch_python, os.path.join(HERE, "torch_exports.py"), out],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=EXPORT_TIMEOUT_S)
        if proc.returncode != 0:
            print("1..1")
            print("not ok 1 - export: %s exited %d" % (torch_python, proc.returncode))
            for line in proc.stderr.decode("utf-8", "replace").splitlines()[-20:]:
                print("# " + line)
            return 1
        print("# exported %s in %.1f s" % (", ".join(missing), time.monotonic() - start))

    print("1..%d" % (len(MODELS) + 1 + len(NMS_IMAGES) + len(REFUSED)))
    failed = 0
    for n, name in enumerate(MODELS, 1):
        path = os.path.join(out, name + ".onnx")
        case_dir = os.path.join(args.work, "torch-" + name)
        os.makedirs(case_dir, exist_ok=True)
        start = time.monotonic()
        feeds = image_feeds(onnx.load(path))
        ok, text = check_onnx.check_model(tool, case_dir, path, feeds)
        if ok and name == "yolov8n":
            ok, more = check_yolo_scores(case_dir, path, feeds)
            text += "; " + more
        failed += not ok
        print("%s %d - %s %s (%.1f s)" % ("ok" if ok else "not ok", n, name,
                                          text.replace("#", "No."), time.monotonic() - start))
        sys.stdout.flush()
    n = len(MODELS) + 1
    case_dir = os.path.join(args.work, "torch-yolov8n-nms-static")
    os.makedirs(case_dir, exist_ok=True)
    path = os.path.join(case_dir, "yolov8n-nms-before-nonzero.onnx")
    onnx.utils.extract_model(os.path.join(out, "yolov8n-nms.onnx"), path, ["images"],
                             NMS_STATIC_OUTPUTS)
    start = time.monotonic()
    ok, text = check_onnx.check_model(tool, case_dir, path, image_feeds(onnx.load(path)))
    failed += not ok
    print("%s %d - yolov8n-nms before its NonZero (boxes, scores, classes, over threshold) %s "
          "(%.1f s)" % ("ok" if ok else "not ok", n, text.replace("#", "No."),
                        time.monotonic() - start))
    for n, (label, threshold) in enumerate(NMS_IMAGES.items(), len(MODELS) + 2):
        start = time.monotonic()
        ok, text = check_whole_nms(tool, args.work, os.path.join(out, WHOLE_NMS + ".onnx"),
                                   label, threshold)
        failed += not ok
        print("%s %d - %s whole, %s: %s (%.1f s)" % (
            "ok" if ok else "not ok", n, WHOLE_NMS, label, text.replace("#", "No."),
            time.monotonic() - start))
        sys.stdout.flush()
    for n, (name, want) in enumerate(REFUSED.items(),
                                     len(MODELS) + 2 + len(NMS_IMAGES)):
        path = os.path.join(out, name + ".onnx")
        proc = subprocess.run([tool, "inspect", "--model", path], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=check_onnx.TIMEOUT_S)
        err = proc.stderr.decode("utf-8", "replace").strip()
        last = err.splitlines()[-1] if err else ""
        # Refused by the importer, naming the file and a node: not a crash (a signal is < 0).
        ok = proc.returncode > 0 and path in last and "node '" in last and want in last
        failed += not ok
        print("%s %d - %s refused: exit %d: %s" % ("ok" if ok else "not ok", n, name,
                                                  proc.returncode, last[:300].replace("#", "No.")))
    total = len(MODELS) + 1 + len(NMS_IMAGES) + len(REFUSED)
    print("# %d of %d real exports match ONNX Runtime or are refused as they must be"
          % (total - failed, total))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
