/* SPDX-License-Identifier: MIT */
/*
 * iwd_tcp.c - TCP reassembly: captured segments -> each connection's two byte
 * streams, in order, every octet once.  Sans-I/O: segments in, callbacks out.
 *
 * Callback contract (struct iwd_tcp_ops):
 *   - open() comes before any data() or gap() of the connection; it may
 *     return NULL, and then the connection is followed (statistics, state)
 *     but no data(), gap() or close() is made with it.
 *   - Per direction, the data() and gap() calls cover stream offsets
 *     0, 1, 2, ... in order, with no hole and no overlap: each call starts
 *     where the one before ended.  Every captured octet is delivered at most
 *     once; octets the capture lacks are reported by gap(), never guessed.
 *   - close() comes exactly once per direction, after its last data()/gap().
 *   - After the second close() of a connection no call names its pointer.
 *   - Callbacks must not call back into the same struct iwd_tcp.
 *   - iwd_tcp_destroy() makes no call: iwd_tcp_finish() first for the
 *     closes (and the connection pointers' last use).
 *
 * Theory of operation.  Connections live in a hash table keyed by the two
 * (address, port) ends, either orientation finding the same entry, at most
 * IWD_TCP_MAX_CONNS of them.  An entry whose two directions have ended stays
 * (so a late ACK or retransmitted FIN does not open a connection of its own)
 * until the table needs its place.
 *
 * Each direction numbers its octets from 0: the octet after the SYN (the SYN
 * takes one sequence number, RFC 9293 §3.4), or without a SYN in the capture
 * the first sequence number seen.  A 32-bit sequence number becomes a 64-bit
 * stream offset by its signed distance (modulo 2^32, RFC 9293 §3.4) from the
 * next offset expected, so the stream can run past 2^32 octets.
 *
 * A segment is cut to what is new: octets before the next expected offset
 * were delivered already, octets already held arrived first and win (the
 * retransmission may differ; the capture's first copy is what the receiver
 * most likely took).  What starts at the next expected offset is delivered
 * at once, then whatever held segments became contiguous; what starts beyond
 * is copied and held, sorted, disjoint.  The octets held per direction
 * (plus a fixed charge per held piece, so that tiny segments cannot make
 * the list long) are bounded by max_ooo: past it the earliest hole is given
 * up as a gap and delivery goes on.  A segment the snaplen cut delivers its
 * captured part and then a gap for the rest (held as a "missing" piece when
 * it is out of order).
 *
 * A direction ends with FIN once every octet before the FIN (RFC 9293 §3.6;
 * the FIN's sequence number follows the last data octet) is delivered or
 * given up; octets past the FIN are not data.  RST (RFC 9293 §3.5.3) ends the
 * connection: each direction delivers what it holds, holes as gaps, and
 * closes.  A SYN with a new ISN on known ends starts a new connection (the
 * old one, if still open, delivers what it holds and closes REUSED); the same
 * ISN again is a retransmitted SYN or SYN-ACK.  iwd_tcp_finish() empties
 * every direction the same way and closes it END.
 */
#include <stdlib.h>
#include <string.h>

#include "iw_list.h"
#include "iwd.h"

#define IWD_TCP_MAX_OOO_DEFAULT (4u << 20)
#define IWD_TCP_HASH_MIN	256
/* What a held piece costs against max_ooo besides its octets. */
#define IWD_TCP_HOLD_COST 64

/* Octets [off, off + len) held out of order. */
struct tcp_hold {
	struct tcp_hold *next;
	uint64_t off;
	uint32_t len;
	bool missing; /* cut by the snaplen: a gap when reached */
	bool nodata;  /* the connection's user pointer is NULL: octets not kept */
	uint8_t data[];
};

struct tcp_dir {
	bool started; /* `base` is known */
	bool syn;     /* a SYN was seen: `isn` is known */
	bool fin;     /* a FIN was seen: `fin_off` is known */
	bool closed;
	uint32_t isn;
	uint32_t base;	  /* the sequence number of stream offset 0 */
	uint64_t next;	  /* the next offset to deliver */
	uint64_t fin_off; /* the FIN's offset: the stream's length */
	struct tcp_hold *head, *tail;
	size_t held; /* octets held plus IWD_TCP_HOLD_COST per piece */
};

