/* SPDX-License-Identifier: MIT */
/*
 * test_ddp_mem.c - the STag table's memory operations (ddp.h): fast
 * registration (invalid until registered, key rotation, page lists:
 * contiguous and scattered, spans at page edges, copy in/out, bad lists),
 * type-2 memory windows (bind bounds, rights, stream association, rebind,
 * unbind, MRs busy while windows are bound) and local/remote invalidation
 * with PD and stream checks.
 */
#include <iwarp/ddp.h>

#include <stdlib.h>
#include <string.h>

#include "th.h"

#define PD     7u
#define OTHER  8u
#define PG     4096u
#define NPG    4
#define STREAM 11u
#define RW     (DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_LOCAL_WRITE)
#define IOVA   0x10000000ull

static uint8_t *pagemem; /* 2 * NPG pages, page aligned */

static void setup(void)
{
	pagemem = aligned_alloc(PG, 2 * NPG * PG);
	ck_assert_ptr_nonnull(pagemem);
	for (size_t i = 0; i < 2 * NPG * PG; i++)
		pagemem[i] = (uint8_t)(i * 7 + 3);
}

static void teardown(void)
{
	free(pagemem);
}

static struct ddp_stag_table *table(void)
{
	struct ddp_stag_table *t = ddp_stag_table_create(16, 0xFEEDull);

	ck_assert_ptr_nonnull(t);
	return t;
}

/* The STag of s's index with its key moved on by d. */
static uint32_t nk(uint32_t s, int d)
{
	return DDP_STAG_MAKE(DDP_STAG_INDEX(s), DDP_STAG_KEY(s) + d);
}

static uint64_t page(int i)
{
	return (uint64_t)(uintptr_t)(pagemem + (size_t)i * PG);
}

/* Scattered: pages 6, 1, 4, 3 of the buffer (none adjacent in that order). */
static const int scatter[NPG] = {6, 1, 4, 3};

static struct ddp_fast_reg fr_scattered(uint32_t stag, uint64_t *pages, uint32_t off, uint64_t len)
{
	struct ddp_fast_reg fr = {
		.stag = stag,
		.pd = PD,
		.access = RW,
		.iova = IOVA,
		.length = len,
		.pages = pages,
		.npages = NPG,
		.page_size = PG,
		.first_page_off = off,
	};

	for (int i = 0; i < NPG; i++)
		pages[i] = page(scatter[i]);
	return fr;
}

/* The host address of octet k of a scattered registration with first offset off. */
static uint8_t *host(uint32_t off, uint64_t k)
{
	uint64_t pos = off + k;

	return pagemem + (size_t)scatter[pos / PG] * PG + pos % PG;
}

