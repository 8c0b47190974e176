#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench_nfs.sh - NFS write and read throughput through both iwnfsgw gateways
# (nfs-cp -> iwnfsgw client -> iWARP -> iwnfsgw server -> nfs-ganesha) next
# to the same topology built from two plain user-space TCP relays (socat
# -b 1048576 with nodelay on both ends, one in place of each gateway: the
# cost of any copying relay) and to the copy straight over TCP to ganesha,
# on loopback, in the same run, as a markdown table of ratios.  A benchmark,
# not a test: the goal (>= 0.95 x the relay chain) is shown, not enforced;
# the exit status is 1 only if a copy failed or came back different.
#
# Usage: tools/bench/bench_nfs.sh [extra iwnfsgw options for both gateways]
#   e.g. tools/bench/bench_nfs.sh --credits 64
# Environment:
#   BUILD     meson build directory holding tools/iwnfsgw (default: build)
#   SIZE_MB   file size (default: 256)
#   REPEAT    copies per case and path, interleaved; the median is shown
#             (default: 3)
#   CLIENTS   also run this many clients at once through each path
#             (default: 4; 0 = skip), each with SIZE_MB / CLIENTS
#
# Cases: NFSv3 nfs-cp of one SIZE_MB file, write then read; the same with
# CLIENTS nfs-cp processes at once (aggregate throughput).  nfs-cp keeps one
# 1 MiB WRITE or READ in flight at a time, so the single-client case
# measures the latency of each 1 MiB round trip through the chain.
set -euo pipefail

SIZE_MB=${SIZE_MB:-256}
REPEAT=${REPEAT:-3}
CLIENTS=${CLIENTS:-4}
EXTRA=("$@")

# shellcheck source=nfs_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/nfs_common.sh"
nb_init bench_nfs.sh # gw_lib.sh, tools, scratch directory, cleanup

command -v socat >/dev/null || { echo "bench_nfs.sh: needs socat (tools/setup.sh)" >&2; exit 1; }
gw_start_nfs
gw_start_server "${EXTRA[@]}"
gw_start_client "${EXTRA[@]}"
# the relay chain: nfs-cp -> socat (RELAY1) -> socat (RELAY2) -> ganesha;
# MOUNT goes straight to ganesha, as it does for the gateway path
RELAY1=${RELAY1:-20060}
RELAY2=${RELAY2:-20061}
relay() { # listen port, target port
	socat -b 1048576 "TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr,fork,nodelay" \
		"TCP:127.0.0.1:$2,nodelay" 2>>"$GW_TMP/socat.log" &
	gw_pids+=($!)
	relay_pids+=($!)
	gw_wait_port "$1" 50 || { echo "bench_nfs.sh: socat did not listen on $1" >&2; exit 1; }
}
relay_pids=()
relay "$RELAY2" "$GW_NFS_PORT"
relay "$RELAY1" "$RELAY2"
url_for() { # path name
	case $1 in
	direct) gw_url_direct "$2" ;;
	relay) echo "nfs://127.0.0.1/export/$2?nfsport=$RELAY1&mountport=$GW_MNT_PORT" ;;
	*) gw_url_gw "$2" ;;
	esac
}
gw_make_file "$GW_TMP/src.bin" "$SIZE_MB"
want=$(gw_sha "$GW_TMP/src.bin")
n=0

fail() { nb_fail "$@"; }

one() { # path(direct|relay|gw) op(write|read): seconds in RES
	local url t name
	n=$((n + 1))
	name=b$n.bin
	url=$(url_for "$1" "$name")
	if [[ $2 == write ]]; then
		gw_timed t timeout 900 nfs-cp "$GW_TMP/src.bin" "$url" >/dev/null || fail "$1 write failed"
		[[ $(gw_sha "$GW_TMP/export/$name") == "$want" ]] || fail "$1 write stored differently"
	else
		# read a file written directly (fast) so reads never depend on a write
		timeout 900 nfs-cp "$GW_TMP/src.bin" "$(gw_url_direct "$name")" >/dev/null ||
			fail "direct write (to read back) failed"
		gw_timed t timeout 900 nfs-cp "$url" "$GW_TMP/back.bin" >/dev/null || fail "$1 read failed"
		[[ $(gw_sha "$GW_TMP/back.bin") == "$want" ]] || fail "$1 read back differs"
		rm -f "$GW_TMP/back.bin"
	fi
	rm -f "$GW_TMP/export/$name"
	RES=$t
}

