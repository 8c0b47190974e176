/* SPDX-License-Identifier: MIT */
/*
 * iwd_ulp.c - what a Send carries on an NFS/RDMA connection: the RPC-over-RDMA
 * version 1 transport header with its chunk lists (RFC 8166 §4), the ONC RPC
 * message after it (RFC 5531 §9) and the name of the procedure (NFS, MOUNT,
 * NFSACL, NLM, NSM, portmap/rpcbind, the NFSv4 callback program).
 *
 * Theory of operation.  rpcrdma_hdr_decode() reads the transport header
 * ("check, then parse", no allocation); for RDMA_MSG the RPC message starts
 * right after it.  The RPC header is read here with a bounded cursor
 * (common/iw_cursor.h), farther than rpcrdma_rpc_parse() goes, because a
 * view wants the reject and auth status and the RPCSEC_GSS service too:
 *
 *   CALL   xid, 0, rpcvers 2, prog, vers, proc, cred, verf, arguments
 *   REPLY  xid, 1, MSG_ACCEPTED: verf, accept_stat [, low, high], results
 *                  MSG_DENIED:   RPC_MISMATCH low, high | AUTH_ERROR auth_stat
 *
 * A call is named from its header alone, except an NFSv4 COMPOUND, whose
 * operations are listed by rpcrdma/nfs (nfs_v4_call_ops: the walker that
 * knows how long each operation's arguments are); arguments that the
 * requester moved into Read chunks (RFC 8166 §3.4.5) are absent from the
 * Send, and the walk is told so from the Read list positions.
 *
 * A reply names nothing: it carries only the XID.  So every call is
 * remembered, keyed by (connection, direction, XID), in a table of
 * ULP_CALLS entries shared by all connections: a hash for the lookup, a ring
 * for the age, the oldest overwritten when full.  The reply in the other
 * direction takes the entry (and its name) and reads the program's status
 * word: nfsstat3 first in every NFSv3 result, nfsstat4 then the result count
 * of a COMPOUND4res (the failing operation is the last one executed, RFC 7530
 * §15.2), mountstat3, nlm4_stats after the cookie.  An RDMA_NOMSG or
 * RDMA_ERROR answering a call takes the name the same way.
 *
 * Everything here reads captured octets: every read is bounded, unknown
 * numbers are printed as numbers, and nothing is sized by the capture.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "nfs_v4.h" /* rpcrdma/nfs private header (rpcrdma_nfs_inc) */
#include "iw_cursor.h"
#include "iwd.h"

#define ULP_CALLS	   4096u /* calls remembered for their replies (a power of 2) */
#define ULP_HASH	   4096u /* hash buckets (a power of 2) */

#define RPC_VERSION	   2
#define RPC_MAX_AUTH_BYTES 400 /* RFC 5531 §8.2 */

enum { MSG_ACCEPTED = 0, MSG_DENIED = 1 };
enum { AUTH_NONE = 0, AUTH_SYS = 1, AUTH_SHORT = 2, AUTH_DH = 3, RPCSEC_GSS = 6, AUTH_TLS = 7 };
enum { RPCSEC_GSS_DATA = 0 };					/* RFC 2203 §5 gss_proc */
enum { GSS_SVC_NONE = 1, GSS_SVC_INTEG = 2, GSS_SVC_PRIV = 3 }; /* rpc_gss_service_t */

/* Programs (RFC 5531 appendix C, RFC 1813, RFC 1833, the Linux NFSACL and NLM). */
#define PROG_PORTMAP 100000u
#define PROG_NFS     100003u
#define PROG_MOUNT   100005u
#define PROG_NLM     100021u
#define PROG_NSM     100024u
#define PROG_NFSACL  100227u
#define PROG_NFS4_CB 0x40000000u /* the program Linux puts in SETCLIENTID / CREATE_SESSION */

/* ---------------------------------------------------------------------- */
/* names                                                                   */
/* ---------------------------------------------------------------------- */

struct num_name {
	uint32_t num;
	const char *name;
};

static const char *find_name(const struct num_name *t, size_t n, uint32_t num)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].num == num)
			return t[i].name;
	return NULL;
}

#define FIND(t, num) find_name(t, sizeof(t) / sizeof(t[0]), num)
#define PROC(t, p)   ((p) < sizeof(t) / sizeof(t[0]) ? t[p] : NULL)

static const char *const nfs2_procs[] = {
	"NULL", "GETATTR",    "SETATTR", "ROOT",   "LOOKUP",  "READLINK",
	"READ", "WRITECACHE", "WRITE",	 "CREATE", "REMOVE",  "RENAME",
	"LINK", "SYMLINK",    "MKDIR",	 "RMDIR",  "READDIR", "STATFS",
};

static const char *const nfs3_procs[] = {
	"NULL",	   "GETATTR",	  "SETATTR", "LOOKUP", "ACCESS",   "READLINK", "READ",	 "WRITE",
	"CREATE",  "MKDIR",	  "SYMLINK", "MKNOD",  "REMOVE",   "RMDIR",    "RENAME", "LINK",
	"READDIR", "READDIRPLUS", "FSSTAT",  "FSINFO", "PATHCONF", "COMMIT",
};

static const char *const mount_procs[] = {"NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT"};

static const char *const nfsacl_procs[] = {"NULL", "GETACL", "SETACL", "GETATTR", "ACCESS"};

static const char *const nlm_procs[] = {
	"NULL",		  "TEST",	    "LOCK",
	"CANCEL",	  "UNLOCK",	    "GRANTED",
	"TEST_MSG",	  "LOCK_MSG",	    "CANCEL_MSG",
	"UNLOCK_MSG",	  "GRANTED_MSG",    "TEST_RES",
	"LOCK_RES",	  "CANCEL_RES",	    "UNLOCK_RES",
	"GRANTED_RES",	  "SM_NOTIFY",	    [20] = "SHARE",
	[21] = "UNSHARE", [22] = "NM_LOCK", [23] = "FREE_ALL",
};

static const char *const nsm_procs[] = {"NULL",	     "STAT",	   "MON",   "UNMON",
					"UNMON_ALL", "SIMU_CRASH", "NOTIFY"};

static const char *const pmap2_procs[] = {"NULL", "SET", "UNSET", "GETPORT", "DUMP", "CALLIT"};

/* rpcbind versions 3 and 4 (RFC 1833 §2.2); 5 is CALLIT in 3, BCAST in 4 */
static const char *const rpcb_procs[] = {
	"NULL",	    "SET",	   "UNSET",	  "GETADDR",	 "DUMP",
	"CALLIT",   "GETTIME",	   "UADDR2TADDR", "TADDR2UADDR", "GETVERSADDR",
	"INDIRECT", "GETADDRLIST", "GETSTAT",
};

/* NFSv4 callback operations (RFC 7530 §17, RFC 8881 §20) */
static const char *const cb_ops[] = {
	[3] = "CB_GETATTR",
	[4] = "CB_RECALL",
	[5] = "CB_LAYOUTRECALL",
	[6] = "CB_NOTIFY",
	[7] = "CB_PUSH_DELEG",
	[8] = "CB_RECALL_ANY",
	[9] = "CB_RECALLABLE_OBJ_AVAIL",
	[10] = "CB_RECALL_SLOT",
	[11] = "CB_SEQUENCE",
	[12] = "CB_WANTS_CANCELLED",
	[13] = "CB_NOTIFY_LOCK",
	[14] = "CB_NOTIFY_DEVICEID",
	[15] = "CB_OFFLOAD",
};

