#!/usr/bin/env python3
"""QDQ int8 models (QuantizeLinear / DequantizeLinear around float ops) through `hybridinfer run`,
against ONNX Runtime.

    check_onnx_qdq.py TOOL WORK_DIR [--bench-dir DIR]

Makes at test time a small seeded CNN (Conv + Relu, a strided Conv, a residual block with Add,
MaxPool, GlobalAveragePool, Gemm) and quantizes it with onnxruntime.quantization.quantize_static
in QDQ format from seeded calibration images: uint8 asymmetric activations (its default) and int8
symmetric ones (extra_options ActivationSymmetric=True), int8 symmetric weights per channel.  A
second one keeps each BatchNormalization apart from its Conv, as MXNet's ONNX export writes them
(int8 only: its BatchNorms must fold into the int8 layers).

Two ways to run a QDQ file, both checked in hybrid and imperative mode:

**int8** (the tool's default, --qdq int8): the pairs' scales become the ranges of the int8
layers.  The reference is real MXNet 1.9.1 running the int8 export `hybridinfer quantize FILE
-o PREFIX` writes of the same file (its ranges taken from the pairs), compared as check_int8.py
compares MXNet's own int8 exports: MXNet's top-1, and every output within one int8 step of
MXNet's range (max|ref| / 127.5) but for 0.1% of them (imperative mode's reference int8 kernels
may round a hidden layer's value the other way than oneDNN's, which MXNet runs); and the int8
layers counted.  ONNX Runtime with its default
optimisations (its own int8 kernels, its own requantization) is compared too: the test's own
CNNs must agree on top-1 and within MAX_INT8_STEPS of the last DequantizeLinear's steps; the
bench files' agreement is printed.

**float** (--qdq float): each pair computed in float as written.  The reference is ONNX Runtime
with its graph optimisations off, which computes every QuantizeLinear and DequantizeLinear as
written, in float.  Two forms of each file:

- "pow2": every scale of the file rounded to a power of two (and each int32 bias's scale made
  the product of its input's and weight's again).  Every value is then an integer times a power
  of two and every sum of products exact in float, in any order: ours must match ONNX Runtime
  within check_onnx.py's tolerance, 1e-4 * max(1, max|ort|), in hybrid and imperative mode.
- the file as quantize_static writes it.  Its scales are not powers of two, so a float sum
  rounds differently with another order of the products, and a value on the edge of a
  rounding step can quantize one step apart; later layers carry that on.  Required: the
  same top-1 class, and no output more than two of the last DequantizeLinear's steps apart.

With --bench-dir (default ~/.cache/hybridinfer/bench) the QDQ files tests/bench/compare.py
wrote (model-b1-int8.onnx of ResNet-18/50 v1, MobileNetV2, MobileNetV3-Large) are checked as the
second form when present.  Every model is also run by ONNX Runtime with its default
optimisations (its own int8 kernels, which requantize with their own rounding): max|diff| and
the top-1 agreement are printed, not required.  Prints TAP.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_int8 as int8_exports  # noqa: E402  (its comparison with MXNet)
import check_onnx  # noqa: E402

SEED = 20261202
BENCH_MODELS = ("resnet18_v1", "resnet50_v1", "mobilenetv2_1.0", "mobilenetv3_large")
MAX_STEPS = 2
MAX_INT8_STEPS = 3
INT8_MAX_FRACTION = 0.001  # check_int8.py's default allowance
SMALL_CNN_INT8_LAYERS = 5  # four convolutions and the Gemm
BN_CNN_INT8_LAYERS = 3     # two convolutions, each with its BatchNorm and Relu, and the Gemm


def small_cnn(rng):
    """1x3x32x32 -> 10 logits, float, seeded."""
    def w(*shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    inits = [("w1", w(8, 3, 3, 3, fan_in=27)), ("b1", w(8, fan_in=8) * 0.1),
             ("w2", w(16, 8, 3, 3, fan_in=72)), ("b2", w(16, fan_in=16) * 0.1),
             ("w3", w(16, 16, 3, 3, fan_in=144)), ("b3", w(16, fan_in=16) * 0.1),
             ("w4", w(16, 16, 3, 3, fan_in=144)), ("b4", w(16, fan_in=16) * 0.1),
             ("wf", w(10, 16, fan_in=16)), ("bf", w(10, fan_in=10) * 0.1)]
    n = helper.make_node
    nodes = [n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             n("Relu", ["c1"], ["r1"], name="relu1"),
             n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2],
               name="conv2"),
             n("Relu", ["c2"], ["r2"], name="relu2"),
             n("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], name="conv3"),
             n("Relu", ["c3"], ["r3"], name="relu3"),
             n("Conv", ["r3", "w4", "b4"], ["c4"], pads=[1, 1, 1, 1], name="conv4"),
             n("Add", ["c4", "r2"], ["s"], name="add"),
             n("Relu", ["s"], ["r4"], name="relu4"),
             n("MaxPool", ["r4"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
             n("GlobalAveragePool", ["p"], ["g"], name="gap"),
             n("Flatten", ["g"], ["f"], name="flatten"),
             n("Gemm", ["f", "wf", "bf"], ["y"], transB=1, name="fc")]
    graph = helper.make_graph(
        nodes, "small_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                           [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(a, k) for k, a in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def bn_cnn(rng):
    """1x3x16x16 -> 10 logits with each BatchNormalization its own node after its Conv, as
    MXNet's ONNX export writes them (quantize_static then puts a pair between the two)."""
    def w(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    def bn(c):
        return [np.abs(w(c)) + 0.5, w(c), w(c), np.abs(w(c)) + 0.5]
    arrays = {"w1": w(8, 3, 3, 3), "w2": w(8, 8, 3, 3), "wf": w(10, 8), "bf": w(10)}
    for i in (1, 2):
        for k, a in zip("gbmv", bn(8)):
            arrays["%s%d" % (k, i)] = a
    n = helper.make_node
    nodes = []
    for i, src in ((1, "x"), (2, "r1")):
        nodes += [n("Conv", [src, "w%d" % i], ["c%d" % i], pads=[1, 1, 1, 1]),
                  n("BatchNormalization", ["c%d" % i] + [k + str(i) for k in "gbmv"],
                    ["n%d" % i]),
                  n("Relu", ["n%d" % i], ["r%d" % i])]
    nodes += [n("GlobalAveragePool", ["r2"], ["g"]), n("Flatten", ["g"], ["f"]),
              n("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "bn_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(a, k) for k, a in arrays.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def quantize(src, dst, calib, symmetric):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8 if symmetric else QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True,
                    extra_options={"ActivationSymmetric": symmetric})


def pow2_scales(m):
    """Rounds every Q/DQ scale to a power of two, then makes each int32 bias's scale the
    product of its Conv's or Gemm's input and weight scales again, as quantize_static made it
    (the integers stay as they are: the model changes, its form does not)."""
    inits = {t.name: t for t in m.graph.initializer}
    scales = set()
    for node in m.graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear"):
            scales.add(node.input[1])
    for name in scales:
        a = numpy_helper.to_array(inits[name]).astype(np.float64)
        a = np.exp2(np.round(np.log2(a))).astype(np.float32)
        inits[name].CopyFrom(numpy_helper.from_array(a, name))
    producer = {o: node for node in m.graph.node for o in node.output}
    for node in m.graph.node:
        if node.op_type not in ("Conv", "Gemm") or len(node.input) < 3:
            continue
        dq = [producer.get(i) for i in node.input[:3]]
        if not all(d is not None and d.op_type == "DequantizeLinear" for d in dq):
            continue
        xs = numpy_helper.to_array(inits[dq[0].input[1]])
        ws = numpy_helper.to_array(inits[dq[1].input[1]])
        name = dq[2].input[1]
        inits[name].CopyFrom(numpy_helper.from_array((xs * ws).astype(np.float32), name))
    return m


def last_step(m):
    """The scale of the graph output's DequantizeLinear (the output's quantization step)."""
    producer = {o: node for node in m.graph.node for o in node.output}
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    node = producer.get(m.graph.output[0].name)
    while node is not None and node.op_type != "DequantizeLinear":
        node = producer.get(node.input[0])
    return float(np.max(inits[node.input[1]])) if node is not None else None


def ort_run(path, feeds, literal):
    return np.asarray(check_onnx.ort_outputs(path, feeds, literal)[0], dtype=np.float64)


def ours(tool, case_dir, path, feeds, mode, qdq="float"):
    proc, out_dir = check_onnx.run_tool(tool, path, feeds, case_dir, mode, qdq)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "%s: exit %d: %s" % (mode, proc.returncode, err[-1] if err else "")
    return np.load(os.path.join(out_dir, "output0.npy")).astype(np.float64), None


def check(tool, case_dir, path, feeds, exact):
    """exact: within check_onnx.py's tolerance; else top-1 and MAX_STEPS output steps."""
    ref = ort_run(path, feeds, literal=True)
    fused = ort_run(path, feeds, literal=False)
    step = last_step(onnx.load(path))
    ok, parts = True, []
    for mode in ("hybrid", "imperative"):
        got, err = ours(tool, case_dir, path, feeds, mode)
        if err:
            return False, err
        if exact:
            good, text = check_onnx.compare(got, ref)
        else:
            diff = float(np.max(np.abs(got - ref)))
            same_top = int(np.argmax(got)) == int(np.argmax(ref))
            good = same_top and step is not None and diff <= MAX_STEPS * step * (1 + 1e-6)
            text = "max|diff| %.3g (%.2f output steps of %.3g, %d of %d outputs apart), " \
                "top-1 %s" % (diff, diff / step if step else float("nan"), step or 0,
                              int(np.sum(got != ref)), ref.size,
                              "agrees" if same_top else "differs")
        ok = ok and good
        parts.append("%s %s" % (mode, text))
    got, _ = ours(tool, case_dir, path, feeds, "hybrid")
    parts.append("ORT's int8 kernels: max|diff| %.3g, top-1 %s" % (
        float(np.max(np.abs(got - fused))),
        "agrees" if int(np.argmax(got)) == int(np.argmax(fused)) else "differs"))
    return ok, "; ".join(parts)


MXNET_RUN = r"""
import os, sys
import numpy as np
os.environ["MXNET_MKLDNN_ENABLED"] = "1"
import mxnet as mx
prefix, name, x, out = sys.argv[1:5]
net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", [name], prefix + "-0000.params")
net.hybridize(static_alloc=True, static_shape=True)
np.save(out, net(mx.nd.array(np.load(x))).asnumpy())
"""


def mxnet_int8(tool, case_dir, path, feeds):
    """-> (MXNet's output of the int8 export `quantize` writes of the file, None), or (None,
    why not)."""
    import subprocess
    prefix = os.path.join(case_dir, "mxnet-int8", "model")
    proc = subprocess.run([tool, "quantize", path, "-o", prefix], capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=check_onnx.TIMEOUT_S)
    if proc.returncode != 0:
        return None, "quantize: exit %d: %s" % (proc.returncode, proc.stderr.decode().strip())
    (name, x), = feeds.items()
    xf, out = os.path.join(case_dir, "mx-in.npy"), os.path.join(case_dir, "mx-out.npy")
    np.save(xf, x)
    # its own process: MXNet's and ONNX Runtime's OpenMP runtimes are not mixed in one
    proc = subprocess.run([sys.executable, "-c", MXNET_RUN, prefix, name, xf, out],
                          capture_output=True, stdin=subprocess.DEVNULL,
                          timeout=check_onnx.TIMEOUT_S)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "MXNet: exit %d: %s" % (proc.returncode, err[-1] if err else "")
    return np.load(out).astype(np.float64), None


def int8_layers(stderr):
    """The tool's count of int8 layers (its "int8: N int8 layers" line), or -1."""
    import re
    m = re.search(r": int8: (\d+) int8 layer", stderr)
    return int(m.group(1)) if m else -1


def check_int8(tool, case_dir, path, feeds, layers=None):
    """Ours on the int8 layers against MXNet running the int8 export of the same file; ONNX
    Runtime's int8 kernels compared (required within MAX_INT8_STEPS when `layers` is given,
    for the test's own models, else printed)."""
    ref, err = mxnet_int8(tool, case_dir, path, feeds)
    if err:
        return False, err
    ok, parts, got = True, [], None
    for mode in ("hybrid", "imperative"):
        proc, out_dir = check_onnx.run_tool(tool, path, feeds, case_dir, mode, "int8")
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0:
            return False, "%s: exit %d: %s" % (mode, proc.returncode, stderr.strip())
        n = int8_layers(stderr)
        got = np.load(os.path.join(out_dir, "output0.npy")).astype(np.float64)
        good, text = int8_exports.compare(got, ref, INT8_MAX_FRACTION)
        if layers is not None and n != layers:
            good, text = False, "%d int8 layers, %d expected; %s" % (n, layers, text)
        ok = ok and good
        parts.append("%s vs MXNet's int8 run: %s (%d int8 layers)" % (mode, text, n))
    fused = ort_run(path, feeds, literal=False)
    step = last_step(onnx.load(path))
    diff = float(np.max(np.abs(got - fused)))
    same_top = int(np.argmax(got)) == int(np.argmax(fused))
    parts.append("ORT's int8 kernels: max|diff| %.3g (%.2f output steps), top-1 %s" % (
        diff, diff / step if step else float("nan"), "agrees" if same_top else "differs"))
    if layers is not None:
        ok = ok and same_top and step is not None and diff <= MAX_INT8_STEPS * step * (1 + 1e-6)
    return ok, "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("work")
    ap.add_argument("--bench-dir", default=os.path.join(
        os.environ.get("HYBRIDINFER_CACHE") or os.path.expanduser("~/.cache/hybridinfer"),
        "bench"))
    ap.add_argument("--no-bench", action="store_true",
                    help="leave the bench's files out (the sanitizer build: see "
                    "tests/cli/meson.build)")
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    work = os.path.join(args.work, "qdq-models")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(SEED)
    fp32 = os.path.join(work, "small-cnn.onnx")
    onnx.save(small_cnn(rng), fp32)
    calib = rng.uniform(-1, 1, (8, 1, 3, 32, 32)).astype(np.float32).reshape(8, 3, 32, 32)
    x = {"x": rng.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)}

    cases = []
    for tag, symmetric in (("u8-asymmetric", False), ("s8-symmetric", True)):
        path = os.path.join(work, "small-cnn-qdq-%s.onnx" % tag)
        quantize(fp32, path, calib, symmetric)
        pow2 = os.path.join(work, "small-cnn-qdq-%s-pow2.onnx" % tag)
        onnx.save(pow2_scales(onnx.load(path)), pow2)
        cases.append(("small-cnn-%s-pow2" % tag, pow2, x, True))
        cases.append(("small-cnn-%s" % tag, path, x, False))
        cases.append(("int8-small-cnn-%s" % tag, path, x, "int8"))
    bn_fp32 = os.path.join(work, "bn-cnn.onnx")
    onnx.save(bn_cnn(rng), bn_fp32)
    bn_calib = rng.uniform(-1, 1, (8, 3, 16, 16)).astype(np.float32)
    bn_path = os.path.join(work, "bn-cnn-qdq-u8-asymmetric.onnx")
    quantize(bn_fp32, bn_path, bn_calib, False)
    cases.append(("int8-bn-cnn-u8-asymmetric", bn_path,
                  {"x": rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)}, "int8"))
    img = {"x": np.random.default_rng(SEED).uniform(-1, 1, (1, 3, 224, 224)).astype(
        np.float32)}
    for name in BENCH_MODELS if not args.no_bench else ():
        path = os.path.join(args.bench_dir, name, "model-b1-int8.onnx")
        if os.path.isfile(path):
            m = onnx.load(path, load_external_data=False)
            feeds = {m.graph.input[0].name: img["x"]}
            cases.append(("bench-" + name, path, feeds, False))
            cases.append(("int8-bench-" + name, path, feeds, "int8"))
        else:
            print("# %s not present (tests/bench/compare.py --int8 writes it): not checked"
                  % path)

    if args.no_bench:
        print("# the bench's QDQ files are left out (--no-bench)")
    print("1..%d" % len(cases))
    failed = 0
    for n, (name, path, feeds, exact) in enumerate(cases, 1):
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        if exact == "int8":
            layers = {"small-cnn": SMALL_CNN_INT8_LAYERS, "bn-cnn": BN_CNN_INT8_LAYERS}
            ok, text = check_int8(tool, d, path, feeds, next(
                (v for k, v in layers.items() if k in name), None))
        else:
            ok, text = check(tool, d, path, feeds, exact)
        failed += not ok
        print("%s %d - %s %s" % ("ok" if ok else "not ok", n, name, text))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
