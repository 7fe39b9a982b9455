#!/usr/bin/env python3
"""End to end through the command line: `hybridinfer run` against MXNet's outputs.

    check_cli.py TOOL CASES_DIR [--mode hybrid|imperative] [--device DEV] [--only SUBSTRING]

For every case directory with a case.json (written by gen_fixtures.py with real MXNet 1.9.1),
runs `TOOL run` on the case's files with its inputs given as NAME=FILE, loads the .npy files the
tool wrote and compares each with MXNet's:

    max|ours - mxnet| <= 1e-4 * max(1, max|mxnet|)

This checks what the C conformance runner does not: option parsing, input naming and ordering,
and the .npy files the tool writes, read back by numpy.  Prints TAP, one line per case.
Needs numpy (run it with the MXNet reference venv's Python).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

RTOL = 1e-4
TIMEOUT_S = 600


def cases_in(root, only):
    names = sorted(d for d in os.listdir(root)
                   if os.path.isfile(os.path.join(root, d, "case.json")))
    return [n for n in names if not only or only in n]


def compare(ours, ref):
    """-> (ok, text) for one output."""
    if ours.shape != ref.shape:
        return False, "shape %s, MXNet %s" % (ours.shape, ref.shape)
    if ours.dtype != np.float32:
        return False, "dtype %s, expected float32" % ours.dtype
    if ref.size == 0:
        return True, "empty"
    ref64, ours64 = ref.astype(np.float64), ours.astype(np.float64)
    # NaN and +-Inf must sit exactly where MXNet has them; the tolerance
    # is for the finite values.
    special = ~np.isfinite(ref64) | ~np.isfinite(ours64)
    same_special = (np.isnan(ref64) & np.isnan(ours64)) | (ref64 == ours64)
    misplaced = int(np.count_nonzero(special & ~same_special))
    if misplaced:
        return False, "%d NaN/Inf value(s) not where MXNet has them" % misplaced
    finite = ~special
    ref64, ours64 = np.where(finite, ref64, 0.0), np.where(finite, ours64, 0.0)
    peak = float(np.max(np.abs(ref64)))
    tol = RTOL * max(1.0, peak)
    diff = np.abs(ours64 - ref64)
    worst = float(np.max(diff)) if np.all(np.isfinite(diff)) else float("inf")
    text = "max|diff| %.3g tol %.3g (max|mxnet| %.3g)" % (worst, tol, peak)
    if not worst <= tol:
        at = np.unravel_index(int(np.nanargmax(np.where(np.isfinite(diff), diff, np.inf))),
                              ref.shape)
        text += " worst at %s: ours %.7g, mxnet %.7g" % (tuple(int(i) for i in at),
                                                         float(ours[at]), float(ref[at]))
        return False, text
    return True, text


def check_case(tool, case_dir, out_dir, mode, device):
    """-> (ok, one-line summary)."""
    with open(os.path.join(case_dir, "case.json")) as f:
        meta = json.load(f)
    argv = [tool, "run", "--model", os.path.join(case_dir, "model-symbol.json"),
            "--params", os.path.join(case_dir, "model-0000.params"),
            "--output-dir", out_dir, "--mode", mode]
    if device:
        argv += ["--device", device]
    for spec in meta["inputs"]:
        argv += ["--input", "%s=%s" % (spec["name"], os.path.join(case_dir, spec["file"]))]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "no answer within %ds" % TIMEOUT_S
    except OSError as e:
        return False, "cannot start the tool: %s" % e
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        last = err.splitlines()[-1] if err else "(no message)"
        return False, "exit status %d: %s" % (proc.returncode, last)
    parts, ok = [], True
    for i, ref_file in enumerate(meta["outputs"]):
        ours_file = os.path.join(out_dir, "output%d.npy" % i)
        if not os.path.isfile(ours_file):
            return False, "wrote no output%d.npy" % i
        ref = np.load(os.path.join(case_dir, ref_file))
        try:
            ours = np.load(ours_file)
        except (ValueError, OSError) as e:
            return False, "numpy cannot read output%d.npy: %s" % (i, e)
        good, text = compare(ours, ref)
        ok = ok and good
        parts.append(("output%d " % i if len(meta["outputs"]) > 1 else "") + text)
    extra = os.path.join(out_dir, "output%d.npy" % len(meta["outputs"]))
    if os.path.exists(extra):
        return False, "wrote more outputs than MXNet's %d" % len(meta["outputs"])
    return ok, "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("cases_dir")
    ap.add_argument("--mode", choices=["hybrid", "imperative"], default="hybrid")
    ap.add_argument("--device", help="passed to `run --device` (default: the tool's, cpu)")
    ap.add_argument("--only", help="only cases whose name contains this")
    args = ap.parse_args()

    tool = os.path.abspath(args.tool)
    if not os.path.isdir(args.cases_dir):
        print("1..0 # SKIP no cases directory %s" % args.cases_dir)
        return 0
    names = cases_in(args.cases_dir, args.only)
    if not names:
        print("1..0 # SKIP no case.json under %s" % args.cases_dir)
        return 0
    print("1..%d" % len(names))
    setting = args.mode + (" " + args.device if args.device else "")
    work = tempfile.mkdtemp(prefix="hy-check-cli-")
    failed = 0
    try:
        for n, name in enumerate(names, 1):
            out_dir = os.path.join(work, name)
            ok, text = check_case(tool, os.path.join(args.cases_dir, name), out_dir, args.mode,
                                  args.device)
            shutil.rmtree(out_dir, ignore_errors=True)
            failed += not ok
            # a '#' would start a TAP directive
            text = text.replace("#", "No.")
            print("%s %d - %s [%s] %s" % ("ok" if ok else "not ok", n, name, setting, text))
            sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("# %d of %d cases match MXNet through `hybridinfer run` [%s]"
          % (len(names) - failed, len(names), setting))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
