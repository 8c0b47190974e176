/* SPDX-License-Identifier: MIT */
/*
 * icf.h - iwconform's internal interfaces (tools/iwconform, prefix icf_).
 *
 * iwconform is an active conformance tester: it connects to an iWARP peer's
 * server (stock rping -s, or our iwping -s), plays the rping client far
 * enough to reach the point of a case, commits one protocol violation (or
 * makes one negotiation choice) and grades the peer's reaction against the
 * RFC clause the case cites.
 *
 *   icf_grade.c  expectations, observations and the grading rule (sans-I/O)
 *   icf_pcap.c   a classic pcap synthesised from what one case sent and
 *                received on its socket (sans-I/O: builds it in memory)
 *   icf_ep.c     the raw endpoint: one TCP socket, poll with timeouts, the
 *                peer's octets decoded by iwdump's iwd_iwarp
 *   icf_cases.c  the catalogue and the case runners
 *   iwconform.c  the command line and the reports
 */
#ifndef IWARP_TOOLS_ICF_H
#define IWARP_TOOLS_ICF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iwd.h"

/* ---------------------------------------------------------------------- */
/* Grading (icf_grade.c)                                                    */
/* ---------------------------------------------------------------------- */

enum icf_expect_kind {
	ICF_EXP_ACCEPT,		  /* the exchange continues normally */
	ICF_EXP_REJECT,		  /* MPA Reply with R = 1 (lenient: TCP closed) */
	ICF_EXP_CLOSE,		  /* TCP closed, no Reply, no Terminate (lenient: a reject) */
	ICF_EXP_TERM,		  /* a Terminate with one of the codes, then a close */
	ICF_EXP_ACCEPT_OR_REJECT, /* a negotiation choice: either answer is right */
};

/* Header copies a Terminate must carry (RFC 5040 §4.8 figure 10). */
enum icf_copy {
	ICF_COPY_NONE, /* no header copied (LLP and local catastrophic errors) */
	ICF_COPY_DDP,  /* M, D and the errant DDP header with its segment length */
	ICF_COPY_RREQ, /* as ICF_COPY_DDP, plus R and the Read Request header */
};

#define ICF_CODES_MAX 3

struct icf_expect {
	enum icf_expect_kind kind;
	/* ICF_EXP_TERM: any of codes[0..ncodes) is right */
	struct iw_term_code codes[ICF_CODES_MAX];
	unsigned ncodes;
	enum icf_copy copy;
	bool close_ok; /* ICF_EXP_TERM: a close without Terminate is right too */
};

/* What the peer did, as the runner saw it. */
struct icf_obs {
	bool connected;
	bool full;	/* the case reached full operation on purpose (a Reply R=0 was due) */
	bool reply;	/* an MPA Reply arrived */
	bool reply_bad; /* octets came where the Reply was due, but no valid Reply */
	bool reject;	/* its R bit */
	bool reply_m;	/* its M bit */
	bool term;	/* a Terminate arrived */
	struct iwd_term tm;
	bool closed;	 /* the peer closed (FIN or reset) */
	bool reset;	 /* by a reset */
	bool accepted;	 /* the normal continuation of the case was seen */
	bool carried_on; /* the peer went on as if the violation had been accepted */
	char carried_what[96];
	bool after_term; /* the peer sent more after its Terminate */
	/* what we sent in the errant segment, for the header copies */
	uint8_t sent_ddp[DDP_UNTAGGED_HDR_LEN];
	uint8_t sent_ddp_len;
	uint16_t sent_seg_len; /* ULPDU_Length of the errant segment */
	uint8_t sent_rreq[RDMAP_READ_REQ_LEN];
	bool skipped;
	char why[128]; /* skipped: why; otherwise a note from the runner */
};

enum icf_grade {
	ICF_PASS_STRICT,
	ICF_PASS_LENIENT,
	ICF_FAIL,
	ICF_SKIPPED,
};

const char *icf_grade_name(enum icf_grade g);

