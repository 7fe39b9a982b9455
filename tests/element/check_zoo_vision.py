#!/usr/bin/env python3
"""GluonCV model-zoo exports in the element against real MXNet, on frames
GStreamer makes: FCN's class map (output=segmentation), SimplePose's
keypoints (output=pose), and SSD's and Faster R-CNN's detections
(output=detection: every object MXNet keeps, in its order, with its box
mapped back to the frame) — the results the element turns into metas.

The exports are the zoo conformance cases (tests/conformance/gen_fixtures.py:
GluonCV 0.10.5, pretrained=False, seeded random weights) in --zoo; a case not
there is a TAP skip naming it.  As check_mxnet.py does, gst-launch-1.0 runs
videotestsrc through hybridinfer into a file, and MXNet runs on the same
frames pre-processed in numpy.  Random weights leave near-ties that float
rounding may break either way, so a pixel (or keypoint) whose two best
scores in MXNet are within 1e-4 * max(1, max|scores|) may differ; nothing
else may.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mxnet as cm  # noqa: E402  (frames, messages, MXNet runner)

IMAGENET = ("scale=0-1 mean=\"<0.485,0.456,0.406>\" "
            "std=\"<0.229,0.224,0.225>\"")
# Inputs within about ±0.05, as the SSD conformance case scales its images:
# VGG16 has no BatchNorm, and with random weights inputs of ImageNet's range
# saturate its class scores to within an ulp of 1, where ties decide the order.
SMALL = "scale=0-1 mean=\"<0.5,0.5,0.5>\" std=\"<10,10,10>\""
LABELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "pipelines", "labels")

# name, zoo case, labels, pattern, format, width, height, colorimetry, options
CASES = [
    ("fcn-segmentation-rgb", "zoo_fcn_resnet50_voc_b1", "voc-segmentation",
     "smpte", "RGB", 160, 120, None,
     "output=segmentation input-size=64x64 " + IMAGENET),
    ("fcn-segmentation-nv12-letterbox", "zoo_fcn_resnet50_voc_b1",
     "voc-segmentation", cm.BALL, "NV12", 128, 80, "bt601",
     "output=segmentation input-size=64x64 resize=letterbox " + IMAGENET),
    ("simple-pose-i420", "zoo_simple_pose_resnet18_v1b_b1", "coco-keypoints",
     cm.BALL, "I420", 192, 256, "bt601",
     "output=pose input-size=96x128 " + IMAGENET),
    ("ssd-detection-rgb-letterbox", "zoo_ssd_300_vgg16_atrous_voc_b1", "voc",
     "smpte", "RGB", 320, 180, None,
     "output=detection threshold=-1 input-size=300x300 resize=letterbox "
     + SMALL),
    ("faster-rcnn-detection-nv12", "zoo_faster_rcnn_resnet50_v1b_voc_b1",
     "voc", cm.BALL, "NV12", 160, 120, "bt601",
     "output=detection threshold=-1 input-size=128x128 " + IMAGENET),
]


def run(gst_launch, zoo, case, raw_path):
    name, zoo_case, labels, pattern, fmt, w, h, colorimetry, opts = case
    caps = "video/x-raw,format=%s,width=%d,height=%d" % (fmt, w, h)
    if colorimetry:
        caps += ",colorimetry=%s" % colorimetry
    cmd = ("%s -m videotestsrc num-buffers=%d pattern=%s ! capsfilter "
           "caps=\"%s\" ! hybridinfer model=%s labels=%s device=cpu "
           "top-k=1000 post-messages=true %s ! filesink location=%s"
           % (gst_launch, cm.N_FRAMES, pattern, caps,
              os.path.join(zoo, zoo_case, "model-symbol.json"),
              os.path.join(LABELS, labels + ".txt"), opts, raw_path))
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise RuntimeError("gst-launch failed:\n%s%s" % (out.stdout,
                                                       out.stderr))
    return [line.split("(element): ", 1)[1] for line in
            out.stdout.splitlines() if "(element): hybridinfer," in line]


def near_tie(scores, axis):
    """Where the best two values along `axis` are within the tolerance."""
    tol = cm.TOL * max(1.0, float(np.max(np.abs(scores))))
    top2 = -np.sort(-scores, axis=axis).take([0, 1], axis=axis)
    return np.abs(top2.take(0, axis=axis) - top2.take(1, axis=axis)) <= tol


def check_segmentation(msg, ref):
    """Pixels per class against MXNet's argmax, near-ties aside."""
    scores = ref[0]
    classes = np.argmax(scores, axis=0).ravel()
    ties = int(near_tie(scores, 0).sum())
    want = np.bincount(classes, minlength=scores.shape[0])
    ids = [int(v) for v in cm.array(msg, "class-ids", "int")]
    cover = [float(v) for v in cm.array(msg, "coverage", "float")]
    got = np.zeros_like(want)
    for c, share in zip(ids, cover):
        got[c] = int(round(share * classes.size))
    diff = int(np.abs(got - want).sum())
    if diff > 2 * ties:
        return "pixels per class differ by %d (%d near-ties): %s vs MXNet %s" % (
            diff, ties, got.tolist(), want.tolist())
    if got.sum() != classes.size:
        return "coverage adds up to %d pixels of %d" % (got.sum(), classes.size)
    return None


