/* SPDX-License-Identifier: MIT */
/*
 * fuzz_iwd_iwarp.c - iwdump's iWARP decoder (tools/iwdump/iwd_iwarp.c): one
 * connection's two byte streams, with gaps and closes, in any chunks.
 *
 * Input: octet 0 chooses the configuration,
 *   bit 0   mid-stream mode (cfg.mid.enabled)
 *   bit 1   mid-stream CRC on
 *   bit 2   mid-stream Markers in direction 0
 *   bit 3   mid-stream Markers in direction 1
 *   bit 4   keep_fpdus
 *   bit 5   max_msg 100 (reassembly truncation), else the default
 *   bit 6   port filter on cfg.port = 20049 (the flow's port: accepted)
 *   bit 7   port filter on another port (the connection is ignored)
 * then records until the input ends:
 *   octet   bit 0 direction, bit 1 a gap of `length` octets (no octets
 *           follow), bit 2 close the direction after the record
 *   BE16    length
 *   octets  (data records; fewer if the input ends)
 * fed with running stream offsets per direction; then both directions are
 * closed and the decoder destroyed.
 *
 * Every field of every event is read (so ASan sees a bad pointer or length),
 * and these invariants are checked (abort on violation): events only for an
 * iWARP connection; offsets and lengths of FPDUs, Markers, gaps and undecoded
 * ranges inside what was delivered; payload inside the ULPDU; a good CRC is
 * one whose values agree; reassembled data never longer than the message
 * or max_msg.  The input is then decoded a second time with every data
 * record split in two, and the events must be the same.
 * Each record's octets also go through iwd_term_read() directly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iwd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PORT 20049

struct fz {
	uint64_t fed[2]; /* stream octets delivered (data and gaps) per direction */
	uint64_t hash;
	size_t max_msg;
	unsigned long events;
	volatile unsigned sink;
};

static void mix(struct fz *z, uint64_t v)
{
	z->hash = (z->hash ^ v) * 0x100000001B3ull;
}

static void touch(struct fz *z, const void *p, size_t n)
{
	const uint8_t *b = p;
	unsigned s = 0;

	if (n && !p)
		abort();
	for (size_t i = 0; i < n; i++)
		s += b[i];
	z->sink += s;
	mix(z, s);
	mix(z, n);
}

static void touch_str(struct fz *z, const char *s)
{
	if (!s)
		abort();
	touch(z, s, strlen(s));
}

static void check_range(const struct fz *z, int dir, uint64_t off, uint64_t len)
{
	if (off + len < off || off + len > z->fed[dir])
		abort();
}

/* Field by field: struct padding is not part of the result. */
static void mix_ddp(struct fz *z, const struct ddp_hdr *h)
{
	mix(z, (unsigned)h->tagged << 1 | h->last);
	mix(z, (uint64_t)h->dv << 8 | h->rsvdulp);
	mix(z, h->stag);
	mix(z, h->to);
	mix(z, h->rsvdulp2);
	mix(z, (uint64_t)h->qn << 32 | h->msn);
	mix(z, h->mo);
}

static void mix_rreq(struct fz *z, const struct rdmap_read_req *r)
{
	mix(z, r->sink_stag);
	mix(z, r->sink_to);
	mix(z, r->size);
	mix(z, r->src_stag);
	mix(z, r->src_to);
}

static void touch_term(struct fz *z, const struct iwd_term *t)
{
	const struct rdmap_term *r[2] = {&t->std, &t->siw};

	for (int i = 0; i < 2; i++) {
		mix(z, r[i]->code.layer << 16 | r[i]->code.etype << 8 | r[i]->code.ecode);
		mix(z, (unsigned)r[i]->m << 2 | (unsigned)r[i]->d << 1 | r[i]->r);
		mix(z, r[i]->ddp_seg_len);
		if (r[i]->ddp_hdr_len > sizeof(r[i]->ddp_hdr))
			abort();
		touch(z, r[i]->ddp_hdr, r[i]->ddp_hdr_len);
		touch(z, r[i]->rreq, sizeof(r[i]->rreq));
		touch_str(z, iwd_term_layer_name(r[i]->code.layer));
		touch_str(z, iwd_term_type_name(r[i]->code.layer, r[i]->code.etype));
		touch_str(z,
			  iwd_term_code_name(r[i]->code.layer, r[i]->code.etype, r[i]->code.ecode));
	}
	mix(z, (unsigned)t->std_ok << 3 | (unsigned)t->siw_ok << 2 | (unsigned)t->use_siw << 1 |
		       t->copied_ddp_ok);
	if (t->use_siw && !t->siw_ok && t->std_ok)
		abort();
	mix_ddp(z, &t->copied_ddp);
	mix_rreq(z, &t->copied_rreq);
}

