#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwconform -c --profile perftest against perftest's servers over our stack.

Debian's unmodified ib_write_bw -R and ib_read_bw -R run through iwrun (the
drop-in libibverbs/librdmacm, docs/compat.md) as the peer.  A perftest
server serves one client and then exits, so every case gets a server of its
own on a free port (a few at a time, to keep the run short), and iwconform
runs that one case (--case ID) as perftest's client: the control connection
with perftest's exchange, the data connection, the key exchange, then the
case against the server's buffer.

Checked per server program: every case passes strictly or is skipped, and
the skipped ones are exactly those in SKIPS (each with the reason iwconform
gives); a server whose case was accepted ends as after a run (exit 0); the
pcap of a case holds both connections and iwdump -r reads it.  Exit 77 when
perftest is not installed or iwrun cannot give it our libraries.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icf_testlib import check, failures, free_port  # noqa: E402

SKIP = 77
PARALLEL = 4

# Skipped for both programs, with the words of iwconform's reason.
SKIPS_BOTH = {
    "mpa.fpdu.marker_bad": "does not ask for Markers",
    "ddp.u.qn3": "RFC 7306",
    "ddp.u.mo": "perftest's data QP posts none",
    "ddp.u.too_long": "perftest's data QP posts none",
    "ddp.u.send_4k": "perftest's data QP posts none",
    "ddp.t.bounds.below": "memory region begins below",
    "ddp.t.rresp_stag": "never reads from us",
    "ddp.t.rresp_bounds": "never reads from us",
    "ddp.u.two_segments": "perftest's data QP posts none",
    "rdmap.op.rreq_qn0": "perftest's data QP posts none",
    "rdmap.op.imm": "RFC 7306",
    "rdmap.op.imm_se": "RFC 7306",
    "rdmap.op.atomic_req": "RFC 7306",
    "rdmap.op.atomic_resp": "RFC 7306",
    "rdmap.op.write_untagged": "perftest's data QP posts none",
    "rdmap.rresp.again": "never reads from us",
    "rdmap.send_inv.bad_stag": "perftest's data QP posts none",
    "rdmap.send_se_inv.bad_stag": "perftest's data QP posts none",
    "rdmap.send_inv.stag0": "perftest's data QP posts none",
    "rdmap.send_se.accepted": "perftest's data QP posts none",
    "ddp.t.stag_other_conn": "serves one client",
}
# ib_write_bw's buffer is not registered for remote read.
SKIPS_WRITE = {cid: "not for remote read" for cid in (
    "rdmap.rreq.size_big", "rdmap.rreq.bounds", "rdmap.rreq.to_wrap",
    "rdmap.rreq.ird_overflow", "rdmap.rreq.valid")}
SKIPS = {"ib_write_bw": dict(SKIPS_BOTH, **SKIPS_WRITE), "ib_read_bw": dict(SKIPS_BOTH)}

# Deviations of our stack found by these runs: none so far.  An entry here is
# (case, grade, reason) and is reported, never hidden.
KNOWN = {"ib_write_bw": {}, "ib_read_bw": {}}

# Cases after which the server must end as after a run.
CLEAN_END = ("mpa.req.rev2", "ddp.t.write_ok", "rdmap.rreq.zero_len")



def listening(port):
    """The port is in LISTEN state (perftest binds every address)."""
    key = ":%04X " % port
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                for line in f:
                    fields = line.split()
                    if len(fields) > 3 and fields[1].endswith(key.strip()) and fields[3] == "0A":
                        return True
        except OSError:
            pass
    return False


