/* SPDX-License-Identifier: MIT */
/*
 * mpa_err.c - MPA error -> Terminate triple (RFC 5044 §8, RFC 6581 §8,
 * RFC 5040 §4.8).
 *
 * Theory of operation.  Every MPA error code of <iwarp/iw_err.h> has exactly
 * one entry in a const table indexed by the code.  Full-operation errors are
 * reported to the peer in an RDMAP Terminate as Layer 2 (LLP), Error Type 0
 * (MPA), Error Code 1-7 (the IANA "MPA Errors" registry).  Startup errors
 * happen before full operation, when no FPDU - and so no Terminate - can be
 * sent: they map to Code 4 ("invalid MPA Request or Reply frame") for the
 * local report, and the caller closes TCP instead of sending a Terminate
 * (RFC 5044 §7.1.2).  A reject and a startup timeout are not protocol errors
 * and map to IW_TERM_NONE.
 */
#include <iwarp/mpa.h>

#define MPA_ERR_FIRST (-100)
#define MPA_ERR_LAST  (-199)

struct mpa_err_entry {
	bool valid;
	struct iw_term_code term;
};

/* clang-format off */
#define LLP(code) { true, { IW_TERM_LAYER_LLP, IW_TERM_LLP_ETYPE_MPA, (code) } }
#define NONE { true, { IW_TERM_NONE, 0, 0 } }
/* clang-format on */

/* Indexed by MPA_ERR_FIRST - err. */
static const struct mpa_err_entry mpa_err_table[MPA_ERR_FIRST - MPA_ERR_LAST + 1] = {
	/*
	 * Startup-frame errors (§7.1.2 rules 2, 3, 5, 9): the frame or stream is
	 * unusable, TCP is closed at once and the error is reported locally as
	 * MPA error 4.  Full operation was never reached, so no Terminate can
	 * carry it: the code is recorded for the local report and callers must
	 * check the startup phase before trying to send a Terminate.
	 */
	[MPA_ERR_FIRST - IW_EMPA_KEY] = LLP(IW_TERM_LLP_BAD_FRAME),
	[MPA_ERR_FIRST - IW_EMPA_REV] = LLP(IW_TERM_LLP_BAD_FRAME),
	[MPA_ERR_FIRST - IW_EMPA_PDLEN] = LLP(IW_TERM_LLP_BAD_FRAME),
	[MPA_ERR_FIRST - IW_EMPA_FRAME] = LLP(IW_TERM_LLP_BAD_FRAME),
	[MPA_ERR_FIRST - IW_EMPA_UNEXPECTED] = LLP(IW_TERM_LLP_BAD_FRAME),
	[MPA_ERR_FIRST - IW_EMPA_TRUNCATED] = LLP(IW_TERM_LLP_BAD_FRAME),
	/* A reject is a normal outcome (§7.1.2 rule 2) and a timeout is local: no Terminate. */
	[MPA_ERR_FIRST - IW_EMPA_REJECTED] = NONE,
	[MPA_ERR_FIRST - IW_EMPA_TIMEOUT] = NONE,
	/* Full operation (§8). */
	[MPA_ERR_FIRST - IW_EMPA_CLOSED] = LLP(IW_TERM_LLP_CLOSED),
	[MPA_ERR_FIRST - IW_EMPA_CRC] = LLP(IW_TERM_LLP_CRC),
	[MPA_ERR_FIRST - IW_EMPA_MARKER] = LLP(IW_TERM_LLP_MARKER),
	/*
	 * An ULPDU_Length we refuse to accept means the FPDU boundaries are lost,
	 * the same situation error 3 describes (the length and the framing
	 * disagree).  RFC 5044 has no closer code, so report it as 3.
	 */
	[MPA_ERR_FIRST - IW_EMPA_LEN] = LLP(IW_TERM_LLP_MARKER),
	/* RFC 6581 §8. */
	[MPA_ERR_FIRST - IW_EMPA_LOCAL] = LLP(IW_TERM_LLP_LOCAL),
	[MPA_ERR_FIRST - IW_EMPA_IRD] = LLP(IW_TERM_LLP_IRD),
	[MPA_ERR_FIRST - IW_EMPA_RTR] = LLP(IW_TERM_LLP_RTR),
};

int mpa_err_term(int err, struct iw_term_code *t)
{
	const struct mpa_err_entry *e;

	if (err > MPA_ERR_FIRST || err < MPA_ERR_LAST)
		return IW_EINVAL;
	e = &mpa_err_table[MPA_ERR_FIRST - err];
	/* A code inside the range that no one defined has no meaning to map. */
	if (!e->valid)
		return IW_EINVAL;
	if (t)
		*t = e->term;
	return IW_OK;
}
