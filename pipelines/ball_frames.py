"""Frames of videotestsrc's moving ball, and its box computed from the frames.

Shared by train_ball_detector.py (training and validation frames),
verify_ball_detector.py (MXNet against the element) and, for the box rule,
test_detect_ball.py (which re-implements it without numpy).

A clip is the ball (`videotestsrc pattern=ball`, foreground colour, motion)
over a background: either the ball's own plain `background-color`, or another
videotestsrc pattern (smpte, circular, snow, ...) with the ball composited on
top by GStreamer's `compositor` (the ball drawn with a transparent background,
RGBA).  Everything is rendered by gst-launch-1.0 writing raw RGB to stdout.

The ground truth comes from the frames: the same ball stream is rendered once
more on its own, RGBA with a transparent background (videotestsrc draws the
same ball at the same frame number: animation-mode=frames), and the ball's box
is the box of the pixels it covers at least half (alpha >= 128), as pixel
edges [x1, y1, x2, y2) in frame pixels.  With motion=sweep and hsweep
videotestsrc also draws thin grid lines (1-2 pixels) in the ball's colour;
they are not the ball: the mask is eroded by a cross of radius 3 (a pixel
stays when the 3 pixels on each side of it, horizontally and vertically, are
covered too, pixels outside the frame counting as not covered), which removes
the lines and shrinks the disk by 3 pixels on each side, and the box of what
is left is grown back by 3.  On a plain background test_detect_ball.py reads
the coverage from the colours (|pixel - background| >= |fg - bg| / 2 on the
channel where foreground and background differ most) and applies the same
rule.
"""
import subprocess

import numpy as np


def argb(rgb, alpha=0xff):
    return f"0x{(alpha << 24) | rgb:08x}"


def _run(cmd, n_bytes):
    data = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=True).stdout
    if len(data) != n_bytes:
        raise RuntimeError(f"{' '.join(cmd)}: got {len(data)} bytes, expected {n_bytes}")
    return np.frombuffer(data, np.uint8)


def ball_props(motion, fg):
    return ["pattern=ball", f"motion={motion}", "animation-mode=frames",
            f"foreground-color={argb(fg)}"]


def render_clip(width, height, n_frames, motion, fg, background):
    """n_frames RGB frames (N, H, W, 3) of the ball over `background`.

    background: ("plain", rgb) for the ball's own background colour,
    ("pattern", [videotestsrc properties]) for a pattern under the ball,
    or ("none", [videotestsrc properties]) for the pattern with no ball.
    """
    kind, what = background
    caps_rgb = f"video/x-raw,format=RGB,width={width},height={height}"
    caps_rgba = f"video/x-raw,format=RGBA,width={width},height={height}"
    n = f"num-buffers={n_frames}"
    if kind == "plain":
        cmd = (["gst-launch-1.0", "-q", "videotestsrc", n] + ball_props(motion, fg)
               + [f"background-color={argb(what)}", "!", caps_rgb, "!", "fdsink", "fd=1"])
    elif kind == "none":
        cmd = (["gst-launch-1.0", "-q", "videotestsrc", n] + list(what)
               + ["!", "videoconvert", "!", caps_rgb, "!", "fdsink", "fd=1"])
    else:
        cmd = (["gst-launch-1.0", "-q", "compositor", "name=c", "background=black", "!",
                caps_rgba, "!", "videoconvert", "!", "video/x-raw,format=RGB", "!",
                "fdsink", "fd=1",
                "videotestsrc", n] + list(what)
               + ["!", "videoconvert", "!", caps_rgba, "!", "c.",
                  "videotestsrc", n] + ball_props(motion, fg)
               + ["background-color=0x00000000", "!", caps_rgba, "!", "c."])
    stride = (width * 3 + 3) & ~3  # GStreamer's RGB rows: 4-byte aligned
    raw = _run(cmd, n_frames * height * stride)
    return raw.reshape(n_frames, height, stride)[:, :, :width * 3].reshape(
        n_frames, height, width, 3)


def ball_alpha(width, height, n_frames, motion):
    """The ball alone, (N, H, W) alpha: how much of each pixel it covers."""
    cmd = (["gst-launch-1.0", "-q", "videotestsrc", f"num-buffers={n_frames}"]
           + ball_props(motion, 0xffffff)
           + ["background-color=0x00000000", "!",
              f"video/x-raw,format=RGBA,width={width},height={height}", "!",
              "fdsink", "fd=1"])
    raw = _run(cmd, n_frames * height * width * 4)
    return raw.reshape(n_frames, height, width, 4)[..., 3]


def box_from_mask(mask):
    """[x1, y1, x2, y2) pixel edges of a boolean (H, W) mask, or None."""
    ys = np.flatnonzero(mask.any(axis=1))
    xs = np.flatnonzero(mask.any(axis=0))
    if not len(xs):
        return None
    return [float(xs[0]), float(ys[0]), float(xs[-1] + 1), float(ys[-1] + 1)]


ERODE = 3


def ball_box(mask):
    """The ball's box from its coverage mask (H, W): erode by a cross of
    radius ERODE (drops the sweep motions' grid lines), box, grow by ERODE."""
    hor = mask.copy()
    ver = mask.copy()
    for s in range(1, ERODE + 1):
        hor[:, s:] &= mask[:, :-s]
        hor[:, :-s] &= mask[:, s:]
        hor[:, :s] = hor[:, -s:] = False
        ver[s:, :] &= mask[:-s, :]
        ver[:-s, :] &= mask[s:, :]
        ver[:s, :] = ver[-s:, :] = False
    box = box_from_mask(hor & ver)
    if box is None:
        return None
    h, w = mask.shape
    return [max(0.0, box[0] - ERODE), max(0.0, box[1] - ERODE),
            min(float(w), box[2] + ERODE), min(float(h), box[3] + ERODE)]


def ball_boxes(width, height, n_frames, motion):
    """The ball's box in each of the first n_frames frames (frame pixels)."""
    alpha = ball_alpha(width, height, n_frames, motion)
    return [ball_box(a >= 128) for a in alpha]


def iou(a, b):
    """Intersection over union of two [x1, y1, x2, y2] boxes."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def average_precision(scores, ious, n_positive, thresh=0.5):
    """VOC-style AP (all points) of one prediction per frame.

    scores: the prediction's score per frame; ious: its IoU with the frame's
    ball (None for a frame without a ball, where the prediction is a false
    positive).  n_positive: frames with a ball.
    """
    order = np.argsort(-np.asarray(scores, np.float64), kind="stable")
    tp = np.array([ious[i] is not None and ious[i] >= thresh for i in order], np.float64)
    fp = 1.0 - tp
    tp, fp = np.cumsum(tp), np.cumsum(fp)
    recall = tp / max(1, n_positive)
    precision = tp / np.maximum(tp + fp, 1e-12)
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[0.0], precision, [0.0]])
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    idx = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]))
