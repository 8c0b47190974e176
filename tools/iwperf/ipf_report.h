/* SPDX-License-Identifier: MIT */
/*
 * ipf_report.h - what iwperf prints: the client's banner and result table
 * (or one JSON object per line), the latency samples behind the ping-pong
 * columns, and the server's "listening on" and per-connection lines.
 *
 * Theory of operation.
 *
 * A client run ends with one struct ipf_res (messages, octets, first post
 * and RESULT time) and one struct ipf_lat (every round-trip time, ping-pong
 * only) per connection.  ipf_report() prints, with -v and several
 * connections, one line per connection (QPs column "#i", JSON qp_index i),
 * then the total: the sums, timed from the earliest start to the latest end,
 * and latency percentiles over the samples of every connection together.
 * Rates are payload octets over that time, GB being 10^9 octets;
 * percentiles are nearest-rank.  The format is iwperf(1), OUTPUT: the
 * bench script (tools/bench/bench_verbs.sh) and the tshark interop test
 * read the JSON, so its keys and their order stay as they are.
 *
 * Every function writes to stdout and flushes, so lines reach a pipe at
 * once; the table header is printed before the first line of a run.
 */
#ifndef IWPERF_IPF_REPORT_H
#define IWPERF_IPF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ipf_opts;
struct ipf_hello;

/* Round-trip times of one connection, ns (at most LAT_MAX are kept). */
struct ipf_lat {
	uint64_t *v;
	size_t n, cap;
};

/* One more sample; 0, or -1 (ipf_fail) without memory. */
int ipf_lat_push(struct ipf_lat *l, uint64_t ns);

/* What one connection (or the sum of all) achieved. */
struct ipf_res {
	uint64_t msgs, bytes;
	uint64_t failed;	 /* Compare-and-Swap: compares that did not match */
	uint64_t t_start, t_end; /* iwt_now_ns() */
};

/* What describes the whole run on every output line. */
struct ipf_run_info {
	const char *transport; /* "iwarp" or "tcp" */
	const char *engine;    /* NULL for tcp */
	bool crc;
	const char *markers; /* "off", "tx", "rx", "both" (as this client sees them) */
	unsigned depth;	     /* in flight per connection, after the limits */
	double cpu_s;	     /* this process's CPU time (user + system, every thread)
				from the first post to the last RESULT */
};

/* "off", "tx", "rx" or "both". */
const char *ipf_markers_str(bool tx, bool rx);

/* Client: the line before the table (human output only); `how` names the transport. */
void ipf_banner(const struct ipf_opts *o, unsigned depth, const char *how);

/* Client: the result of n connections (rs[i], ls[i]), per connection with -v, and the total. */
void ipf_report(const struct ipf_opts *o, const struct ipf_run_info *ri, const struct ipf_res *rs,
		struct ipf_lat *const *ls, size_t n);

/* Server: "iwperf: listening on WHERE (HOW)" unless -q. */
void ipf_report_listening(const struct ipf_opts *o, const char *where, const char *how);

/* Server: the line of one finished connection, unless -q. */
void ipf_report_served(const struct ipf_opts *o, const char *transport, const char *peer,
		       const struct ipf_hello *h, uint64_t count, int status);

#endif
