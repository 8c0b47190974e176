/* SPDX-License-Identifier: MIT */
/*
 * mnt_xdr.h - the XDR iwnfs-mount speaks (RFC 4506 encoding): ONC RPC call
 * headers with AUTH_SYS credentials (RFC 5531 §9, Appendix A), the NFS
 * version 3 arguments and results it uses (RFC 1813 §3.3), MOUNT version 3
 * (RFC 1813 §5.2) and the portmapper's GETPORT (RFC 1833 §3.2).
 *
 * Sans-I/O.  Writers put into an iw_cursor (the sticky IW_ENOSPC tells a
 * message that did not fit).  Readers take a cursor over a reply received
 * from the server, i.e. untrusted input: they use the bounded reader of
 * rpcrdma/nfs/nfs_xdr.h (xdr_u32, xdr_bool, xdr_skip...), never allocate,
 * bound every length by the protocol's limit (a file handle is at most 64
 * octets, a name 1024, READ data the count asked for...) and return 0 or a
 * negative iw_err (IW_EAGAIN: the reply ends early; IW_EINVAL: a value that
 * does not decode) - never a partial result that looks valid.  Pointers in
 * the results (READ data, link text, names) point into the reply buffer.
 */
#ifndef IWNFS_MNT_XDR_H
#define IWNFS_MNT_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "iw_cursor.h"

/* Programs, versions, procedures (RFC 1813 §3.2, §5.2; RFC 1833 §3.2) */
#define NFS_PROGRAM	 100003u
#define NFS_V3		 3u
#define MOUNT_PROGRAM	 100005u
#define MOUNT_V3	 3u
#define PMAP_PROGRAM	 100000u
#define PMAP_V2		 2u
#define PMAP_PORT	 111u
#define PMAPPROC_GETPORT 3u
#define MOUNTPROC3_MNT	 1u
#define MOUNTPROC3_UMNT	 3u
#define IPPROTO_TCP_NUM	 6u

enum nfs3_proc {
	NFS3_NULL = 0,
	NFS3_GETATTR = 1,
	NFS3_SETATTR = 2,
	NFS3_LOOKUP = 3,
	NFS3_ACCESS = 4,
	NFS3_READLINK = 5,
	NFS3_READ = 6,
	NFS3_WRITE = 7,
	NFS3_CREATE = 8,
	NFS3_MKDIR = 9,
	NFS3_SYMLINK = 10,
	NFS3_MKNOD = 11,
	NFS3_REMOVE = 12,
	NFS3_RMDIR = 13,
	NFS3_RENAME = 14,
	NFS3_LINK = 15,
	NFS3_READDIR = 16,
	NFS3_READDIRPLUS = 17,
	NFS3_FSSTAT = 18,
	NFS3_FSINFO = 19,
	NFS3_PATHCONF = 20,
	NFS3_COMMIT = 21,
	NFS3_NPROC = 22,
};

/* nfsstat3 values that are not errno numbers (RFC 1813 §2.6) */
enum {
	NFS3_OK = 0,
	NFS3ERR_BADHANDLE = 10001,
	NFS3ERR_NOT_SYNC = 10002,
	NFS3ERR_BAD_COOKIE = 10003,
	NFS3ERR_NOTSUPP = 10004,
	NFS3ERR_TOOSMALL = 10005,
	NFS3ERR_SERVERFAULT = 10006,
	NFS3ERR_BADTYPE = 10007,
	NFS3ERR_JUKEBOX = 10008,
};

/* ftype3 (§2.6) */
enum { NF3REG = 1, NF3DIR, NF3BLK, NF3CHR, NF3LNK, NF3SOCK, NF3FIFO };
/* stable_how (§3.3.7) */
enum { NFS3_UNSTABLE = 0, NFS3_DATA_SYNC = 1, NFS3_FILE_SYNC = 2 };
/* ACCESS bits (§3.3.4) */
enum {
	ACCESS3_READ = 0x01,
	ACCESS3_LOOKUP = 0x02,
	ACCESS3_MODIFY = 0x04,
	ACCESS3_EXTEND = 0x08,
	ACCESS3_DELETE = 0x10,
	ACCESS3_EXECUTE = 0x20,
};
/* createmode3 (§3.3.8) */
enum { NFS3_UNCHECKED = 0, NFS3_GUARDED = 1, NFS3_EXCLUSIVE = 2 };
/* time_how (§2.6 sattr3) */
enum { NFS3_DONT_CHANGE = 0, NFS3_SET_TO_SERVER_TIME = 1, NFS3_SET_TO_CLIENT_TIME = 2 };