/* nfsstat3 (RFC 1813 §2.6) after "NFS3"; NFSv2's stat (RFC 1094 §2.3.1) uses the
 * same numbers after "NFS" */
static const struct num_name nfs3_stat[] = {
	{0, "_OK"},
	{1, "ERR_PERM"},
	{2, "ERR_NOENT"},
	{5, "ERR_IO"},
	{6, "ERR_NXIO"},
	{13, "ERR_ACCES"},
	{17, "ERR_EXIST"},
	{18, "ERR_XDEV"},
	{19, "ERR_NODEV"},
	{20, "ERR_NOTDIR"},
	{21, "ERR_ISDIR"},
	{22, "ERR_INVAL"},
	{27, "ERR_FBIG"},
	{28, "ERR_NOSPC"},
	{30, "ERR_ROFS"},
	{31, "ERR_MLINK"},
	{63, "ERR_NAMETOOLONG"},
	{66, "ERR_NOTEMPTY"},
	{69, "ERR_DQUOT"},
	{70, "ERR_STALE"},
	{71, "ERR_REMOTE"},
	{99, "ERR_WFLUSH"},
	{10001, "ERR_BADHANDLE"},
	{10002, "ERR_NOT_SYNC"},
	{10003, "ERR_BAD_COOKIE"},
	{10004, "ERR_NOTSUPP"},
	{10005, "ERR_TOOSMALL"},
	{10006, "ERR_SERVERFAULT"},
	{10007, "ERR_BADTYPE"},
	{10008, "ERR_JUKEBOX"},
};

/* nfsstat4 (RFC 7530 §13, RFC 8881 §15, RFC 7862 §11, RFC 8276 §8.3) */
static const struct num_name nfs4_stat[] = {
	{0, "NFS4_OK"},
	{1, "NFS4ERR_PERM"},
	{2, "NFS4ERR_NOENT"},
	{5, "NFS4ERR_IO"},
	{6, "NFS4ERR_NXIO"},
	{13, "NFS4ERR_ACCESS"},
	{17, "NFS4ERR_EXIST"},
	{18, "NFS4ERR_XDEV"},
	{20, "NFS4ERR_NOTDIR"},
	{21, "NFS4ERR_ISDIR"},
	{22, "NFS4ERR_INVAL"},
	{27, "NFS4ERR_FBIG"},
	{28, "NFS4ERR_NOSPC"},
	{30, "NFS4ERR_ROFS"},
	{31, "NFS4ERR_MLINK"},
	{63, "NFS4ERR_NAMETOOLONG"},
	{66, "NFS4ERR_NOTEMPTY"},
	{69, "NFS4ERR_DQUOT"},
	{70, "NFS4ERR_STALE"},
	{10001, "NFS4ERR_BADHANDLE"},
	{10003, "NFS4ERR_BAD_COOKIE"},
	{10004, "NFS4ERR_NOTSUPP"},
	{10005, "NFS4ERR_TOOSMALL"},
	{10006, "NFS4ERR_SERVERFAULT"},
	{10007, "NFS4ERR_BADTYPE"},
	{10008, "NFS4ERR_DELAY"},
	{10009, "NFS4ERR_SAME"},
	{10010, "NFS4ERR_DENIED"},
	{10011, "NFS4ERR_EXPIRED"},
	{10012, "NFS4ERR_LOCKED"},
	{10013, "NFS4ERR_GRACE"},
	{10014, "NFS4ERR_FHEXPIRED"},
	{10015, "NFS4ERR_SHARE_DENIED"},
	{10016, "NFS4ERR_WRONGSEC"},
	{10017, "NFS4ERR_CLID_INUSE"},
	{10018, "NFS4ERR_RESOURCE"},
	{10019, "NFS4ERR_MOVED"},
	{10020, "NFS4ERR_NOFILEHANDLE"},
	{10021, "NFS4ERR_MINOR_VERS_MISMATCH"},
	{10022, "NFS4ERR_STALE_CLIENTID"},
	{10023, "NFS4ERR_STALE_STATEID"},
	{10024, "NFS4ERR_OLD_STATEID"},
	{10025, "NFS4ERR_BAD_STATEID"},
	{10026, "NFS4ERR_BAD_SEQID"},
	{10027, "NFS4ERR_NOT_SAME"},
	{10028, "NFS4ERR_LOCK_RANGE"},
	{10029, "NFS4ERR_SYMLINK"},
	{10030, "NFS4ERR_RESTOREFH"},
	{10031, "NFS4ERR_LEASE_MOVED"},
	{10032, "NFS4ERR_ATTRNOTSUPP"},
	{10033, "NFS4ERR_NO_GRACE"},
	{10034, "NFS4ERR_RECLAIM_BAD"},
	{10035, "NFS4ERR_RECLAIM_CONFLICT"},
	{10036, "NFS4ERR_BADXDR"},
	{10037, "NFS4ERR_LOCKS_HELD"},
	{10038, "NFS4ERR_OPENMODE"},
	{10039, "NFS4ERR_BADOWNER"},
	{10040, "NFS4ERR_BADCHAR"},
	{10041, "NFS4ERR_BADNAME"},
	{10042, "NFS4ERR_BAD_RANGE"},
	{10043, "NFS4ERR_LOCK_NOTSUPP"},
	{10044, "NFS4ERR_OP_ILLEGAL"},
	{10045, "NFS4ERR_DEADLOCK"},
	{10046, "NFS4ERR_FILE_OPEN"},
	{10047, "NFS4ERR_ADMIN_REVOKED"},
	{10048, "NFS4ERR_CB_PATH_DOWN"},
	{10049, "NFS4ERR_BADIOMODE"},
	{10050, "NFS4ERR_BADLAYOUT"},
	{10051, "NFS4ERR_BAD_SESSION_DIGEST"},
	{10052, "NFS4ERR_BADSESSION"},
	{10053, "NFS4ERR_BADSLOT"},
	{10054, "NFS4ERR_COMPLETE_ALREADY"},
	{10055, "NFS4ERR_CONN_NOT_BOUND_TO_SESSION"},
	{10056, "NFS4ERR_DELEG_ALREADY_WANTED"},
	{10057, "NFS4ERR_BACK_CHAN_BUSY"},
	{10058, "NFS4ERR_LAYOUTTRYLATER"},
	{10059, "NFS4ERR_LAYOUTUNAVAILABLE"},
	{10060, "NFS4ERR_NOMATCHING_LAYOUT"},
	{10061, "NFS4ERR_RECALLCONFLICT"},
	{10062, "NFS4ERR_UNKNOWN_LAYOUTTYPE"},
	{10063, "NFS4ERR_SEQ_MISORDERED"},
	{10064, "NFS4ERR_SEQUENCE_POS"},
	{10065, "NFS4ERR_REQ_TOO_BIG"},
	{10066, "NFS4ERR_REP_TOO_BIG"},
	{10067, "NFS4ERR_REP_TOO_BIG_TO_CACHE"},
	{10068, "NFS4ERR_RETRY_UNCACHED_REP"},
	{10069, "NFS4ERR_UNSAFE_COMPOUND"},
	{10070, "NFS4ERR_TOO_MANY_OPS"},
	{10071, "NFS4ERR_OP_NOT_IN_SESSION"},
	{10072, "NFS4ERR_HASH_ALG_UNSUPP"},
	{10074, "NFS4ERR_CLIENTID_BUSY"},
	{10075, "NFS4ERR_PNFS_IO_HOLE"},
	{10076, "NFS4ERR_SEQ_FALSE_RETRY"},
	{10077, "NFS4ERR_BAD_HIGH_SLOT"},
	{10078, "NFS4ERR_DEADSESSION"},
	{10079, "NFS4ERR_ENCR_ALG_UNSUPP"},
	{10080, "NFS4ERR_PNFS_NO_LAYOUT"},
	{10081, "NFS4ERR_NOT_ONLY_OP"},
	{10082, "NFS4ERR_WRONG_CRED"},
	{10083, "NFS4ERR_WRONG_TYPE"},
	{10084, "NFS4ERR_DIRDELEG_UNAVAIL"},
	{10085, "NFS4ERR_REJECT_DELEG"},
	{10086, "NFS4ERR_RETURNCONFLICT"},
	{10087, "NFS4ERR_DELEG_REVOKED"},
	{10088, "NFS4ERR_PARTNER_NOTSUPP"},
	{10089, "NFS4ERR_PARTNER_NO_AUTH"},
	{10090, "NFS4ERR_UNION_NOTSUPP"},
	{10091, "NFS4ERR_OFFLOAD_DENIED"},
	{10092, "NFS4ERR_WRONG_LFS"},
	{10093, "NFS4ERR_BADLABEL"},
	{10094, "NFS4ERR_OFFLOAD_NO_REQS"},
	{10095, "NFS4ERR_NOXATTR"},
	{10096, "NFS4ERR_XATTR2BIG"},
};

