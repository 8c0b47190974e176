/* SPDX-License-Identifier: MIT */
/*
 * test_nfs_ulb.c - the NFS Upper-Layer Binding (RFC 8267): every DDP-eligible
 * item of NFSv2/v3/v4 found at its exact offset and length in unreduced and
 * reduced streams, failed operations as invalid slots, non-eligible programs
 * and procedures, truncation at every length (run under ASan), reply plans,
 * the NFSv4 operation table (nfs_v4.h), and the messages Linux really sent
 * (test/captures, see data/gen_nfs_captures.py): the Read chunk
 * positions and Write chunk lengths of its RPC-over-RDMA headers must match
 * what the walkers report.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_nfs.h>

#include "data/nfs_captures.h"
#include "nfs_build.h"
#include "nfs_v4.h"
#include "th.h"

#define ULB	(&rpcrdma_nfs_ulb)
#define MAX_REC 16

/* Records the items a walk reports; answers `present` (1 unreduced, 0 reduced). */
struct rec {
	int present;
	int stop_at; /* > 0: return IW_ECANCELED-like -77 at this call number (1-based) */
	unsigned n;
	struct rpcrdma_item it[MAX_REC];
};

static int rec_fn(void *arg, const struct rpcrdma_item *it)
{
	struct rec *r = arg;
	if (r->n < MAX_REC)
		r->it[r->n] = *it;
	r->n++;
	if (r->stop_at > 0 && (int)r->n == r->stop_at)
		return -77;
	return r->present;
}

static struct rpcrdma_rpcinfo call_info(uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct rpcrdma_rpcinfo ci = {
		.msg_type = RPC_MSG_CALL,
		.rpcvers = 2,
		.prog = prog,
		.vers = vers,
		.proc = proc,
		.cred_flavor = 1,
	};
	return ci;
}

/* Walk the body of a built message from an exact-size heap copy. */
static int walk(const struct nfsb *b, size_t len, bool reply, const struct rpcrdma_rpcinfo *ci,
		struct rec *r)
{
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_le(b->body_off, len);
	/* the builders put the body where the transport's RPC parser finds it */
	struct rpcrdma_rpcinfo pi;
	ck_assert_int_eq(rpcrdma_rpc_parse(b->p, len, &pi), 0);
	ck_assert_uint_eq(pi.body_off, b->body_off);
	uint8_t *body = th_memdup_exact(b->p + b->body_off, len - b->body_off);
	int ret = reply ? ULB->walk_reply(NULL, ci, body, len - b->body_off, rec_fn, r)
			: ULB->walk_call(NULL, ci, body, len - b->body_off, rec_fn, r);
	free(body);
	return ret;
}

/* The walk reports exactly the builder's items (valid), in order. */
static void expect_items(const struct nfsb *b, const struct rec *r)
{
	ck_assert_uint_eq(r->n, b->n_items);
	for (unsigned i = 0; i < b->n_items && i < MAX_REC; i++) {
		ck_assert_uint_eq(r->it[i].index, i);
		ck_assert(r->it[i].valid);
		ck_assert_uint_eq(r->it[i].offset, b->item[i].off - b->body_off);
		ck_assert_uint_eq(r->it[i].length, b->item[i].len);
	}
}

/* Build with `build` in both modes and check the walk against the builder. */
#define CHECK_BOTH_MODES(b, reply, ci, build_expr)                                                 \
	do {                                                                                       \
		for (int reduced = 0; reduced <= 1; reduced++) {                                   \
			(b)->reduce = reduced;                                                     \
			size_t n_ = (build_expr);                                                  \
			ck_assert_uint_gt(n_, 0);                                                  \
			struct rec r_ = {.present = !reduced};                                     \
			ck_assert_int_eq(walk((b), n_, (reply), (ci), &r_), 0);                    \
			expect_items((b), &r_);                                                    \
		}                                                                                  \
		(b)->reduce = false;                                                               \
	} while (0)

static uint8_t buf[1 << 18];

/* ---------------------------------------------------------------------- */
/* NFSv3                                                                   */
/* ---------------------------------------------------------------------- */

START_TEST(v3_write_data_is_found_in_unreduced_and_reduced_calls_for_every_padding)
{
	struct nfsb b;
	struct rpcrdma_rpcinfo ci = call_info(NFSB_PROG_NFS, 3, NFSB3_WRITE);
	nfsb_init(&b, buf, sizeof(buf));
	for (uint32_t len = 0; len <= 9; len++)
		for (uint32_t fh = 0; fh <= 64; fh += 7)
			CHECK_BOTH_MODES(&b, false, &ci,
					 nfsb_v3_write_call(&b, 9, fh, 77, NULL, len));
	CHECK_BOTH_MODES(&b, false, &ci, nfsb_v3_write_call(&b, 9, 32, 0, NULL, 65536));
}
END_TEST

START_TEST(v3_symlink_path_is_found_after_the_attributes)
{
	struct nfsb b;
	struct rpcrdma_rpcinfo ci = call_info(NFSB_PROG_NFS, 3, NFSB3_SYMLINK);
	nfsb_init(&b, buf, sizeof(buf));
	CHECK_BOTH_MODES(&b, false, &ci, nfsb_v3_symlink_call(&b, 1, 28, "link", "../target/x"));
	CHECK_BOTH_MODES(&b, false, &ci, nfsb_v3_symlink_call(&b, 1, 64, "l", "abcd"));
}
END_TEST

START_TEST(v3_read_and_readlink_results_are_one_slot_each)
{
	struct nfsb b;
	struct rpcrdma_rpcinfo rd = call_info(NFSB_PROG_NFS, 3, NFSB3_READ);
	struct rpcrdma_rpcinfo rl = call_info(NFSB_PROG_NFS, 3, NFSB3_READLINK);
	nfsb_init(&b, buf, sizeof(buf));
	for (uint32_t len = 0; len <= 9; len++)
		CHECK_BOTH_MODES(&b, true, &rd, nfsb_v3_read_reply(&b, 2, NULL, len, len & 1));
	CHECK_BOTH_MODES(&b, true, &rd, nfsb_v3_read_reply(&b, 2, NULL, 100000, true));
	CHECK_BOTH_MODES(&b, true, &rl, nfsb_v3_readlink_reply(&b, 3, "/some/where"));
}
END_TEST

START_TEST(v3_failed_read_reply_is_an_invalid_slot)
{
	struct nfsb b;
	struct rpcrdma_rpcinfo rd = call_info(NFSB_PROG_NFS, 3, NFSB3_READ);
	nfsb_init(&b, buf, sizeof(buf));
	size_t n = nfsb_v3_read_reply_err(&b, 2, 13);
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, n, true, &rd, &r), 0);
	ck_assert_uint_eq(r.n, 1);
	ck_assert(!r.it[0].valid);
	ck_assert_uint_eq(r.it[0].index, 0);
}
END_TEST

START_TEST(v3_procedures_without_eligible_items_report_nothing)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	for (int k = 0; k < 6; k++) {
		size_t n = 0;
		bool reply = false;
		uint32_t proc = 0;
		switch (k) {
		case 0:
			n = nfsb_v3_null_call(&b, 1), proc = NFSB3_NULL;
			break;
		case 1:
			n = nfsb_v3_read_call(&b, 1, 32, 0, 4096), proc = NFSB3_READ;
			break;
		case 2:
			n = nfsb_v3_getattr_call(&b, 1, 32), proc = NFSB3_GETATTR;
			break;
		case 3:
			n = nfsb_v3_getattr_reply(&b, 1, 5), proc = NFSB3_GETATTR, reply = true;
			break;
		case 4:
			n = nfsb_v3_write_reply(&b, 1, 5), proc = NFSB3_WRITE, reply = true;
			break;
		default:
			n = nfsb_v3_readdir_call(&b, 1, 32, 8192), proc = NFSB3_READDIR;
			break;
		}
		struct rpcrdma_rpcinfo ci = call_info(NFSB_PROG_NFS, 3, proc);
		struct rec r = {.present = 1};
		ck_assert_int_eq(walk(&b, n, reply, &ci, &r), 0);
		ck_assert_uint_eq(r.n, 0);
		/* not even the body is needed */
		ck_assert_int_eq(reply ? ULB->walk_reply(NULL, &ci, NULL, 0, rec_fn, &r)
				       : ULB->walk_call(NULL, &ci, NULL, 0, rec_fn, &r),
				 0);
	}
}
END_TEST

