#!/usr/bin/env python3
"""Train the detection demo's model: where is videotestsrc's ball?

A one-object detector for the moving ball of `videotestsrc pattern=ball`,
trained with MXNet Gluon (autograd) on frames GStreamer renders
(ball_frames.py): the ball in every colour, along all three of its motions,
on plain backgrounds of every colour and composited over other videotestsrc
patterns (smpte, circular, snow, checkers, zone plates, ...), plus frames of
those patterns with no ball at all.  The ball's box in every frame is
computed from the frames (the ball rendered alone, pixels it covers at least
half, less the thin grid lines the sweep motions draw: ball_frames.py), never
typed in.

The network (a HybridBlock of ops hybridinfer runs: Convolution, BatchNorm,
Activation, Pooling, reshape, slice_axis, softmax, exp, sigmoid, sum, max,
broadcast arithmetic, clip, zeros_like, Concat, expand_dims) ends in the
element's detection layout, one head (B, 1, 6) = [class_id, score, x1, y1,
x2, y2] in model-input pixels:

  96x96 RGB -> five 3x3 convolutions (16, 16, 32, 48, 48 channels, BatchNorm,
  ReLU; stride 2 then two 2x2 max pools: a 12x12 grid of 8-pixel cells) ->
  a 1x1 convolution to 5 maps per cell: a centre logit, the centre's offset
  from the cell (dx, dy) and the box's size (log w, log h).
  Decoding in the graph (a soft argmax): p = softmax of the 144 centre
  logits; centre = sum p * (cell centre + 8 * offset); size = sum p * 16 *
  exp(log size); score = sigmoid(max logit); box = centre -/+ size / 2,
  clipped to the input.

Training: softmax cross-entropy of the centre logits against a Gaussian
around the true centre's cell, L1 on the decoded box (in cells), and binary
cross-entropy of the score (ball / no ball).  Validation frames use frame
sizes, a motion (hsweep), background patterns, colours and seeds the
training never saw; the mean IoU and AP@0.5 go into the sidecar.

Writes pipelines/models/ball-symbol.json, ball-0000.params, ball-labels.txt
and ball-model.json (the sidecar).  Deterministic: MXNet's naive engine and
every generator seeded.

  ~/.cache/hybridinfer/venv/bin/python pipelines/train_ball_detector.py
"""
import argparse
import json
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ball_frames as bf  # noqa: E402
import patterns_frames as pf  # noqa: E402

SEED = 20261125
VAL_SEED = 777001
INPUT_W = INPUT_H = 96
CELL = 8
GRID_W, GRID_H = INPUT_W // CELL, INPUT_H // CELL
MEAN = (0.5, 0.5, 0.5)
STD = (0.25, 0.25, 0.25)
SCALE = 1.0 / 255.0
LABELS = ["ball"]

TRAIN_SIZES = [(160, 120), (192, 144), (256, 192), (320, 240), (384, 288),
               (480, 360), (640, 480), (320, 180), (480, 270), (640, 360),
               (240, 240), (200, 150)]
VAL_SIZES = [(176, 144), (224, 168), (352, 264), (400, 300), (426, 240),
             (560, 420)]
TRAIN_MOTIONS = ["wavy", "sweep"]
VAL_MOTIONS = ["wavy", "sweep", "hsweep"]

# Patterns under the ball.  The validation's are patterns the training never
# shows (besides sizes, seeds and colours of its own).
TRAIN_PATTERNS = [["pattern=smpte"], ["pattern=circular"], ["pattern=snow"],
                  ["pattern=checkers-8"], ["pattern=checkers-4"],
                  ["pattern=gradient"], ["pattern=colors"], ["pattern=bar"],
                  ["pattern=zone-plate", "kx2=20", "ky2=20", "kt=1"],
                  ["pattern=gamut"], ["pattern=smpte-rp-219"]]
VAL_PATTERNS = [["pattern=pinwheel"], ["pattern=spokes"], ["pattern=smpte75"],
                ["pattern=checkers-2"],
                ["pattern=chroma-zone-plate", "kx2=30", "ky2=30", "kt=2"]]
