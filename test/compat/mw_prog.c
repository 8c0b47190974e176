/* SPDX-License-Identifier: MIT */
/*
 * mw_prog.c - memory windows, Local Invalidate and Send with Invalidate
 * through the drop-in libibverbs.so.1 and librdmacm.so.1 (docs/compat.md
 * section 6), written as an ordinary ibverbs program: compiled against
 * rdma-core's <infiniband/verbs.h> and <rdma/rdma_cma.h>, linked with
 * build/compat's libraries and run through iwrun.
 *
 * One process, one thread: a listener on 127.0.0.1 (a free port) and, per
 * case, a client id that connects to it, so each connection has a server
 * side S (which owns the buffer and the window) and a client side C (the
 * peer that reaches it).  A remote access error ends an iWARP connection
 * (the responder sends a Terminate), so every case that provokes one has a
 * connection of its own:
 *
 *   1. device attributes, ibv_alloc_mw(TYPE_1) fails, ibv_bind_mw refuses a
 *      type-2 window, bad IBV_WR_BIND_MW requests are refused at post time,
 *      opcodes iWARP has not are refused, a bind (mw->rkey follows), Writes
 *      and Reads through the window, a
 *      Send with Invalidate (IBV_WC_WITH_INV, invalidated_rkey), a bind
 *      again, then the invalidated rkey refused (IBV_WC_REM_ACCESS_ERR);
 *      ibv_dereg_mr of the MR is EBUSY while the window is bound;
 *   2. a Write that runs past the end of the window;
 *   3. a Read that starts before the window;
 *   4. IBV_WR_LOCAL_INV of the window's rkey, then a Write through it;
 *   5. a Write through a window bound for remote read only;
 *   6. a bind over an MR without IBV_ACCESS_MW_BIND (IBV_WC_MW_BIND_ERR).
 *
 * Output: one "ok" line per step; the first failure prints what was
 * expected and what came, and the status is 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define BUF_LEN	 65536u
#define WIN_OFF	 4096u /* the window: srv[WIN_OFF, WIN_OFF + WIN_LEN) */
#define WIN_LEN	 8192u
#define RCV_LEN	 256u
#define WAIT_MS	 5000
#define CQ_DEPTH 64

static const char *step = "setup";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mw_prog: FAIL [%s]: ", step);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail(__VA_ARGS__);                                                         \
	} while (0)

static void ok(const char *what)
{
	printf("ok - %s: %s\n", step, what);
	fflush(stdout);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* ---------------------------------------------------------------------- */
/* State shared by every connection                                        */
/* ---------------------------------------------------------------------- */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct rdma_event_channel *lch; /* the listener's, and its children's */
static struct rdma_cm_id *listener;
static struct sockaddr_in srv_addr;

static uint8_t *srv, *cli, *rcv; /* S's target, C's source/sink, S's receive buffer */
static struct ibv_mr *srv_mr;	 /* LOCAL_WRITE | MW_BIND: no remote access of its own */
static struct ibv_mr *cli_mr;	 /* LOCAL_WRITE */
static struct ibv_mr *rcv_mr;	 /* LOCAL_WRITE */
static uint8_t srv_ref[BUF_LEN]; /* what srv must hold */

struct side {
	struct rdma_cm_id *id;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
};

struct conn {
	struct rdma_event_channel *cch; /* the client id's */
	struct side s, c;
};

/* ---------------------------------------------------------------------- */
/* CM                                                                      */
/* ---------------------------------------------------------------------- */

/*
 * The next event of `ch` that is `type` for `id` (any id when NULL), acked;
 * returns its id.  DISCONNECTED and TIMEWAIT_EXIT of other ids are what a
 * previous, dead connection leaves behind and are passed over; anything else
 * is a failure.
 */
static struct rdma_cm_id *wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
				     struct rdma_cm_id *id)
{
	uint64_t end = now_ms() + WAIT_MS;

