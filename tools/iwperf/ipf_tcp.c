/* SPDX-License-Identifier: MIT */
/*
 * ipf_tcp.c - iwperf's --tcp-baseline transport: the test patterns of the
 * iWARP transport over plain TCP sockets, for a ratio against the kernel's
 * TCP on the same machine in the same run.
 *
 * Theory of operation (the whole tool: ipf_int.h; the stream formats:
 * iwperf(1), CONTROL PROTOCOL, TCP baseline).
 *
 * Set-up is blocking (with a timeout): connect, TCP_NODELAY as the iWARP
 * engine sets it, HELLO out, WELCOME in; then the socket turns non-blocking
 * and every call below returns at once, so the driver busy-polls it the way
 * it busy-polls a CQ.
 *
 * Client patterns, in the driver's terms:
 *   write, send  post() fills the slots (--verify) and takes every message;
 *                poll() hands messages [completed, posted) to one sendmsg
 *                (up to 64 iovecs; `tx_off` is how far into message
 *                `completed` the socket took it) and a message is completed
 *                once the socket took its last octet;
 *   read         post() writes one batch of 8-octet requests (the message
 *                indexes) once the previous one is out; poll() sends the
 *                rest and receives the responses into their slots, a
 *                response completing its message;
 *   ping-pong    ping() sends the message, poll() receives the echo.
 * finish() half-closes the socket; the server answers with a 40-octet
 * RESULT and closes.
 *
 * Server: a session reads the HELLO, answers WELCOME (length = the Read
 * slots, when there are any), then per pattern receives the stream into its
 * slots (checking each message), answers each request with its slot, or
 * echoes each ping from where it landed.  The client's half-close ends the
 * data; RESULT follows and the session closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "iw_bytes.h"
#include "iwt_addr.h"

#include "ipf_int.h"

#define IOV_BATCH	    64 /* iovecs per sendmsg/recvmsg */
#define SETUP_TIMEOUT_S	    10
#define LISTEN_IDLE_WAIT_MS 200

/* ---------------------------------------------------------------------- */
/* Sockets                                                                 */
/* ---------------------------------------------------------------------- */

static bool again(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

/* Move a (message, offset) cursor on by n octets of size-octet messages. */
static void cursor_advance(uint64_t *msg, size_t *off, size_t n, uint32_t size)
{
	uint64_t total = (uint64_t)*off + n;

	*msg += total / size;
	*off = (size_t)(total % size);
}

/*
 * Messages [*msg, limit) of `size` octets in `nslots` slots (message m in
 * slot m % nslots, at most nslots at once) as iovecs from offset `off` of
 * the first.  Returns how many iovecs.
 */
static int slot_iov(struct iovec *iov, uint8_t *buf, uint32_t nslots, uint32_t size, uint64_t msg,
		    size_t off, uint64_t limit)
{
	int n = 0;

	for (uint64_t m = msg; m < limit && n < IOV_BATCH && m - msg < nslots; m++, off = 0) {
		iov[n].iov_base = buf + (size_t)(m % nslots) * size + off;
		iov[n].iov_len = size - off;
		n++;
	}
	return n;
}

/*
 * One non-blocking sendmsg (tx) or recvmsg of messages [*msg, limit), the
 * cursor moved on.  Returns octets moved, 0 if the socket was not ready (or
 * nothing was to move), -1 on error, -2 at EOF.
 */
static ssize_t move_slots(int fd, bool tx, uint8_t *buf, uint32_t nslots, uint32_t size,
			  uint64_t *msg, size_t *off, uint64_t limit)
{
	struct iovec iov[IOV_BATCH];
	struct msghdr mh;
	ssize_t k;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)slot_iov(iov, buf, nslots, size, *msg, *off, limit);
	if (!mh.msg_iovlen)
		return 0;
	k = tx ? sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) : recvmsg(fd, &mh, MSG_DONTWAIT);
	if (k < 0)
		return again(errno) ? 0 : -1;
	if (k == 0 && !tx)
		return -2;
	cursor_advance(msg, off, (size_t)k, size);
	return k;
}

