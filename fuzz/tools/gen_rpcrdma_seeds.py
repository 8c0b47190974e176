#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_rpcrdma_hdr (files named by the SHA-1 of their content).

usage: gen_rpcrdma_seeds.py [REPO_ROOT [CAPTURES_DIR]]

Seeds: every header of test/vectors/rpcrdma.json (with its payload), one RDMAP
Send payload of each distinct header shape found by tshark in the Linux
NFS/RDMA captures (test/captures unless CAPTURES_DIR names another folder, via
test/rpcrdma/rpcrdma_tshark.py; skipped without tshark), crafted headers for
each decoder error (bad discriminator, counts over the limits, empty
RDMA_NOMSG, bad positions, unknown procedure / version / error code,
RDMA_MSGP, RDMA_DONE), RFC 8797 private data with and without our extension
block, and bare RPC headers.
Run once after changing the vectors or the codec; the generated files are
committed, this script only documents where they came from.  It empties the
folder first, so the minimized fuzzer finds committed there as well
(docs/fuzzing.md) are deleted: restore them with git before committing.
"""
import json
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seedlib  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
captures = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, 'test', 'captures')
outdir = os.path.join(root, 'fuzz', 'corpus', 'fuzz_rpcrdma_hdr')


def words(*ws):
    return b''.join(struct.pack('>I', w & 0xffffffff) for w in ws)


def seg(h, l, o):
    return words(h, l, o >> 32, o)


def fixed(proc, vers=1, xid=0x1234, credits=32):
    return words(xid, vers, credits, proc)


seeds = []

# Known-answer vectors (the framed one as its Send payload).
vec = json.load(open(os.path.join(root, 'test', 'vectors', 'rpcrdma.json')))
for v in vec['vectors']:
    b = bytes.fromhex(v['bytes_hex'])
    if v['expect'].get('mpa_framed'):
        b = b[20:2 + v['expect']['ulpdu_length']]
    seeds.append(b)

# Crafted headers, one per decoder path.
nfs_null = words(0x1234, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
seeds += [
    fixed(0) + words(0, 0, 0) + nfs_null,
    fixed(0) + words(2, 0, 0),                                  # discriminator 2
    fixed(0) + words(0, 0, 7),                                  # reply chunk disc 7
    fixed(1) + words(0, 0, 0),                                  # NOMSG empty
    fixed(1) + words(0, 1, 0, 0, 0),                            # NOMSG, empty Write chunk
    fixed(0) + words(1, 2) + seg(1, 4, 0) + words(0, 0, 0),     # position 2
    fixed(0) + words(1, 16) + seg(1, 4, 0) + words(1, 8) + seg(2, 4, 0) + words(0, 0, 0),
    fixed(0) + words(1, 8) + seg(1, 4, 0) + words(1, 8) + seg(2, 4, 0) + words(1, 16) +
    seg(3, 4, 0) + words(0, 0, 0),
    fixed(0) + b''.join(words(1, 4 * i) + seg(i, 4, i) for i in range(9)) + words(0, 0, 0),
    fixed(0) + words(0, 1, 17) + b''.join(seg(i, 1, i) for i in range(17)) + words(0, 0),
    fixed(0) + words(0, 1, 0xffffffff, 0, 0),
    fixed(0) + words(0) + words(1, 0) * 9 + words(0, 0),
    fixed(0) + words(0) + (words(1, 16) + seg(1, 1, 1) * 16) * 5 + words(0, 0),
    fixed(2) + words(4096, 1024, 0, 0, 0),                      # RDMA_MSGP
    fixed(2) + words(4096, 1024),
    fixed(3),                                                   # RDMA_DONE
    fixed(4) + words(2),                                        # ERR_CHUNK
    fixed(4) + words(1, 1, 1),                                  # ERR_VERS
    fixed(4, vers=2) + words(1, 1, 1),                          # ERR_VERS of version 2
    fixed(4) + words(9),                                        # unknown rdma_err
    fixed(5) + words(0, 0, 0),                                  # unknown proc
    fixed(0, vers=2) + words(0, 0, 0),                          # version 2
    fixed(0)[:15],
    # RFC 8797 private data: Linux's, ours with the extension block, a foreign block.
    bytes.fromhex('f6ab0e1801010303'),
    bytes.fromhex('f6ab0e18010107ff6977525001010000'),
    bytes.fromhex('f6ab0e1802010303'),
    # Bare RPC headers: AUTH_SYS call, accepted / mismatch / denied replies.
    words(7, 0, 2, 100003, 3, 7, 1, 32, 0x5eed, 9) + b'localhost\0\0\0' +
    words(1000, 1000, 0, 0, 0, 0xfeedface),
    words(7, 1, 0, 0, 0, 0, 0),
    words(7, 1, 0, 0, 0, 2, 3, 4),
    words(7, 1, 1, 0, 2, 2),
    words(7, 1, 1, 1, 2),
]

# One Send payload of each header shape tshark finds in the Linux captures.
if shutil.which('tshark') and os.path.isdir(captures):
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(root, 'test', 'rpcrdma'))
    import rpcrdma_tshark  # noqa: E402
    shapes = {}
    for name in rpcrdma_tshark.CAPTURES:
        path = os.path.join(captures, name)
        if not os.path.isfile(path):
            continue
        msgs, _ = rpcrdma_tshark.tshark_messages(path)
        for m in msgs:
            f = m['fields']
            proc = dict(f).get('rpcordma.msg_type')
            counts = tuple(v for k, v in f if k.endswith('_count'))
            rpc = m['rpc'] or {}
            key = (proc, counts, rpc.get('rpc.msgtyp'), rpc.get('rpc.procedure'),
                   rpc.get('rpc.programversion'))
            if key not in shapes:
                shapes[key] = m['payload']
    seeds += list(shapes.values())
else:
    print('tshark or captures missing: no capture seeds')

print(seedlib.write_corpus(outdir, seeds)[0], 'seeds')
