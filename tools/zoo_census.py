#!/usr/bin/env python3
"""Census of GluonCV 0.10.5's model zoo: which models hybridinfer loads.

For every name in GluonCV's zoo registry, build the model the way a user would
(`get_model(name, pretrained=False, pretrained_base=False)`, random weights: only the graph
matters here), hybridize it, run it once on a small input, export it into a cache directory, and
ask `hybridinfer inspect --graph-only --json` to load its graph and infer every node's shape
(the weights' too) at that input.  Each
model ends in one of:

    loads        our loader resolved every op and inferred every shape
    fails        GluonCV/MXNet built and exported it, we did not load it (first error)
    not built    GluonCV or MXNet itself could not build, run or export it (why)
    timeout      building or exporting took longer than --timeout seconds
    not run      left for a later run by --budget (architectures come first: one model of
                 each is built before any second one)

Run with the MXNet 1.9.1 reference Python (~/.cache/hybridinfer/venv/bin/python):

    tools/zoo_census.py --hybridinfer build/tools/hybridinfer --markdown docs/ZOO.md

The test suite runs the fast form (tests/cli/meson.build, zoo-census):

    tools/zoo_census.py --graphs-only --baseline docs/ZOO.md --budget 90

every model this table lists as loading must still load; graphs alone are built (GluonCV's
symbol, no weights, forward or export) into CACHE/census-graphs, a budget's worth per run.

Each model is built in a forked child (so that a hang or a crash in MXNet costs one model, not
the census) and its result cached beside its export (CACHE/census/NAME/build.json): a second
run only redoes the inspect step, fast, unless --rebuild.  --only takes model names.
"""

import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback

# MXNet's own CPU kernels, as the fixture generator uses: their graph is what we load.
os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MXNET_ENGINE_TYPE", "NaiveEngine")  # no engine threads: safe to fork

CACHE = os.environ.get("HYBRIDINFER_CACHE", os.path.expanduser("~/.cache/hybridinfer"))

# GluonCV's constructors need a class list to build a "custom" model; any two names do.
CUSTOM_CLASSES = ("a", "b")

# Segmentation heads size their pooling branches for the crop: a small crop keeps them quick.
SEGMENTATION_PREFIXES = ("fcn_", "psp_", "deeplab_", "danet_", "icnet_", "fastscnn_")


def family(name):
    """The model's family: the name up to its first digit-bearing or variant part."""
    for prefix in ("ssd_", "yolo3_", "center_net_", "faster_rcnn_fpn", "faster_rcnn_",
                   "mask_rcnn_fpn", "mask_rcnn_", "simple_pose_", "alpha_pose_", "mobile_pose_",
                   "monodepth2_", "siamrpn_", "doublehead_rcnn_", "custom_") + \
            SEGMENTATION_PREFIXES:
        if name.startswith(prefix):
            return prefix.rstrip("_")
    if re.search(r"(kinetics|hmdb51|ucf101|sthsthv2)", name) or \
            name.startswith(("c3d", "i3d", "p3d", "r2plus1d", "slowfast")):
        return "action recognition"
    if name.startswith("cifar_"):
        return "cifar"
    return "classification"


def is_video(name):
    return family(name) == "action recognition"


def is_3d(name):
    """Action models over clips (N, C, T, H, W); the 2-D ones (TSN) take frames as a batch."""
    return name.startswith(("c3d", "i3d", "p3d", "r2plus1d", "slowfast"))


