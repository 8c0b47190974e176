/* SPDX-License-Identifier: MIT */
/*
 * nfs_v4.h - the NFSv4.x operations (internal to rpcrdma/nfs/): their
 * numbers, and the table nfs_v4.c walks COMPOUNDs with (one row per
 * operation: its name, the XDR of its arguments and of its result, the
 * largest encoding of its result, its part in RFC 8267).
 */
#ifndef IWARP_NFS_V4_H
#define IWARP_NFS_V4_H

#include <stdint.h>

#include "nfs_xdr.h"

/*
 * nfs_opnum4: NFSv4.0 RFC 7530 §16, NFSv4.1 RFC 8881 §18, NFSv4.2 RFC 7862
 * §15, extended attributes RFC 8276 §8.4.  20, 30, 35, 36 and 39 are NFSv4.0
 * only (RFC 8881 §17: MUST NOT be implemented by a 4.1 server).
 */
enum nfs4_op {
	OP_ACCESS = 3,
	OP_CLOSE = 4,
	OP_COMMIT = 5,
	OP_CREATE = 6,
	OP_DELEGPURGE = 7,
	OP_DELEGRETURN = 8,
	OP_GETATTR = 9,
	OP_GETFH = 10,
	OP_LINK = 11,
	OP_LOCK = 12,
	OP_LOCKT = 13,
	OP_LOCKU = 14,
	OP_LOOKUP = 15,
	OP_LOOKUPP = 16,
	OP_NVERIFY = 17,
	OP_OPEN = 18,
	OP_OPENATTR = 19,
	OP_OPEN_CONFIRM = 20,
	OP_OPEN_DOWNGRADE = 21,
	OP_PUTFH = 22,
	OP_PUTPUBFH = 23,
	OP_PUTROOTFH = 24,
	OP_READ = 25,
	OP_READDIR = 26,
	OP_READLINK = 27,
	OP_REMOVE = 28,
	OP_RENAME = 29,
	OP_RENEW = 30,
	OP_RESTOREFH = 31,
	OP_SAVEFH = 32,
	OP_SECINFO = 33,
	OP_SETATTR = 34,
	OP_SETCLIENTID = 35,
	OP_SETCLIENTID_CONFIRM = 36,
	OP_VERIFY = 37,
	OP_WRITE = 38,
	OP_RELEASE_LOCKOWNER = 39,
	/* NFSv4.1 */
	OP_BACKCHANNEL_CTL = 40,
	OP_BIND_CONN_TO_SESSION = 41,
	OP_EXCHANGE_ID = 42,
	OP_CREATE_SESSION = 43,
	OP_DESTROY_SESSION = 44,
	OP_FREE_STATEID = 45,
	OP_GET_DIR_DELEGATION = 46,
	OP_GETDEVICEINFO = 47,
	OP_GETDEVICELIST = 48,
	OP_LAYOUTCOMMIT = 49,
	OP_LAYOUTGET = 50,
	OP_LAYOUTRETURN = 51,
	OP_SECINFO_NO_NAME = 52,
	OP_SEQUENCE = 53,
	OP_SET_SSV = 54,
	OP_TEST_STATEID = 55,
	OP_WANT_DELEGATION = 56,
	OP_DESTROY_CLIENTID = 57,
	OP_RECLAIM_COMPLETE = 58,
	/* NFSv4.2 */
	OP_ALLOCATE = 59,
	OP_COPY = 60,
	OP_COPY_NOTIFY = 61,
	OP_DEALLOCATE = 62,
	OP_IO_ADVISE = 63,
	OP_LAYOUTERROR = 64,
	OP_LAYOUTSTATS = 65,
	OP_OFFLOAD_CANCEL = 66,
	OP_OFFLOAD_STATUS = 67,
	OP_READ_PLUS = 68,
	OP_SEEK = 69,
	OP_WRITE_SAME = 70,
	OP_CLONE = 71,
	/* extended attributes */
	OP_GETXATTR = 72,
	OP_SETXATTR = 73,
	OP_LISTXATTRS = 74,
	OP_REMOVEXATTR = 75,
	/* the resop a server answers an opcode it does not know with, never
	 * sent by a client (RFC 7530 §16.38, RFC 8881 §18.52) */
	OP_ILLEGAL = 10044,
};