	for (;;) {
		struct pollfd p = {.fd = ch->fd, .events = POLLIN};
		struct rdma_cm_event *ev;
		struct rdma_cm_id *got;
		int left = (int)(end - now_ms());

		if (left <= 0 || poll(&p, 1, left) == 0)
			fail("no %s within %d ms", rdma_event_str(type), WAIT_MS);
		if (rdma_get_cm_event(ch, &ev) != 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fail("rdma_get_cm_event: %s", strerror(errno));
		}
		got = ev->id;
		if (ev->event == type && (!id || got == id)) {
			int status = ev->status;

			rdma_ack_cm_event(ev);
			CHECK(type != RDMA_CM_EVENT_ESTABLISHED || status == 0,
			      "ESTABLISHED with status %d", status);
			return got;
		}
		if ((ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		     ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT) &&
		    got != id) {
			rdma_ack_cm_event(ev);
			continue;
		}
		fail("waiting for %s: got %s (status %d)", rdma_event_str(type),
		     rdma_event_str(ev->event), ev->status);
	}
}

static void make_qp(struct side *sd)
{
	struct ibv_qp_init_attr a;

	sd->scq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	sd->rcq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	CHECK(sd->scq && sd->rcq, "ibv_create_cq: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.send_cq = sd->scq;
	a.recv_cq = sd->rcq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	CHECK(rdma_create_qp(sd->id, pd, &a) == 0, "rdma_create_qp: %s", strerror(errno));
	sd->qp = sd->id->qp;
}

static void conn_up(struct conn *k)
{
	struct rdma_conn_param prm;

	memset(k, 0, sizeof(*k));
	k->cch = rdma_create_event_channel();
	CHECK(k->cch, "rdma_create_event_channel: %s", strerror(errno));
	CHECK(rdma_create_id(k->cch, &k->c.id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id: %s",
	      strerror(errno));
	CHECK(rdma_resolve_addr(k->c.id, NULL, (struct sockaddr *)&srv_addr, WAIT_MS) == 0,
	      "rdma_resolve_addr: %s", strerror(errno));
	wait_event(k->cch, RDMA_CM_EVENT_ADDR_RESOLVED, k->c.id);
	CHECK(rdma_resolve_route(k->c.id, WAIT_MS) == 0, "rdma_resolve_route: %s", strerror(errno));
	wait_event(k->cch, RDMA_CM_EVENT_ROUTE_RESOLVED, k->c.id);
	make_qp(&k->c);
	memset(&prm, 0, sizeof(prm));
	prm.responder_resources = 4;
	prm.initiator_depth = 4;
	CHECK(rdma_connect(k->c.id, &prm) == 0, "rdma_connect: %s", strerror(errno));

	k->s.id = wait_event(lch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	make_qp(&k->s);
	CHECK(rdma_accept(k->s.id, &prm) == 0, "rdma_accept: %s", strerror(errno));
	wait_event(lch, RDMA_CM_EVENT_ESTABLISHED, k->s.id);
	wait_event(k->cch, RDMA_CM_EVENT_ESTABLISHED, k->c.id);
	CHECK(k->s.qp->pd == pd && k->c.qp->pd == pd, "QPs not in the program's PD");
}

static void side_down(struct side *sd)
{
	rdma_destroy_qp(sd->id);
	CHECK(rdma_destroy_id(sd->id) == 0, "rdma_destroy_id: %s", strerror(errno));
	CHECK(ibv_destroy_cq(sd->scq) == 0 && ibv_destroy_cq(sd->rcq) == 0, "ibv_destroy_cq");
}

/* Close (if still open) and free; both ids see DISCONNECTED first. */
static void conn_down(struct conn *k)
{
	rdma_disconnect(k->c.id); /* may have failed already: the error does not matter */
	wait_event(k->cch, RDMA_CM_EVENT_DISCONNECTED, k->c.id);
	wait_event(lch, RDMA_CM_EVENT_DISCONNECTED, k->s.id);
	side_down(&k->c);
	side_down(&k->s);
	rdma_destroy_event_channel(k->cch);
}

/* ---------------------------------------------------------------------- */
/* Data path                                                               */
/* ---------------------------------------------------------------------- */

static const char *opname(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND:
		return "SEND";
	case IBV_WC_RDMA_WRITE:
		return "RDMA_WRITE";
	case IBV_WC_RDMA_READ:
		return "RDMA_READ";
	case IBV_WC_BIND_MW:
		return "BIND_MW";
	case IBV_WC_LOCAL_INV:
		return "LOCAL_INV";
	case IBV_WC_RECV:
		return "RECV";
	default:
		return "other";
	}
}

static struct ibv_wc poll1(struct ibv_cq *cq, const char *what)
{
	uint64_t end = now_ms() + WAIT_MS;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
		struct timespec t = {.tv_nsec = 20000};

		if (now_ms() > end)
			fail("no completion for %s within %d ms", what, WAIT_MS);
		nanosleep(&t, NULL);
	}
	CHECK(n == 1, "ibv_poll_cq for %s: %d", what, n);
	return wc;
}

/* One completion of `cq`: wr_id, status and opcode as given. */
static struct ibv_wc expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st,
			       enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc = poll1(cq, what);

	CHECK(wc.wr_id == wr_id && wc.status == st && wc.opcode == op,
	      "%s: completion wr_id %llu %s (%s, vendor_err %u), expected wr_id %llu %s (%s)", what,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), opname(wc.opcode),
	      wc.vendor_err, (unsigned long long)wr_id, ibv_wc_status_str(st), opname(op));
	return wc;
}

