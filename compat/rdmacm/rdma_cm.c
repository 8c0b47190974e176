/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm.c - the drop-in librdmacm.so.1: event channels, ids, connection
 * set-up and teardown, over iwcm.h (whose calls mirror librdmacm's one by
 * one).
 *
 * Theory of operation.  Every id lives on the one context librdmacm shares
 * among its ids (iwc_shared_context: rdma-core opens each device once per
 * process), so a PD or CQ the program makes on id->verbs serves every id.
 * An rdma_cm_id is the public struct embedded first in an rcm_id that holds
 * the iwcm_id behind it; the iwcm_id's context points back at the rcm_id.  A
 * CONNECT_REQUEST brings a new iwcm_id: it gets its own rcm_id here,
 * inheriting the listener's context, channel and port space, and listen_id
 * names the listener.  Events are the iwcm events re-dressed (the event
 * numbers and conn_param fields are the same); the private data stays in the
 * iwcm event until the program acknowledges it.
 *
 * QPs: rdma_create_qp makes the QP with our libibverbs.so.1 (on the shared
 * context; the PD must be of it, as in rdma-core) and attaches it with
 * iwcm_attach_qp.  A program that made its QP itself (rping -q) names it in
 * conn_param.qp_num, and rdma_connect / rdma_accept attach it then.
 *
 * What the programs rely on, kept here: rdma_destroy_id and the QP's
 * teardown wait (bounded) until every event of the id has been acknowledged;
 * rdma_accept with depths of 0 or 0xFF takes the peer's, capped to what the
 * device offers; the iWARP options (MPA revision, CRC, Markers, peer-to-peer
 * and its RTR) come from the environment (IWARP_MPA_REV, IWARP_CRC,
 * IWARP_MARKERS, IWARP_P2P; docs/compat.md), because no librdmacm call can
 * carry them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "iwc.h"

struct rcm_channel {
	struct rdma_event_channel pub;
	struct iwcm_event_channel *iw;
};

struct rcm_id {
	struct rdma_cm_id pub;
	struct iwcm_id *iw;
	struct rcm_channel *own_ch; /* rdma_create_id(NULL channel): ours to destroy */
	uint8_t req_ird, req_ord;   /* the peer's, from its CONNECT_REQUEST */
};

struct rcm_event {
	struct rdma_cm_event pub;
	struct iwcm_event *iw;
};

static struct rcm_id *rcm_id(struct rdma_cm_id *id)
{
	return (struct rcm_id *)id;
}

/* errno-style returns of librdmacm: 0, or -1 with errno. */
static int ret_errno(int r)
{
	if (r == 0)
		return 0;
	errno = r < 0 ? -r : r;
	return -1;
}

/* ---------------------------------------------------------------------- */
/* Options from the environment                                            */
/* ---------------------------------------------------------------------- */

static bool env_on(const char *v)
{
	return !strcasecmp(v, "on") || !strcmp(v, "1") || !strcasecmp(v, "yes") ||
	       !strcasecmp(v, "true");
}

/*
 * IWARP_MPA_REV 1|2; IWARP_CRC on|off; IWARP_MARKERS none|tx|rx|both (rx and
 * both: ask the peer to send Markers; none: refuse a peer that asks us for
 * them; tx: send them when asked, the default); IWARP_P2P
 * off|write|read|send|all (peer-to-peer with that RTR; all, the default with
 * revision 2).
 */
static void options_from_env(struct iwcm_options *o)
{
	const char *v;

	iwcm_options_default(o);
	/* librdmacm programs may connect before their peer listens (qperf -cm1
	 * tells the port first): retry a refused connect for a short while. */
	o->connect_retry_ms = 2000;
	if ((v = getenv("IWARP_CONNECT_RETRY_MS")) && *v)
		o->connect_retry_ms = (uint32_t)strtoul(v, NULL, 10);
	if ((v = getenv("IWARP_MPA_REV")) && *v)
		o->mpa_rev = (uint8_t)(strcmp(v, "1") == 0 ? 1 : 2);
	if ((v = getenv("IWARP_CRC")) && *v)
		o->crc = env_on(v);
	if ((v = getenv("IWARP_MARKERS")) && *v) {
		o->markers = !strcasecmp(v, "rx") || !strcasecmp(v, "both") || env_on(v);
		o->accept_markers = strcasecmp(v, "none") != 0 && strcasecmp(v, "off") != 0;
	}
	if ((v = getenv("IWARP_TRACE")) && *v)
		o->trace = env_on(v);
	/*
	 * Peer-to-peer by default (RFC 6581, MPA revision 2 only): ibverbs
	 * programs may let the passive side send first (ib_write_lat's server
	 * does), which plain MPA forbids until the initiator's first FPDU; the
	 * initiator's RTR lifts that, as Linux's Chelsio driver does by default.
	 * A responder simply follows what the initiator asks.
	 */
	o->p2p = o->mpa_rev == MPA_REV2;
	o->rtr = MPA_RTR_ALL;
	if ((v = getenv("IWARP_P2P")) && *v) {
		if (!strcasecmp(v, "off") || !strcasecmp(v, "none"))
			o->p2p = false;
		else if (!strcasecmp(v, "write"))
			o->rtr = MPA_RTR_WRITE;
		else if (!strcasecmp(v, "read"))
			o->rtr = MPA_RTR_READ;
		else if (!strcasecmp(v, "send"))
			o->rtr = MPA_RTR_SEND;
	}
	if (o->mpa_rev != MPA_REV2)
		o->p2p = false;
}

