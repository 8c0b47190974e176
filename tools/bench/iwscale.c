/* SPDX-License-Identifier: MIT */
/*
 * iwscale - how the stack scales with the number of connections: one
 * process holds N idle RC connections (a server accepting them, or a client
 * making them all at once), each with 4 posted 4 KiB receives on one shared
 * CQ, moves one 64-octet echo per connection and tears them all down.  It
 * reports, per side, set-up time and CPU per connection, resident memory per
 * idle connection, the echoes, and teardown time with every posted receive
 * flushed.  tools/bench/bench_scale.sh runs a server and a client for
 * several N.  A benchmark, not installed.
 *
 * Theory of operation.  One context without an engine thread; the program
 * sleeps in poll() on its (non-blocking) CM event channel, which without a
 * thread is readable for engine work, CM timers and completions alike, and
 * after each wake drains the CM events and then the CQ.  Connection i's id
 * carries i as its context; a completion finds its connection by qp_num.
 * The CQ holds up to 65536 entries; beyond that, completions wait in their
 * QPs until polled room (the library stages them), so nothing is lost.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"
#include "iwt_opt.h"
#include "iwt_verbs.h"

#define PROG	       "iwscale"
#define NRECV	       4     /* receives posted per connection */
#define RECV_LEN       4096u /* octets per receive */
#define ECHO_LEN       64u   /* octets of the echo */
#define MAX_CONNS      65536
#define CQ_MAX	       65536
#define MAX_PEER_ADDRS 64

enum conn_state { C_NEW, C_CONNECTING, C_UP, C_DOWN, C_GONE };

struct conn {
	struct iwcm_id *id;
	struct iwv_qp *qp;
	enum conn_state state;
	bool echoed; /* client: the echo came back right; server: echo sent */
};

