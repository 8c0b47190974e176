/* SPDX-License-Identifier: MIT */
/*
 * iwv_obj.h - the verbs objects behind the public handles of iwv.h, shared
 * by iwv_mr.c (PD, MR), iwv_cq.c (completion channel, CQ) and iwv_qp.c (QP).
 * Private to verbs/; the connection manager never includes it (it sees a QP
 * only through iwv_qp_link.h).
 *
 * Completions travel rdmap_qp -> the QP's stage ring -> the CQ ring.  A work
 * request stays counted against its queue until its completion leaves the
 * stage, so the stages can never overflow however slowly the CQ is polled; a
 * full CQ only holds completions back (nothing is lost, no overflow error).
 */
#ifndef IWARP_IWV_OBJ_H
#define IWARP_IWV_OBJ_H

#include <stdbool.h>
#include <stdint.h>

#include <iwarp/iwv.h>
#include <iwarp/rdmap_qp.h>

#include "iw_list.h"
#include "iwv_ctx.h"
#include "iwv_qp_link.h"

struct iwv_pd_int {
	struct iwv_pd pub;
	int users; /* MRs and QPs */
};

/* A PD gains (d = 1) or loses (d = -1) an MR or a QP (lock held). */
static inline void iwv_pd_use(struct iwv_pd *pd, int d)
{
	((struct iwv_pd_int *)pd)->users += d;
}

/*
 * An asynchronous event, embedded in the object it is about (one node per
 * kind of event the object can have) and queued on its context at most once
 * (on the queue exactly while its link is not an empty list).  The queue is
 * thus bounded by the objects and an event is never lost: a second one of the
 * same kind before the first was read is the same event (iwv_async.c).
 */
struct iwv_async_node {
	struct iw_list link; /* on ctx->async_q */
	struct iwv_async_event ev;
};

/* Set `n` up for an event of `type` about `element` (not queued). */
void iwv_async_node_init(struct iwv_async_node *n, enum iwv_event_type type, void *element);
/* Queue the event (once) and signal the context's async_fd (lock held). */
void iwv_async_post(struct iwv_ctx *ctx, struct iwv_async_node *n);
/* Take a queued event off the queue: its object is being destroyed (lock held). */
void iwv_async_cancel(struct iwv_ctx *ctx, struct iwv_async_node *n);

struct iwv_srq_int {
	struct iwv_srq pub;
	struct iwv_srq_attr attr; /* granted max_wr, max_sge; srq_limit armed (0: disarmed) */
	struct rdmap_srq *rs;
	int users;	    /* QPs created on it */
	struct iw_list qps; /* ... the same QPs (iwv_qp_int.srq_node) */
	unsigned int events_unacked;
	struct iwv_async_node limit_ev; /* IWV_EVENT_SRQ_LIMIT_REACHED */
};

static inline struct iwv_srq_int *srq_of(struct iwv_srq *srq)
{
	return (struct iwv_srq_int *)srq;
}

/* The SRQ's limit fired in the engine: disarm it and queue the event (lock held). */
void iwv_srq_check_limit(struct iwv_srq_int *srq);

/* A ring of work completions. */
struct wc_ring {
	struct iwv_wc *e;
	uint32_t cap, head, count;
};

static inline bool wc_ring_push(struct wc_ring *r, const struct iwv_wc *wc)
{
	if (r->count == r->cap)
		return false;
	r->e[(r->head + r->count) % r->cap] = *wc;
	r->count++;
	return true;
}

static inline struct iwv_wc *wc_ring_front(struct wc_ring *r)
{
	return r->count ? &r->e[r->head] : NULL;
}

static inline void wc_ring_pop(struct wc_ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->count--;
}

struct iwv_cq_int {
	struct iwv_cq pub;
	struct wc_ring ring;
	int armed; /* 0, 1 = any, 2 = solicited only */
	unsigned int events_unacked;
	bool ev_queued; /* on its channel's event list */
	struct iwv_cq_int *ev_next;
	int users;   /* QPs attached */
	bool full;   /* a QP could not move a completion in: refill on poll */
	bool hidden; /* counted in ctx->hidden_n (iwv_ctx.h) until polled empty */
};

static inline struct iwv_cq_int *cq_of(struct iwv_cq *cq)
{
	return (struct iwv_cq_int *)cq;
}

struct iwv_chan_int {
	struct iwv_comp_channel pub;
	int efd; /* eventfd signalled while events are queued */
	struct iwv_cq_int *ev_head, *ev_tail;
};

/* Move `wc` into the CQ and fire its notification if armed for it; false
 * (and the CQ marked full, to be refilled on poll) when there is no room. */
bool iwv_cq_push(struct iwv_cq_int *cq, const struct iwv_wc *wc);

/* Per send WR: what the user asked for (the rdmap_qp always signals, so the
 * verbs layer sees every end). */
struct send_slot {
	uint64_t wr_id;
	bool signaled;
	enum iwv_wc_opcode opcode;
};

struct iwv_qp_int {
	struct iwv_qp pub;
	struct iwv_qp_init_attr attr;
	struct rdmap_qp *rq;
	/* the connection carrying the QP, once attached (iwv_qp_link.h) */
	const struct iwv_qp_link_ops *link_ops;
	void *link;
	struct wc_ring sstage, rstage; /* completions waiting for room in their CQ */
	struct send_slot *slots;
	uint32_t *free_slots;
	uint32_t nfree;
	uint32_t recv_posted; /* receives posted and not yet moved to the CQ */
	uint8_t *inline_buf;
	uint32_t inline_stag;
	uint16_t ird, ord; /* negotiated */
	/* asynchronous events: QP_FATAL, LAST_WQE_REACHED (with an SRQ) */
	struct iwv_async_node fatal_ev, last_wqe_ev;
	struct iwv_deferred kick; /* a post's write put off (iwv_ctx_defer) */
	unsigned int events_unacked;
	bool err_seen;		 /* the move to ERR was noticed (its events posted) */
	bool destroying;	 /* iwv_destroy_qp runs: no more events */
	bool user_err;		 /* the program moved it to ERR (iwv_modify_qp): no QP_FATAL */
	bool llp_broken;	 /* the connection was reset (iwv_qp_llp_broken) */
	struct iw_list ctx_node; /* on ctx->qps */
	struct iw_list srq_node; /* on its SRQ's qps (an empty list without one) */
};

static inline struct iwv_qp_int *qp_of(struct iwv_qp *qp)
{
	return (struct iwv_qp_int *)qp;
}

/* Move staged completions of `qp` into its CQs while there is room. */
void iwv_qp_stage_flush(struct iwv_qp_int *qp);
/* A receive was posted for `qp` (to it or its SRQ): a message held for want
 * of one (rnr_hold_ms) goes on. */
void iwv_qp_rx_ready(struct iwv_qp_int *qp);

/* IWV_ACCESS_* of an MR as DDP rights (iwv_mr.c): 0, EINVAL (unknown bits,
 * remote write without local write) or EOPNOTSUPP (remote atomic). */
int iwv_access_to_ddp(int access, uint32_t *ddp_access);

/* IWV_WR_LOCAL_INV / _BIND_MW / _REG_MR as an rdmap work request (iwv_mw.c):
 * 0 with *w filled and *wc_opcode the completion's opcode, or EINVAL /
 * EOPNOTSUPP / ENOMEM (no free send slot). */
int iwv_mem_wr(struct iwv_qp_int *qp, const struct iwv_send_wr *wr, struct rdmap_send_wr *w,
	       enum iwv_wc_opcode *wc_opcode);

#endif /* IWARP_IWV_OBJ_H */
