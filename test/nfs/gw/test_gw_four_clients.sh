#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Four NFSv3 clients at once through the gateways: four writes in parallel,
# then four reads in parallel; four TCP connections on the client gateway,
# four RPC-over-RDMA connections, four backend connections; every file
# compared by sha256 as ganesha stored it and as read back.
# usage: test_gw_four_clients.sh IWNFSGW   (exit 77: NFS software missing)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/gw_lib.sh"
gw_test_begin "$@"
MB=${GW_TEST_MB:-8}
gw_start_nfs || exit 1
gw_start_server || exit 1
gw_start_client || exit 1

pids=()
for i in 1 2 3 4; do
	gw_make_file "$GW_TMP/src$i.bin" "$MB"
done
for i in 1 2 3 4; do
	timeout 300 nfs-cp "$GW_TMP/src$i.bin" "$(gw_url_gw "four$i.bin")" >"$GW_TMP/w$i.log" 2>&1 &
	pids+=($!)
done
for i in 1 2 3 4; do
	gw_check "client $i: write" wait "${pids[$((i - 1))]}"
done
pids=()
for i in 1 2 3 4; do
	timeout 300 nfs-cp "$(gw_url_gw "four$i.bin")" "$GW_TMP/back$i.bin" >"$GW_TMP/r$i.log" 2>&1 &
	pids+=($!)
done
for i in 1 2 3 4; do
	gw_check "client $i: read" wait "${pids[$((i - 1))]}"
done
for i in 1 2 3 4; do
	gw_same "client $i: ganesha stored what was written" "$GW_TMP/src$i.bin" "$GW_TMP/export/four$i.bin"
	gw_same "client $i: read back what was written" "$GW_TMP/src$i.bin" "$GW_TMP/back$i.bin"
done
n=$(grep -c "connected (credits" "$GW_TMP/gw-server.log")
gw_check "the server gateway saw at least 8 connections (4 writers + 4 readers), saw $n" test "$n" -ge 8
gw_check "no call failed in the gateways" \
	bash -c "! grep -q 'SYSTEM_ERR\|not delivered\|failed:' '$GW_TMP/gw-client.log' '$GW_TMP/gw-server.log'"
[[ $gw_failed == 0 ]] || { tail -n 3 "$GW_TMP"/[wr]?.log; exit 1; }
echo "four clients: all checks passed"