/* ---------------------------------------------------------------------- */
/* Event channels                                                          */
/* ---------------------------------------------------------------------- */

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct ibv_context *ctx = iwc_shared_context();
	struct rcm_channel *ch;

	if (!ctx)
		return NULL;
	ch = iwc_zalloc(sizeof(*ch));
	if (!ch)
		return NULL;
	ch->iw = iwcm_create_event_channel_ctx(iwc_ctx(ctx)->iwv);
	if (!ch->iw) {
		int e = errno;

		free(ch);
		errno = e;
		return NULL;
	}
	ch->pub.fd = ch->iw->fd;
	return &ch->pub;
}

static int channel_destroy_fn(void *p)
{
	return iwcm_destroy_event_channel(p);
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rcm_channel *ch = (struct rcm_channel *)channel;

	if (!ch)
		return;
	/* A program may still block in rdma_get_cm_event on it from another thread
	 * (rping's CM thread): the iwcm channel is then freed by that thread when
	 * it wakes, which then blocks for good (rdma_get_cm_event). */
	if (iwc_retry_busy(channel_destroy_fn, ch->iw) == 0)
		free(ch);
}

/* ---------------------------------------------------------------------- */
/* Ids                                                                     */
/* ---------------------------------------------------------------------- */

/* The addresses libiwarp knows, into the public route. */
static void sync_route(struct rcm_id *r)
{
	memcpy(&r->pub.route.addr.src_storage, &r->iw->route.addr.src_storage,
	       sizeof(r->pub.route.addr.src_storage));
	memcpy(&r->pub.route.addr.dst_storage, &r->iw->route.addr.dst_storage,
	       sizeof(r->pub.route.addr.dst_storage));
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	struct ibv_context *ctx;
	struct iwcm_options o;
	struct rcm_channel *ch = (struct rcm_channel *)channel;
	struct rcm_id *r;
	int rc;

	if (!id)
		return ret_errno(EINVAL);
	if (ps != RDMA_PS_TCP)
		return ret_errno(EOPNOTSUPP); /* iWARP: reliable connections over TCP only */
	ctx = iwc_shared_context();
	if (!ctx)
		return -1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return ret_errno(ENOMEM);
	if (!ch) {
		/* synchronous id (rdma_create_ep): a channel of its own */
		ch = (struct rcm_channel *)rdma_create_event_channel();
		if (!ch) {
			free(r);
			return -1;
		}
		r->own_ch = ch;
	}
	rc = iwcm_create_id(ch->iw, &r->iw, r, IWCM_PS_TCP);
	if (rc) {
		int e = errno;

		if (r->own_ch)
			rdma_destroy_event_channel(&r->own_ch->pub);
		free(r);
		return ret_errno(e ? e : rc);
	}
	options_from_env(&o);
	iwcm_set_options(r->iw, &o);
	r->pub.verbs = ctx;
	r->pub.channel = &ch->pub;
	r->pub.context = context;
	r->pub.ps = ps;
	r->pub.port_num = 1;
	r->pub.qp_type = IBV_QPT_RC;
	*id = &r->pub;
	return 0;
}

