#!/usr/bin/env python3
"""ONNX models through `hybridinfer run`, against ONNX Runtime.

    check_onnx.py TOOL WORK_DIR [--only SUBSTRING] [--zoo]

Makes every case at test time into WORK_DIR: one-op (and a few small multi-op) graphs written with
onnx.helper, attribute variants included, and with --zoo the Gluon model zoo's ResNet-18 v1 and
MobileNetV2 (seeded random weights) exported by MXNet 1.9.1's own mx.onnx.export_model.  ONNX
Runtime computes the reference outputs; the tool runs each model in hybrid and in imperative mode and every
output must hold

    max|ours - ort| <= 1e-4 * max(1, max|ort|)

With --element the GStreamer element runs them too (model=prefix.onnx), its dumped output compared
with ONNX Runtime's on the same frame.  The zoo models must also plan the same from their Gluon export and from their ONNX export: as many
kernel calls, an arena of the same size (`hybridinfer bench --json`).

Models the importer must refuse (an unknown op, an opset outside 11-19, bytes that are no protobuf)
must make the tool fail with a message naming what is wrong.  Prints TAP.  Needs the reference venv
(numpy, onnx, onnxruntime; MXNet for --zoo).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import types

import numpy as np
import onnx
import onnx.defs  # noqa: F401  (patched by onnx_mapping_shim)
from onnx import TensorProto, helper, numpy_helper

import onnx_qdq_cases

RTOL = 1e-4
TIMEOUT_S = 600
RNG = np.random.default_rng(20261202)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def model(nodes, inputs, outputs, inits=(), opset=13):
    """inputs: [(name, shape)]; outputs: [name]; inits: [(name, array)]."""
    graph = helper.make_graph(
        nodes, "case",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def one(op, inputs, inits=(), opset=13, n_out=1, **attrs):
    """One node reading the inputs then the initializers, in that order."""
    names = [n for n, _ in inputs] + [n for n, _ in inits]
    outs = ["y%d" % i for i in range(n_out)]
    return model([helper.make_node(op, names, outs, name=op.lower(), **attrs)], inputs, outs,
                 inits, opset)


def i64(*v):
    return np.array(v, dtype=np.int64)


def bn_inits(c):
    return [("scale", rand(c)), ("bias", rand(c)), ("mean", rand(c)),
            ("var", rand(c, low=0.5, high=2.0))]


# name, input shape, ("scales" | "sizes", values), attributes: each mode on an odd scale, a
# downscale, an output of 1, a 3-D input (what takes the kernels' fast paths and what does not).
RESIZE_CASES = [
    ("nearest-half-pixel-round-floor", (1, 3, 8, 8), ("scales", [1, 1, 1.5, 1.5]), {}),
    ("nearest-asymmetric-ceil", (1, 3, 8, 8), ("sizes", [1, 3, 5, 11]),
     dict(coordinate_transformation_mode="asymmetric", nearest_mode="ceil")),
    ("nearest-align-corners-round-ceil", (1, 3, 8, 8), ("sizes", [1, 3, 13, 6]),
     dict(coordinate_transformation_mode="align_corners", nearest_mode="round_prefer_ceil")),
    ("nearest-pytorch-half-pixel-floor", (1, 3, 8, 8), ("scales", [1, 1, 0.5, 2]),
     dict(coordinate_transformation_mode="pytorch_half_pixel", nearest_mode="floor")),
    ("nearest-half-pixel-x2", (1, 3, 8, 8), ("scales", [1, 1, 2, 2]),
     dict(nearest_mode="round_prefer_ceil")),
    ("linear-half-pixel-sizes", (1, 3, 8, 8), ("sizes", [1, 3, 13, 5]), dict(mode="linear")),
    ("linear-half-pixel-odd-scales", (1, 3, 8, 8), ("scales", [1, 1, 1.7, 0.6]),
     dict(mode="linear")),
    ("linear-align-corners", (1, 3, 8, 8), ("sizes", [1, 3, 15, 16]),
     dict(mode="linear", coordinate_transformation_mode="align_corners")),
    ("linear-asymmetric", (1, 3, 8, 8), ("scales", [1, 1, 2, 2]),
     dict(mode="linear", coordinate_transformation_mode="asymmetric")),
    ("linear-asymmetric-down", (1, 3, 8, 8), ("sizes", [1, 3, 3, 5]),
     dict(mode="linear", coordinate_transformation_mode="asymmetric")),
    ("linear-pytorch-half-pixel-to-1", (1, 3, 8, 8), ("sizes", [1, 3, 1, 10]),
     dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel")),
    ("linear-pytorch-half-pixel", (1, 3, 8, 8), ("scales", [1, 1, 3, 3]),
     dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel")),
    ("linear-3d-last-axis", (2, 3, 8), ("sizes", [2, 3, 5]), dict(mode="linear")),
    ("linear-half-pixel-symmetric", (1, 3, 8, 8), ("scales", [1, 1, 1.5, 0.7]),
     dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric", opset=19)),
]


def resize_model(shape, how, opset=13, **attrs):
    kind, values = how
    if kind == "scales":
        ins, inits = ["x", "", "scales"], [("scales", np.array(values, dtype=np.float32))]
    else:
        ins, inits = ["x", "", "", "sizes"], [("sizes", np.array(values, dtype=np.int64))]
    return model([helper.make_node("Resize", ins, ["y0"], **attrs)], [("x", shape)], ["y0"],
                 inits, opset)


def topk_model(shape, k, **attrs):
    """TopK's values (float) and indices (int64, declared so for ONNX Runtime); the input's
    values are distinct, as equal ones may be ordered either way."""
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["y0", "y1"], name="topk", **attrs)], "case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y1", TensorProto.INT64, None)],
        [numpy_helper.from_array(i64(k), "k")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def typed(nodes, inputs, outputs, inits=(), opset=13):
    """model() with the outputs' element types given: [(name, TensorProto type)], as ONNX
    Runtime wants an int64 or bool output declared so."""
    graph = helper.make_graph(
        nodes, "case",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


I64, BOOL, F32 = TensorProto.INT64, TensorProto.BOOL, TensorProto.FLOAT


def select_cases():
    """The comparisons, ArgMax/ArgMin, Where, Expand, GatherND, ScatterND (YOLOv8's nms=True
    tail uses each), every attribute and operand form the importer takes."""
    c = {}
    # 0/1 values from a comparison: ties for select_last_index and Equal.
    ties = [node("Greater", ["x", "zero"], ["g"]), node("Cast", ["g"], ["t"], to=F32)]
    zero = ("zero", np.array(0, np.float32))
    c["argmax-axis1-keepdims"] = typed([node("ArgMax", ["x"], ["y0"], axis=1)],
                                       [("x", (2, 5, 3))], [("y0", I64)])
    c["argmin-last-axis-nokeep"] = typed([node("ArgMin", ["x"], ["y0"], axis=-1, keepdims=0)],
                                         [("x", (2, 5, 3))], [("y0", I64)])
    c["argmax-ties-first"] = typed(ties + [node("ArgMax", ["t"], ["y0"], axis=2)],
                                   [("x", (2, 3, 6))], [("y0", I64)], [zero])
    c["argmax-ties-select-last"] = typed(
        ties + [node("ArgMax", ["t"], ["y0"], axis=2, select_last_index=1)],
        [("x", (2, 3, 6))], [("y0", I64)], [zero])
    c["argmin-ties-select-last-axis0"] = typed(
        ties + [node("ArgMin", ["t"], ["y0"], axis=0, keepdims=0, select_last_index=1)],
        [("x", (5, 4))], [("y0", I64)], [zero])
    c["greater-broadcast"] = typed([node("Greater", ["x", "z"], ["y0"])],
                                   [("x", (2, 3, 4)), ("z", (3, 1))], [("y0", BOOL)])
    c["greater-scalar-const"] = typed([node("Greater", ["x", "c"], ["y0"])], [("x", (8, 5))],
                                      [("y0", BOOL)], [("c", np.array(0.25, np.float32))],
                                      opset=17)
    c["less-const-on-left"] = typed([node("Less", ["c", "x"], ["y0"])], [("x", (8, 5))],
                                    [("y0", BOOL)], [("c", np.array([0.1], np.float32))])
    c["less-broadcast"] = typed([node("Less", ["x", "z"], ["y0"])],
                                [("x", (4, 1)), ("z", (3,))], [("y0", BOOL)])
    c["equal-ties-broadcast"] = typed(
        ties + [node("Greater", ["z", "zero"], ["h"]), node("Cast", ["h"], ["u"], to=F32),
                node("Equal", ["t", "u"], ["y0"])],
        [("x", (3, 4)), ("z", (4,))], [("y0", BOOL)], [zero])
    c["greater-or-equal"] = typed([node("GreaterOrEqual", ["x", "z"], ["y0"])],
                                  [("x", (3, 4)), ("z", (3, 4))], [("y0", BOOL)], opset=12)
    c["less-or-equal-scalar"] = typed([node("LessOrEqual", ["x", "c"], ["y0"])],
                                      [("x", (3, 4))], [("y0", BOOL)],
                                      [("c", np.array(-0.2, np.float32))], opset=16)
    c["where-broadcast-three"] = typed(
        [node("Greater", ["c", "zero"], ["b"]), node("Where", ["b", "x", "z"], ["y0"])],
        [("c", (3, 1)), ("x", (2, 1, 4)), ("z", (4,))], [("y0", F32)], [zero])
    c["where-const-condition-scalar-y"] = typed(
        [node("Where", ["b", "x", "v"], ["y0"])], [("x", (2, 4))], [("y0", F32)],
        [("b", np.array([True, False, False, True])), ("v", np.array(7.5, np.float32))])
    c["expand-rank-up"] = typed([node("Expand", ["x", "s"], ["y0"])], [("x", (3, 1))],
                                [("y0", F32)], [("s", i64(2, 1, 4))])
    c["expand-shape-of-ones"] = typed([node("Expand", ["x", "s"], ["y0"])], [("x", (3, 4))],
                                      [("y0", F32)], [("s", i64(1, 1))])
    c["expand-int64-from-argmax"] = typed(
        [node("ArgMax", ["x"], ["a"], axis=1), node("Expand", ["a", "s"], ["y0"])],
        [("x", (5, 6))], [("y0", I64)], [("s", i64(5, 4))], opset=17)
    c["gathernd-pairs-negative"] = typed([node("GatherND", ["x", "i"], ["y0"])],
                                         [("x", (4, 5, 3))], [("y0", F32)],
                                         [("i", np.array([[1, -1], [3, 0]], np.int64))])
    c["gathernd-full-index"] = typed([node("GatherND", ["x", "i"], ["y0"])], [("x", (4, 5))],
                                     [("y0", F32)],
                                     [("i", np.array([[0, 4], [3, 2], [-4, -5]], np.int64))])
    c["gathernd-1d-indices"] = typed([node("GatherND", ["x", "i"], ["y0"])],
                                     [("x", (4, 5, 3))], [("y0", F32)], [("i", i64(2, 1))])
    c["gathernd-3d-indices"] = typed([node("GatherND", ["x", "i"], ["y0"])],
                                     [("x", (4, 5, 3))], [("y0", F32)],
                                     [("i", np.array([[[0], [3]], [[2], [1]], [[1], [1]]],
                                                     np.int64))])
    c["gathernd-batch-dims-1"] = typed([node("GatherND", ["x", "i"], ["y0"], batch_dims=1)],
                                       [("x", (2, 5, 3))], [("y0", F32)],
                                       [("i", np.array([[[4], [0], [2], [4]],
                                                        [[1], [1], [3], [0]]], np.int64))])
    c["gathernd-batch-dims-2"] = typed([node("GatherND", ["x", "i"], ["y0"], batch_dims=2)],
                                       [("x", (2, 3, 4, 5))], [("y0", F32)],
                                       [("i", RNG.integers(0, 4, size=(2, 3, 2, 1)))])
    # Indices the graph computes: each row's largest value picked by its ArgMax.
    c["gathernd-by-argmax-batch-dims"] = typed(
        [node("ArgMax", ["x"], ["a"], axis=1), node("GatherND", ["x", "a"], ["y0"],
                                                    batch_dims=1)],
        [("x", (3, 7))], [("y0", F32)])
    c["scatternd-rows"] = typed([node("ScatterND", ["x", "i", "u"], ["y0"])],
                                [("x", (4, 5)), ("u", (2, 5))], [("y0", F32)],
                                [("i", np.array([[1], [-1]], np.int64))])
    c["scatternd-elements"] = typed([node("ScatterND", ["x", "i", "u"], ["y0"])],
                                    [("x", (3, 4)), ("u", (3,))], [("y0", F32)],
                                    [("i", np.array([[0, 1], [2, 3], [1, 0]], np.int64))])
    # Every element overwritten: data (a constant here) is not read.
    c["scatternd-full-permuted"] = typed([node("ScatterND", ["d", "i", "u"], ["y0"])],
                                         [("u", (3, 4))], [("y0", F32)],
                                         [("d", rand(3, 4)),
                                          ("i", np.array([[2], [0], [1]], np.int64))], opset=16)
    # What YOLOv8's nms=True export ends with: a constant of zeros wholly overwritten.
    c["scatternd-yolov8-whole"] = typed([node("ScatterND", ["z", "i", "u"], ["y0"])],
                                        [("u", (1, 5, 6))], [("y0", F32)],
                                        [("z", np.zeros((1, 5, 6), np.float32)),
                                         ("i", np.array([[0]], np.int64))], opset=17)
    return c


def op_cases():
    x4 = [("x", (1, 3, 8, 8))]
    c = {}
    c["conv"] = one("Conv", x4, [("w", rand(4, 3, 3, 3)), ("b", rand(4))], pads=[1, 1, 1, 1])
    c["conv-stride-dilation"] = one("Conv", x4, [("w", rand(4, 3, 3, 3))], strides=[2, 2],
                                    dilations=[2, 2], pads=[2, 2, 2, 2])
    c["conv-depthwise"] = one("Conv", [("x", (1, 4, 8, 8))], [("w", rand(4, 1, 3, 3))],
                              group=4, pads=[1, 1, 1, 1])
    c["conv-grouped"] = one("Conv", [("x", (1, 4, 6, 6))], [("w", rand(6, 2, 3, 3))], group=2)
    c["conv-same-upper"] = one("Conv", x4, [("w", rand(4, 3, 3, 3))], auto_pad="SAME_UPPER",
                               strides=[2, 2])
    c["conv-same-lower"] = one("Conv", x4, [("w", rand(4, 3, 2, 2))], auto_pad="SAME_LOWER")
    c["conv-asymmetric-pads"] = one("Conv", x4, [("w", rand(2, 3, 3, 3))], pads=[0, 1, 2, 1])
    c["conv-valid"] = one("Conv", x4, [("w", rand(5, 3, 1, 1))], auto_pad="VALID")
    c["conv-1d"] = one("Conv", [("x", (1, 3, 10))], [("w", rand(2, 3, 3)), ("b", rand(2))],
                       pads=[1, 1])
    c["conv-transpose"] = one("ConvTranspose", [("x", (1, 4, 5, 5))],
                              [("w", rand(4, 2, 3, 3)), ("b", rand(2))], strides=[2, 2],
                              pads=[1, 1, 1, 1], output_padding=[1, 1])
    c["batchnorm"] = one("BatchNormalization", x4, bn_inits(3), epsilon=1e-3)
    c["relu"] = one("Relu", x4)
    c["sigmoid"] = one("Sigmoid", x4)
    c["tanh"] = one("Tanh", x4)
    c["leakyrelu"] = one("LeakyRelu", x4, alpha=0.2)
    c["clip"] = one("Clip", x4, [("lo", np.float32(-0.5)), ("hi", np.float32(0.25))])
    c["clip-min-only"] = model([helper.make_node("Clip", ["x", "lo"], ["y0"])], x4, ["y0"],
                               [("lo", np.float32(0.1))])
    c["hardsigmoid"] = one("HardSigmoid", x4, alpha=0.3, beta=0.4)
    c["hardswish"] = one("HardSwish", [("x", (1, 3, 8, 8))], opset=14)
    c["add-broadcast"] = one("Add", x4, [("b", rand(3, 1, 1))])
    c["add-two-inputs"] = one("Add", [("x", (2, 3, 4)), ("z", (2, 3, 4))])
    c["mul-broadcast-inputs"] = one("Mul", [("x", (2, 3, 4)), ("z", (3, 1))])
    c["mul-scalar"] = one("Mul", x4, [("s", np.float32(1.5))])
    c["sub-from-scalar"] = model([helper.make_node("Sub", ["s", "x"], ["y0"])], x4, ["y0"],
                                 [("s", np.float32(2.0))])
    c["div-vector"] = one("Div", x4, [("d", rand(8, low=0.5, high=2.0))])
    c["concat"] = one("Concat", [("x", (1, 2, 4, 4)), ("z", (1, 3, 4, 4))], axis=1)
    c["concat-negative-axis"] = one("Concat", [("x", (2, 3)), ("z", (2, 5))], axis=-1)
    c["maxpool"] = one("MaxPool", x4, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c["maxpool-ceil"] = one("MaxPool", [("x", (1, 3, 9, 9))], kernel_shape=[2, 2],
                            strides=[2, 2], ceil_mode=1)
    c["maxpool-same-upper"] = one("MaxPool", x4, kernel_shape=[2, 2], strides=[2, 2],
                                  auto_pad="SAME_UPPER")
    c["maxpool-asymmetric"] = one("MaxPool", x4, kernel_shape=[3, 3], pads=[0, 0, 1, 1])
    c["averagepool"] = one("AveragePool", x4, kernel_shape=[3, 3], strides=[2, 2],
                           pads=[1, 1, 1, 1])
    c["averagepool-include-pad"] = one("AveragePool", x4, kernel_shape=[3, 3],
                                       pads=[1, 1, 1, 1], count_include_pad=1)
    c["globalaveragepool"] = one("GlobalAveragePool", x4)
    c["globalmaxpool"] = one("GlobalMaxPool", x4)
    c["reshape"] = one("Reshape", x4, [("shape", i64(0, -1, 16))])
    c["flatten"] = one("Flatten", x4)
    c["flatten-axis2"] = one("Flatten", x4, axis=2)
    c["transpose"] = one("Transpose", x4, perm=[0, 2, 3, 1])
    c["squeeze"] = one("Squeeze", [("x", (1, 3, 1, 4))], [("axes", i64(0, -2))])
    c["unsqueeze-opset11"] = one("Unsqueeze", [("x", (3, 4))], opset=11, axes=[0, 3])
    c["unsqueeze"] = one("Unsqueeze", [("x", (3, 4))], [("axes", i64(-1, 0))])
    c["gemm"] = one("Gemm", [("x", (2, 6))], [("w", rand(5, 6)), ("b", rand(5))], transB=1)
    c["gemm-scaled"] = one("Gemm", [("x", (2, 6))], [("w", rand(6, 5)), ("b", rand(1, 5))],
                           alpha=0.5, beta=2.0)
    c["matmul-const"] = one("MatMul", [("x", (2, 6))], [("w", rand(6, 5))])
    c["matmul-const-3d"] = one("MatMul", [("x", (2, 3, 6))], [("w", rand(6, 5))])
    c["matmul-two-inputs"] = one("MatMul", [("x", (3, 6)), ("z", (6, 4))])
    c["matmul-batched"] = one("MatMul", [("x", (2, 3, 6)), ("z", (2, 6, 4))])
    c["softmax"] = one("Softmax", [("x", (2, 3, 5))])
    c["softmax-axis1"] = one("Softmax", [("x", (2, 3, 5))], axis=1)
    c["softmax-opset11-coerced"] = one("Softmax", [("x", (2, 3, 5))], opset=11)
    c["logsoftmax"] = one("LogSoftmax", [("x", (2, 7))])
    c["identity-dropout"] = model([helper.make_node("Identity", ["x"], ["a"]),
                                   helper.make_node("Dropout", ["a"], ["y0"])], x4, ["y0"])
    c["constant"] = model([helper.make_node("Constant", [], ["k"],
                                            value=numpy_helper.from_array(rand(8), "k")),
                           helper.make_node("Add", ["x", "k"], ["y0"])], x4, ["y0"])
    # What exporters write for "flatten": the shape computed, then folded at load.
    c["shape-gather-concat-reshape"] = model([
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y0"])], x4, ["y0"],
        [("zero", np.array(0, dtype=np.int64)), ("zero1", i64(0)), ("minus1", i64(-1))])
    c["resize-nearest"] = model([helper.make_node(
        "Resize", ["x", "", "scales"], ["y0"], mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor")], x4, ["y0"],
        [("scales", np.array([1, 1, 2, 2], dtype=np.float32))])
    c["gather-axis0"] = one("Gather", [("x", (5, 3))], [("i", i64(4, 0, -1, 2))])
    c["gather-axis1-negative"] = one("Gather", x4, [("i", i64(-1, 0, -3))], axis=1)
    c["gather-axis-last-2d-indices"] = one("Gather", x4, [("i", np.array(
        [[0, -8], [7, 3]], dtype=np.int64))], axis=-1)
    c["gather-scalar-index"] = one("Gather", x4, [("i", np.array(-2, dtype=np.int64))], axis=2)
    c["gather-int32-indices"] = one("Gather", x4, [("i", np.array([2, -3], dtype=np.int32))],
                                    axis=1)
    c["gather-3d-axis1"] = model([
        helper.make_node("Gather", ["x", "ix"], ["y0"], axis=1)],
        [("x", (2, 6, 3))], ["y0"], [("ix", i64(5, -6, 1))])
    c["gather-by-topk-indices"] = model([
        helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
        helper.make_node("Gather", ["z", "i"], ["y0"], axis=1)],
        [("x", (2, 10)), ("z", (4, 10, 3))], ["y0"], [("k", i64(3))])
    c["topk"] = topk_model((2, 10), k=3)
    c["topk-axis1-smallest"] = topk_model((2, 7, 4), k=2, axis=1, largest=0)
    c["topk-all-axis0"] = topk_model((3, 5), k=3, axis=0)
    for name, shape, how, attrs in RESIZE_CASES:
        c["resize-" + name] = resize_model(shape, how, **attrs)
    c["slice"] = one("Slice", x4, [("st", i64(1, 1)), ("en", i64(3, 100)), ("ax", i64(1, 3)),
                                   ("sp", i64(1, 2))])
    c["slice-negative"] = one("Slice", x4, [("st", i64(-1)), ("en", i64(-100)), ("ax", i64(2)),
                                            ("sp", i64(-2))])
    c["split"] = one("Split", [("x", (2, 6, 4))], n_out=3, axis=1)
    c["split-sizes"] = one("Split", [("x", (2, 6, 4))], [("sizes", i64(1, 3))], n_out=2, axis=2)
    c["reducemean"] = one("ReduceMean", x4, axes=[2, 3])
    c["reducemean-nokeep"] = one("ReduceMean", x4, axes=[-1], keepdims=0)
    c["reducemean-opset18"] = one("ReduceMean", x4, [("axes", i64(1))], opset=18)
    c["pad"] = one("Pad", x4, [("pads", i64(0, 0, 1, 2, 0, 0, 2, 1)),
                               ("v", np.float32(0.5))])
    c["pad-reflect"] = one("Pad", x4, [("pads", i64(0, 0, 2, 2, 0, 0, 2, 2))], mode="reflect")
    # Weights in a file beside the model (saved so by main()).
    c["external-data-conv"] = one("Conv", x4, [("w", rand(4, 3, 3, 3)), ("b", rand(4))])
    # A batch left symbolic: 1 at load, 2 as fed (the plan follows the input).
    c["symbolic-batch"] = one("Conv", [("x", ("N", 3, 8, 8))], [("w", rand(4, 3, 3, 3))],
                              pads=[1, 1, 1, 1])
    # What Ultralytics' YOLOv8 export (opset 17) writes, op by op (yolov8n_onnx.py, the whole).
    c["yolov8-split-halves-4d"] = one("Split", [("x", (1, 8, 6, 6))], [("sizes", i64(4, 4))],
                                      n_out=2, opset=17, axis=1)
    c["yolov8-maxpool-5x5-s1-p2"] = one("MaxPool", [("x", (1, 4, 10, 10))], kernel_shape=[5, 5],
                                        strides=[1, 1], pads=[2, 2, 2, 2], opset=17)
    c["yolov8-softmax-4d-axis1"] = one("Softmax", [("x", (1, 16, 4, 20))], opset=17, axis=1)
    # torch's exporter gives Resize an empty roi tensor, and its scales and Slice's bounds as
    # Constant nodes when constant folding leaves them so.
    c["yolov8-resize-empty-roi"] = model([helper.make_node(
        "Resize", ["x", "roi", "scales"], ["y0"], mode="nearest", cubic_coeff_a=-0.75,
        coordinate_transformation_mode="asymmetric", nearest_mode="floor")], x4, ["y0"],
        [("roi", np.zeros(0, np.float32)), ("scales", np.array([1, 1, 2, 2], np.float32))],
        opset=17)
    c["yolov8-constant-node-operands"] = model([
        helper.make_node("Constant", [], ["scales"], value=numpy_helper.from_array(
            np.array([1, 1, 2, 2], np.float32), "scales")),
        helper.make_node("Resize", ["x", "", "scales"], ["up"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("Constant", [], ["st"], value=numpy_helper.from_array(i64(1), "st")),
        helper.make_node("Constant", [], ["en"], value=numpy_helper.from_array(i64(3), "en")),
        helper.make_node("Constant", [], ["ax"], value=numpy_helper.from_array(i64(1), "ax")),
        helper.make_node("Slice", ["up", "st", "en", "ax"], ["y0"])], x4, ["y0"], opset=17)
    # DFL: 16 bins a side softmaxed and weighed by arange(16) with a 1x1 Conv, then
    # dist2bbox's centre and size from the anchor points, times the strides.
    c["yolov8-dfl-dist2bbox"] = model([
        helper.make_node("Reshape", ["x", "s4"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Softmax", ["t"], ["sm"], axis=1),
        helper.make_node("Conv", ["sm", "bins"], ["cv"], kernel_shape=[1, 1]),
        helper.make_node("Reshape", ["cv", "s3"], ["d"]),
        helper.make_node("Slice", ["d", "z", "two", "one"], ["lt"]),
        helper.make_node("Slice", ["d", "two", "four", "one"], ["rb"]),
        helper.make_node("Sub", ["pts", "lt"], ["a"]),
        helper.make_node("Add", ["pts", "rb"], ["b"]),
        helper.make_node("Add", ["a", "b"], ["ab"]),
        helper.make_node("Div", ["ab", "half"], ["c"]),
        helper.make_node("Sub", ["b", "a"], ["wh"]),
        helper.make_node("Concat", ["c", "wh"], ["box"], axis=1),
        helper.make_node("Mul", ["box", "strides"], ["y0"])],
        [("x", (1, 64, 21))], ["y0"],
        [("s4", i64(1, 4, 16, 21)), ("bins", np.arange(16, dtype=np.float32)
                                     .reshape(1, 16, 1, 1)),
         ("s3", i64(1, 4, 21)), ("z", i64(0)), ("one", i64(1)), ("two", i64(2)),
         ("four", i64(4)), ("pts", rand(1, 2, 21, low=0.5, high=8.0)),
         ("half", np.array(2, np.float32)),
         ("strides", np.repeat(np.array([8, 16, 32], np.float32), 7)[None])], opset=17)
    c["conv-bn-relu-opset19"] = model([
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"]),
        helper.make_node("Relu", ["b"], ["y0"])], x4, ["y0"],
        [("w", rand(4, 3, 3, 3))] + bn_inits(4), opset=19)
    c.update(select_cases())
    return c


def refused_cases():
    """name -> (model bytes, text the error must contain)."""
    x = [("x", (1, 3))]
    unknown = one("Einsum", x, equation="ij->ji").SerializeToString()
    old = one("Relu", x, opset=9).SerializeToString()
    gather = one("Gather", x, [("i", i64(3))], axis=1).SerializeToString()
    twice = model([helper.make_node("Relu", ["x"], ["y0"]),
                   helper.make_node("Relu", ["y0"], ["y0"])], x, ["y0"]).SerializeToString()
    dangling = model([helper.make_node("Add", ["x", "nowhere"], ["y0"])], x,
                     ["y0"]).SerializeToString()
    short = one("Add", x, [("b", rand(3))])
    short.graph.initializer[0].raw_data = short.graph.initializer[0].raw_data[:5]
    outside = one("Add", x, [("b", rand(3))])
    t = outside.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="../../etc/passwd")
    return {
        "refuse-value-defined-twice": (twice, "already defined"),
        "refuse-input-from-nowhere": (dangling, "nowhere"),
        "refuse-truncated-initializer": (short.SerializeToString(), "raw_data holds 5 bytes"),
        "refuse-external-data-outside": (outside.SerializeToString(), "not a file beside"),
        "refuse-unsupported-op": (unknown, "einsum"),
        "refuse-old-opset": (old, "opset 9"),
        "refuse-gather-index-outside": (gather, "index 3 is outside [-3, 2]"),
        "refuse-gather-indices-6d": (one("Gather", [("x", (3,))], [("i", np.zeros(
            (1,) * 6, dtype=np.int64))]).SerializeToString(), "indices of 6 and data of 1"),
        "refuse-resize-cubic": (resize_model((1, 3, 4, 4), ("scales", [1, 1, 2, 2]),
                                             mode="cubic").SerializeToString(), "mode 'cubic'"),
        "refuse-resize-huge": (resize_model((1, 3, 4, 4), ("sizes", [1, 3, 1 << 20, 1 << 20]))
                               .SerializeToString(), "more than 2147483648 elements"),
        "refuse-gathernd-index-outside": (one("GatherND", [("x", (4, 5))], [("i", np.array(
            [[1, 5]], np.int64))]).SerializeToString(), "index 5 is outside [-5, 4]"),
        "refuse-scatternd-reduction": (one("ScatterND", [("x", (4, 5)), ("u", (1, 5))], [(
            "i", np.array([[1]], np.int64))], opset=16, reduction="add").SerializeToString(),
            "reduction 'add'"),
        "refuse-scatternd-indices-computed": (model([
            node("ArgMax", ["x"], ["a"], axis=1),
            node("ScatterND", ["x", "a", "x"], ["y0"])], [("x", (1, 3))], ["y0"])
            .SerializeToString(), "must be a constant"),
        "refuse-expand-not-broadcast": (one("Expand", [("x", (1, 3))], [("s", i64(2, 2))])
                                        .SerializeToString(), "does not broadcast"),
        "refuse-bad-protobuf": (b"\x08\x07\x12\xff\xff\xff\xff\x0f" + b"\x00" * 8, "onnx"),
    }


def ort_outputs(path, feeds, literal=False):
    """literal: graph optimisations off, so that ORT runs QuantizeLinear and DequantizeLinear as
    written, in float (onnx_qdq_cases.py), instead of fusing them into its int8 kernels."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # MXNet's exports list initializers as inputs: ORT warns
    if literal:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def compare(ours, ref):
    if ours.shape != ref.shape:
        return False, "shape %s, ORT %s" % (ours.shape, ref.shape)
    peak = float(np.max(np.abs(ref))) if ref.size else 0.0
    tol = RTOL * max(1.0, peak)
    worst = float(np.max(np.abs(ours.astype(np.float64) - ref))) if ref.size else 0.0
    return worst <= tol, "max|diff| %.3g tol %.3g" % (worst, tol)


