#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwdump against every capture in test/captures/, checked against tshark.

The captures are Linux's own iWARP traffic (soft-iWARP: rping, NFSv3 and
NFSv4.0 over RDMA; see test/captures/README.md).  For each file:

  * `iwdump --json --check` exits 0: every octet of every iWARP connection
    decoded (no gap, no undecoded octet, no CRC or Marker error), and the -V,
    --stats and default views run too;
  * the MPA Requests and Replies are those tshark finds (revision, M, C, R,
    PD length), in the same frames;
  * the RDMAP messages are the ones tshark reports, counted by their last DDP
    segment (L=1): per direction, every untagged message with its opcode,
    queue number and MSN, and the number of tagged messages per opcode;
  * the RPC-over-RDMA headers are the ones tshark decodes (xid, procedure),
    per direction.
tshark 4.0 reads these captures completely (no Markers, CRC off or on, one
connection per handshake), so the counts must be equal, not merely included.
Exit status: 0 all passed, 1 a failure, 77 tshark missing.
"""

import argparse
import collections
import glob
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
TSHARK_OPTS = ["-n", "--enable-heuristic", "iwarp_mpa_tcp", "--enable-heuristic",
               "rpcrdma_iwarp"]
FIELDS = ["frame.number", "tcp.srcport", "tcp.dstport", "iwarp_mpa.key.req", "iwarp_mpa.key.rep",
          "iwarp_mpa.marker_flag", "iwarp_mpa.crc_flag", "iwarp_mpa.rej_flag", "iwarp_mpa.rev",
          "iwarp_mpa.pdlength", "iwarp_ddp.tagged_flag", "iwarp_ddp.last_flag",
          "iwarp_rdma.opcode", "iwarp_ddp.qn", "iwarp_ddp.msn", "rpcordma.xid",
          "rpcordma.msg_type"]
RPCRDMA_PROC = {0: "RDMA_MSG", 1: "RDMA_NOMSG", 2: "RDMA_MSGP", 3: "RDMA_DONE", 4: "RDMA_ERROR"}


def num(s):
    return int(s, 0)


def flag(s):
    return s in ("1", "True", "true")


def tshark_view(tshark, pcap):
    cmd = [tshark] + TSHARK_OPTS + ["-r", pcap, "-T", "fields", "-E", "occurrence=a",
                                    "-E", "aggregator=|", "-E", "header=n"]
    for f in FIELDS:
        cmd += ["-e", f]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise RuntimeError("tshark failed: %s" % res.stderr.strip())
    mpa, msgs, rpc = [], collections.Counter(), collections.Counter()
    for line in res.stdout.splitlines():
        v = dict(zip(FIELDS, line.split("\t")))
        if not v.get("tcp.srcport"):
            continue
        d = (num(v["tcp.srcport"]), num(v["tcp.dstport"]))
        frame = num(v["frame.number"])
        if v["iwarp_mpa.key.req"] or v["iwarp_mpa.key.rep"]:
            mpa.append((frame, d, "request" if v["iwarp_mpa.key.req"] else "reply",
                        num(v["iwarp_mpa.rev"]), flag(v["iwarp_mpa.marker_flag"]),
                        flag(v["iwarp_mpa.crc_flag"]), flag(v["iwarp_mpa.rej_flag"]),
                        num(v["iwarp_mpa.pdlength"])))
        if v["iwarp_ddp.last_flag"]:
            # several FPDUs of a packet: the fields line up occurrence by occurrence
            lasts = v["iwarp_ddp.last_flag"].split("|")
            ops = v["iwarp_rdma.opcode"].split("|")
            tagged = v["iwarp_ddp.tagged_flag"].split("|")
            qns = iter(v["iwarp_ddp.qn"].split("|")) if v["iwarp_ddp.qn"] else iter(())
            msns = iter(v["iwarp_ddp.msn"].split("|")) if v["iwarp_ddp.msn"] else iter(())
            for last, op, t in zip(lasts, ops, tagged):
                qn = msn = None
                if not flag(t):
                    qn, msn = num(next(qns)), num(next(msns))
                if flag(last):
                    msgs[(d, num(op), qn, msn)] += 1
        if v["rpcordma.xid"]:
            for xid, mt in zip(v["rpcordma.xid"].split("|"), v["rpcordma.msg_type"].split("|")):
                rpc[(d, num(xid), RPCRDMA_PROC.get(num(mt), mt))] += 1
    return mpa, msgs, rpc


def iwdump_view(iwdump, pcap, bad):
    res = subprocess.run([iwdump, "--json", "--check", "-r", pcap], capture_output=True,
                         text=True, timeout=300)
    if res.returncode != 0:
        bad.append("iwdump --json --check exit %d: %s" % (res.returncode,
                                                          res.stderr.strip()[-300:]))
    mpa, msgs, rpc = [], collections.Counter(), collections.Counter()
    for line in res.stdout.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            bad.append("not JSON: %r" % line[:120])
            continue
        d = (o.get("sport"), o.get("dport"))
        t = o.get("type")
        if t == "mpa":
            mpa.append((o["frame"], d, o["mpa"], o["rev"], o["m"], o["c"], o["r"], o["pd_len"]))
        elif t == "rdmap":
            tagged = "qn" not in o
            msgs[(d, o["opcode"], None if tagged else o["qn"],
                  None if tagged else o["msn"])] += 1
            r = o.get("rpcrdma")
            if r:
                rpc[(d, int(r["xid"], 16), r["proc"])] += 1
        elif t in ("gap", "undecoded"):
            bad.append("iwdump reports %s: %s" % (t, line[:200]))
    return mpa, msgs, rpc


def diff(name, want, got, bad):
    if want == got:
        return
    miss = want - got
    extra = got - want
    bad.append("%s differ: tshark only %s; iwdump only %s" % (
        name, sorted(miss.items())[:4], sorted(extra.items())[:4]))


def check(tshark, iwdump, pcap):
    bad = []
    t_mpa, t_msgs, t_rpc = tshark_view(tshark, pcap)
    i_mpa, i_msgs, i_rpc = iwdump_view(iwdump, pcap, bad)
    if sorted(t_mpa) != sorted(i_mpa):
        bad.append("MPA frames differ: tshark %s, iwdump %s" % (t_mpa, i_mpa))
    diff("RDMAP messages", t_msgs, i_msgs, bad)
    diff("RPC-over-RDMA headers", t_rpc, i_rpc, bad)
    if not t_msgs:
        bad.append("tshark found no RDMAP message: the comparison would prove nothing")
    for view in (["-V"], ["--stats"], []):
        res = subprocess.run([iwdump] + view + ["-r", pcap], capture_output=True, text=True,
                             timeout=300)
        if res.returncode != 0 or not res.stdout:
            bad.append("iwdump %s: exit %d, %d octets of output" % (
                " ".join(view) or "(default view)", res.returncode, len(res.stdout)))
    summary = "%d MPA frames, %d RDMAP messages, %d RPC-over-RDMA headers" % (
        len(i_mpa), sum(i_msgs.values()), sum(i_rpc.values()))
    return bad, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwdump", required=True)
    ap.add_argument("--captures", required=True, help="the test/captures directory")
    args = ap.parse_args()
    tshark = shutil.which("tshark")
    if not tshark:
        print("SKIP: tshark not installed")
        return SKIP
    files = sorted(glob.glob(os.path.join(args.captures, "*.pcap")) +
                   glob.glob(os.path.join(args.captures, "*.pcapng")))
    if not files:
        print("FAIL: no capture in %s" % args.captures)
        return 1
    nfail = 0
    for f in files:
        try:
            bad, summary = check(tshark, args.iwdump, f)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            bad, summary = [str(e)], ""
        nfail += bool(bad)
        print("%-4s %s: %s" % ("ok" if not bad else "FAIL", os.path.basename(f), summary))
        for b in bad:
            print("     - %s" % b)
    print("%d of %d captures passed" % (len(files) - nfail, len(files)))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
