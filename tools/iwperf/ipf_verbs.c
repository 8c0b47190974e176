/* SPDX-License-Identifier: MIT */
/*
 * ipf_verbs.c - iwperf's iWARP transport: the test patterns as work
 * requests of the iwarp verbs API (iwv.h) on connections of its CM
 * (iwcm.h).
 *
 * Theory of operation (the whole tool: ipf_int.h).
 *
 * Memory.  One memory region per connection holds every buffer, 64-octet
 * aligned pieces of one page-aligned allocation: the client's data slots,
 * the buffer the server writes back into (RDMA Write ping-pong), the
 * receive ring and the DONE message; the server's slots (RDMA Write and
 * Read targets, or the one ping-pong slot), its receive ring (credits + 2
 * for Send and Write with Immediate bandwidth; a few for Send ping-pong; 2
 * for control otherwise), CREDIT and RESULT.  The atomics' target is apart:
 * one word per test, registered on its own and shared by the test's
 * connections (struct iword).
 *
 * Work request ids say what a completion is: the top octet is the kind
 * (data, control Send, Receive, echo Send, ping-pong RDMA Write), the rest
 * the message index or the ring slot.  Data work requests are signalled
 * every `sig` (a quarter of the depth, at most 64) and on the last one, so a
 * completion of message i says that every message up to i is done
 * (ipf_completed(c, i + 1)); --seconds ends a run at a signalled one
 * (stop_at rounds up).  Receives are reposted as soon as they were consumed;
 * the server reposts the receives of one poll round as one list before it
 * sends the CREDITs for them.
 *
 * Client set-up.  Every connection is resolved, given its QP and buffers
 * and connected with its HELLO in the MPA private data; the CM events are
 * awaited (blocking) until every one is ESTABLISHED with a WELCOME in the
 * accept's private data.  Then the --first-fpdu-delay hold passes, polled,
 * before the clock starts.  At the end every connection disconnects and
 * the client waits for each DISCONNECTED.
 *
 * Server.  The CM event channel is non-blocking: accept() handles what is
 * ready (a CONNECT_REQUEST is checked, given its QP and accepted with the
 * WELCOME, or rejected with a refusal), serve() polls one CQ, reposts,
 * sends CREDITs, echoes, and in RDMA Write ping-pong polls the last octet
 * of the slot and writes the message back.  A session is freed once its
 * DISCONNECTED (or a failure) came.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_opt.h"
#include "iwt_verbs.h"

#include "ipf_int.h"

#define CTRL_SLOT     64 /* room for a control message */
#define BATCH_MAX     32 /* work requests per post call */
#define POLL_BATCH    32 /* completions per poll call */
#define SIG_MAX	      64 /* signal at least every SIG_MAX work requests */
#define PP_SIG	      16 /* ping-pong: signal every PP_SIG work requests */
#define PP_SQ	      64 /* ping-pong send queue */
#define PP_RECV	      4	 /* client ping-pong receive ring */
#define SRV_PP_RECV   6	 /* server Send ping-pong receive ring */
#define CLI_CTRL_RECV 8	 /* client control receive ring (CREDIT x4, RESULT) */
#define MAX_INLINE    256
#define IDLE_POLL_MS  1000 /* a bound only: the CM channel's fd wakes us (verbs.md §6) */
#define RESOLVE_MS    2000

/* wr_id: what a work request is (top octet) and its index or slot. */
enum wr_kind { WK_DATA = 1, WK_CTRL, WK_RECV, WK_ECHO, WK_PPW };
#define WR_ID(kind, val) (((uint64_t)(kind) << 56) | ((uint64_t)(val) & ((1ull << 56) - 1)))
#define WR_KIND(id)	 ((unsigned)((id) >> 56))
#define WR_VAL(id)	 ((id) & ((1ull << 56) - 1))
#define RESULT_WR	 1 /* WK_CTRL value of the server's RESULT */

/* ---------------------------------------------------------------------- */
/* Shared                                                                  */
/* ---------------------------------------------------------------------- */

static const char *wr_kind_str(unsigned k, int op)
{
	switch (k) {
	case WK_DATA:
		switch (op) {
		case IPF_OP_WRITE:
			return "RDMA Write";
		case IPF_OP_READ:
			return "RDMA Read";
		case IPF_OP_FADD:
			return "Fetch-and-Add";
		case IPF_OP_CSWAP:
			return "Compare-and-Swap";
		case IPF_OP_WRITE_IMM:
			return "RDMA Write with Immediate";
		default:
			return "Send";
		}
	case WK_CTRL:
		return "control Send";
	case WK_RECV:
		return "Receive";
	case WK_ECHO:
		return "echo Send";
	case WK_PPW:
		return "RDMA Write";
	default:
		return "work request";
	}
}

static void wc_describe(const struct iwv_wc *wc, int op, char *buf, size_t len)
{
	if (wc->vendor_err)
		snprintf(buf, len, "%s completed with %s (%s)", wr_kind_str(WR_KIND(wc->wr_id), op),
			 iwv_wc_status_str(wc->status), iwv_strerror(-(int)wc->vendor_err));
	else
		snprintf(buf, len, "%s completed with %s", wr_kind_str(WR_KIND(wc->wr_id), op),
			 iwv_wc_status_str(wc->status));
}

