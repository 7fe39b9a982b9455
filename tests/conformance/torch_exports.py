#!/usr/bin/env python3
"""Real exporters' ONNX files, made with seeded random weights: run by the torch venv.

    torch_exports.py OUT_DIR

Writes into OUT_DIR (skipping a file already there):

- resnet50.onnx, mobilenet_v3_small.onnx: torchvision 0.20's models (weights=None, seeded),
  exported by torch.onnx.export (the TorchScript exporter, opset 17) at 1x3x224x224, input
  `data`, output `output`.
- yolov8n.onnx: Ultralytics' YOLOv8n built from yolov8n.yaml (seeded, no weights downloaded),
  exported by `model.export(format="onnx", opset=17, imgsz=640)` with Ultralytics' own default
  simplification (onnxslim): input `images` 1x3x640x640, output `output0` (1, 84, 8400).
- yolov8n-nms.onnx: the same exported with nms=True: output0 (1, 300, 6), NMS in the graph.
- ssdlite320-head.onnx: torchvision's SSDlite320 MobileNetV3-Large (weights=None,
  weights_backbone=None, seeded), its backbone and head as the detector runs them, exported
  without the detector's transform and post-processing: input `data` 1x3x320x320, outputs
  `boxes` (1, 3234, 4) (box regression per anchor) and `scores` (1, 3234, 91) (class logits).
- ssdlite320.onnx: the whole detector as torchvision exports it (resize, normalise, per-class
  score filtering and NMS in the graph, every shape data-dependent): input `images` (3, 320,
  320), for the importer to refuse.

It runs in ~/.cache/hybridinfer/torch-venv (tools/setup.sh makes it), never in the MXNet venv:
torch needs a numpy that MXNet 1.9.1 cannot load.  Nothing here may touch the network, so
Ultralytics is told it is offline, may not pip-install, and keeps its settings inside OUT_DIR.
"""

import os
import shutil
import sys

SEED = 20261202
TORCHVISION_MODELS = ("resnet50", "mobilenet_v3_small")
OPSET = 17


def write_atomically(path, export):
    """export(tmp_path) then rename, so that an interrupted export leaves no file behind that a
    later run would take as done."""
    tmp = path + ".tmp%d.onnx" % os.getpid()
    export(tmp)
    os.replace(tmp, path)


def calibrate_batchnorm(net, size):
    """Give every BatchNorm the statistics of its own input on a few seeded images, as training
    would: with untrained statistics (mean 0, variance 1) activations shrink layer by layer and
    MobileNetV3's logits come out about 1e-9, where any importer error would pass unseen."""
    import torch
    bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # a plain average over the calibration batches
    gen = torch.Generator().manual_seed(SEED)
    net.train()
    with torch.no_grad():
        for _ in range(2):
            net(torch.rand(4, 3, size, size, generator=gen))
    net.eval()


def export_torchvision(out_dir):
    import torch
    import torchvision
    for name in TORCHVISION_MODELS:
        path = os.path.join(out_dir, name + ".onnx")
        if os.path.isfile(path):
            continue
        torch.manual_seed(SEED)
        net = getattr(torchvision.models, name)(weights=None)
        calibrate_batchnorm(net, 224)
        # dynamo=False: torch 2.5's default exporter, the one deployed models come from.
        write_atomically(path, lambda tmp: torch.onnx.export(
            net, torch.rand(1, 3, 224, 224), tmp, opset_version=OPSET,
            input_names=["data"], output_names=["output"], dynamo=False))
        print("exported %s" % path)


def ssd_backbone_and_head(detector):
    """The part of torchvision's SSD that is a plain network: the feature extractor and the
    box and class heads, returning the head's two tensors."""
    import torch

    class BackboneAndHead(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = detector.backbone
            self.head = detector.head

        def forward(self, x):
            out = self.head(list(self.backbone(x).values()))
            return out["bbox_regression"], out["cls_logits"]

    return BackboneAndHead()


def export_ssdlite(out_dir):
    import torch
    import torchvision
    head_path = os.path.join(out_dir, "ssdlite320-head.onnx")
    full_path = os.path.join(out_dir, "ssdlite320.onnx")
    if os.path.isfile(head_path) and os.path.isfile(full_path):
        return
    torch.manual_seed(SEED)
    detector = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None)
    net = ssd_backbone_and_head(detector)
    calibrate_batchnorm(net, 320)
    detector.eval()
    if not os.path.isfile(head_path):
        write_atomically(head_path, lambda tmp: torch.onnx.export(
            net, torch.rand(1, 3, 320, 320), tmp, opset_version=OPSET, input_names=["data"],
            output_names=["boxes", "scores"], dynamo=False))
        print("exported %s" % head_path)
    if not os.path.isfile(full_path):
        # The detector takes a list of images; the tuple around it says "one argument".
        write_atomically(full_path, lambda tmp: torch.onnx.export(
            detector, ([torch.rand(3, 320, 320)],), tmp, opset_version=OPSET,
            input_names=["images"], dynamo=False))
        print("exported %s" % full_path)


# Each file and what export() is given beyond format, opset and size: nms=True puts
# Ultralytics' NMS into the graph (output0 (1, 300, 6)), which the importer refuses.
YOLO_EXPORTS = {"yolov8n": {}, "yolov8n-nms": {"nms": True}}


def export_yolov8n(out_dir):
    todo = [n for n in YOLO_EXPORTS if not os.path.isfile(os.path.join(out_dir, n + ".onnx"))]
    if not todo:
        return
    # Set before the import: Ultralytics reads them once, when it loads.  It takes only "true"
    # as offline (not "1"); offline it sends no events and checks no updates.  Without
    # YOLO_AUTOINSTALL=false a requirement it finds missing is pip-installed by whatever `pip`
    # is on PATH, outside this venv: fail the export instead.
    os.environ["YOLO_OFFLINE"] = "true"
    os.environ["YOLO_AUTOINSTALL"] = "false"
    os.environ["YOLO_CONFIG_DIR"] = os.path.join(out_dir, "ultralytics-config")
    import torch
    from ultralytics import YOLO
    from ultralytics import utils as ultralytics_utils
    if ultralytics_utils.ONLINE:
        sys.exit("torch_exports.py: Ultralytics still thinks it is online (YOLO_OFFLINE ignored?)")
    for name in todo:
        # A fresh model each time: export() fuses the one it is given.
        torch.manual_seed(SEED)
        model = YOLO("yolov8n.yaml")
        calibrate_batchnorm(model.model, 640)
        # Detect's class biases start at the prior of an untrained head (about -10: scores
        # near 1e-4); at 0 the scores spread over (0, 1), where a wrong score shows.
        with torch.no_grad():
            for branch in model.model.model[-1].cv3:
                branch[-1].bias.zero_()
        # Ultralytics writes beside the source model, here the working directory: a private
        # one.
        work = os.path.join(out_dir, "%s-export.%d" % (name, os.getpid()))
        os.makedirs(work, exist_ok=True)
        here = os.getcwd()
        os.chdir(work)
        try:
            made = model.export(format="onnx", opset=OPSET, imgsz=640, simplify=True,
                                **YOLO_EXPORTS[name])
        finally:
            os.chdir(here)
        path = os.path.join(out_dir, name + ".onnx")
        os.replace(os.path.join(work, made), path)
        shutil.rmtree(work, ignore_errors=True)
        print("exported %s" % path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = os.path.abspath(sys.argv[1])
    os.makedirs(out_dir, exist_ok=True)
    export_torchvision(out_dir)
    export_ssdlite(out_dir)
    export_yolov8n(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
