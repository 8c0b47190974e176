/* SPDX-License-Identifier: MIT */
/*
 * test_mpa_setup.c - the MPA startup state machine (RFC 5044 §7.1.2, RFC 6581
 * §9, §10).  Both roles are driven back to back in memory: what one side
 * queues with tx_pending is fed to the other's read_stream, whole, one octet at
 * a time or in random pieces, with partial tx_advance calls of the same sizes.
 */
#include <string.h>

#include "iw_bytes.h"
#include "iw_vectors.h"
#include "th.h"
#include <iwarp/mpa.h>

enum split { SPLIT_WHOLE, SPLIT_ONE, SPLIT_RANDOM, SPLIT_COUNT };

static struct th_rng rng;

static void rng_setup(void)
{
	th_rng_init(&rng, th_seed_from_env());
}

/* Move everything `from` has queued into `to`.  Returns the last read_stream
 * result (an error stops the transfer); *moved counts octets consumed. */
static ssize_t pump(struct mpa_setup *from, struct mpa_setup *to, enum split sp, uint64_t now,
		    size_t *moved)
{
	const uint8_t *p;
	uint8_t copy[MPA_FRAME_MAX_LEN];
	size_t n = mpa_setup_tx_pending(from, &p), off = 0;
	ssize_t r = 0;

	ck_assert_uint_le(n, sizeof(copy));
	memcpy(copy, p, n);
	while (off < n) {
		size_t chunk = n - off;

		if (sp == SPLIT_ONE)
			chunk = 1;
		else if (sp == SPLIT_RANDOM)
			chunk = (size_t)th_rng_range(&rng, 1, n - off);
		mpa_setup_tx_advance(from, chunk);
		r = mpa_setup_read_stream(to, copy + off, chunk, now);
		if (r < 0)
			break;
		ck_assert_int_eq(r, (ssize_t)chunk);
		off += chunk;
	}
	if (moved)
		*moved = off;
	return r;
}

static struct mpa_config cfg_default(uint8_t rev)
{
	struct mpa_config c;

	mpa_config_default(&c);
	c.rev = rev;
	return c;
}

