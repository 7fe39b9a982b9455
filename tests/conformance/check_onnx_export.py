#!/usr/bin/env python3
"""`hybridinfer export --format onnx`, judged by ONNX Runtime against MXNet 1.9.1.

    check_onnx_export.py TOOL FIXTURES WORK [--zoo ZOO_DIR] [--only SUBSTRING] [--sample N]

Each case of FIXTURES (tests/fixtures: the seed models and the one-op cases, whose inputs and
outputs real MXNet 1.9.1 wrote) is exported with the shapes its case.json gives; the file must pass
onnx.checker.check_model (full_check) and ONNX Runtime must give MXNet's outputs on the same inputs
within

    max|ort - mxnet| <= 1e-4 * max(1, max|mxnet|)

(NaN where MXNet has NaN).  The cases whose ops all have an ONNX form must export; any other case
must either export and match or be refused with `node 'NAME' (OP)` in the message and no file left
behind; so too the cases MXNet makes here that the fixtures lack (where picking rows by a 1-D
condition).  Then ONNX models read and written back: the small graphs of check_onnx.py, each
given to ONNX Runtime as written by onnx.helper and as our export of it, on the same inputs,
within the same tolerance (those that the reader makes ops without an ONNX form must be refused
naming them),
the QDQ graphs of onnx_qdq_cases.py on their own inputs (rounding ties, values past the integer
range; ORT with its graph optimisations off, as check_onnx.py runs them, so that both files are
computed literally), and so the real exporters' files check_onnx_torch.py caches, where it has
made them.  Last, a refusal: a model with an op without an ONNX form, with its message.

--sample N (the sanitizer builds: every case spawns an instrumented hybridinfer) checks every
Nth fixture in name order, the known refusals among them, and every other case; it says so in
one line.

With --zoo, the zoo's ResNet-18 v1, MobileNetV2 1.0 and MobileNetV3-Large (fixtures of
-Dzoo_fixtures: seeded random weights, inputs and MXNet's outputs) instead.  Prints TAP; needs the
reference venv (numpy, onnx, onnxruntime).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_onnx  # noqa: E402  (the ONNX cases and ORT runner)
import check_onnx_torch  # noqa: E402  (where the real exporters' files are cached)
import onnx_qdq_cases  # noqa: E402  (the QDQ graphs and their inputs)

RTOL = 1e-4
TIMEOUT_S = 600

# The families of one-op fixtures whose every case must export (ops.def names, as the fixture
# names spell them); the op table of core/io/onnx-write-ops.c covers them.
MUST_EXPORT = re.compile(
    r"^(seed_|legacy_|op_(Activation|BatchNorm|Concat|Convolution|Deconvolution|Dropout|"
    r"Flatten|FullyConnected|Pad|Reshape|SwapAxis|add_n|transpose|clip|hard_sigmoid|"
    r"relu|sigmoid|tanh|exp|log|sqrt|abs|negative|reciprocal|square|rsqrt|sin|cos|erf|"
    r"elemwise_(add|sub|mul|div)|broadcast_(add|sub|mul|div|maximum|minimum)|"
    r"_(plus|minus|rminus|mul|div|rdiv|maximum|minimum)_scalar|softmax|log_softmax|"
    r"SoftmaxActivation|SoftmaxOutput|SliceChannel|LeakyReLU|dot|batch_dot|sum|mean|prod|max|"
    r"min|expand_dims|squeeze|slice(?!_like)|slice_axis|BilinearResize2D|UpSampling_nearest_s|"
    r"Pooling_(max|avg|global_max|global_avg)|argmax|argmin|where|reverse|broadcast_axis|"
    r"broadcast_like|_(not_)?equal|_(greater|lesser)(_equal)?|"
    r"broadcast_(not_)?equal|broadcast_(greater|lesser)(_equal)?)(_|$))")

# One-op fixtures on NaN whose ONNX op ignores a NaN that MXNet's propagates (ONNX Runtime's
# MaxPool, ReduceMax/ReduceMin and Sign): compared where both outputs are finite.
NAN_DIFFERS = re.compile(r"^op_(Pooling_(global_)?max|max|min|sign)_.*nan")

# Where the export is exact but ONNX itself computes otherwise than MXNet: never a reason to
# accept a wrong output silently, so each is listed with what must be seen.
KNOWN_REFUSALS = {
    "op_BatchNorm_axis3": "axis 3: ONNX normalises axis 1 only",
    "op_BatchNorm_axis_minus1": "axis -1: ONNX normalises axis 1 only",
    "op_Deconvolution_dilate": "dilate other than 1 is not written",
    "op_Deconvolution_dilate_sparse": "dilate other than 1 is not written",
    "op_Deconvolution_group_dilate_sparse": "dilate other than 1 is not written",
    "op_Deconvolution_group_dilate_sparse_pad": "dilate other than 1 is not written",
    "op_Pooling_avg_3d_depth_pad": "is not smaller than the kernel",
    "op_LeakyReLU_gelu": "act_type gelu has no ONNX form in opset 13",
    "op_LeakyReLU_gelu_nan": "act_type gelu has no ONNX form in opset 13",
    "op_dot_3d_lhs": "operand 0 has 3 dimensions; 2 are written",
}

# Every graph of check_onnx.py is read and written back; these become ops of the core that have
# no ONNX form here (Gather, GatherND and ScatterND as gather_nd, TopK as topk, Resize in other
# modes than UpSampling's and BilinearResize2D's as gather_nd and a blend), so each must be
# refused naming that op.
ROUNDTRIP_REFUSED = re.compile(
    r"^(gather-(?!scalar-index)|gathernd-|scatternd-(rows|elements|full-permuted)$|topk|"
    r"resize-(nearest-(half-pixel-round-floor|asymmetric|align|pytorch)|linear-(half-pixel-"
    r"(odd|symmetric)|asymmetric|pytorch-half-pixel-to-1|3d)))")


# torch.onnx.export's and Ultralytics' files (tests/conformance/torch_exports.py).
TORCH_EXPORTS = ["resnet50", "mobilenet_v3_small", "ssdlite320-head", "yolov8n"]


def run(argv):
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S)


def last_line(proc):
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return err[-1] if err else ""


def compare(ours, ref, nan_differs=False):
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape:
        return False, "shape %s, reference %s" % (ours.shape, ref.shape)
    if nan_differs:
        # ONNX Runtime's max drops a NaN that MXNet's propagates, so a window or row with a NaN
        # comes out otherwise: the shape only (the op's fixture without NaN checks the values).
        return True, "shape %s (NaN input: ONNX's max semantics differ)" % (ref.shape,)
    finite = np.isfinite(ref)
    if not np.array_equal(np.isnan(ref), np.isnan(ours)):
        return False, "NaN at other positions than the reference's"
    if not np.array_equal(ours[np.isinf(ref)], ref[np.isinf(ref)]):
        return False, "an infinity the reference does not have"
    peak = float(np.max(np.abs(ref[finite]))) if finite.any() else 0.0
    tol = RTOL * max(1.0, peak)
    diff = np.abs(ours[finite] - ref[finite])
    worst = float(np.max(diff)) if diff.size else 0.0
    return worst <= tol, "max|diff| %.3g tol %.3g" % (worst, tol)


def export(tool, model, prefix, shapes=()):
    argv = [tool, "export", "--model", model, "--format", "onnx", "--prefix", prefix]
    for s in shapes:
        argv += ["--shape", s]
    return run(argv)


def ort_run(path, feeds, literal=False):
    """path: a file name or the file's bytes.  literal: graph optimisations off (QDQ)."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if literal:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check_fixture(tool, case_dir, work, must):
    """-> (ok, text).  Export the Gluon fixture, check the file, ORT against MXNet's outputs."""
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    feeds = {i["name"]: np.load(os.path.join(case_dir, i["file"])) for i in case["inputs"]}
    shapes = ["%s=%s" % (i["name"], "x".join(str(d) for d in i["shape"]))
              for i in case["inputs"]]
    os.makedirs(work, exist_ok=True)
    prefix = os.path.join(work, "model")
    path = prefix + ".onnx"
    if os.path.exists(path):
        os.remove(path)
    proc = export(tool, os.path.join(case_dir, "model-symbol.json"), prefix, shapes)
    if proc.returncode != 0:
        msg = last_line(proc)
        if os.path.exists(path):
            return False, "refused but left %s behind: %s" % (path, msg)
        want = KNOWN_REFUSALS.get(case["name"])
        if want is not None:
            return want in msg, "refused as known: " + msg
        named = re.search(r"node '[^']+' \([^)]+\)", msg) is not None
        if must or not named:
            return False, "exit %d: %s" % (proc.returncode, msg)
        return True, "refused: " + msg
    with open(path, "rb") as f:
        data = f.read()
    try:
        onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    except Exception as e:  # noqa: BLE001  (any checker complaint fails the case)
        return False, "onnx.checker: %s" % str(e).splitlines()[0]
    try:
        outs = ort_run(data, {k: v.astype(np.float32) for k, v in feeds.items()})
    except Exception as e:  # noqa: BLE001  (ORT refusing our file fails the case)
        return False, "ONNX Runtime: %s" % str(e).splitlines()[0][-300:]
    refs = [np.load(os.path.join(case_dir, o)) for o in case["outputs"]]
    if len(outs) != len(refs):
        return False, "%d outputs, MXNet %d" % (len(outs), len(refs))
    ok, parts = True, []
    for i, (o, r) in enumerate(zip(outs, refs)):
        good, text = compare(o, r, NAN_DIFFERS.match(case["name"]) is not None)
        ok = ok and good
        parts.append(("[%d] " % i if len(refs) > 1 else "") + text)
    return ok, "; ".join(parts)


