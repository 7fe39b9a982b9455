#!/usr/bin/python3
"""Per-buffer results from Python through the GstHybrid-1.0 typelib (TAP).

Run by meson with GI_TYPELIB_PATH and LD_LIBRARY_PATH naming the build's
gst-plugin/lib/gst/hybrid and GStreamer pointed at the build's plugin:

1. pipelines/print_labels.py --check on known videotestsrc patterns: one line
   per buffer, every top-1 label the pattern's name;
2. in this process, the accessors of a classification (top-k, tensors) and
   of a detection (boxes equal to the GstVideoRegionOfInterestMeta's);
3. a secondary classifier's result on each region (inference-region=roi)
   by the region's index: the colour of each quadrant the detector boxed.
"""
import math
import os
import subprocess
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstHybrid", "1.0")
from gi.repository import Gst, GstHybrid  # noqa: E402

SOURCE = os.environ["HY_SOURCE_DIR"]
MODELS = os.environ["HY_ELEMENT_MODELS"]
results = []


def check(ok, what, detail=""):
    results.append(ok)
    n = len(results)
    print(f"{'ok' if ok else 'not ok'} {n} - {what}")
    if not ok and detail:
        for line in str(detail).splitlines():
            print(f"# {line}")


def print_labels_app():
    patterns = ["smpte", "ball", "red", "snow", "circular"]
    cmd = [sys.executable, os.path.join(SOURCE, "pipelines", "print_labels.py"),
           "--check", "--num-buffers", "4", "--size", "320x240"]
    for p in patterns:
        cmd += ["--pattern", p]
    # The environment already points at the build: no --build-dir guessing.
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = proc.stdout.splitlines()
    check(proc.returncode == 0, "print_labels.py --check exits 0",
          proc.stdout + proc.stderr)
    check(len(lines) == 4 * len(patterns), f"one line per buffer ({len(lines)})",
          proc.stdout)
    expected = [(str(f), p, p) for p in patterns for f in range(4)]
    got = [tuple(line.split()[:3]) for line in lines]
    check(got == expected, "frame, pattern and top-1 label of every buffer",
          "\n".join(" ".join(g) for g in got))


def pull_all(desc):
    """The buffers of a pipeline's appsink 'sink', and its error if any."""
    pipeline = Gst.parse_launch(desc)
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    buffers = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        buffers.append(sample.get_buffer())
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    return buffers, (msg.parse_error()[0].message if msg else None)


def classification_accessors():
    buffers, err = pull_all(
        f"videotestsrc pattern=green num-buffers=3"
        " ! video/x-raw,format=RGB,width=64,height=48"
        f" ! hybridinfer model={MODELS}/colors-symbol.json labels={MODELS}/colors.txt"
        " device=cpu top-k=3 interval=2 ! appsink name=sink sync=false")
    check(err is None and len(buffers) == 3, "colors: 3 buffers", err)
    metas = [GstHybrid.buffer_get_hybrid_tensor_meta(b) for b in buffers]
    check(all(m is not None for m in metas), "every buffer has a meta")
    m = metas[0]
    check(m.get_result_type() == "classification", "type classification",
          m.get_result_type())
    check(m.get_n_top() == 3, "top-k 3", m.get_n_top())
    check(m.get_top_label(0) == "green" and m.get_top_class_id(0) == 4,
          "top-1 green, class 4", f"{m.get_top_label(0)} {m.get_top_class_id(0)}")
    scores = [m.get_top_score(i) for i in range(3)]
    check(scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1,
          "scores best first", scores)
    check(m.get_top_label(3) is None and m.get_top_class_id(3) == -1
          and math.isnan(m.get_top_score(3)), "past top-k: None, -1, NaN")
    check(m.get_n_detections() == 0 and not m.get_detection(0)[0],
          "a classification has no boxes")
    # interval=2: frame 1 carries frame 0's result.
    check([x.get_frame_number() for x in metas] == [0, 0, 2]
          and [x.is_inferred() for x in metas] == [True, False, True],
          "frame numbers and inferred with interval 2",
          [(x.get_frame_number(), x.is_inferred()) for x in metas])
    check(m.get_n_tensors() == 1 and m.get_tensor(1) is None, "one head")
    t = m.get_tensor(0)
    dims = list(t.get_dims())
    data = list(t.get_data())
    check(dims == [1, 9] and len(data) == 9, "head shape (1, 9)", dims)
    check(abs(max(data) - scores[0]) < 1e-6 and data.index(max(data)) == 4,
          "the head's data hold the top score at class 4", data)
    check(m.find_tensor(t.get_name()) is not None
          and m.find_tensor("no-such-head") is None, "find_tensor by name")
    results_struct = m.get_results()
    check(results_struct is not None and results_struct.get_name() == "hybridinfer"
          and results_struct.get_value("label") == "green",
          "results: the hybridinfer structure", results_struct)


