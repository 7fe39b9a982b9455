#!/usr/bin/env python3
"""The writer round trip: files `hybridinfer export` writes must be what real MXNet reads.

    check_export.py TOOL CASES_DIR [--only SUBSTRING] [--max-params-bytes N]

For every case directory with a case.json (small ones: params up to --max-params-bytes; the
legacy_* cases always), runs

    TOOL export --model CASE/model-symbol.json --params CASE/model-0000.params --prefix OUT/model

then loads OUT/model-symbol.json and OUT/model-0000.params in MXNet 1.9.1 (this Python's
mxnet), runs the case's inputs and compares with the case's expected outputs:

    max|mxnet(our files) - expected| <= 1e-4 * max(1, max|expected|)

Two loaders are tried, as users load an export: mx.sym.load + nd.load + bind, and
gluon.SymbolBlock.imports (stricter: every param key must be "arg:"/"aux:" and match a graph
variable).  The written symbol must also be in the current format (mxnet_version 10901, "attrs"
not "param"/"attr", three-element inputs), so MXNet never has to "upgrade" it; that is what makes
export an upgrade path for legacy (0.8/0.9-era) files.  Prints TAP, one line per case.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
# The expected outputs come from MXNet's own CPU kernels (gen_fixtures.py): read our files back
# the same way, not through the wheel's oneDNN kernels (they differ on SoftmaxOutput over 4-D).
# The variable is read when mxnet loads.
os.environ["MXNET_MKLDNN_ENABLED"] = "0"
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")  # that mode's noise
import mxnet as mx  # noqa: E402
from mxnet import gluon  # noqa: E402

# SymbolBlock.imports warns that input dtypes are unknown before the first call: expected.
warnings.filterwarnings("ignore", message="Cannot decide")

RTOL = 1e-4
TIMEOUT_S = 600
MXNET_VERSION = 10901


class Mismatch(Exception):
    pass


def cases_in(root, only, max_bytes):
    picked = []
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if not os.path.isfile(os.path.join(d, "case.json")):
            continue
        if only and only not in name:
            continue
        size = os.path.getsize(os.path.join(d, "model-0000.params"))
        if size > max_bytes and not name.startswith("legacy_"):
            continue
        picked.append(name)
    return picked


def check_format(sym_file):
    """The symbol file is one MXNet 1.9.1 writes: nothing for MXNet's legacy upgrader to do."""
    with open(sym_file) as f:
        graph = json.load(f)
    for key in ("nodes", "arg_nodes", "heads"):
        if key not in graph:
            raise Mismatch("written symbol file has no %r" % key)
    version = graph.get("attrs", {}).get("mxnet_version")
    if version != ["int", MXNET_VERSION]:
        raise Mismatch("written attrs.mxnet_version is %r, not [\"int\", %d]"
                       % (version, MXNET_VERSION))
    for node in graph["nodes"]:
        for old in ("param", "attr"):
            if old in node:
                raise Mismatch("written node %r still has the legacy key %r"
                               % (node.get("name"), old))
        for entry in node.get("inputs", []):
            if len(entry) != 3:
                raise Mismatch("written node %r has input %r, not [node, index, version]"
                               % (node.get("name"), entry))
    for entry in graph["heads"]:
        if len(entry) != 3:
            raise Mismatch("written head %r is not [node, index, version]" % entry)


def split_params(loaded, par_file):
    if isinstance(loaded, list):
        if loaded:
            raise Mismatch("%s holds an unnamed array list" % par_file)
        return {}, {}
    args, auxs = {}, {}
    for key, val in loaded.items():
        kind, sep, name = key.partition(":")
        if not sep or kind not in ("arg", "aux"):
            raise Mismatch("params key %r is not arg:NAME or aux:NAME" % key)
        if val.dtype != np.float32:
            raise Mismatch("params %r is %s, not float32" % (key, val.dtype))
        (args if kind == "arg" else auxs)[name] = val
    return args, auxs


def run_bound(sym, args, auxs, inputs):
    """mx.sym.load + bind, as gen_fixtures computed the expected outputs."""
    unknown = [n for n in args if n not in sym.list_arguments()]
    if unknown:
        raise Mismatch("params %s are not arguments of the written graph" % unknown)
    if sorted(auxs) != sorted(sym.list_auxiliary_states()):
        raise Mismatch("aux params %s, graph's auxiliary states %s"
                       % (sorted(auxs), sorted(sym.list_auxiliary_states())))
    shapes = {k: v.shape for k, v in inputs.items()}
    shapes.update((k, v.shape) for k, v in args.items())
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    arg_types, _, _ = sym.infer_type(**{k: np.float32 for k in inputs})
    bind_args = {}
    for name, shp, dt in zip(sym.list_arguments(), arg_shapes, arg_types):
        if name in inputs:
            bind_args[name] = mx.nd.array(inputs[name], dtype=np.float32)
        elif name in args:
            bind_args[name] = args[name]
        else:  # a loss head's label: no influence at inference
            bind_args[name] = mx.nd.zeros(shp, dtype=dt or np.float32)
    exe = sym.bind(mx.cpu(), args=bind_args, aux_states=dict(auxs), grad_req="null")
    exe.forward(is_train=False)
    return [o.asnumpy().astype(np.float32) for o in exe.outputs]


