/* SPDX-License-Identifier: MIT */
/*
 * b2b.h - two complete stacks back to back in memory (test-only).
 *
 * A is the MPA initiator, B the responder.  b2b_create() first runs the real
 * MPA startup of both roles against each other (mpa_setup_*, no sockets), so
 * the QPs get the parameters the negotiation really produced, then creates one
 * rdmap_qp per side.  The pump moves octets A->B and B->A through
 * rdmap_qp_tx_iov / rdmap_qp_tx_advance / rdmap_qp_read_stream with a
 * splitting policy until both sides are idle; a sniffer decodes each stream
 * again (its own mpa_rx) to count DDP segments per RDMAP opcode and to track
 * the RDMA Reads outstanding on the wire.
 *
 * Every helper that can fail a test does so with ck_assert; nothing loops
 * without a bound.
 */
#ifndef IW_B2B_H
#define IW_B2B_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>
#include <iwarp/rdmap_qp.h>

#include "th.h"

enum b2b_side {
	B2B_A = 0, /* MPA initiator */
	B2B_B = 1, /* MPA responder */
};

static inline int b2b_peer(int side)
{
	return side ^ 1;
}

enum b2b_split {
	B2B_SPLIT_WHOLE,  /* everything tx_iov offers moves and is delivered in one call */
	B2B_SPLIT_OCTET,  /* one octet per tx_advance and per read_stream */
	B2B_SPLIT_RANDOM, /* random partial tx_advance, delivered in random pieces */
};

struct b2b;

/*
 * Per-segment hook: called by the sniffer for every complete DDP segment
 * (ULPDU, MPA framing removed, CRC verified) that left side `from`, with its
 * decoded header and RDMAP opcode.  Called when the segment's last octet is
 * handed to the receiving QP, i.e. before that QP has seen it.
 */
typedef void (*b2b_seg_hook)(struct b2b *b, int from, const struct ddp_hdr *h, uint8_t opcode,
			     const uint8_t *ulpdu, size_t len, void *arg);

/*
 * Wire hook: called with every chunk of octets in flight from `from` (a
 * private copy, after the sniffer saw the original) before it is delivered;
 * it may modify the octets in place (corruption tests).
 */
typedef void (*b2b_wire_hook)(struct b2b *b, int from, uint8_t *buf, size_t len, void *arg);

struct b2b_opts {
	/* MPA negotiation (both sides configured alike unless stated) */
	uint8_t rev;	 /* MPA_REV1 or MPA_REV2 (default 2) */
	bool crc;	 /* both request CRC (default true) */
	bool markers_ab; /* Markers in the A->B stream, i.e. B sets M (default false) */
	bool markers_ba; /* Markers in the B->A stream, i.e. A sets M (default false) */
	bool p2p;	 /* peer-to-peer with an RTR (default false) */
	uint8_t rtr;	 /* p2p: RTR forms A offers and B accepts (default MPA_RTR_ALL) */
	uint16_t ird[2]; /* per side (default 16) */
	uint16_t ord[2]; /* per side (default 16) */
	uint32_t emss;	 /* for mpa_mulpdu() (default 1460) */
	/* QPs */
	bool shared_stags;  /* one STag table for both sides (default false: one each) */
	uint32_t stag_max;  /* entries per table (default 1024) */
	uint32_t pd[2];	    /* protection domains (default 1 and 2) */
	uint32_t sq_depth;  /* 0 = rdmap_qp_config_default() */
	uint32_t rq_depth;  /* 0 = default */
	uint32_t max_msg;   /* 0 = default */
	uint32_t mulpdu[2]; /* 0 = mpa_mulpdu(emss, markers_tx) of that side */
	bool rfc7306[2];    /* RFC 7306 enabled per side (default false) */
	/* shared receive queues: side i's QP takes its receives from srq[i] (NULL = its
	 * own RQ); ext_stags[i]: side i uses this STag table (not owned, NULL = its own),
	 * so that pairs sharing an SRQ can share the receive buffers' STags */
	struct rdmap_srq *srq[2];
	struct ddp_stag_table *ext_stags[2];
	/* pump */
	enum b2b_split split; /* default WHOLE */
	/* deliver as a socket reader that receives into place would: payload the
	 * QP names with rdmap_qp_rx_target() is copied there and reported with
	 * rdmap_qp_rx_placed(), other reads stop where the QP bounds them
	 * (default: the environment's IW_B2B_DIRECT=1, else off) */
	bool direct;
	/* cfg.rx_direct_min of both QPs (0 = the QP's default; IW_B2B_DIRECT=1
	 * makes it 1: into place at every split) */
	uint32_t direct_min;
	uint64_t seed;	    /* RANDOM and STag keys; 0 = th_seed_from_env() */
	size_t max_chunk;   /* RANDOM: largest piece (default 3000) */
	uint64_t max_steps; /* bound on pump steps per b2b_pump call (default 1 << 26) */
};

