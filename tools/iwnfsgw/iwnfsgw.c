/* SPDX-License-Identifier: MIT */
/*
 * iwnfsgw.c - NFS over iWARP without an RDMA NIC: a gateway between ONC RPC
 * over TCP (RFC 5531 §11 record marking) and RPC-over-RDMA version 1
 * (RFC 8166, RFC 8267 for NFS, RFC 8797 for the connection private data) on
 * the userspace iWARP stack.
 *
 * Theory of operation.
 *
 *   server mode   NFS/RDMA clients ──iWARP──▶ iwnfsgw server ──TCP──▶ NFS server
 *   client mode   NFS clients ──TCP──▶ iwnfsgw client ──iWARP──▶ NFS/RDMA server
 *
 * Both modes are one thread around one libevent event_base.  The TCP side
 * uses bufferevents; the whole RPC-over-RDMA transport (verbs completions,
 * connection manager, timers) sits behind the one fd of the rpcrdma ctx,
 * registered as a persistent EV_READ event whose callback runs
 * rpcrdma_ctx_process(ctx, 0).  After every processing round a timer is
 * armed from rpcrdma_ctx_timeout_ms, and after the gateway posts work
 * (rpcrdma_call, rpcrdma_reply, connect) a "kick" event runs one more round
 * at once, so work queued outside the fd's readiness is never left waiting.
 *
 * The transport does the RPC-over-RDMA work: it chooses inline, Read chunks,
 * Write chunks, the Reply chunk or responder-provided Read chunks with the
 * NFS binding (rpcrdma_nfs_ulb), pulls and pushes the chunk data, and keeps
 * the credits.  The gateway moves whole RPC messages, unchanged (same XID),
 * between a TCP connection and an RPC-over-RDMA connection, pairing them one
 * to one, so XIDs never collide and no rewriting is needed (gw_server.c,
 * gw_client.c).
 *
 * Logging: one line per connection event on stderr; -v adds per-call detail.
 * --stats prints per-connection counters (the transport's rpcrdma_stats plus
 * the gateway's calls, octets and errors) every SECONDS, when a connection
 * closes, and at exit.  SIGINT/SIGTERM stop the loop; the totals are printed
 * and everything is closed.  Exit status 0, 1 runtime error, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include <iwarp/iw_err.h>
#include <iwarp/rpcrdma.h>
#include <iwarp/rpcrdma_nfs.h>

#include "gw_int.h"
#include "iw_log.h"
#include "iwt_err.h"
#include "iwt_num.h"

#ifndef IWARP_VERSION
#define IWARP_VERSION "0.1.0"
#endif

/* ---------------------------------------------------------------------- */
/* Logging                                                                 */
/* ---------------------------------------------------------------------- */

static void vlog_line(const char *fmt, va_list ap)
{
	char buf[1024];
	struct timespec ts;
	struct tm tm;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03ld %s: ", tm.tm_hour, tm.tm_min,
		     tm.tm_sec, ts.tv_nsec / 1000000, GW_PROG);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", buf);
}

void gw_log(struct gw *gw, const char *fmt, ...)
{
	va_list ap;

	(void)gw;
	va_start(ap, fmt);
	vlog_line(fmt, ap);
	va_end(ap);
}

void gw_debug(struct gw *gw, const char *fmt, ...)
{
	va_list ap;

	if (!gw || gw->o.verbose < 1)
		return;
	va_start(ap, fmt);
	vlog_line(fmt, ap);
	va_end(ap);
}

static void rdma_log(void *arg, const char *line)
{
	struct gw *gw = arg;

	gw_log(gw, "rpcrdma: %s", line);
}

/* ---------------------------------------------------------------------- */
/* The event loop around the rpcrdma ctx                                   */
/* ---------------------------------------------------------------------- */

static void process_round(struct gw *gw)
{
	int i, n, t;

	/* a few rounds while callbacks ran: they may have queued more work */
	for (i = 0; i < 8; i++) {
		n = rpcrdma_ctx_process(gw->ctx, 0);
		if (n < 0) {
			gw_debug(gw, "rpcrdma_ctx_process: %s", rpcrdma_errname(n));
			break;
		}
		if (n == 0)
			break;
	}
	t = rpcrdma_ctx_timeout_ms(gw->ctx);
	/* --poll-ms (off by default): run the transport at least that often
	 * while connections exist, whatever its fd says (a debugging aid) */
	if (gw->nconns && gw->o.poll_ms && (t < 0 || t > (int)gw->o.poll_ms))
		t = (int)gw->o.poll_ms;
	if (t >= 0) {
		struct timeval tv = {.tv_sec = t / 1000, .tv_usec = (t % 1000) * 1000};

		evtimer_add(gw->ev_timer, &tv);
	} else {
		evtimer_del(gw->ev_timer);
	}
}

