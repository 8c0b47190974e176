/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_wire.c - the RPC-over-RDMA version 1 transport header (RFC 8166
 * §4.1.2, §4.2, §4.3), its decode-error actions (RFC 8166 §4.5, §4.6) and the
 * RFC 8797 connection private data with our extension block.  Sans-I/O: bytes
 * in, a fixed-size struct out, and back.
 *
 * Theory of operation.
 *
 * Every field is a 32-bit big-endian XDR word (RFC 4506 §3, §4.1; RFC 8166
 * §2.2.4); the 64-bit segment offset is two words, high word first (XDR hyper,
 * RFC 4506 §4.5).  The header is
 *
 *   xid | vers | credits | proc | body
 *
 * and the first four words keep their places in every version (RFC 8166 §7).
 * The body of RDMA_MSG and RDMA_NOMSG is three chunk lists (RDMA_MSGP puts
 * rdma_align and rdma_thresh in front of the same three):
 *
 *   Read list    { 1, position, handle, length, offset hi, offset lo } ... 0
 *   Write list   { 1, nseg, nseg x { handle, length, offset hi, offset lo } } ... 0
 *   Reply chunk  0  |  1, nseg, nseg x { handle, length, offset hi, offset lo }
 *
 * so "no chunks" is three zero words and the smallest header 7 words = 28
 * octets (RFC 8166 §4.7).  RDMA_DONE has no body (16 octets); RDMA_ERROR has
 * rdma_err and, for ERR_VERS, rdma_vers_low/high (20 or 28 octets).
 *
 * Decoding is "check, then parse" (after Linux svcrdma): the same walker runs
 * twice over a bounded cursor.  The first pass copies no segment; it counts
 * every list entry against the RPCRDMA_MAX_* limits before the entry's body is
 * even looked at, checks every discriminator (0 or 1, anything else is an XDR
 * error), the Read positions, and that the buffer holds every word.
 * Only if the whole header passed does the second pass copy segments into the
 * caller's struct.  A peer-supplied count therefore never indexes or sizes
 * anything: the struct is fixed-size and there is no allocation at all.
 *
 * Read chunks.  On the wire the Read list is a flat list of read segments; a
 * Read chunk is a run of consecutive segments with the same Position (RFC 8166
 * §3.4.5).  Positions are octet offsets into the unreduced Payload stream, so
 * they must be multiples of 4 (XDR alignment), and since chunks replace XDR
 * items in stream order their positions cannot go backwards.  A segment whose
 * position equals the current chunk's joins it; a larger position starts a new
 * chunk; a smaller one (which is also the only way to meet an earlier chunk's
 * position again after a different one) is IW_ERPC_POSITION.  The encoder
 * accepts only what the decoder would give back unchanged: chunk positions
 * multiples of 4 and strictly increasing, every Read chunk at least one
 * segment, so decode(encode(h)) == h for every header encode accepts.
 *
 * Lengths (RFC 8166 §4.5 says a message shorter than 28 octets is discarded;
 * Linux answers with 20-octet ERR_CHUNK and we read RDMA_DONE as 16):
 *   < 16 octets                              IW_ERPC_SHORT (nothing trusted)
 *   rdma_vers != 1                           IW_ERPC_SHORT under 28 octets (a
 *                                            foreign version's rules are unknown,
 *                                            so the general rule applies), else
 *                                            IW_ERPC_VERS - except RDMA_ERROR /
 *                                            ERR_VERS itself, whose layout is
 *                                            frozen for all versions (RFC 8166
 *                                            §7) and which echoes the failing
 *                                            request's rdma_vers (§4.5): it
 *                                            decodes whatever its version.
 *   RDMA_MSG / NOMSG / MSGP under 28         IW_ERPC_SHORT
 *   RDMA_ERROR under 20, ERR_VERS under 28   IW_ERPC_SHORT
 *   a list running off the end               IW_ERPC_XDR
 *
 * What a responder does with each error is rpcrdma_err_action (RFC 8166 §4.5,
 * §4.6): ERR_VERS for a version it does not speak, ERR_CHUNK for any XDR-level
 * fault of a version-1 header (bad procedure, bad discriminator, truncated
 * list, over our limits, RDMA_NOMSG without chunks, bad position, XID
 * mismatch, RDMA_MSGP, an undecodable RPC header in the Payload stream),
 * silent discard when the header is too short to trust its XID or is an
 * undecodable RDMA_ERROR.
 *
 * CM private data (RFC 8797): eight octets - magic 0xf6ab0e18, version 1,
 * flags (0x01 = Send With Invalidate welcome), max send and max receive size
 * each as one octet (size / 1024 - 1, so 1 KiB .. 256 KiB).  Our extension
 * block (rpcrdma_wire.h) may follow; Linux reads eight octets and ignores the
 * rest.  Anything else - no data, a foreign format, a different version - is
 * "absent", and both sizes fall back to the 1024-octet default (RFC 8797;
 * RFC 8166 §3.3.3).
 */
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "iw_bytes.h"
#include "iw_cursor.h"

