/* SPDX-License-Identifier: MIT */
/*
 * mnt_xdr.c - XDR of ONC RPC call headers, NFSv3, MOUNT3 and portmap GETPORT
 * for iwnfs-mount (see mnt_xdr.h for the contract).
 *
 * Readers build on the bounded reader of rpcrdma/nfs/nfs_xdr.h: every get
 * goes through an iw_cursor whose first overrun is sticky, so a decoder reads
 * a whole structure and tests the error where a value decides what follows
 * (a union discriminant, a list continuation) and once at the end.
 */
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "mnt_xdr.h"
#include "nfs_xdr.h"

/* ---------------------------------------------------------------------- */
/* Writers                                                                 */
/* ---------------------------------------------------------------------- */

void xw_u32(struct iw_cursor *c, uint32_t v)
{
	iw_cursor_put_be32(c, v);
}

void xw_u64(struct iw_cursor *c, uint64_t v)
{
	iw_cursor_put_be64(c, v);
}

void xw_bool(struct iw_cursor *c, bool v)
{
	iw_cursor_put_be32(c, v ? 1 : 0);
}

void xw_fixed(struct iw_cursor *c, const void *p, size_t n)
{
	static const uint8_t zero[4];

	iw_cursor_put_bytes(c, p, n);
	iw_cursor_put_bytes(c, zero, xdr_pad(n) - n);
}

void xw_opaque(struct iw_cursor *c, const void *p, size_t n)
{
	if (n > UINT32_MAX) {
		c->err = IW_ENOSPC;
		return;
	}
	xw_u32(c, (uint32_t)n);
	xw_fixed(c, p, n);
}

void xw_fh(struct iw_cursor *c, const struct nfs_fh *fh)
{
	xw_opaque(c, fh->data, fh->len);
}

void xw_diropargs(struct iw_cursor *c, const struct nfs_fh *dir, const char *name)
{
	xw_fh(c, dir);
	xw_opaque(c, name, strlen(name));
}

static void xw_time(struct iw_cursor *c, const struct timespec *t)
{
	xw_u32(c, (uint32_t)t->tv_sec);
	xw_u32(c, (uint32_t)t->tv_nsec);
}

static void xw_set_time(struct iw_cursor *c, uint32_t how, const struct timespec *t)
{
	xw_u32(c, how);
	if (how == NFS3_SET_TO_CLIENT_TIME)
		xw_time(c, t);
}

/* sattr3 (RFC 1813 §2.6): four optional values, two time_how unions */
void xw_sattr(struct iw_cursor *c, const struct nfs_sattr *s)
{
	xw_bool(c, s->set_mode);
	if (s->set_mode)
		xw_u32(c, s->mode & 07777);
	xw_bool(c, s->set_uid);
	if (s->set_uid)
		xw_u32(c, s->uid);
	xw_bool(c, s->set_gid);
	if (s->set_gid)
		xw_u32(c, s->gid);
	xw_bool(c, s->set_size);
	if (s->set_size)
		xw_u64(c, s->size);
	xw_set_time(c, s->atime_how, &s->atime);
	xw_set_time(c, s->mtime_how, &s->mtime);
}

/* RFC 5531 §9 call_body; AUTH_SYS body authsys_parms (Appendix A):
 * stamp, machinename<255>, uid, gid, gids<16>. */
