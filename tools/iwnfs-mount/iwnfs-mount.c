/* SPDX-License-Identifier: MIT */
/*
 * iwnfs-mount.c - mount an NFS export over iWARP as a FUSE file system: no
 * RDMA NIC, no kernel NFS client, no root needed.  The program is itself an
 * NFSv3 client (RFC 1813) speaking RPC-over-RDMA version 1 (RFC 8166, NFS
 * binding RFC 8267) on the userspace iWARP stack, straight to an NFS/RDMA
 * server: `iwnfsgw server` in front of any NFS server, or a Linux server on
 * siw or an RNIC.
 *
 * Design: one thread, one poll loop, no locks.
 *
 *   kernel ──/dev/fuse──▶ [ FUSE fd ]──┐
 *                                        ├─ ppoll ─▶ fuse_session_receive_buf
 *   server ◀──iWARP──▶ [ rpcrdma ctx fd ]┘           + fuse_session_process_buf
 *                                                    rpcrdma_ctx_process
 *
 * The rpcrdma ctx is not thread-safe, so the thread that owns it also owns
 * the FUSE session fd: a FUSE request is read and dispatched to its handler
 * (mnt_fuse.c), which sends one NFS call (rpcrdma_call) and returns at once
 * without answering; the request is answered (fuse_reply_*) later from the
 * call's reply callback, run by rpcrdma_ctx_process in the same loop.  So
 * any number of FUSE requests - the kernel's readahead, several processes,
 * write-behind - have NFS calls in flight at once, up to the transport's
 * credits (more wait in order inside the transport), without a lock.
 *
 * Start-up (before the FUSE mount, so that any failure is reported and the
 * exit status says it): resolve SERVER, ask its portmapper for MOUNT v3 over
 * TCP and MNT the export (or take fh=HEX / mountport=), connect the
 * RPC-over-RDMA transport to port (default 20049), FSINFO for rtmax/wtmax
 * (rsize/wsize = the smaller of those and the options, at most 1 MiB: FUSE's
 * largest request), PATHCONF for the name length, GETATTR of the root.
 * Without -f the program forks first (before any thread exists) and the
 * parent exits with the child's start-up status.
 *
 * Shutdown: fusermount3 -u (the FUSE fd reports ENODEV), SIGINT, SIGTERM or
 * SIGHUP end the loop; uncommitted data is written and committed (30 s at
 * most), the export is unmounted at the server (UMNT), the transport closed.
 * Exit status 0; 1 when data could not be written or start-up failed; 2 for
 * a bad command line.
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iwarp/iw_err.h>
#include <iwarp/rpcrdma.h>
#include <iwarp/rpcrdma_nfs.h>

#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"
#include "mnt_int.h"

#ifndef IWARP_VERSION
#define IWARP_VERSION "0.1.0"
#endif

#define START_TIMEOUT_MS    30000
#define SHUTDOWN_TIMEOUT_MS 30000
#define SHUTDOWN_DOWN_MS    10000 /* shutdown gives up on a server unreachable this long */

static volatile sig_atomic_t stop_signal, nsignals;

