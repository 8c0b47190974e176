#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench_compat.sh - Debian's unmodified perftest over iwarp's drop-in
# libibverbs.so.1/librdmacm.so.1 (through iwrun, docs/compat.md) next to iwperf
# doing the same operation on the verbs API directly, and iwperf
# --tcp-baseline (the same pattern over plain TCP), on loopback, in the same
# run, as a markdown table.  A benchmark, not a test: the target (the drop-in
# libraries cost at most 5 % against iwperf) is shown, not enforced; the exit
# status is 1 only if a run failed.
#
# Usage: tools/bench/bench_compat.sh
# Environment:
#   BUILD    meson build directory (tools/iwrun, tools/iwperf; default: build)
#   SECS     seconds per bandwidth run (default: 3)
#   ITERS    round trips per perftest latency run (default: 100000)
#   REPEAT   runs per case and program, interleaved; the medians are shown
#            (default: 1)
#   PIN      1: servers on CPU 0, clients on CPU 1 (taskset) in the bandwidth
#            cases and iwperf's polling ping-pongs; 0: where the scheduler puts them
#            (default: 1 on a machine with 2 or more CPUs).  Unpinned, a 2-core
#            machine now and then runs both busy programs of a bandwidth run
#            on one CPU for the whole run (the drop-in libraries add an engine
#            thread per process), which halves that run's figure and says
#            nothing about either stack.  The runs with engine threads
#            (perftest's ping-pongs, iwperf --wait memory) stay unpinned:
#            ib_write_lat spins on memory while its engine thread receives,
#            and pinned to the program's CPU the thread would have to preempt
#            its own program for every message.
#
# Cases (ratio = perftest / iwperf of the same round, the median over the
# rounds and their range; bandwidth target >= 0.95, RTT <= 1.05; the two
# runs of a ratio alternate their order from round to round):
#   RDMA Write, RDMA Read, Send of 64 KiB     bandwidth, GB/s (1e9 octets/s):
#       perftest -R --report_gbits / 8, iwperf's gbytes_per_s; iwperf with
#       perftest's queue depths over iwarp0 (it prints them: "TX depth 128",
#       and for Reads "Outstand reads 128", iwarp0's max_qp_rd_atom), so
#       --depth 128 and for Reads --ord 128 against a server with --ird 128
#       (128 Reads of 64 KiB in flight run slower than iwperf's default 16)
#   RDMA Write, Send of 2 octets, ping-pong   round trip, microseconds:
#       perftest -R t_typical x 2 (perftest reports half the round trip),
#       iwperf --pingpong lat_us_p50.  ib_write_lat waits for the peer's
#       write by watching memory, so an engine thread must receive for it:
#       its iwperf is --wait memory (both ends wait the same way, a server
#       with --engine-thread); the row "iwperf polling" shows iwperf's
#       default, which polls its CQ and so receives itself.
#       ib_send_lat polls its CQ as iwperf does; over the drop-in libraries
#       it has an engine thread and runs unpinned (as ib_write_lat), so its
#       iwperf has --engine-thread too and runs unpinned; the row "iwperf
#       pinned, no engine thread" shows iwperf's fastest arrangement
#   RDMA Write of 2 octets, ping-pong, iwrun --rt: ib_write_lat with the
#       engine threads at real-time priority (needs root or CAP_SYS_NICE;
#       else it runs as the case above), against iwperf --wait memory with
#       IWARP_ENGINE_RT=1 at both ends
set -euo pipefail

BUILD=${BUILD:-build}
SECS=${SECS:-3}
ITERS=${ITERS:-100000}
REPEAT=${REPEAT:-1}
if [[ -z ${PIN:-} ]]; then
	PIN=0
	[[ $(nproc) -ge 2 ]] && PIN=1
fi
SRV=()
CLI=()
if [[ $PIN == 1 ]]; then
	command -v taskset >/dev/null ||
		{ echo "bench_compat.sh: PIN=1 needs taskset (util-linux)" >&2; exit 1; }
	SRV=(taskset -c 0)
	CLI=(taskset -c 1)
