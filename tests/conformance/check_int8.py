#!/usr/bin/env python3
"""MXNet's int8 exports through `hybridinfer run`, against MXNet's own int8 outputs.

    check_int8.py TOOL CASES_DIR [--mode hybrid|imperative] [--max-fraction F]
                  [--expect-kernel NAME [--expect-bytes SUBSTRING,...]]

For every case directory (written by gen_int8_fixtures.py with real MXNet 1.9.1 and its
oneDNN kernels), runs `TOOL run` on the case's files and compares each output (a detector's
ids, scores and boxes each) with MXNet's:

  - the top-1 class of every row is MXNet's;
  - every element lies within one output quantization step of MXNet's (the step of an int8
    value of the output's range: max|mxnet| / 127.5), except a fraction of them, reported,
    which may not exceed --max-fraction.

Every case matches MXNet to float rounding today (docs/PRECISION.md, "int8"); the allowance
is for a kernel that rounds a tie differently: the quantized layers round every value to an
integer, so one element one step off moves the layers after it by whole steps, and such
differences spread through a deep network.  --expect-kernel also asks `TOOL bench --profile`
which kernel ran each quantized convolution of the hybridized forward (onednn-int8, the
default; reference-prepared with HYBRIDINFER_DNNL=0), and with onednn-int8 each quantized
fully connected layer too, so that a path that silently fell back to the reference is not taken
for the one under test (grouped and depthwise convolutions included).  --expect-bytes: the named
cases must also have held some value as int8
bytes between those convolutions (bench's segment_values), so that a plan that quietly kept
float planes is not taken for the path under test.  Prints TAP, one line per case.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

TIMEOUT_S = 600


def cases_in(root):
    return sorted(d for d in os.listdir(root)
                  if os.path.isfile(os.path.join(root, d, "case.json")))


def compare(ours, ref, max_fraction):
    """-> (ok, text) for one output."""
    if ours.shape != ref.shape:
        return False, "shape %s, MXNet %s" % (ours.shape, ref.shape)
    ref64, ours64 = ref.astype(np.float64), ours.astype(np.float64)
    step = float(np.max(np.abs(ref64))) / 127.5
    diff = np.abs(ours64 - ref64)
    beyond = float(np.mean(diff > step)) if diff.size else 0.0
    rows = ref64.reshape(ref64.shape[0], -1)
    same_top1 = bool(np.all(np.argmax(rows, 1)
                            == np.argmax(ours64.reshape(rows.shape), 1)))
    text = ("max|diff| %.3g, step %.3g, beyond one step %.2f%% (allowed %.2f%%), "
            "top-1 %s" % (float(diff.max()), step, 100 * beyond, 100 * max_fraction,
                          "same" if same_top1 else "DIFFERS"))
    return same_top1 and beyond <= max_fraction, text


def conv_kernels(tool, case_dir, shape, expect_fc):
    """The kernels the hybridized forward ran its quantized convolutions with (and, with
    expect_fc, its quantized fully connected layers)."""
    argv = [tool, "bench", "--model", os.path.join(case_dir, "model-symbol.json"),
            "--params", os.path.join(case_dir, "model-0000.params"),
            "--shape", "data=" + "x".join(str(d) for d in shape),
            "-n", "1", "-w", "0", "--profile", "--json"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        return None
    report = json.loads(proc.stdout)
    kernels = {l["node"]: l.get("kernel") for l in report["layers"]
               if l["op"] == "_sg_mkldnn_conv"
               or (expect_fc and l["op"] == "_sg_mkldnn_fully_connected")}
    # values the plan holds in the backend's own layout: int8 bytes between oneDNN's int8
    # convolutions (conv-dnnl-int8.c)
    return kernels, report.get("segment_values", 0)


def grouped_convolutions(case_dir):
    """Names of the quantized convolutions with groups (MobileNet's depthwise ones), counted in
    the report: they run on the kernel asked for like the others."""
    with open(os.path.join(case_dir, "model-symbol.json")) as f:
        nodes = json.load(f)["nodes"]
    def groups(node):  # the node's own attribute, else its subgraph's Convolution's
        inner = [m.get("attrs") or {} for g in node.get("subgraphs") or []
                 for m in g["nodes"] if m["op"] == "Convolution"]
        own = node.get("attrs") or {}
        return int(own.get("num_group", inner[0].get("num_group", "1") if inner else "1"))
    return {n["name"] for n in nodes if n["op"] == "_sg_mkldnn_conv" and groups(n) != 1}


def unexpected_kernels(kernels, expect):
    """-> the convolutions not on the kernel asked for."""
    return sorted(name for name, kernel in kernels.items() if kernel != expect)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("cases")
    ap.add_argument("--mode", default="hybrid", choices=["hybrid", "imperative"])
    ap.add_argument("--max-fraction", type=float, default=0.001)
    ap.add_argument("--expect-kernel", help="the kernel every quantized convolution must run on")
    ap.add_argument("--expect-bytes", default="",
                    help="with --expect-kernel: cases whose name contains one of these "
                    "(comma-separated) must hold some value as bytes between convolutions")
    args = ap.parse_args()
    names = cases_in(args.cases)
    print("1..%d" % len(names))
    failed = 0
    for i, name in enumerate(names, 1):
        case_dir = os.path.join(args.cases, name)
        out_dir = tempfile.mkdtemp(prefix="hy-int8-")
        try:
            argv = [args.tool, "run", "--model", os.path.join(case_dir, "model-symbol.json"),
                    "--params", os.path.join(case_dir, "model-0000.params"),
                    "--input", "data=" + os.path.join(case_dir, "input0.npy"),
                    "--output-dir", out_dir, "--mode", args.mode]
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
            if proc.returncode != 0:
                failed += 1
                print("not ok %d - %s [%s] # %s" % (i, name, args.mode,
                                                   proc.stderr.strip().splitlines()[-1:]))
                continue
            with open(os.path.join(case_dir, "case.json")) as f:
                outputs = json.load(f)["outputs"]
            ok, texts = True, []
            for out_file in outputs:  # a detector's ids, scores and boxes
                one_ok, one = compare(np.load(os.path.join(out_dir, out_file)),
                                      np.load(os.path.join(case_dir, out_file)),
                                      args.max_fraction)
                ok = ok and one_ok
                texts.append(one if len(outputs) == 1 else "%s: %s" % (out_file, one))
            text = "; ".join(texts)
            if args.expect_kernel:
                x = np.load(os.path.join(case_dir, "input0.npy"))
                # oneDNN runs the fully connected layers too (fc-dnnl-int8.c); the
                # reference's are not "prepared"
                kernels, held = conv_kernels(args.tool, case_dir, x.shape,
                                             args.expect_kernel == "onednn-int8") or (None, 0)
                grouped = grouped_convolutions(case_dir)
                wrong = (unexpected_kernels(kernels, args.expect_kernel)
                         if kernels else ["(bench failed)"])
                if wrong:
                    ok = False
                text += "; convolutions on %s" % (sorted(set(kernels.values()), key=str)
                                                   if kernels else "(bench failed)")
                if grouped:
                    text += " (%d of them grouped)" % len(grouped)
                text += "; %d values held as bytes" % held
                if held == 0 and any(k and k in name for k in args.expect_bytes.split(",")):
                    ok = False
                    text += " (expected some)"
                if wrong:
                    text += "; NOT on the expected kernel: %s" % ", ".join(wrong[:5])
            failed += not ok
            print("%s %d - %s [%s] # %s" % ("ok" if ok else "not ok", i, name, args.mode, text))
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
    print("# %d of %d int8 cases match MXNet [%s]" % (len(names) - failed, len(names),
                                                     args.mode))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
