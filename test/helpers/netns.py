# SPDX-License-Identifier: MIT
"""Two hosts on one machine, with a bad network between them.

netns_up() makes two network namespaces, A and B, and joins them through
tools/iwimpair, a user-space forwarder between a TUN device in each that
loses, duplicates, reorders, delays and rate-limits packets (our kernels have
no sch_netem).  Only private addresses, inside the namespaces:

    A: 10.77.0.1/24, fd77::1/64 on iwimp0        B: 10.77.0.2/24, fd77::2/64 on iwimp1

with lo up in both and a default route of each family through the TUN
device, so nothing a test does there can leave the machine.  Before it
returns, a TCP connection from B to A (IPv4, and IPv6 where the kernel has
it) proves the path works; no ping needed.

    import netns
    why = netns.skip_reason(iwimpair)
    if why:
        print("SKIP: " + why)
        sys.exit(netns.SKIP)
    net = netns.netns_up("srv", "cli", ["--loss", "2", "--seed", "7"], iwimpair=iwimpair)
    try:
        srv = net.popen("a", ["iwperf", "-s", "-a", net.addr_a])
        net.run("b", ["iwperf", "-c", net.addr_a, ...])
        print(net.stats())          # forwarder counters now (SIGUSR1)
    finally:
        counters = netns.netns_down(net)  # its counters at exit

Names carry our PID and a sequence number (iwimp-PID-N-NAME), so tests that
run in parallel do not collide.  netns_down() stops every process started
through the Net and every other process left in the namespaces, stops the
forwarder and deletes both namespaces; it runs by itself at exit (atexit) and
on SIGTERM/SIGHUP (as meson sends on a timeout), and netns_up() deletes what
a killed test of an earlier run (a dead PID) left behind.

The impairment options are iwimpair's (iwimpair --help): --loss, --dup,
--reorder, --delay, --jitter, --rate, --queue, --mtu (the MTU of both TUN
devices, which the forwarder sets), --seed...  A --seed is always passed (one
is drawn if the caller gave none) and is in Net.seed.  The forwarder runs
SCHED_FIFO where it may (realtime=True), so that its delays and rates hold
while the programs under test spin on every CPU.

Measuring: Net.stats() (the forwarder's counters per direction, now),
Net.snmp(side) (the side's /proc/net/snmp and netstat, by nstat's names:
TcpRetransSegs, TcpExtTCPOFOQueue...), Net.dev_drops(side) (what the kernel
dropped at a TUN device because the forwarder fell behind: should be 0).
"""

import atexit
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77  # meson's exit status for a skipped test

ADDR4 = ("10.77.0.1", "10.77.0.2")
ADDR6 = ("fd77::1", "fd77::2")
DEVS = ("iwimp0", "iwimp1")
PREFIX = "iwimp-"

_live = []  # Nets not yet taken down
_seq = 0
_hooked = False


class NetnsSkip(Exception):
    """The machine cannot make namespaces and TUN devices here (not a failure)."""


# The probe: a listener per address in A (its port on stdout), one connection
# each from B that must read the listener's greeting.
_PROBE_SERVER = r"""
import select, socket, sys
ls = []
for a in sys.argv[2:]:
    s = socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, 0))
    s.listen(1)
    ls.append(s)
print(" ".join(str(s.getsockname()[1]) for s in ls), flush=True)
left = list(ls)
while left:
    r, _, _ = select.select(left, [], [], float(sys.argv[1]))
    if not r:
        sys.exit(1)
    for s in r:
        c, _ = s.accept()
        c.sendall(b"iwimpair-probe")
        c.close()
        left.remove(s)
"""
_PROBE_CLIENT = r"""
import socket, sys
for a, p in zip(sys.argv[2::2], sys.argv[3::2]):
    c = socket.create_connection((a, int(p)), timeout=float(sys.argv[1]))
    got = b""
    while len(got) < 14:
        b = c.recv(64)
        if not b:
            break
        got += b
    if got != b"iwimpair-probe":
        sys.exit("probe to %s port %s read %r" % (a, p, got))
"""


