/* SPDX-License-Identifier: MIT */
/*
 * mpa_rtr.c - the RFC 6581 "Ready to Receive" (RTR) messages.
 *
 * Theory of operation.  In the peer-to-peer model (RFC 6581 §5, §9.2) the
 * Initiator proves it is in full operation by sending one zero-length RDMAP
 * message as its first FPDU; the Responder may send nothing until it has
 * received and validated it (RFC 5044 §7.1.2 rule 4).  The Reply says which of
 * three forms is acceptable (bits B, C, D of the IRD/ORD word); the Initiator
 * uses one.  They are ordinary DDP segments (RFC 5041 §5) carrying RDMAP
 * messages (RFC 5040 §4), built here octet by octet because MPA setup owns
 * them (RFC 6581 §9.3):
 *
 *   Write RTR (14 octets), tagged:
 *	C1		DDP: T=1 L=1 DV=01
 *	40		RDMAP: RV=01, opcode 0 (RDMA Write)
 *	00000001	STag: a placeholder; STag and TO of a zero-length tagged
 *			segment must not be checked (RFC 5041 §5.2); kept
 *			non-zero, as Linux siw sends it
 *	00..00 (8)	Tagged Offset 0
 *
 *   Send RTR (18 octets), untagged:
 *	41		DDP: T=0 L=1 DV=01
 *	43		RDMAP: RV=01, opcode 3 (Send)
 *	00000000	RsvdULP (Invalidate STag unused)
 *	00000000	QN 0 (Send queue)
 *	00000001	MSN 1 (first message on queue 0)
 *	00000000	MO 0
 *
 *   Read RTR (46 octets), untagged Read Request with a 28-octet header
 *   (RFC 5040 §4.4), values as in the project vector
 *   "rtr-zero-length-rdma-read-request":
 *	41 41		DDP untagged last; RDMAP RV=01, opcode 1 (Read Request)
 *	00000000	RsvdULP
 *	00000001	QN 1 (Read Request queue)
 *	00000001	MSN 1
 *	00000000	MO 0
 *	00000001	Data Sink STag 1 (placeholder, never used: nothing is read)
 *	00..00 (8)	Data Sink Tagged Offset 0
 *	00000000	RDMA Read Message Size 0: this is what makes it an RTR
 *	00000001	Data Source STag 1 (placeholder; not validated for a
 *			zero-length Read, RFC 5040 §7.2)
 *	00..00 (8)	Data Source Tagged Offset 0
 *
 * Classification checks only what defines the form: the DDP and RDMAP
 * control octets (reserved bits ignored, as RFC 5041/5040 say not to check
 * them), the exact length (a zero-length message has no payload), QN and MO
 * for the untagged forms and the zero Read size.  STags, TOs and the MSN are
 * left to DDP/RDMAP, which validate them like any other segment.
 */
#include <string.h>

#include "iw_bytes.h"
#include <iwarp/mpa.h>

#define DDP_T		  0x80
#define DDP_L		  0x40
#define DDP_DV_MASK	  0x03
#define DDP_DV		  0x01
#define RDMAP_RV_MASK	  0xC0
#define RDMAP_RV	  0x40
#define RDMAP_OP_MASK	  0x0F
#define RDMAP_OP_WRITE	  0x0
#define RDMAP_OP_READ_REQ 0x1
#define RDMAP_OP_SEND	  0x3

/* Untagged header offsets (RFC 5041 §4.3, RFC 5040 §4.1). */
#define RTR_OFF_QN  6
#define RTR_OFF_MSN 10
#define RTR_OFF_MO  14
/* Read Request header (RFC 5040 §4.4), after the 18-octet untagged header. */
#define RTR_OFF_SINK_STAG    18
#define RTR_OFF_READ_SIZE    30
#define RTR_OFF_SRC_STAG     34

#define RTR_QN_SEND	     0
#define RTR_QN_READ	     1
#define RTR_PLACEHOLDER_STAG 1

ssize_t mpa_rtr_encode(enum mpa_rtr rtr, uint8_t *buf, size_t cap)
{
	size_t len;

	switch (rtr) {
	case MPA_RTR_SEND:
		len = MPA_RTR_SEND_LEN;
		break;
	case MPA_RTR_WRITE:
		len = MPA_RTR_WRITE_LEN;
		break;
	case MPA_RTR_READ:
		len = MPA_RTR_READ_LEN;
		break;
	default:
		return IW_EINVAL;
	}
	if (!buf || cap < len)
		return IW_ENOSPC;
	memset(buf, 0, len);

	if (rtr == MPA_RTR_WRITE) {
		buf[0] = DDP_T | DDP_L | DDP_DV;
		buf[1] = RDMAP_RV | RDMAP_OP_WRITE;
		iw_put_be32(buf + 2, RTR_PLACEHOLDER_STAG);
		return (ssize_t)len;
	}
	buf[0] = DDP_L | DDP_DV;
	iw_put_be32(buf + RTR_OFF_MSN, 1);
	if (rtr == MPA_RTR_SEND) {
		buf[1] = RDMAP_RV | RDMAP_OP_SEND;
		iw_put_be32(buf + RTR_OFF_QN, RTR_QN_SEND);
	} else {
		buf[1] = RDMAP_RV | RDMAP_OP_READ_REQ;
		iw_put_be32(buf + RTR_OFF_QN, RTR_QN_READ);
		iw_put_be32(buf + RTR_OFF_SINK_STAG, RTR_PLACEHOLDER_STAG);
		iw_put_be32(buf + RTR_OFF_SRC_STAG, RTR_PLACEHOLDER_STAG);
	}
	return (ssize_t)len;
}

static bool rtr_ctrl_is(const uint8_t *u, bool tagged, uint8_t opcode)
{
	uint8_t want_ddp = (tagged ? DDP_T : 0) | DDP_L | DDP_DV;

	return (u[0] & (DDP_T | DDP_L | DDP_DV_MASK)) == want_ddp &&
	       (u[1] & RDMAP_RV_MASK) == RDMAP_RV && (u[1] & RDMAP_OP_MASK) == opcode;
}

enum mpa_rtr mpa_rtr_classify(const uint8_t *ulpdu, size_t len)
{
	if (!ulpdu)
		return MPA_RTR_NONE;
	switch (len) {
	case MPA_RTR_WRITE_LEN:
		if (rtr_ctrl_is(ulpdu, true, RDMAP_OP_WRITE))
			return MPA_RTR_WRITE;
		break;
	case MPA_RTR_SEND_LEN:
		if (rtr_ctrl_is(ulpdu, false, RDMAP_OP_SEND) &&
		    iw_get_be32(ulpdu + RTR_OFF_QN) == RTR_QN_SEND &&
		    iw_get_be32(ulpdu + RTR_OFF_MO) == 0)
			return MPA_RTR_SEND;
		break;
	case MPA_RTR_READ_LEN:
		if (rtr_ctrl_is(ulpdu, false, RDMAP_OP_READ_REQ) &&
		    iw_get_be32(ulpdu + RTR_OFF_QN) == RTR_QN_READ &&
		    iw_get_be32(ulpdu + RTR_OFF_MO) == 0 &&
		    iw_get_be32(ulpdu + RTR_OFF_READ_SIZE) == 0)
			return MPA_RTR_READ;
		break;
	default:
		break;
	}
	return MPA_RTR_NONE;
}
