/* SPDX-License-Identifier: MIT */
/*
 * test_ipf_proto.c - iwperf's wire protocol (tools/iwperf/ipf_proto.h):
 * known-answer octets of every kind of message (HELLO, WELCOME accepted and
 * refused, DONE, CREDIT, RESULT in both lengths, the TCP Read request, the
 * data pattern), so an accidental change of the wire is caught; the round
 * trip of every message; and every malformed input - each length short of
 * the message, bad magic, bad version, octets past the end, each reserved
 * octet, each field out of its range - refused with its own code, the
 * output untouched.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipf_proto.h"
#include "th.h"

/* ---------------------------------------------------------------------- */
/* Known answers                                                           */
/* ---------------------------------------------------------------------- */

/* RDMA Write ping-pong over iWARP, verify: every field set. */
static const union ipf_msg hello_kat = {.hello = {
						.op = IPF_OP_WRITE,
						.flags = IPF_HF_PINGPONG | IPF_HF_VERIFY,
						.size = 0x10000,
						.depth = 32,
						.qp_index = 2,
						.qps = 4,
						.seed = 0x0123456789abcdefull,
						.addr = 0x00007f0012345000ull,
						.rkey = 0xa1b2c3d4,
						.length = 0x10000,
						.test_id = 0xfedcba9876543210ull,
					}};

static const uint8_t hello_kat_bytes[IPF_HELLO_LEN] = {
	0x49, 0x57, 0x50, 0x46, 0x01, 0x01, 0x03, 0x00, /* IWPF v1 write, pp|verify */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, /* size 65536, depth 32 */
	0x00, 0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, /* QP 2 of 4, reserved */
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, /* seed */
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00, /* addr */
	0xa1, 0xb2, 0xc3, 0xd4, 0x00, 0x01, 0x00, 0x00, /* rkey, length */
	0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10, /* test id */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* reserved */
};

/* RDMA Write and Read: the server's buffer; Send: credits. */
static const union ipf_msg welcome_kat = {.welcome = {
						  .status = IPF_WELCOME_OK,
						  .addr = 0x0000560000abc000ull,
						  .length = 32u << 16,
						  .rkey = 0x11223344,
						  .credits = 64,
						  .credit_batch = 16,
					  }};

static const uint8_t welcome_kat_bytes[IPF_WELCOME_LEN] = {
	0x49, 0x57, 0x50, 0x46, 0x01, 0x00, 0x00, 0x00, /* IWPF v1 accepted */
	0x00, 0x00, 0x56, 0x00, 0x00, 0xab, 0xc0, 0x00, /* addr */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, /* length 2 MiB */
	0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x40, /* rkey, credits 64 */
	0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, /* batch 16, reserved to 64 */
};

static const uint8_t refusal_kat_bytes[IPF_WELCOME_LEN] = {
	0x49, 0x57, 0x50, 0x46, 0x01, 0x01, 0x00, 0x00, /* IWPF v1 refused */
	'u',  'n',  'k',  'n',	'o',  'w',  'n',  ' ',	/* reason, NUL-padded */
	'o',  'p',  'e',  'r',	'a',  't',  'i',  'o',	/* */
	'n',
};

static const uint8_t done_kat_bytes[IPF_CTRL_LEN] = {
	0x49, 0x57, 0x50, 0x46, 0x01, 0x00, 0x00, 0x00, /* IWPF DONE */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x13, 0x88, /* count 5000 */
	0x00, 0x00, 0x00, 0x00, 0x13, 0x88, 0x00, 0x00, /* bytes 5000 x 65536 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* bad */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* bad_off */
};

static const uint8_t credit_kat_bytes[IPF_CTRL_LEN] = {
	0x49, 0x57, 0x50, 0x46, 0x03, 0x00, 0x00, 0x00, /* IWPF CREDIT */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, /* count 16 */
};

/* RESULT of a failed check, next to 40-octet data: the 48-octet form. */
static const uint8_t result_kat_bytes[IPF_CTRL_LEN_ALT] = {
	0x49, 0x57, 0x50, 0x46, 0x02, 0x01, 0x00, 0x00, /* IWPF RESULT, verify failed */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, /* count 100 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0xa0, /* bytes 4000 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* bad message 7 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, /* at offset 33 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* padding */
};

