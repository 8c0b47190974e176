/* SPDX-License-Identifier: MIT */
/*
 * nfs_build.h - builders of whole NFS RPC messages for tests (static inline
 * only, no library).  Each builder writes one RPC message (RFC 5531 header
 * with AUTH_SYS or AUTH_NONE, then the procedure arguments or results) into
 * the caller's buffer and returns its length (0 if it did not fit).
 *
 * Usage:
 *	uint8_t buf[8192];
 *	struct nfsb b;
 *	nfsb_init(&b, buf, sizeof(buf));
 *	b.reduce = true;          // optional: leave DDP-eligible data out
 *	size_t n = nfsb_v3_read_reply(&b, 7, data, 100, true);
 *	// b.body_off: where the results start (what rpcrdma_rpc_parse reports)
 *	// b.item[0].off / .len: the READ data (from the start of the message)
 *
 * Every builder records the DDP-eligible items (RFC 8267 §4, §6.1) it wrote
 * in b.item[] (offsets from the start of the message, lengths without XDR
 * padding; b.n_items of them, in XDR order; reply items of failed operations
 * are not recorded).  With b.reduce set, the data and padding of those items
 * are left out (the length word stays), as a requester or responder does when
 * it moves them into chunks (RFC 8166 §3.4.5, §3.4.6); the offsets recorded
 * are then where the data would start in the reduced stream.  With
 * b.auth_none the credential is AUTH_NONE instead of AUTH_SYS.
 *
 * Data pointers may be NULL: the builder then writes `len` octets of a
 * counting pattern (i & 0xff).
 */
#ifndef IW_NFS_BUILD_H
#define IW_NFS_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NFSB_MAX_ITEMS	 16

#define NFSB_PROG_NFS	 100003u
#define NFSB_PROG_NFSACL 100227u
#define NFSB_PROG_MOUNT	 100005u

/* NFSv3 procedures (RFC 1813 §3.3) */
enum {
	NFSB3_NULL = 0,
	NFSB3_GETATTR = 1,
	NFSB3_LOOKUP = 3,
	NFSB3_READLINK = 5,
	NFSB3_READ = 6,
	NFSB3_WRITE = 7,
	NFSB3_SYMLINK = 10,
	NFSB3_READDIR = 16,
	NFSB3_READDIRPLUS = 17,
};

/* NFSv2 procedures (RFC 1094 §2.2) */
enum {
	NFSB2_NULL = 0,
	NFSB2_GETATTR = 1,
	NFSB2_READLINK = 5,
	NFSB2_READ = 6,
	NFSB2_WRITE = 8,
	NFSB2_SYMLINK = 13,
	NFSB2_READDIR = 16,
};

/* NFSv4 operations used by the COMPOUND builders (RFC 7530 §16, RFC 8881 §18) */
enum {
	NFSB4_CREATE = 6,
	NFSB4_GETATTR = 9,
	NFSB4_GETFH = 10,
	NFSB4_LOOKUP = 15,
	NFSB4_PUTFH = 22,
	NFSB4_PUTROOTFH = 24,
	NFSB4_READ = 25,
	NFSB4_READLINK = 27,
	NFSB4_WRITE = 38,
	NFSB4_SEQUENCE = 53,
};
#define NFSB4_NF4LNK 5
#define NFSB4_NF4DIR 2

struct nfsb {
	uint8_t *p;
	size_t cap;
	size_t off;
	bool overflow;
	/* options, set by the caller after nfsb_init */
	bool reduce;	/* leave the DDP-eligible items' data + padding out */
	bool auth_none; /* AUTH_NONE credential instead of AUTH_SYS */
	/* outputs of the last builder */
	size_t body_off; /* start of the procedure arguments / results */
	unsigned n_items;
	struct {
		size_t off;   /* data start, from the start of the message */
		uint32_t len; /* data length without padding */
	} item[NFSB_MAX_ITEMS];
};

static inline void nfsb_init(struct nfsb *b, void *buf, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->p = buf;
	b->cap = cap;
}

