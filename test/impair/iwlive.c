/* SPDX-License-Identifier: MIT */
/*
 * iwlive.c - the peer of the liveness tests (test/impair/impair_liveness.py,
 * issue 16 deliverables 3 and 4): moves data over the iwarp stack and
 * accounts for every work request, so that a test can kill, stop or cut off
 * the other end and check what this end saw.  A test program, not a tool.
 *
 *   iwlive server [-a ADDR] [-p PORT] [-P] [--depth D] [--size N] [iWARP options]
 *   iwlive client -a ADDR [-p PORT] [--op write|read|send] [--size N]
 *                 [--depth D] [--seconds S] [iWARP options]
 *
 * Theory of operation.  One thread, non-blocking CM channel, CQs polled in a
 * loop with a 1 ms sleep when nothing happened.  Every work request is
 * signalled and counted when posted; every completion is counted by status
 * (ok, flushed, other).  A connection that ends (DISCONNECTED, CONNECT_ERROR,
 * a failed completion) is drained until every posted work request has
 * completed, for at most DRAIN_MS; then its objects are destroyed, each call
 * checked (a work request never completed, or a destroy that fails - an MR,
 * i.e. an STag, still in use - is a failure).  One JSON line per connection
 * on stdout:
 *   {"event":"end","role":"server","posted":P,"ok":O,"flushed":F,"err":E,
 *    "unfinished":U,"destroy_ok":true,"cause":"...","ms_since_ok":T,
 *    "rss_kb":R}
 * The server (-P: persistent, until SIGTERM/SIGINT) accepts every
 * connection with private data {u64 addr, u32 rkey, u32 length} (little
 * endian) naming a buffer of depth x size octets that the peer may read and
 * write, and keeps 2 x depth receives of `size` octets posted.  The client
 * keeps `depth` work requests of `op` in flight until --seconds have passed,
 * then disconnects; on a failure it drains, reports and exits.
 *
 * Exit status: 0 the run ended normally (server: stopped by a signal) and
 * every work request completed; 3 the connection was lost (client) but
 * every work request completed; 1 a work request never completed, a destroy
 * failed, or a setup step failed; 2 bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_num.h"
#include "iwt_opt.h"
#include "iwt_verbs.h"

#define PROG	 "iwlive"
#define DRAIN_MS 10000 /* a dead connection's work requests must complete within */
#define PD_LEN	 16

enum op { OP_WRITE, OP_READ, OP_SEND };

struct conn {
	struct conn *next;
	struct iwcm_id *id;
	struct iwv_cq *cq;
	struct iwv_mr *mr;
	uint8_t *buf;
	size_t len;
	bool up, down, reported;
	uint64_t posted, ok, flushed, err;
	uint64_t down_ns, last_ok_ns;
	char cause[96];
	/* client: the server's buffer */
	uint64_t raddr;
	uint32_t rkey, rlen;
};

static struct {
	bool server, persistent;
	const char *addr;
	unsigned port;
	enum op op;
	uint32_t size, depth;
	double seconds;
	struct iwt_opt iw;
} cfg;

static struct iwt_verbs v;
static struct conn *conns;
static volatile sig_atomic_t stop;
static int failures;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void set_cause(struct conn *c, const char *prefix, const char *what)
{
	if (!c->cause[0])
		snprintf(c->cause, sizeof(c->cause), "%s%s", prefix, what);
}

static void mark_down(struct conn *c, const char *prefix, const char *what)
{
	set_cause(c, prefix, what);
	if (!c->down) {
		c->down = true;
		c->down_ns = iwt_now_ns();
	}
}

static uint64_t done_count(const struct conn *c)
{
	return c->ok + c->flushed + c->err;
}

/* ---------------------------------------------------------------------- */
/* Work requests                                                           */
/* ---------------------------------------------------------------------- */

static int post_recv(struct conn *c, uint32_t slot)
{
	struct iwv_sge sge = {(uintptr_t)(c->buf + (size_t)slot * cfg.size), cfg.size, c->mr->lkey};
	struct iwv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	if (iwv_post_recv(c->id->qp, &wr, &bad))
		return -1;
	c->posted++;
	return 0;
}

