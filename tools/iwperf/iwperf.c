/* SPDX-License-Identifier: MIT */
/*
 * iwperf.c - RDMA Write, RDMA Read and Send bandwidth and ping-pong latency
 * over the iwarp verbs API (iwv.h, iwcm.h), the RFC 7306 operations (atomics,
 * RDMA Write with Immediate Data) between two iwperfs, and the same patterns
 * over plain
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
#include <inttypes.h>
#include <stddef.h>
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
	      "       iwperf -c ADDR [-p PORT] [--op OP] [--size N]\n"
	      "              [--iters N | --seconds S] [--pingpong] [OPTION]...    (client)\n"
	      "\n"
	      "Measure RDMA Write, RDMA Read and Send bandwidth, and ping-pong latency, over\n"
	      "the iwarp software iWARP stack (RDMAP/DDP/MPA over TCP); with --tcp-baseline\n"
	      "on both ends, the same pattern over plain TCP sockets for comparison.  The\n"
	      "RFC 7306 operations (atomics, RDMA Write with Immediate Data) need iwperf (the\n"
	      "iwarp stack) at both ends: nothing negotiates them and Linux siw has none.\n"
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
	      "      --op OP            write (RDMA Write), read (RDMA Read), send (Send),\n"
	      "                         atomic (RFC 7306 atomics on one 8-octet word of\n"
	      "                         the server's that the --qps connections share,\n"
	      "                         see --atomic) or write-imm (RDMA Write with\n"
	      "                         Immediate Data, the message number; the server\n"
	      "                         checks each) (default write)\n"
	      "      --atomic KIND      --op atomic: fadd (Fetch-and-Add of 1) or cswap\n"
	      "                         (Compare-and-Swap of the expected value with it\n"
	      "                         plus 1; compares that fail, another QP having\n"
	      "                         been first, are counted) (default fadd)\n"
	      "      --size N           message size in octets, 1 to 256M; K, M and G\n"
	      "                         suffixes are powers of 1024 (default 65536, or 64\n"
	      "                         with --pingpong; --op atomic: 8, the only size)\n"
	      "  -n, --iters N          messages (ping-pong: round trips) per QP (default\n"
	      "                         5000 for bandwidth, 10000 for ping-pong)\n"
	      "  -t, --seconds S        run for S seconds instead (fractions allowed)\n"
	      "      --pingpong         latency instead of bandwidth: one message in flight,\n"
	      "                         the server answers each.  send: Send, echoed with a\n"
	      "                         Send.  write: RDMA Write, the server polls the last\n"
	      "                         octet and writes back (like perftest's write_lat).\n"
	      "                         read: one RDMA Read at a time.  atomic: one atomic\n"
	      "                         at a time (also --depth 1).  Not with write-imm.\n"
	      "                         Reports the round trip time\n"
	      "      --wait HOW         write ping-pong: how both ends wait for the peer's\n"
	      "                         write.  poll: poll the CQ, which makes progress,\n"
	      "                         and check the octet (default).  memory: only\n"
	      "                         check the octet, as perftest's ib_write_lat does,\n"
	      "                         while an engine thread receives; the client gets\n"
	      "                         one (--engine-thread), the server must have been\n"
	      "                         started with --engine-thread.  Compares the drop-in\n"
	      "                         libibverbs with the same way of waiting\n"
	      "      --qps N            N connections at once, each its own QP, 1 to 64;\n"
	      "                         results are summed (default 1)\n"
	      "      --depth D          bandwidth: work requests in flight per QP, 1 to 1024\n"
	      "                         (default 32; RDMA Read and atomics: at most the ORD)\n"
	      "      --verify           check the data end to end (a per-message pattern;\n"
	      "                         costs CPU, so not for peak numbers); atomic: also\n"
	      "                         every original a Fetch-and-Add returns (each once)\n"
	      "      --tcp-baseline     run the same pattern over plain TCP instead; the\n"
	      "                         server must run with --tcp-baseline too (not for\n"
	      "                         atomic and write-imm)\n"
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
	      "  iwperf -c 127.0.0.1 --op atomic --atomic cswap --pingpong --verify\n"
	      "  iwperf -c 127.0.0.1 --op write-imm --size 4K --verify\n"
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

/* What an option does with its value. */
enum arg_kind {
	A_FLAG,	   /* sets a bool of struct ipf_opts */
	A_TEXT,	   /* keeps the text (an address) */
	A_NUMBER,  /* a number by the tools' rule (iwt_num.h), in [min, max] */
	A_SECONDS, /* --seconds: decimal with a fraction */
	A_OP,	   /* --op: write, read, send, atomic or write-imm */
	A_ATOMIC,  /* --atomic: fadd or cswap */
	A_WAIT,	   /* --wait: poll or memory */
	A_VERBOSE, /* -v: one step more */
	A_HELP,
};

