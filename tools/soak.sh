#!/bin/sh
# SPDX-License-Identifier: MIT
#
# soak.sh - the long mode of the impair suite (issue 16).
#
# Default (liveness): the liveness and flood tests with IMPAIR_LONG=1, i.e.
# 50 repetitions of every kind of killed peer (random timing under one
# printed seed) and 60 s floods whose RSS figures are printed at the end.
# Needs root (network namespaces) for the cut-wire cases; the rest runs on
# loopback.
#
# --matrix: the impairment matrix in full (test/impair/impair_matrix.py
# --full): every impairment (clean, MTU 1500 and 9000, loss 1 % and 5 %,
# reordering 25 %, duplication 1 %, delay 10 ms with jitter, a 50 Mbit/s
# rate limit, a mix) x iwperf --verify of Write, Read and Send x every size
# and framing (CRC on/off, Markers both ways), iwlive's work-request
# accounting, and NFS through both iwnfsgw gateways with 4 clients (sha256
# of everything; skipped where ganesha/libnfs are missing); then a Markdown
# table of throughput per case.  Passes repeat with seed, seed+1, ... until
# --duration seconds have gone or --passes are done.  Needs root.
#
# --all: the liveness mode, then the matrix.
#
#   tools/soak.sh [--matrix | --all] [--duration S] [--passes N] [--reps N]
#                 [BUILD_DIR] [SEED]
#       (default build, a seed drawn and printed; one pass of the matrix)
#
# e.g. tools/soak.sh --matrix --duration 14400 build 1234   (four hours)
#
# Exit status: that of the first test that failed, else 0.
set -eu
mode=liveness
duration=
passes=
reps=
while [ $# -gt 0 ]; do
	case $1 in
	--matrix) mode=matrix ;;
	--all) mode=all ;;
	--duration) duration=${2:?--duration needs seconds}; shift ;;
	--passes) passes=${2:?--passes needs a number}; shift ;;
	--reps) reps=${2:?--reps needs a number}; shift ;;
	-h | --help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) echo "soak.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
build=${1:-build}
seed=${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
src=$(cd "$(dirname "$0")/.." && pwd)
echo "soak: $mode, build $build, seed $seed"

liveness() {
	IMPAIR_LONG=1 IMPAIR_SEED="$seed" python3 "$src/test/impair/impair_liveness.py" \
		--seed "$seed" \
		--iwlive "$build/test/impair/iwlive" --iwperf "$build/tools/iwperf" \
		--iwping "$build/tools/iwping" --iwimpair "$build/tools/iwimpair/iwimpair"
	IMPAIR_LONG=1 IMPAIR_SEED="$seed" python3 "$src/test/impair/impair_flood.py" \
		--iwlive "$build/test/impair/iwlive" --iwping "$build/tools/iwping"
}

matrix() {
	set -- --full --seed "$seed" --iwperf "$build/tools/iwperf" \
		--iwimpair "$build/tools/iwimpair/iwimpair" --iwlive "$build/test/impair/iwlive"
	if [ -x "$build/tools/iwnfsgw" ]; then
		set -- "$@" --iwnfsgw "$build/tools/iwnfsgw"
	fi
	[ -z "$duration" ] || set -- "$@" --duration "$duration"
	[ -z "$passes" ] || set -- "$@" --passes "$passes"
	[ -z "$reps" ] || set -- "$@" --reps "$reps"
	echo "soak: python3 test/impair/impair_matrix.py $*"
	python3 "$src/test/impair/impair_matrix.py" "$@"
}

case $mode in
liveness) liveness ;;
matrix) matrix ;;
all) liveness; matrix ;;
esac
echo "soak: passed (seed $seed)"
