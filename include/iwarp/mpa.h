/* SPDX-License-Identifier: MIT */
/*
 * mpa.h - Marker PDU Aligned framing for TCP (RFC 5044) with enhanced
 * connection setup (RFC 6581).  Sans-I/O: nothing here touches a socket, a
 * clock or a thread.  Bytes come in as (pointer, length[, now]); bytes go
 * out as iovecs; time is a caller-supplied monotonic count of nanoseconds.
 *
 * Four independent pieces:
 *
 *   CRC32c         mpa_crc32c_*   the iSCSI CRC (RFC 3720 §12.1), several backends
 *   startup frames mpa_frame_*    encode/decode the MPA Request/Reply frame
 *   startup phase  mpa_setup_*    the Request/Reply exchange and negotiation
 *   full operation mpa_tx_*, mpa_rx_*   FPDU framing (length, PAD, Markers, CRC)
 *
 * The layer above (DDP) glues them: run mpa_setup until it is ESTABLISHED,
 * take the negotiated mpa_params, then init one mpa_tx and one mpa_rx from
 * them and feed the rest of the byte stream to mpa_rx.
 *
 * Return convention: negative values are codes of the plan in <iwarp/iw_err.h>
 * (MPA's own below); non-negative values are counts (bytes consumed or
 * produced) or IW_OK.
 */
#ifndef IWARP_MPA_H
#define IWARP_MPA_H

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
/* Error codes (the MPA range of <iwarp/iw_err.h>)                          */
/* ---------------------------------------------------------------------- */

enum mpa_err {
	/* Startup-frame errors (RFC 5044 §7.1.2, RFC 6581 §8). */
	IW_EMPA_KEY = -100,	   /* startup frame key is neither Req nor Rep key */
	IW_EMPA_REV = -101,	   /* revision we cannot work with */
	IW_EMPA_PDLEN = -102,	   /* PD_Length over 512 or not matching the frame */
	IW_EMPA_FRAME = -103,	   /* otherwise improperly formatted startup frame */
	IW_EMPA_UNEXPECTED = -104, /* bytes that may not arrive now (e.g. before the RTR) */
	IW_EMPA_REJECTED = -105,   /* peer answered with R=1 (not a protocol error) */
	IW_EMPA_TIMEOUT = -106,	   /* startup did not finish in time */
	IW_EMPA_TRUNCATED = -107,  /* stream closed in the middle of a frame */
	/* Full-operation errors (FPDU receive; RFC 5044 §8, RFC 6581 §8). */
	IW_EMPA_CRC = -110,    /* CRC mismatch (MPA error 2) */
	IW_EMPA_MARKER = -111, /* Marker FPDUPTR and ULPDU_Length disagree (MPA error 3) */
	IW_EMPA_LEN = -112,    /* ULPDU_Length beyond what this receiver accepts */
	IW_EMPA_IRD = -113,    /* insufficient IRD resources (RFC 6581, MPA error 6) */
	IW_EMPA_RTR = -114,    /* no matching RTR option (RFC 6581, MPA error 7) */
	IW_EMPA_LOCAL = -115,  /* local catastrophic error (RFC 6581, MPA error 5) */
	IW_EMPA_CLOSED = -116, /* LLP closed / reset / lost (MPA error 1) */
};

/* ---------------------------------------------------------------------- */
/* Wire constants (RFC 5044 §4, §7.1.1; RFC 6581 §9)                       */
/* ---------------------------------------------------------------------- */

#define MPA_KEY_LEN	    16	   /* "MPA ID Req Frame" / "MPA ID Rep Frame" */
#define MPA_FRAME_HDR_LEN   20	   /* key + flags + rev + PD_Length */
#define MPA_PD_MAX	    512	   /* Private Data limit incl. the RFC 6581 word */
#define MPA_IRD_ORD_LEN	    4	   /* RFC 6581 IRD/ORD word at the start of PD */
#define MPA_IRD_ORD_MAX	    0x3FFF /* 14-bit field; also "no automatic negotiation" */
#define MPA_FRAME_MAX_LEN   (MPA_FRAME_HDR_LEN + MPA_PD_MAX)