struct tcp_conn {
	struct tcp_conn *hnext; /* hash chain */
	struct iw_list link;	/* t->open (creation order) or t->closed (closing order) */
	uint32_t hash;
	struct iwd_flow flow;
	void *user;
	struct tcp_dir d[2];
};

struct iwd_tcp {
	const struct iwd_tcp_ops *ops;
	void *user;
	size_t max_ooo;
	struct tcp_conn **bucket;
	size_t nbucket; /* a power of 2 */
	size_t nconn;	/* entries in the table, open or closed */
	struct iw_list open, closed;
	uint64_t next_id;
	uint32_t seed;
	struct iwd_tcp_stats st;
	/* the segment being processed: what callbacks are told */
	uint64_t frame, ts_ns;
};

/* ---------------------------------------------------------------------- */
/* The table                                                              */
/* ---------------------------------------------------------------------- */

static int end_cmp(const uint8_t *a, uint16_t pa, const uint8_t *b, uint16_t pb)
{
	int c = memcmp(a, b, 16);
	if (c != 0)
		return c;
	return pa < pb ? -1 : pa > pb;
}

static uint32_t mix(uint32_t h, uint32_t v)
{
	h ^= v;
	h *= 0x9e3779b1u;
	return h ^ h >> 15;
}

/* The same for both orientations: the smaller end is hashed first. */
static uint32_t tuple_hash(const struct iwd_tcp *t, int af, const uint8_t *a, uint16_t pa,
			   const uint8_t *b, uint16_t pb)
{
	if (end_cmp(a, pa, b, pb) > 0) {
		const uint8_t *x = a;
		uint16_t px = pa;
		a = b;
		pa = pb;
		b = x;
		pb = px;
	}
	uint32_t h = mix(t->seed, (uint32_t)af);
	for (int i = 0; i < 16; i += 4) {
		h = mix(h, (uint32_t)a[i] << 24 | (uint32_t)a[i + 1] << 16 |
				   (uint32_t)a[i + 2] << 8 | a[i + 3]);
		h = mix(h, (uint32_t)b[i] << 24 | (uint32_t)b[i + 1] << 16 |
				   (uint32_t)b[i + 2] << 8 | b[i + 3]);
	}
	return mix(h, (uint32_t)pa << 16 | pb);
}

/* The entry of the segment's ends and which end sent it (*end), or NULL. */
static struct tcp_conn *conn_find(const struct iwd_tcp *t, const struct iwd_seg *s, uint32_t h,
				  int *end)
{
	for (struct tcp_conn *c = t->bucket[h & (t->nbucket - 1)]; c; c = c->hnext) {
		const struct iwd_flow *f = &c->flow;
		if (c->hash != h || f->af != s->af)
			continue;
		if (f->port[0] == s->sport && f->port[1] == s->dport &&
		    memcmp(f->addr[0], s->src, 16) == 0 && memcmp(f->addr[1], s->dst, 16) == 0) {
			*end = 0;
			return c;
		}
		if (f->port[1] == s->sport && f->port[0] == s->dport &&
		    memcmp(f->addr[1], s->src, 16) == 0 && memcmp(f->addr[0], s->dst, 16) == 0) {
			*end = 1;
			return c;
		}
	}
	return NULL;
}

static void table_grow(struct iwd_tcp *t)
{
	size_t n = t->nbucket * 2;
	struct tcp_conn **b = calloc(n, sizeof(*b));
	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < t->nbucket; i++) {
		struct tcp_conn *c = t->bucket[i];
		while (c) {
			struct tcp_conn *nx = c->hnext;
			c->hnext = b[c->hash & (n - 1)];
			b[c->hash & (n - 1)] = c;
			c = nx;
		}
	}
	free(t->bucket);
	t->bucket = b;
	t->nbucket = n;
}

