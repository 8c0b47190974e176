#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench_mount.sh - an NFS export mounted with iwnfs-mount (FUSE; NFSv3 over
# RPC-over-RDMA straight to `iwnfsgw server` in front of nfs-ganesha) next to
# the same workloads over plain NFS/TCP to the same ganesha and through the
# gateway chain (iwnfsgw client -> iWARP -> iwnfsgw server), on loopback, in
# the same run, repeated and interleaved, as a markdown table of ratios.  A
# benchmark, not a test: the goal (the mount >= 0.9 x direct NFS/TCP for
# sequential I/O) is shown, not enforced; the exit status is 1 only if a
# workload failed or a copy came back different.
#
# The machines have no kernel NFS client, so the TCP side cannot run fio:
#   sequential  iwnfs-mount: fio, 1 MiB psync writes then reads, JOBS jobs
#               each on its own file of SIZE_MB / JOBS (end_fsync: the data
#               is committed), and the same with one job;
#               NFS/TCP and gateway chain: JOBS nfs-cp processes at once
#               (nfs-cp moves 1 MiB per READ / WRITE, one at a time: the same
#               shape as one fio job), and one nfs-cp;
#   small files FILES files created (open O_CREAT + close), stat'ed and
#               removed, one at a time, by the same python loop: through
#               the mount with os.*, over NFS/TCP and the gateway chain with
#               libnfs (ctypes: nfs_creat/nfs_close, nfs_stat64, nfs_unlink).
# Sequential figures are wall-clock (process start, MOUNT and connection
# included on every path: nfs-cp mounts each time, fio starts each time);
# nfs-cp reads into /dev/shm when there is one (fio's reads keep nothing).
#
# Usage: tools/bench/bench_mount.sh [extra iwnfsgw options for the gateways]
# Environment:
#   BUILD       meson build directory (tools/iwnfsgw, tools/iwnfs-mount)
#               (default: build)
#   IWNFS_MOUNT the iwnfs-mount binary (default $BUILD/tools/iwnfs-mount/iwnfs-mount)
#   MOUNT_OPTS  extra iwnfs-mount -o options (e.g. credits=64)
#   SIZE_MB     data per sequential case (default: 256)
#   JOBS        parallel jobs / nfs-cp processes (default: 4)
#   FILES       small files per round (default: 500)
#   REPEAT      rounds, the paths' order rotating each round; the median is
#               shown (default: 3)
#   GW_NFS_PORT / GW_RDMA_PORT / GW_CLIENT_PORT  as test/nfs/gw/gw_lib.sh
# shellcheck disable=SC2034 # RES_* are read by name (measure)
set -euo pipefail

SIZE_MB=${SIZE_MB:-256}
JOBS=${JOBS:-4}
FILES=${FILES:-500}
REPEAT=${REPEAT:-3}
EXTRA=("$@")

# shellcheck source=nfs_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/nfs_common.sh"
nb_init bench_mount.sh # gw_lib.sh, tools, scratch directory, cleanup

IWNFS_MOUNT=${IWNFS_MOUNT:-$BUILD/tools/iwnfs-mount/iwnfs-mount}
[[ -x $IWNFS_MOUNT ]] || nb_fail "$IWNFS_MOUNT not found (needs libfuse3-dev; build first, or set BUILD)"
command -v fio >/dev/null || nb_fail "needs fio (tools/setup.sh)"
command -v fusermount3 >/dev/null || nb_fail "needs fusermount3 (Debian fuse3)"
{ : <>/dev/fuse; } 2>/dev/null || nb_fail "/dev/fuse is missing or cannot be opened"
python3 -c 'import ctypes.util, sys; sys.exit(0 if ctypes.util.find_library("nfs") else 1)' ||
	nb_fail "libnfs (libnfs13) not found for the small-file loop"
((SIZE_MB >= JOBS)) || nb_fail "SIZE_MB must be at least JOBS"

