#!/usr/bin/env python3
"""Train the demo's default model: which videotestsrc pattern is this frame?

The Gluon workflow end to end: frames that GStreamer itself renders, turned
into tensors exactly as the hybridinfer element will (patterns_frames.py), a
small HybridBlock trained on them, hybridized and exported:

  pipelines/models/patterns-symbol.json, patterns-0000.params
  pipelines/models/patterns-labels.txt   one label per line, class order
  pipelines/models/patterns-model.json   its sidecar: preprocessing, labels, validation

Training and validation frames come from disjoint frame sizes and from
different random pattern settings (motion, colours, zone-plate
coefficients), so the validation accuracy printed per class says how the
model does on sizes it never saw.  Deterministic: the same files every run.

Run with the MXNet 1.9.1 reference venv (a few minutes on two cores):
  ~/.cache/hybridinfer/venv/bin/python pipelines/train_patterns.py
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
import patterns_frames as pf  # noqa: E402

SEED = 20240601
INPUT_W = INPUT_H = 64
MEAN = (0.5, 0.5, 0.5)
STD = (0.25, 0.25, 0.25)
SCALE = 1.0 / 255.0

# Classes and the videotestsrc patterns that make them.  checkers-1/2/4/8
# are one class: after the 64x64 resize their cells alias into each other
# at most frame sizes.  blink (black and white frames alternately) and
# solid-color (any colour) are not classes: a single frame of either is a
# plain field, which the black/white/red/green/blue classes already cover.
CLASSES = [
    ("smpte", ["smpte"]),
    ("smpte75", ["smpte75"]),
    ("smpte100", ["smpte100"]),
    ("smpte-rp-219", ["smpte-rp-219"]),
    ("snow", ["snow"]),
    ("black", ["black"]),
    ("white", ["white"]),
    ("red", ["red"]),
    ("green", ["green"]),
    ("blue", ["blue"]),
    ("checkers", ["checkers-1", "checkers-2", "checkers-4", "checkers-8"]),
    ("circular", ["circular"]),
    ("zone-plate", ["zone-plate"]),
    ("chroma-zone-plate", ["chroma-zone-plate"]),
    ("gamut", ["gamut"]),
    ("ball", ["ball"]),
    ("bar", ["bar"]),
    ("pinwheel", ["pinwheel"]),
    ("spokes", ["spokes"]),
    ("gradient", ["gradient"]),
    ("colors", ["colors"]),
]
SOLID = {"black", "white", "red", "green", "blue"}

TRAIN_SIZES = [(64, 64), (80, 60), (112, 112), (128, 96), (160, 120),
               (176, 144), (200, 150), (320, 240), (352, 288), (360, 640),
               (640, 480), (720, 576), (800, 600), (960, 540), (1024, 768),
               (1280, 720), (1920, 1080), (2560, 1440)]
VAL_SIZES = [(96, 72), (240, 180), (400, 300), (480, 720), (854, 480),
             (1024, 576), (1440, 1080), (1600, 900)]

# Patterns that draw with foreground-color / background-color.  Ball and bar
# keep a black background: at 1080p the ball covers a few input pixels, and
# on a coloured field it would be that colour's class.
FG_BG_PATTERNS = {"circular", "pinwheel", "spokes", "gradient"}
FG_ONLY_PATTERNS = {"ball", "bar"}
PALETTE = [0xffffff, 0x000000, 0xff0000, 0x00ff00, 0x0000ff, 0xffff00,
           0x00ffff, 0xff00ff, 0xff8000, 0x808080, 0x000080, 0x008000]
BRIGHT = [0xff0000, 0x00ff00, 0x0000ff, 0xffff00, 0x00ffff, 0xff00ff, 0xff8000]


def argb(rgb):
    return f"0x{0xff000000 | rgb:08x}"


def luma(rgb):
    return 0.299 * (rgb >> 16 & 255) + 0.587 * (rgb >> 8 & 255) + 0.114 * (rgb & 255)


def distinct(a, b):
    """Colours far enough apart that the pattern stays visible in grey, and
    not red with green: that pair is the checkers' own."""
    return abs(luma(a) - luma(b)) >= 80 and {a, b} != {0xff0000, 0x00ff00}


