#!/usr/bin/env python3
"""An int8 export whose convolution ranges change between forwards, with real MXNet 1.9.1.

    gen_int8_ranges.py --from CASE_DIR --out DIR [--stamp FILE]

CASE_DIR is one of gen_int8_fixtures.py's quantize_net_v2 exports (ResNet-18's).  Its first
quantized convolution that runs on oneDNN's fused path in our engine (no residual; data read from,
and output read by, other quantized convolutions only, so the plan holds both as bytes) gets
its data range from two new graph inputs, `range_min` and `range_max`, instead of from the
convolution before it.  DIR receives that symbol, the same params, the image, and MXNet's
outputs for three forwards: the calibrated range, a wider one, the calibrated one again
(forwards.json lists each forward's inputs and output).  The engine makes its fused primitive
for the range of the first forward, so the second must take the other path and the third the
primitive again, each giving MXNet's result (tests/unit/test-int8-ranges.c).

Run it with the MXNet 1.9.1 virtual environment (numpy < 1.24).
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402

# the quantized ops exist only with oneDNN on (gen_int8_fixtures.py says why it is set here)
os.environ["MXNET_MKLDNN_ENABLED"] = "1"

CONV = "_sg_mkldnn_conv"
NEW_INPUTS = ("range_min", "range_max")


def pick_convolution(nodes):
    """-> index of the first convolution whose data comes from a convolution, whose output only
    convolutions read, and which has no residual."""
    readers = {}
    for i, node in enumerate(nodes):
        for src, out, _ in node["inputs"]:
            readers.setdefault((src, out), []).append(i)
    for i, node in enumerate(nodes):
        if node["op"] != CONV or node.get("attrs", {}).get("with_sum") == "true":
            continue
        data_src = node["inputs"][0][0]
        out_readers = readers.get((i, 0), [])
        if (nodes[data_src]["op"] == CONV and out_readers
                and all(nodes[r]["op"] == CONV for r in out_readers)):
            return i
    raise RuntimeError("no quantized convolution between two others without a residual")


def with_range_inputs(graph):
    """-> (the graph with the picked convolution's data range read from two new variables,
    the calibrated range it had, the convolution's name)."""
    nodes = graph["nodes"]
    conv = pick_convolution(nodes)
    # its last two inputs are the data's range without a residual: the producer's outputs 1, 2,
    # whose values are the producer's calibrated range
    (min_src, min_out, _), (max_src, max_out, _) = nodes[conv]["inputs"][-2:]
    if (min_src, min_out, max_out) != (max_src, 1, 2):
        raise RuntimeError("%s: its range is not its producer's outputs 1 and 2"
                           % nodes[conv]["name"])
    attrs = nodes[min_src].get("attrs", {})
    calibrated = (float(attrs["min_calib_range"]), float(attrs["max_calib_range"]))
    # the variables go first, so that every node still reads only nodes before it
    shift = len(NEW_INPUTS)
    new_nodes = [{"op": "null", "name": name, "inputs": []} for name in NEW_INPUTS]
    for node in nodes:
        node = dict(node)
        node["inputs"] = [[src + shift, out, ver] for src, out, ver in node["inputs"]]
        new_nodes.append(node)
    new_nodes[conv + shift]["inputs"][-2:] = [[0, 0, 0], [1, 0, 0]]
    new_graph = dict(graph)
    new_graph["nodes"] = new_nodes
    new_graph["arg_nodes"] = list(range(shift)) + [a + shift for a in graph["arg_nodes"]]
    new_graph["heads"] = [[src + shift, out, ver] for src, out, ver in graph["heads"]]
    new_graph.pop("node_row_ptr", None)  # optional; it counts outputs per node
    return new_graph, calibrated, nodes[conv]["name"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="source", required=True, help="a quantize_net_v2 case dir")
    ap.add_argument("--out", required=True)
    ap.add_argument("--stamp", help="file to touch once the case is complete")
    args = ap.parse_args(argv)
    with open(os.path.join(args.source, gf.SYMBOL_FILE)) as f:
        graph, (lo, hi), conv_name = with_range_inputs(json.load(f))
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    symbol = os.path.join(args.out, gf.SYMBOL_FILE)
    params = os.path.join(args.out, gf.PARAMS_FILE)
    with open(symbol, "w") as f:
        json.dump(graph, f)
    shutil.copyfile(os.path.join(args.source, gf.PARAMS_FILE), params)
    x = np.load(os.path.join(args.source, "input0.npy"))
    np.save(os.path.join(args.out, "data.npy"), x)
    # calibrated, wider (other scales, other bias), calibrated again
    ranges = [(lo, hi), (1.5 * lo, 1.5 * hi), (lo, hi)]
    forwards, outputs = [], []
    for k, (rmin, rmax) in enumerate(ranges):
        inputs = {"data": x, "range_min": np.array([rmin], np.float32),
                  "range_max": np.array([rmax], np.float32)}
        out = gf.run_symbol_files(symbol, params, inputs)[0]
        if not np.all(np.isfinite(out)):
            raise RuntimeError("forward %d: MXNet's output is not finite" % k)
        entry = {"inputs": [{"name": "data", "file": "data.npy"}], "output": "output%d.npy" % k}
        for name in NEW_INPUTS:
            fname = "%s%d.npy" % (name, k)
            np.save(os.path.join(args.out, fname), inputs[name])
            entry["inputs"].append({"name": name, "file": fname})
        np.save(os.path.join(args.out, entry["output"]), out)
        forwards.append(entry)
        outputs.append(out)
    # the check would pass whatever the engine did with the range if it changed nothing
    if np.array_equal(outputs[0], outputs[1]):
        raise RuntimeError("%s: the wider range left MXNet's output unchanged" % conv_name)
    if not np.array_equal(outputs[0], outputs[2]):
        raise RuntimeError("MXNet's outputs for the same inputs differ")
    # the calibrated range as an input computes what the export computed
    if not np.array_equal(outputs[0], np.load(os.path.join(args.source, "output0.npy"))):
        raise RuntimeError("the calibrated range as an input changed MXNet's output")
    gf._atomic_write_text(os.path.join(args.out, "forwards.json"), json.dumps(
        {"convolution": conv_name, "forwards": forwards}, indent=1) + "\n")
    if args.stamp:
        gf._atomic_write_text(args.stamp, conv_name + "\n")
    print("%s: ranges %s of %s" % (args.out, ranges, conv_name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
