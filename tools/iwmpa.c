/* SPDX-License-Identifier: MIT */
/*
 * iwmpa.c - two processes speaking MPA (RFC 5044, RFC 6581) over real TCP.
 *
 * Theory of operation.  The MPA library is sans-I/O; this tool is the one
 * place that owns a socket.  One process listens (the Responder, -s), the
 * other connects (the Initiator, -c).  After the TCP handshake:
 *
 *   1. Startup (RFC 5044 §7.1, RFC 6581 §9): bytes read from the socket go
 *	to mpa_setup_read_stream(); what mpa_setup_tx_pending() returns is
 *	written out.  The Responder shows the Request and accepts or rejects
 *	it; both sides print what was negotiated.  Octets that arrive behind
 *	the peer's frame already belong to full operation and are handed to
 *	the FPDU receive machine.
 *   2. Full operation: one struct mpa_tx and one struct mpa_rx built from
 *	the negotiated mpa_params.  DDP/RDMAP headers (RFC 5041 §4, RFC 5040
 *	§4) come from the DDP and RDMAP codecs (ddp.h: ddp_hdr_encode/decode,
 *	ddp_seg_* segmentation; rdmap.h: control octet, Read Request header) -
 *	just enough for untagged Sends, the RFC 6581 RTR and a zero-length
 *	RDMA Read Response.  With p2p the Initiator first sends the chosen
 *	RTR (RFC 6581 §9.3); the Responder checks it and, for a Read RTR,
 *	answers with a zero-length Read Response.  The Initiator then sends
 *	--count Sends of --size octets, segmented to the MULPDU (RFC 5044
 *	§4.5, RFC 5041 §4.4); the Responder verifies each and echoes it back;
 *	the Initiator verifies the echoes.  The Responder never sends before
 *	it validated the Initiator's first FPDU (RFC 5044 §7.1.2 rule 4).
 *   3. Teardown (RFC 5044 §7.2): each side half-closes with shutdown(SHUT_WR)
 *	when it has nothing more to send and reads until EOF.
 *
 * I/O is one poll() loop per connection: the socket stays blocking, every
 * call that could block uses MSG_DONTWAIT, so a side that is writing still
 * reads (the two directions never deadlock on full buffers).  FPDUs go out
 * with sendmsg() of the mpa_fpdu iovecs, several FPDUs per call; partial
 * writes are resumed with mpa_fpdu_advance().  With --align (RFC 5044 §5.1
 * "FPDU Alignment") each FPDU is written alone once the kernel has sent
 * the previous one, so every TCP segment starts with an FPDU - which is
 * also what Wireshark's MPA dissector needs to find Markers.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include <iwarp/ddp.h>
#include <iwarp/iw_err.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iw_bytes.h"
#include "iw_log.h"
#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"
#include "iwt_pattern.h"
#include "iwt_rtr.h"
#include "iwt_sock.h"

#define IWMPA_DEFAULT_PORT    5044

#define IWMPA_MSG_MAX	      (16u << 20) /* largest message we send or accept */
#define IWMPA_COUNT_MAX	      1000000u
#define IWMPA_ECHO_QUEUE_MAX  256  /* received messages waiting to be echoed */
#define IWMPA_TXQ_LEN	      32   /* FPDUs framed ahead of the socket */
#define IWMPA_SENDMSG_IOV_MAX 1024 /* Linux UIO_MAXIOV */
#define IWMPA_RECV_CHUNK      65536

enum iwmpa_align { ALIGN_AUTO, ALIGN_ON, ALIGN_OFF };

struct iwmpa_opts {
	bool server;
	bool forever;
	const char *addr; /* initiator: peer to connect to; responder: where to listen */
	const char *listen_addr;
	char port[8]; /* decimal, for getaddrinfo */
	struct mpa_config cfg;
	unsigned count;
	size_t size;
	uint32_t mss; /* 0 = TCP_MAXSEG of the socket */
	const char *pd;
	size_t pd_len;
	bool reject;
	unsigned timeout_s;
	int verbose; /* -1 quiet, 0 normal, 1 -v, 2 -vv */
	bool trace;
	enum iwmpa_align align;
};

/* One message (or one control ULPDU) waiting to be framed and sent. */
struct txmsg {
	struct txmsg *next;
	bool is_raw;	  /* ULPDU given verbatim in `raw` (RTR, Read Response) */
	const char *what; /* for the log: "Write RTR", "RDMA Read Response" */
	uint8_t raw[64];
	size_t raw_len;
	uint8_t *buf; /* Send payload (owned) */
	size_t len;
	uint32_t msn;
	struct ddp_seg seg; /* its segments (RFC 5041 §5.2), once framing began */
	bool seg_started;
	unsigned nfpdus;
	size_t wire; /* octets on the wire, Markers included */
};

/* One framed FPDU.  Never moves while queued: mpa_fpdu points into itself. */
struct txent {
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN];
	struct mpa_fpdu f;
	struct txmsg *done_msg; /* set on the FPDU that ends a message */
};

/* A message received completely, waiting to be echoed (Responder). */
struct rxmsg {
	struct rxmsg *next;
	uint8_t *buf;
	size_t len;
};

struct stats {
	uint64_t msgs, payload, fpdus, wire, markers;
};

struct conn {
	const struct iwmpa_opts *o;
	const char *role;
	int fd;
	bool initiator;
	struct mpa_params params;
	uint32_t emss, mulpdu;
	bool align;
	char errmsg[256];

	/* transmit */
	struct mpa_tx tx;
	struct txent *txq; /* ring of IWMPA_TXQ_LEN */
	unsigned txq_head, txq_n;
	struct txmsg *tx_list, **tx_tail, *tx_cur;
	bool can_send;	    /* Responder: first FPDU validated */
	bool tx_all_queued; /* Initiator: every message handed to the list */
	bool shut_wr;
	uint32_t tx_msn;

	/* receive */
	struct mpa_rx rx;
	bool rx_eof;
	uint8_t *ulpdu; /* one ULPDU, Markers removed (MPA_ULPDU_MAX) */
	size_t ulpdu_len;
	uint8_t *msg; /* message being reassembled */
	size_t msg_len, msg_cap;
	unsigned msg_fpdus;
	uint32_t rx_msn;       /* MSN expected next on QN 0 */
	bool first_fpdu;       /* no FPDU received yet */
	bool read_outstanding; /* Initiator sent a Read RTR */
	uint32_t read_sink_stag;
	uint64_t read_sink_to;
	struct rxmsg *echo_head, **echo_tail;
	unsigned echo_n;
	unsigned data_index_base; /* MSN - index of the first data message */

	struct stats st_tx, st_rx;
};

static const char *prog = "iwmpa";
static int g_verbose;

/* ---------------------------------------------------------------------- */
/* Output                                                                   */
/* ---------------------------------------------------------------------- */