static size_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* The receive ring's slot `slot` (of rslot octets) as one Receive. */
static int post_recv_slot(struct iwv_qp *qp, const struct iwv_mr *mr, uint8_t *ring, uint32_t rslot,
			  uint32_t slot)
{
	struct iwv_sge sge = {(uintptr_t)(ring + (size_t)slot * rslot), rslot, mr->lkey};
	struct iwv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WR_ID(WK_RECV, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return iwv_post_recv(qp, &wr, &bad);
}

/* One signalled Send of len octets at p (inline when small enough). */
static int post_send1(struct iwv_qp *qp, const struct iwv_mr *mr, const uint8_t *p, uint32_t len,
		      uint64_t wr_id, uint32_t max_inline)
{
	struct iwv_sge sge = {(uintptr_t)p, len, mr->lkey};
	struct iwv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IWV_WR_SEND;
	wr.send_flags = IWV_SEND_SIGNALED | (len <= max_inline ? IWV_SEND_INLINE : 0);
	return iwv_post_send(qp, &wr, &bad);
}

/*
 * One data work request of `len` octets at p; RDMA ones at addr/rkey.  An
 * atomic's p is its 8-octet result buffer (the operands are the caller's);
 * a Write with Immediate carries no Immediate Data yet (the caller's too).
 */
static void data_wr(struct iwv_send_wr *wr, struct iwv_sge *sge, int op, const uint8_t *p,
		    uint32_t len, uint32_t lkey, uint32_t max_inline, uint64_t addr, uint32_t rkey)
{
	static const enum iwv_wr_opcode opcode[] = {
		[IPF_OP_WRITE] = IWV_WR_RDMA_WRITE,
		[IPF_OP_READ] = IWV_WR_RDMA_READ,
		[IPF_OP_SEND] = IWV_WR_SEND,
		[IPF_OP_FADD] = IWV_WR_ATOMIC_FETCH_AND_ADD,
		[IPF_OP_CSWAP] = IWV_WR_ATOMIC_CMP_AND_SWP,
		[IPF_OP_WRITE_IMM] = IWV_WR_RDMA_WRITE_WITH_IMM,
	};

	sge->addr = (uintptr_t)p;
	sge->length = len;
	sge->lkey = lkey;
	memset(wr, 0, sizeof(*wr));
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = opcode[op];
	if (ipf_op_atomic(op)) {
		wr->wr.atomic.remote_addr = addr;
		wr->wr.atomic.rkey = rkey;
		return;
	}
	if (op != IPF_OP_READ && len <= max_inline)
		wr->send_flags |= IWV_SEND_INLINE;
	if (op != IPF_OP_SEND) {
		wr->wr.rdma.remote_addr = addr;
		wr->wr.rdma.rkey = rkey;
	}
}

/* The operation's own fields of the data work request of message `seq`. */
static void data_wr_seq(struct ipf_conn *c, struct iwv_send_wr *wr, uint64_t seq)
{
	int op = c->cl->o->op;

	if (op == IPF_OP_WRITE_IMM)
		wr->imm_data = htonl((uint32_t)seq); /* the message number, mod 2^32 */
	else if (ipf_op_atomic(op))
		ipf_atomic_args(c, seq, &wr->wr.atomic.compare_add, &wr->wr.atomic.swap);
}

/* Bandwidth with receives at the server: Sends, and Writes with Immediate. */
static bool uses_credits(int op)
{
	return op == IPF_OP_SEND || op == IPF_OP_WRITE_IMM;
}

/*
 * A CQ and the CM's RC QP of sq/rq work requests on id; NULL with *no_qp
 * false when the CQ failed, true when the QP did.
 */
static struct iwv_cq *make_qp(struct iwv_context *ctx, struct iwv_pd *pd, struct iwcm_id *id,
			      void *context, uint32_t sq, uint32_t rq, bool rfc7306,
			      uint32_t *max_inline, bool *no_qp)
{
	struct iwv_qp_init_attr attr;
	struct iwv_cq *cq = iwv_create_cq(ctx, (int)(sq + rq + 4), context, NULL, 0);

	*no_qp = cq != NULL;
	if (!cq)
		return NULL;
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = context;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.cap.max_send_wr = sq;
	attr.cap.max_recv_wr = rq;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = MAX_INLINE;
	attr.qp_type = IWV_QPT_RC;
	attr.rfc7306 = rfc7306; /* the RFC 7306 operations alone: other QPs stay plain RFC 5040 */
	if (iwcm_create_qp(id, pd, &attr)) {
		iwv_destroy_cq(cq);
		return NULL;
	}
	*max_inline = attr.cap.max_inline_data;
	return cq;
}

static const void *conn_pd(const struct iwcm_conn_param *p, size_t *len)
{
	*len = p->private_data_len16 ? p->private_data_len16 : p->private_data_len;
	return p->private_data;
}

/* The CM id, its QP and CQ, and the memory region, as far as they exist. */
static void conn_free(struct iwcm_id *id, struct iwv_cq *cq, struct iwv_mr *mr, uint8_t *mem)
{
	if (id) {
		if (id->qp)
			iwcm_destroy_qp(id);
		iwcm_destroy_id(id);
	}
	if (cq)
		iwv_destroy_cq(cq);
	if (mr)
		iwv_dereg_mr(mr);
	free(mem);
}

/* The device, its PD and a CM event channel (non-blocking for a server's polling loop). */
static int dev_open(struct iwt_verbs *v, const struct ipf_opts *o, unsigned flags)
{
	switch (iwt_verbs_open(v, &o->iw, PROG, flags)) {
	case IWT_VERBS_OK:
		return 0;
	case IWT_VERBS_CONTEXT:
		return ipf_fail_said(); /* iwt_opt_open() printed why */
	default:
		return ipf_fail("cannot set up the iWARP device: %s", strerror(errno));
	}
}

/* ---------------------------------------------------------------------- */
/* Client                                                                  */
/* ---------------------------------------------------------------------- */

enum qstate { Q_NEW, Q_ADDR, Q_ROUTE, Q_CONNECTING, Q_ESTABLISHED, Q_CLOSED };

struct iqp {
	struct ipf_conn *c;
	struct iwcm_id *id;
	struct iwv_cq *cq;
	struct iwv_qp *qp;
	struct iwv_mr *mr;
	uint8_t *mem;  /* starts with the data slots (c->data) */
	uint8_t *rx;   /* RDMA Write ping-pong: where the server writes */
	uint8_t *recv; /* receive ring */
	uint32_t nrecv, rslot;
	uint8_t *ctl; /* DONE */
	enum qstate state;
	struct ipf_welcome w;
	uint32_t sig, credits, max_inline;
	bool crc, mtx, mrx;
};

struct icli {
	struct iwt_verbs dev;
	struct iqp *q;
};

static int ic_event(struct ipf_client *cl, struct iwcm_event *ev)
{
	const struct ipf_opts *o = cl->o;
	struct iqp *q = ev->id ? ev->id->context : NULL;
	/* iw_err is the precise cause (IW_ESYS(errno) when the socket failed) */
	const char *err = ev->iw_err   ? iwv_strerror(ev->iw_err)
			  : ev->status ? strerror(-ev->status)
				       : "no cause given";
	const void *pd;
	size_t pdlen;

	if (!q)
		return 0;
	switch (ev->event) {
	case IWCM_EVENT_ADDR_RESOLVED:
		q->state = Q_ADDR;
		return 0;
	case IWCM_EVENT_ROUTE_RESOLVED:
		q->state = Q_ROUTE;
		return 0;
	case IWCM_EVENT_ESTABLISHED:
		pd = conn_pd(&ev->param.conn, &pdlen);
		if (!pd || ipf_welcome_decode(pd, pdlen, &q->w) || q->w.status)
			return ipf_fail(
				"QP %d: the server's accept carries no iwperf answer (is it "
				"an iwperf server?)",
				q->c->idx);
		q->crc = ev->mpa.crc;
		q->mtx = ev->mpa.markers_tx;
		q->mrx = ev->mpa.markers_rx;
		q->state = Q_ESTABLISHED;
		return 0;
	case IWCM_EVENT_REJECTED:
		pd = conn_pd(&ev->param.conn, &pdlen);
		if (pd && !ipf_welcome_decode(pd, pdlen, &q->w) && q->w.status)
			return ipf_fail("the server refused the test: %s", q->w.reason);
		return ipf_fail("connection to %s port %u refused: %s (is 'iwperf -s' running "
				"there?)",
				o->host, o->port, err);
	case IWCM_EVENT_UNREACHABLE:
		return ipf_fail("%s port %u unreachable: %s", o->host, o->port, err);
	case IWCM_EVENT_CONNECT_ERROR:
		return ipf_fail("QP %d: iWARP connection setup failed: %s (is the server running "
				"with the same --tcp-baseline setting?)",
				q->c->idx, err);
	case IWCM_EVENT_ADDR_ERROR:
	case IWCM_EVENT_ROUTE_ERROR:
		return ipf_fail("QP %d: cannot resolve %s: %s", q->c->idx, o->host, err);
	case IWCM_EVENT_DISCONNECTED:
		if (q->c->state != IPF_C_DONE)
			return ipf_fail("QP %d: the connection closed before the test ended",
					q->c->idx);
		q->state = Q_CLOSED;
		return 0;
	default:
		return 0;
	}
}

/* Wait for CM events until q (or every QP, q == NULL) reached `st`. */
static int ic_wait(struct ipf_client *cl, struct iqp *q, enum qstate st)
{
	struct icli *ic = cl->t_state;

	for (;;) {
		struct iwcm_event *ev;
		bool ok = true;
		int rc;

		for (unsigned i = 0; i < cl->o->qps; i++)
			if ((!q || q == &ic->q[i]) && ic->q[i].state < st)
				ok = false;
		if (ok)
			return 0;
		if (iwcm_get_cm_event(ic->dev.cm_ch, &ev))
			return ipf_fail("waiting for a connection event: %s", strerror(errno));
		rc = ic_event(cl, ev);
		iwcm_ack_cm_event(ev);
		if (rc)
			return -1;
	}
}

/* Resolve, QP and buffers, receives, connect with the HELLO. */
static int ic_connect(struct ipf_client *cl, struct iqp *q)
{
	const struct ipf_opts *o = cl->o;
	struct icli *ic = cl->t_state;
	struct ipf_conn *c = q->c;
	struct iwcm_conn_param cp;
	uint8_t hb[IPF_HELLO_LEN];
	struct ipf_hello h;
	size_t data_len, rx_len = 0, ring_len, total;
	bool no_qp;
	uint32_t sq;

	if (iwcm_create_id(ic->dev.cm_ch, &q->id, q, IWCM_PS_TCP))
		return ipf_fail("iwcm_create_id: %s", strerror(errno));
	if (iwt_opt_apply(&o->iw, q->id))
		return ipf_fail("iwcm_set_options: %s", strerror(errno));
	if (iwcm_resolve_addr(q->id, NULL, (struct sockaddr *)&cl->dst, RESOLVE_MS))
		return ipf_fail("iwcm_resolve_addr: %s", strerror(errno));
	if (ic_wait(cl, q, Q_ADDR))
		return -1;
	if (iwcm_resolve_route(q->id, RESOLVE_MS))
		return ipf_fail("iwcm_resolve_route: %s", strerror(errno));
	if (ic_wait(cl, q, Q_ROUTE))
		return -1;

	c->nslots = cl->pl.nslots;
	data_len = (size_t)c->nslots * o->size;
	if (o->pingpong && o->op == IPF_OP_WRITE)
		rx_len = o->size;
	if (o->pingpong && o->op == IPF_OP_SEND) {
		q->nrecv = PP_RECV;
		q->rslot = o->size > CTRL_SLOT ? o->size : CTRL_SLOT;
	} else {
		q->nrecv = CLI_CTRL_RECV;
		q->rslot = CTRL_SLOT;
	}
	ring_len = (size_t)q->nrecv * q->rslot;
	total = align64(data_len) + align64(rx_len) + align64(ring_len) + CTRL_SLOT;
	q->mem = ipf_buf_alloc(total);
	if (!q->mem)
		return ipf_fail("out of memory for %zu B of buffers", total);
	c->data = q->mem;
	q->rx = c->data + align64(data_len);
	q->recv = q->rx + align64(rx_len);
	q->ctl = q->recv + align64(ring_len);
	q->mr = iwv_reg_mr(ic->dev.pd, q->mem, total,
			   IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE);
	if (!q->mr)
		return ipf_fail("iwv_reg_mr of %zu B: %s", total, strerror(errno));
	sq = o->pingpong ? PP_SQ : cl->pl.depth + 4;
	q->cq = make_qp(ic->dev.ctx, ic->dev.pd, q->id, q, sq, q->nrecv, ipf_op_rfc7306(o->op),
			&q->max_inline, &no_qp);
	if (!q->cq)
		return ipf_fail("%s: %s", no_qp ? "iwcm_create_qp" : "iwv_create_cq",
				strerror(errno));
	q->qp = q->id->qp;
	for (uint32_t i = 0; i < q->nrecv; i++)
		if (post_recv_slot(q->qp, q->mr, q->recv, q->rslot, i))
			return ipf_fail("iwv_post_recv failed");

	ipf_hello_make(c, &h);
	if (rx_len) {
		h.addr = (uintptr_t)q->rx;
		h.rkey = q->mr->rkey;
		h.length = (uint32_t)rx_len;
	}
	ipf_hello_encode(&h, hb);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = hb;
	cp.private_data_len = sizeof(hb);
	iwt_opt_conn_param(&o->iw, &cp);
	if (iwcm_connect(q->id, &cp))
		return ipf_fail("iwcm_connect: %s", strerror(errno));
	q->state = Q_CONNECTING;
	return 0;
}

/* After ESTABLISHED: what the server offered decides the rest. */
static int ic_ready(struct ipf_client *cl, struct iqp *q)
{
	const struct ipf_opts *o = cl->o;
	struct ipf_conn *c = q->c;
	uint32_t depth = cl->pl.depth;

	if (o->op != IPF_OP_SEND && !o->pingpong) {
		c->rslots = (uint32_t)(q->w.length / o->size);
		if (!c->rslots || !q->w.rkey)
			return ipf_fail("QP %d: the server offered no buffer", c->idx);
	}
	if (o->pingpong && o->op != IPF_OP_SEND && (q->w.length < o->size || !q->w.rkey))
		return ipf_fail("QP %d: the server offered no buffer", c->idx);
	if (ipf_op_atomic(o->op) && (q->w.addr & 7))
		return ipf_fail("QP %d: the server's word is not 8-octet aligned", c->idx);
	if ((o->op == IPF_OP_READ || ipf_op_atomic(o->op)) && !o->pingpong) {
		struct iwv_qp_attr qa;
		struct iwv_qp_init_attr ia;

		/* Reads and atomics beyond the ORD only wait in the send queue: --depth means in flight */
		if (!iwv_query_qp(q->qp, &qa, IWV_QP_MAX_QP_RD_ATOMIC, &ia) && qa.max_rd_atomic &&
		    qa.max_rd_atomic < depth)
			depth = qa.max_rd_atomic;
	}
	if (uses_credits(o->op) && !o->pingpong) {
		if (!q->w.credits || !q->w.credit_batch ||
		    q->w.credits / q->w.credit_batch > CLI_CTRL_RECV - 2)
			return ipf_fail("QP %d: the server's flow-control offer is unusable",
					c->idx);
		q->credits = q->w.credits;
	}
	c->window = depth;
	q->sig = ipf_clamp_u32(depth / 4, 1, SIG_MAX);
	return 0;
}

static int ic_poll(struct ipf_conn *c);

static int ic_setup(struct ipf_client *cl)
{
	const struct ipf_opts *o = cl->o;
	struct icli *ic = calloc(1, sizeof(*ic));
	uint64_t until;
	char d[128];

	if (!ic)
		return ipf_fail("out of memory");
	cl->t_state = ic;
	ipf_plan_make(o, o->depth, &cl->pl);
	if (dev_open(&ic->dev, o, 0))
		return -1;
	ic->q = calloc(o->qps, sizeof(*ic->q));
	if (!ic->q)
		return ipf_fail("cannot set up the iWARP device: %s", strerror(errno));
	for (unsigned i = 0; i < o->qps; i++) {
		ic->q[i].c = &cl->c[i];
		cl->c[i].t = &ic->q[i];
	}
	for (unsigned i = 0; i < o->qps; i++)
		if (ic_connect(cl, &ic->q[i]))
			return -1;
	if (ic_wait(cl, NULL, Q_ESTABLISHED))
		return -1;
	for (unsigned i = 0; i < o->qps; i++)
		if (ic_ready(cl, &ic->q[i]))
			return -1;
	/*
	 * An initiator holds its first FPDU for --first-fpdu-delay after the
	 * MPA Reply (a Linux siw start-up race): connection set-up, not data
	 * transfer, so it stays out of the measurement.
	 */
	until = iwt_now_ns() + (o->iw.cm.first_fpdu_delay_ms + 1) * 1000000ull;
	while (iwt_now_ns() < until)
		for (unsigned i = 0; i < o->qps; i++)
			if (ic_poll(&cl->c[i]))
				return -1;
	cl->ri = (struct ipf_run_info){"iwarp",		iwv_context_engine_name(ic->dev.ctx),
				       ic->q[0].crc,	ipf_markers_str(ic->q[0].mtx, ic->q[0].mrx),
				       cl->c[0].window, 0};
	iwt_opt_describe(&o->iw, d, sizeof(d));
	snprintf(cl->how, sizeof(cl->how), "iWARP %s; negotiated CRC %s, markers %s; engine %s", d,
		 cl->ri.crc ? "on" : "off", cl->ri.markers, cl->ri.engine);
	return 0;
}

/* Bandwidth: lists of up to BATCH_MAX, within the Send credits. */
static int ic_post(struct ipf_conn *c, uint64_t n)
{
	const struct ipf_opts *o = c->cl->o;
	struct iqp *q = c->t;
	struct iwv_send_wr wr[BATCH_MAX], *bad;
	struct iwv_sge sge[BATCH_MAX];
	uint64_t taken = 0;

	while (taken < n) {
		uint64_t room = n - taken;
		int rc;

		if (uses_credits(o->op) && room > q->credits)
			room = q->credits;
		if (room > BATCH_MAX)
			room = BATCH_MAX;
		if (!room)
			break;
		for (uint64_t i = 0; i < room; i++) {
			uint64_t seq = c->posted + taken + i;
			/* RDMA Write and Read go round the server's slots; Sends have none */
			uint64_t raddr =
				o->op == IPF_OP_SEND
					? 0
					: q->w.addr + (seq % c->rslots) * (uint64_t)o->size;

			data_wr(&wr[i], &sge[i], o->op, ipf_slot_out(c, seq), o->size, q->mr->lkey,
				q->max_inline, raddr, q->w.rkey);
			data_wr_seq(c, &wr[i], seq);
			wr[i].wr_id = WR_ID(WK_DATA, seq);
			wr[i].next = i + 1 < room ? &wr[i + 1] : NULL;
			if ((seq + 1) % q->sig == 0 || seq + 1 == c->target)
				wr[i].send_flags |= IWV_SEND_SIGNALED;
		}
		rc = iwv_post_send(q->qp, wr, &bad);
		if (rc && rc != ENOMEM)
			return ipf_fail("QP %d: iwv_post_send: %s", c->idx, strerror(rc));
		room = rc ? (uint64_t)(bad - wr) : room;
		/* cswap: the ones not taken are made again, comparing with the same values */
		if (rc && o->op == IPF_OP_CSWAP)
			c->expect = c->cmp[(c->posted + taken + room) % c->nslots];
		taken += room;
		if (uses_credits(o->op))
			q->credits -= (uint32_t)room;
		if (rc)
			break; /* send queue full: after the next completions */
	}
	return (int)taken;
}

static int ic_ping(struct ipf_conn *c)
{
	const struct ipf_opts *o = c->cl->o;
	struct iqp *q = c->t;
	struct iwv_send_wr wr, *bad;
	struct iwv_sge sge;
	int rc;

	if (o->verify && o->op != IPF_OP_READ && !ipf_op_atomic(o->op))
		ipf_pat_fill(c->data, o->op == IPF_OP_WRITE ? o->size - 1 : o->size,
			     ipf_msg_key(c->seed, c->iter));
	if (o->op == IPF_OP_WRITE)
		c->data[o->size - 1] = ipf_pp_flag(c->iter);
	data_wr(&wr, &sge, o->op, c->data, o->size, q->mr->lkey, q->max_inline, q->w.addr,
		q->w.rkey);
	data_wr_seq(c, &wr, c->iter);
	wr.wr_id = WR_ID(WK_DATA, c->iter);
	/* a Read or an atomic is its own round trip: its completion is the measurement */
	if (o->op == IPF_OP_READ || ipf_op_atomic(o->op) || (c->iter + 1) % PP_SIG == 0 ||
	    c->iter + 1 == c->target)
		wr.send_flags |= IWV_SEND_SIGNALED;
	rc = iwv_post_send(q->qp, &wr, &bad);
	if (rc == ENOMEM && o->op == IPF_OP_CSWAP)
		c->expect = c->cmp[0]; /* made again next time, with the same compare */
	if (rc == ENOMEM)
		return 0; /* unsignalled ones still queued: after the next completion */
	if (rc)
		return ipf_fail("QP %d: iwv_post_send: %s", c->idx, strerror(rc));
	return 1;
}

/* A Receive completed: an echo, a CREDIT or the RESULT. */
static int ic_recv(struct ipf_conn *c, struct iqp *q, uint32_t slot, uint32_t len)
{
	const struct ipf_opts *o = c->cl->o;
	const uint8_t *p = q->recv + (size_t)slot * q->rslot;
	struct ipf_ctrl m;

	if (o->op == IPF_OP_SEND && o->pingpong && len == o->size) {
		if (ipf_pong(c, p, o->size, c->iter))
			return -1;
	} else if (ipf_ctrl_decode(p, len, &m)) {
		return ipf_fail("QP %d: unexpected %" PRIu32 "-octet message from the server",
				c->idx, len);
	} else if (m.type == IPF_CTRL_CREDIT) {
		q->credits += (uint32_t)m.count;
	} else if (m.type == IPF_CTRL_RESULT) {
		return ipf_result(c, &m);
	} else {
		return ipf_fail("QP %d: unexpected control message from the server", c->idx);
	}
	if (post_recv_slot(q->qp, q->mr, q->recv, q->rslot, slot))
		return ipf_fail("QP %d: iwv_post_recv failed", c->idx);
	return 0;
}

static int ic_wc(struct ipf_conn *c, struct iqp *q, const struct iwv_wc *wc)
{
	const struct ipf_opts *o = c->cl->o;
	unsigned kind = WR_KIND(wc->wr_id);
	uint64_t val = WR_VAL(wc->wr_id);
	char what[160];

	if (wc->status == IWV_WC_WR_FLUSH_ERR)
		return ipf_fail("QP %d: the connection to the server was lost (%s)", c->idx,
				wc->vendor_err ? iwv_strerror(-(int)wc->vendor_err) : "flushed");
	if (wc->status != IWV_WC_SUCCESS) {
		wc_describe(wc, o->op, what, sizeof(what));
		return ipf_fail("QP %d: %s", c->idx, what);
	}
	if (kind == WK_DATA && !o->pingpong)
		return ipf_completed(c, val + 1);
	if (kind == WK_DATA && o->op == IPF_OP_READ)
		return ipf_pong(c, c->data, o->size, 0); /* the server's one slot, pattern 0 */
	if (kind == WK_DATA && ipf_op_atomic(o->op)) {
		uint64_t orig;

		memcpy(&orig, c->data, sizeof(orig));
		if (ipf_atomic_done(c, val, orig))
			return -1;
		return ipf_pong(c, NULL, 0, 0);
	}
	if (kind == WK_RECV)
		return ic_recv(c, q, (uint32_t)val, wc->byte_len);
	return 0;
}

static int ic_poll(struct ipf_conn *c)
{
	const struct ipf_opts *o = c->cl->o;
	struct iqp *q = c->t;
	struct iwv_wc wc[POLL_BATCH];
	int n;

	/* --wait memory: no call into the stack while the ping is out; the
	 * engine thread places the write-back (completions are reaped once per
	 * round trip, before the next ping) */
	if (o->wait_memory && c->state == IPF_C_RUN && c->waiting) {
		if (__atomic_load_n(&q->rx[o->size - 1], __ATOMIC_ACQUIRE) != ipf_pp_flag(c->iter))
			return 0;
		return ipf_pong(c, q->rx, o->size - 1, c->iter);
	}
	n = iwv_poll_cq(q->cq, POLL_BATCH, wc);
	if (n < 0)
		return ipf_fail("QP %d: iwv_poll_cq: %s", c->idx, strerror(-n));
	for (int i = 0; i < n; i++)
		if (ic_wc(c, q, &wc[i]))
			return -1;
	/* RDMA Write ping-pong: the server's write-back has landed when its last octet did */
	if (c->state == IPF_C_RUN && o->pingpong && o->op == IPF_OP_WRITE && c->waiting &&
	    __atomic_load_n(&q->rx[o->size - 1], __ATOMIC_ACQUIRE) == ipf_pp_flag(c->iter))
		return ipf_pong(c, q->rx, o->size - 1, c->iter);
	return 0;
}

static uint64_t ic_stop_at(const struct ipf_conn *c)
{
	const struct iqp *q = c->t;

	/* the work request at posted - 1 was unsignalled unless posted % sig == 0 */
	return (c->posted + q->sig - 1) / q->sig * q->sig;
}

static int ic_finish(struct ipf_conn *c)
{
	struct iqp *q = c->t;
	uint32_t size = c->cl->o->size;
	struct ipf_ctrl d;

	memset(&d, 0, sizeof(d));
	d.type = IPF_CTRL_DONE;
	d.count = c->r.msgs;
	d.bytes = c->r.bytes;
	ipf_ctrl_encode(&d, q->ctl, ipf_ctrl_len(size));
	if (post_send1(q->qp, q->mr, q->ctl, ipf_ctrl_len(size), WR_ID(WK_CTRL, 0), q->max_inline))
		return ipf_fail("QP %d: posting DONE failed", c->idx);
	return 0;
}

/* Graceful close: DISCONNECTED once both FINs went by. */
static int ic_close(struct ipf_client *cl)
{
	struct icli *ic = cl->t_state;

	for (unsigned i = 0; i < cl->o->qps; i++)
		if (iwcm_disconnect(ic->q[i].id))
			ic->q[i].state = Q_CLOSED;
	return ic_wait(cl, NULL, Q_CLOSED);
}

static void ic_free(struct ipf_client *cl)
{
	struct icli *ic = cl->t_state;

	if (!ic)
		return;
	for (unsigned i = 0; ic->q && i < cl->o->qps; i++)
		conn_free(ic->q[i].id, ic->q[i].cq, ic->q[i].mr, ic->q[i].mem);
	free(ic->q);
	iwt_verbs_close(&ic->dev);
	free(ic);
}

/* ---------------------------------------------------------------------- */
/* Server                                                                  */
/* ---------------------------------------------------------------------- */

enum sstate { SS_ACCEPTING, SS_RUN, SS_RESULT_SENT, SS_CLOSING };

struct isess {
	struct ipf_sess s;
	struct iwcm_id *id;
	enum sstate state;
	bool finished; /* RESULT posted: a disconnect now is the normal end */
	bool reported; /* an error line was printed already */
	struct iwv_cq *cq;
	struct iwv_mr *mr;
	uint8_t *mem;	    /* starts with the data slots (s.data), but for atomics */
	struct iword *word; /* atomics: the test's word (s.data) */
	uint8_t *recv;
	uint32_t nrecv, rslot;
	uint8_t *credit_buf, *result_buf;
	uint32_t credits, batch, consumed, credit_pending;
	uint32_t max_inline;
	uint32_t repost[POLL_BATCH]; /* receive slots consumed in this poll round */
	uint32_t nrepost;
	uint64_t polled_ns; /* --wait memory: the last poll of the CQ */
};

/*
 * The atomics' target: one 8-octet word per test (HELLO test id), zero at
 * first, registered on its own for remote atomic access and shared by the
 * test's connections; each session holds a reference, so the word outlives
 * the last atomic aimed at it (a client disconnects only after every RESULT).
 */
struct iword {
	struct iword *next;
	uint64_t test_id;
	uint8_t *mem;
	struct iwv_mr *mr;
	unsigned refs;
};

struct isrv {
	struct iwt_verbs dev; /* with the listening id */
	struct iword *words;
};

/* The word of test `test_id`, made at its first connection; NULL without memory. */
static struct iword *word_get(struct isrv *sv, uint64_t test_id)
{
	struct iword *w;

	for (w = sv->words; w; w = w->next)
		if (w->test_id == test_id) {
			w->refs++;
			return w;
		}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->mem = ipf_buf_alloc(IPF_ATOMIC_SIZE);
	if (w->mem)
		w->mr = iwv_reg_mr(sv->dev.pd, w->mem, IPF_ATOMIC_SIZE,
				   IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_ATOMIC);
	if (!w->mr) {
		free(w->mem);
		free(w);
		return NULL;
	}
	w->test_id = test_id;
	w->refs = 1;
	w->next = sv->words;
	sv->words = w;
	return w;
}

static void word_put(struct isrv *sv, struct iword *w)
{
	if (!w || --w->refs)
		return;
	for (struct iword **pp = &sv->words; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	iwv_dereg_mr(w->mr);
	free(w->mem);
	free(w);
}

static struct isess *isess_of(struct ipf_sess *s)
{
	return (struct isess *)s; /* s is the first member */
}

static void is_close(struct isess *is)
{
	if (is->state == SS_CLOSING)
		return;
	is->state = SS_CLOSING;
	is->s.setup = true;
	/* DISCONNECTED follows and frees the session */
	iwcm_disconnect(is->id);
}

__attribute__((format(printf, 2, 3))) static void is_err(struct isess *is, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s\n", PROG, is->s.peer, msg);
	is->reported = true;
}

/* QP, buffers and receives for the session's HELLO; NULL, or why it cannot run. */
static const char *is_create(struct isrv *sv, struct isess *is, struct iwcm_id *id)
{
	struct ipf_sess *s = &is->s;
	const struct ipf_hello *h = &s->h;
	size_t data_len = 0, ring_len, total;
	bool pp = h->flags & IPF_HF_PINGPONG, no_qp;
	uint32_t sq;

	if ((h->flags & IPF_HF_WAIT_MEM) && iwv_context_engine_thread(sv->dev.ctx) != 1)
		return "--wait memory: start the server with --engine-thread";

	if (ipf_op_atomic(h->op)) {
		is->word = word_get(sv, h->test_id);
		if (!is->word)
			return "server cannot set up the target word";
	} else if (h->op != IPF_OP_SEND) {
		data_len = (size_t)s->nslots * h->size;
	} else {
		s->nslots = 0;
	}
	if (uses_credits(h->op)) {
		/* a Write with Immediate leaves its receive's buffer alone: CTRL_SLOT for DONE */
		is->rslot = h->op == IPF_OP_SEND && h->size > CTRL_SLOT ? h->size : CTRL_SLOT;
		if (pp) {
			is->nrecv = SRV_PP_RECV;
		} else {
			is->credits = ipf_clamp_u32((uint64_t)h->depth * 2, 1, IPF_CREDITS_MAX);
			if (is->credits > IPF_MEM_MAX / is->rslot)
				is->credits =
					ipf_clamp_u32(IPF_MEM_MAX / is->rslot, 1, IPF_CREDITS_MAX);
			/* at most four CREDIT messages in flight: the client's ring is fixed */
			is->batch = (is->credits + 3) / 4;
			is->nrecv = is->credits + 2;
		}
	} else {
		is->nrecv = 2;
		is->rslot = CTRL_SLOT;
	}
	ring_len = (size_t)is->nrecv * is->rslot;
	total = align64(data_len) + align64(ring_len) + 2 * CTRL_SLOT;
	is->mem = ipf_buf_alloc(total);
	if (!is->mem)
		return "server out of memory";
	s->data = is->word ? is->word->mem : is->mem;
	is->recv = is->mem + align64(data_len);
	is->credit_buf = is->recv + align64(ring_len);
	is->result_buf = is->credit_buf + CTRL_SLOT;
	ipf_sess_fill(s);
	if (is->batch) {
		struct ipf_ctrl cr;

		memset(&cr, 0, sizeof(cr));
		cr.type = IPF_CTRL_CREDIT;
		cr.count = is->batch;
		ipf_ctrl_encode(&cr, is->credit_buf, ipf_ctrl_len(h->size));
	}
	is->mr = iwv_reg_mr(sv->dev.pd, is->mem, total,
			    IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE |
				    IWV_ACCESS_REMOTE_READ);
	if (!is->mr)
		return "server cannot register memory";
	if (uses_credits(h->op))
		sq = pp ? 8 : 16;
	else
		sq = pp ? PP_SQ : 4;
	is->cq = make_qp(sv->dev.ctx, sv->dev.pd, id, is, sq, is->nrecv, ipf_op_rfc7306(h->op),
			 &is->max_inline, &no_qp);
	if (!is->cq)
		return no_qp ? "server cannot create a QP" : "server cannot create a CQ";
	for (uint32_t i = 0; i < is->nrecv; i++)
		if (post_recv_slot(id->qp, is->mr, is->recv, is->rslot, i)) {
			iwcm_destroy_qp(id);
			return "server cannot post receives";
		}
	is->id = id;
	id->context = is;
	return NULL;
}

static void is_free(struct isess *is)
{
	conn_free(is->id, is->cq, is->mr, is->mem);
	word_put(is->s.sv->t_state, is->word);
	free(is);
}

static void is_connect_request(struct ipf_server *sv, struct iwcm_event *ev, bool *destroy_id)
{
	struct isess *is = calloc(1, sizeof(*is));
	uint8_t wb[IPF_WELCOME_LEN];
	struct iwcm_conn_param cp;
	struct ipf_welcome w;
	struct ipf_sess *s;
	const char *why;
	const void *pd;
	size_t pdlen;

	if (!is) {
		char peer[IPF_PEER_LEN];

		iwt_addr_format(iwcm_get_peer_addr(ev->id), peer, sizeof(peer));
		ipf_refuse(peer, "server out of memory", wb);
		iwcm_reject(ev->id, wb, sizeof(wb));
		*destroy_id = true;
		return;
	}
	s = &is->s;
	s->sv = sv;
	iwt_addr_format(iwcm_get_peer_addr(ev->id), s->peer, sizeof(s->peer));
	pd = conn_pd(&ev->param.conn, &pdlen);
	why = ipf_sess_hello(s, pd, pd ? pdlen : 0);
	if (!why)
		why = is_create(sv->t_state, is, ev->id);
	if (why) {
		ipf_refuse(s->peer, why, wb);
		iwcm_reject(ev->id, wb, sizeof(wb));
		*destroy_id = true;
		is->id = NULL; /* the caller destroys it after the ack */
		is_free(is);
		return;
	}
	memset(&w, 0, sizeof(w));
	if (s->h.op != IPF_OP_SEND) {
		w.addr = (uintptr_t)s->data;
		w.length = (uint64_t)s->nslots * s->h.size;
		w.rkey = is->word ? is->word->mr->rkey : is->mr->rkey;
	}
	w.credits = is->credits;
	w.credit_batch = is->batch;
	ipf_welcome_encode(&w, wb);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = wb;
	cp.private_data_len = sizeof(wb);
	iwt_opt_conn_param(&sv->o->iw, &cp);
	s->setup = true;
	s->next = sv->list;
	sv->list = s;
	if (iwcm_accept(ev->id, &cp)) {
		is_err(is, "iwcm_accept: %s", strerror(errno));
		s->closed = true;
	}
}

/* DONE: the data is all placed; check what is left to check and answer RESULT. */
static void is_post_result(struct isess *is, const struct ipf_ctrl *done)
{
	struct ipf_sess *s = &is->s;
	const struct ipf_hello *h = &s->h;
	bool pp = h->flags & IPF_HF_PINGPONG;
	uint64_t count = done->count;

	if (uses_credits(h->op) || (pp && h->op == IPF_OP_WRITE)) {
		if (done->count != s->rx_msgs)
			ipf_sess_bad(s, IPF_RES_PROTO, s->rx_msgs, 0);
		count = s->rx_msgs;
	}
	/* atomics: the word; this connection's were all performed (before their responses) */
	if (ipf_op_atomic(h->op))
		count = __atomic_load_n((const uint64_t *)(const void *)s->data, __ATOMIC_ACQUIRE);
	if ((h->op == IPF_OP_WRITE || h->op == IPF_OP_WRITE_IMM) && !pp &&
	    (h->flags & IPF_HF_VERIFY))
		/* every slot holds the last message the client wrote into it */
		for (uint32_t i = 0; i < s->nslots && i < count && s->out.status == IPF_RES_OK; i++)
			ipf_sess_check(s, s->data + (size_t)i * h->size, h->size,
				       i + (count - 1 - i) / s->nslots * s->nslots);
	ipf_sess_result(s, count, is->result_buf, ipf_ctrl_len(h->size));
	if (post_send1(is->id->qp, is->mr, is->result_buf, ipf_ctrl_len(h->size),
		       WR_ID(WK_CTRL, RESULT_WR), is->max_inline)) {
		is_err(is, "cannot post the result");
		is_close(is);
		return;
	}
	is->state = SS_RESULT_SENT;
	is->finished = true;
}

/* A Receive completed: a Send of data, or DONE. */
static void is_recv(struct isess *is, uint32_t slot, uint32_t len)
{
	struct ipf_sess *s = &is->s;
	const struct ipf_hello *h = &s->h;
	uint8_t *p = is->recv + (size_t)slot * is->rslot;
	struct ipf_ctrl m;

	if (h->op == IPF_OP_SEND && len == h->size) {
		ipf_sess_check(s, p, h->size, s->rx_msgs);
		s->rx_msgs++;
		if (h->flags & IPF_HF_PINGPONG) {
			/* echo from where it landed; repost once the echo is out */
			if (post_send1(is->id->qp, is->mr, p, h->size, WR_ID(WK_ECHO, slot),
				       is->max_inline)) {
				is_err(is, "cannot post the echo");
				is_close(is);
			}
			return;
		}
		if (++is->consumed >= is->batch) {
			is->consumed -= is->batch;
			is->credit_pending++;
		}
	} else if (!ipf_ctrl_decode(p, len, &m) && m.type == IPF_CTRL_DONE) {
		is_post_result(is, &m);
	} else {
		is_err(is, "unexpected %" PRIu32 "-octet message", len);
		is_close(is);
		return;
	}
	is->repost[is->nrepost++] = slot;
}

/* A Receive completed with a Write with Immediate: the next message, all of it? */
static void is_recv_imm(struct isess *is, const struct iwv_wc *wc)
{
	struct ipf_sess *s = &is->s;
	uint32_t imm = ntohl(wc->imm_data);

	if (s->h.op != IPF_OP_WRITE_IMM || !(wc->wc_flags & IWV_WC_WITH_IMM)) {
		is_err(is, "unexpected RDMA Write with Immediate Data");
		is_close(is);
		return;
	}
	if ((imm != (uint32_t)s->rx_msgs || wc->byte_len != s->h.size) &&
	    s->out.status == IPF_RES_OK) {
		is_err(is,
		       "write-imm %" PRIu64 ": immediate data %" PRIu32 ", %" PRIu32
		       " octets (want %" PRIu32 ", %" PRIu32 ")",
		       s->rx_msgs, imm, wc->byte_len, (uint32_t)s->rx_msgs, s->h.size);
		ipf_sess_bad(s, IPF_RES_PROTO, s->rx_msgs, 0);
	}
	s->rx_msgs++;
	if (++is->consumed >= is->batch) {
		is->consumed -= is->batch;
		is->credit_pending++;
	}
	is->repost[is->nrepost++] = (uint32_t)WR_VAL(wc->wr_id);
}

static void is_wc(struct isess *is, const struct iwv_wc *wc)
{
	unsigned kind = WR_KIND(wc->wr_id);
	char what[160];

	if (wc->status != IWV_WC_SUCCESS) {
		/* flushes after a close, and a client that went away, are not news */
		if (is->state != SS_CLOSING && is->state != SS_RESULT_SENT &&
		    wc->status != IWV_WC_WR_FLUSH_ERR) {
			wc_describe(wc, is->s.h.op, what, sizeof(what));
			is_err(is, "%s", what);
		}
		is_close(is);
		return;
	}
	if (is->state == SS_CLOSING)
		return;
	if (kind == WK_RECV && wc->opcode == IWV_WC_RECV_RDMA_WITH_IMM)
		is_recv_imm(is, wc);
	else if (kind == WK_RECV)
		is_recv(is, (uint32_t)WR_VAL(wc->wr_id), wc->byte_len);
	else if (kind == WK_ECHO)
		is->repost[is->nrepost++] = (uint32_t)WR_VAL(wc->wr_id);
}

/* Repost the receives of one poll round as one list (before any credit for them). */
static void is_repost(struct isess *is)
{
	struct iwv_recv_wr wr[POLL_BATCH], *bad;
	struct iwv_sge sge[POLL_BATCH];
	uint32_t n = is->nrepost;

	is->nrepost = 0;
	if (!n || is->state == SS_CLOSING)
		return;
	for (uint32_t i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)(is->recv + (size_t)is->repost[i] * is->rslot);
		sge[i].length = is->rslot;
		sge[i].lkey = is->mr->lkey;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = WR_ID(WK_RECV, is->repost[i]);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
	}
	if (iwv_post_recv(is->id->qp, wr, &bad)) {
		is_err(is, "cannot repost receives");
		is_close(is);
	}
}

/* RDMA Write ping-pong: the client's message landed when its last octet did; write it back. */
static void is_write_back(struct isess *is)
{
	struct ipf_sess *s = &is->s;
	const struct ipf_hello *h = &s->h;
	struct iwv_send_wr wr, *bad;
	struct iwv_sge sge;
	int rc;

	if (__atomic_load_n(&s->data[h->size - 1], __ATOMIC_ACQUIRE) != ipf_pp_flag(s->rx_msgs))
		return;
	ipf_sess_check(s, s->data, h->size - 1, s->rx_msgs);
	/* write back what arrived: same pattern, same flag octet */
	data_wr(&wr, &sge, IPF_OP_WRITE, s->data, h->size, is->mr->lkey, is->max_inline, h->addr,
		h->rkey);
	wr.wr_id = WR_ID(WK_PPW, s->rx_msgs);
	if ((s->rx_msgs + 1) % PP_SIG == 0)
		wr.send_flags |= IWV_SEND_SIGNALED;
	rc = iwv_post_send(is->id->qp, &wr, &bad);
	if (rc == ENOMEM)
		return; /* retried on the next round: the flag is still there */
	if (rc) {
		is_err(is, "iwv_post_send: %s", strerror(rc));
		is_close(is);
		return;
	}
	s->rx_msgs++;
}

static void is_serve(struct ipf_sess *s)
{
	struct isess *is = isess_of(s);
	const struct ipf_hello *h = &s->h;
	struct iwv_wc wc[POLL_BATCH];
	int n;

	/* --wait memory: watch the flag octet only; the CQ (the client's DONE
	 * comes as a Send) every millisecond, and after each write-back */
	if ((h->flags & IPF_HF_WAIT_MEM) && is->state != SS_RESULT_SENT) {
		uint64_t now = iwt_now_ns();

		if (__atomic_load_n(&s->data[h->size - 1], __ATOMIC_ACQUIRE) ==
		    ipf_pp_flag(s->rx_msgs)) {
			is_write_back(is);
			is->polled_ns = 0;
		}
		if (now - is->polled_ns < 1000000u)
			return;
		is->polled_ns = now;
	}
	n = iwv_poll_cq(is->cq, POLL_BATCH, wc);
	if (n < 0) {
		is_err(is, "iwv_poll_cq: %s", strerror(-n));
		is_close(is);
		return;
	}
	for (int i = 0; i < n; i++)
		is_wc(is, &wc[i]);
	is_repost(is);
	if (is->state == SS_CLOSING)
		return;
	while (is->credit_pending) {
		int rc = post_send1(is->id->qp, is->mr, is->credit_buf, ipf_ctrl_len(h->size),
				    WR_ID(WK_CTRL, 0), is->max_inline);

		if (rc == ENOMEM)
			break; /* send queue full: after the next completions */
		if (rc) {
			is_err(is, "cannot post credits: %s", strerror(rc));
			is_close(is);
			return;
		}
		is->credit_pending--;
	}
	if (h->op == IPF_OP_WRITE && (h->flags & IPF_HF_PINGPONG) && is->state != SS_RESULT_SENT)
		is_write_back(is);
}

/* Handle every CM event that is ready. */
static int is_accept(struct ipf_server *sv)
{
	struct isrv *isv = sv->t_state;

	for (;;) {
		struct iwcm_event *ev;
		struct iwcm_id *id;
		struct isess *is;
		bool destroy_id = false;

		if (iwcm_get_cm_event(isv->dev.cm_ch, &ev)) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			return ipf_fail("iwcm_get_cm_event: %s", strerror(errno));
		}
		is = ev->id && ev->id != isv->dev.listen_id ? ev->id->context : NULL;
		switch (ev->event) {
		case IWCM_EVENT_CONNECT_REQUEST:
			is_connect_request(sv, ev, &destroy_id);
			break;
		case IWCM_EVENT_ESTABLISHED:
			if (is && is->state == SS_ACCEPTING) {
				is->state = SS_RUN;
				is->s.setup = false;
			}
			if (is && sv->o->verbose)
				printf("%s: %s: connected: MPA rev %u, CRC %s, markers %s, IRD %u, "
				       "ORD %u\n",
				       PROG, is->s.peer, ev->mpa.mpa_rev,
				       ev->mpa.crc ? "on" : "off",
				       ipf_markers_str(ev->mpa.markers_tx, ev->mpa.markers_rx),
				       ev->mpa.ird, ev->mpa.ord);
			fflush(stdout);
			break;
		case IWCM_EVENT_DISCONNECTED:
		case IWCM_EVENT_CONNECT_ERROR:
		case IWCM_EVENT_UNREACHABLE:
		case IWCM_EVENT_REJECTED:
			if (is) {
				if (!is->finished && !is->reported)
					is_err(is, "connection lost before the test ended: %s",
					       ev->iw_err   ? iwv_strerror(ev->iw_err)
					       : ev->status ? strerror(-ev->status)
							    : "the client closed it");
				is->s.closed = true;
			}
			break;
		default:
			break;
		}
		id = destroy_id ? ev->id : NULL;
		iwcm_ack_cm_event(ev);
		if (id)
			iwcm_destroy_id(id); /* refused: after the event that names it */
	}
}

