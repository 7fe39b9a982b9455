#!/usr/bin/python3
"""Many 720p streams through hybridinfer in one process: shared engine vs independent instances
vs the bare engine (issue 13, "One model, many streams").

    /usr/bin/python3 tests/bench/multistream.py [--streams 1,2,4,8] [--frames F] [--warmup W]
        [--model PREFIX-symbol.json] [--threads T] [--repeat R] [--modes shared,independent]
        [--build-dir build [--build-label TEXT]] [--json FILE] [--markdown FILE]

Needs Debian's python3-gi (/usr/bin/python3) and a build (build/gst-plugin, build/tools).  Set
OPENBLAS_CORETYPE in the environment (SkylakeX on this Zen 5 machine, docs/PERFORMANCE.md); it
is passed on to every process and printed in the header.  Other engineers rebuild build/ while
they work: for figures to keep, build a fixed commit elsewhere (git archive COMMIT | tar -x -C
SRC; meson setup DIR SRC -Dtests=false; ninja -C DIR) and pass --build-dir DIR --build-label
COMMIT.

For each N in --streams, one process (a fresh subprocess per configuration, so that its peak
RSS is its own) runs one pipeline of N branches:

    videotestsrc is-live=false pattern=<solid> num-buffers=W+F
      ! video/x-raw,format=I420,width=1280,height=720
      ! hybridinfer model=M input-size=224x224 color-order=rgb scale=0-1
          mean=<0.485,0.456,0.406> std=<0.229,0.224,0.225> device=cpu <mode>
      ! fakesink sync=false

The sources are solid colours (black, white, red, green, blue, then solid-color with other
foreground colours): painting one costs little next to a forward, so the figures measure the
element and its engine, not the source.  A "source" row (no hybridinfer) at the largest N gives
the sources' own rate for comparison.

Modes:
  shared        every branch shared-engine=bench batch-size=min(N, 8): one model, one
                scheduler batching the N streams
  independent   every branch its own model, batch-size=1 (N models, N thread pools)

Measured per configuration, in the worker, by pad probes on every hybridinfer's sink and src pad:
  frames/s   aggregate: the frames that left all hybridinfers after the first N*W (the warm-up:
             W frames per stream, which include planning and the first batches) over the wall
             time from the (N*W)-th buffer to the last one
  latency    per buffer, from its sink pad to its src pad (all the time the frame spends in the
             element: waiting for the engine, conversion, the batch, decoding), p50 and p99 over
             every timed buffer of every stream; "engine" latency is the per-buffer result's own
             "latency-us" field (GstHybridTensorMeta's results structure, read through the
             GstHybrid-1.0 typelib: from the frame's slot being taken to its result)
  stream fps the slowest and fastest stream's own rate (fairness)
  idle       shared mode, N <= 8: batch k holds frame k of every stream; the time from the
             first result of batch k leaving the element to the last frame of batch k+1 reaching
             its sink pad, when the engine has nothing to run (p50, and its share of the mean
             batch interval)
  CPU        process CPU time over wall time in the timed window (2.00 = both cores busy)
  RSS        VmHWM (peak resident set) of the worker process

The bare engine: `hybridinfer bench --json` on the same model at batch B = min(N, 8), same
threads: frames/s = B / median forward.  "÷ bare" divides either mode's frames/s by the bare
engine's at batch min(N, 8) (issue 13's target: shared >= 0.9x bare at 8 streams).  Each round
runs, per N, bare then shared then independent, so that the ratios compare runs seconds apart.
With --repeat R the table gives, for each N, the round (bare and every mode together, never
mixed across rounds) in which the rest of the machine used the least CPU, and prints the shared
/ bare ratio of every round under it.

"others' CPU" is what the rest of the machine used while a configuration ran (then while its
bare run ran): /proc/stat's busy time minus our child's CPU time, in cores.  The 1-minute load
average before and after is printed too, but it counts our own threads (8 independent models
of 2 threads each make a load of ~16 by themselves), so it says little about neighbours.

Defaults: streams 1,2,4,8; F = 480/N timed frames per stream (480 per configuration), W = 8;
2 rounds; about 4 minutes on 2 cores.
"""

import argparse
import datetime
import json
import math
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.expanduser(
    "~/.cache/hybridinfer/fixtures/zoo/zoo_resnet18_v1_b1/model-symbol.json")