START_TEST(auxiliary_programs_and_gss_calls_have_no_items)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	size_t n = nfsb_v3_write_call(&b, 5, 32, 0, NULL, 100);
	uint32_t progs[] = {NFSB_PROG_NFSACL, NFSB_PROG_MOUNT, 100021, 100024, 0x40000000};
	for (unsigned i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct rpcrdma_rpcinfo ci = call_info(progs[i], 3, NFSB3_WRITE);
		struct rec r = {.present = 1};
		ck_assert(!ULB->handles(NULL, progs[i], 3));
		ck_assert_int_eq(walk(&b, n, false, &ci, &r), 0);
		ck_assert_int_eq(walk(&b, n, true, &ci, &r), 0);
		ck_assert_uint_eq(r.n, 0);
	}
	struct rpcrdma_rpcinfo gss = call_info(NFSB_PROG_NFS, 3, NFSB3_WRITE);
	gss.cred_flavor = 6;
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, n, false, &gss, &r), 0);
	ck_assert_uint_eq(r.n, 0);
	struct rpcrdma_reply_plan plan;
	ck_assert_int_eq(ULB->reply_plan(NULL, &gss, buf + b.body_off, n - b.body_off, &plan), 0);
	ck_assert(plan.unpredictable);
	ck_assert_uint_eq(plan.n_items, 0);

	ck_assert(ULB->handles(NULL, NFSB_PROG_NFS, 2));
	ck_assert(ULB->handles(NULL, NFSB_PROG_NFS, 3));
	ck_assert(ULB->handles(NULL, NFSB_PROG_NFS, 4));
	ck_assert(!ULB->handles(NULL, NFSB_PROG_NFS, 5));
	ck_assert(!ULB->handles(NULL, NFSB_PROG_NFS, 1));
}
END_TEST

START_TEST(walk_stops_with_the_callbacks_negative_code)
{
	struct nfsb b;
	struct rpcrdma_rpcinfo ci = call_info(NFSB_PROG_NFS, 3, NFSB3_WRITE);
	nfsb_init(&b, buf, sizeof(buf));
	size_t n = nfsb_v3_write_call(&b, 5, 32, 0, NULL, 100);
	struct rec r = {.present = 1, .stop_at = 1};
	ck_assert_int_eq(walk(&b, n, false, &ci, &r), -77);
	ck_assert_uint_eq(r.n, 1);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* NFSv2                                                                   */
/* ---------------------------------------------------------------------- */

START_TEST(v2_write_read_readlink_and_symlink_items_are_found)
{
	struct nfsb b;
	struct rpcrdma_rpcinfo wr = call_info(NFSB_PROG_NFS, 2, NFSB2_WRITE);
	struct rpcrdma_rpcinfo rd = call_info(NFSB_PROG_NFS, 2, NFSB2_READ);
	struct rpcrdma_rpcinfo rl = call_info(NFSB_PROG_NFS, 2, NFSB2_READLINK);
	struct rpcrdma_rpcinfo sl = call_info(NFSB_PROG_NFS, 2, NFSB2_SYMLINK);
	nfsb_init(&b, buf, sizeof(buf));
	for (uint32_t len = 0; len <= 5; len++) {
		CHECK_BOTH_MODES(&b, false, &wr, nfsb_v2_write_call(&b, 1, 8, NULL, len));
		CHECK_BOTH_MODES(&b, true, &rd, nfsb_v2_read_reply(&b, 1, NULL, len));
	}
	CHECK_BOTH_MODES(&b, false, &wr, nfsb_v2_write_call(&b, 1, 8, NULL, 8192));
	CHECK_BOTH_MODES(&b, true, &rl, nfsb_v2_readlink_reply(&b, 1, "tgt"));
	/* the path is in the middle: the attributes after it must still decode */
	CHECK_BOTH_MODES(&b, false, &sl, nfsb_v2_symlink_call(&b, 1, "name", "path/x"));
	CHECK_BOTH_MODES(&b, false, &sl, nfsb_v2_symlink_call(&b, 1, "n", "abcdefgh"));
}
END_TEST

START_TEST(v2_data_over_8192_octets_does_not_decode)
{
	struct nfsb b;
	struct rpcrdma_rpcinfo wr = call_info(NFSB_PROG_NFS, 2, NFSB2_WRITE);
	nfsb_init(&b, buf, sizeof(buf));
	size_t n = nfsb_v2_write_call(&b, 1, 8, NULL, 8193);
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, n, false, &wr, &r), IW_ERPC_RPC);
	ck_assert_uint_eq(r.n, 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* NFSv4                                                                   */
/* ---------------------------------------------------------------------- */

static const struct rpcrdma_rpcinfo *v4ci(void)
{
	static struct rpcrdma_rpcinfo ci;
	ci = call_info(NFSB_PROG_NFS, 4, 1);
	return &ci;
}

START_TEST(v4_write_and_create_symlink_data_are_reported_in_op_order)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	for (uint32_t len = 0; len <= 5; len++) {
		struct nfsb_v4op ops[] = {
			{.op = NFSB4_SEQUENCE},
			{.op = NFSB4_PUTFH, .len = 40},
			{.op = NFSB4_WRITE, .offset = 4096, .len = len + 1000},
			{.op = NFSB4_GETATTR, .nbitmap = 2, .bitmap = {0x18, 0x300000}},
			{.op = NFSB4_PUTROOTFH},
			{.op = NFSB4_CREATE, .objtype = NFSB4_NF4LNK, .data = "x/y/z", .len = len},
			{.op = NFSB4_CREATE, .objtype = NFSB4_NF4DIR, .name = "dir"},
			{.op = NFSB4_GETFH},
			{.op = NFSB4_LOOKUP, .data = "abc", .len = 3},
			{.op = NFSB4_WRITE, .len = len},
		};
		CHECK_BOTH_MODES(&b, false, v4ci(),
				 nfsb_v4_compound_call(&b, 1, len % 3, "tag-x", ops, 10));
	}
}
END_TEST

/* RFC 8267 §6.4.3: Write chunks A, B, C pair with READ, READLINK, READ. */
START_TEST(v4_rfc8267_example_compound_reply_has_slots_0_1_2)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	struct nfsb_v4op ops[] = {
		{.op = NFSB4_PUTFH},
		{.op = NFSB4_LOOKUP},
		{.op = NFSB4_READ, .len = 5000},
		{.op = NFSB4_PUTFH},
		{.op = NFSB4_LOOKUP},
		{.op = NFSB4_READLINK, .data = "a/b", .len = 3},
		{.op = NFSB4_PUTFH},
		{.op = NFSB4_LOOKUP},
		{.op = NFSB4_READ, .len = 7, .eof = true},
	};
	CHECK_BOTH_MODES(&b, true, v4ci(), nfsb_v4_compound_reply(&b, 1, "ex", ops, 9));
	ck_assert_uint_eq(b.n_items, 3);

	/* the call: PUTFH LOOKUP READ ... has no eligible argument, and its plan
	 * asks for three Write chunks in that order */
	struct nfsb_v4op cops[] = {
		{.op = NFSB4_PUTFH, .len = 16},
		{.op = NFSB4_LOOKUP, .data = "f1", .len = 2},
		{.op = NFSB4_READ, .count = 5000},
		{.op = NFSB4_PUTFH, .len = 16},
		{.op = NFSB4_LOOKUP, .data = "l", .len = 1},
		{.op = NFSB4_READLINK},
		{.op = NFSB4_PUTFH, .len = 16},
		{.op = NFSB4_LOOKUP, .data = "f2", .len = 2},
		{.op = NFSB4_READ, .count = 8192},
	};
	size_t n = nfsb_v4_compound_call(&b, 2, 0, "ex", cops, 9);
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, n, false, v4ci(), &r), 0);
	ck_assert_uint_eq(r.n, 0);
	struct rpcrdma_reply_plan plan;
	ck_assert_int_eq(ULB->reply_plan(NULL, v4ci(), buf + b.body_off, n - b.body_off, &plan), 0);
	ck_assert(!plan.unpredictable);
	ck_assert_uint_eq(plan.n_items, 3);
	ck_assert_uint_eq(plan.item_max[0], 5000);
	ck_assert_uint_eq(plan.item_max[1], 4096);
	ck_assert_uint_eq(plan.item_max[2], 8192);
	/* status + tag + count; 9 × (resop, status); READ eof/len/pad twice,
	 * READLINK len/pad */
	ck_assert_uint_eq(plan.max_inline, 4 + 4 + 4 + 4 + 9 * 8 + 2 * 12 + 8);
}
END_TEST

