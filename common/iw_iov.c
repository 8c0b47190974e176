/* SPDX-License-Identifier: MIT */
/* iw_iov.c - iovec helpers (see iw_iov.h). */
#include "iw_iov.h"

#include <string.h>

size_t iw_iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;

	for (int i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

void iw_iov_advance(struct iovec *iov, int *first, int *cnt, size_t n)
{
	while (n > 0 && *cnt > 0) {
		struct iovec *v = &iov[*first];

		if (n < v->iov_len) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
			return;
		}
		n -= v->iov_len;
		(*first)++;
		(*cnt)--;
	}
	/* Drop empty iovecs at the front so *cnt == 0 means "all written". */
	while (*cnt > 0 && iov[*first].iov_len == 0) {
		(*first)++;
		(*cnt)--;
	}
}

size_t iw_iov_copy_out(void *dst, const struct iovec *iov, int cnt, size_t off, size_t len)
{
	size_t copied = 0;

	for (int i = 0; i < cnt && copied < len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t n = iov[i].iov_len - off;
		if (n > len - copied)
			n = len - copied;
		memcpy((char *)dst + copied, (const char *)iov[i].iov_base + off, n);
		copied += n;
		off = 0;
	}
	return copied;
}

void iw_iov_iter_init(struct iw_iov_iter *it, const struct iovec *iov, int cnt)
{
	it->iov = iov;
	it->cnt = cnt;
	it->idx = 0;
	it->off = 0;
}

size_t iw_iov_iter_next(struct iw_iov_iter *it, size_t max, const void **p)
{
	while (it->idx < it->cnt && it->off == it->iov[it->idx].iov_len) {
		it->idx++;
		it->off = 0;
	}
	if (it->idx >= it->cnt || max == 0)
		return 0;
	size_t n = it->iov[it->idx].iov_len - it->off;
	if (n > max)
		n = max;
	*p = (const char *)it->iov[it->idx].iov_base + it->off;
	it->off += n;
	return n;
}