START_TEST(fr_is_invalid_until_registered_and_key_rotates)
{
	struct ddp_stag_table *t = table();
	uint64_t pages[NPG];
	uint32_t s, ns;
	struct ddp_fast_reg fr;

	ck_assert_int_eq(ddp_stag_alloc(t, PD, NPG, &s), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 1);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, 0, 0, NULL), DDP_STAG_INVALID);
	/* revalidate cannot make an unregistered FR entry valid */
	ck_assert_int_eq(ddp_stag_revalidate(t, s, &ns), IW_EINVAL);
	ns = DDP_STAG_MAKE(DDP_STAG_INDEX(s), DDP_STAG_KEY(s) + 1);
	fr = fr_scattered(ns, pages, 0, NPG * PG);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_OK);
	ck_assert_int_eq(ddp_stag_check(t, ns, PD, DDP_ACCESS_REMOTE_WRITE, IOVA, 1, NULL),
			 DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, IOVA, 1, NULL), DDP_STAG_INVALID);
	/* still valid: registering again fails, the STag keeps working */
	fr.stag = DDP_STAG_MAKE(DDP_STAG_INDEX(s), DDP_STAG_KEY(s) + 2);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_ESTATE);
	ck_assert_int_eq(ddp_stag_check(t, ns, PD, 0, IOVA, 1, NULL), DDP_STAG_OK);
	/* invalidate, then register again with another key */
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, ns, PD, 0, false, NULL), IW_OK);
	ck_assert_int_eq(ddp_stag_check(t, ns, PD, 0, IOVA, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_OK);
	ck_assert_int_eq(ddp_stag_check(t, ns, PD, 0, IOVA, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(t, fr.stag, PD, 0, IOVA, 1, NULL), DDP_STAG_OK);
	/* not a fast-registration entry / nothing there */
	fr.stag = DDP_STAG_MAKE(9, 1);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_EDDP_STAG_UNKNOWN);
	ck_assert_int_eq(ddp_stag_free_index(t, s), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ck_assert_int_eq(ddp_stag_free_index(t, s), IW_EDDP_STAG_UNKNOWN);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(fr_refuses_bad_page_lists)
{
	struct ddp_stag_table *t = table();
	uint64_t pages[NPG];
	uint32_t s, m;
	struct ddp_fast_reg fr, bad;

	ck_assert_int_eq(ddp_stag_alloc(t, PD, 0, &s), IW_EINVAL);
	ck_assert_int_eq(ddp_stag_alloc(t, PD, DDP_FAST_REG_MAX_PAGES + 1, &s), IW_EINVAL);
	ck_assert_int_eq(ddp_stag_alloc(t, PD, NPG, &s), IW_OK);
	fr = fr_scattered(DDP_STAG_MAKE(DDP_STAG_INDEX(s), DDP_STAG_KEY(s) + 1), pages, 0, PG);
	bad = fr;
	bad.pd = OTHER;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.npages = NPG + 1;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.npages = 0;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.pages = NULL;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.page_size = 3000;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.page_size = 2048;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.first_page_off = PG;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.first_page_off = 1;
	bad.length = NPG * PG; /* one octet beyond the last page */
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.iova = UINT64_MAX - 10;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	bad = fr;
	bad.access = 1u << 9;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EINVAL);
	pages[2] += 8; /* not page aligned */
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_EINVAL);
	pages[2] = 0;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_EINVAL);
	ck_assert_int_eq(ddp_stag_check(t, fr.stag, PD, 0, IOVA, 1, NULL), DDP_STAG_INVALID);
	/* a plain MR is not a fast-registration entry */
	ck_assert_int_eq(ddp_stag_reg(t, PD, pagemem, 0, 16, RW, &m), IW_OK);
	bad = fr;
	bad.stag = DDP_STAG_MAKE(DDP_STAG_INDEX(m), DDP_STAG_KEY(m) + 1);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &bad), IW_EDDP_STAG_UNKNOWN);
	ck_assert_int_eq(ddp_stag_dereg(t, m), IW_OK);
	ck_assert_int_eq(ddp_stag_free_index(t, s), IW_OK);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(fr_contiguous_pages_give_one_pointer)
{
	struct ddp_stag_table *t = table();
	uint64_t pages[NPG];
	uint32_t s;
	struct ddp_stag_ref ref;
	void *dst = NULL;
	struct ddp_fast_reg fr;

	ck_assert_int_eq(ddp_stag_alloc(t, PD, NPG, &s), IW_OK);
	for (int i = 0; i < NPG; i++)
		pages[i] = page(i + 2);
	fr = fr_scattered(nk(s, 1), pages, 100, 3 * PG);
	for (int i = 0; i < NPG; i++)
		pages[i] = page(i + 2);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_OK);
	ck_assert_int_eq(ddp_stag_resolve(t, nk(s, 1), PD, 0, 0, IOVA + 5000, 6000, &ref),
			 DDP_STAG_OK);
	ck_assert(!ddp_stag_ref_scattered(&ref));
	ck_assert_ptr_eq(ref.addr, pagemem + 2 * PG + 100 + 5000);
	ck_assert_int_eq(ddp_stag_check(t, nk(s, 1), PD, 0, IOVA, 3 * PG, &dst), DDP_STAG_OK);
	ck_assert_ptr_eq(dst, pagemem + 2 * PG + 100);
	ck_assert_int_eq(ddp_stag_check(t, nk(s, 1), PD, 0, IOVA, 3 * PG + 1, &dst),
			 DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_free_index(t, s), IW_OK);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(fr_scattered_spans_and_copies)
{
	struct ddp_stag_table *t = table();
	const uint32_t off = 1000;
	const uint64_t len = NPG * PG - off - 10;
	uint64_t pages[NPG];
	uint32_t s;
	struct ddp_stag_ref ref;
	struct iovec iov[NPG + 1];
	uint64_t covered;
	void *dst = NULL;
	uint8_t *buf = malloc(len), *back = malloc(len);
	struct ddp_fast_reg fr;
	int n;

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(ddp_stag_alloc(t, PD, NPG, &s), IW_OK);
	fr = fr_scattered(nk(s, 1), pages, off, len);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_OK);

	/* bounds at both ends */
	ck_assert_int_eq(ddp_stag_resolve(t, nk(s, 1), PD, 0, 0, IOVA - 1, 1, &ref),
			 DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_resolve(t, nk(s, 1), PD, 0, 0, IOVA, len + 1, &ref),
			 DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_resolve(t, nk(s, 1), PD, 0, 0, IOVA + len, 1, &ref),
			 DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_resolve(t, nk(s, 1), PD, 0, 0, UINT64_MAX, 2, &ref),
			 DDP_STAG_WRAP);

	/* the whole range: four spans, each inside its page */
	ck_assert_int_eq(ddp_stag_resolve(t, nk(s, 1), PD, 0, 0, IOVA, len, &ref), DDP_STAG_OK);
	ck_assert(ddp_stag_ref_scattered(&ref));
	n = ddp_stag_ref_spans(&ref, 0, len, iov, NPG + 1, &covered);
	ck_assert_int_eq(n, NPG);
	ck_assert_uint_eq(covered, len);
	ck_assert_ptr_eq(iov[0].iov_base, host(off, 0));
	ck_assert_uint_eq(iov[0].iov_len, PG - off);
	ck_assert_ptr_eq(iov[1].iov_base, pagemem + scatter[1] * PG);
	ck_assert_uint_eq(iov[1].iov_len, PG);
	ck_assert_uint_eq(iov[3].iov_len, PG - 10);
	/* too few iovecs: a partial answer */
	n = ddp_stag_ref_spans(&ref, 0, len, iov, 2, &covered);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(covered, 2 * PG - off);
	/* a range that ends exactly at a page edge, and one that starts there */
	n = ddp_stag_ref_spans(&ref, 0, PG - off, iov, NPG, &covered);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(covered, PG - off);
	n = ddp_stag_ref_spans(&ref, PG - off, 1, iov, NPG, &covered);
	ck_assert_int_eq(n, 1);
	ck_assert_ptr_eq(iov[0].iov_base, pagemem + scatter[1] * PG);

	/* one pointer: inside a page yes, across pages no */
	ck_assert_int_eq(ddp_stag_check(t, nk(s, 1), PD, 0, IOVA + PG - off, PG, &dst),
			 DDP_STAG_OK);
	ck_assert_ptr_eq(dst, pagemem + scatter[1] * PG);
	ck_assert_int_eq(ddp_stag_check(t, nk(s, 1), PD, 0, IOVA + PG - off - 1, 2, &dst),
			 DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, nk(s, 1), PD, 0, IOVA + PG - off - 1, 2, NULL),
			 DDP_STAG_OK);

	/* copy in and out from an odd offset, checked octet by octet */
	for (uint64_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i ^ (i >> 8) ^ 0x5A);
	ddp_stag_ref_copy_in(&ref, 0, buf, (size_t)len);
	for (uint64_t i = 0; i < len; i += 97)
		ck_assert_uint_eq(*host(off, i), buf[i]);
	memset(back, 0, len);
	ddp_stag_ref_copy_out(&ref, 3, back, (size_t)len - 3);
	ck_assert_mem_eq(back, buf + 3, (size_t)len - 3);
	free(buf);
	free(back);
	ck_assert_int_eq(ddp_stag_free_index(t, s), IW_OK);
	ddp_stag_table_destroy(t);
}
END_TEST

