#!/usr/bin/env python3
"""A YOLOv8-shaped ONNX model: `hybridinfer run` against ONNX Runtime, then the element's
output=detection against a numpy decode of ONNX Runtime's output.

    check_onnx_yolov8.py TOOL WORK_DIR [--element PLUGIN_DIR]

The model is made here with onnx.helper and seeded weights: strided Conv + SiLU stages, the
deeper one upsampled (Resize, nearest) and concatenated to the shallower, and per level a box
branch (cx, cy from a sigmoid offset on the cell grid times the stride; w, h a sigmoid times
the stride) and a class branch (sigmoid scores), reshaped to (1, C, H*W) and concatenated into
YOLOv8's head (1, 4 + classes, N): boxes in input pixels, no objectness.

The raw head must match ONNX Runtime within 1e-4 * max(1, max|ort|) in both modes.  With
--element, gst-launch runs videotestsrc frames of the model's size (RGB, scale 0-1, no resize)
through hybridinfer model=... output=detection threshold=T iou-threshold=I post-messages=true;
each frame's reported boxes must be what this script's decode gives on ONNX Runtime's output
for the same frame, written from YOLOv8's definition (Ultralytics' non_max_suppression with
its defaults: per anchor the best class; a box when its score reaches T; corners
cx -+ w/2, cy -+ h/2; best first, a box dropped when its IoU with a kept box of the same class
is above I).  Prints TAP.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_onnx  # noqa: E402  (the ONNX Runtime comparison of `hybridinfer run`)

SIZE = 64
N_CLASSES = 3
SCORE_THRESHOLD = 0.62
IOU_THRESHOLD = 0.45
N_FRAMES = 3
RNG = np.random.default_rng(8)


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, stem):
        self.n += 1
        return "%s_%d" % (stem, self.n)

    def const(self, array, stem="c"):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, c_in, c_out, k=3, stride=1, scale=0.5):
        w = self.const(RNG.normal(0, scale / np.sqrt(c_in * k * k),
                                  (c_out, c_in, k, k)).astype(np.float32), "w")
        b = self.const(RNG.normal(0, 0.1, c_out).astype(np.float32), "b")
        return self.op("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride],
                       pads=[k // 2] * 4)

    def silu(self, x):
        return self.op("Mul", [x, self.op("Sigmoid", [x])])


def head_level(g, feat, c_in, side, stride):
    """(1, 4, side²) boxes in input pixels and (1, classes, side²) scores of one level."""
    t = g.conv(g.silu(g.conv(feat, c_in, 16, scale=2.0)), 16, 4, k=1, scale=8.0)
    xy = g.op("Slice", [t, g.const(np.array([0], np.int64)), g.const(np.array([2], np.int64)),
                        g.const(np.array([1], np.int64))])
    wh = g.op("Slice", [t, g.const(np.array([2], np.int64)), g.const(np.array([4], np.int64)),
                        g.const(np.array([1], np.int64))])
    gy, gx = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    grid = np.stack([gx, gy])[None].astype(np.float32) + 0.5
    xy = g.op("Mul", [g.op("Add", [g.op("Sigmoid", [xy]), g.const(grid - 0.5)]),
                      g.const(np.float32(stride))])
    wh = g.op("Mul", [g.op("Sigmoid", [wh]), g.const(np.float32(6 * stride))])
    box = g.op("Concat", [xy, wh], axis=1)
    cls = g.op("Sigmoid", [g.conv(g.silu(g.conv(feat, c_in, 16, scale=2.0)), 16, N_CLASSES,
                                  k=1, scale=12.0)])
    flat = g.const(np.array([1, 0, -1], np.int64))
    return g.op("Reshape", [box, flat]), g.op("Reshape", [cls, flat])


def yolov8_model():
    g = Graph()
    x = g.silu(g.conv("images", 3, 8, stride=2))           # 32 x 32
    p3 = g.silu(g.conv(x, 8, 16, stride=2))                # 16 x 16, stride 4
    p4 = g.silu(g.conv(p3, 16, 16, stride=2))              # 8 x 8, stride 8
    up = g.op("Resize", [p4, "", g.const(np.array([1, 1, 2, 2], np.float32))],
              mode="nearest")
    p3 = g.silu(g.conv(g.op("Concat", [p3, up], axis=1), 32, 16))
    b3, c3 = head_level(g, p3, 16, SIZE // 4, 4)
    b4, c4 = head_level(g, p4, 16, SIZE // 8, 8)
    boxes = g.op("Concat", [b3, b4], axis=2)
    scores = g.op("Concat", [c3, c4], axis=2)
    g.nodes.append(helper.make_node("Concat", [boxes, scores], ["output0"], axis=1))
    graph = helper.make_graph(
        g.nodes, "yolov8-shaped",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, None)], g.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


N_ROWS, N_PADDING = 260, 6
# Where the rows the graph keeps start to fall below the threshold on the test's frames.
ROWS_SCORE_THRESHOLD = 0.75


def yolov8_rows_model():
    """The model above ending as YOLOv8's export with nms=True lays out its head: rows
    [x1, y1, x2, y2, score, class] of the best-scoring anchors, zero rows after them, in one
    head `output0` (1, N_ROWS + N_PADDING, 6).  The export's NMS itself (NonZero,
    NonMaxSuppression) is left out: its rows are picked here by TopK on the scores, so that
    the layout is what the element reads, every op of it static."""
    m = yolov8_model()
    g = Graph()
    g.nodes, g.inits = list(m.graph.node), list(m.graph.initializer)
    g.nodes[-1].output[0] = "head"
    n_anchors = (SIZE // 4) ** 2 + (SIZE // 8) ** 2

    def cut(x, begin, end, axis):
        return g.op("Slice", [x, g.const(np.array([begin], np.int64)),
                              g.const(np.array([end], np.int64)),
                              g.const(np.array([axis], np.int64))])
    t = g.op("Transpose", ["head"], perm=[0, 2, 1])
    cls = cut(t, 4, 4 + N_CLASSES, 2)
    score = g.op("ReduceMax", [cls], axes=[-1], keepdims=1)
    klass = g.op("Cast", [g.op("ArgMax", [cls], axis=-1, keepdims=1)], to=TensorProto.FLOAT)
    xy, wh = cut(t, 0, 2, 2), cut(t, 2, 4, 2)
    half = g.op("Div", [wh, g.const(np.float32(2))])
    rows = g.op("Concat", [g.op("Sub", [xy, half]), g.op("Add", [xy, half]), score, klass],
                axis=2)
    flat = g.op("Reshape", [score, g.const(np.array([1, n_anchors], np.int64))])
    g.nodes.append(helper.make_node("TopK", [flat, g.const(np.array([N_ROWS], np.int64))],
                                    ["top_v", "top_i"], name="topk", axis=1))
    idx = g.op("Reshape", ["top_i", g.const(np.array([1, N_ROWS, 1], np.int64))])
    best = g.op("GatherND", [rows, idx], batch_dims=1)
    g.nodes.append(helper.make_node("Concat", [best, g.const(np.zeros((1, N_PADDING, 6),
                                                                      np.float32))],
                                    ["output0"], axis=1))
    graph = helper.make_graph(
        g.nodes, "yolov8-rows", list(m.graph.input),
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, None)], g.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def reference_rows(out, conf, iou_thr, size=SIZE):
    """The element's reading of (1, K, 6) rows [x1, y1, x2, y2, score, class] of one frame, from
    YOLOv8's definition: a row is a box when its score reaches CONF (the zero rows after the
    last never are; IOU_THR is the graph's business); boxes clamped to the frame, in row
    order.  -> (boxes, rows that are not padding)."""
    rows, n = [], 0
    for r in out[0]:
        if not np.any(r):
            continue
        n += 1
        if not r[4] >= np.float32(conf):
            continue
        x1 = min(max(float(r[0]), 0.0), size)
        y1 = min(max(float(r[1]), 0.0), size)
        x2 = min(max(float(r[2]), x1), size)
        y2 = min(max(float(r[3]), y1), size)
        rows.append((int(r[5]), float(r[4]), [x1, y1, x2 - x1, y2 - y1]))
    return rows, n


def reference_decode(out, conf, iou_thr, size=SIZE):
    """YOLOv8's decode of one frame's (4 + classes, N), in float32 as the model computes; boxes
    clamped to the size x size frame."""
    p = out[0]
    cls = p[4:].argmax(0)
    score = p[4:].max(0)
    idx = np.nonzero(score >= np.float32(conf))[0]
    order = idx[np.argsort(-score[idx], kind="stable")]
    two = np.float32(2)
    x1, y1 = p[0] - p[2] / two, p[1] - p[3] / two
    x2, y2 = p[0] + p[2] / two, p[1] + p[3] / two
    kept = []
    for i in order:
        drop = False
        for k in kept:
            if cls[k] != cls[i]:
                continue
            iw = min(x2[i], x2[k]) - max(x1[i], x1[k])
            ih = min(y2[i], y2[k]) - max(y1[i], y1[k])
            if iw <= 0 or ih <= 0:
                continue
            inter = iw * ih
            union = (x2[i] - x1[i]) * (y2[i] - y1[i]) + (x2[k] - x1[k]) * (y2[k] - y1[k]) - inter
            if union > 0 and inter / union > np.float32(iou_thr):
                drop = True
                break
        if not drop:
            kept.append(i)
    rows = []
    for i in kept:
        bx1 = min(max(float(x1[i]), 0.0), size)
        by1 = min(max(float(y1[i]), 0.0), size)
        bx2 = min(max(float(x2[i]), bx1), size)
        by2 = min(max(float(y2[i]), by1), size)
        rows.append((int(cls[i]), float(score[i]), [bx1, by1, bx2 - bx1, by2 - by1]))
    return rows, len(order)


def messages(stdout):
    return [line.split("(element): ", 1)[1] for line in stdout.splitlines()
            if "(element): hybridinfer," in line]


def array(msg, name, kind):
    m = re.search(r"%s=\(%s\)<([^<>]*)>" % (re.escape(name), kind), msg)
    return [x.strip() for x in m.group(1).split(",") if x.strip()] if m else []


def boxes(msg):
    m = re.search(r"boxes=\(float\)<(.*)>;", msg)
    if not m:
        return []
    return [[float(v) for v in re.findall(r"\(float\)([-\d.e+]+)", b)]
            for b in re.findall(r"<([^<>]*)>", m.group(1))]


def gst_frames(argv, env, raw, frame_wh):
    """Runs gst-launch ARGV (its last element writes RGB frames to RAW) -> (frames, messages
    the hybridinfer element posted, one per frame) or an error text."""
    proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=check_onnx.TIMEOUT_S)
    if proc.returncode != 0:
        return "gst-launch failed: %s" % (proc.stdout + proc.stderr)[-400:]
    return (np.fromfile(raw, dtype=np.uint8).reshape(-1, frame_wh[1], frame_wh[0], 3),
            messages(proc.stdout))


def model_input(frame):
    """The input the element makes of a frame the model's size (RGB, scale 0-1, no resize),
    and the picture's area in it (x, y, width, height)."""
    x = frame.transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255.0)
    return x, (0, 0, frame.shape[1], frame.shape[0])


