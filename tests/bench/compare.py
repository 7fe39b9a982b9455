#!/usr/bin/env python3
"""Benchmark hybridinfer against MXNet 1.9.1, ONNX Runtime and OpenVINO on the same models.

    compare.py [--threads N] [--quick] [--repeat R] [--only SUBSTRING[,...]] [--markdown FILE]
               [--busy-neighbour [--neighbour-cpu C]] [--bf16 | --int8]

Run it with the MXNet reference venv's Python (~/.cache/hybridinfer/venv/bin/python: mxnet
1.9.1, numpy, onnx, onnxruntime, openvino; `tools/setup.sh bench` installs them all) after building
(build/tools/hybridinfer).  Without openvino in that Python the OpenVINO column is left empty
and the script says, once, how to install it.

Workloads: the seeds' 512-256-128-2 MLP at batch 1, and ResNet-18 v1, ResNet-50 v1 and
MobileNetV2 1.0 from the Gluon model zoo and GluonCV's MobileNetV3-Large (pretrained=False,
Xavier init, seeded) at batch 1 and 8 on 224x224 inputs.  Only when --only names them:
GluonCV's SSD-300 VGG16 and YOLOv3 Darknet-53 at batch 1, and the Gluon zoo's MobileNetV1
1.0 ("mobilenet1.0 b1", "... b8").  Each is exported once into the cache
($HYBRIDINFER_CACHE/bench or ~/.cache/hybridinfer/bench; never into the repository) as Gluon
export files, Gluon parameters and ONNX (mx.onnx.export_model).

Engines, each timed in its own subprocess so that thread settings apply cleanly:
  ours-hybrid, ours-imperative  `hybridinfer bench --json` on the export files
  ours-hybrid-bf16              the same with --precision bf16 (convolutions in bf16 through
                                oneDNN; needs AVX512_BF16)
  mxnet-imperative              the Gluon block as built (not hybridized)
  mxnet-hybrid                  hybridize(static_alloc=True, static_shape=True)
  onnxruntime                   CPU execution provider, all graph optimisations
  openvino                      the same ONNX file, read by openvino.Core and compiled for
                                "CPU" with PERFORMANCE_HINT=LATENCY (one stream, one
                                request), INFERENCE_NUM_THREADS=--threads and
                                INFERENCE_PRECISION_HINT=f32 (OpenVINO's default on a CPU
                                with AVX512_BF16 is bf16, which no fp32 engine here uses);
                                CPU pinning is left at OpenVINO's default (on); one
                                synchronous InferRequest.infer() per forward
  openvino-default              the same with INFERENCE_PRECISION_HINT unset: what OpenVINO
                                runs when asked nothing (bf16 on a CPU with AVX512_BF16; the
                                table prints the precision it reports)
  openvino-bf16                 the same with INFERENCE_PRECISION_HINT=bf16
ONNX Runtime has no bf16 path on x86 CPUs (its CPU execution provider computes convolutions
and GEMMs in fp32), so it appears among the fp32 peers only.
Every engine gets the same thread count: --threads for our OpenBLAS, OMP_NUM_THREADS for
MXNet (with one engine worker thread, MXNET_CPU_WORKER_NTHREADS=1, so it never runs more
compute threads than that), intra_op_num_threads for ONNX Runtime and INFERENCE_NUM_THREADS
for OpenVINO.

The first table is the one issue 11 asks for: per workload ours-hybrid, MXNet hybridized,
ONNX Runtime and OpenVINO, and "best peer / ours" (the fastest peer's median over ours: 1 or
more means ours is the fastest); the header names the CPU (/proc/cpuinfo), date, threads and
load average.  A second table has every engine and mode.

--busy-neighbour: for each workload, each engine is also timed while another process spins
in a tight loop pinned (os.sched_setaffinity) to one CPU (--neighbour-cpu, default the last
one this process may use) for the whole of that engine's run, warm-up included, and once more
on 1 thread on the quiet machine.  The third table gives the three medians, busy / quiet and
busy / 1-thread (issue 11 wants ours at most ~1.3x its single-thread time under a busy
neighbour).  Quiet and busy runs alternate, so both see the same background load.

Latency is per forward, synchronous (MXNet waits on each output), after a warm-up; the table
gives the median.  Speed-ups are "peer median / ours-hybrid median": above 1 means ours is
faster.  For the MLP, the tutorial's own measure (1000 x net(x), then waitall) is also
reported for MXNet, before and after hybridize().

--bf16: the speed-mode table instead of issue 11's: engines ours-hybrid, ours-hybrid-bf16,
onnxruntime, openvino, openvino-default, openvino-bf16 (unless --engines says otherwise), the
four convolutional networks (the MLP has no convolution), and per row both ratios: the best
fp32 peer over ours in fp32, and OpenVINO in bf16 over ours in bf16 (times: above 1 means ours
is faster).

--onnx: the ONNX path: ours on the ONNX file the peers read (model-bN.onnx, MXNet's
mx.onnx.export_model of the same export), beside ours on the Gluon export, ONNX Runtime and
OpenVINO on that file; per row "ours ONNX / ours Gluon" (1.00 when both load to the same plan,
as docs/ONNX.md says they do) and the best peer over ours on the ONNX file.
  ours-onnx                     `hybridinfer bench --model model-bN.onnx`, hybridized, fp32

--int8: the int8 table: the four convolutional networks quantized by each engine's own tool
from the same calibration set (CALIB_IMAGES seeded images, kept in the cache beside the
export; one calibration, naive min/max, per engine and model):
  ours-hybrid-int8              `hybridinfer bench` on MXNet's int8 export (below), with
                                HYBRIDINFER_DNNL=0: the quantized convolutions on our
                                reference int8 kernels
  ours-hybrid-int8-dnnl         the same as shipped: on oneDNN's int8 kernels (the default)
  ours-onnx-int8                `hybridinfer bench` on ONNX Runtime's QDQ file (below), the
                                file the ONNX peers read: its pairs' scales as the ranges of
                                our int8 layers (docs/ONNX.md, "QDQ int8 models")
  mxnet-int8                    mxnet.contrib.quantization.quantize_net_v2 (calib_mode naive,
                                quantized_dtype auto; int8 for MobileNetV3, whose hard swish
                                MXNet 1.9.1 multiplies wrongly on uint8), exported, read back as
                                a SymbolBlock, hybridize(static_alloc, static_shape), oneDNN on
  onnxruntime-int8              onnxruntime.quantization.quantize_static on the fp32 ONNX file
                                above (QDQ, uint8 activations, int8 weights per channel, MinMax)
  openvino-int8                 OpenVINO on that same QDQ file (its CPU plugin runs the
                                quantized parts in int8; INFERENCE_PRECISION_HINT=f32 for the
                                rest).  Not through NNCF: NNCF 3.x needs numpy >= 1.24, which
                                MXNet 1.9.1 cannot load, so it cannot share the reference venv.
and per row "best int8 peer / ours int8" (the fastest peer over the fastest of our runs:
above 1 means ours is faster).
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SEED = 20261122
WORKER_TIMEOUT_S = 3600

MODELS = {
    # name: (constructor, input shape without the batch)
    "mlp": ("mlp", (512,)),
    "resnet18_v1": ("zoo", (3, 224, 224)),
    "resnet50_v1": ("zoo", (3, 224, 224)),
    "mobilenetv2_1.0": ("zoo", (3, 224, 224)),
    # GluonCV's classifier (hard-swish, squeeze-excitation), pretrained=False
    "mobilenetv3_large": ("gluoncv-classifier", (3, 224, 224)),
    # MobileNetV1: thirteen depthwise + pointwise pairs (our "depthwise+pointwise" chain)
    "mobilenet1.0": ("zoo", (3, 224, 224)),
    # GluonCV detectors at their usual sizes (issue 12), pretrained=False: whole graphs,
    # NMS included, which MXNet's ONNX exporter does not take (their peer columns say so)
    "ssd_300_vgg16_atrous_voc": ("gluoncv", (3, 300, 300)),
    "yolo3_darknet53_voc": ("gluoncv", (3, 416, 416)),
}
WORKLOADS = [("mlp", 1), ("resnet18_v1", 1), ("resnet18_v1", 8),
             ("resnet50_v1", 1), ("resnet50_v1", 8),
             ("mobilenetv2_1.0", 1), ("mobilenetv2_1.0", 8),
             ("mobilenetv3_large", 1), ("mobilenetv3_large", 8)]
# Only when --only names them: the detectors (a forward takes a good part of a second) and
# MobileNetV1 (not in issue 11's table).
DETECTOR_WORKLOADS = [("ssd_300_vgg16_atrous_voc", 1), ("yolo3_darknet53_voc", 1)]
NAMED_ONLY_WORKLOADS = DETECTOR_WORKLOADS + [("mobilenet1.0", 1), ("mobilenet1.0", 8)]
# The first six are issue 11's (the full table's columns); the last three compute in bf16
# where the CPU has it (--bf16's table).
ENGINES = ["ours-hybrid", "ours-imperative", "mxnet-hybrid", "mxnet-imperative",
           "onnxruntime", "openvino", "ours-hybrid-bf16", "openvino-default", "openvino-bf16"]
FULL_TABLE_ENGINES = ENGINES[:6]
# Engines that compute in fp32: the peers of "best fp32 peer" (ONNX Runtime has no bf16 CPU
# path on x86, so it is fp32 whatever it is asked).
FP32_PEERS = ["mxnet-hybrid", "mxnet-imperative", "onnxruntime", "openvino"]
BF16_ENGINES = ["ours-hybrid", "ours-hybrid-bf16", "onnxruntime", "openvino",
                "openvino-default", "openvino-bf16"]
# --int8's engines: ours on MXNet's int8 export (reference kernels, then oneDNN's) and each
# peer on its own quantization of the same model from the same calibration images.
INT8_ENGINES = ["ours-hybrid-int8", "ours-hybrid-int8-dnnl", "ours-onnx-int8", "mxnet-int8",
                "onnxruntime-int8", "openvino-int8"]
INT8_OURS = ["ours-hybrid-int8", "ours-hybrid-int8-dnnl", "ours-onnx-int8"]
INT8_PEERS = ["mxnet-int8", "onnxruntime-int8", "openvino-int8"]
ENGINES += INT8_ENGINES
ONNX_ENGINES = ["ours-hybrid", "ours-onnx", "onnxruntime", "openvino"]
ENGINES += ["ours-onnx"]
CALIB_IMAGES = 8
CALIB_SEED = SEED + 1
# INFERENCE_PRECISION_HINT per OpenVINO engine; None leaves it unset (OpenVINO's default).
OPENVINO_PRECISION = {"openvino": "f32", "openvino-default": None, "openvino-bf16": "bf16",
                      "openvino-int8": "f32"}
# The peer table (issue 11): engine, column title; the peers are everything after ours.
PEER_COLUMNS = [("ours-hybrid", "ours"), ("mxnet-hybrid", "MXNet %s"),
                ("onnxruntime", "ONNX Runtime %s"), ("openvino", "OpenVINO %s")]
OPENVINO_INSTALL = "'numpy<1.24' openvino"


# ---- worker side: runs inside a fresh subprocess ----------------------------------------

def build_net(model):
    import mxnet as mx
    from mxnet.gluon import nn
    if MODELS[model][0] == "mlp":
        net = nn.HybridSequential()
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"),
                nn.Dense(2))
        return net
    if MODELS[model][0] == "gluoncv":
        from gluoncv import model_zoo
        return model_zoo.get_model(model, pretrained=False, pretrained_base=False)
    if MODELS[model][0] == "gluoncv-classifier":  # takes no pretrained_base
        from gluoncv import model_zoo
        return model_zoo.get_model(model, pretrained=False)
    return mx.gluon.model_zoo.vision.get_model(model, pretrained=False)


def random_input(shape):
    import numpy as np
    rng = np.random.default_rng(SEED)
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def patch_onnx_mapping():
    """MXNet 1.9.1's exporter imports onnx.mapping, which onnx 1.15 removed; the helper
    functions that replaced it answer the same questions."""
    import types
    import numpy as np
    import onnx
    from onnx import helper
    if hasattr(onnx, "mapping"):
        return

    class NpToTensor(dict):
        def __missing__(self, key):
            return helper.np_dtype_to_tensor_dtype(np.dtype(key))

    class TensorToNp(dict):
        def __missing__(self, key):
            return helper.tensor_dtype_to_np_dtype(key)

    mapping = types.ModuleType("onnx.mapping")
    mapping.NP_TYPE_TO_TENSOR_TYPE = NpToTensor()
    mapping.TENSOR_TYPE_TO_NP_TYPE = TensorToNp()
    sys.modules["onnx.mapping"] = mapping
    onnx.mapping = mapping


def export_onnx(prefix, shape, path):
    """-> None, or why the export failed."""
    import numpy as np
    try:
        patch_onnx_mapping()
        import mxnet as mx
        import onnx
        mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [shape],
                             [np.float32], path)
        m = onnx.load(path)
        # The exporter stamps the installed onnx's newest IR and opset, which ONNX Runtime
        # may not read yet; its op translations only go up to opset 13.
        m.ir_version = 8
        for op in m.opset_import:
            if op.domain in ("", "ai.onnx"):
                op.version = min(op.version, 13)
        # Weights listed as graph inputs could be overridden at run time, so ONNX Runtime
        # will not fold them (no BatchNorm folding): keep them initializers only.
        inits = {i.name for i in m.graph.initializer}
        keep = [i for i in m.graph.input if i.name not in inits]
        del m.graph.input[:]
        m.graph.input.extend(keep)
        onnx.checker.check_model(m)
        onnx.save(m, path)
        return None
    except Exception as e:  # noqa: BLE001 — any failure is a table entry, not a crash
        if os.path.exists(path):
            os.remove(path)
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")


def worker_export(args):
    import mxnet as mx
    import numpy as np
    model, d = args["model"], args["dir"]
    os.makedirs(d, exist_ok=True)
    mx.random.seed(SEED)
    np.random.seed(SEED)
    net = build_net(model)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.array(random_input((1,) + MODELS[model][1])))
    prefix = os.path.join(d, "model")
    net.export(prefix, epoch=0)
    net.save_parameters(os.path.join(d, "gluon.params"))
    onnx_errors = {}
    for batch in args["batches"]:
        err = export_onnx(prefix, (batch,) + MODELS[model][1],
                          os.path.join(d, "model-b%d.onnx" % batch))
        if err:
            onnx_errors[str(batch)] = err
    return {"mxnet": mx.__version__, "seed": SEED, "onnx_errors": onnx_errors}


def summarize(times_s):
    ms = sorted(t * 1e3 for t in times_s)
    n = len(ms)
    return {"min": ms[0], "median": statistics.median(ms),
            "p90": ms[max(0, -(-9 * n // 10) - 1)], "mean": sum(ms) / n}


def time_forwards(forward, n):
    """Wall and process CPU time (every thread) of each of n forwards, like
    `hybridinfer bench`: on a busy machine a one-thread run's CPU time still
    tells how long the forward takes on an idle one."""
    wall, cpu = [], []
    for _ in range(n):
        c0, t0 = time.process_time(), time.perf_counter()
        forward()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"latency_ms": summarize(wall), "cpu_ms": summarize(cpu)}


def worker_mxnet(args):
    import mxnet as mx
    net = build_net(args["model"])
    net.load_parameters(os.path.join(args["dir"], "gluon.params"))
    if args["mode"] == "hybrid":
        net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.array(random_input(tuple(args["shape"])))
    def forward():
        net(x)
        mx.nd.waitall()         # every head (detectors have three)

    for _ in range(args["warmup"]):
        forward()
    res = time_forwards(forward, args["iterations"])
    res["version"] = mx.__version__
    return res


def worker_tutorial(args):
    """The seeds' benchmark as written: 1000 x net(x), waitall, before and after a plain
    hybridize() on one net."""
    import mxnet as mx
    net = build_net(args["model"])
    net.load_parameters(os.path.join(args["dir"], "gluon.params"))
    x = mx.nd.array(random_input(tuple(args["shape"])))
    n = args["iterations"]

    def bench():
        start = time.perf_counter()
        for _ in range(n):
            net(x)
        mx.nd.waitall()
        return time.perf_counter() - start

    net(x).wait_to_read()
    before = bench()
    net.hybridize()
    net(x).wait_to_read()
    after = bench()
    return {"imperative_s": before, "hybrid_s": after, "iterations": n}


def worker_onnxruntime(args):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = args["threads"]
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(args["onnx"], so, providers=["CPUExecutionProvider"])
    feed = {sess.get_inputs()[0].name: random_input(tuple(args["shape"]))}
    for _ in range(args["warmup"]):
        sess.run(None, feed)
    res = time_forwards(lambda: sess.run(None, feed), args["iterations"])
    res["ort"] = res["version"] = ort.__version__
    return res


def worker_openvino(args):
    import openvino as ov
    import openvino.properties as props
    import openvino.properties.hint as hints
    core = ov.Core()
    config = {hints.performance_mode: hints.PerformanceMode.LATENCY,
              props.inference_num_threads: args["threads"]}
    if args["precision"]:
        config[hints.inference_precision] = {"f32": ov.Type.f32,
                                             "bf16": ov.Type.bf16}[args["precision"]]
    compiled = core.compile_model(core.read_model(args["onnx"]), "CPU", config)
    request = compiled.create_infer_request()
    x = random_input(tuple(args["shape"]))
    for _ in range(args["warmup"]):
        request.infer({0: x})
    res = time_forwards(lambda: request.infer({0: x}), args["iterations"])
    res["version"] = ov.__version__.split("-")[0]
    settings = {}
    for key in ("PERFORMANCE_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS",
                "INFERENCE_PRECISION_HINT", "ENABLE_CPU_PINNING", "OPTIMAL_NUMBER_OF_INFER_REQUESTS"):
        try:
            settings[key] = re.sub(r"<Type: '(\w+)'>", r"\1", str(compiled.get_property(key)))
        except Exception:  # noqa: BLE001 — a property this release lacks
            pass
    res["settings"] = settings
    return res


def calibration_images(model):
    """The calibration set every engine's quantizer sees: seeded, in the model's input range."""
    import numpy as np
    rng = np.random.default_rng(CALIB_SEED)
    return rng.uniform(-1.0, 1.0, size=(CALIB_IMAGES,) + MODELS[model][1]).astype(np.float32)


def mxnet_int8_dtype(model):
    """quantize_net_v2's quantized_dtype: auto (uint8 after a ReLU), except where MXNet 1.9.1
    gets its own uint8 wrong: MobileNetV3's hard swish is a quantized elemwise_mul, which reads
    a uint8 factor as int8."""
    return "int8" if model.startswith("mobilenetv3") else "auto"


def worker_quantize(args):
    """MXNet's int8 export (quantize_net_v2) and ONNX Runtime's QDQ files, from the same
    calibration images."""
    os.environ["MXNET_MKLDNN_ENABLED"] = "1"   # the quantized ops exist only with oneDNN
    import mxnet as mx
    from mxnet.contrib import quantization
    model, d = args["model"], args["dir"]
    calib = calibration_images(model)
    net = build_net(model)
    net.load_parameters(os.path.join(d, "gluon.params"))
    net.hybridize()
    qnet = quantization.quantize_net_v2(
        net, quantized_dtype=mxnet_int8_dtype(model), quantize_mode="full",
        exclude_layers=None, calib_data=mx.io.NDArrayIter(calib, batch_size=CALIB_IMAGES // 2),
        num_calib_examples=CALIB_IMAGES, calib_mode="naive", ctx=mx.cpu(), logger=None)
    qnet.hybridize(static_alloc=True, static_shape=True)
    qnet(mx.nd.array(calib[:1]))
    os.makedirs(os.path.join(d, "int8"), exist_ok=True)
    qnet.export(os.path.join(d, "int8", "model"), epoch=0)
    errors = {}
    for batch in args["batches"]:
        src = os.path.join(d, "model-b%d.onnx" % batch)
        if not os.path.exists(src):
            continue
        err = quantize_onnx(src, os.path.join(d, "model-b%d-int8.onnx" % batch), calib, batch)
        if err:
            errors[str(batch)] = err
    return {"seed": SEED, "calib_seed": CALIB_SEED, "calib_images": CALIB_IMAGES,
            "mxnet_dtype": mxnet_int8_dtype(model), "onnx_int8_errors": errors}


def quantize_onnx(src, dst, calib, batch):
    """-> None, or why onnxruntime.quantization.quantize_static failed."""
    try:
        import onnx
        from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                              quantize_static)
        name = onnx.load(src).graph.input[0].name

        class Reader(CalibrationDataReader):
            # the file's batch is fixed: the images go in batches of its size
            def __init__(self):
                self.batches = iter([{name: calib[i:i + batch]}
                                     for i in range(0, len(calib) - batch + 1, batch)])

            def get_next(self):
                return next(self.batches, None)

        quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True)
        return None
    except Exception as e:  # noqa: BLE001 — a table entry, not a crash
        if os.path.exists(dst):
            os.remove(dst)
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")


def worker_mxnet_int8(args):
    os.environ["MXNET_MKLDNN_ENABLED"] = "1"
    import mxnet as mx
    prefix = os.path.join(args["dir"], "int8", "model")
    net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                       prefix + "-0000.params")
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.array(random_input(tuple(args["shape"])))

    def forward():
        net(x)
        mx.nd.waitall()

    for _ in range(args["warmup"]):
        forward()
    res = time_forwards(forward, args["iterations"])
    res["version"] = mx.__version__
    return res


WORKERS = {"export": worker_export, "quantize": worker_quantize, "mxnet_int8": worker_mxnet_int8, "mxnet": worker_mxnet, "tutorial": worker_tutorial,
           "onnxruntime": worker_onnxruntime, "openvino": worker_openvino}


# ---- driver side ---------------------------------------------------------------------

def cache_dir():
    base = os.environ.get("HYBRIDINFER_CACHE") or os.path.expanduser("~/.cache/hybridinfer")
    return os.path.join(base, "bench")


def blas_coretype():
    """What tools/setup.sh exports: SkylakeX kernels on any CPU with the AVX-512 subsets
    they use (OpenBLAS 0.3.21 does not know Zen 4/5)."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return os.environ["OPENBLAS_CORETYPE"]
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return None
    need = ("avx512f", "avx512bw", "avx512vl", "avx512dq")
    return "SkylakeX" if all(re.search(r"\b%s\b" % f, flags) for f in need) else None