/* Non-blocking send of what is left of buf[*off..len); -1 on error. */
static int tx_rest(int fd, const uint8_t *buf, size_t len, size_t *off)
{
	ssize_t k;

	if (*off >= len)
		return 0;
	k = send(fd, buf + *off, len - *off, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k < 0)
		return again(errno) ? 0 : -1;
	*off += (size_t)k;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Client                                                                  */
/* ---------------------------------------------------------------------- */

struct tconn {
	int fd;
	uint8_t *buf;  /* the data slots; ping-pong: the ping, then the echo */
	size_t tx_off; /* write/send: into message `completed`; ping-pong: into the ping */
	size_t rx_off; /* read: into message `completed`; ping-pong: into the echo */
	uint8_t req[IOV_BATCH * IPF_REQ_LEN];
	size_t req_len, req_off;
	uint8_t res[IPF_CTRL_LEN];
	size_t res_off;
};

static int tc_connect(struct ipf_client *cl, struct ipf_conn *c)
{
	const struct ipf_opts *o = cl->o;
	struct timeval tv = {SETUP_TIMEOUT_S, 0};
	struct tconn *t = c->t;
	uint8_t msg[IPF_HELLO_LEN];
	struct ipf_welcome w;
	struct ipf_hello h;
	int one = 1;
	ssize_t k;

	t->fd = socket(cl->dst.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		return ipf_fail("socket: %s", strerror(errno));
	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(t->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(t->fd, (const struct sockaddr *)&cl->dst, cl->dst_len))
		return ipf_fail("connect to %s port %u: %s%s", o->host, o->port, strerror(errno),
				errno == ECONNREFUSED ? " (is 'iwperf -s --tcp-baseline' running?)"
						      : "");
	ipf_hello_make(c, &h);
	ipf_hello_encode(&h, msg);
	if (send(t->fd, msg, sizeof(msg), MSG_NOSIGNAL) != (ssize_t)sizeof(msg))
		return ipf_fail("sending the test parameters: %s", strerror(errno));
	k = recv(t->fd, msg, sizeof(msg), MSG_WAITALL);
	if (k < 0 && errno != ECONNRESET)
		return ipf_fail("waiting for the server's answer: %s", strerror(errno));
	if (k != (ssize_t)sizeof(msg) || ipf_welcome_decode(msg, (size_t)k, &w))
		return ipf_fail("the server closed the connection during setup (is it an iwperf "
				"server with --tcp-baseline?)");
	if (w.status)
		return ipf_fail("the server refused the test: %s", w.reason);
	c->rslots = (uint32_t)(w.length / o->size);
	if (o->op == IPF_OP_READ && !o->pingpong && !c->rslots)
		return ipf_fail("the server offered no Read buffer");
	c->nslots = cl->pl.nslots;
	c->window = cl->pl.depth;
	t->buf = ipf_buf_alloc((size_t)(o->pingpong ? 2 : c->nslots) * o->size);
	if (!t->buf)
		return ipf_fail("out of memory for %u x %" PRIu32 " B", c->nslots, o->size);
	c->data = t->buf;
	if (fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK))
		return ipf_fail("fcntl: %s", strerror(errno));
	return 0;
}

static int tc_setup(struct ipf_client *cl)
{
	const struct ipf_opts *o = cl->o;
	unsigned ord = o->iw.ord ? o->iw.ord : IWPERF_DEFAULT_ORD;
	struct tconn *t = calloc(o->qps, sizeof(*t));

	if (!t)
		return ipf_fail("out of memory");
	cl->t_state = t;
	for (unsigned i = 0; i < o->qps; i++) {
		t[i].fd = -1;
		cl->c[i].t = &t[i];
	}
	/* an RDMA Read has at most the ORD in flight: the TCP pattern gets the same bound */
	ipf_plan_make(o, o->op == IPF_OP_READ && o->depth > ord ? ord : o->depth, &cl->pl);
	cl->ri = (struct ipf_run_info){"tcp", NULL, false, "off", cl->pl.depth, 0};
	snprintf(cl->how, sizeof(cl->how), "TCP baseline");
	for (unsigned i = 0; i < o->qps; i++)
		if (tc_connect(cl, &cl->c[i]))
			return -1;
	return 0;
}

static int tc_post(struct ipf_conn *c, uint64_t n)
{
	struct tconn *t = c->t;

	if (c->cl->o->op != IPF_OP_READ) {
		/* the socket takes them in poll() */
		for (uint64_t i = 0; i < n; i++)
			ipf_slot_out(c, c->posted + i);
		return (int)n;
	}
	if (t->req_off < t->req_len)
		return 0; /* the last batch of requests is not out yet */
	if (n > IOV_BATCH)
		n = IOV_BATCH;
	for (uint64_t i = 0; i < n; i++)
		ipf_req_encode(c->posted + i, t->req + i * IPF_REQ_LEN);
	t->req_len = n * IPF_REQ_LEN;
	t->req_off = 0;
	if (tx_rest(t->fd, t->req, t->req_len, &t->req_off))
		return ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	return (int)n;
}

static int tc_ping(struct ipf_conn *c)
{
	const struct ipf_opts *o = c->cl->o;
	struct tconn *t = c->t;

	if (o->verify)
		ipf_pat_fill(c->data, o->size, ipf_msg_key(c->seed, c->iter));
	t->tx_off = 0;
	t->rx_off = 0;
	if (tx_rest(t->fd, c->data, o->size, &t->tx_off))
		return ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	return 1;
}

/* write, send: hand the posted messages to the socket. */
static int tc_poll_stream(struct ipf_conn *c)
{
	struct tconn *t = c->t;
	uint64_t m = c->completed;
	ssize_t k = move_slots(t->fd, true, c->data, c->nslots, c->cl->o->size, &m, &t->tx_off,
			       c->posted);

	if (k < 0)
		return ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	return ipf_completed(c, m);
}

/* read: the rest of the requests out, the responses in. */
static int tc_poll_read(struct ipf_conn *c)
{
	struct tconn *t = c->t;
	uint64_t m = c->completed;
	ssize_t k;

	if (tx_rest(t->fd, t->req, t->req_len, &t->req_off))
		return ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	k = move_slots(t->fd, false, c->data, c->nslots, c->cl->o->size, &m, &t->rx_off, c->posted);
	if (k == -1)
		return ipf_fail("QP %d: receive: %s", c->idx, strerror(errno));
	if (k == -2)
		return ipf_fail("QP %d: the server closed the connection", c->idx);
	return ipf_completed(c, m);
}

/* ping-pong: the rest of the ping out, the echo in. */
static int tc_poll_echo(struct ipf_conn *c)
{
	uint32_t size = c->cl->o->size;
	struct tconn *t = c->t;
	uint8_t *echo = t->buf + size;
	ssize_t k;

	if (!c->waiting)
		return 0;
	if (tx_rest(t->fd, c->data, size, &t->tx_off))
		return ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	k = recv(t->fd, echo + t->rx_off, size - t->rx_off, MSG_DONTWAIT);
	if (k < 0)
		return again(errno) ? 0 : ipf_fail("QP %d: receive: %s", c->idx, strerror(errno));
	if (k == 0)
		return ipf_fail("QP %d: the server closed the connection", c->idx);
	t->rx_off += (size_t)k;
	if (t->rx_off < size)
		return 0;
	return ipf_pong(c, echo, size, c->iter);
}

/* After the half-close: the server's RESULT. */
static int tc_poll_result(struct ipf_conn *c)
{
	struct tconn *t = c->t;
	struct ipf_ctrl m;
	ssize_t k;

	k = recv(t->fd, t->res + t->res_off, sizeof(t->res) - t->res_off, MSG_DONTWAIT);
	if (k < 0)
		return again(errno) ? 0 : ipf_fail("QP %d: %s", c->idx, strerror(errno));
	if (k == 0)
		return ipf_fail("QP %d: the server closed the connection without a result", c->idx);
	t->res_off += (size_t)k;
	if (t->res_off < sizeof(t->res))
		return 0;
	if (ipf_ctrl_decode(t->res, sizeof(t->res), &m) || m.type != IPF_CTRL_RESULT)
		return ipf_fail("QP %d: malformed result from the server", c->idx);
	return ipf_result(c, &m);
}

static int tc_poll(struct ipf_conn *c)
{
	const struct ipf_opts *o = c->cl->o;

	if (c->state == IPF_C_FINISH)
		return tc_poll_result(c);
	if (c->state != IPF_C_RUN)
		return 0;
	if (o->pingpong)
		return tc_poll_echo(c);
	return o->op == IPF_OP_READ ? tc_poll_read(c) : tc_poll_stream(c);
}

static uint64_t tc_stop_at(const struct ipf_conn *c)
{
	const struct tconn *t = c->t;

	/* requests out are answered; a message the socket has begun is sent whole */
	if (c->cl->o->op == IPF_OP_READ)
		return c->posted;
	return c->completed + (t->tx_off ? 1 : 0);
}

static int tc_finish(struct ipf_conn *c)
{
	struct tconn *t = c->t;

	if (shutdown(t->fd, SHUT_WR))
		return ipf_fail("QP %d: shutdown: %s", c->idx, strerror(errno));
	return 0;
}

static int tc_close(struct ipf_client *cl)
{
	(void)cl;
	return 0; /* the server closed each connection after its RESULT */
}

static void tc_free(struct ipf_client *cl)
{
	struct tconn *t = cl->t_state;

	for (unsigned i = 0; t && i < cl->o->qps; i++) {
		if (t[i].fd >= 0)
			close(t[i].fd);
		free(t[i].buf);
	}
	free(t);
}

/* ---------------------------------------------------------------------- */
/* Server                                                                  */
/* ---------------------------------------------------------------------- */

enum tstate { TS_HELLO, TS_DATA, TS_RESULT };

struct tsess {
	struct ipf_sess s;
	int fd;
	enum tstate state;
	uint8_t hello[IPF_HELLO_LEN];
	size_t hello_off;
	size_t rx_off; /* into message s.rx_msgs (data, or the ping) */
	uint8_t rq[IOV_BATCH * IPF_REQ_LEN];
	size_t rq_len;
	uint64_t req_rcvd;
	uint64_t tx_msg; /* Read responses sent */
	size_t tx_off;	 /* into Read response tx_msg, or into the echo */
	uint8_t res[IPF_CTRL_LEN];
	size_t res_off;
};

static struct tsess *tsess_of(struct ipf_sess *s)
{
	return (struct tsess *)s; /* s is the first member */
}

static void ts_hello(struct tsess *ts)
{
	struct ipf_sess *s = &ts->s;
	uint8_t msg[IPF_WELCOME_LEN];
	struct ipf_welcome w;
	const char *why;
	ssize_t k;

	k = recv(ts->fd, ts->hello + ts->hello_off, IPF_HELLO_LEN - ts->hello_off, MSG_DONTWAIT);
	if (k < 0 && again(errno))
		return;
	if (k <= 0) {
		s->closed = true;
		return;
	}
	ts->hello_off += (size_t)k;
	if (ts->hello_off < IPF_HELLO_LEN)
		return;
	if (iw_get_be32(ts->hello) != IPF_MAGIC) {
		fprintf(stderr,
			"%s: %s: not an iwperf client (an iWARP client? this server runs "
			"--tcp-baseline)\n",
			PROG, s->peer);
		s->closed = true;
		return;
	}
	why = ipf_sess_hello(s, ts->hello, IPF_HELLO_LEN);
	if (!why) {
		s->data = ipf_buf_alloc((size_t)s->nslots * s->h.size);
		if (!s->data)
			why = "out of memory";
	}
	if (why) {
		ipf_refuse(s->peer, why, msg);
		/* best effort: the connection is new, its send buffer empty */
		(void)!send(ts->fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL);
		s->closed = true;
		return;
	}
	ipf_sess_fill(s);
	memset(&w, 0, sizeof(w));
	w.length = (uint64_t)s->nslots * s->h.size;
	ipf_welcome_encode(&w, msg);
	if (send(ts->fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(msg)) {
		s->closed = true;
		return;
	}
	ts->state = TS_DATA;
	s->setup = false;
}

/* write, send: receive into the slots, check each message; false at the end. */
static bool ts_data_stream(struct tsess *ts)
{
	struct ipf_sess *s = &ts->s;
	uint64_t before = s->rx_msgs;
	ssize_t k = move_slots(ts->fd, false, s->data, s->nslots, s->h.size, &s->rx_msgs,
			       &ts->rx_off, UINT64_MAX);

	for (uint64_t m = before; m < s->rx_msgs; m++)
		ipf_sess_check(s, s->data + (size_t)(m % s->nslots) * s->h.size, s->h.size, m);
	if (k == -1)
		s->closed = true;
	if (k == -2 && ts->rx_off)
		ipf_sess_bad(s, IPF_RES_PROTO, s->rx_msgs, ts->rx_off);
	return k != -2;
}

/* read: take the requests in, send each one's slot; false at the end. */
static bool ts_data_read(struct tsess *ts)
{
	struct ipf_sess *s = &ts->s;
	size_t used = 0;
	ssize_t k;

	k = recv(ts->fd, ts->rq + ts->rq_len, sizeof(ts->rq) - ts->rq_len, MSG_DONTWAIT);
	if (k == 0) {
		if (ts->rq_len || ts->tx_msg < ts->req_rcvd)
			ipf_sess_bad(s, IPF_RES_PROTO, ts->req_rcvd, 0);
		return false;
	}
	if (k < 0 && !again(errno)) {
		s->closed = true;
		return true;
	}
	if (k > 0) {
		ts->rq_len += (size_t)k;
		for (; used + IPF_REQ_LEN <= ts->rq_len; used += IPF_REQ_LEN) {
			if (ipf_req_decode(ts->rq + used) != ts->req_rcvd)
				ipf_sess_bad(s, IPF_RES_PROTO, ts->req_rcvd, 0);
			ts->req_rcvd++;
		}
		memmove(ts->rq, ts->rq + used, ts->rq_len - used);
		ts->rq_len -= used;
	}
	if (move_slots(ts->fd, true, s->data, s->nslots, s->h.size, &ts->tx_msg, &ts->tx_off,
		       ts->req_rcvd) < 0)
		s->closed = true;
	return true;
}

/* ping-pong: receive the ping, echo it from where it landed; false at the end. */
static bool ts_data_pingpong(struct tsess *ts)
{
	struct ipf_sess *s = &ts->s;
	ssize_t k;

	if (ts->rx_off == s->h.size) {
		if (tx_rest(ts->fd, s->data, s->h.size, &ts->tx_off)) {
			s->closed = true;
			return true;
		}
		if (ts->tx_off < s->h.size)
			return true;
		ts->rx_off = 0;
		ts->tx_off = 0;
		s->rx_msgs++;
	}
	k = recv(ts->fd, s->data + ts->rx_off, s->h.size - ts->rx_off, MSG_DONTWAIT);
	if (k < 0) {
		if (!again(errno))
			s->closed = true;
		return true;
	}
	if (k == 0) {
		if (ts->rx_off)
			ipf_sess_bad(s, IPF_RES_PROTO, s->rx_msgs, ts->rx_off);
		return false;
	}
	ts->rx_off += (size_t)k;
	if (ts->rx_off == s->h.size)
		ipf_sess_check(s, s->data, s->h.size, s->rx_msgs);
	return true;
}

static void ts_serve(struct ipf_sess *s)
{
	struct tsess *ts = tsess_of(s);
	bool more;

	switch (ts->state) {
	case TS_HELLO:
		ts_hello(ts);
		return;
	case TS_DATA:
		if (s->h.flags & IPF_HF_PINGPONG)
			more = ts_data_pingpong(ts);
		else if (s->h.op == IPF_OP_READ)
			more = ts_data_read(ts);
		else
			more = ts_data_stream(ts);
		if (more || s->closed)
			return;
		/* the client half-closed: what it sent is all here */
		ipf_sess_result(s,
				s->h.op == IPF_OP_READ && !(s->h.flags & IPF_HF_PINGPONG)
					? ts->tx_msg
					: s->rx_msgs,
				ts->res, sizeof(ts->res));
		ts->res_off = 0;
		ts->state = TS_RESULT;
		return;
	case TS_RESULT:
		if (tx_rest(ts->fd, ts->res, sizeof(ts->res), &ts->res_off) ||
		    ts->res_off == sizeof(ts->res))
			s->closed = true;
		return;
	}
}

struct tlisten {
	int fd;
};

static int ts_listen(struct ipf_server *sv)
{
	const struct ipf_opts *o = sv->o;
	struct sockaddr_storage ss;
	char where[IPF_PEER_LEN];
	struct tlisten *l = calloc(1, sizeof(*l));
	socklen_t sl;
	int one = 1;

	if (!l)
		return ipf_fail("out of memory");
	sv->t_state = l;
	l->fd = socket(sv->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0)
		return ipf_fail("socket: %s", strerror(errno));
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l->fd, (struct sockaddr *)&sv->addr, sv->addr_len) || listen(l->fd, 128))
		return ipf_fail("cannot listen on %s port %u: %s", o->bind_addr, o->port,
				strerror(errno));
	sl = sizeof(ss);
	getsockname(l->fd, (struct sockaddr *)&ss, &sl);
	iwt_addr_format((struct sockaddr *)&ss, where, sizeof(where));
	ipf_report_listening(o, where, "TCP baseline");
	return 0;
}

