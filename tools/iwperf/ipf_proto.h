/* SPDX-License-Identifier: MIT */
/*
 * ipf_proto.h - iwperf's wire protocol: the control messages (HELLO,
 * WELCOME, DONE / CREDIT / RESULT), the --tcp-baseline Read request and the
 * data pattern of --verify.  The man page (iwperf(1), CONTROL PROTOCOL) is
 * the specification; this file is its one implementation.
 *
 * Theory of operation.
 *
 * Sans-I/O.  Encoders write into a caller's buffer of the message's exact
 * length and cannot fail; decoders read a caller's buffer of `len` octets
 * (any length, any content: it came from the peer), never read past it, and
 * either fill the struct and return IPF_OK, or return one negative IPF_E_*
 * code saying the first thing that is wrong.  No allocation, no globals, no
 * I/O: the unit tests (test/tools/test_ipf_proto.c) and the libFuzzer
 * target (fuzz/fuzz_iwperf_proto.c) drive the decoders with nothing else.
 *
 * Every field is checked, in this order: length too short (IPF_E_SHORT),
 * magic, version (so another version of a longer message says VERSION, not
 * LONG), octets past the end (IPF_E_LONG), reserved octets and fields the
 * message does not use (IPF_E_RESERVED), then each field against its range
 * (IPF_E_OP ... IPF_E_COUNT).  A decoded message therefore always encodes
 * back to the very octets it came from, with one exception kept for older
 * clients: a HELLO without a target buffer does not check `addr` (iwperf
 * before the split sent its buffer's address there), and encodes it as 0.
 *
 * Control messages on the Send queue are 40 octets, or 48 (8 zero octets of
 * padding) when --size is 40, so a receive's length alone tells data from
 * control (ipf_ctrl_len).  Over TCP, RESULT is always 40 octets.
 *
 * The data pattern: octet j of message i is octet j % 8 (little-endian) of
 * the 64-bit word pat_word(msg_key(seed, i), j / 8), splitmix64 mixing, so
 * either end computes any octet of any message from the HELLO's seed.
 */
#ifndef IWPERF_IPF_PROTO_H
#define IWPERF_IPF_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPF_MAGIC   0x49575046u /* "IWPF" */
#define IPF_VERSION 1

/* Message lengths. */
#define IPF_HELLO_LEN	 64
#define IPF_WELCOME_LEN	 64
#define IPF_CTRL_LEN	 40
#define IPF_CTRL_LEN_ALT 48 /* when --size is 40: control must differ from data in length */
#define IPF_REQ_LEN	 8  /* --tcp-baseline Read request: the message index */
#define IPF_REASON_OFF	 8  /* WELCOME: where a refusal's text starts */
#define IPF_REASON_MAX	 (IPF_WELCOME_LEN - IPF_REASON_OFF) /* 56 octets, NUL-padded */

/* Limits the decoders enforce (and the command line, for the client's side). */
#define IPF_SIZE_MAX	(256u << 20) /* message size */
#define IPF_DEPTH_MAX	1024u	     /* work requests in flight per connection */
#define IPF_QPS_MAX	64u	     /* connections of one test */
#define IPF_CREDITS_MAX 2048u	     /* receives the server posts for Sends */
#define IPF_MEM_MAX	(256u << 20) /* buffer octets one connection pins per side */

/*
 * The operations.  4 to 6 are RFC 7306 (iWARP only; both QPs are created with
 * it, as nothing negotiates it): Fetch-and-Add of 1 and Compare-and-Swap to
 * one 8-octet word of the server's buffer (--size is 8), and RDMA Write with
 * Immediate Data.  Protocol version 1 grew them: a server that predates them
 * refuses them as an unknown operation, and nothing else changed.
 */
enum ipf_op {
	IPF_OP_WRITE = 1,
	IPF_OP_READ = 2,
	IPF_OP_SEND = 3,
	IPF_OP_FADD = 4,
	IPF_OP_CSWAP = 5,
	IPF_OP_WRITE_IMM = 6,
	IPF_OP_LAST = IPF_OP_WRITE_IMM,
};

#define IPF_ATOMIC_SIZE 8 /* the one --size of the atomic operations */

static inline bool ipf_op_atomic(int op)
{
	return op == IPF_OP_FADD || op == IPF_OP_CSWAP;
}

