/* SPDX-License-Identifier: MIT */
/*
 * ddp_err.c - the DDP error codes of <iwarp/ddp.h>: names, texts and the
 * Terminate triple of each (RFC 5041 §7.2, RFC 5040 §4.8).
 *
 * Theory of operation.  Every DDP error code has exactly one row in a const
 * table.  Errors a peer can cause are reported in an RDMAP Terminate as
 * Layer 1 (DDP) with the Error Type and Error Code of RFC 5041 §7.2 (the
 * IANA "DDP Errors" registry): type 0 local catastrophic, type 1 tagged
 * buffer, type 2 untagged buffer.  Codes of the STag table that only a local
 * caller can trigger never reach the wire and map to IW_TERM_NONE.
 */
#include <iwarp/ddp.h>

#include "iw_errtab.h"

/* RFC 5041 §7.2 Error Types. */
enum {
	DDP_ETYPE_LOCAL = 0x0,
	DDP_ETYPE_TAGGED = 0x1,
	DDP_ETYPE_UNTAGGED = 0x2,
};

#define DDP(c, text, etype, ecode) IW_ERR_TERM(c, text, IW_TERM_LAYER_DDP, etype, ecode)

static const struct iw_err_desc ddp_errs[] = {
	DDP(IW_EDDP_LOCAL, "DDP local catastrophic error", DDP_ETYPE_LOCAL, 0x00),
	DDP(IW_EDDP_T_INVALID_STAG, "DDP tagged: invalid STag", DDP_ETYPE_TAGGED, 0x00),
	DDP(IW_EDDP_T_BOUNDS, "DDP tagged: base or bounds violation", DDP_ETYPE_TAGGED, 0x01),
	DDP(IW_EDDP_T_STREAM, "DDP tagged: STag not associated with the stream", DDP_ETYPE_TAGGED,
	    0x02),
	DDP(IW_EDDP_T_TO_WRAP, "DDP tagged: tagged offset wraps", DDP_ETYPE_TAGGED, 0x03),
	DDP(IW_EDDP_T_VERSION, "DDP tagged: invalid DDP version", DDP_ETYPE_TAGGED, 0x04),
	/* Untagged code 0x00 is unassigned in §7.2: the list starts at 0x01. */
	DDP(IW_EDDP_U_QN, "DDP untagged: invalid queue number", DDP_ETYPE_UNTAGGED, 0x01),
	DDP(IW_EDDP_U_NO_BUFFER, "DDP untagged: no buffer available", DDP_ETYPE_UNTAGGED, 0x02),
	DDP(IW_EDDP_U_MSN_RANGE, "DDP untagged: MSN out of range", DDP_ETYPE_UNTAGGED, 0x03),
	DDP(IW_EDDP_U_MO, "DDP untagged: invalid message offset", DDP_ETYPE_UNTAGGED, 0x04),
	DDP(IW_EDDP_U_TOO_LONG, "DDP untagged: message too long for the buffer", DDP_ETYPE_UNTAGGED,
	    0x05),
	DDP(IW_EDDP_U_VERSION, "DDP untagged: invalid DDP version", DDP_ETYPE_UNTAGGED, 0x06),
	/*
	 * A segment shorter than its own header cannot be parsed, so neither a
	 * tagged nor an untagged code applies (both presume a readable header)
	 * and the MPA framing was fine.  §7.2 leaves only "local catastrophic"
	 * for a stream we can no longer trust.
	 */
	DDP(IW_EDDP_SHORT, "DDP segment shorter than its header", DDP_ETYPE_LOCAL, 0x00),
	/* Local API errors of the STag table: returned to the caller, never sent. */
	IW_ERR_LOCAL(IW_EDDP_STAG_TABLE_FULL, "STag table full"),
	IW_ERR_LOCAL(IW_EDDP_STAG_UNKNOWN, "STag not registered"),
};

IW_ERRTAB_TERM_FN(ddp, ddp_errs)
IW_ERRTAB_NAME_FNS(ddp, ddp_errs, iw_errname, iw_strerror)