static int post_op(struct conn *c, uint32_t slot)
{
	struct iwv_sge sge = {(uintptr_t)(c->buf + (size_t)slot * cfg.size), cfg.size, c->mr->lkey};
	struct iwv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IWV_SEND_SIGNALED;
	wr.opcode = cfg.op == OP_WRITE	? IWV_WR_RDMA_WRITE
		    : cfg.op == OP_READ ? IWV_WR_RDMA_READ
					: IWV_WR_SEND;
	wr.wr.rdma.remote_addr = c->raddr + (uint64_t)slot * cfg.size;
	wr.wr.rdma.rkey = c->rkey;
	if (iwv_post_send(c->id->qp, &wr, &bad))
		return -1;
	c->posted++;
	return 0;
}

/* Poll the CQ; the server reposts consumed receives, the client refills. */
static bool conn_poll(struct conn *c)
{
	struct iwv_wc wc[32];
	int n = iwv_poll_cq(c->cq, 32, wc);
	bool any = n > 0;

	for (int i = 0; i < n; i++) {
		if (wc[i].status == IWV_WC_SUCCESS) {
			c->ok++;
			c->last_ok_ns = iwt_now_ns();
			if (!c->down && cfg.server && post_recv(c, (uint32_t)wc[i].wr_id))
				mark_down(c, "", "repost failed");
			continue;
		}
		if (wc[i].status == IWV_WC_WR_FLUSH_ERR)
			c->flushed++;
		else
			c->err++;
		mark_down(c, "work request: ", iwv_wc_status_str(wc[i].status));
	}
	if (!cfg.server && c->up && !c->down && !stop) {
		while (c->posted - done_count(c) < cfg.depth) {
			if (post_op(c, (uint32_t)(c->posted % cfg.depth))) {
				mark_down(c, "", "post failed");
				break;
			}
			any = true;
		}
	}
	return any;
}

/* ---------------------------------------------------------------------- */
/* Connections                                                             */
/* ---------------------------------------------------------------------- */

static struct conn *conn_new(struct iwcm_id *id)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct iwv_qp_init_attr qa;
	uint32_t slots = cfg.server ? 2 * cfg.depth : cfg.depth;

	if (!c)
		return NULL;
	c->id = id;
	id->context = c;
	c->len = (size_t)slots * cfg.size;
	c->buf = calloc(1, c->len);
	c->cq = iwv_create_cq(v.ctx, (int)(slots * 2 + 8), c, NULL, 0);
	if (c->buf)
		c->mr = iwv_reg_mr(v.pd, c->buf, c->len,
				   IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ |
					   IWV_ACCESS_REMOTE_WRITE);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IWV_QPT_RC;
	qa.cap.max_send_wr = cfg.depth + 4;
	qa.cap.max_recv_wr = slots + 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.rnr_hold_ms = 1000;
	if (!c->buf || !c->cq || !c->mr || iwcm_create_qp(id, v.pd, &qa)) {
		fprintf(stderr, "%s: connection set-up failed: %s\n", PROG, strerror(errno));
		if (c->mr)
			iwv_dereg_mr(c->mr);
		if (c->cq)
			iwv_destroy_cq(c->cq);
		free(c->buf);
		free(c);
		return NULL;
	}
	if (cfg.server)
		for (uint32_t i = 0; i < slots; i++)
			if (post_recv(c, i)) {
				mark_down(c, "", "posting receives failed");
				break;
			}
	c->next = conns;
	conns = c;
	return c;
}

/* Drained (or given up): report and destroy.  true once it is gone. */
static bool conn_finish(struct conn *c, bool force)
{
	uint64_t now = iwt_now_ns();
	uint64_t unfinished = c->posted - done_count(c);
	bool ok = true;

	if (unfinished && !force && now - c->down_ns < (uint64_t)DRAIN_MS * 1000000u)
		return false;
	if (c->id->qp) {
		iwcm_destroy_qp(c->id);
		if (c->id->qp)
			ok = false;
	}
	if (iwcm_destroy_id(c->id))
		ok = false;
	/* the MR (its STag) and the CQ must be free now: nothing holds them */
	if (iwv_dereg_mr(c->mr))
		ok = false;
	if (iwv_destroy_cq(c->cq))
		ok = false;
	printf("{\"event\":\"end\",\"role\":\"%s\",\"posted\":%" PRIu64 ",\"ok\":%" PRIu64
	       ",\"flushed\":%" PRIu64 ",\"err\":%" PRIu64 ",\"unfinished\":%" PRIu64
	       ",\"destroy_ok\":%s,\"cause\":\"%s\",\"ms_since_ok\":%" PRIu64
	       ",\"down_ms\":%" PRIu64 ",\"rss_kb\":%ld}\n",
	       cfg.server ? "server" : "client", c->posted, c->ok, c->flushed, c->err, unfinished,
	       ok ? "true" : "false", c->cause[0] ? c->cause : "closed",
	       c->last_ok_ns ? (c->down_ns - c->last_ok_ns) / 1000000u : 0,
	       c->up ? (now - c->down_ns) / 1000000u : 0, rss_kb());
	fflush(stdout);
	if (unfinished || !ok)
		failures++;
	free(c->buf);
	c->reported = true;
	return true;
}