/* Init both, send the Request; the Responder should hold it afterwards. */
static void start(struct mpa_setup *ini, struct mpa_setup *rsp, const struct mpa_config *ic,
		  const struct mpa_config *rc, enum split sp, const void *pd, size_t pd_len)
{
	ck_assert_int_eq(mpa_setup_init(ini, MPA_INITIATOR, ic, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_init(rsp, MPA_RESPONDER, rc, 0), IW_OK);
	ck_assert_int_eq(ini->state, MPA_SETUP_IDLE);
	ck_assert_int_eq(rsp->state, MPA_SETUP_WAIT_REQUEST);
	ck_assert_ptr_null(mpa_setup_peer_frame(rsp));
	ck_assert_int_eq(mpa_setup_connect(ini, pd, pd_len), IW_OK);
	ck_assert_int_eq(ini->state, MPA_SETUP_SEND_REQUEST);
	ck_assert_int_ge(pump(ini, rsp, sp, 1, NULL), 0);
	ck_assert_int_eq(ini->state, MPA_SETUP_WAIT_REPLY);
	ck_assert_uint_eq(mpa_setup_tx_pending(ini, NULL), 0);
}

/* A whole exchange ending with accept(); both must be ESTABLISHED. */
static void exchange(const struct mpa_config *ic, const struct mpa_config *rc, enum split sp,
		     struct mpa_params *ip, struct mpa_params *rp)
{
	struct mpa_setup ini, rsp;

	start(&ini, &rsp, ic, rc, sp, NULL, 0);
	ck_assert_int_eq(rsp.state, MPA_SETUP_REQUEST_RECEIVED);
	ck_assert_ptr_nonnull(mpa_setup_peer_frame(&rsp));
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
	ck_assert_int_eq(rsp.state, MPA_SETUP_ESTABLISHED);
	ck_assert_int_ge(pump(&rsp, &ini, sp, 2, NULL), 0);
	ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
	ck_assert_int_eq(mpa_setup_params(&ini, ip), IW_OK);
	ck_assert_int_eq(mpa_setup_params(&rsp, rp), IW_OK);
	ck_assert(!ip->wait_first_fpdu);
	ck_assert(rp->wait_first_fpdu);
	ck_assert_uint_eq(mpa_setup_get_expiry(&ini), UINT64_MAX);
	ck_assert_uint_eq(mpa_setup_get_expiry(&rsp), UINT64_MAX);
	ck_assert_int_eq(ini.error, IW_OK);
	ck_assert_int_eq(rsp.error, IW_OK);
}

/* Feed raw bytes to a setup in one call. */
static ssize_t feed(struct mpa_setup *s, const uint8_t *b, size_t n)
{
	return mpa_setup_read_stream(s, b, n, 5);
}

static size_t enc(const struct mpa_frame *f, uint8_t *buf)
{
	ssize_t n = mpa_frame_encode(f, buf, MPA_FRAME_MAX_LEN);

	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* An Initiator that has sent its Request and waits for a Reply. */
static void initiator_waiting(struct mpa_setup *ini, const struct mpa_config *ic)
{
	ck_assert_int_eq(mpa_setup_init(ini, MPA_INITIATOR, ic, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_connect(ini, NULL, 0), IW_OK);
	mpa_setup_tx_advance(ini, mpa_setup_tx_pending(ini, NULL));
	ck_assert_int_eq(ini->state, MPA_SETUP_WAIT_REPLY);
}

static struct mpa_frame reply_frame(uint8_t rev, bool enhanced)
{
	struct mpa_frame f;

	memset(&f, 0, sizeof(f));
	f.reply = true;
	f.crc = true;
	f.rev = rev;
	f.enhanced = enhanced;
	f.ird = 16;
	f.ord = 16;
	return f;
}

/* ------------------------------------------------------------------------ */

START_TEST(rev2_to_rev2_client_server_negotiates_enhanced)
{
	for (int sp = 0; sp < SPLIT_COUNT; sp++) {
		struct mpa_config c = cfg_default(2);
		struct mpa_params ip, rp;

		exchange(&c, &c, sp, &ip, &rp);
		ck_assert_uint_eq(ip.rev, 2);
		ck_assert_uint_eq(rp.rev, 2);
		ck_assert(ip.enhanced && rp.enhanced);
		ck_assert(ip.crc && rp.crc);
		ck_assert(!ip.markers_tx && !ip.markers_rx && !rp.markers_tx && !rp.markers_rx);
		ck_assert(!ip.p2p && !rp.p2p);
		ck_assert_uint_eq(ip.rtr, 0);
		ck_assert_uint_eq(rp.rtr, 0);
		ck_assert_uint_eq(ip.ird, 16);
		ck_assert_uint_eq(ip.ord, 16);
		ck_assert_uint_eq(rp.ird, 16);
		ck_assert_uint_eq(rp.ord, 16);
		ck_assert_uint_eq(ip.peer_ird, 16);
		ck_assert_uint_eq(rp.peer_ord, 16);
	}
}
END_TEST

START_TEST(rev1_to_rev1_is_plain_rfc5044)
{
	for (int sp = 0; sp < SPLIT_COUNT; sp++) {
		struct mpa_config c = cfg_default(1);
		struct mpa_params ip, rp;

		exchange(&c, &c, sp, &ip, &rp);
		ck_assert_uint_eq(ip.rev, 1);
		ck_assert_uint_eq(rp.rev, 1);
		ck_assert(!ip.enhanced && !rp.enhanced);
		ck_assert_uint_eq(ip.peer_ird, MPA_IRD_ORD_MAX);
		ck_assert_uint_eq(ip.peer_ord, MPA_IRD_ORD_MAX);
		ck_assert_uint_eq(rp.peer_ird, MPA_IRD_ORD_MAX);
		ck_assert_uint_eq(rp.peer_ord, MPA_IRD_ORD_MAX);
	}
}
END_TEST

START_TEST(rev2_initiator_with_rev1_responder_falls_back_to_rev1)
{
	for (int sp = 0; sp < SPLIT_COUNT; sp++) {
		struct mpa_config ic = cfg_default(2), rc = cfg_default(1);
		struct mpa_params ip, rp;

		exchange(&ic, &rc, sp, &ip, &rp);
		ck_assert_uint_eq(ip.rev, 1);
		ck_assert_uint_eq(rp.rev, 1);
		ck_assert(!ip.enhanced && !rp.enhanced);
		ck_assert(!ip.p2p);
	}
}
END_TEST

START_TEST(rev1_initiator_with_rev2_responder_gets_a_rev1_reply)
{
	for (int sp = 0; sp < SPLIT_COUNT; sp++) {
		struct mpa_config ic = cfg_default(1), rc = cfg_default(2);
		struct mpa_setup ini, rsp;
		struct mpa_params ip;
		const struct mpa_frame *pf;

		start(&ini, &rsp, &ic, &rc, sp, "hi", 2);
		pf = mpa_setup_peer_frame(&rsp);
		ck_assert_uint_eq(pf->rev, 1);
		ck_assert_uint_eq(pf->pd_len, 2);
		ck_assert_mem_eq(pf->pd, "hi", 2);
		ck_assert_int_eq(mpa_setup_accept(&rsp, "ok", 2), IW_OK);
		ck_assert_int_ge(pump(&rsp, &ini, sp, 2, NULL), 0);
		pf = mpa_setup_peer_frame(&ini);
		ck_assert_uint_eq(pf->rev, 1);
		ck_assert(!pf->enhanced);
		ck_assert_mem_eq(pf->pd, "ok", 2);
		ck_assert_int_eq(mpa_setup_params(&ini, &ip), IW_OK);
		ck_assert_uint_eq(ip.rev, 1);
	}
}
END_TEST

START_TEST(rev2_request_without_s_gets_an_unenhanced_rev2_reply)
{
	struct mpa_config rc = cfg_default(2);
	struct mpa_setup rsp;
	struct mpa_frame f = reply_frame(2, false), g;
	struct mpa_params rp;
	uint8_t b[MPA_FRAME_MAX_LEN];
	const uint8_t *out;
	size_t n;

	f.reply = false;
	n = enc(&f, b);
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &rc, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, b, n), (ssize_t)n);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
	n = mpa_setup_tx_pending(&rsp, &out);
	ck_assert_int_eq(mpa_frame_decode(out, n, true, &g), (ssize_t)n);
	ck_assert_uint_eq(g.rev, 2);
	ck_assert(!g.enhanced);
	ck_assert_int_eq(mpa_setup_params(&rsp, &rp), IW_OK);
	ck_assert(!rp.enhanced);
	ck_assert_uint_eq(rp.rev, 2);
}
END_TEST

START_TEST(siw_request_is_accepted_with_ord_lowered_to_its_ird)
{
	struct mpa_config rc = cfg_default(2);
	struct mpa_setup rsp;
	struct mpa_params rp;
	struct mpa_frame g;
	uint8_t b[64];
	const uint8_t *out;
	long n = th_hex_decode(siw_mpa_request_hex, b, sizeof(b));
	size_t m;

	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &rc, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, b, (size_t)n), n);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_params(&rsp, &rp), IW_OK);
	ck_assert(rp.crc); /* we asked for it: CRC is on both ways */
	ck_assert_uint_eq(rp.ord, 1);
	ck_assert_uint_eq(rp.ird, 16);
	ck_assert_uint_eq(rp.peer_ird, 1);
	ck_assert_uint_eq(rp.peer_ord, 1);
	m = mpa_setup_tx_pending(&rsp, &out);
	ck_assert_int_eq(mpa_frame_decode(out, m, true, &g), (ssize_t)m);
	ck_assert(g.enhanced && !g.p2p);
	ck_assert_uint_eq(g.ird, 16);
	ck_assert_uint_eq(g.ord, 1);
	ck_assert_uint_eq(g.rtr, 0);
}
END_TEST

START_TEST(crc_is_on_if_either_side_asks)
{
	for (int i = 0; i < 4; i++) {
		for (int rev = 1; rev <= 2; rev++) {
			struct mpa_config ic = cfg_default((uint8_t)rev),
					  rc = cfg_default((uint8_t)rev);
			struct mpa_params ip, rp;

			ic.crc = i & 1;
			rc.crc = i & 2;
			exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
			ck_assert(ip.crc == (i != 0));
			ck_assert(rp.crc == (i != 0));
		}
	}
}
END_TEST