def check_roundtrip(tool, name, m, work, src=None, feeds=None, literal=False):
    """An onnx.helper graph (or the file `src`) read and written back: ORT on both files, the
    same feeds (`feeds`, or images of the static shapes of the file written: a symbolic batch is
    written as 1).  Each file is read once (the torch exports are large)."""
    os.makedirs(work, exist_ok=True)
    if src is None:
        src = os.path.join(work, "model.onnx")
        onnx.save(m, src)
    prefix = os.path.join(work, "back")
    proc = export(tool, src, prefix)
    if ROUNDTRIP_REFUSED.match(name):
        msg = last_line(proc)
        named = re.search(r"node '[^']+' \((gather_nd|topk)\): op '\1' has no ONNX form", msg)
        return (proc.returncode == 1 and named is not None
                and not os.path.exists(prefix + ".onnx")), "refused: " + msg
    if proc.returncode != 0:
        return False, "exit %d: %s" % (proc.returncode, last_line(proc))
    with open(prefix + ".onnx", "rb") as f:
        back_bytes = f.read()
    back = onnx.load_from_string(back_bytes)
    try:
        onnx.checker.check_model(back, full_check=True)
    except Exception as e:  # noqa: BLE001
        return False, "onnx.checker: %s" % str(e).splitlines()[0]
    if feeds is None:
        feeds = image_feeds(back)
    with open(src, "rb") as f:
        src_bytes = f.read()
    src_nodes = len((m or onnx.load_from_string(src_bytes)).graph.node)
    try:
        refs, outs = ort_run(src_bytes, feeds, literal), ort_run(back_bytes, feeds, literal)
    except Exception as e:  # noqa: BLE001
        return False, "ONNX Runtime: %s" % str(e).splitlines()[0][-300:]
    ok, parts = True, []
    for r, o in zip(refs, outs):
        good, text = compare(o, r)
        ok = ok and good
        parts.append(text)
    counts = "%d ONNX nodes written back as %d" % (src_nodes, len(back.graph.node))
    return ok and len(refs) == len(outs), "; ".join(parts + [counts])