#define NFS4_OP_FIRST OP_ACCESS
#define NFS4_OP_LAST  OP_REMOVEXATTR

/* Row flags */
enum {
	/* READ-like (READ, READLINK): the data of the result is DDP-eligible
	 * (RFC 8267 §6.1); a call plans a Write-list slot for it, a reply
	 * reports it as that slot, an invalid one when the operation failed
	 * (RFC 8267 §6.4.1) */
	NFS4_OPF_WRITE_SLOT = 1u << 0,
	/* an argument may be DDP-eligible (RFC 8267 §6.1): WRITE data, CREATE
	 * NF4LNK linkdata; the row's call reports it */
	NFS4_OPF_DDP_ARG = 1u << 1,
	/* the size of the result has no bound the call can tell (RFC 8267 §6.2) */
	NFS4_OPF_UNPREDICTABLE = 1u << 2,
};

/* Skip arguments or a result at the cursor (the caller tests the cursor). */
typedef void nfs4_xdr_fn(struct iw_cursor *c);
/*
 * Skip arguments that matter beyond their size: report a DDP-eligible item,
 * add to p (when not NULL) the part of the reply plan the call decides (a
 * Write-list slot, a count).  Returns 0 (the caller then tests the cursor), a
 * negative code from the item callback, or IW_ERPC_RPC.
 */
typedef int nfs4_call_fn(struct nfs_walk *w, struct nfs_plan *p);

/* The longest list of XDR items in a row. */
#define NFS4_ITEMS_MAX 10

/*
 * An operation.  Its arguments are a list of XDR items (enum v4_item in
 * nfs_v4.c: a word, a stateid, a fattr4, ...; up to the first 0), or args_fn
 * for unions and optional parts, or call; its NFS4_OK result is a list of
 * items or res_fn.  Empty lists and no function: void.
 */
struct nfs4_op_desc {
	const char *name; /* "ACCESS" for OP_ACCESS */
	uint8_t args[NFS4_ITEMS_MAX];
	nfs4_xdr_fn *args_fn;
	nfs4_call_fn *call;	     /* arguments that report an item or size the reply */
	uint8_t res[NFS4_ITEMS_MAX]; /* READ-like: the items before the data */
	nfs4_xdr_fn *res_fn;
	uint32_t bound; /* largest result after resop + status, without the part
			 * call adds and the data of a Write-list slot */
	uint32_t flags; /* NFS4_OPF_* */
};

/* The row of operation `op`, or NULL: not an operation a client sends. */
const struct nfs4_op_desc *nfs4_op_find(uint32_t op);

/* Opcodes nfs_v4_call_ops lists at most. */
#define NFS4_OP_LIST_MAX 16

/* The operations of a COMPOUND call, in order (nfs_v4_call_ops). */
struct nfs4_op_list {
	uint32_t minor; /* minorversion */
	uint32_t count; /* operations the call says it has */
	unsigned n;	/* opcodes in op[] */
	bool complete;	/* all `count` operations walked and listed */
	uint32_t op[NFS4_OP_LIST_MAX];
};

/*
 * List the operations of a COMPOUND4args at body[0..len) (the arguments
 * after the RPC call header), for a tool that names them (iwdump).  fn/arg
 * as in the walks (rpcrdma_ulb.h): NULL takes every DDP-eligible argument
 * as present, a callback tells items moved into Read chunks.  The list ends
 * early, `complete` false, at an opcode without a row (listed: the last
 * entry), at arguments that do not decode, or after NFS4_OP_LIST_MAX.
 * Returns 0, IW_ERPC_RPC if the tag, minor version or count do not decode
 * (nothing listed), or a negative code from fn.
 */
int nfs_v4_call_ops(const uint8_t *body, size_t len, rpcrdma_item_fn fn, void *arg,
		    struct nfs4_op_list *out);

#endif /* IWARP_NFS_V4_H */
