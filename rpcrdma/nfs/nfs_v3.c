/* SPDX-License-Identifier: MIT */
/*
 * nfs_v3.c - NFS versions 2 and 3: DDP-eligible items and reply plans
 * (RFC 8267 §4).
 *
 * Theory of operation.  Only four procedures per version carry DDP-eligible
 * items (RFC 8267 §4): the WRITE data and SYMLINK pathname arguments, and the
 * READ data and READLINK pathname results.  Everything else has no item, so
 * its walk returns 0 without reading anything.  The four are walked field by
 * field with the bounded reader of nfs_xdr.h:
 *
 *   v3 WRITE3args    fh3 opaque<64>, offset u64, count, stable, data<>   (RFC 1813 §3.3.7)
 *   v3 SYMLINK3args  fh3, name, sattr3, symlink_data path<>              (§3.3.10)
 *   v3 READ3res      status, post_op_attr, [count, eof, data<>]          (§3.3.6)
 *   v3 READLINK3res  status, post_op_attr, [data path<>]                 (§3.3.5)
 *   v2 writeargs     fhandle[32], beginoffset, offset, totalcount, data<8192>
 *                                                                         (RFC 1094 §2.2.9)
 *   v2 symlinkargs   from {fhandle, name<255>}, to path<1024>, sattr (8 words)
 *                    - the item is in the middle                          (§2.2.14)
 *   v2 readres       status, [fattr (17 words), data<8192>]               (§2.2.7)
 *   v2 readlinkres   status, [path<1024>]                                 (§2.2.6)
 *
 * A READ or READLINK reply whose status is not OK carries no data: its slot
 * is reported with valid = false (RFC 8166 §4.3.2: the Write chunk is
 * returned unused).
 *
 * Reply plans (RFC 8267 §4.1) are computed from the XDR of the results: the
 * fixed-size results have a fixed largest encoding (the table below), READ
 * and READLINK add one slot, READDIR / READDIRPLUS are bounded by the
 * client's count / maxcount argument.  Every number is the largest arm of the
 * result union, with optional attributes present.
 */
#include "nfs_xdr.h"

/* RFC 1813 §2.5, §2.6 sizes */
#define V3_FH_MAX	64u /* NFS3_FHSIZE */
#define V3_FATTR	84u /* fattr3: 5 words, 5 u64 (size, used, rdev, fsid, fileid), 3 times */
#define V3_POST_OP_ATTR (4 + V3_FATTR)		   /* 88 */
#define V3_WCC		(4 + 24 + V3_POST_OP_ATTR) /* pre_op_attr {size, mtime, ctime} + post: 116 */
#define V3_POST_OP_FH	(4 + 4 + V3_FH_MAX)	   /* 72 */

/* RFC 1094 §2.3 sizes */
#define V2_FHSIZE     32u
#define V2_FATTR      68u /* 17 words */
#define V2_MAXDATA    8192u
#define V2_MAXPATHLEN 1024u
#define V2_MAXNAMLEN  255u

/*
 * Largest results (status included) of each NFSv3 procedure, without the
 * data of a DDP-eligible item (its length word and padding are counted).
 * READDIR (16) and READDIRPLUS (17) depend on the arguments.
 */
static const uint32_t v3_max_res[22] = {
	[0] = 0,					     /* NULL */
	[1] = 4 + V3_FATTR,				     /* GETATTR 88 */
	[2] = 4 + V3_WCC,				     /* SETATTR 120 */
	[3] = 4 + 4 + V3_FH_MAX + 2 * V3_POST_OP_ATTR,	     /* LOOKUP 248 */
	[4] = 4 + V3_POST_OP_ATTR + 4,			     /* ACCESS 96 */
	[5] = 4 + V3_POST_OP_ATTR + 4 + 4,		     /* READLINK + len + pad */
	[6] = 4 + V3_POST_OP_ATTR + 4 + 4 + 4 + 4,	     /* READ count eof len pad */
	[7] = 4 + V3_WCC + 4 + 4 + 8,			     /* WRITE 136 */
	[8] = 4 + V3_POST_OP_FH + V3_POST_OP_ATTR + V3_WCC,  /* CREATE 280 */
	[9] = 4 + V3_POST_OP_FH + V3_POST_OP_ATTR + V3_WCC,  /* MKDIR */
	[10] = 4 + V3_POST_OP_FH + V3_POST_OP_ATTR + V3_WCC, /* SYMLINK */
	[11] = 4 + V3_POST_OP_FH + V3_POST_OP_ATTR + V3_WCC, /* MKNOD */
	[12] = 4 + V3_WCC,				     /* REMOVE */
	[13] = 4 + V3_WCC,				     /* RMDIR */
	[14] = 4 + 2 * V3_WCC,				     /* RENAME 236 */
	[15] = 4 + V3_POST_OP_ATTR + V3_WCC,		     /* LINK 208 */
	[16] = 0,					     /* READDIR: count */
	[17] = 0,					     /* READDIRPLUS: maxcount */
	[18] = 4 + V3_POST_OP_ATTR + 6 * 8 + 4,		     /* FSSTAT 144 */
	[19] = 4 + V3_POST_OP_ATTR + 7 * 4 + 8 + 8 + 4,	     /* FSINFO 140 */
	[20] = 4 + V3_POST_OP_ATTR + 6 * 4,		     /* PATHCONF 116 */
	[21] = 4 + V3_WCC + 8,				     /* COMMIT 128 */
};

