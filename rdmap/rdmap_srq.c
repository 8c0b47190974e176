/* SPDX-License-Identifier: MIT */
/*
 * rdmap_srq.c - shared receive queues for the queue-pair engine (rdmap_qp.h,
 * "Shared receive queues").
 *
 * Theory of operation.  An SRQ is a bounded ring of posted receive work
 * requests (struct rdmap_recv_wr), allocated once at create time.  The
 * consumer posts to its tail (rdmap_srq_post); a QP created with
 * rdmap_qp_config.srq takes from its head when the first DDP segment of a new
 * untagged QN 0 message arrives (RFC 5041 §4.3, §5.3: each such message
 * consumes one buffer of queue 0; RFC 5040 §5.3 says a Send lands in the next
 * posted receive).  From then on the receive belongs to that QP: it is placed,
 * invalidated and completed (or flushed) there, exactly like one of the QP's
 * own receives.  What is still in the ring belongs to nobody: a QP that fails
 * takes none of it with it, and rdmap_srq_flush() completes it only when the
 * consumer asks (when it tears the SRQ down).
 *
 * The limit follows ibverbs (ibv_modify_srq(3), IBV_SRQ_LIMIT and
 * IBV_EVENT_SRQ_LIMIT_REACHED): setting a non-zero limit arms it; the first
 * time a QP takes a receive and leaves fewer than `limit` in the ring, the
 * limit fires once (rdmap_srq_limit_reached() then returns true, once) and is
 * disarmed until the consumer sets it again.  Posting never fires it.
 *
 * The users count is the number of QPs created on the SRQ (rdmap_qp_create
 * and rdmap_qp_destroy keep it); rdmap_srq_destroy() refuses while any remain,
 * because those QPs hold a pointer to it.  Not thread safe: the caller locks.
 */
#include <string.h>

#include <iwarp/rdmap_qp.h>

#include "iw_alloc.h"
#include "rdmap_srq_int.h"

#define SRQ_DEPTH_MAX 65536u

struct rdmap_srq {
	struct rdmap_recv_wr *ring;
	uint32_t depth, head, count;
	uint32_t limit;
	bool armed; /* a non-zero limit was set and has not fired since */
	bool fired; /* fired and not yet reported by rdmap_srq_limit_reached() */
	uint32_t users;
};

int rdmap_srq_create(uint32_t depth, struct rdmap_srq **out)
{
	struct rdmap_srq *srq;

	if (!out)
		return IW_EINVAL;
	*out = NULL;
	if (depth < 1 || depth > SRQ_DEPTH_MAX)
		return IW_EINVAL;
	srq = iw_calloc(1, sizeof(*srq));
	if (!srq)
		return IW_ENOMEM;
	srq->ring = iw_calloc(depth, sizeof(*srq->ring));
	if (!srq->ring) {
		iw_free(srq);
		return IW_ENOMEM;
	}
	srq->depth = depth;
	*out = srq;
	return IW_OK;
}

int rdmap_srq_destroy(struct rdmap_srq *srq)
{
	if (!srq)
		return IW_OK;
	if (srq->users)
		return IW_ESTATE;
	iw_free(srq->ring);
	iw_free(srq);
	return IW_OK;
}

int rdmap_srq_post(struct rdmap_srq *srq, const struct rdmap_recv_wr *wr)
{
	if (!srq || !wr || wr->num_sge < 0 || wr->num_sge > RDMAP_MAX_SGE)
		return IW_EINVAL;
	if (srq->count == srq->depth)
		return IW_ENOSPC;
	srq->ring[(srq->head + srq->count) % srq->depth] = *wr;
	srq->count++;
	return IW_OK;
}

uint32_t rdmap_srq_count(const struct rdmap_srq *srq)
{
	return srq ? srq->count : 0;
}

void rdmap_srq_set_limit(struct rdmap_srq *srq, uint32_t limit)
{
	if (!srq)
		return;
	srq->limit = limit;
	srq->armed = limit != 0;
	srq->fired = false;
}

bool rdmap_srq_limit_reached(struct rdmap_srq *srq)
{
	bool f;

	if (!srq)
		return false;
	f = srq->fired;
	srq->fired = false;
	return f;
}

int rdmap_srq_flush(struct rdmap_srq *srq, struct rdmap_wc *wc, int n)
{
	int i = 0;

	if (!srq || !wc)
		return 0;
	while (i < n && srq->count) {
		const struct rdmap_recv_wr *r = &srq->ring[srq->head];

		memset(&wc[i], 0, sizeof(wc[i]));
		wc[i].wr_id = r->wr_id;
		wc[i].status = RDMAP_WC_WR_FLUSH_ERR;
		wc[i].opcode = RDMAP_WC_RECV;
		wc[i].err = IW_ERDMAP_FLUSHED;
		i++;
		srq->head = (srq->head + 1) % srq->depth;
		srq->count--;
	}
	return i;
}

/* Internal (rdmap_srq_int.h) */

uint32_t rdmap_srq_depth(const struct rdmap_srq *srq)
{
	return srq->depth;
}

void rdmap_srq_use(struct rdmap_srq *srq, int d)
{
	srq->users = (uint32_t)((int)srq->users + d);
}

bool rdmap_srq_take(struct rdmap_srq *srq, struct rdmap_recv_wr *wr)
{
	if (!srq->count)
		return false;
	*wr = srq->ring[srq->head];
	srq->head = (srq->head + 1) % srq->depth;
	srq->count--;
	if (srq->armed && srq->count < srq->limit) {
		srq->armed = false;
		srq->fired = true;
	}
	return true;
}