def thread_env(threads):
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(threads), "MXNET_CPU_WORKER_NTHREADS": "1",
                "OPENBLAS_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
                "PYTHONWARNINGS": "ignore"})
    return env


def loadavg():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def loadavg3():
    try:
        return " / ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "unknown"


def cpu_name():
    """'model name (family F model M stepping S)' of the first CPU in /proc/cpuinfo."""
    info = {}
    try:
        for line in open("/proc/cpuinfo"):
            if not line.strip():
                break
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    except OSError:
        return platform.processor() or "unknown CPU"
    name = info.get("model name", platform.processor() or "unknown CPU")
    if "cpu family" in info:
        name += " (family %s model %s stepping %s)" % (
            info["cpu family"], info.get("model", "?"), info.get("stepping", "?"))
    return name


def python_has(python, module):
    return subprocess.run([python, "-c", "import " + module], capture_output=True).returncode == 0


class Neighbour:
    """A process keeping one CPU busy (tight loop, pinned) while it lives."""

    def __init__(self, cpu):
        self.cpu = cpu
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import os\nos.sched_setaffinity(0, {%d})\n"
             "while True:\n    pass\n" % cpu])
        self.t0 = time.perf_counter()
        time.sleep(0.2)   # let it be scheduled and spinning before the engine starts

    def cpu_seconds(self):
        try:
            fields = open("/proc/%d/stat" % self.proc.pid).read().rpartition(")")[2].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def stop(self):
        """-> the share of its lifetime it was on a CPU (about 1.0 if it kept its core)."""
        cpu = self.cpu_seconds()
        wall = time.perf_counter() - self.t0
        self.proc.kill()
        self.proc.wait()
        return None if cpu is None or wall <= 0 else cpu / wall


