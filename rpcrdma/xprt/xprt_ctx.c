/* SPDX-License-Identifier: MIT */
/*
 * xprt_ctx.c - the event loop of the RPC-over-RDMA transport.
 *
 * Theory of operation.  A ctx owns one verbs context and PD, one CM event
 * channel, one completion channel (every connection's CQ is on it) and one
 * timerfd, all in one epoll set whose fd is rpcrdma_ctx_fd.  There is no
 * thread: rpcrdma_ctx_process() waits on the epoll fd (bounded by the next
 * timer), then drains the CM channel (connection events, RFC 8797 private
 * data), drains the completion channel (acknowledge, re-arm), polls every
 * connection's CQ until it is empty (arm, poll again to close the race the
 * verbs documentation describes) and runs due timers.  Every user callback
 * runs from there.  The channel fds also wake for stack work (inline
 * progress), so a readable ctx fd may produce nothing.
 *
 * Timers (call timeouts, RPRC exposures, reconnect delays) are one-shot
 * iw_timers (common/iw_timer.h) in ms of CLOCK_MONOTONIC; the timerfd is set
 * to the earliest so that a caller that sleeps in its own poll() on
 * rpcrdma_ctx_fd wakes in time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "xprt_int.h"

/* Poll-and-drain rounds of one rpcrdma_ctx_process call. */
#define XPROCESS_ROUNDS 16

uint64_t xnow_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Arm `t` (iw_timer_init'ed) to fire `ms` from now; iw_timer_cancel disarms. */
void xtimer_arm(struct rpcrdma_ctx *ctx, struct iw_timer *t, uint32_t ms)
{
	iw_timer_arm(&ctx->timers, t, xnow_ms() + ms);
}

static void xlog_line(struct rpcrdma_ctx *ctx, const char *line)
{
	if (ctx->cfg.log)
		ctx->cfg.log(ctx->cfg.log_arg, line);
	else if (getenv("IWARP_RPCRDMA_LOG"))
		fprintf(stderr, "rpcrdma: %s\n", line);
}

void xlog(struct rpcrdma_ctx *ctx, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!ctx->cfg.log && !getenv("IWARP_RPCRDMA_LOG"))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	xlog_line(ctx, line);
}

void xconn_log(struct rpcrdma_conn *c, const char *fmt, ...)
{
	char line[320], msg[200];
	va_list ap;

	if (!c->ctx->cfg.log && !getenv("IWARP_RPCRDMA_LOG"))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	{
		char host[INET6_ADDRSTRLEN] = "?";
		unsigned port = 0;

		if (c->peer.ss_family == AF_INET) {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&c->peer;

			inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
			port = ntohs(s4->sin_port);
		} else if (c->peer.ss_family == AF_INET6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&c->peer;

			inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
			port = ntohs(s6->sin6_port);
		}
		snprintf(line, sizeof(line), "%s %s port %u: %s", c->client ? "to" : "from", host,
			 port, msg);
	}
	xlog_line(c->ctx, line);
}

void rpcrdma_config_init(struct rpcrdma_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->inline_recv = RPCRDMA_INLINE_DEFAULT;
	cfg->inline_send = RPCRDMA_INLINE_DEFAULT;
	cfg->credits = 32;
	cfg->bc_credits = 0;
	cfg->rprc_timeout_ms = 30000;
	cfg->max_msg = 4u * 1024 * 1024 + 64 * 1024;
	cfg->default_reply_max = 64 * 1024;
	cfg->reconnects = 5;
	cfg->reconnect_ms = 500;
	cfg->connect_timeout_ms = 5000;
}