def check_pose(msg, ref, area, w, h, dw, dh):
    k, hh, hw = ref.shape[1:]
    got = [float(v) for v in cm.array(msg, "keypoints", "float")]
    if len(got) != 3 * k:
        return "%d keypoint values for %d heatmaps" % (len(got), k)
    ties = near_tie(ref[0].reshape(k, -1), 1)
    ox, oy, rw, rh = area
    for j in range(k):
        hm = ref[0, j].ravel()
        at, best = int(np.argmax(hm)), float(np.max(hm))
        if abs(got[3 * j + 2] - best) > cm.TOL * max(1.0, abs(best)):
            return "keypoint %d scores %g, MXNet %g" % (j, got[3 * j + 2], best)
        if ties[j]:
            continue
        x, y = (at % hw, at // hw) if best > 0 else (0, 0)
        want = ((x * dw / hw - ox) * w / rw, (y * dh / hh - oy) * h / rh)
        if max(abs(got[3 * j] - want[0]), abs(got[3 * j + 1] - want[1])) \
                > 1e-3 * max(w, h):
            return "keypoint %d at %s, MXNet's heatmap gives %s" % (
                j, got[3 * j:3 * j + 2], want)
    if len(cm.array(msg, "skeleton", "int")) != 32:
        return "COCO's 17 keypoints: 16 skeleton edges expected"
    return None


def check(args, case, tmp):
    name, zoo_case, labels, pattern, fmt, w, h, colorimetry, opts = case
    raw_path = os.path.join(tmp, name + ".raw")
    msgs = run(args.gst_launch, args.zoo, case, raw_path)
    if len(msgs) != cm.N_FRAMES:
        return "%d messages for %d frames" % (len(msgs), cm.N_FRAMES)
    raw = np.fromfile(raw_path, np.uint8)
    size = cm.frame_size(fmt, w, h)
    net = cm.Model(os.path.join(args.zoo, zoo_case), "model")
    o = cm.options(opts)
    dw, dh = (int(v) for v in o["input-size"].split("x"))
    for i, msg in enumerate(msgs):
        x, area = cm.tensor(raw[i * size:(i + 1) * size], fmt, w, h, o,
                            (1, 3, dh, dw), colorimetry)
        ref = net(x)[0]
        if "detection" in opts:
            problem = cm.check_detection(msg, net(x), area, w, h)
        elif "segmentation" in opts:
            problem = check_segmentation(msg, ref)
        else:
            problem = check_pose(msg, ref, area, w, h, dw, dh)
        if problem:
            return "frame %d: %s" % (i, problem)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gst-launch", default="gst-launch-1.0")
    ap.add_argument("--zoo", required=True)
    args = ap.parse_args()

    def missing(case):
        if os.path.exists(os.path.join(args.zoo, case[1], "model-symbol.json")):
            return None
        return ("no %s in %s (made by gen_fixtures.py --set zoo, with "
                "gluoncv)" % (case[1], args.zoo))

    with tempfile.TemporaryDirectory(prefix="hy-zoo-vision-") as tmp:
        return cm.run_tap(CASES, lambda case: check(args, case, tmp), missing)


if __name__ == "__main__":
    sys.exit(main())
