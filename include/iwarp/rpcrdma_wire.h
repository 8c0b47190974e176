/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_wire.h - RPC-over-RDMA version 1 on the wire (RFC 8166 §4), sans-I/O.
 *
 *   transport header  rpcrdma_hdr_encode / rpcrdma_hdr_decode / rpcrdma_hdr_size
 *   RFC 8797 CM data  rpcrdma_cm_pdata_encode / _decode (+ our extension block)
 *   ONC RPC header    rpcrdma_rpc_parse: xid, direction, prog/vers/proc, body offset
 *
 * Every XDR word is a 32-bit big-endian integer (RFC 4506 §3, §4.1).  Offsets
 * (64 bits) go high word first (XDR hyper, RFC 4506 §4.5).
 *
 * The decoder is "check, then parse": it first walks the whole header with a
 * bounded cursor, counting list entries against the RPCRDMA_MAX_* limits
 * below, and only then fills the caller's struct, so a peer-supplied count or
 * length never sizes an allocation (there is none).  The struct is fixed-size.
 *
 * Chunks.  A Read list on the wire is a flat list of read segments; a Read
 * chunk is a run of consecutive segments with the same Position (RFC 8166
 * §3.4.5).  The decoder groups them: read[i] is a chunk whose segments are
 * segs[read[i].first .. + read[i].nseg).  Write chunks and the Reply chunk use
 * the same segment pool.  The encoder takes the same struct, so a Read list of
 * two chunks at different positions is encoded as their segments in order.
 */
#ifndef IWARP_RPCRDMA_WIRE_H
#define IWARP_RPCRDMA_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwarp/iw_err.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_VERSION	       1
#define RPCRDMA_HDR_MIN	       28   /* 7 words: anything shorter is discarded (§4.5) */
#define RPCRDMA_HDR_ERR_CHUNK  20   /* 5 words */
#define RPCRDMA_HDR_ERR_VERS   28   /* 7 words */
#define RPCRDMA_INLINE_MIN     1024 /* every receiver supports this (§3.3.3) */
#define RPCRDMA_INLINE_DEFAULT 4096 /* Linux's default (RFC 8797 §4) */
#define RPCRDMA_PORT	       20049

/* Implementation limits of one transport header (what we decode and encode). */
#define RPCRDMA_MAX_READ_CHUNKS	 8  /* Read chunks (distinct positions) in a Read list */
#define RPCRDMA_MAX_WRITE_CHUNKS 8  /* chunks in a Write list */
#define RPCRDMA_MAX_CHUNK_SEGS	 16 /* segments in one chunk (RFC 8267 §6: ≥ 16) */
#define RPCRDMA_MAX_HDR_SEGS	 64 /* segments in one header, all lists together */
/* Largest header we build or accept: 7 words + every segment at 6 words + the
 * list words.  Well under RPCRDMA_INLINE_MIN, so any header fits a Send. */
#define RPCRDMA_HDR_MAX (4 * (7 + 6 * RPCRDMA_MAX_HDR_SEGS + 2 * RPCRDMA_MAX_WRITE_CHUNKS + 2))

enum rpcrdma_proc {
	RDMA_MSG = 0,
	RDMA_NOMSG = 1,
	RDMA_MSGP = 2, /* RFC 8166 §4.6.1: never sent; a responder answers ERR_CHUNK */
	RDMA_DONE = 3, /* RFC 8166 §4.6.2: discarded unless the extension (rpcrdma.h) is on */
	RDMA_ERROR = 4,
};

enum rpcrdma_errcode {
	ERR_VERS = 1,
	ERR_CHUNK = 2,
};

/* RPC-over-RDMA errors (range -400 .. -499 of iw_err.h); rpcrdma_strerror names them. */
enum rpcrdma_err {
	IW_ERPC_SHORT = -400,	    /* under 28 octets: discard silently (xid untrustworthy) */
	IW_ERPC_VERS = -401,	    /* rdma_vers != 1: answer ERR_VERS (xid, vers are filled) */
	IW_ERPC_PROC = -402,	    /* unknown rdma_proc: ERR_CHUNK */
	IW_ERPC_XDR = -403,	    /* truncated list, discriminator not 0/1: ERR_CHUNK */
	IW_ERPC_LIMIT = -404,	    /* more chunks/segments than RPCRDMA_MAX_*: ERR_CHUNK */
	IW_ERPC_NOMSG_EMPTY = -405, /* RDMA_NOMSG without any chunk (§4.2.4): ERR_CHUNK */
	IW_ERPC_POSITION = -406,    /* Read position not a multiple of 4, or not ascending */
	IW_ERPC_MSGP = -407,	    /* RDMA_MSGP received (decoded; the caller refuses it) */
	IW_ERPC_XID = -408,	    /* rdma_xid differs from the RPC message's XID */
	IW_ERPC_ERRCODE = -409,	    /* RDMA_ERROR with an unknown rdma_err: discard */
	IW_ERPC_RPC = -410,	    /* RPC message header undecodable */
	IW_ERPC_PDATA = -411,	    /* CM private data not RFC 8797 (treated as absent) */
	/* transport-level (rpcrdma.h) causes, for status codes and logs */
	IW_ERPC_REMOTE_VERS = -420,  /* the peer answered ERR_VERS */
	IW_ERPC_REMOTE_CHUNK = -421, /* the peer answered ERR_CHUNK */
	IW_ERPC_TOOBIG = -422,	     /* message larger than any mechanism/limit allows */
	IW_ERPC_ULB = -423,	  /* upper-layer binding violated (ineligible item, unused chunk) */
	IW_ERPC_CANCELLED = -424, /* call cancelled by the caller */
	IW_ERPC_CONN = -425,	  /* connection lost and could not be re-established */
	IW_ERPC_SHUTDOWN = -426,  /* transport closed with the call outstanding */
	IW_ERPC_RDMA = -427,	  /* an RDMA Read/Write of a chunk failed */
};

