/* SPDX-License-Identifier: MIT */
/* iw_log.c - process-wide logging hook (see iw_log.h). */
#include "iw_log.h"

#include <stdio.h>

static iw_log_fn log_fn;
static void *log_ctx;
static enum iw_log_level log_max = IW_LOG_WARN;

void iw_log_set(iw_log_fn fn, void *ctx, enum iw_log_level max)
{
	log_fn = fn;
	log_ctx = ctx;
	log_max = max;
}

int iw_log_enabled(enum iw_log_level level)
{
	return log_fn && level <= log_max;
}

void iw_log(enum iw_log_level level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!iw_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_fn(log_ctx, level, buf);
}
