/* SPDX-License-Identifier: MIT */
/*
 * iw_toolopt.h - the iWARP options every tool shares (DESIGN.md §5):
 *   --mpa-rev 1|2  --crc on|off  --markers on|off  --p2p on|off
 *   --rtr write|read|send  --ird N  --ord N  --engine uring|epoll  --trace
 * plus --first-fpdu-delay MS (the Linux siw start-up pause) and
 * --engine-thread.  Parsed with getopt_long: a tool appends IW_TOOLOPT_LONG
 * to its long options and hands every option value >= IW_TOOLOPT_BASE to
 * iw_toolopt_parse().
 */
#ifndef IWARP_TOOLS_IW_TOOLOPT_H
#define IWARP_TOOLS_IW_TOOLOPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

struct iw_toolopt {
	struct iwcm_options cm;	     /* mpa_rev, crc, markers, p2p, rtr, delay, trace */
	enum iwv_engine_type engine; /* IWV_ENGINE_DEFAULT unless --engine */
	bool engine_thread;	     /* --engine-thread */
	uint8_t ird, ord;	     /* --ird / --ord (0 = library default) */
};

enum {
	IW_TOOLOPT_BASE = 0x1000,
	IW_TOOLOPT_MPA_REV = IW_TOOLOPT_BASE,
	IW_TOOLOPT_CRC,
	IW_TOOLOPT_MARKERS,
	IW_TOOLOPT_P2P,
	IW_TOOLOPT_RTR,
	IW_TOOLOPT_IRD,
	IW_TOOLOPT_ORD,
	IW_TOOLOPT_ENGINE,
	IW_TOOLOPT_ENGINE_THREAD,
	IW_TOOLOPT_TRACE,
	IW_TOOLOPT_FIRST_FPDU_DELAY,
	IW_TOOLOPT_END,
};

/* struct option initialisers for the options above (no terminating entry). */
#define IW_TOOLOPT_LONG                                                                            \
	{"mpa-rev", required_argument, NULL, IW_TOOLOPT_MPA_REV},                                  \
		{"crc", required_argument, NULL, IW_TOOLOPT_CRC},                                  \
		{"markers", required_argument, NULL, IW_TOOLOPT_MARKERS},                          \
		{"p2p", required_argument, NULL, IW_TOOLOPT_P2P},                                  \
		{"rtr", required_argument, NULL, IW_TOOLOPT_RTR},                                  \
		{"ird", required_argument, NULL, IW_TOOLOPT_IRD},                                  \
		{"ord", required_argument, NULL, IW_TOOLOPT_ORD},                                  \
		{"engine", required_argument, NULL, IW_TOOLOPT_ENGINE},                            \
		{"engine-thread", no_argument, NULL, IW_TOOLOPT_ENGINE_THREAD},                    \
		{"trace", no_argument, NULL, IW_TOOLOPT_TRACE},                                    \
	{                                                                                          \
		"first-fpdu-delay", required_argument, NULL, IW_TOOLOPT_FIRST_FPDU_DELAY           \
	}

/* Library defaults (iwcm_options_default, engine DEFAULT, no thread). */
void iw_toolopt_init(struct iw_toolopt *o);
/*
 * Handle one getopt_long result `c` (>= IW_TOOLOPT_BASE) with optarg `arg`.
 * Returns 0, or -1 after printing "PROG: invalid value 'X' for --opt: why" to
 * stderr (the tool then exits with status 2).
 */
int iw_toolopt_parse(struct iw_toolopt *o, const char *prog, int c, const char *arg);
/* The --help paragraph describing these options (man-page style, 80 columns). */
void iw_toolopt_help(FILE *f);
/* Open a context as the options say (engine, thread).  NULL + message on failure. */
struct iwv_context *iw_toolopt_open(const struct iw_toolopt *o, const char *prog);
/* Apply cm options to an id; and the conn_param IRD/ORD. */
int iw_toolopt_apply(const struct iw_toolopt *o, struct iwcm_id *id);
void iw_toolopt_conn_param(const struct iw_toolopt *o, struct iwcm_conn_param *p);
/* Print "PROG: invalid value 'VAL' for OPT: WHY" to stderr; returns -1. */
int iw_toolopt_bad_arg(const char *prog, const char *opt, const char *val, const char *why);
/*
 * Parse a decimal unsigned option value in [min, max]; with `suffix`, a K, M
 * or G suffix (binary multiples) is accepted.  Returns 0 with *out set, or -1
 * after iw_toolopt_bad_arg (sign, junk, unknown suffix, out of range).
 */
int iw_toolopt_parse_u64(const char *prog, const char *opt, const char *s, uint64_t min,
			 uint64_t max, bool suffix, uint64_t *out);
/* One line "rev 2, CRC on, markers off/off, p2p off" for logs. */
void iw_toolopt_describe(const struct iw_toolopt *o, char *buf, size_t len);

#endif
