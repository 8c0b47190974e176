/* SPDX-License-Identifier: MIT */
/*
 * iwc.h - the private contract between our drop-in libibverbs.so.1
 * (compat/ibverbs/) and librdmacm.so.1 (compat/rdmacm/).  Neither is part of
 * the iwarp API: programs see only rdma-core's <infiniband/verbs.h> and
 * <rdma/rdma_cma.h>, whose ABI (Debian 12, rdma-core 44) these libraries
 * implement over iwv.h and iwcm.h (libiwarp.so.0).
 *
 * Every ibverbs object the shim hands out is the public struct of
 * <infiniband/verbs.h> embedded as the FIRST member of an iwc_* struct that
 * also holds the iwarp object behind it, so both libraries get from one to
 * the other without a lookup.  The ibv_context is the last member of a
 * struct verbs_context (rdma-core's verbs_get_ctx() finds the extended ops
 * in front of it), so iwc_context embeds the verbs_context first.
 *
 * Each iwarp object's user-context pointer points back at its iwc_* wrapper
 * (iwv_cq.cq_context -> struct iwc_cq, iwv_qp.qp_context -> struct iwc_qp,
 * iwv_srq.srq_context -> struct iwc_srq), so completions and events found
 * through libiwarp map back in O(1); the program's own context pointers live
 * in the public ibv_* structs (ibv_cq.cq_context, ibv_qp.qp_context, ...).
 */
#ifndef IWARP_COMPAT_IWC_H
#define IWARP_COMPAT_IWC_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#define IWC_DEVICE_NAME			    "iwarp0"

#define iwc_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

struct iwc_qp;

struct iwc_context {
	struct verbs_context vctx; /* vctx.context is the program's ibv_context */
	struct iwv_context *iwv;
	pthread_mutex_t qp_lock; /* guards qps */
	struct iwc_qp *qps;	 /* every QP of the context (iwc_qp_by_num) */
};

struct iwc_pd {
	struct ibv_pd pub;
	struct iwv_pd *iwv;
};

struct iwc_mr {
	struct ibv_mr pub;
	struct iwv_mr *iwv;
};

/* A type-2 memory window: pub.rkey follows iwv->rkey (a bind posted through
 * ibv_post_send gives both the work request's bind_mw.rkey). */
struct iwc_mw {
	struct ibv_mw pub;
	struct iwv_mw *iwv;
};

struct iwc_channel {
	struct ibv_comp_channel pub; /* pub.fd is the iwarp channel's fd */
	struct iwv_comp_channel *iwv;
};

struct iwc_cq {
	struct ibv_cq pub;
	struct iwv_cq *iwv;
};

struct iwc_srq {
	struct ibv_srq pub;
	struct iwv_srq *iwv;
};

struct iwc_qp {
	struct ibv_qp pub; /* pub.qp_num == iwv->qp_num */
	struct iwv_qp *iwv;
	struct iwc_qp *next; /* iwc_context.qps */
};

/* A zeroed wrapper object of `size` octets; NULL with errno ENOMEM when
 * there is no memory (as the calls it serves report it). */
static inline void *iwc_zalloc(size_t size)
{
	void *p = calloc(1, size);

	if (!p)
		errno = ENOMEM;
	return p;
}

/* Call fn(obj) again while it says EBUSY, for up to a second: ibverbs'
 * destroy calls wait until the program has acknowledged its events, which
 * another thread of the program may still be doing (rping's CM thread). */
static inline int iwc_retry_busy(int (*fn)(void *), void *obj)
{
	struct timespec ms = {.tv_nsec = 1000000};
	int r = fn(obj);

	for (int i = 0; r == EBUSY && i < 1000; i++) {
		nanosleep(&ms, NULL);
		r = fn(obj);
	}
	return r;
}

static inline struct iwc_context *iwc_ctx(struct ibv_context *c)
{
	return iwc_container_of(c, struct iwc_context, vctx.context);
}
static inline struct iwc_pd *iwc_pd(struct ibv_pd *p)
{
	return (struct iwc_pd *)p;
}
static inline struct iwc_mr *iwc_mr(struct ibv_mr *p)
{
	return (struct iwc_mr *)p;
}
static inline struct iwc_mw *iwc_mw(struct ibv_mw *p)
{
	return (struct iwc_mw *)p;
}
static inline struct iwc_cq *iwc_cq(struct ibv_cq *p)
{
	return (struct iwc_cq *)p;
}
static inline struct iwc_qp *iwc_qp(struct ibv_qp *p)
{
	return (struct iwc_qp *)p;
}

/*
 * Exported by libibverbs.so.1 in the version node IWARP_COMPAT_PRIVATE_1, for
 * librdmacm.so.1 only.
 */

/*
 * The one context librdmacm gives every cm_id (rdma-core opens each device
 * once per process and shares it): opened on first use, with an engine
 * thread (programs such as ib_write_lat spin on memory and never call into
 * the library), and again in a child after fork().  NULL with errno on
 * failure.
 */
struct ibv_context *iwc_shared_context(void);

/* The QP of `ctx` whose qp_num is qp_num (a QP the program created itself and
 * named in rdma_conn_param.qp_num, as `rping -q` does), or NULL. */
struct ibv_qp *iwc_qp_by_num(struct ibv_context *ctx, uint32_t qp_num);

/* After the CM connected or tore down the QP behind `qp`: refresh qp->state
 * from libiwarp (ibv_qp.state is read directly by some programs).  `qp` may
 * be one the program destroyed meanwhile, from another thread (rping's CM
 * thread gets DISCONNECTED while main() destroys the QP): it is looked up
 * in ctx's QPs, not dereferenced, and left alone when gone. */
void iwc_qp_sync_state(struct ibv_context *ctx, struct ibv_qp *qp);

/* Free the wrapper of a QP whose iwarp QP the CM has destroyed already
 * (rdma_destroy_qp: iwcm_destroy_qp destroys it). */
void iwc_qp_release(struct ibv_qp *qp);
/* Take `qp` off (listed false) or put it back on its context's list of QPs
 * (iwc_qp_by_num, iwc_qp_sync_state): off before its iwarp QP is destroyed. */
void iwc_qp_listed(struct ibv_qp *qp, bool listed);

#endif /* IWARP_COMPAT_IWC_H */
