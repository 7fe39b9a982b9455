#!/usr/bin/env python3
"""The ball detector's boxes follow the ball (TAP).

For a few `videotestsrc pattern=ball` settings (motion, colours, frame size),
one gst-launch-1.0 run sends the frames through a tee: one branch into
`hybridinfer model=pipelines/models/ball-symbol.json post-messages=true`
(gst-launch -m prints its bus messages: the box of every frame's region of
interest, frame pixels), the other into a file of raw RGB frames.  The ball's
true box is computed from each of those frames (pixels the ball covers at
least half: |pixel - background| >= |foreground - background| / 2 on the
channel where the two colours differ most, less the thin grid lines the sweep
motions draw; the rule ball_frames.py uses on the ball's alpha) and compared
with the element's box.

Passes when, for every setting, the element gives one box per frame and at
least 90 % of frames have IoU >= 0.5 (and the mean IoU is at least 0.7).
The expected boxes come from the frames alone, never from our engine.

Needs only gst-launch-1.0 and the plugin on GST_PLUGIN_PATH (or the
GST_PLUGIN_PATH_1_0 the test suite sets); no numpy, no MXNet:
  GST_PLUGIN_PATH=build/gst-plugin /usr/bin/python3 pipelines/test_detect_ball.py
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "models", "ball-symbol.json")

# (width, height, motion, foreground, background, frames)
CASES = [
    (320, 240, "wavy", 0xffffff, 0x000000, 60),    # the default ball
    (640, 480, "sweep", 0xffff00, 0x000080, 40),
    (256, 192, "hsweep", 0xff0000, 0x808080, 40),
    (400, 300, "wavy", 0x000000, 0x00ff00, 40),
]
MIN_FRACTION = 0.9
MIN_MEAN_IOU = 0.7

BOX = re.compile(r"hybridinfer, frame-number=\(guint64\)(\d+),.*?type=\(string\)detection, "
                 r"count=\(int\)(\d+)(.*)")
FLOAT = re.compile(r"\(float\)([-0-9.e+]+)")


def rgb(c):
    return (c >> 16 & 255, c >> 8 & 255, c & 255)


ERODE = 3


def true_box(frame, width, height, stride, fg, bg):
    """[x1, y1, x2, y2) of the ball: the pixels it covers at least half, eroded
    by a cross of radius 3 (drops the thin grid lines that motion=sweep and
    hsweep draw), boxed, the box grown by 3: ball_frames.ball_box's rule.
    Each row's mask is an integer, pixel x at bit x."""
    fgc, bgc = rgb(fg), rgb(bg)
    ch = max(range(3), key=lambda c: abs(fgc[c] - bgc[c]))
    span = abs(fgc[ch] - bgc[ch])
    table = bytes(ord("1") if 2 * abs(v - bgc[ch]) >= span else ord("0")
                  for v in range(256))
    rows = []
    for y in range(height):
        bits = frame[y * stride + ch:y * stride + width * 3:3].translate(table)
        rows.append(int(bits[::-1], 2))
    x1 = y1 = 1 << 30
    x2 = y2 = -1
    for y in range(ERODE, height - ERODE):
        m = rows[y]
        if not m:
            continue
        hor = m
        for s in range(1, ERODE + 1):
            hor &= (m >> s) & (m << s)
        ver = m
        for s in range(1, ERODE + 1):
            ver &= rows[y - s] & rows[y + s]
        e = hor & ver & ~(((1 << ERODE) - 1)) & ((1 << (width - ERODE)) - 1)
        if e:
            y1, y2 = min(y1, y), y + 1
            x1 = min(x1, (e & -e).bit_length() - 1)
            x2 = max(x2, e.bit_length())
    if x2 < 0:
        return None
    return [max(0, x1 - ERODE), max(0, y1 - ERODE),
            min(width, x2 + ERODE), min(height, y2 + ERODE)]


def iou(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def run_case(gst_launch, model, case, tmp):
    w, h, motion, fg, bg, n = case
    raw = os.path.join(tmp, f"frames-{w}x{h}-{motion}.rgb")
    cmd = [gst_launch, "-m", "videotestsrc", "pattern=ball", f"num-buffers={n}",
           f"motion={motion}", f"foreground-color=0x{0xff000000 | fg:08x}",
           f"background-color=0x{0xff000000 | bg:08x}", "!",
           f"video/x-raw,format=RGB,width={w},height={h}", "!", "tee", "name=t",
           "!", "queue", "!", "hybridinfer", f"model={model}", "post-messages=true",
           "device=cpu", "!", "fakesink",
           "t.", "!", "queue", "!", "filesink", f"location={raw}"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}")
    found = {}
    for line in out.stdout.splitlines():
        m = BOX.search(line)
        if m:
            boxes_part = m.group(3).split("boxes=", 1)[-1] if int(m.group(2)) else ""
            vals = [float(v) for v in FLOAT.findall(boxes_part)]
            found[int(m.group(1))] = (int(m.group(2)), vals[:4])
    stride = (w * 3 + 3) & ~3
    data = open(raw, "rb").read()
    if len(data) != stride * h * n:
        raise RuntimeError(f"{raw}: {len(data)} bytes, expected {n} frames")
    results = []
    for i in range(n):
        truth = true_box(data[i * stride * h:(i + 1) * stride * h], w, h, stride, fg, bg)
        count, box = found.get(i, (0, []))
        if truth is None:
            raise RuntimeError(f"frame {i}: no ball in the frame")
        if count != 1:
            results.append((i, truth, None, 0.0))
            continue
        x, y, bw, bh = box
        pred = [x, y, x + bw, y + bh]
        results.append((i, truth, pred, iou(truth, pred)))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gst-launch", default="gst-launch-1.0")
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--verbose", action="store_true", help="every frame's boxes")
    args = ap.parse_args()
    print(f"1..{len(CASES)}")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, case in enumerate(CASES, 1):
            w, h, motion, fg, bg, n = case
            name = f"{w}x{h} motion={motion} ball 0x{fg:06x} on 0x{bg:06x}, {n} frames"
            try:
                results = run_case(args.gst_launch, args.model, case, tmp)
            except Exception as e:  # noqa: BLE001 -- reported as a TAP failure
                print(f"not ok {k} - {name}: {e}")
                failed += 1
                continue
            ious = [r[3] for r in results]
            good = sum(v >= 0.5 for v in ious)
            mean = sum(ious) / len(ious)
            ok = good >= MIN_FRACTION * len(ious) and mean >= MIN_MEAN_IOU
            for i, truth, pred, v in results:
                if args.verbose or v < 0.5:
                    p = "no box" if pred is None else "[" + ", ".join(f"{c:.1f}" for c in pred) + "]"
                    print(f"# frame {i:3d}: ball {truth}  element {p}  IoU {v:.3f}")
            print(f"{'ok' if ok else 'not ok'} {k} - {name}: IoU >= 0.5 on {good}/{len(ious)} "
                  f"frames, mean IoU {mean:.3f}, min {min(ious):.3f}")
            failed += not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