/* ---------------------------------------------------------------------- */
/* Command line                                                            */
/* ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: iwnfs-mount [OPTION]... SERVER:/EXPORT MOUNTPOINT\n"
	      "\n"
	      "Mount an NFS export over iWARP as a FUSE file system: an NFSv3 client\n"
	      "(RFC 1813) over RPC-over-RDMA version 1 (RFC 8166, NFS binding RFC 8267)\n"
	      "on the iwarp software iWARP stack - no RDMA NIC, no kernel NFS client, no\n"
	      "root.  The server is an NFS/RDMA server: `iwnfsgw server` in front of any\n"
	      "NFS server, or a Linux NFS server over siw or an RNIC.  Unmount with\n"
	      "`fusermount3 -u MOUNTPOINT`.\n"
	      "\n"
	      "  -o OPT[,OPT]...   mount options (below); may be repeated\n"
	      "  -f                stay in the foreground and log to stderr\n"
	      "  -v                more log lines (-f only; -vv: every failed call)\n"
	      "  -d                debug: -f -v plus libfuse's log of every request\n"
	      "      --stats       print call and transfer counters at exit\n"
	      "  -h, --help        show this help and exit\n"
	      "  -V, --version     show the version and exit\n"
	      "\n"
	      "Mount options:\n"
	      "  vers=3            NFS version (only 3)\n"
	      "  port=N            NFS/RDMA port of SERVER (default 20049)\n"
	      "  mountport=N       MOUNT v3 port: skip the portmapper (port 111)\n"
	      "  mountproto=tcp    MOUNT transport (only tcp)\n"
	      "  fh=HEX            root file handle of the export: no MOUNT at all\n"
	      "  rsize=N, wsize=N  largest READ / WRITE, 4096 to 1M with K/M (default\n"
	      "                    1M; lowered to the server's FSINFO rtmax / wtmax)\n"
	      "  credits=N         RPC-over-RDMA credits asked for, 1-1024 (default 32)\n"
	      "  inline=N          inline threshold, 1024 to 1M (default 4096)\n"
	      "  ac, noac          attribute caching on (default) / off\n"
	      "  actimeo=S         set all four timeouts below to S seconds\n"
	      "  acregmin=S        file attribute timeout, minimum (default 3)\n"
	      "  acregmax=S        ... maximum (default 60)\n"
	      "  acdirmin=S        directory attribute timeout, minimum (default 30)\n"
	      "  acdirmax=S        ... maximum (default 60)\n"
	      "  cto, nocto        close-to-open: ACCESS + attributes at every open (default\n"
	      "                    cto)\n"
	      "  hard, soft        hard (default): a call waits for its reply as long as\n"
	      "                    it takes, the transport reconnecting for ever; soft: a\n"
	      "                    call without a reply after timeo x (retrans + 1) fails\n"
	      "                    with EIO\n"
	      "  timeo=N           one timeout, in tenths of a second (default 600)\n"
	      "  retrans=N         timeouts before a major one, 0-100 (default 2): then a\n"
	      "                    soft call fails, a hard mount logs \"not responding\"\n"
	      "  wbmax=N           write-behind: most octets not yet written or committed,\n"
	      "                    1M to 1G with K/M/G (default 32M)\n"
	      "  reconnects=N      stop reconnecting after N failed attempts in a row,\n"
	      "                    0-1000000 (default: never stop); then calls fail with\n"
	      "                    EIO until one connects again\n"
	      "  allow_other, default_permissions, ro, rw   passed to FUSE\n"
	      "  mpa-rev=, crc=, markers=, p2p=, rtr=, ird=, ord=, engine=,\n"
	      "  first-fpdu-delay=, engine-thread, trace   the iWARP options below\n"
	      "\n" IWT_NUM_HELP "\n",
	      f);
	iwt_opt_help(f);
	fputs("\n"
	      "Example:\n"
	      "  iwnfsgw server --listen 127.0.0.1:20049 --backend 127.0.0.1:2049 &\n"
	      "  iwnfs-mount 127.0.0.1:/export /mnt/x -o port=20049,crc=on\n"
	      "  cp big.iso /mnt/x/ && sha256sum /mnt/x/big.iso && ls -l /mnt/x\n"
	      "  fusermount3 -u /mnt/x\n"
	      "\n"
	      "Exit status: 0 mounted (background) or unmounted cleanly (-f); 1 start-up\n"
	      "failed or written data was lost; 2 bad command line.\n"
	      "See iwnfs-mount(1) and docs/iwnfs-mount.md.\n",
	      f);
}

#define usage_err(...) (iwt_msg(MNT_PROG, __VA_ARGS__), IWT_EXIT_USAGE)

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

static int parse_fh(const char *s, struct nfs_fh *fh)
{
	size_t n = strlen(s);

	if (n == 0 || n % 2 || n / 2 > NFS3_FHSIZE)
		return iwt_bad_arg(MNT_PROG, "-o fh", s, "1 to 64 octets in hexadecimal");
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return iwt_bad_arg(MNT_PROG, "-o fh", s, "1 to 64 octets in hexadecimal");
		fh->data[i] = (uint8_t)(hi << 4 | lo);
	}
	fh->len = (uint32_t)(n / 2);
	return 0;
}

static int opt_num(const char *key, const char *val, uint64_t min, uint64_t max, unsigned flags,
		   uint64_t *out)
{
	char opt[48];

	snprintf(opt, sizeof(opt), "-o %s", key);
	if (!val)
		return iwt_bad_arg(MNT_PROG, opt, "", "needs a value");
	return iwt_num_u64(MNT_PROG, opt, val, min, max, flags, out);
}

static int opt_secs(const char *key, const char *val, double *out)
{
	char opt[48];

	snprintf(opt, sizeof(opt), "-o %s", key);
	if (!val)
		return iwt_bad_arg(MNT_PROG, opt, "", "needs a value");
	return iwt_num_seconds(MNT_PROG, opt, val, 0, 3600, out);
}

/* One -o option: 0, or -1 after the message. */
static int mount_opt(struct mnt_opts *o, char *kv)
{
	static const struct option iw_long[] = {IWT_OPT_LONG};
	char *val = strchr(kv, '=');
	uint64_t v;
	double s;

	if (val)
		*val++ = '\0';
	if (!strcmp(kv, "vers") || !strcmp(kv, "nfsvers")) {
		if (!val || strcmp(val, "3"))
			return iwt_bad_arg(MNT_PROG, "-o vers", val ? val : "", "only 3 (NFSv3)");
	} else if (!strcmp(kv, "port")) {
		if (opt_num(kv, val, 1, 65535, 0, &v))
			return -1;
		o->port = (uint16_t)v;
	} else if (!strcmp(kv, "mountport")) {
		if (opt_num(kv, val, 1, 65535, 0, &v))
			return -1;
		o->mountport = (uint16_t)v;
	} else if (!strcmp(kv, "mountproto")) {
		if (!val || strcmp(val, "tcp"))
			return iwt_bad_arg(MNT_PROG, "-o mountproto", val ? val : "", "only tcp");
	} else if (!strcmp(kv, "fh")) {
		if (parse_fh(val ? val : "", &o->fh))
			return -1;
		o->have_fh = true;
	} else if (!strcmp(kv, "rsize") || !strcmp(kv, "wsize")) {
		if (opt_num(kv, val, MNT_MIN_XFER, MNT_MAX_XFER, IWT_NUM_SUFFIX, &v))
			return -1;
		*(kv[0] == 'r' ? &o->rsize : &o->wsize) = (uint32_t)v & ~4095u;
	} else if (!strcmp(kv, "credits")) {
		if (opt_num(kv, val, 1, 1024, 0, &v))
			return -1;
		o->credits = (uint16_t)v;
	} else if (!strcmp(kv, "inline")) {
		if (opt_num(kv, val, 1024, 1 << 20, IWT_NUM_SUFFIX, &v))
			return -1;
		o->inline_size = (uint32_t)v;
	} else if (!strcmp(kv, "ac") && !val) {
		if (o->acregmax == 0 && o->acdirmax == 0) {
			o->acregmin = 3, o->acregmax = 60, o->acdirmin = 30, o->acdirmax = 60;
		}
	} else if (!strcmp(kv, "noac") && !val) {
		o->acregmin = o->acregmax = o->acdirmin = o->acdirmax = 0;
	} else if (!strcmp(kv, "actimeo")) {
		if (opt_secs(kv, val, &s))
			return -1;
		o->acregmin = o->acregmax = o->acdirmin = o->acdirmax = s;
	} else if (!strcmp(kv, "acregmin") || !strcmp(kv, "acregmax") || !strcmp(kv, "acdirmin") ||
		   !strcmp(kv, "acdirmax")) {
		if (opt_secs(kv, val, &s))
			return -1;
		*(!strcmp(kv, "acregmin")   ? &o->acregmin
		  : !strcmp(kv, "acregmax") ? &o->acregmax
		  : !strcmp(kv, "acdirmin") ? &o->acdirmin
					    : &o->acdirmax) = s;
	} else if ((!strcmp(kv, "cto") || !strcmp(kv, "nocto")) && !val) {
		o->cto = kv[0] == 'c';
	} else if ((!strcmp(kv, "hard") || !strcmp(kv, "soft")) && !val) {
		o->soft = kv[0] == 's';
	} else if (!strcmp(kv, "timeo")) {
		if (opt_num(kv, val, 1, 36000, 0, &v))
			return -1;
		o->timeo_ms = (uint32_t)v * 100;
	} else if (!strcmp(kv, "retrans")) {
		if (opt_num(kv, val, 0, 100, 0, &v))
			return -1;
		o->retrans = (uint32_t)v;
	} else if (!strcmp(kv, "wbmax")) {
		if (opt_num(kv, val, 1 << 20, 1u << 30, IWT_NUM_SUFFIX, &v))
			return -1;
		o->wb_max = (uint32_t)v;
	} else if (!strcmp(kv, "reconnects")) {
		if (opt_num(kv, val, 0, 1000000, 0, &v))
			return -1;
		o->reconnects = (int)v;
	} else if (!strcmp(kv, "allow_other") && !val) {
		o->allow_other = true;
	} else if (!strcmp(kv, "default_permissions") && !val) {
		o->default_permissions = true;
	} else if ((!strcmp(kv, "ro") || !strcmp(kv, "rw")) && !val) {
		o->ro = kv[1] == 'o';
	} else {
		/* the iWARP options, by their long names */
		for (size_t i = 0; i < sizeof(iw_long) / sizeof(iw_long[0]); i++) {
			if (strcmp(kv, iw_long[i].name))
				continue;
			if ((iw_long[i].has_arg == required_argument) != (val != NULL))
				return iwt_bad_arg(MNT_PROG, "-o", kv,
						   val ? "takes no value" : "needs a value");
			return iwt_opt_parse(&o->iw, MNT_PROG, iw_long[i].val, val);
		}
		return usage_err("unknown mount option '%s' (try --help)", kv);
	}
	return 0;
}