static int id_destroy_fn(void *p)
{
	return iwcm_destroy_id(p);
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rcm_id *r = rcm_id(id);
	int rc;

	if (!id)
		return ret_errno(EINVAL);
	/* As rdma-core: the QP is the program's to destroy (rdma_destroy_qp or
	 * ibv_destroy_qp, before or after this). */
	rc = iwc_retry_busy(id_destroy_fn, r->iw);
	if (rc)
		return ret_errno(rc);
	if (r->own_ch)
		rdma_destroy_event_channel(&r->own_ch->pub);
	free(r);
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	int rc;

	if (!id)
		return ret_errno(EINVAL);
	rc = iwcm_bind_addr(rcm_id(id)->iw, addr);
	if (rc == 0)
		sync_route(rcm_id(id));
	return rc ? -1 : 0;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms)
{
	int rc;

	if (!id)
		return ret_errno(EINVAL);
	rc = iwcm_resolve_addr(rcm_id(id)->iw, src_addr, dst_addr, timeout_ms);
	if (rc == 0)
		sync_route(rcm_id(id));
	return rc ? -1 : 0;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	if (!id)
		return ret_errno(EINVAL);
	return iwcm_resolve_route(rcm_id(id)->iw, timeout_ms) ? -1 : 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	int rc;

	if (!id)
		return ret_errno(EINVAL);
	rc = iwcm_listen(rcm_id(id)->iw, backlog);
	if (rc == 0)
		sync_route(rcm_id(id));
	return rc ? -1 : 0;
}

/* ---------------------------------------------------------------------- */
/* QPs                                                                     */
/* ---------------------------------------------------------------------- */

static pthread_mutex_t pd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_pd *shared_pd;
static struct ibv_context *shared_pd_ctx;

