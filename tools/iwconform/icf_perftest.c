/* SPDX-License-Identifier: MIT */
/*
 * icf_perftest.c - --profile perftest: iwconform plays the client of a
 * perftest server started with -R (ib_write_bw -R, ib_read_bw -R), icf.h.
 *
 * perftest with -R connects twice to the server's port, both times through
 * the RDMA CM (so MPA, here revision 2 with the IRD/ORD word, IRD = ORD =
 * 16): a control connection that carries perftest's own exchange in Sends,
 * then the data connection that the test's RDMA Writes or Reads run on.  The
 * exchange was measured on the wire (perftest 4.5 of Debian 12 over the
 * drop-in libraries, captured on lo and decoded with iwdump and tshark); in
 * each step the client Sends first and the server answers with a Send of the
 * same length:
 *
 *   control:  16 octets   the version, "6.06" and NULs
 *              4 octets   0x00001000 (big-endian; constant in every run)
 *              4 octets   0x00000040 (likewise)
 *              2 octets   "3" and a NUL
 *             56 octets   zeros
 *   data:     the MPA startup (and the RTR, peer-to-peer)
 *   control:  56 octets   zeros
 *             56 octets   the key message, then twice more as a barrier
 *   data:     the test: RDMA Writes into (or Read Requests of) the server's
 *             buffer, at its address and up by the message size
 *   control:  56 octets   the key message (a barrier)
 *              8 octets   x 5: the client's results (size, iterations, and
 *                         three doubles); the server's answers are not
 *                         filled in
 *             56 octets   the key message, then both close
 *
 * The key message, every field big-endian:
 *
 *    0  LID (0)              4  outstanding reads     8  QP number
 *   12  PSN                 16  RKey (the STag)       20  (not filled in)
 *   24  the buffer's address, 64 bits (the TO)       32  GID, 16 octets
 *   48  zeros (8 octets)                                 (::ffff:IPv4)
 *
 * The server's outstanding reads are 1 in a write test and the device's
 * maximum in a read test (128 on iwarp0): that tells whether its buffer is
 * for remote read.  The buffer is at least 4096 octets long.
 *
 * The cases run on the data connection after the key exchange, against the
 * server's buffer; the normal step is a 64-octet Write into it followed by a
 * zero-length Read Request (RFC 5040 §4.4), whose Read Response proves that
 * the Write went through (RDMAP delivers in order, RFC 5040 §5.5), or in a
 * read test a 64-octet Read Request of it.  Afterwards the rest of the
 * control exchange is played so that the server ends as after a run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include "iw_bytes.h"

#include "icf.h"

#define PT_KEY_LEN   56
#define PT_VERSION   "6.06"
#define PT_STEP_LEN  64u
#define PT_FINISH_MS 1000
#define PT_RESULTS   5
#define PT_IRD_ORD   16
#define PT_READS_OFF 4
#define PT_RKEY_OFF  16
#define PT_VADDR_OFF 24
#define PT_GID_OFF   32
#define PT_QPN	     1
#define PT_OUR_READS 1

/* One step of the control exchange: our Send, then the server's.  0, or -1
 * with the reason in why. */
static int xchg(struct icf_ep *ctl, const void *ours, size_t n, int t, struct icf_msg *m, char *why,
		size_t whylen)
{
	if (icf_send_msg(ctl, RDMAP_OP_SEND, ours, n) < 0) {
		snprintf(why, whylen, "control connection: send: %s", strerror(ctl->err));
		return -1;
	}
	if (!icf_ep_next(ctl, m, t)) {
		snprintf(why, whylen, "control connection: no answer to our %zu-octet Send%s", n,
			 ctl->eof ? " (closed)" : "");
		return -1;
	}
	if (m->opcode != RDMAP_OP_SEND && m->opcode != RDMAP_OP_SEND_SE) {
		snprintf(why, whylen, "control connection: %s where a Send was due",
			 iwd_opcode_name(m->opcode));
		return -1;
	}
	if (m->len != n) {
		snprintf(why, whylen, "control connection: a %u-octet answer to our %zu-octet Send",
			 m->len, n);
		return -1;
	}
	return 0;
}