static const union ipf_msg refusal_kat = {.welcome = {
						  .status = IPF_WELCOME_REFUSED,
						  .reason = "unknown operation",
					  }};
static const union ipf_msg done_kat = {.ctrl = {IPF_CTRL_DONE, 0, 5000, 5000ull * 65536, 0, 0}};
static const union ipf_msg credit_kat = {.ctrl = {IPF_CTRL_CREDIT, 0, 16, 0, 0, 0}};
static const union ipf_msg result_kat = {
	.ctrl = {IPF_CTRL_RESULT, IPF_RES_VERIFY, 100, 4000, 7, 33}};

/*
 * One message of each kind: its struct, its octets, its coders, and the
 * lengths a decoder takes (control messages: 40, or 48 with zero padding).
 */
enum kat_id { K_HELLO, K_WELCOME, K_REFUSAL, K_DONE, K_CREDIT, K_RESULT };

static const struct kat {
	const char *what;
	enum ipf_kind kind;
	const union ipf_msg *msg;
	const uint8_t *bytes;
	size_t len, shortest, also;
} kats[] = {
	[K_HELLO] = {"HELLO", IPF_KIND_HELLO, &hello_kat, hello_kat_bytes, IPF_HELLO_LEN,
		     IPF_HELLO_LEN, 0},
	[K_WELCOME] = {"WELCOME", IPF_KIND_WELCOME, &welcome_kat, welcome_kat_bytes,
		       IPF_WELCOME_LEN, IPF_WELCOME_LEN, 0},
	[K_REFUSAL] = {"refusal", IPF_KIND_WELCOME, &refusal_kat, refusal_kat_bytes,
		       IPF_WELCOME_LEN, IPF_WELCOME_LEN, 0},
	[K_DONE] = {"DONE", IPF_KIND_CTRL, &done_kat, done_kat_bytes, IPF_CTRL_LEN, IPF_CTRL_LEN,
		    IPF_CTRL_LEN_ALT},
	[K_CREDIT] = {"CREDIT", IPF_KIND_CTRL, &credit_kat, credit_kat_bytes, IPF_CTRL_LEN,
		      IPF_CTRL_LEN, IPF_CTRL_LEN_ALT},
	[K_RESULT] = {"RESULT", IPF_KIND_CTRL, &result_kat, result_kat_bytes, IPF_CTRL_LEN_ALT,
		      IPF_CTRL_LEN, IPF_CTRL_LEN},
};

/* Encoding gives exactly the octets (and not one more), decoding them the struct. */
START_TEST(every_kind_of_message_has_known_octets)
{
	for (size_t i = 0; i < sizeof(kats) / sizeof(kats[0]); i++) {
		const struct kat *k = &kats[i];
		uint8_t p[IPF_WELCOME_LEN + 8], *exact = malloc(k->len);
		union ipf_msg d;

		memset(p, 0xee, sizeof(p));
		ipf_encode(k->kind, k->msg, p, k->len);
		for (size_t j = 0; j < k->len; j++)
			ck_assert_msg(p[j] == k->bytes[j], "%s octet %zu: 0x%02x, want 0x%02x",
				      k->what, j, p[j], k->bytes[j]);
		ck_assert_msg(p[k->len] == 0xee, "%s: octets written past the message", k->what);
		ck_assert_ptr_nonnull(exact);
		memcpy(exact, k->bytes, k->len);
		memset(&d, 0, sizeof(d)); /* the union past the message's own struct */
		ck_assert_msg(ipf_decode(k->kind, exact, k->len, &d) == IPF_OK,
			      "%s does not decode", k->what);
		ck_assert_msg(!memcmp(&d, k->msg, sizeof(d)), "%s decodes to other fields",
			      k->what);
		free(exact);
	}
}
END_TEST

START_TEST(req_and_ctrl_len_known_answers)
{
	static const uint8_t want[IPF_REQ_LEN] = {0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05};
	uint8_t p[IPF_REQ_LEN];

	ipf_req_encode(0x0102030405ull, p);
	ck_assert_mem_eq(p, want, sizeof(p));
	ck_assert_uint_eq(ipf_req_decode(want), 0x0102030405ull);
	ck_assert_uint_eq(ipf_ctrl_len(40), 48);
	ck_assert_uint_eq(ipf_ctrl_len(39), 40);
	ck_assert_uint_eq(ipf_ctrl_len(48), 40);
	ck_assert_uint_eq(ipf_ctrl_len(1), 40);
}
END_TEST

