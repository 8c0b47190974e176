/* SPDX-License-Identifier: MIT */
/* vh.c - helpers for the verbs and CM tests (see vh.h). */
#include "vh.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ih.h"
#include "th.h"

int vh_deadline_ms = VH_DEADLINE_MS;

uint64_t vh_deadline(void)
{
	return th_now_ms() + (uint64_t)vh_deadline_ms;
}

/* ---------------------------------------------------------------------- */
/* The world: every channel pumped, every event kept                       */
/* ---------------------------------------------------------------------- */

const char *vh_evname(int t)
{
	const char *s = iwcm_event_str((enum iwcm_event_type)t);

	return s ? s : "(null)";
}

/* Copy one event out of the library's memory (valid only until its ack). */
static void vh_ev_copy(struct vh_ev *v, const struct iwcm_event *e)
{
	memset(v, 0, sizeof(*v));
	v->id = e->id;
	v->listen_id = e->listen_id;
	v->event = e->event;
	v->status = e->status;
	v->iw_err = e->iw_err;
	v->mpa = e->mpa;
	if (e->event == IWCM_EVENT_CONNECT_REQUEST || e->event == IWCM_EVENT_ESTABLISHED ||
	    e->event == IWCM_EVENT_REJECTED) {
		const struct iwcm_conn_param *cp = &e->param.conn;
		size_t n = cp->private_data_len16 ? cp->private_data_len16 : cp->private_data_len;

		ck_assert_msg(n <= VH_PD_MAX, "%s carries %zu octets of private data",
			      vh_evname(e->event), n);
		ck_assert_msg(n == 0 || cp->private_data != NULL,
			      "%s: private data length %zu with a NULL pointer",
			      vh_evname(e->event), n);
		if (n)
			memcpy(v->pd, cp->private_data, n);
		v->pd_len = n;
		v->responder_resources = cp->responder_resources;
		v->initiator_depth = cp->initiator_depth;
	}
}

static void vh_ev_push(struct vh_world *w, const struct iwcm_event *e)
{
	if (w->qn == w->qcap) {
		w->qcap = w->qcap ? 2 * w->qcap : 64;
		w->q = realloc(w->q, w->qcap * sizeof(*w->q));
		ck_assert_ptr_nonnull(w->q);
	}
	vh_ev_copy(&w->q[w->qn++], e);
}

void vh_world_add(struct vh_world *w, struct iwcm_event_channel *ch, struct iwv_context *ctx)
{
	ck_assert_int_lt(w->nch, VH_MAX_CH);
	ih_set_nonblock(ch->fd, true);
	w->ch[w->nch] = ch;
	w->tick[w->nch] = NULL;
	if (ctx) {
		w->tick[w->nch] = iwv_create_cq(ctx, 1, NULL, NULL, 0);
		ck_assert_msg(w->tick[w->nch] != NULL, "iwv_create_cq(tick): %s", strerror(errno));
	}
	w->nch++;
}

void vh_world_remove(struct vh_world *w, struct iwcm_event_channel *ch)
{
	for (int i = 0; i < w->nch; i++) {
		if (w->ch[i] != ch)
			continue;
		if (w->tick[i])
			ck_assert_int_eq(iwv_destroy_cq(w->tick[i]), 0);
		for (int j = i + 1; j < w->nch; j++) {
			w->ch[j - 1] = w->ch[j];
			w->tick[j - 1] = w->tick[j];
		}
		w->nch--;
		return;
	}
}

void vh_world_fini(struct vh_world *w)
{
	while (w->nch)
		vh_world_remove(w, w->ch[0]);
	free(w->q);
	memset(w, 0, sizeof(*w));
}

int vh_pump(struct vh_world *w)
{
	int got = 0;

	for (int i = 0; i < w->nch; i++) {
		struct iwcm_event *e;

		while (iwcm_get_cm_event(w->ch[i], &e) == 0) {
			vh_ev_push(w, e);
			ck_assert_msg(iwcm_ack_cm_event(e) == 0, "iwcm_ack_cm_event: %s",
				      strerror(errno));
			got++;
		}
		ck_assert_msg(errno == EAGAIN, "iwcm_get_cm_event (O_NONBLOCK): %s",
			      strerror(errno));
		if (w->tick[i]) {
			struct iwv_wc wc;

			ck_assert_int_eq(iwv_poll_cq(w->tick[i], 1, &wc), 0);
		}
	}
	if (got)
		w->idle = 0;
	return got;
}