#define MPA_ULPDU_LEN_LEN   2 /* ULPDU_Length field */
#define MPA_CRC_LEN	    4
#define MPA_MARKER_LEN	    4
#define MPA_MARKER_INTERVAL 512	  /* Markers every 512 octets of the stream (§4.3) */
#define MPA_ULPDU_MAX	    65535 /* 16-bit ULPDU_Length */
#define MPA_MULPDU_MIN	    128	  /* §4.5: never below 128 */
#define MPA_MULPDU_MAX	    64768 /* §3: DDP never hands MPA more than this */
/* Largest FPDU on the wire: length + ULPDU + PAD + CRC, plus every Marker. */
#define MPA_FPDU_NOMARK_MAX	 (MPA_ULPDU_LEN_LEN + MPA_ULPDU_MAX + 3 + MPA_CRC_LEN)
#define MPA_MARKERS_PER_FPDU_MAX (MPA_FPDU_NOMARK_MAX / (MPA_MARKER_INTERVAL - MPA_MARKER_LEN) + 2)

/* Revisions: 1 = RFC 5044, 2 = RFC 6581.  Revision 0 (pre-IETF) is not supported. */
#define MPA_REV1 1
#define MPA_REV2 2

/* RFC 6581 RTR forms (bit mask).  On the wire: B, C and D of the IRD/ORD word. */
enum mpa_rtr {
	MPA_RTR_NONE = 0,
	MPA_RTR_SEND = 1u << 0,	 /* B: zero-length Send (QN 0) */
	MPA_RTR_WRITE = 1u << 1, /* C: zero-length RDMA Write */
	MPA_RTR_READ = 1u << 2,	 /* D: zero-length RDMA Read Request (QN 1) */
	MPA_RTR_ALL = 7u,
};

/* ---------------------------------------------------------------------- */
/* CRC32c (Castagnoli, reflected, init/xorout 0xFFFFFFFF)                  */
/* ---------------------------------------------------------------------- */

enum mpa_crc32c_impl {
	MPA_CRC32C_AUTO = 0, /* best available (mpa_crc32c.c, crc_best) */
	MPA_CRC32C_TABLE,    /* portable slicing table */
	MPA_CRC32C_SSE42,    /* x86 crc32 instruction (needs SSE4.2 at run time) */
	MPA_CRC32C_ISAL,     /* Intel ISA-L crc32_iscsi (needs libisal at build time) */
	MPA_CRC32C_CLMUL,    /* x86 VPCLMULQDQ folding (needs AVX2 + VPCLMULQDQ at run time) */
	MPA_CRC32C_IMPL_COUNT
};

#define MPA_CRC32C_INIT 0xFFFFFFFFu
/* CRC32c over (covered bytes || the 4 received CRC octets) when the CRC is right. */
#define MPA_CRC32C_RESIDUE 0x48674BC7u

/*
 * Incremental use:
 *	uint32_t s = MPA_CRC32C_INIT;
 *	s = mpa_crc32c_update(s, a, alen);
 *	s = mpa_crc32c_update(s, b, blen);
 *	uint32_t crc = mpa_crc32c_final(s);	// the CRC value (0xE3069283 for "123456789")
 * The running state is the raw register; any split of the input gives the same
 * value.  The backend is chosen once, on first use: the environment variable
 * IWARP_CRC32C=table|sse42|isal|clmul forces one (for tests), else the best available.
 */
