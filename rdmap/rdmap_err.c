/* SPDX-License-Identifier: MIT */
/*
 * rdmap_err.c - the RDMAP error codes of <iwarp/rdmap.h>: names, texts and
 * the Terminate triple of each (RFC 5040 §4.8 figure 9, §7.2); and the two
 * places that handle any code of the libiwarp layers by its range:
 * iw_err_term() (what goes into a Terminate) and rdmap_errname() /
 * rdmap_strerror() (what a log line says).
 *
 * Theory of operation.  Every IW_ERDMAP_* code has one row in a const table:
 * Layer 0 (RDMAP), Error Type 0 local catastrophic, 1 remote protection or
 * 2 remote operation, and the Error Code of figure 9.  Codes that describe
 * events rather than errors to report (the peer terminated, a flushed work
 * request) map to IW_TERM_NONE.  iw_err_term() picks the layer's table by
 * the code's range; a code that no table maps (a common/local error, an
 * unassigned value) is reported as a local catastrophic error, 0/0/0, the
 * RFC's answer for "something broke here" - so every failure has a defined
 * Terminate.
 */
#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iw_errtab.h"

/* Error Types of Layer 0 (RFC 5040 §4.8). */
enum {
	RDMAP_ETYPE_LOCAL = 0x0,
	RDMAP_ETYPE_PROTECTION = 0x1,
	RDMAP_ETYPE_OPERATION = 0x2,
};

#define PROT(c, text, code) IW_ERR_TERM(c, text, IW_TERM_LAYER_RDMAP, RDMAP_ETYPE_PROTECTION, code)
#define OPER(c, text, code) IW_ERR_TERM(c, text, IW_TERM_LAYER_RDMAP, RDMAP_ETYPE_OPERATION, code)

static const struct iw_err_desc rdmap_errs[] = {
	/* "Any" code is allowed for a local catastrophic error; send 0. */
	IW_ERR_TERM(IW_ERDMAP_LOCAL, "RDMAP local catastrophic error", IW_TERM_LAYER_RDMAP,
		    RDMAP_ETYPE_LOCAL, 0x00),
	PROT(IW_ERDMAP_INVALID_STAG, "RDMAP: invalid STag", 0x00),
	PROT(IW_ERDMAP_BOUNDS, "RDMAP: base or bounds violation", 0x01),
	PROT(IW_ERDMAP_ACCESS, "RDMAP: access rights violation", 0x02),
	PROT(IW_ERDMAP_STREAM, "RDMAP: STag not associated with the stream", 0x03),
	PROT(IW_ERDMAP_TO_WRAP, "RDMAP: tagged offset wraps", 0x04),
	PROT(IW_ERDMAP_PROT_UNSPEC, "RDMAP: unspecified protection error", 0xFF),
	OPER(IW_ERDMAP_VERSION, "RDMAP: invalid RDMAP version", 0x05),
	OPER(IW_ERDMAP_OPCODE, "RDMAP: unexpected opcode", 0x06),
	OPER(IW_ERDMAP_CATASTROPHIC_STREAM, "RDMAP: catastrophic error, localised to the stream",
	     0x07),
	OPER(IW_ERDMAP_CATASTROPHIC_GLOBAL, "RDMAP: catastrophic error, global", 0x08),
	/*
	 * Figure 9 lists 0x09 under both protection and operation errors; a
	 * failed remote invalidate is reported as an operation error (our
	 * reading of RFC 5040 §5.3; peers may send either).
	 */
	OPER(IW_ERDMAP_CANT_INVALIDATE, "RDMAP: STag cannot be invalidated", 0x09),
	OPER(IW_ERDMAP_OP_UNSPEC, "RDMAP: unspecified operation error", 0xFF),
	/* Events, not errors to report: the stream already ended or never failed on the wire. */
	IW_ERR_LOCAL(IW_ERDMAP_TERMINATED, "RDMAP: the peer terminated the stream"),
	IW_ERR_LOCAL(IW_ERDMAP_FLUSHED, "RDMAP: work request flushed"),
};

/* The ranges of <iwarp/iw_err.h> below RDMAP. */
static bool is_mpa(int err)
{
	return err <= -100 && err >= -199;
}

static bool is_ddp(int err)
{
	return err <= -200 && err >= -299;
}

IW_ERRTAB_TERM_FN(rdmap, rdmap_errs)

void iw_err_term(int err, struct iw_term_code *t)
{
	static const struct iw_term_code local = {IW_TERM_LAYER_RDMAP, RDMAP_ETYPE_LOCAL, 0};
	struct iw_term_code out;
	int rc;

	if (is_mpa(err))
		rc = mpa_err_term(err, &out);
	else if (is_ddp(err))
		rc = ddp_err_term(err, &out);
	else
		rc = rdmap_err_term(err, &out);
	if (rc != IW_OK)
		out = local;
	if (t)
		*t = out;
}

static const char *below_name(int err)
{
	return is_mpa(err) ? mpa_errname(err) : is_ddp(err) ? ddp_errname(err) : iw_errname(err);
}

static const char *below_text(int err)
{
	return is_mpa(err) ? mpa_strerror(err) : is_ddp(err) ? ddp_strerror(err) : iw_strerror(err);
}

IW_ERRTAB_NAME_FNS(rdmap, rdmap_errs, below_name, below_text)