static inline void nfsb_u32(struct nfsb *b, uint32_t v)
{
	if (b->overflow || b->cap - b->off < 4) {
		b->overflow = true;
		return;
	}
	b->p[b->off] = (uint8_t)(v >> 24);
	b->p[b->off + 1] = (uint8_t)(v >> 16);
	b->p[b->off + 2] = (uint8_t)(v >> 8);
	b->p[b->off + 3] = (uint8_t)v;
	b->off += 4;
}

static inline void nfsb_u64(struct nfsb *b, uint64_t v)
{
	nfsb_u32(b, (uint32_t)(v >> 32));
	nfsb_u32(b, (uint32_t)v);
}

/* len octets of data (pattern if NULL) + zero padding to a multiple of 4 */
static inline void nfsb_fixed(struct nfsb *b, const void *data, uint32_t len)
{
	size_t padded = ((size_t)len + 3) & ~(size_t)3;
	if (b->overflow || b->cap - b->off < padded) {
		b->overflow = true;
		return;
	}
	for (uint32_t i = 0; i < len; i++)
		b->p[b->off + i] = data ? ((const uint8_t *)data)[i] : (uint8_t)i;
	for (size_t i = len; i < padded; i++)
		b->p[b->off + i] = 0;
	b->off += padded;
}

/* variable-length opaque<>: length word + data + padding */
static inline void nfsb_opaque(struct nfsb *b, const void *data, uint32_t len)
{
	nfsb_u32(b, len);
	nfsb_fixed(b, data, len);
}

static inline void nfsb_string(struct nfsb *b, const char *s)
{
	nfsb_opaque(b, s, (uint32_t)strlen(s));
}

/* A DDP-eligible opaque: recorded in item[], data left out when reducing. */
static inline void nfsb_item(struct nfsb *b, const void *data, uint32_t len)
{
	nfsb_u32(b, len);
	if (b->n_items < NFSB_MAX_ITEMS) {
		b->item[b->n_items].off = b->off;
		b->item[b->n_items].len = len;
		b->n_items++;
	}
	if (!b->reduce)
		nfsb_fixed(b, data, len);
}

static inline size_t nfsb_done(struct nfsb *b)
{
	return b->overflow ? 0 : b->off;
}

/*
 * RPC call header (RFC 5531 §9): xid, CALL, rpcvers 2, prog, vers, proc,
 * credential AUTH_SYS {stamp 0, machinename "iwtest", uid 0, gid 0, no gids}
 * (or AUTH_NONE with b->auth_none), verifier AUTH_NONE.  Starts a new message.
 */
static inline void nfsb_call_hdr(struct nfsb *b, uint32_t xid, uint32_t prog, uint32_t vers,
				 uint32_t proc)
{
	b->off = 0;
	b->overflow = false;
	b->n_items = 0;
	nfsb_u32(b, xid);
	nfsb_u32(b, 0); /* CALL */
	nfsb_u32(b, 2);
	nfsb_u32(b, prog);
	nfsb_u32(b, vers);
	nfsb_u32(b, proc);
	if (b->auth_none) {
		nfsb_u32(b, 0);
		nfsb_u32(b, 0);
	} else {
		nfsb_u32(b, 1);	 /* AUTH_SYS */
		nfsb_u32(b, 28); /* stamp, "iwtest" (4 + 8), uid, gid, gids<0> */
		nfsb_u32(b, 0);
		nfsb_string(b, "iwtest");
		nfsb_u32(b, 0);
		nfsb_u32(b, 0);
		nfsb_u32(b, 0);
	}
	nfsb_u32(b, 0); /* verifier AUTH_NONE */
	nfsb_u32(b, 0);
	b->body_off = b->off;
}

/* RPC reply header: xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE, SUCCESS. */
static inline void nfsb_reply_hdr(struct nfsb *b, uint32_t xid)
{
	b->off = 0;
	b->overflow = false;
	b->n_items = 0;
	nfsb_u32(b, xid);
	nfsb_u32(b, 1);
	nfsb_u32(b, 0);
	nfsb_u32(b, 0);
	nfsb_u32(b, 0);
	nfsb_u32(b, 0);
	b->body_off = b->off;
}

