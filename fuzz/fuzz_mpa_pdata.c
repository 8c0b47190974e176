/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpa_pdata.c - libFuzzer target for the MPA startup path as an
 * RPC-over-RDMA connection meets it: the peer's MPA Request (we are the
 * responder, an NFS/RDMA server) or MPA Reply (we are the initiator, a
 * client) arrives as a byte stream, the startup machine (mpa_setup_*) takes
 * the frame apart, and the private data it carries goes to the RFC 8797
 * decoder (rpcrdma_cm_pdata_decode), as rpcrdma/xprt does with every
 * connection.
 *
 * Input: octet 0 the configuration - bit 0 the role (initiator), bit 1
 * revision 1 instead of 2, bit 2 peer-to-peer, bit 3 Markers, bits 4-7 the
 * seed of the chunk sizes; then the peer's stream.  Properties (abort() on
 * violation):
 *   - the machine never consumes past the input and never more than once
 *     per octet; an error leaves it FAILED, a reject REJECTED;
 *   - once the peer's frame is decoded, its private data lies inside the
 *     machine's buffer and is at most MPA_PD_MAX octets (508 with the
 *     RFC 6581 IRD/ORD word taken off);
 *   - that private data meets the RFC 8797 property of fuzz_pdata_check.h;
 *   - the responder's Reply carrying our own RFC 8797 block (accept, or
 *     reject when the peer's data is not RFC 8797) decodes as a Reply whose
 *     private data decodes to that block.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>
#include <iwarp/rpcrdma_wire.h>

#include "fuzz_pdata_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* Our RFC 8797 block, as rpcrdma/xprt sends it: 4 KiB each way. */
static int our_pdata(uint8_t *buf, size_t cap)
{
	struct rpcrdma_cm_pdata p = {
		.present = true, .version = 1, .send_size = 4096, .recv_size = 4096};

	return rpcrdma_cm_pdata_encode(&p, buf, cap);
}

static void check_peer_frame(const struct mpa_setup *s)
{
	const struct mpa_frame *f = mpa_setup_peer_frame(s);

	if (!f)
		return;
	check(f->pd_len <= MPA_PD_MAX);
	if (f->pd_len) {
		check(f->pd >= s->peer_pd && f->pd + f->pd_len <= s->peer_pd + sizeof(s->peer_pd));
		check(!f->enhanced || f->pd_len <= MPA_PD_MAX - 4);
	}
	check_pdata(f->pd_len ? f->pd : NULL, f->pd_len);
}

/* Our Reply, as queued: a Reply frame whose private data is our block. */
static void check_our_reply(struct mpa_setup *s, const uint8_t *pd, int pd_len)
{
	const uint8_t *buf;
	size_t n = mpa_setup_tx_pending(s, &buf);
	struct mpa_frame f;
	struct rpcrdma_cm_pdata p;

	check(n > 0);
	check(mpa_frame_decode(buf, n, true, &f) == (ssize_t)n);
	check(f.pd_len == (uint16_t)pd_len && memcmp(f.pd, pd, (size_t)pd_len) == 0);
	check(rpcrdma_cm_pdata_decode(f.pd, f.pd_len, &p) == 0 && p.present);
	mpa_setup_tx_advance(s, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mpa_setup *s;
	struct mpa_config cfg;
	uint8_t pd[RPCRDMA_CM_PDATA_LEN + RPCRDMA_EXT_LEN];
	int pd_len = our_pdata(pd, sizeof(pd));
	bool initiator;
	unsigned seed;
	size_t off = 0;
	uint64_t now = 1000;

	if (size < 1 || pd_len <= 0)
		return 0;
	initiator = data[0] & 1;
	mpa_config_default(&cfg);
	cfg.rev = data[0] & 2 ? MPA_REV1 : MPA_REV2;
	cfg.p2p = cfg.rev == MPA_REV2 && (data[0] & 4);
	cfg.markers = data[0] & 8;
	seed = data[0] >> 4;
	data++;
	size--;
	s = malloc(sizeof(*s));
	check(s != NULL);
	check(mpa_setup_init(s, initiator ? MPA_INITIATOR : MPA_RESPONDER, &cfg, now) == IW_OK);
	if (initiator) {
		const uint8_t *buf;

		check(mpa_setup_connect(s, pd, (size_t)pd_len) == IW_OK);
		mpa_setup_tx_advance(s, mpa_setup_tx_pending(s, &buf));
	}
	while (off < size) {
		size_t chunk = seed ? 1 + (off * 7 + seed) % (4 * seed) : size - off;
		ssize_t r;

		if (chunk > size - off)
			chunk = size - off;
		r = mpa_setup_read_stream(s, data + off, chunk, ++now);
		if (r < 0) {
			check(s->state == MPA_SETUP_FAILED || s->state == MPA_SETUP_REJECTED ||
			      r == IW_ESTATE);
			break;
		}
		check((size_t)r <= chunk);
		off += (size_t)r;
		check_peer_frame(s);
		if (s->state == MPA_SETUP_REQUEST_RECEIVED) {
			const struct mpa_frame *f = mpa_setup_peer_frame(s);
			struct rpcrdma_cm_pdata p;

			check(f != NULL);
			/* rpcrdma/xprt answers RFC 8797 data with its own block;
			 * here a peer without one is refused, with the block too */
			if (rpcrdma_cm_pdata_decode(f->pd_len ? f->pd : NULL, f->pd_len, &p) == 0)
				check(mpa_setup_accept(s, pd, (size_t)pd_len) == IW_OK);
			else
				check(mpa_setup_reject(s, pd, (size_t)pd_len) == IW_OK);
			check_our_reply(s, pd, pd_len);
			continue;
		}
		if ((size_t)r < chunk)
			break; /* the frame is over: the rest is full operation */
		if (s->state != MPA_SETUP_WAIT_REQUEST && s->state != MPA_SETUP_WAIT_REPLY)
			break;
	}
	free(s);
	return 0;
}
