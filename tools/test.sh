#!/usr/bin/env bash
# test.sh — the whole test suite, from a fresh Debian 12 machine.
#
#  1. setup: packages, the MXNet 1.9.1 reference venv, the build
#     (tools/setup.sh's `test` level)
#  2. model-zoo reference outputs from real MXNet, into the cache (once)
#  3. every meson suite: unit, conformance (ops, seeds, legacy, zoo), CLI
#  4. the same suites again under AddressSanitizer + UBSan
#  5. each fuzz target for a bounded time (clang, libFuzzer, ASan + UBSan)
#
# Each stage ends with a line "== stage NAME took N s" (wall clock), and the
# run with "== stages: NAME N s, ... total N s" before one line "N passed,
# N failed, N skipped" (each skipped test is listed above it with its
# reason: the GPU tests without a GPU); exits non-zero on any failure.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
passed=0
failed=0
skipped=0
failures=()
skips=()

log() { printf '\n== %s\n' "$*"; }

# stage NAME: ends the stage running (its wall time printed) and starts
# NAME; `stage` alone ends the last one.  The totals are printed at the end.
STAGE="" STAGE_START=0
stage_times=()
stage() {
  if [ -n "$STAGE" ]; then
    local took=$((SECONDS - STAGE_START))
    echo "== stage $STAGE took $took s"
    stage_times+=("$STAGE $took s")
  fi
  STAGE="${1:-}" STAGE_START=$SECONDS
}
record() {  # record NAME STATUS
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); failures+=("$1"); fi
}

# LeakSanitizer sometimes cannot stop a process's threads for its final
# check on a loaded machine ("LeakSanitizer has encountered a fatal
# error"): a failure of the tool, not a leak it found.  Such a test (and
# only such: a leak report or any other failure stands) runs once more,
# saying so; prints how many then passed.
rerun_sanitizer_tool_failures() {  # DIR [meson test args]
  local dir="$1"; shift
  local names n=0
  names=$(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = (t.get("stdout") or "") + (t.get("stderr") or "")
    if (t.get("result") in ("FAIL", "ERROR")
            and "LeakSanitizer has encountered a fatal error" in out
            and "ERROR: LeakSanitizer: detected memory leaks" not in out
            and "ERROR: AddressSanitizer" not in out and "runtime error" not in out):
        print(t["name"].split(" / ")[-1])
PY
  )
  for t in $names; do
    echo "re-running $t once: LeakSanitizer could not stop its threads (a tool failure, not a leak)" >&2
    if meson test -C "$dir" --print-errorlogs "$@" "$t" >&2; then n=$((n + 1)); fi
  done
  echo "$n"
}

# Counts meson's own per-test results into the totals.
run_meson_tests() {  # run_meson_tests NAME BUILD_DIR [meson test args]
  local name="$1" dir="$2"; shift 2
  local out; out="$(mktemp)"
  meson test -C "$dir" --print-errorlogs "$@" 2>&1 | tee "$out"
  local ok fail
  ok=$(awk '/^Ok:/ {print $2}' "$out" | tail -1)
  fail=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {s += $2} END {print s + 0}' "$out")
  skip=$(awk '/^Skipped:/ {print $2}' "$out" | tail -1)
  passed=$((passed + ${ok:-0}))
  skipped=$((skipped + ${skip:-0}))
  # Each skipped test with the reason it printed (TAP "1..0 # SKIP why").
  while IFS= read -r line; do skips+=("$name: $line"); done < <(
    python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, re, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t.get("result") == "SKIP":
        m = re.search(r"# SKIP (.*)", t.get("stdout") or "")
        print(t["name"], "-", m.group(1) if m else "skipped")
PY
  )
  if [ "$fail" -gt 0 ]; then
    local recovered; recovered=$(rerun_sanitizer_tool_failures "$dir" "$@")
    fail=$((fail - recovered))
    passed=$((passed + recovered))
  fi
  failed=$((failed + fail))
  [ "$fail" -gt 0 ] && failures+=("$name")
  if [ -z "${ok:-}" ]; then failed=$((failed + 1)); failures+=("$name (did not run)"); fi
  rm -f "$out"
}

