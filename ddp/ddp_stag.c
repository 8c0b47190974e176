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
 * Free slots: a new registration takes a free slot drawn at random, not the
 * lowest one, so that its index is not predictable either: a peer that
 * guesses STags must guess the index as well as the key.  The draw is from
 * the first max(4096, 2 * registered + 2) indices (at most the table), so
 * that a small table stays dense in memory (the table is touched only where
 * it is used: slots above `high` never were) while at least half of the span
 * is free, and a few random probes find a slot; after 16 misses a scan from a
 * random start takes the first free one.  With 4096 slots and 255 keys a
 * blind guess names a live STag once in about a million tries (docs/rdmap.md
 * section 8 counts it).  Creating a table costs two zeroed allocations and no
 * per-slot setup.
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
 *
 * Fast registration and memory windows (ddp.h).  A fast-registration entry
 * owns a page array of max_pages, allocated once by ddp_stag_alloc(), so
 * ddp_stag_fast_reg() (run from a work request) never allocates; it copies
 * the consumer's list and keeps a virtually contiguous list as a plain range.
 * A window holds its own range, rights, PD and stream and resolves addresses
 * through the MR it is bound to; that MR counts its windows (mw_count) and
 * can be neither deregistered nor registered again while any is bound.  An
 * invalidated or freed window is unbound at once.
 *
 * A page array stays with its slot when the entry is freed (it is freed with
 * the table, or replaced by a larger one): RDMAP resolves a scattered target
 * once per segment header and places its payload later, so a consumer that
 * frees the entry in between must not leave RDMAP holding a freed array.
 */
#include <string.h>

#include <iwarp/ddp.h>

#include "iw_alloc.h"
#include "iw_bytes.h"

#define DDP_ACCESS_ALL                                                                             \
	(DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE |               \
	 DDP_ACCESS_REMOTE_INVALIDATE | DDP_ACCESS_REMOTE_ATOMIC | DDP_ACCESS_MW_BIND)
/* What a window may grant. */
#define DDP_ACCESS_MW                                                                              \
	(DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_INVALIDATE |         \
	 DDP_ACCESS_REMOTE_ATOMIC)

enum ddp_stag_kind {
	KIND_MR, /* ddp_stag_reg() */
	KIND_FR, /* ddp_stag_alloc(): fast registration */
	KIND_MW, /* ddp_stag_alloc_mw(): a type-2 memory window */
};

struct ddp_stag_entry {
	bool registered;
	bool valid;    /* registered and not invalidated */
	bool key_used; /* last_key holds the key of an earlier registration */
	uint8_t key;   /* current key while registered */
	uint8_t last_key;
	uint8_t kind;	/* enum ddp_stag_kind */
	bool scattered; /* FR: registered over a page list that is not contiguous */
	uint32_t pd;
	uint32_t access;
	void *addr; /* MR, contiguous FR: the octet at base_to; NULL otherwise */
	uint64_t base_to;
	uint64_t len;
	/* KIND_FR: the page list (kept by the slot when freed: see above) */
	uint64_t *pages;
	uint32_t pages_cap; /* entries allocated at pages */
	uint32_t max_pages; /* of this registration (ddp_stag_alloc) */
	uint32_t page_shift;
	uint64_t first_off;
	/* KIND_MW while bound: the stream and the MR's index */
	uint32_t stream;
	uint32_t mr;
	/* KIND_MR / KIND_FR: windows bound to it */
	uint32_t mw_count;
};

struct ddp_stag_table {
	uint32_t max_entries;
	uint32_t high; /* the highest index ever handed out: none above was touched */
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
	for (uint32_t i = 0; i < t->high; i++)
		iw_free(t->e[i].pages);
	iw_free(t->e);
	iw_free(t);
}

#define DDP_STAG_SPAN_MIN 4096u
#define DDP_STAG_PROBES	  16

