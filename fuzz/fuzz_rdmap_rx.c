/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rdmap_rx.c - the whole receive path, MPA -> DDP -> RDMAP, of one queue
 * pair against a small STag table, a few posted receives and one RDMA Read in
 * flight.
 *
 * Input: octet 0 chooses the mode and the negotiated parameters, the rest is
 * the peer's byte stream.
 *   bit 0   reframe: the rest is a list of (BE16 length, ULPDU) records that the
 *           harness frames into valid FPDUs (CRC on, Markers as bit 1 says), so
 *           the fuzzer works on DDP/RDMAP headers and never fights the CRC;
 *           otherwise the rest is fed raw with CRC checking off.
 *   bit 1   the peer sends Markers (markers_rx)
 *   bit 2   we are the initiator (else the responder, which waits for the first FPDU)
 *   bit 3   peer-to-peer with an RTR; bits 4-5 pick it: 0/3 write, 1 read, 2 send
 *   bit 6   RFC 7306 enabled (Immediate Data, atomics; an Atomic Request of ours
 *           is in flight too, so Atomic Responses have something to match)
 *   bit 7   receiver not ready (cfg.rnr_hold): a Send that finds no receive holds
 *           the stream; the harness then posts another receive (up to NEXTRA per
 *           input) or gives up (rdmap_qp_rx_hold_expire) and feeds the rest
 * An odd input length makes the harness receive as the verbs do with epoll:
 * payload the QP names with rdmap_qp_rx_target() (at every split:
 * cfg.rx_direct_min 1) is copied there and reported with
 * rdmap_qp_rx_placed(), and other reads stop where the QP bounds them.
 * In reframe mode, STag fields holding 1, 2 or 3 are replaced by the STags the
 * harness registered (remote-write (and remote-atomic), remote-read, and our
 * Read's sink; a tagged segment to the sink gets its TO made relative to the
 * sink's address), so the fuzzer reaches placement without guessing random
 * keys or addresses.
 *
 * Invariants checked (abort on violation): nothing posted is lost - after the
 * input, a flush completes every work request exactly once; a failed QP is in
 * TERMINATE or ERROR and keeps failing; rdmap_qp_read_stream never reports
 * more octets than it was given, and fewer only while a message is held,
 * which a receive or giving up always ends; a target lies inside memory the
 * harness registered and takes no more than the QP said.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>
#include <iwarp/rdmap_qp.h>

#include "iw_bytes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NRECV	   4
#define NEXTRA	   4 /* receives posted for held messages, per input */
#define RECV_LEN   256
#define REMOTE_LEN 4096
#define PD	   7

struct harness {
	struct ddp_stag_table *stags;
	struct rdmap_qp *qp;
	uint8_t recv[NRECV][RECV_LEN];
	uint8_t remote_w[REMOTE_LEN];
	uint8_t remote_r[REMOTE_LEN];
	uint8_t sink[REMOTE_LEN];
	uint32_t stag_recv, stag_w, stag_r, stag_sink;
	unsigned posted;
	unsigned completed;
	unsigned extra; /* receives posted for held messages */
	bool direct;	/* receive into place (odd input length) */
};

static void drain(struct harness *h)
{
	struct iovec iov[64];
	struct rdmap_wc wc[16];
	size_t bytes;
	int n;

	for (int rounds = 0; rounds < 4096; rounds++) {
		n = rdmap_qp_tx_iov(h->qp, iov, 64, &bytes);
		if (n <= 0 || bytes == 0)
			break;
		rdmap_qp_tx_advance(h->qp, bytes);
	}
	while ((n = rdmap_qp_poll(h->qp, wc, 16)) > 0)
		h->completed += (unsigned)n;
}

static uint32_t stag_sub(const struct harness *h, uint32_t v)
{
	switch (v) {
	case 1:
		return h->stag_w;
	case 2:
		return h->stag_r;
	case 3:
		return h->stag_sink;
	default:
		return v;
	}
}

/* Give the fuzzer the harness's STags: patch the STag fields of a ULPDU. */
static void patch_stags(const struct harness *h, uint8_t *u, size_t len)
{
	if (len >= DDP_TAGGED_HDR_LEN && (u[0] & DDP_CTRL_T)) {
		uint32_t stag = iw_get_be32(u + 2);

		/* Our Read's sink is addressed by its own address: make TO relative to it. */
		if (stag == 3)
			iw_put_be64(u + 6, (uintptr_t)h->sink + iw_get_be64(u + 6) % REMOTE_LEN);
		iw_put_be32(u + 2, stag_sub(h, stag));
		return;
	}
	if (len >= DDP_UNTAGGED_HDR_LEN)
		iw_put_be32(u + 2, stag_sub(h, iw_get_be32(u + 2))); /* Invalidate STag */
	if (len >= DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN &&
	    rdmap_ctrl_opcode(u[1]) == RDMAP_OP_ATOMIC_REQ) {
		iw_put_be32(u + 26, stag_sub(h, iw_get_be32(u + 26))); /* Remote STag */
		return;
	}
	if (len >= DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN) {
		iw_put_be32(u + 18, stag_sub(h, iw_get_be32(u + 18))); /* sink */
		iw_put_be32(u + 34, stag_sub(h, iw_get_be32(u + 34))); /* source */
	}
}

/* A held message (bit 7): post another receive, or give up when out of them. */
static void unhold(struct harness *h)
{
	struct rdmap_recv_wr rwr;

	if (h->extra < NEXTRA) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 200 + h->extra;
		rwr.num_sge = 1;
		rwr.sg[0].addr = (uintptr_t)h->recv[h->extra % NRECV];
		rwr.sg[0].length = RECV_LEN;
		rwr.sg[0].lkey = h->stag_recv;
		h->extra++;
		if (rdmap_qp_post_recv(h->qp, &rwr) == IW_OK) {
			h->posted++;
			return;
		}
	}
	rdmap_qp_rx_hold_expire(h->qp);
}

