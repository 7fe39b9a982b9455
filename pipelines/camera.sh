#!/usr/bin/env bash
# camera.sh — the camera application end to end (camera_app.py): the ball
# detector, hybridtrack, the patterns classifier on each box
# (inference-region=roi), hybridoverlay, and every frame's objects
# published by hybridpublish to a JSON-lines file and, with MQTT_HOST, to
# an MQTT broker.
#
#   pipelines/camera.sh                                  # 120 frames -> /tmp/hybridinfer-camera.jsonl
#   MQTT_HOST=localhost pipelines/camera.sh --frames 300 # and to the broker, topic camera/results
#   mosquitto_sub -h localhost -t camera/results         # (in another shell) what a subscriber gets
#
# Arguments go to camera_app.py (--size, --motion, --fg, --bg, --interval,
# --jsonl, --mqtt-port, --mqtt-topic, --sink, --live).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_element hybridinfer hybridtrack hybridoverlay hybridpublish

args=("$@")
if [ -n "${MQTT_HOST:-}" ]; then
  args=(--mqtt-host "$MQTT_HOST" "${args[@]}")
fi
exec /usr/bin/python3 "$PIPELINES/camera_app.py" "${args[@]}"
