#!/usr/bin/env python3
"""Generate the fixtures of MXNet's GPU int8 ops with real MXNet 1.9.1 (its oneDNN build).

quantize_net with ctx=gpu writes quantize_v2 -> quantized_conv (int32 sums and their range)
-> requantize -> ... -> dequantize.  The references come from MXNet's CPU kernels of those ops
(oneDNN on, MXNet's default: its requantize is the oneDNN reorder, one scale and round to even).

  op_requantize_*   _contrib_requantize alone, on int32 data made by a Cast of the float input
                    (every int32 a float32 holds: the int32 limits, ties at .5 steps, saturation),
                    calibrated or from the data's own range, int8 / uint8 / auto.
  op_quantized_conv_*  _contrib_quantized_conv (no bias) after a quantize_v2: the int32 sums
                    and their range.  uint8 data: MXNet's CPU quantized_conv reads no other
                    (its GPU one reads int8; the sums are exact either way and the range
                    depends on the ranges only).
  graph_int8_gpu_*  quantize_v2 -> quantized_conv -> requantize -> dequantize, the graph
                    quantize_net writes for ctx=gpu, with uint8 data for the same reason;
                    graph_int8_gpu_form_* with int8 data, as MXNet's GPU runs it: its
                    reference is MXNet's CPU ops node by node (gpu_form_case says how).

Each case is a directory laid out as gen_fixtures.py's (model-symbol.json, model-0000.params,
input<i>.npy, output<i>.npy, case.json); case.json says "exact": every output must be MXNet's
bit for bit (the steps are integers, the ranges one float division each).

    gen_int8_gpu_fixtures.py --out DIR [--only SUBSTRING[,...]] [--force] [--list] [--stamp FILE]

Run it with the MXNet 1.9.1 virtual environment (numpy < 1.24).
"""

import argparse
import json
import os
import sys
import time
from collections import OrderedDict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402  (sets MXNET_MKLDNN_ENABLED=0 for its own cases)

# requantize's CPU kernel is the oneDNN one in MXNet's default build; the variable is read when
# MXNet first runs an op, which has not happened yet.
os.environ["MXNET_MKLDNN_ENABLED"] = "1"
mx = gf.mx

INT32_MIN = -2.0 ** 31


def ints(lo, hi, extra=()):
    """Integers in [lo, hi] as float32, with `extra` values spread among them."""
    def gen(rng, shape):
        x = rng.randint(lo, hi + 1, size=shape).astype(np.float64)
        flat = x.reshape(-1)
        for i, v in enumerate(extra):
            flat[(7 * i + 3) % flat.size] = v
        return x.astype(np.float32)
    return gen


def requantize_case(name, shape, gen, in_range, note, **kw):
    """data (float) -> Cast(int32) -> requantize, all three outputs as heads."""
    def run(case, case_dir, rng):
        data = mx.sym.var("data")
        q = mx.sym.contrib.requantize(mx.sym.Cast(data, dtype="int32", name="to_int32"),
                                      mx.sym.var("min_range"), mx.sym.var("max_range"),
                                      name="requantize", **kw)
        inputs = OrderedDict(data=gen(rng, shape),
                             min_range=np.array([in_range[0]], np.float32),
                             max_range=np.array([in_range[1]], np.float32))
        outs = gf.write_symbol_case(case, case_dir, mx.sym.Group([q[0], q[1], q[2]]),
                                    inputs, {})
        mark_exact(case_dir)
        return outs
    gf.register("op_requantize_" + name, "int8_gpu", "op", run, op="_contrib_requantize",
                note=note)


def mark_exact(case_dir):
    """case.json gets "exact": true (written last and atomically, as gen_fixtures does)."""
    path = os.path.join(case_dir, "case.json")
    with open(path) as f:
        meta = json.load(f, object_pairs_hook=OrderedDict)
    meta["exact"] = True
    body = ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in meta.items())
    gf._atomic_write_text(path, "{\n" + body + "\n}\n")


def weights(rng, shape):
    """int8 weights over the whole range, both extremes among them."""
    w = rng.randint(-127, 128, size=shape)
    w.reshape(-1)[:2] = (-128, 127)
    return w.astype(np.int8)


def conv_params(rng, w_shape, w_range):
    return OrderedDict(weight=weights(rng, w_shape),
                       min_weight=np.array([w_range[0]], np.float32),
                       max_weight=np.array([w_range[1]], np.float32))


def quantized_conv(q, name, **conv):
    """q: a quantize_v2's three outputs -> _contrib_quantized_conv's three."""
    return mx.sym.contrib.quantized_conv(
        data=q[0], weight=mx.sym.var("weight", dtype="int8"), min_data=q[1], max_data=q[2],
        min_weight=mx.sym.var("min_weight"), max_weight=mx.sym.var("max_weight"),
        no_bias=True, name=name, **conv)