static void feed(struct harness *h, const uint8_t *p, size_t n)
{
	for (int round = 0;; round++) {
		ssize_t r = rdmap_qp_read_stream(h->qp, p, n);

		if (r > (ssize_t)n)
			abort();
		if (r < 0) {
			enum rdmap_qp_state st = rdmap_qp_state(h->qp);
			if (st != RDMAP_QP_TERMINATE && st != RDMAP_QP_ERROR)
				abort();
			if (rdmap_qp_error(h->qp) == IW_OK)
				abort();
			break;
		}
		drain(h);
		if (!rdmap_qp_rx_held(h->qp)) {
			if ((size_t)r != n)
				abort(); /* fewer octets only while held */
			break;
		}
		/* each round posts a receive or gives up: a hold cannot last */
		if (round > 2 * NEXTRA + 2)
			abort();
		p += r;
		n -= (size_t)r;
		unhold(h);
	}
	drain(h);
}

static bool inside(const uint8_t *t, size_t k, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	return t >= b && k <= len && t - b <= (ptrdiff_t)(len - k);
}

/* Receive as the verbs do with epoll: into place where the QP says so. */
static void feed_direct(struct harness *h, const uint8_t *p, size_t n)
{
	while (n > 0) {
		size_t len = 0, k;
		uint8_t *t = rdmap_qp_rx_target(h->qp, &len);

		if (t) {
			k = len < n ? len : n;
			if (!len || !(inside(t, k, h->recv, sizeof(h->recv)) ||
				      inside(t, k, h->remote_w, sizeof(h->remote_w)) ||
				      inside(t, k, h->sink, sizeof(h->sink))))
				abort();
			memcpy(t, p, k);
			if (rdmap_qp_rx_placed(h->qp, k) != IW_OK)
				abort(); /* only a failed QP refuses, and it offers no target */
			drain(h);
		} else {
			k = len && len < n ? len : n;
			feed(h, p, k);
			if (rdmap_qp_state(h->qp) != RDMAP_QP_RTS)
				return;
		}
		p += k;
		n -= k;
	}
}

static void feed_any(struct harness *h, const uint8_t *p, size_t n)
{
	if (h->direct)
		feed_direct(h, p, n);
	else
		feed(h, p, n);
}