/* Our key message: our sink buffer (never read: perftest's client reads
 * into its own buffer), our address as an IPv4-mapped GID. */
static void our_key(const struct icf_ep *ep, uint8_t *k)
{
	memset(k, 0, PT_KEY_LEN);
	iw_put_be32(k + PT_READS_OFF, PT_OUR_READS);
	iw_put_be32(k + 8, PT_QPN);
	iw_put_be32(k + PT_RKEY_OFF, ICF_OUR_SINK_STAG);
	iw_put_be64(k + PT_VADDR_OFF, ICF_OUR_SINK_TO);
	if (ep->local.ss_family == AF_INET6) {
		memcpy(k + PT_GID_OFF, &((const struct sockaddr_in6 *)&ep->local)->sin6_addr, 16);
	} else {
		k[PT_GID_OFF + 10] = 0xFF;
		k[PT_GID_OFF + 11] = 0xFF;
		memcpy(k + PT_GID_OFF + 12, &((const struct sockaddr_in *)&ep->local)->sin_addr, 4);
	}
}

int icf_pt_open(const struct icf_ctx *x, struct icf_ep *ctl, char *why, size_t whylen)
{
	static const uint8_t version[16] = PT_VERSION;
	uint8_t b[MPA_FRAME_MAX_LEN], word[4], zero[PT_KEY_LEN] = {0};
	struct mpa_frame f = {.rev = MPA_REV2, .crc = true, .enhanced = true};
	struct icf_msg m;
	ssize_t n;

	if (icf_ep_open(ctl, (const struct sockaddr *)&x->addr, x->addrlen, x->timeout_ms,
			x->pcap_dir != NULL, x->verbose, why, whylen) < 0)
		return -1;
	ctl->stop = x->stop;
	f.ird = f.ord = PT_IRD_ORD;
	n = mpa_frame_encode(&f, b, sizeof(b));
	if (n < 0 || icf_ep_send_raw(ctl, b, (size_t)n) < 0 ||
	    icf_ep_wait_frame(ctl, x->timeout_ms) != 1 || ctl->reply.reject) {
		snprintf(why, whylen,
			 "the perftest server did not accept the control connection "
			 "(%s)",
			 ctl->have_reply ? "rejected"
			 : ctl->eof	 ? "closed"
					 : "no Reply");
		return -1;
	}
	icf_ep_start(ctl);
	ctl->full = true;
	if (xchg(ctl, version, sizeof(version), x->timeout_ms, &m, why, whylen) < 0)
		return -1;
	iw_put_be32(word, 0x1000);
	if (xchg(ctl, word, 4, x->timeout_ms, &m, why, whylen) < 0)
		return -1;
	iw_put_be32(word, 0x40);
	if (xchg(ctl, word, 4, x->timeout_ms, &m, why, whylen) < 0)
		return -1;
	if (xchg(ctl, "3", 2, x->timeout_ms, &m, why, whylen) < 0)
		return -1;
	return xchg(ctl, zero, sizeof(zero), x->timeout_ms, &m, why, whylen);
}

