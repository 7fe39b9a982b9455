#!/usr/bin/env python3
"""Layer by layer: our profile beside OpenVINO's on the same model and thread count.

    layers_vs_openvino.py MODEL [--threads N] [--batch B] [--iterations I]
                          [--precision f32|bf16|int8]

MODEL is one of compare.py's exports in the cache ($HYBRIDINFER_CACHE/bench/MODEL or
~/.cache/hybridinfer/bench/MODEL: model-symbol.json and model-bB.onnx; run compare.py once
to make them).  Run it with the venv's Python (~/.cache/hybridinfer/venv/bin/python, which
has openvino after `tools/setup.sh bench`) after building build/tools/hybridinfer.

Ours: `hybridinfer bench --profile --json` (median ms per call).  OpenVINO: the compiled
model with PERF_COUNT on, the same settings as compare.py (LATENCY, --threads), each
executed node's median real time over the iterations.  --precision bf16 runs ours with
`--precision bf16` and OpenVINO with its inference precision bf16; int8 runs compare.py's
int8 files, ours MXNet's quantize_net_v2 export (MODEL/int8) and OpenVINO the ONNX Runtime
QDQ file (model-bB-int8.onnx), as `compare.py --int8` does.  The convolutions are paired in
execution order, which holds for a chain (MobileNet) but not always across a ResNet's
branches (OpenVINO may run the shortcut's convolution first), and one of our fused calls
(pointwise+depthwise and the like) is paired with one of its nodes per part; the per-kind
totals at the end hold either way.  Reorders and the pooling OpenVINO inserts for a strided 1x1 convolution
count under "other".
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cache_model_dir(model):
    base = os.environ.get("HYBRIDINFER_CACHE") or os.path.expanduser("~/.cache/hybridinfer")
    return os.path.join(base, "bench", model)


def ours(model_dir, threads, batch, iterations, precision):
    symbol = os.path.join(model_dir, *(["int8"] if precision == "int8" else []),
                          "model-symbol.json")
    cmd = [os.path.join(ROOT, "build", "tools", "hybridinfer"), "bench", "--model", symbol,
           "--shape", "%dx3x224x224" % batch, "--threads", str(threads),
           "--iterations", str(iterations), "--profile", "--json"]
    if precision == "bf16":
        cmd += ["--precision", "bf16"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    return report["latency_ms"]["median"], [
        (l["op"], l.get("kernel") or "", l["node"], l["ms"]) for l in report["layers"]]


def onnx_file(model_dir, batch, precision):
    return os.path.join(model_dir, "model-b%d%s.onnx" % (batch,
                                                        "-int8" if precision == "int8" else ""))


def openvino(model_dir, threads, batch, iterations, precision):
    import numpy as np
    import openvino as ov
    import openvino.properties as props
    import openvino.properties.hint as hints
    config = {hints.performance_mode: hints.PerformanceMode.LATENCY,
              props.inference_num_threads: threads, "PERF_COUNT": True}
    if precision != "int8":     # int8: the QDQ file decides, as in compare.py
        config[hints.inference_precision] = {"f32": ov.Type.f32, "bf16": ov.Type.bf16}[precision]
    core = ov.Core()
    onnx = onnx_file(model_dir, batch, precision)
    request = core.compile_model(core.read_model(onnx), "CPU", config).create_infer_request()
    x = np.random.default_rng(0).random((batch, 3, 224, 224), dtype=np.float32)
    for _ in range(10):
        request.infer({0: x})
    times, walls = {}, []
    order = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        request.infer({0: x})
        walls.append((time.perf_counter() - t0) * 1e3)
        for p in request.profiling_info:
            if p.status != p.Status.EXECUTED:
                continue
            key = (p.node_name, p.node_type, p.exec_type)
            if key not in times:
                times[key] = []
                order.append(key)
            times[key].append(p.real_time.total_seconds() * 1e3)
    return statistics.median(walls), [
        (k[1], k[2], k[0], statistics.median(times[k])) for k in order]


def kind(op):
    if op in ("Convolution", "GroupConvolution", "_sg_mkldnn_conv"):
        return "convolution"
    if op in ("FullyConnected", "MatMul", "_sg_mkldnn_fully_connected"):
        return "fully connected"
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--precision", choices=("f32", "bf16", "int8"), default="f32")
    args = ap.parse_args()
    model_dir = cache_model_dir(args.model)
    if not os.path.exists(onnx_file(model_dir, args.batch, args.precision)):
        sys.exit("%s: no %s export at batch %d; run tests/bench/compare.py once%s"
                 % (model_dir, args.precision, args.batch,
                    " with --int8" if args.precision == "int8" else ""))
    our_forward, our_layers = ours(model_dir, args.threads, args.batch, args.iterations,
                                   args.precision)
    ov_forward, ov_layers = openvino(model_dir, args.threads, args.batch, args.iterations,
                                     args.precision)

    our_convs = [l for l in our_layers if kind(l[0]) == "convolution"]
    ov_convs = [l for l in ov_layers if kind(l[0]) == "convolution"]
    print("%s, batch %d, %d threads, %s: our forward %.3f ms, OpenVINO's %.3f ms (median)"
          % (args.model, args.batch, args.threads, args.precision, our_forward, ov_forward))
    print("\n  #  our layer                             our kernel           ours ms"
          "  OpenVINO kernel           its ms  ours/its")
    j = 0
    for i, a in enumerate(our_convs):
        # A fused call of ours (conv-pw-dw: "pointwise+depthwise",
        # "pointwise+depthwise+pointwise", "depthwise+pointwise") is paired with one
        # of OpenVINO's nodes per part.
        # (A bf16 segment's "+entry reorder" and "+exit reorder" are one call.)
        fused = "pointwise" in a[1] or "depthwise" in a[1]
        span = a[1].count("+") + 1 if fused else 1
        b = ov_convs[j:j + span]
        j += span
        its = sum(x[3] for x in b) if b else float("nan")
        print("%3d  %-36s %-19s %8.3f  %-24s %7.3f  %7.2f"
              % (i, a[2][-36:], a[1], a[3], "+".join(x[1] for x in b)[:24], its,
                 a[3] / its if b else float("nan")))
    if j != len(ov_convs):
        print("(%d of OpenVINO's %d convolutions paired: the pairs above are off)"
              % (j, len(ov_convs)))

    print("\nper kind          ours ms   OpenVINO ms")
    for k in ("convolution", "fully connected", "other"):
        a = sum(l[3] for l in our_layers if kind(l[0]) == k)
        b = sum(l[3] for l in ov_layers if kind(l[0]) == k)
        print("%-16s %8.3f  %11.3f" % (k, a, b))
    print("%-16s %8.3f  %11.3f" % ("all layers", sum(l[3] for l in our_layers),
                                   sum(l[3] for l in ov_layers)))


if __name__ == "__main__":
    main()
