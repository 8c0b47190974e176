/* SPDX-License-Identifier: MIT */
/* iwt_err.c - command-line error messages of the tools (iwt_err.h). */
#include "iwt_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int iwt_bad_arg(const char *prog, const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "%s: invalid value '%s' for %s: %s\n", prog, val, opt, why);
	return -1;
}

void iwt_try_help(const char *prog)
{
	fprintf(stderr, "Try '%s --help'.\n", prog);
}

static void vmsg(const char *prog, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "%s: %s\n", prog, line);
}

void iwt_msg(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(prog, fmt, ap);
	va_end(ap);
}

int iwt_usage_err(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(prog, fmt, ap);
	va_end(ap);
	iwt_try_help(prog);
	return -1;
}

const char *iwt_log_level_name(enum iw_log_level level)
{
	static const char *const names[] = {"error", "warning", "info", "debug", "trace"};

	return (unsigned)level < sizeof(names) / sizeof(names[0]) ? names[level] : "log";
}

void iwt_vlog_stamped(const char *prog, const char *fmt, va_list ap)
{
	char buf[1024];
	struct timespec ts;
	struct tm tm;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03ld %s: ", tm.tm_hour, tm.tm_min,
		     tm.tm_sec, ts.tv_nsec / 1000000, prog);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", buf);
}