/* The --verify pattern (from a separate splitmix64 implementation). */
START_TEST(pattern_known_answers)
{
	static const uint8_t m0[20] = {0xa5, 0xec, 0x81, 0x83, 0x61, 0x97, 0x6a, 0x60, 0xe0, 0xda,
				       0xf7, 0x69, 0xb7, 0xc4, 0xb3, 0x73, 0xca, 0x84, 0xa3, 0xe6};
	static const uint8_t m7[12] = {0x78, 0x5d, 0xbc, 0x61, 0x91, 0x47,
				       0x01, 0x9c, 0x40, 0xfd, 0x62, 0x0c};
	uint8_t p[24];

	ck_assert_uint_eq(ipf_mix64(0), 0xe220a8397b1dcdafull); /* splitmix64's first output */
	ck_assert_uint_eq(ipf_msg_key(0x0123456789abcdefull, 0), 0x13182864bd1a9954ull);
	ck_assert_uint_eq(ipf_msg_key(0, 7), 0xb8b4c2977eabce45ull);
	memset(p, 0xee, sizeof(p));
	ipf_pat_fill(p, sizeof(m0), ipf_msg_key(0x0123456789abcdefull, 0));
	ck_assert_mem_eq(p, m0, sizeof(m0));
	ck_assert_int_eq(p[sizeof(m0)], 0xee);
	ipf_pat_fill(p, sizeof(m7), ipf_msg_key(0, 7));
	ck_assert_mem_eq(p, m7, sizeof(m7));
	ck_assert_uint_eq(ipf_pp_flag(0), 1);
	ck_assert_uint_eq(ipf_pp_flag(254), 255);
	ck_assert_uint_eq(ipf_pp_flag(255), 1);
}
END_TEST

