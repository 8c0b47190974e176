/* SPDX-License-Identifier: MIT */
/*
 * iw_log.h - the logging hook.  Core layers never write to stdout/stderr;
 * they call iw_log(), which does nothing until an application installs a sink.
 */
#ifndef IW_LOG_H
#define IW_LOG_H

#include <stdarg.h>

enum iw_log_level { IW_LOG_ERR, IW_LOG_WARN, IW_LOG_INFO, IW_LOG_DEBUG, IW_LOG_TRACE };

typedef void (*iw_log_fn)(void *ctx, enum iw_log_level level, const char *msg);

/* Install (or with NULL remove) the process-wide sink; messages above `max` are dropped. */
void iw_log_set(iw_log_fn fn, void *ctx, enum iw_log_level max);
void iw_log(enum iw_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int iw_log_enabled(enum iw_log_level level);

#endif /* IW_LOG_H */
