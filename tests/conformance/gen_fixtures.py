#!/usr/bin/env python3
"""Generate hybridinfer's reference fixtures with real MXNet 1.9.1.

This is the only place reference outputs come from.  Every case is a directory

    <out>/<case>/model-symbol.json    written by MXNet (Symbol.save or HybridBlock.export)
    <out>/<case>/model-0000.params    written by MXNet (nd.save, keys "arg:NAME" / "aux:NAME")
    <out>/<case>/input<i>.npy         float32, C order
    <out>/<case>/output<i>.npy        float32, one per graph head, in head order
    <out>/<case>/case.json            written last and atomically: a case is complete iff it exists

The outputs are always computed by loading the *saved files* back into MXNet (mx.sym.load + bind,
is_train=False), so they describe exactly what an engine reading those files must produce.
For Gluon cases they are also compared with the live block's forward as a sanity check.

Usage:
    gen_fixtures.py --out tests/fixtures --set small          # checked-in fixtures (< 1 minute)
    gen_fixtures.py --out ~/.cache/hybridinfer/fixtures --set zoo   # cached, never committed
    gen_fixtures.py --out DIR --set all --only Pooling --force
    gen_fixtures.py --list --set small
    gen_fixtures.py --check-export DIR --input input0.npy --expect output0.npy

Run it with the MXNet 1.9.1 virtual environment (numpy < 1.24).
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
import warnings
from collections import OrderedDict, namedtuple

import numpy as np

# References come from MXNet's own CPU kernels, not the wheel's oneDNN ones: they define the op
# semantics every build shares.  The two agree to 1e-6 on every case here but one: with oneDNN,
# SoftmaxOutput on >2-D data without multi_output normalises over the last axis instead of the
# flattened (n, rest).  `--onednn` generates with oneDNN anyway, to compare.  The variable must
# be set before mxnet is imported.
if "--onednn" not in sys.argv:
    os.environ["MXNET_MKLDNN_ENABLED"] = "0"
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
import mxnet as mx  # noqa: E402
from mxnet import gluon  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

# SymbolBlock.imports warns that input dtypes are unknown before the first call: expected, noise.
warnings.filterwarnings("ignore", message="Cannot decide")

SYMBOL_FILE = "model-symbol.json"
PARAMS_FILE = "model-0000.params"

# A registered case: `build(rng)` is only called when the case is selected, so --only stays cheap.
Case = namedtuple("Case", "name set kind op note build nonfinite")
CASES = []


def register(name, set_, kind, build, op=None, note="", nonfinite=False):
    """`nonfinite`: the case feeds NaN/Inf on purpose, so its outputs may hold them too."""
    assert all(c.name != name for c in CASES), "duplicate case " + name
    CASES.append(Case(name, set_, kind, op, note, build, nonfinite))


def seed_of(text):
    """A stable 31-bit seed from a string (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


# ---------------------------------------------------------------------------------------------
# Random data helpers.  Inputs are chosen per op so that every branch of the op is exercised and
# nothing overflows (positive inputs for log/sqrt, values away from 0 for divisions, values on a
# half-integer grid where equality or rounding ties matter).
# ---------------------------------------------------------------------------------------------

def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def uniform(rng, shape, lo, hi):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def positive(rng, shape):
    return uniform(rng, shape, 0.5, 2.0)


def nonzero(rng, shape):
    """|x| in [0.5, 2] with random sign: safe denominators."""
    sign = np.where(rng.random_sample(shape) < 0.5, -1, 1)
    return (positive(rng, shape) * sign).astype(np.float32)


def grid(rng, shape, lo=-2.0, hi=2.0):
    """Multiples of 0.5: produces exact ties for comparisons, round, floor, sign(0)."""
    return (rng.randint(int(lo * 2), int(hi * 2) + 1, shape) * 0.5).astype(np.float32)


def with_nonfinite(gen, frac=0.2):
    """`gen`'s values with about `frac` of them replaced by NaN, +Inf and -Inf in equal parts.

    Whole rows of NaN/Inf and rows without any occur at these sizes too, so every op sees a
    special value in each position of its windows, rows and reductions, and clean ones beside."""
    def make(rng, shape):
        x = np.array(gen(rng, shape), dtype=np.float32)
        pick = rng.random_sample(x.shape)
        x[pick < frac / 3] = np.nan
        x[(pick >= frac / 3) & (pick < 2 * frac / 3)] = np.inf
        x[(pick >= 2 * frac / 3) & (pick < frac)] = -np.inf
        return x
    return make


def weight(rng, shape):
    """Normal weights scaled by 1/sqrt(fan_in) so activations stay O(1)."""
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    return randn(rng, shape, 1.0 / np.sqrt(max(fan_in, 1)))


def bn_stats(rng, c):
    """Non-trivial BatchNorm parameters so that errors in any of them show."""
    return OrderedDict([
        ("gamma", uniform(rng, (c,), 0.5, 1.5)),
        ("beta", randn(rng, (c,), 0.1)),
        ("moving_mean", randn(rng, (c,), 0.1)),
        ("moving_var", uniform(rng, (c,), 0.5, 2.0)),
    ])


# ---------------------------------------------------------------------------------------------
# Running saved files through MXNet and writing a case directory
# ---------------------------------------------------------------------------------------------

def split_params(loaded):
    """nd.load result -> (arg dict, aux dict) without the "arg:"/"aux:" prefixes."""
    args, auxs = {}, {}
    if isinstance(loaded, list):  # nd.save of an empty dict reads back as an empty list
        if loaded:
            raise RuntimeError("params file holds an unnamed array list")
        return args, auxs
    for key, val in loaded.items():
        kind, _, name = key.partition(":")
        if kind == "arg":
            args[name] = val
        elif kind == "aux":
            auxs[name] = val
        else:  # save_parameters() style keys: treat as arguments
            args[key] = val
    return args, auxs


def run_symbol_files(symbol_file, params_file, inputs):
    """Load a symbol + params from disk and run one inference forward.

    `inputs` maps input variable names to float32 arrays.  Arguments that are neither inputs nor
    in the params file (e.g. `softmax_label`) are bound to zeros of their inferred shape: at
    inference they do not influence the output, which is exactly what the engine must assume.
    """
    sym = mx.sym.load(symbol_file)
    args, auxs = split_params(mx.nd.load(params_file)) if params_file else ({}, {})
    shapes = {k: v.shape for k, v in inputs.items()}
    shapes.update((k, v.shape) for k, v in args.items() if k in sym.list_arguments())
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    arg_types, _, aux_types = sym.infer_type(**{k: np.float32 for k in inputs})
    bind_args = {}
    for name, shp, dt in zip(sym.list_arguments(), arg_shapes, arg_types):
        if name in inputs:
            bind_args[name] = mx.nd.array(inputs[name], dtype=np.float32)
        elif name in args:
            bind_args[name] = args[name]
        else:
            bind_args[name] = mx.nd.zeros(shp, dtype=dt or np.float32)
    bind_aux = {}
    for name, shp in zip(sym.list_auxiliary_states(), aux_shapes):
        if name not in auxs:
            raise RuntimeError("aux state %s missing from %s" % (name, params_file))
        bind_aux[name] = auxs[name]
    exe = sym.bind(mx.cpu(), args=bind_args, aux_states=bind_aux, grad_req="null")
    exe.forward(is_train=False)
    return [o.asnumpy().astype(np.float32) for o in exe.outputs]


def _atomic_write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def case_complete(case_dir):
    """A case is complete when case.json parses and every file it names exists."""
    path = os.path.join(case_dir, "case.json")
    try:
        with open(path) as f:
            meta = json.load(f)
        files = [i["file"] for i in meta["inputs"]] + list(meta["outputs"])
        files += [SYMBOL_FILE, PARAMS_FILE]
        return all(os.path.isfile(os.path.join(case_dir, p)) for p in files)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def fresh_case_dir(out, name):
    case_dir = os.path.join(out, name)
    if os.path.isdir(case_dir):
        shutil.rmtree(case_dir)  # no stale inputN/outputN from an older version of the case
    os.makedirs(case_dir)
    return case_dir


def finish_case(case, case_dir, inputs, outputs):
    """Write inputs/outputs and, last, case.json."""
    in_meta = []
    for i, (name, arr) in enumerate(inputs.items()):
        fname = "input%d.npy" % i
        np.save(os.path.join(case_dir, fname), np.ascontiguousarray(arr, dtype=np.float32))
        in_meta.append({"name": name, "file": fname, "shape": list(arr.shape)})
    out_files = []
    for i, arr in enumerate(outputs):
        # A NaN or Inf in a reference is a bug in the case unless the case is about them.
        if not case.nonfinite and not np.all(np.isfinite(arr)):
            raise RuntimeError("%s: output %d is not finite" % (case.name, i))
        fname = "output%d.npy" % i
        np.save(os.path.join(case_dir, fname), np.ascontiguousarray(arr, dtype=np.float32))
        out_files.append(fname)
    meta = OrderedDict([("name", case.name), ("inputs", in_meta), ("outputs", out_files),
                        ("kind", case.kind)])
    if case.op:
        meta["op"] = case.op
    meta["note"] = case.note
    # one key per line, each value on one line: easy to read and to diff
    body = ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in meta.items())
    _atomic_write_text(os.path.join(case_dir, "case.json"), "{\n" + body + "\n}\n")
    return outputs


def write_symbol_case(case, case_dir, sym, inputs, params):
    """Raw-symbol case: Symbol.save + nd.save({"arg:..", "aux:.."}) then run the files."""
    aux_names = set(sym.list_auxiliary_states())
    missing = [n for n in sym.list_arguments() + sym.list_auxiliary_states()
               if n not in inputs and n not in params and not n.endswith("_label")]
    if missing:
        raise RuntimeError("%s: no value for %s" % (case.name, missing))
    sym.save(os.path.join(case_dir, SYMBOL_FILE))
    saved = OrderedDict()
    for name, arr in params.items():
        saved[("aux:" if name in aux_names else "arg:") + name] = mx.nd.array(arr, dtype=arr.dtype)
    mx.nd.save(os.path.join(case_dir, PARAMS_FILE), saved)
    outs = run_symbol_files(os.path.join(case_dir, SYMBOL_FILE),
                            os.path.join(case_dir, PARAMS_FILE), inputs)
    return finish_case(case, case_dir, inputs, outs)


def gluon_input_names(n):
    # HybridBlock.export names a single input `data`, several `data0`, `data1`, ...
    return ["data"] if n == 1 else ["data%d" % i for i in range(n)]


def check_close(name, got, ref, rtol=1e-4):
    for i, (g, r) in enumerate(zip(got, ref)):
        if g.shape != r.shape:
            raise RuntimeError("%s: output %d shape %s vs %s" % (name, i, g.shape, r.shape))
        tol = rtol * max(1.0, float(np.max(np.abs(r))) if r.size else 1.0)
        diff = float(np.max(np.abs(g - r))) if r.size else 0.0
        if diff > tol:
            raise RuntimeError("%s: output %d differs by %g (tol %g)" % (name, i, diff, tol))


def export_gluon(net, arrays, case_dir):
    """hybridize + forward + export; returns the live block's outputs."""
    net.hybridize()
    outs = net(*[mx.nd.array(a) for a in arrays])
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    net.export(os.path.join(case_dir, "model"), epoch=0)
    return [o.asnumpy().astype(np.float32) for o in outs]


def write_gluon_case(case, case_dir, net, arrays):
    inputs = OrderedDict(zip(gluon_input_names(len(arrays)), arrays))
    live = export_gluon(net, arrays, case_dir)
    outs = run_symbol_files(os.path.join(case_dir, SYMBOL_FILE),
                            os.path.join(case_dir, PARAMS_FILE), inputs)
    check_close(case.name, outs, live)
    return finish_case(case, case_dir, inputs, outs)


# ---------------------------------------------------------------------------------------------
# Gluon parameter randomisation
# ---------------------------------------------------------------------------------------------

def randomize_gluon(net, rng, xavier=False):
    """Replace every parameter with seeded numpy values (independent of MXNet's RNG threading).

    Weights: normal/sqrt(fan_in), or Xavier uniform with fan-in scaling when `xavier`.
    Biases small normal; BatchNorm gamma/beta/running stats random
    and non-trivial so that a wrong BN formula or a wrong eps shows.
    """
    for name, p in sorted(net.collect_params().items()):
        shape = p.shape
        if name.endswith("running_var"):
            val = uniform(rng, shape, 0.5, 1.5)
        elif name.endswith("running_mean"):
            val = randn(rng, shape, 0.1)
        elif name.endswith("gamma"):
            val = uniform(rng, shape, 0.5, 1.5)
        elif name.endswith("beta") or name.endswith("bias"):
            val = randn(rng, shape, 0.1)
        elif xavier and len(shape) >= 2:
            # mx.init.Xavier(rnd_type="uniform", factor_type="in", magnitude=6): variance
            # 2/fan_in keeps ReLU networks without BatchNorm (squeezenet) from fading out.
            fan_in = int(np.prod(shape[1:]))
            scale = np.sqrt(6.0 / fan_in)
            val = uniform(rng, shape, -scale, scale)
        else:
            val = weight(rng, shape)
        p.set_data(mx.nd.array(val))


# ---------------------------------------------------------------------------------------------
# 1. Seed models (the hybrid tutorials' networks)
# ---------------------------------------------------------------------------------------------

class SeedNet(gluon.HybridBlock):
    """LeNet-style net of the hybridize tutorial, ending in a raw-parameter dot."""

    def __init__(self, **kwargs):
        super(SeedNet, self).__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(6, kernel_size=5)
            self.pool1 = nn.MaxPool2D(pool_size=2)
            self.conv2 = nn.Conv2D(16, kernel_size=5)
            self.pool2 = nn.MaxPool2D(pool_size=2)
            self.fc1 = nn.Dense(120)
            self.fc2 = nn.Dense(84)
            # a bare parameter, not a layer: exported as a variable feeding `dot`
            self.fc3_weight = self.params.get("fc3_weight", shape=(10, 84))

    def hybrid_forward(self, F, x, fc3_weight):
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.conv2(x)))
        x = x.reshape((0, -1))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return F.dot(x, fc3_weight, transpose_b=True)