#define RPCRDMA_FIXED_LEN   16 /* xid, vers, credits, proc */
#define RPCRDMA_SEG_LEN	    16 /* handle, length, offset (2 words) */
#define RPCRDMA_RSEG_LEN    20 /* position + segment */
#define RPCRDMA_MSGP_EXTRA  8  /* rdma_align, rdma_thresh */
#define RPCRDMA_CM_SIZE_MAX (256u * 1024u)

/* ---------------------------------------------------------------------- */
/* Builders                                                                 */
/* ---------------------------------------------------------------------- */

void rpcrdma_hdr_init(struct rpcrdma_hdr *h, uint32_t xid, uint32_t credits, uint32_t proc)
{
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = RPCRDMA_VERSION;
	h->credits = credits;
	h->proc = proc;
}

/* Append seg to chunk c, which must own the tail of the segment pool. */
static int chunk_append(struct rpcrdma_hdr *h, struct rpcrdma_chunk *c,
			const struct rpcrdma_segment *seg)
{
	if ((size_t)c->first + c->nseg != h->nsegs)
		return IW_EINVAL; /* another chunk was started since: segments must stay contiguous */
	if (c->nseg >= RPCRDMA_MAX_CHUNK_SEGS || h->nsegs >= RPCRDMA_MAX_HDR_SEGS)
		return IW_ERPC_LIMIT;
	h->segs[h->nsegs++] = *seg;
	c->nseg++;
	return IW_OK;
}

int rpcrdma_hdr_add_read(struct rpcrdma_hdr *h, bool new_chunk, uint32_t position,
			 const struct rpcrdma_segment *seg)
{
	struct rpcrdma_chunk *c;

	if (!seg)
		return IW_EINVAL; /* a Read chunk has at least one segment */
	if (new_chunk || h->n_read == 0) {
		if (h->n_read >= RPCRDMA_MAX_READ_CHUNKS || h->nsegs >= RPCRDMA_MAX_HDR_SEGS)
			return IW_ERPC_LIMIT;
		c = &h->read[h->n_read];
		c->position = position;
		c->first = h->nsegs;
		c->nseg = 0;
		h->n_read++;
	} else {
		c = &h->read[h->n_read - 1];
	}
	return chunk_append(h, c, seg);
}

int rpcrdma_hdr_add_write(struct rpcrdma_hdr *h, bool new_chunk, const struct rpcrdma_segment *seg)
{
	struct rpcrdma_chunk *c;

	if (new_chunk || !seg || h->n_write == 0) {
		if (h->n_write >= RPCRDMA_MAX_WRITE_CHUNKS)
			return IW_ERPC_LIMIT;
		c = &h->write[h->n_write];
		c->position = 0;
		c->first = h->nsegs;
		c->nseg = 0;
		h->n_write++;
	} else {
		c = &h->write[h->n_write - 1];
	}
	return seg ? chunk_append(h, c, seg) : IW_OK;
}

int rpcrdma_hdr_add_reply(struct rpcrdma_hdr *h, const struct rpcrdma_segment *seg)
{
	if (!h->has_reply) {
		h->has_reply = true;
		h->reply.position = 0;
		h->reply.first = h->nsegs;
		h->reply.nseg = 0;
	}
	return seg ? chunk_append(h, &h->reply, seg) : IW_OK;
}

uint64_t rpcrdma_chunk_len(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *c)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < c->nseg && (size_t)c->first + i < RPCRDMA_MAX_HDR_SEGS; i++)
		sum += h->segs[c->first + i].length;
	return sum;
}

/* ---------------------------------------------------------------------- */
/* Encode                                                                   */
/* ---------------------------------------------------------------------- */