gw_start_nfs || nb_fail "nfs-ganesha did not start"
gw_start_server "${EXTRA[@]}" || nb_fail "iwnfsgw server did not start"
gw_start_client "${EXTRA[@]}" || nb_fail "iwnfsgw client did not start"

MNT=$GW_TMP/mnt
mkdir -p "$MNT"
mnt_pid=
unmount() {
	if grep -qs " $MNT fuse" /proc/self/mounts; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT" 2>/dev/null || true
	fi
	if [[ -n $mnt_pid ]]; then
		wait "$mnt_pid" 2>/dev/null || true
	fi
}
nb_cleanup_hooks+=(unmount)
"$IWNFS_MOUNT" -f --stats 127.0.0.1:/export "$MNT" \
	-o "port=$GW_RDMA_PORT,mountport=$GW_MNT_PORT${MOUNT_OPTS:+,$MOUNT_OPTS}" \
	>"$GW_TMP/iwnfs-mount.log" 2>&1 &
mnt_pid=$!
for _ in $(seq 1 300); do
	grep -qs " $MNT fuse" /proc/self/mounts && break
	kill -0 "$mnt_pid" 2>/dev/null || break
	sleep 0.1
done
grep -qs " $MNT fuse" /proc/self/mounts || { cat "$GW_TMP/iwnfs-mount.log" >&2; nb_fail "iwnfs-mount did not mount"; }

# nfs-cp reads into memory (tmpfs) where there is one, as fio's reads do not
# write anywhere: the TCP paths are not charged with a local disk write
BACK=$GW_TMP
if [[ -d /dev/shm && -w /dev/shm ]]; then
	BACK=$(mktemp -d /dev/shm/bench_mount.XXXXXX)
	rm_back() { rm -rf "$BACK"; }
	nb_cleanup_hooks+=(rm_back)
fi

url_for() { # path(direct|gw) name
	if [[ $1 == direct ]]; then gw_url_direct "$2"; else gw_url_gw "$2"; fi
}

n=0
# seq PATH JOBS: write then read JOBS files of SIZE_MB/JOBS MiB at once,
# 1 MiB at a time; the seconds of each in RES_W and RES_R
seq_run() {
	local path=$1 jobs=$2 per=$((SIZE_MB / $2)) i t0 t1 pids=() names=()
	n=$((n + 1))
	if [[ $path == mount ]]; then
		local dir=$MNT/seq$n
		mkdir "$dir"
		gw_timed RES_W fio --name=s --directory="$dir" --rw=write --bs=1M --size="${per}M" \
			--numjobs="$jobs" --ioengine=psync --end_fsync=1 --output="$GW_TMP/fio.out" ||
			nb_fail "fio write through the mount failed: $(tail -n 5 "$GW_TMP/fio.out")"
		for ((i = 0; i < jobs; i++)); do
			[[ $(stat -c %s "$GW_TMP/export/seq$n/s.$i.0") == $((per * 1048576)) ]] ||
				nb_fail "fio job $i: the exported file has the wrong size"
		done
		gw_timed RES_R fio --name=s --directory="$dir" --rw=read --bs=1M --size="${per}M" \
			--numjobs="$jobs" --ioengine=psync --output="$GW_TMP/fio.out" ||
			nb_fail "fio read through the mount failed: $(tail -n 5 "$GW_TMP/fio.out")"
		rm -rf "$dir"
		return
	fi
	[[ -f $GW_TMP/part$jobs.bin ]] || head -c $((per * 1048576)) /dev/urandom >"$GW_TMP/part$jobs.bin"
	for ((i = 0; i < jobs; i++)); do names[i]=q$n.$i.bin; done
	t0=$(gw_now)
	for ((i = 0; i < jobs; i++)); do
		timeout 900 nfs-cp "$GW_TMP/part$jobs.bin" "$(url_for "$path" "${names[i]}")" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || nb_fail "$path: nfs-cp write failed"; done
	t1=$(gw_now)
	RES_W=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	pids=()
	t0=$(gw_now)
	for ((i = 0; i < jobs; i++)); do
		timeout 900 nfs-cp "$(url_for "$path" "${names[i]}")" "$BACK/back$i.bin" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || nb_fail "$path: nfs-cp read failed"; done
	t1=$(gw_now)
	RES_R=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	for ((i = 0; i < jobs; i++)); do
		cmp -s "$GW_TMP/export/${names[i]}" "$GW_TMP/part$jobs.bin" || nb_fail "$path: write $i stored differently"
		cmp -s "$BACK/back$i.bin" "$GW_TMP/part$jobs.bin" || nb_fail "$path: read $i differs"
		rm -f "$GW_TMP/export/${names[i]}" "$BACK/back$i.bin"
	done
}