static void on_event(void *user, const struct iwd_event *ev)
{
	struct fz *z = user;

	z->events++;
	if (!ev->flow || (ev->dir != 0 && ev->dir != 1))
		abort();
	mix(z, ev->kind);
	mix(z, (uint64_t)ev->dir);
	mix(z, ev->frame);
	mix(z, ev->ts_ns);
	mix(z, ev->quirks);
	if (ev->note)
		touch_str(z, ev->note);
	switch (ev->kind) {
	case IWD_EV_MPA_FRAME: {
		const struct mpa_frame *f = &ev->u.mpa.f;

		if (ev->u.mpa.len > MPA_FRAME_MAX_LEN)
			abort();
		check_range(z, ev->dir, 0, ev->u.mpa.len);
		mix(z, (uint64_t)(int64_t)ev->u.mpa.err);
		mix(z, (unsigned)f->reply | (unsigned)f->markers << 1 | (unsigned)f->crc << 2 |
			       (unsigned)f->reject << 3 | (unsigned)f->enhanced << 4 |
			       (unsigned)f->p2p << 5);
		mix(z, f->rev);
		mix(z, f->rtr);
		mix(z, (uint64_t)f->ird << 16 | f->ord);
		if (f->pd_len > MPA_PD_MAX)
			abort();
		touch(z, f->pd, f->pd_len);
		mix(z, ev->u.mpa.rpcrdma_pd);
		mix(z, ev->u.mpa.rpcrdma_version);
		mix(z, ev->u.mpa.rpcrdma_flags);
		mix(z, ev->u.mpa.rpcrdma_send_size);
		mix(z, ev->u.mpa.rpcrdma_recv_size);
		break;
	}
	case IWD_EV_FPDU: {
		const struct iwd_fpdu *p = ev->u.fpdu;

		check_range(z, ev->dir, p->off, p->wire_len);
		if (p->nmarkers > IWD_MARKERS_MAX || p->pad > 3 ||
		    p->wire_len < 6u + p->ulpdu_len + p->pad + 4u * p->nmarkers)
			abort();
		if (p->crc == IWD_CRC_OK && p->crc_rx != p->crc_calc)
			abort();
		if (p->crc == IWD_CRC_BAD && p->crc_rx == p->crc_calc)
			abort();
		mix(z, p->off);
		mix(z, p->wire_len);
		mix(z, p->crc);
		mix(z, p->crc_rx);
		for (unsigned i = 0; i < p->nmarkers; i++) {
			const struct iwd_marker *m = &p->markers[i];

			if (m->off < p->off || m->off + MPA_MARKER_LEN > p->off + p->wire_len)
				abort();
			mix(z, m->off);
			mix(z, (uint64_t)m->fpduptr << 1 | m->ok);
		}
		touch(z, p->ulpdu, p->ulpdu_len);
		if (p->payload_len && (p->payload < p->ulpdu ||
				       p->payload + p->payload_len > p->ulpdu + p->ulpdu_len))
			abort();
		touch(z, p->payload, p->payload_len);
		mix(z, p->ddp_ok);
		mix_ddp(z, &p->ddp);
		mix(z, (uint64_t)p->rdmap_rv << 8 | p->opcode);
		mix(z, p->rtr);
		touch_str(z, iwd_opcode_name(p->opcode));
		break;
	}
	case IWD_EV_MSG: {
		const struct iwd_msg *m = ev->u.msg;

		if (m->data_len > m->len || m->data_len > z->max_msg || m->segments == 0)
			abort();
		if (m->first_frame > m->last_frame || m->first_ts > m->last_ts)
			abort();
		mix(z, m->opcode);
		mix(z, m->tagged);
		mix(z, m->stag);
		mix(z, m->to);
		mix(z, (uint64_t)m->qn << 32 | m->msn);
		mix(z, m->len);
		mix(z, m->segments);
		mix(z, (unsigned)m->crc_bad << 1 | m->rtr);
		mix_rreq(z, &m->rreq);
		mix(z, m->areq.aop);
		mix(z, m->areq.req_id);
		mix(z, m->areq.stag);
		mix(z, m->areq.to);
		mix(z, m->areq.add_swap ^ m->areq.add_swap_mask);
		mix(z, m->areq.compare ^ m->areq.compare_mask);
		mix(z, m->aresp.req_id);
		mix(z, m->aresp.orig);
		touch(z, m->imm_data, sizeof(m->imm_data));
		if (m->opcode == RDMAP_OP_TERMINATE)
			touch_term(z, &m->term);
		mix(z, (uint64_t)m->read_rtt_ns);
		touch(z, m->data, m->data_len);
		mix(z, m->truncated);
		touch_str(z, iwd_opcode_name(m->opcode));
		break;
	}
	case IWD_EV_GAP:
	case IWD_EV_UNDECODED:
		if (ev->u.gap.len == 0)
			abort();
		check_range(z, ev->dir, ev->u.gap.off, ev->u.gap.len);
		mix(z, ev->u.gap.off);
		mix(z, ev->u.gap.len);
		break;
	case IWD_EV_CLOSE:
		mix(z, ev->u.close);
		break;
	default:
		abort();
	}
}

