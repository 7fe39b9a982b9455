#!/usr/bin/env python3
"""GluonCV model-zoo exports in the element against real MXNet, on frames
GStreamer makes: FCN's class map (output=segmentation), SimplePose's
keypoints (output=pose), SSD's, Faster R-CNN's and CenterNet's detections
(output=detection: every object MXNet keeps, in its order, with its box
mapped back to the frame; CenterNet's ids and scores are (B, K), not
(B, K, 1)) and Mask R-CNN's instance masks (pasted into the
frame as GluonCV's fill pastes MXNet's, then painted by hybridoverlay) —
the results the element turns into metas itself.

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
import re
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
    # CenterNet: topk of heatmap peaks, ids and scores (B, K) without NMS
    ("center-net-detection-rgb-letterbox", "zoo_center_net_resnet18_v1b_voc_b1",
     "voc", cm.BALL, "RGB", 160, 120, None,
     "output=detection threshold=0 input-size=128x128 resize=letterbox "
     + IMAGENET),
    ("center-net-mobilenet-detection-nv12",
     "zoo_center_net_mobilenetv3_small_duc_voc_b1", "voc", "smpte", "NV12",
     128, 128, "bt601",
     "output=detection threshold=0 input-size=128x128 " + IMAGENET),
    ("faster-rcnn-detection-nv12", "zoo_faster_rcnn_resnet50_v1b_voc_b1",
     "voc", cm.BALL, "NV12", 160, 120, "bt601",
     "output=detection threshold=-1 input-size=128x128 " + IMAGENET),
    # a letterboxed picture: boxes (and masks) reach past it and are clipped
    ("mask-rcnn-rgb-letterbox", "zoo_mask_rcnn_resnet18_v1b_coco_b1", None,
     cm.BALL, "RGB", 160, 120, None,
     "output=detection threshold=0 input-size=128x128 resize=letterbox "
     + IMAGENET),
]

OVERLAY = "hybridoverlay draw-boxes=false draw-labels=false map-alpha=0.5"


def run(gst_launch, zoo, case, raw_path, overlay=None):
    name, zoo_case, labels, pattern, fmt, w, h, colorimetry, opts = case
    caps = "video/x-raw,format=%s,width=%d,height=%d" % (fmt, w, h)
    if colorimetry:
        caps += ",colorimetry=%s" % colorimetry
    cmd = ("%s -m videotestsrc num-buffers=%d pattern=%s ! capsfilter "
           "caps=\"%s\" ! hybridinfer model=%s %s device=cpu "
           "top-k=1000 post-messages=true %s ! %s filesink location=%s"
           % (gst_launch, cm.N_FRAMES, pattern, caps,
              os.path.join(zoo, zoo_case, "model-symbol.json"),
              "labels=" + os.path.join(LABELS, labels + ".txt") if labels
              else "", opts, overlay + " !" if overlay else "", raw_path))
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


def masks_of(msg):
    """The element's masks: per detection (x, y, width, height, bitmap)."""
    m = re.search(r"masks=\(int\)<(.*)>;", msg) or \
        re.search(r"masks=\(int\)<(.*)>$", msg)
    if not m:
        return []
    out = []
    for item in re.findall(r"<([^<>]*)>", m.group(1)):
        v = [int(t) for t in re.findall(r"\(int\)(-?\d+)", item)]
        x, y, w, h, runs = v[0], v[1], v[2], v[3], v[4:]
        if sum(runs) != w * h:
            raise ValueError("mask runs add up to %d for %dx%d" % (sum(runs), w, h))
        bits = np.repeat(np.arange(len(runs)) % 2, runs).astype(np.uint8)
        out.append((x, y, w, h, bits.reshape(h, w)))
    return out


def paste_rects(boxes, m_w, m_h):
    """GluonCV fill's rounded rectangles (x1, y1, x2, y2 inclusive), float32."""
    b = boxes.astype(np.float32)
    x, y = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
    hw = (b[:, 2] - b[:, 0]) / 2 * np.float32((m_w + 2) / m_w)
    hh = (b[:, 3] - b[:, 1]) / 2 * np.float32((m_h + 2) / m_h)
    return np.round(np.stack([x - hw, y - hh, x + hw, y + hh], 1)).astype(int)


