#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/setup.sh - install every Debian package the project needs and configure
# the build.  Idempotent and non-interactive; safe to run again at any time.
#
# usage: tools/setup.sh [--no-configure] [BUILD_DIR [MESON_OPTION...]]
#   BUILD_DIR defaults to "build"; extra arguments go to `meson setup`.
#   Environment: IWARP_SKIP_APT=1 skips the package step (offline machines).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

configure=1
if [[ ${1:-} == --no-configure ]]; then
    configure=0
    shift
fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
builddir=${1:-build}
shift || true

# Build tools, the Check test framework, ISA-L (fast CRC32c), Wireshark's tshark
# (independent decoder for the interop tests), clang + its runtimes (libFuzzer),
# liburing (the io_uring I/O engine), libevent (event loops of the tools),
# nfs-ganesha + rpcbind + libnfs (the NFS server and client of the NFS demo and
# tests; test/nfs/gw/gw_lib.sh starts and configures them), rdma-core's headers
# (libibverbs-dev, librdmacm-dev: the drop-in libibverbs.so.1/librdmacm.so.1 of
# compat/ are built against them, never linked with the real libraries) and the
# unmodified Debian RDMA programs the compat tests run over those libraries
# (rdmacm-utils: rping; perftest: ib_*_bw/lat; qperf; ibverbs-utils:
# ibv_devices, ibv_devinfo), libpcap (iwdump reads captures and captures live),
# iproute2 (ip netns: the two namespaces of test/helpers/netns.py that
# tools/iwimpair joins, and nstat) and socat (the plain TCP relays that
# tools/bench/bench_nfs.sh compares the gateways with).
# libfuse 3: libfuse3-dev (tools/iwnfs-mount is built only with it) and fuse3
# (fusermount3, which mounts and unmounts it; test/mount); fio (the workloads of
# tools/bench/bench_mount.sh).
packages=(
    gcc libc6-dev make pkg-config meson ninja-build python3
    check libsubunit-dev
    libisal-dev
    liburing-dev libevent-dev
    tshark
    clang libclang-rt-14-dev clang-format
    git ca-certificates
    nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils libnfs-dev
    libibverbs-dev librdmacm-dev
    rdmacm-utils perftest qperf ibverbs-utils
    libpcap-dev
    iproute2
    socat
    libfuse3-dev fuse3
    fio
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [[ ${IWARP_SKIP_APT:-0} != 1 && ${#missing[@]} -gt 0 ]]; then
    if [[ $(id -u) -ne 0 ]]; then
        sudo=sudo
    else
        sudo=
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # tshark asks whether non-root users may capture; answer for it.
    echo "wireshark-common wireshark-common/install-setuid boolean false" |
        $sudo debconf-set-selections 2>/dev/null || true
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -q
    $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${missing[@]}"
else
    echo "setup: all packages present"
fi

if [[ $configure == 1 ]]; then
    if [[ -f $builddir/build.ninja ]]; then
        meson setup --reconfigure "$builddir" "$@" >/dev/null
    else
        meson setup "$builddir" "$@" >/dev/null
    fi
    echo "setup: build configured in $builddir (meson compile -C $builddir)"
fi