many() { # path op: aggregate seconds of CLIENTS parallel copies of SIZE_MB/CLIENTS in RES
	local per=$((SIZE_MB / CLIENTS)) i t0 t1 pids=() url name
	((per > 0)) || per=1
	[[ -f $GW_TMP/part.bin ]] || head -c $((per * 1048576)) "$GW_TMP/src.bin" >"$GW_TMP/part.bin"
	for ((i = 0; i < CLIENTS; i++)); do
		n=$((n + 1))
		name=m$n.bin
		if [[ $2 == read ]]; then
			timeout 900 nfs-cp "$GW_TMP/part.bin" "$(gw_url_direct "$name")" >/dev/null ||
				fail "direct write (to read back) failed"
		fi
		names[i]=$name
	done
	t0=$(gw_now)
	for ((i = 0; i < CLIENTS; i++)); do
		url=$(url_for "$1" "${names[i]}")
		if [[ $2 == write ]]; then
			timeout 900 nfs-cp "$GW_TMP/part.bin" "$url" >/dev/null &
		else
			timeout 900 nfs-cp "$url" "$GW_TMP/mback$i.bin" >/dev/null &
		fi
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || fail "$1 $2 with $CLIENTS clients failed"; done
	t1=$(gw_now)
	for ((i = 0; i < CLIENTS; i++)); do
		if [[ $2 == read ]]; then
			cmp -s "$GW_TMP/mback$i.bin" "$GW_TMP/part.bin" || fail "$1 read $i differs"
		else
			cmp -s "$GW_TMP/export/${names[i]}" "$GW_TMP/part.bin" || fail "$1 write $i differs"
		fi
		rm -f "$GW_TMP/export/${names[i]}" "$GW_TMP/mback$i.bin"
	done
	RES=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}

median() { nb_median "$@"; }

# CPU ticks (user + system, with reaped children: socat serves each
# connection in a child) of the processes of a path's two relays
relay_ticks() { # path(relay|gw)
	local p t=0 f
	local pids=("${relay_pids[@]}")
	[[ $1 == gw ]] && pids=("$gw_server_pid" "$gw_client_pid")
	for p in "${pids[@]}"; do
		# fields 14-17 after the command, which may hold spaces: cut at ") "
		read -r -a f <<<"$(sed 's/.*) //' "/proc/$p/stat")"
		t=$((t + f[11] + f[12] + f[13] + f[14]))
	done
	echo "$t"
}
declare -A cpu=()

declare -A res
names=()
# measure RUNNER OP KEY_PREFIX: REPEAT interleaved direct/relay/gateway runs
# of RUNNER (one or many), the order rotating each round; medians into
# res[PREFIXdirect,OP], res[PREFIXrelay,OP] and res[PREFIXgw,OP].
measure() {
	local runner=$1 op=$2 pfx=$3 r k p
	local -A ts=()
	local order=(direct relay gw)
	for ((r = 0; r < REPEAT; r++)); do
		for ((k = 0; k < 3; k++)); do
			p=${order[(r + k) % 3]}
			if [[ $p != direct ]]; then
				c0=$(relay_ticks "$p")
			fi
			"$runner" "$p" "$op"
			ts[$p]+=" $RES"
			if [[ $p != direct ]]; then
				sleep 0.3 # socat reaps the child that served the copy
				cpu[$pfx$p,$op]=$((${cpu[$pfx$p,$op]:-0} + $(relay_ticks "$p") - c0))
			fi
		done
	done
	for p in direct relay gw; do
		# shellcheck disable=SC2086 # the list of times, split on purpose
		res[$pfx$p,$op]=$(median ${ts[$p]})
	done
}
for op in write read; do
	measure one "$op" ""
	if ((CLIENTS > 0)); then
		measure many "$op" m
	fi
