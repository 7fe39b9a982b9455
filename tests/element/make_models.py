#!/usr/bin/env python3
"""Tiny test models for the GStreamer element, made with real MXNet Gluon.

Each model is written as a Gluon HybridBlock, hybridized, run once and
exported (`NAME-symbol.json` + `NAME-0000.params`), exactly the workflow a
user follows.  The weights are set by hand rather than trained, so that the
answers are known (a red frame *is* "red") and the files stay tiny:

  colors        classification: 3x3 box-blur conv, global average pool and a
                dense layer over nine colour prototypes, softmax -> (1, 9).
                Input 0..255 (scale=0-255, no mean/std).  No __shape__, as
                Gluon writes it: the element must default to 224x224.
  colors-shaped the same symbol re-saved by MXNet with data's __shape__ set
                to (1, 3, 32, 32), so input-size comes from the model.
  quadrants     detection, one head (1, 4, 6) = [class_id, score, x1, y1,
                x2, y2] per image quadrant: the class is the dominant colour
                channel (red, green, blue), the score a sigmoid of its mean,
                the boxes the quadrants in model-input pixels (64x64).
  quadrants3    the same as three heads, GluonCV's SSD/YOLO export layout:
                ids (1, 4, 1), scores (1, 4, 1), bboxes (1, 4, 4).
  quadrants-multibox  the same answers from MXNet's symbol-API SSD ops,
                written with mx.sym: per-class sigmoid scores and a
                background row into _contrib_MultiBoxDetection (threshold 0,
                zero offsets) over the four quadrants as anchors.  Its head
                (B, 4, 6) has corners as fractions of the input, not pixels;
                equal scores keep anchor order, so rows come in quadrant
                order with the black quadrant last.
  segment       semantic segmentation, one head (1, 4, H/2, W/2): per 2x2
                block, scores for background (a constant 100), red, green
                and blue (the block's mean channel values, 0..255), so that
                a pixel's class is its dominant colour, or background when
                dark.  Fully convolutional: any input size.
  spots         keypoint heatmaps, one head (1, 3, H/2, W/2): per 2x2 block,
                its mean red, green and blue (0..1), so that keypoint k is
                where colour k is strongest.  Fully convolutional.
  lrn           a model with an op hybridinfer does not run (LRN): the
                element must fail with the core's message.

Run with the MXNet 1.9.1 reference venv:
  ~/.cache/hybridinfer/venv/bin/python tests/element/make_models.py
"""
import json
import os
import sys

import mxnet as mx
import numpy as np
from mxnet import gluon, nd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "models")

# name, RGB prototype in 0..1
COLORS = [
    ("black", (0, 0, 0)), ("white", (1, 1, 1)), ("gray", (0.5, 0.5, 0.5)),
    ("red", (1, 0, 0)), ("green", (0, 1, 0)), ("blue", (0, 0, 1)),
    ("yellow", (1, 1, 0)), ("cyan", (0, 1, 1)), ("magenta", (1, 0, 1)),
]
SHARPNESS = 10.0    # softmax temperature: pure colours score close to 1
DET_SIZE = 64
DET_LABELS = ["red", "green", "blue"]