static void hold_free_all(struct tcp_dir *d)
{
	struct tcp_hold *h = d->head;
	while (h) {
		struct tcp_hold *nx = h->next;
		free(h);
		h = nx;
	}
	d->head = d->tail = NULL;
	d->held = 0;
}

/* Unlink from the table and its list, and free. */
static void conn_free(struct iwd_tcp *t, struct tcp_conn *c)
{
	struct tcp_conn **pp = &t->bucket[c->hash & (t->nbucket - 1)];
	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	iw_list_del(&c->link);
	hold_free_all(&c->d[0]);
	hold_free_all(&c->d[1]);
	free(c);
	t->nconn--;
}

/* ---------------------------------------------------------------------- */
/* Delivery                                                               */
/* ---------------------------------------------------------------------- */

/* Octets [next, next + n) of `dir`: data (p), or missing from the capture. */
static void emit(struct iwd_tcp *t, struct tcp_conn *c, int dir, const uint8_t *p, uint64_t n,
		 bool missing)
{
	struct tcp_dir *d = &c->d[dir];
	if (n == 0)
		return;
	if (missing) {
		t->st.gaps++;
		t->st.gap_octets += n;
		if (c->user && t->ops->gap)
			t->ops->gap(c->user, dir, d->next, n, t->ts_ns, t->frame);
	} else if (c->user && t->ops->data && p) {
		t->ops->data(c->user, dir, d->next, p, (size_t)n, t->ts_ns, t->frame);
	}
	d->next += n;
}

/* Deliver the held pieces that start at the next offset. */
static void drain(struct iwd_tcp *t, struct tcp_conn *c, int dir)
{
	struct tcp_dir *d = &c->d[dir];
	struct tcp_hold *h;
	while ((h = d->head) != NULL && h->off == d->next) {
		d->head = h->next;
		if (!d->head)
			d->tail = NULL;
		d->held -= h->len + IWD_TCP_HOLD_COST;
		emit(t, c, dir, h->nodata ? NULL : h->data, h->len, h->missing);
		free(h);
	}
}

/* Give up the earliest hole: a gap up to the first held piece, then drain. */
static void skip_hole(struct iwd_tcp *t, struct tcp_conn *c, int dir)
{
	struct tcp_dir *d = &c->d[dir];
	emit(t, c, dir, NULL, d->head->off - d->next, true);
	drain(t, c, dir);
}

/*
 * Everything held, holes as gaps; then, with a FIN seen, the octets up to it
 * that never came.
 */
static void flush(struct iwd_tcp *t, struct tcp_conn *c, int dir)
{
	struct tcp_dir *d = &c->d[dir];
	while (d->head)
		skip_hole(t, c, dir);
	if (d->fin && d->fin_off > d->next)
		emit(t, c, dir, NULL, d->fin_off - d->next, true);
}

/* Returns true when this was the connection's last open direction. */
static bool dir_close(struct iwd_tcp *t, struct tcp_conn *c, int dir, enum iwd_close_how how)
{
	struct tcp_dir *d = &c->d[dir];
	if (d->closed)
		return false;
	d->closed = true;
	hold_free_all(d);
	if (c->user && t->ops->close)
		t->ops->close(c->user, dir, how, t->ts_ns);
	if (!c->d[1 - dir].closed)
		return false;
	/* Both ended: the entry stays to absorb late segments; nothing more is said. */
	c->user = NULL;
	iw_list_del(&c->link);
	iw_list_add_tail(&t->closed, &c->link);
	return true;
}

/* Close every open direction of `c` with `how`, flushing first when asked. */
static void conn_end(struct iwd_tcp *t, struct tcp_conn *c, enum iwd_close_how how, bool deliver)
{
	for (int dir = 0; dir < 2; dir++) {
		if (c->d[dir].closed)
			continue;
		if (deliver)
			flush(t, c, dir);
		dir_close(t, c, dir, how);
	}
}

/* ---------------------------------------------------------------------- */
/* One direction's stream                                                 */
/* ---------------------------------------------------------------------- */