START_TEST(v4_failed_read_is_an_invalid_slot_and_the_walk_stops)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	struct nfsb_v4op ops[] = {
		{.op = NFSB4_SEQUENCE},
		{.op = NFSB4_PUTFH},
		{.op = NFSB4_READ, .len = 10},
		{.op = NFSB4_READ, .status = 10011 /* NFS4ERR_LOCKED */},
		{.op = NFSB4_READ, .len = 20},
	};
	for (int present = 0; present <= 1; present++) {
		b.reduce = !present;
		size_t n = nfsb_v4_compound_reply(&b, 1, "t", ops, 5);
		struct rec r = {.present = present};
		ck_assert_int_eq(walk(&b, n, true, v4ci(), &r), 0);
		ck_assert_uint_eq(r.n, 2);
		ck_assert(r.it[0].valid);
		ck_assert_uint_eq(r.it[0].length, 10);
		ck_assert(!r.it[1].valid);
		ck_assert_uint_eq(r.it[1].index, 1);
	}
	/* a failed PUTFH before the READ: the array ends there, no slot */
	ops[1].status = 70; /* NFS4ERR_STALE */
	b.reduce = false;
	size_t n = nfsb_v4_compound_reply(&b, 1, "t", ops, 5);
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, n, true, v4ci(), &r), 0);
	ck_assert_uint_eq(r.n, 0);
	/* a server that wrongly goes on after the failure: the walk still stops */
	ops[1].status = 0;
	n = nfsb_v4_compound_reply(&b, 1, "t", ops, 3);
	ck_assert_uint_gt(n, 0);
	ops[2].status = 5; /* NFS4ERR_IO */
	size_t n2 = nfsb_v4_compound_reply(&b, 1, "t", ops, 3);
	/* append a valid READ result the server should not have sent */
	b.off = n2;
	nfsb_u32(&b, NFSB4_READ);
	nfsb_u32(&b, 0);
	nfsb_u32(&b, 0);
	nfsb_opaque(&b, NULL, 4);
	r.n = 0;
	ck_assert_int_eq(walk(&b, b.off, true, v4ci(), &r), 0);
	ck_assert_uint_eq(r.n, 1);
	ck_assert(!r.it[0].valid);
}
END_TEST

START_TEST(v4_unknown_opcode_stops_the_call_walk_with_an_rpc_error)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	struct nfsb_v4op ops[] = {
		{.op = NFSB4_PUTFH, .len = 8},
		{.op = NFSB4_WRITE, .len = 12},
		{.op = 76},
		{.op = NFSB4_WRITE, .len = 12},
	};
	size_t n = nfsb_v4_compound_call(&b, 1, 2, "t", ops, 4);
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, n, false, v4ci(), &r), IW_ERPC_RPC);
	ck_assert_uint_eq(r.n, 1);
	struct rpcrdma_reply_plan plan;
	ck_assert_int_eq(ULB->reply_plan(NULL, v4ci(), buf + b.body_off, n - b.body_off, &plan),
			 IW_ERPC_RPC);
	ops[2].op = 10044; /* OP_ILLEGAL is not an operation a client sends */
	n = nfsb_v4_compound_call(&b, 1, 2, "t", ops, 4);
	ck_assert_int_eq(walk(&b, n, false, v4ci(), &r), IW_ERPC_RPC);
}
END_TEST

START_TEST(v4_null_and_callback_program_have_no_items)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	size_t n = nfsb_v4_write_call(&b, 1, 0, NULL, 64);
	struct rpcrdma_rpcinfo null = call_info(NFSB_PROG_NFS, 4, 0);
	struct rpcrdma_rpcinfo cb = call_info(0x40000000, 1, 1);
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, n, false, &null, &r), 0);
	ck_assert_int_eq(walk(&b, n, false, &cb, &r), 0);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_int_eq(walk(&b, n, false, v4ci(), &r), 0);
	ck_assert_uint_eq(r.n, 1);
}
END_TEST

/* Hand-written XDR of operations the builder does not know (arguments). */
static size_t v4_call_raw(struct nfsb *b, void (*ops)(struct nfsb *), uint32_t nops)
{
	nfsb_call_hdr(b, 1, NFSB_PROG_NFS, 4, 1);
	nfsb_string(b, "raw");
	nfsb_u32(b, 2);
	nfsb_u32(b, nops);
	ops(b);
	return nfsb_done(b);
}

static void sid(struct nfsb *b)
{
	nfsb_fixed(b, NULL, 16);
}

static void fattr(struct nfsb *b)
{
	nfsb_u32(b, 2);
	nfsb_u32(b, 0x10);
	nfsb_u32(b, 0x2);
	nfsb_opaque(b, NULL, 13);
}

/* OPEN (create, EXCLUSIVE4_1, CLAIM_DELEGATE_CUR), LOCK (new owner), SETATTR,
 * EXCHANGE_ID (SSV), CREATE_SESSION (AUTH_SYS + GSS), LAYOUTRETURN (FILE),
 * COPY (netlocs), WRITE_SAME, SETXATTR, then WRITE: its data must be found. */
static void many_ops(struct nfsb *b)
{
	nfsb_u32(b, 18); /* OPEN */
	nfsb_u32(b, 1);
	nfsb_u32(b, 2);
	nfsb_u32(b, 0);
	nfsb_u64(b, 77);
	nfsb_opaque(b, NULL, 24);
	nfsb_u32(b, 1); /* OPEN4_CREATE */
	nfsb_u32(b, 3); /* EXCLUSIVE4_1 */
	nfsb_fixed(b, NULL, 8);
	fattr(b);
	nfsb_u32(b, 2); /* CLAIM_DELEGATE_CUR */
	sid(b);
	nfsb_string(b, "file");

	nfsb_u32(b, 12); /* LOCK */
	nfsb_u32(b, 2);
	nfsb_u32(b, 0);
	nfsb_u64(b, 0);
	nfsb_u64(b, ~0ull);
	nfsb_u32(b, 1); /* new lock owner */
	nfsb_u32(b, 1);
	sid(b);
	nfsb_u32(b, 1);
	nfsb_u64(b, 5);
	nfsb_opaque(b, NULL, 9);

	nfsb_u32(b, 34); /* SETATTR */
	sid(b);
	fattr(b);

	nfsb_u32(b, 42); /* EXCHANGE_ID, SP4_SSV */
	nfsb_fixed(b, NULL, 8);
	nfsb_opaque(b, NULL, 30);
	nfsb_u32(b, 1);
	nfsb_u32(b, 2);
	nfsb_u32(b, 1);
	nfsb_u32(b, 3);
	nfsb_u32(b, 0);
	nfsb_u32(b, 2); /* hash algs */
	nfsb_opaque(b, NULL, 9);
	nfsb_opaque(b, NULL, 11);
	nfsb_u32(b, 1); /* encr algs */
	nfsb_opaque(b, NULL, 9);
	nfsb_u32(b, 16);
	nfsb_u32(b, 2);
	nfsb_u32(b, 1); /* impl id */
	nfsb_string(b, "example.org");
	nfsb_string(b, "iwarp");
	nfsb_fixed(b, NULL, 12);

	nfsb_u32(b, 43); /* CREATE_SESSION */
	nfsb_u64(b, 1);
	nfsb_u32(b, 1);
	nfsb_u32(b, 0);
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < 6; k++)
			nfsb_u32(b, 1024);
		nfsb_u32(b, i); /* rdma_ird<1> */
		if (i)
			nfsb_u32(b, 8);
	}
	nfsb_u32(b, 0x40000000);
	nfsb_u32(b, 3);
	nfsb_u32(b, 0); /* AUTH_NONE */
	nfsb_u32(b, 1); /* AUTH_SYS */
	nfsb_u32(b, 0);
	nfsb_string(b, "host");
	nfsb_u32(b, 0);
	nfsb_u32(b, 0);
	nfsb_u32(b, 2);
	nfsb_u32(b, 10);
	nfsb_u32(b, 11);
	nfsb_u32(b, 6); /* RPCSEC_GSS */
	nfsb_u32(b, 1);
	nfsb_opaque(b, NULL, 5);
	nfsb_opaque(b, NULL, 6);

	nfsb_u32(b, 51); /* LAYOUTRETURN FILE */
	nfsb_u32(b, 0);
	nfsb_u32(b, 1);
	nfsb_u32(b, 3);
	nfsb_u32(b, 1);
	nfsb_u64(b, 0);
	nfsb_u64(b, 100);
	sid(b);
	nfsb_opaque(b, NULL, 3);

	nfsb_u32(b, 60); /* COPY */
	sid(b);
	sid(b);
	nfsb_u64(b, 0);
	nfsb_u64(b, 0);
	nfsb_u64(b, 10);
	nfsb_u32(b, 0);
	nfsb_u32(b, 1);
	nfsb_u32(b, 2);
	nfsb_u32(b, 1);
	nfsb_string(b, "srv");
	nfsb_u32(b, 3);
	nfsb_string(b, "tcp");
	nfsb_string(b, "1.2.3.4.8.1");

	nfsb_u32(b, 70); /* WRITE_SAME */
	sid(b);
	nfsb_u32(b, 1);
	for (int i = 0; i < 4; i++)
		nfsb_u64(b, 1);
	nfsb_u32(b, 1);
	nfsb_u64(b, 0);
	nfsb_opaque(b, NULL, 7);

	nfsb_u32(b, 73); /* SETXATTR */
	nfsb_u32(b, 0);
	nfsb_string(b, "user.x");
	nfsb_opaque(b, NULL, 5);

	nfsb_u32(b, 38); /* WRITE */
	sid(b);
	nfsb_u64(b, 0);
	nfsb_u32(b, 2);
	nfsb_item(b, NULL, 33);
}

