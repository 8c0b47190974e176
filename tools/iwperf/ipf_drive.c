/* SPDX-License-Identifier: MIT */
/*
 * ipf_drive.c - iwperf's driver: one client loop and one server loop, for
 * bandwidth and ping-pong, written once against struct ipf_transport_ops.
 *
 * Theory of operation (the whole tool: ipf_int.h).
 *
 * Client.  ipf_client_run() resolves the server, makes --qps connections
 * and has the transport set them up; then one thread steps them in turn
 * until each has its RESULT.  A step is: the transport's poll() (which
 * reports completions, pongs and RESULTs through ipf_completed(),
 * ipf_pong() and ipf_result()), then, while the test runs, more work:
 *   bandwidth  post() as many messages as the window allows (posted -
 *              completed <= window, posted <= target);
 *   ping-pong  ping() when no round trip is under way;
 * and when the last message is done, finish().  --seconds sets a deadline;
 * when it passes every connection's target drops to what it can end with
 * (the round trip under way; for bandwidth, the transport's stop_at()), so
 * each ends cleanly with DONE and RESULT.  The clock of a connection runs
 * from the first post to its RESULT.
 *
 * Server.  ipf_server_run() listens and loops until SIGINT/SIGTERM: the
 * transport's accept() (new connections and their events: every round
 * while a session is being set up or torn down or none exists, else once a
 * millisecond, as they cost a lock round), serve() of every session, the
 * sessions that closed freed, and idle() when there is none.  The helpers
 * below (ipf_sess_*) are what both transports do with a session: check the
 * HELLO, the patterns of the data, the first failure, the RESULT.
 *
 * Failures.  The first runtime failure is kept as one line (ipf_fail) and
 * printed by main; every later failure only unwinds.
 */
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iwt_addr.h"
#include "iwt_clock.h"

#include "ipf_int.h"

#define CM_CHECK_NS 1000000ull /* server: events checked every ms while busy */

/* ---------------------------------------------------------------------- */
/* Failures, signals, small things                                         */
/* ---------------------------------------------------------------------- */

static char fail_msg[512];
static bool fail_printed;

