#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/fuzz-campaign.sh - fuzzing hours: runs every libFuzzer target of
# fuzz/ under ASan+UBSan for a given time, keeps what found new coverage, and
# appends one row per target to the results table of docs/fuzzing.md.
#
# usage: tools/fuzz-campaign.sh [-t SECONDS] [-j JOBS] [-T TARGET[,TARGET...]]
#                               [--no-merge] [--no-table] [-B BUILDDIR]
#
#   -t SECONDS   time per target (default 1800, 30 minutes)
#   -j JOBS      targets fuzzed at once (default 1; each is one process)
#   -T LIST      only these targets (default: every fuzz/fuzz_*.c)
#   --no-merge   do not keep new inputs in fuzz/found/
#   --no-table   do not append to docs/fuzzing.md
#   -B DIR       the clang build (default build-fuzz; set up here when
#                missing: CC=clang, -Dfuzzing=true, ASan+UBSan)
#
# Per target: libFuzzer runs with the seed corpus fuzz/corpus/TARGET and the
# earlier finds fuzz/found/TARGET as inputs and a scratch directory
# fuzz-out/TARGET/new as its output; afterwards the inputs of the scratch
# directory that add coverage to seeds + finds (libFuzzer's -merge=1) are
# copied into fuzz/found/TARGET, which the fuzz-replay suite replays with the
# seeds.  Crashes, leaks, timeouts and OOMs stay in fuzz-out/TARGET/ and are
# counted as findings; the script exits 1 when there was any.
#
# The row: date, target, seconds, executions, coverage (libFuzzer's cov: edges
# and ft: features at the end), inputs kept, findings, commit.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

secs=1800
jobs=1
only=""
merge=1
table=1
build=build-fuzz

usage() {
    sed -n '4,27p' "$0" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
    case $1 in
    -t) secs=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -T) only=$2; shift 2 ;;
    -B) build=$2; shift 2 ;;
    --no-merge) merge=0; shift ;;
    --no-table) table=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "fuzz-campaign.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[0-9]+$ && $secs -gt 0 ]] || { echo "fuzz-campaign.sh: -t wants seconds > 0" >&2; exit 2; }
[[ $jobs =~ ^[0-9]+$ && $jobs -gt 0 ]] || { echo "fuzz-campaign.sh: -j wants a count > 0" >&2; exit 2; }

if [[ -n $only ]]; then
    IFS=, read -r -a targets <<<"$only"
else
    targets=()
    for f in fuzz/fuzz_*.c; do
        targets+=("$(basename "$f" .c)")
    done
fi
for t in "${targets[@]}"; do
    [[ -f fuzz/$t.c ]] || { echo "fuzz-campaign.sh: no target $t (fuzz/$t.c)" >&2; exit 2; }
done

if [[ ! -f $build/build.ninja ]]; then
    command -v clang >/dev/null || { echo "fuzz-campaign.sh: needs clang (tools/setup.sh)" >&2; exit 2; }
    CC=clang meson setup "$build" -Dfuzzing=true -Db_sanitize=address,undefined \
        -Db_lundef=false >/dev/null
fi
ninja -C "$build" $(printf 'fuzz/%s ' "${targets[@]}") >/dev/null

commit=$(git rev-parse --short HEAD 2>/dev/null || echo "-")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

# One target: fuzz, merge, print its row on stdout.
campaign_one() {
    local t=$1 out=fuzz-out/$1 exe=$build/fuzz/$1
    local seeds=fuzz/corpus/$1 found=fuzz/found/$1
    mkdir -p "$out/new" "$found"
    local log=$out/fuzz.log
    local t0 t1
    t0=$(date +%s)
    # -print_final_stats: executions; the DONE line: cov and ft
    "$exe" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$out/" \
        -timeout=25 -rss_limit_mb=2048 "$out/new" "$seeds" "$found" >"$log" 2>&1 || true
    t1=$(date +%s)
    local execs cov ft findings kept=0
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
    ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}')
    findings=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
        -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    if [[ $merge == 1 ]]; then
        # inputs that add coverage to seeds + earlier finds go to fuzz/found
        local base
        base=$(mktemp -d)
        cp "$seeds"/* "$base"/ 2>/dev/null || true
        cp "$found"/* "$base"/ 2>/dev/null || true
        local before
        before=$(ls "$base" | sort)
        "$exe" -merge=1 "$base" "$out/new" >"$out/merge.log" 2>&1 || true
        for f in $(comm -13 <(echo "$before") <(ls "$base" | sort)); do
            cp "$base/$f" "$found/"
            kept=$((kept + 1))
        done
        rm -rf "$base"
    fi
    rmdir "$found" 2>/dev/null || true
    printf '| %s | `%s` | %d | %s | %s / %s | %d | %d | %s |\n' "$(date -u +%F)" "$t" \
        $((t1 - t0)) "${execs:-?}" "${cov:-?}" "${ft:-?}" "$kept" "$findings" "$commit"
    if [[ $findings -gt 0 ]]; then
        echo "fuzz-campaign.sh: $t: $findings finding(s) in $out/ (log $log)" >&2
    fi
}

echo "fuzz-campaign: ${#targets[@]} target(s), $secs s each, $jobs at once, commit $commit"
running=0
for t in "${targets[@]}"; do
    echo "  $t: started $(date -u +%T)"
    campaign_one "$t" >>"$rows" &
    running=$((running + 1))
    if [[ $running -ge $jobs ]]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait
sort -t'|' -k3 "$rows" >"$rows.s" && mv "$rows.s" "$rows"

echo
echo "| date | target | seconds | executions | cov / ft | inputs kept | findings | commit |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
cat "$rows"
if [[ $table == 1 ]]; then
    # the table ends the "Campaign results" section, the last of the page
    cat "$rows" >>docs/fuzzing.md
    echo "(rows appended to docs/fuzzing.md)"
fi
total=$(awk -F'|' '{s += $8} END {print s + 0}' "$rows")
if [[ $total -gt 0 ]]; then
    echo "fuzz-campaign: $total finding(s); see fuzz-out/" >&2
    exit 1
fi
