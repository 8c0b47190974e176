#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwnfsgw's access control end to end (--allow, the reserved backend port), with
the scripted backend of test_gw_rpc_paths.py:

  RPC client (this script, TCP) -> iwnfsgw client -> iWARP -> iwnfsgw server -> backend (this script)

Checks, each a sentence:
  * bad_allow_values_exit_2_with_a_clear_message (and --no-resvport in client mode);
  * the_server_gateway_serves_loopback_by_default / _a_listed_address /
    _everyone_with_allow_any / _an_ipv4_client_listed_in_its_mapped_form: the call
    is answered by the backend, the server's log names the real client address on
    its connection line and on the backend connection made for it;
  * the_server_gateway_refuses_a_client_outside_allow_before_any_call: with
    --allow 192.0.2.0/24 (TEST-NET-1, never an address to connect to) the loopback
    client's call fails (SYSTEM_ERR from the client gateway, or its connection
    closed without a reply when the refusal came first), the backend sees no
    connection and no call, the server logs the refusal with 127.0.0.1;
  * the_client_gateway_closes_a_client_outside_allow_at_once, and serves a listed
    one and everyone with --allow any;
  * an_ipv4_mapped_client_matches_the_ipv4_prefixes: a client gateway listening on
    an IPv6 socket sees 127.0.0.1 as ::ffff:127.0.0.1, served with --allow
    127.0.0.1 and refused with --allow 192.0.2.0/24;
  * no_resvport_connects_to_the_backend_from_an_ordinary_port.
Needs no NFS software.  usage: test_gw_access.py IWNFSGW
Exit status: 0 passed, 1 failed.
"""

import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gw_rpc_paths import (Backend, call_msg, may_bind_reserved, read_record,  # noqa: E402
                               record, wait_log)

BASE = int(os.environ.get("GW_ACCESS_PORT_BASE", "21710"))
RDMA_PORT, CLIENT_PORT, BACKEND_PORT = BASE, BASE + 1, BASE + 2
failed = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ((": " + detail) if detail and not ok else ""))
    if not ok:
        failed.append(name)


def usage_error(gw, args):
    """(exit status, stderr) of a gateway that must refuse its command line."""
    r = subprocess.run([gw] + args, capture_output=True, text=True, timeout=30)
    return r.returncode, r.stderr.strip()


class Run:
    """Both gateways and the backend for one call; logs and what the backend saw."""

    def __init__(self, gw, tmp, name, server_args=(), client_args=()):
        self.slog = os.path.join(tmp, name + ".server.log")
        self.clog = os.path.join(tmp, name + ".client.log")
        self.be = Backend(BACKEND_PORT)
        self.procs = []
        self.procs.append(subprocess.Popen(
            [gw, "server", "-v", "--listen", "127.0.0.1:%d" % RDMA_PORT, "--backend",
             "127.0.0.1:%d" % BACKEND_PORT, "--stats"] + list(server_args),
            stdout=open(self.slog, "w"), stderr=subprocess.STDOUT))
        self.procs.append(subprocess.Popen(
            [gw, "client", "-v", "--listen", "127.0.0.1:%d" % CLIENT_PORT, "--remote",
             "127.0.0.1:%d" % RDMA_PORT, "--rdma-retries", "0"] + list(client_args),
            stdout=open(self.clog, "w"), stderr=subprocess.STDOUT))
        # no probe connection: it would be a client of its own
        self.started = (wait_log(self.slog, "listening for NFS/RDMA")
                        and wait_log(self.clog, "listening for NFS over TCP"))

    def call(self, xid):
        """The reply record to one call through both gateways (None: the connection
        was closed without one)."""
        try:
            s = socket.create_connection(("127.0.0.1", CLIENT_PORT), timeout=10)
        except OSError:
            return None
        s.settimeout(15)
        try:
            s.sendall(record(call_msg(xid, b"acl!")))
        except OSError:
            pass
        rec = read_record(s)
        s.close()
        return rec

    def logs(self):
        time.sleep(0.2)  # the last lines of a refusal
        with open(self.slog, errors="replace") as f:
            s = f.read()
        with open(self.clog, errors="replace") as f:
            c = f.read()
        return s, c

    def stop(self):
        rcs = []
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                rcs.append(p.wait(10))
            except subprocess.TimeoutExpired:
                p.kill()
                rcs.append(p.wait())
        self.be.close()
        s, c = self.logs()
        ok = rcs == [0, 0] and not any(
            "Sanitizer" in t or "runtime error:" in t for t in (s, c))
        if not ok or failed:
            for path, text in ((self.slog, s), (self.clog, c)):
                print("--- " + path)
                print("\n".join(text.splitlines()[-25:]))
        return ok, rcs


def answered(rec, xid):
    """The backend's own reply (accepted, SUCCESS) to xid."""
    return (rec is not None and rec[:4] == struct.pack(">I", xid) and rec[4:8] == b"\0\0\0\1"
            and rec[20:24] == b"\0\0\0\0" and rec[24:] == b"acl!")


