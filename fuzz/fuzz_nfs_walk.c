/* SPDX-License-Identifier: MIT */
/*
 * fuzz_nfs_walk.c - the NFS binding's XDR walkers (RFC 8267) on peer input.
 *
 * Input: octet 0 picks the program/version (below), octet 1 the procedure,
 * the rest is the body (procedure arguments or results).  Every input runs
 * walk_call and walk_reply in unreduced and reduced mode, and reply_plan.
 * Checked: slots are numbered 0, 1, 2... in order; an item's length word was
 * inside the body; after a successful unreduced walk every valid item lies
 * inside the body; a plan has at most RPCRDMA_MAX_WRITE_CHUNKS slots and
 * max_inline 0 when unpredictable.  ASan/UBSan catch the rest.
 *
 * Seeds: fuzz/corpus/fuzz_nfs_walk, written by fuzz/tools/gen_nfs_walk_seeds.py
 * from the Linux captures and hand-built messages.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_nfs.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_ITEMS 64

struct fz {
	size_t len;
	int present;
	unsigned n;
	struct rpcrdma_item it[FZ_MAX_ITEMS];
};

static int fz_item(void *arg, const struct rpcrdma_item *it)
{
	struct fz *f = arg;
	if (it->index != f->n)
		abort();
	if (it->valid && it->offset > f->len)
		abort();
	if (f->n < FZ_MAX_ITEMS)
		f->it[f->n] = *it;
	f->n++;
	return f->present;
}

static void fz_walk(const struct rpcrdma_rpcinfo *ci, const uint8_t *body, size_t len, bool reply,
		    int present)
{
	struct fz f = {.len = len, .present = present};
	int r = reply ? rpcrdma_nfs_ulb.walk_reply(NULL, ci, body, len, fz_item, &f)
		      : rpcrdma_nfs_ulb.walk_call(NULL, ci, body, len, fz_item, &f);
	if (r != 0 && r != IW_ERPC_RPC)
		abort();
	if (r == 0 && present) {
		for (unsigned i = 0; i < f.n && i < FZ_MAX_ITEMS; i++)
			if (f.it[i].valid && (uint64_t)f.it[i].offset + f.it[i].length > len)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct rpcrdma_rpcinfo ci = {
		.msg_type = RPC_MSG_CALL,
		.rpcvers = 2,
		.prog = RPCRDMA_NFS_PROG,
		.cred_flavor = 1,
	};
	switch (data[0] % 6) {
	case 0:
		ci.vers = 2;
		ci.proc = data[1] % 20u;
		break;
	case 1:
		ci.vers = 3;
		ci.proc = data[1] % 24u;
		break;
	case 2:
		ci.vers = 4;
		ci.proc = 1;
		break;
	case 3:
		ci.vers = 4;
		ci.proc = data[1] % 3u;
		break;
	case 4:
		ci.prog = RPCRDMA_NFSACL_PROG;
		ci.vers = 3;
		ci.proc = data[1] % 8u;
		break;
	default:
		ci.vers = 3;
		ci.proc = data[1] % 24u;
		ci.cred_flavor = 6;
		break;
	}
	const uint8_t *body = data + 2;
	size_t len = size - 2;
	/* an exact-size copy, so ASan sees any read past the end */
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	if (len)
		memcpy(copy, body, len);

	for (int present = 0; present <= 1; present++) {
		fz_walk(&ci, copy, len, false, present);
		fz_walk(&ci, copy, len, true, present);
	}
	struct rpcrdma_reply_plan plan;
	int r = rpcrdma_nfs_ulb.reply_plan(NULL, &ci, copy, len, &plan);
	if (r == 0) {
		if (plan.n_items > RPCRDMA_MAX_WRITE_CHUNKS)
			abort();
		if (plan.unpredictable && plan.max_inline != 0)
			abort();
	} else if (r != IW_ERPC_RPC) {
		abort();
	}
	free(copy);
	return 0;
}
