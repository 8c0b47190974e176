/* SPDX-License-Identifier: MIT */
/*
 * iwv_cq.c - completion channels and completion queues (iwv.h).
 *
 * Theory of operation.  A CQ is a ring of work completions.  QPs move their
 * completions in through iwv_cq_push() (iwv_qp.c) when there is room; when
 * there is none the CQ is marked full and the completions wait in the QPs'
 * stage rings, from where every poll refills the CQ (nothing is lost; an
 * ibverbs CQ would overrun).  An armed CQ (iwv_req_notify_cq) queues itself
 * once on its channel's event list when a completion enters it (solicited
 * only: a solicited or failed one) and signals the channel's eventfd; the
 * channel fd the program sees is an epoll set over that eventfd and, without
 * an engine thread, the engine fd and the context's timerfd
 * (iwv_chan_fds_open), so it is readable whenever iwv_get_cq_event() may
 * have something to return.  iwv_poll_cq() on an empty CQ, and
 * iwv_get_cq_event() always, make progress first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "iwv_obj.h"

/* ---------------------------------------------------------------------- */
/* Completion channels                                                      */
/* ---------------------------------------------------------------------- */

struct iwv_comp_channel *iwv_create_comp_channel(struct iwv_context *context)
{
	struct iwv_ctx *ctx = ctx_of(context);
	struct iwv_chan_int *ch = iwv_ctx_obj_new(ctx, sizeof(*ch));
	int r;

	if (!ch)
		return NULL;
	ch->pub.context = context;
	r = iwv_chan_fds_open(ctx, &ch->efd, &ch->pub.fd);
	if (r != IW_OK) {
		free(ch);
		errno = iwv_errno(r);
		return NULL;
	}
	pthread_mutex_lock(&ctx->lock);
	ctx->users++;
	pthread_mutex_unlock(&ctx->lock);
	return &ch->pub;
}

