#!/usr/bin/env python3
"""YOLOv8n's ONNX graph as Ultralytics 8.x writes it, with seeded random weights.

    yolov8n_onnx.py OUT.onnx [--size 640]

PyTorch (and so Ultralytics' exporter) cannot run here, so this lays the graph out node by node
as `YOLO("yolov8n.yaml").export(format="onnx", opset=17, imgsz=SIZE)` does (dynamic=False,
simplify off): input `images` (1, 3, SIZE, SIZE), output `output0` (1, 84, anchors).

- Conv: Conv with its BatchNorm folded in (a bias), then SiLU as Sigmoid and Mul.
- C2f: Conv 1x1, Split in two halves along the channels (a `split` input), n Bottlenecks on the
  last half, each appended (two 3x3 Convs, a residual Add when shortcut), Concat, Conv 1x1.
- SPPF: Conv 1x1, three chained MaxPool 5x5 stride 1 pad 2, Concat, Conv 1x1.
- The neck: Resize (nearest, asymmetric, floor; a scales input), Concat, C2f without shortcut,
  and the strided Conv down-path, per yolov8.yaml at depth 0.33 and width 0.25.
- Detect (strides 8, 16, 32): per level a box branch (Conv 3x3, Conv 3x3, Conv2d 1x1 -> 64) and
  a class branch (-> 80), Concat, Reshape (1, 144, -1); Concat of the levels; Split 64 / 80;
  DFL (Reshape 1x4x16xA, Transpose 0,2,1,3, Softmax axis 1, Conv 1x1 16->1 of arange(16),
  Reshape 1x4xA); dist2bbox (Slice lt and rb, anchor points minus and plus, (x1y1 + x2y2) / 2
  and x2y2 - x1y1, Concat, Mul by the strides); Sigmoid on the classes; Concat.

The weights are drawn so that activations keep a sane scale through the 60-odd Convs
(BatchNorm-folded weights of a trained net do as much): what the tests need is a deterministic
graph with every op and shape of the real one, not meaningful boxes.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N_CLASSES = 80
REG_MAX = 16
STRIDES = (8, 16, 32)
SEED = 8017
# Part of the cached file's name: bump it when the graph or the weights change.
GRAPH_VERSION = 4


class Graph:
    """Nodes named in torch.onnx's style (`/model.2/cv1/conv/Conv`), so that a message about a
    node reads much as it would on a real export."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []
        self.used = {}

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, scope, op_type, inputs, n_out=1, **attrs):
        name = "%s/%s" % (scope, op_type)
        # torch.onnx's way of keeping names unique: Reshape, Reshape_1, ...
        n = self.used.get(name, 0)
        self.used[name] = n + 1
        name = name if n == 0 else "%s_%d" % (name, n)
        outs = ["%s_output_%d" % (name, i) for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def conv2d(self, scope, x, c_in, c_out, k, stride=1, gain=1.0, bias_sd=0.05):
        """A bare Conv with bias (BatchNorm folded, or the head's last nn.Conv2d)."""
        sd = gain / np.sqrt(c_in * k * k)
        w = self.const(scope + ".weight", self.rng.normal(0, sd, (c_out, c_in, k, k))
                       .astype(np.float32))
        b = self.const(scope + ".bias", self.rng.normal(0, bias_sd, c_out).astype(np.float32))
        return self.op(scope, "Conv", [x, w, b], dilations=[1, 1], group=1,
                       kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride])

    def conv(self, scope, x, c_in, c_out, k=1, stride=1):
        """Ultralytics' Conv: Conv2d + BatchNorm2d (folded) + SiLU (Sigmoid, Mul)."""
        y = self.conv2d(scope + "/conv", x, c_in, c_out, k, stride, gain=1.7)
        return self.op(scope + "/act", "Mul", [y, self.op(scope + "/act", "Sigmoid", [y])])