static uint32_t xclamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int xepoll_add(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

struct rpcrdma_ctx *rpcrdma_ctx_create(const struct rpcrdma_config *cfg)
{
	struct rpcrdma_ctx *ctx = calloc(1, sizeof(*ctx));
	int saved;

	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	if (cfg)
		ctx->cfg = *cfg;
	else
		rpcrdma_config_init(&ctx->cfg);
	ctx->cfg.inline_recv = xclamp(ctx->cfg.inline_recv, RPCRDMA_INLINE_MIN, 262144);
	ctx->cfg.inline_send = xclamp(ctx->cfg.inline_send, RPCRDMA_INLINE_MIN, 262144);
	ctx->cfg.credits = (uint16_t)xclamp(ctx->cfg.credits, 1, 1024);
	if (ctx->cfg.bc_credits > 1024)
		ctx->cfg.bc_credits = 1024;
	if (ctx->cfg.max_msg < 4096)
		ctx->cfg.max_msg = 4096;
	if (!ctx->cfg.default_reply_max)
		ctx->cfg.default_reply_max = 64 * 1024;
	if (ctx->cfg.default_reply_max > ctx->cfg.max_msg)
		ctx->cfg.default_reply_max = ctx->cfg.max_msg;
	iw_list_init(&ctx->conns);
	iw_list_init(&ctx->listeners);
	iw_timers_init(&ctx->timers);
	iw_list_init(&ctx->zombie_cqs);
	ctx->tfd = ctx->epfd = -1;

	/* the verbs context as the caller configured it (engine, thread, ...) */
	ctx->vctx = iwv_open_context(ctx->cfg.verbs);
	ctx->cfg.verbs = NULL; /* the caller's pointer is not kept */
	if (!ctx->vctx)
		goto fail;
	ctx->pd = iwv_alloc_pd(ctx->vctx);
	if (!ctx->pd)
		goto fail;
	ctx->ch = iwcm_create_event_channel_ctx(ctx->vctx);
	if (!ctx->ch)
		goto fail;
	ctx->cc = iwv_create_comp_channel(ctx->vctx);
	if (!ctx->cc)
		goto fail;
	ctx->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ctx->tfd < 0)
		goto fail;
	ctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->epfd < 0)
		goto fail;
	if (xepoll_add(ctx->epfd, ctx->ch->fd) || xepoll_add(ctx->epfd, ctx->cc->fd) ||
	    xepoll_add(ctx->epfd, ctx->tfd))
		goto fail;
	return ctx;
fail:
	saved = errno ? errno : ENOMEM;
	if (ctx->epfd >= 0)
		close(ctx->epfd);
	if (ctx->tfd >= 0)
		close(ctx->tfd);
	if (ctx->cc)
		iwv_destroy_comp_channel(ctx->cc);
	if (ctx->ch)
		iwcm_destroy_event_channel(ctx->ch);
	if (ctx->pd)
		iwv_dealloc_pd(ctx->pd);
	if (ctx->vctx)
		iwv_close_device(ctx->vctx);
	free(ctx);
	errno = saved;
	return NULL;
}

void rpcrdma_ctx_destroy(struct rpcrdma_ctx *ctx)
{
	if (!ctx)
		return;
	ctx->destroying = true;
	xconn_destroy_all(ctx);
	while (!iw_list_empty(&ctx->listeners))
		rpcrdma_listener_close(
			iw_container_of(ctx->listeners.next, struct rpcrdma_listener, node));
	close(ctx->epfd);
	close(ctx->tfd);
	iwv_destroy_comp_channel(ctx->cc);
	iwcm_destroy_event_channel(ctx->ch);
	iwv_dealloc_pd(ctx->pd);
	iwv_close_device(ctx->vctx);
	free(ctx);
}

int rpcrdma_ctx_fd(const struct rpcrdma_ctx *ctx)
{
	return ctx->epfd;
}

static int64_t xnext_due(const struct rpcrdma_ctx *ctx)
{
	uint64_t next = iw_timers_next(&ctx->timers);
	int64_t best = next == IW_TIMER_NONE ? -1 : (int64_t)next;

	if (ctx->more)
		return (int64_t)xnow_ms();
	if (!iw_list_empty(&ctx->zombie_cqs)) {
		int64_t soon = (int64_t)xnow_ms() + 10;

		if (best < 0 || soon < best)
			best = soon;
	}
	return best;
}

