#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# demo.sh - NFS over iWARP without an RDMA NIC, end to end on 127.0.0.1:
#
#   nfs-cp ──TCP──▶ iwnfsgw client ──iWARP (RPC-over-RDMA)──▶ iwnfsgw server ──TCP──▶ nfs-ganesha
#
#   1. tools/setup.sh (Debian packages, including nfs-ganesha, rpcbind and
#      libnfs-utils) and `meson compile -C build`;
#   2. rpcbind (unless one runs) and nfs-ganesha exporting a temporary
#      directory as /export on 127.0.0.1 (NFS port 20490, MOUNT 20491);
#   3. the same copy done directly over TCP to ganesha (nfs-cp, NFSv3), as
#      the baseline: write a DEMO_SIZE_MB file, read it back;
#   4. `iwnfsgw server` on 127.0.0.1:20049 in front of ganesha and
#      `iwnfsgw client` on 127.0.0.1:20050 toward it;
#   5. through the client gateway: write the file (NFSv3 WRITEs, whose data
#      the server gateway pulls with RDMA Read), read it back (READ data
#      pushed with RDMA Write), list the directory (nfs-ls), compare sha256
#      of what was written, what ganesha stored and what was read;
#   6. when FUSE is there (/dev/fuse and fusermount3), the export mounted
#      with iwnfs-mount, an NFSv3 client over RPC-over-RDMA in a FUSE file
#      system, straight to `iwnfsgw server` (no client gateway, no TCP on
#      the client side): plain `cp` in and out, `ls -l`, sha256; skipped with
#      one line otherwise;
#   7. the throughput of every path side by side, and the gateways'
#      per-connection counters (--stats);
#   8. everything it started is stopped (also on failure or Ctrl-C).
# The NFSv3 client reaches ganesha's MOUNT port directly (mountport= in the
# URL): the gateways carry the NFS program only (docs/nfs-gateway.md).
#
# Environment: BUILD (build directory, default build), DEMO_SIZE_MB (file
# size, default 256), GW_NFS_PORT / GW_RDMA_PORT / GW_CLIENT_PORT (ports,
# defaults 20490 / 20049 / 20050), DEMO_TIMEOUT (seconds one nfs-cp may
# take, default 900), DEMO_GW_OPTS (extra iwnfsgw options for
# both gateways, e.g. "--rprc"), IWNFSGW (the binary, default
# $BUILD/tools/iwnfsgw), IWNFS_MOUNT (default: next to IWNFSGW, else
# $BUILD/tools/iwnfs-mount/iwnfs-mount), DEMO_SKIP_BUILD=1 (skip step 1:
# already built), GW_KEEP=1 keeps the scratch directory.
# The MPA / verbs demo that used to be here is tools/demo-verbs.sh.
# Exit status: 0 when every copy succeeded and every checksum matched.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${BUILD:-build}
SIZE_MB=${DEMO_SIZE_MB:-256}
[[ $SIZE_MB =~ ^[1-9][0-9]*$ ]] || { echo "DEMO_SIZE_MB must be a positive integer" >&2; exit 2; }
read -r -a EXTRA <<<"${DEMO_GW_OPTS:-}"
T=${DEMO_TIMEOUT:-900} # seconds any one nfs-cp may take

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() {
	printf '\n\033[1;31mFAILED: %s\033[0m\n' "$*" >&2
	local f
	for f in "${GW_TMP:-/nonexistent}"/gw-server.log "${GW_TMP:-/nonexistent}"/gw-client.log \
		"${GW_TMP:-/nonexistent}"/iwnfs-mount.log; do
		[[ -s $f ]] && { echo "--- last lines of $(basename "$f"):"; tail -n 15 "$f"; } >&2
	done
	exit 1
}

# --- 1. build ---------------------------------------------------------------
if [[ ${DEMO_SKIP_BUILD:-0} != 1 ]]; then
	step "Building (tools/setup.sh installs what is missing)"
	tools/setup.sh "$BUILD"
	meson compile -C "$BUILD"
fi

# shellcheck source=../test/nfs/gw/gw_lib.sh
source test/nfs/gw/gw_lib.sh
GW_IWNFSGW=${IWNFSGW:-$BUILD/tools/iwnfsgw}
gw_have_tools || fail "nfs-ganesha, rpcbind or libnfs-utils missing (tools/setup.sh installs them)"
[[ -x $GW_IWNFSGW ]] || fail "$GW_IWNFSGW was not built"
gw_init
mnt_dir=
mnt_pid=
demo_cleanup() {
	# the FUSE mount first (lazily: a failed step may leave it busy), then
	# everything gw_lib.sh started
	if [[ -n $mnt_dir ]] && grep -qs " $mnt_dir fuse" /proc/self/mounts; then
		fusermount3 -u -z "$mnt_dir" 2>/dev/null || true
	fi
	[[ -n $mnt_pid ]] && { gw_stop_pid "$mnt_pid" || true; }
	gw_cleanup
}
trap demo_cleanup EXIT
trap 'exit 130' INT TERM