static void say(const struct conn *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(const struct conn *c, int level, const char *fmt, ...)
{
	va_list ap;

	if (g_verbose < level)
		return;
	if (c)
		printf("%s: ", c->role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void errf(const char *role, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errf(const char *role, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	if (role)
		fprintf(stderr, "%s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int conn_fail(struct conn *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int conn_fail(struct conn *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->errmsg[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
		va_end(ap);
	}
	return err;
}

static void hexdump(const struct conn *c, const char *title, const uint8_t *p, size_t n)
{
	size_t i, j;

	printf("%s: %s (%zu octets)\n", c->role, title, n);
	for (i = 0; i < n; i += 16) {
		printf("    %04zx ", i);
		for (j = i; j < i + 16; j++) {
			if (j < n)
				printf(" %02x", p[j]);
			else
				fputs("   ", stdout);
		}
		fputs("  ", stdout);
		for (j = i; j < i + 16 && j < n; j++)
			putchar(p[j] >= 0x20 && p[j] < 0x7f ? p[j] : '.');
		putchar('\n');
	}
}

static void hexdump_iov(const struct conn *c, const char *title, const struct iovec *iov, int cnt,
			size_t total)
{
	uint8_t *flat = malloc(total ? total : 1);
	size_t off = 0;
	int i;

	if (!flat)
		return;
	for (i = 0; i < cnt; i++) {
		memcpy(flat + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	hexdump(c, title, flat, off);
	free(flat);
}

static void log_sink(void *ctx, enum iw_log_level level, const char *msg)
{
	(void)ctx;
	fflush(stdout);
	fprintf(stderr, "%s: libiwarp %s: %s\n", prog, iwt_log_level_name(level), msg);
}

/* Private data for the log: quoted when printable, hex otherwise. */
static void pd_describe(const uint8_t *pd, size_t len, char *buf, size_t cap)
{
	size_t i, n = 0;
	bool text = len > 0;

	for (i = 0; i < len; i++)
		if (pd[i] < 0x20 || pd[i] >= 0x7f)
			text = false;
	if (len == 0) {
		snprintf(buf, cap, "none");
	} else if (text) {
		snprintf(buf, cap, "%zu octets \"%.*s\"", len, (int)IW_MIN(len, (size_t)120),
			 (const char *)pd);
	} else {
		n = (size_t)snprintf(buf, cap, "%zu octets", len);
		for (i = 0; i < len && i < 32 && n + 4 < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%02x", i ? "" : " ", pd[i]);
		if (len > 32 && n + 4 < cap)
			snprintf(buf + n, cap - n, "...");
	}
}

static void frame_describe(const struct mpa_frame *f, char *buf, size_t cap)
{
	char rtr[IWT_RTR_NAMES_LEN], pd[200];
	size_t n;

	n = (size_t)snprintf(buf, cap, "rev %u M=%d C=%d R=%d S=%d", f->rev, f->markers, f->crc,
			     f->reject, f->enhanced);
	if (f->enhanced && n < cap) {
		char ird[16], ord[16];

		if (f->ird == MPA_IRD_ORD_MAX)
			snprintf(ird, sizeof(ird), "none");
		else
			snprintf(ird, sizeof(ird), "%u", f->ird);
		if (f->ord == MPA_IRD_ORD_MAX)
			snprintf(ord, sizeof(ord), "none");
		else
			snprintf(ord, sizeof(ord), "%u", f->ord);
		n += (size_t)snprintf(buf + n, cap - n, " IRD %s ORD %s %s RTR %s", ird, ord,
				      f->p2p ? "p2p" : "client-server",
				      iwt_rtr_names(f->rtr, rtr, sizeof(rtr)));
	}
	pd_describe(f->pd, f->pd_len, pd, sizeof(pd));
	if (n < cap)
		snprintf(buf + n, cap - n, ", private data %s", pd);
}

/* ---------------------------------------------------------------------- */
/* Small helpers                                                            */
/* ---------------------------------------------------------------------- */

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p) {
		errf(NULL, "out of memory");
		exit(IWT_EXIT_FAIL);
	}
	return p;
}

/* Write all of buf with poll(); used only for the small startup frames. */
static int write_all(int fd, const uint8_t *buf, size_t len, unsigned timeout_s)
{
	while (len) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		ssize_t n;
		int r = poll(&pfd, 1, (int)timeout_s * 1000);

		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Startup phase                                                            */
/* ---------------------------------------------------------------------- */

static void log_sent_frame(struct conn *c, const struct mpa_setup *s)
{
	struct mpa_frame f;
	char desc[400];
	bool reply = !c->initiator;

	if (mpa_frame_decode(s->txbuf, s->txlen, reply, &f) < 0) {
		say(c, 0, "MPA %s sent (%zu octets)", reply ? "Reply" : "Request", s->txlen);
	} else {
		frame_describe(&f, desc, sizeof(desc));
		say(c, 0, "MPA %s sent: %s", reply ? "Reply" : "Request", desc);
	}
	if (c->o->trace)
		hexdump(c, reply ? "MPA Reply frame" : "MPA Request frame", s->txbuf, s->txlen);
}

static void log_peer_frame(struct conn *c, const struct mpa_setup *s)
{
	const struct mpa_frame *f = mpa_setup_peer_frame(s);
	char desc[400];

	if (!f)
		return;
	frame_describe(f, desc, sizeof(desc));
	say(c, 0, "MPA %s received: %s", f->reply ? "Reply" : "Request", desc);
}

static void log_negotiated(struct conn *c)
{
	const struct mpa_params *p = &c->params;
	char rtr[64];

	if (p->p2p)
		snprintf(rtr, sizeof(rtr), "peer-to-peer, %s", iwt_rtr_form_name(p->rtr));
	else
		snprintf(rtr, sizeof(rtr), "client-server");
	say(c, 0, "negotiated: rev %u%s, CRC %s, markers tx %s rx %s, %s", p->rev,
	    p->enhanced ? " (enhanced)" : "", p->crc ? "on" : "off", p->markers_tx ? "on" : "off",
	    p->markers_rx ? "on" : "off", rtr);
	if (p->enhanced)
		say(c, 0, "negotiated: IRD %u ORD %u (peer sent IRD %u ORD %u)", p->ird, p->ord,
		    p->peer_ird, p->peer_ord);
	say(c, 0, "full operation: EMSS %" PRIu32 ", MULPDU %" PRIu32 "%s%s", c->emss, c->mulpdu,
	    c->align ? ", FPDU-aligned writes" : "",
	    p->wait_first_fpdu ? ", waiting for the initiator's first FPDU" : "");
}

/*
 * Run the startup phase.  On success the negotiated parameters are in
 * c->params and any octets read past the peer's frame are in left[0..*nleft).
 * Returns IWT_EXIT_OK, or IWT_EXIT_FAIL with the cause printed.
 */
static int run_setup(struct conn *c, uint8_t *left, size_t *nleft, bool *rejected)
{
	const struct iwmpa_opts *o = c->o;
	struct mpa_setup *s = xcalloc(1, sizeof(*s));
	bool frame_logged = false, peer_logged = false;
	int rc = IWT_EXIT_FAIL, r;

	*nleft = 0;
	*rejected = false;
	r = mpa_setup_init(s, c->initiator ? MPA_INITIATOR : MPA_RESPONDER, &o->cfg, iwt_now_ns());
	if (r < 0) {
		errf(c->role, "MPA setup: %s", rdmap_strerror(r));
		goto out;
	}
	if (c->initiator) {
		r = mpa_setup_connect(s, o->pd, o->pd_len);
		if (r < 0) {
			errf(c->role, "MPA Request: %s", rdmap_strerror(r));
			goto out;
		}
	}

	for (;;) {
		const uint8_t *out;
		size_t pending = mpa_setup_tx_pending(s, &out);
		uint8_t buf[MPA_FRAME_MAX_LEN];
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		ssize_t n, used;

		if (pending) {
			if (write_all(c->fd, out, pending, o->timeout_s) < 0) {
				errf(c->role, "sending the MPA %s: %s",
				     c->initiator ? "Request" : "Reply", strerror(errno));
				goto out;
			}
			mpa_setup_tx_advance(s, pending);
			if (!frame_logged) {
				log_sent_frame(c, s);
				frame_logged = true;
			}
			continue;
		}
		if (!peer_logged && mpa_setup_peer_frame(s)) {
			log_peer_frame(c, s);
			peer_logged = true;
			if (o->trace)
				hexdump(c, "peer's frame", s->rxbuf, s->rxlen);
		}

		switch (s->state) {
		case MPA_SETUP_REQUEST_RECEIVED:
			if (o->reject) {
				r = mpa_setup_reject(s, o->pd, o->pd_len);
				say(c, 0, "rejecting the Request%s",
				    o->pd_len ? " (reason in private data)" : "");
			} else {
				r = mpa_setup_accept(s, o->pd, o->pd_len);
			}
			if (r < 0) {
				errf(c->role, "%s the Request: %s (%s)",
				     o->reject ? "rejecting" : "accepting", rdmap_strerror(r),
				     rdmap_errname(r));
				goto out;
			}
			continue;
		case MPA_SETUP_ESTABLISHED:
			r = mpa_setup_params(s, &c->params);
			if (r < 0) {
				errf(c->role, "MPA parameters: %s", rdmap_strerror(r));
				goto out;
			}
			rc = IWT_EXIT_OK;
			goto out;
		case MPA_SETUP_REJECTED:
			*rejected = true;
			if (c->initiator) {
				const struct mpa_frame *f = mpa_setup_peer_frame(s);
				char pd[200] = "none";

				if (f)
					pd_describe(f->pd, f->pd_len, pd, sizeof(pd));
				conn_fail(c, IW_EMPA_REJECTED,
					  "connection rejected by the responder (private data %s)",
					  pd);
			}
			rc = IWT_EXIT_OK;
			goto out;
		case MPA_SETUP_FAILED:
			errf(c->role, "MPA startup failed: %s (%s)", rdmap_strerror(s->error),
			     rdmap_errname(s->error));
			goto out;
		default:
			break;
		}

		r = poll(&pfd, 1, iwt_ms_until(mpa_setup_get_expiry(s)));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			errf(c->role, "poll: %s", strerror(errno));
			goto out;
		}
		if (r == 0) {
			r = mpa_setup_handle_expiry(s, iwt_now_ns());
			if (r < 0) {
				errf(c->role, "%s waiting for the %s (%s)", rdmap_strerror(r),
				     c->initiator ? "Reply" : "Request", rdmap_errname(r));
				goto out;
			}
			continue;
		}
		/* Read at most one frame's worth: whatever follows the frame is FPDUs. */
		n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			errf(c->role, "receiving the MPA %s: %s",
			     c->initiator ? "Reply" : "Request", strerror(errno));
			goto out;
		}
		if (n == 0) {
			r = mpa_setup_handle_close(s);
			errf(c->role, "peer closed the connection during MPA startup: %s (%s)",
			     rdmap_strerror(r < 0 ? r : s->error),
			     rdmap_errname(r < 0 ? r : s->error));
			goto out;
		}
		used = mpa_setup_read_stream(s, buf, (size_t)n, iwt_now_ns());
		if (used < 0) {
			errf(c->role, "bad MPA %s from the peer: %s (%s)",
			     c->initiator ? "Reply" : "Request", rdmap_strerror((int)used),
			     rdmap_errname((int)used));
			goto out;
		}
		if (used < n) {
			if (*nleft + (size_t)(n - used) > MPA_FRAME_MAX_LEN) {
				errf(c->role, "peer sent too much before the startup ended");
				goto out;
			}
			memcpy(left + *nleft, buf + used, (size_t)(n - used));
			*nleft += (size_t)(n - used);
		}
	}
out:
	free(s);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Full operation: transmit                                                 */
/* ---------------------------------------------------------------------- */

static void txlist_push(struct conn *c, struct txmsg *m)
{
	m->next = NULL;
	*c->tx_tail = m;
	c->tx_tail = &m->next;
}

static struct txmsg *txlist_pop(struct conn *c)
{
	struct txmsg *m = c->tx_list;

	if (m) {
		c->tx_list = m->next;
		if (!c->tx_list)
			c->tx_tail = &c->tx_list;
	}
	return m;
}

static void queue_raw(struct conn *c, const char *what, const uint8_t *ulpdu, size_t len)
{
	struct txmsg *m = xcalloc(1, sizeof(*m));

	m->is_raw = true;
	m->what = what;
	memcpy(m->raw, ulpdu, len);
	m->raw_len = len;
	txlist_push(c, m);
}

/* Queue an untagged Send (RFC 5040 opcode 3, QN 0); takes ownership of buf. */
static void queue_send(struct conn *c, uint8_t *buf, size_t len)
{
	struct txmsg *m = xcalloc(1, sizeof(*m));

	m->buf = buf;
	m->len = len;
	m->msn = c->tx_msn++;
	txlist_push(c, m);
}

static struct txent *txq_tail_slot(struct conn *c)
{
	return &c->txq[(c->txq_head + c->txq_n) % IWMPA_TXQ_LEN];
}

/* Frame one ULPDU = hdr[0..hlen) + payload into the next queue slot. */
static int txq_frame(struct conn *c, struct txent *e, size_t hlen, const uint8_t *payload,
		     size_t plen, struct txmsg *done)
{
	struct iovec iov[2];
	int n = 0, r;

	iov[n].iov_base = e->hdr;
	iov[n++].iov_len = hlen;
	if (plen) {
		/* the iovec type is not const; the library only reads through it */
		iov[n].iov_base = (void *)(uintptr_t)payload;
		iov[n++].iov_len = plen;
	}
	r = mpa_tx_frame(&c->tx, iov, n, &e->f);
	if (r < 0)
		return conn_fail(c, r, "framing a %zu-octet ULPDU: %s", hlen + plen,
				 rdmap_strerror(r));
	e->done_msg = done;
	c->txq_n++;
	c->st_tx.fpdus++;
	c->st_tx.markers += e->f.nmarkers;
	c->st_tx.wire += e->f.total;
	say(c, c->o->trace ? 0 : 1,
	    "tx FPDU: ULPDU %zu octets, PAD %u, %u marker%s, CRC %08" PRIx32
	    ", %zu octets on the wire",
	    hlen + plen, mpa_pad_len(hlen + plen), e->f.nmarkers, e->f.nmarkers == 1 ? "" : "s",
	    e->f.crc, e->f.total);
	if (c->o->trace)
		hexdump_iov(c, "tx FPDU", e->f.iov + e->f.first, e->f.iovcnt, e->f.len);
	return 0;
}

/* Start segmenting Send message m: untagged, QN 0, its MSN (RFC 5040 §4.3, §5.3). */
static int tx_seg_start(struct conn *c, struct txmsg *m)
{
	const struct ddp_hdr tmpl = {
		.rsvdulp = rdmap_ctrl_make(RDMAP_OP_SEND),
		.rsvdulp2 = 0, /* Invalidate STag: unused by plain Send */
		.qn = DDP_QN_SEND,
		.msn = m->msn,
	};
	/* RFC 5041 §4.4: every segment carries a header and fits the MULPDU. */
	int r = ddp_seg_init(&m->seg, &tmpl, (uint32_t)m->len, c->mulpdu);

	if (r < 0)
		return conn_fail(c, r, "segmenting a %zu-octet Send for MULPDU %" PRIu32 ": %s",
				 m->len, c->mulpdu, rdmap_strerror(r));
	m->seg_started = true;
	return 0;
}

/* Frame queued messages into FPDUs until the ring is full or nothing is left. */
static int tx_fill(struct conn *c)
{
	while (c->txq_n < IWMPA_TXQ_LEN) {
		struct txmsg *m = c->tx_cur;
		struct txent *e;
		struct ddp_hdr h;
		uint32_t off, chunk;
		ssize_t hlen;
		int r;

		if (!m) {
			m = txlist_pop(c);
			if (!m)
				return 0;
			c->tx_cur = m;
		}
		e = txq_tail_slot(c);
		if (m->is_raw) {
			memcpy(e->hdr, m->raw, m->raw_len);
			r = txq_frame(c, e, m->raw_len, NULL, 0, m);
			if (r < 0)
				return r;
			m->nfpdus = 1;
			m->wire = e->f.total;
			c->tx_cur = NULL;
			continue;
		}
		if (!m->seg_started && (r = tx_seg_start(c, m)) < 0)
			return r;
		/* never false: the message leaves tx_cur with its last segment */
		if (!ddp_seg_next(&m->seg, &h, &off, &chunk))
			return conn_fail(c, IW_EINVAL, "Send MSN %" PRIu32 " has no segment left",
					 m->msn);
		hlen = ddp_hdr_encode(&h, e->hdr, sizeof(e->hdr));
		if (hlen < 0)
			return conn_fail(c, (int)hlen, "DDP header: %s", rdmap_strerror((int)hlen));
		r = txq_frame(c, e, (size_t)hlen, chunk ? m->buf + off : NULL, chunk,
			      h.last ? m : NULL);
		if (r < 0)
			return r;
		m->nfpdus++;
		m->wire += e->f.total;
		if (h.last)
			c->tx_cur = NULL;
	}
	return 0;
}

static void tx_msg_done(struct conn *c, struct txmsg *m)
{
	if (m->is_raw) {
		say(c, 0, "sent %s (%zu-octet ULPDU, %zu octets on the wire)", m->what, m->raw_len,
		    m->wire);
	} else {
		say(c, 0,
		    "sent Send MSN %" PRIu32 " (%zu bytes in %u FPDU%s, %zu octets on the wire)",
		    m->msn, m->len, m->nfpdus, m->nfpdus == 1 ? "" : "s", m->wire);
		c->st_tx.msgs++;
		c->st_tx.payload += m->len;
		if (!c->initiator)
			c->echo_n--;
	}
	free(m->buf);
	free(m);
}

/* Octets written to the socket but not yet handed to IP (SIOCOUTQNSD). */
static int unsent_octets(int fd)
{
	int n = 0;

	if (ioctl(fd, SIOCOUTQNSD, &n) < 0)
		return 0; /* unknown: do not stall */
	return n;
}

/*
 * Write queued FPDUs.  Returns 0 (including "socket full"), or a negative
 * iw_err with c->errmsg set.
 */
static int tx_write(struct conn *c)
{
	struct iovec iov[IWMPA_SENDMSG_IOV_MAX];
	struct msghdr mh = {.msg_iov = iov};
	unsigned i, k;
	ssize_t n;

	if (c->txq_n == 0)
		return 0;
	for (i = 0, k = 0; i < c->txq_n; i++) {
		struct txent *e = &c->txq[(c->txq_head + i) % IWMPA_TXQ_LEN];

		if (k + (unsigned)e->f.iovcnt > IWMPA_SENDMSG_IOV_MAX)
			break;
		memcpy(iov + k, e->f.iov + e->f.first, (size_t)e->f.iovcnt * sizeof(*iov));
		k += (unsigned)e->f.iovcnt;
		if (c->align)
			break; /* one FPDU per segment */
	}
	mh.msg_iovlen = k;
	n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return conn_fail(c, IW_EMPA_CLOSED, "send: %s", strerror(errno));
	}
	while (n > 0 && c->txq_n) {
		struct txent *e = &c->txq[c->txq_head];
		size_t take = IW_MIN((size_t)n, e->f.len);

		mpa_fpdu_advance(&e->f, take);
		n -= (ssize_t)take;
		if (e->f.len)
			break;
		if (e->done_msg)
			tx_msg_done(c, e->done_msg);
		c->txq_head = (c->txq_head + 1) % IWMPA_TXQ_LEN;
		c->txq_n--;
	}
	return 0;
}

static bool tx_idle(const struct conn *c)
{
	return c->txq_n == 0 && !c->tx_cur && !c->tx_list;
}

/* ---------------------------------------------------------------------- */
/* Full operation: receive                                                  */
/* ---------------------------------------------------------------------- */

static int rx_ulpdu_header(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct conn *c = user;
	size_t want;

	if (have == 0) {
		c->ulpdu_len = 0;
		return 0;
	}
	/* The DDP header length follows from the T bit of the DDP control octet; a
	 * Read Request (RDMAP control octet: RsvdULP) adds its RDMAP header. */
	want = ddp_hdr_len(hdr[0] & DDP_CTRL_T);
	if (!(hdr[0] & DDP_CTRL_T) && have >= 2 && rdmap_ctrl_opcode(hdr[1]) == RDMAP_OP_READ_REQ)
		want += RDMAP_READ_REQ_LEN;
	want = IW_MIN(want, ulpdu_len);
	if (want > have)
		return (int)want;
	memcpy(c->ulpdu, hdr, have);
	c->ulpdu_len = ulpdu_len;
	return (int)have;
}

static int rx_ulpdu_payload(void *user, size_t off, const uint8_t *p, size_t n)
{
	struct conn *c = user;

	if (off + n > MPA_ULPDU_MAX)
		return conn_fail(c, IW_EMPA_LEN, "ULPDU longer than 65535 octets");
	memcpy(c->ulpdu + off, p, n);
	return 0;
}

static int rx_need_msg_room(struct conn *c, size_t need)
{
	size_t cap = c->msg_cap ? c->msg_cap : 65536;
	uint8_t *p;

	if (need <= c->msg_cap)
		return 0;
	if (need > IWMPA_MSG_MAX)
		return conn_fail(c, IW_ERANGE, "peer's message is larger than %u octets",
				 IWMPA_MSG_MAX);
	while (cap < need)
		cap *= 2;
	p = realloc(c->msg, cap);
	if (!p)
		return conn_fail(c, IW_ENOMEM, "out of memory for a %zu-octet message", cap);
	c->msg = p;
	c->msg_cap = cap;
	return 0;
}

/* The Responder's first FPDU with p2p: it must be the negotiated RTR (RFC 6581 §9.3). */
static int rx_check_rtr(struct conn *c, const uint8_t *u, size_t len)
{
	enum mpa_rtr got = mpa_rtr_classify(u, len);
	struct rdmap_read_req req;
	struct ddp_hdr rsp;
	uint8_t buf[DDP_TAGGED_HDR_LEN];

	if (got != c->params.rtr) {
		return conn_fail(c, IW_EMPA_RTR,
				 "first FPDU is not the negotiated RTR: expected %s, got %s",
				 iwt_rtr_form_name(c->params.rtr),
				 got == MPA_RTR_NONE ? "a non-RTR ULPDU" : iwt_rtr_form_name(got));
	}
	say(c, 0, "received %s", iwt_rtr_form_name(got));
	switch (got) {
	case MPA_RTR_SEND:
		c->rx_msn++; /* the Send RTR used MSN 1 of QN 0 */
		break;
	case MPA_RTR_READ:
		/* RFC 5040 §4.4: answer with a Read Response to the Data Sink STag/TO
		 * (classify checked the length: DDP header + Read Request header). */
		rdmap_read_req_decode(u + DDP_UNTAGGED_HDR_LEN, &req);
		rsp = (struct ddp_hdr){
			.tagged = true,
			.last = true,
			.rsvdulp = rdmap_ctrl_make(RDMAP_OP_READ_RESP),
			.stag = req.sink_stag,
			.to = req.sink_to,
		};
		if (ddp_hdr_encode(&rsp, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return conn_fail(c, IW_EINVAL, "cannot build the Read Response");
		queue_raw(c, "zero-length RDMA Read Response", buf, sizeof(buf));
		break;
	default:
		break;
	}
	return 0;
}

/* A tagged segment h of len octets (header included) with opcode Read Response. */
static int rx_read_response(struct conn *c, const struct ddp_hdr *h, size_t len)
{
	if (!c->read_outstanding)
		return conn_fail(c, IW_EINVAL,
				 "unexpected RDMA Read Response (no Read outstanding)");
	if (!h->last || len != DDP_TAGGED_HDR_LEN || h->stag != c->read_sink_stag ||
	    h->to != c->read_sink_to)
		return conn_fail(c, IW_EINVAL,
				 "RDMA Read Response does not answer the Read RTR (STag %08" PRIx32
				 " TO %" PRIu64 ", %zu octets, L=%d)",
				 h->stag, h->to, len, h->last);
	c->read_outstanding = false;
	say(c, 0,
	    "received zero-length RDMA Read Response (STag %08" PRIx32 " TO %" PRIu64
	    ") answering the Read RTR",
	    h->stag, h->to);
	return 0;
}

static int rx_message_done(struct conn *c)
{
	unsigned index = c->rx_msn - c->data_index_base;
	size_t bad = iwt_abc_check(c->msg, c->msg_len, index);

	if (bad != c->msg_len)
		return conn_fail(c, IW_EINVAL,
				 "Send MSN %" PRIu32
				 ": payload octet %zu is 0x%02x, expected 0x%02x",
				 c->rx_msn, bad, c->msg[bad], iwt_abc_byte(index, bad));
	if (c->initiator && c->msg_len != c->o->size)
		return conn_fail(c, IW_EINVAL, "echo MSN %" PRIu32 " has %zu octets, sent %zu",
				 c->rx_msn, c->msg_len, c->o->size);
	say(c, 0, "received Send MSN %" PRIu32 " (%zu bytes in %u FPDU%s, pattern ok)", c->rx_msn,
	    c->msg_len, c->msg_fpdus, c->msg_fpdus == 1 ? "" : "s");
	c->st_rx.msgs++;
	c->st_rx.payload += c->msg_len;
	if (!c->initiator) {
		/* echo it: the buffer moves to the transmit side */
		queue_send(c, c->msg, c->msg_len);
		c->msg = NULL;
		c->msg_cap = 0;
		c->echo_n++;
	}
	c->msg_len = 0;
	c->msg_fpdus = 0;
	c->rx_msn++;
	return 0;
}

/* An untagged segment h with opcode Send and its payload p[0..plen). */
static int rx_send_segment(struct conn *c, const struct ddp_hdr *h, const uint8_t *p, size_t plen)
{
	int r;

	if (h->qn != DDP_QN_SEND || h->msn != c->rx_msn || h->mo != c->msg_len)
		return conn_fail(c, IW_EINVAL,
				 "Send out of sequence: QN %" PRIu32 " MSN %" PRIu32 " MO %" PRIu32
				 ", expected QN 0 MSN %" PRIu32 " MO %zu",
				 h->qn, h->msn, h->mo, c->rx_msn, c->msg_len);
	r = rx_need_msg_room(c, c->msg_len + plen);
	if (r < 0)
		return r;
	if (plen) /* c->msg may still be NULL for an empty message */
		memcpy(c->msg + c->msg_len, p, plen);
	c->msg_len += plen;
	c->msg_fpdus++;
	if (h->last)
		return rx_message_done(c);
	return 0;
}

/* A complete, CRC-checked ULPDU. */
static int rx_fpdu_done(void *user)
{
	struct conn *c = user;
	const uint8_t *u = c->ulpdu;
	size_t len = c->ulpdu_len;
	bool first = c->first_fpdu;
	struct ddp_hdr h;
	ssize_t hlen;
	uint8_t op;

	c->st_rx.fpdus++;
	c->first_fpdu = false;
	if (c->o->trace)
		hexdump(c, "rx ULPDU (Markers removed, CRC ok)", u, len);
	else
		say(c, 1, "rx FPDU: ULPDU %zu octets", len);
	/* the two control octets every segment opens with: DDP (T, L, DV) and
	 * RDMAP (RV, opcode; DDP's RsvdULP) */
	if (len < 2)
		return conn_fail(c, IW_EINVAL, "%zu-octet ULPDU cannot hold a DDP header", len);
	if ((u[0] & DDP_CTRL_DV) != DDP_VERSION || rdmap_ctrl_rv(u[1]) != RDMAP_VERSION)
		return conn_fail(c, IW_EINVAL, "DDP version %u / RDMAP version %u (expected 1/1)",
				 u[0] & DDP_CTRL_DV, rdmap_ctrl_rv(u[1]));
	if (!c->initiator && first) {
		/* RFC 5044 §7.1.2 rule 4: the Responder may send from now on. */
		c->can_send = true;
		if (c->params.p2p)
			return rx_check_rtr(c, u, len);
	}
	/* versions are checked: the decoder can only find the segment too short */
	hlen = ddp_hdr_decode(u, len, &h);
	if (hlen < 0)
		return conn_fail(c, IW_EINVAL, "%s DDP segment of %zu octets (< %zu)",
				 u[0] & DDP_CTRL_T ? "tagged" : "untagged", len,
				 ddp_hdr_len(u[0] & DDP_CTRL_T));
	op = rdmap_ctrl_opcode(h.rsvdulp);
	if (h.tagged) {
		if (op == RDMAP_OP_READ_RESP)
			return rx_read_response(c, &h, len);
		return conn_fail(c, IW_EINVAL, "unexpected tagged RDMAP opcode %u", op);
	}
	if (op != RDMAP_OP_SEND)
		return conn_fail(c, IW_EINVAL, "unexpected untagged RDMAP opcode %u", op);
	return rx_send_segment(c, &h, u + hlen, len - (size_t)hlen);
}

static const struct mpa_rx_ops rx_ops = {
	.ulpdu_header = rx_ulpdu_header,
	.ulpdu_payload = rx_ulpdu_payload,
	.fpdu_done = rx_fpdu_done,
};

static int rx_feed(struct conn *c, const uint8_t *buf, size_t n)
{
	ssize_t r;

	if (n == 0)
		return 0;
	c->st_rx.wire += n;
	r = mpa_rx_read_stream(&c->rx, buf, n);
	if (r < 0) {
		if (c->errmsg[0] == '\0')
			conn_fail(c, (int)r, "receiving FPDUs: %s (%s)", rdmap_strerror((int)r),
				  rdmap_errname((int)r));
		return (int)r;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Full operation: the loop                                                 */
/* ---------------------------------------------------------------------- */

static int start_full_operation(struct conn *c, const uint8_t *left, size_t nleft)
{
	struct mpa_rx_config rc;
	const struct mpa_params *p = &c->params;
	int r;

	mpa_tx_init(&c->tx, p->crc, p->markers_tx, 0);
	mpa_rx_config_default(&rc);
	rc.crc = p->crc;
	rc.markers = p->markers_rx;
	rc.pos = 0;
	rc.hdr_min = DDP_UNTAGGED_HDR_LEN;
	rc.max_ulpdu = MPA_ULPDU_MAX;
	r = mpa_rx_init(&c->rx, &rc, &rx_ops, c);
	if (r < 0)
		return conn_fail(c, r, "mpa_rx_init: %s", rdmap_strerror(r));

	c->txq = xcalloc(IWMPA_TXQ_LEN, sizeof(*c->txq));
	c->ulpdu = xcalloc(1, MPA_ULPDU_MAX + 1);
	c->tx_tail = &c->tx_list;
	c->echo_tail = &c->echo_head;
	c->tx_msn = 1;
	c->rx_msn = 1;
	c->data_index_base = 0;
	c->first_fpdu = true;
	c->can_send = !p->wait_first_fpdu;

	if (c->initiator) {
		if (p->p2p) {
			uint8_t rtr[64];
			ssize_t n = mpa_rtr_encode((enum mpa_rtr)p->rtr, rtr, sizeof(rtr));

			if (n < 0)
				return conn_fail(c, (int)n, "building the RTR: %s",
						 rdmap_strerror((int)n));
			if (p->rtr == MPA_RTR_SEND)
				c->tx_msn++; /* the RTR is Send MSN 1 */
			if (p->rtr == MPA_RTR_READ &&
			    n >= DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN) {
				struct rdmap_read_req req;

				rdmap_read_req_decode(rtr + DDP_UNTAGGED_HDR_LEN, &req);
				c->read_outstanding = true;
				c->read_sink_stag = req.sink_stag;
				c->read_sink_to = req.sink_to;
			}
			queue_raw(c, iwt_rtr_form_name(p->rtr), rtr, (size_t)n);
		}
		for (unsigned i = 1; i <= c->o->count; i++) {
			uint8_t *buf = malloc(c->o->size ? c->o->size : 1);

			if (!buf)
				return conn_fail(c, IW_ENOMEM, "out of memory");
			iwt_abc_fill(buf, c->o->size, i);
			queue_send(c, buf, c->o->size);
		}
		c->tx_all_queued = true;
	} else {
		/* echoes start at MSN 1 in our direction; received data messages are
		 * numbered by the initiator's MSN, minus one when a Send RTR used MSN 1 */
		if (p->p2p && p->rtr == MPA_RTR_SEND)
			c->data_index_base = 1;
	}
	return rx_feed(c, left, nleft);
}

static bool conn_finished(const struct conn *c)
{
	return c->rx_eof && c->shut_wr && tx_idle(c);
}

/* Returns IWT_EXIT_OK or IWT_EXIT_FAIL (cause printed). */
static int run_full_operation(struct conn *c, const uint8_t *left, size_t nleft)
{
	static uint8_t buf[IWMPA_RECV_CHUNK];
	uint64_t idle_deadline;
	int r;

	r = start_full_operation(c, left, nleft);
	if (r < 0)
		goto fail;

	idle_deadline = iwt_now_ns() + (uint64_t)c->o->timeout_s * 1000000000u;
	while (!conn_finished(c)) {
		struct pollfd pfd = {.fd = c->fd};
		bool align_wait = false;
		int timeout;

		r = tx_fill(c);
		if (r < 0)
			goto fail;
		if (c->can_send && c->txq_n) {
			if (c->align && unsent_octets(c->fd) > 0)
				align_wait = true;
			else
				pfd.events |= POLLOUT;
		}
		if (!c->shut_wr && tx_idle(c) && (c->initiator ? c->tx_all_queued : c->rx_eof)) {
			/* RFC 5044 §7.2: nothing more to send, close our half. */
			shutdown(c->fd, SHUT_WR);
			c->shut_wr = true;
			say(c, 1, "sent FIN (shutdown SHUT_WR)");
			continue;
		}
		if (!c->rx_eof && c->echo_n < IWMPA_ECHO_QUEUE_MAX)
			pfd.events |= POLLIN;

		timeout = iwt_ms_until(idle_deadline);
		if (align_wait)
			timeout = IW_MIN(timeout, 1);
		r = poll(&pfd, 1, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = conn_fail(c, IW_EINVAL, "poll: %s", strerror(errno));
			goto fail;
		}
		if (r == 0) {
			if (align_wait)
				continue;
			r = conn_fail(c, IW_ETIMEDOUT, "no progress for %u s (%s)", c->o->timeout_s,
				      c->rx_eof ? "peer does not read" : "waiting for the peer");
			goto fail;
		}
		idle_deadline = iwt_now_ns() + (uint64_t)c->o->timeout_s * 1000000000u;
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				r = conn_fail(c, IW_EMPA_CLOSED, "recv: %s", strerror(errno));
				goto fail;
			}
			if (n == 0) {
				c->rx_eof = true;
				say(c, 1, "received FIN");
				if (c->rx.state != MPA_RX_LEN || c->rx.done != 0) {
					r = conn_fail(c, IW_EMPA_TRUNCATED,
						      "peer closed inside an FPDU (%s)",
						      mpa_rx_state_name(c->rx.state));
					goto fail;
				}
				if (!c->initiator && c->params.p2p && c->first_fpdu) {
					r = conn_fail(c, IW_EMPA_RTR,
						      "initiator closed without an RTR");
					goto fail;
				}
			} else if (n > 0) {
				r = rx_feed(c, buf, (size_t)n);
				if (r < 0)
					goto fail;
			}
		}
		if (pfd.revents & POLLOUT) {
			r = tx_write(c);
			if (r < 0)
				goto fail;
		}
	}
	if (c->initiator && c->st_rx.msgs != c->o->count) {
		r = conn_fail(c, IW_EMPA_CLOSED, "responder closed after %" PRIu64 " of %u echoes",
			      c->st_rx.msgs, c->o->count);
		goto fail;
	}
	if (c->initiator && c->read_outstanding) {
		r = conn_fail(c, IW_EMPA_CLOSED, "no RDMA Read Response to the Read RTR");
		goto fail;
	}
	return IWT_EXIT_OK;
fail:
	errf(c->role, "%s", c->errmsg[0] ? c->errmsg : rdmap_strerror(r));
	return IWT_EXIT_FAIL;
}

static void conn_free(struct conn *c)
{
	unsigned i;
	struct txmsg *m, *mn;

	for (i = 0; c->txq && i < c->txq_n; i++) {
		struct txent *e = &c->txq[(c->txq_head + i) % IWMPA_TXQ_LEN];

		if (e->done_msg) {
			free(e->done_msg->buf);
			free(e->done_msg);
		}
	}
	if (c->tx_cur) {
		/* partly framed: its last FPDU (the owner) was never queued */
		free(c->tx_cur->buf);
		free(c->tx_cur);
	}
	for (m = c->tx_list; m; m = mn) {
		mn = m->next;
		free(m->buf);
		free(m);
	}
	free(c->txq);
	free(c->ulpdu);
	free(c->msg);
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static void print_summary(const struct conn *c)
{
	const struct stats *t = &c->st_tx, *r = &c->st_rx;

	say(c, 0,
	    "summary: sent %" PRIu64 " message%s (%" PRIu64 " payload bytes) in %" PRIu64
	    " FPDU%s, %" PRIu64 " octets on the wire incl. %" PRIu64 " Marker%s",
	    t->msgs, plural(t->msgs), t->payload, t->fpdus, plural(t->fpdus), t->wire, t->markers,
	    plural(t->markers));
	say(c, 0,
	    "summary: received %" PRIu64 " message%s (%" PRIu64 " payload bytes) in %" PRIu64
	    " FPDU%s, %" PRIu64 " octets of full operation",
	    r->msgs, plural(r->msgs), r->payload, r->fpdus, plural(r->fpdus), r->wire);
}

/* Drain to EOF after a reject (RFC 5044 §7.1.2: MPA is over; we simply close). */
static void close_gracefully(int fd, unsigned timeout_s)
{
	uint8_t buf[4096];
	uint64_t deadline = iwt_now_ns() + (uint64_t)timeout_s * 1000000000u;

	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, iwt_ms_until(deadline)) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
	}
}

/* One MPA connection on a connected socket; returns the exit status. */
static int run_conn(const struct iwmpa_opts *o, int fd, bool initiator)
{
	struct conn c;
	uint8_t *left = xcalloc(1, MPA_FRAME_MAX_LEN);
	size_t nleft;
	bool rejected;
	int one = 1, rc;
	socklen_t sl;
	int mss = 0;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.fd = fd;
	c.initiator = initiator;
	c.role = initiator ? "initiator" : "responder";
	/* MPA FPDUs are latency-bound records: never let Nagle hold one back. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	rc = run_setup(&c, left, &nleft, &rejected);
	if (rc != IWT_EXIT_OK)
		goto out;
	if (rejected) {
		if (initiator) {
			errf(c.role, "%s", c.errmsg);
			rc = IWT_EXIT_FAIL;
		} else {
			say(&c, 0, "connection rejected; closing");
		}
		close_gracefully(fd, o->timeout_s);
		goto out;
	}

	sl = sizeof(mss);
	if (o->mss)
		c.emss = o->mss;
	else if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &sl) == 0 && mss > 0)
		c.emss = (uint32_t)mss;
	else
		c.emss = 1460;
	c.mulpdu = mpa_mulpdu(c.emss, c.params.markers_tx);
	c.align = o->align == ALIGN_ON || (o->align == ALIGN_AUTO && c.params.markers_tx);
	log_negotiated(&c);

	rc = run_full_operation(&c, left, nleft);
	if (rc == IWT_EXIT_OK) {
		print_summary(&c);
		say(&c, 0, "closed cleanly");
	}
	conn_free(&c);
out:
	free(left);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Sockets                                                                  */
/* ---------------------------------------------------------------------- */

static int run_initiator(const struct iwmpa_opts *o)
{
	char desc[IWT_ADDR_STRLEN];
	const char *why;
	int fd, rc;

	fd = iwt_tcp_open(o->addr, o->port, false, 0, desc, sizeof(desc), &why);
	if (fd < 0) {
		errf("initiator", "connect to %s port %s: %s", o->addr, o->port, why);
		return IWT_EXIT_FAIL;
	}
	if (g_verbose >= 0)
		printf("initiator: connected to %s\n", desc);
	rc = run_conn(o, fd, true);
	close(fd);
	return rc;
}

static int run_responder(const struct iwmpa_opts *o)
{
	char desc[IWT_ADDR_STRLEN];
	const char *why;
	int lfd, rc = IWT_EXIT_OK;

	lfd = iwt_tcp_open(o->addr, o->port, true, 4, desc, sizeof(desc), &why);
	if (lfd < 0) {
		errf("responder", "listen on %s port %s: %s", o->addr, o->port, why);
		return IWT_EXIT_FAIL;
	}
	if (g_verbose >= 0)
		printf("responder: listening on %s\n", desc);
	fflush(stdout);

	do {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd;

		fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			errf("responder", "accept: %s", strerror(errno));
			rc = IWT_EXIT_FAIL;
			break;
		}
		iwt_addr_format((struct sockaddr *)&peer, desc, sizeof(desc));
		if (g_verbose >= 0)
			printf("responder: accepted connection from %s\n", desc);
		rc = run_conn(o, fd, false);
		close(fd);
	} while (o->forever);
	close(lfd);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                             */
/* ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	/* split: ISO C caps string literals at 4095 octets */
	fputs("Usage: iwmpa -s [-a ADDR] [-p PORT] [OPTION]...     (responder)\n"
	      "       iwmpa -c ADDR [-p PORT] [OPTION]...          (initiator)\n"
	      "\n"
	      "Exchange MPA startup frames and FPDUs (RFC 5044 Marker PDU Aligned framing,\n"
	      "RFC 6581 enhanced connection setup) between two processes over real TCP.\n"
	      "\n"
	      "The initiator connects, sends the MPA Request and, once the responder's MPA\n"
	      "Reply arrives, sends COUNT DDP untagged Send messages of SIZE octets each,\n"
	      "segmented to the MULPDU.  The responder checks every message and echoes it\n"
	      "back as its own Sends; the initiator checks the echoes.  Both sides print each\n"
	      "step and what was negotiated, then close gracefully.  With --p2p on the\n"
	      "initiator first sends the RFC 6581 Ready-To-Receive (RTR) message; a Read RTR\n"
	      "is answered with a zero-length RDMA Read Response.\n"
	      "\n"
	      "Role:\n"
	      "  -s, --server           be the responder: listen and serve one connection\n"
	      "  -c, --connect ADDR     be the initiator: connect to ADDR (IPv4, IPv6 or name)\n"
	      "  -a, --addr ADDR        responder: address to listen on (default 127.0.0.1;\n"
	      "                         use :: for every IPv4 and IPv6 address)\n"
	      "  -p, --port PORT        TCP port (default 5044)\n"
	      "      --once             responder: serve one connection, then exit (default)\n"
	      "      --forever          responder: serve connections one after another\n"
	      "\n"
	      "iWARP options (the same in every iwarp tool):\n"
	      "      --mpa-rev 1|2      MPA revision to send: 1 = RFC 5044, 2 = RFC 6581 with\n"
	      "                         the IRD/ORD word (default 2)\n"
	      "      --crc on|off       ask for CRC32c (default on); CRC is used in both\n"
	      "                         directions if either side asks for it\n"
	      "      --markers on|off   require Markers in the FPDUs this side RECEIVES, i.e.\n"
	      "                         the M bit of our frame (default off)\n"
	      "      --p2p on|off       RFC 6581 peer-to-peer mode: the initiator opens full\n"
	      "                         operation with an RTR message (default off; rev 2 only)\n"
	      "      --rtr FORMS        RTR forms offered (initiator) or accepted (responder):\n"
	      "                         comma-separated write, read, send or all (default all);\n"
	      "                         the initiator sends the first of write, read, send\n"
	      "                         that both sides allow\n"
	      "      --ird N            inbound RDMA Read queue depth to advertise (default 16)\n"
	      "      --ord N            outbound RDMA Reads to ask for (default 16)\n"
	      "      --trace            hex dump every startup frame and FPDU\n"
	      "  -v, --verbose          more detail (one line per FPDU; twice: library debug)\n"
	      "  -q, --quiet            print errors only\n"
	      "\n",
	      f);
	fputs("Tool options:\n"
	      "      --count N          initiator: Send messages to send (default 4); the\n"
	      "                         responder echoes whatever arrives\n"
	      "      --size BYTES       initiator: octets per message, 0 to 16777216 (default\n"
	      "                         1000); the responder accepts up to 16777216\n"
	      "      --mss N            EMSS used to compute the MULPDU (RFC 5044 section 4.5)\n"
	      "                         (default: the socket's TCP_MAXSEG)\n"
	      "      --pd TEXT          private data for our MPA Request or Reply (at most 508\n"
	      "                         octets with --mpa-rev 2, 512 with 1)\n"
	      "      --reject           responder: reject the Request (R=1); --pd is the reason\n"
	      "      --align auto|on|off\n"
	      "                         FPDU Alignment (RFC 5044 section 5.1): write each FPDU\n"
	      "                         alone once the kernel has sent the previous one, so\n"
	      "                         every TCP segment starts with an FPDU; auto = on when\n"
	      "                         this side sends Markers (default auto)\n"
	      "      --timeout SEC      give up after SEC seconds without progress; also bounds\n"
	      "                         the MPA startup (default 10)\n"
	      "  -h, --help             show this help and exit\n"
	      "\n" IWT_NUM_HELP "\n",
	      f);
	fputs("Examples:\n"
	      "  iwmpa -s                                  responder on 127.0.0.1:5044\n"
	      "  iwmpa -c 127.0.0.1                        initiator: rev 2, CRC, no Markers\n"
	      "  iwmpa -s --markers on & iwmpa -c 127.0.0.1 --markers on --p2p on --rtr write\n"
	      "                                            Markers both ways, Write RTR\n"
	      "  iwmpa -s -a ::1 -p 6000 & iwmpa -c ::1 -p 6000 --mpa-rev 1 --crc off\n"
	      "                                            RFC 5044 without CRC over IPv6\n"
	      "  iwmpa -s --reject --pd 'no thanks' & iwmpa -c 127.0.0.1\n"
	      "                                            the initiator sees the reject\n"
	      "\n"
	      "Exit status:\n"
	      "  0  the exchange completed and every message checked out (a responder that\n"
	      "     rejected as told also exits 0)\n"
	      "  1  network, protocol or peer failure, or a rejected initiator; the cause is\n"
	      "     printed on one line on stderr\n"
	      "  2  bad command line\n"
	      "\n"
	      "See iwmpa(1).\n",
	      f);
}

enum {
	OPT_ONCE = 256,
	OPT_FOREVER,
	OPT_REV,
	OPT_CRC,
	OPT_MARKERS,
	OPT_P2P,
	OPT_RTR,
	OPT_IRD,
	OPT_ORD,
	OPT_TRACE,
	OPT_COUNT,
	OPT_SIZE,
	OPT_MSS,
	OPT_PD,
	OPT_REJECT,
	OPT_ALIGN,
	OPT_TIMEOUT,
};

static const struct option long_opts[] = {
	{"server", no_argument, NULL, 's'},
	{"connect", required_argument, NULL, 'c'},
	{"addr", required_argument, NULL, 'a'},
	{"port", required_argument, NULL, 'p'},
	{"once", no_argument, NULL, OPT_ONCE},
	{"forever", no_argument, NULL, OPT_FOREVER},
	{"mpa-rev", required_argument, NULL, OPT_REV},
	{"crc", required_argument, NULL, OPT_CRC},
	{"markers", required_argument, NULL, OPT_MARKERS},
	{"p2p", required_argument, NULL, OPT_P2P},
	{"rtr", required_argument, NULL, OPT_RTR},
	{"ird", required_argument, NULL, OPT_IRD},
	{"ord", required_argument, NULL, OPT_ORD},
	{"trace", no_argument, NULL, OPT_TRACE},
	{"verbose", no_argument, NULL, 'v'},
	{"quiet", no_argument, NULL, 'q'},
	{"count", required_argument, NULL, OPT_COUNT},
	{"size", required_argument, NULL, OPT_SIZE},
	{"mss", required_argument, NULL, OPT_MSS},
	{"pd", required_argument, NULL, OPT_PD},
	{"reject", no_argument, NULL, OPT_REJECT},
	{"align", required_argument, NULL, OPT_ALIGN},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* An invalid option value: the message, the hint; -1. */
static int bad_arg(const char *opt, const char *val, const char *why)
{
	iwt_bad_arg(prog, opt, val, why);
	iwt_try_help(prog);
	return -1;
}

static int parse_uint(const char *opt, const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	uint64_t v;

	if (iwt_num_u64(prog, opt, s, min, max, 0, &v) < 0) {
		iwt_try_help(prog);
		return -1;
	}
	*out = (unsigned long)v;
	return 0;
}

static int parse_onoff(const char *opt, const char *s, bool *out)
{
	int b = iwt_onoff_parse(s);

	if (b < 0)
		return bad_arg(opt, s, "on or off");
	*out = b;
	return 0;
}

#define usage_err(...) iwt_usage_err(prog, __VA_ARGS__)

static int parse_args(int argc, char **argv, struct iwmpa_opts *o)
{
	bool role_set = false, rtr_set = false;
	unsigned long v;
	int ch;

	memset(o, 0, sizeof(*o));
	mpa_config_default(&o->cfg);
	snprintf(o->port, sizeof(o->port), "%u", IWMPA_DEFAULT_PORT);
	o->count = 4;
	o->size = 1000;
	o->timeout_s = 10;
	o->align = ALIGN_AUTO;

	while ((ch = getopt_long(argc, argv, "sc:a:p:vqh", long_opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (role_set && !o->server)
				return usage_err("-s and -c exclude each other");
			o->server = true;
			role_set = true;
			break;
		case 'c':
			if (role_set && o->server)
				return usage_err("-s and -c exclude each other");
			o->addr = optarg;
			role_set = true;
			break;
		case 'a':
			o->listen_addr = optarg;
			break;
		case 'p':
			if (parse_uint("--port", optarg, 1, 65535, &v) < 0)
				return -1;
			snprintf(o->port, sizeof(o->port), "%lu", v);
			break;
		case OPT_ONCE:
			o->forever = false;
			break;
		case OPT_FOREVER:
			o->forever = true;
			break;
		case OPT_REV:
			if (parse_uint("--mpa-rev", optarg, 1, 2, &v) < 0)
				return -1;
			o->cfg.rev = (uint8_t)v;
			break;
		case OPT_CRC:
			if (parse_onoff("--crc", optarg, &o->cfg.crc) < 0)
				return -1;
			break;
		case OPT_MARKERS:
			if (parse_onoff("--markers", optarg, &o->cfg.markers) < 0)
				return -1;
			break;
		case OPT_P2P:
			if (parse_onoff("--p2p", optarg, &o->cfg.p2p) < 0)
				return -1;
			break;
		case OPT_RTR:
			if (iwt_rtr_parse(optarg, &o->cfg.rtr) < 0)
				return bad_arg("--rtr", optarg,
					       "a comma-separated list of write, read, send, all");
			rtr_set = true;
			break;
		case OPT_IRD:
			if (parse_uint("--ird", optarg, 0, MPA_IRD_ORD_MAX, &v) < 0)
				return -1;
			o->cfg.ird = (uint16_t)v;
			break;
		case OPT_ORD:
			if (parse_uint("--ord", optarg, 0, MPA_IRD_ORD_MAX, &v) < 0)
				return -1;
			o->cfg.ord = (uint16_t)v;
			break;
		case OPT_TRACE:
			o->trace = true;
			break;
		case 'v':
			o->verbose = o->verbose < 0 ? 1 : o->verbose + 1;
			break;
		case 'q':
			o->verbose = -1;
			break;
		case OPT_COUNT:
			if (parse_uint("--count", optarg, 0, IWMPA_COUNT_MAX, &v) < 0)
				return -1;
			o->count = (unsigned)v;
			break;
		case OPT_SIZE:
			if (parse_uint("--size", optarg, 0, IWMPA_MSG_MAX, &v) < 0)
				return -1;
			o->size = v;
			break;
		case OPT_MSS:
			if (parse_uint("--mss", optarg, 64, 65535, &v) < 0)
				return -1;
			o->mss = (uint32_t)v;
			break;
		case OPT_PD:
			o->pd = optarg;
			o->pd_len = strlen(optarg);
			break;
		case OPT_REJECT:
			o->reject = true;
			break;
		case OPT_ALIGN:
			if (!strcmp(optarg, "auto"))
				o->align = ALIGN_AUTO;
			else if (!strcmp(optarg, "on"))
				o->align = ALIGN_ON;
			else if (!strcmp(optarg, "off"))
				o->align = ALIGN_OFF;
			else
				return bad_arg("--align", optarg, "auto, on or off");
			break;
		case OPT_TIMEOUT:
			if (parse_uint("--timeout", optarg, 1, 3600, &v) < 0)
				return -1;
			o->timeout_s = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			exit(IWT_EXIT_OK);
		default:
			/* getopt has said what was wrong */
			iwt_try_help(prog);
			return -1;
		}
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	if (!role_set)
		return usage_err("give -s (responder) or -c ADDR (initiator)");
	if (o->server)
		o->addr = o->listen_addr ? o->listen_addr : "127.0.0.1";
	else if (o->listen_addr)
		return usage_err("-a is for the responder (-s): only it listens");
	if (!o->server && o->reject)
		return usage_err("--reject is for the responder (-s): only it rejects");
	if (o->cfg.rev == MPA_REV1 && o->cfg.p2p)
		return usage_err("--p2p on needs --mpa-rev 2 (RFC 6581)");
	if (rtr_set && !o->cfg.p2p)
		say(NULL, 0, "note: --rtr only matters with --p2p on");
	if (o->pd_len >
	    (size_t)(o->cfg.rev == MPA_REV2 ? MPA_PD_MAX - MPA_IRD_ORD_LEN : MPA_PD_MAX))
		return bad_arg("--pd", o->pd, "too long for the MPA private data");
	o->cfg.timeout_ns = (uint64_t)o->timeout_s * 1000000000u;
	return 0;
}

int main(int argc, char **argv)
{
	struct iwmpa_opts o;

	/* one line per event, in order, even through a pipe */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (parse_args(argc, argv, &o) < 0)
		return IWT_EXIT_USAGE;
	g_verbose = o.verbose;
	if (o.verbose >= 2)
		iw_log_set(log_sink, NULL, IW_LOG_DEBUG);
	else
		iw_log_set(log_sink, NULL, o.verbose >= 1 ? IW_LOG_INFO : IW_LOG_WARN);
	return o.server ? run_responder(&o) : run_initiator(&o);
}
