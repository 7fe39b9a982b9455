#!/usr/bin/env python3
"""hybridinfer's results against real MXNet 1.9.1, on frames GStreamer makes.

For each case, gst-launch-1.0 runs videotestsrc through hybridinfer into a
filesink: the raw frames land in a file (the element passes them through
unchanged) and `-m` prints the element's "hybridinfer" bus messages.  This
script then pre-processes the same frames in numpy, following the
conventions documented in core/include/hybrid-frame.h, runs MXNet on them and
compares every reported score (classification: all classes, top-k = 9,
through the output activation the case asks for; detection: every row,
threshold -1, boxes mapped back to the frame) within
1e-4 * max(1, max |mxnet|).

"colors-logits" is the colors model without its softmax (MXNet cuts the
head off the symbol at run time, into a temporary folder, and runs the cut
symbol for the reference logits): with output-activation=auto the element
must report a softmax of them.

The environment must point GStreamer at the plugin (meson's element tests
do: GST_PLUGIN_PATH_1_0, GST_PLUGIN_SYSTEM_PATH_1_0, GST_REGISTRY_1_0).
Prints TAP.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import mxnet as mx

TOL = 1e-4
N_FRAMES = 3

# A moving coloured ball: YUV cases need colour to test the matrix.
BALL = "ball foreground-color=0xffff8000 background-color=0xff2040c0"

# name, model, pattern (and videotestsrc options), format, width, height, colorimetry, element options
CASES = [
    ("rgb-stretch", "colors-shaped", "smpte", "RGB", 64, 48, None, ""),
    ("bgrx-odd-nearest", "colors-shaped", "snow", "BGRx", 33, 17, None,
     "interpolation=nearest"),
    ("i420-bt601-default-size", "colors", BALL, "I420", 320, 240, "bt601",
     ""),
    ("nv12-bt709-letterbox", "colors", "smpte100", "NV12", 100, 75, "bt709",
     "resize=letterbox"),
    ("rgb-pinwheel", "colors-shaped", "pinwheel", "RGB", 60, 60, None, ""),
    ("gray8-odd", "colors-shaped", "zone-plate", "GRAY8", 45, 31, None, ""),
    ("xrgb-bgr-imagenet", "colors-shaped", "gradient", "xRGB", 64, 64, None,
     "color-order=bgr scale=0-1 mean=\"<0.485,0.456,0.406>\" "
     "std=\"<0.229,0.224,0.225>\""),
    ("rgba-letterbox-nearest", "colors", "checkers-8", "RGBA", 50, 50, None,
     "input-size=40x24 resize=letterbox interpolation=nearest"),
    ("i420-full-range", "colors", "colors", "I420", 96, 54, "1:4:0:0", ""),
    ("bgr-one-mean", "colors-shaped", "spokes", "BGR", 31, 29, None,
     "scale=0-1 mean=\"<0.5>\" std=\"<0.25>\""),
    ("xbgr-input-follows-frame", "colors", "circular", "xBGR", 70, 40, None,
     "input-size=frame"),
    ("bgra-smpte75", "colors-shaped", "smpte75", "BGRA", 64, 36, None, ""),
    ("nv12-odd", "colors", "smpte", "NV12", 35, 21, "bt601", ""),
    ("detect-rgb", "quadrants", "smpte", "RGB", 160, 120, None,
     "input-size=64x64 threshold=-1"),
    ("detect3-nv12-letterbox", "quadrants3", "smpte", "NV12", 200, 100,
     "bt601", "input-size=64x64 threshold=-1 resize=letterbox"),
    ("detect-bgrx-nearest", "quadrants", "colors", "BGRx", 128, 128, None,
     "input-size=64x64 threshold=-1 interpolation=nearest"),
    ("detect3-i420-bt709", "quadrants3", BALL, "I420", 90, 70, "bt709",
     "input-size=64x64 threshold=-1"),
    # output-activation: auto on logits is a softmax; explicit ones apply
    ("logits-auto-softmax", "colors-logits", "smpte", "RGB", 64, 48, None,
     "input-size=32x32"),
    ("logits-none", "colors-logits", "snow", "RGB", 64, 48, None,
     "input-size=32x32 output-activation=none"),
    ("logits-sigmoid", "colors-logits", "smpte", "I420", 64, 48, "bt601",
     "input-size=32x32 output-activation=sigmoid"),
    ("probabilities-auto-none", "colors-shaped", "ball", "RGB", 64, 48, None,
     "output-activation=auto"),
    # output=segmentation: the classes present and their share of the map
    ("segment-nv12", "segment", BALL, "NV12", 96, 64, "bt601",
     "output=segmentation input-size=48x32"),
    ("segment-rgb-letterbox", "segment", "smpte", "RGB", 80, 40, None,
     "output=segmentation input-size=32x32 resize=letterbox"),
    # output=pose: each heatmap's maximum, mapped back to the frame
    ("pose-i420", "spots", BALL, "I420", 96, 64, "bt601",
     "output=pose input-size=48x32"),
    ("pose-bgrx-letterbox", "spots", "ball foreground-color=0xff00ff00",
     "BGRx", 100, 60, None, "output=pose input-size=40x40 resize=letterbox"),
]

LOGITS = "colors-logits"


def write_logits_model(models, tmp):
    """The colors model cut before its softmax, in tmp (params: colors')."""
    sym = mx.sym.load(os.path.join(models, "colors-symbol.json"))
    head = sym.get_internals()[sym.list_outputs()[0]]
    logits = head.get_children()[0]
    logits.save(os.path.join(tmp, LOGITS + "-symbol.json"))


def model_dir(args, model, tmp):
    return tmp if model == LOGITS else args.models


def activation(ref, model, opts):
    """What the element reports for MXNet's scores `ref` of `model`."""
    kind = options(opts).get("output-activation", "auto")
    if kind == "sigmoid":
        return 1.0 / (1.0 + np.exp(-ref))
    if kind == "softmax" or (kind == "auto" and model == LOGITS):
        e = np.exp(ref - np.max(ref))
        return e / np.sum(e)
    return ref

# ---- frames as GStreamer lays them out (GstVideoInfo defaults) -------------

PACKED = {  # bytes per pixel, offsets of R, G, B
    "RGB": (3, 0, 1, 2), "BGR": (3, 2, 1, 0),
    "RGBx": (4, 0, 1, 2), "BGRx": (4, 2, 1, 0),
    "xRGB": (4, 1, 2, 3), "xBGR": (4, 3, 2, 1),
    "RGBA": (4, 0, 1, 2), "BGRA": (4, 2, 1, 0),
}

# colorimetry -> (Kr, Kb, full range)
COLORIMETRY = {
    "bt601": (0.299, 0.114, False),
    "bt709": (0.2126, 0.0722, False),
    "1:4:0:0": (0.299, 0.114, True),
}


def up(x, n):
    return (x + n - 1) // n * n


def frame_size(fmt, w, h):
    if fmt in PACKED:
        return up(w * PACKED[fmt][0], 4) * h
    if fmt == "GRAY8":
        return up(w, 4) * h
    if fmt == "I420":
        s0, s1, ch = up(w, 4), up(up(w, 2) // 2, 4), up(h, 2) // 2
        return s0 * up(h, 2) + 2 * s1 * ch
    if fmt == "NV12":
        s0 = up(w, 4)
        return s0 * up(h, 2) + s0 * (up(h, 2) // 2)
    raise ValueError(fmt)


def planes(raw, fmt, w, h):
    """The frame's planes as 2-D (rows, bytes) arrays."""
    if fmt in PACKED:
        s = up(w * PACKED[fmt][0], 4)
        return [raw[:s * h].reshape(h, s)]
    if fmt == "GRAY8":
        s = up(w, 4)
        return [raw[:s * h].reshape(h, s)]
    hh, ch = up(h, 2), up(h, 2) // 2
    if fmt == "I420":
        s0, s1 = up(w, 4), up(up(w, 2) // 2, 4)
        o1 = s0 * hh
        o2 = o1 + s1 * ch
        return [raw[:s0 * h].reshape(h, s0),
                raw[o1:o1 + s1 * ch].reshape(ch, s1),
                raw[o2:o2 + s1 * ch].reshape(ch, s1)]
    s0 = up(w, 4)
    o1 = s0 * hh
    return [raw[:s0 * h].reshape(h, s0), raw[o1:o1 + s0 * ch].reshape(ch, s0)]


# ---- the pre-processing of hybrid-frame.h, in numpy -------------------------

def table(n, src, ratio, nearest):
    """Per output index: low and high source index and the high weight."""
    centre = (np.arange(n) + 0.5) * ratio
    if nearest:
        lo = np.minimum(np.floor(centre).astype(int), src - 1)
        return lo, lo, np.zeros(n)
    s = np.clip(centre - 0.5, 0, src - 1)
    lo = np.floor(s).astype(int)
    return lo, np.minimum(lo + 1, src - 1), s - lo


def sample(plane, rows, cols):
    """Bilinear sampling of a 2-D array at the tables' positions."""
    (y0, y1, wy), (x0, x1, wx) = rows, cols
    wy, wx = wy[:, None], wx[None, :]
    a, b = plane[np.ix_(y0, x0)], plane[np.ix_(y0, x1)]
    c, d = plane[np.ix_(y1, x0)], plane[np.ix_(y1, x1)]
    top = a + (b - a) * wx
    bottom = c + (d - c) * wx
    return top + (bottom - top) * wy


def picture_area(w, h, dw, dh, letterbox):
    rw, rh = dw, dh
    if letterbox:
        s = min(dw / w, dh / h)
        rw = min(max(int(math.floor(w * s + 0.5)), 1), dw)
        rh = min(max(int(math.floor(h * s + 0.5)), 1), dh)
    return (dw - rw) // 2, (dh - rh) // 2, rw, rh


def to_rgb(raw, fmt, w, h, area, nearest, colorimetry):
    """R, G, B (float64, 0..255) of the picture area, as the element samples."""
    ox, oy, rw, rh = area
    p = [q.astype(np.float64) for q in planes(raw, fmt, w, h)]
    rows = table(rh, h, h / rh, nearest)
    if fmt in PACKED:
        bpp, r, g, b = PACKED[fmt]
        return [sample(p[0][:, off::bpp][:, :w], rows,
                       table(rw, w, w / rw, nearest)) for off in (r, g, b)]
    cols = table(rw, w, w / rw, nearest)
    y = sample(p[0][:, :w], rows, cols)
    if fmt == "GRAY8":
        return [y, y, y]
    cw, chh = (w + 1) // 2, (h + 1) // 2
    crows = table(rh, chh, h / rh / 2, nearest)
    ccols = table(rw, cw, w / rw / 2, nearest)
    if fmt == "NV12":
        u = sample(p[1][:, 0::2][:chh, :cw], crows, ccols)
        v = sample(p[1][:, 1::2][:chh, :cw], crows, ccols)
    else:
        u = sample(p[1][:chh, :cw], crows, ccols)
        v = sample(p[2][:chh, :cw], crows, ccols)
    kr, kb, full = COLORIMETRY[colorimetry]
    kg = 1 - kr - kb
    if full:
        u, v = u - 128, v - 128
    else:
        y = (y - 16) * 255 / 219
        u, v = (u - 128) * 255 / 224, (v - 128) * 255 / 224
    r = y + 2 * (1 - kr) * v
    b = y + 2 * (1 - kb) * u
    g = y - 2 * kb * (1 - kb) / kg * u - 2 * kr * (1 - kr) / kg * v
    return [np.clip(c, 0, 255) for c in (r, g, b)]


def options(text):
    """Element options as a dict (values with quotes and brackets kept)."""
    return dict(re.findall(r'([\w-]+)=("[^"]*"|\S+)', text))


def values(text):
    return [float(v) for v in text.strip('"<> ').split(",")]


def tensor(raw, fmt, w, h, opts, shape, colorimetry):
    """The input tensor (1, C, H, W) hybridinfer makes from this frame."""
    _, c, dh, dw = shape
    letterbox = opts.get("resize") == "letterbox"
    nearest = opts.get("interpolation") == "nearest"
    area = picture_area(w, h, dw, dh, letterbox)
    rgb = to_rgb(raw, fmt, w, h, area, nearest, colorimetry)
    scale = 1 / 255 if opts.get("scale") == "0-1" else 1.0
    mean = values(opts["mean"]) if "mean" in opts else [0.0]
    std = values(opts["std"]) if "std" in opts else [1.0]
    mean = mean * 3 if len(mean) == 1 else mean
    std = std * 3 if len(std) == 1 else std
    order = [2, 1, 0] if opts.get("color-order") == "bgr" else [0, 1, 2]
    out = np.zeros((1, c, dh, dw))
    ox, oy, rw, rh = area
    for ch in range(c):
        picture = np.zeros((dh, dw))       # black padding
        picture[oy:oy + rh, ox:ox + rw] = rgb[order[ch]]
        out[0, ch] = (picture * scale - mean[ch]) / std[ch]
    return out.astype(np.float32), area


# ---- the element's messages -------------------------------------------------

def field(msg, name, kind):
    m = re.search(r"(?:^|[ ,])%s=\(%s\)([^,;<]+|<[^;]*?>)(?=[,;])"
                  % (re.escape(name), kind), msg)
    return m.group(1) if m else None


def array(msg, name, kind):
    m = re.search(r"%s=\(%s\)<([^<>]*)>" % (re.escape(name), kind), msg)
    if not m:
        return []
    return [x.strip().strip('"') for x in m.group(1).split(",") if x.strip()]


def boxes(msg):
    m = re.search(r"boxes=\(float\)<(.*)>;", msg)
    if not m:
        return []
    return [[float(v) for v in re.findall(r"\(float\)([-\d.e+]+)", b)]
            for b in re.findall(r"<([^<>]*)>", m.group(1))]


_MODELS = {}


def args_models(models):
    """The shipped models' folder, whichever folder holds this model."""
    return _MODELS.get("shipped", models)


def launch(gst_launch, pattern, fmt, w, h, colorimetry, prefix, labels, opts,
           raw_path, n_frames=N_FRAMES):
    """videotestsrc frames of `pattern` in these caps through hybridinfer
    (the raw frames into raw_path); the element messages `-m` printed.
    `prefix`: an export's (prefix-symbol.json), or an .onnx file."""
    caps = "video/x-raw,format=%s,width=%d,height=%d" % (fmt, w, h)
    if colorimetry:
        caps += ",colorimetry=%s" % colorimetry
    model = prefix if prefix.endswith(".onnx") else prefix + "-symbol.json"
    cmd = ("%s -m videotestsrc num-buffers=%d pattern=%s ! capsfilter "
           "caps=\"%s\" ! hybridinfer model=%s labels=%s "
           "device=cpu top-k=9 post-messages=true %s ! filesink location=%s"
           % (gst_launch, n_frames, pattern, caps, model, labels, opts,
              raw_path))
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0:
        raise RuntimeError("gst-launch failed:\n%s%s" % (out.stdout,
                                                       out.stderr))
    return [line.split("(element): ", 1)[1] for line in
            out.stdout.splitlines() if "(element): hybridinfer," in line]


def run_pipeline(gst_launch, models, case, raw_path):
    name, model, pattern, fmt, w, h, colorimetry, opts = case
    prefix = os.path.join(models, model)
    labels = os.path.join(args_models(models), model.rstrip("3")
                          .replace("-shaped", "").replace("-logits", "")
                          + ".txt")
    if model == LOGITS:
        opts += " params=%s" % os.path.join(args_models(models),
                                            "colors-0000.params")
    return launch(gst_launch, pattern, fmt, w, h, colorimetry, prefix, labels,
                  opts, raw_path)


class Model:
    def __init__(self, models, name, params=None):
        prefix = os.path.join(models, name)
        self.net = mx.gluon.SymbolBlock.imports(
            prefix + "-symbol.json", ["data"],
            params or prefix + "-0000.params")
        self.name = name

    def __call__(self, x):
        out = self.net(mx.nd.array(x))
        if isinstance(out, (list, tuple)):
            return [o.asnumpy() for o in out]
        return [out.asnumpy()]


def input_shape(case):
    name, model, pattern, fmt, w, h, colorimetry, opts = case
    o = options(opts)
    size = o.get("input-size")
    if size == "frame":
        dw, dh = w, h
    elif size:
        dw, dh = (int(v) for v in size.split("x"))
    elif model == "colors-shaped":
        dw, dh = 32, 32
    else:
        dw, dh = 224, 224
    return (1, 3, dh, dw)


def close(ours, ref):
    tol = TOL * max(1.0, float(np.max(np.abs(ref))))
    return float(np.max(np.abs(np.asarray(ours) - ref))), tol


def check_classification(msg, ref, labels):
    ids = [int(v) for v in array(msg, "class-ids", "int")]
    scores = [float(v) for v in array(msg, "scores", "float")]
    names = array(msg, "labels", "string")
    if sorted(ids) != list(range(ref.size)):
        return "class-ids %s: expected every class" % ids
    ours = np.zeros(ref.size)
    ours[ids] = scores
    err, tol = close(ours, ref.ravel())
    if err > tol:
        return "scores off by %g (tolerance %g)" % (err, tol)
    best = int(np.argmax(ref))
    if ref.ravel()[best] - np.sort(ref.ravel())[-2] > tol and ids[0] != best:
        return "top class %d, MXNet's is %d" % (ids[0], best)
    if names[0] != labels[ids[0]]:
        return "label %s for class %d" % (names[0], ids[0])
    return None


def check_segmentation(msg, ref, labels):
    """The map's classes (MXNet's argmax per pixel, first on ties) and the
    share of pixels each covers, most first."""
    classes = np.argmax(ref[0], axis=0).ravel()
    counts = np.bincount(classes, minlength=ref.shape[1])
    want = sorted((c for c in range(ref.shape[1]) if counts[c]),
                  key=lambda c: (-counts[c], c))
    ids = [int(v) for v in array(msg, "class-ids", "int")]
    if ids != want:
        return "classes %s, MXNet's argmax gives %s" % (ids, want)
    got = [float(v) for v in array(msg, "coverage", "float")]
    share = [counts[c] / classes.size for c in want]
    if max(abs(a - b) for a, b in zip(got, share)) > 1e-6:
        return "coverage %s, MXNet's %s" % (got, share)
    names = array(msg, "labels", "string")
    if names != [labels[c] for c in want]:
        return "labels %s" % names
    return None


def check_pose(msg, ref, area, w, h, dw, dh):
    """Keypoints as GluonCV's heatmap_to_coord places them: each heatmap's
    first maximum (at (0, 0) when not above 0), in input pixels, then in
    the frame through the picture area; scored by the maximum."""
    k, hh, hw = ref.shape[1:]
    got = [float(v) for v in array(msg, "keypoints", "float")]
    if len(got) != 3 * k:
        return "%d keypoint values for %d heatmaps" % (len(got), k)
    ox, oy, rw, rh = area
    for j in range(k):
        hm = ref[0, j].ravel()
        at, best = int(np.argmax(hm)), float(np.max(hm))
        x, y = (at % hw, at // hw) if best > 0 else (0, 0)
        fx = (x * dw / hw - ox) * w / rw
        fy = (y * dh / hh - oy) * h / rh
        want = np.array([fx, fy, best])
        err = np.max(np.abs(np.array(got[3 * j:3 * j + 3]) - want))
        if err > 1e-3 * max(w, h, 1):
            return "keypoint %d is %s, MXNet's heatmap gives %s" % (
                j, got[3 * j:3 * j + 3], want)
    return None


def check_detection(msg, outs, area, w, h):
    if len(outs) == 3:
        # ids and scores (K, 1), or (K) as CenterNet gives them
        rows = np.concatenate([outs[0][0].reshape(-1, 1), outs[1][0].reshape(-1, 1),
                               outs[2][0]], axis=1)
    else:
        rows = outs[0][0]
    # NMS pads its output with rows of class id -1: no object, not reported
    rows = rows[rows[:, 0] >= 0]
    ids = [int(v) for v in array(msg, "class-ids", "int")]
    scores = [float(v) for v in array(msg, "scores", "float")]
    got = boxes(msg)
    if len(ids) != rows.shape[0] or len(got) != rows.shape[0]:
        return "%d rows reported, MXNet has %d" % (len(ids), rows.shape[0])
    if ids != [int(r[0] + 0.5) for r in rows]:
        return "class ids %s, MXNet %s" % (ids, rows[:, 0])
    err, tol = close(scores, rows[:, 1])
    if err > tol:
        return "scores off by %g" % err
    ox, oy, rw, rh = area
    for k, r in enumerate(rows):
        x1 = min(max((r[2] - ox) * w / rw, 0), w)
        y1 = min(max((r[3] - oy) * h / rh, 0), h)
        x2 = min(max((r[4] - ox) * w / rw, x1), w)
        y2 = min(max((r[5] - oy) * h / rh, y1), h)
        want = np.array([x1, y1, x2 - x1, y2 - y1])
        if np.max(np.abs(np.array(got[k]) - want)) > 1e-3 * max(w, h):
            return "box %d is %s, expected %s" % (k, got[k], want)
    return None


def check_case(args, case, tmp):
    name, model, pattern, fmt, w, h, colorimetry, opts = case
    raw_path = os.path.join(tmp, name + ".raw")
    msgs = run_pipeline(args.gst_launch, model_dir(args, model, tmp), case,
                        raw_path)
    if len(msgs) != N_FRAMES:
        return "%d messages for %d frames" % (len(msgs), N_FRAMES)
    raw = np.fromfile(raw_path, np.uint8)
    size = frame_size(fmt, w, h)
    if raw.size != N_FRAMES * size:
        return "%d bytes of frames, expected %d x %d" % (raw.size, N_FRAMES,
                                                         size)
    if model == LOGITS:
        net = Model(tmp, model, os.path.join(args.models,
                                             "colors-0000.params"))
    else:
        net = Model(args.models, model)
    base = model.rstrip("3").replace("-shaped", "").replace("-logits", "")
    with open(os.path.join(args.models, base + ".txt")) as f:
        labels = f.read().splitlines()
    o = options(opts)
    for i, msg in enumerate(msgs):
        if field(msg, "frame-number", "guint64") != str(i):
            return "message %d is for frame %s" % (
                i, field(msg, "frame-number", "guint64"))
        x, area = tensor(raw[i * size:(i + 1) * size], fmt, w, h, o,
                         input_shape(case), colorimetry)
        outs = net(x)
        if model.startswith("quadrants"):
            problem = check_detection(msg, outs, area, w, h)
        elif model == "segment":
            problem = check_segmentation(msg, outs[0], labels)
        elif model == "spots":
            dh, dw = input_shape(case)[2:]
            problem = check_pose(msg, outs[0], area, w, h, dw, dh)
        else:
            problem = check_classification(
                msg, activation(outs[0], model, opts), labels)
        if problem:
            return "frame %d: %s" % (i, problem)
    return None


def run_tap(cases, check, skip=lambda case: None):
    """TAP for `cases`: check(case) returns a problem or None (an exception
    is a problem too, and the rest still run); skip(case) a reason to skip
    it, or None.  Returns the exit status."""
    print("1..%d" % len(cases))
    failed = 0
    for n, case in enumerate(cases, 1):
        reason = skip(case)
        if reason:
            print("ok %d - %s # SKIP %s" % (n, case[0], reason))
            continue
        try:
            problem = check(case)
        except Exception as e:          # report, go on with the rest
            problem = "%s: %s" % (type(e).__name__, e)
        if problem:
            failed += 1
            print("not ok %d - %s: %s" % (n, case[0],
                                          problem.replace("\n", "\n# ")))
        else:
            print("ok %d - %s" % (n, case[0]))
        sys.stdout.flush()
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gst-launch", default="gst-launch-1.0")
    ap.add_argument("--models", required=True)
    ap.add_argument("--case", action="append",
                    help="run only the cases with this name")
    args = ap.parse_args()
    cases = [c for c in CASES if not args.case or c[0] in args.case]
    _MODELS["shipped"] = args.models
    with tempfile.TemporaryDirectory(prefix="hy-vs-mxnet-") as tmp:
        write_logits_model(args.models, tmp)
        return run_tap(cases, lambda case: check_case(args, case, tmp))


if __name__ == "__main__":
    sys.exit(main())