/* Defaults as documented above. */
void b2b_opts_default(struct b2b_opts *o);

struct b2b_sniff; /* internal */

struct b2b {
	struct b2b_opts opts;
	struct mpa_params params[2];	 /* what each side's mpa_setup negotiated */
	struct ddp_stag_table *stags[2]; /* equal pointers when shared */
	uint32_t stag_count0[2];	 /* ddp_stag_count() right after create */
	struct rdmap_qp_config cfg[2];
	struct rdmap_qp *qp[2];
	uint64_t now_ns; /* fake clock, starts at 1 s; nothing here advances it by itself */
	struct th_rng rng;
	/* observations */
	uint64_t bytes[2];		  /* octets moved from side i to its peer */
	uint64_t direct_octets[2];	  /* octets side i received into place (opts.direct) */
	int rx_err[2];			  /* first negative read_stream() return at side i */
	uint64_t segs[2][RDMAP_OP_COUNT]; /* segments that left side i, by opcode */
	uint64_t msgs[2][RDMAP_OP_COUNT]; /* of those, segments with L set */
	int reads_out[2];		  /* Read Requests from side i not yet fully answered */
	int reads_out_max[2];		  /* high-water mark of reads_out */
	int sniff_err[2];		  /* the sniffer could not decode the stream from i */
	/* hooks (NULL = none) */
	b2b_seg_hook seg_hook;
	b2b_wire_hook wire_hook;
	void *hook_arg;
	/* internal */
	struct b2b_sniff *sniff[2];
	uint8_t *scratch;
	size_t scratch_cap;
};

/* Negotiate, create both QPs (RTS).  Fails the test on any error. */
struct b2b *b2b_create(const struct b2b_opts *o);
/* Destroy both QPs (no flush) and the STag tables.  NULL is fine. */
void b2b_destroy(struct b2b *b);

/*
 * One round: at most one transfer A->B and one B->A, split per policy.
 * Returns the octets moved (0 = both sides idle).
 */
size_t b2b_step(struct b2b *b);
/* Steps until both sides are idle.  Returns the octets moved; fails the test at max_steps. */
uint64_t b2b_pump(struct b2b *b);

/*
 * Pump until side has a completion and poll it into *wc.  Returns 1, or 0 when
 * the pair went idle with none (the test decides whether that is a failure).
 */
int b2b_wait(struct b2b *b, int side, struct rdmap_wc *wc);
/* Pump until idle, then poll up to n completions of side.  Returns the count. */
int b2b_drain(struct b2b *b, int side, struct rdmap_wc *wc, int n);

/*
 * Deliver a ULPDU (a DDP segment) framed at the current stream position as if
 * side `from` had sent it: pumps until idle first so it lands on an FPDU
 * boundary.  Returns read_stream()'s result at the peer.  Markers in later
 * FPDUs of that direction will be off by the injected octets, so use it for
 * tests that expect the receiver to fail, or without Markers.
 */
ssize_t b2b_inject(struct b2b *b, int from, const void *ulpdu, size_t len);

/* Register [addr, addr+len) at side with base_to = (uintptr_t)addr.  Returns the STag. */
uint32_t b2b_reg(struct b2b *b, int side, void *addr, size_t len, uint32_t access);
void b2b_dereg(struct b2b *b, int side, uint32_t stag);

/* One-SGE post helpers; return rdmap_qp_post_*()'s result. */
int b2b_post_recv(struct b2b *b, int side, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey);
int b2b_post_send(struct b2b *b, int side, enum rdmap_wr_opcode op, uint32_t flags, uint64_t wr_id,
		  void *addr, uint32_t len, uint32_t lkey);
/* Write / Read: (addr, len, lkey) local, (rstag, rto) at the peer. */
int b2b_post_rdma(struct b2b *b, int side, enum rdmap_wr_opcode op, uint32_t flags, uint64_t wr_id,
		  void *addr, uint32_t len, uint32_t lkey, uint32_t rstag, uint64_t rto);

/*
 * Leak check after the test deregistered its buffers: the STag tables are
 * back to their start counts, neither side has an unread completion, and both
 * QPs are in `state`.
 */
void b2b_check_clean(struct b2b *b, enum rdmap_qp_state state);

/* Payload octets one segment of this opcode carries: mulpdu - DDP (+ RDMAP) header. */
uint32_t b2b_seg_payload(const struct b2b *b, int side, uint8_t opcode);

#endif /* IW_B2B_H */