def run_tool(tool, path, feeds, case_dir, mode, qdq=None):
    """qdq: how a QDQ file runs, "int8" or "float" (the tool's --qdq; None: its default)."""
    out_dir = os.path.join(case_dir, "out-" + mode)
    shutil.rmtree(out_dir, ignore_errors=True)
    argv = [tool, "run", "--model", path, "--output-dir", out_dir, "--mode", mode]
    if qdq:
        argv += ["--qdq", qdq]
    for name, arr in feeds.items():
        f = os.path.join(case_dir, name + ".npy")
        np.save(f, arr)
        argv += ["--input", "%s=%s" % (name, f)]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=TIMEOUT_S)
    return proc, out_dir


def check_model(tool, case_dir, path, feeds, literal=False):
    refs = ort_outputs(path, feeds, literal)
    parts, ok = [], True
    for mode in ("hybrid", "imperative"):
        # the literal reference computes each QDQ pair in float: so must ours
        proc, out_dir = run_tool(tool, path, feeds, case_dir, mode,
                                 qdq="float" if literal else None)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            return False, "%s: exit %d: %s" % (mode, proc.returncode, err[-1] if err else "")
        for i, ref in enumerate(refs):
            f = os.path.join(out_dir, "output%d.npy" % i)
            if not os.path.isfile(f):
                return False, "%s: wrote no output%d.npy" % (mode, i)
            good, text = compare(np.load(f), np.asarray(ref, dtype=np.float64))
            ok = ok and good
            parts.append("%s%s %s" % (mode, "[%d]" % i if len(refs) > 1 else "", text))
    return ok, "; ".join(parts)


