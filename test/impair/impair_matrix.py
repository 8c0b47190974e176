#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwarp impairment matrix (issue 16, deliverable 2): every byte right and
every work request completed under a bad network.

Two namespaces joined by tools/iwimpair (test/helpers/netns.py): the servers
in A (10.77.0.1), the clients in B.  One namespace pair per impairment
setting, reused for every case of that setting:

  clean      --mtu 1500, nothing else (the baseline; also the MTU 1500 case)
  mtu9000    --mtu 9000
  loss1      --loss 1                 loss5      --loss 5
  reorder25  --reorder 25             dup1       --dup 1
  delay10    --delay 10 --jitter 3 (10 ms one way, +-3 ms, uniform)
  rate50M    --rate 50M (a 50 Mbit/s bottleneck)
  mix        (--full only) --mtu 9000 --loss 1 --dup 1 --reorder 10 --delay 2 --jitter 1

In each setting:

  iwperf     `iwperf --verify` of RDMA Write, RDMA Read and Send, at sizes
             that cross FPDU boundaries (an FPDU is about one MSS: 1460
             octets at MTU 1500) and MPA Marker boundaries (every 512
             octets of the stream): 1000, 65537, 100000 and 1000003
             octets; framings CRC on + Markers off, CRC off + Markers off,
             CRC on + Markers both ways (and, --full, CRC off + Markers
             both ways).  A run passes when iwperf exits 0 with
             "verify":true, its JSON result counts every message it was
             asked for (iters and bytes), the negotiated CRC and Markers are
             the ones asked for, and the server reports the same number of
             messages, "data verified".  iwperf itself fails a run whose
             data, message count or completions are wrong (it finishes only
             when posted == completed and the server's count agrees; the
             posted/completed counts themselves are not printed).
  iwlive     every work request accounted (test/impair/iwlive.c: every work
             request signalled and counted when posted and when completed):
             the client's posted == ok, nothing flushed, failed or left
             unfinished; for Send, the server's receive completions == the
             client's Sends.
  NFS        rpcbind + nfs-ganesha + `iwnfsgw server` in A, `iwnfsgw
             client` + 4 concurrent libnfs nfs-cp in B (test/helpers/
             nfs_netns.py): each client writes its own file (8 MiB, --full
             32 MiB), then all read them back; sha256 of the source, of the
             file ganesha stored in A's export directory and of the copy
             read back must agree, and no call may fail in the gateways.
             Skipped (one line says so) where ganesha or libnfs are not
             installed.

The impairment must show in the forwarder's counters (lost, reordered,
duplicated, delayed, largest packet = MTU; under the rate limit no run may
go faster than the bottleneck), which must balance (in + dup = out + drops
+ queued).

CI mode (default) runs a covering subset, printed first: every setting but
mix, each operation twice per setting with two of the three framings and the
sizes in rotation, iwlive once per setting, NFS under loss1, reorder25 and
delay10.
--full runs the whole product (9 settings x 3 operations x 4 framings x 4
sizes, larger transfers, --reps repetitions), iwlive for every operation
and framing, NFS in every setting; --passes / --duration repeat it with
seed, seed+1, ... (tools/soak.sh --matrix).

