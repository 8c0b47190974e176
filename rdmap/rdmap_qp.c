/* SPDX-License-Identifier: MIT */
/*
 * rdmap_qp.c - the RDMAP queue-pair engine (RFC 5040 §5, §6, §7 over RFC 5041
 * over RFC 5044, with the RFC 6581 RTR).
 *
 * Theory of operation.  One object per connection in full operation, sans-I/O:
 * octets from TCP go through one mpa_rx into the callbacks below, octets to
 * TCP come out of a small ring of framed FPDUs (mpa_tx), work requests go in
 * through post_send/post_recv and come back through an internal completion
 * ring that can never overflow (it holds one entry per WR the queues can hold).
 *
 * State: RTS -> (fatal error) TERMINATE -> (our Terminate written) ERROR.
 * Every fatal error goes through qp_fail(): it keeps the FIRST cause, flushes
 * every outstanding WR (a failed WR always completes, signalled or not), drops
 * the FPDUs not yet started on the wire and queues our Terminate (RFC 5040
 * §4.8, §5.4, §6.2.1: one per stream, untagged QN 2, then nothing more) unless
 * the cause is the peer's Terminate, an LLP close or a local flush.
 *
 * Transmit (RFC 5040 §5.5, RFC 5041 §5.2).  At message boundaries the next
 * message is chosen in this priority: our Terminate, the RTR (p2p initiator),
 * Read Responses in Request arrival order, then the send queue in post order.
 * A FENCE WR waits until every earlier Read has completed and a Read waits
 * while ORD Reads are outstanding (§6.1: never more than ORD on the wire).
 * Messages are segmented with ddp_seg; each segment is framed straight from the
 * SGE memory (zero copy), the DDP (and RDMAP) header lives in the FPDU slot.
 * Send and Write WRs complete when their last FPDU has been written (§5.5: on
 * the wire = done locally); a Read completes when its last Read Response
 * segment has been placed.  Send-queue completions are reported in post order.
 *
 * Receive (RFC 5041 §7.1, RFC 5040 §7.2).  The DDP header (and the Read
 * Request or Terminate header) is gathered contiguously by mpa_rx and checked
 * before any payload arrives, so each payload span is placed straight into its
 * final buffer.  A message's side effects (completions, invalidation, MSN
 * advance, queued Read Responses) happen only at fpdu_done, once the CRC has
 * matched.  Any check that fails produces the exact Terminate of the error
 * plan with the errant DDP header (and Read Request header) copied as RFC 5040
 * figure 10 says (rdmap_term_fill).
 *
 * Zero copy versus placement: a framed FPDU's CRC covers the payload as it was
 * when the FPDU was framed, but the FPDU may wait in the ring (or be partly
 * written) while received data is placed into the very memory it points at -
 * e.g. an unfenced RDMA Write from the peer into a buffer it is also reading
 * (RFC 5040 §5.5 makes the data undefined, not the stream).  Before every
 * placement, tx_protect() therefore gives each unsent FPDU that points into the
 * target range a private copy of its remaining payload, so the octets sent
 * always match their CRC.  The common case stays zero copy.
 *
 * Shared receive queue (cfg.srq, rdmap_srq.c).  The QP's own receive queue
 * then has one entry: the receive it took from the SRQ for the untagged QN 0
 * message in progress (rq_current()).  From there on that receive is the
 * QP's like a posted one: placement, invalidation, completion and flush use
 * the same code.  A QP takes a receive only while its completion ring has
 * room for one more completion, so the ring (sized with the SRQ's depth) can
 * never overflow whoever does not poll: a Send that finds the ring full meets
 * the same "no buffer" Terminate as an empty receive queue.  A failing QP
 * flushes only the receive it holds; the others stay in the SRQ.
 *
 * Memory operations (RDMAP_WR_LOCAL_INV, _FAST_REG, _BIND_MW) are done by
 * tx_start_local() when the send queue reaches them, on the shared STag table,
 * and complete at once.  Tagged memory is resolved with ddp_stag_resolve()
 * (peers' references with this QP's stream, local SGEs with none, so an lkey
 * is never a window).  A page-list registration whose pages are scattered
 * cannot be named by one pointer: such targets are placed span by span
 * (place_ref) and such sources are gathered into the slot's bounce buffer
 * when framed (tx_gather); everything else stays zero copy as above.
 *
 * Memory: everything is allocated at create time and bounded by the config;
 * nothing is ever sized by a peer.  The only later allocation is a slot's
 * bounce buffer (one MPA ULPDU at most, at most QP_SLOTS of them), made the
 * first time that slot needs tx_protect().
 */
#include <string.h>

#include <iwarp/rdmap_qp.h>

#include "iw_alloc.h"
#include "iw_bytes.h"
#include "iw_log.h"
#include "rdmap_srq_int.h"

#define QP_SLOTS 16 /* framed FPDUs in flight */
/* The largest header-only ULPDU: a Terminate or an RFC 7306 Atomic Request. */
#define QP_RAW_MAX    (DDP_UNTAGGED_HDR_LEN + IW_MAX(RDMAP_TERM_MAX_LEN, RDMAP_ATOMIC_REQ_LEN))
#define QP_DEPTH_MAX  4096u
#define QP_IRD_CAP    4096u /* an IRD of 0x3FFF means "not negotiated": bound the ring anyway */
#define QP_MAX_MSG    (1u << 30)
#define QP_DEFAULT_WQ 256u

enum qp_sq_state {
	SQ_QUEUED,    /* not started */
	SQ_ACTIVE,    /* being segmented / on the wire */
	SQ_WAIT_RESP, /* Read Request sent, waiting for the Read Response */
	SQ_DONE,      /* finished (status set), waiting for earlier WRs to complete */
};

struct qp_sqe {
	struct rdmap_send_wr wr;
	enum qp_sq_state st;
	enum rdmap_wc_status status;
	int err;
	uint32_t byte_len;
};

struct qp_rqe {
	struct rdmap_recv_wr wr;
	uint8_t *dst[RDMAP_MAX_SGE];		/* resolved when the first segment arrives */
	struct ddp_stag_ref ref[RDMAP_MAX_SGE]; /* the same; dst NULL when scattered */
	bool resolved;
	bool failed; /* its SGEs failed the check: complete with LOC_PROT_ERR */
};

/* An RDMA Read Request or RFC 7306 Atomic Request of ours on the wire,
 * waiting for its Response (both kinds are answered in request order). */
struct qp_rd {
	uint32_t sq_idx;
	bool rtr;    /* the RFC 6581 Read RTR: completes no WR */
	bool atomic; /* an Atomic Request: sink_stag/sink_to name the 8-octet result buffer */
	uint32_t req_id;
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
};

/* A peer's RDMA Read Request (or Atomic Request) accepted and not yet fully answered. */
struct qp_ird {
	struct rdmap_read_req rr;
	struct ddp_stag_ref src;
	bool rtr;    /* the peer's Read RTR: uses the spare slot, not the IRD */
	bool atomic; /* an Atomic Request, already performed: answer with resp */
	struct rdmap_atomic_resp resp;
};

enum qp_txm_kind { TXM_TERM, TXM_RTR, TXM_RRESP, TXM_SQ };

/* The message being segmented. */
struct qp_txmsg {
	bool active;
	enum qp_txm_kind kind;
	bool raw; /* a single header-only ULPDU in raw[] (Terminate, RTR, Read Request) */
	uint8_t raw_buf[QP_RAW_MAX];
	size_t raw_len;
	struct ddp_seg seg;
	struct iovec sg[RDMAP_MAX_SGE];
	struct ddp_stag_ref ref[RDMAP_MAX_SGE]; /* sg[i] is scattered when ref[i].pages */
	bool scattered;				/* some sg[] is: gather (tx_gather) */
	int nsg;
	int owner;	  /* send-queue index, -1 for none */
	bool imm_pending; /* RFC 7306: an Immediate Data message follows this one */
	uint8_t imm_op;	  /* RDMAP_OP_IMM or RDMAP_OP_IMM_SE */
	uint64_t imm;
};

struct qp_slot {
	uint32_t start_pos; /* mpa_tx position of this FPDU's first octet */
	int owner;	    /* send-queue index whose message this is, -1 for none */
	bool last;	    /* last FPDU of that message */
	bool term;	    /* our Terminate */
	uint8_t hdr[QP_RAW_MAX];
	struct mpa_fpdu f; /* last: its Markers' part stays untouched without Markers */
};

/*
 * A slot's buffers, made when first needed and kept.  They live apart from
 * the slots so the slot array (some 5 KiB per slot, for the iovecs and
 * Markers of the largest FPDU) need not be zeroed: a slot's pages are touched
 * only once it frames an FPDU, and an empty ring starts again at slot 0, so
 * an idle connection keeps one or two slots resident, not all QP_SLOTS.
 */
struct qp_slot_mem {
	uint8_t *bounce; /* private copy of the payload, made on conflict (see tx_protect) */
	uint8_t *lin;	 /* the whole FPDU in one piece (many Markers, see tx_linearize) */
};

/* An FPDU split into more iovecs than this is copied into one piece. */
#define QP_LIN_IOV 16

enum qp_rx_kind {
	RX_DISCARD,
	RX_RTR,
	RX_WRITE,
	RX_RRESP,
	RX_SEND,
	RX_RREQ,
	RX_TERM,
	RX_IMM,	  /* RFC 7306 Immediate Data */
	RX_AREQ,  /* RFC 7306 Atomic Request */
	RX_ARESP, /* RFC 7306 Atomic Response */
};

/* Receiving into place (rdmap_qp_rx_target): a ULPDU of QP_RX_BIG_FACTOR times
 * cfg.rx_direct_min starts the mode where reads stop after each header... */
#define QP_RX_BIG_FACTOR 8u
/* ...for itself and the next FPDUs, as messages alternate a long segment
 * and a short tail (a 64 KiB message on a 64 KiB MULPDU) */
#define QP_RX_BIG_KEEP 4u
/* What a read takes after an FPDU's end in that mode: the ULPDU_Length and
 * the longer DDP header (untagged, RFC 5041 §4.3), enough for a Send's or a
 * Write's payload to start in place. */
#define QP_RX_LOOKAHEAD (MPA_ULPDU_LEN_LEN + DDP_UNTAGGED_HDR_LEN)

/* The segment being received. */
struct qp_rxseg {
	enum qp_rx_kind kind;
	struct ddp_hdr h;
	uint8_t hdr[MPA_RX_HDR_MAX];
	size_t gathered; /* header octets gathered (payload starts here) */
	size_t ddp_len;	 /* 14 / 18 */
	size_t ulpdu_len;
	uint32_t payload_len;
	uint8_t opcode;
	uint8_t *dst;		 /* RX_WRITE / RX_RRESP: address of the first payload octet */
	struct ddp_stag_ref ref; /* the same target; dst NULL when scattered */
	enum mpa_rtr rtr;
	struct rdmap_read_req rr;
	struct ddp_stag_ref src;
	struct rdmap_term term;
	struct rdmap_atomic_req areq;
	struct rdmap_atomic_resp aresp;
	uint64_t *atarget; /* RX_AREQ: the target word; RX_ARESP: the result buffer */
	/* a header error waiting for the FPDU's CRC (rx_fail) */
	int defer_err;
	bool defer_copy, defer_rreq;
};

struct rdmap_qp {
	struct rdmap_qp_config cfg;
	enum rdmap_qp_state state;
	int error;
	struct rdmap_term term_sent, term_recv;
	bool has_term_sent, has_term_recv;
	uint32_t ord_lim, ird_lim;

	/* send queue: [sq_head, +sq_count), the first sq_started of them started */
	struct qp_sqe *sq;
	uint32_t sq_head, sq_count, sq_started;
	/* receive queue */
	struct qp_rqe *rq;
	uint32_t rq_head, rq_count;
	/* completion ring */
	struct rdmap_wc *cq;
	uint32_t cq_size, cq_head, cq_count;
	/* our Reads on the wire (in order: Responses come back in order) */
	struct qp_rd *rd;
	uint32_t rd_size, rd_head, rd_count, rd_wr_count;
	/* the peer's Reads to answer */
	struct qp_ird *ird;
	uint32_t ird_size, ird_head, ird_count;
	bool ird_rtr; /* the Read RTR is in the ring */

	/* transmit */
	struct mpa_tx tx;
	struct qp_slot *slots; /* not zeroed: a slot is set up when framed */
	struct qp_slot_mem sl_mem[QP_SLOTS];
	uint32_t sl_head, sl_count;
	struct qp_txmsg txm;
	uint32_t tx_msn[DDP_QN_COUNT_7306];
	uint32_t next_req_id; /* RFC 7306 Request Identifier of our next Atomic Request */
	bool rtr_pending;
	bool term_pending;
	bool may_send; /* responder: a first valid FPDU was received (RFC 5044 §7.1.2) */

