/* SPDX-License-Identifier: MIT */
/*
 * rdmap_opcode.c - the one const table of RDMAP opcodes (RFC 5040 §4.1,
 * §4.2, figure 4).
 *
 * Theory of operation.  The low four bits of the RDMAP control octet select
 * the message; everything the rest of the stack needs to know about how that
 * message uses DDP (tagged or untagged, which untagged queue, whether
 * RsvdULP[8:39] is an Invalidate STag, whether a ULP payload or an extra
 * RDMAP header follows the DDP header) is read from this table, so the
 * receive and transmit paths never switch on opcode values themselves.
 * Every 4-bit value has an entry: 0x8-0xB belong to RFC 7306 (Immediate
 * Data, atomics) and are flagged rfc7306, so a QP that did not enable the
 * extension treats them like the unassigned 0xC-0xF: a peer using them gets
 * an "unexpected opcode" Terminate (RFC 5040 §7.2).
 */
#include <iwarp/rdmap.h>

/* clang-format off */
static const struct rdmap_opcode_info rdmap_opcode_table[RDMAP_OP_COUNT] = {
	[RDMAP_OP_WRITE] = {
		.name = "RDMA Write", .supported = true, .tagged = true, .payload = true,
	},
	/* The Read Request carries its own 28-octet header and no ULP data (§4.4). */
	[RDMAP_OP_READ_REQ] = {
		.name = "RDMA Read Request", .supported = true, .qn = DDP_QN_READ_REQ,
		.rdmap_hdr_len = RDMAP_READ_REQ_LEN,
	},
	[RDMAP_OP_READ_RESP] = {
		.name = "RDMA Read Response", .supported = true, .tagged = true, .payload = true,
	},
	[RDMAP_OP_SEND] = {
		.name = "Send", .supported = true, .qn = DDP_QN_SEND, .payload = true,
	},
	[RDMAP_OP_SEND_INV] = {
		.name = "Send with Invalidate", .supported = true, .qn = DDP_QN_SEND,
		.inv_stag = true, .payload = true,
	},
	[RDMAP_OP_SEND_SE] = {
		.name = "Send with Solicited Event", .supported = true, .qn = DDP_QN_SEND,
		.solicited = true, .payload = true,
	},
	[RDMAP_OP_SEND_SE_INV] = {
		.name = "Send with Solicited Event and Invalidate", .supported = true,
		.qn = DDP_QN_SEND, .inv_stag = true, .solicited = true, .payload = true,
	},
	/*
	 * The Terminate header is 4 octets at least; the optional header copies
	 * after it are RDMAP header too, not ULP payload (§4.8).
	 */
	[RDMAP_OP_TERMINATE] = {
		.name = "Terminate", .supported = true, .qn = DDP_QN_TERMINATE,
		.rdmap_hdr_len = RDMAP_TERM_CTRL_LEN,
	},
	/*
	 * RFC 7306.  Immediate Data carries its 8 octets as RDMAP header and
	 * consumes a QN 0 buffer like a Send; Atomic Requests share QN 1 (and
	 * the IRD/ORD) with RDMA Read Requests; Atomic Responses use QN 3.
	 */
	[RDMAP_OP_IMM] = {
		.name = "Immediate Data", .supported = true, .rfc7306 = true,
		.qn = DDP_QN_SEND, .rdmap_hdr_len = RDMAP_IMM_LEN,
	},
	[RDMAP_OP_IMM_SE] = {
		.name = "Immediate Data with Solicited Event", .supported = true,
		.rfc7306 = true, .qn = DDP_QN_SEND, .solicited = true,
		.rdmap_hdr_len = RDMAP_IMM_LEN,
	},
	[RDMAP_OP_ATOMIC_REQ] = {
		.name = "Atomic Request", .supported = true, .rfc7306 = true,
		.qn = DDP_QN_READ_REQ, .rdmap_hdr_len = RDMAP_ATOMIC_REQ_LEN,
	},
	[RDMAP_OP_ATOMIC_RESP] = {
		.name = "Atomic Response", .supported = true, .rfc7306 = true,
		.qn = DDP_QN_ATOMIC_RESP, .rdmap_hdr_len = RDMAP_ATOMIC_RESP_LEN,
	},
	[0xC] = { .name = "reserved (0xC)" },
	[0xD] = { .name = "reserved (0xD)" },
	[0xE] = { .name = "reserved (0xE)" },
	[0xF] = { .name = "reserved (0xF)" },
};
/* clang-format on */

const struct rdmap_opcode_info *rdmap_opcode_info(uint8_t opcode)
{
	/* Callers may pass a whole control octet: only the opcode bits select. */
	return &rdmap_opcode_table[opcode & RDMAP_CTRL_OPCODE];
}