static bool chunk_ok(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *c)
{
	return c->nseg <= RPCRDMA_MAX_CHUNK_SEGS && (size_t)c->first + c->nseg <= h->nsegs;
}

/*
 * Octets of the three lists, or 0 if the struct could not come back from
 * rpcrdma_hdr_decode unchanged (see the theory of operation).
 */
static size_t lists_size(const struct rpcrdma_hdr *h)
{
	size_t n = 3 * 4, total = 0;

	if (h->n_read > RPCRDMA_MAX_READ_CHUNKS || h->n_write > RPCRDMA_MAX_WRITE_CHUNKS ||
	    h->nsegs > RPCRDMA_MAX_HDR_SEGS)
		return 0;
	for (size_t i = 0; i < h->n_read; i++) {
		const struct rpcrdma_chunk *c = &h->read[i];

		if (!chunk_ok(h, c) || c->nseg == 0 || c->position % 4 ||
		    (i > 0 && c->position <= h->read[i - 1].position))
			return 0;
		n += c->nseg * (4 + RPCRDMA_RSEG_LEN);
		total += c->nseg;
	}
	for (size_t i = 0; i < h->n_write; i++) {
		const struct rpcrdma_chunk *c = &h->write[i];

		if (!chunk_ok(h, c))
			return 0;
		n += 8 + c->nseg * RPCRDMA_SEG_LEN;
		total += c->nseg;
	}
	if (h->has_reply) {
		if (!chunk_ok(h, &h->reply))
			return 0;
		n += 4 + h->reply.nseg * RPCRDMA_SEG_LEN;
		total += h->reply.nseg;
	}
	if (total > RPCRDMA_MAX_HDR_SEGS)
		return 0;
	/* RFC 8166 §4.2.4: an RDMA_NOMSG carries its message in a chunk. */
	if (h->proc == RDMA_NOMSG && h->n_read == 0 && h->n_write == 0 && !h->has_reply)
		return 0;
	return n;
}

size_t rpcrdma_hdr_size(const struct rpcrdma_hdr *h)
{
	size_t n;

	switch (h->proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
	case RDMA_MSGP:
		n = lists_size(h);
		if (!n)
			return 0;
		return RPCRDMA_FIXED_LEN + (h->proc == RDMA_MSGP ? RPCRDMA_MSGP_EXTRA : 0) + n;
	case RDMA_DONE:
		return RPCRDMA_FIXED_LEN;
	case RDMA_ERROR:
		if (h->err == ERR_CHUNK)
			return RPCRDMA_HDR_ERR_CHUNK;
		if (h->err == ERR_VERS)
			return RPCRDMA_HDR_ERR_VERS;
		return 0;
	default:
		return 0;
	}
}

static void put_seg(struct iw_cursor *c, const struct rpcrdma_segment *s)
{
	iw_cursor_put_be32(c, s->handle);
	iw_cursor_put_be32(c, s->length);
	iw_cursor_put_be64(c, s->offset);
}

static void put_counted(struct iw_cursor *cur, const struct rpcrdma_hdr *h,
			const struct rpcrdma_chunk *c)
{
	iw_cursor_put_be32(cur, c->nseg);
	for (size_t j = 0; j < c->nseg; j++)
		put_seg(cur, &h->segs[c->first + j]);
}