static struct ibv_sge sge_of(struct ibv_mr *mr, const uint8_t *p, uint32_t len)
{
	return (struct ibv_sge){.addr = (uint64_t)(uintptr_t)p, .length = len, .lkey = mr->lkey};
}

static int post(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	*bad = NULL;
	return ibv_post_send(qp, wr, bad);
}

/* A Write or Read WR of `sge` to or from the server's (rkey, srv + roff). */
static struct ibv_send_wr rdma_wr(uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_sge *sge,
				  uint32_t rkey, uint32_t roff)
{
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(srv + roff);
	wr.wr.rdma.rkey = rkey;
	return wr;
}

static struct ibv_send_wr bind_wr(uint64_t wr_id, struct ibv_mw *mw, uint32_t rkey,
				  struct ibv_mr *mr, uint32_t off, uint32_t len,
				  unsigned int access)
{
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uint64_t)(uintptr_t)(srv + off);
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return wr;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

/* The whole server buffer against what it must hold (nothing outside a Write changed). */
static void srv_is_ref(const char *what)
{
	for (size_t i = 0; i < BUF_LEN; i++)
		CHECK(srv[i] == srv_ref[i], "%s: server octet %zu is 0x%02x, expected 0x%02x", what,
		      i, srv[i], srv_ref[i]);
}

/* Bind `mw` on S over the window with the next key; returns that key. */
static uint32_t bind_window(struct conn *k, struct ibv_mw *mw, unsigned int access, uint64_t wr_id)
{
	uint32_t key = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr wr = bind_wr(wr_id, mw, key, srv_mr, WIN_OFF, WIN_LEN, access), *bad;
	int r = post(k->s.qp, &wr, &bad);

	CHECK(r == 0, "IBV_WR_BIND_MW: ibv_post_send %d (%s)", r, strerror(r));
	CHECK(mw->rkey == key, "mw->rkey 0x%x after the bind, expected the new rkey 0x%x", mw->rkey,
	      key);
	expect_wc(k->s.scq, wr_id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "bind");
	return key;
}

/* C writes `len` fresh octets at window offset `woff` through `rkey`, then reads them back. */
static void write_read_ok(struct conn *k, uint32_t rkey, uint32_t woff, uint32_t len, unsigned seed,
			  const char *what)
{
	struct ibv_sge ws = sge_of(cli_mr, cli, len), rs = sge_of(cli_mr, cli + BUF_LEN / 2, len);
	struct ibv_send_wr w = rdma_wr(100, IBV_WR_RDMA_WRITE, &ws, rkey, WIN_OFF + woff);
	struct ibv_send_wr rd = rdma_wr(101, IBV_WR_RDMA_READ, &rs, rkey, WIN_OFF + woff), *bad;
	struct ibv_wc wc;
	int r;

	fill(cli, len, seed);
	memset(cli + BUF_LEN / 2, 0, len);
	w.next = &rd;
	r = post(k->c.qp, &w, &bad);
	CHECK(r == 0, "%s: ibv_post_send %d (%s)", what, r, strerror(r));
	expect_wc(k->c.scq, 100, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, what);
	wc = expect_wc(k->c.scq, 101, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, what);
	CHECK(wc.byte_len == len, "%s: Read byte_len %u, expected %u", what, wc.byte_len, len);
	/* The Read is answered after the Write is placed (one stream, in order). */
	memcpy(srv_ref + WIN_OFF + woff, cli, len);
	srv_is_ref(what);
	CHECK(memcmp(cli + BUF_LEN / 2, cli, len) == 0, "%s: the Read brought other octets", what);
}

