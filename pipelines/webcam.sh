#!/usr/bin/env bash
# webcam.sh — the patterns model on a live camera, results drawn on the picture.
#
#   pipelines/webcam.sh [/dev/videoN]
#
#   v4l2src ! videoconvert ! hybridinfer model=pipelines/models/... \
#     ! hybridoverlay ! videoconvert ! autovideosink
#
# The model knows videotestsrc's patterns, not the world: point the camera
# at a screen showing one (e.g. `gst-launch-1.0 videotestsrc pattern=pinwheel
# ! autovideosink`) and expect confident labels only when the pattern fills
# the view.  The label of every frame is printed too; Ctrl-C stops.
#
# Environment:
#   SINK      video sink (default autovideosink, or fakesink without a display)
#   INTERVAL  infer every Nth frame (default 1)
#   DEVICE    the element's device property (default auto)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CAMERA="${1:-/dev/video0}"
if [ ! -e "$CAMERA" ]; then
  echo "webcam.sh: no camera at $CAMERA (usage: pipelines/webcam.sh [/dev/videoN])" >&2
  exit 1
fi
require_element v4l2src videoconvert hybridinfer hybridoverlay
read -r -a sink <<<"$(hy_video_sink)"
require_element "${sink[0]}"

echo "== $CAMERA through hybridinfer (pipelines/models/patterns) into ${sink[*]}"
gst-launch-1.0 -m -e v4l2src "device=$CAMERA" ! videoconvert \
  ! "${PATTERNS_INFER[@]}" "interval=${INTERVAL:-1}" "device=${DEVICE:-auto}" post-messages=true \
  ! hybridoverlay ! videoconvert ! "${sink[@]}" 2>&1 | hy_messages | hy_print_frames
