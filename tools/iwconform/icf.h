/* SPDX-License-Identifier: MIT */
/*
 * icf.h - iwconform's internal interfaces (tools/iwconform, prefix icf_).
 *
 * iwconform is an active conformance tester.  As a client (-c) it connects
 * to an iWARP peer's server (stock rping -s, our iwping -s, or a perftest
 * server with --profile perftest); as a server (-s) it listens and takes one
 * connection of the peer's rping client per case.  Either way it plays its
 * side of the exchange far enough to reach the point of a case, commits one
 * protocol violation (or makes one negotiation choice) and grades the peer's
 * reaction against the RFC clause the case cites.
 *
 *   icf_grade.c     expectations, observations and the grading rule (sans-I/O)
 *   icf_pcap.c      a classic pcap synthesised from what one case sent and
 *                   received on its sockets (sans-I/O: builds it in memory)
 *   icf_ep.c        the raw endpoint: one TCP socket (connected, or accepted
 *                   from a listening one), poll with timeouts, the peer's
 *                   octets decoded by iwdump's iwd_iwarp
 *   icf_msg.c       building DDP/RDMAP messages, taking and watching the
 *                   peer's (shared by every runner)
 *   icf_cases.c     the client-role catalogue and its runners (rping's client)
 *   icf_server.c    the server-role catalogue: the MPA Reply side and rping's
 *                   server
 *   icf_perftest.c  --profile perftest: perftest's client (its control
 *                   connection and key exchange, measured on the wire)
 *   iwconform.c     the command line, the accept loop and the reports
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
	ICF_EXP_ACCEPT_OR_CLOSE,  /* server role: the client takes our Reply or closes */
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
	bool close_ok;	/* ICF_EXP_TERM: a close without Terminate is right too */
	bool accept_ok; /* ICF_EXP_TERM: going on normally is right too (the peer
			   could meet the demand, e.g. raise its IRD) */
};

/* What the peer did, as the runner saw it. */
struct icf_obs {
	bool connected;
	bool full;	/* the case reached full operation on purpose (a Reply R=0 was due) */
	bool reply;	/* an MPA Reply arrived (client role; never set as server) */
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
	bool spoke;	 /* server role: the client sent octets after our Reply */
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
 * one packet per send/recv chunk with consistent sequence numbers, FINs.
 * End 0 is the TCP client (the end that sent the SYN: us with -c, the peer
 * with -s), end 1 the server. */
struct icf_pcap {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
	int af;
	uint8_t addr[2][16]; /* 0: the TCP client, 1: the TCP server */
	uint16_t port[2];
	uint32_t seq[2]; /* next sequence number per end */
	bool fin[2];
};

#define ICF_PCAP_LINKTYPE_RAW 101
#define ICF_PCAP_HDR_LEN      24 /* the global header */
#define ICF_PCAP_REC_LEN      16 /* each packet record's header */

/* Start a capture: global header and the three-way handshake at `ts_ns`,
 * `client` sending the SYN to `server`. */
void icf_pcap_init(struct icf_pcap *p, const struct sockaddr *client, const struct sockaddr *server,
		   uint64_t ts_ns);
/* `n` octets sent by end `from` (0 the client, 1 the server); split into
 * packets of at most 32 KiB. */
void icf_pcap_data(struct icf_pcap *p, int from, const uint8_t *d, size_t n, uint64_t ts_ns);
/* End `from` sent a FIN (`rst`: a reset). */
void icf_pcap_fin(struct icf_pcap *p, int from, bool rst, uint64_t ts_ns);
/* Merge the packets of `q` (another connection of the same case) into `p`,
 * in time order; `q` is left as it was. */
void icf_pcap_merge(struct icf_pcap *p, const struct icf_pcap *q);
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
	bool crc_bad;
	bool rtr; /* an RFC 6581 §9.3 RTR (the first FPDU, zero length) */
	uint32_t stag, qn, msn, len;
	uint64_t to;
	struct rdmap_read_req rreq;
	struct iwd_term term;
	uint8_t data[64];
	uint32_t data_len;
};

#define ICF_MSGQ 32

/* A buffer of the peer that the tagged cases aim at: the Data Sink of its
 * Read Request (rping's server), the info of its first Send (rping's
 * client), or perftest's server buffer from its key exchange. */
