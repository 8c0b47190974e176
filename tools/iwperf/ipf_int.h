/* SPDX-License-Identifier: MIT */
/*
 * ipf_int.h - internals of iwperf shared by its files: the options and the
 * one-line failure message.
 */
#ifndef IWPERF_IPF_INT_H
#define IWPERF_IPF_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "iwt_opt.h"

#include "ipf_proto.h"
#include "ipf_report.h"

#define PROG		    "iwperf"
#define IWPERF_DEFAULT_PORT 7175
#define IWPERF_DEFAULT_ORD  16 /* the library's default ORD (iwcm.h) */

/* The command line (iwperf.c). */
struct ipf_opts {
	bool server;
	const char *host;      /* client: server address */
	const char *bind_addr; /* server: listen address */
	unsigned port;
	int op; /* enum ipf_op */
	uint32_t size;
	uint64_t iters;
	double seconds;
	bool pingpong;
	unsigned qps;
	unsigned depth;
	bool json;
	bool tcp;
	bool verify;
	int verbose;
	bool quiet;
	struct iwt_opt iw;
};

/*
 * The first runtime failure, kept for main to print as the one line on
 * stderr; later ones are dropped.  Returns -1.
 */
int ipf_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
