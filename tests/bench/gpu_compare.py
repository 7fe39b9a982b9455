#!/usr/bin/env python3
"""hybridinfer's CUDA backend against PyTorch on the same GPU, same run.

    gpu_compare.py --models DIR [--build build] [--batches 1,8,64,128]
                   [--iterations 200] [--markdown FILE]

DIR holds Gluon exports named <model>-symbol.json / <model>-0000.params for
resnet18_v1 and resnet50_v1 (tests/bench/compare.py writes them into
~/.cache/hybridinfer/bench; copy them to the GPU machine: it has no MXNet).

Workloads: ResNet-18 and ResNet-50 at 224x224, latency at batch 1 and
throughput at the larger batches.  Engines:
  ours               hybridinfer bench --device cuda (hybrid mode: one CUDA
                     graph per forward, upload and download included)
  torch-eager        the same architecture in PyTorch, fp32 and fp16
  torch-cudagraph    that model captured with torch.cuda.graphs
  torch-compile      torch.compile(mode="max-autotune")
PyTorch's figures exclude the host copies (its input is already on the
GPU); ours include one upload and one download per forward, so the ratio is
conservative.  The weights are random: speed does not depend on them.  The
ResNets are built here (torchvision's v1 layout: stride in the 3x3 conv of
the bottleneck, as Gluon's resnet50_v1 has it), so torchvision is not
needed.  Ratios are "peer / ours": above 1 means ours is faster.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def resnet(depth):
    import torch.nn as nn

    def conv_bn(cin, cout, k, stride, relu=True):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
                  nn.BatchNorm2d(cout)]
        return nn.Sequential(*layers, nn.ReLU(inplace=True)) if relu \
            else nn.Sequential(*layers)

    class Block(nn.Module):
        def __init__(self, cin, cout, stride, bottleneck):
            super().__init__()
            mid = cout // 4 if bottleneck else cout
            if bottleneck:
                self.body = nn.Sequential(conv_bn(cin, mid, 1, 1),
                                          conv_bn(mid, mid, 3, stride),
                                          conv_bn(mid, cout, 1, 1, relu=False))
            else:
                self.body = nn.Sequential(conv_bn(cin, cout, 3, stride),
                                          conv_bn(cout, cout, 3, 1, relu=False))
            self.down = conv_bn(cin, cout, 1, stride, relu=False) \
                if stride != 1 or cin != cout else nn.Identity()
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.body(x) + self.down(x))

    bottleneck = depth == 50
    counts = [2, 2, 2, 2] if depth == 18 else [3, 4, 6, 3]
    widths = [256, 512, 1024, 2048] if bottleneck else [64, 128, 256, 512]
    layers = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for stage, (n, width) in enumerate(zip(counts, widths)):
        for i in range(n):
            layers.append(Block(cin, width, 2 if i == 0 and stage > 0 else 1,
                                bottleneck))
            cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


def time_torch(fn, iterations, warmup=20):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def torch_engines(depth, batch, iterations):
    import torch
    out = {}
    for dtype in (torch.float32, torch.float16):
        tag = "fp32" if dtype == torch.float32 else "fp16"
        model = resnet(depth).cuda().eval().to(dtype)
        x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)
        with torch.inference_mode():
            out["torch-eager-" + tag] = time_torch(lambda: model(x), iterations)
            graph = torch.cuda.CUDAGraph()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    model(x)
            torch.cuda.current_stream().wait_stream(stream)
            with torch.cuda.graph(graph):
                model(x)
            out["torch-cudagraph-" + tag] = time_torch(graph.replay, iterations)
            try:
                compiled = torch.compile(model, mode="max-autotune")
                out["torch-compile-" + tag] = time_torch(lambda: compiled(x),
                                                         iterations)
            except Exception as e:  # no Triton, no compiler: say so, go on
                print(f"torch.compile unavailable: {e}", file=sys.stderr)
    return out


def ours(build, models, name, batch, iterations):
    cmd = [os.path.join(build, "tools", "hybridinfer"), "bench",
           "--model", os.path.join(models, name + "-symbol.json"),
           "--device", "cuda", "--shape", f"{batch}x3x224x224",
           "--iterations", str(iterations), "--json"]
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                  text=True).stdout)
    return r["latency_ms"]["median"], r.get("per_forward", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--batches", default="1,8,64,128")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no GPU")
    except Exception as e:
        print(f"gpu_compare: no GPU to compare on ({e})", file=sys.stderr)
        return 2

    rows = []
    for depth, name in ((18, "resnet18_v1"), (50, "resnet50_v1")):
        for batch in [int(b) for b in a.batches.split(",")]:
            mine, counts = ours(a.build, a.models, name, batch, a.iterations)
            peers = torch_engines(depth, batch, a.iterations)
            rows.append((name, batch, mine, counts, peers))
            print(f"{name} b{batch}: ours {mine:.3f} ms "
                  f"({batch / mine * 1e3:.0f} img/s; per forward "
                  f"{counts.get('allocations', '?')} allocations, "
                  f"{counts.get('graph_launches', '?')} graph launches); "
                  + ", ".join(f"{k} {v:.3f} ms (x{v / mine:.2f})"
                              for k, v in peers.items()), flush=True)

    if a.markdown:
        engines = sorted({k for r in rows for k in r[4]})
        with open(a.markdown, "w") as f:
            f.write(f"GPU comparison, {datetime.date.today()}, "
                    f"{torch.cuda.get_device_name(0)}, "
                    f"torch {torch.__version__}\n\n")
            f.write("| model | batch | ours ms | img/s | " +
                    " | ".join(f"{e} ms (peer/ours)" for e in engines) + " |\n")
            f.write("|---" * (4 + len(engines)) + "|\n")
            for name, batch, mine, _, peers in rows:
                f.write(f"| {name} | {batch} | {mine:.3f} | "
                        f"{batch / mine * 1e3:.0f} | " +
                        " | ".join(f"{peers[e]:.3f} ({peers[e] / mine:.2f})"
                                   if e in peers else "-" for e in engines)
                        + " |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