struct icf_buf {
	bool valid;
	bool readable; /* registered for remote read, as far as we can tell */
	uint32_t stag;
	uint64_t to;
	uint32_t len;
};

/* Our sink buffer: what the peer's Read Responses placed there (rping's
 * server writes back what it read). */
#define ICF_SINK_MAX 65536

struct icf_ep {
	int fd;
	int verbose;
	volatile int *stop; /* set (SIGINT): every wait ends at once */
	struct sockaddr_storage local, peer;
	uint64_t t0;
	/* We are the MPA Initiator (TCP client) or, with -s, the Responder (TCP
	 * server).  Decoder and pcap number the ends as the TCP connection
	 * does: 0 the client, 1 the server; `us` is ours, `them` the peer's. */
	bool responder;
	int us, them;
	struct icf_pcap pcap;
	bool pcap_on;
	/* the decoder and our stream offsets */
	struct iwd_iwarp *dec;
	struct iwd_flow flow;
	uint64_t off[2]; /* per end */
	/* MPA phase: the peer's octets until its startup frame decoded (its
	 * Reply; as Responder, the Initiator's Request) */
	uint8_t rx[MPA_FRAME_MAX_LEN];
	size_t rxlen;
	union {
		bool have_reply;
		bool have_req;
	};
	union {
		int reply_err; /* mpa_frame_decode's error when the octets were no frame */
		int req_err;
	};
	union {
		struct mpa_frame reply;
		struct mpa_frame req;
	};
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
	/* the case's context */
	struct icf_buf pbuf; /* the peer's buffer, once known */
	struct icf_ep *ctl;  /* perftest: the control connection beside this one */
	bool pt_read;	     /* perftest: the server runs a read test */
	uint8_t sink[ICF_SINK_MAX];
	uint32_t sink_len; /* highest octet placed + 1 */
};

/* Connect to `sa` within `timeout_ms`.  0, or -1 with a message in err (and
 * the connect's errno in ep->err). */
int icf_ep_open(struct icf_ep *ep, const struct sockaddr *sa, socklen_t salen, int timeout_ms,
		bool pcap, int verbose, char *err, size_t errlen);
/* A listening socket (non-blocking, SO_REUSEADDR) on `sa`.  The fd, or -1
 * with a message in err. */
int icf_ep_listen(const struct sockaddr *sa, socklen_t salen, char *err, size_t errlen);
/* Accept one connection from `lfd` within `timeout_ms` (or until *stop): we
 * are its MPA Responder.  1 accepted, 0 nobody came, -1 with a message. */
int icf_ep_accept(struct icf_ep *ep, int lfd, int timeout_ms, volatile int *stop, bool pcap,
		  int verbose, char *err, size_t errlen);
/* Close our end (a FIN; the peer's octets are drained briefly), write the
 * pcap to `pcap_path` (NULL: none) - with the packets of `also` (perftest's
 * control connection, or NULL) merged in - and free.  0, or -1 with errno
 * when the pcap could not be written. */
int icf_ep_close(struct icf_ep *ep, const char *pcap_path, struct icf_ep *also);
/* Raw octets to the socket (recorded, fed to the decoder as ours).  0 or -1. */
int icf_ep_send_raw(struct icf_ep *ep, const void *p, size_t n);
/* Send our MPA Request or Reply.  0 or -1. */
int icf_ep_send_frame(struct icf_ep *ep, const struct mpa_frame *f);
/* Wait for the peer's startup frame (its Reply; as Responder its Request),
 * or a close, until `timeout_ms`.  1 frame, 0 none (closed, timed out, or
 * octets that are no such frame: reply_err), -1 error. */
int icf_ep_wait_frame(struct icf_ep *ep, int timeout_ms);
/* Enter full operation with the CRC and Markers the two frames negotiated. */
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
/* The catalogues (icf_cases.c, icf_server.c)                               */
/* ---------------------------------------------------------------------- */

enum icf_profile { ICF_PROFILE_RPING, ICF_PROFILE_PERFTEST };
enum icf_role { ICF_ROLE_CLIENT, ICF_ROLE_SERVER };