int rpcrdma_hdr_encode(const struct rpcrdma_hdr *h, void *buf, size_t cap)
{
	size_t need = rpcrdma_hdr_size(h);
	struct iw_cursor c;

	if (!need)
		return IW_EINVAL;
	if (need > cap)
		return IW_ENOSPC; /* checked up front: nothing is written at all */
	iw_cursor_init(&c, buf, need);
	iw_cursor_put_be32(&c, h->xid);
	iw_cursor_put_be32(&c, h->vers);
	iw_cursor_put_be32(&c, h->credits);
	iw_cursor_put_be32(&c, h->proc);
	switch (h->proc) {
	case RDMA_MSGP:
		iw_cursor_put_be32(&c, h->msgp_align);
		iw_cursor_put_be32(&c, h->msgp_thresh);
		/* fall through */
	case RDMA_MSG:
	case RDMA_NOMSG:
		for (size_t i = 0; i < h->n_read; i++) {
			const struct rpcrdma_chunk *r = &h->read[i];

			for (size_t j = 0; j < r->nseg; j++) {
				iw_cursor_put_be32(&c, 1);
				iw_cursor_put_be32(&c, r->position);
				put_seg(&c, &h->segs[r->first + j]);
			}
		}
		iw_cursor_put_be32(&c, 0);
		for (size_t i = 0; i < h->n_write; i++) {
			iw_cursor_put_be32(&c, 1);
			put_counted(&c, h, &h->write[i]);
		}
		iw_cursor_put_be32(&c, 0);
		iw_cursor_put_be32(&c, h->has_reply);
		if (h->has_reply)
			put_counted(&c, h, &h->reply);
		break;
	case RDMA_ERROR:
		iw_cursor_put_be32(&c, h->err);
		if (h->err == ERR_VERS) {
			iw_cursor_put_be32(&c, h->vers_low);
			iw_cursor_put_be32(&c, h->vers_high);
		}
		break;
	default: /* RDMA_DONE: no body */
		break;
	}
	if (c.err || c.off != need)
		return IW_EINVAL; /* unreachable: rpcrdma_hdr_size and this switch agree */
	return (int)need;
}

/* ---------------------------------------------------------------------- */
/* Decode                                                                   */
/* ---------------------------------------------------------------------- */

/* One XDR discriminator of an optional-data list: 0, 1, or an XDR error. */
static int get_disc(struct iw_cursor *c, bool *more)
{
	uint32_t d = iw_cursor_get_be32(c);

	if (c->err)
		return IW_ERPC_XDR;
	if (d > 1)
		return IW_ERPC_XDR;
	*more = d == 1;
	return IW_OK;
}

static void get_seg(struct iw_cursor *c, struct rpcrdma_segment *s)
{
	s->handle = iw_cursor_get_be32(c);
	s->length = iw_cursor_get_be32(c);
	s->offset = iw_cursor_get_be64(c);
}

/*
 * A counted array of plain segments (a Write chunk or the Reply chunk).  The
 * count is checked against the limits before a single segment is read.
 */
static int walk_counted(struct iw_cursor *c, struct rpcrdma_hdr *h, struct rpcrdma_chunk *ch,
			bool fill)
{
	uint32_t nseg = iw_cursor_get_be32(c);
	struct rpcrdma_segment s;

	if (c->err)
		return IW_ERPC_XDR;
	if (nseg > RPCRDMA_MAX_CHUNK_SEGS || nseg > (uint32_t)(RPCRDMA_MAX_HDR_SEGS - h->nsegs))
		return IW_ERPC_LIMIT;
	if (nseg * RPCRDMA_SEG_LEN > iw_cursor_left(c))
		return IW_ERPC_XDR;
	ch->position = 0;
	ch->first = h->nsegs;
	ch->nseg = (uint16_t)nseg;
	for (uint32_t i = 0; i < nseg; i++) {
		get_seg(c, &s);
		if (fill)
			h->segs[h->nsegs] = s;
		h->nsegs++;
	}
	return IW_OK;
}

/*
 * Walk the three lists from the cursor.  Counts go into h (n_read, n_write,
 * has_reply, nsegs and the chunk descriptors, all bounded by the limits);
 * segment contents only when fill is set.
 */