int rpcrdma_ctx_timeout_ms(const struct rpcrdma_ctx *ctx)
{
	int64_t due = xnext_due(ctx), now = (int64_t)xnow_ms();

	if (due < 0)
		return -1;
	if (due <= now)
		return 0;
	return due - now > 0x7fffffff ? 0x7fffffff : (int)(due - now);
}

static void xtimerfd_update(struct rpcrdma_ctx *ctx)
{
	struct itimerspec its;
	int64_t due = xnext_due(ctx);
	uint64_t buf;

	while (read(ctx->tfd, &buf, sizeof(buf)) > 0)
		;
	memset(&its, 0, sizeof(its));
	if (due >= 0) {
		/* absolute would need the same clock base; relative is close enough */
		int64_t rel = due - (int64_t)xnow_ms();

		if (rel < 1)
			rel = 1;
		its.it_value.tv_sec = rel / 1000;
		its.it_value.tv_nsec = (rel % 1000) * 1000000;
	}
	timerfd_settime(ctx->tfd, 0, &its, NULL);
}

/* Fire the due timers; the clock is read again after each batch, so a timer
 * that a callback armed for "now" fires in this pass too. */
static void xrun_timers(struct rpcrdma_ctx *ctx)
{
	while (iw_timers_run(&ctx->timers, xnow_ms()))
		;
}

/* Destroy the CQs of gone conns that can go now (no CQ event held back). */
void xzombies_reap(struct rpcrdma_ctx *ctx)
{
	struct iw_list *n = ctx->zombie_cqs.next;

	while (n != &ctx->zombie_cqs) {
		struct xcqh *h = iw_container_of(n, struct xcqh, node);

		n = n->next;
		if (iwv_destroy_cq(h->cq) == 0) {
			iw_list_del(&h->node);
			free(h);
		}
	}
}

/* Handle CM events and consume CQ events; returns how many events.  Both get
 * calls also progress the stack, so a consumed CQ event may stand for
 * completions that arrived during this very call: the caller must poll the
 * CQs after any drain that consumed one (else they wait unseen while the ctx
 * fd reads idle). */
static int xdrain_channels(struct rpcrdma_ctx *ctx)
{
	struct iwcm_event *ev;
	struct iwv_cq *cq;
	void *cqctx;
	int n = 0;

	while (iwcm_get_cm_event(ctx->ch, &ev) == 0) {
		xconn_handle_cm(ctx, ev); /* acknowledges */
		n++;
	}
	while (iwv_get_cq_event(ctx->cc, &cq, &cqctx) == 0) {
		struct xcqh *h = cqctx;

		iwv_ack_cq_events(cq, 1);
		if (h && h->conn)
			iwv_req_notify_cq(cq, 0);
		n++;
	}
	return n;
}

int rpcrdma_ctx_process(struct rpcrdma_ctx *ctx, int timeout_ms)
{
	struct epoll_event evs[4];
	int64_t due = xnext_due(ctx);
	int n;

	ctx->ncb = 0;
	ctx->more = false;
	if (due >= 0) {
		int64_t rel = due - (int64_t)xnow_ms();

		if (rel < 0)
			rel = 0;
		if (timeout_ms < 0 || rel < timeout_ms)
			timeout_ms = (int)(rel > 0x7fffffff ? 0x7fffffff : rel);
	}
	n = epoll_wait(ctx->epfd, evs, 4, timeout_ms);
	if (n < 0 && errno != EINTR)
		return iw_err_sys(errno);
	xdrain_channels(ctx);
	for (int round = 0;; round++) {
		for (struct iw_list *l = ctx->conns.next; l != &ctx->conns; l = l->next)
			xcq_poll(iw_container_of(l, struct rpcrdma_conn, node));
		if (round == 0)
			xrun_timers(ctx);
		if (!xdrain_channels(ctx))
			break;
		if (round == XPROCESS_ROUNDS) {
			/* Still busy: come back at once rather than starve the
			 * caller's other fds (xtimerfd_update makes the fd readable). */
			ctx->more = true;
			break;
		}
	}
	xconn_reap(ctx);
	xzombies_reap(ctx);
	xtimerfd_update(ctx);
	return ctx->ncb;
}