#define NFS3_FHSIZE	 64u
#define NFS3_VERFSIZE	 8u
#define NFS3_NAME_MAX	 1024u /* longest name or link text accepted from a server */
#define MNT_PATH_MAX	 1024u /* MNTPATHLEN */
#define RPC_AUTH_MAX	 400u  /* MAX_AUTH_BYTES (RFC 5531 §8.2) */
#define RPC_AUTH_SYS	 1u
#define RPC_AUTH_NGROUPS 16u
/* room for a call header with the largest AUTH_SYS credential */
#define RPC_CALL_HDR_MAX (40u + RPC_AUTH_MAX)

struct nfs_fh {
	uint32_t len;
	uint8_t data[NFS3_FHSIZE];
};

/* AUTH_SYS (RFC 5531 Appendix A): whom the server sees as the caller. */
struct nfs_cred {
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[RPC_AUTH_NGROUPS];
};

/* fattr3 (§2.6) */
struct nfs_fattr {
	uint32_t type, mode, nlink, uid, gid;
	uint64_t size, used;
	uint32_t rdev_major, rdev_minor;
	uint64_t fsid, fileid;
	struct timespec atime, mtime, ctime;
};

/* sattr3 (§2.6): what SETATTR, CREATE, MKDIR, SYMLINK and MKNOD set. */
struct nfs_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	uint32_t mode, uid, gid;
	uint64_t size;
	uint32_t atime_how, mtime_how; /* NFS3_DONT_CHANGE... */
	struct timespec atime, mtime;
};

/* Everything a NFSv3 result may carry; which members a procedure fills is
 * said at nfs3_dec_res. */
struct nfs3_res {
	uint32_t status;
	bool has_attr; /* the object's attributes */
	struct nfs_fattr attr;
	bool has_dir_attr; /* the directory's (RENAME: the source directory's) */
	struct nfs_fattr dir_attr;
	bool has_dir2_attr; /* RENAME: the target directory's */
	struct nfs_fattr dir2_attr;
	bool has_fh; /* LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD */
	struct nfs_fh fh;
	uint32_t access;	     /* ACCESS */
	const uint8_t *data;	     /* READ data, READLINK text: into the reply */
	uint32_t count;		     /* READ, WRITE: octets; READLINK: text length */
	bool eof;		     /* READ, READDIRPLUS */
	uint32_t committed;	     /* WRITE: stable_how */
	uint8_t verf[NFS3_VERFSIZE]; /* WRITE, COMMIT: writeverf3; READDIRPLUS: cookieverf3 */
	/* FSSTAT */
	uint64_t tbytes, fbytes, abytes, tfiles, ffiles, afiles;
	uint32_t invarsec;
	/* FSINFO */
	uint32_t rtmax, rtpref, rtmult, wtmax, wtpref, wtmult, dtpref, properties;
	uint64_t maxfilesize;
	/* PATHCONF */
	uint32_t linkmax, name_max;
	bool no_trunc, chown_restricted, case_insensitive, case_preserving;
};

/* One READDIRPLUS entry (entryplus3, §3.3.17). */
struct nfs3_dirent {
	uint64_t fileid, cookie;
	const char *name; /* into the reply, NOT NUL-terminated */
	uint32_t name_len;
	bool has_attr, has_fh;
	struct nfs_fattr attr;
	struct nfs_fh fh;
};

