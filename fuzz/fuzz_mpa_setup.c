/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpa_setup.c - libFuzzer target for the MPA startup state machine.
 *
 * Input layout:
 *   octet 0   bit 0 role (1 = Responder), bit 1 rev 2, bit 2 C, bit 3 M,
 *             bit 4 p2p, bit 5 accept_markers, bit 6 accept (else reject) when
 *             a Request arrives, bit 7 send private data with our frame
 *   octet 1   bits 0-2 RTR mask, bits 3-5 IRD choice, bit 6 Initiator waits for
 *             a connect event
 *   octet 2   bits 0-2 ORD choice, bits 3-7 timeout (units of 16 ticks, 0 = none)
 *   rest      a script: an octet c < 0xC0 feeds the next (c & 0x3F) + 1 input
 *             octets as peer stream (c & 0x40: offer the unconsumed rest again
 *             next time); c >= 0xC0 is an event (c & 7): 0 clock + expiry,
 *             1 close, 2 partial tx_advance, 3 answer, 4 opposite answer,
 *             5 write everything, 6 connect, 7 clock only.
 * Checked invariants (abort() on violation): state is valid; error is set
 * iff FAILED or REJECTED; read_stream never consumes more than offered and
 * a negative result other than IW_ESTATE leaves FAILED with that error; the
 * expiry is UINT64_MAX in terminal states; whatever we queue to send decodes
 * as a valid frame of the right kind; negotiated parameters are sane.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iw_log.h"
#include <iwarp/mpa.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t ird_ord_choice[8] = {0, 1, 2, 3, 4, 16, 0x3FFE, MPA_IRD_ORD_MAX};

/* A sink, so the log formatting of every transition runs too. */
static void log_sink(void *ctx, enum iw_log_level level, const char *msg)
{
	(void)ctx;
	(void)level;
	if (!msg)
		abort();
}

static bool terminal(enum mpa_setup_state st)
{
	return st == MPA_SETUP_ESTABLISHED || st == MPA_SETUP_REJECTED || st == MPA_SETUP_FAILED;
}

static void check_invariants(const struct mpa_setup *s)
{
	const struct mpa_frame *pf = mpa_setup_peer_frame(s);
	struct mpa_params p;

	if ((unsigned)s->state > MPA_SETUP_FAILED)
		abort();
	if ((s->state == MPA_SETUP_FAILED || s->state == MPA_SETUP_REJECTED) != (s->error != 0))
		abort();
	if (s->state == MPA_SETUP_REJECTED && s->error != IW_EMPA_REJECTED)
		abort();
	if (s->state == MPA_SETUP_FAILED && s->error >= 0)
		abort();
	if (s->rxlen > sizeof(s->rxbuf) || s->txlen > sizeof(s->txbuf) || s->txoff > s->txlen)
		abort();
	if (terminal(s->state) && mpa_setup_get_expiry(s) != UINT64_MAX)
		abort();
	if (pf && ((pf->rev != MPA_REV1 && pf->rev != MPA_REV2) || pf->pd_len > MPA_PD_MAX ||
		   pf->reply != (s->role == MPA_INITIATOR)))
		abort();
	if ((s->state == MPA_SETUP_REQUEST_RECEIVED || s->state == MPA_SETUP_ESTABLISHED) && !pf &&
	    s->role == MPA_RESPONDER)
		abort();
	if (mpa_setup_params(s, &p) == IW_OK) {
		if (s->state != MPA_SETUP_ESTABLISHED)
			abort();
		if ((p.rev != MPA_REV1 && p.rev != MPA_REV2) || (p.enhanced && p.rev != MPA_REV2))
			abort();
		if (p.ird > MPA_IRD_ORD_MAX || p.ord > MPA_IRD_ORD_MAX)
			abort();
		if (p.p2p != (p.rtr != 0) || (p.rtr & (p.rtr - 1)) || (p.rtr & ~MPA_RTR_ALL))
			abort();
		if (p.p2p && !p.enhanced)
			abort();
		if (p.wait_first_fpdu != (s->role == MPA_RESPONDER))
			abort();
		/* RFC 6581 §9.1 invariant, where both sides negotiate. */
		if (s->role == MPA_INITIATOR && p.enhanced && p.peer_ord != MPA_IRD_ORD_MAX &&
		    p.ird != MPA_IRD_ORD_MAX && p.ird < p.peer_ord)
			abort();
		if (s->role == MPA_INITIATOR && p.enhanced && p.peer_ird != MPA_IRD_ORD_MAX &&
		    p.ord != MPA_IRD_ORD_MAX && p.ord > p.peer_ird)
			abort();
	}
}