static void on_ctx_event(evutil_socket_t fd, short what, void *arg)
{
	struct gw *gw = arg;

	if (gw->ctx)
		process_round(gw);
}

void gw_kick(struct gw *gw)
{
	/* activating an active event again is a no-op in libevent */
	if (gw->ev_kick && gw->ctx)
		event_active(gw->ev_kick, EV_TIMEOUT, 0);
}

/* ---------------------------------------------------------------------- */
/* Stats                                                                   */
/* ---------------------------------------------------------------------- */

static void human(uint64_t v, char *buf, size_t len)
{
	if (v >= (10ull << 30))
		snprintf(buf, len, "%.1fG", (double)v / (1 << 30));
	else if (v >= (10ull << 20))
		snprintf(buf, len, "%.1fM", (double)v / (1 << 20));
	else if (v >= (10ull << 10))
		snprintf(buf, len, "%.1fK", (double)v / (1 << 10));
	else
		snprintf(buf, len, "%" PRIu64, v);
}

void gw_report_print(struct gw *gw, const struct gw_conn_report *r, const char *what)
{
	char bc[16], br[16], bi[16], brc[16], bwc[16], byc[16], bp[16];

	human(r->c.bytes_calls, bc, sizeof(bc));
	human(r->c.bytes_replies, br, sizeof(br));
	if (!r->have_rdma) {
		gw_log(gw,
		       "stats %s conn %u %s (%s): calls %" PRIu64 " replies %" PRIu64
		       " errors %" PRIu64 " bytes call %s reply %s",
		       what, r->id, r->peer, r->state, r->c.calls, r->c.replies, r->c.errors, bc,
		       br);
		return;
	}
	human(r->rs.bytes_inline, bi, sizeof(bi));
	human(r->rs.bytes_read_chunk, brc, sizeof(brc));
	human(r->rs.bytes_write_chunk, bwc, sizeof(bwc));
	human(r->rs.bytes_reply_chunk, byc, sizeof(byc));
	human(r->rs.bytes_rprc, bp, sizeof(bp));
	gw_log(gw,
	       "stats %s conn %u %s (%s): calls %" PRIu64 " replies %" PRIu64 " errors %" PRIu64
	       " bc %" PRIu64 " bytes call %s reply %s | rdma inline %s read-chunk %s "
	       "write-chunk %s reply-chunk %s rprc %s | msgs inline %" PRIu64 " long-call %" PRIu64
	       " long-reply %" PRIu64 " rprc %" PRIu64 " send-inv %" PRIu64 " rdma-error %" PRIu64
	       "/%" PRIu64 " discarded %" PRIu64 " retransmitted %" PRIu64 " reconnects %" PRIu64
	       " credit-waits %" PRIu64,
	       what, r->id, r->peer, r->state, r->c.calls, r->c.replies, r->c.errors, r->c.bc_calls,
	       bc, br, bi, brc, bwc, byc, bp, r->rs.msgs_inline, r->rs.msgs_long_call,
	       r->rs.msgs_long_reply, r->rs.msgs_rprc, r->rs.send_inv, r->rs.err_sent,
	       r->rs.err_received, r->rs.discarded, r->rs.retransmitted,
	       r->rs.reconnects + r->c.reconnects, r->rs.credit_waits);
}