/* mountstat3 (RFC 1813 appendix I) */
static const struct num_name mount_stat[] = {
	{0, "MNT3_OK"},
	{1, "MNT3ERR_PERM"},
	{2, "MNT3ERR_NOENT"},
	{5, "MNT3ERR_IO"},
	{13, "MNT3ERR_ACCES"},
	{20, "MNT3ERR_NOTDIR"},
	{22, "MNT3ERR_INVAL"},
	{63, "MNT3ERR_NAMETOOLONG"},
	{10004, "MNT3ERR_NOTSUPP"},
	{10006, "MNT3ERR_SERVERFAULT"},
};

/* nlm4_stats (the X/Open NLM v4 protocol; v1-3 use the first five) */
static const char *const nlm_stat[] = {
	"GRANTED", "DENIED", "DENIED_NOLOCKS", "BLOCKED", "DENIED_GRACE_PERIOD",
	"DEADLCK", "ROFS",   "STALE_FH",       "FBIG",	  "FAILED",
};

static const char *const accept_names[] = {"SUCCESS",	   "PROG_UNAVAIL", "PROG_MISMATCH",
					   "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"};

/* auth_stat (RFC 5531 §9, RFC 2203 §5.3.3.3) */
static const char *const auth_names[] = {
	"AUTH_OK",	     "AUTH_BADCRED",	       "AUTH_REJECTEDCRED",	"AUTH_BADVERF",
	"AUTH_REJECTEDVERF", "AUTH_TOOWEAK",	       "AUTH_INVALIDRESP",	"AUTH_FAILED",
	"AUTH_KERB_GENERIC", "AUTH_TIMEEXPIRE",	       "AUTH_TKT_FILE",		"AUTH_DECODE",
	"AUTH_NET_ADDR",     "RPCSEC_GSS_CREDPROBLEM", "RPCSEC_GSS_CTXPROBLEM",
};

static const char *flavor_name(uint32_t f)
{
	switch (f) {
	case AUTH_NONE:
		return "AUTH_NONE";
	case AUTH_SYS:
		return "AUTH_SYS";
	case AUTH_SHORT:
		return "AUTH_SHORT";
	case AUTH_DH:
		return "AUTH_DH";
	case RPCSEC_GSS:
		return "RPCSEC_GSS";
	case AUTH_TLS:
		return "AUTH_TLS";
	default:
		return "unknown flavor";
	}
}

const char *iwd_rpcrdma_proc_name(uint32_t proc)
{
	static const char *const n[] = {"RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP", "RDMA_DONE",
					"RDMA_ERROR"};
	return proc < 5 ? n[proc] : "rdma_proc?";
}

static const char *v4_op_name(uint32_t op)
{
	if (op == OP_ILLEGAL)
		return "ILLEGAL";
	const struct nfs4_op_desc *d = nfs4_op_find(op);
	return d ? d->name : NULL;
}

/* ---------------------------------------------------------------------- */
/* a bounded string builder                                                */
/* ---------------------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t cap, len;
	bool full;
};

static void sb_init(struct sbuf *b, char *p, size_t cap)
{
	b->p = p;
	b->cap = cap;
	b->len = 0;
	b->full = cap == 0;
	if (cap)
		p[0] = '\0';
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->full)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		b->len = b->cap - 1;
		b->full = true;
	} else {
		b->len += (size_t)n;
	}
}

/* Append " word", or " ..." and stop once a word no longer fits (room is kept
 * for the dots). */
static void sb_word(struct sbuf *b, const char *word)
{
	if (b->full)
		return;
	size_t w = strlen(word);
	if (b->len + 1 + w + 4 >= b->cap) {
		if (b->len + 4 < b->cap) {
			memcpy(b->p + b->len, " ...", 5);
			b->len += 4;
		}
		b->full = true;
		return;
	}
	b->p[b->len++] = ' ';
	memcpy(b->p + b->len, word, w + 1);
	b->len += w;
}

/* ---------------------------------------------------------------------- */
/* the ONC RPC header                                                       */
/* ---------------------------------------------------------------------- */

struct rpc_hdr {
	uint32_t xid, type;
	/* CALL */
	uint32_t rpcvers, prog, vers, proc;
	uint32_t cred_flavor, cred_len, verf_flavor, verf_len;
	size_t cred_off; /* of the credential body */
	bool gss;	 /* an RPCSEC_GSS version 1 credential was read */
	uint32_t gss_proc, gss_seq, gss_service;
	/* REPLY */
	uint32_t reply_stat, accept_stat, reject_stat, auth_stat, low, high;
	size_t body_off; /* arguments / results (accepted replies) */
};

/* opaque_auth: flavor, body<400> (RFC 5531 §8.2) */
static void rpc_auth(struct iw_cursor *c, uint32_t *flavor, uint32_t *len, size_t *off)
{
	*flavor = iw_cursor_get_be32(c);
	*len = iw_cursor_get_be32(c);
	if (c->err)
		return;
	if (*len > RPC_MAX_AUTH_BYTES) {
		c->err = IW_ERPC_RPC;
		return;
	}
	*off = c->off;
	(void)iw_cursor_get_bytes(c, (*len + 3) & ~3u);
}

/* Parse the RPC header of p[0..n).  0, or -1 when it does not decode (xid and
 * type are still filled when present). */
