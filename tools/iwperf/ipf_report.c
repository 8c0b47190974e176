/* SPDX-License-Identifier: MIT */
/*
 * ipf_report.c - iwperf's output: banner, result table or JSON lines,
 * latency percentiles, the server's lines.
 *
 * Theory of operation: see ipf_report.h.  The table and JSON formats are
 * iwperf(1), OUTPUT, to the column and key.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipf_int.h"
#include "ipf_report.h"

#define LAT_MAX (50u * 1000 * 1000) /* latency samples kept per connection */

int ipf_lat_push(struct ipf_lat *l, uint64_t ns)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		uint64_t *v;

		if (l->n >= LAT_MAX)
			return 0; /* enough samples: percentiles stop moving */
		v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return ipf_fail("out of memory for latency samples");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = ns;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct lat_stats {
	bool valid;
	double min, p50, avg, p99, max; /* microseconds */
};

/* Nearest-rank percentiles over every sample of `n` connections. */
static void lat_summarise(struct ipf_lat *const *ls, size_t n, struct lat_stats *s)
{
	size_t total = 0, k = 0;
	uint64_t *all;
	double sum = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++)
		total += ls[i]->n;
	if (!total)
		return;
	all = malloc(total * sizeof(*all));
	if (!all)
		return;
	for (size_t i = 0; i < n; i++) {
		memcpy(all + k, ls[i]->v, ls[i]->n * sizeof(*all));
		k += ls[i]->n;
	}
	qsort(all, total, sizeof(*all), cmp_u64);
	for (size_t i = 0; i < total; i++)
		sum += (double)all[i];
	s->valid = true;
	s->min = all[0] / 1e3;
	s->max = all[total - 1] / 1e3;
	s->avg = sum / (double)total / 1e3;
	s->p50 = all[(size_t)ceil(0.50 * (double)total) - 1] / 1e3;
	s->p99 = all[(size_t)ceil(0.99 * (double)total) - 1] / 1e3;
	free(all);
}

const char *ipf_markers_str(bool tx, bool rx)
{
	return tx && rx ? "both" : tx ? "tx" : rx ? "rx" : "off";
}

static void print_json(const struct ipf_opts *o, const struct ipf_run_info *ri, int qp_index,
		       const struct ipf_res *r, double secs, const struct lat_stats *ls)
{
	double gbps = secs > 0 ? r->bytes / secs / 1e9 : 0;
	double mps = secs > 0 ? r->msgs / secs : 0;
	char p50[32] = "null", p99[32] = "null", idx[16] = "null";

	if (ls->valid) {
		snprintf(p50, sizeof(p50), "%.3f", ls->p50);
		snprintf(p99, sizeof(p99), "%.3f", ls->p99);
	}
	if (qp_index >= 0)
		snprintf(idx, sizeof(idx), "%d", qp_index);
	printf("{\"op\":\"%s\",\"pingpong\":%s,\"size\":%" PRIu32 ",\"iters\":%" PRIu64
	       ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"gbytes_per_s\":%.4f"
	       ",\"msgs_per_s\":%.1f,\"lat_us_p50\":%s,\"lat_us_p99\":%s",
	       ipf_op_name(o->op), o->pingpong ? "true" : "false", o->size, r->msgs, r->bytes, secs,
	       gbps, mps, p50, p99);
	if (ls->valid)
		printf(",\"lat_us_min\":%.3f,\"lat_us_avg\":%.3f,\"lat_us_max\":%.3f", ls->min,
		       ls->avg, ls->max);
	printf(",\"crc\":%s,\"markers\":\"%s\",\"transport\":\"%s\",\"qps\":%u"
	       ",\"qp_index\":%s,\"depth\":%u,\"verify\":%s,\"engine\":",
	       ri->crc ? "true" : "false", ri->markers, ri->transport, o->qps, idx, ri->depth,
	       o->verify ? "true" : "false");
	if (ri->engine)
		printf("\"%s\"", ri->engine);
	else
		printf("null");
	/* a key of its own, last: the keys before it stay as they are */
	if (o->op == IPF_OP_CSWAP)
		printf(",\"cswap_failed\":%" PRIu64, r->failed);
	/* the process's CPU, on the total line only (connections share it) */
	if (qp_index < 0) {
		printf(",\"cpu_s\":%.3f,\"cpu_s_per_gb\":", ri->cpu_s);
		if (r->bytes)
			printf("%.4f", ri->cpu_s / ((double)r->bytes / 1e9));
		else
			printf("null");
	}
	printf("}\n");
}

/* The op column: 6 wide as it always was, wider for the longer names. */
static int op_width(const struct ipf_opts *o)
{
	int n = (int)strlen(ipf_op_name(o->op));

	return n > 6 ? n : 6;
}

static bool header_printed;

