/* SPDX-License-Identifier: MIT */
/*
 * nfs_v4.c - NFSv4.0/4.1/4.2 COMPOUND: DDP-eligible items and reply plans
 * (RFC 8267 §6).
 *
 * Theory of operation.  A COMPOUND4args (RFC 7530 §15.2, RFC 8881 §16.2) is
 * a tag, a minor version and an array of operations, each an opcode followed
 * by that operation's arguments.  There is no length per operation, so to
 * find the items of the n-th operation every argument before it has to be
 * skipped exactly.  The table v4_ops[] (end of this file) has a row for every
 * operation 3..75 (RFC 7530 §16, RFC 8881 §18, RFC 7862 §15, RFC 8276 §8.4):
 * the XDR of its arguments and of its NFS4_OK result, each a list of items
 * (a word, a stateid, a fattr4, ...) or a skipper for unions and loops (the
 * args_*, call_* and res_* functions), the bound of its result and its
 * flags.  An opcode without a row ends the walk with IW_ERPC_RPC: nothing
 * after it can be located, and the transport then reduces nothing.
 *
 * The DDP-eligible arguments (RFC 8267 §6.1) are WRITE4args data and the
 * linkdata of the NF4LNK arm of CREATE's createtype4; call_write and
 * call_create report them, in op order.  The same pass computes the reply
 * plan: per operation resop + status + the bound of its row (the largest arm
 * of its result; the call_* of READDIR, GETDEVICEINFO, GETDEVICELIST,
 * LAYOUTGET, TEST_STATEID, READ_PLUS and LISTXATTRS add what their count
 * argument bounds), a Write-list slot per READ (its count) and per READLINK
 * (4096), and "unpredictable" for results with no bound the call can tell:
 * GETATTR of ACLs, fs_locations, layout and label attributes (RFC 8267 §6.2)
 * and GETXATTR.  A call with an opcode we do not know has no plan at all
 * (IW_ERPC_RPC, above).
 *
 * A COMPOUND4res is a status, the tag and an array of results, each resop +
 * status + (when the status is NFS4_OK) the result.  The server stops at the
 * first operation that fails (RFC 7530 §15.2), so the walk stops there too;
 * a failed READ or READLINK is still reported, as a slot with valid = false,
 * because a Write chunk was paired with it (RFC 8267 §6.4.1).  A successful
 * result is skipped as its row says, and the data of a READ or READLINK
 * result is reported as its slot.
 *
 * All arrays are walked with the cursor as the bound: a count larger than
 * the message ends the loop as soon as the cursor runs out.
 */
#include "nfs_v4.h"

#define NFS4_FHSIZE	  128u
#define NFS4_OPAQUE_LIMIT 1024u
#define NFS4_SESSIONID	  16u
#define NFS4_STATEID	  16u
#define NFS4_VERIFIER	  8u
#define NFS4_TIME	  12u /* nfstime4: int64 seconds, uint32 nseconds */
#define NFS4_CINFO	  20u /* change_info4: atomic, before, after */

/* Reply-plan bounds (octets), the largest arm of each result. */
#define B_BITMAP (4 + 8 * 4)	       /* a bitmap4 of up to 8 words: attributes up to 255 */
#define B_FATTR	 (B_BITMAP + 4 + 4096) /* generous attrlist of bounded attributes */
#define B_NFSACE (3 * 4 + 4 + NFS4_OPAQUE_LIMIT)
/* open_delegation4, largest arm OPEN_DELEGATE_WRITE: type, stateid, recall,
 * nfs_space_limit4 (limitby + u64), nfsace4 */
#define B_DELEG (4 + NFS4_STATEID + 4 + 12 + B_NFSACE)
/* LOCK4denied: offset, length, locktype, lock_owner4 {clientid, owner<1024>} */
#define B_DENIED (8 + 8 + 4 + 8 + 4 + NFS4_OPAQUE_LIMIT)
/* SECINFO4resok: an array of flavors; a handful of GSS triples (oid, qop,
 * service) in practice, the protocol gives no bound: 1024 octets */
#define B_SECINFO 1024u
/* EXCHANGE_ID4resok: clientid, sequenceid, flags, state_protect4_r (SSV arm:
 * two bitmaps, four words, gss handles), server_owner4 (u64 + opaque<1024>),
 * server_scope<1024>, nfs_impl_id4<1> (two strings, nfstime4): about 4.4 KiB
 * with short handle lists; 8192 */
#define B_EXCHANGE_ID 8192u
/* channel_attrs4: six words and rdma_ird<1> */
#define B_CHANNEL (6 * 4 + 4 + 4)
/* SETCLIENTID's NFS4ERR_CLID_INUSE arm: netaddr4 (netid and address strings) */
#define B_SETCLIENTID 1024u
/* COPY_NOTIFY4resok: lease time, stateid, source servers (a short list) */
#define B_COPY_NOTIFY 4096u
/* READ_PLUS: the contents are at most count octets of data, plus segment
 * headers (type + offset + length words); 4096 for the headers */
#define B_READ_PLUS_HDRS 4096u
/* write_response4: stateid<1>, count u64, committed, verifier */
#define B_WRITE_RESPONSE (4 + NFS4_STATEID + 8 + 4 + NFS4_VERIFIER)

/* ---------------------------------------------------------------------- */
/* shared skippers                                                         */
/* ---------------------------------------------------------------------- */

static void sk_stateid(struct iw_cursor *c)
{
	xdr_skip(c, NFS4_STATEID);
}

static void sk_bitmap(struct iw_cursor *c)
{
	(void)xdr_array_fixed(c, XDR_NOMAX, 4);
}

/* fattr4: bitmap4 attrmask, opaque attrlist4<> */
static void sk_fattr(struct iw_cursor *c)
{
	sk_bitmap(c);
	(void)xdr_opaque(c, XDR_NOMAX);
}

static void sk_component(struct iw_cursor *c)
{
	(void)xdr_opaque(c, XDR_NOMAX);
}

/* lock_owner4 / open_owner4: clientid, owner<NFS4_OPAQUE_LIMIT> */
static void sk_owner(struct iw_cursor *c)
{
	(void)xdr_u64(c);
	(void)xdr_opaque(c, NFS4_OPAQUE_LIMIT);
}

static void sk_cinfo(struct iw_cursor *c)
{
	(void)xdr_bool(c);
	(void)xdr_u64(c);
	(void)xdr_u64(c);
}

/* netaddr4: na_r_netid, na_r_addr */
static void sk_netaddr(struct iw_cursor *c)
{
	(void)xdr_opaque(c, XDR_NOMAX);
	(void)xdr_opaque(c, XDR_NOMAX);
}

/* netloc4 (RFC 7862 §4.1.1): NL4_NAME / NL4_URL a string, NL4_NETADDR a netaddr4 */
static void sk_netloc(struct iw_cursor *c)
{
	switch (xdr_u32(c)) {
	case 1:
	case 2:
		(void)xdr_opaque(c, XDR_NOMAX);
		break;
	case 3:
		sk_netaddr(c);
		break;
	default:
		xdr_fail(c);
	}
}