PALETTE = [0xffffff, 0x000000, 0xff0000, 0x00ff00, 0x0000ff, 0xffff00,
           0x00ffff, 0xff00ff, 0xff8000, 0x808080, 0x000080, 0x008000,
           0x800000, 0x40c0a0, 0xc0c0c0, 0x303030]


def luma(rgb):
    return 0.299 * (rgb >> 16 & 255) + 0.587 * (rgb >> 8 & 255) + 0.114 * (rgb & 255)


def max_channel_diff(a, b):
    return max(abs((a >> s & 255) - (b >> s & 255)) for s in (16, 8, 0))


def pick_pair(rng):
    """A foreground and a plain background the ball stands out from."""
    while True:
        fg, bg = rng.choice(PALETTE), rng.choice(PALETTE)
        if fg != bg and (abs(luma(fg) - luma(bg)) >= 40 or max_channel_diff(fg, bg) >= 128):
            return fg, bg


def make_specs(sizes, motions, patterns, n_clips, rng):
    """(w, h, n_frames, keep, motion, fg, background) per clip: 40 % plain
    backgrounds, 40 % patterns under the ball, 20 % patterns without it."""
    specs = []
    for _ in range(n_clips):
        w, h = rng.choice(sizes)
        motion = rng.choice(motions)
        n = rng.randint(20, 240)
        keep = sorted(rng.sample(range(n), 6))
        r = rng.random()
        if r < 0.4:
            fg, bg = pick_pair(rng)
            background = ("plain", bg)
        elif r < 0.8:
            fg = rng.choice(PALETTE)
            props = list(rng.choice(patterns))
            if rng.random() < 0.3:
                props.append(f"horizontal-speed={rng.randint(-6, 6)}")
            background = ("pattern", props)
        else:
            fg = 0
            if rng.random() < 0.3:
                props = ["pattern=solid-color",
                         f"foreground-color={bf.argb(rng.choice(PALETTE))}"]
            else:
                props = list(rng.choice(patterns))
            background = ("none", props)
            keep = keep[:3]
        specs.append((w, h, n, keep, motion, fg, background))
    return specs


def resample(frame, out_w, out_h):
    """(H, W, 3) uint8 -> (3, out_h, out_w) float32, as the element resizes."""
    h, w = frame.shape[:2]
    rows = pf.sample_table(out_h, h, h / out_h)
    cols = pf.sample_table(out_w, w, w / out_w)
    return np.stack([pf.bilinear(frame[:, :, c], rows, cols) for c in range(3)])


def render(spec):
    """Tensors (pixel values 0..255), boxes in model-input pixels (None: no
    ball) and a description per kept frame of one clip."""
    w, h, n, keep, motion, fg, background = spec
    frames = bf.render_clip(w, h, n, motion, fg, background)
    boxes = (bf.ball_boxes(w, h, n, motion) if background[0] != "none"
             else [None] * n)
    sx, sy = INPUT_W / w, INPUT_H / h
    out = []
    for i in keep:
        b = boxes[i]
        if b is not None:
            b = [b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy]
        kind = background[0] if background[0] != "pattern" else background[1][0][8:]
        out.append((resample(frames[i], INPUT_W, INPUT_H), b, kind))
    return out


def build_set(specs, workers):
    with ThreadPoolExecutor(workers) as pool:
        clips = list(pool.map(render, specs))
    items = [item for clip in clips for item in clip]
    x = np.stack([it[0] for it in items])
    x = pf.normalise(x, MEAN, STD, SCALE)
    has = np.array([it[1] is not None for it in items], np.float32)
    boxes = np.array([it[1] if it[1] is not None else [0, 0, 1, 1] for it in items],
                     np.float32)
    kinds = [it[2] for it in items]
    return x, boxes, has, kinds