static void feed_reframed(struct harness *h, const uint8_t *p, size_t n, bool markers)
{
	struct mpa_tx tx;
	static struct mpa_fpdu f; /* large; one at a time */
	uint8_t ulpdu[MPA_ULPDU_MAX];
	uint8_t wire[MPA_FPDU_NOMARK_MAX + 4 * MPA_MARKERS_PER_FPDU_MAX];

	mpa_tx_init(&tx, true, markers, 0);
	while (n >= 2) {
		size_t len = iw_get_be16(p) % 2048;
		struct iovec v;
		size_t w = 0;

		p += 2;
		n -= 2;
		if (len > n)
			len = n;
		memcpy(ulpdu, p, len);
		p += len;
		n -= len;
		patch_stags(h, ulpdu, len);
		v.iov_base = ulpdu;
		v.iov_len = len;
		if (mpa_tx_frame(&tx, &v, 1, &f) != IW_OK)
			abort();
		for (int i = f.first; i < f.first + f.iovcnt; i++) {
			memcpy(wire + w, f.iov[i].iov_base, f.iov[i].iov_len);
			w += f.iov[i].iov_len;
		}
		feed_any(h, wire, w);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct harness h;
	struct rdmap_qp_config cfg;
	struct rdmap_recv_wr rwr;
	struct rdmap_send_wr swr;
	uint8_t mode;
	bool reframe, markers;

	if (size < 1)
		return 0;
	mode = data[0];
	reframe = mode & 1;
	markers = mode & 2;

	memset(&h, 0, sizeof(h));
	h.stags = ddp_stag_table_create(16, 0x5eed);
	if (!h.stags)
		abort();
	/* Local buffers are addressed by their own address; remote ones by small TOs. */
	if (ddp_stag_reg(h.stags, PD, h.recv, (uintptr_t)h.recv, sizeof(h.recv),
			 DDP_ACCESS_LOCAL_WRITE, &h.stag_recv) ||
	    ddp_stag_reg(h.stags, PD, h.sink, (uintptr_t)h.sink, sizeof(h.sink),
			 DDP_ACCESS_LOCAL_WRITE, &h.stag_sink) ||
	    ddp_stag_reg(h.stags, PD, h.remote_w, 0, sizeof(h.remote_w),
			 DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_INVALIDATE |
				 DDP_ACCESS_REMOTE_ATOMIC,
			 &h.stag_w) ||
	    ddp_stag_reg(h.stags, PD, h.remote_r, 0x10000, sizeof(h.remote_r),
			 DDP_ACCESS_REMOTE_READ, &h.stag_r))
		abort();

	rdmap_qp_config_default(&cfg);
	cfg.stags = h.stags;
	cfg.pd = PD;
	cfg.sq_depth = 4;
	cfg.rq_depth = NRECV;
	cfg.mulpdu = 1024;
	cfg.max_msg = 1u << 20;
	memset(&cfg.mpa, 0, sizeof(cfg.mpa));
	cfg.mpa.rev = MPA_REV2;
	cfg.mpa.enhanced = true;
	cfg.mpa.crc = reframe;
	cfg.mpa.markers_rx = markers;
	cfg.mpa.markers_tx = false;
	cfg.mpa.ird = 2;
	cfg.mpa.ord = 2;
	cfg.mpa.peer_ird = 2;
	cfg.mpa.peer_ord = 2;
	cfg.initiator = mode & 4;
	cfg.mpa.wait_first_fpdu = !cfg.initiator;
	if (mode & 8) {
		static const uint8_t forms[4] = {MPA_RTR_WRITE, MPA_RTR_READ, MPA_RTR_SEND,
						 MPA_RTR_WRITE};
		cfg.mpa.p2p = true;
		cfg.mpa.rtr = forms[(mode >> 4) & 3];
	}
	cfg.rfc7306 = mode & 64;
	cfg.rnr_hold = mode & 128;
	h.direct = size & 1;
	cfg.rx_direct_min = h.direct ? 1 : 0;
	if (rdmap_qp_create(&cfg, &h.qp) != IW_OK)
		abort();

	for (unsigned i = 0; i < NRECV; i++) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 100 + i;
		rwr.num_sge = 1;
		rwr.sg[0].addr = (uintptr_t)h.recv[i];
		rwr.sg[0].length = RECV_LEN;
		rwr.sg[0].lkey = h.stag_recv;
		if (rdmap_qp_post_recv(h.qp, &rwr) != IW_OK)
			abort();
		h.posted++;
	}
	/* One RDMA Read in flight, so Read Responses have something to match. */
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 1;
	swr.opcode = RDMAP_WR_READ;
	swr.flags = RDMAP_WR_SIGNALED;
	swr.num_sge = 1;
	swr.sg[0].addr = (uintptr_t)h.sink;
	swr.sg[0].length = 64;
	swr.sg[0].lkey = h.stag_sink;
	swr.remote_stag = 0x12345678;
	swr.remote_to = 0;
	if (rdmap_qp_post_send(h.qp, &swr) != IW_OK)
		abort();
	h.posted++;
	if (cfg.rfc7306) {
		/* An Atomic Request (Request Identifier 0) behind the Read. */
		swr.wr_id = 2;
		swr.opcode = RDMAP_WR_ATOMIC_CS;
		swr.sg[0].addr = (uintptr_t)h.sink + 64;
		swr.sg[0].length = RDMAP_ATOMIC_LEN;
		swr.remote_to = 8;
		if (rdmap_qp_post_send(h.qp, &swr) != IW_OK)
			abort();
		h.posted++;
	}
	drain(&h);

	if (reframe)
		feed_reframed(&h, data + 1, size - 1, markers);
	else
		feed_any(&h, data + 1, size - 1);

	/* Nothing posted is lost: a flush completes whatever is still outstanding. */
	rdmap_qp_flush(h.qp);
	drain(&h);
	if (rdmap_qp_state(h.qp) != RDMAP_QP_ERROR)
		abort();
	if (h.completed != h.posted)
		abort();

	rdmap_qp_destroy(h.qp);
	ddp_stag_table_destroy(h.stags);
	return 0;
}