static void sk_netloc_array(struct iw_cursor *c)
{
	uint32_t n = xdr_u32(c);
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++)
		sk_netloc(c);
}

/* callback_sec_parms4<> (RFC 8881 §18.36): AUTH_NONE, AUTH_SYS, RPCSEC_GSS */
static void sk_cb_sec_parms(struct iw_cursor *c)
{
	uint32_t n = xdr_u32(c);
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
		switch (xdr_u32(c)) {
		case 0:
			break;
		case 1: /* authsys_parms: stamp, machinename<255>, uid, gid, gids<16> */
			(void)xdr_u32(c);
			(void)xdr_opaque(c, 255);
			(void)xdr_u64(c);
			(void)xdr_array_fixed(c, 16, 4);
			break;
		case 6: /* gss_cb_handles4: service, two handles */
			(void)xdr_u32(c);
			(void)xdr_opaque(c, XDR_NOMAX);
			(void)xdr_opaque(c, XDR_NOMAX);
			break;
		default:
			xdr_fail(c);
		}
	}
}

static void sk_channel_attrs(struct iw_cursor *c)
{
	xdr_skip(c, 6 * 4);
	(void)xdr_array_fixed(c, 1, 4);
}

/* state_protect_ops4: spo_must_enforce, spo_must_allow */
static void sk_sp4_ops(struct iw_cursor *c)
{
	sk_bitmap(c);
	sk_bitmap(c);
}

static void sk_opaque_array(struct iw_cursor *c)
{
	uint32_t n = xdr_u32(c);
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++)
		(void)xdr_opaque(c, XDR_NOMAX);
}

/* nfs_impl_id4<1>: domain, name, date */
static void sk_impl_id(struct iw_cursor *c)
{
	uint32_t n = xdr_u32(c);
	if (n > 1)
		xdr_fail(c);
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
		(void)xdr_opaque(c, XDR_NOMAX);
		(void)xdr_opaque(c, XDR_NOMAX);
		xdr_skip(c, NFS4_TIME);
	}
}

static void sk_nfsace(struct iw_cursor *c)
{
	xdr_skip(c, 3 * 4);
	(void)xdr_opaque(c, XDR_NOMAX);
}

/* open_delegation4 (RFC 7530 §16.16, RFC 8881 §18.16) */
static void sk_deleg(struct iw_cursor *c)
{
	switch (xdr_u32(c)) {
	case 0: /* OPEN_DELEGATE_NONE */
		break;
	case 1: /* READ: stateid, recall, permissions */
		sk_stateid(c);
		(void)xdr_bool(c);
		sk_nfsace(c);
		break;
	case 2: /* WRITE: stateid, recall, space_limit, permissions */
		sk_stateid(c);
		(void)xdr_bool(c);
		switch (xdr_u32(c)) {
		case 1: /* NFS_LIMIT_SIZE */
			(void)xdr_u64(c);
			break;
		case 2: /* NFS_LIMIT_BLOCKS: num_blocks, bytes_per_block */
			(void)xdr_u64(c);
			break;
		default:
			xdr_fail(c);
		}
		sk_nfsace(c);
		break;
	case 3: /* OPEN_DELEGATE_NONE_EXT (4.1): why_no_delegation4 */
		switch (xdr_u32(c)) {
		case 1: /* WND4_CONTENTION: server_will_push_deleg */
		case 2: /* WND4_RESOURCE: server_will_signal_avail */
			(void)xdr_bool(c);
			break;
		default:
			break;
		}
		break;
	default:
		xdr_fail(c);
	}
}

static void sk_write_response(struct iw_cursor *c)
{
	(void)xdr_array_fixed(c, 1, NFS4_STATEID);
	(void)xdr_u64(c);
	(void)xdr_u32(c);
	xdr_skip(c, NFS4_VERIFIER);
}

/* ---------------------------------------------------------------------- */
/* GETATTR reply bounds                                                    */
/* ---------------------------------------------------------------------- */

/*
 * Attributes whose encoded size the client cannot bound (RFC 8267 §6.2):
 * 12 acl, 24 fs_locations, 58 dacl, 59 sacl, 62 fs_layout_type,
 * 63 layout_hint, 64 layout_type, 67 fs_locations_info, 68 mdsthreshold,
 * 80 sec_label.  Attributes past 82 (xattr_support, RFC 8276) are unknown
 * to us: unbounded too.
 */
static const uint32_t v4_unbounded_attrs[3] = {
	1u << 12 | 1u << 24,
	1u << (58 - 32) | 1u << (59 - 32) | 1u << (62 - 32) | 1u << (63 - 32),
	1u << (64 - 64) | 1u << (67 - 64) | 1u << (68 - 64) | 1u << (80 - 64) |
		~((1u << (83 - 64)) - 1),
};

/* Read a requested bitmap4; true if it asks for an unbounded attribute. */
static bool v4_bitmap_unbounded(struct iw_cursor *c)
{
	uint32_t n = xdr_u32(c);
	bool unb = false;
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
		uint32_t word = xdr_u32(c);
		if (i < 3 ? (word & v4_unbounded_attrs[i]) != 0 : word != 0)
			unb = true;
	}
	return unb;
}

/* ---------------------------------------------------------------------- */
/* XDR items                                                               */
/* ---------------------------------------------------------------------- */

/* The items of a row's argument and result lists (0 ends a list). */
enum v4_item {
	X_END,
	/* fixed size: v4_item_len[] */
	X_U32, /* uint32_t, an enum, a flag word (not checked) */
	X_U64,
	X_STATEID,
	X_VERIFIER,
	X_SESSIONID,
	X_TIME,	    /* nfstime4 */
	X_DEVICEID, /* deviceid4 */
	/* the rest: v4_skip_items() */
	X_BOOL,	    /* 0 or 1, anything else does not decode */
	X_OPAQUE,   /* opaque<> / a UTF-8 string: component4, a value, a digest */
	X_FH,	    /* nfs_fh4 */
	X_OWNER,    /* open_owner4 / lock_owner4 */
	X_BITMAP,   /* bitmap4 */
	X_STATUSES, /* nfsstat4<> */
	X_FATTR,
	X_CINFO,	  /* change_info4 */
	X_DELEG,	  /* open_delegation4 */
	X_CHANNEL,	  /* channel_attrs4 */
	X_CB_SEC,	  /* callback_sec_parms4<> */
	X_NETLOC,	  /* netloc4 */
	X_NETLOCS,	  /* netloc4<> */
	X_WRITE_RESPONSE, /* write_response4 */
	X_OPAQUES,	  /* opaque<> <>: names */
	X_DEVICEIDS,	  /* deviceid4<> */
	X_DEVICE_ERRORS,  /* device_error4<>: deviceid, status, opnum */
	X_OPT_U64,	  /* newoffset4, newsize4: a bool, if true a u64 */
	X_OPT_TIME,	  /* newtime4: a bool, if true an nfstime4 */
	X_OPT_STATEID,	  /* layoutreturn_stateid: a bool, if true a stateid */
};