/* Take a free index, drawn at random (see the header comment); 0 when full. */
static uint32_t ddp_stag_take(struct ddp_stag_table *t)
{
	uint32_t span, index;

	if (t->count >= t->max_entries)
		return 0;
	span = t->count < (UINT32_MAX - 2) / 2 ? 2 * t->count + 2 : UINT32_MAX;
	span = IW_MIN(IW_MAX(span, DDP_STAG_SPAN_MIN), t->max_entries);
	for (int i = 0; i < DDP_STAG_PROBES; i++) {
		index = 1 + (uint32_t)(ddp_stag_rng_next(&t->rng) % span);
		if (!t->e[index - 1].registered)
			goto found;
	}
	index = 1 + (uint32_t)(ddp_stag_rng_next(&t->rng) % t->max_entries);
	while (t->e[index - 1].registered)
		index = index == t->max_entries ? 1 : index + 1;
found:
	if (index > t->high)
		t->high = index;
	return index;
}

/* A fresh entry of `kind` at index (last_key/key_used kept: the key must change). */
static struct ddp_stag_entry *ddp_stag_init(struct ddp_stag_table *t, uint32_t index,
					    enum ddp_stag_kind kind, uint32_t pd)
{
	struct ddp_stag_entry *e = &t->e[index - 1];

	e->registered = true;
	e->valid = false;
	e->kind = (uint8_t)kind;
	e->scattered = false;
	e->pd = pd;
	e->access = 0;
	e->addr = NULL;
	e->base_to = 0;
	e->len = 0;
	e->max_pages = 0; /* pages/pages_cap stay with the slot */
	e->page_shift = 0;
	e->first_off = 0;
	e->stream = 0;
	e->mr = 0;
	e->mw_count = 0;
	t->count++;
	return e;
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
	index = ddp_stag_take(t);
	if (!index)
		return IW_EDDP_STAG_TABLE_FULL;
	e = ddp_stag_init(t, index, KIND_MR, pd);
	e->valid = true;
	e->access = access;
	e->addr = addr;
	e->base_to = base_to;
	e->len = len;
	*stag = DDP_STAG_MAKE(index, ddp_stag_new_key(t, e));
	return IW_OK;
}

int ddp_stag_alloc(struct ddp_stag_table *t, uint32_t pd, uint32_t max_pages, uint32_t *stag)
{
	struct ddp_stag_entry *e;
	uint64_t *pages = NULL;
	uint32_t index;

	if (!t || !stag || max_pages == 0 || max_pages > DDP_FAST_REG_MAX_PAGES)
		return IW_EINVAL;
	index = ddp_stag_take(t);
	if (!index)
		return IW_EDDP_STAG_TABLE_FULL;
	e = &t->e[index - 1];
	if (e->pages_cap < max_pages) {
		pages = iw_calloc(max_pages, sizeof(*pages));
		if (!pages)
			return IW_ENOMEM; /* the slot stays free: nothing was registered */
	}
	e = ddp_stag_init(t, index, KIND_FR, pd);
	if (pages) {
		iw_free(e->pages);
		e->pages = pages;
		e->pages_cap = max_pages;
	}
	e->max_pages = max_pages;
	*stag = DDP_STAG_MAKE(index, ddp_stag_new_key(t, e));
	return IW_OK;
}

bool ddp_stag_fast_reg_entry(const struct ddp_stag_table *t, uint32_t stag, uint32_t *max_pages)
{
	uint32_t index = DDP_STAG_INDEX(stag);

	if (!t || index == 0 || index > t->max_entries || !t->e[index - 1].registered ||
	    t->e[index - 1].kind != KIND_FR)
		return false;
	if (max_pages)
		*max_pages = t->e[index - 1].max_pages;
	return true;
}

int ddp_stag_alloc_mw(struct ddp_stag_table *t, uint32_t pd, uint32_t *stag)
{
	struct ddp_stag_entry *e;
	uint32_t index;

	if (!t || !stag)
		return IW_EINVAL;
	index = ddp_stag_take(t);
	if (!index)
		return IW_EDDP_STAG_TABLE_FULL;
	e = ddp_stag_init(t, index, KIND_MW, pd);
	*stag = DDP_STAG_MAKE(index, ddp_stag_new_key(t, e));
	return IW_OK;
}

