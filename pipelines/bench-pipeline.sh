#!/usr/bin/env bash
# bench-pipeline.sh — what does running a model inside GStreamer cost?
#
# Times, best of REPEAT runs each:
#   source    videotestsrc ! video/x-raw,1920x1080 ! fakesink sync=false
#   pipeline  videotestsrc ! video/x-raw,1920x1080 ! hybridinfer ... ! fakesink sync=false
#   engine    hybridinfer bench --model M --shape 1x3xHxW (the bare engine:
#             same model, same library, no GStreamer, no frames)
# and reports frames/s of each.  The source draws every 1080p frame in the
# same streaming thread as the element, so the element's share of the
# pipeline is its time per frame less the source's.  The element also
# measures itself: the mean of the latency-us its bus messages carry (from
# mapping the frame to the results attached; lowest mean of REPEAT runs).  Both are set against the bare
# engine's forward (target: the element at least 95% of the engine's
# frames/s); what the element adds is the resize and normalisation into the
# input tensor, the metas and the bus message.
#
# The default source pattern is black, the cheapest for videotestsrc to draw
# (about 1 ms a 1080p RGB frame; smpte takes several), so that the source
# does not drown the element's share.
#
# Environment:
#   FRAMES      frames per run (default 1000)
#   REPEAT      runs of each, the best counts (default 5)
#   PATTERN     videotestsrc pattern (default black)
#   FORMAT      pixel format of the frames (default RGB)
#   MODEL       symbol file (default pipelines/models/patterns-symbol.json);
#               another model also needs INPUT_SIZE (WxH)
#   DEVICE      cpu (default), cuda or cuda:N: the element and the engine
#               both run there (on a GPU the element uploads uint8 frames
#               and converts them on the device)
#   JSON=1      print one JSON object at the end as well
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_element videotestsrc hybridinfer fakesink

FRAMES="${FRAMES:-1000}"
REPEAT="${REPEAT:-5}"
PATTERN="${PATTERN:-black}"
FORMAT="${FORMAT:-RGB}"
DEVICE="${DEVICE:-cpu}"
CAPS="video/x-raw,format=$FORMAT,width=1920,height=1080"
HY="$BUILD_DIR/tools/hybridinfer"

if [ -n "${MODEL:-}" ]; then
  INPUT_SIZE="${INPUT_SIZE:?set INPUT_SIZE=WxH for MODEL=$MODEL}"
  INFER=(hybridinfer "model=$MODEL" "input-size=$INPUT_SIZE" "device=$DEVICE")
else
  MODEL="$MODELS/patterns-symbol.json"
  INPUT_SIZE=64x64
  INFER=("${PATTERNS_INFER[@]}" "device=$DEVICE")
fi

# run_once MESSAGES PIPELINE...: gst-launch's "Execution ended after
# H:MM:SS.fraction" in seconds (the clock starts after preroll, which has
# taken the first frame through) and, with MESSAGES=1 (gst-launch -m), the
# mean latency-us of the element's messages after the first.  Timed runs go
# without -m: printing every message would take CPU from the pipeline.
run_once() {
  local messages=$1 out h m s
  shift
  if [ "$messages" = 1 ]; then
    out=$(gst-launch-1.0 -m "$@" 2>&1 | hy_messages)
  else
    out=$(gst-launch-1.0 "$@" 2>&1 | hy_messages)
  fi
  if ! grep -q '^ELAPSED ' <<<"$out"; then
    echo "bench-pipeline: gst-launch-1.0 $* failed:" >&2
    grep '^!' <<<"$out" >&2 || true
    exit 1
  fi
  read -r h m s <<<"$(sed -n 's/^ELAPSED //p' <<<"$out")"
  echo "$(hy_seconds "$h" "$m" "$s") $(awk \
    '$1 ~ /^[0-9]+$/ && $1 > 0 { sum += $4; n++ } END { printf "%.3f", n ? sum / n : 0 }' <<<"$out")"
}

