/* SPDX-License-Identifier: MIT */
/*
 * ipf_proto.c - iwperf's wire protocol: encode and decode of HELLO, WELCOME
 * and the control messages, the TCP Read request, the data pattern.
 *
 * Theory of operation: see ipf_proto.h.  Every message starts with the magic
 * (offset 0, 4 octets); HELLO and WELCOME go on with the version (offset 4).
 * The other integer fields are listed per message in a table (offset, width,
 * struct member; the member is as wide as the field), which put_fields()
 * and get_fields() walk: the tables below are the layouts of iwperf(1),
 * CONTROL PROTOCOL.  What no table names is reserved and zero, except a
 * refusal's reason (WELCOME offset 8 to 64: printable ASCII, NUL-padded).
 */
#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "iw_bytes.h"
#include "ipf_proto.h"

static const struct {
	const char *name, *text;
} err_tab[] = {
	[0] = {"IPF_OK", "no error"},
	[-IPF_E_SHORT] = {"IPF_E_SHORT", "message too short"},
	[-IPF_E_MAGIC] = {"IPF_E_MAGIC", "not an iwperf message"},
	[-IPF_E_VERSION] = {"IPF_E_VERSION", "iwperf protocol version mismatch"},
	[-IPF_E_LONG] = {"IPF_E_LONG", "octets after the end of the message"},
	[-IPF_E_RESERVED] = {"IPF_E_RESERVED", "reserved or unused field not zero"},
	[-IPF_E_OP] = {"IPF_E_OP", "unknown operation"},
	[-IPF_E_FLAGS] = {"IPF_E_FLAGS", "unknown flags"},
	[-IPF_E_SIZE] = {"IPF_E_SIZE", "message size out of range"},
	[-IPF_E_DEPTH] = {"IPF_E_DEPTH", "depth out of range"},
	[-IPF_E_QPS] = {"IPF_E_QPS", "QP count out of range"},
	[-IPF_E_NOBUF] = {"IPF_E_NOBUF", "RDMA Write ping-pong without a target buffer"},
	[-IPF_E_STATUS] = {"IPF_E_STATUS", "unknown status"},
	[-IPF_E_REASON] = {"IPF_E_REASON", "refusal reason is not printable text"},
	[-IPF_E_LENGTH] = {"IPF_E_LENGTH", "buffer length out of range"},
	[-IPF_E_CREDITS] = {"IPF_E_CREDITS", "credit offer out of range"},
	[-IPF_E_TYPE] = {"IPF_E_TYPE", "unknown control message type"},
	[-IPF_E_COUNT] = {"IPF_E_COUNT", "credit count out of range"},
	[-IPF_E_COMBO] = {"IPF_E_COMBO", "operation not available with these flags"},
};

const char *ipf_errname(int err)
{
	return err <= 0 && err >= IPF_E_LAST ? err_tab[-err].name : "IPF_E_?";
}

const char *ipf_strerror(int err)
{
	return err <= 0 && err >= IPF_E_LAST ? err_tab[-err].text : "unknown error";
}

static const char *const op_names[] = {
	[IPF_OP_WRITE] = "write",	 [IPF_OP_READ] = "read",
	[IPF_OP_SEND] = "send",		 [IPF_OP_FADD] = "atomic-fadd",
	[IPF_OP_CSWAP] = "atomic-cswap", [IPF_OP_WRITE_IMM] = "write-imm",
};

static const char *const res_names[] = {
	[IPF_RES_OK] = "ok",
	[IPF_RES_VERIFY] = "data verification failed",
	[IPF_RES_PROTO] = "protocol error",
};

const char *ipf_op_name(int op)
{
	return op >= IPF_OP_WRITE && op <= IPF_OP_LAST ? op_names[op] : "?";
}

const char *ipf_res_status_str(int status)
{
	return status >= IPF_RES_OK && status <= IPF_RES_PROTO ? res_names[status]
							       : "unknown status";
}

/* One integer field: offset and width on the wire, offset of the struct member. */
struct field {
	uint8_t off, width;
	uint16_t member;
};

/* A field's width and member, for the rows {offset, WIDTH_AND_MEMBER}. */
#define FIELD(type, m) sizeof(((type *)0)->m), offsetof(type, m)
#define HF(m)	       FIELD(struct ipf_hello, m)
#define WF(m)	       FIELD(struct ipf_welcome, m)
#define CF(m)	       FIELD(struct ipf_ctrl, m)
#define NFIELDS(t)     (sizeof(t) / sizeof((t)[0]))

