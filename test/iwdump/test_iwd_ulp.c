/* SPDX-License-Identifier: MIT */
/*
 * test_iwd_ulp.c - iwdump's RPC-over-RDMA and NFS reading (tools/iwdump/
 * iwd_ulp.c): the transport header of every procedure with its chunk lists
 * (RFC 8166 §4), RPC calls named by program and procedure, NFSv4 COMPOUNDs
 * by their operations (also when WRITE data went into a Read chunk), replies
 * matched to their calls by connection, direction and XID with their status,
 * the bounded XID table, RPC-level errors, the summary line, the -V printer,
 * every message of the Linux NFS/RDMA captures (test/nfs/data), garbage and
 * every truncation decoded from exact-size heap copies (run under ASan), and
 * the JSON string escaping of iwd_out.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "../nfs/data/nfs_captures.h"
#include "iwd.h"
#include "nfs_build.h"
#include "th.h"

#define BUF 16384

/* ---------------------------------------------------------------------- */
/* builders                                                                */
/* ---------------------------------------------------------------------- */

/* Chunks of a transport header to build. */
struct chunks {
	unsigned nread;
	uint32_t read_pos[4], read_len[4];
	unsigned nwrite;
	uint32_t write_len[4];
	uint32_t write_handle[4];
	bool reply;
	uint32_t reply_len;
};

/* An RPC-over-RDMA header (proc, chunks) followed by msg[0..n); returns its length. */
static size_t wrap(uint8_t *out, uint32_t xid, uint32_t proc, const struct chunks *ch,
		   const uint8_t *msg, size_t n)
{
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, xid, 64, proc);
	for (unsigned i = 0; ch && i < ch->nread; i++) {
		struct rpcrdma_segment sg = {0x1000 + i, ch->read_len[i],
					     0x7f0000001000ull * (i + 1)};
		ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, ch->read_pos[i], &sg), 0);
	}
	for (unsigned i = 0; ch && i < ch->nwrite; i++) {
		struct rpcrdma_segment sg = {ch->write_handle[i] ? ch->write_handle[i] : 0x2000 + i,
					     ch->write_len[i], 0x7f0000100000ull};
		ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &sg), 0);
	}
	if (ch && ch->reply) {
		struct rpcrdma_segment sg = {0x3000, ch->reply_len, 0x7f0000200000ull};
		ck_assert_int_eq(rpcrdma_hdr_add_reply(&h, &sg), 0);
	}
	int r = rpcrdma_hdr_encode(&h, out, BUF);
	ck_assert_int_gt(r, 0);
	ck_assert_uint_le((size_t)r + n, BUF);
	if (n)
		memcpy(out + r, msg, n);
	return (size_t)r + n;
}

/* Decode from an exact-size heap copy, so ASan sees any read past the end. */
static void dec(struct iwd_ulp_state *s, uint64_t conn, int dir, const uint8_t *p, size_t n,
		struct iwd_ulp *u)
{
	uint8_t *copy = th_memdup_exact(p, n);
	iwd_ulp_decode(s, conn, dir, copy, n, u);
	free(copy);
}

/* Wrap an RPC message in RDMA_MSG and decode it. */
static void dec_msg(struct iwd_ulp_state *s, uint64_t conn, int dir, const struct chunks *ch,
		    const uint8_t *msg, size_t n, struct iwd_ulp *u)
{
	uint8_t buf[BUF];
	uint32_t xid = n >= 4 ? (uint32_t)msg[0] << 24 | msg[1] << 16 | msg[2] << 8 | msg[3] : 0;
	size_t len = wrap(buf, xid, RDMA_MSG, ch, msg, n);
	dec(s, conn, dir, buf, len, u);
}

/* A reply header with another accept_stat (RFC 5531 §9). */
static size_t reply_accepted(uint8_t *buf, uint32_t xid, uint32_t accept_stat)
{
	struct nfsb b;
	nfsb_init(&b, buf, BUF);
	nfsb_u32(&b, xid);
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 0); /* MSG_ACCEPTED */
	nfsb_u32(&b, 0); /* verifier AUTH_NONE */
	nfsb_u32(&b, 0);
	nfsb_u32(&b, accept_stat);
	if (accept_stat == 2) { /* PROG_MISMATCH low, high */
		nfsb_u32(&b, 2);
		nfsb_u32(&b, 3);
	}
	return nfsb_done(&b);
}

static size_t reply_denied(uint8_t *buf, uint32_t xid, uint32_t reject_stat, uint32_t v)
{
	struct nfsb b;
	nfsb_init(&b, buf, BUF);
	nfsb_u32(&b, xid);
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 1); /* MSG_DENIED */
	nfsb_u32(&b, reject_stat);
	nfsb_u32(&b, v);
	if (reject_stat == 0)
		nfsb_u32(&b, v);
	return nfsb_done(&b);
}

/* A call of any program with no arguments. */
static size_t call_of(uint8_t *buf, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct nfsb b;
	nfsb_init(&b, buf, BUF);
	nfsb_call_hdr(&b, xid, prog, vers, proc);
	return nfsb_done(&b);
}

/* A reply whose results are the given words. */
static size_t reply_words(uint8_t *buf, uint32_t xid, const uint32_t *w, unsigned n)
{
	struct nfsb b;
	nfsb_init(&b, buf, BUF);
	nfsb_reply_hdr(&b, xid);
	for (unsigned i = 0; i < n; i++)
		nfsb_u32(&b, w[i]);
	return nfsb_done(&b);
}

/* The name a call gets. */
static void name_of(struct iwd_ulp_state *s, uint32_t prog, uint32_t vers, uint32_t proc,
		    char *what, size_t len)
{
	uint8_t msg[BUF];
	struct iwd_ulp u;
	size_t n = call_of(msg, 0x77, prog, vers, proc);
	dec_msg(s, 9, 0, NULL, msg, n, &u);
	ck_assert(u.rpc && u.call);
	snprintf(what, len, "%s", u.what);
}

/* ---------------------------------------------------------------------- */
/* transport header                                                        */
/* ---------------------------------------------------------------------- */

