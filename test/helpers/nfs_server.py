# SPDX-License-Identifier: MIT
"""nfs_server.py - an NFS/RDMA server for python tests: rpcbind + nfs-ganesha
exporting a temporary directory, and `iwnfsgw server` in front of it, all on
127.0.0.1.

Nothing is configured here: the processes are started by the shell library
the NFS demo and tests use (test/nfs/gw/gw_lib.sh: gw_start_nfs,
gw_start_server, gw_cleanup), run in a bash child that stays alive while the
server is needed and cleans up when its stdin closes.  So the ganesha
configuration, the rpcbind start and the gateway's options are the same
everywhere.

    with NfsServer(iwnfsgw, nfs_port=20690, rdma_port=20649) as srv:
        srv.export   # the exported directory (ganesha's /export)
        srv.tmp      # gw_lib.sh's scratch directory (logs: ganesha.log, gw-server.log)
        srv.nfs_port, srv.mnt_port, srv.rdma_port
        srv.restart_ganesha()   # SIGKILL and start again (a new write verifier)

NfsServer.missing() names what is not installed (None: all there), for a test
to skip with exit status 77.
"""

import os
import select
import shutil
import subprocess
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GW_LIB = os.path.join(ROOT, "test", "nfs", "gw", "gw_lib.sh")


class NfsServer:
    def __init__(self, iwnfsgw, nfs_port=20690, rdma_port=20649, gw_opts=(), keep=False):
        self.iwnfsgw = os.path.abspath(iwnfsgw)
        self.nfs_port = nfs_port
        self.mnt_port = nfs_port + 1  # gw_lib.sh: MOUNT is the NFS port + 1
        self.rdma_port = rdma_port
        self.gw_opts = list(gw_opts)
        self.keep = keep
        self.proc = None
        self.tmp = None
        self.export = None

    @staticmethod
    def missing():
        """what the server needs and is not installed, or None"""
        script = 'source "$1"; gw_have_tools'
        if shutil.which("bash") is None:
            return "bash"
        r = subprocess.run(["bash", "-c", script, "x", GW_LIB], capture_output=True)
        if r.returncode != 0:
            return "nfs-ganesha, nfs-ganesha-vfs, rpcbind or libnfs-utils (tools/setup.sh)"
        return None

    def start(self, timeout=60):
        # gw_lib.sh's functions, then wait for stdin to close, then its cleanup
        script = r'''
set -u
source "$1"; shift
GW_IWNFSGW=$1; shift
gw_init
trap gw_cleanup EXIT
gw_start_nfs >&2 || { echo "FAILED ganesha"; exit 1; }
gw_start_server "$@" >&2 || { echo "FAILED iwnfsgw"; exit 1; }
echo "READY $GW_TMP"
while read -r cmd; do
    case $cmd in
    restart-ganesha)
        kill -KILL "$gw_ganesha_pid"; wait "$gw_ganesha_pid" 2>/dev/null
        if gw_start_ganesha >&2; then echo RESTARTED; else echo "FAILED restart"; fi ;;
    esac
done
'''
        env = dict(os.environ)
        env["GW_NFS_PORT"] = str(self.nfs_port)
        env["GW_RDMA_PORT"] = str(self.rdma_port)
        if self.keep:
            env["GW_KEEP"] = "1"
        env.pop("GW_TMP", None)
        self.proc = subprocess.Popen(
            ["bash", "-c", script, "nfs_server", GW_LIB, self.iwnfsgw] + self.gw_opts,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT, text=True)
        deadline = time.monotonic() + timeout
        line = ""
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if r:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError("the NFS server did not start: %s" % (line.strip() or "timeout"))
        self.tmp = line.split(" ", 1)[1].strip()
        self.export = os.path.join(self.tmp, "export")
        return self

    def restart_ganesha(self, timeout=60):
        """kill ganesha (SIGKILL) and start it again, as test_gw_restart.sh does:
        its write verifier changes; iwnfsgw reconnects to it"""
        self.proc.stdin.write("restart-ganesha\n")
        self.proc.stdin.flush()
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if r else ""
        if line.strip() != "RESTARTED":
            raise RuntimeError("ganesha did not restart: %s" % (line.strip() or "timeout"))

    def log_tail(self, name, lines=20):
        """the last lines of one of gw_lib.sh's logs ("gw-server.log", "ganesha.log")"""
        try:
            with open(os.path.join(self.tmp, name), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except (OSError, TypeError):
            return ""

    def stop(self):
        if not self.proc:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
