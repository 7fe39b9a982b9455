#!/usr/bin/env python3
"""One-op ONNX graphs of data-dependent shape (NonZero, NonMaxSuppression) ending in a static
output, against ONNX Runtime, with two inputs whose counts differ run as two forwards of ONE
executor, in both modes.

    check_onnx_tail.py FORWARDS WORK_DIR

FORWARDS is tests/conformance/forwards.c built (several forwards of one executor).  Each case
is a graph whose NonZero or NonMaxSuppression output is padded (or cut) to a fixed length the
way YOLOv8's nms=True export does (Shape, Gather, Sub, Concat, Pad; or Slice), so the graph's
output has a static shape; references are ONNX Runtime's (check_onnx.compare's tolerance).
Prints TAP.
"""

import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_onnx  # noqa: E402

ROWS = 12   # the fixed length the cases pad or cut to


def const(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value, dtype), name))


def pad_rows(src, out):
    """src (N, W) -> out (ROWS, W): Slice to ROWS, then Pad by ROWS - N rows of zeros."""
    return [
        const("p_zero", [0]), const("p_rows", [ROWS]), const("p_one", [1]),
        const("p_rows_s", ROWS), const("p_idx0", 0),
        helper.make_node("Slice", [src, "p_zero", "p_rows", "p_zero", "p_one"], ["p_cut"]),
        helper.make_node("Shape", ["p_cut"], ["p_shape"]),
        helper.make_node("Gather", ["p_shape", "p_idx0"], ["p_n"], axis=0),
        helper.make_node("Sub", ["p_rows_s", "p_n"], ["p_missing"]),
        helper.make_node("Unsqueeze", ["p_missing", "p_zero"], ["p_missing1"]),
        helper.make_node("Concat", ["p_zero", "p_zero", "p_missing1", "p_zero"], ["p_pads"],
                         axis=0),
        helper.make_node("Pad", ["p_cut", "p_pads"], ["p_padded"], mode="constant"),
        helper.make_node("Cast", ["p_padded"], [out], to=TensorProto.FLOAT),
    ]


def graph_model(nodes, inputs, width):
    g = helper.make_graph(
        nodes, "tail",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, width])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def nonzero_case(rng):
    """NonZero of a (3, 5) map, transposed to (N, 2) coordinates."""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["coords"], perm=[1, 0])]
    nodes += pad_rows("coords", "y")
    m = graph_model(nodes, [("x", (3, 5))], 2)
    few = (rng.uniform(size=(3, 5)) > 0.8).astype(np.float32) * rng.uniform(size=(3, 5))
    many = (rng.uniform(size=(3, 5)) > 0.1).astype(np.float32)
    return m, [few.astype(np.float32), many]


def nms_case(rng, batches, classes, boxes, center, max_out, iou, score, n_inputs=5):
    """NonMaxSuppression of one input holding boxes and scores side by side: x (B, N, 4 + C),
    boxes x[..., :4], scores x[..., 4:] transposed to (B, C, N); its first n_inputs inputs
    (3: no iou_threshold, which is then 0, and no score_threshold)."""
    nodes = [const("c_lo", [0]), const("c_4", [4]), const("c_end", [4 + classes]),
             const("c_axis", [2]),
             helper.make_node("Slice", ["x", "c_lo", "c_4", "c_axis"], ["boxes"]),
             helper.make_node("Slice", ["x", "c_4", "c_end", "c_axis"], ["s_bnc"]),
             helper.make_node("Transpose", ["s_bnc"], ["scores"], perm=[0, 2, 1]),
             const("c_max", [max_out]), const("c_iou", [iou], np.float32),
             const("c_score", [score], np.float32),
             helper.make_node("NonMaxSuppression",
                              ["boxes", "scores", "c_max", "c_iou", "c_score"][:n_inputs],
                              ["sel"],
                              center_point_box=center)]
    nodes += pad_rows("sel", "y")
    m = graph_model(nodes, [("x", (batches, boxes, 4 + classes))], 3)

    def feed(spread):
        x = np.empty((batches, boxes, 4 + classes), np.float32)
        if center:
            x[..., 0:2] = rng.uniform(0, spread, size=(batches, boxes, 2))
            x[..., 2:4] = rng.uniform(1, 4, size=(batches, boxes, 2))
        else:
            a = rng.uniform(0, spread, size=(batches, boxes, 2))
            b = a + rng.uniform(1, 4, size=(batches, boxes, 2))
            x[..., 0:4] = np.concatenate([a, b], -1)
            x[:, ::2, 0:4] = x[:, ::2, [2, 3, 0, 1]]   # corners in either order
        x[..., 4:] = rng.uniform(size=(batches, boxes, classes))
        x[:, 1, 4:] = x[:, 0, 4:]       # a tie: kept in input order
        return x.astype(np.float32)
    # boxes crowded together: many suppressed; spread out: few
    return m, [feed(1.0), feed(60.0)]


def main():
    forwards, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    rng = np.random.default_rng(20261203)
    cases = {
        "NonZero (3, 5), Transpose, padded to %d rows" % ROWS: nonzero_case(rng),
        "NMS corners, 1 batch 1 class, iou 0.4, score 0.2": nms_case(rng, 1, 1, 16, 0, 20,
                                                                     0.4, 0.2),
        "NMS centres, 2 batches 3 classes, iou 0.3, score -1 (every box), max 2": nms_case(
            rng, 2, 3, 8, 1, 2, 0.3, -1.0),
        "NMS corners, 2 batches 2 classes, iou 0.6, score 0.5, cut at %d" % ROWS: nms_case(
            rng, 2, 2, 12, 0, 100, 0.6, 0.5),
        "NMS corners, 1 batch 2 classes, no iou or score input, max 3": nms_case(
            rng, 1, 2, 10, 0, 3, 0.0, 0.0, n_inputs=3),
    }
    print("1..%d" % len(cases))
    failed = 0
    for n, (name, (model, feeds)) in enumerate(cases.items(), 1):
        case_dir = os.path.join(work, "tail-%d" % n)
        os.makedirs(case_dir, exist_ok=True)
        path = os.path.join(case_dir, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        files = []
        for k, x in enumerate(feeds):
            files.append(os.path.join(case_dir, "in%d.npy" % k))
            np.save(files[-1], x)
        refs = [np.asarray(check_onnx.ort_outputs(path, {"x": x})[0], np.float64)
                for x in feeds]
        counts = [int(np.count_nonzero(np.any(r != 0, axis=-1))) for r in refs]
        ok, parts = counts[0] != counts[1], ["rows %s" % counts]
        for mode in ("hybrid", "imperative"):
            out_dir = os.path.join(case_dir, "out-" + mode)
            os.makedirs(out_dir, exist_ok=True)
            proc = subprocess.run([forwards, mode, path, out_dir] + files,
                                  stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=check_onnx.TIMEOUT_S)
            if proc.returncode != 0:
                ok = False
                parts.append("%s: %s" % (mode, proc.stderr.decode("utf-8", "replace")
                                         .strip()[-200:]))
                continue
            for k, ref in enumerate(refs):
                good, text = check_onnx.compare(
                    np.load(os.path.join(out_dir, "k%d-output0.npy" % k)), ref)
                ok = ok and good
                parts.append("%s forward %d %s" % (mode, k + 1, text))
        failed += not ok
        print("%s %d - %s: %s" % ("ok" if ok else "not ok", n, name,
                                  "; ".join(parts).replace("#", "No.")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