int iwv_destroy_comp_channel(struct iwv_comp_channel *pub)
{
	struct iwv_chan_int *ch = (struct iwv_chan_int *)pub;
	struct iwv_ctx *ctx;

	if (!ch)
		return EINVAL;
	ctx = ctx_of(ch->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (ch->pub.refcnt > 0) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	ctx->users--;
	pthread_mutex_unlock(&ctx->lock);
	close(ch->efd);
	close(ch->pub.fd);
	free(ch);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* CQs                                                                      */
/* ---------------------------------------------------------------------- */

/* `cq` was polled empty (or goes): no longer hidden (iwv_ctx.h, hidden_fd). */
static void cq_seen(struct iwv_ctx *ctx, struct iwv_cq_int *cq)
{
	if (!cq->hidden)
		return;
	cq->hidden = false;
	if (--ctx->hidden_n == 0)
		iwv_efd_signal(ctx->hidden_fd, false);
}

struct iwv_cq *iwv_create_cq(struct iwv_context *context, int cqe, void *cq_context,
			     struct iwv_comp_channel *channel, int comp_vector)
{
	struct iwv_ctx *ctx = ctx_of(context);
	struct iwv_cq_int *cq;

	if (!ctx || cqe < 1 || cqe > (1 << 16) || (channel && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq)
		cq->ring.e = calloc((size_t)cqe, sizeof(*cq->ring.e));
	if (!cq || !cq->ring.e) {
		if (cq)
			free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->ring.cap = (uint32_t)cqe;
	cq->pub.context = context;
	cq->pub.channel = channel;
	cq->pub.cq_context = cq_context;
	cq->pub.cqe = cqe;
	pthread_mutex_lock(&ctx->lock);
	cq->pub.handle = ctx->next_handle++;
	ctx->users++;
	if (channel)
		channel->refcnt++;
	pthread_mutex_unlock(&ctx->lock);
	return &cq->pub;
}

int iwv_destroy_cq(struct iwv_cq *pub)
{
	struct iwv_cq_int *cq = cq_of(pub);
	struct iwv_ctx *ctx;

	if (!cq)
		return EINVAL;
	ctx = ctx_of(cq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (cq->users > 0 || cq->events_unacked > 0 || cq->ev_queued) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	if (cq->pub.channel)
		cq->pub.channel->refcnt--;
	cq_seen(ctx, cq);
	ctx->users--;
	pthread_mutex_unlock(&ctx->lock);
	free(cq->ring.e);
	free(cq);
	return 0;
}

/* A completion entered `cq`: fire its notification if armed for it. */
static void cq_notify(struct iwv_cq_int *cq, const struct iwv_wc *wc)
{
	struct iwv_chan_int *ch = (struct iwv_chan_int *)cq->pub.channel;

	if (!cq->armed || !ch)
		return;
	if (cq->armed == 2 && !wc->solicited && wc->status == IWV_WC_SUCCESS)
		return;
	cq->armed = 0;
	if (cq->ev_queued)
		return;
	cq->ev_queued = true;
	cq->ev_next = NULL;
	if (ch->ev_tail)
		ch->ev_tail->ev_next = cq;
	else
		ch->ev_head = cq;
	ch->ev_tail = cq;
	iwv_efd_signal(ch->efd, true);
}

bool iwv_cq_push(struct iwv_cq_int *cq, const struct iwv_wc *wc)
{
	struct iwv_ctx *ctx;

	if (!wc_ring_push(&cq->ring, wc)) {
		cq->full = true;
		return false;
	}
	cq_notify(cq, wc);
	/* progress run for another call filled a CQ without a channel: make
	 * the channel fds readable (iwv_ctx.h, hidden_fd) */
	ctx = ctx_of(cq->pub.context);
	if (ctx->progress_api && ctx->progress_cq != cq && !cq->pub.channel && !cq->hidden &&
	    ctx->hidden_fd >= 0) {
		cq->hidden = true;
		if (ctx->hidden_n++ == 0)
			iwv_efd_signal(ctx->hidden_fd, true);
	}
	return true;
}

int iwv_req_notify_cq(struct iwv_cq *pub, int solicited_only)
{
	struct iwv_cq_int *cq = cq_of(pub);
	struct iwv_ctx *ctx;

	if (!cq || !cq->pub.channel)
		return EINVAL;
	ctx = ctx_of(cq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	cq->armed = solicited_only ? 2 : 1;
	iwv_ctx_not_spinning(ctx); /* the program is about to wait for the event */
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int iwv_get_cq_event(struct iwv_comp_channel *pub, struct iwv_cq **cq_out, void **cq_context)
{
	struct iwv_chan_int *ch = (struct iwv_chan_int *)pub;
	struct iwv_ctx *ctx;
	bool nonblock;

	if (!ch || !cq_out) {
		errno = EINVAL;
		return -1;
	}
	ctx = ctx_of(ch->pub.context);
	nonblock = (fcntl(ch->pub.fd, F_GETFL) & O_NONBLOCK) != 0;
	pthread_mutex_lock(&ctx->lock);
	for (;;) {
		struct iwv_cq_int *cq;

		iwv_ctx_progress_for(ctx, NULL);
		cq = ch->ev_head;
		if (cq) {
			ch->ev_head = cq->ev_next;
			if (!ch->ev_head) {
				ch->ev_tail = NULL;
				iwv_efd_signal(ch->efd, false);
			}
			cq->ev_queued = false;
			cq->events_unacked++;
			pthread_mutex_unlock(&ctx->lock);
			*cq_out = &cq->pub;
			if (cq_context)
				*cq_context = cq->pub.cq_context;
			return 0;
		}
		if (nonblock) {
			pthread_mutex_unlock(&ctx->lock);
			errno = EAGAIN;
			return -1;
		}
		/* A signal ends the wait, as it would a read() of an ibverbs channel. */
		if (iwv_ctx_wait(ctx, UINT64_MAX, ch->efd) < 0 && errno == EINTR) {
			pthread_mutex_unlock(&ctx->lock);
			errno = EINTR;
			return -1;
		}
	}
}

void iwv_ack_cq_events(struct iwv_cq *pub, unsigned int nevents)
{
	struct iwv_cq_int *cq = cq_of(pub);
	struct iwv_ctx *ctx;

	if (!cq)
		return;
	ctx = ctx_of(cq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	cq->events_unacked = nevents >= cq->events_unacked ? 0 : cq->events_unacked - nevents;
	pthread_mutex_unlock(&ctx->lock);
}

/* Refill a CQ that was full from the QPs feeding it. */
static void cq_refill(struct iwv_cq_int *cq)
{
	struct iwv_ctx *ctx = ctx_of(cq->pub.context);

	cq->full = false;
	for (struct iw_list *l = ctx->qps.next; l != &ctx->qps; l = l->next) {
		struct iwv_qp_int *qp = iw_container_of(l, struct iwv_qp_int, ctx_node);

		if (cq_of(qp->pub.send_cq) == cq || cq_of(qp->pub.recv_cq) == cq)
			iwv_qp_stage_flush(qp);
	}
}

int iwv_poll_cq(struct iwv_cq *pub, int num_entries, struct iwv_wc *wc)
{
	struct iwv_cq_int *cq = cq_of(pub);
	struct iwv_ctx *ctx;
	int n = 0;

	if (!cq || num_entries < 0 || (num_entries > 0 && !wc))
		return -EINVAL;
	ctx = ctx_of(cq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	iwv_ctx_poll_begin(ctx);
	/* A polling program makes progress itself, engine thread or not: waiting
	 * for the thread's wake-up would add it to every round trip. */
	if (cq->ring.count == 0)
		iwv_ctx_progress_for(ctx, cq);
	while (n < num_entries) {
		struct iwv_wc *e = wc_ring_front(&cq->ring);

		if (!e) {
			if (!cq->full)
				break;
			cq_refill(cq);
			if (!cq->ring.count)
				break;
			continue;
		}
		wc[n++] = *e;
		wc_ring_pop(&cq->ring);
	}
	if (cq->full)
		cq_refill(cq);
	if (cq->ring.count == 0)
		cq_seen(ctx, cq);
	if (num_entries > 0)
		iwv_ctx_poll_end(ctx, n == 0);
	pthread_mutex_unlock(&ctx->lock);
	return n;
}
