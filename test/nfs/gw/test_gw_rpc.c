/* SPDX-License-Identifier: MIT */
/*
 * test_gw_rpc.c - iwnfsgw's ONC RPC record marking (RFC 5531 §11) and RPC
 * header helpers (tools/iwnfsgw/gw_rpc.c): records split anywhere,
 * multi-fragment records, the record size bound, the writer, reading a
 * connection's buffer and then its socket, and the gateway's own SYSTEM_ERR
 * reply.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "gw_int.h"
#include "th.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A stream of `n` records of random sizes, each cut into random fragments. */
struct stream {
	uint8_t *buf;
	size_t len;
	uint8_t **rec;
	size_t *rec_len;
	unsigned n;
};

static void stream_make(struct stream *s, struct th_rng *r, unsigned n, size_t max_rec)
{
	size_t cap = 0;
	unsigned i;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->rec = calloc(n, sizeof(*s->rec));
	s->rec_len = calloc(n, sizeof(*s->rec_len));
	for (i = 0; i < n; i++) {
		size_t len = (size_t)th_rng_range(r, 0, max_rec), off = 0;

		s->rec_len[i] = len;
		s->rec[i] = malloc(len ? len : 1);
		th_rng_fill(r, s->rec[i], len);
		do {
			size_t f = len - off;

			if (f > 1 && th_rng_range(r, 0, 1))
				f = (size_t)th_rng_range(r, 0, f - 1);
			if (s->len + f + 4 > cap) {
				cap = (s->len + f + 4) * 2;
				s->buf = realloc(s->buf, cap);
			}
			put32(s->buf + s->len, (uint32_t)f | (off + f == len ? GW_RM_LAST : 0));
			memcpy(s->buf + s->len + 4, s->rec[i] + off, f);
			s->len += f + 4;
			off += f;
		} while (off < len);
	}
}

static void stream_free(struct stream *s)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		free(s->rec[i]);
	free(s->rec);
	free(s->rec_len);
	free(s->buf);
}

START_TEST(rm_reader_gives_the_same_records_for_any_split_of_the_stream)
{
	struct th_rng r;
	unsigned round;

	th_rng_init(&r, th_seed_from_env());
	for (round = 0; round < 200; round++) {
		struct stream s;
		struct gw_rm_reader rd;
		size_t off = 0;
		unsigned got = 0;

		stream_make(&s, &r, 1 + (unsigned)th_rng_range(&r, 0, 6), 3000);
		gw_rm_init(&rd, 4096);
		while (off < s.len) {
			size_t n = (size_t)th_rng_range(&r, 1, s.len - off), used = 0;
			uint8_t *piece = th_memdup_exact(s.buf + off, n);
			size_t poff = 0;

			while (poff < n) {
				int st = gw_rm_input(&rd, piece + poff, n - poff, &used);

				ck_assert_int_ge(st, 0);
				poff += used;
				if (st == GW_RM_RECORD) {
					ck_assert_uint_lt(got, s.n);
					ck_assert_uint_eq(rd.len, s.rec_len[got]);
					if (rd.len)
						ck_assert_mem_eq(rd.rec, s.rec[got], rd.len);
					got++;
				} else {
					ck_assert_uint_eq(poff, n);
				}
			}
			free(piece);
			off += n;
		}
		ck_assert_uint_eq(got, s.n);
		ck_assert_uint_eq(rd.records, s.n);
		gw_rm_fini(&rd);
		stream_free(&s);
	}
}
END_TEST

START_TEST(rm_reader_refuses_a_record_over_the_bound_before_allocating)
{
	struct gw_rm_reader rd;
	uint8_t hdr[4];
	size_t used;

	gw_rm_init(&rd, 4096);
	put32(hdr, GW_RM_LAST | 0x7fffffffu);
	ck_assert_int_eq(gw_rm_input(&rd, hdr, 4, &used), GW_RM_TOOBIG);
	ck_assert_ptr_null(rd.rec);
	gw_rm_fini(&rd);
}
END_TEST