#define ADD_DUP 1 /* some octets had been delivered or held already */
#define ADD_OOO 2 /* some octets were held out of order */

static struct tcp_hold *hold_new(uint64_t off, uint64_t len, const uint8_t *p, bool keep)
{
	bool copy = p && keep;
	struct tcp_hold *h = malloc(sizeof(*h) + (copy ? len : 0));
	if (!h)
		return NULL;
	h->next = NULL;
	h->off = off;
	h->len = (uint32_t)len;
	h->missing = p == NULL;
	h->nodata = !copy;
	if (copy)
		memcpy(h->data, p, len);
	return h;
}

/*
 * Hold [s, e) (data p, or missing if p is NULL), s beyond the next offset,
 * around the pieces already held: those arrived first and keep their octets.
 */
static int hold_add(struct tcp_conn *c, struct tcp_dir *d, uint64_t s, uint64_t e, const uint8_t *p)
{
	int r = 0;
	struct tcp_hold **link = &d->head;
	/* the common case, a segment after the last one held: no walk */
	if (d->tail && s >= d->tail->off + d->tail->len)
		link = &d->tail->next;
	while (s < e) {
		struct tcp_hold *h = *link;
		if (h && h->off + h->len <= s) {
			link = &h->next;
			continue;
		}
		if (!h || s < h->off) {
			uint64_t end = h && h->off < e ? h->off : e;
			struct tcp_hold *n = hold_new(s, end - s, p, c->user != NULL);
			if (!n)
				return r; /* out of memory: never delivered, no hole made */
			n->next = h;
			*link = n;
			if (!h)
				d->tail = n;
			d->held += n->len + IWD_TCP_HOLD_COST;
			r |= ADD_OOO;
			if (p)
				p += end - s;
			s = end;
			link = &n->next;
			continue;
		}
		/* h covers s: its octets stand */
		uint64_t he = h->off + h->len;
		r |= p ? ADD_DUP : 0;
		if (p)
			p += (he < e ? he : e) - s;
		s = he;
		link = &h->next;
	}
	return r;
}

/*
 * Octets [s, s + n) of direction `dir` (s may be negative: before the
 * stream's start), data p or missing (p NULL).
 */
static int dir_add(struct iwd_tcp *t, struct tcp_conn *c, int dir, int64_t s, uint64_t n,
		   const uint8_t *p)
{
	struct tcp_dir *d = &c->d[dir];
	int r = 0;
	if (n == 0)
		return 0;
	int64_t e = s + (int64_t)n;
	int64_t next = (int64_t)d->next;
	if (d->fin && e > (int64_t)d->fin_off) /* past the FIN: not stream octets */
		e = (int64_t)d->fin_off;
	if (e <= next)
		return p ? ADD_DUP : 0;
	if (s < next) {
		if (p)
			p += next - s;
		s = next;
		r |= p ? ADD_DUP : 0;
	}
	if (s > next)
		return r | hold_add(c, d, (uint64_t)s, (uint64_t)e, p);

	/* In order: deliver, pausing where a held piece (which arrived first) starts. */
	while (s < e) {
		int64_t lim = e;
		if (d->head && (int64_t)d->head->off < lim)
			lim = (int64_t)d->head->off;
		if (lim > s) {
			emit(t, c, dir, p, (uint64_t)(lim - s), p == NULL);
			if (p)
				p += lim - s;
			s = lim;
		}
		drain(t, c, dir);
		next = (int64_t)d->next;
		if (s < next && s < e) {
			r |= p ? ADD_DUP : 0;
			if (p)
				p += (next < e ? next : e) - s;
			s = next;
		}
	}
	return r;
}

/* Past max_ooo: give up the earliest holes until the held octets fit. */
static void enforce_bound(struct iwd_tcp *t, struct tcp_conn *c, int dir)
{
	struct tcp_dir *d = &c->d[dir];
	while (d->held > t->max_ooo && d->head)
		skip_hole(t, c, dir);
}