def run_json(cmd, env):
    """Runs cmd; -> (its last stdout line as JSON, None) or (None, why it failed)."""
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % WORKER_TIMEOUT_S
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
        return None, tail[:200]
    try:
        return json.loads(lines[-1]), None
    except json.JSONDecodeError:
        return None, "unreadable output: " + lines[-1][:200]


def run_worker(python, kind, args, env):
    return run_json([python, os.path.abspath(__file__), "--worker", kind, json.dumps(args)],
                    env)


def ensure_exported(python, model, batches, reexport):
    d = os.path.join(cache_dir(), model)
    stamp = os.path.join(d, "export.json")
    if not reexport and os.path.exists(stamp):
        info = json.load(open(stamp))
        if info.get("seed") == SEED and all(
                str(b) in info.get("onnx_errors", {})
                or os.path.exists(os.path.join(d, "model-b%d.onnx" % b)) for b in batches):
            return d, info
    print("exporting %s into %s" % (model, d), file=sys.stderr)
    info, err = run_worker(python, "export", {"model": model, "dir": d, "batches": batches},
                           thread_env(1))
    if err:
        raise SystemExit("export of %s failed: %s" % (model, err))
    json.dump(info, open(stamp, "w"), indent=1)
    return d, info


def ensure_quantized(python, model, d, batches, requantize):
    """MXNet's int8 export and ONNX Runtime's QDQ files beside the fp32 export (cached)."""
    stamp = os.path.join(d, "int8.json")
    if not requantize and os.path.exists(stamp):
        info = json.load(open(stamp))
        if info.get("seed") == SEED and info.get("calib_seed") == CALIB_SEED and all(
                str(b) in info.get("onnx_int8_errors", {})
                or os.path.exists(os.path.join(d, "model-b%d-int8.onnx" % b)) for b in batches):
            return info
    print("quantizing %s in %s" % (model, d), file=sys.stderr)
    info, err = run_worker(python, "quantize", {"model": model, "dir": d, "batches": batches},
                           thread_env(1))
    if err:
        return {"error": err}
    json.dump(info, open(stamp, "w"), indent=1)
    return info


