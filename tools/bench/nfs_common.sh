# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# nfs_common.sh - what tools/bench/bench_nfs.sh and tools/bench/bench_mount.sh
# share: the start (top of the tree, test/nfs/gw/gw_lib.sh, the tools it
# needs, the scratch directory, the cleanup trap) and the statistics.
# Source it, then call nb_init with the script's name:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/nfs_common.sh"
#   nb_init bench_x.sh        # BUILD (default build) must hold tools/iwnfsgw
#   nb_cleanup_hooks+=(fn)    # run before gw_cleanup at exit
#   nb_median 3.1 2.9 3.0     # -> 3.0
#   nb_ratio A B              # B / A, two decimals (0 when A is 0)
#   nb_fail "message"         # to stderr, exit 1

nb_cleanup_hooks=()

nb_fail() {
	echo "${NB_NAME:-bench}: $*" >&2
	exit 1
}

nb_cleanup() {
	local h
	for h in "${nb_cleanup_hooks[@]}"; do
		"$h" || true
	done
	gw_cleanup
}

nb_init() { # script name
	NB_NAME=$1
	cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
	BUILD=${BUILD:-build}
	# shellcheck source=../../test/nfs/gw/gw_lib.sh
	source test/nfs/gw/gw_lib.sh
	GW_IWNFSGW=$BUILD/tools/iwnfsgw
	[[ -x $GW_IWNFSGW ]] || nb_fail "$GW_IWNFSGW not found (build first, or set BUILD)"
	gw_have_tools || nb_fail "needs nfs-ganesha, rpcbind, libnfs-utils (tools/setup.sh)"
	gw_init
	trap nb_cleanup EXIT
	trap 'exit 130' INT TERM
}

nb_median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

nb_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }'; }