/* The FIN at `off` (the first one seen counts). */
static void fin_set(struct tcp_dir *d, uint64_t off)
{
	if (d->fin)
		return;
	d->fin = true;
	d->fin_off = off < d->next ? d->next : off;
	/* held octets past it are not part of the stream */
	struct tcp_hold **link = &d->head, *h;
	d->tail = NULL;
	while ((h = *link) != NULL) {
		if (h->off >= d->fin_off) {
			*link = h->next;
			d->held -= h->len + IWD_TCP_HOLD_COST;
			free(h);
			continue;
		}
		if (h->off + h->len > d->fin_off) {
			d->held -= h->off + h->len - d->fin_off;
			h->len = (uint32_t)(d->fin_off - h->off);
		}
		d->tail = h;
		link = &h->next;
	}
}

/* ---------------------------------------------------------------------- */
/* Connections                                                            */
/* ---------------------------------------------------------------------- */

/* Signed distance of `seq` from the next offset, modulo 2^32 (RFC 9293 §3.4). */
static int64_t seq_to_off(const struct tcp_dir *d, uint32_t seq)
{
	uint32_t delta = (seq - d->base) - (uint32_t)d->next;
	int64_t sd = delta < 0x80000000u ? (int64_t)delta : (int64_t)delta - 0x100000000;
	return (int64_t)d->next + sd;
}

static void dir_start(struct tcp_dir *d, const struct iwd_seg *s)
{
	if (s->flags & IWD_TCP_SYN) {
		d->syn = true;
		d->isn = s->seq;
		d->base = s->seq + 1;
	} else {
		d->base = s->seq;
	}
	d->started = true;
}

static struct tcp_conn *conn_new(struct iwd_tcp *t, const struct iwd_seg *s, uint32_t h, int *end)
{
	if (t->nconn >= IWD_TCP_MAX_CONNS) {
		if (iw_list_empty(&t->closed))
			return NULL;
		conn_free(t, iw_container_of(t->closed.next, struct tcp_conn, link));
	}
	struct tcp_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	/* End 0 is the client: the SYN's sender, the SYN-ACK's receiver. */
	bool synack = (s->flags & (IWD_TCP_SYN | IWD_TCP_ACK)) == (IWD_TCP_SYN | IWD_TCP_ACK);
	int e = synack ? 1 : 0;
	struct iwd_flow *f = &c->flow;
	f->id = ++t->next_id;
	f->af = s->af;
	memcpy(f->addr[e], s->src, 16);
	memcpy(f->addr[1 - e], s->dst, 16);
	f->port[e] = s->sport;
	f->port[1 - e] = s->dport;
	f->syn_seen = (s->flags & IWD_TCP_SYN) != 0;
	c->hash = h;
	c->hnext = t->bucket[h & (t->nbucket - 1)];
	t->bucket[h & (t->nbucket - 1)] = c;
	iw_list_add_tail(&t->open, &c->link);
	t->nconn++;
	t->st.connections++;
	if (t->nconn > t->nbucket && t->nbucket < IWD_TCP_MAX_CONNS)
		table_grow(t);
	c->user = t->ops->open ? t->ops->open(t->user, f, s->ts_ns) : NULL;
	*end = e;
	return c;
}

/*
 * A SYN from end `e` of `c`: does it belong to this connection?  It does if
 * it repeats the ISN known, or the direction has not started (the handshake's
 * other half), or it is the late copy of the SYN a mid-stream start missed.
 */
static bool syn_belongs(struct tcp_conn *c, int e, uint32_t seq)
{
	struct tcp_dir *d = &c->d[e];
	if (d->syn)
		return d->isn == seq;
	if (!d->started)
		return true;
	return d->base == seq + 1;
}

