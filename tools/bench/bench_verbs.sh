#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench_verbs.sh - iwperf over the iWARP stack next to iwperf --tcp-baseline
# (the same pattern over plain TCP), on loopback, in the same run, as a
# markdown table of ratios.  A benchmark, not a test: the targets are shown,
# not enforced; the exit status is 1 only if a run failed.
#
# Usage: tools/bench/bench_verbs.sh [extra iwperf options for the iWARP runs]
#   e.g. tools/bench/bench_verbs.sh --engine epoll
# Environment:
#   BUILD    meson build directory holding tools/iwperf (default: build)
#   SECS     seconds per run (default: 3)
#   REPEAT   runs per case and transport, interleaved; the median is shown
#            (default: 1)
#
# Cases (ratio = iWARP / TCP; for the RTT, iWARP RTT / TCP RTT; each iWARP run
# is paired with the TCP run right after it, and the table shows the median of
# the pairs' ratios with their range when REPEAT >= 3; the iWARP and TCP
# columns are each transport's median):
#   RDMA Write 64 KiB, CRC on, markers off        bandwidth  target >= 0.97
#   Send 64 KiB                                   bandwidth  target >= 0.97
#   RDMA Read 64 KiB                              bandwidth  target >= 0.95
#   RDMA Write 64 KiB, markers both ways          bandwidth  target >= 0.93
#   Send ping-pong 64 B                           RTT p50    target <= 1.10
# and for the bandwidth cases the CPU time per 10^9 payload octets of each
# side: the client's from iwperf (cpu_s_per_gb, getrusage), the server's from
# /proc/PID/stat over the client's run (both poll, so each is near the elapsed
# time: a figure of cost, not of idle capacity)
set -euo pipefail

BUILD=${BUILD:-build}
SECS=${SECS:-3}
REPEAT=${REPEAT:-1}
IWPERF=$BUILD/tools/iwperf
EXTRA=("$@")

if [[ ! -x $IWPERF ]]; then
	echo "bench_verbs.sh: $IWPERF not found (build first, or set BUILD)" >&2
	exit 1
fi
command -v python3 >/dev/null || { echo "bench_verbs.sh: needs python3" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# start_server NAME ARGS...: an iwperf server on a free loopback port; sets $port.
start_server() {
	local name=$1 log
	shift
	log=$tmp/$name.log
	"$IWPERF" -s -a 127.0.0.1 -p 0 "$@" >"$log" 2>"$tmp/$name.err" &
	pids+=($!)
	srv_pid=$!
	for _ in $(seq 100); do
		port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\) .*/\1/p' "$log")
		[[ -n $port ]] && return 0
		sleep 0.05
	done
	echo "bench_verbs.sh: the $name server did not start:" >&2
	cat "$tmp/$name.err" >&2
	exit 1
}

echo "command: ${0} ${*}  (BUILD=$BUILD SECS=$SECS REPEAT=$REPEAT)"
echo "machine: $(nproc) CPUs, Linux $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A pid_of # server pid by port
start_server iwarp "${EXTRA[@]}"
p_iwarp=$port
pid_of[$port]=$srv_pid
start_server markers --markers on "${EXTRA[@]}"
p_markers=$port
pid_of[$port]=$srv_pid
start_server tcp --tcp-baseline
p_tcp=$port
pid_of[$port]=$srv_pid
TCK=$(getconf CLK_TCK)

# cpu_ticks PID: user + system clock ticks the process has used so far
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

results=$tmp/results.tsv
: >"$results"
failed=0

# run CASE TRANSPORT PORT ARGS...: one client run; its JSON total and the
# server's CPU seconds during the run go to $results.
run() {
	local case=$1 transport=$2 p=$3 out t0 t1
	shift 3
	echo "  $case: $transport: iwperf -c 127.0.0.1 -p $p --json --seconds $SECS $*" >&2
	t0=$(cpu_ticks "${pid_of[$p]}")
	if out=$("$IWPERF" -c 127.0.0.1 -p "$p" --json --seconds "$SECS" "$@" 2>"$tmp/client.err"); then
		t1=$(cpu_ticks "${pid_of[$p]}")
		printf '%s\t%s\t%s\t%s\n' "$case" "$transport" "$(tail -n 1 <<<"$out")" \
			"$(awk -v a="$t0" -v b="$t1" -v k="$TCK" 'BEGIN { printf "%.3f", (b - a) / k }')" \
			>>"$results"
	else
		echo "bench_verbs.sh: $case over $transport failed: $(cat "$tmp/client.err")" >&2
		failed=1
	fi
}

