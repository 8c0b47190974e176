/* SPDX-License-Identifier: MIT */
/*
 * ddp.h - Direct Data Placement over reliable transports (RFC 5041).
 * Sans-I/O: headers, segmentation, the STag table and the receive-side checks
 * that decide *where* a segment's payload goes before the payload arrives.
 *
 *   headers       ddp_hdr_*        tagged (14 octets) and untagged (18 octets)
 *   segmentation  ddp_seg_*        one message -> segments of at most MULPDU
 *   STag table    ddp_stag_*       24-bit index + 8-bit key, PD, access, bounds
 *   placement     ddp_tagged_check / ddp_untagged_check
 *   errors        ddp_err_term     IW_EDDP_* -> Terminate (layer 1, type, code)
 *
 * DDP treats RsvdULP as opaque: RDMAP (rdmap.h) puts its control octet in
 * rsvdulp and, for untagged messages, the Invalidate STag in rsvdulp2.
 */
#ifndef IWARP_DDP_H
#define IWARP_DDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <iwarp/iw_err.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Wire constants (RFC 5041 §4)                                             */
/* ---------------------------------------------------------------------- */

#define DDP_TAGGED_HDR_LEN   14
#define DDP_UNTAGGED_HDR_LEN 18
#define DDP_HDR_MAX_LEN	     DDP_UNTAGGED_HDR_LEN
#define DDP_VERSION	     1

#define DDP_CTRL_T	     0x80 /* tagged */
#define DDP_CTRL_L	     0x40 /* last segment of the message */
#define DDP_CTRL_RSVD	     0x3C /* send 0, do not check */
#define DDP_CTRL_DV	     0x03 /* DDP version */

/* Untagged queue numbers used by RDMAP (RFC 5040 §5). */
enum ddp_qn {
	DDP_QN_SEND = 0,      /* Send variants */
	DDP_QN_READ_REQ = 1,  /* RDMA Read Requests */
	DDP_QN_TERMINATE = 2, /* Terminate */
	DDP_QN_COUNT = 3,     /* queues of RFC 5040 */
	/* RFC 7306: Atomic Responses (Atomic Requests share QN 1 with Read Requests) */
	DDP_QN_ATOMIC_RESP = 3,
	DDP_QN_COUNT_7306 = 4, /* queues of a QP with the RFC 7306 extensions */
};

/* MSN of the first message on every queue (RFC 5041 §4.3); it then wraps mod 2^32. */
#define DDP_MSN_FIRST 1u

/* ---------------------------------------------------------------------- */
/* Errors (RFC 5041 §7.2; Terminate Layer 1)                                */
/* ---------------------------------------------------------------------- */

enum ddp_err {
	IW_EDDP_LOCAL = -200,	       /* 0x0/0x00 local catastrophic */
	IW_EDDP_T_INVALID_STAG = -201, /* 0x1/0x00 */
	IW_EDDP_T_BOUNDS = -202,       /* 0x1/0x01 base or bounds violation */
	IW_EDDP_T_STREAM = -203,       /* 0x1/0x02 STag not associated with the stream */
	IW_EDDP_T_TO_WRAP = -204,      /* 0x1/0x03 */
	IW_EDDP_T_VERSION = -205,      /* 0x1/0x04 invalid DDP version (tagged) */
	IW_EDDP_U_QN = -206,	       /* 0x2/0x01 invalid QN */
	IW_EDDP_U_NO_BUFFER = -207,    /* 0x2/0x02 invalid MSN - no buffer available */
	IW_EDDP_U_MSN_RANGE = -208,    /* 0x2/0x03 invalid MSN - MSN range not valid */
	IW_EDDP_U_MO = -209,	       /* 0x2/0x04 invalid MO */
	IW_EDDP_U_TOO_LONG = -210,     /* 0x2/0x05 message too long for the buffer */
	IW_EDDP_U_VERSION = -211,      /* 0x2/0x06 invalid DDP version (untagged) */
	IW_EDDP_SHORT = -212,	       /* segment shorter than its DDP header (reported as
					    local catastrophic: no DDP code describes it) */
	/* Local (caller) errors of the STag table; never sent to a peer. */
	IW_EDDP_STAG_TABLE_FULL = -220, /* bounded table has no free index */
	IW_EDDP_STAG_UNKNOWN = -221,	/* local call named an STag that is not registered */
};