START_TEST(rdma_msg_reports_the_fixed_fields_and_segment_counts)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;
	struct chunks ch = {
		.nwrite = 2, .write_len = {4096, 8192}, .reply = true, .reply_len = 512};

	nfsb_init(&b, msg, sizeof(msg));
	size_t n = nfsb_v3_read_call(&b, 0x94216f95, 32, 0, 12288);
	dec_msg(s, 1, 0, &ch, msg, n, &u);
	ck_assert(u.rpcrdma);
	ck_assert_uint_eq(u.xid, 0x94216f95);
	ck_assert_uint_eq(u.vers, 1);
	ck_assert_uint_eq(u.credits, 64);
	ck_assert_uint_eq(u.proc, RDMA_MSG);
	ck_assert_uint_eq(u.nread, 0);
	ck_assert_uint_eq(u.nwrite, 2);
	ck_assert_uint_eq(u.nreply, 1);
	ck_assert_uint_eq(u.hdr_len, 96); /* 4 + 1 + 2 * (2 + 4) + 1 + 6 words */
	ck_assert_ptr_nonnull(u.hdr);
	ck_assert_uint_eq(u.hdr->n_write, 2);
	ck_assert_uint_eq(u.hdr->segs[u.hdr->write[1].first].length, 8192);
	ck_assert(u.rpc && u.call);
	ck_assert_uint_eq(u.prog, 100003);
	ck_assert_uint_eq(u.vers_rpc, 3);
	ck_assert_uint_eq(u.rpc_proc, 6);
	ck_assert_uint_eq(u.cred_flavor, 1);
	ck_assert_str_eq(u.what, "NFSv3 READ");
	ck_assert(!u.xid_mismatch);
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(read_chunks_count_their_segments)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;

	nfsb_init(&b, msg, sizeof(msg));
	b.reduce = true;
	size_t n = nfsb_v3_write_call(&b, 5, 32, 0, NULL, 8192);
	struct chunks ch = {.nread = 1, .read_pos = {(uint32_t)b.item[0].off}, .read_len = {8192}};
	dec_msg(s, 1, 0, &ch, msg, n, &u);
	ck_assert(u.rpcrdma && u.rpc && u.call);
	ck_assert_uint_eq(u.nread, 1);
	ck_assert_uint_eq(u.hdr->read[0].position, b.item[0].off);
	ck_assert_str_eq(u.what, "NFSv3 WRITE");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(rdma_nomsg_call_is_remembered_and_its_reply_in_the_reply_chunk_is_named)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t buf[BUF], msg[BUF];
	struct iwd_ulp u;
	char line[256];

	/* a READDIR call sent inline, its reply in the Reply chunk */
	struct nfsb b;
	nfsb_init(&b, msg, sizeof(msg));
	size_t n = nfsb_v3_readdir_call(&b, 0x10, 32, 65536);
	struct chunks rc = {.reply = true, .reply_len = 65536};
	dec_msg(s, 1, 0, &rc, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv3 READDIR");
	struct chunks done = {.reply = true, .reply_len = 4000};
	n = wrap(buf, 0x10, RDMA_NOMSG, &done, NULL, 0);
	dec(s, 1, 1, buf, n, &u);
	ck_assert(u.rpcrdma && !u.rpc && u.matched && !u.call);
	ck_assert_str_eq(u.what, "NFSv3 READDIR");
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA RDMA_NOMSG xid 0x00000010 credits 64 read 0 write 0 "
			       "reply 1 | NFSv3 READDIR reply in the Reply chunk");

	/* a Long Call: position-zero Read chunk, unnamed, its reply matched */
	struct chunks lc = {.nread = 1, .read_pos = {0}, .read_len = {9000}};
	n = wrap(buf, 0x11, RDMA_NOMSG, &lc, NULL, 0);
	dec(s, 1, 0, buf, n, &u);
	ck_assert(u.rpcrdma && u.call && !u.rpc);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_ptr_nonnull(strstr(line, "| RPC call in a Read chunk"));
	nfsb_init(&b, msg, sizeof(msg));
	nfsb_reply_hdr(&b, 0x11);
	nfsb_u32(&b, 0);
	n = nfsb_done(&b);
	dec_msg(s, 1, 1, NULL, msg, n, &u);
	ck_assert(u.rpc && !u.call && u.matched);
	ck_assert_str_eq(u.what, "");
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_ptr_nonnull(strstr(line, "| RPC reply SUCCESS"));
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(rdma_error_names_its_kind_and_the_call_it_answers)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t buf[BUF], msg[BUF];
	struct iwd_ulp u;
	char line[256];
	struct rpcrdma_hdr h;

	size_t n = call_of(msg, 0x21, 100003, 3, 6);
	dec_msg(s, 2, 0, NULL, msg, n, &u);
	rpcrdma_hdr_init(&h, 0x21, 1, RDMA_ERROR);
	h.err = ERR_CHUNK;
	int r = rpcrdma_hdr_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(r, RPCRDMA_HDR_ERR_CHUNK);
	dec(s, 2, 1, buf, (size_t)r, &u);
	ck_assert(u.rpcrdma && u.matched);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA RDMA_ERROR xid 0x00000021 credits 1 ERR_CHUNK | for "
			       "NFSv3 READ call");

	rpcrdma_hdr_init(&h, 0x22, 1, RDMA_ERROR);
	h.vers = 2;
	h.err = ERR_VERS;
	h.vers_low = 1;
	h.vers_high = 1;
	r = rpcrdma_hdr_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(r, RPCRDMA_HDR_ERR_VERS);
	dec(s, 2, 1, buf, (size_t)r, &u);
	ck_assert(u.rpcrdma && !u.matched);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA RDMA_ERROR xid 0x00000022 credits 1 ERR_VERS 1-1");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(rdma_done_and_rdma_msgp_are_named_obsolete)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t buf[BUF];
	struct iwd_ulp u;
	char line[256];
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 0x31, 8, RDMA_DONE);
	int r = rpcrdma_hdr_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(r, 16);
	dec(s, 3, 0, buf, (size_t)r, &u);
	ck_assert(u.rpcrdma);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line,
			 "RPC-over-RDMA RDMA_DONE xid 0x00000031 credits 8 (obsolete, RFC 8166 "
			 "§4.6.2)");

	/* RDMA_MSGP by hand: xid, vers, credits, 2, align, thresh, three empty lists */
	static const uint8_t msgp[] = {0, 0,  0, 0x32, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 2, 0, 0,
				       0, 64, 0, 0,    4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	dec(s, 3, 0, msgp, sizeof(msgp), &u);
	ck_assert(u.rpcrdma);
	ck_assert_uint_eq(u.proc, RDMA_MSGP);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA RDMA_MSGP xid 0x00000032 credits 8 read 0 write 0 "
			       "reply 0 align 64 thresh 1024 (obsolete, RFC 8166 §4.6.1)");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(headers_that_do_not_decode_report_the_error)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t buf[BUF];
	struct iwd_ulp u;
	char line[256];

	/* rping's 16-octet info message is not RPC-over-RDMA */
	static const uint8_t info[16] = {0, 0, 0x7f, 0,	   0, 0, 0x10, 0,
					 0, 0, 0x12, 0x34, 0, 0, 0,    64};
	dec(s, 1, 0, info, sizeof(info), &u);
	ck_assert(!u.rpcrdma);
	ck_assert_int_eq(u.err, IW_ERPC_SHORT);
	ck_assert_ptr_null(u.hdr);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA? too short (IW_ERPC_SHORT)");

	/* version 2 */
	size_t n = wrap(buf, 0x41, RDMA_MSG, NULL, NULL, 0);
	buf[7] = 2;
	dec(s, 1, 0, buf, n, &u);
	ck_assert(!u.rpcrdma);
	ck_assert_int_eq(u.err, IW_ERPC_VERS);
	ck_assert_uint_eq(u.xid, 0x41);
	ck_assert_uint_eq(u.vers, 2);

	/* an unknown procedure */
	n = wrap(buf, 0x42, RDMA_MSG, NULL, NULL, 0);
	buf[15] = 9;
	dec(s, 1, 0, buf, n, &u);
	ck_assert(!u.rpcrdma);
	ck_assert_int_eq(u.err, IW_ERPC_PROC);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA? xid 0x00000042 vers 1 proc 9: IW_ERPC_PROC");

	/* RDMA_MSG whose payload is not an RPC message */
	static const uint8_t junk[8] = {1, 2, 3, 4, 0, 0, 0, 7};
	n = wrap(buf, 0x43, RDMA_MSG, NULL, junk, sizeof(junk));
	dec(s, 1, 0, buf, n, &u);
	ck_assert(u.rpcrdma && !u.rpc);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_ptr_nonnull(strstr(line, "| RPC message does not decode"));
	iwd_ulp_destroy(s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* RPC: names and XID matching                                             */
/* ---------------------------------------------------------------------- */

START_TEST(nfs3_reply_is_matched_to_its_call_and_names_its_status)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct iwd_ulp u;
	char line[256];
	struct nfsb b;

	size_t n = call_of(msg, 0x8e216f95, 100003, 3, 3);
	dec_msg(s, 4, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv3 LOOKUP");
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v3_read_reply_err(&b, 0x8e216f95, 2);
	dec_msg(s, 4, 1, NULL, msg, n, &u);
	ck_assert(u.rpc && !u.call && u.matched);
	ck_assert_str_eq(u.what, "NFSv3 LOOKUP");
	ck_assert_str_eq(u.status, "NFS3ERR_NOENT");
	ck_assert_uint_eq(u.prog, 100003);
	ck_assert_uint_eq(u.rpc_proc, 3);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA RDMA_MSG xid 0x8e216f95 credits 64 read 0 write 0 "
			       "reply 0 | NFSv3 LOOKUP reply NFS3ERR_NOENT");

	/* the entry is taken: a second reply is not matched */
	dec_msg(s, 4, 1, NULL, msg, n, &u);
	ck_assert(!u.matched);
	ck_assert_str_eq(u.what, "");
	ck_assert_str_eq(u.status, "SUCCESS");
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_ptr_nonnull(strstr(line, "| RPC reply (call not seen) SUCCESS"));

	/* NFS3_OK, NFS3ERR_JUKEBOX, a number without a name */
	static const uint32_t st[3][2] = {{0, 0}, {10008, 0}, {12345, 0}};
	static const char *const want[3] = {"NFS3_OK", "NFS3ERR_JUKEBOX", "status 12345"};
	for (int i = 0; i < 3; i++) {
		n = call_of(msg, 0x100 + (uint32_t)i, 100003, 3, 1);
		dec_msg(s, 4, 0, NULL, msg, n, &u);
		n = reply_words(msg, 0x100 + (uint32_t)i, st[i], 2);
		dec_msg(s, 4, 1, NULL, msg, n, &u);
		ck_assert(u.matched);
		ck_assert_str_eq(u.status, want[i]);
	}
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(replies_match_only_the_other_direction_of_the_same_connection)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF], rep[BUF];
	struct iwd_ulp u;

	size_t n = call_of(msg, 0x55, 100003, 3, 0);
	size_t m = reply_words(rep, 0x55, NULL, 0);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	dec_msg(s, 2, 1, NULL, rep, m, &u); /* another connection */
	ck_assert(!u.matched);
	dec_msg(s, 1, 0, NULL, rep, m, &u); /* the call's own direction */
	ck_assert(!u.matched);
	dec_msg(s, 1, 1, NULL, rep, m, &u);
	ck_assert(u.matched);
	ck_assert_str_eq(u.what, "NFSv3 NULL");
	ck_assert_str_eq(u.status, "SUCCESS");

	/* a call from end 1 is answered from end 0 */
	n = call_of(msg, 0x56, 100003, 3, 0);
	dec_msg(s, 1, 1, NULL, msg, n, &u);
	ck_assert(u.backchannel);
	m = reply_words(rep, 0x56, NULL, 0);
	dec_msg(s, 1, 0, NULL, rep, m, &u);
	ck_assert(u.matched);
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(rpc_level_errors_are_named)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct iwd_ulp u;
	static const struct {
		bool denied;
		uint32_t stat, v;
		const char *want;
	} cases[] = {
		{false, 1, 0, "PROG_UNAVAIL"},
		{false, 2, 0, "PROG_MISMATCH 2-3"},
		{false, 3, 0, "PROC_UNAVAIL"},
		{false, 4, 0, "GARBAGE_ARGS"},
		{false, 5, 0, "SYSTEM_ERR"},
		{false, 9, 0, "status 9"},
		{true, 0, 2, "MSG_DENIED RPC_MISMATCH 2-2"},
		{true, 1, 5, "MSG_DENIED AUTH_ERROR AUTH_TOOWEAK"},
		{true, 1, 13, "MSG_DENIED AUTH_ERROR RPCSEC_GSS_CREDPROBLEM"},
		{true, 1, 99, "MSG_DENIED AUTH_ERROR auth_stat 99"},
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t xid = 0x600 + i;
		size_t n = call_of(msg, xid, 100005, 3, 1);
		dec_msg(s, 1, 0, NULL, msg, n, &u);
		ck_assert_str_eq(u.what, "MOUNTv3 MNT");
		n = cases[i].denied ? reply_denied(msg, xid, cases[i].stat, cases[i].v)
				    : reply_accepted(msg, xid, cases[i].stat);
		dec_msg(s, 1, 1, NULL, msg, n, &u);
		ck_assert_msg(u.rpc, "case %u", i);
		ck_assert(u.matched);
		ck_assert_str_eq(u.status, cases[i].want);
	}
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(programs_and_procedures_are_named)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	char w[96];
	static const struct {
		uint32_t prog, vers, proc;
		const char *want;
	} cases[] = {
		{100003, 2, 6, "NFSv2 READ"},	      {100003, 2, 17, "NFSv2 STATFS"},
		{100003, 3, 17, "NFSv3 READDIRPLUS"}, {100003, 3, 21, "NFSv3 COMMIT"},
		{100003, 3, 22, "NFSv3 proc 22"},     {100003, 4, 0, "NFSv4 NULL"},
		{100003, 5, 1, "NFSv5 proc 1"},	      {100005, 3, 1, "MOUNTv3 MNT"},
		{100005, 3, 3, "MOUNTv3 UMNT"},	      {100227, 3, 1, "NFSACLv3 GETACL"},
		{100021, 4, 2, "NLMv4 LOCK"},	      {100021, 4, 23, "NLMv4 FREE_ALL"},
		{100021, 4, 18, "NLMv4 proc 18"},     {100024, 1, 2, "NSMv1 MON"},
		{100000, 2, 3, "PORTMAPv2 GETPORT"},  {100000, 4, 3, "RPCBINDv4 GETADDR"},
		{100000, 4, 12, "RPCBINDv4 GETSTAT"}, {123456, 1, 3, "prog 123456 v1 proc 3"},
		{0x40000000, 1, 0, "NFSv4 CB_NULL"},
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		name_of(s, cases[i].prog, cases[i].vers, cases[i].proc, w, sizeof(w));
		ck_assert_str_eq(w, cases[i].want);
	}
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(status_words_of_mount_nfsacl_nlm_and_nfsv2_are_named)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct iwd_ulp u;
	static const struct {
		uint32_t prog, vers, proc;
		uint32_t words[3];
		unsigned nwords;
		const char *want;
	} cases[] = {
		{100005, 3, 1, {13}, 1, "MNT3ERR_ACCES"},
		{100005, 3, 0, {0}, 0, "SUCCESS"},
		{100227, 3, 1, {70}, 1, "NFS3ERR_STALE"},
		{100021, 4, 2, {4, 0xabcdef00, 3}, 3, "NLM4_BLOCKED"},
		{100021, 1, 4, {0, 0}, 2, "NLM_GRANTED"},
		{100003, 2, 6, {0}, 1, "NFS_OK"},
		{100003, 2, 4, {2}, 1, "NFSERR_NOENT"},
		{100024, 1, 2, {0}, 1, "SUCCESS"},
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t xid = 0x700 + i;
		size_t n = call_of(msg, xid, cases[i].prog, cases[i].vers, cases[i].proc);
		dec_msg(s, 1, 0, NULL, msg, n, &u);
		n = reply_words(msg, xid, cases[i].words, cases[i].nwords);
		dec_msg(s, 1, 1, NULL, msg, n, &u);
		ck_assert(u.matched);
		ck_assert_msg(strcmp(u.status, cases[i].want) == 0, "case %u: %s", i, u.status);
	}
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(nfs4_compound_lists_its_operations_and_minor_version)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;
	char line[256];

	nfsb_init(&b, msg, sizeof(msg));
	size_t n = nfsb_v4_read_call(&b, 0xa1, 0, 4096);
	struct chunks ch = {.nwrite = 1, .write_len = {4096}};
	dec_msg(s, 1, 0, &ch, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.1 COMPOUND SEQUENCE PUTFH READ");
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_str_eq(line, "RPC-over-RDMA RDMA_MSG xid 0x000000a1 credits 64 read 0 write 1 "
			       "reply 0 | NFSv4.1 COMPOUND SEQUENCE PUTFH READ call");

	/* the reply with its data in the Write chunk (reduced) */
	nfsb_init(&b, msg, sizeof(msg));
	b.reduce = true;
	n = nfsb_v4_read_reply(&b, 0xa1, NULL, 4096, true);
	dec_msg(s, 1, 1, &ch, msg, n, &u);
	ck_assert(u.matched);
	ck_assert_str_eq(u.what, "NFSv4.1 COMPOUND SEQUENCE PUTFH READ");
	ck_assert_str_eq(u.status, "NFS4_OK");

	/* minor versions 0 and 2, unknown and ILLEGAL operations */
	struct nfsb_v4op ops0[3] = {
		{.op = 22, .len = 8}, {.op = 15, .data = "f", .len = 1}, {.op = 10}};
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v4_compound_call(&b, 0xa2, 0, "", ops0, 3);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.0 COMPOUND PUTFH LOOKUP GETFH");
	struct nfsb_v4op ops2[2] = {{.op = 24}, {.op = 62}};
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v4_compound_call(&b, 0xa3, 2, "t", ops2, 2);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.2 COMPOUND PUTROOTFH DEALLOCATE");
	struct nfsb_v4op opsx[3] = {{.op = 24}, {.op = 200}, {.op = 24}};
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v4_compound_call(&b, 0xa4, 1, "", opsx, 3);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.1 COMPOUND PUTROOTFH OP_200 ...");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(nfs4_reply_names_the_failing_operation)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;
	struct nfsb_v4op ops[4] = {{.op = 22, .len = 8},
				   {.op = 15, .data = "nope", .len = 4, .status = 2},
				   {.op = 10},
				   {.op = 9}};

	nfsb_init(&b, msg, sizeof(msg));
	size_t n = nfsb_v4_compound_call(&b, 0xb1, 0, "", ops, 4);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.0 COMPOUND PUTFH LOOKUP GETFH GETATTR");
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v4_compound_reply(&b, 0xb1, "", ops, 4);
	dec_msg(s, 1, 1, NULL, msg, n, &u);
	ck_assert(u.matched);
	ck_assert_str_eq(u.status, "NFS4ERR_NOENT (LOOKUP)");

	/* the failing operation read from the reply when the call is not known */
	nfsb_init(&b, msg, sizeof(msg));
	struct nfsb_v4op one[1] = {{.op = 22, .status = 70}};
	n = nfsb_v4_compound_reply(&b, 0xb2, "", one, 1);
	dec_msg(s, 1, 1, NULL, msg, n, &u);
	ck_assert(!u.matched);
	ck_assert_str_eq(u.status, "SUCCESS");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(nfs4_write_data_in_a_read_chunk_does_not_hide_the_operations_after_it)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;
	struct nfsb_v4op ops[4] = {{.op = 53},
				   {.op = 22, .len = 32},
				   {.op = 38, .len = 5000},
				   {.op = 9, .nbitmap = 2, .bitmap = {0x10, 0x20}}};

	nfsb_init(&b, msg, sizeof(msg));
	b.reduce = true;
	size_t n = nfsb_v4_compound_call(&b, 0xc1, 1, "w", ops, 4);
	ck_assert_uint_eq(b.n_items, 1);
	struct chunks ch = {.nread = 1, .read_pos = {(uint32_t)b.item[0].off}, .read_len = {5000}};
	dec_msg(s, 1, 0, &ch, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.1 COMPOUND SEQUENCE PUTFH WRITE GETATTR");

	/* without the Read chunk the data is taken as inline and the walk runs out */
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.1 COMPOUND SEQUENCE PUTFH WRITE ...");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(long_compounds_end_with_dots_inside_the_name)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;
	struct nfsb_v4op ops[16];

	for (int i = 0; i < 16; i++)
		ops[i] = (struct nfsb_v4op){.op = 57 + (i & 1)}; /* DESTROY_CLIENTID, RECLAIM_C. */
	nfsb_init(&b, msg, sizeof(msg));
	nfsb_call_hdr(&b, 0xd1, 100003, 4, 1);
	nfsb_string(&b, "");
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 16);
	for (int i = 0; i < 16; i++) {
		nfsb_u32(&b, ops[i].op);
		if (ops[i].op == 57)
			nfsb_u64(&b, 42);
		else
			nfsb_u32(&b, 0);
	}
	size_t n = nfsb_done(&b);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_uint_lt(strlen(u.what), sizeof(u.what));
	ck_assert_ptr_nonnull(strstr(u.what, "NFSv4.1 COMPOUND DESTROY_CLIENTID RECLAIM_COMPLETE"));
	ck_assert_str_eq(u.what + strlen(u.what) - 4, " ...");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(backchannel_cb_compound_is_named_with_its_operations)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;
	char line[256];

	nfsb_init(&b, msg, sizeof(msg));
	b.auth_none = true;
	nfsb_call_hdr(&b, 0xe1, 0x40000000, 1, 1);
	nfsb_string(&b, "");
	nfsb_u32(&b, 1); /* minorversion */
	nfsb_u32(&b, 0); /* callback_ident */
	nfsb_u32(&b, 2);
	nfsb_u32(&b, 11); /* CB_SEQUENCE */
	nfsb_v4_sessionid(&b);
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 0);
	nfsb_u32(&b, 0);
	nfsb_u32(&b, 0);
	nfsb_u32(&b, 1); /* one referring call list */
	nfsb_v4_sessionid(&b);
	nfsb_u32(&b, 1);
	nfsb_u64(&b, 0x0000000700000000ull);
	nfsb_u32(&b, 4); /* CB_RECALL */
	nfsb_v4_stateid(&b);
	nfsb_u32(&b, 0);
	nfsb_opaque(&b, NULL, 24);
	size_t n = nfsb_done(&b);
	dec_msg(s, 1, 1, NULL, msg, n, &u);
	ck_assert(u.call && u.backchannel);
	ck_assert_str_eq(u.what, "NFSv4.1 CB_COMPOUND CB_SEQUENCE CB_RECALL");
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_ptr_nonnull(
		strstr(line, "| NFSv4.1 CB_COMPOUND CB_SEQUENCE CB_RECALL call (backchannel)"));

	/* the reply from the client, NFS4ERR_BADHANDLE in the second operation */
	static const uint32_t res[] = {10001, 0, 2, 11, 0, 4, 10001};
	n = reply_words(msg, 0xe1, res, 7);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert(u.matched);
	ck_assert_str_eq(u.status, "NFS4ERR_BADHANDLE");
	iwd_ulp_destroy(s);
}
END_TEST