START_TEST(v4_arguments_of_complex_operations_are_skipped_exactly)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	CHECK_BOTH_MODES(&b, false, v4ci(), v4_call_raw(&b, many_ops, 10));
	ck_assert_uint_eq(b.n_items, 1);
	struct rpcrdma_reply_plan plan;
	size_t n = v4_call_raw(&b, many_ops, 10);
	ck_assert_int_eq(ULB->reply_plan(NULL, v4ci(), buf + b.body_off, n - b.body_off, &plan), 0);
	ck_assert(!plan.unpredictable);
	ck_assert_uint_eq(plan.n_items, 0);
	ck_assert_uint_gt(plan.max_inline, 8192);
}
END_TEST

/* Results the builder does not know, followed by a READ whose data must be found. */
static size_t v4_reply_raw(struct nfsb *b)
{
	nfsb_reply_hdr(b, 1);
	nfsb_u32(b, 0);
	nfsb_string(b, "raw");
	nfsb_u32(b, 10);

	nfsb_u32(b, 18); /* OPEN without delegation: OPEN_DELEGATE_NONE_EXT, WND4_CONTENTION */
	nfsb_u32(b, 0);
	sid(b);
	nfsb_u32(b, 0);
	nfsb_u64(b, 1);
	nfsb_u64(b, 2);
	nfsb_u32(b, 4);
	nfsb_u32(b, 0);
	nfsb_u32(b, 3);
	nfsb_u32(b, 1);
	nfsb_u32(b, 1);

	nfsb_u32(b, 18); /* OPEN with a WRITE delegation, NFS_LIMIT_BLOCKS */
	nfsb_u32(b, 0);
	sid(b);
	nfsb_u32(b, 1);
	nfsb_u64(b, 1);
	nfsb_u64(b, 2);
	nfsb_u32(b, 4);
	nfsb_u32(b, 1);
	nfsb_u32(b, 0x6);
	nfsb_u32(b, 2);
	sid(b);
	nfsb_u32(b, 0);
	nfsb_u32(b, 2);
	nfsb_u32(b, 10);
	nfsb_u32(b, 512);
	nfsb_u32(b, 0);
	nfsb_u32(b, 0);
	nfsb_u32(b, 0x1f);
	nfsb_string(b, "OWNER@");

	nfsb_u32(b, 26); /* READDIR with two entries */
	nfsb_u32(b, 0);
	nfsb_fixed(b, NULL, 8);
	for (int i = 0; i < 2; i++) {
		nfsb_u32(b, 1);
		nfsb_u64(b, (uint64_t)i + 3);
		nfsb_string(b, i ? "bb" : "a");
		fattr(b);
	}
	nfsb_u32(b, 0);
	nfsb_u32(b, 1);

	nfsb_u32(b, 42); /* EXCHANGE_ID, SP4_MACH_CRED */
	nfsb_u32(b, 0);
	nfsb_u64(b, 9);
	nfsb_u32(b, 1);
	nfsb_u32(b, 0x10000);
	nfsb_u32(b, 1);
	nfsb_u32(b, 1);
	nfsb_u32(b, 3);
	nfsb_u32(b, 0);
	nfsb_u64(b, 5);
	nfsb_opaque(b, NULL, 17);
	nfsb_opaque(b, NULL, 3);
	nfsb_u32(b, 0);

	nfsb_u32(b, 43); /* CREATE_SESSION */
	nfsb_u32(b, 0);
	nfsb_fixed(b, NULL, 16);
	nfsb_u32(b, 1);
	nfsb_u32(b, 0);
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < 6; k++)
			nfsb_u32(b, 1024);
		nfsb_u32(b, 0);
	}

	nfsb_u32(b, 50); /* LAYOUTGET */
	nfsb_u32(b, 0);
	nfsb_u32(b, 1);
	sid(b);
	nfsb_u32(b, 1);
	nfsb_u64(b, 0);
	nfsb_u64(b, ~0ull);
	nfsb_u32(b, 1);
	nfsb_u32(b, 1);
	nfsb_opaque(b, NULL, 30);

	nfsb_u32(b, 33); /* SECINFO */
	nfsb_u32(b, 0);
	nfsb_u32(b, 2);
	nfsb_u32(b, 6);
	nfsb_opaque(b, NULL, 9);
	nfsb_u32(b, 0);
	nfsb_u32(b, 1);
	nfsb_u32(b, 1);

	nfsb_u32(b, 68); /* READ_PLUS: a data and a hole segment (not eligible) */
	nfsb_u32(b, 0);
	nfsb_u32(b, 1);
	nfsb_u32(b, 2);
	nfsb_u32(b, 0);
	nfsb_u64(b, 0);
	nfsb_opaque(b, NULL, 10);
	nfsb_u32(b, 1);
	nfsb_u64(b, 10);
	nfsb_u64(b, 100);

	nfsb_u32(b, 9); /* GETATTR */
	nfsb_u32(b, 0);
	fattr(b);

	nfsb_u32(b, 25); /* READ */
	nfsb_u32(b, 0);
	nfsb_u32(b, 1);
	nfsb_item(b, NULL, 21);
	return nfsb_done(b);
}

START_TEST(v4_results_of_complex_operations_are_skipped_exactly)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	CHECK_BOTH_MODES(&b, true, v4ci(), v4_reply_raw(&b));
	ck_assert_uint_eq(b.n_items, 1);
}
END_TEST