static int rpc_parse(const uint8_t *p, size_t n, struct rpc_hdr *h)
{
	struct iw_cursor c;
	size_t off = 0;

	memset(h, 0, sizeof(*h));
	iw_cursor_init(&c, p, n);
	h->xid = iw_cursor_get_be32(&c);
	h->type = iw_cursor_get_be32(&c);
	if (c.err)
		return -1;
	if (h->type == RPC_MSG_CALL) {
		h->rpcvers = iw_cursor_get_be32(&c);
		h->prog = iw_cursor_get_be32(&c);
		h->vers = iw_cursor_get_be32(&c);
		h->proc = iw_cursor_get_be32(&c);
		if (c.err || h->rpcvers != RPC_VERSION)
			return -1;
		rpc_auth(&c, &h->cred_flavor, &h->cred_len, &h->cred_off);
		rpc_auth(&c, &h->verf_flavor, &h->verf_len, &off);
		if (!c.err && h->cred_flavor == RPCSEC_GSS && h->cred_len >= 16 &&
		    iw_get_be32(p + h->cred_off) == 1) { /* rpc_gss_cred_t version 1 */
			h->gss = true;
			h->gss_proc = iw_get_be32(p + h->cred_off + 4);
			h->gss_seq = iw_get_be32(p + h->cred_off + 8);
			h->gss_service = iw_get_be32(p + h->cred_off + 12);
		}
	} else if (h->type == RPC_MSG_REPLY) {
		h->reply_stat = iw_cursor_get_be32(&c);
		if (c.err)
			return -1;
		if (h->reply_stat == MSG_ACCEPTED) {
			rpc_auth(&c, &h->verf_flavor, &h->verf_len, &off);
			h->accept_stat = iw_cursor_get_be32(&c);
			if (h->accept_stat == 2) { /* PROG_MISMATCH */
				h->low = iw_cursor_get_be32(&c);
				h->high = iw_cursor_get_be32(&c);
			}
		} else if (h->reply_stat == MSG_DENIED) {
			h->reject_stat = iw_cursor_get_be32(&c);
			if (h->reject_stat == 0) { /* RPC_MISMATCH */
				h->low = iw_cursor_get_be32(&c);
				h->high = iw_cursor_get_be32(&c);
			} else if (h->reject_stat == 1) { /* AUTH_ERROR */
				h->auth_stat = iw_cursor_get_be32(&c);
			} else {
				return -1;
			}
		} else {
			return -1;
		}
	} else {
		return -1;
	}
	if (c.err)
		return -1;
	h->body_off = c.off;
	return 0;
}

/* The arguments or results of a call protected by RPCSEC_GSS, unwrapped
 * (RFC 2203 §5.3.2): service none as is, integrity after the databody's
 * length word and sequence number; privacy cannot be read.  false then. */
static bool gss_unwrap(bool gss, uint32_t service, const uint8_t **p, size_t *n)
{
	if (!gss || service == GSS_SVC_NONE)
		return true;
	if (service != GSS_SVC_INTEG || *n < 8)
		return false;
	uint32_t len = iw_get_be32(*p);
	if (len < 4)
		return false;
	*n = len - 4 < *n - 8 ? len - 4 : *n - 8;
	*p += 8;
	return true;
}

/* ---------------------------------------------------------------------- */
/* the XID table                                                            */
/* ---------------------------------------------------------------------- */

struct ulp_call {
	uint64_t conn;
	uint32_t xid;
	int8_t dir; /* the direction the call went; -1: free */
	int32_t next;
	uint32_t prog, vers, proc;
	bool gss;
	uint32_t gss_service;
	bool named_v4; /* ops[] holds the COMPOUND's operations */
	struct nfs4_op_list ops;
	char what[sizeof(((struct iwd_ulp *)0)->what)];
};

struct iwd_ulp_state {
	struct ulp_call calls[ULP_CALLS];
	int32_t bucket[ULP_HASH];
	uint32_t ring; /* next slot to fill (the oldest) */
	struct rpcrdma_hdr hdr;
};

static uint32_t call_hash(uint64_t conn, int dir, uint32_t xid)
{
	uint64_t h = (conn * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)xid * 0xC2B2AE3D27D4EB4Full) ^
		     (uint64_t)dir;
	return (uint32_t)(h >> 40) & (ULP_HASH - 1);
}

struct iwd_ulp_state *iwd_ulp_create(void)
{
	struct iwd_ulp_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	for (unsigned i = 0; i < ULP_CALLS; i++)
		s->calls[i].dir = -1;
	for (unsigned i = 0; i < ULP_HASH; i++)
		s->bucket[i] = -1;
	return s;
}

void iwd_ulp_destroy(struct iwd_ulp_state *s)
{
	free(s);
}

static void call_unlink(struct iwd_ulp_state *s, int32_t i)
{
	struct ulp_call *e = &s->calls[i];
	int32_t *pp = &s->bucket[call_hash(e->conn, e->dir, e->xid)];

	while (*pp >= 0 && *pp != i)
		pp = &s->calls[*pp].next;
	if (*pp == i)
		*pp = e->next;
	e->dir = -1;
}

static struct ulp_call *call_find(struct iwd_ulp_state *s, uint64_t conn, int dir, uint32_t xid)
{
	for (int32_t i = s->bucket[call_hash(conn, dir, xid)]; i >= 0; i = s->calls[i].next) {
		struct ulp_call *e = &s->calls[i];
		if (e->conn == conn && e->dir == dir && e->xid == xid)
			return e;
	}
	return NULL;
}

/* A new entry for (conn, dir, xid): a call retransmitted with the same XID
 * replaces the old one; otherwise the oldest slot is taken. */
static struct ulp_call *call_add(struct iwd_ulp_state *s, uint64_t conn, int dir, uint32_t xid)
{
	struct ulp_call *e = call_find(s, conn, dir, xid);
	int32_t i;

	if (e) {
		i = (int32_t)(e - s->calls);
		call_unlink(s, i);
	} else {
		i = (int32_t)(s->ring++ & (ULP_CALLS - 1));
		if (s->calls[i].dir >= 0)
			call_unlink(s, i);
	}
	e = &s->calls[i];
	memset(e, 0, sizeof(*e));
	e->conn = conn;
	e->dir = (int8_t)dir;
	e->xid = xid;
	uint32_t b = call_hash(conn, dir, xid);
	e->next = s->bucket[b];
	s->bucket[b] = i;
	return e;
}

/* ---------------------------------------------------------------------- */
/* naming a call                                                            */
/* ---------------------------------------------------------------------- */

/* Tells the COMPOUND walker which arguments are in Read chunks: an item is
 * absent when a Read chunk sits at its position in the unreduced stream
 * (RFC 8166 §3.4.5). */
struct reduce_ctx {
	const struct rpcrdma_hdr *hdr;
	uint64_t base;	  /* offset of the walked body in the RPC message */
	uint64_t removed; /* octets of the items found absent so far */
};

static int reduce_fn(void *arg, const struct rpcrdma_item *it)
{
	struct reduce_ctx *r = arg;
	uint64_t pos = r->base + it->offset + r->removed;

	for (unsigned i = 0; i < r->hdr->n_read && i < RPCRDMA_MAX_READ_CHUNKS; i++) {
		if (r->hdr->read[i].position == pos) {
			r->removed += ((uint64_t)it->length + 3) & ~3ull;
			return 0;
		}
	}
	return 1;
}

/* CB_COMPOUND4args (RFC 7530 §17.2.1, RFC 8881 §20): tag, minorversion,
 * callback_ident, operations.  Lists up to four; the arguments of
 * CB_SEQUENCE, CB_RECALL and CB_GETATTR are skipped to reach the next. */
