# SPDX-License-Identifier: MIT
"""What the iwconform tests share: the failure list and check(), a free
loopback port, waiting for a listener, iwconform's --json output read back,
and an FPDU built here (the stand-in peers' framing, with the independent
RFC 5044 CRC32c of test/interop/mpa_tshark.py)."""
import json
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'interop'))
from mpa_tshark import crc32c  # noqa: E402

failures = []


def check(cond, what):
    """Record a failure (printed at once); returns cond."""
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def free_port():
    """A loopback TCP port that was free a moment ago."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_listen(port, timeout=10.0):
    """True once something accepts TCP connections on 127.0.0.1:port."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def parse_json(out):
    """iwconform --json: (the case rows, the summary object or None)."""
    rows, summary = [], None
    for line in out.splitlines():
        obj = json.loads(line)
        if "case" in obj:
            rows.append(obj)
        else:
            summary = obj
    return rows, summary


def check_run(rc, rows, summary, pdir, known, skip_ok):
    """A whole catalogue run against our own stack: every case strict but
    the known deviations (lenient) and the cases allowed to skip; the exit
    status says whether all were strict; the JSON summary, the JUnit report
    and one pcap per case are there.  Returns the pcaps' names."""
    bad = False
    for r in rows:
        cid, g = r["case"], r["grade"]
        if cid in known:
            print("  known deviation %-28s %s: %s" % (cid, g, r["detail"]))
            check(g == "pass-lenient", "%s: known deviation still lenient (%s)" % (cid, g))
            bad = bad or g != "pass-strict"
        elif cid in skip_ok:
            check(g in ("skipped", "pass-strict"), "%s: %s (%s)" % (cid, g, r["detail"]))
        else:
            check(g == "pass-strict", "%s: %s (expected %s, got %s: %s)" %
                  (cid, g, r["expected"], r["got"], r["detail"]))
            bad = bad or g != "pass-strict"
    check(rc == (1 if bad else 0), "exit status %d" % rc)
    check(summary is not None and summary["cases"] == len(rows), "JSON summary")
    check(os.path.getsize(os.path.join(pdir, "junit.xml")) > 0, "JUnit report written")
    pcaps = sorted(f for f in os.listdir(pdir) if f.endswith(".pcap"))
    check(len(pcaps) == len(rows), "one pcap per case (%d)" % len(pcaps))
    return pcaps


def fpdu(ulpdu):
    """RFC 5044 §4: length, ULPDU, PAD, CRC (least significant octet first)."""
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * ((4 - len(body) % 4) % 4)
    return body + struct.pack("<I", crc32c(body))
