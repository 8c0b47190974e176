/* SPDX-License-Identifier: MIT */
/*
 * iw_errtab.h - the shape of a layer's error table (private to the
 * libraries).  Each layer keeps ONE const table with a row per code of its
 * range: the code, its name, a short text and the Terminate triple it is
 * reported with (RFC 5040 §4.8; IW_TERM_NONE where nothing goes on the wire).
 * The layer's *_errname / *_strerror / *_err_term look codes up in it; a code
 * that is not its own goes down to the layer below (see <iwarp/iw_err.h>).
 */
#ifndef IWARP_IW_ERRTAB_H
#define IWARP_IW_ERRTAB_H

#include <stddef.h>

#include <iwarp/iw_err.h>

struct iw_err_desc {
	int code;
	const char *name; /* the enumerator's spelling, "IW_EMPA_CRC" */
	const char *text; /* short English text */
	struct iw_term_code term;
};

/* A row for code `c` reported with Terminate (layer, etype, ecode). */
#define IW_ERR_TERM(c, t, layer, etype, ecode)                                                     \
	{                                                                                          \
		(c), #c, (t),                                                                      \
		{                                                                                  \
			(layer), (etype), (ecode)                                                  \
		}                                                                                  \
	}
/* A row for a code that never goes on the wire. */
#define IW_ERR_LOCAL(c, t)                                                                         \
	{                                                                                          \
		(c), #c, (t),                                                                      \
		{                                                                                  \
			IW_TERM_NONE, 0, 0                                                         \
		}                                                                                  \
	}

/* The row of `err` in tab[0..n), or NULL. */
const struct iw_err_desc *iw_errtab_find(const struct iw_err_desc *tab, size_t n, int err);
/* *t = the row's Terminate triple: IW_OK, or IW_EINVAL when `err` has no row. */
int iw_errtab_term(const struct iw_err_desc *tab, size_t n, int err, struct iw_term_code *t);
/* The row's name / text, or what `below` (the layer underneath) says. */
const char *iw_errtab_name(const struct iw_err_desc *tab, size_t n, int err,
			   const char *(*below)(int err));
const char *iw_errtab_text(const struct iw_err_desc *tab, size_t n, int err,
			   const char *(*below)(int err));

/* A layer's PREFIX_err_term() over its table (public header: IW_EINVAL for
 * a code without a row). */
#define IW_ERRTAB_TERM_FN(prefix, tab)                                                             \
	int prefix##_err_term(int err, struct iw_term_code *t)                                     \
	{                                                                                          \
		return iw_errtab_term(tab, sizeof(tab) / sizeof((tab)[0]), err, t);                \
	}

/* A layer's PREFIX_errname() and PREFIX_strerror() over its table; other
 * codes go to below_name / below_text. */
#define IW_ERRTAB_NAME_FNS(prefix, tab, below_name, below_text)                                    \
	const char *prefix##_errname(int err)                                                      \
	{                                                                                          \
		return iw_errtab_name(tab, sizeof(tab) / sizeof((tab)[0]), err, below_name);       \
	}                                                                                          \
	const char *prefix##_strerror(int err)                                                     \
	{                                                                                          \
		return iw_errtab_text(tab, sizeof(tab) / sizeof((tab)[0]), err, below_text);       \
	}

#endif /* IWARP_IW_ERRTAB_H */