static void name_cb_compound(struct sbuf *b, const uint8_t *p, size_t n)
{
	struct iw_cursor c;

	iw_cursor_init(&c, p, n);
	uint32_t tag = iw_cursor_get_be32(&c);
	if (tag > 1024)
		c.err = IW_ERPC_RPC;
	(void)iw_cursor_get_bytes(&c, (tag + 3) & ~3u);
	uint32_t minor = iw_cursor_get_be32(&c);
	(void)iw_cursor_get_be32(&c); /* callback_ident */
	uint32_t count = iw_cursor_get_be32(&c);
	if (c.err) {
		sb_printf(b, "NFSv4 CB_COMPOUND");
		return;
	}
	sb_printf(b, "NFSv4.%u CB_COMPOUND", minor);
	for (uint32_t i = 0; i < count; i++) {
		if (i == 4) {
			sb_word(b, "...");
			return;
		}
		uint32_t op = iw_cursor_get_be32(&c);
		if (c.err)
			return;
		const char *name = PROC(cb_ops, op);
		if (!name) {
			char num[24];
			snprintf(num, sizeof(num), "CB_OP_%u", op);
			sb_word(b, num);
			return;
		}
		sb_word(b, name);
		uint32_t k, m;
		switch (op) {
		case 11: /* CB_SEQUENCE: sessionid, seq, slot, highest, cachethis, lists */
			(void)iw_cursor_get_bytes(&c, 16 + 4 * 4);
			k = iw_cursor_get_be32(&c);
			for (uint32_t j = 0; j < k && !c.err; j++) {
				(void)iw_cursor_get_bytes(&c, 16);
				m = iw_cursor_get_be32(&c);
				if (m > n)
					c.err = IW_ERPC_RPC;
				(void)iw_cursor_get_bytes(&c, (size_t)m * 8);
			}
			break;
		case 4: /* CB_RECALL: stateid, truncate, fh */
			(void)iw_cursor_get_bytes(&c, 16 + 4);
			/* fall through */
		case 3: /* CB_GETATTR: fh, bitmap */
			m = iw_cursor_get_be32(&c);
			if (m > 128)
				c.err = IW_ERPC_RPC;
			(void)iw_cursor_get_bytes(&c, (m + 3) & ~3u);
			if (op == 3) {
				m = iw_cursor_get_be32(&c);
				if (m > n)
					c.err = IW_ERPC_RPC;
				(void)iw_cursor_get_bytes(&c, (size_t)m * 4);
			}
			break;
		default:
			if (i + 1 < count)
				sb_word(b, "...");
			return;
		}
	}
}

/* The program's label in names ("NFS", "MOUNT", ...), or NULL. */
static const char *prog_label(uint32_t prog, uint32_t vers)
{
	switch (prog) {
	case PROG_NFS:
		return "NFS";
	case PROG_MOUNT:
		return "MOUNT";
	case PROG_NFSACL:
		return "NFSACL";
	case PROG_NLM:
		return "NLM";
	case PROG_NSM:
		return "NSM";
	case PROG_PORTMAP:
		return vers == 2 ? "PORTMAP" : "RPCBIND";
	case PROG_NFS4_CB:
		return "NFS4_CB";
	default:
		return NULL;
	}
}

/* The name of procedure `proc` of (prog, vers), or NULL. */
static const char *proc_name(uint32_t prog, uint32_t vers, uint32_t proc)
{
	switch (prog) {
	case PROG_NFS:
		if (vers == 2)
			return PROC(nfs2_procs, proc);
		if (vers == 3)
			return PROC(nfs3_procs, proc);
		if (vers == 4)
			return proc == 0 ? "NULL" : proc == 1 ? "COMPOUND" : NULL;
		return NULL;
	case PROG_MOUNT:
		return PROC(mount_procs, proc);
	case PROG_NFSACL:
		return PROC(nfsacl_procs, proc);
	case PROG_NLM:
		return PROC(nlm_procs, proc);
	case PROG_NSM:
		return PROC(nsm_procs, proc);
	case PROG_PORTMAP:
		return vers == 2 ? PROC(pmap2_procs, proc) : PROC(rpcb_procs, proc);
	case PROG_NFS4_CB:
		return proc == 0 ? "CB_NULL" : proc == 1 ? "CB_COMPOUND" : NULL;
	default:
		return NULL;
	}
}

/* "NFSv4.1 COMPOUND SEQUENCE PUTFH READ": the operations listed by the walker
 * of rpcrdma/nfs, told which arguments are in Read chunks. */
static void name_compound(struct sbuf *b, struct ulp_call *e, const struct rpc_hdr *h,
			  const uint8_t *msg, size_t msg_len, const struct rpcrdma_hdr *hdr)
{
	const uint8_t *args = msg + h->body_off;
	size_t alen = msg_len - h->body_off;
	struct reduce_ctx rc = {.hdr = hdr, .base = h->body_off};

	if (!gss_unwrap(h->gss, h->gss_service, &args, &alen)) {
		sb_printf(b, "NFSv4 COMPOUND");
		return;
	}
	rc.base = (uint64_t)(args - msg);
	if (nfs_v4_call_ops(args, alen, hdr->n_read ? reduce_fn : NULL, &rc, &e->ops) < 0) {
		sb_printf(b, "NFSv4 COMPOUND");
		return;
	}
	e->named_v4 = true;
	sb_printf(b, "NFSv4.%u COMPOUND", e->ops.minor);
	for (unsigned i = 0; i < e->ops.n; i++) {
		const char *name = v4_op_name(e->ops.op[i]);
		char num[24];
		if (!name) {
			snprintf(num, sizeof(num), "OP_%u", e->ops.op[i]);
			name = num;
		}
		sb_word(b, name);
	}
	if (!e->ops.complete && e->ops.n < e->ops.count)
		sb_word(b, "...");
}

static void name_call(struct ulp_call *e, const struct rpc_hdr *h, const uint8_t *msg,
		      size_t msg_len, const struct rpcrdma_hdr *hdr, int dir)
{
	struct sbuf b;
	const char *label = prog_label(h->prog, h->vers);
	const char *proc = proc_name(h->prog, h->vers, h->proc);

	sb_init(&b, e->what, sizeof(e->what));
	/* The callback program number is the client's choice (SETCLIENTID,
	 * CREATE_SESSION); a version-1 NULL or COMPOUND from the server is one. */
	if ((h->prog == PROG_NFS4_CB || (dir == 1 && !label)) && h->vers == 1 && h->proc <= 1) {
		if (h->proc == 0)
			sb_printf(&b, "NFSv4 CB_NULL");
		else
			name_cb_compound(&b, msg + h->body_off, msg_len - h->body_off);
	} else if (h->prog == PROG_NFS && h->vers == 4 && h->proc == 1) {
		name_compound(&b, e, h, msg, msg_len, hdr);
	} else if (!label) {
		sb_printf(&b, "prog %u v%u proc %u", h->prog, h->vers, h->proc);
	} else if (proc) {
		sb_printf(&b, "%sv%u %s", label, h->vers, proc);
	} else {
		sb_printf(&b, "%sv%u proc %u", label, h->vers, h->proc);
	}
}

/* ---------------------------------------------------------------------- */
/* the status of a reply                                                    */
/* ---------------------------------------------------------------------- */

/* prefix + name, or "status N" for a number without a name */
static void status_num(struct sbuf *b, const char *prefix, const char *name, uint32_t v)
{
	if (name)
		sb_printf(b, "%s%s", prefix, name);
	else
		sb_printf(b, "status %u", v);
}

/* The program's status word of an accepted, successful reply to call e, or
 * "SUCCESS" when it has none we know of. */