/* An MR with MW_BIND over pagemem, TO = its address. */
static uint32_t mr_bindable(struct ddp_stag_table *t, uint32_t access)
{
	uint32_t s;

	ck_assert_int_eq(ddp_stag_reg(t, PD, pagemem, page(0), 2 * NPG * PG, access, &s), IW_OK);
	return s;
}

START_TEST(mw_bind_checks_and_stream_association)
{
	struct ddp_stag_table *t = table();
	uint32_t mr = mr_bindable(t, RW | DDP_ACCESS_MW_BIND);
	uint32_t plain = mr_bindable(t, RW);
	uint32_t ro = mr_bindable(t, DDP_ACCESS_REMOTE_READ | DDP_ACCESS_MW_BIND);
	uint32_t mw, k;
	enum ddp_stag_check why;
	struct ddp_stag_ref ref;
	uint64_t a = page(1) + 10;

	ck_assert_int_eq(ddp_stag_alloc_mw(t, PD, &mw), IW_OK);
	ck_assert_int_eq(ddp_stag_check(t, mw, PD, 0, a, 1, NULL), DDP_STAG_INVALID);
	k = DDP_STAG_MAKE(DDP_STAG_INDEX(mw), DDP_STAG_KEY(mw) + 1);
	/* same key */
	ck_assert_int_eq(
		ddp_stag_bind(t, mw, mr, PD, STREAM, a, 100, DDP_ACCESS_REMOTE_WRITE, &why),
		IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	/* no stream */
	ck_assert_int_eq(ddp_stag_bind(t, k, mr, PD, 0, a, 100, DDP_ACCESS_REMOTE_WRITE, &why),
			 IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_STREAM);
	/* another PD */
	ck_assert_int_eq(
		ddp_stag_bind(t, k, mr, OTHER, STREAM, a, 100, DDP_ACCESS_REMOTE_WRITE, &why),
		IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_PD);
	/* MR without MW_BIND, MR without local write for a writable window, bad rights */
	ck_assert_int_eq(
		ddp_stag_bind(t, k, plain, PD, STREAM, a, 100, DDP_ACCESS_REMOTE_WRITE, &why),
		IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_ACCESS);
	ck_assert_int_eq(ddp_stag_bind(t, k, ro, PD, STREAM, a, 100, DDP_ACCESS_REMOTE_WRITE, &why),
			 IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_ACCESS);
	ck_assert_int_eq(ddp_stag_bind(t, k, mr, PD, STREAM, a, 100, DDP_ACCESS_LOCAL_WRITE, &why),
			 IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_ACCESS);
	/* bounds: outside the MR at either end, wrap */
	ck_assert_int_eq(
		ddp_stag_bind(t, k, mr, PD, STREAM, page(0) - 1, 2, DDP_ACCESS_REMOTE_WRITE, &why),
		IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_bind(t, k, mr, PD, STREAM, page(0), 2 * NPG * PG + 1,
				       DDP_ACCESS_REMOTE_WRITE, &why),
			 IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_bind(t, k, mr, PD, STREAM, UINT64_MAX - 2, 8,
				       DDP_ACCESS_REMOTE_WRITE, &why),
			 IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_WRAP);
	/* not a window / not an MR */
	ck_assert_int_eq(ddp_stag_bind(t, mr + 1, mr, PD, STREAM, a, 100, 0, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_bind(t, k, mw, PD, STREAM, a, 100, 0, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);

	/* bound: usable only on its stream, within its range and rights */
	ck_assert_int_eq(ddp_stag_bind(t, k, mr, PD, STREAM, a, 100,
				       DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_INVALIDATE,
				       &why),
			 IW_OK);
	ck_assert_int_eq(ddp_stag_check(t, mw, PD, 0, a, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, STREAM, DDP_ACCESS_REMOTE_WRITE, a, 100, &ref),
			 DDP_STAG_OK);
	ck_assert_ptr_eq(ref.addr, pagemem + PG + 10);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, STREAM + 1, 0, a, 1, &ref), DDP_STAG_STREAM);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, 0, 0, a, 1, &ref), DDP_STAG_STREAM);
	ck_assert_int_eq(ddp_stag_check(t, k, PD, 0, a, 1, NULL), DDP_STAG_STREAM);
	ck_assert_int_eq(ddp_stag_resolve(t, k, OTHER, STREAM, 0, a, 1, &ref), DDP_STAG_PD);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, STREAM, DDP_ACCESS_REMOTE_READ, a, 1, &ref),
			 DDP_STAG_ACCESS);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, STREAM, 0, a, 101, &ref), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, STREAM, 0, a - 1, 1, &ref), DDP_STAG_BOUNDS);

	/* the MR is busy while the window is bound */
	ck_assert_int_eq(ddp_stag_dereg(t, mr), IW_ESTATE);
	/* another stream cannot rebind it; its own stream can (new key again) */
	ck_assert_int_eq(ddp_stag_bind(t, nk(k, 1), mr, PD, STREAM + 1, a, 10, 0, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_STREAM);
	ck_assert_int_eq(ddp_stag_bind(t, nk(k, 1), mr, PD, STREAM, a + 50, 10,
				       DDP_ACCESS_REMOTE_READ, &why),
			 IW_OK);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, STREAM, 0, a + 50, 1, &ref), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_resolve(t, nk(k, 1), PD, STREAM, 0, a + 50, 10, &ref),
			 DDP_STAG_OK);
	/* an invalidated MR makes its windows unusable */
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, mr, PD, 0, false, NULL), IW_OK);
	ck_assert_int_eq(ddp_stag_resolve(t, nk(k, 1), PD, STREAM, 0, a + 50, 1, &ref),
			 DDP_STAG_INVALID);
	/* length 0 unbinds: the MR can go */
	ck_assert_int_eq(ddp_stag_bind(t, nk(k, 2), 0, PD, STREAM, 0, 0, 0, &why), IW_OK);
	ck_assert_int_eq(ddp_stag_resolve(t, nk(k, 2), PD, STREAM, 0, a + 50, 1, &ref),
			 DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_dereg(t, mr), IW_OK);
	ck_assert_int_eq(ddp_stag_free_index(t, mw), IW_OK);
	ck_assert_int_eq(ddp_stag_dereg(t, plain), IW_OK);
	ck_assert_int_eq(ddp_stag_dereg(t, ro), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(mw_over_scattered_fr_and_invalidation)
{
	struct ddp_stag_table *t = table();
	const uint32_t off = 512;
	uint64_t pages[NPG];
	uint32_t fr_s, mw, k;
	struct ddp_stag_ref ref;
	enum ddp_stag_check why;
	struct ddp_fast_reg fr;
	uint8_t v = 0;

	ck_assert_int_eq(ddp_stag_alloc(t, PD, NPG, &fr_s), IW_OK);
	fr = fr_scattered(nk(fr_s, 1), pages, off, NPG * PG - off);
	fr.access |= DDP_ACCESS_MW_BIND;
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_OK);
	ck_assert_int_eq(ddp_stag_alloc_mw(t, PD, &mw), IW_OK);
	k = DDP_STAG_MAKE(DDP_STAG_INDEX(mw), DDP_STAG_KEY(mw) + 7);
	/* window over the second and third pages' edge */
	ck_assert_int_eq(ddp_stag_bind(t, k, fr.stag, PD, STREAM, IOVA + 2 * PG - off - 4, 8,
				       DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_INVALIDATE, &why),
			 IW_OK);
	ck_assert_int_eq(ddp_stag_resolve(t, k, PD, STREAM, DDP_ACCESS_REMOTE_READ,
					  IOVA + 2 * PG - off - 4, 8, &ref),
			 DDP_STAG_OK);
	ck_assert(ddp_stag_ref_scattered(&ref));
	ddp_stag_ref_copy_out(&ref, 5, &v, 1);
	ck_assert_uint_eq(v, *host(off, 2 * PG - off + 1));
	/* the FR cannot be invalidated-and-reregistered while the window is bound */
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, fr.stag, PD, 0, false, NULL), IW_OK);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_ESTATE);
	ck_assert_int_eq(ddp_stag_free_index(t, fr_s), IW_ESTATE);

	/* remote invalidation of the window: right stream only, then it is unbound */
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, k, PD, STREAM + 1, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_STREAM);
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, k, OTHER, STREAM, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_PD);
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, k, PD, STREAM, true, &why), IW_OK);
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, k, PD, STREAM, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	/* local invalidation: any stream, PD checked, idempotent */
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, k, OTHER, 0, false, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_PD);
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, k, PD, 0, false, &why), IW_OK);
	ck_assert_int_eq(ddp_stag_invalidate_stream(t, nk(k, 1), PD, 0, false, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	/* unbound now: the FR registers again, then goes */
	fr.stag = DDP_STAG_MAKE(DDP_STAG_INDEX(fr_s), DDP_STAG_KEY(fr.stag) + 1);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_OK);
	ck_assert_int_eq(ddp_stag_free_index(t, fr_s), IW_OK);
	/* a bound window that is freed unbinds from its MR */
	ck_assert_int_eq(ddp_stag_free_index(t, mw), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(fr_entry_query_and_slot_reuse)
{
	/* two slots: once one is freed, the next registration must take it
	 * (free slots are drawn at random) */
	struct ddp_stag_table *t = ddp_stag_table_create(2, 0xFEEDull);
	uint64_t pages[NPG];
	uint32_t s, s2, m, maxp = 0;
	struct ddp_fast_reg fr;

	ck_assert_int_eq(ddp_stag_alloc(t, PD, 2, &s), IW_OK);
	ck_assert(ddp_stag_fast_reg_entry(t, nk(s, 3), &maxp)); /* any key */
	ck_assert_uint_eq(maxp, 2);
	ck_assert_int_eq(ddp_stag_reg(t, PD, pagemem, 0, 8, RW, &m), IW_OK);
	ck_assert(!ddp_stag_fast_reg_entry(t, m, NULL));
	ck_assert(!ddp_stag_fast_reg_entry(t, DDP_STAG_MAKE(15, 0), NULL));
	ck_assert(!ddp_stag_fast_reg_entry(NULL, s, NULL));
	/* more pages than allocated */
	fr = fr_scattered(nk(s, 1), pages, 0, PG);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_EINVAL);
	/* freed, the index comes back with a larger list, then a plain registration */
	ck_assert_int_eq(ddp_stag_free_index(t, s), IW_OK);
	ck_assert(!ddp_stag_fast_reg_entry(t, s, NULL));
	ck_assert_int_eq(ddp_stag_alloc(t, PD, NPG, &s2), IW_OK);
	ck_assert_uint_eq(DDP_STAG_INDEX(s2), DDP_STAG_INDEX(s));
	ck_assert_uint_ne(DDP_STAG_KEY(s2), DDP_STAG_KEY(s));
	fr = fr_scattered(nk(s2, 1), pages, 0, NPG * PG);
	ck_assert_int_eq(ddp_stag_fast_reg(t, &fr), IW_OK);
	ck_assert_int_eq(ddp_stag_free_index(t, s2), IW_OK);
	ck_assert_int_eq(ddp_stag_reg(t, PD, pagemem, 0, 8, RW, &s2), IW_OK);
	ck_assert_uint_eq(DDP_STAG_INDEX(s2), DDP_STAG_INDEX(s));
	ck_assert(!ddp_stag_fast_reg_entry(t, s2, NULL));
	ck_assert_int_eq(ddp_stag_check(t, s2, PD, 0, 0, 8, NULL), DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_dereg(t, s2), IW_OK);
	ck_assert_int_eq(ddp_stag_dereg(t, m), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(mw_freed_while_bound_releases_its_mr)
{
	struct ddp_stag_table *t = table();
	uint32_t mr = mr_bindable(t, RW | DDP_ACCESS_MW_BIND);
	uint32_t mw;

	ck_assert_int_eq(ddp_stag_alloc_mw(t, PD, &mw), IW_OK);
	ck_assert_int_eq(
		ddp_stag_bind(t, mw ^ 1, mr, PD, STREAM, page(0), PG, DDP_ACCESS_REMOTE_READ, NULL),
		IW_OK);
	ck_assert_int_eq(ddp_stag_dereg(t, mr), IW_ESTATE);
	ck_assert_int_eq(ddp_stag_dereg(t, mw ^ 1), IW_OK);
	ck_assert_int_eq(ddp_stag_dereg(t, mr), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	/* a table destroyed with entries (and page lists) still in it frees them */
	ck_assert_int_eq(ddp_stag_alloc(t, PD, 8, &mw), IW_OK);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(tagged_resolve_maps_stream_to_the_ddp_code)
{
	struct ddp_stag_table *t = table();
	uint32_t mr = mr_bindable(t, RW | DDP_ACCESS_MW_BIND);
	uint32_t mw;
	struct ddp_hdr h = {.tagged = true, .to = page(0)};
	struct ddp_stag_ref ref;
	enum ddp_stag_check why;

	ck_assert_int_eq(ddp_stag_alloc_mw(t, PD, &mw), IW_OK);
	h.stag = mw ^ 0x80;
	ck_assert_int_eq(ddp_stag_bind(t, h.stag, mr, PD, STREAM, page(0), PG,
				       DDP_ACCESS_REMOTE_WRITE, NULL),
			 IW_OK);
	ck_assert_int_eq(ddp_tagged_resolve(t, &h, PD, STREAM, 0, 16, &ref, &why), IW_OK);
	ck_assert_ptr_eq(ref.addr, pagemem);
	ck_assert_int_eq(ddp_tagged_resolve(t, &h, PD, STREAM + 1, 0, 16, &ref, &why),
			 IW_EDDP_T_STREAM);
	ck_assert_int_eq(why, DDP_STAG_STREAM);
	ck_assert_ptr_null(ref.addr);
	ck_assert_int_eq(ddp_tagged_check(t, &h, PD, 0, 16, NULL, &why), IW_EDDP_T_STREAM);
	/* zero length: not checked */
	ck_assert_int_eq(ddp_tagged_resolve(t, &h, PD, STREAM + 1, 0, 0, &ref, &why), IW_OK);
	ddp_stag_table_destroy(t);
}
END_TEST

static Suite *ddp_mem_suite(void)
{
	Suite *s = suite_create("ddp_mem");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(s, tc);
	tcase_add_test(tc, fr_is_invalid_until_registered_and_key_rotates);
	tcase_add_test(tc, fr_refuses_bad_page_lists);
	tcase_add_test(tc, fr_contiguous_pages_give_one_pointer);
	tcase_add_test(tc, fr_scattered_spans_and_copies);
	tcase_add_test(tc, mw_bind_checks_and_stream_association);
	tcase_add_test(tc, mw_over_scattered_fr_and_invalidation);
	tcase_add_test(tc, fr_entry_query_and_slot_reuse);
	tcase_add_test(tc, mw_freed_while_bound_releases_its_mr);
	tcase_add_test(tc, tagged_resolve_maps_stream_to_the_ddp_code);
	return s;
}

TH_MAIN(ddp_mem_suite)
