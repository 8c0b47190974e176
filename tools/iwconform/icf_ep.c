/* SPDX-License-Identifier: MIT */
/*
 * icf_ep.c - iwconform's raw iWARP endpoint (icf.h).
 *
 * One non-blocking TCP socket and poll() with a deadline on every wait: one
 * we connected (we are the MPA Initiator) or one accepted from a listening
 * socket (-s: we are the Responder).  What we send goes out exactly as the
 * case built it: an MPA Request or Reply (RFC 5044 §7.1.1, RFC 6581 §9) or
 * any octets, FPDUs framed by mpa_tx_frame() with the negotiated CRC and
 * Markers (RFC 5044 §4) and then spoiled on purpose when the case wants.
 * What the peer sends is decoded by iwdump's iwd_iwarp: we feed it both
 * directions, numbered as the TCP connection numbers them (end 0 the client,
 * which is the Initiator, end 1 the server), and keep the RDMAP messages of
 * the peer's end in a small queue.  Until the peer's startup frame (its
 * Reply, or as Responder its Request) is complete its octets are also
 * gathered here and read with mpa_frame_decode(), since a case with a
 * malformed frame gets no decoding from iwd_iwarp.  The payload of Read
 * Responses into our sink buffer is kept, for rping's server to write back.
 * Every send and receive is recorded for the pcap.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "iw_bytes.h"
#include "iwt_clock.h"

#include "icf.h"

#define ICF_SEND_MS 2000 /* bound on one send when the peer does not read */

static uint64_t ts(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A Read Response segment into our sink buffer: keep its octets. */
static void sink_fpdu(struct icf_ep *ep, const struct iwd_fpdu *f)
{
	uint64_t off;

	if (!f->ddp_ok || !f->ddp.tagged || f->opcode != RDMAP_OP_READ_RESP ||
	    f->ddp.stag != ICF_OUR_SINK_STAG || f->crc == IWD_CRC_BAD ||
	    f->ddp.to < ICF_OUR_SINK_TO)
		return;
	off = f->ddp.to - ICF_OUR_SINK_TO;
	if (off >= ICF_SINK_MAX || f->payload_len > ICF_SINK_MAX - off)
		return;
	memcpy(ep->sink + off, f->payload, f->payload_len);
	if (off + f->payload_len > ep->sink_len)
		ep->sink_len = (uint32_t)(off + f->payload_len);
}

static void sink_event(void *user, const struct iwd_event *ev)
{
	struct icf_ep *ep = user;
	const struct iwd_msg *m;
	struct icf_msg *q;

	if (ev->dir != ep->them)
		return;
	if (ev->kind == IWD_EV_FPDU) {
		sink_fpdu(ep, ev->u.fpdu);
		return;
	}
	if (ev->kind != IWD_EV_MSG)
		return;
	m = ev->u.msg;
	if (ep->qlen == ICF_MSGQ) {
		ep->dropped++;
		return;
	}
	q = &ep->q[(ep->qhead + ep->qlen) % ICF_MSGQ];
	ep->qlen++;
	memset(q, 0, sizeof(*q));
	q->opcode = m->opcode;
	q->tagged = m->tagged;
	q->crc_bad = m->crc_bad;
	q->rtr = m->rtr;
	q->stag = m->stag;
	q->to = m->to;
	q->qn = m->qn;
	q->msn = m->msn;
	q->len = m->len;
	q->rreq = m->rreq;
	q->term = m->term;
	q->data_len = m->data_len < sizeof(q->data) ? m->data_len : sizeof(q->data);
	if (m->data && q->data_len)
		memcpy(q->data, m->data, q->data_len);
	if (ep->verbose >= 2)
		fprintf(stderr, "  <- %s len %u%s\n", iwd_opcode_name(m->opcode), m->len,
			m->crc_bad ? " (CRC bad)" : "");
}

static void flow_addr(const struct sockaddr_storage *ss, uint8_t a[16], uint16_t *port)
{
	memset(a, 0, 16);
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		memcpy(a, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		memcpy(a, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
	}
}

/* The connected socket `fd` is the case's: addresses, pcap, decoder. */
static int setup(struct icf_ep *ep, int fd, bool responder, bool pcap, char *err, size_t errlen)
{
	struct iwd_iwarp_cfg cfg;
	struct iwd_sink sink = {.event = sink_event, .user = ep};
	const struct sockaddr_storage *client, *server;
	socklen_t len;
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ep->fd = fd;
	ep->responder = responder;
	ep->us = responder ? 1 : 0;
	ep->them = !ep->us;
	len = sizeof(ep->local);
	getsockname(fd, (struct sockaddr *)&ep->local, &len);
	len = sizeof(ep->peer);
	getpeername(fd, (struct sockaddr *)&ep->peer, &len);
	client = responder ? &ep->peer : &ep->local;
	server = responder ? &ep->local : &ep->peer;
	ep->pcap_on = pcap;
	if (pcap)
		icf_pcap_init(&ep->pcap, (const struct sockaddr *)client,
			      (const struct sockaddr *)server, ts());
	memset(&cfg, 0, sizeof(cfg));
	cfg.keep_fpdus = true;
	ep->flow.id = 1;
	ep->flow.af = ep->local.ss_family;
	ep->flow.syn_seen = true;
	flow_addr(client, ep->flow.addr[0], &ep->flow.port[0]);
	flow_addr(server, ep->flow.addr[1], &ep->flow.port[1]);
	ep->dec = iwd_iwarp_create(&cfg, &ep->flow, &sink);
	if (!ep->dec) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		ep->fd = -1;
		return -1;
	}
	for (int i = 0; i < DDP_QN_COUNT_7306; i++)
		ep->msn[i] = DDP_MSN_FIRST;
	return 0;
}

int icf_ep_open(struct icf_ep *ep, const struct sockaddr *sa, socklen_t salen, int timeout_ms,
		bool pcap, int verbose, char *err, size_t errlen)
{
	struct pollfd pfd;
	socklen_t len;
	int soerr = 0, fd;

	memset(ep, 0, sizeof(*ep));
	ep->fd = -1;
	ep->verbose = verbose;
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, sa, salen) < 0 && errno != EINPROGRESS) {
		ep->err = errno;
		snprintf(err, errlen, "connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, timeout_ms) <= 0) {
		snprintf(err, errlen, "connect: timed out");
		close(fd);
		return -1;
	}
	len = sizeof(soerr);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
	if (soerr) {
		ep->err = soerr;
		snprintf(err, errlen, "connect: %s", strerror(soerr));
		close(fd);
		return -1;
	}
	return setup(ep, fd, false, pcap, err, errlen);
}