START_TEST(v4_huge_counts_end_with_the_buffer)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	/* op count 2^32 - 1 with a few void ops */
	nfsb_call_hdr(&b, 1, NFSB_PROG_NFS, 4, 1);
	nfsb_string(&b, "");
	nfsb_u32(&b, 0);
	nfsb_u32(&b, 0xffffffffu);
	for (int i = 0; i < 100; i++)
		nfsb_u32(&b, NFSB4_PUTROOTFH);
	struct rec r = {.present = 1};
	ck_assert_int_eq(walk(&b, b.off, false, v4ci(), &r), IW_ERPC_RPC);
	/* a TEST_STATEID with 2^30 stateids */
	nfsb_call_hdr(&b, 1, NFSB_PROG_NFS, 4, 1);
	nfsb_string(&b, "");
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 55);
	nfsb_u32(&b, 1u << 30);
	ck_assert_int_eq(walk(&b, b.off, false, v4ci(), &r), IW_ERPC_RPC);
	/* a reply array of 2^32 - 1 results */
	nfsb_reply_hdr(&b, 1);
	nfsb_u32(&b, 0);
	nfsb_string(&b, "");
	nfsb_u32(&b, 0xffffffffu);
	for (int i = 0; i < 100; i++) {
		nfsb_u32(&b, NFSB4_PUTFH);
		nfsb_u32(&b, 0);
	}
	ck_assert_int_eq(walk(&b, b.off, true, v4ci(), &r), IW_ERPC_RPC);
	ck_assert_uint_eq(r.n, 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* truncation                                                              */
/* ---------------------------------------------------------------------- */

/* Every strict prefix of a fully walked body fails with IW_ERPC_RPC, in both modes. */
static void expect_every_prefix_fails(const struct nfsb *b, size_t n, bool reply,
				      const struct rpcrdma_rpcinfo *ci, int present)
{
	size_t blen = n - b->body_off;
	for (size_t len = 0; len < blen; len++) {
		uint8_t *body = th_memdup_exact(b->p + b->body_off, len);
		struct rec r = {.present = present};
		int ret = reply ? ULB->walk_reply(NULL, ci, body, len, rec_fn, &r)
				: ULB->walk_call(NULL, ci, body, len, rec_fn, &r);
		ck_assert_msg(ret == IW_ERPC_RPC, "prefix %zu of %zu: %d", len, blen, ret);
		free(body);
	}
}

/*
 * Octets of the smallest arguments of every operation 3..75 when every word
 * is zero (counts, lengths, booleans and union discriminants 0), computed
 * from the XDR of RFC 7530 §16, RFC 8881 §18, RFC 7862 §15, RFC 8276 §8.4;
 * { op, length, index of a word to set, its value } where a zero
 * discriminant is not allowed.
 */
static const struct {
	uint32_t op, len, patch_word, patch_val;
} v4_min_args[] = {
	{3, 4, 0, 0},	{4, 20, 0, 0},	{5, 12, 0, 0},	{6, 16, 0, 0},	{7, 8, 0, 0},
	{8, 16, 0, 0},	{9, 4, 0, 0},	{10, 0, 0, 0},	{11, 4, 0, 0},	{12, 48, 0, 0},
	{13, 32, 0, 0}, {14, 40, 0, 0}, {15, 4, 0, 0},	{16, 0, 0, 0},	{17, 8, 0, 0},
	{18, 36, 0, 0}, {19, 4, 0, 0},	{20, 20, 0, 0}, {21, 28, 0, 0}, {22, 4, 0, 0},
	{23, 0, 0, 0},	{24, 0, 0, 0},	{25, 28, 0, 0}, {26, 28, 0, 0}, {27, 0, 0, 0},
	{28, 4, 0, 0},	{29, 8, 0, 0},	{30, 8, 0, 0},	{31, 0, 0, 0},	{32, 0, 0, 0},
	{33, 4, 0, 0},	{34, 24, 0, 0}, {35, 28, 0, 0}, {36, 16, 0, 0}, {37, 8, 0, 0},
	{38, 32, 0, 0}, {39, 12, 0, 0}, {40, 8, 0, 0},	{41, 24, 0, 0}, {42, 24, 0, 0},
	{43, 80, 0, 0}, {44, 16, 0, 0}, {45, 16, 0, 0}, {46, 40, 0, 0}, {47, 28, 0, 0},
	{48, 24, 0, 0}, {49, 52, 0, 0}, {50, 56, 0, 0}, {51, 16, 3, 3}, {52, 4, 0, 0},
	{53, 32, 0, 0}, {54, 8, 0, 0},	{55, 4, 0, 0},	{56, 8, 1, 4},	{57, 8, 0, 0},
	{58, 4, 0, 0},	{59, 32, 0, 0}, {60, 68, 0, 0}, {61, 24, 4, 1}, {62, 32, 0, 0},
	{63, 36, 0, 0}, {64, 36, 0, 0}, {65, 88, 0, 0}, {66, 16, 0, 0}, {67, 16, 0, 0},
	{68, 28, 0, 0}, {69, 28, 0, 0}, {70, 68, 0, 0}, {71, 56, 0, 0}, {72, 4, 0, 0},
	{73, 12, 0, 0}, {74, 12, 0, 0}, {75, 4, 0, 0},
};

/* The same for the NFS4_OK results (READ and READLINK aside). */
static const struct {
	uint32_t op, len, patch_word, patch_val;
} v4_min_res[] = {
	{3, 8, 0, 0},	{4, 16, 0, 0},	  {5, 8, 0, 0},	  {6, 24, 0, 0},  {7, 0, 0, 0},
	{8, 0, 0, 0},	{9, 8, 0, 0},	  {10, 4, 0, 0},  {11, 20, 0, 0}, {12, 16, 0, 0},
	{13, 0, 0, 0},	{14, 16, 0, 0},	  {15, 0, 0, 0},  {16, 0, 0, 0},  {17, 0, 0, 0},
	{18, 48, 0, 0}, {19, 0, 0, 0},	  {20, 16, 0, 0}, {21, 16, 0, 0}, {22, 0, 0, 0},
	{23, 0, 0, 0},	{24, 0, 0, 0},	  {26, 16, 0, 0}, {28, 20, 0, 0}, {29, 40, 0, 0},
	{30, 0, 0, 0},	{31, 0, 0, 0},	  {32, 0, 0, 0},  {33, 4, 0, 0},  {34, 4, 0, 0},
	{35, 16, 0, 0}, {36, 0, 0, 0},	  {37, 0, 0, 0},  {38, 16, 0, 0}, {39, 0, 0, 0},
	{40, 0, 0, 0},	{41, 24, 0, 0},	  {42, 40, 0, 0}, {43, 80, 0, 0}, {44, 0, 0, 0},
	{45, 0, 0, 0},	{46, 40, 0, 0},	  {47, 12, 0, 0}, {48, 24, 0, 0}, {49, 4, 0, 0},
	{50, 24, 0, 0}, {51, 4, 0, 0},	  {52, 4, 0, 0},  {53, 36, 0, 0}, {54, 4, 0, 0},
	{55, 4, 0, 0},	{56, 4, 0, 0},	  {57, 0, 0, 0},  {58, 0, 0, 0},  {59, 0, 0, 0},
	{60, 32, 0, 0}, {61, 32, 0, 0},	  {62, 0, 0, 0},  {63, 4, 0, 0},  {64, 0, 0, 0},
	{65, 0, 0, 0},	{66, 0, 0, 0},	  {67, 12, 0, 0}, {68, 8, 0, 0},  {69, 12, 0, 0},
	{70, 24, 0, 0}, {71, 0, 0, 0},	  {72, 4, 0, 0},  {73, 20, 0, 0}, {74, 16, 0, 0},
	{75, 20, 0, 0}, {10044, 0, 0, 0},
};

static void zero_words(struct nfsb *b, uint32_t len, uint32_t patch_word, uint32_t patch_val)
{
	for (uint32_t i = 0; i < len / 4; i++)
		nfsb_u32(b, patch_val && i == patch_word ? patch_val : 0);
}

/* A COMPOUND call (minor version 2) of nops operations, up to the first opcode. */
static void v4_call_start(struct nfsb *b, uint32_t nops, uint32_t op)
{
	nfsb_call_hdr(b, 1, NFSB_PROG_NFS, 4, 1);
	nfsb_string(b, "");
	nfsb_u32(b, 2);
	nfsb_u32(b, nops);
	nfsb_u32(b, op);
}

/* The same, its first operation v4_min_args[i] with its smallest arguments. */
static void v4_min_call_start(struct nfsb *b, size_t i, uint32_t nops)
{
	v4_call_start(b, nops, v4_min_args[i].op);
	if (v4_min_args[i].op == NFSB4_WRITE) { /* its data: an item of 0 octets */
		zero_words(b, v4_min_args[i].len - 4, 0, 0);
		nfsb_item(b, NULL, 0);
	} else {
		zero_words(b, v4_min_args[i].len, v4_min_args[i].patch_word,
			   v4_min_args[i].patch_val);
	}
}

START_TEST(v4_every_operations_arguments_are_skipped_to_the_octet)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(v4_min_args) / sizeof(v4_min_args[0]); i++) {
		for (int reduced = 1; reduced >= 0; reduced--) /* unreduced last: planned */ {
			b.reduce = reduced;
			v4_min_call_start(&b, i, 2);
			nfsb_u32(&b, NFSB4_WRITE);
			nfsb_fixed(&b, NULL, 16 + 8 + 4);
			nfsb_item(&b, NULL, 5);
			size_t n = nfsb_done(&b);
			struct rec r = {.present = !reduced};
			ck_assert_msg(walk(&b, n, false, v4ci(), &r) == 0, "op %u",
				      v4_min_args[i].op);
			expect_items(&b, &r);
			expect_every_prefix_fails(&b, n, false, v4ci(), !reduced);
		}
		b.reduce = false;
		size_t n = nfsb_done(&b);
		struct rpcrdma_reply_plan plan;
		ck_assert_int_eq(
			ULB->reply_plan(NULL, v4ci(), buf + b.body_off, n - b.body_off, &plan), 0);
		ck_assert(plan.unpredictable == (v4_min_args[i].op == 72));
		ck_assert_uint_eq(plan.n_items, v4_min_args[i].op == 25 || v4_min_args[i].op == 27);
	}
}
END_TEST

START_TEST(v4_every_operations_results_are_skipped_to_the_octet)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(v4_min_res) / sizeof(v4_min_res[0]); i++) {
		for (int reduced = 0; reduced <= 1; reduced++) {
			b.reduce = reduced;
			nfsb_reply_hdr(&b, 1);
			nfsb_u32(&b, 0);
			nfsb_string(&b, "");
			nfsb_u32(&b, 2);
			nfsb_u32(&b, v4_min_res[i].op);
			nfsb_u32(&b, 0);
			zero_words(&b, v4_min_res[i].len, v4_min_res[i].patch_word,
				   v4_min_res[i].patch_val);
			nfsb_u32(&b, NFSB4_READ);
			nfsb_u32(&b, 0);
			nfsb_u32(&b, 1);
			nfsb_item(&b, NULL, 5);
			size_t n = nfsb_done(&b);
			struct rec r = {.present = !reduced};
			ck_assert_msg(walk(&b, n, true, v4ci(), &r) == 0, "op %u",
				      v4_min_res[i].op);
			expect_items(&b, &r);
			expect_every_prefix_fails(&b, n, true, v4ci(), !reduced);
		}
	}
	b.reduce = false;
}
END_TEST

