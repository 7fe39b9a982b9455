#!/usr/bin/env bash
# file.sh — the patterns model on a video file, results drawn on the picture.
#
#   pipelines/file.sh [VIDEO]
#
#   filesrc location=VIDEO ! decodebin ! videoconvert \
#     ! hybridinfer model=pipelines/models/... ! hybridoverlay \
#     ! videoconvert ! autovideosink
#
# Any file GStreamer can decode.  Without VIDEO, a sample is made first: four
# seconds of test patterns (smpte, ball, pinwheel, zone-plate) encoded as
# VP8 in WebM, so the run also shows the model on lossy, decoded frames.
# The label of every frame is printed, then frames/s.
#
# Environment:
#   SINK      video sink (default autovideosink, or fakesink without a display)
#   KEEP=1    keep the sample clip (its path is printed)
#   DEVICE    the element's device property (default auto)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_element filesrc decodebin videoconvert hybridinfer hybridoverlay

VIDEO="${1:-}"
if [ -z "$VIDEO" ]; then
  require_element concat vp8enc webmmux
  SAMPLE_DIR="$(mktemp -d)"
  [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$SAMPLE_DIR"' EXIT
  VIDEO="$SAMPLE_DIR/patterns.webm"
  echo "== making a sample clip: $VIDEO (smpte, ball, pinwheel, zone-plate; 1 s each, VP8)"
  caps="video/x-raw,width=640,height=480,framerate=30/1"
  gst-launch-1.0 -q concat name=c ! videoconvert ! vp8enc deadline=1 target-bitrate=2000000 \
    ! webmmux ! filesink "location=$VIDEO" \
    videotestsrc pattern=smpte num-buffers=30 ! "$caps" ! c. \
    videotestsrc pattern=ball num-buffers=30 ! "$caps" ! c. \
    videotestsrc pattern=pinwheel num-buffers=30 ! "$caps" ! c. \
    videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=1 num-buffers=30 ! "$caps" ! c.
fi
if [ ! -r "$VIDEO" ]; then
  echo "file.sh: cannot read $VIDEO (usage: pipelines/file.sh [VIDEO])" >&2
  exit 1
fi
read -r -a sink <<<"$(hy_video_sink)"
require_element "${sink[0]}"

echo "== $VIDEO through hybridinfer (pipelines/models/patterns) into ${sink[*]}"
gst-launch-1.0 -m filesrc "location=$VIDEO" ! decodebin ! videoconvert \
  ! "${PATTERNS_INFER[@]}" "device=${DEVICE:-auto}" post-messages=true \
  ! hybridoverlay ! videoconvert ! "${sink[@]}" 2>&1 | hy_messages | hy_print_frames