# The small-file loop: python, os.* through the mount, libnfs (ctypes)
# over NFS; prints "creates/s stats/s removes/s"
cat >"$GW_TMP/small.py" <<'EOF'
import ctypes
import ctypes.util
import os
import sys
import time

mode, target, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "fs":
    base = target
    os.mkdir(base)

    def create(p):
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))

    stat, remove, rmdir = os.stat, os.unlink, os.rmdir
else:  # mode "nfs", target: nfs://host/export/DIR?nfsport=..&mountport=..
    class Url(ctypes.Structure):
        _fields_ = [("server", ctypes.c_char_p), ("path", ctypes.c_char_p),
                    ("file", ctypes.c_char_p)]

    lib = ctypes.CDLL(ctypes.util.find_library("nfs"))
    lib.nfs_init_context.restype = ctypes.c_void_p
    lib.nfs_parse_url_full.restype = ctypes.POINTER(Url)
    lib.nfs_parse_url_full.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nfs_get_error.restype = ctypes.c_char_p
    for f in ("nfs_mount", "nfs_mkdir", "nfs_creat", "nfs_close", "nfs_stat64", "nfs_unlink",
              "nfs_rmdir", "nfs_get_error"):
        getattr(lib, f).argtypes = None
    nfs = ctypes.c_void_p(lib.nfs_init_context())
    url = lib.nfs_parse_url_full(nfs, target.encode())
    if not url:
        sys.exit("bad URL: %s" % lib.nfs_get_error(nfs))
    if lib.nfs_mount(nfs, url.contents.server, url.contents.path) != 0:
        sys.exit("nfs_mount: %s" % lib.nfs_get_error(nfs))
    base = "/" + url.contents.file.decode().strip("/")

    def chk(rc, what):
        if rc != 0:
            raise OSError("%s: %s" % (what, lib.nfs_get_error(nfs).decode()))

    def create(p):
        fh = ctypes.c_void_p()
        chk(lib.nfs_creat(nfs, p.encode(), 0o644, ctypes.byref(fh)), "creat " + p)
        chk(lib.nfs_close(nfs, fh), "close " + p)

    buf = ctypes.create_string_buffer(1024)  # struct nfs_stat_64

    def stat(p):
        chk(lib.nfs_stat64(nfs, p.encode(), buf), "stat " + p)

    def remove(p):
        chk(lib.nfs_unlink(nfs, p.encode()), "unlink " + p)

    def rmdir(p):
        chk(lib.nfs_rmdir(nfs, p.encode()), "rmdir " + p)

    chk(lib.nfs_mkdir(nfs, base.encode()), "mkdir " + base)
names = [base + "/f%05d" % i for i in range(count)]
rates = []
for fn in (create, stat, remove):
    t0 = time.monotonic()
    for p in names:
        fn(p)
    rates.append(count / (time.monotonic() - t0))
rmdir(base)
print("%.1f %.1f %.1f" % tuple(rates))
EOF