/*
 * C's `bad` request (a Write or a Read, wr_id 200) that S must refuse; a
 * Write is followed in the same post by a Read inside the window (wr_id 201),
 * so a request is still waiting when the Terminate comes back.  The
 * requester must see IBV_WC_REM_ACCESS_ERR (a Write already on the wire may
 * have completed with success, a Read not yet sent is flushed) and its QP
 * must end in IBV_QPS_ERR, as must S's.
 */
static void expect_refused(struct conn *k, struct ibv_send_wr *badwr)
{
	struct ibv_sge rs = sge_of(cli_mr, cli + BUF_LEN / 2, 16);
	struct ibv_send_wr rd = rdma_wr(201, IBV_WR_RDMA_READ, &rs, badwr->wr.rdma.rkey, WIN_OFF);
	struct ibv_send_wr *bad;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	int n = badwr->opcode == IBV_WR_RDMA_WRITE ? 2 : 1, r;
	bool refused = false;

	if (n == 2)
		badwr->next = &rd;
	r = post(k->c.qp, badwr, &bad);
	CHECK(r == 0, "ibv_post_send %d (%s)", r, strerror(r));
	for (int i = 0; i < n; i++) {
		struct ibv_wc wc = poll1(k->c.scq, "the refused request");

		CHECK(wc.wr_id == 200u + (unsigned)i, "completion wr_id %llu, expected %d",
		      (unsigned long long)wc.wr_id, 200 + i);
		if (wc.status == IBV_WC_REM_ACCESS_ERR)
			refused = true;
		else
			CHECK((i == 0 && wc.status == IBV_WC_SUCCESS) ||
				      (i == 1 && wc.status == IBV_WC_WR_FLUSH_ERR),
			      "wr_id %d: %s (vendor_err %u), expected IBV_WC_REM_ACCESS_ERR%s",
			      200 + i, ibv_wc_status_str(wc.status), wc.vendor_err,
			      i == 0 ? " or success" : " or a flush");
	}
	CHECK(refused, "no request completed with IBV_WC_REM_ACCESS_ERR");
	ok("the requester sees IBV_WC_REM_ACCESS_ERR");
	for (int i = 0; i < 2; i++) {
		struct ibv_qp *qp = i ? k->s.qp : k->c.qp;
		uint64_t end = now_ms() + WAIT_MS;

		do {
			CHECK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia) == 0, "ibv_query_qp");
		} while (qa.qp_state != IBV_QPS_ERR && now_ms() < end);
		CHECK(qa.qp_state == IBV_QPS_ERR, "%s QP in state %d, expected IBV_QPS_ERR (%d)",
		      i ? "responder's" : "requester's", qa.qp_state, IBV_QPS_ERR);
	}
	srv_is_ref("nothing written by the refused request");
	ok("both QPs in IBV_QPS_ERR, the target unchanged");
}

/* ---------------------------------------------------------------------- */
/* Cases                                                                   */
/* ---------------------------------------------------------------------- */

static void case_device(void)
{
	struct ibv_device_attr da;
	struct ibv_mw *mw;

	step = "device";
	CHECK(ibv_query_device(ctx, &da) == 0, "ibv_query_device: %s", strerror(errno));
	CHECK(da.max_mw > 0, "max_mw %d, expected > 0", da.max_mw);
	CHECK(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	      "device_cap_flags 0x%x without IBV_DEVICE_MEM_WINDOW_TYPE_2B", da.device_cap_flags);
	ok("max_mw > 0, IBV_DEVICE_MEM_WINDOW_TYPE_2B");

	step = "type 1";
	errno = 0;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	CHECK(!mw, "ibv_alloc_mw(IBV_MW_TYPE_1) gave a window");
	CHECK(errno == EOPNOTSUPP,
	      "ibv_alloc_mw(IBV_MW_TYPE_1): errno %d (%s), expected EOPNOTSUPP", errno,
	      strerror(errno));
	ok("ibv_alloc_mw(IBV_MW_TYPE_1) is NULL with EOPNOTSUPP");
}