START_TEST(rm_reader_bounds_the_sum_of_fragments_not_just_each_one)
{
	struct gw_rm_reader rd;
	uint8_t b[4 + 3000];
	size_t used;

	memset(b, 0x5a, sizeof(b));
	gw_rm_init(&rd, 4096);
	put32(b, 3000); /* not last */
	ck_assert_int_eq(gw_rm_input(&rd, b, sizeof(b), &used), GW_RM_MORE);
	ck_assert_uint_eq(used, sizeof(b));
	put32(b, GW_RM_LAST | 3000);
	ck_assert_int_eq(gw_rm_input(&rd, b, 4, &used), GW_RM_TOOBIG);
	gw_rm_fini(&rd);
}
END_TEST

START_TEST(rm_reader_hands_up_an_empty_record)
{
	struct gw_rm_reader rd;
	uint8_t b[4];
	size_t used;

	gw_rm_init(&rd, 4096);
	put32(b, GW_RM_LAST);
	ck_assert_int_eq(gw_rm_input(&rd, b, 4, &used), GW_RM_RECORD);
	ck_assert_uint_eq(used, 4);
	ck_assert_uint_eq(rd.len, 0);
	gw_rm_fini(&rd);
}
END_TEST

static unsigned drained;
static size_t drained_len[8];

static int count_rec(void *arg, uint8_t *rec, size_t len)
{
	if (drained < 8)
		drained_len[drained] = len;
	drained++;
	return *(int *)arg;
}

START_TEST(rm_writer_and_drain_round_trip_through_an_evbuffer)
{
	struct evbuffer *b = evbuffer_new();
	struct gw_rm_reader rd;
	uint8_t msg[10000];
	int go_on = 0;

	memset(msg, 7, sizeof(msg));
	ck_assert_int_eq(gw_rm_write(b, msg, sizeof(msg), 0), 0);
	ck_assert_int_eq(gw_rm_write(b, msg, 1000, 300), 0); /* 4 fragments */
	ck_assert_int_eq(gw_rm_write(b, msg, 0, 0), 0);
	ck_assert_uint_eq(evbuffer_get_length(b), 4 + 10000 + 4 * 4 + 1000 + 4);
	gw_rm_init(&rd, 16384);
	drained = 0;
	ck_assert_int_eq(gw_rm_drain(&rd, b, count_rec, &go_on), 0);
	ck_assert_uint_eq(drained, 3);
	ck_assert_uint_eq(drained_len[0], 10000);
	ck_assert_uint_eq(drained_len[1], 1000);
	ck_assert_uint_eq(drained_len[2], 0);
	ck_assert_uint_eq(rd.fragments, 6);
	ck_assert_uint_eq(evbuffer_get_length(b), 0);
	gw_rm_fini(&rd);
	evbuffer_free(b);
}
END_TEST

/* Read everything the socket has, then append what `out` holds, and drain
 * the records of that stream. */
static void send_collect(int fd, struct evbuffer *out, struct evbuffer *stream)
{
	uint8_t buf[65536];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		evbuffer_add(stream, buf, (size_t)n);
	evbuffer_add_buffer(stream, out);
}

/*
 * gw_rm_send: a big message with nothing queued goes to the socket at once
 * (nothing copied into the evbuffer); when the socket takes only part, the
 * rest - header octets included - waits in the evbuffer in order; with
 * something queued, or a small message, everything goes behind it.  Each
 * time the stream read back is the same records.
 */
