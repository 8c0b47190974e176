#!/bin/sh
# SPDX-License-Identifier: MIT
#
# soak.sh - the long mode of the impair suite (issue 16): the liveness and
# flood tests with IMPAIR_LONG=1, i.e. 50 repetitions of every kind of killed
# peer (random timing under one printed seed) and 60 s floods whose RSS
# figures are printed at the end.  Needs root (network namespaces) for the
# cut-wire cases; the rest runs on loopback.
#
#   tools/soak.sh [BUILD_DIR] [SEED]      (default build, a seed drawn and printed)
#
# Exit status: that of the first test that failed, else 0.
set -eu
build=${1:-build}
seed=${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
src=$(cd "$(dirname "$0")/.." && pwd)
echo "soak: build $build, seed $seed"
export IMPAIR_LONG=1 IMPAIR_SEED="$seed"
python3 "$src/test/impair/impair_liveness.py" --seed "$seed" \
	--iwlive "$build/test/impair/iwlive" --iwperf "$build/tools/iwperf" \
	--iwping "$build/tools/iwping" --iwimpair "$build/tools/iwimpair/iwimpair"
python3 "$src/test/impair/impair_flood.py" \
	--iwlive "$build/test/impair/iwlive" --iwping "$build/tools/iwping"
echo "soak: passed (seed $seed)"