Printed per case: seed, impairment, operation, size, framing, throughput
(iwperf's, Mbit/s of payload), the forwarder's lost/dup/reordered counts
during the run; at the end a Markdown table of throughput per case (median
where repeated) for the README, and every failure with its seed and output.
Exit status: 0 passed, 1 a failure, 77 skipped (not root, no ip(8), no
/dev/net/tun, no namespaces).
"""

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HELPERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers")
sys.path.insert(0, HELPERS)
import netns  # noqa: E402
import nfs_netns  # noqa: E402

# name, label (README), iwimpair options, in CI mode
SETTINGS = [
    ("clean", "clean (MTU 1500)", ["--mtu", "1500"], True),
    ("mtu9000", "MTU 9000", ["--mtu", "9000"], True),
    ("loss1", "loss 1 %", ["--loss", "1"], True),
    ("loss5", "loss 5 %", ["--loss", "5"], True),
    ("reorder25", "reorder 25 %", ["--reorder", "25"], True),
    ("dup1", "duplication 1 %", ["--dup", "1"], True),
    ("delay10", "delay 10 ms +- 3 ms", ["--delay", "10", "--jitter", "3"], True),
    ("rate50M", "rate 50 Mbit/s", ["--rate", "50M"], True),
    ("mix", "MTU 9000, loss 1 %, dup 1 %, reorder 10 %, delay 2 +- 1 ms",
     ["--mtu", "9000", "--loss", "1", "--dup", "1", "--reorder", "10", "--delay", "2",
      "--jitter", "1"], False),
]
OPS = ["write", "read", "send"]
OP_LABEL = {"write": "Write", "read": "Read", "send": "Send"}
# name, label, options of both ends, expected "crc" and "markers" in iwperf's result
FRAMINGS = [
    ("crc", "CRC on, Markers off", ["--crc", "on", "--markers", "off"], True, "off"),
    ("nocrc", "CRC off, Markers off", ["--crc", "off", "--markers", "off"], False, "off"),
    ("crc+mk", "CRC on, Markers both ways", ["--crc", "on", "--markers", "on"], True, "both"),
    ("nocrc+mk", "CRC off, Markers both ways", ["--crc", "off", "--markers", "on"], False,
     "both"),
]
CI_FRAMINGS = 3  # the first three
SIZES = [1000, 65537, 100000, 1000003]
PERF_PORT = 7400  # + framing index, one iwperf server per framing
LIVE_PORT = 7500  # + framing index, one iwlive server per framing
LIVE_SIZE = 65537
NFS_CLIENTS = 4
COUNTERS = ("in_pkts", "out_pkts", "lost", "queue_drops", "limit_drops", "write_errors",
            "duplicated", "reordered", "delayed", "queued", "max_len", "queue_max")


class Mode:
    def __init__(self, full):
        self.full = full
        self.target = 32_000_000 if full else 10_000_000  # octets per iwperf run
        self.max_iters = 2000 if full else 1000
        self.min_iters = 4 if full else 3
        self.run_timeout = 600 if full else 60
        self.live_seconds = 1.0 if full else 0.4
        self.nfs_mb = 32 if full else 8
        self.nfs_timeout = 900 if full else 180

    def iters(self, size):
        return max(self.min_iters, min(self.max_iters, -(-self.target // size)))


def fr_by_name(name):
    return [f for f in FRAMINGS if f[0] == name][0]


def plan_cases(mode, settings, ops, framings, sizes, reps, per_op):
    """{setting name: [(op, size, framing name, rep)]} and the iwlive and NFS plans."""
    perf, live, nfs = {}, {}, {}
    c = 0
    for si, (sname, _, _, _) in enumerate(settings):
        cases = []
        if mode.full:
            for rep in range(reps):
                for op in ops:
                    for f in framings:
                        for size in sizes:
                            cases.append((op, size, f[0], rep))
            live[sname] = [(op, f[0]) for op in ops for f in framings]
            nfs[sname] = framings[si % len(framings)][0]
        else:
            for oi, op in enumerate(ops):
                for k in range(per_op):
                    f = framings[(si + oi + k) % len(framings)]
                    cases.append((op, sizes[c % len(sizes)], f[0], 0))
                    c += 1
            live[sname] = [(ops[si % len(ops)], framings[(si // 3 + si) % len(framings)][0])]
            if sname in ("loss1", "reorder25", "delay10"):
                nfs[sname] = framings[si % len(framings)][0]
        perf[sname] = cases
    return perf, live, nfs


def print_plan(mode, settings, perf, live, nfs, nfs_why):
    print("plan (%s mode):" % ("full" if mode.full else "CI"))
    cnt = {"op": {}, "framing": {}, "size": {}}
    for sname, label, imp, _ in settings:
        cases = perf[sname]
        print("  %-10s iwimpair %s" % (sname, " ".join(imp)))
        if mode.full:
            print("             iwperf: %d runs (every op x framing x size%s)" % (
                len(cases), ", x %d repetitions" % (max(c[3] for c in cases) + 1)
                if cases else ""))
        else:
            for op, size, fr, _ in cases:
                print("             iwperf %-5s %8d B x %-5d %s" % (op, size, mode.iters(size),
                                                                  fr_by_name(fr)[1]))
        for op, size, fr, _ in cases:
            cnt["op"][op] = cnt["op"].get(op, 0) + 1
            cnt["framing"][fr] = cnt["framing"].get(fr, 0) + 1
            cnt["size"][size] = cnt["size"].get(size, 0) + 1
        print("             iwlive: %s" % ", ".join("%s/%s" % x for x in live[sname]))
        if sname in nfs:
            print("             NFS: %d clients x %d MiB through the gateways (%s)%s" % (
                NFS_CLIENTS, mode.nfs_mb, fr_by_name(nfs[sname])[1],
                " - SKIPPED: " + nfs_why if nfs_why else ""))
    for k in ("op", "framing", "size"):
        print("  iwperf runs per %s: %s" % (k, ", ".join("%s %d" % kv
                                                      for kv in cnt[k].items())))
    print(flush=True)


# --- processes -------------------------------------------------------------------


def wait_text(path, pattern, proc, timeout, start=0):
    """The first match of regex pattern in path from offset start, or None."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path, errors="replace") as f:
                f.seek(start)
                m = re.search(pattern, f.read(), re.M)
                if m:
                    return m
        except OSError:
            pass
        if time.monotonic() >= deadline or (proc is not None and proc.poll() is not None):
            return None
        time.sleep(0.02)


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Servers:
    """iwperf and iwlive servers in A, one per framing, started when first needed."""

    def __init__(self, net, args):
        self.net, self.args = net, args
        self.perf, self.live = {}, {}

    def _start(self, argv, out, ready):
        with open(out, "w") as f:
            p = self.net.popen("a", argv, stdout=f, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
        if not wait_text(out, ready, p, 20):
            raise RuntimeError("%s did not start: %s" % (os.path.basename(argv[0]), tail(out)))
        return p

    def perf_server(self, fr):
        if fr not in self.perf:
            fi = [f[0] for f in FRAMINGS].index(fr)
            out = os.path.join(self.net.workdir, "iwperf-server-%s.out" % fr)
            p = self._start([self.args.iwperf, "-s", "-a", self.net.addr_a, "-p",
                             str(PERF_PORT + fi)] + fr_by_name(fr)[2], out, "listening on")
            self.perf[fr] = (p, out, PERF_PORT + fi)
        return self.perf[fr]

    def drop_perf(self, fr):
        """Stop the iwperf server of framing fr (after a run that hung)."""
        p = self.perf.pop(fr, (None,))[0]
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()

    def live_server(self, fr):
        if fr not in self.live:
            fi = [f[0] for f in FRAMINGS].index(fr)
            out = os.path.join(self.net.workdir, "iwlive-server-%s.out" % fr)
            p = self._start([self.args.iwlive, "server", "-a", self.net.addr_a, "-p",
                             str(LIVE_PORT + fi), "-P", "--size", str(LIVE_SIZE)]
                            + fr_by_name(fr)[2], out, '"listening"')
            self.live[fr] = (p, out, LIVE_PORT + fi)
        return self.live[fr]


def ctr_delta(before, after):
    return {d: {k: after[d][k] - before[d][k] for k in ("lost", "duplicated", "reordered",
                                                        "delayed", "queue_drops")}
            for d in ("a2b", "b2a")}


def tot(c, k):
    return c["a2b"][k] + c["b2a"][k]


def run_perf(net, srv, mode, seed, setting, op, size, fr, rep):
    """One iwperf --verify run; returns a result dict (ok, mbps, failures...)."""
    f = fr_by_name(fr)
    iters = mode.iters(size)
    r = {"setting": setting[0], "op": op, "size": size, "framing": fr, "rep": rep,
         "iters": iters, "seed": seed, "fails": [], "mbps": None}
    _, out, port = srv.perf_server(fr)
    try:
        start = os.path.getsize(out)
    except OSError:
        start = 0
    before = net.stats()
    argv = [srv.args.iwperf, "-c", net.addr_a, "-p", str(port), "--op", op, "--size",
            str(size), "--iters", str(iters), "--verify", "--json"] + f[2]
    r["argv"] = "ip netns exec %s %s" % (net.ns_b, " ".join(argv))
    t0 = time.monotonic()
    try:
        p = net.run("b", argv, timeout=mode.run_timeout)
        rc, stdout, stderr = p.returncode, p.stdout, p.stderr.strip()
    except subprocess.TimeoutExpired as e:
        rc, stdout = None, e.stdout or ""
        if isinstance(stdout, bytes):
            stdout = stdout.decode(errors="replace")
        stderr = "timed out after %d s" % mode.run_timeout
    r["wall"] = time.monotonic() - t0
    if rc is None:
        srv.drop_perf(fr)  # a fresh server for the next run of this framing
    after = net.stats()
    r["ctr"] = ctr_delta(before, after)
    res = None
    for line in stdout.splitlines():
        if line.startswith("{"):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("qp_index") is None:
                res = j
    fails = r["fails"]
    if rc != 0 or res is None:
        fails.append("iwperf client exit %s: %s" % (rc, stderr or "no result line"))
    else:
        r["mbps"] = res["gbytes_per_s"] * 8000.0
        r["seconds"] = res["seconds"]
        if res.get("verify") is not True:
            fails.append("result without verify: %s" % line)
        if res.get("iters") != iters or res.get("bytes") != iters * size:
            fails.append("completed %s messages, %s octets; asked for %d, %d" % (
                res.get("iters"), res.get("bytes"), iters, iters * size))
        if res.get("crc") is not f[3] or res.get("markers") != f[4]:
            fails.append("negotiated CRC %s Markers %s; asked for CRC %s Markers %s" % (
                res.get("crc"), res.get("markers"), f[3], f[4]))
    # the server's line for this connection: "iwarp OP SIZE B, QP 1/1: N messages, STATUS"
    m = wait_text(out, r"iwarp %s %d B, QP 1/1: (\d+) messages, (.*)$" % (op, size), None,
                  10 if rc == 0 else 2, start)
    if m is None:
        fails.append("the server reported no result for this run")
        r["server"] = None
    else:
        r["server"] = "%s messages, %s" % (m.group(1), m.group(2).strip())
        if int(m.group(1)) != iters or m.group(2).strip() != "data verified":
            fails.append("the server reports %s (asked for %d messages)" % (r["server"], iters))
    if fails:
        r["detail"] = ("client stdout: %s\nclient stderr: %s\nserver output (last lines):\n%s"
                       % (stdout.strip()[-2000:], stderr[-2000:], tail(out, 8)))
    return r


def print_perf(i, r, setting):
    c = r["ctr"]
    f = fr_by_name(r["framing"])
    head = "  [%d] seed %d %s (%s): %s %d B x %d, %s" % (
        i, r["seed"], setting[0], " ".join(setting[2]), r["op"], r["size"], r["iters"], f[1])
    if r["mbps"] is not None:
        body = "%.1f Mbit/s (%.3f s)" % (r["mbps"], r["seconds"])
    else:
        body = "no result (%.1f s)" % r["wall"]
    body += "; server: %s" % (r.get("server") or "-")
    body += "; forwarder: lost %d/%d dup %d/%d reordered %d/%d (a2b/b2a)" % (
        c["a2b"]["lost"], c["b2a"]["lost"], c["a2b"]["duplicated"], c["b2a"]["duplicated"],
        c["a2b"]["reordered"], c["b2a"]["reordered"])
    print(head + ": " + body + ("" if r["fails"] else " - ok"), flush=True)
    for fl in r["fails"]:
        print("      FAIL: " + fl)
    if r["fails"]:
        print("      client: " + r["argv"])
        print("      " + r["detail"].replace("\n", "\n      "), flush=True)


def run_live(net, srv, mode, seed, setting, op, fr):
    """One iwlive client run: every work request accounted for."""
    f = fr_by_name(fr)
    _, out, port = srv.live_server(fr)
    try:
        start = os.path.getsize(out)
    except OSError:
        start = 0
    argv = [srv.args.iwlive, "client", "-a", net.addr_a, "-p", str(port), "--op", op,
            "--size", str(LIVE_SIZE), "--seconds", str(mode.live_seconds)] + f[2]
    fails = []
    try:
        p = net.run("b", argv, timeout=mode.run_timeout)
        rc, stdout, stderr = p.returncode, p.stdout, p.stderr.strip()
    except subprocess.TimeoutExpired:
        rc, stdout, stderr = None, "", "timed out after %d s" % mode.run_timeout
    cli = None
    for line in stdout.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("event") == "end" and j.get("role") == "client":
            cli = j
    srv_end = None
    m = wait_text(out, r'^(\{"event":"end","role":"server".*\})$', None, 10, start)
    if m:
        try:
            srv_end = json.loads(m.group(1))
        except ValueError:
            pass
    if rc != 0 or cli is None:
        fails.append("iwlive client exit %s: %s %s" % (rc, stdout.strip()[-500:], stderr[-500:]))
    else:
        if not (cli["posted"] > 0 and cli["posted"] == cli["ok"] and cli["flushed"] == 0 and
                cli["err"] == 0 and cli["unfinished"] == 0 and cli["destroy_ok"]):
            fails.append("client work requests: %s" % json.dumps(cli))
        if op == "send":
            if srv_end is None:
                fails.append("the iwlive server reported no end for this connection")
            elif srv_end["ok"] != cli["ok"] or srv_end["err"] or srv_end["unfinished"]:
                fails.append("the server completed %s receives (err %s, unfinished %s) for "
                             "%s Sends" % (srv_end["ok"], srv_end["err"], srv_end["unfinished"],
                                           cli["ok"]))
    line = "  [live] seed %d %s: iwlive %s %d B, %s, %.1f s: " % (
        seed, setting[0], op, LIVE_SIZE, f[1], mode.live_seconds)
    if cli:
        line += "posted %d, completed ok %d, flushed %d, failed %d, unfinished %d" % (
            cli["posted"], cli["ok"], cli["flushed"], cli["err"], cli["unfinished"])
        if op == "send" and srv_end:
            line += "; server receives completed %d" % srv_end["ok"]
    print(line + ("" if fails else " - ok"), flush=True)
    for fl in fails:
        print("      FAIL: " + fl)
    if fails:
        print("      repeat: ip netns exec %s %s" % (net.ns_b, " ".join(argv)))
        print("      server output:\n" + tail(out, 6), flush=True)
    return fails


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def run_nfs(net, args, mode, seed, setting, fr, tag):
    """4 nfs-cp clients in B through both gateways: write, read back, sha256 everything."""
    f = fr_by_name(fr)
    print("  [nfs] seed %d %s: %d clients x %d MiB, gateways %s" % (
        seed, setting[0], NFS_CLIENTS, mode.nfs_mb, f[1]), flush=True)
    if args.keep:
        work = tempfile.mkdtemp(prefix="iwimp-matrix-nfs-%s-" % tag)
        print("      (kept: %s)" % work)
    else:
        work = os.path.join(net.workdir, "nfs-%s" % tag)
        os.makedirs(work, exist_ok=True)
    nfs = nfs_netns.NetnsNfs(net, args.iwnfsgw, os.path.join(work, "gw"), gw_opts=f[2])
    fails = []
    res = {"setting": setting[0], "framing": fr, "write": None, "read": None}
    size = mode.nfs_mb << 20
    try:
        t0 = time.monotonic()
        nfs.start()
        print("      rpcbind + ganesha + gateways up in %.1f s" % (time.monotonic() - t0))
        srcs, want = [], []
        for i in range(NFS_CLIENTS):
            p = os.path.join(work, "src%d.bin" % i)
            with open(p, "wb") as fh:
                fh.write(random.Random("%d-%s-%d" % (seed, tag, i)).randbytes(size))
            srcs.append(p)
            want.append(sha256_file(p))
        names = ["mx-%s-%d.bin" % (tag, i) for i in range(NFS_CLIENTS)]
        before = net.stats()

        def phase(kind):
            procs = []
            t0 = time.monotonic()
            for i in range(NFS_CLIENTS):
                if kind == "write":
                    argv = ["nfs-cp", srcs[i], nfs.url(names[i])]
                else:
                    argv = ["nfs-cp", nfs.url(names[i]), os.path.join(work, "back%d.bin" % i)]
                log = open(os.path.join(work, "%s%d.log" % (kind, i)), "w")
                procs.append((net.popen("b", argv, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL), log))
            ok = True
            deadline = time.monotonic() + mode.nfs_timeout
            for i, (p, log) in enumerate(procs):
                try:
                    rc = p.wait(max(1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    rc = "timeout after %d s" % mode.nfs_timeout
                log.close()
                if rc != 0:
                    ok = False
                    fails.append("client %d: nfs-cp %s failed (%s): %s" % (
                        i, kind, rc, tail(os.path.join(work, "%s%d.log" % (kind, i)), 3).strip()))
            secs = time.monotonic() - t0
            mibs = NFS_CLIENTS * mode.nfs_mb / secs
            print("      %s: %d x %d MiB in %.2f s, %.1f MiB/s aggregate%s" % (
                kind, NFS_CLIENTS, mode.nfs_mb, secs, mibs, "" if ok else " - FAILED"),
                flush=True)
            return mibs if ok else None

        res["write"] = phase("write")
        for i in range(NFS_CLIENTS):
            stored = os.path.join(nfs.export, names[i])
            got = sha256_file(stored) if os.path.exists(stored) else "missing"
            if got != want[i]:
                fails.append("client %d: ganesha stored sha256 %s, the source is %s" % (
                    i, got, want[i]))
        if res["write"] is None and not any(
                os.path.exists(os.path.join(nfs.export, n)) for n in names):
            print("      read: skipped, no write went through", flush=True)
            raise RuntimeError("no NFS write went through the gateways")
        res["read"] = phase("read")
        for i in range(NFS_CLIENTS):
            back = os.path.join(work, "back%d.bin" % i)
            got = sha256_file(back) if os.path.exists(back) else "missing"
            if got != want[i]:
                fails.append("client %d: read back sha256 %s, the source is %s" % (
                    i, got, want[i]))
        errs = nfs.gateway_errors()
        if errs:
            fails.append("calls failed in the gateways:\n        " + "\n        ".join(errs[:10]))
        c = ctr_delta(before, net.stats())
        print("      sha256: %d sources = ganesha's files = read back: %s; forwarder: lost %d "
              "dup %d reordered %d" % (NFS_CLIENTS, "yes" if not any(
                  "sha256" in x for x in fails) else "NO", tot(c, "lost"), tot(c, "duplicated"),
                  tot(c, "reordered")), flush=True)
    except Exception as e:  # a broken set-up is this case's failure
        fails.append("%s: %s" % (type(e).__name__, e))
    finally:
        if fails:
            for fl in fails:
                print("      FAIL: " + fl)
            print("      " + nfs.log_tails(12).replace("\n", "\n      "), flush=True)
        nfs.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    res["fails"] = fails
    print("  [nfs] %s: %s" % (setting[0], "ok" if not fails else "FAILED"), flush=True)
    return res


def conservation(ctr):
    bad = []
    for d in ("a2b", "b2a"):
        c = ctr[d]
        lhs = c["in_pkts"] + c["duplicated"]
        rhs = (c["out_pkts"] + c["lost"] + c.get("cut", 0) + c["queue_drops"] +
               c["limit_drops"] + c["write_errors"] + c["queued"])
        if lhs != rhs:
            bad.append("%s: in + dup = %d but out + drops + queued = %d" % (d, lhs, rhs))
    return bad


def setting_checks(setting, ctr, runs):
    """The impairment was real: what the forwarder counted over the whole setting."""
    name, _, imp, _ = setting
    opt = dict(zip(imp[0::2], imp[1::2]))
    checks = []
    if "--loss" in opt:
        checks.append((tot(ctr, "lost") > 0, "the forwarder lost %d packets" % tot(ctr, "lost")))
    if "--reorder" in opt:
        checks.append((tot(ctr, "reordered") > 0,
                       "the forwarder reordered %d packets" % tot(ctr, "reordered")))
    if "--dup" in opt:
        checks.append((tot(ctr, "duplicated") > 0,
                       "the forwarder duplicated %d packets" % tot(ctr, "duplicated")))
    if "--delay" in opt:
        checks.append((tot(ctr, "delayed") > 0,
                       "the forwarder delayed %d packets" % tot(ctr, "delayed")))
    if "--mtu" in opt:
        ml = max(ctr["a2b"]["max_len"], ctr["b2a"]["max_len"])
        checks.append((ml == int(opt["--mtu"]),
                       "largest packet %d octets (MTU %s)" % (ml, opt["--mtu"])))
    if "--rate" in opt:
        rate = float(opt["--rate"].rstrip("M"))
        fast = [r for r in runs if r["mbps"] is not None and r["iters"] * r["size"] >= 1000000
                and r["mbps"] > rate * 1.03]
        checks.append((not fast, "no run of 1 MB or more faster than the %g Mbit/s bottleneck%s"
                       % (rate, "" if not fast else ": " + ", ".join(
                           "%s %d B %.1f" % (r["op"], r["size"], r["mbps"]) for r in fast))))
    bal = conservation(ctr)
    checks.append((not bal, "the forwarder's counters balance" + (": " + "; ".join(bal)
                                                                   if bal else "")))
    return checks


def run_setting(si, setting, args, mode, seed, plan, tag, results):
    sname, label, imp, _ = setting
    perf_cases, live_cases, nfs_fr = plan
    print("== %s (%s): iwimpair %s --seed %d" % (sname, label, " ".join(imp), seed), flush=True)
    t0 = time.monotonic()
    fails = []
    runs = []
    net = netns.netns_up("srv", "cli", imp + ["--seed", str(seed)], iwimpair=args.iwimpair)
    print("  namespaces up in %.2f s" % (time.monotonic() - t0))
    nfs_res = None
    try:
        snmp0 = {s: net.snmp(s) for s in ("a", "b")}
        srv = Servers(net, args)
        for op, size, fr, rep in perf_cases:
            r = run_perf(net, srv, mode, seed, setting, op, size, fr, rep)
            results["perf"].append(r)
            runs.append(r)
            print_perf(len(results["perf"]), r, setting)
            for fl in r["fails"]:
                fails.append("seed %d %s %s %d B %s: %s\n    (again: impair_matrix.py%s --seed %d "
                             "--only %s --ops %s --sizes %d --framings %s)" % (
                                 seed, sname, op, size, fr, fl, " --full" if mode.full else "",
                                 seed, sname, op, size, fr))
        if args.iwlive:
            for op, fr in live_cases:
                for fl in run_live(net, srv, mode, seed, setting, op, fr):
                    fails.append("seed %d %s iwlive %s %s: %s" % (seed, sname, op, fr, fl))
        if nfs_fr is not None and not args.nfs_why:
            nfs_res = run_nfs(net, args, mode, seed, setting, nfs_fr, tag)
            results["nfs"].append(nfs_res)
            for fl in nfs_res["fails"]:
                fails.append("seed %d %s NFS (%s): %s" % (seed, sname, nfs_fr, fl))
        snmp1 = {s: net.snmp(s) for s in ("a", "b")}
        kdrops = {s: net.dev_drops(s) for s in ("a", "b")}
    finally:
        ctr = netns.netns_down(net)
    if ctr is None:
        fails.append("seed %d %s: the forwarder gave no counters: %s" % (seed, sname, net.log()))
    else:
        print("  forwarder (whole setting):")
        for d in ("a2b", "b2a"):
            print("    %s: %s" % (d, " ".join("%s=%d" % (k, ctr[d][k]) for k in COUNTERS)))
        rt = {s: snmp1[s].get("TcpRetransSegs", 0) - snmp0[s].get("TcpRetransSegs", 0)
              for s in ("a", "b")}
        print("    TCP retransmitted segments: A %d, B %d; kernel drops at the TUN devices: "
              "A %s, B %s" % (rt["a"], rt["b"], kdrops["a"], kdrops["b"]))
        for ok, what in setting_checks(setting, ctr, runs):
            print("    %s: %s" % ("ok" if ok else "FAIL", what))
            if not ok:
                fails.append("seed %d %s: %s" % (seed, sname, what))
    print("  %s: %d iwperf runs, %s in %.1f s" % (
        sname, len(runs), "all passed" if not fails else "%d FAILURES" % len(fails),
        time.monotonic() - t0), flush=True)
    return fails


def tables(results, settings, full):
    perf = [r for r in results["perf"] if r["mbps"] is not None and not r["fails"]]
    nfs = results["nfs"]
    out = []
    out.append("Throughput under impairment (iwperf --verify, Mbit/s of payload, median of the "
               "runs at 65537 octets or more over every framing; n runs; NFS: 4 nfs-cp clients "
               "at once through both gateways, MiB/s aggregate)")
    out.append("")
    out.append("| impairment | Write | Read | Send | NFS write | NFS read |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for sname, label, _, _ in settings:
        cells = []
        for op in OPS:
            v = [r["mbps"] for r in perf if r["setting"] == sname and r["op"] == op
                 and r["size"] >= 65537]
            cells.append("%.0f (%d)" % (statistics.median(v), len(v)) if v else "-")
        for k in ("write", "read"):
            v = [n[k] for n in nfs if n["setting"] == sname and n[k] is not None]
            cells.append("%.1f" % statistics.median(v) if v else "-")
        out.append("| %s | %s |" % (label, " | ".join(cells)))
    out.append("")
    out.append("Per case (Mbit/s, median where repeated):")
    out.append("")
    out.append("| impairment | op | size | framing | runs | Mbit/s |")
    out.append("|---|---|---:|---|---:|---:|")
    keys = []
    for r in results["perf"]:
        k = (r["setting"], r["op"], r["size"], r["framing"])
        if k not in keys:
            keys.append(k)
    label = {s[0]: s[1] for s in settings}
    for k in keys:
        allr = [r for r in results["perf"] if (r["setting"], r["op"], r["size"],
                                               r["framing"]) == k]
        v = [r["mbps"] for r in allr if r["mbps"] is not None and not r["fails"]]
        bad = len(allr) - len(v)
        out.append("| %s | %s | %d | %s | %d | %s |" % (
            label[k[0]], OP_LABEL[k[1]], k[2], fr_by_name(k[3])[1], len(allr),
            ("%.1f" % statistics.median(v) if v else "-") + (" (%d FAILED)" % bad if bad
                                                              else "")))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwperf", required=True)
    ap.add_argument("--iwimpair", required=True)
    ap.add_argument("--iwlive", help="test/impair/iwlive (every work request accounted)")
    ap.add_argument("--iwnfsgw", help="tools/iwnfsgw (the NFS part; without it, skipped)")
    ap.add_argument("--seed", type=int, default=random.randrange(1, 10**9))
    ap.add_argument("--full", action="store_true",
                    help="the whole product, larger transfers (tools/soak.sh --matrix)")
    ap.add_argument("--reps", type=int, default=None,
                    help="repetitions of every iwperf case in --full (default 2)")
    ap.add_argument("--per-op", type=int, default=2,
                    help="CI mode: iwperf runs per operation and setting (default 2)")
    ap.add_argument("--passes", type=int, default=1, help="passes, seed, seed+1, ...")
    ap.add_argument("--duration", type=float, default=0,
                    help="start passes until this many seconds have gone (at least one)")
    ap.add_argument("--only", help="comma-separated settings to run (e.g. loss5,dup1)")
    ap.add_argument("--ops", help="comma-separated operations (default write,read,send)")
    ap.add_argument("--framings", help="comma-separated framings (%s)" % ",".join(
        f[0] for f in FRAMINGS))
    ap.add_argument("--sizes", help="comma-separated message sizes")
    ap.add_argument("--nfs-mb", type=int, help="MiB per NFS client")
    ap.add_argument("--no-nfs", action="store_true", help="skip the NFS part")
    ap.add_argument("--keep", action="store_true",
                    help="keep the NFS scratch files and logs (a directory in $TMPDIR)")
    args = ap.parse_args()

    why = netns.skip_reason(args.iwimpair)
    if why:
        print("SKIP: " + why)
        return netns.SKIP
    if not os.access(args.iwperf, os.X_OK):
        print("SKIP: no iwperf at %s" % args.iwperf)
        return netns.SKIP
    mode = Mode(args.full)
    if args.nfs_mb:
        mode.nfs_mb = args.nfs_mb
    if args.no_nfs:
        args.nfs_why = "--no-nfs"
    elif not args.iwnfsgw or not os.access(args.iwnfsgw, os.X_OK):
        args.nfs_why = "no iwnfsgw given"
    else:
        args.nfs_why = nfs_netns.missing()
    if args.iwlive and not os.access(args.iwlive, os.X_OK):
        print("no iwlive at %s: the work-request accounting runs are skipped" % args.iwlive)
        args.iwlive = None
    settings = [s for s in SETTINGS if (args.full or s[3])]
    if args.only:
        want = args.only.split(",")
        settings = [s for s in SETTINGS if s[0] in want]
        if len(settings) != len(want):
            ap.error("--only: settings are %s" % ",".join(s[0] for s in SETTINGS))
    ops = args.ops.split(",") if args.ops else OPS
    framings = FRAMINGS if args.full else FRAMINGS[:CI_FRAMINGS]
    if args.framings:
        framings = [fr_by_name(x) for x in args.framings.split(",")]
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else SIZES
    reps = args.reps if args.reps is not None else (2 if args.full else 1)

    perf, live, nfs = plan_cases(mode, settings, ops, framings, sizes, reps, args.per_op)
    print("seed %d (repeat with --seed %d%s)" % (args.seed, args.seed,
                                                  " --full" if args.full else ""), flush=True)
    if args.nfs_why:
        print("SKIP (NFS part only): %s" % args.nfs_why)
    print_plan(mode, settings, perf, live, nfs, args.nfs_why)

    t_start = time.monotonic()
    results = {"perf": [], "nfs": []}
    bad = []
    npass = 0
    try:
        while True:
            seed = args.seed + npass
            npass += 1
            if args.passes > 1 or args.duration:
                print("#### pass %d, seed %d (%.0f s so far)" % (
                    npass, seed, time.monotonic() - t_start), flush=True)
            for si, s in enumerate(settings):
                tag = "p%d-%s" % (npass, s[0])
                try:
                    bad += run_setting(si, s, args, mode, seed,
                                       (perf[s[0]], live[s[0]], nfs.get(s[0])), tag, results)
                except netns.NetnsSkip:
                    raise
                except Exception as e:  # a broken set-up fails this setting, not the rest
                    print("  FAIL: %s: %s" % (type(e).__name__, e), flush=True)
                    bad.append("seed %d %s: %s: %s" % (seed, s[0], type(e).__name__, e))
            more_passes = npass < args.passes
            more_time = args.duration and time.monotonic() - t_start < args.duration
            if not (more_passes or more_time):
                break
    except netns.NetnsSkip as e:
        print("SKIP: %s" % e)
        return netns.SKIP
    finally:
        netns.netns_down_all()

    ours = netns.leftover()
    if ours:
        bad.append("namespaces of ours left behind: %s" % " ".join(ours))
    print()
    print(tables(results, settings, args.full))
    print()
    nperf = len(results["perf"])
    nbad = len([r for r in results["perf"] if r["fails"]])
    print("%d passes, %d iwperf runs (%d failed), %d NFS runs (%d failed), %.1f s, seed %d%s"
          % (npass, nperf, nbad, len(results["nfs"]),
             len([n for n in results["nfs"] if n["fails"]]), time.monotonic() - t_start,
             args.seed, " (passes used seeds %d..%d)" % (args.seed, args.seed + npass - 1)
             if npass > 1 else ""))
    if bad:
        print("FAILED:\n  " + "\n  ".join(bad))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
