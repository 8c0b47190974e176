#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unmodified Debian RDMA programs over iwarp's drop-in libraries (suite compat).

Each CASE below is one meson test.  It runs Debian's own binaries (rping from
rdmacm-utils, perftest's ib_*_bw / ib_*_lat, qperf, ibv_devices and
ibv_devinfo from ibverbs-utils) through `iwrun`, so they load iwarp's
libibverbs.so.1 and librdmacm.so.1 (compat/) instead of rdma-core's, all on
127.0.0.1 with free ports and a bounded timeout on every process.  Nothing is
rebuilt or patched: what passes here is what a user gets with `iwrun PROGRAM`.

A failing case prints one line per problem and then, for every process it
started, the command line, how it ended and the tail of its output.
A program that is not installed is a skip (exit status 77) with the package
to install (tools/setup.sh installs them all).

Cases (docs/compat.md lists what each proves):
  devices                 ibv_devices and ibv_devinfo list iwarp0: transport
                          iWARP, port 1 PORT_ACTIVE, link layer Ethernet
  rping_64, rping_65535   rping server + client, 100 checked pings (-V) of
                          64 and 65535 octets
  rping_q                 the same with -q on both sides (the program's own QP)
  rping_uring             rping_64 with iwrun --engine uring on both sides
  rping_persistent        rping -P serving two clients at once
  rping_iwping            rping <-> iwping in both roles; the two clients'
                          -v lines must be identical
  perf_{write,read,send}_{bw,lat}
                          perftest with -R (RDMA CM): both sides exit 0 and
                          the client reports a non-zero result
  perf_write_bw_q4        ib_write_bw -R -q 4 (four QPs)
  perf_send_bw_srq        ib_send_bw -R --use-srq (a shared receive queue)
  perf_atomic_{bw,lat}    ib_atomic_bw, ib_atomic_lat -R (RFC 7306 atomics)
  qperf_<test>            qperf -cm1 <test>: a non-zero result (rc_rdma_write_bw
                          and _lat need RDMA Write with Immediate)
  kill_rping_server       the server SIGKILLed mid-run: the client sees the
  kill_rping_client       disconnect and exits; and the other way round
  tshark                  rping sessions (the defaults; iwrun --mpa-rev 1
                          --crc off; --markers both; --p2p read; --p2p off) and an
                          ib_write_bw session captured on lo and decoded by
                          tshark: the MPA bits the options ask for, Markers,
                          RTR, MPA/DDP/RDMAP, every CRC good, no malformed
                          packet (test/interop helpers)
  standins                the stand-in libmlx5.so.1 / libefa.so.1 define
                          exactly what perftest's binaries import from them
  iwrun_check             `iwrun --check` shows our libraries for rping,
                          ib_write_bw and qperf
  tshark_selftest         the tshark case with iwping and iwperf instead of
                          rping and ib_write_bw: checks this harness itself,
                          needs no drop-in library (not a meson test)
Exit status: 0 passed, 1 failed, 77 skipped.
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))

SKIP = 77
HOST = "127.0.0.1"
PKG = {"rping": "rdmacm-utils", "ibv_devices": "ibverbs-utils", "ibv_devinfo": "ibverbs-utils",
       "qperf": "qperf", "tshark": "tshark"}
for _p in ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat",
           "ib_send_lat", "ib_atomic_bw", "ib_atomic_lat"):
    PKG[_p] = "perftest"


class Skip(Exception):
    pass


class Fail(Exception):
    pass


# --------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------