/* A window stops referring to its MR. */
static void ddp_stag_unbind(struct ddp_stag_table *t, struct ddp_stag_entry *e)
{
	if (e->kind != KIND_MW || !e->mr)
		return;
	t->e[e->mr - 1].mw_count--;
	e->mr = 0;
	e->stream = 0;
	e->valid = false;
}

static int ddp_stag_release(struct ddp_stag_table *t, uint32_t index)
{
	struct ddp_stag_entry *e = &t->e[index - 1];

	if (e->mw_count)
		return IW_ESTATE;
	ddp_stag_unbind(t, e);
	/* Keep last_key/key_used: the next registration here must get another key. */
	e->registered = false;
	e->valid = false;
	e->addr = NULL;
	e->scattered = false;
	t->count--;
	return IW_OK;
}

int ddp_stag_dereg(struct ddp_stag_table *t, uint32_t stag)
{
	uint32_t index = ddp_stag_lookup(t, stag);

	if (!index)
		return IW_EDDP_STAG_UNKNOWN;
	return ddp_stag_release(t, index);
}

int ddp_stag_free_index(struct ddp_stag_table *t, uint32_t stag)
{
	uint32_t index = DDP_STAG_INDEX(stag);

	if (!t || index == 0 || index > t->max_entries || !t->e[index - 1].registered)
		return IW_EDDP_STAG_UNKNOWN;
	return ddp_stag_release(t, index);
}

static bool ddp_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int ddp_stag_fast_reg(struct ddp_stag_table *t, const struct ddp_fast_reg *fr)
{
	uint32_t index = fr ? DDP_STAG_INDEX(fr->stag) : 0;
	struct ddp_stag_entry *e;
	bool contiguous = true;
	uint64_t cover;

	if (!t || !fr)
		return IW_EINVAL;
	if (index == 0 || index > t->max_entries || !t->e[index - 1].registered ||
	    t->e[index - 1].kind != KIND_FR)
		return IW_EDDP_STAG_UNKNOWN;
	e = &t->e[index - 1];
	if (e->valid || e->mw_count)
		return IW_ESTATE;
	if (e->pd != fr->pd || (fr->access & ~(uint32_t)DDP_ACCESS_ALL))
		return IW_EINVAL;
	if (!fr->pages || fr->npages == 0 || fr->npages > e->max_pages)
		return IW_EINVAL;
	if (!ddp_pow2(fr->page_size) || fr->page_size < DDP_PAGE_SIZE_MIN ||
	    fr->page_size > DDP_PAGE_SIZE_MAX || fr->first_page_off >= fr->page_size)
		return IW_EINVAL;
	/* npages <= 2^16 and page_size <= 2^30: no overflow in 64 bits. */
	cover = (uint64_t)fr->npages * fr->page_size - fr->first_page_off;
	if (fr->length > cover || fr->length > UINT64_MAX - fr->iova)
		return IW_EINVAL;
	for (uint32_t i = 0; i < fr->npages; i++) {
		uint64_t pg = fr->pages[i];

		if (pg == 0 || (pg & (fr->page_size - 1)) ||
		    pg > (uint64_t)UINTPTR_MAX - (fr->page_size - 1))
			return IW_EINVAL;
		if (i && pg != fr->pages[i - 1] + fr->page_size)
			contiguous = false;
	}
	for (uint32_t i = 0; i < fr->npages; i++)
		e->pages[i] = fr->pages[i];
	e->page_shift = (uint32_t)__builtin_ctz(fr->page_size);
	e->first_off = fr->first_page_off;
	e->scattered = !contiguous;
	e->addr = contiguous ? (uint8_t *)(uintptr_t)fr->pages[0] + fr->first_page_off : NULL;
	e->access = fr->access;
	e->base_to = fr->iova;
	e->len = fr->length;
	e->key = DDP_STAG_KEY(fr->stag);
	e->last_key = e->key;
	e->key_used = true;
	e->valid = true;
	return IW_OK;
}

