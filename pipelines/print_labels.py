#!/usr/bin/python3
"""Prints the top-1 label hybridinfer attached to every buffer, from Python.

    videotestsrc pattern=P num-buffers=N ! video/x-raw,WxH ! videoconvert
      ! hybridinfer (the shipped patterns model) ! appsink

Each buffer's result is read through the GstHybrid-1.0 typelib
(libgsthybridmeta-1.0, gst-plugin/lib/gst/hybrid), not from bus messages: the
application gets the result of exactly the frame it holds.  One line per
buffer:

    FRAME PATTERN LABEL SCORE

Run on a build tree with --build-dir (default: build beside this directory
when the typelib is neither installed nor on GI_TYPELIB_PATH), which points
GStreamer at the plugin and introspection at the typelib and its library.
After `meson install` nothing is needed but GST_PLUGIN_PATH for a prefix
GStreamer does not search (docs/ELEMENT.md, "Installing").  Uses Debian's
python3-gi.

Exits 1 when a buffer has no result, and with --check when a label differs
from the pattern's name.
"""
import argparse
import os
import sys

import gi

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")

# `model` alone: the input size, preprocessing and labels come from the
# model's sidecar, models/patterns-model.json (docs/ELEMENT.md).
PATTERNS_INFER = f"hybridinfer model={MODELS}/patterns-symbol.json"


def use_build_dir(build_dir):
    """Points GStreamer and GObject introspection at an uninstalled build."""
    plugin_dir = os.path.join(build_dir, "gst-plugin")
    lib_dir = os.path.join(build_dir, "gst-plugin", "lib", "gst", "hybrid")
    if not os.path.isdir(plugin_dir) or not os.path.isdir(lib_dir):
        sys.exit(f"print_labels: {build_dir} is not a hybridinfer build "
                 "(no gst-plugin/ or gst-plugin/lib/gst/hybrid/)")
    # Before Gst.init(), which scans the plugin path.
    path = os.environ.get("GST_PLUGIN_PATH")
    os.environ["GST_PLUGIN_PATH"] = plugin_dir + (":" + path if path else "")
    gi.require_version("GIRepository", "2.0")
    from gi.repository import GIRepository
    repo = GIRepository.Repository.get_default()
    repo.prepend_search_path(lib_dir)
    # The typelib names libgsthybridmeta-1.0.so.0; dlopen() finds it here.
    repo.prepend_library_path(lib_dir)


def typelib_found():
    """Whether GstHybrid-1.0 is installed or on GI_TYPELIB_PATH."""
    gi.require_version("GIRepository", "2.0")
    from gi.repository import GIRepository
    return bool(GIRepository.Repository.get_default().enumerate_versions("GstHybrid"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pattern", action="append",
                    help="videotestsrc pattern (repeatable; default: smpte, ball, red)")
    ap.add_argument("--num-buffers", type=int, default=5, help="frames per pattern")
    ap.add_argument("--size", default="320x240", help="frame size WxH")
    ap.add_argument("--format", default="RGB", help="video format into videoconvert's sink")
    ap.add_argument("--device", default="cpu", help="hybridinfer's device")
    ap.add_argument("--build-dir",
                    help="an uninstalled build (default: ../build unless GstHybrid-1.0 is installed)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every label names the pattern")
    args = ap.parse_args()

    build_dir = args.build_dir
    if build_dir is None and not typelib_found():
        # Not installed and no GI_TYPELIB_PATH: the build beside us.
        build_dir = os.path.join(HERE, "..", "build")
    if build_dir:
        use_build_dir(build_dir)

    gi.require_version("Gst", "1.0")
    gi.require_version("GstHybrid", "1.0")
    from gi.repository import GLib, Gst, GstHybrid

    Gst.init(None)
    width, height = (int(v) for v in args.size.split("x"))
    wrong = 0
    for pattern in args.pattern or ["smpte", "ball", "red"]:
        try:
            pipeline = Gst.parse_launch(
                f"videotestsrc pattern={pattern} num-buffers={args.num_buffers}"
                f" ! video/x-raw,format={args.format},width={width},height={height}"
                f" ! videoconvert ! {PATTERNS_INFER} device={args.device}"
                " ! appsink name=sink sync=false max-buffers=4")
        except GLib.Error as e:
            print(f"print_labels: {pattern}: {e.message}", file=sys.stderr)
            return 1
        sink = pipeline.get_by_name("sink")
        pipeline.set_state(Gst.State.PLAYING)
        n = 0
        while True:
            sample = sink.emit("pull-sample")
            if sample is None:
                break
            meta = GstHybrid.buffer_get_hybrid_tensor_meta(sample.get_buffer())
            if meta is None or meta.get_n_top() == 0:
                print(f"print_labels: buffer {n} of {pattern} has no classification",
                      file=sys.stderr)
                pipeline.set_state(Gst.State.NULL)
                return 1
            label = meta.get_top_label(0)
            print(f"{meta.get_frame_number():5d} {pattern:<14} {label:<14}"
                  f" {meta.get_top_score(0):.3f}", flush=True)
            wrong += label != pattern
            n += 1
        # EOS or an error: say which, stopping either way.
        msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
        pipeline.set_state(Gst.State.NULL)
        if msg is not None:
            err, debug = msg.parse_error()
            print(f"print_labels: {pattern}: {err.message}", file=sys.stderr)
            return 1
        if n != args.num_buffers:
            print(f"print_labels: {pattern}: {n} buffers, expected {args.num_buffers}",
                  file=sys.stderr)
            return 1
    if args.check and wrong:
        print(f"print_labels: {wrong} labels differ from their pattern", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
