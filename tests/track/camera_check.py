"""The camera application end to end (pipelines/camera_app.py), checked on
every frame against references that do not come from our code.  TAP output.

The pipeline: the ball detector, hybridtrack, the patterns classifier on each
box (hybridinfer inference-region=roi), hybridoverlay, hybridpublish to a real
MQTT broker on localhost (Debian's mosquitto, started here) and to a
JSON-lines file.  A tee before the detector writes the source's frames to a
file, from which the references come:

- objects: one ball per frame, its box against the ball's true box computed
  from the frame's pixels (pipelines/test_detect_ball.py's rule);
- track ids: one ball, one track: no id while the track is tentative
  (min-hits), then the same id on every later frame;
- secondary results: the region's crop (the box the JSON gives, clamped to
  the frame) preprocessed as the element does (pipelines/patterns_frames.py)
  and run through real MXNet 1.9.1: the same label and class, scores within
  1e-4;
- MQTT: every message a subscriber got is the file's line of that frame,
  byte for byte, and from the first message on none is missing (the first
  frames may go before the client's connection is up: docs/ELEMENT.md).

  camera_check.py --gst-launch gst-launch-1.0 --work DIR   (the reference venv's python)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PIPELINES = os.path.join(HERE, "..", "..", "pipelines")
sys.path.insert(0, PIPELINES)
sys.path.insert(0, HERE)
import camera_app  # noqa: E402
import mqtt_check  # noqa: E402
import patterns_frames  # noqa: E402
from test_detect_ball import iou, true_box  # noqa: E402

# (width, height, motion, foreground, background, frames): the default ball,
# and another size, motion and pair of colours.
CASES = [
    (320, 240, "wavy", 0xffffff, 0x000000, 60),
    (256, 192, "hsweep", 0xff0000, 0x808080, 40),
]
MIN_HITS = 3            # hybridtrack's default
SCORE_TOL = 1e-4
# Below this gap between the two best classes a crop's label may flip on
# float rounding; the scores are still compared.
LABEL_MARGIN = 1e-3


def load_classifier():
    import mxnet as mx
    sidecar = json.load(open(os.path.join(PIPELINES, "models", "patterns-model.json")))
    labels = [line.strip() for line in
              open(os.path.join(PIPELINES, "models", "patterns-labels.txt")) if line.strip()]
    net = mx.gluon.SymbolBlock.imports(
        camera_app.CLASSIFIER, ["data"],
        os.path.join(PIPELINES, "models", "patterns-0000.params"))

    def classify(crops):
        """crops: (h, w, 3) uint8 arrays -> (n, classes) probabilities."""
        out_w, out_h = sidecar["input_size"]
        pixels = np.stack([
            np.stack([patterns_frames.bilinear(
                c[:, :, ch], patterns_frames.sample_table(out_h, c.shape[0], c.shape[0] / out_h),
                patterns_frames.sample_table(out_w, c.shape[1], c.shape[1] / out_w))
                for ch in range(3)]) for c in crops])
        x = patterns_frames.normalise(pixels, sidecar["mean"], sidecar["std"], 1.0 / 255.0)
        return net(mx.nd.array(x)).asnumpy()

    return classify, labels


def frames_of(raw, w, h, n):
    stride = (w * 3 + 3) & ~3
    data = open(raw, "rb").read()
    if len(data) != stride * h * n:
        raise RuntimeError(f"{raw}: {len(data)} bytes, expected {n} frames")
    return stride, [data[i * stride * h:(i + 1) * stride * h] for i in range(n)]


def check_case(tap, args, case, classify, labels, broker_port):
    w, h, motion, fg, bg, n = case
    name = f"{w}x{h} {motion} 0x{fg:06x} on 0x{bg:06x}"
    tag = f"{w}x{h}-{motion}"
    raw = os.path.join(args.work, f"{tag}.rgb")
    jsonl = os.path.join(args.work, f"{tag}.jsonl")
    topic = f"camera/{tag}"
    sub = mqtt_check.Subscriber(broker_port, topic, os.path.join(args.work, f"{tag}-sub.txt"))
    cmd = camera_app.pipeline(args.gst_launch, n, w, h, motion, 0xff000000 | fg,
                              0xff000000 | bg, live=True, jsonl=jsonl,
                              mqtt_host="127.0.0.1", mqtt_port=broker_port, mqtt_topic=topic,
                              raw_frames=raw)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    time.sleep(0.3)
    got = sub.stop()
    tap.check(res.returncode == 0, f"{name}: the pipeline ran ({' '.join(cmd)})"
              + ("" if res.returncode == 0 else f"\n# {res.stdout[-2000:]}{res.stderr[-2000:]}"))
    if res.returncode:
        return
    lines = [line.rstrip("\n") for line in open(jsonl)]
    objs = [json.loads(line) for line in lines]
    stride, frames = frames_of(raw, w, h, n)
    tap.check(len(objs) == n and [o["frame"] for o in objs] == list(range(n)),
              f"{name}: the file has a line per frame ({len(objs)} of {n})")

    # objects: one ball per frame where the ball is
    ious, bad = [], []
    for i, o in enumerate(objs[:n]):
        truth = true_box(frames[i], w, h, stride, fg, bg)
        ob = o["objects"]
        if len(ob) != 1 or ob[0]["label"] != "ball" or ob[0]["class-id"] != 0 \
                or not ob[0]["score"] >= 0.5 or truth is None:
            bad.append(i)
            ious.append(0.0)
            continue
        x, y, bw, bh = ob[0]["box"]
        ious.append(iou(truth, [x, y, x + bw, y + bh]))
    good = sum(v >= 0.5 for v in ious)
    mean = sum(ious) / max(len(ious), 1)
    tap.check(not bad and good >= 0.9 * n and mean >= 0.7,
              f"{name}: one ball object on every frame (frames without: {bad}), "
              f"IoU with the true box >= 0.5 on {good}/{n}, mean {mean:.3f}")

    # track ids: tentative for the first min-hits - 1 frames, then one id
    ids = [o["objects"][0]["track-id"] if o["objects"] else "none" for o in objs]
    tap.check(ids[:MIN_HITS - 1] == [None] * (MIN_HITS - 1)
              and all(t == 1 for t in ids[MIN_HITS - 1:])
              and not any(o["objects"][0]["predicted"] for o in objs if o["objects"]),
              f"{name}: track ids {ids[:MIN_HITS + 1]}...: none while tentative, "
              f"then 1 on every frame")

    # secondary: the classifier's MXNet output on the same crops
    crops, where = [], []
    for i, o in enumerate(objs):
        img = np.frombuffer(frames[i], np.uint8).reshape(h, stride)[:, :w * 3].reshape(h, w, 3)
        for k, ob in enumerate(o["objects"]):
            x, y, bw, bh = ob["box"]
            x0, y0 = min(max(x, 0), w), min(max(y, 0), h)
            x1, y1 = min(x + bw, w), min(y + bh, h)
            if x1 > x0 and y1 > y0:
                crops.append(img[y0:y1, x0:x1])
                where.append((i, k))
    probs = classify(crops) if crops else np.zeros((0, len(labels)))
    wrong, worst = [], 0.0
    for (i, k), p in zip(where, probs):
        sec = objs[i]["objects"][k].get("secondary")
        order = np.argsort(-p)
        best = int(order[0])
        if not sec or sec.get("type") != "classification":
            wrong.append((i, "no secondary result"))
            continue
        clear = p[order[0]] - p[order[1]] >= LABEL_MARGIN
        if clear and (sec["class-id"] != best or sec["label"] != labels[best]):
            wrong.append((i, f"{sec['label']} but MXNet {labels[best]}"))
        diffs = [abs(sec["score"] - p[sec["class-id"]])]
        classes = sec.get("classes") or []
        if not classes or classes[0]["class-id"] != sec["class-id"]:
            wrong.append((i, f"top classes {classes} do not start with the label"))
        for c in classes:
            diffs.append(abs(c["score"] - p[c["class-id"]]))
            if c["label"] != labels[c["class-id"]]:
                wrong.append((i, f"class {c['class-id']} labelled {c['label']}"))
        worst = max(worst, max(diffs))
    missing = [i for i, o in enumerate(objs)
               if any(ob.get("secondary") is None for ob in o["objects"])]
    seen = sorted({objs[i]["objects"][k]["secondary"]["label"] for i, k in where
                   if objs[i]["objects"][k].get("secondary")})
    tap.check(crops and not wrong and not missing and worst <= SCORE_TOL,
              f"{name}: secondary label of {len(crops)} regions equal MXNet's on the same "
              f"crops (labels {seen}), scores within {worst:.2g}; wrong {wrong[:5]}, "
              f"frames without a secondary result {missing[:5]}")

    # MQTT: the file's lines, none missing after the first
    frames_got = [json.loads(m)["frame"] for m in got]
    same = all(0 <= f < len(lines) and m == lines[f] for m, f in zip(got, frames_got))
    contiguous = frames_got == list(range(frames_got[0], n)) if frames_got else False
    tap.check(same and contiguous and len(got) >= n - 15,
              f"{name}: {len(got)} MQTT messages, frames {frames_got[:1]}..{frames_got[-1:]}, "
              "each byte for byte its frame's line of the file, none missing after the first")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gst-launch", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not all(shutil.which(p) for p in ("mosquitto", "mosquitto_sub", "mosquitto_pub")):
        print("1..0 # SKIP mosquitto, mosquitto_sub and mosquitto_pub are not installed "
              "(tools/setup.sh test)")
        return 0
    os.makedirs(args.work, exist_ok=True)
    classify, labels = load_classifier()
    tap = mqtt_check.Tap()
    port = mqtt_check.free_port()
    broker = mqtt_check.Broker(port)
    broker.start()
    try:
        for case in CASES:
            check_case(tap, args, case, classify, labels, port)
    finally:
        broker.kill()
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