IW_EXPORT uint32_t mpa_crc32c_update(uint32_t state, const void *buf, size_t len);
static inline uint32_t mpa_crc32c_final(uint32_t state)
{
	return ~state;
}
/* One-shot CRC value of a buffer. */
IW_EXPORT uint32_t mpa_crc32c(const void *buf, size_t len);
/* Whether a backend is compiled in and usable on this CPU. */
IW_EXPORT bool mpa_crc32c_available(enum mpa_crc32c_impl impl);
/* Force a backend for the whole process.  IW_ENOTSUP if unavailable. */
IW_EXPORT int mpa_crc32c_select(enum mpa_crc32c_impl impl);
/* The backend in use (never MPA_CRC32C_AUTO). */
IW_EXPORT enum mpa_crc32c_impl mpa_crc32c_selected(void);
IW_EXPORT const char *mpa_crc32c_impl_name(enum mpa_crc32c_impl impl);
/* Run one specific backend (tests, benchmarks).  Undefined if !available. */
IW_EXPORT uint32_t mpa_crc32c_update_with(enum mpa_crc32c_impl impl, uint32_t state,
					  const void *buf, size_t len);

/* ---------------------------------------------------------------------- */
/* MPA Request / Reply frames (RFC 5044 §7.1.1, RFC 6581 §6, §9)           */
/* ---------------------------------------------------------------------- */

struct mpa_frame {
	bool reply;    /* key: true = "MPA ID Rep Frame", false = "MPA ID Req Frame" */
	bool markers;  /* M: the sender requires Markers in what it receives */
	bool crc;      /* C: the sender wants CRC */
	bool reject;   /* R: Reply only; sent 0 and ignored in a Request */
	bool enhanced; /* S (RFC 6581): PD starts with the IRD/ORD word; rev 2 only */
	uint8_t rev;   /* MPA_REV1 or MPA_REV2 */
	/* RFC 6581 IRD/ORD word, meaningful when `enhanced` */
	bool p2p;     /* A: peer-to-peer model */
	uint8_t rtr;  /* enum mpa_rtr mask: B, C, D */
	uint16_t ird; /* 14 bits; MPA_IRD_ORD_MAX = no automatic negotiation */
	uint16_t ord; /* 14 bits */
	/* ULP private data, after the IRD/ORD word when `enhanced`.  decode: points into
	 * the decoded buffer. */
	const uint8_t *pd;
	uint16_t pd_len;
};

/* Octets mpa_frame_encode() will produce (20 + [4] + pd_len). */
IW_EXPORT size_t mpa_frame_len(const struct mpa_frame *f);

/*
 * Encode `f` into buf[0..cap).  Returns the frame length, IW_ENOSPC if cap is
 * too small, or IW_EINVAL for a frame we must not send (rev not 1/2, enhanced
 * with rev 1, IRD/ORD over 14 bits, total PD over 512, reject in a Request).
 */
IW_EXPORT ssize_t mpa_frame_encode(const struct mpa_frame *f, uint8_t *buf, size_t cap);

/*
 * Decode one frame from the start of buf[0..len).  `want_reply` says which key
 * is expected.  Returns the frame length (octets consumed; anything after it is
 * not part of the frame), IW_EAGAIN if more octets are needed, or:
 *   IW_EMPA_KEY    key is not the expected one (including the other key)
 *   IW_EMPA_REV    revision other than 1 or 2
 *   IW_EMPA_PDLEN  PD_Length > 512, or enhanced with PD_Length < 4
 * Reserved bits are ignored (RFC 5044: "do not check"); the S bit of a rev 1
 * frame is a reserved bit.
 */
IW_EXPORT ssize_t mpa_frame_decode(const uint8_t *buf, size_t len, bool want_reply,
				   struct mpa_frame *f);

/* ---------------------------------------------------------------------- */
/* Startup phase: Request/Reply exchange and negotiation                   */
/* ---------------------------------------------------------------------- */

enum mpa_role {
	MPA_INITIATOR, /* sends the Request (usually the TCP client) */
	MPA_RESPONDER, /* answers with the Reply */
};