def plan_of(tool, path):
    """-> (kernel calls, arena bytes) of one hybridized forward, or an error text."""
    proc = subprocess.run([tool, "bench", "--model", path, "--shape", "1x3x224x224",
                           "--iterations", "1", "--warmup", "1", "--json"],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        return proc.stderr.decode("utf-8", "replace").strip()
    stats = json.loads(proc.stdout)
    return int(stats["per_forward"]["direct_calls"]), int(stats["arena_bytes"])


def check_same_plan(tool, onnx_path):
    """The model from its Gluon export and from its ONNX export: the same calls, the same
    arena (the importer adds nothing the passes do not remove)."""
    gluon = onnx_path[:-len(".onnx")] + "-symbol.json"
    a, b = plan_of(tool, gluon), plan_of(tool, onnx_path)
    if isinstance(a, str) or isinstance(b, str):
        return False, "bench failed: %s" % (a if isinstance(a, str) else b)
    text = "Gluon export: %d calls, arena %d bytes; ONNX: %d calls, arena %d bytes" % (a + b)
    return a == b, text


def check_element(onnx_path, plugin_dir, work):
    """The GStreamer element with model=prefix.onnx on one RGB videotestsrc frame of the model's
    size (no resize, scale 0-1): the dumped output against ONNX Runtime on that frame / 255."""
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, GST_PLUGIN_PATH=plugin_dir,
               GST_REGISTRY=os.path.join(work, "registry.bin"))
    caps = "video/x-raw,format=RGB,width=224,height=224"
    raw = os.path.join(work, "frame.rgb")
    dump = os.path.join(work, "dump")
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    for argv in (["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=1", "!", caps, "!",
                  "filesink", "location=" + raw],
                 ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=1", "!", caps, "!",
                  "hybridinfer", "model=" + onnx_path, "mode=imperative", "scale=0-1",
                  "dump-dir=" + dump, "!", "fakesink"]):
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT_S)
        if proc.returncode != 0:
            return False, "%s failed: %s" % (" ".join(argv[:6]),
                                              proc.stderr.decode("utf-8", "replace")[-300:])
    frame = np.fromfile(raw, dtype=np.uint8).reshape(224, 224, 3)
    x = (frame.transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255.0))
    ref = np.asarray(ort_outputs(onnx_path, {"data": x})[0], dtype=np.float64)
    frame_dir = os.path.join(dump, "frame-000000")
    with open(os.path.join(frame_dir, "index.json")) as f:
        last = json.load(f)["nodes"][-1]
    ours = np.load(os.path.join(frame_dir, last["file"]))
    return compare(ours, ref)