int ddp_stag_bind(struct ddp_stag_table *t, uint32_t mw_stag, uint32_t mr_stag, uint32_t pd,
		  uint32_t stream, uint64_t addr, uint64_t len, uint32_t access,
		  enum ddp_stag_check *why)
{
	uint32_t index = DDP_STAG_INDEX(mw_stag), mri = 0;
	struct ddp_stag_entry *e = NULL, *mr = NULL;
	enum ddp_stag_check r = DDP_STAG_OK;

	if (t && index && index <= t->max_entries && t->e[index - 1].registered &&
	    t->e[index - 1].kind == KIND_MW)
		e = &t->e[index - 1];
	if (e && len)
		mri = ddp_stag_lookup(t, mr_stag);
	if (mri)
		mr = &t->e[mri - 1];
	if (!e)
		r = DDP_STAG_INVALID;
	else if (e->pd != pd)
		r = DDP_STAG_PD;
	else if (stream == 0 || (e->valid && e->stream != stream))
		r = DDP_STAG_STREAM;
	else if (DDP_STAG_KEY(mw_stag) == e->key)
		r = DDP_STAG_INVALID;
	else if (len == 0)
		r = DDP_STAG_OK; /* unbind: no MR involved */
	else if (!mr || mr->kind == KIND_MW || !mr->valid)
		r = DDP_STAG_INVALID;
	else if (mr->pd != pd)
		r = DDP_STAG_PD;
	else if (!(mr->access & DDP_ACCESS_MW_BIND) || (access & ~(uint32_t)DDP_ACCESS_MW) ||
		 ((access & (DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_ATOMIC)) &&
		  !(mr->access & DDP_ACCESS_LOCAL_WRITE)))
		r = DDP_STAG_ACCESS;
	else if (len > UINT64_MAX - addr)
		r = DDP_STAG_WRAP;
	else if (addr < mr->base_to || addr - mr->base_to > mr->len ||
		 len > mr->len - (addr - mr->base_to))
		r = DDP_STAG_BOUNDS;
	if (why)
		*why = r;
	if (r != DDP_STAG_OK)
		return IW_EINVAL;
	ddp_stag_unbind(t, e);
	e->key = DDP_STAG_KEY(mw_stag);
	e->last_key = e->key;
	e->key_used = true;
	if (len == 0)
		return IW_OK;
	e->valid = true;
	e->stream = stream;
	e->mr = mri;
	e->base_to = addr;
	e->len = len;
	e->access = access;
	mr->mw_count++;
	return IW_OK;
}

static int ddp_stag_inv(struct ddp_stag_table *t, uint32_t stag, uint32_t pd, uint32_t stream,
			bool remote, bool local_pd, enum ddp_stag_check *why)
{
	uint32_t index = ddp_stag_lookup(t, stag);
	struct ddp_stag_entry *e = index ? &t->e[index - 1] : NULL;
	enum ddp_stag_check r = DDP_STAG_OK;

	if (!e)
		r = DDP_STAG_INVALID;
	else if (remote && !e->valid)
		r = DDP_STAG_INVALID;
	else if ((remote || local_pd) && e->pd != pd)
		r = DDP_STAG_PD;
	else if (remote && e->kind == KIND_MW && (stream == 0 || e->stream != stream))
		r = DDP_STAG_STREAM;
	else if (remote && !(e->access & DDP_ACCESS_REMOTE_INVALIDATE))
		r = DDP_STAG_ACCESS;
	if (why)
		*why = r;
	if (r != DDP_STAG_OK)
		return IW_EINVAL;
	ddp_stag_unbind(t, e);
	e->valid = false;
	return IW_OK;
}