WIDTH, HEIGHT = 1280, 720
MAX_BATCH = 8
SOLID = ["black", "white", "red", "green", "blue"]
WORKER_TIMEOUT_S = 1800


def solid_source(i):
    """A cheap videotestsrc pattern for stream i (every one a solid colour)."""
    if i < len(SOLID):
        return f"pattern={SOLID[i]}"
    # solid-color with a distinct ARGB foreground
    v = (0x20 + 0x1f * i) & 0xff
    return f"pattern=solid-color foreground-color=0xff{v:02x}{(255 - v):02x}{(v * 3) & 0xff:02x}"


def infer_props(args):
    return (f"model={args.model} input-size={args.input_size} color-order=rgb scale={args.scale}"
            f" mean=<{args.mean}> std=<{args.std}> device=cpu")


def pipeline_desc(args, mode, n, buffers):
    branches = []
    for i in range(n):
        src = (f"videotestsrc is-live=false {solid_source(i)} num-buffers={buffers}"
               f" ! video/x-raw,format=I420,width={WIDTH},height={HEIGHT}")
        if mode == "source":
            branches.append(f"{src} ! identity name=inf{i} ! fakesink sync=false")
            continue
        extra = (f"shared-engine=bench batch-size={min(n, MAX_BATCH)}" if mode == "shared"
                 else "batch-size=1")
        branches.append(f"{src} ! hybridinfer name=inf{i} {infer_props(args)} {extra}"
                        " ! fakesink sync=false")
    return "  ".join(branches)


# ---- the worker: one configuration in this process -----------------------------------------