def input_candidates(name):
    """Input shapes to try, small first: a model whose head needs its nominal size (a fixed
    pooling window, a Dense after Flatten) refuses the small one and takes the next."""
    fam = family(name)
    if fam == "cifar":
        return [(1, 3, 32, 32)]
    if fam in ("ssd", "yolo3", "center_net"):
        return [(1, 3, 128, 128), (1, 3, 512, 512)]
    if fam in ("faster_rcnn", "mask_rcnn", "faster_rcnn_fpn", "mask_rcnn_fpn",
               "doublehead_rcnn", "custom"):
        return [(1, 3, 128, 128), (1, 3, 512, 512)]
    if fam in ("simple_pose", "alpha_pose", "mobile_pose"):
        return [(1, 3, 128, 96), (1, 3, 256, 192)]
    if fam in [p.rstrip("_") for p in SEGMENTATION_PREFIXES]:
        return [(1, 3, 64, 64), (1, 3, 480, 480)]
    if fam == "monodepth2":
        return [(1, 3, 192, 640)]
    if is_3d(name):
        if name.startswith("slowfast"):
            # The clip is the slow pathway's frames then the fast one's:
            # 4 + 32 (4x16), 8 + 32 (8x8), 16 + 64 (16x8).
            frames = {"4x16": 36, "8x8": 40, "16x8": 80}[name.split("_")[1]]
            return [(1, 3, frames, 112, 112), (1, 3, frames, 224, 224)]
        return [(1, 3, 16, 112, 112), (1, 3, 8, 112, 112), (1, 3, 32, 224, 224)]
    if name.startswith(("inceptionv3", "xception")):
        return [(1, 3, 299, 299)]
    if name.startswith("nasnet"):
        return [(1, 3, 224, 224), (1, 3, 331, 331)]
    if name.startswith(("alexnet", "vgg", "residualattentionnet")):
        return [(1, 3, 224, 224)]
    return [(1, 3, 128, 128), (1, 3, 224, 224)]


def construct_kwargs(name):
    kw = dict(pretrained=False)
    fam = family(name)
    if fam in [p.rstrip("_") for p in SEGMENTATION_PREFIXES]:
        kw.update(aux=False, crop_size=64, base_size=64)
    return kw


class NotBuilt(Exception):
    """GluonCV/MXNet itself could not build, run or export the model."""


def first_line(err):
    text = str(err).strip()
    # MXNet's errors carry a C++ stack trace after the message: keep the message
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("Stack trace", "[bt]", "File ")):
            return ("%s: %s" % (type(err).__name__, line))[:300]
    return type(err).__name__


def get_model(model_zoo, name):
    """get_model as the census asks for it, then with what a family needs to exist at all."""
    tries = [dict(pretrained_base=False), {}]
    if name.endswith("_custom") or name.startswith("custom_"):
        tries = [dict(pretrained_base=False, classes=CUSTOM_CLASSES),
                 dict(classes=CUSTOM_CLASSES)]
    last = None
    for extra in tries:
        kw = construct_kwargs(name)
        kw.update(extra)
        # A constructor may refuse an argument it does not take (pretrained_base, crop_size)
        # with a TypeError, or with a Block warning raised as an error: try without.
        for attempt in (kw, {k: v for k, v in kw.items() if k not in ("crop_size", "base_size")}):
            try:
                return model_zoo.get_model(name, **attempt), attempt
            except Exception as e:  # noqa: BLE001
                last = e
    raise NotBuilt("get_model: " + first_line(last))


def fewer_proposals(net):
    """R-CNNs run their last stage once per proposal: 16 proposals instead of 300-1000 keep the
    one forward the export needs at seconds.  The graph is the same but for these numbers."""
    for attr, value in (("_rpn_test_post_nms", 16), ("_rcnn_max_dets", 8)):
        if hasattr(net, attr):
            setattr(net, attr, value)
    rpn = getattr(net, "rpn", None)
    for attr, value in (("_test_pre_nms", 400), ("_test_post_nms", 16)):
        if rpn is not None and hasattr(rpn, attr):
            setattr(rpn, attr, value)


NO_PRETRAINED_FILE = "<census: no pretrained weights>"


def initialize_random(mx, block):
    """Xavier for what has no initialiser of its own; Xavier refuses vectors, so those
    (BatchNorms, FPN biases) get ones and zeros, as a fresh layer would."""
    block.initialize(mx.init.Xavier(magnitude=1.0))
    for pname, p in block.collect_params().items():
        if p.init is None and pname.endswith(("gamma", "running_var", "moving_var")):
            p.initialize(mx.init.One(), force_reinit=True)
        elif p.init is None and pname.endswith(("beta", "running_mean", "moving_mean", "bias")):
            p.initialize(mx.init.Zero(), force_reinit=True)


def offline_pretrained_files(mx):
    """Some constructors fetch ImageNet weights for their trunk whatever pretrained_base says
    (the action recognisers' ActionRecResNetV1b builds its ResNet with pretrained=True by
    default).  The census wants the graph, not the weights: the weight store answers with a
    name for which load_parameters initialises the block at random instead."""
    from gluoncv.model_zoo import model_store
    model_store.get_model_file = lambda *a, **kw: NO_PRETRAINED_FILE
    load = mx.gluon.Block.load_parameters

    def load_parameters(self, filename, *a, **kw):
        if filename == NO_PRETRAINED_FILE:
            return initialize_random(mx, self)
        return load(self, filename, *a, **kw)
    mx.gluon.Block.load_parameters = load_parameters