/* Nothing happened this round: spin first (octets move only when we call in), then sleep. */
static void vh_idle(struct vh_world *w)
{
	struct pollfd pfd[VH_MAX_CH];

	for (int i = 0; i < w->nch; i++)
		pfd[i] = (struct pollfd){.fd = w->ch[i]->fd, .events = POLLIN};
	(void)poll(pfd, (nfds_t)w->nch, w->idle++ < 256 ? 0 : 1);
}

void vh_step(struct vh_world *w)
{
	if (!vh_pump(w))
		vh_idle(w);
}

bool vh_take(struct vh_world *w, const struct iwcm_id *id, struct vh_ev *out)
{
	for (size_t i = 0; i < w->qn; i++) {
		const struct vh_ev *v = &w->q[i];

		if (v->id != id && !(v->event == IWCM_EVENT_CONNECT_REQUEST && v->listen_id == id))
			continue;
		if (out)
			*out = *v;
		memmove(&w->q[i], &w->q[i + 1], (w->qn - i - 1) * sizeof(*w->q));
		w->qn--;
		return true;
	}
	return false;
}

void vh_forget(struct vh_world *w, const struct iwcm_id *id)
{
	while (vh_take(w, id, NULL))
		;
}

bool vh_next(struct vh_world *w, const struct iwcm_id *id, struct vh_ev *out, int ms)
{
	uint64_t end = th_now_ms() + (uint64_t)ms;

	for (;;) {
		if (vh_take(w, id, out))
			return true;
		if (th_now_ms() > end)
			return false;
		vh_step(w);
	}
}

void vh_expect(struct vh_world *w, const struct iwcm_id *id, enum iwcm_event_type type,
	       struct vh_ev *out)
{
	struct vh_ev v;

	ck_assert_msg(vh_next(w, id, &v, vh_deadline_ms), "id %p: no %s within %d ms",
		      (const void *)id, vh_evname(type), vh_deadline_ms);
	ck_assert_msg(v.event == type, "id %p: expected %s, got %s (status %d, iw_err %s)",
		      (const void *)id, vh_evname(type), vh_evname(v.event), v.status,
		      iwv_errname(v.iw_err));
	if (out)
		*out = v;
}

void vh_expect_no_event(struct vh_world *w, const struct iwcm_id *id)
{
	struct vh_ev v;

	vh_pump(w);
	if (vh_take(w, id, &v))
		ck_abort_msg("id %p: unexpected %s (status %d)", (const void *)id,
			     vh_evname(v.event), v.status);
}

/* ---------------------------------------------------------------------- */
/* Completions                                                             */
/* ---------------------------------------------------------------------- */

void vh_poll_wc(struct vh_world *w, struct iwv_cq *cq, int n, struct iwv_wc *wc)
{
	uint64_t end = vh_deadline();
	int got = 0;

	while (got < n) {
		int r = iwv_poll_cq(cq, n - got, wc + got);

		ck_assert_msg(r >= 0, "iwv_poll_cq returned %d", r);
		got += r;
		if (got == n)
			break;
		ck_assert_msg(th_now_ms() <= end, "CQ %p: %d of %d completions within %d ms",
			      (void *)cq, got, n, vh_deadline_ms);
		if (r)
			w->idle = 0;
		else
			vh_step(w);
	}
}

struct iwv_wc vh_poll1(struct vh_world *w, struct iwv_cq *cq)
{
	struct iwv_wc wc;

	vh_poll_wc(w, cq, 1, &wc);
	return wc;
}

void vh_cq_empty(struct iwv_cq *cq)
{
	struct iwv_wc wc;
	int r = iwv_poll_cq(cq, 1, &wc);

	ck_assert_msg(r == 0, "CQ %p not empty: wr_id %llu status %s opcode %d (poll %d)",
		      (void *)cq, (unsigned long long)wc.wr_id, iwv_wc_status_str(wc.status),
		      (int)wc.opcode, r);
}

