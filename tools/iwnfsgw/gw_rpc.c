/* SPDX-License-Identifier: MIT */
/*
 * gw_rpc.c - ONC RPC record marking and header fields for iwnfsgw.
 *
 * Theory of operation.
 *
 * Over TCP, ONC RPC messages travel as records (RFC 5531 §11): a record is
 * one or more fragments, each a 4-octet big-endian header followed by that
 * many octets; the header's high bit marks the record's last fragment and
 * the low 31 bits are the fragment length.  Over RPC-over-RDMA there is no
 * record marking (RFC 8166 §4): the transport carries one whole RPC message
 * per Send (or chunk set), so the gateway turns each record into one message
 * and back.
 *
 * The reader is sans-I/O and gives the same result for any split of the
 * stream: it keeps the header octets it has seen and the length left of the
 * current fragment, and appends fragment data to the record buffer.  The
 * buffer grows by doubling but never past the configured bound (--max-record):
 * a record announced larger than that is refused before any allocation of
 * that size, since the length comes from the peer.  A zero-length fragment is
 * legal (RFC 5531 does not forbid it); a zero-length record is handed up and
 * the caller ignores it.
 *
 * Big fragments bypass the evbuffer: libevent 2.1 reads at most 4096 octets
 * per read(2) into it, 256 system calls per MiB, so once a fragment header is
 * in, gw_rm_recv reads the rest of the fragment straight from the socket into
 * the record buffer (one copy fewer, too).  gw_rm_read is a connection's
 * whole read step: the evbuffer first, then the socket, then the lowat.
 *
 * Big messages bypass the evbuffer on the way out as well: when nothing is
 * queued, gw_rm_send hands the record header and the message to one
 * sendmsg(2) straight from the caller's buffer, and copies into the
 * evbuffer only what the socket did not take (all of it when the socket
 * is full, still connecting or failing: the bufferevent then writes it or
 * reports the error as it always did).
 *
 * Wake-ups.  A 1 MiB NFS WRITE call or READ reply arrives in many TCP
 * segments, and waking for each costs more than copying it.  Once a fragment
 * header has announced how much is still to come, the socket's SO_RCVLOWAT is
 * raised to that (at most GW_LOWAT_MAX), so the kernel reports the socket
 * readable only when that much is there; between records it is 1 again.
 *
 * RPC header fields (RFC 5531 §9): the XID is the first word, msg_type the
 * second; a CALL continues with rpcvers, prog, vers, proc.  When the gateway
 * must answer a call itself (the backend is gone for good, the transport
 * could not carry the reply), it builds an accepted reply with accept_stat
 * SYSTEM_ERR (5) and an AUTH_NONE verifier: the client's call completes with
 * an error instead of hanging (RFC 5531 §9: "SYSTEM_ERR: errors like memory
 * allocation failure").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>

#include "gw_int.h"

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void gw_rm_init(struct gw_rm_reader *r, uint32_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
}

void gw_rm_fini(struct gw_rm_reader *r)
{
	free(r->rec);
	r->rec = NULL;
	r->len = r->cap = 0;
}

static int rm_reserve(struct gw_rm_reader *r, size_t need)
{
	size_t cap = r->cap ? r->cap : 4096;
	uint8_t *p;

	if (need <= r->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > r->max)
		cap = r->max; /* need ≤ max was checked by the caller */
	p = realloc(r->rec, cap);
	if (!p)
		return GW_RM_NOMEM;
	r->rec = p;
	r->cap = cap;
	return 0;
}

int gw_rm_input(struct gw_rm_reader *r, const uint8_t *p, size_t n, size_t *used)
{
	size_t off = 0;

	/* a record handed up by the previous call is gone now */
	if (r->frag_left == 0 && r->hdr_have == 0 && r->last) {
		r->len = 0;
		r->last = false;
	}
	while (off < n) {
		if (r->frag_left == 0 && r->hdr_have < 4) {
			size_t take = 4 - r->hdr_have;
			uint32_t w, flen;

			if (take > n - off)
				take = n - off;
			memcpy(r->hdr + r->hdr_have, p + off, take);
			r->hdr_have += (unsigned)take;
			off += take;
			if (r->hdr_have < 4)
				break;
			w = get_be32(r->hdr);
			flen = w & GW_RM_LEN_MASK;
			r->last = (w & GW_RM_LAST) != 0;
			/* bound before allocating: the length is the peer's word */
			if (flen > r->max || r->len > r->max - flen)
				return GW_RM_TOOBIG;
			if (rm_reserve(r, r->len + flen))
				return GW_RM_NOMEM;
			r->fragments++;
			r->frag_left = flen;
			if (flen == 0) {
				r->hdr_have = 0;
				if (r->last) {
					r->records++;
					*used = off;
					return GW_RM_RECORD;
				}
			}
			continue;
		}
		{
			size_t take = r->frag_left;

			if (take > n - off)
				take = n - off;
			memcpy(r->rec + r->len, p + off, take);
			r->len += take;
			r->frag_left -= (uint32_t)take;
			off += take;
			if (r->frag_left == 0) {
				r->hdr_have = 0;
				if (r->last) {
					r->records++;
					*used = off;
					return GW_RM_RECORD;
				}
			}
		}
	}
	*used = off;
	return GW_RM_MORE;
}