/* ---------------------------------------------------------------------- */
/* NFSv3 (RFC 1813)                                                        */
/* ---------------------------------------------------------------------- */

/* A file handle of fh_len octets (≤ 64) filled with 0xf0 + i. */
static inline void nfsb_v3_fh(struct nfsb *b, uint32_t fh_len)
{
	uint8_t fh[64];
	if (fh_len > sizeof(fh))
		fh_len = sizeof(fh);
	for (uint32_t i = 0; i < fh_len; i++)
		fh[i] = (uint8_t)(0xf0 + i);
	nfsb_opaque(b, fh, fh_len);
}

/* fattr3 (84 octets): a regular file of `size` octets. */
static inline void nfsb_v3_fattr(struct nfsb *b, uint64_t size)
{
	nfsb_u32(b, 1);	    /* NF3REG */
	nfsb_u32(b, 0644);  /* mode */
	nfsb_u32(b, 1);	    /* nlink */
	nfsb_u32(b, 1000);  /* uid */
	nfsb_u32(b, 1000);  /* gid */
	nfsb_u64(b, size);  /* size */
	nfsb_u64(b, size);  /* used */
	nfsb_u64(b, 0);	    /* rdev */
	nfsb_u64(b, 42);    /* fsid */
	nfsb_u64(b, 12345); /* fileid */
	for (int i = 0; i < 6; i++)
		nfsb_u32(b, 1700000000u + (uint32_t)i); /* atime, mtime, ctime */
}

/* post_op_attr with attributes present */
static inline void nfsb_v3_post_op_attr(struct nfsb *b, uint64_t size)
{
	nfsb_u32(b, 1);
	nfsb_v3_fattr(b, size);
}

/* wcc_data: pre_op_attr present {size, mtime, ctime}, post_op_attr present */
static inline void nfsb_v3_wcc(struct nfsb *b, uint64_t size)
{
	nfsb_u32(b, 1);
	nfsb_u64(b, size);
	nfsb_u64(b, 0x1111);
	nfsb_u64(b, 0x2222);
	nfsb_v3_post_op_attr(b, size);
}

/* NFSv3 NULL call (proc 0, no arguments). */
static inline size_t nfsb_v3_null_call(struct nfsb *b, uint32_t xid)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 3, NFSB3_NULL);
	return nfsb_done(b);
}

/* NFSv3 READ call: READ3args {fh (fh_len octets), offset, count}. */
static inline size_t nfsb_v3_read_call(struct nfsb *b, uint32_t xid, uint32_t fh_len,
				       uint64_t offset, uint32_t count)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 3, NFSB3_READ);
	nfsb_v3_fh(b, fh_len);
	nfsb_u64(b, offset);
	nfsb_u32(b, count);
	return nfsb_done(b);
}

/*
 * NFSv3 READ reply, NFS3_OK: post_op_attr present, count, eof, data<count>
 * (the DDP-eligible item).  data may be NULL (pattern).
 */
static inline size_t nfsb_v3_read_reply(struct nfsb *b, uint32_t xid, const void *data,
					uint32_t count, bool eof)
{
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, 0);
	nfsb_v3_post_op_attr(b, 1u << 20);
	nfsb_u32(b, count);
	nfsb_u32(b, eof);
	nfsb_item(b, data, count);
	return nfsb_done(b);
}

/* NFSv3 READ reply with an error status (e.g. 13 NFS3ERR_ACCES): resfail = post_op_attr. */
static inline size_t nfsb_v3_read_reply_err(struct nfsb *b, uint32_t xid, uint32_t status)
{
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, status);
	nfsb_v3_post_op_attr(b, 0);
	return nfsb_done(b);
}

/* NFSv3 WRITE call: WRITE3args {fh, offset, count = len, stable FILE_SYNC, data<len>}. */
static inline size_t nfsb_v3_write_call(struct nfsb *b, uint32_t xid, uint32_t fh_len,
					uint64_t offset, const void *data, uint32_t len)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 3, NFSB3_WRITE);
	nfsb_v3_fh(b, fh_len);
	nfsb_u64(b, offset);
	nfsb_u32(b, len);
	nfsb_u32(b, 2); /* FILE_SYNC */
	nfsb_item(b, data, len);
	return nfsb_done(b);
}