/* The numbers; they go into struct ipf_opts once the command line is read. */
enum num_id { N_PORT, N_SIZE, N_ITERS, N_QPS, N_DEPTH, N_COUNT };

/* The rest of a row of defs[], by kind. */
#define FLAG(cl, field)		   A_FLAG, cl, offsetof(struct ipf_opts, field), 0, 0, 0
#define TEXT(field)		   A_TEXT, false, offsetof(struct ipf_opts, field), 0, 0, 0
#define NUMBER(cl, id, lo, hi, fl) A_NUMBER, cl, id, lo, hi, fl
#define OTHER(kind, cl)		   kind, cl, 0, 0, 0, 0

/*
 * iwperf's own options (the iWARP ones are iwt_opt.h's): the long name, the
 * short letter or 0, what it does, whether only a client may give it, where
 * it goes (A_FLAG, A_TEXT: its field; A_NUMBER: its enum num_id) and a
 * number's range and iwt_num flags.  getopt_long returns the letter, or
 * LONG_ONLY + the row.
 */
static const struct optdef {
	const char *name;
	char letter;
	enum arg_kind kind;
	bool client;
	size_t at;
	uint64_t min, max;
	unsigned num_flags;
} defs[] = {
	{"server", 's', FLAG(false, server)},
	{"client", 'c', TEXT(host)},
	{"addr", 'a', TEXT(bind_addr)},
	{"port", 'p', NUMBER(false, N_PORT, 0, 65535, 0)},
	{"op", 0, OTHER(A_OP, true)},
	{"atomic", 0, OTHER(A_ATOMIC, true)},
	{"size", 0, NUMBER(true, N_SIZE, 1, IPF_SIZE_MAX, IWT_NUM_SUFFIX)},
	{"iters", 'n', NUMBER(true, N_ITERS, 1, 1ull << 40, 0)},
	{"seconds", 't', OTHER(A_SECONDS, true)},
	{"pingpong", 0, FLAG(true, pingpong)},
	{"wait", 0, OTHER(A_WAIT, true)},
	{"qps", 0, NUMBER(true, N_QPS, 1, IPF_QPS_MAX, 0)},
	{"depth", 0, NUMBER(true, N_DEPTH, 1, IPF_DEPTH_MAX, 0)},
	{"json", 0, FLAG(true, json)},
	{"tcp-baseline", 0, FLAG(false, tcp)},
	{"verify", 0, FLAG(true, verify)},
	{"verbose", 'v', OTHER(A_VERBOSE, false)},
	{"quiet", 'q', FLAG(false, quiet)},
	{"help", 'h', OTHER(A_HELP, false)},
};

#define NDEFS	  (sizeof(defs) / sizeof(defs[0]))
#define LONG_ONLY 0x100

static const struct option iwt_long[] = {IWT_OPT_LONG};

#define NIWT (sizeof(iwt_long) / sizeof(iwt_long[0]))

static bool takes_value(enum arg_kind k)
{
	return k != A_FLAG && k != A_VERBOSE && k != A_HELP;
}