/*
 * Name ("IW_ERPC_CONN", "IW_EMPA_CRC", "ECONNREFUSED") and short text of any
 * code the RPC-over-RDMA layers report: IW_ERPC_* here, everything else
 * through rdmap_errname / rdmap_strerror (the libiwarp layers, common and
 * IW_ESYS codes).  0 is "IW_OK" / "success".
 */
IW_EXPORT const char *rpcrdma_errname(int err);
IW_EXPORT const char *rpcrdma_strerror(int err);

struct rpcrdma_segment {
	uint32_t handle; /* STag */
	uint32_t length;
	uint64_t offset; /* Tagged Offset */
};

struct rpcrdma_chunk {
	uint32_t position; /* Read chunks only: offset in the unreduced Payload stream */
	uint16_t first;	   /* index of the first segment in hdr->segs */
	uint16_t nseg;	   /* Write chunk: may be 0 (an "empty" chunk) */
};

struct rpcrdma_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credits;
	uint32_t proc; /* enum rpcrdma_proc */

	/* RDMA_MSG, RDMA_NOMSG (and the lists of a decoded RDMA_MSGP) */
	uint32_t msgp_align, msgp_thresh; /* RDMA_MSGP only */
	uint16_t n_read;		  /* Read chunks */
	uint16_t n_write;		  /* Write chunks */
	bool has_reply;			  /* Reply chunk present */
	uint16_t nsegs;			  /* used entries of segs[] */
	struct rpcrdma_chunk read[RPCRDMA_MAX_READ_CHUNKS];
	struct rpcrdma_chunk write[RPCRDMA_MAX_WRITE_CHUNKS];
	struct rpcrdma_chunk reply;
	struct rpcrdma_segment segs[RPCRDMA_MAX_HDR_SEGS];

	/* RDMA_ERROR */
	uint32_t err; /* enum rpcrdma_errcode */
	uint32_t vers_low, vers_high;

	/* decode output: octets of transport header (the payload starts here) */
	uint32_t hdr_len;
};

/* Start a header: zero everything, set xid, vers = 1, credits, proc. */
IW_EXPORT void rpcrdma_hdr_init(struct rpcrdma_hdr *h, uint32_t xid, uint32_t credits,
				uint32_t proc);
/* Add a segment to a new or the last chunk.  new_chunk: start a new chunk
 * (for a Read chunk with `position`).  IW_ERPC_LIMIT past the limits. */
IW_EXPORT int rpcrdma_hdr_add_read(struct rpcrdma_hdr *h, bool new_chunk, uint32_t position,
				   const struct rpcrdma_segment *seg);
IW_EXPORT int rpcrdma_hdr_add_write(struct rpcrdma_hdr *h, bool new_chunk,
				    const struct rpcrdma_segment *seg); /* seg NULL: empty chunk */
IW_EXPORT int rpcrdma_hdr_add_reply(struct rpcrdma_hdr *h, const struct rpcrdma_segment *seg);

/* Octets rpcrdma_hdr_encode will write (0 if the struct is inconsistent). */
IW_EXPORT size_t rpcrdma_hdr_size(const struct rpcrdma_hdr *h);
/* Encode into buf[0..cap).  Returns the length, IW_ENOSPC if it does not fit
 * (nothing useful written), IW_EINVAL for an inconsistent struct (counts over
 * limits, segment indexes out of range, unknown proc/err).  RDMA_ERROR encodes
 * 20 (ERR_CHUNK) or 28 (ERR_VERS) octets. */
IW_EXPORT int rpcrdma_hdr_encode(const struct rpcrdma_hdr *h, void *buf, size_t cap);
/*
 * Decode buf[0..len).  Returns hdr_len (≥ 16) on success, or an IW_ERPC_*:
 *   IW_ERPC_SHORT       len < 16, or len < 28 for RDMA_MSG/NOMSG/MSGP or an
 *                       rdma_vers != 1 (the RFC's "shorter than 28 octets:
 *                       discard"); an RDMA_ERROR needs 20 (ERR_CHUNK) or 28
 *                       (ERR_VERS), RDMA_DONE 16
 *   IW_ERPC_VERS        xid and vers filled; nothing else.  Exception: an
 *                       RDMA_ERROR / ERR_VERS decodes (28) whatever its
 *                       rdma_vers, which echoes the failing request's (§4.5;
 *                       its layout is the same in every version, §7)
 *   IW_ERPC_PROC, _XDR, _LIMIT, _NOMSG_EMPTY, _POSITION, _ERRCODE
 *                       xid, vers, credits, proc filled
 * RDMA_MSGP decodes fully and returns IW_ERPC_MSGP (the caller decides).
 * RDMA_DONE decodes (no body: 4 words) and returns 16.
 * Never reads outside buf; never allocates.
 */
