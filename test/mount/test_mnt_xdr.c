/* SPDX-License-Identifier: MIT */
/*
 * test_mnt_xdr.c - the XDR of iwnfs-mount (tools/iwnfs-mount/mnt_xdr.c):
 * a reply of every NFSv3 procedure it decodes, built here field by field
 * from RFC 1813 §3.3, decodes to what was put in and to its last octet;
 * every shorter length, and thousands of corrupted copies, give a defined
 * result (an error, or a result whose pointers stay inside the reply) -
 * the "a malformed reply is never a crash" rule, run under ASan too; the
 * bounds a server cannot exceed (handle 64 octets, READ data the count
 * asked, names without '/' or NUL, bools 0/1, ftype 1-7); RPC reply
 * headers; MOUNT; the NFS3ERR_* to errno map; call headers that the
 * transport's own RPC parser reads back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "mnt_xdr.h"
#include "th.h"

#define BUF 8192

static void put_fattr(struct iw_cursor *c, uint32_t type, uint64_t size)
{
	xw_u32(c, type);
	xw_u32(c, 0644);
	xw_u32(c, 1);	 /* nlink */
	xw_u32(c, 1000); /* uid */
	xw_u32(c, 100);	 /* gid */
	xw_u64(c, size);
	xw_u64(c, 4096); /* used */
	xw_u32(c, 0);	 /* rdev */
	xw_u32(c, 0);
	xw_u64(c, 7);	 /* fsid */
	xw_u64(c, 4242); /* fileid */
	for (int i = 0; i < 3; i++) {
		xw_u32(c, 1700000000u + (uint32_t)i);
		xw_u32(c, 5);
	}
}

static void put_post_op(struct iw_cursor *c)
{
	xw_bool(c, true);
	put_fattr(c, NF3REG, 100);
}

static void put_wcc(struct iw_cursor *c)
{
	xw_bool(c, true); /* pre_op_attr: size, mtime, ctime */
	xw_u64(c, 99);
	xw_u64(c, 1);
	xw_u64(c, 2);
	put_post_op(c);
}

static const uint8_t FH[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const uint8_t VERF[8] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3};

static void put_fh(struct iw_cursor *c)
{
	xw_opaque(c, FH, sizeof(FH));
}

/* A successful result of every field present for `proc`; its length. */
static size_t build_ok(uint32_t proc, uint8_t *buf)
{
	struct iw_cursor c;

	iw_cursor_init(&c, buf, BUF);
	xw_u32(&c, NFS3_OK);
	switch (proc) {
	case NFS3_GETATTR:
		put_fattr(&c, NF3DIR, 4096);
		break;
	case NFS3_SETATTR:
	case NFS3_REMOVE:
	case NFS3_RMDIR:
		put_wcc(&c);
		break;
	case NFS3_LOOKUP:
		put_fh(&c);
		put_post_op(&c);
		put_post_op(&c);
		break;
	case NFS3_ACCESS:
		put_post_op(&c);
		xw_u32(&c, ACCESS3_READ | ACCESS3_LOOKUP);
		break;
	case NFS3_READLINK:
		put_post_op(&c);
		xw_opaque(&c, "a/b/c", 5);
		break;
	case NFS3_READ:
		put_post_op(&c);
		xw_u32(&c, 11);
		xw_bool(&c, true);
		xw_opaque(&c, "hello world", 11);
		break;
	case NFS3_WRITE:
		put_wcc(&c);
		xw_u32(&c, 4096);
		xw_u32(&c, NFS3_UNSTABLE);
		xw_fixed(&c, VERF, 8);
		break;
	case NFS3_CREATE:
	case NFS3_MKDIR:
	case NFS3_SYMLINK:
	case NFS3_MKNOD:
		xw_bool(&c, true);
		put_fh(&c);
		put_post_op(&c);
		put_wcc(&c);
		break;
	case NFS3_RENAME:
		put_wcc(&c);
		put_wcc(&c);
		break;
	case NFS3_LINK:
		put_post_op(&c);
		put_wcc(&c);
		break;
	case NFS3_READDIRPLUS:
		put_post_op(&c);
		xw_fixed(&c, VERF, 8);
		break;
	case NFS3_FSSTAT:
		put_post_op(&c);
		for (int i = 0; i < 6; i++)
			xw_u64(&c, 1000u * (uint64_t)(i + 1));
		xw_u32(&c, 0);
		break;
	case NFS3_FSINFO:
		put_post_op(&c);
		for (int i = 0; i < 7; i++)
			xw_u32(&c, 65536);
		xw_u64(&c, UINT64_MAX);
		xw_u32(&c, 0);
		xw_u32(&c, 1);
		xw_u32(&c, 0x1b);
		break;
	case NFS3_PATHCONF:
		put_post_op(&c);
		xw_u32(&c, 32000);
		xw_u32(&c, 255);
		for (int i = 0; i < 4; i++)
			xw_bool(&c, i != 2);
		break;
	case NFS3_COMMIT:
		put_wcc(&c);
		xw_fixed(&c, VERF, 8);
		break;
	}
	ck_assert_int_eq(c.err, 0);
	return c.off;
}

