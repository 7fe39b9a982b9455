#!/usr/bin/env python3
"""YOLOv8n laid out as Ultralytics exports it (yolov8n_onnx.py): `hybridinfer run` against ONNX
Runtime, then a pipeline that draws its boxes.

    check_onnx_yolov8n.py TOOL WORK_DIR [--element PLUGIN_DIR] [--size 640]

The model (1x3xSIZExSIZE, seeded random weights) is written once into the cache
($HYBRIDINFER_CACHE or ~/.cache/hybridinfer/onnx).  Checks, printed as TAP:

- yolov8n-raw-vs-ort: output0 (1, 84, anchors) in hybrid and imperative mode against ONNX
  Runtime within check_onnx's 1e-4 * max(1, max|ort|); the 80 score rows also on their own at
  that tolerance (the box rows, in pixels, set the whole output's).
- yolov8n-element-overlay (with --element): videotestsrc frames through
  `hybridinfer output=detection ! hybridoverlay`; every frame's reported boxes, classes and scores
  must be check_onnx_yolov8.py's numpy decode + NMS of ONNX Runtime's output0 on that frame, and
  the overlay must have changed the pixels on the outline of every kept box.
- yolov8n-element-letterbox (with --element): the same on 320x240 frames with resize=letterbox,
  the input made as tests/element/check_mxnet.py reimplements the element's pre-processing and
  the boxes mapped back through the letterbox to frame pixels.
- yolov8n-nms-element-rows (with --element, and the torch exports check_onnx_torch.py makes):
  Ultralytics' nms=True export, whose NonZero and NonMaxSuppression run inside the model, in
  `hybridinfer output=detection`: every frame's reported boxes must be ONNX Runtime's output0
  rows over the threshold, in row order.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_onnx  # noqa: E402
import check_onnx_yolov8  # noqa: E402  (the decode + NMS and the element run)
import yolov8n_onnx  # noqa: E402
import check_onnx_torch  # noqa: E402  (where the torch exports are cached)

# The seeded weights score videotestsrc's ball frames low (about 0.015 at most): at this
# threshold 7 to 20 anchors a frame are candidates and NMS keeps 6 to 9 of them (measured), the
# nearest score 1e-4 away, far beyond what float rounding moves.
SCORE_THRESHOLD = 0.0115
# Scores this low need a tolerance to match: 1e-4 of them, not 1e-4 absolute.
SCORE_TOL = 1e-6
IOU_THRESHOLD = 0.7          # Ultralytics' default
N_FRAMES = 3
# A 4:3 camera-like frame, letterboxed into the model's square input as the pipeline in
# docs/ONNX.md does: boxes come back to frame pixels through the letterbox.
LETTERBOX_FRAME = (320, 240)
# The share of an outline's pixels the overlay must have changed: a box's edge may run under
# another box's label, which is drawn in the same colour but may leave a text pixel.
OUTLINE_CHANGED = 0.5
# The nms=True export's seeded weights score the ball frames at 1.0 (the sigmoid saturates in
# float32) on all 300 rows the graph keeps: every row is reported, and their order is
# NonMaxSuppression's rule for equal scores (input order), which the rows must follow.
NMS_ROWS_THRESHOLD = 0.95


def outline_band(box, shape):
    """A mask of the pixels on the edges of box (x, y, w, h), one pixel either side, in a
    frame of SHAPE (height, width)."""
    x0, y0 = int(round(box[0])), int(round(box[1]))
    x1, y1 = int(round(box[0] + box[2])), int(round(box[1] + box[3]))
    mask = np.zeros(shape, bool)
    lo = lambda v: max(v - 1, 0)  # noqa: E731
    mask[lo(y0):y0 + 2, x0:x1 + 1] = True
    mask[lo(y1 - 1):y1 + 1, x0:x1 + 1] = True
    mask[y0:y1 + 1, lo(x0):x0 + 2] = True
    mask[y0:y1 + 1, lo(x1 - 1):x1 + 1] = True
    return mask


def check_overlay(original, drawn, kept_boxes):
    if drawn.shape != original.shape:
        return False, "overlay gave %s frames, source %s" % (drawn.shape, original.shape)
    checked = 0
    for f, boxes in enumerate(kept_boxes):
        changed = np.any(drawn[f] != original[f], axis=-1)
        if not boxes and changed.any():
            return False, "frame %d: no box, yet %d pixels changed" % (f, changed.sum())
        for k, box in enumerate(boxes):
            if box[2] < 2 or box[3] < 2:
                continue  # clamped to a frame edge: a line, no outline to find
            band = outline_band(box, original.shape[1:3])
            share = changed[band].mean()
            if share < OUTLINE_CHANGED:
                return False, "frame %d box %d %s: %.0f%% of its outline drawn" % (
                    f, k, [round(v, 1) for v in box], 100 * share)
            checked += 1
    if checked == 0:
        return False, "no box to find on the frames"
    return True, "hybridoverlay drew the outline of all %d boxes" % checked


def letterbox_input(size):
    """-> a function of an RGB frame giving the input `hybridinfer resize=letterbox scale=0-1`
    makes of it and the picture's area, as tests/element/check_mxnet.py reimplements the
    element's pre-processing."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "element"))
    import check_mxnet  # its numpy twin of the element's resize (it imports MXNet, hence here)

    def to_input(frame):
        h, w = frame.shape[:2]
        return check_mxnet.tensor(frame.ravel(), "RGB", w, h,
                                  {"resize": "letterbox", "scale": "0-1"},
                                  (1, 3, size, size), None)
    return to_input