/* An RPCSEC_GSS call header (RFC 2203 §5): credential version 1, DATA,
 * sequence 5, the service, a 4-octet handle; verifier of 8 octets. */
static void gss_call_hdr(struct nfsb *b, uint32_t xid, uint32_t service)
{
	nfsb_init(b, b->p, b->cap);
	nfsb_u32(b, xid);
	nfsb_u32(b, 0);
	nfsb_u32(b, 2);
	nfsb_u32(b, 100003);
	nfsb_u32(b, 4);
	nfsb_u32(b, 1);
	nfsb_u32(b, 6);	 /* RPCSEC_GSS */
	nfsb_u32(b, 24); /* version, gss_proc, seq_num, service, handle<4> */
	nfsb_u32(b, 1);
	nfsb_u32(b, 0);
	nfsb_u32(b, 5);
	nfsb_u32(b, service);
	nfsb_opaque(b, "hndl", 4);
	nfsb_u32(b, 6);
	nfsb_opaque(b, "checksum", 8);
}

START_TEST(rpcsec_gss_integrity_is_unwrapped_and_privacy_is_not_read)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;

	/* krb5i: databody_integ {databody<> = seq_num + COMPOUND4args, checksum} */
	b.p = msg;
	b.cap = sizeof(msg);
	gss_call_hdr(&b, 0xf1, 2);
	nfsb_u32(&b, 4 + 4 + 4 + 4 + 4 + 4); /* the databody's length */
	nfsb_u32(&b, 5);		     /* seq_num */
	nfsb_string(&b, "");		     /* tag */
	nfsb_u32(&b, 1);		     /* minorversion */
	nfsb_u32(&b, 2);
	nfsb_u32(&b, 24); /* PUTROOTFH */
	nfsb_u32(&b, 10); /* GETFH */
	nfsb_opaque(&b, "mic-of-the-body!", 16);
	size_t n = nfsb_done(&b);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_uint_eq(u.cred_flavor, 6);
	ck_assert_str_eq(u.what, "NFSv4.1 COMPOUND PUTROOTFH GETFH");
	/* the reply's results are wrapped the same way */
	static const uint32_t res[] = {16, 5, 70, 0, 1, 22, 70};
	n = reply_words(msg, 0xf1, res, 7);
	dec_msg(s, 1, 1, NULL, msg, n, &u);
	ck_assert(u.matched);
	ck_assert_str_eq(u.status, "NFS4ERR_STALE (PUTROOTFH)");

	/* krb5p: the arguments are sealed */
	b.p = msg;
	b.cap = sizeof(msg);
	gss_call_hdr(&b, 0xf2, 3);
	nfsb_opaque(&b, NULL, 64);
	n = nfsb_done(&b);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4 COMPOUND");
	n = reply_words(msg, 0xf2, res, 3);
	dec_msg(s, 1, 1, NULL, msg, n, &u);
	ck_assert(u.matched);
	ck_assert_str_eq(u.status, "SUCCESS");
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(the_xid_table_forgets_the_oldest_call_first)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct iwd_ulp u;
	const uint32_t total = 5000; /* more than the table holds */

	for (uint32_t x = 1; x <= total; x++) {
		size_t n = call_of(msg, x, 100003, 3, 1);
		dec_msg(s, 1 + (x & 3), 0, NULL, msg, n, &u);
	}
	size_t n = reply_words(msg, 1, NULL, 0);
	dec_msg(s, 1 + (1 & 3), 1, NULL, msg, n, &u);
	ck_assert(!u.matched);
	for (uint32_t x = total; x > total - 1000; x--) {
		n = reply_words(msg, x, NULL, 0);
		dec_msg(s, 1 + (x & 3), 1, NULL, msg, n, &u);
		ck_assert_msg(u.matched, "xid %u", x);
		ck_assert_str_eq(u.what, "NFSv3 GETATTR");
	}

	/* a call retransmitted with the same XID takes one entry, the newest name */
	n = call_of(msg, 0xfeed, 100003, 3, 1);
	dec_msg(s, 7, 0, NULL, msg, n, &u);
	n = call_of(msg, 0xfeed, 100003, 3, 4);
	dec_msg(s, 7, 0, NULL, msg, n, &u);
	n = reply_words(msg, 0xfeed, NULL, 0);
	dec_msg(s, 7, 1, NULL, msg, n, &u);
	ck_assert(u.matched);
	ck_assert_str_eq(u.what, "NFSv3 ACCESS");
	dec_msg(s, 7, 1, NULL, msg, n, &u);
	ck_assert(!u.matched);
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(an_rpc_xid_other_than_rdma_xid_is_flagged)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t buf[BUF], msg[BUF];
	struct iwd_ulp u;
	char line[256];

	size_t n = call_of(msg, 0x1234, 100003, 3, 0);
	size_t len = wrap(buf, 0x9999, RDMA_MSG, NULL, msg, n);
	dec(s, 1, 0, buf, len, &u);
	ck_assert(u.rpc && u.xid_mismatch);
	ck_assert_uint_eq(u.rpc_xid, 0x1234);
	iwd_ulp_summary(&u, line, sizeof(line));
	ck_assert_ptr_nonnull(strstr(line, "[RPC xid 0x00001234 differs]"));
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(summary_is_cut_to_the_buffer)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct iwd_ulp u;
	char line[256];

	size_t n = call_of(msg, 0x1, 100003, 3, 6);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	size_t full = iwd_ulp_summary(&u, line, sizeof(line));
	for (size_t cap = 1; cap <= full + 1; cap++) {
		char small[256];
		memset(small, 'x', sizeof(small));
		size_t got = iwd_ulp_summary(&u, small, cap);
		ck_assert_uint_eq(got, strlen(small));
		ck_assert_uint_lt(got, cap);
		ck_assert_int_eq(strncmp(small, line, got), 0);
		ck_assert_int_eq(small[cap], 'x');
	}
	iwd_ulp_destroy(s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* -V                                                                       */
/* ---------------------------------------------------------------------- */

static char *verbose_of(const uint8_t *p, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	uint8_t *copy = th_memdup_exact(p, n);
	iwd_ulp_print_verbose(f, copy, n, "  ");
	free(copy);
	fclose(f);
	return text;
}

START_TEST(verbose_prints_every_field_with_its_section)
{
	uint8_t buf[BUF], msg[BUF];
	struct nfsb b;

	nfsb_init(&b, msg, sizeof(msg));
	size_t n = nfsb_v3_read_call(&b, 0xabcdef01, 32, 0, 8192);
	struct chunks ch = {.nread = 1,
			    .read_pos = {100},
			    .read_len = {64},
			    .nwrite = 1,
			    .write_len = {8192},
			    .write_handle = {0xe2f1},
			    .reply = true,
			    .reply_len = 1024};
	size_t len = wrap(buf, 0xabcdef01, RDMA_MSG, &ch, msg, n);
	char *t = verbose_of(buf, len);
	static const char *const want[] = {
		"RPC-over-RDMA version 1 transport header",
		"rdma_xid     0xabcdef01",
		"(§4.2.1)",
		"rdma_credit  64",
		"rdma_proc    0 RDMA_MSG",
		"Read list    1 chunk, 1 segment (§4.3.1, §3.4.5)",
		"chunk 1: position 100, 64 octets",
		"segment 1: handle 0x00001000 length 64 offset 0x00007f0000001000",
		"Write list   1 chunk (§4.3.2, §3.4.6)",
		"segment 1: handle 0x0000e2f1 length 8192",
		"Reply chunk  1 segment, 1024 octets (§4.3.3)",
		"ONC RPC call (RFC 5531 §9)",
		"prog         100003",
		"proc         6",
		"cred         1 AUTH_SYS",
		"machinename \"iwtest\"",
		"arguments    48 octets",
	};
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(t, want[i]), "missing \"%s\" in:\n%s", want[i], t);
	free(t);

	/* a reply, RDMA_ERROR, RDMA_DONE, and what does not decode */
	n = reply_accepted(msg, 7, 2);
	len = wrap(buf, 7, RDMA_MSG, NULL, msg, n);
	t = verbose_of(buf, len);
	ck_assert_ptr_nonnull(strstr(t, "accept_stat  2 PROG_MISMATCH (versions 2 to 3)"));
	free(t);
	static const uint8_t err[] = {0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2};
	t = verbose_of(err, sizeof(err));
	ck_assert_ptr_nonnull(strstr(t, "rdma_err     2 ERR_CHUNK (§4.5)"));
	free(t);
	t = verbose_of(err, 10);
	ck_assert_ptr_nonnull(strstr(t, "do not decode: IW_ERPC_SHORT"));
	free(t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* captured messages                                                       */
/* ---------------------------------------------------------------------- */

/* Every message of test/captures as Linux sent it in its RDMA_MSG, with its
 * Read and Write chunks: calls named in full, replies matched with a status. */
START_TEST(linux_nfs_rdma_messages_are_named_and_matched)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct iwd_ulp u;
	unsigned calls = 0, matched = 0, v4 = 0;

	for (unsigned i = 0; i < sizeof(nfs_captures) / sizeof(nfs_captures[0]); i++) {
		const struct nfs_capture *c = &nfs_captures[i];
		long n = th_hex_decode(c->hex, msg, sizeof(msg));
		ck_assert_int_gt(n, 0);
		struct chunks ch = {.nread = c->n_read, .nwrite = c->n_write};
		for (unsigned k = 0; k < c->n_read; k++) {
			ch.read_pos[k] = c->read_pos[k];
			ch.read_len[k] = c->read_len[k];
		}
		for (unsigned k = 0; k < c->n_write; k++)
			ch.write_len[k] = c->write_len[k];
		uint64_t conn = c->name[1] == '3' ? 1 : 2;
		dec_msg(s, conn, c->is_reply, &ch, msg, (size_t)n, &u);
		ck_assert_msg(u.rpcrdma && u.rpc, "%s", c->name);
		ck_assert(u.call == !c->is_reply);
		if (!c->is_reply) {
			calls++;
			ck_assert_msg(!strstr(u.what, "...") && !strstr(u.what, "proc ") &&
					      !strstr(u.what, "OP_"),
				      "%s: %s", c->name, u.what);
			if (c->prog == 100003 && c->vers == 4 && c->proc == 1) {
				v4++;
				ck_assert_msg(strncmp(u.what, "NFSv4.0 COMPOUND ", 17) == 0,
					      "%s: %s", c->name, u.what);
			}
			continue;
		}
		if (!u.matched)
			continue;
		matched++;
		ck_assert_uint_eq(u.prog, c->prog);
		ck_assert_uint_eq(u.rpc_proc, c->proc);
		ck_assert_msg(u.status[0], "%s", c->name);
		if (!strcmp(c->name, "v3-f47-reply"))
			ck_assert_str_eq(u.status, "NFS3ERR_NOENT");
		if (!strcmp(c->name, "v3-f47-reply"))
			ck_assert_str_eq(u.what, "NFSv3 LOOKUP");
		if (!strcmp(c->name, "v3-f135-reply"))
			ck_assert_str_eq(u.what, "NFSv3 READ");
		if (!strcmp(c->name, "v40-f84-reply"))
			ck_assert_str_eq(u.status, "NFS4ERR_NOENT (LOOKUP)");
		if (!strcmp(c->name, "v40-f11-reply"))
			ck_assert_str_eq(u.what, "NFSv4.0 COMPOUND SETCLIENTID");
		if (!strcmp(c->name, "v40-f13-reply"))
			ck_assert_str_eq(u.what, "NFSv4.0 COMPOUND SETCLIENTID_CONFIRM");
	}
	ck_assert_uint_ge(calls, 60);
	ck_assert_uint_ge(v4, 40);
	ck_assert_uint_ge(matched, 55);
	iwd_ulp_destroy(s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* garbage                                                                  */
/* ---------------------------------------------------------------------- */

/* Every prefix of valid messages, each from an exact-size copy. */
START_TEST(every_truncation_decodes_to_a_defined_result)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t buf[BUF], msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;
	char line[512];
	struct chunks ch = {.nread = 1,
			    .read_pos = {0x7c},
			    .read_len = {100},
			    .nwrite = 1,
			    .write_len = {4096},
			    .reply = true,
			    .reply_len = 512};
	size_t lens[4];
	uint8_t bufs[4][BUF];

	nfsb_init(&b, msg, sizeof(msg));
	size_t n = nfsb_v4_read_call(&b, 0x1, 0, 4096);
	lens[0] = wrap(bufs[0], 0x1, RDMA_MSG, &ch, msg, n);
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v4_read_reply(&b, 0x1, NULL, 200, false);
	lens[1] = wrap(bufs[1], 0x1, RDMA_MSG, NULL, msg, n);
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v3_symlink_call(&b, 0x2, 32, "name", "target");
	lens[2] = wrap(bufs[2], 0x2, RDMA_MSG, &ch, msg, n);
	n = reply_denied(msg, 0x2, 1, 5);
	lens[3] = wrap(bufs[3], 0x2, RDMA_MSG, NULL, msg, n);
	for (int k = 0; k < 4; k++) {
		for (size_t len = 0; len <= lens[k]; len++) {
			memcpy(buf, bufs[k], len);
			dec(s, 1, k & 1, buf, len, &u);
			ck_assert_uint_lt(strlen(u.what), sizeof(u.what));
			ck_assert_uint_lt(strlen(u.status), sizeof(u.status));
			iwd_ulp_summary(&u, line, sizeof(line));
			char *t = verbose_of(buf, len);
			free(t);
		}
	}
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(random_octets_never_crash)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	struct th_rng r;
	uint8_t buf[512];
	struct iwd_ulp u;
	char line[512];

	th_rng_init(&r, th_seed_for(0x1d0));
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)th_rng_range(&r, 0, sizeof(buf));
		th_rng_fill(&r, buf, n);
		/* steer half of them past the first checks */
		if (n >= 16 && (i & 1)) {
			buf[4] = buf[5] = buf[6] = 0;
			buf[7] = 1;
			buf[8] = buf[9] = buf[10] = buf[12] = buf[13] = buf[14] = 0;
			buf[15] = (uint8_t)(i % 5);
			for (size_t k = 16; k + 4 <= n && k < 28; k += 4)
				buf[k] = buf[k + 1] = buf[k + 2] = 0,
				buf[k + 3] = (uint8_t)(i & 2 ? 1 : 0);
		}
		dec(s, (uint64_t)(i & 7), i & 1, buf, n, &u);
		iwd_ulp_summary(&u, line, sizeof(line));
		if ((i & 63) == 0)
			free(verbose_of(buf, n));
	}
	/* NULL with a length is nothing */
	iwd_ulp_decode(s, 1, 0, NULL, 100, &u);
	ck_assert(!u.rpcrdma);
	iwd_ulp_destroy(s);
}
END_TEST