# small PATH: FILES files created, stat'ed, removed: ops/s in RES_C RES_S RES_D
small_run() {
	local out
	n=$((n + 1))
	if [[ $1 == mount ]]; then
		out=$(python3 "$GW_TMP/small.py" fs "$MNT/sm$n" "$FILES") || nb_fail "small files through the mount failed"
	else
		out=$(python3 "$GW_TMP/small.py" nfs "$(url_for "$1" "sm$n")" "$FILES") ||
			nb_fail "small files over $1 failed"
	fi
	read -r RES_C RES_S RES_D <<<"$out"
}

declare -A res
# measure RUNNER ARGS... : REPEAT rounds of direct / gw / mount, the order
# rotating each round; the medians of RES_<k> for k in KEYS into
# res[PATH,LABEL<k>]
measure() {
	local label=$1 keys=$2 runner=$3 r k p key
	shift 3
	local -A ts=()
	local order=(direct gw mount)
	for ((r = 0; r < REPEAT; r++)); do
		for ((k = 0; k < 3; k++)); do
			p=${order[(r + k) % 3]}
			"$runner" "$p" "$@"
			for key in $keys; do
				local v="RES_$key"
				ts[$p,$key]+=" ${!v}"
			done
		done
	done
	for p in direct gw mount; do
		for key in $keys; do
			# shellcheck disable=SC2086 # the list of values, split on purpose
			res[$p,$label$key]=$(nb_median ${ts[$p,$key]})
		done
	done
}

echo "bench_mount.sh: $SIZE_MB MiB per sequential case, $JOBS jobs, $FILES small files, $REPEAT rounds" >&2
measure "seq$JOBS" "W R" seq_run "$JOBS"
measure seq1 "W R" seq_run 1
measure small "C S D" small_run

bytes=$(((SIZE_MB / JOBS) * JOBS * 1048576))
bytes1=$((SIZE_MB * 1048576))
row_mbps() { # label bytes key
	local d g m
	d=$(gw_mbps "$2" "${res[direct,$3]}")
	g=$(gw_mbps "$2" "${res[gw,$3]}")
	m=$(gw_mbps "$2" "${res[mount,$3]}")
	printf '| %-44s | %12s | %13s | %11s | %13s |\n' "$1" "$d" "$g" "$m" "$(nb_ratio "$d" "$m")"
}
row_ops() { # label key
	local d=${res[direct,$2]} g=${res[gw,$2]} m=${res[mount,$2]}
	printf '| %-44s | %12.0f | %13.0f | %11.0f | %13s |\n' "$1" "$d" "$g" "$m" "$(nb_ratio "$d" "$m")"
}
echo
echo "iwnfs-mount vs NFSv3 over TCP, median of $REPEAT, loopback (goal: mount >= 0.9 x direct TCP for sequential I/O)"
echo
printf '| %-44s | %12s | %13s | %11s | %13s |\n' "case" "direct TCP" "gateway chain" "iwnfs-mount" "mount/direct"
echo "|----------------------------------------------|--------------|---------------|-------------|---------------|"
row_mbps "seq write 1 MiB, $JOBS jobs (MiB/s)" "$bytes" "seq${JOBS}W"
row_mbps "seq read 1 MiB, $JOBS jobs (MiB/s)" "$bytes" "seq${JOBS}R"
row_mbps "seq write 1 MiB, 1 job (MiB/s)" "$bytes1" seq1W
row_mbps "seq read 1 MiB, 1 job (MiB/s)" "$bytes1" seq1R
row_ops "small files: create (files/s)" smallC
row_ops "small files: stat (files/s)" smallS
row_ops "small files: remove (files/s)" smallD
echo
echo "direct TCP and gateway chain: nfs-cp (sequential), libnfs (small files); iwnfs-mount: fio"
echo "psync (sequential), os.* (small files); $(nproc) CPUs; iwnfsgw $("$GW_IWNFSGW" --version | awk '{ print $2 }');"
echo "iwnfs-mount -o ${MOUNT_OPTS:-(defaults)}; gateway options: ${EXTRA[*]:-(defaults)}"
