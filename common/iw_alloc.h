/* SPDX-License-Identifier: MIT */
/*
 * iw_alloc.h - the allocator hook.  Every allocation of the sans-I/O layers
 * (MPA, DDP, RDMAP) goes through these, so tests can inject failures
 * (failmalloc style) and embedders can supply their own allocator.  The
 * verbs layer and the RPC-over-RDMA transport use the C library's.
 */
#ifndef IW_ALLOC_H
#define IW_ALLOC_H

#include <stddef.h>

struct iw_allocator {
	void *(*malloc)(void *ctx, size_t n);
	void *(*calloc)(void *ctx, size_t nmemb, size_t n);
	void (*free)(void *ctx, void *p);
	void *ctx;
};

/* Install an allocator (NULL restores the C library's). */
void iw_allocator_set(const struct iw_allocator *a);
void *iw_malloc(size_t n);
void *iw_calloc(size_t nmemb, size_t n);
void iw_free(void *p);

#endif /* IW_ALLOC_H */