static const uint8_t v4_item_len[X_DEVICEID + 1] = {
	[X_U32] = 4,
	[X_U64] = 8,
	[X_STATEID] = NFS4_STATEID,
	[X_VERIFIER] = NFS4_VERIFIER,
	[X_SESSIONID] = NFS4_SESSIONID,
	[X_TIME] = NFS4_TIME,
	[X_DEVICEID] = 16,
};

static void v4_skip_items(struct iw_cursor *c, const uint8_t *x)
{
	for (unsigned i = 0; i < NFS4_ITEMS_MAX && x[i] != X_END; i++) {
		if (x[i] < IW_ARRAY_SIZE(v4_item_len)) {
			xdr_skip(c, v4_item_len[x[i]]);
			continue;
		}
		switch ((enum v4_item)x[i]) {
		case X_BOOL:
			(void)xdr_bool(c);
			break;
		case X_OPAQUE:
			(void)xdr_opaque(c, XDR_NOMAX);
			break;
		case X_FH:
			(void)xdr_opaque(c, NFS4_FHSIZE);
			break;
		case X_OWNER:
			sk_owner(c);
			break;
		case X_BITMAP:
		case X_STATUSES:
			sk_bitmap(c);
			break;
		case X_FATTR:
			sk_fattr(c);
			break;
		case X_CINFO:
			sk_cinfo(c);
			break;
		case X_DELEG:
			sk_deleg(c);
			break;
		case X_CHANNEL:
			sk_channel_attrs(c);
			break;
		case X_CB_SEC:
			sk_cb_sec_parms(c);
			break;
		case X_NETLOC:
			sk_netloc(c);
			break;
		case X_NETLOCS:
			sk_netloc_array(c);
			break;
		case X_WRITE_RESPONSE:
			sk_write_response(c);
			break;
		case X_OPAQUES:
			sk_opaque_array(c);
			break;
		case X_DEVICEIDS:
			(void)xdr_array_fixed(c, XDR_NOMAX, 16);
			break;
		case X_DEVICE_ERRORS:
			(void)xdr_array_fixed(c, XDR_NOMAX, 16 + 4 + 4);
			break;
		case X_OPT_U64:
			if (xdr_bool(c))
				(void)xdr_u64(c);
			break;
		case X_OPT_TIME:
			if (xdr_bool(c))
				xdr_skip(c, NFS4_TIME);
			break;
		case X_OPT_STATEID:
			if (xdr_bool(c))
				sk_stateid(c);
			break;
		case X_END: /* and the fixed-size items, above */
		case X_U32:
		case X_U64:
		case X_STATEID:
		case X_VERIFIER:
		case X_SESSIONID:
		case X_TIME:
		case X_DEVICEID:
			break;
		}
	}
}

/* ---------------------------------------------------------------------- */
/* arguments with unions                                                   */
/* ---------------------------------------------------------------------- */

/* LOCK4args: locktype, reclaim, offset, length, locker4 */
static void args_lock(struct iw_cursor *c)
{
	(void)xdr_u32(c);
	(void)xdr_bool(c);
	(void)xdr_u64(c);
	(void)xdr_u64(c);
	if (xdr_bool(c)) { /* open_to_lock_owner4: seqid, stateid, lock_seqid, owner */
		(void)xdr_u32(c);
		sk_stateid(c);
		(void)xdr_u32(c);
		sk_owner(c);
	} else { /* exist_lock_owner4: stateid, seqid */
		sk_stateid(c);
		(void)xdr_u32(c);
	}
}

/* OPEN4args: seqid, share_access, share_deny, open_owner4, openflag4, open_claim4 */
static void args_open(struct iw_cursor *c)
{
	(void)xdr_u32(c); /* seqid */
	(void)xdr_u32(c); /* share_access */
	(void)xdr_u32(c); /* share_deny */
	sk_owner(c);
	switch (xdr_u32(c)) { /* openflag4 */
	case 0:		      /* OPEN4_NOCREATE */
		break;
	case 1: /* OPEN4_CREATE: createhow4 */
		switch (xdr_u32(c)) {
		case 0: /* UNCHECKED4 */
		case 1: /* GUARDED4 */
			sk_fattr(c);
			break;
		case 2: /* EXCLUSIVE4 */
			xdr_skip(c, NFS4_VERIFIER);
			break;
		case 3: /* EXCLUSIVE4_1: verifier, attrs */
			xdr_skip(c, NFS4_VERIFIER);
			sk_fattr(c);
			break;
		default:
			xdr_fail(c);
		}
		break;
	default:
		xdr_fail(c);
	}
	switch (xdr_u32(c)) { /* open_claim4 */
	case 0:		      /* CLAIM_NULL: file */
	case 3:		      /* CLAIM_DELEGATE_PREV: file_delegate_prev */
		sk_component(c);
		break;
	case 1: /* CLAIM_PREVIOUS: delegate_type */
		(void)xdr_u32(c);
		break;
	case 2: /* CLAIM_DELEGATE_CUR: stateid, file */
		sk_stateid(c);
		sk_component(c);
		break;
	case 4: /* CLAIM_FH */
	case 6: /* CLAIM_DELEG_PREV_FH */
		break;
	case 5: /* CLAIM_DELEG_CUR_FH: stateid */
		sk_stateid(c);
		break;
	default:
		xdr_fail(c);
	}
}

/* SETCLIENTID4args: nfs_client_id4 {verifier, id<1024>}, cb_client4
 * {cb_program, netaddr4}, callback_ident */
static void args_setclientid(struct iw_cursor *c)
{
	xdr_skip(c, NFS4_VERIFIER);
	(void)xdr_opaque(c, NFS4_OPAQUE_LIMIT);
	(void)xdr_u32(c);
	sk_netaddr(c);
	(void)xdr_u32(c);
}

/* EXCHANGE_ID4args: client_owner4 {verifier, ownerid<1024>}, flags,
 * state_protect4_a, client_impl_id<1> */
static void args_exchange_id(struct iw_cursor *c)
{
	xdr_skip(c, NFS4_VERIFIER);
	(void)xdr_opaque(c, NFS4_OPAQUE_LIMIT);
	(void)xdr_u32(c);
	switch (xdr_u32(c)) {
	case 0: /* SP4_NONE */
		break;
	case 1: /* SP4_MACH_CRED */
		sk_sp4_ops(c);
		break;
	case 2: /* SP4_SSV: ops, hash algs, encr algs, window, num handles */
		sk_sp4_ops(c);
		sk_opaque_array(c);
		sk_opaque_array(c);
		xdr_skip(c, 8);
		break;
	default:
		xdr_fail(c);
	}
	sk_impl_id(c);
}