def _ip(*args, check=True, timeout=20):
    p = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), p.stderr.strip()))
    return p


def skip_reason(iwimpair=None):
    """Why namespaces joined by iwimpair cannot be made here, or None."""
    if os.geteuid() != 0:
        return "not root (network namespaces and TUN devices need CAP_NET_ADMIN)"
    if not shutil.which("ip"):
        return "no ip(8): install iproute2"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun (the tun module)"
    try:
        os.close(os.open("/dev/net/tun", os.O_RDWR))
    except OSError as e:
        return "cannot open /dev/net/tun: %s" % e.strerror
    if iwimpair is not None and not os.access(iwimpair, os.X_OK):
        return "no iwimpair at %s" % iwimpair
    name = "%sprobe-%d" % (PREFIX, os.getpid())
    p = _ip("netns", "add", name, check=False)
    if p.returncode != 0:
        return "cannot create a network namespace: %s" % p.stderr.strip()
    _ip("netns", "del", name, check=False)
    return None


def _ns_pids(ns):
    p = _ip("netns", "pids", ns, check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


def _kill_ns(ns):
    """SIGKILL every process in namespace ns, then wait until none is left."""
    for _ in range(50):
        pids = [p for p in _ns_pids(ns) if p != os.getpid()]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def _pid_alive(pid):
    """pid runs (a zombie, whose parent died before reaping it, does not)."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _reap_stale():
    """Delete the namespaces of earlier runs whose process is gone (killed -9, say)."""
    p = _ip("netns", "list", check=False)
    for line in p.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.match(re.escape(PREFIX) + r"(\d+)-", name)
        if m and not _pid_alive(m.group(1)):
            _kill_ns(name)
            _ip("netns", "del", name, check=False)


def _on_signal(signum, frame):
    # SystemExit unwinds the test's finally blocks, then atexit takes down the rest.
    sys.stderr.write("netns: signal %d: taking the namespaces down\n" % signum)
    raise SystemExit(128 + signum)


def _hook():
    global _hooked
    if _hooked:
        return
    _hooked = True
    atexit.register(netns_down_all)
    for s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) in (signal.SIG_DFL, None):
            signal.signal(s, _on_signal)


def _parse_proc_net(text):
    """/proc/net/snmp and /proc/net/netstat as {"TcpRetransSegs": n, ...} (nstat's names)."""
    out = {}
    lines = text.splitlines()
    for head, vals in zip(lines[0::2], lines[1::2]):
        hk, _, hnames = head.partition(":")
        vk, _, vnums = vals.partition(":")
        if hk != vk:
            continue
        for n, v in zip(hnames.split(), vnums.split()):
            try:
                out[hk + n] = int(v)
            except ValueError:
                pass
    return out


class Net:
    """Two namespaces joined by a running iwimpair; side "a" and side "b"."""

    def __init__(self, ns_a, ns_b, iwimpair, workdir):
        self.ns = {"a": ns_a, "b": ns_b}
        self.ns_a, self.ns_b = ns_a, ns_b
        self.addr_a, self.addr_b = ADDR4
        self.addr6_a, self.addr6_b = ADDR6
        self.dev = {"a": DEVS[0], "b": DEVS[1]}
        self.ipv6 = os.path.exists("/proc/net/if_inet6")
        self.iwimpair = iwimpair
        self.workdir = workdir
        self.imp = None
        self.imp_out = os.path.join(workdir, "iwimpair.json")
        self.imp_err = os.path.join(workdir, "iwimpair.log")
        self.seed = None
        self.counters = None  # iwimpair's "exit" line, once down
        self.procs = []
        self.made = []  # namespaces created so far
        self.down_done = False
        self.own_workdir = False
        self.final_log = None

    # -- running things inside ------------------------------------------------

    def argv(self, side, argv):
        """argv run inside the namespace of side "a" or "b"."""
        return ["ip", "netns", "exec", self.ns[side]] + list(argv)

    def run(self, side, argv, timeout=60, **kw):
        """subprocess.run inside a side (text output captured unless told otherwise)."""
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("text", True)
        return subprocess.run(self.argv(side, argv), timeout=timeout, **kw)

    def popen(self, side, argv, **kw):
        """subprocess.Popen inside a side; netns_down stops it (SIGTERM, then SIGKILL)."""
        p = subprocess.Popen(self.argv(side, argv), **kw)
        self.procs.append(p)
        return p

    def snmp(self, side):
        """The side's kernel counters (/proc/net/snmp and netstat, nstat's names)."""
        p = self.run(side, ["cat", "/proc/net/snmp", "/proc/net/netstat"], timeout=20)
        return _parse_proc_net(p.stdout)

    def dev_drops(self, side):
        """Packets the kernel dropped on the side's TUN device (its ring full: the
        forwarder did not read fast enough), which iwimpair cannot count."""
        p = self.run(side, ["ip", "-s", "-j", "link", "show", "dev", self.dev[side]],
                     timeout=20)
        try:
            st = json.loads(p.stdout)[0]["stats64"]
            return st["tx"]["dropped"] + st["rx"]["dropped"]
        except (ValueError, LookupError, TypeError):
            return None

    # -- the forwarder -----------------------------------------------------------

    def _events(self):
        try:
            with open(self.imp_out, errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def _wait_event(self, kind, after, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ev = [e for e in self._events() if e.get("event") == kind]
            if len(ev) > after:
                return ev[after]
            if self.imp.poll() is not None:
                return None
            time.sleep(0.01)
        return None

    def stats(self, timeout=10):
        """The forwarder's counters now: {"a2b": {...}, "b2a": {...}, "seed": ...}."""
        n = len([e for e in self._events() if e.get("event") == "stats"])
        self.imp.send_signal(signal.SIGUSR1)
        ev = self._wait_event("stats", n, timeout)
        if ev is None:
            raise RuntimeError("iwimpair gave no counters: " + self.log())
        return ev

    def log(self):
        """iwimpair's stderr: the seed, the settings, the text counters."""
        if self.final_log is not None:
            return self.final_log
        try:
            with open(self.imp_err, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def down(self):
        return netns_down(self)


def _start(net, impair, timeout, realtime):
    args = list(impair)
    if "--seed" not in args:
        args += ["--seed", str(random.randrange(1, 10**9))]
    net.seed = int(args[args.index("--seed") + 1])
    argv = [net.iwimpair, "--ns-a", net.ns_a, "--ns-b", net.ns_b, "--dev-a", DEVS[0],
            "--dev-b", DEVS[1], "--json", "--exit-with-parent"] + args
    with open(net.imp_out, "w") as out, open(net.imp_err, "w") as err:
        net.imp = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    if net._wait_event("ready", 0, timeout) is None:
        raise RuntimeError("iwimpair did not start: %s" % net.log().strip())
    if realtime:
        _boost(net.imp.pid)


def _boost(pid):
    """Let the forwarder keep time on a busy machine (iwperf spins on every core
    it gets): SCHED_FIFO, else a lower nice value, else nothing.  It sleeps
    between packets, so it takes no more CPU than it did; it only gets the CPU
    when it wakes instead of a scheduler tick or two later (measured: p99 of a
    5 ms one-way delay 10 ms without, 5.2 ms with)."""
    try:
        os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(10))
        return
    except (OSError, AttributeError):
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, pid, -10)
    except OSError:
        pass


def _configure(net):
    for side, i in (("a", 0), ("b", 1)):
        dev = net.dev[side]
        cmds = ["link set lo up",
                "addr add %s/24 dev %s" % (ADDR4[i], dev)]
        if net.ipv6:
            # no link-local address, no DAD: the only IPv6 traffic is the test's
            cmds += ["link set %s addrgenmode none" % dev,
                     "addr add %s/64 dev %s nodad" % (ADDR6[i], dev)]
        cmds += ["link set %s up" % dev,
                 "route add default dev %s" % dev]
        if net.ipv6:
            cmds += ["route add ::/0 dev %s" % dev]
        p = subprocess.run(["ip", "-n", net.ns[side], "-batch", "-"], input="\n".join(cmds) + "\n",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=20)
        if p.returncode != 0:
            raise RuntimeError("configuring %s: %s" % (net.ns[side], p.stderr.strip()))


def _probe(net, timeout):
    addrs = [net.addr_a] + ([net.addr6_a] if net.ipv6 else [])
    srv = subprocess.Popen(net.argv("a", [sys.executable, "-c", _PROBE_SERVER, str(timeout)]
                                    + addrs), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        ports = srv.stdout.readline().split()
        if len(ports) != len(addrs):
            raise RuntimeError("probe listener in %s: %s" % (net.ns_a, srv.stderr.read()))
        argv = [sys.executable, "-c", _PROBE_CLIENT, str(timeout)]
        for a, p in zip(addrs, ports):
            argv += [a, p]
        c = net.run("b", argv, timeout=timeout + 5)
        if c.returncode != 0:
            raise RuntimeError("no TCP path from %s to %s: %s" % (net.ns_b, net.ns_a,
                                                                   c.stderr.strip()))
        srv.wait(timeout)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
        srv.stdout.close()
        srv.stderr.close()


def netns_up(name_a="a", name_b="b", impair=(), iwimpair=None, timeout=15, workdir=None,
             realtime=True):
    """Two namespaces joined by iwimpair with the impairment options `impair`.

    realtime: run the forwarder SCHED_FIFO (see _boost) so that delays and
    rates hold while the programs under test spin on the CPUs.

    Returns a Net.  Raises NetnsSkip when this machine cannot do it (the
    caller exits SKIP), RuntimeError when it should and did not (everything
    made so far is removed first).  iwimpair defaults to $IWIMPAIR.
    """
    global _seq
    iwimpair = iwimpair or os.environ.get("IWIMPAIR")
    if not iwimpair:
        raise NetnsSkip("no iwimpair given (iwimpair= or $IWIMPAIR)")
    why = skip_reason(iwimpair)
    if why:
        raise NetnsSkip(why)
    _hook()
    _reap_stale()
    _seq += 1
    tag = "%s%d-%d-" % (PREFIX, os.getpid(), _seq)
    own = workdir is None
    if own:
        workdir = tempfile.mkdtemp(prefix=tag)
    net = Net(tag + name_a, tag + name_b, iwimpair, workdir)
    net.own_workdir = own
    _live.append(net)
    try:
        for ns in (net.ns_a, net.ns_b):
            _ip("netns", "add", ns)
            net.made.append(ns)
        _start(net, impair, timeout, realtime)
        _configure(net)
        _probe(net, timeout)
    except BaseException:
        netns_down(net)
        raise
    return net


def netns_down(net):
    """Stop everything in and between the namespaces and delete them.

    Idempotent.  Returns the forwarder's last counters ("exit" event), also
    kept in net.counters; None if it died without them.
    """
    if net.down_done:
        return net.counters
    # a second SIGTERM must not cut the cleaning short
    saved = {}
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            saved[s] = signal.signal(s, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass
    try:
        _down(net)
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    return net.counters


def _down(net):
    for p in net.procs:
        if p.poll() is None:
            p.terminate()
    for p in net.procs:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for ns in net.made:
        _kill_ns(ns)
    if net.imp is not None:
        if net.imp.poll() is None:
            net.imp.terminate()
        try:
            net.imp.wait(10)
        except subprocess.TimeoutExpired:
            net.imp.kill()
            net.imp.wait()
        ev = [e for e in net._events() if e.get("event") == "exit"]
        net.counters = ev[-1] if ev else None
    for ns in net.made:
        _ip("netns", "del", ns, check=False)
    if net in _live:
        _live.remove(net)
    net.final_log = net.log()
    if net.own_workdir:
        shutil.rmtree(net.workdir, ignore_errors=True)
    net.down_done = True


def leftover():
    """Namespaces of this process that still exist (after netns_down_all,
    there should be none)."""
    left = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
    return [ln.split()[0] for ln in left.splitlines()
            if ln.startswith("%s%d-" % (PREFIX, os.getpid()))]


def netns_down_all():
    """netns_down of every Net still up (atexit does this)."""
    for net in list(_live):
        netns_down(net)