void rpc_put_call(struct iw_cursor *c, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		  const struct nfs_cred *cred, const char *machine)
{
	xw_u32(c, xid);
	xw_u32(c, RPC_MSG_CALL);
	xw_u32(c, 2); /* rpcvers */
	xw_u32(c, prog);
	xw_u32(c, vers);
	xw_u32(c, proc);
	if (cred) {
		size_t mlen = machine ? strnlen(machine, 255) : 0;
		uint32_t ng = cred->ngroups > RPC_AUTH_NGROUPS ? RPC_AUTH_NGROUPS : cred->ngroups;
		uint32_t body = (uint32_t)(4 + 4 + xdr_pad(mlen) + 4 + 4 + 4 + 4 * ng);

		xw_u32(c, RPC_AUTH_SYS);
		xw_u32(c, body);
		xw_u32(c, 0); /* stamp */
		xw_opaque(c, machine ? machine : "", mlen);
		xw_u32(c, cred->uid);
		xw_u32(c, cred->gid);
		xw_u32(c, ng);
		for (uint32_t i = 0; i < ng; i++)
			xw_u32(c, cred->groups[i]);
	} else {
		xw_u32(c, 0); /* AUTH_NONE */
		xw_u32(c, 0);
	}
	xw_u32(c, 0); /* verifier: AUTH_NONE */
	xw_u32(c, 0);
}

/* ---------------------------------------------------------------------- */
/* Readers                                                                 */
/* ---------------------------------------------------------------------- */

int rpc_check_reply(const uint8_t *msg, size_t len, uint32_t xid, size_t *body_off,
		    const char **why)
{
	static const char *const accept[] = {"SUCCESS",	     "PROG_UNAVAIL", "PROG_MISMATCH",
					     "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"};
	struct rpcrdma_rpcinfo ri;

	*why = "malformed RPC reply";
	if (rpcrdma_rpc_parse(msg, len, &ri) || ri.msg_type != RPC_MSG_REPLY || ri.xid != xid)
		return IW_EINVAL;
	if (ri.reply_stat != 0) {
		*why = "call denied (RPC_MISMATCH or AUTH_ERROR)";
		return IW_ENOTSUP;
	}
	if (ri.accept_stat != 0) {
		*why = ri.accept_stat < 6 ? accept[ri.accept_stat] : "accept_stat?";
		return IW_ENOTSUP;
	}
	*why = NULL;
	*body_off = ri.body_off;
	return 0;
}

const uint8_t *xr_opaque(struct iw_cursor *c, uint32_t max, uint32_t *len)
{
	uint32_t n = xdr_u32(c);
	const uint8_t *p;

	*len = 0;
	if (xdr_bad(c))
		return NULL;
	if (n > max) {
		xdr_fail(c);
		return NULL;
	}
	p = iw_cursor_take(c, xdr_pad(n), IW_EAGAIN);
	if (p)
		*len = n;
	return p;
}

void xr_fh(struct iw_cursor *c, struct nfs_fh *fh)
{
	uint32_t n;
	const uint8_t *p = xr_opaque(c, NFS3_FHSIZE, &n);

	fh->len = 0;
	if (!p)
		return;
	if (n == 0) { /* a handle is never empty */
		xdr_fail(c);
		return;
	}
	memcpy(fh->data, p, n);
	fh->len = n;
}

static void xr_time(struct iw_cursor *c, struct timespec *t)
{
	t->tv_sec = (time_t)xdr_u32(c);
	t->tv_nsec = (long)xdr_u32(c);
	if (t->tv_nsec >= 1000000000L) /* not a valid nfstime3: clamp, do not fail */
		t->tv_nsec = 999999999L;
}

void xr_fattr(struct iw_cursor *c, struct nfs_fattr *a)
{
	a->type = xdr_u32(c);
	a->mode = xdr_u32(c);
	a->nlink = xdr_u32(c);
	a->uid = xdr_u32(c);
	a->gid = xdr_u32(c);
	a->size = xdr_u64(c);
	a->used = xdr_u64(c);
	a->rdev_major = xdr_u32(c);
	a->rdev_minor = xdr_u32(c);
	a->fsid = xdr_u64(c);
	a->fileid = xdr_u64(c);
	xr_time(c, &a->atime);
	xr_time(c, &a->mtime);
	xr_time(c, &a->ctime);
	if (!xdr_bad(c) && (a->type < NF3REG || a->type > NF3FIFO))
		xdr_fail(c);
}

bool xr_post_op_attr(struct iw_cursor *c, struct nfs_fattr *a)
{
	if (!xdr_bool(c))
		return false;
	xr_fattr(c, a);
	return !xdr_bad(c);
}

