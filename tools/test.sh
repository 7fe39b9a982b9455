#!/usr/bin/env bash
# test.sh — the whole test suite, from a fresh Debian 12 machine.
#
#  1. setup: packages, the MXNet 1.9.1 reference venv, the build
#  2. model-zoo reference outputs from real MXNet, into the cache (once)
#  3. every meson suite: unit, conformance (ops, seeds, legacy, zoo), CLI
#  4. the same suites again under AddressSanitizer + UBSan
#  5. each fuzz target for a bounded time (clang, libFuzzer, ASan + UBSan)
#
# Ends with one line "N passed, N failed, N skipped" (each skipped test is
# listed above it with its reason: the GPU tests without a GPU) and exits
# non-zero on any failure.
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

log "setup"
# shellcheck source=setup.sh
source "$ROOT/tools/setup.sh" || { echo "0 passed, 1 failed"; exit 1; }
set +e  # setup.sh runs with -e; the suite must go on past a failure
PY="$VENV/bin/python"

log "model-zoo reference outputs (real MXNet 1.9.1) into $CACHE/fixtures/zoo"
"$PY" tests/conformance/gen_fixtures.py --set zoo --out "$CACHE/fixtures/zoo" --prune
record "zoo fixture generation" $?

log "test suites"
run_meson_tests "meson" "$BUILD_DIR"

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
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    run_meson_tests "asan" "$ASAN_DIR" --timeout-multiplier 4 --no-suite zoo
else
  cat "$ASAN_DIR/build.log"; record "asan build" 1
fi

log "fuzzing each reader, the engine and the element for ${FUZZ_SECONDS}s (libFuzzer, ASan, UBSan; longer: tools/fuzz.sh)"
FUZZ_DIR="$ROOT/build-fuzz"
if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  CC=clang meson setup "$FUZZ_DIR" -Dfuzz=true -Dtests=false -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized >/dev/null
fi
if ninja -C "$FUZZ_DIR" >"$FUZZ_DIR/build.log" 2>&1; then
  # The same runs as the long one (tools/fuzz.sh: seeds, options), short.
  for target in symbol-json params npy diff-index graph element; do
    # fuzz-element is built only with GStreamer.
    [ -x "$FUZZ_DIR/tests/fuzz/fuzz-$target" ] || continue
    FUZZ_DIR="$FUZZ_DIR" "$ROOT/tools/fuzz.sh" "$FUZZ_SECONDS" "$target"
    record "fuzz $target" $?
  done
else
  cat "$FUZZ_DIR/build.log"; record "fuzz build" 1
fi

echo
if [ "$skipped" -gt 0 ]; then
  printf 'skipped: %s\n' "${skips[@]}"
fi
if [ "$failed" -gt 0 ]; then
  printf 'failed: %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
