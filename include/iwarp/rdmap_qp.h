/* SPDX-License-Identifier: MIT */
/*
 * rdmap_qp.h - the RDMAP queue-pair engine (RFC 5040 over RFC 5041 over
 * RFC 5044).  Sans-I/O: one object per connection in full operation.  Bytes
 * received from TCP go in through rdmap_qp_read_stream(); bytes to send come
 * out as iovecs from rdmap_qp_tx_iov(); work requests go in with post_send /
 * post_recv and come back as completions from rdmap_qp_poll().  The verbs
 * layer (verbs/, iwv.h) wraps this with PDs, MRs, CQs and sockets.
 *
 * Memory: local buffers are named by (addr, length, lkey) and every lkey is an
 * STag of the shared ddp_stag_table, registered with base_to = (uintptr_t)addr
 * (like an ibverbs iova).  Peers name our memory by (STag, TO) with the same
 * TO space.
 */
#ifndef IWARP_RDMAP_QP_H
#define IWARP_RDMAP_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RDMAP_MAX_SGE 4

struct rdmap_sge {
	uint64_t addr; /* local address (uintptr_t) = TO in the lkey's registration */
	uint32_t length;
	uint32_t lkey; /* STag with DDP_ACCESS_LOCAL_WRITE for receive/Read sinks */
};

enum rdmap_wr_opcode {
	RDMAP_WR_SEND,
	RDMAP_WR_SEND_INV, /* Send with Invalidate of invalidate_stag at the peer */
	RDMAP_WR_SEND_SE,  /* Send with Solicited Event */
	RDMAP_WR_SEND_SE_INV,
	RDMAP_WR_WRITE, /* RDMA Write to (remote_stag, remote_to) */
	RDMAP_WR_READ,	/* RDMA Read from (remote_stag, remote_to) into sg[0] (one SGE) */
	/* RFC 7306 (the QP's config has rfc7306 set; IW_EINVAL otherwise) */
	RDMAP_WR_WRITE_IMM, /* RDMA Write, then at once an Immediate Data message carrying imm */
	RDMAP_WR_SEND_IMM,  /* Send (only when it has payload), then Immediate Data (imm) */
	RDMAP_WR_ATOMIC_FA, /* Fetch-and-Add at (remote_stag, remote_to); original value into
			       sg[0] (one SGE of 8 octets) */
	RDMAP_WR_ATOMIC_CS, /* Compare-and-Swap, the same way */
	/* Local memory operations on the shared STag table, done when the send queue
	 * reaches them (after every earlier WR has started; RDMAP_WR_FENCE waits for
	 * earlier Reads as for any WR), nothing on the wire; num_sge/sg are ignored.
	 * They complete with RDMAP_WC_LOCAL_INV / _FAST_REG / _BIND_MW; a failure
	 * completes the WR with RDMAP_WC_LOC_QP_OP_ERR (LOCAL_INV, FAST_REG) or
	 * RDMAP_WC_MW_BIND_ERR (BIND_MW) and fails the QP like any local error. */
	RDMAP_WR_LOCAL_INV, /* invalidate invalidate_stag (an MR's or an MW's STag) */
	RDMAP_WR_FAST_REG,  /* fast registration (ddp_stag_fast_reg): see struct rdmap_fast_reg */
	RDMAP_WR_BIND_MW,   /* bind a type-2 memory window: see struct rdmap_bind_mw */
	RDMAP_WR_OPCODE_MAX = RDMAP_WR_BIND_MW,
};

enum rdmap_wr_flags {
	RDMAP_WR_SIGNALED = 1u << 0,  /* produce a completion on success */
	RDMAP_WR_FENCE = 1u << 1,     /* wait until every earlier RDMA Read has completed */
	RDMAP_WR_SOLICITED = 1u << 2, /* WRITE_IMM / SEND_IMM: Immediate Data with SE */
};

/* RDMAP_WR_FAST_REG: (re)register the STag `stag` (index of an STag allocated
 * for fast registration, key chosen by the consumer) over a page list. */
struct rdmap_fast_reg {
	uint32_t stag;		 /* index << 8 | the new key */
	uint32_t access;	 /* DDP_ACCESS_* */
	uint64_t iova;		 /* tagged offset of the first octet */
	uint64_t length;	 /* octets, from iova */
	const uint64_t *pages;	 /* page addresses (host pointers as integers), each a multiple
				    of page_size; read when the WR is processed: keep the array
				    until the WR completes */
	uint32_t npages;	 /* entries of pages[] */
	uint32_t page_size;	 /* a power of two, >= 4096 */
	uint32_t first_page_off; /* offset of iova's octet within pages[0] */
};