static int walk_lists(struct iw_cursor *c, struct rpcrdma_hdr *h, bool fill)
{
	struct rpcrdma_segment s;
	bool more;
	int err;

	/* Read list: flat read segments, grouped by position into chunks. */
	for (;;) {
		uint32_t pos;

		if ((err = get_disc(c, &more)))
			return err;
		if (!more)
			break;
		if (h->nsegs >= RPCRDMA_MAX_HDR_SEGS)
			return IW_ERPC_LIMIT;
		pos = iw_cursor_get_be32(c);
		get_seg(c, &s);
		if (c->err)
			return IW_ERPC_XDR;
		if (pos % 4)
			return IW_ERPC_POSITION;
		if (h->n_read == 0 || pos > h->read[h->n_read - 1].position) {
			struct rpcrdma_chunk *ch;

			if (h->n_read >= RPCRDMA_MAX_READ_CHUNKS)
				return IW_ERPC_LIMIT;
			ch = &h->read[h->n_read++];
			ch->position = pos;
			ch->first = h->nsegs;
			ch->nseg = 0;
		} else if (pos < h->read[h->n_read - 1].position) {
			return IW_ERPC_POSITION;
		}
		if (h->read[h->n_read - 1].nseg >= RPCRDMA_MAX_CHUNK_SEGS)
			return IW_ERPC_LIMIT;
		h->read[h->n_read - 1].nseg++;
		if (fill)
			h->segs[h->nsegs] = s;
		h->nsegs++;
	}

	/* Write list: chunks, each a counted array of segments. */
	for (;;) {
		if ((err = get_disc(c, &more)))
			return err;
		if (!more)
			break;
		if (h->n_write >= RPCRDMA_MAX_WRITE_CHUNKS)
			return IW_ERPC_LIMIT;
		if ((err = walk_counted(c, h, &h->write[h->n_write], fill)))
			return err;
		h->n_write++;
	}

	/* Reply chunk: optional counted array. */
	if ((err = get_disc(c, &more)))
		return err;
	if (more) {
		if ((err = walk_counted(c, h, &h->reply, fill)))
			return err;
		h->has_reply = true;
	}

	if (h->proc == RDMA_NOMSG && h->n_read == 0 && h->n_write == 0 && !h->has_reply)
		return IW_ERPC_NOMSG_EMPTY;
	return IW_OK;
}

/* Zero everything but the four fixed words (what an error leaves filled). */
static void hdr_reset_body(struct rpcrdma_hdr *h)
{
	uint32_t xid = h->xid, vers = h->vers, credits = h->credits, proc = h->proc;

	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = vers;
	h->credits = credits;
	h->proc = proc;
}

static int decode_lists(const uint8_t *p, size_t len, struct rpcrdma_hdr *h)
{
	size_t start = RPCRDMA_FIXED_LEN;
	struct iw_cursor c;
	int err;

	if (len < RPCRDMA_HDR_MIN)
		return IW_ERPC_SHORT;
	if (h->proc == RDMA_MSGP) {
		h->msgp_align = iw_get_be32(p + 16);
		h->msgp_thresh = iw_get_be32(p + 20);
		start += RPCRDMA_MSGP_EXTRA;
	}

	/* Check: walk everything, keep only counts. */
	iw_cursor_init(&c, p + start, len - start);
	err = walk_lists(&c, h, false);
	if (err) {
		hdr_reset_body(h);
		return err;
	}

	/* Parse: the same walk again, now copying the segments. */
	{
		uint32_t align = h->msgp_align, thresh = h->msgp_thresh;

		hdr_reset_body(h);
		h->msgp_align = align;
		h->msgp_thresh = thresh;
	}
	iw_cursor_init(&c, p + start, len - start);
	err = walk_lists(&c, h, true);
	if (err) { /* unreachable: the check pass accepted the same octets */
		hdr_reset_body(h);
		return err;
	}
	h->hdr_len = (uint32_t)(start + c.off);
	return h->proc == RDMA_MSGP ? IW_ERPC_MSGP : (int)h->hdr_len;
}

static int decode_error(const uint8_t *p, size_t len, struct rpcrdma_hdr *h)
{
	if (len < RPCRDMA_HDR_ERR_CHUNK)
		return IW_ERPC_SHORT;
	switch (iw_get_be32(p + 16)) {
	case ERR_CHUNK:
		h->err = ERR_CHUNK;
		h->hdr_len = RPCRDMA_HDR_ERR_CHUNK;
		return RPCRDMA_HDR_ERR_CHUNK;
	case ERR_VERS:
		if (len < RPCRDMA_HDR_ERR_VERS)
			return IW_ERPC_SHORT;
		h->err = ERR_VERS;
		h->vers_low = iw_get_be32(p + 20);
		h->vers_high = iw_get_be32(p + 24);
		h->hdr_len = RPCRDMA_HDR_ERR_VERS;
		return RPCRDMA_HDR_ERR_VERS;
	default:
		return IW_ERPC_ERRCODE;
	}
}