struct mpa_config {
	uint8_t rev;	     /* MPA_REV1 or MPA_REV2 (default 2) */
	bool crc;	     /* C we send (default true) */
	bool markers;	     /* M we send: we require Markers from the peer (default false) */
	bool accept_markers; /* responder/initiator: allow a peer that requires Markers (default true) */
	bool p2p;	     /* rev 2: peer-to-peer model, RTR required (default false) */
	uint8_t rtr;	     /* rev 2 + p2p: RTR forms offered (initiator) / accepted (responder);
			       default MPA_RTR_ALL */
	uint16_t ird;	     /* rev 2: inbound RDMA Read capacity (default 16) */
	uint16_t ord;	     /* rev 2: outbound RDMA Reads wanted (default 16) */
	uint64_t timeout_ns; /* bound on the whole startup (default 10 s) */
};

/* Fill `cfg` with the defaults above (rev 2, CRC on, Markers off, client-server). */
IW_EXPORT void mpa_config_default(struct mpa_config *cfg);

/* What the startup negotiated.  Valid once the setup is MPA_SETUP_ESTABLISHED. */
struct mpa_params {
	uint8_t rev;	   /* revision in use (the peer's frame's rev, 1 or 2) */
	bool enhanced;	   /* RFC 6581 IRD/ORD word exchanged */
	bool crc;	   /* CRC generated and checked both ways (Request.C || Reply.C) */
	bool markers_tx;   /* we insert Markers in what we send (peer's M) */
	bool markers_rx;   /* the peer inserts Markers in what we receive (our M) */
	bool p2p;	   /* peer-to-peer: an RTR opens full operation */
	uint8_t rtr;	   /* p2p: the single RTR form the initiator sends */
	uint16_t ird;	   /* our IRD after negotiation */
	uint16_t ord;	   /* our ORD after negotiation */
	uint16_t peer_ird; /* the peer's raw IRD/ORD as sent (0x3FFF = none) */
	uint16_t peer_ord;
	/* Initiator-sends-first (RFC 5044 §7.1.2 rule 4): a responder must receive and
	 * validate one FPDU (the RTR when p2p) before sending any FPDU or Marker. */
	bool wait_first_fpdu;
};

enum mpa_setup_state {
	MPA_SETUP_IDLE,		    /* initiator before mpa_setup_connect() */
	MPA_SETUP_SEND_REQUEST,	    /* initiator: Request queued / being written */
	MPA_SETUP_WAIT_REPLY,	    /* initiator: waiting for the Reply */
	MPA_SETUP_WAIT_REQUEST,	    /* responder: waiting for the Request */
	MPA_SETUP_REQUEST_RECEIVED, /* responder: ULP must accept or reject */
	MPA_SETUP_ESTABLISHED,	    /* full operation may start (see params) */
	MPA_SETUP_REJECTED,	    /* reject sent or received; MPA is done, TCP may stay */
	MPA_SETUP_FAILED,	    /* protocol error or timeout; close TCP */
};

struct mpa_setup {
	enum mpa_role role;
	enum mpa_setup_state state;
	struct mpa_config cfg;
	int error;	   /* first error, when FAILED (or IW_EMPA_REJECTED) */
	uint64_t deadline; /* absolute ns; UINT64_MAX = none */
	/* receive side */
	uint8_t rxbuf[MPA_FRAME_MAX_LEN];
	size_t rxlen;
	struct mpa_frame peer; /* peer's frame; peer.pd points into peer_pd */
	uint8_t peer_pd[MPA_PD_MAX];
	/* transmit side: our frame, written out by the caller */
	uint8_t txbuf[MPA_FRAME_MAX_LEN];
	size_t txlen, txoff;
	struct mpa_params params;
};

/*
 * Start a startup phase at time `now` (ns).  The responder begins in
 * WAIT_REQUEST, the initiator in IDLE.  Returns IW_EINVAL for a bad config.
 */
IW_EXPORT int mpa_setup_init(struct mpa_setup *s, enum mpa_role role, const struct mpa_config *cfg,
			     uint64_t now);

/* Initiator: queue the Request carrying ULP private data (≤ 512, ≤ 508 with rev 2). */
IW_EXPORT int mpa_setup_connect(struct mpa_setup *s, const void *pd, size_t pd_len);