START_TEST(markers_are_negotiated_per_direction)
{
	for (int i = 0; i < 4; i++) {
		struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
		struct mpa_params ip, rp;

		ic.markers = i & 1;
		rc.markers = i & 2;
		exchange(&ic, &rc, SPLIT_RANDOM, &ip, &rp);
		/* The Initiator's M asks the Responder to send Markers. */
		ck_assert(rp.markers_tx == ic.markers);
		ck_assert(ip.markers_rx == ic.markers);
		ck_assert(ip.markers_tx == rc.markers);
		ck_assert(rp.markers_rx == rc.markers);
	}
}
END_TEST

static uint8_t pref(uint8_t m)
{
	if (m & MPA_RTR_WRITE)
		return MPA_RTR_WRITE;
	if (m & MPA_RTR_READ)
		return MPA_RTR_READ;
	return m & MPA_RTR_SEND;
}

START_TEST(p2p_picks_one_common_rtr_form_by_preference)
{
	for (uint8_t off = 1; off <= MPA_RTR_ALL; off++) {
		for (uint8_t acc = 1; acc <= MPA_RTR_ALL; acc++) {
			struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
			struct mpa_setup ini, rsp;
			const struct mpa_frame *pf;
			uint8_t common = off & acc;

			ic.p2p = true;
			ic.rtr = off;
			rc.rtr = acc;
			start(&ini, &rsp, &ic, &rc, SPLIT_RANDOM, NULL, 0);
			pf = mpa_setup_peer_frame(&rsp);
			ck_assert(pf->p2p);
			ck_assert_uint_eq(pf->rtr, off);
			ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
			ck_assert_int_eq(rsp.params.rtr, common ? pref(common) : pref(acc));
			pump(&rsp, &ini, SPLIT_RANDOM, 2, NULL);
			pf = mpa_setup_peer_frame(&ini);
			ck_assert(pf->p2p);
			/* Exactly one form in the Reply. */
			ck_assert_uint_eq(pf->rtr, common ? pref(common) : pref(acc));
			if (common) {
				ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
				ck_assert(ini.params.p2p);
				ck_assert_uint_eq(ini.params.rtr, pref(common));
			} else {
				ck_assert_int_eq(ini.state, MPA_SETUP_FAILED);
				ck_assert_int_eq(ini.error, IW_EMPA_RTR);
			}
		}
	}
}
END_TEST

START_TEST(p2p_prefers_write_then_read_then_send)
{
	struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
	struct mpa_params ip, rp;

	ic.p2p = true;
	exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	ck_assert_uint_eq(ip.rtr, MPA_RTR_WRITE);
	ck_assert_uint_eq(rp.rtr, MPA_RTR_WRITE);
	ck_assert(ip.p2p && rp.p2p);
	ic.rtr = MPA_RTR_READ | MPA_RTR_SEND;
	exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	ck_assert_uint_eq(ip.rtr, MPA_RTR_READ);
	ic.rtr = MPA_RTR_SEND;
	exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	ck_assert_uint_eq(ip.rtr, MPA_RTR_SEND);
}
END_TEST

START_TEST(no_common_rtr_fails_with_mpa_rtr)
{
	struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
	struct mpa_setup ini, rsp;
	ssize_t r;

	ic.p2p = true;
	ic.rtr = MPA_RTR_SEND;
	rc.rtr = MPA_RTR_WRITE | MPA_RTR_READ;
	start(&ini, &rsp, &ic, &rc, SPLIT_WHOLE, NULL, 0);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
	r = pump(&rsp, &ini, SPLIT_WHOLE, 2, NULL);
	ck_assert_int_eq(r, IW_EMPA_RTR);
	ck_assert_int_eq(ini.state, MPA_SETUP_FAILED);
	ck_assert_int_eq(mpa_setup_peer_frame(&ini)->rtr, MPA_RTR_WRITE);
}
END_TEST

START_TEST(p2p_reply_that_does_not_echo_a_is_a_frame_error)
{
	struct mpa_config ic = cfg_default(2);
	struct mpa_setup ini;
	struct mpa_frame f = reply_frame(2, true);
	uint8_t b[MPA_FRAME_MAX_LEN];
	size_t n;

	ic.p2p = true;
	initiator_waiting(&ini, &ic);
	f.rtr = MPA_RTR_WRITE;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_FRAME);

	ic.p2p = false;
	initiator_waiting(&ini, &ic);
	f.p2p = true;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_FRAME);
}
END_TEST

START_TEST(client_server_ignores_rtr_bits_in_the_request)
{
	struct mpa_config rc = cfg_default(2);
	struct mpa_setup rsp;
	struct mpa_frame f = reply_frame(2, true), g;
	uint8_t b[MPA_FRAME_MAX_LEN];
	const uint8_t *out;
	size_t n;

	f.reply = false;
	f.rtr = MPA_RTR_ALL; /* with A = 0 */
	n = enc(&f, b);
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &rc, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, b, n), (ssize_t)n);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
	ck_assert(!rsp.params.p2p);
	ck_assert_uint_eq(rsp.params.rtr, 0);
	n = mpa_setup_tx_pending(&rsp, &out);
	ck_assert_int_gt(mpa_frame_decode(out, n, true, &g), 0);
	ck_assert(!g.p2p);
	ck_assert_uint_eq(g.rtr, 0);
}
END_TEST

START_TEST(ird_ord_are_negotiated_both_ways)
{
	struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
	struct mpa_params ip, rp;

	ic.ird = 8;
	ic.ord = 4;
	rc.ird = 2;
	rc.ord = 6;
	exchange(&ic, &rc, SPLIT_ONE, &ip, &rp);
	/* Responder ORD <= Initiator IRD; Initiator ORD <= Responder IRD. */
	ck_assert_uint_eq(rp.ord, 6);
	ck_assert_uint_eq(rp.ird, 2);
	ck_assert_uint_eq(ip.ird, 8);
	ck_assert_uint_eq(ip.ord, 2);
	ck_assert_uint_eq(rp.peer_ird, 8);
	ck_assert_uint_eq(rp.peer_ord, 4);
	ck_assert_uint_eq(ip.peer_ird, 2);
	ck_assert_uint_eq(ip.peer_ord, 6);

	ic.ird = 3;
	rc.ord = 10;
	exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	ck_assert_uint_eq(rp.ord, 3);
	ck_assert_uint_eq(ip.ird, 3);

	ic.ird = 0;
	ic.ord = 0;
	exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	ck_assert_uint_eq(rp.ord, 0);
	ck_assert_uint_eq(ip.ord, 0);
}
END_TEST

