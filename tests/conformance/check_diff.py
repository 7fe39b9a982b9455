#!/usr/bin/env python3
"""End to end for the debugging path: per-layer dumps and `hybridinfer diff` against MXNet.

    check_diff.py TOOL --case DIR [--case DIR ...] [--atol A]

Uses the first --case directory that holds a case.json (written by gen_fixtures.py), so a zoo
model can be preferred with a small checked-in fixture as the fallback.  Then:

  (a) dumps the case with `TOOL run --mode imperative --dump-dir` and with mxnet_dump.py (real
      MXNet 1.9.1); both dumps must load with numpy and agree with their index.json, and
      `TOOL diff` must find no divergence (exit 0);
  (b) flips the sign of one convolution weight in the middle of the network (a params copy
      written with mx.nd.save), dumps ours with it, and diffs against MXNet's dump of the
      original: diff must exit 1 and name the convolution that reads that weight as the first
      divergence;
  (c) the errors: --dump-dir with --mode hybrid, a dump directory that cannot be created, and
      diff of a directory without index.json are usage/IO errors with one message line.

diff runs with its own default tolerances (which scale with each layer's peak value, so
float32 summation-order noise near zero in deep networks is not a divergence) unless --atol
is given.  Prints TAP.  Run it
with the MXNet reference venv's Python.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

os.environ["MXNET_MKLDNN_ENABLED"] = "0"
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
import numpy as np  # noqa: E402
import mxnet as mx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MXNET_DUMP = os.path.join(HERE, "mxnet_dump.py")
TIMEOUT_S = 600
INDEX_KEYS = {"index", "name", "op", "inputs", "output", "shape", "dtype", "file", "min", "max",
              "mean", "std", "nan_count", "inf_count", "time_us"}


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, text):
        self.n += 1
        self.failed += not ok
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, text.replace("#", "No.")))
        sys.stdout.flush()
        return ok


def run(argv):
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), \
        proc.stderr.decode("utf-8", "replace")


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else "(nothing)"


def pick_case(candidates):
    for c in candidates:
        if c and os.path.isfile(os.path.join(c, "case.json")):
            return c
    return None


def dump_ours(tool, case, params, out, extra=()):
    with open(os.path.join(case, "case.json")) as f:
        meta = json.load(f)
    argv = [tool, "run", "--model", os.path.join(case, "model-symbol.json"),
            "--params", params, "--output-dir", out + "-outputs", "--dump-dir", out]
    argv += list(extra)
    for spec in meta["inputs"]:
        argv += ["--input", "%s=%s" % (spec["name"], os.path.join(case, spec["file"]))]
    return run(argv)


def dump_mxnet(case, out):
    with open(os.path.join(case, "case.json")) as f:
        meta = json.load(f)
    argv = [sys.executable, MXNET_DUMP, "--model", os.path.join(case, "model-symbol.json"),
            "--params", os.path.join(case, "model-0000.params"), "--out", out]
    for spec in meta["inputs"]:
        argv += ["--input", "%s=%s" % (spec["name"], os.path.join(case, spec["file"]))]
    return run(argv)


def check_dump_files(dump):
    """-> (ok, text, {(name, output)}): every file loads with numpy and matches its entry."""
    with open(os.path.join(dump, "index.json")) as f:
        index = json.load(f)
    keys = set()
    for e in index["nodes"]:
        missing = INDEX_KEYS - set(e)
        if missing:
            return False, "entry %s lacks %s" % (e.get("name"), sorted(missing)), keys
        expect = "%04d_" % e["index"]
        if not e["file"].startswith(expect) or not e["file"].endswith(".npy"):
            return False, "file %s is not %s<name>.npy" % (e["file"], expect), keys
        arr = np.load(os.path.join(dump, e["file"]))
        if arr.dtype != np.float32 or list(arr.shape) != e["shape"]:
            return False, "%s: %s %s, index says float32 %s" % (
                e["file"], arr.dtype, arr.shape, e["shape"]), keys
        a = arr.astype(np.float64)
        finite = a[np.isfinite(a)]
        if int(np.isnan(a).sum()) != e["nan_count"] or int(np.isinf(a).sum()) != e["inf_count"]:
            return False, "%s: NaN/inf counts differ from the index" % e["file"], keys
        if finite.size:
            for key, val in (("min", finite.min()), ("max", finite.max()),
                             ("mean", finite.mean()), ("std", finite.std())):
                if not np.isclose(e[key], val, rtol=1e-5, atol=1e-6):
                    return False, "%s: %s %r, the data give %r" % (e["file"], key, e[key], val), keys
        keys.add((e["name"], e["output"]))
    return True, "%d files" % len(index["nodes"]), keys


def middle_conv_weight(symbol_file, params):
    """-> (weight name, name of the Convolution reading it) for a conv in the middle."""
    with open(symbol_file) as f:
        nodes = json.load(f)["nodes"]
    convs = []
    for node in nodes:
        if node["op"] == "Convolution" and len(node["inputs"]) > 1:
            weight = nodes[node["inputs"][1][0]]["name"]
            if "arg:" + weight in params:
                convs.append((weight, node["name"]))
    return convs[len(convs) // 2] if convs else (None, None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("--case", action="append", default=[],
                    help="case directory; the first with a case.json is used")
    ap.add_argument("--atol", default=None,
                    help="passed to diff; default: diff's own tolerances")
    args = ap.parse_args()
    tol = ["--atol", args.atol] if args.atol else []

    tool = os.path.abspath(args.tool)
    case = pick_case(args.case)
    if not case:
        print("1..0 # SKIP no case.json in %s" % ", ".join(args.case))
        return 0
    print("# case %s" % case)
    tap = Tap()
    work = tempfile.mkdtemp(prefix="hy-check-diff-")
    try:
        params = os.path.join(case, "model-0000.params")
        ours, ref = os.path.join(work, "ours"), os.path.join(work, "mxnet")

        # (a) no divergence on the real weights
        rc, _, err = dump_ours(tool, case, params, ours)
        tap.check(rc == 0, "run --dump-dir (imperative by default): exit %d %s"
                  % (rc, last_line(err) if rc else ""))
        rc, _, err = dump_mxnet(case, ref)
        tap.check(rc == 0, "mxnet_dump.py: exit %d %s" % (rc, last_line(err) if rc else ""))
        ok_o, text_o, keys_o = check_dump_files(ours)
        tap.check(ok_o, "our dump loads with numpy and matches index.json: " + text_o)
        ok_m, text_m, keys_m = check_dump_files(ref)
        tap.check(ok_m, "MXNet's dump loads with numpy and matches index.json: " + text_m)
        tap.check(keys_o == keys_m and keys_o,
                  "both dump the same node outputs (only ours %s, only MXNet %s)"
                  % (sorted(keys_o - keys_m)[:5], sorted(keys_m - keys_o)[:5]))
        rc, out, err = run([tool, "diff", ours, ref] + tol)
        tap.check(rc == 0, "diff ours mxnet %s: exit %d, %s"
                  % (" ".join(tol) or "(default tolerances)", rc, last_line(out + err) if rc else last_line(out)))
        rc, out, _ = run([tool, "diff", ours, ref, "--json"] + tol)
        try:
            report = json.loads(out)
            ok = (report["divergent"] == 0 and report["first_divergence"] is None
                  and report["compared"] == len(keys_o) and len(report["nodes"]) == len(keys_o))
            text = "compared %d, divergent %d" % (report["compared"], report["divergent"])
        except (ValueError, KeyError) as e:
            ok, text = False, "not the expected JSON: %s" % e
        tap.check(ok and rc == 0, "diff --json: " + text)

        # (b) one perturbed weight: the conv reading it is the first divergence
        loaded = mx.nd.load(params)
        weight, consumer = middle_conv_weight(os.path.join(case, "model-symbol.json"), loaded)
        if tap.check(weight is not None, "a convolution weight to perturb: %s" % weight):
            w = loaded["arg:" + weight].asnumpy()
            loaded["arg:" + weight] = mx.nd.array(-w + 0.05, dtype=w.dtype)
            bad_params = os.path.join(work, "perturbed-0000.params")
            mx.nd.save(bad_params, loaded)
            bad = os.path.join(work, "perturbed")
            rc, _, err = dump_ours(tool, case, bad_params, bad, ["--mode", "imperative"])
            tap.check(rc == 0, "run --mode imperative --dump-dir, perturbed params: exit %d" % rc)
            rc, out, _ = run([tool, "diff", bad, ref] + tol)
            tap.check(rc == 1 and ("'%s'" % consumer) in out,
                      "diff finds the perturbed layer %s: exit %d, %s"
                      % (consumer, rc, " / ".join(l for l in out.splitlines()
                                                  if l.startswith("first"))))
            rc, out, _ = run([tool, "diff", bad, ref, "--json"] + tol)
            try:
                first = json.loads(out)["first_divergence"]
                name = first and first["name"]
            except (ValueError, KeyError, TypeError):
                name = None
            tap.check(rc == 1 and name == consumer,
                      "diff --json first_divergence %s, expected %s" % (name, consumer))

        # (c) errors are reported, never crash
        rc, _, err = dump_ours(tool, case, params, os.path.join(work, "h"), ["--mode", "hybrid"])
        tap.check(rc == 2 and "imperative" in err,
                  "--dump-dir with --mode hybrid: exit %d, %s" % (rc, last_line(err)))
        blocker = os.path.join(work, "a-file")
        open(blocker, "w").close()
        rc, _, err = dump_ours(tool, case, params, os.path.join(blocker, "dump"))
        tap.check(rc == 1 and len(err.strip().splitlines()) == 1,
                  "a dump directory that cannot be made: exit %d, %s" % (rc, last_line(err)))
        rc, out, err = run([tool, "diff", ours, work])
        tap.check(rc == 2 and len(err.strip().splitlines()) == 1 and not out,
                  "diff of a directory without index.json: exit %d, %s" % (rc, last_line(err)))
        rc, _, err = run([tool, "diff", ours])
        tap.check(rc == 2, "diff with one directory: exit %d, %s" % (rc, err.splitlines()[0]
                                                                     if err else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