void vh_wc_is(const struct iwv_wc *wc, uint64_t wr_id, enum iwv_wc_status st, enum iwv_wc_opcode op)
{
	ck_assert_msg(wc->wr_id == wr_id && wc->status == st,
		      "completion wr_id %llu status %s (vendor_err %s), expected wr_id %llu %s",
		      (unsigned long long)wc->wr_id, iwv_wc_status_str(wc->status),
		      iwv_errname(-(int)wc->vendor_err), (unsigned long long)wr_id,
		      iwv_wc_status_str(st));
	ck_assert_msg(wc->opcode == op, "wr_id %llu: opcode %d, expected %d",
		      (unsigned long long)wr_id, (int)wc->opcode, (int)op);
}

/* ---------------------------------------------------------------------- */
/* A connected pair                                                        */
/* ---------------------------------------------------------------------- */

void vh_cfg_default(struct vh_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->family = AF_INET;
	cfg->c_thread = -1;
	cfg->s_thread = -1;
	cfg->cap = (struct iwv_qp_cap){
		.max_send_wr = 256,
		.max_recv_wr = 256,
		.max_send_sge = IWV_MAX_SGE,
		.max_recv_sge = IWV_MAX_SGE,
		.max_inline_data = 256,
	};
	cfg->sq_sig_all = 1;
	cfg->cqe = VH_CQE;
}

struct iwv_context *vh_ctx_open(int engine_thread)
{
	struct iwv_context_attr a;
	struct iwv_context *ctx;

	iwv_context_attr_default(&a);
	a.engine_thread = engine_thread;
	ctx = iwv_open_context(&a);
	ck_assert_msg(ctx != NULL, "iwv_open_context: %s", strerror(errno));
	return ctx;
}

static void vh_side_verbs(struct vh_side *sd, const struct vh_cfg *cfg)
{
	sd->pd = iwv_alloc_pd(sd->ctx);
	ck_assert_msg(sd->pd != NULL, "iwv_alloc_pd: %s", strerror(errno));
	if (cfg->comp_channel) {
		sd->cc = iwv_create_comp_channel(sd->ctx);
		ck_assert_msg(sd->cc != NULL, "iwv_create_comp_channel: %s", strerror(errno));
	}
	sd->scq = iwv_create_cq(sd->ctx, cfg->cqe, sd, sd->cc, 0);
	ck_assert_msg(sd->scq != NULL, "iwv_create_cq: %s", strerror(errno));
	sd->rcq = iwv_create_cq(sd->ctx, cfg->cqe, sd, sd->cc, 0);
	ck_assert_msg(sd->rcq != NULL, "iwv_create_cq: %s", strerror(errno));
}

struct iwv_qp_init_attr vh_qp_attr(const struct vh_cfg *cfg, struct vh_side *sd)
{
	return (struct iwv_qp_init_attr){
		.qp_context = sd,
		.send_cq = sd->scq,
		.recv_cq = sd->rcq,
		.cap = cfg->cap,
		.qp_type = IWV_QPT_RC,
		.sq_sig_all = cfg->sq_sig_all,
	};
}

