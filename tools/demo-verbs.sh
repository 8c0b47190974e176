#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# demo.sh - build iwarp and show it working over real TCP on loopback.
#
#   1. tools/setup.sh (packages + `meson setup build`) when present, then
#      `meson compile -C build`;
#   2. run 1: iwmpa responder and initiator on 127.0.0.1 with MPA rev 2, CRC,
#      Markers in both directions and peer-to-peer mode with a Write RTR,
#      captured with tshark;
#   3. run 2: MPA rev 1 (plain RFC 5044) with CRC off;
#   4. tshark's own reading of run 1, one line per frame: MPA Request, MPA
#      Reply, then every FPDU with its Markers ("FPDU back pointer") and the
#      CRC verdict ("Good CRC32"); the capture is kept as
#      $BUILD/iwmpa-demo.pcapng;
#   5. iwping (rping's protocol: Send, RDMA Read, RDMA Write per ping) between
#      two processes, 10 pings verified, and what tshark counts of it;
#   6. iwperf: RDMA Write, RDMA Read and Send bandwidth and Send ping-pong
#      latency, each next to the same pattern over plain TCP (--tcp-baseline).
#
# Environment: BUILD (build directory, default build), IWMPA_DEMO_PORT (TCP
# port, default 5044).  The capture needs root (or dumpcap with CAP_NET_RAW);
# without it, or without tshark, the demo runs and skips step 4.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${BUILD:-build}
PORT=${IWMPA_DEMO_PORT:-5044}
IWMPA=$BUILD/tools/iwmpa
IWPING=$BUILD/tools/iwping
IWPERF=$BUILD/tools/iwperf

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iwmpa-demo.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# --- 1. build ---------------------------------------------------------------
step "Building"
if [[ -x tools/setup.sh ]]; then
	tools/setup.sh "$BUILD"
elif [[ ! -d $BUILD ]]; then
	meson setup "$BUILD"
fi
meson compile -C "$BUILD"

# --- capture -----------------------------------------------------------------
capturing=false
tshark_pid=
start_capture() {
	local pcap=$1 _
	command -v tshark >/dev/null || { echo "(tshark not installed: no capture)"; return 0; }
	tshark -n -l -P -i lo -f "tcp port $PORT" -w "$pcap" >"$tmp/tshark.out" 2>&1 &
	tshark_pid=$!
	pids+=("$tshark_pid")
	# Probe: a SYN to the (still closed) port shows up once tshark really captures.
	for _ in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || true
		sleep 0.1
		if grep -q "$PORT.*SYN" "$tmp/tshark.out" 2>/dev/null; then
			capturing=true
			return 0
		fi
		if ! kill -0 "$tshark_pid" 2>/dev/null; then
			break
		fi
	done
	echo "(tshark cannot capture on lo - run as root for the packet view)"
	tail -n 2 "$tmp/tshark.out" || true
}

stop_capture() {
	$capturing || return 0
	sleep 0.3
	kill -INT "$tshark_pid" 2>/dev/null || true
	wait "$tshark_pid" 2>/dev/null || true
}

# Run one responder/initiator pair; arguments after "--" go to both sides.
exchange() {
	local resp_opts=() ini_opts=() common=() _
	while [[ $1 != "--" ]]; do resp_opts+=("$1"); shift; done
	shift
	while [[ $1 != "--" ]]; do ini_opts+=("$1"); shift; done
	shift
	common=("$@")
	"$IWMPA" -s -p "$PORT" "${resp_opts[@]}" "${common[@]}" >"$tmp/resp.log" 2>&1 &
	local rpid=$!
	pids+=("$rpid")
	for _ in $(seq 1 50); do
		grep -q listening "$tmp/resp.log" && break
		sleep 0.1
	done
	echo "\$ iwmpa -s -p $PORT ${resp_opts[*]} ${common[*]} &"
	echo "\$ iwmpa -c 127.0.0.1 -p $PORT ${ini_opts[*]} ${common[*]}"
	local rc=0
	"$IWMPA" -c 127.0.0.1 -p "$PORT" "${ini_opts[@]}" "${common[@]}" || rc=$?
	wait "$rpid" || rc=$?
	echo "--- responder's side:"
	cat "$tmp/resp.log"
	return "$rc"
}

# --- 2. run 1: rev 2, CRC, Markers both ways, p2p with a Write RTR ------------
step "Run 1: MPA rev 2, CRC on, Markers both ways, peer-to-peer with a Write RTR"
start_capture "$tmp/run1.pcapng"
exchange --markers on --p2p on --rtr write -- \
	--markers on --p2p on --rtr write -- \
	--mpa-rev 2 --crc on --count 2 --size 2000 --mss 1460
stop_capture

# --- 3. run 2: rev 1, CRC off ------------------------------------------------
step "Run 2: MPA rev 1 (RFC 5044), CRC off, no Markers"
exchange -- -- --mpa-rev 1 --crc off --count 2 --size 1000

