/* SPDX-License-Identifier: MIT */
/*
 * fuzz_iwd_tcp.c - iwdump's packet parser and TCP reassembly on captured input
 * (tools/iwdump/iwd_net.c, iwd_tcp.c).
 *
 * Input: octet 0 picks the link type (link_types[] below, modulo its size),
 * then records of [2-octet big-endian length][packet].  The length's top bit
 * says the capture cut the packet (its wire length is then larger than what
 * is present, so the IP length decides); the low 15 bits are the octets
 * present.  Each packet goes through iwd_net_parse() and, when it is TCP,
 * iwd_tcp_segment() with a 64 KiB out-of-order bound (reached easily);
 * then iwd_tcp_finish() and iwd_tcp_destroy().  Every third connection's
 * open() returns NULL.
 *
 * Checked (abort() on a violation), the callback contract of iwd_tcp.c:
 * open() before anything else of a connection; per direction data() and
 * gap() start where the one before ended (offsets 0, 1, 2, ... with no hole
 * and no overlap) and are not empty; close() once per direction; no call
 * after a connection's second close; after iwd_tcp_finish() every opened
 * connection is closed; the gap statistics add up.  A parsed segment's
 * payload lies inside the packet and len <= wirelen.  ASan/UBSan catch the
 * rest (the per-connection state is freed at the second close, so a late
 * call is a use after free).
 *
 * Seeds: fuzz/corpus/fuzz_iwd_tcp, written by fuzz/tools/gen_iwd_tcp_seeds.py
 * from the packets of the Linux NFS/RDMA captures in test/captures.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "iwd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_OOO  (64u << 10)
#define FZ_CUT	    0x8000u
#define FZ_CUT_MORE 65536u /* wire octets beyond those present in a cut packet */
#define FZ_MAGIC    0x69776474u

static const int link_types[] = {0, 1, 12, 14, 101, 108, 113, 228, 229, 276};

struct fz {
	uint64_t opened, live, gaps, gap_octets;
};

struct fz_conn {
	uint32_t magic;
	struct fz *fz;
	uint64_t id;
	uint64_t next[2];
	bool closed[2];
};

static void *fz_open(void *user, const struct iwd_flow *flow, uint64_t ts_ns)
{
	struct fz *fz = user;
	fz->opened++;
	if (flow->id != fz->opened || (flow->af != AF_INET && flow->af != AF_INET6))
		abort();
	if (flow->id % 3 == 0)
		return NULL;
	struct fz_conn *c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->magic = FZ_MAGIC;
	c->fz = fz;
	c->id = flow->id;
	fz->live++;
	return c;
}

static struct fz_conn *fz_conn(void *conn, int dir)
{
	struct fz_conn *c = conn;
	if (!c || c->magic != FZ_MAGIC || (dir != 0 && dir != 1) || c->closed[dir])
		abort();
	return c;
}

static void fz_data(void *conn, int dir, uint64_t off, const uint8_t *p, size_t n, uint64_t ts_ns,
		    uint64_t frame)
{
	struct fz_conn *c = fz_conn(conn, dir);
	if (off != c->next[dir] || n == 0 || !p)
		abort();
	/* every octet readable (ASan) */
	volatile uint8_t sink = p[0] ^ p[n - 1];
	(void)sink;
	c->next[dir] += n;
}

static void fz_gap(void *conn, int dir, uint64_t off, uint64_t n, uint64_t ts_ns, uint64_t frame)
{
	struct fz_conn *c = fz_conn(conn, dir);
	if (off != c->next[dir] || n == 0)
		abort();
	c->next[dir] += n;
	c->fz->gaps++;
	c->fz->gap_octets += n;
}

static void fz_close(void *conn, int dir, enum iwd_close_how how, uint64_t ts_ns)
{
	struct fz_conn *c = fz_conn(conn, dir);
	if (how != IWD_CLOSE_FIN && how != IWD_CLOSE_RST && how != IWD_CLOSE_END &&
	    how != IWD_CLOSE_REUSED)
		abort();
	c->closed[dir] = true;
	if (c->closed[0] && c->closed[1]) {
		c->fz->live--;
		c->magic = 0;
		free(c);
	}
}

static const struct iwd_tcp_ops fz_ops = {
	.open = fz_open,
	.data = fz_data,
	.gap = fz_gap,
	.close = fz_close,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int link = link_types[data[0] % (sizeof(link_types) / sizeof(link_types[0]))];
	struct fz fz = {0};
	struct iwd_tcp *t = iwd_tcp_create(&fz_ops, &fz, FZ_MAX_OOO);
	if (!t)
		return 0;

	uint64_t frame = 0;
	size_t i = 1;
	while (size - i >= 2) {
		unsigned hdr = (unsigned)data[i] << 8 | data[i + 1];
		size_t caplen = hdr & ~FZ_CUT;
		i += 2;
		if (caplen > size - i)
			caplen = size - i;
		size_t wirelen = hdr & FZ_CUT ? caplen + FZ_CUT_MORE : caplen;
		/* an exact-size copy, so ASan sees a read past the packet */
		uint8_t *pkt = malloc(caplen ? caplen : 1);
		if (!pkt)
			abort();
		memcpy(pkt, data + i, caplen);
		i += caplen;
		frame++;

		struct iwd_seg seg;
		if (iwd_net_parse(link, pkt, caplen, wirelen, frame, frame * 1000, &seg) == 1) {
			if (seg.len > seg.wirelen || seg.payload < pkt ||
			    (size_t)(seg.payload - pkt) + seg.len > caplen ||
			    seg.wirelen > wirelen || seg.frame != frame)
				abort();
			iwd_tcp_segment(t, &seg);
		}
		free(pkt);
	}

	iwd_tcp_finish(t, (frame + 1) * 1000);
	struct iwd_tcp_stats st;
	iwd_tcp_get_stats(t, &st);
	if (fz.live != 0 || st.connections != fz.opened || st.gaps < fz.gaps ||
	    st.gap_octets < fz.gap_octets)
		abort();
	iwd_tcp_destroy(t);
	return 0;
}
