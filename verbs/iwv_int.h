/* SPDX-License-Identifier: MIT */
/*
 * iwv_int.h - private structures shared by the verbs objects (iwv_verbs.c)
 * and the connection manager (iwcm.c).
 *
 * Locking: one mutex per context guards every object of that context, the
 * engine and all callbacks.  Public calls take it, make progress, and drop it;
 * a blocking wait polls the engine fd with the lock dropped.  The optional
 * engine thread does the same in a loop.
 */
#ifndef IWARP_IWV_INT_H
#define IWARP_IWV_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>
#include <iwarp/rdmap_qp.h>

#include "iwv_engine.h"

struct iwcm_id_int;
struct iwv_qp_int;
struct iwv_cq_int;

struct iwv_ctx {
	struct iwv_context pub;
	pthread_mutex_t lock;
	struct iwv_engine *eng;
	struct ddp_stag_table *stags;
	struct iwv_context_attr attr;
	uint32_t next_handle;
	int users;		  /* PDs, CQs, channels, CM channels holding the context */
	struct iwcm_id_int *ids;  /* every cm id the program may use (timers) */
	struct iwcm_id_int *dead; /* released ids waiting for their endpoint */
	struct iwv_qp_int *qps;	  /* every QP (CQ refill) */
	uint64_t next_timer;	  /* no cm timer fires before this (UINT64_MAX: none) */
	int wake_fd;		  /* eventfd: wakes the engine thread */
	int timer_fd;		  /* timerfd armed to next_timer (in every channel's epoll set) */
	pthread_t thread;
	bool thread_on, thread_stop;
	bool is_default; /* the shared context of iwcm_create_event_channel() */
};

static inline struct iwv_ctx *ctx_of(struct iwv_context *c)
{
	return (struct iwv_ctx *)c;
}

/* A ring of work completions. */
struct wc_ring {
	struct iwv_wc *e;
	uint32_t cap, head, count;
};

struct iwv_cq_int {
	struct iwv_cq pub;
	struct wc_ring ring;
	int armed; /* 0, 1 = any, 2 = solicited only */
	unsigned int events_unacked;
	bool ev_queued; /* on its channel's event list */
	struct iwv_cq_int *ev_next;
	int users; /* QPs attached */
	bool full; /* a QP could not move a completion in: refill on poll */
};

struct iwv_chan_int {
	struct iwv_comp_channel pub;
	int efd; /* eventfd signalled while events are queued */
	struct iwv_cq_int *ev_head, *ev_tail;
};

/* Per send WR: what the user asked for (the rdmap_qp always signals, so we see every end). */
struct send_slot {
	uint64_t wr_id;
	bool signaled;
	enum iwv_wc_opcode opcode;
};

struct iwv_qp_int {
	struct iwv_qp pub;
	struct iwv_qp_init_attr attr;
	struct rdmap_qp *rq;
	struct iwcm_id_int *id;	       /* the connection, once attached */
	struct wc_ring sstage, rstage; /* completions waiting for room in their CQ */
	struct send_slot *slots;
	uint32_t *free_slots;
	uint32_t nfree;
	uint32_t recv_posted; /* receives posted and not yet moved to the CQ */
	uint8_t *inline_buf;
	uint32_t inline_stag;
	uint16_t ird, ord; /* negotiated */
	struct iwv_qp_int *next;
};

static inline bool qp_accepts_work(const struct iwv_qp_int *qp)
{
	enum rdmap_qp_state st = rdmap_qp_state(qp->rq);

	return st == RDMAP_QP_IDLE || st == RDMAP_QP_RTS;
}

/* CM hooks used by the verbs objects (lock held). */
/* Work was posted to an attached QP: send what it has. */
void iwcm_qp_kick(struct iwv_qp_int *qp);
/* The QP goes away (destroy) or to ERR (modify): tear its connection down abortively. */
void iwcm_qp_detach(struct iwv_qp_int *qp, bool destroying);

/* Verbs internals used by the CM (lock held). */
int iwv_ctx_progress(struct iwv_ctx *ctx);
uint64_t iwv_now_ns(void);
/* A channel's eventfd and epoll fd (see iwv_verbs.c); IW_OK or -errno. */
int iwv_chan_fds_open(struct iwv_ctx *ctx, int *efd, int *epfd);
/* Signal (on) or clear an eventfd. */
void iwv_efd_signal(int fd, bool on);
/* Arm the context's timerfd to ctx->next_timer (disarm for none). */
void iwv_ctx_arm_timer(struct iwv_ctx *ctx);
/* Wait (lock held on entry and exit; dropped while waiting) for engine or wake activity
 * or until deadline_ns; extra_fd (or -1) is also watched.  -1 with errno (EINTR when a
 * signal arrived), else 0. */
int iwv_ctx_wait(struct iwv_ctx *ctx, uint64_t deadline_ns, int extra_fd);
/* Nearest timer of the context's connections (UINT64_MAX = none). */
uint64_t iwcm_next_timer(struct iwv_ctx *ctx);
void iwcm_handle_timers(struct iwv_ctx *ctx, uint64_t now);
/* Free released ids whose endpoint the engine has let go of. */
void iwcm_sweep(struct iwv_ctx *ctx);

/* Move what the rdmap_qp completed into the CQs (and their channels). */
void iwv_qp_drain(struct iwv_qp_int *qp);
/* QP failed / disconnected: flush everything not yet completed. */
void iwv_qp_flush_all(struct iwv_qp_int *qp);
/* rdmap_qp capacities the QP was created with */
#define IWV_QP_IRD_CAP	  255
#define IWV_QP_ORD_CAP	  255
#define IWV_QP_RD_DEFAULT 16

struct iwv_ctx *iwv_default_ctx_get(void);

/* errno for an iw_err from a local call */
int iwv_errno(int iw_err);

#endif