# --- 4. what Wireshark sees ---------------------------------------------------
if $capturing; then
	step "Run 1 as tshark decodes it (one line per frame)"
	decode=(-n --enable-heuristic iwarp_mpa_tcp --disable-heuristic rpcrdma_iwarp
		--disable-heuristic smb_direct_iwarp -r "$tmp/run1.pcapng")
	# CRC verdicts ("Good CRC32" / "Bad CRC32") exist only as text in the detail view.
	tshark "${decode[@]}" -Y iwarp_mpa -O iwarp_mpa 2>/dev/null |
		awk '/^Frame [0-9]+:/ { f = $2; sub(":", "", f) }
		     /CRC check:/ { v = $0; sub(/.*\(/, "", v); sub(/[,)].*/, "", v); crc[f] = v }
		     END { for (k in crc) print k, crc[k] }' >"$tmp/crc.txt"
	tshark "${decode[@]}" -Y iwarp_mpa -T fields -E occurrence=a -E aggregator=, \
		-e frame.number -e tcp.srcport -e _ws.col.Info -e iwarp_mpa.marker_flag \
		-e iwarp_mpa.crc_flag -e iwarp_mpa.rev -e iwarp_mpa.ulpdulength \
		-e iwarp_mpa.marker_fpduptr 2>/dev/null |
		awk -F'\t' -v port="$PORT" -v crcfile="$tmp/crc.txt" '
		BEGIN { while ((getline l < crcfile) > 0) { split(l, a, " "); crc[a[1]] = substr(l, length(a[1]) + 2) } }
		{
			dir = ($2 == port) ? "responder -> initiator" : "initiator -> responder"
			info = $3; sub(/^[0-9]+ > [0-9]+ /, "", info)
			if (info ~ /MPA (Request|Reply)/)
				printf "%5s  %s  %-30s M=%s C=%s Rev %s\n", $1, dir, info,
					$4 == "1" ? 1 : 0, $5 == "1" ? 1 : 0, $6
			else
				printf "%5s  %s  %-30s ULPDU %-5s Markers %-16s %s\n", $1, dir, info,
					$7, ($8 == "" ? "-" : "@" $8), crc[$1]
		}' | tee "$tmp/summary.txt"
	if [[ ! -s $tmp/summary.txt ]]; then
		echo "(tshark decoded no MPA frame in the $(tshark -r "$tmp/run1.pcapng" 2>/dev/null |
			wc -l) captured packets)"
	else
		echo "(FPDU back pointers: distance from the FPDU start to each Marker," \
			"RFC 5044 section 4.2)"
	fi
	cp "$tmp/run1.pcapng" "$BUILD/iwmpa-demo.pcapng"
	echo "Capture saved as $BUILD/iwmpa-demo.pcapng; open it in Wireshark or run"
	echo "  tshark -r $BUILD/iwmpa-demo.pcapng -O iwarp_mpa,iwarp_ddp_rdmap"
fi
# --- 5. iwping ----------------------------------------------------------------
wait_listen() { # port: wait until something listens on it
	local _
	for _ in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

step "iwping: rping's protocol over the verbs API (10 pings, data verified)"
PORT=$((PORT + 2))
start_capture "$tmp/ping.pcapng"
echo "\$ iwping -s -a 127.0.0.1 -p $PORT &"
echo "\$ iwping -c -a 127.0.0.1 -p $PORT -C 10 -V -v"
"$IWPING" -s -a 127.0.0.1 -p "$PORT" >"$tmp/ping-server.log" 2>&1 &
spid=$!
pids+=("$spid")
sleep 0.3
"$IWPING" -c -a 127.0.0.1 -p "$PORT" -C 10 -V -v
wait "$spid"
stop_capture
if $capturing; then
	echo "--- tshark's count of the RDMAP messages (both directions; last segments):"
	tshark -n --enable-heuristic iwarp_mpa_tcp --disable-heuristic rpcrdma_iwarp \
		--disable-heuristic smb_direct_iwarp -r "$tmp/ping.pcapng" \
		-Y iwarp_rdma -T fields -E occurrence=a -E aggregator=, \
		-e iwarp_rdma.opcode -e iwarp_ddp.last_flag 2>/dev/null | awk -F'\t' '
		BEGIN { split("RDMA Write,RDMA Read Request,RDMA Read Response,Send,Send with Invalidate,Send with SE,Send with SE and Invalidate,Terminate", n, ",") }
		{ k = split($1, op, ","); split($2, last, ",")
		  for (i = 1; i <= k; i++) if (last[i] == "1" || last[i] == "True") c[n[op[i] + 1]]++ }
		END { for (k in c) printf "  %-22s %d\n", k, c[k] }' | sort
	malformed=$(tshark -n --enable-heuristic iwarp_mpa_tcp --disable-heuristic rpcrdma_iwarp \
		-r "$tmp/ping.pcapng" -Y _ws.malformed 2>/dev/null | wc -l)
	echo "  malformed packets: $malformed"
fi

# --- 6. iwperf -----------------------------------------------------------------
step "iwperf: bandwidth and latency, each next to plain TCP doing the same"
PORT=$((PORT + 1))
"$IWPERF" -s -a 127.0.0.1 -p "$PORT" -q >"$tmp/perf-server.log" 2>&1 &
pids+=($!)
"$IWPERF" -s -a 127.0.0.1 -p "$((PORT + 1))" --tcp-baseline -q >"$tmp/perf-tcp.log" 2>&1 &
pids+=($!)
wait_listen "$PORT"
wait_listen "$((PORT + 1))"
for t in "--op write" "--op read" "--op send" "--op send --pingpong"; do
	# shellcheck disable=SC2086
	echo "\$ iwperf -c 127.0.0.1 $t --seconds 2   (and the same with --tcp-baseline)"
	# shellcheck disable=SC2086
	"$IWPERF" -c 127.0.0.1 -p "$PORT" $t --seconds 2
	# shellcheck disable=SC2086
	"$IWPERF" -c 127.0.0.1 -p "$((PORT + 1))" $t --seconds 2 --tcp-baseline
done
echo "(tools/bench/bench_verbs.sh prints the same comparison as a table of ratios)"

step "Done"
