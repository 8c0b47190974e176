#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A capture of the iWARP leg (client gateway -> server gateway, port 20049
# on loopback) during an NFSv3 write and read of a few MiB, decoded by tshark
# as RPC-over-RDMA carrying NFS: MPA Request/Reply, every checked CRC32c
# good, RDMA Read Requests for WRITE data, RDMA Writes for READ data, no
# malformed packet or expert error at MPA/DDP/RDMAP (gw_tshark_check.py).
# usage: test_gw_tshark.sh IWNFSGW   (exit 77: tshark, capture rights or NFS software missing)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/gw_lib.sh"
command -v tshark >/dev/null || { echo "SKIP: tshark not installed"; exit 77; }
gw_test_begin "$@"
probe_port=$((GW_RDMA_PORT + 10))

tshark -n -l -P -B 64 -i lo -f "tcp portrange $GW_RDMA_PORT-$probe_port" -w "$GW_TMP/gw.pcapng" \
	>"$GW_TMP/tshark.out" 2>&1 &
tshark_pid=$!
gw_pids+=("$tshark_pid")
capturing=0
for _ in $(seq 1 150); do
	(exec 3<>"/dev/tcp/127.0.0.1/$probe_port") 2>/dev/null || true
	sleep 0.1
	if grep -q "$probe_port.*SYN" "$GW_TMP/tshark.out" 2>/dev/null; then
		capturing=1
		break
	fi
	kill -0 "$tshark_pid" 2>/dev/null || break
done
if [[ $capturing != 1 ]]; then
	echo "SKIP: tshark cannot capture on lo (needs root or CAP_NET_RAW):"
	tail -n 3 "$GW_TMP/tshark.out"
	exit 77
fi

gw_start_nfs || exit 1
gw_start_server || exit 1
gw_start_client || exit 1
gw_make_file "$GW_TMP/src.bin" "${GW_TEST_MB:-4}"
gw_check "NFSv3 write through the gateways" nfs_cp "$GW_TMP/src.bin" "$(gw_url_gw cap.bin)"
gw_check "NFSv3 read through the gateways" nfs_cp "$(gw_url_gw cap.bin)" "$GW_TMP/back.bin"
gw_same "read back what was written" "$GW_TMP/src.bin" "$GW_TMP/back.bin"
gw_stop_pid "$gw_client_pid" || true
gw_client_pid=
sleep 0.5
kill -INT "$tshark_pid" 2>/dev/null
wait "$tshark_pid" 2>/dev/null
gw_check "tshark: RPC-over-RDMA carrying NFS, clean MPA/DDP/RDMAP, good CRCs" \
	python3 "$here/gw_tshark_check.py" "$GW_TMP/gw.pcapng" --port "$GW_RDMA_PORT"
if [[ $gw_failed != 0 ]]; then
	mkdir -p "${GW_SAVE_DIR:-/tmp}"
	cp "$GW_TMP/gw.pcapng" "${GW_SAVE_DIR:-/tmp}/iwnfsgw-tshark-failed.pcapng" 2>/dev/null &&
		echo "capture kept as ${GW_SAVE_DIR:-/tmp}/iwnfsgw-tshark-failed.pcapng"
	exit 1
fi
echo "tshark: all checks passed"
