#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwscale in small: a server and a client on loopback with N connections.

  * one source address: every connection set up, echoed once and torn down
    with every posted receive flushed, on both sides (exit 0, the JSON says
    flushed == flushed_expected);
  * --sources 3: the same, and the server saw the connections come from
    three distinct client addresses (127.0.0.1, .2, .3; the kernel's
    getpeername, not the client's word), so a source address with port 0 is
    bound and used (bench_scale.sh relies on it beyond ~28k connections);
  * the command lines it must refuse (exit 2).
Exit status: 0 all passed, 1 a failure.
"""

import argparse
import json
import subprocess
import sys

failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures += 1


def run_pair(iwscale, n, sources):
    srv = subprocess.Popen([iwscale, "-s", "-p", "0", "-n", str(n), "--timeout", "120", "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = None
    first = srv.stdout.readline()
    if "listening on" in first:
        port = int(first.split()[3].rsplit(":", 1)[1])
    if port is None:
        srv.kill()
        check(False, "server started: %r %s" % (first, srv.stderr.read()))
        return None, None
    cli = subprocess.run([iwscale, "-c", "127.0.0.1", "-p", str(port), "-n", str(n),
                          "--sources", str(sources), "--timeout", "120", "--json"],
                         capture_output=True, text=True, timeout=180)
    out, err = srv.communicate(timeout=180)
    try:
        c = json.loads(cli.stdout.strip().splitlines()[-1])
        s = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        check(False, "JSON from both: client %r %r, server %r %r" % (cli.stdout, cli.stderr,
                                                                    out, err))
        return None, None
    check(cli.returncode == 0 and srv.returncode == 0,
          "%d connections from %d source(s): exit %d / %d %s" %
          (n, sources, cli.returncode, srv.returncode, (cli.stderr + err)[-300:]))
    return c, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iwscale", required=True)
    a = ap.parse_args()
    for n, sources in ((200, 1), (300, 3)):
        c, s = run_pair(a.iwscale, n, sources)
        if not c:
            continue
        for side in (c, s):
            check(side["conns"] == n and side["flushed"] == side["flushed_expected"] ==
                  3 * n, "%s: %d connections, receives flushed %d of %d" %
                  (side["side"], side["conns"], side["flushed"], side["flushed_expected"]))
        check(c["source_addresses"] == sources and s["peer_addresses"] == sources,
              "the server saw %d client address(es), the client used %d" %
              (s["peer_addresses"], c["source_addresses"]))
    for bad, why in ((["-s", "-n", "10", "--sources", "2"], "--sources on a server"),
                     (["-c", "127.0.0.1", "-p", "1", "-n", "10", "--sources", "65"],
                      "--sources over 64"),
                     (["-c", "::1", "-p", "1", "-n", "10", "--sources", "2"],
                      "--sources with a host that is not IPv4 loopback")):
        r = subprocess.run([a.iwscale] + bad, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and r.stderr.strip() != "",
              "refused: %s (exit %d: %s)" % (why, r.returncode, r.stderr.strip()[:120]))
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