/* RDMAP_WR_BIND_MW: bind the window `mw_stag` (new key) to [addr, addr + length)
 * of the memory region `mr_stag`, with `access`; length 0 unbinds.  The window
 * is then associated with this QP's stream (rdmap_qp_config.stream): a peer's
 * reference to it through any other QP fails (ddp_stag_bind has the rules). */
struct rdmap_bind_mw {
	uint32_t mw_stag; /* index << 8 | the new key */
	uint32_t mr_stag;
	uint64_t addr;
	uint64_t length;
	uint32_t access; /* DDP_ACCESS_* */
};

struct rdmap_send_wr {
	uint64_t wr_id;
	enum rdmap_wr_opcode opcode;
	uint32_t flags;
	int num_sge;
	struct rdmap_sge sg[RDMAP_MAX_SGE];
	uint32_t invalidate_stag; /* Send with Invalidate variants */
	uint32_t remote_stag;	  /* Write / Read / atomics: the peer's STag (rkey) */
	uint64_t remote_to;	  /* Write / Read / atomics: the peer's tagged offset */
	uint64_t imm; /* WRITE_IMM / SEND_IMM: the 8 octets, first octet most significant */
	struct {
		uint64_t add_swap, add_swap_mask, compare, compare_mask; /* as rdmap_atomic_req */
	} atomic;
	struct rdmap_fast_reg fast_reg; /* RDMAP_WR_FAST_REG */
	struct rdmap_bind_mw bind_mw;	/* RDMAP_WR_BIND_MW */
};

struct rdmap_recv_wr {
	uint64_t wr_id;
	int num_sge;
	struct rdmap_sge sg[RDMAP_MAX_SGE];
};

/* Work-completion status, with the meaning of the ibverbs IBV_WC_* of the same name. */
enum rdmap_wc_status {
	RDMAP_WC_SUCCESS = 0,
	RDMAP_WC_LOC_LEN_ERR,	 /* local length error (e.g. Send larger than MULPDU rules allow) */
	RDMAP_WC_LOC_PROT_ERR,	 /* an lkey does not cover the SGE or lacks the access */
	RDMAP_WC_WR_FLUSH_ERR,	 /* the QP left RTS before this WR was done */
	RDMAP_WC_REM_ACCESS_ERR, /* the peer reported a protection error (Terminate: RDMAP
				    type 1, or DDP type 1 (tagged buffer) codes 0-3) */
	RDMAP_WC_REM_OP_ERR,	 /* the peer reported an operation error (Terminate) */
	RDMAP_WC_REM_INV_REQ_ERR, /* the peer found our request invalid (DDP/LLP Terminate) */
	RDMAP_WC_GENERAL_ERR,	  /* any other fatal error */
	RDMAP_WC_MW_BIND_ERR, /* RDMAP_WR_BIND_MW failed (bad window, MR, range, rights, stream) */
	RDMAP_WC_LOC_QP_OP_ERR, /* RDMAP_WR_LOCAL_INV / RDMAP_WR_FAST_REG failed (as Linux siw
				   reports a failed local operation) */
};

enum rdmap_wc_opcode {
	RDMAP_WC_SEND,
	RDMAP_WC_RDMA_WRITE,
	RDMAP_WC_RDMA_READ,
	RDMAP_WC_RECV,
	RDMAP_WC_RECV_RDMA_WITH_IMM, /* Immediate Data right after an RDMA Write: byte_len is
					that Write's length */
	RDMAP_WC_COMP_SWAP,
	RDMAP_WC_FETCH_ADD,
	RDMAP_WC_LOCAL_INV,
	RDMAP_WC_FAST_REG,
	RDMAP_WC_BIND_MW,
};

struct rdmap_wc {
	uint64_t wr_id;
	enum rdmap_wc_status status;
	enum rdmap_wc_opcode opcode;
	uint32_t byte_len; /* RECV: message length; READ: octets read */
	bool solicited;	   /* RECV: Send with Solicited Event */
	bool invalidated;  /* RECV: the Send carried an Invalidate that we performed */
	uint32_t invalidated_stag;
	bool with_imm; /* RECV / RECV_RDMA_WITH_IMM of an Immediate Data message */
	uint64_t imm;  /* its 8 octets, first octet most significant */
	int err;       /* iw_err cause behind a failed status (diagnostics) */
};