/* An RFC 7306 operation: both QPs need iwv_qp_init_attr.rfc7306. */
static inline bool ipf_op_rfc7306(int op)
{
	return ipf_op_atomic(op) || op == IPF_OP_WRITE_IMM;
}

/* HELLO flags. */
#define IPF_HF_PINGPONG 0x01
#define IPF_HF_VERIFY	0x02
#define IPF_HF_TCP	0x04
/* RDMA Write ping-pong, both ends waiting on memory (--wait memory) */
#define IPF_HF_WAIT_MEM 0x08
#define IPF_HF_KNOWN	(IPF_HF_PINGPONG | IPF_HF_VERIFY | IPF_HF_TCP | IPF_HF_WAIT_MEM)

/* WELCOME status. */
enum ipf_welcome_status { IPF_WELCOME_OK = 0, IPF_WELCOME_REFUSED = 1 };

/* Control message types and RESULT status. */
enum ipf_ctrl_type { IPF_CTRL_DONE = 1, IPF_CTRL_RESULT = 2, IPF_CTRL_CREDIT = 3 };
enum ipf_res_status { IPF_RES_OK = 0, IPF_RES_VERIFY = 1, IPF_RES_PROTO = 2 };

/* What a decoder refuses (0 is IPF_OK). */
enum ipf_err {
	IPF_OK = 0,
	IPF_E_SHORT = -1,    /* fewer octets than the message has */
	IPF_E_MAGIC = -2,    /* not "IWPF": not an iwperf peer */
	IPF_E_VERSION = -3,  /* another protocol version */
	IPF_E_LONG = -4,     /* octets after the end of the message */
	IPF_E_RESERVED = -5, /* a reserved octet, the padding or an unused field is not zero */
	IPF_E_OP = -6,	     /* HELLO: operation not one of enum ipf_op */
	IPF_E_FLAGS = -7,    /* HELLO: unknown flag bits */
	IPF_E_SIZE = -8,     /* HELLO: size not 1 to IPF_SIZE_MAX (atomics: not 8) */
	IPF_E_DEPTH = -9,    /* HELLO: depth not 1 to IPF_DEPTH_MAX */
	IPF_E_QPS = -10,     /* HELLO: qps not 1 to IPF_QPS_MAX, or qp index not below qps */
	IPF_E_NOBUF = -11,   /* HELLO: RDMA Write ping-pong without a target buffer */
	IPF_E_STATUS = -12,  /* WELCOME or control: status unknown (or set where none belongs) */
	IPF_E_REASON =
		-13, /* WELCOME: refusal text empty, not printable ASCII, or not NUL-padded */
	IPF_E_LENGTH = -14,  /* WELCOME: buffer length above IPF_MEM_MAX */
	IPF_E_CREDITS = -15, /* WELCOME: credits above IPF_CREDITS_MAX, batch 0 or above them */
	IPF_E_TYPE = -16,    /* control: not DONE, RESULT or CREDIT */
	IPF_E_COUNT = -17,   /* CREDIT: count not 1 to IPF_CREDITS_MAX */
	IPF_E_COMBO = -18, /* HELLO: an RFC 7306 operation with tcp, or write-imm with ping-pong */
	IPF_E_LAST = IPF_E_COMBO,
};

/*
 * HELLO, client -> server (MPA Request private data, or the first 64
 * octets of a TCP stream).  addr/rkey/length: the client's buffer the
 * server writes into (RDMA Write ping-pong over iWARP only; else zero).
 */
struct ipf_hello {
	uint8_t op;    /* enum ipf_op */
	uint8_t flags; /* IPF_HF_* */
	uint32_t size, depth;
	uint16_t qp_index, qps;
	uint64_t seed; /* verification pattern of this connection */
	uint64_t addr;
	uint32_t rkey, length;
	uint64_t test_id; /* the same on every connection of one client run */
};

/*
 * WELCOME, server -> client (MPA Reply private data, with the Reject bit
 * for a refusal; or the first 64 octets back over TCP).  Accepted: the
 * server's buffer (RDMA Write and Read; over TCP only the length, which
 * tells the Read slot count) and the Send credits.  Refused: the reason.
 */