/* ---- writers ---- */
void xw_u32(struct iw_cursor *c, uint32_t v);
void xw_u64(struct iw_cursor *c, uint64_t v);
void xw_bool(struct iw_cursor *c, bool v);
/* variable-length opaque / string: length, octets, padding */
void xw_opaque(struct iw_cursor *c, const void *p, size_t n);
/* fixed-length opaque: octets and padding */
void xw_fixed(struct iw_cursor *c, const void *p, size_t n);
void xw_fh(struct iw_cursor *c, const struct nfs_fh *fh);
/* diropargs3: the directory's handle and a name */
void xw_diropargs(struct iw_cursor *c, const struct nfs_fh *dir, const char *name);
void xw_sattr(struct iw_cursor *c, const struct nfs_sattr *s);

/*
 * The RPC call header (RFC 5531 §9): xid, CALL, rpcvers 2, prog, vers, proc,
 * credential (AUTH_SYS from `cred` with `machine` as machinename, or
 * AUTH_NONE when cred is NULL), AUTH_NONE verifier.
 */
void rpc_put_call(struct iw_cursor *c, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		  const struct nfs_cred *cred, const char *machine);

/* ---- readers ---- */

/*
 * An accepted, successful reply to xid (rpcrdma_rpc_parse does the header):
 * 0 with *body_off at the results; IW_EINVAL for a malformed header, another
 * xid or a call; a reply that was denied or not successful gives
 * IW_ENOTSUP with *why naming the reason ("PROG_UNAVAIL", "AUTH_ERROR"...).
 */
int rpc_check_reply(const uint8_t *msg, size_t len, uint32_t xid, size_t *body_off,
		    const char **why);

/* A variable-length opaque of at most max octets: a pointer to its octets
 * (into the buffer), *len its length; NULL (and the sticky error) if it does
 * not decode.  A zero-length opaque gives a non-NULL pointer. */
const uint8_t *xr_opaque(struct iw_cursor *c, uint32_t max, uint32_t *len);
void xr_fh(struct iw_cursor *c, struct nfs_fh *fh);
void xr_fattr(struct iw_cursor *c, struct nfs_fattr *a);
/* post_op_attr: whether attributes follow (then in *a) */
bool xr_post_op_attr(struct iw_cursor *c, struct nfs_fattr *a);
/* wcc_data: skips the pre-operation part; the post-operation attributes */
bool xr_wcc(struct iw_cursor *c, struct nfs_fattr *after);

/*
 * The results of NFSv3 procedure `proc` at the cursor into *r (zeroed first).
 * 0 with r->status set (the procedure's other members only when status is
 * NFS3_OK, apart from the attributes every arm has), or a negative iw_err if
 * the results do not decode.  Members per procedure:
 *   GETATTR attr; SETATTR, WRITE, COMMIT attr (wcc after); LOOKUP fh, attr,
 *   dir_attr; ACCESS attr, access; READLINK attr, data, count; READ attr,
 *   count, eof, data (at most max_count octets: the count asked for);
 *   WRITE count, committed, verf; CREATE, MKDIR, SYMLINK, MKNOD fh, attr,
 *   dir_attr; REMOVE, RMDIR dir_attr; RENAME dir_attr, dir2_attr; LINK
 *   attr, dir_attr; READDIRPLUS dir_attr, verf (the entries follow: read
 *   them with nfs3_dec_dirent); FSSTAT, FSINFO, PATHCONF attr and theirs.
 */
int nfs3_dec_res(uint32_t proc, struct iw_cursor *c, uint32_t max_count, struct nfs3_res *r);

/*
 * The next READDIRPLUS entry: 1 with *e filled, 0 at the end of the list
 * (then *eof), a negative iw_err if it does not decode.
 */
int nfs3_dec_dirent(struct iw_cursor *c, struct nfs3_dirent *e, bool *eof);

/* MOUNT3 MNT results (§5.2.1): 0 with status, and on MNT3_OK the handle. */
int mnt3_dec_mnt(struct iw_cursor *c, uint32_t *status, struct nfs_fh *fh);

/* The errno for an nfsstat3 (EIO for values not in RFC 1813). */
int nfs3_errno(uint32_t status);
/* Its name ("NFS3ERR_NOENT"), "NFS3ERR_?" for others. */
const char *nfs3_statname(uint32_t status);
/* The procedure's name ("READDIRPLUS"). */
const char *nfs3_procname(uint32_t proc);

#endif /* IWNFS_MNT_XDR_H */