static void add_rs(struct rpcrdma_stats *t, const struct rpcrdma_stats *s)
{
	const uint64_t *a = (const uint64_t *)(const void *)s;
	uint64_t *b = (uint64_t *)(void *)t;
	size_t i;

	/* every member is a uint64_t counter */
	for (i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		b[i] += a[i];
}

static void add_counters(struct gw_counters *t, const struct gw_counters *c)
{
	t->calls += c->calls;
	t->replies += c->replies;
	t->bytes_calls += c->bytes_calls;
	t->bytes_replies += c->bytes_replies;
	t->errors += c->errors;
	t->bc_calls += c->bc_calls;
	t->reconnects += c->reconnects;
	t->dropped += c->dropped;
}

void gw_conn_retire(struct gw *gw, const struct gw_conn_report *r)
{
	add_counters(&gw->closed, &r->c);
	if (r->have_rdma)
		add_rs(&gw->closed_rs, &r->rs);
	if (gw->o.stats)
		gw_report_print(gw, r, "closed");
}

static void print_stats(struct gw *gw, const char *what)
{
	struct gw_conn_report tot = {0};

	if (gw->o.mode == GW_SERVER)
		gw_server_stats(gw, what);
	else
		gw_client_stats(gw, what);
	if (!strcmp(what, "exit")) {
		tot.id = 0;
		tot.peer = "all";
		tot.state = "closed connections";
		tot.c = gw->closed;
		tot.have_rdma = true;
		tot.rs = gw->closed_rs;
		gw_report_print(gw, &tot, "total");
	}
}

static void on_stats(evutil_socket_t fd, short what, void *arg)
{
	print_stats(arg, "periodic");
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct gw *gw = arg;

	gw_log(gw, "%s: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
	gw->stopping = true;
	event_base_loopexit(gw->base, NULL);
}

/* The transport's configuration from the options; *verbs (the engine and
 * engine thread of --engine / --engine-thread) must live until
 * rpcrdma_ctx_create has read it. */
static void gw_rdma_config(const struct gw *gw, struct rpcrdma_config *cfg,
			   struct iwv_context_attr *verbs)
{
	rpcrdma_config_init(cfg);
	iwt_opt_context_attr(&gw->o.iw, verbs);
	cfg->verbs = verbs;
	cfg->inline_recv = gw->o.inline_size;
	cfg->inline_send = gw->o.inline_size;
	cfg->credits = gw->o.credits;
	cfg->bc_credits = gw->o.bc_credits;
	/* server: forward the backend's callbacks unless told not to */
	if (gw->o.mode == GW_SERVER && !gw->o.bc_set)
		cfg->bc_credits = 8;
	cfg->no_send_inv = gw->o.no_send_inv;
	cfg->rprc = gw->o.rprc;
	cfg->max_msg = gw->o.max_record;
	cfg->ulb = &rpcrdma_nfs_ulb;
	cfg->ulb_arg = NULL;
	cfg->cm = &gw->o.iw.cm;
	cfg->log = rdma_log;
	cfg->log_arg = (void *)(uintptr_t)gw;
	if (gw->o.mode == GW_CLIENT)
		cfg->reconnects = gw->o.backend_retries;
	if (gw->o.mode == GW_CLIENT && gw->o.retry_ms)
		cfg->reconnect_ms = gw->o.retry_ms;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                            */
/* ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	/* split: ISO C caps string literals at 4095 octets */
	fputs("Usage: iwnfsgw server [--listen ADDR[:PORT]] [--backend ADDR[:PORT]] [OPTION]...\n"
	      "       iwnfsgw client --remote ADDR[:PORT] [--listen ADDR[:PORT]] [OPTION]...\n"
	      "\n"
	      "NFS over iWARP without an RDMA NIC: a gateway between ONC RPC over TCP and\n"
	      "RPC-over-RDMA version 1 (RFC 8166, NFS binding RFC 8267) on the iwarp\n"
	      "software iWARP stack (RDMAP/DDP/MPA over TCP).\n"
	      "\n"
	      "server  accepts NFS/RDMA connections (Linux `mount -o rdma,port=20049`, or\n"
	      "        iwnfsgw client) and forwards every RPC, of any program and version,\n"
	      "        as record-marked RPC over TCP to the backend NFS server (knfsd,\n"
	      "        nfs-ganesha...), one backend connection per client; replies go back\n"
	      "        inline, through Write chunks (READ data), the Reply chunk or, when\n"
	      "        both sides enabled --rprc, a responder-provided Read chunk.\n"
	      "client  accepts NFS clients over TCP and carries each of their calls as\n"
	      "        NFS/RDMA to the remote (iwnfsgw server, a Linux NFS server over siw\n"
	      "        or an RNIC), one RPC-over-RDMA connection per client connection.\n"
	      "        MOUNT and portmap are NOT carried: the NFSv3 client must use the\n"
	      "        server's MOUNT port over TCP directly (libnfs: mountport=PORT in the\n"
	      "        URL, same host as the gateway; Linux: -o mountaddr=SERVER,\n"
	      "        mountport=PORT,mountproto=tcp).  NFSv4 needs no MOUNT.\n"
	      "\n"
	      "Addresses: ADDR[:PORT], [IPV6]:PORT, or a host name; PORT alone means\n"
	      "the default address.\n"
	      "  -l, --listen ADDR[:PORT]  server: iWARP address to accept on (default\n"
	      "                            0.0.0.0:20049); client: TCP address to accept\n"
	      "                            NFS clients on (default 127.0.0.1:2049)\n"
	      "  -b, --backend ADDR[:PORT] server: the NFS server over TCP (default\n"
	      "                            127.0.0.1:2049)\n"
	      "  -r, --remote ADDR[:PORT]  client: the NFS/RDMA server (port default 20049)\n"
	      "\n",
	      f);
	fputs("RPC-over-RDMA:\n"
	      "      --credits N          client: credits (calls in flight) to ask for per\n"
	      "                           connection; server: most granted, 1-1024\n"
	      "                           (default 32)\n"
	      "      --inline N           receive buffer size advertised (RFC 8797) and\n"
	      "                           largest inline message sent, 1024-1048576\n"
	      "                           (default 4096); larger messages use chunks\n"
	      "      --rprc               enable responder-provided Read chunks (our\n"
	      "                           extension; used only when both sides enable it;\n"
	      "                           default off)\n"
	      "      --no-send-inv        neither accept nor use Send With Invalidate\n"
	      "      --backchannel N      client: backchannel credits offered (NFSv4.1\n"
	      "                           callbacks; default 0 = none); server: most\n"
	      "                           callbacks in flight toward a client (default 8;\n"
	      "                           0 = drop the backend's callbacks)\n"
	      "      --max-record N       largest RPC message accepted or built, call or\n"
	      "                           reply, 4096 to 64M with K/M suffixes (default\n"
	      "                           4M+64K); bounds every allocation a peer drives\n"
	      "      --backend-retries N  server: backend reconnect attempts before the\n"
	      "                           outstanding calls are answered SYSTEM_ERR;\n"
	      "                           client: RDMA reconnect attempts after a loss\n"
	      "                           (default 5; 0 = none)\n"
	      "      --retry-ms MS        spacing of those attempts (default 500)\n"
	      "      --call-timeout MS    client: answer a call SYSTEM_ERR when its reply\n"
	      "                           has not come after MS (default 0 = wait)\n"
	      "      --poll-ms MS         while connections exist, run the transport at\n"
	      "                           least every MS even if its fd stays quiet\n"
	      "                           (default 0 = only when the fd or its timer\n"
	      "                           says so; a debugging aid)\n"
	      "\n"
	      "Output:\n"
	      "      --stats[=SECONDS]    per-connection counters (calls, octets by\n"
	      "                           mechanism, errors) when a connection closes and\n"
	      "                           at exit, and every SECONDS if given\n"
	      "  -v, --verbose            more detail (per call with -vv)\n"
	      "  -h, --help               show this help and exit\n"
	      "  -V, --version            show the version and exit\n"
	      "\n" IWT_NUM_HELP "\n",
	      f);
	iwt_opt_help(f);
	fputs("  (--ird/--ord: the transport sizes RDMA Read queues itself; accepted\n"
	      "  and ignored.)\n"
	      "\n"
	      "Examples:\n"
	      "  iwnfsgw server --listen 0.0.0.0:20049 --backend 127.0.0.1:2049 --stats=10\n"
	      "  mount -t nfs -o rdma,port=20049,vers=3 GATEWAY:/export /mnt\n"
	      "  iwnfsgw client --listen 127.0.0.1:12049 --remote nfs-server:20049\n"
	      "  nfs-ls 'nfs://127.0.0.1/export/?version=4&nfsport=12049'\n"
	      "\n"
	      "Exit status:\n"
	      "  0  stopped by SIGINT or SIGTERM\n"
	      "  1  runtime error (cannot listen, cannot start the transport)\n"
	      "  2  bad command line\n"
	      "\n"
	      "See iwnfsgw(1) and docs/nfs-gateway.md.\n",
	      f);
}

enum {
	OPT_CREDITS = 0x100,
	OPT_INLINE,
	OPT_RPRC,
	OPT_NO_SEND_INV,
	OPT_BACKCHANNEL,
	OPT_MAX_RECORD,
	OPT_RETRIES,
	OPT_RETRY_MS,
	OPT_CALL_TIMEOUT,
	OPT_STATS,
	OPT_POLL_MS,
};

static const struct option long_opts[] = {
	{"listen", required_argument, NULL, 'l'},
	{"backend", required_argument, NULL, 'b'},
	{"remote", required_argument, NULL, 'r'},
	{"credits", required_argument, NULL, OPT_CREDITS},
	{"inline", required_argument, NULL, OPT_INLINE},
	{"rprc", no_argument, NULL, OPT_RPRC},
	{"no-send-inv", no_argument, NULL, OPT_NO_SEND_INV},
	{"backchannel", required_argument, NULL, OPT_BACKCHANNEL},
	{"max-record", required_argument, NULL, OPT_MAX_RECORD},
	{"backend-retries", required_argument, NULL, OPT_RETRIES},
	{"retry-ms", required_argument, NULL, OPT_RETRY_MS},
	{"call-timeout", required_argument, NULL, OPT_CALL_TIMEOUT},
	{"stats", optional_argument, NULL, OPT_STATS},
	{"poll-ms", required_argument, NULL, OPT_POLL_MS},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	IWT_OPT_LONG,
	{NULL, 0, NULL, 0},
};

#define bad_arg(...)   iwt_bad_arg(GW_PROG, __VA_ARGS__)
#define parse_u64(...) iwt_num_u64(GW_PROG, __VA_ARGS__)

/* ADDR[:PORT], [V6]:PORT, :PORT or PORT (iwt_addr_split), resolved. */
static int parse_addr(const char *opt, const char *s, const char *def_host, uint16_t def_port,
		      bool passive, struct gw_addr *a)
{
	struct iwt_hostport hp;
	const char *why, *host;
	int rc;

	if (iwt_addr_split(s, &hp, &why))
		return bad_arg(opt, s, why);
	host = hp.host[0] ? hp.host : def_host;
	rc = iwt_addr_resolve(host, hp.has_port ? hp.port : def_port, passive, &a->ss, &a->len);
	if (rc) {
		fprintf(stderr, "%s: cannot resolve '%s' for %s: %s\n", GW_PROG, host, opt,
			gai_strerror(rc));
		return -1;
	}
	iwt_addr_format((struct sockaddr *)&a->ss, a->text, sizeof(a->text));
	return 0;
}

/* 0 to run, -1 exit 0 (help/version), else the usage exit status. */
static int parse_args(int argc, char **argv, struct gw_opts *o)
{
	const char *listen = NULL, *backend = NULL, *remote = NULL;
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->credits = 32;
	o->inline_size = 4096;
	o->max_record = GW_DEFAULT_MAX_RECORD;
	o->backend_retries = 5;
	o->retry_ms = 500;
	o->poll_ms = 0;
	iwt_opt_init(&o->iw);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:b:r:vhV", long_opts, NULL)) != -1) {
		if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
			if (iwt_opt_parse(&o->iw, GW_PROG, c, optarg))
				return IWT_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'b':
			backend = optarg;
			break;
		case 'r':
			remote = optarg;
			break;
		case OPT_CREDITS:
			if (parse_u64("--credits", optarg, 1, 1024, 0, &v))
				return IWT_EXIT_USAGE;
			o->credits = (uint16_t)v;
			break;
		case OPT_INLINE:
			if (parse_u64("--inline", optarg, 1024, 1 << 20, IWT_NUM_SUFFIX, &v))
				return IWT_EXIT_USAGE;
			o->inline_size = (uint32_t)v;
			break;
		case OPT_RPRC:
			o->rprc = true;
			break;
		case OPT_NO_SEND_INV:
			o->no_send_inv = true;
			break;
		case OPT_BACKCHANNEL:
			if (parse_u64("--backchannel", optarg, 0, 1024, 0, &v))
				return IWT_EXIT_USAGE;
			o->bc_credits = (uint16_t)v;
			o->bc_set = true;
			break;
		case OPT_MAX_RECORD:
			if (parse_u64("--max-record", optarg, GW_MIN_MAX_RECORD, GW_MAX_MAX_RECORD,
				      IWT_NUM_SUFFIX, &v))
				return IWT_EXIT_USAGE;
			o->max_record = (uint32_t)v;
			break;
		case OPT_RETRIES:
			if (parse_u64("--backend-retries", optarg, 0, 1000, 0, &v))
				return IWT_EXIT_USAGE;
			o->backend_retries = (int)v;
			break;
		case OPT_RETRY_MS:
			if (parse_u64("--retry-ms", optarg, 1, 600000, 0, &v))
				return IWT_EXIT_USAGE;
			o->retry_ms = (uint32_t)v;
			break;
		case OPT_CALL_TIMEOUT:
			if (parse_u64("--call-timeout", optarg, 0, 86400000, 0, &v))
				return IWT_EXIT_USAGE;
			o->call_timeout = (uint32_t)v;
			break;
		case OPT_STATS:
			o->stats = true;
			if (optarg) {
				if (parse_u64("--stats", optarg, 1, 86400, 0, &v))
					return IWT_EXIT_USAGE;
				o->stats_secs = (int)v;
			}
			break;
		case OPT_POLL_MS:
			if (parse_u64("--poll-ms", optarg, 0, 60000, 0, &v))
				return IWT_EXIT_USAGE;
			o->poll_ms = (uint32_t)v;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("%s %s (RPC-over-RDMA v1, RFC 8166/8267/8797)\n", GW_PROG,
			       IWARP_VERSION);
			return -1;
		case ':':
			fprintf(stderr, "%s: option '%s' needs a value\n", GW_PROG,
				argv[optind - 1]);
			return IWT_EXIT_USAGE;
		default:
			fprintf(stderr, "%s: unknown option '%s' (try --help)\n", GW_PROG,
				argv[optind - 1]);
			return IWT_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: missing mode: server or client (try --help)\n", GW_PROG);
		return IWT_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "server")) {
		o->mode = GW_SERVER;
	} else if (!strcmp(argv[optind], "client")) {
		o->mode = GW_CLIENT;
	} else {
		fprintf(stderr, "%s: unknown mode '%s': server or client\n", GW_PROG, argv[optind]);
		return IWT_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", GW_PROG, argv[optind + 1]);
		return IWT_EXIT_USAGE;
	}
	if (o->mode == GW_SERVER) {
		if (remote) {
			fprintf(stderr, "%s: --remote is for client mode (server: --backend)\n",
				GW_PROG);
			return IWT_EXIT_USAGE;
		}
		if (parse_addr("--listen", listen ? listen : "0.0.0.0", "0.0.0.0",
			       GW_DEFAULT_RDMA_PORT, true, &o->listen) ||
		    parse_addr("--backend", backend ? backend : "127.0.0.1", "127.0.0.1",
			       GW_DEFAULT_NFS_PORT, false, &o->peer))
			return IWT_EXIT_USAGE;
	} else {
		if (backend) {
			fprintf(stderr, "%s: --backend is for server mode (client: --remote)\n",
				GW_PROG);
			return IWT_EXIT_USAGE;
		}
		if (!remote) {
			fprintf(stderr, "%s: client mode needs --remote ADDR[:PORT]\n", GW_PROG);
			return IWT_EXIT_USAGE;
		}
		if (parse_addr("--listen", listen ? listen : "127.0.0.1", "127.0.0.1",
			       GW_DEFAULT_NFS_PORT, true, &o->listen) ||
		    parse_addr("--remote", remote, "127.0.0.1", GW_DEFAULT_RDMA_PORT, false,
			       &o->peer))
			return IWT_EXIT_USAGE;
	}
	return 0;
}

