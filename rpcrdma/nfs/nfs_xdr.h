/* SPDX-License-Identifier: MIT */
/*
 * nfs_xdr.h - a small bounded XDR reader (RFC 4506) over iw_cursor, and the
 * walk state shared by the NFS walkers (internal to rpcrdma/nfs/).
 *
 * Every get goes through the cursor, so the first overrun sets the sticky
 * error and every later get returns zeros; walkers test `xdr_bad()` at the
 * points where a value decides what comes next (a union discriminant, a loop
 * count) and once at the end.  Counted loops also stop as soon as the cursor
 * has failed, so a peer's huge count ends with the buffer, not with the count.
 */
#ifndef IWARP_NFS_XDR_H
#define IWARP_NFS_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iw_cursor.h"
#include <iwarp/rpcrdma_nfs.h>

/* Sticky "does not decode" error for values out of range (not an overrun). */
#define XDR_EBAD IW_EINVAL

static inline bool xdr_bad(const struct iw_cursor *c)
{
	return c->err != 0;
}

static inline void xdr_fail(struct iw_cursor *c)
{
	if (!c->err)
		c->err = XDR_EBAD;
}

static inline uint32_t xdr_u32(struct iw_cursor *c)
{
	return iw_cursor_get_be32(c);
}

static inline uint64_t xdr_u64(struct iw_cursor *c)
{
	return iw_cursor_get_be64(c);
}

/* XDR bool: 0 or 1, anything else does not decode. */
static inline bool xdr_bool(struct iw_cursor *c)
{
	uint32_t v = xdr_u32(c);
	if (v > 1)
		xdr_fail(c);
	return v == 1;
}

static inline size_t xdr_pad(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Skip n octets rounded up to a multiple of 4 (fixed-length opaque). */
static inline void xdr_skip(struct iw_cursor *c, size_t n)
{
	(void)iw_cursor_take(c, xdr_pad(n), IW_EAGAIN);
}

/* Skip a variable-length opaque / string of at most max octets; returns its length. */
static inline uint32_t xdr_opaque(struct iw_cursor *c, uint32_t max)
{
	uint32_t n = xdr_u32(c);
	if (n > max)
		xdr_fail(c);
	xdr_skip(c, n);
	return n;
}

#define XDR_NOMAX UINT32_MAX

/* Skip a counted array of fixed-size elements (elem octets, a multiple of 4). */
static inline uint32_t xdr_array_fixed(struct iw_cursor *c, uint32_t max, size_t elem)
{
	uint32_t n = xdr_u32(c);
	if (n > max)
		xdr_fail(c);
	(void)iw_cursor_take(c, (size_t)n * elem, IW_EAGAIN);
	return n;
}

/* The state of one walk. */
struct nfs_walk {
	struct iw_cursor c;
	rpcrdma_item_fn fn; /* NULL: plan only, items are taken as present */
	void *arg;
	unsigned index; /* next slot number */
};

static inline void nfs_walk_init(struct nfs_walk *w, const uint8_t *body, size_t len,
				 rpcrdma_item_fn fn, void *arg)
{
	iw_cursor_init(&w->c, body, len);
	w->fn = fn;
	w->arg = arg;
	w->index = 0;
}

/*
 * A DDP-eligible opaque at the cursor: read its length word, report it, and
 * skip its data + padding if the callback says they are in the stream.
 * Returns 0, the callback's negative code, or IW_ERPC_RPC.
 */
static inline int nfs_walk_item(struct nfs_walk *w, uint32_t max)
{
	uint32_t n = xdr_u32(&w->c);
	if (xdr_bad(&w->c) || n > max || w->c.off > UINT32_MAX)
		return IW_ERPC_RPC;
	int r = 1;
	if (w->fn) {
		struct rpcrdma_item it = {
			.index = w->index,
			.valid = true,
			.offset = (uint32_t)w->c.off,
			.length = n,
		};
		r = w->fn(w->arg, &it);
		if (r < 0)
			return r;
	}
	w->index++;
	if (r > 0)
		xdr_skip(&w->c, n);
	return xdr_bad(&w->c) ? IW_ERPC_RPC : 0;
}

/* A result slot whose union arm has no data (the operation failed). */
static inline int nfs_walk_void_slot(struct nfs_walk *w)
{
	int r = 0;
	if (w->fn) {
		struct rpcrdma_item it = {.index = w->index, .valid = false};
		r = w->fn(w->arg, &it);
	}
	w->index++;
	return r < 0 ? r : 0;
}

/* ---- reply plan accumulation ---- */

/* Largest READ / READ_PLUS / READDIR count planned for: 1 MiB, the largest
 * rsize Linux clients and servers negotiate.  A larger count is clamped:
 * a server never returns more than its own maximum transfer size. */
#define NFS_PLAN_DATA_MAX (1u << 20)
/* NFSv3/v4 link text planned for (the usual PATH_MAX / NFS3 MAXPATHLEN). */
#define NFS_PLAN_PATH_MAX 4096u

struct nfs_plan {
	struct rpcrdma_reply_plan *plan;
	uint64_t inline_sum;
};

static inline uint32_t nfs_plan_clamp(uint32_t count)
{
	return count > NFS_PLAN_DATA_MAX ? NFS_PLAN_DATA_MAX : count;
}

/* A DDP-eligible result of at most max octets: a slot, or inline past the
 * Write-list limit (max + XDR padding). */
static inline void nfs_plan_slot(struct nfs_plan *p, uint32_t max)
{
	struct rpcrdma_reply_plan *pl = p->plan;
	if (pl->n_items < RPCRDMA_MAX_WRITE_CHUNKS)
		pl->item_max[pl->n_items++] = max;
	else
		p->inline_sum += (uint64_t)max + 3;
}

static inline void nfs_plan_add(struct nfs_plan *p, uint64_t n)
{
	p->inline_sum += n;
}

static inline void nfs_plan_unpredictable(struct nfs_plan *p)
{
	p->plan->unpredictable = true;
}

/* Set max_inline from the sum; unpredictable plans report 0. */
static inline void nfs_plan_finish(struct nfs_plan *p)
{
	if (p->plan->unpredictable || p->inline_sum > UINT32_MAX) {
		p->plan->unpredictable = true;
		p->plan->max_inline = 0;
	} else {
		p->plan->max_inline = (uint32_t)p->inline_sum;
	}
}

/* nfs_v3.c: NFSv2 and NFSv3 */
int nfs_v3_walk_call(uint32_t vers, uint32_t proc, struct nfs_walk *w);
int nfs_v3_walk_reply(uint32_t vers, uint32_t proc, struct nfs_walk *w);
int nfs_v3_plan(uint32_t vers, uint32_t proc, struct iw_cursor *c, struct nfs_plan *p);
/* nfs_v4.c: NFSv4.x COMPOUND */
int nfs_v4_walk_call(struct nfs_walk *w, struct nfs_plan *p);
int nfs_v4_walk_reply(struct nfs_walk *w);

#endif /* IWARP_NFS_XDR_H */