/* Decode the records once; split != 0 cuts every data record in two. */
static uint64_t run(const uint8_t *data, size_t size, bool split, unsigned long *events)
{
	uint8_t mode = data[0];
	struct iwd_iwarp_cfg cfg = {
		.mid = {.enabled = mode & 1,
			.crc = mode & 2,
			.markers = {(mode & 4) != 0, (mode & 8) != 0}},
		.keep_fpdus = mode & 16,
		.max_msg = mode & 32 ? 100 : 0,
		.port = mode & 128  ? 4791
			: mode & 64 ? PORT
				    : 0,
	};
	struct iwd_flow flow = {.id = 1, .af = 2, .port = {40000, PORT}, .syn_seen = true};
	struct fz z = {.hash = 0xcbf29ce484222325ull, .max_msg = cfg.max_msg ? 100 : 1u << 20};
	struct iwd_sink sink = {.event = on_event, .user = &z};
	struct iwd_iwarp *c = iwd_iwarp_create(&cfg, &flow, &sink);
	const struct iwd_conn_info *info;
	size_t pos = 1;
	uint64_t frame = 0;

	if (!c)
		return 0;
	while (pos + 3 <= size) {
		uint8_t ctl = data[pos];
		int dir = ctl & 1;
		size_t len = (size_t)data[pos + 1] << 8 | data[pos + 2];

		pos += 3;
		frame++;
		if (ctl & 2) {
			z.fed[dir] += len;
			iwd_iwarp_gap(c, dir, z.fed[dir] - len, len, frame * 1000, frame);
		} else {
			struct iwd_term t;

			if (len > size - pos)
				len = size - pos;
			z.fed[dir] += len;
			if (split && len > 1) {
				size_t cut = len / 3 + 1;

				iwd_iwarp_data(c, dir, z.fed[dir] - len, data + pos, cut,
					       frame * 1000, frame);
				iwd_iwarp_data(c, dir, z.fed[dir] - len + cut, data + pos + cut,
					       len - cut, frame * 1000, frame);
			} else {
				iwd_iwarp_data(c, dir, z.fed[dir] - len, data + pos, len,
					       frame * 1000, frame);
			}
			iwd_term_read(data + pos, len, &t);
			touch_term(&z, &t);
			pos += len;
		}
		if (ctl & 4)
			iwd_iwarp_close(c, dir, IWD_CLOSE_FIN, frame * 1000);
	}
	info = iwd_iwarp_info(c);
	if (!info)
		abort();
	/* nothing is said about a connection that is not iWARP */
	if (!info->iwarp && z.events)
		abort();
	if ((mode & 128) && (info->iwarp || z.events))
		abort();
	touch(&z, info->req.pd, info->req.pd_len);
	touch(&z, info->rep.pd, info->rep.pd_len);
	mix(&z, info->fpdu_start[0] ^ info->fpdu_start[1] << 1);
	iwd_iwarp_close(c, 0, IWD_CLOSE_END, frame * 1000 + 1);
	iwd_iwarp_close(c, 1, IWD_CLOSE_RST, frame * 1000 + 2);
	iwd_iwarp_destroy(c);
	*events = z.events;
	return z.hash;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long n1 = 0, n2 = 0;
	uint64_t h1, h2;

	if (size < 1)
		return 0;
	h1 = run(data, size, false, &n1);
	h2 = run(data, size, true, &n2);
	/* the events do not depend on how the octets were cut */
	if (h1 != h2 || n1 != n2)
		abort();
	return 0;
}