def image_feeds(m):
    """Each input in [0, 1], as an image would come (YOLOv8 takes it so; the rest too)."""
    rng = np.random.default_rng(20261202)
    return {vi.name: rng.uniform(0.0, 1.0, size=[d.dim_value for d in
                                                 vi.type.tensor_type.shape.dim]
                                 ).astype(np.float32) for vi in m.graph.input}


def make_mxnet_cases(work):
    """Cases tests/fixtures lacks, made here by MXNet 1.9.1 in its fixtures' layout: where with
    a 1-D condition that picks whole rows (the writer reshapes it for ONNX's broadcast), NaN and
    a negative value in it.  -> [case folder]."""
    import mxnet as mx
    d = os.path.join(work, "mxnet-cases", "mx_where_rows")
    os.makedirs(d)
    names = ("cond", "x", "y")
    sym = mx.sym.where(*[mx.sym.var(n) for n in names])
    sym.save(os.path.join(d, "model-symbol.json"))
    rng = np.random.default_rng(20261202)
    feeds = {"cond": np.array([0, 1, np.nan, -2], np.float32),
             "x": rng.standard_normal((4, 3, 2)).astype(np.float32),
             "y": rng.standard_normal((4, 3, 2)).astype(np.float32)}
    out = sym.eval(ctx=mx.cpu(), **{k: mx.nd.array(v) for k, v in feeds.items()})[0]
    inputs = []
    for i, n in enumerate(names):
        np.save(os.path.join(d, "input%d.npy" % i), feeds[n])
        inputs.append({"name": n, "file": "input%d.npy" % i, "shape": list(feeds[n].shape)})
    np.save(os.path.join(d, "output0.npy"), out.asnumpy())
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump({"name": "mx_where_rows", "inputs": inputs, "outputs": ["output0.npy"]}, f)
    return [d]