/* getopt_long's tables, from defs[] and the iWARP options. */
static void getopt_tables(struct option *lo, char *shorts)
{
	*shorts++ = ':'; /* a missing value is ':' */
	for (size_t i = 0; i < NDEFS; i++) {
		lo[i] = (struct option){defs[i].name,
					takes_value(defs[i].kind) ? required_argument : no_argument,
					NULL, defs[i].letter ? defs[i].letter : LONG_ONLY + (int)i};
		if (defs[i].letter) {
			*shorts++ = defs[i].letter;
			if (takes_value(defs[i].kind))
				*shorts++ = ':';
		}
	}
	memcpy(lo + NDEFS, iwt_long, sizeof(iwt_long));
	memset(&lo[NDEFS + NIWT], 0, sizeof(lo[0]));
	*shorts = '\0';
}

static const struct optdef *def_of(int c)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (c == (defs[i].letter ? defs[i].letter : LONG_ONLY + (int)i))
			return &defs[i];
	return NULL;
}

/* One option's value into o (numbers into num[]); 0, or -1 after the message. */
static int take(const struct optdef *d, const char *arg, struct ipf_opts *o, uint64_t *num)
{
	char opt[32];

	snprintf(opt, sizeof(opt), "--%s", d->name);
	switch (d->kind) {
	case A_FLAG:
		*(bool *)((char *)o + d->at) = true;
		return 0;
	case A_TEXT:
		*(const char **)((char *)o + d->at) = arg;
		return 0;
	case A_NUMBER:
		return iwt_num_u64(PROG, opt, arg, d->min, d->max, d->num_flags, &num[d->at]);
	case A_SECONDS:
		return iwt_num_seconds(PROG, opt, arg, 0.001, 86400, &o->seconds);
	case A_OP:
		/* the atomic's kind is --atomic's: settle() makes it the op */
		if (!strcmp(arg, "atomic")) {
			o->op = IPF_OP_FADD;
			return 0;
		}
		for (int op = IPF_OP_WRITE; op <= IPF_OP_LAST; op++)
			if (!ipf_op_atomic(op) && !strcmp(arg, ipf_op_name(op))) {
				o->op = op;
				return 0;
			}
		return iwt_bad_arg(PROG, opt, arg, "write, read, send, atomic or write-imm");
	case A_WAIT:
		if (strcmp(arg, "poll") && strcmp(arg, "memory"))
			return iwt_bad_arg(PROG, opt, arg, "poll or memory");
		o->wait_memory = !strcmp(arg, "memory");
		return 0;
	case A_ATOMIC:
		if (strcmp(arg, "fadd") && strcmp(arg, "cswap"))
			return iwt_bad_arg(PROG, opt, arg, "fadd or cswap");
		o->cswap = !strcmp(arg, "cswap");
		o->atomic_set = true;
		return 0;
	case A_VERBOSE:
		o->verbose++;
		return 0;
	default:
		return 0;
	}
}