def run_imports(sym_file, par_file, inputs):
    block = gluon.SymbolBlock.imports(sym_file, list(inputs), par_file)
    res = block(*[mx.nd.array(a, dtype=np.float32) for a in inputs.values()])
    res = res if isinstance(res, (list, tuple)) else [res]
    return [r.asnumpy().astype(np.float32) for r in res]


def compare(label, got, expected):
    """-> worst diff/tol over the outputs; raises Mismatch past the tolerance."""
    if len(got) != len(expected):
        raise Mismatch("%s: %d outputs, expected %d" % (label, len(got), len(expected)))
    worst = 0.0
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape:
            raise Mismatch("%s: output%d shape %s, expected %s" % (label, i, g.shape, e.shape))
        if not e.size:
            continue
        g64, e64 = g.astype(np.float64), e.astype(np.float64)
        # NaN and +-Inf exactly where MXNet has them; a tolerance for the rest.
        special = ~np.isfinite(g64) | ~np.isfinite(e64)
        same = (np.isnan(g64) & np.isnan(e64)) | (g64 == e64)
        misplaced = int(np.count_nonzero(special & ~same))
        if misplaced:
            raise Mismatch("%s: output%d has %d NaN/Inf value(s) not where MXNet has them"
                           % (label, i, misplaced))
        g64, e64 = np.where(special, 0.0, g64), np.where(special, 0.0, e64)
        tol = RTOL * max(1.0, float(np.max(np.abs(e64))))
        diff = float(np.max(np.abs(g64 - e64)))
        if not diff <= tol:
            raise Mismatch("%s: output%d max|diff| %.3g > tol %.3g" % (label, i, diff, tol))
        worst = max(worst, diff / tol)
    return worst


def check_case(tool, case_dir, work):
    """-> one-line summary; raises Mismatch."""
    with open(os.path.join(case_dir, "case.json")) as f:
        meta = json.load(f)
    prefix = os.path.join(work, "model")
    argv = [tool, "export", "--model", os.path.join(case_dir, "model-symbol.json"),
            "--params", os.path.join(case_dir, "model-0000.params"),
            "--prefix", prefix, "--epoch", "0"]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Mismatch("export gave no answer within %ds" % TIMEOUT_S)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise Mismatch("export exit status %d: %s" % (proc.returncode,
                                                     err.splitlines()[-1] if err else "-"))
    sym_file, par_file = prefix + "-symbol.json", prefix + "-0000.params"
    for p in (sym_file, par_file):
        if not os.path.isfile(p):
            raise Mismatch("export wrote no %s" % os.path.basename(p))
    check_format(sym_file)

    inputs = {}
    for spec in meta["inputs"]:
        inputs[spec["name"]] = np.load(os.path.join(case_dir, spec["file"])).astype(np.float32)
    expected = [np.load(os.path.join(case_dir, f)).astype(np.float32) for f in meta["outputs"]]

    try:
        sym = mx.sym.load(sym_file)
        args, auxs = split_params(mx.nd.load(par_file), par_file)
    except mx.base.MXNetError as e:
        raise Mismatch("MXNet cannot load the files: %s" % str(e).strip().splitlines()[0])
    missing = [n for n in sym.list_arguments() if n not in args and n not in inputs]
    if [n for n in missing if not n.endswith("_label")]:
        raise Mismatch("written graph arguments %s are neither inputs nor in the params"
                       % missing)
    worst = compare("bind", run_bound(sym, args, auxs, inputs), expected)
    how = "mx.sym.load+bind"
    if inputs and not missing:
        worst = max(worst, compare("SymbolBlock.imports",
                                   run_imports(sym_file, par_file, inputs), expected))
        how += ", SymbolBlock.imports"
    return "MXNet %s reads it (%s); worst diff %.3g of tol" % (mx.__version__, how, worst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("cases_dir")
    ap.add_argument("--only", help="only cases whose name contains this")
    ap.add_argument("--max-params-bytes", type=int, default=8 << 20,
                    help="skip cases with bigger params files (legacy_* always run)")
    args = ap.parse_args()

    tool = os.path.abspath(args.tool)
    if not os.path.isdir(args.cases_dir):
        print("1..0 # SKIP no cases directory %s" % args.cases_dir)
        return 0
    names = cases_in(args.cases_dir, args.only, args.max_params_bytes)
    if not names:
        print("1..0 # SKIP no case under %s" % args.cases_dir)
        return 0
    print("1..%d" % len(names))
    root = tempfile.mkdtemp(prefix="hy-check-export-")
    failed = 0
    try:
        for n, name in enumerate(names, 1):
            work = os.path.join(root, name)
            os.makedirs(work)
            try:
                ok, text = True, check_case(tool, os.path.join(args.cases_dir, name), work)
            except Mismatch as e:
                ok, text = False, str(e)
            except Exception as e:  # MXNet refusing the files is a finding, not a crash
                first = str(e).strip().splitlines()
                ok, text = False, "%s: %s" % (type(e).__name__, first[0] if first else "")
            shutil.rmtree(work, ignore_errors=True)
            failed += not ok
            text = text.replace("#", "No.")  # a '#' would start a TAP directive
            print("%s %d - %s: %s" % ("ok" if ok else "not ok", n, name, text))
            sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("# %d of %d exports read back by MXNet %s and match"
          % (len(names) - failed, len(names), mx.__version__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