enum rdmap_qp_state {
	RDMAP_QP_IDLE,	    /* created with start_idle: WRs may be posted, nothing moves yet */
	RDMAP_QP_RTS,	    /* full operation */
	RDMAP_QP_CLOSING,   /* graceful close requested: sending what is queued, then EOF */
	RDMAP_QP_TERMINATE, /* fatal error: our Terminate is being sent */
	RDMAP_QP_ERROR,	    /* dead: every WR flushed, nothing more is sent or accepted */
};

struct rdmap_qp_config {
	struct ddp_stag_table *stags; /* shared STag table (not owned) */
	uint32_t pd;		      /* this QP's protection domain */
	uint32_t sq_depth;	      /* send WRs outstanding at most (1..4096) */
	uint32_t rq_depth;	      /* receive WRs posted at most (1..4096) */
	uint32_t mulpdu;	      /* from mpa_mulpdu(EMSS, markers_tx) */
	uint32_t max_msg;	      /* largest message accepted (default 1 GiB) */
	/* negotiated: CRC, Markers each way, p2p/RTR, IRD, ORD; with start_idle, ird and ord
	 * are the capacities to allocate (rdmap_qp_start() brings the negotiated ones) */
	struct mpa_params mpa;
	bool initiator;	 /* MPA role: the initiator sends the first FPDU (RTR if p2p) */
	bool start_idle; /* create in IDLE; rdmap_qp_start() enters RTS */
	/* RFC 7306 (atomics, Immediate Data): nothing negotiates it, so both ends'
	 * applications must agree.  Off: the QP is plain RFC 5040 and answers an
	 * RFC 7306 opcode with an "unexpected opcode" Terminate. */
	bool rfc7306;
	/* Shared receive queue (not owned): receives come from it instead of the
	 * QP's own receive queue (rq_depth is then unused); see rdmap_srq_*. */
	struct rdmap_srq *srq;
	/* The id of this QP's RDMAP stream in the STag table (type-2 memory windows
	 * bound by RDMAP_WR_BIND_MW belong to it; RFC 5040 §2.1, §7.2 "STag not
	 * associated with RDMAP Stream").  Unique among the QPs sharing `stags`;
	 * 0 = none: binding fails and no window is usable through this QP. */
	uint32_t stream;
	/* Receiver not ready: a message for QN 0 (a Send or Immediate Data) that
	 * finds no posted receive holds the receive side (rdmap_qp_read_stream()
	 * stops before it and returns the octets consumed) instead of failing,
	 * until a receive is posted or the caller gives up
	 * (rdmap_qp_rx_hold_expire()).  Off: the RFC 5041 §7.2 "no buffer"
	 * Terminate at once. */
	bool rnr_hold;
	/* Receiving into place (rdmap_qp_rx_target()): the shortest span worth a
	 * read of its own (0 = RDMAP_QP_RX_DIRECT_MIN); a ULPDU of 8 times that
	 * makes reads stop after each header for a while.  Tests set 1 to take
	 * that path at every split. */
	uint32_t rx_direct_min;
};

struct rdmap_qp;
struct rdmap_srq;

/* Zero the config, then set the defaults of sq_depth, rq_depth, mulpdu and
 * max_msg (stags, pd, mpa and initiator are the caller's; srq NULL, rfc7306
 * and start_idle off). */
IW_EXPORT void rdmap_qp_config_default(struct rdmap_qp_config *cfg);

/*
 * Create a QP in RTS (IDLE with cfg->start_idle).  IW_EINVAL for a bad config, IW_ENOMEM.  With p2p the
 * initiator queues the negotiated RTR as its first FPDU, and the responder
 * expects that RTR as the first FPDU it receives (answering a Read RTR with a
 * zero-length Read Response); the RTR completes no work request.
 */
IW_EXPORT int rdmap_qp_create(const struct rdmap_qp_config *cfg, struct rdmap_qp **qp);

/*
 * IDLE -> RTS once MPA has negotiated `p` (NULL: the config's).  p->ird and
 * p->ord may not exceed the capacities the QP was created with (IW_EINVAL);
 * IW_ESTATE unless IDLE, IW_ENOMEM (the ring of the peer's Reads is sized
 * here, for the IRD negotiated).  Work posted while IDLE starts moving now.
 */
IW_EXPORT int rdmap_qp_start(struct rdmap_qp *qp, const struct mpa_params *p);

/*
 * Set what is known only once MPA is done, while IDLE: the MULPDU (it depends
 * on the negotiated Markers and the connection's MSS) and the MPA role.
 * IW_EINVAL for a MULPDU below MPA_MULPDU_MIN or above MPA_ULPDU_MAX,
 * IW_ESTATE unless IDLE.
 */