/* "Terminate 1/2/0x05" and friends: the expectation in words. */
void icf_expect_str(const struct icf_expect *e, char *buf, size_t len);
/* What the peer did, in words ("Terminate 1/2/0x02 (D)", "closed", ...). */
void icf_obs_str(const struct icf_obs *o, char *buf, size_t len);

/*
 * Grade one case.  Strict: the RFC to the bit (right layer/type/code in the
 * RFC layout, the header copies equal to what was sent, then a close).
 * Lenient: the connection died cleanly (any Terminate, or a close) and the
 * peer did not carry on as if the violation had been accepted; `dev` then
 * says how it deviated.  Anything else fails, with the reason in `dev`.
 */
enum icf_grade icf_grade(const struct icf_expect *e, const struct icf_obs *o, char *dev,
			 size_t devlen);

/* ---------------------------------------------------------------------- */
/* pcap synthesis (icf_pcap.c)                                              */
/* ---------------------------------------------------------------------- */

/* One TCP connection as a classic pcap (LINKTYPE_RAW 101): SYN, SYN-ACK, ACK,
 * one packet per send/recv chunk with consistent sequence numbers, FINs. */
struct icf_pcap {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
	int af;
	uint8_t addr[2][16]; /* 0: the client (us), 1: the peer */
	uint16_t port[2];
	uint32_t seq[2]; /* next sequence number per end */
	bool fin[2];
};

#define ICF_PCAP_LINKTYPE_RAW 101

/* Start a capture: global header and the three-way handshake at `ts_ns`. */
void icf_pcap_init(struct icf_pcap *p, const struct sockaddr *local, const struct sockaddr *peer,
		   uint64_t ts_ns);
/* `n` octets sent by end `from` (0 us, 1 the peer); split into packets of at
 * most 32 KiB. */
void icf_pcap_data(struct icf_pcap *p, int from, const uint8_t *d, size_t n, uint64_t ts_ns);
/* End `from` sent a FIN (`rst`: a reset). */
void icf_pcap_fin(struct icf_pcap *p, int from, bool rst, uint64_t ts_ns);
/* Write the capture to `path`.  0, or -1 with errno. */
int icf_pcap_write(const struct icf_pcap *p, const char *path);
void icf_pcap_free(struct icf_pcap *p);

/* ---------------------------------------------------------------------- */
/* The endpoint (icf_ep.c)                                                  */
/* ---------------------------------------------------------------------- */

/* One message of the peer, copied out of the decoder's event. */
struct icf_msg {
	uint8_t opcode;
	bool tagged;
	uint32_t stag, qn, msn, len;
	uint64_t to;
	struct rdmap_read_req rreq;
	struct iwd_term term;
	uint8_t data[64];
	uint32_t data_len;
};

#define ICF_MSGQ 32

struct icf_ep {
	int fd;
	int verbose;
	volatile int *stop; /* set (SIGINT): every wait ends at once */
	struct sockaddr_storage local, peer;
	uint64_t t0;
	struct icf_pcap pcap;
	bool pcap_on;
	/* the decoder and our stream offsets */
	struct iwd_iwarp *dec;
	struct iwd_flow flow;
	uint64_t off[2];
	/* MPA phase: the peer's octets until its Reply decoded */
	uint8_t rx[MPA_FRAME_MAX_LEN];
	size_t rxlen;
	bool have_reply;
	int reply_err; /* mpa_frame_decode's error when the octets were no Reply */
	struct mpa_frame reply;
	uint8_t reply_pd[MPA_PD_MAX];
	/* full operation, our direction */
	struct mpa_tx tx;
	bool full;
	uint32_t msn[DDP_QN_COUNT_7306]; /* the next MSN we send per queue */
	/* the peer's messages not yet taken */
	struct icf_msg q[ICF_MSGQ];
	unsigned qhead, qlen;
	unsigned dropped;
	bool term_seen;
	bool eof, rst;
	int err; /* a socket error (errno) */
};

/* Connect to `sa` within `timeout_ms`.  0, or -1 with a message in err. */
int icf_ep_open(struct icf_ep *ep, const struct sockaddr *sa, socklen_t salen, int timeout_ms,
		bool pcap, int verbose, char *err, size_t errlen);
