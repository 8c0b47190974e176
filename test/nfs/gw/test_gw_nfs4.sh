#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NFSv4 through the gateways: a file written with NFSv3 (libnfs 4.0 cannot
# write 4000 octets or more with NFSv4) is read back with NFSv4 COMPOUNDs
# (nfs-cat, nfs-cp: READ data in Write chunks), listed with NFSv4 READDIR,
# and a small NFSv4 WRITE goes through; every byte is compared.
# usage: test_gw_nfs4.sh IWNFSGW   (exit 77: NFS software missing)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/gw_lib.sh"
gw_test_begin "$@"
gw_start_nfs || exit 1
gw_start_server || exit 1
gw_start_client || exit 1

gw_make_file "$GW_TMP/src.bin" 8
head -c 1000 /dev/urandom >"$GW_TMP/small.bin"
gw_check "NFSv3 write of 8 MiB through the gateways" \
	nfs_cp "$GW_TMP/src.bin" "$(gw_url_gw v4read.bin)"
gw_check "NFSv4 nfs-cat through the gateways" \
	bash -c "timeout 180 nfs-cat '$(gw_url_v4 v4read.bin "$GW_CLIENT_PORT")' >'$GW_TMP/cat.bin'"
gw_same "NFSv4 nfs-cat returns the file written" "$GW_TMP/src.bin" "$GW_TMP/cat.bin"
gw_check "NFSv4 nfs-cp read through the gateways" \
	nfs_cp "$(gw_url_v4 v4read.bin "$GW_CLIENT_PORT")" "$GW_TMP/cp4.bin"
gw_same "NFSv4 nfs-cp returns the file written" "$GW_TMP/src.bin" "$GW_TMP/cp4.bin"
gw_check "NFSv4 nfs-ls through the gateways lists it" \
	bash -c "timeout 180 nfs-ls '$(gw_url_v4 '' "$GW_CLIENT_PORT")' | grep -q v4read.bin"
gw_check "NFSv4 write of 1000 octets through the gateways" \
	nfs_cp "$GW_TMP/small.bin" "$(gw_url_v4 small4.bin "$GW_CLIENT_PORT")"
gw_same "ganesha stored the NFSv4 write" "$GW_TMP/small.bin" "$GW_TMP/export/small4.bin"
gw_check "NFSv4 read of the small file" \
	bash -c "timeout 180 nfs-cat '$(gw_url_v4 small4.bin "$GW_CLIENT_PORT")' >'$GW_TMP/small-back.bin'"
gw_same "the small file reads back" "$GW_TMP/small.bin" "$GW_TMP/small-back.bin"
gw_check "no call failed in the gateways" \
	bash -c "! grep -q 'SYSTEM_ERR\|not delivered\|failed:' '$GW_TMP/gw-client.log' '$GW_TMP/gw-server.log'"
[[ $gw_failed == 0 ]] || exit 1
echo "nfs4: all checks passed"