def check_refusal(tool, fixtures, work):
    """A Gluon model with an op that has no ONNX form (topk): the message names the node and
    the op, and no file is left behind."""
    case_dir = os.path.join(fixtures, "op_topk_axis_neg3_ascend")
    os.makedirs(work, exist_ok=True)
    prefix = os.path.join(work, "model")
    proc = export(tool, os.path.join(case_dir, "model-symbol.json"), prefix, ["data=4x3x5"])
    msg = last_line(proc)
    with open(os.path.join(case_dir, "model-symbol.json")) as f:
        node = [n["name"] for n in json.load(f)["nodes"] if n["op"] == "topk"][0]
    want = "node '%s' (topk): op 'topk' has no ONNX form" % node
    ok = proc.returncode == 1 and want in msg and not os.path.exists(prefix + ".onnx")
    return ok, "exit %d: %s" % (proc.returncode, msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("fixtures")
    ap.add_argument("work")
    ap.add_argument("--zoo", metavar="ZOO_DIR")
    ap.add_argument("--only")
    ap.add_argument("--sample", type=int, default=1, metavar="N",
                    help="every Nth fixture only (and every other case)")
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    probe = export(tool, os.path.join(args.fixtures, "seed_mlp", "model-symbol.json"),
                   os.path.join(args.work, "probe"), ["data=1x784"])
    if b"built without protobuf-c" in probe.stderr:
        print("1..0 # SKIP this hybridinfer was built without protobuf-c: it writes no ONNX")
        return 0

    cases = []  # (name, callable -> (ok, text))
    if args.zoo:
        for name in ("zoo_resnet18_v1_b1", "zoo_mobilenetv2_1.0_b1", "zoo_mobilenetv3_large_b1"):
            d = os.path.join(args.zoo, name)
            cases.append((name, lambda d=d, n=name: check_fixture(
                tool, d, os.path.join(args.work, n), True)))
    else:
        fixtures = []
        for name in sorted(os.listdir(args.fixtures)):
            d = os.path.join(args.fixtures, name)
            if not os.path.isfile(os.path.join(d, "case.json")):
                continue
            with open(os.path.join(d, "case.json")) as f:
                if not json.load(f)["inputs"] or not os.path.isfile(
                        os.path.join(d, "model-symbol.json")):
                    continue
            fixtures.append(name)
        sampled = [n for i, n in enumerate(fixtures)
                   if i % args.sample == 0 or n in KNOWN_REFUSALS]
        if args.sample > 1:
            print("# sampled %d of %d fixtures (every %dth, and the known refusals); the "
                  "roundtrips and refusals all" % (len(sampled), len(fixtures), args.sample))
        for name in sampled:
            d = os.path.join(args.fixtures, name)
            must = MUST_EXPORT.match(name) is not None
            cases.append((name, lambda d=d, n=name, m=must: check_fixture(
                tool, d, os.path.join(args.work, n), m)))
        for d in make_mxnet_cases(args.work):
            cases.append((os.path.basename(d), lambda d=d: check_fixture(
                tool, d, os.path.join(args.work, os.path.basename(d)), True)))
        op_models = check_onnx.op_cases()
        for name in op_models:
            cases.append(("roundtrip-" + name, lambda n=name: check_roundtrip(
                tool, n, op_models[n], os.path.join(args.work, "roundtrip-" + n))))
        for name, (m, feeds) in onnx_qdq_cases.cases(np.random.default_rng(20261202)).items():
            cases.append(("roundtrip-" + name, lambda n=name, m=m, f=feeds: check_roundtrip(
                tool, n, m, os.path.join(args.work, "roundtrip-" + n), feeds=f, literal=True)))
        # The real exporters' files check_onnx_torch.py makes into the cache, when it has.
        torch_dir = check_onnx_torch.cache_dir()
        for name in TORCH_EXPORTS:
            path = os.path.join(torch_dir, name + ".onnx")
            if os.path.isfile(path):
                cases.append(("roundtrip-torch-" + name, lambda n=name, p=path: check_roundtrip(
                    tool, n, None, os.path.join(args.work, "roundtrip-torch-" + n), p)))
            else:
                cases.append(("roundtrip-torch-" + name, lambda p=path: (
                    True, "# SKIP %s is not made yet (meson test onnx-torch-exports makes it)"
                    % p)))
        cases.append(("refuse-topk", lambda: check_refusal(
            tool, args.fixtures, os.path.join(args.work, "refuse-topk"))))
    cases = [(n, f) for n, f in cases if not args.only or args.only in n]

    print("1..%d" % len(cases))
    failed = refused = 0
    for i, (name, fn) in enumerate(cases, 1):
        ok, text = fn()
        failed += not ok
        refused += text.startswith("refused")
        if not text.startswith("# SKIP"):
            text = text.replace("#", "No.")
        print("%s %d - %s %s" % ("ok" if ok else "not ok", i, name, text))
        sys.stdout.flush()
    print("# %d of %d cases pass (%d of them refused, naming the node and op)"
          % (len(cases) - failed, len(cases), refused))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
