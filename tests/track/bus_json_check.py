"""hybridinfer's bus messages read from Debian's stock /usr/bin/python3
(python3-gi): with message-json=true each result message carries, in its
string field `json`, the same JSON object hybridpublish writes for that
buffer.  TAP output.

The camera pipeline (pipelines/camera_app.py) with post-messages=true on the
detector and on the classifier (inference-region=roi) and hybridpublish to a
file, run through Gst.parse_launch; the application reads its bus:

- the classifier's message of each frame (type "regions") holds in `json`
  exactly the file's line of that frame (the same buffer, metas and all:
  boxes, track ids, secondary labels);
- the detector's message of each frame holds its objects as the detector
  left them (no track id yet, no secondary result) with the boxes of the
  file's line;
- python3-gi reads the typed fields next to it (frame-number, type).

Then the detector alone with skip-when-busy=true, whose results come after
their frame has gone on: each of its messages still holds `json`, the
object of the result's own frame (its frame number and timestamp,
inferred) with exactly the objects of the file's lines that carry that
result.

  bus_json_check.py --work DIR   (GST_PLUGIN_PATH or GST_PLUGIN_PATH_1_0 on the plugin)
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pipelines"))
import camera_app  # noqa: E402

try:
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
except (ImportError, ValueError) as e:
    print(f"1..0 # SKIP python3-gi with GStreamer's typelib is not installed ({e})")
    sys.exit(0)

FRAMES = 30


def run(desc):
    """Plays the description to its end: its hybridinfer messages by element
    name and frame, (type, json), and the error if any."""
    pipe = Gst.parse_launch(desc)
    bus = pipe.get_bus()
    pipe.set_state(Gst.State.PLAYING)
    messages = {"detector": {}, "classifier": {}}
    error = None
    while True:
        msg = bus.timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.ELEMENT
                                     | Gst.MessageType.EOS | Gst.MessageType.ERROR)
        if msg is None:
            error = "no EOS within 60 s"
            break
        if msg.type == Gst.MessageType.EOS:
            break
        if msg.type == Gst.MessageType.ERROR:
            error = msg.parse_error()[0].message
            break
        s = msg.get_structure()
        if s.get_name() != "hybridinfer":
            continue
        ok, frame = s.get_uint64("frame-number")
        messages[msg.src.get_name()][frame] = (s.get_string("type"), s.get_string("json"))
    pipe.set_state(Gst.State.NULL)
    return messages, error


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    jsonl = os.path.join(args.work, "bus.jsonl")
    Gst.init(None)
    argv = camera_app.pipeline("gst-launch-1.0", FRAMES, 320, 240, jsonl=jsonl)
    # the description without the program and -q, the two inferring elements
    # posting their results
    on = "post-messages=true message-json=true"
    desc = " ".join(argv[2:]).replace("name=detector", f"name=detector {on}") \
        .replace("name=classifier", f"name=classifier {on}")
    messages, error = run(desc)

    n = 0
    failed = 0

    def check(ok, what):
        nonlocal n, failed
        n += 1
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {n} - {what}", flush=True)

    check(error is None, f"the pipeline ran to its end ({error or 'EOS'})")
    lines = [line.rstrip("\n") for line in open(jsonl)] if os.path.exists(jsonl) else []
    cls = messages["classifier"]
    same = [f for f, (t, j) in cls.items() if t == "regions" and f < len(lines) and j == lines[f]]
    check(len(lines) == FRAMES and len(same) == FRAMES,
          f"the classifier's message `json` is the file's line, byte for byte, on "
          f"{len(same)} of {FRAMES} frames ({len(lines)} lines)")
    det = messages["detector"]
    good = 0
    for f, (t, j) in det.items():
        if t != "detection" or j is None or f >= len(lines):
            continue
        mine, theirs = json.loads(j), json.loads(lines[f])
        boxes = [o["box"] for o in mine["objects"]]
        if boxes == [o["box"] for o in theirs["objects"]] and all(
                o["track-id"] is None and o["secondary"] is None for o in mine["objects"]):
            good += 1
    check(good == FRAMES, f"the detector's message `json`: the file's boxes, before tracking "
          f"and classification, on {good} of {FRAMES} frames")
    secondary = sum(1 for line in lines for o in json.loads(line)["objects"]
                    if o.get("secondary") and o["secondary"].get("label"))
    check(secondary >= FRAMES, f"{secondary} objects with a secondary label in the file")

    # skip-when-busy: every result arrives after its frame went on
    skip_jsonl = os.path.join(args.work, "skip.jsonl")
    desc = (f"videotestsrc pattern=ball num-buffers={FRAMES} "
            "! video/x-raw,format=RGB,width=320,height=240,framerate=30/1 "
            f"! hybridinfer name=detector model={camera_app.DETECTOR} skip-when-busy=true {on} "
            f"! hybridpublish location={skip_jsonl} ! fakesink sync=false")
    messages, error = run(desc)
    check(error is None, f"skip-when-busy: the pipeline ran to its end ({error or 'EOS'})")
    lines = [json.loads(line) for line in open(skip_jsonl)] if os.path.exists(skip_jsonl) else []
    det = messages["detector"]
    with_json = [f for f, (t, j) in det.items() if j is not None]
    check(len(det) >= 2 and len(with_json) == len(det),
          f"skip-when-busy: `json` on {len(with_json)} of {len(det)} messages")
    good = 0
    for f, (t, j) in det.items():
        if j is None:
            continue
        mine = json.loads(j)
        carried = [line for line in lines if line.get("result-frame") == f]
        own = [line for line in lines if line["frame"] == f]
        if (mine["frame"] == f and mine["result-frame"] == f and mine["inferred"]
                and mine["type"] == t and own and mine["timestamp"] == own[0]["timestamp"]
                and carried and all(c["objects"] == mine["objects"] for c in carried)):
            good += 1
    check(good == len(det) and good >= 2,
          f"skip-when-busy: `json` is its result's frame with the objects of the lines "
          f"carrying it, on {good} of {len(det)} messages")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