/* rdma_create_qp with no PD: one PD of the shared context, made once. */
static struct ibv_pd *default_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;

	pthread_mutex_lock(&pd_lock);
	if (shared_pd_ctx != ctx) {
		shared_pd = ibv_alloc_pd(ctx);
		shared_pd_ctx = shared_pd ? ctx : NULL;
	}
	pd = shared_pd;
	pthread_mutex_unlock(&pd_lock);
	return pd;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct rcm_id *r = rcm_id(id);
	struct ibv_qp *qp;
	int rc;

	if (!id || !attr)
		return ret_errno(EINVAL);
	if (!pd)
		pd = id->pd ? id->pd : default_pd(id->verbs);
	if (!pd)
		return -1;
	/* As rdma-core: the PD must be of the id's (the shared) context. */
	if (pd->context != id->verbs)
		return ret_errno(EINVAL);
	if (id->qp)
		return ret_errno(EINVAL);
	qp = ibv_create_qp(pd, attr);
	if (!qp)
		return -1;
	rc = iwcm_attach_qp(r->iw, iwc_qp(qp)->iwv);
	if (rc) {
		int e = errno;

		ibv_destroy_qp(qp);
		return ret_errno(e ? e : EINVAL);
	}
	id->qp = qp;
	id->pd = pd;
	id->send_cq = attr->send_cq;
	id->recv_cq = attr->recv_cq;
	id->send_cq_channel = attr->send_cq ? attr->send_cq->channel : NULL;
	id->recv_cq_channel = attr->recv_cq ? attr->recv_cq->channel : NULL;
	id->srq = attr->srq;
	return 0;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *qp_init_attr)
{
	struct ibv_qp_init_attr a;
	int rc;

	if (!id || !qp_init_attr)
		return ret_errno(EINVAL);
	/* Only what ibv_create_qp can do: a PD, and no extended features. */
	if (qp_init_attr->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD)
		return ret_errno(EOPNOTSUPP);
	memset(&a, 0, sizeof(a));
	a.qp_context = qp_init_attr->qp_context;
	a.send_cq = qp_init_attr->send_cq;
	a.recv_cq = qp_init_attr->recv_cq;
	a.srq = qp_init_attr->srq;
	a.cap = qp_init_attr->cap;
	a.qp_type = qp_init_attr->qp_type;
	a.sq_sig_all = qp_init_attr->sq_sig_all;
	rc = rdma_create_qp(
		id, (qp_init_attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? qp_init_attr->pd : NULL, &a);
	if (rc == 0)
		qp_init_attr->cap = a.cap;
	return rc;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct ibv_qp *qp;

	if (!id || !id->qp)
		return;
	qp = id->qp;
	id->qp = NULL;
	/* The CM lets go of the QP and destroys it; our wrapper goes after it.
	 * Off the context's list first, so that no other thread syncs its state
	 * (iwc_qp_sync_state) while it goes. */
	iwc_qp_listed(qp, false);
	iwcm_destroy_qp(rcm_id(id)->iw);
	if (rcm_id(id)->iw->qp) {
		/* refused (events not yet acknowledged): keep the id's view consistent */
		iwc_qp_listed(qp, true);
		id->qp = qp;
		return;
	}
	iwc_qp_release(qp);
}

/* A QP the program made itself and named by number: attach it now. */
static int attach_named_qp(struct rdma_cm_id *id, const struct rdma_conn_param *p)
{
	struct ibv_qp *qp;

	if (id->qp || !p || !p->qp_num)
		return 0;
	qp = iwc_qp_by_num(id->verbs, p->qp_num);
	if (!qp)
		return EINVAL;
	return iwcm_attach_qp(rcm_id(id)->iw, iwc_qp(qp)->iwv) ? (errno ? errno : EINVAL) : 0;
}

/* ---------------------------------------------------------------------- */
/* Connecting                                                              */
/* ---------------------------------------------------------------------- */

static void conn_param_in(struct iwcm_conn_param *o, const struct rdma_conn_param *p)
{
	memset(o, 0, sizeof(*o));
	if (!p)
		return;
	o->private_data = p->private_data;
	o->private_data_len = p->private_data_len;
	o->responder_resources = p->responder_resources;
	o->initiator_depth = p->initiator_depth;
	o->flow_control = p->flow_control;
	o->retry_count = p->retry_count;
	o->rnr_retry_count = p->rnr_retry_count;
	o->qp_num = p->qp_num;
}

/* The device maximum of reads and atomics in flight (ibv_query_device). */
static uint8_t device_rd_atom(struct ibv_context *ctx, bool init)
{
	struct ibv_device_attr a;

	if (ibv_query_device(ctx, &a) != 0)
		return 16;
	return (uint8_t)(init ? a.max_qp_init_rd_atom : a.max_qp_rd_atom);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct iwcm_conn_param p;
	int rc;

	if (!id)
		return ret_errno(EINVAL);
	rc = attach_named_qp(id, conn_param);
	if (rc)
		return ret_errno(rc);
	conn_param_in(&p, conn_param);
	/* 0xFF: the device maximum (librdmacm's RDMA_MAX_*), 0: the QP's default */
	if (p.responder_resources == RDMA_MAX_RESP_RES)
		p.responder_resources = device_rd_atom(id->verbs, false);
	if (p.initiator_depth == RDMA_MAX_INIT_DEPTH)
		p.initiator_depth = device_rd_atom(id->verbs, true);
	return iwcm_connect(rcm_id(id)->iw, &p) ? -1 : 0;
}

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rcm_id *r = rcm_id(id);
	struct iwcm_conn_param p;
	int rc;

	if (!id)
		return ret_errno(EINVAL);
	rc = attach_named_qp(id, conn_param);
	if (rc)
		return ret_errno(rc);
	conn_param_in(&p, conn_param);
	/* As rdma-core: no conn_param or 0xFF takes the peer's values, capped by the device. */
	if (!conn_param || p.responder_resources == RDMA_MAX_RESP_RES)
		p.responder_resources = min_u8(r->req_ord, device_rd_atom(id->verbs, false));
	if (!conn_param || p.initiator_depth == RDMA_MAX_INIT_DEPTH)
		p.initiator_depth = min_u8(r->req_ird, device_rd_atom(id->verbs, true));
	return iwcm_accept(r->iw, &p) ? -1 : 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	if (!id)
		return ret_errno(EINVAL);
	return iwcm_reject(rcm_id(id)->iw, private_data, private_data_len) ? -1 : 0;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	if (!id)
		return ret_errno(EINVAL);
	return iwcm_disconnect(rcm_id(id)->iw) ? -1 : 0;
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	return id ? 0 : ret_errno(EINVAL);
}

/* A QP the program made itself is moved by the CM (iWARP): only RTS remains to say. */
int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	if (!id || !qp_attr || !qp_attr_mask)
		return ret_errno(EINVAL);
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = IBV_QPS_RTS;
	*qp_attr_mask = IBV_QP_STATE;
	return 0;
}

int rdma_establish(struct rdma_cm_id *id)
{
	return id ? 0 : ret_errno(EINVAL);
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	return ret_errno(ENOSYS);
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	if (!id || (optlen && !optval))
		return ret_errno(EINVAL);
	/* TOS, address reuse, v6-only and the ACK timeout concern the TCP
	 * socket, which keeps the kernel's defaults; IB paths mean nothing here. */
	if (level == RDMA_OPTION_ID)
		return 0;
	return ret_errno(ENOSYS);
}

/* ---------------------------------------------------------------------- */
/* Events                                                                  */
/* ---------------------------------------------------------------------- */