int ddp_stag_invalidate(struct ddp_stag_table *t, uint32_t stag, uint32_t pd, bool remote,
			enum ddp_stag_check *why)
{
	return ddp_stag_inv(t, stag, pd, 0, remote, false, why);
}

int ddp_stag_invalidate_stream(struct ddp_stag_table *t, uint32_t stag, uint32_t pd,
			       uint32_t stream, bool remote, enum ddp_stag_check *why)
{
	return ddp_stag_inv(t, stag, pd, stream, remote, true, why);
}

int ddp_stag_revalidate(struct ddp_stag_table *t, uint32_t stag, uint32_t *new_stag)
{
	uint32_t index = ddp_stag_lookup(t, stag);
	struct ddp_stag_entry *e = index ? &t->e[index - 1] : NULL;

	if (!new_stag)
		return IW_EINVAL;
	if (!e)
		return IW_EDDP_STAG_UNKNOWN;
	/* A window becomes valid only by being bound; an unregistered FR entry has no memory. */
	if (e->kind == KIND_MW || (e->kind == KIND_FR && !e->valid))
		return IW_EINVAL;
	/* A new key even for a still-valid entry: the old STag must stop working. */
	e->valid = true;
	*new_stag = DDP_STAG_MAKE(index, ddp_stag_new_key(t, e));
	return IW_OK;
}

/* Range checks of [to, to + len) against [base, base + size). */
static enum ddp_stag_check ddp_range(uint64_t base, uint64_t size, uint64_t to, uint64_t len)
{
	/* Wrap before bounds: a range that wraps 2^64 is reported as such (RFC 5041 §7.2). */
	if (len > UINT64_MAX - to)
		return DDP_STAG_WRAP;
	if (to < base || to - base > size || len > size - (to - base))
		return DDP_STAG_BOUNDS;
	return DDP_STAG_OK;
}

enum ddp_stag_check ddp_stag_resolve(const struct ddp_stag_table *t, uint32_t stag, uint32_t pd,
				     uint32_t stream, uint32_t access, uint64_t to, uint64_t len,
				     struct ddp_stag_ref *ref)
{
	uint32_t index = ddp_stag_lookup(t, stag);
	const struct ddp_stag_entry *e = index ? &t->e[index - 1] : NULL;
	const struct ddp_stag_entry *m;
	enum ddp_stag_check r;
	uint64_t off;

	if (!e || !e->valid)
		return DDP_STAG_INVALID;
	if (e->pd != pd)
		return DDP_STAG_PD;
	if (e->kind == KIND_MW && (stream == 0 || e->stream != stream))
		return DDP_STAG_STREAM;
	/*
	 * DDP's own checks of a tagged buffer (RFC 5041 §7.1: valid STag,
	 * associated with the stream, base and bounds, TO wrap) come before the
	 * access right, which is RDMAP's to check (RFC 5040 §7.2, Remote
	 * Protection Error 0x02): a segment that fails both is a DDP error, as
	 * the layer that sees it first reports it.  The same order serves the
	 * source of a Read Request (all RDMAP codes there) so that one buffer
	 * gives one answer.
	 */
	r = ddp_range(e->base_to, e->len, to, len);
	if (r != DDP_STAG_OK)
		return r;
	if ((e->access & access) != access)
		return DDP_STAG_ACCESS;
	m = e;
	if (e->kind == KIND_MW) {
		/* Bound windows keep their MR registered (mw_count); it may be invalid. */
		m = &t->e[e->mr - 1];
		if (!m->valid)
			return DDP_STAG_INVALID;
	}
	if (!ref)
		return DDP_STAG_OK;
	off = to - m->base_to;
	if (m->scattered) {
		ref->addr = NULL;
		ref->pages = m->pages;
		ref->pg_off = m->first_off + off;
		ref->page_shift = m->page_shift;
	} else {
		/* No offset on a NULL base (zero-length registration): NULL + 0 is undefined. */
		ref->addr = off ? (uint8_t *)m->addr + off : m->addr;
		ref->pages = NULL;
		ref->pg_off = 0;
		ref->page_shift = 0;
	}
	return DDP_STAG_OK;
}