/* NFSv3 WRITE reply, NFS3_OK: wcc_data, count, committed FILE_SYNC, verifier. */
static inline size_t nfsb_v3_write_reply(struct nfsb *b, uint32_t xid, uint32_t count)
{
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, 0);
	nfsb_v3_wcc(b, 4096);
	nfsb_u32(b, count);
	nfsb_u32(b, 2);
	nfsb_u64(b, 0x0102030405060708ull);
	return nfsb_done(b);
}

/* NFSv3 READLINK call: fh. */
static inline size_t nfsb_v3_readlink_call(struct nfsb *b, uint32_t xid, uint32_t fh_len)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 3, NFSB3_READLINK);
	nfsb_v3_fh(b, fh_len);
	return nfsb_done(b);
}

/* NFSv3 READLINK reply, NFS3_OK: post_op_attr, path (the DDP-eligible item). */
static inline size_t nfsb_v3_readlink_reply(struct nfsb *b, uint32_t xid, const char *path)
{
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, 0);
	nfsb_v3_post_op_attr(b, strlen(path));
	nfsb_item(b, path, (uint32_t)strlen(path));
	return nfsb_done(b);
}

/*
 * NFSv3 SYMLINK call: SYMLINK3args {where {dir fh, name}, symlink {sattr3 with
 * mode set and the rest unset, path (the DDP-eligible item)}}.
 */
static inline size_t nfsb_v3_symlink_call(struct nfsb *b, uint32_t xid, uint32_t fh_len,
					  const char *name, const char *path)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 3, NFSB3_SYMLINK);
	nfsb_v3_fh(b, fh_len);
	nfsb_string(b, name);
	nfsb_u32(b, 1); /* set_mode3: set */
	nfsb_u32(b, 0777);
	nfsb_u32(b, 0); /* uid */
	nfsb_u32(b, 0); /* gid */
	nfsb_u32(b, 0); /* size */
	nfsb_u32(b, 1); /* atime SET_TO_SERVER_TIME */
	nfsb_u32(b, 2); /* mtime SET_TO_CLIENT_TIME */
	nfsb_u32(b, 1700000000u);
	nfsb_u32(b, 0);
	nfsb_item(b, path, (uint32_t)strlen(path));
	return nfsb_done(b);
}

/* NFSv3 GETATTR call: fh. */
static inline size_t nfsb_v3_getattr_call(struct nfsb *b, uint32_t xid, uint32_t fh_len)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 3, NFSB3_GETATTR);
	nfsb_v3_fh(b, fh_len);
	return nfsb_done(b);
}

/* NFSv3 GETATTR reply, NFS3_OK: fattr3. */
static inline size_t nfsb_v3_getattr_reply(struct nfsb *b, uint32_t xid, uint64_t size)
{
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, 0);
	nfsb_v3_fattr(b, size);
	return nfsb_done(b);
}

/* NFSv3 READDIR call: READDIR3args {dir fh, cookie 0, cookieverf 0, count}. */
static inline size_t nfsb_v3_readdir_call(struct nfsb *b, uint32_t xid, uint32_t fh_len,
					  uint32_t count)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 3, NFSB3_READDIR);
	nfsb_v3_fh(b, fh_len);
	nfsb_u64(b, 0);
	nfsb_u64(b, 0);
	nfsb_u32(b, count);
	return nfsb_done(b);
}

/* ---------------------------------------------------------------------- */
/* NFSv2 (RFC 1094)                                                        */
/* ---------------------------------------------------------------------- */

static inline void nfsb_v2_fh(struct nfsb *b)
{
	uint8_t fh[32];
	for (unsigned i = 0; i < sizeof(fh); i++)
		fh[i] = (uint8_t)(0xa0 + i);
	nfsb_fixed(b, fh, sizeof(fh));
}

