# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# gw_lib.sh - shared by tools/demo.sh, tools/bench/bench_nfs.sh and the
# test/nfs/gw tests: start and stop rpcbind + nfs-ganesha (VFS) on 127.0.0.1
# with a temporary export, the two iwnfsgw gateways, and timed nfs-cp copies.
# Why the settings: ganesha (4.3) exits at start unless rpcbind runs ("Cannot
# register NFS V3 on TCP"); Graceless skips the 90 s NFSv4 grace period.
# ganesha keeps files removed behind its back in its cache: use fresh file
# names in each test.
#
# The caller sets (defaults in brackets):
#   GW_TMP         scratch directory, removed by gw_cleanup [mktemp -d]
#   GW_IWNFSGW     the iwnfsgw binary [build/tools/iwnfsgw]
#   GW_NFS_PORT    ganesha's NFS port [20490]; MOUNT is +1, NLM +2, RQUOTA +3
#   GW_RDMA_PORT   iwnfsgw server's iWARP port [20049]
#   GW_CLIENT_PORT iwnfsgw client's TCP port [20050]
# and calls gw_cleanup from its EXIT trap.  Every process started here is
# recorded in gw_pids and stopped by gw_cleanup.

GW_NFS_PORT=${GW_NFS_PORT:-20490}
GW_MNT_PORT=$((GW_NFS_PORT + 1))
GW_RDMA_PORT=${GW_RDMA_PORT:-20049}
GW_CLIENT_PORT=${GW_CLIENT_PORT:-20050}
GW_IWNFSGW=${GW_IWNFSGW:-build/tools/iwnfsgw}
gw_pids=()
gw_rpcbind_pid=
gw_ganesha_pid=
gw_server_pid=
gw_client_pid=

