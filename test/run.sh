#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/run.sh - everything CI checks, from a fresh clone on a bare Debian 12:
#   1. tools/setup.sh (packages), a -Dwerror=true build, every meson test suite;
#   2. the same suites in an AddressSanitizer + UndefinedBehaviorSanitizer build
#      (but compat: its drop-in libraries are loaded into unmodified Debian
#      programs, which cannot load an ASan-instrumented library; docs/compat.md);
#   3. the fuzz seed-corpus replay (suite fuzz-replay) under the sanitizers;
#   4. a ThreadSanitizer build (meson's b_sanitize=thread) running the verbs,
#      integration, rpcrdma and nfs suites with the engine thread on
#      (IWARP_ENGINE_THREAD=1); suppressions, each with its reason, in
#      test/tsan/tsan.supp.  Any report, from a test or from a process it
#      started (iwnfsgw, iwping), counts as one failure.
# The last line is "N passed, N failed" (tests counted over all steps).
# usage: test/run.sh [--quick]   (--quick: skip the sanitizer builds)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
quick=0
[[ ${1:-} == --quick ]] && quick=1

passed=0
failed=0
skipped=0
step_failed=0

# Add up the results meson wrote for the last run of a build directory.
count_results() {
    local log=$1/meson-logs/testlog.json
    [[ -f $log ]] || { failed=$((failed + 1)); return; }
    local p f s
    read -r p f s < <(python3 - "$log" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"):
        p += 1
    elif r == "SKIP":
        s += 1
    else:
        f += 1
print(p, f, s)
PY
)
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    echo "== $2: $p passed, $f failed, $s skipped"
}

run_suites() { # builddir label [meson test args...]
    local dir=$1 label=$2
    shift 2
    meson test -C "$dir" --print-errorlogs -v "$@"
    count_results "$dir" "$label"
}

echo "== setup"
if ! tools/setup.sh build -Dwerror=true; then
    echo "setup failed"
    echo "0 passed, 1 failed"
    exit 1
fi

echo "== build (plain, -Dwerror=true)"
if ! meson compile -C build; then
    echo "build failed"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "== tests (plain build, all suites)"
run_suites build "plain build"

if [[ $quick == 0 ]]; then
    echo "== build (ASan+UBSan, -Dwerror=true)"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    if [[ ! -f build-asan/build.ninja ]]; then
        meson setup build-asan -Dbuildtype=debug -Db_sanitize=address,undefined \
            -Db_lundef=false -Dwerror=true >/dev/null
    fi
    if meson compile -C build-asan; then
        echo "== tests (ASan+UBSan build, all suites but fuzz-replay and compat)"
        run_suites build-asan "sanitizer build" --no-suite fuzz-replay --no-suite compat
        echo "== fuzz seed-corpus replay (ASan+UBSan build)"
        run_suites build-asan "fuzz-corpus replay" --suite fuzz-replay
    else
        echo "sanitizer build failed"
        failed=$((failed + 1))
    fi
fi

if [[ $quick == 0 ]]; then
    echo "== build (ThreadSanitizer, -Dwerror=true)"
    if [[ ! -f build-tsan/build.ninja ]]; then
        meson setup build-tsan -Dbuildtype=debug -Db_sanitize=thread \
            -Db_lundef=false -Dwerror=true >/dev/null
    fi
    if meson compile -C build-tsan; then
        echo "== tests (ThreadSanitizer build, engine thread on: verbs, integration, rpcrdma, nfs)"
        tsan_logs=$(mktemp -d)
        IWARP_ENGINE_THREAD=1 \
        TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$here/test/tsan/tsan.supp log_path=$tsan_logs/tsan" \
            run_suites build-tsan "thread sanitizer" --suite verbs --suite integration \
            --suite rpcrdma --suite nfs
        reports=$(find "$tsan_logs" -type f | wc -l)
        if [[ $reports -gt 0 ]]; then
            echo "== ThreadSanitizer: $reports process(es) reported"
            cat "$tsan_logs"/*
            failed=$((failed + 1))
        else
            echo "== ThreadSanitizer: no report"
        fi
        rm -rf "$tsan_logs"
    else
        echo "thread sanitizer build failed"
        failed=$((failed + 1))
    fi
fi

echo
if [[ $skipped -gt 0 ]]; then
    echo "($skipped skipped)"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