/*
 * Feed bytes received from TCP.  Returns the number consumed; the setup never
 * consumes past the end of the peer's frame, so what is left over is the
 * first full-operation data (give it to mpa_rx).  Errors: IW_ESTATE when called
 * in a state that expects no input; a frame error (see mpa_frame_decode), or
 * IW_EMPA_UNEXPECTED when octets arrive that the peer may not send yet (e.g.
 * after its Request before we replied), after which the state is FAILED.
 * A received reject returns the octets consumed and leaves state REJECTED.
 */
IW_EXPORT ssize_t mpa_setup_read_stream(struct mpa_setup *s, const void *buf, size_t len,
					uint64_t now);

/* The peer's decoded frame, once received (NULL before). */
IW_EXPORT const struct mpa_frame *mpa_setup_peer_frame(const struct mpa_setup *s);

/* Responder in REQUEST_RECEIVED: accept (Reply R=0) or reject (Reply R=1). */
IW_EXPORT int mpa_setup_accept(struct mpa_setup *s, const void *pd, size_t pd_len);
IW_EXPORT int mpa_setup_reject(struct mpa_setup *s, const void *pd, size_t pd_len);

/*
 * Octets to write to TCP: *buf receives a pointer to the pending bytes, the
 * return value is their count (0 = nothing).  After writing n of them call
 * mpa_setup_tx_advance(s, n); a partial write is fine.
 */
IW_EXPORT size_t mpa_setup_tx_pending(const struct mpa_setup *s, const uint8_t **buf);
IW_EXPORT void mpa_setup_tx_advance(struct mpa_setup *s, size_t n);

/* Timers: absolute expiry in ns (UINT64_MAX = none), and its handling. */
IW_EXPORT uint64_t mpa_setup_get_expiry(const struct mpa_setup *s);
/* Returns IW_EMPA_TIMEOUT (and moves to FAILED) if `now` is past the expiry, else IW_OK. */
IW_EXPORT int mpa_setup_handle_expiry(struct mpa_setup *s, uint64_t now);

/* The TCP stream closed (EOF or reset) during startup: FAILED with IW_EMPA_TRUNCATED
 * if a frame was partly received or IW_EMPA_CLOSED otherwise. */
IW_EXPORT int mpa_setup_handle_close(struct mpa_setup *s);

/* Negotiated parameters (IW_ESTATE unless ESTABLISHED). */
IW_EXPORT int mpa_setup_params(const struct mpa_setup *s, struct mpa_params *p);

IW_EXPORT const char *mpa_setup_state_name(enum mpa_setup_state st);

/* ---------------------------------------------------------------------- */
/* RFC 6581 RTR messages                                                    */
/* ---------------------------------------------------------------------- */

/* ULPDU (DDP segment) sizes of the three RTR forms. */
#define MPA_RTR_SEND_LEN  18 /* untagged Send, QN 0, MSN 1, MO 0, L=1 */
#define MPA_RTR_WRITE_LEN 14 /* tagged RDMA Write, L=1, STag 1 (non-zero), TO 0 */
#define MPA_RTR_READ_LEN  46 /* untagged Read Request, QN 1, MSN 1, size 0 */

/*
 * Build the ULPDU of the RTR form `rtr` (exactly one bit) into buf.  Returns its
 * length (one of the above), IW_EINVAL or IW_ENOSPC.  These are ordinary DDP/RDMAP
 * messages; they live here because RFC 6581 §9.3 makes them part of MPA setup.
 */
IW_EXPORT ssize_t mpa_rtr_encode(enum mpa_rtr rtr, uint8_t *buf, size_t cap);

/*
 * Classify a received first ULPDU: the enum mpa_rtr form it is, or MPA_RTR_NONE
 * if it is not a zero-length RTR message.
 */
IW_EXPORT enum mpa_rtr mpa_rtr_classify(const uint8_t *ulpdu, size_t len);

/* ---------------------------------------------------------------------- */
/* Full operation: sizes                                                    */
/* ---------------------------------------------------------------------- */

