#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/check-format.sh [SRCDIR] - fail if any C file differs from .clang-format
# (Linux kernel style, 100 columns).  Exit 77 (skip) without clang-format.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
command -v clang-format >/dev/null || { echo "clang-format not installed"; exit 77; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h')
else
    mapfile -t files < <(find . -path ./build\* -prune -o \( -name '*.c' -o -name '*.h' \) -print)
fi
bad=0
for f in "${files[@]}"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f   (fix: clang-format -i $f)"
        bad=1
    fi
done
echo "${#files[@]} files checked"
exit $bad