def stop(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def one_case(a, prog, cid, pdir):
    """A server of its own, iwconform for `cid`: (row, server status)."""
    port = free_port()
    srv = subprocess.Popen([a.iwrun, prog, "-R", "-F", "-p", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, start_new_session=True)
    end = time.monotonic() + 10
    while not listening(port) and time.monotonic() < end and srv.poll() is None:
        time.sleep(0.02)
    if not listening(port):
        stop(srv)
        return {"case": cid, "grade": "no server", "detail": "%s did not listen" % prog,
                "got": "", "expected": ""}, None
    p = subprocess.run([a.iwconform, "-c", "127.0.0.1", "-p", str(port), "--profile",
                        "perftest", "--case", cid, "--json", "--timeout", "2000",
                        "--pcap-dir", pdir], capture_output=True, text=True, timeout=60)
    lines = p.stdout.splitlines()
    row = json.loads(lines[0]) if lines else {"case": cid, "grade": "no output",
                                              "detail": p.stderr.strip(), "got": "",
                                              "expected": ""}
    status = None
    if row["grade"] != "skipped" or row["got"] != "skipped":
        try:
            status = srv.wait(3)
        except subprocess.TimeoutExpired:
            pass
    if status is None:
        stop(srv)
        status = "killed"
    return row, status


def run_program(a, prog, ids):
    with tempfile.TemporaryDirectory() as pdir:
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(PARALLEL) as ex:
            results = list(ex.map(lambda cid: one_case(a, prog, cid, pdir), ids))
        print("%s -R: %d cases in %.1f s" % (prog, len(results), time.monotonic() - t0),
              flush=True)
        counts = {}
        for row, status in results:
            cid, g = row["case"], row["grade"]
            counts[g] = counts.get(g, 0) + 1
            want_skip = SKIPS[prog].get(cid)
            known = KNOWN[prog].get(cid)
            if known:
                print("  known deviation %-28s %s: %s (%s)" % (cid, g, row["detail"], known[1]))
                check(g == known[0], "%s %s: known deviation still %s (%s)" %
                      (prog, cid, known[0], g))
            elif want_skip:
                check(g == "skipped" and want_skip in row["detail"],
                      "%s %s: %s, want skipped (%s): %s" % (prog, cid, g, want_skip,
                                                            row["detail"]))
            else:
                check(g == "pass-strict", "%s %s: %s (expected %s, got %s: %s)" %
                      (prog, cid, g, row["expected"], row["got"], row["detail"]))
            if cid in CLEAN_END:
                check(status == 0, "%s %s: the server ended with %s, want 0" %
                      (prog, cid, status))
        print("  grades: %s" % ", ".join("%s %d" % kv for kv in sorted(counts.items())))
        # the pcap of an accepted case: both connections, read by iwdump
        if a.iwdump:
            f = os.path.join(pdir, "mpa.req.rev2.pcap")
            q = subprocess.run([a.iwdump, "-r", f, "--check"], capture_output=True, text=True,
                               timeout=30)
            check(q.returncode == 0 and q.stdout.count("MPA Request") == 2 and
                  q.stdout.count("MPA Reply") == 2,
                  "%s: iwdump -r mpa.req.rev2.pcap: rc %d, both connections" %
                  (prog, q.returncode))
            check(" len 56" in q.stdout and "RDMA Read Response" in q.stdout,
                  "%s: the key exchange and the Read Response in the pcap" % prog)
            f = os.path.join(pdir, "ddp.t.bounds.write.pcap")
            q = subprocess.run([a.iwdump, "-r", f], capture_output=True, text=True, timeout=30)
            check("Base or bounds violation" in q.stdout,
                  "%s: iwdump shows the Terminate in ddp.t.bounds.write.pcap" % prog)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iwconform", required=True)
    ap.add_argument("--iwrun", required=True)
    ap.add_argument("--iwdump")
    ap.add_argument("--program", action="append",
                    help="ib_write_bw and/or ib_read_bw (default: both)")
    a = ap.parse_args()
    progs = a.program or ["ib_write_bw", "ib_read_bw"]
    for prog in progs:
        if not shutil.which(prog):
            print("SKIP: %s is not installed (apt-get install perftest; tools/setup.sh "
                  "installs it)" % prog)
            return SKIP
    r = subprocess.run([a.iwrun, "--check", progs[0]], capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP: iwrun cannot give %s our libraries:\n%s%s" % (progs[0], r.stdout,
                                                                   r.stderr))
        return SKIP
    p = subprocess.run([a.iwconform, "--list"], capture_output=True, text=True)
    ids = [line.split("\t")[0] for line in p.stdout.splitlines()]
    check(len(ids) >= 70, "the client-role catalogue (%d cases)" % len(ids))
    for prog in progs:
        run_program(a, prog, ids)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