void vh_pair_listen(struct vh_pair *p, const struct vh_cfg *cfg)
{
	struct sockaddr_storage ss;

	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	if (cfg->default_channel) {
		/* The library owns the default context: it is learnt from an id. */
		p->s.ch = iwcm_create_event_channel();
		ck_assert_msg(p->s.ch != NULL, "iwcm_create_event_channel: %s", strerror(errno));
		p->c.ch = iwcm_create_event_channel();
		ck_assert_msg(p->c.ch != NULL, "iwcm_create_event_channel: %s", strerror(errno));
		ck_assert_int_eq(iwcm_create_id(p->s.ch, &p->listen, p, IWCM_PS_TCP), 0);
		p->s.ctx = p->listen->verbs;
		ck_assert_ptr_nonnull(p->s.ctx);
		p->c.ctx = p->s.ctx;
	} else {
		p->s.ctx = vh_ctx_open(cfg->s_thread);
		p->c.ctx = cfg->two_ctx ? vh_ctx_open(cfg->c_thread) : p->s.ctx;
		p->s.ch = iwcm_create_event_channel_ctx(p->s.ctx);
		ck_assert_msg(p->s.ch != NULL, "iwcm_create_event_channel_ctx: %s",
			      strerror(errno));
		p->c.ch = iwcm_create_event_channel_ctx(p->c.ctx);
		ck_assert_msg(p->c.ch != NULL, "iwcm_create_event_channel_ctx: %s",
			      strerror(errno));
		ck_assert_int_eq(iwcm_create_id(p->s.ch, &p->listen, p, IWCM_PS_TCP), 0);
	}
	ck_assert_ptr_eq(p->listen->verbs, p->s.ctx);
	vh_world_add(&p->w, p->s.ch, p->s.ctx);
	vh_world_add(&p->w, p->c.ch, p->c.ctx);
	vh_side_verbs(&p->s, cfg);
	vh_side_verbs(&p->c, cfg);
	if (cfg->s_opt_set)
		ck_assert_msg(iwcm_set_options(p->listen, &cfg->s_opt) == 0,
			      "iwcm_set_options(listener): %s", strerror(errno));
	th_loopback(cfg->family, 0, &ss);
	ck_assert_msg(iwcm_bind_addr(p->listen, (struct sockaddr *)&ss) == 0, "iwcm_bind_addr: %s",
		      strerror(errno));
	ck_assert_msg(iwcm_listen(p->listen, cfg->backlog ? cfg->backlog : 128) == 0,
		      "iwcm_listen: %s", strerror(errno));
	p->port = iwcm_get_src_port(p->listen);
	ck_assert_uint_ne(p->port, 0);
}

void vh_pair_client(struct vh_pair *p)
{
	struct sockaddr_storage dst;
	struct iwv_qp_init_attr attr;

	ck_assert_int_eq(iwcm_create_id(p->c.ch, &p->c.id, &p->c, IWCM_PS_TCP), 0);
	ck_assert_ptr_eq(p->c.id->verbs, p->c.ctx);
	if (p->cfg.c_opt_set)
		ck_assert_msg(iwcm_set_options(p->c.id, &p->cfg.c_opt) == 0,
			      "iwcm_set_options(client): %s", strerror(errno));
	th_loopback(p->cfg.family, p->port, &dst);
	ck_assert_msg(iwcm_resolve_addr(p->c.id, NULL, (struct sockaddr *)&dst, 2000) == 0,
		      "iwcm_resolve_addr: %s", strerror(errno));
	vh_expect(&p->w, p->c.id, IWCM_EVENT_ADDR_RESOLVED, NULL);
	ck_assert_msg(iwcm_resolve_route(p->c.id, 2000) == 0, "iwcm_resolve_route: %s",
		      strerror(errno));
	vh_expect(&p->w, p->c.id, IWCM_EVENT_ROUTE_RESOLVED, NULL);
	attr = vh_qp_attr(&p->cfg, &p->c);
	attr.rfc7306 = p->cfg.c_rfc7306;
	attr.rnr_hold_ms = p->cfg.c_rnr_hold_ms;
	ck_assert_msg(iwcm_create_qp(p->c.id, p->c.pd, &attr) == 0, "iwcm_create_qp: %s",
		      strerror(errno));
	p->c.qp = p->c.id->qp;
	ck_assert_ptr_nonnull(p->c.qp);
	p->c.cap = attr.cap;
}

void vh_pair_connect(struct vh_pair *p)
{
	vh_pair_client(p);
	if (p->cfg.before_connect)
		p->cfg.before_connect(p);
	ck_assert_msg(iwcm_connect(p->c.id, &p->cfg.c_param) == 0, "iwcm_connect: %s",
		      strerror(errno));
}

