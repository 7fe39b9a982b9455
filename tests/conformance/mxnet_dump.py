#!/usr/bin/env python3
"""Dump every layer's output from real MXNet 1.9.1, in hybridinfer's dump format.

    mxnet_dump.py --model M-symbol.json [--params P] --input NAME=FILE.npy ... --out DIR

Writes DIR/NNNN_<node>[_outK].npy for every output of every op node and DIR/index.json, exactly
as `hybridinfer run --mode imperative --dump-dir DIR` does, so that

    hybridinfer diff OUR_DUMP DIR

names the first layer where we and MXNet part ways.  NNNN is the node's index in the symbol
file's "nodes" list, which is the index our loader gives it; variables are not dumped.

MXNet runs on the CPU in inference mode (is_train=False) with its own kernels, not oneDNN's,
the same choice gen_fixtures.py makes for the reference outputs and the semantics hybridinfer
implements.  The two differ beyond rounding only on NaN/Inf inputs: MXNet's own relu keeps NaN
where oneDNN's Activation(relu) (and the relu/relu6 it fuses into convolutions) gives 0, and its
softmax over a row holding a NaN or an Inf is NaN throughout where oneDNN's last-axis softmax
gives NaN at those positions and 0 elsewhere.  --onednn dumps what the wheel's default oneDNN
kernels compute instead, op by op (no oneDNN graph fusion), to tell such a difference from a
real one.  Run it with the MXNet 1.9.1
venv (numpy < 1.24).  --params defaults to the newest prefix-NNNN.params beside the model.
"""

import argparse
import glob
import json
import os
import re
import sys

# Must be set before mxnet is imported (see gen_fixtures.py).
if "--onednn" not in sys.argv:
    os.environ["MXNET_MKLDNN_ENABLED"] = "0"
else:
    # oneDNN's kernels op by op: its graph partitioning fuses nodes away (a layer dump needs
    # each of them) and cannot bind the internals of a graph with BatchNorm at all.
    os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
import numpy as np  # noqa: E402
import mxnet as mx  # noqa: E402


def fail(message):
    sys.stderr.write("mxnet_dump.py: error: %s\n" % message)
    sys.exit(2)


def newest_params(symbol_path):
    """The newest prefix-NNNN.params beside prefix-symbol.json, as hybridinfer picks it."""
    if not symbol_path.endswith("-symbol.json"):
        return None
    prefix = symbol_path[:-len("-symbol.json")]
    found = sorted(p for p in glob.glob(glob.escape(prefix) + "-*.params")
                   if re.fullmatch(r"\d{4}", p[len(prefix) + 1:-len(".params")]))
    return found[-1] if found else None


def split_params(loaded):
    """nd.load result -> (args, auxs) without the "arg:"/"aux:" prefixes."""
    args, auxs = {}, {}
    if isinstance(loaded, list):
        return args, auxs
    for key, val in loaded.items():
        kind, _, name = key.partition(":")
        if kind == "aux":
            auxs[name] = val
        elif kind == "arg":
            args[name] = val
        else:
            args[key] = val
    return args, auxs