/* Map an IW_EDDP_* code to its Terminate triple (Layer 1).  IW_EINVAL outside the range. */
IW_EXPORT int ddp_err_term(int err, struct iw_term_code *t);

/* Name ("IW_EDDP_T_BOUNDS") and short text of a DDP code; any other code is
 * passed to iw_errname / iw_strerror (common and IW_ESYS codes). */
IW_EXPORT const char *ddp_errname(int err);
IW_EXPORT const char *ddp_strerror(int err);

/* ---------------------------------------------------------------------- */
/* Headers                                                                  */
/* ---------------------------------------------------------------------- */

struct ddp_hdr {
	bool tagged;	 /* T */
	bool last;	 /* L */
	uint8_t dv;	 /* DDP version as received (encode: always DDP_VERSION) */
	uint8_t rsvdulp; /* RsvdULP[0:7] (RDMAP control octet) */
	/* tagged (RFC 5041 §4.2) */
	uint32_t stag;
	uint64_t to;
	/* untagged (RFC 5041 §4.3) */
	uint32_t rsvdulp2; /* RsvdULP[8:39] (RDMAP Invalidate STag) */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
};

/* 14 for tagged, 18 for untagged. */
static inline size_t ddp_hdr_len(bool tagged)
{
	return tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

/* Encode (DV = 1, Rsvd bits 0).  Returns the header length or IW_ENOSPC. */
IW_EXPORT ssize_t ddp_hdr_encode(const struct ddp_hdr *h, uint8_t *buf, size_t cap);

/*
 * Decode the header at the start of buf[0..len).  Returns its length (14/18),
 * IW_EAGAIN if len is too short to hold it, or IW_EDDP_T_VERSION /
 * IW_EDDP_U_VERSION when DV != 1 (h is still filled, so the header can be
 * copied into the Terminate).  Reserved bits are ignored.
 */
IW_EXPORT ssize_t ddp_hdr_decode(const uint8_t *buf, size_t len, struct ddp_hdr *h);

/* ---------------------------------------------------------------------- */
/* Segmentation (RFC 5041 §5.2)                                             */
/* ---------------------------------------------------------------------- */

/*
 * Splits one message of msg_len octets into segments whose header + payload
 * fit in mulpdu.  Every segment carries the template's RsvdULP, STag (tagged)
 * or QN/MSN (untagged); TO = template TO + offset (tagged) or MO = offset
 * (untagged); L only on the last.  A zero-length message is one segment.
 */
struct ddp_seg {
	struct ddp_hdr tmpl;
	uint32_t msg_len;
	uint32_t off; /* payload octets already segmented */
	uint32_t max_payload;
	bool done;
};

/* IW_EINVAL if mulpdu cannot hold the header plus one octet. */
IW_EXPORT int ddp_seg_init(struct ddp_seg *s, const struct ddp_hdr *tmpl, uint32_t msg_len,
			   uint32_t mulpdu);

/*
 * Next segment: fills *h and the payload range [*off, *off + *len) of the
 * message.  Returns true, or false when every segment has been produced.
 */
IW_EXPORT bool ddp_seg_next(struct ddp_seg *s, struct ddp_hdr *h, uint32_t *off, uint32_t *len);

/* ---------------------------------------------------------------------- */
/* STag table                                                               */
/* ---------------------------------------------------------------------- */

/* An STag is a 24-bit index and an 8-bit key: stag = index << 8 | key. */
#define DDP_STAG_INDEX(stag)	  ((uint32_t)(stag) >> 8)
#define DDP_STAG_KEY(stag)	  ((uint8_t)((stag)&0xFF))
#define DDP_STAG_MAKE(index, key) ((uint32_t)(index) << 8 | (uint8_t)(key))
#define DDP_STAG_INDEX_MAX	  0xFFFFFFu

enum ddp_access {
	DDP_ACCESS_LOCAL_WRITE = 1u << 0,
	DDP_ACCESS_REMOTE_READ = 1u << 1,
	DDP_ACCESS_REMOTE_WRITE = 1u << 2,
	DDP_ACCESS_REMOTE_INVALIDATE = 1u << 3, /* a peer may invalidate it (Send with Inv.) */
	DDP_ACCESS_REMOTE_ATOMIC = 1u << 4,	/* RFC 7306 Atomic Requests may target it */
	DDP_ACCESS_MW_BIND = 1u << 5,		/* memory windows may be bound to it (MRs only) */
};

/* Result of checking a peer's reference to tagged memory. */
enum ddp_stag_check {
	DDP_STAG_OK = 0,
	DDP_STAG_INVALID, /* STag 0, unknown index, wrong key, or invalidated */
	DDP_STAG_PD,	  /* valid, but not associated with this stream's PD */
	DDP_STAG_ACCESS,  /* the needed access right is missing */
	DDP_STAG_BOUNDS,  /* TO below the base or TO + len beyond the end */
	DDP_STAG_WRAP,	  /* TO + len wraps 2^64 */
	DDP_STAG_STREAM,  /* a memory window bound to another stream (or checked without one) */
};

struct ddp_stag_table;

/*
 * A table of at most max_entries registrations (1 .. DDP_STAG_INDEX_MAX).
 * `seed` seeds the key generator: the core has no clock or entropy source, so
 * the caller passes entropy (the verbs layer reads getrandom()).  NULL on
 * allocation failure or a bad size.
 */
IW_EXPORT struct ddp_stag_table *ddp_stag_table_create(uint32_t max_entries, uint64_t seed);
IW_EXPORT void ddp_stag_table_destroy(struct ddp_stag_table *t);

/*
 * Register [addr, addr + len) for protection domain `pd` with `access`.  The
 * memory is addressed by tagged offsets starting at `base_to` (like an iova).
 * Returns IW_OK and *stag (index never 0, key random and different from the
 * last key used at that index), IW_EDDP_STAG_TABLE_FULL, or IW_EINVAL
 * (len 0 with a NULL addr is fine; base_to + len must not wrap).
 */
IW_EXPORT int ddp_stag_reg(struct ddp_stag_table *t, uint32_t pd, void *addr, uint64_t base_to,
			   uint64_t len, uint32_t access, uint32_t *stag);

/* Forget a registration (IW_EDDP_STAG_UNKNOWN if stag is not registered,
 * IW_ESTATE while memory windows are bound to it).  A bound window is unbound. */
IW_EXPORT int ddp_stag_dereg(struct ddp_stag_table *t, uint32_t stag);

/*
 * Invalidate: the STag stays registered but every access fails until
 * ddp_stag_revalidate() (or, for a fast-registration entry, ddp_stag_fast_reg())
 * hands out a new STag (same index, new key).
 * `remote` = requested by a peer (Send with Invalidate): then the entry must
 * belong to `pd` and allow DDP_ACCESS_REMOTE_INVALIDATE.  Returns IW_OK or a
 * check result through *why (DDP_STAG_INVALID / PD / ACCESS) with IW_EINVAL.
 */
IW_EXPORT int ddp_stag_invalidate(struct ddp_stag_table *t, uint32_t stag, uint32_t pd, bool remote,
				  enum ddp_stag_check *why);
IW_EXPORT int ddp_stag_revalidate(struct ddp_stag_table *t, uint32_t stag, uint32_t *new_stag);

/*
 * Check a peer reference, in this order: STag valid, owned by `pd`, [to,
 * to + len) inside the registration without wrapping (DDP's checks, RFC 5041
 * §7.1), then every right in `access` (RDMAP's, RFC 5040 §7.2): the first
 * that fails is the answer.  On
 * DDP_STAG_OK, *dst (if not NULL) receives the local address of `to`.  A
 * zero-length reference is still checked for validity/PD/access/base (RFC
 * 5040 §5: callers skip the check for zero-length segments where the RFC says so).
 * It checks without a stream (see below: a memory window fails with
 * DDP_STAG_STREAM), and since it returns one pointer, a range of a scattered
 * page-list registration that is not contiguous in memory fails with
 * DDP_STAG_BOUNDS when dst is not NULL: use ddp_stag_resolve() for those.
 */
IW_EXPORT enum ddp_stag_check ddp_stag_check(const struct ddp_stag_table *t, uint32_t stag,
					     uint32_t pd, uint32_t access, uint64_t to,
					     uint64_t len, void **dst);

/*
 * Kinds of entries, beyond the plain registrations of ddp_stag_reg():
 *
 *   fast-registration  ddp_stag_alloc() allocates the index (with room for a
 *                      page list of up to max_pages) and leaves it INVALID;
 *                      ddp_stag_fast_reg() makes it valid over a page list with
 *                      a key chosen by the consumer (index << 8 | new key: the
 *                      STag with the old key stops working).  It must be
 *                      invalid (fresh or invalidated) to be registered again.
 *   memory window      ddp_stag_alloc_mw() allocates an invalid window (type 2,
 *                      RFC 5040 §2.1 "associated with an RDMAP Stream");
 *                      ddp_stag_bind() binds it, with a new key, to a range of
 *                      a valid MR that allows DDP_ACCESS_MW_BIND, for one
 *                      stream: only checks naming that stream may use it.
 *
 * Streams: a non-zero id per RDMAP stream (QP), chosen by the caller.  Stream
 * 0 means "no stream": a window never matches it, so ddp_stag_check() and
 * local SGE resolution (stream 0) can never reach memory through a window.
 *
 * Page lists: an octet at tagged offset iova + k lives at
 * pages[(first_page_off + k) / page_size] + (first_page_off + k) % page_size.
 * A list whose pages are virtually contiguous is stored as a plain contiguous
 * range (zero copy everywhere); a scattered one is reached through
 * ddp_stag_resolve() and the ddp_stag_ref_* span helpers.
 */

/* The maximum pages of a fast-registration entry (its list is allocated once by ddp_stag_alloc). */
#define DDP_FAST_REG_MAX_PAGES (1u << 16)
#define DDP_PAGE_SIZE_MIN      4096u
#define DDP_PAGE_SIZE_MAX      (1u << 30)

/* Allocate an invalid fast-registration STag of `pd` (max_pages 1..DDP_FAST_REG_MAX_PAGES).
 * IW_OK, IW_EINVAL, IW_ENOMEM, IW_EDDP_STAG_TABLE_FULL. */
IW_EXPORT int ddp_stag_alloc(struct ddp_stag_table *t, uint32_t pd, uint32_t max_pages,
			     uint32_t *stag);

struct ddp_fast_reg {
	uint32_t stag;	 /* index << 8 | the new key */
	uint32_t pd;	 /* must be the entry's PD */
	uint32_t access; /* DDP_ACCESS_* */
	uint64_t iova;	 /* tagged offset of the first octet */
	uint64_t length;
	const uint64_t *pages;	 /* page addresses, each a multiple of page_size */
	uint32_t npages;	 /* 1..the entry's max_pages */
	uint32_t page_size;	 /* power of two, DDP_PAGE_SIZE_MIN..DDP_PAGE_SIZE_MAX */
	uint32_t first_page_off; /* < page_size */
};

/*
 * Fast registration.  IW_OK (the STag is fr->stag from now on), or
 * IW_EDDP_STAG_UNKNOWN (no fast-registration entry at that index), IW_ESTATE
 * (the entry is still valid, or windows are bound to it), IW_EINVAL (another
 * PD, bad access, page size or alignment, a length the pages do not cover,
 * iova + length wraps).  The page list is copied: the caller's array may go
 * once this returns.
 */
IW_EXPORT int ddp_stag_fast_reg(struct ddp_stag_table *t, const struct ddp_fast_reg *fr);

/* True when the index of `stag` (any key) holds a fast-registration entry;
 * *max_pages (if not NULL) gets its page capacity. */
IW_EXPORT bool ddp_stag_fast_reg_entry(const struct ddp_stag_table *t, uint32_t stag,
				       uint32_t *max_pages);

/* Allocate an invalid (unbound) type-2 memory window of `pd`. */
IW_EXPORT int ddp_stag_alloc_mw(struct ddp_stag_table *t, uint32_t pd, uint32_t *stag);

/*
 * Bind the window at the index of `mw_stag` (whose key must differ from the
 * window's current key) to [addr, addr + len) of the valid MR `mr_stag` with
 * `access` (remote rights only; remote write/atomic need the MR's local
 * write), for `stream` (non-zero).  A window already bound may be bound again
 * only from the same stream; len 0 unbinds it (it stays invalid, with the new
 * key).  Both must belong to `pd`.  IW_OK or IW_EINVAL with *why: INVALID
 * (no such window or MR, MR not valid, key unchanged, stream 0 or another
 * stream's window), PD, ACCESS (MR lacks DDP_ACCESS_MW_BIND, bad rights),
 * BOUNDS / WRAP (range outside the MR).
 */
IW_EXPORT int ddp_stag_bind(struct ddp_stag_table *t, uint32_t mw_stag, uint32_t mr_stag,
			    uint32_t pd, uint32_t stream, uint64_t addr, uint64_t len,
			    uint32_t access, enum ddp_stag_check *why);

/*
 * Invalidate with PD and stream checks (ddp_stag_invalidate() is this with
 * stream 0).  Local (remote == false, a Local Invalidate work request): the
 * STag must be registered with its current key and belong to `pd` (PD
 * otherwise); invalidating an invalid STag again is IW_OK.  Remote (Send with
 * Invalidate): also valid, REMOTE_INVALIDATE, and a window must be bound to
 * `stream` (STREAM otherwise).  An invalidated window is unbound from its MR.
 */
IW_EXPORT int ddp_stag_invalidate_stream(struct ddp_stag_table *t, uint32_t stag, uint32_t pd,
					 uint32_t stream, bool remote, enum ddp_stag_check *why);

/* Free the entry at the index of `stag`, whatever its key (the verbs layer's
 * MRs and windows change keys behind their handles): IW_EDDP_STAG_UNKNOWN if
 * nothing is registered there, IW_ESTATE while windows are bound to it (it
 * stays).  A bound window is unbound first. */
IW_EXPORT int ddp_stag_free_index(struct ddp_stag_table *t, uint32_t stag);

/*
 * A resolved reference: where the octets of a checked range [to, to + len)
 * live.  Contiguous: addr is the local address of `to` (pages NULL).
 * Scattered (page-list registration): addr NULL, and octet k of the range is at
 * pages[(pg_off + k) >> page_shift] + ((pg_off + k) & page mask).  The pages
 * pointer refers to the table's copy: valid while the entry stays registered.
 */
struct ddp_stag_ref {
	uint8_t *addr;
	const uint64_t *pages;
	uint64_t pg_off;
	uint32_t page_shift;
};

/*
 * ddp_stag_check() with a stream (0: none) that fills *ref (if not NULL) on
 * DDP_STAG_OK.  Windows: valid, bound to `stream` (else DDP_STAG_STREAM),
 * range inside the window, and the MR below still valid.
 */
IW_EXPORT enum ddp_stag_check ddp_stag_resolve(const struct ddp_stag_table *t, uint32_t stag,
					       uint32_t pd, uint32_t stream, uint32_t access,
					       uint64_t to, uint64_t len, struct ddp_stag_ref *ref);

/* True when the reference is page-list backed (use the helpers below). */
static inline bool ddp_stag_ref_scattered(const struct ddp_stag_ref *r)
{
	return r->pages != NULL;
}

/* The host spans of [off, off + len) of a resolved reference (off from its first
 * octet), at most max of them; returns the count and *covered the octets they hold
 * (less than len when max was too small: call again from off + *covered). */
IW_EXPORT int ddp_stag_ref_spans(const struct ddp_stag_ref *r, uint64_t off, uint64_t len,
				 struct iovec *iov, int max, uint64_t *covered);
/* Copy n octets into / out of [off, off + n) of a resolved reference. */
IW_EXPORT void ddp_stag_ref_copy_in(const struct ddp_stag_ref *r, uint64_t off, const void *src,
				    size_t n);
IW_EXPORT void ddp_stag_ref_copy_out(const struct ddp_stag_ref *r, uint64_t off, void *dst,
				     size_t n);

/* Registered entries (for leak checks in tests). */
IW_EXPORT uint32_t ddp_stag_count(const struct ddp_stag_table *t);

/* ---------------------------------------------------------------------- */
/* Receive-side placement checks (RFC 5041 §7.1)                             */
/* ---------------------------------------------------------------------- */

/*
 * Tagged segment with `payload_len` octets: resolve its target before the
 * payload arrives.  Needs remote-write access (`access` lets RDMAP ask for
 * another right, e.g. local write for Read Responses into the sink buffer).
 * Zero-length segments are not checked (RFC 5041 §5.2) and give *dst = NULL.
 * Returns IW_OK or IW_EDDP_T_INVALID_STAG / _STREAM / _BOUNDS / _TO_WRAP.  A
 * missing access right returns IW_EDDP_T_INVALID_STAG with *why ==
 * DDP_STAG_ACCESS: DDP has no code for it, and RDMAP reports it instead as a
 * Remote Protection access-rights error (RFC 5040 §7.2).  *why (if not NULL)
 * always receives the check result.
 */
IW_EXPORT int ddp_tagged_check(const struct ddp_stag_table *t, const struct ddp_hdr *h, uint32_t pd,
			       uint32_t access, uint32_t payload_len, void **dst,
			       enum ddp_stag_check *why);

/* ddp_tagged_check() for the stream `stream`, resolving the target into *ref
 * (zeroed for a zero-length segment); DDP_STAG_STREAM gives IW_EDDP_T_STREAM. */
IW_EXPORT int ddp_tagged_resolve(const struct ddp_stag_table *t, const struct ddp_hdr *h,
				 uint32_t pd, uint32_t stream, uint32_t access,
				 uint32_t payload_len, struct ddp_stag_ref *ref,
				 enum ddp_stag_check *why);

/*
 * Per-queue receive state of one untagged queue: the MSN of the message now
 * being received (or next expected) and how much of it has been placed.
 */
struct ddp_untagged_queue {
	uint32_t msn;	 /* current message's MSN (starts at DDP_MSN_FIRST) */
	uint32_t placed; /* payload octets of the current message placed so far */
	bool in_message; /* a non-last segment of msn has been seen */
};

IW_EXPORT void ddp_untagged_queue_init(struct ddp_untagged_queue *q);

/*
 * Check an untagged segment against its queue (QN must be < nqueues) and the
 * buffer that will receive it: buf_len = length of the posted buffer for the
 * current message, or -1 when none is posted.  Rules (RFC 5041 §7.1): MSN must
 * be the current message's (else IW_EDDP_U_MSN_RANGE - in-order TCP means a
 * different MSN is a skipped, old or interleaved message), a buffer must exist
 * (IW_EDDP_U_NO_BUFFER), MO must continue the message (IW_EDDP_U_MO), and
 * MO + payload must fit the buffer (IW_EDDP_U_TOO_LONG).  On success the caller
 * places the payload at buffer + MO and then calls ddp_untagged_advance().
 */
IW_EXPORT int ddp_untagged_check(const struct ddp_untagged_queue *q, const struct ddp_hdr *h,
				 uint32_t nqueues, int64_t buf_len, uint32_t payload_len);

/* Account for a placed segment; when it was the last, move to the next MSN and
 * return true (the message is complete: total length = MO + payload_len). */
IW_EXPORT bool ddp_untagged_advance(struct ddp_untagged_queue *q, const struct ddp_hdr *h,
				    uint32_t payload_len);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_DDP_H */
