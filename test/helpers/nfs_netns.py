# SPDX-License-Identifier: MIT
"""nfs_netns.py - NFS through both iwnfsgw gateways across the two network
namespaces of netns.py, for tests of the gateways over a bad network:

    A (10.77.0.1)                                  B (10.77.0.2)
    rpcbind + nfs-ganesha on 127.0.0.1    <-TCP-   iwnfsgw server --listen 10.77.0.1
    iwnfsgw server  <========== iWARP over iwimpair ==========  iwnfsgw client (127.0.0.1)
                                                               nfs-cp ... (libnfs, NFSv3)
    relay 10.77.0.1:RELAY -> 127.0.0.1:MOUNT      <-TCP-       relay 127.0.0.1:MOUNT -> A

    import netns, nfs_netns
    why = nfs_netns.missing()               # None, or what is not installed
    nfs = nfs_netns.NetnsNfs(net, iwnfsgw, workdir, gw_opts=["--markers", "on"])
    try:
        nfs.start()
        nfs.argv_cp(src, nfs.url("f.bin"))  # an nfs-cp command line for side B
        nfs.export                          # ganesha's exported directory (host path)
        nfs.gateway_errors()                # lines of the gateway logs that say a call failed
    finally:
        nfs.stop()                          # netns_down also kills whatever is left

rpcbind and ganesha are started by the shell library of the NFS tests
(test/nfs/gw/gw_lib.sh: gw_start_nfs, gw_cleanup), so their configuration is
the one everything else uses: ganesha on 127.0.0.1 (VFS, NFSv3 and v4 over
TCP, Graceless) exporting GW_TMP/export as /export.  They run in namespace A
inside a mount namespace of their own with a private tmpfs on /run: rpcbind's
files (/run/rpcbind.sock, /run/rpcbind.lock, /run/rpcbind/) are on the
filesystem every namespace shares, and a second rpcbind there would take the
host's socket away (and ganesha would register with the host's rpcbind).
The bash that runs them stays alive until its stdin closes (stop(), or our
death), then runs gw_cleanup.

The server gateway is given --allow B's address where it has that option
(it serves loopback only by default).  Only NFS goes through the gateways; libnfs sends MOUNT to the same host as
NFS (127.0.0.1 in B), so two plain TCP relays (tcp_relay.py) carry MOUNT to
ganesha's MOUNT port in A, through the impaired wire too.
"""

import os
import select
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GW_LIB = os.path.join(ROOT, "test", "nfs", "gw", "gw_lib.sh")
RELAY = os.path.join(HERE, "tcp_relay.py")

# the gateway log lines that say a call failed (as test_gw_four_clients.sh greps)
ERROR_MARKS = ("SYSTEM_ERR", "not delivered", "failed:", "refused")

_SCRIPT = r'''
set -u
mount -t tmpfs -o mode=0755,size=16m iwimp-run /run ||
    { echo "FAILED: cannot mount a private tmpfs on /run"; exit 1; }
mkdir -p /run/lock /run/rpcbind
source "$1"
gw_init
trap 'gw_cleanup' EXIT
gw_start_nfs >&2 || { echo "FAILED: rpcbind or ganesha did not start"; exit 1; }
echo "READY rpcbind ${gw_rpcbind_pid:-?} ganesha ${gw_ganesha_pid:-?}"
read -r _ || true
'''