class Proc:
    """One program in a process group of its own, output to files."""

    def __init__(self, t, name, argv, env=None):
        self.t, self.name, self.argv = t, name, argv
        self.out = os.path.join(t.dir, "%02d-%s.out" % (len(t.procs), name))
        self.err = self.out[:-4] + ".err"
        self.status, self.how = None, "running"
        e = dict(os.environ)
        e.update(env or {})
        with open(self.out, "wb") as o, open(self.err, "wb") as er:
            self.p = subprocess.Popen(argv, stdout=o, stderr=er, stdin=subprocess.DEVNULL,
                                      env=e, start_new_session=True)
        self.t0 = time.monotonic()
        t.procs.append(self)

    def alive(self):
        return self.p.poll() is None

    def wait(self, timeout):
        """Exit status, or Fail after killing it when `timeout` seconds pass."""
        try:
            self.status = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill(signal.SIGKILL)
            self.how = "killed by the test after %.0f s (timeout)" % timeout
            raise Fail("%s did not finish within %.0f s" % (self.name, timeout))
        self.how = "exit status %d" % self.status if self.status >= 0 else \
            "killed by signal %d" % -self.status
        return self.status

    def kill(self, sig=signal.SIGKILL):
        try:
            os.killpg(self.p.pid, sig)
        except ProcessLookupError:
            pass
        if sig == signal.SIGKILL:
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def stop(self, grace=5):
        """SIGINT, then SIGKILL: for servers that run until stopped."""
        if self.alive():
            self.kill(signal.SIGINT)
            try:
                self.p.wait(grace)
            except subprocess.TimeoutExpired:
                self.kill(signal.SIGKILL)
        if self.how == "running":
            self.how = "stopped by the test"

    def text(self, which="out"):
        with open(self.out if which == "out" else self.err, errors="replace") as f:
            return f.read()

    def report(self, lines=25):
        print("  $ %s" % " ".join(self.argv))
        print("    %s after %.1f s" % (self.how, time.monotonic() - self.t0)
              if self.how == "running" else "    %s" % self.how)
        for which in ("out", "err"):
            txt = self.text(which).splitlines()
            if not txt:
                continue
            cut = len(txt) > lines
            print("    std%s%s:" % (which, " (last %d of %d lines)" % (lines, len(txt))
                                      if cut else ""))
            for line in txt[-lines:]:
                print("    | %s" % line[:300])


class Test:
    def __init__(self, args):
        self.args, self.procs, self.bad = args, [], []
        self.dir = tempfile.mkdtemp(prefix="compat-test-")

    def iwrun(self, name, argv, env=None, opts=()):
        return Proc(self, name, [self.args.iwrun] + list(opts) + argv, env)

    def native(self, name, argv, env=None):
        return Proc(self, name, argv, env)

    def check(self, cond, msg):
        if not cond:
            self.bad.append(msg)
        return cond

    def cleanup(self):
        for p in self.procs:
            if p.alive():
                p.kill(signal.SIGKILL)
                if p.how == "running":
                    p.how = "killed by the test at the end"


def need(*progs):
    for p in progs:
        if not shutil.which(p):
            raise Skip("%s is not installed (apt-get install %s; tools/setup.sh installs it)"
                       % (p, PKG.get(p, p)))


def free_port():
    """A TCP port free on 127.0.0.1, below the ephemeral range where possible."""
    import random
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20000, 32000)
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind((HOST, port))
            return port
        except OSError:
            continue
    raise Fail("no free TCP port on %s" % HOST)


