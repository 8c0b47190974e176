#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/coverage.sh - line coverage of the layer cores by their unit tests.
#
# usage: tools/coverage.sh [SUITE...]        (default suites: ddp rdmap)
# Builds build-cov/ with gcc --coverage, runs the given meson test suites,
# then prints line coverage per source file of ddp/ and rdmap/ and the total,
# using plain gcov (no extra packages).
set -euo pipefail
cd "$(dirname "$0")/.."
suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=(ddp rdmap)
dirs=(ddp rdmap)

if [[ ! -f build-cov/build.ninja ]]; then
    meson setup build-cov -Db_coverage=true -Dbuildtype=debug >/dev/null
fi
meson compile -C build-cov >/dev/null
find build-cov -name '*.gcda' -delete
args=()
for s in "${suites[@]}"; do args+=(--suite "$s"); done
meson test -C build-cov "${args[@]}" >/dev/null || { echo "tests failed"; exit 1; }

total=0
hit=0
printf '%-28s %8s %8s %7s\n' file lines covered percent
for d in "${dirs[@]}"; do
    objdir=build-cov/$d/libiwarp_$d.a.p
    [[ -d $objdir ]] || continue
    for src in "$d"/*.c; do
        # gcov prints "Lines executed:P% of N" for the file (0% when no test ran it).
        out=$(cd "$objdir" && gcov -n "$(basename "$src").gcno" 2>/dev/null |
            awk -v f="$(basename "$src")" '$0 ~ "File .*"f"'"'"'" {getline; print; exit}')
        pct=$(sed -n 's/Lines executed:\([0-9.]*\)% of \([0-9]*\)/\1 \2/p' <<<"$out")
        read -r p n <<<"$pct"
        c=$(awk -v p="$p" -v n="$n" 'BEGIN { printf "%d", p * n / 100 + 0.5 }')
        total=$((total + n))
        hit=$((hit + c))
        printf '%-28s %8d %8d %6.1f%%\n' "$src" "$n" "$c" "$p"
    done
done
awk -v h="$hit" -v t="$total" 'BEGIN { printf "%-28s %8d %8d %6.1f%%\n", "TOTAL", t, h, t ? 100 * h / t : 0 }'