START_TEST(huge_counts_in_auth_and_compounds_end_with_the_buffer)
{
	struct iwd_ulp_state *s = iwd_ulp_create();
	uint8_t msg[BUF];
	struct nfsb b;
	struct iwd_ulp u;

	/* a credential of 0x7fffffff octets */
	nfsb_init(&b, msg, sizeof(msg));
	nfsb_u32(&b, 0x99);
	nfsb_u32(&b, 0);
	nfsb_u32(&b, 2);
	nfsb_u32(&b, 100003);
	nfsb_u32(&b, 3);
	nfsb_u32(&b, 0);
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 0x7fffffff);
	size_t n = nfsb_done(&b);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert(u.rpcrdma && !u.rpc);

	/* a COMPOUND of 4 billion operations, a tag of 4 GB */
	nfsb_init(&b, msg, sizeof(msg));
	nfsb_call_hdr(&b, 0x9a, 100003, 4, 1);
	nfsb_string(&b, "");
	nfsb_u32(&b, 1);
	nfsb_u32(&b, 0xffffffff);
	nfsb_u32(&b, 24);
	n = nfsb_done(&b);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4.1 COMPOUND PUTROOTFH ...");
	nfsb_init(&b, msg, sizeof(msg));
	nfsb_call_hdr(&b, 0x9b, 100003, 4, 1);
	nfsb_u32(&b, 0xfffffff0);
	n = nfsb_done(&b);
	dec_msg(s, 1, 0, NULL, msg, n, &u);
	ck_assert_str_eq(u.what, "NFSv4 COMPOUND");
	iwd_ulp_destroy(s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* JSON strings (iwd_out.c)                                                */
/* ---------------------------------------------------------------------- */

static char *json_of(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	iwd_out_json_string(f, s);
	fclose(f);
	return text;
}

START_TEST(json_strings_escape_quotes_controls_and_octets_that_are_not_utf8)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"", "\"\""},
		{"NFSv3 READ", "\"NFSv3 READ\""},
		{"a\"b\\c", "\"a\\\"b\\\\c\""},
		{"tab\tnl\ncr\r", "\"tab\\tnl\\ncr\\r\""},
		{"\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\""},
		{"\xc2\xa7 4.2 \xe2\x86\x92", "\"\xc2\xa7 4.2 \xe2\x86\x92\""}, /* § and → pass */
		{"\xff\xfe", "\"\\u00ff\\u00fe\""},
		{"\xc0\xaf", "\"\\u00c0\\u00af\""},	       /* overlong */
		{"\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\""}, /* a surrogate */
		{"\xe2\x86", "\"\\u00e2\\u0086\""},	       /* cut short */
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = json_of(cases[i].in);
		ck_assert_str_eq(t, cases[i].want);
		free(t);
	}
	char *t = json_of(NULL);
	ck_assert_str_eq(t, "\"\"");
	free(t);
}
END_TEST