static const uint32_t procs[] = {
	NFS3_GETATTR, NFS3_SETATTR, NFS3_LOOKUP,   NFS3_ACCESS, NFS3_READLINK,
	NFS3_READ,    NFS3_WRITE,   NFS3_CREATE,   NFS3_MKDIR,	NFS3_SYMLINK,
	NFS3_MKNOD,   NFS3_REMOVE,  NFS3_RMDIR,	   NFS3_RENAME, NFS3_LINK,
	NFS3_FSSTAT,  NFS3_FSINFO,  NFS3_PATHCONF, NFS3_COMMIT, NFS3_READDIRPLUS,
};
#define NPROCS (sizeof(procs) / sizeof(procs[0]))

static int decode(uint32_t proc, const uint8_t *buf, size_t len, struct nfs3_res *r, size_t *used)
{
	struct iw_cursor c;
	int rc;

	iw_cursor_init(&c, buf, len);
	rc = nfs3_dec_res(proc, &c, 1 << 20, r);
	*used = c.off;
	return rc;
}

START_TEST(every_result_decodes_to_its_last_octet)
{
	uint8_t buf[BUF];

	for (size_t i = 0; i < NPROCS; i++) {
		struct nfs3_res r;
		size_t len = build_ok(procs[i], buf), used;

		ck_assert_msg(decode(procs[i], buf, len, &r, &used) == 0, "%s",
			      nfs3_procname(procs[i]));
		ck_assert_msg(used == len, "%s: %zu of %zu", nfs3_procname(procs[i]), used, len);
		ck_assert_uint_eq(r.status, NFS3_OK);
		switch (procs[i]) {
		case NFS3_GETATTR:
			ck_assert(r.has_attr && r.attr.type == NF3DIR && r.attr.size == 4096);
			ck_assert(r.attr.fileid == 4242 && r.attr.uid == 1000);
			break;
		case NFS3_LOOKUP:
			ck_assert(r.has_fh && r.fh.len == sizeof(FH) && !memcmp(r.fh.data, FH, 12));
			ck_assert(r.has_attr && r.has_dir_attr);
			break;
		case NFS3_READ:
			ck_assert(r.count == 11 && r.eof && !memcmp(r.data, "hello world", 11));
			break;
		case NFS3_READLINK:
			ck_assert(r.count == 5 && !memcmp(r.data, "a/b/c", 5));
			break;
		case NFS3_WRITE:
			ck_assert(r.count == 4096 && r.committed == NFS3_UNSTABLE);
			ck_assert(!memcmp(r.verf, VERF, 8) && r.has_attr && r.attr.size == 100);
			break;
		case NFS3_COMMIT:
			ck_assert(!memcmp(r.verf, VERF, 8));
			break;
		case NFS3_CREATE:
			ck_assert(r.has_fh && r.has_attr && r.has_dir_attr);
			break;
		case NFS3_RENAME:
			ck_assert(r.has_dir_attr && r.has_dir2_attr);
			break;
		case NFS3_FSINFO:
			ck_assert(r.rtmax == 65536 && r.wtmax == 65536 && r.properties == 0x1b);
			break;
		case NFS3_FSSTAT:
			ck_assert(r.tbytes == 1000 && r.afiles == 6000);
			break;
		case NFS3_PATHCONF:
			ck_assert(r.name_max == 255 && r.no_trunc && !r.case_insensitive);
			break;
		}
	}
}
END_TEST

