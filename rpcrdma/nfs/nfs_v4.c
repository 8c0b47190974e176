/* SPDX-License-Identifier: MIT */
/*
 * nfs_v4.c - NFSv4.0/4.1/4.2 COMPOUND: DDP-eligible items and reply plans
 * (RFC 8267 §6).
 *
 * Theory of operation.  A COMPOUND4args (RFC 7530 §16.2, RFC 8881 §16.2) is
 * a tag, a minor version and an array of operations, each an opcode followed
 * by that operation's arguments.  There is no length per operation, so to
 * find the items of the n-th operation every argument before it has to be
 * skipped exactly: v4_skip_args() knows the XDR of the arguments of every
 * operation 3..75 (RFC 7530 §16, RFC 8881 §18, RFC 7862 §15, RFC 8276 §8.4).
 * An opcode it does not know ends the walk with IW_ERPC_RPC: nothing after it
 * can be located, and the transport then reduces nothing.
 *
 * The DDP-eligible arguments (RFC 8267 §6.1) are WRITE4args data and the
 * linkdata of the NF4LNK arm of CREATE's createtype4; they are reported in
 * op order.  The same pass computes the reply plan: per operation the
 * largest encoding of its result (resop + status + the largest arm, the
 * numbers beside each case), a Write-list slot per READ (its count) and per
 * READLINK (4096), and "unpredictable" for results with no bound the call
 * can tell: GETATTR of ACLs, fs_locations, layout and label attributes
 * (RFC 8267 §6.2), GETXATTR, and any opcode we do not know.
 *
 * A COMPOUND4res is a status, the tag and an array of results, each resop +
 * status + (when the status is NFS4_OK) the result.  The server stops at the
 * first operation that fails (RFC 7530 §15.2), so the walk stops there too;
 * a failed READ or READLINK is still reported, as a slot with valid = false,
 * because a Write chunk was paired with it (RFC 8267 §6.4.1).  Every other
 * result of a successful operation is skipped by v4_skip_res().
 *
 * All arrays are walked with the cursor as the bound: a count larger than
 * the message ends the loop as soon as the cursor runs out.
 */
#include "nfs_xdr.h"

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
/* arguments                                                               */
/* ---------------------------------------------------------------------- */

static void plan_add(struct nfs_plan *p, uint64_t n)
{
	if (p)
		nfs_plan_add(p, n);
}

/*
 * Skip the arguments of operation `op` at the cursor, reporting DDP-eligible
 * items, and add the bound of its result (after resop + status) to p.
 * Returns 0, a negative code from the callback, or IW_ERPC_RPC.
 */