class Colors(gluon.HybridBlock):
    """Nearest colour prototype of the mean colour, as a softmax."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.blur = gluon.nn.Conv2D(3, 3, padding=1, in_channels=3)
            self.pool = gluon.nn.GlobalAvgPool2D()
            self.flat = gluon.nn.Flatten()
            self.classes = gluon.nn.Dense(len(COLORS), in_units=3)

    def hybrid_forward(self, F, x):
        x = F.relu(self.blur(x))
        x = self.flat(self.pool(x))
        return F.softmax(self.classes(x))

    def set_weights(self):
        # Per-channel 3x3 box blur that also brings 0..255 to 0..1.
        w = np.zeros((3, 3, 3, 3), np.float32)
        for c in range(3):
            w[c, c] = 1.0 / (9 * 255.0)
        self.blur.weight.set_data(nd.array(w))
        self.blur.bias.set_data(nd.zeros(3))
        # -T*|x - p|^2 = 2T p.x - T|p|^2 - T|x|^2; the last term is common
        # to every class and cancels in the softmax.
        p = np.array([c for _, c in COLORS], np.float32)
        self.classes.weight.set_data(nd.array(2 * SHARPNESS * p))
        self.classes.bias.set_data(nd.array(-SHARPNESS * (p * p).sum(1)))


class Quadrants(gluon.HybridBlock):
    """Per quadrant: dominant colour channel, its strength, the box."""

    def __init__(self, heads, **kw):
        super().__init__(**kw)
        self.heads = heads
        with self.name_scope():
            self.mix = gluon.nn.Conv2D(3, 1, in_channels=3)
            self.pool = gluon.nn.AvgPool2D(DET_SIZE // 2, DET_SIZE // 2)
            # A fixed parameter rather than get_constant(), whose exported
            # __init__ attribute holds a memory address: reruns must write
            # the same files.
            self.boxes = self.params.get("boxes", shape=(1, 4, 4),
                                         grad_req="null")

    def hybrid_forward(self, F, x, boxes):
        x = self.pool(self.mix(x))                      # (1, 3, 2, 2)
        x = F.transpose(F.reshape(x, (0, 0, -1)), (0, 2, 1))  # (1, 4, 3)
        ids = F.argmax(x, axis=2, keepdims=True)
        scores = F.sigmoid((F.max(x, axis=2, keepdims=True) - 0.5) * 12.0)
        if self.heads == 3:
            return ids, scores, boxes
        return F.concat(ids, scores, boxes, dim=2)

    def set_weights(self):
        h = DET_SIZE // 2
        self.boxes.set_data(nd.array([[[0, 0, h, h], [h, 0, 2 * h, h],
                                       [0, h, h, 2 * h],
                                       [h, h, 2 * h, 2 * h]]]))
        w = np.zeros((3, 3, 1, 1), np.float32)
        for c in range(3):
            w[c, c] = 1.0 / 255.0
        self.mix.weight.set_data(nd.array(w))
        self.mix.bias.set_data(nd.zeros(3))


def quadrants_multibox():
    """Quadrants as an SSD head: (B, 1 + 3, 4) class scores, zero box
    offsets, the quadrants as normalised anchors.  Offsets come from the
    data (zeros_like) so that any batch size fits."""
    data = mx.sym.var("data")
    mix = mx.sym.Convolution(data, num_filter=3, kernel=(1, 1), name="mix")
    pooled = mx.sym.Pooling(mix, kernel=(DET_SIZE // 2, DET_SIZE // 2),
                            stride=(DET_SIZE // 2, DET_SIZE // 2),
                            pool_type="avg", name="pool")   # (B, 3, 2, 2)
    x = mx.sym.Reshape(pooled, shape=(0, 0, -1))             # (B, 3, 4)
    scores = mx.sym.sigmoid((x - 0.5) * 12.0)
    background = mx.sym.zeros_like(mx.sym.slice_axis(scores, axis=1, begin=0,
                                                     end=1))
    cls_prob = mx.sym.Concat(background, scores, dim=1, name="cls_prob")
    flat = mx.sym.Reshape(pooled, shape=(0, -1))             # (B, 12)
    loc = mx.sym.zeros_like(mx.sym.slice_axis(mx.sym.tile(flat, reps=(1, 2)),
                                              axis=1, begin=0, end=16))
    anchors = mx.sym.var("anchors", shape=(1, 4, 4))
    det = mx.sym.contrib.MultiBoxDetection(cls_prob, loc, anchors,
                                           threshold=0.0, name="detection")
    w = np.zeros((3, 3, 1, 1), np.float32)
    for c in range(3):
        w[c, c] = 1.0 / 255.0
    quads = np.array([[[0, 0, 0.5, 0.5], [0.5, 0, 1, 0.5], [0, 0.5, 0.5, 1],
                       [0.5, 0.5, 1, 1]]], np.float32)
    params = {"arg:mix_weight": nd.array(w), "arg:mix_bias": nd.zeros(3),
              "arg:anchors": nd.array(quads)}
    det.save(os.path.join(OUT, "quadrants-multibox-symbol.json"))
    nd.save(os.path.join(OUT, "quadrants-multibox-0000.params"), params)
    write_sidecar("quadrants-multibox")
    # MXNet's own answer for a quadrants frame: red, green, blue, black
    x = np.zeros((1, 3, DET_SIZE, DET_SIZE), np.float32)
    h = DET_SIZE // 2
    x[0, 0, :h, :h] = 255
    x[0, 1, :h, h:] = 255
    x[0, 2, h:, :h] = 255
    block = gluon.SymbolBlock.imports(
        os.path.join(OUT, "quadrants-multibox-symbol.json"), ["data"],
        os.path.join(OUT, "quadrants-multibox-0000.params"))
    rows = block(nd.array(x)).asnumpy()[0]
    if list(rows[:, 0]) != [0, 1, 2, 0] or not np.allclose(
            rows[:, 2:], quads[0][[0, 1, 2, 3]]):
        sys.exit("quadrants-multibox: unexpected rows %s" % rows)


SEG_LABELS = ["background", "red", "green", "blue"]
SEG_BACKGROUND = 100.0


class Segment(gluon.HybridBlock):
    """Per 2x2 block: background, or the dominant colour channel."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.score = gluon.nn.Conv2D(4, 1, in_channels=3)
            self.pool = gluon.nn.AvgPool2D(2, 2)

    def hybrid_forward(self, F, x):
        return self.pool(self.score(x))

    def set_weights(self):
        w = np.zeros((4, 3, 1, 1), np.float32)
        for c in range(3):
            w[c + 1, c] = 1.0
        self.score.weight.set_data(nd.array(w))
        self.score.bias.set_data(nd.array([SEG_BACKGROUND, 0, 0, 0]))


