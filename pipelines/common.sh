# shellcheck shell=bash source-path=SCRIPTDIR
# common.sh — what the pipeline scripts share (sourced, not run).
#
# Builds what is missing (tools/setup.sh), points GStreamer at the element
# in the build tree, and holds the element for the shipped patterns model
# and a reader for the element's bus messages.

PIPELINES="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../tools/setup.sh
source "$PIPELINES/../tools/setup.sh"
export GST_PLUGIN_PATH="$BUILD_DIR/gst-plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"

MODELS="$PIPELINES/models"
# The model takes 64x64 RGB scaled to 0..1, then (x - 0.5) / 0.25 per
# channel, the frame stretched to 64x64 with bilinear sampling: the element
# reads all of that, and the labels, from the model's sidecar
# (models/patterns-model.json), so `model` is the only setting it needs.
# shellcheck disable=SC2034  # used by the scripts that source this file
PATTERNS_INFER=(hybridinfer
  "model=$MODELS/patterns-symbol.json"
  top-k=2)

require_element() {
  local name
  for name in "$@"; do
    if ! gst-inspect-1.0 "$name" >/dev/null 2>&1; then
      echo "GStreamer element '$name' not found (GST_PLUGIN_PATH=$GST_PLUGIN_PATH)" >&2
      exit 1
    fi
  done
}

# Reads `gst-launch-1.0 -m` output.  For each "hybridinfer" element message
# (one per inferred frame, top-k 2) prints
#   FRAME LABEL SCORE LATENCY_US RUNNER_UP RUNNER_UP_SCORE
# and for the end of the run "ELAPSED SECONDS"; errors and warnings pass
# through prefixed with "!".
hy_messages() {
  sed -nE \
    -e 's/.*\(element\): hybridinfer, frame-number=\(guint64\)([0-9]+),.*latency-us=\(double\)([0-9.e+-]+),.* label=\(string\)"?([^,"]*)"?, class-id=\(int\)-?[0-9]+, score=\(float\)([0-9.e+-]+), labels=\(string\)< [^,>]*, "?([^,">]*)"?[ ,].* scores=\(float\)< [^,>]*, ([0-9.e+-]+).*/\1 \3 \4 \2 \5 \6/p' \
    -e 's/^Execution ended after ([0-9]+):([0-9]+):([0-9.]+)$/ELAPSED \1 \2 \3/p' \
    -e 's/^(ERROR|WARNING): from element [^ ]*: (.*)/! \1: \2/p' \
    -e 's/^(ERROR|WARNING)([^:]*)$/! \1\2/p'
}

# ELAPSED h m s  ->  seconds
hy_seconds() {
  awk -v h="$1" -v m="$2" -v s="$3" 'BEGIN { printf "%.6f", h * 3600 + m * 60 + s }'
}

# Reads hy_messages output: prints a line per frame, warnings once each, and
# at the end the frame count and frames/s (wall clock, after preroll).
hy_print_frames() {
  local first rest label score latency second second_score h m s n=0 seconds=""
  local -A warned=()
  while read -r first rest; do
    case "$first" in
      '!')
        if [ -z "${warned[$rest]:-}" ]; then warned[$rest]=1; echo "   $rest"; fi ;;
      ELAPSED)
        read -r h m s <<<"$rest"
        seconds=$(hy_seconds "$h" "$m" "$s") ;;
      *)
        read -r label score latency second second_score <<<"$rest"
        n=$((n + 1))
        printf '   frame %5d  %-18s %.3f   (next: %-18s %.3f)  %6.0f us\n' \
          "$first" "$label" "$score" "$second" "$second_score" "$latency" ;;
    esac
  done
  if [ -n "$seconds" ] && [ "$n" -gt 1 ]; then
    awk -v n="$n" -v s="$seconds" 'BEGIN { printf "   %d frames labelled, %.1f frames/s\n", n, (n - 1) / s }'
  else
    echo "   $n frames labelled"
  fi
}

# The video sink: $SINK if set, else a window when there is a display and
# fakesink (no window, as fast as it goes) when there is none.
hy_video_sink() {
  if [ -n "${SINK:-}" ]; then
    echo "$SINK"
  elif [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
    echo autovideosink
  else
    echo "fakesink sync=false"
  fi
}
