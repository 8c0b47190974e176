/* SPDX-License-Identifier: MIT */
/*
 * iwping.c - rping over the iwarp stack: an RDMA ping-pong with the options,
 * the wire protocol and the -v output of rdma-core's rping, so that it talks
 * to stock rping on an RNIC or on Linux siw, in either role.
 *
 * Theory of operation.  rping is three RDMA operations steered by Sends.
 * Every Send carries one 16-octet "info" message, big-endian
 * {u64 buf, u32 rkey, u32 size}: a tagged offset (the virtual address, as
 * with ibverbs), the STag that covers it and a length.  One ping is:
 *
 *   client                                     server
 *   fill start_buf: "rdma-ping-N: ", letters, NUL
 *   Send info{start_buf} ------------------->  Receive
 *                     <--------------------   RDMA Read of start_buf into rdma_buf
 *                     <--------------------   Send "go ahead" (16 zero octets)
 *   Send info{rdma_buf} -------------------->  Receive
 *                     <--------------------   RDMA Write of strlen(rdma_buf) + 1 octets
 *                     <--------------------   Send "go ahead"
 *   compare (-V) and print (-v) rdma_buf, next ping
 *
 * The server posts each go-ahead only once the Read or Write it follows has
 * completed; on top of that RDMAP delivers the Send after the Write placed
 * its data (RFC 5040 §5.5), so the client may look at rdma_buf as soon as the
 * second go-ahead arrives.  Each side keeps one Receive posted and re-posts
 * it before it reacts to what arrived: the peer only sends after hearing from
 * us, and a Send with no Receive waiting is fatal on iWARP (RFC 5041 §7.2,
 * "no buffer available") - there is no RNR retry as on InfiniBand.
 *
 * Wire facts copied from rping (and checked against a siw capture): MPA
 * revision 2 with IRD = ORD = 1 asked by the client, no private data, the
 * client's buffers 26 to 65535 octets (default 64), each filled with
 * "rdma-ping-%d: " and then letters 'A'..'z' (ASCII 65..122) rotating from a
 * start letter that moves on by one per ping, the last octet NUL.  The client
 * ends with a graceful disconnect after -C pings; a server without -P serves
 * one client and ends when it disconnects.
 *
 * Structure: one thread, one poll() over two file descriptors - the CM event
 * channel (connection steps) and the completion channel shared by the CQs of
 * every connection (cq_context = the connection).  Both are non-blocking; all
 * work happens in handlers of a per-connection state machine, so a
 * persistent server (-P) runs any number of clients side by side.  rping uses
 * a CM thread and a CQ thread per connection instead; the order of the
 * operations on the wire is the same.  Without --engine-thread the stack
 * moves bytes inside the non-blocking get-event and poll calls the loop makes
 * whenever a channel fd turns readable, which it does for socket activity and
 * for the CM's timers too (iwv.h, "Progress"); one thread then does all the
 * work, which suits a 2-core machine best.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <iwarp/iw_err.h>
#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "iw_bytes.h"
#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"
#include "iwt_opt.h"
#include "iwt_pattern.h"
#include "iwt_verbs.h"

/* rping's numbers (librdmacm/examples/rping.c). */
#define IWPING_DEFAULT_PORT 7174
#define IWPING_DEFAULT_SIZE 64
#define IWPING_MAX_SIZE	    65535 /* rping: RPING_BUFSIZE - 1; the minimum: IWT_RPING_MIN_SIZE */
#define IWPING_SQ_DEPTH	    16
#define IWPING_RQ_DEPTH	    2
#define IWPING_CQ_DEPTH	    (IWPING_SQ_DEPTH * 2)
#define IWPING_RESOLVE_MS   2000
#define IWPING_BACKLOG	    3
#define IWPING_IRD_ORD	    1 /* rping's conn_param responder_resources / initiator_depth */

/*
 * The server reads whatever size the client advertises into one sink
 * buffer, so it takes every size a stock rping client can send (rping's own
 * server reads into a buffer of its -S size and fails on larger pings).
 */
#define IWPING_SINK_SIZE (IWPING_MAX_SIZE + 1)
#define IWPING_MAX_CONNS 64 /* -P: clients served at once; more are rejected */

/* The info message every Send carries (rping's struct rping_rdma_info). */
#define IWPING_INFO_LEN 16

/* How long to wait for the DISCONNECTED event the stack owes us after a
 * graceful disconnect (on top of its own close timeout) or after a flush. */
#define IWPING_DISC_SLACK_MS 5000

struct iwping_info {
	uint64_t buf;  /* tagged offset (the address of the buffer) */
	uint32_t rkey; /* STag */
	uint32_t size; /* octets */
};

static void iwping_info_encode(const struct iwping_info *info, uint8_t *p)
{
	iw_put_be64(p, info->buf);
	iw_put_be32(p + 8, info->rkey);
	iw_put_be32(p + 12, info->size);
}

static void iwping_info_decode(const uint8_t *p, struct iwping_info *info)
{
	info->buf = iw_get_be64(p);
	info->rkey = iw_get_be32(p + 8);
	info->size = iw_get_be32(p + 12);
}

/* ---------------------------------------------------------------------- */
/* Options                                                                 */
/* ---------------------------------------------------------------------- */

struct iwping_opts {
	int server; /* -1 until -s or -c */
	bool persistent;
	const char *addr_str;
	const char *src_str;
	struct sockaddr_storage addr; /* -a, with the port */
	struct sockaddr_storage src;  /* -I (port 0) */
	bool have_addr, have_src;
	uint16_t port;
	int count; /* 0 = until interrupted */
	uint32_t size;
	int verbose;
	int validate;
	int debug;
	bool self_qp; /* -q */
	struct iwt_opt tool;
};

/* ---------------------------------------------------------------------- */
/* Connections                                                             */
/* ---------------------------------------------------------------------- */

enum conn_state {
	ST_RESOLVE_ADDR,	/* client: waiting for ADDR_RESOLVED */
	ST_RESOLVE_ROUTE,	/* client: waiting for ROUTE_RESOLVED */
	ST_CONNECTING,		/* client: connect() sent, waiting for ESTABLISHED */
	ST_ACCEPTING,		/* server: accept() sent, waiting for ESTABLISHED */
	ST_SRV_WAIT_READ_ADV,	/* server: waiting for the info of the client's source */
	ST_SRV_READING,		/* server: RDMA Read posted */
	ST_SRV_WAIT_WRITE_ADV,	/* server: waiting for the info of the client's sink */
	ST_SRV_WRITING,		/* server: RDMA Write posted */
	ST_CLI_WAIT_READ_DONE,	/* client: source advertised, waiting for go-ahead 1 */
	ST_CLI_WAIT_WRITE_DONE, /* client: sink advertised, waiting for go-ahead 2 */
	ST_DISCONNECTING,	/* disconnect() called, waiting for DISCONNECTED */
	ST_DEAD,		/* finished: torn down by the main loop */
};