def clipped(r, w, h):
    x0, y0 = max(r[0], 0), max(r[1], 0)
    x1, y1 = min(r[2] + 1, w), min(r[3] + 1, h)
    return (x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None


def check_masks(msg, refs, area, w, h):
    """Each detection's mask against GluonCV's fill of MXNet's: a pixel may
    differ only where MXNet's mask, moved by the tolerance, would change it;
    a rectangle only where MXNet's box, so moved, would round otherwise."""
    from gluoncv.data.transforms.mask import fill
    ids, scores, boxes, masks = (r[0] for r in refs)
    keep = (ids[:, 0] >= 0) & (scores[:, 0] >= 0)
    got = masks_of(msg)
    want_ids = [int(v) for v in ids[keep, 0]]
    got_ids = [int(v) for v in cm.array(msg, "class-ids", "int")]
    if got_ids != want_ids:
        return "class ids %s, MXNet %s" % (got_ids, want_ids)
    if len(got) != len(want_ids):
        return "%d masks for %d detections" % (len(got), len(want_ids))
    ox, oy, rw, rh = area
    f32 = np.float32
    sx, sy = f32(w) / f32(rw), f32(h) / f32(rh)
    b = boxes[keep].astype(np.float32)
    pic = np.stack([(b[:, 0] - f32(ox)) * f32(w) / f32(rw),
                    (b[:, 1] - f32(oy)) * f32(h) / f32(rh),
                    (b[:, 2] - f32(ox)) * f32(w) / f32(rw),
                    (b[:, 3] - f32(oy)) * f32(h) / f32(rh)], 1)
    m = masks[keep]
    m_h, m_w = m.shape[1:]
    tol = cm.TOL * max(1.0, float(np.abs(m).max()))
    btol = cm.TOL * max(1.0, float(np.abs(boxes).max())) * max(sx, sy)
    lo, hi = fill(m - tol, pic, (w, h)), fill(m + tol, pic, (w, h))
    rects = paste_rects(pic, m_w, m_h)
    moved = [paste_rects(pic + d, m_w, m_h) for d in (-btol, btol)]
    ambiguous = 0
    for i, (x, y, mw, mh, bits) in enumerate(got):
        want = clipped(rects[i], w, h)
        ours = (x, y, mw, mh) if mw > 0 else None
        if ours != want:
            options = {clipped(np.where([k & (1 << c) for c in range(4)],
                                        moved[1][i], moved[0][i]), w, h)
                       for k in range(16)}
            if ours not in options:
                return "mask %d at %s, GluonCV's fill at %s" % (i, ours, want)
            ambiguous += 1
            continue
        if not ours:
            continue
        plane = np.zeros((h, w), np.uint8)
        plane[y:y + mh, x:x + mw] = bits
        bad = int(((plane == 1) & (hi[i] == 0)).sum()
                  + ((plane == 0) & (lo[i] == 1)).sum())
        if bad:
            return "mask %d: %d pixels differ from GluonCV's fill" % (i, bad)
        if not plane.any() and lo[i].any():
            return "mask %d is empty" % i
    if ambiguous == len(got):
        return "every mask's rectangle was a near-tie: nothing compared"
    return None


def voc_color(i):
    r = g = b = 0
    for shift in range(7, -1, -1):
        if i <= 0:
            break
        r |= (i & 1) << shift
        g |= ((i >> 1) & 1) << shift
        b |= ((i >> 2) & 1) << shift
        i >>= 3
    return np.array([r, g, b], np.float64)


def check_overlay(msg, src, out, w, h):
    """hybridoverlay paints each mask's pixels in its object's colour at
    map-alpha 0.5 and leaves every other pixel as it was (where masks
    overlap, colours mix: not looked at).  Returns (problem, pixels under
    exactly one mask)."""
    count = np.zeros((h, w), int)
    color = np.zeros((h, w, 3))
    for i, (x, y, mw, mh, bits) in enumerate(masks_of(msg)):
        count[y:y + mh, x:x + mw] += bits
        color[y:y + mh, x:x + mw][bits == 1] = voc_color(1 + i % 255)
    src = src.reshape(h, w, 3).astype(np.float64)
    out = out.reshape(h, w, 3).astype(np.float64)
    single = int((count == 1).sum())
    if not np.array_equal(out[count == 0], src[count == 0]):
        return "%d pixels outside every mask changed" % int(
            (out[count == 0] != src[count == 0]).any(axis=1).sum()), single
    a = 128 / 255.0
    want = src * (1 - a) + color * a
    off = np.abs(out - want).max(axis=2)[count == 1]
    if single and off.max() > 1:
        return "%d pixels under a mask are not its colour at alpha 0.5 " \
               "(off by up to %g)" % (int((off > 1).sum()), off.max()), single
    return None, single


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
        refs = net(x)
        ref = refs[0]
        if name.startswith("mask-rcnn"):
            problem = check_masks(msg, refs, area, w, h)
        elif "detection" in opts:
            problem = cm.check_detection(msg, refs, area, w, h)
        elif "segmentation" in opts:
            problem = check_segmentation(msg, ref)
        else:
            problem = check_pose(msg, ref, area, w, h, dw, dh)
        if problem:
            return "frame %d: %s" % (i, problem)
    if name.startswith("mask-rcnn"):
        drawn = os.path.join(tmp, name + "-overlay.raw")
        run(args.gst_launch, args.zoo, case, drawn, OVERLAY)
        out = np.fromfile(drawn, np.uint8)
        looked = 0
        for i, msg in enumerate(msgs):
            problem, single = check_overlay(msg, raw[i * size:(i + 1) * size],
                                            out[i * size:(i + 1) * size], w, h)
            if problem:
                return "frame %d, overlay: %s" % (i, problem)
            looked += single
        if looked < 100:
            return "overlay: only %d pixels under a single mask" % looked
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
