/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_nfs.h - the NFS Upper-Layer Binding of RPC-over-RDMA (RFC 8267).
 *
 * `rpcrdma_nfs_ulb` walks the XDR of NFS calls and replies (program 100003,
 * versions 2, 3 and 4 with minor versions 0, 1, 2) and reports the
 * DDP-eligible items (see rpcrdma_ulb.h for the walk contract):
 *   NFSv2/v3 calls   WRITE data, SYMLINK pathname
 *   NFSv2/v3 replies READ data, READLINK pathname (one slot each)
 *   NFSv4 calls      WRITE4args data, CREATE (NF4LNK) linkdata, in op order
 *   NFSv4 replies    one slot per READ and READLINK op, in op order
 *                    (READ4resok data, READLINK4resok link; a failed op is a
 *                    slot with valid = false; the walk stops at the first
 *                    failed op, as the COMPOUND does)
 * NFSACL (100227), MOUNT (100005), NLM (100021), NSM (100024) and callbacks
 * have no DDP-eligible items (`handles` is false for them).
 *
 * Reply plans: NFSv3 READ → one slot of `count`; READLINK → one slot of
 * NFS3_MAXPATHLEN-style 4096; READDIR/READDIRPLUS → max_inline from the
 * count/maxcount argument; NFSv4 COMPOUND → the sum over its ops (GETATTR and
 * other attribute-returning ops of unknown size set unpredictable).
 *
 * Calls protected by RPCSEC_GSS (cred flavor 6) are walked as having no
 * items: integrity and privacy wrap the arguments and results (RFC 8166
 * §8.2.2); we do not reduce plain krb5 calls either (conservative).
 */
#ifndef IWARP_RPCRDMA_NFS_H
#define IWARP_RPCRDMA_NFS_H

#include <iwarp/rpcrdma_ulb.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_NFS_PROG    100003u
#define RPCRDMA_NFSACL_PROG 100227u

/* The binding; ulb_arg is unused (pass NULL). */
IW_EXPORT extern const struct rpcrdma_ulb rpcrdma_nfs_ulb;

#ifdef __cplusplus
}
#endif
#endif /* IWARP_RPCRDMA_NFS_H */
