#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwnfsgw's RPC paths end to end, with a scripted backend instead of an NFS server.

  RPC client (this script, TCP) -> iwnfsgw client -> iWARP -> iwnfsgw server -> backend (this script)

Checks, each a sentence:
  * many_calls_in_flight_come_back_with_their_own_xids: 64 pipelined calls, the
    backend answers them in reverse order; every reply reaches the client with its
    XID and its body unchanged;
  * a_backend_call_goes_to_the_client_by_backchannel_and_its_reply_comes_back:
    the backend sends a CALL on its connection (as an NFSv4.1 server sends
    callbacks); with --backchannel on the client gateway it reaches the RPC
    client as a record, and the client's REPLY reaches the backend;
  * an_unreachable_backend_gets_calls_answered_system_err: with the backend gone,
    calls are answered by the gateway with MSG_ACCEPTED / SYSTEM_ERR (not dropped);
  * a_backend_that_comes_back_gets_the_outstanding_calls_again: calls outstanding
    when the backend connection breaks are sent again (same XID) once it is back;
  * a_record_over_max_record_closes_the_client_connection;
  * each_mode_refuses_the_other_modes_reconnect_budget: --backend-retries is the
    server's (backend TCP), --rdma-retries the client's (RPC-over-RDMA);
  * the_backend_sees_the_gateway_from_a_reserved_port: run as root, the server
    gateway connects to the backend from a port below 1024 (knfsd's `secure`),
    and logs it with the real client's address; a reconnect takes the same
    port again (the server's duplicate request cache keys on it).  Not root:
    the gateway says at start that the ports are ordinary (check skipped).
(--allow and --no-resvport: test_gw_access.py.)
Needs no NFS software.  usage: test_gw_rpc_paths.py IWNFSGW
Exit status: 0 passed, 1 failed.
"""

import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

BASE = int(os.environ.get("GW_TEST_PORT_BASE", "21700"))
RDMA_PORT, CLIENT_PORT, BACKEND_PORT = BASE, BASE + 1, BASE + 2
PROG, VERS = 400123, 1  # not NFS: nothing is DDP-eligible, every message inline
failed = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ((": " + detail) if detail and not ok else ""))
    if not ok:
        failed.append(name)


def record(msg):
    return struct.pack(">I", 0x80000000 | len(msg)) + msg


def call_msg(xid, body=b""):
    # xid, CALL, rpcvers 2, prog, vers, proc 1, AUTH_NONE cred and verifier
    return struct.pack(">IIIIIIIIII", xid, 0, 2, PROG, VERS, 1, 0, 0, 0, 0) + body


def reply_msg(xid, body=b""):
    # xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS
    return struct.pack(">IIIIII", xid, 1, 0, 0, 0, 0) + body


def gw_rpc_type(rec):
    return struct.unpack(">I", rec[4:8])[0]


def read_record(sock):
    data = b""
    while True:
        hdr = recv_exact(sock, 4)
        if hdr is None:
            return None
        (w,) = struct.unpack(">I", hdr)
        frag = recv_exact(sock, w & 0x7FFFFFFF)
        if frag is None:
            return None
        data += frag
        if w & 0x80000000:
            return data


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except (ConnectionResetError, socket.timeout, BlockingIOError):
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


class Backend:
    """Accepts connections; answers calls as `mode` says."""

    def __init__(self, port):
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", port))
        self.ls.listen(16)
        self.mode, self.seen, self.conns, self.replies = "echo", [], [], []
        self.peers = []  # (address, port) of each connection accepted
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, peer = self.ls.accept()
            except OSError:
                return
            self.peers.append(peer)
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        pending = []
        while True:
            # gather what arrives within 20 ms, then answer it in reverse order
            c.settimeout(None if not pending else 0.02)
            try:
                rec = read_record(c)
            except OSError:
                rec = None
            if rec is None and pending and c.fileno() >= 0 and self._alive(c):
                for x, body in reversed(pending):
                    c.sendall(record(reply_msg(x, body)))
                pending = []
                continue
            if rec is None:
                return
            xid = struct.unpack(">I", rec[:4])[0]
            with self.lock:
                self.seen.append(xid)
                mode = self.mode
            if mode == "swallow":
                continue
            if mode == "close_once":
                with self.lock:
                    self.mode = "echo"
                c.close()
                return
            if gw_rpc_type(rec) == 1:
                self.replies.append(xid)  # a reply to our own (backchannel) call
                continue
            pending.append((xid, rec[40:]))

    @staticmethod
    def _alive(c):
        try:
            c.settimeout(0)
            return c.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            return True
        except OSError:
            return False

    def close(self):
        for c in [self.ls] + self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv
            except OSError:
                pass
            try:
                c.close()
            except OSError:
                pass


def wait_port(port, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_log(path, text, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.05)
    return False


def may_bind_reserved():
    """Whether this process may bind a port below 1024 (root, CAP_NET_BIND_SERVICE),
    as the gateway finds out: binding one says (a port in use says yes, too)."""
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 1023))
        return True
    except PermissionError:
        return False
    except OSError:
        return True
    finally:
        s.close()


def refuses(gw, args, line):
    """The gateway exits 2 at once with `line` on stderr."""
    r = subprocess.run([gw] + args, capture_output=True, text=True, timeout=30)
    return r.returncode == 2 and r.stderr.strip() == line


def main():
    gw = sys.argv[1]
    check("each_mode_refuses_the_other_modes_reconnect_budget",
          refuses(gw, ["client", "--remote", "127.0.0.1", "--backend-retries", "1"],
                  "iwnfsgw: --backend-retries is for server mode (client: --rdma-retries)")
          and refuses(gw, ["server", "--rdma-retries", "1"],
                      "iwnfsgw: --rdma-retries is for client mode (server: --backend-retries)"))
    tmp = tempfile.mkdtemp(prefix="gw-rpc-paths.")
    slog, clog = os.path.join(tmp, "server.log"), os.path.join(tmp, "client.log")
    be = Backend(BACKEND_PORT)
    procs = []
    try:
        procs.append(subprocess.Popen(
            [gw, "server", "--listen", "127.0.0.1:%d" % RDMA_PORT, "--backend",
             "127.0.0.1:%d" % BACKEND_PORT, "--backend-retries", "2", "--retry-ms", "100",
             "--credits", "64", "--stats"], stdout=open(slog, "w"), stderr=subprocess.STDOUT))
        procs.append(subprocess.Popen(
            [gw, "client", "--listen", "127.0.0.1:%d" % CLIENT_PORT, "--remote",
             "127.0.0.1:%d" % RDMA_PORT, "--rdma-retries", "3", "--credits", "64",
             "--max-record", "65536", "--backchannel", "4", "--stats"], stdout=open(clog, "w"), stderr=subprocess.STDOUT))
        if not wait_log(slog, "listening for NFS/RDMA") or not wait_port(CLIENT_PORT):
            check("gateways start", False)
            return 1

        # 1. 64 calls in flight, answered in reverse order
        s = socket.create_connection(("127.0.0.1", CLIENT_PORT))
        s.settimeout(30)
        sent = {}
        for i in range(64):
            xid = 0x5A000000 + i * 7919
            body = struct.pack(">I", i) * (1 + i % 50)
            sent[xid] = body
            s.sendall(record(call_msg(xid, body)))
        got = {}
        for _ in range(64):
            rec = read_record(s)
            if rec is None:
                break
            got[struct.unpack(">I", rec[:4])[0]] = rec
        ok = len(got) == 64 and all(
            x in got and got[x][4:8] == b"\0\0\0\1" and got[x][24:] == sent[x] for x in sent)
        check("many_calls_in_flight_come_back_with_their_own_xids", ok,
              "%d of 64 replies" % len(got))
        first_peers = list(be.peers)

        # 2. the backend sends a CALL: carried by the backchannel to the client
        be.replies = []
        for c in be.conns[-1:]:
            c.sendall(record(call_msg(0x77777777, b"cbcb")))
        rec = read_record(s)
        ok = rec is not None and rec[:8] == struct.pack(">II", 0x77777777, 0)
        if ok:
            s.sendall(record(reply_msg(0x77777777, b"okok")))
            end = time.monotonic() + 5
            while time.monotonic() < end and 0x77777777 not in be.replies:
                time.sleep(0.05)
        check("a_backend_call_goes_to_the_client_by_backchannel_and_its_reply_comes_back",
              ok and 0x77777777 in be.replies,
              "client got %r, backend got replies %s" % (rec[:8] if rec else None, be.replies))

        # 3. calls outstanding when the backend breaks are sent again when it is back
        with be.lock:
            be.mode, be.seen = "close_once", []
        # the backend closes on this call; the gateway reconnects and sends it again
        s.sendall(record(call_msg(0x600D0001, b"abcd")))
        rec = read_record(s)
        with be.lock:
            seen = list(be.seen)
        check("a_backend_that_comes_back_gets_the_outstanding_calls_again",
              rec is not None and rec[:4] == struct.pack(">I", 0x600D0001)
              and rec[20:24] == b"\0\0\0\0" and seen.count(0x600D0001) >= 2,
              "reply %r, backend saw %s" % (rec[:24] if rec else None, seen))

        # the backend connections came from a reserved port (as root); the last of
        # the first ones is the calls' (wait_port's probe may have made one before
        # it), and its reconnect took the same port again
        peers = list(be.peers)
        if not may_bind_reserved():
            print("skip the_backend_sees_the_gateway_from_a_reserved_port: not root (this "
                  "process may not bind a port below 1024, nor may the gateway)")
            check("a_gateway_that_may_not_bind_a_reserved_port_says_so",
                  wait_log(slog, "come from ordinary ports", 5))
        else:
            port = first_peers[-1][1] if first_peers else 0
            with open(slog, errors="replace") as f:
                text = f.read()
            check("the_backend_sees_the_gateway_from_a_reserved_port",
                  first_peers and all(p < 1024 for _, p in peers)
                  and len(peers) > len(first_peers) and peers[len(first_peers)][1] == port
                  and ("-> backend 127.0.0.1:%d from 127.0.0.1:%d connected; 1 call(s) sent "
                       "again" % (BACKEND_PORT, port)) in text,
                  "backend saw connections from %s" % peers)

        # 4. backend gone for good -> SYSTEM_ERR from the gateway
        be.close()
        time.sleep(0.2)
        s.sendall(record(call_msg(0x0BAD0001)))
        rec = read_record(s)
        check("an_unreachable_backend_gets_calls_answered_system_err",
              rec is not None and rec[:4] == struct.pack(">I", 0x0BAD0001)
              and rec[4:8] == b"\0\0\0\1" and rec[8:12] == b"\0\0\0\0"
              and rec[20:24] == b"\0\0\0\5", "reply %r" % (rec[:24] if rec else None))
        s.close()

        # 5. a record over --max-record: the client gateway closes the connection
        s = socket.create_connection(("127.0.0.1", CLIENT_PORT))
        s.settimeout(10)
        s.sendall(struct.pack(">I", 0x80000000 | 1000000) + b"\0" * 1000)
        check("a_record_over_max_record_closes_the_client_connection",
              read_record(s) is None and wait_log(clog, "--max-record", 5))
        s.close()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                rc = p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            check("gateway exits 0 on SIGTERM", rc == 0, "exit %s" % rc)
        for path in (slog, clog):
            with open(path, errors="replace") as f:
                text = f.read()
            if "Sanitizer" in text or "runtime error:" in text:
                check("no sanitizer report in " + os.path.basename(path), False)
            if failed:
                print("--- " + path)
                print("\n".join(text.splitlines()[-25:]))
    print("rpc paths: %s" % ("FAILED: " + ", ".join(failed) if failed else "all checks passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