static void reap(bool force)
{
	for (struct conn **pp = &conns; *pp;) {
		struct conn *c = *pp;

		if ((c->down || force) && conn_finish(c, force)) {
			*pp = c->next;
			free(c);
			continue;
		}
		pp = &c->next;
	}
}

static void pd_put(uint8_t *p, uint64_t addr, uint32_t rkey, uint32_t len)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(addr >> (8 * i));
	for (int i = 0; i < 4; i++) {
		p[8 + i] = (uint8_t)(rkey >> (8 * i));
		p[12 + i] = (uint8_t)(len >> (8 * i));
	}
}

static void pd_get(const uint8_t *p, uint64_t *addr, uint32_t *rkey, uint32_t *len)
{
	*addr = 0;
	*rkey = 0;
	*len = 0;
	for (int i = 0; i < 8; i++)
		*addr |= (uint64_t)p[i] << (8 * i);
	for (int i = 0; i < 4; i++) {
		*rkey |= (uint32_t)p[8 + i] << (8 * i);
		*len |= (uint32_t)p[12 + i] << (8 * i);
	}
}

/* One CM event; false when the program should stop (client: its connection failed to come up). */
static bool cm_event(struct iwcm_event *ev)
{
	struct conn *c = ev->id->context;
	struct iwcm_conn_param p;
	uint8_t pd[PD_LEN];

	switch (ev->event) {
	case IWCM_EVENT_CONNECT_REQUEST:
		c = conn_new(ev->id);
		if (!c) {
			iwcm_reject(ev->id, NULL, 0);
			break;
		}
		pd_put(pd, (uintptr_t)c->buf, c->mr->rkey, (uint32_t)c->len);
		memset(&p, 0, sizeof(p));
		iwt_opt_conn_param(&cfg.iw, &p);
		p.private_data = pd;
		p.private_data_len = PD_LEN;
		if (iwcm_accept(ev->id, &p))
			mark_down(c, "accept: ", strerror(errno));
		break;
	case IWCM_EVENT_ESTABLISHED:
		if (!c)
			break;
		c->up = true;
		c->last_ok_ns = iwt_now_ns();
		if (!cfg.server) {
			if (ev->param.conn.private_data_len < PD_LEN) {
				mark_down(c, "", "no buffer in the private data");
				break;
			}
			pd_get(ev->param.conn.private_data, &c->raddr, &c->rkey, &c->rlen);
			if (c->rlen < (uint64_t)cfg.size * cfg.depth)
				mark_down(c, "", "the server's buffer is too small");
		}
		break;
	case IWCM_EVENT_DISCONNECTED:
		if (c)
			mark_down(c, "disconnected: ",
				  ev->iw_err ? iwv_strerror(ev->iw_err) : "closed");
		break;
	case IWCM_EVENT_CONNECT_ERROR:
	case IWCM_EVENT_UNREACHABLE:
	case IWCM_EVENT_REJECTED:
		if (c)
			mark_down(c, "connect: ", iwcm_event_str(ev->event));
		if (!cfg.server)
			return false;
		break;
	default:
		break;
	}
	return true;
}

static bool cm_poll(void)
{
	struct iwcm_event *ev;
	bool any = false;

	while (iwcm_get_cm_event(v.cm_ch, &ev) == 0) {
		bool go = cm_event(ev);

		any = true;
		iwcm_ack_cm_event(ev);
		if (!go)
			return any;
	}
	return any;
}