int icf_ep_listen(const struct sockaddr *sa, socklen_t salen, char *err, size_t errlen)
{
	int one = 1, fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, salen) < 0 || listen(fd, 8) < 0) {
		snprintf(err, errlen, "%s: %s", "listen", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int icf_ep_accept(struct icf_ep *ep, int lfd, int timeout_ms, volatile int *stop, bool pcap,
		  int verbose, char *err, size_t errlen)
{
	uint64_t deadline = iwt_now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000u;
	int fd = -1;

	memset(ep, 0, sizeof(*ep));
	ep->fd = -1;
	ep->verbose = verbose;
	ep->stop = stop;
	while (fd < 0) {
		struct pollfd pfd = {.fd = lfd, .events = POLLIN};
		int ms = iwt_ms_until(deadline), r;

		if (stop && *stop)
			return 0;
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED) {
			snprintf(err, errlen, "accept: %s", strerror(errno));
			return -1;
		}
		if (ms == 0)
			return 0;
		/* a short slice, so that SIGINT is seen even if poll restarts */
		r = poll(&pfd, 1, ms < 200 ? ms : 200);
		if (r < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -1;
		}
	}
	return setup(ep, fd, true, pcap, err, errlen) < 0 ? -1 : 1;
}

static void got(struct icf_ep *ep, const uint8_t *p, size_t n)
{
	ssize_t r;

	if (ep->pcap_on)
		icf_pcap_data(&ep->pcap, ep->them, p, n, ts());
	if (!ep->have_reply && !ep->reply_err) {
		size_t take = sizeof(ep->rx) - ep->rxlen;

		take = n < take ? n : take;
		memcpy(ep->rx + ep->rxlen, p, take);
		ep->rxlen += take;
		r = mpa_frame_decode(ep->rx, ep->rxlen, !ep->responder, &ep->reply);
		if (r >= 0) {
			ep->have_reply = true;
			if (ep->reply.pd_len) {
				memcpy(ep->reply_pd, ep->reply.pd, ep->reply.pd_len);
				ep->reply.pd = ep->reply_pd;
			}
		} else if (r != IW_EAGAIN) {
			ep->reply_err = (int)r;
		}
	}
	iwd_iwarp_data(ep->dec, ep->them, ep->off[ep->them], p, n, ts(), 0);
	ep->off[ep->them] += n;
}

static void got_eof(struct icf_ep *ep, bool rst)
{
	if (ep->eof)
		return;
	ep->eof = true;
	ep->rst = rst;
	if (ep->pcap_on)
		icf_pcap_fin(&ep->pcap, ep->them, rst, ts());
	iwd_iwarp_close(ep->dec, ep->them, rst ? IWD_CLOSE_RST : IWD_CLOSE_FIN, ts());
}

/* Read what is there.  0, or -1 on a socket error (then eof). */
static int rx_some(struct icf_ep *ep)
{
	uint8_t buf[16384];

	for (;;) {
		ssize_t n = recv(ep->fd, buf, sizeof(buf), 0);

		if (n > 0) {
			got(ep, buf, (size_t)n);
			continue;
		}
		if (n == 0) {
			got_eof(ep, false);
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		ep->err = errno;
		got_eof(ep, errno == ECONNRESET);
		return errno == ECONNRESET ? 0 : -1;
	}
}

enum until { UNTIL_MSG, UNTIL_REPLY, UNTIL_CLOSE };

static bool done(const struct icf_ep *ep, enum until u)
{
	if (ep->eof)
		return true;
	switch (u) {
	case UNTIL_MSG:
		return ep->qlen > 0;
	case UNTIL_REPLY:
		return ep->have_reply || ep->reply_err;
	case UNTIL_CLOSE:
		return false;
	}
	return true;
}

static int pump_until(struct icf_ep *ep, int timeout_ms, enum until u)
{
	uint64_t deadline = iwt_now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000u;

	for (;;) {
		struct pollfd pfd = {.fd = ep->fd, .events = POLLIN};
		int ms, r;

		if (done(ep, u) || (ep->stop && *ep->stop))
			return 0;
		ms = iwt_ms_until(deadline);
		r = poll(&pfd, 1, ms);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0 && rx_some(ep) < 0)
			return -1;
		if (r == 0 && ms == 0)
			return 0;
		if (r < 0)
			return 0; /* a signal: let the caller look at its stop flag */
	}
}

int icf_ep_pump(struct icf_ep *ep, int timeout_ms)
{
	return pump_until(ep, timeout_ms, UNTIL_MSG);
}

int icf_ep_send_raw(struct icf_ep *ep, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t left = n;
	uint64_t deadline = iwt_now_ns() + (uint64_t)ICF_SEND_MS * 1000000u;

	if (ep->pcap_on && n)
		icf_pcap_data(&ep->pcap, ep->us, b, n, ts());
	iwd_iwarp_data(ep->dec, ep->us, ep->off[ep->us], b, n, ts(), 0);
	ep->off[ep->us] += n;
	while (left > 0) {
		ssize_t w = send(ep->fd, b, left, MSG_NOSIGNAL);

		if (w > 0) {
			b += w;
			left -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = {.fd = ep->fd, .events = POLLOUT | POLLIN};
			int ms = iwt_ms_until(deadline);

			if (ms == 0) {
				ep->err = ETIMEDOUT;
				return -1;
			}
			if (poll(&pfd, 1, ms) > 0 && (pfd.revents & POLLIN))
				rx_some(ep);
			continue;
		}
		ep->err = w < 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

int icf_ep_send_frame(struct icf_ep *ep, const struct mpa_frame *f)
{
	uint8_t buf[MPA_FRAME_MAX_LEN];
	ssize_t n = mpa_frame_encode(f, buf, sizeof(buf));

	if (n < 0)
		return -1;
	return icf_ep_send_raw(ep, buf, (size_t)n);
}

int icf_ep_wait_frame(struct icf_ep *ep, int timeout_ms)
{
	if (pump_until(ep, timeout_ms, UNTIL_REPLY) < 0)
		return -1;
	return ep->have_reply ? 1 : 0;
}

void icf_ep_start(struct icf_ep *ep)
{
	/* RFC 5044 §7.1.1: CRC when either frame asks for it; Markers toward
	 * the peer when its frame (its Reply, or as Responder its Request)
	 * has M. */
	bool crc = ep->reply.crc || ep->reply.rev == 0;
	const struct iwd_conn_info *ci = iwd_iwarp_info(ep->dec);

	if (ci && ci->mpa_seen)
		crc = ci->crc;
	mpa_tx_init(&ep->tx, crc, ep->reply.markers, 0);
	ep->full = true;
}

ssize_t icf_ep_frame(struct icf_ep *ep, const uint8_t *ulpdu, size_t len, enum icf_mangle mangle,
		     int arg, uint8_t *out)
{
	static struct mpa_fpdu f;
	struct iovec iov = {.iov_base = (void *)(uintptr_t)ulpdu, .iov_len = len};
	uint32_t pos0 = ep->tx.pos;
	size_t n = 0, lenoff;

	if (mpa_tx_frame(&ep->tx, &iov, 1, &f) != IW_OK)
		return -1;
	for (int i = f.first; i < f.first + f.iovcnt; i++) {
		memcpy(out + n, f.iov[i].iov_base, f.iov[i].iov_len);
		n += f.iov[i].iov_len;
	}
	lenoff = ep->tx.markers && pos0 % MPA_MARKER_INTERVAL == 0 ? MPA_MARKER_LEN : 0;
	switch (mangle) {
	case ICF_MANGLE_NONE:
		break;
	case ICF_MANGLE_CRC:
		/* RFC 5044 §4.4: the CRC is the last field of the FPDU */
		if (arg)
			memset(out + n - MPA_CRC_LEN, 0, MPA_CRC_LEN);
		else
			out[n - 1] ^= 0x5A;
		break;
	case ICF_MANGLE_LEN:
		iw_put_be16(out + lenoff, (uint16_t)(iw_get_be16(out + lenoff) + arg));
		break;
	case ICF_MANGLE_MARKER: {
		/* the first Marker in this FPDU, with the CRC made right again so
		 * that only the Marker disagrees (RFC 5044 §8, error 3) */
		size_t k = (MPA_MARKER_INTERVAL - pos0 % MPA_MARKER_INTERVAL) % MPA_MARKER_INTERVAL;
		uint32_t crc;

		if (!ep->tx.markers || k + MPA_MARKER_LEN > n - MPA_CRC_LEN)
			return -1;
		out[k + 3] ^= 0x04;
		if (ep->tx.crc) {
			crc = mpa_crc32c(out, n - MPA_CRC_LEN);
			if (iw_get_be32(out + n - MPA_CRC_LEN) == f.crc)
				iw_put_be32(out + n - MPA_CRC_LEN, crc);
			else
				for (int i = 0; i < 4; i++)
					out[n - MPA_CRC_LEN + i] = (uint8_t)(crc >> (8 * i));
		}
		break;
	}
	}
	return (ssize_t)n;
}

int icf_ep_send_fpdu(struct icf_ep *ep, const uint8_t *ulpdu, size_t len, enum icf_mangle mangle,
		     int arg)
{
	static uint8_t out[ICF_FPDU_MAX];
	ssize_t n = icf_ep_frame(ep, ulpdu, len, mangle, arg, out);

	return n < 0 ? -1 : icf_ep_send_raw(ep, out, (size_t)n);
}

int icf_ep_next(struct icf_ep *ep, struct icf_msg *m, int timeout_ms)
{
	if (!ep->qlen)
		pump_until(ep, timeout_ms, UNTIL_MSG);
	if (!ep->qlen)
		return 0;
	*m = ep->q[ep->qhead];
	ep->qhead = (ep->qhead + 1) % ICF_MSGQ;
	ep->qlen--;
	return 1;
}

bool icf_ep_wait_close(struct icf_ep *ep, int timeout_ms, bool *more)
{
	pump_until(ep, timeout_ms, UNTIL_CLOSE);
	if (more && ep->qlen)
		*more = true;
	return ep->eof;
}

/* Our FIN, a brief drain, the socket and the decoder; the pcap stays. */
static void shut(struct icf_ep *ep)
{
	if (ep->fd >= 0) {
		shutdown(ep->fd, SHUT_WR);
		if (ep->pcap_on)
			icf_pcap_fin(&ep->pcap, ep->us, false, ts());
		iwd_iwarp_close(ep->dec, ep->us, IWD_CLOSE_FIN, ts());
		/* drain briefly so the peer sees a FIN, not a reset */
		pump_until(ep, 200, UNTIL_CLOSE);
		close(ep->fd);
		ep->fd = -1;
	}
	if (ep->dec) {
		if (!ep->eof)
			iwd_iwarp_close(ep->dec, ep->them, IWD_CLOSE_END, ts());
		iwd_iwarp_destroy(ep->dec);
		ep->dec = NULL;
	}
}

int icf_ep_close(struct icf_ep *ep, const char *pcap_path, struct icf_ep *also)
{
	int ret = 0;

	shut(ep);
	if (also) {
		shut(also);
		if (ep->pcap_on && also->pcap_on)
			icf_pcap_merge(&ep->pcap, &also->pcap);
		icf_pcap_free(&also->pcap);
	}
	if (ep->pcap_on && pcap_path)
		ret = icf_pcap_write(&ep->pcap, pcap_path);
	icf_pcap_free(&ep->pcap);
	return ret;
}