# --- 2. NFS server -------------------------------------------------------------
step "Starting rpcbind and nfs-ganesha (export /export = $GW_TMP/export)"
gw_start_nfs || fail "nfs-ganesha did not start"
echo "ganesha: NFS on 127.0.0.1:$GW_NFS_PORT, MOUNT on 127.0.0.1:$GW_MNT_PORT"

step "Making a $SIZE_MB MiB file of random data"
gw_make_file "$GW_TMP/src.bin" "$SIZE_MB"
src_sha=$(gw_sha "$GW_TMP/src.bin")
bytes=$((SIZE_MB * 1048576))
echo "sha256 $src_sha"

# --- 3. baseline: NFS over TCP straight to ganesha --------------------------------
step "Baseline: the same copy directly over TCP to ganesha (NFSv3)"
echo "\$ nfs-cp src.bin '$(gw_url_direct direct.bin)'"
gw_timed t_dw timeout "$T" nfs-cp "$GW_TMP/src.bin" "$(gw_url_direct direct.bin)" ||
	fail "direct write"
echo "\$ nfs-cp '$(gw_url_direct direct.bin)' direct-back.bin"
gw_timed t_dr timeout "$T" nfs-cp "$(gw_url_direct direct.bin)" "$GW_TMP/direct-back.bin" ||
	fail "direct read"
[[ $(gw_sha "$GW_TMP/direct-back.bin") == "$src_sha" ]] || fail "direct read-back differs"
rm -f "$GW_TMP/direct-back.bin"

# --- 4. gateways -----------------------------------------------------------------
step "Starting the gateways"
echo "\$ iwnfsgw server --listen 127.0.0.1:$GW_RDMA_PORT --backend 127.0.0.1:$GW_NFS_PORT --stats ${EXTRA[*]} &"
gw_start_server "${EXTRA[@]}" || fail "iwnfsgw server did not start"
echo "\$ iwnfsgw client --listen 127.0.0.1:$GW_CLIENT_PORT --remote 127.0.0.1:$GW_RDMA_PORT --stats ${EXTRA[*]} &"
gw_start_client "${EXTRA[@]}" || fail "iwnfsgw client did not start"

# --- 5. NFS over iWARP --------------------------------------------------------------
step "Writing $SIZE_MB MiB through the gateways (NFSv3 over RPC-over-RDMA over iWARP)"
echo "\$ nfs-cp src.bin '$(gw_url_gw big.bin)'"
gw_timed t_gw timeout "$T" nfs-cp "$GW_TMP/src.bin" "$(gw_url_gw big.bin)" || fail "write through the gateways"

step "Reading it back through the gateways"
echo "\$ nfs-cp '$(gw_url_gw big.bin)' back.bin"
gw_timed t_gr timeout "$T" nfs-cp "$(gw_url_gw big.bin)" "$GW_TMP/back.bin" || fail "read through the gateways"

step "Listing the export through the gateways"
echo "\$ nfs-ls '$(gw_url_gw '')'"
timeout "$T" nfs-ls "$(gw_url_gw '')" | tee "$GW_TMP/ls.txt" || fail "nfs-ls through the gateways"
grep -q "big.bin" "$GW_TMP/ls.txt" || fail "big.bin not listed"

step "Checking sha256"
stored_sha=$(gw_sha "$GW_TMP/export/big.bin")
back_sha=$(gw_sha "$GW_TMP/back.bin")
printf '  %-28s %s\n' "written (src.bin)" "$src_sha" "stored by ganesha" "$stored_sha" \
	"read back through iWARP" "$back_sha"
[[ $stored_sha == "$src_sha" ]] || fail "the file ganesha stored differs from the one written"
[[ $back_sha == "$src_sha" ]] || fail "the file read back differs from the one written"
echo "  all three match"

# --- 6. the export mounted with iwnfs-mount (FUSE) ---------------------------------
IWNFS_MOUNT=${IWNFS_MOUNT:-}
if [[ -z $IWNFS_MOUNT ]]; then
	IWNFS_MOUNT=$(dirname "$GW_IWNFSGW")/iwnfs-mount/iwnfs-mount
	[[ -x $IWNFS_MOUNT ]] || IWNFS_MOUNT=$BUILD/tools/iwnfs-mount/iwnfs-mount
fi
fuse_missing=
if [[ ! -c /dev/fuse ]] || ! { : <>/dev/fuse; } 2>/dev/null; then
	fuse_missing="/dev/fuse is missing or cannot be opened"
elif ! command -v fusermount3 >/dev/null; then
	fuse_missing="fusermount3 is not installed (Debian fuse3)"
elif [[ ! -x $IWNFS_MOUNT ]]; then
	fuse_missing="$IWNFS_MOUNT was not built (needs libfuse3-dev)"
fi
t_mw='' t_mr=''
if [[ -n $fuse_missing ]]; then
	step "Skipping the FUSE mount (iwnfs-mount): $fuse_missing"