static void idle(void)
{
	struct timespec ts = {0, 1000000};

	nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------------- */
/* Roles                                                                   */
/* ---------------------------------------------------------------------- */

static int run_server(void)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	if (iwt_addr_resolve(cfg.addr, (uint16_t)cfg.port, true, &ss, &sl) ||
	    iwcm_create_id(v.cm_ch, &v.listen_id, NULL, IWCM_PS_TCP) ||
	    iwt_opt_apply(&cfg.iw, v.listen_id) ||
	    iwcm_bind_addr(v.listen_id, (struct sockaddr *)&ss) || iwcm_listen(v.listen_id, 16)) {
		fprintf(stderr, "%s: cannot listen on %s port %u: %s\n", PROG, cfg.addr, cfg.port,
			strerror(errno));
		return 1;
	}
	printf("{\"event\":\"listening\",\"port\":%u,\"pid\":%ld,\"rss_kb\":%ld}\n",
	       iwcm_get_src_port(v.listen_id), (long)getpid(), rss_kb());
	fflush(stdout);
	for (bool served = false; !stop;) {
		bool any = cm_poll();

		for (struct conn *c = conns; c; c = c->next) {
			any |= conn_poll(c);
			served |= c->up;
		}
		reap(false);
		if (!cfg.persistent && served && !conns)
			break;
		if (!any)
			idle();
	}
	for (struct conn *c = conns; c; c = c->next) {
		if (!c->down) {
			iwcm_disconnect(c->id);
			mark_down(c, "", "server stopped");
		}
	}
	for (uint64_t end = iwt_now_ns() + 2000000000u; conns && iwt_now_ns() < end;) {
		cm_poll();
		for (struct conn *c = conns; c; c = c->next)
			conn_poll(c);
		reap(false);
		idle();
	}
	reap(true);
	return 0;
}

static int run_client(void)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct iwcm_id *id;
	struct iwcm_event *ev;
	struct iwcm_conn_param p;
	struct conn *c = NULL;
	uint64_t end = 0;
	bool lost = false;

	if (iwt_addr_resolve(cfg.addr, (uint16_t)cfg.port, false, &ss, &sl) ||
	    iwcm_create_id(v.cm_ch, &id, NULL, IWCM_PS_TCP) || iwt_opt_apply(&cfg.iw, id) ||
	    iwcm_resolve_addr(id, NULL, (struct sockaddr *)&ss, 2000)) {
		fprintf(stderr, "%s: cannot resolve %s: %s\n", PROG, cfg.addr, strerror(errno));
		return 1;
	}
	/* ADDR_RESOLVED and ROUTE_RESOLVED come at once */
	for (int step = 0; step < 2; step++) {
		enum iwcm_event_type want =
			step ? IWCM_EVENT_ROUTE_RESOLVED : IWCM_EVENT_ADDR_RESOLVED;

		while (iwcm_get_cm_event(v.cm_ch, &ev) != 0)
			idle();
		if (ev->event != want) {
			fprintf(stderr, "%s: %s\n", PROG, iwcm_event_str(ev->event));
			iwcm_ack_cm_event(ev);
			return 1;
		}
		iwcm_ack_cm_event(ev);
		if (!step && iwcm_resolve_route(id, 2000))
			return 1;
	}
	c = conn_new(id);
	if (!c)
		return 1;
	memset(&p, 0, sizeof(p));
	iwt_opt_conn_param(&cfg.iw, &p);
	if (iwcm_connect(id, &p)) {
		fprintf(stderr, "%s: connect: %s\n", PROG, strerror(errno));
		return 1;
	}
	while (!c->down && !(stop && !c->up)) {
		bool any = cm_poll();

		if (c->up && !end) {
			end = iwt_now_ns() + (uint64_t)(cfg.seconds * 1e9);
			printf("{\"event\":\"established\",\"pid\":%ld}\n", (long)getpid());
			fflush(stdout);
		}
		any |= conn_poll(c);
		if (end && (iwt_now_ns() >= end || stop)) {
			stop = 1;
			if (c->posted == done_count(c)) {
				iwcm_disconnect(id);
				break;
			}
		}
		if (!any)
			idle();
	}
	lost = c->down;
	if (!lost) {
		/* graceful: DISCONNECTED once the peer's FIN came */
		for (uint64_t dl = iwt_now_ns() + (uint64_t)DRAIN_MS * 1000000u;
		     !c->down && iwt_now_ns() < dl;) {
			if (!cm_poll())
				idle();
			conn_poll(c);
		}
		if (!c->down)
			mark_down(c, "", "no DISCONNECTED after disconnect");
		else if (!strncmp(c->cause, "disconnected: closed", 20))
			c->cause[0] = '\0';
	}
	while (!conn_finish(c, false)) {
		cm_poll();
		conn_poll(c);
		idle();
	}
	conns = NULL;
	free(c);
	if (failures)
		return 1;
	return lost ? 3 : 0;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                            */