def system_err(rec, xid):
    return (rec is not None and rec[:4] == struct.pack(">I", xid)
            and rec[20:24] == b"\0\0\0\5")


def main():
    gw = sys.argv[1]
    root = may_bind_reserved()

    # --- command lines --------------------------------------------------
    bad = [
        (["server", "--allow", "10.0.0.0/33"],
         "iwnfsgw: invalid value '10.0.0.0/33' for --allow: prefix length over 32 for IPv4"),
        (["client", "--remote", "127.0.0.1", "--allow", "localhost"],
         "iwnfsgw: invalid value 'localhost' for --allow: not an IPv4 or IPv6 address "
         "(numeric only: ADDR[/LEN], or any)"),
        (["server", "--allow", "127.0.0.1", "--allow", "192.0.2.0/24,10.1.2.3/8"],
         "iwnfsgw: invalid value '192.0.2.0/24,10.1.2.3/8' for --allow: '10.1.2.3/8': address "
         "bits set after the prefix length (the network is 10.0.0.0/8)"),
        (["server", "--allow", ""],
         "iwnfsgw: invalid value '' for --allow: empty entry (CIDR: ADDR[/LEN], or any)"),
        (["server", "--allow"], "iwnfsgw: option '--allow' needs a value"),
        (["client", "--remote", "127.0.0.1", "--no-resvport"],
         "iwnfsgw: --no-resvport is for server mode (client: no backend TCP connection)"),
    ]
    got = [usage_error(gw, a) for a, _ in bad]
    check("bad_allow_values_exit_2_with_a_clear_message",
          all(g == (2, want) for g, (_, want) in zip(got, bad)),
          "; ".join("%s -> %s" % (a, g) for g, (a, want) in zip(got, bad) if g != (2, want)))

    tmp = tempfile.mkdtemp(prefix="gw-access.")
    xid = 0xACC00000

    # --- server mode ----------------------------------------------------
    for name, allow in (("loopback_by_default", None),
                        ("a_listed_address", "127.0.0.1"),
                        ("everyone_with_allow_any", "any"),
                        ("an_ipv4_client_listed_in_its_mapped_form",
                         "192.0.2.0/24,::ffff:127.0.0.0/104")):
        xid += 1
        r = Run(gw, tmp, "server-" + name, ["--allow", allow] if allow else [])
        rec = r.call(xid) if r.started else None
        s, _ = r.logs()
        port = r.be.peers[0][1] if r.be.peers else 0
        line = "-> backend 127.0.0.1:%d from 127.0.0.1:%d connected" % (BACKEND_PORT, port)
        ok = (r.started and answered(rec, xid) and "refused" not in s
              and "conn 1: client 127.0.0.1:" in s and line in s
              and (not root or 0 < port < 1024))
        stopped, rcs = r.stop()
        check("the_server_gateway_serves_" + name, ok and stopped,
              "reply %r, backend saw %s, exits %s" % (rec[:24] if rec else None, r.be.peers, rcs))

    xid += 1
    r = Run(gw, tmp, "server-refuses", ["--allow", "192.0.2.0/24"])
    rec = r.call(xid) if r.started else None
    s, _ = r.logs()
    # refused with an MPA reject, the client gateway's connection never comes
    # up: the call is answered SYSTEM_ERR, or - when the gateway learns of the
    # refusal before the call arrives - the NFS client's connection is closed
    # without a reply; either way nothing reaches the backend
    ok = (r.started and (rec is None or system_err(rec, xid)) and not r.be.peers
          and not r.be.seen and "refused NFS/RDMA client 127.0.0.1:" in s
          and "not in --allow (192.0.2.0/24)" in s and "conn 1:" not in s)
    stopped, rcs = r.stop()
    s, _ = r.logs()
    check("the_server_gateway_refuses_a_client_outside_allow_before_any_call",
          ok and stopped and "stats total refused 1 connection(s)" in s,
          "reply %r, backend saw %s / calls %s, exits %s" % (
              rec[:24] if rec else None, r.be.peers, r.be.seen, rcs))

    # --- client mode ----------------------------------------------------
    xid += 1
    r = Run(gw, tmp, "client-refuses", [], ["--allow", "192.0.2.0/24"])
    rec = r.call(xid) if r.started else None
    s, c = r.logs()
    ok = (r.started and rec is None and not r.be.seen
          and "refused NFS client 127.0.0.1:" in c and "not in --allow (192.0.2.0/24)" in c
          and "conn 1:" not in c and "conn 1:" not in s)
    stopped, rcs = r.stop()
    check("the_client_gateway_closes_a_client_outside_allow_at_once", ok and stopped,
          "reply %r, backend saw %s, exits %s" % (rec[:24] if rec else None, r.be.seen, rcs))
    for name, allow in (("a_listed_one", "127.0.0.1/32"), ("everyone_with_allow_any", "any")):
        xid += 1
        r = Run(gw, tmp, "client-" + name, [], ["--allow", allow])
        rec = r.call(xid) if r.started else None
        s, c = r.logs()
        ok = (r.started and answered(rec, xid) and "refused" not in c
              and "conn 1: client 127.0.0.1:" in c
              and "-> RPC-over-RDMA to 127.0.0.1:%d up" % RDMA_PORT in c)
        stopped, rcs = r.stop()
        check("the_client_gateway_serves_" + name, ok and stopped,
              "reply %r, exits %s" % (rec[:24] if rec else None, rcs))

    # an IPv6 socket (bound to the IPv4-mapped loopback address, so nothing
    # but loopback reaches it) sees the IPv4 client as ::ffff:127.0.0.1, which
    # the IPv4 prefixes match
    mapped = ["--listen", "[::ffff:127.0.0.1]:%d" % CLIENT_PORT]
    xid += 1
    r = Run(gw, tmp, "client-mapped", [], mapped + ["--allow", "127.0.0.1"])
    rec = r.call(xid) if r.started else None
    s, c = r.logs()
    ok = r.started and answered(rec, xid) and "conn 1: client [::ffff:127.0.0.1]:" in c
    stopped, rcs = r.stop()
    if ok and stopped:
        xid += 1
        r = Run(gw, tmp, "client-mapped-refused", [], mapped + ["--allow", "192.0.2.0/24"])
        rec = r.call(xid) if r.started else None
        s, c = r.logs()
        ok = (r.started and rec is None
              and "refused NFS client [::ffff:127.0.0.1]:" in c and "conn 1:" not in c)
        stopped, rcs = r.stop()
    check("an_ipv4_mapped_client_matches_the_ipv4_prefixes", ok and stopped,
          "reply %r, exits %s" % (rec[:24] if rec else None, rcs))

    # --- --no-resvport --------------------------------------------------
    xid += 1
    r = Run(gw, tmp, "no-resvport", ["--no-resvport"])
    rec = r.call(xid) if r.started else None
    s, _ = r.logs()
    port = r.be.peers[0][1] if r.be.peers else 0
    ok = (r.started and answered(rec, xid) and port >= 1024
          and "--no-resvport: the backend connections come from ordinary ports" in s
          and "from 127.0.0.1:%d (ordinary port)" % port in s)
    stopped, rcs = r.stop()
    check("no_resvport_connects_to_the_backend_from_an_ordinary_port", ok and stopped,
          "reply %r, backend saw %s, exits %s" % (rec[:24] if rec else None, r.be.peers, rcs))
    if not root:
        print("note: not root (no port below 1024 may be bound): the reserved-port checks "
              "of the backend connections were skipped (test_gw_rpc_paths.py says so too)")

    print("access: %s" % ("FAILED: " + ", ".join(failed) if failed else "all checks passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