void iwd_tcp_segment(struct iwd_tcp *t, const struct iwd_seg *s)
{
	int e;
	t->st.segments++;
	t->frame = s->frame;
	t->ts_ns = s->ts_ns;

	uint32_t h = tuple_hash(t, s->af, s->src, s->sport, s->dst, s->dport);
	struct tcp_conn *c = conn_find(t, s, h, &e);
	if (c && (s->flags & IWD_TCP_SYN) && !syn_belongs(c, e, s->seq)) {
		/* A new connection on the same ends (RFC 9293 §3.10.7.4 would
		 * challenge it; a capture just shows what followed). */
		conn_end(t, c, IWD_CLOSE_REUSED, true);
		conn_free(t, c);
		c = NULL;
	}
	if (!c) {
		c = conn_new(t, s, h, &e);
		if (!c) {
			t->st.ignored++;
			return;
		}
	}
	struct tcp_dir *d = &c->d[e];
	if (!d->started) {
		dir_start(d, s);
	} else if ((s->flags & IWD_TCP_SYN) && !d->syn) {
		d->syn = true; /* the late SYN of a mid-stream start */
		d->isn = s->seq;
	}
	if (s->flags & IWD_TCP_RST) {
		conn_end(t, c, IWD_CLOSE_RST, true);
		return;
	}
	if (d->closed) {
		/* after its FIN (or the connection's end): a retransmission, or an ACK */
		if (s->wirelen > 0 || s->len > 0)
			t->st.retransmitted++;
		return;
	}

	/* Data starts after the SYN's sequence number (RFC 9293 §3.4). */
	uint32_t len = s->payload ? s->len : 0;
	uint32_t wirelen = s->wirelen > s->len ? s->wirelen : s->len;
	int64_t off = seq_to_off(d, s->seq + ((s->flags & IWD_TCP_SYN) ? 1 : 0));
	int r = 0;
	if (len > 0)
		r |= dir_add(t, c, e, off, len, s->payload);
	if (wirelen > len)
		r |= dir_add(t, c, e, off + len, wirelen - len, NULL);
	if (r & ADD_DUP)
		t->st.retransmitted++;
	if (r & ADD_OOO) {
		t->st.out_of_order++;
		enforce_bound(t, c, e);
	}
	if ((s->flags & IWD_TCP_FIN) && off + (int64_t)wirelen >= 0)
		fin_set(d, (uint64_t)(off + (int64_t)wirelen));
	if (d->fin && d->next >= d->fin_off)
		dir_close(t, c, e, IWD_CLOSE_FIN);
}

/* ---------------------------------------------------------------------- */
/* The instance                                                           */
/* ---------------------------------------------------------------------- */

static const struct iwd_tcp_ops no_ops;

struct iwd_tcp *iwd_tcp_create(const struct iwd_tcp_ops *ops, void *user, size_t max_ooo)
{
	struct iwd_tcp *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->bucket = calloc(IWD_TCP_HASH_MIN, sizeof(*t->bucket));
	if (!t->bucket) {
		free(t);
		return NULL;
	}
	t->nbucket = IWD_TCP_HASH_MIN;
	t->ops = ops ? ops : &no_ops;
	t->user = user;
	t->max_ooo = max_ooo ? max_ooo : IWD_TCP_MAX_OOO_DEFAULT;
	iw_list_init(&t->open);
	iw_list_init(&t->closed);
	/* Not a keyed hash, but a capture cannot aim its tuples at one chain
	 * computed in advance. */
	uintptr_t a = (uintptr_t)t;
	t->seed = mix((uint32_t)a, (uint32_t)((uint64_t)a >> 32));
	return t;
}

void iwd_tcp_finish(struct iwd_tcp *t, uint64_t ts_ns)
{
	t->ts_ns = ts_ns;
	while (!iw_list_empty(&t->open)) {
		struct tcp_conn *c = iw_container_of(t->open.next, struct tcp_conn, link);
		conn_end(t, c, IWD_CLOSE_END, true);
	}
}

void iwd_tcp_get_stats(const struct iwd_tcp *t, struct iwd_tcp_stats *s)
{
	*s = t->st;
}

void iwd_tcp_destroy(struct iwd_tcp *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbucket; i++) {
		struct tcp_conn *c = t->bucket[i];
		while (c) {
			struct tcp_conn *nx = c->hnext;
			hold_free_all(&c->d[0]);
			hold_free_all(&c->d[1]);
			free(c);
			c = nx;
		}
	}
	free(t->bucket);
	free(t);
}