def sanitize(name):
    """The file-name form of a node name: anything outside [A-Za-z0-9._-] becomes '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def stats(arr):
    """min/max/mean/std over the finite values (float64), and the NaN/inf counts."""
    a = arr.astype(np.float64).ravel()
    finite = a[np.isfinite(a)]
    out = {"min": None, "max": None, "mean": None, "std": None}
    if finite.size:
        out = {"min": float(finite.min()), "max": float(finite.max()),
               "mean": float(finite.mean()), "std": float(finite.std())}
    out["nan_count"] = int(np.isnan(a).sum())
    out["inf_count"] = int(np.isinf(a).sum())
    return out


def run_internals(sym, args, auxs, inputs):
    """Binds sym.get_internals() and runs one inference forward.

    -> (list of (node name, output index), list of numpy arrays), one per internal output in
    MXNet's order.  Arguments that are neither inputs nor parameters (e.g. softmax_label) are
    bound to zeros: at inference they do not influence anything.
    """
    internals = sym.get_internals()
    # The internals' own JSON says which node and which output every internal head is: names
    # like "<node>_output1" or "<node>_mean" would have to be parsed otherwise.
    graph = json.loads(internals.tojson())
    heads = [(graph["nodes"][nid]["name"], graph["nodes"][nid]["op"], k)
             for nid, k, *_ in graph["heads"]]

    shapes = {k: v.shape for k, v in inputs.items()}
    shapes.update((k, v.shape) for k, v in args.items() if k in sym.list_arguments())
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    bind_args = {}
    for name, shp in zip(sym.list_arguments(), arg_shapes):
        if name in inputs:
            bind_args[name] = mx.nd.array(inputs[name], dtype=np.float32)
        elif name in args:
            bind_args[name] = args[name]
        else:
            bind_args[name] = mx.nd.zeros(shp, dtype=np.float32)
    bind_aux = {}
    for name, shp in zip(sym.list_auxiliary_states(), aux_shapes):
        if name not in auxs:
            fail("auxiliary state %s is not in the params file" % name)
        bind_aux[name] = auxs[name]
    exe = internals.bind(mx.cpu(), args=bind_args, aux_states=bind_aux, grad_req="null")
    exe.forward(is_train=False)
    arrays = [o.asnumpy() for o in exe.outputs]
    return heads, arrays


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="prefix-symbol.json")
    ap.add_argument("--params", help="prefix-NNNN.params (default: the newest beside --model)")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--out", required=True, help="dump directory (created)")
    ap.add_argument("--onednn", action="store_true",
                    help="compute with the wheel's oneDNN kernels (MXNet's default path) "
                         "instead of MXNet's own, which the fixtures and hybridinfer follow")
    opts = ap.parse_args()

    with open(opts.model) as f:
        file_nodes = json.load(f)["nodes"]
    # Our loader numbers nodes by their position in the file; find that position by name.
    position = {}
    for i, node in enumerate(file_nodes):
        position.setdefault(node["name"], i)

    inputs = {}
    for spec in opts.input:
        name, eq, path = spec.partition("=")
        if not eq or not name:
            fail("--input %s is not NAME=FILE.npy" % spec)
        inputs[name] = np.load(path).astype(np.float32)
    params = opts.params or newest_params(opts.model)
    sym = mx.sym.load(opts.model)
    args, auxs = split_params(mx.nd.load(params)) if params else ({}, {})

    heads, arrays = run_internals(sym, args, auxs, inputs)

    os.makedirs(opts.out, exist_ok=True)
    entries = []
    for (name, op, k), arr in zip(heads, arrays):
        if op == "null":
            continue  # weights and inputs: not dumped on either side
        index = position.get(name)
        if index is None:
            fail("internal output of node %s that the symbol file does not name" % name)
        node = file_nodes[index]
        base = "%04d_%s" % (index, sanitize(name))
        fname = base + (".npy" if k == 0 else "_out%d.npy" % k)
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        np.save(os.path.join(opts.out, fname), arr)
        entry = {"index": index, "name": name, "op": op,
                 "inputs": [file_nodes[src[0]]["name"] for src in node.get("inputs", [])],
                 "output": k, "shape": list(arr.shape), "dtype": "float32", "file": fname}
        entry.update(stats(arr))
        entry["time_us"] = None  # MXNet runs the graph as a whole: no per-node time
        entries.append(entry)

    # Same order and layout as ours: graph order, one node per line.
    entries.sort(key=lambda e: (e["index"], e["output"]))
    lines = ",\n".join("  " + json.dumps(e) for e in entries)
    text = '{"model": %s,\n "nodes": [\n%s\n ]}\n' % (json.dumps(opts.model), lines)
    tmp = os.path.join(opts.out, "index.json.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(opts.out, "index.json"))
    print("mxnet_dump.py: %d outputs of %s -> %s" % (len(entries), opts.model, opts.out))


if __name__ == "__main__":
    main()
