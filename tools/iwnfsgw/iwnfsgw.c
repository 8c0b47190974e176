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
 * Modes.  This file knows a mode only through its struct gw_mode_ops
 * (gw_int.h): the command word picks gw_server_mode or gw_client_mode, whose
 * fields give the defaults of --listen, of the far side and of
 * --backchannel, and whose functions start the listener, stop it and close,
 * free and name the state of one connection.  The connections themselves
 * (ids, peer, counters, the rpcrdma_conn) are listed here, so --stats and
 * shutdown walk one list whatever the mode.
 *
 * Logging: one line per connection event on stderr; -v adds per-call detail.
 * --stats prints per-connection counters (the transport's rpcrdma_stats plus
 * the gateway's calls, octets and errors) every SECONDS, when a connection
 * closes, and at exit.  SIGINT/SIGTERM stop the loop; the totals are printed
 * and everything is closed by gw_shutdown, the one way out.  Exit status 0,
 * 1 runtime error, 2 usage.
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

void gw_log(struct gw *gw, const char *fmt, ...)
{
	va_list ap;

	(void)gw;
	va_start(ap, fmt);
	iwt_vlog_stamped(GW_PROG, fmt, ap);
	va_end(ap);
}

void gw_debug(struct gw *gw, const char *fmt, ...)
{
	va_list ap;

	if (!gw || gw->o.verbose < 1)
		return;
	va_start(ap, fmt);
	iwt_vlog_stamped(GW_PROG, fmt, ap);
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

/* One stats line: `what` (periodic, closed, exit, total), the connection and its state. */
static void conn_print(struct gw *gw, const struct gw_conn *r, const char *state, const char *what)
{
	char bc[16], br[16], bi[16], brc[16], bwc[16], byc[16], bp[16];

	human(r->c.bytes_calls, bc, sizeof(bc));
	human(r->c.bytes_replies, br, sizeof(br));
	if (!r->have_rs) {
		gw_log(gw,
		       "stats %s conn %u %s (%s): calls %" PRIu64 " replies %" PRIu64
		       " errors %" PRIu64 " bytes call %s reply %s",
		       what, r->id, r->peer, state, r->c.calls, r->c.replies, r->c.errors, bc, br);
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
	       what, r->id, r->peer, state, r->c.calls, r->c.replies, r->c.errors, r->c.bc_calls,
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

/* The transport's counters of the connection, while it has one. */
static void conn_update_rs(struct gw_conn *conn)
{
	if (conn->rc && !rpcrdma_conn_stats(conn->rc, &conn->rs))
		conn->have_rs = true;
}

void gw_conn_add(struct gw *gw, struct gw_conn *conn, struct rpcrdma_conn *rc)
{
	conn->gw = gw;
	conn->id = ++gw->next_id;
	conn->rc = rc;
	TAILQ_INSERT_TAIL(&gw->conns, conn, link);
	gw->nconns++;
}

void gw_conn_del(struct gw_conn *conn)
{
	TAILQ_REMOVE(&conn->gw->conns, conn, link);
	conn->gw->nconns--;
}

bool gw_allow(struct gw *gw, const struct sockaddr *sa, const char *what)
{
	char addr[IWT_ADDR_STRLEN];

	if (gw_acl_match(&gw->o.allow, sa))
		return true;
	gw->refused++;
	gw_log(gw, "refused %s %s: not in --allow (%s)", what,
	       iwt_addr_format(sa, addr, sizeof(addr)), gw->allow_text);
	return false;
}

void gw_conn_retire(struct gw_conn *conn)
{
	struct gw *gw = conn->gw;
	const char *state;

	if (conn->retired)
		return;
	conn->retired = true;
	conn_update_rs(conn);
	add_counters(&gw->total.c, &conn->c);
	if (conn->have_rs)
		add_rs(&gw->total.rs, &conn->rs);
	state = gw->o.mode->conn.state(conn);
	if (gw->o.stats)
		conn_print(gw, conn, state ? state : "closed", "closed");
}

struct gw_pend *gw_pend_reply(struct gw_conn *conn, struct gw_pendq *q, const uint8_t *rec,
			      size_t len, const char *from, int *status)
{
	uint32_t xid = gw_rpc_xid(rec);
	struct gw_pend *p;

	TAILQ_FOREACH(p, q, link)
	{
		if (p->xid == xid)
			break;
	}
	if (!p) {
		/* e.g. the reply to a call sent twice around a reconnect */
		conn->c.dropped++;
		gw_debug(conn->gw, "conn %u: reply xid %#x from the %s matches no call: dropped",
			 conn->id, xid, from);
		return NULL;
	}
	*status = rpcrdma_reply(p->req, rec, len);
	if (*status) {
		conn->c.errors++;
		gw_log(conn->gw,
		       "conn %u: reply xid %#x (%zu octets) from the %s not delivered: %s",
		       conn->id, xid, len, from, rpcrdma_errname(*status));
	}
	return p;
}

static void print_stats(struct gw *gw, const char *what)
{
	struct gw_conn *conn;
	const char *state;

	TAILQ_FOREACH(conn, &gw->conns, link)
	{
		if (conn->retired || !(state = gw->o.mode->conn.state(conn)))
			continue;
		conn_update_rs(conn);
		conn_print(gw, conn, state, what);
	}
	if (!strcmp(what, "exit")) {
		conn_print(gw, &gw->total, "closed connections", "total");
		gw_log(gw, "stats total refused %" PRIu64 " connection(s) not in --allow",
		       gw->refused);
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
	cfg->no_send_inv = gw->o.no_send_inv;
	cfg->rprc = gw->o.rprc;
	cfg->max_msg = gw->o.max_record;
	cfg->ulb = &rpcrdma_nfs_ulb;
	cfg->ulb_arg = NULL;
	cfg->cm = &gw->o.iw.cm;
	cfg->log = rdma_log;
	cfg->log_arg = (void *)(uintptr_t)gw;
	/* RPC-over-RDMA reconnects: only a client's connections ever make them */
	cfg->reconnects = gw->o.rdma_retries;
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
	fputs("Access control (the backend sees the server gateway as its only client):\n"
	      "      --allow CIDR[,CIDR...]\n"
	      "                           serve only clients from these addresses: IPv4\n"
	      "                           or IPv6 prefixes ADDR/LEN, or an address alone\n"
	      "                           (/32, /128); repeatable, the lists add up;\n"
	      "                           'any' for every client.  Default 127.0.0.0/8\n"
	      "                           and ::1: loopback only.  Another client's\n"
	      "                           connection is closed before any call is served\n"
	      "                           and logged with its address\n"
	      "      --no-resvport        server: connect to the backend from an ordinary\n"
	      "                           port (default: from a reserved port, 665-1023,\n"
	      "                           when the process may bind one - root or\n"
	      "                           CAP_NET_BIND_SERVICE - so that the `secure`\n"
	      "                           export option holds; else an ordinary port, and\n"
	      "                           the export needs `insecure`)\n"
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
	      "      --backend-retries N  server: backend TCP reconnect attempts in a row\n"
	      "                           before the outstanding calls are answered\n"
	      "                           SYSTEM_ERR, 0-1000 (default 5; 0 = none)\n"
	      "      --rdma-retries N     client: RPC-over-RDMA reconnect attempts after a\n"
	      "                           connection loss, 0-1000 (default 5, the\n"
	      "                           transport's; 0 = none)\n"
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
	      "  iwnfsgw server --listen 0.0.0.0:20049 --backend 127.0.0.1:2049 \\\n"
	      "      --allow 192.0.2.0/24,2001:db8::/32 --stats=10\n"
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

/*
 * The gateway's own options, one row each; the shared iWARP options are
 * iwt_opt's (IWT_OPT_LONG).  A row says where the value goes (one of str,
 * u16, u32, i32, count; flag is set whenever the option is given) and, for
 * an option of one mode only, which: given in the other mode it is refused,
 * with what that mode has instead.  Numbers follow iwt_num (min..max, flags).
 */
struct gw_opt_def {
	const char *name;		/* long name, without the dashes */
	int letter;			/* short option, 0: none */
	int has_arg;			/* no_argument, required_argument, optional_argument */
	uint64_t min, max;		/* a number's range */
	unsigned num_flags;		/* IWT_NUM_SUFFIX: K, M and G allowed */
	struct gw_acl *acl;		/* a list the value's entries are added to */
	const struct gw_mode_ops *mode; /* the only mode it is for; NULL: both */
	const char *instead;		/* the other mode's counterpart */
	const char **str;
	uint16_t *u16;
	uint32_t *u32;
	int *i32;
	int *count;
	bool *flag;
};

/* "iwnfsgw: WHAT" on stderr; the usage exit status. */
#define usage_err(...) (iwt_msg(GW_PROG, __VA_ARGS__), IWT_EXIT_USAGE)

#define GW_OPT_VAL(i)  (0x100 + (int)(i)) /* getopt value of a row without a letter */

static const struct gw_mode_ops *const gw_modes[] = {&gw_server_mode, &gw_client_mode};

/* The address of one side: arg (ADDR[:PORT], [V6]:PORT, :PORT or PORT, as
 * iwt_addr_split reads it; NULL: the side's default), resolved. */
static int parse_side(const struct gw_side *side, const char *arg, bool passive, struct gw_addr *a)
{
	const char *text = arg ? arg : side->host;
	struct iwt_hostport hp;
	const char *why, *host;
	int rc;

	if (iwt_addr_split(text, &hp, &why))
		return iwt_bad_arg(GW_PROG, side->opt, text, why);
	host = hp.host[0] ? hp.host : side->host;
	rc = iwt_addr_resolve(host, hp.has_port ? hp.port : side->port, passive, &a->ss, &a->len);
	if (rc) {
		fprintf(stderr, "%s: cannot resolve '%s' for %s: %s\n", GW_PROG, host, side->opt,
			gai_strerror(rc));
		return -1;
	}
	iwt_addr_format((struct sockaddr *)&a->ss, a->text, sizeof(a->text));
	return 0;
}

/* The value of row d: 0, or -1 after the message. */
static int opt_take(const struct gw_opt_def *d, const char *arg)
{
	char opt[32];
	uint64_t v;

	if (d->flag)
		*d->flag = true;
	if (d->count)
		(*d->count)++;
	if (d->str)
		*d->str = arg;
	snprintf(opt, sizeof(opt), "--%s", d->name);
	if (d->acl && arg) {
		char why[GW_ACL_ERRLEN];

		if (gw_acl_parse(d->acl, arg, why, sizeof(why)))
			return iwt_bad_arg(GW_PROG, opt, arg, why);
		return 0;
	}
	if (!arg || !(d->u16 || d->u32 || d->i32))
		return 0;
	if (iwt_num_u64(GW_PROG, opt, arg, d->min, d->max, d->num_flags, &v))
		return -1;
	if (d->u16)
		*d->u16 = (uint16_t)v;
	else if (d->u32)
		*d->u32 = (uint32_t)v;
	else
		*d->i32 = (int)v;
	return 0;
}

/* 0 to run, -1 exit 0 (help/version), else the usage exit status. */
static int parse_args(int argc, char **argv, struct gw_opts *o)
{
	const char *listen = NULL, *peer = NULL;
	struct rpcrdma_config lib;
	bool bc_set = false, allow_set = false;
	const struct gw_opt_def defs[] = {
		{"listen", 'l', required_argument, .str = &listen},
		{"backend", 'b', required_argument, .mode = &gw_server_mode, .instead = "--remote",
		 .str = &peer},
		{"remote", 'r', required_argument, .mode = &gw_client_mode, .instead = "--backend",
		 .str = &peer},
		{"allow", 0, required_argument, .acl = &o->allow, .flag = &allow_set},
		{"no-resvport", 0, no_argument, .mode = &gw_server_mode,
		 .instead = "no backend TCP connection", .flag = &o->no_resvport},
		{"credits", 0, required_argument, 1, 1024, 0, .u16 = &o->credits},
		{"inline", 0, required_argument, 1024, 1 << 20, IWT_NUM_SUFFIX,
		 .u32 = &o->inline_size},
		{"rprc", 0, no_argument, .flag = &o->rprc},
		{"no-send-inv", 0, no_argument, .flag = &o->no_send_inv},
		{"backchannel", 0, required_argument, 0, 1024, 0, .u16 = &o->bc_credits,
		 .flag = &bc_set},
		{"max-record", 0, required_argument, GW_MIN_MAX_RECORD, GW_MAX_MAX_RECORD,
		 IWT_NUM_SUFFIX, .u32 = &o->max_record},
		{"backend-retries", 0, required_argument, 0, 1000, 0, .mode = &gw_server_mode,
		 .instead = "--rdma-retries", .i32 = &o->backend_retries},
		{"rdma-retries", 0, required_argument, 0, 1000, 0, .mode = &gw_client_mode,
		 .instead = "--backend-retries", .i32 = &o->rdma_retries},
		{"retry-ms", 0, required_argument, 1, 600000, 0, .u32 = &o->retry_ms},
		{"call-timeout", 0, required_argument, 0, 86400000, 0, .u32 = &o->call_timeout},
		{"poll-ms", 0, required_argument, 0, 60000, 0, .u32 = &o->poll_ms},
		{"stats", 0, optional_argument, 1, 86400, 0, .i32 = &o->stats_secs,
		 .flag = &o->stats},
		{"verbose", 'v', no_argument, .count = &o->verbose},
	};

	enum { NDEFS = sizeof(defs) / sizeof(defs[0]) };
	static const struct option iwt_long[] = {IWT_OPT_LONG};
	struct option lo[NDEFS + sizeof(iwt_long) / sizeof(iwt_long[0]) + 3];
	char shorts[2 * NDEFS + 4] = ":hV";
	bool given[NDEFS] = {false};
	size_t i, n = 0, ns = strlen(shorts);
	int c;

	memset(o, 0, sizeof(*o));
	gw_acl_init(&o->allow);
	o->credits = 32;
	o->inline_size = 4096;
	o->max_record = GW_DEFAULT_MAX_RECORD;
	o->backend_retries = 5;
	rpcrdma_config_init(&lib);
	o->rdma_retries = lib.reconnects; /* the transport's own default */
	o->retry_ms = 500;
	o->poll_ms = 0;
	iwt_opt_init(&o->iw);
	for (i = 0; i < NDEFS; i++) {
		lo[n++] = (struct option){defs[i].name, defs[i].has_arg, NULL,
					  defs[i].letter ? defs[i].letter : GW_OPT_VAL(i)};
		if (defs[i].letter) {
			shorts[ns++] = (char)defs[i].letter;
			if (defs[i].has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = '\0';
	lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
	lo[n++] = (struct option){"version", no_argument, NULL, 'V'};
	memcpy(&lo[n], iwt_long, sizeof(iwt_long));
	n += sizeof(iwt_long) / sizeof(iwt_long[0]);
	lo[n] = (struct option){NULL, 0, NULL, 0};

	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
			if (iwt_opt_parse(&o->iw, GW_PROG, c, optarg))
				return IWT_EXIT_USAGE;
			continue;
		}
		for (i = 0; i < NDEFS; i++)
			if (c == (defs[i].letter ? defs[i].letter : GW_OPT_VAL(i)))
				break;
		if (i < NDEFS) {
			given[i] = true;
			if (opt_take(&defs[i], optarg))
				return IWT_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("%s %s (RPC-over-RDMA v1, RFC 8166/8267/8797)\n", GW_PROG,
			       IWARP_VERSION);
			return -1;
		case ':':
			return usage_err("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_err("unknown option '%s' (try --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_err("missing mode: server or client (try --help)");
	for (i = 0; i < sizeof(gw_modes) / sizeof(gw_modes[0]); i++)
		if (!strcmp(argv[optind], gw_modes[i]->name))
			o->mode = gw_modes[i];
	if (!o->mode)
		return usage_err("unknown mode '%s': server or client", argv[optind]);
	if (optind + 1 < argc)
		return usage_err("unexpected argument '%s'", argv[optind + 1]);
	for (i = 0; i < NDEFS; i++)
		if (given[i] && defs[i].mode && defs[i].mode != o->mode)
			return usage_err("--%s is for %s mode (%s: %s)", defs[i].name,
					 defs[i].mode->name, o->mode->name, defs[i].instead);
	if (!peer && o->mode->peer.required)
		return usage_err("%s mode needs %s ADDR[:PORT]", o->mode->name, o->mode->peer.opt);
	if (!bc_set)
		o->bc_credits = o->mode->bc_credits;
	if (!allow_set)
		gw_acl_default(&o->allow);
	o->allow_default = !allow_set;
	if (parse_side(&o->mode->listen, listen, true, &o->listen) ||
	    parse_side(&o->mode->peer, peer, false, &o->peer))
		return IWT_EXIT_USAGE;
	return 0;
}

static void trace_sink(void *ctx, enum iw_log_level level, const char *msg)
{
	gw_log(NULL, "trace: %s", msg);
}

/* The event loop and the transport behind its fd: 0, or -1 (message printed;
 * gw_shutdown frees what was made). */
static int gw_open(struct gw *gw)
{
	struct rpcrdma_config cfg;
	struct iwv_context_attr verbs;

	gw->base = event_base_new();
	if (!gw->base) {
		fprintf(stderr, "%s: cannot create the event loop\n", GW_PROG);
		return -1;
	}
	gw_rdma_config(gw, &cfg, &verbs);
	gw->ctx = rpcrdma_ctx_create(&cfg);
	if (!gw->ctx) {
		fprintf(stderr, "%s: cannot start the RPC-over-RDMA transport: %s\n", GW_PROG,
			strerror(errno));
		return -1;
	}
	gw->ev_fd = event_new(gw->base, rpcrdma_ctx_fd(gw->ctx), EV_READ | EV_PERSIST, on_ctx_event,
			      gw);
	gw->ev_timer = evtimer_new(gw->base, on_ctx_event, gw);
	gw->ev_kick = event_new(gw->base, -1, 0, on_ctx_event, gw);
	gw->ev_sig[0] = evsignal_new(gw->base, SIGINT, on_signal, gw);
	gw->ev_sig[1] = evsignal_new(gw->base, SIGTERM, on_signal, gw);
	if (!gw->ev_fd || !gw->ev_timer || !gw->ev_kick || !gw->ev_sig[0] || !gw->ev_sig[1] ||
	    event_add(gw->ev_fd, NULL) || event_add(gw->ev_sig[0], NULL) ||
	    event_add(gw->ev_sig[1], NULL)) {
		fprintf(stderr, "%s: cannot set up the event loop\n", GW_PROG);
		return -1;
	}
	if (gw->o.stats && gw->o.stats_secs) {
		struct timeval tv = {.tv_sec = gw->o.stats_secs};

		gw->ev_stats = event_new(gw->base, -1, EV_PERSIST, on_stats, gw);
		if (gw->ev_stats)
			event_add(gw->ev_stats, &tv);
	}
	return 0;
}

/*
 * The one way out, for a stop by signal, a failed start or a half-made
 * gateway alike, and safe to call again: the mode stops listening and
 * closes every connection while the transport still runs; the events go;
 * the transport is destroyed (outstanding calls complete with
 * IW_ERPC_SHUTDOWN and connections report CLOSED, which frees most of them);
 * then, with no callback left to come, the connections still held are freed.
 */
static void gw_shutdown(struct gw *gw)
{
	struct event **evs[] = {&gw->ev_stats, &gw->ev_fd,     &gw->ev_timer,
				&gw->ev_kick,  &gw->ev_sig[0], &gw->ev_sig[1]};
	struct gw_conn *conn, *next;
	size_t i;

	gw->o.mode->stop(gw);
	TAILQ_FOREACH_SAFE(conn, &gw->conns, link, next)
	{
		gw->o.mode->conn.close(conn);
	}
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		if (*evs[i])
			event_free(*evs[i]);
		*evs[i] = NULL;
	}
	rpcrdma_ctx_destroy(gw->ctx);
	gw->ctx = NULL;
	while ((conn = TAILQ_FIRST(&gw->conns)))
		gw->o.mode->conn.free(conn);
	if (gw->base)
		event_base_free(gw->base);
	gw->base = NULL;
}

int main(int argc, char **argv)
{
	struct gw gw;
	char desc[128];
	int rc;

	memset(&gw, 0, sizeof(gw));
	TAILQ_INIT(&gw.conns);
	snprintf(gw.total.peer, sizeof(gw.total.peer), "all");
	gw.total.have_rs = true;
	rc = parse_args(argc, argv, &gw.o);
	if (rc)
		return rc < 0 ? 0 : rc;
	gw_acl_format(&gw.o.allow, gw.allow_text, sizeof(gw.allow_text));
	/* Every call or reply of 1 MiB is copied through a buffer of that size
	 * (record, transport, evbuffer).  glibc would mmap or trim each one
	 * and the next would page-fault its way back in: keep such buffers in
	 * the heap instead (measured: a third of the client gateway's CPU). */
	mallopt(M_MMAP_THRESHOLD, (int)(gw.o.max_record + (1u << 20)));
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	signal(SIGPIPE, SIG_IGN);
	if (gw.o.iw.cm.trace)
		iw_log_set(trace_sink, NULL, IW_LOG_TRACE);

	rc = IWT_EXIT_FAIL;
	if (gw_open(&gw) == 0) {
		iwt_opt_describe(&gw.o.iw, desc, sizeof(desc));
		gw_log(&gw,
		       "%s: %s on %s -> %s %s (credits %u, inline %u, rprc %s, send-inv %s, %s)",
		       gw.o.mode->name, gw.o.mode->listen.what, gw.o.listen.text,
		       gw.o.mode->peer.what, gw.o.peer.text, gw.o.credits, gw.o.inline_size,
		       gw.o.rprc ? "on" : "off", gw.o.no_send_inv ? "off" : "on", desc);
		gw_log(&gw, "%s: clients allowed: %s%s", gw.o.mode->name, gw.allow_text,
		       gw.o.allow_default ? " (the default, loopback only; --allow for others)"
					  : " (--allow)");
		if (gw.o.mode->start(&gw) == 0) {
			process_round(&gw);
			if (event_base_dispatch(gw.base) < 0) {
				gw_log(&gw, "event loop failed");
				gw.exit_code = IWT_EXIT_FAIL;
			}
			if (gw.o.stats)
				print_stats(&gw, "exit");
			rc = gw.exit_code;
		}
	}
	gw_shutdown(&gw);
	gw_log(&gw, "stopped");
	return rc;
}