def build_and_export(name, out_dir):
    """In the child: build, hybridize, run once, export.  Returns what build.json records."""
    import warnings
    warnings.filterwarnings("ignore")
    import mxnet as mx
    from gluoncv import model_zoo
    offline_pretrained_files(mx)

    try:
        net, kw = get_model(model_zoo, name)
    except NotBuilt:
        raise
    except Exception as e:  # noqa: BLE001 (any failure of GluonCV's is the answer)
        raise NotBuilt("get_model: " + first_line(e))
    fewer_proposals(net)
    try:
        initialize_random(mx, net)
    except Exception as e:  # noqa: BLE001
        raise NotBuilt("initialize: " + first_line(e))
    errors = []
    for shape in input_candidates(name):
        x = mx.nd.random.uniform(-1, 1, shape=shape)
        # Hybridized afresh for each shape: a forward that failed at the last one leaves a
        # half-built cached graph, and export then says the block never ran hybridized.
        net.hybridize(static_alloc=False)
        try:
            try:
                out = net(x)
            except ValueError as e:
                if "Deferred initialization failed" not in str(e):
                    raise
                # A block that holds layers its forward never calls (monodepth2's encoder
                # keeps its ResNet's classifier): the hybridized graph cannot infer their
                # shapes from the input.  One imperative forward sizes every layer it does
                # call, as GluonCV's own scripts do before exporting.
                net.hybridize(active=False)
                net(x)
                net.hybridize(static_alloc=False)
                out = net(x)
            mx.nd.waitall()
            del out
        except Exception as e:  # noqa: BLE001
            errors.append("%s: %s" % ("x".join(map(str, shape)), first_line(e)))
            continue
        prefix = os.path.join(out_dir, "model")
        try:
            net.export(prefix)
        except Exception as e:  # noqa: BLE001
            raise NotBuilt("export: " + first_line(e))
        return dict(shape=list(shape), kwargs={k: str(v) for k, v in kw.items()})
    raise NotBuilt("forward: " + "; ".join(errors))


def build_graph(name, out_dir):
    """In the child, for --graphs-only: the model's graph as Gluon traces it, called on a symbol
    (no weights initialised by us, no forward, no export: seconds where an export takes
    minutes).  Returns what build.json records."""
    import warnings
    warnings.filterwarnings("ignore")
    import mxnet as mx
    from gluoncv import model_zoo
    offline_pretrained_files(mx)
    try:
        net, kw = get_model(model_zoo, name)
    except NotBuilt:
        raise
    except Exception as e:  # noqa: BLE001
        raise NotBuilt("get_model: " + first_line(e))
    fewer_proposals(net)
    try:
        out = net(mx.sym.var("data"))
    except Exception as e:  # noqa: BLE001
        raise NotBuilt("symbol: " + first_line(e))
    if isinstance(out, (list, tuple)):
        out = mx.sym.Group(list(out))
    out.save(os.path.join(out_dir, "model-symbol.json"))
    return dict(kwargs={k: str(v) for k, v in kw.items()})


def run_child(name, out_dir, timeout, builder=None):
    """Fork, build in the child, wait at most `timeout` seconds.  The child writes its result
    (or its failure) as JSON; a child killed or crashed is reported as such."""
    os.makedirs(out_dir, exist_ok=True)
    result_file = os.path.join(out_dir, "build.json")
    if os.path.exists(result_file):
        os.unlink(result_file)
    pid = os.fork()
    if pid == 0:
        # Own process group, so that a timeout kills whatever the child started too.
        os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        code = 0
        try:
            info = (builder or build_and_export)(name, out_dir)
            res = dict(status="built", **info)
        except NotBuilt as e:
            res = dict(status="not built", why=str(e))
        except BaseException as e:  # noqa: BLE001
            res = dict(status="not built", why="python: " + first_line(e),
                       trace=traceback.format_exc()[-2000:])
            code = 1
        with open(result_file + ".tmp", "w") as f:
            json.dump(res, f)
        os.rename(result_file + ".tmp", result_file)
        os._exit(code)
    start = time.time()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() - start > timeout:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return dict(status="timeout", why="building and exporting took over %ds" % timeout,
                        seconds=round(time.time() - start, 1))
        time.sleep(0.2)
    seconds = round(time.time() - start, 1)
    if os.path.exists(result_file):
        with open(result_file) as f:
            res = json.load(f)
    elif os.WIFSIGNALED(status):
        res = dict(status="not built", why="MXNet crashed (signal %d)" % os.WTERMSIG(status))
    else:
        res = dict(status="not built", why="the build exited %d" % os.WEXITSTATUS(status))
    res["seconds"] = seconds
    return res