def check_raw(tool, work, path, size):
    feeds = {"images": check_onnx.rand(1, 3, size, size, low=0.0, high=1.0)}
    ok, text = check_onnx.check_model(tool, work, path, feeds)
    if not ok:
        return ok, text
    ref = np.asarray(check_onnx.ort_outputs(path, feeds)[0], np.float64)
    for mode in ("hybrid", "imperative"):
        ours = np.load(os.path.join(work, "out-" + mode, "output0.npy"))
        good, scores = check_onnx.compare(ours[:, 4:], ref[:, 4:])
        if not good:
            return False, "%s scores: %s" % (mode, scores)
        text += "; %s scores %s" % (mode, scores)
    return True, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("work")
    ap.add_argument("--element", metavar="PLUGIN_DIR")
    ap.add_argument("--size", type=int, default=640)
    ap.add_argument("--threshold", type=float, default=SCORE_THRESHOLD)
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    work = os.path.join(os.path.abspath(args.work), "yolov8n")
    path = yolov8n_onnx.cached_path(args.size)
    checks = ["yolov8n-raw-vs-ort"] + (["yolov8n-element-overlay", "yolov8n-element-letterbox",
                                        "yolov8n-nms-element-rows"] if args.element else [])
    print("1..%d" % len(checks))
    failed = 0
    for n, name in enumerate(checks, 1):
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        if name == "yolov8n-raw-vs-ort":
            ok, text = check_raw(tool, d, path, args.size)
        elif name == "yolov8n-nms-element-rows":
            nms_path = os.path.join(check_onnx_torch.cache_dir(), "yolov8n-nms.onnx")
            if not os.path.isfile(nms_path):
                print("ok %d - %s # SKIP no %s (check_onnx_torch.py makes it)" % (
                    n, name, nms_path))
                continue
            ok, text = check_onnx_yolov8.check_element(
                nms_path, os.path.abspath(args.element), d, size=640, conf=NMS_ROWS_THRESHOLD,
                n_frames=N_FRAMES, decode=check_onnx_yolov8.reference_rows, must_drop=False)
        elif name == "yolov8n-element-overlay":
            ok, text = check_onnx_yolov8.check_element(
                path, os.path.abspath(args.element), d, size=args.size, conf=args.threshold,
                iou_thr=IOU_THRESHOLD, n_frames=N_FRAMES, overlay=check_overlay,
                score_tol=SCORE_TOL)
        else:
            ok, text = check_onnx_yolov8.check_element(
                path, os.path.abspath(args.element), d, size=args.size, conf=args.threshold,
                iou_thr=IOU_THRESHOLD, n_frames=N_FRAMES, overlay=check_overlay,
                score_tol=SCORE_TOL, frame_wh=LETTERBOX_FRAME, options=["resize=letterbox"],
                to_input=letterbox_input(args.size))
        failed += not ok
        print("%s %d - %s %s" % ("ok" if ok else "not ok", n, name, text.replace("#", "No.")))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
