/* SPDX-License-Identifier: MIT */
/*
 * iwt_num.h - the one way every tool reads a number (and an on/off switch)
 * from its command line.  Part of the tools library (tools/lib, prefix iwt_).
 *
 * The rule, the same for every numeric option of every tool:
 *   - decimal digits only: no sign, no white space, no 0x (hexadecimal) and
 *     no octal (leading zeros are just decimal: "010" is ten);
 *   - options that say so take one binary suffix, K, M or G (either case:
 *     2^10, 2^20, 2^30), e.g. --size 64K;
 *   - seconds (iwt_num_seconds) may have a decimal fraction: "2", "0.5",
 *     ".5", "2." (no exponent, no inf or nan);
 *   - the value must lie in the option's [min, max], bounds included.
 * A refused value is reported as "PROG: invalid value 'X' for OPT: WHY"
 * (iwt_err.h) and the tool exits with status 2.
 */
#ifndef IWARP_TOOLS_IWT_NUM_H
#define IWARP_TOOLS_IWT_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Flags of iwt_num_parse / iwt_num_u64. */
#define IWT_NUM_SUFFIX 1u /* accept one K, M or G suffix (binary multiples) */

/* Why a value was refused. */
enum iwt_num_err {
	IWT_NUM_OK = 0,
	IWT_NUM_EMPTY,	    /* "" */
	IWT_NUM_SIGN,	    /* a leading '+' or '-' */
	IWT_NUM_HEX,	    /* "0x..." or "0X..." */
	IWT_NUM_JUNK,	    /* does not start with a digit ('.' too for seconds) */
	IWT_NUM_TRAILING,   /* something after the number (and its suffix) */
	IWT_NUM_BAD_SUFFIX, /* IWT_NUM_SUFFIX: a letter other than K, M or G */
	IWT_NUM_OVERFLOW,   /* above 2^64 - 1, suffix applied */
	IWT_NUM_RANGE,	    /* a number, but outside [min, max] */
};

/*
 * Parse `s` by the rule above.  Returns IWT_NUM_OK with *out set, or the
 * reason (*out untouched).  Syntax is checked before size: "12x" is
 * TRAILING, "99999999999999999999" OVERFLOW, "300" with max 255 RANGE.
 */
enum iwt_num_err iwt_num_parse(const char *s, uint64_t min, uint64_t max, unsigned flags,
			       uint64_t *out);

/* Seconds with an optional decimal fraction, in [min, max]. */
enum iwt_num_err iwt_num_parse_seconds(const char *s, double min, double max, double *out);

/*
 * The WHY of a refusal as a phrase ("not a decimal number", "must be from 1
 * to 255", ...).  min and max are printed for IWT_NUM_RANGE only.
 */
void iwt_num_why(enum iwt_num_err e, uint64_t min, uint64_t max, char *buf, size_t len);

/*
 * iwt_num_parse, and on refusal the message "PROG: invalid value 'S' for
 * OPT: WHY" on stderr.  Returns 0 with *out set, or -1.
 */
int iwt_num_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		unsigned flags, uint64_t *out);

/* The same for seconds (the range is printed with %g). */
int iwt_num_seconds(const char *prog, const char *opt, const char *s, double min, double max,
		    double *out);
/* The same for any decimal with an optional fraction; `unit` ("seconds",
 * "%", or NULL for none) follows the range in the message. */
int iwt_num_real(const char *prog, const char *opt, const char *s, double min, double max,
		 const char *unit, double *out);

/*
 * An on/off switch: "on", "yes", "true", "1" give 1; "off", "no", "false",
 * "0" give 0; anything else (other case included) gives -1.
 */
int iwt_onoff_parse(const char *s);

/* One line for a --help text: the number rule in short. */
#define IWT_NUM_HELP "Numbers are decimal (no sign, no 0x); K, M and G suffixes only where shown.\n"

#endif
