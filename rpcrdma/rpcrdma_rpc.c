/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_rpc.c - the ONC RPC message header (RFC 5531 §9), read as far as
 * RPC-over-RDMA needs it: the XID (which must equal rdma_xid, RFC 8166
 * §4.2.1), the direction (RFC 8167 §4: a reverse-direction Call is told from a
 * forward Reply only by msg_type), the program/version/procedure the upper-
 * layer binding keys its DDP-eligibility on (RFC 8166 §6), the credential
 * flavor (RPCSEC_GSS integrity/privacy forbids reduction, RFC 8267 §5) and the
 * offset where the arguments or results begin.
 *
 * Theory of operation.  A bounded cursor walks the XDR words (big-endian,
 * RFC 4506 §4.1); every read is checked, and the sticky cursor error is tested
 * once per step.  Layouts (RFC 5531 §9):
 *
 *   CALL   xid, 0, rpcvers (= 2), prog, vers, proc, cred, verf, args...
 *   REPLY  xid, 1, reply_stat,
 *            MSG_ACCEPTED (0): verf, accept_stat,
 *                               SUCCESS (0): results...
 *                               PROG_MISMATCH (2): low, high
 *                               PROG_UNAVAIL, PROC_UNAVAIL, GARBAGE_ARGS,
 *                               SYSTEM_ERR (1, 3, 4, 5): nothing
 *            MSG_DENIED (1):   reject_stat,
 *                               RPC_MISMATCH (0): low, high
 *                               AUTH_ERROR (1): auth_stat
 *
 * where cred and verf are opaque_auth { flavor, opaque body<400> } and an
 * opaque body is a length word and the octets padded to a multiple of four.
 * A body longer than 400 octets (MAX_AUTH_BYTES), an unknown discriminant
 * anywhere, rpcvers other than 2, or a message that ends inside any of this
 * is IW_ERPC_RPC.  body_off is the offset of the arguments (CALL) or results
 * (accepted SUCCESS reply); for other replies it is the end of what was read.
 */
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "iw_cursor.h"

#define RPC_VERSION	   2
#define RPC_MAX_AUTH_BYTES 400

enum { MSG_ACCEPTED = 0, MSG_DENIED = 1 };
enum { SUCCESS = 0, PROG_MISMATCH = 2, SYSTEM_ERR = 5 };
enum { RPC_MISMATCH = 0, AUTH_ERROR = 1 };

/* opaque_auth: flavor and a body of at most 400 octets, padded to 4. */
static uint32_t get_auth(struct iw_cursor *c)
{
	uint32_t flavor = iw_cursor_get_be32(c);
	uint32_t len = iw_cursor_get_be32(c);

	if (c->err)
		return 0;
	if (len > RPC_MAX_AUTH_BYTES) {
		c->err = IW_ERPC_RPC;
		return 0;
	}
	iw_cursor_get_bytes(c, (len + 3) & ~3u);
	return flavor;
}

int rpcrdma_rpc_parse(const void *msg, size_t len, struct rpcrdma_rpcinfo *ri)
{
	struct iw_cursor c;
	uint32_t stat;

	memset(ri, 0, sizeof(*ri));
	iw_cursor_init(&c, msg, len);
	ri->xid = iw_cursor_get_be32(&c);
	ri->msg_type = iw_cursor_get_be32(&c);
	if (c.err)
		return IW_ERPC_RPC;

	switch (ri->msg_type) {
	case RPC_MSG_CALL:
		ri->rpcvers = iw_cursor_get_be32(&c);
		ri->prog = iw_cursor_get_be32(&c);
		ri->vers = iw_cursor_get_be32(&c);
		ri->proc = iw_cursor_get_be32(&c);
		if (c.err || ri->rpcvers != RPC_VERSION)
			return IW_ERPC_RPC;
		ri->cred_flavor = get_auth(&c);
		get_auth(&c); /* verifier */
		break;
	case RPC_MSG_REPLY:
		ri->reply_stat = iw_cursor_get_be32(&c);
		if (c.err)
			return IW_ERPC_RPC;
		if (ri->reply_stat == MSG_ACCEPTED) {
			get_auth(&c); /* verifier */
			ri->accept_stat = iw_cursor_get_be32(&c);
			if (c.err || ri->accept_stat > SYSTEM_ERR)
				return IW_ERPC_RPC;
			if (ri->accept_stat == PROG_MISMATCH) {
				iw_cursor_get_be32(&c); /* low */
				iw_cursor_get_be32(&c); /* high */
			}
		} else if (ri->reply_stat == MSG_DENIED) {
			stat = iw_cursor_get_be32(&c); /* reject_stat */
			if (c.err || stat > AUTH_ERROR)
				return IW_ERPC_RPC;
			if (stat == RPC_MISMATCH) {
				iw_cursor_get_be32(&c); /* low */
				iw_cursor_get_be32(&c); /* high */
			} else {
				iw_cursor_get_be32(&c); /* auth_stat */
			}
		} else {
			return IW_ERPC_RPC;
		}
		break;
	default:
		return IW_ERPC_RPC;
	}
	if (c.err)
		return IW_ERPC_RPC;
	ri->body_off = (uint32_t)c.off;
	return IW_OK;
}