/* The same for NFSv2 (RFC 1094 §2.2); READDIR (16) depends on count. */
static const uint32_t v2_max_res[18] = {
	[0] = 0,			 /* NULL */
	[1] = 4 + V2_FATTR,		 /* GETATTR attrstat 72 */
	[2] = 4 + V2_FATTR,		 /* SETATTR */
	[3] = 0,			 /* ROOT (obsolete, void) */
	[4] = 4 + V2_FHSIZE + V2_FATTR,	 /* LOOKUP diropres 104 */
	[5] = 4 + 4 + 4,		 /* READLINK + len + pad */
	[6] = 4 + V2_FATTR + 4 + 4,	 /* READ + len + pad */
	[7] = 0,			 /* WRITECACHE (void) */
	[8] = 4 + V2_FATTR,		 /* WRITE attrstat */
	[9] = 4 + V2_FHSIZE + V2_FATTR,	 /* CREATE */
	[10] = 4,			 /* REMOVE */
	[11] = 4,			 /* RENAME */
	[12] = 4,			 /* LINK */
	[13] = 4,			 /* SYMLINK */
	[14] = 4 + V2_FHSIZE + V2_FATTR, /* MKDIR */
	[15] = 4,			 /* RMDIR */
	[16] = 0,			 /* READDIR: count */
	[17] = 4 + 5 * 4,		 /* STATFS 24 */
};

/* sattr3 (RFC 1813 §2.6): four optional values and two time_how unions. */
static void v3_sattr(struct iw_cursor *c)
{
	if (xdr_bool(c))
		(void)xdr_u32(c); /* mode */
	if (xdr_bool(c))
		(void)xdr_u32(c); /* uid */
	if (xdr_bool(c))
		(void)xdr_u32(c); /* gid */
	if (xdr_bool(c))
		(void)xdr_u64(c); /* size */
	for (int i = 0; i < 2; i++) {
		uint32_t how = xdr_u32(c); /* DONT_CHANGE, SET_TO_SERVER_TIME, SET_TO_CLIENT_TIME */
		if (how == 2)
			(void)xdr_u64(c);
		else if (how > 2)
			xdr_fail(c);
	}
}

static void v3_post_op_attr(struct iw_cursor *c)
{
	if (xdr_bool(c))
		xdr_skip(c, V3_FATTR);
}

static int v3_walk_call(uint32_t proc, struct nfs_walk *w)
{
	struct iw_cursor *c = &w->c;

	switch (proc) {
	case 7: /* WRITE */
		(void)xdr_opaque(c, V3_FH_MAX);
		(void)xdr_u64(c); /* offset */
		(void)xdr_u32(c); /* count */
		(void)xdr_u32(c); /* stable */
		return nfs_walk_item(w, XDR_NOMAX);
	case 10: /* SYMLINK */
		(void)xdr_opaque(c, V3_FH_MAX);
		(void)xdr_opaque(c, XDR_NOMAX); /* filename3 */
		v3_sattr(c);
		return nfs_walk_item(w, XDR_NOMAX);
	default:
		return 0;
	}
}

static int v2_walk_call(uint32_t proc, struct nfs_walk *w)
{
	struct iw_cursor *c = &w->c;
	int r;

	switch (proc) {
	case 8: /* WRITE */
		xdr_skip(c, V2_FHSIZE);
		(void)xdr_u32(c); /* beginoffset */
		(void)xdr_u32(c); /* offset */
		(void)xdr_u32(c); /* totalcount */
		return nfs_walk_item(w, V2_MAXDATA);
	case 13: /* SYMLINK: the path sits between the name and the attributes */
		xdr_skip(c, V2_FHSIZE);
		(void)xdr_opaque(c, V2_MAXNAMLEN);
		r = nfs_walk_item(w, V2_MAXPATHLEN);
		if (r)
			return r;
		xdr_skip(c, 8 * 4); /* sattr */
		return xdr_bad(c) ? IW_ERPC_RPC : 0;
	default:
		return 0;
	}
}