/* v2 fattr (68 octets) */
static inline void nfsb_v2_fattr(struct nfsb *b, uint32_t size)
{
	nfsb_u32(b, 1); /* NFREG */
	nfsb_u32(b, 0100644);
	nfsb_u32(b, 1);
	nfsb_u32(b, 0);
	nfsb_u32(b, 0);
	nfsb_u32(b, size);
	nfsb_u32(b, 4096);
	nfsb_u32(b, 0);
	nfsb_u32(b, (size + 511) / 512);
	nfsb_u32(b, 7);
	nfsb_u32(b, 99);
	for (int i = 0; i < 6; i++)
		nfsb_u32(b, 1700000000u);
}

/* NFSv2 READ call: readargs {fhandle, offset, count, totalcount}. */
static inline size_t nfsb_v2_read_call(struct nfsb *b, uint32_t xid, uint32_t offset,
				       uint32_t count)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 2, NFSB2_READ);
	nfsb_v2_fh(b);
	nfsb_u32(b, offset);
	nfsb_u32(b, count);
	nfsb_u32(b, count);
	return nfsb_done(b);
}

/* NFSv2 READ reply, NFS_OK: fattr, data (the DDP-eligible item). */
static inline size_t nfsb_v2_read_reply(struct nfsb *b, uint32_t xid, const void *data,
					uint32_t len)
{
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, 0);
	nfsb_v2_fattr(b, len);
	nfsb_item(b, data, len);
	return nfsb_done(b);
}

/* NFSv2 WRITE call: writeargs {fhandle, beginoffset, offset, totalcount, data (item)}. */
static inline size_t nfsb_v2_write_call(struct nfsb *b, uint32_t xid, uint32_t offset,
					const void *data, uint32_t len)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 2, NFSB2_WRITE);
	nfsb_v2_fh(b);
	nfsb_u32(b, 0);
	nfsb_u32(b, offset);
	nfsb_u32(b, len);
	nfsb_item(b, data, len);
	return nfsb_done(b);
}

/* NFSv2 READLINK reply, NFS_OK: path (the DDP-eligible item). */
static inline size_t nfsb_v2_readlink_reply(struct nfsb *b, uint32_t xid, const char *path)
{
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, 0);
	nfsb_item(b, path, (uint32_t)strlen(path));
	return nfsb_done(b);
}

/*
 * NFSv2 SYMLINK call: symlinkargs {from {dir fhandle, name}, to path (the
 * DDP-eligible item, in the middle), attributes sattr (8 words)}.
 */
static inline size_t nfsb_v2_symlink_call(struct nfsb *b, uint32_t xid, const char *name,
					  const char *path)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 2, NFSB2_SYMLINK);
	nfsb_v2_fh(b);
	nfsb_string(b, name);
	nfsb_item(b, path, (uint32_t)strlen(path));
	nfsb_u32(b, 0777);
	for (int i = 0; i < 7; i++)
		nfsb_u32(b, 0xffffffffu); /* "not set" */
	return nfsb_done(b);
}

/* ---------------------------------------------------------------------- */
/* NFSv4 COMPOUND (RFC 7530 §16.2, RFC 8881 §18)                           */
/* ---------------------------------------------------------------------- */

/*
 * One operation of a COMPOUND built by nfsb_v4_compound_call / _reply.
 * Fields used per op (others ignored):
 *   PUTFH      data/len = file handle (NULL: len octets of pattern)
 *   LOOKUP     data/len = component name
 *   READ       call: offset, count; reply: data/len read, eof
 *   WRITE      call: offset, data/len; reply: count = len written
 *   READLINK   reply: data/len = link text
 *   CREATE     call: objtype (NFSB4_NF4LNK: data/len = link data; NF4DIR),
 *              name = component; reply: nothing else
 *   GETATTR    call: bitmap[0..nbitmap); reply: bitmap + data/len = attrlist
 *   GETFH      reply: data/len = file handle
 *   SEQUENCE   call/reply: fixed contents (sessionid of 0x5a octets)
 *   PUTROOTFH  nothing
 *   status     reply: the op's status (non-zero: the reply array stops there,
 *              and the COMPOUND status is that status)
 */
