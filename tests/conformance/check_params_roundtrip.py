#!/usr/bin/env python3
"""Checks that real MXNet 1.9.1 and numpy read what hybridinfer writes.

    check_params_roundtrip.py BUILD_DIR

BUILD_DIR is the meson build directory (the unit-test programs live in
BUILD_DIR/tests).  Each of test-params-io, test-symbol-json and test-npy,
run as `--write-roundtrip DIR`, reads fixtures with our readers and writes
them back with our writers; this script then loads the results:

  params  mx.nd.load(ours.params) (re-written tests/fixtures/params/
          dtypes.params) has the same keys, every array float32 and equal,
          bit for bit, to the values MXNet itself loads from the original
          (tests/fixtures/params/expected/dtypes/*.npy)
  symbol  mx.sym.load() of every re-written tests/fixtures/*/model-symbol.json
          (legacy files included: ours are in 1.9.1 form) lists the same
          arguments, auxiliary states and outputs and the same attributes
          as the original, and MXNet serialises both identically
  npy     numpy.load(ours.npy) gives the expected float32 array, and
          numpy.save of that array writes the same bytes

Run it with the MXNet venv (/root/.cache/hybridinfer/venv/bin/python).
Exits non-zero on any mismatch.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import mxnet as mx

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PARAMS_FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "params")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run_writer(build_dir, program, out_dir):
    exe = os.path.join(build_dir, "tests", program)
    env = dict(os.environ, HY_SOURCE_DIR=SOURCE_DIR)
    res = subprocess.run([exe, "--write-roundtrip", out_dir], env=env,
                         capture_output=True, text=True)
    if res.returncode != 0:
        fail("%s --write-roundtrip failed: %s" % (program, res.stderr.strip()))
    return res.stdout


def same_bits(a, b):
    return (a.shape == b.shape and a.dtype == b.dtype
            and a.tobytes() == b.tobytes())


def check_params(build_dir, tmp):
    run_writer(build_dir, "test-params-io", tmp)
    ours = mx.nd.load(os.path.join(tmp, "ours.params"))
    original = mx.nd.load(os.path.join(PARAMS_FIXTURES, "dtypes.params"))
    if sorted(ours) != sorted(original):
        fail("params keys differ: %s vs %s" % (sorted(ours), sorted(original)))
        return
    for key, nd in ours.items():
        kind, name = key.split(":", 1) if ":" in key else ("plain", key)
        want = np.load(os.path.join(PARAMS_FIXTURES, "expected", "dtypes",
                                    "%s_%s.npy" % (kind, name)))
        got = nd.asnumpy()
        if got.dtype != np.float32:
            fail("params %s: MXNet loads dtype %s, expected float32"
                 % (key, got.dtype))
        elif not same_bits(got, want):
            fail("params %s: values differ" % key)
    print("params: MXNet loaded %d arrays from our file, all equal"
          % len(ours))


def is_legacy(path):
    """Files before MXNet 1.2 (no attrs key, or no mxnet_version)."""
    with open(path) as f:
        version = json.load(f).get("attrs", {}).get("mxnet_version")
    return not version or version[1] < 10200


def normalised_json(sym, legacy):
    """MXNet's own serialisation, less what legitimately differs.

    node_row_ptr depends on the build.  When MXNet upgrades a pre-1.2 file
    it leaves aux-state entries at version 0 (a native 1.9.1 export, like
    ours, marks them 1) and copies the op's attributes onto the aux-state
    variables it creates (ours have none); neither changes the graph.
    """
    d = json.loads(sym.tojson())
    d.pop("node_row_ptr", None)
    if legacy:
        for node in d["nodes"]:
            node["inputs"] = [e[:2] for e in node["inputs"]]
            if node["op"] == "null":
                node.pop("attrs", None)
    return d


def op_attrs(sym, legacy):
    internals = json.loads(sym.tojson())["nodes"]
    ops = {n["name"] for n in internals if n["op"] != "null"}
    return {k: v for k, v in sym.attr_dict().items()
            if not legacy or k in ops}


def check_symbols(build_dir, tmp):
    listing = run_writer(build_dir, "test-symbol-json", tmp)
    pairs = [line.split() for line in listing.splitlines() if line.strip()]
    for original, ours in pairs:
        try:
            a = mx.sym.load(original)
            b = mx.sym.load(ours)
        except mx.base.MXNetError as e:
            fail("%s: MXNet cannot load our rewrite %s: %s"
                 % (original, ours, str(e).strip().splitlines()[-1]))
            continue
        for what in ("list_arguments", "list_auxiliary_states",
                     "list_outputs"):
            if getattr(a, what)() != getattr(b, what)():
                fail("%s: %s differ" % (original, what))
        legacy = is_legacy(original)
        if op_attrs(a, legacy) != op_attrs(b, legacy):
            fail("%s: attributes differ" % original)
        if normalised_json(a, legacy) != normalised_json(b, legacy):
            fail("%s: MXNet serialises our rewrite differently" % original)
    escapes = os.path.join(tmp, "escapes.json")
    try:
        attrs = mx.sym.load(escapes).attr_dict()["d"]
        if attrs.get("key") != 'a\tb\n"q"\\ \u00e9':
            fail("escapes.json: attribute read back as %r" % attrs.get("key"))
    except mx.base.MXNetError as e:
        fail("escapes.json: %s" % str(e).strip().splitlines()[-1])
    print("symbol: MXNet loaded %d rewritten symbol files, all equal"
          % len(pairs))


def check_npy(build_dir, tmp):
    run_writer(build_dir, "test-npy", tmp)
    path = os.path.join(tmp, "ours.npy")
    got = np.load(path)
    want = (np.arange(24, dtype=np.float32) * np.float32(0.5)
            - np.float32(3)).reshape(2, 3, 4)
    if not same_bits(got, want):
        fail("npy: numpy reads %r" % got)
    ref = os.path.join(tmp, "numpy.npy")
    np.save(ref, want)
    with open(path, "rb") as f1, open(ref, "rb") as f2:
        if f1.read() != f2.read():
            fail("npy: our file differs from numpy.save's")
    print("npy: numpy loaded our file; it matches numpy.save byte for byte")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="hy-roundtrip-") as tmp:
        check_params(build_dir, tmp)
        check_symbols(build_dir, tmp)
        check_npy(build_dir, tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all round trips agree with MXNet 1.9.1 / numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
