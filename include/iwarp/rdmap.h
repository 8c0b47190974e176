/* SPDX-License-Identifier: MIT */
/*
 * rdmap.h - Remote Direct Memory Access Protocol (RFC 5040): wire formats.
 * Sans-I/O.  This part holds what goes on the wire: the control octet and the
 * one const opcode table, the RDMA Read Request header, the Terminate message
 * and the RDMAP error plan.  The queue-pair engine (Send, Write, Read, ORD/IRD,
 * completions, the fatal-error path) builds on it.
 */
#ifndef IWARP_RDMAP_H
#define IWARP_RDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <iwarp/ddp.h>
#include <iwarp/iw_err.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Control octet (RFC 5040 §4.1, §4.2) = DDP RsvdULP[0:7]                   */
/* ---------------------------------------------------------------------- */

#define RDMAP_VERSION	  1
#define RDMAP_CTRL_RV	  0xC0
#define RDMAP_CTRL_RSV	  0x30
#define RDMAP_CTRL_OPCODE 0x0F

enum rdmap_opcode {
	RDMAP_OP_WRITE = 0x0,
	RDMAP_OP_READ_REQ = 0x1,
	RDMAP_OP_READ_RESP = 0x2,
	RDMAP_OP_SEND = 0x3,
	RDMAP_OP_SEND_INV = 0x4,
	RDMAP_OP_SEND_SE = 0x5,
	RDMAP_OP_SEND_SE_INV = 0x6,
	RDMAP_OP_TERMINATE = 0x7,
	/* RFC 7306 (its opcode table): used only on a QP that enabled the extension. */
	RDMAP_OP_IMM = 0x8,	    /* Immediate Data (QN 0) */
	RDMAP_OP_IMM_SE = 0x9,	    /* Immediate Data with Solicited Event (QN 0) */
	RDMAP_OP_ATOMIC_REQ = 0xA,  /* Atomic Request (QN 1, with the RDMA Read Requests) */
	RDMAP_OP_ATOMIC_RESP = 0xB, /* Atomic Response (QN 3) */
	RDMAP_OP_COUNT = 16,
};

static inline uint8_t rdmap_ctrl_make(uint8_t opcode)
{
	return (uint8_t)(RDMAP_VERSION << 6 | (opcode & RDMAP_CTRL_OPCODE));
}
static inline uint8_t rdmap_ctrl_rv(uint8_t ctrl)
{
	return ctrl >> 6;
}
static inline uint8_t rdmap_ctrl_opcode(uint8_t ctrl)
{
	return ctrl & RDMAP_CTRL_OPCODE;
}

/* How each opcode uses DDP (RFC 5040 §4.1, §4.2: the table of DDP field usage). */
struct rdmap_opcode_info {
	const char *name;      /* "Send with Invalidate", ... ; "reserved" when !supported */
	bool supported;	       /* opcodes 0-7, and 0x8-0xB (rfc7306) */
	bool rfc7306;	       /* an RFC 7306 extension opcode (0x8-0xB) */
	bool tagged;	       /* DDP tagged model */
	uint8_t qn;	       /* untagged queue (when !tagged) */
	bool inv_stag;	       /* RsvdULP[8:39] carries an Invalidate STag */
	bool solicited;	       /* Send with Solicited Event variants */
	bool payload;	       /* carries ULP payload */
	uint8_t rdmap_hdr_len; /* RDMAP header after the DDP header: 28 Read Request, 4+ Terminate,
				  8 Immediate Data, 52 Atomic Request, 12 Atomic Response */
};

/* The entry for any 4-bit opcode (never NULL; reserved ones have supported = false). */
IW_EXPORT const struct rdmap_opcode_info *rdmap_opcode_info(uint8_t opcode);

/* ---------------------------------------------------------------------- */
/* RDMA Read Request header (RFC 5040 §4.4)                                 */
/* ---------------------------------------------------------------------- */

#define RDMAP_READ_REQ_LEN 28

struct rdmap_read_req {
	uint32_t sink_stag; /* requester's buffer that receives the data */
	uint64_t sink_to;
	uint32_t size;	   /* RDMA Read Message Size */
	uint32_t src_stag; /* responder's advertised buffer */
	uint64_t src_to;
};

IW_EXPORT void rdmap_read_req_encode(const struct rdmap_read_req *r,
				     uint8_t buf[RDMAP_READ_REQ_LEN]);
IW_EXPORT void rdmap_read_req_decode(const uint8_t buf[RDMAP_READ_REQ_LEN],
				     struct rdmap_read_req *r);

/* ---------------------------------------------------------------------- */
/* RFC 7306 headers: Immediate Data, Atomic Request and Atomic Response   */
/* ---------------------------------------------------------------------- */

/*
 * Immediate Data: 8 octets right after the untagged DDP header, no ULP
 * payload.  The message consumes one untagged buffer of QN 0 like a Send.
 */
#define RDMAP_IMM_LEN	      8

