/* SPDX-License-Identifier: MIT */
/*
 * mnt_fuse.c - the FUSE low-level operations of iwnfs-mount, each answered
 * asynchronously from the reply callback of its NFS call(s).
 *
 * A handler checks its arguments, copies what it needs out of the FUSE
 * request buffer (names, write data: the buffer is reused for the next
 * request as soon as the handler returns), sends the NFS call and returns.
 * Its state travels in a `struct op` (the request, the nodes it holds, the
 * name, the stage of a multi-call operation); the reply callback answers the
 * request with fuse_reply_* and frees the op.  Operations that depend on
 * data still held by write-behind wait for the node first (mnt_wb_wait):
 * READ, GETATTR and SETATTR for DRAIN (nothing queued or in flight),
 * truncation, flush and fsync for CLEAN (everything committed).
 *
 * Names: RFC 1813 §3.3 for the procedures; NFS3ERR_* become errno values
 * (nfs3_errno); a call the transport fails becomes EIO (so does a soft call
 * past its major timeout).
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mnt_int.h"

struct op {
	fuse_req_t req;
	struct mnt *m;
	struct mnt_node *node; /* held */
	struct mnt_node *dir;  /* held */
	struct nfs_cred cred;
	struct fuse_file_info fi;
	bool create; /* reply with fuse_reply_create */
	bool plus;   /* readdirplus */
	int to_set;  /* setattr */
	struct stat attr;
	uint64_t off;
	size_t size, have;
	uint8_t *buf; /* read assembly */
	uint32_t access;
	uint64_t wacks; /* READ, GETATTR: the node's w_acks when it was sent */
	char name[];	/* a name to LOOKUP after a CREATE without a handle */
};

static struct mnt *mnt_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/*
 * The supplementary groups of the calling thread, from the "Groups:" line of
 * /proc/PID/status (proc(5)), at most `max` of them; the count, 0 when the
 * file cannot be read.  Our own reader rather than fuse_req_getgroups():
 * libfuse 3.14's runs strstr over a buffer it may not have NUL-terminated
 * (AddressSanitizer with strict_string_checks reports it).
 */
static unsigned proc_groups(pid_t pid, uint32_t *out, unsigned max)
{
	char path[64], buf[8192];
	size_t len = 0;
	unsigned n = 0;
	const char *p;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == sizeof(buf) - 1)
			break; /* "Groups:" comes early in the file */
	}
	close(fd);
	buf[len] = '\0';
	p = strstr(buf, "\nGroups:");
	if (!p)
		return 0;
	p += strlen("\nGroups:");
	while (n < max) {
		char *end;
		unsigned long g;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		g = strtoul(p, &end, 10);
		if (end == p || g > UINT32_MAX)
			break;
		out[n++] = (uint32_t)g;
		p = end;
	}
	return n;
}

void mnt_req_cred(struct mnt *m, void *r, struct nfs_cred *cred)
{
	fuse_req_t req = r;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	memset(cred, 0, sizeof(*cred));
	cred->uid = ctx->uid;
	cred->gid = ctx->gid;
	cred->ngroups = ctx->pid ? proc_groups(ctx->pid, cred->groups, RPC_AUTH_NGROUPS) : 0;
}

static struct op *op_new(fuse_req_t req, struct mnt_node *node, struct mnt_node *dir,
			 const char *name)
{
	size_t nl = name ? strlen(name) : 0;
	struct op *op = calloc(1, sizeof(*op) + nl + 1);

	if (!op) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	op->req = req;
	op->m = mnt_of(req);
	op->node = node;
	op->dir = dir;
	if (node)
		mnt_node_hold(node);
	if (dir)
		mnt_node_hold(dir);
	if (nl)
		memcpy(op->name, name, nl);
	mnt_req_cred(op->m, req, &op->cred);
	return op;
}

static void op_free(struct op *op)
{
	if (op->node)
		mnt_node_put(op->m, op->node);
	if (op->dir)
		mnt_node_put(op->m, op->dir);
	free(op->buf);
	free(op);
}

static void op_err(struct op *op, int err)
{
	fuse_reply_err(op->req, err);
	op_free(op);
}

/* err from the call layer, else the NFS status as an errno */
static int res_errno(int err, const struct nfs3_res *r)
{
	return err ? err : r->status ? nfs3_errno(r->status) : 0;
}

static void op_send(struct op *op, struct iw_cursor *c, uint32_t proc, uint32_t max,
		    mnt_reply_fn cb)
{
	int rc = mnt_call_send(op->m, c, proc, max, cb, op);

	if (rc)
		op_err(op, rc);
}

