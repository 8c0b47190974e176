#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwimpair smoke test: the impairments are real at the IP level.

Two namespaces joined by tools/iwimpair (test/helpers/netns.py), an iwperf
server in A (10.77.0.1), the client in B; one fresh pair per case, all with
the same seed:

  clean        no impairment: RDMA Write, 20 x 1000000 octets, --verify,
               completes; the forwarder lost and reordered nothing;
  loss         --loss 2: the same transfer, every octet right, the forwarder
               dropped packets and B's TCP retransmitted (TcpRetransSegs);
  reorder-dup  --reorder 25 --dup 1: the same; A's TCP queued segments out
               of order (TcpExtTCPOFOQueue) and duplicates came back as
               DSACKs (TcpExtTCPDSACKOldSent/TCPDSACKRecv);
  delay        --delay 10 each way: Send ping-pong of 64 octets, 50 round
               trips, median at least 20 ms;
  rate         --rate 20M: 5 x 1000000 octets at 10 to 20.5 Mbit/s of
               payload (the rate counts IP octets; TCP, MPA and DDP take
               their share);
  mtu-N        --mtu 1500 and --mtu 9000: the transfer completes with
               --verify and the largest packet is exactly the MTU (TCP's
               MSS followed it: 1460 at 1500).

For each case the seed, iwperf's result, the forwarder's counters and the
TCP counters are printed.  Everything is taken down even on failure or
SIGTERM.  Exit status: 0 passed, 1 a failure, 77 skipped (not root, no
ip(8), no /dev/net/tun, no namespaces).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
import netns  # noqa: E402

PORT = 7175
RUN_TIMEOUT = 40
BULK = ["--op", "write", "--size", "1000000", "--iters", "20", "--verify"]

COUNTERS = ("in_pkts", "out_pkts", "lost", "queue_drops", "limit_drops", "write_errors",
            "duplicated", "reordered", "delayed", "queued", "max_len", "queue_max")
TCP_COUNTERS = ("TcpOutSegs", "TcpRetransSegs", "TcpExtTCPOFOQueue", "TcpExtTCPDSACKOldSent",
                "TcpExtTCPDSACKRecv", "TcpExtTCPLossProbes", "TcpExtTCPSACKReorder")


