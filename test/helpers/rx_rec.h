/* SPDX-License-Identifier: MIT */
/*
 * rx_rec.h - a recording consumer for the mpa_rx callbacks (test-only,
 * header-only).  It checks the callback contract as it goes (header first,
 * payload offsets contiguous from the end of the header, fpdu_done exactly
 * when the whole ULPDU arrived), collects every delivered ULPDU octet, and
 * keeps an event log so runs over different splits of one stream can be
 * compared for identical callbacks.
 */
#ifndef IW_RX_REC_H
#define IW_RX_REC_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>

/*
 * Check's ck_assert records a mark point per call (a write to the parent in
 * fork mode), far too slow for per-callback checks: fail loudly, pass silently.
 */
#define RX_REC_CHECK(cond)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg("%s:%d: check failed: %s", __FILE__, __LINE__, #cond);        \
	} while (0)

struct rx_rec {
	/* behaviour */
	size_t hdr_ask;		 /* header octets wanted in total; 0 = take what is offered */
	size_t hdr_ask_step;	 /* > 0: ask for this many more octets per call up to hdr_ask */
	int hdr_ret;		 /* non-zero: return this from every header call instead */
	int err;		 /* error to return ... */
	unsigned err_hdr_at;	 /* ... from the n-th header call (1-based; 0 = never) */
	unsigned err_payload_at; /* ... from the n-th payload call */
	unsigned err_done_at;	 /* ... from the n-th fpdu_done call */
	const uint8_t *in_lo, *in_hi; /* when set: payload must point inside [lo, hi) */
	/* observations */
	uint8_t *data; /* every ULPDU octet delivered, in order */
	size_t cap, len;
	uint32_t *log; /* events: ('H', have, ulpdu_len), ('D', ulpdu_len, 0) */
	size_t logcap, loglen;
	unsigned nhdr, npayload, ndone;
	size_t cur_len, cur_got, cur_start;
	int in_fpdu;
};

static inline void rx_rec_init(struct rx_rec *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->cap = cap;
	r->data = malloc(cap ? cap : 1);
	r->logcap = 3 * 65536;
	r->log = malloc(r->logcap * sizeof(*r->log));
	ck_assert(r->data && r->log);
}

static inline void rx_rec_reset(struct rx_rec *r)
{
	r->len = r->loglen = 0;
	r->nhdr = r->npayload = r->ndone = 0;
	r->cur_len = r->cur_got = r->cur_start = 0;
	r->in_fpdu = 0;
}

static inline void rx_rec_fini(struct rx_rec *r)
{
	free(r->data);
	free(r->log);
}

static inline void rx_rec_event(struct rx_rec *r, uint32_t a, uint32_t b, uint32_t c)
{
	RX_REC_CHECK(r->loglen + 3 <= r->logcap);
	r->log[r->loglen++] = a;
	r->log[r->loglen++] = b;
	r->log[r->loglen++] = c;
}

static inline int rx_rec_header(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct rx_rec *r = user;
	size_t want;

	r->nhdr++;
	rx_rec_event(r, 'H', (uint32_t)have, (uint32_t)ulpdu_len);
	if (!r->in_fpdu) {
		r->in_fpdu = 1;
		r->cur_len = ulpdu_len;
		r->cur_got = 0;
		r->cur_start = r->len;
	}
	RX_REC_CHECK(ulpdu_len == r->cur_len);
	RX_REC_CHECK(have >= r->cur_got);
	RX_REC_CHECK(have <= ulpdu_len);
	RX_REC_CHECK(have <= MPA_RX_HDR_MAX);
	/* the gathered prefix never changes between calls */
	RX_REC_CHECK(r->cur_got == 0 || memcmp(hdr, r->data + r->cur_start, r->cur_got) == 0);
	RX_REC_CHECK(r->len + have - r->cur_got <= r->cap);
	memcpy(r->data + r->len, hdr + r->cur_got, have - r->cur_got);
	r->len += have - r->cur_got;
	r->cur_got = have;
	if (r->err_hdr_at && r->nhdr == r->err_hdr_at)
		return r->err;
	if (r->hdr_ret)
		return r->hdr_ret;
	want = r->hdr_ask < ulpdu_len ? r->hdr_ask : ulpdu_len;
	if (want > MPA_RX_HDR_MAX)
		want = MPA_RX_HDR_MAX;
	if (want <= have)
		return (int)have;
	if (r->hdr_ask_step && have + r->hdr_ask_step < want)
		want = have + r->hdr_ask_step;
	return (int)want;
}

static inline int rx_rec_payload(void *user, size_t off, const uint8_t *p, size_t n)
{
	struct rx_rec *r = user;

	r->npayload++;
	RX_REC_CHECK(r->in_fpdu);
	RX_REC_CHECK(n > 0);
	RX_REC_CHECK(off == r->cur_got);
	RX_REC_CHECK(off + n <= r->cur_len);
	if (r->in_lo)
		RX_REC_CHECK(p >= r->in_lo && p + n <= r->in_hi);
	RX_REC_CHECK(r->len + n <= r->cap);
	memcpy(r->data + r->len, p, n);
	r->len += n;
	r->cur_got += n;
	if (r->err_payload_at && r->npayload == r->err_payload_at)
		return r->err;
	return 0;
}

static inline int rx_rec_done(void *user)
{
	struct rx_rec *r = user;

	r->ndone++;
	RX_REC_CHECK(r->in_fpdu);
	RX_REC_CHECK(r->cur_got == r->cur_len);
	rx_rec_event(r, 'D', (uint32_t)r->cur_len, 0);
	r->in_fpdu = 0;
	if (r->err_done_at && r->ndone == r->err_done_at)
		return r->err;
	return 0;
}

static const struct mpa_rx_ops rx_rec_ops = {
	.ulpdu_header = rx_rec_header,
	.ulpdu_payload = rx_rec_payload,
	.fpdu_done = rx_rec_done,
};

/* Same callbacks and data (the payload split may differ with the input split). */
static inline void rx_rec_assert_same(const struct rx_rec *a, const struct rx_rec *b)
{
	RX_REC_CHECK(a->len == b->len);
	RX_REC_CHECK(a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
	RX_REC_CHECK(a->loglen == b->loglen);
	RX_REC_CHECK(a->loglen == 0 || memcmp(a->log, b->log, a->loglen * sizeof(*a->log)) == 0);
	RX_REC_CHECK(a->nhdr == b->nhdr);
	RX_REC_CHECK(a->ndone == b->ndone);
}

#endif /* IW_RX_REC_H */