/* MULPDU for an EMSS (RFC 5044 §4.5), never below MPA_MULPDU_MIN, never above
 * MPA_MULPDU_MAX. */
IW_EXPORT uint32_t mpa_mulpdu(uint32_t emss, bool markers);

/* PAD octets after a ULPDU of `ulpdu_len` octets: (4 - ((2 + len) mod 4)) mod 4. */
static inline unsigned mpa_pad_len(size_t ulpdu_len)
{
	return (unsigned)((4 - ((2 + ulpdu_len) & 3)) & 3);
}

/* ---------------------------------------------------------------------- */
/* Full operation: transmit                                                 */
/* ---------------------------------------------------------------------- */

/*
 * One transmit direction.  `pos` counts the octets of full operation sent so
 * far in this direction (mod 2^32), which is all Marker placement needs: a Marker
 * starts at every pos ≡ 0 (mod 512) (RFC 5044 §4.3).
 */
struct mpa_tx {
	bool crc;     /* compute the CRC (else the field is sent as zero) */
	bool markers; /* insert Markers */
	uint32_t pos;
};

/*
 * Initialise for the first FPDU of full operation (`pos` = 0) or, for tests,
 * as if `pos` octets had already been sent.  Markers need pos ≡ 0 (mod 4).
 */
IW_EXPORT void mpa_tx_init(struct mpa_tx *tx, bool crc, bool markers, uint32_t pos);

/* Most iovecs a caller's ULPDU may be split into. */
#define MPA_TX_ULPDU_IOV_MAX 8
#define MPA_FPDU_IOV_MAX     (MPA_TX_ULPDU_IOV_MAX + 2 * MPA_MARKERS_PER_FPDU_MAX + 4)

/*
 * One framed FPDU ready to write: iov[first .. first+iovcnt) in order.  The
 * iovecs point into the caller's ULPDU memory (never copied) and into this
 * struct's own storage (length field, Markers, PAD and CRC), so the struct must
 * not move or be reused until all `len` octets are written.
 */
struct mpa_fpdu {
	/* the small fields first: an FPDU without Markers touches only the
	 * start of this struct (about 5 KiB in all) */
	int first;
	int iovcnt;
	size_t len;	   /* octets still to write */
	size_t total;	   /* octets on the wire for this FPDU (incl. Markers) */
	uint32_t crc;	   /* the CRC value (0 when CRC is off) */
	unsigned nmarkers; /* Markers inserted */
	uint8_t lenhdr[MPA_ULPDU_LEN_LEN];
	uint8_t trailer[3 + MPA_CRC_LEN]; /* PAD then CRC, least significant octet first */
	struct iovec iov[MPA_FPDU_IOV_MAX];
	uint8_t markers[MPA_MARKERS_PER_FPDU_MAX][MPA_MARKER_LEN];
};

/*
 * FPDUPTR is a 16-bit field: with a ULPDU above the RFC's 64768-octet limit the
 * distance from the FPDU start to a Marker can exceed it; tx sends it modulo 2^16
 * and rx checks it the same way.
 *
 * Frame one ULPDU (the concatenation of ulpdu[0..iovcnt), 0..65535 octets,
 * iovcnt ≤ MPA_TX_ULPDU_IOV_MAX) into `f` and advance tx->pos by f->total.
 * Computes the CRC over exactly the covered octets (RFC 5044 §4.4): length
 * field, ULPDU, PAD and every Marker inside or immediately before it.
 * Returns IW_OK, or IW_EINVAL (too long, too many iovecs).
 */
IW_EXPORT int mpa_tx_frame(struct mpa_tx *tx, const struct iovec *ulpdu, int iovcnt,
			   struct mpa_fpdu *f);

/* Octets of the longest FPDU on the wire: length field, ULPDU, PAD, CRC, Markers. */
#define MPA_FPDU_WIRE_MAX                                                                          \
	(MPA_ULPDU_LEN_LEN + MPA_ULPDU_MAX + 3 + MPA_CRC_LEN +                                     \
	 MPA_MARKERS_PER_FPDU_MAX * MPA_MARKER_LEN)