def measure(engine, ctx):
    """-> result dict (latency_ms, ...) or {"error": why}."""
    shape = [ctx["batch"]] + list(MODELS[ctx["model"]][1])
    env = thread_env(ctx["threads"])
    int8 = engine in INT8_ENGINES
    if int8 and "error" in ctx.get("int8", {}):
        return {"error": "quantization failed: " + ctx["int8"]["error"]}
    if engine.startswith("ours-"):
        coretype = blas_coretype()
        if coretype:
            env["OPENBLAS_CORETYPE"] = coretype
        mode, _, precision = engine[len("ours-"):].partition("-")
        model = os.path.join(ctx["dir"], "model-symbol.json")
        if engine == "ours-onnx":  # the peers' file, through our ONNX reader
            onnx_err = ctx["onnx_errors"].get(str(ctx["batch"]))
            if onnx_err:
                return {"error": "ONNX export failed: " + onnx_err}
            model = os.path.join(ctx["dir"], "model-b%d.onnx" % ctx["batch"])
            mode, precision = "hybrid", None
        if engine == "ours-onnx-int8":  # the QDQ file the ONNX peers read
            onnx_err = ctx["int8"].get("onnx_int8_errors", {}).get(str(ctx["batch"]))
            if onnx_err:
                return {"error": "ONNX Runtime's quantization failed: " + onnx_err}
            model = os.path.join(ctx["dir"], "model-b%d-int8.onnx" % ctx["batch"])
            mode, precision = "hybrid", None
        elif int8:  # the graph itself is int8: MXNet's export, our fp32 setting
            model = os.path.join(ctx["dir"], "int8", "model-symbol.json")
            if not engine.endswith("-dnnl"):  # oneDNN's int8 kernels are the default
                env["HYBRIDINFER_DNNL"] = "0"
            precision = None
        cmd = [ctx["tool"], "bench", "--model", model,
               "--shape", "x".join(str(s) for s in shape),
               "--mode", mode, "--precision", precision or "fp32",
               "--iterations", str(ctx["iterations"]),
               "--warmup", str(ctx["warmup"]), "--threads", str(ctx["threads"]), "--json"]
        res, err = run_json(cmd, env)
    elif engine == "mxnet-int8":
        res, err = run_worker(ctx["python"], "mxnet_int8", {
            "dir": ctx["dir"], "shape": shape, "iterations": ctx["iterations"],
            "warmup": ctx["warmup"]}, env)
    elif engine.startswith("mxnet-"):
        res, err = run_worker(ctx["python"], "mxnet", {
            "model": ctx["model"], "dir": ctx["dir"], "shape": shape,
            "mode": engine[len("mxnet-"):], "iterations": ctx["iterations"],
            "warmup": ctx["warmup"]}, env)
    else:
        onnx_err = ctx["onnx_errors"].get(str(ctx["batch"]))
        if onnx_err:
            return {"error": "ONNX export failed: " + onnx_err}
        if engine.startswith("openvino") and not ctx.get("have_openvino", True):
            return {"error": "openvino is not installed in %s (`tools/setup.sh bench` installs it; "
                    "or: %s -m pip install %s)" % (ctx["python"], ctx["python"],
                                                   OPENVINO_INSTALL)}
        onnx_file = "model-b%d.onnx" % ctx["batch"]
        if int8:
            onnx_err = ctx["int8"].get("onnx_int8_errors", {}).get(str(ctx["batch"]))
            if onnx_err:
                return {"error": "ONNX Runtime's quantization failed: " + onnx_err}
            onnx_file = "model-b%d-int8.onnx" % ctx["batch"]
        res, err = run_worker(ctx["python"], engine.partition("-")[0], {
            "onnx": os.path.join(ctx["dir"], onnx_file),
            "shape": shape, "threads": ctx["threads"], "iterations": ctx["iterations"],
            "warmup": ctx["warmup"], "precision": OPENVINO_PRECISION.get(engine)}, env)
    return res if res else {"error": err}


