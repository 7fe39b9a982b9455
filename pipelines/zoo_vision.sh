#!/usr/bin/env bash
# zoo_vision.sh — GluonCV model-zoo exports in the element, drawn by
# hybridoverlay and saved as PNG frames:
#
#   - semantic segmentation: fcn_resnet50_voc on the whole frame
#     (output=segmentation), its class map painted over the video;
#   - pose, top-down as GluonCV runs SimplePose: the shipped ball detector
#     finds the ball, simple_pose_resnet18_v1b runs on each box
#     (inference-region=roi output=pose), keypoints and skeleton drawn.
#
#   pipelines/zoo_vision.sh               # 30 frames each, into /tmp/hybridinfer-zoo
#   OUT=/tmp/zoo FRAMES=60 pipelines/zoo_vision.sh
#
# The exports are the conformance suite's (tests/conformance/gen_fixtures.py:
# GluonCV 0.10.5, pretrained=False — no weights can be downloaded here — with
# seeded random weights, checked against MXNet there), made into the cache
# when missing.  Random weights paint random classes and keypoints: the
# point is the path from export to pixels, every step of which the tests
# check against MXNet.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_element hybridinfer hybridoverlay pngenc multifilesink

FRAMES=${FRAMES:-30}
OUT=${OUT:-/tmp/hybridinfer-zoo}
ZOO=${ZOO:-$CACHE/fixtures/zoo}
SEG=zoo_fcn_resnet50_voc_b1
POSE=zoo_simple_pose_resnet18_v1b_b1

for case in "$SEG" "$POSE"; do
  if [ ! -f "$ZOO/$case/model-symbol.json" ]; then
    echo "== exporting $case with GluonCV into $ZOO"
    "$VENV/bin/python" "$PIPELINES/../tests/conformance/gen_fixtures.py" \
      --set zoo --only "$case" --out "$ZOO" >/dev/null
  fi
done
mkdir -p "$OUT"
rm -f "$OUT"/segment-*.png "$OUT"/pose-*.png

IMAGENET='mean=<0.485,0.456,0.406> std=<0.229,0.224,0.225> scale=0-1'
echo "== fcn_resnet50_voc on videotestsrc pattern=smpte -> $OUT/segment-NNN.png"
# shellcheck disable=SC2086 # IMAGENET holds several properties
gst-launch-1.0 -q videotestsrc pattern=smpte num-buffers="$FRAMES" \
  ! video/x-raw,width=320,height=240 \
  ! hybridinfer "model=$ZOO/$SEG/model-symbol.json" output=segmentation \
      input-size=64x64 "labels=$PIPELINES/labels/voc-segmentation.txt" $IMAGENET \
  ! hybridoverlay map-alpha=0.6 ! videoconvert ! pngenc \
  ! multifilesink "location=$OUT/segment-%03d.png"

echo "== ball detector, then simple_pose_resnet18_v1b on its box -> $OUT/pose-NNN.png"
# shellcheck disable=SC2086
gst-launch-1.0 -q videotestsrc pattern=ball num-buffers="$FRAMES" \
  ! video/x-raw,width=320,height=240 \
  ! hybridinfer "model=$MODELS/ball-symbol.json" \
  ! hybridinfer "model=$ZOO/$POSE/model-symbol.json" inference-region=roi \
      output=pose input-size=96x128 "labels=$PIPELINES/labels/coco-keypoints.txt" \
      $IMAGENET \
  ! hybridoverlay keypoint-threshold=-1000 ! videoconvert ! pngenc \
  ! multifilesink "location=$OUT/pose-%03d.png"

echo "== $(find "$OUT" -name 'segment-*.png' | wc -l) segmentation and $(find "$OUT" -name 'pose-*.png' | wc -l) pose frames in $OUT"