def make_net():
    import mxnet as mx
    from mxnet.gluon import nn

    class BallNet(nn.HybridBlock):
        """Returns (detections (B, 1, 6), centre logits (B, 144), max logit (B, 1))."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            gx = (np.arange(GRID_W, dtype=np.float32) + 0.5) * CELL
            gy = (np.arange(GRID_H, dtype=np.float32) + 0.5) * CELL
            gxx, gyy = np.meshgrid(gx, gy)
            with self.name_scope():
                self.body = nn.HybridSequential(prefix="")
                for i, (ch, stride, pool, dil) in enumerate(
                        [(16, 2, False, 1), (16, 1, True, 1), (32, 1, True, 1),
                         (48, 1, False, 1), (48, 1, False, 2)]):
                    self.body.add(nn.Conv2D(ch, 3, strides=stride, padding=dil,
                                            dilation=dil, use_bias=False),
                                  nn.BatchNorm(), nn.Activation("relu"))
                    if pool:
                        self.body.add(nn.MaxPool2D(2))
                self.head = nn.Conv2D(5, 1)
                self.grid_x = self.params.get_constant("grid_x", gxx.reshape(1, -1))
                self.grid_y = self.params.get_constant("grid_y", gyy.reshape(1, -1))

        def hybrid_forward(self, F, x, grid_x, grid_y):
            maps = F.reshape(self.head(self.body(x)), shape=(0, 5, -1))  # (B, 5, 144)

            def channel(i):
                return F.reshape(F.slice_axis(maps, axis=1, begin=i, end=i + 1),
                                 shape=(0, -1))
            logit, dx, dy, lw, lh = (channel(i) for i in range(5))
            p = F.softmax(logit, axis=-1)
            cx = F.sum(p * F.broadcast_add(dx * CELL, grid_x), axis=1, keepdims=True)
            cy = F.sum(p * F.broadcast_add(dy * CELL, grid_y), axis=1, keepdims=True)
            bw = F.sum(p * F.exp(lw), axis=1, keepdims=True) * 16.0
            bh = F.sum(p * F.exp(lh), axis=1, keepdims=True) * 16.0
            top = F.max(logit, axis=1, keepdims=True)
            score = F.sigmoid(top)
            x1 = F.clip(cx - 0.5 * bw, 0.0, float(INPUT_W))
            y1 = F.clip(cy - 0.5 * bh, 0.0, float(INPUT_H))
            x2 = F.clip(cx + 0.5 * bw, 0.0, float(INPUT_W))
            y2 = F.clip(cy + 0.5 * bh, 0.0, float(INPUT_H))
            det = F.concat(F.zeros_like(score), score, x1, y1, x2, y2, dim=1)
            return F.expand_dims(det, axis=1), logit, top

    class Detections(nn.HybridBlock):
        """What is exported: the detections head alone."""

        def __init__(self, body, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.net = body

        def hybrid_forward(self, F, x):
            return self.net(x)[0]

    body = BallNet(prefix="ball_")
    return body, Detections(body, prefix="")


def centre_targets(boxes, has):
    """A Gaussian (sigma: 0.75 cell) around each ball's centre over the grid."""
    gx = (np.arange(GRID_W) + 0.5) * CELL
    gy = (np.arange(GRID_H) + 0.5) * CELL
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    d2 = ((gx[None, None, :] - cx[:, None, None]) ** 2
          + (gy[None, :, None] - cy[:, None, None]) ** 2) / (0.75 * CELL) ** 2
    t = np.exp(-0.5 * d2).reshape(len(boxes), -1)
    t /= t.sum(axis=1, keepdims=True)
    return (t * has[:, None]).astype(np.float32)