# Which time the table compares: "latency_ms" (wall) or "cpu_ms" (--metric cpu).
METRIC = "latency_ms"


def median_of(res):
    return None if not res or "error" in res or METRIC not in res else res[METRIC]["median"]


def better(a, b):
    """The run with the lower median (best of --repeat); errors lose."""
    if median_of(a) is None:
        return b
    if median_of(b) is None:
        return a
    return b if median_of(b) < median_of(a) else a


def fmt_ms(v):
    if v is None:
        return "—"
    return "%.4f" % v if v < 0.1 else "%.3f" % v if v < 1 else "%.2f" % v if v < 100 else "%.1f" % v


def fmt_ratio(num, den):
    return "—" if num is None or den is None or den == 0 else "%.2f×" % (num / den)


def fmt_mib(v):
    return "—" if v is None else "%.3g" % (v / 1048576.0)


def markdown_table(rows):
    head = ("| workload | ours hybrid | ours imperative | MXNet hybrid | MXNet imperative "
            "| ORT | OpenVINO | ours hyb vs ours imp | ours hyb vs MXNet hyb "
            "| ours hyb vs MXNet imp | ours hyb vs ORT | ours hyb vs OpenVINO "
            "| MXNet hyb vs MXNet imp | arena / naive / lower bound (MiB) | load |")
    out = [head, "|" + "|".join(["---"] + ["---:"] * 12 + ["---", "---"]) + "|"]
    notes = []
    for row in rows:
        r = row["results"]
        m = {e: median_of(r.get(e)) for e in FULL_TABLE_ENGINES}
        hyb = m["ours-hybrid"]
        cells = [fmt_ms(m[e]) for e in FULL_TABLE_ENGINES]
        for e in FULL_TABLE_ENGINES:
            if r.get(e) and "error" in r[e]:
                notes.append("%s, %s: %s" % (row["label"], e, r[e]["error"]))
        oh = r.get("ours-hybrid") or {}
        mem = "%s / %s / %s" % (fmt_mib(oh.get("arena_bytes")), fmt_mib(oh.get("naive_bytes")),
                                fmt_mib(oh.get("lower_bound_bytes")))
        loads = [res.get("load_before") for res in r.values()]
        loads = [l for l in loads if l is not None]
        load = "%.1f–%.1f" % (min(loads), max(loads)) if loads else "?"
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["label"], " | ".join(cells),
            fmt_ratio(m["ours-imperative"], hyb), fmt_ratio(m["mxnet-hybrid"], hyb),
            fmt_ratio(m["mxnet-imperative"], hyb), fmt_ratio(m["onnxruntime"], hyb),
            fmt_ratio(m["openvino"], hyb),
            fmt_ratio(m["mxnet-imperative"], m["mxnet-hybrid"]), mem, load))
    return out, notes


def load_range(results):
    loads = [res.get("load_before") for res in results if res]
    loads = [l for l in loads if l is not None]
    return "?" if not loads else "%.1f–%.1f" % (min(loads), max(loads))


def versions(rows):
    """engine -> the version its worker reported (first one seen)."""
    out = {}
    for row in rows:
        for e, res in row["results"].items():
            if res and res.get("version") and e not in out:
                out[e] = res["version"]
    return out


def peer_table(rows):
    """Issue 11's table: ours, MXNet hybridized, ORT, OpenVINO, best peer / ours."""
    ver = versions(rows)
    titles = [t % ver.get(e, "").strip() if "%s" in t else t for e, t in PEER_COLUMNS]
    out = ["| workload | " + " | ".join(t.strip() for t in titles)
           + " | best peer / ours | load |",
           "|---|" + "---:|" * (len(PEER_COLUMNS) + 1) + "---|"]
    for row in rows:
        r = row["results"]
        m = [median_of(r.get(e)) for e, _ in PEER_COLUMNS]
        peers = [v for v in m[1:] if v is not None]
        best = "—" if m[0] is None or not peers else "%.2f" % (min(peers) / m[0])
        out.append("| %s | %s | %s | %s |" % (
            row["label"], " | ".join(fmt_ms(v) for v in m), best,
            load_range([r.get(e) for e, _ in PEER_COLUMNS])))
    return out


def neighbour_table(rows, threads, cpu):
    out = ["| workload | engine | 1 thread, quiet | %d threads, quiet | %d threads + busy "
           "neighbour | busy / quiet | busy / 1 thread | neighbour on CPU | load quiet "
           "| load busy |" % (threads, threads),
           "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for row in rows:
        if "busy" not in row:
            continue
        for e in ENGINES:
            quiet, busy, single = (median_of(row[k].get(e)) for k in ("results", "busy", "single"))
            if quiet is None and busy is None and single is None:
                continue
            share = (row["busy"].get(e) or {}).get("neighbour_share")
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                row["label"], e, fmt_ms(single), fmt_ms(quiet), fmt_ms(busy),
                fmt_ratio(busy, quiet), fmt_ratio(busy, single),
                "—" if share is None else "%d %%" % round(100 * share),
                load_range([row["results"].get(e), row["single"].get(e)]),
                load_range([row["busy"].get(e)])))
    return ["", "Busy neighbour: another process spins on CPU %d (pinned) during each busy run, "
            "warm-up included; 'neighbour on CPU' is the share of that time it ran (100 %%: "
            "it kept its core).  Ratios: the first time over the second (issue 11 asks for "
            "busy / 1 thread ≤ ~1.3 for ours)." % cpu, ""] + out