/*
 * The same FPDU as mpa_tx_frame(), copied into buf (room for
 * MPA_FPDU_WIRE_MAX octets, or at least this FPDU's) with the CRC run once
 * over it: f->iov is then the one piece buf[0 .. f->total), which no longer
 * refers to the caller's ULPDU memory.  For FPDUs that Markers would cut
 * into hundreds of pieces.  IW_EINVAL as mpa_tx_frame(), or for a NULL buf.
 */
IW_EXPORT int mpa_tx_frame_linear(struct mpa_tx *tx, const struct iovec *ulpdu, int iovcnt,
				  struct mpa_fpdu *f, uint8_t *buf);

/* Account for `n` octets of `f` written (partial writes at any octet are fine). */
IW_EXPORT void mpa_fpdu_advance(struct mpa_fpdu *f, size_t n);

/* ---------------------------------------------------------------------- */
/* Full operation: receive                                                  */
/* ---------------------------------------------------------------------- */

/* Largest ULPDU header the receive machine gathers contiguously for the layer above. */
#define MPA_RX_HDR_MAX 128

/*
 * Callbacks of the receive machine, in this order for every FPDU:
 *
 *   ulpdu_header(hdr, have, ulpdu_len)   once or more; hdr holds the first `have`
 *	ULPDU octets, contiguous, Markers removed.  Return the total number of header
 *	octets wanted: a value > have (≤ ulpdu_len, ≤ MPA_RX_HDR_MAX) makes the machine
 *	gather more and call again; `have` ends the header; a negative iw_err stops the
 *	machine with that error.  First call: have = min(hdr_min, ulpdu_len).
 *	0 holds the machine before the payload (the layer above cannot take this ULPDU
 *	yet): mpa_rx_read_stream() returns the octets it consumed so far, and the next
 *	call, even with no octets, offers the same header again.
 *   ulpdu_payload(off, p, n)             zero or more times; the rest of the ULPDU in
 *	order, `off` counted from the ULPDU start, Markers removed.  Data is placed here
 *	*before* the CRC is known: it only becomes valid at fpdu_done.
 *   fpdu_done()                          the CRC (when on) matched: the ULPDU is good.
 *
 * Any callback returning a negative value stops the machine with that value.
 */
struct mpa_rx_ops {
	int (*ulpdu_header)(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len);
	int (*ulpdu_payload)(void *user, size_t off, const uint8_t *p, size_t n);
	int (*fpdu_done)(void *user);
};

struct mpa_rx_config {
	bool crc;	    /* check the CRC */
	bool markers;	    /* the peer inserts Markers; remove and check them */
	uint32_t pos;	    /* stream octets of full operation already received (0) */
	uint16_t hdr_min;   /* header octets to gather before the first ulpdu_header call */
	uint32_t max_ulpdu; /* largest ULPDU_Length accepted (≤ 65535); larger = IW_EMPA_LEN */
};

enum mpa_rx_state {
	/* Markers are found from the stream position, not from the state: a Marker
	 * may interrupt any state, so rx->state never holds MPA_RX_MARKER (it is
	 * kept for names in traces). */
	MPA_RX_MARKER,
	MPA_RX_LEN,	/* ULPDU_Length */
	MPA_RX_HDR,	/* gathering the ULPDU header */
	MPA_RX_PAYLOAD, /* rest of the ULPDU */
	MPA_RX_PAD,
	MPA_RX_CRC,
	MPA_RX_DEAD, /* an error was reported; nothing more is delivered */
};

