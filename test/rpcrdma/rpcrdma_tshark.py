#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Our RPC-over-RDMA decoder against Wireshark's, on real Linux NFS/RDMA traffic.

For each capture in the --captures folder (nfsrdma-v3.pcap, nfsrdma-v4.0.pcap:
the Linux kernel NFS client and server over siw; the meson test passes
test/captures, see its README.md) this script

  1. runs `tshark -n --enable-heuristic iwarp_mpa_tcp --enable-heuristic
     rpcrdma_iwarp -o tcp.reassemble_out_of_order:TRUE -r FILE -T json -x`
     and reads the JSON keeping every layer in order (a frame may carry
     several FPDUs, so the layers are walked as a sequence, not a dict);
  2. for every `rpcordma` layer (one RPC-over-RDMA message that tshark
     recognised), takes the RDMAP Send payload from the raw octets of the
     MPA FPDU it came in: FPDU[2 + 18 : 2 + ULPDU_Length] (2-octet MPA
     length, 18-octet untagged DDP/RDMAP header; PAD and CRC after it), and
     collects tshark's rpcordma.* fields in order (xid, version, credits,
     procedure, Read list entries with position / handle / length / offset,
     Write chunks with their segment counts, the Reply chunk, RDMA_MSGP
     align/threshold, RDMA_ERROR code and versions) plus, when the `rpc`
     layer follows directly, the RPC XID, message type, program, version,
     procedure and reply state;
  3. feeds all payloads, one hex line each, to rpcrdma_hexdecode (our
     rpcrdma_hdr_decode + rpcrdma_rpc_parse) and asserts field-by-field
     equality for EVERY message.

Fails if a capture yields no message.  Exit status: 0 pass, 1 fail,
77 tshark or the captures missing.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
CAPTURES = ["nfsrdma-v3.pcap", "nfsrdma-v4.0.pcap"]
MPA_HDR = 2
DDP_UNTAGGED_HDR = 18
SEND_OPCODES = {3, 4, 5, 6}  # Send, Send with Invalidate, Send with SE, Send with SE and Invalidate
RDMA_MSG, RDMA_NOMSG, RDMA_MSGP, RDMA_DONE, RDMA_ERROR = range(5)


def pairs(obj):
    """Layers/fields as an ordered list of (key, value) even with duplicate keys."""
    return obj if isinstance(obj, list) and (not obj or isinstance(obj[0], tuple)) else []


def leaf_fields(obj, prefix, out):
    """Every leaf field named prefix* under obj, in tree order, as (name, int value)."""
    for k, v in pairs(obj):
        if k.endswith("_raw"):
            continue
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            leaf_fields(v, prefix, out)
        elif k.startswith(prefix) and isinstance(v, str):
            try:
                out.append((k, int(v, 0)))
            except ValueError:
                pass
    return out


def first(obj, name):
    for k, v in leaf_fields(obj, name, []):
        if k == name:
            return v
    return None


def tshark_messages(path):
    cmd = ["tshark", "-n", "--enable-heuristic", "iwarp_mpa_tcp", "--enable-heuristic",
           "rpcrdma_iwarp", "-o", "tcp.reassemble_out_of_order:TRUE", "-r", path, "-T", "json",
           "-x"]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if res.returncode != 0:
        raise SystemExit("tshark failed on %s: %s" % (path, res.stderr.decode(errors="replace")))
    packets = json.loads(res.stdout.decode(), object_pairs_hook=lambda p: p)
    msgs = []
    problems = []
    for pkt in packets:
        layers = dict(dict(pkt)["_source"])["layers"]
        frame = first(dict(layers).get("frame", []), "frame.number")
        fpdu = None  # raw octets of the current FPDU
        ddp = None  # (tagged, last, opcode, mo) of the current DDP segment
        cur = None  # the message being filled (rpc layer may follow)
        for name, val in layers:
            if name == "iwarp_mpa_raw":
                fpdu = bytes.fromhex(val[0])
                ddp = cur = None
            elif name == "iwarp_ddp_rdmap":
                ddp = (first(val, "iwarp_ddp.tagged_flag"), first(val, "iwarp_ddp.last_flag"),
                       first(val, "iwarp_rdma.opcode"), first(val, "iwarp_ddp.mo"))
            elif name == "rpcordma":
                if fpdu is None or ddp is None:
                    problems.append("frame %s: rpcordma without an FPDU/DDP header" % frame)
                    continue
                tagged, last, opcode, mo = ddp
                if tagged or not last or mo or opcode not in SEND_OPCODES:
                    problems.append("frame %s: rpcordma in a DDP segment T=%s L=%s op=%s MO=%s"
                                    " (not a whole Send)" % (frame, tagged, last, opcode, mo))
                    continue
                ulpdu_len = int.from_bytes(fpdu[:2], "big")
                payload = fpdu[MPA_HDR + DDP_UNTAGGED_HDR:MPA_HDR + ulpdu_len]
                cur = {"frame": frame, "payload": payload,
                       "fields": leaf_fields(val, "rpcordma.", []), "rpc": None}
                msgs.append(cur)
            elif name == "rpc" and cur is not None and cur["rpc"] is None:
                cur["rpc"] = dict(leaf_fields(val, "rpc.", []))
            elif not name.endswith("_raw") and name not in ("rpc",):
                # Any other layer (nfs, rpcordma.fragments, ...) ends the rpc look-ahead.
                if name.startswith("iwarp") or name == "rpcordma.fragments":
                    cur = None
    return msgs, problems


