/* SPDX-License-Identifier: MIT */
/*
 * iwv_async.c - asynchronous events (iwv.h): iwv_get_async_event,
 * iwv_ack_async_event, iwv_event_type_str, and the context's event queue.
 *
 * Theory of operation.  Events are raised under the context lock where the
 * verbs layer notices them: a QP's move to ERR in iwv_qp.c (QP_FATAL when a
 * Terminate or an LLP failure caused it, LAST_WQE_REACHED for a QP on an SRQ,
 * whatever the cause, as ibv_get_async_event(3) describes), and an SRQ's limit
 * firing in the engine (SRQ_LIMIT_REACHED, iwv_srq.c).  Each object embeds
 * one node per kind of event it can have, and a node is queued at most once,
 * so the queue is bounded by the objects and nothing is dropped; an event of
 * the same kind raised again before the first was read stays one event.
 *
 * The context's async_fd is, like a completion channel's fd, an epoll set
 * over an eventfd signalled while the queue is not empty and, without an
 * engine thread, the engine fd and the timerfd (iwv_chan_fds_open): it is
 * readable whenever iwv_get_async_event() may have something to return, and
 * that call makes progress first, so a program that only waits for
 * asynchronous events still moves its connections.  A retrieved event counts
 * against its object until acknowledged; destroying a QP or an SRQ with
 * unacknowledged events returns EBUSY (ibverbs blocks instead), and events
 * still queued for it are dropped with it.
 */
#include <errno.h>
#include <fcntl.h>

#include "iw_bytes.h"
#include "iwv_obj.h"

void iwv_async_node_init(struct iwv_async_node *n, enum iwv_event_type type, void *element)
{
	iw_list_init(&n->link);
	n->ev.event_type = type;
	switch (type) {
	case IWV_EVENT_SRQ_ERR:
	case IWV_EVENT_SRQ_LIMIT_REACHED:
		n->ev.element.srq = element;
		break;
	case IWV_EVENT_CQ_ERR:
		n->ev.element.cq = element;
		break;
	default:
		n->ev.element.qp = element;
		break;
	}
}

void iwv_async_post(struct iwv_ctx *ctx, struct iwv_async_node *n)
{
	if (!iw_list_empty(&n->link))
		return; /* already queued: the same event */
	iw_list_add_tail(&ctx->async_q, &n->link);
	iwv_efd_signal(ctx->async_efd, true);
}

void iwv_async_cancel(struct iwv_ctx *ctx, struct iwv_async_node *n)
{
	if (iw_list_empty(&n->link))
		return;
	iw_list_del(&n->link);
	if (iw_list_empty(&ctx->async_q))
		iwv_efd_signal(ctx->async_efd, false);
}

/* The counter of retrieved, unacknowledged events of the event's object. */
static unsigned int *unacked_of(const struct iwv_async_event *ev)
{
	switch (ev->event_type) {
	case IWV_EVENT_QP_FATAL:
	case IWV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp ? &qp_of(ev->element.qp)->events_unacked : NULL;
	case IWV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq ? &srq_of(ev->element.srq)->events_unacked : NULL;
	default:
		return NULL; /* no other kind is ever raised */
	}
}

int iwv_get_async_event(struct iwv_context *context, struct iwv_async_event *event)
{
	struct iwv_ctx *ctx = ctx_of(context);
	bool nonblock;

	if (!ctx || !event) {
		errno = EINVAL;
		return -1;
	}
	nonblock = (fcntl(ctx->pub.async_fd, F_GETFL) & O_NONBLOCK) != 0;
	pthread_mutex_lock(&ctx->lock);
	for (;;) {
		iwv_ctx_progress_for(ctx, NULL);
		if (!iw_list_empty(&ctx->async_q)) {
			struct iw_list *l = ctx->async_q.next;
			struct iwv_async_node *n = iw_container_of(l, struct iwv_async_node, link);
			unsigned int *u = unacked_of(&n->ev);

			iw_list_del(l);
			if (iw_list_empty(&ctx->async_q))
				iwv_efd_signal(ctx->async_efd, false);
			if (u)
				(*u)++;
			*event = n->ev;
			pthread_mutex_unlock(&ctx->lock);
			return 0;
		}
		if (nonblock) {
			pthread_mutex_unlock(&ctx->lock);
			errno = EAGAIN;
			return -1;
		}
		/* A signal ends the wait, as it would a read() of the ibverbs async fd. */
		if (iwv_ctx_wait(ctx, UINT64_MAX, ctx->async_efd) < 0 && errno == EINTR) {
			pthread_mutex_unlock(&ctx->lock);
			errno = EINTR;
			return -1;
		}
	}
}

void iwv_ack_async_event(struct iwv_async_event *event)
{
	struct iwv_context *context = NULL;
	struct iwv_ctx *ctx;
	unsigned int *u;

	if (!event || !(u = unacked_of(event)))
		return;
	if (event->event_type == IWV_EVENT_SRQ_LIMIT_REACHED)
		context = event->element.srq->context;
	else
		context = event->element.qp->context;
	ctx = ctx_of(context);
	pthread_mutex_lock(&ctx->lock);
	if (*u > 0)
		(*u)--;
	pthread_mutex_unlock(&ctx->lock);
}

static const char *const event_names[] = {
	[IWV_EVENT_CQ_ERR] = "CQ error",
	[IWV_EVENT_QP_FATAL] = "local work queue catastrophic error",
	[IWV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
	[IWV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
	[IWV_EVENT_COMM_EST] = "communication established",
	[IWV_EVENT_SQ_DRAINED] = "send queue drained",
	[IWV_EVENT_PATH_MIG] = "path migrated",
	[IWV_EVENT_PATH_MIG_ERR] = "path migration request error",
	[IWV_EVENT_DEVICE_FATAL] = "local catastrophic error",
	[IWV_EVENT_PORT_ACTIVE] = "port active",
	[IWV_EVENT_PORT_ERR] = "port error",
	[IWV_EVENT_LID_CHANGE] = "LID change",
	[IWV_EVENT_PKEY_CHANGE] = "P_Key change",
	[IWV_EVENT_SM_CHANGE] = "SM change",
	[IWV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
	[IWV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
	[IWV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
	[IWV_EVENT_CLIENT_REREGISTER] = "client reregistration",
	[IWV_EVENT_GID_CHANGE] = "GID table change",
};

const char *iwv_event_type_str(enum iwv_event_type event)
{
	if ((unsigned)event < IW_ARRAY_SIZE(event_names) && event_names[event])
		return event_names[event];
	return "unknown";
}