START_TEST(pattern_check_finds_the_first_bad_octet)
{
	uint8_t p[40];

	for (size_t len = 0; len <= sizeof(p); len++) {
		uint64_t key = ipf_msg_key(42, len);

		ipf_pat_fill(p, len, key);
		ck_assert_int_eq(ipf_pat_check(p, len, key), -1);
		for (size_t j = 0; j < len; j++) {
			p[j] ^= 0x10;
			ck_assert_int_eq(ipf_pat_check(p, len, key), (int64_t)j);
			ck_assert_int_eq(ipf_pat_check(p, j, key), -1);
			p[j] ^= 0x10;
		}
		if (len)
			ck_assert_int_eq(ipf_pat_check(p, len, key + 1) >= 0, 1);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Round trips                                                             */
/* ---------------------------------------------------------------------- */

START_TEST(hello_round_trips_every_test)
{
	for (int op = IPF_OP_WRITE; op <= IPF_OP_LAST; op++)
		for (unsigned fl = 0; fl <= IPF_HF_KNOWN; fl++) {
			struct ipf_hello h = {
				.op = (uint8_t)op,
				.flags = (uint8_t)fl,
				.size = ipf_op_atomic(op) ? IPF_ATOMIC_SIZE : 1,
				.depth = IPF_DEPTH_MAX,
				.qp_index = IPF_QPS_MAX - 1,
				.qps = IPF_QPS_MAX,
				.seed = ~0ull,
				.test_id = 1,
			};
			struct ipf_hello d;
			uint8_t p[IPF_HELLO_LEN];

			/* RFC 7306 over TCP, write-imm ping-pong, waiting on memory
			 * but for an iWARP write ping-pong: refused (IPF_E_COMBO) */
			if ((ipf_op_rfc7306(op) && (fl & IPF_HF_TCP)) ||
			    (op == IPF_OP_WRITE_IMM && (fl & IPF_HF_PINGPONG)) ||
			    ((fl & IPF_HF_WAIT_MEM) &&
			     (op != IPF_OP_WRITE || !(fl & IPF_HF_PINGPONG) || (fl & IPF_HF_TCP))))
				continue;
			if (op == IPF_OP_WRITE && (fl & IPF_HF_PINGPONG) && !(fl & IPF_HF_TCP)) {
				h.size = IPF_SIZE_MAX;
				h.addr = 0x1000;
				h.rkey = 1;
				h.length = IPF_SIZE_MAX;
			}
			ipf_hello_encode(&h, p);
			ck_assert_int_eq(ipf_hello_decode(p, sizeof(p), &d), IPF_OK);
			ck_assert_mem_eq(&d, &h, sizeof(d));
		}
}
END_TEST

static void refused(enum ipf_kind kind, const uint8_t *p, size_t len, int err, const char *what,
		    size_t i);

/* The RFC 7306 operations: atomics only of 8 octets, none over TCP, write-imm no ping-pong. */
START_TEST(hello_rfc7306_operations_have_their_limits)
{
	static const struct {
		uint8_t op, flags;
		uint32_t size;
		int err;
	} rows[] = {
		{IPF_OP_FADD, IPF_HF_VERIFY, 8, IPF_OK},
		{IPF_OP_CSWAP, IPF_HF_PINGPONG | IPF_HF_VERIFY, 8, IPF_OK},
		{IPF_OP_WRITE_IMM, IPF_HF_VERIFY, 1, IPF_OK},
		{IPF_OP_WRITE_IMM, 0, IPF_SIZE_MAX, IPF_OK},
		{IPF_OP_FADD, 0, 7, IPF_E_SIZE},
		{IPF_OP_FADD, 0, 16, IPF_E_SIZE},
		{IPF_OP_CSWAP, IPF_HF_PINGPONG, 4, IPF_E_SIZE},
		{IPF_OP_FADD, IPF_HF_TCP, 8, IPF_E_COMBO},
		{IPF_OP_CSWAP, IPF_HF_TCP | IPF_HF_PINGPONG, 8, IPF_E_COMBO},
		{IPF_OP_WRITE_IMM, IPF_HF_TCP, 64, IPF_E_COMBO},
		{IPF_OP_WRITE_IMM, IPF_HF_PINGPONG, 64, IPF_E_COMBO},
		{IPF_OP_LAST + 1, 0, 8, IPF_E_OP},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ipf_hello h = {
			.op = rows[i].op,
			.flags = rows[i].flags,
			.size = rows[i].size,
			.depth = 8,
			.qps = 1,
			.seed = 5,
			.test_id = 6,
		};
		struct ipf_hello d;
		uint8_t p[IPF_HELLO_LEN];

		ipf_hello_encode(&h, p);
		ck_assert_msg(p[5] == rows[i].op, "row %zu: op octet", i);
		if (rows[i].err)
			refused(IPF_KIND_HELLO, p, sizeof(p), rows[i].err, "HELLO RFC 7306 row", i);
		else
			ck_assert_int_eq(ipf_hello_decode(p, sizeof(p), &d), IPF_OK);
	}
}
END_TEST

/* Older clients sent their buffer's address with every HELLO: taken, not kept. */
START_TEST(hello_without_a_buffer_ignores_addr)
{
	struct ipf_hello h = hello_kat.hello, d;
	uint8_t p[IPF_HELLO_LEN];

	h.op = IPF_OP_SEND;
	h.rkey = 0;
	h.length = 0;
	ipf_hello_encode(&h, p);
	ck_assert(!p[32] && !p[35] && !p[39]); /* encoded as zero */
	p[34] = 0x7f;
	ck_assert_int_eq(ipf_hello_decode(p, sizeof(p), &d), IPF_OK);
	ck_assert_uint_eq(d.addr, 0);
}
END_TEST

START_TEST(welcome_round_trips)
{
	static const struct ipf_welcome ws[] = {
		{.status = IPF_WELCOME_OK},
		{.status = IPF_WELCOME_OK, .addr = ~0ull, .length = IPF_MEM_MAX, .rkey = ~0u},
		{.status = IPF_WELCOME_OK, .credits = IPF_CREDITS_MAX, .credit_batch = 1},
		{.status = IPF_WELCOME_OK, .credits = 1, .credit_batch = 1},
		{.status = IPF_WELCOME_REFUSED, .reason = "x"},
		{.status = IPF_WELCOME_REFUSED,
		 .reason = "this server runs --tcp-baseline; the client does not"},
		{.status = IPF_WELCOME_REFUSED,
		 .reason = "~56 octets of printable ASCII !\"#$%&'()*+,-./0123456789"},
	};

	for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		uint8_t p[IPF_WELCOME_LEN];
		struct ipf_welcome d;

		ipf_welcome_encode(&ws[i], p);
		ck_assert_int_eq(ipf_welcome_decode(p, sizeof(p), &d), IPF_OK);
		ck_assert_mem_eq(&d, &ws[i], sizeof(d));
	}
}
END_TEST

/* ipf_welcome_refusal: a reason longer than the field is cut to 56 octets, without a NUL. */
START_TEST(welcome_refusal_is_cut_to_the_field)
{
	char why[100];
	uint8_t p[IPF_WELCOME_LEN];
	struct ipf_welcome d;

	memset(why, 'r', sizeof(why) - 1);
	why[sizeof(why) - 1] = '\0';
	ipf_welcome_refusal("unknown operation", p);
	ck_assert_mem_eq(p, refusal_kat_bytes, sizeof(p));
	ipf_welcome_refusal(why, p);
	ck_assert_int_eq(ipf_welcome_decode(p, sizeof(p), &d), IPF_OK);
	ck_assert_uint_eq(strlen(d.reason), IPF_REASON_MAX);
	ck_assert_int_eq(p[IPF_WELCOME_LEN - 1], 'r');
}
END_TEST

START_TEST(ctrl_round_trips_both_lengths)
{
	static const struct ipf_ctrl cs[] = {
		{IPF_CTRL_DONE, 0, 0, 0, 0, 0},
		{IPF_CTRL_DONE, 0, ~0ull, ~0ull, 0, 0},
		{IPF_CTRL_CREDIT, 0, 1, 0, 0, 0},
		{IPF_CTRL_CREDIT, 0, IPF_CREDITS_MAX, 0, 0, 0},
		{IPF_CTRL_RESULT, IPF_RES_OK, 5, 320, 0, 0},
		{IPF_CTRL_RESULT, IPF_RES_VERIFY, 5, 320, 4, 63},
		{IPF_CTRL_RESULT, IPF_RES_PROTO, 5, 320, ~0ull, ~0ull},
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		for (size_t len = IPF_CTRL_LEN; len <= IPF_CTRL_LEN_ALT; len += 8) {
			uint8_t p[IPF_CTRL_LEN_ALT];
			struct ipf_ctrl d;

			ipf_ctrl_encode(&cs[i], p, len);
			ck_assert_int_eq(ipf_ctrl_decode(p, len, &d), IPF_OK);
			ck_assert_mem_eq(&d, &cs[i], sizeof(d));
		}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Malformed input                                                         */
/* ---------------------------------------------------------------------- */

/* Decode p[0..len) and expect `err` with the output left alone. */
static void refused(enum ipf_kind kind, const uint8_t *p, size_t len, int err, const char *what,
		    size_t i)
{
	union ipf_msg out, before;
	uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees any over-read */
	int rc;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, p, len);
	memset(&out, 0x5a, sizeof(out));
	before = out;
	rc = ipf_decode(kind, copy, len, &out);
	ck_assert_msg(rc == err, "%s %zu (%zu octets): %s, want %s", what, i, len, ipf_errname(rc),
		      ipf_errname(err));
	ck_assert_msg(!memcmp(&out, &before, sizeof(out)), "%s %zu: output written", what, i);
	free(copy);
}

/*
 * Every known message cut or extended to every length up to 16 octets more:
 * short of its `shortest` it is SHORT, at its length or `also` good, at any
 * other length LONG.
 */
START_TEST(every_length_but_the_right_ones_is_refused)
{
	for (size_t i = 0; i < sizeof(kats) / sizeof(kats[0]); i++) {
		const struct kat *k = &kats[i];
		uint8_t p[IPF_WELCOME_LEN + 16];

		memset(p, 0, sizeof(p));
		memcpy(p, k->bytes, k->len);
		for (size_t n = 0; n <= k->len + 16; n++)
			if (n < k->shortest)
				refused(k->kind, p, n, IPF_E_SHORT, k->what, n);
			else if (n != k->len && n != k->also)
				refused(k->kind, p, n, IPF_E_LONG, k->what, n);
	}
}
END_TEST

/* Past the end, another version or another magic says so first. */
START_TEST(foreign_messages_say_so_before_their_length)
{
	uint8_t p[IPF_HELLO_LEN + 1];

	memcpy(p, hello_kat_bytes, IPF_HELLO_LEN);
	p[IPF_HELLO_LEN] = 0;
	p[4] = 2;
	refused(IPF_KIND_HELLO, p, sizeof(p), IPF_E_VERSION, "HELLO v2, long", 0);
	refused(IPF_KIND_WELCOME, p, sizeof(p), IPF_E_VERSION, "WELCOME v2, long", 0);
	p[0] = 'M'; /* "MPA ID Req Frame" */
	refused(IPF_KIND_HELLO, p, sizeof(p), IPF_E_MAGIC, "MPA Request, long", 0);
	refused(IPF_KIND_CTRL, p, sizeof(p), IPF_E_MAGIC, "MPA Request, long", 0);
	refused(IPF_KIND_HELLO, p, 4, IPF_E_SHORT, "MPA Request, short", 0);
}
END_TEST

/*
 * Octets of a known message changed one at a time (offset, new value): each
 * change alone gives the verdict.  A list ends at {0, 0}.
 */
static const struct bad_set {
	enum kat_id k;
	int err;
	struct {
		uint8_t off, val;
	} at[6];
} bad_sets[] = {
	/* HELLO: RDMA Write ping-pong, size 65536, depth 32, QP 2 of 4, with a buffer */
	{K_HELLO, IPF_E_MAGIC, {{0, 0x48}, {3, 0x47}}},
	{K_HELLO, IPF_E_VERSION, {{4, 0}, {4, 2}}},
	{K_HELLO, IPF_E_RESERVED, {{7, 1}, {20, 1}, {23, 0x80}, {56, 1}, {63, 1}}},
	/* ... and its buffer, for a test that has none */
	{K_HELLO,
	 IPF_E_RESERVED,
	 {{5, IPF_OP_SEND}, {5, IPF_OP_READ}, {6, IPF_HF_PINGPONG | IPF_HF_TCP}, {6, 0}}},
	{K_HELLO, IPF_E_OP, {{5, 0}, {5, 7}, {5, 0xff}}},
	/* a write ping-pong turned into atomics (size 65536) or write-imm (ping-pong) */
	{K_HELLO, IPF_E_SIZE, {{5, IPF_OP_FADD}, {5, IPF_OP_CSWAP}}},
	{K_HELLO, IPF_E_COMBO, {{5, IPF_OP_WRITE_IMM}}},
	/* waiting on memory without the write ping-pong, or over TCP */
	{K_HELLO, IPF_E_COMBO, {{6, 0x08}, {6, 0x0d}}},
	{K_HELLO, IPF_E_FLAGS, {{6, 0x13}, {6, 0x83}}},
	{K_HELLO, IPF_E_SIZE, {{9, 0}, {8, 0x10}}},
	{K_HELLO, IPF_E_DEPTH, {{15, 0}, {14, 0x04}, {12, 0x01}}},
	{K_HELLO, IPF_E_QPS, {{19, 0}, {19, 65}, {18, 0x01}, {17, 4}, {19, 2}}},
	{K_HELLO, IPF_E_NOBUF, {{9, 0x02}, {45, 0}}},
	/* WELCOME, accepted: 64 credits in batches of 16 */
	{K_WELCOME, IPF_E_MAGIC, {{0, 0x01}}},
	{K_WELCOME, IPF_E_VERSION, {{4, 2}}},
	{K_WELCOME, IPF_E_RESERVED, {{6, 1}, {7, 1}, {36, 1}, {63, 1}}},
	{K_WELCOME, IPF_E_STATUS, {{5, 2}, {5, 0xff}}},
	{K_WELCOME, IPF_E_LENGTH, {{19, 1}, {16, 0x80}}},
	{K_WELCOME, IPF_E_CREDITS, {{31, 0x08}, {30, 0x08}, {35, 0}, {35, 0x41}, {31, 0}}},
	/* WELCOME, refused: "unknown operation" */
	{K_REFUSAL, IPF_E_REASON, {{8, 0}, {9, 0x07}, {9, 0x80}, {9, 0x7f}, {30, 'x'}, {63, 'x'}}},
	{K_REFUSAL, IPF_E_RESERVED, {{6, 1}}},
	{K_REFUSAL, IPF_E_STATUS, {{5, 2}}},
	{K_REFUSAL, IPF_E_VERSION, {{4, 0}}},
	/* DONE */
	{K_DONE, IPF_E_MAGIC, {{0, 0x01}, {2, 0x51}}},
	{K_DONE, IPF_E_TYPE, {{4, 0}, {4, 4}, {4, 0xff}}},
	{K_DONE, IPF_E_STATUS, {{5, 1}}},
	{K_DONE, IPF_E_RESERVED, {{6, 1}, {7, 1}, {31, 1}, {39, 1}, {4, IPF_CTRL_CREDIT}}},
	/* CREDIT 16 */
	{K_CREDIT, IPF_E_COUNT, {{15, 0}, {14, 0x08}, {8, 1}}},
	{K_CREDIT, IPF_E_RESERVED, {{23, 1}, {24, 1}}},
	{K_CREDIT, IPF_E_STATUS, {{5, 1}}},
	/* RESULT, 48 octets: data check failed */
	{K_RESULT, IPF_E_STATUS, {{5, 3}, {5, 0xff}, {4, IPF_CTRL_DONE}}},
	{K_RESULT, IPF_E_RESERVED, {{40, 1}, {47, 1}, {5, IPF_RES_OK}}},
};

START_TEST(every_bad_field_is_refused_with_its_code)
{
	for (size_t i = 0; i < sizeof(bad_sets) / sizeof(bad_sets[0]); i++) {
		const struct bad_set *b = &bad_sets[i];
		const struct kat *k = &kats[b->k];

		for (size_t j = 0; j < 6 && (b->at[j].off || b->at[j].val); j++) {
			uint8_t p[IPF_WELCOME_LEN];

			memcpy(p, k->bytes, k->len);
			ck_assert_msg(p[b->at[j].off] != b->at[j].val,
				      "set %zu/%zu changes nothing", i, j);
			p[b->at[j].off] = b->at[j].val;
			refused(k->kind, p, k->len, b->err, k->what, i * 6 + j);
		}
	}
}
END_TEST

/* Field bounds, one past each. */
START_TEST(hello_bounds_are_the_limits)
{
	static const struct {
		uint32_t size, depth;
		uint16_t idx, qps;
		uint32_t rkey, length;
		int err;
	} rows[] = {
		{IPF_SIZE_MAX, IPF_DEPTH_MAX, 63, 64, 1, IPF_SIZE_MAX, IPF_OK},
		{IPF_SIZE_MAX + 1, 1, 0, 1, 1, IPF_SIZE_MAX + 1, IPF_E_SIZE},
		{1, IPF_DEPTH_MAX + 1, 0, 1, 1, 1, IPF_E_DEPTH},
		{1, 1, 64, 65, 1, 1, IPF_E_QPS},
		{1, 1, 0, 1, 0, 1, IPF_E_NOBUF},
		{2, 1, 0, 1, 7, 1, IPF_E_NOBUF},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ipf_hello h = hello_kat.hello, d;
		uint8_t p[IPF_HELLO_LEN];

		h.size = rows[i].size;
		h.depth = rows[i].depth;
		h.qp_index = rows[i].idx;
		h.qps = rows[i].qps;
		h.rkey = rows[i].rkey;
		h.length = rows[i].length;
		ipf_hello_encode(&h, p);
		if (rows[i].err)
			refused(IPF_KIND_HELLO, p, sizeof(p), rows[i].err, "hello bound", i);
		else
			ck_assert_int_eq(ipf_hello_decode(p, sizeof(p), &d), IPF_OK);
	}
}
END_TEST

START_TEST(welcome_bounds_are_the_limits)
{
	struct ipf_welcome w = welcome_kat.welcome, d;
	uint8_t p[IPF_WELCOME_LEN];

	w.length = IPF_MEM_MAX;
	w.credits = IPF_CREDITS_MAX;
	ipf_welcome_encode(&w, p);
	ck_assert_int_eq(ipf_welcome_decode(p, sizeof(p), &d), IPF_OK);
	w.length = IPF_MEM_MAX + 1ull;
	ipf_welcome_encode(&w, p);
	refused(IPF_KIND_WELCOME, p, sizeof(p), IPF_E_LENGTH, "WELCOME length bound", 0);
	w = welcome_kat.welcome;
	w.credits = IPF_CREDITS_MAX + 1;
	ipf_welcome_encode(&w, p);
	refused(IPF_KIND_WELCOME, p, sizeof(p), IPF_E_CREDITS, "WELCOME credits bound", 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Names                                                                   */
/* ---------------------------------------------------------------------- */

START_TEST(every_code_has_its_own_name_and_text)
{
	for (int e = 0; e >= IPF_E_LAST; e--) {
		ck_assert_str_ne(ipf_errname(e), "IPF_E_?");
		ck_assert_str_ne(ipf_strerror(e), "unknown error");
		ck_assert(!strncmp(ipf_errname(e), e ? "IPF_E_" : "IPF_OK", 6));
		for (int f = 0; f > e; f--) {
			ck_assert_str_ne(ipf_errname(e), ipf_errname(f));
			ck_assert_str_ne(ipf_strerror(e), ipf_strerror(f));
		}
	}
	ck_assert_str_eq(ipf_errname(1), "IPF_E_?");
	ck_assert_str_eq(ipf_errname(IPF_E_LAST - 1), "IPF_E_?");
	ck_assert_str_eq(ipf_strerror(IPF_E_LAST - 1), "unknown error");
}
END_TEST

/* The words a server sends back in a refusal, and the names in the output. */
static const struct word_row {
	const char *(*fn)(int);
	int v;
	const char *text;
} word_rows[] = {
	{ipf_strerror, IPF_E_VERSION, "iwperf protocol version mismatch"},
	{ipf_strerror, IPF_E_OP, "unknown operation"},
	{ipf_strerror, IPF_E_FLAGS, "unknown flags"},
	{ipf_strerror, IPF_E_SIZE, "message size out of range"},
	{ipf_strerror, IPF_E_DEPTH, "depth out of range"},
	{ipf_strerror, IPF_E_QPS, "QP count out of range"},
	{ipf_strerror, IPF_E_NOBUF, "RDMA Write ping-pong without a target buffer"},
	{ipf_op_name, IPF_OP_WRITE, "write"},
	{ipf_op_name, IPF_OP_READ, "read"},
	{ipf_op_name, IPF_OP_SEND, "send"},
	{ipf_op_name, IPF_OP_FADD, "atomic-fadd"},
	{ipf_op_name, IPF_OP_CSWAP, "atomic-cswap"},
	{ipf_op_name, IPF_OP_WRITE_IMM, "write-imm"},
	{ipf_strerror, IPF_E_COMBO, "operation not available with these flags"},
	{ipf_op_name, 0, "?"},
	{ipf_op_name, 7, "?"},
	{ipf_res_status_str, IPF_RES_OK, "ok"},
	{ipf_res_status_str, IPF_RES_VERIFY, "data verification failed"},
	{ipf_res_status_str, IPF_RES_PROTO, "protocol error"},
	{ipf_res_status_str, 3, "unknown status"},
};

START_TEST(words_and_names_stay)
{
	for (size_t i = 0; i < sizeof(word_rows) / sizeof(word_rows[0]); i++)
		ck_assert_str_eq(word_rows[i].fn(word_rows[i].v), word_rows[i].text);
}
END_TEST

static Suite *ipf_proto_suite(void)
{
	Suite *s = suite_create("ipf_proto");

	TH_ADD_TCASE(s, "known", every_kind_of_message_has_known_octets,
		     req_and_ctrl_len_known_answers, pattern_known_answers,
		     pattern_check_finds_the_first_bad_octet);
	TH_ADD_TCASE(s, "round trip", hello_round_trips_every_test,
		     hello_rfc7306_operations_have_their_limits,
		     hello_without_a_buffer_ignores_addr, welcome_round_trips,
		     welcome_refusal_is_cut_to_the_field, ctrl_round_trips_both_lengths);
	TH_ADD_TCASE(s, "malformed", every_length_but_the_right_ones_is_refused,
		     foreign_messages_say_so_before_their_length,
		     every_bad_field_is_refused_with_its_code, hello_bounds_are_the_limits,
		     welcome_bounds_are_the_limits);
	TH_ADD_TCASE(s, "names", every_code_has_its_own_name_and_text, words_and_names_stay);
	return s;
}

TH_MAIN(ipf_proto_suite)