def qconv_case(name, x_shape, w_shape, w_range, calib, note, requantize=None, **conv):
    """data -> quantize_v2 (uint8: MXNet's CPU quantized_conv reads no other) ->
    quantized_conv; with `requantize` (its attributes) -> requantize -> dequantize, the
    graph quantize_net writes for the GPU, else the int32 sums and their range as heads."""
    def run(case, case_dir, rng):
        q = mx.sym.contrib.quantize_v2(mx.sym.var("data"), out_type="uint8",
                                       min_calib_range=calib[0], max_calib_range=calib[1],
                                       name="quantize")
        c = quantized_conv(q, "qconv", **conv)
        if requantize is None:
            sym = mx.sym.Group([c[0], c[1], c[2]])
        else:
            r = mx.sym.contrib.requantize(c[0], c[1], c[2], name="requantize", **requantize)
            sym = mx.sym.contrib.dequantize(r[0], r[1], r[2], out_type="float32",
                                            name="dequantize")
        data = np.abs(gf.randn(rng, x_shape, 1.5)).astype(np.float32)
        outs = gf.write_symbol_case(case, case_dir, sym, OrderedDict(data=data),
                                    conv_params(rng, w_shape, w_range))
        mark_exact(case_dir)
        return outs
    kind = "op" if requantize is None else "model"
    gf.register(name, "int8_gpu", kind, run, op="_contrib_quantized_conv", note=note)


def gpu_form_case(name, x_shape, w_shape, w_range, calib, requantize, note, **conv):
    """The graph as quantize_net writes it for the GPU, int8 data throughout: data ->
    quantize_v2 (int8) -> quantized_conv -> requantize -> dequantize.  MXNet's CPU
    quantized_conv refuses int8 data, so the reference is MXNet's CPU ops node by node:
    quantize_v2; the int32 sums by MXNet's fp32 Convolution of the int8 values (exact: every
    partial sum is an integer below 2^24, checked); their range by MXNet's quantized_conv on
    uint8 data of the same ranges (the range depends on the ranges only); requantize;
    dequantize."""
    def run(case, case_dir, rng):
        q = mx.sym.contrib.quantize_v2(mx.sym.var("data"), out_type="int8",
                                       min_calib_range=calib[0], max_calib_range=calib[1],
                                       name="quantize")
        c = quantized_conv(q, "qconv", **conv)
        r = mx.sym.contrib.requantize(c[0], c[1], c[2], name="requantize", **requantize)
        sym = mx.sym.contrib.dequantize(r[0], r[1], r[2], out_type="float32",
                                        name="dequantize")
        data = gf.randn(rng, x_shape, 1.5).astype(np.float32)
        params = conv_params(rng, w_shape, w_range)
        sym.save(os.path.join(case_dir, gf.SYMBOL_FILE))
        mx.nd.save(os.path.join(case_dir, gf.PARAMS_FILE),
                   {"arg:" + k: mx.nd.array(v, dtype=v.dtype) for k, v in params.items()})

        nd = mx.nd
        qd, qmin, qmax = nd.contrib.quantize_v2(nd.array(data), out_type="int8",
                                                min_calib_range=calib[0],
                                                max_calib_range=calib[1])
        w = params["weight"]
        bound = int(np.prod(w_shape[1:])) * 128 * 128
        if bound >= 2 ** 24:
            raise RuntimeError("%s: sums may not be exact in float32" % case.name)
        sums = nd.Convolution(qd.astype("float32"), nd.array(w.astype(np.float32)),
                              no_bias=True, **conv).astype("int32")
        wmin, wmax = nd.array(params["min_weight"]), nd.array(params["max_weight"])
        probe = nd.zeros((1, w_shape[1], w_shape[2], w_shape[3]), dtype="uint8")
        ranged = nd.contrib.quantized_conv(data=probe, weight=nd.array(w, dtype="int8"),
                                           min_data=qmin, max_data=qmax, min_weight=wmin,
                                           max_weight=wmax, no_bias=True, **conv)
        rq = nd.contrib.requantize(sums, ranged[1], ranged[2], **requantize)
        out = nd.contrib.dequantize(rq[0], rq[1], rq[2], out_type="float32")
        outs = gf.finish_case(case, case_dir, OrderedDict(data=data),
                              [out.asnumpy().astype(np.float32)])
        mark_exact(case_dir)
        return outs
    gf.register(name, "int8_gpu", "model", run, op="_contrib_quantized_conv", note=note)