def zone_plate_props(rng):
    """Coefficients for a moving zone plate: circles, stripes or hyperbolas."""
    kind = rng.choice(["circles", "circles", "stripes", "hyperbolas"])
    props = []
    if kind == "circles":
        k2 = rng.randint(6, 40)
        props += [f"kx2={k2}", f"ky2={max(1, k2 + rng.randint(-4, 4))}"]
    elif kind == "stripes":
        props += [f"kx={rng.choice([-1, 1]) * rng.randint(4, 60)}",
                  f"ky={rng.choice([-1, 1]) * rng.randint(0, 60)}"]
    else:
        props += [f"kxy={rng.choice([-1, 1]) * rng.randint(6, 40)}"]
    props += [f"kt={rng.randint(0, 4)}", f"k0={rng.randint(0, 255)}"]
    return props


def clip_spec(pattern, rng, width):
    """One clip: videotestsrc properties, frames to render, frames to keep."""
    props = [f"pattern={pattern}"]
    n_frames, n_keep = rng.randint(1, 6), 2
    if pattern in ("zone-plate", "chroma-zone-plate"):
        props += zone_plate_props(rng)
    if pattern == "ball":
        # Where the ball is depends on the frame number alone (offline,
        # animation-mode=running-time leaves it in one place), so reaching a
        # place means drawing the frames before it: longer clips, more kept.
        props += [f"motion={rng.choice(['wavy', 'wavy', 'sweep', 'hsweep'])}"]
        n_frames, n_keep = rng.randint(1, 200 if width <= 1024 else 100), 3
    if pattern in FG_ONLY_PATTERNS and rng.random() < 0.4:
        props += [f"foreground-color={argb(rng.choice(BRIGHT))}"]
    if pattern in FG_BG_PATTERNS and rng.random() < 0.4:
        fg, bg = rng.sample(PALETTE, 2)
        while not distinct(fg, bg):
            fg, bg = rng.sample(PALETTE, 2)
        props += [f"foreground-color={argb(fg)}", f"background-color={argb(bg)}"]
    if pattern == "bar" or rng.random() < 0.4:
        speed = int(rng.uniform(-0.4, 0.4) * width) or 1
        props += [f"horizontal-speed={speed}"]
    keep = sorted(rng.sample(range(n_frames), min(n_frames, n_keep)))
    return props, n_frames, keep


def make_specs(sizes, clips_per_size, rng):
    specs = []
    for label, (_, patterns) in enumerate(CLASSES):
        for w, h in sizes:
            for _ in range(clips_per_size):
                pattern = rng.choice(patterns)
                fmt = "I420" if rng.random() < 0.25 else "RGB"
                props, n, keep = clip_spec(pattern, rng, w)
                specs.append((label, props, w, h, fmt, n, keep))
    return specs


def render(spec, drop_plain=True):
    """The kept frames of one clip, resized.  With drop_plain, a frame the
    resize reduced to a plain field (a ball between the samples of a large
    frame) is dropped: it is a solid colour's frame, whatever drew it."""
    label, props, w, h, fmt, n, keep = spec
    frames = pf.capture(props, w, h, fmt, n)
    out = []
    for i in keep:
        x = pf.resample(frames[i], fmt, w, h, INPUT_W, INPUT_H)
        if (not drop_plain or CLASSES[label][0] in SOLID
                or np.ptp(x, axis=(1, 2)).max() >= 1.0):
            out.append((x, label))
    return out


def build_set(specs, workers, drop_plain=True):
    with ThreadPoolExecutor(workers) as pool:
        rendered = list(pool.map(lambda s: render(s, drop_plain), specs))
    samples = [s for clip in rendered for s in clip]
    x = np.stack([s[0] for s in samples])
    y = np.array([s[1] for s in samples], np.float32)
    return pf.normalise(x, MEAN, STD, SCALE), y


