#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_iwperf_proto.

usage: gen_iwperf_proto_seeds.py [REPO_ROOT]

The messages of iwperf's control protocol as iwperf(1), CONTROL PROTOCOL,
lays them out (built here with struct.pack, apart from the C encoder): a
HELLO of each test (the RFC 7306 operations too: fetch-and-add,
compare-and-swap, write-imm, and the HELLOs refused for them), WELCOME accepted and refused, DONE, CREDIT and RESULT in
both lengths; and the edge cases the decoders must refuse - a message one
octet short or long, another version, a reserved octet set, a field one past
its range, a refusal that is not text, and the start of an MPA Request (what
a --tcp-baseline server reads from an iWARP client).  Run once after a
change of the protocol; the generated files are committed, this script only
documents where they came from.  It empties the corpus folder first.
"""
import os
import pathlib
import shutil
import struct
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
MAGIC = 0x49575046
WRITE, READ, SEND, FADD, CSWAP, WRITE_IMM = 1, 2, 3, 4, 5, 6
PP, VERIFY, TCP = 1, 2, 4
DONE, RESULT, CREDIT = 1, 2, 3


def hello(op, flags, size, depth=32, idx=0, qps=1, seed=0x0123456789abcdef, addr=0, rkey=0,
          length=0, test_id=0x1122334455667788, version=1):
    return struct.pack('>IBBBxIIHH4xQQIIQ8x', MAGIC, version, op, flags, size, depth, idx, qps,
                       seed, addr, rkey, length, test_id)


def welcome(addr=0, length=0, rkey=0, credits=0, batch=0):
    return struct.pack('>IBBxxQQIII28x', MAGIC, 1, 0, addr, length, rkey, credits, batch)


def refusal(reason):
    return struct.pack('>IBBxx', MAGIC, 1, 1) + reason.ljust(56, b'\0')[:56]


def ctrl(typ, status=0, count=0, nbytes=0, bad=0, bad_off=0, alt=False):
    return struct.pack('>IBBxxQQQQ', MAGIC, typ, status, count, nbytes, bad, bad_off) + \
        (bytes(8) if alt else b'')


seeds = {
    # valid: one HELLO per kind of test
    'hello-write-bw': hello(WRITE, 0, 65536),
    'hello-write-pingpong-buffer': hello(WRITE, PP | VERIFY, 64, 1, 1, 2, addr=0x7f0000001000,
                                         rkey=0x1234, length=64),
    'hello-read-bw-qps64': hello(READ, VERIFY, 4096, 1024, 63, 64),
    'hello-send-pingpong': hello(SEND, PP, 1),
    'hello-tcp-write': hello(WRITE, TCP | PP, 256 << 20),
    'hello-fadd-bw-verify': hello(FADD, VERIFY, 8, 16),
    'hello-cswap-pingpong': hello(CSWAP, PP | VERIFY, 8, 1, 3, 4),
    'hello-write-imm-bw': hello(WRITE_IMM, VERIFY, 4096, 32),
    # valid: the RESULT of an atomic test (count: the target word)
    'ctrl-result-atomic-word': ctrl(RESULT, 0, 1000, 8000),
    # valid: what a server answers
    'welcome-rdma-buffer': welcome(0x560000abc000, 32 << 16, 0x11223344),
    'welcome-send-credits': welcome(credits=64, batch=16),
    'welcome-refused': refusal(b'message size out of range'),
    'welcome-refused-56': refusal(b'r' * 56),
    # valid: control messages, 40 octets and the 48-octet form next to 40-octet data
    'ctrl-done': ctrl(DONE, 0, 5000, 5000 * 65536),
    'ctrl-credit': ctrl(CREDIT, 0, 16),
    'ctrl-result-ok': ctrl(RESULT, 0, 5000, 5000 * 65536),
    'ctrl-result-verify-48': ctrl(RESULT, 1, 100, 4000, 7, 33, alt=True),
    'ctrl-done-48': ctrl(DONE, 0, 1, 40, alt=True),
    # refused
    'hello-short-63': hello(WRITE, 0, 65536)[:63],
    'hello-long-65': hello(WRITE, 0, 65536) + b'\0',
    'hello-version-2-long': hello(WRITE, 0, 65536, version=2) + bytes(16),
    'hello-reserved-7': hello(WRITE, 0, 65536)[:7] + b'\x01' + hello(WRITE, 0, 65536)[8:],
    'hello-size-256m-plus-1': hello(SEND, 0, (256 << 20) + 1),
    'hello-depth-1025': hello(READ, 0, 64, 1025),
    'hello-qp-index-eq-qps': hello(WRITE, 0, 64, idx=4, qps=4),
    'hello-write-pingpong-no-buffer': hello(WRITE, PP, 64),
    'hello-send-with-rkey': hello(SEND, 0, 64, rkey=1, length=64),
    'hello-flags-8': hello(READ, 8, 64),
    'hello-op-7': hello(7, 0, 8),
    'hello-fadd-size-16': hello(FADD, 0, 16),
    'hello-cswap-size-7': hello(CSWAP, PP, 7),
    'hello-fadd-tcp': hello(FADD, TCP, 8),
    'hello-write-imm-tcp': hello(WRITE_IMM, TCP, 64),
    'hello-write-imm-pingpong': hello(WRITE_IMM, PP, 64),
    'hello-reserved-63': hello(READ, 0, 64)[:63] + b'\x01',
    'welcome-length-256m-plus-1': welcome(0x1000, (256 << 20) + 1, 7),
    'welcome-status-2': struct.pack('>IBBxx', MAGIC, 1, 2) + bytes(56),
    'welcome-credit-batch-over': welcome(credits=4, batch=5),
    'welcome-refused-control-char': refusal(b'bell\x07'),
    'welcome-refused-junk-after-nul': refusal(b'why\0junk'),
    'ctrl-credit-0': ctrl(CREDIT, 0, 0),
    'ctrl-result-status-3': ctrl(RESULT, 3),
    'ctrl-result-ok-with-bad': ctrl(RESULT, 0, 1, 1, 0, 9),
    'ctrl-type-4': ctrl(4),
    'ctrl-padding-set': ctrl(DONE, alt=True)[:47] + b'\x01',
    'ctrl-44': ctrl(DONE) + bytes(4),
    'mpa-request-rev2': b'MPA ID Req Frame' + bytes([0x40, 2, 0, 68, 0x00, 0x10, 0x00, 0x10]) +
    hello(WRITE, 0, 65536),
}

corpus = pathlib.Path(root, 'fuzz/corpus/fuzz_iwperf_proto')
shutil.rmtree(corpus, ignore_errors=True)
corpus.mkdir(parents=True)
for name, data in seeds.items():
    (corpus / name).write_bytes(data)
print(f'{len(seeds)} seeds in {corpus}')
