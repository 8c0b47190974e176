#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_gw_rpc.

usage: gen_gw_rpc_seeds.py [REPO_ROOT]

Each seed is two octets of record bound (16 + value), one octet of chunk
seed, then a TCP byte stream as an NFS client or server sends it to
iwnfsgw: ONC RPC messages (RFC 5531 §9) in record marking (§11) - a NULL
call, an NFSv3 GETATTR and WRITE call, a reply, one record split into
several fragments, an empty fragment, a stream ending inside a header and
inside a fragment, and records at, over and far over the bound.  Run once
after a change of the target's input layout; the generated files are
committed.  It empties the corpus folder first.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seedlib import write_corpus  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')


def call(xid, prog, vers, proc, body=b''):
    # AUTH_SYS credential with an empty machine name, AUTH_NONE verifier
    cred = struct.pack('>IIIII', 0x5eed, 0, 0, 0, 0)
    return (struct.pack('>IIIIII', xid, 0, 2, prog, vers, proc) +
            struct.pack('>II', 1, len(cred)) + cred + struct.pack('>II', 0, 0) + body)


def reply(xid, body=b''):
    return struct.pack('>IIIIII', xid, 1, 0, 0, 0, 0) + body


def rm(msg, frag=0):
    if not frag:
        return struct.pack('>I', 0x80000000 | len(msg)) + msg
    out = b''
    for i in range(0, len(msg), frag):
        part = msg[i:i + frag]
        last = i + frag >= len(msg)
        out += struct.pack('>I', (0x80000000 if last else 0) | len(part)) + part
    return out


def seed(bound, chunk, stream):
    return struct.pack('>HB', bound, chunk) + stream


fh = struct.pack('>I', 32) + bytes(range(32))
getattr3 = call(1, 100003, 3, 1, fh)
write3 = call(2, 100003, 3, 7, fh + struct.pack('>QII', 0, 100, 2) + struct.pack('>I', 100) +
              b'w' * 100)
seeds = {
    'null-call': seed(4096, 0, rm(call(7, 100003, 3, 0))),
    'getattr-write': seed(4096, 3, rm(getattr3) + rm(write3)),
    'reply': seed(4096, 5, rm(reply(1, struct.pack('>I', 0) + b'\0' * 84))),
    'fragments': seed(4096, 9, rm(write3, 16)),
    'empty-fragment': seed(4096, 1, struct.pack('>I', 0) + rm(getattr3)),
    'empty-record': seed(4096, 2, struct.pack('>I', 0x80000000) + rm(getattr3)),
    'cut-header': seed(4096, 4, rm(getattr3) + b'\x80\x00'),
    'cut-fragment': seed(4096, 6, rm(write3)[:60]),
    'at-bound': seed(len(write3) - 16, 8, rm(write3)),
    'over-bound': seed(len(write3) - 17, 8, rm(write3)),
    'over-bound-fragments': seed(64 - 16, 11, rm(write3, 24)),
    'huge-length': seed(4096, 13, struct.pack('>I', 0xffffffff) + b'x' * 8),
    'short-record': seed(4096, 17, rm(b'\x01\x02\x03')),
}
write_corpus(os.path.join(root, 'fuzz', 'corpus', 'fuzz_gw_rpc'), seeds)