# best (lowest) of REPEAT runs: elapsed seconds, or with MESSAGES=1 latency
best_run() {
  local messages=$1 best="" t lat v i
  shift
  for ((i = 0; i < REPEAT; i++)); do
    read -r t lat <<<"$(run_once "$messages" "$@")"
    v=$t
    [ "$messages" = 1 ] && v=$lat
    best=$(awk -v a="$best" -v b="$v" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  echo "$best"
}

engine_fps() {
  local best="" f i
  for ((i = 0; i < REPEAT; i++)); do
    f=$("$HY" bench --model "$MODEL" --shape "1x3x${INPUT_SIZE#*x}x${INPUT_SIZE%x*}" \
          --device "$DEVICE" --iterations "$FRAMES" --json \
        | sed -nE 's/.*"throughput_per_s": *([0-9.eE+-]+).*/\1/p')
    [ -n "$f" ] || { echo "bench-pipeline: hybridinfer bench gave no throughput" >&2; exit 1; }
    best=$(awk -v a="$best" -v b="$f" 'BEGIN { print (a == "" || b > a) ? b : a }')
  done
  echo "$best"
}

echo "== $FRAMES frames of $PATTERN at 1920x1080 $FORMAT, best of $REPEAT; model $MODEL (input $INPUT_SIZE) on $DEVICE"
echo "   OpenBLAS kernels: ${OPENBLAS_CORETYPE:-chosen by OpenBLAS}"
SOURCE=(videotestsrc "pattern=$PATTERN" "num-buffers=$FRAMES" ! "$CAPS")
src=$(best_run 0 "${SOURCE[@]}" ! fakesink sync=false)
pipe=$(best_run 0 "${SOURCE[@]}" ! "${INFER[@]}" ! fakesink sync=false)
latency_us=$(best_run 1 "${SOURCE[@]}" ! "${INFER[@]}" post-messages=true ! fakesink sync=false)
engine=$(engine_fps)

awk -v n="$FRAMES" -v src="$src" -v pipe="$pipe" -v lat="$latency_us" -v engine="$engine" \
    -v json="${JSON:-0}" -v model="$MODEL" -v pattern="$PATTERN" -v format="$FORMAT" '
function pct(x) { return x > 0 ? sprintf("%.1f%%", 100 * x) : "n/a" }
function num(x) { return x > 0 ? sprintf("%.2f", x) : "null" }
BEGIN {
  n -= 1                                   # frames timed after preroll
  src_ms = src / n * 1000; pipe_ms = pipe / n * 1000; lat_ms = lat / 1000
  share_ms = pipe_ms - src_ms; engine_ms = 1000 / engine
  share_fps = share_ms > 0 ? 1000 / share_ms : 0
  lat_fps = lat_ms > 0 ? 1000 / lat_ms : 0
  printf "   source alone     %8.1f frames/s  (%.3f ms a frame: videotestsrc drawing 1080p)\n", 1000 / src_ms, src_ms
  printf "   pipeline         %8.1f frames/s  (%.3f ms a frame: source + hybridinfer + fakesink)\n", 1000 / pipe_ms, pipe_ms
  if (share_ms > 0)
    printf "   element share    %8.1f frames/s  (%.3f ms a frame: pipeline less source)\n", share_fps, share_ms
  else
    printf "   element share         n/a          (pipeline %.3f ms, source %.3f ms: below the noise)\n", pipe_ms, src_ms
  printf "   element latency  %8.1f frames/s  (%.3f ms a frame: mean latency-us of its messages)\n", lat_fps, lat_ms
  printf "   bare engine      %8.1f frames/s  (%.3f ms a forward: hybridinfer bench)\n", engine, engine_ms
  printf "   element / engine: %s by share, %s by latency (target >= 95%%); whole pipeline / engine: %s\n", \
    pct(share_fps / engine), pct(lat_fps / engine), pct(engine_ms / pipe_ms)
  if (json)
    printf "{\"model\":\"%s\",\"pattern\":\"%s\",\"format\":\"%s\",\"frames\":%d,\"source_fps\":%.2f,\"pipeline_fps\":%.2f,\"element_share_fps\":%s,\"element_latency_fps\":%s,\"engine_fps\":%.2f}\n", \
      model, pattern, format, n + 1, 1000 / src_ms, 1000 / pipe_ms, num(share_fps), num(lat_fps), engine
}'
