/* SPDX-License-Identifier: MIT */
/*
 * iw_err.h - the one error-code plan of the iwarp stack.
 *
 * Every layer reports failures as a negative `int` from the ranges below
 * (0 = success; positive values are counts, e.g. bytes consumed).  Each
 * layer owns one range and one table that maps its codes to the RDMAP
 * Terminate triple (layer, error type, error code) of RFC 5040 §4.8, so a
 * peer-caused error always has a defined reaction on the wire.  The verbs
 * boundary converts these codes to errno / work-completion status in one
 * place.
 *
 *   -1   .. -99   common (argument, memory, state, flow)
 *   -100 .. -199  MPA (RFC 5044, RFC 6581)
 *   -200 .. -299  DDP (RFC 5041)
 *   -300 .. -399  RDMAP (RFC 5040)
 *   -400 .. -499  RPC-over-RDMA (RFC 8166)
 *   -500 .. -599  verbs / connection manager / I/O engine
 */
#ifndef IWARP_IW_ERR_H
#define IWARP_IW_ERR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef IW_EXPORT
#define IW_EXPORT __attribute__((visibility("default")))
#endif

enum iw_err {
	IW_OK = 0,

	/* common */
	IW_ENOMEM = -1,	   /* allocation failed */
	IW_EINVAL = -2,	   /* bad argument from the local caller */
	IW_EAGAIN = -3,	   /* need more input (or more output room) */
	IW_ENOSPC = -4,	   /* caller's buffer too small */
	IW_ERANGE = -5,	   /* value out of the allowed range */
	IW_ESTATE = -6,	   /* call not valid in the object's current state */
	IW_ETIMEDOUT = -7, /* a timer expired */
	IW_ENOTSUP = -8,   /* feature not supported / not compiled in */

	/* MPA (RFC 5044 §8, RFC 6581 §8).  Setup-frame errors first. */
	IW_EMPA_KEY = -100,	   /* startup frame key is neither Req nor Rep key */
	IW_EMPA_REV = -101,	   /* revision we cannot work with */
	IW_EMPA_PDLEN = -102,	   /* PD_Length over 512 or not matching the frame */
	IW_EMPA_FRAME = -103,	   /* otherwise improperly formatted startup frame */
	IW_EMPA_UNEXPECTED = -104, /* bytes that may not arrive now (e.g. before the RTR) */
	IW_EMPA_REJECTED = -105,   /* peer answered with R=1 (not a protocol error) */
	IW_EMPA_TIMEOUT = -106,	   /* startup did not finish in time */
	IW_EMPA_TRUNCATED = -107,  /* stream closed in the middle of a frame */
	/* MPA full-operation errors (FPDU receive). */
	IW_EMPA_CRC = -110,    /* CRC mismatch (MPA error 2) */
	IW_EMPA_MARKER = -111, /* Marker FPDUPTR and ULPDU_Length disagree (MPA error 3) */
	IW_EMPA_LEN = -112,    /* ULPDU_Length beyond what this receiver accepts */
	IW_EMPA_IRD = -113,    /* insufficient IRD resources (RFC 6581, MPA error 6) */
	IW_EMPA_RTR = -114,    /* no matching RTR option (RFC 6581, MPA error 7) */
	IW_EMPA_LOCAL = -115,  /* local catastrophic error (RFC 6581, MPA error 5) */
	IW_EMPA_CLOSED = -116, /* LLP closed / reset / lost (MPA error 1) */
};

/*
 * Terminate message error triple (RFC 5040 §4.8).  Layer: 0 RDMAP, 1 DDP,
 * 2 LLP (MPA).  An error that must not produce a Terminate (e.g. a bad MPA
 * startup frame, which closes TCP instead) maps to `IW_TERM_NONE`.
 */
enum iw_term_layer {
	IW_TERM_LAYER_RDMAP = 0,
	IW_TERM_LAYER_DDP = 1,
	IW_TERM_LAYER_LLP = 2,
	IW_TERM_NONE = 0xF, /* no Terminate: close the connection instead */
};

struct iw_term_code {
	uint8_t layer; /* enum iw_term_layer */
	uint8_t etype; /* 4 bits */
	uint8_t ecode; /* 8 bits */
};

/* LLP (MPA) Terminate codes: Layer 2, Error Type 0 (RFC 5044 §8, RFC 6581 §8). */
enum iw_term_llp_code {
	IW_TERM_LLP_ETYPE_MPA = 0,
	IW_TERM_LLP_CLOSED = 1,
	IW_TERM_LLP_CRC = 2,
	IW_TERM_LLP_MARKER = 3,
	IW_TERM_LLP_BAD_FRAME = 4,
	IW_TERM_LLP_LOCAL = 5,
	IW_TERM_LLP_IRD = 6,
	IW_TERM_LLP_RTR = 7,
};

/* Short English text for any code of this plan ("unknown error" otherwise). */
IW_EXPORT const char *iw_strerror(int err);

/* Symbolic name of a code, e.g. "IW_EMPA_CRC" (for logs and tests). */
IW_EXPORT const char *iw_errname(int err);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_IW_ERR_H */
