/* SPDX-License-Identifier: MIT */
/*
 * iwt_num.c - numbers and switches on the tools' command lines (iwt_num.h).
 *
 * Parsed by hand rather than with strtoul/strtod: those skip white space,
 * accept a sign (and wrap "-1" to the largest value), and with base 0 read
 * "0x10" as 16 and "010" as 8.  One digit loop with an overflow check gives
 * exactly the documented rule and a precise reason for every refusal.
 */
#include "iwt_num.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iwt_err.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* What is wrong with the first character(s), or IWT_NUM_OK if a number may start here. */
static enum iwt_num_err check_start(const char *s, bool dot_ok)
{
	if (!*s)
		return IWT_NUM_EMPTY;
	if (*s == '+' || *s == '-')
		return IWT_NUM_SIGN;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return IWT_NUM_HEX;
	if (!is_digit(*s) && !(dot_ok && *s == '.' && is_digit(s[1])))
		return IWT_NUM_JUNK;
	return IWT_NUM_OK;
}

enum iwt_num_err iwt_num_parse(const char *s, uint64_t min, uint64_t max, unsigned flags,
			       uint64_t *out)
{
	enum iwt_num_err e = check_start(s, false);
	const char *p = s;
	bool overflow = false;
	unsigned shift = 0;
	uint64_t v = 0;

	if (e)
		return e;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	if (*p && (flags & IWT_NUM_SUFFIX)) {
		switch (*p) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			return IWT_NUM_BAD_SUFFIX;
		}
		p++;
	}
	if (*p)
		return IWT_NUM_TRAILING;
	if (overflow || v > (UINT64_MAX >> shift))
		return IWT_NUM_OVERFLOW;
	v <<= shift;
	if (v < min || v > max)
		return IWT_NUM_RANGE;
	*out = v;
	return IWT_NUM_OK;
}

enum iwt_num_err iwt_num_parse_seconds(const char *s, double min, double max, double *out)
{
	enum iwt_num_err e = check_start(s, true);
	const char *p = s;
	double v;

	if (e)
		return e;
	p += strspn(p, "0123456789");
	if (*p == '.')
		p += 1 + strspn(p + 1, "0123456789");
	if (*p)
		return IWT_NUM_TRAILING;
	/* only digits and one '.' are left: strtod reads them whatever the locale's
	 * other ideas (the tools never call setlocale, so '.' is the point) */
	v = strtod(s, NULL);
	if (!(v >= min && v <= max))
		return IWT_NUM_RANGE;
	*out = v;
	return IWT_NUM_OK;
}

void iwt_num_why(enum iwt_num_err e, uint64_t min, uint64_t max, char *buf, size_t len)
{
	/* in the order of enum iwt_num_err, up to IWT_NUM_RANGE (which has numbers) */
	static const char *const whys[] = {"accepted",
					   "empty",
					   "no sign allowed",
					   "hexadecimal is not accepted, only decimal",
					   "not a decimal number",
					   "trailing characters",
					   "unknown suffix (K, M or G)",
					   "too large"};
	_Static_assert(sizeof(whys) / sizeof(whys[0]) == IWT_NUM_RANGE, "one phrase per refusal");

	if (e == IWT_NUM_RANGE)
		snprintf(buf, len, "must be from %" PRIu64 " to %" PRIu64, min, max);
	else if ((unsigned)e < sizeof(whys) / sizeof(whys[0]))
		snprintf(buf, len, "%s", whys[e]);
	else
		snprintf(buf, len, "invalid");
}

int iwt_num_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		unsigned flags, uint64_t *out)
{
	enum iwt_num_err e = iwt_num_parse(s, min, max, flags, out);
	char why[96];

	if (e == IWT_NUM_OK)
		return 0;
	iwt_num_why(e, min, max, why, sizeof(why));
	return iwt_bad_arg(prog, opt, s, why);
}

int iwt_num_real(const char *prog, const char *opt, const char *s, double min, double max,
		 const char *unit, double *out)
{
	enum iwt_num_err e = iwt_num_parse_seconds(s, min, max, out);
	char why[96];

	if (e == IWT_NUM_OK)
		return 0;
	if (e == IWT_NUM_RANGE)
		snprintf(why, sizeof(why), "must be from %g to %g%s%s", min, max, unit ? " " : "",
			 unit ? unit : "");
	else
		iwt_num_why(e, 0, 0, why, sizeof(why));
	return iwt_bad_arg(prog, opt, s, why);
}

int iwt_num_seconds(const char *prog, const char *opt, const char *s, double min, double max,
		    double *out)
{
	return iwt_num_real(prog, opt, s, min, max, "seconds", out);
}

int iwt_onoff_parse(const char *s)
{
	static const char *const yes[] = {"on", "yes", "true", "1"};
	static const char *const no[] = {"off", "no", "false", "0"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]))
			return 1;
		if (!strcmp(s, no[i]))
			return 0;
	}
	return -1;
}