START_TEST(rm_send_writes_big_records_straight_to_the_socket_and_queues_the_rest)
{
	enum { BIG = 300000 };
	struct evbuffer *out = evbuffer_new(), *stream = evbuffer_new();
	struct gw_rm_reader rd;
	uint8_t *big = malloc(BIG), small[100];
	int sv[2], go_on = 0, sndbuf = 256 * 1024;

	for (int i = 0; i < BIG; i++)
		big[i] = (uint8_t)(i * 13 + 1);
	memset(small, 9, sizeof(small));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	ck_assert_int_eq(setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf)), 0);
	gw_rm_init(&rd, 1 << 20);

	/* 1: all at once, nothing queued */
	ck_assert_int_eq(gw_rm_send(out, sv[0], big, BIG), 0);
	ck_assert_uint_eq(evbuffer_get_length(out), 0);
	send_collect(sv[1], out, stream);
	drained = 0;
	ck_assert_int_eq(gw_rm_drain(&rd, stream, count_rec, &go_on), 0);
	ck_assert_uint_eq(drained, 1);
	ck_assert_uint_eq(drained_len[0], BIG);

	/* 2: a socket that takes only part: the rest waits, in order, behind
	 * which a small record and another big one queue */
	for (int k = 0;
	     k < 5 && gw_rm_send(out, sv[0], big, BIG) == 0 && evbuffer_get_length(out) == 0; k++)
		;
	ck_assert_uint_gt(evbuffer_get_length(out), 0);
	ck_assert_int_eq(gw_rm_send(out, sv[0], small, sizeof(small)), 0);
	ck_assert_int_eq(gw_rm_send(out, sv[0], big, BIG), 0);
	drained = 0;
	for (int k = 0; k < 1000 && evbuffer_get_length(out); k++) {
		send_collect(sv[1], out, stream);
		ck_assert_int_eq(gw_rm_drain(&rd, stream, count_rec, &go_on), 0);
	}
	send_collect(sv[1], out, stream);
	ck_assert_int_eq(gw_rm_drain(&rd, stream, count_rec, &go_on), 0);
	ck_assert_uint_ge(drained, 3);
	ck_assert_uint_eq(drained_len[drained - 1], BIG);
	ck_assert_uint_eq(drained_len[drained - 2], sizeof(small));
	for (size_t i = 0; i + 2 < drained; i++)
		ck_assert_uint_eq(drained_len[i], BIG);
	ck_assert_uint_eq(evbuffer_get_length(stream), 0);

	/* 3: no socket: the evbuffer, as gw_rm_write */
	ck_assert_int_eq(gw_rm_send(out, -1, big, BIG), 0);
	ck_assert_uint_eq(evbuffer_get_length(out), 4 + BIG);
	close(sv[0]);
	close(sv[1]);
	gw_rm_fini(&rd);
	evbuffer_free(out);
	evbuffer_free(stream);
	free(big);
}
END_TEST

START_TEST(rm_drain_stops_when_the_callback_says_so_and_keeps_the_rest)
{
	struct evbuffer *b = evbuffer_new();
	struct gw_rm_reader rd;
	uint8_t msg[100] = {0};
	int stop = -100;

	gw_rm_write(b, msg, 100, 0);
	gw_rm_write(b, msg, 50, 0);
	gw_rm_init(&rd, 4096);
	drained = 0;
	ck_assert_int_eq(gw_rm_drain(&rd, b, count_rec, &stop), -100);
	ck_assert_uint_eq(drained, 1);
	ck_assert_uint_eq(evbuffer_get_length(b), 54);
	stop = 0;
	ck_assert_int_eq(gw_rm_drain(&rd, b, count_rec, &stop), 0);
	ck_assert_uint_eq(drained, 2);
	ck_assert_uint_eq(drained_len[1], 50);
	gw_rm_fini(&rd);
	evbuffer_free(b);
}
END_TEST