def proc_status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def worker(args):
    import threading

    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    try:
        gi.require_version("GstHybrid", "1.0")
        from gi.repository import GstHybrid
    except (ValueError, ImportError):
        GstHybrid = None
    Gst.init(None)

    n, warm, frames, mode = args.n, args.warmup, args.frames, args.mode
    pipeline = Gst.parse_launch(pipeline_desc(args, mode, n, warm + frames))
    lock = threading.Lock()
    t_in = [dict() for _ in range(n)]      # pts -> monotonic ns at the sink pad
    arrive = [[] for _ in range(n)]        # per stream, per frame: ns at the sink pad
    leave = [[] for _ in range(n)]         # per stream, per frame: ns at the src pad
    out_count = [0] * n                    # buffers out per stream
    timed_out = [0] * n                    # timed buffers out per stream
    first_timed = [None] * n
    last_out = [None] * n
    latency = []                           # ms, sink -> src, timed buffers
    engine_latency = []                    # ms, the meta's latency-us, timed buffers
    not_inferred = [0]
    state = {"total": 0, "t0": None, "cpu0": None, "t_last": None, "cpu_last": None}
    warm_total = n * warm

    # PyGObject resolves a boxed type's fields and methods on first use, and that is not safe
    # when several streaming threads do it at once ("'Buffer' object has no attribute 'pts'"
    # once in a few runs of 8 streams): use each one here first, on this thread.
    warm_buf = Gst.Buffer.new()
    _ = (warm_buf.pts, Gst.PadProbeInfo.get_buffer)
    if GstHybrid is not None:
        _ = (GstHybrid.buffer_get_hybrid_tensor_meta(warm_buf),
             GstHybrid.HybridTensorMeta.is_inferred, GstHybrid.HybridTensorMeta.get_results,
             Gst.Structure.get_double)
    probe_errors = []

    def guarded(fn):
        """A probe that raised would return None, which is DROP: keep the buffer, record it."""
        def probe(pad, info, i):
            try:
                fn(pad, info, i)
            except Exception as e:  # noqa: BLE001 - reported after the run
                with lock:
                    probe_errors.append(repr(e))
            return Gst.PadProbeReturn.OK
        return probe

    @guarded
    def on_sink(pad, info, i):
        buf = info.get_buffer()
        now = time.monotonic_ns()
        t_in[i][buf.pts] = now
        arrive[i].append(now)

    @guarded
    def on_src(pad, info, i):
        now = time.monotonic_ns()
        cpu = time.process_time()
        buf = info.get_buffer()
        t0 = t_in[i].pop(buf.pts, None)
        eng = None
        if GstHybrid is not None and mode != "source":
            meta = GstHybrid.buffer_get_hybrid_tensor_meta(buf)
            if meta is not None:
                if meta.is_inferred():
                    res = meta.get_results()
                    if res is not None:
                        ok, us = res.get_double("latency-us")
                        eng = us / 1000.0 if ok else None
                else:
                    eng = False
        with lock:
            idx = out_count[i]
            leave[i].append(now)
            out_count[i] += 1
            state["total"] += 1
            if state["total"] == warm_total:
                state["t0"], state["cpu0"] = now, cpu
            state["t_last"], state["cpu_last"] = now, cpu
            if idx >= warm:
                timed_out[i] += 1
                if first_timed[i] is None:
                    first_timed[i] = now
                last_out[i] = now
                if t0 is not None:
                    latency.append((now - t0) / 1e6)
                if eng is False:
                    not_inferred[0] += 1
                elif eng is not None:
                    engine_latency.append(eng)

    elements = []
    for i in range(n):
        el = pipeline.get_by_name(f"inf{i}")
        elements.append(el)
        el.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_sink, i)
        el.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, on_src, i)

    rss_before = proc_status_kib("VmRSS")
    wall0 = time.monotonic()
    pipeline.set_state(Gst.State.PLAYING)
    bus = pipeline.get_bus()
    msg = bus.timed_pop_filtered(Gst.CLOCK_TIME_NONE,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    wall = time.monotonic() - wall0
    error = None
    if msg and msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        error = f"{err.message} ({dbg})"
    rss_end = proc_status_kib("VmRSS")
    inferred = skipped = None
    if mode != "source":
        inferred = sum(el.get_property("frames-inferred") for el in elements)
        skipped = sum(el.get_property("frames-skipped") for el in elements)
    pipeline.set_state(Gst.State.NULL)

    timed = state["total"] - warm_total
    dt = ((state["t_last"] - state["t0"]) / 1e9) if state["t0"] is not None else float("nan")
    stream_fps = []
    for i in range(n):
        if timed_out[i] > 1 and last_out[i] > first_timed[i]:
            stream_fps.append((timed_out[i] - 1) / ((last_out[i] - first_timed[i]) / 1e9))
    # The shared engine in lockstep (batch = streams, one frame of each stream in flight): batch k
    # holds frame k of every stream.  Between the first result of batch k leaving and the last
    # frame of batch k+1 arriving, the engine has nothing to run ("gap": the streams push their
    # buffers on, their sources make the next frames, their probes run, all at once on the
    # cores); from that arrival to the first result of batch k+1: that frame's conversion, the
    # forward and the decoding ("busy").
    gaps, busys = [], []
    complete = all(len(x) == warm + frames for x in arrive + leave)
    if not probe_errors and mode == "shared" and n <= MAX_BATCH and complete:
        for k in range(warm, warm + frames - 1):
            first_out = min(leave[i][k] for i in range(n))
            last_in = max(arrive[i][k + 1] for i in range(n))
            next_out = min(leave[i][k + 1] for i in range(n))
            gaps.append((last_in - first_out) / 1e6)
            busys.append((next_out - last_in) / 1e6)
    out = {
        "mode": mode, "streams": n, "batch": min(n, MAX_BATCH) if mode == "shared" else 1,
        "warmup_per_stream": warm, "frames_per_stream": frames,
        "buffers_out": state["total"], "timed_frames": timed, "timed_s": dt,
        "fps": timed / dt if dt and dt > 0 else float("nan"),
        "cpu_util": ((state["cpu_last"] - state["cpu0"]) / dt) if dt and dt > 0 else None,
        "latency_ms": {"p50": percentile(latency, 50), "p99": percentile(latency, 99),
                       "mean": statistics.fmean(latency) if latency else float("nan"),
                       "n": len(latency)},
        "engine_latency_ms": ({"p50": percentile(engine_latency, 50),
                               "p99": percentile(engine_latency, 99), "n": len(engine_latency)}
                              if engine_latency else None),
        "not_inferred": not_inferred[0],
        "batch_gap_ms": ({"p50": percentile(gaps, 50), "mean": statistics.fmean(gaps),
                          "p99": percentile(gaps, 99)} if gaps else None),
        "batch_busy_ms": ({"p50": percentile(busys, 50), "mean": statistics.fmean(busys)}
                          if busys else None),
        "stream_fps_min": min(stream_fps) if stream_fps else None,
        "stream_fps_max": max(stream_fps) if stream_fps else None,
        "frames_inferred": inferred, "frames_skipped": skipped,
        "vmhwm_kib": proc_status_kib("VmHWM"), "rss_before_play_kib": rss_before,
        "rss_end_kib": rss_end, "wall_s": wall, "error": error,
        "probe_errors": len(probe_errors),
    }
    if probe_errors:
        sys.stderr.write(f"multistream: {len(probe_errors)} probe errors, first: "
                         f"{probe_errors[0]}\n")
    print(json.dumps(out))
    return 0 if (error is None and not probe_errors
                 and state["total"] == n * (warm + frames)) else 1


# ---- the driver ---------------------------------------------------------------------------

def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_busy_s():
    """Busy CPU seconds of the whole machine so far (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class Neighbours:
    """The CPU the rest of the machine used while a child ran: the load average counts our
    own threads too (8 streams and their compute threads make a load of 8 by themselves), so
    the table reports the machine's busy time minus ours, in cores."""

    def __enter__(self):
        self.t, self.busy, self.own = time.monotonic(), cpu_busy_s(), children_cpu_s()
        self.load0 = load1()
        return self

    def __exit__(self, *exc):
        dt = time.monotonic() - self.t
        self.load = (self.load0, load1())
        self.cores = max(0.0, (cpu_busy_s() - self.busy - (children_cpu_s() - self.own)) / dt)
        return False


def cpu_name():
    fam = model = name = stepping = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k == "cpu family" and fam is None:
                fam = v
            elif k == "model" and model is None:
                model = v
            elif k == "model name" and name is None:
                name = v
            elif k == "stepping" and stepping is None:
                stepping = v
    return f"{name} (family {fam} model {model} stepping {stepping})"


def worker_env(args):
    env = dict(os.environ)
    plugin = os.path.join(args.build_dir, "gst-plugin")
    lib = os.path.join(plugin, "lib", "gst", "hybrid")
    env["GST_PLUGIN_PATH"] = plugin
    env["GI_TYPELIB_PATH"] = lib + (":" + env["GI_TYPELIB_PATH"] if env.get("GI_TYPELIB_PATH")
                                    else "")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                                    else "")
    env["HYBRIDINFER_THREADS"] = str(args.threads)
    # A registry of our own: no rescan of a registry other builds keep touching.
    env["GST_REGISTRY"] = args.registry
    return env