else
	step "Mounting the export with iwnfs-mount (FUSE; NFSv3 over RPC-over-RDMA, no client gateway)"
	mnt_dir=$GW_TMP/mnt
	mkdir -p "$mnt_dir"
	echo "\$ iwnfs-mount 127.0.0.1:/export $mnt_dir -o port=$GW_RDMA_PORT,mountport=$GW_MNT_PORT -f --stats &"
	"$IWNFS_MOUNT" -f --stats 127.0.0.1:/export "$mnt_dir" \
		-o "port=$GW_RDMA_PORT,mountport=$GW_MNT_PORT" >"$GW_TMP/iwnfs-mount.log" 2>&1 &
	mnt_pid=$!
	for _ in $(seq 1 300); do
		grep -qs " $mnt_dir fuse" /proc/self/mounts && break
		kill -0 "$mnt_pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -qs " $mnt_dir fuse" /proc/self/mounts || fail "iwnfs-mount did not mount"
	echo "\$ cp src.bin mnt/mounted.bin"
	gw_timed t_mw timeout "$T" cp "$GW_TMP/src.bin" "$mnt_dir/mounted.bin" || fail "cp into the mount"
	echo "\$ ls -l mnt/"
	ls -l "$mnt_dir" | tee "$GW_TMP/mls.txt" || fail "ls of the mount"
	grep -q "mounted.bin" "$GW_TMP/mls.txt" || fail "mounted.bin not listed"
	echo "\$ cp mnt/mounted.bin mounted-back.bin"
	gw_timed t_mr timeout "$T" cp "$mnt_dir/mounted.bin" "$GW_TMP/mounted-back.bin" ||
		fail "cp out of the mount"
	m_stored=$(gw_sha "$GW_TMP/export/mounted.bin")
	m_back=$(gw_sha "$GW_TMP/mounted-back.bin")
	printf '  %-28s %s\n' "stored by ganesha" "$m_stored" "read back through the mount" "$m_back"
	[[ $m_stored == "$src_sha" ]] || fail "the file ganesha stored (written through the mount) differs"
	[[ $m_back == "$src_sha" ]] || fail "the file read back through the mount differs"
	echo "  both match the source"
	rm -f "$GW_TMP/mounted-back.bin"
	echo "\$ fusermount3 -u mnt"
	fusermount3 -u "$mnt_dir" || fail "fusermount3 -u"
	wait "$mnt_pid" || fail "iwnfs-mount exited with an error"
	mnt_pid=
	grep "stats:" "$GW_TMP/iwnfs-mount.log" | sed 's/^[0-9:.]* iwnfs-mount: /  /'
fi

# --- 7. results ------------------------------------------------------------------------
step "Throughput ($SIZE_MB MiB, nfs-cp, NFSv3, one client, loopback)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }'; }
printf '  %-6s %14s %16s %8s\n' "" "direct TCP" "through iWARP" "ratio"
printf '  %-6s %9s MiB/s %11s MiB/s %7sx\n' \
	write "$(gw_mbps "$bytes" "$t_dw")" "$(gw_mbps "$bytes" "$t_gw")" "$(ratio "$t_gw" "$t_dw")" \
	read "$(gw_mbps "$bytes" "$t_dr")" "$(gw_mbps "$bytes" "$t_gr")" "$(ratio "$t_gr" "$t_dr")"
echo "  (ratio = iWARP path throughput / direct TCP throughput; tools/bench/bench_nfs.sh repeats it)"
if [[ -n $t_mw ]]; then
	echo "  iwnfs-mount (cp through the FUSE mount, NFSv3 over iWARP, no client gateway):"
	printf '  %-6s %9s MiB/s %8sx direct TCP\n' \
		write "$(gw_mbps "$bytes" "$t_mw")" "$(ratio "$t_mw" "$t_dw")" \
		read "$(gw_mbps "$bytes" "$t_mr")" "$(ratio "$t_mr" "$t_dr")"
	echo "  (tools/bench/bench_mount.sh: fio and small files, repeated)"
fi

step "Gateway counters (--stats, printed at exit)"
gw_stop_pid "$gw_client_pid" || fail "iwnfsgw client exited with an error"
gw_client_pid=
gw_stop_pid "$gw_server_pid" || fail "iwnfsgw server exited with an error"
gw_server_pid=
echo "--- iwnfsgw client:"
grep -E "stats (closed|total)" "$GW_TMP/gw-client.log" | sed 's/^[0-9:.]* iwnfsgw: /  /'
echo "--- iwnfsgw server:"
grep -E "stats (closed|total)" "$GW_TMP/gw-server.log" | sed 's/^[0-9:.]* iwnfsgw: /  /'
if grep -q "stats total" "$GW_TMP/gw-server.log"; then
	echo "(write-chunk = READ data pushed by RDMA Write; read-chunk = WRITE data pulled by RDMA Read)"
fi

step "Done: NFS over iWARP works (sha256 verified)"