	/* receive */
	struct mpa_rx rx;
	struct ddp_untagged_queue rxq[DDP_QN_COUNT_7306];
	uint32_t nqueues; /* untagged queues: 3, or 4 with RFC 7306 */
	bool rtr_expected;
	/* cfg.rnr_hold: a QN 0 message waits for a receive; the wait was given up */
	bool rx_held, hold_expired;
	bool rx_in_hdr; /* rx_header_done is judging a header (rx_fail defers) */
	/* rdmap_qp_rx_target: FPDUs for which reads still stop after the header */
	uint8_t rx_big_left;
	struct qp_rxseg seg;
	/* the RDMA Write being received (RFC 7306: the length an Immediate Data reports) */
	uint32_t rx_write_acc; /* octets of the current Write message so far */
	uint32_t rx_write_len; /* length of the last complete Write message */
	bool rx_prev_write;    /* the last complete message was an RDMA Write */
};

/* ---------------------------------------------------------------------- */
/* Config, names                                                            */
/* ---------------------------------------------------------------------- */

void rdmap_qp_config_default(struct rdmap_qp_config *cfg)
{
	if (!cfg)
		return;
	/* everything else off / none: no SRQ (cfg->srq), no RFC 7306, not idle */
	memset(cfg, 0, sizeof(*cfg));
	cfg->sq_depth = QP_DEFAULT_WQ;
	cfg->rq_depth = QP_DEFAULT_WQ;
	cfg->mulpdu = mpa_mulpdu(1460, false);
	cfg->max_msg = QP_MAX_MSG;
}

const char *rdmap_qp_state_name(enum rdmap_qp_state st)
{
	switch (st) {
	case RDMAP_QP_IDLE:
		return "IDLE";
	case RDMAP_QP_RTS:
		return "RTS";
	case RDMAP_QP_CLOSING:
		return "CLOSING";
	case RDMAP_QP_TERMINATE:
		return "TERMINATE";
	case RDMAP_QP_ERROR:
		return "ERROR";
	}
	return "unknown";
}

enum rdmap_qp_state rdmap_qp_state(const struct rdmap_qp *qp)
{
	return qp->state;
}

int rdmap_qp_error(const struct rdmap_qp *qp)
{
	return qp->error;
}

const struct rdmap_term *rdmap_qp_term_sent(const struct rdmap_qp *qp)
{
	return qp->has_term_sent ? &qp->term_sent : NULL;
}

const struct rdmap_term *rdmap_qp_term_received(const struct rdmap_qp *qp)
{
	return qp->has_term_recv ? &qp->term_recv : NULL;
}

/* ---------------------------------------------------------------------- */
/* Completions                                                              */
/* ---------------------------------------------------------------------- */

static void cq_push(struct rdmap_qp *qp, const struct rdmap_wc *wc)
{
	/* Sized for every WR the queues can hold: a full ring is a bug, not a peer's doing. */
	if (qp->cq_count == qp->cq_size) {
		iw_log(IW_LOG_ERR, "rdmap_qp: completion ring full, completion lost");
		return;
	}
	qp->cq[(qp->cq_head + qp->cq_count) % qp->cq_size] = *wc;
	qp->cq_count++;
}

static enum rdmap_wc_opcode wc_opcode(enum rdmap_wr_opcode op)
{
	switch (op) {
	case RDMAP_WR_WRITE:
	case RDMAP_WR_WRITE_IMM:
		return RDMAP_WC_RDMA_WRITE;
	case RDMAP_WR_READ:
		return RDMAP_WC_RDMA_READ;
	case RDMAP_WR_ATOMIC_FA:
		return RDMAP_WC_FETCH_ADD;
	case RDMAP_WR_ATOMIC_CS:
		return RDMAP_WC_COMP_SWAP;
	case RDMAP_WR_LOCAL_INV:
		return RDMAP_WC_LOCAL_INV;
	case RDMAP_WR_FAST_REG:
		return RDMAP_WC_FAST_REG;
	case RDMAP_WR_BIND_MW:
		return RDMAP_WC_BIND_MW;
	default:
		return RDMAP_WC_SEND;
	}
}

static void sq_complete(struct rdmap_qp *qp, const struct qp_sqe *e)
{
	struct rdmap_wc wc = {
		.wr_id = e->wr.wr_id,
		.status = e->status,
		.opcode = wc_opcode(e->wr.opcode),
		.byte_len = e->byte_len,
		.err = e->err,
	};

	if (e->status == RDMAP_WC_SUCCESS && !(e->wr.flags & RDMAP_WR_SIGNALED))
		return;
	cq_push(qp, &wc);
}

static struct qp_sqe *sq_at(struct rdmap_qp *qp, uint32_t i)
{
	return &qp->sq[(qp->sq_head + i) % qp->cfg.sq_depth];
}

/* Report finished send WRs in post order (RFC 5040 §5.5). */
static void sq_drain(struct rdmap_qp *qp)
{
	while (qp->sq_count && qp->sq[qp->sq_head].st == SQ_DONE) {
		sq_complete(qp, &qp->sq[qp->sq_head]);
		qp->sq_head = (qp->sq_head + 1) % qp->cfg.sq_depth;
		qp->sq_count--;
		if (qp->sq_started)
			qp->sq_started--;
	}
}

static void sq_done(struct rdmap_qp *qp, uint32_t idx, enum rdmap_wc_status st, int err,
		    uint32_t byte_len)
{
	struct qp_sqe *e = &qp->sq[idx];

	e->st = SQ_DONE;
	e->status = st;
	e->err = err;
	e->byte_len = byte_len;
	sq_drain(qp);
}

/*
 * Complete every outstanding WR in error.  WRs already on the wire or waiting
 * for a Read Response get `remote` (the peer's Terminate) when given; a WR
 * that failed locally keeps its own status; all others are flushed.
 */
static void qp_flush_all(struct rdmap_qp *qp, int cause, enum rdmap_wc_status remote)
{
	uint32_t i;

	for (i = 0; i < qp->sq_count; i++) {
		struct qp_sqe *e = sq_at(qp, i);

		if (e->st == SQ_DONE && e->status != RDMAP_WC_SUCCESS) {
			/* the local culprit keeps its status */
		} else if (remote != RDMAP_WC_WR_FLUSH_ERR &&
			   (e->st == SQ_ACTIVE || e->st == SQ_WAIT_RESP)) {
			e->status = remote;
			e->err = cause;
		} else {
			e->status = RDMAP_WC_WR_FLUSH_ERR;
			e->err = cause;
		}
		e->byte_len = 0;
		e->wr.flags |= RDMAP_WR_SIGNALED;
		sq_complete(qp, e);
	}
	qp->sq_count = 0;
	qp->sq_started = 0;

	for (i = 0; i < qp->rq_count; i++) {
		struct qp_rqe *r = &qp->rq[(qp->rq_head + i) % qp->cfg.rq_depth];
		struct rdmap_wc wc = {
			.wr_id = r->wr.wr_id,
			.status = r->failed ? RDMAP_WC_LOC_PROT_ERR : RDMAP_WC_WR_FLUSH_ERR,
			.opcode = RDMAP_WC_RECV,
			.err = cause,
		};

		cq_push(qp, &wc);
	}
	qp->rq_count = 0;
	qp->rd_count = 0;
	qp->rd_wr_count = 0;
	qp->ird_count = 0;
	qp->ird_rtr = false;
	qp->txm.active = false;
	qp->rtr_pending = false;
}

/* ---------------------------------------------------------------------- */
/* The fatal-error path                                                     */
/* ---------------------------------------------------------------------- */

/* Forget FPDUs not yet started on the wire; a partly written one must finish. */
static void tx_drop_unsent(struct rdmap_qp *qp, bool all)
{
	uint32_t keep = 0;

	if (qp->sl_count) {
		struct qp_slot *s = &qp->slots[qp->sl_head];

		if (!all && s->f.len < s->f.total) {
			keep = 1;
			s->owner = -1;
		}
	}
	if (qp->sl_count > keep) {
		struct qp_slot *first = &qp->slots[(qp->sl_head + keep) % QP_SLOTS];

		/* Markers follow the stream position: rewind it to the first dropped FPDU. */
		mpa_tx_init(&qp->tx, qp->cfg.mpa.crc, qp->cfg.mpa.markers_tx, first->start_pos);
	}
	qp->sl_count = keep;
	if (!keep)
		qp->sl_head = 0;
}

/* Full operation: RTS, or CLOSING (still sending what is queued, still receiving). */
static bool qp_live(const struct rdmap_qp *qp)
{
	return qp->state == RDMAP_QP_RTS || qp->state == RDMAP_QP_CLOSING;
}

static void qp_fail(struct rdmap_qp *qp, int err, const uint8_t *ddp_hdr, size_t ddp_hdr_len,
		    size_t seg_len, const uint8_t *rreq)
{
	struct iw_term_code code;

	if (!qp_live(qp))
		return;
	qp->error = err;
	iw_log(IW_LOG_DEBUG, "rdmap_qp: fatal error %s", rdmap_errname(err));
	qp_flush_all(qp, err, RDMAP_WC_WR_FLUSH_ERR);

	iw_err_term(err, &code);
	/* no Terminate for the stream's own end (closed, reset, a peer found
	 * dead: IW_ESYS) nor after one */
	if (err == IW_ERDMAP_TERMINATED || err == IW_EMPA_CLOSED || err == IW_ERDMAP_FLUSHED ||
	    iw_err_errno(err) || code.layer == IW_TERM_NONE) {
		tx_drop_unsent(qp, true);
		qp->state = RDMAP_QP_ERROR;
		return;
	}
	tx_drop_unsent(qp, false);
	rdmap_term_fill(&qp->term_sent, &code, ddp_hdr, ddp_hdr_len,
			(uint16_t)IW_MIN(seg_len, (size_t)UINT16_MAX), rreq);
	qp->has_term_sent = true;
	qp->term_pending = true;
	qp->state = RDMAP_QP_TERMINATE;
}

/* ---------------------------------------------------------------------- */
/* Transmit                                                                 */
/* ---------------------------------------------------------------------- */

/*
 * Resolve a WR's SGEs to local memory with `access` (no stream: an lkey is
 * never a window); false if one fails the check.  A scattered SGE gets
 * iov_base NULL and its ref; *scattered (if not NULL) says whether any is.
 */
static bool sge_resolve(const struct rdmap_qp *qp, const struct rdmap_sge *sg, int n,
			uint32_t access, struct iovec *iov, struct ddp_stag_ref *ref,
			uint64_t *total, bool *scattered)
{
	int i;

	*total = 0;
	if (scattered)
		*scattered = false;
	for (i = 0; i < n; i++) {
		iov[i].iov_base = NULL;
		iov[i].iov_len = 0;
		memset(&ref[i], 0, sizeof(ref[i]));
		if (sg[i].length == 0)
			continue;
		if (ddp_stag_resolve(qp->cfg.stags, sg[i].lkey, qp->cfg.pd, 0, access, sg[i].addr,
				     sg[i].length, &ref[i]) != DDP_STAG_OK)
			return false;
		iov[i].iov_base = ref[i].addr;
		iov[i].iov_len = sg[i].length;
		*total += sg[i].length;
		if (scattered && ddp_stag_ref_scattered(&ref[i]))
			*scattered = true;
	}
	return true;
}

/* Copy [off, off + len) of the current message's SGEs into dst (scattered sources). */
static void tx_gather(const struct qp_txmsg *m, uint64_t off, uint64_t len, uint8_t *dst)
{
	for (int i = 0; i < m->nsg && len; i++) {
		uint64_t take;

		if (off >= m->sg[i].iov_len) {
			off -= m->sg[i].iov_len;
			continue;
		}
		take = IW_MIN(len, m->sg[i].iov_len - off);
		ddp_stag_ref_copy_out(&m->ref[i], off, dst, (size_t)take);
		dst += take;
		len -= take;
		off = 0;
	}
}