enum ddp_stag_check ddp_stag_check(const struct ddp_stag_table *t, uint32_t stag, uint32_t pd,
				   uint32_t access, uint64_t to, uint64_t len, void **dst)
{
	struct ddp_stag_ref ref;
	enum ddp_stag_check r = ddp_stag_resolve(t, stag, pd, 0, access, to, len, &ref);
	struct iovec one;
	uint64_t covered;

	if (r != DDP_STAG_OK || !dst)
		return r;
	if (!ddp_stag_ref_scattered(&ref)) {
		*dst = ref.addr;
		return DDP_STAG_OK;
	}
	/* One pointer only when the range lies in one piece of memory. */
	if (len == 0) {
		*dst = NULL;
		return DDP_STAG_OK;
	}
	ddp_stag_ref_spans(&ref, 0, len, &one, 1, &covered);
	if (covered != len)
		return DDP_STAG_BOUNDS;
	*dst = one.iov_base;
	return DDP_STAG_OK;
}

int ddp_stag_ref_spans(const struct ddp_stag_ref *r, uint64_t off, uint64_t len, struct iovec *iov,
		       int max, uint64_t *covered)
{
	uint64_t done = 0;
	int n = 0;

	if (!r->pages) {
		if (len && max > 0) {
			iov[0].iov_base = r->addr + off;
			iov[0].iov_len = (size_t)len;
			n = 1;
			done = len;
		}
	} else {
		uint64_t psize = 1ull << r->page_shift;

		while (done < len && n <= max) {
			uint64_t pos = r->pg_off + off + done;
			uint64_t in = pos & (psize - 1);
			uint64_t take = IW_MIN(len - done, psize - in);
			uint8_t *p = (uint8_t *)(uintptr_t)r->pages[pos >> r->page_shift] + in;

			/* Adjacent pages make one span. */
			if (n > 0 && (uint8_t *)iov[n - 1].iov_base + iov[n - 1].iov_len == p) {
				iov[n - 1].iov_len += (size_t)take;
			} else {
				if (n == max)
					break;
				iov[n].iov_base = p;
				iov[n].iov_len = (size_t)take;
				n++;
			}
			done += take;
		}
	}
	if (covered)
		*covered = done;
	return n;
}

void ddp_stag_ref_copy_in(const struct ddp_stag_ref *r, uint64_t off, const void *src, size_t n)
{
	const uint8_t *s = src;

	if (!r->pages) {
		if (n)
			memcpy(r->addr + off, s, n);
		return;
	}
	while (n) {
		uint64_t psize = 1ull << r->page_shift;
		uint64_t pos = r->pg_off + off;
		uint64_t in = pos & (psize - 1);
		size_t take = (size_t)IW_MIN((uint64_t)n, psize - in);

		memcpy((uint8_t *)(uintptr_t)r->pages[pos >> r->page_shift] + in, s, take);
		s += take;
		off += take;
		n -= take;
	}
}

void ddp_stag_ref_copy_out(const struct ddp_stag_ref *r, uint64_t off, void *dst, size_t n)
{
	uint8_t *d = dst;

	if (!r->pages) {
		if (n)
			memcpy(d, r->addr + off, n);
		return;
	}
	while (n) {
		uint64_t psize = 1ull << r->page_shift;
		uint64_t pos = r->pg_off + off;
		uint64_t in = pos & (psize - 1);
		size_t take = (size_t)IW_MIN((uint64_t)n, psize - in);

		memcpy(d, (const uint8_t *)(uintptr_t)r->pages[pos >> r->page_shift] + in, take);
		d += take;
		off += take;
		n -= take;
	}
}

uint32_t ddp_stag_count(const struct ddp_stag_table *t)
{
	return t ? t->count : 0;
}
