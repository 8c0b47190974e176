/* SPDX-License-Identifier: MIT */
/*
 * iwt_opt.h - the iWARP options every verbs tool shares (docs/verbs.md §4.4):
 *   --mpa-rev 1|2  --crc on|off  --markers on|off  --p2p on|off
 *   --rtr write|read|send  --ird N  --ord N  --engine uring|epoll  --trace
 * plus --first-fpdu-delay MS (the Linux siw start-up pause),
 * --engine-thread, --rx-direct on|off, and the liveness and handshake limits (docs/verbs.md):
 *   --keepalive IDLE[,INTVL[,CNT]]  --user-timeout MS  --mpa-timeout MS
 *   --handshake-grace MS.  Parsed with getopt_long: a tool appends IWT_OPT_LONG
 * to its long options and hands every option value >= IWT_OPT_BASE to
 * iwt_opt_parse().  Part of the tools library (tools/lib, prefix iwt_); the
 * values follow iwt_num.h (numbers), iwt_rtr.h (--rtr) and iwt_err.h
 * (messages).
 */
#ifndef IWARP_TOOLS_IWT_OPT_H
#define IWARP_TOOLS_IWT_OPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

struct iwt_opt {
	struct iwcm_options cm;	     /* mpa_rev, crc, markers, p2p, rtr, delay, trace */
	enum iwv_engine_type engine; /* IWV_ENGINE_DEFAULT unless --engine */
	bool engine_thread;	     /* --engine-thread */
	int rx_direct;		     /* --rx-direct: 1 on, 0 off, -1 as IWARP_RX_DIRECT says */
	uint8_t ird, ord;	     /* --ird / --ord (0 = library default) */
};

enum {
	IWT_OPT_BASE = 0x1000,
	IWT_OPT_MPA_REV = IWT_OPT_BASE,
	IWT_OPT_CRC,
	IWT_OPT_MARKERS,
	IWT_OPT_P2P,
	IWT_OPT_RTR,
	IWT_OPT_IRD,
	IWT_OPT_ORD,
	IWT_OPT_ENGINE,
	IWT_OPT_ENGINE_THREAD,
	IWT_OPT_TRACE,
	IWT_OPT_FIRST_FPDU_DELAY,
	IWT_OPT_KEEPALIVE,
	IWT_OPT_USER_TIMEOUT,
	IWT_OPT_MPA_TIMEOUT,
	IWT_OPT_HANDSHAKE_GRACE,
	IWT_OPT_RX_DIRECT,
	IWT_OPT_END,
};

/* struct option initialisers for the options above (no terminating entry). */
#define IWT_OPT_LONG                                                                               \
	{"mpa-rev", required_argument, NULL, IWT_OPT_MPA_REV},                                     \
		{"crc", required_argument, NULL, IWT_OPT_CRC},                                     \
		{"markers", required_argument, NULL, IWT_OPT_MARKERS},                             \
		{"p2p", required_argument, NULL, IWT_OPT_P2P},                                     \
		{"rtr", required_argument, NULL, IWT_OPT_RTR},                                     \
		{"ird", required_argument, NULL, IWT_OPT_IRD},                                     \
		{"ord", required_argument, NULL, IWT_OPT_ORD},                                     \
		{"engine", required_argument, NULL, IWT_OPT_ENGINE},                               \
		{"engine-thread", no_argument, NULL, IWT_OPT_ENGINE_THREAD},                       \
		{"trace", no_argument, NULL, IWT_OPT_TRACE},                                       \
		{"first-fpdu-delay", required_argument, NULL, IWT_OPT_FIRST_FPDU_DELAY},           \
		{"keepalive", required_argument, NULL, IWT_OPT_KEEPALIVE},                         \
		{"user-timeout", required_argument, NULL, IWT_OPT_USER_TIMEOUT},                   \
		{"mpa-timeout", required_argument, NULL, IWT_OPT_MPA_TIMEOUT},                     \
		{"rx-direct", required_argument, NULL, IWT_OPT_RX_DIRECT},                         \
	{                                                                                          \
		"handshake-grace", required_argument, NULL, IWT_OPT_HANDSHAKE_GRACE                \
	}

/* Library defaults (iwcm_options_default, engine DEFAULT, no thread). */
void iwt_opt_init(struct iwt_opt *o);
/*
 * Handle one getopt_long result `c` (>= IWT_OPT_BASE) with optarg `arg`.
 * Returns 0, or -1 after printing "PROG: invalid value 'X' for --opt: why" to
 * stderr (the tool then exits with status 2).
 */
int iwt_opt_parse(struct iwt_opt *o, const char *prog, int c, const char *arg);
/* The --help paragraph describing these options (man-page style, 80 columns). */
void iwt_opt_help(FILE *f);
/* The verbs context attributes the options say (engine, thread, rx_direct; the rest the
 * library defaults), for iwv_open_context or a library that opens the
 * context itself (rpcrdma_config.verbs).  Without --engine-thread,
 * IWARP_ENGINE_THREAD still decides; without --engine, IWARP_ENGINE. */
void iwt_opt_context_attr(const struct iwt_opt *o, struct iwv_context_attr *attr);
/* Open a context as the options say (engine, thread).  NULL + message on failure. */
struct iwv_context *iwt_opt_open(const struct iwt_opt *o, const char *prog);
/* Apply cm options to an id; and the conn_param IRD/ORD. */
int iwt_opt_apply(const struct iwt_opt *o, struct iwcm_id *id);
void iwt_opt_conn_param(const struct iwt_opt *o, struct iwcm_conn_param *p);
/* One line "rev 2, CRC on, markers off/off, p2p off" for logs. */
void iwt_opt_describe(const struct iwt_opt *o, char *buf, size_t len);

#endif
