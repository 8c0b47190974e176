/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_ulb.h - the hook between RPC-over-RDMA and an Upper-Layer Binding
 * (RFC 8166 §6).  A binding says which XDR items of a program's calls and
 * replies are DDP-eligible (may travel in a chunk) and how large a reply can
 * be.  The transport never parses procedure arguments itself; it asks the
 * binding to walk them.  `rpcrdma_nfs.h` is the NFS binding (RFC 8267).
 *
 * Walks are sans-I/O, bounded by `len`, and never allocate.  A walk reports
 * each DDP-eligible *slot* in XDR order through a callback:
 *   - calls: one slot per eligible argument (NFS WRITE data, SYMLINK path,
 *     NFSv4 CREATE NF4LNK linkdata), always valid;
 *   - replies: one slot per READ-like operation (NFSv3 READ / READLINK, each
 *     NFSv4 READ / READLINK in a COMPOUND).  The n-th slot pairs with the n-th
 *     Write chunk (RFC 8267 §6.4.1).  A slot whose result arm carries no data
 *     (the operation failed) is reported with valid = false, so the pairing
 *     stays right and the transport returns that Write chunk unused.
 *
 * Reduced streams.  The same walk runs over an unreduced message (every item's
 * data and XDR padding in place) and over a reduced one (an item moved to a
 * chunk occupies 0 octets; its length word stays inline).  The callback tells
 * the walker which: it returns 1 if the data + padding of this item is present
 * in the stream at `offset`, 0 if it is absent (the walker then continues at
 * `offset`), or a negative code to stop the walk (returned by the walk).
 */
#ifndef IWARP_RPCRDMA_ULB_H
#define IWARP_RPCRDMA_ULB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwarp/rpcrdma_wire.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rpcrdma_item {
	unsigned index;	 /* slot number, 0-based, in XDR order */
	bool valid;	 /* false: no data in this slot (offset/length meaningless) */
	uint32_t offset; /* where the item's data starts, from the start of the walked body
			  * (after the XDR length word) */
	uint32_t length; /* octets of data, without XDR padding */
};

/* Return 1: data + padding present at offset; 0: absent (reduced); < 0: stop. */
typedef int (*rpcrdma_item_fn)(void *arg, const struct rpcrdma_item *item);

struct rpcrdma_reply_plan {
	/* DDP-eligible result slots the reply can carry, in order */
	uint32_t n_items; /* ≤ RPCRDMA_MAX_WRITE_CHUNKS (extra slots: inline) */
	uint32_t item_max[RPCRDMA_MAX_WRITE_CHUNKS]; /* largest possible data length of each */
	/* Upper bound of the encoded results without the eligible items' data
	 * (procedure results only: the transport adds the RPC reply header and a
	 * verifier allowance).  0 with unpredictable = true: unknown. */
	uint32_t max_inline;
	/* The reply size cannot be bounded (NFSv4 GETATTR of ACLs, NFSACL GETACL):
	 * a short Reply chunk retry (RFC 8267 §4.3) is allowed for this call. */
	bool unpredictable;
};

struct rpcrdma_ulb {
	const char *name;
	/* Does this binding handle calls of (prog, vers)?  Others have no
	 * DDP-eligible items, and the transport uses its default reply size. */
	bool (*handles)(void *ulb_arg, uint32_t prog, uint32_t vers);
	/* Walk a call's arguments body[0..len) (body = msg + call->body_off).
	 * Returns 0, a negative code from fn, or IW_ERPC_RPC if the arguments do
	 * not decode (the caller then reduces nothing). */
	int (*walk_call)(void *ulb_arg, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			 size_t len, rpcrdma_item_fn fn, void *fn_arg);
	/* Walk the results body[0..len) of an accepted, successful reply to `call`
	 * (body = reply + reply_info.body_off). */
	int (*walk_reply)(void *ulb_arg, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			  size_t len, rpcrdma_item_fn fn, void *fn_arg);
	/* Fill *plan for the reply to this call (its arguments body[0..len)). */
	int (*reply_plan)(void *ulb_arg, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			  size_t len, struct rpcrdma_reply_plan *plan);
};

#ifdef __cplusplus
}
#endif
#endif /* IWARP_RPCRDMA_ULB_H */
