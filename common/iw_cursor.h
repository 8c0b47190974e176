/* SPDX-License-Identifier: MIT */
/*
 * iw_cursor.h - bounded read/write cursor with a sticky error.
 *
 * Decoders of peer input read through a cursor: every get checks the bound,
 * and the first overrun sets `err` and makes every later get return zeros, so
 * a decoder can read a whole structure and test the error once at the end
 * ("check, then parse").  Encoders use the same cursor to write.
 */
#ifndef IW_CURSOR_H
#define IW_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "iw_bytes.h"
#include <iwarp/iw_err.h>

struct iw_cursor {
	uint8_t *p; /* start of the buffer (const for readers) */
	size_t len; /* buffer length */
	size_t off; /* next octet */
	int err;    /* IW_OK, or the first error (IW_EAGAIN reading, IW_ENOSPC writing) */
};

static inline void iw_cursor_init(struct iw_cursor *c, const void *p, size_t len)
{
	c->p = (uint8_t *)(uintptr_t)p;
	c->len = len;
	c->off = 0;
	c->err = IW_OK;
}

static inline size_t iw_cursor_left(const struct iw_cursor *c)
{
	return c->err ? 0 : c->len - c->off;
}

/* Reserve n octets: a pointer to them, or NULL (and the sticky error) if they do not fit. */
static inline uint8_t *iw_cursor_take(struct iw_cursor *c, size_t n, int err)
{
	if (c->err || n > c->len - c->off) {
		if (!c->err)
			c->err = err;
		return NULL;
	}
	uint8_t *r = c->p + c->off;
	c->off += n;
	return r;
}

static inline uint8_t iw_cursor_get8(struct iw_cursor *c)
{
	const uint8_t *p = iw_cursor_take(c, 1, IW_EAGAIN);
	return p ? p[0] : 0;
}

static inline uint16_t iw_cursor_get_be16(struct iw_cursor *c)
{
	const uint8_t *p = iw_cursor_take(c, 2, IW_EAGAIN);
	return p ? iw_get_be16(p) : 0;
}

static inline uint32_t iw_cursor_get_be32(struct iw_cursor *c)
{
	const uint8_t *p = iw_cursor_take(c, 4, IW_EAGAIN);
	return p ? iw_get_be32(p) : 0;
}

static inline uint64_t iw_cursor_get_be64(struct iw_cursor *c)
{
	const uint8_t *p = iw_cursor_take(c, 8, IW_EAGAIN);
	return p ? iw_get_be64(p) : 0;
}

static inline const uint8_t *iw_cursor_get_bytes(struct iw_cursor *c, size_t n)
{
	return iw_cursor_take(c, n, IW_EAGAIN);
}

static inline void iw_cursor_put8(struct iw_cursor *c, uint8_t v)
{
	uint8_t *p = iw_cursor_take(c, 1, IW_ENOSPC);
	if (p)
		p[0] = v;
}

static inline void iw_cursor_put_be16(struct iw_cursor *c, uint16_t v)
{
	uint8_t *p = iw_cursor_take(c, 2, IW_ENOSPC);
	if (p)
		iw_put_be16(p, v);
}

static inline void iw_cursor_put_be32(struct iw_cursor *c, uint32_t v)
{
	uint8_t *p = iw_cursor_take(c, 4, IW_ENOSPC);
	if (p)
		iw_put_be32(p, v);
}

static inline void iw_cursor_put_be64(struct iw_cursor *c, uint64_t v)
{
	uint8_t *p = iw_cursor_take(c, 8, IW_ENOSPC);
	if (p)
		iw_put_be64(p, v);
}

static inline void iw_cursor_put_bytes(struct iw_cursor *c, const void *src, size_t n)
{
	uint8_t *p = iw_cursor_take(c, n, IW_ENOSPC);
	if (p && n)
		memcpy(p, src, n);
}

#endif /* IW_CURSOR_H */