SECONDS=0
stage setup
log "setup"
# The tests' level: packages, the reference venv (not the benchmark peers).
# shellcheck disable=SC2034  # read by setup.sh
SETUP_FOR="test"
# shellcheck source=setup.sh
source "$ROOT/tools/setup.sh" || { stage; echo "0 passed, 1 failed"; exit 1; }
set +e  # setup.sh runs with -e; the suite must go on past a failure
PY="$VENV/bin/python"

stage zoo-fixtures
log "model-zoo reference outputs (real MXNet 1.9.1) into $CACHE/fixtures/zoo"
"$PY" tests/conformance/gen_fixtures.py --set zoo --out "$CACHE/fixtures/zoo" --prune
record "zoo fixture generation" $?

stage suites
log "test suites"
run_meson_tests "meson" "$BUILD_DIR"

stage asan-build
log "test suites under AddressSanitizer + UndefinedBehaviorSanitizer"
ASAN_DIR="$ROOT/build-asan"
if [ ! -f "$ASAN_DIR/build.ninja" ]; then
  meson setup "$ASAN_DIR" -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized -Dzoo_fixtures="$CACHE/fixtures/zoo" -Dreference_python="$VENV/bin/python" >/dev/null
fi
# The model zoo's large networks run once, in the plain build: under the
# sanitizers they would take most of the run and test no code the small
# models do not.
if ninja -C "$ASAN_DIR" >"$ASAN_DIR/build.log" 2>&1; then
  stage asan-suites
  # intercept_tls_get_addr=0: GCC 12's sanitizer runtime takes a dynamic
  # TLS block that happens to start 16 bytes into a page for glibc 2.19's
  # layout and hands LeakSanitizer a garbage range to scan; its tracer
  # then faults ("Tracer caught signal 11"), the same way on every run of
  # a test whose blocks land there.  Without the hook the blocks are still
  # scanned: glibc allocates them, so they are heap reachable from the
  # thread's DTV.  tools/fuzz.sh sets the same.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:intercept_tls_get_addr=0 \
    run_meson_tests "asan" "$ASAN_DIR" --timeout-multiplier 4 --no-suite zoo
else
  cat "$ASAN_DIR/build.log"; record "asan build" 1
fi

stage fuzz-build
log "fuzzing each reader, the engine and the element for ${FUZZ_SECONDS}s (libFuzzer, ASan, UBSan; longer: tools/fuzz.sh)"
FUZZ_DIR="$ROOT/build-fuzz"
if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  CC=clang meson setup "$FUZZ_DIR" -Dfuzz=true -Dtests=false -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized >/dev/null
fi
# No compile of the fuzz build may run away with the CI's time: each
# process gets FUZZ_COMPILE_CPU_S seconds of CPU (the largest,
# depthwise-avx512.c, takes 23 s on a 2-core Xeon), then is killed and the
# build fails, naming its object.
FUZZ_COMPILE_CPU_S="${FUZZ_COMPILE_CPU_S:-600}"
if (ulimit -t "$FUZZ_COMPILE_CPU_S"; ninja -C "$FUZZ_DIR") >"$FUZZ_DIR/build.log" 2>&1; then
  stage fuzz-runs
  # The same runs as the long one (tools/fuzz.sh: seeds, options), short,
  # from a fixed random seed: a finding here can be replayed, and the gate
  # does not depend on the draw (hunting is tools/fuzz.sh's job).
  for target in symbol-json params npy onnx diff-index graph element; do
    # fuzz-element is built only with GStreamer.
    [ -x "$FUZZ_DIR/tests/fuzz/fuzz-$target" ] || continue
    FUZZ_DIR="$FUZZ_DIR" FUZZ_SEED="${FUZZ_SEED:-1}" \
      "$ROOT/tools/fuzz.sh" "$FUZZ_SECONDS" "$target"
    record "fuzz $target" $?
  done
else
  cat "$FUZZ_DIR/build.log"
  echo "(a compile killed after $FUZZ_COMPILE_CPU_S s of CPU: its file belongs in tests/fuzz/sanitize-ignorelist.txt)"
  record "fuzz build" 1
fi

stage
echo
summary=""
for t in "${stage_times[@]}"; do summary+="$t, "; done
echo "== stages: ${summary}total $SECONDS s"
if [ "$skipped" -gt 0 ]; then
  printf 'skipped: %s\n' "${skips[@]}"
fi
if [ "$failed" -gt 0 ]; then
  printf 'failed: %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