static void trace_sink(void *ctx, enum iw_log_level level, const char *msg)
{
	gw_log(NULL, "trace: %s", msg);
}

int main(int argc, char **argv)
{
	struct gw gw;
	struct rpcrdma_config cfg;
	struct iwv_context_attr verbs;
	char desc[128];
	int rc;

	memset(&gw, 0, sizeof(gw));
	rc = parse_args(argc, argv, &gw.o);
	if (rc)
		return rc < 0 ? 0 : rc;
	/* Every call or reply of 1 MiB is copied through a buffer of that size
	 * (record, transport, evbuffer).  glibc would mmap or trim each one
	 * and the next would page-fault its way back in: keep such buffers in
	 * the heap instead (measured: a third of the client gateway's CPU). */
	mallopt(M_MMAP_THRESHOLD, (int)(gw.o.max_record + (1u << 20)));
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	signal(SIGPIPE, SIG_IGN);
	if (gw.o.iw.cm.trace)
		iw_log_set(trace_sink, NULL, IW_LOG_TRACE);

	gw.base = event_base_new();
	if (!gw.base) {
		fprintf(stderr, "%s: cannot create the event loop\n", GW_PROG);
		return IWT_EXIT_FAIL;
	}
	gw_rdma_config(&gw, &cfg, &verbs);
	gw.ctx = rpcrdma_ctx_create(&cfg);
	if (!gw.ctx) {
		fprintf(stderr, "%s: cannot start the RPC-over-RDMA transport: %s\n", GW_PROG,
			strerror(errno));
		event_base_free(gw.base);
		return IWT_EXIT_FAIL;
	}
	gw.ev_fd =
		event_new(gw.base, rpcrdma_ctx_fd(gw.ctx), EV_READ | EV_PERSIST, on_ctx_event, &gw);
	gw.ev_timer = evtimer_new(gw.base, on_ctx_event, &gw);
	gw.ev_kick = event_new(gw.base, -1, 0, on_ctx_event, &gw);
	gw.ev_sig[0] = evsignal_new(gw.base, SIGINT, on_signal, &gw);
	gw.ev_sig[1] = evsignal_new(gw.base, SIGTERM, on_signal, &gw);
	if (!gw.ev_fd || !gw.ev_timer || !gw.ev_kick || !gw.ev_sig[0] || !gw.ev_sig[1] ||
	    event_add(gw.ev_fd, NULL) || event_add(gw.ev_sig[0], NULL) ||
	    event_add(gw.ev_sig[1], NULL)) {
		fprintf(stderr, "%s: cannot set up the event loop\n", GW_PROG);
		rc = IWT_EXIT_FAIL;
		goto out;
	}
	if (gw.o.stats && gw.o.stats_secs) {
		struct timeval tv = {.tv_sec = gw.o.stats_secs};

		gw.ev_stats = event_new(gw.base, -1, EV_PERSIST, on_stats, &gw);
		if (gw.ev_stats)
			event_add(gw.ev_stats, &tv);
	}

	iwt_opt_describe(&gw.o.iw, desc, sizeof(desc));
	if (gw.o.mode == GW_SERVER) {
		gw_log(&gw,
		       "server: iWARP on %s -> NFS backend %s (credits %u, inline %u, rprc %s, "
		       "send-inv %s, %s)",
		       gw.o.listen.text, gw.o.peer.text, gw.o.credits, gw.o.inline_size,
		       gw.o.rprc ? "on" : "off", gw.o.no_send_inv ? "off" : "on", desc);
		rc = gw_server_start(&gw);
	} else {
		gw_log(&gw,
		       "client: TCP on %s -> NFS/RDMA remote %s (credits %u, inline %u, rprc %s, "
		       "send-inv %s, %s)",
		       gw.o.listen.text, gw.o.peer.text, gw.o.credits, gw.o.inline_size,
		       gw.o.rprc ? "on" : "off", gw.o.no_send_inv ? "off" : "on", desc);
		rc = gw_client_start(&gw);
	}
	if (rc) {
		rc = IWT_EXIT_FAIL;
		goto out;
	}
	process_round(&gw);
	if (event_base_dispatch(gw.base) < 0) {
		gw_log(&gw, "event loop failed");
		gw.exit_code = IWT_EXIT_FAIL;
	}
	if (gw.o.stats)
		print_stats(&gw, "exit");
	rc = gw.exit_code;
out:
	/* first pass: close listeners and connections, the ctx still runs */
	gw.stopping = true;
	if (gw.o.mode == GW_SERVER)
		gw_server_stop(&gw);
	else
		gw_client_stop(&gw);
	if (gw.ev_stats)
		event_free(gw.ev_stats);
	if (gw.ev_fd)
		event_free(gw.ev_fd);
	if (gw.ev_timer)
		event_free(gw.ev_timer);
	if (gw.ev_kick)
		event_free(gw.ev_kick);
	if (gw.ev_sig[0])
		event_free(gw.ev_sig[0]);
	if (gw.ev_sig[1])
		event_free(gw.ev_sig[1]);
	/* closes every connection; outstanding calls complete with IW_ERPC_SHUTDOWN */
	rpcrdma_ctx_destroy(gw.ctx);
	gw.ctx = NULL;
	/* second pass (ctx gone): free what is left */
	if (gw.o.mode == GW_SERVER)
		gw_server_stop(&gw);
	else
		gw_client_stop(&gw);
	event_base_free(gw.base);
	gw_log(&gw, "stopped");
	return rc;
}