/* LAYOUTRETURN4args: reclaim, layout_type, iomode, layoutreturn4 */
static void args_layoutreturn(struct iw_cursor *c)
{
	(void)xdr_bool(c);
	xdr_skip(c, 8);
	switch (xdr_u32(c)) {
	case 1: /* LAYOUTRETURN4_FILE: offset, length, stateid, body */
		xdr_skip(c, 16);
		sk_stateid(c);
		(void)xdr_opaque(c, XDR_NOMAX);
		break;
	case 2: /* FSID */
	case 3: /* ALL */
		break;
	default:
		xdr_fail(c);
	}
}

/* WANT_DELEGATION4args: want, deleg_claim4 */
static void args_want_delegation(struct iw_cursor *c)
{
	(void)xdr_u32(c);
	switch (xdr_u32(c)) {
	case 1: /* CLAIM_PREVIOUS */
		(void)xdr_u32(c);
		break;
	case 4: /* CLAIM_FH */
	case 6: /* CLAIM_DELEG_PREV_FH */
		break;
	default:
		xdr_fail(c);
	}
}

/* ---------------------------------------------------------------------- */
/* arguments that report an item or size the reply                         */
/* ---------------------------------------------------------------------- */

static void plan_add(struct nfs_plan *p, uint64_t n)
{
	if (p)
		nfs_plan_add(p, n);
}

/* CREATE4args: createtype4 objtype, objname, createattrs; the linkdata of the
 * NF4LNK arm is DDP-eligible */
static int call_create(struct nfs_walk *w, struct nfs_plan *p)
{
	struct iw_cursor *c = &w->c;
	switch (xdr_u32(c)) {
	case 5: { /* NF4LNK: linkdata is DDP-eligible */
		if (xdr_bad(c))
			return IW_ERPC_RPC;
		int r = nfs_walk_item(w, XDR_NOMAX);
		if (r)
			return r;
		break;
	}
	case 3: /* NF4BLK, NF4CHR: specdata4 */
	case 4:
		(void)xdr_u64(c);
		break;
	default: /* NF4SOCK, NF4FIFO, NF4DIR and the rest: void */
		break;
	}
	sk_component(c);
	sk_fattr(c);
	return 0;
}

/* GETATTR4args: attr_request; some attributes have no bound */
static int call_getattr(struct nfs_walk *w, struct nfs_plan *p)
{
	if (v4_bitmap_unbounded(&w->c) && p)
		nfs_plan_unpredictable(p);
	return 0;
}

/* READ4args, READ_PLUS4args: stateid, offset, count; returns count */
static uint32_t sk_read_args(struct iw_cursor *c)
{
	sk_stateid(c);
	(void)xdr_u64(c);
	return xdr_u32(c);
}

/* READ4args: the data<count> of the result is a Write-list slot */
static int call_read(struct nfs_walk *w, struct nfs_plan *p)
{
	uint32_t count = sk_read_args(&w->c);
	if (p && !xdr_bad(&w->c))
		nfs_plan_slot(p, nfs_plan_clamp(count));
	return 0;
}

/* READDIR4args: cookie, cookieverf, dircount, maxcount, attr_request;
 * maxcount bounds the entries of READDIR4resok */
static int call_readdir(struct nfs_walk *w, struct nfs_plan *p)
{
	xdr_skip(&w->c, 8 + NFS4_VERIFIER + 4);
	uint32_t maxcount = xdr_u32(&w->c);
	sk_bitmap(&w->c);
	plan_add(p, nfs_plan_clamp(maxcount));
	return 0;
}

/* READLINK (no arguments): the link of the result is a Write-list slot */
static int call_readlink(struct nfs_walk *w, struct nfs_plan *p)
{
	if (p)
		nfs_plan_slot(p, NFS_PLAN_PATH_MAX);
	return 0;
}

/* WRITE4args: stateid, offset, stable, data (DDP-eligible) */
static int call_write(struct nfs_walk *w, struct nfs_plan *p)
{
	xdr_skip(&w->c, NFS4_STATEID + 8 + 4);
	if (xdr_bad(&w->c))
		return IW_ERPC_RPC;
	return nfs_walk_item(w, XDR_NOMAX);
}

/* GETDEVICEINFO4args: deviceid, layout_type, maxcount, notify_types;
 * maxcount bounds the device address */
static int call_getdeviceinfo(struct nfs_walk *w, struct nfs_plan *p)
{
	xdr_skip(&w->c, 16 + 4);
	uint32_t maxcount = xdr_u32(&w->c);
	sk_bitmap(&w->c);
	plan_add(p, nfs_plan_clamp(maxcount));
	return 0;
}

/* GETDEVICELIST4args: layout_type, maxdevices, cookie, cookieverf; a
 * deviceid (16 octets) per device */
static int call_getdevicelist(struct nfs_walk *w, struct nfs_plan *p)
{
	(void)xdr_u32(&w->c);
	uint32_t maxdevices = xdr_u32(&w->c);
	xdr_skip(&w->c, 8 + NFS4_VERIFIER);
	plan_add(p, 16 * (uint64_t)maxdevices);
	return 0;
}

/* LAYOUTGET4args: signal_layout_avail, layout_type, iomode, offset, length,
 * minlength, stateid, maxcount; maxcount bounds the layouts */
static int call_layoutget(struct nfs_walk *w, struct nfs_plan *p)
{
	(void)xdr_bool(&w->c);
	xdr_skip(&w->c, 4 + 4 + 3 * 8 + NFS4_STATEID);
	plan_add(p, nfs_plan_clamp(xdr_u32(&w->c)));
	return 0;
}

/* TEST_STATEID4args: stateids<>; a status per stateid */
static int call_test_stateid(struct nfs_walk *w, struct nfs_plan *p)
{
	uint32_t count = xdr_array_fixed(&w->c, XDR_NOMAX, NFS4_STATEID);
	plan_add(p, 4 * (uint64_t)count);
	return 0;
}

/* READ_PLUS4args: count bounds the data (inline: not DDP-eligible) */
static int call_read_plus(struct nfs_walk *w, struct nfs_plan *p)
{
	plan_add(p, nfs_plan_clamp(sk_read_args(&w->c)));
	return 0;
}

/* LISTXATTRS4args: cookie, maxcount; maxcount bounds the names */
static int call_listxattrs(struct nfs_walk *w, struct nfs_plan *p)
{
	(void)xdr_u64(&w->c);
	plan_add(p, nfs_plan_clamp(xdr_u32(&w->c)));
	return 0;
}

/* ---------------------------------------------------------------------- */
/* results with unions and loops                                           */
/* ---------------------------------------------------------------------- */

/* READDIR4resok: cookieverf, dirlist4 {entry4 *entries, eof} */
static void res_readdir(struct iw_cursor *c)
{
	xdr_skip(c, NFS4_VERIFIER);
	while (xdr_bool(c) && !xdr_bad(c)) {
		(void)xdr_u64(c); /* cookie */
		sk_component(c);
		sk_fattr(c);
	}
	(void)xdr_bool(c);
}