/* A CONNECT_REQUEST's new iwcm_id: its own rcm_id, as the listener's child. */
static struct rcm_id *child_id(struct iwcm_event *e, struct rcm_id *listener)
{
	struct rcm_id *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->iw = e->id;
	r->pub.verbs = listener->pub.verbs;
	r->pub.channel = listener->pub.channel;
	r->pub.context = listener->pub.context;
	r->pub.ps = listener->pub.ps;
	r->pub.port_num = 1;
	r->pub.qp_type = IBV_QPT_RC;
	/* librdmacm's view of the peer: responder_resources = its ORD, initiator_depth its IRD */
	r->req_ord = e->param.conn.responder_resources;
	r->req_ird = e->param.conn.initiator_depth;
	e->id->context = r;
	sync_route(r);
	return r;
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct rcm_channel *ch = (struct rcm_channel *)channel;
	struct iwcm_event *e;
	struct rcm_event *ev;
	struct rcm_id *r;

	if (!ch || !event)
		return ret_errno(EINVAL);
	if (iwcm_get_cm_event(ch->iw, &e) != 0) {
		/*
		 * The channel was destroyed while this thread waited on it.  In
		 * librdmacm the thread stays blocked in the kernel until the
		 * process exits, and programs count on that: rping's CM thread is
		 * still waiting when main() destroys the id and the channel, frees
		 * the state that thread uses and returns.  Do the same.
		 */
		if (errno == EBADF)
			for (;;)
				pause();
		return -1;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		iwcm_ack_cm_event(e);
		return ret_errno(ENOMEM);
	}
	ev->iw = e;
	if (e->event == IWCM_EVENT_CONNECT_REQUEST) {
		struct rcm_id *l = e->listen_id ? e->listen_id->context : NULL;

		r = l ? child_id(e, l) : NULL;
		if (!r) {
			/* cannot represent it: refuse the peer, report nothing */
			iwcm_reject(e->id, NULL, 0);
			iwcm_ack_cm_event(e);
			free(ev);
			return ret_errno(ENOMEM);
		}
		ev->pub.listen_id = &l->pub;
	} else {
		r = e->id ? e->id->context : NULL;
	}
	ev->pub.id = r ? &r->pub : NULL;
	ev->pub.event = (enum rdma_cm_event_type)e->event;
	ev->pub.status = e->status;
	ev->pub.param.conn.private_data = e->param.conn.private_data;
	ev->pub.param.conn.private_data_len = e->param.conn.private_data_len;
	ev->pub.param.conn.responder_resources = e->param.conn.responder_resources;
	ev->pub.param.conn.initiator_depth = e->param.conn.initiator_depth;
	ev->pub.param.conn.flow_control = e->param.conn.flow_control;
	ev->pub.param.conn.retry_count = e->param.conn.retry_count;
	ev->pub.param.conn.rnr_retry_count = e->param.conn.rnr_retry_count;
	ev->pub.param.conn.srq = e->param.conn.srq;
	ev->pub.param.conn.qp_num = e->param.conn.qp_num;
	if (r) {
		sync_route(r);
		if (r->pub.qp &&
		    (e->event == IWCM_EVENT_ESTABLISHED || e->event == IWCM_EVENT_DISCONNECTED))
			iwc_qp_sync_state(r->pub.verbs, r->pub.qp);
		r->pub.event = &ev->pub;
	}
	*event = &ev->pub;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rcm_event *ev = (struct rcm_event *)event;
	int rc;

	if (!ev)
		return ret_errno(EINVAL);
	if (ev->pub.id && ev->pub.id->event == &ev->pub)
		ev->pub.id->event = NULL;
	rc = iwcm_ack_cm_event(ev->iw);
	free(ev);
	return rc ? -1 : 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const n[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED",	 "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED",	 "RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR",	 "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED",	 "RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED",	 "RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN",	 "RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE",	 "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned)event < sizeof(n) / sizeof(n[0]) ? n[event] : "UNKNOWN EVENT";
}

/* ---------------------------------------------------------------------- */
/* Ports, devices                                                          */
/* ---------------------------------------------------------------------- */

static __be16 port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	if (!id)
		return 0;
	sync_route(rcm_id(id));
	return port_of(&id->route.addr.src_addr);
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	if (!id)
		return 0;
	sync_route(rcm_id(id));
	return port_of(&id->route.addr.dst_addr);
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **l = calloc(2, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l[0] = iwc_shared_context();
	if (num_devices)
		*num_devices = l[0] ? 1 : 0;
	return l;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