#define RDMAP_ATOMIC_LEN      8 /* octets of an atomic target and of its result */
#define RDMAP_ATOMIC_REQ_LEN  52
#define RDMAP_ATOMIC_RESP_LEN 12
#define RDMAP_ATOMIC_AOP_MASK 0x0Fu /* low 4 bits of the first word; the other 28 reserved */

/* Atomic Operation Codes (AOpCode). */
enum rdmap_aop {
	RDMAP_AOP_FETCH_ADD = 0x0,
	RDMAP_AOP_CMP_SWAP = 0x2,
};

/*
 * Atomic Request header.  The target is the 8 octets at (stag, to) of the
 * responder, which must be 8-octet aligned.  FetchAdd adds add_swap (with
 * add_swap_mask marking field boundaries: a 1 at bit n stops the carry out
 * of bit n; 0 = one plain 64-bit add); CmpSwap compares under compare_mask
 * and, when equal, replaces the bits of add_swap_mask with add_swap.
 */
struct rdmap_atomic_req {
	uint8_t aop;	 /* AOpCode as received (decode keeps unknown values) */
	uint32_t req_id; /* Request Identifier, echoed by the Response */
	uint32_t stag;	 /* Remote STag */
	uint64_t to;	 /* Remote Tagged Offset */
	uint64_t add_swap;
	uint64_t add_swap_mask;
	uint64_t compare;
	uint64_t compare_mask;
};

struct rdmap_atomic_resp {
	uint32_t req_id; /* Original Request Identifier */
	uint64_t orig;	 /* Original Remote Data Value */
};

IW_EXPORT void rdmap_atomic_req_encode(const struct rdmap_atomic_req *a,
				       uint8_t buf[RDMAP_ATOMIC_REQ_LEN]);
IW_EXPORT void rdmap_atomic_req_decode(const uint8_t buf[RDMAP_ATOMIC_REQ_LEN],
				       struct rdmap_atomic_req *a);
IW_EXPORT void rdmap_atomic_resp_encode(const struct rdmap_atomic_resp *a,
					uint8_t buf[RDMAP_ATOMIC_RESP_LEN]);
IW_EXPORT void rdmap_atomic_resp_decode(const uint8_t buf[RDMAP_ATOMIC_RESP_LEN],
					struct rdmap_atomic_resp *a);

/*
 * Apply an atomic operation to *target (host order, 8-octet aligned) as one
 * indivisible step against every other thread using these functions or the
 * compiler's __atomic builtins on it.  Returns the original value.  `aop`
 * must be RDMAP_AOP_FETCH_ADD or RDMAP_AOP_CMP_SWAP.
 */
IW_EXPORT uint64_t rdmap_atomic_apply(uint64_t *target, const struct rdmap_atomic_req *a);

/* ---------------------------------------------------------------------- */
/* Terminate (RFC 5040 §4.8)                                                */
/* ---------------------------------------------------------------------- */

#define RDMAP_TERM_CTRL_LEN   4 /* Layer, EType, Error Code, M/D/R bits, reserved */
#define RDMAP_TERM_SEGLEN_LEN 2
#define RDMAP_TERM_MAX_LEN                                                                         \
	(RDMAP_TERM_CTRL_LEN + RDMAP_TERM_SEGLEN_LEN + DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)
#define RDMAP_TERM_M 0x80 /* octet 2 of the control word: DDP Segment Length valid */
#define RDMAP_TERM_D 0x40 /* DDP segment length and header are present */
#define RDMAP_TERM_R 0x20 /* RDMA Read Request header is present */

/* The RDMAP part of a Terminate message (what follows its 18-octet DDP header). */
struct rdmap_term {
	struct iw_term_code code; /* layer (0 RDMAP, 1 DDP, 2 LLP), etype, ecode */
	bool m, d, r;		  /* header-copy bits */
	uint16_t ddp_seg_len;	  /* when d: length of the errant segment (header + payload) */
	uint8_t ddp_hdr[DDP_UNTAGGED_HDR_LEN]; /* when d: the errant DDP header */
	uint8_t ddp_hdr_len;		       /* 14 (tagged) or 18 (untagged), from its T bit */
	uint8_t rreq[RDMAP_READ_REQ_LEN];      /* when r: the errant Read Request header */
};

/* Octets rdmap_term_encode() produces: 4 [+ 2 + 14/18 when d] [+ 28 when r]. */
IW_EXPORT size_t rdmap_term_len(const struct rdmap_term *t);
IW_EXPORT ssize_t rdmap_term_encode(const struct rdmap_term *t, uint8_t *buf, size_t cap);

/*
 * Decode the RDMAP part of a received Terminate.  Returns octets used,
 * IW_EAGAIN if the bits announce more octets than len holds, or IW_ERANGE for
 * a layer value above 2 (the message is then still reported, see RFC 5040
 * §5.4: a Terminate is delivered to the ULP as received).
 */
IW_EXPORT ssize_t rdmap_term_decode(const uint8_t *buf, size_t len, struct rdmap_term *t);

