#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwperf --wait memory: the RDMA Write ping-pong with both ends waiting on memory.

The client spins on the last octet of its buffer without calling into the
stack while a ping is out, and so does a server started with
--engine-thread; each side's engine thread must place the peer's write (the
way perftest's ib_write_lat runs over the drop-in libibverbs).  Checked:

  * against a server with --engine-thread: 500 round trips of 2 octets and 300
    of 5000 (several FPDUs), with --verify, exit 0, a JSON line that says
    what was asked (with the client's CPU time, cpu_s and cpu_s_per_gb), and
    the server's line for the connection;
  * against a server without one: the server refuses the test, the client
    exits 1 with a message that names --engine-thread;
  * command lines iwperf must refuse with exit status 2: --wait memory with
    another operation, without --pingpong, with --tcp-baseline, and an
    unknown --wait.

Exit status: 0 all passed, 1 a failure.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT = 120


def start_server(iwperf, workdir, name, extra):
    out = os.path.join(workdir, name + ".out")
    f = open(out, "w")
    p = subprocess.Popen([iwperf, "-s", "-a", "127.0.0.1", "-p", "0"] + extra, stdout=f,
                         stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and p.poll() is None:
        with open(out, errors="replace") as r:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", r.read())
        if m:
            return p, out, int(m.group(1))
        time.sleep(0.02)
    return p, out, None


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            return p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return None
    return p.returncode


def text(path):
    with open(path, errors="replace") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwperf", required=True, help="path to the iwperf binary")
    args = ap.parse_args()
    iwperf = args.iwperf
    bad = []

    for extra, words in ((["--op", "send", "--pingpong", "--wait", "memory"], "--wait memory"),
                         (["--op", "write", "--wait", "memory"], "--wait memory"),
                         (["--op", "write", "--pingpong", "--wait", "memory",
                           "--tcp-baseline"], "--wait memory"),
                         (["--op", "write", "--pingpong", "--wait", "spin"],
                          "invalid value 'spin' for --wait")):
        cp = subprocess.run([iwperf, "-c", "127.0.0.1", "-p", "9"] + extra, capture_output=True,
                            text=True, timeout=30)
        err = cp.stderr.strip()
        if cp.returncode != 2 or words not in err or len(err.splitlines()) != 1:
            bad.append("%s: exit %d, stderr %r (want 2 and one line with %r)" %
                       (" ".join(extra), cp.returncode, err, words))
        else:
            print("ok   refused: %s: %s" % (" ".join(extra), err), flush=True)

    with tempfile.TemporaryDirectory(prefix="iwperf-wait-") as workdir:
        srv, out, port = start_server(iwperf, workdir, "threaded", ["--engine-thread"])
        plain, pout, pport = start_server(iwperf, workdir, "plain", [])
        try:
            if port is None or pport is None:
                bad.append("a server did not start: %r %r" % (text(out)[-300:],
                                                               text(pout)[-300:]))
                raise RuntimeError
            for size, n in ((2, 500), (5000, 300)):
                cmd = [iwperf, "-c", "127.0.0.1", "-p", str(port), "--json", "--op", "write",
                       "--pingpong", "--wait", "memory", "--verify", "--size", str(size),
                       "-n", str(n)]
                cp = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
                lines = [l for l in cp.stdout.splitlines() if l.startswith("{")]
                if cp.returncode != 0 or len(lines) != 1:
                    bad.append("%s: exit %d, %s" % (" ".join(cmd[3:]), cp.returncode,
                                                    (cp.stderr or cp.stdout).strip()))
                    continue
                r = json.loads(lines[0])
                want = {"op": "write", "pingpong": True, "size": size, "iters": n}
                diff = ["%s %r (want %r)" % (k, r.get(k), v) for k, v in want.items()
                        if r.get(k) != v]
                if not r.get("lat_us_p50"):
                    diff.append("no latency")
                # the client's CPU time, and per 10^9 payload octets
                cpu, per_gb = r.get("cpu_s"), r.get("cpu_s_per_gb")
                if not isinstance(cpu, (int, float)) or cpu <= 0 or \
                        not isinstance(per_gb, (int, float)) or \
                        abs(per_gb - cpu / (r["bytes"] / 1e9)) > \
                        0.0006 / (r["bytes"] / 1e9) + 0.01 * per_gb:  # cpu_s has 3 decimals
                    diff.append("cpu_s %r, cpu_s_per_gb %r" % (cpu, per_gb))
                if diff:
                    bad.append("--size %d: %s" % (size, ", ".join(diff)))
                else:
                    print("ok   --wait memory, %d octets: %d round trips, median %.1f us" %
                          (size, n, r["lat_us_p50"]), flush=True)
            served = re.findall(r": iwarp write ping-pong (\d+) B, QP 1/1: (\d+) messages, "
                                r"data verified", text(out))
            if sorted(served) != sorted([("2", "500"), ("5000", "300")]):
                bad.append("the server printed %r" % text(out).splitlines()[-4:])
            cmd = [iwperf, "-c", "127.0.0.1", "-p", str(pport), "--op", "write", "--pingpong",
                   "--wait", "memory", "-n", "10"]
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
            if cp.returncode != 1 or "--engine-thread" not in cp.stderr:
                bad.append("against a server without a thread: exit %d, %r (want 1 and a word "
                           "about --engine-thread)" % (cp.returncode, cp.stderr.strip()))
            else:
                print("ok   refused by a server without a thread: %s" % cp.stderr.strip(),
                      flush=True)
        except RuntimeError:
            pass
        finally:
            for p, o in ((srv, out), (plain, pout)):
                rc = stop(p)
                if rc != 0:
                    bad.append("a server exited %r: %s" % (rc, text(o)[-300:]))
    for b in bad:
        print("FAIL %s" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