START_TEST(ird_ord_0x3fff_means_no_automatic_negotiation)
{
	struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
	struct mpa_params ip, rp;
	struct mpa_setup ini, rsp;
	const struct mpa_frame *pf;

	/* Initiator ORD 0x3FFF: the Responder answers IRD 0x3FFF and the
	 * Initiator keeps its ORD. */
	ic.ord = MPA_IRD_ORD_MAX;
	start(&ini, &rsp, &ic, &rc, SPLIT_WHOLE, NULL, 0);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
	pump(&rsp, &ini, SPLIT_WHOLE, 2, NULL);
	pf = mpa_setup_peer_frame(&ini);
	ck_assert_uint_eq(pf->ird, MPA_IRD_ORD_MAX);
	ck_assert_uint_eq(pf->ord, 16);
	ck_assert_int_eq(mpa_setup_params(&ini, &ip), IW_OK);
	ck_assert_uint_eq(ip.ord, MPA_IRD_ORD_MAX);
	ck_assert_int_eq(mpa_setup_params(&rsp, &rp), IW_OK);
	ck_assert_uint_eq(rp.ird, 16);

	/* Initiator IRD 0x3FFF: the Responder keeps its ORD and answers ORD
	 * 0x3FFF; the Initiator's IRD is not checked against it. */
	ic = cfg_default(2);
	ic.ird = MPA_IRD_ORD_MAX;
	rc.ord = 5;
	start(&ini, &rsp, &ic, &rc, SPLIT_WHOLE, NULL, 0);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_OK);
	pump(&rsp, &ini, SPLIT_WHOLE, 2, NULL);
	pf = mpa_setup_peer_frame(&ini);
	ck_assert_uint_eq(pf->ord, MPA_IRD_ORD_MAX);
	ck_assert_int_eq(mpa_setup_params(&rsp, &rp), IW_OK);
	ck_assert_uint_eq(rp.ord, 5);
	ck_assert_int_eq(mpa_setup_params(&ini, &ip), IW_OK);
	ck_assert_uint_eq(ip.ird, MPA_IRD_ORD_MAX);

	/* Both 0x3FFF (the vector req-rev2-no-auto-negotiation). */
	ic.ord = MPA_IRD_ORD_MAX;
	exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	ck_assert_uint_eq(ip.ird, MPA_IRD_ORD_MAX);
	ck_assert_uint_eq(ip.ord, MPA_IRD_ORD_MAX);
	ck_assert_uint_eq(rp.peer_ird, MPA_IRD_ORD_MAX);
	ck_assert_uint_eq(rp.peer_ord, MPA_IRD_ORD_MAX);

	/* A Reply with ORD 0x3FFF needs no IRD from us. */
	ic = cfg_default(2);
	ic.ird = 0;
	initiator_waiting(&ini, &ic);
	{
		struct mpa_frame f = reply_frame(2, true);
		uint8_t b[MPA_FRAME_MAX_LEN];
		size_t n;

		f.ord = MPA_IRD_ORD_MAX;
		n = enc(&f, b);
		ck_assert_int_eq(feed(&ini, b, n), (ssize_t)n);
		ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
		ck_assert_uint_eq(ini.params.ird, 0);
	}
}
END_TEST

START_TEST(reply_ord_above_our_ird_fails_with_mpa_ird)
{
	struct mpa_config ic = cfg_default(2);
	struct mpa_setup ini;
	struct mpa_frame f = reply_frame(2, true);
	uint8_t b[MPA_FRAME_MAX_LEN];
	size_t n;

	ic.ird = 4;
	initiator_waiting(&ini, &ic);
	f.ord = 5;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_IRD);
	ck_assert_int_eq(ini.state, MPA_SETUP_FAILED);
	ck_assert_int_eq(ini.error, IW_EMPA_IRD);
	/* The peer's frame stays available for the Terminate. */
	ck_assert_uint_eq(mpa_setup_peer_frame(&ini)->ord, 5);

	initiator_waiting(&ini, &ic);
	f.ord = 4;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), (ssize_t)n);
	ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
}
END_TEST

START_TEST(read_rtr_with_zero_ird_raises_ird_to_one)
{
	struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
	struct mpa_params ip, rp;

	ic.p2p = true;
	ic.rtr = MPA_RTR_READ;
	rc.ird = 0;
	exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	ck_assert_uint_eq(rp.rtr, MPA_RTR_READ);
	ck_assert_uint_eq(rp.ird, 1);
	ck_assert_uint_eq(ip.peer_ird, 1);
	ck_assert_uint_eq(ip.ord, 1);
}
END_TEST

static void reject_round(uint8_t rev, enum split sp)
{
	struct mpa_config c = cfg_default(rev);
	struct mpa_setup ini, rsp;
	struct mpa_params p;
	const struct mpa_frame *pf;

	start(&ini, &rsp, &c, &c, sp, "please", 6);
	ck_assert_int_eq(mpa_setup_reject(&rsp, "no thanks", 9), IW_OK);
	ck_assert_int_eq(rsp.state, MPA_SETUP_REJECTED);
	ck_assert_int_eq(rsp.error, IW_EMPA_REJECTED);
	ck_assert_int_eq(mpa_setup_params(&rsp, &p), IW_ESTATE);
	ck_assert_uint_eq(mpa_setup_get_expiry(&rsp), UINT64_MAX);
	ck_assert_int_ge(pump(&rsp, &ini, sp, 2, NULL), 0);
	ck_assert_uint_eq(mpa_setup_tx_pending(&rsp, NULL), 0);
	ck_assert_int_eq(ini.state, MPA_SETUP_REJECTED);
	ck_assert_int_eq(ini.error, IW_EMPA_REJECTED);
	ck_assert_int_eq(mpa_setup_params(&ini, &p), IW_ESTATE);
	pf = mpa_setup_peer_frame(&ini);
	ck_assert_ptr_nonnull(pf);
	ck_assert(pf->reject);
	ck_assert_uint_eq(pf->rev, rev);
	ck_assert(pf->enhanced == (rev == 2));
	ck_assert_uint_eq(pf->pd_len, 9);
	ck_assert_mem_eq(pf->pd, "no thanks", 9);
	/* MPA is over; TCP may stay open for the ULP. */
	ck_assert_int_eq(mpa_setup_read_stream(&ini, "x", 1, 3), IW_ESTATE);
	ck_assert_int_eq(mpa_setup_handle_close(&ini), IW_OK);
	ck_assert_int_eq(mpa_setup_handle_expiry(&ini, UINT64_MAX), IW_OK);
}

