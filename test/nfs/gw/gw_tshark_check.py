#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read a capture of the iWARP leg of iwnfsgw with tshark and check it.

tshark (with the iWARP MPA and RPC-over-RDMA heuristics on, the way
test/captures/README.md decodes the Linux NFS/RDMA captures) must see:

  * the MPA Request and Reply of every connection on the iWARP port;
  * FPDUs whose CRC32c it checks as good, and none bad;
  * RPC-over-RDMA (rpcordma) messages carrying NFS (calls and replies);
  * RDMA Read Requests (NFS WRITE data pulled from Read chunks) and RDMA
    Writes (NFS READ data pushed into Write chunks), unless --no-chunks;
  * no malformed packet and no expert error at the MPA, DDP or RDMAP layers.

Known dissector limits (test/captures/README.md): tshark does not join
Write-chunk data back into an NFS READ reply, so it reports such replies as
"Malformed" at the NFS layer; that and other complaints above RDMAP are
counted and printed, not failed.  It also warns on every MPA revision 2
frame ("Rev field is NOT set to one"): a warning, not an error.

usage: gw_tshark_check.py PCAP [--port 20049] [--tshark tshark] [--no-chunks]
Exit status: 0 all checks passed, 1 a check failed, 77 tshark missing.
"""

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

IWARP_LAYERS = ("iwarp_mpa", "iwarp_ddp_rdmap")
PI_ERROR = 0x00800000
OPCODES = {0: "RDMA Write", 1: "RDMA Read Request", 2: "RDMA Read Response", 3: "Send",
           4: "Send with Invalidate", 5: "Send with SE", 6: "Send with SE and Invalidate",
           7: "Terminate"}
RPCORDMA_TYPES = {0: "RDMA_MSG", 1: "RDMA_NOMSG", 2: "RDMA_MSGP", 3: "RDMA_DONE",
                  4: "RDMA_ERROR"}


def shows(elem, name):
    return [f.get("show") for f in elem.iter("field") if f.get("name") == name]


def show(elem, name):
    v = shows(elem, name)
    return v[0] if v else None


def decode(tshark, pcap, port):
    opts = ["-n", "-o", "tcp.try_heuristic_first:TRUE", "-o",
            "tcp.reassemble_out_of_order:TRUE", "--enable-heuristic", "iwarp_mpa_tcp",
            "--enable-heuristic", "rpcrdma_iwarp", "-r", pcap, "-Y", "tcp.port == %d" % port,
            "-T", "pdml"]
    st = {"mpa_req": 0, "mpa_rep": 0, "fpdus": 0, "crc_good": 0, "crc_bad": [],
          "crc_none": 0, "ops": collections.Counter(), "rpcordma": collections.Counter(),
          "nfs": 0, "nfs_procs": collections.Counter(), "bad": [],
          "upper_malformed": collections.Counter(), "frames": 0, "reads_chunks": 0,
          "writes_chunks": 0, "reply_chunks": 0}
    with tempfile.TemporaryFile() as out:
        res = subprocess.run([tshark] + opts, stdout=out, stderr=subprocess.PIPE, timeout=900)
        if res.returncode != 0:
            raise RuntimeError("tshark failed: %s" % res.stderr.decode()[-300:])
        out.seek(0)
        for _, pkt in ET.iterparse(out, events=("end",)):
            if pkt.tag != "packet":
                continue
            packet(pkt, st)
            pkt.clear()
    return st


def packet(pkt, st):
    st["frames"] += 1
    frame = show(pkt, "frame.number")
    protos = list(pkt.findall("proto"))
    names = [p.get("name") for p in protos]
    for i, p in enumerate(protos):
        name = p.get("name")
        if name == "_ws.malformed":
            layer = names[i - 1] if i else "?"
            if layer in IWARP_LAYERS:
                st["bad"].append("frame %s: malformed at %s" % (frame, layer))
            else:
                st["upper_malformed"][layer] += 1
            continue
        if name in IWARP_LAYERS:
            for f in p.iter("field"):
                if f.get("name") != "_ws.expert":
                    continue
                sev = show(f, "_ws.expert.severity")
                if sev is not None and int(sev) >= PI_ERROR:
                    st["bad"].append("frame %s: %s expert error: %s" % (
                        frame, name, show(f, "_ws.expert.message")))
        if name == "iwarp_mpa":
            fields = {f.get("name") for f in p.iter("field")}
            if "iwarp_mpa.req" in fields:
                st["mpa_req"] += 1
            elif "iwarp_mpa.rep" in fields:
                st["mpa_rep"] += 1
            elif "iwarp_mpa.fpdu" in fields:
                st["fpdus"] += 1
                texts = [f.get("showname") or "" for f in p.iter("field")
                         if f.get("name") == "iwarp_mpa.crc_check"]
                if not texts:
                    st["crc_none"] += 1
                elif all("Good CRC32" in t for t in texts):
                    st["crc_good"] += 1
                else:
                    st["crc_bad"].append(frame)
        if name == "iwarp_ddp_rdmap":
            for op in shows(p, "iwarp_rdma.opcode"):
                try:
                    st["ops"][OPCODES.get(int(op, 0), op)] += 1
                except ValueError:
                    pass
        if name == "rpcordma":
            for t in shows(p, "rpcordma.msg_type"):
                st["rpcordma"][RPCORDMA_TYPES.get(int(t), t)] += 1
            for k, fld in (("reads_chunks", "rpcordma.reads_count"),
                           ("writes_chunks", "rpcordma.writes_count"),
                           ("reply_chunks", "rpcordma.reply_count")):
                for v in shows(p, fld):
                    try:
                        st[k] += int(v) > 0
                    except ValueError:
                        pass
        if name == "nfs":
            st["nfs"] += 1
            for pr in shows(p, "nfs.procedure_v3") + shows(p, "nfs.opcode"):
                st["nfs_procs"][pr] += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pcap")
    ap.add_argument("--port", type=int, default=20049)
    ap.add_argument("--tshark", default=shutil.which("tshark"))
    ap.add_argument("--no-chunks", action="store_true",
                    help="do not require RDMA Read / RDMA Write traffic")
    a = ap.parse_args()
    if not a.tshark:
        print("SKIP: tshark not installed")
        return 77
    st = decode(a.tshark, a.pcap, a.port)
    print("tshark read %d frames on port %d" % (st["frames"], a.port))
    print("  MPA Request %d, Reply %d; FPDUs %d: CRC good %d, bad %d, not checked %d" % (
        st["mpa_req"], st["mpa_rep"], st["fpdus"], st["crc_good"], len(st["crc_bad"]),
        st["crc_none"]))
    print("  RDMAP messages (segments): " + ", ".join(
        "%s %d" % kv for kv in sorted(st["ops"].items())))
    print("  RPC-over-RDMA: " + ", ".join("%s %d" % kv for kv in sorted(st["rpcordma"].items()))
          + "; with Read list %d, Write list %d, Reply chunk %d" % (
              st["reads_chunks"], st["writes_chunks"], st["reply_chunks"]))
    print("  NFS in %d frames" % st["nfs"])
    if st["upper_malformed"]:
        print("  noted (dissector limits above RDMAP): malformed at " + ", ".join(
            "%s %d" % kv for kv in sorted(st["upper_malformed"].items())))
    bad = list(st["bad"])
    if st["mpa_req"] < 1 or st["mpa_rep"] < 1:
        bad.append("no MPA Request/Reply seen (capture started too late?)")
    if st["fpdus"] == 0:
        bad.append("no FPDU decoded")
    if st["crc_bad"]:
        bad.append("bad CRC32 in frames %s" % ",".join(st["crc_bad"][:10]))
    if st["crc_good"] == 0:
        bad.append("no FPDU with a good CRC32")
    if sum(st["rpcordma"].values()) == 0:
        bad.append("no RPC-over-RDMA message decoded")
    if st["nfs"] == 0:
        bad.append("no NFS decoded inside RPC-over-RDMA")
    if st["ops"].get("Terminate"):
        bad.append("a Terminate was sent")
    if not a.no_chunks:
        if not st["ops"].get("RDMA Read Request"):
            bad.append("no RDMA Read Request (WRITE data should come by Read chunk)")
        if not st["ops"].get("RDMA Write"):
            bad.append("no RDMA Write (READ data should go by Write chunk)")
    for b in bad[:20]:
        print("FAIL " + b)
    if not bad:
        print("ok   iWARP leg decoded by tshark as RPC-over-RDMA carrying NFS, "
              "no malformed MPA/DDP/RDMAP, every checked CRC good")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
