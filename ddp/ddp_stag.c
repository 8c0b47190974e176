/* SPDX-License-Identifier: MIT */
/*
 * ddp_stag.c - the STag table: which tagged buffers a peer may name, and the
 * checks a tagged reference must pass before a single octet is placed
 * (RFC 5041 §3.5, §7.1; RFC 5040 §5.1, §6.2).
 *
 * Theory of operation.  An STag is a 24-bit index and an 8-bit key
 * (stag = index << 8 | key).  The index selects one slot of a bounded array
 * allocated once at create time (index 0 is never handed out, so STag 0 is
 * never valid: RFC 5040 uses it as "no STag").  The key is what makes a stale
 * STag useless: every registration at a slot draws a fresh key from a small
 * PRNG seeded by the caller, and never the key last used at that slot, so an
 * STag that was deregistered or invalidated does not silently start naming the
 * next registration at the same index.  With 8 bits this is a guard against
 * mistakes and stale references, not a security boundary.
 *
 * Free slots: slots above `high` were never used; slots freed by
 * ddp_stag_dereg() go on a LIFO list threaded through the entries.  Creating
 * a table therefore costs two zeroed allocations and no per-slot setup.
 *
 * A registration covers tagged offsets [base_to, base_to + len) with
 * base_to + len <= 2^64 - 1 (the end must be representable).  Every range
 * test is written without forming a sum that could wrap: a peer controls
 * TO (64 bits) and the length, so `to + len` is never computed unchecked.
 *
 * Invalidation (RFC 5040 §6.2, Send with Invalidate; local invalidate): the
 * entry stays registered and keeps its key, but every access fails with
 * DDP_STAG_INVALID until ddp_stag_revalidate() gives the slot a new key.
 * Invalidating an already invalidated STag is IW_OK for a local request
 * (idempotent, like a fenced local invalidate retried by the consumer) and an
 * error for a remote one (the peer named an STag that is not valid).
 */
#include <iwarp/ddp.h>

#include "iw_alloc.h"

#define DDP_ACCESS_ALL                                                                             \
	(DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE |               \
	 DDP_ACCESS_REMOTE_INVALIDATE | DDP_ACCESS_REMOTE_ATOMIC)

struct ddp_stag_entry {
	bool registered;
	bool valid;    /* registered and not invalidated */
	bool key_used; /* last_key holds the key of an earlier registration */
	uint8_t key;   /* current key while registered */
	uint8_t last_key;
	uint32_t next_free; /* free-list link (an index; 0 = end) */
	uint32_t pd;
	uint32_t access;
	void *addr;
	uint64_t base_to;
	uint64_t len;
};

struct ddp_stag_table {
	uint32_t max_entries;
	uint32_t high;	    /* indices 1..high have been handed out at least once */
	uint32_t free_head; /* LIFO of freed indices (0 = empty) */
	uint32_t count;
	uint64_t rng;
	struct ddp_stag_entry *e; /* e[index - 1] */
};

/* splitmix64: small, fast, and every seed (including 0) gives a full-period stream. */
static uint64_t ddp_stag_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A random key, uniformly among the 255 values other than the slot's last key. */
static uint8_t ddp_stag_new_key(struct ddp_stag_table *t, struct ddp_stag_entry *e)
{
	uint64_t r = ddp_stag_rng_next(&t->rng);
	uint8_t key;

	if (!e->key_used)
		key = (uint8_t)(r >> 56);
	else
		key = (uint8_t)(e->last_key + 1 + (r >> 32) % 255);
	e->key = key;
	e->last_key = key;
	e->key_used = true;
	return key;
}

/* The index of the registered entry named by stag (index in range, key matching), or 0. */
static uint32_t ddp_stag_lookup(const struct ddp_stag_table *t, uint32_t stag)
{
	uint32_t index = DDP_STAG_INDEX(stag);

	if (!t || index == 0 || index > t->max_entries)
		return 0;
	if (!t->e[index - 1].registered || t->e[index - 1].key != DDP_STAG_KEY(stag))
		return 0;
	return index;
}

struct ddp_stag_table *ddp_stag_table_create(uint32_t max_entries, uint64_t seed)
{
	struct ddp_stag_table *t;

	if (max_entries == 0 || max_entries > DDP_STAG_INDEX_MAX)
		return NULL;
	t = iw_calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	/* calloc checks nmemb * size for overflow (matters only on 32-bit hosts). */
	t->e = iw_calloc(max_entries, sizeof(t->e[0]));
	if (!t->e) {
		iw_free(t);
		return NULL;
	}
	t->max_entries = max_entries;
	t->rng = seed;
	return t;
}