/*
 * Whether (layer, etype, ecode) is a combination the RFCs define: RDMAP
 * (RFC 5040 §4.8), DDP (RFC 5041 §7.2), LLP = MPA (RFC 5044 §8, RFC 6581 §8).
 */
IW_EXPORT bool rdmap_term_code_defined(const struct iw_term_code *c);

/*
 * Linux siw (6.1) writes the Terminate control word with little-endian
 * bitfields: Layer in the low and EType in the high nibble of octet 0, and
 * M/D/R in the low bits of octet 2 (0x01, 0x02, 0x04) - "DDP untagged,
 * invalid QN, header copied" goes out as 21 01 03 00 where RFC 5040 §4.8
 * says 12 01 c0 00.  rdmap_term_decode_siw() reads that layout (returns as
 * rdmap_term_decode).  rdmap_term_read() reads the first `len` octets of
 * a Terminate's RDMAP part of `total` octets both ways and takes siw's
 * reading (setting *siw_layout) only when it fits better: a defined code
 * whose header-copy bits account for exactly `total` octets beats a defined
 * code alone, which beats neither; on a tie the RFC reading wins, and it
 * returns what rdmap_term_decode returns.  (siw's "RDMAP, unexpected
 * opcode" 20 06 03 00 reads per the RFC as a defined MPA code, but only
 * siw's reading accounts for the header copy that follows.)
 */
IW_EXPORT ssize_t rdmap_term_decode_siw(const uint8_t *buf, size_t len, struct rdmap_term *t);
IW_EXPORT ssize_t rdmap_term_read(const uint8_t *buf, size_t len, size_t total,
				  struct rdmap_term *t, bool *siw_layout);

/*
 * Fill `t` for an error detected on a received segment: the triple from
 * `code`, and the header copies RFC 5040 figure 10 asks for - none for local
 * catastrophic and LLP errors; the DDP header and segment length (M and D)
 * for DDP errors and RDMAP remote protection/operation errors when `ddp_hdr`
 * is given; the Read Request header (R) too when `rreq` is given.
 */
IW_EXPORT void rdmap_term_fill(struct rdmap_term *t, const struct iw_term_code *code,
			       const uint8_t *ddp_hdr, size_t ddp_hdr_len, uint16_t seg_len,
			       const uint8_t *rreq);

/* ---------------------------------------------------------------------- */
/* Errors (RFC 5040 §4.8; Terminate Layer 0)                                */
/* ---------------------------------------------------------------------- */

enum rdmap_err {
	IW_ERDMAP_LOCAL = -300,		      /* 0x0/0x00 local catastrophic */
	IW_ERDMAP_INVALID_STAG = -301,	      /* 0x1/0x00 remote protection: invalid STag */
	IW_ERDMAP_BOUNDS = -302,	      /* 0x1/0x01 base or bounds violation */
	IW_ERDMAP_ACCESS = -303,	      /* 0x1/0x02 access rights violation */
	IW_ERDMAP_STREAM = -304,	      /* 0x1/0x03 STag not associated with RDMAP stream */
	IW_ERDMAP_TO_WRAP = -305,	      /* 0x1/0x04 */
	IW_ERDMAP_PROT_UNSPEC = -306,	      /* 0x1/0xFF unspecified protection error */
	IW_ERDMAP_VERSION = -310,	      /* 0x2/0x05 invalid RDMAP version */
	IW_ERDMAP_OPCODE = -311,	      /* 0x2/0x06 unexpected opcode */
	IW_ERDMAP_CATASTROPHIC_STREAM = -312, /* 0x2/0x07 localised to the stream */
	IW_ERDMAP_CATASTROPHIC_GLOBAL = -313, /* 0x2/0x08 */
	IW_ERDMAP_CANT_INVALIDATE = -314,     /* 0x2/0x09 STag cannot be invalidated */
	IW_ERDMAP_OP_UNSPEC = -315,	      /* 0x2/0xFF unspecified operation error */
	/* Not sent to the peer. */
	IW_ERDMAP_TERMINATED = -320, /* the peer sent a Terminate */
	IW_ERDMAP_FLUSHED = -321,    /* work request flushed: the QP left RTS */
};

/* Map an IW_ERDMAP_* code to its Terminate triple (Layer 0, or IW_TERM_NONE). */
IW_EXPORT int rdmap_err_term(int err, struct iw_term_code *t);

/*
 * Map any code of the error plan to its Terminate triple by range: MPA
 * (mpa_err_term), DDP (ddp_err_term) or RDMAP (rdmap_err_term).  Anything
 * else is a local catastrophic error (Layer 0, Type 0, Code 0).
 */
IW_EXPORT void iw_err_term(int err, struct iw_term_code *t);

/*
 * Name ("IW_ERDMAP_ACCESS", "IW_EMPA_CRC", "ETIMEDOUT") and short text of any
 * code of the libiwarp layers: RDMAP codes here, MPA and DDP codes through
 * mpa_errname / ddp_errname, common and IW_ESYS codes through iw_errname.
 */
IW_EXPORT const char *rdmap_errname(int err);
IW_EXPORT const char *rdmap_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_RDMAP_H */
