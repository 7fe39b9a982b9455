#!/usr/bin/env python3
"""The shipped ball detector: real MXNet 1.9.1 against hybridinfer (TAP).

For each case, one gst-launch-1.0 run sends GStreamer's frames through a tee:
into the hybridinfer element (`model=` alone: the sidecar gives the rest;
threshold=0 so the row is always reported, `-m` prints its bus message) and
into a file of the raw frames.  The same frames are pre-processed in numpy
(patterns_frames.py: the element's resize, YUV conversion and normalisation
re-done) and run by MXNet on the exported files; its row [class_id, score,
x1, y1, x2, y2] is mapped to frame pixels as the element maps boxes
(x * frame_width / 96, clamped to the frame) and must equal the element's
class, score and box within 1e-4 * max(1, |value|).  The same tensors go
through `hybridinfer run` too, whose output must match MXNet's within 1e-4.

  ~/.cache/hybridinfer/venv/bin/python pipelines/verify_ball_detector.py --build build
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import patterns_frames as pf  # noqa: E402
import train_ball_detector as tb  # noqa: E402

MODELS = os.path.join(HERE, "models")
SYMBOL = os.path.join(MODELS, "ball-symbol.json")
PARAMS = os.path.join(MODELS, "ball-0000.params")
TOL = 1e-4

# name, width, height, format, source (gst-launch words ending in raw video)
BALL = "videotestsrc pattern=ball num-buffers={n}"
CASES = [
    ("default-320x240-rgb", 320, 240, "RGB", BALL),
    ("sweep-640x480-i420-bt601", 640, 480, "I420",
     BALL + " motion=sweep foreground-color=0xffffff00 background-color=0xff000080"),
    ("hsweep-1280x720-i420-bt709", 1280, 720, "I420",
     BALL + " motion=hsweep foreground-color=0xffff0000 background-color=0xff808080"),
    ("over-smpte-256x192-rgb", 256, 192, "RGB",
     "compositor name=c background=black ! video/x-raw,format=RGBA,width=256,height=192"
     " ! videoconvert ! video/x-raw,format=RGB"
     " ! {tail}"
     " videotestsrc pattern=smpte num-buffers={n} ! videoconvert"
     " ! video/x-raw,format=RGBA,width=256,height=192 ! c."
     " videotestsrc pattern=ball num-buffers={n} background-color=0x00000000"
     " foreground-color=0xff00ffff ! video/x-raw,format=RGBA,width=256,height=192 ! c."),
    ("no-ball-circular-320x240-rgb", 320, 240, "RGB",
     "videotestsrc pattern=circular num-buffers={n}"),
]
N_FRAMES = 4
MESSAGE = re.compile(r"hybridinfer, frame-number=\(guint64\)(\d+),.*?count=\(int\)(\d+),"
                     r".*?class-ids=\(int\)< (-?\d+) >, scores=\(float\)< ([-0-9.e+]+) >, "
                     r"boxes=\(float\)< < \(float\)([-0-9.e+]+), \(float\)([-0-9.e+]+), "
                     r"\(float\)([-0-9.e+]+), \(float\)([-0-9.e+]+) > >")


def element_run(case, tmp):
    """(raw frames, {frame: (class, score, x, y, w, h)}) of one case."""
    name, w, h, fmt, source = case
    raw = os.path.join(tmp, name + ".raw")
    tail = (f"tee name=t ! queue ! hybridinfer model={SYMBOL} post-messages=true "
            f"threshold=0 device=cpu ! fakesink t. ! queue ! filesink location={raw}")
    if "{tail}" in source:
        desc = source.format(n=N_FRAMES, tail=tail)
        desc = desc.replace("video/x-raw,format=RGB ! ", f"video/x-raw,format={fmt} ! ", 1)
    else:
        desc = (source.format(n=N_FRAMES)
                + f" ! video/x-raw,format={fmt},width={w},height={h} ! " + tail)
    out = subprocess.run(["gst-launch-1.0", "-m"] + desc.split(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=120)
    if out.returncode:
        raise RuntimeError(f"gst-launch-1.0 -m {desc}:\n{out.stdout[-3000:]}")
    rows = {}
    for m in MESSAGE.finditer(out.stdout):
        rows[int(m.group(1))] = tuple(float(v) for v in m.group(3, 4, 5, 6, 7, 8))
    size = pf.frame_layout(fmt, w, h)[2]
    data = np.fromfile(raw, np.uint8)
    if len(data) != size * N_FRAMES:
        raise RuntimeError(f"{raw}: {len(data)} bytes, expected {N_FRAMES} frames of {size}")
    return [data[i * size:(i + 1) * size] for i in range(N_FRAMES)], rows


_NET = []


def mxnet_rows(x):
    import warnings

    import mxnet as mx
    if not _NET:
        with warnings.catch_warnings():  # "Cannot decide type for ... data"
            warnings.simplefilter("ignore", UserWarning)
            _NET.append(mx.gluon.SymbolBlock.imports(SYMBOL, ["data"], PARAMS))
    return _NET[0](mx.nd.array(x)).asnumpy()[:, 0, :]


def cli_rows(tool, x):
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "x.npy"), x)
        subprocess.run([tool, "run", "--model", SYMBOL, "--input",
                        "data=" + os.path.join(tmp, "x.npy"),
                        "--output-dir", os.path.join(tmp, "out")], check=True)
        return np.load(os.path.join(tmp, "out", "output0.npy"))[:, 0, :]


def close(a, b):
    return abs(a - b) <= TOL * max(1.0, abs(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    if "GST_PLUGIN_PATH_1_0" not in os.environ:
        os.environ["GST_PLUGIN_PATH"] = os.path.join(args.build, "gst-plugin")
    print(f"1..{len(CASES) + 1}")
    failed = 0
    tensors = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, case in enumerate(CASES, 1):
            name, w, h, fmt, _ = case
            try:
                frames, rows = element_run(case, tmp)
                x = pf.normalise(np.stack([pf.resample(f, fmt, w, h, tb.INPUT_W, tb.INPUT_H)
                                           for f in frames]), tb.MEAN, tb.STD, tb.SCALE)
                tensors.append(x)
                ref = mxnet_rows(x)
                worst, bad = 0.0, []
                for i, r in enumerate(ref):
                    sx, sy = w / tb.INPUT_W, h / tb.INPUT_H
                    x1 = min(max(r[2] * sx, 0.0), w)
                    y1 = min(max(r[3] * sy, 0.0), h)
                    x2 = min(max(r[4] * sx, x1), w)
                    y2 = min(max(r[5] * sy, y1), h)
                    want = (r[0], r[1], x1, y1, x2 - x1, y2 - y1)
                    got = rows.get(i)
                    if got is None:
                        bad.append(f"frame {i}: no box from the element")
                        continue
                    worst = max(worst, max(abs(g - e) / max(1.0, abs(e))
                                           for g, e in zip(got, want)))
                    if not all(close(g, e) for g, e in zip(got, want)):
                        bad.append(f"frame {i}: element {got}, mxnet {want}")
                    print(f"# {name} frame {i}: score {r[1]:.4f} box "
                          f"[{want[2]:.1f}, {want[3]:.1f}, {want[4]:.1f}, {want[5]:.1f}]"
                          f" (frame pixels, x y w h)")
                for line in bad:
                    print("# " + line)
                print(f"{'not ok' if bad else 'ok'} {k} - {name}: {len(ref)} frames, "
                      f"element vs MXNet max rel diff {worst:.1e}")
                failed += bool(bad)
            except Exception as e:  # noqa: BLE001 -- a TAP failure
                print(f"not ok {k} - {name}: {e}")
                failed += 1
    x = np.concatenate(tensors) if tensors else np.zeros((1, 3, tb.INPUT_H, tb.INPUT_W), np.float32)
    ref = mxnet_rows(x)
    ours = cli_rows(os.path.join(args.build, "tools", "hybridinfer"), x)
    err = float(np.abs(ours - ref).max() / max(1.0, np.abs(ref).max()))
    ok = err <= TOL
    print(f"{'ok' if ok else 'not ok'} {len(CASES) + 1} - hybridinfer run vs MXNet on "
          f"{len(x)} tensors: max rel diff {err:.1e}")
    failed += not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