bool xr_wcc(struct iw_cursor *c, struct nfs_fattr *after)
{
	if (xdr_bool(c))
		xdr_skip(c, 8 + 8 + 8); /* wcc_attr: size, mtime, ctime */
	return xr_post_op_attr(c, after);
}

static bool xr_post_op_fh(struct iw_cursor *c, struct nfs_fh *fh)
{
	if (!xdr_bool(c))
		return false;
	xr_fh(c, fh);
	return !xdr_bad(c);
}

static void xr_verf(struct iw_cursor *c, uint8_t *v)
{
	const uint8_t *p = iw_cursor_get_bytes(c, NFS3_VERFSIZE);

	if (p)
		memcpy(v, p, NFS3_VERFSIZE);
}

int nfs3_dec_res(uint32_t proc, struct iw_cursor *c, uint32_t max_count, struct nfs3_res *r)
{
	uint32_t n;
	bool ok;

	memset(r, 0, sizeof(*r));
	r->status = xdr_u32(c);
	if (xdr_bad(c))
		return c->err;
	ok = r->status == NFS3_OK;

	switch (proc) {
	case NFS3_NULL:
		break;
	case NFS3_GETATTR: /* §3.3.1 */
		if (ok) {
			xr_fattr(c, &r->attr);
			r->has_attr = true;
		}
		break;
	case NFS3_SETATTR: /* §3.3.2: wcc_data on both arms */
		r->has_attr = xr_wcc(c, &r->attr);
		break;
	case NFS3_LOOKUP: /* §3.3.3 */
		if (ok) {
			xr_fh(c, &r->fh);
			r->has_fh = !xdr_bad(c);
			r->has_attr = xr_post_op_attr(c, &r->attr);
		}
		r->has_dir_attr = xr_post_op_attr(c, &r->dir_attr);
		break;
	case NFS3_ACCESS: /* §3.3.4 */
		r->has_attr = xr_post_op_attr(c, &r->attr);
		if (ok)
			r->access = xdr_u32(c);
		break;
	case NFS3_READLINK: /* §3.3.5 */
		r->has_attr = xr_post_op_attr(c, &r->attr);
		if (ok) {
			r->data = xr_opaque(c, NFS3_NAME_MAX, &r->count);
			/* a link text holds no NUL */
			if (r->data && memchr(r->data, 0, r->count))
				xdr_fail(c);
		}
		break;
	case NFS3_READ: /* §3.3.6 */
		r->has_attr = xr_post_op_attr(c, &r->attr);
		if (ok) {
			r->count = xdr_u32(c);
			r->eof = xdr_bool(c);
			r->data = xr_opaque(c, max_count, &n);
			if (!xdr_bad(c) && n != r->count)
				xdr_fail(c);
		}
		break;
	case NFS3_WRITE: /* §3.3.7 */
		r->has_attr = xr_wcc(c, &r->attr);
		if (ok) {
			r->count = xdr_u32(c);
			r->committed = xdr_u32(c);
			xr_verf(c, r->verf);
			if (!xdr_bad(c) && (r->committed > NFS3_FILE_SYNC || r->count > max_count))
				xdr_fail(c);
		}
		break;
	case NFS3_CREATE: /* §3.3.8 - §3.3.11: the same result */
	case NFS3_MKDIR:
	case NFS3_SYMLINK:
	case NFS3_MKNOD:
		if (ok) {
			r->has_fh = xr_post_op_fh(c, &r->fh);
			r->has_attr = xr_post_op_attr(c, &r->attr);
		}
		r->has_dir_attr = xr_wcc(c, &r->dir_attr);
		break;
	case NFS3_REMOVE: /* §3.3.12, §3.3.13 */
	case NFS3_RMDIR:
		r->has_dir_attr = xr_wcc(c, &r->dir_attr);
		break;
	case NFS3_RENAME: /* §3.3.14 */
		r->has_dir_attr = xr_wcc(c, &r->dir_attr);
		r->has_dir2_attr = xr_wcc(c, &r->dir2_attr);
		break;
	case NFS3_LINK: /* §3.3.15 */
		r->has_attr = xr_post_op_attr(c, &r->attr);
		r->has_dir_attr = xr_wcc(c, &r->dir_attr);
		break;
	case NFS3_READDIRPLUS: /* §3.3.17: the entries follow */
		r->has_dir_attr = xr_post_op_attr(c, &r->dir_attr);
		if (ok)
			xr_verf(c, r->verf);
		break;
	case NFS3_FSSTAT: /* §3.3.18 */
		r->has_attr = xr_post_op_attr(c, &r->attr);
		if (ok) {
			r->tbytes = xdr_u64(c);
			r->fbytes = xdr_u64(c);
			r->abytes = xdr_u64(c);
			r->tfiles = xdr_u64(c);
			r->ffiles = xdr_u64(c);
			r->afiles = xdr_u64(c);
			r->invarsec = xdr_u32(c);
		}
		break;
	case NFS3_FSINFO: /* §3.3.19 */
		r->has_attr = xr_post_op_attr(c, &r->attr);
		if (ok) {
			r->rtmax = xdr_u32(c);
			r->rtpref = xdr_u32(c);
			r->rtmult = xdr_u32(c);
			r->wtmax = xdr_u32(c);
			r->wtpref = xdr_u32(c);
			r->wtmult = xdr_u32(c);
			r->dtpref = xdr_u32(c);
			r->maxfilesize = xdr_u64(c);
			xdr_skip(c, 8); /* time_delta */
			r->properties = xdr_u32(c);
		}
		break;
	case NFS3_PATHCONF: /* §3.3.20 */
		r->has_attr = xr_post_op_attr(c, &r->attr);
		if (ok) {
			r->linkmax = xdr_u32(c);
			r->name_max = xdr_u32(c);
			r->no_trunc = xdr_bool(c);
			r->chown_restricted = xdr_bool(c);
			r->case_insensitive = xdr_bool(c);
			r->case_preserving = xdr_bool(c);
		}
		break;
	case NFS3_COMMIT: /* §3.3.21 */
		r->has_attr = xr_wcc(c, &r->attr);
		if (ok)
			xr_verf(c, r->verf);
		break;
	default:
		return IW_EINVAL;
	}
	if (xdr_bad(c))
		return c->err;
	return 0;
}