def run_worker(args, mode, n, frames):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--mode", mode, "--n", str(n),
           "--frames", str(frames), "--warmup", str(args.warmup), "--model", args.model,
           "--input-size", args.input_size, "--mean", args.mean, "--std", args.std,
           "--scale", args.scale]
    with Neighbours() as nb:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(args),
                              timeout=WORKER_TIMEOUT_S)
    res = None
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            res = json.loads(line)
    if res is None or proc.returncode != 0:
        sys.stderr.write(f"multistream: {mode} x{n} failed (exit {proc.returncode})\n"
                         f"{proc.stdout}{proc.stderr[-3000:]}\n")
        if res is None:
            res = {"mode": mode, "streams": n, "fps": float("nan"), "error": proc.stderr[-2000:]}
    res["load"], res["neighbours"] = nb.load, nb.cores
    return res


def run_bare(args, batch):
    h, w = args.input_size.split("x")
    iters = max(8, 240 // batch)
    cmd = [os.path.join(args.build_dir, "tools", "hybridinfer"), "bench", "-m", args.model,
           "-s", f"{batch}x3x{h}x{w}", "-n", str(iters), "-w", "3", "-t", str(args.threads),
           "-d", "cpu", "--json"]
    with Neighbours() as nb:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WORKER_TIMEOUT_S)
    if proc.returncode != 0:
        sys.stderr.write(f"multistream: bare bench at batch {batch} failed\n{proc.stderr}\n")
        return {"batch": batch, "fps": float("nan"), "load": nb.load, "neighbours": nb.cores}
    j = json.loads(proc.stdout)
    med = j["latency_ms"]["median"]
    return {"batch": batch, "fps": batch * 1000.0 / med, "median_ms": med,
            "iterations": iters, "blas_core": j.get("blas_core"), "load": nb.load,
            "neighbours": nb.cores}


def quietest(groups):
    """Of one N's rounds (each: its bare run and its runs of every mode, seconds apart), the one
    the rest of the machine disturbed least; ties go to the faster shared engine."""
    def key(g):
        nb = max((r.get("neighbours") or 0.0) for r in g.values())
        return (round(nb, 1), -(g.get("shared") or {}).get("fps", 0.0))
    return min(groups, key=key)