int nfs_v3_walk_call(uint32_t vers, uint32_t proc, struct nfs_walk *w)
{
	return vers == 2 ? v2_walk_call(proc, w) : v3_walk_call(proc, w);
}

int nfs_v3_walk_reply(uint32_t vers, uint32_t proc, struct nfs_walk *w)
{
	struct iw_cursor *c = &w->c;
	uint32_t status;
	bool read;

	if (vers == 2) {
		if (proc != 5 && proc != 6)
			return 0;
		read = proc == 6;
		status = xdr_u32(c);
		if (xdr_bad(c))
			return IW_ERPC_RPC;
		if (status != 0)
			return nfs_walk_void_slot(w);
		if (read)
			xdr_skip(c, V2_FATTR);
		return nfs_walk_item(w, read ? V2_MAXDATA : V2_MAXPATHLEN);
	}

	if (proc != 5 && proc != 6)
		return 0;
	read = proc == 6;
	status = xdr_u32(c);
	if (xdr_bad(c))
		return IW_ERPC_RPC;
	if (status != 0)
		return nfs_walk_void_slot(w);
	v3_post_op_attr(c);
	if (read) {
		(void)xdr_u32(c);  /* count */
		(void)xdr_bool(c); /* eof */
	}
	return nfs_walk_item(w, XDR_NOMAX);
}

int nfs_v3_plan(uint32_t vers, uint32_t proc, struct iw_cursor *c, struct nfs_plan *p)
{
	uint32_t count;

	if (vers == 2) {
		if (proc >= sizeof(v2_max_res) / sizeof(v2_max_res[0])) {
			nfs_plan_unpredictable(p);
			return 0;
		}
		nfs_plan_add(p, v2_max_res[proc]);
		switch (proc) {
		case 5:
			nfs_plan_slot(p, V2_MAXPATHLEN);
			break;
		case 6: /* readargs: fhandle, offset, count, totalcount */
			xdr_skip(c, V2_FHSIZE);
			(void)xdr_u32(c);
			count = xdr_u32(c);
			if (xdr_bad(c))
				return IW_ERPC_RPC;
			nfs_plan_slot(p, count > V2_MAXDATA ? V2_MAXDATA : count);
			break;
		case 16: /* readdirargs: fhandle, cookie[4], count of entry octets */
			xdr_skip(c, V2_FHSIZE + 4);
			count = xdr_u32(c);
			if (xdr_bad(c))
				return IW_ERPC_RPC;
			/* status, entries, the list end and eof words */
			nfs_plan_add(p, 4 + (uint64_t)nfs_plan_clamp(count) + 8);
			break;
		default:
			break;
		}
		return 0;
	}

	if (proc >= sizeof(v3_max_res) / sizeof(v3_max_res[0])) {
		nfs_plan_unpredictable(p);
		return 0;
	}
	nfs_plan_add(p, v3_max_res[proc]);
	switch (proc) {
	case 5:
		nfs_plan_slot(p, NFS_PLAN_PATH_MAX);
		break;
	case 6: /* READ3args: fh, offset, count */
		(void)xdr_opaque(c, V3_FH_MAX);
		(void)xdr_u64(c);
		count = xdr_u32(c);
		if (xdr_bad(c))
			return IW_ERPC_RPC;
		nfs_plan_slot(p, nfs_plan_clamp(count));
		break;
	case 16: /* READDIR3args: dir, cookie, cookieverf, count */
	case 17: /* READDIRPLUS3args: dir, cookie, cookieverf, dircount, maxcount */
		(void)xdr_opaque(c, V3_FH_MAX);
		(void)xdr_u64(c);
		xdr_skip(c, 8);
		if (proc == 17)
			(void)xdr_u32(c);
		count = xdr_u32(c);
		if (xdr_bad(c))
			return IW_ERPC_RPC;
		/* count bounds the resok (attributes, verifier, entries, eof); the
		 * header parts are added again in case a server leaves them out of
		 * its accounting */
		nfs_plan_add(p, 4 + V3_POST_OP_ATTR + 8 + 8 + (uint64_t)nfs_plan_clamp(count));
		break;
	default:
		break;
	}
	return 0;
}
