#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwping -s (not persistent): its exit status says whether its one client got anywhere.

A server whose client never reached full operation fails, as rping's does:
  * a client that sends its MPA Request (RFC 6581, revision 2) and closes the
    connection on our Reply, without a single FPDU: exit 1;
  * the same with a reset instead of a FIN: exit 1;
  * a client that sends octets that are no FPDU after the Reply: exit 1 (our
    Terminate, then teardown);
  * a real client (iwping -c -C 3 -V) that pings and disconnects: both exit 0.
Each line on stderr must say why.  Exit status: 0 all passed, 1 a failure.
"""

import argparse
import socket
import struct
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """True if a socket listens on 127.0.0.1:port (/proc/net/tcp, state 0A)."""
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            p = line.split()
            if p[3] == "0A" and int(p[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def wait_listen(port, proc, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if listening(port):
            return True
        time.sleep(0.02)
    return False


def raw_client(port, mode):
    """Our MPA Request, read the Reply, then leave as `mode` says."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    # "MPA ID Req Frame", C=1 S=1 (0x50), revision 2, PD_Length 4, IRD 1 ORD 1
    s.sendall(b"MPA ID Req Frame" + bytes([0x50, 2]) + struct.pack(">HHH", 4, 1, 1))
    reply = b""
    while len(reply) < 24:
        chunk = s.recv(24 - len(reply))
        if not chunk:
            break
        reply += chunk
    if not reply.startswith(b"MPA ID Rep Frame"):
        raise RuntimeError("no MPA Reply (got %r)" % reply)
    if mode == "garbage":
        s.sendall(b"\xff" * 64)
        time.sleep(0.5)
    elif mode == "rst":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def case(iwping, name, mode, want):
    port = free_port()
    srv = subprocess.Popen([iwping, "-s", "-a", "127.0.0.1", "-p", str(port)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    problems = []
    try:
        if not wait_listen(port, srv):
            raise RuntimeError("server did not listen")
        if mode == "iwping":
            cli = subprocess.run([iwping, "-c", "-a", "127.0.0.1", "-p", str(port), "-C", "3",
                                  "-V"], capture_output=True, text=True, timeout=60)
            if cli.returncode != 0:
                problems.append("client exit %d: %s" % (cli.returncode, cli.stderr.strip()))
        else:
            raw_client(port, mode)
        out, err = srv.communicate(timeout=30)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        srv.kill()
        out, err = srv.communicate()
        problems.append(str(e))
    if srv.returncode != want:
        problems.append("server exit %s, want %d" % (srv.returncode, want))
    if want != 0 and "iwping:" not in err:
        problems.append("no reason on stderr")
    print("%-4s %s: server exit %s%s" % ("ok" if not problems else "FAIL", name, srv.returncode,
                                        (" (" + err.strip().splitlines()[-1] + ")")
                                        if err.strip() else ""))
    for p in problems:
        print("     - " + p)
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwping", required=True)
    args = ap.parse_args()
    ok = True
    ok &= case(args.iwping, "client closes on our MPA Reply", "close", 1)
    ok &= case(args.iwping, "client resets on our MPA Reply", "rst", 1)
    ok &= case(args.iwping, "client sends no FPDU but garbage", "garbage", 1)
    ok &= case(args.iwping, "iwping client, 3 pings", "iwping", 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