START_TEST(rm_recv_reads_the_rest_of_a_fragment_straight_from_the_socket)
{
	struct gw_rm_reader rd;
	uint8_t hdr[4], body[20000];
	size_t used;
	int sv[2], i;

	for (i = 0; i < (int)sizeof(body); i++)
		body[i] = (uint8_t)(i * 7);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	gw_rm_init(&rd, 65536);
	put32(hdr, GW_RM_LAST | sizeof(body));
	ck_assert_int_eq(gw_rm_input(&rd, hdr, 4, &used), GW_RM_MORE);
	ck_assert_uint_eq(rd.frag_left, sizeof(body));
	/* nothing sent yet: would block */
	ck_assert_int_eq(gw_rm_recv(&rd, sv[0]), GW_RM_MORE);
	ck_assert_int_eq(write(sv[1], body, 5000), 5000);
	ck_assert_int_eq(gw_rm_recv(&rd, sv[0]), GW_RM_MORE);
	ck_assert_uint_eq(rd.frag_left, sizeof(body) - 5000);
	gw_rm_lowat(&rd, sv[0]);
	ck_assert_uint_eq(rd.lowat, sizeof(body) - 5000);
	ck_assert_int_eq(write(sv[1], body + 5000, sizeof(body) - 5000),
			 (int)(sizeof(body) - 5000));
	ck_assert_int_eq(gw_rm_recv(&rd, sv[0]), GW_RM_RECORD);
	ck_assert_uint_eq(rd.len, sizeof(body));
	ck_assert_mem_eq(rd.rec, body, sizeof(body));
	gw_rm_lowat(&rd, sv[0]);
	ck_assert_uint_eq(rd.lowat, 1);
	/* the next record starts over through gw_rm_input */
	put32(hdr, GW_RM_LAST | 8);
	ck_assert_int_eq(gw_rm_input(&rd, hdr, 4, &used), GW_RM_MORE);
	ck_assert_uint_eq(rd.len, 0);
	close(sv[1]);
	ck_assert_int_eq(gw_rm_recv(&rd, sv[0]), GW_RM_EOF);
	close(sv[0]);
	gw_rm_fini(&rd);
}
END_TEST

START_TEST(rm_read_takes_the_buffer_then_the_socket_then_sets_lowat)
{
	struct evbuffer *b = evbuffer_new();
	struct gw_rm_reader rd;
	uint8_t hdr[4], body[30000];
	int sv[2], go_on = 0, stop = -100;

	memset(body, 3, sizeof(body));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	gw_rm_init(&rd, 65536);
	drained = 0;
	/* a small record and the start of a large one are buffered already,
	 * the large one's rest and a third record wait in the socket */
	gw_rm_write(b, body, 100, 0);
	put32(hdr, GW_RM_LAST | sizeof(body));
	evbuffer_add(b, hdr, 4);
	evbuffer_add(b, body, 1000);
	ck_assert_int_eq(write(sv[1], body, sizeof(body) - 1000), (int)(sizeof(body) - 1000));
	put32(hdr, GW_RM_LAST | 8);
	ck_assert_int_eq(write(sv[1], hdr, 4), 4);
	ck_assert_int_eq(write(sv[1], body, 8), 8);
	ck_assert_int_eq(gw_rm_read(&rd, b, sv[0], count_rec, &go_on), 0);
	ck_assert_uint_eq(drained, 2);
	ck_assert_uint_eq(drained_len[0], 100);
	ck_assert_uint_eq(drained_len[1], sizeof(body));
	ck_assert_uint_eq(evbuffer_get_length(b), 0);
	ck_assert_uint_eq(rd.lowat, 1); /* between records */
	/* the third record is the bufferevent's to read; fn stops the reader */
	ck_assert_int_eq(read(sv[0], hdr, 4), 4);
	evbuffer_add(b, hdr, 4);
	ck_assert_int_eq(read(sv[0], body, 8), 8);
	evbuffer_add(b, body, 8);
	ck_assert_int_eq(gw_rm_read(&rd, b, sv[0], count_rec, &stop), -100);
	ck_assert_uint_eq(drained, 3);
	/* a fragment under way and the peer gone */
	put32(hdr, GW_RM_LAST | 5000);
	evbuffer_add(b, hdr, 4);
	close(sv[1]);
	ck_assert_int_eq(gw_rm_read(&rd, b, sv[0], count_rec, &go_on), GW_RM_EOF);
	ck_assert_uint_eq(drained, 3);
	close(sv[0]);
	gw_rm_fini(&rd);
	evbuffer_free(b);
}
END_TEST

