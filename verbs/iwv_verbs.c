/* SPDX-License-Identifier: MIT */
/*
 * iwv_verbs.c - the verbs objects: context, PD, MR, CQ, completion channel,
 * QP, post and poll (iwv.h).
 *
 * Theory of operation.  A verbs QP wraps one sans-I/O rdmap_qp (rdmap_qp.h),
 * created IDLE so receives and sends can be posted before the connection
 * manager (iwcm.c) has finished MPA; the CM then sets the link parameters and
 * starts it.  Every send WR is posted to the rdmap_qp signalled, under an
 * internal slot number, so the verbs layer sees every end of every WR: it
 * knows when an inline buffer is free again, and it reports unsignalled
 * successes to nobody while errors always produce a completion (as ibverbs).
 *
 * Completions travel rdmap_qp -> per-QP stage ring -> CQ ring.  A WR stays
 * counted against the queue depth until its completion leaves the stage, so
 * the stages can never overflow however slowly the CQ is polled; a full CQ
 * only holds completions back (nothing is lost, no overflow error).
 *
 * All objects of a context share its mutex.  Progress (the engine moving
 * octets, iwcm.c's callbacks feeding the QPs) runs under it, either inline in
 * iwv_poll_cq / iwv_get_cq_event / post calls, or in the engine thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/ddp.h>

#include "iw_alloc.h"
#include "iw_bytes.h"
#include "iwv_int.h"

/* ---------------------------------------------------------------------- */
/* Errors: the one place where iw_err becomes errno / WC status            */
/* ---------------------------------------------------------------------- */

const char *iwv_errname(int iw_err)
{
	return rdmap_errname(iw_err);
}

const char *iwv_strerror(int iw_err)
{
	return rdmap_strerror(iw_err);
}

int iwv_errno(int err)
{
	if (iw_err_errno(err))
		return iw_err_errno(err);
	switch (err) {
	case IW_OK:
		return 0;
	case IW_ENOMEM:
		return ENOMEM;
	case IW_EINVAL:
	case IW_ERANGE:
		return EINVAL;
	case IW_EAGAIN:
		return EAGAIN;
	case IW_ENOSPC:
		return ENOMEM;
	case IW_ESTATE:
		return EINVAL;
	case IW_ETIMEDOUT:
	case IW_EMPA_TIMEOUT:
		return ETIMEDOUT;
	case IW_ENOTSUP:
		return EOPNOTSUPP;
	case IW_EMPA_REJECTED:
		return ECONNREFUSED;
	case IW_EMPA_CLOSED:
		return ECONNRESET;
	case IW_EDDP_STAG_TABLE_FULL:
		return ENOMEM;
	default:
		return EPROTO;
	}
}

static enum iwv_wc_status wc_status(enum rdmap_wc_status s)
{
	switch (s) {
	case RDMAP_WC_SUCCESS:
		return IWV_WC_SUCCESS;
	case RDMAP_WC_LOC_LEN_ERR:
		return IWV_WC_LOC_LEN_ERR;
	case RDMAP_WC_LOC_PROT_ERR:
		return IWV_WC_LOC_PROT_ERR;
	case RDMAP_WC_WR_FLUSH_ERR:
		return IWV_WC_WR_FLUSH_ERR;
	case RDMAP_WC_REM_ACCESS_ERR:
		return IWV_WC_REM_ACCESS_ERR;
	case RDMAP_WC_REM_OP_ERR:
		return IWV_WC_REM_OP_ERR;
	case RDMAP_WC_REM_INV_REQ_ERR:
		return IWV_WC_REM_INV_REQ_ERR;
	case RDMAP_WC_GENERAL_ERR:
	default:
		return IWV_WC_GENERAL_ERR;
	}
}