START_TEST(every_truncation_is_an_error)
{
	uint8_t buf[BUF];

	for (size_t i = 0; i < NPROCS; i++) {
		size_t len = build_ok(procs[i], buf), used;

		for (size_t n = 0; n < len; n++) {
			/* a copy of exactly n octets: ASan sees any read past it */
			uint8_t *cut = malloc(n ? n : 1);
			struct nfs3_res r;

			memcpy(cut, buf, n);
			ck_assert_msg(decode(procs[i], cut, n, &r, &used) < 0, "%s cut at %zu",
				      nfs3_procname(procs[i]), n);
			free(cut);
		}
	}
}
END_TEST

START_TEST(corrupted_results_never_escape_the_reply)
{
	struct th_rng rng;
	uint8_t buf[BUF];

	th_rng_init(&rng, th_seed_for(0x6d6e74));
	for (int iter = 0; iter < 200000; iter++) {
		uint32_t proc = procs[th_rng_range(&rng, 0, NPROCS - 1)];
		size_t len = build_ok(proc, buf), used;
		unsigned flips = (unsigned)th_rng_range(&rng, 1, 4);
		struct nfs3_res r;
		uint8_t *copy;
		int rc;

		for (unsigned f = 0; f < flips; f++) {
			size_t at = th_rng_range(&rng, 0, len - 1);

			if (th_rng_next(&rng) & 1)
				buf[at] ^= (uint8_t)(1u << th_rng_range(&rng, 0, 7));
			else
				buf[at] = (uint8_t)th_rng_next(&rng);
		}
		len = th_rng_range(&rng, len / 2, len);
		copy = malloc(len);
		memcpy(copy, buf, len);
		rc = decode(proc, copy, len, &r, &used);
		ck_assert(rc <= 0);
		if (rc == 0) {
			ck_assert(used <= len);
			if (r.data)
				ck_assert(r.data >= copy && r.data + r.count <= copy + len);
			ck_assert(r.fh.len <= NFS3_FHSIZE);
			ck_assert(!r.has_attr || (r.attr.type >= NF3REG && r.attr.type <= NF3FIFO));
		}
		free(copy);
	}
}
END_TEST

/* Replace the 4-octet word at `off` and decode. */
static int decode_with(uint32_t proc, size_t off, uint32_t v, uint32_t max_count)
{
	uint8_t buf[BUF];
	size_t len = build_ok(proc, buf);
	struct iw_cursor c;
	struct nfs3_res r;

	iw_put_be32(buf + off, v);
	iw_cursor_init(&c, buf, len);
	return nfs3_dec_res(proc, &c, max_count, &r);
}

START_TEST(server_values_out_of_bounds_are_errors)
{
	const size_t post_op = 4 + 84;
	struct iw_cursor c;
	struct nfs3_res r;
	uint8_t buf[BUF];
	size_t len;

	/* LOOKUP: handle length 65, 0, 2^32-1 */
	ck_assert_int_lt(decode_with(NFS3_LOOKUP, 4, 65, 0), 0);
	ck_assert_int_lt(decode_with(NFS3_LOOKUP, 4, 0, 0), 0);
	ck_assert_int_lt(decode_with(NFS3_LOOKUP, 4, UINT32_MAX, 0), 0);
	/* GETATTR: ftype 0 and 8; a post_op_attr bool of 2 */
	ck_assert_int_lt(decode_with(NFS3_GETATTR, 4, 0, 0), 0);
	ck_assert_int_lt(decode_with(NFS3_GETATTR, 4, 8, 0), 0);
	ck_assert_int_lt(decode_with(NFS3_ACCESS, 4, 2, 0), 0);
	/* READ: count differs from the data length; data beyond what was asked */
	ck_assert_int_lt(decode_with(NFS3_READ, 4 + post_op, 12, 1 << 20), 0);
	ck_assert_int_lt(decode_with(NFS3_READ, 4 + post_op + 8, UINT32_MAX, 1 << 20), 0);
	len = build_ok(NFS3_READ, buf);
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(nfs3_dec_res(NFS3_READ, &c, 10, &r), 0);
	/* WRITE: stable_how 3; a count above what was sent */
	len = build_ok(NFS3_WRITE, buf);
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(nfs3_dec_res(NFS3_WRITE, &c, 100, &r), 0);
	ck_assert_int_lt(decode_with(NFS3_WRITE, len - 12, 3, 1 << 20), 0);
	/* READLINK: a NUL inside the text */
	len = build_ok(NFS3_READLINK, buf);
	buf[4 + post_op + 4 + 1] = 0;
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(nfs3_dec_res(NFS3_READLINK, &c, 0, &r), 0);
	/* a procedure it never calls */
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(nfs3_dec_res(NFS3_READDIR, &c, 0, &r), 0);
}
END_TEST