/* SECINFO4resok, SECINFO_NO_NAME4resok: secinfo4<> */
static void res_secinfo(struct iw_cursor *c)
{
	uint32_t n = xdr_u32(c);
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
		if (xdr_u32(c) == 6) { /* RPCSEC_GSS: oid, qop, service */
			(void)xdr_opaque(c, XDR_NOMAX);
			xdr_skip(c, 8);
		}
	}
}

/* EXCHANGE_ID4resok: clientid, sequenceid, flags, state_protect4_r,
 * server_owner4, server_scope, server_impl_id<1> */
static void res_exchange_id(struct iw_cursor *c)
{
	xdr_skip(c, 8 + 4 + 4);
	switch (xdr_u32(c)) {
	case 0:
		break;
	case 1:
		sk_sp4_ops(c);
		break;
	case 2: /* ssv_prot_info4: ops, hash, encr, ssv_len, window, handles<> */
		sk_sp4_ops(c);
		xdr_skip(c, 4 * 4);
		sk_opaque_array(c);
		break;
	default:
		xdr_fail(c);
	}
	(void)xdr_u64(c); /* server_owner4 */
	(void)xdr_opaque(c, NFS4_OPAQUE_LIMIT);
	(void)xdr_opaque(c, NFS4_OPAQUE_LIMIT); /* server_scope */
	sk_impl_id(c);
}

/* GET_DIR_DELEGATION4res_non_fatal: a status union */
static void res_get_dir_delegation(struct iw_cursor *c)
{
	switch (xdr_u32(c)) {
	case 0: /* GDD4_OK: cookieverf, stateid, notification, child, dir attrs */
		xdr_skip(c, NFS4_VERIFIER + NFS4_STATEID);
		sk_bitmap(c);
		sk_bitmap(c);
		sk_bitmap(c);
		break;
	case 1: /* GDD4_UNAVAIL: will_signal_deleg_avail */
		(void)xdr_bool(c);
		break;
	default:
		xdr_fail(c);
	}
}

/* LAYOUTGET4resok: return_on_close, stateid, layout4<> */
static void res_layoutget(struct iw_cursor *c)
{
	(void)xdr_bool(c);
	sk_stateid(c);
	uint32_t n = xdr_u32(c);
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
		xdr_skip(c, 8 + 8 + 4 + 4); /* offset, length, iomode, type */
		(void)xdr_opaque(c, XDR_NOMAX);
	}
}

/* OFFLOAD_STATUS4resok: count, complete<1> */
static void res_offload_status(struct iw_cursor *c)
{
	(void)xdr_u64(c);
	(void)xdr_array_fixed(c, 1, 4);
}