IW_EXPORT int rdmap_qp_set_link(struct rdmap_qp *qp, uint32_t mulpdu, bool initiator);

/*
 * Graceful close (RFC 5040 §6.2, ULP graceful teardown): RTS -> CLOSING.  New
 * posts are refused (IW_ESTATE); what is queued still goes out and incoming
 * data is still accepted.  When rdmap_qp_tx_done() turns true the caller
 * closes its TCP half (FIN); the peer's FIN then arrives as rdmap_qp_llp_closed(),
 * which moves to ERROR flushing what is left (posted receives) with
 * RDMAP_WC_WR_FLUSH_ERR, err IW_ERDMAP_FLUSHED, while rdmap_qp_error() stays
 * IW_OK (a FIN before tx_done is an LLP failure as in RTS).  Closing an IDLE QP
 * flushes it the same quiet way.  IW_ESTATE in TERMINATE/ERROR.
 */
IW_EXPORT int rdmap_qp_close(struct rdmap_qp *qp);
/* CLOSING and nothing left to send or to wait for (send queue, Read Responses, FPDUs). */
IW_EXPORT bool rdmap_qp_tx_done(const struct rdmap_qp *qp);

/* Destroy: outstanding WRs are dropped (call rdmap_qp_flush() first to complete them). */
IW_EXPORT void rdmap_qp_destroy(struct rdmap_qp *qp);

/*
 * Post work.  IW_OK, IW_ENOSPC when the queue is full, IW_EINVAL for a malformed
 * WR (num_sge out of range, Read with num_sge != 1), IW_ESTATE outside IDLE/RTS.
 * SGEs are checked against the STag table when the WR is processed; a failure
 * completes that WR with RDMAP_WC_LOC_PROT_ERR and moves the QP to ERROR.
 */
IW_EXPORT int rdmap_qp_post_send(struct rdmap_qp *qp, const struct rdmap_send_wr *wr);
IW_EXPORT int rdmap_qp_post_recv(struct rdmap_qp *qp, const struct rdmap_recv_wr *wr);

/* Up to n completions, in completion order.  Returns the count (0 = none). */
IW_EXPORT int rdmap_qp_poll(struct rdmap_qp *qp, struct rdmap_wc *wc, int n);

/*
 * Bytes received from TCP.  Returns len, or a negative iw_err once the QP has
 * failed (it then queued its Terminate when it could and flushed its WRs).
 * With cfg.rnr_hold, fewer than len when a message found no receive: the QP
 * is held (rdmap_qp_rx_held()); feed the rest again once a receive is
 * posted (a call with len 0 offers the held message again).
 */
IW_EXPORT ssize_t rdmap_qp_read_stream(struct rdmap_qp *qp, const void *buf, size_t len);
/*
 * Receiving into place, for a caller that reads the stream itself: with it,
 * the payload of a large segment goes from the socket straight into its
 * target instead of through the caller's buffer and a copy.
 *
 * rdmap_qp_rx_target() returns the address the next stream octets belong at
 * when they are payload of the segment being received with one contiguous
 * destination (an RDMA Write or Read Response into a contiguous target, a
 * Send into a contiguous part of its receive) and at least
 * cfg.rx_direct_min (default RDMAP_QP_RX_DIRECT_MIN) of them go there; *len
 * is how many do.  The caller
 * then reads at most *len stream octets to that address and reports the
 * count with rdmap_qp_rx_placed() instead of rdmap_qp_read_stream(): they
 * are counted into the CRC where they lie and the stream goes on exactly as
 * if they had been fed; nothing else may touch the QP in between.  Unsent
 * FPDUs that point into that memory were given private copies first (the
 * same guard as every placement).
 *
 * Otherwise NULL, and *len bounds the caller's next ordinary read: while
 * large segments arrive, a read that ends right after the next segment's
 * header lets the payload after it come straight in; 0 means no bound.
 * Both return values depend only on the state of the receive side, so a
 * caller may ask before every read.  rdmap_qp_rx_placed() returns IW_OK or
 * the error that failed the QP, IW_EINVAL for more than *len.
 */
#define RDMAP_QP_RX_DIRECT_MIN 2048u
IW_EXPORT uint8_t *rdmap_qp_rx_target(struct rdmap_qp *qp, size_t *len);
IW_EXPORT int rdmap_qp_rx_placed(struct rdmap_qp *qp, size_t n);
/* A message waits for a receive (cfg.rnr_hold). */
IW_EXPORT bool rdmap_qp_rx_held(const struct rdmap_qp *qp);
/* Stop waiting: the held message, offered again, fails the QP with the
 * "no buffer" Terminate unless a receive has come meanwhile. */