struct nfsb_v4op {
	uint32_t op;
	uint32_t status;
	const void *data;
	uint32_t len;
	uint64_t offset;
	uint32_t count;
	bool eof;
	uint32_t objtype;
	const char *name;
	uint32_t bitmap[3];
	uint32_t nbitmap;
};

static inline void nfsb_v4_stateid(struct nfsb *b)
{
	nfsb_u32(b, 1);
	nfsb_u32(b, 0x11111111);
	nfsb_u32(b, 0x22222222);
	nfsb_u32(b, 0x33333333);
}

static inline void nfsb_v4_bitmap(struct nfsb *b, const struct nfsb_v4op *o)
{
	uint32_t n = o->nbitmap > 3 ? 3 : o->nbitmap;
	nfsb_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		nfsb_u32(b, o->bitmap[i]);
}

static inline void nfsb_v4_sessionid(struct nfsb *b)
{
	uint8_t sid[16];
	memset(sid, 0x5a, sizeof(sid));
	nfsb_fixed(b, sid, sizeof(sid));
}

/*
 * NFSv4 COMPOUND call (proc 1) of `n` ops with the given minor version and
 * tag; the DDP-eligible items (WRITE data, CREATE NF4LNK linkdata) are
 * recorded in op order.  Ops other than those listed for struct nfsb_v4op are
 * written with no arguments.
 */
static inline size_t nfsb_v4_compound_call(struct nfsb *b, uint32_t xid, uint32_t minor,
					   const char *tag, const struct nfsb_v4op *ops, unsigned n)
{
	nfsb_call_hdr(b, xid, NFSB_PROG_NFS, 4, 1);
	nfsb_string(b, tag);
	nfsb_u32(b, minor);
	nfsb_u32(b, n);
	for (unsigned i = 0; i < n; i++) {
		const struct nfsb_v4op *o = &ops[i];
		nfsb_u32(b, o->op);
		switch (o->op) {
		case NFSB4_PUTFH:
		case NFSB4_LOOKUP:
			nfsb_opaque(b, o->data, o->len);
			break;
		case NFSB4_READ:
			nfsb_v4_stateid(b);
			nfsb_u64(b, o->offset);
			nfsb_u32(b, o->count);
			break;
		case NFSB4_WRITE:
			nfsb_v4_stateid(b);
			nfsb_u64(b, o->offset);
			nfsb_u32(b, 2); /* FILE_SYNC4 */
			nfsb_item(b, o->data, o->len);
			break;
		case NFSB4_CREATE:
			nfsb_u32(b, o->objtype);
			if (o->objtype == NFSB4_NF4LNK)
				nfsb_item(b, o->data, o->len);
			nfsb_string(b, o->name ? o->name : "new");
			nfsb_u32(b, 2); /* createattrs: bitmap {mode} */
			nfsb_u32(b, 0);
			nfsb_u32(b, 1u << (33 - 32));
			nfsb_u32(b, 4);
			nfsb_u32(b, 0777);
			break;
		case NFSB4_GETATTR:
			nfsb_v4_bitmap(b, o);
			break;
		case NFSB4_SEQUENCE:
			nfsb_v4_sessionid(b);
			nfsb_u32(b, 7); /* sequenceid */
			nfsb_u32(b, 0); /* slotid */
			nfsb_u32(b, 0); /* highest_slotid */
			nfsb_u32(b, 0); /* cachethis */
			break;
		default:
			break;
		}
	}
	return nfsb_done(b);
}

/*
 * NFSv4 COMPOUND reply: status (of the last op written), tag, resarray of the
 * ops up to and including the first failed one.  READ / READLINK data of
 * successful ops are the recorded items, in op order.  Ops other than those
 * listed for struct nfsb_v4op are written as a bare status.
 */