def start_server(net, iwperf):
    out = os.path.join(net.workdir, "server.out")
    with open(out, "w") as f:
        p = net.popen("a", [iwperf, "-s", "-a", net.addr_a, "-p", str(PORT)], stdout=f,
                      stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and p.poll() is None:
        with open(out, errors="replace") as r:
            if "listening on" in r.read():
                return None
        time.sleep(0.02)
    with open(out, errors="replace") as r:
        return "iwperf server did not start: " + r.read().strip()


def run_client(net, iwperf, args):
    """(exit status, total JSON result or None, stderr, seconds)."""
    t0 = time.monotonic()
    try:
        p = net.run("b", [iwperf, "-c", net.addr_a, "-p", str(PORT), "--json"] + args,
                    timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, None, "timed out after %d s" % RUN_TIMEOUT, RUN_TIMEOUT
    res = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("qp_index") is None:
                res = r
    return p.returncode, res, p.stderr.strip(), time.monotonic() - t0


def total(ctr, key):
    return ctr["a2b"][key] + ctr["b2a"][key]


def show_counters(ctr):
    for d in ("a2b", "b2a"):
        c = ctr[d]
        print("    %s: %s" % (d, " ".join("%s=%d" % (k, c[k]) for k in COUNTERS)))


def conservation(ctr):
    bad = []
    for d in ("a2b", "b2a"):
        c = ctr[d]
        lhs = c["in_pkts"] + c["duplicated"]
        rhs = (c["out_pkts"] + c["lost"] + c["queue_drops"] + c["limit_drops"] +
               c["write_errors"] + c["queued"])
        if lhs != rhs:
            bad.append("%s: in + dup = %d but out + drops + queued = %d" % (d, lhs, rhs))
    return bad


def run_case(name, impair, client_args, seed, args):
    """Returns (failures, data) where data has the result, counters and TCP deltas."""
    print("== %s: iwimpair %s --seed %d" % (name, " ".join(impair), seed), flush=True)
    t0 = time.monotonic()
    net = netns.netns_up("srv", "cli", impair + ["--seed", str(seed)], iwimpair=args.iwimpair)
    fails = []
    try:
        before = {s: net.snmp(s) for s in ("a", "b")}
        err = start_server(net, args.iwperf)
        if err:
            return [err], {}
        rc, res, stderr, secs = run_client(net, args.iwperf, client_args)
        after = {s: net.snmp(s) for s in ("a", "b")}
        kdrops = {s: net.dev_drops(s) for s in ("a", "b")}
    finally:
        ctr = netns.netns_down(net)
    tcp = {s: {k: after[s].get(k, 0) - before[s].get(k, 0) for k in TCP_COUNTERS}
           for s in ("a", "b")}
    if rc != 0 or res is None:
        fails.append("iwperf client: exit %s, %s" % (rc, stderr or "no result line"))
    elif "--verify" in client_args and res.get("verify") is not True:
        fails.append("iwperf result without verify: %s" % res)
    if ctr is None:
        fails.append("iwperf counters missing: " + net.log())
        return fails, {}
    if res:
        mbps = res["gbytes_per_s"] * 8000.0
        line = "    iwperf: exit %d, %d x %d octets in %.3f s, %.1f Mbit/s" % (
            rc, res["iters"], res["size"], res["seconds"], mbps)
        if res.get("lat_us_p50") is not None:
            line += ", RTT p50 %.0f us p99 %.0f us" % (res["lat_us_p50"], res["lat_us_p99"])
        print(line + (", verified" if res.get("verify") else ""))
    show_counters(ctr)
    print("    kernel drops at the TUN devices (forwarder too slow): A %s, B %s"
          % (kdrops["a"], kdrops["b"]))
    for s in ("a", "b"):
        print("    TCP %s: %s" % (s.upper(), " ".join("%s=%d" % (k, v)
                                                    for k, v in tcp[s].items())))
    print("    case time %.2f s" % (time.monotonic() - t0), flush=True)
    fails += conservation(ctr)
    return fails, {"res": res, "ctr": ctr, "tcp": tcp, "kdrops": kdrops}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwperf", required=True)
    ap.add_argument("--iwimpair", required=True)
    ap.add_argument("--seed", type=int, default=random.randrange(1, 10**9))
    args = ap.parse_args()

    why = netns.skip_reason(args.iwimpair)
    if why:
        print("SKIP: " + why)
        return netns.SKIP
    print("seed %d (repeat with --seed %d)" % (args.seed, args.seed), flush=True)
    t_start = time.monotonic()
    bad = []
    clean_mbps = clean_retrans = None

    def check(name, cond, what):
        print("    %s: %s" % ("ok" if cond else "FAIL", what), flush=True)
        if not cond:
            bad.append("%s: %s" % (name, what))

    def case(name, impair, client_args):
        try:
            fails, d = run_case(name, impair, client_args, args.seed, args)
        except netns.NetnsSkip:
            raise
        except Exception as e:  # a broken set-up is this case's failure, not the end
            fails, d = ["%s: %s" % (type(e).__name__, e)], {}
        for f in fails:
            check(name, False, f)
        return d if not fails else None

    try:
        d = case("clean", [], BULK)
        if d:
            c = d["ctr"]
            check("clean", total(c, "lost") + total(c, "queue_drops") +
                  total(c, "limit_drops") + total(c, "reordered") + total(c, "duplicated") == 0,
                  "nothing lost, dropped, duplicated or reordered")
            kd = d["kdrops"]
            check("clean", kd["a"] == 0 and kd["b"] == 0,
                  "the kernel dropped nothing at the TUN devices (the forwarder kept up)")
            clean_mbps = d["res"]["gbytes_per_s"] * 8000.0
            clean_retrans = d["tcp"]["b"]["TcpRetransSegs"]

        d = case("loss", ["--loss", "2"], BULK)
        if d:
            check("loss", total(d["ctr"], "lost") > 0,
                  "the forwarder dropped %d packets" % total(d["ctr"], "lost"))
            r = d["tcp"]["b"]["TcpRetransSegs"]
            check("loss", r > 0, "B's TCP retransmitted %d segments (%d lost on the way to A;"
                  " %s without loss)" % (r, d["ctr"]["b2a"]["lost"], clean_retrans))

        d = case("reorder-dup", ["--reorder", "25", "--dup", "1"], BULK)
        if d:
            c, t = d["ctr"], d["tcp"]
            check("reorder-dup", total(c, "reordered") > 0,
                  "the forwarder reordered %d packets" % total(c, "reordered"))
            check("reorder-dup", total(c, "duplicated") > 0,
                  "the forwarder duplicated %d packets" % total(c, "duplicated"))
            ofo = t["a"]["TcpExtTCPOFOQueue"] + t["b"]["TcpExtTCPOFOQueue"]
            dsack = sum(t[s]["TcpExtTCPDSACKOldSent"] + t[s]["TcpExtTCPDSACKRecv"]
                        for s in ("a", "b"))
            check("reorder-dup", ofo > 0, "TCP queued %d segments out of order" % ofo)
            check("reorder-dup", dsack > 0, "TCP sent or got %d DSACKs" % dsack)

        d = case("delay", ["--delay", "10"],
                 ["--pingpong", "--op", "send", "--size", "64", "--iters", "50"])
        if d:
            p50 = d["res"]["lat_us_p50"]
            check("delay", 20000 <= p50 < 100000,
                  "round trip p50 %.0f us (10 ms each way: at least 20000)" % p50)

        d = case("rate", ["--rate", "20M"],
                 ["--op", "write", "--size", "1000000", "--iters", "5", "--verify"])
        if d:
            mbps = d["res"]["gbytes_per_s"] * 8000.0
            check("rate", 10.0 <= mbps <= 20.5,
                  "payload at %.1f Mbit/s under a 20 Mbit/s bottleneck (10 to 20.5)" % mbps)
            c = d["ctr"]
            check("rate", c["b2a"]["queue_max"] > 0,
                  "packets queued at the bottleneck (at most %d)" % c["b2a"]["queue_max"])
            if clean_mbps:
                print("    (unimpaired: %.1f Mbit/s)" % clean_mbps)

        for mtu in (1500, 9000):
            d = case("mtu-%d" % mtu, ["--mtu", str(mtu)], BULK[:-2] + ["5", "--verify"])
            if d:
                ml = max(d["ctr"]["a2b"]["max_len"], d["ctr"]["b2a"]["max_len"])
                check("mtu-%d" % mtu, ml == mtu,
                      "largest packet %d octets (MTU %d, TCP MSS %d)" % (ml, mtu, mtu - 40))
    except netns.NetnsSkip as e:
        print("SKIP: %s" % e)
        return netns.SKIP
    finally:
        netns.netns_down_all()

    ours = netns.leftover()
    check("cleanup", not ours, "no namespace of ours left (%s)" % (" ".join(ours) or "none"))
    print("total %.1f s, seed %d" % (time.monotonic() - t_start, args.seed))
    if bad:
        print("FAILED:\n  " + "\n  ".join(bad))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