def inspect(hybridinfer, out_dir, shape):
    """`hybridinfer inspect --graph-only --json` at the export's shape: (loads, first error).
    The symbol file alone: the weights are random here, and the graph-only load infers their
    shapes as MXNet does (tests/conformance/check_graph_only.py holds it to that)."""
    cmd = [hybridinfer, "inspect", "--graph-only", "--json",
           "-m", os.path.join(out_dir, "model-symbol.json"),
           "-s", "data=" + "x".join(map(str, shape))]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                           universal_newlines=True)
    except subprocess.TimeoutExpired:
        return False, "hybridinfer inspect took over 300 s"
    except OSError as e:  # the tool itself is missing or being rebuilt: not the model's failure
        raise SystemExit("cannot run %s: %s" % (hybridinfer, e))
    if p.returncode != 0:
        err = (p.stderr.strip() or p.stdout.strip() or "exit %d" % p.returncode).splitlines()
        return False, err[0][:300] if err else "exit %d" % p.returncode
    try:
        info = json.loads(p.stdout)
    except ValueError:
        return False, "inspect printed no JSON"
    if info.get("unsupported"):
        # entries are "node (op)": count the nodes of each op
        per_op = {}
        for entry in info["unsupported"]:
            m = re.search(r"\(([^()]+)\)$", entry)
            op = m.group(1) if m else entry
            per_op[op] = per_op.get(op, 0) + 1
        return False, "unsupported ops: " + ", ".join(
            "%s (%d node%s)" % (op, n, "s" if n > 1 else "") for op, n in sorted(per_op.items()))
    if info.get("shape_error"):
        return False, info["shape_error"][:300]
    return True, ""


def architecture(name):
    """Models that differ only in depth, width or dataset share a key: the census builds one of
    each first, so that a run cut short by --budget has still seen every architecture."""
    key = re.sub(r"_(voc|coco|ade|citys|custom|kinetics400|hmdb51|ucf101|sthsthv2|otb15|mhpv1)"
                 r"(_int8)?$", "", name)
    return re.sub(r"(?<!_v)\d+(\.\d+)?", "#", key)


def size_numbers(name):
    return [float(x) for x in re.findall(r"(?<!_v)\d+(?:\.\d+)?", name)]


def representative_first(names):
    """One model of each architecture, the smallest (quickest to build), then the rest."""
    groups = {}
    for n in names:
        groups.setdefault(architecture(n), []).append(n)
    first = [min(g, key=size_numbers) for g in groups.values()]
    return first + [n for n in names if n not in first]


def zoo_names():
    import warnings
    warnings.filterwarnings("ignore")
    from gluoncv.model_zoo import model_zoo as mz
    return sorted(mz._models.keys())


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d CPUs" % (model, os.cpu_count() or 0)


# Why a model cannot be built, by what its first error says: every one
# fails inside GluonCV 0.10.5 or MXNet 1.9.1, before there is a file for
# us to load.  (pattern on "name: why", explanation)
NOT_BUILT_CAUSES = [
    (r"_int8:", "GluonCV makes its int8 models from the quantized symbol and params files of "
     "its model store; with `pretrained=False` (nothing can be downloaded) there are none, and "
     "MXNet cannot infer the layers' shapes. MXNet's own int8 exports of zoo models load: "
     "`tests/onednn`."),
    (r"(^custom_|_custom:)", "`custom_*` and `*_custom` models are templates for a user's classes and settings; built "
     "with the zoo's defaults they do not run (parameters never initialised, or, in the FPN "
     "R-CNNs, an error in GluonCV's own forward)."),
    (r"_gn:", "GroupNorm: GluonCV's reshape passes `keep_highest=-1`, which MXNet 1.9.1's "
     "Reshape rejects (the two versions disagree)."),
    (r"^siamrpn_", "SiamRPN takes two inputs (the template and the search image); the census "
     "builds single-input models."),
    (r"^inceptionv1_sthsthv2:", "GluonCV's constructor resets the context of a parameter it "
     "never initialised."),
]


