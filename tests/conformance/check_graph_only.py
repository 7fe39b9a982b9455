#!/usr/bin/env python3
"""`hybridinfer inspect --graph-only` against MXNet's own shape inference.

    check_graph_only.py TOOL CASES_DIR... [--only SUBSTRING]

For every case directory with a case.json (written by gen_fixtures.py), loads the case's symbol
file twice with no weights: in MXNet 1.9.1 (`mx.sym.load(...).infer_shape(**input_shapes)`,
which infers every weight's and auxiliary state's shape from the ops that read them) and with
`TOOL inspect --graph-only --json` at the same input shapes.  Every weight, every auxiliary
state and every output must have MXNet's shape.

A case MXNet itself cannot infer without weights is reported as such (not counted as a
failure).  So is a case whose symbol reads a variable as data where no weight is expected
(Concat's inputs, dot's right operand): without a params file
nothing tells it from a graph input, in MXNet or here, and our loader asks for its shape.
Prints TAP, one line per case.  Run it with the MXNet reference venv's Python.
"""

import argparse
import json
import os
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402


def cases_in(root, only):
    names = sorted(d for d in os.listdir(root)
                   if os.path.isfile(os.path.join(root, d, "case.json")))
    return [os.path.join(root, n) for n in names if not only or only in n]


def symbol_file(case_dir):
    syms = [f for f in os.listdir(case_dir) if f.endswith("-symbol.json")]
    return os.path.join(case_dir, syms[0]) if len(syms) == 1 else None


def mxnet_shapes(sym_file, inputs):
    """{variable name: shape} and [output shapes] from MXNet, or None where it cannot say."""
    sym = mx.sym.load(sym_file)
    try:
        args, outs, auxs = sym.infer_shape(**inputs)
    except Exception:  # noqa: BLE001 (MXNet's own refusal: nothing to compare)
        return None, None
    if args is None or any(s is None or 0 in s for s in args + auxs):
        return None, None
    names = sym.list_arguments() + sym.list_auxiliary_states()
    return dict(zip(names, [tuple(s) for s in args + auxs])), [tuple(s) for s in outs]


def ours(tool, sym_file, inputs):
    cmd = [tool, "inspect", "--graph-only", "--json", "-m", sym_file]
    for name, shape in inputs.items():
        cmd += ["-s", "%s=%s" % (name, "x".join(map(str, shape)))]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    if p.returncode != 0:
        return None, (p.stderr.strip() or "exit %d" % p.returncode).splitlines()[0]
    return json.loads(p.stdout), None


def check(tool, case_dir):
    """-> (status, text): status 'ok', 'not ok' or 'skip'."""
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    sym_file = symbol_file(case_dir)
    inputs = {i["name"]: tuple(i["shape"]) for i in case.get("inputs", [])
              if isinstance(i, dict) and "shape" in i}
    if not sym_file or not inputs:
        return "skip", "no single symbol file or no input shapes in case.json"
    want_vars, want_outs = mxnet_shapes(sym_file, inputs)
    if want_vars is None:
        return "skip", "MXNet cannot infer this graph's shapes without weights either"
    info, err = ours(tool, sym_file, inputs)
    if info is None:
        return "not ok", err
    if info.get("shape_error"):
        if "has no shape" in info["shape_error"]:
            return "skip", "a variable read as data, not as a weight: " + info["shape_error"]
        return "not ok", info["shape_error"]
    if not info.get("weightless"):
        return "not ok", "inspect --graph-only did not say the model is weightless"
    got = {n["name"]: n["shapes"][0] for n in info["nodes"]
           if n["op"] == "null" and n["shapes"] and n["shapes"][0] is not None}
    wrong = ["%s: ours %s, MXNet %s" % (name, tuple(got[name]) if name in got else None, shape)
             for name, shape in want_vars.items()
             if name not in inputs and name in got and tuple(got[name]) != shape]
    missing = [name for name in want_vars
               if name not in inputs and name not in got
               and any(n["name"] == name and n["kind"] != "unused" for n in info["nodes"])]
    outs = [tuple(o["shape"]) if o["shape"] is not None else None for o in info["outputs"]]
    if outs != want_outs:
        wrong.append("outputs: ours %s, MXNet %s" % (outs, want_outs))
    if wrong or missing:
        return "not ok", "; ".join(wrong[:3] + ["no shape for " + m for m in missing[:3]])
    n_weights = sum(1 for name in want_vars if name not in inputs and name in got)
    return "ok", "%d weights and states, %d outputs as MXNet infers them" % (n_weights, len(outs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--only")
    a = ap.parse_args()
    cases = [c for root in a.roots if os.path.isdir(root) for c in cases_in(root, a.only)]
    print("1..%d" % len(cases))
    failed = skipped = 0
    for i, case_dir in enumerate(cases, 1):
        status, text = check(a.tool, case_dir)
        name = os.path.basename(case_dir)
        if status == "skip":
            skipped += 1
            print("ok %d - %s # SKIP %s" % (i, name, text))
        else:
            failed += status != "ok"
            print("%s %d - %s # %s" % (status, i, name, text))
        sys.stdout.flush()
    print("# graph-only: %d cases, %d failed, %d not comparable" % (len(cases), failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