/* READ_PLUS4resok: eof, read_plus_content<> */
static void res_read_plus(struct iw_cursor *c)
{
	(void)xdr_bool(c);
	uint32_t n = xdr_u32(c);
	for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
		switch (xdr_u32(c)) {
		case 0: /* NFS4_CONTENT_DATA: offset, data */
			(void)xdr_u64(c);
			(void)xdr_opaque(c, XDR_NOMAX);
			break;
		case 1: /* NFS4_CONTENT_HOLE: offset, length */
			xdr_skip(c, 16);
			break;
		default:
			xdr_fail(c);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* the operations                                                          */
/* ---------------------------------------------------------------------- */

/*
 * One row per operation (struct nfs4_op_desc in nfs_v4.h):
 *   .args    its arguments: a list of XDR items (enum v4_item above), or
 *   .args_fn a skipper (unions, optional parts), or
 *   .call    a skipper for arguments that matter beyond their size (a
 *            DDP-eligible item, a count that sizes the result)
 *   .res     its NFS4_OK result: a list of items (READ-like: before the
 *            data), or
 *   .res_fn  a skipper
 *   .bound   the largest encoding of its result after resop + status (a
 *            "+ x" in the comment: call adds x)
 *   .flags   NFS4_OPF_* (nfs_v4.h)
 * Each comment gives the RFC sections and "arguments -> result".
 */
#define V4_OP(op_, ...) [OP_##op_] = {.name = #op_, __VA_ARGS__}

static const struct nfs4_op_desc v4_ops[NFS4_OP_LAST + 1] = {
	/* RFC 7530 §16.1, RFC 8881 §18.1: access -> supported, access */
	V4_OP(ACCESS, .args = {X_U32}, .res = {X_U32, X_U32}, .bound = 8),
	/* RFC 7530 §16.2, RFC 8881 §18.2: seqid, open_stateid -> open_stateid */
	V4_OP(CLOSE, .args = {X_U32, X_STATEID}, .res = {X_STATEID}, .bound = NFS4_STATEID),
	/* RFC 7530 §16.3, RFC 8881 §18.3: offset, count -> writeverf */
	V4_OP(COMMIT, .args = {X_U64, X_U32}, .res = {X_VERIFIER}, .bound = NFS4_VERIFIER),
	/* RFC 7530 §16.4, RFC 8881 §18.4: objtype, objname, createattrs -> cinfo, attrset */
	V4_OP(CREATE, .call = call_create, .res = {X_CINFO, X_BITMAP},
	      .bound = NFS4_CINFO + B_BITMAP, .flags = NFS4_OPF_DDP_ARG),
	/* RFC 7530 §16.5, RFC 8881 §18.5: clientid -> void */
	V4_OP(DELEGPURGE, .args = {X_U64}),
	/* RFC 7530 §16.6, RFC 8881 §18.6: deleg_stateid -> void */
	V4_OP(DELEGRETURN, .args = {X_STATEID}),
	/* RFC 7530 §16.7, RFC 8881 §18.7: attr_request -> obj_attributes */
	V4_OP(GETATTR, .call = call_getattr, .res = {X_FATTR}, .bound = B_FATTR),
	/* RFC 7530 §16.8, RFC 8881 §18.8: void -> object */
	V4_OP(GETFH, .res = {X_FH}, .bound = 4 + NFS4_FHSIZE),
	/* RFC 7530 §16.9, RFC 8881 §18.9: newname -> cinfo */
	V4_OP(LINK, .args = {X_OPAQUE}, .res = {X_CINFO}, .bound = NFS4_CINFO),
	/* RFC 7530 §16.10, RFC 8881 §18.10: locktype, reclaim, offset, length, locker
	 * -> lock_stateid (NFS4ERR_DENIED: denied) */
	V4_OP(LOCK, .args_fn = args_lock, .res = {X_STATEID}, .bound = B_DENIED),
	/* RFC 7530 §16.11, RFC 8881 §18.11: locktype, offset, length, owner
	 * -> void (NFS4ERR_DENIED: denied) */
	V4_OP(LOCKT, .args = {X_U32, X_U64, X_U64, X_OWNER}, .bound = B_DENIED),
	/* RFC 7530 §16.12, RFC 8881 §18.12: locktype, seqid, lock_stateid, offset,
	 * length -> lock_stateid */
	V4_OP(LOCKU, .args = {X_U32, X_U32, X_STATEID, X_U64, X_U64}, .res = {X_STATEID},
	      .bound = NFS4_STATEID),
	/* RFC 7530 §16.13, RFC 8881 §18.13: objname -> void */
	V4_OP(LOOKUP, .args = {X_OPAQUE}),
	/* RFC 7530 §16.14, RFC 8881 §18.14: void -> void */
	V4_OP(LOOKUPP),
	/* RFC 7530 §16.15, RFC 8881 §18.15: obj_attributes -> void */
	V4_OP(NVERIFY, .args = {X_FATTR}),
	/* RFC 7530 §16.16, RFC 8881 §18.16: seqid, share_access, share_deny, owner,
	 * openhow, claim -> stateid, cinfo, rflags, attrset, delegation */
	V4_OP(OPEN, .args_fn = args_open, .res = {X_STATEID, X_CINFO, X_U32, X_BITMAP, X_DELEG},
	      .bound = NFS4_STATEID + NFS4_CINFO + 4 + B_BITMAP + B_DELEG),
	/* RFC 7530 §16.17, RFC 8881 §18.17: createdir -> void */
	V4_OP(OPENATTR, .args = {X_BOOL}),
	/* RFC 7530 §16.18: open_stateid, seqid -> open_stateid */
	V4_OP(OPEN_CONFIRM, .args = {X_STATEID, X_U32}, .res = {X_STATEID}, .bound = NFS4_STATEID),
	/* RFC 7530 §16.19, RFC 8881 §18.18: open_stateid, seqid, share_access,
	 * share_deny -> open_stateid */
	V4_OP(OPEN_DOWNGRADE, .args = {X_STATEID, X_U32, X_U32, X_U32}, .res = {X_STATEID},
	      .bound = NFS4_STATEID),
	/* RFC 7530 §16.20, RFC 8881 §18.19: object -> void */
	V4_OP(PUTFH, .args = {X_FH}),
	/* RFC 7530 §16.21, RFC 8881 §18.20: void -> void */
	V4_OP(PUTPUBFH),
	/* RFC 7530 §16.22, RFC 8881 §18.21: void -> void */
	V4_OP(PUTROOTFH),
	/* RFC 7530 §16.23, RFC 8881 §18.22: stateid, offset, count -> eof, data
	 * (a slot; the bound: eof, its length word and padding) */
	V4_OP(READ, .call = call_read, .res = {X_BOOL}, .bound = 4 + 4 + 4,
	      .flags = NFS4_OPF_WRITE_SLOT),
	/* RFC 7530 §16.24, RFC 8881 §18.23: cookie, cookieverf, dircount, maxcount,
	 * attr_request -> cookieverf, entries, eof (+ maxcount) */
	V4_OP(READDIR, .call = call_readdir, .res_fn = res_readdir, .bound = NFS4_VERIFIER + 8),
	/* RFC 7530 §16.25, RFC 8881 §18.24: void -> link (a slot; the bound: its
	 * length word and padding) */
	V4_OP(READLINK, .call = call_readlink, .bound = 4 + 4, .flags = NFS4_OPF_WRITE_SLOT),
	/* RFC 7530 §16.26, RFC 8881 §18.25: target -> cinfo */
	V4_OP(REMOVE, .args = {X_OPAQUE}, .res = {X_CINFO}, .bound = NFS4_CINFO),
	/* RFC 7530 §16.27, RFC 8881 §18.26: oldname, newname -> source_cinfo,
	 * target_cinfo */
	V4_OP(RENAME, .args = {X_OPAQUE, X_OPAQUE}, .res = {X_CINFO, X_CINFO},
	      .bound = 2 * NFS4_CINFO),
	/* RFC 7530 §16.28: clientid -> void */
	V4_OP(RENEW, .args = {X_U64}),
	/* RFC 7530 §16.29, RFC 8881 §18.27: void -> void */
	V4_OP(RESTOREFH),
	/* RFC 7530 §16.30, RFC 8881 §18.28: void -> void */
	V4_OP(SAVEFH),
	/* RFC 7530 §16.31, RFC 8881 §18.29: name -> secinfo4<> */
	V4_OP(SECINFO, .args = {X_OPAQUE}, .res_fn = res_secinfo, .bound = B_SECINFO),
	/* RFC 7530 §16.32, RFC 8881 §18.30: stateid, obj_attributes -> attrsset */
	V4_OP(SETATTR, .args = {X_STATEID, X_FATTR}, .res = {X_BITMAP}, .bound = B_BITMAP),
	/* RFC 7530 §16.33: client, callback, callback_ident -> clientid,
	 * setclientid_confirm (NFS4ERR_CLID_INUSE: client_using) */
	V4_OP(SETCLIENTID, .args_fn = args_setclientid, .res = {X_U64, X_VERIFIER},
	      .bound = B_SETCLIENTID),
	/* RFC 7530 §16.34: clientid, setclientid_confirm -> void */
	V4_OP(SETCLIENTID_CONFIRM, .args = {X_U64, X_VERIFIER}),
	/* RFC 7530 §16.35, RFC 8881 §18.31: obj_attributes -> void */
	V4_OP(VERIFY, .args = {X_FATTR}),
	/* RFC 7530 §16.36, RFC 8881 §18.32: stateid, offset, stable, data -> count,
	 * committed, writeverf */
	V4_OP(WRITE, .call = call_write, .res = {X_U32, X_U32, X_VERIFIER},
	      .bound = 4 + 4 + NFS4_VERIFIER, .flags = NFS4_OPF_DDP_ARG),
	/* RFC 7530 §16.37: lock_owner -> void */
	V4_OP(RELEASE_LOCKOWNER, .args = {X_OWNER}),
	/* RFC 8881 §18.33: cb_program, sec_parms -> void */
	V4_OP(BACKCHANNEL_CTL, .args = {X_U32, X_CB_SEC}),
	/* RFC 8881 §18.34: sessid, dir, use_conn_in_rdma_mode -> the same */
	V4_OP(BIND_CONN_TO_SESSION, .args = {X_SESSIONID, X_U32, X_U32},
	      .res = {X_SESSIONID, X_U32, X_BOOL}, .bound = NFS4_SESSIONID + 8),
	/* RFC 8881 §18.35: clientowner, flags, state_protect, client_impl_id
	 * -> clientid, sequenceid, flags, state_protect, server_owner,
	 *    server_scope, server_impl_id */
	V4_OP(EXCHANGE_ID, .args_fn = args_exchange_id, .res_fn = res_exchange_id,
	      .bound = B_EXCHANGE_ID),
	/* RFC 8881 §18.36: clientid, sequence, flags, fore_chan_attrs,
	 * back_chan_attrs, cb_program, sec_parms -> sessionid, sequence, flags,
	 * fore_chan_attrs, back_chan_attrs */
	V4_OP(CREATE_SESSION, .args = {X_U64, X_U32, X_U32, X_CHANNEL, X_CHANNEL, X_U32, X_CB_SEC},
	      .res = {X_SESSIONID, X_U32, X_U32, X_CHANNEL, X_CHANNEL},
	      .bound = NFS4_SESSIONID + 8 + 2 * B_CHANNEL),
	/* RFC 8881 §18.37: sessionid -> void */
	V4_OP(DESTROY_SESSION, .args = {X_SESSIONID}),
	/* RFC 8881 §18.38: stateid -> void */
	V4_OP(FREE_STATEID, .args = {X_STATEID}),
	/* RFC 8881 §18.39: signal_deleg_avail, notification_types, child and dir
	 * attr delays, child and dir attributes -> GDD4_OK: cookieverf, stateid,
	 * notification, child_attributes, dir_attributes | GDD4_UNAVAIL */
	V4_OP(GET_DIR_DELEGATION, .args = {X_BOOL, X_BITMAP, X_TIME, X_TIME, X_BITMAP, X_BITMAP},
	      .res_fn = res_get_dir_delegation,
	      .bound = 4 + NFS4_VERIFIER + NFS4_STATEID + 3 * B_BITMAP),
	/* RFC 8881 §18.40: deviceid, layout_type, maxcount, notify_types
	 * -> device_addr {type, body}, notification (+ maxcount) */
	V4_OP(GETDEVICEINFO, .call = call_getdeviceinfo, .res = {X_U32, X_OPAQUE, X_BITMAP},
	      .bound = 4 + 4 + B_BITMAP),
	/* RFC 8881 §18.41: layout_type, maxdevices, cookie, cookieverf -> cookie,
	 * cookieverf, deviceid_list, eof (+ 16 per device) */
	V4_OP(GETDEVICELIST, .call = call_getdevicelist,
	      .res = {X_U64, X_VERIFIER, X_DEVICEIDS, X_BOOL}, .bound = 8 + NFS4_VERIFIER + 4 + 4),
	/* RFC 8881 §18.42: offset, length, reclaim, stateid, last_write_offset,
	 * time_modify, layoutupdate {type, body} -> newsize */
	V4_OP(LAYOUTCOMMIT,
	      .args = {X_U64, X_U64, X_BOOL, X_STATEID, X_OPT_U64, X_OPT_TIME, X_U32, X_OPAQUE},
	      .res = {X_OPT_U64}, .bound = 12),
	/* RFC 8881 §18.43: signal_layout_avail, layout_type, iomode, offset, length,
	 * minlength, stateid, maxcount -> return_on_close, stateid, layout
	 * (+ maxcount; 64 for the array and the NFS4ERR_LAYOUTTRYLATER arm) */
	V4_OP(LAYOUTGET, .call = call_layoutget, .res_fn = res_layoutget,
	      .bound = 4 + NFS4_STATEID + 64),
	/* RFC 8881 §18.44: reclaim, layout_type, iomode, layoutreturn -> stateid<1> */
	V4_OP(LAYOUTRETURN, .args_fn = args_layoutreturn, .res = {X_OPT_STATEID},
	      .bound = 4 + NFS4_STATEID),
	/* RFC 8881 §18.45: style -> secinfo4<> */
	V4_OP(SECINFO_NO_NAME, .args = {X_U32}, .res_fn = res_secinfo, .bound = B_SECINFO),
	/* RFC 8881 §18.46: sessionid, sequenceid, slotid, highest_slotid, cachethis
	 * -> sessionid, sequenceid, slotid, highest_slotid, target_highest_slotid,
	 *    status_flags */
	V4_OP(SEQUENCE, .args = {X_SESSIONID, X_U32, X_U32, X_U32, X_BOOL},
	      .res = {X_SESSIONID, X_U32, X_U32, X_U32, X_U32, X_U32},
	      .bound = NFS4_SESSIONID + 5 * 4),
	/* RFC 8881 §18.47: ssv, digest -> digest */
	V4_OP(SET_SSV, .args = {X_OPAQUE, X_OPAQUE}, .res = {X_OPAQUE},
	      .bound = 4 + NFS4_OPAQUE_LIMIT),
	/* RFC 8881 §18.48: stateids -> status_codes (+ 4 per stateid) */
	V4_OP(TEST_STATEID, .call = call_test_stateid, .res = {X_STATUSES}, .bound = 4),
	/* RFC 8881 §18.49: want, claim -> open_delegation4 */
	V4_OP(WANT_DELEGATION, .args_fn = args_want_delegation, .res = {X_DELEG}, .bound = B_DELEG),
	/* RFC 8881 §18.50: clientid -> void */
	V4_OP(DESTROY_CLIENTID, .args = {X_U64}),
	/* RFC 8881 §18.51: one_fs -> void */
	V4_OP(RECLAIM_COMPLETE, .args = {X_BOOL}),
	/* RFC 7862 §15.1: stateid, offset, length -> void */
	V4_OP(ALLOCATE, .args = {X_STATEID, X_U64, X_U64}),
	/* RFC 7862 §15.2: src_stateid, dst_stateid, src_offset, dst_offset, count,
	 * consecutive, synchronous, src_servers -> write_response, requirements */
	V4_OP(COPY, .args = {X_STATEID, X_STATEID, X_U64, X_U64, X_U64, X_BOOL, X_BOOL, X_NETLOCS},
	      .res = {X_WRITE_RESPONSE, X_BOOL, X_BOOL}, .bound = B_WRITE_RESPONSE + 8),
	/* RFC 7862 §15.3: src_stateid, destination -> lease_time, stateid,
	 * source_server */
	V4_OP(COPY_NOTIFY, .args = {X_STATEID, X_NETLOC}, .res = {X_TIME, X_STATEID, X_NETLOCS},
	      .bound = B_COPY_NOTIFY),
	/* RFC 7862 §15.4: stateid, offset, length -> void */
	V4_OP(DEALLOCATE, .args = {X_STATEID, X_U64, X_U64}),
	/* RFC 7862 §15.5: stateid, offset, count, hints -> hints */
	V4_OP(IO_ADVISE, .args = {X_STATEID, X_U64, X_U64, X_BITMAP}, .res = {X_BITMAP},
	      .bound = B_BITMAP),
	/* RFC 7862 §15.6: offset, length, stateid, errors -> void */
	V4_OP(LAYOUTERROR, .args = {X_U64, X_U64, X_STATEID, X_DEVICE_ERRORS}),
	/* RFC 7862 §15.7: offset, length, stateid, read {count, bytes}, write
	 * {count, bytes}, deviceid, layoutupdate {type, body} -> void */
	V4_OP(LAYOUTSTATS, .args = {X_U64, X_U64, X_STATEID, X_U64, X_U64, X_U64, X_U64, X_DEVICEID,
				    X_U32, X_OPAQUE}),
	/* RFC 7862 §15.8: stateid -> void */
	V4_OP(OFFLOAD_CANCEL, .args = {X_STATEID}),
	/* RFC 7862 §15.9: stateid -> count, complete<1> */
	V4_OP(OFFLOAD_STATUS, .args = {X_STATEID}, .res_fn = res_offload_status,
	      .bound = 8 + 4 + 4),
	/* RFC 7862 §15.10: stateid, offset, count -> eof, contents (+ count; 4096
	 * for the segment headers) */
	V4_OP(READ_PLUS, .call = call_read_plus, .res_fn = res_read_plus,
	      .bound = 4 + 4 + B_READ_PLUS_HDRS),
	/* RFC 7862 §15.11: stateid, offset, what -> eof, offset */
	V4_OP(SEEK, .args = {X_STATEID, X_U64, X_U32}, .res = {X_BOOL, X_U64}, .bound = 12),
	/* RFC 7862 §15.12: stateid, stable, adb {offset, block_size, block_count,
	 * reloff_blocknum, block_num, reloff_pattern, pattern} -> write_response */
	V4_OP(WRITE_SAME,
	      .args = {X_STATEID, X_U32, X_U64, X_U64, X_U64, X_U64, X_U32, X_U64, X_OPAQUE},
	      .res = {X_WRITE_RESPONSE}, .bound = B_WRITE_RESPONSE),
	/* RFC 7862 §15.13: src_stateid, dst_stateid, src_offset, dst_offset, count
	 * -> void */
	V4_OP(CLONE, .args = {X_STATEID, X_STATEID, X_U64, X_U64, X_U64}),
	/* RFC 8276 §8.4.1: name -> value (no bound in the protocol) */
	V4_OP(GETXATTR, .args = {X_OPAQUE}, .res = {X_OPAQUE}, .flags = NFS4_OPF_UNPREDICTABLE),
	/* RFC 8276 §8.4.2: option, name, value -> cinfo */
	V4_OP(SETXATTR, .args = {X_U32, X_OPAQUE, X_OPAQUE}, .res = {X_CINFO}, .bound = NFS4_CINFO),
	/* RFC 8276 §8.4.3: cookie, maxcount -> cookie, names, eof (+ maxcount) */
	V4_OP(LISTXATTRS, .call = call_listxattrs, .res = {X_U64, X_OPAQUES, X_BOOL},
	      .bound = 8 + 4 + 4),
	/* RFC 8276 §8.4.4: name -> cinfo */
	V4_OP(REMOVEXATTR, .args = {X_OPAQUE}, .res = {X_CINFO}, .bound = NFS4_CINFO),
};

const struct nfs4_op_desc *nfs4_op_find(uint32_t op)
{
	if (op >= IW_ARRAY_SIZE(v4_ops) || !v4_ops[op].name)
		return NULL;
	return &v4_ops[op];
}

/* ---------------------------------------------------------------------- */
/* the walkers                                                             */
/* ---------------------------------------------------------------------- */

/*
 * Skip the arguments of operation d at the cursor, reporting DDP-eligible
 * items, and add the bound of its result (after resop + status) to p.
 * Returns 0, a negative code from the callback, or IW_ERPC_RPC.
 */
static int v4_skip_args(struct nfs_walk *w, const struct nfs4_op_desc *d, struct nfs_plan *p)
{
	if (d->call) {
		int r = d->call(w, p);
		if (r)
			return r;
	} else if (d->args_fn) {
		d->args_fn(&w->c);
	} else {
		v4_skip_items(&w->c, d->args);
	}
	if (xdr_bad(&w->c))
		return IW_ERPC_RPC;
	if (p) {
		nfs_plan_add(p, d->bound);
		if (d->flags & NFS4_OPF_UNPREDICTABLE)
			nfs_plan_unpredictable(p);
	}
	return 0;
}

int nfs_v4_walk_call(struct nfs_walk *w, struct nfs_plan *p)
{
	struct iw_cursor *c = &w->c;
	uint32_t taglen = xdr_opaque(c, XDR_NOMAX);
	(void)xdr_u32(c); /* minorversion */
	uint32_t n = xdr_u32(c);
	if (xdr_bad(c))
		return IW_ERPC_RPC;
	/* COMPOUND4res: status, the tag echoed, the result count */
	plan_add(p, 4 + 4 + xdr_pad(taglen) + 4);
	for (uint32_t i = 0; i < n; i++) {
		const struct nfs4_op_desc *d = nfs4_op_find(xdr_u32(c));
		if (xdr_bad(c) || !d) /* no row: nothing after it can be located */
			return IW_ERPC_RPC;
		plan_add(p, 8); /* resop, status */
		int r = v4_skip_args(w, d, p);
		if (r)
			return r;
	}
	return 0;
}

/* Skip the NFS4_OK result of operation d; the data of a READ-like one is its slot. */
static int v4_skip_res(struct nfs_walk *w, const struct nfs4_op_desc *d)
{
	if (d->res_fn)
		d->res_fn(&w->c);
	else
		v4_skip_items(&w->c, d->res);
	if (d->flags & NFS4_OPF_WRITE_SLOT)
		return nfs_walk_item(w, XDR_NOMAX);
	return xdr_bad(&w->c) ? IW_ERPC_RPC : 0;
}

int nfs_v4_walk_reply(struct nfs_walk *w)
{
	struct iw_cursor *c = &w->c;
	(void)xdr_u32(c); /* COMPOUND status */
	(void)xdr_opaque(c, XDR_NOMAX);
	uint32_t n = xdr_u32(c);
	if (xdr_bad(c))
		return IW_ERPC_RPC;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t op = xdr_u32(c);
		uint32_t status = xdr_u32(c);
		if (xdr_bad(c))
			return IW_ERPC_RPC;
		const struct nfs4_op_desc *d = nfs4_op_find(op);
		bool slot = d && (d->flags & NFS4_OPF_WRITE_SLOT);
		if (status != 0) /* the COMPOUND stopped here (RFC 7530 §15.2) */
			return slot ? nfs_walk_void_slot(w) : 0;
		if (op == OP_ILLEGAL) /* ILLEGAL4res is the status alone (RFC 8881 §18.52) */
			continue;
		if (!d)
			return IW_ERPC_RPC;
		int r = v4_skip_res(w, d);
		if (r)
			return r;
	}
	return 0;
}

int nfs_v4_call_ops(const uint8_t *body, size_t len, rpcrdma_item_fn fn, void *arg,
		    struct nfs4_op_list *out)
{
	struct nfs_walk w;

	memset(out, 0, sizeof(*out));
	nfs_walk_init(&w, body, len, fn, arg);
	(void)xdr_opaque(&w.c, XDR_NOMAX); /* tag */
	out->minor = xdr_u32(&w.c);
	out->count = xdr_u32(&w.c);
	if (xdr_bad(&w.c))
		return IW_ERPC_RPC;
	while (out->n < out->count && out->n < NFS4_OP_LIST_MAX) {
		uint32_t op = xdr_u32(&w.c);
		if (xdr_bad(&w.c))
			return 0;
		out->op[out->n++] = op;
		const struct nfs4_op_desc *d = nfs4_op_find(op);
		if (!d) /* no row: nothing after it can be located */
			return 0;
		int r = v4_skip_args(&w, d, NULL);
		if (r == IW_ERPC_RPC)
			return 0;
		if (r)
			return r;
	}
	out->complete = out->n == out->count;
	return 0;
}
