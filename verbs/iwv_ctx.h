/* SPDX-License-Identifier: MIT */
/*
 * iwv_ctx.h - the context runtime of the verbs layer (iwv_ctx.c): what the
 * verbs objects (iwv_mr.c, iwv_cq.c, iwv_qp.c) and the connection manager
 * (iwcm.c) share.  Private to verbs/.
 *
 * A context owns one mutex, one I/O engine, one STag table, one set of
 * timers (with a timerfd armed to the earliest) and, optionally, an engine
 * thread.  The mutex guards every object of the context, the engine and all
 * engine callbacks: public calls take it, make progress, and drop it; a
 * blocking wait polls the engine fd with the lock dropped
 * (docs/architecture.md §8).
 *
 * Nothing here knows a CQ, a QP or a cm id: owners keep their timers in the
 * context's set (iwv_ctx_timer_arm), and whatever must outlive a public
 * destroy call until the engine lets go of it stays on the `reclaim` list
 * (an embedded node), so that iwv_close_device() waits for it.
 */
#ifndef IWARP_IWV_CTX_H
#define IWARP_IWV_CTX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <iwarp/iwv.h>

#include "iw_list.h"
#include "iw_timer.h"
#include "iwv_engine.h"

/* Device limits (iwv_query_device) that the QP and the CM also use. */
#define IWV_QP_IRD_CAP	  255 /* rdmap_qp inbound Read capacity of every QP */
#define IWV_QP_ORD_CAP	  255 /* and outbound */
#define IWV_QP_RD_DEFAULT 16  /* IRD/ORD 0 in iwcm_conn_param means this */

struct iwv_qp_int;
struct iwv_cq_int;

struct iwv_ctx {
	struct iwv_context pub;
	pthread_mutex_t lock;
	struct iwv_engine *eng;
	struct ddp_stag_table *stags;
	struct iwv_context_attr attr;
	/* The receive buffer every connection reads into when the engine does
	 * not lend it to a recv in flight (iwcm.c, rx_buffer): attr.rx_buf_size
	 * octets, allocated at the first read; busy while one connection's
	 * octets in it are being processed. */
	uint8_t *rx_shared;
	bool rx_shared_busy;
	uint32_t next_handle;
	int users;		/* PDs, CQs, completion and CM channels holding the context */
	struct iw_list reclaim; /* objects waiting for the engine before they can be freed */
	struct iw_list qps; /* every QP, iwv_qp_int.ctx_node (a full CQ is refilled from them) */
	struct iw_timers timers; /* due times in ns of iwv_now_ns() */
	uint64_t timerfd_due;	 /* what timer_fd is armed to (IW_TIMER_NONE: disarmed) */
	int wake_fd;		 /* eventfd: wakes the engine thread */
	int timer_fd;		 /* timerfd at the earliest timer (in every channel's epoll set) */
	/* Without an engine thread: an eventfd in every channel's epoll set,
	 * signalled while a CQ without a completion channel holds completions
	 * that a progress pass run for something else put there (`hidden` CQs,
	 * iwv_ctx_progress_for): the program polled that CQ before they came,
	 * and the socket that brought them is drained, so no other fd would
	 * wake a program that now sleeps.  -1 with an engine thread. */
	int hidden_fd;
	int hidden_n;			/* CQs marked hidden */
	bool progress_api;		/* inside iwv_ctx_progress_for() */
	struct iwv_cq_int *progress_cq; /* ... run by a poll of this CQ (else NULL) */
	pthread_t thread;
	bool thread_on, thread_stop;
	/* The engine thread's standing aside (iwv_ctx.c, before
	 * engine_thread_main): iwv_now_ns() of the program's last busy-polling
	 * poll_cq that found its CQ empty (0 after a poll outside a run of
	 * polls, and when the program waits), and of the latest deferred work
	 * (0: none queued). */
	uint64_t spin_ns, defer_ns;
	bool thread_aside; /* the thread stands aside: kick wake_fd to end it */
	unsigned int posts_since_poll;
	uint64_t post_left_ns;	 /* when the program's last post_send returned */
	uint64_t poll_left_ns;	 /* when the program's last poll_cq returned */
	unsigned int poll_run;	 /* polls in a row, each begun soon after the last */
	struct iw_list deferred; /* iwv_deferred work run by the next progress pass */
	bool is_default;	 /* the shared context of iwcm_create_event_channel() */
	/* asynchronous events (iwv_async.c): the queue of iwv_async_node (iwv_obj.h)
	 * and the eventfd signalled while it is not empty (inside pub.async_fd, an
	 * epoll set like a channel's fd) */
	struct iw_list async_q;
	int async_efd;
};

