# SPDX-License-Identifier: MIT
"""What the tests measure of a process they started, from /proc, and the
kind of build a binary comes from.

    import procstat
    procstat.rss_kb(pid)       # VmRSS in kB, -1 when the process is gone
    procstat.nfds(pid)         # open descriptors, -1 when gone
    procstat.asan_build(exe)   # built with AddressSanitizer?
"""
import os


def rss_kb(pid):
    """The process's resident set (VmRSS) in kB, or -1."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def nfds(pid):
    """The process's open file descriptors, or -1."""
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def asan_build(exe):
    """True when exe was built with AddressSanitizer (its quarantine keeps
    freed memory resident, so RSS growth says little there)."""
    try:
        with open(exe, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False