/* HELLO: reserved 7, 20..24 and 56..64. */
static const struct field hello_fields[] = {
	{5, HF(op)},	    {6, HF(flags)},   {8, HF(size)},	 {12, HF(depth)},
	{16, HF(qp_index)}, {18, HF(qps)},    {24, HF(seed)},	 {32, HF(addr)},
	{40, HF(rkey)},	    {44, HF(length)}, {48, HF(test_id)},
};

/* WELCOME: the status; accepted, the offer (reserved 6..8 and 36..64). */
static const struct field welcome_status[] = {{5, WF(status)}};
static const struct field welcome_fields[] = {
	{8, WF(addr)}, {16, WF(length)}, {24, WF(rkey)}, {28, WF(credits)}, {32, WF(credit_batch)},
};

/* DONE, CREDIT, RESULT: reserved 6..8 (and the padding 40..48). */
static const struct field ctrl_fields[] = {
	{4, CF(type)},	 {5, CF(status)}, {8, CF(count)},
	{16, CF(bytes)}, {24, CF(bad)},	  {32, CF(bad_off)},
};

static void put_fields(const struct field *f, size_t n, const void *s, uint8_t *p)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *m = (const uint8_t *)s + f[i].member;
		uint64_t v = 0;

		switch (f[i].width) {
		case 1:
			v = *m;
			break;
		case 2:
			v = *(const uint16_t *)(const void *)m;
			break;
		case 4:
			v = *(const uint32_t *)(const void *)m;
			break;
		default:
			v = *(const uint64_t *)(const void *)m;
			break;
		}
		for (unsigned k = f[i].width; k-- > 0; v >>= 8)
			p[f[i].off + k] = (uint8_t)v;
	}
}

static void get_fields(const struct field *f, size_t n, const uint8_t *p, void *s)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *m = (uint8_t *)s + f[i].member;
		uint64_t v = 0;

		for (unsigned k = 0; k < f[i].width; k++)
			v = v << 8 | p[f[i].off + k];
		switch (f[i].width) {
		case 1:
			*m = (uint8_t)v;
			break;
		case 2:
			*(uint16_t *)(void *)m = (uint16_t)v;
			break;
		case 4:
			*(uint32_t *)(void *)m = (uint32_t)v;
			break;
		default:
			*(uint64_t *)(void *)m = v;
			break;
		}
	}
}

/* The magic, and the version for HELLO and WELCOME; the rest zero. */
static void put_head(uint8_t *p, size_t len, bool version)
{
	memset(p, 0, len);
	iw_put_be32(p, IPF_MAGIC);
	if (version)
		p[4] = IPF_VERSION;
}