static int mount_opts(struct mnt_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *kv;
	int rc = 0;

	if (!copy)
		return -1;
	for (kv = strtok_r(copy, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save))
		rc = mount_opt(o, kv);
	free(copy);
	return rc ? -1 : 0;
}

/* SERVER:/EXPORT, SERVER a name, an IPv4 address or [IPv6] */
static int parse_spec(struct mnt_opts *o, const char *spec)
{
	const char *sep = strstr(spec, ":/");
	size_t hl;
	int rc;

	if (!sep || sep == spec)
		return iwt_bad_arg(MNT_PROG, "SERVER:/EXPORT", spec, "expected HOST:/PATH");
	hl = (size_t)(sep - spec);
	if (spec[0] == '[' && sep[-1] == ']') {
		spec++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(o->server_host))
		return iwt_bad_arg(MNT_PROG, "SERVER:/EXPORT", spec, "bad host");
	memcpy(o->server_host, spec, hl);
	o->server_host[hl] = '\0';
	if (strlen(sep + 1) > MNT_PATH_MAX)
		return iwt_bad_arg(MNT_PROG, "SERVER:/EXPORT", spec, "path over 1024 octets");
	strcpy(o->export_path, sep + 1);
	rc = iwt_addr_resolve(o->server_host, 0, false, &o->server, &o->server_len);
	if (rc) {
		iwt_msg(MNT_PROG, "cannot resolve '%s': %s", o->server_host, gai_strerror(rc));
		return -1;
	}
	return 0;
}

