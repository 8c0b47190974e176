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
        srv.stop_gateway()      # SIGSTOP iwnfsgw server: connected but silent
        srv.cont_gateway()      # SIGCONT
        srv.kill_gateway()      # SIGKILL iwnfsgw server (the NFS/RDMA server "vanishes")
        srv.start_gateway()     # start it again, same port and options

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
# rpcbind is shared with whatever else runs NFS tests here, and the one that
# started it stops it when done: ganesha cannot start again without one
# ("Cannot register NFS V3 on TCP"), so start one first if it is gone
ensure_rpcbind() {
    rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
    mkdir -p /run/rpcbind
    "$(command -v rpcbind || echo /usr/sbin/rpcbind)" -f -w >>"$GW_TMP/rpcbind.log" 2>&1 &
    gw_pids+=($!)
    for _ in $(seq 1 50); do
        rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
while read -r cmd; do
    case $cmd in
    restart-ganesha)
        kill -KILL "$gw_ganesha_pid"; wait "$gw_ganesha_pid" 2>/dev/null
        ensure_rpcbind >&2
        if gw_start_ganesha >&2 || { sleep 1; ensure_rpcbind >&2 && gw_start_ganesha >&2; }
        then echo RESTARTED; else echo "FAILED restart"; fi ;;
    stop-gateway) kill -STOP "$gw_server_pid"; echo STOPPED ;;
    cont-gateway) kill -CONT "$gw_server_pid"; echo CONTINUED ;;
    kill-gateway)
        kill -KILL "$gw_server_pid"; wait "$gw_server_pid" 2>/dev/null; gw_server_pid=
        echo KILLED ;;
    start-gateway)
        # a fresh log, so that gw_start_server waits for this start's line
        n=1; while [[ -e $GW_TMP/gw-server.log.$n ]]; do n=$((n + 1)); done
        mv "$GW_TMP/gw-server.log" "$GW_TMP/gw-server.log.$n"
        if gw_start_server "$@" >&2; then echo STARTED; else echo "FAILED gateway"; fi ;;
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

    def _command(self, cmd, want, timeout):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if r else ""
        if line.strip() != want:
            raise RuntimeError("%s: %s" % (cmd, line.strip() or "timeout"))

    def kill_gateway(self, timeout=30):
        """SIGKILL `iwnfsgw server`: its connections drop, nothing listens on rdma_port"""
        self._command("kill-gateway", "KILLED", timeout)

    def stop_gateway(self, timeout=30):
        """SIGSTOP `iwnfsgw server`: connected, silent (a hung or unreachable server)"""
        self._command("stop-gateway", "STOPPED", timeout)

    def cont_gateway(self, timeout=30):
        """SIGCONT after stop_gateway"""
        self._command("cont-gateway", "CONTINUED", timeout)

    def start_gateway(self, timeout=30):
        """start `iwnfsgw server` again (after kill_gateway); the old log is gw-server.log.N"""
        self._command("start-gateway", "STARTED", timeout)

    def gateway_logs(self):
        """the text of every gw-server.log* (one per start)"""
        out = []
        for name in sorted(os.listdir(self.tmp)):
            if name.startswith("gw-server.log"):
                with open(os.path.join(self.tmp, name), errors="replace") as f:
                    out.append(f.read())
        return "\n".join(out)

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