struct scale {
	bool server;
	const char *host;
	uint16_t port;
	int n, backlog, timeout_s;
	int sources; /* client: loopback source addresses 127.0.0.1 .. 127.0.0.<sources> */
	/* server: the distinct client addresses seen (as the kernel reports
	 * them), at most MAX_PEER_ADDRS kept */
	char peer[MAX_PEER_ADDRS][64];
	int npeer;
	bool json;
	struct iwt_opt opt;
	struct iwt_verbs v;
	struct iwv_cq *cq;
	struct iwv_mr *mr;
	uint8_t *buf; /* NRECV * RECV_LEN per connection, then ECHO_LEN per connection to send */
	size_t buf_len;
	struct conn *c;
	uint32_t *by_qpn_idx; /* qp_num -> connection index + 1 (0: none) */
	uint32_t qpn_cap;
	int accepted, up, failed, down, gone, echoes, sends;
	uint64_t flushed;
	uint64_t deadline_ns;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: iwscale -s [-p PORT] -n N [OPTIONS]\n"
		"       iwscale -c HOST -p PORT -n N [OPTIONS]\n"
		"\n"
		"Hold N idle RC connections in one process and report how the stack scales:\n"
		"set-up time and CPU per connection, resident memory per idle connection,\n"
		"one 64-octet echo per connection, teardown time and the posted receives\n"
		"flushed.  Each connection has 4 posted 4 KiB receives on one shared CQ.\n"
		"The server accepts N connections, echoes what each sends, and ends when\n"
		"all N are gone; the client connects all N at once, sends, checks the\n"
		"echoes and disconnects them all.  Exit status 0 when every connection\n"
		"was set up, echoed once and torn down with its receives flushed, 1 if\n"
		"not, 2 for a bad command line.\n"
		"\n"
		"  -s, --server          accept connections\n"
		"  -c, --client HOST     connect to HOST (an address; loopback for tests)\n"
		"  -p, --port PORT       TCP port (server default: 0, a free one, printed)\n"
		"  -n, --conns N         connections, 1 to 65536 (the open-file limit is\n"
		"                        raised when N needs it, the hard limit too where\n"
		"                        the process may: root)\n"
		"      --backlog B       server: listen backlog, 1 to 65535 (default 128)\n"
		"      --sources K       client: spread the connections over K loopback source\n"
		"                        addresses, 127.0.0.1 to 127.0.0.K (1 to 64, default 1),\n"
		"                        for more connections than one address has ports\n"
		"      --timeout S       give up after S seconds, 1 to 3600 (default 300)\n"
		"      --json            one JSON object on stdout at the end\n"
		"  -h, --help            this text\n"
		"\n");
	iwt_opt_help(f);
	fprintf(f, "\nExample:\n"
		   "  iwscale -s -p 7400 -n 4096 &  iwscale -c 127.0.0.1 -p 7400 -n 4096\n"
		   "\n"
		   "  iwscale -s -p 7400 -n 65536 &  iwscale -c 127.0.0.1 -p 7400 -n 65536 "
		   "--sources 4\n"
		   "\n"
		   "Beyond about 28,000 connections from one address to one address the\n"
		   "kernel's ephemeral ports run out (net.ipv4.ip_local_port_range): use\n"
		   "--sources.\n");
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Room for N connections' descriptors (and the tool's own). */
static int raise_nofile(int n)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)n + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		struct rlimit up = {want, want};

		/* a privileged process may raise the hard limit (up to fs.nr_open) */
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return 0;
		iwt_msg(PROG, "%d connections need %llu descriptors; the hard limit is %llu", n,
			(unsigned long long)want, (unsigned long long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

static uint8_t *recv_buf(struct scale *s, int i, int k)
{
	return s->buf + ((size_t)i * NRECV + (size_t)k) * RECV_LEN;
}

static uint8_t *echo_buf(struct scale *s, int i)
{
	return s->buf + (size_t)s->n * NRECV * RECV_LEN + (size_t)i * ECHO_LEN;
}

static int post_recvs(struct scale *s, int i)
{
	for (int k = 0; k < NRECV; k++) {
		struct iwv_sge sge = {(uint64_t)(uintptr_t)recv_buf(s, i, k), RECV_LEN,
				      s->mr->lkey};
		struct iwv_recv_wr wr = {
			.wr_id = (uint64_t)i * NRECV + (uint64_t)k, .sg_list = &sge, .num_sge = 1};
		struct iwv_recv_wr *bad;
		int r = iwv_post_recv(s->c[i].qp, &wr, &bad);

		if (r) {
			errno = r;
			return -1;
		}
	}
	return 0;
}

/* Send ECHO_LEN octets at p on connection i (inline). */
static int post_echo(struct scale *s, int i, const uint8_t *p)
{
	struct iwv_sge sge = {(uint64_t)(uintptr_t)p, ECHO_LEN, s->mr->lkey};
	struct iwv_send_wr wr = {.wr_id = (uint64_t)i,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IWV_WR_SEND,
				 .send_flags = IWV_SEND_SIGNALED | IWV_SEND_INLINE};
	struct iwv_send_wr *bad;
	int r = iwv_post_send(s->c[i].qp, &wr, &bad);

	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

static int make_qp(struct scale *s, int i)
{
	struct iwv_qp_init_attr a = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = {.max_send_wr = 2,
			.max_recv_wr = NRECV,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = ECHO_LEN},
		.qp_type = IWV_QPT_RC,
	};
	uint32_t qpn;

	if (iwcm_create_qp(s->c[i].id, s->v.pd, &a) != 0)
		return -1;
	s->c[i].qp = s->c[i].id->qp;
	qpn = s->c[i].qp->qp_num;
	if (qpn >= s->qpn_cap) {
		uint32_t cap = s->qpn_cap ? s->qpn_cap : 1024;
		uint32_t *t;

		while (cap <= qpn)
			cap *= 2;
		t = realloc(s->by_qpn_idx, cap * sizeof(*t));
		if (!t) {
			errno = ENOMEM;
			return -1;
		}
		memset(t + s->qpn_cap, 0, (cap - s->qpn_cap) * sizeof(*t));
		s->by_qpn_idx = t;
		s->qpn_cap = cap;
	}
	s->by_qpn_idx[qpn] = (uint32_t)i + 1;
	return post_recvs(s, i);
}

static int conn_of_qpn(const struct scale *s, uint32_t qpn)
{
	return qpn < s->qpn_cap ? (int)s->by_qpn_idx[qpn] - 1 : -1;
}

/* The connection is over: its QP and id go (the QP's receives are flushed). */
static void conn_gone(struct scale *s, int i)
{
	struct conn *c = &s->c[i];

	if (c->state == C_GONE)
		return;
	if (c->qp) {
		s->by_qpn_idx[c->qp->qp_num] = 0;
		iwcm_destroy_qp(c->id);
		c->qp = NULL;
	}
	iwcm_destroy_id(c->id);
	c->id = NULL;
	c->state = C_GONE;
	s->gone++;
}

/* Count the client address of a new connection among the distinct ones. */
static void note_peer(struct scale *s, const struct sockaddr *sa)
{
	char host[64];

	iwt_addr_host(sa, host, sizeof(host));
	for (int k = 0; k < s->npeer; k++)
		if (!strcmp(s->peer[k], host))
			return;
	if (s->npeer < MAX_PEER_ADDRS)
		memcpy(s->peer[s->npeer++], host, sizeof(host));
}

static int on_cm_event(struct scale *s, struct iwcm_event *ev)
{
	enum iwcm_event_type t = ev->event;
	struct iwcm_id *id = ev->id;
	int i = (int)(intptr_t)id->context, r = 0;

	if (t == IWCM_EVENT_CONNECT_REQUEST) {
		i = s->accepted;
		if (i >= s->n) {
			iwcm_ack_cm_event(ev);
			iwcm_reject(id, NULL, 0);
			iwcm_destroy_id(id);
			return 0;
		}
		s->accepted++;
		note_peer(s, &id->route.addr.dst_addr);
		id->context = (void *)(intptr_t)i;
		s->c[i].id = id;
		s->c[i].state = C_CONNECTING;
		iwcm_ack_cm_event(ev);
		if (make_qp(s, i) != 0 || iwcm_accept(id, NULL) != 0) {
			iwt_msg(PROG, "connection %d: accept: %s", i, strerror(errno));
			return -1;
		}
		return 0;
	}
	iwcm_ack_cm_event(ev);
	switch (t) {
	case IWCM_EVENT_ADDR_RESOLVED:
		r = iwcm_resolve_route(id, 2000);
		break;
	case IWCM_EVENT_ROUTE_RESOLVED:
		r = make_qp(s, i);
		if (!r)
			r = iwcm_connect(id, NULL);
		break;
	case IWCM_EVENT_ESTABLISHED:
		s->c[i].state = C_UP;
		s->up++;
		break;
	case IWCM_EVENT_DISCONNECTED:
		if (s->c[i].state != C_DOWN) {
			s->c[i].state = C_DOWN;
			s->down++;
		}
		conn_gone(s, i);
		break;
	default:
		iwt_msg(PROG, "connection %d: %s (status %d%s%s)", i, iwcm_event_str(t), ev->status,
			ev->iw_err ? ", " : "", ev->iw_err ? iwv_strerror(ev->iw_err) : "");
		s->failed++;
		if (s->c[i].state != C_DOWN) {
			s->c[i].state = C_DOWN;
			s->down++;
		}
		conn_gone(s, i);
		break;
	}
	if (r) {
		iwt_msg(PROG, "connection %d: after %s: %s", i, iwcm_event_str(t), strerror(errno));
		return -1;
	}
	return 0;
}

static int on_wc(struct scale *s, const struct iwv_wc *wc)
{
	int i = conn_of_qpn(s, wc->qp_num);

	if (wc->status == IWV_WC_WR_FLUSH_ERR) {
		if (wc->opcode == IWV_WC_RECV)
			s->flushed++;
		return 0;
	}
	if (wc->status != IWV_WC_SUCCESS) {
		iwt_msg(PROG, "connection %d: completion status %s", i,
			iwv_wc_status_str(wc->status));
		return -1;
	}
	if (i < 0)
		return 0;
	if (wc->opcode == IWV_WC_SEND) {
		s->sends++;
		return 0;
	}
	if (wc->opcode != IWV_WC_RECV)
		return 0;
	{
		const uint8_t *p = recv_buf(s, i, (int)(wc->wr_id % NRECV));

		if (s->server) {
			/* echo it back from the receive buffer itself (inline: copied at post) */
			if (post_echo(s, i, p) != 0) {
				iwt_msg(PROG, "connection %d: echo: %s", i, strerror(errno));
				return -1;
			}
			s->echoes++;
		} else if (wc->byte_len == ECHO_LEN && !memcmp(p, echo_buf(s, i), ECHO_LEN) &&
			   !s->c[i].echoed) {
			s->c[i].echoed = true;
			s->echoes++;
		} else {
			iwt_msg(PROG, "connection %d: the echo came back wrong", i);
			return -1;
		}
	}
	return 0;
}

/* One round: wait for the CM fd (up to wait_ms), then drain events and the CQ. */
static int step(struct scale *s, int wait_ms)
{
	struct pollfd pfd = {.fd = s->v.cm_ch->fd, .events = POLLIN};
	struct iwcm_event *ev;
	struct iwv_wc wc[64];
	int n;

	if (iwt_now_ns() > s->deadline_ns) {
		iwt_msg(PROG, "timed out (--timeout %d): %d up, %d down, %d echoes", s->timeout_s,
			s->up, s->down, s->echoes);
		return -1;
	}
	if (wait_ms)
		poll(&pfd, 1, wait_ms);
	while (iwcm_get_cm_event(s->v.cm_ch, &ev) == 0)
		if (on_cm_event(s, ev) != 0)
			return -1;
	if (errno != EAGAIN) {
		iwt_msg(PROG, "iwcm_get_cm_event: %s", strerror(errno));
		return -1;
	}
	while ((n = iwv_poll_cq(s->cq, 64, wc)) > 0)
		for (int k = 0; k < n; k++)
			if (on_wc(s, &wc[k]) != 0)
				return -1;
	return n < 0 ? -1 : 0;
}

struct phase {
	uint64_t t0, cpu0;
	double secs, cpu_s;
};

static void phase_begin(struct phase *p)
{
	p->t0 = iwt_now_ns();
	p->cpu0 = iwt_cpu_ns();
}

static void phase_end(struct phase *p)
{
	p->secs = (double)(iwt_now_ns() - p->t0) / 1e9;
	p->cpu_s = (double)(iwt_cpu_ns() - p->cpu0) / 1e9;
}

static int run(struct scale *s)
{
	struct phase setup, echo, down;
	uint64_t rss0, rss1;
	struct sockaddr_storage dst;
	int ok, na;

	rss0 = rss_bytes();
	if (s->server) {
		/* the set-up begins with the first connection */
		struct pollfd pfd = {.fd = s->v.cm_ch->fd, .events = POLLIN};

		while (poll(&pfd, 1, 100) == 0)
			if (iwt_now_ns() > s->deadline_ns) {
				iwt_msg(PROG, "timed out (--timeout %d): no connection",
					s->timeout_s);
				return IWT_EXIT_FAIL;
			}
	}
	phase_begin(&setup);
	if (!s->server) {
		int e = iwt_addr_resolve(s->host, s->port, false, &dst, NULL);

		if (e != 0) {
			iwt_msg(PROG, "%s: %s", s->host, gai_strerror(e));
			return IWT_EXIT_USAGE;
		}
		if (s->sources > 1 &&
		    (dst.ss_family != AF_INET ||
		     (ntohl(((struct sockaddr_in *)&dst)->sin_addr.s_addr) >> 24) != 127)) {
			iwt_msg(PROG, "--sources: %s is not an IPv4 loopback address", s->host);
			return IWT_EXIT_USAGE;
		}
		for (int i = 0; i < s->n; i++) {
			/* connection i from 127.0.0.(1 + i mod K), its port chosen by connect() */
			struct sockaddr_in src = {
				.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(0x7f000001u + (uint32_t)(i % s->sources))};

			if (iwcm_create_id(s->v.cm_ch, &s->c[i].id, (void *)(intptr_t)i,
					   IWCM_PS_TCP) != 0 ||
			    iwt_opt_apply(&s->opt, s->c[i].id) != 0 ||
			    iwcm_resolve_addr(s->c[i].id,
					      s->sources > 1 ? (struct sockaddr *)&src : NULL,
					      (struct sockaddr *)&dst, 2000) != 0) {
				iwt_msg(PROG, "connection %d: %s", i, strerror(errno));
				return IWT_EXIT_FAIL;
			}
			s->c[i].state = C_CONNECTING;
		}
	}
	while (s->up + s->failed < s->n)
		if (step(s, 100) != 0)
			return IWT_EXIT_FAIL;
	phase_end(&setup);
	rss1 = rss_bytes();
	if (s->failed)
		return IWT_EXIT_FAIL;

	phase_begin(&echo);
	if (!s->server)
		for (int i = 0; i < s->n; i++) {
			uint8_t *p = echo_buf(s, i);

			for (unsigned k = 0; k < ECHO_LEN; k++)
				p[k] = (uint8_t)(i * 131 + (int)k * 7 + (i >> 8));
			if (post_echo(s, i, p) != 0) {
				iwt_msg(PROG, "connection %d: send: %s", i, strerror(errno));
				return IWT_EXIT_FAIL;
			}
		}
	while (s->echoes < s->n || s->sends < s->n)
		if (step(s, 100) != 0)
			return IWT_EXIT_FAIL;
	phase_end(&echo);

	phase_begin(&down);
	if (!s->server)
		for (int i = 0; i < s->n; i++)
			if (iwcm_disconnect(s->c[i].id) != 0) {
				iwt_msg(PROG, "connection %d: disconnect: %s", i, strerror(errno));
				return IWT_EXIT_FAIL;
			}
	while (s->gone < s->n || s->flushed < (uint64_t)s->n * (NRECV - 1))
		if (step(s, 100) != 0)
			return IWT_EXIT_FAIL;
	phase_end(&down);

	ok = s->flushed == (uint64_t)s->n * (NRECV - 1);
	/* server: the client addresses it saw; client: the ones it used */
	na = s->server ? s->npeer : s->sources;
	if (s->json) {
		printf("{\"side\":\"%s\",\"conns\":%d,\"setup_s\":%.3f,\"setup_cpu_s\":%.3f,"
		       "\"setup_cpu_ms_per_conn\":%.4f,\"rss_per_conn_kib\":%.1f,\"echo_s\":%.3f,"
		       "\"teardown_s\":%.3f,\"teardown_cpu_s\":%.3f,\"flushed\":%" PRIu64
		       ",\"flushed_expected\":%" PRIu64 ",\"%s\":%d}\n",
		       s->server ? "server" : "client", s->n, setup.secs, setup.cpu_s,
		       setup.cpu_s * 1e3 / s->n, (double)(rss1 - rss0) / 1024.0 / s->n, echo.secs,
		       down.secs, down.cpu_s, s->flushed, (uint64_t)s->n * (NRECV - 1),
		       s->server ? "peer_addresses" : "source_addresses", na);
	} else {
		printf("iwscale %s: %d connections from %d address%s\n",
		       s->server ? "server" : "client", s->n, na, na == 1 ? "" : "es");
		printf("  set-up    all established in %.3f s, CPU %.3f s (%.4f ms per "
		       "connection)\n",
		       setup.secs, setup.cpu_s, setup.cpu_s * 1e3 / s->n);
		printf("  memory    resident +%.1f MiB while idle (%.1f KiB per connection)\n",
		       (double)(rss1 - rss0) / 1048576.0, (double)(rss1 - rss0) / 1024.0 / s->n);
		printf("  echo      %d of %d in %.3f s\n", s->echoes, s->n, echo.secs);
		printf("  teardown  all gone in %.3f s, CPU %.3f s; receives flushed %" PRIu64
		       " of %" PRIu64 "\n",
		       down.secs, down.cpu_s, s->flushed, (uint64_t)s->n * (NRECV - 1));
	}
	fflush(stdout);
	return ok ? IWT_EXIT_OK : IWT_EXIT_FAIL;
}

static int parse(struct scale *s, int argc, char **argv)
{
	enum { O_BACKLOG = IWT_OPT_END, O_TIMEOUT, O_JSON, O_SOURCES };
	static const struct option lo[] = {
		{"server", no_argument, NULL, 's'},
		{"client", required_argument, NULL, 'c'},
		{"port", required_argument, NULL, 'p'},
		{"conns", required_argument, NULL, 'n'},
		{"backlog", required_argument, NULL, O_BACKLOG},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"json", no_argument, NULL, O_JSON},
		{"sources", required_argument, NULL, O_SOURCES},
		{"help", no_argument, NULL, 'h'},
		IWT_OPT_LONG,
		{NULL, 0, NULL, 0},
	};
	int c;
	uint64_t v;

	while ((c = getopt_long(argc, argv, "sc:p:n:h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			s->server = true;
			break;
		case 'c':
			s->host = optarg;
			break;
		case 'p':
			if (iwt_num_u64(PROG, "--port", optarg, 0, 65535, 0, &v) != 0)
				return -1;
			s->port = (uint16_t)v;
			break;
		case 'n':
			if (iwt_num_u64(PROG, "--conns", optarg, 1, MAX_CONNS, 0, &v) != 0)
				return -1;
			s->n = (int)v;
			break;
		case O_BACKLOG:
			if (iwt_num_u64(PROG, "--backlog", optarg, 1, 65535, 0, &v) != 0)
				return -1;
			s->backlog = (int)v;
			break;
		case O_TIMEOUT:
			if (iwt_num_u64(PROG, "--timeout", optarg, 1, 3600, 0, &v) != 0)
				return -1;
			s->timeout_s = (int)v;
			break;
		case O_JSON:
			s->json = true;
			break;
		case O_SOURCES:
			if (iwt_num_u64(PROG, "--sources", optarg, 1, 64, 0, &v) != 0)
				return -1;
			s->sources = (int)v;
			break;
		case 'h':
			usage(stdout);
			exit(IWT_EXIT_OK);
		default:
			if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
				if (iwt_opt_parse(&s->opt, PROG, c, optarg) != 0)
					return -1;
				break;
			}
			iwt_try_help(PROG);
			return -1;
		}
	}
	if (optind < argc)
		return iwt_usage_err(PROG, "unexpected argument '%s'", argv[optind]);
	if (s->server == (s->host != NULL))
		return iwt_usage_err(PROG, "say -s (server) or -c HOST (client)");
	if (!s->n)
		return iwt_usage_err(PROG, "-n N is required");
	if (!s->server && !s->port)
		return iwt_usage_err(PROG, "the client needs -p PORT");
	if (s->opt.engine_thread)
		return iwt_usage_err(PROG, "--engine-thread: iwscale runs without one");
	if (s->sources > 1 && s->server)
		return iwt_usage_err(PROG, "--sources is for the client");
	return 0;
}

int main(int argc, char **argv)
{
	struct scale s = {.backlog = 128, .timeout_s = 300, .sources = 1};
	int rc, cqe;

	iwt_opt_init(&s.opt);
	if (parse(&s, argc, argv) != 0)
		return IWT_EXIT_USAGE;
	if (raise_nofile(s.n) != 0) {
		iwt_msg(PROG, "cannot raise the open-file limit for %d connections: %s", s.n,
			strerror(errno));
		return IWT_EXIT_FAIL;
	}
	s.deadline_ns = iwt_now_ns() + (uint64_t)s.timeout_s * 1000000000u;
	s.c = calloc((size_t)s.n, sizeof(*s.c));
	s.buf_len = (size_t)s.n * (NRECV * RECV_LEN + ECHO_LEN);
	s.buf = mmap(NULL, s.buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!s.c || s.buf == MAP_FAILED) {
		iwt_msg(PROG, "no memory for %d connections", s.n);
		return IWT_EXIT_FAIL;
	}
	if (iwt_verbs_open(&s.v, &s.opt, PROG, IWT_VERBS_F_NONBLOCK) != IWT_VERBS_OK) {
		iwt_msg(PROG, "cannot open the device: %s", strerror(errno));
		return IWT_EXIT_FAIL;
	}
	cqe = s.n * (NRECV + 1) + 16;
	s.cq = iwv_create_cq(s.v.ctx, cqe < CQ_MAX ? cqe : CQ_MAX, NULL, NULL, 0);
	s.mr = s.cq ? iwv_reg_mr(s.v.pd, s.buf, s.buf_len, IWV_ACCESS_LOCAL_WRITE) : NULL;
	if (!s.mr) {
		iwt_msg(PROG, "CQ or memory registration: %s", strerror(errno));
		return IWT_EXIT_FAIL;
	}
	if (s.server) {
		struct sockaddr_storage ss;

		if (iwt_addr_resolve("127.0.0.1", s.port, true, &ss, NULL) != 0 ||
		    iwcm_create_id(s.v.cm_ch, &s.v.listen_id, NULL, IWCM_PS_TCP) != 0 ||
		    iwt_opt_apply(&s.opt, s.v.listen_id) != 0 ||
		    iwcm_bind_addr(s.v.listen_id, (struct sockaddr *)&ss) != 0 ||
		    iwcm_listen(s.v.listen_id, s.backlog) != 0) {
			iwt_msg(PROG, "listen on 127.0.0.1:%u: %s", s.port, strerror(errno));
			return IWT_EXIT_FAIL;
		}
		printf("iwscale: listening on 127.0.0.1:%u for %d connections\n",
		       iwcm_get_src_port(s.v.listen_id), s.n);
		fflush(stdout);
	}
	rc = run(&s);
	for (int i = 0; i < s.n; i++)
		if (s.c[i].id)
			conn_gone(&s, i);
	iwv_dereg_mr(s.mr);
	iwv_destroy_cq(s.cq);
	iwt_verbs_close(&s.v);
	munmap(s.buf, s.buf_len);
	free(s.c);
	free(s.by_qpn_idx);
	return rc;
}