gw_have_tools() { # 0 when ganesha, rpcbind and libnfs-utils are installed
	command -v ganesha.nfsd >/dev/null && command -v nfs-cp >/dev/null &&
		command -v nfs-ls >/dev/null && command -v nfs-cat >/dev/null &&
		{ command -v rpcbind >/dev/null || [[ -x /usr/sbin/rpcbind ]] || [[ -x /sbin/rpcbind ]]; } &&
		[[ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so || -n $(ls /usr/lib/*/ganesha/libfsalvfs.so 2>/dev/null) ]]
}

gw_init() {
	GW_TMP=${GW_TMP:-$(mktemp -d "${TMPDIR:-/tmp}/iwnfsgw.XXXXXX")}
	mkdir -p "$GW_TMP"
}

gw_wait_port() { # port [tries of 0.1 s]: until something accepts on 127.0.0.1:port
	local i
	for ((i = 0; i < ${2:-100}; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

gw_wait_log() { # file pattern [tries of 0.1 s]
	local i
	for ((i = 0; i < ${3:-100}; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

gw_start_nfs() { # rpcbind (unless one runs) + ganesha exporting $GW_TMP/export as /export
	local rpcbind plugins
	mkdir -p "$GW_TMP/export" "$GW_TMP/recovery"
	chmod 777 "$GW_TMP/export"
	if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
		rpcbind=$(command -v rpcbind || echo /usr/sbin/rpcbind)
		mkdir -p /run/rpcbind
		# -h 127.0.0.1 crashes rpcbind 1.2.6 (double free): listen on all, as Debian does
		"$rpcbind" -f -w >"$GW_TMP/rpcbind.log" 2>&1 &
		gw_rpcbind_pid=$!
		gw_pids+=("$gw_rpcbind_pid")
		local i
		for ((i = 0; i < 50; i++)); do
			rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break
			sleep 0.1
		done
	fi
	plugins=$(dirname "$(ls /usr/lib/*/ganesha/libfsalvfs.so 2>/dev/null | head -n 1)")
	cat >"$GW_TMP/ganesha.conf" <<EOF
NFS_CORE_PARAM {
    Bind_addr = 127.0.0.1;
    NFS_Port = $GW_NFS_PORT; MNT_Port = $GW_MNT_PORT; NLM_Port = $((GW_NFS_PORT + 2));
    Rquota_Port = $((GW_NFS_PORT + 3));
    Protocols = 3, 4;
    Enable_NLM = false;
    Enable_UDP = false;
    mount_path_pseudo = true;
    Plugins_Dir = "$plugins";
}
NFSv4 { Graceless = true; RecoveryRoot = "$GW_TMP/recovery"; }
LOG { Default_Log_Level = EVENT; }
EXPORT {
    Export_Id = 1; Path = "$GW_TMP/export"; Pseudo = "/export";
    Access_Type = RW; Squash = No_Root_Squash; SecType = sys;
    Protocols = 3, 4; Transports = TCP;
    FSAL { Name = VFS; }
}
EOF
	gw_start_ganesha
}

gw_start_ganesha() { # (again) with the configuration gw_start_nfs wrote
	: >"$GW_TMP/ganesha.log"
	ganesha.nfsd -F -f "$GW_TMP/ganesha.conf" -L "$GW_TMP/ganesha.log" \
		-p "$GW_TMP/ganesha.pid" -N NIV_EVENT >"$GW_TMP/ganesha.out" 2>&1 &
	gw_ganesha_pid=$!
	gw_pids+=("$gw_ganesha_pid")
	if ! gw_wait_log "$GW_TMP/ganesha.log" "NFS SERVER INITIALIZED" 200 ||
		! gw_wait_port "$GW_NFS_PORT" 50; then
		echo "ganesha did not start; its log:" >&2
		tail -n 20 "$GW_TMP/ganesha.log" "$GW_TMP/ganesha.out" >&2 2>/dev/null
		return 1
	fi
}

gw_start_server() { # [extra iwnfsgw options...]: iwnfsgw server in front of ganesha
	"$GW_IWNFSGW" server --listen "127.0.0.1:$GW_RDMA_PORT" \
		--backend "127.0.0.1:$GW_NFS_PORT" --stats "$@" >>"$GW_TMP/gw-server.log" 2>&1 &
	gw_server_pid=$!
	gw_pids+=("$gw_server_pid")
	gw_wait_log "$GW_TMP/gw-server.log" "listening for NFS/RDMA" 100 ||
		{ echo "iwnfsgw server did not start:" >&2; cat "$GW_TMP/gw-server.log" >&2; return 1; }
}

gw_start_client() { # [extra iwnfsgw options...]: iwnfsgw client toward the server gateway
	"$GW_IWNFSGW" client --listen "127.0.0.1:$GW_CLIENT_PORT" \
		--remote "127.0.0.1:$GW_RDMA_PORT" --stats "$@" >>"$GW_TMP/gw-client.log" 2>&1 &
	gw_client_pid=$!
	gw_pids+=("$gw_client_pid")
	gw_wait_log "$GW_TMP/gw-client.log" "listening for NFS over TCP" 100 ||
		{ echo "iwnfsgw client did not start:" >&2; cat "$GW_TMP/gw-client.log" >&2; return 1; }
}

gw_stop_pid() { # pid: SIGTERM, wait up to 5 s, then SIGKILL; returns its exit status
	local pid=$1 i rc=0
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || rc=$?
	return "$rc"
}

gw_cleanup() {
	local p
	for p in "$gw_client_pid" "$gw_server_pid"; do
		[[ -n $p ]] && gw_stop_pid "$p" || true
	done
	for p in "${gw_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${gw_pids[@]}"; do
		gw_stop_pid "$p" || true
	done
	if [[ -n ${GW_TMP:-} && -d $GW_TMP && -z ${GW_KEEP:-} ]]; then
		rm -rf "$GW_TMP"
	fi
}

# URLs: v3 over TCP to ganesha, and through the client gateway (MOUNT always
# goes straight to ganesha's MOUNT port: the gateways carry NFS only).
gw_url_direct() { echo "nfs://127.0.0.1/export/$1?nfsport=$GW_NFS_PORT&mountport=$GW_MNT_PORT${2:+&$2}"; }
gw_url_gw() { echo "nfs://127.0.0.1/export/$1?nfsport=$GW_CLIENT_PORT&mountport=$GW_MNT_PORT${2:+&$2}"; }
gw_url_v4() { echo "nfs://127.0.0.1/export/$1?version=4&nfsport=$2"; }

gw_now() { date +%s.%N; }

gw_mbps() { # octets seconds
	awk -v b="$1" -v s="$2" 'BEGIN { if (s <= 0) s = 1e-9; printf "%.1f", b / s / 1048576 }'
}

gw_timed() { # var cmd...: runs cmd, stores the elapsed seconds in var; returns cmd's status
	local __var=$1 t0 t1 rc=0
	shift
	t0=$(gw_now)
	"$@" || rc=$?
	t1=$(gw_now)
	printf -v "$__var" '%s' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
	return "$rc"
}

gw_make_file() { # path MiB: pseudo-random content
	head -c "$(($2 * 1048576))" /dev/urandom >"$1"
}

gw_sha() { sha256sum "$1" | awk '{ print $1 }'; }

# --- for the test scripts ------------------------------------------------------
# usage in a test: source gw_lib.sh; gw_test_begin "$@"  (argument 1: the
# iwnfsgw binary).  Exits 77 (skipped) when the NFS software is missing.
gw_test_begin() {
	GW_IWNFSGW=${1:?usage: $0 IWNFSGW}
	[[ -x $GW_IWNFSGW ]] || { echo "no $GW_IWNFSGW"; exit 77; }
	if ! gw_have_tools; then
		echo "SKIP: nfs-ganesha / rpcbind / libnfs-utils not installed (tools/setup.sh)"
		exit 77
	fi
	gw_init
	trap gw_test_end EXIT
	trap 'exit 130' INT TERM
	gw_failed=0
}

gw_test_end() {
	local rc=$? p
	# stop the gateways first: a sanitizer build reports leaks at exit
	for p in "$gw_client_pid" "$gw_server_pid"; do
		[[ -n $p ]] && { gw_stop_pid "$p" || true; }
	done
	gw_client_pid= gw_server_pid=
	if grep -l "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" \
		"$GW_TMP"/gw-*.log 2>/dev/null; then
		echo "FAIL a gateway reported a sanitizer error:"
		grep -h -A 12 "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" \
			"$GW_TMP"/gw-*.log | head -n 60
		[[ $rc -eq 0 || $rc -eq 77 ]] && rc=1
	fi
	if [[ $rc -ne 0 && $rc -ne 77 ]]; then
		echo "--- gateway logs (last lines):"
		tail -n 25 "$GW_TMP/gw-server.log" "$GW_TMP/gw-client.log" 2>/dev/null || true
	fi
	gw_cleanup
	exit "$rc"
}

gw_check() { # description command...: run, report ok/FAIL, remember a failure
	local what=$1
	shift
	if "$@"; then
		echo "ok   $what"
	else
		echo "FAIL $what"
		gw_failed=1
	fi
}

gw_same() { # description fileA fileB: sha256 equal
	gw_check "$1" test "$(gw_sha "$2")" = "$(gw_sha "$3")"
}

# libnfs tools with a time bound (a gateway that died must not hang a test)
nfs_cp() { timeout "${GW_NFS_TIMEOUT:-180}" nfs-cp "$@"; }