def make_net(n_classes):
    from mxnet import gluon
    from mxnet.gluon import nn

    class PatternNet(gluon.HybridBlock):
        """Four conv-BN-ReLU-pool stages, then the global average and the
        global maximum of each channel side by side, dense; logits.  The
        maximum is for the ball: in a 1080p frame it covers two or three of
        the 64x64 input's pixels, a signal an average alone dilutes."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.features = nn.HybridSequential(prefix="")
                for channels in (16, 32, 48, 64):
                    self.features.add(
                        nn.Conv2D(channels, 3, padding=1, use_bias=False),
                        nn.BatchNorm(), nn.Activation("relu"),
                        nn.MaxPool2D(2))
                self.average = nn.GlobalAvgPool2D()
                self.maximum = nn.GlobalMaxPool2D()
                self.output = nn.Dense(n_classes)

        def hybrid_forward(self, F, x):
            f = self.features(x)
            pooled = F.concat(self.average(f), self.maximum(f), dim=1)
            return self.output(F.flatten(pooled))

    class WithSoftmax(gluon.HybridBlock):
        """What ships: class probabilities, so scores read as confidences."""

        def __init__(self, body, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.body = body

        def hybrid_forward(self, F, x):
            return F.softmax(self.body(x))

    body = PatternNet(prefix="patterns_")
    return body, WithSoftmax(body, prefix="")


def train(body, x, y, epochs, batch, rng_np):
    import mxnet as mx
    from mxnet import autograd, gluon, nd

    body.initialize(mx.init.Xavier(magnitude=2.0))
    body.hybridize()
    steps = epochs * ((len(x) + batch - 1) // batch)
    schedule = mx.lr_scheduler.CosineScheduler(steps, base_lr=4e-3, final_lr=1e-5)
    trainer = gluon.Trainer(body.collect_params(), "adam",
                            {"learning_rate": 4e-3, "lr_scheduler": schedule,
                             "wd": 1e-4})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(epochs):
        order = rng_np.permutation(len(x))
        total, correct, t0 = 0.0, 0, time.time()
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            xb = x[idx]
            # a little camera/codec noise (sigma in pixel levels) on half the batch
            shape = (len(idx), 1, 1, 1)
            sigma = rng_np.uniform(0, 3, shape) * (rng_np.random(shape) < 0.5)
            noise = rng_np.standard_normal(xb.shape) * sigma * (SCALE / STD[0])
            xb = xb + noise.astype(np.float32)
            data, label = nd.array(xb), nd.array(y[idx])
            with autograd.record():
                out = body(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(len(idx))
            total += float(loss.sum().asscalar())
            correct += int((out.argmax(axis=1) == label).sum().asscalar())
        print(f"epoch {epoch + 1:2d}/{epochs}: loss {total / len(x):.4f}, "
              f"train accuracy {correct / len(x):.4f} ({time.time() - t0:.0f} s)",
              flush=True)


def predict(net, x, batch=256):
    from mxnet import nd
    return np.concatenate([net(nd.array(x[i:i + batch])).asnumpy()
                           for i in range(0, len(x), batch)])


# The settings people type (and the demo uses), at sizes neither set has.
DEFAULT_SIZES = [(100, 100), (720, 480), (1366, 768), (1920, 1200)]
DEFAULT_EXTRA = {"zone-plate": ["kx2=20", "ky2=20", "kt=1"],
                 "chroma-zone-plate": ["kx2=20", "ky2=20", "kt=1"]}


def check_defaults(net):
    """Accuracy on each pattern with default settings (the ball: every 10th
    of its first 200 frames, its whole path; the others: frames 0 and 1)."""
    specs = []
    for label, (_, patterns) in enumerate(CLASSES):
        for pattern in patterns:
            props = [f"pattern={pattern}"] + DEFAULT_EXTRA.get(pattern, [])
            n, keep = (200, list(range(0, 200, 10))) if pattern == "ball" else (2, [0, 1])
            for w, h in DEFAULT_SIZES:
                for fmt in ("RGB", "I420"):
                    specs.append((label, props, w, h, fmt, n, keep))
    x, y = build_set(specs, 2, drop_plain=False)
    pred = predict(net, x).argmax(1)
    where = [(s[1][0][8:], s[2], s[3], s[4]) for s in specs for _ in s[6]]
    wrong = [f"{p} {w}x{h} {fmt} as {CLASSES[int(guess)][0]}"
             for (p, w, h, fmt), t, guess in zip(where, y, pred) if t != guess]
    print(f"\ndefault settings at {', '.join(f'{w}x{h}' for w, h in DEFAULT_SIZES)}, "
          f"RGB and I420: {len(y) - len(wrong)}/{len(y)} right"
          + ("".join("\n  wrong: " + m for m in wrong)))
    return len(y) - len(wrong), len(y)


def report(probs, y):
    labels = [c[0] for c in CLASSES]
    pred = probs.argmax(1)
    per_class = {}
    print(f"\nvalidation ({len(y)} frames at {', '.join(f'{w}x{h}' for w, h in VAL_SIZES)}):")
    for c, name in enumerate(labels):
        mask = y == c
        acc = float((pred[mask] == c).mean())
        wrong = np.bincount(pred[mask][pred[mask] != c], minlength=len(labels))
        confused = ", ".join(f"{labels[k]} {wrong[k]}" for k in np.argsort(-wrong)[:3] if wrong[k])
        per_class[name] = round(acc, 4)
        print(f"  {name:18s} {acc:7.2%}  ({int(mask.sum())} frames)"
              + (f"  mistaken for: {confused}" if confused else ""))
    overall = float((pred == y).mean())
    print(f"  {'overall':18s} {overall:7.2%}")
    return overall, per_class


def export(net, out_dir, overall, per_class, n_train, n_val, defaults):
    import mxnet as mx
    prefix = os.path.join(out_dir, "patterns")
    net.hybridize()
    net(mx.nd.zeros((1, 3, INPUT_H, INPUT_W)))
    net.export(prefix, epoch=0)
    # declare the input's shape so the element's input-size defaults right
    sym = mx.sym.load(prefix + "-symbol.json")
    sym = sym(data=mx.sym.var("data", shape=(1, 3, INPUT_H, INPUT_W)))
    sym.save(prefix + "-symbol.json")
    with open(prefix + "-labels.txt", "w") as f:
        f.write("".join(c[0] + "\n" for c in CLASSES))
    # The model's sidecar (docs/ELEMENT.md, "The model's sidecar"): what
    # `hybridinfer model=patterns-symbol.json` needs and nothing else.
    sidecar = {
        "sidecar_version": 1,
        "description": "Classifies GStreamer's videotestsrc patterns "
                       "(pipelines/README.md)",
        "input_name": "data",
        "input_size": [INPUT_W, INPUT_H],
        "color_order": "rgb",
        "scale": "0-1",
        "mean": list(MEAN),
        "std": list(STD),
        "resize": "stretch",
        "interpolation": "bilinear",
        "output": "classification",
        "activation": "softmax",
        "params": "patterns-0000.params",
        "labels": "patterns-labels.txt",
        "validation": {"frames": n_val, "accuracy": round(overall, 4),
                       "per_class": per_class,
                       "default_settings": {"frames": defaults[1],
                                            "right": defaults[0]}},
        "training": {"frames": n_train,
                     "script": "pipelines/train_patterns.py"},
    }
    with open(os.path.join(out_dir, "patterns-model.json"), "w") as f:
        json.dump(sidecar, f, indent=2)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "models"))
    ap.add_argument("--epochs", type=int, default=14)
    ap.add_argument("--clips", type=int, default=9,
                    help="training clips per class and frame size")
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
    x_train, y_train = build_set(make_specs(TRAIN_SIZES, args.clips, rng), args.workers)
    x_val, y_val = build_set(make_specs(VAL_SIZES, 3, rng), args.workers)
    print(f"rendered {len(x_train)} training and {len(x_val)} validation frames "
          f"in {time.time() - t0:.0f} s", flush=True)

    body, net = make_net(len(CLASSES))
    train(body, x_train, y_train, args.epochs, 64, rng_np)
    overall, per_class = report(predict(net, x_val), y_val)
    defaults_right, defaults_total = check_defaults(net)

    os.makedirs(args.out, exist_ok=True)
    export(net, args.out, overall, per_class, len(x_train), len(x_val),
           (defaults_right, defaults_total))
    print(f"\nexported {os.path.join(args.out, 'patterns')}-symbol.json / -0000.params "
          f"({os.path.getsize(os.path.join(args.out, 'patterns-0000.params'))} bytes)")


if __name__ == "__main__":
    main()