IW_EXPORT int rpcrdma_hdr_decode(const void *buf, size_t len, struct rpcrdma_hdr *h);

/* Sum of the segment lengths of a chunk (64-bit: no overflow). */
IW_EXPORT uint64_t rpcrdma_chunk_len(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *c);

/* What a responder does with a decode error (RFC 8166 §4.5). */
enum rpcrdma_err_action {
	RPCRDMA_DISCARD = 0,
	RPCRDMA_REPLY_ERR_VERS = 1,
	RPCRDMA_REPLY_ERR_CHUNK = 2,
};
IW_EXPORT enum rpcrdma_err_action rpcrdma_err_action(int err);

/* ---------------------------------------------------------------------- */
/* RFC 8797 CM private data (on iWARP it follows the RFC 6581 IRD/ORD word)  */
/* ---------------------------------------------------------------------- */

#define RPCRDMA_CM_MAGIC	  0xf6ab0e18u
#define RPCRDMA_CM_VERSION	  1
#define RPCRDMA_CM_F_SND_W_INV_OK 0x01 /* the sender accepts Send With Invalidate */
#define RPCRDMA_CM_PDATA_LEN	  8

/*
 * Our extension block, appended after the 8 RFC 8797 octets (Linux reads the
 * first 8 octets only and ignores the rest):
 *   octets 0-3  magic 0x69775250 ("iwRP")
 *   octet  4    version 1
 *   octet  5    flags: 0x01 = responder-provided Read chunks + RDMA_DONE supported
 *   octets 6-7  reserved, zero
 */
#define RPCRDMA_EXT_MAGIC   0x69775250u
#define RPCRDMA_EXT_VERSION 1
#define RPCRDMA_EXT_F_RPRC  0x01
#define RPCRDMA_EXT_LEN	    8

struct rpcrdma_cm_pdata {
	bool present; /* a valid RFC 8797 block was found */
	uint8_t version;
	uint8_t flags;	    /* RPCRDMA_CM_F_* */
	uint32_t send_size; /* octets: the sender's max inline send (1024 .. 262144) */
	uint32_t recv_size; /* octets: the sender's receive buffers (max inline it accepts) */
	bool ext_present;   /* our extension block follows */
	uint8_t ext_flags;  /* RPCRDMA_EXT_F_* */
};

/* Encode (8 octets, or 16 with ext_present).  Sizes are rounded down to a
 * multiple of 1024 and clamped to 1024..262144 (one octet: size/1024 - 1).
 * Returns the length or IW_ENOSPC. */
IW_EXPORT int rpcrdma_cm_pdata_encode(const struct rpcrdma_cm_pdata *p, void *buf, size_t cap);
/* Decode whatever private data the peer sent (may be NULL/0).  Absent or
 * foreign data: present = false and sizes = RPCRDMA_INLINE_MIN (the RFC 8797
 * default), returning IW_ERPC_PDATA; a valid block returns 0. */
IW_EXPORT int rpcrdma_cm_pdata_decode(const void *buf, size_t len, struct rpcrdma_cm_pdata *p);

/* ---------------------------------------------------------------------- */
/* ONC RPC message header (RFC 5531), as much as the transport needs        */
/* ---------------------------------------------------------------------- */

enum { RPC_MSG_CALL = 0, RPC_MSG_REPLY = 1 };

struct rpcrdma_rpcinfo {
	uint32_t xid;
	uint32_t msg_type; /* RPC_MSG_CALL / RPC_MSG_REPLY */
	/* CALL */
	uint32_t rpcvers, prog, vers, proc;
	uint32_t cred_flavor; /* 6 = RPCSEC_GSS: the binding reduces nothing */
	/* REPLY */
	uint32_t reply_stat;  /* 0 MSG_ACCEPTED, 1 MSG_DENIED */
	uint32_t accept_stat; /* 0 SUCCESS ... (MSG_ACCEPTED only) */
	/* offset of the procedure arguments (CALL) or results (REPLY, accepted,
	 * SUCCESS); for other replies the end of what was parsed */
	uint32_t body_off;
};

/* Parse the RPC header of msg[0..len).  0, or IW_ERPC_RPC if truncated /
 * inconsistent (auth bodies over 400 octets, unknown msg_type). */
IW_EXPORT int rpcrdma_rpc_parse(const void *msg, size_t len, struct rpcrdma_rpcinfo *ri);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_RPCRDMA_WIRE_H */
