/* SPDX-License-Identifier: MIT */
/*
 * iwdump.c - decode iWARP (MPA, DDP, RDMAP, RFC 7306) and RPC-over-RDMA /
 * NFS from a pcap or pcapng capture or a live interface, as tshark does for
 * other protocols: one line per message, -V for every field with its RFC
 * section, --json for scripts, --stats for a summary per connection.
 *
 * Theory of operation.  This file is the command line and the wiring of
 * the stages of iwd.h:
 *
 *   iwd_cap (file or live) --segments--> iwd_tcp --octets--> iwd_iwarp
 *        (one per connection, made in the open callback) --events--> iwd_out
 *
 * The tcp callbacks below forward to the connection's iwd_iwarp and destroy
 * it once both directions have ended.  iwd_out is every iwd_iwarp's sink.
 * The first segment's time is the origin of relative times.  SIGINT and
 * SIGTERM stop the capture (iwd_cap_stop, async-signal-safe) so that what
 * was seen is still reassembled, closed and summed up (--stats); a second
 * signal kills as usual.
 *
 * Exit status: 0; 1 after a read error, or with --check when anything was
 * wrong (a bad CRC or Marker, undecoded octets, a gap); 2 for a bad command
 * line.
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

#include "iwd.h"
#include "iwt_err.h"
#include "iwt_num.h"

#ifndef IWARP_VERSION
#define IWARP_VERSION "0.1.0"
#endif

#define MAX_MSG_MIN (1u << 10)
#define MAX_MSG_MAX (1u << 30)
#define FILTER_MAX  4096 /* octets of a capture filter from the arguments */

static const char *const prog = "iwdump";

struct opts {
	const char *file;  /* -r */
	const char *iface; /* -i */
	char *filter;	   /* the remaining arguments, joined (live only) */
	enum iwd_view view;
	bool stats, check, abs_time;
	uint64_t count; /* -c: 0 = all */
	uint16_t port;
	struct iwd_midstream mid;
	bool crc_given, markers_given;
	size_t max_msg;
};

/* ---------------------------------------------------------------------- */
/* Command line                                                            */
/* ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	/* split: ISO C caps string literals at 4095 octets */
	fputs("Usage: iwdump -r FILE [-V | --json] [--stats] [-c N] [OPTION]...\n"
	      "       iwdump -i IFACE [-V | --json] [--stats] [-c N] [OPTION]... [FILTER...]\n"
	      "\n"
	      "Decode the iWARP traffic in a pcap or pcapng capture, or live on an\n"
	      "interface, as tshark does for other protocols: the MPA Request and Reply\n"
	      "frames (RFC 5044, RFC 6581), every RDMAP message (RFC 5040, RFC 7306) with\n"
	      "its DDP segments (RFC 5041), Terminates, and in the Sends the RPC-over-RDMA\n"
	      "version 1 header (RFC 8166) with the RPC call or reply and the NFS\n"
	      "procedure or COMPOUND operations it carries.  TCP is reassembled first;\n"
	      "Markers and CRCs are checked; a reply says where its data went (the RDMA\n"
	      "Writes into its call's Write chunk).\n"
	      "\n"
	      "Input:\n"
	      "  -r FILE              read a pcap or pcapng file (- for standard input)\n"
	      "  -i IFACE             capture live on IFACE (needs the privilege to\n"
	      "                       capture); the arguments after the options are a\n"
	      "                       capture filter, joined by spaces as tshark takes\n"
	      "                       them (default: tcp)\n"
	      "  -c N                 stop after packet N of the capture\n"
	      "      --port N         only connections with TCP port N are iWARP; the\n"
	      "                       others are ignored\n"
	      "      --mpa-mid-stream read connections whose MPA handshake is not in the\n"
	      "                       capture: FPDU boundaries and the Marker phase are\n"
	      "                       found in the stream, CRC and Markers are as below\n"
	      "      --crc on|off     with --mpa-mid-stream: FPDUs end with a CRC (default\n"
	      "                       on)\n"
	      "      --markers none|c2s|s2c|both\n"
	      "                       with --mpa-mid-stream: the directions that carry\n"
	      "                       Markers, c2s being from the TCP client (the end\n"
	      "                       that sent the SYN) to the server (default none)\n"
	      "      --max-msg N      keep up to N octets of each untagged message for\n"
	      "                       decoding (K and M suffixes; default 1M)\n"
	      "\n",
	      f);
	fputs("Output:\n"
	      "  (default)            one line per MPA frame, RDMAP message, gap and\n"
	      "                       undecoded run: frame, time, src:port -> dst:port,\n"
	      "                       the message, RPC-over-RDMA / RPC / NFS, then what\n"
	      "                       is wrong in brackets ([CRC ERROR], [Marker error],\n"
	      "                       [quirk: ...])\n"
	      "  -V                   every FPDU and frame field by field, with the RFC\n"
	      "                       section each field comes from\n"
	      "      --json           one JSON object per line per message (keys in\n"
	      "                       iwdump(1))\n"
	      "      --stats          at the end, a summary per connection: MPA options,\n"
	      "                       messages per opcode and direction, octets, CRC and\n"
	      "                       Marker errors, Terminates, gaps, Read round trips,\n"
	      "                       quirks; and the TCP totals.  Alone it prints only\n"
	      "                       that; with --json one object per connection\n"
	      "  -t a|r               times absolute (time of day) or relative to the first\n"
	      "                       packet (default r)\n"
	      "      --check          exit 1 when a CRC or Marker was bad, octets were not\n"
	      "                       decoded or the capture had a gap\n"
	      "  -h, --help           show this help and exit\n"
	      "  -v, --version        show the version and exit\n"
	      "\n" IWT_NUM_HELP "\n"
	      "Exit status:\n"
	      "  0  done\n"
	      "  1  the capture could not be opened or read, or --check found a problem\n"
	      "  2  bad command line\n"
	      "\n"
	      "Examples:\n"
	      "  iwdump -r nfs.pcap                         one line per message\n"
	      "  iwdump -V -r rping.pcap                    every field, for learning\n"
	      "  iwdump -r nfs.pcap --json | jq .rpc.name   names of the RPCs\n"
	      "  iwdump -i lo --stats port 20049            NFS/RDMA on loopback, summed up\n"
	      "                                             at Ctrl-C\n"
	      "  iwdump -r mid.pcap --mpa-mid-stream --crc off --markers none --port 7174\n"
	      "                                             rping traffic caught mid-stream\n"
	      "\n"
	      "See iwdump(1), tshark(1), iwperf(1), iwping(1).\n",
	      f);
}