def missing():
    """What the NFS part needs and is not installed here, or None."""
    if not os.path.exists(GW_LIB):
        return "no %s" % GW_LIB
    for tool in ("bash", "unshare", "mount"):
        if shutil.which(tool) is None:
            return "no %s" % tool
    r = subprocess.run(["bash", "-c", 'source "$1"; gw_have_tools', "x", GW_LIB],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return ("nfs-ganesha, nfs-ganesha-vfs, rpcbind or libnfs-utils not installed"
                " (tools/setup.sh)")
    return None


def _has_option(exe, opt):
    """exe --help mentions opt (options newer than some builds, e.g. --allow)."""
    try:
        p = subprocess.run([exe, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return opt in p.stdout


def _wait_line(path, pattern, proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path, errors="replace") as f:
                if pattern in f.read():
                    return True
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def _tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class NetnsNfs:
    """ganesha + iwnfsgw server in A, iwnfsgw client in B, MOUNT relayed."""

    def __init__(self, net, iwnfsgw, workdir, gw_opts=(), nfs_port=20490, rdma_port=20049,
                 client_port=20050, relay_port=20499):
        self.net = net
        self.iwnfsgw = os.path.abspath(iwnfsgw)
        self.tmp = workdir  # gw_lib.sh's GW_TMP
        self.export = os.path.join(workdir, "export")
        self.gw_opts = list(gw_opts)
        self.nfs_port = nfs_port
        self.mnt_port = nfs_port + 1  # gw_lib.sh: MOUNT is the NFS port + 1
        self.rdma_port = rdma_port
        self.client_port = client_port
        self.relay_port = relay_port
        self.shell = None
        self.procs = []
        self.log_server = os.path.join(workdir, "gw-server.log")
        self.log_client = os.path.join(workdir, "gw-client.log")

    def _popen_logged(self, side, argv, log):
        f = open(log, "a")
        try:
            p = self.net.popen(side, argv, stdout=f, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
        finally:
            f.close()
        self.procs.append(p)
        return p

    def start(self, timeout=90):
        os.makedirs(self.tmp, exist_ok=True)
        env = dict(os.environ)
        env.update(GW_TMP=self.tmp, GW_NFS_PORT=str(self.nfs_port), GW_KEEP="1",
                   GW_IWNFSGW=self.iwnfsgw)
        errlog = open(os.path.join(self.tmp, "nfs-shell.log"), "w")
        try:
            self.shell = self.net.popen(
                "a", ["unshare", "--mount", "--propagation", "private", "bash", "-c", _SCRIPT,
                      "nfs_netns", GW_LIB],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=env,
                cwd=ROOT, text=True)
        finally:
            errlog.close()
        deadline = time.monotonic() + timeout
        line = ""
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.shell.stdout], [], [], 0.5)
            if r:
                line = self.shell.stdout.readline()
                break
            if self.shell.poll() is not None:
                break
        if not line.startswith("READY"):
            raise RuntimeError("rpcbind + ganesha in %s: %s; %s" % (
                self.net.ns_a, line.strip() or "timeout",
                _tail(os.path.join(self.tmp, "nfs-shell.log"), 10).strip()))
        self.ready_line = line.strip()
        # MOUNT: B 127.0.0.1:mnt -> A 10.77.0.1:relay -> A 127.0.0.1:mnt (ganesha)
        for side, listen, target in (
                ("a", (self.net.addr_a, self.relay_port), ("127.0.0.1", self.mnt_port)),
                ("b", ("127.0.0.1", self.mnt_port), (self.net.addr_a, self.relay_port))):
            log = os.path.join(self.tmp, "relay-%s.log" % side)
            p = self._popen_logged(side, [sys.executable, RELAY, listen[0], str(listen[1]),
                                          target[0], str(target[1])], log)
            if not _wait_line(log, "relay listening", p, 15):
                raise RuntimeError("MOUNT relay in %s did not start: %s" % (side, _tail(log)))
        # a gateway that serves only loopback unless told (--allow) must let B in
        allow = (["--allow", "%s/32" % self.net.addr_b]
                 if _has_option(self.iwnfsgw, "--allow") else [])
        p = self._popen_logged("a", [self.iwnfsgw, "server", "--listen",
                                     "%s:%d" % (self.net.addr_a, self.rdma_port), "--backend",
                                     "127.0.0.1:%d" % self.nfs_port, "--stats"] + allow
                               + self.gw_opts, self.log_server)
        if not _wait_line(self.log_server, "listening for NFS/RDMA", p, 20):
            raise RuntimeError("iwnfsgw server did not start: " + _tail(self.log_server))
        p = self._popen_logged("b", [self.iwnfsgw, "client", "--listen",
                                     "127.0.0.1:%d" % self.client_port, "--remote",
                                     "%s:%d" % (self.net.addr_a, self.rdma_port), "--stats"]
                               + self.gw_opts, self.log_client)
        if not _wait_line(self.log_client, "listening for NFS over TCP", p, 20):
            raise RuntimeError("iwnfsgw client did not start: " + _tail(self.log_client))
        return self

    def url(self, name):
        """NFSv3 through both gateways, as seen from B."""
        return "nfs://127.0.0.1/export/%s?nfsport=%d&mountport=%d" % (
            name, self.client_port, self.mnt_port)

    def gateway_errors(self):
        out = []
        for path in (self.log_server, self.log_client):
            try:
                with open(path, errors="replace") as f:
                    out += [ln.rstrip() for ln in f if any(m in ln for m in ERROR_MARKS)]
            except OSError:
                pass
        return out

    def log_tails(self, lines=15):
        return "\n".join("--- %s\n%s" % (os.path.basename(p), _tail(p, lines))
                         for p in (self.log_server, self.log_client,
                                   os.path.join(self.tmp, "ganesha.log")))

    def stop(self):
        """Gateways and relays (SIGTERM, then SIGKILL), then rpcbind and ganesha
        (the shell's gw_cleanup).  Idempotent."""
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        if self.shell is not None:
            try:
                self.shell.stdin.close()
            except OSError:
                pass
            try:
                self.shell.wait(30)
            except subprocess.TimeoutExpired:
                self.shell.kill()
                self.shell.wait()
            try:
                self.shell.stdout.close()
            except OSError:
                pass
            self.shell = None