def register():
    # An input range of ±2^31 makes the int32 step 1.0, a calibrated range of ±254 the int8
    # step 2: the scale is exactly 0.5 and every odd integer a tie.
    whole = (INT32_MIN, -INT32_MIN)
    requantize_case("int8_ties", (2, 3, 5, 7), ints(-400, 400), whole,
                    "scale 0.5: odd steps tie to even, saturation past +-127",
                    min_calib_range=-254.0, max_calib_range=254.0)
    requantize_case("uint8_ties", (2, 3, 5, 7), ints(-100, 600), whole,
                    "uint8 at scale 0.5: negatives to 0, saturation past 255",
                    out_type="uint8", min_calib_range=0.0, max_calib_range=510.0)
    requantize_case("auto_uint8", (2, 4, 6), ints(-3000, 3000), (-1.5, 2.25),
                    "out_type auto with a calibrated min >= 0 is uint8",
                    out_type="auto", min_calib_range=0.0, max_calib_range=2.0e-6)
    requantize_case("int8_calib", (2, 8, 5, 5), ints(-2 ** 28, 2 ** 28, (INT32_MIN, 2 ** 30)),
                    (-3.7, 5.2), "a convolution's sums, a calibrated range narrower than them",
                    min_calib_range=-0.8, max_calib_range=1.1)
    requantize_case("int8_own_range", (2, 8, 5, 5), ints(-2 ** 20, 2 ** 21), (-3.7, 5.2),
                    "no calibration: the range the data's largest magnitude stands for")
    requantize_case("uint8_own_range", (3, 50), ints(-5000, 90000), (-0.25, 0.5),
                    "no calibration, uint8", out_type="uint8")
    requantize_case("own_range_int32_min", (4, 9), ints(-1000, 1000, (INT32_MIN,)), (-1.0, 1.0),
                    "INT32_MIN's magnitude overflows MXNet's int32: the range comes out negative")
    requantize_case("dead", (2, 3, 4), ints(-50, 50, (0, 0)), (-1.0, 1.0),
                    "a calibrated range of [0, 0]: infinite scale, 0 as NaN stored as 127",
                    min_calib_range=0.0, max_calib_range=0.0)
    requantize_case("dead_uint8", (2, 3, 4), ints(-50, 50, (0, 0)), (-1.0, 1.0),
                    "a calibrated range of [0, 0] in uint8: NaN stored as 0",
                    out_type="uint8", min_calib_range=0.0, max_calib_range=0.0)

    qconv_case("op_quantized_conv_3x3", (2, 8, 9, 9), (16, 8, 3, 3), (-0.7, 0.9), (0.0, 2.5),
               "uint8 data, int8 weights: the int32 sums and their range", kernel=(3, 3),
               pad=(1, 1), num_filter=16)
    qconv_case("op_quantized_conv_strided", (1, 4, 11, 10), (8, 4, 3, 2), (-0.05, 0.03),
               (0.0, 4.0), "stride, padding and dilation", kernel=(3, 2), stride=(2, 1),
               pad=(1, 0), dilate=(2, 1), num_filter=8)
    qconv_case("graph_int8_gpu_calibrated", (2, 8, 9, 9), (16, 8, 3, 3), (-0.7, 0.9),
               (0.0, 2.5), "quantize_v2 -> quantized_conv -> requantize -> dequantize, "
               "calibrated as quantize_net writes it", requantize={"min_calib_range": -6.5,
                                                                   "max_calib_range": 7.0},
               kernel=(3, 3), pad=(1, 1), num_filter=16)
    gpu_form_case("graph_int8_gpu_form_calibrated", (2, 8, 9, 9), (16, 8, 3, 3), (-0.7, 0.9),
                  (-2.5, 2.5), {"min_calib_range": -6.5, "max_calib_range": 7.0},
                  "int8 data, as MXNet's GPU runs it; reference from MXNet's CPU ops node by "
                  "node", kernel=(3, 3), pad=(1, 1), num_filter=16)
    gpu_form_case("graph_int8_gpu_form_channels", (1, 6, 8, 7), (5, 6, 3, 2), (-0.3, 0.25),
                  (-3.0, 2.0), {}, "channels off multiples of 4 (cuDNN pads them), strided, "
                  "requantized at the sums' own range", kernel=(3, 2), stride=(2, 1),
                  pad=(1, 1), num_filter=5)
    qconv_case("graph_int8_gpu_own_range", (2, 8, 9, 9), (16, 8, 3, 3), (-0.7, 0.9),
               (0.0, 2.5), "the same graph, requantized at the sums' own range",
               requantize={}, kernel=(3, 3), pad=(1, 1), num_filter=16)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output directory (one sub-directory per case)")
    ap.add_argument("--only", help="only cases whose name contains one of these "
                    "comma-separated substrings")
    ap.add_argument("--force", action="store_true", help="regenerate cached cases")
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("--stamp", help="file to touch once every case is complete")
    args = ap.parse_args(argv)
    register()
    wanted = args.only.split(",") if args.only else [""]
    cases = [c for c in gf.CASES if c.set == "int8_gpu" and any(w in c.name for w in wanted)]
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    if not args.out:
        ap.error("--out is required")
    os.makedirs(args.out, exist_ok=True)
    failed = []
    for case in cases:
        t0 = time.time()
        try:
            if not args.force and gf.case_complete(os.path.join(args.out, case.name)):
                status = "cached"
            else:
                status = gf.generate(case, args.out, True)
        except Exception as err:
            failed.append(case.name)
            status = "FAILED: %s" % str(err).strip().splitlines()[0]
        print("%-48s %6.2fs  %s" % (case.name, time.time() - t0, status), flush=True)
    if failed:
        return 1
    if args.stamp:
        gf._atomic_write_text(args.stamp, "\n".join(c.name for c in cases) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