struct mpa_rx {
	struct mpa_rx_config cfg;
	const struct mpa_rx_ops *ops;
	void *user;
	enum mpa_rx_state state;
	int error;
	uint32_t pos;	     /* stream position of the next octet */
	uint32_t fpdu_start; /* stream position of the current ULPDU_Length field */
	uint32_t crc_state;
	uint16_t ulpdu_len;
	uint32_t done; /* octets of the current field/region received */
	uint32_t hdr_want;
	bool marker_bad; /* a Marker disagreed with the framing (reported at FPDU end) */
	uint8_t marker[MPA_MARKER_LEN];
	uint8_t marker_done;
	uint8_t lenbuf[MPA_ULPDU_LEN_LEN];
	uint8_t crcbuf[MPA_CRC_LEN];
	uint8_t hdr[MPA_RX_HDR_MAX];
	uint64_t fpdus; /* FPDUs accepted */
};

IW_EXPORT void mpa_rx_config_default(struct mpa_rx_config *cfg);
IW_EXPORT int mpa_rx_init(struct mpa_rx *rx, const struct mpa_rx_config *cfg,
			  const struct mpa_rx_ops *ops, void *user);

/*
 * Feed stream octets.  Gives identical callbacks for any split of the stream.
 * Returns `len` when all were consumed, fewer when ulpdu_header held the
 * machine (feed the rest again later), or a negative iw_err: IW_EMPA_CRC,
 * IW_EMPA_MARKER, IW_EMPA_LEN or a callback's error.  After an error the machine
 * is DEAD and returns that error again on every call (MPA delivers nothing more
 * on the half connection, RFC 5044 §8).
 */
IW_EXPORT ssize_t mpa_rx_read_stream(struct mpa_rx *rx, const void *buf, size_t len);

/*
 * Receiving payload straight into its final place (no receive buffer in
 * between).  mpa_rx_payload_room() says how many octets from the current
 * stream position on are ULPDU payload with no Marker among them: 0 unless
 * the machine is inside a ULPDU's payload (the header has been judged).  The
 * caller may then put up to that many stream octets where the layer above
 * places them itself and report them with mpa_rx_payload_placed(), which
 * counts them into the CRC from where they now are and moves on exactly as
 * mpa_rx_read_stream() would have, minus the ulpdu_payload callback.  The CRC
 * is judged at the end of the FPDU as always (fpdu_done or IW_EMPA_CRC from
 * the read_stream that brings the CRC field).  IW_EINVAL (machine unchanged)
 * for more than the room; the machine's error once it is DEAD.
 *
 * mpa_rx_fpdu_left() is the number of stream octets to the end of the
 * current FPDU (PAD and CRC included) where it is known without Markers;
 * 0 between FPDUs, while the ULPDU_Length field is incomplete, and whenever
 * Markers are on.  A caller that wants to stop
 * reading right after the next header uses it to size that read.
 */
IW_EXPORT size_t mpa_rx_payload_room(const struct mpa_rx *rx);
IW_EXPORT int mpa_rx_payload_placed(struct mpa_rx *rx, const void *p, size_t n);
IW_EXPORT size_t mpa_rx_fpdu_left(const struct mpa_rx *rx);

IW_EXPORT const char *mpa_rx_state_name(enum mpa_rx_state st);

/* ---------------------------------------------------------------------- */
/* Errors                                                                   */
/* ---------------------------------------------------------------------- */

/*
 * Map an MPA error to its Terminate triple: Layer 2 (LLP), Type 0 (MPA), Codes 1-7
 * (RFC 5044 §8, RFC 6581 §8).  Startup-frame errors map to Code 4 for the local
 * report only: before full operation no Terminate can be sent, so the caller
 * closes TCP (RFC 5044 §7.1.2).  IW_EMPA_REJECTED and IW_EMPA_TIMEOUT map to
 * IW_TERM_NONE.  Returns IW_OK, or IW_EINVAL for a code outside the MPA range.
 */
IW_EXPORT int mpa_err_term(int err, struct iw_term_code *t);

/* Name ("IW_EMPA_CRC") and short text of an MPA code; any other code is
 * passed to iw_errname / iw_strerror (common and IW_ESYS codes). */
IW_EXPORT const char *mpa_errname(int err);
IW_EXPORT const char *mpa_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_MPA_H */