fi
IWRUN=$BUILD/tools/iwrun
IWPERF=$BUILD/tools/iwperf

for f in "$IWRUN" "$IWPERF"; do
	if [[ ! -x $f ]]; then
		echo "bench_compat.sh: $f not found (build first, or set BUILD)" >&2
		exit 1
	fi
done
for p in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat python3; do
	command -v "$p" >/dev/null ||
		{ echo "bench_compat.sh: needs $p (tools/setup.sh installs perftest)" >&2; exit 1; }
done
if ! "$IWRUN" --check ib_write_bw >/dev/null; then
	echo "bench_compat.sh: ib_write_bw would not load iwarp's libraries:" >&2
	"$IWRUN" --check ib_write_bw >&2 || true
	exit 1
fi

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

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# iwperf servers: the stack, the TCP baseline (pinned as PIN says), and the
# stack with an engine thread, at normal and at real-time priority (unpinned)
start_iwperf() {
	local name=$1 pin=$2 log
	local -a cpu=()
	shift 2
	[[ $pin == 1 ]] && cpu=("${SRV[@]}")
	log=$tmp/$name.log
	"${cpu[@]}" "$IWPERF" -s -a 127.0.0.1 -p 0 "$@" >"$log" 2>"$tmp/$name.err" &
	pids+=($!)
	for _ in $(seq 100); do
		port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\) .*/\1/p' "$log")
		[[ -n $port ]] && return 0
		sleep 0.05
	done
	echo "bench_compat.sh: the $name server did not start:" >&2
	cat "$tmp/$name.err" >&2
	exit 1
}

echo "command: ${0}  (BUILD=$BUILD SECS=$SECS ITERS=$ITERS REPEAT=$REPEAT PIN=$PIN)"
echo "machine: $(nproc) CPUs, Linux $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"

start_iwperf iwarp 1 --ird 128
p_iwarp=$port
start_iwperf tcp 1 --tcp-baseline
p_tcp=$port
start_iwperf iwarp-thread 0 --engine-thread
p_thread=$port
IWARP_ENGINE_RT=1 start_iwperf iwarp-thread-rt 0 --engine-thread
p_thread_rt=$port

results=$tmp/results.tsv
: >"$results"
failed=0

# perftest CASE PROGRAM ARGS...: one perftest server and client through iwrun;
# the client's output goes to $results.
# Set before each call: PT_PIN (1: pin as PIN says) and PT_OPTS (iwrun options).
PT_PIN=1
PT_OPTS=()
perftest() {
	local case=$1 prog=$2 p srv out
	local -a srv_cpu=() cli_cpu=()
	shift 2
	if [[ $PT_PIN == 1 ]]; then
		srv_cpu=("${SRV[@]}")
		cli_cpu=("${CLI[@]}")
	fi
	p=$(free_port)
	echo "  $case: perftest: iwrun ${PT_OPTS[*]} $prog -R -F -p $p $* [127.0.0.1]" >&2
	"${srv_cpu[@]}" timeout $((SECS + 30)) "$IWRUN" "${PT_OPTS[@]}" "$prog" -R -F -p "$p" "$@" \
		>"$tmp/srv.out" 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		awk -v p=":$(printf '%04X' "$p")" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
			END { exit !f }' /proc/net/tcp && break
		sleep 0.05
	done
	local st=0
	out=$("${cli_cpu[@]}" timeout $((SECS + 30)) "$IWRUN" "${PT_OPTS[@]}" "$prog" -R -F -p "$p" "$@" \
		127.0.0.1 2>&1) || st=$?
	if [[ $st == 0 ]]; then
		printf '%s\t%s\tperftest\t%s\n' "$round" "$case" "$(base64 -w0 <<<"$out")" >>"$results"
	elif [[ $st == 124 ]]; then
		echo "bench_compat.sh: $case: $prog did not finish within $((SECS + 30)) s" >&2
		failed=1
	else
		echo "bench_compat.sh: $case: $prog failed ($st): $(tail -n 3 <<<"$out" | tr '\n' ' ')" >&2
		failed=1
	fi
	wait "$srv" 2>/dev/null || true
}

