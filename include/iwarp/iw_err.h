/* SPDX-License-Identifier: MIT */
/*
 * iw_err.h - the one error-code plan of the iwarp stack.
 *
 * Every layer reports failures as a negative `int` from the ranges below
 * (0 = success; positive values are counts, e.g. bytes consumed).  Each
 * layer owns one range, declares its codes in its own header and names them
 * itself (mpa_errname, ddp_errname, rdmap_errname, rpcrdma_errname); each
 * sans-I/O layer also has one table that maps its codes to the RDMAP
 * Terminate triple (layer, error type, error code) of RFC 5040 §4.8, so a
 * peer-caused error always has a defined reaction on the wire.
 *
 *   -1    .. -99    common (argument, memory, state, flow): here
 *   -100  .. -199   MPA (RFC 5044, RFC 6581): <iwarp/mpa.h>
 *   -200  .. -299   DDP (RFC 5041): <iwarp/ddp.h>
 *   -300  .. -399   RDMAP (RFC 5040): <iwarp/rdmap.h>
 *   -400  .. -499   RPC-over-RDMA (RFC 8166): <iwarp/rpcrdma_wire.h>
 *   -500  .. -599   verbs / connection manager / I/O engine (none yet)
 *   -1000 .. -4999  system errors: IW_ESYS(errno), so that an errno value
 *                   can travel in an iw_err without meeting a layer's code
 *                   (-ETIMEDOUT would be IW_EMPA_CRC)
 *
 * Conversions happen once, at an API edge: a system call's errno becomes
 * IW_ESYS(errno) where it enters an iw_err path (iw_err_sys()), and the
 * verbs API turns an iw_err into an errno (iwv.h) where the ibverbs
 * convention wants one.  Names: each layer's *_errname / *_strerror names
 * the codes of its own range and passes any other code down, so the
 * function of the highest layer a program uses names every code it can
 * see (rdmap_strerror and iwv_strerror: everything in libiwarp;
 * rpcrdma_strerror: everything).  iw_errname / iw_strerror here know the
 * common codes and IW_ESYS only.
 */
#ifndef IWARP_IW_ERR_H
#define IWARP_IW_ERR_H

#include <errno.h>
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
};

/* System errors: IW_ESYS(errno) for 0 < errno <= IW_ESYS_ERRNO_MAX;
 * IW_ESYS_UNKNOWN for anything else that claims to be an errno. */
#define IW_ESYS_BASE	  1000
#define IW_ESYS_ERRNO_MAX 3999
#define IW_ESYS(e)	  (-(IW_ESYS_BASE + (e)))
#define IW_ESYS_UNKNOWN	  (-IW_ESYS_BASE)

/* The iw_err for an errno value (e > 0); 0 stays 0. */
static inline int iw_err_sys(int e)
{
	if (e == 0)
		return 0;
	return e > 0 && e <= IW_ESYS_ERRNO_MAX ? IW_ESYS(e) : IW_ESYS_UNKNOWN;
}

/* The errno inside an IW_ESYS code (EIO for IW_ESYS_UNKNOWN), else 0. */
static inline int iw_err_errno(int err)
{
	if (err > IW_ESYS_UNKNOWN || err < IW_ESYS(IW_ESYS_ERRNO_MAX))
		return 0;
	return err == IW_ESYS_UNKNOWN ? EIO : -err - IW_ESYS_BASE;
}

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

/*
 * Short English text of a common code or an IW_ESYS code (the system's
 * text), "unknown error" otherwise: a layer's codes are named by that layer
 * (see the top of this file).
 */
IW_EXPORT const char *iw_strerror(int err);

/* Symbolic name of a common code ("IW_EINVAL") or of an IW_ESYS code (the
 * errno's name, "ETIMEDOUT"); "IW_E?" otherwise. */
IW_EXPORT const char *iw_errname(int err);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_IW_ERR_H */
