/* SPDX-License-Identifier: MIT */
/*
 * iwv_ctx.c - the context runtime of the verbs layer (iwv_ctx.h): the
 * device, opening and closing contexts, the default context of the CM,
 * progress and waiting, the context's timers and their timerfd, the engine
 * thread, the fds of channels, and the iw_err -> errno conversion.
 *
 * Theory of operation.  Every public verbs or CM call takes the context lock.
 * Progress (iwv_ctx_progress) is the deferred writes of a batch of posts,
 * one non-blocking pass of the I/O engine, whose callbacks (iwcm.c) feed the
 * QPs, and the timers that are due; it runs inline in the calls that wait
 * for something (get_cq_event, get_cm_event, poll_cq on an empty CQ - the
 * last one also when an engine thread runs, so a busy-polling program does
 * not wait for the thread's wake-ups) or in the engine thread, which stands
 * aside while the program busy-polls (above engine_thread_main).  A waiter
 * drops the lock and poll()s the engine fd (unless the engine thread watches
 * it), the fd it waits for, and a timeout to the earliest timer.  The
 * timerfd, armed to the earliest timer, sits in every channel's epoll set so
 * that a program sleeping in its own poll() wakes when a timer is due.
 */
#include <errno.h>
#include <signal.h>
#include <poll.h>
#include <sched.h>
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
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iw_bytes.h"
#include "iwv_ctx.h"

/* ---------------------------------------------------------------------- */
/* Errors: the one place where an iw_err becomes an errno                   */
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

/* ---------------------------------------------------------------------- */
/* The device and contexts                                                  */
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
	attr->rx_direct = -1;
	attr->max_mr = 65536;
	attr->rx_buf_size = 256 * 1024;
}

static void *engine_thread_main(void *arg);
static void ctx_stop_thread(struct iwv_ctx *ctx);

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
	if (ctx->hidden_fd >= 0)
		close(ctx->hidden_fd);
	if (ctx->async_efd >= 0)
		close(ctx->async_efd);
	if (ctx->pub.async_fd >= 0)
		close(ctx->pub.async_fd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->rx_shared);
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
	if (attr.rx_direct < 0) {
		const char *e = getenv("IWARP_RX_DIRECT");

		attr.rx_direct = e && *e && strcmp(e, "0") != 0;
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
	ctx->hidden_fd = -1;
	ctx->async_efd = -1;
	iw_list_init(&ctx->async_q);
	ctx->next_handle = 1;
	iw_list_init(&ctx->reclaim);
	iw_list_init(&ctx->deferred);
	iw_list_init(&ctx->qps);
	iw_timers_init(&ctx->timers);
	ctx->timerfd_due = IW_TIMER_NONE;
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
		sigset_t all, old;
		int rc;

		/* The program's signals are the program's: the thread blocks them all
		 * (it inherits the mask it is created with). */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ctx->thread_on = true;
		rc = pthread_create(&ctx->thread, NULL, engine_thread_main, ctx);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0) {
			ctx->thread_on = false;
			ctx_free(ctx);
			errno = EAGAIN;
			return NULL;
		}
	}
	if (!ctx->thread_on) {
		ctx->hidden_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (ctx->hidden_fd < 0) {
			ctx_free(ctx);
			errno = ENOMEM;
			return NULL;
		}
	}
	/* after the thread started: without one, the engine, timer and hidden
	 * completion fds join it */
	r = iwv_chan_fds_open(ctx, &ctx->async_efd, &ctx->pub.async_fd);
	if (r != IW_OK) {
		ctx_stop_thread(ctx);
		ctx_free(ctx);
		errno = iwv_errno(r);
		return NULL;
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
	if (!ctx->thread_on)
		return;
	pthread_mutex_lock(&ctx->lock);
	__atomic_store_n(&ctx->thread_stop, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ctx->lock);
	iwv_efd_signal(ctx->wake_fd, true);
	pthread_join(ctx->thread, NULL);
	ctx->thread_on = false;
}