/* 0 to run, -1 exit 0 (help, version), else the exit status */
static int parse_args(int argc, char **argv, struct mnt_opts *o)
{
	static const struct option iw_long[] = {IWT_OPT_LONG};
	struct option lo[sizeof(iw_long) / sizeof(iw_long[0]) + 4];
	size_t n = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = MNT_DEFAULT_RDMA_PORT;
	o->rsize = o->wsize = MNT_DEFAULT_XFER;
	o->credits = 32;
	o->inline_size = 4096;
	o->acregmin = 3, o->acregmax = 60, o->acdirmin = 30, o->acdirmax = 60;
	o->cto = true;
	o->timeo_ms = 60000;
	o->retrans = 2;
	o->wb_max = 32u << 20;
	o->reconnects = -1;
	iwt_opt_init(&o->iw);

	lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
	lo[n++] = (struct option){"version", no_argument, NULL, 'V'};
	lo[n++] = (struct option){"stats", no_argument, NULL, 'S'};
	memcpy(&lo[n], iw_long, sizeof(iw_long));
	n += sizeof(iw_long) / sizeof(iw_long[0]);
	lo[n] = (struct option){NULL, 0, NULL, 0};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:fvdhV", lo, NULL)) != -1) {
		if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
			if (iwt_opt_parse(&o->iw, MNT_PROG, c, optarg))
				return IWT_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'o':
			if (mount_opts(o, optarg))
				return IWT_EXIT_USAGE;
			break;
		case 'f':
			o->foreground = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'd':
			o->foreground = true;
			o->debug_fuse = true;
			o->verbose++;
			break;
		case 'S':
			o->stats = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("%s %s (NFSv3 over RPC-over-RDMA v1, FUSE %d)\n", MNT_PROG,
			       IWARP_VERSION, fuse_version());
			return -1;
		case ':':
			return usage_err("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_err("unknown option '%s' (try --help)", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage_err("expected SERVER:/EXPORT and MOUNTPOINT (try --help)");
	if (o->acregmin > o->acregmax || o->acdirmin > o->acdirmax)
		return usage_err("an attribute timeout minimum is above its maximum");
	if (parse_spec(o, argv[optind]))
		return IWT_EXIT_USAGE;
	o->mountpoint = argv[optind + 1];
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Start-up                                                                */
/* ---------------------------------------------------------------------- */

struct sync_call {
	bool done;
	int err;
	struct nfs3_res r;
};

static void on_sync(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		    const uint8_t *reply, size_t len)
{
	struct sync_call *s = arg;

	s->done = true;
	s->err = err ? err : r->status ? nfs3_errno(r->status) : 0;
	if (r)
		s->r = *r;
	s->r.data = NULL; /* points into the reply */
}

/* A call whose only argument is the root handle, waited for. */
static int root_call(struct mnt *m, uint32_t proc, struct nfs3_res *r)
{
	struct sync_call s = {0};
	struct iw_cursor cur, *c;
	struct nfs_cred cred = {.uid = geteuid(), .gid = getegid()};
	int rc;

	c = mnt_call_start(m, &cur, proc, &cred);
	xw_fh(c, &m->root->fh);
	rc = mnt_call_send(m, c, proc, 0, on_sync, &s);
	if (rc)
		return rc;
	rc = mnt_run_until(m, &s.done, START_TIMEOUT_MS);
	if (rc)
		return rc; /* the call stays outstanding until the ctx goes */
	*r = s.r;
	return s.err;
}

static void rdma_log(void *arg, const char *line)
{
	struct mnt *m = arg;

	mnt_debug(m, "rpcrdma: %s", line);
}

static void trace_sink(void *ctx, enum iw_log_level level, const char *msg)
{
	mnt_log("trace: %s", msg);
}

static uint32_t clamp_xfer(uint32_t want, uint32_t server_max)
{
	if (server_max && server_max < want)
		want = server_max;
	want &= ~4095u;
	return want < MNT_MIN_XFER ? MNT_MIN_XFER : want;
}

static int start(struct mnt *m)
{
	struct rpcrdma_config cfg;
	struct iwv_context_attr verbs;
	struct nfs_fh root;
	struct nfs3_res r;
	const char *why;
	char addr[IWT_ADDR_STRLEN];
	int rc;

	if (gethostname(m->machine, sizeof(m->machine) - 1))
		strcpy(m->machine, "iwnfs-mount");
	m->xid = (uint32_t)(iwt_now_ns() ^ ((uint64_t)getpid() << 16));
	m->tx_cap = MNT_MAX_XFER + RPC_CALL_HDR_MAX + 1024;
	m->tx = malloc(m->tx_cap);
	if (!m->tx)
		return ENOMEM;
	iw_list_init(&m->calls);
	iw_list_init(&m->files);

	if (m->o.have_fh) {
		root = m->o.fh;
	} else if (mnt_mount(m, &root, &why)) {
		mnt_log("cannot mount %s:%s: %s", m->o.server_host, m->o.export_path, why);
		return -1;
	}
	rc = mnt_nodes_init(m, &root);
	if (rc)
		return rc;

	rpcrdma_config_init(&cfg);
	iwt_opt_context_attr(&m->o.iw, &verbs);
	cfg.verbs = &verbs;
	cfg.inline_recv = cfg.inline_send = m->o.inline_size;
	cfg.credits = m->o.credits;
	cfg.ulb =
		&rpcrdma_nfs_ulb; /* RFC 8267: READ data in Write chunks, WRITE data in Read chunks */
	cfg.cm = &m->o.iw.cm;
	/* hard and soft alike: reconnect until the server is back (a soft
	 * call has its own deadline); INT_MAX attempts reconnect_ms apart is
	 * for ever in practice - rpcrdma has no "for ever" value and no
	 * backoff (docs/iwnfs-mount.md) */
	cfg.reconnects = m->o.reconnects < 0 ? INT_MAX : m->o.reconnects;
	cfg.log = rdma_log;
	cfg.log_arg = m;
	m->ctx = rpcrdma_ctx_create(&cfg);
	if (!m->ctx) {
		mnt_log("cannot start the RPC-over-RDMA transport: %s", strerror(errno));
		return -1;
	}
	m->rdma_sa = m->o.server;
	m->rdma_len = m->o.server_len;
	iwt_addr_set_port(&m->rdma_sa, m->o.port);
	iwt_addr_format((struct sockaddr *)&m->rdma_sa, addr, sizeof(addr));
	snprintf(m->server_str, sizeof(m->server_str), "%s", addr);
	rc = mnt_connect(m);
	if (rc || (rc = rpcrdma_conn_wait_up(m->conn, START_TIMEOUT_MS))) {
		mnt_log("cannot connect to the NFS/RDMA server %s: %s", addr,
			rc > 0 ? strerror(rc) : rpcrdma_errname(rc));
		return -1;
	}

	/* rsize / wsize from FSINFO (RFC 1813 §3.3.19) */
	m->name_max = 255;
	rc = root_call(m, NFS3_FSINFO, &r);
	if (rc) {
		mnt_log("FSINFO of the export root: %s", strerror(rc));
		return -1;
	}
	m->rsize = clamp_xfer(m->o.rsize, r.rtmax);
	m->wsize = clamp_xfer(m->o.wsize, r.wtmax);
	m->maxfilesize = r.maxfilesize;
	if (root_call(m, NFS3_PATHCONF, &r) == 0 && r.name_max && r.name_max < m->name_max)
		m->name_max = r.name_max;
	rc = root_call(m, NFS3_GETATTR, &r);
	if (rc || r.attr.type != NF3DIR) {
		mnt_log("GETATTR of the export root: %s", rc ? strerror(rc) : "not a directory");
		return -1;
	}
	mnt_attr_set(m, m->root, &r.attr);
	mnt_log("%s:%s on %s: NFSv3 over RPC-over-RDMA to %s (rsize %u, wsize %u, credits %u)",
		m->o.server_host, m->o.export_path, m->o.mountpoint, addr, m->rsize, m->wsize,
		m->o.credits);
	return 0;
}

/* The FUSE session, mounted on the mount point. */
static int fuse_start(struct mnt *m, char *argv0)
{
	char opts[4096], fsname[2 * (sizeof(m->o.server_host) + MNT_PATH_MAX) + 2];
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	size_t n = 0;
	int rc = -1;

	/* fsname=SERVER:/EXPORT, with the option separators escaped for libfuse */
	for (const char *p = m->o.server_host; *p; p++) {
		if (*p == ',' || *p == '\\')
			fsname[n++] = '\\';
		fsname[n++] = *p;
	}
	fsname[n++] = ':';
	for (const char *p = m->o.export_path; *p; p++) {
		if (*p == ',' || *p == '\\')
			fsname[n++] = '\\';
		fsname[n++] = *p;
	}
	fsname[n] = '\0';
	/* max_read: the kernel's, which must be the one ll_init sets */
	snprintf(opts, sizeof(opts), "fsname=%s,subtype=iwnfs,max_read=%u%s%s%s", fsname, m->rsize,
		 m->o.allow_other ? ",allow_other" : "",
		 m->o.default_permissions ? ",default_permissions" : "", m->o.ro ? ",ro" : "");
	if (fuse_opt_add_arg(&args, argv0) || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, opts) || (m->o.debug_fuse && fuse_opt_add_arg(&args, "-d")))
		goto out;
	m->se = fuse_session_new(&args, &mnt_fuse_ops, sizeof(mnt_fuse_ops), m);
	if (!m->se) {
		mnt_log("cannot create the FUSE session");
		goto out;
	}
	if (fuse_session_mount(m->se, m->o.mountpoint)) {
		mnt_log("cannot mount on %s (is /dev/fuse there? fusermount3 installed?)",
			m->o.mountpoint);
		fuse_session_destroy(m->se);
		m->se = NULL;
		goto out;
	}
	fcntl(fuse_session_fd(m->se), F_SETFL, fcntl(fuse_session_fd(m->se), F_GETFL) | O_NONBLOCK);
	rc = 0;
out:
	fuse_opt_free_args(&args);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Our mount in this mount namespace                                       */
/* ---------------------------------------------------------------------- */

/*
 * `fusermount3 -u` normally ends the loop: the kernel destroys the super
 * block, aborts the FUSE connection and /dev/fuse reports it.  But a process
 * that created a mount namespace while we were mounted (`ip netns exec`
 * does, `unshare -m` too) holds a copy of the mount, which keeps the super
 * block, and so the connection, alive after the unmount here: /dev/fuse
 * would never say anything and the process would serve that copy for ever.
 * So the loop also watches /proc/self/mountinfo (pollable: POLLPRI on every
 * change of this namespace's mount table, proc(5)) and ends when the mount
 * it made (by its mount ID) is gone from this namespace.
 */
struct mount_watch {
	int fd;	    /* /proc/self/mountinfo, or -1: not watched */
	long id;    /* our mount's ID */
	char *path; /* the mount point, canonical */
};
static struct mount_watch watch = {.fd = -1};

/* mountinfo (proc(5)): "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE
 * SOURCE SUPEROPTS", the paths with \ooo escapes.  The ID of the last mount on
 * `path` of a FUSE type (the one on top), or -1. */
static long mount_id_of(const char *path, long want_id, bool *present)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, mp[4096];
	size_t cap = 0;
	long found = -1;

	*present = false;
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		long id;
		char *sep, *q, *end;
		size_t n = 0;

		id = strtol(line, &end, 10);
		if (end == line)
			continue;
		if (id == want_id)
			*present = true;
		/* the mount point is field 5 */
		q = end;
		for (int i = 0; i < 3 && q; i++)
			q = strchr(q + 1, ' ');
		if (!q)
			continue;
		for (q++; *q && *q != ' ' && n < sizeof(mp) - 1; q++) {
			if (q[0] == '\\' && q[1] >= '0' && q[1] <= '3' && q[2] >= '0' &&
			    q[2] <= '7' && q[3] >= '0' && q[3] <= '7') {
				mp[n++] = (char)((q[1] - '0') << 6 | (q[2] - '0') << 3 |
						 (q[3] - '0'));
				q += 3;
			} else {
				mp[n++] = *q;
			}
		}
		mp[n] = '\0';
		sep = strstr(q, " - ");
		if (sep && !strcmp(mp, path) && !strncmp(sep + 3, "fuse", 4))
			found = id;
	}
	free(line);
	fclose(f);
	return found;
}

