/* SPDX-License-Identifier: MIT */
/*
 * ddp_err.c - DDP error -> Terminate triple (RFC 5041 §7.2, RFC 5040 §4.8).
 *
 * Theory of operation.  Every DDP error code of <iwarp/ddp.h> has exactly one
 * entry in a const table indexed by the code.  Errors a peer can cause are
 * reported in an RDMAP Terminate as Layer 1 (DDP) with the Error Type and
 * Error Code of RFC 5041 §7.2 (the IANA "DDP Errors" registry): type 0 local
 * catastrophic, type 1 tagged buffer, type 2 untagged buffer.  Codes of the
 * STag table that only a local caller can trigger never reach the wire and
 * map to IW_TERM_NONE.
 */
#include <iwarp/ddp.h>

#define DDP_ERR_FIRST (-200)
#define DDP_ERR_LAST  (-299)

/* RFC 5041 §7.2 Error Types. */
enum {
	DDP_ETYPE_LOCAL = 0x0,
	DDP_ETYPE_TAGGED = 0x1,
	DDP_ETYPE_UNTAGGED = 0x2,
};

struct ddp_err_entry {
	bool valid;
	struct iw_term_code term;
};

/* clang-format off */
#define DDP(etype, ecode) { true, { IW_TERM_LAYER_DDP, (etype), (ecode) } }
#define NONE { true, { IW_TERM_NONE, 0, 0 } }
/* clang-format on */

/* Indexed by DDP_ERR_FIRST - err. */
static const struct ddp_err_entry ddp_err_table[DDP_ERR_FIRST - DDP_ERR_LAST + 1] = {
	[DDP_ERR_FIRST - IW_EDDP_LOCAL] = DDP(DDP_ETYPE_LOCAL, 0x00),
	[DDP_ERR_FIRST - IW_EDDP_T_INVALID_STAG] = DDP(DDP_ETYPE_TAGGED, 0x00),
	[DDP_ERR_FIRST - IW_EDDP_T_BOUNDS] = DDP(DDP_ETYPE_TAGGED, 0x01),
	[DDP_ERR_FIRST - IW_EDDP_T_STREAM] = DDP(DDP_ETYPE_TAGGED, 0x02),
	[DDP_ERR_FIRST - IW_EDDP_T_TO_WRAP] = DDP(DDP_ETYPE_TAGGED, 0x03),
	[DDP_ERR_FIRST - IW_EDDP_T_VERSION] = DDP(DDP_ETYPE_TAGGED, 0x04),
	/* Untagged code 0x00 is unassigned in §7.2: the list starts at 0x01. */
	[DDP_ERR_FIRST - IW_EDDP_U_QN] = DDP(DDP_ETYPE_UNTAGGED, 0x01),
	[DDP_ERR_FIRST - IW_EDDP_U_NO_BUFFER] = DDP(DDP_ETYPE_UNTAGGED, 0x02),
	[DDP_ERR_FIRST - IW_EDDP_U_MSN_RANGE] = DDP(DDP_ETYPE_UNTAGGED, 0x03),
	[DDP_ERR_FIRST - IW_EDDP_U_MO] = DDP(DDP_ETYPE_UNTAGGED, 0x04),
	[DDP_ERR_FIRST - IW_EDDP_U_TOO_LONG] = DDP(DDP_ETYPE_UNTAGGED, 0x05),
	[DDP_ERR_FIRST - IW_EDDP_U_VERSION] = DDP(DDP_ETYPE_UNTAGGED, 0x06),
	/*
	 * A segment shorter than its own header cannot be parsed, so neither a
	 * tagged nor an untagged code applies (both presume a readable header)
	 * and the MPA framing was fine.  §7.2 leaves only "local catastrophic"
	 * for a stream we can no longer trust.
	 */
	[DDP_ERR_FIRST - IW_EDDP_SHORT] = DDP(DDP_ETYPE_LOCAL, 0x00),
	/* Local API errors of the STag table: returned to the caller, never sent. */
	[DDP_ERR_FIRST - IW_EDDP_STAG_TABLE_FULL] = NONE,
	[DDP_ERR_FIRST - IW_EDDP_STAG_UNKNOWN] = NONE,
};

int ddp_err_term(int err, struct iw_term_code *t)
{
	const struct ddp_err_entry *e;

	if (err > DDP_ERR_FIRST || err < DDP_ERR_LAST)
		return IW_EINVAL;
	e = &ddp_err_table[DDP_ERR_FIRST - err];
	/* A code inside the range that no one defined has no meaning to map. */
	if (!e->valid)
		return IW_EINVAL;
	if (t)
		*t = e->term;
	return IW_OK;
}