def listening(port):
    """True if a socket listens on `port` (/proc/net/tcp{,6}, state 0A)."""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    p = line.split()
                    if p[3] == "0A" and int(p[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            continue
    return False


def wait_listen(proc, port, timeout=15):
    """Until `proc` listens on `port`; Fail if it exits or takes too long."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if listening(port):
            return
        if not proc.alive():
            proc.wait(0)
            raise Fail("%s exited before it listened on port %d" % (proc.name, port))
        time.sleep(0.05)
    raise Fail("%s did not listen on port %d within %d s" % (proc.name, port, timeout))


def expect_exit(t, proc, timeout, want=0):
    st = proc.wait(timeout)
    t.check(st == want, "%s: %s, want exit status %d" % (proc.name, proc.how, want))
    return st


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------

def case_devices(t):
    need("ibv_devices", "ibv_devinfo")
    p = t.iwrun("ibv_devices", ["ibv_devices"])
    if expect_exit(t, p, 20) == 0:
        t.check(re.search(r"^\s*iwarp0\s", p.text(), re.M),
                "ibv_devices does not list iwarp0")
    p = t.iwrun("ibv_devinfo", ["ibv_devinfo", "-v"])
    if expect_exit(t, p, 20) != 0:
        return
    out = p.text()
    want = [(r"hca_id:\s+iwarp0\b", "hca_id iwarp0"),
            (r"transport:\s+iWARP\b", "transport iWARP"),
            (r"port:\s+1\b", "port 1"),
            (r"state:\s+PORT_ACTIVE\b", "port state PORT_ACTIVE"),
            (r"link_layer:\s+Ethernet\b", "link layer Ethernet"),
            (r"phys_port_cnt:\s+1\b", "one physical port"),
            (r"max_qp:\s+[1-9]", "a non-zero max_qp"),
            (r"max_mr_size:\s+0x[0-9a-f]*[1-9a-f]", "a non-zero max_mr_size"),
            (r"active_mtu:\s+\d+ \(\d\)", "an active MTU")]
    for rx, what in want:
        t.check(re.search(rx, out), "ibv_devinfo -v does not show %s" % what)


PING_LINE = re.compile(r"^ping data: rdma-ping-(\d+): ", re.M)


def rping_pair(t, server_opts, client_opts, count=100, size=64, name="rping",
               server_native=None, client_native=None, timeout=60, port=None,
               iwrun_opts=()):
    """One server and one client; returns the client's Proc (ok or not)."""
    port = port or free_port()
    common = ["-a", HOST, "-p", str(port)]
    if server_native:
        srv = t.native("iwping-server", [server_native, "-s"] + common + server_opts)
    else:
        srv = t.iwrun(name + "-server", ["rping", "-s"] + common + ["-S", str(size)] +
                      server_opts, opts=iwrun_opts)
    wait_listen(srv, port)
    cargs = ["-c"] + common + ["-C", str(count), "-S", str(size), "-V"] + client_opts
    if client_native:
        cli = t.native("iwping-client", [client_native] + cargs)
    else:
        cli = t.iwrun(name + "-client", ["rping"] + cargs, opts=iwrun_opts)
    if expect_exit(t, cli, timeout) == 0:
        expect_exit(t, srv, 15)
    else:
        srv.stop()  # the client's failure is the news; the server may wait on
    return cli


def check_pings(t, cli, count):
    got = [int(n) for n in PING_LINE.findall(cli.text())]
    t.check(got == list(range(count)),
            "%s printed %d ping data lines (want %d, rdma-ping-0 to rdma-ping-%d)" %
            (cli.name, len(got), count, count - 1))


def case_rping_64(t):
    need("rping")
    cli = rping_pair(t, [], ["-v"], size=64)
    check_pings(t, cli, 100)


def case_rping_65535(t):
    need("rping")
    # no -v: a 64 KiB line per ping
    rping_pair(t, [], [], size=65535)


def case_rping_q(t):
    need("rping")
    cli = rping_pair(t, ["-q"], ["-q", "-v"], size=64)
    check_pings(t, cli, 100)


def case_rping_uring(t):
    need("rping")
    cli = rping_pair(t, [], ["-v"], size=64, iwrun_opts=["--engine", "uring"])
    check_pings(t, cli, 100)


def case_rping_persistent(t):
    need("rping")
    port = free_port()
    common = ["-a", HOST, "-p", str(port)]
    srv = t.iwrun("rping-server", ["rping", "-s", "-P", "-S", "1000"] + common)
    wait_listen(srv, port)
    # The second client connects once the first is pinging, so that the two
    # are served at the same time.  rping -P itself cannot take two connection
    # requests at once, whatever library is underneath: its CM thread keeps
    # the new id in one variable, which a second request overwrites before the
    # main thread has read it.  Seen with IWARP_TRACE=on: two CONNECT_REQUESTs
    # back to back, the first never accepted (its client gets CONNECT_ERROR),
    # rdma_create_qp EINVAL for an id that already has a QP, at times a
    # "futex facility" abort of the server as two threads share that id.
    counts = (2000, 100)
    clis = []
    for i, n in enumerate(counts):
        clis.append(t.iwrun("rping-client%d" % (i + 1), ["rping", "-c", "-C", str(n), "-S",
                                                         "1000", "-V", "-v"] + common))
        if i == 0:
            wait_pings(t, clis[0], 1)
    overlap = clis[0].alive()
    for c, n in zip(clis, counts):
        expect_exit(t, c, 60)
        check_pings(t, c, n)
    print("the second client connected %s the first was pinging" %
          ("while" if overlap else "after (no overlap this time)"))
    t.check(srv.alive(), "rping -P server exited after its clients (%s)" %
            (srv.p.poll(),))
    srv.stop()


def case_rping_iwping(t):
    need("rping")
    if not t.args.iwping:
        raise Skip("no --iwping given")
    # iwping server, rping client
    a = rping_pair(t, [], ["-v"], size=64, server_native=t.args.iwping)
    check_pings(t, a, 100)
    # rping server, iwping client
    b = rping_pair(t, [], ["-v"], size=64, client_native=t.args.iwping)
    check_pings(t, b, 100)
    la, lb = a.text().splitlines(), b.text().splitlines()
    t.check(la == lb, "rping's and iwping's -v output differ (first difference: %r vs %r)" %
            next(((x, y) for x, y in zip(la, lb) if x != y), (len(la), len(lb))))


# perftest ---------------------------------------------------------------

PERF_COL = re.compile(r"#\w+|(?:[\w.%]+ )?[\w.%]+\[[^\]]*\]")


def perftest_result(text):
    """{column: value} of the result line after perftest's '#bytes' header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#bytes"):
            # names hold single spaces ("BW peak[MB/sec]"), and columns may be
            # one space apart ("#bytes #iterations")
            cols = PERF_COL.findall(line)
            for row in lines[i + 1:]:
                vals = row.split()
                if vals and vals[0].isdigit() and len(vals) >= len(cols) - 1:
                    return dict(zip(cols, vals))
    return None


RT_WARNING = "keeps its normal priority"


def perftest(t, prog, extra=(), timeout=30, opts=()):
    need(prog)
    port = free_port()
    base = ["-R", "-F", "-p", str(port)] + list(extra)
    if prog.endswith("_bw"):
        base += ["-n", "1000"]
    srv = t.iwrun(prog + "-server", [prog] + base, opts=opts)
    wait_listen(srv, port)
    cli = t.iwrun(prog + "-client", [prog] + base + [HOST], opts=opts)
    expect_exit(t, cli, timeout)
    expect_exit(t, srv, 20)
    if "--rt" in opts:
        # where chrt(1) may run a real-time process, so may the libraries:
        # then no warning
        rt_ok = shutil.which("chrt") and subprocess.run(
            ["chrt", "-f", "1", "true"], capture_output=True).returncode == 0
        for p in (srv, cli):
            warned = RT_WARNING in p.text("err") + p.text()
            if rt_ok:
                t.check(not warned, "%s: iwrun --rt where chrt -f 1 works, yet: %s" %
                        (p.name, RT_WARNING))
            else:
                print("%s: real-time priority not allowed here (chrt -f 1 fails); the "
                      "engine threads %s at normal priority" %
                      (p.name, "said they stay" if warned else "did not say they stay"))
    if cli.status != 0:
        return
    r = perftest_result(cli.text())
    if not t.check(r is not None, "%s client printed no result line" % prog):
        return
    keys = [k for k in r if k.startswith("BW average") or k.startswith("t_avg") or
            k.startswith("t_typical")]
    t.check(keys, "%s: no BW average / t_avg column in %s" % (prog, sorted(r)))
    for k in keys:
        try:
            v = float(r[k])
        except ValueError:
            v = 0.0
        t.check(v > 0, "%s: %s is %s, want > 0" % (prog, k, r[k]))
    if keys:
        print("%s: %s" % (prog, ", ".join("%s %s" % (k, r[k]) for k in keys)))


def make_perf(prog, extra=(), opts=()):
    return lambda t: perftest(t, prog, extra, opts=opts)


# qperf ------------------------------------------------------------------

QPERF_RESULT = re.compile(r"^\s*(bw|latency|msg_rate)\s*=\s*([0-9.]+)\s*(\S+)", re.M)


def qperf(t, test, env=None):
    need("qperf")
    port = free_port()
    srv = t.iwrun("qperf-server", ["qperf", "-lp", str(port)], env=env)
    wait_listen(srv, port)
    cli = t.iwrun("qperf-client", ["qperf", "-cm1", "-lp", str(port), "-t", "1", HOST, test],
                  env=env)
    expect_exit(t, cli, 45)
    srv.stop()
    if cli.status != 0:
        return
    res = QPERF_RESULT.findall(cli.text())
    if not t.check(res, "qperf %s printed no result (bw = / latency =)" % test):
        return
    for what, val, unit in res:
        t.check(float(val) > 0, "qperf %s: %s = %s %s, want > 0" % (test, what, val, unit))
    print("qperf %s: %s" % (test, ", ".join("%s %s %s" % r for r in res)))


def make_qperf(test, env=None):
    return lambda t: qperf(t, test, env)


# killed mid-run ---------------------------------------------------------

def wait_pings(t, cli, n, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end and cli.alive():
        if len(PING_LINE.findall(cli.text())) >= n:
            return True
        time.sleep(0.05)
    raise Fail("%s did not get to %d pings within %d s" % (cli.name, n, timeout))


def saw_it(t, proc):
    """The survivor must say it lost its peer: rping prints "... DISCONNECT
    EVENT..." for the CM's DISCONNECTED (and then exits 0 by design when the
    connection ended between pings), or reports an error."""
    said = re.search(r"DISCONNECT|error|fail", proc.text() + proc.text("err"), re.I)
    t.check(said, "%s ended (%s) without a word about its peer's disconnect" %
            (proc.name, proc.how))
    print("%s after its peer's death: %s%s" % (proc.name, proc.how,
                                              ", said: %s" % said.group(0) if said else ""))


def case_kill_rping_server(t):
    need("rping")
    port = free_port()
    common = ["-a", HOST, "-p", str(port)]
    srv = t.iwrun("rping-server", ["rping", "-s"] + common)
    wait_listen(srv, port)
    cli = t.iwrun("rping-client", ["rping", "-c", "-C", "0", "-V", "-v"] + common)
    wait_pings(t, cli, 50)
    srv.kill(signal.SIGKILL)
    srv.how = "SIGKILLed by the test mid-run"
    cli.wait(20)  # Fail if the client hangs
    saw_it(t, cli)


def case_kill_rping_client(t):
    need("rping")
    port = free_port()
    common = ["-a", HOST, "-p", str(port)]
    srv = t.iwrun("rping-server", ["rping", "-s"] + common)
    wait_listen(srv, port)
    cli = t.iwrun("rping-client", ["rping", "-c", "-C", "0", "-V", "-v"] + common)
    wait_pings(t, cli, 50)
    cli.kill(signal.SIGKILL)
    cli.how = "SIGKILLed by the test mid-run"
    srv.wait(20)  # Fail if the server hangs
    saw_it(t, srv)


# tshark -----------------------------------------------------------------

def tcp_streams(tshark, pcap, port):
    """Payload per (client port, direction) of connections to server `port`."""
    res = subprocess.run([tshark, "-n", "-r", pcap, "-T", "fields", "-e", "tcp.srcport",
                          "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.payload"],
                         capture_output=True, text=True, timeout=300)
    segs = {}
    for line in res.stdout.splitlines():
        p = line.split("\t")
        if len(p) < 4 or not p[3]:
            continue
        src, dst = int(p[0]), int(p[1])
        key = (dst, "r2i") if src == port else (src, "i2r") if dst == port else None
        if key:
            segs.setdefault(key, {})[int(p[2])] = bytes.fromhex(p[3].replace(":", ""))
    out = {}
    for key, m in segs.items():
        data, nxt = bytearray(), None
        for seq in sorted(m):
            chunk = m[seq]
            if nxt is not None and seq < nxt:
                chunk = chunk[nxt - seq:]
            elif nxt is not None and seq > nxt:
                out[key] = None  # a hole: the reader cannot follow
                break
            data.extend(chunk)
            nxt = seq + len(m[seq]) if nxt is None else max(nxt, seq + len(m[seq]))
        else:
            out[key] = bytes(data)
    return out


def tshark_fpdus(fpdus, conn_of):
    """tshark's FPDUs of one direction, once each: a retransmission decodes
    again, told by its connection, TCP sequence number (relative, so per
    connection) and place in its frame."""
    out, seen, nth = [], set(), {}
    for fp in fpdus:
        nth[fp["frame"]] = nth.get(fp["frame"], 0) + 1
        ident = (conn_of.get(fp["frame"]), fp["seq"], nth[fp["frame"]])
        if ident not in seen:
            seen.add(ident)
            out.append(fp)
    return out


def check_bw_capture(t, tshark, pcap, port, iters, views, trouble, conn_of, who):
    """A bandwidth session on server `port`, perhaps several connections
    (ib_write_bw -R: a control connection, then the data QPs): per connection
    the RFC 5044 reader must parse every FPDU with a good CRC32c, and find at
    least `iters` RDMA Writes client to server; tshark must decode the same
    number of FPDUs, each with a good CRC and a DDP/RDMAP decode, and find
    nothing malformed and no expert error."""
    import mpa_tshark as mt
    import verbs_tshark as vt

    def bad(msg):
        t.bad.append("%s capture: %s" % (who, msg))

    view = views.get(port, mt.new_view())
    if not view["req"] or len(view["rep"]) != len(view["req"]):
        bad("tshark decoded %d MPA Requests and %d Replies" %
            (len(view["req"]), len(view["rep"])))
    for f in view["req"] + view["rep"]:
        if not f["c"] or f["rev"] != 2 or f["m"] or f["r"]:
            bad("MPA frame %s: M=%d C=%d R=%d rev %d, want M=0 C=1 R=0 rev 2" %
                (f["frame"], f["m"], f["c"], f["r"], f["rev"]))
    reader = {"i2r": [], "r2i": []}
    conns = tcp_streams(tshark, pcap, port)
    for (cport, d), data in sorted(conns.items()):
        if data is None:
            bad("connection from port %d, %s: a hole in the capture" % (cport, d))
            continue
        try:
            _, n = mt.parse_frame(data, b"MPA ID Req Frame" if d == "i2r"
                                  else b"MPA ID Rep Frame")
            ulpdus = mt.parse_fpdus(data[n:], False, True)
        except mt.ParseError as e:
            bad("connection from port %d, %s: RFC 5044 reader: %s" % (cport, d, e))
            continue
        reader[d] += [mt.segment_key(u) for u in ulpdus]
    writes = sum(1 for k in reader["i2r"] if k[0] == "write" and k[4])
    if writes < iters:
        bad("%d RDMA Write messages client to server, want at least %d" % (writes, iters))
    for d in ("i2r", "r2i"):
        fps = tshark_fpdus(view["fpdus"][d], conn_of)
        if len(fps) != len(reader[d]):
            bad("%s: tshark decoded %d FPDUs, the RFC 5044 reader %d" %
                (d, len(fps), len(reader[d])))
        badcrc = [fp["frame"] for fp in fps if not vt.crc_good(fp)]
        if badcrc:
            bad("%s: CRC not good in frames %s" % (d, badcrc[:5]))
        nodec = [fp["frame"] for fp in fps if fp["key"] is None]
        if nodec:
            bad("%s: FPDUs without a DDP/RDMAP decode in frames %s" % (d, nodec[:5]))
        tr = trouble.found.get((port, d), [])
        if tr:
            bad("%s: malformed or expert errors: %s" % (d, "; ".join(x for _, x in tr[:3])))
    print("%s: %d connection(s), c>s %d FPDUs (%d Writes), s>c %d FPDUs" %
          (who, len(conns) // 2, len(reader["i2r"]), writes, len(reader["r2i"])))


def case_tshark(t, native=False):
    """native: iwping and iwperf in place of rping and ib_write_bw, the same
    checks (a self-test of this harness, runnable before the libraries)."""
    if native:
        need("tshark")
        if not (t.args.iwping and t.args.iwperf):
            raise Skip("tshark_selftest needs --iwping and --iwperf")
    else:
        need("rping", "ib_write_bw", "tshark")
    import mpa_tshark as mt
    import verbs_tshark as vt
    tshark = shutil.which("tshark")
    # small sessions: a fast sender on lo can outrun the capture
    count, size, iters, bwsize = 10, 1000, 50, 8192
    mss = vt.loopback_mss(socket.AF_INET)
    C = mt.Combo
    # rping sessions: the libraries' defaults, then iwrun's options on both
    # sides, which must show on the wire as the MPA bits, Markers, CRC, RTR
    # (the libraries open in peer-to-peer mode offering every RTR form, and our
    # responder picks the zero-length Write; iwping's default is no RTR)
    if native:
        pings = [([], C(2, True, False, False))]
    else:
        pings = [([], C(2, True, False, False, p2p=True, rtr="write")),
                 (["--mpa-rev", "1", "--crc", "off"], C(1, False, False, False)),
                 (["--markers", "both"], C(2, True, True, True, p2p=True, rtr="write")),
                 (["--p2p", "read"], C(2, True, False, False, p2p=True, rtr="read")),
                 (["--p2p", "off"], C(2, True, False, False))]
    runs = []
    for opts, combo in pings:
        r = vt.Run("iwping", combo, count=count, size=size)  # rping's wire = iwping's
        r.size = vt.pick_size(lambda n, r=r: r.layout(n, mss), combo, size)
        runs.append((opts, r))
    base = mt.pick_port_range(len(runs) + 3, mt.tshark_tcp_ports(tshark))
    for i, (_, r) in enumerate(runs):
        r.port = base + 1 + i
    pbw, last = base + 1 + len(runs), base + 2 + len(runs)
    pcap = os.path.join(t.dir, "compat.pcapng")
    cap = mt.Capture(tshark, base, last, pcap)
    try:
        cap.probe(base)
        for opts, r in runs:
            if native:
                rping_pair(t, [], [], count=count, size=r.size, port=r.port,
                           server_native=t.args.iwping, client_native=t.args.iwping)
            else:
                rping_pair(t, [], [], count=count, size=r.size, port=r.port, iwrun_opts=opts)
        if native:
            srv = t.native("iwperf-server", [t.args.iwperf, "-s", "-a", HOST, "-p", str(pbw)])
            wait_listen(srv, pbw)
            cli = t.native("iwperf-client", [t.args.iwperf, "-c", HOST, "-p", str(pbw), "--op",
                                             "write", "--size", str(bwsize), "--iters",
                                             str(iters)])
        else:
            srv = t.iwrun("ib_write_bw-server", ["ib_write_bw", "-R", "-F", "-p", str(pbw),
                                                 "-n", str(iters), "-s", str(bwsize)])
            wait_listen(srv, pbw)
            cli = t.iwrun("ib_write_bw-client", ["ib_write_bw", "-R", "-F", "-p", str(pbw),
                                                 "-n", str(iters), "-s", str(bwsize), HOST])
        expect_exit(t, cli, 60)
        if native:
            srv.stop()  # iwperf's server serves until stopped
        else:
            expect_exit(t, srv, 20)
        cap.probe(last)
    except RuntimeError as e:
        raise Fail(str(e))
    finally:
        cap.stop()
    if t.bad:
        return

    ports = {r.port for _, r in runs} | {pbw}
    trouble = vt.Trouble(ports)
    conn_of = {}  # frame number -> the client port of its connection to pbw

    def on_packet(pkt):
        trouble(pkt)
        src, dst = mt.field_show(pkt, "tcp.srcport"), mt.field_show(pkt, "tcp.dstport")
        if src is not None and dst is not None and pbw in (int(src), int(dst)):
            conn_of[mt.field_show(pkt, "frame.number")] = int(dst) if int(src) == pbw \
                else int(src)

    views = mt.decode_pdml(tshark, pcap, ports, on_packet=on_packet)

    # rping: exactly the messages of iwping's layout, both decoders (verbs_tshark)
    pports = {r.port for _, r in runs}
    streams = mt.streams_from_pcap(tshark, pcap, pports)
    bounds = vt.segment_bounds(tshark, pcap, pports)
    for opts, r in runs:
        p = r.port
        st = {d: streams.get((p, d), mt.ParseError("no %s payload captured" % d))
              for d in ("i2r", "r2i")}
        bad, notes = vt.check_run(r, views.get(p, mt.new_view()), st,
                                  {d: bounds.get((p, d), set()) for d in ("i2r", "r2i")},
                                  {d: trouble.found.get((p, d), []) for d in ("i2r", "r2i")},
                                  mss)
        what = "rping %s-C %d -S %d (%s)" % ("".join(o + " " for o in opts), count, r.size,
                                             r.combo.name)
        print("%s %s: %s" % ("ok  " if not bad else "FAIL", what, "; ".join(notes)))
        t.bad += ["%s: %s" % (what, b) for b in bad]

    check_bw_capture(t, tshark, pcap, pbw, iters, views, trouble, conn_of,
                     "iwperf" if native else "ib_write_bw")


# the libraries themselves ----------------------------------------------

def symbols(path, defined):
    res = subprocess.run(["nm", "-D", "--with-symbol-versions",
                          "--defined-only" if defined else "--undefined-only", path],
                         capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        raise Fail("nm %s: %s" % (path, res.stderr.strip()))
    out = set()
    for line in res.stdout.splitlines():
        name = line.split()[-1]
        if "@" in name:
            out.add(name.replace("@@", "@"))
    return out


def case_standins(t):
    need("ib_write_bw")
    libdir = t.args.libdir
    bins = [b for b in ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat",
                        "ib_read_lat", "ib_send_lat", "ib_atomic_bw", "ib_atomic_lat")
            if shutil.which(b)]
    for lib, prefix in (("libmlx5.so.1", ("mlx5dv_", "MLX5_")), ("libefa.so.1",
                                                                  ("efadv_", "EFA_"))):
        path = os.path.join(libdir, lib)
        if not t.check(os.path.exists(path), "%s is missing from %s" % (lib, libdir)):
            continue
        want = set()
        for b in bins:
            want |= {s for s in symbols(shutil.which(b), False)
                     if s.startswith(prefix[0]) or s.split("@")[1].startswith(prefix[1])}
        have = symbols(path, True)
        t.check(want <= have, "%s lacks %s" % (lib, sorted(want - have)))
        t.check(have <= want, "%s defines more than perftest imports: %s" %
                (lib, sorted(have - want)))
        print("%s: %d symbols, as %s import" % (lib, len(have), ", ".join(bins)))


def case_iwrun_check(t):
    for prog, libs in (("rping", ("libibverbs.so.1", "librdmacm.so.1")),
                       ("ib_write_bw", ("libibverbs.so.1", "librdmacm.so.1", "libmlx5.so.1",
                                        "libefa.so.1")),
                       ("qperf", ("libibverbs.so.1", "librdmacm.so.1"))):
        if not shutil.which(prog):
            print("note: %s not installed, not checked" % prog)
            continue
        p = t.native("iwrun-check-" + prog, [t.args.iwrun, "--check", prog])
        expect_exit(t, p, 30)
        out = p.text()
        for lib in libs:
            t.check(re.search(r"^\s*%s\s+=> %s/%s$" % (re.escape(lib), re.escape(t.args.libdir),
                                                      re.escape(lib)), out, re.M),
                    "iwrun --check %s: %s not from %s" % (prog, lib, t.args.libdir))


CASES = {
    "devices": case_devices,
    "rping_64": case_rping_64,
    "rping_65535": case_rping_65535,
    "rping_q": case_rping_q,
    "rping_persistent": case_rping_persistent,
    "rping_uring": case_rping_uring,
    "rping_iwping": case_rping_iwping,
    "kill_rping_server": case_kill_rping_server,
    "kill_rping_client": case_kill_rping_client,
    "tshark": case_tshark,
    "tshark_selftest": lambda t: case_tshark(t, native=True),
    "standins": case_standins,
    "iwrun_check": case_iwrun_check,
}
for _op in ("write", "read", "send"):
    for _k in ("bw", "lat"):
        CASES["perf_%s_%s" % (_op, _k)] = make_perf("ib_%s_%s" % (_op, _k))
CASES["perf_write_bw_q4"] = make_perf("ib_write_bw", ["-q", "4"])
CASES["perf_send_bw_srq"] = make_perf("ib_send_bw", ["--use-srq"])
CASES["perf_atomic_bw"] = make_perf("ib_atomic_bw")
CASES["perf_atomic_lat"] = make_perf("ib_atomic_lat")
# the engine threads at real-time priority (iwrun --rt)
CASES["perf_write_lat_rt"] = make_perf("ib_write_lat", opts=["--rt"])
for _q in ("rc_bw", "rc_lat", "rc_rdma_read_bw", "rc_rdma_read_lat", "rc_rdma_write_poll_lat"):
    CASES["qperf_" + _q] = make_qperf(_q)
# RDMA Write with Immediate (RFC 7306), on in the libraries unless
# IWARP_RFC7306=0
for _q in ("rc_rdma_write_bw", "rc_rdma_write_lat"):
    CASES["qperf_" + _q] = make_qperf(_q)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", choices=sorted(CASES) + ["list"])
    ap.add_argument("--iwrun", required=True, help="path to iwrun (build/tools/iwrun)")
    ap.add_argument("--iwping", help="path to iwping (for rping_iwping)")
    ap.add_argument("--iwperf", help="path to iwperf (for tshark_selftest)")
    ap.add_argument("--libdir", help="the drop-in library directory (default: iwrun's)")
    ap.add_argument("--keep", action="store_true", help="keep the outputs and captures")
    args = ap.parse_args()
    if args.case == "list":
        print("\n".join(sorted(CASES)))
        return 0
    if not args.libdir:
        args.libdir = os.environ.get("IWRUN_LIBDIR") or os.path.join(
            os.path.dirname(os.path.dirname(os.path.abspath(args.iwrun))), "compat")
    # meson puts the directory of the libraries a test depends on (ours) on
    # LD_LIBRARY_PATH; only the programs started through iwrun may load them
    keep = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")
            if d and os.path.realpath(d) != os.path.realpath(args.libdir)]
    if keep:
        os.environ["LD_LIBRARY_PATH"] = ":".join(keep)
    else:
        os.environ.pop("LD_LIBRARY_PATH", None)
    t = Test(args)
    t0 = time.monotonic()
    status = 0
    try:
        CASES[args.case](t)
    except Skip as e:
        print("SKIP: %s: %s" % (args.case, e))
        status = SKIP
    except Fail as e:
        t.bad.append(str(e))
    finally:
        t.cleanup()
    if status != SKIP:
        status = 1 if t.bad else 0
        print("%s: %s (%.1f s)" % ("FAIL" if t.bad else "ok", args.case,
                                    time.monotonic() - t0))
        for b in t.bad:
            print("  - %s" % b)
        if t.bad:
            for p in t.procs:
                p.report()
    if status == 1 or args.keep:
        print("outputs kept in %s" % t.dir)
    else:
        shutil.rmtree(t.dir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