void vh_pair_accept(struct vh_pair *p)
{
	struct iwv_qp_init_attr attr;

	vh_expect(&p->w, p->listen, IWCM_EVENT_CONNECT_REQUEST, &p->req);
	ck_assert_ptr_eq(p->req.listen_id, p->listen);
	p->s.id = p->req.id;
	ck_assert_ptr_nonnull(p->s.id);
	ck_assert_ptr_ne(p->s.id, p->listen);
	ck_assert_ptr_eq(p->s.id->verbs, p->s.ctx);
	attr = vh_qp_attr(&p->cfg, &p->s);
	attr.rfc7306 = p->cfg.s_rfc7306;
	attr.rnr_hold_ms = p->cfg.s_rnr_hold_ms;
	ck_assert_msg(iwcm_create_qp(p->s.id, p->s.pd, &attr) == 0, "iwcm_create_qp: %s",
		      strerror(errno));
	p->s.qp = p->s.id->qp;
	ck_assert_ptr_nonnull(p->s.qp);
	p->s.cap = attr.cap;
	if (p->cfg.before_accept)
		p->cfg.before_accept(p);
	ck_assert_msg(iwcm_accept(p->s.id, &p->cfg.s_param) == 0, "iwcm_accept: %s",
		      strerror(errno));
}

void vh_pair_wait_up(struct vh_pair *p)
{
	vh_expect(&p->w, p->c.id, IWCM_EVENT_ESTABLISHED, &p->c.est);
	vh_expect(&p->w, p->s.id, IWCM_EVENT_ESTABLISHED, &p->s.est);
}

void vh_pair_up(struct vh_pair *p, const struct vh_cfg *cfg)
{
	vh_pair_listen(p, cfg);
	vh_pair_connect(p);
	vh_pair_accept(p);
	vh_pair_wait_up(p);
}

void vh_side_wait_disconnected(struct vh_pair *p, struct vh_side *sd)
{
	if (!sd->id || sd->disconnected)
		return;
	vh_expect(&p->w, sd->id, IWCM_EVENT_DISCONNECTED, NULL);
	sd->disconnected = true;
}

static void vh_side_free(struct vh_pair *p, struct vh_side *sd)
{
	if (sd->id) {
		if (sd->id->qp)
			iwcm_destroy_qp(sd->id);
		ck_assert_msg(iwcm_destroy_id(sd->id) == 0, "iwcm_destroy_id: %s", strerror(errno));
		vh_forget(&p->w, sd->id);
		sd->id = NULL;
		sd->qp = NULL;
	}
}

void vh_pair_down(struct vh_pair *p)
{
	struct vh_side *sides[2] = {&p->c, &p->s};

	/* The result is not checked: after a failure the id may already be down. */
	for (int i = 0; i < 2; i++)
		if (sides[i]->id && !sides[i]->disconnected)
			(void)iwcm_disconnect(sides[i]->id);
	for (int i = 0; i < 2; i++)
		vh_side_wait_disconnected(p, sides[i]);
	for (int i = 0; i < 2; i++)
		vh_side_free(p, sides[i]);
	for (int i = 0; i < p->nbufs; i++) {
		ck_assert_int_eq(iwv_dereg_mr(p->bufs[i].mr), 0);
		free(p->bufs[i].base);
	}
	p->nbufs = 0;
	if (p->listen) {
		ck_assert_msg(iwcm_destroy_id(p->listen) == 0, "iwcm_destroy_id(listener): %s",
			      strerror(errno));
		vh_forget(&p->w, p->listen);
	}
	for (int i = 0; i < 2; i++) {
		struct vh_side *sd = sides[i];

		ck_assert_int_eq(iwv_destroy_cq(sd->scq), 0);
		ck_assert_int_eq(iwv_destroy_cq(sd->rcq), 0);
		if (sd->cc)
			ck_assert_int_eq(iwv_destroy_comp_channel(sd->cc), 0);
		ck_assert_int_eq(iwv_dealloc_pd(sd->pd), 0);
	}
	vh_world_fini(&p->w);
	ck_assert_msg(iwcm_destroy_event_channel(p->c.ch) == 0, "iwcm_destroy_event_channel: %s",
		      strerror(errno));
	ck_assert_msg(iwcm_destroy_event_channel(p->s.ch) == 0, "iwcm_destroy_event_channel: %s",
		      strerror(errno));
	if (p->cfg.default_channel)
		return;
	if (p->c.ctx != p->s.ctx) {
		int rc = iwv_close_device(p->c.ctx);

		ck_assert_msg(rc == 0, "iwv_close_device(client): %s", strerror(rc));
	}
	{
		int rc = iwv_close_device(p->s.ctx);

		ck_assert_msg(rc == 0, "iwv_close_device(server): %s", strerror(rc));
	}
}

