/* SPDX-License-Identifier: MIT */
/*
 * iwperf.c - RDMA Write, RDMA Read and Send bandwidth and ping-pong latency
 * over the iwarp verbs API (iwv.h, iwcm.h), and the same patterns over plain
 * TCP sockets (--tcp-baseline), so the cost of the stack can be read as a
 * ratio against the kernel's TCP on the same machine in the same run.
 *
 * Theory of operation.
 *
 * Roles.  The server (-s) listens and serves connections as they come, all
 * at once, until SIGINT/SIGTERM.  Each connection is a self-contained test:
 * the client states the pattern in a 64-octet HELLO (in the MPA private data
 * of the connect, or as the first octets of a --tcp-baseline stream) and the
 * server answers with a 64-octet WELCOME (the accept's private data, or the
 * first octets back) that carries what the client needs: the STag, address
 * and length of the server's buffer for RDMA Write and Read, and the number
 * of receives it keeps posted for Sends.  A client with --qps N opens N such
 * connections, each with its own QP, and drives them all from one thread.
 *
 * Progress.  Both ends busy-poll: iwv_poll_cq() moves bytes between the
 * sockets and the QPs when the CQ is empty (inline progress, docs/architecture.md §8),
 * and the TCP baseline busy-polls non-blocking sockets the same way, so the
 * two transports pay for the same model.  Work requests are posted in lists,
 * only every Nth is signalled (its completion retires the ones before it,
 * as completions are in order on a QP), and at most --depth are in flight.
 *
 * Flow control for Sends.  iWARP has no RNR retry: a Send that finds no
 * posted receive is fatal to the connection (RFC 5040 §5.3).  The server
 * posts C receives for data (C in the WELCOME) plus two for control, and
 * reposts each as soon as it has consumed it; every K reposts it sends a
 * CREDIT message worth K.  The client never has more than C data Sends
 * beyond the credits returned.  K is chosen so that at most four CREDIT
 * messages can be in flight, so the client's receive ring is fixed.
 *
 * Telling data from control on the Send queue.  Data Sends are exactly
 * --size octets; control messages (DONE, CREDIT, RESULT) are 40 octets, or
 * 48 when --size is 40, so byte_len alone tells them apart.
 *
 * End of a test.  The client sends DONE (the messages and octets it moved)
 * once its last data work request completed; the server, which sees DONE
 * only after everything before it was placed (RFC 5040 §5.5 ordering),
 * checks the data if --verify asked for it and answers RESULT.  The client's
 * clock runs from its first post to RESULT, so the time covers delivery,
 * not just hand-over to the local socket.  Over TCP the client half-closes
 * instead of DONE and the server answers RESULT, then closes.
 *
 * Verification.  Message i of a connection carries a pseudo-random pattern
 * keyed by (connection seed, i), computable at any offset, so each end can
 * check what it received without a copy of what was sent: the server checks
 * each Send, and after DONE the last message written into each of its RDMA
 * Write slots; the client checks each Read against the server's fixed slot
 * patterns and each echo of a ping-pong.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
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
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <iwarp/iw_err.h>
#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "iw_bytes.h"
#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"
#include "iwt_opt.h"

#include "ipf_int.h"

#define IWPERF_EXIT_OK	  0
#define IWPERF_EXIT_FAIL  1
#define IWPERF_EXIT_USAGE 2

#define CTRL_SLOT	  64 /* room for a control message */

/* Limits. */
#define BATCH_MAX	    32 /* work requests per post call */
#define POLL_BATCH	    32 /* completions per poll call */
#define SIG_MAX		    64 /* signal at least every SIG_MAX work requests */
#define PP_SIG		    16 /* ping-pong: signal every PP_SIG work requests */
#define PP_SQ		    64 /* ping-pong send queue */
#define PP_RECV		    4  /* client ping-pong receive ring */
#define SRV_PP_RECV	    6  /* server Send ping-pong receive ring */
#define CLI_CTRL_RECV	    8  /* client control receive ring (CREDIT x4, RESULT) */
#define IOV_BATCH	    64 /* iovecs per sendmsg/recvmsg of the TCP baseline */
#define LAT_MAX		    (50u * 1000 * 1000) /* latency samples kept per connection */
#define CM_CHECK_NS	    1000000ull		/* server: CM events checked every ms */
#define IDLE_POLL_MS	    2
#define TCP_SETUP_TIMEOUT_S 10

/* ---------------------------------------------------------------------- */
/* Errors, time, signals                                                   */
/* ---------------------------------------------------------------------- */

/* The first runtime failure: main prints it as the one line on stderr. */
static char fail_msg[512];