/* ---------------------------------------------------------------------- */

static void usage(void)
{
	printf("Usage: " PROG " server [-a ADDR] [-p PORT] [-P] [--size N] [--depth D]\n"
	       "       " PROG " client -a ADDR [-p PORT] [--op write|read|send] [--size N]\n"
	       "              [--depth D] [--seconds S]\n"
	       "A test peer that accounts for every work request (see the source).\n\n");
	iwt_opt_help(stdout);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"addr", required_argument, NULL, 'a'},
		{"port", required_argument, NULL, 'p'},
		{"persistent", no_argument, NULL, 'P'},
		{"op", required_argument, NULL, 'o'},
		{"size", required_argument, NULL, 'S'},
		{"depth", required_argument, NULL, 'D'},
		{"seconds", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		IWT_OPT_LONG,
		{NULL, 0, NULL, 0},
	};
	uint64_t n;
	int c, rc;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		usage();
		return argc >= 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	cfg.server = !strcmp(argv[1], "server");
	cfg.addr = cfg.server ? "0.0.0.0" : NULL;
	cfg.port = 7177;
	cfg.size = 65536;
	cfg.depth = 16;
	cfg.seconds = 10;
	iwt_opt_init(&cfg.iw);
	optind = 2;
	while ((c = getopt_long(argc, argv, "a:p:Pt:h", lo, NULL)) != -1) {
		if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
			if (iwt_opt_parse(&cfg.iw, PROG, c, optarg))
				return 2;
			continue;
		}
		switch (c) {
		case 'a':
			cfg.addr = optarg;
			break;
		case 'p':
			if (iwt_num_u64(PROG, "--port", optarg, 0, 65535, 0, &n))
				return 2;
			cfg.port = (unsigned)n;
			break;
		case 'P':
			cfg.persistent = true;
			break;
		case 'o':
			if (!strcmp(optarg, "write"))
				cfg.op = OP_WRITE;
			else if (!strcmp(optarg, "read"))
				cfg.op = OP_READ;
			else if (!strcmp(optarg, "send"))
				cfg.op = OP_SEND;
			else
				return 2;
			break;
		case 'S':
			if (iwt_num_u64(PROG, "--size", optarg, 1, 1u << 24, IWT_NUM_SUFFIX, &n))
				return 2;
			cfg.size = (uint32_t)n;
			break;
		case 'D':
			if (iwt_num_u64(PROG, "--depth", optarg, 1, 256, 0, &n))
				return 2;
			cfg.depth = (uint32_t)n;
			break;
		case 't':
			if (iwt_num_seconds(PROG, "--seconds", optarg, 0.001, 86400, &cfg.seconds))
				return 2;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return 2;
		}
	}
	if (!cfg.addr) {
		fprintf(stderr, "%s: the client needs -a ADDR\n", PROG);
		return 2;
	}
	/* the client's Reads: as many in flight as its depth */
	if (!cfg.server && cfg.op == OP_READ && !cfg.iw.ord)
		cfg.iw.ord = (uint8_t)(cfg.depth > 255 ? 255 : cfg.depth);
	if (cfg.server && !cfg.iw.ird)
		cfg.iw.ird = 64;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (iwt_verbs_open(&v, &cfg.iw, PROG, IWT_VERBS_F_NONBLOCK) != IWT_VERBS_OK) {
		fprintf(stderr, "%s: cannot open the device: %s\n", PROG, strerror(errno));
		return 1;
	}
	rc = cfg.server ? run_server() : run_client();
	if (iwt_verbs_close(&v)) {
		fprintf(stderr, "%s: closing the device failed: %s (objects left)\n", PROG,
			strerror(errno));
		rc = 1;
	}
	if (cfg.server && failures)
		rc = 1;
	return rc;
}
