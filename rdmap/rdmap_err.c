/* SPDX-License-Identifier: MIT */
/*
 * rdmap_err.c - RDMAP error -> Terminate triple (RFC 5040 §4.8 figure 9,
 * §7.2; wire-reference §5.3), and iw_err_term(), the one place that maps any
 * code of the error plan to what goes into a Terminate.
 *
 * Theory of operation.  Every IW_ERDMAP_* code has one entry in a const
 * table indexed by the code: Layer 0 (RDMAP), Error Type 0 local
 * catastrophic, 1 remote protection or 2 remote operation, and the Error
 * Code of figure 9.  Codes that describe events rather than errors to report
 * (the peer terminated, a flushed work request) map to IW_TERM_NONE.
 * iw_err_term() picks the layer's table by the code's range; a code that no
 * table maps (a common/local error, an unassigned value) is reported as a
 * local catastrophic error, 0/0/0, the RFC's answer for "something broke
 * here" - so every failure has a defined Terminate.
 */
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#define RDMAP_ERR_FIRST (-300)
#define RDMAP_ERR_LAST	(-399)

/* Error Types of Layer 0 (RFC 5040 §4.8). */
enum {
	RDMAP_ETYPE_LOCAL = 0x0,
	RDMAP_ETYPE_PROTECTION = 0x1,
	RDMAP_ETYPE_OPERATION = 0x2,
};

struct rdmap_err_entry {
	bool valid;
	struct iw_term_code term;
};

/* clang-format off */
#define RDMAP(etype, code) { true, { IW_TERM_LAYER_RDMAP, (etype), (code) } }
#define NONE { true, { IW_TERM_NONE, 0, 0 } }
/* clang-format on */

/* Indexed by RDMAP_ERR_FIRST - err. */
static const struct rdmap_err_entry rdmap_err_table[RDMAP_ERR_FIRST - RDMAP_ERR_LAST + 1] = {
	/* "Any" code is allowed for a local catastrophic error; send 0. */
	[RDMAP_ERR_FIRST - IW_ERDMAP_LOCAL] = RDMAP(RDMAP_ETYPE_LOCAL, 0x00),
	[RDMAP_ERR_FIRST - IW_ERDMAP_INVALID_STAG] = RDMAP(RDMAP_ETYPE_PROTECTION, 0x00),
	[RDMAP_ERR_FIRST - IW_ERDMAP_BOUNDS] = RDMAP(RDMAP_ETYPE_PROTECTION, 0x01),
	[RDMAP_ERR_FIRST - IW_ERDMAP_ACCESS] = RDMAP(RDMAP_ETYPE_PROTECTION, 0x02),
	[RDMAP_ERR_FIRST - IW_ERDMAP_STREAM] = RDMAP(RDMAP_ETYPE_PROTECTION, 0x03),
	[RDMAP_ERR_FIRST - IW_ERDMAP_TO_WRAP] = RDMAP(RDMAP_ETYPE_PROTECTION, 0x04),
	[RDMAP_ERR_FIRST - IW_ERDMAP_PROT_UNSPEC] = RDMAP(RDMAP_ETYPE_PROTECTION, 0xFF),
	[RDMAP_ERR_FIRST - IW_ERDMAP_VERSION] = RDMAP(RDMAP_ETYPE_OPERATION, 0x05),
	[RDMAP_ERR_FIRST - IW_ERDMAP_OPCODE] = RDMAP(RDMAP_ETYPE_OPERATION, 0x06),
	[RDMAP_ERR_FIRST - IW_ERDMAP_CATASTROPHIC_STREAM] = RDMAP(RDMAP_ETYPE_OPERATION, 0x07),
	[RDMAP_ERR_FIRST - IW_ERDMAP_CATASTROPHIC_GLOBAL] = RDMAP(RDMAP_ETYPE_OPERATION, 0x08),
	/*
	 * Figure 9 lists 0x09 under both protection and operation errors; a
	 * failed remote invalidate is reported as an operation error
	 * (wire-reference §5.4, our reading of RFC 5040 §5.3).
	 */
	[RDMAP_ERR_FIRST - IW_ERDMAP_CANT_INVALIDATE] = RDMAP(RDMAP_ETYPE_OPERATION, 0x09),
	[RDMAP_ERR_FIRST - IW_ERDMAP_OP_UNSPEC] = RDMAP(RDMAP_ETYPE_OPERATION, 0xFF),
	/* Events, not errors to report: the stream already ended or never failed on the wire. */
	[RDMAP_ERR_FIRST - IW_ERDMAP_TERMINATED] = NONE,
	[RDMAP_ERR_FIRST - IW_ERDMAP_FLUSHED] = NONE,
};

int rdmap_err_term(int err, struct iw_term_code *t)
{
	const struct rdmap_err_entry *e;

	if (err > RDMAP_ERR_FIRST || err < RDMAP_ERR_LAST)
		return IW_EINVAL;
	e = &rdmap_err_table[RDMAP_ERR_FIRST - err];
	if (!e->valid)
		return IW_EINVAL;
	if (t)
		*t = e->term;
	return IW_OK;
}

void iw_err_term(int err, struct iw_term_code *t)
{
	static const struct iw_term_code local = {IW_TERM_LAYER_RDMAP, RDMAP_ETYPE_LOCAL, 0};
	struct iw_term_code out;
	int rc = IW_EINVAL;

	if (err <= -100 && err >= -199)
		rc = mpa_err_term(err, &out);
	else if (err <= -200 && err >= -299)
		rc = ddp_err_term(err, &out);
	else if (err <= RDMAP_ERR_FIRST && err >= RDMAP_ERR_LAST)
		rc = rdmap_err_term(err, &out);
	if (rc != IW_OK)
		out = local;
	if (t)
		*t = out;
}