/* entryplus3: fileid, name, cookie, name_attributes, name_handle, nextentry */
int nfs3_dec_dirent(struct iw_cursor *c, struct nfs3_dirent *e, bool *eof)
{
	const uint8_t *name;

	memset(e, 0, sizeof(*e));
	*eof = false;
	if (!xdr_bool(c)) { /* no entry follows: the list ends, then eof */
		*eof = xdr_bool(c);
		return xdr_bad(c) ? c->err : 0;
	}
	e->fileid = xdr_u64(c);
	name = xr_opaque(c, NFS3_NAME_MAX, &e->name_len);
	e->cookie = xdr_u64(c);
	e->has_attr = xr_post_op_attr(c, &e->attr);
	e->has_fh = xr_post_op_fh(c, &e->fh);
	if (xdr_bad(c))
		return c->err;
	/* a name is not empty and holds neither NUL nor '/' */
	if (e->name_len == 0 || memchr(name, 0, e->name_len) || memchr(name, '/', e->name_len))
		return IW_EINVAL;
	e->name = (const char *)name;
	return 1;
}

/* mountres3 (§5.2.1): status; MNT3_OK: fhandle3, auth_flavors<> */
int mnt3_dec_mnt(struct iw_cursor *c, uint32_t *status, struct nfs_fh *fh)
{
	*status = xdr_u32(c);
	if (xdr_bad(c))
		return c->err;
	if (*status == 0) {
		xr_fh(c, fh);
		(void)xdr_array_fixed(c, 64, 4); /* flavors: we send AUTH_SYS anyway */
	}
	return xdr_bad(c) ? c->err : 0;
}