START_TEST(an_error_status_carries_only_the_attributes_of_every_arm)
{
	uint8_t buf[64] = {0};
	struct iw_cursor c;
	struct nfs3_res r;

	iw_cursor_init(&c, buf, sizeof(buf));
	xw_u32(&c, 2); /* NFS3ERR_NOENT */
	xw_bool(&c, false);
	iw_cursor_init(&c, buf, 8);
	ck_assert_int_eq(nfs3_dec_res(NFS3_LOOKUP, &c, 0, &r), 0);
	ck_assert_uint_eq(r.status, 2);
	ck_assert(!r.has_fh && !r.has_attr && !r.has_dir_attr);
	ck_assert_int_eq(nfs3_errno(r.status), ENOENT);
	ck_assert_int_eq(nfs3_errno(NFS3ERR_JUKEBOX), EAGAIN);
	ck_assert_int_eq(nfs3_errno(NFS3ERR_BADHANDLE), ESTALE);
	ck_assert_int_eq(nfs3_errno(66), ENOTEMPTY);
	ck_assert_int_eq(nfs3_errno(12345), EIO);
	ck_assert_str_eq(nfs3_statname(70), "NFS3ERR_STALE");
}
END_TEST

/* entryplus3 list: entries, then the end and eof */
static size_t build_dir(uint8_t *buf, const char *name)
{
	struct iw_cursor c;

	iw_cursor_init(&c, buf, BUF);
	xw_bool(&c, true);
	xw_u64(&c, 99);
	xw_opaque(&c, name, strlen(name));
	xw_u64(&c, 12345);
	put_post_op(&c);
	xw_bool(&c, true);
	put_fh(&c);
	xw_bool(&c, false);
	xw_bool(&c, true);
	return c.off;
}

START_TEST(directory_entries_decode_and_bad_names_are_refused)
{
	uint8_t buf[BUF];
	struct nfs3_dirent e;
	struct iw_cursor c;
	bool eof;
	size_t len = build_dir(buf, "file.txt");

	iw_cursor_init(&c, buf, len);
	ck_assert_int_eq(nfs3_dec_dirent(&c, &e, &eof), 1);
	ck_assert(e.name_len == 8 && !memcmp(e.name, "file.txt", 8) && e.cookie == 12345);
	ck_assert(e.has_attr && e.has_fh && e.fileid == 99);
	ck_assert_int_eq(nfs3_dec_dirent(&c, &e, &eof), 0);
	ck_assert(eof && c.off == len);
	for (size_t n = 0; n < len; n++) {
		uint8_t *cut = malloc(n ? n : 1);
		int rc1, rc2 = 0;

		memcpy(cut, buf, n);
		iw_cursor_init(&c, cut, n);
		rc1 = nfs3_dec_dirent(&c, &e, &eof);
		if (rc1 == 1)
			rc2 = nfs3_dec_dirent(&c, &e, &eof);
		ck_assert_msg(rc1 < 0 || rc2 < 0, "cut at %zu", n);
		free(cut);
	}
	len = build_dir(buf, "a/b");
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(nfs3_dec_dirent(&c, &e, &eof), 0);
	len = build_dir(buf, "");
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(nfs3_dec_dirent(&c, &e, &eof), 0);
	len = build_dir(buf, "x");
	iw_put_be32(buf + 12, UINT32_MAX); /* the name's length */
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(nfs3_dec_dirent(&c, &e, &eof), 0);
}
END_TEST

