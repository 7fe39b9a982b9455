"""QuantizeLinear / DequantizeLinear cases for check_onnx.py: small graphs written with
onnx.helper, each with the input it must be fed (values on the rounding ties, past the integer
range), and the QDQ models the importer must refuse.

ONNX Runtime runs these with its graph optimisations off (check_onnx.py: names starting with
"qdq-"), so that it computes each QuantizeLinear and DequantizeLinear literally, in float: the
reference is then exact, whatever ORT would fuse into its own int8 kernels.
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, x_shape, inits, opset):
    graph = helper.make_graph(
        nodes, "case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def _pair(x_shape, scale, zero_point=None, axis=None, opset=13, zp_in_dq=True):
    """x -> QuantizeLinear -> DequantizeLinear -> y0."""
    inits = [("s", np.asarray(scale, dtype=np.float32))]
    q_in = ["x", "s"]
    if zero_point is not None:
        inits.append(("zp", zero_point))
        q_in.append("zp")
    attrs = {} if axis is None else {"axis": axis}
    dq_in = q_in[1:] if zp_in_dq else ["s"]
    nodes = [helper.make_node("QuantizeLinear", q_in, ["q"], name="quant", **attrs),
             helper.make_node("DequantizeLinear", ["q"] + dq_in, ["y0"], name="dequant",
                              **attrs)]
    return _model(nodes, x_shape, inits, opset)


def _ties(rng, shape, scale, lo, hi):
    """Values whose x / scale fall exactly on .5 (scale a power of two), and beyond the
    integer range on both sides, and ordinary ones in between."""
    k = rng.integers(lo - 40, hi + 40, size=shape)
    half = rng.integers(0, 2, size=shape) * 0.5
    return ((k + half) * np.float32(scale)).astype(np.float32)


def cases(rng):
    """name -> (model, {input: array})."""
    c = {}
    x = _ties(rng, (2, 3, 4, 5), 0.25, 0, 255)
    c["qdq-uint8-no-zero-point"] = (_pair(x.shape, 0.25), {"x": x})
    x = _ties(rng, (2, 3, 4, 5), 0.125, -128 - 20, 127 - 20)
    c["qdq-uint8-zero-point-ties"] = (_pair(x.shape, 0.125, np.uint8(128)), {"x": x})
    x = _ties(rng, (2, 3, 4, 5), 0.0625, -128, 127)
    c["qdq-int8-symmetric-ties"] = (_pair(x.shape, 0.0625, np.int8(0)), {"x": x})
    c["qdq-int8-zero-point-odd-scale"] = (
        _pair((1, 4, 6, 6), 0.0173, np.int8(-7)),
        {"x": rng.uniform(-3, 3, (1, 4, 6, 6)).astype(np.float32)})
    c["qdq-uint8-opset11"] = (
        _pair((3, 7), 0.02, np.uint8(17), opset=11),
        {"x": rng.uniform(-1, 6, (3, 7)).astype(np.float32)})
    c["qdq-opset19"] = (_pair((2, 5), 0.05, np.int8(3), opset=19),
                        {"x": rng.uniform(-9, 9, (2, 5)).astype(np.float32)})
    # per axis: channels (axis 1, the default), a negative axis, the last axis
    s4 = np.array([0.25, 0.03, 0.5, 0.0078125], dtype=np.float32)
    x = np.concatenate([_ties(rng, (2, 1, 3, 3), s, -140, 140) for s in s4], axis=1)
    c["qdq-per-axis-int8-channels"] = (
        _pair(x.shape, s4, np.array([0, -5, 9, 100], dtype=np.int8)), {"x": x})
    c["qdq-per-axis-uint8-negative-axis"] = (
        _pair((2, 4, 3, 3), s4, np.array([0, 128, 255, 7], dtype=np.uint8), axis=-3),
        {"x": rng.uniform(-4, 4, (2, 4, 3, 3)).astype(np.float32)})
    s5 = np.array([0.1, 0.2, 0.05, 0.4, 0.01], dtype=np.float32)
    c["qdq-per-axis-last-axis"] = (
        _pair((3, 2, 5), s5, np.array([1, 2, 3, 4, 5], dtype=np.uint8), axis=2),
        {"x": rng.uniform(-2, 20, (3, 2, 5)).astype(np.float32)})
    c["qdq-scale-from-constant-nodes"] = (
        _model([helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(
                    np.array(0.03125, dtype=np.float32))),
                helper.make_node("Constant", [], ["zp"], value=numpy_helper.from_array(
                    np.array(-3, dtype=np.int8))),
                helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y0"])],
               (4, 6), [], 13),
        {"x": _ties(rng, (4, 6), 0.03125, -128, 127)})
    # one QuantizeLinear read by two DequantizeLinear (ORT's files share one)
    c["qdq-two-readers"] = (
        _model([helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["a"]),
                helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["b"]),
                helper.make_node("Relu", ["a"], ["ra"]),
                helper.make_node("Add", ["ra", "b"], ["y0"])],
               (2, 8), [("s", np.float32(0.07)), ("zp", np.uint8(100))], 13),
        {"x": rng.uniform(-8, 12, (2, 8)).astype(np.float32)})
    # a QDQ convolution as quantize_static writes it: the input through Q -> DQ, int8 weights
    # per output channel and an int32 bias through DequantizeLinear (folded at load), the
    # output through Q -> DQ
    w = rng.integers(-127, 128, size=(4, 3, 3, 3)).astype(np.int8)
    ws = rng.uniform(0.001, 0.01, 4).astype(np.float32)
    xs, ys = np.float32(0.02), np.float32(0.05)
    b = rng.integers(-3000, 3000, size=4).astype(np.int32)
    conv = _model([
        helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wzp"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "ys", "yzp"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yzp"], ["y0"])],
        (1, 3, 8, 8),
        [("xs", xs), ("xzp", np.uint8(128)), ("w", w), ("ws", ws),
         ("wzp", np.zeros(4, dtype=np.int8)), ("b", b), ("bs", (ws * xs).astype(np.float32)),
         ("ys", ys), ("yzp", np.uint8(0))], 13)
    c["qdq-conv-int8-weights-int32-bias"] = (
        conv, {"x": rng.uniform(-2, 2, (1, 3, 8, 8)).astype(np.float32)})
    # a constant QuantizeLinear (float weights quantized in the file) folded at load
    c["qdq-constant-quantized-at-load"] = (
        _model([helper.make_node("QuantizeLinear", ["wf", "s", "zp"], ["wq"]),
                helper.make_node("DequantizeLinear", ["wq", "s", "zp"], ["wd"]),
                helper.make_node("Mul", ["x", "wd"], ["y0"])],
               (2, 6), [("wf", _ties(rng, (2, 6), 0.125, -128, 127)), ("s", np.float32(0.125)),
                        ("zp", np.int8(4))], 13),
        {"x": rng.uniform(-1, 1, (2, 6)).astype(np.float32)})
    return c


def _with_zero_point_type(dtype, opset):
    """A QuantizeLinear whose zero point is of another type (int16, float8, int4)."""
    zp = helper.make_tensor("zp", dtype, [], [0])
    graph = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="quant"),
         helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y0"], name="dequant")],
        "case", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.float32(0.1), "s"), zp])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=9)


def refused(rng):
    """name -> (model bytes, text the error must contain, lower-case)."""
    r = {}
    r["refuse-qdq-int16-zero-point"] = (
        _with_zero_point_type(TensorProto.INT16, 19).SerializeToString(),
        "node 'quant' (quantizelinear): input 2 'zp' is of type int16")
    r["refuse-qdq-float8-zero-point"] = (
        _with_zero_point_type(TensorProto.FLOAT8E4M3FN, 19).SerializeToString(),
        "node 'quant' (quantizelinear): input 2 'zp' is of type float8e4m3fn")
    r["refuse-qdq-int4-zero-point"] = (
        _with_zero_point_type(TensorProto.INT4, 19).SerializeToString(),
        "node 'quant' (quantizelinear): input 2 'zp' is of type int4")
    block = _pair((1, 3), np.full((1, 3), 0.1, dtype=np.float32), opset=19)
    block.graph.node[0].attribute.append(helper.make_attribute("block_size", 3))
    r["refuse-qdq-block-size"] = (block.SerializeToString(),
                                  "node 'quant' (quantizelinear): block quantization")
    r["refuse-qdq-2d-scale"] = (
        _pair((1, 3), np.full((1, 3), 0.1, dtype=np.float32)).SerializeToString(),
        "node 'quant' (quantizelinear): scale 's' has 2 dimensions")
    dyn = _model([helper.make_node("Relu", ["x"], ["s"]),
                  helper.make_node("QuantizeLinear", ["x", "s"], ["q"], name="quant"),
                  helper.make_node("DequantizeLinear", ["q", "s"], ["y0"])], (1, 3), [], 13)
    r["refuse-qdq-scale-not-constant"] = (
        dyn.SerializeToString(), "node 'quant' (quantizelinear): input 1 's' must be a constant")
    other = _model([helper.make_node("QuantizeLinear", ["x", "s"], ["q"], name="quant"),
                    helper.make_node("Relu", ["q"], ["y0"], name="relu")], (1, 3),
                   [("s", np.float32(0.1))], 13)
    r["refuse-qdq-integers-read-by-relu"] = (
        other.SerializeToString(), "node 'relu' (relu): input 0 'q' is the integers of "
        "quantizelinear 'quant'")
    differ = _model([helper.make_node("QuantizeLinear", ["x", "s"], ["q"], name="quant"),
                     helper.make_node("DequantizeLinear", ["q", "s2"], ["y0"], name="dequant")],
                    (1, 3), [("s", np.float32(0.1)), ("s2", np.float32(0.2))], 13)
    r["refuse-qdq-pair-scales-differ"] = (
        differ.SerializeToString(), "node 'dequant' (dequantizelinear): its scale")
    per_axis_old = _pair((1, 3), np.array([0.1, 0.2, 0.3], dtype=np.float32), opset=11)
    r["refuse-qdq-per-axis-opset-11"] = (per_axis_old.SerializeToString(),
                                        "a scale per axis needs opset 13")
    return r