/* Close our end (a FIN; the peer's octets are drained briefly), write the
 * pcap to `pcap_path` (NULL: none) and free.  0, or -1 with errno when the
 * pcap could not be written. */
int icf_ep_close(struct icf_ep *ep, const char *pcap_path);
/* Raw octets to the socket (recorded, fed to the decoder as ours).  0 or -1. */
int icf_ep_send_raw(struct icf_ep *ep, const void *p, size_t n);
/* Send our MPA Request.  0 or -1. */
int icf_ep_send_request(struct icf_ep *ep, const struct mpa_frame *f);
/* Wait for the Reply (or a close) until `timeout_ms`.  1 Reply, 0 no Reply
 * (closed, timed out, or octets that are no Reply: reply_err), -1 error. */
int icf_ep_wait_reply(struct icf_ep *ep, int timeout_ms);
/* Enter full operation with the negotiated CRC and Markers. */
void icf_ep_start(struct icf_ep *ep);
/* Frame `ulpdu` as an FPDU and send it.  `mangle` spoils it after framing:
 * ICF_MANGLE_CRC flips the CRC, ICF_MANGLE_LEN adds `arg` to ULPDU_Length,
 * ICF_MANGLE_MARKER breaks the first Marker. */
enum icf_mangle { ICF_MANGLE_NONE, ICF_MANGLE_CRC, ICF_MANGLE_LEN, ICF_MANGLE_MARKER };
/* ICF_MANGLE_CRC with `arg` 1 sends the CRC field as zero instead. */
int icf_ep_send_fpdu(struct icf_ep *ep, const uint8_t *ulpdu, size_t len, enum icf_mangle mangle,
		     int arg);
/* Largest FPDU icf_ep_frame() writes. */
#define ICF_FPDU_MAX (MPA_FPDU_NOMARK_MAX + MPA_MARKERS_PER_FPDU_MAX * MPA_MARKER_LEN)
/* Frame as icf_ep_send_fpdu() does, into out[ICF_FPDU_MAX], without sending:
 * the FPDU's length, or -1. */
ssize_t icf_ep_frame(struct icf_ep *ep, const uint8_t *ulpdu, size_t len, enum icf_mangle mangle,
		     int arg, uint8_t *out);
/* Pump the socket for up to `timeout_ms`: stop early as soon as a message is
 * queued or the peer closed.  0 or -1 (socket error). */
int icf_ep_pump(struct icf_ep *ep, int timeout_ms);
/* Take the next queued message.  1 taken, 0 none by `timeout_ms` (closed or
 * timed out). */
int icf_ep_next(struct icf_ep *ep, struct icf_msg *m, int timeout_ms);
/* Wait for the peer to close, at most `timeout_ms`: true when it did.  Any
 * message arriving meanwhile sets *more. */
bool icf_ep_wait_close(struct icf_ep *ep, int timeout_ms, bool *more);

/* ---------------------------------------------------------------------- */
/* The catalogue (icf_cases.c)                                              */
/* ---------------------------------------------------------------------- */

enum icf_profile { ICF_PROFILE_RPING, ICF_PROFILE_PERFTEST };

struct icf_ctx {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	enum icf_profile profile;
	int timeout_ms;
	int verbose;
	const char *pcap_dir;
	volatile int *stop;
};

struct icf_case;
typedef void (*icf_run_fn)(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
			   struct icf_obs *o);

struct icf_case {
	const char *id;
	const char *rfc;
	const char *desc;
	struct icf_expect exp;
	icf_run_fn run;
	int arg;	/* the runner's parameter */
	int timeout_ms; /* 0: the --timeout value */
};

/* The catalogue, in run order. */
const struct icf_case *icf_cases(size_t *n);
/* Run one case: a new connection, the runner, the pcap.  Fills `o`. */
void icf_case_run(const struct icf_case *c, const struct icf_ctx *x, struct icf_obs *o);

#endif