static inline struct iwv_ctx *ctx_of(struct iwv_context *c)
{
	return (struct iwv_ctx *)c;
}

/* CLOCK_MONOTONIC in ns: the clock of the context's timers. */
uint64_t iwv_now_ns(void);

/* The context behind iwcm_create_event_channel(): one per process, kept for
 * its lifetime (NULL with errno if it cannot be opened). */
struct iwv_ctx *iwv_default_ctx_get(void);

/* A zeroed object of `size` octets for a constructor of the verbs API (free
 * it with free()): NULL with errno EINVAL when there is no context, ENOMEM
 * when there is no memory. */
void *iwv_ctx_obj_new(struct iwv_ctx *ctx, size_t size);

/* Lock held for all of these. */

/* One non-blocking pass: engine I/O, then due timers.  Returns the engine's
 * callback count. */
int iwv_ctx_progress(struct iwv_ctx *ctx);
/* The same, run by a call of the program: a poll of `cq`, or (NULL) a call
 * that returns events.  Completions it puts into another CQ without a
 * completion channel mark that CQ hidden (iwv_cq_push). */
int iwv_ctx_progress_for(struct iwv_ctx *ctx, struct iwv_cq_int *cq);
/* Wait (lock held on entry and exit; dropped while waiting) for engine or
 * wake activity, a due timer, or until deadline_ns; extra_fd (or -1) is also
 * watched.  -1 with errno (EINTR when a signal arrived), else 0. */
int iwv_ctx_wait(struct iwv_ctx *ctx, uint64_t deadline_ns, int extra_fd);
/* Arm `t` in the context's timers at `due_ns` (iwv_now_ns() clock), waking
 * the engine thread and re-arming the timerfd when it is the new earliest.
 * Cancel with iw_timer_cancel(&ctx->timers, t). */
void iwv_ctx_timer_arm(struct iwv_ctx *ctx, struct iw_timer *t, uint64_t due_ns);

/*
 * The program's polling, for the engine thread's standing aside and the
 * deferred work (iwv_ctx.c explains both).  iwv_poll_cq calls poll_begin
 * first (it runs deferred work) and poll_end with whether it found nothing;
 * a call about to wait for an event calls not_spinning (it runs deferred
 * work and sends the thread back to the sockets).
 */
void iwv_ctx_poll_begin(struct iwv_ctx *ctx);
void iwv_ctx_poll_end(struct iwv_ctx *ctx, bool empty);
void iwv_ctx_not_spinning(struct iwv_ctx *ctx);

/*
 * Work put off to the next progress pass: the writes of a batch of posts
 * (iwv_ctx.c).  `run` is called with the lock held.
 */
struct iwv_deferred {
	struct iw_list node; /* on ctx->deferred while queued, else empty */
	void (*run)(struct iwv_deferred *d);
};

static inline void iwv_deferred_init(struct iwv_deferred *d, void (*run)(struct iwv_deferred *))
{
	iw_list_init(&d->node);
	d->run = run;
}

/* Queue `d` (if it is not queued) and return true when this post belongs to
 * a batch; false: the caller does the work now.  iwv_ctx_post_done() at the
 * end of every post. */
bool iwv_ctx_defer(struct iwv_ctx *ctx, struct iwv_deferred *d);
void iwv_ctx_post_done(struct iwv_ctx *ctx);
/* Take `d` off the queue (its owner goes away). */
static inline void iwv_deferred_cancel(struct iwv_deferred *d)
{
	iw_list_del(&d->node);
}

/* A channel's fds (completion or CM): an eventfd signalled while events are
 * queued, inside an epoll set that is the channel's public fd.  IW_OK or an
 * IW_ESYS code. */
int iwv_chan_fds_open(struct iwv_ctx *ctx, int *efd, int *epfd);
/* Signal (on) or clear an eventfd. */
void iwv_efd_signal(int fd, bool on);

/* The one conversion of an iw_err to an errno (for calls that return or set
 * errno, ibverbs-style). */
int iwv_errno(int iw_err);

#endif /* IWARP_IWV_CTX_H */