/* Bad IBV_WR_BIND_MW requests: refused by ibv_post_send, nothing posted, mw->rkey kept. */
static void bad_binds(struct conn *k, struct ibv_mw *mw)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mw *mw2;
	struct ibv_mr *mr2;
	uint32_t key = ibv_inc_rkey(mw->rkey), before = mw->rkey;
	struct {
		const char *what;
		struct ibv_send_wr wr;
	} t[8];
	int nt = 0;

	CHECK(pd2, "ibv_alloc_pd: %s", strerror(errno));
	mw2 = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	mr2 = ibv_reg_mr(pd2, srv, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(mw2 && mr2, "window and MR in a second PD: %s", strerror(errno));

	t[nt].what = "no window";
	t[nt++].wr = bind_wr(1, NULL, key, srv_mr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	t[nt].what = "a window of another PD";
	t[nt++].wr = bind_wr(1, mw2, ibv_inc_rkey(mw2->rkey), srv_mr, WIN_OFF, WIN_LEN,
			     IBV_ACCESS_REMOTE_WRITE);
	t[nt].what = "an MR of another PD";
	t[nt++].wr = bind_wr(1, mw, key, mr2, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	t[nt].what = "the window's current rkey as the new one";
	t[nt++].wr = bind_wr(1, mw, mw->rkey, srv_mr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	t[nt].what = "an rkey of another STag index";
	t[nt++].wr =
		bind_wr(1, mw, key ^ 0x100u, srv_mr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	t[nt].what = "IBV_ACCESS_ZERO_BASED";
	t[nt++].wr = bind_wr(1, mw, key, srv_mr, WIN_OFF, WIN_LEN,
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);
	t[nt].what = "IBV_SEND_INLINE";
	t[nt].wr = bind_wr(1, mw, key, srv_mr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	t[nt++].wr.send_flags |= IBV_SEND_INLINE;

	for (int i = 0; i < nt; i++) {
		struct ibv_send_wr *bad;
		int r = post(k->s.qp, &t[i].wr, &bad);

		CHECK(r == EINVAL, "bind with %s: ibv_post_send %d (%s), expected EINVAL",
		      t[i].what, r, strerror(r));
		CHECK(bad == &t[i].wr, "bind with %s: bad_wr %p, expected the request %p",
		      t[i].what, (void *)bad, (void *)&t[i].wr);
		CHECK(mw->rkey == before, "bind with %s changed mw->rkey 0x%x -> 0x%x", t[i].what,
		      before, mw->rkey);
	}
	CHECK(ibv_dealloc_mw(mw2) == 0 && ibv_dereg_mr(mr2) == 0 && ibv_dealloc_pd(pd2) == 0,
	      "freeing the second PD's objects");
	ok("bad IBV_WR_BIND_MW requests are EINVAL with bad_wr, mw->rkey unchanged");
}

static void case_main(void)
{
	struct ibv_send_wr wr[2], *bad;
	struct ibv_mw_bind mb;
	struct ibv_recv_wr rw, *rbad;
	struct ibv_sge ss, rs;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct conn k;
	uint32_t key, old;
	int r;

	step = "connection 1";
	conn_up(&k);
	ok("connected");

	step = "alloc";
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw, "ibv_alloc_mw(IBV_MW_TYPE_2): %s", strerror(errno));
	CHECK(mw->type == IBV_MW_TYPE_2 && mw->pd == pd && mw->context == ctx,
	      "the window's type %d, pd %p, context %p", mw->type, (void *)mw->pd,
	      (void *)mw->context);
	CHECK(mw->rkey >> 8 != srv_mr->rkey >> 8, "the window shares the MR's STag index (0x%x)",
	      mw->rkey);
	ok("ibv_alloc_mw(IBV_MW_TYPE_2)");

	step = "ibv_bind_mw";
	memset(&mb, 0, sizeof(mb));
	mb.wr_id = 5;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info.mr = srv_mr;
	mb.bind_info.addr = (uint64_t)(uintptr_t)(srv + WIN_OFF);
	mb.bind_info.length = WIN_LEN;
	mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	old = mw->rkey;
	r = ibv_bind_mw(k.s.qp, mw, &mb);
	CHECK(r == EINVAL, "ibv_bind_mw on a type-2 window: %d (%s), expected EINVAL", r,
	      strerror(r));
	r = ctx->ops.bind_mw(k.s.qp, mw, &mb);
	CHECK(r == EINVAL, "ops.bind_mw on a type-2 window: %d (%s), expected EINVAL", r,
	      strerror(r));
	CHECK(mw->rkey == old, "ibv_bind_mw changed mw->rkey");
	ok("ibv_bind_mw (type 1 only) refuses a type-2 window with EINVAL");

	step = "bad binds";
	bad_binds(&k, mw);

	step = "other opcodes";
	{
		static const int ops[] = {IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE, 0x20};

		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			struct ibv_sge s = sge_of(cli_mr, cli, 16);

			wr[0] = rdma_wr(1, (enum ibv_wr_opcode)ops[i], &s, mw->rkey, WIN_OFF);
			r = post(k.c.qp, wr, &bad);
			CHECK(r == EINVAL && bad == wr,
			      "opcode %d: ibv_post_send %d (%s), expected EINVAL on it", ops[i], r,
			      strerror(r));
		}
	}
	ok("IBV_WR_TSO, _DRIVER1, _ATOMIC_WRITE and an unknown opcode are EINVAL");

	/* A list: a good bind, then a bad one.  The first is posted (mw->rkey
	 * follows), the second is named in bad_wr. */
	step = "bind";
	key = ibv_inc_rkey(mw->rkey);
	wr[0] = bind_wr(10, mw, key, srv_mr, WIN_OFF, WIN_LEN,
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	wr[1] = bind_wr(11, NULL, key, srv_mr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	wr[0].next = &wr[1];
	r = post(k.s.qp, wr, &bad);
	CHECK(r == EINVAL && bad == &wr[1],
	      "a good bind and a bad one: ibv_post_send %d, bad_wr %s; expected EINVAL on the "
	      "second",
	      r,
	      bad == wr	      ? "the first"
	      : bad == &wr[1] ? "the second"
			      : "other");
	CHECK(mw->rkey == key, "mw->rkey 0x%x after the bind, expected the new rkey 0x%x", mw->rkey,
	      key);
	expect_wc(k.s.scq, 10, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "bind");
	ok("IBV_WR_BIND_MW completes as IBV_WC_BIND_MW, mw->rkey is the new rkey");

	step = "through the window";
	write_read_ok(&k, mw->rkey, 0, WIN_LEN, 1, "the whole window");
	write_read_ok(&k, mw->rkey, WIN_LEN - 16, 16, 2, "its last 16 octets");
	ok("RDMA Write and Read through the window rkey");

	step = "dereg while bound";
	r = ibv_dereg_mr(srv_mr);
	CHECK(r == EBUSY, "ibv_dereg_mr of an MR with a bound window: %d (%s), expected EBUSY", r,
	      strerror(r));
	ok("ibv_dereg_mr is EBUSY while a window is bound to the MR");

	step = "send with invalidate";
	rs = sge_of(rcv_mr, rcv, RCV_LEN);
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = 20;
	rw.sg_list = &rs;
	rw.num_sge = 1;
	CHECK(ibv_post_recv(k.s.qp, &rw, &rbad) == 0, "ibv_post_recv");
	fill(cli, 16, 3);
	ss = sge_of(cli_mr, cli, 16);
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 21;
	wr[0].sg_list = &ss;
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_SEND_WITH_INV;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].invalidate_rkey = mw->rkey;
	r = post(k.c.qp, wr, &bad);
	CHECK(r == 0, "IBV_WR_SEND_WITH_INV: ibv_post_send %d (%s)", r, strerror(r));
	wc = expect_wc(k.s.rcq, 20, IBV_WC_SUCCESS, IBV_WC_RECV, "the receive");
	CHECK(wc.byte_len == 16, "receive byte_len %u, expected 16", wc.byte_len);
	CHECK(wc.wc_flags & IBV_WC_WITH_INV, "receive wc_flags 0x%x without IBV_WC_WITH_INV",
	      wc.wc_flags);
	CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "receive wc_flags 0x%x with IBV_WC_WITH_IMM",
	      wc.wc_flags);
	CHECK(wc.invalidated_rkey == mw->rkey, "invalidated_rkey 0x%x, expected the window's 0x%x",
	      wc.invalidated_rkey, mw->rkey);
	CHECK(memcmp(rcv, cli, 16) == 0, "the Send's payload differs");
	expect_wc(k.c.scq, 21, IBV_WC_SUCCESS, IBV_WC_SEND, "the Send with Invalidate");
	ok("the receiver's completion has IBV_WC_WITH_INV and the window's rkey");

	step = "bind again";
	old = mw->rkey;
	key = bind_window(&k, mw, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 30);
	write_read_ok(&k, key, 512, 1024, 4, "through the new rkey");
	ok("an invalidated window binds again under its next rkey");

	step = "invalidated rkey";
	{
		struct ibv_sge s = sge_of(cli_mr, cli, 16);
		struct ibv_send_wr w = rdma_wr(200, IBV_WR_RDMA_WRITE, &s, old, WIN_OFF);

		expect_refused(&k, &w);
	}

	step = "dealloc";
	r = ibv_dealloc_mw(mw);
	CHECK(r == 0, "ibv_dealloc_mw of a bound window: %d (%s)", r, strerror(r));
	ok("ibv_dealloc_mw");
	step = "connection 1 down";
	conn_down(&k);
	ok("closed");
}

/* Connections 2-5: a window bound with `access`, `prep` done, then `badwr` refused. */
enum bad_case { PAST_END, BEFORE_START, LOCAL_INV, READ_ONLY };

static void case_refused(enum bad_case c)
{
	static const char *const names[] = {
		[PAST_END] = "connection 2: Write past the window's end",
		[BEFORE_START] = "connection 3: Read from before the window",
		[LOCAL_INV] = "connection 4: Local Invalidate",
		[READ_ONLY] = "connection 5: Write to a read-only window",
	};
	struct ibv_sge s = sge_of(cli_mr, cli, 16);
	struct ibv_send_wr w;
	struct ibv_mw *mw;
	struct conn k;
	uint32_t key;
	int r;

	step = names[c];
	conn_up(&k);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw, "ibv_alloc_mw: %s", strerror(errno));
	key = bind_window(&k, mw,
			  c == READ_ONLY ? IBV_ACCESS_REMOTE_READ
					 : IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			  40);
	switch (c) {
	case PAST_END:
		write_read_ok(&k, key, WIN_LEN - 64, 64, 5, "the window's end");
		/* 8 octets inside, 8 past the end */
		w = rdma_wr(200, IBV_WR_RDMA_WRITE, &s, key, WIN_OFF + WIN_LEN - 8);
		break;
	case BEFORE_START:
		write_read_ok(&k, key, 0, 64, 6, "the window's start");
		s = sge_of(cli_mr, cli + BUF_LEN / 2, 16);
		w = rdma_wr(200, IBV_WR_RDMA_READ, &s, key, WIN_OFF - 8);
		break;
	case LOCAL_INV: {
		struct ibv_send_wr inv, *bad;

		write_read_ok(&k, key, 100, 200, 7, "before the invalidation");
		memset(&inv, 0, sizeof(inv));
		inv.wr_id = 41;
		inv.opcode = IBV_WR_LOCAL_INV;
		inv.send_flags = IBV_SEND_SIGNALED;
		inv.invalidate_rkey = key;
		r = post(k.s.qp, &inv, &bad);
		CHECK(r == 0, "IBV_WR_LOCAL_INV: ibv_post_send %d (%s)", r, strerror(r));
		expect_wc(k.s.scq, 41, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, "Local Invalidate");
		ok("IBV_WR_LOCAL_INV completes as IBV_WC_LOCAL_INV");
		w = rdma_wr(200, IBV_WR_RDMA_WRITE, &s, key, WIN_OFF);
		break;
	}
	case READ_ONLY:
		w = rdma_wr(200, IBV_WR_RDMA_WRITE, &s, key, WIN_OFF);
		break;
	}
	fill(cli, 16, 99);
	expect_refused(&k, &w);
	r = ibv_dealloc_mw(mw);
	CHECK(r == 0, "ibv_dealloc_mw: %d (%s)", r, strerror(r));
	conn_down(&k);
	ok("closed");
}

/* Connection 6: a bind over an MR registered without IBV_ACCESS_MW_BIND passes
 * ibv_post_send (only the STag table knows) and fails when it runs. */
static void case_bind_err(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_mw *mw;
	struct conn k;
	uint64_t end;
	int r;

	step = "connection 6: bind over an MR without IBV_ACCESS_MW_BIND";
	conn_up(&k);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw, "ibv_alloc_mw: %s", strerror(errno));
	wr = bind_wr(50, mw, ibv_inc_rkey(mw->rkey), cli_mr, 0, 0, IBV_ACCESS_REMOTE_WRITE);
	wr.bind_mw.bind_info.addr = (uint64_t)(uintptr_t)cli;
	wr.bind_mw.bind_info.length = 4096;
	r = post(k.s.qp, &wr, &bad);
	CHECK(r == 0, "ibv_post_send %d (%s)", r, strerror(r));
	expect_wc(k.s.scq, 50, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW, "the bind");
	end = now_ms() + WAIT_MS;
	do {
		CHECK(ibv_query_qp(k.s.qp, &qa, IBV_QP_STATE, &qia) == 0, "ibv_query_qp");
	} while (qa.qp_state != IBV_QPS_ERR && now_ms() < end);
	CHECK(qa.qp_state == IBV_QPS_ERR, "QP in state %d after the failed bind, expected ERR",
	      qa.qp_state);
	ok("IBV_WC_MW_BIND_ERR, the QP in IBV_QPS_ERR");
	r = ibv_dealloc_mw(mw);
	CHECK(r == 0, "ibv_dealloc_mw: %d (%s)", r, strerror(r));
	conn_down(&k);
	ok("closed");
}

int main(void)
{
	struct ibv_device **devs;
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* These are our libraries, not rdma-core's (iwrun or LD_LIBRARY_PATH). */
	devs = ibv_get_device_list(&n);
	CHECK(devs && n == 1 && strcmp(ibv_get_device_name(devs[0]), "iwarp0") == 0,
	      "expected the one device iwarp0 of iwarp's libibverbs.so.1 (%d devices)",
	      devs ? n : -1);
	ibv_free_device_list(devs);

	lch = rdma_create_event_channel();
	CHECK(lch, "rdma_create_event_channel: %s", strerror(errno));
	CHECK(rdma_create_id(lch, &listener, NULL, RDMA_PS_TCP) == 0, "rdma_create_id: %s",
	      strerror(errno));
	memset(&srv_addr, 0, sizeof(srv_addr));
	srv_addr.sin_family = AF_INET;
	srv_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(rdma_bind_addr(listener, (struct sockaddr *)&srv_addr) == 0, "rdma_bind_addr: %s",
	      strerror(errno));
	CHECK(rdma_listen(listener, 4) == 0, "rdma_listen: %s", strerror(errno));
	srv_addr.sin_port = rdma_get_src_port(listener);
	CHECK(srv_addr.sin_port != 0, "no port from rdma_bind_addr");
	printf("# listening on 127.0.0.1:%u\n", ntohs(srv_addr.sin_port));
	ctx = listener->verbs;
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "ibv_alloc_pd: %s", strerror(errno));

	srv = calloc(1, BUF_LEN);
	cli = calloc(1, BUF_LEN);
	rcv = calloc(1, RCV_LEN);
	CHECK(srv && cli && rcv, "out of memory");
	fill(srv, BUF_LEN, 42);
	memcpy(srv_ref, srv, BUF_LEN);
	srv_mr = ibv_reg_mr(pd, srv, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cli_mr = ibv_reg_mr(pd, cli, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	rcv_mr = ibv_reg_mr(pd, rcv, RCV_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(srv_mr && cli_mr && rcv_mr, "ibv_reg_mr: %s", strerror(errno));

	case_device();
	case_main();
	case_refused(PAST_END);
	case_refused(BEFORE_START);
	case_refused(LOCAL_INV);
	case_refused(READ_ONLY);
	case_bind_err();

	step = "teardown";
	CHECK(ibv_dereg_mr(srv_mr) == 0, "ibv_dereg_mr of the window's MR after ibv_dealloc_mw");
	CHECK(ibv_dereg_mr(cli_mr) == 0 && ibv_dereg_mr(rcv_mr) == 0, "ibv_dereg_mr");
	CHECK(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
	CHECK(rdma_destroy_id(listener) == 0, "rdma_destroy_id(listener): %s", strerror(errno));
	rdma_destroy_event_channel(lch);
	free(srv);
	free(cli);
	free(rcv);
	printf("mw_prog: all passed\n");
	return 0;
}
