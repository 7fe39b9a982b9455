#!/usr/bin/env python3
"""The camera application, end to end: detection, tracking, secondary
classification, overlay, and results published to MQTT and a JSON-lines file.

    videotestsrc pattern=ball ! video/x-raw,format=RGB,...
      ! hybridinfer model=models/ball-symbol.json          (detector: a box per frame)
      ! hybridtrack                                       (a track id per box)
      ! hybridinfer model=models/patterns-symbol.json inference-region=roi
                                                          (classifier on each box)
      ! hybridoverlay                                     (boxes, ids, both labels drawn)
      ! hybridpublish location=OUT.jsonl mqtt-host=... mqtt-topic=...
      ! SINK

Every frame becomes one JSON object (docs/ELEMENT.md, "hybridpublish"): its
objects, each with its box, score, track id and the classifier's result on its
box ("secondary").  The same object goes to the file and to the broker.

Run through pipelines/camera.sh (builds, finds the plugin) or alone with the
plugin on GST_PLUGIN_PATH.  Only the standard library: /usr/bin/python3 runs
it, and tests/track/camera_check.py imports pipeline() from here so that the
test runs this very pipeline.

  camera_app.py [--frames N] [--size WxH] [--motion wavy|sweep|hsweep]
                [--fg 0xAARRGGBB] [--bg 0xAARRGGBB] [--interval N]
                [--jsonl FILE] [--mqtt-host H] [--mqtt-port P] [--mqtt-topic T]
                [--sink 'fakesink sync=false'] [--live]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
DETECTOR = os.path.join(MODELS, "ball-symbol.json")
CLASSIFIER = os.path.join(MODELS, "patterns-symbol.json")
# The detector's label for its boxes (ball-labels.txt): the classifier runs on
# regions of this type only.
OBJECT_CLASS = "ball"


def pipeline(gst_launch="gst-launch-1.0", frames=120, width=320, height=240,
             motion="wavy", fg=0xffffffff, bg=0xff000000, interval=1, live=False,
             jsonl=None, mqtt_host=None, mqtt_port=1883, mqtt_topic="camera/results",
             sink="fakesink sync=false", raw_frames=None, quiet=True):
    """The gst-launch-1.0 command line (a list).  raw_frames: also write the
    source's frames, exactly as the detector gets them, to that file (a tee
    before the detector; the tests compute their references from it)."""
    source = ["videotestsrc", "pattern=ball", f"num-buffers={frames}", f"motion={motion}",
              f"foreground-color={fg:#x}", f"background-color={bg:#x}",
              f"is-live={'true' if live else 'false'}", "!",
              f"video/x-raw,format=RGB,width={width},height={height},framerate=30/1"]
    publish = ["hybridpublish"]
    if jsonl:
        publish.append(f"location={jsonl}")
    if mqtt_host:
        publish += [f"mqtt-host={mqtt_host}", f"mqtt-port={mqtt_port}",
                    f"mqtt-topic={mqtt_topic}"]
    app = ["hybridinfer", "name=detector", f"model={DETECTOR}", f"interval={interval}", "!",
           "hybridtrack", "!",
           "hybridinfer", "name=classifier", f"model={CLASSIFIER}", "inference-region=roi",
           f"object-class={OBJECT_CLASS}", "!",
           "hybridoverlay", "!", *publish, "!", *shlex.split(sink)]
    cmd = [gst_launch] + (["-q"] if quiet else [])
    if raw_frames:
        return cmd + source + ["!", "tee", "name=t", "t.", "!", "queue", "!",
                               "filesink", f"location={raw_frames}", "t.", "!", "queue",
                               "!"] + app
    return cmd + source + ["!"] + app


def describe(obj):
    """One line for one frame's JSON object."""
    parts = []
    for o in obj.get("objects", []):
        sec = o.get("secondary") or {}
        track = o.get("track-id")
        x, y, w, h = o["box"]
        parts.append(f"{o['label']} #{track if track is not None else '-'} "
                     f"{o['score'] if o['score'] is not None else 0:.2f} "
                     f"[{x},{y} {w}x{h}] -> {sec.get('label', '?')} "
                     f"{sec.get('score') or 0:.2f}")
    return f"frame {obj['frame']:5d}  " + ("; ".join(parts) if parts else "no object")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gst-launch", default="gst-launch-1.0")
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--size", default="320x240")
    ap.add_argument("--motion", default="wavy", choices=["wavy", "sweep", "hsweep"])
    ap.add_argument("--fg", type=lambda v: int(v, 0), default=0xffffffff)
    ap.add_argument("--bg", type=lambda v: int(v, 0), default=0xff000000)
    ap.add_argument("--interval", type=int, default=1)
    ap.add_argument("--jsonl", default="/tmp/hybridinfer-camera.jsonl")
    ap.add_argument("--mqtt-host")
    ap.add_argument("--mqtt-port", type=int, default=1883)
    ap.add_argument("--mqtt-topic", default="camera/results")
    ap.add_argument("--sink", default="fakesink sync=false")
    ap.add_argument("--live", action="store_true")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    cmd = pipeline(args.gst_launch, args.frames, width, height, args.motion, args.fg,
                   args.bg, args.interval, args.live, args.jsonl, args.mqtt_host,
                   args.mqtt_port, args.mqtt_topic, args.sink, quiet=False)
    print("==", " ".join(shlex.quote(c) for c in cmd), flush=True)
    rc = subprocess.run(cmd).returncode
    if rc:
        return rc
    with open(args.jsonl) as f:
        for line in f:
            print("  ", describe(json.loads(line)))
    print(f"== every frame's objects in {args.jsonl}"
          + (f" and on mqtt://{args.mqtt_host}:{args.mqtt_port}/{args.mqtt_topic}"
             if args.mqtt_host else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