/* The iovecs covering [off, off + len) of a scattered message. */
static int sg_slice(const struct iovec *sg, int nsg, uint64_t off, uint64_t len, struct iovec *out)
{
	int i, n = 0;

	for (i = 0; i < nsg && len; i++) {
		uint64_t take;

		if (off >= sg[i].iov_len) {
			off -= sg[i].iov_len;
			continue;
		}
		take = IW_MIN(len, sg[i].iov_len - off);
		out[n].iov_base = (uint8_t *)sg[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

static void txm_raw(struct rdmap_qp *qp, enum qp_txm_kind kind, int owner)
{
	qp->txm.scattered = false;
	qp->txm.active = true;
	qp->txm.kind = kind;
	qp->txm.raw = true;
	qp->txm.owner = owner;
}

/* Untagged header-only message: DDP header + RDMAP header `body`. */
static void txm_untagged_raw(struct rdmap_qp *qp, enum qp_txm_kind kind, int owner, uint8_t op,
			     uint32_t qn, const uint8_t *body, size_t body_len)
{
	struct ddp_hdr h = {
		.last = true,
		.rsvdulp = rdmap_ctrl_make(op),
		.qn = qn,
		.msn = qp->tx_msn[qn]++,
	};
	ssize_t hl = ddp_hdr_encode(&h, qp->txm.raw_buf, sizeof(qp->txm.raw_buf));

	memcpy(qp->txm.raw_buf + hl, body, body_len);
	qp->txm.raw_len = (size_t)hl + body_len;
	txm_raw(qp, kind, owner);
}

static void tx_start_term(struct rdmap_qp *qp)
{
	uint8_t body[RDMAP_TERM_MAX_LEN];
	ssize_t n = rdmap_term_encode(&qp->term_sent, body, sizeof(body));

	qp->term_pending = false;
	txm_untagged_raw(qp, TXM_TERM, -1, RDMAP_OP_TERMINATE, DDP_QN_TERMINATE, body,
			 n > 0 ? (size_t)n : 0);
}

static void tx_start_rtr(struct rdmap_qp *qp)
{
	ssize_t n = mpa_rtr_encode((enum mpa_rtr)qp->cfg.mpa.rtr, qp->txm.raw_buf,
				   sizeof(qp->txm.raw_buf));

	qp->rtr_pending = false;
	qp->txm.raw_len = n > 0 ? (size_t)n : 0;
	txm_raw(qp, TXM_RTR, -1);
}

/* RFC 7306: the Atomic Response of a performed Atomic Request, on QN 3. */
static void tx_start_aresp(struct rdmap_qp *qp, const struct qp_ird *r)
{
	uint8_t body[RDMAP_ATOMIC_RESP_LEN];

	rdmap_atomic_resp_encode(&r->resp, body);
	/* Kind RRESP: framing it frees the IRD entry, as for a Read Response. */
	txm_untagged_raw(qp, TXM_RRESP, -1, RDMAP_OP_ATOMIC_RESP, DDP_QN_ATOMIC_RESP, body,
			 sizeof(body));
}

static void tx_start_rresp(struct rdmap_qp *qp)
{
	const struct qp_ird *r = &qp->ird[qp->ird_head];
	struct ddp_hdr t = {
		.tagged = true,
		.rsvdulp = rdmap_ctrl_make(RDMAP_OP_READ_RESP),
		.stag = r->rr.sink_stag,
		.to = r->rr.sink_to,
	};

	if (r->atomic) {
		tx_start_aresp(qp, r);
		return;
	}
	qp->txm.sg[0].iov_base = r->src.addr;
	qp->txm.sg[0].iov_len = r->rr.size;
	qp->txm.ref[0] = r->src;
	qp->txm.scattered = ddp_stag_ref_scattered(&r->src);
	qp->txm.nsg = 1;
	ddp_seg_init(&qp->txm.seg, &t, r->rr.size, qp->cfg.mulpdu);
	qp->txm.active = true;
	qp->txm.kind = TXM_RRESP;
	qp->txm.raw = false;
	qp->txm.owner = -1;
}

/* Reads and RFC 7306 atomics: answered by the peer, counted against the ORD. */
static bool wr_is_request(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_READ || op == RDMAP_WR_ATOMIC_FA || op == RDMAP_WR_ATOMIC_CS;
}

static bool sq_may_start(const struct rdmap_qp *qp, const struct qp_sqe *e)
{
	if ((e->wr.flags & RDMAP_WR_FENCE) && qp->rd_wr_count)
		return false;
	if (wr_is_request(e->wr.opcode) && qp->rd_wr_count >= qp->ord_lim)
		return false;
	return true;
}

/* A WR failed its local checks: it completes with `st` and the QP fails. */
static void sq_fail_local(struct rdmap_qp *qp, uint32_t idx, enum rdmap_wc_status st)
{
	qp->sq[idx].st = SQ_DONE;
	qp->sq[idx].status = st;
	qp->sq[idx].err = IW_ERDMAP_LOCAL;
	qp_fail(qp, IW_ERDMAP_LOCAL, NULL, 0, 0, NULL);
}

static void tx_start_read(struct rdmap_qp *qp, uint32_t idx, const struct qp_sqe *e)
{
	struct rdmap_read_req rr = {
		.sink_stag = e->wr.sg[0].lkey,
		.sink_to = e->wr.sg[0].addr,
		.size = e->wr.sg[0].length,
		.src_stag = e->wr.remote_stag,
		.src_to = e->wr.remote_to,
	};
	uint8_t body[RDMAP_READ_REQ_LEN];
	struct qp_rd *rd = &qp->rd[(qp->rd_head + qp->rd_count) % qp->rd_size];

	rdmap_read_req_encode(&rr, body);
	txm_untagged_raw(qp, TXM_SQ, (int)idx, RDMAP_OP_READ_REQ, DDP_QN_READ_REQ, body,
			 sizeof(body));
	/* The slot may have held an Atomic Request: nothing of it may survive. */
	memset(rd, 0, sizeof(*rd));
	rd->sq_idx = idx;
	rd->sink_stag = rr.sink_stag;
	rd->sink_to = rr.sink_to;
	rd->size = rr.size;
	qp->rd_count++;
	qp->rd_wr_count++;
	qp->sq[idx].st = SQ_WAIT_RESP;
}

/*
 * RFC 7306 Atomic Request: one header-only message on QN 1 (sharing the MSNs
 * and the ORD with RDMA Read Requests); the 8-octet result buffer is sg[0],
 * checked again when the Atomic Response arrives.
 */
static void tx_start_atomic(struct rdmap_qp *qp, uint32_t idx, const struct qp_sqe *e)
{
	struct rdmap_atomic_req a = {
		.aop = e->wr.opcode == RDMAP_WR_ATOMIC_FA ? RDMAP_AOP_FETCH_ADD
							  : RDMAP_AOP_CMP_SWAP,
		.req_id = qp->next_req_id++,
		.stag = e->wr.remote_stag,
		.to = e->wr.remote_to,
		.add_swap = e->wr.atomic.add_swap,
		.add_swap_mask = e->wr.atomic.add_swap_mask,
		.compare = e->wr.atomic.compare,
		.compare_mask = e->wr.atomic.compare_mask,
	};
	uint8_t body[RDMAP_ATOMIC_REQ_LEN];
	struct qp_rd *rd = &qp->rd[(qp->rd_head + qp->rd_count) % qp->rd_size];

	rdmap_atomic_req_encode(&a, body);
	txm_untagged_raw(qp, TXM_SQ, (int)idx, RDMAP_OP_ATOMIC_REQ, DDP_QN_READ_REQ, body,
			 sizeof(body));
	memset(rd, 0, sizeof(*rd));
	rd->sq_idx = idx;
	rd->atomic = true;
	rd->req_id = a.req_id;
	rd->sink_stag = e->wr.sg[0].lkey;
	rd->sink_to = e->wr.sg[0].addr;
	rd->size = RDMAP_ATOMIC_LEN;
	qp->rd_count++;
	qp->rd_wr_count++;
	qp->sq[idx].st = SQ_WAIT_RESP;
}

/* The Immediate Data message (RFC 7306) that ends the current message, as raw. */
static void txm_to_imm(struct rdmap_qp *qp)
{
	uint8_t body[RDMAP_IMM_LEN];

	iw_put_be64(body, qp->txm.imm);
	qp->txm.imm_pending = false;
	txm_untagged_raw(qp, TXM_SQ, qp->txm.owner, qp->txm.imm_op, DDP_QN_SEND, body,
			 sizeof(body));
}

static bool wr_is_local(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_LOCAL_INV || op == RDMAP_WR_FAST_REG || op == RDMAP_WR_BIND_MW;
}

/* A local memory operation: done now on the STag table, nothing on the wire. */
static void tx_start_local(struct rdmap_qp *qp, uint32_t idx, const struct qp_sqe *e)
{
	const struct rdmap_send_wr *w = &e->wr;
	enum rdmap_wc_status fail = RDMAP_WC_LOC_QP_OP_ERR;
	int r;

	if (w->opcode == RDMAP_WR_LOCAL_INV) {
		r = ddp_stag_invalidate_stream(qp->cfg.stags, w->invalidate_stag, qp->cfg.pd,
					       qp->cfg.stream, false, NULL);
	} else if (w->opcode == RDMAP_WR_FAST_REG) {
		const struct rdmap_fast_reg *f = &w->fast_reg;
		struct ddp_fast_reg fr = {
			.stag = f->stag,
			.pd = qp->cfg.pd,
			.access = f->access,
			.iova = f->iova,
			.length = f->length,
			.pages = f->pages,
			.npages = f->npages,
			.page_size = f->page_size,
			.first_page_off = f->first_page_off,
		};

		r = ddp_stag_fast_reg(qp->cfg.stags, &fr);
	} else {
		const struct rdmap_bind_mw *b = &w->bind_mw;

		fail = RDMAP_WC_MW_BIND_ERR;
		r = ddp_stag_bind(qp->cfg.stags, b->mw_stag, b->mr_stag, qp->cfg.pd, qp->cfg.stream,
				  b->addr, b->length, b->access, NULL);
	}
	if (r != IW_OK) {
		iw_log(IW_LOG_DEBUG, "rdmap_qp: local memory operation %d failed: %s",
		       (int)w->opcode, ddp_errname(r));
		sq_fail_local(qp, idx, fail);
		return;
	}
	sq_done(qp, idx, RDMAP_WC_SUCCESS, IW_OK, 0);
}

/* The next send WR if it is a local operation that may start (nothing goes on the wire). */
static bool tx_start_local_head(struct rdmap_qp *qp)
{
	uint32_t idx = (qp->sq_head + qp->sq_started) % qp->cfg.sq_depth;
	struct qp_sqe *e = &qp->sq[idx];

	if (qp->sq_started == qp->sq_count || !wr_is_local(e->wr.opcode) || !sq_may_start(qp, e))
		return false;
	qp->sq_started++;
	e->st = SQ_ACTIVE;
	tx_start_local(qp, idx, e);
	return true;
}

static const uint8_t sq_rdmap_op[] = {
	[RDMAP_WR_SEND] = RDMAP_OP_SEND,       [RDMAP_WR_SEND_INV] = RDMAP_OP_SEND_INV,
	[RDMAP_WR_SEND_SE] = RDMAP_OP_SEND_SE, [RDMAP_WR_SEND_SE_INV] = RDMAP_OP_SEND_SE_INV,
	[RDMAP_WR_WRITE] = RDMAP_OP_WRITE,     [RDMAP_WR_READ] = RDMAP_OP_READ_REQ,
	[RDMAP_WR_WRITE_IMM] = RDMAP_OP_WRITE, [RDMAP_WR_SEND_IMM] = RDMAP_OP_SEND,
};

/* Start the next send WR if its ordering rules allow.  False if nothing started. */
static bool tx_start_sq(struct rdmap_qp *qp)
{
	struct qp_sqe *e;
	uint32_t idx;
	uint64_t total;
	uint32_t access;
	struct ddp_hdr t = {0};
	uint8_t op;

	if (qp->sq_started == qp->sq_count)
		return false;
	idx = (qp->sq_head + qp->sq_started) % qp->cfg.sq_depth;
	e = &qp->sq[idx];
	if (!sq_may_start(qp, e))
		return false;
	qp->sq_started++;
	e->st = SQ_ACTIVE;
	if (wr_is_local(e->wr.opcode)) {
		tx_start_local(qp, idx, e);
		return true;
	}

	/* Sources need no right beyond the PD; Read and atomic sinks are written locally. */
	access = wr_is_request(e->wr.opcode) ? DDP_ACCESS_LOCAL_WRITE : 0;
	if (!sge_resolve(qp, e->wr.sg, e->wr.num_sge, access, qp->txm.sg, qp->txm.ref, &total,
			 &qp->txm.scattered)) {
		sq_fail_local(qp, idx, RDMAP_WC_LOC_PROT_ERR);
		return true;
	}
	if (total > qp->cfg.max_msg) {
		sq_fail_local(qp, idx, RDMAP_WC_LOC_LEN_ERR);
		return true;
	}
	if (e->wr.opcode == RDMAP_WR_READ) {
		tx_start_read(qp, idx, e);
		return true;
	}
	if (e->wr.opcode == RDMAP_WR_ATOMIC_FA || e->wr.opcode == RDMAP_WR_ATOMIC_CS) {
		tx_start_atomic(qp, idx, e);
		return true;
	}
	e->byte_len = (uint32_t)total;
	qp->txm.owner = (int)idx;
	qp->txm.imm_pending =
		e->wr.opcode == RDMAP_WR_WRITE_IMM || e->wr.opcode == RDMAP_WR_SEND_IMM;
	qp->txm.imm = e->wr.imm;
	qp->txm.imm_op = (e->wr.flags & RDMAP_WR_SOLICITED) ? RDMAP_OP_IMM_SE : RDMAP_OP_IMM;
	/* Send with Immediate Data and nothing to send: the Immediate Data alone. */
	if (e->wr.opcode == RDMAP_WR_SEND_IMM && total == 0) {
		txm_to_imm(qp);
		return true;
	}
	op = sq_rdmap_op[e->wr.opcode];
	t.rsvdulp = rdmap_ctrl_make(op);
	if (op == RDMAP_OP_WRITE) {
		t.tagged = true;
		t.stag = e->wr.remote_stag;
		t.to = e->wr.remote_to;
	} else {
		t.qn = DDP_QN_SEND;
		t.msn = qp->tx_msn[DDP_QN_SEND]++;
		if (rdmap_opcode_info(op)->inv_stag)
			t.rsvdulp2 = e->wr.invalidate_stag;
	}
	qp->txm.nsg = e->wr.num_sge;
	ddp_seg_init(&qp->txm.seg, &t, (uint32_t)total, qp->cfg.mulpdu);
	qp->txm.active = true;
	qp->txm.kind = TXM_SQ;
	qp->txm.raw = false;
	return true;
}

/* Choose the next message at a message boundary.  False if there is none. */
static bool tx_next_msg(struct rdmap_qp *qp)
{
	if (qp->state == RDMAP_QP_TERMINATE) {
		if (!qp->term_pending)
			return false;
		tx_start_term(qp);
		return true;
	}
	if (!qp_live(qp))
		return false;
	if (qp->rtr_pending) {
		tx_start_rtr(qp);
		return true;
	}
	/* Initiator-sends-first: the responder stays silent until a valid FPDU arrived
	 * (local memory operations send nothing, so they go on). */
	if (!qp->may_send)
		return tx_start_local_head(qp);
	if (qp->ird_count) {
		tx_start_rresp(qp);
		return true;
	}
	return tx_start_sq(qp);
}

/* The buffers of ring slot `s`. */
static struct qp_slot_mem *slot_mem(struct rdmap_qp *qp, const struct qp_slot *s)
{
	return &qp->sl_mem[s - qp->slots];
}

/* The slot's buffer for a whole FPDU in one piece (NULL without memory). */
static uint8_t *slot_lin(struct rdmap_qp *qp, struct qp_slot *s)
{
	uint8_t **lin = &slot_mem(qp, s)->lin;

	if (!*lin)
		*lin = iw_malloc(MPA_FPDU_WIRE_MAX);
	return *lin;
}

/*
 * With Markers every 512 octets a large FPDU is some 260 iovecs, which costs the
 * kernel more per octet than one copy does, and the CRC more in calls: such an
 * FPDU is framed straight into a private linear copy (mpa_tx_frame_linear(), the
 * CRC run once over it) when its segment holds at least QP_LIN_MARKED octets.
 * Any other FPDU of more than QP_LIN_IOV pieces (many SGEs) is copied after
 * framing (tx_linearize()).  The copy no longer refers to caller memory, so
 * tx_protect() skips it.
 */
#define QP_LIN_MARKED 4096

static int tx_frame_fpdu(struct rdmap_qp *qp, struct qp_slot *s, const struct iovec *iov, int n)
{
	size_t ulen = 0;
	uint8_t *lin;

	for (int i = 0; i < n; i++)
		ulen += iov[i].iov_len;
	if (!qp->tx.markers || ulen < QP_LIN_MARKED)
		return mpa_tx_frame(&qp->tx, iov, n, &s->f);
	if (!(lin = slot_lin(qp, s)))
		return IW_ENOMEM;
	return mpa_tx_frame_linear(&qp->tx, iov, n, &s->f, lin);
}

static int tx_linearize(struct rdmap_qp *qp, struct qp_slot *s)
{
	struct mpa_fpdu *f = &s->f;
	uint8_t *lin;
	size_t used = 0;

	if (f->iovcnt <= QP_LIN_IOV)
		return IW_OK;
	if (!(lin = slot_lin(qp, s)))
		return IW_ENOMEM;
	for (int k = f->first; k < f->first + f->iovcnt; k++) {
		memcpy(lin + used, f->iov[k].iov_base, f->iov[k].iov_len);
		used += f->iov[k].iov_len;
	}
	f->iov[f->first].iov_base = lin;
	f->iov[f->first].iov_len = used;
	f->iovcnt = 1;
	return IW_OK;
}

/* Frame the next segment of the current message into a free slot. */
static void tx_frame_one(struct rdmap_qp *qp)
{
	struct qp_txmsg *m = &qp->txm;
	struct qp_slot *s = &qp->slots[(qp->sl_head + qp->sl_count) % QP_SLOTS];
	struct iovec iov[1 + RDMAP_MAX_SGE];
	int n = 1;

	s->start_pos = qp->tx.pos;
	s->owner = m->owner;
	s->term = m->kind == TXM_TERM;
	if (m->raw) {
		memcpy(s->hdr, m->raw_buf, m->raw_len);
		iov[0].iov_base = s->hdr;
		iov[0].iov_len = m->raw_len;
		s->last = true;
	} else {
		struct ddp_hdr h;
		uint32_t off, len;
		ssize_t hl;

		if (!ddp_seg_next(&m->seg, &h, &off, &len)) {
			m->active = false;
			return;
		}
		hl = ddp_hdr_encode(&h, s->hdr, sizeof(s->hdr));
		iov[0].iov_base = s->hdr;
		iov[0].iov_len = hl > 0 ? (size_t)hl : 0;
		if (!m->scattered) {
			n += sg_slice(m->sg, m->nsg, off, len, iov + 1);
		} else if (len) {
			/* Scattered source: this segment's payload is gathered into the slot. */
			uint8_t **bounce = &slot_mem(qp, s)->bounce;

			if (!*bounce && !(*bounce = iw_malloc(MPA_ULPDU_MAX))) {
				qp_fail(qp, IW_ERDMAP_LOCAL, NULL, 0, 0, NULL);
				return;
			}
			tx_gather(m, off, len, *bounce);
			iov[1].iov_base = *bounce;
			iov[1].iov_len = len;
			n = 2;
		}
		s->last = h.last;
		/* RFC 7306: the Immediate Data message follows at once, and only its
		 * framing ends the work request. */
		if (h.last && m->imm_pending) {
			s->last = false;
			txm_to_imm(qp);
		}
	}
	if (s->last) {
		m->active = false;
		if (m->kind == TXM_RRESP) {
			/* Fully answered: the IRD slot is free again. */
			if (qp->ird[qp->ird_head].rtr)
				qp->ird_rtr = false;
			qp->ird_head = (qp->ird_head + 1) % qp->ird_size;
			qp->ird_count--;
		}
	}
	if (tx_frame_fpdu(qp, s, iov, n) != IW_OK || tx_linearize(qp, s) != IW_OK) {
		qp_fail(qp, IW_ERDMAP_LOCAL, NULL, 0, 0, NULL);
		return;
	}
	qp->sl_count++;
}

static void tx_fill(struct rdmap_qp *qp)
{
	/* Bounded: every pass frames a segment or ends a message, and messages are finite. */
	while (qp->sl_count < QP_SLOTS) {
		if (!qp->txm.active && !tx_next_msg(qp))
			break;
		if (qp->txm.active)
			tx_frame_one(qp);
	}
}

int rdmap_qp_tx_iov(struct rdmap_qp *qp, struct iovec *iov, int max, size_t *bytes)
{
	uint32_t i;
	int n = 0;
	size_t total = 0;

	if (bytes)
		*bytes = 0;
	if (!qp || !iov || max <= 0)
		return 0;
	tx_fill(qp);
	for (i = 0; i < qp->sl_count && n < max; i++) {
		const struct mpa_fpdu *f = &qp->slots[(qp->sl_head + i) % QP_SLOTS].f;
		int k;

		for (k = 0; k < f->iovcnt && n < max; k++) {
			const struct iovec *v = &f->iov[f->first + k];

			if (!v->iov_len)
				continue;
			iov[n++] = *v;
			total += v->iov_len;
		}
	}
	if (bytes)
		*bytes = total;
	return n;
}

static void tx_retire(struct rdmap_qp *qp, struct qp_slot *s)
{
	if (s->term) {
		/* Our Terminate is out: nothing more may be sent on this stream. */
		qp->state = RDMAP_QP_ERROR;
		return;
	}
	if (s->owner >= 0 && s->last && qp->sq[s->owner].st == SQ_ACTIVE)
		sq_done(qp, (uint32_t)s->owner, RDMAP_WC_SUCCESS, IW_OK, qp->sq[s->owner].byte_len);
}

void rdmap_qp_tx_advance(struct rdmap_qp *qp, size_t n)
{
	while (qp && n && qp->sl_count) {
		struct qp_slot *s = &qp->slots[qp->sl_head];
		size_t k = IW_MIN(n, s->f.len);

		mpa_fpdu_advance(&s->f, k);
		n -= k;
		if (s->f.len)
			break;
		qp->sl_head = (qp->sl_head + 1) % QP_SLOTS;
		if (!--qp->sl_count)
			qp->sl_head = 0; /* empty: start again at the first slot */
		tx_retire(qp, s);
		if (qp->state == RDMAP_QP_ERROR)
			qp->sl_count = 0;
	}
}

/* ---------------------------------------------------------------------- */
/* Receive: header checks                                                   */
/* ---------------------------------------------------------------------- */

/* Fail on the current segment, copying its DDP header (and Read Request
 * header) when `copy`. */
static int rx_report(struct rdmap_qp *qp, int err, bool copy, bool with_rreq)
{
	struct qp_rxseg *s = &qp->seg;
	const uint8_t *rreq = NULL;

	if (!copy) {
		qp_fail(qp, err, NULL, 0, 0, NULL);
		return err;
	}
	if (with_rreq && s->gathered >= DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)
		rreq = s->hdr + DDP_UNTAGGED_HDR_LEN;
	qp_fail(qp, err, s->ddp_len ? s->hdr : NULL, s->ddp_len, s->ulpdu_len, rreq);
	return err;
}

/*
 * An error of the current segment.  Found while its header is judged and the
 * FPDU's CRC is on, it waits for the end of the FPDU: RFC 5044 Appendix A
 * has the receiver check the CRC before it trusts the header's placement
 * information, and a segment damaged in transit (or framed by a wrong
 * ULPDU_Length) is a CRC error, MPA error 2 (§8), not the DDP or RDMAP error
 * its spoilt header would suggest.  The rest of the ULPDU is discarded
 * (RX_DISCARD); rx_on_done reports the error when the CRC matched, and when
 * it did not, MPA's CRC error is reported instead (rdmap_qp_read_stream).
 */
static int rx_fail_as(struct rdmap_qp *qp, int err, bool copy, bool with_rreq)
{
	struct qp_rxseg *s = &qp->seg;

	if (!qp->rx_in_hdr || !qp->cfg.mpa.crc)
		return rx_report(qp, err, copy, with_rreq);
	s->kind = RX_DISCARD;
	s->defer_err = err;
	s->defer_copy = copy;
	s->defer_rreq = with_rreq;
	return IW_OK;
}

static int rx_fail(struct rdmap_qp *qp, int err, bool with_rreq)
{
	return rx_fail_as(qp, err, true, with_rreq);
}

/* Header octets to gather for a ULPDU whose first `have` octets are in hdr. */
static size_t rx_hdr_want(const struct rdmap_qp *qp, const uint8_t *hdr, size_t have,
			  size_t ulpdu_len)
{
	size_t want;

	/* A p2p responder's first ULPDU is classified whole when it is RTR-sized. */
	if (qp->rtr_expected && ulpdu_len <= MPA_RTR_READ_LEN)
		return ulpdu_len;
	if (have < 2)
		return have;
	want = ddp_hdr_len(hdr[0] & DDP_CTRL_T);
	if (!(hdr[0] & DDP_CTRL_T)) {
		uint8_t op = rdmap_ctrl_opcode(hdr[1]);

		/* A Terminate's header copies are optional: gather as many as fit. */
		if (op == RDMAP_OP_TERMINATE)
			want += RDMAP_TERM_MAX_LEN;
		else
			want += rdmap_opcode_info(op)->rdmap_hdr_len;
	}
	return IW_MIN(want, ulpdu_len);
}

static int rx_check_write(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	enum ddp_stag_check why;
	int r;

	s->kind = RX_WRITE;
	if (s->payload_len == 0)
		return IW_OK; /* zero-length Write: nothing to check (RFC 5041 §5.2) */
	r = ddp_tagged_resolve(qp->cfg.stags, &s->h, qp->cfg.pd, qp->cfg.stream,
			       DDP_ACCESS_REMOTE_WRITE, s->payload_len, &s->ref, &why);
	if (r != IW_OK)
		return rx_fail(qp, why == DDP_STAG_ACCESS ? IW_ERDMAP_ACCESS : r, false);
	s->dst = s->ref.addr;
	return IW_OK;
}

static int rx_check_rresp(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	const struct qp_rd *rd;
	enum ddp_stag_check why;
	uint64_t rel;
	int r;

	s->kind = RX_RRESP;
	if (!qp->rd_count || qp->rd[qp->rd_head].atomic)
		return rx_fail(qp, IW_ERDMAP_OPCODE, false);
	rd = &qp->rd[qp->rd_head];
	if (s->h.stag != rd->sink_stag)
		return rx_fail(qp, IW_EDDP_T_INVALID_STAG, false);
	rel = s->h.to - rd->sink_to;
	if (s->h.to < rd->sink_to || rel > rd->size || s->payload_len > rd->size - rel)
		return rx_fail(qp, IW_EDDP_T_BOUNDS, false);
	if (s->payload_len == 0)
		return IW_OK;
	/* Our own sink: resolved like a local SGE, without a stream. */
	r = ddp_tagged_resolve(qp->cfg.stags, &s->h, qp->cfg.pd, 0, DDP_ACCESS_LOCAL_WRITE,
			       s->payload_len, &s->ref, &why);
	if (r != IW_OK)
		return rx_fail(qp, why == DDP_STAG_ACCESS ? IW_ERDMAP_ACCESS : r, false);
	s->dst = s->ref.addr;
	return IW_OK;
}

static int64_t rqe_len(const struct qp_rqe *r)
{
	int64_t n = 0;
	int i;

	for (i = 0; i < r->wr.num_sge; i++)
		n += r->wr.sg[i].length;
	return n;
}

static bool cq_room(const struct rdmap_qp *qp);

/*
 * The receive that the untagged QN 0 message of header `h` lands in (NULL:
 * none).  The QP's own receive queue, or with an SRQ the one receive taken
 * from it: the next one is taken when a new message starts (its first
 * segment carries the expected MSN and MO 0, RFC 5041 §5.3) and the
 * completion ring has room for it (cq_room); otherwise there is no buffer
 * (RFC 5041 §7.2: the "no buffer" Terminate, as an empty receive queue).
 */
static struct qp_rqe *rq_current(struct rdmap_qp *qp, const struct ddp_hdr *h)
{
	struct qp_rqe *r;

	if (qp->rq_count)
		return &qp->rq[qp->rq_head];
	if (!qp->cfg.srq || h->msn != qp->rxq[DDP_QN_SEND].msn || h->mo != 0 || !cq_room(qp))
		return NULL;
	r = &qp->rq[qp->rq_head];
	memset(r, 0, sizeof(*r));
	if (!rdmap_srq_take(qp->cfg.srq, &r->wr))
		return NULL;
	qp->rq_count = 1;
	return r;
}

/* rx_check_send/_imm -> rx_on_header: the message waits for a receive. */
#define RX_HELD 1

/*
 * cfg.rnr_hold: the first segment of a new QN 0 message found no receive;
 * hold the receive side (RX_HELD up to rx_on_header, which says 0 to MPA)
 * unless the wait was given up (rdmap_qp_rx_hold_expire()).
 */
static bool rx_hold(struct rdmap_qp *qp, const struct qp_rxseg *s, const struct qp_rqe *r)
{
	if (r || !qp->cfg.rnr_hold || qp->hold_expired || s->h.mo != 0 ||
	    s->h.msn != qp->rxq[DDP_QN_SEND].msn || s->h.qn != DDP_QN_SEND)
		return false;
	qp->rx_held = true;
	return true;
}

static int rx_check_send(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	struct qp_rqe *r = rq_current(qp, &s->h);
	struct iovec iov[RDMAP_MAX_SGE];
	uint64_t total;
	int err, i;

	if (rx_hold(qp, s, r))
		return RX_HELD;
	s->kind = RX_SEND;
	err = ddp_untagged_check(&qp->rxq[DDP_QN_SEND], &s->h, qp->nqueues, r ? rqe_len(r) : -1,
				 s->payload_len);
	if (err != IW_OK)
		return rx_fail(qp, err, false);
	if (r->resolved)
		return IW_OK;
	if (!sge_resolve(qp, r->wr.sg, r->wr.num_sge, DDP_ACCESS_LOCAL_WRITE, iov, r->ref, &total,
			 NULL)) {
		/* Our own receive buffer is bad: a local error, the WR completes LOC_PROT_ERR. */
		r->failed = true;
		qp_fail(qp, IW_ERDMAP_LOCAL, NULL, 0, 0, NULL);
		return IW_ERDMAP_LOCAL;
	}
	for (i = 0; i < r->wr.num_sge; i++)
		r->dst[i] = iov[i].iov_base;
	r->resolved = true;
	return IW_OK;
}

/* A failed check of a peer's STag reference as the RDMAP error (RFC 5040 §7.2). */
static int stag_check_err(enum ddp_stag_check c)
{
	switch (c) {
	case DDP_STAG_PD:
	case DDP_STAG_STREAM:
		return IW_ERDMAP_STREAM;
	case DDP_STAG_ACCESS:
		return IW_ERDMAP_ACCESS;
	case DDP_STAG_BOUNDS:
		return IW_ERDMAP_BOUNDS;
	case DDP_STAG_WRAP:
		return IW_ERDMAP_TO_WRAP;
	case DDP_STAG_INVALID:
	default:
		return IW_ERDMAP_INVALID_STAG;
	}
}

/*
 * A Read Request lands in one of RDMAP's own QN 1 buffers (RFC 5040 §5.2,
 * §6.1): there are IRD of them, each exactly one 28-octet header, freed when
 * the Request has been fully answered.
 */
static int rx_check_rreq(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	/* The initiator does not count its Read RTR against its ORD (it is not
	 * an application Read), so neither do we: it sits in the ring's spare
	 * slot until its zero-length Read Response is out. */
	uint32_t used = qp->ird_count - (qp->ird_rtr ? 1u : 0u);
	int64_t buf = used < qp->ird_lim ? RDMAP_READ_REQ_LEN : -1;
	enum ddp_stag_check c;
	int err;

	s->kind = RX_RREQ;
	err = ddp_untagged_check(&qp->rxq[DDP_QN_READ_REQ], &s->h, qp->nqueues, buf,
				 s->payload_len + (uint32_t)(s->gathered - s->ddp_len));
	if (err == IW_OK && (!s->h.last || s->h.mo != 0))
		err = IW_EDDP_U_MO;
	if (err != IW_OK)
		return rx_fail(qp, err, true);
	if (s->gathered < DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)
		return rx_fail(qp, IW_ERDMAP_OP_UNSPEC, false);
	rdmap_read_req_decode(s->hdr + DDP_UNTAGGED_HDR_LEN, &s->rr);
	if (s->rr.size == 0)
		return IW_OK; /* zero-length Read: the source is not checked (RFC 5040 §5.2) */
	c = ddp_stag_resolve(qp->cfg.stags, s->rr.src_stag, qp->cfg.pd, qp->cfg.stream,
			     DDP_ACCESS_REMOTE_READ, s->rr.src_to, s->rr.size, &s->src);
	if (c != DDP_STAG_OK)
		return rx_fail(qp, stag_check_err(c), true);
	return IW_OK;
}

/* The host address of the 8-octet word a resolved reference starts with, or
 * NULL when a page-list registration splits it across two pages. */
static uint64_t *ref_word(const struct ddp_stag_ref *ref)
{
	struct iovec v;
	uint64_t covered = 0;

	if (!ddp_stag_ref_scattered(ref))
		return (uint64_t *)(void *)ref->addr;
	if (ddp_stag_ref_spans(ref, 0, RDMAP_ATOMIC_LEN, &v, 1, &covered) != 1 ||
	    covered != RDMAP_ATOMIC_LEN)
		return NULL;
	return v.iov_base;
}

/*
 * RFC 7306 Atomic Request: like a Read Request it takes one of the IRD
 * buffers of QN 1 until its Response is out.  The target (8 octets, 8-octet
 * aligned) must allow remote atomics; the operation itself is performed at
 * fpdu_done, once the CRC matched.
 */
static int rx_check_areq(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	uint32_t used = qp->ird_count - (qp->ird_rtr ? 1u : 0u);
	int64_t buf = used < qp->ird_lim ? RDMAP_ATOMIC_REQ_LEN : -1;
	enum ddp_stag_check c;
	struct ddp_stag_ref ref;
	uint64_t *dst;
	int err;

	s->kind = RX_AREQ;
	err = ddp_untagged_check(&qp->rxq[DDP_QN_READ_REQ], &s->h, qp->nqueues, buf,
				 s->payload_len + (uint32_t)(s->gathered - s->ddp_len));
	if (err == IW_OK && (!s->h.last || s->h.mo != 0))
		err = IW_EDDP_U_MO;
	if (err != IW_OK)
		return rx_fail(qp, err, false);
	if (s->gathered < DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN)
		return rx_fail(qp, IW_ERDMAP_OP_UNSPEC, false);
	rdmap_atomic_req_decode(s->hdr + DDP_UNTAGGED_HDR_LEN, &s->areq);
	if (s->areq.aop != RDMAP_AOP_FETCH_ADD && s->areq.aop != RDMAP_AOP_CMP_SWAP)
		return rx_fail(qp, IW_ERDMAP_OP_UNSPEC, false);
	/* With this QP's stream: a type-2 window bound to it may be the target. */
	c = ddp_stag_resolve(qp->cfg.stags, s->areq.stag, qp->cfg.pd, qp->cfg.stream,
			     DDP_ACCESS_REMOTE_ATOMIC, s->areq.to, RDMAP_ATOMIC_LEN, &ref);
	if (c != DDP_STAG_OK)
		return rx_fail(qp, stag_check_err(c), false);
	dst = ref_word(&ref);
	/* An unaligned target cannot be updated as one word (RFC 7306: 8-octet aligned). */
	if (!dst || (s->areq.to & (RDMAP_ATOMIC_LEN - 1)) ||
	    ((uintptr_t)dst & (RDMAP_ATOMIC_LEN - 1)))
		return rx_fail(qp, IW_ERDMAP_CATASTROPHIC_STREAM, false);
	s->atarget = dst;
	return IW_OK;
}

/*
 * RFC 7306 Atomic Response on QN 3: it must answer the oldest of our
 * outstanding requests, and that one must be an Atomic Request with the same
 * Request Identifier (Read and Atomic Responses come back in request order).
 */
static int rx_check_aresp(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	const struct qp_rd *rd = qp->rd_count ? &qp->rd[qp->rd_head] : NULL;
	struct ddp_stag_ref ref;
	uint64_t *dst = NULL;
	int err;

	s->kind = RX_ARESP;
	if (!rd || !rd->atomic)
		return rx_fail(qp, IW_ERDMAP_OPCODE, false);
	err = ddp_untagged_check(&qp->rxq[DDP_QN_ATOMIC_RESP], &s->h, qp->nqueues,
				 RDMAP_ATOMIC_RESP_LEN,
				 s->payload_len + (uint32_t)(s->gathered - s->ddp_len));
	if (err == IW_OK && (!s->h.last || s->h.mo != 0))
		err = IW_EDDP_U_MO;
	if (err != IW_OK)
		return rx_fail(qp, err, false);
	if (s->gathered < DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_RESP_LEN)
		return rx_fail(qp, IW_ERDMAP_OP_UNSPEC, false);
	rdmap_atomic_resp_decode(s->hdr + DDP_UNTAGGED_HDR_LEN, &s->aresp);
	if (s->aresp.req_id != rd->req_id)
		return rx_fail(qp, IW_ERDMAP_OP_UNSPEC, false);
	/* Our own result buffer went bad meanwhile: a local error, as for a receive. */
	if (ddp_stag_resolve(qp->cfg.stags, rd->sink_stag, qp->cfg.pd, 0, DDP_ACCESS_LOCAL_WRITE,
			     rd->sink_to, RDMAP_ATOMIC_LEN, &ref) != DDP_STAG_OK ||
	    !(dst = ref_word(&ref))) {
		sq_fail_local(qp, rd->sq_idx, RDMAP_WC_LOC_PROT_ERR);
		return IW_ERDMAP_LOCAL;
	}
	s->atarget = dst;
	return IW_OK;
}

/*
 * RFC 7306 Immediate Data: its 8 octets are RDMAP header; like a Send it
 * consumes the next posted receive of QN 0 (whose buffer stays untouched:
 * the data is reported in the completion).  Exactly one segment, no payload.
 */
static int rx_check_imm(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	struct qp_rqe *r = rq_current(qp, &s->h);
	int err;

	if (rx_hold(qp, s, r))
		return RX_HELD;
	s->kind = RX_IMM;
	err = ddp_untagged_check(&qp->rxq[DDP_QN_SEND], &s->h, qp->nqueues, r ? rqe_len(r) : -1, 0);
	if (err == IW_OK && (!s->h.last || s->h.mo != 0))
		err = IW_EDDP_U_MO;
	if (err != IW_OK)
		return rx_fail(qp, err, false);
	if (s->gathered != DDP_UNTAGGED_HDR_LEN + RDMAP_IMM_LEN || s->payload_len != 0)
		return rx_fail(qp, IW_ERDMAP_OP_UNSPEC, false);
	return IW_OK;
}

static int rx_check_term(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	bool siw;
	ssize_t r = rdmap_term_read(s->hdr + s->ddp_len, s->gathered - s->ddp_len,
				    s->ulpdu_len - s->ddp_len, &s->term, &siw);

	s->kind = RX_TERM;
	/* Honour it anyway: the stream is over.  Linux siw writes the control
	 * word in its own layout (rdmap.h, rdmap_term_read): report the reading
	 * that names a defined error, and say so. */
	if (siw)
		iw_log(IW_LOG_WARN,
		       "rdmap_qp: Terminate in Linux siw's layout (Layer/EType nibbles swapped, "
		       "M/D/R in the low bits), read as layer %u etype %u code 0x%02x",
		       s->term.code.layer, s->term.code.etype, s->term.code.ecode);
	else if (r < 0 || !rdmap_term_code_defined(&s->term.code))
		iw_log(IW_LOG_WARN, "rdmap_qp: malformed Terminate (%s): layer %u etype %u code %u",
		       r < 0 ? rdmap_errname((int)r) : "undefined code", s->term.code.layer,
		       s->term.code.etype, s->term.code.ecode);
	return IW_OK;
}

/* RFC 6581 §9.3: the p2p responder's first FPDU must be the negotiated RTR. */
static int rx_check_rtr(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	enum mpa_rtr form = MPA_RTR_NONE;

	if (s->gathered == s->ulpdu_len)
		form = mpa_rtr_classify(s->hdr, s->ulpdu_len);
	if (form == MPA_RTR_NONE || form != qp->cfg.mpa.rtr)
		return rx_fail_as(qp, IW_EMPA_RTR, false, false);
	s->kind = RX_RTR;
	s->rtr = form;
	if (form == MPA_RTR_READ)
		rdmap_read_req_decode(s->hdr + DDP_UNTAGGED_HDR_LEN, &s->rr);
	return IW_OK;
}

/* Whole header gathered: validate it in the order of the error plan. */
static int rx_header_done(struct rdmap_qp *qp, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct qp_rxseg *s = &qp->seg;
	const struct rdmap_opcode_info *info;
	ssize_t r;

	memset(s, 0, sizeof(*s));
	memcpy(s->hdr, hdr, have);
	s->gathered = have;
	s->ulpdu_len = ulpdu_len;
	s->payload_len = (uint32_t)(ulpdu_len - have);
	if (qp->rtr_expected)
		return rx_check_rtr(qp, s);
	if (have < 1 || ulpdu_len < ddp_hdr_len(hdr[0] & DDP_CTRL_T))
		return rx_fail(qp, IW_EDDP_SHORT, false);
	r = ddp_hdr_decode(hdr, have, &s->h);
	s->ddp_len = ddp_hdr_len(hdr[0] & DDP_CTRL_T);
	if (r < 0)
		return rx_fail(qp, r == IW_EAGAIN ? IW_EDDP_SHORT : (int)r, false);
	if (rdmap_ctrl_rv(s->h.rsvdulp) != RDMAP_VERSION)
		return rx_fail(qp, IW_ERDMAP_VERSION, false);
	s->opcode = rdmap_ctrl_opcode(s->h.rsvdulp);
	info = rdmap_opcode_info(s->opcode);
	/* RFC 7306 opcodes on a QP without the extension are unexpected opcodes too. */
	if (!info->supported || (info->rfc7306 && !qp->cfg.rfc7306))
		return rx_fail(qp, IW_ERDMAP_OPCODE, false);
	if (s->h.tagged != info->tagged || (!s->h.tagged && s->h.qn != info->qn))
		return rx_fail(qp,
			       !s->h.tagged && s->h.qn >= qp->nqueues ? IW_EDDP_U_QN
								      : IW_ERDMAP_OPCODE,
			       false);
	switch (s->opcode) {
	case RDMAP_OP_WRITE:
		return rx_check_write(qp, s);
	case RDMAP_OP_READ_RESP:
		return rx_check_rresp(qp, s);
	case RDMAP_OP_READ_REQ:
		return rx_check_rreq(qp, s);
	case RDMAP_OP_TERMINATE:
		return rx_check_term(qp, s);
	case RDMAP_OP_IMM:
	case RDMAP_OP_IMM_SE:
		return rx_check_imm(qp, s);
	case RDMAP_OP_ATOMIC_REQ:
		return rx_check_areq(qp, s);
	case RDMAP_OP_ATOMIC_RESP:
		return rx_check_aresp(qp, s);
	default:
		return rx_check_send(qp, s);
	}
}

static int rx_on_header(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct rdmap_qp *qp = user;
	size_t want = rx_hdr_want(qp, hdr, have, ulpdu_len);
	int r;

	if (!qp_live(qp))
		return qp->error;
	if (want > have)
		return (int)want;
	qp->rx_held = false;
	if (ulpdu_len >= (size_t)qp->cfg.rx_direct_min * QP_RX_BIG_FACTOR)
		qp->rx_big_left = QP_RX_BIG_KEEP;
	else if (qp->rx_big_left)
		qp->rx_big_left--;
	qp->rx_in_hdr = true;
	r = rx_header_done(qp, hdr, have, ulpdu_len);
	qp->rx_in_hdr = false;
	if (r == RX_HELD)
		return 0; /* MPA offers this header again on the next read_stream */
	qp->hold_expired = false;
	return r < 0 ? r : (int)have;
}

/* ---------------------------------------------------------------------- */
/* Receive: placement and delivery                                          */
/* ---------------------------------------------------------------------- */

static bool slot_owns(const struct qp_slot *s, const void *p)
{
	return (const uint8_t *)p >= (const uint8_t *)s &&
	       (const uint8_t *)p < (const uint8_t *)(s + 1);
}

/*
 * About to write [dst, dst + n): copy the unsent caller-memory payload of every
 * queued FPDU that overlaps it into that slot's bounce buffer and point the
 * FPDU there (see the theory of operation).  IW_ENOMEM if a bounce buffer
 * cannot be had.
 */
static int tx_protect(struct rdmap_qp *qp, const uint8_t *dst, size_t n)
{
	for (uint32_t i = 0; i < qp->sl_count; i++) {
		struct qp_slot *s = &qp->slots[(qp->sl_head + i) % QP_SLOTS];
		struct mpa_fpdu *f = &s->f;
		uint8_t **bounce = &slot_mem(qp, s)->bounce;
		bool hit = false;
		size_t used = 0;

		for (int k = f->first; k < f->first + f->iovcnt; k++) {
			const uint8_t *b = f->iov[k].iov_base;

			if (!slot_owns(s, b) && b < dst + n && dst < b + f->iov[k].iov_len)
				hit = true;
		}
		if (!hit)
			continue;
		if (!*bounce && !(*bounce = iw_malloc(MPA_ULPDU_MAX)))
			return IW_ENOMEM;
		for (int k = f->first; k < f->first + f->iovcnt; k++) {
			struct iovec *v = &f->iov[k];

			if (slot_owns(s, v->iov_base))
				continue;
			memmove(*bounce + used, v->iov_base, v->iov_len);
			v->iov_base = *bounce + used;
			used += v->iov_len;
		}
	}
	return IW_OK;
}

/* Place n octets at [off, off + n) of a scattered target, span by span, each protected. */
static int place_ref(struct rdmap_qp *qp, const struct ddp_stag_ref *ref, uint64_t off,
		     const uint8_t *p, size_t n)
{
	while (n) {
		struct iovec v[8];
		uint64_t covered = 0;
		int k = ddp_stag_ref_spans(ref, off, n, v, (int)IW_ARRAY_SIZE(v), &covered);

		for (int i = 0; i < k; i++) {
			if (qp->sl_count && tx_protect(qp, v[i].iov_base, v[i].iov_len) != IW_OK)
				return IW_ENOMEM;
			memcpy(v[i].iov_base, p, v[i].iov_len);
			p += v[i].iov_len;
		}
		if (covered == 0)
			break; /* cannot happen for a checked range; never loop forever */
		off += covered;
		n -= (size_t)covered;
	}
	return IW_OK;
}

static int rx_scatter(struct rdmap_qp *qp, struct qp_rqe *r, uint64_t pos, const uint8_t *p,
		      size_t n)
{
	int i;

	for (i = 0; i < r->wr.num_sge && n; i++) {
		uint64_t len = r->wr.sg[i].length;
		size_t take;

		if (pos >= len) {
			pos -= len;
			continue;
		}
		take = (size_t)IW_MIN((uint64_t)n, len - pos);
		if (ddp_stag_ref_scattered(&r->ref[i])) {
			if (place_ref(qp, &r->ref[i], pos, p, take) != IW_OK)
				return IW_ENOMEM;
		} else {
			memcpy(r->dst[i] + pos, p, take);
		}
		p += take;
		n -= take;
		pos = 0;
	}
	return IW_OK;
}

/* A receive buffer is about to be written: protect all of its contiguous SGEs
 * (place_ref protects the scattered ones span by span). */
static int rx_protect_rqe(struct rdmap_qp *qp, const struct qp_rqe *r)
{
	for (int i = 0; i < r->wr.num_sge; i++) {
		int rc;

		if (!r->dst[i])
			continue;
		rc = tx_protect(qp, r->dst[i], r->wr.sg[i].length);

		if (rc != IW_OK)
			return rc;
	}
	return IW_OK;
}

static int rx_on_payload(void *user, size_t off, const uint8_t *p, size_t n)
{
	struct rdmap_qp *qp = user;
	struct qp_rxseg *s = &qp->seg;
	size_t poff = off - s->gathered;

	if (!qp_live(qp))
		return qp->error;
	/* Every target below was checked against payload_len before the payload arrived. */
	switch (s->kind) {
	case RX_WRITE:
	case RX_RRESP:
		if (ddp_stag_ref_scattered(&s->ref)) {
			if (place_ref(qp, &s->ref, poff, p, n) != IW_OK)
				return IW_ERDMAP_LOCAL;
			break;
		}
		if (!s->dst)
			break;
		if (qp->sl_count && tx_protect(qp, s->dst + poff, n) != IW_OK)
			return IW_ERDMAP_LOCAL;
		memcpy(s->dst + poff, p, n);
		break;
	case RX_SEND:
		if (qp->sl_count && rx_protect_rqe(qp, &qp->rq[qp->rq_head]) != IW_OK)
			return IW_ERDMAP_LOCAL;
		if (rx_scatter(qp, &qp->rq[qp->rq_head], (uint64_t)s->h.mo + poff, p, n) != IW_OK)
			return IW_ERDMAP_LOCAL;
		break;
	default:
		break; /* a Terminate's excess octets are ignored */
	}
	return IW_OK;
}

/*
 * Receiving into place.  The payload of a segment is placed where
 * rx_on_payload would put it, but by the caller's recv() itself; that saves a
 * copy of every payload octet through the receive buffer (and that buffer's
 * share of the cache).  Worth a read of its own only for a long span, so
 * only while large segments arrive do reads stop right after each header
 * (QP_RX_BIG_FACTOR).
 */
/* Where a Send's payload octet at message offset pos goes, when the SGE holding
 * it is contiguous; *room is cut to what that SGE still holds. */
static uint8_t *rx_send_span(struct rdmap_qp *qp, uint64_t pos, size_t *room)
{
	const struct qp_rqe *r = &qp->rq[qp->rq_head];

	for (int i = 0; i < r->wr.num_sge; i++) {
		uint64_t len = r->wr.sg[i].length;

		if (pos >= len) {
			pos -= len;
			continue;
		}
		if (ddp_stag_ref_scattered(&r->ref[i]) || !r->dst[i])
			return NULL;
		*room = (size_t)IW_MIN((uint64_t)*room, len - pos);
		return r->dst[i] + pos;
	}
	return NULL;
}

/* The target of the next payload octets and how many go there, or NULL. */
static uint8_t *rx_direct_dst(struct rdmap_qp *qp, size_t *room)
{
	struct qp_rxseg *s = &qp->seg;
	size_t poff;

	*room = mpa_rx_payload_room(&qp->rx);
	if (!*room || !qp_live(qp) || qp->rx_held)
		return NULL;
	poff = qp->rx.done - s->gathered;
	switch (s->kind) {
	case RX_WRITE:
	case RX_RRESP:
		/* dst is NULL for a scattered target (placed span by span) */
		return s->dst ? s->dst + poff : NULL;
	case RX_SEND:
		return rx_send_span(qp, (uint64_t)s->h.mo + poff, room);
	default:
		return NULL;
	}
}

uint8_t *rdmap_qp_rx_target(struct rdmap_qp *qp, size_t *len)
{
	uint8_t *dst;
	size_t room;

	if (!len)
		return NULL;
	*len = 0;
	if (!qp)
		return NULL;
	dst = rx_direct_dst(qp, &room);
	if (dst && room >= qp->cfg.rx_direct_min &&
	    (!qp->sl_count || tx_protect(qp, dst, room) == IW_OK)) {
		*len = room;
		return dst;
	}
	if (qp->rx_big_left && !qp->rx.cfg.markers && qp_live(qp))
		*len = mpa_rx_fpdu_left(&qp->rx) + QP_RX_LOOKAHEAD;
	return NULL;
}

int rdmap_qp_rx_placed(struct rdmap_qp *qp, size_t n)
{
	uint8_t *dst;
	size_t room;

	if (!qp)
		return IW_EINVAL;
	if (!qp_live(qp))
		return qp->error ? qp->error : IW_ESTATE;
	if (n == 0)
		return IW_OK;
	dst = rx_direct_dst(qp, &room);
	if (!dst || n > room)
		return IW_EINVAL;
	return mpa_rx_payload_placed(&qp->rx, dst, n);
}

static void ird_push(struct rdmap_qp *qp, const struct rdmap_read_req *rr,
		     const struct ddp_stag_ref *src, bool rtr)
{
	struct qp_ird *e = &qp->ird[(qp->ird_head + qp->ird_count) % qp->ird_size];

	memset(e, 0, sizeof(*e)); /* the slot may have held an Atomic Request */
	e->rr = *rr;
	if (src)
		e->src = *src;
	e->rtr = rtr;
	if (rtr)
		qp->ird_rtr = true;
	qp->ird_count++;
}

static void rx_done_rtr(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	qp->rtr_expected = false;
	/* The RTR is an ordinary message of its queue: the next one has MSN 2. */
	if (s->rtr == MPA_RTR_SEND)
		qp->rxq[DDP_QN_SEND].msn++;
	if (s->rtr == MPA_RTR_READ) {
		qp->rxq[DDP_QN_READ_REQ].msn++;
		s->rr.size = 0;
		ird_push(qp, &s->rr, NULL, true);
	}
}

/* RFC 7306: perform the peer's atomic (once, now that its CRC matched) and
 * queue the Atomic Response behind the Read Responses already queued. */
static int rx_done_areq(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	struct qp_ird *e = &qp->ird[(qp->ird_head + qp->ird_count) % qp->ird_size];

	ddp_untagged_advance(&qp->rxq[DDP_QN_READ_REQ], &s->h, RDMAP_ATOMIC_REQ_LEN);
	/* The target may be the payload of an FPDU not yet sent (see tx_protect). */
	if (qp->sl_count && tx_protect(qp, (const uint8_t *)s->atarget, RDMAP_ATOMIC_LEN) != IW_OK)
		return rx_fail(qp, IW_ERDMAP_LOCAL, false);
	memset(e, 0, sizeof(*e));
	e->atomic = true;
	e->resp.req_id = s->areq.req_id;
	e->resp.orig = rdmap_atomic_apply(s->atarget, &s->areq);
	qp->ird_count++;
	return IW_OK;
}

static int rx_done_aresp(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	struct qp_rd rd = qp->rd[qp->rd_head];

	ddp_untagged_advance(&qp->rxq[DDP_QN_ATOMIC_RESP], &s->h, RDMAP_ATOMIC_RESP_LEN);
	if (qp->sl_count && tx_protect(qp, (const uint8_t *)s->atarget, RDMAP_ATOMIC_LEN) != IW_OK)
		return rx_fail(qp, IW_ERDMAP_LOCAL, false);
	/* The result buffer is any local memory: no alignment is required of it. */
	memcpy(s->atarget, &s->aresp.orig, RDMAP_ATOMIC_LEN);
	qp->rd_head = (qp->rd_head + 1) % qp->rd_size;
	qp->rd_count--;
	qp->rd_wr_count--;
	sq_done(qp, rd.sq_idx, RDMAP_WC_SUCCESS, IW_OK, RDMAP_ATOMIC_LEN);
	return IW_OK;
}

/* RFC 7306 Immediate Data: complete the posted receive it consumed. */
static void rx_done_imm(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	struct rdmap_wc wc = {
		.wr_id = qp->rq[qp->rq_head].wr.wr_id,
		.status = RDMAP_WC_SUCCESS,
		.opcode = RDMAP_WC_RECV,
		.solicited = s->opcode == RDMAP_OP_IMM_SE,
		.with_imm = true,
		.imm = iw_get_be64(s->hdr + DDP_UNTAGGED_HDR_LEN),
	};

	ddp_untagged_advance(&qp->rxq[DDP_QN_SEND], &s->h, 0);
	/* Right after an RDMA Write it is that Write's notification (Write with Immediate). */
	if (qp->rx_prev_write) {
		wc.opcode = RDMAP_WC_RECV_RDMA_WITH_IMM;
		wc.byte_len = qp->rx_write_len;
	}
	qp->rq_head = (qp->rq_head + 1) % qp->cfg.rq_depth;
	qp->rq_count--;
	cq_push(qp, &wc);
}

static void rx_done_rresp(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	struct qp_rd rd;

	if (!s->h.last)
		return;
	rd = qp->rd[qp->rd_head];
	qp->rd_head = (qp->rd_head + 1) % qp->rd_size;
	qp->rd_count--;
	if (rd.rtr)
		return;
	qp->rd_wr_count--;
	sq_done(qp, rd.sq_idx, RDMAP_WC_SUCCESS, IW_OK, rd.size);
}

static int rx_done_send(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	const struct rdmap_opcode_info *info = rdmap_opcode_info(s->opcode);
	struct rdmap_wc wc = {0};

	if (!ddp_untagged_advance(&qp->rxq[DDP_QN_SEND], &s->h, s->payload_len))
		return IW_OK;
	if (info->inv_stag) {
		enum ddp_stag_check why;

		if (ddp_stag_invalidate_stream(qp->cfg.stags, s->h.rsvdulp2, qp->cfg.pd,
					       qp->cfg.stream, true, &why) != IW_OK)
			return rx_fail(qp, IW_ERDMAP_CANT_INVALIDATE, false);
		wc.invalidated = true;
		wc.invalidated_stag = s->h.rsvdulp2;
	}
	wc.wr_id = qp->rq[qp->rq_head].wr.wr_id;
	wc.status = RDMAP_WC_SUCCESS;
	wc.opcode = RDMAP_WC_RECV;
	wc.byte_len = s->h.mo + s->payload_len;
	wc.solicited = info->solicited;
	qp->rq_head = (qp->rq_head + 1) % qp->cfg.rq_depth;
	qp->rq_count--;
	cq_push(qp, &wc);
	return IW_OK;
}

static enum rdmap_wc_status term_status(const struct rdmap_term *t)
{
	if (t->code.layer == IW_TERM_LAYER_RDMAP && t->code.etype == 1)
		return RDMAP_WC_REM_ACCESS_ERR;
	if (t->code.layer == IW_TERM_LAYER_RDMAP && t->code.etype == 2)
		return RDMAP_WC_REM_OP_ERR;
	/* RFC 5041 §7.2 tagged buffer errors (type 1) (invalid STag, base or bounds, STag
	 * not on this stream, TO wrap) are protection errors of our RDMA Write /
	 * Read reference: ibverbs calls that a remote access error. */
	if (t->code.layer == IW_TERM_LAYER_DDP && t->code.etype == 1 && t->code.ecode <= 3)
		return RDMAP_WC_REM_ACCESS_ERR;
	if (t->code.layer == IW_TERM_LAYER_DDP || t->code.layer == IW_TERM_LAYER_LLP)
		return RDMAP_WC_REM_INV_REQ_ERR;
	return RDMAP_WC_GENERAL_ERR;
}

/* The peer's Terminate: keep it, fail our WRs with its meaning, no Terminate back. */
static int rx_done_term(struct rdmap_qp *qp, struct qp_rxseg *s)
{
	qp->term_recv = s->term;
	qp->has_term_recv = true;
	qp->error = IW_ERDMAP_TERMINATED;
	qp_flush_all(qp, IW_ERDMAP_TERMINATED, term_status(&s->term));
	tx_drop_unsent(qp, true);
	qp->state = RDMAP_QP_ERROR;
	return IW_ERDMAP_TERMINATED;
}

/* Track RDMA Write messages: an Immediate Data message reports the last one's length. */
static void rx_note_message(struct rdmap_qp *qp, const struct qp_rxseg *s)
{
	if (s->kind == RX_WRITE) {
		qp->rx_write_acc += s->payload_len;
		if (!s->h.last)
			return;
		qp->rx_write_len = qp->rx_write_acc;
		qp->rx_write_acc = 0;
		qp->rx_prev_write = true;
	} else if (s->kind != RX_IMM && (s->h.last || s->kind == RX_RTR)) {
		/* (rx_done_imm reads the flag and clears it itself) */
		qp->rx_prev_write = false;
	}
}

static int rx_on_done(void *user)
{
	struct rdmap_qp *qp = user;
	struct qp_rxseg *s = &qp->seg;

	if (!qp_live(qp))
		return qp->error;
	if (s->defer_err) /* the CRC matched: the header was bad as sent */
		return rx_report(qp, s->defer_err, s->defer_copy, s->defer_rreq);
	qp->may_send = true;
	rx_note_message(qp, s);
	switch (s->kind) {
	case RX_RTR:
		rx_done_rtr(qp, s);
		break;
	case RX_RRESP:
		rx_done_rresp(qp, s);
		break;
	case RX_SEND:
		return rx_done_send(qp, s);
	case RX_RREQ:
		ddp_untagged_advance(&qp->rxq[DDP_QN_READ_REQ], &s->h, RDMAP_READ_REQ_LEN);
		ird_push(qp, &s->rr, &s->src, false);
		break;
	case RX_TERM:
		return rx_done_term(qp, s);
	case RX_IMM:
		rx_done_imm(qp, s);
		qp->rx_prev_write = false;
		break;
	case RX_AREQ:
		return rx_done_areq(qp, s);
	case RX_ARESP:
		return rx_done_aresp(qp, s);
	default:
		break;
	}
	return IW_OK;
}

static const struct mpa_rx_ops qp_rx_ops = {
	.ulpdu_header = rx_on_header,
	.ulpdu_payload = rx_on_payload,
	.fpdu_done = rx_on_done,
};

bool rdmap_qp_rx_held(const struct rdmap_qp *qp)
{
	return qp && qp->rx_held;
}

void rdmap_qp_rx_hold_expire(struct rdmap_qp *qp)
{
	if (qp && qp->rx_held)
		qp->hold_expired = true;
}

ssize_t rdmap_qp_read_stream(struct rdmap_qp *qp, const void *buf, size_t len)
{
	ssize_t r;

	if (!qp || (!buf && len))
		return IW_EINVAL;
	if (!qp_live(qp))
		return qp->error ? qp->error : IW_ESTATE;
	r = mpa_rx_read_stream(&qp->rx, buf, len);
	if (r >= 0)
		return r;
	/* MPA's own errors (CRC, Marker) carry no header copy (RFC 5040 figure 10). */
	qp_fail(qp, (int)r, NULL, 0, 0, NULL);
	return qp->error;
}

/* ---------------------------------------------------------------------- */
/* Work requests                                                            */
/* ---------------------------------------------------------------------- */

/*
 * Every posted WR completes exactly once, so the completion ring cannot
 * overflow as long as completions not yet polled plus WRs outstanding fit it:
 * a caller that does not poll gets IW_ENOSPC instead of lost completions.
 */
static bool cq_room(const struct rdmap_qp *qp)
{
	return qp->cq_count + qp->sq_count + qp->rq_count < qp->cq_size;
}

/* The checks of the RFC 7306 work requests. */
static bool wr_post_ok(const struct rdmap_qp *qp, const struct rdmap_send_wr *wr)
{
	switch (wr->opcode) {
	case RDMAP_WR_WRITE_IMM:
	case RDMAP_WR_SEND_IMM:
		return qp->cfg.rfc7306;
	case RDMAP_WR_ATOMIC_FA:
	case RDMAP_WR_ATOMIC_CS:
		/* One 8-octet result buffer; an 8-octet aligned target (RFC 7306). */
		return qp->cfg.rfc7306 && qp->ord_lim > 0 && wr->num_sge == 1 &&
		       wr->sg[0].length == RDMAP_ATOMIC_LEN &&
		       !(wr->remote_to & (RDMAP_ATOMIC_LEN - 1));
	default:
		return true;
	}
}

int rdmap_qp_post_send(struct rdmap_qp *qp, const struct rdmap_send_wr *wr)
{
	struct qp_sqe *e;

	if (!qp || !wr)
		return IW_EINVAL;
	if (qp->state != RDMAP_QP_RTS && qp->state != RDMAP_QP_IDLE)
		return IW_ESTATE;
	if (wr->num_sge < 0 || wr->num_sge > RDMAP_MAX_SGE ||
	    (unsigned)wr->opcode > RDMAP_WR_OPCODE_MAX)
		return IW_EINVAL;
	if (wr->opcode == RDMAP_WR_READ && (wr->num_sge != 1 || qp->ord_lim == 0))
		return IW_EINVAL;
	if (!wr_post_ok(qp, wr))
		return IW_EINVAL;
	if (qp->sq_count == qp->cfg.sq_depth || !cq_room(qp))
		return IW_ENOSPC;
	e = sq_at(qp, qp->sq_count);
	memset(e, 0, sizeof(*e));
	e->wr = *wr;
	e->st = SQ_QUEUED;
	qp->sq_count++;
	return IW_OK;
}

int rdmap_qp_post_recv(struct rdmap_qp *qp, const struct rdmap_recv_wr *wr)
{
	struct qp_rqe *r;

	/* a QP on an SRQ has no receive queue to post to */
	if (!qp || !wr || qp->cfg.srq)
		return IW_EINVAL;
	if (qp->state != RDMAP_QP_RTS && qp->state != RDMAP_QP_IDLE)
		return IW_ESTATE;
	if (wr->num_sge < 0 || wr->num_sge > RDMAP_MAX_SGE)
		return IW_EINVAL;
	if (qp->rq_count == qp->cfg.rq_depth || !cq_room(qp))
		return IW_ENOSPC;
	r = &qp->rq[(qp->rq_head + qp->rq_count) % qp->cfg.rq_depth];
	memset(r, 0, sizeof(*r));
	r->wr = *wr;
	qp->rq_count++;
	return IW_OK;
}

int rdmap_qp_poll(struct rdmap_qp *qp, struct rdmap_wc *wc, int n)
{
	int i = 0;

	if (!qp || !wc)
		return 0;
	while (i < n && qp->cq_count) {
		wc[i++] = qp->cq[qp->cq_head];
		qp->cq_head = (qp->cq_head + 1) % qp->cq_size;
		qp->cq_count--;
	}
	return i;
}

/* Complete everything left with a flush status, no Terminate: the end of a QP
 * that was never started or that closed gracefully (rdmap_qp_error() stays IW_OK). */
static void qp_flush_quietly(struct rdmap_qp *qp)
{
	qp_flush_all(qp, IW_ERDMAP_FLUSHED, RDMAP_WC_WR_FLUSH_ERR);
	tx_drop_unsent(qp, true);
	qp->state = RDMAP_QP_ERROR;
}

void rdmap_qp_llp_closed(struct rdmap_qp *qp)
{
	rdmap_qp_llp_failed(qp, IW_EMPA_CLOSED);
}

void rdmap_qp_llp_failed(struct rdmap_qp *qp, int err)
{
	if (!qp)
		return;
	if (qp->state == RDMAP_QP_IDLE || rdmap_qp_tx_done(qp)) {
		qp_flush_quietly(qp);
		return;
	}
	if (qp_live(qp)) {
		qp_fail(qp, err < 0 ? err : IW_EMPA_CLOSED, NULL, 0, 0, NULL);
		return;
	}
	/* A Terminate still being written cannot get out any more. */
	tx_drop_unsent(qp, true);
	qp->state = RDMAP_QP_ERROR;
}

void rdmap_qp_flush(struct rdmap_qp *qp)
{
	if (!qp)
		return;
	if (qp->state == RDMAP_QP_IDLE) {
		qp_flush_quietly(qp);
		return;
	}
	if (qp_live(qp)) {
		qp_fail(qp, IW_ERDMAP_FLUSHED, NULL, 0, 0, NULL);
		return;
	}
	qp_flush_all(qp, qp->error, RDMAP_WC_WR_FLUSH_ERR);
	tx_drop_unsent(qp, true);
	qp->state = RDMAP_QP_ERROR;
}

/* ---------------------------------------------------------------------- */
/* Create / destroy                                                         */
/* ---------------------------------------------------------------------- */

static bool config_ok(const struct rdmap_qp_config *c)
{
	if (!c->stags)
		return false;
	if (c->sq_depth < 1 || c->sq_depth > QP_DEPTH_MAX)
		return false;
	if (!c->srq && (c->rq_depth < 1 || c->rq_depth > QP_DEPTH_MAX))
		return false;
	if (c->mulpdu < MPA_MULPDU_MIN || c->mulpdu > MPA_ULPDU_MAX)
		return false;
	/* p2p needs exactly one negotiated RTR form. */
	if (c->mpa.p2p && c->mpa.rtr != MPA_RTR_SEND && c->mpa.rtr != MPA_RTR_WRITE &&
	    c->mpa.rtr != MPA_RTR_READ)
		return false;
	return true;
}

void rdmap_qp_destroy(struct rdmap_qp *qp)
{
	if (!qp)
		return;
	if (qp->cfg.srq)
		rdmap_srq_use(qp->cfg.srq, -1);
	iw_free(qp->sq);
	iw_free(qp->rq);
	iw_free(qp->cq);
	iw_free(qp->rd);
	iw_free(qp->ird);
	for (uint32_t i = 0; i < QP_SLOTS; i++) {
		iw_free(qp->sl_mem[i].bounce);
		iw_free(qp->sl_mem[i].lin);
	}
	iw_free(qp->slots);
	iw_free(qp);
}

static void qp_init_rtr(struct rdmap_qp *qp)
{
	if (!qp->cfg.mpa.p2p)
		return;
	if (!qp->cfg.initiator) {
		qp->rtr_expected = true;
		return;
	}
	qp->rtr_pending = true;
	/* The RTR uses MSN 1 of its queue; a Read RTR is answered like any Read. */
	if (qp->cfg.mpa.rtr == MPA_RTR_SEND)
		qp->tx_msn[DDP_QN_SEND]++;
	if (qp->cfg.mpa.rtr == MPA_RTR_READ) {
		struct qp_rd *rd = &qp->rd[0];

		qp->tx_msn[DDP_QN_READ_REQ]++;
		memset(rd, 0, sizeof(*rd));
		rd->rtr = true;
		rd->sink_stag = 1; /* mpa_rtr_encode()'s placeholder sink STag, TO 0 */
		qp->rd_count = 1;
	}
}

/* Enter RTS with the negotiated parameters `p`. */
static int qp_start(struct rdmap_qp *qp, const struct mpa_params *p)
{
	struct mpa_rx_config rxc;

	qp->cfg.mpa = *p;
	qp->ord_lim = IW_MIN((uint32_t)p->ord, qp->cfg.sq_depth);
	qp->ird_lim = IW_MIN((uint32_t)p->ird, QP_IRD_CAP);
	/* the ring of the peer's Reads, sized for what was negotiated (often 16
	 * of a capacity of 255: 1.5 KiB, not 22) */
	qp->ird_size = qp->ird_lim + 1; /* + the Read RTR */
	qp->ird = iw_calloc(qp->ird_size, sizeof(*qp->ird));
	if (!qp->ird)
		return IW_ENOMEM;
	qp->nqueues = qp->cfg.rfc7306 ? DDP_QN_COUNT_7306 : DDP_QN_COUNT;
	for (int i = 0; i < DDP_QN_COUNT_7306; i++) {
		qp->tx_msn[i] = DDP_MSN_FIRST;
		ddp_untagged_queue_init(&qp->rxq[i]);
	}
	qp->may_send = !(p->wait_first_fpdu && !qp->cfg.initiator);
	mpa_tx_init(&qp->tx, p->crc, p->markers_tx, 0);
	mpa_rx_config_default(&rxc);
	rxc.crc = p->crc;
	rxc.markers = p->markers_rx;
	rxc.pos = 0;
	rxc.hdr_min = 2;
	rxc.max_ulpdu = MPA_ULPDU_MAX;
	if (mpa_rx_init(&qp->rx, &rxc, &qp_rx_ops, qp) != IW_OK)
		return IW_EINVAL;
	qp_init_rtr(qp);
	qp->state = RDMAP_QP_RTS;
	return IW_OK;
}

int rdmap_qp_create(const struct rdmap_qp_config *cfg, struct rdmap_qp **out)
{
	struct rdmap_qp *qp;

	if (!cfg || !out || !config_ok(cfg))
		return IW_EINVAL;
	*out = NULL;
	qp = iw_calloc(1, sizeof(*qp));
	if (!qp)
		return IW_ENOMEM;
	qp->cfg = *cfg;
	if (!qp->cfg.rx_direct_min)
		qp->cfg.rx_direct_min = RDMAP_QP_RX_DIRECT_MIN;
	qp->ord_lim = IW_MIN((uint32_t)cfg->mpa.ord, cfg->sq_depth);
	qp->ird_lim = IW_MIN((uint32_t)cfg->mpa.ird, QP_IRD_CAP);
	qp->rd_size = qp->ord_lim + 1; /* + the Read RTR */
	if (cfg->srq) {
		/* the own queue holds the one receive taken from the SRQ; the ring
		 * room for receive completions is the SRQ's depth (see rq_current) */
		rdmap_srq_use(cfg->srq, 1);
		qp->cfg.rq_depth = 1;
		qp->cq_size = cfg->sq_depth + IW_MIN(rdmap_srq_depth(cfg->srq), QP_DEPTH_MAX) +
			      qp->ord_lim;
	} else {
		qp->cq_size = cfg->sq_depth + cfg->rq_depth + qp->ord_lim;
	}
	qp->sq = iw_calloc(cfg->sq_depth, sizeof(*qp->sq));
	qp->rq = iw_calloc(qp->cfg.rq_depth, sizeof(*qp->rq));
	qp->cq = iw_calloc(qp->cq_size, sizeof(*qp->cq));
	qp->rd = iw_calloc(qp->rd_size, sizeof(*qp->rd));
	qp->slots = iw_malloc(QP_SLOTS * sizeof(*qp->slots));
	if (!qp->sq || !qp->rq || !qp->cq || !qp->rd || !qp->slots) {
		rdmap_qp_destroy(qp);
		return IW_ENOMEM;
	}
	qp->state = RDMAP_QP_IDLE;
	if (!cfg->start_idle) {
		int r = qp_start(qp, &cfg->mpa);

		if (r != IW_OK) {
			rdmap_qp_destroy(qp);
			return r;
		}
	}
	*out = qp;
	return IW_OK;
}

int rdmap_qp_start(struct rdmap_qp *qp, const struct mpa_params *p)
{
	if (!qp)
		return IW_EINVAL;
	if (qp->state != RDMAP_QP_IDLE)
		return IW_ESTATE;
	p = p ? p : &qp->cfg.mpa;
	/* The rings were sized from the capacities given at create time. */
	if (IW_MIN((uint32_t)p->ord, qp->cfg.sq_depth) > qp->ord_lim ||
	    IW_MIN((uint32_t)p->ird, QP_IRD_CAP) > qp->ird_lim)
		return IW_EINVAL;
	return qp_start(qp, p);
}

int rdmap_qp_set_link(struct rdmap_qp *qp, uint32_t mulpdu, bool initiator)
{
	if (!qp || mulpdu < MPA_MULPDU_MIN || mulpdu > MPA_ULPDU_MAX)
		return IW_EINVAL;
	if (qp->state != RDMAP_QP_IDLE)
		return IW_ESTATE;
	qp->cfg.mulpdu = mulpdu;
	qp->cfg.initiator = initiator;
	return IW_OK;
}

int rdmap_qp_close(struct rdmap_qp *qp)
{
	if (!qp)
		return IW_EINVAL;
	if (qp->state == RDMAP_QP_IDLE) {
		qp_flush_quietly(qp);
		return IW_OK;
	}
	if (qp->state != RDMAP_QP_RTS)
		return IW_ESTATE;
	qp->state = RDMAP_QP_CLOSING;
	return IW_OK;
}

bool rdmap_qp_tx_done(const struct rdmap_qp *qp)
{
	return qp && qp->state == RDMAP_QP_CLOSING && qp->sq_count == 0 && qp->ird_count == 0 &&
	       qp->sl_count == 0 && !qp->txm.active && !qp->rtr_pending;
}