def feeds_for(m):
    inits = {t.name for t in m.graph.initializer}
    feeds = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if d.dim_value > 0 else 2 for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rand(*dims)
    return feeds


def onnx_mapping_shim():
    """mx2onnx 1.9.1 imports onnx.mapping, which onnx 1.13+ no longer has, and asks for the
    newest opset onnx knows: give it the two tables from onnx.helper and opset 13."""
    if not hasattr(onnx, "mapping"):
        m = types.ModuleType("onnx.mapping")

        class NpToTensor(dict):
            def __missing__(self, k):
                return helper.np_dtype_to_tensor_dtype(np.dtype(k))

        class TensorToNp(dict):
            def __missing__(self, k):
                return helper.tensor_dtype_to_np_dtype(k)

        m.NP_TYPE_TO_TENSOR_TYPE = NpToTensor()
        m.TENSOR_TYPE_TO_NP_TYPE = TensorToNp()
        onnx.mapping = m
        sys.modules["onnx.mapping"] = m
    from onnx import defs as onnx_defs
    onnx_defs.onnx_opset_version = lambda: 13


def zoo_models(work):
    """ResNet-18 v1 and MobileNetV2 1.0 with seeded random weights, exported by MXNet
    (prefix-symbol.json + params) and from that by mx.onnx.export_model."""
    onnx_mapping_shim()
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision
    made = {}
    for name in ("resnet18_v1", "mobilenetv2_1.0"):
        d = os.path.join(work, "zoo-" + name)
        path = os.path.join(d, name + ".onnx")
        if not os.path.isfile(path):
            os.makedirs(d, exist_ok=True)
            mx.random.seed(7)
            net = vision.get_model(name, pretrained=False)
            net.initialize(mx.init.Xavier(magnitude=2.0))
            net.hybridize()
            net(mx.nd.zeros((1, 3, 224, 224)))
            # Nonzero BatchNorm statistics, so that folding them is checked.
            for pname, p in net.collect_params().items():
                if pname.endswith("running_mean") or pname.endswith("beta"):
                    p.set_data(mx.nd.random.uniform(-0.2, 0.2, p.shape))
                elif pname.endswith("running_var") or pname.endswith("gamma"):
                    p.set_data(mx.nd.random.uniform(0.5, 1.5, p.shape))
            prefix = os.path.join(d, name)
            net.export(prefix)
            mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                 [(1, 3, 224, 224)], [np.float32], path + ".tmp")
            os.replace(path + ".tmp", path)
        made["zoo-" + name] = path
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("work")
    ap.add_argument("--only")
    ap.add_argument("--zoo", action="store_true")
    ap.add_argument("--element", metavar="PLUGIN_DIR",
                    help="with --zoo: also run the element (from PLUGIN_DIR) on the ONNX models")
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    os.makedirs(args.work, exist_ok=True)
    onnx.save(one("Relu", [("x", (1,))]), os.path.join(args.work, "probe.onnx"))

    cases, fixed_feeds = {}, {}
    plans, elements = {}, {}
    if args.zoo:
        for name, path in zoo_models(args.work).items():
            cases[name] = path
            plans["same-plan-" + name[len("zoo-"):]] = path
            if args.element:
                elements["element-" + name[len("zoo-"):]] = path
    else:
        for name, m in op_cases().items():
            d = os.path.join(args.work, name)
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "model.onnx")
            if name.startswith("external-data"):
                onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                          location="weights.bin", size_threshold=0)
            else:
                onnx.save(m, path)
            cases[name] = path
        for name, (m, feeds) in onnx_qdq_cases.cases(RNG).items():
            d = os.path.join(args.work, name)
            os.makedirs(d, exist_ok=True)
            cases[name] = os.path.join(d, "model.onnx")
            onnx.save(m, cases[name])
            fixed_feeds[name] = feeds
    refused = {} if args.zoo else dict(refused_cases(), **onnx_qdq_cases.refused(RNG))
    names = [n for n in list(cases) + list(plans) + list(elements) + list(refused)
             if not args.only or args.only in n]
    probe = run_tool(tool, os.path.join(args.work, "probe.onnx"), {}, args.work, "hybrid")[0]
    if b"built without protobuf-c" in probe.stderr:
        print("1..0 # SKIP this hybridinfer was built without protobuf-c: it reads no ONNX")
        return 0
    print("1..%d" % len(names))
    failed = 0
    for n, name in enumerate(names, 1):
        d = os.path.join(args.work, name)
        os.makedirs(d, exist_ok=True)
        if name in cases:
            path = cases[name]
            feeds = fixed_feeds.get(name) or feeds_for(onnx.load(path))
            ok, text = check_model(tool, d, path, feeds, literal=name.startswith("qdq-"))
        elif name in plans:
            ok, text = check_same_plan(tool, plans[name])
        elif name in elements:
            ok, text = check_element(os.path.abspath(elements[name]),
                                     os.path.abspath(args.element), d)
        else:
            data, want = refused[name]
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(data)
            proc, _ = run_tool(tool, path, {"x": rand(1, 3)}, d, "hybrid")
            err = proc.stderr.decode("utf-8", "replace").strip()
            last = err.splitlines()[-1] if err else ""
            ok = proc.returncode not in (0,) and proc.returncode > 0 and want in last.lower()
            text = "exit %d: %s" % (proc.returncode, last)
        failed += not ok
        print("%s %d - %s %s" % ("ok" if ok else "not ok", n, name, text.replace("#", "No.")))
        sys.stdout.flush()
    print("# %d of %d ONNX cases match ONNX Runtime (or are refused as they must be)"
          % (len(names) - failed, len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