static int is_listen(struct ipf_server *sv)
{
	const struct ipf_opts *o = sv->o;
	char d[128], where[IPF_PEER_LEN], how[200];
	struct isrv *isv = calloc(1, sizeof(*isv));

	if (!isv)
		return ipf_fail("out of memory");
	sv->t_state = isv;
	if (dev_open(&isv->dev, o, IWT_VERBS_F_NONBLOCK))
		return -1;
	if (iwcm_create_id(isv->dev.cm_ch, &isv->dev.listen_id, NULL, IWCM_PS_TCP) ||
	    iwt_opt_apply(&o->iw, isv->dev.listen_id))
		return ipf_fail("cannot create the listening id: %s", strerror(errno));
	if (iwcm_bind_addr(isv->dev.listen_id, (struct sockaddr *)&sv->addr) ||
	    iwcm_listen(isv->dev.listen_id, 128))
		return ipf_fail("cannot listen on %s port %u: %s", o->bind_addr, o->port,
				strerror(errno));
	iwt_opt_describe(&o->iw, d, sizeof(d));
	iwt_addr_format(iwcm_get_local_addr(isv->dev.listen_id), where, sizeof(where));
	snprintf(how, sizeof(how), "iWARP %s; engine %s", d, iwv_context_engine_name(isv->dev.ctx));
	ipf_report_listening(o, where, how);
	return 0;
}

static void is_idle(struct ipf_server *sv)
{
	struct isrv *isv = sv->t_state;
	struct pollfd pfd = {isv->dev.cm_ch->fd, POLLIN, 0};

	/* Without an engine thread the channel's fd is readable on socket activity
	 * and when a CM timer is due (docs/verbs.md section 6, rule 4), so an idle
	 * server sleeps; a signal ends the poll (no SA_RESTART, ipf_drive.c). */
	poll(&pfd, 1, IDLE_POLL_MS);
}

static void is_sess_free(struct ipf_sess *s)
{
	is_free(isess_of(s));
}

static void is_unlisten(struct ipf_server *sv)
{
	struct isrv *isv = sv->t_state;

	if (!isv)
		return;
	iwt_verbs_close(&isv->dev);
	free(isv);
}

const struct ipf_transport_ops ipf_verbs_ops =
	IPF_TRANSPORT_OPS("iwarp", false, "RDMA Read", "reply", ic, is);