START_TEST(truncation_at_every_length_is_an_rpc_error)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	struct rpcrdma_rpcinfo w3 = call_info(NFSB_PROG_NFS, 3, NFSB3_WRITE);
	struct rpcrdma_rpcinfo s3 = call_info(NFSB_PROG_NFS, 3, NFSB3_SYMLINK);
	struct rpcrdma_rpcinfo r3 = call_info(NFSB_PROG_NFS, 3, NFSB3_READ);
	struct rpcrdma_rpcinfo l3 = call_info(NFSB_PROG_NFS, 3, NFSB3_READLINK);
	struct rpcrdma_rpcinfo s2 = call_info(NFSB_PROG_NFS, 2, NFSB2_SYMLINK);
	struct rpcrdma_rpcinfo r2 = call_info(NFSB_PROG_NFS, 2, NFSB2_READ);
	for (int reduced = 0; reduced <= 1; reduced++) {
		b.reduce = reduced;
		int present = !reduced;
		expect_every_prefix_fails(&b, nfsb_v3_write_call(&b, 1, 32, 0, NULL, 13), false,
					  &w3, present);
		expect_every_prefix_fails(&b, nfsb_v3_symlink_call(&b, 1, 32, "n", "p/q"), false,
					  &s3, present);
		expect_every_prefix_fails(&b, nfsb_v3_read_reply(&b, 1, NULL, 10, 1), true, &r3,
					  present);
		expect_every_prefix_fails(&b, nfsb_v3_readlink_reply(&b, 1, "abc"), true, &l3,
					  present);
		expect_every_prefix_fails(&b, nfsb_v2_symlink_call(&b, 1, "n", "p"), false, &s2,
					  present);
		expect_every_prefix_fails(&b, nfsb_v2_read_reply(&b, 1, NULL, 6), true, &r2,
					  present);
		expect_every_prefix_fails(&b, v4_call_raw(&b, many_ops, 10), false, v4ci(),
					  present);
		expect_every_prefix_fails(&b, v4_reply_raw(&b), true, v4ci(), present);
		struct nfsb_v4op ops[] = {
			{.op = NFSB4_SEQUENCE},
			{.op = NFSB4_PUTFH, .len = 20},
			{.op = NFSB4_READ, .len = 11},
			{.op = NFSB4_READLINK, .data = "ab", .len = 2},
			{.op = NFSB4_GETATTR, .nbitmap = 2, .bitmap = {1, 2}, .len = 9},
			{.op = NFSB4_CREATE, .objtype = NFSB4_NF4LNK, .len = 5},
			{.op = NFSB4_WRITE, .len = 6},
			{.op = NFSB4_GETFH, .len = 12},
		};
		expect_every_prefix_fails(&b, nfsb_v4_compound_call(&b, 1, 1, "tt", ops, 8), false,
					  v4ci(), present);
		expect_every_prefix_fails(&b, nfsb_v4_compound_reply(&b, 1, "tt", ops, 8), true,
					  v4ci(), present);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* reply plans                                                             */
/* ---------------------------------------------------------------------- */

static struct rpcrdma_reply_plan plan_of(const struct nfsb *b, size_t n,
					 const struct rpcrdma_rpcinfo *ci)
{
	struct rpcrdma_reply_plan plan;
	memset(&plan, 0xa5, sizeof(plan));
	uint8_t *body = th_memdup_exact(b->p + b->body_off, n - b->body_off);
	ck_assert_int_eq(ULB->reply_plan(NULL, ci, body, n - b->body_off, &plan), 0);
	free(body);
	return plan;
}

START_TEST(v3_reply_plans_follow_the_xdr_of_the_results)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	struct rpcrdma_rpcinfo ci = call_info(NFSB_PROG_NFS, 3, NFSB3_READ);
	struct rpcrdma_reply_plan p = plan_of(&b, nfsb_v3_read_call(&b, 1, 32, 0, 65536), &ci);
	ck_assert(!p.unpredictable);
	ck_assert_uint_eq(p.n_items, 1);
	ck_assert_uint_eq(p.item_max[0], 65536);
	ck_assert_uint_eq(p.max_inline, 4 + 88 + 4 + 4 + 4 + 4);
	/* a built READ reply fits the plan */
	size_t rn = nfsb_v3_read_reply(&b, 1, NULL, 0, true);
	ck_assert_uint_le(rn - b.body_off, p.max_inline);

	/* counts over 1 MiB are clamped */
	p = plan_of(&b, nfsb_v3_read_call(&b, 1, 32, 0, 5u << 20), &ci);
	ck_assert_uint_eq(p.item_max[0], 1u << 20);

	ci.proc = NFSB3_READLINK;
	p = plan_of(&b, nfsb_v3_readlink_call(&b, 1, 32), &ci);
	ck_assert_uint_eq(p.n_items, 1);
	ck_assert_uint_eq(p.item_max[0], 4096);

	ci.proc = NFSB3_GETATTR;
	p = plan_of(&b, nfsb_v3_getattr_call(&b, 1, 32), &ci);
	ck_assert_uint_eq(p.n_items, 0);
	ck_assert_uint_eq(p.max_inline, 88);
	rn = nfsb_v3_getattr_reply(&b, 1, 100);
	ck_assert_uint_eq(rn - b.body_off, 88);

	ci.proc = NFSB3_WRITE;
	p = plan_of(&b, nfsb_v3_write_call(&b, 1, 32, 0, NULL, 100), &ci);
	ck_assert_uint_eq(p.n_items, 0);
	rn = nfsb_v3_write_reply(&b, 1, 100);
	ck_assert_uint_eq(rn - b.body_off, p.max_inline);

	ci.proc = NFSB3_READDIR;
	p = plan_of(&b, nfsb_v3_readdir_call(&b, 1, 32, 8192), &ci);
	ck_assert(!p.unpredictable);
	ck_assert_uint_eq(p.n_items, 0);
	ck_assert_uint_ge(p.max_inline, 8192);
	ck_assert_uint_le(p.max_inline, 8192 + 256);

	ci.proc = NFSB3_NULL;
	p = plan_of(&b, nfsb_v3_null_call(&b, 1), &ci);
	ck_assert_uint_eq(p.max_inline, 0);
	ck_assert(!p.unpredictable);

	ci.proc = 22; /* not an NFSv3 procedure */
	p = plan_of(&b, nfsb_v3_null_call(&b, 1), &ci);
	ck_assert(p.unpredictable);

	/* truncated READ arguments do not decode */
	ci.proc = NFSB3_READ;
	size_t n = nfsb_v3_read_call(&b, 1, 32, 0, 100);
	struct rpcrdma_reply_plan pl;
	ck_assert_int_eq(ULB->reply_plan(NULL, &ci, buf + b.body_off, n - b.body_off - 1, &pl),
			 IW_ERPC_RPC);

	struct rpcrdma_rpcinfo v2 = call_info(NFSB_PROG_NFS, 2, NFSB2_READ);
	p = plan_of(&b, nfsb_v2_read_call(&b, 1, 0, 100000), &v2);
	ck_assert_uint_eq(p.n_items, 1);
	ck_assert_uint_eq(p.item_max[0], 8192);
}
END_TEST

START_TEST(v4_reply_plans_sum_the_operations)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	struct rpcrdma_reply_plan p = plan_of(&b, nfsb_v4_read_call(&b, 1, 0, 32768), v4ci());
	ck_assert(!p.unpredictable);
	ck_assert_uint_eq(p.n_items, 1);
	ck_assert_uint_eq(p.item_max[0], 32768);
	size_t rn = nfsb_v4_read_reply(&b, 1, NULL, 0, false);
	ck_assert_uint_le(rn - b.body_off, p.max_inline);

	/* GETATTR of ordinary attributes: bounded; of the ACL: unpredictable */
	struct nfsb_v4op ops[] = {
		{.op = NFSB4_PUTROOTFH},
		{.op = NFSB4_GETATTR, .nbitmap = 2, .bitmap = {0x0010011a, 0x00b0a23a}},
	};
	p = plan_of(&b, nfsb_v4_compound_call(&b, 1, 0, "", ops, 2), v4ci());
	ck_assert(!p.unpredictable);
	ck_assert_uint_eq(p.n_items, 0);
	ck_assert_uint_ge(p.max_inline, 4096);
	ops[1].bitmap[0] |= 1u << 12; /* acl */
	p = plan_of(&b, nfsb_v4_compound_call(&b, 1, 0, "", ops, 2), v4ci());
	ck_assert(p.unpredictable);
	ck_assert_uint_eq(p.max_inline, 0);
	ops[1].bitmap[0] = 0;
	ops[1].bitmap[1] = 1u << (58 - 32); /* dacl */
	p = plan_of(&b, nfsb_v4_compound_call(&b, 1, 0, "", ops, 2), v4ci());
	ck_assert(p.unpredictable);

	/* more READs than Write chunks: the rest are planned inline */
	struct nfsb_v4op reads[12];
	memset(reads, 0, sizeof(reads));
	for (int i = 0; i < 12; i++)
		reads[i].op = NFSB4_READ, reads[i].count = 1000u + (uint32_t)i;
	p = plan_of(&b, nfsb_v4_compound_call(&b, 1, 0, "", reads, 12), v4ci());
	ck_assert_uint_eq(p.n_items, RPCRDMA_MAX_WRITE_CHUNKS);
	ck_assert_uint_eq(p.item_max[7], 1007);
	ck_assert_uint_ge(p.max_inline, 1008 + 1009 + 1010 + 1011);

	/* NULL: nothing; any other procedure: unknown */
	struct rpcrdma_rpcinfo ci = call_info(NFSB_PROG_NFS, 4, 0);
	p = plan_of(&b, nfsb_v3_null_call(&b, 1), &ci);
	ck_assert(!p.unpredictable);
	ck_assert_uint_eq(p.max_inline, 0);
	ci.proc = 2;
	p = plan_of(&b, nfsb_v3_null_call(&b, 1), &ci);
	ck_assert(p.unpredictable);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* the NFSv4 operation table (rpcrdma/nfs/nfs_v4.h)                        */