#define usage_err(...) iwt_usage_err(prog, __VA_ARGS__)

static int parse_num(const char *opt, const char *arg, uint64_t min, uint64_t max, unsigned flags,
		     uint64_t *out)
{
	if (iwt_num_u64(prog, opt, arg, min, max, flags, out))
		return iwt_try_help(prog), -1;
	return 0;
}

/* The arguments after the options, joined by spaces (a capture filter). */
static int join_filter(int argc, char **argv, struct opts *o)
{
	size_t len = 0;

	for (int i = optind; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > FILTER_MAX)
		return usage_err("the capture filter is longer than %d octets", FILTER_MAX);
	o->filter = malloc(len + 1);
	if (!o->filter) {
		iwt_msg(prog, "out of memory");
		return -1;
	}
	o->filter[0] = '\0';
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			strcat(o->filter, " ");
		strcat(o->filter, argv[i]);
	}
	return 0;
}

enum {
	OPT_JSON = 0x100,
	OPT_STATS,
	OPT_PORT,
	OPT_MID,
	OPT_CRC,
	OPT_MARKERS,
	OPT_CHECK,
	OPT_MAX_MSG,
};

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"stats", no_argument, NULL, OPT_STATS},
		{"port", required_argument, NULL, OPT_PORT},
		{"mpa-mid-stream", no_argument, NULL, OPT_MID},
		{"crc", required_argument, NULL, OPT_CRC},
		{"markers", required_argument, NULL, OPT_MARKERS},
		{"check", no_argument, NULL, OPT_CHECK},
		{"max-msg", required_argument, NULL, OPT_MAX_MSG},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	bool verbose = false, json = false;
	uint64_t v;
	int c, on;

	memset(o, 0, sizeof(o[0]));
	o->mid.crc = true;
	/* "+": options first, then the filter, which may hold words like "-1" */
	while ((c = getopt_long(argc, argv, "+r:i:Vc:t:hv", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->file = optarg;
			break;
		case 'i':
			o->iface = optarg;
			break;
		case 'V':
			verbose = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_STATS:
			o->stats = true;
			break;
		case 'c':
			if (parse_num("-c", optarg, 1, UINT32_MAX, 0, &o->count))
				return -1;
			break;
		case 't':
			if (!strcmp(optarg, "a")) {
				o->abs_time = true;
			} else if (!strcmp(optarg, "r")) {
				o->abs_time = false;
			} else {
				iwt_bad_arg(prog, "-t", optarg,
					    "must be a (absolute) or r (relative)");
				return iwt_try_help(prog), -1;
			}
			break;
		case OPT_PORT:
			if (parse_num("--port", optarg, 1, 65535, 0, &v))
				return -1;
			o->port = (uint16_t)v;
			break;
		case OPT_MID:
			o->mid.enabled = true;
			break;
		case OPT_CRC:
			on = iwt_onoff_parse(optarg);
			if (on < 0) {
				iwt_bad_arg(prog, "--crc", optarg, "must be on or off");
				return iwt_try_help(prog), -1;
			}
			o->mid.crc = on;
			o->crc_given = true;
			break;
		case OPT_MARKERS:
			if (!strcmp(optarg, "none")) {
				o->mid.markers[0] = o->mid.markers[1] = false;
			} else if (!strcmp(optarg, "c2s")) {
				o->mid.markers[0] = true;
				o->mid.markers[1] = false;
			} else if (!strcmp(optarg, "s2c")) {
				o->mid.markers[0] = false;
				o->mid.markers[1] = true;
			} else if (!strcmp(optarg, "both")) {
				o->mid.markers[0] = o->mid.markers[1] = true;
			} else {
				iwt_bad_arg(prog, "--markers", optarg,
					    "must be none, c2s, s2c or both");
				return iwt_try_help(prog), -1;
			}
			o->markers_given = true;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_MAX_MSG:
			if (parse_num("--max-msg", optarg, MAX_MSG_MIN, MAX_MSG_MAX, IWT_NUM_SUFFIX,
				      &v))
				return -1;
			o->max_msg = (size_t)v;
			break;
		case 'h':
			usage(stdout);
			exit(IWT_EXIT_OK);
		case 'v':
			printf("%s %s (iWARP: RFC 5040, 5041, 5044, 6581, 7306; RPC-over-RDMA: "
			       "RFC 8166, 8267, 8797)\n",
			       prog, IWARP_VERSION);
			exit(IWT_EXIT_OK);
		default:
			/* getopt has said what was wrong */
			return iwt_try_help(prog), -1;
		}
	}
	if (verbose && json)
		return usage_err("-V and --json are two views: give one");
	o->view = json ? IWD_VIEW_JSON : verbose ? IWD_VIEW_VERBOSE : IWD_VIEW_LINE;
	if (!o->file == !o->iface)
		return usage_err(o->file ? "give -r FILE or -i IFACE, not both"
					 : "give -r FILE (a capture) or -i IFACE (live)");
	if ((o->crc_given || o->markers_given) && !o->mid.enabled)
		return usage_err("--crc and --markers describe --mpa-mid-stream connections: "
				 "add --mpa-mid-stream");
	if (optind < argc) {
		if (o->file)
			return usage_err("unexpected argument '%s' (a capture filter is for -i)",
					 argv[optind]);
		if (join_filter(argc, argv, o))
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The stages                                                              */
/* ---------------------------------------------------------------------- */

struct app {
	struct iwd_iwarp_cfg icfg;
	struct iwd_sink sink;
	uint16_t port;
};

/* A connection: its decoder, and which directions have ended. */
struct conn {
	struct iwd_iwarp *iw;
	bool closed[2];
};

static void *tcp_open(void *user, const struct iwd_flow *flow, uint64_t ts_ns)
{
	struct app *a = user;
	struct conn *c;

	(void)ts_ns;
	if (a->port && flow->port[0] != a->port && flow->port[1] != a->port)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->iw = iwd_iwarp_create(&a->icfg, flow, &a->sink);
	if (!c->iw) {
		free(c);
		return NULL;
	}
	return c;
}

static void tcp_data(void *conn, int dir, uint64_t off, const uint8_t *p, size_t n, uint64_t ts_ns,
		     uint64_t frame)
{
	struct conn *c = conn;

	iwd_iwarp_data(c->iw, dir, off, p, n, ts_ns, frame);
}

static void tcp_gap(void *conn, int dir, uint64_t off, uint64_t n, uint64_t ts_ns, uint64_t frame)
{
	struct conn *c = conn;

	iwd_iwarp_gap(c->iw, dir, off, n, ts_ns, frame);
}

static void tcp_close(void *conn, int dir, enum iwd_close_how how, uint64_t ts_ns)
{
	struct conn *c = conn;

	iwd_iwarp_close(c->iw, dir, how, ts_ns);
	c->closed[dir ? 1 : 0] = true;
	if (c->closed[0] && c->closed[1]) {
		iwd_iwarp_destroy(c->iw);
		free(c);
	}
}

static const struct iwd_tcp_ops tcp_ops = {
	.open = tcp_open,
	.data = tcp_data,
	.gap = tcp_gap,
	.close = tcp_close,
};

/* ---------------------------------------------------------------------- */
/* main                                                                    */
/* ---------------------------------------------------------------------- */

static struct iwd_cap *volatile g_cap;

static void on_signal(int sig)
{
	struct iwd_cap *c = g_cap;

	(void)sig;
	if (c)
		iwd_cap_stop(c);
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking read returns; a second signal kills */
	sa.sa_flags = (int)SA_RESETHAND;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int run(const struct opts *o)
{
	struct app app = {
		.icfg = {.mid = o->mid, .port = o->port, .max_msg = o->max_msg},
		.port = o->port,
	};
	struct iwd_out_cfg ocfg = {
		.view = o->view,
		.stats = o->stats,
		/* --stats alone: the summary only */
		.quiet = o->stats && o->view == IWD_VIEW_LINE,
		.abs_time = o->abs_time,
		.mid = o->mid,
	};
	char err[512] = "";
	int status = IWT_EXIT_OK;

	/* FPDU events always: they carry the Marker and CRC findings that the
	 * lines flag and --check counts, and the fields of -V and --stats */
	app.icfg.keep_fpdus = true;

	struct iwd_cap *cap = o->file ? iwd_cap_open_file(o->file, err, sizeof(err))
				      : iwd_cap_open_live(o->iface, o->filter, err, sizeof(err));
	if (!cap) {
		iwt_msg(prog, "%s", err[0] ? err : "cannot open the capture");
		return IWT_EXIT_FAIL;
	}
	if (o->iface)
		setvbuf(stdout, NULL, _IOLBF, 0);
	struct iwd_out *out = iwd_out_create(&ocfg, stdout);
	app.sink.event = iwd_out_event;
	app.sink.user = out;
	struct iwd_tcp *tcp = out ? iwd_tcp_create(&tcp_ops, &app, 0) : NULL;
	if (!tcp) {
		iwt_msg(prog, "out of memory");
		iwd_out_destroy(out);
		iwd_cap_close(cap);
		return IWT_EXIT_FAIL;
	}
	g_cap = cap;
	catch_signals();

	struct iwd_seg seg;
	uint64_t last_ts = 0;
	bool first = true;
	for (;;) {
		int r = iwd_cap_next(cap, &seg, err, sizeof(err));
		if (r == 0)
			break;
		if (r < 0) {
			iwt_msg(prog, "%s", err[0] ? err : "read error");
			status = IWT_EXIT_FAIL;
			break;
		}
		if (o->count && seg.frame > o->count)
			break;
		if (first) {
			iwd_out_time_origin(out, seg.ts_ns);
			first = false;
		}
		if (seg.ts_ns > last_ts)
			last_ts = seg.ts_ns;
		iwd_tcp_segment(tcp, &seg);
		if (o->count && seg.frame >= o->count)
			break;
	}
	g_cap = NULL;

	struct iwd_tcp_stats ts;
	iwd_tcp_finish(tcp, last_ts);
	iwd_tcp_get_stats(tcp, &ts);
	uint64_t problems = iwd_out_finish(out, &ts);
	iwd_tcp_destroy(tcp);
	iwd_out_destroy(out);
	iwd_cap_close(cap);
	if (fflush(stdout) || ferror(stdout)) {
		iwt_msg(prog, "write error on standard output: %s", strerror(errno));
		return IWT_EXIT_FAIL;
	}
	if (o->check && problems) {
		iwt_msg(prog,
			"--check: %" PRIu64 " problem%s (bad CRC or Marker, undecoded octets, "
			"gaps)",
			problems, problems == 1 ? "" : "s");
		status = IWT_EXIT_FAIL;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct opts o;

	if (parse_args(argc, argv, &o)) {
		free(o.filter);
		return IWT_EXIT_USAGE;
	}
	int status = run(&o);
	free(o.filter);
	return status;
}