/* true when p[from..to) is all zero */
static bool zero(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * The head every message starts with: at least `min` octets, the magic, the
 * version (when `version`), then at most `max` octets.
 */
static int check_head(const uint8_t *p, size_t len, size_t min, size_t max, bool version)
{
	if (len < min)
		return IPF_E_SHORT;
	if (iw_get_be32(p) != IPF_MAGIC)
		return IPF_E_MAGIC;
	if (version && p[4] != IPF_VERSION)
		return IPF_E_VERSION;
	if (len > max)
		return IPF_E_LONG;
	return IPF_OK;
}

/* ---------------------------------------------------------------------- */
/* HELLO                                                                   */
/* ---------------------------------------------------------------------- */

/* Does the test have a client buffer the server writes into? */
static bool hello_has_buffer(const struct ipf_hello *h)
{
	return h->op == IPF_OP_WRITE && (h->flags & IPF_HF_PINGPONG) && !(h->flags & IPF_HF_TCP);
}

void ipf_hello_encode(const struct ipf_hello *h, uint8_t *p)
{
	struct ipf_hello e = *h;

	if (!hello_has_buffer(h))
		e.addr = 0;
	put_head(p, IPF_HELLO_LEN, true);
	put_fields(hello_fields, NFIELDS(hello_fields), &e, p);
}

int ipf_hello_decode(const uint8_t *p, size_t len, struct ipf_hello *h)
{
	struct ipf_hello d;
	int rc = check_head(p, len, IPF_HELLO_LEN, IPF_HELLO_LEN, true);

	if (rc)
		return rc;
	if (p[7] || !zero(p, 20, 24) || !zero(p, 56, 64))
		return IPF_E_RESERVED;
	memset(&d, 0, sizeof(d));
	get_fields(hello_fields, NFIELDS(hello_fields), p, &d);
	if (d.op < IPF_OP_WRITE || d.op > IPF_OP_LAST)
		return IPF_E_OP;
	if (d.flags & ~IPF_HF_KNOWN)
		return IPF_E_FLAGS;
	if (d.size < 1 || d.size > IPF_SIZE_MAX ||
	    (ipf_op_atomic(d.op) && d.size != IPF_ATOMIC_SIZE))
		return IPF_E_SIZE;
	if (d.depth < 1 || d.depth > IPF_DEPTH_MAX)
		return IPF_E_DEPTH;
	if (d.qps < 1 || d.qps > IPF_QPS_MAX || d.qp_index >= d.qps)
		return IPF_E_QPS;
	/* RFC 7306 is iWARP's; a write-imm ping-pong is not defined */
	if ((ipf_op_rfc7306(d.op) && (d.flags & IPF_HF_TCP)) ||
	    (d.op == IPF_OP_WRITE_IMM && (d.flags & IPF_HF_PINGPONG)) ||
	    ((d.flags & IPF_HF_WAIT_MEM) && !hello_has_buffer(&d)))
		return IPF_E_COMBO;
	if (hello_has_buffer(&d)) {
		if (d.length < d.size || !d.rkey)
			return IPF_E_NOBUF;
	} else {
		if (d.rkey || d.length)
			return IPF_E_RESERVED;
		d.addr = 0; /* not checked: older clients sent their buffer's address */
	}
	*h = d;
	return IPF_OK;
}

/* ---------------------------------------------------------------------- */
/* WELCOME                                                                 */
/* ---------------------------------------------------------------------- */

void ipf_welcome_encode(const struct ipf_welcome *w, uint8_t *p)
{
	put_head(p, IPF_WELCOME_LEN, true);
	put_fields(welcome_status, NFIELDS(welcome_status), w, p);
	if (w->status)
		memcpy(p + IPF_REASON_OFF, w->reason, strnlen(w->reason, IPF_REASON_MAX));
	else
		put_fields(welcome_fields, NFIELDS(welcome_fields), w, p);
}

void ipf_welcome_refusal(const char *why, uint8_t *p)
{
	struct ipf_welcome w;

	memset(&w, 0, sizeof(w));
	w.status = IPF_WELCOME_REFUSED;
	snprintf(w.reason, sizeof(w.reason), "%s", why);
	ipf_welcome_encode(&w, p);
}

/* Printable ASCII, at least one octet, then NUL octets only. */
static int reason_decode(const uint8_t *p, char *out)
{
	size_t n = 0;

	while (n < IPF_REASON_MAX && p[n] >= 0x20 && p[n] <= 0x7e)
		n++;
	if (!n || !zero(p, n, IPF_REASON_MAX))
		return IPF_E_REASON;
	memcpy(out, p, n);
	out[n] = '\0';
	return IPF_OK;
}

int ipf_welcome_decode(const uint8_t *p, size_t len, struct ipf_welcome *w)
{
	struct ipf_welcome d;
	int rc = check_head(p, len, IPF_WELCOME_LEN, IPF_WELCOME_LEN, true);

	if (rc)
		return rc;
	if (p[6] || p[7])
		return IPF_E_RESERVED;
	memset(&d, 0, sizeof(d));
	get_fields(welcome_status, NFIELDS(welcome_status), p, &d);
	if (d.status == IPF_WELCOME_REFUSED) {
		rc = reason_decode(p + IPF_REASON_OFF, d.reason);
		if (rc)
			return rc;
		*w = d;
		return IPF_OK;
	}
	if (d.status != IPF_WELCOME_OK)
		return IPF_E_STATUS;
	if (!zero(p, 36, 64))
		return IPF_E_RESERVED;
	get_fields(welcome_fields, NFIELDS(welcome_fields), p, &d);
	if (d.length > IPF_MEM_MAX)
		return IPF_E_LENGTH;
	if (d.credits > IPF_CREDITS_MAX || d.credit_batch > d.credits ||
	    !d.credits != !d.credit_batch)
		return IPF_E_CREDITS;
	*w = d;
	return IPF_OK;
}

/* ---------------------------------------------------------------------- */
/* Control messages, the TCP Read request                                  */
/* ---------------------------------------------------------------------- */

void ipf_ctrl_encode(const struct ipf_ctrl *c, uint8_t *p, size_t len)
{
	put_head(p, len, false);
	put_fields(ctrl_fields, NFIELDS(ctrl_fields), c, p);
}

int ipf_ctrl_decode(const uint8_t *p, size_t len, struct ipf_ctrl *c)
{
	struct ipf_ctrl d;
	int rc = check_head(p, len, IPF_CTRL_LEN, IPF_CTRL_LEN_ALT, false);

	if (rc)
		return rc;
	if (len != IPF_CTRL_LEN && len != IPF_CTRL_LEN_ALT)
		return IPF_E_LONG;
	if (p[6] || p[7] || !zero(p, IPF_CTRL_LEN, len))
		return IPF_E_RESERVED;
	memset(&d, 0, sizeof(d));
	get_fields(ctrl_fields, NFIELDS(ctrl_fields), p, &d);
	switch (d.type) {
	case IPF_CTRL_DONE:
	case IPF_CTRL_CREDIT:
		if (d.status)
			return IPF_E_STATUS;
		if (d.bad || d.bad_off || (d.type == IPF_CTRL_CREDIT && d.bytes))
			return IPF_E_RESERVED;
		if (d.type == IPF_CTRL_CREDIT && (!d.count || d.count > IPF_CREDITS_MAX))
			return IPF_E_COUNT;
		break;
	case IPF_CTRL_RESULT:
		if (d.status > IPF_RES_PROTO)
			return IPF_E_STATUS;
		if (d.status == IPF_RES_OK && (d.bad || d.bad_off))
			return IPF_E_RESERVED;
		break;
	default:
		return IPF_E_TYPE;
	}
	*c = d;
	return IPF_OK;
}

int ipf_decode(enum ipf_kind kind, const uint8_t *p, size_t len, union ipf_msg *m)
{
	switch (kind) {
	case IPF_KIND_HELLO:
		return ipf_hello_decode(p, len, &m->hello);
	case IPF_KIND_WELCOME:
		return ipf_welcome_decode(p, len, &m->welcome);
	default:
		return ipf_ctrl_decode(p, len, &m->ctrl);
	}
}

void ipf_encode(enum ipf_kind kind, const union ipf_msg *m, uint8_t *p, size_t len)
{
	switch (kind) {
	case IPF_KIND_HELLO:
		ipf_hello_encode(&m->hello, p);
		break;
	case IPF_KIND_WELCOME:
		ipf_welcome_encode(&m->welcome, p);
		break;
	default:
		ipf_ctrl_encode(&m->ctrl, p, len);
		break;
	}
}

void ipf_req_encode(uint64_t index, uint8_t *p)
{
	iw_put_be64(p, index);
}

uint64_t ipf_req_decode(const uint8_t *p)
{
	return iw_get_be64(p);
}

/* ---------------------------------------------------------------------- */
/* Data pattern                                                            */
/* ---------------------------------------------------------------------- */

uint64_t ipf_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t ipf_msg_key(uint64_t seed, uint64_t index)
{
	return ipf_mix64(seed ^ ipf_mix64(index));
}

static inline uint64_t pat_word(uint64_t key, uint64_t w)
{
	return ipf_mix64(key + w * 0xd1b54a32d192ed03ull);
}

/* Word w of the pattern, octet 0 first (little-endian). */
static inline void pat_octets(uint64_t key, uint64_t w, uint8_t out[8])
{
	uint64_t v = htole64(pat_word(key, w));

	memcpy(out, &v, 8);
}

void ipf_pat_fill(uint8_t *p, size_t len, uint64_t key)
{
	uint8_t o[8];
	size_t w;

	for (w = 0; w * 8 + 8 <= len; w++)
		pat_octets(key, w, p + w * 8);
	if (len % 8) {
		pat_octets(key, w, o);
		memcpy(p + w * 8, o, len % 8);
	}
}

int64_t ipf_pat_check(const uint8_t *p, size_t len, uint64_t key)
{
	uint8_t o[8];
	size_t w;

	/* whole words with a constant-size compare (one 64-bit load), then the tail */
	for (w = 0; w * 8 + 8 <= len; w++) {
		pat_octets(key, w, o);
		if (memcmp(p + w * 8, o, 8))
			break;
	}
	if (w * 8 >= len)
		return -1;
	pat_octets(key, w, o);
	for (size_t j = w * 8; j < len && j < w * 8 + 8; j++)
		if (p[j] != o[j - w * 8])
			return (int64_t)j;
	return -1;
}