static void watch_start(struct mount_watch *w, const char *mountpoint)
{
	bool present;

	w->fd = -1;
	w->path = realpath(mountpoint, NULL);
	if (!w->path)
		return;
	w->id = mount_id_of(w->path, -1, &present);
	if (w->id >= 0)
		w->fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
}

/* true while our mount is still in this namespace */
static bool watch_present(struct mount_watch *w)
{
	bool present;

	if (w->fd < 0)
		return true;
	mount_id_of(w->path, w->id, &present);
	return present;
}

static void watch_stop(struct mount_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	w->fd = -1;
	w->path = NULL;
}

/* ---------------------------------------------------------------------- */
/* The loop                                                                */
/* ---------------------------------------------------------------------- */

static void on_signal(int sig)
{
	stop_signal = sig;
	nsignals++;
}

static void transport_round(struct mnt *m)
{
	for (int i = 0; i < 8; i++) {
		int n = rpcrdma_ctx_process(m->ctx, 0);

		if (n <= 0)
			break;
	}
}

static void loop(struct mnt *m, const sigset_t *waitmask)
{
	struct fuse_buf fbuf = {.mem = NULL};
	int ffd = fuse_session_fd(m->se);

	while (!stop_signal && !fuse_session_exited(m->se)) {
		struct pollfd p[3] = {{.fd = ffd, .events = POLLIN},
				      {.fd = rpcrdma_ctx_fd(m->ctx), .events = POLLIN},
				      {.fd = watch.fd, .events = POLLPRI}};
		int t = rpcrdma_ctx_timeout_ms(m->ctx), ht = mnt_health_tick(m);
		struct timespec ts;
		int n;

		if (ht >= 0 && (t < 0 || ht < t))
			t = ht;
		ts = (struct timespec){.tv_sec = t / 1000, .tv_nsec = (long)(t % 1000) * 1000000};
		n = ppoll(p, 3, t >= 0 ? &ts : NULL, waitmask);

		if (n < 0 && errno != EINTR) {
			mnt_log("poll: %s", strerror(errno));
			break;
		}
		if (n > 0 && p[0].revents) {
			/* a batch of requests, then the transport sends their calls */
			for (int i = 0; i < 32; i++) {
				int res = fuse_session_receive_buf(m->se, &fbuf);

				if (res == -EAGAIN || res == -EINTR)
					break;
				if (res <= 0) { /* 0: unmounted; < 0: the device failed */
					if (res < 0)
						mnt_log("reading /dev/fuse: %s", strerror(-res));
					fuse_session_exit(m->se);
					break;
				}
				fuse_session_process_buf(m->se, &fbuf);
			}
		}
		transport_round(m);
		if (n > 0 && p[2].revents && !watch_present(&watch)) {
			mnt_log("%s is no longer mounted here (a copy may live on in another mount "
				"namespace): stopping",
				m->o.mountpoint);
			break;
		}
	}
	free(fbuf.mem);
}