def report(rows, meta):
    what = metric_phrase()
    lines = [what + " per forward in ms (lower is better), %d threads each; best peer / "
             "ours: the fastest peer's median over ours (1 or more: ours is the fastest).  "
             "Load: the 1-minute load average when the kept runs started (the machine has "
             "%d CPUs)." % (meta["threads"], os.cpu_count() or 1), ""]
    lines += peer_table(rows)
    lines += ["", "Every engine and mode; ratios are speed-ups: the second engine's median over "
              "the first's (above 1: the first is faster).", ""]
    table, notes = markdown_table(rows)
    lines += table
    if meta.get("neighbour_cpu") is not None:
        lines += neighbour_table(rows, meta["threads"], meta["neighbour_cpu"])
        for row in rows:
            for k in ("busy", "single"):
                for e, res in row.get(k, {}).items():
                    if res and "error" in res and "error" not in (row["results"].get(e) or {}):
                        notes.append("%s, %s (%s): %s" % (row["label"], e, k, res["error"]))
    ov = [res.get("settings") for row in rows for res in [row["results"].get("openvino")]
          if res and res.get("settings")]
    if ov:
        lines += ["", "OpenVINO %s settings (as the compiled model reports them): %s." % (
            versions(rows).get("openvino", ""),
            ", ".join("%s=%s" % kv for kv in sorted(ov[0].items())))]
    for row in rows:
        t = row.get("tutorial")
        if t and "error" not in t:
            lines += ["", "MXNet, the tutorial's own measure on %s (%d × net(x), then waitall, "
                      "one process): %.4f s before hybridize(), %.4f s after: %.2f× faster."
                      % (row["label"], t["iterations"], t["imperative_s"], t["hybrid_s"],
                         t["imperative_s"] / t["hybrid_s"])]
        elif t:
            notes.append("%s, MXNet tutorial measure: %s" % (row["label"], t["error"]))
    if notes:
        lines += ["", "Not measured:"] + ["- " + n for n in notes]
    lines += ["", "Threads: %d for every engine.  Iterations: %d (MLP %d), warm-up %d, "
              "best median of %d run(s).  1-minute load average during the run: %s."
              % (meta["threads"], meta["iterations"], meta["mlp_iterations"], meta["warmup"],
                 meta["repeat"], meta["load"])]
    return "\n".join(lines)


def openvino_settings(rows, engine):
    for row in rows:
        res = row["results"].get(engine)
        if res and res.get("settings"):
            return res["settings"]
    return None


def metric_phrase():
    """What the tables' figures are, in the chosen metric."""
    return ("Median latency (wall clock)" if METRIC == "latency_ms" else
            "Median process CPU time (all threads)")


def column_titles(cols, ver):
    """Column titles, "%s" filled with each engine's version where it has one."""
    return [(t % ver.get(e, "")).replace("  ", " ") if "%s" in t else t for e, t in cols]


def error_notes(row, engines):
    """"workload, engine: why" for each of `engines` that did not run on this row."""
    r = row["results"]
    return ["%s, %s: %s" % (row["label"], e, r[e]["error"])
            for e in engines if r.get(e) and "error" in r[e]]


def table_footer(notes, meta):
    """What did not run, then how every engine was run."""
    lines = ["", "Not measured:"] + ["- " + n for n in notes] if notes else []
    return lines + ["", "Threads: %d for every engine.  Iterations: %d, warm-up %d, best "
                    "median of %d run(s), the engines interleaved.  1-minute load average "
                    "during the run: %s." % (meta["threads"], meta["iterations"],
                                             meta["warmup"], meta["repeat"], meta["load"])]


def bf16_report(rows, meta):
    """The bf16 table in the chosen metric, then in the other one (the same runs: the
    best of --repeat by the chosen one).  On a loaded machine wall clock mostly measures
    the neighbours; CPU time what each engine computed."""
    global METRIC
    chosen = METRIC
    other = "cpu_ms" if chosen == "latency_ms" else "latency_ms"
    try:
        METRIC = other
        second = bf16_table(rows, meta)
    finally:
        METRIC = chosen
    return bf16_table(rows, meta) + "\n\nThe same runs, " + second[0].lower() + second[1:]


def bf16_table(rows, meta):
    """The speed mode beside fp32: per workload ours and the fp32 peers, ours and OpenVINO
    in bf16, and the two ratios (times; above 1: ours is faster)."""
    what = metric_phrase()
    ver = versions(rows)
    default_precision = (openvino_settings(rows, "openvino-default") or {}).get(
        "INFERENCE_PRECISION_HINT", "?")
    lines = [what + " per forward in ms (lower is better), %d threads each, best median of "
             "%d round(s).  Best fp32 peer / ours fp32: the fastest of MXNet, ONNX Runtime and "
             "OpenVINO (f32) that ran, over ours in fp32; OpenVINO bf16 / ours bf16: OpenVINO "
             "with INFERENCE_PRECISION_HINT=bf16 over ours with --precision bf16.  ONNX Runtime "
             "has no bf16 path on x86 CPUs (its CPU execution provider runs convolutions and "
             "GEMMs in fp32), so it has no bf16 column.  OpenVINO default: no precision hint "
             "(it ran in %s)." % (meta["threads"], meta["repeat"], default_precision), ""]
    cols = [("ours-hybrid", "ours fp32"), ("onnxruntime", "ONNX Runtime %s fp32"),
            ("openvino", "OpenVINO %s f32"), (None, "**best fp32 peer / ours fp32**"),
            ("ours-hybrid-bf16", "ours bf16"), ("openvino-default", "OpenVINO default"),
            ("openvino-bf16", "OpenVINO bf16"), (None, "**OpenVINO bf16 / ours bf16**"),
            (None, "ours fp32 / ours bf16")]
    titles = column_titles(cols, ver)
    lines += ["| workload | " + " | ".join(titles) + " | load |",
              "|---|" + "---:|" * len(cols) + "---|"]
    notes = []
    for row in rows:
        r = row["results"]
        m = {e: median_of(r.get(e)) for e in ENGINES}
        notes += error_notes(row, ENGINES)
        peers = [m[e] for e in FP32_PEERS if m.get(e) is not None]
        best = min(peers) if peers else None
        cells = [fmt_ms(m["ours-hybrid"]), fmt_ms(m["onnxruntime"]), fmt_ms(m["openvino"]),
                 "**%s**" % fmt_ratio(best, m["ours-hybrid"]), fmt_ms(m["ours-hybrid-bf16"]),
                 fmt_ms(m["openvino-default"]), fmt_ms(m["openvino-bf16"]),
                 "**%s**" % fmt_ratio(m["openvino-bf16"], m["ours-hybrid-bf16"]),
                 fmt_ratio(m["ours-hybrid"], m["ours-hybrid-bf16"])]
        lines.append("| %s | %s | %s |" % (row["label"], " | ".join(cells),
                                           load_range(list(r.values()))))
    for e in ("openvino", "openvino-default", "openvino-bf16"):
        st = openvino_settings(rows, e)
        if st:
            lines.append("")
            lines.append("%s settings (as the compiled model reports them): %s." % (
                e, ", ".join("%s=%s" % kv for kv in sorted(st.items()))))
    return "\n".join(lines + table_footer(notes, meta))


