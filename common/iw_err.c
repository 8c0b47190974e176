/* SPDX-License-Identifier: MIT */
/*
 * iw_err.c - names and texts for the error plan of <iwarp/iw_err.h>.
 * One table; a test checks that every code has an entry.
 */
#include <iwarp/iw_err.h>
#include <iwarp/rdmap.h>
#include <iwarp/rpcrdma_wire.h>

#include <stddef.h>

#include "iw_bytes.h"

struct iw_err_desc {
	int code;
	const char *name;
	const char *text;
};

#define E(c, t)                                                                                    \
	{                                                                                          \
		c, #c, t                                                                           \
	}
static const struct iw_err_desc iw_err_table[] = {
	E(IW_OK, "success"),
	E(IW_ENOMEM, "out of memory"),
	E(IW_EINVAL, "invalid argument"),
	E(IW_EAGAIN, "more data needed"),
	E(IW_ENOSPC, "buffer too small"),
	E(IW_ERANGE, "value out of range"),
	E(IW_ESTATE, "operation not valid in the current state"),
	E(IW_ETIMEDOUT, "timed out"),
	E(IW_ENOTSUP, "not supported"),
	E(IW_EMPA_KEY, "MPA startup frame has a wrong key"),
	E(IW_EMPA_REV, "MPA revision not supported"),
	E(IW_EMPA_PDLEN, "MPA private data length invalid"),
	E(IW_EMPA_FRAME, "MPA startup frame improperly formatted"),
	E(IW_EMPA_UNEXPECTED, "MPA peer sent data it may not send yet"),
	E(IW_EMPA_REJECTED, "MPA connection rejected by the peer"),
	E(IW_EMPA_TIMEOUT, "MPA startup timed out"),
	E(IW_EMPA_TRUNCATED, "MPA stream closed inside a frame"),
	E(IW_EMPA_CRC, "MPA CRC mismatch"),
	E(IW_EMPA_MARKER, "MPA Marker and ULPDU_Length disagree"),
	E(IW_EMPA_LEN, "MPA ULPDU_Length too large"),
	E(IW_EMPA_IRD, "MPA insufficient IRD resources"),
	E(IW_EMPA_RTR, "MPA no matching RTR option"),
	E(IW_EMPA_LOCAL, "MPA local catastrophic error"),
	E(IW_EMPA_CLOSED, "MPA connection closed or lost"),
	E(IW_EDDP_LOCAL, "DDP local catastrophic error"),
	E(IW_EDDP_T_INVALID_STAG, "DDP tagged: invalid STag"),
	E(IW_EDDP_T_BOUNDS, "DDP tagged: base or bounds violation"),
	E(IW_EDDP_T_STREAM, "DDP tagged: STag not associated with the stream"),
	E(IW_EDDP_T_TO_WRAP, "DDP tagged: tagged offset wraps"),
	E(IW_EDDP_T_VERSION, "DDP tagged: invalid DDP version"),
	E(IW_EDDP_U_QN, "DDP untagged: invalid queue number"),
	E(IW_EDDP_U_NO_BUFFER, "DDP untagged: no buffer available"),
	E(IW_EDDP_U_MSN_RANGE, "DDP untagged: MSN out of range"),
	E(IW_EDDP_U_MO, "DDP untagged: invalid message offset"),
	E(IW_EDDP_U_TOO_LONG, "DDP untagged: message too long for the buffer"),
	E(IW_EDDP_U_VERSION, "DDP untagged: invalid DDP version"),
	E(IW_EDDP_SHORT, "DDP segment shorter than its header"),
	E(IW_EDDP_STAG_TABLE_FULL, "STag table full"),
	E(IW_EDDP_STAG_UNKNOWN, "STag not registered"),
	E(IW_ERDMAP_LOCAL, "RDMAP local catastrophic error"),
	E(IW_ERDMAP_INVALID_STAG, "RDMAP: invalid STag"),
	E(IW_ERDMAP_BOUNDS, "RDMAP: base or bounds violation"),
	E(IW_ERDMAP_ACCESS, "RDMAP: access rights violation"),
	E(IW_ERDMAP_STREAM, "RDMAP: STag not associated with the stream"),
	E(IW_ERDMAP_TO_WRAP, "RDMAP: tagged offset wraps"),
	E(IW_ERDMAP_PROT_UNSPEC, "RDMAP: unspecified protection error"),
	E(IW_ERDMAP_VERSION, "RDMAP: invalid RDMAP version"),
	E(IW_ERDMAP_OPCODE, "RDMAP: unexpected opcode"),
	E(IW_ERDMAP_CATASTROPHIC_STREAM, "RDMAP: catastrophic error, localised to the stream"),
	E(IW_ERDMAP_CATASTROPHIC_GLOBAL, "RDMAP: catastrophic error, global"),
	E(IW_ERDMAP_CANT_INVALIDATE, "RDMAP: STag cannot be invalidated"),
	E(IW_ERDMAP_OP_UNSPEC, "RDMAP: unspecified operation error"),
	E(IW_ERDMAP_TERMINATED, "RDMAP: the peer terminated the stream"),
	E(IW_ERDMAP_FLUSHED, "RDMAP: work request flushed"),
	E(IW_ERPC_SHORT, "RPC-over-RDMA header shorter than its minimum"),
	E(IW_ERPC_VERS, "RPC-over-RDMA version not supported"),
	E(IW_ERPC_PROC, "RPC-over-RDMA unknown procedure"),
	E(IW_ERPC_XDR, "RPC-over-RDMA header XDR error"),
	E(IW_ERPC_LIMIT, "RPC-over-RDMA header has more chunks or segments than supported"),
	E(IW_ERPC_NOMSG_EMPTY, "RPC-over-RDMA RDMA_NOMSG without any chunk"),
	E(IW_ERPC_POSITION, "RPC-over-RDMA Read chunk position misaligned or out of order"),
	E(IW_ERPC_MSGP, "RPC-over-RDMA RDMA_MSGP is not supported"),
	E(IW_ERPC_XID, "RPC-over-RDMA rdma_xid differs from the RPC XID"),
	E(IW_ERPC_ERRCODE, "RPC-over-RDMA RDMA_ERROR with an unknown error code"),
	E(IW_ERPC_RPC, "RPC message header undecodable"),
	E(IW_ERPC_PDATA, "CM private data is not RFC 8797 RPC-over-RDMA data"),
	E(IW_ERPC_REMOTE_VERS, "RPC-over-RDMA peer answered ERR_VERS"),
	E(IW_ERPC_REMOTE_CHUNK, "RPC-over-RDMA peer answered ERR_CHUNK"),
	E(IW_ERPC_TOOBIG, "RPC message too large for the transport"),
	E(IW_ERPC_ULB, "upper-layer binding violated"),
	E(IW_ERPC_CANCELLED, "RPC call cancelled"),
	E(IW_ERPC_CONN, "RPC-over-RDMA connection lost"),
	E(IW_ERPC_SHUTDOWN, "RPC-over-RDMA transport shut down"),
	E(IW_ERPC_RDMA, "RDMA Read or Write of a chunk failed"),
};
#undef E

static const struct iw_err_desc *iw_err_find(int err)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(iw_err_table); i++)
		if (iw_err_table[i].code == err)
			return &iw_err_table[i];
	return NULL;
}

const char *iw_strerror(int err)
{
	const struct iw_err_desc *d = iw_err_find(err);
	return d ? d->text : "unknown error";
}

const char *iw_errname(int err)
{
	const struct iw_err_desc *d = iw_err_find(err);
	return d ? d->name : "IW_E?";
}