int ipf_fail(const char *fmt, ...)
{
	va_list ap;

	if (fail_msg[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(fail_msg, sizeof(fail_msg), fmt, ap);
	va_end(ap);
	return -1;
}

int ipf_fail_said(void)
{
	fail_printed = true;
	return -1;
}

void ipf_fail_print(void)
{
	if (!fail_printed)
		fprintf(stderr, "%s: %s\n", PROG, fail_msg[0] ? fail_msg : "failed");
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking poll() must return so the loop sees the flag */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

uint32_t ipf_slots_for(uint32_t size, uint32_t want)
{
	return ipf_clamp_u32(IPF_MEM_MAX / size, 1, want);
}

void ipf_plan_make(const struct ipf_opts *o, uint32_t depth, struct ipf_plan *p)
{
	if (o->pingpong) {
		p->depth = 1;
		p->nslots = 1;
		return;
	}
	/* a slot is refilled only after its previous message completed: slots >= depth */
	p->nslots = ipf_slots_for(o->size, depth);
	p->depth = p->nslots;
}

uint8_t *ipf_buf_alloc(size_t len)
{
	void *p = NULL;

	if (!len)
		len = 1;
	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

int ipf_resolve(const char *host, unsigned port, bool passive, struct sockaddr_storage *ss,
		socklen_t *len)
{
	int rc = iwt_addr_resolve(host, (uint16_t)port, passive, ss, len);

	if (rc)
		return ipf_fail("cannot resolve '%s': %s", host ? host : "*", gai_strerror(rc));
	return 0;
}

static uint64_t seed_make(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ipf_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
			 ((uint64_t)getpid() << 40));
}

/* ---------------------------------------------------------------------- */
/* Client: what the transports report                                      */
/* ---------------------------------------------------------------------- */

uint8_t *ipf_slot_out(struct ipf_conn *c, uint64_t seq)
{
	const struct ipf_opts *o = c->cl->o;
	uint8_t *p = c->data + (size_t)(seq % c->nslots) * o->size;

	if (o->verify && o->op != IPF_OP_READ && !ipf_op_atomic(o->op))
		ipf_pat_fill(p, o->size, ipf_msg_key(c->seed, seq));
	return p;
}

void ipf_atomic_args(struct ipf_conn *c, uint64_t seq, uint64_t *compare_add, uint64_t *swap)
{
	if (c->cl->o->op == IPF_OP_FADD) {
		*compare_add = 1;
		*swap = 0;
		return;
	}
	c->cmp[seq % c->nslots] = c->expect;
	*compare_add = c->expect;
	*swap = ++c->expect;
}

/* fadd --verify: no original twice, none beyond the adds issued so far. */
static int seen_mark(struct ipf_conn *c, uint64_t seq, uint64_t orig)
{
	struct ipf_client *cl = c->cl;
	size_t i = (size_t)(orig / 64);

	if (orig / 64 >= cl->seen_len) {
		uint64_t issued = 0;
		size_t len = cl->seen_len ? cl->seen_len : 1024;
		uint64_t *p;

		for (unsigned k = 0; k < cl->o->qps; k++)
			issued += cl->c[k].posted + cl->c[k].iter + 1;
		if (orig >= issued)
			return ipf_fail("QP %d: Fetch-and-Add %" PRIu64 " returned %" PRIu64
					", more than the %" PRIu64 " issued",
					c->idx, seq, orig, issued);
		while (len <= i)
			len *= 2;
		p = realloc(cl->seen, len * sizeof(*p));
		if (!p)
			return ipf_fail("out of memory for the Fetch-and-Add check");
		memset(p + cl->seen_len, 0, (len - cl->seen_len) * sizeof(*p));
		cl->seen = p;
		cl->seen_len = len;
	}
	if (cl->seen[i] >> (orig % 64) & 1)
		return ipf_fail("QP %d: Fetch-and-Add %" PRIu64 " returned %" PRIu64
				", which another one returned before",
				c->idx, seq, orig);
	cl->seen[i] |= 1ull << (orig % 64);
	if (orig > cl->seen_max)
		cl->seen_max = orig;
	return 0;
}

int ipf_atomic_done(struct ipf_conn *c, uint64_t seq, uint64_t orig)
{
	const struct ipf_opts *o = c->cl->o;
	uint64_t want;

	if (o->op == IPF_OP_FADD) {
		if (o->verify) {
			/* one QP's adds are performed in order: each finds more than the last */
			if (c->a_ok && orig <= c->last_orig)
				return ipf_fail("QP %d: Fetch-and-Add %" PRIu64 " returned %" PRIu64
						", the one before it %" PRIu64,
						c->idx, seq, orig, c->last_orig);
			if (seen_mark(c, seq, orig))
				return -1;
			c->last_orig = orig;
		}
		c->a_ok++;
		return 0;
	}
	want = c->cmp[seq % c->nslots];
	if (orig == want) {
		c->a_ok++;
		return 0;
	}
	/* the word is not where the client thought: go on from where it is */
	c->r.failed++;
	c->expect = orig;
	return 0;
}

int ipf_completed(struct ipf_conn *c, uint64_t upto)
{
	const struct ipf_opts *o = c->cl->o;

	if (ipf_op_atomic(o->op)) {
		/* the result slots of every message up to `upto` hold their originals */
		for (; c->completed < upto; c->completed++) {
			uint64_t v;

			memcpy(&v, c->data + (size_t)(c->completed % c->nslots) * 8, 8);
			if (ipf_atomic_done(c, c->completed, v))
				return -1;
		}
		return 0;
	}
	c->completed = upto;
	if (o->op != IPF_OP_READ || !o->verify)
		return 0;
	/* message m read the server's slot m % rslots, which holds that slot's pattern */
	for (; c->verified < upto; c->verified++) {
		uint64_t m = c->verified;
		const uint8_t *p = c->data + (size_t)(m % c->nslots) * o->size;
		int64_t bad = ipf_pat_check(p, o->size, ipf_msg_key(c->seed, m % c->rslots));

		if (bad >= 0)
			return ipf_fail("QP %d: bad data in %s %" PRIu64 " at offset %" PRId64,
					c->idx, c->cl->t->read_noun, m, bad);
	}
	return 0;
}

int ipf_pong(struct ipf_conn *c, const uint8_t *reply, size_t len, uint64_t key_msg)
{
	const struct ipf_opts *o = c->cl->o;

	if (ipf_lat_push(&c->lat, iwt_now_ns() - c->t_ping))
		return -1;
	if (o->verify && reply) {
		int64_t bad = ipf_pat_check(reply, len, ipf_msg_key(c->seed, key_msg));

		if (bad >= 0)
			return ipf_fail("QP %d: bad data in %s %" PRIu64 " at offset %" PRId64,
					c->idx, c->cl->t->reply_noun, c->iter, bad);
	}
	c->iter++;
	c->waiting = false;
	return 0;
}

int ipf_result(struct ipf_conn *c, const struct ipf_ctrl *m)
{
	c->r.t_end = iwt_now_ns();
	c->state = IPF_C_DONE;
	if (m->status == IPF_RES_VERIFY)
		return ipf_fail("QP %d: the server found bad data in message %" PRIu64
				" at offset %" PRIu64,
				c->idx, m->bad, m->bad_off);
	if (m->status != IPF_RES_OK)
		return ipf_fail("QP %d: the server reports: %s (it saw %" PRIu64
				" messages, the client sent %" PRIu64 ")",
				c->idx, ipf_res_status_str(m->status), m->count, c->r.msgs);
	if (ipf_op_atomic(c->cl->o->op)) {
		/* the word so far: the rest is atomic_final's */
		c->word = m->count;
		if (m->count < c->a_ok)
			return ipf_fail("QP %d: the server's word is %" PRIu64
					", below the %" PRIu64
					" operations of this QP that changed it",
					c->idx, m->count, c->a_ok);
		return 0;
	}
	if (m->count != c->r.msgs)
		return ipf_fail("QP %d: the server saw %" PRIu64 " messages, the client %" PRIu64,
				c->idx, m->count, c->r.msgs);
	return 0;
}

/*
 * Atomics, every RESULT in: the word after the last DONE (the largest: it
 * only grows) is the operations that changed it; with --verify the
 * Fetch-and-Adds' originals, each seen once, are 0 .. n-1.
 */
static int atomic_final(struct ipf_client *cl)
{
	uint64_t word = 0, ok = 0, ops = 0;

	for (unsigned i = 0; i < cl->o->qps; i++) {
		if (cl->c[i].word > word)
			word = cl->c[i].word;
		ok += cl->c[i].a_ok;
		ops += cl->c[i].r.msgs;
	}
	if (word != ok)
		return ipf_fail("the server's word ended at %" PRIu64 " after %" PRIu64
				" operations that changed it (of %" PRIu64 ", on %u QP%s)",
				word, ok, ops, cl->o->qps, cl->o->qps == 1 ? "" : "s");
	if (cl->o->op == IPF_OP_FADD && cl->o->verify && ok && cl->seen_max >= ok)
		return ipf_fail("a Fetch-and-Add returned %" PRIu64
				" of a word that ended at %" PRIu64,
				cl->seen_max, word);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Client: the loop                                                        */
/* ---------------------------------------------------------------------- */

void ipf_hello_make(const struct ipf_conn *c, struct ipf_hello *h)
{
	const struct ipf_opts *o = c->cl->o;

	memset(h, 0, sizeof(*h));
	h->op = (uint8_t)o->op;
	h->flags = (c->cl->t->tcp ? IPF_HF_TCP : 0) | (o->pingpong ? IPF_HF_PINGPONG : 0) |
		   (o->verify ? IPF_HF_VERIFY : 0) | (o->wait_memory ? IPF_HF_WAIT_MEM : 0);
	h->size = o->size;
	h->depth = c->cl->pl.depth;
	h->qp_index = (uint16_t)c->idx;
	h->qps = (uint16_t)o->qps;
	h->seed = c->seed;
	h->test_id = c->cl->test_id;
}

/* Everything moved: count it and tell the server (RESULT comes through poll). */
static int conn_finish(struct ipf_conn *c, uint64_t count)
{
	c->r.msgs = count;
	c->r.bytes = count * c->cl->o->size;
	c->state = IPF_C_FINISH;
	return c->cl->t->finish(c);
}

static int conn_step(struct ipf_conn *c)
{
	const struct ipf_opts *o = c->cl->o;
	const struct ipf_transport_ops *t = c->cl->t;
	uint64_t room;
	int n;

	if (t->poll(c))
		return -1;
	if (c->state != IPF_C_RUN)
		return 0;
	if (o->pingpong) {
		if (!c->waiting && c->iter >= c->target)
			return conn_finish(c, c->iter);
		if (!c->waiting) {
			c->t_ping = iwt_now_ns();
			n = t->ping(c);
			if (n < 0)
				return -1;
			c->waiting = n > 0;
		}
		return 0;
	}
	room = c->posted - c->completed;
	room = c->window > room ? c->window - room : 0;
	if (room > c->target - c->posted)
		room = c->target - c->posted;
	if (room) {
		n = t->post(c, room);
		if (n < 0)
			return -1;
		c->posted += (uint64_t)n;
	}
	if (c->completed >= c->target && c->posted == c->completed)
		return conn_finish(c, c->completed);
	return 0;
}

/* --seconds ran out: finish what is under way, start nothing new. */
static void conn_stop(struct ipf_conn *c)
{
	uint64_t t;

	if (c->state != IPF_C_RUN)
		return;
	t = c->cl->o->pingpong ? c->iter + (c->waiting ? 1 : 0) : c->cl->t->stop_at(c);
	if (t < c->target)
		c->target = t;
	if (c->posted > c->target)
		c->posted = c->target; /* handed over, but not begun: dropped */
}

static int client_loop(struct ipf_client *cl)
{
	const struct ipf_opts *o = cl->o;
	uint64_t cpu0 = iwt_cpu_ns();
	uint64_t t0 = iwt_now_ns(), deadline = 0;
	bool stopped = false;
	unsigned ndone = 0;

	if (o->seconds > 0)
		deadline = t0 + (uint64_t)(o->seconds * 1e9);
	for (unsigned i = 0; i < o->qps; i++) {
		cl->c[i].r.t_start = t0;
		cl->c[i].target = o->seconds > 0 ? UINT64_MAX : o->iters;
		cl->c[i].state = IPF_C_RUN;
	}
	while (ndone < o->qps) {
		if (deadline && !stopped && iwt_now_ns() >= deadline) {
			stopped = true;
			for (unsigned i = 0; i < o->qps; i++)
				conn_stop(&cl->c[i]);
		}
		ndone = 0;
		for (unsigned i = 0; i < o->qps; i++) {
			if (cl->c[i].state == IPF_C_DONE) {
				ndone++;
				continue;
			}
			if (conn_step(&cl->c[i]))
				return -1;
		}
	}
	cl->ri.cpu_s = (double)(iwt_cpu_ns() - cpu0) / 1e9;
	return 0;
}

static int client_report(struct ipf_client *cl)
{
	unsigned n = cl->o->qps;
	struct ipf_res *rs = calloc(n, sizeof(*rs));
	struct ipf_lat **ls = calloc(n, sizeof(*ls));

	if (!rs || !ls) {
		free(rs);
		free(ls);
		return ipf_fail("out of memory");
	}
	for (unsigned i = 0; i < n; i++) {
		rs[i] = cl->c[i].r;
		ls[i] = &cl->c[i].lat;
	}
	ipf_report(cl->o, &cl->ri, rs, ls, n);
	free(rs);
	free(ls);
	return 0;
}

int ipf_client_run(const struct ipf_opts *o, const struct ipf_transport_ops *t)
{
	struct ipf_client cl;
	int ret = -1;

	memset(&cl, 0, sizeof(cl));
	cl.o = o;
	cl.t = t;
	cl.test_id = seed_make();
	if (ipf_resolve(o->host, o->port, false, &cl.dst, &cl.dst_len))
		return -1;
	cl.c = calloc(o->qps, sizeof(*cl.c));
	if (!cl.c)
		return ipf_fail("out of memory");
	for (unsigned i = 0; i < o->qps; i++) {
		cl.c[i].cl = &cl;
		cl.c[i].idx = (int)i;
		cl.c[i].seed = ipf_mix64(seed_make() ^ (uint64_t)i);
	}
	if (t->setup(&cl))
		goto out;
	for (unsigned i = 0; i < o->qps && o->op == IPF_OP_CSWAP; i++) {
		cl.c[i].cmp = calloc(cl.c[i].nslots, sizeof(*cl.c[i].cmp));
		if (!cl.c[i].cmp) {
			ipf_fail("out of memory");
			goto out;
		}
	}
	ipf_banner(o, cl.ri.depth, cl.how);
	if (client_loop(&cl) || (ipf_op_atomic(o->op) && atomic_final(&cl)) || t->close(&cl) ||
	    client_report(&cl))
		goto out;
	ret = 0;
out:
	t->free(&cl);
	for (unsigned i = 0; i < o->qps; i++) {
		free(cl.c[i].lat.v);
		free(cl.c[i].cmp);
	}
	free(cl.c);
	free(cl.seen);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Server                                                                  */
/* ---------------------------------------------------------------------- */

const char *ipf_sess_hello(struct ipf_sess *s, const uint8_t *p, size_t len)
{
	const struct ipf_transport_ops *t = s->sv->t;
	int rc = ipf_hello_decode(p, len, &s->h);

	if (rc == IPF_E_SHORT || rc == IPF_E_MAGIC)
		return "not an iwperf client";
	if (rc == IPF_E_COMBO)
		return "RFC 7306 needs iWARP; write-imm has no ping-pong";
	if (rc)
		return ipf_strerror(rc);
	if (!(s->h.flags & IPF_HF_TCP) != !t->tcp)
		return t->tcp ? "this server runs --tcp-baseline; the client does not"
			      : "the client runs --tcp-baseline; this server does not";
	/* atomics: one word, whatever the depth */
	s->nslots = s->h.flags & IPF_HF_PINGPONG || ipf_op_atomic(s->h.op)
			    ? 1
			    : ipf_slots_for(s->h.size, s->h.depth);
	return NULL;
}

void ipf_sess_fill(struct ipf_sess *s)
{
	const struct ipf_hello *h = &s->h;

	if (h->op == IPF_OP_READ && (h->flags & IPF_HF_VERIFY))
		for (uint32_t i = 0; i < s->nslots; i++)
			ipf_pat_fill(s->data + (size_t)i * h->size, h->size,
				     ipf_msg_key(h->seed, i));
}

void ipf_sess_bad(struct ipf_sess *s, uint8_t status, uint64_t msg, uint64_t off)
{
	if (s->out.status == IPF_RES_OK) {
		s->out.status = status;
		s->out.bad = msg;
		s->out.bad_off = off;
	}
}

void ipf_sess_check(struct ipf_sess *s, const uint8_t *p, size_t len, uint64_t m)
{
	int64_t bad;

	if (!(s->h.flags & IPF_HF_VERIFY))
		return;
	bad = ipf_pat_check(p, len, ipf_msg_key(s->h.seed, m));
	if (bad >= 0)
		ipf_sess_bad(s, IPF_RES_VERIFY, m, (uint64_t)bad);
}

void ipf_sess_result(struct ipf_sess *s, uint64_t count, uint8_t *buf, size_t len)
{
	s->out.type = IPF_CTRL_RESULT;
	s->out.count = count;
	s->out.bytes = count * s->h.size;
	ipf_ctrl_encode(&s->out, buf, len);
	ipf_report_served(s->sv->o, s->sv->t->name, s->peer, &s->h, count, s->out.status);
}

void ipf_refuse(const char *peer, const char *why, uint8_t buf[IPF_WELCOME_LEN])
{
	ipf_welcome_refusal(why, buf);
	fprintf(stderr, "%s: %s: refused: %s\n", PROG, peer, why);
}

/* Free the sessions that closed. */
static void reap(struct ipf_server *sv)
{
	for (struct ipf_sess **pp = &sv->list; *pp;) {
		struct ipf_sess *s = *pp;

		if (s->closed) {
			*pp = s->next;
			sv->t->sess_free(s);
		} else {
			pp = &s->next;
		}
	}
}

int ipf_server_run(const struct ipf_opts *o, const struct ipf_transport_ops *t)
{
	struct ipf_server sv = {.o = o, .t = t};
	uint64_t last_accept = 0;
	int ret = -1;

	install_signals();
	if (ipf_resolve(o->bind_addr, o->port, true, &sv.addr, &sv.addr_len) || t->listen(&sv))
		goto out;
	while (!stop_flag) {
		uint64_t now = iwt_now_ns();
		bool setup = false;

		for (struct ipf_sess *s = sv.list; s; s = s->next)
			setup |= s->setup;
		if (!sv.list || setup || now - last_accept >= CM_CHECK_NS) {
			if (t->accept(&sv))
				goto out;
			last_accept = now;
		}
		for (struct ipf_sess *s = sv.list; s; s = s->next)
			if (!s->closed)
				t->serve(s);
		reap(&sv);
		if (!sv.list)
			t->idle(&sv);
	}
	ret = 0;
out:
	for (struct ipf_sess *s = sv.list; s; s = s->next)
		s->closed = true;
	reap(&sv);
	t->unlisten(&sv);
	return ret;
}