# iwperf CASE WHO PORT ARGS...: one iwperf client run (pinned as PIN says unless
# IP_PIN=0), its JSON to $results as WHO's figure.
IP_PIN=1
iwperf() {
	local case=$1 transport=$2 p=$3 out
	local -a cpu=()
	shift 3
	[[ $IP_PIN == 1 ]] && cpu=("${CLI[@]}")
	echo "  $case: $transport: iwperf -c 127.0.0.1 -p $p --json $*" >&2
	if out=$("${cpu[@]}" "$IWPERF" -c 127.0.0.1 -p "$p" --json "$@" 2>"$tmp/client.err"); then
		printf '%s\t%s\t%s\t%s\n' "$round" "$case" "$transport" "$(tail -n 1 <<<"$out")" >>"$results"
	else
		echo "bench_compat.sh: $case over $transport failed: $(cat "$tmp/client.err")" >&2
		failed=1
	fi
}

# Each case's perftest run and the iwperf run it is compared with go in one
# order in odd rounds and the other in even ones, so a machine that speeds up
# or slows down during the rounds does not favour either.
# pair CASE PERFTEST-ARGS... -- IWPERF-ARGS...
pair() {
	local case=$1 i
	shift
	local -a a=() b=()
	for ((i = 1; i <= $#; i++)); do
		[[ ${!i} == -- ]] && break
		a+=("${!i}")
	done
	b=("${@:i+1}")
	if ((round % 2)); then
		perftest "$case" "${a[@]}"
		iwperf "$case" "${b[@]}"
	else
		iwperf "$case" "${b[@]}"
		perftest "$case" "${a[@]}"
	fi
}

for round in $(seq "$REPEAT"); do
	for op in write read send; do
		c="$op 64 KiB"
		ord=()
		[[ $op == read ]] && ord=(--ord 128)
		pair "$c" "ib_${op}_bw" -s 65536 -D "$SECS" --report_gbits \
			-- iwarp "$p_iwarp" --op "$op" --size 65536 --seconds "$SECS" --depth 128 "${ord[@]}"
		iwperf "$c" tcp "$p_tcp" --tcp-baseline --op "$op" --size 65536 --seconds "$SECS"
	done
	PT_PIN=0
	IP_PIN=0
	c="write 2 B ping-pong"
	pair "$c" ib_write_lat -s 2 -n "$ITERS" \
		-- iwarp "$p_thread" --op write --pingpong --wait memory --size 2 --seconds "$SECS"
	IP_PIN=1
	iwperf "$c" poll "$p_iwarp" --op write --pingpong --size 2 --seconds "$SECS"
	iwperf "$c" tcp "$p_tcp" --tcp-baseline --op write --pingpong --size 2 --seconds "$SECS"
	c="send 2 B ping-pong"
	IP_PIN=0
	pair "$c" ib_send_lat -s 2 -n "$ITERS" \
		-- iwarp "$p_thread" --engine-thread --op send --pingpong --size 2 --seconds "$SECS"
	IP_PIN=1
	iwperf "$c" poll "$p_iwarp" --op send --pingpong --size 2 --seconds "$SECS"
	iwperf "$c" tcp "$p_tcp" --tcp-baseline --op send --pingpong --size 2 --seconds "$SECS"
	c="write 2 B ping-pong, iwrun --rt"
	PT_OPTS=(--rt)
	IP_PIN=0
	IWARP_ENGINE_RT=1 pair "$c" ib_write_lat -s 2 -n "$ITERS" \
		-- iwarp "$p_thread_rt" --op write --pingpong --wait memory --size 2 --seconds "$SECS"
	IP_PIN=1
	PT_OPTS=()
	PT_PIN=1
done

echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$results" <<'EOF'
import base64, json, re, statistics, sys

COL = re.compile(r"#\w+|(?:[\w.%]+ )?[\w.%]+\[[^\]]*\]")


def perftest_value(text):
    """GB/s of a bandwidth run, round trip in us of a latency run, or None."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#bytes"):
            cols = COL.findall(line)
            for row in lines[i + 1:]:
                vals = row.split()
                if vals and vals[0].isdigit():
                    r = dict(zip(cols, vals))
                    if "BW average[Gb/sec]" in r:
                        return float(r["BW average[Gb/sec]"]) / 8
                    if "t_typical[usec]" in r:
                        return 2 * float(r["t_typical[usec]"])
    return None


runs = {}    # case -> who -> [values]
rounds = {}  # case -> round -> who -> value
for line in open(sys.argv[1]):
    rnd, case, who, data = line.rstrip("\n").split("\t", 3)
    if who == "perftest":
        v = perftest_value(base64.b64decode(data).decode(errors="replace"))
    else:
        r = json.loads(data)
        v = r["lat_us_p50"] if r["pingpong"] else r["gbytes_per_s"]
    if v is not None:
        runs.setdefault(case, {}).setdefault(who, []).append(v)
        rounds.setdefault(case, {}).setdefault(rnd, {})[who] = v

print("| case | perftest over iwarp | iwperf | iwperf --tcp-baseline | perftest / iwperf (range) | target | met |")
print("|---|---:|---:|---:|---:|---:|:---:|")
# the --rt case's TCP baseline is the plain case's; "iwperf polling" (which
# receives by itself, ib_write_lat does not) is shown for what it is
RT = "write 2 B ping-pong, iwrun --rt"
POLL = "write 2 B ping-pong, iwperf polling its CQ"
SPOLL = "send 2 B ping-pong, iwperf pinned, no engine thread"
for rnd, r in rounds.get(RT, {}).items():
    base = rounds.get("write 2 B ping-pong", {}).get(rnd, {})
    if "tcp" in base:
        runs.setdefault(RT, {}).setdefault("tcp", []).append(base["tcp"])
for src, row in (("write 2 B ping-pong", POLL), ("send 2 B ping-pong", SPOLL)):
    for rnd, r in rounds.get(src, {}).items():
        p = {k: r[k] for k in ("perftest", "tcp") if k in r}
        if "poll" in r:
            p["iwarp"] = r["poll"]
        rounds.setdefault(row, {})[rnd] = p
        for k, v in p.items():
            runs.setdefault(row, {}).setdefault(k, []).append(v)
for case in ("write 64 KiB", "read 64 KiB", "send 64 KiB", "write 2 B ping-pong",
             "send 2 B ping-pong", RT, POLL, SPOLL):
    lat = "ping-pong" in case
    unit = "us RTT" if lat else "GB/s"
    cmp, goal = ("<=", 1.05) if lat else (">=", 0.95)
    t = runs.get(case, {})
    med = {k: statistics.median(v) for k, v in t.items()}
    cell = lambda k: "%.2f %s" % (med[k], unit) if k in med else "failed"
    # the ratio of each round's pair, measured minutes apart at most
    ratios = [r["perftest"] / r["iwarp"] for r in rounds.get(case, {}).values()
              if "perftest" in r and r.get("iwarp")]
    if ratios:
        ratio = statistics.median(ratios)
        met = ratio >= goal if cmp == ">=" else ratio <= goal
        rt = "%.2f" % ratio
        if len(ratios) > 1:
            rt += " (%.2f-%.2f)" % (min(ratios), max(ratios))
        mt = "yes" if met else "no"
    else:
        rt, mt = "", ""
    target = "%s %.2f" % (cmp, goal)
    if case == POLL:
        target, mt = "none: not the same wait", ""
    if case == SPOLL:
        target, mt = "none: not the same placement", ""
    print("| %s | %s | %s | %s | %s | %s | %s |" % (
        case, cell("perftest"), cell("iwarp"), cell("tcp"), rt, target, mt))
EOF
exit "$failed"