int iwv_close_device(struct iwv_context *context)
{
	struct iwv_ctx *ctx = ctx_of(context);

	if (!ctx)
		return EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->users > 0 || ctx->is_default) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	/* Connections being closed may still have engine operations in flight:
	 * their owners free them from a timer once the engine lets go. */
	for (int i = 0; !iw_list_empty(&ctx->reclaim) && i < 1000; i++) {
		iwv_ctx_progress(ctx);
		if (!iw_list_empty(&ctx->reclaim))
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

int iwv_context_engine_thread(struct iwv_context *context)
{
	if (!context) {
		errno = EINVAL;
		return -1;
	}
	return ctx_of(context)->thread_on ? 1 : 0;
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
	/* RFC 7306 atomics are one CAS on the host word: atomic against every QP,
	 * context and CPU thread (on a QP created with rfc7306). */
	attr->atomic_cap = IWV_ATOMIC_GLOB;
	attr->max_srq = 1 << 16;
	attr->max_srq_wr = IWV_MAX_QP_WR;
	attr->max_srq_sge = IWV_MAX_SGE;
	/* windows share the STag table with MRs */
	attr->max_mw = (int)ctx_of(context)->attr.max_mr;
	attr->max_fast_reg_page_list_len = DDP_FAST_REG_MAX_PAGES;
	return 0;
}

void *iwv_ctx_obj_new(struct iwv_ctx *ctx, size_t size)
{
	void *p;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, size);
	if (!p)
		errno = ENOMEM;
	return p;
}

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
/* Timers                                                                   */
/* ---------------------------------------------------------------------- */

/*
 * The timers (the CM's first-FPDU pause, MPA and close timeouts) must fire
 * even when the program only sleeps in poll() on a channel fd: the timerfd
 * sits in every channel's epoll set and is kept armed to the earliest timer.
 * A timer cancelled since can only make it fire early, which costs one empty
 * progress pass.
 */