def onnx_report(rows, meta):
    """Ours on the ONNX file beside ours on the Gluon export and the peers on that file."""
    what = metric_phrase()
    ver = versions(rows)
    lines = [what + " per forward in ms (lower is better), %d threads each, best median of "
             "%d round(s), fp32.  Every engine but \"ours Gluon\" reads the same ONNX file "
             "(MXNet's mx.onnx.export_model of the Gluon export).  Ours ONNX / ours Gluon: "
             "1.00 means the ONNX path costs nothing; best peer / ours ONNX: above 1 means "
             "ours is faster on the peers' own file." % (meta["threads"], meta["repeat"]), ""]
    cols = [("ours-onnx", "ours ONNX"), ("ours-hybrid", "ours Gluon"),
            ("onnxruntime", "ONNX Runtime %s"), ("openvino", "OpenVINO %s f32"),
            (None, "ours ONNX / ours Gluon"), (None, "**best peer / ours ONNX**")]
    titles = column_titles(cols, ver)
    lines += ["| workload | " + " | ".join(titles) + " | load |",
              "|---|" + "---:|" * len(cols) + "---|"]
    notes = []
    for row in rows:
        r = row["results"]
        m = {e: median_of(r.get(e)) for e in ENGINES}
        notes += error_notes(row, ONNX_ENGINES)
        peers = [m[e] for e in ("onnxruntime", "openvino") if m.get(e) is not None]
        best = min(peers) if peers else None
        cells = [fmt_ms(m["ours-onnx"]), fmt_ms(m["ours-hybrid"]), fmt_ms(m["onnxruntime"]),
                 fmt_ms(m["openvino"]), fmt_ratio(m["ours-onnx"], m["ours-hybrid"]),
                 "**%s**" % fmt_ratio(best, m["ours-onnx"])]
        lines.append("| %s | %s | %s |" % (row["label"], " | ".join(cells),
                                           load_range(list(r.values()))))
    return "\n".join(lines + table_footer(notes, meta))


def int8_report(rows, meta):
    """The int8 table in the chosen metric, then in the other (as bf16_report)."""
    global METRIC
    chosen = METRIC
    try:
        METRIC = "cpu_ms" if chosen == "latency_ms" else "latency_ms"
        second = int8_table(rows, meta)
    finally:
        METRIC = chosen
    return int8_table(rows, meta) + "\n\nThe same runs, " + second[0].lower() + second[1:]


def int8_table(rows, meta):
    """Per workload every int8 engine and the ratio (times; above 1: ours is faster)."""
    what = metric_phrase()
    ver = versions(rows)
    lines = [what + " per forward in ms (lower is better), %d threads each, best median of "
             "%d round(s), int8 throughout, every engine quantizing from the same %d "
             "calibration images.  Best int8 peer / ours int8: the fastest of MXNet, ONNX "
             "Runtime and OpenVINO in int8 over the fastest of our int8 runs (MXNet's export on "
             "our reference kernels, on oneDNN's; the peers' QDQ file)." % (meta["threads"], meta["repeat"], CALIB_IMAGES), ""]
    cols = [("ours-hybrid-int8", "ours int8"), ("ours-hybrid-int8-dnnl", "ours int8 oneDNN"),
            ("ours-onnx-int8", "ours on the QDQ file"), ("mxnet-int8", "MXNet %s int8"), ("onnxruntime-int8", "ONNX Runtime %s QDQ"),
            ("openvino-int8", "OpenVINO %s QDQ")]
    titles = column_titles(cols, ver)
    lines += ["| workload | " + " | ".join(titles) + " | **best int8 peer / ours int8** "
              "| load |", "|---|" + "---:|" * (len(cols) + 1) + "---|"]
    notes = []
    for row in rows:
        r = row["results"]
        m = {e: median_of(r.get(e)) for e in INT8_ENGINES}
        notes += error_notes(row, INT8_ENGINES)
        ours = [m[e] for e in INT8_OURS if m[e] is not None]
        peers = [m[e] for e in INT8_PEERS if m[e] is not None]
        ratio = fmt_ratio(min(peers) if peers else None, min(ours) if ours else None)
        lines.append("| %s | %s | **%s** | %s |" % (
            row["label"], " | ".join(fmt_ms(m[e]) for e, _ in cols), ratio,
            load_range([r.get(e) for e in INT8_ENGINES])))
    st = openvino_settings(rows, "openvino-int8")
    if st:
        lines += ["", "openvino-int8 settings (as the compiled model reports them): %s." % (
            ", ".join("%s=%s" % kv for kv in sorted(st.items())))]
    return "\n".join(lines + table_footer(notes, meta))


def git_revision():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" with uncommitted work" if dirty else "")
    except OSError:
        return "unknown"


