/* SPDX-License-Identifier: MIT */
/*
 * iwperf.c - RDMA Write, RDMA Read and Send bandwidth and ping-pong latency
 * over the iwarp verbs API (iwv.h, iwcm.h), and the same patterns over plain
 * TCP sockets (--tcp-baseline), so the cost of the stack can be read as a
 * ratio against the kernel's TCP on the same machine in the same run.
 *
 * Theory of operation.  This file is the command line: the options into a
 * struct ipf_opts (numbers by the tools' rule, iwt_num.h; the iWARP options
 * by iwt_opt.h), the checks between them, --help, and main, which hands the
 * options to the driver (ipf_drive.c) with the transport they name:
 * ipf_verbs_ops, or ipf_tcp_ops for --tcp-baseline.  How a test runs is
 * told in ipf_int.h; the wire in ipf_proto.h; the output in ipf_report.h.
 * Exit status: 0, 1 after one line on stderr (ipf_fail), 2 for a bad
 * command line.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "iwt_err.h"
#include "iwt_num.h"
#include "iwt_opt.h"

#include "ipf_int.h"

#define IWPERF_EXIT_OK	  0
#define IWPERF_EXIT_FAIL  1
#define IWPERF_EXIT_USAGE 2

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
	const struct ipf_transport_ops *t;
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
	t = o.tcp ? &ipf_tcp_ops : &ipf_verbs_ops;
	rc = o.server ? ipf_server_run(&o, t) : ipf_client_run(&o, t);
	if (rc) {
		ipf_fail_print();
		return IWPERF_EXIT_FAIL;
	}
	return IWPERF_EXIT_OK;
}