START_TEST(reject_with_private_data_reaches_the_initiator)
{
	for (int sp = 0; sp < SPLIT_COUNT; sp++) {
		reject_round(1, sp);
		reject_round(2, sp);
	}
}
END_TEST

START_TEST(reject_carries_the_ird_ord_word_when_enhanced)
{
	struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
	struct mpa_setup ini, rsp;
	const struct mpa_frame *pf;

	ic.ird = 2;
	rc.ird = 7;
	rc.ord = 9;
	start(&ini, &rsp, &ic, &rc, SPLIT_WHOLE, NULL, 0);
	ck_assert_int_eq(mpa_setup_reject(&rsp, NULL, 0), IW_OK);
	pump(&rsp, &ini, SPLIT_WHOLE, 2, NULL);
	pf = mpa_setup_peer_frame(&ini);
	ck_assert(pf->enhanced);
	ck_assert_uint_eq(pf->ird, 7);
	ck_assert_uint_eq(pf->ord, 2);
}
END_TEST

START_TEST(markers_refused_by_policy_make_the_responder_reject)
{
	struct mpa_config ic = cfg_default(2), rc = cfg_default(2);
	struct mpa_setup ini, rsp;

	ic.markers = true;
	rc.accept_markers = false;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &ic, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &rc, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_connect(&ini, NULL, 0), IW_OK);
	ck_assert_int_ge(pump(&ini, &rsp, SPLIT_ONE, 1, NULL), 0);
	ck_assert_int_eq(rsp.state, MPA_SETUP_REJECTED);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_ESTATE);
	ck_assert_uint_gt(mpa_setup_tx_pending(&rsp, NULL), 0);
	pump(&rsp, &ini, SPLIT_WHOLE, 2, NULL);
	ck_assert_int_eq(ini.state, MPA_SETUP_REJECTED);
	ck_assert(mpa_setup_peer_frame(&ini)->reject);

	/* Without Markers in the Request the same Responder accepts. */
	ic.markers = false;
	{
		struct mpa_params ip, rp;

		exchange(&ic, &rc, SPLIT_WHOLE, &ip, &rp);
	}
}
END_TEST

START_TEST(markers_refused_by_an_initiator_fail_locally)
{
	struct mpa_config ic = cfg_default(1);
	struct mpa_setup ini;
	struct mpa_frame f = reply_frame(1, false);
	uint8_t b[MPA_FRAME_MAX_LEN];
	size_t n;

	ic.accept_markers = false;
	initiator_waiting(&ini, &ic);
	f.markers = true;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_LOCAL);
	ck_assert_int_eq(ini.state, MPA_SETUP_FAILED);
}
END_TEST

START_TEST(initiator_waiting_for_reply_times_out)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup ini;

	c.timeout_ns = 500;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &c, 1000), IW_OK);
	ck_assert_uint_eq(mpa_setup_get_expiry(&ini), 1500);
	ck_assert_int_eq(mpa_setup_connect(&ini, NULL, 0), IW_OK);
	mpa_setup_tx_advance(&ini, 1000);
	ck_assert_int_eq(ini.state, MPA_SETUP_WAIT_REPLY);
	ck_assert_uint_eq(mpa_setup_get_expiry(&ini), 1500);
	ck_assert_int_eq(mpa_setup_handle_expiry(&ini, 1499), IW_OK);
	ck_assert_int_eq(ini.state, MPA_SETUP_WAIT_REPLY);
	ck_assert_int_eq(mpa_setup_handle_expiry(&ini, 1500), IW_EMPA_TIMEOUT);
	ck_assert_int_eq(ini.state, MPA_SETUP_FAILED);
	ck_assert_uint_eq(mpa_setup_get_expiry(&ini), UINT64_MAX);
	ck_assert_int_eq(mpa_setup_read_stream(&ini, "M", 1, 1600), IW_EMPA_TIMEOUT);
}
END_TEST

START_TEST(responder_waiting_for_request_times_out)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup rsp;

	c.timeout_ns = 100;
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 50), IW_OK);
	ck_assert_uint_eq(mpa_setup_get_expiry(&rsp), 150);
	ck_assert_int_eq(mpa_setup_read_stream(&rsp, "MPA", 3, 149), 3);
	/* Data arriving at or after the deadline does not save it. */
	ck_assert_int_eq(mpa_setup_read_stream(&rsp, " ID", 3, 150), IW_EMPA_TIMEOUT);
	ck_assert_int_eq(rsp.state, MPA_SETUP_FAILED);
	ck_assert_int_eq(mpa_setup_handle_expiry(&rsp, 150), IW_EMPA_TIMEOUT);
}
END_TEST

START_TEST(responder_whose_ulp_never_answers_times_out)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup ini, rsp;

	c.timeout_ns = 10;
	start(&ini, &rsp, &c, &c, SPLIT_WHOLE, NULL, 0);
	ck_assert_int_eq(rsp.state, MPA_SETUP_REQUEST_RECEIVED);
	ck_assert_uint_eq(mpa_setup_get_expiry(&rsp), 10);
	ck_assert_int_eq(mpa_setup_handle_expiry(&rsp, 9), IW_OK);
	ck_assert_int_eq(mpa_setup_handle_expiry(&rsp, 10), IW_EMPA_TIMEOUT);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_EMPA_TIMEOUT);
	ck_assert_int_eq(mpa_setup_reject(&rsp, NULL, 0), IW_EMPA_TIMEOUT);
	ck_assert_uint_eq(mpa_setup_tx_pending(&rsp, NULL), 0);
}
END_TEST

START_TEST(timeout_handles_huge_values_and_zero_means_none)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup s;

	c.timeout_ns = UINT64_MAX - 5;
	ck_assert_int_eq(mpa_setup_init(&s, MPA_RESPONDER, &c, 100), IW_OK);
	ck_assert_uint_eq(mpa_setup_get_expiry(&s), UINT64_MAX);
	c.timeout_ns = 0;
	ck_assert_int_eq(mpa_setup_init(&s, MPA_RESPONDER, &c, 100), IW_OK);
	ck_assert_uint_eq(mpa_setup_get_expiry(&s), UINT64_MAX);
	ck_assert_int_eq(mpa_setup_handle_expiry(&s, UINT64_MAX - 1), IW_OK);
	mpa_config_default(&c);
	ck_assert_int_eq(mpa_setup_init(&s, MPA_INITIATOR, &c, 7), IW_OK);
	ck_assert_uint_eq(mpa_setup_get_expiry(&s), 7 + 10ull * 1000 * 1000 * 1000);
}
END_TEST