static int v4_skip_args(struct nfs_walk *w, uint32_t op, struct nfs_plan *p)
{
	struct iw_cursor *c = &w->c;
	uint32_t count;

	switch (op) {
	case 3: /* ACCESS: access -> supported, access */
		(void)xdr_u32(c);
		plan_add(p, 8);
		break;
	case 4: /* CLOSE: seqid, stateid -> stateid */
		(void)xdr_u32(c);
		sk_stateid(c);
		plan_add(p, NFS4_STATEID);
		break;
	case 5: /* COMMIT: offset, count -> verifier */
		(void)xdr_u64(c);
		(void)xdr_u32(c);
		plan_add(p, NFS4_VERIFIER);
		break;
	case 6: /* CREATE: createtype4, objname, createattrs -> cinfo, attrset */
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
		plan_add(p, NFS4_CINFO + B_BITMAP);
		break;
	case 7:	 /* DELEGPURGE: clientid */
	case 30: /* RENEW: clientid */
	case 57: /* DESTROY_CLIENTID: clientid */
		(void)xdr_u64(c);
		break;
	case 8:	 /* DELEGRETURN: stateid */
	case 45: /* FREE_STATEID */
	case 66: /* OFFLOAD_CANCEL */
		sk_stateid(c);
		break;
	case 9: /* GETATTR: attr_request -> fattr4 */
		if (v4_bitmap_unbounded(c) && p)
			nfs_plan_unpredictable(p);
		plan_add(p, B_FATTR);
		break;
	case 10: /* GETFH -> nfs_fh4 */
		plan_add(p, 4 + NFS4_FHSIZE);
		break;
	case 11: /* LINK: newname -> cinfo */
	case 28: /* REMOVE: target -> cinfo */
	case 75: /* REMOVEXATTR: name -> cinfo */
		sk_component(c);
		plan_add(p, NFS4_CINFO);
		break;
	case 12: /* LOCK: locktype, reclaim, offset, length, locker -> stateid | denied */
		(void)xdr_u32(c);
		(void)xdr_bool(c);
		(void)xdr_u64(c);
		(void)xdr_u64(c);
		if (xdr_bool(c)) { /* open_to_lock_owner4 */
			(void)xdr_u32(c);
			sk_stateid(c);
			(void)xdr_u32(c);
			sk_owner(c);
		} else { /* exist_lock_owner4 */
			sk_stateid(c);
			(void)xdr_u32(c);
		}
		plan_add(p, B_DENIED);
		break;
	case 13: /* LOCKT: locktype, offset, length, owner -> void | denied */
		(void)xdr_u32(c);
		(void)xdr_u64(c);
		(void)xdr_u64(c);
		sk_owner(c);
		plan_add(p, B_DENIED);
		break;
	case 14: /* LOCKU: locktype, seqid, stateid, offset, length -> stateid */
		(void)xdr_u32(c);
		(void)xdr_u32(c);
		sk_stateid(c);
		(void)xdr_u64(c);
		(void)xdr_u64(c);
		plan_add(p, NFS4_STATEID);
		break;
	case 15: /* LOOKUP: objname */
	case 33: /* SECINFO: name -> secinfo4<> */
		sk_component(c);
		if (op == 33)
			plan_add(p, B_SECINFO);
		break;
	case 16: /* LOOKUPP */
	case 23: /* PUTPUBFH */
	case 24: /* PUTROOTFH */
	case 31: /* RESTOREFH */
	case 32: /* SAVEFH */
		break;
	case 17: /* NVERIFY: fattr4 */
	case 37: /* VERIFY: fattr4 */
		sk_fattr(c);
		break;
	case 18:		  /* OPEN -> stateid, cinfo, rflags, attrset, delegation */
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
		plan_add(p, NFS4_STATEID + NFS4_CINFO + 4 + B_BITMAP + B_DELEG);
		break;
	case 19: /* OPENATTR: createdir */
	case 58: /* RECLAIM_COMPLETE: one_fs */
		(void)xdr_bool(c);
		break;
	case 20: /* OPEN_CONFIRM: stateid, seqid -> stateid */
		sk_stateid(c);
		(void)xdr_u32(c);
		plan_add(p, NFS4_STATEID);
		break;
	case 21: /* OPEN_DOWNGRADE: stateid, seqid, access, deny -> stateid */
		sk_stateid(c);
		xdr_skip(c, 3 * 4);
		plan_add(p, NFS4_STATEID);
		break;
	case 22: /* PUTFH: nfs_fh4 */
		(void)xdr_opaque(c, NFS4_FHSIZE);
		break;
	case 25: /* READ: stateid, offset, count -> eof, data<count> (a slot) */
		sk_stateid(c);
		(void)xdr_u64(c);
		count = xdr_u32(c);
		if (p && !xdr_bad(c)) {
			nfs_plan_add(p, 4 + 4 + 4); /* eof, length word, padding */
			nfs_plan_slot(p, nfs_plan_clamp(count));
		}
		break;
	case 26: /* READDIR: cookie, verf, dircount, maxcount, attr_request */
		(void)xdr_u64(c);
		xdr_skip(c, NFS4_VERIFIER);
		(void)xdr_u32(c);
		count = xdr_u32(c);
		sk_bitmap(c);
		/* maxcount bounds READDIR4resok (verifier, entries, eof) */
		plan_add(p, NFS4_VERIFIER + 8 + (uint64_t)nfs_plan_clamp(count));
		break;
	case 27: /* READLINK -> link (a slot) */
		if (p) {
			nfs_plan_add(p, 4 + 4);
			nfs_plan_slot(p, NFS_PLAN_PATH_MAX);
		}
		break;
	case 29: /* RENAME: oldname, newname -> source_cinfo, target_cinfo */
		sk_component(c);
		sk_component(c);
		plan_add(p, 2 * NFS4_CINFO);
		break;
	case 34: /* SETATTR: stateid, fattr4 -> attrsset */
		sk_stateid(c);
		sk_fattr(c);
		plan_add(p, B_BITMAP);
		break;
	case 35: /* SETCLIENTID: client, callback, callback_ident */
		xdr_skip(c, NFS4_VERIFIER);
		(void)xdr_opaque(c, NFS4_OPAQUE_LIMIT);
		(void)xdr_u32(c);
		sk_netaddr(c);
		(void)xdr_u32(c);
		plan_add(p, B_SETCLIENTID);
		break;
	case 36: /* SETCLIENTID_CONFIRM: clientid, verifier */
		(void)xdr_u64(c);
		xdr_skip(c, NFS4_VERIFIER);
		break;
	case 38: /* WRITE: stateid, offset, stable, data (DDP-eligible) */
		sk_stateid(c);
		(void)xdr_u64(c);
		(void)xdr_u32(c);
		if (xdr_bad(c))
			return IW_ERPC_RPC;
		{
			int r = nfs_walk_item(w, XDR_NOMAX);
			if (r)
				return r;
		}
		plan_add(p, 4 + 4 + NFS4_VERIFIER);
		break;
	case 39: /* RELEASE_LOCKOWNER: lock_owner4 */
		sk_owner(c);
		break;
	case 40: /* BACKCHANNEL_CTL: cb_program, sec_parms<> */
		(void)xdr_u32(c);
		sk_cb_sec_parms(c);
		break;
	case 41: /* BIND_CONN_TO_SESSION: sessid, dir, rdma mode -> the same */
		xdr_skip(c, NFS4_SESSIONID + 8);
		plan_add(p, NFS4_SESSIONID + 8);
		break;
	case 42: /* EXCHANGE_ID: clientowner, flags, state_protect, impl_id */
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
		plan_add(p, B_EXCHANGE_ID);
		break;
	case 43: /* CREATE_SESSION */
		(void)xdr_u64(c);
		xdr_skip(c, 8);
		sk_channel_attrs(c);
		sk_channel_attrs(c);
		(void)xdr_u32(c);
		sk_cb_sec_parms(c);
		plan_add(p, NFS4_SESSIONID + 8 + 2 * B_CHANNEL);
		break;
	case 44: /* DESTROY_SESSION: sessionid */
		xdr_skip(c, NFS4_SESSIONID);
		break;
	case 46: /* GET_DIR_DELEGATION */
		(void)xdr_bool(c);
		sk_bitmap(c);
		xdr_skip(c, 2 * NFS4_TIME);
		sk_bitmap(c);
		sk_bitmap(c);
		plan_add(p, 4 + NFS4_VERIFIER + NFS4_STATEID + 3 * B_BITMAP);
		break;
	case 47: /* GETDEVICEINFO: deviceid, layout_type, maxcount, notify_types */
		xdr_skip(c, 16 + 4);
		count = xdr_u32(c);
		sk_bitmap(c);
		/* maxcount bounds the device address; NFS4ERR_TOOSMALL is a word */
		plan_add(p, 4 + 4 + (uint64_t)nfs_plan_clamp(count) + B_BITMAP);
		break;
	case 48: /* GETDEVICELIST: layout_type, maxdevices, cookie, verf */
		(void)xdr_u32(c);
		count = xdr_u32(c);
		(void)xdr_u64(c);
		xdr_skip(c, NFS4_VERIFIER);
		plan_add(p, 8 + NFS4_VERIFIER + 4 + 16 * (uint64_t)count + 4);
		break;
	case 49: /* LAYOUTCOMMIT -> newsize */
		(void)xdr_u64(c);
		(void)xdr_u64(c);
		(void)xdr_bool(c);
		sk_stateid(c);
		if (xdr_bool(c))
			(void)xdr_u64(c);
		if (xdr_bool(c))
			xdr_skip(c, NFS4_TIME);
		(void)xdr_u32(c);
		(void)xdr_opaque(c, XDR_NOMAX);
		plan_add(p, 12);
		break;
	case 50: /* LAYOUTGET: ..., maxcount -> return_on_close, stateid, layout<> */
		(void)xdr_bool(c);
		xdr_skip(c, 8);
		xdr_skip(c, 3 * 8);
		sk_stateid(c);
		count = xdr_u32(c);
		/* maxcount bounds the layouts; 64 for the array and the
		 * NFS4ERR_LAYOUTTRYLATER arm */
		plan_add(p, 4 + NFS4_STATEID + (uint64_t)nfs_plan_clamp(count) + 64);
		break;
	case 51: /* LAYOUTRETURN: reclaim, type, iomode, layoutreturn4 */
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
		plan_add(p, 4 + NFS4_STATEID);
		break;
	case 52: /* SECINFO_NO_NAME: style */
		(void)xdr_u32(c);
		plan_add(p, B_SECINFO);
		break;
	case 53: /* SEQUENCE: sessionid, sequenceid, slotid, highest, cachethis */
		xdr_skip(c, NFS4_SESSIONID + 3 * 4);
		(void)xdr_bool(c);
		plan_add(p, NFS4_SESSIONID + 5 * 4);
		break;
	case 54: /* SET_SSV: ssv, digest -> digest */
		(void)xdr_opaque(c, XDR_NOMAX);
		(void)xdr_opaque(c, XDR_NOMAX);
		plan_add(p, 4 + NFS4_OPAQUE_LIMIT);
		break;
	case 55: /* TEST_STATEID: stateids<> -> status per stateid */
		count = xdr_array_fixed(c, XDR_NOMAX, NFS4_STATEID);
		plan_add(p, 4 + 4 * (uint64_t)count);
		break;
	case 56: /* WANT_DELEGATION: want, claim -> open_delegation4 */
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
		plan_add(p, B_DELEG);
		break;
	case 59: /* ALLOCATE: stateid, offset, length */
	case 62: /* DEALLOCATE */
		sk_stateid(c);
		xdr_skip(c, 16);
		break;
	case 60: /* COPY -> write_response4, copy_requirements4 */
		sk_stateid(c);
		sk_stateid(c);
		xdr_skip(c, 3 * 8);
		(void)xdr_bool(c);
		(void)xdr_bool(c);
		sk_netloc_array(c);
		plan_add(p, B_WRITE_RESPONSE + 8);
		break;
	case 61: /* COPY_NOTIFY: stateid, destination netloc4 */
		sk_stateid(c);
		sk_netloc(c);
		plan_add(p, B_COPY_NOTIFY);
		break;
	case 63: /* IO_ADVISE: stateid, offset, count, hints -> hints */
		sk_stateid(c);
		xdr_skip(c, 16);
		sk_bitmap(c);
		plan_add(p, B_BITMAP);
		break;
	case 64: /* LAYOUTERROR: offset, length, stateid, device_error4<> */
		xdr_skip(c, 16);
		sk_stateid(c);
		(void)xdr_array_fixed(c, XDR_NOMAX, 16 + 4 + 4);
		break;
	case 65: /* LAYOUTSTATS: offset, length, stateid, read, write, deviceid, layoutupdate4 */
		xdr_skip(c, 16);
		sk_stateid(c);
		xdr_skip(c, 16 + 16 + 16);
		(void)xdr_u32(c);
		(void)xdr_opaque(c, XDR_NOMAX);
		break;
	case 67: /* OFFLOAD_STATUS: stateid -> count, complete<1> */
		sk_stateid(c);
		plan_add(p, 8 + 4 + 4);
		break;
	case 68: /* READ_PLUS: stateid, offset, count -> eof, contents<> (inline) */
		sk_stateid(c);
		(void)xdr_u64(c);
		count = xdr_u32(c);
		plan_add(p, 4 + 4 + (uint64_t)nfs_plan_clamp(count) + B_READ_PLUS_HDRS);
		break;
	case 69: /* SEEK: stateid, offset, what -> eof, offset */
		sk_stateid(c);
		(void)xdr_u64(c);
		(void)xdr_u32(c);
		plan_add(p, 12);
		break;
	case 70: /* WRITE_SAME: stateid, stable, app_data_block4 -> write_response4 */
		sk_stateid(c);
		(void)xdr_u32(c);
		xdr_skip(c, 4 * 8 + 4 + 8);
		(void)xdr_opaque(c, XDR_NOMAX);
		plan_add(p, B_WRITE_RESPONSE);
		break;
	case 71: /* CLONE: two stateids, src/dst offset, count */
		sk_stateid(c);
		sk_stateid(c);
		xdr_skip(c, 3 * 8);
		break;
	case 72: /* GETXATTR: name -> value: no protocol bound (RFC 8276 §8.4.1) */
		sk_component(c);
		if (p)
			nfs_plan_unpredictable(p);
		break;
	case 73: /* SETXATTR: option, name, value -> cinfo */
		(void)xdr_u32(c);
		sk_component(c);
		(void)xdr_opaque(c, XDR_NOMAX);
		plan_add(p, NFS4_CINFO);
		break;
	case 74: /* LISTXATTRS: cookie, maxcount -> cookie, names<>, eof */
		(void)xdr_u64(c);
		count = xdr_u32(c);
		plan_add(p, 8 + 4 + (uint64_t)nfs_plan_clamp(count) + 4);
		break;
	default:
		return IW_ERPC_RPC;
	}
	return xdr_bad(c) ? IW_ERPC_RPC : 0;
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
		uint32_t op = xdr_u32(c);
		if (xdr_bad(c))
			return IW_ERPC_RPC;
		plan_add(p, 8); /* resop, status */
		int r = v4_skip_args(w, op, p);
		if (r)
			return r;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* results                                                                 */
/* ---------------------------------------------------------------------- */

/* Skip the NFS4_OK result of operation `op` (not READ / READLINK). */
static int v4_skip_res(struct iw_cursor *c, uint32_t op)
{
	uint32_t n;

	switch (op) {
	case 3:	 /* ACCESS: supported, access */
	case 5:	 /* COMMIT: verifier */
	case 49: /* LAYOUTCOMMIT: newsize4 */
		if (op == 49) {
			if (xdr_bool(c))
				(void)xdr_u64(c);
		} else {
			xdr_skip(c, 8);
		}
		break;
	case 4:	 /* CLOSE: stateid */
	case 12: /* LOCK */
	case 14: /* LOCKU */
	case 20: /* OPEN_CONFIRM */
	case 21: /* OPEN_DOWNGRADE */
		sk_stateid(c);
		break;
	case 6: /* CREATE: cinfo, attrset */
		sk_cinfo(c);
		sk_bitmap(c);
		break;
	case 7:
	case 8:
	case 13:
	case 15:
	case 16:
	case 17:
	case 19:
	case 22:
	case 23:
	case 24:
	case 30:
	case 31:
	case 32:
	case 36:
	case 37:
	case 39:
	case 40:
	case 44:
	case 45:
	case 57:
	case 58:
	case 59:
	case 62:
	case 64:
	case 65:
	case 66:
	case 71:
	case 10044: /* OP_ILLEGAL */
		break;
	case 9: /* GETATTR: fattr4 */
		sk_fattr(c);
		break;
	case 10: /* GETFH: nfs_fh4 */
		(void)xdr_opaque(c, NFS4_FHSIZE);
		break;
	case 11: /* LINK, REMOVE, SETXATTR, REMOVEXATTR: cinfo */
	case 28:
	case 73:
	case 75:
		sk_cinfo(c);
		break;
	case 18: /* OPEN: stateid, cinfo, rflags, attrset, delegation */
		sk_stateid(c);
		sk_cinfo(c);
		(void)xdr_u32(c);
		sk_bitmap(c);
		sk_deleg(c);
		break;
	case 26: /* READDIR: cookieverf, dirlist4 {entry4 *entries, eof} */
		xdr_skip(c, NFS4_VERIFIER);
		while (xdr_bool(c) && !xdr_bad(c)) {
			(void)xdr_u64(c); /* cookie */
			sk_component(c);
			sk_fattr(c);
		}
		(void)xdr_bool(c);
		break;
	case 29: /* RENAME: source_cinfo, target_cinfo */
		sk_cinfo(c);
		sk_cinfo(c);
		break;
	case 33: /* SECINFO, SECINFO_NO_NAME: secinfo4<> */
	case 52:
		n = xdr_u32(c);
		for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
			if (xdr_u32(c) == 6) { /* RPCSEC_GSS: oid, qop, service */
				(void)xdr_opaque(c, XDR_NOMAX);
				xdr_skip(c, 8);
			}
		}
		break;
	case 34: /* SETATTR: attrsset */
	case 63: /* IO_ADVISE: hints */
		sk_bitmap(c);
		break;
	case 35: /* SETCLIENTID: clientid, verifier */
		xdr_skip(c, 8 + NFS4_VERIFIER);
		break;
	case 38: /* WRITE: count, committed, verifier */
		xdr_skip(c, 8 + NFS4_VERIFIER);
		break;
	case 41: /* BIND_CONN_TO_SESSION: sessid, dir, rdma mode */
		xdr_skip(c, NFS4_SESSIONID + 4);
		(void)xdr_bool(c);
		break;
	case 42: /* EXCHANGE_ID */
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
		break;
	case 43: /* CREATE_SESSION: sessionid, sequence, flags, fore, back */
		xdr_skip(c, NFS4_SESSIONID + 8);
		sk_channel_attrs(c);
		sk_channel_attrs(c);
		break;
	case 46: /* GET_DIR_DELEGATION: non-fatal status union */
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
		break;
	case 47: /* GETDEVICEINFO: device_addr4 {type, body}, notification */
		(void)xdr_u32(c);
		(void)xdr_opaque(c, XDR_NOMAX);
		sk_bitmap(c);
		break;
	case 48: /* GETDEVICELIST: cookie, verf, deviceids<>, eof */
		xdr_skip(c, 8 + NFS4_VERIFIER);
		(void)xdr_array_fixed(c, XDR_NOMAX, 16);
		(void)xdr_bool(c);
		break;
	case 50: /* LAYOUTGET: return_on_close, stateid, layout4<> */
		(void)xdr_bool(c);
		sk_stateid(c);
		n = xdr_u32(c);
		for (uint32_t i = 0; i < n && !xdr_bad(c); i++) {
			xdr_skip(c, 8 + 8 + 4 + 4); /* offset, length, iomode, type */
			(void)xdr_opaque(c, XDR_NOMAX);
		}
		break;
	case 51: /* LAYOUTRETURN: optional stateid */
		if (xdr_bool(c))
			sk_stateid(c);
		break;
	case 53: /* SEQUENCE */
		xdr_skip(c, NFS4_SESSIONID + 5 * 4);
		break;
	case 54: /* SET_SSV: digest */
	case 72: /* GETXATTR: value */
		(void)xdr_opaque(c, XDR_NOMAX);
		break;
	case 55: /* TEST_STATEID: status codes */
		(void)xdr_array_fixed(c, XDR_NOMAX, 4);
		break;
	case 56: /* WANT_DELEGATION: open_delegation4 */
		sk_deleg(c);
		break;
	case 60: /* COPY: write_response4, copy_requirements4 */
		sk_write_response(c);
		(void)xdr_bool(c);
		(void)xdr_bool(c);
		break;
	case 61: /* COPY_NOTIFY: lease_time, stateid, source servers */
		xdr_skip(c, NFS4_TIME + NFS4_STATEID);
		sk_netloc_array(c);
		break;
	case 67: /* OFFLOAD_STATUS: count, complete<1> */
		(void)xdr_u64(c);
		(void)xdr_array_fixed(c, 1, 4);
		break;
	case 68: /* READ_PLUS: eof, read_plus_content<> */
		(void)xdr_bool(c);
		n = xdr_u32(c);
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
		break;
	case 69: /* SEEK: eof, offset */
		(void)xdr_bool(c);
		(void)xdr_u64(c);
		break;
	case 70: /* WRITE_SAME: write_response4 */
		sk_write_response(c);
		break;
	case 74: /* LISTXATTRS: cookie, names<>, eof */
		(void)xdr_u64(c);
		sk_opaque_array(c);
		(void)xdr_bool(c);
		break;
	default:
		return IW_ERPC_RPC;
	}
	return xdr_bad(c) ? IW_ERPC_RPC : 0;
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
		bool read_like = op == 25 || op == 27;
		if (status != 0) /* the COMPOUND stopped here (RFC 7530 §15.2) */
			return read_like ? nfs_walk_void_slot(w) : 0;
		int r;
		if (op == 25) {
			(void)xdr_bool(c); /* eof */
			r = nfs_walk_item(w, XDR_NOMAX);
		} else if (op == 27) {
			r = nfs_walk_item(w, XDR_NOMAX);
		} else {
			r = v4_skip_res(c, op);
		}
		if (r)
			return r;
	}
	return 0;
}