def ratio(g, mode):
    r, b = g.get(mode), g.get("bare")
    if not r or not b or not b.get("fps"):
        return float("nan")
    return r.get("fps", float("nan")) / b["fps"]


def fmt(v, spec=".1f"):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return format(v, spec)


def load_range(*runs):
    vals = [x for r in runs if r for x in r.get("load", ())]
    return f"{min(vals):.1f}–{max(vals):.1f}" if vals else "–"


def neighbours(*runs):
    vals = [r["neighbours"] for r in runs if r and r.get("neighbours") is not None]
    return "/".join(f"{v:.1f}" for v in vals) if vals else "–"


def gap_cell(r):
    gap, busy = r.get("batch_gap_ms"), r.get("batch_busy_ms")
    if not gap or not busy:
        return "–"
    share = gap["mean"] / (gap["mean"] + busy["mean"])
    return f"{gap['p50']:.2f} ({100 * share:.1f} %)"


def table(args, streams, chosen, source):
    lines = []
    lines.append("| streams | mode | batch | frames/s | bare engine frames/s (batch) | "
                 "÷ bare | stream fps min–max | latency p50 / p99 ms | engine latency p50 / p99 "
                 "ms | engine idle between batches ms (share) | CPU (cores) | peak RSS MiB | "
                 "others' CPU (cores) | load |")
    lines.append("|---:|---|---:|---:|---:|---:|---|---|---|---|---:|---:|---|---|")
    for n in streams:
        g = chosen[n]
        b = g.get("bare")
        for mode in args.modes:
            r = g.get(mode)
            if r is None:
                continue
            rt = ratio(g, mode)
            lat = r.get("latency_ms") or {}
            eng = r.get("engine_latency_ms") or {}
            lines.append(
                f"| {n} | {mode} | {r.get('batch', '–')} | {fmt(r['fps'])} | "
                f"{fmt(b['fps'] if b else None)} ({min(n, MAX_BATCH)}) | {fmt(rt, '.2f')}× | "
                f"{fmt(r.get('stream_fps_min'))}–{fmt(r.get('stream_fps_max'))} | "
                f"{fmt(lat.get('p50'))} / {fmt(lat.get('p99'))} | "
                f"{fmt(eng.get('p50'))} / {fmt(eng.get('p99'))} | {gap_cell(r)} | "
                f"{fmt(r.get('cpu_util'), '.2f')} | "
                f"{fmt((r.get('vmhwm_kib') or float('nan')) / 1024, '.0f')} | "
                f"{neighbours(r, b)} | {load_range(r, b)} |")
    if source:
        lines.append(
            f"| {source['streams']} | source only (no hybridinfer) | – | {fmt(source['fps'])} "
            f"| – | – | {fmt(source.get('stream_fps_min'))}–"
            f"{fmt(source.get('stream_fps_max'))} | – | – | – | "
            f"{fmt(source.get('cpu_util'), '.2f')} | "
            f"{fmt((source.get('vmhwm_kib') or float('nan')) / 1024, '.0f')} | "
            f"{neighbours(source)} | {load_range(source)} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streams", default="1,2,4,8", help="comma-separated stream counts")
    ap.add_argument("--frames", type=int, default=0,
                    help="timed frames per stream (default: 480/N, i.e. 480 per configuration)")
    ap.add_argument("--warmup", type=int, default=8, help="untimed frames per stream first")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="PREFIX-symbol.json")
    ap.add_argument("--input-size", default="224x224")
    ap.add_argument("--mean", default="0.485,0.456,0.406")
    ap.add_argument("--std", default="0.229,0.224,0.225")
    ap.add_argument("--scale", default="0-1")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2,
                    help="compute threads per model (HYBRIDINFER_THREADS; bench -t)")
    ap.add_argument("--repeat", type=int, default=2, help="rounds; the best frames/s is kept")
    ap.add_argument("--modes", default="shared,independent")
    ap.add_argument("--no-source", action="store_true", help="skip the source-only row")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--build-label", help="what the build is (e.g. its commit), for the header")
    ap.add_argument("--json", help="write every run as JSON here")
    ap.add_argument("--markdown", help="write the header and table here")
    # worker
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.model = os.path.abspath(os.path.expanduser(args.model))
    if args.worker:
        return worker(args)

    args.modes = [m for m in args.modes.split(",") if m]
    for m in args.modes:
        if m not in ("shared", "independent"):
            ap.error(f"unknown mode {m}")
    streams = [int(s) for s in args.streams.split(",") if s]
    args.build_dir = os.path.abspath(args.build_dir)
    for p in (args.model, os.path.join(args.build_dir, "gst-plugin", "libgsthybridinfer.so"),
              os.path.join(args.build_dir, "tools", "hybridinfer")):
        if not os.path.exists(p):
            sys.exit(f"multistream: {p} not found")
    tmp = tempfile.TemporaryDirectory(prefix="hy-multistream-")
    args.registry = os.path.join(tmp.name, "registry.bin")

    if args.build_label:
        built = args.build_label
    elif os.path.dirname(args.build_dir) == ROOT:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no", "--", "gst-plugin", "core", "kernels"],
                               capture_output=True, text=True).stdout.strip()
        built = f"commit {commit}" + (" (+ uncommitted engine/plugin changes in the tree)"
                                      if dirty else "")
    else:
        built = "a build outside this checkout (--build-label says which)"
    header = [
        f"date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; machine: {cpu_name()}, "
        f"{os.cpu_count()} CPUs",
        f"build: {args.build_dir}: {built}",
        f"model: {args.model}; input {args.input_size}; device cpu; {args.threads} compute "
        f"threads per model; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}",
        f"sources: videotestsrc is-live=false, solid colours, I420 {WIDTH}x{HEIGHT}, "
        f"fakesink sync=false; warm-up {args.warmup} frames per stream; "
        f"timed frames per stream {args.frames or '480/N'}; {args.repeat} round(s)",
        f"command: {' '.join(shlex.quote(a) for a in sys.argv)}",
        f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}",
    ]
    for h in header:
        print(h, flush=True)

    # First Gst.init scans into our registry: do it before any timing.
    subprocess.run([sys.executable, "-c", "import gi; gi.require_version('Gst','1.0'); "
                    "from gi.repository import Gst; Gst.init(None)"], env=worker_env(args))

    groups, source, runs = {n: [] for n in streams}, None, []
    for rnd in range(args.repeat):
        for n in streams:
            frames = args.frames or max(1, 480 // n)
            g = {"bare": run_bare(args, min(n, MAX_BATCH))}
            b = g["bare"]
            print(f"round {rnd + 1} N={n}: bare b{b['batch']} {fmt(b['fps'])} f/s "
                  f"(others {b['neighbours']:.1f} cores, load {b['load'][0]:.1f})", flush=True)
            for mode in args.modes:
                r = run_worker(args, mode, n, frames)
                g[mode] = r
                print(f"round {rnd + 1} N={n}: {mode} {fmt(r['fps'])} f/s "
                      f"({fmt(ratio(g, mode), '.2f')}× bare), latency p50 "
                      f"{fmt((r.get('latency_ms') or {}).get('p50'))} ms, "
                      f"CPU {fmt(r.get('cpu_util'), '.2f')}, "
                      f"VmHWM {fmt((r.get('vmhwm_kib') or float('nan')) / 1024, '.0f')} MiB "
                      f"(others {r['neighbours']:.1f} cores, load {r['load'][0]:.1f})",
                      flush=True)
            groups[n].append(g)
            runs.append({"round": rnd, "streams": n, **g})
    if not args.no_source:
        n = max(streams)
        source = run_worker(args, "source", n, args.frames or max(1, 480 // n))
        runs.append({"source": source})

    chosen = {n: quietest(groups[n]) for n in streams}
    print()
    t = table(args, streams, chosen, source)
    per_round = "; ".join(
        f"N={n}: " + ", ".join(f"{ratio(g, m):.2f}" for g in groups[n])
        for m in args.modes[:1] for n in streams)
    notes = [f"each N: the round the rest of the machine disturbed least (of {args.repeat}); "
             f"{args.modes[0]} ÷ bare in every round, {per_round}",
             f"uptime at the end: "
             f"{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}"]
    print(t)
    print("\n".join(notes))
    if 8 in chosen and "shared" in args.modes:
        rt = ratio(chosen[8], "shared")
        print(f"8 streams, shared engine / bare engine at batch 8: {rt:.2f}× "
              f"(issue 13's target: ≥ 0.9×) — {'met' if rt >= 0.9 else 'MISSED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "runs": runs}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(header) + "\n\n" + t + "\n\n" + "\n".join(notes) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