START_TEST(close_mid_frame_is_truncated_and_before_any_octet_closed)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup ini, rsp;
	uint8_t b[MPA_FRAME_MAX_LEN];
	struct mpa_frame f = reply_frame(2, true);
	size_t n;

	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_handle_close(&rsp), IW_EMPA_CLOSED);
	ck_assert_int_eq(rsp.state, MPA_SETUP_FAILED);

	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, (const uint8_t *)"MPA ID", 6), 6);
	ck_assert_int_eq(mpa_setup_handle_close(&rsp), IW_EMPA_TRUNCATED);

	/* Header complete, Private Data missing. */
	initiator_waiting(&ini, &c);
	f.pd = (const uint8_t *)"abcdef";
	f.pd_len = 6;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n - 1), (ssize_t)(n - 1));
	ck_assert_int_eq(mpa_setup_handle_close(&ini), IW_EMPA_TRUNCATED);
	ck_assert_int_eq(mpa_setup_handle_close(&ini), IW_EMPA_TRUNCATED);

	initiator_waiting(&ini, &c);
	ck_assert_int_eq(mpa_setup_handle_close(&ini), IW_EMPA_CLOSED);

	/* Whole Request received, no answer yet: closed, not truncated. */
	start(&ini, &rsp, &c, &c, SPLIT_WHOLE, NULL, 0);
	ck_assert_int_eq(mpa_setup_handle_close(&rsp), IW_EMPA_CLOSED);

	/* After ESTABLISHED the close belongs to full operation. */
	{
		struct mpa_params ip, rp;

		exchange(&c, &c, SPLIT_WHOLE, &ip, &rp);
	}
	initiator_waiting(&ini, &c);
	f.pd_len = 0;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), (ssize_t)n);
	ck_assert_int_eq(mpa_setup_handle_close(&ini), IW_OK);
	ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
}
END_TEST

START_TEST(octets_after_the_request_before_our_reply_are_unexpected)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup ini, rsp;
	uint8_t b[MPA_FRAME_MAX_LEN + 8];
	const uint8_t *p;
	size_t n;

	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &c, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_connect(&ini, "abc", 3), IW_OK);
	n = mpa_setup_tx_pending(&ini, &p);
	memcpy(b, p, n);
	b[n] = 0x00;
	b[n + 1] = 0x0e;
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	/* The frame is consumed, the rest is left ... */
	ck_assert_int_eq(feed(&rsp, b, n + 2), (ssize_t)n);
	ck_assert_int_eq(rsp.state, MPA_SETUP_REQUEST_RECEIVED);
	/* ... a zero-length call is harmless ... */
	ck_assert_int_eq(feed(&rsp, b + n, 0), 0);
	/* ... and offering it again is the violation. */
	ck_assert_int_eq(feed(&rsp, b + n, 2), IW_EMPA_UNEXPECTED);
	ck_assert_int_eq(rsp.state, MPA_SETUP_FAILED);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_EMPA_UNEXPECTED);
	/* The Request stays visible. */
	ck_assert_uint_eq(mpa_setup_peer_frame(&rsp)->pd_len, 3);
}
END_TEST

START_TEST(pd_length_shorter_than_the_data_shows_as_unexpected)
{
	struct mpa_config c = cfg_default(1);
	struct mpa_setup rsp;
	uint8_t b[64];
	struct mpa_frame f = reply_frame(1, false);
	size_t n;

	f.reply = false;
	f.pd = (const uint8_t *)"hello";
	f.pd_len = 5;
	n = enc(&f, b);
	iw_put_be16(b + 18, 2); /* claims 2, sends 5 */
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, b, n), 22);
	ck_assert_int_eq(feed(&rsp, b + 22, n - 22), IW_EMPA_UNEXPECTED);
}
END_TEST

START_TEST(octets_after_the_reply_are_left_for_full_operation)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup ini;
	struct mpa_frame f = reply_frame(2, true);
	uint8_t b[MPA_FRAME_MAX_LEN + 64];
	size_t n;
	ssize_t r;

	for (int sp = 0; sp < SPLIT_COUNT; sp++) {
		size_t off = 0;

		initiator_waiting(&ini, &c);
		n = enc(&f, b);
		memset(b + n, 0xCC, 20);
		/* Offer the frame plus 20 octets in pieces; consumption stops at
		 * the frame end, wherever the piece boundary is. */
		while (ini.state == MPA_SETUP_WAIT_REPLY) {
			size_t chunk = n + 20 - off;

			if (sp == SPLIT_ONE)
				chunk = 1;
			else if (sp == SPLIT_RANDOM)
				chunk = (size_t)th_rng_range(&rng, 1, chunk);

			r = feed(&ini, b + off, chunk);
			ck_assert_int_ge(r, 0);
			ck_assert_int_le(r, (ssize_t)chunk);
			off += (size_t)r;
		}
		ck_assert_uint_eq(off, n);
		ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
		ck_assert_int_eq(feed(&ini, b + n, 20), IW_ESTATE);
	}
}
END_TEST

START_TEST(initiator_accepts_input_while_still_sending)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup ini;
	struct mpa_frame f = reply_frame(2, true);
	uint8_t b[MPA_FRAME_MAX_LEN];
	size_t n;

	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &c, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_connect(&ini, NULL, 0), IW_OK);
	mpa_setup_tx_advance(&ini, 3);
	ck_assert_int_eq(ini.state, MPA_SETUP_SEND_REQUEST);
	ck_assert_uint_eq(mpa_setup_tx_pending(&ini, NULL), 24 - 3);
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, 10), 10);
	ck_assert_int_eq(ini.state, MPA_SETUP_SEND_REQUEST);
	ck_assert_int_eq(feed(&ini, b + 10, n - 10), (ssize_t)(n - 10));
	ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
	/* The rest of the Request must still be written. */
	ck_assert_uint_eq(mpa_setup_tx_pending(&ini, NULL), 24 - 3);
	mpa_setup_tx_advance(&ini, 100);
	ck_assert_uint_eq(mpa_setup_tx_pending(&ini, NULL), 0);
	ck_assert_int_eq(ini.state, MPA_SETUP_ESTABLISHED);
}
END_TEST