START_TEST(rpc_system_err_is_an_accepted_reply_with_accept_stat_5)
{
	static const uint8_t want[GW_RPC_ERR_REPLY_LEN] = {
		0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1, /* xid, REPLY */
		0,    0,    0,	  0,		    /* MSG_ACCEPTED */
		0,    0,    0,	  0,	0, 0, 0, 0, /* AUTH_NONE, length 0 */
		0,    0,    0,	  5,		    /* SYSTEM_ERR */
	};
	uint8_t out[GW_RPC_ERR_REPLY_LEN];

	ck_assert_uint_eq(gw_rpc_system_err(out, 0x12345678u), GW_RPC_ERR_REPLY_LEN);
	ck_assert_mem_eq(out, want, sizeof(want));
	ck_assert_uint_eq(gw_rpc_xid(out), 0x12345678u);
	ck_assert_uint_eq(gw_rpc_type(out), GW_RPC_REPLY);
}
END_TEST

START_TEST(rpc_call_info_reads_prog_vers_proc_of_a_call_only)
{
	uint8_t call[40] = {0};
	uint32_t prog, vers, proc;

	put32(call, 1);
	put32(call + 4, GW_RPC_CALL);
	put32(call + 8, 2);
	put32(call + 12, 100003);
	put32(call + 16, 3);
	put32(call + 20, 7);
	ck_assert(gw_rpc_call_info(call, sizeof(call), &prog, &vers, &proc));
	ck_assert_uint_eq(prog, 100003);
	ck_assert_uint_eq(vers, 3);
	ck_assert_uint_eq(proc, 7);
	ck_assert(!gw_rpc_call_info(call, 20, &prog, &vers, &proc));
	put32(call + 4, GW_RPC_REPLY);
	ck_assert(!gw_rpc_call_info(call, sizeof(call), &prog, &vers, &proc));
	gw_rpc_set_xid(call, 0xdeadbeefu);
	ck_assert_uint_eq(gw_rpc_xid(call), 0xdeadbeefu);
}
END_TEST

static Suite *gw_rpc_suite(void)
{
	Suite *s = suite_create("gw_rpc");
	TCase *tc = tcase_create("record_marking");

	tcase_add_test(tc, rm_reader_gives_the_same_records_for_any_split_of_the_stream);
	tcase_add_test(tc, rm_reader_refuses_a_record_over_the_bound_before_allocating);
	tcase_add_test(tc, rm_reader_bounds_the_sum_of_fragments_not_just_each_one);
	tcase_add_test(tc, rm_reader_hands_up_an_empty_record);
	tcase_add_test(tc, rm_writer_and_drain_round_trip_through_an_evbuffer);
	tcase_add_test(tc, rm_send_writes_big_records_straight_to_the_socket_and_queues_the_rest);
	tcase_add_test(tc, rm_drain_stops_when_the_callback_says_so_and_keeps_the_rest);
	tcase_add_test(tc, rm_recv_reads_the_rest_of_a_fragment_straight_from_the_socket);
	tcase_add_test(tc, rm_read_takes_the_buffer_then_the_socket_then_sets_lowat);
	suite_add_tcase(s, tc);
	tc = tcase_create("rpc_header");
	tcase_add_test(tc, rpc_system_err_is_an_accepted_reply_with_accept_stat_5);
	tcase_add_test(tc, rpc_call_info_reads_prog_vers_proc_of_a_call_only);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(gw_rpc_suite)