/* ---------------------------------------------------------------------- */

/* How many ways a row gives arguments or a result: items, a skipper, a call. */
static int row_ways(const uint8_t *items, bool fn, bool call)
{
	return (items[0] != 0) + fn + call;
}

START_TEST(v4_every_operation_has_a_named_row_with_its_xdr)
{
	/* the numbers of RFC 7530 §16, RFC 8881 §18, RFC 7862 §15, RFC 8276 §8.4 */
	ck_assert_uint_eq(NFS4_OP_FIRST, 3);
	ck_assert_uint_eq(NFS4_OP_LAST, 75);
	ck_assert_uint_eq(OP_READ, 25);
	ck_assert_uint_eq(OP_SEQUENCE, 53);
	ck_assert_uint_eq(OP_CLONE, 71);
	ck_assert_uint_eq(OP_ILLEGAL, 10044);
	ck_assert_str_eq(nfs4_op_find(3)->name, "ACCESS");
	ck_assert_str_eq(nfs4_op_find(38)->name, "WRITE");
	ck_assert_str_eq(nfs4_op_find(75)->name, "REMOVEXATTR");
	for (uint32_t op = NFS4_OP_FIRST; op <= NFS4_OP_LAST; op++) {
		const struct nfs4_op_desc *d = nfs4_op_find(op);
		ck_assert_msg(d && d->name && d->name[0], "op %u has no row", op);
		for (const char *ch = d->name; *ch; ch++)
			ck_assert_msg((*ch >= 'A' && *ch <= 'Z') || *ch == '_', "op %u: %s", op,
				      d->name);
		for (uint32_t prev = NFS4_OP_FIRST; prev < op; prev++)
			ck_assert_str_ne(nfs4_op_find(prev)->name, d->name);
		/* arguments and result given one way each, or void */
		ck_assert_msg(row_ways(d->args, d->args_fn != NULL, d->call != NULL) <= 1, "%s",
			      d->name);
		ck_assert_msg(row_ways(d->res, d->res_fn != NULL, false) <= 1, "%s", d->name);
		/* RFC 8267 §6.1: READ and READLINK results, WRITE and CREATE arguments */
		ck_assert_msg(!(d->flags & NFS4_OPF_WRITE_SLOT) ==
				      (op != OP_READ && op != OP_READLINK),
			      "%s", d->name);
		ck_assert_msg(!(d->flags & NFS4_OPF_DDP_ARG) == (op != OP_WRITE && op != OP_CREATE),
			      "%s", d->name);
		ck_assert(!(d->flags & NFS4_OPF_DDP_ARG) || d->call);
	}
	/* void exactly where the smallest encoding is 0 octets (READLINK: a call
	 * that plans its slot) */
	for (size_t i = 0; i < IW_ARRAY_SIZE(v4_min_args); i++) {
		const struct nfs4_op_desc *d = nfs4_op_find(v4_min_args[i].op);
		int ways = row_ways(d->args, d->args_fn != NULL, d->call != NULL);
		ck_assert_msg(v4_min_args[i].len ? ways == 1 : ways == (d->call != NULL), "%s",
			      d->name);
	}
	for (size_t i = 0; i < IW_ARRAY_SIZE(v4_min_res); i++) {
		const struct nfs4_op_desc *d = nfs4_op_find(v4_min_res[i].op);
		if (v4_min_res[i].op == OP_ILLEGAL)
			continue;
		int ways = row_ways(d->res, d->res_fn != NULL, false);
		ck_assert_msg(ways == (v4_min_res[i].len != 0), "%s", d->name);
	}
}
END_TEST

START_TEST(v4_unknown_opcodes_end_the_walk_with_an_rpc_error)
{
	static const uint32_t unknown[] = {0, 1, 2, 76, OP_ILLEGAL};
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	for (size_t i = 0; i < IW_ARRAY_SIZE(unknown); i++) {
		ck_assert_ptr_null(nfs4_op_find(unknown[i]));
		/* a call: nothing after the opcode can be located */
		struct nfsb_v4op ops[] = {
			{.op = NFSB4_PUTROOTFH},
			{.op = unknown[i]},
			{.op = NFSB4_READ, .count = 10, .len = 10},
		};
		size_t n = nfsb_v4_compound_call(&b, 1, 2, "t", ops, 3);
		struct rec r = {.present = 1};
		ck_assert_int_eq(walk(&b, n, false, v4ci(), &r), IW_ERPC_RPC);
		struct rpcrdma_reply_plan plan;
		ck_assert_int_eq(
			ULB->reply_plan(NULL, v4ci(), buf + b.body_off, n - b.body_off, &plan),
			IW_ERPC_RPC);
		/* a reply: the same, but for OP_ILLEGAL, the status alone (a server
		 * sends it failed, NFS4ERR_OP_ILLEGAL, and the walk ends there) */
		n = nfsb_v4_compound_reply(&b, 1, "t", ops, 3);
		r.n = 0;
		ck_assert_int_eq(walk(&b, n, true, v4ci(), &r),
				 unknown[i] == OP_ILLEGAL ? 0 : IW_ERPC_RPC);
		ck_assert_uint_eq(r.n, unknown[i] == OP_ILLEGAL);
		ops[1].status = 10044; /* NFS4ERR_OP_ILLEGAL */
		n = nfsb_v4_compound_reply(&b, 1, "t", ops, 3);
		r.n = 0;
		ck_assert_int_eq(walk(&b, n, true, v4ci(), &r), 0);
		ck_assert_uint_eq(r.n, 0);
	}
}
END_TEST