/* ---------------------------------------------------------------------- */
/* Names and errno                                                          */
/* ---------------------------------------------------------------------- */

struct stat_name {
	uint32_t status;
	int err;
	const char *name;
};

/* RFC 1813 §2.6: most values are the errno numbers of the time; the rest map
 * to the nearest errno a local file system would give. */
static const struct stat_name stat_names[] = {
	{0, 0, "NFS3_OK"},
	{1, EPERM, "NFS3ERR_PERM"},
	{2, ENOENT, "NFS3ERR_NOENT"},
	{5, EIO, "NFS3ERR_IO"},
	{6, ENXIO, "NFS3ERR_NXIO"},
	{13, EACCES, "NFS3ERR_ACCES"},
	{17, EEXIST, "NFS3ERR_EXIST"},
	{18, EXDEV, "NFS3ERR_XDEV"},
	{19, ENODEV, "NFS3ERR_NODEV"},
	{20, ENOTDIR, "NFS3ERR_NOTDIR"},
	{21, EISDIR, "NFS3ERR_ISDIR"},
	{22, EINVAL, "NFS3ERR_INVAL"},
	{27, EFBIG, "NFS3ERR_FBIG"},
	{28, ENOSPC, "NFS3ERR_NOSPC"},
	{30, EROFS, "NFS3ERR_ROFS"},
	{31, EMLINK, "NFS3ERR_MLINK"},
	{63, ENAMETOOLONG, "NFS3ERR_NAMETOOLONG"},
	{66, ENOTEMPTY, "NFS3ERR_NOTEMPTY"},
	{69, EDQUOT, "NFS3ERR_DQUOT"},
	{70, ESTALE, "NFS3ERR_STALE"},
	{71, EREMOTE, "NFS3ERR_REMOTE"},
	{NFS3ERR_BADHANDLE, ESTALE, "NFS3ERR_BADHANDLE"},
	{NFS3ERR_NOT_SYNC, EIO, "NFS3ERR_NOT_SYNC"},
	{NFS3ERR_BAD_COOKIE, EINVAL, "NFS3ERR_BAD_COOKIE"},
	{NFS3ERR_NOTSUPP, EOPNOTSUPP, "NFS3ERR_NOTSUPP"},
	{NFS3ERR_TOOSMALL, EINVAL, "NFS3ERR_TOOSMALL"},
	{NFS3ERR_SERVERFAULT, EREMOTEIO, "NFS3ERR_SERVERFAULT"},
	{NFS3ERR_BADTYPE, EINVAL, "NFS3ERR_BADTYPE"},
	{NFS3ERR_JUKEBOX, EAGAIN, "NFS3ERR_JUKEBOX"},
};

static const struct stat_name *stat_find(uint32_t status)
{
	for (size_t i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
		if (stat_names[i].status == status)
			return &stat_names[i];
	return NULL;
}

int nfs3_errno(uint32_t status)
{
	const struct stat_name *s = stat_find(status);

	return s ? s->err : EIO;
}

const char *nfs3_statname(uint32_t status)
{
	const struct stat_name *s = stat_find(status);

	return s ? s->name : "NFS3ERR_?";
}

const char *nfs3_procname(uint32_t proc)
{
	static const char *const names[NFS3_NPROC] = {
		"NULL",	  "GETATTR", "SETATTR",	 "LOOKUP", "ACCESS",  "READLINK",
		"READ",	  "WRITE",   "CREATE",	 "MKDIR",  "SYMLINK", "MKNOD",
		"REMOVE", "RMDIR",   "RENAME",	 "LINK",   "READDIR", "READDIRPLUS",
		"FSSTAT", "FSINFO",  "PATHCONF", "COMMIT",
	};

	return proc < NFS3_NPROC ? names[proc] : "?";
}
