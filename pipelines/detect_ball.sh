#!/usr/bin/env bash
# detect_ball.sh — the detection demo: videotestsrc's moving ball through the
# hybridinfer element with the shipped ball detector (models/ball-*), its box
# drawn by hybridoverlay and saved as PNG frames; the box of every frame
# printed from the element's bus messages.
#
#   pipelines/detect_ball.sh                 # 200 frames, 320x240, wavy motion
#   MOTION=sweep SIZE=640x480 pipelines/detect_ball.sh
#   OUT=/tmp/balls FRAMES=100 EVERY=5 pipelines/detect_ball.sh
#
# FRAMES (200: the ball's whole wavy path), SIZE (320x240), MOTION (wavy,
# sweep, hsweep), FG and BG (the ball's and the background's colour,
# 0xAARRGGBB), EVERY (save every Nth frame, 10), OUT (the folder for the
# PNGs, /tmp/hybridinfer-ball), DEVICE (auto).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_element hybridinfer hybridoverlay pngenc multifilesink

FRAMES=${FRAMES:-200}
SIZE=${SIZE:-320x240}
MOTION=${MOTION:-wavy}
FG=${FG:-0xffffffff}
BG=${BG:-0xff000000}
EVERY=${EVERY:-10}
OUT=${OUT:-/tmp/hybridinfer-ball}
DEVICE=${DEVICE:-auto}
W=${SIZE%x*}
H=${SIZE#*x}

mkdir -p "$OUT"
rm -f "$OUT"/ball-*.png
echo "== videotestsrc pattern=ball motion=$MOTION ${W}x${H}, $FRAMES frames -> $OUT/ball-NNN.png (every ${EVERY}th)"
# The overlay draws on every frame; a valve-free way to keep every Nth is
# videorate to a lower frame rate (the source runs at 30/1).
gst-launch-1.0 -m \
  videotestsrc pattern=ball num-buffers="$FRAMES" motion="$MOTION" \
    foreground-color="$FG" background-color="$BG" \
  ! "video/x-raw,width=$W,height=$H,framerate=30/1" \
  ! hybridinfer "model=$MODELS/ball-symbol.json" device="$DEVICE" post-messages=true \
  ! hybridoverlay ! videoconvert \
  ! videorate drop-only=true ! "video/x-raw,framerate=30/$EVERY" \
  ! pngenc ! multifilesink location="$OUT/ball-%03d.png" 2>&1 \
  | sed -nE \
      -e 's/.*hybridinfer, frame-number=\(guint64\)([0-9]+),.*latency-us=\(double\)([0-9.e+-]+),.*count=\(int\)([0-9]+),.*scores=\(float\)< ([0-9.e+-]+) >, boxes=\(float\)< < \(float\)([0-9.e+-]+), \(float\)([0-9.e+-]+), \(float\)([0-9.e+-]+), \(float\)([0-9.e+-]+) > >.*/\1 \3 \4 \5 \6 \7 \8 \2/p' \
      -e 's/.*hybridinfer, frame-number=\(guint64\)([0-9]+),.*count=\(int\)0,.*/\1 0/p' \
      -e 's/^(ERROR|WARNING): from element [^ ]*: (.*)/! \1: \2/p' \
  | awk '
      $1 == "!" { print "   " $0; next }
      $2 == 0   { printf "   frame %4d  no ball\n", $1; next }
      { printf "   frame %4d  ball %.2f  x %6.1f y %6.1f  w %5.1f h %5.1f  %6.0f us\n", $1, $3, $4, $5, $6, $7, $8 }'
n=$(find "$OUT" -name 'ball-*.png' | wc -l)
echo "== $n frames with the box drawn in $OUT"
[ "$n" -gt 0 ]