void ddp_stag_table_destroy(struct ddp_stag_table *t)
{
	if (!t)
		return;
	iw_free(t->e);
	iw_free(t);
}

int ddp_stag_reg(struct ddp_stag_table *t, uint32_t pd, void *addr, uint64_t base_to, uint64_t len,
		 uint32_t access, uint32_t *stag)
{
	struct ddp_stag_entry *e;
	uint32_t index;

	if (!t || !stag || (access & ~(uint32_t)DDP_ACCESS_ALL))
		return IW_EINVAL;
	if (len > UINT64_MAX - base_to)
		return IW_EINVAL;
	if (len > 0 && (!addr || len - 1 > UINTPTR_MAX - (uintptr_t)addr))
		return IW_EINVAL;

	if (t->free_head) {
		index = t->free_head;
		t->free_head = t->e[index - 1].next_free;
	} else if (t->high < t->max_entries) {
		index = ++t->high;
	} else {
		return IW_EDDP_STAG_TABLE_FULL;
	}

	e = &t->e[index - 1];
	e->registered = true;
	e->valid = true;
	e->next_free = 0;
	e->pd = pd;
	e->access = access;
	e->addr = addr;
	e->base_to = base_to;
	e->len = len;
	*stag = DDP_STAG_MAKE(index, ddp_stag_new_key(t, e));
	t->count++;
	return IW_OK;
}

int ddp_stag_dereg(struct ddp_stag_table *t, uint32_t stag)
{
	uint32_t index = ddp_stag_lookup(t, stag);
	struct ddp_stag_entry *e = index ? &t->e[index - 1] : NULL;

	if (!e)
		return IW_EDDP_STAG_UNKNOWN;
	/* Keep last_key/key_used: the next registration here must get another key. */
	e->registered = false;
	e->valid = false;
	e->addr = NULL;
	e->next_free = t->free_head;
	t->free_head = index;
	t->count--;
	return IW_OK;
}

int ddp_stag_invalidate(struct ddp_stag_table *t, uint32_t stag, uint32_t pd, bool remote,
			enum ddp_stag_check *why)
{
	uint32_t index = ddp_stag_lookup(t, stag);
	struct ddp_stag_entry *e = index ? &t->e[index - 1] : NULL;
	enum ddp_stag_check r = DDP_STAG_OK;

	if (!e)
		r = DDP_STAG_INVALID;
	else if (remote && !e->valid)
		r = DDP_STAG_INVALID;
	else if (remote && e->pd != pd)
		r = DDP_STAG_PD;
	else if (remote && !(e->access & DDP_ACCESS_REMOTE_INVALIDATE))
		r = DDP_STAG_ACCESS;
	if (why)
		*why = r;
	if (r != DDP_STAG_OK)
		return IW_EINVAL;
	e->valid = false;
	return IW_OK;
}

int ddp_stag_revalidate(struct ddp_stag_table *t, uint32_t stag, uint32_t *new_stag)
{
	uint32_t index = ddp_stag_lookup(t, stag);
	struct ddp_stag_entry *e = index ? &t->e[index - 1] : NULL;

	if (!new_stag)
		return IW_EINVAL;
	if (!e)
		return IW_EDDP_STAG_UNKNOWN;
	/* A new key even for a still-valid entry: the old STag must stop working. */
	e->valid = true;
	*new_stag = DDP_STAG_MAKE(index, ddp_stag_new_key(t, e));
	return IW_OK;
}

enum ddp_stag_check ddp_stag_check(const struct ddp_stag_table *t, uint32_t stag, uint32_t pd,
				   uint32_t access, uint64_t to, uint64_t len, void **dst)
{
	uint32_t index = ddp_stag_lookup(t, stag);
	const struct ddp_stag_entry *e = index ? &t->e[index - 1] : NULL;
	uint64_t off;

	if (!e || !e->valid)
		return DDP_STAG_INVALID;
	if (e->pd != pd)
		return DDP_STAG_PD;
	if ((e->access & access) != access)
		return DDP_STAG_ACCESS;
	/* Wrap before bounds: a range that wraps 2^64 is reported as such (RFC 5041 §7.2). */
	if (len > UINT64_MAX - to)
		return DDP_STAG_WRAP;
	if (to < e->base_to)
		return DDP_STAG_BOUNDS;
	off = to - e->base_to;
	if (off > e->len || len > e->len - off)
		return DDP_STAG_BOUNDS;
	if (dst)
		/* No offset on a NULL base (zero-length registration): NULL + 0 is undefined. */
		*dst = off ? (uint8_t *)e->addr + off : e->addr;
	return DDP_STAG_OK;
}

uint32_t ddp_stag_count(const struct ddp_stag_table *t)
{
	return t ? t->count : 0;
}