static Suite *iwd_ulp_suite(void)
{
	Suite *s = suite_create("iwd_ulp");

	TH_ADD_TCASE(s, "transport", rdma_msg_reports_the_fixed_fields_and_segment_counts,
		     read_chunks_count_their_segments,
		     rdma_nomsg_call_is_remembered_and_its_reply_in_the_reply_chunk_is_named,
		     rdma_error_names_its_kind_and_the_call_it_answers,
		     rdma_done_and_rdma_msgp_are_named_obsolete,
		     headers_that_do_not_decode_report_the_error);
	TH_ADD_TCASE(s, "rpc", nfs3_reply_is_matched_to_its_call_and_names_its_status,
		     replies_match_only_the_other_direction_of_the_same_connection,
		     rpc_level_errors_are_named, programs_and_procedures_are_named,
		     status_words_of_mount_nfsacl_nlm_and_nfsv2_are_named,
		     the_xid_table_forgets_the_oldest_call_first,
		     an_rpc_xid_other_than_rdma_xid_is_flagged, summary_is_cut_to_the_buffer);
	TH_ADD_TCASE(s, "nfs4", nfs4_compound_lists_its_operations_and_minor_version,
		     nfs4_reply_names_the_failing_operation,
		     nfs4_write_data_in_a_read_chunk_does_not_hide_the_operations_after_it,
		     long_compounds_end_with_dots_inside_the_name,
		     backchannel_cb_compound_is_named_with_its_operations,
		     rpcsec_gss_integrity_is_unwrapped_and_privacy_is_not_read);
	TH_ADD_TCASE(s, "verbose", verbose_prints_every_field_with_its_section);
	TH_ADD_TCASE(s, "captures", linux_nfs_rdma_messages_are_named_and_matched);
	TH_ADD_TCASE(s, "garbage", every_truncation_decodes_to_a_defined_result,
		     random_octets_never_crash,
		     huge_counts_in_auth_and_compounds_end_with_the_buffer);
	TH_ADD_TCASE(s, "json", json_strings_escape_quotes_controls_and_octets_that_are_not_utf8);
	return s;
}

TH_MAIN(iwd_ulp_suite)