struct ipf_welcome {
	uint8_t status; /* enum ipf_welcome_status */
	char reason[IPF_REASON_MAX + 1];
	uint64_t addr, length;
	uint32_t rkey, credits, credit_batch;
};

/*
 * DONE (client: messages and octets moved), CREDIT (server: count =
 * receives reposted), RESULT (server: status, what it saw, and for a failed
 * check the message index and offset of the first bad octet).  For the
 * atomic operations what the server saw is the target word its connections
 * share: RESULT's count is the word's value when the server answered that
 * DONE (and bytes 8 times it).
 */
struct ipf_ctrl {
	uint8_t type;	/* enum ipf_ctrl_type */
	uint8_t status; /* enum ipf_res_status (RESULT only) */
	uint64_t count, bytes, bad, bad_off;
};

/* "IPF_E_SHORT", ... ("IPF_OK" for 0, "IPF_E_?" for anything else). */
const char *ipf_errname(int err);
/* One phrase: "message size out of range", ... ("unknown error" for anything else). */
const char *ipf_strerror(int err);

/* "write", "read", "send", "atomic-fadd", "atomic-cswap", "write-imm"; "?" for anything else. */
const char *ipf_op_name(int op);
/* RESULT status as text: "ok", "data verification failed", "protocol error". */
const char *ipf_res_status_str(int status);

/* p: IPF_HELLO_LEN octets. */
void ipf_hello_encode(const struct ipf_hello *h, uint8_t *p);
int ipf_hello_decode(const uint8_t *p, size_t len, struct ipf_hello *h);

/*
 * p: IPF_WELCOME_LEN octets.  A refusal (status != 0) carries only the
 * reason, cut to IPF_REASON_MAX octets; an accepted WELCOME only the rest.
 */
void ipf_welcome_encode(const struct ipf_welcome *w, uint8_t *p);
/* IPF_OK for a well-formed refusal too: the caller looks at status. */
int ipf_welcome_decode(const uint8_t *p, size_t len, struct ipf_welcome *w);
/* A refusal with `why` (cut to IPF_REASON_MAX octets) into p. */
void ipf_welcome_refusal(const char *why, uint8_t *p);

/* The length of control messages next to data messages of `size` octets. */
static inline uint32_t ipf_ctrl_len(uint32_t size)
{
	return size == IPF_CTRL_LEN ? IPF_CTRL_LEN_ALT : IPF_CTRL_LEN;
}

/* p: len octets, IPF_CTRL_LEN or IPF_CTRL_LEN_ALT (the padding is zeroed). */
void ipf_ctrl_encode(const struct ipf_ctrl *c, uint8_t *p, size_t len);
/* Either length; the padding of the longer form must be zero. */
int ipf_ctrl_decode(const uint8_t *p, size_t len, struct ipf_ctrl *c);

/*
 * Any of the three kinds by number, for what walks them all (the unit tests,
 * the fuzz target).  len: the message's length (a control message: 40 or 48).
 */
enum ipf_kind { IPF_KIND_HELLO, IPF_KIND_WELCOME, IPF_KIND_CTRL };

union ipf_msg {
	struct ipf_hello hello;
	struct ipf_welcome welcome;
	struct ipf_ctrl ctrl;
};

int ipf_decode(enum ipf_kind kind, const uint8_t *p, size_t len, union ipf_msg *m);
void ipf_encode(enum ipf_kind kind, const union ipf_msg *m, uint8_t *p, size_t len);

/* --tcp-baseline Read request: the index of the message asked for. */
void ipf_req_encode(uint64_t index, uint8_t *p);
uint64_t ipf_req_decode(const uint8_t *p);

/* The data pattern (see the top). */
uint64_t ipf_msg_key(uint64_t seed, uint64_t index);
void ipf_pat_fill(uint8_t *p, size_t len, uint64_t key);
/* Offset of the first octet of p[0..len) that differs from the pattern, or -1. */
int64_t ipf_pat_check(const uint8_t *p, size_t len, uint64_t key);
/* splitmix64's finaliser (a bijective mixer; also seeds the connections). */
uint64_t ipf_mix64(uint64_t x);

/* RDMA Write ping-pong: the last octet of message i; never 0, the buffers' initial value. */
static inline uint8_t ipf_pp_flag(uint64_t i)
{
	return (uint8_t)(i % 255 + 1);
}

#endif