SPOT_LABELS = ["red", "green", "blue"]


class Spots(gluon.HybridBlock):
    """Per 2x2 block: a heatmap per colour channel."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.heat = gluon.nn.Conv2D(3, 1, in_channels=3)
            self.pool = gluon.nn.AvgPool2D(2, 2)

    def hybrid_forward(self, F, x):
        return self.pool(self.heat(x))

    def set_weights(self):
        w = np.zeros((3, 3, 1, 1), np.float32)
        for c in range(3):
            w[c, c] = 1.0 / 255.0
        self.heat.weight.set_data(nd.array(w))
        self.heat.bias.set_data(nd.zeros(3))


class Lrn(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.LRN(x, nsize=3)


SIDECAR = '{"sidecar_version": 1, "scale": "0-255",\n "description": "a test model of tests/element/make_models.py"}\n'


def write_sidecar(name):
    """Every model here takes pixels as 0..255: its sidecar says so, as a user's would, so
    that the element has no normalisation to guess (and warn about)."""
    with open(os.path.join(OUT, name + "-model.json"), "w") as f:
        f.write(SIDECAR)


def export(net, name, shape):
    net.hybridize()
    net(nd.zeros(shape))        # hybridize traces on the first call
    net.export(os.path.join(OUT, name), epoch=0)
    write_sidecar(name)


def export_with_shape(src, name, shape):
    """Re-save `src`'s symbol with data's __shape__ declared."""
    sym = mx.sym.load(os.path.join(OUT, src + "-symbol.json"))
    data = mx.sym.var("data", shape=shape)
    sym = sym(data=data)
    sym.save(os.path.join(OUT, name + "-symbol.json"))
    with open(os.path.join(OUT, src + "-0000.params"), "rb") as f:
        params = f.read()
    with open(os.path.join(OUT, name + "-0000.params"), "wb") as f:
        f.write(params)
    write_sidecar(name)


def main():
    os.makedirs(OUT, exist_ok=True)
    mx.random.seed(0)

    net = Colors(prefix="colors_")
    net.initialize()
    net.set_weights()
    export(net, "colors", (1, 3, 32, 32))
    export_with_shape("colors", "colors-shaped", (1, 3, 32, 32))
    with open(os.path.join(OUT, "colors.txt"), "w") as f:
        f.write("\n".join(n for n, _ in COLORS) + "\n")

    for heads, name in ((1, "quadrants"), (3, "quadrants3")):
        net = Quadrants(heads, prefix="quadrants_")
        net.initialize()
        net.set_weights()
        export(net, name, (1, 3, DET_SIZE, DET_SIZE))
    with open(os.path.join(OUT, "quadrants.txt"), "w") as f:
        f.write("\n".join(DET_LABELS) + "\n")
    quadrants_multibox()

    net = Segment(prefix="segment_")
    net.initialize()
    net.set_weights()
    export(net, "segment", (1, 3, 32, 32))
    with open(os.path.join(OUT, "segment.txt"), "w") as f:
        f.write("\n".join(SEG_LABELS) + "\n")

    net = Spots(prefix="spots_")
    net.initialize()
    net.set_weights()
    export(net, "spots", (1, 3, 32, 32))
    with open(os.path.join(OUT, "spots.txt"), "w") as f:
        f.write("\n".join(SPOT_LABELS) + "\n")

    net = Lrn(prefix="lrn_")
    export(net, "lrn", (1, 3, 8, 8))

    # A quick self-check: pure colours are recognised.
    sym, args, aux = mx.model.load_checkpoint(os.path.join(OUT, "colors"), 0)
    mod = gluon.SymbolBlock.imports(os.path.join(OUT, "colors-symbol.json"),
                                    ["data"],
                                    os.path.join(OUT, "colors-0000.params"))
    for i, (label, rgb) in enumerate(COLORS):
        x = nd.array(np.array(rgb, np.float32).reshape(1, 3, 1, 1) * 255
                     * np.ones((1, 3, 32, 32), np.float32))
        got = int(mod(x).asnumpy().argmax())
        if got != i:
            sys.exit("colors: %s recognised as %s" % (label, COLORS[got][0]))
    print("models written to", OUT)


if __name__ == "__main__":
    main()