static void reply_status(struct sbuf *b, const struct ulp_call *e, const uint8_t *res, size_t n)
{
	struct iw_cursor c;

	if (!e || !gss_unwrap(e->gss, e->gss_service, &res, &n)) {
		sb_printf(b, "SUCCESS");
		return;
	}
	iw_cursor_init(&c, res, n);
	uint32_t st = iw_cursor_get_be32(&c);
	if (c.err)
		goto plain;
	switch (e->prog) {
	case PROG_NFS:
		if ((e->vers == 2 || e->vers == 3) && e->proc != 0) {
			if (e->vers == 2 && (e->proc == 3 || e->proc == 7)) /* ROOT, WRITECACHE */
				goto plain;
			status_num(b, e->vers == 3 ? "NFS3" : "NFS", FIND(nfs3_stat, st), st);
			return;
		}
		if (e->vers == 4 && e->proc == 1)
			break;
		goto plain;
	case PROG_NFSACL:
		if (e->proc == 0)
			goto plain;
		status_num(b, "NFS3", FIND(nfs3_stat, st), st);
		return;
	case PROG_MOUNT:
		if (e->proc != 1) /* only MNT returns a status */
			goto plain;
		status_num(b, "", FIND(mount_stat, st), st);
		return;
	case PROG_NLM:
		if (e->proc < 1 || e->proc > 5)
			goto plain;
		/* nlm_res / nlm4_res: cookie (netobj), stat */
		iw_cursor_init(&c, res, n);
		uint32_t clen = iw_cursor_get_be32(&c);
		if (clen > 1024)
			goto plain;
		(void)iw_cursor_get_bytes(&c, (clen + 3) & ~3u);
		st = iw_cursor_get_be32(&c);
		if (c.err)
			goto plain;
		status_num(b, e->vers == 4 ? "NLM4_" : "NLM_", PROC(nlm_stat, st), st);
		return;
	default: /* CB_COMPOUND, named as in name_call */
		if ((e->prog != PROG_NFS4_CB && e->dir != 1) || e->vers != 1 || e->proc != 1)
			goto plain;
		break;
	}
	/* COMPOUND4res / CB_COMPOUND4res: status, tag, result count */
	{
		status_num(b, "", FIND(nfs4_stat, st), st);
		uint32_t tag = iw_cursor_get_be32(&c);
		if (tag > 1024)
			return;
		(void)iw_cursor_get_bytes(&c, (tag + 3) & ~3u);
		uint32_t nres = iw_cursor_get_be32(&c);
		if (c.err || st == 0 || nres == 0)
			return;
		/* the failing operation is the last one executed */
		if (e->named_v4 && nres <= e->ops.n) {
			const char *name = v4_op_name(e->ops.op[nres - 1]);
			if (name)
				sb_printf(b, " (%s)", name);
		} else {
			uint32_t op = iw_cursor_get_be32(&c); /* the first resop */
			if (!c.err && nres == 1) {
				const char *name =
					e->prog == PROG_NFS ? v4_op_name(op) : PROC(cb_ops, op);
				if (name)
					sb_printf(b, " (%s)", name);
			}
		}
		return;
	}
plain:
	sb_printf(b, "SUCCESS");
}

/* The RPC-level status of any reply: accepted and SUCCESS leaves it to the
 * program (returns false). */
static bool rpc_status(struct sbuf *b, const struct rpc_hdr *h)
{
	if (h->reply_stat == MSG_DENIED) {
		if (h->reject_stat == 0)
			sb_printf(b, "MSG_DENIED RPC_MISMATCH %u-%u", h->low, h->high);
		else if (PROC(auth_names, h->auth_stat))
			sb_printf(b, "MSG_DENIED AUTH_ERROR %s", PROC(auth_names, h->auth_stat));
		else
			sb_printf(b, "MSG_DENIED AUTH_ERROR auth_stat %u", h->auth_stat);
		return true;
	}
	if (h->accept_stat == 0)
		return false;
	if (h->accept_stat == 2)
		sb_printf(b, "PROG_MISMATCH %u-%u", h->low, h->high);
	else
		status_num(b, "", PROC(accept_names, h->accept_stat), h->accept_stat);
	return true;
}

/* ---------------------------------------------------------------------- */
/* decode                                                                   */
/* ---------------------------------------------------------------------- */

static void take_name(struct iwd_ulp *out, struct ulp_call *e)
{
	out->matched = true;
	memcpy(out->what, e->what, sizeof(out->what));
	out->prog = e->prog;
	out->vers_rpc = e->vers;
	out->rpc_proc = e->proc;
}

static void decode_rpc(struct iwd_ulp_state *s, uint64_t conn, int dir, const uint8_t *msg,
		       size_t n, struct iwd_ulp *out)
{
	struct rpc_hdr h;

	if (rpc_parse(msg, n, &h))
		return;
	out->rpc = true;
	out->rpc_xid = h.xid;
	out->xid_mismatch = h.xid != out->xid;
	if (h.type == RPC_MSG_CALL) {
		struct ulp_call *e = call_add(s, conn, dir, h.xid);
		out->call = true;
		out->backchannel = dir == 1;
		out->prog = e->prog = h.prog;
		out->vers_rpc = e->vers = h.vers;
		out->rpc_proc = e->proc = h.proc;
		out->cred_flavor = h.cred_flavor;
		e->gss = h.gss && h.gss_proc == RPCSEC_GSS_DATA;
		e->gss_service = h.gss_service;
		name_call(e, &h, msg, n, &s->hdr, dir);
		memcpy(out->what, e->what, sizeof(out->what));
		return;
	}
	out->reply_stat = h.reply_stat;
	out->accept_stat = h.accept_stat;
	struct ulp_call *e = call_find(s, conn, 1 - dir, h.xid);
	struct sbuf b;
	sb_init(&b, out->status, sizeof(out->status));
	if (e)
		take_name(out, e);
	if (!rpc_status(&b, &h))
		reply_status(&b, e, msg + h.body_off, n - h.body_off);
	if (e)
		call_unlink(s, (int32_t)(e - s->calls));
}

void iwd_ulp_decode(struct iwd_ulp_state *s, uint64_t conn_id, int dir, const uint8_t *p, size_t n,
		    struct iwd_ulp *out)
{
	memset(out, 0, sizeof(*out));
	dir = dir ? 1 : 0;
	if (!p)
		n = 0;
	int r = rpcrdma_hdr_decode(p, n, &s->hdr);
	if (r < 0 && r != IW_ERPC_MSGP) {
		out->err = r;
		if (r != IW_ERPC_SHORT) { /* the fixed fields were read (rpcrdma_wire.h) */
			out->xid = s->hdr.xid;
			out->vers = s->hdr.vers;
			out->credits = s->hdr.credits;
			out->proc = s->hdr.proc;
		}
		return;
	}
	const struct rpcrdma_hdr *h = &s->hdr;
	out->rpcrdma = true;
	out->hdr = h;
	out->xid = h->xid;
	out->vers = h->vers;
	out->credits = h->credits;
	out->proc = h->proc;
	out->hdr_len = h->hdr_len;
	for (unsigned i = 0; i < h->n_read && i < RPCRDMA_MAX_READ_CHUNKS; i++)
		out->nread += h->read[i].nseg;
	for (unsigned i = 0; i < h->n_write && i < RPCRDMA_MAX_WRITE_CHUNKS; i++)
		out->nwrite += h->write[i].nseg;
	out->nreply = h->has_reply ? h->reply.nseg : 0;