/* Whatever we queued must be one valid frame of our kind. */
static void check_tx(const struct mpa_setup *s)
{
	size_t pending;
	struct mpa_frame f;
	const uint8_t *p;
	ssize_t n;

	pending = mpa_setup_tx_pending(s, &p);
	if (pending && (p != s->txbuf + s->txoff || pending != s->txlen - s->txoff))
		abort();
	if (s->state == MPA_SETUP_FAILED && pending)
		abort();
	if (s->txlen == 0)
		return;
	n = mpa_frame_decode(s->txbuf, s->txlen, s->role == MPA_RESPONDER, &f);
	if (n < 0 || (size_t)n != s->txlen)
		abort();
	if (f.reply && f.rev > s->peer.rev)
		abort();
	if (f.reply && f.enhanced && f.p2p && (f.rtr == 0 || (f.rtr & (f.rtr - 1))))
		abort();
}

static void answer(struct mpa_setup *s, bool accept, const uint8_t *pd, size_t pd_len)
{
	int rc = accept ? mpa_setup_accept(s, pd, pd_len) : mpa_setup_reject(s, pd, pd_len);

	if (rc != IW_OK && rc != IW_EINVAL && rc != IW_ESTATE && rc != s->error)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t pd[MPA_PD_MAX] = "fuzz private data";
	struct mpa_setup *s;
	struct mpa_config cfg;
	enum mpa_role role;
	uint64_t now = 1000;
	size_t i = 3, again = 0;
	uint8_t c0;
	bool accept;

	if (size < 3)
		return 0;
	iw_log_set(log_sink, NULL, IW_LOG_TRACE);
	c0 = data[0];
	role = (c0 & 1) ? MPA_RESPONDER : MPA_INITIATOR;
	mpa_config_default(&cfg);
	cfg.rev = (c0 & 2) ? MPA_REV2 : MPA_REV1;
	cfg.crc = c0 & 4;
	cfg.markers = c0 & 8;
	cfg.p2p = c0 & 16;
	cfg.accept_markers = c0 & 32;
	accept = c0 & 64;
	cfg.rtr = data[1] & 7;
	cfg.ird = ird_ord_choice[(data[1] >> 3) & 7];
	cfg.ord = ird_ord_choice[data[2] & 7];
	cfg.timeout_ns = (uint64_t)(data[2] >> 3) * 16;

	s = malloc(sizeof(*s));
	if (!s)
		return 0;
	if (mpa_setup_init(s, role, &cfg, now) != IW_OK) {
		free(s);
		return 0;
	}
	check_invariants(s);
	/* octet 1 bit 6: the Initiator connects only when the script says so. */
	if (role == MPA_INITIATOR && !(data[1] & 0x40)) {
		if (mpa_setup_connect(s, pd, (c0 & 128) ? 17 : 0) != IW_OK)
			abort();
		check_tx(s);
	}

	while (i < size) {
		uint8_t c = data[i++];
		int rc;

		if (c >= 0xC0) {
			switch (c & 7) {
			case 0:
				now += (uint64_t)(c >> 3 & 7) * 8;
				if (mpa_setup_handle_expiry(s, now) > 0)
					abort();
				break;
			case 1:
				if (mpa_setup_handle_close(s) > 0)
					abort();
				break;
			case 2:
				mpa_setup_tx_advance(s, (size_t)(c >> 3 & 7) * 5);
				break;
			case 3:
				answer(s, accept, pd, (size_t)(c >> 3 & 7) * 73);
				break;
			case 4:
				answer(s, !accept, pd, 0);
				break;
			case 5:
				mpa_setup_tx_advance(s, SIZE_MAX);
				break;
			case 6:
				rc = mpa_setup_connect(s, pd, (size_t)(c >> 3 & 7) * 73);
				if (rc != IW_OK && rc != IW_EINVAL && rc != IW_ESTATE &&
				    rc != s->error)
					abort();
				break;
			default:
				/* Time passes without the timer being serviced. */
				now += (uint64_t)(c >> 3 & 7) * 8;
				break;
			}
		} else {
			size_t len = (size_t)(c & 0x3F) + 1;
			const uint8_t *p;
			ssize_t r;

			if (again) {
				/* Offer the unconsumed tail of the last chunk again. */
				i--; /* this script octet is read again next time */
				p = data + i - again;
				len = again;
				again = 0;
			} else {
				len = len < size - i ? len : size - i;
				p = data + i;
				i += len;
			}
			r = mpa_setup_read_stream(s, p, len, now);
			if (r >= 0) {
				if ((size_t)r > len)
					abort();
				if ((c & 0x40) && (size_t)r < len)
					again = len - (size_t)r;
			} else if (r != IW_ESTATE &&
				   (s->state != MPA_SETUP_FAILED || r != s->error)) {
				abort();
			}
		}
		check_invariants(s);
		check_tx(s);
		if (s->state == MPA_SETUP_REQUEST_RECEIVED && (c0 & 128)) {
			answer(s, accept, pd, 5);
			check_invariants(s);
			check_tx(s);
		}
	}
	free(s);
	return 0;
}
