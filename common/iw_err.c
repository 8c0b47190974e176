/* SPDX-License-Identifier: MIT */
/*
 * iw_err.c - names and texts of the common codes and of the IW_ESYS codes of
 * the plan in <iwarp/iw_err.h>, and the table lookups every layer uses for
 * its own codes (iw_errtab.h).  The layers above name their codes
 * themselves: this file knows nothing of them.
 */
#include <iwarp/iw_err.h>

#include <string.h>

#include "iw_bytes.h"
#include "iw_errtab.h"

static const struct iw_err_desc common_errs[] = {
	IW_ERR_LOCAL(IW_OK, "success"),
	IW_ERR_LOCAL(IW_ENOMEM, "out of memory"),
	IW_ERR_LOCAL(IW_EINVAL, "invalid argument"),
	IW_ERR_LOCAL(IW_EAGAIN, "more data needed"),
	IW_ERR_LOCAL(IW_ENOSPC, "buffer too small"),
	IW_ERR_LOCAL(IW_ERANGE, "value out of range"),
	IW_ERR_LOCAL(IW_ESTATE, "operation not valid in the current state"),
	IW_ERR_LOCAL(IW_ETIMEDOUT, "timed out"),
	IW_ERR_LOCAL(IW_ENOTSUP, "not supported"),
	IW_ERR_LOCAL(IW_ESYS_UNKNOWN, "unknown system error"),
};

const struct iw_err_desc *iw_errtab_find(const struct iw_err_desc *tab, size_t n, int err)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i].code == err)
			return &tab[i];
	return NULL;
}

int iw_errtab_term(const struct iw_err_desc *tab, size_t n, int err, struct iw_term_code *t)
{
	const struct iw_err_desc *d = iw_errtab_find(tab, n, err);

	if (!d)
		return IW_EINVAL;
	if (t)
		*t = d->term;
	return IW_OK;
}

const char *iw_errtab_name(const struct iw_err_desc *tab, size_t n, int err,
			   const char *(*below)(int err))
{
	const struct iw_err_desc *d = iw_errtab_find(tab, n, err);

	return d ? d->name : below(err);
}

const char *iw_errtab_text(const struct iw_err_desc *tab, size_t n, int err,
			   const char *(*below)(int err))
{
	const struct iw_err_desc *d = iw_errtab_find(tab, n, err);

	return d ? d->text : below(err);
}

/* An IW_ESYS code by glibc's own tables (constant strings, safe from any thread). */
static const char *sys_text(int err)
{
	const char *s = iw_err_errno(err) ? strerrordesc_np(iw_err_errno(err)) : NULL;

	return s ? s : "unknown error";
}

static const char *sys_name(int err)
{
	const char *s = iw_err_errno(err) ? strerrorname_np(iw_err_errno(err)) : NULL;

	return s ? s : "IW_E?";
}

IW_ERRTAB_NAME_FNS(iw, common_errs, sys_name, sys_text)