/* The checks between options, the defaults that depend on others; 0 or the exit status. */
static int settle(struct ipf_opts *o, bool client_only, const uint64_t *num, const bool *set)
{
	if (o->server == !!o->host) {
		fprintf(stderr, "%s: give -s (server) or -c ADDR (client), not %s (see --help)\n",
			PROG, o->server ? "both" : "neither");
		return IWPERF_EXIT_USAGE;
	}
	if (o->server && client_only) {
		fprintf(stderr,
			"%s: --op, --atomic, --size, --iters, --seconds, --pingpong, --wait, "
			"--qps, --depth, --verify and --json are client options\n",
			PROG);
		return IWPERF_EXIT_USAGE;
	}
	if (o->atomic_set && !ipf_op_atomic(o->op)) {
		fprintf(stderr, "%s: --atomic goes with --op atomic\n", PROG);
		return IWPERF_EXIT_USAGE;
	}
	if (ipf_op_atomic(o->op) && o->cswap)
		o->op = IPF_OP_CSWAP;
	if (ipf_op_atomic(o->op) && set[N_SIZE] && num[N_SIZE] != IPF_ATOMIC_SIZE) {
		fprintf(stderr,
			"%s: --op atomic works on one 8-octet word: --size must be 8 (or left "
			"out), not %" PRIu64 "\n",
			PROG, num[N_SIZE]);
		return IWPERF_EXIT_USAGE;
	}
	if (ipf_op_rfc7306(o->op) && o->tcp) {
		fprintf(stderr,
			"%s: --op %s is RFC 7306, which plain TCP has no equivalent of: not "
			"with --tcp-baseline\n",
			PROG, ipf_op_atomic(o->op) ? "atomic" : "write-imm");
		return IWPERF_EXIT_USAGE;
	}
	if (o->wait_memory && (o->op != IPF_OP_WRITE || !o->pingpong || o->tcp)) {
		fprintf(stderr,
			"%s: --wait memory is for the RDMA Write ping-pong: --op write "
			"--pingpong, not with --tcp-baseline\n",
			PROG);
		return IWPERF_EXIT_USAGE;
	}
	/* the stack must receive while the client spins on memory */
	if (o->wait_memory)
		o->iw.engine_thread = true;
	if (o->op == IPF_OP_WRITE_IMM && o->pingpong) {
		fprintf(stderr,
			"%s: --op write-imm measures bandwidth only: use --op write --pingpong "
			"for the round trip\n",
			PROG);
		return IWPERF_EXIT_USAGE;
	}
	o->port = set[N_PORT] ? (unsigned)num[N_PORT] : IWPERF_DEFAULT_PORT;
	if (!o->server && !o->port) {
		fprintf(stderr, "%s: the client needs a port other than 0\n", PROG);
		return IWPERF_EXIT_USAGE;
	}
	if (set[N_ITERS] && o->seconds > 0) {
		fprintf(stderr, "%s: give --iters or --seconds, not both\n", PROG);
		return IWPERF_EXIT_USAGE;
	}
	o->qps = set[N_QPS] ? (unsigned)num[N_QPS] : 1;
	o->depth = set[N_DEPTH] ? (unsigned)num[N_DEPTH] : 32;
	/* atomics one at a time are the latency test, whichever way it was asked for */
	if (ipf_op_atomic(o->op) && o->depth == 1)
		o->pingpong = true;
	o->size = ipf_op_atomic(o->op) ? IPF_ATOMIC_SIZE
		  : set[N_SIZE]	       ? (uint32_t)num[N_SIZE]
		  : o->pingpong	       ? 64
				       : 65536;
	o->iters = set[N_ITERS] ? num[N_ITERS] : o->pingpong ? 10000 : 5000;
	return 0;
}

/* 0, or the exit status of a bad command line (or of --help). */
static int parse_args(int argc, char **argv, struct ipf_opts *o, bool *help)
{
	struct option lo[NDEFS + NIWT + 1];
	char shorts[2 * NDEFS + 2];
	uint64_t num[N_COUNT] = {0};
	bool set[N_COUNT] = {false}, client_only = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->bind_addr = "0.0.0.0";
	o->op = IPF_OP_WRITE;
	iwt_opt_init(&o->iw);
	getopt_tables(lo, shorts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct optdef *d = def_of(c);

		if (c >= IWT_OPT_BASE && c < IWT_OPT_END) {
			if (iwt_opt_parse(&o->iw, PROG, c, optarg))
				return IWPERF_EXIT_USAGE;
		} else if (d) {
			client_only |= d->client;
			if (d->kind == A_NUMBER)
				set[d->at] = true;
			if (d->kind == A_HELP) {
				*help = true;
				return 0;
			}
			if (take(d, optarg, o, num))
				return IWPERF_EXIT_USAGE;
		} else if (c == ':') {
			fprintf(stderr, "%s: option '%s' needs a value (see --help)\n", PROG,
				argv[optind - 1]);
			return IWPERF_EXIT_USAGE;
		} else {
			fprintf(stderr, "%s: unknown option '%s' (see --help)\n", PROG,
				argv[optind - 1]);
			return IWPERF_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", PROG, argv[optind]);
		return IWPERF_EXIT_USAGE;
	}
	return settle(o, client_only, num, set);
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