int ipf_fail(const char *fmt, ...)
{
	va_list ap;

	if (fail_msg[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(fail_msg, sizeof(fail_msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* The cause is already on stderr (printed by a helper). */
static bool fail_printed;

static int fail_said(void)
{
	fail_printed = true;
	return -1;
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking poll() must return so the loop sees the flag */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ---------------------------------------------------------------------- */
/* Options                                                                 */
/* ---------------------------------------------------------------------- */

/* Connection parameters both transports derive from the options. */
struct plan {
	uint32_t nslots; /* client data slots */
	uint32_t depth;	 /* work requests (or messages) in flight */
	uint32_t sig;	 /* signal every sig-th work request */
};

static uint32_t clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/* Slots of `size` octets one connection may pin: at most `want`, at least 1. */
static uint32_t slots_for(uint32_t size, uint32_t want)
{
	return clamp_u32(IPF_MEM_MAX / size, 1, want);
}

static void plan_make(const struct ipf_opts *o, uint32_t depth, struct plan *p)
{
	if (o->pingpong) {
		p->depth = 1;
		p->nslots = 1;
		p->sig = PP_SIG;
		return;
	}
	/* a slot is refilled only after its previous message completed: slots >= depth */
	p->nslots = slots_for(o->size, depth);
	p->depth = p->nslots;
	p->sig = clamp_u32(p->depth / 4, 1, SIG_MAX);
}

/* NULL when the HELLO decoded, else why the test is refused (sent back to the client). */
static const char *hello_refusal(int err)
{
	if (err == IPF_E_SHORT || err == IPF_E_MAGIC)
		return "not an iwperf client";
	return err ? ipf_strerror(err) : NULL;
}

/* ---------------------------------------------------------------------- */
/* Sockets and buffers                                                     */
/* ---------------------------------------------------------------------- */

static int resolve(const char *host, unsigned port, bool passive, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	int rc = iwt_addr_resolve(host, (uint16_t)port, passive, ss, len);

	if (rc)
		return ipf_fail("cannot resolve '%s': %s", host ? host : "*", gai_strerror(rc));
	return 0;
}

/* Page-aligned, zeroed (so every page is touched before the clock starts). */
static uint8_t *buf_alloc(size_t len)
{
	void *p = NULL;

	if (!len)
		len = 1;
	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

static uint64_t seed_make(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ipf_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
			 ((uint64_t)getpid() << 40));
}

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
 * Non-blocking vectored receive of messages [*msg, limit) into slots
 * (message m in slot m % nslots, at most nslots messages at once).
 * Returns octets received, 0 if none were ready, -1 on error, -2 at EOF.
 */
static ssize_t rx_slots(int fd, uint8_t *buf, uint32_t nslots, uint32_t size, uint64_t *msg,
			size_t *off, uint64_t limit)
{
	struct iovec iov[IOV_BATCH];
	struct msghdr mh;
	uint64_t m = *msg;
	size_t o = *off;
	int n = 0;
	ssize_t k;

	while (m < limit && n < IOV_BATCH && m - *msg < nslots) {
		iov[n].iov_base = buf + (size_t)(m % nslots) * size + o;
		iov[n].iov_len = size - o;
		n++;
		o = 0;
		m++;
	}
	if (!n)
		return 0;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)n;
	k = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (k < 0)
		return again(errno) ? 0 : -1;
	if (k == 0)
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
/* TCP baseline: client                                                    */
/* ---------------------------------------------------------------------- */

struct tcli {
	int idx, fd;
	uint64_t seed, target;
	uint8_t *buf; /* bandwidth: nslots slots; ping-pong: ping slot then echo slot */
	uint32_t nslots, rslots;
	uint64_t tx_msg, filled;
	size_t tx_off;
	uint8_t req[IOV_BATCH * IPF_REQ_LEN];
	size_t req_len, req_off;
	uint64_t req_sent;
	uint64_t rx_msg;
	size_t rx_off;
	uint8_t resb[IPF_CTRL_LEN];
	size_t res_off;
	bool waiting, shut, done;
	uint64_t t_ping;
	struct ipf_res r;
	struct ipf_lat lat;
};

static int tc_setup(const struct ipf_opts *o, const struct plan *pl, struct tcli *c,
		    const struct sockaddr_storage *ss, socklen_t sl, uint64_t test_id)
{
	struct timeval tv = {TCP_SETUP_TIMEOUT_S, 0};
	uint8_t msg[IPF_HELLO_LEN];
	struct ipf_welcome w;
	struct ipf_hello h;
	int one = 1;
	ssize_t k;

	c->fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return ipf_fail("socket: %s", strerror(errno));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(c->fd, (const struct sockaddr *)ss, sl))
		return ipf_fail("connect to %s port %u: %s%s", o->host, o->port, strerror(errno),
				errno == ECONNREFUSED ? " (is 'iwperf -s --tcp-baseline' running?)"
						      : "");
	c->seed = ipf_mix64(o->verify ? seed_make() : 0x6977706572660000ull + (uint64_t)c->idx);
	memset(&h, 0, sizeof(h));
	h.op = (uint8_t)o->op;
	h.flags =
		IPF_HF_TCP | (o->pingpong ? IPF_HF_PINGPONG : 0) | (o->verify ? IPF_HF_VERIFY : 0);
	h.size = o->size;
	h.depth = pl->depth;
	h.qp_index = (uint16_t)c->idx;
	h.qps = (uint16_t)o->qps;
	h.seed = c->seed;
	h.test_id = test_id;
	ipf_hello_encode(&h, msg);
	if (send(c->fd, msg, sizeof(msg), MSG_NOSIGNAL) != (ssize_t)sizeof(msg))
		return ipf_fail("sending the test parameters: %s", strerror(errno));
	k = recv(c->fd, msg, sizeof(msg), MSG_WAITALL);
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
	c->nslots = pl->nslots;
	c->buf = buf_alloc((size_t)(o->pingpong ? 2 : c->nslots) * o->size);
	if (!c->buf)
		return ipf_fail("out of memory for %u x %" PRIu32 " B", c->nslots, o->size);
	if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK))
		return ipf_fail("fcntl: %s", strerror(errno));
	return 0;
}

/* The data is all out: half-close and wait for the server's RESULT. */
static int tc_finish_rx(const struct ipf_opts *o, struct tcli *c, uint64_t msgs)
{
	struct ipf_ctrl res;
	ssize_t k;

	if (!c->shut) {
		if (shutdown(c->fd, SHUT_WR))
			return ipf_fail("QP %d: shutdown: %s", c->idx, strerror(errno));
		c->shut = true;
		c->r.msgs = msgs;
		c->r.bytes = msgs * o->size;
	}
	k = recv(c->fd, c->resb + c->res_off, IPF_CTRL_LEN - c->res_off, MSG_DONTWAIT);
	if (k < 0)
		return again(errno) ? 0 : ipf_fail("QP %d: %s", c->idx, strerror(errno));
	if (k == 0)
		return ipf_fail("QP %d: the server closed the connection without a result", c->idx);
	c->res_off += (size_t)k;
	if (c->res_off < IPF_CTRL_LEN)
		return 0;
	c->r.t_end = iwt_now_ns();
	c->done = true;
	if (ipf_ctrl_decode(c->resb, IPF_CTRL_LEN, &res) || res.type != IPF_CTRL_RESULT)
		return ipf_fail("QP %d: malformed result from the server", c->idx);
	if (res.status == IPF_RES_VERIFY)
		return ipf_fail("QP %d: the server found bad data in message %" PRIu64
				" at offset %" PRIu64,
				c->idx, res.bad, res.bad_off);
	if (res.status != IPF_RES_OK)
		return ipf_fail("QP %d: the server reports: %s", c->idx,
				ipf_res_status_str(res.status));
	if (res.count != c->r.msgs)
		return ipf_fail("QP %d: the server saw %" PRIu64 " messages, the client %" PRIu64,
				c->idx, res.count, c->r.msgs);
	return 0;
}

static int tc_step_stream(const struct ipf_opts *o, struct tcli *c)
{
	struct iovec iov[IOV_BATCH];
	struct msghdr mh;
	uint64_t m = c->tx_msg;
	size_t off = c->tx_off;
	int n = 0;
	ssize_t k;

	if (c->tx_msg >= c->target)
		return tc_finish_rx(o, c, c->tx_msg);
	/* at most nslots (the depth) messages per call, so the slots are distinct */
	while (m < c->target && n < IOV_BATCH && m - c->tx_msg < c->nslots) {
		uint8_t *slot = c->buf + (size_t)(m % c->nslots) * o->size;

		if (o->verify && m >= c->filled) {
			ipf_pat_fill(slot, o->size, ipf_msg_key(c->seed, m));
			c->filled = m + 1;
		}
		iov[n].iov_base = slot + off;
		iov[n].iov_len = o->size - off;
		n++;
		off = 0;
		m++;
	}
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)n;
	k = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k < 0)
		return again(errno) ? 0 : ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	cursor_advance(&c->tx_msg, &c->tx_off, (size_t)k, o->size);
	return 0;
}

static int tc_step_read(const struct ipf_opts *o, struct tcli *c)
{
	uint64_t before = c->rx_msg;
	ssize_t k;

	if (c->rx_msg >= c->target && c->req_off == c->req_len)
		return tc_finish_rx(o, c, c->rx_msg);
	/* requests: never more than nslots (the depth) unanswered */
	if (c->req_off == c->req_len) {
		size_t nreq = 0;

		while (c->req_sent < c->target && c->req_sent - c->rx_msg < c->nslots &&
		       nreq < IOV_BATCH) {
			ipf_req_encode(c->req_sent, c->req + nreq * IPF_REQ_LEN);
			c->req_sent++;
			nreq++;
		}
		c->req_len = nreq * IPF_REQ_LEN;
		c->req_off = 0;
	}
	if (tx_rest(c->fd, c->req, c->req_len, &c->req_off))
		return ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	if (c->rx_msg >= c->req_sent)
		return 0;
	k = rx_slots(c->fd, c->buf, c->nslots, o->size, &c->rx_msg, &c->rx_off, c->req_sent);
	if (k == -1)
		return ipf_fail("QP %d: receive: %s", c->idx, strerror(errno));
	if (k == -2)
		return ipf_fail("QP %d: the server closed the connection", c->idx);
	if (o->verify)
		for (uint64_t m = before; m < c->rx_msg; m++) {
			const uint8_t *p = c->buf + (size_t)(m % c->nslots) * o->size;
			int64_t bad =
				ipf_pat_check(p, o->size, ipf_msg_key(c->seed, m % c->rslots));

			if (bad >= 0)
				return ipf_fail("QP %d: bad data in Read response %" PRIu64
						" at offset %" PRId64,
						c->idx, m, bad);
		}
	return 0;
}

static int tc_step_pingpong(const struct ipf_opts *o, struct tcli *c)
{
	uint8_t *ping = c->buf, *echo = c->buf + o->size;
	ssize_t k;

	if (!c->waiting) {
		if (c->tx_msg >= c->target)
			return tc_finish_rx(o, c, c->tx_msg);
		if (o->verify)
			ipf_pat_fill(ping, o->size, ipf_msg_key(c->seed, c->tx_msg));
		c->waiting = true;
		c->tx_off = 0;
		c->rx_off = 0;
		c->t_ping = iwt_now_ns();
	}
	if (c->tx_off < o->size && tx_rest(c->fd, ping, o->size, &c->tx_off))
		return ipf_fail("QP %d: send: %s", c->idx, strerror(errno));
	k = recv(c->fd, echo + c->rx_off, o->size - c->rx_off, MSG_DONTWAIT);
	if (k < 0)
		return again(errno) ? 0 : ipf_fail("QP %d: receive: %s", c->idx, strerror(errno));
	if (k == 0)
		return ipf_fail("QP %d: the server closed the connection", c->idx);
	c->rx_off += (size_t)k;
	if (c->rx_off < o->size)
		return 0;
	if (ipf_lat_push(&c->lat, iwt_now_ns() - c->t_ping))
		return -1;
	if (o->verify) {
		int64_t bad = ipf_pat_check(echo, o->size, ipf_msg_key(c->seed, c->tx_msg));

		if (bad >= 0)
			return ipf_fail("QP %d: bad data in echo %" PRIu64 " at offset %" PRId64,
					c->idx, c->tx_msg, bad);
	}
	c->tx_msg++;
	c->waiting = false;
	return 0;
}

/* --seconds ran out: finish the message under way, start no other. */
static void tc_stop(const struct ipf_opts *o, struct tcli *c)
{
	if (o->pingpong)
		c->target = c->tx_msg + (c->waiting ? 1 : 0);
	else if (o->op == IPF_OP_READ)
		c->target = c->req_sent;
	else
		c->target = c->tx_msg + (c->tx_off ? 1 : 0);
}

static int tcp_client(const struct ipf_opts *o)
{
	struct sockaddr_storage ss;
	struct ipf_run_info ri = {"tcp", NULL, false, "off", 0};
	struct tcli *cs;
	struct plan pl;
	uint64_t t0, deadline = 0, test_id = seed_make();
	unsigned ndone = 0, ord;
	bool stopped = false;
	socklen_t sl;
	int ret = -1;

	if (resolve(o->host, o->port, false, &ss, &sl))
		return -1;
	/* an RDMA Read has at most the ORD in flight: the TCP pattern gets the same bound */
	ord = o->iw.ord ? o->iw.ord : IWPERF_DEFAULT_ORD;
	plan_make(o, o->op == IPF_OP_READ && o->depth > ord ? ord : o->depth, &pl);
	ri.depth = pl.depth;
	cs = calloc(o->qps, sizeof(*cs));
	if (!cs)
		return ipf_fail("out of memory");
	for (unsigned i = 0; i < o->qps; i++) {
		cs[i].idx = (int)i;
		cs[i].fd = -1;
	}
	for (unsigned i = 0; i < o->qps; i++)
		if (tc_setup(o, &pl, &cs[i], &ss, sl, test_id))
			goto out;
	ipf_banner(o, pl.depth, "TCP baseline");
	t0 = iwt_now_ns();
	if (o->seconds > 0)
		deadline = t0 + (uint64_t)(o->seconds * 1e9);
	for (unsigned i = 0; i < o->qps; i++) {
		cs[i].r.t_start = t0;
		cs[i].target = o->seconds > 0 ? UINT64_MAX : o->iters;
	}
	while (ndone < o->qps) {
		if (deadline && !stopped && iwt_now_ns() >= deadline) {
			stopped = true;
			for (unsigned i = 0; i < o->qps; i++)
				tc_stop(o, &cs[i]);
		}
		ndone = 0;
		for (unsigned i = 0; i < o->qps; i++) {
			struct tcli *c = &cs[i];
			int rc;

			if (c->done) {
				ndone++;
				continue;
			}
			if (o->pingpong)
				rc = tc_step_pingpong(o, c);
			else if (o->op == IPF_OP_READ)
				rc = tc_step_read(o, c);
			else
				rc = tc_step_stream(o, c);
			if (rc)
				goto out;
		}
	}
	{
		struct ipf_res *rs = calloc(o->qps, sizeof(*rs));
		struct ipf_lat **ls = calloc(o->qps, sizeof(*ls));

		if (!rs || !ls) {
			free(rs);
			free(ls);
			ipf_fail("out of memory");
			goto out;
		}
		for (unsigned i = 0; i < o->qps; i++) {
			rs[i] = cs[i].r;
			ls[i] = &cs[i].lat;
		}
		ipf_report(o, &ri, rs, ls, o->qps);
		free(rs);
		free(ls);
	}
	ret = 0;
out:
	for (unsigned i = 0; i < o->qps; i++) {
		if (cs[i].fd >= 0)
			close(cs[i].fd);
		free(cs[i].buf);
		free(cs[i].lat.v);
	}
	free(cs);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* TCP baseline: server                                                    */
/* ---------------------------------------------------------------------- */

enum tsrv_state { TS_HELLO, TS_DATA, TS_RESULT, TS_CLOSED };

struct tsrv {
	struct tsrv *next;
	int fd;
	char peer[128];
	enum tsrv_state state;
	uint8_t hb[IPF_HELLO_LEN];
	size_t hoff;
	struct ipf_hello h;
	uint8_t *buf;
	uint32_t nslots;
	uint64_t rx_msg; /* data messages or pings received */
	size_t rx_off;
	uint8_t rq[IOV_BATCH * IPF_REQ_LEN];
	size_t rq_len;
	uint64_t req_rcvd;
	uint64_t tx_msg; /* Read responses or echoes sent */
	size_t tx_off;
	uint8_t res[IPF_CTRL_LEN];
	size_t res_off;
	struct ipf_ctrl out;
};

static void ts_note_bad(struct tsrv *s, uint8_t status, uint64_t msg, uint64_t off)
{
	if (s->out.status == IPF_RES_OK) {
		s->out.status = status;
		s->out.bad = msg;
		s->out.bad_off = off;
	}
}

static void ts_result(const struct ipf_opts *o, struct tsrv *s, uint64_t count)
{
	s->out.type = IPF_CTRL_RESULT;
	s->out.count = count;
	s->out.bytes = count * s->h.size;
	ipf_ctrl_encode(&s->out, s->res, sizeof(s->res));
	s->res_off = 0;
	s->state = TS_RESULT;
	ipf_report_served(o, "tcp", s->peer, &s->h, count, s->out.status);
}

static void ts_refuse(struct tsrv *s, const char *why)
{
	uint8_t msg[IPF_WELCOME_LEN];

	ipf_welcome_refusal(why, msg);
	/* best effort: the connection is new, its send buffer empty */
	(void)!send(s->fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL);
	fprintf(stderr, "%s: %s: refused: %s\n", PROG, s->peer, why);
	s->state = TS_CLOSED;
}

static void ts_hello(const struct ipf_opts *o, struct tsrv *s)
{
	uint8_t msg[IPF_WELCOME_LEN];
	struct ipf_welcome w;
	const char *why;
	ssize_t k;
	int rc;

	k = recv(s->fd, s->hb + s->hoff, IPF_HELLO_LEN - s->hoff, MSG_DONTWAIT);
	if (k < 0 && again(errno))
		return;
	if (k <= 0) {
		s->state = TS_CLOSED;
		return;
	}
	s->hoff += (size_t)k;
	if (s->hoff < IPF_HELLO_LEN)
		return;
	rc = ipf_hello_decode(s->hb, IPF_HELLO_LEN, &s->h);
	if (rc == IPF_E_MAGIC) {
		fprintf(stderr,
			"%s: %s: not an iwperf client (an iWARP client? this server runs "
			"--tcp-baseline)\n",
			PROG, s->peer);
		s->state = TS_CLOSED;
		return;
	}
	why = rc ? hello_refusal(rc) : NULL;
	if (!why && !(s->h.flags & IPF_HF_TCP))
		why = "this server runs --tcp-baseline; the client does not";
	if (why) {
		ts_refuse(s, why);
		return;
	}
	s->nslots = s->h.flags & IPF_HF_PINGPONG ? 1 : slots_for(s->h.size, s->h.depth);
	s->buf = buf_alloc((size_t)s->nslots * s->h.size);
	if (!s->buf) {
		ts_refuse(s, "out of memory");
		return;
	}
	if (s->h.op == IPF_OP_READ && (s->h.flags & IPF_HF_VERIFY))
		for (uint32_t i = 0; i < s->nslots; i++)
			ipf_pat_fill(s->buf + (size_t)i * s->h.size, s->h.size,
				     ipf_msg_key(s->h.seed, i));
	memset(&w, 0, sizeof(w));
	w.length = (uint64_t)s->nslots * s->h.size;
	ipf_welcome_encode(&w, msg);
	if (send(s->fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(msg)) {
		s->state = TS_CLOSED;
		return;
	}
	s->state = TS_DATA;
}

static void ts_data_stream(struct tsrv *s)
{
	uint64_t before = s->rx_msg;
	ssize_t k;

	k = rx_slots(s->fd, s->buf, s->nslots, s->h.size, &s->rx_msg, &s->rx_off, UINT64_MAX);
	if (s->h.flags & IPF_HF_VERIFY)
		for (uint64_t m = before; m < s->rx_msg; m++) {
			const uint8_t *p = s->buf + (size_t)(m % s->nslots) * s->h.size;
			int64_t bad = ipf_pat_check(p, s->h.size, ipf_msg_key(s->h.seed, m));

			if (bad >= 0)
				ts_note_bad(s, IPF_RES_VERIFY, m, (uint64_t)bad);
		}
	if (k == -1) {
		s->state = TS_CLOSED;
	} else if (k == -2) {
		if (s->rx_off)
			ts_note_bad(s, IPF_RES_PROTO, s->rx_msg, s->rx_off);
		s->state = TS_RESULT; /* caller builds RESULT */
	}
}

static void ts_data_read(struct tsrv *s)
{
	struct iovec iov[IOV_BATCH];
	struct msghdr mh;
	ssize_t k;
	int n = 0;

	k = recv(s->fd, s->rq + s->rq_len, sizeof(s->rq) - s->rq_len, MSG_DONTWAIT);
	if (k == 0) {
		if (s->rq_len || s->tx_msg < s->req_rcvd)
			ts_note_bad(s, IPF_RES_PROTO, s->req_rcvd, 0);
		s->state = TS_RESULT;
		return;
	}
	if (k < 0 && !again(errno)) {
		s->state = TS_CLOSED;
		return;
	}
	if (k > 0) {
		size_t used = 0;

		s->rq_len += (size_t)k;
		for (; used + IPF_REQ_LEN <= s->rq_len; used += IPF_REQ_LEN) {
			if (ipf_req_decode(s->rq + used) != s->req_rcvd)
				ts_note_bad(s, IPF_RES_PROTO, s->req_rcvd, 0);
			s->req_rcvd++;
		}
		memmove(s->rq, s->rq + used, s->rq_len - used);
		s->rq_len -= used;
	}
	{
		uint64_t m = s->tx_msg;
		size_t off = s->tx_off;

		while (m < s->req_rcvd && n < IOV_BATCH) {
			iov[n].iov_base = s->buf + (size_t)(m % s->nslots) * s->h.size + off;
			iov[n].iov_len = s->h.size - off;
			n++;
			off = 0;
			m++;
		}
	}
	if (!n)
		return;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)n;
	k = sendmsg(s->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k < 0) {
		if (!again(errno))
			s->state = TS_CLOSED;
		return;
	}
	cursor_advance(&s->tx_msg, &s->tx_off, (size_t)k, s->h.size);
}

static void ts_data_pingpong(struct tsrv *s)
{
	ssize_t k;

	if (s->rx_off == s->h.size) {
		/* echo the ping back from where it landed */
		if (tx_rest(s->fd, s->buf, s->h.size, &s->tx_off)) {
			s->state = TS_CLOSED;
			return;
		}
		if (s->tx_off < s->h.size)
			return;
		s->rx_off = 0;
		s->tx_off = 0;
		s->rx_msg++;
	}
	k = recv(s->fd, s->buf + s->rx_off, s->h.size - s->rx_off, MSG_DONTWAIT);
	if (k < 0) {
		if (!again(errno))
			s->state = TS_CLOSED;
		return;
	}
	if (k == 0) {
		if (s->rx_off)
			ts_note_bad(s, IPF_RES_PROTO, s->rx_msg, s->rx_off);
		s->state = TS_RESULT;
		return;
	}
	s->rx_off += (size_t)k;
	if (s->rx_off == s->h.size && (s->h.flags & IPF_HF_VERIFY)) {
		int64_t bad = ipf_pat_check(s->buf, s->h.size, ipf_msg_key(s->h.seed, s->rx_msg));

		if (bad >= 0)
			ts_note_bad(s, IPF_RES_VERIFY, s->rx_msg, (uint64_t)bad);
	}
}

static void ts_step(const struct ipf_opts *o, struct tsrv *s)
{
	switch (s->state) {
	case TS_HELLO:
		ts_hello(o, s);
		return;
	case TS_DATA:
		if (s->h.flags & IPF_HF_PINGPONG)
			ts_data_pingpong(s);
		else if (s->h.op == IPF_OP_READ)
			ts_data_read(s);
		else
			ts_data_stream(s);
		if (s->state == TS_RESULT)
			ts_result(o, s,
				  s->h.flags & IPF_HF_PINGPONG ? s->rx_msg
				  : s->h.op == IPF_OP_READ     ? s->tx_msg
							       : s->rx_msg);
		return;
	case TS_RESULT:
		if (tx_rest(s->fd, s->res, IPF_CTRL_LEN, &s->res_off) || s->res_off == IPF_CTRL_LEN)
			s->state = TS_CLOSED;
		return;
	case TS_CLOSED:
		return;
	}
}

static int listen_tcp(const struct ipf_opts *o, int *fd_out)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1;
	char where[128];

	if (resolve(o->bind_addr, o->port, true, &ss, &sl))
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ipf_fail("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 128)) {
		ipf_fail("cannot listen on %s port %u: %s", o->bind_addr, o->port, strerror(errno));
		close(fd);
		return -1;
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	iwt_addr_format((struct sockaddr *)&ss, where, sizeof(where));
	ipf_report_listening(o, where, "TCP baseline");
	*fd_out = fd;
	return 0;
}

static void ts_accept(int lfd, struct tsrv **list)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct tsrv *s;
		int one = 1;
		int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a transient failure the next round retries */
		s = calloc(1, sizeof(*s));
		if (!s) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		s->fd = fd;
		iwt_addr_format((struct sockaddr *)&ss, s->peer, sizeof(s->peer));
		s->next = *list;
		*list = s;
	}
}