static void ctx_timerfd_update(struct iwv_ctx *ctx)
{
	uint64_t next = iw_timers_next(&ctx->timers), junk;
	struct itimerspec its;

	if (next == ctx->timerfd_due)
		return;
	ctx->timerfd_due = next;
	memset(&its, 0, sizeof(its));
	if (next != IW_TIMER_NONE) {
		its.it_value.tv_sec = (time_t)(next / 1000000000u);
		its.it_value.tv_nsec = (long)(next % 1000000000u);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1; /* all zero would disarm */
	}
	/* clear an expiry already counted, then (re)arm or disarm */
	if (read(ctx->timer_fd, &junk, sizeof(junk)) < 0) {
		/* EAGAIN: it had not expired */
	}
	timerfd_settime(ctx->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

void iwv_ctx_timer_arm(struct iwv_ctx *ctx, struct iw_timer *t, uint64_t due_ns)
{
	uint64_t before = iw_timers_next(&ctx->timers);

	iw_timer_arm(&ctx->timers, t, due_ns);
	if (due_ns < before) {
		ctx_timerfd_update(ctx);
		/* the engine thread may sleep for the old earliest */
		if (ctx->thread_on)
			iwv_efd_signal(ctx->wake_fd, true);
	}
}

/* ---------------------------------------------------------------------- */
/* Progress and waiting                                                     */
/* ---------------------------------------------------------------------- */

static void ctx_run_deferred(struct iwv_ctx *ctx)
{
	while (!iw_list_empty(&ctx->deferred)) {
		struct iwv_deferred *d =
			iw_container_of(ctx->deferred.next, struct iwv_deferred, node);

		iw_list_del(&d->node);
		d->run(d);
	}
	__atomic_store_n(&ctx->defer_ns, 0, __ATOMIC_RELAXED);
}

int iwv_ctx_progress(struct iwv_ctx *ctx)
{
	int n;

	ctx_run_deferred(ctx);
	n = iwv_engine_progress(ctx->eng);

	if (iw_timers_next(&ctx->timers) != IW_TIMER_NONE)
		iw_timers_run(&ctx->timers, iwv_now_ns());
	/* also after a cancel: a timerfd left at a cancelled (earlier) timer
	 * would stay readable and keep every channel fd awake */
	ctx_timerfd_update(ctx);
	return n;
}

int iwv_ctx_progress_for(struct iwv_ctx *ctx, struct iwv_cq_int *cq)
{
	int n;

	ctx->progress_api = true;
	ctx->progress_cq = cq;
	n = iwv_ctx_progress(ctx);
	ctx->progress_api = false;
	ctx->progress_cq = NULL;
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

	iwv_ctx_not_spinning(ctx);
	timeout = poll_timeout(IW_MIN(deadline_ns, iw_timers_next(&ctx->timers)));
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

/*
 * A program busy-polling its CQ makes progress itself (iwv_poll_cq), so the
 * engine thread stands aside while it does: woken for the engine's fd, it
 * would take a CPU from the poller (a 2-core machine running two such
 * programs has two pollers and two threads) and contend for the lock, for
 * nothing.  Standing aside, it sleeps on wake_fd only, in slices, until the
 * program has not polled an empty CQ for SPIN_WINDOW_NS and no deferred work
 * has waited that long, or until the program is about to wait
 * (iwv_ctx_not_spinning).  Busy-polling means a run of SPIN_MIN_RUN polls or
 * more, each begun within SPIN_GAP_NS of the end of the one before: a
 * program that polls once between other work and finds nothing may go on to
 * wait on memory.  A poll that found a completion does not renew the window
 * either: a program that goes on to spin on memory (ib_write_lat waits for
 * the peer's RDMA Write that way) must find the thread watching the sockets.
 *
 * Deferred work (iwv_ctx_defer): the first post after a poll is written at
 * once, as a program that posts one work request and then waits (for a
 * completion, or on memory) needs; further posts before the next poll, each
 * begun within BATCH_GAP_NS of the end of the post before, are a batch
 * (perftest posts one work request per call, up to its queue depth, then
 * polls) and are written by that poll, several in one system call.  The
 * thread is woken once per batch unless it stands aside already, and writes
 * the batch itself once the program has neither posted nor polled for
 * DEFER_WAIT_NS (it may have gone to wait on memory).
 */
#define SPIN_WINDOW_NS 200000u
#define SPIN_GAP_NS    5000u
#define SPIN_MIN_RUN   3u
#define BATCH_GAP_NS   2000u
#define DEFER_WAIT_NS  20000u

void iwv_ctx_poll_begin(struct iwv_ctx *ctx)
{
	ctx->posts_since_poll = 0;
	if (!iw_list_empty(&ctx->deferred))
		ctx_run_deferred(ctx);
	if (ctx->thread_on) {
		uint64_t now = iwv_now_ns();

		ctx->poll_run = now - ctx->poll_left_ns < SPIN_GAP_NS ? ctx->poll_run + 1 : 0;
	}
}

void iwv_ctx_poll_end(struct iwv_ctx *ctx, bool empty)
{
	uint64_t now;

	if (!ctx->thread_on)
		return;
	now = iwv_now_ns();
	ctx->poll_left_ns = now;
	if (empty && ctx->poll_run >= SPIN_MIN_RUN)
		__atomic_store_n(&ctx->spin_ns, now, __ATOMIC_RELAXED);
	else if (ctx->poll_run < SPIN_MIN_RUN)
		__atomic_store_n(&ctx->spin_ns, 0, __ATOMIC_RELAXED);
}

void iwv_ctx_not_spinning(struct iwv_ctx *ctx)
{
	if (!iw_list_empty(&ctx->deferred))
		ctx_run_deferred(ctx);
	if (!ctx->thread_on)
		return;
	__atomic_store_n(&ctx->spin_ns, 0, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ctx->thread_aside, __ATOMIC_SEQ_CST))
		iwv_efd_signal(ctx->wake_fd, true);
}

bool iwv_ctx_defer(struct iwv_ctx *ctx, struct iwv_deferred *d)
{
	uint64_t now;
	bool first;

	if (!ctx->thread_on)
		return false;
	now = iwv_now_ns();
	if (ctx->posts_since_poll++ == 0 || now - ctx->post_left_ns >= BATCH_GAP_NS)
		return false;
	first = iw_list_empty(&ctx->deferred);
	if (iw_list_empty(&d->node))
		iw_list_add_tail(&ctx->deferred, &d->node);
	__atomic_store_n(&ctx->defer_ns, now, __ATOMIC_SEQ_CST);
	if (first && !__atomic_load_n(&ctx->thread_aside, __ATOMIC_SEQ_CST))
		iwv_efd_signal(ctx->wake_fd, true);
	return true;
}

void iwv_ctx_post_done(struct iwv_ctx *ctx)
{
	if (ctx->thread_on)
		ctx->post_left_ns = iwv_now_ns();
}

/* When the thread may stop standing aside (0: now). */
static uint64_t aside_until(struct iwv_ctx *ctx)
{
	uint64_t s = __atomic_load_n(&ctx->spin_ns, __ATOMIC_SEQ_CST);
	uint64_t d = __atomic_load_n(&ctx->defer_ns, __ATOMIC_SEQ_CST);

	s = s ? s + SPIN_WINDOW_NS : 0;
	d = d ? d + DEFER_WAIT_NS : 0;
	return IW_MAX(s, d);
}

/* Lock not held: sleep while the program busy-polls. */
static void thread_stand_aside(struct iwv_ctx *ctx)
{
	struct pollfd pfd = {.fd = ctx->wake_fd, .events = POLLIN};

	for (;;) {
		uint64_t until = aside_until(ctx), now = iwv_now_ns();
		struct timespec ts;

		if (until <= now || __atomic_load_n(&ctx->thread_stop, __ATOMIC_RELAXED))
			return;
		/* the program's side stores its stamp, then reads the flag; this
		 * side sets the flag, then reads the stamps: one sees the other */
		__atomic_store_n(&ctx->thread_aside, true, __ATOMIC_SEQ_CST);
		until = aside_until(ctx);
		if (until > now) {
			ts.tv_sec = (time_t)((until - now) / 1000000000u);
			ts.tv_nsec = (long)((until - now) % 1000000000u);
			if (ppoll(&pfd, 1, &ts, NULL) > 0)
				iwv_efd_signal(ctx->wake_fd, false);
		}
		__atomic_store_n(&ctx->thread_aside, false, __ATOMIC_SEQ_CST);
	}
}

/*
 * IWARP_ENGINE_RT=1: the thread runs SCHED_FIFO at priority 1, so that the
 * kernel switches to it at once when a socket wakes it, instead of letting a
 * program that spins on memory finish its time slice first (on a 2-core
 * machine that slice showed as a round trip of 20 to 40 us instead of 10, and
 * as a tail of milliseconds).  It never spins: it sleeps in poll() between
 * progress passes of bounded work.  Needs CAP_SYS_NICE or an RLIMIT_RTPRIO of
 * 1 or more; without, one line on stderr and normal priority.
 */
static void thread_priority(void)
{
	const char *e = getenv("IWARP_ENGINE_RT");
	struct sched_param sp = {.sched_priority = 1};
	int rc;

	if (!e || !*e || strcmp(e, "0") == 0)
		return;
	rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc)
		fprintf(stderr,
			"iwarp: IWARP_ENGINE_RT: the engine thread keeps its normal priority: %s\n",
			strerror(rc));
}

static void *engine_thread_main(void *arg)
{
	struct iwv_ctx *ctx = arg;
	struct pollfd pfd[2];

	thread_priority();
	pthread_mutex_lock(&ctx->lock);
	while (!ctx->thread_stop) {
		int timeout = poll_timeout(iw_timers_next(&ctx->timers));

		pfd[0].fd = iwv_engine_fd(ctx->eng);
		pfd[0].events = POLLIN;
		pfd[1].fd = ctx->wake_fd;
		pfd[1].events = POLLIN;
		pthread_mutex_unlock(&ctx->lock);
		poll(pfd, 2, timeout);
		if (pfd[1].revents & POLLIN)
			iwv_efd_signal(ctx->wake_fd, false);
		thread_stand_aside(ctx);
		/* The program inside a call holds the lock: let it finish on this
		 * CPU rather than sleep on the lock and make it wake us as it
		 * leaves (two switches and a futex call on its path). */
		if (pthread_mutex_trylock(&ctx->lock) != 0) {
			sched_yield();
			pthread_mutex_lock(&ctx->lock);
		}
		iwv_ctx_progress(ctx);
	}
	pthread_mutex_unlock(&ctx->lock);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Channel fds                                                              */
/* ---------------------------------------------------------------------- */

/*
 * Without an engine thread the epoll set also holds the engine fd and the
 * context's timerfd: the program's poll() then wakes for the work that the
 * channel's get-event call turns into events; and hidden_fd, for completions
 * that progress made for another call put into a CQ without a channel.
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
	      epoll_ctl(*epfd, EPOLL_CTL_ADD, ctx->timer_fd, &ev) == 0 &&
	      epoll_ctl(*epfd, EPOLL_CTL_ADD, ctx->hidden_fd, &ev) == 0)))
		return IW_OK;
	e = errno;
	if (*efd >= 0)
		close(*efd);
	if (*epfd >= 0)
		close(*epfd);
	*efd = *epfd = -1;
	return iw_err_sys(e);
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