class SeedHybridNet(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(SeedHybridNet, self).__init__(**kwargs)
        with self.name_scope():
            self.fc1 = nn.Dense(256)
            self.fc2 = nn.Dense(128)
            self.fc3 = nn.Dense(2)

    def hybrid_forward(self, F, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def seed_mlp():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"))
        net.add(nn.Dense(128, activation="relu"))
        net.add(nn.Dense(2))
    return net


def gluon_builder(make_net, shapes, model_seed):
    """Build -> deferred init via one imperative forward -> randomise -> case.

    The weights are seeded by `model_seed`, the inputs by the case name: batch variants of one
    model get byte-identical model files (git stores them once)."""
    def build(case, case_dir, rng):
        net = make_net()
        arrays = [randn(rng, s) for s in shapes]
        net.initialize(mx.init.Xavier())
        net(*[mx.nd.array(a) for a in arrays])  # resolves deferred shapes
        randomize_gluon(net, np.random.RandomState(seed_of(model_seed)))
        return write_gluon_case(case, case_dir, net, arrays)
    return build


def register_seeds():
    register("seed_net", "small", "seed", gluon_builder(SeedNet, [(4, 1, 28, 28)], "seed_net"),
             note="tutorial LeNet: conv/relu/maxpool x2, reshape (0,-1), dense, dot transpose_b")
    register("seed_mlp", "small", "seed", gluon_builder(seed_mlp, [(1, 512)], "seed_mlp"),
             note="tutorial HybridSequential MLP 512-256-128-2, batch 1")
    register("seed_mlp_b4", "small", "seed", gluon_builder(seed_mlp, [(4, 512)], "seed_mlp"),
             note="tutorial HybridSequential MLP, batch 4")
    register("seed_hybridnet", "small", "seed",
             gluon_builder(SeedHybridNet, [(4, 20)], "seed_hybridnet"),
             note="tutorial HybridNet with hybrid_forward(F, x) and F.relu")


# ---------------------------------------------------------------------------------------------
# 2. Single ops.  Each builder returns (symbol, inputs, params); names "op_<Op>_<variant>".
# ---------------------------------------------------------------------------------------------

V = mx.sym.var
I = mx.sym._internal  # scalar ops, _arange and _copy live here


def op(name, opname, build, note="", nonfinite=False):
    """Register a raw-symbol case.  build(rng) -> (sym, OrderedDict inputs, dict params)."""
    def run(case, case_dir, rng):
        sym, inputs, params = build(rng)
        return write_symbol_case(case, case_dir, sym, inputs, params)
    register("op_" + name, "small", "op", run, op=opname, note=note, nonfinite=nonfinite)


def unary(fn, shape=(2, 3, 4, 5), gen=randn):
    """Builder for a one-input op with no parameters."""
    def build(rng):
        return fn(V("data")), OrderedDict(data=gen(rng, shape)), {}
    return build


def inputs_of(rng, *specs):
    """specs: (shape, generator) per input, named data0, data1, ..."""
    return OrderedDict(("data%d" % i, gen(rng, shp)) for i, (shp, gen) in enumerate(specs))


def ops_convolution():
    def conv(name, in_shape, nf, kernel, note="", **kw):
        def build(rng):
            c = in_shape[1]
            g = kw.get("num_group", 1)
            sym = mx.sym.Convolution(V("data"), num_filter=nf, kernel=kernel, name="conv", **kw)
            params = {"conv_weight": weight(rng, (nf, c // g) + tuple(kernel))}
            if not kw.get("no_bias", False):
                params["conv_bias"] = randn(rng, (nf,), 0.1)
            return sym, OrderedDict(data=randn(rng, in_shape)), params
        op("Convolution_" + name, "Convolution", build, note)

    x = (2, 3, 7, 7)
    conv("k1", x, 4, (1, 1), "1x1 convolution")
    conv("k3", x, 4, (3, 3))
    conv("k3_pad1", x, 4, (3, 3), pad=(1, 1))
    conv("k5", x, 4, (5, 5))
    conv("k5_pad2", x, 4, (5, 5), pad=(2, 2))
    conv("stride2", x, 4, (3, 3), stride=(2, 2))
    conv("stride2_pad1", x, 4, (3, 3), stride=(2, 2), pad=(1, 1))
    conv("dilate2", x, 4, (3, 3), dilate=(2, 2))
    conv("stride2_pad1_dilate2", x, 4, (3, 3), stride=(2, 2), pad=(1, 1), dilate=(2, 2))
    conv("no_bias", x, 4, (3, 3), pad=(1, 1), no_bias=True)
    conv("group2", (2, 4, 7, 7), 6, (3, 3), pad=(1, 1), num_group=2)
    conv("depthwise", (2, 4, 7, 7), 4, (3, 3), pad=(1, 1), num_group=4, note="num_group == C")
    conv("depthwise_mult2", (2, 4, 7, 7), 8, (3, 3), pad=(1, 1), num_group=4,
         note="depthwise with channel multiplier 2")
    conv("depthwise_stride2_nobias", (2, 4, 8, 8), 4, (3, 3), stride=(2, 2), pad=(1, 1),
         num_group=4, no_bias=True)
    conv("nonsquare_k3x1", (2, 3, 7, 6), 4, (3, 1), stride=(2, 1), pad=(1, 0))
    conv("nonsquare_k1x5_input", (2, 3, 5, 9), 5, (1, 5), pad=(0, 2), dilate=(1, 2))
    conv("k1_stride2", (2, 3, 8, 8), 4, (1, 1), stride=(2, 2), no_bias=True,
         note="resnet-style downsampling shortcut")


def ops_upsampling():
    """UpSampling: nearest with one input and several (concatenated or summed, each input
    repeated by its own whole factor), bilinear (a Deconvolution with the weight given)."""
    def nearest(name, shapes, note="", **kw):
        def build(rng):
            ins = inputs_of(rng, *[(s, randn) for s in shapes])
            sym = mx.sym.UpSampling(*[V(n) for n in ins], sample_type="nearest",
                                    num_args=len(shapes), name="up", **kw)
            return sym, ins, {}
        op("UpSampling_" + name, "UpSampling", build, note)

    nearest("nearest_s2", [(2, 3, 4, 5)], scale=2)
    nearest("nearest_s3", [(1, 2, 3, 4)], scale=3)
    nearest("nearest_s1", [(2, 2, 3, 3)], scale=1, note="scale 1 copies")
    nearest("nearest_sum_one_input", [(2, 3, 2, 3)], scale=2, multi_input_mode="sum",
            note="sum with one input is the plain repeat")
    nearest("nearest_concat4", [(2, 3, 4, 4), (2, 2, 2, 2), (2, 1, 8, 8), (2, 2, 4, 4)],
            scale=2, note="inputs repeated 2, 4, 1 and 2 times, channels concatenated")
    nearest("nearest_sum2", [(2, 3, 3, 2), (2, 3, 6, 4)], scale=2, multi_input_mode="sum",
            note="two inputs summed, the second already at the output size")
    nearest("nearest_sum3", [(1, 2, 2, 3), (1, 2, 4, 6), (1, 2, 2, 3)], scale=4,
            multi_input_mode="sum", note="three inputs summed, repeated 4, 2 and 4 times")

    def bilinear(name, in_shape, scale, note=""):
        def build(rng):
            c = in_shape[1]
            k = 2 * scale - scale % 2
            sym = mx.sym.UpSampling(V("data"), V("up_weight"), scale=scale,
                                    sample_type="bilinear", num_filter=c, num_args=2, name="up")
            params = {"up_weight": weight(rng, (c, 1, k, k))}
            return sym, OrderedDict(data=randn(rng, in_shape)), params
        op("UpSampling_" + name, "UpSampling", build, note)

    bilinear("bilinear_s2", (2, 3, 4, 5), 2, "kernel 4, stride 2, pad 1, one group a channel")
    bilinear("bilinear_s3", (1, 2, 3, 4), 3, "odd scale: kernel 5, pad 1")
    bilinear("bilinear_s4", (1, 4, 3, 3), 4, "kernel 8, pad 2")
    bilinear("bilinear_s1", (2, 2, 3, 3), 1, "kernel 1: a per-channel scale")


def ops_pad():
    """Pad in its three modes on 4-D and 5-D data; negative pads crop, as MXNet lets them."""
    def pad(name, in_shape, note="", **kw):
        op("Pad_" + name, "Pad",
           unary(lambda d: mx.sym.pad(d, name="pad", **kw), shape=in_shape), note)

    x4, x5 = (2, 3, 4, 5), (1, 2, 3, 4, 3)
    pad("constant_4d", x4, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 0, 3))
    pad("constant_value", x4, "constant_value=1.5",
        mode="constant", pad_width=(0, 0, 0, 0, 2, 1, 1, 1), constant_value=1.5)
    pad("constant_5d", x5, mode="constant", pad_width=(0, 0, 0, 0, 1, 0, 2, 1, 0, 2),
        constant_value=-2)
    pad("constant_crop", x4, "negative pads crop",
        mode="constant", pad_width=(0, 0, 0, 0, -1, 2, 1, -2))
    pad("edge_4d", x4, mode="edge", pad_width=(0, 0, 0, 0, 2, 1, 3, 2))
    pad("edge_wider_than_input", (1, 2, 2, 3), "pads longer than the axis repeat the edge",
        mode="edge", pad_width=(0, 0, 0, 0, 5, 4, 0, 7))
    pad("edge_5d", x5, mode="edge", pad_width=(0, 0, 0, 0, 2, 1, 0, 1, 1, 2))
    pad("edge_crop", x4, mode="edge", pad_width=(0, 0, 0, 0, -1, 2, 2, -1))
    pad("reflect_4d", x4, "pads of the axis length less one, the most MXNet allows",
        mode="reflect", pad_width=(0, 0, 0, 0, 3, 3, 4, 4))
    pad("reflect_5d", x5, mode="reflect", pad_width=(0, 0, 0, 0, 1, 2, 2, 1, 2, 2))
    pad("reflect_crop", x4, mode="reflect", pad_width=(0, 0, 0, 0, -1, 2, 1, -2))


def ops_deform_conv():
    """_contrib_ModulatedDeformableConvolution (DCNv2): offsets of a few pixels so taps land
    between pixels, on the border and outside the image; masks of either sign; groups,
    deformable groups, stride, pad and dilation."""
    def dcn(name, in_shape, nf, kernel, note="", **kw):
        def build(rng):
            n, c, h, w = in_shape
            g = kw.get("num_group", 1)
            dg = kw.get("num_deformable_group", 1)
            stride, pad, dil = kw.get("stride", (1, 1)), kw.get("pad", (0, 0)), kw.get("dilate", (1, 1))
            ho, wo = [(size + 2 * pd - (d * (k - 1) + 1)) // st + 1
                      for size, pd, d, k, st in zip((h, w), pad, dil, kernel, stride)]
            taps = kernel[0] * kernel[1]
            sym = mx.sym.contrib.ModulatedDeformableConvolution(
                V("data"), V("offset"), V("mask"), num_filter=nf, kernel=kernel, name="dcn", **kw)
            params = {"dcn_weight": weight(rng, (nf, c // g) + tuple(kernel))}
            if not kw.get("no_bias", False):
                params["dcn_bias"] = randn(rng, (nf,), 0.1)
            inputs = OrderedDict(data=randn(rng, in_shape),
                                 offset=uniform(rng, (n, 2 * dg * taps, ho, wo), -3.0, 3.0),
                                 mask=uniform(rng, (n, dg * taps, ho, wo), -0.5, 1.5))
            return sym, inputs, params
        op("ModulatedDeformableConvolution_" + name, "_contrib_ModulatedDeformableConvolution",
           build, note)

    x = (2, 4, 6, 7)
    dcn("k3_pad1", x, 5, (3, 3), pad=(1, 1))
    dcn("k1", x, 3, (1, 1), "1x1: one tap per position")
    dcn("stride2_dilate2", x, 4, (3, 3), stride=(2, 2), pad=(2, 2), dilate=(2, 2))
    dcn("nonsquare_no_bias", (1, 3, 5, 8), 2, (3, 2), pad=(1, 0), no_bias=True)
    dcn("group2", x, 6, (3, 3), pad=(1, 1), num_group=2)
    dcn("deformable_group2", x, 4, (3, 3), pad=(1, 1), num_deformable_group=2,
        note="offsets and masks per half of the channels")
    dcn("groups_and_deformable_groups", (1, 4, 5, 5), 4, (3, 3), pad=(1, 1), num_group=2,
        num_deformable_group=4)


def ops_like():
    """Ops shaped by a second input: reshape_like (ranges of axes), broadcast_like (whole or by
    axes pairs) and _contrib_arange_like (whole, along an axis, repeated, in an integer dtype)."""
    def two(name, opname, fn, shapes, note=""):
        def build(rng):
            ins = inputs_of(rng, *[(s, randn) for s in shapes])
            return fn(V("data0"), V("data1")), ins, {}
        op(name, opname, build, note)

    rl = mx.sym.reshape_like
    two("reshape_like_whole", "reshape_like", lambda a, b: rl(a, b, name="rl"),
        [(2, 3, 4), (6, 4)])
    two("reshape_like_ranges", "reshape_like",
        lambda a, b: rl(a, b, lhs_begin=1, lhs_end=3, rhs_begin=0, rhs_end=2, name="rl"),
        [(2, 3, 4, 5), (6, 2, 9)], "lhs axes 1-2 become rhs axes 0-1")
    two("reshape_like_negative", "reshape_like",
        lambda a, b: rl(a, b, lhs_begin=-2, rhs_begin=1, rhs_end=-1, name="rl"),
        [(2, 3, 4), (9, 2, 6, 8)], "negative bounds; lhs_end None is the rank")
    two("reshape_like_begin_only", "reshape_like",
        lambda a, b: rl(a, b, lhs_begin=1, rhs_begin=1, name="rl"),
        [(2, 3, 4), (5, 12)])
    bl = mx.sym.broadcast_like
    two("broadcast_like_whole", "broadcast_like", lambda a, b: bl(a, b, name="bl"),
        [(2, 1, 4, 1), (2, 3, 4, 5)])
    two("broadcast_like_axes", "broadcast_like",
        lambda a, b: bl(a, b, lhs_axes=(1,), rhs_axes=(2,), name="bl"),
        [(2, 1), (5, 7, 9)])
    two("broadcast_like_axes_negative", "broadcast_like",
        lambda a, b: bl(a, b, lhs_axes=(-1, 1), rhs_axes=(0, -2), name="bl"),
        [(2, 1, 1), (5, 7, 9)], "negative axes on both sides")
    two("broadcast_like_repeated_axis", "broadcast_like",
        lambda a, b: bl(a, b, lhs_axes=(1, 1), rhs_axes=(0, 2), name="bl"),
        [(2, 1, 3), (5, 7, 9)], "lhs axis 1 named twice: the last pair wins")

    def arange_like(name, in_shape, note="", dtype=None, **kw):
        def build(rng):
            x = V("data")
            if dtype:
                x = mx.sym.Cast(x, dtype=dtype)
            sym = mx.sym.contrib.arange_like(x, name="al", **kw)
            if dtype:
                sym = mx.sym.Cast(sym, dtype="float32")
            return sym, OrderedDict(data=randn(rng, in_shape)), {}
        op("_contrib_arange_like_" + name, "_contrib_arange_like", build, note)

    arange_like("default", (2, 3, 4))
    arange_like("start_step", (2, 3, 4), start=2.5, step=-0.3)
    arange_like("repeat", (3, 5), start=1, step=0.7, repeat=3)
    arange_like("axis", (2, 3, 4), axis=1, start=-1, step=0.25)
    arange_like("axis_negative_repeat", (2, 3, 7), axis=-1, start=3, repeat=2)
    arange_like("step_zero", (2, 3), start=1.5, step=0.0, note="every value is start")
    arange_like("long", (70000,), start=16777000.0, step=1.0,
                note="past 2**24: float32 rounding of start + i*step")
    arange_like("int32", (2, 3, 4), dtype="int32", start=0.5, step=2.7,
                note="int32 data: start and step truncated first")


def ops_batchnorm():
    def bn(name, in_shape, axis_len, note, **kw):
        def build(rng):
            sym = mx.sym.BatchNorm(V("data"), name="bn", **kw)
            params = {"bn_" + k: v for k, v in bn_stats(rng, axis_len).items()}
            return sym, OrderedDict(data=randn(rng, in_shape, 2.0)), params
        op("BatchNorm_" + name, "BatchNorm", build, note)

    x = (2, 3, 5, 5)
    bn("default", x, 3, "no attributes written: fix_gamma=True (gamma ignored), eps=1e-3")
    bn("fixgamma_false_eps1e-5", x, 3, "Gluon-style attributes", fix_gamma=False, eps=1e-5)
    bn("fixgamma_false_default_eps", x, 3, "eps omitted: 1e-3", fix_gamma=False)
    bn("use_global_stats", x, 3, "", fix_gamma=False, eps=1e-5, use_global_stats=True)
    bn("axis_minus1", (2, 5, 5, 3), 3, "NHWC, channel axis -1", fix_gamma=False, eps=1e-5,
       axis=-1)
    bn("axis3", (2, 5, 5, 3), 3, "NHWC, channel axis 3", fix_gamma=False, eps=1e-5, axis=3)
    bn("2d_input", (4, 6), 6, "BatchNorm after a Dense layer", fix_gamma=False, eps=1e-5)

    def sync_bn(name, in_shape, note, conv=False, **kw):
        def build(rng):
            c = in_shape[1]
            x = V("data")
            params = {}
            if conv:
                x = mx.sym.Convolution(x, num_filter=c, kernel=(3, 3), pad=(1, 1), name="conv")
                params["conv_weight"] = weight(rng, (c, c, 3, 3))
                params["conv_bias"] = randn(rng, (c,), 0.1)
            sym = mx.sym.contrib.SyncBatchNorm(x, name="bn", key="bn", **kw)
            params.update({"bn_" + k: v for k, v in bn_stats(rng, c).items()})
            return sym, OrderedDict(data=randn(rng, in_shape, 2.0)), params
        op("SyncBatchNorm_" + name, "_contrib_SyncBatchNorm", build, note)

    sync_bn("default", x, "defaults as BatchNorm's: fix_gamma=True, eps=1e-3")
    sync_bn("fixgamma_false_eps1e-5", x, "Gluon's attributes", fix_gamma=False, eps=1e-5,
            ndev=4)
    sync_bn("3d_input", (2, 4, 5), "(N, C, W)", fix_gamma=False)
    sync_bn("2d_input", (4, 6), "(N, C)", fix_gamma=False, eps=1e-4)
    sync_bn("after_conv", (2, 4, 5, 5), "folded into the convolution in hybrid mode",
            conv=True, fix_gamma=False, eps=1e-5)


def ops_activation():
    def softrelu_input(rng, shape):
        x = randn(rng, shape, 8.0)
        x.flat[:6] = [20.5, 25.0, 40.0, -25.0, 19.5, 0.0]  # both sides of the x > 20 shortcut
        return x

    for act in ["relu", "sigmoid", "tanh", "softsign"]:
        op("Activation_" + act, "Activation",
           unary(lambda d, a=act: mx.sym.Activation(d, act_type=a, name="act"), gen=
                 lambda r, s: randn(r, s, 2.0)))
    op("Activation_softrelu", "Activation",
       unary(lambda d: mx.sym.Activation(d, act_type="softrelu", name="act"),
             gen=softrelu_input), "includes inputs > 20 (identity branch)")


def ops_leakyrelu():
    def lrelu(name, note="", **kw):
        op("LeakyReLU_" + name, "LeakyReLU",
           unary(lambda d: mx.sym.LeakyReLU(d, name="lrelu", **kw),
                 gen=lambda r, s: randn(r, s, 2.0)), note)

    lrelu("default", "act_type omitted: leaky, slope 0.25")
    lrelu("leaky_slope0.1", act_type="leaky", slope=0.1)
    lrelu("elu", "slope omitted: 0.25", act_type="elu")
    lrelu("elu_slope1", act_type="elu", slope=1.0)
    lrelu("selu", act_type="selu")
    lrelu("gelu", act_type="gelu")
    # rrelu has a second visible output (its random mask, left uninitialised at inference), so
    # only output 0 is made a head.
    rrelu_note = "head is output 0 only; inference slope = (lower_bound + upper_bound) / 2"
    op("LeakyReLU_rrelu", "LeakyReLU",
       unary(lambda d: mx.sym.LeakyReLU(d, act_type="rrelu", name="lrelu")[0],
             gen=lambda r, s: randn(r, s, 2.0)), rrelu_note + ", defaults 0.125 and 0.334")
    op("LeakyReLU_rrelu_bounds", "LeakyReLU",
       unary(lambda d: mx.sym.LeakyReLU(d, act_type="rrelu", lower_bound=0.2, upper_bound=0.4,
                                        name="lrelu")[0],
             gen=lambda r, s: randn(r, s, 2.0)), rrelu_note)

    def prelu(rng):
        sym = mx.sym.LeakyReLU(V("data"), V("lrelu_gamma"), act_type="prelu", name="lrelu")
        return sym, OrderedDict(data=randn(rng, (2, 3, 4, 5))), \
            {"lrelu_gamma": uniform(rng, (3,), 0.05, 0.5)}
    op("LeakyReLU_prelu", "LeakyReLU", prelu, "per-channel slope on axis 1")


def ops_pooling():
    def pool(name, in_shape, note="", gen=randn, **kw):
        op("Pooling_" + name, "Pooling",
           unary(lambda d: mx.sym.Pooling(d, name="pool", **kw), shape=in_shape, gen=gen), note)

    x7, x8 = (2, 3, 7, 7), (2, 3, 8, 8)
    pool("max_k2_s2", x8, kernel=(2, 2), stride=(2, 2), pool_type="max")
    pool("max_default_type_k3", x7, "pool_type omitted: max, stride 1", kernel=(3, 3))
    pool("max_k3_s2_valid", x8, kernel=(3, 3), stride=(2, 2), pool_type="max")
    pool("max_k3_s2_full", x8, "ceil mode", kernel=(3, 3), stride=(2, 2), pool_type="max",
         pooling_convention="full")
    pool("max_k3_s2_pad1", x7, "padding never wins a max", kernel=(3, 3), stride=(2, 2),
         pad=(1, 1), gen=lambda r, s: randn(r, s) - 5.0)
    pool("max_k3x2_nonsquare", x7, kernel=(3, 2), stride=(2, 1), pad=(1, 0))
    # pooling_convention="same" is not generated: MXNet 1.9.1 accepts it only for 1-D max pooling.
    pool("avg_k2_s2", x8, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    pool("avg_k3_s2_pad1", x7, "count_include_pad default True", kernel=(3, 3), stride=(2, 2),
         pad=(1, 1), pool_type="avg")
    pool("avg_k3_s2_pad1_nopadcount", x7, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
         pool_type="avg", count_include_pad=False)
    pool("avg_full", x8, "window clamped to the padded image", kernel=(3, 3), stride=(2, 2),
         pad=(1, 1), pool_type="avg", pooling_convention="full")
    pool("avg_full_nopadcount", x8, "resnetv1b-style ceil_mode avg pool", kernel=(3, 3),
         stride=(2, 2), pad=(1, 1), pool_type="avg", pooling_convention="full",
         count_include_pad=False)
    pool("avg_k2_s2_full_nopadcount_nopad", x7, kernel=(2, 2), stride=(2, 2), pool_type="avg",
         pooling_convention="full", count_include_pad=False)
    pool("avg_3d_depth_pad", (2, 2, 1, 4, 4), "depth 1 padded by 1: output slices wholly in "
         "the padding", kernel=(1, 3, 2), stride=(2, 2, 2), pad=(1, 0, 1), pool_type="avg")
    pool("max_3d_k1_depth", (2, 2, 1, 5, 5), "depth 1, kernel depth 1, no depth pad",
         kernel=(1, 3, 3), stride=(1, 2, 2), pad=(0, 1, 1), pool_type="max")
    pool("sum_k2_s2", x8, kernel=(2, 2), stride=(2, 2), pool_type="sum")
    pool("sum_k3_pad1", x7, kernel=(3, 3), pad=(1, 1), pool_type="sum")
    pool("lp_p2", x8, kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)
    pool("lp_p3", x8, "positive inputs", kernel=(2, 2), stride=(2, 2), pool_type="lp",
         p_value=3, gen=positive)
    pool("lp_p3_signed", x8, "signed inputs: MXNet computes cbrt(sum x^3), no |x|",
         kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=3)
    pool("global_max", x7, kernel=(1, 1), global_pool=True, pool_type="max")
    pool("global_avg", x7, "as written by Gluon GlobalAvgPool2D", kernel=(1, 1),
         global_pool=True, pool_type="avg")
    pool("global_avg_nokernel", x7, "global pool with no kernel attribute", global_pool=True,
         pool_type="avg")
    pool("global_sum", x7, kernel=(1, 1), global_pool=True, pool_type="sum")


def ops_fullyconnected():
    def fc(name, in_shape, k, nh, note="", **kw):
        def build(rng):
            sym = mx.sym.FullyConnected(V("data"), num_hidden=nh, name="fc", **kw)
            params = {"fc_weight": weight(rng, (nh, k))}
            if not kw.get("no_bias", False):
                params["fc_bias"] = randn(rng, (nh,), 0.1)
            return sym, OrderedDict(data=randn(rng, in_shape)), params
        op("FullyConnected_" + name, "FullyConnected", build, note)

    fc("2d", (4, 10), 10, 6)
    fc("flatten_4d", (2, 3, 4, 4), 48, 5, "flatten default True: (2, 48) x W^T")
    fc("flatten_false_3d", (2, 3, 6), 6, 5, "acts on the last axis", flatten=False)
    fc("no_bias", (4, 10), 10, 6, no_bias=True)
    fc("no_bias_flatten_false", (2, 3, 6), 6, 4, no_bias=True, flatten=False)


def ops_shape():
    op("Flatten_4d", "Flatten", unary(lambda d: mx.sym.Flatten(d)))
    op("Flatten_3d", "Flatten", unary(lambda d: mx.sym.Flatten(d), shape=(2, 3, 4)))

    def concat(name, shapes, **kw):
        def build(rng):
            ins = inputs_of(rng, *[(s, randn) for s in shapes])
            return mx.sym.Concat(*[V(n) for n in ins], name="concat", **kw), ins, {}
        op("Concat_" + name, "Concat", build)
    concat("dim1", [(2, 3, 4, 4), (2, 5, 4, 4)])
    concat("default_dim", [(2, 2, 3), (2, 4, 3)])
    concat("dim0", [(2, 3, 4), (1, 3, 4)], dim=0)
    concat("dim3", [(2, 3, 4, 2), (2, 3, 4, 5)], dim=3)
    concat("3inputs", [(2, 1, 3, 3), (2, 2, 3, 3), (2, 3, 3, 3)], dim=1)
    # SSD on COCO concatenates one value per class and more: nothing may cap
    # the count of a node's inputs (shape inference, the plan's calls).
    concat("100inputs", [(2, 1 + i % 3, 3) for i in range(100)], dim=1)

    def wide_split(rng, n):
        """One input split into n parts: n-input nodes without n input files."""
        ins = OrderedDict(data=randn(rng, (2, n, 3)))
        parts = mx.sym.split(V("data"), num_outputs=n, axis=1, name="parts")
        return [parts[i] for i in range(n)], ins

    def concat_reversed(rng):
        parts, ins = wide_split(rng, 100)
        return mx.sym.Concat(*parts[::-1], dim=2, name="concat"), ins, {}
    op("Concat_100_split_parts", "Concat", concat_reversed,
       "100 outputs of one split, concatenated in reverse order on another axis")

    def concat_weights_last(rng):
        parts, ins = wide_split(rng, 36)
        params = OrderedDict(("w%d" % i, randn(rng, (2, 1, 3))) for i in range(4))
        return mx.sym.Concat(*(parts + [V(n) for n in params]), dim=1, name="concat"), ins, params
    op("Concat_40_weights_last", "Concat", concat_weights_last,
       "36 split parts then 4 weights: constant inputs past the 32nd")

    def add_n_wide(rng):
        parts, ins = wide_split(rng, 70)
        return mx.sym.add_n(*parts, name="sum"), ins, {}
    op("add_n_70inputs", "add_n", add_n_wide, "ElementWiseSum of 70 split parts")

    def stack_wide(rng):
        parts, ins = wide_split(rng, 100)
        return mx.sym.stack(*parts, num_args=100, axis=1, name="stk"), ins, {}
    op("stack_100inputs", "stack", stack_wide, "100 split parts stacked on axis 1")

    def many_heads(rng):
        parts, ins = wide_split(rng, 80)
        return mx.sym.Group([p * (i + 1) for i, p in enumerate(parts)]), ins, {}
    op("SliceChannel_80_heads", "SliceChannel", many_heads,
       "80 graph heads, each a split part times a scalar")

    op("Dropout_default", "Dropout", unary(lambda d: mx.sym.Dropout(d, name="drop")),
       "p=0.5 default; identity at inference")
    op("Dropout_p0.2", "Dropout", unary(lambda d: mx.sym.Dropout(d, p=0.2, name="drop")))
    op("_copy", "_copy", unary(lambda d: I._copy(d)))

    def reshape(name, in_shape, note="", **kw):
        op("Reshape_" + name, "Reshape",
           unary(lambda d: mx.sym.Reshape(d, **kw), shape=in_shape), note)
    reshape("explicit", (2, 3, 4, 5), shape=(6, 20))
    reshape("code0_minus1", (2, 3, 4, 5), "(0, -1) -> (2, 60)", shape=(0, -1))
    reshape("minus1_first", (2, 3, 4, 5), "(-1, 5) -> (24, 5)", shape=(-1, 5))
    reshape("minus2", (2, 3, 4, 5), "(0, -2, 1) -> (2, 3, 4, 5, 1)", shape=(0, -2, 1))
    reshape("minus2_only", (2, 3, 4), "(-2,) copies everything", shape=(-2,))
    reshape("minus3", (2, 3, 4, 5), "(-3, -3) -> (6, 20)", shape=(-3, -3))
    reshape("code0_minus3_code0", (2, 3, 4, 5), "(0, -3, 0) -> (2, 12, 5)", shape=(0, -3, 0))
    reshape("minus4", (2, 12, 5), "(0, -4, 3, 4, 0) -> (2, 3, 4, 5)", shape=(0, -4, 3, 4, 0))
    reshape("minus4_infer", (2, 12, 5), "(0, -4, 3, -1, 0) -> (2, 3, 4, 5)",
            shape=(0, -4, 3, -1, 0))
    reshape("minus4_infer_first", (2, 3, 4, 5), "(-4, -1, 2, -2) -> (1, 2, 3, 4, 5)",
            shape=(-4, -1, 2, -2))
    reshape("reverse", (10, 5, 4), "(-1, 0) reverse -> (50, 4)", shape=(-1, 0), reverse=True)
    reshape("reverse_4d", (2, 3, 4, 5), "(0, -1) reverse -> (24, 5)", shape=(0, -1),
            reverse=True)

    op("transpose_default", "transpose", unary(lambda d: mx.sym.transpose(d)),
       "axes omitted: reverse all axes")
    op("transpose_0231", "transpose", unary(lambda d: mx.sym.transpose(d, axes=(0, 2, 3, 1))))
    op("transpose_3d_102", "transpose",
       unary(lambda d: mx.sym.transpose(d, axes=(1, 0, 2)), shape=(2, 3, 4)))
    op("SwapAxis_default", "SwapAxis", unary(lambda d: mx.sym.SwapAxis(d)),
       "dim1 = dim2 = 0: the identity")
    op("SwapAxis_1_3", "SwapAxis", unary(lambda d: mx.sym.SwapAxis(d, dim1=1, dim2=3)))
    op("SwapAxis_negative", "SwapAxis",
       unary(lambda d: mx.sym.swapaxes(d, dim1=-1, dim2=0), shape=(2, 3, 4)),
       "negative dim1 counts from the end")
    op("SwapAxis_same", "SwapAxis", unary(lambda d: mx.sym.SwapAxis(d, dim1=2, dim2=-2)),
       "dim1 and dim2 name the same axis: the identity")

    def slc(name, note="", shape=(4, 5, 6), **kw):
        op("slice_" + name, "slice", unary(lambda d: mx.sym.slice(d, **kw), shape=shape), note)
    slc("basic", begin=(1, 0, 2), end=(3, 4, 5))
    slc("none_entries", begin=(1, None, 0), end=(3, None, None))
    slc("negative", begin=(-3, 0), end=(-1, -2))
    slc("step2", begin=(0, None, 1), end=(None, None, None), step=(2, None, 2))
    slc("reverse_axis0", "negative step with None begin/end", begin=(None,), end=(None,),
        step=(-1,))
    slc("negative_step_mixed", begin=(3, None, 4), end=(0, None, None), step=(-1, 2, -2))
    slc("clamped", "end past the axis is clamped", begin=(1, 2), end=(100, 7))

    def sla(name, note="", shape=(4, 5, 6), **kw):
        op("slice_axis_" + name, "slice_axis",
           unary(lambda d: mx.sym.slice_axis(d, **kw), shape=shape), note)
    sla("axis0", axis=0, begin=1, end=3)
    sla("end_none", axis=1, begin=1, end=None)
    sla("negative_begin", axis=-1, begin=-3, end=None)
    sla("negative_begin_end", axis=2, begin=-4, end=-1)

    op("clip", "clip", unary(lambda d: mx.sym.clip(d, a_min=-0.5, a_max=0.7)))
    op("clip_relu6", "clip", unary(lambda d: mx.sym.clip(d, a_min=0.0, a_max=6.0),
                                   gen=lambda r, s: randn(r, s, 5.0)))
    op("expand_dims_axis0", "expand_dims", unary(lambda d: mx.sym.expand_dims(d, axis=0),
                                                 shape=(3, 4)))
    op("expand_dims_axis_minus1", "expand_dims",
       unary(lambda d: mx.sym.expand_dims(d, axis=-1), shape=(3, 4)))
    op("expand_dims_axis1", "expand_dims", unary(lambda d: mx.sym.expand_dims(d, axis=1),
                                                 shape=(2, 3, 4)))
    op("tile_same_ndim", "tile", unary(lambda d: mx.sym.tile(d, reps=(2, 1, 3)), shape=(2, 3, 4)))
    op("tile_fewer_reps", "tile", unary(lambda d: mx.sym.tile(d, reps=(2,)), shape=(2, 3, 4)),
       "reps shorter than ndim: leading 1s")
    op("tile_more_reps", "tile", unary(lambda d: mx.sym.tile(d, reps=(2, 1, 1, 2)),
                                       shape=(2, 3, 4)), "reps longer than ndim: new axes")
    op("repeat_noaxis", "repeat", unary(lambda d: mx.sym.repeat(d, repeats=2), shape=(2, 3, 4)),
       "axis omitted: flattens")
    op("repeat_axis1", "repeat", unary(lambda d: mx.sym.repeat(d, repeats=3, axis=1),
                                       shape=(2, 3, 4)))
    op("repeat_axis_minus1", "repeat",
       unary(lambda d: mx.sym.repeat(d, repeats=2, axis=-1), shape=(2, 3, 4)))

    def where(rng):
        ins = OrderedDict([("data0", (rng.random_sample((2, 3, 4)) < 0.5).astype(np.float32)),
                           ("data1", randn(rng, (2, 3, 4))), ("data2", randn(rng, (2, 3, 4)))])
        return mx.sym.where(V("data0"), V("data1"), V("data2")), ins, {}
    op("where", "where", where, "condition data0 is 0/1, same shape as x and y")

    op("zeros_like", "zeros_like", unary(lambda d: mx.sym.zeros_like(d)))
    op("ones_like", "ones_like", unary(lambda d: mx.sym.ones_like(d)))

    def arange(name, note="", **kw):
        op("_arange_" + name, "_arange",
           lambda rng: (I._arange(name="arange", **kw), OrderedDict(), {}),
           note or "no inputs: the graph is a constant")
    arange("stop", start=0, stop=10)
    arange("start_only", "stop omitted: range(0, start)", start=5)
    arange("step", start=2, stop=11, step=3)
    arange("negative_step", start=4, stop=-2, step=-1.5)
    arange("repeat", start=0, stop=4, repeat=2)

    def arange_plus(rng):
        sym = mx.sym.broadcast_add(V("data"), I._arange(start=0, stop=6, name="arange"))
        return sym, OrderedDict(data=randn(rng, (3, 6))), {}
    op("_arange_plus_data", "_arange", arange_plus, "arange broadcast-added to an input")


SCALAR_OPS = [
    # (op, scalar, input generator): inputs chosen so the op is defined and ties occur
    ("_plus_scalar", 2.5, randn), ("_minus_scalar", 1.5, randn), ("_rminus_scalar", 1.5, randn),
    ("_mul_scalar", -3.0, randn), ("_div_scalar", 4.0, randn), ("_rdiv_scalar", 2.0, nonzero),
    ("_power_scalar", 1.5, positive), ("_rpower_scalar", 2.0, randn),
    ("_maximum_scalar", 0.5, grid), ("_minimum_scalar", 0.5, grid),
    ("_greater_scalar", 0.5, grid), ("_greater_equal_scalar", 0.5, grid),
    ("_lesser_scalar", 0.5, grid), ("_lesser_equal_scalar", 0.5, grid),
    ("_equal_scalar", 0.5, grid), ("_not_equal_scalar", 0.5, grid),
]


def ops_scalar():
    for name, scalar, gen in SCALAR_OPS:
        fn = getattr(I, name)
        def with_tie(rng, shape, gen=gen, scalar=scalar):
            x = gen(rng, shape)
            if gen is grid:
                x.flat[:2] = scalar  # make sure equality with the scalar occurs
            return x
        op(name, name, unary(lambda d, f=fn, s=scalar: f(d, scalar=s), shape=(2, 3, 4),
                             gen=with_tie), "scalar=%g" % scalar)
    op("_power_scalar_int", "_power_scalar",
       unary(lambda d: I._power_scalar(d, scalar=3.0), shape=(2, 3, 4)), "integer power of signed")


BROADCAST_OPS = [
    ("add", randn, randn), ("sub", randn, randn), ("mul", randn, randn), ("div", randn, nonzero),
    ("maximum", grid, grid), ("minimum", grid, grid), ("power", positive, randn),
    ("equal", grid, grid), ("not_equal", grid, grid), ("greater", grid, grid),
    ("greater_equal", grid, grid), ("lesser", grid, grid), ("lesser_equal", grid, grid),
]


def ops_broadcast():
    pairs = [("c11", (2, 3, 4, 5), (1, 3, 1, 1)), ("lowrank", (4, 5), (2, 3, 4, 5))]
    for opname, ga, gb in BROADCAST_OPS:
        full = "broadcast_" + opname
        fn = getattr(mx.sym, full)
        for tag, sa, sb in pairs:
            def build(rng, fn=fn, sa=sa, sb=sb, ga=ga, gb=gb):
                ins = inputs_of(rng, (sa, ga), (sb, gb))
                return fn(V("data0"), V("data1")), ins, {}
            op("%s_%s" % (full, tag), full, build, "%s vs %s" % (sa, sb))

    def both(rng):
        ins = inputs_of(rng, ((2, 1, 4, 1), randn), ((1, 3, 1, 5), randn))
        return mx.sym.broadcast_add(V("data0"), V("data1")), ins, {}
    op("broadcast_add_both_sides", "broadcast_add", both, "(2,1,4,1) vs (1,3,1,5)")

    def se_scale(rng):
        ins = inputs_of(rng, ((2, 3, 4, 5), randn), ((2, 3, 1, 1), randn))
        return mx.sym.broadcast_mul(V("data0"), V("data1")), ins, {}
    op("broadcast_mul_se", "broadcast_mul", se_scale, "squeeze-excite style (N,C,1,1) scale")


def ops_elemwise():
    for name, gen1 in [("add", randn), ("sub", randn), ("mul", randn), ("div", nonzero)]:
        fn = getattr(mx.sym, "elemwise_" + name)

        def build(rng, fn=fn, gen1=gen1):
            ins = inputs_of(rng, ((2, 3, 4), randn), ((2, 3, 4), gen1))
            return fn(V("data0"), V("data1")), ins, {}
        op("elemwise_" + name, "elemwise_" + name, build)

    def add_n(rng):
        ins = inputs_of(rng, *[((2, 3, 4), randn)] * 3)
        return mx.sym.add_n(*[V(n) for n in ins]), ins, {}
    op("add_n", "add_n", add_n, "ElementWiseSum with 3 inputs")


def ops_softmax():
    x = (2, 3, 4, 5)
    op("softmax_default", "softmax", unary(lambda d: mx.sym.softmax(d), gen=lambda r, s:
                                            randn(r, s, 3.0)), "axis -1")
    op("softmax_axis1", "softmax", unary(lambda d: mx.sym.softmax(d, axis=1), shape=x))
    op("softmax_temperature", "softmax",
       unary(lambda d: mx.sym.softmax(d, temperature=2.5), shape=x))
    op("log_softmax_default", "log_softmax", unary(lambda d: mx.sym.log_softmax(d)))
    op("log_softmax_axis1", "log_softmax", unary(lambda d: mx.sym.log_softmax(d, axis=1)))

    def smo(name, in_shape, note, **kw):
        op("SoftmaxOutput_" + name, "SoftmaxOutput",
           unary(lambda d: mx.sym.SoftmaxOutput(d, name="softmax", **kw), shape=in_shape,
                 gen=lambda r, s: randn(r, s, 2.0)),
           note + "; softmax_label is an unbound label variable (not an input)")
    smo("default_2d", (4, 10), "softmax over axis 1")
    smo("default_4d", (2, 3, 2, 2), "no multi_output: softmax over the flattened (n, rest) "
        "(MXNet's own kernel; the oneDNN build normalises over the last axis instead)")
    smo("multi_output", (2, 3, 2, 2), "softmax over axis 1 per position", multi_output=True)
    smo("preserve_shape", (2, 3, 5), "softmax over the last axis", preserve_shape=True)

    op("SoftmaxActivation_instance", "SoftmaxActivation",
       unary(lambda d: mx.sym.SoftmaxActivation(d), shape=(2, 3, 2, 2)),
       "mode omitted: instance (over the flattened rest)")
    op("SoftmaxActivation_channel", "SoftmaxActivation",
       unary(lambda d: mx.sym.SoftmaxActivation(d, mode="channel"), shape=(2, 3, 2, 2)))
    op("hard_sigmoid_default", "hard_sigmoid",
       unary(lambda d: mx.sym.hard_sigmoid(d), gen=lambda r, s: randn(r, s, 3.0)),
       "alpha 0.2, beta 0.5; inputs reach both saturations")
    op("hard_sigmoid_custom", "hard_sigmoid",
       unary(lambda d: mx.sym.hard_sigmoid(d, alpha=0.3, beta=0.4),
             gen=lambda r, s: randn(r, s, 3.0)))


def ops_dot():
    def dot(name, fn, sa, sb, opname, **kw):
        def build(rng):
            ins = inputs_of(rng, (sa, randn), (sb, randn))
            return fn(V("data0"), V("data1"), **kw), ins, {}
        op("%s_%s" % (opname, name), opname, build)

    dot("plain", mx.sym.dot, (3, 4), (4, 5), "dot")
    dot("transpose_a", mx.sym.dot, (4, 3), (4, 5), "dot", transpose_a=True)
    dot("transpose_b", mx.sym.dot, (3, 4), (5, 4), "dot", transpose_b=True)
    dot("transpose_both", mx.sym.dot, (4, 3), (5, 4), "dot", transpose_a=True, transpose_b=True)
    dot("3d_lhs", mx.sym.dot, (2, 3, 4), (4, 5), "dot")
    dot("plain", mx.sym.batch_dot, (2, 3, 4), (2, 4, 5), "batch_dot")
    dot("transpose_a", mx.sym.batch_dot, (2, 4, 3), (2, 4, 5), "batch_dot", transpose_a=True)
    dot("transpose_b", mx.sym.batch_dot, (2, 3, 4), (2, 5, 4), "batch_dot", transpose_b=True)
    dot("transpose_both", mx.sym.batch_dot, (2, 4, 3), (2, 5, 4), "batch_dot",
        transpose_a=True, transpose_b=True)

    def dot_weight(rng):
        sym = mx.sym.dot(V("data"), V("w"), transpose_b=True)
        return sym, OrderedDict(data=randn(rng, (4, 6))), {"w": weight(rng, (3, 6))}
    op("dot_weight_param", "dot", dot_weight, "rhs is a parameter, as in the seed LeNet")


def ops_slicechannel():
    def split(name, in_shape, note="", **kw):
        op("SliceChannel_" + name, "SliceChannel",
           unary(lambda d: mx.sym.SliceChannel(d, name="split", **kw), shape=in_shape),
           (note + "; " if note else "") + "one output per head")
    split("default_axis", (2, 6, 4), "axis omitted: 1", num_outputs=3)
    split("axis2", (2, 3, 4), num_outputs=2, axis=2)
    split("axis_minus1", (2, 3, 6), num_outputs=3, axis=-1)
    split("squeeze_axis", (2, 3, 4), num_outputs=3, axis=1, squeeze_axis=True)
    split("squeeze_axis0", (2, 3, 4), num_outputs=2, axis=0, squeeze_axis=True)


def ops_cast():
    op("Cast_float16", "Cast",
       unary(lambda d: mx.sym.Cast(d, dtype="float16"), gen=lambda r, s: randn(r, s, 3.0)),
       "output is float16 in MXNet, stored as float32")
    op("Cast_int32", "Cast",
       unary(lambda d: mx.sym.Cast(d, dtype="int32"), gen=lambda r, s: randn(r, s, 10.0)),
       "truncation toward zero; stored as float32")
    op("Cast_float16_roundtrip", "Cast",
       unary(lambda d: mx.sym.Cast(mx.sym.Cast(d, dtype="float16"), dtype="float32"),
             gen=lambda r, s: randn(r, s, 3.0)), "float32 -> float16 -> float32")


def ops_integer():
    """Ops on integer tensors (issue 12: CenterNet's decoder).  MXNet computes in the tensor's
    dtype: division truncates toward zero, _div_scalar and friends first convert their scalar to
    the dtype (with is_int, the default; is_int=False computes in float64), narrow types wrap, a
    mean truncates.  Inputs are float32 made integer by a Cast in the graph; the integer outputs
    are stored as float32.  No divisor is zero: MXNet's integer division by zero dies of SIGFPE
    (mod by zero gives 0 and is covered)."""
    def ints(lo, hi):
        return lambda r, s: r.randint(lo, hi + 1, s).astype(np.float32)

    def nonzero_ints(lo, hi):
        def gen(r, s):
            v = r.randint(lo, hi + 1, s)
            return np.where(v == 0, hi, v).astype(np.float32)
        return gen

    def fractions(scale):
        return lambda r, s: (randn(r, s, scale) + 0.5 * (r.random_sample(s) < 0.3)).astype(
            np.float32)

    C = mx.sym.Cast

    def binary(name, opname, fn, dtype, sa, sb, ga, gb, note):
        def build(rng):
            ins = inputs_of(rng, (sa, ga), (sb, gb))
            return fn(C(V("data0"), dtype=dtype), C(V("data1"), dtype=dtype)), ins, {}
        op("int_" + name, opname, build, note)
    binary("broadcast_div_int64", "broadcast_div", mx.sym.broadcast_div, "int64", (3, 4, 5),
           (1, 4, 1), ints(-40, 40), nonzero_ints(-7, 7), "int64 / int64 truncates toward zero "
           "(-7 / 2 = -3)")
    binary("elemwise_div_int32", "elemwise_div", mx.sym.elemwise_div, "int32", (3, 4, 5),
           (3, 4, 5), ints(-100, 100), nonzero_ints(-9, 9), "int32, equal shapes")
    binary("broadcast_mod_int64", "broadcast_mod", mx.sym.broadcast_mod, "int64", (3, 4, 5),
           (3, 1, 5), ints(-30, 30), ints(-6, 6), "int64: the divisor's sign, x mod 0 = 0, "
           "no negative zeros")
    binary("elemwise_add_uint8", "elemwise_add", mx.sym.elemwise_add, "uint8", (2, 3, 4),
           (2, 3, 4), ints(0, 255), ints(0, 255), "uint8 sums wrap (200 + 100 = 44)")
    binary("broadcast_sub_uint8", "broadcast_sub", mx.sym.broadcast_sub, "uint8", (2, 3, 4),
           (1, 3, 1), ints(0, 255), ints(0, 255), "uint8 differences wrap (3 - 5 = 254)")
    binary("broadcast_mul_int8", "broadcast_mul", mx.sym.broadcast_mul, "int8", (2, 3, 4),
           (2, 1, 4), ints(-30, 30), ints(-30, 30), "int8 products wrap")
    binary("broadcast_greater_int64", "broadcast_greater", mx.sym.broadcast_greater, "int64",
           (3, 4), (3, 1), ints(-3, 3), ints(-3, 3), "comparisons of integers give 0/1 as int64")

    def scalar(name, opname, dtype, gen, note, **kw):
        op("int_" + name, opname,
           unary(lambda d: getattr(I, opname)(C(d, dtype=dtype), **kw), shape=(3, 4, 5), gen=gen),
           note)
    scalar("div_scalar_int64", "_div_scalar", "int64", ints(-40, 40),
           "scalar 2.5 becomes 2: integer division", scalar=2.5)
    scalar("rdiv_scalar_int64", "_rdiv_scalar", "int64", nonzero_ints(-9, 9),
           "7.9 becomes 7, divided by each value as integers", scalar=7.9)
    scalar("div_scalar_not_int", "_div_scalar", "int64", ints(-40, 40),
           "is_int=False: computed in floats, float64 result", scalar=2.5, is_int=False)
    scalar("mul_scalar_int64", "_mul_scalar", "int64", ints(-40, 40),
           "scalar 1.5 becomes 1", scalar=1.5)
    scalar("mod_scalar_int64", "_mod_scalar", "int64", ints(-40, 40),
           "scalar 2.7 becomes 2", scalar=2.7)
    scalar("rminus_scalar_uint8", "_rminus_scalar", "uint8", ints(0, 255),
           "1 - x wraps in uint8", scalar=1)
    scalar("power_scalar_int64", "_power_scalar", "int64", nonzero_ints(-5, 5),
           "x^-1 truncates to 0 but for +-1", scalar=-1)
    op("int_sqrt_int64", "sqrt",
       unary(lambda d: mx.sym.sqrt(C(d, dtype="int64")), gen=ints(0, 50)),
       "sqrt of int64 truncates (sqrt 2 = 1)")
    op("int_clip_int64", "clip",
       unary(lambda d: mx.sym.clip(C(d, dtype="int64"), a_min=-2.5, a_max=3.7), gen=ints(-6, 6)),
       "bounds truncate to -2 and 3")
    op("int_mean_int64", "mean",
       unary(lambda d: mx.sym.mean(C(d, dtype="int64"), axis=2), gen=ints(-20, 20)),
       "integer mean truncates toward zero")
    op("int_sum_uint8", "sum",
       unary(lambda d: mx.sym.sum(C(d, dtype="uint8"), axis=1), gen=ints(0, 255)),
       "uint8 sums wrap")

    def add_n_u8(rng):
        ins = inputs_of(rng, *[((2, 3, 4), ints(0, 255))] * 3)
        return mx.sym.add_n(*[C(V(n), dtype="uint8") for n in ins]), ins, {}
    op("int_add_n_uint8", "add_n", add_n_u8, "three uint8 inputs: the sum wraps")

    for dtype, scale in (("int64", 10.0), ("uint8", 200.0), ("int8", 200.0)):
        op("Cast_" + dtype, "Cast", unary(lambda d, t=dtype: C(d, dtype=t), gen=fractions(scale)),
           "negatives and fractions: toward zero%s" % (", then wrapped" if "8" in dtype else ""))

    def index_decode(rng):
        # CenterNet's decoder in small: flat topk indices -> (class, row, column) with int64
        # arithmetic on shape_array products; distinct values keep topk free of ties
        shape = (2, 3, 4, 5)
        data = (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.01).astype(np.float32)
        x = V("data")
        idx = C(mx.sym.topk(mx.sym.reshape(x, shape=(0, -1)), k=7, ret_typ="indices"),
                dtype="int64")
        dims = mx.sym.split(mx.sym.shape_array(x), num_outputs=4, axis=0)
        hw = dims[2] * dims[3]
        cls = mx.sym.broadcast_div(idx, hw)
        pos = mx.sym.broadcast_mod(idx, hw)
        row = mx.sym.broadcast_div(pos, dims[3])
        col = mx.sym.broadcast_mod(pos, dims[3])
        out = mx.sym.concat(*[C(v, dtype="float32") for v in (cls, row, col)], dim=1)
        return out, OrderedDict(data=data), {}
    op("int_index_decode", "broadcast_div", index_decode,
       "topk indices to class, row, column as CenterNet's decoder does (int64 division)")


UNARY_OPS = [
    ("sigmoid", lambda r, s: randn(r, s, 3.0)), ("relu", randn),
    ("tanh", lambda r, s: randn(r, s, 2.0)), ("exp", lambda r, s: randn(r, s, 1.5)),
    ("log", lambda r, s: uniform(r, s, 0.05, 10.0)), ("sqrt", lambda r, s: uniform(r, s, 0.0, 9.0)),
    ("square", lambda r, s: randn(r, s, 3.0)), ("abs", randn), ("negative", randn),
    ("reciprocal", nonzero), ("rsqrt", lambda r, s: uniform(r, s, 0.1, 9.0)),
    ("floor", lambda r, s: grid(r, s) + randn(r, s, 0.1) * (r.random_sample(s) < 0.5)),
    ("ceil", lambda r, s: grid(r, s) + randn(r, s, 0.1) * (r.random_sample(s) < 0.5)),
    ("round", lambda r, s: grid(r, s, -3.0, 3.0)), ("sign", grid),
    ("erf", lambda r, s: randn(r, s, 1.5)), ("log1p", lambda r, s: uniform(r, s, -0.9, 5.0)),
    ("expm1", lambda r, s: randn(r, s, 1.5)), ("sin", lambda r, s: randn(r, s, 3.0)),
    ("cos", lambda r, s: randn(r, s, 3.0)),
]


def ops_unary_math():
    for name, gen in UNARY_OPS:
        op(name, name, unary(lambda d, f=getattr(mx.sym, name): f(d),
                             gen=lambda r, s, g=gen: np.asarray(g(r, s), dtype=np.float32)),
           "round: halves away from zero" if name == "round" else "")


def ops_reduce():
    variants = [("all", {}), ("axis1", {"axis": 1}), ("axis12_keepdims", {"axis": (1, 2),
                                                                          "keepdims": True}),
                ("axis_minus1", {"axis": -1}), ("axis0_keepdims", {"axis": 0, "keepdims": True})]
    for name in ["mean", "sum", "max", "min"]:
        fn = getattr(mx.sym, name)
        for tag, kw in variants:
            op("%s_%s" % (name, tag), name,
               unary(lambda d, fn=fn, kw=kw: fn(d, **kw), shape=(2, 3, 4, 5)),
               "axis omitted: reduce everything to shape (1,)" if tag == "all" else "")
    for tag, kw, note in [("axis1", {"axis": 1}, ""),
                          ("axis_minus1_keepdims", {"axis": -1, "keepdims": True}, ""),
                          ("noaxis", {}, "axis omitted: index into the flattened array")]:
        op("argmax_" + tag, "argmax",
           unary(lambda d, kw=kw: mx.sym.argmax(d, **kw), shape=(2, 3, 4)),
           ("indices as float32; " + note).strip("; "))


def ops_nonfinite():
    """NaN, +Inf and -Inf through every op family: MXNet's own kernels decide what comes out
    (NaN at NaN positions or over a whole softmax row, NaN through relu and max, Inf - Inf).
    Each case is an existing one (same symbol) with special values in its float inputs."""
    NF = " with NaN/+Inf/-Inf inputs"

    def nf(name, opname, fn, shape=(2, 3, 4, 5), gen=randn, note=""):
        op(name + "_nan", opname, unary(fn, shape=shape, gen=with_nonfinite(gen)),
           (note + ";" if note else "") + NF.lstrip(), nonfinite=True)

    # softmax family: a NaN or an Inf anywhere in a row
    nf("softmax", "softmax", lambda d: mx.sym.softmax(d), shape=(6, 5), note="axis -1")
    nf("softmax_axis1", "softmax", lambda d: mx.sym.softmax(d, axis=1), note="inner axis")
    nf("softmax_temperature", "softmax", lambda d: mx.sym.softmax(d, temperature=2.5),
       shape=(6, 5))
    nf("log_softmax", "log_softmax", lambda d: mx.sym.log_softmax(d), shape=(6, 5))
    nf("log_softmax_axis1", "log_softmax", lambda d: mx.sym.log_softmax(d, axis=1))
    nf("SoftmaxActivation_instance", "SoftmaxActivation", lambda d: mx.sym.SoftmaxActivation(d),
       shape=(6, 2, 2))
    nf("SoftmaxActivation_channel", "SoftmaxActivation",
       lambda d: mx.sym.SoftmaxActivation(d, mode="channel"), shape=(2, 3, 2, 2))
    for tag, shape, kw in [("default_2d", (6, 5), {}), ("multi_output", (2, 3, 2, 2),
                                                         {"multi_output": True})]:
        nf("SoftmaxOutput_" + tag, "SoftmaxOutput",
           lambda d, kw=kw: mx.sym.SoftmaxOutput(d, name="softmax", **kw), shape=shape,
           note="softmax_label is an unbound label variable")

    # activations
    for act in ["relu", "sigmoid", "tanh", "softrelu", "softsign"]:
        nf("Activation_" + act, "Activation",
           lambda d, a=act: mx.sym.Activation(d, act_type=a, name="act"))
    for tag, kw in [("default", {}), ("leaky_slope0.1", {"act_type": "leaky", "slope": 0.1}),
                    ("elu", {"act_type": "elu"}), ("selu", {"act_type": "selu"}),
                    ("gelu", {"act_type": "gelu"})]:
        nf("LeakyReLU_" + tag, "LeakyReLU", lambda d, kw=kw: mx.sym.LeakyReLU(d, name="lrelu", **kw))
    nf("LeakyReLU_rrelu", "LeakyReLU",
       lambda d: mx.sym.LeakyReLU(d, act_type="rrelu", name="lrelu")[0], note="output 0")

    def prelu(rng):
        sym = mx.sym.LeakyReLU(V("data"), V("lrelu_gamma"), act_type="prelu", name="lrelu")
        return sym, OrderedDict(data=with_nonfinite(randn)(rng, (2, 3, 4, 5))), \
            {"lrelu_gamma": uniform(rng, (3,), 0.05, 0.5)}
    op("LeakyReLU_prelu_nan", "LeakyReLU", prelu, "per-channel slope;" + NF, nonfinite=True)
    nf("hard_sigmoid", "hard_sigmoid", lambda d: mx.sym.hard_sigmoid(d))
    nf("clip", "clip", lambda d: mx.sym.clip(d, a_min=-0.5, a_max=0.7))
    nf("clip_relu6", "clip", lambda d: mx.sym.clip(d, a_min=0.0, a_max=6.0))

    # pooling: special values inside windows, on both sides of the padding
    x7, x8 = (2, 3, 7, 7), (2, 3, 8, 8)
    for tag, shape, kw in [
            ("max_k2_s2", x8, dict(kernel=(2, 2), stride=(2, 2), pool_type="max")),
            ("max_k3_s1", x7, dict(kernel=(3, 3), pool_type="max")),
            ("max_k3_s2_pad1", x7, dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                        pool_type="max")),
            ("max_k3_s2_full", x8, dict(kernel=(3, 3), stride=(2, 2), pool_type="max",
                                        pooling_convention="full")),
            ("avg_k2_s2", x8, dict(kernel=(2, 2), stride=(2, 2), pool_type="avg")),
            ("avg_k3_s2_pad1", x7, dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                        pool_type="avg")),
            ("avg_k3_s2_pad1_nopadcount", x7, dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                                   pool_type="avg", count_include_pad=False)),
            ("sum_k3_pad1", x7, dict(kernel=(3, 3), pad=(1, 1), pool_type="sum")),
            ("lp_p2", x8, dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),
            ("lp_p3", x8, dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=3)),
            ("global_max", x7, dict(kernel=(1, 1), global_pool=True, pool_type="max")),
            ("global_avg", x7, dict(kernel=(1, 1), global_pool=True, pool_type="avg")),
            ("global_sum", x7, dict(kernel=(1, 1), global_pool=True, pool_type="sum"))]:
        # a lower rate: most windows keep clean values, some hold one or more specials
        op("Pooling_%s_nan" % tag, "Pooling",
           unary(lambda d, kw=kw: mx.sym.Pooling(d, name="pool", **kw), shape=shape,
                 gen=with_nonfinite(randn, 0.08)), NF.lstrip(), nonfinite=True)

    # Windows and rows made only of special values, which random placement rarely gives:
    # MXNet's max pooling starts from -FLT_MAX and skips NaN, so an all -Inf or all NaN
    # window gives -3.4e38, while max() over such a row gives -Inf or NaN.
    nan, inf = np.nan, np.inf
    edge_rows = np.array([[-inf, -inf, -inf, -inf], [inf, inf, inf, inf], [nan, nan, nan, nan],
                          [nan, -inf, -inf, nan], [inf, -inf, 1.0, 2.0], [1.0, nan, 2.0, -inf],
                          [-inf, 0.5, -inf, 0.5], [0.5, -1.0, 2.0, 0.0]], dtype=np.float32)

    def edges(name, opname, fn, shape, note="", rows=edge_rows):
        op(name + "_edges_nan", opname,
           lambda rng: (fn(V("data")), OrderedDict(data=rows.reshape(shape).copy()), {}),
           (note + ";" if note else "") + " windows/rows all NaN, all +-Inf, mixed",
           nonfinite=True)
    for pt in ["max", "avg", "sum", "lp"]:
        kw = dict(kernel=(2, 2), stride=(2, 2), pool_type=pt)
        if pt == "lp":
            kw["p_value"] = 2
        edges("Pooling_%s_k2_s2" % pt, "Pooling",
              lambda d, kw=kw: mx.sym.Pooling(d, name="pool", **kw), (1, 2, 4, 4),
              "each 2x2 window is two rows' halves")
        edges("Pooling_%s_k1x4" % pt, "Pooling",
              lambda d, kw=kw: mx.sym.Pooling(d, name="pool", **dict(kw, kernel=(1, 4),
                                                                      stride=(1, 4))),
              (1, 1, 8, 4), "one window per row")
    edges("Pooling_global_max", "Pooling",
          lambda d: mx.sym.Pooling(d, kernel=(1, 1), global_pool=True, pool_type="max",
                                   name="pool"), (8, 1, 2, 2), "one plane per row")
    for name in ["max", "min", "sum", "mean", "prod", "argmax", "argmin", "softmax",
                 "log_softmax"]:
        edges(name, name, lambda d, f=getattr(mx.sym, name): f(d, axis=1), (8, 4))
        edges(name + "_axis0", name, lambda d, f=getattr(mx.sym, name): f(d, axis=0), (8, 4))
    edges("softmax_inner", "softmax", lambda d: mx.sym.softmax(d, axis=1), (1, 4, 8),
          "each row along axis 1: the inner-axis path", rows=edge_rows.T.copy())

    # reductions and arg-reductions
    for name in ["sum", "mean", "max", "min", "prod"]:
        fn = getattr(mx.sym, name)
        for tag, kw in [("all", {}), ("axis1", {"axis": 1}), ("axis_minus1", {"axis": -1}),
                        ("axis0_keepdims", {"axis": 0, "keepdims": True})]:
            op("%s_%s_nan" % (name, tag), name,
               unary(lambda d, fn=fn, kw=kw: fn(d, **kw), shape=(3, 4, 5),
                     gen=with_nonfinite(randn, 0.1)), NF.lstrip(), nonfinite=True)
    for name in ["argmax", "argmin"]:
        fn = getattr(mx.sym, name)
        for tag, kw in [("axis1", {"axis": 1}), ("axis_minus1", {"axis": -1}),
                        ("axis0", {"axis": 0}), ("noaxis", {})]:
            op("%s_%s_nan" % (name, tag), name,
               unary(lambda d, fn=fn, kw=kw: fn(d, **kw), shape=(3, 4, 5),
                     gen=with_nonfinite(grid, 0.3)), "indices as float32;" + NF,
               nonfinite=True)

    # elementwise math, scalar ops and comparisons
    for name, gen in UNARY_OPS:
        nf(name, name, lambda d, f=getattr(mx.sym, name): f(d), gen=gen)
    for name, scalar, gen in SCALAR_OPS:
        nf(name, name, lambda d, f=getattr(I, name), s=scalar: f(d, scalar=s), shape=(3, 4, 5),
           gen=gen, note="scalar=%g" % scalar)
    for name, scalar in [("_maximum_scalar", np.nan), ("_minimum_scalar", np.nan),
                         ("_maximum_scalar", np.inf), ("_minimum_scalar", -np.inf)]:
        tag = "%s_%s" % (name, "of_nan" if np.isnan(scalar) else "of_inf")
        op(tag, name, unary(lambda d, f=getattr(I, name), s=scalar: f(d, scalar=s),
                            shape=(3, 4, 5), gen=with_nonfinite(grid)),
           "scalar=%g;%s" % (scalar, NF), nonfinite=True)

    def binary_nf(name, opname, fn, sa, sb, ga, gb):
        def build(rng):
            ins = inputs_of(rng, (sa, with_nonfinite(ga)), (sb, with_nonfinite(gb)))
            return fn(V("data0"), V("data1")), ins, {}
        op(name + "_nan", opname, build, "%s vs %s;%s" % (sa, sb, NF), nonfinite=True)
    for opname, ga, gb in BROADCAST_OPS:
        full = "broadcast_" + opname
        binary_nf(full + "_c11", full, getattr(mx.sym, full), (2, 3, 4, 5), (1, 3, 1, 1), ga, gb)
        binary_nf(full + "_same", full, getattr(mx.sym, full), (3, 4, 5), (3, 4, 5), ga, gb)
    for name in ["add", "sub", "mul", "div"]:
        binary_nf("elemwise_" + name, "elemwise_" + name, getattr(mx.sym, "elemwise_" + name),
                  (3, 4, 5), (3, 4, 5), randn, randn)
    for name in ["_maximum", "_minimum", "_power", "_equal", "_not_equal", "_greater",
                 "_greater_equal", "_lesser", "_lesser_equal"]:
        binary_nf(name, name, getattr(I, name), (3, 4, 5), (3, 4, 5), grid, grid)

    def add_n(rng):
        ins = inputs_of(rng, *[((3, 4, 5), with_nonfinite(randn))] * 3)
        return mx.sym.add_n(*[V(n) for n in ins]), ins, {}
    op("add_n_nan", "add_n", add_n, "3 inputs;" + NF, nonfinite=True)

    def where(rng):
        cond = (rng.random_sample((3, 4, 5)) < 0.5).astype(np.float32)
        cond[rng.random_sample(cond.shape) < 0.2] = np.nan
        ins = OrderedDict([("data0", cond), ("data1", with_nonfinite(randn)(rng, (3, 4, 5))),
                           ("data2", with_nonfinite(randn)(rng, (3, 4, 5)))])
        return mx.sym.where(V("data0"), V("data1"), V("data2")), ins, {}
    op("where_nan", "where", where, "a NaN condition is nonzero;" + NF, nonfinite=True)
    nf("Cast_float16", "Cast", lambda d: mx.sym.Cast(d, dtype="float16"), shape=(3, 4, 5))

    # layers: a NaN/Inf input poisons what it reaches, through BLAS too
    def bn(rng):
        sym = mx.sym.BatchNorm(V("data"), name="bn", fix_gamma=False, eps=1e-5)
        params = {"bn_" + k: v for k, v in bn_stats(rng, 3).items()}
        return sym, OrderedDict(data=with_nonfinite(randn)(rng, (2, 3, 5, 5))), params
    op("BatchNorm_nan", "BatchNorm", bn, NF.lstrip(), nonfinite=True)

    def fc(rng):
        sym = mx.sym.FullyConnected(V("data"), num_hidden=6, name="fc")
        x = randn(rng, (6, 10))
        x[1, 3], x[2, 0], x[3, 9], x[4, 4], x[4, 5] = np.nan, np.inf, -np.inf, np.inf, -np.inf
        return sym, OrderedDict(data=x), {"fc_weight": weight(rng, (6, 10)),
                                          "fc_bias": randn(rng, (6,), 0.1)}
    op("FullyConnected_nan", "FullyConnected", fc, "one special per row, row 4: Inf - Inf",
       nonfinite=True)

    def conv(rng):
        sym = mx.sym.Convolution(V("data"), num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv")
        x = randn(rng, (2, 3, 9, 9))
        x[0, 0, 1, 1], x[0, 2, 6, 6], x[1, 1, 4, 2] = np.nan, np.inf, -np.inf
        return sym, OrderedDict(data=x), {"conv_weight": weight(rng, (4, 3, 3, 3)),
                                          "conv_bias": randn(rng, (4,), 0.1)}
    op("Convolution_k3_pad1_nan", "Convolution", conv, "isolated specials: 3x3 footprints",
       nonfinite=True)

    # What hybrid mode fuses into a Convolution/FullyConnected epilogue must treat NaN as the
    # op it replaces does: relu keeps NaN in MXNet (it is `isnan(x) || x > 0 ? x : 0`).
    def fused(name, opname, after, nf_=4, residual=False, bn=False, dense=False):
        def build(rng):
            d = V("data")  # one variable, read twice by the residual add
            if dense:
                x = randn(rng, (6, 10))
                x[1, 3], x[2, 0], x[3, 9], x[4, 4], x[4, 5] = \
                    np.nan, np.inf, -np.inf, np.inf, -np.inf
                y = mx.sym.FullyConnected(d, num_hidden=6, name="fc")
                params = {"fc_weight": weight(rng, (6, 10)), "fc_bias": randn(rng, (6,), 0.1)}
            else:
                x = randn(rng, (2, nf_, 9, 9))
                x[0, 0, 1, 1], x[0, 2, 6, 6], x[1, 1, 4, 2] = np.nan, np.inf, -np.inf
                y = mx.sym.Convolution(d, num_filter=nf_, kernel=(3, 3), pad=(1, 1),
                                       name="conv")
                params = {"conv_weight": weight(rng, (nf_, nf_, 3, 3)),
                          "conv_bias": randn(rng, (nf_,), 0.1)}
            if bn:
                y = mx.sym.BatchNorm(y, name="bn", fix_gamma=False, eps=1e-5)
                params.update(("bn_" + k, v) for k, v in bn_stats(rng, nf_).items())
            if residual:
                y = mx.sym.elemwise_add(y, d)
            return after(y), OrderedDict(data=x), params
        op(name + "_nan", opname, build, "fused into the producer in hybrid mode;" + NF,
           nonfinite=True)

    fused("Convolution_Activation_relu", "Activation",
          lambda y: mx.sym.Activation(y, act_type="relu", name="act"))
    fused("Convolution_clip_relu6", "clip", lambda y: mx.sym.clip(y, a_min=0.0, a_max=6.0))
    fused("Convolution_LeakyReLU", "LeakyReLU",
          lambda y: mx.sym.LeakyReLU(y, act_type="leaky", slope=0.1, name="lrelu"))
    fused("Convolution_BatchNorm_add_relu", "relu", lambda y: mx.sym.relu(y), residual=True,
          bn=True)
    fused("FullyConnected_relu", "relu", lambda y: mx.sym.relu(y), dense=True)
    fused("FullyConnected_Activation_relu", "Activation",
          lambda y: mx.sym.Activation(y, act_type="relu", name="act"), dense=True)


def detection_rows(rng, lead, n, classes=3, layout=(0, 1, 2), width=6, fmt="corner"):
    """`lead` + (n, width) rows holding a class id, a score and a box at the (id, score, coord)
    columns of `layout` (id None: no id column).  Boxes cluster around a few centres so that
    IoUs fall on both sides of the thresholds; scores are multiples of 1/8, so equal scores
    (MXNet keeps them in row order) are common; ids run from -1 (MXNet's default background)
    to classes - 1.  Some boxes are degenerate (negative width) or start left of 0."""
    id_col, score_col, coord = layout
    shape = tuple(lead) + (n, width)
    x = randn(rng, shape)
    centres = uniform(rng, tuple(lead) + (3, 2), 0.0, 4.0)
    pick = rng.randint(0, 3, tuple(lead) + (n,))
    c = np.take_along_axis(centres, pick[..., None].repeat(2, -1), axis=-2)
    c = c + randn(rng, c.shape, 0.3)
    wh = uniform(rng, tuple(lead) + (n, 2), 0.5, 2.0)
    wh[rng.random_sample(wh.shape) < 0.05] *= -1.0
    if fmt == "corner":
        box = np.concatenate([c - wh / 2, c + wh / 2], axis=-1)
    else:
        box = np.concatenate([c, wh], axis=-1)
    x[..., coord:coord + 4] = box
    x[..., score_col] = rng.randint(0, 9, tuple(lead) + (n,)) / 8.0
    if id_col is not None:
        x[..., id_col] = rng.randint(-1, classes, tuple(lead) + (n,))
    return x.astype(np.float32)


def ops_detection():
    """GluonCV's SSD/YOLOv3 box ops: NMS in all its attributes, decoding, slice_like, and the
    L2Normalization of SSD's VGG backbone."""
    def nms(name, shape, note="", layout=(0, 1, 2), width=6, fmt="corner", gen=None,
            nonfinite=False, **kw):
        def build(rng):
            x = (gen or detection_rows)(rng, shape[:-2], shape[-2], layout=layout, width=width,
                                        fmt=fmt)
            return mx.sym.contrib.box_nms(V("data"), name="nms", **kw), OrderedDict(data=x), {}
        op("box_nms_" + name, "_contrib_box_nms", build, note, nonfinite=nonfinite)
    nms("default", (2, 24, 6), "defaults: no class ids (id column ignored), valid_thresh 0")
    nms("gluoncv", (2, 40, 6), "SSD/YOLOv3 head: per-class NMS, topk beyond the row count",
        overlap_thresh=0.45, valid_thresh=0.01, topk=400, coord_start=2, score_index=1,
        id_index=0, force_suppress=False)
    nms("topk5", (2, 30, 6), "only the 5 best candidates per batch are kept or suppress",
        id_index=0, topk=5)
    nms("force_suppress", (2, 30, 6), "suppression across classes", id_index=0,
        force_suppress=True, overlap_thresh=0.3)
    nms("background0", (2, 30, 6), "class 0 is background: never a candidate", id_index=0,
        background_id=0)
    nms("valid_thresh_high", (3, 16, 6), "few candidates; some batches have none",
        valid_thresh=0.8, id_index=0)
    nms("none_valid", (2, 8, 6), "no candidate anywhere: every row -1", valid_thresh=5.0)
    nms("topk0", (2, 10, 6), "topk=0 returns the input unchanged", topk=0, id_index=0,
        out_format="center")
    nms("corner_to_center", (2, 24, 6), "out_format center; rows starting left of 0 stay as "
        "they are (MXNet's padding test)", id_index=0, out_format="center")
    nms("center_in", (2, 24, 6), "boxes given as centre and size, IoU in that encoding",
        fmt="center", id_index=0, in_format="center", out_format="center")
    nms("center_to_corner", (2, 24, 6), fmt="center", id_index=0, in_format="center",
        out_format="corner", overlap_thresh=0.3)
    nms("layout_score4_id6", (2, 20, 7), "coordinates first, score at 4, id at 6",
        layout=(6, 4, 0), width=7, coord_start=0, score_index=4, id_index=6)
    nms("no_id_column", (2, 20, 5), "5-wide rows: score then box", layout=(None, 0, 1),
        width=5, coord_start=1, score_index=0)
    nms("rank2", (30, 6), "one batch given as (boxes, width)", id_index=0, overlap_thresh=0.4)
    nms("rank4", (2, 3, 12, 6), "leading axes are all batch", id_index=0)

    def nms_exact(rng):
        # IoU exactly 0.5 (not suppressed: MXNet suppresses only above the threshold), exactly
        # 1 (identical boxes, equal scores: the earlier row wins), and empty boxes (IoU 0/0).
        rows = [[0, 0.9, 0, 0, 2, 1], [0, 0.8, 0, 0, 1, 1], [0, 0.8, 0, 0, 1, 1],
                [1, 0.7, 5, 5, 6, 7], [1, 0.7, 5, 5, 6, 7], [1, 0.6, 5, 6, 6, 7],
                [2, 0.5, 3, 3, 3, 3], [2, 0.5, 3, 3, 3, 3], [0, 0.4, 1, 0, 2, 1]]
        x = np.array([rows, rows[::-1]], dtype=np.float32)
        return (mx.sym.contrib.box_nms(V("data"), id_index=0, overlap_thresh=0.5, name="nms"),
                OrderedDict(data=x), {})
    op("box_nms_exact_thresholds", "_contrib_box_nms", nms_exact,
       "IoU exactly at the threshold, identical boxes with equal scores, empty boxes")

    def nms_nonfinite(rng, lead, n, **kw):
        x = detection_rows(rng, lead, n, **kw)
        flat = x.reshape(-1, x.shape[-1])
        flat[1, 1] = np.nan     # NaN score: never a candidate
        flat[3, 2] = np.nan     # NaN coordinate: IoU NaN, suppresses nothing
        flat[5, 0] = np.nan     # NaN class id
        flat[7, 4] = np.inf
        flat[9, 3] = -np.inf
        return x
    nms("nan", (2, 16, 6), "NaN/Inf in scores, ids and coordinates", gen=nms_nonfinite,
        nonfinite=True, id_index=0)

    def decode(name, n, note="", batch=2, fmt="center", big=False, **kw):
        def build(rng):
            x = randn(rng, (batch, n, 4), 3.0 if big else 0.5)
            c = uniform(rng, (1, n, 2), 0.0, 1.0)
            wh = uniform(rng, (1, n, 2), 0.05, 0.5)
            a = np.concatenate([c, wh] if fmt == "center" else [c - wh / 2, c + wh / 2], -1)
            sym = mx.sym.contrib.box_decode(V("data"), V("anchors"), format=fmt, name="dec",
                                            **kw)
            return sym, OrderedDict(data=x, anchors=a.astype(np.float32)), {}
        op("box_decode_" + name, "_contrib_box_decode", build, note)
    decode("default", 20, "std 1, no clip, centre anchors")
    decode("gluoncv_ssd", 30, "SSD's NormalizedBoxCenterDecoder", std0=0.1, std1=0.1,
           std2=0.2, std3=0.2)
    decode("corner_clip", 24, "corner anchors, large offsets clipped before exp",
           fmt="corner", big=True, clip=1.5)
    decode("clip_zero", 12, "clip 0 means no clip", big=True, clip=0.0, batch=1)

    def slike(name, ds, ls, note="", **kw):
        def build(rng):
            ins = OrderedDict(data=randn(rng, ds), like=randn(rng, ls))
            return mx.sym.slice_like(V("data"), V("like"), name="sl", **kw), ins, {}
        op("slice_like_" + name, "slice_like", build, note)
    slike("axes23", (1, 6, 8, 8), (2, 3, 5, 6), "GluonCV's anchors cut to the feature map",
          axes=(2, 3))
    slike("all_axes", (4, 5, 6), (2, 5, 3), "axes omitted: every axis")
    slike("negative_axis", (3, 4, 5), (2, 2, 2), axes=(-1,))
    slike("like_higher_rank", (4, 6), (3, 5, 7), "shape_like has more axes", axes=(0,))

    def l2(name, shape, note="", **kw):
        op("L2Normalization_" + name, "L2Normalization",
           unary(lambda d: mx.sym.L2Normalization(d, name="l2", **kw), shape=shape), note)
    l2("default", (2, 3, 4, 5), "mode instance: one norm per sample")
    l2("channel", (2, 8, 5, 5), "SSD's conv4_3 scale: a norm per position", mode="channel",
       eps=1e-5)
    l2("spatial", (2, 3, 4, 5), "a norm per channel plane", mode="spatial")
    l2("instance_2d", (4, 7), mode="instance", eps=0.5)


def ops_vision():
    """GluonCV's segmentation and pose ops: BilinearResize2D in every mode, AdaptiveAvgPooling2D
    with dividing and overlapping windows, Deconvolution (SimplePose/CenterNet's upsampling and
    the attribute corners: groups, dilation, adj, target_shape, 1-D)."""
    def resize(name, shape, note="", like=None, **kw):
        def build(rng):
            ins = OrderedDict(data=randn(rng, shape))
            if like is not None:
                ins["like"] = randn(rng, like)
                sym = mx.sym.contrib.BilinearResize2D(V("data"), V("like"), name="resize", **kw)
            else:
                sym = mx.sym.contrib.BilinearResize2D(V("data"), name="resize", **kw)
            return sym, ins, {}
        op("BilinearResize2D_" + name, "_contrib_BilinearResize2D", build, note)
    resize("size_up", (2, 3, 5, 7), "GluonCV's upsampling to the input size (align_corners)",
           height=12, width=17)
    resize("size_down", (1, 2, 9, 11), height=4, width=5)
    resize("size_to_1", (1, 2, 4, 5), "a 1-pixel output samples the first pixel", height=1,
           width=3)
    resize("same_size", (2, 2, 6, 5), "equal sizes copy", height=6, width=5)
    resize("no_align_up", (2, 3, 5, 7), "half-pixel centres, clamped at 0", height=11, width=9,
           align_corners=False)
    resize("no_align_down", (1, 3, 13, 10), height=5, width=4, align_corners=False)
    resize("scale", (1, 2, 5, 6), "scale_height/width: sizes truncated", scale_height=1.7,
           scale_width=2.5)
    resize("scale_height_only_ignored_width", (1, 2, 5, 6),
           "scale_width alone is ignored: width comes from 'width'", scale_width=3.0, width=4,
           height=3)
    resize("odd_scale_odd", (1, 2, 5, 7), "odd sizes keep both ends: (n - 1)·s + 1",
           mode="odd_scale", scale_height=2.0, scale_width=0.5)
    resize("odd_scale_even", (1, 2, 6, 8), mode="odd_scale", scale_height=1.5, scale_width=2.0)
    resize("like", (2, 3, 4, 6), "GluonCV's resize to a feature map", like=(1, 5, 9, 11),
           mode="like")
    resize("like_no_align", (2, 3, 7, 6), like=(2, 1, 3, 13), mode="like", align_corners=False)
    resize("to_even_down", (1, 2, 7, 8), mode="to_even_down")
    resize("to_even_up", (1, 2, 7, 8), mode="to_even_up")
    resize("to_odd_down", (1, 2, 7, 8), mode="to_odd_down")
    resize("to_odd_up", (1, 2, 7, 8), mode="to_odd_up")

    def apool(name, shape, note="", **kw):
        op("AdaptiveAvgPooling2D_" + name, "_contrib_AdaptiveAvgPooling2D",
           unary(lambda d: mx.sym.contrib.AdaptiveAvgPooling2D(d, name="apool", **kw),
                 shape=shape), note)
    apool("default", (2, 3, 5, 6), "no output_size: 1x1")
    apool("psp_bins", (2, 4, 12, 12), "PSPNet's 6x6 bin, windows divide", output_size=6)
    apool("overlap", (2, 3, 7, 10), "sizes that do not divide: neighbouring windows overlap",
          output_size=(3, 4))
    apool("larger_than_input", (1, 2, 3, 4), "output larger than the input", output_size=(5, 7))
    apool("int_2", (1, 3, 9, 5), output_size=2)

    def deconv(name, in_shape, nf, kernel, note="", **kw):
        def build(rng):
            c = in_shape[1]
            g = kw.get("num_group", 1)
            sym = mx.sym.Deconvolution(V("data"), num_filter=nf, kernel=kernel, name="deconv",
                                       **kw)
            params = {"deconv_weight": weight(rng, (c, nf // g) + tuple(kernel))}
            if not kw.get("no_bias", True):
                params["deconv_bias"] = randn(rng, (nf,), 0.1)
            return sym, OrderedDict(data=randn(rng, in_shape)), params
        op("Deconvolution_" + name, "Deconvolution", build, note)
    deconv("default", (2, 3, 5, 5), 4, (3, 3), "stride 1, no bias (MXNet's default)")
    deconv("simple_pose", (2, 6, 4, 3), 5, (4, 4), "SimplePose/CenterNet upsampling: k4 s2 p1",
           stride=(2, 2), pad=(1, 1))
    deconv("bias", (1, 3, 4, 4), 2, (3, 3), stride=(2, 2), no_bias=False)
    deconv("group2", (2, 4, 3, 4), 6, (3, 3), "grouped", stride=(2, 2), pad=(1, 1),
           num_group=2, no_bias=False)
    deconv("dilate", (1, 2, 4, 5), 3, (3, 2), "dilation and a non-square kernel",
           dilate=(2, 3), stride=(1, 2))
    deconv("adj", (1, 3, 3, 4), 2, (3, 3), "adj lengthens the output past the last tap",
           stride=(3, 2), pad=(1, 0), adj=(2, 1))
    deconv("target_shape", (1, 3, 4, 5), 2, (4, 4), "target_shape chooses pad and adj",
           stride=(2, 2), target_shape=(8, 9))
    deconv("big_pad", (1, 2, 5, 5), 3, (3, 3), "padding larger than the kernel crops",
           stride=(2, 2), pad=(3, 2))
    deconv("1d", (2, 3, 6), 4, (3,), "1-D", stride=(2,), pad=(1,), adj=(1,), no_bias=False)
    # A dilated kernel whose reach (dilate·(k − 1) + 1) is shorter than the stride leaves
    # output positions no tap lands on, and with groups each group's taps must stay its own.
    deconv("group_dilate_sparse", (2, 4, 3, 4), 6, (2, 2),
           "groups, dilation 2, stride 4 past the kernel's reach of 3",
           stride=(4, 4), dilate=(2, 2), num_group=2, no_bias=False)
    deconv("group_dilate_sparse_pad", (1, 6, 4, 3), 3, (3, 2),
           "three groups, dilation (2, 3), stride (6, 5), padded",
           stride=(6, 5), dilate=(2, 3), pad=(1, 2), num_group=3)
    deconv("dilate_sparse", (1, 2, 3, 3), 2, (2, 2), "ungrouped, dilation 2, stride 4",
           stride=(4, 4), dilate=(2, 2))


def ops_two_stage():
    """Faster R-CNN's ops: ROIAlign (GluonCV's settings, adaptive grids, aligned, position
    sensitive, ROIs past the map edge, a negative batch index), shape_array, reverse, stack,
    broadcast_axis."""
    def rois_for(rng, n_rois, batch, h, w, scale, spread=1.3):
        # Boxes in image coordinates (map size / scale), some reaching past the edges.
        ih, iw = h / scale, w / scale
        x1 = uniform(rng, (n_rois,), -0.2 * iw, 0.9 * iw)
        y1 = uniform(rng, (n_rois,), -0.2 * ih, 0.9 * ih)
        bw = uniform(rng, (n_rois,), 0.05 * iw, spread * 0.5 * iw)
        bh = uniform(rng, (n_rois,), 0.05 * ih, spread * 0.5 * ih)
        b = rng.randint(0, batch, (n_rois,)).astype(np.float32)
        return np.stack([b, x1, y1, x1 + bw, y1 + bh], axis=1).astype(np.float32)

    def roi(name, dshape, n_rois, note="", gen=None, **kw):
        def build(rng):
            n, c, h, w = dshape
            r = (gen or rois_for)(rng, n_rois, n, h, w, kw["spatial_scale"])
            sym = mx.sym.contrib.ROIAlign(V("data"), V("rois"), name="roi", **kw)
            return sym, OrderedDict(data=randn(rng, dshape), rois=r), {}
        op("ROIAlign_" + name, "_contrib_ROIAlign", build, note)
    roi("faster_rcnn", (2, 3, 12, 14), 7, "GluonCV's Faster R-CNN: 14x14 bins, 2x2 samples, "
        "scale 1/16", pooled_size=(14, 14), spatial_scale=0.0625, sample_ratio=2)
    roi("adaptive_grid", (1, 2, 10, 9), 6, "sample_ratio -1: the grid follows each ROI's size",
        pooled_size=(3, 2), spatial_scale=0.5)
    roi("aligned", (2, 2, 8, 8), 5, "half-pixel offset", pooled_size=(2, 3), spatial_scale=0.25,
        sample_ratio=3, aligned=True)
    roi("position_sensitive", (1, 12, 7, 6), 4, "R-FCN: channel c of bin (i, j) reads channel "
        "(c*ph + i)*pw + j", pooled_size=(2, 3), spatial_scale=1.0, sample_ratio=2,
        position_sensitive=True)

    def neg_batch(rng, n_rois, batch, h, w, scale):
        r = rois_for(rng, n_rois, batch, h, w, scale)
        r[-1, 0] = -1.0
        r[1, 0] = 1.7  # truncated to 1
        return r
    # MXNet writes only one zero for a ROI whose batch index is negative (top_data[n], with n
    # the ROI's number, landing in ROI 0's output); the rest of that ROI's output is whatever
    # its memory held.  The case puts the negative ROI last, where hybridinfer's zeros are
    # checked only as far as MXNet defines them: so it is left out.  Fractional indices are
    # truncated.
    roi("fractional_batch", (2, 2, 6, 6), 4, "a fractional batch index is truncated",
        gen=lambda rng, n, b, h, w, s: neg_batch(rng, n + 1, b, h, w, s)[:n],
        pooled_size=(2, 2), spatial_scale=0.5, sample_ratio=2)

    op("shape_array_4d", "shape_array",
       lambda rng: (mx.sym.shape_array(V("data"), name="sa"),
                    OrderedDict(data=randn(rng, (2, 3, 4, 5))), {}), "int64 dims, as float32")
    op("shape_array_1d", "shape_array",
       lambda rng: (mx.sym.shape_array(V("data"), name="sa"),
                    OrderedDict(data=randn(rng, (7,))), {}))

    def rev(name, shape, axis, note=""):
        op("reverse_" + name, "reverse",
           unary(lambda d: mx.sym.reverse(d, axis=axis, name="rev"), shape=shape), note)
    rev("axis1", (2, 3, 4), 1, "Faster R-CNN's (h, w) to (w, h)")
    rev("two_axes", (2, 3, 4, 5), (0, 3))
    # MXNet 1.9.1 refuses negative axes here (and in broadcast_axis): so does hybridinfer.

    def stk(name, shape, n, note="", **kw):
        def build(rng):
            ins = inputs_of(rng, *[(shape, randn)] * n)
            return mx.sym.stack(*[V(k) for k in ins], num_args=n, name="stk", **kw), ins, {}
        op("stack_" + name, "stack", build, note)
    stk("one", (3, 4), 1, "Faster R-CNN's single-input stack", axis=0)
    stk("axis1", (2, 3, 4), 3, axis=1)
    stk("last", (2, 3), 2, axis=2)
    stk("negative", (2, 3, 4), 2, axis=-2)

    def bax(name, shape, note="", **kw):
        op("broadcast_axis_" + name, "broadcast_axis",
           unary(lambda d: mx.sym.broadcast_axis(d, name="bax", **kw), shape=shape), note)
    bax("rpn", (2, 6, 1), "Faster R-CNN's RPN: scores to 4 columns", axis=2, size=4)
    bax("two_axes", (1, 3, 1, 2), axis=(0, 2), size=(2, 5))
    bax("none", (2, 3), "no axes: a copy")


def ops_ordering():
    """topk, sort and argsort.  MXNet's CPU sort is libstdc++'s std::sort when k·8 > n and
    std::partial_sort otherwise, neither stable: the grid inputs make ties, short and long rows
    (insertion sort only, then introsort), heavily tied rows and k at the partial/full boundary
    pin down which tied index comes first."""
    def tied(lo, hi):
        return lambda rng, shape: (rng.randint(lo, hi + 1, shape) * 0.5).astype(np.float32)

    def case(opname, fn, name, shape, note="", gen=grid, **kw):
        op(opname + "_" + name, opname,
           unary(lambda d: fn(d, name=opname, **kw), shape=shape, gen=gen), note)

    topk = lambda n, *a, **k: case("topk", mx.sym.topk, n, *a, **k)
    topk("default", (2, 3, 4, 5), "k=1 indices of the largest on the last axis, ties")
    topk("value_k3", (2, 3, 40), "partial sort (3·8 <= 40)", ret_typ="value", k=3)
    topk("indices_partial_ties", (3, 50), "partial sort over many ties", k=4)
    topk("both_partial_ties", (3, 50), "two outputs: values then indices", k=4, ret_typ="both",
         gen=tied(-3, 3))
    topk("both_full_ties", (2, 37), "full sort (10·8 > 37), introsort over 16", k=10,
         ret_typ="both")
    topk("boundary_partial", (2, 200), "k·8 == n: still the partial sort", k=25,
         ret_typ="both", gen=tied(-6, 6))
    topk("boundary_full", (2, 199), "k·8 > n by one: the full sort", k=25, ret_typ="both",
         gen=tied(-6, 6))
    topk("mask", (2, 6, 5), "mask on a middle axis", axis=1, k=2, ret_typ="mask")
    topk("axis_neg3_ascend", (4, 3, 5), "negative axis, smallest first", axis=-3, k=2,
         ret_typ="both", is_ascend=True)
    topk("axis_none", (3, 4, 5), "axis None: the flattened input, output (k,)", axis=None, k=7,
         ret_typ="both")
    topk("axis_none_mask", (3, 4, 5), "axis None mask keeps the input shape", axis=None, k=9,
         ret_typ="mask")
    topk("k0_all", (3, 6, 4), "k=0: the whole axis", axis=1, k=0, ret_typ="both",
         is_ascend=True)
    topk("value_randn", (2, 3, 8, 9), "no ties", axis=2, k=3, ret_typ="value", gen=randn)
    topk("long_row_ties", (2, 700), "long rows of five values: introsort partitions and the "
         "final insertion sort", k=0, ret_typ="both", gen=tied(0, 4))

    sort = lambda n, *a, **k: case("sort", mx.sym.sort, n, *a, **k)
    sort("default", (2, 3, 20), "ascending on the last axis; axis written out: MXNet 1.9.1's "
         "SymbolBlock.imports fails on a sort without one (its gradient node gets axis='')",
         axis=-1)
    sort("axis0_descend", (5, 3, 4), axis=0, is_ascend=False)
    sort("axis_none", (3, 4, 5), "axis None: one flattened row", axis=None)
    sort("axis_neg2", (2, 30, 3), axis=-2, is_ascend=False, gen=randn)

    argsort = lambda n, *a, **k: case("argsort", mx.sym.argsort, n, *a, **k)
    argsort("default", (3, 40), "ascending, ties")
    argsort("descend_axis_neg2", (2, 30, 3), axis=-2, is_ascend=False)
    argsort("axis_none", (3, 4, 5), "axis None", axis=None, is_ascend=False)
    argsort("binary_ties", (2, 500), "two values only: every tie order shows", gen=tied(0, 1))
    argsort("short_row", (4, 7), "insertion sort only (n <= 16)", is_ascend=False,
            gen=tied(-2, 2))


def ops_mod_gather():
    """broadcast_mod / _mod (MXNet's mod: the divisor's sign, like Python; x mod 0 = 0;
    zero results signed as mshadow_op::mod gives them) and gather_nd (float indices: negative
    ones count from the end, fractions truncate after that; MXNet raises on any index outside
    [-n, n-1], so no case has one)."""
    def dividend(rng, shape):
        return (rng.randint(-12, 13, shape) * 0.75).astype(np.float32)

    def divisor(rng, shape):
        return (rng.randint(-4, 5, shape) * 0.5).astype(np.float32)  # zeros included

    def bmod(name, sa, sb, ga=dividend, gb=divisor, note="", sym=None):
        def build(rng):
            ins = inputs_of(rng, (sa, ga), (sb, gb))
            return (sym or mx.sym.broadcast_mod)(V("data0"), V("data1"), name="mod"), ins, {}
        op(name, "_mod" if sym is not None else "broadcast_mod", build,
           note or "%s vs %s" % (sa, sb))
    bmod("broadcast_mod_c11", (2, 3, 4, 5), (1, 3, 1, 1), note="negative and zero divisors")
    bmod("broadcast_mod_both_sides", (2, 1, 4, 1), (1, 3, 1, 5))
    bmod("broadcast_mod_lowrank", (4, 5), (2, 3, 4, 5))
    bmod("broadcast_mod_randn", (3, 4, 5), (3, 1, 5), ga=lambda r, s: randn(r, s, 3.0),
         gb=randn, note="fractional values of both signs")
    bmod("broadcast_mod_same", (3, 4, 5), (3, 4, 5))
    bmod("elemwise_mod", (3, 4, 5), (3, 4, 5), sym=I._mod, note="equal shapes")

    def gnd(name, dshape, ishape, vals, note=""):
        def build(rng):
            data = randn(rng, dshape)
            lo, hi = vals
            idx = np.empty(ishape, np.float32)
            for a in range(ishape[0]):
                n = dshape[a]
                idx[a] = rng.uniform(lo * n, hi * n, ishape[1:]) if lo != hi else \
                    rng.randint(-n, n, ishape[1:])
                idx[a] = np.clip(idx[a], -n, n - 1)
            ins = OrderedDict(data=data, indices=idx.astype(np.float32))
            return mx.sym.gather_nd(V("data"), V("indices"), name="gnd"), ins, {}
        op("gather_nd_" + name, "gather_nd", build, note)
    gnd("full", (3, 4, 5), (3, 6), (0, 0), "M == N: one element per column, negative indices")
    gnd("slices", (4, 3, 5), (1, 2, 3), (0, 0), "M = 1: rows of data, 2-d index grid")
    gnd("m2", (3, 4, 2, 5), (2, 7), (0, 0), "M = 2: trailing (2, 5) slices")
    gnd("fractional", (3, 4, 5), (2, 4, 3), (-1.0, 1.0),
        "fractional indices in [-n, n-1]: truncated after adding n to negatives")


def multibox_inputs(rng, batch, classes, n, spread=0.25, grid=16):
    """cls_prob (batch, classes, n) on a 1/grid grid (equal scores within an anchor and across
    anchors are common: MXNet takes the first best class and keeps equal scores in anchor
    order), loc_pred (batch, n * 4) and corner anchors (1, n, 4) clustered around a few
    centres so that IoUs fall on both sides of the thresholds; some anchors reach outside
    [0, 1] so that clip matters."""
    cls = (rng.randint(0, grid + 1, (batch, classes, n)) / float(grid)).astype(np.float32)
    loc = randn(rng, (batch, n * 4), 0.5)
    centres = uniform(rng, (3, 2), 0.15, 0.85)
    c = centres[rng.randint(0, 3, n)] + randn(rng, (n, 2), 0.08)
    wh = uniform(rng, (n, 2), 0.1, 0.5) * spread / 0.25
    anchors = np.concatenate([c - wh / 2, c + wh / 2], -1)[None].astype(np.float32)
    return cls, loc, anchors


def ops_quantize():
    """_contrib_quantize_v2 into _contrib_dequantize, the pair an int8 export starts and ends
    with: MXNet's float result of the round trip (its int8 steps never leave MXNet as npy).
    Calibrated int8 and uint8 with data past the range (saturation) and on .5 steps (ties at
    a scale of 1), the data's own range, and a dead layer's range of [0, 0]."""
    def pair(name, shape, gen, note, **kw):
        def build(rng):
            q = mx.sym.contrib.quantize_v2(V("data"), name="quantize", **kw)
            sym = mx.sym.contrib.dequantize(q[0], q[1], q[2], out_type="float32",
                                            name="dequantize")
            return sym, OrderedDict(data=gen(rng, shape)), {}
        op("quantize_dequantize_" + name, "_contrib_quantize_v2", build, note)
    ties = lambda rng, shape: grid(rng, shape, -160.0, 160.0)
    pair("int8_ties", (2, 3, 5, 7), ties, "scale 1: .5 ties to even, saturation past 127",
         out_type="int8", min_calib_range=-127.5, max_calib_range=127.5)
    pair("uint8_ties", (2, 3, 5, 7), lambda rng, shape: grid(rng, shape, -20.0, 300.0),
         "uint8 at scale 1: negatives to 0, saturation past 255",
         out_type="uint8", min_calib_range=0.0, max_calib_range=255.5)
    pair("int8_calib", (2, 4, 6, 6), lambda rng, shape: randn(rng, shape, 2.0),
         "a calibrated range narrower than the data", min_calib_range=-3.1, max_calib_range=2.7)
    pair("int8_own_range", (2, 4, 6, 6), lambda rng, shape: randn(rng, shape, 2.0),
         "no calibration: the data's own min and max", out_type="int8")
    pair("dead", (2, 3, 4, 4), lambda rng, shape: randn(rng, shape),
         "a range of [0, 0]: infinite scale, every step NaN, stored as 127, read back as 0",
         out_type="int8", min_calib_range=0.0, max_calib_range=0.0)


def ops_multibox():
    """The symbol-API SSD's MultiBoxPrior (every attribute, non-square maps, clip, explicit and
    automatic steps) and MultiBoxDetection (thresholds, NMS on and off, nms_topk's tail rows,
    force_suppress, variances, background_id, which MXNet's CPU kernel never reads)."""
    def prior(name, shape, note="", nonfinite=False, **kw):
        op("MultiBoxPrior_" + name, "_contrib_MultiBoxPrior",
           unary(lambda d: mx.sym.contrib.MultiBoxPrior(d, name="prior", **kw), shape=shape),
           note, nonfinite=nonfinite)
    prior("default", (1, 3, 4, 5), "sizes (1,), ratios (1,): one anchor per position, H != W")
    prior("ssd", (2, 8, 5, 5), "an SSD layer: two sizes, three ratios",
          sizes=(0.2, 0.272), ratios=(1, 2, 0.5))
    prior("clip", (1, 2, 3, 4), "anchors past the image clipped into [0, 1]",
          sizes=(0.5, 0.75), ratios=(1, 2, 3, 1.0 / 3), clip=True)
    prior("steps_offsets", (1, 1, 6, 4), "explicit steps (y, x) and offsets (y, x)",
          sizes=(0.3,), ratios=(1, 2), steps=(0.1, 0.125), offsets=(0.2, 0.7))
    prior("step_zero", (1, 1, 3, 5), "a zero step makes both automatic (1/H, 1/W)",
          sizes=(0.4,), steps=(0, 0.25))
    prior("bare_size_5d", (1, 2, 3, 2, 2), "sizes as a bare number; data of rank 5 (H, W are "
          "axes 2 and 3)", sizes=0.6, ratios=[1, 4])
    prior("negative_ratio_clip", (1, 1, 2, 3), "sqrt of a negative ratio is NaN, which clip "
          "keeps", nonfinite=True, sizes=(0.5, 0.2), ratios=(1, -2), clip=True)

    def detect(name, batch, classes, n, note="", gen=None, nonfinite=False, spread=0.25, **kw):
        def build(rng):
            cls, loc, anchors = (gen or multibox_inputs)(rng, batch, classes, n, spread)
            sym = mx.sym.contrib.MultiBoxDetection(V("cls_prob"), V("loc_pred"), V("anchor"),
                                                   name="det", **kw)
            return sym, OrderedDict(cls_prob=cls, loc_pred=loc, anchor=anchors), {}
        op("MultiBoxDetection_" + name, "_contrib_MultiBoxDetection", build, note,
           nonfinite=nonfinite)
    detect("default", 2, 4, 30, "clip, threshold 0.01, NMS 0.5 per class")
    detect("no_clip", 2, 3, 24, "boxes past the image stay as decoded", clip=False, spread=0.6)
    detect("force_suppress", 2, 4, 30, "suppression across classes", force_suppress=True,
           nms_threshold=0.3)
    detect("threshold_high", 3, 3, 16, "few detections; some images have none",
           threshold=0.9)
    detect("nms_topk", 2, 4, 30, "only the 5 best take part; rows past them keep their "
           "pre-sort values with class -1", nms_topk=5)
    detect("nms_off", 2, 3, 20, "nms_threshold 0: rows in anchor order, unsorted",
           nms_threshold=0.0)
    detect("nms_above_1", 1, 3, 20, "nms_threshold > 1: no NMS either", nms_threshold=1.5)
    detect("nms_1", 2, 3, 20, "nms_threshold 1: only identical boxes suppress",
           nms_threshold=1.0, clip=False)
    detect("variances", 2, 3, 24, "variances other than SSD's",
           variances=(0.2, 0.3, 0.1, 0.4), nms_threshold=0.45)
    detect("background_id", 2, 4, 30, "background_id 2 changes nothing: MXNet's CPU kernel "
           "always takes class 0 as the background", background_id=2)
    detect("background_only", 2, 1, 10, "one class, the background: every row -1")

    def ties(rng, batch, classes, n, spread):
        # identical anchors and offsets with equal scores: MXNet keeps the earlier anchor;
        # equal best classes within an anchor: the first wins
        cls, loc, anchors = multibox_inputs(rng, batch, classes, n, spread, grid=4)
        anchors[0, n // 2:] = anchors[0, :n - n // 2]
        loc[:, (n // 2) * 4:] = loc[:, :(n - n // 2) * 4]
        return cls, loc, anchors
    detect("ties", 2, 3, 24, "duplicate anchors, equal scores, equal best classes", gen=ties,
           force_suppress=True)

    def nonfinite_inputs(rng, batch, classes, n, spread):
        cls, loc, anchors = multibox_inputs(rng, batch, classes, n, spread)
        cls[0, 1, 0] = np.nan   # never the best class
        cls[0, 2, 3] = np.nan
        cls[1, 1, 2] = np.inf   # the best class, score inf
        loc[0, 5] = np.nan      # a NaN corner: clipped to 1
        loc[1, 10] = np.inf     # an infinite width
        return cls, loc, anchors
    detect("nan", 2, 3, 16, "NaN/Inf in probabilities and offsets", gen=nonfinite_inputs,
           nonfinite=True)


def register_ops():
    ops_convolution()
    ops_upsampling()
    ops_pad()
    ops_deform_conv()
    ops_like()
    ops_batchnorm()
    ops_activation()
    ops_leakyrelu()
    ops_pooling()
    ops_fullyconnected()
    ops_shape()
    ops_scalar()
    ops_broadcast()
    ops_elemwise()
    ops_softmax()
    ops_dot()
    ops_slicechannel()
    ops_cast()
    ops_integer()
    ops_unary_math()
    ops_reduce()
    ops_quantize()
    ops_nonfinite()
    ops_detection()
    ops_vision()
    ops_ordering()
    ops_mod_gather()
    ops_two_stage()
    ops_multibox()


# ---------------------------------------------------------------------------------------------
# 3. Legacy (pre-1.0) symbol files, produced by rewriting a fresh Gluon export
# ---------------------------------------------------------------------------------------------

class LegacyConvBN(gluon.HybridBlock):
    """conv-BN-relu, a residual add (written `_Plus` in the 0.8 file), pool, dense."""

    def __init__(self, **kwargs):
        super(LegacyConvBN, self).__init__(**kwargs)
        with self.name_scope():
            self.conv0 = nn.Conv2D(4, kernel_size=3, padding=1, in_channels=3)
            self.bn0 = nn.BatchNorm(in_channels=4)
            self.conv1 = nn.Conv2D(4, kernel_size=3, padding=1, in_channels=4)
            self.bn1 = nn.BatchNorm(in_channels=4)
            self.pool = nn.MaxPool2D(pool_size=2)
            self.fc = nn.Dense(5, in_units=4 * 3 * 3)

    def hybrid_forward(self, F, x):
        x = F.relu(self.bn0(self.conv0(x)))
        x = x + F.relu(self.bn1(self.conv1(x)))
        return self.fc(self.pool(x))


def to_legacy_json(graph, era):
    """Rewrite a 1.x symbol JSON into the 0.8 ("param"+"attr", no aux variables) or 0.9 ("attr")
    layout.  Returns (json dict, {old aux param name: new aux param name})."""
    nodes = graph["nodes"]
    drop, renames = set(), {}
    if era == "0.8":
        # Before 0.9 BatchNorm's moving statistics were not graph nodes; MXNet's loader recreates
        # them as `{bn node name}_moving_mean/_moving_var`, so the params must use those names.
        for node in nodes:
            if node["op"] == "BatchNorm":
                for idx, suffix in ((3, "_moving_mean"), (4, "_moving_var")):
                    vid = node["inputs"][idx][0]
                    drop.add(vid)
                    renames[nodes[vid]["name"]] = node["name"] + suffix
    remap, kept = {}, []
    for i, node in enumerate(nodes):
        if i not in drop:
            remap[i] = len(kept)
            kept.append(node)

    def entry(e):
        return [remap[e[0]], e[1]] if era == "0.8" else [remap[e[0]], e[1], 0]

    new_nodes = []
    for node in kept:
        attrs = node.get("attrs", {})
        inputs = [entry(e) for e in node["inputs"] if e[0] not in drop]
        op_name = node["op"]
        if era == "0.8":
            if op_name == "elemwise_add":
                op_name = "_Plus"  # the 0.8 spelling; still registered as an alias
            out = OrderedDict([("op", op_name),
                               ("param", {k: v for k, v in attrs.items()
                                          if not k.startswith("__")}),
                               ("name", node["name"]), ("inputs", inputs),
                               ("backward_source_id", -1)])
            hidden = {k: v for k, v in attrs.items() if k.startswith("__")}
            if hidden:
                out["attr"] = hidden
        else:
            out = OrderedDict([("op", op_name), ("name", node["name"])])
            if attrs:
                out["attr"] = attrs
            out["inputs"] = inputs
        new_nodes.append(out)
    result = OrderedDict([("nodes", new_nodes),
                          ("arg_nodes", [remap[i] for i in graph["arg_nodes"] if i not in drop]),
                          ("heads", [entry(h) for h in graph["heads"]])])
    if era == "0.9":
        result["attrs"] = {"mxnet_version": ["int", 900]}
    return result, renames


def legacy_builder(era):
    def build(case, case_dir, rng):
        net = LegacyConvBN()
        net.initialize(mx.init.Xavier())
        randomize_gluon(net, rng)
        x = randn(rng, (2, 3, 6, 6))
        live = export_gluon(net, [x], case_dir)
        sym_path = os.path.join(case_dir, SYMBOL_FILE)
        par_path = os.path.join(case_dir, PARAMS_FILE)
        with open(sym_path) as f:
            graph = json.load(f)
        legacy, renames = to_legacy_json(graph, era)
        _atomic_write_text(sym_path, json.dumps(legacy, indent=2) + "\n")
        params = mx.nd.load(par_path)
        fixed = OrderedDict()
        for key, val in params.items():
            kind, _, name = key.partition(":")
            fixed["%s:%s" % (kind, renames.get(name, name))] = val
        mx.nd.save(par_path, fixed)
        # MXNet must accept the rewritten file and upgrade it to the same network
        sym = mx.sym.load(sym_path)
        if era == "0.8":
            want = sorted(renames.values())
            if sorted(sym.list_auxiliary_states()) != want:
                raise RuntimeError("legacy aux names %s != %s"
                                   % (sym.list_auxiliary_states(), want))
        inputs = OrderedDict(data=x)
        outs = run_symbol_files(sym_path, par_path, inputs)
        check_close(case.name, outs, live)
        return finish_case(case, case_dir, inputs, outs)
    return build


def register_legacy():
    register("legacy_convbn", "small", "legacy", legacy_builder("0.8"),
             note="MXNet 0.8 layout: param+attr keys, [node, index] inputs, backward_source_id, "
                  "no mxnet_version, BatchNorm moving stats not in the graph "
                  "(aux:<bn node>_moving_mean/_moving_var), residual add spelled _Plus")
    register("legacy_attr09", "small", "legacy", legacy_builder("0.9"),
             note="MXNet 0.9 layout: all attributes under attr, mxnet_version 900, aux variables "
                  "present")


# ---------------------------------------------------------------------------------------------
# 4. Whole graphs written with the symbol API (no Gluon)
# ---------------------------------------------------------------------------------------------

def ssd_symbol(classes=3):
    """A small SSD as MXNet's own symbol-API example wrote them: two feature maps, each with a
    class and a box predictor and its MultiBoxPrior anchors, joined by transpose/Flatten/Concat,
    a channel softmax, then MultiBoxDetection."""
    data = V("data")
    x = mx.sym.Convolution(data, num_filter=8, kernel=(3, 3), pad=(1, 1), name="conv1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    f1 = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    x = mx.sym.Convolution(f1, num_filter=8, kernel=(3, 3), pad=(1, 1), name="conv2")
    x = mx.sym.Activation(x, act_type="relu", name="relu2")
    f2 = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool2")
    layers = [(f1, (0.2, 0.3), (1, 2, 0.5)), (f2, (0.45, 0.6), (1, 2))]
    cls_preds, loc_preds, anchors = [], [], []
    for k, (f, sizes, ratios) in enumerate(layers):
        per = len(sizes) + len(ratios) - 1
        cls = mx.sym.Convolution(f, num_filter=per * (classes + 1), kernel=(3, 3), pad=(1, 1),
                                 name="cls_pred%d" % k)
        cls = mx.sym.transpose(cls, axes=(0, 2, 3, 1))
        cls_preds.append(mx.sym.Flatten(cls))
        loc = mx.sym.Convolution(f, num_filter=per * 4, kernel=(3, 3), pad=(1, 1),
                                 name="loc_pred%d" % k)
        loc = mx.sym.transpose(loc, axes=(0, 2, 3, 1))
        loc_preds.append(mx.sym.Flatten(loc))
        a = mx.sym.contrib.MultiBoxPrior(f, sizes=sizes, ratios=ratios, clip=k == 1,
                                         name="anchors%d" % k)
        anchors.append(mx.sym.Flatten(a))
    cls = mx.sym.Concat(*cls_preds, dim=1, name="cls_concat")
    cls = mx.sym.Reshape(cls, shape=(0, -1, classes + 1))
    cls = mx.sym.transpose(cls, axes=(0, 2, 1))
    cls_prob = mx.sym.SoftmaxActivation(cls, mode="channel", name="cls_prob")
    loc = mx.sym.Concat(*loc_preds, dim=1, name="loc_concat")
    anc = mx.sym.Reshape(mx.sym.Concat(*anchors, dim=1), shape=(0, -1, 4), name="anchors")
    return mx.sym.contrib.MultiBoxDetection(cls_prob, loc, anc, name="detection",
                                            nms_threshold=0.45, threshold=0.5, nms_topk=40)


def symbol_builder(make_sym, data_shape):
    def build(case, case_dir, rng):
        sym = make_sym()
        arg_shapes, _, _ = sym.infer_shape(data=data_shape)
        params = OrderedDict()
        for name, shp in zip(sym.list_arguments(), arg_shapes):
            if name == "data":
                continue
            fan_in = int(np.prod(shp[1:])) if len(shp) > 1 else 1
            # Scores spread out (best 0.93) without saturating at 1: the 41 best of each image
            # lie >= 1e-4 apart and every score >= 5e-4 from the threshold, so that rounding
            # cannot reorder MXNet's NMS (checked when the scale was chosen)
            params[name] = randn(rng, shp, 0.75 / np.sqrt(fan_in) if len(shp) > 1 else 0.3)
        inputs = OrderedDict(data=smooth_images(rng, data_shape))
        return write_symbol_case(case, case_dir, sym, inputs, params)
    return build


def register_models():
    register("model_ssd_symbol", "small", "model", symbol_builder(ssd_symbol, (2, 3, 16, 16)),
             note="symbol-API SSD: convolutions -> class/box predictors -> MultiBoxPrior on two "
                  "maps -> channel softmax -> MultiBoxDetection (threshold 0.5, nms_topk 40)")


# ---------------------------------------------------------------------------------------------
# Model zoo (generated at test time into a cache; never committed)
# ---------------------------------------------------------------------------------------------

ZOO_MODELS = ["resnet18_v1", "resnet50_v1", "resnet18_v2", "mobilenet1.0", "mobilenetv2_1.0",
              "squeezenet1.1", "densenet121", "inceptionv3"]


def smooth_images(rng, shape):
    """Random images with large-scale structure (blocky low-resolution noise plus pixel noise).

    Pure pixel noise averages out in the global pooling of a randomly initialised network, so
    every image would give nearly the same logits and a broken kernel could go unnoticed."""
    n, c, h, w = shape
    low = rng.standard_normal((n, c, 8, 8))
    big = np.repeat(np.repeat(low, -(-h // 8), axis=2), -(-w // 8), axis=3)[:, :, :h, :w]
    return (big + 0.5 * rng.standard_normal(shape)).astype(np.float32)


def gluon_blocks(block):
    yield block
    for child in block._children.values():
        for b in gluon_blocks(child):
            yield b


def calibrate_batchnorm(net, x, rng):
    """Set BN running statistics from one training-mode pass, then perturb them.

    Random running statistics that ignore the real activation statistics make a deep random
    network collapse (mobilenet's output came out input-independent to 1e-8).  With momentum 0,
    one training-mode forward + backward stores every layer's batch statistics; the small
    perturbation keeps them from being exactly those, so a wrong eps or mean/var mix-up shows."""
    bns = [b for b in gluon_blocks(net) if isinstance(b, nn.BatchNorm)]
    momenta = [b._kwargs["momentum"] for b in bns]
    for b in bns:
        b._kwargs["momentum"] = 0.0
    with mx.autograd.record(train_mode=True):
        y = net(mx.nd.array(x))
        # detectors in training mode give several heads (SSD: class and box predictions, then
        # anchors, which no BatchNorm feeds): every BatchNorm lies on the first two
        if isinstance(y, (list, tuple)):
            y = y[0].sum() + y[1].sum()
    y.backward()  # MXNet's CPU BatchNorm updates the running statistics in its backward pass
    for b, m in zip(bns, momenta):
        b._kwargs["momentum"] = m  # exported as written by Gluon (0.9)
        mean = b.running_mean.data().asnumpy()
        var = b.running_var.data().asnumpy()
        # small and symmetric (log-normal for var): deep nets compound a one-sided bias
        # (var * U(0.7, 1.4) blew resnet50's logits up to 3e4)
        b.running_mean.set_data(mx.nd.array(mean + randn(rng, mean.shape, 0.1) * np.sqrt(var)))
        b.running_var.set_data(mx.nd.array(var * np.exp(randn(rng, var.shape, 0.1))))


def write_classifier_case(case, case_dir, rng, model, net, size, batch):
    """A zoo classifier's case: Xavier weights from numpy, seeded by the model name alone (so the
    batch variants are the same network), BatchNorm statistics calibrated on smooth images."""
    mrng = np.random.RandomState(seed_of("zoo_" + model))
    net.initialize(mx.init.Xavier())
    x = smooth_images(rng, (batch, 3, size, size))
    net(mx.nd.array(x[:1]))  # resolves deferred shapes
    randomize_gluon(net, mrng, xavier=True)
    calibrate_batchnorm(net, smooth_images(mrng, (2, 3, size, size)), mrng)
    outs = write_gluon_case(case, case_dir, net, [x])
    check_classifier_output(case, outs[0], batch)
    return outs


def zoo_builder(model, batch):
    def build(case, case_dir, rng):
        net = mx.gluon.model_zoo.vision.get_model(model, pretrained=False)
        size = 299 if model == "inceptionv3" else 224
        return write_classifier_case(case, case_dir, rng, model, net, size, batch)
    return build


def check_classifier_output(case, out, batch):
    """Refuse logits a broken kernel could match by accident: the same for every class, or the
    same for every image of the batch."""
    spread = float(out.std(axis=1).mean())
    if not spread > 1e-3:
        raise RuntimeError("%s: degenerate output (std over classes %g)" % (case.name, spread))
    if batch > 1:
        ratio = float(out.std(axis=0).mean()) / spread
        print("  %s: std over batch / std over classes = %.3f" % (case.name, ratio))
        if ratio < 0.01:  # random nets give ~0.02-0.1; mobilenet once gave 1e-8
            raise RuntimeError("%s: output barely depends on the input (%.3g)"
                               % (case.name, ratio))


def register_zoo():
    for model in ZOO_MODELS:
        for batch in (1, 4):
            register("zoo_%s_b%d" % (model, batch), "zoo", "zoo", zoo_builder(model, batch),
                     note="gluon model zoo %s, pretrained=False, Xavier, BN stats calibrated then "
                          "perturbed, smooth random images, "
                          "batch %d" % (model, batch))


# GluonCV detectors (issue 12): (model, input size, image scale).  Their heads end in
# box_decode/slice_like, box_nms (topk 400, padded with -1) and three outputs: ids, scores,
# boxes.  The image scale keeps random weights out of saturation: SSD's VGG has no BatchNorm,
# so its class logits grow with the input, and at full scale every score is exactly 1.  The
# input sizes are small multiples of 32 that keep the cases at seconds: GluonCV's anchor
# generators precompute anchors for the nominal size (512) and slice_like them to the feature
# maps, and YOLOv3's grid offsets likewise, so smaller inputs are what the models allow.
#
# Scores must be well separated: the outputs are compared in MXNet's NMS order, and two
# candidates a few ulps apart swap places with rounding upstream.  With random weights
# YOLOv3's scores crowd into [0.45, 0.56] (and on MobileNet are the same on every image), so
# for the models after SSD-VGG the layers that make scores and box offsets are rescaled per
# channel (calibrate_heads), collapsing BatchNorms get real statistics, and the NMS input must
# give the same first rows under perturbations far above rounding (check_nms_stable).
#
# CenterNet has no NMS: its decoder takes the topk of the peak-filtered heatmap (over classes and
# positions at once) and turns each index into class, row and column with integer arithmetic
# (Cast to int64, shape_array, broadcast_div and broadcast_mod), which MXNet truncates; its
# outputs have no trailing axis of 1: ids and scores (B, K), boxes (B, K, 4).  Its topk input
# must be free of near-ties, as NMS inputs are (check_nms_stable).
DETECTION_MODELS = [("ssd_300_vgg16_atrous_voc", 300, 0.05),
                    ("ssd_512_resnet18_v1_voc", 128, 1.0),
                    # MobileNet-0.25 rather than 1.0: the wider random trunk amplified
                    # rounding until oneDNN's summation order moved a b2 score by 1.5e-4
                    ("ssd_300_mobilenet0.25_voc", 128, 1.0),
                    # COCO's 80 classes: per-class heads concatenated and decoded, NMS over
                    # 80 classes' candidates (the VOC cases have 20)
                    ("ssd_300_mobilenet0.25_coco", 128, 1.0),
                    ("yolo3_mobilenet1.0_voc", 64, 1.0),
                    ("yolo3_darknet53_voc", 128, 1.0),
                    ("center_net_resnet18_v1b_voc", 128, 1.0),
                    ("center_net_mobilenetv3_small_duc_voc", 128, 1.0),
                    # DCNv2: the upsampling stages' modulated deformable convolutions,
                    # offsets and masks learned from the features they sample
                    ("center_net_resnet18_v1b_dcnv2_voc", 128, 1.0)]


def import_gluoncv():
    """GluonCV 0.10.5, or None with the reason printed (tools/setup.sh installs it)."""
    try:
        import gluoncv  # noqa: F401 (imported for its model zoo)
        from gluoncv import model_zoo
        return model_zoo
    except ImportError as e:
        print("  gluoncv is not importable (%s): detection zoo cases skipped" % e)
        return None


def head_targets(net, model, mrng):
    """The convolutions whose outputs become scores and box offsets, each with a per-channel
    (mean, std) to give its output; [] for detectors left as initialised (SSD-VGG, Faster R-CNN,
    whose cached fixtures predate this).  Class logits get std 0.7 to 1 around per-channel means
    of their own, so the scores spread over (0, 1) and the classes differ, without the large
    logits whose rounding (amplified by a deep random trunk) would move softmax scores by more
    than 1e-4; box offsets stay small (they go through exp)."""
    def spread(n, mean_sd, sd):
        return randn(mrng, (n,), mean_sd), np.full(n, sd, np.float32)

    heads = []
    if hasattr(net, "yolo_outputs"):
        for out in net.yolo_outputs:
            n_pred = 5 + out._classes  # per anchor: x, y, w, h, objectness, classes
            n = out.prediction.weight.shape[0]
            mean, sd = spread(n, 0.5, 1.0)
            kind = np.arange(n) % n_pred
            mean[kind < 4] = 0.0
            sd[kind < 2], sd[(kind >= 2) & (kind < 4)] = 1.0, 0.3
            heads.append((out.prediction, mean, sd))
    elif hasattr(net, "heads") and hasattr(net, "decoder"):  # CenterNet: heatmap, wh, offset
        hm, wh, reg = (h[len(h) - 1] for h in net.heads)
        mean, sd = spread(hm.weight.shape[0], 1.0, 1.5)
        heads.append((hm, mean - 2.0, sd))  # sigmoid: peaks from ~0.05 to ~0.95
        heads.append((wh, np.full(2, 4.0, np.float32), np.full(2, 1.5, np.float32)))
        heads.append((reg, np.full(2, 0.5, np.float32), np.full(2, 0.2, np.float32)))
    elif hasattr(net, "class_predictors") and "vgg" not in model:
        for cp, bp in zip(net.class_predictors, net.box_predictors):
            n = cp.predictor.weight.shape[0]
            heads.append((cp.predictor,) + spread(n, 0.5, 0.7))
            n = bp.predictor.weight.shape[0]
            heads.append((bp.predictor, np.zeros(n, np.float32), np.full(n, 0.5, np.float32)))
    return heads


def calibrate_batchnorm_inference(net, x, rng):
    """calibrate_batchnorm for networks whose training mode wants targets (YOLOv3): in one
    inference pass, each Gluon BatchNorm takes its running statistics from its input just
    before it runs (so later layers see the calibrated earlier ones), slightly perturbed."""
    def set_stats(block, inputs):
        v = inputs[0].asnumpy().astype(np.float64)
        axes = tuple(a for a in range(v.ndim) if a != 1)
        mean, var = v.mean(axis=axes), v.var(axis=axes)
        block.running_mean.set_data(mx.nd.array(mean + randn(rng, mean.shape, 0.1)
                                                * np.sqrt(var)))
        block.running_var.set_data(mx.nd.array(var * np.exp(randn(rng, var.shape, 0.1))))
    handles = [b.register_forward_pre_hook(set_stats) for b in gluon_blocks(net)
               if isinstance(b, nn.BatchNorm)]
    net(mx.nd.array(x))
    for h in handles:
        h.detach()


def calibrate_symbol_batchnorm(block, x, rng, backbone=False):
    """calibrate_batchnorm for the BatchNorms of a SymbolBlock that no Gluon block holds (SSD's
    feature expander adds its extra layers as symbols, their statistics named moving_*): in
    graph order, each one's running statistics become those of its input on x, slightly
    perturbed.  The backbone's (Gluon's running_*) keep their random statistics unless
    `backbone` (MobileNet collapses with them): matched ones make a deep random ResNet amplify
    float32 rounding past the tolerance."""
    _, out = block._cached_graph
    graph = json.loads(out.tojson())
    internals = out.get_internals()
    names = internals.list_outputs()
    params = block.collect_params()
    for node in graph["nodes"]:
        if node["op"] != "BatchNorm":
            continue
        src, idx = node["inputs"][0][0], node["inputs"][0][1]
        src_node = graph["nodes"][src]
        want = (src_node["name"] + "_output", src_node["name"] + "_output%d" % idx)
        if not backbone and \
                not graph["nodes"][node["inputs"][3][0]]["name"].endswith("moving_mean"):
            continue
        entry = internals[next(i for i, n in enumerate(names) if n in want)]
        args = {n: mx.nd.array(x) if n not in params else params[n].data()
                for n in entry.list_arguments()}
        aux = {n: params[n].data() for n in entry.list_auxiliary_states()}
        exe = entry.bind(mx.cpu(), args=args, aux_states=aux, grad_req="null")
        v = exe.forward(is_train=False)[0].asnumpy().astype(np.float64)
        axes = tuple(a for a in range(v.ndim) if a != 1)
        mean, var = v.mean(axis=axes), v.var(axis=axes)
        mean_p = params[graph["nodes"][node["inputs"][3][0]]["name"]]
        var_p = params[graph["nodes"][node["inputs"][4][0]]["name"]]
        mean_p.set_data(mx.nd.array(mean + randn(rng, mean.shape, 0.1) * np.sqrt(var)))
        var_p.set_data(mx.nd.array(var * np.exp(randn(rng, var.shape, 0.1))))


def calibrate_heads(net, heads, x):
    """Rescale each head convolution per output channel so that, on x, its outputs have the
    target mean and std.  Xavier weights after random BatchNorm leave these channels wherever
    the trunk puts them: saturated sigmoids (scores of exactly 1) or all alike (ties)."""
    stats = {}

    def hook(block, inputs, output):
        o = output.asnumpy().astype(np.float64)
        stats[block.name] = (o.mean(axis=(0, 2, 3)), o.std(axis=(0, 2, 3)))
    handles = [conv.register_forward_hook(hook) for conv, _, _ in heads]
    net(mx.nd.array(x))
    for h in handles:
        h.detach()
    for conv, tmean, tsd in heads:
        mean, sd = stats[conv.name]
        # channels nearly constant on these images (SSD's 1x1 maps) would get gains of 1e4
        # that blow up on other images: a floor at a tenth of the layer's typical spread
        gain = tsd / np.maximum(sd, np.median(sd))
        w = conv.weight.data().asnumpy()
        b = conv.bias.data().asnumpy()
        conv.weight.set_data(mx.nd.array(w * gain.reshape((-1,) + (1,) * (w.ndim - 1))))
        conv.bias.set_data(mx.nd.array((b - mean) * gain + tmean))


def node_input(case_dir, inputs, op_name):
    """For every node of op_name in the saved graph: its attributes and MXNet's value of its
    first input on the case's inputs."""
    sym_file = os.path.join(case_dir, SYMBOL_FILE)
    graph = json.load(open(sym_file))
    internals = mx.sym.load(sym_file).get_internals()
    names = internals.list_outputs()
    found = []
    for node in graph["nodes"]:
        if node["op"] != op_name:
            continue
        src, idx = node["inputs"][0][0], node["inputs"][0][1]
        src_name = graph["nodes"][src]["name"]
        want = [src_name + "_output", src_name + "_output%d" % idx]
        if graph["nodes"][src]["op"] == "null":
            want = [src_name]
        entry = internals[next(i for i, n in enumerate(names) if n in want)]
        found.append((node.get("attrs", {}), entry))
    if not found:
        return []
    group = mx.sym.Group([e for _, e in found])
    tmp = os.path.join(case_dir, "probe-symbol.json.tmp")
    group.save(tmp)
    try:
        values = run_symbol_files(tmp, os.path.join(case_dir, PARAMS_FILE), inputs)
    finally:
        os.remove(tmp)
    return [(attrs, v) for (attrs, _), v in zip(found, values)]


class NearTies(Exception):
    pass


def check_nms_stable(case, case_dir, inputs, rows, rng, rel=1e-5, trials=8):
    """Fail unless every box_nms of the graph gives the same first `rows` rows (those the graph
    outputs: GluonCV slices post_nms rows off NMS's topk) in the same order when its input's
    scores and coordinates are perturbed by up to `rel` relative, far above float32 rounding:
    otherwise candidates whose scores or overlaps differ only by rounding decide the order and
    no implementation can be compared with MXNet in its order.  Likewise every topk input must
    have no near-ties among its best k+1.  Prints the smallest gaps found."""
    for attrs, data in node_input(case_dir, inputs, "_contrib_box_nms"):
        base = mx.nd.contrib.box_nms(mx.nd.array(data), **attrs).asnumpy()[:, :rows]
        si = int(attrs.get("score_index", 2))
        cs = int(attrs.get("coord_start", 2))
        kept = [s[s != -1] for s in base[..., si].reshape(-1, rows)]
        gap = min(float(np.min(-np.diff(s))) for s in kept if len(s) > 1)
        print("  %s: box_nms smallest gap between the %d first kept scores %.3g"
              % (case.name, rows, gap))
        for _ in range(trials):
            p = data.copy()
            for c in [si] + list(range(cs, cs + 4)):
                p[..., c] *= 1 + rel * rng.uniform(-1, 1, p.shape[:-1]).astype(np.float32)
            got = mx.nd.contrib.box_nms(mx.nd.array(p), **attrs).asnumpy()[:, :rows]
            diff = float(np.max(np.abs(got - base)))
            if diff > 1e-4 * max(1.0, float(np.max(np.abs(base)))):
                raise NearTies("box_nms result changes (by %.3g) when its input moves by %g "
                               "relative" % (diff, rel))
    for attrs, data in node_input(case_dir, inputs, "topk"):
        k = int(attrs.get("k", 1))
        best = np.sort(data.reshape(data.shape[0], -1), axis=1)[:, ::-1][:, :k + 1]
        gap = float(np.min(-np.diff(best, axis=1) / np.maximum(np.abs(best[:, 1:]), 1e-30)))
        print("  %s: topk smallest relative gap in the best %d+1 %.3g" % (case.name, k, gap))
        if not gap > rel:
            raise NearTies("topk input has near-ties (relative gap %.3g)" % gap)
    check_peaks_stable(case, case_dir, inputs, rel)


def check_peaks_stable(case, case_dir, inputs, rel):
    """CenterNet keeps a heatmap value where it equals the max of its 3x3 window (a stride-1 max
    Pooling compared with its own input by broadcast_equal) and ranks those peaks by topk.  A
    peak whose neighbour is within rounding of it may move to that neighbour in another
    implementation: the same score at another place.  So every peak among the best topk k+1
    must stand above its neighbours by more than `rel` relative."""
    graph = json.load(open(os.path.join(case_dir, SYMBOL_FILE)))
    nodes = graph["nodes"]
    peak_pools = set()
    for node in nodes:
        if node["op"] == "broadcast_equal":
            a, b = (e[0] for e in node["inputs"])
            for pool, src in ((a, b), (b, a)):
                attrs = nodes[pool].get("attrs", {})
                if nodes[pool]["op"] == "Pooling" and nodes[pool]["inputs"][0][0] == src \
                        and attrs.get("stride") == "(1, 1)" and attrs.get("pool_type") == "max":
                    peak_pools.add(nodes[pool]["name"])
    if not peak_pools:
        return
    k = max(int(n.get("attrs", {}).get("k", 1)) for n in nodes if n["op"] == "topk")
    for attrs, heat in node_input(case_dir, inputs, "Pooling"):
        if attrs.get("stride") != "(1, 1)" or attrs.get("pool_type") != "max":
            continue
        n, c, h, w = heat.shape
        padded = np.pad(heat, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
        windows = np.stack([padded[:, :, dy:dy + h, dx:dx + w] for dy in range(3)
                            for dx in range(3) if (dy, dx) != (1, 1)])
        neighbour = windows.max(axis=0)
        is_peak = heat >= neighbour
        worst = np.inf
        for i in range(n):
            vals = np.where(is_peak[i], heat[i], -np.inf).ravel()
            best = np.argsort(-vals, kind="stable")[:k + 1]
            gaps = (vals[best] - neighbour[i].ravel()[best]) / np.maximum(np.abs(vals[best]),
                                                                          1e-30)
            worst = min(worst, float(gaps.min()))
        print("  %s: peaks stand above their neighbours by %.3g relative at least"
              % (case.name, worst))
        if not worst > rel:
            raise NearTies("a peak has a neighbour within %.3g relative" % worst)


def detection_builder(model, size, scale, batch, setup=None, adjust=None):
    def build(case, case_dir, rng):
        model_zoo = import_gluoncv()
        if model_zoo is None:
            return None
        # The weights depend only on the model name, so b1 and b2 are the same network.
        mrng = np.random.RandomState(seed_of("zoo_" + model))
        net = model_zoo.get_model(model, pretrained=False, pretrained_base=False)
        if setup:
            setup(net)
        # MXNet's Xavier for the weights (seeded by the model alone): it keeps these deep heads
        # out of saturation, where randomize_gluon's fan-in scaling gives scores of exactly 1
        # and boxes of 1e27.  Biases and BatchNorm parameters and statistics are then made
        # random and non-trivial (with the defaults, YOLOv3 scores every box 0.25).  Anchors
        # (SSD) and grid offsets (YOLOv3) are constants the model made: left alone.  Vectors
        # GluonCV gives no initialiser of their own (the BatchNorms of SSD's feature expanders)
        # start at one/zero: Xavier refuses them, and they are made random below anyway.
        mx.random.seed(seed_of("zoo_" + model))
        net.initialize(mx.init.Xavier())
        for name, p in net.collect_params().items():
            if p.init is None and name.endswith(("gamma", "moving_var")):
                p.initialize(mx.init.One(), force_reinit=True)
            elif p.init is None and name.endswith(("beta", "moving_mean")):
                p.initialize(mx.init.Zero(), force_reinit=True)
        x = smooth_images(rng, (batch, 3, size, size)) * np.float32(scale)
        net(mx.nd.array(x[:1]))  # resolves deferred shapes
        for name, p in sorted(net.collect_params().items()):
            if name.endswith("running_var"):
                p.set_data(mx.nd.array(uniform(mrng, p.shape, 0.5, 1.5)))
            elif name.endswith("running_mean") or name.endswith("beta"):
                p.set_data(mx.nd.array(randn(mrng, p.shape, 0.1)))
            elif name.endswith("gamma"):
                p.set_data(mx.nd.array(uniform(mrng, p.shape, 0.5, 1.5)))
            elif name.endswith("bias"):
                p.set_data(mx.nd.array(randn(mrng, p.shape, 0.5)))
        if adjust:
            adjust(net)
        heads = head_targets(net, model, mrng)
        calib = smooth_images(mrng, (8, 3, size, size)) * np.float32(scale)
        if heads and isinstance(getattr(net, "features", None), gluon.SymbolBlock):
            # Random running statistics leave the deep feature maps of SSD's ResNet and
            # MobileNet input-independent (their 1x1 maps' head outputs vary by 1e-8): use each
            # layer's real statistics on eight images instead.
            calibrate_symbol_batchnorm(net.features, calib, mrng, backbone="mobilenet" in model)
        elif heads and "mobilenet" in model:
            # MobileNet collapses with random statistics (YOLOv3's scores came out the same to
            # 1e-7 on every image), as in the classification zoo
            calibrate_batchnorm_inference(net, calib, mrng)
        if heads:
            calibrate_heads(net, heads, smooth_images(mrng, (2, 3, size, size)) * np.float32(scale))
        # Even well spread, some images give two candidates whose order turns on rounding
        # (YOLOv3's 100 kept scores of 20000 lie within 0.3 of each other): then the next
        # image of the case's sequence is taken, deterministically.
        for attempt in range(8):
            if attempt:
                x = smooth_images(rng, (batch, 3, size, size)) * np.float32(scale)
            outs = write_gluon_case(case, case_dir, net, [x])
            ids, scores = outs[0], outs[1]
            kept = int((ids >= 0).sum())
            classes = len(np.unique(ids[ids >= 0]))
            print("  %s: %d detections kept, %d classes, scores %.3g..%.3g"
                  % (case.name, kept, classes, scores[ids >= 0].min() if kept else 0,
                     scores.max()))
            if kept == 0 or classes < 2:
                raise RuntimeError("%s: degenerate detections (%d kept, %d classes)"
                                   % (case.name, kept, classes))
            if not heads:
                return outs
            try:
                check_nms_stable(case, case_dir, OrderedDict(data=x), ids.shape[1], rng)
                return outs
            except NearTies as err:
                print("  %s: image %d: %s; next image" % (case.name, attempt, err))
        raise RuntimeError("%s: near-ties on every image tried" % case.name)
    return build


# Two-stage detectors: (model, what to change before the export, what that is, input size, image
# scale).  Faster R-CNN runs its ResNet's last stage once per proposal: 16 proposals (of the
# 400 best anchors) instead of 300 (of 6000) keep the case at seconds; everything else (RPN,
# ROIAlign, per-class decoding and NMS) is as exported by default.  get_model fixes these
# numbers itself, so they are set on the built network.  Batch 1 only: GluonCV's Faster R-CNN
# takes one image at inference (its graph numbers the ROIs of image 0 alone, and MXNet refuses
# a batch of 2 with "Incompatible input shape" at its concat).
def fewer_proposals(net):
    net._rpn_test_post_nms = 16
    net.rpn._test_pre_nms = 400
    net.rpn._test_post_nms = 16


# Random weights make a small picture's proposals degenerate: of the 5 anchor sizes (32 to 512
# pixels, each in 3 aspect ratios, size fastest), the larger ones clipped to a 128x128 picture
# become full-width strips of no height, which NMS cannot suppress (no area, no overlap), and the
# RPN proposes only those; every ROI then pools the same features and the detector scores them
# all alike (8 ties of one class).  So the RPN's objectness biases of anchors over 64 pixels are
# lowered by 4 (proposals come from anchors that fit), and the class predictor's weights are
# scaled up (x5) and its biases down (x0.1) so that the class follows the ROI's features.
def rpn_on_small_anchors(net):
    score = net.rpn.score.bias
    b = score.data().asnumpy()
    b[np.arange(b.size) % 5 >= 2] -= 4.0
    score.set_data(mx.nd.array(b))
    cls = net.class_predictor
    cls.weight.set_data(cls.weight.data() * 5.0)
    cls.bias.set_data(cls.bias.data() * 0.1)


# Mask R-CNN also keeps its best detections (rcnn_max_dets, 1000 by default: capped at
# construction by the RPN's numbers, so it too is set again here) and runs its ResNet's last
# stage and mask head once more on those: 8 of them keep the second pass small.
def fewer_proposals_and_masks(net):
    fewer_proposals(net)
    net._rcnn_max_dets = 8


# Not here: the FPN variants (faster_rcnn_fpn_*, mask_rcnn_fpn_*).  Their pooling runs ROIAlign
# once per pyramid level with the ROIs of other levels given batch index -1, and adds the
# results; MXNet 1.9.1's CPU ROIAlign, for such a ROI, zeroes one float (top_data[n]) instead of
# the ROI's C x PH x PW block and leaves the rest as the allocator had it.  Its FPN outputs thus
# depend on stale memory (features of 1e15 here, different from run to run), so there is no
# reference to compare with.  Our ROIAlign writes zeros there, as GluonCV means.
TWO_STAGE_MODELS = [
    ("faster_rcnn_resnet50_v1b_voc", fewer_proposals, "rpn: 400 pre-NMS, 16 proposals", 128,
     1.0, None),
    ("mask_rcnn_resnet18_v1b_coco", fewer_proposals_and_masks,
     "rpn: 400 pre-NMS, 16 proposals, 8 masks", 128, 1.0, rpn_on_small_anchors),
    ("mask_rcnn_resnet50_v1b_coco", fewer_proposals_and_masks,
     "rpn: 400 pre-NMS, 16 proposals, 8 masks", 128, 1.0, rpn_on_small_anchors),
    ("faster_rcnn_resnet101_v1d_voc", fewer_proposals, "rpn: 400 pre-NMS, 16 proposals", 128,
     1.0, None),
]


def register_detection_zoo():
    for model, setup, what, size, scale, adjust in TWO_STAGE_MODELS:
        for batch in (1,):
            register("zoo_%s_b%d" % (model, batch), "zoo", "zoo",
                     detection_builder(model, size, scale, batch, setup, adjust),
                     note="gluoncv %s (%s) at %dx%d, pretrained=False, seeded random weights, "
                          "smooth random images, batch %d (GluonCV's R-CNNs take one image at "
                          "inference: MXNet refuses batch 2); outputs ids, scores, boxes%s "
                          "(NMS order as MXNet's)"
                          % (model, what, size, size, batch,
                             ", masks" if model.startswith("mask_") else ""))
    for model, size, scale in DETECTION_MODELS:
        for batch in (1, 2):
            register("zoo_%s_b%d" % (model, batch), "zoo", "zoo",
                     detection_builder(model, size, scale, batch),
                     note="gluoncv %s at %dx%d, pretrained=False, seeded random weights, "
                          "smooth random images, batch %d; outputs ids, scores, boxes "
                          "(NMS order as MXNet's)" % (model, size, size, batch))


# GluonCV segmentation and pose models (issue 12): (model, constructor arguments, input height,
# width, image scale).  Sizes are kept small so that each case runs in seconds: the segmentation
# heads are built for that crop (PSPNet's and DeepLab's pooling branches upsample to crop / 8),
# and their output is the class-score map upsampled to the crop.  SimplePose outputs heatmaps
# at a quarter of the input; the keypoint step GluonCV does in Python is not part of the graph.
DENSE_MODELS = [
    ("fcn_resnet50_voc", dict(aux=False, crop_size=64, base_size=64), 64, 64, 1.0),
    ("psp_resnet50_ade", dict(aux=False, crop_size=64, base_size=64), 64, 64, 1.0),
    ("deeplab_resnet50_ade", dict(aux=False, crop_size=64, base_size=64), 64, 64, 1.0),
    ("fcn_resnet101_voc", dict(aux=False, crop_size=64, base_size=64), 64, 64, 1.0),
    ("deeplab_resnest50_ade", dict(aux=False, crop_size=64, base_size=64), 64, 64, 1.0),
    # DANet (census: loads, no case): position and channel attention, batch_dot over the map
    ("danet_resnet50_citys", dict(aux=False, crop_size=64, base_size=64), 64, 64, 1.0),
    ("simple_pose_resnet18_v1b", {}, 128, 96, 1.0),
    ("simple_pose_resnet50_v1b", {}, 128, 96, 1.0),
    ("mobile_pose_mobilenetv2_1.0", {}, 128, 96, 1.0),
    # monodepth2: a ResNet-18 encoder and a decoder of reflection-padded convolutions and
    # nearest UpSampling with skip connections, a sigmoid disparity map at four scales
    ("monodepth2_resnet18_kitti_stereo_640x192", {}, 96, 320, 1.0),
    # AlphaPose: a ResNet-101 trunk, then DUC upsampling (convolution and pixel shuffle
    # through reshape and transpose) to keypoint heatmaps
    ("alpha_pose_resnet101_v1b_coco", {}, 128, 96, 1.0),
]


def randomize_gluoncv(net, model, mrng):
    """MXNet's Xavier for the weights (seeded by the model alone), then random non-trivial
    biases and BatchNorm parameters and statistics, as for the detectors."""
    mx.random.seed(seed_of("zoo_" + model))
    net.initialize(mx.init.Xavier())


def randomize_gluoncv_after(net, mrng):
    for name, p in sorted(net.collect_params().items()):
        if name.endswith("weight") and len(p.shape) == 4 and \
                float(p.data().asnumpy().std()) < 0.01:
            # Layers GluonCV initialises near zero whatever the global initialiser (SimplePose's
            # deconvolutions and heatmap head, Normal(0.001)): the output would be the BatchNorm
            # shift alone, the same for every input.  Fan-in scaled values instead.
            fan_in = float(np.prod(p.shape[1:]))
            p.set_data(mx.nd.array(randn(mrng, p.shape, 1.0 / np.sqrt(fan_in))))
        elif name.endswith("running_var"):
            p.set_data(mx.nd.array(uniform(mrng, p.shape, 0.5, 1.5)))
        elif name.endswith("running_mean") or name.endswith("beta"):
            p.set_data(mx.nd.array(randn(mrng, p.shape, 0.1)))
        elif name.endswith("gamma"):
            p.set_data(mx.nd.array(uniform(mrng, p.shape, 0.5, 1.5)))
        elif name.endswith("bias"):
            p.set_data(mx.nd.array(randn(mrng, p.shape, 0.5)))


def dense_builder(model, kwargs, height, width, scale, batch):
    def build(case, case_dir, rng):
        model_zoo = import_gluoncv()
        if model_zoo is None:
            return None
        # The weights depend only on the model name, so b1 and b2 are the same network.
        mrng = np.random.RandomState(seed_of("zoo_" + model))
        net = model_zoo.get_model(model, pretrained=False, pretrained_base=False, **kwargs)
        randomize_gluoncv(net, model, mrng)
        x = smooth_images(rng, (batch, 3, height, width)) * np.float32(scale)
        net(mx.nd.array(x[:1]))  # resolves deferred shapes
        randomize_gluoncv_after(net, mrng)
        outs = write_gluon_case(case, case_dir, net, [x])
        out = outs[0]
        # a single-channel map (monodepth2's disparity) has nothing to spread over channels
        spread = float(out.std(axis=1).mean()) if out.shape[1] > 1 else np.inf
        spatial = float(out.std(axis=(2, 3)).mean())
        print("  %s: output %s, std over channels %.3g, over positions %.3g"
              % (case.name, out.shape, spread, spatial))
        if not (spread > 1e-3 and spatial > 1e-3 * max(1.0, float(np.abs(out).max()))):
            raise RuntimeError("%s: degenerate output (std over channels %g, over positions %g)"
                               % (case.name, spread, spatial))
        return outs
    return build


def register_dense_zoo():
    for model, kwargs, height, width, scale in DENSE_MODELS:
        for batch in (1, 2):
            register("zoo_%s_b%d" % (model, batch), "zoo", "zoo",
                     dense_builder(model, kwargs, height, width, scale, batch),
                     note="gluoncv %s at %dx%d, pretrained=False, seeded random weights, "
                          "smooth random images, batch %d" % (model, height, width, batch))


# GluonCV classifiers beyond the Gluon zoo (issue 12): (model, input size).  ResNet v1b (stride
# on the 3x3), v1c (deep 3-conv stem), v1d (deep stem, average-pool downsampling with
# ceil_mode and count_include_pad=False), MobileNetV3 (hard-swish and hard-sigmoid SE as
# _plus_scalar/clip/_div_scalar), ResNeXt (grouped 3x3) and SE-ResNeXt (sigmoid SE after
# AdaptiveAvgPooling2D).  Global pooling lets them run below 224 (a few seconds per case): 112
# makes v1d's last stage pool a 7x7 map to 4x4, so its ceil-mode windows hang over the edge and
# are averaged over their part inside the map; MobileNetV3 at 160 ends in 5x5.  None of their
# constructors takes pretrained_base (ResNetV1b swallows unknown arguments, the others refuse
# them), so only pretrained=False is passed.  resnet101_v1d passed too, but is left out: our
# rounding came to half the tolerance under oneDNN (depth compounds it), too thin a margin.
GLUONCV_CLASSIFIERS = [
    ("resnet18_v1b", 128), ("resnet34_v1b", 128), ("resnet50_v1b", 128), ("resnet50_v1c", 128),
    ("resnet50_v1d", 112),
    ("mobilenetv3_large", 160), ("mobilenetv3_small", 160),
    ("resnext50_32x4d", 128), ("se_resnext50_32x4d", 128),
    # Families the zoo census (tools/zoo_census.py, docs/ZOO.md) found loading with no case
    # of their own: CIFAR's ResNets (32x32 inputs, a 3x3 stem, 8x8 global pooling) and DLA
    # (iterative deep aggregation: trees of concatenated stages)
    ("cifar_resnet20_v1", 32), ("dla34", 128),
    # HRNet: parallel streams at four resolutions, exchanged through strided convolutions
    # and nearest UpSampling at every stage
    ("hrnet_w18_small_v1_c", 128),
    # Xception: separable convolutions (depthwise then pointwise) in residual flows, with
    # explicit fixed padding (Pad) before the strided ones
    ("xception", 160),
]

# Action recognisers over clips (batch, 3, frames, height, width): (model, frames, size).
# R(2+1)D factors each 3-D convolution into a spatial (1x3x3) and a temporal (3x1x1) one and
# ends in global 3-D average pooling, so a short, small clip runs the whole graph in seconds.
VIDEO_CLASSIFIERS = [("r2plus1d_resnet18_kinetics400", 8, 64)]


def gluoncv_classifier_builder(model, size, batch):
    def build(case, case_dir, rng):
        model_zoo = import_gluoncv()
        if model_zoo is None:
            return None
        net = model_zoo.get_model(model, pretrained=False)
        return write_classifier_case(case, case_dir, rng, model, net, size, batch)
    return build


def moving_clips(rng, shape):
    """Clips of smooth images drifting one pixel per frame, so that the temporal convolutions
    see motion rather than a still (which would make them a scaled spatial convolution)."""
    n, c, t, h, w = shape
    first = smooth_images(rng, (n, c, h, w + t))
    return np.stack([first[:, :, :, k:k + w] for k in range(t)], axis=2).astype(np.float32)


def video_classifier_builder(model, frames, size, batch):
    def build(case, case_dir, rng):
        model_zoo = import_gluoncv()
        if model_zoo is None:
            return None
        net = model_zoo.get_model(model, pretrained=False, pretrained_base=False)
        mrng = np.random.RandomState(seed_of("zoo_" + model))
        net.initialize(mx.init.Xavier())
        x = moving_clips(rng, (batch, 3, frames, size, size))
        net(mx.nd.array(x[:1]))  # resolves deferred shapes
        randomize_gluon(net, mrng, xavier=True)
        calibrate_batchnorm(net, moving_clips(mrng, (2, 3, frames, size, size)), mrng)
        outs = write_gluon_case(case, case_dir, net, [x])
        check_classifier_output(case, outs[0], batch)
        return outs
    return build


def register_classification_zoo():
    for model, size in GLUONCV_CLASSIFIERS:
        for batch in (1, 2):
            register("zoo_%s_b%d" % (model, batch), "zoo", "zoo",
                     gluoncv_classifier_builder(model, size, batch),
                     note="gluoncv %s at %dx%d, pretrained=False, Xavier, BN stats calibrated "
                          "then perturbed, smooth random images, batch %d" % (model, size, size,
                                                                              batch))
    for model, frames, size in VIDEO_CLASSIFIERS:
        for batch in (1, 2):
            register("zoo_%s_b%d" % (model, batch), "zoo", "zoo",
                     video_classifier_builder(model, frames, size, batch),
                     note="gluoncv %s on %d-frame %dx%d clips (5-D input), pretrained=False, "
                          "Xavier, BN stats calibrated then perturbed, smooth random images "
                          "drifting a pixel a frame, batch %d" % (model, frames, size, size,
                                                                  batch))

# ---------------------------------------------------------------------------------------------
# --check-export: validate a model written by hybridinfer's own exporter
# ---------------------------------------------------------------------------------------------

def find_model_files(path):
    """Accept a directory (one *-symbol.json, the highest-epoch *-NNNN.params) or a prefix."""
    if os.path.isdir(path):
        syms = sorted(f for f in os.listdir(path) if f.endswith("-symbol.json"))
        if len(syms) != 1:
            raise RuntimeError("expected one *-symbol.json in %s, found %s" % (path, syms))
        prefix = os.path.join(path, syms[0][:-len("-symbol.json")])
    else:
        prefix = path
    d, base = os.path.split(prefix)
    params = sorted(f for f in os.listdir(d or ".")
                    if f.startswith(base + "-") and f.endswith(".params")
                    and f[len(base) + 1:-len(".params")].isdigit())
    if not params:
        raise RuntimeError("no %s-NNNN.params next to %s-symbol.json" % (prefix, prefix))
    return prefix + "-symbol.json", os.path.join(d, params[-1])


def check_export(args):
    try:
        sym_file, par_file = find_model_files(args.check_export)
        sym = mx.sym.load(sym_file)
        pargs, pauxs = split_params(mx.nd.load(par_file))

        def resolve(p):
            return p if os.path.exists(p) or os.path.isabs(p) else \
                os.path.join(args.check_export, p)
        arrays = [np.load(resolve(p)).astype(np.float32) for p in args.input]
        expects = [np.load(resolve(p)).astype(np.float32) for p in args.expect]
        if args.input_name:
            names = args.input_name
        else:
            free = [n for n in sym.list_arguments() if n not in pargs and not n.endswith("_label")]
            names = sorted(free) if all(n.startswith("data") for n in free) else free
        if len(names) != len(arrays):
            raise RuntimeError("graph inputs %s but %d --input given" % (names, len(arrays)))
        outs = run_symbol_files(sym_file, par_file, OrderedDict(zip(names, arrays)))
        if not [n for n in sym.list_arguments() if n not in pargs and n not in names]:
            # Also the way users load an export: Gluon's SymbolBlock.imports must accept the files
            # (it is stricter about "arg:"/"aux:" keys and missing parameters) and agree.
            block = gluon.SymbolBlock.imports(sym_file, names, par_file)
            res = block(*[mx.nd.array(a) for a in arrays])
            res = res if isinstance(res, (list, tuple)) else [res]
            check_close("SymbolBlock.imports", [r.asnumpy().astype(np.float32) for r in res], outs)
        if len(outs) < len(expects):
            raise RuntimeError("graph has %d outputs, %d expected" % (len(outs), len(expects)))
        worst = 0.0
        for i, (o, e) in enumerate(zip(outs, expects)):
            if o.shape != e.shape:
                print("FAIL output%d shape %s, expected %s" % (i, o.shape, e.shape))
                return 1
            tol = 1e-4 * max(1.0, float(np.max(np.abs(e))) if e.size else 1.0)
            diff = float(np.max(np.abs(o - e))) if e.size else 0.0
            if not diff <= tol:
                print("FAIL output%d max|diff| %.3g > tol %.3g (%s)" % (i, diff, tol, sym_file))
                return 1
            worst = max(worst, diff / tol)
        print("OK %s: %d output(s) match MXNet %s (worst diff %.3g of tol)"
              % (sym_file, len(expects), mx.__version__, worst))
        return 0
    except Exception as err:  # one line, whatever went wrong
        print("FAIL %s" % str(err).strip().splitlines()[0] if str(err).strip() else
              "FAIL %s" % type(err).__name__)
        return 1


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

def selected(args):
    sets = {"small": {"small"}, "zoo": {"zoo"}, "all": {"small", "zoo"}}[args.set]
    return [c for c in CASES if c.set in sets and (not args.only or args.only in c.name)]


def generate(case, out, force):
    case_dir = os.path.join(out, case.name)
    # zoo cases are big and slow: reuse a complete cached one. small cases are always rewritten
    # (cheap, deterministic) so that editing this script updates the checked-in fixtures.
    if case.set == "zoo" and not force and case_complete(case_dir):
        return "cached"
    seed = seed_of(case.name)
    rng = np.random.RandomState(seed)
    np.random.seed(seed)
    mx.random.seed(seed)
    case_dir = fresh_case_dir(out, case.name)
    # A fresh NameManager makes auto-generated node and block names (convolution0, net0_...)
    # independent of which cases ran before in this process.
    try:
        with mx.name.NameManager():
            outs = case.build(case, case_dir, rng)
    except Exception:
        # Builders check their outputs after writing them (a degenerate zoo output): a case that
        # failed must not be left complete, or the next run would reuse it as "cached".
        shutil.rmtree(case_dir, ignore_errors=True)
        raise
    if outs is None:  # a builder whose library is missing (gluoncv) said why
        shutil.rmtree(case_dir)
        return "skipped"
    return "max|out| " + ", ".join("%.4g" % float(np.max(np.abs(o))) if o.size else "-"
                                   for o in outs)


def prune_zoo(out, known):
    """The zoo tests run every case in the cache: one this script no longer makes (a model
    dropped or renamed, a case left by another checkout) would be tested against a reference
    nothing vouches for any more."""
    for name in sorted(os.listdir(out)):
        if name.startswith("zoo_") and name not in known \
                and os.path.isdir(os.path.join(out, name)):
            print("%-48s          removed: no longer a zoo case" % name)
            shutil.rmtree(os.path.join(out, name))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output directory (one sub-directory per case)")
    ap.add_argument("--set", choices=["small", "zoo", "all"], default="small")
    ap.add_argument("--only", help="only cases whose name contains this substring")
    ap.add_argument("--force", action="store_true", help="regenerate cached zoo cases")
    ap.add_argument("--prune", action="store_true",
                    help="(--set zoo) delete cached zoo cases this script no longer makes")
    ap.add_argument("--list", action="store_true", help="print the selected case names")
    ap.add_argument("--onednn", action="store_true",
                    help="compute with the wheel's oneDNN kernels instead of MXNet's own")
    ap.add_argument("--check-export", metavar="DIR_OR_PREFIX",
                    help="check a model written by another writer against expected outputs")
    ap.add_argument("--input", action="append", default=[], help="(--check-export) input .npy")
    ap.add_argument("--expect", action="append", default=[],
                    help="(--check-export) expected output .npy, one per head")
    ap.add_argument("--input-name", action="append", default=[],
                    help="(--check-export) graph input names, in --input order")
    args = ap.parse_args(argv)

    if args.check_export:
        if not args.expect:  # --input may be absent: a graph can be all constants (_arange)
            ap.error("--check-export needs --expect")
        return check_export(args)

    register_seeds()
    register_ops()
    register_legacy()
    register_models()
    register_zoo()
    register_detection_zoo()
    register_dense_zoo()
    register_classification_zoo()
    cases = selected(args)
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    if not args.out:
        ap.error("--out is required")
    if not cases:
        ap.error("no case matches")
    os.makedirs(args.out, exist_ok=True)
    if args.prune and args.set == "zoo" and not args.only:
        prune_zoo(args.out, {c.name for c in cases})
    t_all = time.time()
    failed = []
    for case in cases:
        t0 = time.time()
        try:
            status = generate(case, args.out, args.force)
        except Exception as err:  # report and go on: one broken case must not hide the others
            failed.append(case.name)
            status = "FAILED: %s" % str(err).strip().splitlines()[0]
        print("%-48s %6.2fs  %s" % (case.name, time.time() - t0, status), flush=True)
    print("%d cases, %d failed, %.1fs" % (len(cases), len(failed), time.time() - t_all))
    if failed:
        print("failed: " + " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
