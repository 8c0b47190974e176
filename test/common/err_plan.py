#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""err_plan.py - the error plan of include/iwarp/iw_err.h holds.

Reads every public header for the error enumerators (IW_E... = -N) - the
headers themselves, not a list kept by hand - and checks with the program
test/common/err_names.c, which prints what each naming function says:

  * no two codes share a value, and each sits in its layer's range
    (common -1..-99, MPA -100..-199, DDP -200..-299, RDMAP -300..-399,
    RPC-over-RDMA -400..-499; IW_ESYS above -1000);
  * every code has its own name (its enumerator's spelling) and a text,
    from its layer's function and from every function above it;
  * a layer's function names no code of a layer above it;
  * IW_ESYS(errno) is named by the errno's name and text everywhere, and no
    errno's place meets a layer's code (-ETIMEDOUT is IW_EMPA_CRC);
  * values in a range that no enumerator has are "IW_E?" / "unknown error".

usage: err_plan.py ERR_NAMES INCLUDE_DIR
"""
import errno
import os
import re
import subprocess
import sys

RANGES = {  # prefix -> (first, last, header, the functions that must name it)
    "common": (-1, -99, "iw_err.h", ["iw", "mpa", "ddp", "rdmap", "iwv", "rpcrdma"]),
    "IW_EMPA_": (-100, -199, "mpa.h", ["mpa", "rdmap", "iwv", "rpcrdma"]),
    "IW_EDDP_": (-200, -299, "ddp.h", ["ddp", "rdmap", "iwv", "rpcrdma"]),
    "IW_ERDMAP_": (-300, -399, "rdmap.h", ["rdmap", "iwv", "rpcrdma"]),
    "IW_ERPC_": (-400, -499, "rpcrdma_wire.h", ["rpcrdma"]),
}
FUNCS = ["iw", "mpa", "ddp", "rdmap", "iwv", "rpcrdma"]
ESYS_BASE = 1000

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def layer_of(name):
    for prefix in RANGES:
        if prefix != "common" and name.startswith(prefix):
            return prefix
    return "common"


def read_codes(incdir):
    codes = {}
    pat = re.compile(r"^\s*(IW_(?:OK|E[A-Z0-9_]+))\s*=\s*(-?\d+)\s*,", re.M)
    for hdr in sorted(os.listdir(incdir)):
        if not hdr.endswith(".h"):
            continue
        text = open(os.path.join(incdir, hdr)).read()
        for name, val in pat.findall(text):
            if name in codes:
                fail(f"{name} defined twice")
            codes[name] = (int(val), hdr)
    return codes


def names(prog, values):
    out = subprocess.run([prog] + [str(v) for v in values], check=True,
                         capture_output=True, text=True).stdout
    said = {}
    for line in out.splitlines():
        code, fn, name, text = line.split("\t")
        said[(int(code), fn)] = (name, text)
    return said


def main():
    prog, incdir = sys.argv[1], sys.argv[2]
    codes = read_codes(incdir)
    if len(codes) < 60:
        fail(f"only {len(codes)} codes found in {incdir}: the parser is broken")
    by_value = {}
    for name, (val, hdr) in codes.items():
        if val in by_value:
            fail(f"{name} and {by_value[val]} share the value {val}")
        by_value[val] = name
        first, last, want_hdr, _ = RANGES[layer_of(name)]
        if name != "IW_OK" and not (last <= val <= first):
            fail(f"{name} = {val} is outside its range {first}..{last}")
        if hdr != want_hdr:
            fail(f"{name} is declared in {hdr}, not its layer's {want_hdr}")

    # every value of every range: the named ones and the gaps
    values = sorted(set(list(range(-499, 1)) + list(by_value)))
    sys_errnos = sorted(errno.errorcode)
    sys_values = [-(ESYS_BASE + e) for e in sys_errnos]
    said = names(prog, values + sys_values)

    for val in values:
        name = by_value.get(val)
        for fn in FUNCS:
            got_name, got_text = said[(val, fn)]
            if name is not None and fn in RANGES[layer_of(name)][3]:
                if got_name != name:
                    fail(f"{fn}_errname({val}) = {got_name}, want {name}")
                if got_text in ("unknown error", "") or len(got_text) < 4:
                    fail(f"{fn}_strerror({name}) = {got_text!r}")
            elif got_name != "IW_E?" or got_text != "unknown error":
                what = name or "an unassigned value"
                fail(f"{fn}_errname({val}) ({what}) = {got_name} / {got_text!r}, "
                     "want IW_E? / 'unknown error'")

    for e, val in zip(sys_errnos, sys_values):
        if val in by_value:
            fail(f"IW_ESYS({errno.errorcode[e]}) = {val} is also {by_value[val]}")
        for fn in FUNCS:
            got_name, got_text = said[(val, fn)]
            if got_name != errno.errorcode[e] and not (
                    got_name in ("EWOULDBLOCK", "EAGAIN", "EDEADLOCK", "EDEADLK",
                                 "ENOTSUP", "EOPNOTSUPP")):
                fail(f"{fn}_errname(IW_ESYS({errno.errorcode[e]})) = {got_name}")
            if got_text != os.strerror(e):
                fail(f"{fn}_strerror(IW_ESYS({errno.errorcode[e]})) = {got_text!r}, "
                     f"want {os.strerror(e)!r}")
        if -e in by_value:
            print(f"note: -{errno.errorcode[e]} ({-e}) would be {by_value[-e]}; "
                  f"IW_ESYS keeps it at {val}")

    print(f"{len(codes)} codes in {len(RANGES)} ranges, {len(sys_errnos)} errno values checked")
    if failures:
        print(f"{len(failures)} failures")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