/* ---------------------------------------------------------------------- */
/* Registered buffers and posting                                          */
/* ---------------------------------------------------------------------- */

struct vh_buf *vh_buf_new(struct vh_pair *p, struct vh_side *sd, size_t len, int access)
{
	struct vh_buf *b;

	ck_assert_int_lt(p->nbufs, VH_MAX_BUFS);
	b = &p->bufs[p->nbufs++];
	b->base = malloc(len + 2 * VH_GUARD);
	ck_assert_ptr_nonnull(b->base);
	memset(b->base, VH_GUARD_OCTET, len + 2 * VH_GUARD);
	b->p = b->base + VH_GUARD;
	b->len = len;
	/* A zero-length region is registered as one octet of the trailing guard. */
	b->mr = iwv_reg_mr(sd->pd, b->p, len ? len : 1, access);
	ck_assert_msg(b->mr != NULL, "iwv_reg_mr(%zu): %s", len, strerror(errno));
	return b;
}

void vh_buf_guards_intact(const struct vh_buf *b)
{
	for (size_t i = 0; i < VH_GUARD; i++) {
		ck_assert_msg(b->base[i] == VH_GUARD_OCTET, "octet %zu before the buffer changed",
			      VH_GUARD - i);
		ck_assert_msg(b->p[b->len + i] == VH_GUARD_OCTET,
			      "octet %zu after the buffer changed", i);
	}
}

void vh_fill(void *buf, size_t len, uint64_t seed)
{
	struct th_rng r;

	th_rng_init(&r, seed);
	th_rng_fill(&r, buf, len);
}

void vh_same(const void *got, const void *want, size_t len, const char *what)
{
	const uint8_t *g = got, *x = want;

	if (memcmp(g, x, len) == 0)
		return;
	for (size_t i = 0; i < len; i++)
		if (g[i] != x[i])
			ck_abort_msg("%s: octet %zu of %zu is 0x%02x, expected 0x%02x", what, i,
				     len, g[i], x[i]);
}

struct iwv_sge vh_sge(const struct vh_buf *b, size_t off, size_t len)
{
	return (struct iwv_sge){
		.addr = (uint64_t)(uintptr_t)(b->p + off),
		.length = (uint32_t)len,
		.lkey = b->mr->lkey,
	};
}

void vh_post_recv(struct iwv_qp *qp, uint64_t wr_id, const struct vh_buf *b, size_t off, size_t len)
{
	struct iwv_sge sge = vh_sge(b, off, len);
	struct iwv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad = NULL;
	int rc = iwv_post_recv(qp, &wr, &bad);

	ck_assert_msg(rc == 0, "iwv_post_recv: %s", strerror(rc));
}

int vh_try_send(struct iwv_qp *qp, enum iwv_wr_opcode op, uint64_t wr_id, unsigned int flags,
		const struct vh_buf *b, size_t off, size_t len, const struct vh_buf *rb,
		size_t roff)
{
	struct iwv_sge sge = vh_sge(b, off, len);
	struct iwv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = flags,
	};
	struct iwv_send_wr *bad = NULL;
	int rc;

	if (rb) {
		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)(rb->p + roff);
		wr.wr.rdma.rkey = rb->mr->rkey;
	}
	rc = iwv_post_send(qp, &wr, &bad);
	if (rc)
		ck_assert_ptr_eq(bad, &wr);
	return rc;
}

void vh_post_send(struct iwv_qp *qp, enum iwv_wr_opcode op, uint64_t wr_id, unsigned int flags,
		  const struct vh_buf *b, size_t off, size_t len, const struct vh_buf *rb,
		  size_t roff)
{
	int rc = vh_try_send(qp, op, wr_id, flags, b, off, len, rb, roff);

	ck_assert_msg(rc == 0, "iwv_post_send(opcode %d): %s", (int)op, strerror(rc));
}
