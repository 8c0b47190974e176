/* SPDX-License-Identifier: MIT */
/* iw_alloc.c - allocator hook (see iw_alloc.h). */
#include "iw_alloc.h"

#include <stdlib.h>

static void *libc_malloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static void *libc_calloc(void *ctx, size_t nmemb, size_t n)
{
	(void)ctx;
	return calloc(nmemb, n);
}

static void libc_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static const struct iw_allocator libc_allocator = {libc_malloc, libc_calloc, libc_free, NULL};
static struct iw_allocator cur = {libc_malloc, libc_calloc, libc_free, NULL};

void iw_allocator_set(const struct iw_allocator *a)
{
	cur = a ? *a : libc_allocator;
}

void *iw_malloc(size_t n)
{
	return cur.malloc(cur.ctx, n);
}

void *iw_calloc(size_t nmemb, size_t n)
{
	return cur.calloc(cur.ctx, nmemb, n);
}

void iw_free(void *p)
{
	if (p)
		cur.free(cur.ctx, p);
}
