#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The gateways, then the NFS server behind them, killed (SIGKILL) and
# restarted in the middle of transfers:
# clients may get errors or retry, but never corrupted data.  Readers loop
# over nfs-cp reads of a file ganesha holds; writers loop over nfs-cp writes
# of fresh names.  The server gateway is killed and restarted, then the
# client gateway, while they run; then ganesha itself (the server gateway
# reconnects to it and sends the outstanding calls again, or answers them
# SYSTEM_ERR when it stays away too long).  Every read that nfs-cp reports as
# successful must match sha256; every write it reports as successful must be
# stored intact; after the restarts a last read and write must succeed.
# Bounded: each nfs-cp has a timeout, the loops a fixed count.
# usage: test_gw_restart.sh IWNFSGW   (exit 77: NFS software missing)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/gw_lib.sh"
gw_test_begin "$@"
MB=${GW_TEST_MB:-16}
ROUNDS=${GW_TEST_ROUNDS:-8}
gw_start_nfs || exit 1
gw_make_file "$GW_TMP/src.bin" "$MB"
nfs-cp "$GW_TMP/src.bin" "$(gw_url_direct ref.bin)" >/dev/null || { echo "direct write failed"; exit 1; }
want=$(gw_sha "$GW_TMP/src.bin")
SOPTS=(--retry-ms 300 --backend-retries 10)
gw_start_server "${SOPTS[@]}" || exit 1
gw_start_client --retry-ms 200 || exit 1

reader() { # id: ROUNDS reads; one line per read: ok / err / BAD
	local id=$1 r out
	for ((r = 0; r < ROUNDS; r++)); do
		out=$GW_TMP/rd$id-$r.bin
		if timeout 60 nfs-cp "$(gw_url_gw ref.bin)" "$out" >>"$GW_TMP/reader$id.log" 2>&1; then
			if [[ $(gw_sha "$out") == "$want" ]]; then echo ok; else echo "BAD read $id/$r"; fi
		else
			echo err
			sleep 0.7 # a gateway may be down: give it time to come back
		fi
		rm -f "$out"
	done
}

writer() { # id: ROUNDS writes of fresh names
	local id=$1 r name
	for ((r = 0; r < ROUNDS; r++)); do
		name=w$id-$r.bin
		if timeout 60 nfs-cp "$GW_TMP/src.bin" "$(gw_url_gw "$name")" >/dev/null 2>&1; then
			echo "ok $name"
		else
			echo "err $name"
			sleep 0.7
		fi
	done
}

reader 1 >"$GW_TMP/reader1.out" &
rp1=$!
reader 2 >"$GW_TMP/reader2.out" &
rp2=$!
writer 1 >"$GW_TMP/writer1.out" &
wp1=$!

sleep 1
echo "killing the server gateway (SIGKILL) mid-run"
kill -KILL "$gw_server_pid"
wait "$gw_server_pid" 2>/dev/null
sleep 0.5
gw_start_server "${SOPTS[@]}" || exit 1
sleep 1.5
echo "killing the client gateway (SIGKILL) mid-run"
kill -KILL "$gw_client_pid"
wait "$gw_client_pid" 2>/dev/null
sleep 0.5
gw_start_client --retry-ms 200 || exit 1

sleep 1.5
echo "killing ganesha (SIGKILL) mid-run and starting it again"
kill -KILL "$gw_ganesha_pid"
wait "$gw_ganesha_pid" 2>/dev/null
sleep 0.3
gw_start_ganesha || exit 1

wait "$rp1" "$rp2" "$wp1"
grep -h "backend.*\(retry\|connected;\|gave up\)\|SYSTEM_ERR" "$GW_TMP/gw-server.log" | head -n 8
cat "$GW_TMP"/reader?.out "$GW_TMP/writer1.out" | sort | uniq -c | sed 's/^/  /' | head -n 20
gw_check "no read returned corrupted data" bash -c "! grep -q BAD '$GW_TMP'/reader?.out"
okw=0
while read -r st name; do
	[[ $st == ok ]] || continue
	okw=$((okw + 1))
	gw_same "write $name reported ok is stored intact" "$GW_TMP/src.bin" "$GW_TMP/export/$name"
done <"$GW_TMP/writer1.out"
nok=$(cat "$GW_TMP"/reader?.out | grep -c '^ok')
echo "reads ok: $nok of $((2 * ROUNDS)); writes ok: $okw of $ROUNDS"

# after the restarts the gateways serve again
gw_check "a read after the restarts succeeds" \
	timeout 120 nfs-cp "$(gw_url_gw ref.bin)" "$GW_TMP/final.bin"
gw_same "... and matches" "$GW_TMP/src.bin" "$GW_TMP/final.bin"
gw_check "a write after the restarts succeeds" \
	timeout 120 nfs-cp "$GW_TMP/src.bin" "$(gw_url_gw final.bin)"
gw_same "... and is stored intact" "$GW_TMP/src.bin" "$GW_TMP/export/final.bin"
[[ $gw_failed == 0 ]] || exit 1
echo "restart: all checks passed"