	struct ulp_call *e;
	switch (h->proc) {
	case RDMA_MSG:
		if (h->hdr_len <= n)
			decode_rpc(s, conn_id, dir, p + h->hdr_len, n - h->hdr_len, out);
		break;
	case RDMA_NOMSG:
		/* An answer to a call in the other direction carries the reply in
		 * the Reply chunk; otherwise it is a call in a Read chunk (RFC 8166
		 * §3.5.3), remembered unnamed for its reply. */
		e = call_find(s, conn_id, 1 - dir, h->xid);
		if (e) {
			take_name(out, e);
			call_unlink(s, (int32_t)(e - s->calls));
		} else if (h->n_read) {
			e = call_add(s, conn_id, dir, h->xid);
			out->call = true;
			out->backchannel = dir == 1;
		}
		break;
	case RDMA_ERROR:
		e = call_find(s, conn_id, 1 - dir, h->xid);
		if (e) {
			take_name(out, e);
			call_unlink(s, (int32_t)(e - s->calls));
		}
		break;
	default: /* RDMA_MSGP (never sent, RFC 8166 §4.6.1), RDMA_DONE (§4.6.2) */
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* the summary line                                                         */
/* ---------------------------------------------------------------------- */

size_t iwd_ulp_summary(const struct iwd_ulp *u, char *buf, size_t len)
{
	struct sbuf b;

	sb_init(&b, buf, len);
	if (!u->rpcrdma) {
		if (u->err == IW_ERPC_SHORT)
			sb_printf(&b, "RPC-over-RDMA? too short (%s)", rpcrdma_errname(u->err));
		else
			sb_printf(&b, "RPC-over-RDMA? xid 0x%08x vers %u proc %u: %s", u->xid,
				  u->vers, u->proc, rpcrdma_errname(u->err));
		return b.len;
	}
	sb_printf(&b, "RPC-over-RDMA %s xid 0x%08x credits %u", iwd_rpcrdma_proc_name(u->proc),
		  u->xid, u->credits);
	if (u->proc == RDMA_MSG || u->proc == RDMA_NOMSG || u->proc == RDMA_MSGP)
		sb_printf(&b, " read %u write %u reply %u", u->nread, u->nwrite, u->nreply);
	if (u->proc == RDMA_ERROR && u->hdr) {
		if (u->hdr->err == ERR_VERS)
			sb_printf(&b, " ERR_VERS %u-%u", u->hdr->vers_low, u->hdr->vers_high);
		else
			sb_printf(&b, " ERR_CHUNK");
	}
	if (u->proc == RDMA_MSGP && u->hdr)
		sb_printf(&b, " align %u thresh %u", u->hdr->msgp_align, u->hdr->msgp_thresh);

	switch (u->proc) {
	case RDMA_MSG:
		if (!u->rpc) {
			sb_printf(&b, " | RPC message does not decode");
			break;
		}
		if (u->call) {
			sb_printf(&b, " | %s call", u->what);
			if (u->backchannel)
				sb_printf(&b, " (backchannel)");
		} else {
			if (u->matched && u->what[0])
				sb_printf(&b, " | %s reply", u->what);
			else if (u->matched)
				sb_printf(&b, " | RPC reply");
			else
				sb_printf(&b, " | RPC reply (call not seen)");
			if (u->status[0])
				sb_printf(&b, " %s", u->status);
		}
		if (u->xid_mismatch)
			sb_printf(&b, " [RPC xid 0x%08x differs]", u->rpc_xid);
		break;
	case RDMA_NOMSG:
		if (u->matched)
			sb_printf(&b, " | %s reply in the Reply chunk",
				  u->what[0] ? u->what : "RPC");
		else if (u->call)
			sb_printf(&b, " | RPC call in a Read chunk%s",
				  u->backchannel ? " (backchannel)" : "");
		else
			sb_printf(&b, " | RPC message in a chunk");
		break;
	case RDMA_ERROR:
		if (u->matched && u->what[0])
			sb_printf(&b, " | for %s call", u->what);
		break;
	case RDMA_MSGP:
		sb_printf(&b, " (obsolete, RFC 8166 §4.6.1)");
		break;
	case RDMA_DONE:
		sb_printf(&b, " (obsolete, RFC 8166 §4.6.2)");
		break;
	default:
		break;
	}
	return b.len;
}

/* ---------------------------------------------------------------------- */
/* -V                                                                       */
/* ---------------------------------------------------------------------- */

/* A counted string from the capture, printable ASCII only. */
static void print_text(FILE *f, const uint8_t *p, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
			fputc(p[i], f);
		else
			fprintf(f, "\\x%02x", p[i]);
	}
	fputc('"', f);
}

static void print_segment(FILE *f, const char *ind, const struct rpcrdma_segment *sg, unsigned k)
{
	fprintf(f, "%s      segment %u: handle 0x%08x length %u offset 0x%016llx\n", ind, k,
		sg->handle, sg->length, (unsigned long long)sg->offset);
}

static void print_chunk(FILE *f, const char *ind, const struct rpcrdma_hdr *h,
			const struct rpcrdma_chunk *c)
{
	for (unsigned k = 0; k < c->nseg && c->first + k < RPCRDMA_MAX_HDR_SEGS; k++)
		print_segment(f, ind, &h->segs[c->first + k], k + 1);
}

/* AUTH_SYS body (RFC 5531 appendix A): stamp, machinename<255>, uid, gid, gids<16> */
static void print_auth_sys(FILE *f, const uint8_t *p, size_t n)
{
	struct iw_cursor c;

	iw_cursor_init(&c, p, n);
	uint32_t stamp = iw_cursor_get_be32(&c);
	uint32_t mlen = iw_cursor_get_be32(&c);
	if (c.err || mlen > 255)
		return;
	const uint8_t *m = iw_cursor_get_bytes(&c, (mlen + 3) & ~3u);
	uint32_t uid = iw_cursor_get_be32(&c);
	uint32_t gid = iw_cursor_get_be32(&c);
	uint32_t ngids = iw_cursor_get_be32(&c);
	if (c.err)
		return;
	fprintf(f, ": stamp 0x%08x machinename ", stamp);
	print_text(f, m, mlen);
	fprintf(f, " uid %u gid %u, %u more gids", uid, gid, ngids);
}

static void print_rpc(FILE *f, const uint8_t *p, size_t n, const char *ind)
{
	struct rpc_hdr h;

	if (rpc_parse(p, n, &h)) {
		fprintf(f,
			"%sONC RPC message (RFC 5531 §9), %zu octets: the header does not decode\n",
			ind, n);
		return;
	}
	fprintf(f, "%sONC RPC %s (RFC 5531 §9), %zu octets\n", ind,
		h.type == RPC_MSG_CALL ? "call" : "reply", n);
	fprintf(f, "%s  xid          0x%08x\n", ind, h.xid);
	fprintf(f, "%s  msg_type     %u %s\n", ind, h.type,
		h.type == RPC_MSG_CALL ? "CALL" : "REPLY");
	if (h.type == RPC_MSG_CALL) {
		fprintf(f, "%s  rpcvers      %u\n", ind, h.rpcvers);
		const char *label = prog_label(h.prog, h.vers);
		const char *proc = proc_name(h.prog, h.vers, h.proc);
		fprintf(f, "%s  prog         %u%s%s\n", ind, h.prog, label ? " " : "",
			label ? label : "");
		fprintf(f, "%s  vers         %u\n", ind, h.vers);
		fprintf(f, "%s  proc         %u%s%s\n", ind, h.proc, proc ? " " : "",
			proc ? proc : "");
		fprintf(f, "%s  cred         %u %s, %u octets (RFC 5531 §8.2)", ind, h.cred_flavor,
			flavor_name(h.cred_flavor), h.cred_len);
		if (h.cred_flavor == AUTH_SYS)
			print_auth_sys(f, p + h.cred_off, h.cred_len);
		if (h.gss)
			fprintf(f, ": gss_proc %u seq_num %u service %u (RFC 2203 §5)", h.gss_proc,
				h.gss_seq, h.gss_service);
		fputc('\n', f);
		fprintf(f, "%s  verf         %u %s, %u octets\n", ind, h.verf_flavor,
			flavor_name(h.verf_flavor), h.verf_len);
		fprintf(f, "%s  arguments    %zu octets\n", ind, n - h.body_off);
		return;
	}
	fprintf(f, "%s  reply_stat   %u %s\n", ind, h.reply_stat,
		h.reply_stat == MSG_ACCEPTED ? "MSG_ACCEPTED" : "MSG_DENIED");
	if (h.reply_stat == MSG_ACCEPTED) {
		const char *a = PROC(accept_names, h.accept_stat);
		fprintf(f, "%s  verf         %u %s, %u octets\n", ind, h.verf_flavor,
			flavor_name(h.verf_flavor), h.verf_len);
		fprintf(f, "%s  accept_stat  %u %s", ind, h.accept_stat, a ? a : "?");
		if (h.accept_stat == 2)
			fprintf(f, " (versions %u to %u)", h.low, h.high);
		fputc('\n', f);
		if (h.accept_stat == 0)
			fprintf(f, "%s  results      %zu octets\n", ind, n - h.body_off);
	} else if (h.reject_stat == 0) {
		fprintf(f, "%s  reject_stat  0 RPC_MISMATCH (versions %u to %u)\n", ind, h.low,
			h.high);
	} else {
		const char *a = PROC(auth_names, h.auth_stat);
		fprintf(f, "%s  reject_stat  1 AUTH_ERROR\n", ind);
		fprintf(f, "%s  auth_stat    %u %s\n", ind, h.auth_stat, a ? a : "?");
	}
}

void iwd_ulp_print_verbose(FILE *f, const uint8_t *p, size_t n, const char *indent)
{
	struct rpcrdma_hdr *h = malloc(sizeof(*h));
	const char *ind = indent ? indent : "";

	if (!h)
		return;
	if (!p)
		n = 0;
	int r = rpcrdma_hdr_decode(p, n, h);
	if (r < 0 && r != IW_ERPC_MSGP) {
		fprintf(f, "%sRPC-over-RDMA? %zu octets do not decode: %s (%s)\n", ind, n,
			rpcrdma_errname(r), rpcrdma_strerror(r));
		if (r != IW_ERPC_SHORT)
			fprintf(f, "%s  rdma_xid 0x%08x rdma_vers %u rdma_credit %u rdma_proc %u\n",
				ind, h->xid, h->vers, h->credits, h->proc);
		free(h);
		return;
	}
	fprintf(f, "%sRPC-over-RDMA version 1 transport header, %u octets (RFC 8166 §4.2)\n", ind,
		h->hdr_len);
	fprintf(f, "%s  rdma_xid     0x%08x   transaction ID, the RPC XID (§4.2.1)\n", ind, h->xid);
	fprintf(f, "%s  rdma_vers    %-12u version (§4.2.2)\n", ind, h->vers);
	fprintf(f, "%s  rdma_credit  %-12u credits asked (call) or granted (reply) (§4.2.3)\n", ind,
		h->credits);
	static const char *const what[] = {
		"the RPC message follows inline",
		"the RPC message is in a chunk",
		"padded RPC message (obsolete)",
		"(obsolete)",
		"an error report",
	};
	fprintf(f, "%s  rdma_proc    %u %-10s %s (§4.2.4)\n", ind, h->proc,
		iwd_rpcrdma_proc_name(h->proc), h->proc < 5 ? what[h->proc] : "");
	if (h->proc == RDMA_DONE) {
		fprintf(f, "%s  no body: RDMA_DONE is not used any more (§4.6.2)\n", ind);
		free(h);
		return;
	}
	if (h->proc == RDMA_ERROR) {
		fprintf(f, "%s  rdma_err     %u %s (§4.5)\n", ind, h->err,
			h->err == ERR_VERS ? "ERR_VERS" : "ERR_CHUNK");
		if (h->err == ERR_VERS)
			fprintf(f, "%s  rdma_vers_low %u rdma_vers_high %u (§4.5.1)\n", ind,
				h->vers_low, h->vers_high);
		free(h);
		return;
	}
	if (h->proc == RDMA_MSGP)
		fprintf(f, "%s  rdma_align %u rdma_thresh %u (§4.6.1: not used any more)\n", ind,
			h->msgp_align, h->msgp_thresh);

	unsigned nsegs = 0;
	for (unsigned i = 0; i < h->n_read && i < RPCRDMA_MAX_READ_CHUNKS; i++)
		nsegs += h->read[i].nseg;
	if (!h->n_read)
		fprintf(f, "%s  Read list    empty (§4.3.1)\n", ind);
	else
		fprintf(f, "%s  Read list    %u chunk%s, %u segment%s (§4.3.1, §3.4.5)\n", ind,
			h->n_read, h->n_read == 1 ? "" : "s", nsegs, nsegs == 1 ? "" : "s");
	for (unsigned i = 0; i < h->n_read && i < RPCRDMA_MAX_READ_CHUNKS; i++) {
		const struct rpcrdma_chunk *c = &h->read[i];
		fprintf(f, "%s    chunk %u: position %u%s, %llu octets\n", ind, i + 1, c->position,
			c->position == 0 ? " (the whole RPC message: a Long Call, §3.5.3)" : "",
			(unsigned long long)rpcrdma_chunk_len(h, c));
		print_chunk(f, ind, h, c);
	}
	if (!h->n_write)
		fprintf(f, "%s  Write list   empty (§4.3.2)\n", ind);
	else
		fprintf(f, "%s  Write list   %u chunk%s (§4.3.2, §3.4.6)\n", ind, h->n_write,
			h->n_write == 1 ? "" : "s");
	for (unsigned i = 0; i < h->n_write && i < RPCRDMA_MAX_WRITE_CHUNKS; i++) {
		const struct rpcrdma_chunk *c = &h->write[i];
		fprintf(f, "%s    chunk %u: %u segment%s, %llu octets\n", ind, i + 1, c->nseg,
			c->nseg == 1 ? "" : "s", (unsigned long long)rpcrdma_chunk_len(h, c));
		print_chunk(f, ind, h, c);
	}
	if (!h->has_reply) {
		fprintf(f, "%s  Reply chunk  none (§4.3.3)\n", ind);
	} else {
		fprintf(f, "%s  Reply chunk  %u segment%s, %llu octets (§4.3.3)\n", ind,
			h->reply.nseg, h->reply.nseg == 1 ? "" : "s",
			(unsigned long long)rpcrdma_chunk_len(h, &h->reply));
		print_chunk(f, ind, h, &h->reply);
	}
	if (h->proc == RDMA_NOMSG) {
		fprintf(f, "%s  no RPC message inline: it is in a chunk (§4.2.4, §3.5.3)\n", ind);
	} else if (h->proc == RDMA_MSG) {
		if (h->hdr_len < n)
			print_rpc(f, p + h->hdr_len, n - h->hdr_len, ind);
		else
			fprintf(f, "%s  no RPC message after the header\n", ind);
	}
	free(h);
}