def default_python():
    base = os.environ.get("HYBRIDINFER_CACHE") or os.path.expanduser("~/.cache/hybridinfer")
    venv = os.path.join(base, "venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(WORKERS[sys.argv[2]](json.loads(sys.argv[3]))))
        return 0
    # A plain SIGTERM would leave the running engine behind: as SystemExit, it
    # unwinds through subprocess.run, which kills its child.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="compute threads for every engine (default: the machine's cores)")
    ap.add_argument("--iterations", type=int, help="timed forwards per model (default 100)")
    ap.add_argument("--mlp-iterations", type=int, help="timed forwards of the MLP "
                    "(default 1000, as in the seeds' tutorial)")
    ap.add_argument("--warmup", type=int, help="untimed forwards first (default 10)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run every measurement R times, interleaved; keep the best median")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 5 forwards per model, 100 of the MLP, 2 warm-up")
    ap.add_argument("--only", help="only workloads whose label contains this (or one of "
                    "these, comma-separated: --only 'resnet18_v1 b1,mlp')")
    ap.add_argument("--engines",
                    help="comma-separated subset of " + ",".join(ENGINES))
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tools", "hybridinfer"))
    ap.add_argument("--python", default=default_python(),
                    help="Python with mxnet, onnx, onnxruntime and openvino for the peers")
    ap.add_argument("--bf16", action="store_true",
                    help="the bf16 table: ours and OpenVINO in bf16 beside the fp32 engines, "
                    "on the convolutional networks (default engines: %s)" % ",".join(BF16_ENGINES))
    ap.add_argument("--int8", action="store_true",
                    help="the int8 table: ours on MXNet's int8 export beside MXNet, ONNX Runtime "
                    "and OpenVINO in int8, on the convolutional networks (default engines: %s)"
                    % ",".join(INT8_ENGINES))
    ap.add_argument("--onnx", action="store_true",
                    help="the ONNX table: ours on the peers' ONNX file beside ours on the "
                    "Gluon export, ONNX Runtime and OpenVINO (default engines: %s)"
                    % ",".join(ONNX_ENGINES))
    ap.add_argument("--busy-neighbour", action="store_true",
                    help="also time every engine with one CPU kept busy by a spinning "
                    "process, and on 1 thread on the quiet machine")
    ap.add_argument("--neighbour-cpu", type=int,
                    help="the CPU the busy neighbour is pinned to (default: the last one "
                    "this process may run on)")
    ap.add_argument("--reexport", action="store_true", help="export the models again")
    ap.add_argument("--metric", choices=["wall", "cpu"], default="wall",
                    help="compare wall-clock latency (default) or process CPU time per "
                    "forward (steadier on a busy machine; with --threads 1 it is the "
                    "latency an idle machine would show)")
    ap.add_argument("--markdown", help="also write the report here")
    ap.add_argument("--json", help="also write every raw result here")
    ap.add_argument("--with-json", help="also report the results of an earlier --json run, for "
                    "the workloads and engines this run does not measure (on a busy machine: "
                    "the peers measured while ours was still building)")
    a = ap.parse_args()
    global METRIC
    METRIC = "latency_ms" if a.metric == "wall" else "cpu_ms"
    iterations = a.iterations or (5 if a.quick else 100)
    mlp_iterations = a.mlp_iterations or (100 if a.quick else 1000)
    warmup = a.warmup if a.warmup is not None else (2 if a.quick else 10)
    if a.bf16 + a.int8 + a.onnx > 1:
        ap.error("--bf16, --int8 and --onnx are different tables: choose one")
    default_engines = (BF16_ENGINES if a.bf16 else INT8_ENGINES if a.int8
                       else ONNX_ENGINES if a.onnx else FULL_TABLE_ENGINES)
    engines = [e for e in (a.engines or ",".join(default_engines)).split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        ap.error("unknown engine(s): " + ", ".join(sorted(unknown)))
    if any(e.startswith("ours-") for e in engines) and not os.access(a.tool, os.X_OK):
        ap.error("%s is not built (ninja -C build)" % a.tool)
    have_openvino = (not any(e.startswith("openvino") for e in engines)
                     or python_has(a.python, "openvino"))
    if not have_openvino:
        print("OpenVINO is not installed in %s: its column stays empty.  `tools/setup.sh "
              "bench` installs it, or: %s -m pip install %s" % (a.python, a.python, OPENVINO_INSTALL),
              file=sys.stderr)
    neighbour_cpu = None
    if a.busy_neighbour:
        allowed = sorted(os.sched_getaffinity(0))
        neighbour_cpu = a.neighbour_cpu if a.neighbour_cpu is not None else allowed[-1]
        if neighbour_cpu not in allowed:
            ap.error("--neighbour-cpu %d: not one of this process's CPUs %s"
                     % (neighbour_cpu, allowed))
    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    load_at_start = loadavg3()

    revision = git_revision()   # now: the tree may move on during a long run
    workloads = [(m, b) for m, b in WORKLOADS + (NAMED_ONLY_WORKLOADS if a.only else [])
                 if not ((a.bf16 or a.int8 or a.onnx) and m == "mlp")
                 if not a.only or any(o and o in "%s b%d" % (m, b) for o in a.only.split(","))]
    batches = {}
    for m, b in workloads:
        batches.setdefault(m, []).append(b)
    exported = {m: ensure_exported(a.python, m, bs, a.reexport) for m, bs in batches.items()}
    quantized = ({m: ensure_quantized(a.python, m, exported[m][0], bs, a.reexport)
                  for m, bs in batches.items()}
                 if any(e in INT8_ENGINES for e in engines) else {})

    rows, loads = [], []
    for m, b in workloads:
        d, info = exported[m]
        ctx = {"model": m, "batch": b, "dir": d, "threads": a.threads, "tool": a.tool,
               "python": a.python, "onnx_errors": info.get("onnx_errors", {}),
               "iterations": mlp_iterations if m == "mlp" else iterations, "warmup": warmup,
               "have_openvino": have_openvino, "int8": quantized.get(m, {})}
        row = {"label": "%s b%d" % (m, b), "results": {}}
        # (key in row, thread count, with the neighbour?)
        passes = [("results", a.threads, False)]
        if a.busy_neighbour:
            passes += [("busy", a.threads, True), ("single", 1, False)]
            row["busy"], row["single"] = {}, {}
        for rep in range(a.repeat):
            for key, threads, busy in passes:
                for e in engines:
                    neighbour = Neighbour(neighbour_cpu) if busy else None
                    try:
                        loads.append(loadavg())
                        t0 = time.time()
                        res = measure(e, dict(ctx, threads=threads))
                    finally:
                        share = neighbour.stop() if neighbour else None
                    res["load_before"] = loads[-1]
                    if neighbour:
                        res["neighbour_share"] = share
                    row[key][e] = better(row[key].get(e), res)
                    if "error" in res:
                        got = res["error"]
                    else:
                        got = "wall %s ms, cpu %s ms" % tuple(
                            fmt_ms(res.get(k, {}).get("median"))
                            for k in ("latency_ms", "cpu_ms"))
                    what = {"results": "", "busy": " +neighbour", "single": ""}[key]
                    print("%-20s %-17s %d thr%s run %d: %s (%.0f s, load %s)" % (
                        row["label"], e, threads, what, rep + 1, got, time.time() - t0,
                        loads[-1]), file=sys.stderr)
        if m == "mlp" and "mxnet-imperative" in engines:
            res, err = run_worker(a.python, "tutorial", {
                "model": m, "dir": d, "shape": [b] + list(MODELS[m][1]),
                "iterations": mlp_iterations}, thread_env(a.threads))
            row["tutorial"] = res if res else {"error": err}
        rows.append(row)

    if a.with_json:
        earlier = {row["label"]: row for row in json.load(open(a.with_json))["rows"]}
        for row in rows:
            for e, res in earlier.get(row["label"], {}).get("results", {}).items():
                row["results"].setdefault(e, res)
                if res and res.get("load_before") is not None:
                    loads.append(res["load_before"])
    seen = [l for l in loads if l is not None]
    meta = {"threads": a.threads, "iterations": iterations, "mlp_iterations": mlp_iterations,
            "warmup": warmup, "repeat": a.repeat, "neighbour_cpu": neighbour_cpu,
            "load": "%.1f to %.1f" % (min(seen), max(seen)) if seen else "unknown",
            "cpu": cpu_name(), "started": started}
    text = (bf16_report(rows, meta) if a.bf16 else int8_report(rows, meta) if a.int8
            else onnx_report(rows, meta) if a.onnx else report(rows, meta))
    cmd = shlex.join(["tests/bench/compare.py"] + sys.argv[1:])
    blas = next((res.get("blas_core") for row in rows for res in row["results"].values()
                 if res and res.get("blas_core")), None)
    header = ["Measured %s on %s, %d CPUs (%s, %s), commit %s." % (
        started, meta["cpu"], os.cpu_count() or 1, platform.node() or "this machine",
        platform.machine(), revision),
        "Threads: %d per engine%s.  Load average (1 / 5 / 15 min): %s at the start, %s at "
        "the end." % (a.threads, ", our OpenBLAS core: %s" % blas if blas else "",
                      load_at_start, loadavg3()),
        "Command: `%s`" % cmd, ""]
    print("\n".join(header) + text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(header) + text + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