START_TEST(initiator_rejects_bad_replies)
{
	struct mpa_config c1 = cfg_default(1), c2 = cfg_default(2);
	struct mpa_setup ini;
	struct mpa_frame f;
	uint8_t b[MPA_FRAME_MAX_LEN];
	size_t n;

	/* Higher revision than we sent. */
	initiator_waiting(&ini, &c1);
	f = reply_frame(2, true);
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_REV);
	initiator_waiting(&ini, &c1);
	f = reply_frame(2, false);
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_REV);

	/* Rev 2 without the word to our enhanced Request. */
	initiator_waiting(&ini, &c2);
	f = reply_frame(2, false);
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_FRAME);

	/* A Request where the Reply belongs (Initiator/Initiator). */
	initiator_waiting(&ini, &c2);
	f = reply_frame(2, true);
	f.reply = false;
	n = enc(&f, b);
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_KEY);

	/* Revision 0 and 3 from the wire. */
	initiator_waiting(&ini, &c2);
	f = reply_frame(1, false);
	n = enc(&f, b);
	b[17] = 3;
	ck_assert_int_eq(feed(&ini, b, n), IW_EMPA_REV);

	/* PD_Length over 512. */
	initiator_waiting(&ini, &c2);
	iw_put_be16(b + 18, 600);
	b[17] = 1;
	ck_assert_int_eq(feed(&ini, b, 20), IW_EMPA_PDLEN);

	/* Data before we even sent the Request. */
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &c2, 0), IW_OK);
	ck_assert_int_eq(feed(&ini, b, 0), 0);
	ck_assert_int_eq(feed(&ini, b, 1), IW_EMPA_UNEXPECTED);
}
END_TEST

START_TEST(responder_rejects_bad_requests)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup rsp;
	uint8_t b[MPA_FRAME_MAX_LEN];
	struct mpa_frame f = reply_frame(2, true);
	size_t n;

	n = enc(&f, b); /* a Reply where the Request belongs */
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, b, n), IW_EMPA_KEY);
	ck_assert_ptr_null(mpa_setup_peer_frame(&rsp));

	/* The wrong key is seen in the first octets. */
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, (const uint8_t *)"GET / HTTP/1.1\r\n", 4), IW_EMPA_KEY);

	f.reply = false;
	n = enc(&f, b);
	b[17] = 0;
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, b, n), IW_EMPA_REV);

	b[17] = 2;
	iw_put_be16(b + 18, 2); /* S with PD_Length < 4 */
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, b, n), IW_EMPA_PDLEN);
	ck_assert_int_eq(mpa_setup_handle_close(&rsp), IW_EMPA_PDLEN);
}
END_TEST

START_TEST(first_error_sticks)
{
	struct mpa_config c = cfg_default(2);
	struct mpa_setup rsp;

	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c, 0), IW_OK);
	ck_assert_int_eq(feed(&rsp, (const uint8_t *)"XPA", 3), IW_EMPA_KEY);
	ck_assert_int_eq(rsp.error, IW_EMPA_KEY);
	ck_assert_int_eq(feed(&rsp, (const uint8_t *)"MPA", 3), IW_EMPA_KEY);
	ck_assert_int_eq(mpa_setup_handle_expiry(&rsp, UINT64_MAX), IW_EMPA_KEY);
	ck_assert_int_eq(mpa_setup_handle_close(&rsp), IW_EMPA_KEY);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_EMPA_KEY);
	ck_assert_int_eq(mpa_setup_reject(&rsp, NULL, 0), IW_EMPA_KEY);
	ck_assert_int_eq(rsp.error, IW_EMPA_KEY);
	ck_assert_int_eq(rsp.state, MPA_SETUP_FAILED);
	ck_assert_uint_eq(mpa_setup_get_expiry(&rsp), UINT64_MAX);
}
END_TEST