def train(body, x, boxes, has, epochs, batch, rng_np):
    import mxnet as mx
    from mxnet import autograd, gluon, nd

    body.initialize(mx.init.Xavier(magnitude=2.0))
    body.hybridize()
    steps = epochs * ((len(x) + batch - 1) // batch)
    schedule = mx.lr_scheduler.CosineScheduler(steps, base_lr=3e-3, final_lr=1e-5)
    trainer = gluon.Trainer(body.collect_params(), "adam",
                            {"learning_rate": 3e-3, "lr_scheduler": schedule, "wd": 1e-4})
    bce = gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)
    targets = centre_targets(boxes, has)
    for epoch in range(epochs):
        order = rng_np.permutation(len(x))
        sums, t0 = np.zeros(3), time.time()
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            xb = x[idx]
            shape = (len(idx), 1, 1, 1)
            sigma = rng_np.uniform(0, 3, shape) * (rng_np.random(shape) < 0.5)
            xb = xb + (rng_np.standard_normal(xb.shape) * sigma * (SCALE / STD[0])).astype(np.float32)
            data, tb = nd.array(xb), nd.array(boxes[idx])
            hb, tc = nd.array(has[idx]), nd.array(targets[idx])
            n_pos = max(1.0, float(has[idx].sum()))
            with autograd.record():
                det, logit, top = body(data)
                centre = -(tc * nd.log_softmax(logit, axis=-1)).sum() / n_pos
                l1 = (nd.abs(det[:, 0, 2:6] - tb).sum(axis=1) * hb).sum() / (CELL * n_pos)
                presence = bce(top.reshape((-1,)), hb).mean()
                loss = centre + l1 + presence
            loss.backward()
            trainer.step(1)
            sums += [float(centre.asscalar()), float(l1.asscalar()),
                     float(presence.asscalar())]
        n_b = (len(x) + batch - 1) // batch
        print(f"epoch {epoch + 1:2d}/{epochs}: centre {sums[0] / n_b:.3f}, "
              f"box L1 {sums[1] / n_b:.3f} cells, presence {sums[2] / n_b:.4f} "
              f"({time.time() - t0:.0f} s)", flush=True)


def predict(net, x, batch=256):
    from mxnet import nd
    return np.concatenate([net(nd.array(x[i:i + batch])).asnumpy()
                           for i in range(0, len(x), batch)])[:, 0, :]


def evaluate(det, boxes, has, kinds, threshold=0.5):
    """Mean IoU on frames with a ball, AP@0.5 and AP@0.75 over all frames,
    and how many ball-less frames got a box above the threshold."""
    ious = [bf.iou(d[2:6].tolist(), b.tolist()) if h else None
            for d, b, h in zip(det, boxes, has)]
    pos = [v for v in ious if v is not None]
    n_pos = len(pos)
    neg_scores = [d[1] for d, h in zip(det, has) if not h]
    res = {
        "frames": len(det),
        "frames_with_ball": n_pos,
        "mean_iou": round(float(np.mean(pos)), 4),
        "median_iou": round(float(np.median(pos)), 4),
        "iou_at_least_0.5": round(float(np.mean([v >= 0.5 for v in pos])), 4),
        "ap50": round(bf.average_precision(det[:, 1], ious, n_pos, 0.5), 4),
        "ap75": round(bf.average_precision(det[:, 1], ious, n_pos, 0.75), 4),
        "ball_found": round(float(np.mean([d[1] >= threshold for d, h in zip(det, has) if h])), 4),
        "false_boxes_without_ball": f"{sum(s >= threshold for s in neg_scores)}/{len(neg_scores)}",
    }
    per_kind = {}
    for kind in sorted(set(kinds)):
        v = [i for i, k in zip(ious, kinds) if k == kind and i is not None]
        if v:
            per_kind[kind] = round(float(np.mean(v)), 4)
    res["mean_iou_by_background"] = per_kind
    return res


def default_set():
    """The demo's own frames: `videotestsrc pattern=ball` as people type it
    (white ball on black, each motion) at 320x240 and 640x480, every 5th of
    the first 200 frames."""
    specs = [(w, h, 200, list(range(0, 200, 5)), m, 0xffffff, ("plain", 0x000000))
             for w, h in [(320, 240), (640, 480)] for m in ("wavy", "sweep", "hsweep")]
    return specs


