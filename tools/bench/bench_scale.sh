#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench_scale.sh - how the stack scales with the number of connections:
# iwscale (tools/bench/iwscale.c) as a server and as a client on loopback,
# each holding N idle RC connections in one process (4 posted 4 KiB receives
# each on one shared CQ, one 64-octet echo per connection, then all torn
# down with every posted receive flushed), for several N; a markdown table
# per side.  A benchmark, not a test: the goals are shown, not enforced; the
# exit status is 1 if a run failed.
#
# Usage: tools/bench/bench_scale.sh [N ...]     (default: 1024 4096 16384 65536)
# Beyond 20,000 connections the client spreads them over several loopback
# source addresses (iwscale --sources); N above the open-file hard limit
# needs a process that may raise it (root).
# Environment:
#   BUILD    meson build directory holding tools/iwscale (default: build)
#   TIMEOUT  seconds per run before iwscale gives up (default: 300)
#
# Columns: set-up (all N connecting at once until the last is established)
# and its CPU per connection; resident memory per idle connection (RSS after
# set-up minus before, the program's untouched receive buffers excluded);
# echo time; teardown time and receives flushed.
# Goals (issue 15): CPU <= 0.2 ms per connection at 16k, teardown of 16k under
# 2 s, <= 16 KiB resident per idle connection.
set -euo pipefail

BUILD=${BUILD:-build}
TIMEOUT=${TIMEOUT:-300}
IWSCALE=$BUILD/tools/iwscale
NS=("$@")
[[ ${#NS[@]} -gt 0 ]] || NS=(1024 4096 16384 65536)

if [[ ! -x $IWSCALE ]]; then
	echo "bench_scale.sh: $IWSCALE not found (build first, or set BUILD)" >&2
	exit 1
fi
command -v python3 >/dev/null || { echo "bench_scale.sh: needs python3" >&2; exit 1; }

tmp=$(mktemp -d)
srv=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[[ -n $srv ]] && kill -TERM "$srv" 2>/dev/null
	[[ -n $srv ]] && wait "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "command: ${0} ${NS[*]}  (BUILD=$BUILD TIMEOUT=$TIMEOUT)"
echo "machine: $(nproc) CPUs, Linux $(uname -r), open files hard limit $(ulimit -Hn)," \
	"ephemeral ports $(tr '\t' '-' </proc/sys/net/ipv4/ip_local_port_range)"
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"

failed=0
: >"$tmp/results"
for n in "${NS[@]}"; do
	"$IWSCALE" -s -p 0 -n "$n" --backlog 1024 --timeout "$TIMEOUT" --json \
		>"$tmp/srv.out" 2>"$tmp/srv.err" &
	srv=$!
	port=
	for _ in $(seq 200); do
		port=$(sed -n 's/^iwscale: listening on [^ ]*:\([0-9][0-9]*\) .*/\1/p' "$tmp/srv.out")
		[[ -n $port ]] && break
		sleep 0.05
	done
	if [[ -z $port ]]; then
		echo "bench_scale.sh: N=$n: the server did not start: $(cat "$tmp/srv.err")" >&2
		failed=1
		continue
	fi
	# one loopback source address per 20,000 connections: the ephemeral
	# ports of one address pair run out at about 28,000
	src=$(((n + 19999) / 20000))
	echo "  N=$n: iwscale -c 127.0.0.1 -p $port -n $n --sources $src" >&2
	if "$IWSCALE" -c 127.0.0.1 -p "$port" -n "$n" --sources "$src" --timeout "$TIMEOUT" --json \
		>"$tmp/cli.out" 2>"$tmp/cli.err"; then
		tail -n 1 "$tmp/cli.out" >>"$tmp/results"
	else
		echo "bench_scale.sh: N=$n: the client failed: $(tail -n 3 "$tmp/cli.err")" >&2
		failed=1
	fi
	if wait "$srv"; then
		tail -n 1 "$tmp/srv.out" >>"$tmp/results"
	else
		echo "bench_scale.sh: N=$n: the server failed: $(tail -n 3 "$tmp/srv.err")" >&2
		failed=1
	fi
	srv=
done

echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 - "$tmp/results" <<'EOF'
import json, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for side in ("client", "server"):
    print("%s side:" % side)
    print()
    print("| N | set-up | CPU per connection | RSS per idle connection | echo | teardown | receives flushed |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["side"] != side:
            continue
        print("| %d | %.2f s | %.3f ms | %.1f KiB | %.2f s | %.2f s | %d of %d |" % (
            r["conns"], r["setup_s"], r["setup_cpu_ms_per_conn"], r["rss_per_conn_kib"],
            r["echo_s"], r["teardown_s"], r["flushed"], r["flushed_expected"]))
    print()
print("goals: <= 0.2 ms CPU per connection and teardown under 2 s at 16384;"
      " <= 16 KiB resident per idle connection")
EOF
exit "$failed"