START_TEST(api_misuse_is_refused_without_changing_state)
{
	static uint8_t pd[MPA_PD_MAX + 1];
	struct mpa_config c1 = cfg_default(1), c2 = cfg_default(2), bad;
	struct mpa_setup ini, rsp;
	struct mpa_params p;

	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &c1, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_accept(&ini, NULL, 0), IW_ESTATE);
	ck_assert_int_eq(mpa_setup_reject(&ini, NULL, 0), IW_ESTATE);
	ck_assert_int_eq(mpa_setup_connect(&ini, pd, 513), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_connect(&ini, NULL, 1), IW_EINVAL);
	ck_assert_int_eq(ini.state, MPA_SETUP_IDLE);
	ck_assert_int_eq(mpa_setup_params(&ini, &p), IW_ESTATE);
	ck_assert_int_eq(mpa_setup_connect(&ini, pd, 512), IW_OK);
	ck_assert_uint_eq(mpa_setup_tx_pending(&ini, NULL), 532);
	ck_assert_int_eq(mpa_setup_connect(&ini, NULL, 0), IW_ESTATE);
	ck_assert_int_eq(ini.state, MPA_SETUP_SEND_REQUEST);

	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &c2, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_connect(&ini, pd, 509), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_connect(&ini, pd, 508), IW_OK);
	ck_assert_uint_eq(mpa_setup_tx_pending(&ini, NULL), 532);

	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c2, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_connect(&rsp, NULL, 0), IW_ESTATE);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_ESTATE);
	ck_assert_int_eq(rsp.state, MPA_SETUP_WAIT_REQUEST);
	pump(&ini, &rsp, SPLIT_WHOLE, 1, NULL);
	ck_assert_int_eq(rsp.state, MPA_SETUP_REQUEST_RECEIVED);
	ck_assert_int_eq(mpa_setup_accept(&rsp, pd, 509), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_reject(&rsp, pd, 509), IW_EINVAL);
	ck_assert_int_eq(rsp.state, MPA_SETUP_REQUEST_RECEIVED);
	ck_assert_int_eq(mpa_setup_accept(&rsp, pd, 508), IW_OK);
	ck_assert_int_eq(mpa_setup_accept(&rsp, NULL, 0), IW_ESTATE);
	ck_assert_int_eq(mpa_setup_read_stream(&rsp, pd, 1, 2), IW_ESTATE);

	/* A rev-1 Reply may carry all 512 octets. */
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &c1, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &c2, 0), IW_OK);
	ck_assert_int_eq(mpa_setup_connect(&ini, NULL, 0), IW_OK);
	pump(&ini, &rsp, SPLIT_WHOLE, 1, NULL);
	ck_assert_int_eq(mpa_setup_accept(&rsp, pd, 513), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_accept(&rsp, pd, 512), IW_OK);

	/* Bad configurations and arguments. */
	ck_assert_int_eq(mpa_setup_init(NULL, MPA_INITIATOR, &c2, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, NULL, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_init(&ini, (enum mpa_role)5, &c2, 0), IW_EINVAL);
	bad = c2;
	bad.rev = 0;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &bad, 0), IW_EINVAL);
	bad.rev = 3;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &bad, 0), IW_EINVAL);
	bad = c2;
	bad.ird = 0x4000;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &bad, 0), IW_EINVAL);
	bad = c2;
	bad.ord = 0xFFFF;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &bad, 0), IW_EINVAL);
	bad = c2;
	bad.rtr = 8;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &bad, 0), IW_EINVAL);
	bad = c2;
	bad.rtr = 0;
	ck_assert_int_eq(mpa_setup_init(&rsp, MPA_RESPONDER, &bad, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &bad, 0), IW_OK);
	bad.p2p = true;
	ck_assert_int_eq(mpa_setup_init(&ini, MPA_INITIATOR, &bad, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_read_stream(NULL, pd, 1, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_read_stream(&ini, NULL, 1, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_connect(NULL, NULL, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_accept(NULL, NULL, 0), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_params(NULL, &p), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_handle_close(NULL), IW_EINVAL);
	ck_assert_int_eq(mpa_setup_handle_expiry(NULL, 0), IW_EINVAL);
	ck_assert_uint_eq(mpa_setup_get_expiry(NULL), UINT64_MAX);
	ck_assert_ptr_null(mpa_setup_peer_frame(NULL));
	ck_assert_uint_eq(mpa_setup_tx_pending(NULL, NULL), 0);
	mpa_setup_tx_advance(NULL, 3);
}
END_TEST

START_TEST(config_defaults_and_state_names)
{
	struct mpa_config c;

	memset(&c, 0xFF, sizeof(c));
	mpa_config_default(&c);
	ck_assert_uint_eq(c.rev, 2);
	ck_assert(c.crc);
	ck_assert(!c.markers);
	ck_assert(c.accept_markers);
	ck_assert(!c.p2p);
	ck_assert_uint_eq(c.rtr, MPA_RTR_ALL);
	ck_assert_uint_eq(c.ird, 16);
	ck_assert_uint_eq(c.ord, 16);
	ck_assert_uint_eq(c.timeout_ns, 10000000000ull);
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_IDLE), "IDLE");
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_SEND_REQUEST), "SEND_REQUEST");
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_WAIT_REPLY), "WAIT_REPLY");
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_WAIT_REQUEST), "WAIT_REQUEST");
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_REQUEST_RECEIVED), "REQUEST_RECEIVED");
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_ESTABLISHED), "ESTABLISHED");
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_REJECTED), "REJECTED");
	ck_assert_str_eq(mpa_setup_state_name(MPA_SETUP_FAILED), "FAILED");
	ck_assert_str_eq(mpa_setup_state_name((enum mpa_setup_state)99), "UNKNOWN");
}
END_TEST

static Suite *mpa_setup_suite(void)
{
	Suite *s = suite_create("mpa_setup");
	TCase *tc = tcase_create("setup");

	tcase_add_unchecked_fixture(tc, rng_setup, NULL);
	tcase_add_test(tc, rev2_to_rev2_client_server_negotiates_enhanced);
	tcase_add_test(tc, rev1_to_rev1_is_plain_rfc5044);
	tcase_add_test(tc, rev2_initiator_with_rev1_responder_falls_back_to_rev1);
	tcase_add_test(tc, rev1_initiator_with_rev2_responder_gets_a_rev1_reply);
	tcase_add_test(tc, rev2_request_without_s_gets_an_unenhanced_rev2_reply);
	tcase_add_test(tc, siw_request_is_accepted_with_ord_lowered_to_its_ird);
	tcase_add_test(tc, crc_is_on_if_either_side_asks);
	tcase_add_test(tc, markers_are_negotiated_per_direction);
	tcase_add_test(tc, p2p_picks_one_common_rtr_form_by_preference);
	tcase_add_test(tc, p2p_prefers_write_then_read_then_send);
	tcase_add_test(tc, no_common_rtr_fails_with_mpa_rtr);
	tcase_add_test(tc, p2p_reply_that_does_not_echo_a_is_a_frame_error);
	tcase_add_test(tc, client_server_ignores_rtr_bits_in_the_request);
	tcase_add_test(tc, ird_ord_are_negotiated_both_ways);
	tcase_add_test(tc, ird_ord_0x3fff_means_no_automatic_negotiation);
	tcase_add_test(tc, reply_ord_above_our_ird_fails_with_mpa_ird);
	tcase_add_test(tc, read_rtr_with_zero_ird_raises_ird_to_one);
	tcase_add_test(tc, reject_with_private_data_reaches_the_initiator);
	tcase_add_test(tc, reject_carries_the_ird_ord_word_when_enhanced);
	tcase_add_test(tc, markers_refused_by_policy_make_the_responder_reject);
	tcase_add_test(tc, markers_refused_by_an_initiator_fail_locally);
	tcase_add_test(tc, initiator_waiting_for_reply_times_out);
	tcase_add_test(tc, responder_waiting_for_request_times_out);
	tcase_add_test(tc, responder_whose_ulp_never_answers_times_out);
	tcase_add_test(tc, timeout_handles_huge_values_and_zero_means_none);
	tcase_add_test(tc, close_mid_frame_is_truncated_and_before_any_octet_closed);
	tcase_add_test(tc, octets_after_the_request_before_our_reply_are_unexpected);
	tcase_add_test(tc, pd_length_shorter_than_the_data_shows_as_unexpected);
	tcase_add_test(tc, octets_after_the_reply_are_left_for_full_operation);
	tcase_add_test(tc, initiator_accepts_input_while_still_sending);
	tcase_add_test(tc, initiator_rejects_bad_replies);
	tcase_add_test(tc, responder_rejects_bad_requests);
	tcase_add_test(tc, first_error_sticks);
	tcase_add_test(tc, api_misuse_is_refused_without_changing_state);
	tcase_add_test(tc, config_defaults_and_state_names);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(mpa_setup_suite)