int gw_rm_drain(struct gw_rm_reader *r, struct evbuffer *in,
		int (*fn)(void *arg, uint8_t *rec, size_t len), void *arg)
{
	for (;;) {
		struct evbuffer_iovec v[8];
		int nv, i, st = GW_RM_MORE;
		size_t total = 0;

		if (evbuffer_get_length(in) == 0)
			return 0;
		nv = evbuffer_peek(in, -1, NULL, v, 8);
		if (nv > 8)
			nv = 8;
		for (i = 0; i < nv; i++) {
			size_t used = 0;

			st = gw_rm_input(r, v[i].iov_base, v[i].iov_len, &used);
			total += used;
			if (st != GW_RM_MORE)
				break;
		}
		if (st < 0)
			return st;
		evbuffer_drain(in, total);
		if (st == GW_RM_RECORD) {
			int rc = fn(arg, r->rec, r->len);

			if (rc < 0)
				return rc;
		} else if (nv < 8) {
			return 0; /* everything consumed */
		}
	}
}

int gw_rm_recv(struct gw_rm_reader *r, int fd)
{
	while (r->frag_left) {
		ssize_t n = recv(fd, r->rec + r->len, r->frag_left, MSG_DONTWAIT);

		if (n == 0)
			return GW_RM_EOF;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? GW_RM_MORE : GW_RM_ERR;
		}
		r->len += (size_t)n;
		r->frag_left -= (uint32_t)n;
	}
	r->hdr_have = 0;
	if (!r->last)
		return GW_RM_MORE;
	r->records++;
	return GW_RM_RECORD;
}

int gw_rm_read(struct gw_rm_reader *r, struct evbuffer *in, int fd,
	       int (*fn)(void *arg, uint8_t *rec, size_t len), void *arg)
{
	int rc, st;

	for (;;) {
		rc = gw_rm_drain(r, in, fn, arg);
		if (rc < 0)
			return rc;
		if (!r->frag_left)
			break;
		/* the rest of a large fragment (a WRITE call, a READ reply):
		 * straight from the socket */
		st = gw_rm_recv(r, fd);
		if (st == GW_RM_EOF || st == GW_RM_ERR)
			return st;
		if (st != GW_RM_RECORD)
			break; /* nothing more to read now */
		rc = fn(arg, r->rec, r->len);
		if (rc < 0)
			return rc;
	}
	gw_rm_lowat(r, fd);
	return 0;
}

void gw_rm_lowat(struct gw_rm_reader *r, int fd)
{
	uint32_t want = 1;

	if (r->frag_left)
		want = r->frag_left < GW_LOWAT_MAX ? r->frag_left : GW_LOWAT_MAX;
	if (want == r->lowat || fd < 0)
		return;
	/* only octets the peer must send to finish the current fragment: the
	 * socket cannot wait for data that never comes */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)) == 0)
		r->lowat = want;
}

int gw_rm_write(struct evbuffer *out, const void *msg, size_t len, uint32_t frag_max)
{
	const uint8_t *p = msg;
	uint8_t hdr[4];

	if (frag_max == 0 || frag_max > GW_RM_LEN_MASK)
		frag_max = GW_RM_LEN_MASK;
	do {
		size_t take = len > frag_max ? frag_max : len;

		put_be32(hdr, (uint32_t)take | (take == len ? GW_RM_LAST : 0));
		if (evbuffer_add(out, hdr, 4) || (take && evbuffer_add(out, p, take)))
			return -1;
		p += take;
		len -= take;
	} while (len);
	return 0;
}

int gw_rm_send(struct evbuffer *out, int fd, const void *msg, size_t len)
{
	uint8_t hdr[4];
	struct iovec iov[2] = {{hdr, 4}, {(void *)(uintptr_t)msg, len}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t n;
	size_t done;

	if (fd < 0 || len < GW_RM_DIRECT_MIN || len > GW_RM_LEN_MASK ||
	    evbuffer_get_length(out) != 0)
		return gw_rm_write(out, msg, len, 0);
	put_be32(hdr, (uint32_t)len | GW_RM_LAST);
	do
		n = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	done = n > 0 ? (size_t)n : 0;
	if (done < 4 && evbuffer_add(out, hdr + done, 4 - done))
		return -1;
	done = done > 4 ? done - 4 : 0;
	if (done < len && evbuffer_add(out, (const uint8_t *)msg + done, len - done))
		return -1;
	return 0;
}

uint32_t gw_rpc_xid(const uint8_t *msg)
{
	return get_be32(msg);
}

void gw_rpc_set_xid(uint8_t *msg, uint32_t xid)
{
	put_be32(msg, xid);
}

uint32_t gw_rpc_type(const uint8_t *msg)
{
	return get_be32(msg + 4);
}

bool gw_rpc_call_info(const uint8_t *msg, size_t len, uint32_t *prog, uint32_t *vers,
		      uint32_t *proc)
{
	if (len < 24 || gw_rpc_type(msg) != GW_RPC_CALL)
		return false;
	*prog = get_be32(msg + 12);
	*vers = get_be32(msg + 16);
	*proc = get_be32(msg + 20);
	return true;
}

size_t gw_rpc_system_err(uint8_t *out, uint32_t xid)
{
	put_be32(out, xid);
	put_be32(out + 4, GW_RPC_REPLY);
	put_be32(out + 8, 0);  /* MSG_ACCEPTED */
	put_be32(out + 12, 0); /* verifier AUTH_NONE */
	put_be32(out + 16, 0); /* ... of length 0 */
	put_be32(out + 20, GW_RPC_SYSTEM_ERR);
	return GW_RPC_ERR_REPLY_LEN;
}