static int ts_accept(struct ipf_server *sv)
{
	struct tlisten *l = sv->t_state;

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct tsess *ts;
		int one = 1;
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return 0; /* EAGAIN, or a transient failure the next round retries */
		ts = calloc(1, sizeof(*ts));
		if (!ts) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ts->fd = fd;
		ts->s.sv = sv;
		ts->s.setup = true;
		iwt_addr_format((struct sockaddr *)&ss, ts->s.peer, sizeof(ts->s.peer));
		ts->s.next = sv->list;
		sv->list = &ts->s;
	}
}

static void ts_idle(struct ipf_server *sv)
{
	struct tlisten *l = sv->t_state;
	struct pollfd pfd = {l->fd, POLLIN, 0};

	poll(&pfd, 1, LISTEN_IDLE_WAIT_MS);
}

static void ts_sess_free(struct ipf_sess *s)
{
	struct tsess *ts = tsess_of(s);

	close(ts->fd);
	free(s->data);
	free(ts);
}

static void ts_unlisten(struct ipf_server *sv)
{
	struct tlisten *l = sv->t_state;

	if (l && l->fd >= 0)
		close(l->fd);
	free(l);
}

const struct ipf_transport_ops ipf_tcp_ops =
	IPF_TRANSPORT_OPS("tcp", true, "Read response", "echo", tc, ts);