def not_built_causes(rows):
    """Markdown lines grouping the models that could not be built by cause."""
    groups, unexplained = {}, []
    for r in rows:
        if r["census"] != "not built":
            continue
        key = "%s: %s" % (r["name"], r.get("why", ""))
        for pattern, why in NOT_BUILT_CAUSES:
            if re.search(pattern, key):
                groups.setdefault(why, []).append(r["name"])
                break
        else:
            unexplained.append(r["name"])
    if not groups and not unexplained:
        return []
    lines = ["Why the models marked `not built` cannot be (each fails in GluonCV or MXNet, "
             "before there is a file to load):", ""]
    for pattern, why in NOT_BUILT_CAUSES:
        if why in groups:
            names = sorted(groups[why])
            lines.append("- %d: %s (%s)" % (len(names), why, ", ".join(names)))
    if unexplained:
        lines.append("- %d not yet explained: %s (see the table)" % (
            len(unexplained), ", ".join(sorted(unexplained))))
    return lines + [""]


def markdown(rows, command, started):
    counts = {}
    for r in rows:
        counts[r["census"]] = counts.get(r["census"], 0) + 1
    lines = [
        "# GluonCV model zoo census",
        "",
        "Generated by `tools/zoo_census.py`; do not edit by hand.  Which of GluonCV 0.10.5's",
        "zoo models (MXNet 1.9.1) hybridinfer loads: each is built with",
        "`get_model(name, pretrained=False, pretrained_base=False)` and random weights,",
        "hybridized, run once at the input shown, exported, and loaded with",
        "`hybridinfer inspect --graph-only` at that shape (every op resolved, every shape,",
        "the weights' included, inferred from the symbol file alone).",
        "Whether the outputs match MXNet is the conformance suites' job (`tests/conformance`).",
        "`timeout` and `not run` say the census ran out of time, not that we fail the model: a",
        "rerun with the same cache builds only what is missing.",
        "",
        "- run: %s UTC on %s" % (started, machine()),
        "- command: `%s`" % command,
        "- totals: " + ", ".join("%s %d" % (k, counts[k]) for k in sorted(counts)) +
        " (of %d)" % len(rows),
        "",
    ]
    lines += not_built_causes(rows)
    # What to fix first: each missing op with the number of models it alone keeps from loading.
    blockers = {}
    for r in rows:
        if r["census"] == "fails" and r["why"].startswith("unsupported ops: "):
            ops = set(re.findall(r"([\w.]+) \(\d+ nodes?\)", r["why"]))
            for op in ops:
                blockers.setdefault(op, []).append(r["name"])
    if blockers:
        lines += ["Missing ops, by how many models each keeps from loading:", ""]
        for op, models in sorted(blockers.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append("- `%s`: %d (%s)" % (op, len(models), ", ".join(sorted(models))))
        lines.append("")
    lines += [
        "| model | family | input | result | first error / why |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        why = r.get("why", "").replace("|", "\\|").replace("\n", " ")
        lines.append("| %s | %s | %s | %s | %s |" % (
            r["name"], r["family"], "x".join(map(str, r.get("shape", []))) or "-",
            r["census"], why))
    return "\n".join(lines) + "\n"


def baseline_loads(path):
    """{name: shape} of the models an earlier census (its docs/ZOO.md) lists as loading."""
    loads = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 4 and cells[3] == "loads" and re.match(r"^\d+(x\d+)+$", cells[2]):
                loads[cells[0]] = [int(d) for d in cells[2].split("x")]
    return loads


def check_against(args):
    """--baseline with --graphs-only: every model the baseline lists as loading must still load.
    Graphs are built (one per architecture first) until --budget runs out and cached, so each
    run checks every graph the cache holds and builds more; the models left are named."""
    loads = baseline_loads(args.baseline)
    names = representative_first(sorted(loads))
    if args.only:
        names = [n for n in names if n in args.only]
    t0 = time.time()
    regressed, checked, not_built, left = [], 0, [], []
    for name in names:
        out_dir = os.path.join(args.cache, name)
        sym = os.path.join(out_dir, "model-symbol.json")
        export = os.path.join(args.exports, name)
        if os.path.exists(os.path.join(export, "model-symbol.json")):
            out_dir = export        # the full census's own export of it: no need to build
        elif not os.path.exists(sym):
            if args.budget and time.time() - t0 > args.budget:
                left.append(name)
                continue
            built = run_child(name, out_dir, args.timeout, build_graph)
            if built["status"] != "built":
                not_built.append("%s (%s)" % (name, built.get("why", built["status"])))
                continue
        ok, err = inspect(args.hybridinfer, out_dir, loads[name])
        checked += 1
        print("%-45s %s" % (name, "loads" if ok else "FAILS: " + err), flush=True)
        if not ok:
            regressed.append("%s: %s" % (name, err))
    print("census check: %d of the %d models %s lists as loading checked, %d no longer load"
          % (checked, len(names), args.baseline, len(regressed)))
    if left:
        print("not checked this run (past the %gs budget to build graphs; the next run builds "
              "them into %s): %s" % (args.budget, args.cache, ", ".join(left)))
    if not_built:
        print("graph not built by GluonCV/MXNet here (the full census exports them after a "
              "forward): " + "; ".join(not_built))
    for r in regressed:
        print("REGRESSION " + r)
    return 1 if regressed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hybridinfer", default="build/tools/hybridinfer")
    ap.add_argument("--cache", default=os.path.join(CACHE, "census"))
    ap.add_argument("--timeout", type=int, default=240, help="seconds per model build")
    ap.add_argument("--only", nargs="*", help="model names")
    ap.add_argument("--rebuild", action="store_true", help="rebuild cached exports")
    ap.add_argument("--budget", type=float, default=0,
                    help="stop building new models after this many seconds (0: no limit); "
                         "the rest are listed as not run")
    ap.add_argument("--cached-only", action="store_true",
                    help="build nothing: report what earlier runs built (the rest as not run)")
    ap.add_argument("--drop-params", action="store_true",
                    help="delete each export's params file once built: the census inspects the "
                         "symbol file alone (inspect --graph-only), and the whole zoo's weights "
                         "take more disk than a machine may have")
    ap.add_argument("--graphs-only", action="store_true",
                    help="build each model's graph alone (no weights, no forward, no export) "
                         "into --cache; with --baseline, the test suite's fast form")
    ap.add_argument("--baseline", help="an earlier census's table (docs/ZOO.md): with "
                    "--graphs-only, check that every model it lists as loading still loads, "
                    "exit 1 if one does not")
    ap.add_argument("--markdown", help="write the table here (docs/ZOO.md)")
    ap.add_argument("--json", help="write every row here")
    args = ap.parse_args()
    if args.baseline or args.graphs_only:
        if not (args.baseline and args.graphs_only):
            ap.error("--baseline and --graphs-only go together (the suite's census check)")
        args.exports = args.cache   # where a full census keeps its exports, if it ran here
        if args.cache == os.path.join(CACHE, "census"):
            args.cache = os.path.join(CACHE, "census-graphs")
        sys.exit(check_against(args))
    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    command = " ".join(["tools/zoo_census.py"] + sys.argv[1:])

    names = representative_first(zoo_names())
    if args.only:
        names = [n for n in names if n in args.only]
    rows = []
    t0 = time.time()
    for name in names:
        out_dir = os.path.join(args.cache, name)
        cached = os.path.join(out_dir, "build.json")
        if not args.rebuild and os.path.exists(cached):
            with open(cached) as f:
                built = json.load(f)
        elif args.cached_only or (args.budget and time.time() - t0 > args.budget):
            built = dict(status="not run", why="past the census's time budget")
        else:
            built = run_child(name, out_dir, args.timeout)
            if built["status"] == "timeout":  # remembered, so a rerun does not wait again
                with open(cached, "w") as f:
                    json.dump(built, f)
        row = dict(name=name, family=family(name))
        if built["status"] == "built":
            params = os.path.join(out_dir, "model-0000.params")
            if args.drop_params and os.path.exists(params):
                os.unlink(params)
            ok, err = inspect(args.hybridinfer, out_dir, built["shape"])
            row.update(shape=built["shape"], census="loads" if ok else "fails", why=err)
        else:
            row.update(census=built["status"], why=built.get("why", ""))
        row["seconds"] = built.get("seconds")
        rows.append(row)
        print("%-45s %-10s %s" % (name, row["census"], row.get("why", "")), flush=True)
    rows.sort(key=lambda r: r["name"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows, command, started))
    counts = {}
    for r in rows:
        counts[r["census"]] = counts.get(r["census"], 0) + 1
    print("totals:", counts)


if __name__ == "__main__":
    main()