static void print_stats(struct mnt *m)
{
	char calls[1024];
	size_t n = 0;
	struct rpcrdma_stats rs;

	calls[0] = '\0';
	for (unsigned p = 0; p < NFS3_NPROC; p++)
		if (m->st.calls[p] && n < sizeof(calls))
			n += (size_t)snprintf(calls + n, sizeof(calls) - n, " %s %" PRIu64,
					      nfs3_procname(p), m->st.calls[p]);
	mnt_log("stats: calls%s; max in flight %u; read %" PRIu64 " written %" PRIu64
		" octets; resent %" PRIu64 "; writes held %" PRIu64 "; errors %" PRIu64
		" transport/decode, %" PRIu64 " NFS; outages %" PRIu64 ", soft timeouts %" PRIu64,
		calls, m->st.max_inflight, m->st.bytes_read, m->st.bytes_written, m->st.resent,
		m->st.held, m->st.errors, m->st.nfs_errors, m->st.outages, m->st.timeouts);
	if (m->conn && rpcrdma_conn_stats(m->conn, &rs) == 0)
		mnt_log("stats: rdma inline %" PRIu64 " read-chunk %" PRIu64 " write-chunk %" PRIu64
			" reply-chunk %" PRIu64 " octets; credit-waits %" PRIu64
			" reconnects %" PRIu64 " retransmitted %" PRIu64,
			rs.bytes_inline, rs.bytes_read_chunk, rs.bytes_write_chunk,
			rs.bytes_reply_chunk, rs.credit_waits, rs.reconnects, rs.retransmitted);
}