static const char *conn_state_name(enum conn_state s)
{
	static const char *const names[] = {
		[ST_RESOLVE_ADDR] = "RESOLVE_ADDR",
		[ST_RESOLVE_ROUTE] = "RESOLVE_ROUTE",
		[ST_CONNECTING] = "CONNECTING",
		[ST_ACCEPTING] = "ACCEPTING",
		[ST_SRV_WAIT_READ_ADV] = "WAIT_READ_ADV",
		[ST_SRV_READING] = "READING",
		[ST_SRV_WAIT_WRITE_ADV] = "WAIT_WRITE_ADV",
		[ST_SRV_WRITING] = "WRITING",
		[ST_CLI_WAIT_READ_DONE] = "WAIT_READ_DONE",
		[ST_CLI_WAIT_WRITE_DONE] = "WAIT_WRITE_DONE",
		[ST_DISCONNECTING] = "DISCONNECTING",
		[ST_DEAD] = "DEAD",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "?";
}

enum wr_kind { WR_RECV = 1, WR_SEND, WR_READ, WR_WRITE };

struct iwping;

struct conn {
	struct conn *next;
	struct iwping *app;
	struct iwcm_id *id;
	/* a PD of its own, as rping allocates one per connection: what one
	 * client learns of our STags is useless on another's connection (the
	 * STag belongs to another PD: "not associated with the RDMAP stream") */
	struct iwv_pd *pd;
	struct iwv_cq *cq;
	struct iwv_qp *qp;
	bool qp_attached; /* the CM owns qp (iwcm_destroy_qp frees it) */
	enum conn_state state;
	bool cq_ready;	   /* the completion channel reported this CQ */
	bool established;  /* ESTABLISHED seen */
	bool disconnected; /* DISCONNECTED seen */
	bool failed;	   /* a cause was printed */
	bool flushed;	   /* a work request was flushed */
	bool stop_after_ping;

	/* registered memory */
	uint8_t recv_msg[IWPING_INFO_LEN];
	uint8_t send_msg[2][IWPING_INFO_LEN]; /* client: source and sink infos; server: zeros */
	struct iwv_mr *recv_mr, *send_mr, *rdma_mr, *start_mr;
	char *rdma_buf;	 /* client: sink of the Write; server: sink of the Read */
	char *start_buf; /* client: source of the Read */
	uint32_t rdma_len;

	int ping;		 /* client: the ping in flight; server: pings served */
	unsigned char start;	 /* client: first letter of the pattern */
	struct iwping_info peer; /* server: the last info received */
	uint32_t read_len;	 /* server: octets the last Read fetched */

	uint64_t deadline_ms; /* monotonic; 0 = none */
	const char *deadline_why;
	char name[IWT_ADDR_STRLEN + 8]; /* the peer, for messages */
};

struct iwping {
	struct iwping_opts *o;
	struct iwt_verbs v; /* context, PD, both channels, the server's listening id */
	struct conn *conns;
	int nconns;
	int accepted; /* server: connections accepted so far */
	bool stopping;
	bool finished;
	int status;
	sigset_t wait_mask; /* signal mask while sleeping in ppoll() */
};

static const char *prog = "iwping";
static int g_debug;
static volatile sig_atomic_t g_signal;

/* ---------------------------------------------------------------------- */
/* Small helpers                                                            */
/* ---------------------------------------------------------------------- */

/* One line on stderr: "iwping: ..." */
#define errmsg(...) iwt_msg(prog, __VA_ARGS__)

/* -d output goes to stdout, as rping's DEBUG_LOG does */
__attribute__((format(printf, 1, 2))) static void dbg(const char *fmt, ...)
{
	va_list ap;

	if (!g_debug)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* A peer in messages: "ADDR port N", as rping words it. */
static void format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[IWT_ADDR_STRLEN];

	snprintf(buf, len, "%s port %u", iwt_addr_host(sa, host, sizeof(host)), iwt_addr_port(sa));
}

/* The first cause of a QP's failure (an iw_err), 0 while it is healthy. */
static int qp_err(struct conn *c)
{
	struct iwv_qp_attr attr;
	struct iwv_qp_init_attr init;

	if (!c->qp || iwv_query_qp(c->qp, &attr, IWV_QP_STATE, &init))
		return 0;
	return attr.qp_err;
}

/* qp_err() as text, or NULL while the QP is healthy. */
static const char *qp_cause(struct conn *c, char *buf, size_t len)
{
	int err = qp_err(c);

	if (!err)
		return NULL;
	snprintf(buf, len, "%s (%s)", iwv_strerror(err), iwv_errname(err));
	return buf;
}

/* ---------------------------------------------------------------------- */
/* Failure and shutdown of one connection                                  */
/* ---------------------------------------------------------------------- */

static void conn_set_deadline(struct conn *c, uint64_t ms, const char *why)
{
	c->deadline_ms = iwt_now_ms() + ms;
	c->deadline_why = why;
}

/* Graceful close: what is queued goes out, then DISCONNECTED. */
static void conn_disconnect(struct conn *c)
{
	struct iwcm_options cmo;
	uint32_t close_ms = 2000;

	if (c->state == ST_DISCONNECTING || c->state == ST_DEAD)
		return;
	if (!c->established || c->disconnected) {
		c->state = ST_DEAD;
		return;
	}
	dbg("%s: disconnecting", c->name);
	if (iwcm_disconnect(c->id)) {
		errmsg("disconnect from %s: %s", c->name, strerror(errno));
		c->failed = true;
		c->state = ST_DEAD;
		return;
	}
	if (!iwcm_get_options(c->id, &cmo))
		close_ms = cmo.close_timeout_ms;
	c->state = ST_DISCONNECTING;
	conn_set_deadline(c, (uint64_t)close_ms + IWPING_DISC_SLACK_MS,
			  "no DISCONNECTED event after the disconnect");
}

/* Record the first cause of a failure (one line on stderr) and close. */
__attribute__((format(printf, 2, 3))) static void conn_fail(struct conn *c, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	if (c->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->failed = true;
	errmsg("%s", line);
	conn_disconnect(c);
}

/* ---------------------------------------------------------------------- */
/* Work requests                                                           */
/* ---------------------------------------------------------------------- */

static int post_recv(struct conn *c)
{
	struct iwv_sge sge = {
		.addr = (uint64_t)(uintptr_t)c->recv_msg,
		.length = IWPING_INFO_LEN,
		.lkey = c->recv_mr->lkey,
	};
	struct iwv_recv_wr wr = {.wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1};
	struct iwv_recv_wr *bad;
	int ret = iwv_post_recv(c->qp, &wr, &bad);

	if (ret)
		conn_fail(c, "post receive to %s: %s", c->name, strerror(ret));
	return ret;
}

/* Send info slot `slot` of send_msg (16 octets). */
static int post_send_msg(struct conn *c, int slot)
{
	struct iwv_sge sge = {
		.addr = (uint64_t)(uintptr_t)c->send_msg[slot],
		.length = IWPING_INFO_LEN,
		.lkey = c->send_mr->lkey,
	};
	struct iwv_send_wr wr = {
		.wr_id = WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IWV_WR_SEND,
		.send_flags = IWV_SEND_SIGNALED,
	};
	struct iwv_send_wr *bad;
	int ret = iwv_post_send(c->qp, &wr, &bad);

	if (ret)
		conn_fail(c, "post send to %s: %s", c->name, strerror(ret));
	return ret;
}

/* RDMA Read or Write between rdma_buf[0..len) and the peer's last info. */
static int post_rdma(struct conn *c, enum iwv_wr_opcode op, uint32_t len)
{
	struct iwv_sge sge = {
		.addr = (uint64_t)(uintptr_t)c->rdma_buf,
		.length = len,
		.lkey = c->rdma_mr->lkey,
	};
	struct iwv_send_wr wr = {
		.wr_id = op == IWV_WR_RDMA_READ ? WR_READ : WR_WRITE,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IWV_SEND_SIGNALED,
	};
	struct iwv_send_wr *bad;
	int ret;

	wr.wr.rdma.remote_addr = c->peer.buf;
	wr.wr.rdma.rkey = c->peer.rkey;
	dbg("rdma %s: local addr %" PRIx64 " lkey %x len %u, remote addr %" PRIx64 " rkey %x",
	    op == IWV_WR_RDMA_READ ? "read" : "write", sge.addr, sge.lkey, len, c->peer.buf,
	    c->peer.rkey);
	ret = iwv_post_send(c->qp, &wr, &bad);
	if (ret)
		conn_fail(c, "post RDMA %s to %s: %s", op == IWV_WR_RDMA_READ ? "Read" : "Write",
			  c->name, strerror(ret));
	return ret;
}

/* ---------------------------------------------------------------------- */
/* The client's side of a ping                                             */
/* ---------------------------------------------------------------------- */

/* rping's buffer: header, then letters rotating from c->start, NUL last. */
static void cli_fill(struct conn *c)
{
	iwt_rping_fill(c->start_buf, c->app->o->size, c->ping, &c->start);
}

static void cli_advertise(struct conn *c, int slot, const char *buf, const struct iwv_mr *mr)
{
	struct iwping_info info = {
		.buf = (uint64_t)(uintptr_t)buf,
		.rkey = mr->rkey,
		.size = c->app->o->size,
	};

	iwping_info_encode(&info, c->send_msg[slot]);
	dbg("RDMA addr %" PRIx64 " rkey %x len %u", info.buf, info.rkey, info.size);
	post_send_msg(c, slot);
}

static void cli_start_ping(struct conn *c)
{
	cli_fill(c);
	/* stale data from the last ping must not pass for this ping's echo */
	memset(c->rdma_buf, 0, c->rdma_len);
	cli_advertise(c, 0, c->start_buf, c->start_mr);
	c->state = ST_CLI_WAIT_READ_DONE;
}

static void cli_ping_done(struct conn *c)
{
	const struct iwping_opts *o = c->app->o;

	if (o->validate && memcmp(c->start_buf, c->rdma_buf, o->size)) {
		conn_fail(c, "data mismatch! (ping %d from %s)", c->ping, c->name);
		return;
	}
	if (o->verbose)
		printf("ping data: %.*s\n", (int)strnlen(c->rdma_buf, o->size), c->rdma_buf);
	c->ping++;
	if ((o->count && c->ping >= o->count) || c->stop_after_ping) {
		conn_disconnect(c);
		return;
	}
	cli_start_ping(c);
}

/* Something arrived that the ping protocol does not expect now. */
static void conn_unexpected(struct conn *c, const char *what)
{
	conn_fail(c, "unexpected %s from %s in state %s", what, c->name, conn_state_name(c->state));
}

static void cli_recv(struct conn *c)
{
	switch (c->state) {
	case ST_CLI_WAIT_READ_DONE:
		cli_advertise(c, 1, c->rdma_buf, c->rdma_mr);
		c->state = ST_CLI_WAIT_WRITE_DONE;
		break;
	case ST_CLI_WAIT_WRITE_DONE:
		cli_ping_done(c);
		break;
	default:
		conn_unexpected(c, "Send");
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* The server's side of a ping                                             */
/* ---------------------------------------------------------------------- */

static void srv_recv(struct conn *c)
{
	uint32_t len;

	dbg("Received rkey %x addr %" PRIx64 " len %u from peer", c->peer.rkey, c->peer.buf,
	    c->peer.size);
	switch (c->state) {
	case ST_SRV_WAIT_READ_ADV:
		/* validate before acting: the length sizes our local SGE */
		if (c->peer.size == 0 || c->peer.size > c->rdma_len) {
			conn_fail(c, "%s advertised a %u-octet ping (this server takes 1 to %u)",
				  c->name, c->peer.size, c->rdma_len);
			return;
		}
		if (post_rdma(c, IWV_WR_RDMA_READ, c->peer.size))
			return;
		c->read_len = c->peer.size;
		c->state = ST_SRV_READING;
		break;
	case ST_SRV_WAIT_WRITE_ADV:
		/* rping writes back the string it read, with its NUL */
		len = (uint32_t)strnlen(c->rdma_buf, c->read_len);
		if (len < c->read_len)
			len++;
		if (len > c->peer.size) {
			conn_fail(c, "%s advertised a %u-octet sink for a %u-octet echo", c->name,
				  c->peer.size, len);
			return;
		}
		if (post_rdma(c, IWV_WR_RDMA_WRITE, len))
			return;
		c->state = ST_SRV_WRITING;
		break;
	default:
		conn_unexpected(c, "Send");
		break;
	}
}

static void srv_read_done(struct conn *c)
{
	if (c->state != ST_SRV_READING) {
		conn_fail(c, "unexpected RDMA Read completion in state %s",
			  conn_state_name(c->state));
		return;
	}
	if (c->app->o->verbose)
		printf("server ping data: %.*s\n", (int)strnlen(c->rdma_buf, c->read_len),
		       c->rdma_buf);
	if (post_send_msg(c, 0))
		return;
	dbg("server posted go ahead");
	c->state = ST_SRV_WAIT_WRITE_ADV;
}

static void srv_write_done(struct conn *c)
{
	if (c->state != ST_SRV_WRITING) {
		conn_fail(c, "unexpected RDMA Write completion in state %s",
			  conn_state_name(c->state));
		return;
	}
	if (post_send_msg(c, 0))
		return;
	dbg("server posted go ahead");
	c->ping++;
	c->state = ST_SRV_WAIT_READ_ADV;
}

/* ---------------------------------------------------------------------- */
/* Completions                                                              */
/* ---------------------------------------------------------------------- */

static const char *wr_name(uint64_t wr_id)
{
	switch (wr_id) {
	case WR_RECV:
		return "receive";
	case WR_SEND:
		return "send";
	case WR_READ:
		return "RDMA Read";
	case WR_WRITE:
		return "RDMA Write";
	default:
		return "unknown";
	}
}

static void conn_wc(struct conn *c, const struct iwv_wc *wc)
{
	if (wc->status != IWV_WC_SUCCESS) {
		if (wc->status == IWV_WC_WR_FLUSH_ERR) {
			dbg("%s completion flushed", wr_name(wc->wr_id));
			/* the cause, if any, comes with DISCONNECTED; bound the wait */
			if (!c->flushed && c->state != ST_DISCONNECTING && c->state != ST_DEAD)
				conn_set_deadline(c, IWPING_DISC_SLACK_MS,
						  "work requests flushed without a DISCONNECTED "
						  "event");
			c->flushed = true;
			return;
		}
		conn_fail(c, "%s completion failed: %s%s%s", wr_name(wc->wr_id),
			  iwv_wc_status_str(wc->status), wc->vendor_err ? ": " : "",
			  wc->vendor_err ? iwv_strerror(-(int)wc->vendor_err) : "");
		return;
	}
	dbg("%s completion", wr_name(wc->wr_id));
	if (c->state == ST_DISCONNECTING || c->state == ST_DEAD)
		return;
	switch (wc->wr_id) {
	case WR_RECV:
		if (wc->byte_len != IWPING_INFO_LEN) {
			conn_fail(c, "Received bogus data, size %u (from %s)", wc->byte_len,
				  c->name);
			return;
		}
		iwping_info_decode(c->recv_msg, &c->peer);
		/* before anything we send makes the peer send again */
		if (post_recv(c))
			return;
		if (c->app->o->server)
			srv_recv(c);
		else
			cli_recv(c);
		break;
	case WR_SEND:
		break;
	case WR_READ:
		srv_read_done(c);
		break;
	case WR_WRITE:
		srv_write_done(c);
		break;
	default:
		conn_fail(c, "completion of an unknown work request %" PRIu64, wc->wr_id);
		break;
	}
}

static void conn_poll_cq(struct conn *c)
{
	struct iwv_wc wc[8];
	int n, i;

	if (!c->cq)
		return;
	while ((n = iwv_poll_cq(c->cq, 8, wc)) > 0) {
		for (i = 0; i < n; i++)
			conn_wc(c, &wc[i]);
	}
	if (n < 0)
		conn_fail(c, "poll CQ: error %d", n);
}

/*
 * Take every event the completion channel holds (acknowledged at once, so a
 * CQ can always be destroyed) and mark the CQs to poll.  Returns -1 on a
 * channel failure.
 */
static int drain_comp_channel(struct iwping *app)
{
	struct iwv_cq *cq;
	void *cq_ctx;

	while (!iwv_get_cq_event(app->v.comp_ch, &cq, &cq_ctx)) {
		struct conn *c = cq_ctx;

		iwv_ack_cq_events(cq, 1);
		if (c)
			c->cq_ready = true;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		errmsg("completion channel: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void service_cqs(struct iwping *app)
{
	struct conn *c;
	int ret;

	for (c = app->conns; c; c = c->next) {
		if (!c->cq_ready)
			continue;
		c->cq_ready = false;
		/* arm first: a completion that lands after the poll still wakes us */
		ret = iwv_req_notify_cq(c->cq, 0);
		if (ret)
			conn_fail(c, "arm CQ: %s", strerror(ret));
		conn_poll_cq(c);
	}
}

/* ---------------------------------------------------------------------- */
/* Setting up and tearing down a connection                                */
/* ---------------------------------------------------------------------- */

static struct conn *conn_new(struct iwping *app)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		errmsg("out of memory");
		return NULL;
	}
	c->app = app;
	c->start = IWT_RPING_FIRST_LETTER;
	c->next = app->conns;
	app->conns = c;
	app->nconns++;
	snprintf(c->name, sizeof(c->name), "peer");
	return c;
}

static struct iwv_mr *reg(struct conn *c, void *addr, size_t len, int access, const char *what)
{
	struct iwv_mr *mr = iwv_reg_mr(c->pd, addr, len, access);

	if (!mr)
		errmsg("register %s (%zu octets): %s", what, len, strerror(errno));
	return mr;
}

/* CQ, QP, buffers and the first Receive.  0, or -1 after a message. */
static int conn_setup(struct conn *c)
{
	struct iwping *app = c->app;
	const struct iwping_opts *o = app->o;
	struct iwv_qp_init_attr attr;
	int ret;

	c->pd = iwv_alloc_pd(app->v.ctx);
	if (!c->pd) {
		errmsg("allocate PD: %s", strerror(errno));
		return -1;
	}
	c->cq = iwv_create_cq(app->v.ctx, IWPING_CQ_DEPTH, c, app->v.comp_ch, 0);
	if (!c->cq) {
		errmsg("create CQ: %s", strerror(errno));
		return -1;
	}
	ret = iwv_req_notify_cq(c->cq, 0);
	if (ret) {
		errmsg("arm CQ: %s", strerror(ret));
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = c;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.cap.max_send_wr = IWPING_SQ_DEPTH;
	attr.cap.max_recv_wr = IWPING_RQ_DEPTH;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IWV_QPT_RC;
	if (o->self_qp) {
		/* rping -q: the program makes the QP, the CM only connects it */
		c->qp = iwv_create_qp(c->pd, &attr);
		if (!c->qp) {
			errmsg("iwv_create_qp: %s", strerror(errno));
			return -1;
		}
		if (iwcm_attach_qp(c->id, c->qp)) {
			errmsg("iwcm_attach_qp: %s", strerror(errno));
			return -1;
		}
	} else {
		if (iwcm_create_qp(c->id, c->pd, &attr)) {
			errmsg("iwcm_create_qp: %s", strerror(errno));
			return -1;
		}
		c->qp = c->id->qp;
	}
	c->qp_attached = true;
	dbg("created qp %u", c->qp->qp_num);

	c->rdma_len = o->server ? IWPING_SINK_SIZE : o->size;
	c->rdma_buf = calloc(1, c->rdma_len);
	if (!o->server)
		c->start_buf = calloc(1, o->size);
	if (!c->rdma_buf || (!o->server && !c->start_buf)) {
		errmsg("out of memory");
		return -1;
	}
	c->recv_mr = reg(c, c->recv_msg, sizeof(c->recv_msg), IWV_ACCESS_LOCAL_WRITE, "recv_buf");
	c->send_mr = reg(c, c->send_msg, sizeof(c->send_msg), 0, "send_buf");
	/*
	 * Both buffers are registered for remote read and write, as rping
	 * registers them, although the protocol needs less (the peer writes
	 * the client's sink; the server's sink is only read into): a tester
	 * that learns the STag from our Read Request and goes out of bounds
	 * must meet the bounds check (RFC 5041 §7.1), as it would with rping,
	 * not the access check.
	 */
	c->rdma_mr = reg(c, c->rdma_buf, c->rdma_len,
			 IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ | IWV_ACCESS_REMOTE_WRITE,
			 "rdma_buf");
	if (!c->recv_mr || !c->send_mr || !c->rdma_mr)
		return -1;
	if (!o->server) {
		c->start_mr = reg(c, c->start_buf, o->size,
				  IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ |
					  IWV_ACCESS_REMOTE_WRITE,
				  "start_buf");
		if (!c->start_mr)
			return -1;
	}
	dbg("allocated & registered buffers");
	return post_recv(c) ? -1 : 0;
}

/* The IRD/ORD we ask for: --ird/--ord, else `ird`/`ord`. */
static void conn_param_init(const struct iwping_opts *o, struct iwcm_conn_param *cp, uint8_t ird,
			    uint8_t ord)
{
	memset(cp, 0, sizeof(*cp));
	iwt_opt_conn_param(&o->tool, cp);
	if (!o->tool.ird)
		cp->responder_resources = ird;
	if (!o->tool.ord)
		cp->initiator_depth = ord;
	cp->retry_count = 7; /* as rping; meaningless on iWARP */
	cp->rnr_retry_count = 7;
}

static void conn_destroy(struct iwping *app, struct conn *c)
{
	struct conn **pp;
	int ret;

	if (c->qp) {
		if (c->qp_attached)
			iwcm_destroy_qp(c->id);
		else
			iwv_destroy_qp(c->qp);
		c->qp = NULL;
	}
	if (c->cq) {
		/* an event still queued for this CQ would keep it busy */
		drain_comp_channel(app);
		ret = iwv_destroy_cq(c->cq);
		if (ret)
			errmsg("destroy CQ: %s", strerror(ret));
	}
	if (c->recv_mr)
		iwv_dereg_mr(c->recv_mr);
	if (c->send_mr)
		iwv_dereg_mr(c->send_mr);
	if (c->rdma_mr)
		iwv_dereg_mr(c->rdma_mr);
	if (c->start_mr)
		iwv_dereg_mr(c->start_mr);
	free(c->rdma_buf);
	free(c->start_buf);
	if (c->id && iwcm_destroy_id(c->id))
		errmsg("destroy id: %s", strerror(errno));
	if (c->pd && (ret = iwv_dealloc_pd(c->pd)))
		errmsg("deallocate PD: %s", strerror(ret));
	for (pp = &app->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	app->nconns--;
	free(c);
}

/* Tear down finished connections; decide whether the program is done. */
static void reap(struct iwping *app)
{
	struct conn *c, *next;

	for (c = app->conns; c; c = next) {
		bool c_failed = c->failed;

		next = c->next;
		if (c->state != ST_DEAD)
			continue;
		dbg("%s: done (%d pings)", c->name, c->ping);
		conn_destroy(app, c);
		/* a persistent server goes on; a client's failure is only reported */
		if (app->o->server && app->o->persistent)
			continue;
		if (c_failed)
			app->status = IWT_EXIT_FAIL;
		app->finished = true;
	}
	if (app->stopping && !app->nconns)
		app->finished = true;
}

/* ---------------------------------------------------------------------- */
/* Connection manager events                                                */
/* ---------------------------------------------------------------------- */

static void on_connect_request(struct iwping *app, const struct iwcm_event *ev)
{
	const struct iwping_opts *o = app->o;
	struct iwcm_id *id = ev->id;
	struct iwcm_conn_param cp;
	struct conn *c;
	char name[sizeof(c->name)];
	uint8_t ird;

	format_addr(iwcm_get_peer_addr(id), name, sizeof(name));
	if (app->stopping || (!o->persistent && app->accepted) || app->nconns >= IWPING_MAX_CONNS) {
		dbg("rejecting %s: %s", name,
		    app->stopping   ? "stopping"
		    : o->persistent ? "too many clients"
				    : "busy");
		iwcm_reject(id, NULL, 0);
		iwcm_destroy_id(id);
		return;
	}
	c = conn_new(app);
	if (!c) {
		iwcm_reject(id, NULL, 0);
		iwcm_destroy_id(id);
		return;
	}
	c->id = id;
	id->context = c;
	memcpy(c->name, name, sizeof(name));
	dbg("connect request from %s: MPA rev %u, IRD %u ORD %u", c->name, ev->mpa.mpa_rev,
	    ev->mpa.ird, ev->mpa.ord);
	if (conn_setup(c)) {
		iwcm_reject(id, NULL, 0);
		c->failed = true;
		c->state = ST_DEAD;
		return;
	}
	/*
	 * rping accepts with librdmacm's defaults, which mirror the client:
	 * our IRD covers the client's ORD.  One Read at a time is all the
	 * server issues, so ORD 1 - never more than any client's IRD.
	 */
	ird = ev->mpa.ord >= 1 && ev->mpa.ord <= 255 ? (uint8_t)ev->mpa.ord : IWPING_IRD_ORD;
	conn_param_init(o, &cp, ird, IWPING_IRD_ORD);
	dbg("accepting client connection request (IRD %u ORD %u)", cp.responder_resources,
	    cp.initiator_depth);
	if (iwcm_accept(id, &cp)) {
		errmsg("accept %s: %s", c->name, strerror(errno));
		c->failed = true;
		c->state = ST_DEAD;
		return;
	}
	app->accepted++;
	c->state = ST_ACCEPTING;
}

static void on_established(struct conn *c, const struct iwcm_event *ev)
{
	c->established = true;
	dbg("ESTABLISHED with %s: MPA rev %u, CRC %s, markers rx %s tx %s, p2p %s, IRD %u ORD %u",
	    c->name, ev->mpa.mpa_rev, ev->mpa.crc ? "on" : "off", ev->mpa.markers_rx ? "on" : "off",
	    ev->mpa.markers_tx ? "on" : "off", ev->mpa.p2p ? "on" : "off", ev->mpa.ird,
	    ev->mpa.ord);
	if (c->app->stopping) {
		conn_disconnect(c);
		return;
	}
	if (c->app->o->server) {
		/* the Receive is posted: the client's first info may come */
		c->state = ST_SRV_WAIT_READ_ADV;
	} else {
		cli_start_ping(c);
	}
}

static void on_disconnected(struct conn *c)
{
	bool orderly;
	char cause[160];
	const char *why;
	int err;

	c->disconnected = true;
	/* completions that came before the disconnect still count */
	conn_poll_cq(c);
	err = qp_err(c);
	why = qp_cause(c, cause, sizeof(cause));
	dbg("%s: DISCONNECTED in state %s, QP cause: %s", c->name, conn_state_name(c->state),
	    why ? why : "none");
	/*
	 * In order: we closed, or (server) the client closed between two
	 * pings, after one at least - a client that leaves before its first
	 * ping (it closed on our MPA Reply, say) never reached full operation,
	 * and rping's server fails then too.  The peer's FIN leaves
	 * "connection closed" as the QP's cause; anything else (a Terminate, a
	 * reset) is a failure whatever the state.
	 */
	orderly = (c->state == ST_DISCONNECTING ||
		   (c->app->o->server && c->state == ST_SRV_WAIT_READ_ADV && c->ping > 0)) &&
		  (!err || err == IW_EMPA_CLOSED);
	if (!c->failed && orderly) {
		fprintf(stderr, "%s DISCONNECT EVENT...\n",
			c->app->o->server ? "server" : "client");
	} else if (!c->failed) {
		conn_fail(c, "%s disconnected during ping %d (%s)%s%s", c->name, c->ping,
			  conn_state_name(c->state), why ? ": " : "", why ? why : "");
	}
	c->state = ST_DEAD;
}

static void on_conn_error(struct conn *c, const struct iwcm_event *ev)
{
	char detail[160] = "";

	if (ev->iw_err)
		snprintf(detail, sizeof(detail), "; %s (%s)", iwv_strerror(ev->iw_err),
			 iwv_errname(ev->iw_err));
	/* rping: "cma event %s, error %d" */
	conn_fail(c, "%s: cma event %s, error %d (%s)%s", c->name, iwcm_event_str(ev->event),
		  ev->status, strerror(ev->status < 0 ? -ev->status : ev->status), detail);
	/* no connection to close: nothing more will come for this id */
	c->state = ST_DEAD;
}

static void cli_connect(struct conn *c)
{
	struct iwcm_conn_param cp;

	if (conn_setup(c)) {
		c->failed = true;
		c->state = ST_DEAD;
		return;
	}
	conn_param_init(c->app->o, &cp, IWPING_IRD_ORD, IWPING_IRD_ORD);
	dbg("connecting to %s (IRD %u ORD %u)", c->name, cp.responder_resources,
	    cp.initiator_depth);
	if (iwcm_connect(c->id, &cp)) {
		conn_fail(c, "connect to %s: %s", c->name, strerror(errno));
		c->state = ST_DEAD;
		return;
	}
	c->state = ST_CONNECTING;
}

static void dispatch_cm_event(struct iwping *app, const struct iwcm_event *ev)
{
	struct conn *c;

	if (ev->event == IWCM_EVENT_CONNECT_REQUEST) {
		on_connect_request(app, ev);
		return;
	}
	c = ev->id ? ev->id->context : NULL;
	if (!c) {
		/* the listener: nothing it reports leaves it usable */
		if (ev->event == IWCM_EVENT_DEVICE_REMOVAL || ev->status) {
			errmsg("listener: cma event %s, error %d", iwcm_event_str(ev->event),
			       ev->status);
			app->status = IWT_EXIT_FAIL;
			app->finished = true;
		}
		return;
	}
	switch (ev->event) {
	case IWCM_EVENT_ADDR_RESOLVED:
		if (c->state != ST_RESOLVE_ADDR)
			break;
		if (iwcm_resolve_route(c->id, IWPING_RESOLVE_MS)) {
			conn_fail(c, "resolve route to %s: %s", c->name, strerror(errno));
			c->state = ST_DEAD;
			break;
		}
		c->state = ST_RESOLVE_ROUTE;
		break;
	case IWCM_EVENT_ROUTE_RESOLVED:
		if (c->state == ST_RESOLVE_ROUTE)
			cli_connect(c);
		break;
	case IWCM_EVENT_ESTABLISHED:
		on_established(c, ev);
		break;
	case IWCM_EVENT_DISCONNECTED:
		on_disconnected(c);
		break;
	case IWCM_EVENT_ADDR_ERROR:
	case IWCM_EVENT_ROUTE_ERROR:
	case IWCM_EVENT_CONNECT_ERROR:
	case IWCM_EVENT_UNREACHABLE:
	case IWCM_EVENT_REJECTED:
		on_conn_error(c, ev);
		break;
	case IWCM_EVENT_DEVICE_REMOVAL:
		conn_fail(c, "cma detected device removal");
		c->state = ST_DEAD;
		break;
	default:
		dbg("ignoring cma event %s", iwcm_event_str(ev->event));
		break;
	}
}

/* Every event the channel holds, each acknowledged before it is acted on. */
static int drain_cm_channel(struct iwping *app)
{
	struct iwcm_event *event;

	while (!iwcm_get_cm_event(app->v.cm_ch, &event)) {
		struct iwcm_event ev = *event;

		dbg("cma_event type %s cma_id %p (%s)", iwcm_event_str(ev.event), (void *)ev.id,
		    ev.id == app->v.listen_id || !app->o->server ? "parent" : "child");
		/* ack first: tearing down an id needs its events acknowledged;
		 * nothing used below points into the event (no private data) */
		iwcm_ack_cm_event(event);
		dispatch_cm_event(app, &ev);
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		errmsg("CM event channel: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The loop                                                                 */
/* ---------------------------------------------------------------------- */

static void on_signal(int sig)
{
	g_signal = sig;
}

/* First SIGINT/SIGTERM: finish the ping in flight and close; second: abort. */
static void handle_signal(struct iwping *app)
{
	struct conn *c;

	if (!g_signal)
		return;
	g_signal = 0;
	if (app->stopping) {
		errmsg("interrupted");
		app->status = IWT_EXIT_FAIL;
		app->finished = true;
		return;
	}
	app->stopping = true;
	dbg("stopping");
	for (c = app->conns; c; c = c->next) {
		if (!app->o->server && c->established)
			c->stop_after_ping = true;
		else if (c->established)
			conn_disconnect(c);
		else if (!app->o->server) {
			conn_fail(c, "interrupted before the connection was established");
			c->state = ST_DEAD;
		} else {
			c->state = ST_DEAD;
		}
	}
}

static void check_deadlines(struct iwping *app, int *timeout_ms)
{
	uint64_t now = iwt_now_ms();
	struct conn *c;

	*timeout_ms = -1;
	for (c = app->conns; c; c = c->next) {
		if (!c->deadline_ms || c->state == ST_DEAD)
			continue;
		if (now >= c->deadline_ms) {
			char cause[160];
			const char *why = qp_cause(c, cause, sizeof(cause));

			c->deadline_ms = 0;
			conn_fail(c, "%s: %s%s%s", c->name, c->deadline_why, why ? ": " : "",
				  why ? why : "");
			c->failed = true;
			c->state = ST_DEAD;
			*timeout_ms = 0;
			continue;
		}
		if (*timeout_ms < 0 || c->deadline_ms - now < (uint64_t)*timeout_ms)
			*timeout_ms = (int)(c->deadline_ms - now);
	}
}

static bool any_cq_ready(const struct iwping *app)
{
	const struct conn *c;

	for (c = app->conns; c; c = c->next) {
		if (c->cq_ready)
			return true;
	}
	return false;
}

static int run_loop(struct iwping *app)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{.fd = app->v.cm_ch->fd, .events = POLLIN},
			{.fd = app->v.comp_ch->fd, .events = POLLIN},
		};
		struct timespec ts, *tsp = NULL;
		int timeout_ms;

		handle_signal(app);
		/* completions first: a DISCONNECTED must not overtake the last
		 * completions of the connection it ends */
		if (drain_comp_channel(app))
			return IWT_EXIT_FAIL;
		service_cqs(app);
		if (drain_cm_channel(app))
			return IWT_EXIT_FAIL;
		service_cqs(app);
		check_deadlines(app, &timeout_ms);
		reap(app);
		if (app->finished)
			break;
		/* tearing a connection down drains the channel for the others */
		if (any_cq_ready(app))
			timeout_ms = 0;
		if (timeout_ms >= 0) {
			ts.tv_sec = timeout_ms / 1000;
			ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
			tsp = &ts;
		}
		if (ppoll(pfd, 2, tsp, &app->wait_mask) < 0 && errno != EINTR) {
			errmsg("poll: %s", strerror(errno));
			return IWT_EXIT_FAIL;
		}
	}
	return app->status;
}

static int start_server(struct iwping *app)
{
	struct iwping_opts *o = app->o;
	char name[IWT_ADDR_STRLEN + 8];

	if (iwcm_create_id(app->v.cm_ch, &app->v.listen_id, NULL, IWCM_PS_TCP)) {
		errmsg("create id: %s", strerror(errno));
		return -1;
	}
	if (iwt_opt_apply(&o->tool, app->v.listen_id)) {
		errmsg("iWARP options: %s", strerror(errno));
		return -1;
	}
	iwt_addr_set_port(&o->addr, o->port);
	format_addr((struct sockaddr *)&o->addr, name, sizeof(name));
	if (iwcm_bind_addr(app->v.listen_id, (struct sockaddr *)&o->addr)) {
		errmsg("bind to %s: %s", name, strerror(errno));
		return -1;
	}
	if (iwcm_listen(app->v.listen_id, IWPING_BACKLOG)) {
		errmsg("listen on %s: %s", name, strerror(errno));
		return -1;
	}
	format_addr(iwcm_get_local_addr(app->v.listen_id), name, sizeof(name));
	dbg("listening on %s", name);
	return 0;
}

static int start_client(struct iwping *app)
{
	struct iwping_opts *o = app->o;
	struct conn *c = conn_new(app);

	if (!c)
		return -1;
	iwt_addr_set_port(&o->addr, o->port);
	format_addr((struct sockaddr *)&o->addr, c->name, sizeof(c->name));
	if (iwcm_create_id(app->v.cm_ch, &c->id, c, IWCM_PS_TCP)) {
		errmsg("create id: %s", strerror(errno));
		c->state = ST_DEAD;
		return -1;
	}
	if (iwt_opt_apply(&o->tool, c->id)) {
		errmsg("iWARP options: %s", strerror(errno));
		c->state = ST_DEAD;
		return -1;
	}
	c->state = ST_RESOLVE_ADDR;
	if (iwcm_resolve_addr(c->id, o->have_src ? (struct sockaddr *)&o->src : NULL,
			      (struct sockaddr *)&o->addr, IWPING_RESOLVE_MS)) {
		errmsg("resolve %s: %s", c->name, strerror(errno));
		c->state = ST_DEAD;
		return -1;
	}
	return 0;
}

static int run(struct iwping_opts *o)
{
	struct iwping app = {.o = o, .status = IWT_EXIT_OK};
	struct sigaction sa;
	enum iwt_verbs_step step;
	sigset_t block;
	char desc[128];
	int status = IWT_EXIT_FAIL;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: ppoll must return */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Blocked everywhere but inside ppoll(): an engine thread inherits
	 * the mask, so the signal always reaches the loop.
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &app.wait_mask);
	sigdelset(&app.wait_mask, SIGINT);
	sigdelset(&app.wait_mask, SIGTERM);

	step = iwt_verbs_open(&app.v, &o->tool, prog,
			      IWT_VERBS_F_COMP_CHANNEL | IWT_VERBS_F_NONBLOCK);
	if (step == IWT_VERBS_CONTEXT)
		return IWT_EXIT_FAIL; /* iwt_opt_open() said why */
	iwt_opt_describe(&o->tool, desc, sizeof(desc));
	dbg("%s, engine %s", desc, iwv_context_engine_name(app.v.ctx));
	if (app.v.pd)
		dbg("created pd %p", (void *)app.v.pd);
	switch (step) {
	case IWT_VERBS_PD:
		errmsg("alloc PD: %s", strerror(errno));
		goto out;
	case IWT_VERBS_COMP_CHANNEL:
		errmsg("completion channel: %s", strerror(errno));
		goto out;
	case IWT_VERBS_CM_CHANNEL:
		errmsg("CM event channel: %s", strerror(errno));
		goto out;
	default:
		break;
	}
	if (o->server ? start_server(&app) : start_client(&app)) {
		app.status = IWT_EXIT_FAIL;
		reap(&app);
		goto out;
	}
	status = run_loop(&app);
out:
	fflush(stdout);
	while (app.conns)
		conn_destroy(&app, app.conns);
	if (iwt_verbs_close(&app.v))
		dbg("close device: %s", strerror(errno));
	return status;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                             */
/* ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	/* split: ISO C caps string literals at 4095 octets */
	fputs("Usage: iwping -s [-vVdPq] [-S SIZE] [-C COUNT] [-a ADDR] [-p PORT] [OPTION]...\n"
	      "       iwping -c [-vVdq] [-S SIZE] [-C COUNT] [-I ADDR] -a ADDR [-p PORT]\n"
	      "              [OPTION]...\n"
	      "\n"
	      "RDMA ping-pong over the iwarp software iWARP stack, compatible with rping of\n"
	      "rdma-core: the same options, the same messages on the wire and the same -v\n"
	      "output, so iwping and stock rping (on an RNIC or Linux siw) talk to each\n"
	      "other in either role.\n"
	      "\n"
	      "Each ping: the client fills a buffer with \"rdma-ping-N: \" and a rotating run\n"
	      "of ASCII letters, and Sends its address, STag and length (16 octets); the\n"
	      "server RDMA Reads the buffer and Sends a go-ahead; the client Sends the\n"
	      "address of a second buffer; the server RDMA Writes the data there and Sends\n"
	      "another go-ahead.  The client then checks (-V) and prints (-v) what came back.\n"
	      "\n"
	      "rping options:\n"
	      "  -s             server: listen; serve one client, exit when it disconnects\n"
	      "  -c             client: connect, run COUNT pings, disconnect\n"
	      "  -a ADDR        server: address to listen on (default 0.0.0.0; -a :: or\n"
	      "                 -a ::0 for IPv6); client: the server (required).  An IPv4\n"
	      "                 or IPv6 address or a host name\n"
	      "  -I ADDR        client: source address to connect from (default: the\n"
	      "                 routing table decides)\n"
	      "  -p PORT        TCP port (default 7174)\n"
	      "  -C COUNT       client: pings to run, 0 = until interrupted (default 0)\n"
	      "  -S SIZE        client: octets per ping, 26 to 65535 (default 64); the\n"
	      "                 server takes any size up to 65535 whatever its own -S\n"
	      "  -v             print the ping data: \"ping data: ...\" (client) and\n"
	      "                 \"server ping data: ...\" (server), as rping does\n"
	      "  -V             client: check that the data written back equals the data\n"
	      "                 the server read; a mismatch ends the run with status 1\n"
	      "  -d             debug output on stdout: each connection step, work request\n"
	      "                 and completion\n"
	      "  -P             server: persistent; serve clients until interrupted (up to\n"
	      "                 64 at a time)\n"
	      "  -q             create the QP with iwv_create_qp and hand it to the\n"
	      "                 connection manager (rping's self-created QP); the same\n"
	      "                 traffic\n"
	      "  -h, --help     show this help and exit\n"
	      "\n" IWT_NUM_HELP "\n",
	      f);
	iwt_opt_help(f);
	fputs("\n"
	      "iwping asks for IRD 1 and ORD 1 unless --ird/--ord say otherwise, as rping\n"
	      "does; as server it advertises an IRD that covers the client's ORD and ORD 1.\n"
	      "SIGINT or SIGTERM: the client finishes the ping in flight and disconnects, the\n"
	      "server disconnects its clients; both exit 0.  A second signal aborts (1).\n"
	      "\n",
	      f);
	fputs("Exit status:\n"
	      "  0  client: every ping completed (and checked, with -V); server: the client\n"
	      "     disconnected between pings, after one at least (with -P: stopped by a\n"
	      "     signal)\n"
	      "  1  runtime failure: rejected, unreachable, MPA negotiation failed, work\n"
	      "     request failed or flushed, Terminate received, data mismatch, peer gone\n"
	      "     in the middle of a ping; the cause is one line on stderr\n"
	      "  2  bad command line\n"
	      "\n"
	      "Examples:\n"
	      "  iwping -s -a 127.0.0.1 -p 7174 &\n"
	      "  iwping -c -a 127.0.0.1 -p 7174 -C 1000 -V     1000 checked pings on loopback\n"
	      "  iwping -s -a ::1 -v &\n"
	      "  iwping -c -a ::1 -C 3 -v                      IPv6, the data printed\n"
	      "  iwping -s -P --markers on --crc off           persistent server, Markers\n"
	      "  iwping -c -a 127.0.0.1 --p2p on --rtr read -C 10 -V\n"
	      "                                               peer-to-peer mode, Read RTR\n"
	      "  rping -s -a 192.0.2.1 -v -S 65535             stock rping on siw (host A) ...\n"
	      "  iwping -c -a 192.0.2.1 -C 10 -v -V            ... and iwping on host B\n"
	      "  iwping -s -a 0.0.0.0 -v                       iwping server (host B) ...\n"
	      "  rping -c -a 192.0.2.2 -C 10 -v -V             ... and stock rping on siw (A)\n"
	      "\n"
	      "See iwping(1), rping(1), iwperf(1).\n",
	      f);
}

#define usage_err(...) iwt_usage_err(prog, __VA_ARGS__)

/* A decimal option value in [min, max] (iwt_num.h). */
static int parse_num(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
	if (iwt_num_u64(prog, opt, arg, min, max, 0, out))
		return iwt_try_help(prog), -1;
	return 0;
}

/* An address (any family) or a host name; the first answer counts. */
static int parse_addr(const char *opt, const char *arg, struct sockaddr_storage *ss)
{
	int ret = iwt_addr_resolve(arg, 0, false, ss, NULL);

	if (ret) {
		iwt_bad_arg(prog, opt, arg, gai_strerror(ret));
		return iwt_try_help(prog), -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct iwping_opts *o)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		IWT_OPT_LONG,
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->server = -1;
	o->port = IWPING_DEFAULT_PORT;
	o->size = IWPING_DEFAULT_SIZE;
	iwt_opt_init(&o->tool);

	while ((c = getopt_long(argc, argv, "a:I:Pp:C:S:scvVdqh", longopts, NULL)) != -1) {
		if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
			if (iwt_opt_parse(&o->tool, prog, c, optarg))
				return iwt_try_help(prog), -1;
			continue;
		}
		switch (c) {
		case 'a':
			if (parse_addr("-a", optarg, &o->addr))
				return -1;
			o->addr_str = optarg;
			o->have_addr = true;
			break;
		case 'I':
			if (parse_addr("-I", optarg, &o->src))
				return -1;
			o->src_str = optarg;
			o->have_src = true;
			break;
		case 'P':
			o->persistent = true;
			break;
		case 'p':
			if (parse_num("-p", optarg, 0, 65535, &v))
				return -1;
			o->port = (uint16_t)v;
			break;
		case 'C':
			if (parse_num("-C", optarg, 0, INT_MAX, &v))
				return -1;
			o->count = (int)v;
			break;
		case 'S':
			if (parse_num("-S", optarg, IWT_RPING_MIN_SIZE, IWPING_MAX_SIZE, &v))
				return -1;
			o->size = (uint32_t)v;
			break;
		case 's':
			o->server = 1;
			break;
		case 'c':
			o->server = 0;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			o->validate++;
			break;
		case 'd':
			o->debug++;
			break;
		case 'q':
			o->self_qp = true;
			break;
		case 'h':
			usage(stdout);
			exit(IWT_EXIT_OK);
		default:
			/* getopt has said what was wrong */
			return iwt_try_help(prog), -1;
		}
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	if (o->server < 0)
		return usage_err("give -s (server) or -c (client)");
	if (o->server) {
		if (o->have_src)
			return usage_err("-I is for the client (-c)");
		if (!o->have_addr) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&o->addr;

			/* rping's server default: every IPv4 address */
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = htonl(INADDR_ANY);
		}
	} else {
		if (!o->have_addr)
			return usage_err("the client needs the server's address: -a ADDR");
		if (o->persistent)
			return usage_err("-P is for the server (-s)");
		if (o->port == 0)
			return usage_err("the client needs a port other than 0");
		if (o->have_src && o->src.ss_family != o->addr.ss_family)
			return usage_err("-I %s and -a %s are not of the same address family",
					 o->src_str, o->addr_str);
	}
	if (o->tool.cm.mpa_rev == 1 && o->tool.cm.p2p)
		return usage_err("--p2p on needs --mpa-rev 2 (RFC 6581)");
	return 0;
}

int main(int argc, char **argv)
{
	struct iwping_opts o;

	if (parse_args(argc, argv, &o))
		return IWT_EXIT_USAGE;
	g_debug = o.debug;
	/* ping lines (stdout) and events (stderr) stay in order in one log */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return run(&o);
}