int icf_pt_established(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		       struct icf_obs *o)
{
	uint8_t zero[PT_KEY_LEN] = {0}, key[PT_KEY_LEN];
	struct icf_msg m;
	int t = icf_tmo(c, x);

	if (!ep->ctl) {
		snprintf(o->why, sizeof(o->why), "no control connection");
		return 0;
	}
	our_key(ep, key);
	if (xchg(ep->ctl, zero, sizeof(zero), t, &m, o->why, sizeof(o->why)) < 0 ||
	    xchg(ep->ctl, key, sizeof(key), t, &m, o->why, sizeof(o->why)) < 0)
		return 0;
	ep->pbuf.valid = true;
	ep->pbuf.stag = iw_get_be32(m.data + PT_RKEY_OFF);
	ep->pbuf.to = iw_get_be64(m.data + PT_VADDR_OFF);
	ep->pbuf.len = PT_STEP_LEN;
	ep->pbuf.readable = iw_get_be32(m.data + PT_READS_OFF) > 1;
	ep->pt_read = ep->pbuf.readable;
	/* the key exchange again, then the barrier before the test */
	if (xchg(ep->ctl, key, sizeof(key), t, &m, o->why, sizeof(o->why)) < 0 ||
	    xchg(ep->ctl, key, sizeof(key), t, &m, o->why, sizeof(o->why)) < 0)
		return 0;
	return 1;
}

int icf_pt_step(struct icf_ep *ep)
{
	static uint8_t b[DDP_TAGGED_HDR_LEN + PT_STEP_LEN];
	struct rdmap_read_req r = {.sink_stag = ICF_OUR_SINK_STAG,
				   .sink_to = ICF_OUR_SINK_TO,
				   .size = PT_STEP_LEN,
				   .src_stag = ep->pbuf.stag,
				   .src_to = ep->pbuf.to};

	if (!ep->pbuf.valid)
		return -1;
	if (!ep->pt_read) {
		if (icf_send_ulpdu(ep, b,
				   icf_tagged(b, rdmap_ctrl_make(RDMAP_OP_WRITE), ep->pbuf.stag,
					      ep->pbuf.to, true, NULL, PT_STEP_LEN)) < 0)
			return -1;
		r.size = 0;
	}
	return icf_send_read_req(ep, &r);
}

int icf_pt_accept(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		  struct icf_obs *o)
{
	struct icf_msg m;
	uint32_t want = ep->pt_read ? PT_STEP_LEN : 0;

	if (icf_pt_step(ep) < 0) {
		snprintf(o->why, sizeof(o->why), "no buffer of the server's to write");
		return 0;
	}
	/* a zero-length Read Response is what we wait for here */
	while (icf_ep_next(ep, &m, icf_tmo(c, x))) {
		if (m.opcode == RDMAP_OP_TERMINATE) {
			o->term = true;
			o->tm = m.term;
			return 0;
		}
		if (m.opcode == RDMAP_OP_READ_RESP && m.stag == ICF_OUR_SINK_STAG && m.len == want)
			return 1;
		/* the answer to a Read RTR (RFC 6581 §9.3) may come late */
		if (m.opcode == RDMAP_OP_READ_RESP && m.len == 0 && m.stag != ICF_OUR_SINK_STAG)
			continue;
		snprintf(o->why, sizeof(o->why),
			 "%s of %u octets where a %u-octet Read Response "
			 "was due",
			 iwd_opcode_name(m.opcode), m.len, want);
		return 0;
	}
	snprintf(o->why, sizeof(o->why), "no Read Response from the server%s",
		 ep->eof ? " (closed)" : " in time");
	return 0;
}

void icf_pt_finish(const struct icf_ctx *x, struct icf_ep *ep)
{
	uint8_t key[PT_KEY_LEN], r[8];
	struct icf_msg m;
	char why[128];

	(void)x;
	if (!ep->ctl || ep->ctl->eof)
		return;
	our_key(ep, key);
	if (xchg(ep->ctl, key, sizeof(key), PT_FINISH_MS, &m, why, sizeof(why)) < 0)
		return;
	for (int i = 0; i < PT_RESULTS; i++) {
		/* size, iterations, then the doubles (0: no figures) */
		iw_put_be64(r, i == 0 ? PT_STEP_LEN : i == 1 ? 1 : 0);
		if (xchg(ep->ctl, r, sizeof(r), PT_FINISH_MS, &m, why, sizeof(why)) < 0)
			return;
	}
	xchg(ep->ctl, key, sizeof(key), PT_FINISH_MS, &m, why, sizeof(why));
}