/*
 * Write and commit what write-behind holds; false if data was lost.  The
 * wait is bounded whatever the mount: SHUTDOWN_TIMEOUT_MS in all (a soft
 * mount: no longer than its major timeout), SHUTDOWN_DOWN_MS while the
 * connection is down (the server is gone: nobody will take the data), and a
 * second signal ends it at once.  Signals are taken in ppoll only, as in
 * the loop.
 */
static bool drain(struct mnt *m, const sigset_t *waitmask)
{
	uint64_t limit = SHUTDOWN_TIMEOUT_MS, down_since = 0;
	uint64_t deadline;
	int sig0 = nsignals;
	bool lost;

	if (m->o.soft && mnt_major_ms(m) + 1000 < limit)
		limit = mnt_major_ms(m) + 1000;
	deadline = iwt_now_ns() + limit * 1000000u;
	mnt_wb_flush_all(m);
	while (!mnt_wb_all_clean(m)) {
		struct pollfd p = {.fd = rpcrdma_ctx_fd(m->ctx), .events = POLLIN};
		int left = iwt_ms_until(deadline), t = rpcrdma_ctx_timeout_ms(m->ctx);
		struct timespec ts;

		if (left == 0) {
			mnt_log("shutdown: the server did not take the data within %.1f s",
				(double)limit / 1e3);
			break;
		}
		if (nsignals != sig0) {
			mnt_log("shutdown: second signal, not waiting for the server");
			break;
		}
		if (m->up) {
			down_since = 0;
		} else if (!down_since) {
			down_since = iwt_now_ns();
		} else if (iwt_now_ns() - down_since >= SHUTDOWN_DOWN_MS * 1000000ull) {
			mnt_log("shutdown: server unreachable for %.0f s, giving up",
				SHUTDOWN_DOWN_MS / 1e3);
			m->unreachable = true;
			break;
		}
		if (t < 0 || t > 100)
			t = 100;
		if (t > left)
			t = left;
		ts = (struct timespec){.tv_sec = 0, .tv_nsec = (long)t * 1000000};
		if (ppoll(&p, 1, &ts, waitmask) < 0 && errno != EINTR)
			break;
		if (rpcrdma_ctx_process(m->ctx, 0) < 0)
			break;
	}
	lost = !mnt_wb_all_clean(m);
	if (lost && !m->up)
		m->unreachable = true;
	for (size_t i = 0; i < m->hash_size; i++)
		for (struct mnt_node *n = m->hash[i]; n; n = n->hnext)
			lost |= n->werr != 0;
	/* writes still held get their answer (the data is counted as lost) */
	m->o.wb_max = UINT32_MAX;
	mnt_fuse_release_held(m);
	return !lost;
}

