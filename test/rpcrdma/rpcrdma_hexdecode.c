/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_hexdecode.c - test-only filter for rpcrdma_tshark.py: each line of
 * stdin is the hex of one RDMAP Send payload (an RPC-over-RDMA message, RFC
 * 8166 §4); each output line is one JSON object with every field our decoder
 * produced, so a script can compare them with another decoder's (tshark's).
 *
 *   {"status": "ok" | "IW_ERPC_...", "xid": N, "vers": N, "credits": N,
 *    "proc": N, "hdr_len": N,
 *    "read": [[position, handle, length, offset], ...],      (flat, wire order)
 *    "write": [[[handle, length, offset], ...], ...],
 *    "reply": [[handle, length, offset], ...] | null,
 *    "align": N, "thresh": N,                                (RDMA_MSGP)
 *    "err": N, "vers_low": N, "vers_high": N,                (RDMA_ERROR)
 *    "rpc": {"status", "xid", "msg_type", "prog", "vers", "proc",
 *            "reply_stat", "accept_stat", "body_off"}}       (RDMA_MSG payload)
 *
 * A line that is not hex prints {"status": "badhex"}.  Exit status 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#define LINE_MAX_OCTETS 70000

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (*s && *s != '\n' && *s != '\r') {
		int hi = hexval(s[0]), lo = s[1] ? hexval(s[1]) : -1;

		if (hi < 0 || lo < 0 || n >= cap)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return (long)n;
}

static void print_seg(const struct rpcrdma_segment *s)
{
	printf("[%u, %u, %llu]", s->handle, s->length, (unsigned long long)s->offset);
}

static void print_counted(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *c)
{
	printf("[");
	for (size_t i = 0; i < c->nseg; i++) {
		printf(i ? ", " : "");
		print_seg(&h->segs[c->first + i]);
	}
	printf("]");
}

static void print_hdr(const struct rpcrdma_hdr *h)
{
	size_t k = 0;

	printf(", \"xid\": %u, \"vers\": %u, \"credits\": %u, \"proc\": %u, \"hdr_len\": %u",
	       h->xid, h->vers, h->credits, h->proc, h->hdr_len);
	printf(", \"read\": [");
	for (size_t c = 0; c < h->n_read; c++)
		for (size_t i = 0; i < h->read[c].nseg; i++) {
			const struct rpcrdma_segment *s = &h->segs[h->read[c].first + i];

			printf("%s[%u, %u, %u, %llu]", k++ ? ", " : "", h->read[c].position,
			       s->handle, s->length, (unsigned long long)s->offset);
		}
	printf("], \"write\": [");
	for (size_t c = 0; c < h->n_write; c++) {
		printf(c ? ", " : "");
		print_counted(h, &h->write[c]);
	}
	printf("], \"reply\": ");
	if (h->has_reply)
		print_counted(h, &h->reply);
	else
		printf("null");
	printf(", \"align\": %u, \"thresh\": %u, \"err\": %u, \"vers_low\": %u, \"vers_high\": %u",
	       h->msgp_align, h->msgp_thresh, h->err, h->vers_low, h->vers_high);
}

static void print_rpc(const uint8_t *p, size_t len)
{
	struct rpcrdma_rpcinfo ri;
	int r = rpcrdma_rpc_parse(p, len, &ri);

	printf(", \"rpc\": {\"status\": \"%s\", \"xid\": %u, \"msg_type\": %u, \"prog\": %u, "
	       "\"vers\": %u, \"proc\": %u, \"reply_stat\": %u, \"accept_stat\": %u, "
	       "\"body_off\": %u}",
	       r ? rpcrdma_errname(r) : "ok", ri.xid, ri.msg_type, ri.prog, ri.vers, ri.proc,
	       ri.reply_stat, ri.accept_stat, ri.body_off);
}

int main(void)
{
	static char line[2 * LINE_MAX_OCTETS + 16];
	static uint8_t buf[LINE_MAX_OCTETS];

	while (fgets(line, sizeof(line), stdin)) {
		struct rpcrdma_hdr h;
		long n = unhex(line, buf, sizeof(buf));
		int r;

		if (n < 0) {
			printf("{\"status\": \"badhex\"}\n");
			continue;
		}
		r = rpcrdma_hdr_decode(buf, (size_t)n, &h);
		printf("{\"status\": \"%s\"", r >= 0 ? "ok" : rpcrdma_errname(r));
		print_hdr(&h);
		if (r >= 0 && h.proc == RDMA_MSG)
			print_rpc(buf + h.hdr_len, (size_t)n - h.hdr_len);
		printf("}\n");
	}
	return 0;
}