static void print_row(const struct ipf_opts *o, const struct ipf_run_info *ri, int qp_index,
		      const struct ipf_res *r, double secs, const struct lat_stats *ls)
{
	double gbps = secs > 0 ? r->bytes / secs / 1e9 : 0;
	double mps = secs > 0 ? r->msgs / secs : 0;
	bool atomic = ipf_op_atomic(o->op), cswap = o->op == IPF_OP_CSWAP;
	int w = op_width(o);
	char qps[16];

	/* atomics: the latency row also has the rate; Compare-and-Swap the failed compares */
	if (!header_printed) {
		header_printed = true;
		if (o->pingpong)
			printf(" %-*s %-9s %4s %10s %12s %10s %10s %10s %10s %10s", w, "op",
			       "transport", "QPs", "#bytes", "#iterations", "t_min[us]",
			       "t_p50[us]", "t_avg[us]", "t_p99[us]", "t_max[us]");
		else
			printf(" %-*s %-9s %4s %10s %12s %10s %10s %14s", w, "op", "transport",
			       "QPs", "#bytes", "#iterations", "seconds", "BW[GB/s]",
			       "MsgRate[Mpps]");
		if (atomic && o->pingpong)
			printf(" %14s", "MsgRate[Mpps]");
		if (cswap)
			printf(" %12s", "#cmp_failed");
		printf("\n");
	}
	if (qp_index >= 0)
		snprintf(qps, sizeof(qps), "#%d", qp_index);
	else
		snprintf(qps, sizeof(qps), "%u", o->qps);
	if (o->pingpong)
		printf(" %-*s %-9s %4s %10" PRIu32 " %12" PRIu64
		       " %10.2f %10.2f %10.2f %10.2f %10.2f",
		       w, ipf_op_name(o->op), ri->transport, qps, o->size, r->msgs, ls->min,
		       ls->p50, ls->avg, ls->p99, ls->max);
	else
		printf(" %-*s %-9s %4s %10" PRIu32 " %12" PRIu64 " %10.3f %10.3f %14.4f", w,
		       ipf_op_name(o->op), ri->transport, qps, o->size, r->msgs, secs, gbps,
		       mps / 1e6);
	if (atomic && o->pingpong)
		printf(" %14.4f", mps / 1e6);
	if (cswap)
		printf(" %12" PRIu64, r->failed);
	printf("\n");
}

/* One result line: connection qp_index, or the total (-1) over nls connections. */
static void print_line(const struct ipf_opts *o, const struct ipf_run_info *ri, int qp_index,
		       const struct ipf_res *r, struct ipf_lat *const *ls, size_t nls)
{
	double secs = r->t_end > r->t_start ? (r->t_end - r->t_start) / 1e9 : 0;
	struct lat_stats st;

	lat_summarise(ls, nls, &st);
	if (o->json)
		print_json(o, ri, qp_index, r, secs, &st);
	else
		print_row(o, ri, qp_index, r, secs, &st);
	fflush(stdout);
}

void ipf_report(const struct ipf_opts *o, const struct ipf_run_info *ri, const struct ipf_res *rs,
		struct ipf_lat *const *ls, size_t n)
{
	struct ipf_res tot = {.t_start = UINT64_MAX};

	if (o->verbose && n > 1)
		for (size_t i = 0; i < n; i++)
			print_line(o, ri, (int)i, &rs[i], &ls[i], 1);
	for (size_t i = 0; i < n; i++) {
		tot.msgs += rs[i].msgs;
		tot.bytes += rs[i].bytes;
		tot.failed += rs[i].failed;
		if (rs[i].t_start < tot.t_start)
			tot.t_start = rs[i].t_start;
		if (rs[i].t_end > tot.t_end)
			tot.t_end = rs[i].t_end;
	}
	print_line(o, ri, -1, &tot, ls, n);
}

void ipf_banner(const struct ipf_opts *o, unsigned depth, const char *how)
{
	char iters[48];

	if (o->json || o->quiet)
		return;
	if (o->seconds > 0)
		snprintf(iters, sizeof(iters), "%.3g s", o->seconds);
	else
		snprintf(iters, sizeof(iters), "%" PRIu64 " iterations", o->iters);
	printf("%s: %s%s, %" PRIu32 " B, %s, %u QP%s, depth %u%s; %s; server %s port %u\n", PROG,
	       ipf_op_name(o->op), o->pingpong ? " ping-pong" : " bandwidth", o->size, iters,
	       o->qps, o->qps == 1 ? "" : "s", depth, o->verify ? ", verify" : "", how, o->host,
	       o->port);
}

void ipf_report_listening(const struct ipf_opts *o, const char *where, const char *how)
{
	if (o->quiet)
		return;
	printf("%s: listening on %s (%s)\n", PROG, where, how);
	fflush(stdout);
}

void ipf_report_served(const struct ipf_opts *o, const char *transport, const char *peer,
		       const struct ipf_hello *h, uint64_t count, int status)
{
	if (o->quiet)
		return;
	printf("%s: %s: %s %s%s %" PRIu32 " B, QP %u/%u: %s%" PRIu64 "%s, %s\n", PROG, peer,
	       transport, ipf_op_name(h->op), h->flags & IPF_HF_PINGPONG ? " ping-pong" : "",
	       h->size, h->qp_index + 1u, h->qps, ipf_op_atomic(h->op) ? "target word " : "", count,
	       ipf_op_atomic(h->op) ? "" : " messages",
	       status == IPF_RES_OK
		       ? (h->flags & IPF_HF_VERIFY && !ipf_op_atomic(h->op) ? "data verified"
									    : "ok")
		       : ipf_res_status_str(status));
	fflush(stdout);
}