static const char *const wc_status_names[] = {
	[IWV_WC_SUCCESS] = "success",
	[IWV_WC_LOC_LEN_ERR] = "local length error",
	[IWV_WC_LOC_QP_OP_ERR] = "local QP operation error",
	[IWV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	[IWV_WC_LOC_PROT_ERR] = "local protection error",
	[IWV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
	[IWV_WC_MW_BIND_ERR] = "memory management operation error",
	[IWV_WC_BAD_RESP_ERR] = "bad response error",
	[IWV_WC_LOC_ACCESS_ERR] = "local access error",
	[IWV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	[IWV_WC_REM_ACCESS_ERR] = "remote access error",
	[IWV_WC_REM_OP_ERR] = "remote operation error",
	[IWV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[IWV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	[IWV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	[IWV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	[IWV_WC_REM_ABORT_ERR] = "aborted error",
	[IWV_WC_INV_EECN_ERR] = "invalid EE context number",
	[IWV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	[IWV_WC_FATAL_ERR] = "fatal error",
	[IWV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	[IWV_WC_GENERAL_ERR] = "general error",
};

const char *iwv_wc_status_str(enum iwv_wc_status status)
{
	if ((unsigned)status < IW_ARRAY_SIZE(wc_status_names) && wc_status_names[status])
		return wc_status_names[status];
	return "unknown";
}

/* ---------------------------------------------------------------------- */
/* Context                                                                  */
/* ---------------------------------------------------------------------- */

struct iwv_device {
	const char *name;
};

static struct iwv_device the_device = {.name = "iwarp0"};

struct iwv_device **iwv_get_device_list(int *num_devices)
{
	struct iwv_device **l = calloc(2, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l[0] = &the_device;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void iwv_free_device_list(struct iwv_device **list)
{
	free(list);
}

const char *iwv_get_device_name(struct iwv_device *device)
{
	return device ? device->name : NULL;
}

uint64_t iwv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void iwv_context_attr_default(struct iwv_context_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->engine = IWV_ENGINE_DEFAULT;
	attr->engine_thread = -1;
	attr->max_mr = 65536;
	attr->rx_buf_size = 256 * 1024;
}

static void *engine_thread_main(void *arg);

static void ctx_free(struct iwv_ctx *ctx)
{
	if (ctx->eng)
		iwv_engine_destroy(ctx->eng);
	if (ctx->stags)
		ddp_stag_table_destroy(ctx->stags);
	if (ctx->wake_fd >= 0)
		close(ctx->wake_fd);
	if (ctx->timer_fd >= 0)
		close(ctx->timer_fd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

struct iwv_context *iwv_open_context(const struct iwv_context_attr *attr_in)
{
	struct iwv_context_attr attr;
	struct iwv_ctx *ctx;
	uint64_t seed = 0;
	int r;

	if (attr_in)
		attr = *attr_in;
	else
		iwv_context_attr_default(&attr);
	if (attr.max_mr == 0)
		attr.max_mr = 65536;
	if (attr.rx_buf_size == 0)
		attr.rx_buf_size = 256 * 1024;
	if (attr.max_mr > DDP_STAG_INDEX_MAX || attr.rx_buf_size < 4096 ||
	    attr.rx_buf_size > (64u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr.engine_thread < 0) {
		const char *e = getenv("IWARP_ENGINE_THREAD");

		attr.engine_thread = e && *e && strcmp(e, "0") != 0;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->pub.device = &the_device;
	ctx->pub.async_fd = -1;
	ctx->pub.num_comp_vectors = 1;
	ctx->attr = attr;
	ctx->wake_fd = -1;
	ctx->timer_fd = -1;
	ctx->next_handle = 1;
	ctx->next_timer = UINT64_MAX;
	pthread_mutex_init(&ctx->lock, NULL);
	r = iwv_engine_create(attr.engine, &ctx->eng);
	if (r != IW_OK) {
		ctx->eng = NULL;
		ctx_free(ctx);
		errno = r == IW_ENOTSUP ? EOPNOTSUPP : iwv_errno(r);
		return NULL;
	}
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = iwv_now_ns() ^ (uint64_t)(uintptr_t)ctx;
	ctx->stags = ddp_stag_table_create(attr.max_mr, seed);
	ctx->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ctx->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!ctx->stags || ctx->wake_fd < 0 || ctx->timer_fd < 0) {
		ctx_free(ctx);
		errno = ENOMEM;
		return NULL;
	}
	if (attr.engine_thread) {
		ctx->thread_on = true;
		if (pthread_create(&ctx->thread, NULL, engine_thread_main, ctx) != 0) {
			ctx->thread_on = false;
			ctx_free(ctx);
			errno = EAGAIN;
			return NULL;
		}
	}
	return &ctx->pub;
}

struct iwv_context *iwv_open_device(struct iwv_device *device)
{
	if (device && device != &the_device) {
		errno = ENODEV;
		return NULL;
	}
	return iwv_open_context(NULL);
}

static void ctx_stop_thread(struct iwv_ctx *ctx)
{
	uint64_t one = 1;

	if (!ctx->thread_on)
		return;
	pthread_mutex_lock(&ctx->lock);
	ctx->thread_stop = true;
	pthread_mutex_unlock(&ctx->lock);
	if (write(ctx->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow from these few writes */
	}
	pthread_join(ctx->thread, NULL);
	ctx->thread_on = false;
}

int iwv_close_device(struct iwv_context *context)
{
	struct iwv_ctx *ctx = ctx_of(context);

	if (!ctx)
		return EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->users > 0 || ctx->ids || ctx->is_default) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	/* Connections being closed may still have engine operations in flight. */
	for (int i = 0; ctx->dead && i < 1000; i++) {
		iwv_ctx_progress(ctx);
		iwcm_sweep(ctx);
		if (ctx->dead)
			iwv_ctx_wait(ctx, iwv_now_ns() + 10000000u, -1);
	}
	pthread_mutex_unlock(&ctx->lock);
	ctx_stop_thread(ctx);
	ctx_free(ctx);
	return 0;
}

const char *iwv_context_engine_name(struct iwv_context *context)
{
	return context ? iwv_engine_name(ctx_of(context)->eng) : NULL;
}

int iwv_query_device(struct iwv_context *context, struct iwv_device_attr *attr)
{
	if (!context || !attr)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "iwarp 0.1 (%s)",
		 iwv_context_engine_name(context));
	attr->max_mr_size = UINT64_MAX;
	attr->vendor_id = 0;
	attr->vendor_part_id = 0;
	attr->max_qp = 1 << 16;
	attr->max_qp_wr = IWV_MAX_QP_WR;
	attr->max_sge = IWV_MAX_SGE;
	attr->max_cq = 1 << 16;
	attr->max_cqe = 1 << 16;
	attr->max_mr = (int)ctx_of(context)->attr.max_mr;
	attr->max_pd = 1 << 16;
	attr->max_qp_rd_atom = IWV_QP_IRD_CAP;
	attr->max_qp_init_rd_atom = IWV_QP_ORD_CAP;
	attr->max_inline_data = IWV_MAX_INLINE;
	return 0;
}

/* The context behind iwcm_create_event_channel(): one per process, kept for its lifetime. */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct iwv_ctx *default_ctx;

struct iwv_ctx *iwv_default_ctx_get(void)
{
	struct iwv_ctx *ctx;

	pthread_mutex_lock(&default_lock);
	if (!default_ctx) {
		struct iwv_context *c = iwv_open_context(NULL);

		if (c) {
			default_ctx = ctx_of(c);
			default_ctx->is_default = true;
		}
	}
	ctx = default_ctx;
	pthread_mutex_unlock(&default_lock);
	return ctx;
}

/* ---------------------------------------------------------------------- */
/* Progress and waiting                                                     */
/* ---------------------------------------------------------------------- */

/*
 * The CM's timers (first-FPDU pause, MPA and close timeouts) must fire even
 * when the program only sleeps in poll() on a channel fd: the timerfd sits in
 * every channel's epoll set and is armed to the nearest timer.
 */
void iwv_ctx_arm_timer(struct iwv_ctx *ctx)
{
	struct itimerspec its;
	uint64_t junk;

	memset(&its, 0, sizeof(its));
	if (ctx->next_timer != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(ctx->next_timer / 1000000000u);
		its.it_value.tv_nsec = (long)(ctx->next_timer % 1000000000u);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1; /* all zero would disarm */
	}
	/* clear an expiry already counted, then (re)arm or disarm */
	if (read(ctx->timer_fd, &junk, sizeof(junk)) < 0) {
		/* EAGAIN: it had not expired */
	}
	timerfd_settime(ctx->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

int iwv_ctx_progress(struct iwv_ctx *ctx)
{
	int n = iwv_engine_progress(ctx->eng);

	iwcm_handle_timers(ctx, 0);
	return n;
}

/* poll() timeout in ms until the absolute `deadline_ns` (-1: none), rounded up. */
static int poll_timeout(uint64_t deadline_ns)
{
	uint64_t now;

	if (deadline_ns == UINT64_MAX)
		return -1;
	now = iwv_now_ns();
	if (deadline_ns <= now)
		return 0;
	return (int)IW_MIN((deadline_ns - now + 999999) / 1000000, (uint64_t)60000);
}

int iwv_ctx_wait(struct iwv_ctx *ctx, uint64_t deadline_ns, int extra_fd)
{
	struct pollfd pfd[2];
	int n = 0, timeout, r = 0, e;

	timeout = poll_timeout(IW_MIN(deadline_ns, iwcm_next_timer(ctx)));
	if (!ctx->thread_on) {
		pfd[n].fd = iwv_engine_fd(ctx->eng);
		pfd[n++].events = POLLIN;
	}
	if (extra_fd >= 0) {
		pfd[n].fd = extra_fd;
		pfd[n++].events = POLLIN;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (n > 0 || timeout >= 0)
		r = poll(pfd, (nfds_t)n, timeout);
	e = errno;
	pthread_mutex_lock(&ctx->lock);
	errno = e;
	return r < 0 ? -1 : 0;
}

static void *engine_thread_main(void *arg)
{
	struct iwv_ctx *ctx = arg;
	struct pollfd pfd[2];

	pthread_mutex_lock(&ctx->lock);
	while (!ctx->thread_stop) {
		int timeout = poll_timeout(iwcm_next_timer(ctx));
		uint64_t junk;

		pfd[0].fd = iwv_engine_fd(ctx->eng);
		pfd[0].events = POLLIN;
		pfd[1].fd = ctx->wake_fd;
		pfd[1].events = POLLIN;
		pthread_mutex_unlock(&ctx->lock);
		poll(pfd, 2, timeout);
		if (pfd[1].revents & POLLIN) {
			if (read(ctx->wake_fd, &junk, sizeof(junk)) < 0) {
				/* EAGAIN: another read took it */
			}
		}
		pthread_mutex_lock(&ctx->lock);
		iwv_ctx_progress(ctx);
	}
	pthread_mutex_unlock(&ctx->lock);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* PD and MR                                                                */
/* ---------------------------------------------------------------------- */

struct iwv_pd_int {
	struct iwv_pd pub;
	int users;
};

struct iwv_pd *iwv_alloc_pd(struct iwv_context *context)
{
	struct iwv_ctx *ctx = ctx_of(context);
	struct iwv_pd_int *pd;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&ctx->lock);
	pd->pub.context = context;
	pd->pub.handle = ctx->next_handle++;
	ctx->users++;
	pthread_mutex_unlock(&ctx->lock);
	return &pd->pub;
}

int iwv_dealloc_pd(struct iwv_pd *pub)
{
	struct iwv_pd_int *pd = (struct iwv_pd_int *)pub;
	struct iwv_ctx *ctx;

	if (!pd)
		return EINVAL;
	ctx = ctx_of(pd->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (pd->users > 0) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	ctx->users--;
	pthread_mutex_unlock(&ctx->lock);
	free(pd);
	return 0;
}

static void pd_use(struct iwv_pd *pd, int d)
{
	((struct iwv_pd_int *)pd)->users += d;
}

struct iwv_mr *iwv_reg_mr(struct iwv_pd *pd, void *addr, size_t length, int access)
{
	const int known = IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE |
			  IWV_ACCESS_REMOTE_READ | IWV_ACCESS_REMOTE_ATOMIC | IWV_ACCESS_MW_BIND;
	struct iwv_ctx *ctx;
	struct iwv_mr *mr;
	uint32_t da = 0, stag;
	int r;

	if (!pd || (!addr && length) || (access & ~known)) {
		errno = EINVAL;
		return NULL;
	}
	if (access & (IWV_ACCESS_REMOTE_ATOMIC | IWV_ACCESS_MW_BIND)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* ibverbs: remote write needs local write. */
	if ((access & IWV_ACCESS_REMOTE_WRITE) && !(access & IWV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	if (access & IWV_ACCESS_LOCAL_WRITE)
		da |= DDP_ACCESS_LOCAL_WRITE;
	if (access & IWV_ACCESS_REMOTE_WRITE)
		da |= DDP_ACCESS_REMOTE_WRITE;
	if (access & IWV_ACCESS_REMOTE_READ)
		da |= DDP_ACCESS_REMOTE_READ;
	/* iWARP: a peer's Send with Invalidate may invalidate any STag it was
	 * given (RFC 5040 §6.10.2 checks PD and that the STag is remote). */
	if (access & (IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ))
		da |= DDP_ACCESS_REMOTE_INVALIDATE;
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = ctx_of(pd->context);
	pthread_mutex_lock(&ctx->lock);
	r = ddp_stag_reg(ctx->stags, pd->handle, addr, (uint64_t)(uintptr_t)addr, length, da,
			 &stag);
	if (r == IW_OK)
		pd_use(pd, 1);
	pthread_mutex_unlock(&ctx->lock);
	if (r != IW_OK) {
		free(mr);
		errno = iwv_errno(r);
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->handle = stag;
	mr->lkey = stag;
	mr->rkey = stag;
	return mr;
}

int iwv_dereg_mr(struct iwv_mr *mr)
{
	struct iwv_ctx *ctx;
	int r;

	if (!mr)
		return EINVAL;
	ctx = ctx_of(mr->context);
	pthread_mutex_lock(&ctx->lock);
	r = ddp_stag_dereg(ctx->stags, mr->handle);
	if (r == IW_OK)
		pd_use(mr->pd, -1);
	pthread_mutex_unlock(&ctx->lock);
	if (r != IW_OK)
		return EINVAL;
	free(mr);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Completion channels and CQs                                              */
/* ---------------------------------------------------------------------- */

/*
 * The fds of a channel (completion or CM): an eventfd signalled while events
 * are queued, inside an epoll set that is the channel's public fd.  Without
 * an engine thread the set also holds the engine fd and the context's timerfd:
 * the program's poll() then wakes for the work that the channel's
 * get-event call turns into events.  IW_OK, or -errno.
 */
int iwv_chan_fds_open(struct iwv_ctx *ctx, int *efd, int *epfd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int e;

	*efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*epfd = epoll_create1(EPOLL_CLOEXEC);
	if (*efd >= 0 && *epfd >= 0 && epoll_ctl(*epfd, EPOLL_CTL_ADD, *efd, &ev) == 0 &&
	    (ctx->thread_on ||
	     (epoll_ctl(*epfd, EPOLL_CTL_ADD, iwv_engine_fd(ctx->eng), &ev) == 0 &&
	      epoll_ctl(*epfd, EPOLL_CTL_ADD, ctx->timer_fd, &ev) == 0)))
		return IW_OK;
	e = errno;
	if (*efd >= 0)
		close(*efd);
	if (*epfd >= 0)
		close(*epfd);
	*efd = *epfd = -1;
	return -e;
}

void iwv_efd_signal(int fd, bool on)
{
	uint64_t v = 1;

	if (on) {
		if (write(fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: already signalled */
		}
	} else if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: was not signalled */
	}
}

struct iwv_comp_channel *iwv_create_comp_channel(struct iwv_context *context)
{
	struct iwv_ctx *ctx = ctx_of(context);
	struct iwv_chan_int *ch;
	int r;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ch->pub.context = context;
	r = iwv_chan_fds_open(ctx, &ch->efd, &ch->pub.fd);
	if (r != IW_OK) {
		free(ch);
		errno = -r;
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
	struct iwv_cq_int *cq = (struct iwv_cq_int *)pub;
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
	ctx->users--;
	pthread_mutex_unlock(&ctx->lock);
	free(cq->ring.e);
	free(cq);
	return 0;
}

static bool ring_push(struct wc_ring *r, const struct iwv_wc *wc)
{
	if (r->count == r->cap)
		return false;
	r->e[(r->head + r->count) % r->cap] = *wc;
	r->count++;
	return true;
}

static struct iwv_wc *ring_front(struct wc_ring *r)
{
	return r->count ? &r->e[r->head] : NULL;
}

static void ring_pop(struct wc_ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->count--;
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

int iwv_req_notify_cq(struct iwv_cq *pub, int solicited_only)
{
	struct iwv_cq_int *cq = (struct iwv_cq_int *)pub;
	struct iwv_ctx *ctx;

	if (!cq || !cq->pub.channel)
		return EINVAL;
	ctx = ctx_of(cq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	cq->armed = solicited_only ? 2 : 1;
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

		iwv_ctx_progress(ctx);
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
	struct iwv_cq_int *cq = (struct iwv_cq_int *)pub;
	struct iwv_ctx *ctx;

	if (!cq)
		return;
	ctx = ctx_of(cq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	cq->events_unacked = nevents >= cq->events_unacked ? 0 : cq->events_unacked - nevents;
	pthread_mutex_unlock(&ctx->lock);
}

/* ---------------------------------------------------------------------- */
/* QP completions: rdmap_qp -> stage -> CQ                                  */
/* ---------------------------------------------------------------------- */

static void slot_free(struct iwv_qp_int *qp, uint32_t i)
{
	qp->free_slots[qp->nfree++] = i;
}

/* Move staged completions into their CQs while there is room. */
static void qp_stage_flush(struct iwv_qp_int *qp)
{
	struct iwv_cq_int *scq = (struct iwv_cq_int *)qp->pub.send_cq;
	struct iwv_cq_int *rcq = (struct iwv_cq_int *)qp->pub.recv_cq;
	struct iwv_wc *wc;

	while ((wc = ring_front(&qp->sstage))) {
		/* the stage holds the slot number in wr_id until here */
		uint32_t i = (uint32_t)wc->wr_id;
		struct send_slot *s = &qp->slots[i];

		if (wc->status == IWV_WC_SUCCESS && !s->signaled) {
			ring_pop(&qp->sstage);
			slot_free(qp, i);
			continue;
		}
		if (scq->ring.count == scq->ring.cap) {
			scq->full = true;
			break;
		}
		wc->wr_id = s->wr_id;
		ring_push(&scq->ring, wc);
		cq_notify(scq, wc);
		ring_pop(&qp->sstage);
		slot_free(qp, i);
	}
	while ((wc = ring_front(&qp->rstage))) {
		if (rcq->ring.count == rcq->ring.cap) {
			rcq->full = true;
			break;
		}
		ring_push(&rcq->ring, wc);
		cq_notify(rcq, wc);
		ring_pop(&qp->rstage);
		qp->recv_posted--;
	}
}

static void wc_from_rdmap(struct iwv_qp_int *qp, const struct rdmap_wc *in, struct iwv_wc *out)
{
	memset(out, 0, sizeof(*out));
	out->wr_id = in->wr_id;
	out->status = wc_status(in->status);
	out->vendor_err = in->err < 0 ? (uint32_t)-in->err : 0;
	out->byte_len = in->byte_len;
	out->qp_num = qp->pub.qp_num;
	switch (in->opcode) {
	case RDMAP_WC_SEND:
		out->opcode = IWV_WC_SEND;
		break;
	case RDMAP_WC_RDMA_WRITE:
		out->opcode = IWV_WC_RDMA_WRITE;
		break;
	case RDMAP_WC_RDMA_READ:
		out->opcode = IWV_WC_RDMA_READ;
		break;
	case RDMAP_WC_RECV:
	default:
		out->opcode = IWV_WC_RECV;
		out->solicited = in->solicited;
		if (in->invalidated) {
			out->wc_flags |= IWV_WC_WITH_INV;
			out->invalidated_rkey = in->invalidated_stag;
		}
		break;
	}
}

void iwv_qp_drain(struct iwv_qp_int *qp)
{
	struct rdmap_wc w[32];
	enum rdmap_qp_state st;
	int n;

	while ((n = rdmap_qp_poll(qp->rq, w, (int)IW_ARRAY_SIZE(w))) > 0) {
		for (int i = 0; i < n; i++) {
			struct iwv_wc wc;

			wc_from_rdmap(qp, &w[i], &wc);
			if (wc.opcode == IWV_WC_RECV) {
				ring_push(&qp->rstage, &wc);
			} else {
				/* the opcode the user posted (flushes report it too) */
				wc.opcode = qp->slots[(uint32_t)wc.wr_id].opcode;
				ring_push(&qp->sstage, &wc);
			}
		}
	}
	/* TERMINATE is failed already: our Terminate is still going out, but every
	 * work request has been flushed, so the program must see ERR now. */
	st = rdmap_qp_state(qp->rq);
	if (st == RDMAP_QP_TERMINATE || st == RDMAP_QP_ERROR)
		qp->pub.state = IWV_QPS_ERR;
	qp_stage_flush(qp);
}

void iwv_qp_flush_all(struct iwv_qp_int *qp)
{
	rdmap_qp_flush(qp->rq);
	iwv_qp_drain(qp);
	qp->pub.state = IWV_QPS_ERR;
}

/* Refill a CQ that was full from the QPs feeding it. */
static void cq_refill(struct iwv_cq_int *cq)
{
	struct iwv_ctx *ctx = ctx_of(cq->pub.context);

	cq->full = false;
	for (struct iwv_qp_int *qp = ctx->qps; qp; qp = qp->next)
		if ((struct iwv_cq_int *)qp->pub.send_cq == cq ||
		    (struct iwv_cq_int *)qp->pub.recv_cq == cq)
			qp_stage_flush(qp);
}

int iwv_poll_cq(struct iwv_cq *pub, int num_entries, struct iwv_wc *wc)
{
	struct iwv_cq_int *cq = (struct iwv_cq_int *)pub;
	struct iwv_ctx *ctx;
	int n = 0;

	if (!cq || num_entries < 0 || (num_entries > 0 && !wc))
		return -EINVAL;
	ctx = ctx_of(cq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (cq->ring.count == 0 && !ctx->thread_on)
		iwv_ctx_progress(ctx);
	while (n < num_entries) {
		struct iwv_wc *e = ring_front(&cq->ring);

		if (!e) {
			if (!cq->full)
				break;
			cq_refill(cq);
			if (!cq->ring.count)
				break;
			continue;
		}
		wc[n++] = *e;
		ring_pop(&cq->ring);
	}
	if (cq->full)
		cq_refill(cq);
	pthread_mutex_unlock(&ctx->lock);
	return n;
}

/* ---------------------------------------------------------------------- */
/* QPs                                                                      */
/* ---------------------------------------------------------------------- */

static void qp_free(struct iwv_qp_int *qp)
{
	struct iwv_ctx *ctx = ctx_of(qp->pub.context);

	if (qp->rq)
		rdmap_qp_destroy(qp->rq);
	if (qp->inline_stag)
		ddp_stag_dereg(ctx->stags, qp->inline_stag);
	free(qp->inline_buf);
	free(qp->slots);
	free(qp->free_slots);
	free(qp->sstage.e);
	free(qp->rstage.e);
	free(qp);
}

struct iwv_qp *iwv_create_qp(struct iwv_pd *pd, struct iwv_qp_init_attr *attr)
{
	struct rdmap_qp_config cfg;
	struct iwv_qp_int *qp;
	struct iwv_ctx *ctx;
	struct iwv_qp_cap *c;
	int r;

	if (!pd || !attr || attr->qp_type != IWV_QPT_RC || attr->srq || !attr->send_cq ||
	    !attr->recv_cq || attr->send_cq->context != pd->context ||
	    attr->recv_cq->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	c = &attr->cap;
	if (c->max_send_wr > IWV_MAX_QP_WR || c->max_recv_wr > IWV_MAX_QP_WR ||
	    c->max_send_sge > IWV_MAX_SGE || c->max_recv_sge > IWV_MAX_SGE ||
	    c->max_inline_data > IWV_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	/* Zero depths are legal in ibverbs (a send-only QP); the engine wants 1. */
	if (c->max_send_wr == 0)
		c->max_send_wr = 1;
	if (c->max_recv_wr == 0)
		c->max_recv_wr = 1;
	if (c->max_send_sge == 0)
		c->max_send_sge = 1;
	if (c->max_recv_sge == 0)
		c->max_recv_sge = 1;
	ctx = ctx_of(pd->context);
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->pub.context = pd->context;
	qp->pub.qp_context = attr->qp_context;
	qp->pub.pd = pd;
	qp->pub.send_cq = attr->send_cq;
	qp->pub.recv_cq = attr->recv_cq;
	qp->pub.qp_type = IWV_QPT_RC;
	qp->pub.state = IWV_QPS_INIT;
	qp->attr = *attr;
	qp->slots = calloc(c->max_send_wr, sizeof(*qp->slots));
	qp->free_slots = calloc(c->max_send_wr, sizeof(*qp->free_slots));
	qp->sstage.e = calloc(c->max_send_wr, sizeof(*qp->sstage.e));
	qp->rstage.e = calloc(c->max_recv_wr, sizeof(*qp->rstage.e));
	qp->sstage.cap = c->max_send_wr;
	qp->rstage.cap = c->max_recv_wr;
	if (c->max_inline_data)
		qp->inline_buf = malloc((size_t)c->max_inline_data * c->max_send_wr);
	if (!qp->slots || !qp->free_slots || !qp->sstage.e || !qp->rstage.e ||
	    (c->max_inline_data && !qp->inline_buf)) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < c->max_send_wr; i++)
		qp->free_slots[i] = c->max_send_wr - 1 - i;
	qp->nfree = c->max_send_wr;

	rdmap_qp_config_default(&cfg);
	cfg.stags = ctx->stags;
	cfg.pd = pd->handle;
	cfg.sq_depth = c->max_send_wr;
	cfg.rq_depth = c->max_recv_wr;
	cfg.mulpdu = mpa_mulpdu(1460, false); /* replaced by the CM once the MSS is known */
	cfg.start_idle = true;
	memset(&cfg.mpa, 0, sizeof(cfg.mpa));
	cfg.mpa.ird = IWV_QP_IRD_CAP;
	cfg.mpa.ord = IWV_QP_ORD_CAP;

	pthread_mutex_lock(&ctx->lock);
	r = IW_OK;
	if (qp->inline_buf)
		r = ddp_stag_reg(
			ctx->stags, pd->handle, qp->inline_buf, (uint64_t)(uintptr_t)qp->inline_buf,
			(uint64_t)c->max_inline_data * c->max_send_wr, 0, &qp->inline_stag);
	if (r == IW_OK)
		r = rdmap_qp_create(&cfg, &qp->rq);
	if (r != IW_OK) {
		pthread_mutex_unlock(&ctx->lock);
		qp_free(qp);
		errno = iwv_errno(r);
		return NULL;
	}
	qp->pub.handle = ctx->next_handle++;
	qp->pub.qp_num = qp->pub.handle;
	pd_use(pd, 1);
	((struct iwv_cq_int *)attr->send_cq)->users++;
	((struct iwv_cq_int *)attr->recv_cq)->users++;
	qp->next = ctx->qps;
	ctx->qps = qp;
	pthread_mutex_unlock(&ctx->lock);
	return &qp->pub;
}

int iwv_destroy_qp(struct iwv_qp *pub)
{
	struct iwv_qp_int *qp = (struct iwv_qp_int *)pub;
	struct iwv_ctx *ctx;

	if (!qp)
		return EINVAL;
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (qp->id)
		iwcm_qp_detach(qp, true);
	iwv_qp_flush_all(qp);
	for (struct iwv_qp_int **pp = &ctx->qps; *pp; pp = &(*pp)->next)
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	pd_use(qp->pub.pd, -1);
	((struct iwv_cq_int *)qp->pub.send_cq)->users--;
	((struct iwv_cq_int *)qp->pub.recv_cq)->users--;
	qp_free(qp);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int iwv_query_qp(struct iwv_qp *pub, struct iwv_qp_attr *attr, int attr_mask,
		 struct iwv_qp_init_attr *init_attr)
{
	struct iwv_qp_int *qp = (struct iwv_qp_int *)pub;
	struct iwv_ctx *ctx;

	if (!qp || !attr)
		return EINVAL;
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = qp->pub.state;
	attr->cap = qp->attr.cap;
	attr->max_rd_atomic = (uint8_t)IW_MIN(qp->ord, 255u);
	attr->max_dest_rd_atomic = (uint8_t)IW_MIN(qp->ird, 255u);
	attr->qp_err = rdmap_qp_error(qp->rq);
	if (init_attr)
		*init_attr = qp->attr;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int iwv_modify_qp(struct iwv_qp *pub, struct iwv_qp_attr *attr, int attr_mask)
{
	struct iwv_qp_int *qp = (struct iwv_qp_int *)pub;
	struct iwv_ctx *ctx;

	if (!qp || !attr || attr_mask != IWV_QP_STATE || attr->qp_state != IWV_QPS_ERR)
		return EINVAL;
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (qp->id)
		iwcm_qp_detach(qp, false);
	iwv_qp_flush_all(qp);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* Complete a WR at once with a flush status (QP in error): errors always complete. */
static int flush_send_now(struct iwv_qp_int *qp, uint32_t slot)
{
	struct iwv_wc wc = {
		.wr_id = slot,
		.status = IWV_WC_WR_FLUSH_ERR,
		.opcode = qp->slots[slot].opcode,
		.vendor_err = (uint32_t)-IW_ERDMAP_FLUSHED,
		.qp_num = qp->pub.qp_num,
	};

	ring_push(&qp->sstage, &wc);
	return 0;
}

static int post_one_send(struct iwv_qp_int *qp, const struct iwv_send_wr *wr)
{
	struct rdmap_send_wr w;
	struct send_slot *s;
	uint32_t slot, total = 0;
	int r;

	memset(&w, 0, sizeof(w));
	switch (wr->opcode) {
	case IWV_WR_SEND:
		w.opcode = (wr->send_flags & IWV_SEND_SOLICITED) ? RDMAP_WR_SEND_SE : RDMAP_WR_SEND;
		break;
	case IWV_WR_SEND_WITH_INV:
		w.opcode = (wr->send_flags & IWV_SEND_SOLICITED) ? RDMAP_WR_SEND_SE_INV
								 : RDMAP_WR_SEND_INV;
		w.invalidate_stag = wr->invalidate_rkey;
		break;
	case IWV_WR_RDMA_WRITE:
		w.opcode = RDMAP_WR_WRITE;
		break;
	case IWV_WR_RDMA_READ:
		w.opcode = RDMAP_WR_READ;
		if (wr->num_sge != 1 || (wr->send_flags & IWV_SEND_INLINE))
			return EINVAL;
		break;
	default:
		return EINVAL;
	}
	if (wr->send_flags &
	    ~(unsigned)(IWV_SEND_FENCE | IWV_SEND_SIGNALED | IWV_SEND_SOLICITED | IWV_SEND_INLINE))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->attr.cap.max_send_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > UINT32_MAX - total)
			return EINVAL;
		total += wr->sg_list[i].length;
	}
	if ((wr->send_flags & IWV_SEND_INLINE) && total > qp->attr.cap.max_inline_data)
		return EINVAL;
	if (qp->nfree == 0)
		return ENOMEM;

	slot = qp->free_slots[--qp->nfree];
	s = &qp->slots[slot];
	s->wr_id = wr->wr_id;
	s->signaled = (wr->send_flags & IWV_SEND_SIGNALED) || qp->attr.sq_sig_all;
	s->opcode = wr->opcode == IWV_WR_RDMA_WRITE  ? IWV_WC_RDMA_WRITE
		    : wr->opcode == IWV_WR_RDMA_READ ? IWV_WC_RDMA_READ
						     : IWV_WC_SEND;

	if (qp->pub.state == IWV_QPS_ERR || !qp_accepts_work(qp))
		return flush_send_now(qp, slot);

	w.wr_id = slot;
	w.flags = RDMAP_WR_SIGNALED | ((wr->send_flags & IWV_SEND_FENCE) ? RDMAP_WR_FENCE : 0);
	w.remote_stag = wr->wr.rdma.rkey;
	w.remote_to = wr->wr.rdma.remote_addr;
	if (wr->send_flags & IWV_SEND_INLINE) {
		uint8_t *dst = qp->inline_buf + (size_t)slot * qp->attr.cap.max_inline_data;
		uint32_t off = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(dst + off, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w.num_sge = 1;
		w.sg[0].addr = (uint64_t)(uintptr_t)dst;
		w.sg[0].length = total;
		w.sg[0].lkey = qp->inline_stag;
	} else {
		w.num_sge = wr->num_sge;
		for (int i = 0; i < wr->num_sge; i++) {
			w.sg[i].addr = wr->sg_list[i].addr;
			w.sg[i].length = wr->sg_list[i].length;
			w.sg[i].lkey = wr->sg_list[i].lkey;
		}
	}
	r = rdmap_qp_post_send(qp->rq, &w);
	if (r == IW_ESTATE)
		return flush_send_now(qp, slot);
	if (r != IW_OK) {
		slot_free(qp, slot);
		return r == IW_ENOSPC ? ENOMEM : EINVAL;
	}
	return 0;
}

int iwv_post_send(struct iwv_qp *pub, struct iwv_send_wr *wr, struct iwv_send_wr **bad_wr)
{
	struct iwv_qp_int *qp = (struct iwv_qp_int *)pub;
	struct iwv_ctx *ctx;
	int r = 0;

	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		r = post_one_send(qp, wr);
		if (r) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
	}
	iwv_qp_drain(qp);
	if (qp->id)
		iwcm_qp_kick(qp);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

static int post_one_recv(struct iwv_qp_int *qp, const struct iwv_recv_wr *wr)
{
	struct rdmap_recv_wr w;
	int r;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->attr.cap.max_recv_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	if (qp->recv_posted >= qp->attr.cap.max_recv_wr)
		return ENOMEM;
	if (qp->pub.state == IWV_QPS_ERR || !qp_accepts_work(qp)) {
		struct iwv_wc wc = {
			.wr_id = wr->wr_id,
			.status = IWV_WC_WR_FLUSH_ERR,
			.opcode = IWV_WC_RECV,
			.vendor_err = (uint32_t)-IW_ERDMAP_FLUSHED,
			.qp_num = qp->pub.qp_num,
		};

		ring_push(&qp->rstage, &wc);
		qp->recv_posted++;
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.num_sge = wr->num_sge;
	for (int i = 0; i < wr->num_sge; i++) {
		w.sg[i].addr = wr->sg_list[i].addr;
		w.sg[i].length = wr->sg_list[i].length;
		w.sg[i].lkey = wr->sg_list[i].lkey;
	}
	r = rdmap_qp_post_recv(qp->rq, &w);
	if (r == IW_ESTATE) {
		qp->pub.state = IWV_QPS_ERR;
		return post_one_recv(qp, wr);
	}
	if (r != IW_OK)
		return r == IW_ENOSPC ? ENOMEM : EINVAL;
	qp->recv_posted++;
	return 0;
}

int iwv_post_recv(struct iwv_qp *pub, struct iwv_recv_wr *wr, struct iwv_recv_wr **bad_wr)
{
	struct iwv_qp_int *qp = (struct iwv_qp_int *)pub;
	struct iwv_ctx *ctx;
	int r = 0;

	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		r = post_one_recv(qp, wr);
		if (r) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
	}
	iwv_qp_drain(qp);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}