struct icf_ctx {
	enum icf_role role;
	struct sockaddr_storage addr; /* -c: the peer's server */
	socklen_t addrlen;
	int lfd;       /* -s: the listening socket */
	int accept_ms; /* -s: how long a case waits for the client to connect */
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

/* The catalogue of a role, in run order. */
const struct icf_case *icf_cases(enum icf_role role, size_t *n);
/* Run one case: a new connection (connected, or accepted as server), the
 * runner, the pcap.  Fills `o`; o->connected is false when no connection
 * came (as server: nobody connected within x->accept_ms). */
void icf_case_run(const struct icf_case *c, const struct icf_ctx *x, struct icf_obs *o);

/* The server role's own cases, the MPA Reply side (icf_server.c); its
 * catalogue adds every client-role case that applies to it, as "srv." + id
 * (icf_cases.c). */
const struct icf_case *icf_srv_mpa_cases(size_t *n);

/* ---------------------------------------------------------------------- */
/* Messages and the flow of a case (icf_msg.c)                              */
/* ---------------------------------------------------------------------- */

/* The buffers we advertise: invented STags, never registered anywhere. */
#define ICF_OUR_SRC_STAG  0x00C0FF01u
#define ICF_OUR_SRC_TO	  0x00007F0000001000ull
#define ICF_OUR_SINK_STAG 0x00C0FF02u
#define ICF_OUR_SINK_TO	  0x00007F0000002000ull
#define ICF_PING_SIZE	  64u
#define ICF_INFO_LEN	  16u /* rping's struct rping_rdma_info */
#define ICF_BOGUS_STAG	  0x5A5A5A00u
#define ICF_FAR		  0x1000000ull /* 16 MiB: beyond any rping or perftest buffer */
#define ICF_REACT_MS	  150	       /* pause before the follow-up step */

/* An untagged DDP segment (RFC 5041 §4.3) with RDMAP control `ctrl`, the
 * RDMAP header `rdmap` and the payload `pl` (NULL: filler) into b. */
size_t icf_untagged(uint8_t *b, uint8_t ctrl, uint32_t qn, uint32_t msn, uint32_t mo, bool last,
		    uint32_t inv, const void *rdmap, size_t rlen, const void *pl, size_t plen);
/* A tagged DDP segment (RFC 5041 §4.2) into b. */
size_t icf_tagged(uint8_t *b, uint8_t ctrl, uint32_t stag, uint64_t to, bool last, const void *pl,
		  size_t plen);
/* rping's info message: big-endian {u64 TO, u32 STag, u32 size}. */
void icf_info(uint8_t *p, uint64_t to, uint32_t stag, uint32_t size);
/* rping's ping text: "rdma-ping-0: " then letters, NUL last. */
void icf_ping_data(uint8_t *p, size_t n);
/* Remember the errant segment for the header copies (RFC 5040 §4.8). */
void icf_errant(struct icf_obs *o, const uint8_t *u, size_t len);
/* Frame and send one ULPDU.  0 or -1. */
int icf_send_ulpdu(struct icf_ep *ep, const uint8_t *u, size_t n);
/* A Send of `n` octets of `pl` on QN 0 with the next MSN (`op`: one of the
 * Send opcodes). */
int icf_send_msg(struct icf_ep *ep, uint8_t op, const void *pl, size_t n);
/* A Read Request (RFC 5040 §4.4) on QN 1 with the next MSN. */
int icf_send_read_req(struct icf_ep *ep, const struct rdmap_read_req *r);
/* The case's timeout: the larger of its own and --timeout. */
int icf_tmo(const struct icf_case *c, const struct icf_ctx *x);
/* Take the peer's messages until one with `opcode`; a Terminate or anything
 * else unexpected is recorded in o.  1 found (in *m), 0 not. */
int icf_expect_msg(struct icf_ep *ep, struct icf_obs *o, uint8_t opcode, int timeout_ms,
		   struct icf_msg *m);
/* rping's client: the Read Response to the server's Read Request `r`. */
int icf_send_read_resp(struct icf_ep *ep, const struct rdmap_read_req *r);
/* The reply of a case's (client-role) startup into o. */
void icf_note_reply(struct icf_ep *ep, struct icf_obs *o);

/*
 * The follow-up after a violation, when the peer has not reacted within
 * ICF_REACT_MS: the next normal step of the exchange, so that a peer that
 * let the violation through shows it by carrying on.
 *   ICF_FOLLOW_NEXT       the step after the violation's place: the info Send
 *                         (rping's client), our Read of the client's buffer
 *                         (rping's server), perftest's Write or Read
 *   ICF_FOLLOW_READ_RESP  the Read Response to the peer's Read Request
 *                         (rping's client; the others: as NEXT)
 *   ICF_FOLLOW_GO	   rping's server: the go-ahead Send
 */
enum icf_follow { ICF_FOLLOW_NONE, ICF_FOLLOW_NEXT, ICF_FOLLOW_READ_RESP, ICF_FOLLOW_GO };

/*
 * After the violation: give the peer ICF_REACT_MS, then the follow-up step,
 * then watch until a Terminate (and the close after it), a close, or the
 * timeout.  Messages with an opcode in `tolerate` (a bit per opcode) are in
 * flight legitimately; any other is the peer carrying on.
 */
void icf_watch(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
	       struct icf_obs *o, enum icf_follow follow, const struct rdmap_read_req *rr,
	       unsigned tolerate);

/*
 * The exchange a case is part of, by role and profile (icf_cases.c):
 *   icf_flow_start     the standard startup and everything up to the point
 *                      of the cases (rping's client: Request and Reply;
 *                      perftest: also the key exchange; rping's server: the
 *                      Request, our Reply, the RTR, the client's info Send).
 *                      1 there; 0 with o->skipped and the reason.
 *   icf_flow_after_mpa the same from a startup the case did itself.
 *   icf_flow_next      send the next normal step (ICF_FOLLOW_NEXT).
 *   icf_flow_accept    the normal continuation and its proof: 1 when the
 *                      peer went on normally.
 */
int icf_flow_start(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		   struct icf_obs *o);
int icf_flow_after_mpa(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		       struct icf_obs *o);
void icf_flow_next(const struct icf_ctx *x, struct icf_ep *ep);
int icf_flow_accept(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		    struct icf_obs *o);

/* ---------------------------------------------------------------------- */
/* rping's server (icf_server.c)                                            */
/* ---------------------------------------------------------------------- */

/* Our standard Reply to the client's Request `req`. */
void icf_srv_std_reply(const struct mpa_frame *req, struct mpa_frame *rep);
/* After our Reply (R = 0): full operation, the client's RTR when the Reply
 * chose one (a Read RTR answered), then its info Send into ep->pbuf.
 * 1 done; 0 with the reason in o->why (o->term when it was a Terminate). */
int icf_srv_established(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
			struct icf_obs *o);
/* Our Read of the client's buffer (the normal next step). */
int icf_srv_read(struct icf_ep *ep);
/* The go-ahead Send (16 zero octets); `op` one of the Send opcodes, in
 * `segs` segments. */
int icf_srv_go(struct icf_ep *ep, uint8_t op, unsigned segs);
/* The rest of the ping from our Read on (`read_sent`: it is out already),
 * the first go-ahead as `go_op` in `go_segs` segments: 1 when the client
 * advertised its sink after that go-ahead (then the Write and the last
 * go-ahead follow, and the client's close is awaited briefly). */
int icf_srv_ping(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		 struct icf_obs *o, bool read_sent, uint8_t go_op, unsigned go_segs);

/* ---------------------------------------------------------------------- */
/* perftest's client (icf_perftest.c)                                       */
/* ---------------------------------------------------------------------- */

/* The control connection and the exchanges before the data connection.
 * 0, or -1 with the reason in why. */
int icf_pt_open(const struct icf_ctx *x, struct icf_ep *ctl, char *why, size_t whylen);
/* After the data connection's startup: the key exchange on the control
 * connection (the server's buffer into ep->pbuf).  1, or 0 with the reason
 * in o->why. */
int icf_pt_established(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		       struct icf_obs *o);
/* The test's normal step on the data connection: one Write into the
 * server's buffer then a zero-length Read Request (a write test), or one
 * Read Request of it (a read test).  0 or -1. */
int icf_pt_step(struct icf_ep *ep);
/* The step and its answer, a Read Response: 1 when it came. */
int icf_pt_accept(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		  struct icf_obs *o);
/* The end of perftest's exchange on the control connection (barrier,
 * results, last key exchange), best effort, so that the server ends as
 * after a run. */
void icf_pt_finish(const struct icf_ctx *x, struct icf_ep *ep);

#endif