/* A call whose arguments are the node's file handle alone (READLINK, FSSTAT). */
static void fh_call(fuse_req_t req, fuse_ino_t ino, uint32_t proc, mnt_reply_fn cb)
{
	struct mnt *m = mnt_of(req);
	struct op *op = op_new(req, mnt_node_of(m, ino), NULL, NULL);
	struct iw_cursor cur, *c;

	if (!op)
		return;
	c = mnt_call_start(m, &cur, proc, &op->cred);
	xw_fh(c, &op->node->fh);
	op_send(op, c, proc, 0, cb);
}

static void dir_attr(struct mnt *m, struct mnt_node *dir, bool has, const struct nfs_fattr *a)
{
	if (!dir)
		return;
	if (has)
		mnt_attr_set(m, dir, a);
	else
		mnt_attr_drop(dir);
}

static bool name_ok(struct mnt *m, fuse_req_t req, const char *name)
{
	if (strlen(name) > m->name_max) {
		fuse_reply_err(req, ENAMETOOLONG);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* Open files (fi->fh)                                                     */
/* ---------------------------------------------------------------------- */

static struct mnt_file *file_new(struct mnt *m)
{
	struct mnt_file *f = calloc(1, sizeof(*f));

	if (f)
		iw_list_add_tail(&m->files, &f->link);
	return f;
}

static void file_free(struct mnt_file *f)
{
	if (!f)
		return;
	iw_list_del(&f->link);
	free(f->rd_buf);
	free(f);
}

void mnt_files_fini(struct mnt *m)
{
	while (m->files.next && !iw_list_empty(&m->files))
		file_free(iw_container_of(m->files.next, struct mnt_file, link));
}

/* ---------------------------------------------------------------------- */
/* Attributes and entries                                                  */
/* ---------------------------------------------------------------------- */

static void reply_attr(struct op *op)
{
	struct stat st;

	mnt_attr_stat(op->m, op->node, &st);
	fuse_reply_attr(op->req, &st, mnt_attr_timeout(op->m, op->node));
	op_free(op);
}

static void reply_entry(struct op *op, struct mnt_node *n)
{
	struct fuse_entry_param e;
	int rc;

	memset(&e, 0, sizeof(e));
	e.ino = mnt_node_ino(op->m, n);
	mnt_attr_stat(op->m, n, &e.attr);
	e.attr_timeout = mnt_attr_timeout(op->m, n);
	e.entry_timeout = op->dir ? mnt_attr_timeout(op->m, op->dir) : e.attr_timeout;
	if (op->create) {
		struct mnt_file *f = file_new(op->m);

		if (!f) {
			op_err(op, ENOMEM);
			return;
		}
		f->cred = op->cred;
		op->fi.fh = (uint64_t)(uintptr_t)f;
		n->nlookup++;
		rc = fuse_reply_create(op->req, &e, &op->fi);
		if (rc)
			file_free(f);
	} else {
		n->nlookup++;
		rc = fuse_reply_entry(op->req, &e);
	}
	if (rc) /* the request was interrupted: the kernel does not hold it */
		n->nlookup--;
	op_free(op);
}

static void on_entry_getattr(struct mnt *m, void *arg, int err, struct nfs3_res *r,
			     struct iw_cursor *c, const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	mnt_attr_set(m, op->node, &r->attr);
	reply_entry(op, op->node);
}

/* A handle for the entry: answer with it, fetching attributes if needed. */
static void got_fh(struct op *op, const struct nfs_fh *fh, bool has_attr, const struct nfs_fattr *a)
{
	struct mnt_node *n = mnt_node_get(op->m, fh, has_attr ? a : NULL);
	struct iw_cursor cur, *c;

	if (!n) {
		op_err(op, ENOMEM);
		return;
	}
	if (has_attr) {
		reply_entry(op, n);
		return;
	}
	if (op->node)
		mnt_node_put(op->m, op->node);
	op->node = n;
	mnt_node_hold(n);
	c = mnt_call_start(op->m, &cur, NFS3_GETATTR, &op->cred);
	xw_fh(c, &n->fh);
	op_send(op, c, NFS3_GETATTR, 0, on_entry_getattr);
}

static void on_lookup(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		      const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	if (r)
		dir_attr(m, op->dir, r->has_dir_attr, &r->dir_attr);
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	got_fh(op, &r->fh, r->has_attr, &r->attr);
}

static void send_lookup(struct op *op)
{
	struct iw_cursor cur, *c = mnt_call_start(op->m, &cur, NFS3_LOOKUP, &op->cred);

	xw_diropargs(c, &op->dir->fh, op->name);
	op_send(op, c, NFS3_LOOKUP, 0, on_lookup);
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt *m = mnt_of(req);
	struct op *op;

	if (!name_ok(m, req, name))
		return;
	op = op_new(req, NULL, mnt_node_of(m, parent), name);
	if (op)
		send_lookup(op);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct mnt *m = mnt_of(req);

	mnt_node_forget(m, mnt_node_of(m, ino), nlookup);
	fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct mnt *m = mnt_of(req);

	for (size_t i = 0; i < count; i++)
		mnt_node_forget(m, mnt_node_of(m, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void getattr_go(struct mnt_node *n, void *arg);
static void wait_or_fail(struct op *op, enum mnt_wait cond, mnt_wait_fn fn);

static void on_getattr(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		       const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	if (op->node->w_acks != op->wacks) {
		/* a write was acknowledged while this GETATTR was out: its
		 * attributes may predate it (mnt_node.w_acks), ask again */
		wait_or_fail(op, MNT_WAIT_DRAIN, getattr_go);
		return;
	}
	mnt_attr_set(m, op->node, &r->attr);
	reply_attr(op);
}

static void getattr_go(struct mnt_node *n, void *arg)
{
	struct op *op = arg;
	struct iw_cursor cur, *c;

	if (mnt_attr_valid(op->m, n)) {
		reply_attr(op);
		return;
	}
	c = mnt_call_start(op->m, &cur, NFS3_GETATTR, &op->cred);
	xw_fh(c, &n->fh);
	op->wacks = n->w_acks;
	op_send(op, c, NFS3_GETATTR, 0, on_getattr);
}

static void wait_or_fail(struct op *op, enum mnt_wait cond, mnt_wait_fn fn)
{
	int rc = mnt_wb_wait(op->m, op->node, cond, fn, op);

	if (rc)
		op_err(op, rc);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = mnt_of(req);
	struct op *op = op_new(req, mnt_node_of(m, ino), NULL, NULL);

	if (op)
		wait_or_fail(op, MNT_WAIT_DRAIN, getattr_go);
}

static void on_setattr(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		       const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	if (r && r->has_attr)
		mnt_attr_set(m, op->node, &r->attr);
	else
		mnt_attr_drop(op->node);
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	if (r->has_attr) {
		reply_attr(op);
		return;
	}
	getattr_go(op->node, op);
}

static void setattr_go(struct mnt_node *n, void *arg)
{
	struct op *op = arg;
	struct nfs_sattr s;
	struct iw_cursor cur, *c;
	int to = op->to_set;

	memset(&s, 0, sizeof(s));
	s.set_mode = to & FUSE_SET_ATTR_MODE;
	s.mode = op->attr.st_mode;
	s.set_uid = to & FUSE_SET_ATTR_UID;
	s.uid = op->attr.st_uid;
	s.set_gid = to & FUSE_SET_ATTR_GID;
	s.gid = op->attr.st_gid;
	s.set_size = to & FUSE_SET_ATTR_SIZE;
	s.size = (uint64_t)op->attr.st_size;
	s.atime_how = to & FUSE_SET_ATTR_ATIME_NOW ? NFS3_SET_TO_SERVER_TIME
		      : to & FUSE_SET_ATTR_ATIME   ? NFS3_SET_TO_CLIENT_TIME
						   : NFS3_DONT_CHANGE;
	s.atime = op->attr.st_atim;
	s.mtime_how = to & FUSE_SET_ATTR_MTIME_NOW ? NFS3_SET_TO_SERVER_TIME
		      : to & FUSE_SET_ATTR_MTIME   ? NFS3_SET_TO_CLIENT_TIME
						   : NFS3_DONT_CHANGE;
	s.mtime = op->attr.st_mtim;
	if (s.set_size && n->werr) { /* a lost write must not be hidden by a truncation */
		int e = n->werr;

		n->werr = 0;
		{
			op_err(op, e);
			return;
		}
	}
	c = mnt_call_start(op->m, &cur, NFS3_SETATTR, &op->cred);
	xw_fh(c, &n->fh);
	xw_sattr(c, &s);
	xw_bool(c, false); /* sattrguard3: no ctime check */
	op_send(op, c, NFS3_SETATTR, 0, on_setattr);
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct mnt *m = mnt_of(req);
	struct op *op;

	if (to_set & FUSE_SET_ATTR_SIZE && attr->st_size < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	op = op_new(req, mnt_node_of(m, ino), NULL, NULL);
	if (!op)
		return;
	op->attr = *attr;
	op->to_set = to_set;
	/* data written before a truncation must reach the server first */
	wait_or_fail(op, to_set & FUSE_SET_ATTR_SIZE ? MNT_WAIT_CLEAN : MNT_WAIT_DRAIN, setattr_go);
}

/* ---------------------------------------------------------------------- */
/* Namespace                                                               */
/* ---------------------------------------------------------------------- */

static void on_readlink(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
			const uint8_t *reply, size_t len)
{
	struct op *op = arg;
	char *text;

	if (r && r->has_attr)
		mnt_attr_set(m, op->node, &r->attr);
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	text = malloc(r->count + 1);
	if (!text) {
		op_err(op, ENOMEM);
		return;
	}
	memcpy(text, r->data, r->count);
	text[r->count] = '\0';
	fuse_reply_readlink(op->req, text);
	free(text);
	op_free(op);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	fh_call(req, ino, NFS3_READLINK, on_readlink);
}

/* CREATE, MKDIR, SYMLINK, MKNOD: the same result (RFC 1813 §3.3.8-11) */
static void on_made(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		    const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	if (r)
		dir_attr(m, op->dir, r->has_dir_attr, &r->dir_attr);
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	if (r->has_fh)
		got_fh(op, &r->fh, r->has_attr, &r->attr);
	else
		send_lookup(op); /* the server did not say: ask by name */
}

/* A new op for a call that makes `name` in `parent` (NULL: answered). */
static struct op *make_op(fuse_req_t req, fuse_ino_t parent, const char *name,
			  struct iw_cursor *cur, uint32_t proc, struct iw_cursor **c)
{
	struct mnt *m = mnt_of(req);
	struct op *op;

	if (!name_ok(m, req, name))
		return NULL;
	op = op_new(req, NULL, mnt_node_of(m, parent), name);
	if (!op)
		return NULL;
	*c = mnt_call_start(m, cur, proc, &op->cred);
	xw_diropargs(*c, &op->dir->fh, name);
	return op;
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct nfs_sattr s = {.set_mode = true, .mode = mode};
	struct iw_cursor cur, *c;
	struct op *op = make_op(req, parent, name, &cur, NFS3_MKDIR, &c);

	if (!op)
		return;
	xw_sattr(c, &s);
	op_send(op, c, NFS3_MKDIR, 0, on_made);
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct nfs_sattr s = {0};
	struct iw_cursor cur, *c;
	struct op *op;

	if (strlen(link) > NFS3_NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	op = make_op(req, parent, name, &cur, NFS3_SYMLINK, &c);
	if (!op)
		return;
	xw_sattr(c, &s);
	xw_opaque(c, link, strlen(link));
	op_send(op, c, NFS3_SYMLINK, 0, on_made);
}

static void create_common(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			  struct fuse_file_info *fi)
{
	struct nfs_sattr s = {.set_mode = true, .mode = mode};
	struct iw_cursor cur, *c;
	struct op *op = make_op(req, parent, name, &cur, NFS3_CREATE, &c);

	if (!op)
		return;
	if (fi) {
		op->create = true;
		op->fi = *fi;
		if (fi->flags & O_TRUNC) { /* UNCHECKED on an existing file truncates it */
			s.set_size = true;
			s.size = 0;
		}
	}
	xw_u32(c, fi && fi->flags & O_EXCL ? NFS3_GUARDED : NFS3_UNCHECKED);
	xw_sattr(c, &s);
	op_send(op, c, NFS3_CREATE, 0, on_made);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct nfs_sattr s = {.set_mode = true, .mode = mode};
	struct iw_cursor cur, *c;
	struct op *op;
	uint32_t type;

	switch (mode & S_IFMT) {
	case S_IFREG:
		create_common(req, parent, name, mode, NULL);
		return;
	case S_IFCHR:
		type = NF3CHR;
		break;
	case S_IFBLK:
		type = NF3BLK;
		break;
	case S_IFSOCK:
		type = NF3SOCK;
		break;
	case S_IFIFO:
		type = NF3FIFO;
		break;
	default:
		fuse_reply_err(req, EINVAL);
		return;
	}
	op = make_op(req, parent, name, &cur, NFS3_MKNOD, &c);
	if (!op)
		return;
	/* mknoddata3 (§3.3.11): the type, then devicedata3 or sattr3 */
	xw_u32(c, type);
	xw_sattr(c, &s);
	if (type == NF3CHR || type == NF3BLK) {
		xw_u32(c, major(rdev));
		xw_u32(c, minor(rdev));
	}
	op_send(op, c, NFS3_MKNOD, 0, on_made);
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	create_common(req, parent, name, mode, fi);
}

static void on_removed(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		       const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	m->epoch++; /* a link count changed somewhere */
	if (r) {
		dir_attr(m, op->dir, r->has_dir_attr, &r->dir_attr);
		dir_attr(m, op->node, r->has_dir2_attr, &r->dir2_attr);
	}
	op_err(op, res_errno(err, r));
}

static void remove_common(fuse_req_t req, fuse_ino_t parent, const char *name, uint32_t proc)
{
	struct iw_cursor cur, *c;
	struct op *op = make_op(req, parent, name, &cur, proc, &c);

	if (op)
		op_send(op, c, proc, 0, on_removed);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_common(req, parent, name, NFS3_REMOVE);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_common(req, parent, name, NFS3_RMDIR);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct mnt *m = mnt_of(req);
	struct iw_cursor cur, *c;
	struct op *op;

	if (flags) { /* RENAME_NOREPLACE / _EXCHANGE: NFSv3 has neither */
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!name_ok(m, req, newname))
		return;
	op = make_op(req, parent, name, &cur, NFS3_RENAME, &c);
	if (!op)
		return;
	/* the target directory rides in op->node for its attributes */
	op->node = mnt_node_of(m, newparent);
	mnt_node_hold(op->node);
	xw_diropargs(c, &op->node->fh, newname);
	op_send(op, c, NFS3_RENAME, 0, on_removed);
}

static void on_link(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		    const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	m->epoch++;
	if (r) {
		dir_attr(m, op->dir, r->has_dir_attr, &r->dir_attr);
		if (r->has_attr)
			mnt_attr_set(m, op->node, &r->attr);
	}
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	got_fh(op, &op->node->fh, r->has_attr, &r->attr);
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct mnt *m = mnt_of(req);
	struct iw_cursor cur, *c;
	struct op *op;

	if (!name_ok(m, req, newname))
		return;
	op = op_new(req, mnt_node_of(m, ino), mnt_node_of(m, newparent), newname);
	if (!op)
		return;
	c = mnt_call_start(m, &cur, NFS3_LINK, &op->cred);
	xw_fh(c, &op->node->fh);
	xw_diropargs(c, &op->dir->fh, newname);
	op_send(op, c, NFS3_LINK, 0, on_link);
}

/* ---------------------------------------------------------------------- */
/* Files                                                                   */
/* ---------------------------------------------------------------------- */

static uint32_t access_bits(int mask, bool dir)
{
	uint32_t a = 0;

	if (mask & R_OK)
		a |= ACCESS3_READ;
	if (mask & W_OK)
		a |= ACCESS3_MODIFY | ACCESS3_EXTEND | (dir ? ACCESS3_DELETE : 0);
	if (mask & X_OK)
		a |= dir ? ACCESS3_LOOKUP : ACCESS3_EXECUTE;
	return a;
}

static void on_access(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		      const uint8_t *reply, size_t len)
{
	struct op *op = arg;
	struct mnt_file *f;

	if (r && r->has_attr)
		mnt_attr_set(m, op->node, &r->attr);
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	if ((r->access & op->access) != op->access) {
		op_err(op, EACCES);
		return;
	}
	if (!op->create) /* access(2) */
	{
		op_err(op, 0);
		return;
	}
	f = file_new(op->m); /* open(2) */
	if (!f) {
		op_err(op, ENOMEM);
		return;
	}
	f->cred = op->cred;
	op->fi.fh = (uint64_t)(uintptr_t)f;
	if (fuse_reply_open(op->req, &op->fi))
		file_free(f);
	op_free(op);
}

static void send_access(struct op *op, int mask)
{
	struct iw_cursor cur, *c = mnt_call_start(op->m, &cur, NFS3_ACCESS, &op->cred);

	op->access = access_bits(mask, op->node->has_attr && op->node->attr.type == NF3DIR);
	xw_fh(c, &op->node->fh);
	xw_u32(c, op->access);
	op_send(op, c, NFS3_ACCESS, 0, on_access);
}

static void ll_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct mnt *m = mnt_of(req);
	struct op *op = op_new(req, mnt_node_of(m, ino), NULL, NULL);

	if (op)
		send_access(op, mask);
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = mnt_of(req);
	struct op *op;
	int acc = fi->flags & O_ACCMODE;
	struct mnt_file *f;

	if (m->o.cto) { /* close-to-open: fresh attributes and a permission check */
		op = op_new(req, mnt_node_of(m, ino), NULL, NULL);
		if (!op)
			return;
		op->create = true;
		op->fi = *fi;
		send_access(op, acc == O_RDONLY ? R_OK : acc == O_WRONLY ? W_OK : R_OK | W_OK);
		return;
	}
	f = file_new(m);
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	mnt_req_cred(m, req, &f->cred);
	fi->fh = (uint64_t)(uintptr_t)f;
	if (fuse_reply_open(req, fi))
		file_free(f);
}

static struct mnt_file *file_of(struct fuse_file_info *fi)
{
	return (struct mnt_file *)(uintptr_t)fi->fh;
}

static void send_read(struct op *op);

static void on_read(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		    const uint8_t *reply, size_t len)
{
	struct op *op = arg;

	/* (not if a write was acknowledged meanwhile: see mnt_node.w_acks) */
	if (r && r->has_attr && !mnt_wb_busy(op->node) && op->node->w_acks == op->wacks)
		mnt_attr_set(m, op->node, &r->attr);
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	m->st.bytes_read += r->count;
	if (!op->buf && (r->count == op->size || r->eof || r->count == 0)) {
		fuse_reply_buf(op->req, (const char *)r->data, r->count);
		{
			op_free(op);
			return;
		}
	}
	if (!op->buf && !(op->buf = malloc(op->size))) {
		op_err(op, ENOMEM);
		return;
	}
	memcpy(op->buf + op->have, r->data, r->count); /* count <= size - have: decoder bound */
	op->have += r->count;
	if (op->have < op->size && !r->eof && r->count) {
		send_read(op); /* a short read before the end: the rest */
		return;
	}
	fuse_reply_buf(op->req, (const char *)op->buf, op->have);
	op_free(op);
}

static void send_read(struct op *op)
{
	struct iw_cursor cur, *c = mnt_call_start(op->m, &cur, NFS3_READ, &op->cred);
	uint32_t count = (uint32_t)(op->size - op->have);

	xw_fh(c, &op->node->fh);
	xw_u64(c, op->off + op->have);
	xw_u32(c, count);
	op->wacks = op->node->w_acks;
	op_send(op, c, NFS3_READ, count, on_read);
}

static void read_go(struct mnt_node *n, void *arg)
{
	send_read(arg);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct mnt *m = mnt_of(req);
	struct op *op;

	if (size == 0) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	op = op_new(req, mnt_node_of(m, ino), NULL, NULL);
	if (!op)
		return;
	op->cred = file_of(fi)->cred;
	op->off = (uint64_t)off;
	op->size = size > m->rsize ? m->rsize : size;
	wait_or_fail(op, MNT_WAIT_DRAIN, read_go);
}

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct mnt *m = mnt_of(req);
	struct mnt_node *n = mnt_node_of(m, ino);
	size_t done = 0;
	int rc = 0;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	while (done < size && !rc) {
		size_t part = size - done > m->wsize ? m->wsize : size - done;

		rc = mnt_wb_write(m, n, &file_of(fi)->cred, (uint64_t)off + done, buf + done, part);
		if (!rc)
			done += part;
	}
	if (rc && !done) {
		if (n->werr == rc)
			n->werr = 0; /* reported here */
		fuse_reply_err(req, rc);
	} else if (mnt_wb_room(m)) {
		fuse_reply_write(req, done);
	} else {
		mnt_wb_hold(m, req, done); /* answered when writes complete */
	}
}

void mnt_fuse_release_held(struct mnt *m)
{
	size_t size;
	void *req;

	while ((req = mnt_wb_unhold(m, &size)))
		fuse_reply_write(req, size);
}

static void flush_done(struct mnt_node *n, void *arg)
{
	struct op *op = arg;
	int e = n->werr;

	n->werr = 0;
	op_err(op, e);
}

static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = mnt_of(req);
	struct mnt_node *n = mnt_node_of(m, ino);
	struct op *op;

	if (!mnt_wb_busy(n) && !n->w_unstable && !n->commit_busy) {
		int e = n->werr;

		n->werr = 0;
		fuse_reply_err(req, e);
		return;
	}
	op = op_new(req, n, NULL, NULL);
	if (op)
		wait_or_fail(op, MNT_WAIT_CLEAN, flush_done);
}

static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	ll_flush(req, ino, fi);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	file_free(file_of(fi));
	fuse_reply_err(req, 0);
}

/* ---------------------------------------------------------------------- */
/* Directories                                                             */
/* ---------------------------------------------------------------------- */

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt_file *f = file_new(mnt_of(req));

	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	mnt_req_cred(mnt_of(req), req, &f->cred);
	fi->fh = (uint64_t)(uintptr_t)f;
	if (fuse_reply_open(req, fi))
		file_free(f);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	file_free(file_of(fi));
	fuse_reply_err(req, 0);
}

static void send_readdir(struct op *op, struct mnt_file *f);

/* One directory entry into out[*used..size); false when it does not fit. */
static bool add_entry(struct op *op, char *out, size_t *used, const struct nfs3_dirent *e)
{
	struct mnt *m = op->m;
	struct fuse_entry_param p;
	char name[NFS3_NAME_MAX + 1];
	size_t need;
	bool dots;

	memcpy(name, e->name, e->name_len);
	name[e->name_len] = '\0';
	need = op->plus ? fuse_add_direntry_plus(op->req, NULL, 0, name, NULL, 0)
			: fuse_add_direntry(op->req, NULL, 0, name, NULL, 0);
	if (*used + need > op->size)
		return false;
	memset(&p, 0, sizeof(p));
	p.attr.st_ino = e->fileid;
	dots = !strcmp(name, ".") || !strcmp(name, "..");
	if (e->has_attr)
		p.attr.st_mode = e->attr.type == NF3DIR ? S_IFDIR : 0;
	if (op->plus && !dots && e->has_fh) {
		struct mnt_node *n = mnt_node_get(m, &e->fh, e->has_attr ? &e->attr : NULL);

		if (n && n->has_attr) {
			p.ino = mnt_node_ino(m, n);
			mnt_attr_stat(m, n, &p.attr);
			p.attr_timeout = mnt_attr_timeout(m, n);
			p.entry_timeout = mnt_attr_timeout(m, op->node);
			n->nlookup++; /* readdirplus counts as a lookup (not . and ..) */
		}
	} else if (e->has_attr) {
		static const mode_t types[] = {0,	S_IFREG, S_IFDIR,  S_IFBLK,
					       S_IFCHR, S_IFLNK, S_IFSOCK, S_IFIFO};
		p.attr.st_mode = types[e->attr.type];
	}
	if (op->plus)
		fuse_add_direntry_plus(op->req, out + *used, op->size - *used, name, &p,
				       (off_t)e->cookie);
	else
		fuse_add_direntry(op->req, out + *used, op->size - *used, name, &p.attr,
				  (off_t)e->cookie);
	*used += need;
	return true;
}

/* Answer from the saved reply; false: it is used up, ask the server. */
static bool readdir_fill(struct op *op, struct mnt_file *f)
{
	struct iw_cursor c;
	struct nfs3_dirent e;
	size_t used = 0, pos;
	char *out = malloc(op->size);
	bool eof;
	int rc;

	if (!out) {
		op_err(op, ENOMEM);
		return true;
	}
	iw_cursor_init(&c, f->rd_buf, f->rd_len);
	c.off = f->rd_off;
	for (;;) {
		pos = c.off;
		rc = nfs3_dec_dirent(&c, &e, &eof);
		if (rc < 0) {
			mnt_log("READDIRPLUS: bad entry from the server");
			free(f->rd_buf);
			f->rd_buf = NULL;
			free(out);
			if (used)
				break;
			op_err(op, EIO);
			return true;
		}
		if (rc == 0) { /* the end of this reply */
			free(f->rd_buf);
			f->rd_buf = NULL;
			f->rd_eof = eof;
			if (!eof && used == 0) {
				free(out);
				return false;
			}
			break;
		}
		if (!add_entry(op, out, &used, &e)) {
			f->rd_off = pos;
			break;
		}
		f->rd_off = c.off;
		f->rd_cookie = e.cookie;
	}
	fuse_reply_buf(op->req, out, used);
	free(out);
	op_free(op);
	return true;
}

static void on_readdir(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		       const uint8_t *reply, size_t len)
{
	struct op *op = arg;
	struct mnt_file *f = file_of(&op->fi);
	size_t n;

	if (r)
		dir_attr(m, op->node, r->has_dir_attr, &r->dir_attr);
	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	n = c->len - c->off;
	free(f->rd_buf);
	f->rd_buf = malloc(n ? n : 1);
	if (!f->rd_buf) {
		op_err(op, ENOMEM);
		return;
	}
	memcpy(f->rd_buf, c->p + c->off, n);
	f->rd_len = n;
	f->rd_off = 0;
	f->rd_cookie = op->off;
	f->rd_eof = false;
	memcpy(f->verf, r->verf, NFS3_VERFSIZE);
	if (readdir_fill(op, f))
		return;
	if (f->rd_cookie == op->off) { /* no entry and no eof: would never end */
		mnt_log("READDIRPLUS: the server returned no entry before the end");
		{
			op_err(op, EIO);
			return;
		}
	}
	op->off = f->rd_cookie;
	send_readdir(op, f);
}

static void send_readdir(struct op *op, struct mnt_file *f)
{
	struct iw_cursor cur, *c = mnt_call_start(op->m, &cur, NFS3_READDIRPLUS, &op->cred);
	static const uint8_t zero[NFS3_VERFSIZE];

	xw_fh(c, &op->node->fh);
	xw_u64(c, op->off);
	xw_fixed(c, op->off ? f->verf : zero, NFS3_VERFSIZE);
	xw_u32(c, MNT_READDIR_MAXCOUNT / 2); /* dircount */
	xw_u32(c, MNT_READDIR_MAXCOUNT);     /* maxcount */
	op_send(op, c, NFS3_READDIRPLUS, 0, on_readdir);
}

static void readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi, bool plus)
{
	struct mnt *m = mnt_of(req);
	struct mnt_file *f = file_of(fi);
	struct op *op;

	if (!f->rd_buf && f->rd_eof && (uint64_t)off == f->rd_cookie && off != 0) {
		fuse_reply_buf(req, NULL, 0); /* past the end */
		return;
	}
	op = op_new(req, mnt_node_of(m, ino), NULL, NULL);
	if (!op)
		return;
	op->fi = *fi;
	op->plus = plus;
	op->size = size;
	op->off = (uint64_t)off;
	if (f->rd_buf && (uint64_t)off == f->rd_cookie && readdir_fill(op, f))
		return;
	send_readdir(op, f);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	readdir_common(req, ino, size, off, fi, false);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	readdir_common(req, ino, size, off, fi, true);
}

/* ---------------------------------------------------------------------- */
/* File system                                                             */
/* ---------------------------------------------------------------------- */

static void on_fsstat(struct mnt *m, void *arg, int err, struct nfs3_res *r, struct iw_cursor *c,
		      const uint8_t *reply, size_t len)
{
	struct op *op = arg;
	struct statvfs sv;
	const unsigned long bs = 4096;

	if ((err = res_errno(err, r))) {
		op_err(op, err);
		return;
	}
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = bs;
	sv.f_frsize = bs;
	sv.f_blocks = r->tbytes / bs;
	sv.f_bfree = r->fbytes / bs;
	sv.f_bavail = r->abytes / bs;
	sv.f_files = r->tfiles;
	sv.f_ffree = r->ffiles;
	sv.f_favail = r->afiles;
	sv.f_namemax = m->name_max;
	fuse_reply_statfs(op->req, &sv);
	op_free(op);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	fh_call(req, ino, NFS3_FSSTAT, on_fsstat);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
	struct mnt *m = userdata;

	conn->max_write = m->wsize;
	conn->max_read = m->rsize;
	if (conn->max_readahead > m->rsize * 4)
		conn->max_readahead = m->rsize * 4;
	conn->max_background = m->o.credits;
	conn->congestion_threshold = m->o.credits * 3 / 4;
	conn->time_gran = 1;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE; /* write-behind is ours */
	/* O_TRUNC as a SETATTR of the size from the kernel, not inside open */
	conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
	mnt_debug(m, "FUSE: protocol %u.%u, max_write %u, max_read %u, readahead %u",
		  conn->proto_major, conn->proto_minor, conn->max_write, conn->max_read,
		  conn->max_readahead);
}

const struct fuse_lowlevel_ops mnt_fuse_ops = {
	.init = ll_init,
	.lookup = ll_lookup,
	.forget = ll_forget,
	.forget_multi = ll_forget_multi,
	.getattr = ll_getattr,
	.setattr = ll_setattr,
	.readlink = ll_readlink,
	.mknod = ll_mknod,
	.mkdir = ll_mkdir,
	.unlink = ll_unlink,
	.rmdir = ll_rmdir,
	.symlink = ll_symlink,
	.rename = ll_rename,
	.link = ll_link,
	.open = ll_open,
	.read = ll_read,
	.write = ll_write,
	.flush = ll_flush,
	.release = ll_release,
	.fsync = ll_fsync,
	.opendir = ll_opendir,
	.readdir = ll_readdir,
	.readdirplus = ll_readdirplus,
	.releasedir = ll_releasedir,
	.statfs = ll_statfs,
	.access = ll_access,
	.create = ll_create,
};