/* ---------------------------------------------------------------------- */
/* main                                                                    */
/* ---------------------------------------------------------------------- */

/* Without -f: fork now (no thread exists yet); the parent waits for the
 * child's start-up status on a pipe and exits with it. */
static int background(int *status_fd)
{
	int p[2];
	pid_t pid;
	char st = 1;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &st, 1) != 1)
			st = 1;
		_exit(st);
	}
	close(p[0]);
	*status_fd = p[1];
	return 0;
}

static void report(int *status_fd, char st)
{
	if (*status_fd < 0)
		return;
	if (write(*status_fd, &st, 1) != 1) {
		/* the parent is gone: nothing to tell */
	}
	close(*status_fd);
	*status_fd = -1;
}

static void detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (setsid() < 0) {
		/* already a group leader: harmless */
	}
	if (chdir("/")) {
		/* "/" always exists */
	}
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	static struct mnt m;
	struct sigaction sa;
	sigset_t block, orig;
	int status_fd = -1, rc;
	bool clean;

	rc = parse_args(argc, argv, &m.o);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!m.o.foreground && background(&status_fd)) {
		iwt_msg(MNT_PROG, "cannot fork: %s", strerror(errno));
		return IWT_EXIT_FAIL;
	}
	/* 1 MiB messages are built and copied for every READ and WRITE: keep
	 * them in the heap rather than mmap / trim each one */
	mallopt(M_MMAP_THRESHOLD, (int)(8u << 20));
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	signal(SIGPIPE, SIG_IGN);
	if (m.o.iw.cm.trace)
		iw_log_set(trace_sink, NULL, IW_LOG_TRACE);

	/* SIGINT, SIGTERM and SIGHUP are taken only inside ppoll */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	rc = start(&m);
	if (rc > 0)
		mnt_log("start-up failed: %s", strerror(rc));
	if (rc || fuse_start(&m, argv[0])) {
		report(&status_fd, IWT_EXIT_FAIL);
		m.exiting = true;
		if (m.ctx)
			rpcrdma_ctx_destroy(m.ctx);
		mnt_nodes_fini(&m);
		free(m.tx);
		return IWT_EXIT_FAIL;
	}
	watch_start(&watch, m.o.mountpoint); /* before detach_stdio's chdir */
	report(&status_fd, IWT_EXIT_OK);
	if (!m.o.foreground)
		detach_stdio();

	loop(&m, &orig);
	if (stop_signal)
		mnt_log("%s: unmounting", strsignal(stop_signal));
	clean = drain(&m, &orig);
	if (!clean)
		mnt_log("some written data could not be stored on the server");
	if (m.o.stats || m.o.verbose)
		print_stats(&m);
	fuse_session_unmount(m.se);
	if (!m.unreachable)
		mnt_umount(&m);
	m.exiting = true;
	rpcrdma_ctx_destroy(m.ctx); /* outstanding calls complete (IW_ERPC_SHUTDOWN) */
	fuse_session_destroy(m.se);
	watch_stop(&watch);
	mnt_files_fini(&m);
	mnt_nodes_fini(&m);
	free(m.tx);
	mnt_debug(&m, "stopped");
	return clean ? IWT_EXIT_OK : IWT_EXIT_FAIL;
}