def export(net, out_dir, val, defaults, n_train, epochs):
    import mxnet as mx
    prefix = os.path.join(out_dir, "ball")
    net.hybridize()
    net(mx.nd.zeros((1, 3, INPUT_H, INPUT_W)))
    net.export(prefix, epoch=0)
    sym = mx.sym.load(prefix + "-symbol.json")
    sym = sym(data=mx.sym.var("data", shape=(1, 3, INPUT_H, INPUT_W)))
    sym.save(prefix + "-symbol.json")
    with open(prefix + "-labels.txt", "w") as f:
        f.write("".join(label + "\n" for label in LABELS))
    sidecar = {
        "sidecar_version": 1,
        "description": "Finds videotestsrc's moving ball: one box per frame, "
                       "[class_id, score, x1, y1, x2, y2] (pipelines/README.md)",
        "input_name": "data",
        "input_size": [INPUT_W, INPUT_H],
        "color_order": "rgb",
        "scale": "0-1",
        "mean": list(MEAN),
        "std": list(STD),
        "resize": "stretch",
        "interpolation": "bilinear",
        "output": "detection",
        "activation": "sigmoid",
        "params": "ball-0000.params",
        "labels": "ball-labels.txt",
        "validation": {
            "held_out": dict(val, note=(
                "frame sizes " + ", ".join(f"{w}x{h}" for w, h in VAL_SIZES)
                + "; motions wavy, sweep and hsweep (hsweep never trained); "
                "background patterns never trained ("
                + ", ".join(p[0][8:] for p in VAL_PATTERNS)
                + "), plain colours, and those patterns without a ball; own seed; "
                "IoU against the box of pixels the ball covers at least half; "
                "score threshold 0.5 (the element's default)")),
            "default_settings": dict(defaults, note=(
                "white ball on black, motions wavy, sweep, hsweep, 320x240 and "
                "640x480, every 5th of frames 0-199")),
        },
        "training": {"frames": n_train, "epochs": epochs,
                     "script": "pipelines/train_ball_detector.py"},
    }
    with open(os.path.join(out_dir, "ball-model.json"), "w") as f:
        json.dump(sidecar, f, indent=2)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "models"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--clips", type=int, default=700)
    ap.add_argument("--val-clips", type=int, default=150)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    os.environ.setdefault("MXNET_ENGINE_TYPE", "NaiveEngine")
    import mxnet as mx
    random.seed(SEED)
    np.random.seed(SEED)
    mx.random.seed(SEED)
    rng = random.Random(SEED)
    rng_np = np.random.RandomState(SEED)

    t0 = time.time()
    x, boxes, has, _ = build_set(
        make_specs(TRAIN_SIZES, TRAIN_MOTIONS, TRAIN_PATTERNS, args.clips, rng), args.workers)
    xv, bv, hv, kv = build_set(
        make_specs(VAL_SIZES, VAL_MOTIONS, VAL_PATTERNS, args.val_clips,
                   random.Random(VAL_SEED)), args.workers)
    xd, bd, hd, kd = build_set(default_set(), args.workers)
    print(f"rendered {len(x)} training ({int(has.sum())} with the ball), {len(xv)} "
          f"validation and {len(xd)} default-settings frames in {time.time() - t0:.0f} s",
          flush=True)

    body, net = make_net()
    train(body, x, boxes, has, args.epochs, 64, rng_np)
    val = evaluate(predict(net, xv), bv, hv, kv)
    defaults = evaluate(predict(net, xd), bd, hd, kd)
    defaults.pop("mean_iou_by_background")
    print("held-out validation:", json.dumps(val, indent=1))
    print("default settings:", json.dumps(defaults, indent=1))

    os.makedirs(args.out, exist_ok=True)
    export(net, args.out, val, defaults, len(x), args.epochs)
    print(f"exported {os.path.join(args.out, 'ball')}-symbol.json / -0000.params "
          f"({os.path.getsize(os.path.join(args.out, 'ball-0000.params'))} bytes) "
          f"in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
