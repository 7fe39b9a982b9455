#!/usr/bin/env python3
"""The CLI's error contract on malformed input.

    test_malformed.py TOOL FIXTURES_DIR

Takes a real MXNet export from FIXTURES_DIR (the `seed_net` case: a Gluon
LeNet), breaks it one way at a time in a temporary folder and checks that
`TOOL run` (or `inspect`, `export`) fails the way the CLI promises: exit status 1,
exactly one stderr line starting "hybridinfer: error: ", and a message that
names what is wrong (the file, node, op, attribute or parameter).  A crash
(a signal, an exit status of 128 or more), a hang or a second stderr line
(an assertion, a sanitizer report) fails the check.

Every variant is made here with bytes and struct, independently of the
engine's own readers and writers, so the two cannot share a mistake.  Plain
Python 3, no numpy.  Prints TAP.
"""

import ast
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

CASE = "seed_net"            # conv/pool/dense/dot LeNet, input data (4, 1, 28, 28)
ERROR_PREFIX = "hybridinfer: error: "
TIMEOUT_S = 60
FIFO_TIMEOUT_S = 10
# More than any check needs (LeNet, under ASan too): a reader that does not bound what it
# reads (/dev/zero) is stopped here and reported, not left to take the machine's memory.
RSS_LIMIT_KIB = 1536 * 1024

# ---------------------------------------------------------------------------------------------
# MXNet's NDArray-list format (see shared MXNET-FORMAT.md §2), read just enough to cut it apart.
# ---------------------------------------------------------------------------------------------

LIST_MAGIC = 0x112
V2_MAGIC = 0xF993FAC9
DTYPE_SIZE = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8}


class Array:
    """One dense V2 record: its raw bytes and where its parts lie in them."""

    def __init__(self, raw, shape, dtype, data_off):
        self.raw, self.shape, self.dtype, self.data_off = raw, shape, dtype, data_off

    @property
    def data(self):
        return self.raw[self.data_off:]


def encode_v2(shape, dtype, data):
    rec = struct.pack("<Iii", V2_MAGIC, 0, len(shape))
    rec += struct.pack("<%dq" % len(shape), *shape)
    count = 1
    for d in shape:
        count *= d
    if count:
        rec += struct.pack("<iii", 1, 0, dtype) + data
    return rec


def parse_params(blob):
    """-> (arrays, names, offsets) for a V2 list; offsets name where the sections start."""
    magic, _reserved, count = struct.unpack_from("<QQQ", blob, 0)
    if magic != LIST_MAGIC:
        raise ValueError("fixture params file has magic %#x" % magic)
    pos, arrays, offsets = 24, [], {"arrays": 24}
    for _ in range(count):
        start = pos
        rec_magic, _stype, ndim = struct.unpack_from("<Iii", blob, pos)
        if rec_magic != V2_MAGIC:
            raise ValueError("fixture params record is not V2 (%#x)" % rec_magic)
        pos += 12
        shape = struct.unpack_from("<%dq" % ndim, blob, pos)
        pos += 8 * ndim
        n = 1
        for d in shape:
            n *= d
        dtype = 0
        if n:
            _dev, _id, dtype = struct.unpack_from("<iii", blob, pos)
            pos += 12
        data_off = pos - start
        pos += n * DTYPE_SIZE[dtype]
        arrays.append(Array(blob[start:pos], tuple(shape), dtype, data_off))
    offsets["names"] = pos
    (n_names,) = struct.unpack_from("<Q", blob, pos)
    pos += 8
    names = []
    for _ in range(n_names):
        (length,) = struct.unpack_from("<Q", blob, pos)
        names.append(blob[pos + 8:pos + 8 + length].decode())
        pos += 8 + length
    offsets["end"] = pos
    return arrays, names, offsets


def encode_params(arrays, names):
    out = struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))
    out += b"".join(a.raw for a in arrays)
    out += struct.pack("<Q", len(names))
    for n in names:
        b = n.encode()
        out += struct.pack("<Q", len(b)) + b
    return out


# ---------------------------------------------------------------------------------------------
# .npy, version 1.0, written by hand
# ---------------------------------------------------------------------------------------------

