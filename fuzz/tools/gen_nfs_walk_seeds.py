#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_nfs_walk.

usage: gen_nfs_walk_seeds.py [REPO_ROOT]

Input layout of the target: octet 0 selects the program/version (0 NFSv2,
1 NFSv3, 2 NFSv4 COMPOUND, 3 NFSv4 by procedure, 4 NFSACL, 5 NFSv3 with an
RPCSEC_GSS credential), octet 1 the procedure, the rest is the body.
Seeds: the NFS messages of test/nfs/data/nfs_captures.h (Linux over siw),
each with its arguments or results as the body, and hand-built bodies of the
items the captures lack (SYMLINK, READLINK, CREATE NF4LNK, failed READs, the
RFC 8267 §6.4.3 COMPOUND).  Files are named by the SHA-1 of their content.
The generated files are committed; this script documents where they came from.
"""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seedlib  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')


def w(*v):
    return b''.join(struct.pack('>I', x & 0xffffffff) for x in v)


def q(v):
    return struct.pack('>Q', v)


def opaque(b):
    return w(len(b)) + b + b'\0' * (-len(b) % 4)


seeds = []


def seed(sel, proc, body):
    seeds.append(bytes([sel, proc]) + body)


# Linux captures: the call's program/version/procedure decides the selector.
# At most two per procedure and direction (twelve for NFSv4 COMPOUNDs).
cap = open(os.path.join(root, 'test/nfs/data/nfs_captures.h')).read()
kinds = {}
for m in re.finditer(r'\{"([^"]+)",\s*"([0-9a-f]+)",\s*(\d+), (true|false), (\d+), (\d+), (\d+), (\d+),', cap):
    name, hexs, off, reply, prog, vers, proc, _ = m.groups()
    body = bytes.fromhex(hexs)[int(off):]
    prog, vers, proc = int(prog), int(vers), int(proc)
    kind = (prog, vers, proc, reply)
    kinds[kind] = kinds.get(kind, 0) + 1
    if kinds[kind] > (12 if (vers, proc) == (4, 1) else 2):
        continue
    if prog == 100003 and vers in (2, 3):
        seed(0 if vers == 2 else 1, proc, body)
    elif prog == 100003 and vers == 4:
        seed(2 if proc == 1 else 3, proc, body)
    elif prog == 100227:
        seed(4, proc, body)

fh3 = opaque(bytes(range(32)))
fattr3 = w(1, 0o644, 1, 0, 0) + q(100) + q(100) + q(0) + q(1) + q(2) + w(0) * 6
sattr3 = w(1, 0o777, 0, 0, 0, 1, 2, 5, 6)
# NFSv3
seed(1, 7, fh3 + q(0) + w(5, 2) + opaque(b'hello'))                  # WRITE call
seed(1, 10, fh3 + opaque(b'name') + sattr3 + opaque(b'../target'))   # SYMLINK call
seed(1, 6, w(0, 1) + fattr3 + w(5, 1) + opaque(b'abcde'))            # READ reply
seed(1, 6, w(0, 1) + fattr3 + w(5, 1) + w(5))                        # READ reply, reduced
seed(1, 6, w(70, 0))                                                 # READ reply, failed
seed(1, 5, w(0, 1) + fattr3 + opaque(b'/x/y'))                       # READLINK reply
seed(1, 6, fh3 + q(0) + w(65536))                                    # READ call (plan)
seed(1, 16, fh3 + q(0) + q(0) + w(8192))                             # READDIR call (plan)
seed(1, 17, fh3 + q(0) + q(0) + w(1024, 8192))                       # READDIRPLUS call
seed(5, 7, fh3 + q(0) + w(5, 2) + opaque(b'hello'))                  # GSS WRITE
# NFSv2
fh2 = bytes(range(32))
seed(0, 8, fh2 + w(0, 0, 3) + opaque(b'abc'))                        # WRITE call
seed(0, 13, fh2 + opaque(b'nm') + opaque(b'p/q') + w(0) * 8)         # SYMLINK call
seed(0, 6, w(0) + w(0) * 17 + opaque(b'data!'))                      # READ reply
seed(0, 5, w(0) + opaque(b'lnk'))                                    # READLINK reply
seed(0, 6, fh2 + w(0, 100, 100))                                     # READ call (plan)
# NFSv4
sid = w(1, 2, 3, 4)
seq = w(53) + bytes(16) + w(1, 0, 0, 0)
putfh = w(22) + opaque(bytes(16))
lookup = w(15) + opaque(b'f')
read = w(25) + sid + q(0) + w(4096)
readlink = w(27)
fattr4 = w(2, 0x18, 0x300000) + opaque(bytes(12))
seed(2, 1, opaque(b'tag') + w(1, 4) + seq + putfh + w(38) + sid + q(0) + w(2) + opaque(b'wdata')
     + w(9, 2, 0x18, 0x300000))
seed(2, 1, opaque(b'') + w(0, 3) + putfh + w(6, 5) + opaque(b'link/target') + opaque(b'nm')
     + fattr4 + w(10))
seed(2, 1, opaque(b'') + w(0, 9) + (putfh + lookup + read) + (putfh + lookup + readlink)
     + (putfh + lookup + read))
ok = w(0)
seed(2, 1, w(0) + opaque(b'') + w(9) + (w(22, 0) + w(15, 0) + w(25, 0, 0) + opaque(b'x' * 7)) * 1
     + w(22, 0) + w(15, 0) + w(27, 0) + opaque(b'a/b') + w(22, 0) + w(15, 0) + w(25, 0, 1)
     + opaque(b'yy'))
seed(2, 1, w(10011) + opaque(b'') + w(3) + w(22, 0) + w(25, 0, 0) + opaque(b'abc')
     + w(25, 10011))
seed(2, 1, w(0) + opaque(b'') + w(2) + w(9, 0) + fattr4 + w(10, 0) + opaque(bytes(20)))
seed(2, 1, opaque(b'') + w(0, 2) + w(24) + w(9, 2, 1 << 12, 0))      # GETATTR acl (plan)
seed(3, 0, b'')                                                      # NULL

print('%d seeds' % seedlib.write_corpus(os.path.join(root, 'fuzz/corpus/fuzz_nfs_walk'),
                                      seeds)[0])
