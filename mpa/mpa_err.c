/* SPDX-License-Identifier: MIT */
/*
 * mpa_err.c - the MPA error codes of <iwarp/mpa.h>: names, texts and the
 * Terminate triple of each (RFC 5044 §8, RFC 6581 §8, RFC 5040 §4.8).
 *
 * Theory of operation.  Every MPA error code has exactly one row in a const
 * table.  Full-operation errors are reported to the peer in an RDMAP
 * Terminate as Layer 2 (LLP), Error Type 0 (MPA), Error Code 1-7 (the IANA
 * "MPA Errors" registry).  Startup errors happen before full operation, when
 * no FPDU - and so no Terminate - can be sent: they map to Code 4 ("invalid
 * MPA Request or Reply frame") for the local report, and the caller closes
 * TCP instead of sending a Terminate (RFC 5044 §7.1.2).  A reject and a
 * startup timeout are not protocol errors and map to IW_TERM_NONE.
 */
#include <iwarp/mpa.h>

#include "iw_errtab.h"

#define LLP(c, text, code) IW_ERR_TERM(c, text, IW_TERM_LAYER_LLP, IW_TERM_LLP_ETYPE_MPA, code)

static const struct iw_err_desc mpa_errs[] = {
	/*
	 * Startup-frame errors (§7.1.2 rules 2, 3, 5, 9): the frame or stream is
	 * unusable, TCP is closed at once and the error is reported locally as
	 * MPA error 4.  Full operation was never reached, so no Terminate can
	 * carry it: the code is recorded for the local report and callers must
	 * check the startup phase before trying to send a Terminate.
	 */
	LLP(IW_EMPA_KEY, "MPA startup frame has a wrong key", IW_TERM_LLP_BAD_FRAME),
	LLP(IW_EMPA_REV, "MPA revision not supported", IW_TERM_LLP_BAD_FRAME),
	LLP(IW_EMPA_PDLEN, "MPA private data length invalid", IW_TERM_LLP_BAD_FRAME),
	LLP(IW_EMPA_FRAME, "MPA startup frame improperly formatted", IW_TERM_LLP_BAD_FRAME),
	LLP(IW_EMPA_UNEXPECTED, "MPA peer sent data it may not send yet", IW_TERM_LLP_BAD_FRAME),
	LLP(IW_EMPA_TRUNCATED, "MPA stream closed inside a frame", IW_TERM_LLP_BAD_FRAME),
	/* A reject is a normal outcome (§7.1.2 rule 2) and a timeout is local: no Terminate. */
	IW_ERR_LOCAL(IW_EMPA_REJECTED, "MPA connection rejected by the peer"),
	IW_ERR_LOCAL(IW_EMPA_TIMEOUT, "MPA startup timed out"),
	/* Full operation (§8). */
	LLP(IW_EMPA_CLOSED, "MPA connection closed or lost", IW_TERM_LLP_CLOSED),
	LLP(IW_EMPA_CRC, "MPA CRC mismatch", IW_TERM_LLP_CRC),
	LLP(IW_EMPA_MARKER, "MPA Marker and ULPDU_Length disagree", IW_TERM_LLP_MARKER),
	/*
	 * An ULPDU_Length we refuse to accept means the FPDU boundaries are lost,
	 * the same situation error 3 describes (the length and the framing
	 * disagree).  RFC 5044 has no closer code, so report it as 3.
	 */
	LLP(IW_EMPA_LEN, "MPA ULPDU_Length too large", IW_TERM_LLP_MARKER),
	/* RFC 6581 §8. */
	LLP(IW_EMPA_LOCAL, "MPA local catastrophic error", IW_TERM_LLP_LOCAL),
	LLP(IW_EMPA_IRD, "MPA insufficient IRD resources", IW_TERM_LLP_IRD),
	LLP(IW_EMPA_RTR, "MPA no matching RTR option", IW_TERM_LLP_RTR),
};

IW_ERRTAB_TERM_FN(mpa, mpa_errs)
IW_ERRTAB_NAME_FNS(mpa, mpa_errs, iw_errname, iw_strerror)