def read_npy_f32(path):
    """-> (shape, list of floats) of a little-endian float32 C-order .npy."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:6] != b"\x93NUMPY":
        raise ValueError("%s is not .npy" % path)
    major = blob[6]
    if major == 1:
        (hlen,) = struct.unpack_from("<H", blob, 8)
        start = 10
    else:
        (hlen,) = struct.unpack_from("<I", blob, 8)
        start = 12
    header = blob[start:start + hlen].decode("latin1")
    meta = ast.literal_eval(header)
    if meta["descr"] != "<f4" or meta["fortran_order"]:
        raise ValueError("%s: fixture input is not float32 C order" % path)
    shape = tuple(meta["shape"])
    data = blob[start + hlen:]
    return shape, list(struct.unpack("<%df" % (len(data) // 4), data))


def npy_bytes(descr, shape, payload):
    shape_txt = "(%s)" % ("".join("%d, " % d for d in shape)[:-2] + ("," if len(shape) == 1 else ""))
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + payload


def npy_f32(shape, values):
    return npy_bytes("<f4", shape, struct.pack("<%df" % len(values), *values))


# ---------------------------------------------------------------------------------------------
# Variant builders: each writes files into `d` and returns a Check.
# ---------------------------------------------------------------------------------------------

class Check:
    """argv for the tool, the exit status wanted, and what the message must name.

    `names` entries are strings or tuples of alternatives, matched case-insensitively against
    the error line (or stdout, for a check with status 0)."""

    def __init__(self, title, argv, names, status=1, timeout=TIMEOUT_S, fsize=None,
                 setup=None, after=None):
        self.title, self.argv, self.names, self.status = title, argv, names, status
        # timeout: a FIFO blocks a reader that does not refuse it, so wait less.
        # fsize: RLIMIT_FSIZE in bytes, a disk that fills up after that many bytes.
        # setup() runs first; after() -> a problem string or None judges the files left.
        self.timeout, self.fsize, self.setup, self.after = timeout, fsize, setup, after


class Fixture:
    def __init__(self, case_dir, work):
        self.case_dir, self.work = case_dir, work
        self.symbol = os.path.join(case_dir, "model-symbol.json")
        self.params = os.path.join(case_dir, "model-0000.params")
        with open(os.path.join(case_dir, "case.json")) as f:
            meta = json.load(f)
        self.input_name = meta["inputs"][0]["name"]
        self.input = os.path.join(case_dir, meta["inputs"][0]["file"])
        with open(self.symbol) as f:
            self.graph = json.load(f)
        with open(self.params, "rb") as f:
            self.params_blob = f.read()
        self.out = os.path.join(work, "out")

    def path(self, name):
        return os.path.join(self.work, name)

    def node(self, name):
        for i, n in enumerate(self.graph["nodes"]):
            if n["name"] == name:
                return i, n
        raise KeyError("fixture %s has no node %s" % (CASE, name))

    def graph_copy(self):
        return json.loads(json.dumps(self.graph))

    def write(self, name, data):
        path = self.path(name)
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(path, mode) as f:
            f.write(data)
        return path

    def write_graph(self, name, graph):
        return self.write(name, json.dumps(graph, indent=1))

    def run(self, symbol=None, params=None, inputs=None, extra=()):
        argv = ["run", "--model", symbol or self.symbol,
                "--params", params or self.params, "--output-dir", self.out]
        for spec in (["%s=%s" % (self.input_name, self.input)] if inputs is None else inputs):
            argv += ["--input", spec]
        return argv + list(extra)


def pb_varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out


def pb_field(number, payload):
    """A length-delimited protobuf field (wire type 2)."""
    return pb_varint(number << 3 | 2) + pb_varint(len(payload)) + payload


def onnx_model_bytes():
    """The head of an ONNX ModelProto as exporters write it (onnx.proto: ir_version = 1,
    producer_name = 2, graph = 7, opset_import = 8), built field by field."""
    opset = pb_field(1, b"") + pb_varint(2 << 3) + pb_varint(13)
    graph = pb_field(2, b"g")
    return (pb_varint(1 << 3) + pb_varint(8) + pb_field(2, b"pytorch")
            + pb_field(7, graph) + pb_field(8, opset))


def symbol_checks(fx):
    checks = []
    missing = fx.path("absent-symbol.json")
    checks.append(Check("symbol file does not exist",
                        fx.run(symbol=missing), ["absent-symbol.json"]))

    p = fx.write("notjson-symbol.json", '{"nodes": [ {"op": "null", "name": "data", ]')
    checks.append(Check("symbol file is not JSON", fx.run(symbol=p),
                        ["notjson-symbol.json", "json"]))

    # Other formats given as the model: named for what they are, with what to pass instead.
    checks.append(Check("--model is the params file", fx.run(symbol=fx.params),
                        ["model-0000.params", "params file", "symbol.json"]))
    # An ONNX model is read as one (whatever its name), so a broken one is named as ONNX.
    onnx = onnx_model_bytes()
    for name in ("model.onnx", "model-symbol.json"):
        p = fx.write(name, onnx)
        checks.append(Check("--model is an ONNX model named %s" % name, fx.run(symbol=p),
                            [name, "onnx"]))

    p = fx.write("empty-symbol.json", "")
    checks.append(Check("symbol file is empty", fx.run(symbol=p), ["empty-symbol.json"]))

    p = fx.write("array-symbol.json", "[1, 2, 3]")
    checks.append(Check("symbol file is a JSON array", fx.run(symbol=p),
                        ["array-symbol.json"]))

    g = fx.graph_copy()
    del g["nodes"]
    p = fx.write_graph("nonodes-symbol.json", g)
    checks.append(Check("symbol JSON without nodes", fx.run(symbol=p),
                        ["nonodes-symbol.json", "nodes"]))

    g = fx.graph_copy()
    del g["heads"]
    p = fx.write_graph("noheads-symbol.json", g)
    checks.append(Check("symbol JSON without heads", fx.run(symbol=p),
                        ["noheads-symbol.json", "heads"]))

    g = fx.graph_copy()
    g["heads"] = [[len(g["nodes"]) + 5, 0, 0]]
    p = fx.write_graph("badhead-symbol.json", g)
    checks.append(Check("head refers to a node that does not exist", fx.run(symbol=p),
                        ["badhead-symbol.json", "head"]))

    g = fx.graph_copy()
    idx, node = fx.node("seednet0_conv0_fwd")
    later, _ = fx.node("seednet0_pool0_fwd")
    g["nodes"][idx]["inputs"][0] = [later, 0, 0]
    p = fx.write_graph("forwardref-symbol.json", g)
    checks.append(Check("node input refers to a later node", fx.run(symbol=p),
                        ["seednet0_conv0_fwd"]))

    g = fx.graph_copy()
    g["nodes"][idx]["inputs"][0] = [0, 3, 0]
    p = fx.write_graph("badoutidx-symbol.json", g)
    checks.append(Check("node input uses output 3 of a one-output variable", fx.run(symbol=p),
                        ["seednet0_conv0_fwd"]))

    g = fx.graph_copy()
    ridx, _ = fx.node("seednet0_relu0")
    g["nodes"][ridx]["op"] = "FancyOp"
    p = fx.write_graph("fancyop-symbol.json", g)
    checks.append(Check("unknown op FancyOp", fx.run(symbol=p),
                        ["seednet0_relu0", "FancyOp"]))
    checks.append(Check("inspect lists the unknown op and exits 0",
                        ["inspect", "--model", p, "--params", fx.params],
                        ["seednet0_relu0", "FancyOp"], status=0))
    checks.append(Check("inspect --json lists the unknown op and exits 0",
                        ["inspect", "--model", p, "--params", fx.params, "--json"],
                        ['"unsupported"', "seednet0_relu0", "FancyOp"], status=0))

    g = fx.graph_copy()
    g["nodes"][idx]["attrs"]["kernel"] = "(a,b)"
    p = fx.write_graph("badkernel-symbol.json", g)
    checks.append(Check("Convolution kernel '(a,b)'", fx.run(symbol=p),
                        ["seednet0_conv0_fwd", "kernel"]))

    g = fx.graph_copy()
    g["nodes"][idx]["attrs"]["num_filter"] = "-6"
    p = fx.write_graph("negfilter-symbol.json", g)
    checks.append(Check("Convolution num_filter '-6'", fx.run(symbol=p),
                        ["seednet0_conv0_fwd", "num_filter"]))

    g = fx.graph_copy()
    pidx, _ = fx.node("seednet0_pool0_fwd")
    g["nodes"][pidx]["attrs"]["pool_type"] = "median"
    p = fx.write_graph("badpooltype-symbol.json", g)
    checks.append(Check("Pooling pool_type 'median'", fx.run(symbol=p),
                        ["seednet0_pool0_fwd", "pool_type"]))

    g = fx.graph_copy()
    del g["nodes"][idx]["attrs"]["kernel"]
    p = fx.write_graph("nokernel-symbol.json", g)
    checks.append(Check("Convolution without its required kernel", fx.run(symbol=p),
                        ["seednet0_conv0_fwd", "kernel"]))

    g = fx.graph_copy()
    g["nodes"][idx]["attrs"]["num_filter"] = "99999999999999999999"
    p = fx.write_graph("hugefilter-symbol.json", g)
    checks.append(Check("Convolution num_filter 10^20", fx.run(symbol=p),
                        ["seednet0_conv0_fwd", "num_filter"]))

    g = fx.graph_copy()
    g["nodes"][idx]["attrs"]["kernel"] = "(0, 0)"
    p = fx.write_graph("zerokernel-symbol.json", g)
    checks.append(Check("Convolution kernel '(0, 0)'", fx.run(symbol=p),
                        ["seednet0_conv0_fwd", "kernel"]))

    g = fx.graph_copy()
    sidx, _ = fx.node("seednet0_reshape0")
    g["nodes"][sidx]["attrs"]["shape"] = "(-1, -1)"
    p = fx.write_graph("twoinfer-symbol.json", g)
    checks.append(Check("Reshape shape '(-1, -1)': two inferred dims", fx.run(symbol=p),
                        ["seednet0_reshape0"]))

    g = fx.graph_copy()
    g["nodes"][sidx]["attrs"]["shape"] = "(0, 7)"
    p = fx.write_graph("reshape7-symbol.json", g)
    checks.append(Check("Reshape shape '(0, 7)' of 256 features", fx.run(symbol=p),
                        ["seednet0_reshape0"]))

    # What hybridize(backend="MKLDNN") + export writes: a fused node holding the original
    # Convolution in `subgraphs`, read as that Convolution.  One whose subgraph has fewer
    # variables than the node has inputs must be refused by name, not misread.
    g = fx.graph_copy()
    conv = g["nodes"][idx]
    sub = {"nodes": [{"op": "null", "name": "data0", "inputs": []},
                     {"op": "null", "name": "seednet0_conv0_weight0", "inputs": []},
                     {"op": "Convolution", "name": conv["name"], "attrs": dict(conv["attrs"]),
                      "inputs": [[0, 0, 0], [1, 0, 0], [1, 0, 0]]}],
           "arg_nodes": [0, 1], "node_row_ptr": [0, 1, 2, 3], "heads": [[2, 0, 0]]}
    g["nodes"][idx] = {"op": "_sg_mkldnn_conv", "name": "sg_mkldnn_conv_0",
                       "attrs": {"with_act": "false"}, "inputs": conv["inputs"],
                       "subgraphs": [sub]}
    p = fx.write_graph("sgmkldnn-symbol.json", g)
    checks.append(Check("_sg_mkldnn_conv whose subgraph lacks an input", fx.run(symbol=p),
                        ["'sg_mkldnn_conv_0'", "_sg_mkldnn_conv", "2 variables",
                         "3 inputs"]))

    # A negative size is corrupt, not "no shape" (0 and -1 mark a size the data gives).
    g = fx.graph_copy()
    didx, _ = fx.node(fx.input_name)
    g["nodes"][didx].setdefault("attrs", {})["__shape__"] = "(4, -3, 28, 28)"
    p = fx.write_graph("negshape-symbol.json", g)
    checks.append(Check("input __shape__ (4, -3, 28, 28): inspect",
                        ["inspect", "--model", p, "--params", fx.params],
                        ["'%s'" % fx.input_name, "-3", "negative"]))
    checks.append(Check("input __shape__ (4, -3, 28, 28): run", fx.run(symbol=p),
                        ["'%s'" % fx.input_name, "-3", "negative"]))
    return checks


def file_kind_checks(fx):
    """Paths that are not regular files, and files that never end: refused by name, at once."""
    checks = []
    folder = fx.path("a-folder")
    fifo = fx.path("a-fifo")
    os.mkdir(folder)
    os.mkfifo(fifo)
    inp = fx.input_name + "="
    for what, path, kind in (("a directory", folder, "directory"), ("a FIFO", fifo, "fifo"),
                             ("/dev/zero", "/dev/zero", "device")):
        checks.append(Check("--model is %s" % what, fx.run(symbol=path),
                            [path, kind, "symbol file"], timeout=FIFO_TIMEOUT_S))
        checks.append(Check("--params is %s" % what, fx.run(params=path),
                            [path, kind, "params file"], timeout=FIFO_TIMEOUT_S))
        checks.append(Check("--input is %s" % what, fx.run(inputs=[inp + path]),
                            [path, kind, ".npy"], timeout=FIFO_TIMEOUT_S))
    return checks


def diff_checks(fx):
    """`diff` reads index.json files it did not write: nesting and size are bounded."""
    checks = []
    good = fx.path("dump-good")
    deep = fx.path("dump-deep")
    zero = fx.path("dump-zero")
    for d in (good, deep, zero):
        os.mkdir(d)
    with open(os.path.join(good, "index.json"), "w") as f:
        json.dump({"nodes": []}, f)
    # 100,000 '[': json-glib recursed once per level and overflowed the stack.
    with open(os.path.join(deep, "index.json"), "w") as f:
        f.write('{"nodes": ' + "[" * 100000 + "]" * 100000 + "}")
    os.symlink("/dev/zero", os.path.join(zero, "index.json"))
    checks.append(Check("diff of an index.json nested 100,000 deep",
                        ["diff", deep, good], ["index.json", "nested"], status=2))
    checks.append(Check("diff of an index.json nested 100,000 deep (second dump)",
                        ["diff", good, deep], ["index.json", "nested"], status=2))
    checks.append(Check("diff of an index.json that is /dev/zero",
                        ["diff", zero, good], ["index.json", "regular file"], status=2))
    return checks


def output_set_checks(fx):
    """`run` writes all heads or none, and leaves no outputs of earlier runs beside them."""
    g = fx.graph_copy()
    conv, _ = fx.node("seednet0_conv0_fwd")
    # Head 0 is small (4x10), head 1 large (4x6x24x24, 55 KB): a disk that fills after 8 KiB
    # takes the first and refuses the second.
    g["heads"] = [g["heads"][0], [conv, 0, 0]]
    sym = fx.write_graph("twohead-symbol.json", g)
    full, clean = fx.path("out-full"), fx.path("out-clean")

    def listing(d):
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def stale(d, names):
        def setup():
            os.makedirs(d, exist_ok=True)
            for n in names:
                with open(os.path.join(d, n), "wb") as f:
                    f.write(b"stale output of an earlier run")
        return setup

    def expect(d, want):
        def after():
            have = listing(d)
            return None if have == want else "%s holds %s, expected %s" % (
                os.path.basename(d), have or "nothing", want or "nothing")
        return after

    def run(d):
        return ["run", "--model", sym, "--params", fx.params, "--mode", "imperative",
                "--input", fx.input_name + "=" + fx.input, "--output-dir", d]

    return [
        Check("two-head run on a disk full after 8 KiB: no outputs left, stale ones gone",
              run(full), ["output1.npy"], fsize=8192,
              setup=stale(full, ["output0.npy", "output1.npy", "output2.npy"]),
              after=expect(full, [])),
        Check("two-head run: exactly output0.npy and output1.npy, stale output2.npy gone",
              run(clean), [], status=0, setup=stale(clean, ["output2.npy", "output17.npy"]),
              after=expect(clean, ["output0.npy", "output1.npy"])),
    ]


def params_checks(fx):
    checks = []
    blob = fx.params_blob
    arrays, names, off = parse_params(blob)
    index = {n.partition(":")[2]: i for i, n in enumerate(names)}

    checks.append(Check("--params names a file that does not exist",
                        fx.run(params=fx.path("absent-0000.params")), ["absent-0000.params"]))

    first = arrays[0]
    names_at = off["names"]
    cuts = [("in the list header", 12),
            ("after the header, before any array", 24),
            ("inside the first array's shape", 24 + 16),
            ("inside the first array's data", 24 + first.data_off + len(first.data) // 2),
            ("between the arrays and the names", names_at),
            ("inside the names' count", names_at + 4),
            ("inside a name", names_at + 8 + 8 + 3),
            ("one byte short", len(blob) - 1)]
    for i, (where, at) in enumerate(cuts):
        fname = "cut%d-0000.params" % i
        p = fx.write(fname, blob[:at])
        checks.append(Check("params truncated %s (%d of %d bytes)" % (where, at, len(blob)),
                            fx.run(params=p), [fname]))

    p = fx.write("empty-0000.params", b"")
    checks.append(Check("params file is empty", fx.run(params=p), ["empty-0000.params"]))

    p = fx.write("magic-0000.params", struct.pack("<Q", 0x113) + blob[8:])
    checks.append(Check("params list magic 0x113", fx.run(params=p), ["magic-0000.params"]))

    p = fx.write("zip-0000.params", b"PK\x03\x04" + blob[4:])
    checks.append(Check("params file is a ZIP (MXNet 2.x)", fx.run(params=p),
                        ["zip-0000.params"]))

    bad = bytearray(blob)
    struct.pack_into("<I", bad, 24, 0xDEADBEEF)  # read as a pre-V1 ndim: absurd
    p = fx.write("recmagic-0000.params", bytes(bad))
    checks.append(Check("first array's magic is garbage", fx.run(params=p),
                        ["recmagic-0000.params"]))

    bad = bytearray(blob)
    struct.pack_into("<Q", bad, 16, 1 << 40)
    p = fx.write("hugecount-0000.params", bytes(bad))
    checks.append(Check("array count 2^40", fx.run(params=p), ["hugecount-0000.params"]))

    i = index["seednet0_conv0_bias"]
    a = arrays[i]
    bad = bytearray(blob)
    dims_at = 24 + sum(len(x.raw) for x in arrays[:i]) + 12
    struct.pack_into("<q", bad, dims_at, 1 << 50)
    p = fx.write("hugedim-0000.params", bytes(bad))
    checks.append(Check("array dim 2^50", fx.run(params=p), ["hugedim-0000.params"]))

    bad = bytearray(blob)
    dtype_at = 24 + sum(len(x.raw) for x in arrays[:i]) + a.data_off - 4
    struct.pack_into("<i", bad, dtype_at, 99)
    p = fx.write("dtype99-0000.params", bytes(bad))
    checks.append(Check("array dtype code 99", fx.run(params=p), ["dtype99-0000.params"]))

    bad = bytearray(blob)
    struct.pack_into("<i", bad, 24 + sum(len(x.raw) for x in arrays[:i]) + 4, 7)
    p = fx.write("stype7-0000.params", bytes(bad))
    checks.append(Check("array with storage type 7", fx.run(params=p),
                        ["stype7-0000.params", "storage"]))

    # A well-formed row_sparse (6,) bias holding rows 1 and 4, laid out as nd.save writes it.
    edited = list(arrays)
    sparse = (struct.pack("<Iii", V2_MAGIC, 1, 1) + struct.pack("<q", 2)   # storage shape
              + struct.pack("<iq", 1, 6)                                   # shape
              + struct.pack("<iii", 1, 0, 0)                               # cpu, float32
              + struct.pack("<iiq", 6, 1, 2)                               # int64 row ids (2,)
              + struct.pack("<2f", 0.5, -0.5) + struct.pack("<2q", 1, 4))
    edited[i] = Array(sparse, (6,), 0, len(sparse) - 24)
    p = fx.write("sparse-0000.params", encode_params(edited, names))
    checks.append(Check("conv bias stored row_sparse", fx.run(params=p),
                        ["sparse-0000.params", "seednet0_conv0_bias", "sparse"]))

    # Wrong shapes, each a consistent file: MXNet itself would read these arrays.
    w = index["seednet0_conv0_weight"]
    edited = list(arrays)
    edited[w] = Array(encode_v2((6, 1, 3, 3), 0, arrays[w].data[:6 * 9 * 4]), (6, 1, 3, 3), 0,
                      12 + 32 + 12)
    p = fx.write("convweight3x3-0000.params", encode_params(edited, names))
    checks.append(Check("conv weight (6,1,3,3) for a 5x5 kernel", fx.run(params=p),
                        [("seednet0_conv0_weight", "seednet0_conv0_fwd"), "shape"]))

    edited = list(arrays)
    edited[i] = Array(encode_v2((7,), 0, arrays[i].data + b"\0\0\0\0"), (7,), 0, 12 + 8 + 12)
    p = fx.write("bias7-0000.params", encode_params(edited, names))
    checks.append(Check("conv bias (7,) where (6,) is declared", fx.run(params=p),
                        [("seednet0_conv0_bias", "seednet0_conv0_fwd"), "shape"]))

    d = index["seednet0_dense0_weight"]
    edited = list(arrays)
    edited[d] = Array(encode_v2((120, 255), 0, arrays[d].data[:120 * 255 * 4]), (120, 255), 0,
                      12 + 16 + 12)
    p = fx.write("dense255-0000.params", encode_params(edited, names))
    checks.append(Check("dense weight (120,255) for 256 features", fx.run(params=p),
                        [("seednet0_dense0_weight", "seednet0_dense0_fwd"), "shape"]))

    for victim in ("seednet0_dense1_bias", "seednet0_conv1_weight"):
        k = index[victim]
        kept = [a for j, a in enumerate(arrays) if j != k]
        kept_names = [n for j, n in enumerate(names) if j != k]
        fname = "no-%s-0000.params" % victim.rsplit("_", 2)[-2]
        p = fx.write(fname, encode_params(kept, kept_names))
        checks.append(Check("params without %s" % victim, fx.run(params=p), [victim]))
    return checks


def input_checks(fx):
    checks = []
    shape, values = read_npy_f32(fx.input)
    n = len(values)

    p = fx.write("f64.npy", npy_bytes("<f8", shape, struct.pack("<%dd" % n, *values)))
    checks.append(Check("input .npy of float64", fx.run(inputs=[fx.input_name + "=" + p]),
                        [("float64", "<f8", "'f8'")]))

    p = fx.write("i64.npy", npy_bytes("<i8", shape, struct.pack("<%dq" % n,
                                                               *[int(v) for v in values])))
    checks.append(Check("input .npy of int64", fx.run(inputs=[fx.input_name + "=" + p]),
                        [("int64", "<i8", "'i8'")]))

    full = npy_f32(shape, values)
    p = fx.write("trunc.npy", full[:len(full) - 100])
    checks.append(Check("input .npy truncated in its data", fx.run(inputs=[fx.input_name + "=" + p]),
                        ["trunc.npy"]))
    p = fx.write("trunchdr.npy", full[:20])
    checks.append(Check("input .npy truncated in its header", fx.run(inputs=[fx.input_name + "=" + p]),
                        ["trunchdr.npy"]))
    p = fx.write("text.npy", "1 2 3\n")
    checks.append(Check("input .npy that is text", fx.run(inputs=[fx.input_name + "=" + p]),
                        ["text.npy"]))
    checks.append(Check("input .npy that does not exist",
                        fx.run(inputs=[fx.input_name + "=" + fx.path("absent.npy")]), ["absent.npy"]))

    # The same values stored another way: refused by name, never misread.
    fortran = npy_bytes("<f4", shape, b"").replace(b"'fortran_order': False",
                                                   b"'fortran_order': True ")
    p = fx.write("fortran.npy", fortran + struct.pack("<%df" % n, *values))
    checks.append(Check("input .npy in Fortran order", fx.run(inputs=[fx.input_name + "=" + p]),
                        ["fortran"]))
    p = fx.write("bigendian.npy", npy_bytes(">f4", shape, struct.pack(">%df" % n, *values)))
    checks.append(Check("input .npy big-endian float32", fx.run(inputs=[fx.input_name + "=" + p]),
                        [">f4"]))
    p = fx.write("empty.npy", npy_f32((0, 1, 28, 28), []))
    checks.append(Check("input .npy with a zero dimension", fx.run(inputs=[fx.input_name + "=" + p]),
                        [("'data'", "empty.npy")]))

    p = fx.write("c3.npy", npy_f32((1, 3, 5, 5), [0.5] * 75))
    checks.append(Check("input (1,3,5,5) for a one-channel 28x28 LeNet",
                        fx.run(inputs=[fx.input_name + "=" + p]),
                        [("seednet0_conv0_fwd", "'data'")]))

    p = fx.write("s8.npy", npy_f32((1, 1, 8, 8), [0.5] * 64))
    checks.append(Check("input (1,1,8,8): too small for the second conv",
                        fx.run(inputs=[fx.input_name + "=" + p]), ["seednet0_conv1_fwd"]))

    p = fx.write("flat.npy", npy_f32((784,), [0.5] * 784))
    checks.append(Check("input (784,): one dimension", fx.run(inputs=[fx.input_name + "=" + p]),
                        [("seednet0_conv0_fwd", "'data'")]))

    checks.append(Check("two --input for a one-input model",
                        fx.run(inputs=[fx.input_name + "=" + fx.input, fx.input]), ["input"]))
    checks.append(Check("no --input", fx.run(inputs=[]), ["input", "data"]))
    checks.append(Check("--input NAME= with an unknown name",
                        fx.run(inputs=["image=" + fx.input]), ["image"]))
    return checks


def option_checks(fx):
    plain = fx.write("plainfile", "not a folder\n")  # never the fixture: nothing lands there
    checks = [
        Check("--device tpu", fx.run(extra=["--device", "tpu"]), ["tpu"]),
        Check("--device cuda:x", fx.run(extra=["--device", "cuda:x"]), ["cuda:x"]),
        Check("--device cuda:-1", fx.run(extra=["--device", "cuda:-1"]), ["cuda:-1"]),
        # No machine has 64 GPUs: a CUDA build says so, a CPU-only build says it has no CUDA.
        Check("--device cuda:63", fx.run(extra=["--device", "cuda:63"]), [("cuda:63", "63")]),
        # Past the accepted range: the message states the range, not just "cuda:N".
        Check("--device cuda:64", fx.run(extra=["--device", "cuda:64"]),
              ["cuda:64", "0 to 63"]),
        Check("--mode fast", fx.run(extra=["--mode", "fast"]), ["fast"]),
        Check("--qdq half", fx.run(extra=["--qdq", "half"]), ["--qdq", "half", "int8"]),
        # An input no memory holds (120 GB): an error naming it, not an abort.
        Check("bench --shape 1x3x100000x100000",
              ["bench", "--model", os.path.join(os.path.dirname(fx.case_dir), "op_relu",
                                                "model-symbol.json"),
               "--shape", "1x3x100000x100000", "--iterations", "1", "--warmup", "0"],
              ["out of memory", "(1, 3, 100000, 100000)"]),
        Check("--precision fp8", fx.run(extra=["--precision", "fp8"]), ["fp8", "fp16"]),
        # fp16 is a GPU option: on the CPU it is refused, not ignored.
        Check("--precision fp16 on the CPU",
              fx.run(extra=["--precision", "fp16", "--device", "cpu"]), ["fp16", "cpu"]),
        Check("--output-dir below a regular file",
              ["run", "--model", fx.symbol, "--params", fx.params,
               "--input", fx.input_name + "=" + fx.input, "--output-dir",
               os.path.join(plain, "sub")], ["plainfile"]),
        Check("inspect --shape 1x0x28x28", ["inspect", "--model", fx.symbol, "--shape",
                                           "1x0x28x28"], ["1x0x28x28"]),
        Check("inspect --shape with an unknown input name",
              ["inspect", "--model", fx.symbol, "--shape", "image=1x1x28x28"], ["image"]),
        Check("export --prefix below a regular file",
              ["export", "--model", fx.symbol, "--params", fx.params,
               "--prefix", os.path.join(plain, "sub", "model")], ["plainfile"]),
        Check("export of a model with a truncated params file",
              ["export", "--model", fx.symbol, "--params", fx.path("cut3-0000.params"),
               "--prefix", fx.path("exported/model")], ["cut3-0000.params"]),
        # Usage errors: status 2 and no crash; their wording is GLib's.
        Check("export without --prefix", ["export", "--model", fx.symbol], [], status=2),
        Check("export --epoch 10000", ["export", "--model", fx.symbol, "--prefix",
                                      fx.path("exported/model"), "--epoch", "10000"], [],
              status=2),
        Check("run without --model", ["run", "--output-dir", fx.out], [], status=2),
        Check("run with an unknown option", fx.run(extra=["--frobnicate"]), [], status=2),
        Check("an unknown command", ["frobnicate"], [], status=2),
        Check("no command", [], [], status=2),
    ]
    return checks


# ---------------------------------------------------------------------------------------------
# Running and judging
# ---------------------------------------------------------------------------------------------

def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run_watched(argv, check):
    """-> (status, stdout, stderr, problem): runs argv, stopping it past check.timeout or
    RSS_LIMIT_KIB (problem then says which)."""
    def limits():
        if check.fsize is not None:
            # A full disk: write() fails with EFBIG instead of the signal killing the tool.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (check.fsize, check.fsize))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                preexec_fn=limits)
        problem, start = None, time.monotonic()
        while proc.poll() is None:
            if time.monotonic() - start > check.timeout:
                problem = "no answer within %ds" % check.timeout
            elif rss_kib(proc.pid) > RSS_LIMIT_KIB:
                problem = "grew past %d MiB of memory" % (RSS_LIMIT_KIB // 1024)
            if problem:
                proc.kill()
                proc.wait()
                break
            time.sleep(0.02)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"), problem)


def judge(tool, check):
    """-> (problem, what the tool said): problem is None when it kept its contract."""
    if check.setup:
        check.setup()
    try:
        rc, out, err, problem = run_watched([tool] + check.argv, check)
    except OSError as e:
        return "cannot start the tool: %s" % e, ""
    if problem:
        return problem, ""
    lines = [l for l in err.splitlines() if l.strip()]
    said = lines[0] if rc != 0 and lines else "(status %d)" % rc
    problem = verdict(check, rc, out, lines)
    if not problem and check.after:
        problem = check.after()
    return problem, said


def verdict(check, rc, out, lines):
    err = "\n".join(lines)
    if rc < 0 or rc >= 128:
        return "crashed (status %d); stderr: %s" % (rc, " | ".join(lines[-5:]))
    if rc != check.status:
        return "exit status %d, expected %d; stderr: %s" % (rc, check.status,
                                                           " | ".join(lines[-5:]) or "(none)")
    if check.status == 0:
        text = out
        if lines:
            return "exit 0 but stderr says: %s" % " | ".join(lines[-5:])
    elif check.status == 1:
        if len(lines) != 1 or not lines[0].startswith(ERROR_PREFIX):
            return "stderr is not one '%s' line: %s" % (ERROR_PREFIX.strip(),
                                                        " | ".join(lines[:6]))
        text = lines[0]
    else:
        text = err
    missing = []
    for want in check.names:
        alts = want if isinstance(want, tuple) else (want,)
        if not any(a.lower() in text.lower() for a in alts):
            missing.append(" or ".join(repr(a) for a in alts))
    if missing:
        shown = text if check.status != 0 else text[:300]
        return "message does not name %s: %s" % (", ".join(missing), shown.strip())
    return None


def main(argv):
    if len(argv) != 3:
        print("usage: test_malformed.py TOOL FIXTURES_DIR", file=sys.stderr)
        return 2
    tool, fixtures = os.path.abspath(argv[1]), argv[2]
    case_dir = os.path.join(fixtures, CASE)
    if not os.path.isfile(os.path.join(case_dir, "case.json")):
        print("1..0 # SKIP no %s fixture in %s" % (CASE, fixtures))
        return 0
    work = tempfile.mkdtemp(prefix="hy-malformed-")
    try:
        fx = Fixture(case_dir, work)
        checks = (symbol_checks(fx) + params_checks(fx) + input_checks(fx) + option_checks(fx)
                  + file_kind_checks(fx) + diff_checks(fx) + output_set_checks(fx))
        print("1..%d" % len(checks))
        failed = 0
        for n, check in enumerate(checks, 1):
            problem, said = judge(tool, check)
            if problem:
                failed += 1
                print("not ok %d - %s" % (n, check.title))
                print("# %s" % problem.replace("\n", " "))
                print("# argv: %s" % " ".join([os.path.basename(tool)] + check.argv))
            else:
                print("ok %d - %s" % (n, check.title))
                print("# %s" % said)
            sys.stdout.flush()
        return 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
