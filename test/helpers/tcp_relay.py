#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tcp_relay.py - a plain TCP port forward (what socat TCP-LISTEN,fork TCP does),
standard library only, for tests that run in network namespaces.

    tcp_relay.py LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT

Accepts connections on LISTEN_ADDR:LISTEN_PORT and joins each to a new
connection to TARGET_ADDR:TARGET_PORT, both directions, half-closes passed
on.  Prints "relay listening on ADDR:PORT" once bound (the caller waits for
it) and one line per connection on stderr.  Runs until killed.

Used by test/helpers/nfs_netns.py: an NFSv3 client (libnfs) finds MOUNT on
the same host as NFS, so in namespace B 127.0.0.1:MOUNT must lead to the
ganesha in namespace A.
"""

import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            b = src.recv(262144)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def serve(conn, target):
    try:
        out = socket.create_connection(target, timeout=30)
        out.settimeout(None)
    except OSError as e:
        sys.stderr.write("relay: connect to %s:%d: %s\n" % (target[0], target[1], e))
        conn.close()
        return
    for s in (conn, out):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = threading.Thread(target=pump, args=(out, conn), daemon=True)
    t.start()
    pump(conn, out)
    t.join()
    conn.close()
    out.close()


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: tcp_relay.py LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT")
    laddr, lport, taddr, tport = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    ls = socket.socket(socket.AF_INET6 if ":" in laddr else socket.AF_INET)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((laddr, lport))
    ls.listen(64)
    print("relay listening on %s:%d" % (laddr, ls.getsockname()[1]), flush=True)
    while True:
        conn, peer = ls.accept()
        sys.stderr.write("relay: %s:%d -> %s:%d\n" % (peer[0], peer[1], taddr, tport))
        threading.Thread(target=serve, args=(conn, (taddr, tport)), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
