#!/usr/bin/env python3
"""Writes the standard label lists, one label a line, class order:

  pipelines/labels/imagenet1k.txt   ImageNet-1k (ILSVRC 2012), 1000 classes
  pipelines/labels/voc.txt          Pascal VOC, 20 classes
  pipelines/labels/coco.txt         COCO, 80 classes
  pipelines/labels/voc-segmentation.txt   Pascal VOC with background, 21
  pipelines/labels/coco-keypoints.txt     COCO's 17 person keypoints

from GluonCV 0.10.5, the order its model-zoo networks (and MXNet's) use:
ImageNet1kAttr().classes (gluoncv/data/imagenet/classification.py, the
short names, in synset order n01440764 ... n15075141),
VOCDetection.CLASSES (gluoncv/data/pascal_voc/detection.py),
COCODetection.CLASSES (gluoncv/data/mscoco/detection.py),
VOCSegmentation.CLASSES (gluoncv/data/pascal_voc/segmentation.py: class 0
is the background, as its segmentation models count) and
COCOKeyPoints.KEYPOINTS (gluoncv/data/mscoco/keypoints.py, SimplePose's
heatmap order).

The sources are read as text (Python's ast), not imported: GluonCV is
installed with --no-deps into the MXNet venv and its imports need more.

  ~/.cache/hybridinfer/venv/bin/pip install --no-deps gluoncv==0.10.5
  ~/.cache/hybridinfer/venv/bin/python pipelines/make_labels.py
"""
import argparse
import ast
import importlib.metadata
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = "0.10.5"


def assigned(path, name, in_class=None):
    """The literal value assigned to `name` (at module level, or in class
    `in_class`) in the Python file `path`."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    body = tree.body
    if in_class:
        body = next(n.body for n in tree.body
                    if isinstance(n, ast.ClassDef) and n.name == in_class)
    for node in body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    sys.exit(f"{path}: no {name} found")


def write(path, labels, expected):
    if len(labels) != expected:
        sys.exit(f"{path}: {len(labels)} labels, expected {expected}")
    if any(not isinstance(l, str) or "\n" in l or not l for l in labels):
        sys.exit(f"{path}: a label is not a one-line string")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(l + "\n" for l in labels))
    print(f"{path}: {len(labels)} labels")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "labels"))
    args = ap.parse_args()
    try:
        version = importlib.metadata.version("gluoncv")
    except importlib.metadata.PackageNotFoundError:
        sys.exit("gluoncv is not installed: pip install --no-deps "
                 f"gluoncv=={VERSION}")
    if version != VERSION:
        sys.exit(f"gluoncv {version} is installed; the lists come from "
                 f"{VERSION}")
    # find_spec of a top-level package locates it without running it.
    root = os.path.dirname(importlib.util.find_spec("gluoncv").origin)
    data = os.path.join(root, "data")
    os.makedirs(args.out, exist_ok=True)
    imagenet = assigned(os.path.join(data, "imagenet", "classification.py"),
                        "_ILSVRC2012_Attr")
    write(os.path.join(args.out, "imagenet1k.txt"),
          [short for _, short, _ in imagenet], 1000)
    write(os.path.join(args.out, "voc.txt"),
          list(assigned(os.path.join(data, "pascal_voc", "detection.py"),
                        "CLASSES", "VOCDetection")), 20)
    write(os.path.join(args.out, "coco.txt"),
          list(assigned(os.path.join(data, "mscoco", "detection.py"),
                        "CLASSES", "COCODetection")), 80)
    write(os.path.join(args.out, "voc-segmentation.txt"),
          list(assigned(os.path.join(data, "pascal_voc", "segmentation.py"),
                        "CLASSES", "VOCSegmentation")), 21)
    keypoints = assigned(os.path.join(data, "mscoco", "keypoints.py"),
                         "KEYPOINTS", "COCOKeyPoints")
    write(os.path.join(args.out, "coco-keypoints.txt"),
          [keypoints[i] for i in sorted(keypoints)], 17)


if __name__ == "__main__":
    main()
