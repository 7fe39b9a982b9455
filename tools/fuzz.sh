#!/usr/bin/env bash
# fuzz.sh — the long fuzz run: each libFuzzer target for SECONDS (default
# 600), one after the other, in build-fuzz/ (clang, ASan + UBSan).
#
#   tools/fuzz.sh [SECONDS] [TARGET...]
#
# Targets: symbol-json params npy onnx diff-index graph element (default: all
# that are built; element needs GStreamer).  Corpora grow in
# build-fuzz/corpus-TARGET, seeded from the fixtures or tests/fuzz/corpus-*;
# a crash is written to build-fuzz/crash-TARGET-*.  Prints libFuzzer's last
# status line (coverage, execs/s) per target and exits non-zero when any
# target failed.  tools/test.sh runs the same targets for FUZZ_SECONDS each.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_EACH="${1:-600}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(symbol-json params npy onnx diff-index graph element)
FUZZ_DIR="${FUZZ_DIR:-$ROOT/build-fuzz}"
# FUZZ_SEED fixes libFuzzer's random seed, so that a failing run can be
# repeated (tools/test.sh sets it: a gate must not change from run to run).
SEED_ARG=()
[ -n "${FUZZ_SEED:-}" ] && SEED_ARG=(-seed="$FUZZ_SEED")

if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  CC=clang meson setup "$FUZZ_DIR" -Dfuzz=true -Dtests=false -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized >/dev/null || exit 1
fi
# Each compile may take FUZZ_COMPILE_CPU_S seconds of CPU (tools/test.sh
# says why); one killed there belongs in tests/fuzz/sanitize-ignorelist.txt.
(ulimit -t "${FUZZ_COMPILE_CPU_S:-600}"; ninja -C "$FUZZ_DIR") >"$FUZZ_DIR/build.log" 2>&1 \
  || { cat "$FUZZ_DIR/build.log"; exit 1; }

# One libFuzzer run of TARGET's EXE over CORPUS; its log in fuzz-TARGET.log.
run_target() {
  local target="$1" exe="$2" corpus="$3"
  # fuzz-element's private GStreamer registry, made afresh each run: with
  # one left by an earlier run, GStreamer dlopens and closes
  # libgsthybridmeta (a library in the plugin folder, not a plugin) before
  # libFuzzer starts, and libFuzzer then clears that library's coverage
  # counters where it is no longer mapped (a SEGV before the first input).
  [ "$target" = element ] && rm -f "$FUZZ_DIR/tests/fuzz/registry-fuzz.bin"
  # intercept_tls_get_addr=0: see the ASan stage in tools/test.sh.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ASAN_OPTIONS=allocator_may_return_null=1:intercept_tls_get_addr=0 \
    "$exe" -max_total_time="$SECONDS_EACH" -max_len=4096 "${SEED_ARG[@]}" \
    -detect_leaks=1 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$FUZZ_DIR/crash-$target-" "$corpus" \
    >"$FUZZ_DIR/fuzz-$target.log" 2>&1
}

# True when LOG's only failure is LeakSanitizer's tracer faulting: no
# report of a leak, a memory error or undefined behaviour in it.
sanitizer_fault_only() {
  grep -q 'LeakSanitizer has encountered a fatal error' "$1" &&
    ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|detected memory leaks' "$1"
}

failed=()
for target in "${TARGETS[@]}"; do
  exe="$FUZZ_DIR/tests/fuzz/fuzz-$target"
  if [ ! -x "$exe" ]; then
    echo "fuzz $target: not built (fuzz-element needs GStreamer), skipped"
    continue
  fi
  corpus="$FUZZ_DIR/corpus-$target"
  mkdir -p "$corpus"
  seeds=tests/fixtures
  case "$target" in
    symbol-json) pattern='*-symbol.json'; limit=64k ;;
    params) pattern='*.params'; limit=64k ;;
    npy) pattern='*.npy'; limit=16k ;;
    onnx) pattern='*.onnx'; limit=16k; seeds=tests/fuzz/corpus-onnx ;;
    diff-index) pattern='*.json'; limit=16k; seeds=tests/fuzz/corpus-diff ;;
    *) pattern='*'; limit=16k; seeds="tests/fuzz/corpus-$target" ;;
  esac
  [ -d "$seeds" ] && find "$seeds" -type f -name "$pattern" -size "-$limit" |
    while read -r f; do cp "$f" "$corpus/$(echo "$f" | tr '/' '_')"; done
  echo "== fuzz $target for ${SECONDS_EACH}s"
  run_target "$target" "$exe" "$corpus"
  status=$?
  # LeakSanitizer checks for leaks by stopping every thread from a
  # "tracer" task and scanning their stacks and TLS.  Where threads come and
  # go each run (GStreamer's streaming threads in fuzz-element), that tracer
  # itself now and then faults ("Tracer caught signal 11", "LeakSanitizer
  # has encountered a fatal error") before it has looked at any of our
  # memory: a fault of the sanitizer, not a finding, and libFuzzer files
  # the input it was on (often the empty one) as a crash.  Such a run is
  # run once more, the same seed, and both are reported; any other failure,
  # and a second tracer fault, fail the target.
  if [ "$status" -ne 0 ] && sanitizer_fault_only "$FUZZ_DIR/fuzz-$target.log"; then
    echo "fuzz $target: LeakSanitizer's tracer faulted (not a finding; log kept as fuzz-$target.tracer.log), running it again"
    mv "$FUZZ_DIR/fuzz-$target.log" "$FUZZ_DIR/fuzz-$target.tracer.log"
    run_target "$target" "$exe" "$corpus"
    status=$?
  fi
  grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)' "$FUZZ_DIR/fuzz-$target.log" | tail -1
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
    "$FUZZ_DIR/fuzz-$target.log"
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
    # The sanitizer's own words, or the log's end when it printed none.
    if ! grep -E 'ERROR|SUMMARY|runtime error|fatal error|Tracer caught' "$FUZZ_DIR/fuzz-$target.log" | head -5; then
      tail -15 "$FUZZ_DIR/fuzz-$target.log"
    fi
    grep -E 'Test unit written' "$FUZZ_DIR/fuzz-$target.log" | head -1
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]} (logs in $FUZZ_DIR/fuzz-TARGET.log)"
  exit 1
fi
echo "fuzzing: nothing found"
