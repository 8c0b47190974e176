#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-layers.py [SRCDIR] - dependencies point down only.

The library layers, bottom to top (docs/architecture.md section 1):

  common  <  mpa, ddp  <  rdmap  <  verbs  <  rpcrdma

Every #include in a layer's folder and in its public headers
(include/iwarp/) must name a header of the same layer or of a layer below
it: common/ includes no header of MPA, DDP, RDMAP, verbs or RPC-over-RDMA,
RDMAP none of verbs, and so on.  MPA and DDP are independent of each other.
Exit 1 with one line per offending #include.
"""
import os
import re
import sys

RANK = {"common": 0, "mpa": 1, "ddp": 1, "rdmap": 2, "verbs": 3, "rpcrdma": 4}
# public headers -> layer
PUBLIC = {
    "iw_err.h": "common", "mpa.h": "mpa", "ddp.h": "ddp", "rdmap.h": "rdmap",
    "rdmap_qp.h": "rdmap", "iwv.h": "verbs", "iwcm.h": "verbs",
    "rpcrdma_wire.h": "rpcrdma", "rpcrdma_ulb.h": "rpcrdma", "rpcrdma_nfs.h": "rpcrdma",
    "rpcrdma.h": "rpcrdma",
}
INC = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def private_headers(root):
    """header name -> layer, for the private headers of each layer's folder"""
    owner = {}
    for layer in RANK:
        for d, _, files in os.walk(os.path.join(root, layer)):
            for f in files:
                if f.endswith(".h"):
                    owner[f] = layer
    return owner


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    private = private_headers(root)
    files = []
    for layer in RANK:
        for d, _, names in os.walk(os.path.join(root, layer)):
            files += [(layer, os.path.join(d, n)) for n in names if n.endswith((".c", ".h"))]
    for hdr, layer in PUBLIC.items():
        files.append((layer, os.path.join(root, "include", "iwarp", hdr)))
    bad = 0
    for layer, path in files:
        for inc in INC.findall(open(path).read()):
            name = os.path.basename(inc)
            if inc.startswith("iwarp/"):
                if name not in PUBLIC:
                    print(f"{os.path.relpath(path, root)}: {inc}: public header of no known layer")
                    bad += 1
                    continue
                dep = PUBLIC[name]
            elif name in private and "/" not in inc:
                dep = private[name]
            else:
                continue  # the C library, liburing, ...
            if dep != layer and RANK[dep] >= RANK[layer]:
                print(f"{os.path.relpath(path, root)}: {layer} includes {inc} of {dep}")
                bad += 1
    print(f"{len(files)} files checked, {bad} includes against the layering")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