def c2f(g, scope, x, c_in, c_out, n, shortcut):
    c = c_out // 2
    y = g.conv(scope + "/cv1", x, c_in, 2 * c)
    parts = g.op(scope, "Split", [y, g.const(scope + "/split", np.array([c, c], np.int64))],
                 n_out=2, axis=1)
    parts = list(parts)
    for i in range(n):
        m = "%s/m.%d" % (scope, i)
        t = g.conv(m + "/cv2", g.conv(m + "/cv1", parts[-1], c, c, 3), c, c, 3)
        parts.append(g.op(m, "Add", [parts[-1], t]) if shortcut else t)
    cat = g.op(scope, "Concat", parts, axis=1)
    return g.conv(scope + "/cv2", cat, (2 + n) * c, c_out)


def sppf(g, scope, x, c_in, c_out, k=5):
    c = c_in // 2
    ys = [g.conv(scope + "/cv1", x, c_in, c)]
    for i in range(3):
        ys.append(g.op("%s/m_%d" % (scope, i), "MaxPool", [ys[-1]], ceil_mode=0,
                       dilations=[1, 1], kernel_shape=[k, k], pads=[k // 2] * 4,
                       strides=[1, 1]))
    return g.conv(scope + "/cv2", g.op(scope, "Concat", ys, axis=1), 4 * c, c_out)


def upsample(g, scope, x):
    scales = g.const(scope + "/scales", np.array([1, 1, 2, 2], np.float32))
    return g.op(scope, "Resize", [x, "", scales], coordinate_transformation_mode="asymmetric",
                cubic_coeff_a=-0.75, mode="nearest", nearest_mode="floor")


def anchors_and_strides(size):
    """Ultralytics' make_anchors: cell centres (x, y) per level, row-major, and each one's
    stride; the exporter writes both as constants."""
    points, strides = [], []
    for s in STRIDES:
        side = size // s
        sy, sx = np.meshgrid(np.arange(side) + 0.5, np.arange(side) + 0.5, indexing="ij")
        points.append(np.stack([sx.ravel(), sy.ravel()]))
        strides.append(np.full(side * side, s))
    return (np.concatenate(points, 1)[None].astype(np.float32),
            np.concatenate(strides)[None].astype(np.float32))


def detect(g, feats, chans, size):
    scope = "/model.22"
    c2 = max(16, chans[0] // 4, REG_MAX * 4)
    c3 = max(chans[0], min(N_CLASSES, 100))
    no = N_CLASSES + 4 * REG_MAX
    flat = g.const(scope + "/flat_shape", np.array([1, no, -1], np.int64))
    levels = []
    for i, (x, c) in enumerate(zip(feats, chans)):
        b = "%s/cv2.%d" % (scope, i)
        box = g.conv2d(b + "/cv2.%d.2" % i, g.conv(b + "/cv2.%d.1" % i, g.conv(
            b + "/cv2.%d.0" % i, x, c, c2, 3), c2, c2, 3), c2, 4 * REG_MAX, 1, gain=1.5)
        k = "%s/cv3.%d" % (scope, i)
        cls = g.conv2d(k + "/cv3.%d.2" % i, g.conv(k + "/cv3.%d.1" % i, g.conv(
            k + "/cv3.%d.0" % i, x, c, c3, 3), c3, c3, 3), c3, N_CLASSES, 1, gain=1.5,
            bias_sd=0.5)
        cat = g.op("%s_%d" % (scope, i), "Concat", [box, cls], axis=1)
        levels.append(g.op("%s_%d" % (scope, i), "Reshape", [cat, flat]))
    x_cat = g.op(scope, "Concat", levels, axis=2)
    box, cls = g.op(scope, "Split", [x_cat, g.const(scope + "/split", np.array(
        [4 * REG_MAX, N_CLASSES], np.int64))], n_out=2, axis=1)
    anchors, strides = anchors_and_strides(size)
    n_anchors = anchors.shape[2]
    d = scope + "/dfl"
    t = g.op(d, "Reshape", [box, g.const(d + "/shape", np.array(
        [1, 4, REG_MAX, n_anchors], np.int64))])
    t = g.op(d, "Softmax", [g.op(d, "Transpose", [t], perm=[0, 2, 1, 3])], axis=1)
    w = g.const(d + "/conv.weight", np.arange(REG_MAX, dtype=np.float32)
                .reshape(1, REG_MAX, 1, 1))
    t = g.op(d + "/conv", "Conv", [t, w], dilations=[1, 1], group=1, kernel_shape=[1, 1],
             pads=[0, 0, 0, 0], strides=[1, 1])
    dist = g.op(d, "Reshape", [t, g.const(d + "/out_shape", np.array(
        [1, 4, n_anchors], np.int64))])

    def i64(name, v):
        return g.const(scope + "/" + name, np.array([v], np.int64))

    lt = g.op(scope + "/lt", "Slice", [dist, i64("lt_start", 0), i64("lt_end", 2),
                                       i64("axis", 1), i64("step", 1)])
    rb = g.op(scope + "/rb", "Slice", [dist, i64("rb_start", 2), i64("rb_end", 4),
                                       i64("axis_rb", 1), i64("step_rb", 1)])
    pts = g.const(scope + "/anchors", anchors)
    x1y1 = g.op(scope + "/x1y1", "Sub", [pts, lt])
    x2y2 = g.op(scope + "/x2y2", "Add", [pts, rb])
    c_xy = g.op(scope + "/c_xy", "Div", [g.op(scope + "/sum", "Add", [x1y1, x2y2]),
                                         g.const(scope + "/two", np.array(2, np.float32))])
    wh = g.op(scope + "/wh", "Sub", [x2y2, x1y1])
    dbox = g.op(scope + "/dbox", "Mul", [g.op(scope + "/xywh", "Concat", [c_xy, wh], axis=1),
                                         g.const(scope + "/strides", strides)])
    scores = g.op(scope, "Sigmoid", [cls])
    g.nodes.append(helper.make_node("Concat", [dbox, scores], ["output0"],
                                    name=scope + "/Concat_out", axis=1))


def yolov8n_model(size=640, seed=SEED):
    """yolov8.yaml at scale n (depth 0.33, width 0.25, max channels 1024)."""
    if size % 32:
        raise ValueError("YOLOv8 takes a multiple of 32, not %d" % size)
    g = Graph(np.random.default_rng(seed))
    x = g.conv("/model.0", "images", 3, 16, 3, 2)              # P1/2
    x = g.conv("/model.1", x, 16, 32, 3, 2)                     # P2/4
    x = c2f(g, "/model.2", x, 32, 32, 1, True)
    x = g.conv("/model.3", x, 32, 64, 3, 2)                     # P3/8
    p3 = c2f(g, "/model.4", x, 64, 64, 2, True)
    x = g.conv("/model.5", p3, 64, 128, 3, 2)                   # P4/16
    p4 = c2f(g, "/model.6", x, 128, 128, 2, True)
    x = g.conv("/model.7", p4, 128, 256, 3, 2)                  # P5/32
    x = c2f(g, "/model.8", x, 256, 256, 1, True)
    p5 = sppf(g, "/model.9", x, 256, 256)
    x = g.op("/model.11", "Concat", [upsample(g, "/model.10", p5), p4], axis=1)
    h4 = c2f(g, "/model.12", x, 384, 128, 1, False)
    x = g.op("/model.14", "Concat", [upsample(g, "/model.13", h4), p3], axis=1)
    out3 = c2f(g, "/model.15", x, 192, 64, 1, False)            # P3/8 small
    x = g.op("/model.17", "Concat", [g.conv("/model.16", out3, 64, 64, 3, 2), h4], axis=1)
    out4 = c2f(g, "/model.18", x, 192, 128, 1, False)           # P4/16 medium
    x = g.op("/model.20", "Concat", [g.conv("/model.19", out4, 128, 128, 3, 2), p5], axis=1)
    out5 = c2f(g, "/model.21", x, 384, 256, 1, False)           # P5/32 large
    detect(g, [out3, out4, out5], [64, 128, 256], size)
    n_anchors = sum((size // s) ** 2 for s in STRIDES)
    graph = helper.make_graph(
        g.nodes, "main_graph",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT,
                                       [1, 4 + N_CLASSES, n_anchors])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8, producer_name="pytorch", producer_version="2.1.0")
    onnx.checker.check_model(model)
    fold_batchnorm(model, np.random.default_rng(seed + 1), size)
    return model


def fold_batchnorm(model, rng, calib_size):
    """Folds into every Conv the BatchNorm a trained net would have: its output standardised per
    channel (statistics from two calibration images), then scaled by gamma and shifted by
    beta.  Without this, random weights let activations grow layer after layer until every score
    is 1 and every DFL softmax one-hot.  The head's last Convs get the scale of trained logits:
    box bins spread over a few units, class logits mostly well below 0 so few anchors score."""
    import onnxruntime as ort
    inits = {t.name: t for t in model.graph.initializer}
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    probe.graph.input[0].type.tensor_type.shape.dim[2].dim_value = calib_size
    probe.graph.input[0].type.tensor_type.shape.dim[3].dim_value = calib_size
    del probe.graph.output[:]
    # Noise, and a flat black frame with a white disc (what videotestsrc's ball pattern shows):
    # statistics from noise alone leave a flat frame scoring every anchor 1.
    noise = rng.uniform(0, 1, (3, calib_size, calib_size))
    yy, xx = np.mgrid[:calib_size, :calib_size]
    disc = ((yy - calib_size * 0.4) ** 2 + (xx - calib_size * 0.6) ** 2
            < (calib_size * 0.1) ** 2).astype(np.float64)
    image = np.stack([noise, np.stack([disc] * 3)]).astype(np.float32)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    # Each probe runs once: optimising its graph would cost more than it saves.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    for node in model.graph.node:
        if node.op_type != "Conv" or len(node.input) < 3:
            continue
        del probe.graph.output[:]
        probe.graph.output.append(helper.make_tensor_value_info(node.output[0],
                                                                TensorProto.FLOAT, None))
        # Only the nodes up to this one: the rest of the graph may not fit the probe's size.
        del probe.graph.node[:]
        used = set()
        for n in model.graph.node:
            probe.graph.node.append(n)
            used.update(n.input)
            if n is node:
                break
        del probe.graph.initializer[:]
        probe.graph.initializer.extend(t for t in model.graph.initializer if t.name in used)
        sess = ort.InferenceSession(probe.SerializeToString(), opts,
                                    providers=["CPUExecutionProvider"])
        y = sess.run(None, {"images": image})[0]
        mean = y.mean(axis=(0, 2, 3))
        std = y.std(axis=(0, 2, 3)) + 1e-3
        c = len(mean)
        if "/cv3." in node.name and node.name.endswith(".2/Conv"):
            gamma, beta = rng.uniform(0.4, 0.8, c), rng.normal(-6.0, 0.5, c)
        elif "/cv2." in node.name and node.name.endswith(".2/Conv"):
            gamma, beta = rng.uniform(0.5, 1.2, c), rng.normal(0, 0.3, c)
        else:
            gamma, beta = rng.uniform(0.6, 1.2, c), rng.normal(0, 0.4, c)
        w, b = (numpy_helper.to_array(inits[n]) for n in node.input[1:3])
        scale = (gamma / std).astype(np.float32)
        w = w * scale[:, None, None, None]
        b = (b - mean) * scale + beta
        inits[node.input[1]].CopyFrom(numpy_helper.from_array(w.astype(np.float32),
                                                              node.input[1]))
        inits[node.input[2]].CopyFrom(numpy_helper.from_array(b.astype(np.float32),
                                                              node.input[2]))


def cached_path(size=640):
    """The model under $HYBRIDINFER_CACHE (~/.cache/hybridinfer), written on first use."""
    base = os.environ.get("HYBRIDINFER_CACHE") or os.path.expanduser("~/.cache/hybridinfer")
    path = os.path.join(base, "onnx", "yolov8n-%d-seed%d-v%d.onnx" % (size, SEED, GRAPH_VERSION))
    if not os.path.isfile(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        onnx.save(yolov8n_model(size), path + ".tmp%d" % os.getpid())
        os.replace(path + ".tmp%d" % os.getpid(), path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=640)
    args = ap.parse_args()
    onnx.save(yolov8n_model(args.size), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
