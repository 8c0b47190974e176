/* SPDX-License-Identifier: MIT */
/*
 * iwt_err.h - how every tool reports a bad command line, and its exit
 * statuses.  Part of the tools library (tools/lib, prefix iwt_).
 *
 * Convention: a bad option value is ONE line on stderr,
 *   PROG: invalid value 'VALUE' for OPTION: WHY
 * (OPTION as the user would type it: "--size", "-p"), any other usage error
 * is "PROG: WHAT", and the tool then exits with IWT_EXIT_USAGE (2).  Tools
 * in the GNU style (iwping, iwmpa) add "Try 'PROG --help'." below.
 */
#ifndef IWARP_TOOLS_IWT_ERR_H
#define IWARP_TOOLS_IWT_ERR_H

#include <stdarg.h>

#include "iw_log.h"

enum iwt_exit {
	IWT_EXIT_OK = 0,    /* done as asked */
	IWT_EXIT_FAIL = 1,  /* runtime, network, protocol or peer failure */
	IWT_EXIT_USAGE = 2, /* bad command line */
};

/* "PROG: invalid value 'VAL' for OPT: WHY" on stderr; returns -1. */
int iwt_bad_arg(const char *prog, const char *opt, const char *val, const char *why);

/* "HH:MM:SS.mmm PROG: MESSAGE" (UTC) on stderr, one line written at once:
 * the log line of the long-running tools (iwnfsgw, iwnfs-mount). */
void iwt_vlog_stamped(const char *prog, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* "PROG: MESSAGE" on stderr, one line written at once. */
void iwt_msg(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PROG: MESSAGE" and "Try 'PROG --help'." on stderr; returns -1. */
int iwt_usage_err(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "Try 'PROG --help'." on stderr. */
void iwt_try_help(const char *prog);

/* "error", "warning", "info", "debug", "trace" ("log" for anything else). */
const char *iwt_log_level_name(enum iw_log_level level);

#endif