def detection_accessors():
    buffers, err = pull_all(
        "videotestsrc pattern=smpte num-buffers=1"
        " ! video/x-raw,format=RGB,width=128,height=96"
        f" ! hybridinfer model={MODELS}/quadrants-symbol.json"
        f" labels={MODELS}/quadrants.txt input-size=64x64 device=cpu"
        " ! appsink name=sink sync=false")
    check(err is None and len(buffers) == 1, "quadrants: 1 buffer", err)
    b = buffers[0]
    m = GstHybrid.buffer_get_hybrid_tensor_meta(b)
    check(m.get_result_type() == "detection" and m.get_n_top() == 0,
          "type detection, no top classes")
    n = m.get_n_detections()
    check(n > 0, f"{n} boxes")
    for i in range(n):
        ok, label, class_id, score, x, y, w, h = m.get_detection(i)
        check(ok and label in ("red", "green", "blue") and class_id >= 0
              and 0 < score <= 1 and w > 0 and h > 0
              and x + w <= 128.01 and y + h <= 96.01,
              f"box {i}: {label} {score:.3f} at {x:.1f},{y:.1f} {w:.1f}x{h:.1f}")
    check(not m.get_detection(n)[0], "past the last box: FALSE")


def region_accessors():
    with open(os.path.join(MODELS, "colors.txt")) as f:
        colors = [line.strip() for line in f if line.strip()]
    buffers, err = pull_all(
        "videotestsrc pattern=smpte num-buffers=1"
        " ! video/x-raw,format=RGB,width=128,height=96"
        f" ! hybridinfer model={MODELS}/quadrants-symbol.json"
        f" labels={MODELS}/quadrants.txt input-size=64x64 threshold=0.6 device=cpu"
        f" ! hybridinfer model={MODELS}/colors-symbol.json labels={MODELS}/colors.txt"
        " input-size=32x32 inference-region=roi device=cpu"
        " ! appsink name=sink sync=false")
    check(err is None and len(buffers) == 1, "quadrants then colors on its boxes", err)
    b = buffers[0]
    m = GstHybrid.buffer_get_hybrid_tensor_meta(b)
    n = GstHybrid.buffer_get_n_hybrid_regions(b)
    check(n == m.get_n_detections() and n > 0, f"{n} regions, one per box")
    for i in range(n):
        label, score = GstHybrid.buffer_get_hybrid_region_label(b, i)
        s = GstHybrid.buffer_get_hybrid_region_result(b, i)
        check(label in colors and 0 < score <= 1 and s is not None
              and s.get_value("type") == "classification"
              and s.get_value("label") == label
              and abs(s.get_value("score") - score) < 1e-7,
              f"region {i}: {label} {score:.3f}, as its hybridinfer structure says")
    label, score = GstHybrid.buffer_get_hybrid_region_label(b, n)
    check(label is None and math.isnan(score)
          and GstHybrid.buffer_get_hybrid_region_result(b, n) is None,
          "past the last region: None, NaN")


def main():
    Gst.init(None)
    print_labels_app()
    classification_accessors()
    detection_accessors()
    region_accessors()
    print(f"1..{len(results)}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
