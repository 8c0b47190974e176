/* SPDX-License-Identifier: MIT */
/*
 * fuzz_gw_rpc.c - libFuzzer target for iwnfsgw's record-marking reader and
 * the RPC header fields it reads (tools/iwnfsgw/gw_rpc.c): what an NFS
 * client (client mode) or the NFS server (server mode) sends the gateway
 * over TCP, RFC 5531 §11 record marking around RFC 5531 §9 messages.
 *
 * Input: octets 0-1 the record bound (16 + the value), octet 2 the seed of
 * the chunk sizes, the rest the byte stream.  Properties (abort() on
 * violation):
 *   - fed whole and fed in chunks of 1 to 64 octets, the reader hands up the
 *     same records and stops with the same status;
 *   - those records are the ones an independent reading of the stream here
 *     finds, and the reader refuses (GW_RM_TOOBIG) exactly where a fragment
 *     would take the record past its bound - before it allocates for it;
 *   - a record never exceeds the bound, nor the reader's buffer;
 *   - the header accessors read only a record of GW_RPC_HDR_MIN octets or
 *     more, and gw_rpc_call_info only a call of 24 octets or more; a
 *     SYSTEM_ERR reply built for a record's XID carries that XID.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 4096

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* What one run saw: a digest of every record, their count, the final status. */
struct run {
	uint64_t digest[MAX_RECORDS];
	size_t lens[MAX_RECORDS];
	size_t n;
	int status; /* GW_RM_MORE or a negative gw_rm_status */
};

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void record(struct run *out, const uint8_t *rec, size_t len, uint32_t max)
{
	uint8_t err[GW_RPC_ERR_REPLY_LEN];
	uint32_t prog, vers, proc;

	check(len <= max);
	if (len >= GW_RPC_HDR_MIN) {
		uint32_t xid = gw_rpc_xid(rec);
		bool call = gw_rpc_call_info(rec, len, &prog, &vers, &proc);

		check(!call || (len >= 24 && gw_rpc_type(rec) == GW_RPC_CALL));
		check(gw_rpc_system_err(err, xid) == GW_RPC_ERR_REPLY_LEN);
		check(gw_rpc_xid(err) == xid && gw_rpc_type(err) == GW_RPC_REPLY);
	}
	if (out->n < MAX_RECORDS) {
		out->digest[out->n] = fnv(rec, len);
		out->lens[out->n] = len;
	}
	out->n++;
}

/* The reader under test, fed in chunks (chunk 0: whole). */
static void run_reader(const uint8_t *p, size_t n, uint32_t max, unsigned seed, struct run *out)
{
	struct gw_rm_reader r;
	size_t off = 0;
	unsigned s = seed | 1;

	memset(out, 0, sizeof(*out));
	out->status = GW_RM_MORE;
	gw_rm_init(&r, max);
	while (off < n) {
		size_t chunk = n - off, pos = 0;

		if (seed) {
			s = s * 1103515245u + 12345u;
			chunk = 1 + (s >> 16) % 64;
			if (chunk > n - off)
				chunk = n - off;
		}
		while (pos < chunk) {
			size_t used = 0;
			int rc = gw_rm_input(&r, p + off + pos, chunk - pos, &used);

			check(used <= chunk - pos);
			pos += used;
			if (rc == GW_RM_RECORD) {
				check(r.len <= r.cap || r.len == 0);
				record(out, r.rec, r.len, max);
				continue;
			}
			if (rc < 0) {
				out->status = rc;
				gw_rm_fini(&r);
				return;
			}
			check(rc == GW_RM_MORE && pos == chunk);
		}
		off += chunk;
	}
	gw_rm_fini(&r);
}

/* An independent reading of the same stream. */
static void run_reference(const uint8_t *p, size_t n, uint32_t max, struct run *out)
{
	static uint8_t rec[1u << 17];
	size_t off = 0, len = 0;

	memset(out, 0, sizeof(*out));
	out->status = GW_RM_MORE;
	while (n - off >= 4) {
		uint32_t w = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
			     (uint32_t)p[off + 2] << 8 | p[off + 3];
		uint32_t flen = w & 0x7fffffffu;
		size_t take;

		off += 4;
		if (flen > max || len + flen > max) {
			out->status = GW_RM_TOOBIG;
			return;
		}
		take = flen < n - off ? flen : n - off;
		memcpy(rec + len, p + off, take);
		len += take;
		off += take;
		if (take < flen)
			return; /* the stream ends inside the fragment */
		if (w & 0x80000000u) {
			record(out, rec, len, max);
			len = 0;
		}
	}
}

static bool same(const struct run *a, const struct run *b)
{
	size_t k = a->n < MAX_RECORDS ? a->n : MAX_RECORDS;

	if (a->n != b->n || a->status != b->status)
		return false;
	for (size_t i = 0; i < k; i++)
		if (a->digest[i] != b->digest[i] || a->lens[i] != b->lens[i])
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run whole, chunked, ref;
	uint32_t max;
	unsigned seed;

	if (size < 3)
		return 0;
	/* bound 16 .. 65551: the reference's buffer holds any record */
	max = 16u + ((uint32_t)data[0] << 8 | data[1]);
	seed = data[2];
	data += 3;
	size -= 3;
	run_reader(data, size, max, 0, &whole);
	run_reader(data, size, max, seed ? seed : 7, &chunked);
	run_reference(data, size, max, &ref);
	check(same(&whole, &chunked));
	check(same(&whole, &ref));
	return 0;
}