START_TEST(call_headers_read_back_and_replies_are_checked)
{
	uint8_t buf[BUF] = {0};
	struct nfs_cred cred = {.uid = 1000, .gid = 100, .ngroups = 2, .groups = {4, 24}};
	struct rpcrdma_rpcinfo ri;
	struct iw_cursor c;
	const char *why;
	size_t off;

	iw_cursor_init(&c, buf, sizeof(buf));
	rpc_put_call(&c, 0x1234, NFS_PROGRAM, NFS_V3, NFS3_GETATTR, &cred, "host.example");
	ck_assert_int_eq(c.err, 0);
	ck_assert_int_eq(rpcrdma_rpc_parse(buf, c.off, &ri), 0);
	ck_assert(ri.xid == 0x1234 && ri.prog == NFS_PROGRAM && ri.vers == 3 && ri.proc == 1);
	ck_assert(ri.cred_flavor == RPC_AUTH_SYS && ri.body_off == c.off);

	/* accepted SUCCESS; then another xid, PROG_UNAVAIL, denied */
	iw_cursor_init(&c, buf, sizeof(buf));
	xw_u32(&c, 7);
	xw_u32(&c, RPC_MSG_REPLY);
	xw_u32(&c, 0);
	xw_u32(&c, 0);
	xw_u32(&c, 0);
	xw_u32(&c, 0);
	ck_assert_int_eq(rpc_check_reply(buf, c.off, 7, &off, &why), 0);
	ck_assert_uint_eq(off, 24);
	ck_assert_int_lt(rpc_check_reply(buf, c.off, 8, &off, &why), 0);
	iw_put_be32(buf + 20, 1);
	ck_assert_int_eq(rpc_check_reply(buf, c.off, 7, &off, &why), IW_ENOTSUP);
	ck_assert_str_eq(why, "PROG_UNAVAIL");
	iw_put_be32(buf + 8, 1); /* MSG_DENIED, AUTH_ERROR */
	iw_put_be32(buf + 12, 1);
	iw_put_be32(buf + 16, 1);
	ck_assert_int_eq(rpc_check_reply(buf, 20, 7, &off, &why), IW_ENOTSUP);
	ck_assert_int_lt(rpc_check_reply(buf, 7, 7, &off, &why), 0);
}
END_TEST

START_TEST(mount_replies_decode_and_bad_handles_are_refused)
{
	uint8_t buf[128] = {0};
	struct iw_cursor c;
	struct nfs_fh fh;
	uint32_t st;
	size_t len;

	iw_cursor_init(&c, buf, sizeof(buf));
	xw_u32(&c, 0);
	put_fh(&c);
	xw_u32(&c, 2);
	xw_u32(&c, 1);
	xw_u32(&c, 390003);
	len = c.off;
	iw_cursor_init(&c, buf, len);
	ck_assert_int_eq(mnt3_dec_mnt(&c, &st, &fh), 0);
	ck_assert(st == 0 && fh.len == sizeof(FH));
	iw_put_be32(buf + 4 + 4 + sizeof(FH), 1000000); /* flavors: 10^6 */
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(mnt3_dec_mnt(&c, &st, &fh), 0);
	iw_put_be32(buf + 4, 200); /* handle over 64 octets */
	iw_cursor_init(&c, buf, len);
	ck_assert_int_lt(mnt3_dec_mnt(&c, &st, &fh), 0);
	iw_put_be32(buf, 13); /* MNT3ERR_ACCES: nothing follows */
	iw_cursor_init(&c, buf, 4);
	ck_assert_int_eq(mnt3_dec_mnt(&c, &st, &fh), 0);
	ck_assert_uint_eq(st, 13);
}
END_TEST

static Suite *mnt_xdr_suite(void)
{
	Suite *s = suite_create("mnt_xdr");
	TCase *t = tcase_create("xdr");

	tcase_add_test(t, every_result_decodes_to_its_last_octet);
	tcase_add_test(t, every_truncation_is_an_error);
	tcase_add_test(t, corrupted_results_never_escape_the_reply);
	tcase_add_test(t, server_values_out_of_bounds_are_errors);
	tcase_add_test(t, an_error_status_carries_only_the_attributes_of_every_arm);
	tcase_add_test(t, directory_entries_decode_and_bad_names_are_refused);
	tcase_add_test(t, call_headers_read_back_and_replies_are_checked);
	tcase_add_test(t, mount_replies_decode_and_bad_handles_are_refused);
	suite_add_tcase(s, t);
	return s;
}

TH_MAIN(mnt_xdr_suite)
