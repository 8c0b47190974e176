/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_err.c - names and texts of the RPC-over-RDMA codes of
 * <iwarp/rpcrdma_wire.h>; every other code goes to rdmap_errname /
 * rdmap_strerror, so rpcrdma_strerror names whatever the RPC-over-RDMA
 * layers report.  None of these codes is sent in a Terminate: RPC-over-RDMA
 * reports its errors with RDMA_ERROR (RFC 8166 §4.5, rpcrdma_err_action()).
 */
#include <iwarp/rdmap.h>
#include <iwarp/rpcrdma_wire.h>

#include "iw_errtab.h"

static const struct iw_err_desc rpcrdma_errs[] = {
	IW_ERR_LOCAL(IW_ERPC_SHORT, "RPC-over-RDMA header shorter than its minimum"),
	IW_ERR_LOCAL(IW_ERPC_VERS, "RPC-over-RDMA version not supported"),
	IW_ERR_LOCAL(IW_ERPC_PROC, "RPC-over-RDMA unknown procedure"),
	IW_ERR_LOCAL(IW_ERPC_XDR, "RPC-over-RDMA header XDR error"),
	IW_ERR_LOCAL(IW_ERPC_LIMIT,
		     "RPC-over-RDMA header has more chunks or segments than supported"),
	IW_ERR_LOCAL(IW_ERPC_NOMSG_EMPTY, "RPC-over-RDMA RDMA_NOMSG without any chunk"),
	IW_ERR_LOCAL(IW_ERPC_POSITION,
		     "RPC-over-RDMA Read chunk position misaligned or out of order"),
	IW_ERR_LOCAL(IW_ERPC_MSGP, "RPC-over-RDMA RDMA_MSGP is not supported"),
	IW_ERR_LOCAL(IW_ERPC_XID, "RPC-over-RDMA rdma_xid differs from the RPC XID"),
	IW_ERR_LOCAL(IW_ERPC_ERRCODE, "RPC-over-RDMA RDMA_ERROR with an unknown error code"),
	IW_ERR_LOCAL(IW_ERPC_RPC, "RPC message header undecodable"),
	IW_ERR_LOCAL(IW_ERPC_PDATA, "CM private data is not RFC 8797 RPC-over-RDMA data"),
	IW_ERR_LOCAL(IW_ERPC_REMOTE_VERS, "RPC-over-RDMA peer answered ERR_VERS"),
	IW_ERR_LOCAL(IW_ERPC_REMOTE_CHUNK, "RPC-over-RDMA peer answered ERR_CHUNK"),
	IW_ERR_LOCAL(IW_ERPC_TOOBIG, "RPC message too large for the transport"),
	IW_ERR_LOCAL(IW_ERPC_ULB, "upper-layer binding violated"),
	IW_ERR_LOCAL(IW_ERPC_CANCELLED, "RPC call cancelled"),
	IW_ERR_LOCAL(IW_ERPC_CONN, "RPC-over-RDMA connection lost"),
	IW_ERR_LOCAL(IW_ERPC_SHUTDOWN, "RPC-over-RDMA transport shut down"),
	IW_ERR_LOCAL(IW_ERPC_RDMA, "RDMA Read or Write of a chunk failed"),
};

IW_ERRTAB_NAME_FNS(rpcrdma, rpcrdma_errs, rdmap_errname, rdmap_strerror)