int rpcrdma_hdr_decode(const void *buf, size_t len, struct rpcrdma_hdr *h)
{
	const uint8_t *p = buf;

	memset(h, 0, sizeof(*h));
	if (len < RPCRDMA_FIXED_LEN)
		return IW_ERPC_SHORT;
	h->xid = iw_get_be32(p);
	h->vers = iw_get_be32(p + 4);

	if (h->vers != RPCRDMA_VERSION) {
		/* RFC 8166 §7: ERR_VERS reads the same in every version. */
		if (len >= RPCRDMA_HDR_ERR_VERS && iw_get_be32(p + 12) == RDMA_ERROR &&
		    iw_get_be32(p + 16) == ERR_VERS) {
			h->credits = iw_get_be32(p + 8);
			h->proc = RDMA_ERROR;
			return decode_error(p, len, h);
		}
		return len < RPCRDMA_HDR_MIN ? IW_ERPC_SHORT : IW_ERPC_VERS;
	}
	h->credits = iw_get_be32(p + 8);
	h->proc = iw_get_be32(p + 12);

	switch (h->proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
	case RDMA_MSGP:
		return decode_lists(p, len, h);
	case RDMA_DONE:
		h->hdr_len = RPCRDMA_FIXED_LEN;
		return RPCRDMA_FIXED_LEN;
	case RDMA_ERROR:
		return decode_error(p, len, h);
	default:
		return IW_ERPC_PROC;
	}
}

enum rpcrdma_err_action rpcrdma_err_action(int err)
{
	switch (err) {
	case IW_ERPC_VERS:
		return RPCRDMA_REPLY_ERR_VERS;
	case IW_ERPC_PROC:
	case IW_ERPC_XDR:
	case IW_ERPC_LIMIT:
	case IW_ERPC_NOMSG_EMPTY:
	case IW_ERPC_POSITION:
	case IW_ERPC_XID:
	case IW_ERPC_MSGP:
	case IW_ERPC_RPC: /* §4.5.2: an XDR error under a known version */
		return RPCRDMA_REPLY_ERR_CHUNK;
	default: /* IW_ERPC_SHORT (XID untrustworthy), IW_ERPC_ERRCODE, the rest */
		return RPCRDMA_DISCARD;
	}
}

/* ---------------------------------------------------------------------- */
/* RFC 8797 CM private data                                                 */
/* ---------------------------------------------------------------------- */

static uint8_t cm_size_encode(uint32_t size)
{
	if (size < RPCRDMA_INLINE_MIN)
		size = RPCRDMA_INLINE_MIN;
	if (size > RPCRDMA_CM_SIZE_MAX)
		size = RPCRDMA_CM_SIZE_MAX;
	return (uint8_t)(size / 1024 - 1);
}

int rpcrdma_cm_pdata_encode(const struct rpcrdma_cm_pdata *p, void *buf, size_t cap)
{
	size_t need = RPCRDMA_CM_PDATA_LEN + (p->ext_present ? RPCRDMA_EXT_LEN : 0);
	uint8_t *o = buf;

	if (cap < need)
		return IW_ENOSPC;
	iw_put_be32(o, RPCRDMA_CM_MAGIC);
	o[4] = RPCRDMA_CM_VERSION;
	o[5] = p->flags;
	o[6] = cm_size_encode(p->send_size);
	o[7] = cm_size_encode(p->recv_size);
	if (p->ext_present) {
		iw_put_be32(o + 8, RPCRDMA_EXT_MAGIC);
		o[12] = RPCRDMA_EXT_VERSION;
		o[13] = p->ext_flags;
		o[14] = 0;
		o[15] = 0;
	}
	return (int)need;
}

int rpcrdma_cm_pdata_decode(const void *buf, size_t len, struct rpcrdma_cm_pdata *p)
{
	const uint8_t *b = buf;

	memset(p, 0, sizeof(*p));
	p->send_size = RPCRDMA_INLINE_MIN;
	p->recv_size = RPCRDMA_INLINE_MIN;
	if (!b || len < RPCRDMA_CM_PDATA_LEN || iw_get_be32(b) != RPCRDMA_CM_MAGIC ||
	    b[4] != RPCRDMA_CM_VERSION)
		return IW_ERPC_PDATA;
	p->present = true;
	p->version = b[4];
	p->flags = b[5];
	p->send_size = ((uint32_t)b[6] + 1) * 1024;
	p->recv_size = ((uint32_t)b[7] + 1) * 1024;
	if (len >= RPCRDMA_CM_PDATA_LEN + RPCRDMA_EXT_LEN &&
	    iw_get_be32(b + 8) == RPCRDMA_EXT_MAGIC && b[12] == RPCRDMA_EXT_VERSION) {
		p->ext_present = true;
		p->ext_flags = b[13];
	}
	return IW_OK;
}