IW_EXPORT void rdmap_qp_rx_hold_expire(struct rdmap_qp *qp);

/*
 * Bytes to send: fills up to max iovecs (many FPDUs per call, so one writev
 * carries them all), returns the count and *bytes their total (0 = nothing).
 * The iovecs stay valid until rdmap_qp_tx_advance() consumes them.
 */
IW_EXPORT int rdmap_qp_tx_iov(struct rdmap_qp *qp, struct iovec *iov, int max, size_t *bytes);
IW_EXPORT void rdmap_qp_tx_advance(struct rdmap_qp *qp, size_t n);

/* The TCP stream ended or failed: fatal error IW_EMPA_CLOSED, every WR flushed. */
IW_EXPORT void rdmap_qp_llp_closed(struct rdmap_qp *qp);
/* The same with the cause the socket gave (err < 0, e.g. IW_ESYS(ETIMEDOUT)
 * for a peer the kernel found dead, IW_ESYS(ECONNRESET) for a reset): it
 * becomes rdmap_qp_error() and the err of every WR flushed. */
IW_EXPORT void rdmap_qp_llp_failed(struct rdmap_qp *qp, int err);

/* Move to ERROR now (no Terminate) and complete every outstanding WR with a flush status. */
IW_EXPORT void rdmap_qp_flush(struct rdmap_qp *qp);

IW_EXPORT enum rdmap_qp_state rdmap_qp_state(const struct rdmap_qp *qp);
IW_EXPORT const char *rdmap_qp_state_name(enum rdmap_qp_state st);
/* First cause of the failure (IW_OK while healthy). */
IW_EXPORT int rdmap_qp_error(const struct rdmap_qp *qp);
/* The Terminate we sent / received, if any (NULL otherwise). */
IW_EXPORT const struct rdmap_term *rdmap_qp_term_sent(const struct rdmap_qp *qp);
IW_EXPORT const struct rdmap_term *rdmap_qp_term_received(const struct rdmap_qp *qp);

/* ---------------------------------------------------------------------- */
/* Shared receive queues                                                    */
/* ---------------------------------------------------------------------- */

/*
 * A shared receive queue: one pool of posted receives that several QPs draw
 * from (rdmap_qp_config.srq).  A QP takes the next receive when an untagged
 * QN 0 message (Send, Immediate Data) starts; that receive then belongs to
 * the QP and completes through rdmap_qp_poll() like its own.  When a QP fails
 * only the receive it had taken is flushed: the others stay in the SRQ for
 * the remaining QPs.  Sans-I/O and not thread safe (the caller locks).
 *
 * A QP takes a receive only while its own completion ring (sized with
 * sq_depth + the SRQ's depth) has room for one more completion: a QP whose
 * completions nobody polls answers the next Send with the same DDP "no
 * buffer" Terminate as an empty SRQ (RFC 5041 §7.2), never with a lost
 * completion.  rdmap_qp_post_recv() on a QP with an SRQ is IW_EINVAL.  The
 * SRQ must outlive its QPs; the receive buffers are checked against the
 * taking QP's PD and STag table.
 */
IW_EXPORT int rdmap_srq_create(uint32_t depth, struct rdmap_srq **srq); /* depth 1..65536 */
/* IW_ESTATE while a QP still uses it. */
IW_EXPORT int rdmap_srq_destroy(struct rdmap_srq *srq);
/* IW_OK, IW_ENOSPC when full, IW_EINVAL for a malformed WR. */
IW_EXPORT int rdmap_srq_post(struct rdmap_srq *srq, const struct rdmap_recv_wr *wr);
/* Receives posted and not yet taken by a QP. */
IW_EXPORT uint32_t rdmap_srq_count(const struct rdmap_srq *srq);
/*
 * Arm the limit: once the count drops below `limit` (after a QP took a
 * receive) rdmap_srq_limit_reached() returns true once and the limit is
 * disarmed (ibverbs IBV_EVENT_SRQ_LIMIT_REACHED semantics); 0 disarms.
 */
IW_EXPORT void rdmap_srq_set_limit(struct rdmap_srq *srq, uint32_t limit);
IW_EXPORT bool rdmap_srq_limit_reached(struct rdmap_srq *srq);
/* Complete (flush) every receive still in the SRQ into `wc` (up to n); returns the count. */
IW_EXPORT int rdmap_srq_flush(struct rdmap_srq *srq, struct rdmap_wc *wc, int n);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_RDMAP_QP_H */