START_TEST(v4_row_bounds_are_what_a_call_plans)
{
	struct nfsb b;
	nfsb_init(&b, buf, sizeof(buf));
	/* every operation alone, every count 0: status, tag "", result count,
	 * resop, status, then the bound of its row */
	for (size_t i = 0; i < IW_ARRAY_SIZE(v4_min_args); i++) {
		const struct nfs4_op_desc *d = nfs4_op_find(v4_min_args[i].op);
		v4_min_call_start(&b, i, 1);
		struct rpcrdma_reply_plan p = plan_of(&b, nfsb_done(&b), v4ci());
		bool unpredictable = d->flags & NFS4_OPF_UNPREDICTABLE;
		ck_assert_msg(p.unpredictable == unpredictable, "%s", d->name);
		ck_assert_msg(p.max_inline == (unpredictable ? 0 : 4 + 4 + 4 + 8 + d->bound),
			      "%s: %u", d->name, p.max_inline);
		ck_assert_uint_eq(p.n_items, !!(d->flags & NFS4_OPF_WRITE_SLOT));
		if (p.n_items) /* READ of count 0; READLINK of a path */
			ck_assert_uint_eq(p.item_max[0], v4_min_args[i].op == OP_READ ? 0 : 4096);
	}
	/* spot checks from the XDR of the results */
	ck_assert_uint_eq(nfs4_op_find(OP_ACCESS)->bound, 4 + 4);	 /* supported, access */
	ck_assert_uint_eq(nfs4_op_find(OP_SEQUENCE)->bound, 16 + 5 * 4); /* sessionid, 5 words */
	ck_assert_uint_eq(nfs4_op_find(OP_GETFH)->bound, 4 + 128);	 /* nfs_fh4<NFS4_FHSIZE> */
	ck_assert_uint_eq(nfs4_op_find(OP_WRITE)->bound, 4 + 4 + 8); /* count, committed, verf */
	/* and a count that adds to it: LISTXATTRS cookie, maxcount 1000 -> cookie,
	 * names (at most maxcount), eof */
	v4_call_start(&b, 1, OP_LISTXATTRS);
	nfsb_u64(&b, 0);
	nfsb_u32(&b, 1000);
	struct rpcrdma_reply_plan p = plan_of(&b, nfsb_done(&b), v4ci());
	ck_assert_uint_eq(p.max_inline, 4 + 4 + 4 + 8 + 8 + 4 + 1000 + 4);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Linux captures                                                          */
/* ---------------------------------------------------------------------- */

static size_t cap_bytes(const struct nfs_capture *c, uint8_t **out)
{
	size_t hexlen = strlen(c->hex);
	uint8_t *tmp = malloc(hexlen / 2 + 1);
	long n = th_hex_decode(c->hex, tmp, hexlen / 2 + 1);
	ck_assert_int_gt(n, 0);
	*out = th_memdup_exact(tmp, (size_t)n);
	free(tmp);
	return (size_t)n;
}

START_TEST(linux_captures_walk_and_match_their_chunks)
{
	unsigned n_read_checked = 0, n_write_checked = 0, n_plain = 0, n_v4 = 0;
	for (size_t i = 0; i < sizeof(nfs_captures) / sizeof(nfs_captures[0]); i++) {
		const struct nfs_capture *c = &nfs_captures[i];
		uint8_t *msg;
		size_t n = cap_bytes(c, &msg);
		struct rpcrdma_rpcinfo ci = call_info(c->prog, c->vers, c->proc);
		ci.cred_flavor = c->flavor;
		/* the transport finds the body with rpcrdma_rpc_parse */
		struct rpcrdma_rpcinfo pi;
		ck_assert_int_eq(rpcrdma_rpc_parse(msg, n, &pi), 0);
		ck_assert_uint_eq(pi.body_off, c->body_off);
		ck_assert_uint_eq(pi.msg_type, c->is_reply ? RPC_MSG_REPLY : RPC_MSG_CALL);
		if (!c->is_reply) {
			ck_assert_uint_eq(pi.prog, c->prog);
			ck_assert_uint_eq(pi.vers, c->vers);
			ck_assert_uint_eq(pi.proc, c->proc);
			ck_assert_uint_eq(pi.cred_flavor, c->flavor);
		}
		const uint8_t *body = msg + c->body_off;
		size_t blen = n - c->body_off;
		bool chunks = c->is_reply ? c->n_write > 0 : c->n_read > 0;
		/* Linux moved the items into chunks: the reduced walk */
		struct rec r = {.present = chunks ? 0 : 1};
		int ret = c->is_reply ? ULB->walk_reply(NULL, &ci, body, blen, rec_fn, &r)
				      : ULB->walk_call(NULL, &ci, body, blen, rec_fn, &r);
		ck_assert_msg(ret == 0, "%s: %d", c->name, ret);
		if (c->prog == NFSB_PROG_NFS && c->vers == 4 && c->proc == 1)
			n_v4++;
		if (!c->is_reply && c->n_read > 0) {
			ck_assert_uint_eq(r.n, c->n_read);
			for (unsigned k = 0; k < r.n; k++) {
				/* Position counts from the start of the RPC message */
				ck_assert_uint_eq(c->read_pos[k], c->body_off + r.it[k].offset);
				ck_assert_uint_ge(c->read_len[k], r.it[k].length);
				ck_assert_uint_le(c->read_len[k], (r.it[k].length + 3) & ~3u);
				n_read_checked++;
			}
		} else if (c->is_reply && c->n_write > 0) {
			ck_assert_uint_eq(r.n, c->n_write);
			for (unsigned k = 0; k < r.n; k++) {
				ck_assert(r.it[k].valid);
				ck_assert_msg(r.it[k].length == c->write_len[k], "%s: %u != %u",
					      c->name, r.it[k].length, c->write_len[k]);
				n_write_checked++;
			}
		} else {
			for (unsigned k = 0; k < r.n && k < MAX_REC; k++)
				if (r.it[k].valid)
					ck_assert_uint_le((size_t)r.it[k].offset + r.it[k].length,
							  blen);
			n_plain++;
		}
		/* reply plans are made from the unreduced call */
		if (!c->is_reply && c->n_read == 0) {
			struct rpcrdma_reply_plan plan;
			ck_assert_int_eq(ULB->reply_plan(NULL, &ci, body, blen, &plan), 0);
			/* Linux offered a Write chunk per READ: our plan has a slot as
			 * large for each */
			if (c->n_write > 0 && c->prog == NFSB_PROG_NFS) {
				ck_assert_uint_eq(plan.n_items, c->n_write);
				for (unsigned k = 0; k < c->n_write; k++)
					ck_assert_uint_ge(plan.item_max[k], c->write_len[k]);
			}
		}
		free(msg);
	}
	ck_assert_uint_ge(n_read_checked, 2);
	ck_assert_uint_ge(n_write_checked, 4);
	ck_assert_uint_ge(n_plain, 50);
	ck_assert_uint_ge(n_v4, 40);
}
END_TEST

START_TEST(linux_capture_replies_fit_their_plans)
{
	/* pair each capture reply with its call (same prog/vers/proc, the call
	 * precedes it) and check the results fit max_inline + the slots */
	unsigned checked = 0;
	for (size_t i = 0; i < sizeof(nfs_captures) / sizeof(nfs_captures[0]); i++) {
		const struct nfs_capture *rep = &nfs_captures[i];
		if (!rep->is_reply || i == 0 || rep->prog != NFSB_PROG_NFS)
			continue;
		const struct nfs_capture *call = &nfs_captures[i - 1];
		if (call->is_reply || call->n_read || call->proc != rep->proc ||
		    call->vers != rep->vers)
			continue;
		if (strncmp(call->hex, rep->hex, 8) != 0) /* same XID */
			continue;
		uint8_t *cm, *rm;
		size_t cn = cap_bytes(call, &cm), rn = cap_bytes(rep, &rm);
		struct rpcrdma_rpcinfo ci = call_info(call->prog, call->vers, call->proc);
		struct rpcrdma_reply_plan plan;
		ck_assert_int_eq(
			ULB->reply_plan(NULL, &ci, cm + call->body_off, cn - call->body_off, &plan),
			0);
		if (!plan.unpredictable) {
			uint64_t room = plan.max_inline;
			for (unsigned k = 0; k < plan.n_items; k++)
				room += plan.item_max[k];
			ck_assert_msg(rn - rep->body_off <= room, "%s: %zu > %llu", rep->name,
				      rn - rep->body_off, (unsigned long long)room);
			checked++;
		}
		free(cm);
		free(rm);
	}
	ck_assert_uint_ge(checked, 30);
}
END_TEST

static Suite *nfs_suite(void)
{
	Suite *s = suite_create("nfs");
	TCase *v3 = tcase_create("v2_v3");
	tcase_add_test(v3, v3_write_data_is_found_in_unreduced_and_reduced_calls_for_every_padding);
	tcase_add_test(v3, v3_symlink_path_is_found_after_the_attributes);
	tcase_add_test(v3, v3_read_and_readlink_results_are_one_slot_each);
	tcase_add_test(v3, v3_failed_read_reply_is_an_invalid_slot);
	tcase_add_test(v3, v3_procedures_without_eligible_items_report_nothing);
	tcase_add_test(v3, auxiliary_programs_and_gss_calls_have_no_items);
	tcase_add_test(v3, walk_stops_with_the_callbacks_negative_code);
	tcase_add_test(v3, v2_write_read_readlink_and_symlink_items_are_found);
	tcase_add_test(v3, v2_data_over_8192_octets_does_not_decode);
	suite_add_tcase(s, v3);

	TCase *v4 = tcase_create("v4");
	tcase_add_test(v4, v4_write_and_create_symlink_data_are_reported_in_op_order);
	tcase_add_test(v4, v4_rfc8267_example_compound_reply_has_slots_0_1_2);
	tcase_add_test(v4, v4_failed_read_is_an_invalid_slot_and_the_walk_stops);
	tcase_add_test(v4, v4_unknown_opcode_stops_the_call_walk_with_an_rpc_error);
	tcase_add_test(v4, v4_null_and_callback_program_have_no_items);
	tcase_add_test(v4, v4_arguments_of_complex_operations_are_skipped_exactly);
	tcase_add_test(v4, v4_results_of_complex_operations_are_skipped_exactly);
	tcase_add_test(v4, v4_huge_counts_end_with_the_buffer);
	suite_add_tcase(s, v4);

	TCase *tr = tcase_create("bounds");
	tcase_add_test(tr, truncation_at_every_length_is_an_rpc_error);
	tcase_add_test(tr, v4_every_operations_arguments_are_skipped_to_the_octet);
	tcase_add_test(tr, v4_every_operations_results_are_skipped_to_the_octet);
	suite_add_tcase(s, tr);

	TCase *pl = tcase_create("plans");
	tcase_add_test(pl, v3_reply_plans_follow_the_xdr_of_the_results);
	tcase_add_test(pl, v4_reply_plans_sum_the_operations);
	suite_add_tcase(s, pl);

	TCase *tb = tcase_create("v4_table");
	tcase_add_test(tb, v4_every_operation_has_a_named_row_with_its_xdr);
	tcase_add_test(tb, v4_unknown_opcodes_end_the_walk_with_an_rpc_error);
	tcase_add_test(tb, v4_row_bounds_are_what_a_call_plans);
	suite_add_tcase(s, tb);

	TCase *cap = tcase_create("captures");
	tcase_add_test(cap, linux_captures_walk_and_match_their_chunks);
	tcase_add_test(cap, linux_capture_replies_fit_their_plans);
	suite_add_tcase(s, cap);
	return s;
}

TH_MAIN(nfs_suite)