def expected_fields(d):
    """Our decode, as the sequence of rpcordma.* fields tshark shows."""
    f = [("rpcordma.xid", d["xid"]), ("rpcordma.version", d["vers"]),
         ("rpcordma.flow_control", d["credits"]), ("rpcordma.msg_type", d["proc"])]
    proc = d["proc"]
    if proc == RDMA_MSGP:
        f += [("rpcordma.rdma_align", d["align"]), ("rpcordma.rdma_thresh", d["thresh"])]
    if proc in (RDMA_MSG, RDMA_NOMSG, RDMA_MSGP):
        f.append(("rpcordma.reads_count", len(d["read"])))
        for pos, handle, length, off in d["read"]:
            f += [("rpcordma.position", pos), ("rpcordma.rdma_handle", handle),
                  ("rpcordma.rdma_length", length), ("rpcordma.rdma_offset", off)]
        f.append(("rpcordma.writes_count", len(d["write"])))
        chunks = list(d["write"])
        for ch in chunks:
            f.append(("rpcordma.segment_count", len(ch)))
            for handle, length, off in ch:
                f += [("rpcordma.rdma_handle", handle), ("rpcordma.rdma_length", length),
                      ("rpcordma.rdma_offset", off)]
        f.append(("rpcordma.reply_count", 0 if d["reply"] is None else 1))
        if d["reply"] is not None:
            f.append(("rpcordma.segment_count", len(d["reply"])))
            for handle, length, off in d["reply"]:
                f += [("rpcordma.rdma_handle", handle), ("rpcordma.rdma_length", length),
                      ("rpcordma.rdma_offset", off)]
    elif proc == RDMA_ERROR:
        f.append(("rpcordma.errcode", d["err"]))
        if d["err"] == 1:
            f += [("rpcordma.vers_low", d["vers_low"]), ("rpcordma.vers_high", d["vers_high"])]
    return f


def compare_rpc(ours, theirs):
    """Mismatches between our RPC header parse and tshark's rpc layer."""
    bad = []
    if ours["status"] != "ok":
        return ["our RPC parse failed: %s" % ours["status"]]
    checks = [("rpc.xid", ours["xid"]), ("rpc.msgtyp", ours["msg_type"])]
    if ours["msg_type"] == 0:
        checks += [("rpc.program", ours["prog"]), ("rpc.programversion", ours["vers"]),
                   ("rpc.procedure", ours["proc"])]
    else:
        checks += [("rpc.replystat", ours["reply_stat"])]
        if ours["reply_stat"] == 0:
            checks += [("rpc.state_accept", ours["accept_stat"])]
    for name, want in checks:
        if name in theirs and theirs[name] != want:
            bad.append("%s: tshark %d, ours %d" % (name, theirs[name], want))
    if "rpc.xid" not in theirs:
        bad.append("tshark rpc layer without rpc.xid")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--decoder", required=True, help="path of rpcrdma_hexdecode")
    ap.add_argument("--captures", required=True, help="folder with the nfsrdma-*.pcap files")
    args = ap.parse_args()

    if not shutil.which("tshark"):
        print("tshark not installed: skipped")
        return SKIP
    files = [os.path.join(args.captures, c) for c in CAPTURES]
    missing = [f for f in files if not os.path.isfile(f)]
    if missing:
        print("captures missing (%s): skipped" % ", ".join(missing))
        return SKIP

    failures = 0
    total = 0
    for path in files:
        msgs, problems = tshark_messages(path)
        for p in problems:
            print("FAIL %s: %s" % (os.path.basename(path), p))
        failures += len(problems)
        if not msgs:
            print("FAIL %s: tshark found no RPC-over-RDMA message" % os.path.basename(path))
            failures += 1
            continue
        inp = "".join(m["payload"].hex() + "\n" for m in msgs)
        res = subprocess.run([args.decoder], input=inp.encode(), stdout=subprocess.PIPE,
                             check=True)
        outs = [json.loads(line) for line in res.stdout.decode().splitlines()]
        if len(outs) != len(msgs):
            print("FAIL %s: decoder printed %d lines for %d messages" %
                  (os.path.basename(path), len(outs), len(msgs)))
            failures += 1
            continue
        n_fields = n_rpc = 0
        procs = {}
        for m, d in zip(msgs, outs):
            where = "%s frame %s" % (os.path.basename(path), m["frame"])
            # RDMA_MSGP is decoded fully but reported; anything else is a failure.
            if d["status"] not in ("ok", "IW_ERPC_MSGP"):
                print("FAIL %s: our decoder says %s on %s" % (where, d["status"],
                                                            m["payload"][:64].hex()))
                failures += 1
                continue
            want = expected_fields(d)
            if want != m["fields"]:
                print("FAIL %s: fields differ\n  tshark: %s\n  ours:   %s" %
                      (where, m["fields"], want))
                failures += 1
                continue
            n_fields += len(want)
            procs[d["proc"]] = procs.get(d["proc"], 0) + 1
            if d["proc"] == RDMA_MSG:
                if d["rpc"]["status"] == "ok" and d["rpc"]["xid"] != d["xid"]:
                    print("FAIL %s: rdma_xid %08x differs from the RPC XID %08x" %
                          (where, d["xid"], d["rpc"]["xid"]))
                    failures += 1
                if m["rpc"] is not None:
                    bad = compare_rpc(d["rpc"], m["rpc"])
                    for b in bad:
                        print("FAIL %s: %s" % (where, b))
                    failures += len(bad)
                    n_rpc += 1
        total += len(msgs)
        print("%s: %d RPC-over-RDMA messages (procs %s), %d header fields and %d RPC headers "
              "equal to tshark's" % (os.path.basename(path), len(msgs),
                                     dict(sorted(procs.items())), n_fields, n_rpc))
    if total == 0:
        print("FAIL: no message found at all")
        return 1
    print("%d messages checked, %d failures" % (total, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