def to_frame(box, area, frame_wh):
    """A box (x, y, w, h) in model-input pixels mapped through the picture's area to the
    frame's, clamped to it, as the element maps boxes back."""
    ox, oy, rw, rh = area
    fw, fh = frame_wh
    x1 = min(max((box[0] - ox) * fw / rw, 0), fw)
    y1 = min(max((box[1] - oy) * fh / rh, 0), fh)
    x2 = min(max((box[0] + box[2] - ox) * fw / rw, x1), fw)
    y2 = min(max((box[1] + box[3] - oy) * fh / rh, y1), fh)
    return [x1, y1, x2 - x1, y2 - y1]


def check_element(onnx_path, plugin_dir, work, size=SIZE, conf=SCORE_THRESHOLD,
                  iou_thr=IOU_THRESHOLD, n_frames=N_FRAMES, overlay=None,
                  score_tol=1e-4, frame_wh=None, options=(), to_input=model_input,
                  decode=reference_decode, must_drop=True):
    """Each reported score must be within SCORE_TOL of the reference's.  Frames are FRAME_WH
    (the model's size by default); OPTIONS are more of the element's, TO_INPUT makes from a
    frame the model's input as the element does and says where the picture is in it.  With
    OVERLAY (a function of the original frames, the drawn ones and each frame's kept
    boxes -> (ok, text)), hybridoverlay follows hybridinfer, and the original frames come from
    a second run of the same source without it (videotestsrc is deterministic)."""
    env = dict(os.environ, GST_PLUGIN_PATH=plugin_dir,
               GST_REGISTRY=os.path.join(work, "registry.bin"))
    raw = os.path.join(work, "frames.rgb")
    frame_wh = frame_wh or (size, size)
    source = ["gst-launch-1.0", "-m", "videotestsrc", "num-buffers=%d" % n_frames,
              "pattern=ball", "!", "video/x-raw,format=RGB,width=%d,height=%d" % frame_wh, "!"]
    infer = ["hybridinfer", "model=" + onnx_path, "output=detection", "scale=0-1",
             "threshold=%g" % conf, "iou-threshold=%g" % iou_thr, "post-messages=true"]
    infer += list(options) + ["!"]
    got = gst_frames(source + infer + (["hybridoverlay", "!"] if overlay else [])
                     + ["filesink", "location=" + raw], env, raw, frame_wh)
    if isinstance(got, str):
        return False, got
    frames, msgs = got
    drawn = None
    if overlay:
        drawn = frames
        original = gst_frames(source + ["filesink", "location=" + raw], env, raw, frame_wh)
        if isinstance(original, str):
            return False, original
        frames = original[0]
    if len(msgs) != n_frames or frames.shape[0] != n_frames:
        return False, "%d messages, %d frames; %d expected" % (len(msgs), frames.shape[0],
                                                               n_frames)
    candidates = kept = 0
    kept_boxes = []
    for f, (frame, msg) in enumerate(zip(frames, msgs)):
        x, area = to_input(frame)
        out = check_onnx.ort_outputs(onnx_path, {"images": x})[0]
        want, n_candidates = decode(out, conf, iou_thr, size)
        want = [(cls, score, to_frame(box, area, frame_wh)) for cls, score, box in want]
        kept_boxes.append([box for _, _, box in want])
        candidates += n_candidates
        kept += len(want)
        ids = [int(v) for v in array(msg, "class-ids", "int")]
        scores = [float(v) for v in array(msg, "scores", "float")]
        got = boxes(msg)
        if len(ids) != len(want) or len(got) != len(want) or len(scores) != len(want):
            return False, "frame %d: %d boxes reported, the reference keeps %d" % (
                f, len(ids), len(want))
        for k, (cls, score, box) in enumerate(want):
            if ids[k] != cls or abs(scores[k] - score) > score_tol:
                return False, "frame %d box %d: class %d score %g, reference %d %g" % (
                    f, k, ids[k], scores[k], cls, score)
            if np.max(np.abs(np.array(got[k]) - np.array(box))) > 1e-3 * max(frame_wh):
                return False, "frame %d box %d: %s, reference %s" % (f, k, got[k], box)
    if kept == 0 or (must_drop and kept == candidates):
        return False, "the case drops no candidate or keeps none: %d candidates, %d kept" % (
            candidates, kept)
    text = "%d frames: %d boxes of %d candidates kept, as the reference" % (
        n_frames, kept, candidates)
    if overlay:
        ok, drawn_text = overlay(frames, drawn, kept_boxes)
        return ok, text + "; " + drawn_text
    return True, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("work")
    ap.add_argument("--element", metavar="PLUGIN_DIR")
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    work = os.path.join(os.path.abspath(args.work), "yolov8")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "yolov8-shaped.onnx")
    onnx.save(yolov8_model(), path)
    rows_path = os.path.join(work, "yolov8-rows.onnx")
    onnx.save(yolov8_rows_model(), rows_path)
    checks = ["yolov8-raw-vs-ort", "yolov8-rows-raw-vs-ort"]
    if args.element:
        checks += ["yolov8-element-detection", "yolov8-rows-element-detection",
                   "yolov8-rows-element-threshold-0"]
    print("1..%d" % len(checks))
    failed = 0
    for n, name in enumerate(checks, 1):
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        if name.endswith("raw-vs-ort"):
            feeds = {"images": check_onnx.rand(1, 3, SIZE, SIZE, low=0.0, high=1.0)}
            ok, text = check_onnx.check_model(tool, d, rows_path if "rows" in name else path,
                                              feeds)
        elif name.endswith("threshold-0"):
            # Every row the graph keeps is a box, and no row of the zeros after them.
            ok, text = check_element(rows_path, os.path.abspath(args.element), d, conf=0.0,
                                     decode=reference_rows, must_drop=False)
        elif "rows" in name:
            ok, text = check_element(rows_path, os.path.abspath(args.element), d,
                                     conf=ROWS_SCORE_THRESHOLD, decode=reference_rows)
        else:
            ok, text = check_element(path, os.path.abspath(args.element), d)
        failed += not ok
        print("%s %d - %s %s" % ("ok" if ok else "not ok", n, name, text.replace("#", "No.")))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
