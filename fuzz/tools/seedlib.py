# SPDX-License-Identifier: MIT
"""What the seed generators of fuzz/tools share: reading a classic pcap file
and writing a corpus directory (python3 standard library only)."""

import hashlib
import os
import struct


def read_pcap(path):
    """Classic pcap (not pcapng): (link type, [(frame octets, wire length)])."""
    with open(path, 'rb') as f:
        b = f.read()
    magic = struct.unpack('<I', b[:4])[0] if len(b) >= 24 else 0
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        e = '<'
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        e = '>'
    else:
        raise SystemExit('%s: not a classic pcap file' % path)
    linktype = struct.unpack(e + 'I', b[20:24])[0]
    pkts, off = [], 24
    while off + 16 <= len(b):
        _, _, incl, orig = struct.unpack(e + 'IIII', b[off:off + 16])
        pkts.append((b[off + 16:off + 16 + incl], orig))
        off += 16 + incl
    return linktype, pkts


def write_corpus(outdir, seeds):
    """Replace the files of `outdir` with `seeds`: a dict name -> octets, or a
    list of octets named by their SHA-1.  Returns (files, octets)."""
    if not isinstance(seeds, dict):
        seeds = {hashlib.sha1(s).hexdigest(): s for s in seeds}
    os.makedirs(outdir, exist_ok=True)
    for old in os.listdir(outdir):
        os.unlink(os.path.join(outdir, old))
    for name, octets in sorted(seeds.items()):
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(octets)
    return len(seeds), sum(len(s) for s in seeds.values())
