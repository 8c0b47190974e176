#!/bin/bash
# SPDX-License-Identifier: MIT
#
# iwping soak: iwping against iwping, COUNT checked pings (-V) per run, with
# each I/O engine (epoll, io_uring) over 127.0.0.1 and, when the host has it,
# ::1.  A run passes when both ends exit 0, the client printed (-v) exactly
# COUNT pings numbered 0..COUNT-1, and the server exactly as many.  Every
# process is bounded by timeout(1), so a hang fails instead of stalling CI.
#
# Usage: iwping_soak.sh IWPING [COUNT]
# Exit status: 0 every run passed (io_uring runs are left out, with a note,
# when the kernel refuses io_uring), 1 a failure, 77 nothing could run.

set -u

tool=${1:?usage: iwping_soak.sh IWPING [COUNT]}
count=${2:-1000}
limit=$((60 + count / 10)) # seconds per process; 1000 pings take well under 1 s

if [ ! -x "$tool" ]; then
	echo "FAIL: $tool is not executable"
	exit 1
fi
work=$(mktemp -d /tmp/iwping-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT

# True if something listens on TCP port $1 (state 0A in /proc/net/tcp{,6}).
listening() {
	local hex
	hex=$(printf '%04X' "$1")
	grep -Eq "^ *[0-9]+: [0-9A-F]+:$hex [0-9A-F]+:0000 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# True if $2 counts exactly $3 lines "<prefix>rdma-ping-N: " with N = 0, 1, ...
pings_in_order() {
	awk -v pre="$2" -v want="$3" '
		index($0, pre "rdma-ping-") == 1 {
			n = substr($0, length(pre) + 11); sub(/:.*/, "", n)
			if (n + 0 != seen + 0) bad = 1
			seen++
		}
		END { exit !(seen == want && !bad) }' "$1"
}

fails=0
runs=0
# run ENGINE ADDR: one server and one client; prints one line.
run() {
	local engine=$1 addr=$2 port spid srv_rc cli_rc what
	local so="$work/server.out" se="$work/server.err" co="$work/client.out" ce="$work/client.err"

	for _ in 1 2 3 4 5; do
		# below the ephemeral range, so the port is ours unless a listener has it
		port=$((20000 + RANDOM % 12000))
		listening "$port" && continue
		timeout -s INT -k 10 "$limit" "$tool" -s -a "$addr" -p "$port" -v \
			--engine "$engine" >"$so" 2>"$se" &
		spid=$!
		while ! listening "$port" && kill -0 "$spid" 2>/dev/null; do
			sleep 0.02
		done
		listening "$port" && break
		wait "$spid"
		if grep -q 'cannot open the iWARP device' "$se"; then
			echo "skip $engine $addr: $(head -n 1 "$se")"
			return
		fi
		grep -q 'in use' "$se" || break
	done
	runs=$((runs + 1))
	what="$engine $addr: $count pings"
	if ! listening "$port"; then
		echo "FAIL $what: the server did not start: $(head -n 1 "$se")"
		fails=$((fails + 1))
		return
	fi
	timeout -k 10 "$limit" "$tool" -c -a "$addr" -p "$port" -C "$count" -V -v \
		--engine "$engine" >"$co" 2>"$ce"
	cli_rc=$?
	wait "$spid"
	srv_rc=$?
	if [ "$cli_rc" -ne 0 ] || [ "$srv_rc" -ne 0 ]; then
		echo "FAIL $what: client exit $cli_rc, server exit $srv_rc (124 = timed out)"
		sed 's/^/     | client: /' "$ce" | tail -n 3
		sed 's/^/     | server: /' "$se" | tail -n 3
		fails=$((fails + 1))
	elif ! pings_in_order "$co" "ping data: " "$count"; then
		echo "FAIL $what: the client printed $(grep -c '^ping data: ' "$co") pings," \
			"not 0..$((count - 1)) in order"
		fails=$((fails + 1))
	elif ! pings_in_order "$so" "server ping data: " "$count"; then
		echo "FAIL $what: the server printed $(grep -c '^server ping data: ' "$so") pings," \
			"not 0..$((count - 1)) in order"
		fails=$((fails + 1))
	else
		echo "ok   $what, both ends exit 0"
	fi
}

addrs=127.0.0.1
if grep -q '^0\{31\}1 .* lo$' /proc/net/if_inet6 2>/dev/null; then
	addrs="$addrs ::1"
else
	echo "note: no ::1 on lo, IPv6 left out"
fi
for engine in epoll uring; do
	for addr in $addrs; do
		run "$engine" "$addr"
	done
done
if [ "$runs" -eq 0 ]; then
	echo "SKIP: no run was possible"
	exit 77
fi
echo "$((runs - fails)) of $runs runs passed"
[ "$fails" -eq 0 ]