static int tcp_server(const struct ipf_opts *o)
{
	struct tsrv *list = NULL;
	uint64_t last_accept = 0;
	int lfd = -1;

	if (listen_tcp(o, &lfd))
		return -1;
	while (!stop_flag) {
		bool setup = false;
		uint64_t now;

		if (!list) {
			struct pollfd pfd = {lfd, POLLIN, 0};

			poll(&pfd, 1, 200);
		}
		for (struct tsrv *s = list; s; s = s->next)
			setup |= s->state == TS_HELLO;
		now = iwt_now_ns();
		/* busy connections: look for new ones only every millisecond */
		if (!list || setup || now - last_accept >= CM_CHECK_NS) {
			ts_accept(lfd, &list);
			last_accept = now;
		}
		for (struct tsrv **pp = &list; *pp;) {
			struct tsrv *s = *pp;

			ts_step(o, s);
			if (s->state == TS_CLOSED) {
				*pp = s->next;
				close(s->fd);
				free(s->buf);
				free(s);
			} else {
				pp = &s->next;
			}
		}
	}
	while (list) {
		struct tsrv *s = list;

		list = s->next;
		close(s->fd);
		free(s->buf);
		free(s);
	}
	close(lfd);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* iWARP: shared                                                           */
/* ---------------------------------------------------------------------- */

/* wr_id: what a work request is (top octet) and its index or slot. */
enum wr_kind { WK_DATA = 1, WK_CTRL, WK_RECV, WK_ECHO, WK_PPW };
#define WR_ID(kind, val) (((uint64_t)(kind) << 56) | ((uint64_t)(val) & ((1ull << 56) - 1)))
#define WR_KIND(id)	 ((unsigned)((id) >> 56))
#define WR_VAL(id)	 ((id) & ((1ull << 56) - 1))
#define RESULT_WR	 1 /* WK_CTRL value of the server's RESULT */

static const char *wr_kind_str(unsigned k, int op)
{
	switch (k) {
	case WK_DATA:
		return op == IPF_OP_WRITE ? "RDMA Write" : op == IPF_OP_READ ? "RDMA Read" : "Send";
	case WK_CTRL:
		return "control Send";
	case WK_RECV:
		return "Receive";
	case WK_ECHO:
		return "echo Send";
	case WK_PPW:
		return "RDMA Write";
	default:
		return "work request";
	}
}

static void wc_describe(const struct iwv_wc *wc, int op, char *buf, size_t len)
{
	if (wc->vendor_err)
		snprintf(buf, len, "%s completed with %s (%s)", wr_kind_str(WR_KIND(wc->wr_id), op),
			 iwv_wc_status_str(wc->status), iwv_strerror(-(int)wc->vendor_err));
	else
		snprintf(buf, len, "%s completed with %s", wr_kind_str(WR_KIND(wc->wr_id), op),
			 iwv_wc_status_str(wc->status));
}

static size_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static int post_recv_slot(struct iwv_qp *qp, const struct iwv_mr *mr, uint8_t *ring, uint32_t rslot,
			  uint32_t slot)
{
	struct iwv_sge sge = {(uintptr_t)(ring + (size_t)slot * rslot), rslot, mr->lkey};
	struct iwv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WR_ID(WK_RECV, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return iwv_post_recv(qp, &wr, &bad);
}

/* One signalled Send of len octets at p (inline when small enough). */
static int post_send1(struct iwv_qp *qp, const struct iwv_mr *mr, const uint8_t *p, uint32_t len,
		      uint64_t wr_id, uint32_t max_inline)
{
	struct iwv_sge sge = {(uintptr_t)p, len, mr->lkey};
	struct iwv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IWV_WR_SEND;
	wr.send_flags = IWV_SEND_SIGNALED | (len <= max_inline ? IWV_SEND_INLINE : 0);
	return iwv_post_send(qp, &wr, &bad);
}

static const void *conn_pd(const struct iwcm_conn_param *p, size_t *len)
{
	*len = p->private_data_len16 ? p->private_data_len16 : p->private_data_len;
	return p->private_data;
}

/* ---------------------------------------------------------------------- */
/* iWARP: client                                                           */
/* ---------------------------------------------------------------------- */

enum qstate { Q_NEW, Q_ADDR, Q_ROUTE, Q_CONNECTING, Q_RUN, Q_WAIT_RESULT, Q_DONE, Q_CLOSED };

struct iqp {
	int idx;
	struct iwcm_id *id;
	struct iwv_cq *cq;
	struct iwv_qp *qp;
	struct iwv_mr *mr;
	uint8_t *mem;
	uint8_t *data; /* bandwidth: nslots slots; ping-pong: the ping */
	uint8_t *rx;   /* RDMA Write ping-pong: where the server writes */
	uint8_t *recv; /* receive ring */
	uint32_t nrecv, rslot;
	uint8_t *ctl; /* DONE */
	enum qstate state;
	struct ipf_welcome w;
	uint32_t nslots, rslots; /* ours, the server's */
	uint64_t seed, target, posted, completed, verified;
	uint32_t depth, sig, credits, max_inline;
	uint64_t iter; /* ping-pong round trips completed */
	bool waiting;
	uint64_t t_ping;
	bool crc, mtx, mrx;
	struct ipf_res r;
	struct ipf_lat lat;
};

struct icli {
	const struct ipf_opts *o;
	struct plan pl;
	struct iwv_context *ctx;
	struct iwv_pd *pd;
	struct iwcm_event_channel *ch;
	struct iqp *q;
	struct sockaddr_storage dst;
	uint64_t test_id;
};

static int ic_event(struct icli *c, struct iwcm_event *ev)
{
	const struct ipf_opts *o = c->o;
	struct iqp *q = ev->id ? ev->id->context : NULL;
	/* iw_err is the precise cause (IW_ESYS(errno) when the socket failed) */
	const char *err = ev->iw_err   ? iwv_strerror(ev->iw_err)
			  : ev->status ? strerror(-ev->status)
				       : "no cause given";
	const void *pd;
	size_t pdlen;

	if (!q)
		return 0;
	switch (ev->event) {
	case IWCM_EVENT_ADDR_RESOLVED:
		q->state = Q_ADDR;
		return 0;
	case IWCM_EVENT_ROUTE_RESOLVED:
		q->state = Q_ROUTE;
		return 0;
	case IWCM_EVENT_ESTABLISHED:
		pd = conn_pd(&ev->param.conn, &pdlen);
		if (!pd || ipf_welcome_decode(pd, pdlen, &q->w) || q->w.status)
			return ipf_fail(
				"QP %d: the server's accept carries no iwperf answer (is it an "
				"iwperf server?)",
				q->idx);
		q->crc = ev->mpa.crc;
		q->mtx = ev->mpa.markers_tx;
		q->mrx = ev->mpa.markers_rx;
		q->state = Q_RUN;
		return 0;
	case IWCM_EVENT_REJECTED:
		pd = conn_pd(&ev->param.conn, &pdlen);
		if (pd && !ipf_welcome_decode(pd, pdlen, &q->w) && q->w.status)
			return ipf_fail("the server refused the test: %s", q->w.reason);
		return ipf_fail(
			"connection to %s port %u refused: %s (is 'iwperf -s' running there?)",
			o->host, o->port, err);
	case IWCM_EVENT_UNREACHABLE:
		return ipf_fail("%s port %u unreachable: %s", o->host, o->port, err);
	case IWCM_EVENT_CONNECT_ERROR:
		return ipf_fail(
			"QP %d: iWARP connection setup failed: %s (is the server running with "
			"the same --tcp-baseline setting?)",
			q->idx, err);
	case IWCM_EVENT_ADDR_ERROR:
	case IWCM_EVENT_ROUTE_ERROR:
		return ipf_fail("QP %d: cannot resolve %s: %s", q->idx, o->host, err);
	case IWCM_EVENT_DISCONNECTED:
		if (q->state < Q_DONE)
			return ipf_fail("QP %d: the connection closed before the test ended",
					q->idx);
		q->state = Q_CLOSED;
		return 0;
	default:
		return 0;
	}
}

/* Wait for CM events until q (or every QP, q == NULL) reached `st`. */
static int ic_wait(struct icli *c, struct iqp *q, enum qstate st)
{
	for (;;) {
		struct iwcm_event *ev;
		bool ok = true;
		int rc;

		if (q) {
			ok = q->state >= st;
		} else {
			for (unsigned i = 0; i < c->o->qps; i++)
				if (c->q[i].state < st)
					ok = false;
		}
		if (ok)
			return 0;
		if (iwcm_get_cm_event(c->ch, &ev))
			return ipf_fail("waiting for a connection event: %s", strerror(errno));
		rc = ic_event(c, ev);
		iwcm_ack_cm_event(ev);
		if (rc)
			return -1;
	}
}

static int ic_setup_qp(struct icli *c, struct iqp *q)
{
	const struct ipf_opts *o = c->o;
	struct iwv_qp_init_attr attr;
	struct iwcm_conn_param cp;
	uint8_t hb[IPF_HELLO_LEN];
	struct ipf_hello h;
	size_t data_len, rx_len = 0, ring_len, total;
	uint32_t sq;

	if (iwcm_create_id(c->ch, &q->id, q, IWCM_PS_TCP))
		return ipf_fail("iwcm_create_id: %s", strerror(errno));
	if (iwt_opt_apply(&o->iw, q->id))
		return ipf_fail("iwcm_set_options: %s", strerror(errno));
	if (iwcm_resolve_addr(q->id, NULL, (struct sockaddr *)&c->dst, 2000))
		return ipf_fail("iwcm_resolve_addr: %s", strerror(errno));
	if (ic_wait(c, q, Q_ADDR))
		return -1;
	if (iwcm_resolve_route(q->id, 2000))
		return ipf_fail("iwcm_resolve_route: %s", strerror(errno));
	if (ic_wait(c, q, Q_ROUTE))
		return -1;

	q->nslots = c->pl.nslots;
	data_len = (size_t)q->nslots * o->size;
	if (o->pingpong && o->op == IPF_OP_WRITE)
		rx_len = o->size;
	if (o->pingpong && o->op == IPF_OP_SEND) {
		q->nrecv = PP_RECV;
		q->rslot = o->size > CTRL_SLOT ? o->size : CTRL_SLOT;
	} else {
		q->nrecv = CLI_CTRL_RECV;
		q->rslot = CTRL_SLOT;
	}
	ring_len = (size_t)q->nrecv * q->rslot;
	total = align64(data_len) + align64(rx_len) + align64(ring_len) + CTRL_SLOT;
	q->mem = buf_alloc(total);
	if (!q->mem)
		return ipf_fail("out of memory for %zu B of buffers", total);
	q->data = q->mem;
	q->rx = q->data + align64(data_len);
	q->recv = q->rx + align64(rx_len);
	q->ctl = q->recv + align64(ring_len);
	q->mr = iwv_reg_mr(c->pd, q->mem, total, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE);
	if (!q->mr)
		return ipf_fail("iwv_reg_mr of %zu B: %s", total, strerror(errno));
	sq = o->pingpong ? PP_SQ : c->pl.depth + 4;
	q->cq = iwv_create_cq(c->ctx, (int)(sq + q->nrecv + 4), q, NULL, 0);
	if (!q->cq)
		return ipf_fail("iwv_create_cq: %s", strerror(errno));
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = q;
	attr.send_cq = q->cq;
	attr.recv_cq = q->cq;
	attr.cap.max_send_wr = sq;
	attr.cap.max_recv_wr = q->nrecv;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = 256;
	attr.qp_type = IWV_QPT_RC;
	if (iwcm_create_qp(q->id, c->pd, &attr))
		return ipf_fail("iwcm_create_qp: %s", strerror(errno));
	q->qp = q->id->qp;
	q->max_inline = attr.cap.max_inline_data;
	for (uint32_t i = 0; i < q->nrecv; i++)
		if (post_recv_slot(q->qp, q->mr, q->recv, q->rslot, i))
			return ipf_fail("iwv_post_recv failed");

	q->seed = ipf_mix64(seed_make() ^ (uint64_t)q->idx);
	memset(&h, 0, sizeof(h));
	h.op = (uint8_t)o->op;
	h.flags = (o->pingpong ? IPF_HF_PINGPONG : 0) | (o->verify ? IPF_HF_VERIFY : 0);
	h.size = o->size;
	h.depth = c->pl.depth;
	h.qp_index = (uint16_t)q->idx;
	h.qps = (uint16_t)o->qps;
	h.seed = q->seed;
	h.addr = (uintptr_t)q->rx;
	h.rkey = rx_len ? q->mr->rkey : 0;
	h.length = (uint32_t)rx_len;
	h.test_id = c->test_id;
	ipf_hello_encode(&h, hb);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = hb;
	cp.private_data_len = sizeof(hb);
	iwt_opt_conn_param(&o->iw, &cp);
	if (iwcm_connect(q->id, &cp))
		return ipf_fail("iwcm_connect: %s", strerror(errno));
	q->state = Q_CONNECTING;
	return 0;
}

/* After ESTABLISHED: what the server offered decides the rest. */
static int ic_ready(struct icli *c, struct iqp *q)
{
	const struct ipf_opts *o = c->o;

	q->depth = c->pl.depth;
	if ((o->op == IPF_OP_WRITE || o->op == IPF_OP_READ) && !o->pingpong) {
		q->rslots = (uint32_t)(q->w.length / o->size);
		if (!q->rslots || !q->w.rkey)
			return ipf_fail("QP %d: the server offered no buffer", q->idx);
	}
	if (o->pingpong && o->op != IPF_OP_SEND && (q->w.length < o->size || !q->w.rkey))
		return ipf_fail("QP %d: the server offered no buffer", q->idx);
	if (o->op == IPF_OP_READ && !o->pingpong) {
		struct iwv_qp_attr qa;
		struct iwv_qp_init_attr ia;

		/* Reads beyond the ORD only wait in the send queue: --depth means in flight */
		if (!iwv_query_qp(q->qp, &qa, IWV_QP_MAX_QP_RD_ATOMIC, &ia) && qa.max_rd_atomic &&
		    qa.max_rd_atomic < q->depth)
			q->depth = qa.max_rd_atomic;
	}
	if (o->op == IPF_OP_SEND && !o->pingpong) {
		if (!q->w.credits || !q->w.credit_batch || q->w.credit_batch > q->w.credits ||
		    q->w.credits / q->w.credit_batch > CLI_CTRL_RECV - 2)
			return ipf_fail("QP %d: the server's flow-control offer is unusable",
					q->idx);
		q->credits = q->w.credits;
	}
	q->sig = clamp_u32(q->depth / 4, 1, SIG_MAX);
	return 0;
}

static int ic_post_done(struct icli *c, struct iqp *q, uint64_t count)
{
	struct ipf_ctrl d;

	memset(&d, 0, sizeof(d));
	d.type = IPF_CTRL_DONE;
	d.count = count;
	d.bytes = count * c->o->size;
	ipf_ctrl_encode(&d, q->ctl, ipf_ctrl_len(c->o->size));
	if (post_send1(q->qp, q->mr, q->ctl, ipf_ctrl_len(c->o->size), WR_ID(WK_CTRL, 0),
		       q->max_inline))
		return ipf_fail("QP %d: posting DONE failed", q->idx);
	q->r.msgs = count;
	q->r.bytes = count * c->o->size;
	q->state = Q_WAIT_RESULT;
	return 0;
}

static int ic_post_bw(struct icli *c, struct iqp *q)
{
	const struct ipf_opts *o = c->o;
	struct iwv_send_wr wr[BATCH_MAX], *bad;
	struct iwv_sge sge[BATCH_MAX];

	while (q->posted < q->target) {
		uint64_t inflight = q->posted - q->completed;
		uint64_t room = q->depth > inflight ? q->depth - inflight : 0;
		uint64_t n;
		int rc;

		if (o->op == IPF_OP_SEND && room > q->credits)
			room = q->credits;
		if (room > q->target - q->posted)
			room = q->target - q->posted;
		if (room > BATCH_MAX)
			room = BATCH_MAX;
		if (!room)
			return 0;
		for (uint64_t i = 0; i < room; i++) {
			uint64_t seq = q->posted + i;
			uint8_t *p = q->data + (size_t)(seq % q->nslots) * o->size;

			if (o->verify && o->op != IPF_OP_READ)
				ipf_pat_fill(p, o->size, ipf_msg_key(q->seed, seq));
			sge[i].addr = (uintptr_t)p;
			sge[i].length = o->size;
			sge[i].lkey = q->mr->lkey;
			memset(&wr[i], 0, sizeof(wr[i]));
			wr[i].wr_id = WR_ID(WK_DATA, seq);
			wr[i].next = i + 1 < room ? &wr[i + 1] : NULL;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			if ((seq + 1) % q->sig == 0 || seq + 1 == q->target)
				wr[i].send_flags |= IWV_SEND_SIGNALED;
			switch (o->op) {
			case IPF_OP_WRITE:
				wr[i].opcode = IWV_WR_RDMA_WRITE;
				break;
			case IPF_OP_READ:
				wr[i].opcode = IWV_WR_RDMA_READ;
				break;
			default:
				wr[i].opcode = IWV_WR_SEND;
				break;
			}
			if (o->op != IPF_OP_READ && o->size <= q->max_inline)
				wr[i].send_flags |= IWV_SEND_INLINE;
			if (o->op != IPF_OP_SEND) {
				wr[i].wr.rdma.remote_addr =
					q->w.addr + (seq % q->rslots) * (uint64_t)o->size;
				wr[i].wr.rdma.rkey = q->w.rkey;
			}
		}
		rc = iwv_post_send(q->qp, wr, &bad);
		n = rc ? (uint64_t)(bad - wr) : room;
		if (rc && rc != ENOMEM)
			return ipf_fail("QP %d: iwv_post_send: %s", q->idx, strerror(rc));
		q->posted += n;
		if (o->op == IPF_OP_SEND)
			q->credits -= (uint32_t)n;
		if (rc)
			return 0; /* send queue full: after the next completions */
	}
	return 0;
}

static int ic_post_ping(struct icli *c, struct iqp *q)
{
	const struct ipf_opts *o = c->o;
	struct iwv_send_wr wr, *bad;
	struct iwv_sge sge;
	uint8_t *p = q->data;
	int rc;

	if (o->verify && o->op != IPF_OP_READ)
		ipf_pat_fill(p, o->op == IPF_OP_WRITE ? o->size - 1 : o->size,
			     ipf_msg_key(q->seed, q->iter));
	if (o->op == IPF_OP_WRITE)
		p[o->size - 1] = ipf_pp_flag(q->iter);
	sge.addr = (uintptr_t)p;
	sge.length = o->size;
	sge.lkey = q->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WR_ID(WK_DATA, q->iter);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = o->op == IPF_OP_WRITE  ? IWV_WR_RDMA_WRITE
		    : o->op == IPF_OP_READ ? IWV_WR_RDMA_READ
					   : IWV_WR_SEND;
	/* a Read is its own round trip: its completion is the measurement */
	if (o->op == IPF_OP_READ || (q->iter + 1) % PP_SIG == 0 || q->iter + 1 == q->target)
		wr.send_flags |= IWV_SEND_SIGNALED;
	if (o->op != IPF_OP_READ && o->size <= q->max_inline)
		wr.send_flags |= IWV_SEND_INLINE;
	if (o->op != IPF_OP_SEND) {
		wr.wr.rdma.remote_addr = q->w.addr;
		wr.wr.rdma.rkey = q->w.rkey;
	}
	q->t_ping = iwt_now_ns();
	rc = iwv_post_send(q->qp, &wr, &bad);
	if (rc == ENOMEM)
		return 0; /* unsignalled ones still queued: after the next completion */
	if (rc)
		return ipf_fail("QP %d: iwv_post_send: %s", q->idx, strerror(rc));
	q->waiting = true;
	return 0;
}

/* A ping-pong round trip ended with `reply` (the echo, the Read data). */
static int ic_pong(struct icli *c, struct iqp *q, const uint8_t *reply, uint64_t t)
{
	const struct ipf_opts *o = c->o;

	if (ipf_lat_push(&q->lat, t - q->t_ping))
		return -1;
	if (o->verify) {
		uint64_t key = o->op == IPF_OP_READ ? ipf_msg_key(q->seed, 0)
						    : ipf_msg_key(q->seed, q->iter);
		size_t len = o->op == IPF_OP_WRITE ? o->size - 1 : o->size;
		int64_t bad = ipf_pat_check(reply, len, key);

		if (bad >= 0)
			return ipf_fail("QP %d: bad data in reply %" PRIu64 " at offset %" PRId64,
					q->idx, q->iter, bad);
	}
	q->iter++;
	q->waiting = false;
	return 0;
}

static int ic_wc(struct icli *c, struct iqp *q, const struct iwv_wc *wc)
{
	const struct ipf_opts *o = c->o;
	unsigned kind = WR_KIND(wc->wr_id);
	uint64_t val = WR_VAL(wc->wr_id);
	char what[160];

	if (wc->status == IWV_WC_WR_FLUSH_ERR)
		return ipf_fail("QP %d: the connection to the server was lost (%s)", q->idx,
				wc->vendor_err ? iwv_strerror(-(int)wc->vendor_err) : "flushed");
	if (wc->status != IWV_WC_SUCCESS) {
		wc_describe(wc, o->op, what, sizeof(what));
		return ipf_fail("QP %d: %s", q->idx, what);
	}
	if (kind == WK_DATA) {
		if (o->pingpong) {
			if (o->op == IPF_OP_READ)
				return ic_pong(c, q, q->data, iwt_now_ns());
			return 0;
		}
		q->completed = val + 1;
		if (o->op == IPF_OP_READ && o->verify)
			for (; q->verified < q->completed; q->verified++) {
				uint64_t m = q->verified;
				const uint8_t *p = q->data + (size_t)(m % q->nslots) * o->size;
				int64_t bad = ipf_pat_check(p, o->size,
							    ipf_msg_key(q->seed, m % q->rslots));

				if (bad >= 0)
					return ipf_fail("QP %d: bad data in RDMA Read %" PRIu64
							" at offset %" PRId64,
							q->idx, m, bad);
			}
		return 0;
	}
	if (kind == WK_RECV) {
		const uint8_t *p = q->recv + (size_t)val * q->rslot;
		struct ipf_ctrl m;

		if (o->op == IPF_OP_SEND && o->pingpong && wc->byte_len == o->size) {
			if (ic_pong(c, q, p, iwt_now_ns()))
				return -1;
		} else if (ipf_ctrl_decode(p, wc->byte_len, &m)) {
			return ipf_fail("QP %d: unexpected %" PRIu32
					"-octet message from the server",
					q->idx, wc->byte_len);
		} else if (m.type == IPF_CTRL_CREDIT) {
			q->credits += (uint32_t)m.count;
		} else if (m.type == IPF_CTRL_RESULT) {
			q->r.t_end = iwt_now_ns();
			q->state = Q_DONE;
			if (m.status == IPF_RES_VERIFY)
				return ipf_fail(
					"QP %d: the server found bad data in message %" PRIu64
					" at offset %" PRIu64,
					q->idx, m.bad, m.bad_off);
			if (m.status != IPF_RES_OK)
				return ipf_fail("QP %d: the server reports: %s (it saw %" PRIu64
						" messages, the client sent %" PRIu64 ")",
						q->idx, ipf_res_status_str(m.status), m.count,
						q->r.msgs);
			return 0;
		} else {
			return ipf_fail("QP %d: unexpected control message from the server",
					q->idx);
		}
		if (post_recv_slot(q->qp, q->mr, q->recv, q->rslot, (uint32_t)val))
			return ipf_fail("QP %d: iwv_post_recv failed", q->idx);
	}
	return 0;
}

static int ic_step(struct icli *c, struct iqp *q)
{
	const struct ipf_opts *o = c->o;
	struct iwv_wc wc[POLL_BATCH];
	int n = iwv_poll_cq(q->cq, POLL_BATCH, wc);

	if (n < 0)
		return ipf_fail("QP %d: iwv_poll_cq: %s", q->idx, strerror(-n));
	for (int i = 0; i < n; i++)
		if (ic_wc(c, q, &wc[i]))
			return -1;
	if (q->state != Q_RUN)
		return 0;
	if (o->pingpong) {
		if (q->waiting && o->op == IPF_OP_WRITE &&
		    __atomic_load_n(&q->rx[o->size - 1], __ATOMIC_ACQUIRE) ==
			    ipf_pp_flag(q->iter)) {
			if (ic_pong(c, q, q->rx, iwt_now_ns()))
				return -1;
		}
		if (!q->waiting && q->iter < q->target)
			return ic_post_ping(c, q);
		if (!q->waiting && q->iter >= q->target)
			return ic_post_done(c, q, q->iter);
		return 0;
	}
	if (ic_post_bw(c, q))
		return -1;
	if (q->completed >= q->target && q->posted == q->completed)
		return ic_post_done(c, q, q->completed);
	return 0;
}

/* --seconds ran out: end at the next signalled work request (or ping). */
static void ic_stop(struct iqp *q, bool pingpong)
{
	uint64_t t;

	if (pingpong) {
		t = q->iter + (q->waiting ? 1 : 0);
	} else {
		/* the work request at posted - 1 was unsignalled unless posted % sig == 0 */
		t = (q->posted + q->sig - 1) / q->sig * q->sig;
	}
	if (t < q->target)
		q->target = t;
}

static void ic_teardown(struct icli *c)
{
	for (unsigned i = 0; c->q && i < c->o->qps; i++) {
		struct iqp *q = &c->q[i];

		if (q->id) {
			if (q->id->qp)
				iwcm_destroy_qp(q->id);
			iwcm_destroy_id(q->id);
		}
		if (q->cq)
			iwv_destroy_cq(q->cq);
		if (q->mr)
			iwv_dereg_mr(q->mr);
		free(q->mem);
		free(q->lat.v);
	}
	free(c->q);
	if (c->ch)
		iwcm_destroy_event_channel(c->ch);
	if (c->pd)
		iwv_dealloc_pd(c->pd);
	if (c->ctx)
		iwv_close_device(c->ctx);
}

static int iwarp_client(const struct ipf_opts *o)
{
	struct icli c;
	struct ipf_run_info ri = {"iwarp", NULL, false, "off", 0};
	socklen_t sl;
	uint64_t t0, deadline = 0;
	bool stopped = false;
	unsigned ndone = 0;
	int ret = -1;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.test_id = seed_make();
	plan_make(o, o->depth, &c.pl);
	if (resolve(o->host, o->port, false, &c.dst, &sl))
		return -1;
	c.ctx = iwt_opt_open(&o->iw, PROG);
	if (!c.ctx)
		return fail_said(); /* iwt_opt_open() printed why */
	c.pd = iwv_alloc_pd(c.ctx);
	c.ch = iwcm_create_event_channel_ctx(c.ctx);
	c.q = calloc(o->qps, sizeof(*c.q));
	if (!c.pd || !c.ch || !c.q) {
		ipf_fail("cannot set up the iWARP device: %s", strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < o->qps; i++)
		c.q[i].idx = (int)i;
	for (unsigned i = 0; i < o->qps; i++)
		if (ic_setup_qp(&c, &c.q[i]))
			goto out;
	if (ic_wait(&c, NULL, Q_RUN))
		goto out;
	for (unsigned i = 0; i < o->qps; i++)
		if (ic_ready(&c, &c.q[i]))
			goto out;

	/*
	 * An initiator holds its first FPDU for --first-fpdu-delay after the
	 * MPA Reply (a Linux siw start-up race): connection set-up, not data
	 * transfer, so it stays out of the measurement.
	 */
	{
		uint64_t until = iwt_now_ns() + (o->iw.cm.first_fpdu_delay_ms + 1) * 1000000ull;

		while (iwt_now_ns() < until)
			for (unsigned i = 0; i < o->qps; i++) {
				struct iwv_wc wc[8];
				int n = iwv_poll_cq(c.q[i].cq, 8, wc);

				for (int k = 0; k < n; k++)
					if (ic_wc(&c, &c.q[i], &wc[k]))
						goto out;
			}
	}
	ri.engine = iwv_context_engine_name(c.ctx);
	ri.crc = c.q[0].crc;
	ri.markers = ipf_markers_str(c.q[0].mtx, c.q[0].mrx);
	ri.depth = c.q[0].depth;
	if (!o->json && !o->quiet) {
		char how[200], d[128];

		iwt_opt_describe(&o->iw, d, sizeof(d));
		snprintf(how, sizeof(how), "iWARP %s; negotiated CRC %s, markers %s; engine %s", d,
			 ri.crc ? "on" : "off", ri.markers, ri.engine);
		ipf_banner(o, ri.depth, how);
	}

	t0 = iwt_now_ns();
	if (o->seconds > 0)
		deadline = t0 + (uint64_t)(o->seconds * 1e9);
	for (unsigned i = 0; i < o->qps; i++) {
		c.q[i].r.t_start = t0;
		c.q[i].target = o->seconds > 0 ? UINT64_MAX : o->iters;
	}
	while (ndone < o->qps) {
		if (deadline && !stopped && iwt_now_ns() >= deadline) {
			stopped = true;
			for (unsigned i = 0; i < o->qps; i++)
				ic_stop(&c.q[i], o->pingpong);
		}
		ndone = 0;
		for (unsigned i = 0; i < o->qps; i++) {
			struct iqp *q = &c.q[i];

			if (q->state == Q_DONE) {
				ndone++;
				continue;
			}
			if (ic_step(&c, q))
				goto out;
		}
	}

	/* graceful close: DISCONNECTED once both FINs went by */
	for (unsigned i = 0; i < o->qps; i++)
		if (iwcm_disconnect(c.q[i].id))
			c.q[i].state = Q_CLOSED;
	if (ic_wait(&c, NULL, Q_CLOSED))
		goto out;
	{
		struct ipf_res *rs = calloc(o->qps, sizeof(*rs));
		struct ipf_lat **ls = calloc(o->qps, sizeof(*ls));

		if (!rs || !ls) {
			free(rs);
			free(ls);
			ipf_fail("out of memory");
			goto out;
		}
		for (unsigned i = 0; i < o->qps; i++) {
			rs[i] = c.q[i].r;
			ls[i] = &c.q[i].lat;
		}
		ipf_report(o, &ri, rs, ls, o->qps);
		free(rs);
		free(ls);
	}
	ret = 0;
out:
	ic_teardown(&c);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* iWARP: server                                                           */
/* ---------------------------------------------------------------------- */

enum sstate { SS_ACCEPTING, SS_RUN, SS_RESULT_SENT, SS_CLOSING };

struct isess {
	struct isess *next;
	struct iwcm_id *id;
	char peer[128];
	struct ipf_hello h;
	enum sstate state;
	bool dead;     /* DISCONNECTED (or never accepted): free after the event is acked */
	bool finished; /* RESULT posted: a disconnect now is the normal end */
	bool reported; /* an error line was printed already */
	struct iwv_cq *cq;
	struct iwv_mr *mr;
	uint8_t *mem;
	uint8_t *data; /* RDMA Write/Read target slots; ping-pong: the one slot */
	uint32_t nslots;
	uint8_t *recv;
	uint32_t nrecv, rslot;
	uint8_t *credit_buf, *result_buf;
	uint32_t credits, batch, consumed, credit_pending;
	uint32_t max_inline;
	uint64_t rx_msgs;	     /* Sends received; RDMA Write ping-pong rounds */
	uint32_t repost[POLL_BATCH]; /* receive slots consumed in this poll round */
	uint32_t nrepost;
	struct ipf_ctrl out;
};

struct isrv {
	const struct ipf_opts *o;
	struct iwv_context *ctx;
	struct iwv_pd *pd;
	struct iwcm_event_channel *ch;
	struct iwcm_id *lid;
	struct isess *list;
};

static void is_free(struct isess *s)
{
	if (s->id) {
		if (s->id->qp)
			iwcm_destroy_qp(s->id);
		iwcm_destroy_id(s->id);
	}
	if (s->cq)
		iwv_destroy_cq(s->cq);
	if (s->mr)
		iwv_dereg_mr(s->mr);
	free(s->mem);
	free(s);
}

static void is_close(struct isess *s)
{
	if (s->state == SS_CLOSING)
		return;
	s->state = SS_CLOSING;
	/* DISCONNECTED follows and frees the session */
	iwcm_disconnect(s->id);
}

__attribute__((format(printf, 2, 3))) static void is_err(struct isess *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s\n", PROG, s->peer, msg);
	s->reported = true;
}

static void is_note_bad(struct isess *s, uint8_t status, uint64_t msg, uint64_t off)
{
	if (s->out.status == IPF_RES_OK) {
		s->out.status = status;
		s->out.bad = msg;
		s->out.bad_off = off;
	}
}

/* Build the session for a CONNECT_REQUEST; NULL + *why when it must be refused. */
static struct isess *is_create(struct isrv *sv, struct iwcm_id *id, const struct ipf_hello *h,
			       const char **why)
{
	struct iwv_qp_init_attr attr;
	struct isess *s;
	size_t data_len = 0, ring_len, total;
	uint32_t sq;
	bool pp = h->flags & IPF_HF_PINGPONG;

	s = calloc(1, sizeof(*s));
	if (!s) {
		*why = "server out of memory";
		return NULL;
	}
	s->h = *h;
	iwt_addr_format(iwcm_get_peer_addr(id), s->peer, sizeof(s->peer));
	if (h->op != IPF_OP_SEND) {
		s->nslots = pp ? 1 : slots_for(h->size, h->depth);
		data_len = (size_t)s->nslots * h->size;
	}
	if (h->op == IPF_OP_SEND) {
		s->rslot = h->size > CTRL_SLOT ? h->size : CTRL_SLOT;
		if (pp) {
			s->nrecv = SRV_PP_RECV;
		} else {
			s->credits = clamp_u32((uint64_t)h->depth * 2, 1, IPF_CREDITS_MAX);
			if (s->credits > IPF_MEM_MAX / s->rslot)
				s->credits = clamp_u32(IPF_MEM_MAX / s->rslot, 1, IPF_CREDITS_MAX);
			/* at most four CREDIT messages in flight: the client's ring is fixed */
			s->batch = (s->credits + 3) / 4;
			s->nrecv = s->credits + 2;
		}
	} else {
		s->nrecv = 2;
		s->rslot = CTRL_SLOT;
	}
	ring_len = (size_t)s->nrecv * s->rslot;
	total = align64(data_len) + align64(ring_len) + 2 * CTRL_SLOT;
	s->mem = buf_alloc(total);
	if (!s->mem) {
		*why = "server out of memory";
		goto fail;
	}
	s->data = s->mem;
	s->recv = s->data + align64(data_len);
	s->credit_buf = s->recv + align64(ring_len);
	s->result_buf = s->credit_buf + CTRL_SLOT;
	if (h->op == IPF_OP_READ && (h->flags & IPF_HF_VERIFY))
		for (uint32_t i = 0; i < s->nslots; i++)
			ipf_pat_fill(s->data + (size_t)i * h->size, h->size,
				     ipf_msg_key(h->seed, i));
	if (s->batch) {
		struct ipf_ctrl cr;

		memset(&cr, 0, sizeof(cr));
		cr.type = IPF_CTRL_CREDIT;
		cr.count = s->batch;
		ipf_ctrl_encode(&cr, s->credit_buf, ipf_ctrl_len(h->size));
	}
	s->mr = iwv_reg_mr(sv->pd, s->mem, total,
			   IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE |
				   IWV_ACCESS_REMOTE_READ);
	if (!s->mr) {
		*why = "server cannot register memory";
		goto fail;
	}
	if (h->op == IPF_OP_SEND)
		sq = pp ? 8 : 16;
	else
		sq = pp ? PP_SQ : 4;
	s->cq = iwv_create_cq(sv->ctx, (int)(sq + s->nrecv + 4), s, NULL, 0);
	if (!s->cq) {
		*why = "server cannot create a CQ";
		goto fail;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = s;
	attr.send_cq = s->cq;
	attr.recv_cq = s->cq;
	attr.cap.max_send_wr = sq;
	attr.cap.max_recv_wr = s->nrecv;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = 256;
	attr.qp_type = IWV_QPT_RC;
	if (iwcm_create_qp(id, sv->pd, &attr)) {
		*why = "server cannot create a QP";
		goto fail;
	}
	s->id = id;
	s->max_inline = attr.cap.max_inline_data;
	for (uint32_t i = 0; i < s->nrecv; i++)
		if (post_recv_slot(id->qp, s->mr, s->recv, s->rslot, i)) {
			*why = "server cannot post receives";
			goto fail;
		}
	id->context = s;
	return s;
fail:
	if (s->id) {
		iwcm_destroy_qp(s->id);
		s->id = NULL; /* the caller rejects and destroys the id */
	}
	if (s->cq)
		iwv_destroy_cq(s->cq);
	if (s->mr)
		iwv_dereg_mr(s->mr);
	free(s->mem);
	free(s);
	return NULL;
}

static void is_connect_request(struct isrv *sv, struct iwcm_event *ev, bool *destroy_id)
{
	const struct ipf_opts *o = sv->o;
	uint8_t wb[IPF_WELCOME_LEN];
	struct iwcm_conn_param cp;
	struct ipf_welcome w;
	struct ipf_hello h;
	struct isess *s = NULL;
	const char *why;
	const void *pd;
	size_t pdlen;

	pd = conn_pd(&ev->param.conn, &pdlen);
	why = hello_refusal(pd ? ipf_hello_decode(pd, pdlen, &h) : IPF_E_SHORT);
	if (!why && (h.flags & IPF_HF_TCP))
		why = "the client runs --tcp-baseline; this server does not";
	if (!why)
		s = is_create(sv, ev->id, &h, &why);
	memset(&w, 0, sizeof(w));
	if (!s) {
		char peer[128];

		ipf_welcome_refusal(why, wb);
		iwt_addr_format(iwcm_get_peer_addr(ev->id), peer, sizeof(peer));
		fprintf(stderr, "%s: %s: refused: %s\n", PROG, peer, why);
		iwcm_reject(ev->id, wb, sizeof(wb));
		*destroy_id = true;
		return;
	}
	if (h.op != IPF_OP_SEND) {
		w.addr = (uintptr_t)s->data;
		w.length = (uint64_t)s->nslots * h.size;
		w.rkey = s->mr->rkey;
	}
	w.credits = s->credits;
	w.credit_batch = s->batch;
	ipf_welcome_encode(&w, wb);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = wb;
	cp.private_data_len = sizeof(wb);
	iwt_opt_conn_param(&o->iw, &cp);
	s->next = sv->list;
	sv->list = s;
	if (iwcm_accept(ev->id, &cp)) {
		is_err(s, "iwcm_accept: %s", strerror(errno));
		s->dead = true;
	}
}

static void is_post_result(struct isrv *sv, struct isess *s, const struct ipf_ctrl *done)
{
	const struct ipf_hello *h = &s->h;
	bool pp = h->flags & IPF_HF_PINGPONG;
	uint64_t count = done->count;

	if (h->op == IPF_OP_SEND || (pp && h->op == IPF_OP_WRITE)) {
		if (done->count != s->rx_msgs)
			is_note_bad(s, IPF_RES_PROTO, s->rx_msgs, 0);
		count = s->rx_msgs;
	}
	if (h->op == IPF_OP_WRITE && !pp && (h->flags & IPF_HF_VERIFY)) {
		/* every slot holds the last message the client wrote into it */
		for (uint32_t i = 0; i < s->nslots && i < count; i++) {
			uint64_t m = i + (count - 1 - i) / s->nslots * s->nslots;
			int64_t bad = ipf_pat_check(s->data + (size_t)i * h->size, h->size,
						    ipf_msg_key(h->seed, m));

			if (bad >= 0) {
				is_note_bad(s, IPF_RES_VERIFY, m, (uint64_t)bad);
				break;
			}
		}
	}
	s->out.type = IPF_CTRL_RESULT;
	s->out.count = count;
	s->out.bytes = count * h->size;
	ipf_ctrl_encode(&s->out, s->result_buf, ipf_ctrl_len(h->size));
	if (post_send1(s->id->qp, s->mr, s->result_buf, ipf_ctrl_len(h->size),
		       WR_ID(WK_CTRL, RESULT_WR), s->max_inline)) {
		is_err(s, "cannot post the result");
		is_close(s);
		return;
	}
	s->state = SS_RESULT_SENT;
	s->finished = true;
	ipf_report_served(sv->o, "iwarp", s->peer, h, count, s->out.status);
}

static void is_wc(struct isrv *sv, struct isess *s, const struct iwv_wc *wc)
{
	const struct ipf_hello *h = &s->h;
	unsigned kind = WR_KIND(wc->wr_id);
	uint32_t slot = (uint32_t)WR_VAL(wc->wr_id);
	char what[160];

	if (wc->status != IWV_WC_SUCCESS) {
		/* flushes after a close, and a client that went away, are not news */
		if (s->state != SS_CLOSING && s->state != SS_RESULT_SENT &&
		    wc->status != IWV_WC_WR_FLUSH_ERR) {
			wc_describe(wc, h->op, what, sizeof(what));
			is_err(s, "%s", what);
		}
		is_close(s);
		return;
	}
	if (s->state == SS_CLOSING)
		return;
	if (kind == WK_RECV) {
		uint8_t *p = s->recv + (size_t)slot * s->rslot;
		struct ipf_ctrl m;

		if (h->op == IPF_OP_SEND && wc->byte_len == h->size) {
			if (h->flags & IPF_HF_VERIFY) {
				int64_t bad =
					ipf_pat_check(p, h->size, ipf_msg_key(h->seed, s->rx_msgs));

				if (bad >= 0)
					is_note_bad(s, IPF_RES_VERIFY, s->rx_msgs, (uint64_t)bad);
			}
			s->rx_msgs++;
			if (h->flags & IPF_HF_PINGPONG) {
				/* echo from where it landed; repost once the echo is out */
				if (post_send1(s->id->qp, s->mr, p, h->size, WR_ID(WK_ECHO, slot),
					       s->max_inline)) {
					is_err(s, "cannot post the echo");
					is_close(s);
				}
				return;
			}
			if (++s->consumed >= s->batch) {
				s->consumed -= s->batch;
				s->credit_pending++;
			}
		} else if (!ipf_ctrl_decode(p, wc->byte_len, &m) && m.type == IPF_CTRL_DONE) {
			is_post_result(sv, s, &m);
		} else {
			is_err(s, "unexpected %" PRIu32 "-octet message", wc->byte_len);
			is_close(s);
			return;
		}
		s->repost[s->nrepost++] = slot;
		return;
	}
	if (kind == WK_ECHO)
		s->repost[s->nrepost++] = slot;
}

/* Repost the receives of one poll round as one list (before any credit for them). */
static void is_repost(struct isess *s)
{
	struct iwv_recv_wr wr[POLL_BATCH], *bad;
	struct iwv_sge sge[POLL_BATCH];
	uint32_t n = s->nrepost;

	s->nrepost = 0;
	if (!n || s->state == SS_CLOSING)
		return;
	for (uint32_t i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)(s->recv + (size_t)s->repost[i] * s->rslot);
		sge[i].length = s->rslot;
		sge[i].lkey = s->mr->lkey;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = WR_ID(WK_RECV, s->repost[i]);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
	}
	if (iwv_post_recv(s->id->qp, wr, &bad)) {
		is_err(s, "cannot repost receives");
		is_close(s);
	}
}

static void is_step(struct isrv *sv, struct isess *s)
{
	const struct ipf_hello *h = &s->h;
	struct iwv_wc wc[POLL_BATCH];
	int n;

	if (s->dead)
		return;
	n = iwv_poll_cq(s->cq, POLL_BATCH, wc);
	if (n < 0) {
		is_err(s, "iwv_poll_cq: %s", strerror(-n));
		is_close(s);
		return;
	}
	for (int i = 0; i < n; i++)
		is_wc(sv, s, &wc[i]);
	is_repost(s);
	if (s->state == SS_CLOSING)
		return;
	while (s->credit_pending) {
		int rc = post_send1(s->id->qp, s->mr, s->credit_buf, ipf_ctrl_len(h->size),
				    WR_ID(WK_CTRL, 0), s->max_inline);

		if (rc == ENOMEM)
			break; /* send queue full: after the next completions */
		if (rc) {
			is_err(s, "cannot post credits: %s", strerror(rc));
			is_close(s);
			return;
		}
		s->credit_pending--;
	}
	if (h->op == IPF_OP_WRITE && (h->flags & IPF_HF_PINGPONG) && s->state != SS_RESULT_SENT &&
	    __atomic_load_n(&s->data[h->size - 1], __ATOMIC_ACQUIRE) == ipf_pp_flag(s->rx_msgs)) {
		struct iwv_sge sge = {(uintptr_t)s->data, h->size, s->mr->lkey};
		struct iwv_send_wr wr, *bad;
		int rc;

		if (h->flags & IPF_HF_VERIFY) {
			int64_t b = ipf_pat_check(s->data, h->size - 1,
						  ipf_msg_key(h->seed, s->rx_msgs));

			if (b >= 0)
				is_note_bad(s, IPF_RES_VERIFY, s->rx_msgs, (uint64_t)b);
		}
		/* write back what arrived: same pattern, same flag octet */
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = WR_ID(WK_PPW, s->rx_msgs);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IWV_WR_RDMA_WRITE;
		if ((s->rx_msgs + 1) % PP_SIG == 0)
			wr.send_flags = IWV_SEND_SIGNALED;
		if (h->size <= s->max_inline)
			wr.send_flags |= IWV_SEND_INLINE;
		wr.wr.rdma.remote_addr = h->addr;
		wr.wr.rdma.rkey = h->rkey;
		rc = iwv_post_send(s->id->qp, &wr, &bad);
		if (rc == ENOMEM)
			return; /* retried on the next round: the flag is still there */
		if (rc) {
			is_err(s, "iwv_post_send: %s", strerror(rc));
			is_close(s);
			return;
		}
		s->rx_msgs++;
	}
}

/* Handle every CM event that is ready; 0, or -1 if the channel failed. */
static int is_cm_events(struct isrv *sv)
{
	for (;;) {
		struct iwcm_event *ev;
		struct iwcm_id *destroy = NULL;
		struct isess *s;
		bool destroy_id = false;

		if (iwcm_get_cm_event(sv->ch, &ev)) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			return ipf_fail("iwcm_get_cm_event: %s", strerror(errno));
		}
		s = ev->id && ev->id != sv->lid ? ev->id->context : NULL;
		switch (ev->event) {
		case IWCM_EVENT_CONNECT_REQUEST:
			is_connect_request(sv, ev, &destroy_id);
			if (destroy_id)
				destroy = ev->id;
			break;
		case IWCM_EVENT_ESTABLISHED:
			if (s && s->state == SS_ACCEPTING)
				s->state = SS_RUN;
			if (s && sv->o->verbose)
				printf("%s: %s: connected: MPA rev %u, CRC %s, markers %s, IRD %u, "
				       "ORD %u\n",
				       PROG, s->peer, ev->mpa.mpa_rev, ev->mpa.crc ? "on" : "off",
				       ipf_markers_str(ev->mpa.markers_tx, ev->mpa.markers_rx),
				       ev->mpa.ird, ev->mpa.ord);
			fflush(stdout);
			break;
		case IWCM_EVENT_DISCONNECTED:
		case IWCM_EVENT_CONNECT_ERROR:
		case IWCM_EVENT_UNREACHABLE:
		case IWCM_EVENT_REJECTED:
			if (s) {
				if (!s->finished && !s->reported)
					is_err(s, "connection lost before the test ended: %s",
					       ev->iw_err   ? iwv_strerror(ev->iw_err)
					       : ev->status ? strerror(-ev->status)
							    : "the client closed it");
				s->dead = true;
			}
			break;
		default:
			break;
		}
		iwcm_ack_cm_event(ev);
		if (destroy)
			iwcm_destroy_id(destroy);
		for (struct isess **pp = &sv->list; *pp;) {
			s = *pp;
			if (s->dead) {
				*pp = s->next;
				is_free(s);
			} else {
				pp = &s->next;
			}
		}
	}
}

static int iwarp_server(const struct ipf_opts *o)
{
	struct sockaddr_storage ss;
	struct isrv sv;
	socklen_t sl;
	uint64_t last_cm = 0;
	int ret = -1;

	memset(&sv, 0, sizeof(sv));
	sv.o = o;
	if (resolve(o->bind_addr, o->port, true, &ss, &sl))
		return -1;
	sv.ctx = iwt_opt_open(&o->iw, PROG);
	if (!sv.ctx)
		return fail_said(); /* iwt_opt_open() printed why */
	sv.pd = iwv_alloc_pd(sv.ctx);
	sv.ch = iwcm_create_event_channel_ctx(sv.ctx);
	if (!sv.pd || !sv.ch) {
		ipf_fail("cannot set up the iWARP device: %s", strerror(errno));
		goto out;
	}
	/* the loop below polls: CM events must never block it */
	if (fcntl(sv.ch->fd, F_SETFL, fcntl(sv.ch->fd, F_GETFL) | O_NONBLOCK)) {
		ipf_fail("fcntl: %s", strerror(errno));
		goto out;
	}
	if (iwcm_create_id(sv.ch, &sv.lid, NULL, IWCM_PS_TCP) || iwt_opt_apply(&o->iw, sv.lid)) {
		ipf_fail("cannot create the listening id: %s", strerror(errno));
		goto out;
	}
	if (iwcm_bind_addr(sv.lid, (struct sockaddr *)&ss) || iwcm_listen(sv.lid, 128)) {
		ipf_fail("cannot listen on %s port %u: %s", o->bind_addr, o->port, strerror(errno));
		goto out;
	}
	{
		char d[128], where[128], how[200];

		iwt_opt_describe(&o->iw, d, sizeof(d));
		iwt_addr_format(iwcm_get_local_addr(sv.lid), where, sizeof(where));
		snprintf(how, sizeof(how), "iWARP %s; engine %s", d,
			 iwv_context_engine_name(sv.ctx));
		ipf_report_listening(o, where, how);
	}
	while (!stop_flag) {
		uint64_t now = iwt_now_ns();
		bool setup = false;

		for (struct isess *s = sv.list; s; s = s->next)
			setup |= s->state == SS_ACCEPTING || s->state == SS_CLOSING;
		/* busy sessions: CM events only every millisecond, they cost a lock round */
		if (!sv.list || setup || now - last_cm >= CM_CHECK_NS) {
			if (is_cm_events(&sv))
				goto out;
			last_cm = now;
		}
		for (struct isess *s = sv.list; s; s = s->next)
			is_step(&sv, s);
		if (!sv.list) {
			struct pollfd pfd = {sv.ch->fd, POLLIN, 0};

			/* the CM progresses only inside its calls: wake up often */
			poll(&pfd, 1, IDLE_POLL_MS);
		}
	}
	ret = 0;
out:
	while (sv.list) {
		struct isess *s = sv.list;

		sv.list = s->next;
		is_free(s);
	}
	if (sv.lid)
		iwcm_destroy_id(sv.lid);
	if (sv.ch)
		iwcm_destroy_event_channel(sv.ch);
	if (sv.pd)
		iwv_dealloc_pd(sv.pd);
	if (sv.ctx)
		iwv_close_device(sv.ctx);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                            */
/* ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	/* split: ISO C caps string literals at 4095 octets */
	fputs("Usage: iwperf -s [-a ADDR] [-p PORT] [OPTION]...                     (server)\n"
	      "       iwperf -c ADDR [-p PORT] [--op write|read|send] [--size N]\n"
	      "              [--iters N | --seconds S] [--pingpong] [OPTION]...    (client)\n"
	      "\n"
	      "Measure RDMA Write, RDMA Read and Send bandwidth, and ping-pong latency, over\n"
	      "the iwarp software iWARP stack (RDMAP/DDP/MPA over TCP); with --tcp-baseline\n"
	      "on both ends, the same pattern over plain TCP sockets for comparison.\n"
	      "\n"
	      "The server serves clients one after another (several connections at once\n"
	      "when a client asks for --qps N) until SIGINT or SIGTERM.  The client states\n"
	      "the test in its connection request; the server answers with its buffer and\n"
	      "receive credits, checks what arrived, and reports back at the end.\n"
	      "\n"
	      "Role:\n"
	      "  -s, --server           serve tests until interrupted\n"
	      "  -c, --client ADDR      run a test against the server at ADDR (IPv4, IPv6 or\n"
	      "                         a name)\n"
	      "  -a, --addr ADDR        server: address to listen on (default 0.0.0.0; :: for\n"
	      "                         IPv6)\n"
	      "  -p, --port PORT        TCP port (default 7175; server: 0 picks a free one and\n"
	      "                         prints it)\n"
	      "\n",
	      f);
	fputs("Test (client):\n"
	      "      --op OP            write (RDMA Write), read (RDMA Read) or send (Send)\n"
	      "                         (default write)\n"
	      "      --size N           message size in octets, 1 to 256M; K, M and G\n"
	      "                         suffixes are powers of 1024 (default 65536, or 64\n"
	      "                         with --pingpong)\n"
	      "  -n, --iters N          messages (ping-pong: round trips) per QP (default\n"
	      "                         5000 for bandwidth, 10000 for ping-pong)\n"
	      "  -t, --seconds S        run for S seconds instead (fractions allowed)\n"
	      "      --pingpong         latency instead of bandwidth: one message in flight,\n"
	      "                         the server answers each.  send: Send, echoed with a\n"
	      "                         Send.  write: RDMA Write, the server polls the last\n"
	      "                         octet and writes back (like perftest's write_lat).\n"
	      "                         read: one RDMA Read at a time.  Reports the round\n"
	      "                         trip time\n"
	      "      --qps N            N connections at once, each its own QP, 1 to 64;\n"
	      "                         results are summed (default 1)\n"
	      "      --depth D          bandwidth: work requests in flight per QP, 1 to 1024\n"
	      "                         (default 32; RDMA Read: at most the ORD)\n"
	      "      --verify           check the data end to end (a per-message pattern;\n"
	      "                         costs CPU, so not for peak numbers)\n"
	      "      --tcp-baseline     run the same pattern over plain TCP instead; the\n"
	      "                         server must run with --tcp-baseline too\n"
	      "      --json             one JSON object per result line instead of the table\n"
	      "\n"
	      "Output:\n"
	      "  -v, --verbose          also one line per QP (client), per connection detail\n"
	      "                         (server)\n"
	      "  -q, --quiet            client: the result line only; server: errors only\n"
	      "  -h, --help             show this help and exit\n"
	      "\n" IWT_NUM_HELP "\n",
	      f);
	iwt_opt_help(f);
	fputs("\n"
	      "Examples:\n"
	      "  iwperf -s &  iwperf -c 127.0.0.1 --op write --size 64K --seconds 3\n"
	      "  iwperf -c 127.0.0.1 --op send --pingpong --iters 100000\n"
	      "  iwperf -c 127.0.0.1 --op read --qps 4 --depth 16 --json\n"
	      "  iwperf -s -p 7176 --tcp-baseline &\n"
	      "  iwperf -c 127.0.0.1 -p 7176 --tcp-baseline --op write --seconds 3\n"
	      "\n"
	      "Exit status:\n"
	      "  0  the test ran and every check passed (server: stopped by SIGINT/SIGTERM)\n"
	      "  1  runtime, network, peer or data-check failure (one line on stderr)\n"
	      "  2  bad command line\n"
	      "\n"
	      "See iwperf(1).\n",
	      f);
}

enum {
	OPT_OP = 0x100,
	OPT_SIZE,
	OPT_PINGPONG,
	OPT_QPS,
	OPT_DEPTH,
	OPT_JSON,
	OPT_TCP,
	OPT_VERIFY,
};

static const struct option long_opts[] = {
	{"server", no_argument, NULL, 's'},
	{"client", required_argument, NULL, 'c'},
	{"addr", required_argument, NULL, 'a'},
	{"port", required_argument, NULL, 'p'},
	{"op", required_argument, NULL, OPT_OP},
	{"size", required_argument, NULL, OPT_SIZE},
	{"iters", required_argument, NULL, 'n'},
	{"seconds", required_argument, NULL, 't'},
	{"pingpong", no_argument, NULL, OPT_PINGPONG},
	{"qps", required_argument, NULL, OPT_QPS},
	{"depth", required_argument, NULL, OPT_DEPTH},
	{"json", no_argument, NULL, OPT_JSON},
	{"tcp-baseline", no_argument, NULL, OPT_TCP},
	{"verify", no_argument, NULL, OPT_VERIFY},
	{"verbose", no_argument, NULL, 'v'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	IWT_OPT_LONG,
	{NULL, 0, NULL, 0},
};

#define bad_arg(...)   iwt_bad_arg(PROG, __VA_ARGS__)
#define parse_u64(...) iwt_num_u64(PROG, __VA_ARGS__)

/* 0, or the exit status of a bad command line (or of --help). */
static int parse_args(int argc, char **argv, struct ipf_opts *o, bool *help)
{
	bool client_only = false, size_set = false, iters_set = false;
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->bind_addr = "0.0.0.0";
	o->port = IWPERF_DEFAULT_PORT;
	o->op = IPF_OP_WRITE;
	o->qps = 1;
	o->depth = 32;
	iwt_opt_init(&o->iw);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sc:a:p:n:t:vqh", long_opts, NULL)) != -1) {
		if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
			if (iwt_opt_parse(&o->iw, PROG, c, optarg))
				return IWPERF_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 's':
			o->server = true;
			break;
		case 'c':
			o->host = optarg;
			break;
		case 'a':
			o->bind_addr = optarg;
			break;
		case 'p':
			if (parse_u64("--port", optarg, 0, 65535, 0, &v))
				return IWPERF_EXIT_USAGE;
			o->port = (unsigned)v;
			break;
		case OPT_OP:
			client_only = true;
			if (!strcmp(optarg, "write"))
				o->op = IPF_OP_WRITE;
			else if (!strcmp(optarg, "read"))
				o->op = IPF_OP_READ;
			else if (!strcmp(optarg, "send"))
				o->op = IPF_OP_SEND;
			else
				return bad_arg("--op", optarg, "write, read or send"),
				       IWPERF_EXIT_USAGE;
			break;
		case OPT_SIZE:
			client_only = size_set = true;
			if (parse_u64("--size", optarg, 1, IPF_SIZE_MAX, IWT_NUM_SUFFIX, &v))
				return IWPERF_EXIT_USAGE;
			o->size = (uint32_t)v;
			break;
		case 'n':
			client_only = iters_set = true;
			if (parse_u64("--iters", optarg, 1, 1ull << 40, 0, &o->iters))
				return IWPERF_EXIT_USAGE;
			break;
		case 't':
			client_only = true;
			if (iwt_num_seconds(PROG, "--seconds", optarg, 0.001, 86400, &o->seconds))
				return IWPERF_EXIT_USAGE;
			break;
		case OPT_PINGPONG:
			client_only = o->pingpong = true;
			break;
		case OPT_QPS:
			client_only = true;
			if (parse_u64("--qps", optarg, 1, IPF_QPS_MAX, 0, &v))
				return IWPERF_EXIT_USAGE;
			o->qps = (unsigned)v;
			break;
		case OPT_DEPTH:
			client_only = true;
			if (parse_u64("--depth", optarg, 1, IPF_DEPTH_MAX, 0, &v))
				return IWPERF_EXIT_USAGE;
			o->depth = (unsigned)v;
			break;
		case OPT_JSON:
			client_only = o->json = true;
			break;
		case OPT_TCP:
			o->tcp = true;
			break;
		case OPT_VERIFY:
			client_only = o->verify = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			*help = true;
			return 0;
		case ':':
			fprintf(stderr, "%s: option '%s' needs a value (see --help)\n", PROG,
				argv[optind - 1]);
			return IWPERF_EXIT_USAGE;
		default:
			fprintf(stderr, "%s: unknown option '%s' (see --help)\n", PROG,
				argv[optind - 1]);
			return IWPERF_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", PROG, argv[optind]);
		return IWPERF_EXIT_USAGE;
	}
	if (o->server == !!o->host) {
		fprintf(stderr, "%s: give -s (server) or -c ADDR (client), not %s (see --help)\n",
			PROG, o->server ? "both" : "neither");
		return IWPERF_EXIT_USAGE;
	}
	if (o->server && client_only) {
		fprintf(stderr,
			"%s: --op, --size, --iters, --seconds, --pingpong, --qps, --depth, "
			"--verify and --json are client options\n",
			PROG);
		return IWPERF_EXIT_USAGE;
	}
	if (!o->server && !o->port) {
		fprintf(stderr, "%s: the client needs a port other than 0\n", PROG);
		return IWPERF_EXIT_USAGE;
	}
	if (iters_set && o->seconds > 0) {
		fprintf(stderr, "%s: give --iters or --seconds, not both\n", PROG);
		return IWPERF_EXIT_USAGE;
	}
	if (!size_set)
		o->size = o->pingpong ? 64 : 65536;
	if (!iters_set)
		o->iters = o->pingpong ? 10000 : 5000;
	return 0;
}

int main(int argc, char **argv)
{
	struct ipf_opts o;
	bool help = false;
	int rc;

	rc = parse_args(argc, argv, &o, &help);
	if (rc)
		return rc;
	if (help) {
		usage(stdout);
		return IWPERF_EXIT_OK;
	}
	signal(SIGPIPE, SIG_IGN);
	if (o.server) {
		install_signals();
		rc = o.tcp ? tcp_server(&o) : iwarp_server(&o);
	} else {
		rc = o.tcp ? tcp_client(&o) : iwarp_client(&o);
	}
	if (rc) {
		if (!fail_printed)
			fprintf(stderr, "%s: %s\n", PROG, fail_msg[0] ? fail_msg : "failed");
		return IWPERF_EXIT_FAIL;
	}
	return IWPERF_EXIT_OK;
}