static inline size_t nfsb_v4_compound_reply(struct nfsb *b, uint32_t xid, const char *tag,
					    const struct nfsb_v4op *ops, unsigned n)
{
	unsigned cnt = 0;
	uint32_t status = 0;
	while (cnt < n) {
		status = ops[cnt++].status;
		if (status)
			break;
	}
	nfsb_reply_hdr(b, xid);
	nfsb_u32(b, status);
	nfsb_string(b, tag);
	nfsb_u32(b, cnt);
	for (unsigned i = 0; i < cnt; i++) {
		const struct nfsb_v4op *o = &ops[i];
		nfsb_u32(b, o->op);
		nfsb_u32(b, o->status);
		if (o->status)
			break;
		switch (o->op) {
		case NFSB4_READ:
			nfsb_u32(b, o->eof);
			nfsb_item(b, o->data, o->len);
			break;
		case NFSB4_READLINK:
			nfsb_item(b, o->data, o->len);
			break;
		case NFSB4_WRITE:
			nfsb_u32(b, o->len);
			nfsb_u32(b, 2);
			nfsb_u64(b, 0x0102030405060708ull);
			break;
		case NFSB4_CREATE:
			nfsb_u32(b, 1); /* change_info4 atomic */
			nfsb_u64(b, 1);
			nfsb_u64(b, 2);
			nfsb_u32(b, 2); /* attrset: bitmap {mode} */
			nfsb_u32(b, 0);
			nfsb_u32(b, 1u << (33 - 32));
			break;
		case NFSB4_GETATTR:
			nfsb_v4_bitmap(b, o);
			nfsb_opaque(b, o->data, o->len);
			break;
		case NFSB4_GETFH:
			nfsb_opaque(b, o->data, o->len);
			break;
		case NFSB4_SEQUENCE:
			nfsb_v4_sessionid(b);
			nfsb_u32(b, 7);
			nfsb_u32(b, 0);
			nfsb_u32(b, 63);
			nfsb_u32(b, 63);
			nfsb_u32(b, 0);
			break;
		default:
			break;
		}
	}
	return nfsb_done(b);
}

/* Convenience: PUTFH + READ (offset, count) COMPOUND call, minor version 1 with SEQUENCE. */
static inline size_t nfsb_v4_read_call(struct nfsb *b, uint32_t xid, uint64_t offset,
				       uint32_t count)
{
	struct nfsb_v4op ops[3] = {
		{.op = NFSB4_SEQUENCE},
		{.op = NFSB4_PUTFH, .len = 32},
		{.op = NFSB4_READ, .offset = offset, .count = count},
	};
	return nfsb_v4_compound_call(b, xid, 1, "read", ops, 3);
}

/* Convenience: the reply to nfsb_v4_read_call, READ returning data/len. */
static inline size_t nfsb_v4_read_reply(struct nfsb *b, uint32_t xid, const void *data,
					uint32_t len, bool eof)
{
	struct nfsb_v4op ops[3] = {
		{.op = NFSB4_SEQUENCE},
		{.op = NFSB4_PUTFH},
		{.op = NFSB4_READ, .data = data, .len = len, .eof = eof},
	};
	return nfsb_v4_compound_reply(b, xid, "read", ops, 3);
}

/* Convenience: SEQUENCE + PUTFH + WRITE (offset, data/len) COMPOUND call, minor version 1. */
static inline size_t nfsb_v4_write_call(struct nfsb *b, uint32_t xid, uint64_t offset,
					const void *data, uint32_t len)
{
	struct nfsb_v4op ops[3] = {
		{.op = NFSB4_SEQUENCE},
		{.op = NFSB4_PUTFH, .len = 32},
		{.op = NFSB4_WRITE, .offset = offset, .data = data, .len = len},
	};
	return nfsb_v4_compound_call(b, xid, 1, "write", ops, 3);
}

/* Convenience: the reply to nfsb_v4_write_call (count = len written). */
static inline size_t nfsb_v4_write_reply(struct nfsb *b, uint32_t xid, uint32_t len)
{
	struct nfsb_v4op ops[3] = {
		{.op = NFSB4_SEQUENCE},
		{.op = NFSB4_PUTFH},
		{.op = NFSB4_WRITE, .len = len},
	};
	return nfsb_v4_compound_reply(b, xid, "write", ops, 3);
}

#endif /* IW_NFS_BUILD_H */
