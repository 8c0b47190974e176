/* SPDX-License-Identifier: MIT */
/*
 * iw_iov.h - iovec walking: total length, consuming a prefix after a partial
 * write, and a position-tracking reader used to split a scattered buffer at
 * arbitrary octet offsets without copying.
 */
#ifndef IW_IOV_H
#define IW_IOV_H

#include <stddef.h>
#include <sys/uio.h>

/* Sum of the iov_len fields. */
size_t iw_iov_total(const struct iovec *iov, int cnt);

/*
 * Drop the first n octets of iov[*first .. *first + *cnt): whole iovecs are
 * skipped by moving *first, a partly written one is trimmed in place.  n must
 * not exceed the total.
 */
void iw_iov_advance(struct iovec *iov, int *first, int *cnt, size_t n);

/* Copy up to `len` octets out of an iovec array starting at octet `off`. Returns copied. */
size_t iw_iov_copy_out(void *dst, const struct iovec *iov, int cnt, size_t off, size_t len);

/* Sequential reader over an iovec array. */
struct iw_iov_iter {
	const struct iovec *iov;
	int cnt;
	int idx;    /* current iovec */
	size_t off; /* octets consumed of iov[idx] */
};

void iw_iov_iter_init(struct iw_iov_iter *it, const struct iovec *iov, int cnt);

/*
 * Next contiguous piece of at most `max` octets: stores its address in *p and
 * returns its length (0 at the end).  The piece is consumed.
 */
size_t iw_iov_iter_next(struct iw_iov_iter *it, size_t max, const void **p);

#endif /* IW_IOV_H */