done

bytes=$((SIZE_MB * 1048576))
mbytes=0
if ((CLIENTS > 0)); then
	mbytes=$(((SIZE_MB / CLIENTS > 0 ? SIZE_MB / CLIENTS : 1) * CLIENTS * 1048576))
fi
row() { # label bytes direct_s relay_s gw_s
	local d r g
	d=$(gw_mbps "$2" "$3")
	r=$(gw_mbps "$2" "$4")
	g=$(gw_mbps "$2" "$5")
	printf '| %-40s | %10s | %11s | %13s | %14s | %15s |\n' "$1" "$d" "$r" "$g" \
		"$(awk -v a="$r" -v b="$g" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }')" \
		"$(awk -v a="$d" -v b="$g" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }')"
}
echo
echo "NFSv3 nfs-cp, $SIZE_MB MiB, median of $REPEAT, MiB/s (goal: iWARP >= 0.95 x the relay chain)"
echo
printf '| %-40s | %10s | %11s | %13s | %14s | %15s |\n' "case" "direct TCP" "relay chain" \
	"through iWARP" "iWARP / relays" "iWARP / direct"
echo "|------------------------------------------|------------|-------------|---------------|----------------|-----------------|"
row "write, 1 client" "$bytes" "${res[direct,write]}" "${res[relay,write]}" "${res[gw,write]}"
row "read, 1 client" "$bytes" "${res[direct,read]}" "${res[relay,read]}" "${res[gw,read]}"
if ((CLIENTS > 0)); then
	row "write, $CLIENTS clients at once (aggregate)" "$mbytes" "${res[mdirect,write]}" \
		"${res[mrelay,write]}" "${res[mgw,write]}"
	row "read, $CLIENTS clients at once (aggregate)" "$mbytes" "${res[mdirect,read]}" \
		"${res[mrelay,read]}" "${res[mgw,read]}"
fi
# CPU seconds per GiB moved, of both relays together (the two socat
# processes, or the two gateways): how much dearer than a plain copying
# relay the gateways are, a figure the machine's load disturbs less than
# the throughput
hz=$(getconf CLK_TCK)
cpurow() { # label octets-per-run key
	local r g
	r=$(awk -v t="${cpu[${3/@/relay}]:-0}" -v b="$2" -v n="$REPEAT" -v hz="$hz" \
		'BEGIN { printf "%.2f", t / hz / (b * n / 1073741824) }')
	g=$(awk -v t="${cpu[${3/@/gw}]:-0}" -v b="$2" -v n="$REPEAT" -v hz="$hz" \
		'BEGIN { printf "%.2f", t / hz / (b * n / 1073741824) }')
	printf '| %-40s | %11s | %14s | %17s |\n' "$1" "$r" "$g" "$(nb_ratio "$r" "$g")"
}
echo
echo "CPU seconds per GiB moved, both relays' processes together (user + system)"
echo
printf '| %-40s | %11s | %14s | %17s |\n' "case" "relay chain" "iWARP gateways" "gateways / relays"
echo "|------------------------------------------|-------------|----------------|-------------------|"
cpurow "write, 1 client" "$bytes" "@,write"
cpurow "read, 1 client" "$bytes" "@,read"
if ((CLIENTS > 0)); then
	cpurow "write, $CLIENTS clients at once" "$mbytes" "m@,write"
	cpurow "read, $CLIENTS clients at once" "$mbytes" "m@,read"
fi
echo
echo "gateway options: ${EXTRA[*]:-(defaults)}; $(nproc) CPUs; iwnfsgw $("$GW_IWNFSGW" --version | awk '{ print $2 }'); relays: socat -b 1048576, nodelay"