# bench_case NAME PORT IWARP-ONLY-OPTIONS TEST-OPTIONS...: the iWARP run (against
# the server at PORT) and the TCP run of the same test, interleaved, REPEAT times.
bench_case() {
	local name=$1 p=$2 iw_only
	read -r -a iw_only <<<"$3"
	shift 3
	for _ in $(seq "$REPEAT"); do
		run "$name" iwarp "$p" "$@" "${iw_only[@]}" "${EXTRA[@]}"
		run "$name" tcp "$p_tcp" --tcp-baseline "$@"
	done
}

bench_case "RDMA Write 64 KiB, CRC on, markers off" "$p_iwarp" "" --op write --size 65536
bench_case "Send 64 KiB" "$p_iwarp" "" --op send --size 65536
bench_case "RDMA Read 64 KiB" "$p_iwarp" "" --op read --size 65536
bench_case "RDMA Write 64 KiB, markers both ways" "$p_markers" "--markers on" --op write --size 65536
bench_case "Send ping-pong 64 B (RTT)" "$p_iwarp" "" --op send --pingpong --size 64

echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$results" <<'EOF'
import json, statistics, sys

targets = {
    "RDMA Write 64 KiB, CRC on, markers off": (">=", 0.97),
    "Send 64 KiB": (">=", 0.97),
    "RDMA Read 64 KiB": (">=", 0.95),
    "RDMA Write 64 KiB, markers both ways": (">=", 0.93),
    "Send ping-pong 64 B (RTT)": ("<=", 1.10),
}
runs = {}
for line in open(sys.argv[1]):
    case, transport, obj, srv_cpu = line.rstrip("\n").split("\t", 3)
    r = json.loads(obj)
    r["srv_cpu_s"] = float(srv_cpu)
    runs.setdefault(case, {}).setdefault(transport, []).append(r)

def value(r):
    return r["lat_us_p50"] if r["pingpong"] else r["gbytes_per_s"]

def cpu_per_gb(rs):
    """'client / server' CPU seconds per 10^9 payload octets, medians."""
    if rs[0]["pingpong"] or not all(r.get("cpu_s_per_gb") for r in rs):
        return "-"
    c = statistics.median(r["cpu_s_per_gb"] for r in rs)
    s = statistics.median(r["srv_cpu_s"] / (r["bytes"] / 1e9) for r in rs)
    return f"{c:.2f} / {s:.2f}"

print("| case | iWARP | TCP | ratio | target | met | CPU s/GB iWARP (client / server) | CPU s/GB TCP |")
print("|---|---:|---:|---:|---:|:---:|---:|---:|")
for case, (cmp, goal) in targets.items():
    t = runs.get(case, {})
    if "iwarp" not in t or "tcp" not in t:
        print(f"| {case} | failed | | | {cmp} {goal:.2f} | | | |")
        continue
    iw = statistics.median(value(r) for r in t["iwarp"])
    tcp = statistics.median(value(r) for r in t["tcp"])
    unit = "us" if t["iwarp"][0]["pingpong"] else "GB/s"
    # Each iWARP run is paired with the TCP run right after it: the host's
    # load shifts in phases of seconds to minutes, which moves both alike, so
    # the median of the pairs' ratios is steadier than a ratio of medians.
    pairs = [a / b for a, b in zip(map(value, t["iwarp"]), map(value, t["tcp"])) if b]
    ratio = statistics.median(pairs) if pairs else float("nan")
    spread = f" ({min(pairs):.2f}-{max(pairs):.2f})" if len(pairs) >= 3 else ""
    met = ratio >= goal if cmp == ">=" else ratio <= goal
    r0 = t["iwarp"][0]
    extra = f" ({r0['engine']}, CRC {'on' if r0['crc'] else 'off'}, markers {r0['markers']})"
    print(f"| {case}{extra} | {iw:.2f} {unit} | {tcp:.2f} {unit} | {ratio:.2f}{spread} | "
          f"{cmp} {goal:.2f} | {'yes' if met else 'no'} | {cpu_per_gb(t['iwarp'])} | "
          f"{cpu_per_gb(t['tcp'])} |")
EOF
exit "$failed"
