#!/usr/bin/env bash
# demo.sh — the main job: video through the hybridinfer GStreamer element.
#
# Installs what is missing and builds the element (tools/setup.sh at its
# `demo` level: Debian packages only, no Python venv), then runs
#   gst-launch-1.0 -m videotestsrc pattern=P ... ! video/x-raw,... \
#     ! hybridinfer model=pipelines/models/patterns-symbol.json ... ! fakesink
# for a tour of test patterns, sizes and pixel formats, through the small
# classifier shipped in pipelines/models (trained by train_patterns.py on
# frames videotestsrc made).  Prints the label the element posted on the bus
# for every frame, then frames/s: of each run, and of a longer 1080p run.
#
# Environment:
#   FRAMES      frames per pattern (default 8)
#   FPS_FRAMES  frames of the closing 1080p throughput run (default 300)
#   DEVICE      the element's device property (default auto)
# Exits 1 if a pipeline fails or a frame gets a label other than its pattern.
set -euo pipefail
# The demo needs the element and GStreamer, nothing of the tests' set-up.
# shellcheck disable=SC2034  # read by tools/setup.sh
SETUP_FOR="${SETUP_FOR:-demo}"
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_element videotestsrc hybridinfer

FRAMES="${FRAMES:-8}"
FPS_FRAMES="${FPS_FRAMES:-300}"
DEVICE="${DEVICE:-auto}"

# pattern | size | pixel format | more videotestsrc properties | expected label
TOUR=(
  "smpte|320x240|RGB||smpte"
  "ball|640x480|RGB|motion=wavy|ball"
  "snow|1280x720|I420||snow"
  "zone-plate|1920x1080|RGB|kx2=20 ky2=20 kt=1|zone-plate"
  "chroma-zone-plate|640x480|NV12|kx2=20 ky2=20 kt=1|chroma-zone-plate"
  "checkers-8|320x240|RGB||checkers"
  "checkers-1|1280x720|I420||checkers"
  "circular|640x480|RGB||circular"
  "pinwheel|800x600|RGB||pinwheel"
  "spokes|1280x720|RGB||spokes"
  "gradient|320x240|BGRx||gradient"
  "colors|1920x1080|I420||colors"
  "gamut|640x480|RGB||gamut"
  "bar|640x480|RGB|horizontal-speed=40|bar"
  "smpte75|1024x768|RGB||smpte75"
  "smpte100|320x240|I420||smpte100"
  "smpte-rp-219|1920x1080|RGB||smpte-rp-219"
  "red|160x120|RGB||red"
  "green|640x480|I420||green"
  "blue|1280x720|RGB||blue"
  "white|320x240|RGB||white"
  "black|1920x1080|RGB||black"
)

# run_pipeline N PATTERN SIZE FORMAT "PROPS": gst-launch -m, messages decoded
run_pipeline() {
  local n=$1 pattern=$2 size=$3 format=$4 props=$5
  local -a extra=()
  [ -n "$props" ] && read -r -a extra <<<"$props"
  gst-launch-1.0 -m videotestsrc "pattern=$pattern" "num-buffers=$n" "${extra[@]}" \
    ! "video/x-raw,format=$format,width=${size%x*},height=${size#*x}" \
    ! "${PATTERNS_INFER[@]}" "device=$DEVICE" post-messages=true \
    ! fakesink sync=false 2>&1 | hy_messages
}

declare -A warned=()
total=0 right=0 failed=0 sum_seconds=0
echo
echo "== hybridinfer on videotestsrc: $FRAMES frames per pattern (model: pipelines/models/patterns)"
for entry in "${TOUR[@]}"; do
  IFS='|' read -r pattern size format props expected <<<"$entry"
  echo
  echo "-- videotestsrc pattern=$pattern${props:+ $props}, ${size} $format (expect: $expected)"
  seen=0 ok=0 seconds=""
  while read -r first rest; do
    case "$first" in
      '!')
        # one warning per kind (e.g. device auto falling back to the CPU)
        if [ -z "${warned[$rest]:-}" ]; then warned[$rest]=1; echo "   $rest"; fi ;;
      ELAPSED)
        read -r h m s <<<"$rest"
        seconds=$(hy_seconds "$h" "$m" "$s") ;;
      *)
        read -r label score latency second second_score <<<"$rest"
        mark="ok"
        if [ "$label" = "$expected" ]; then ok=$((ok + 1)); else mark="WRONG"; fi
        seen=$((seen + 1))
        printf '   frame %3d  %-18s %.3f   (next: %-18s %.3f)  %6.0f us  %s\n' \
          "$first" "$label" "$score" "$second" "$second_score" "$latency" "$mark" ;;
    esac
  done < <(run_pipeline "$FRAMES" "$pattern" "$size" "$format" "$props")
  if [ "$seen" -ne "$FRAMES" ] || [ -z "$seconds" ]; then
    echo "   pipeline failed: $seen of $FRAMES frames labelled"
    failed=$((failed + 1))
  else
    # the first frame goes through while the pipeline prerolls, before the clock starts
    echo "   $ok/$seen right, $(awk -v n="$FRAMES" -v s="$seconds" 'BEGIN { printf "%.0f", (n - 1) / s }') frames/s"
    sum_seconds=$(awk -v a="$sum_seconds" -v b="$seconds" 'BEGIN { print a + b }')
  fi
  total=$((total + FRAMES)) right=$((right + ok))
done

echo
echo "== throughput: $FPS_FRAMES frames of 1920x1080 smpte through hybridinfer into fakesink"
labelled=0 seconds=""
while read -r first rest; do
  case "$first" in
    '!') ;;
    ELAPSED) read -r h m s <<<"$rest"; seconds=$(hy_seconds "$h" "$m" "$s") ;;
    *) labelled=$((labelled + 1)) ;;
  esac
done < <(run_pipeline "$FPS_FRAMES" smpte 1920x1080 RGB "")
if [ -z "$seconds" ] || [ "$labelled" -ne "$FPS_FRAMES" ]; then
  echo "   pipeline failed ($labelled of $FPS_FRAMES frames labelled)"
  failed=$((failed + 1))
else
  awk -v n="$FPS_FRAMES" -v s="$seconds" \
    'BEGIN { printf "   %d frames in %.3f s: %.0f frames/s\n", n - 1, s, (n - 1) / s }'
  echo "   (videotestsrc drawing the frames, hybridinfer and the bus messages;"
  echo "    pipelines/bench-pipeline.sh separates the source's cost from the element's)"
fi

echo
echo "== $right/$total frames labelled right over ${#TOUR[@]} pipelines; $failed pipeline(s) failed"
[ "$failed" -eq 0 ] && [ "$right" -eq "$total" ]
