/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_opcode.c - the RDMAP opcode table against RFC 5040 §4.1 and
 * §4.2 and RFC 7306's opcode table, field by field for all 16 opcode values.
 */
#include <string.h>

#include <iwarp/rdmap.h>

#include "iw_bytes.h"
#include "th.h"

/* The table as the RFCs state it, written out independently of rdmap_opcode.c. */
static const struct {
	bool supported, tagged;
	uint8_t qn;
	bool inv_stag, solicited, payload;
	uint8_t hdr_len;
	bool rfc7306;
} want[RDMAP_OP_COUNT] = {
	[RDMAP_OP_WRITE] = {true, true, 0, false, false, true, 0},
	[RDMAP_OP_READ_REQ] = {true, false, 1, false, false, false, 28},
	[RDMAP_OP_READ_RESP] = {true, true, 0, false, false, true, 0},
	[RDMAP_OP_SEND] = {true, false, 0, false, false, true, 0},
	[RDMAP_OP_SEND_INV] = {true, false, 0, true, false, true, 0},
	[RDMAP_OP_SEND_SE] = {true, false, 0, false, true, true, 0},
	[RDMAP_OP_SEND_SE_INV] = {true, false, 0, true, true, true, 0},
	[RDMAP_OP_TERMINATE] = {true, false, 2, false, false, false, 4},
	/* RFC 7306: Immediate Data (8-octet header, QN 0), Atomic Request (52, QN 1),
	 * Atomic Response (12, QN 3) */
	[0x8] = {true, false, 0, false, false, false, 8, true},
	[0x9] = {true, false, 0, false, true, false, 8, true},
	[0xA] = {true, false, 1, false, false, false, 52, true},
	[0xB] = {true, false, 3, false, false, false, 12, true},
};

START_TEST(opcode_every_entry_matches_rfc5040_table)
{
	for (unsigned op = 0; op < RDMAP_OP_COUNT; op++) {
		const struct rdmap_opcode_info *i = rdmap_opcode_info((uint8_t)op);

		ck_assert_ptr_nonnull(i);
		ck_assert_ptr_nonnull(i->name);
		ck_assert_msg(i->supported == want[op].supported, "op %u supported", op);
		ck_assert_msg(i->tagged == want[op].tagged, "op %u tagged", op);
		ck_assert_msg(i->qn == want[op].qn, "op %u qn", op);
		ck_assert_msg(i->inv_stag == want[op].inv_stag, "op %u inv_stag", op);
		ck_assert_msg(i->solicited == want[op].solicited, "op %u solicited", op);
		ck_assert_msg(i->payload == want[op].payload, "op %u payload", op);
		ck_assert_msg(i->rdmap_hdr_len == want[op].hdr_len, "op %u hdr_len", op);
		ck_assert_msg(i->rfc7306 == want[op].rfc7306, "op %u rfc7306", op);
	}
}
END_TEST

START_TEST(opcode_untagged_queues_use_the_ddp_qn_names)
{
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_SEND)->qn, DDP_QN_SEND);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_READ_REQ)->qn, DDP_QN_READ_REQ);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_TERMINATE)->qn, DDP_QN_TERMINATE);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_READ_REQ)->rdmap_hdr_len, RDMAP_READ_REQ_LEN);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_TERMINATE)->rdmap_hdr_len,
			  RDMAP_TERM_CTRL_LEN);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_ATOMIC_REQ)->qn, DDP_QN_READ_REQ);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_ATOMIC_RESP)->qn, DDP_QN_ATOMIC_RESP);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_ATOMIC_REQ)->rdmap_hdr_len,
			  RDMAP_ATOMIC_REQ_LEN);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_ATOMIC_RESP)->rdmap_hdr_len,
			  RDMAP_ATOMIC_RESP_LEN);
	ck_assert_uint_eq(rdmap_opcode_info(RDMAP_OP_IMM_SE)->rdmap_hdr_len, RDMAP_IMM_LEN);
}
END_TEST

START_TEST(opcode_names_are_unique_and_reserved_ones_say_so)
{
	for (unsigned a = 0; a < RDMAP_OP_COUNT; a++) {
		const char *na = rdmap_opcode_info((uint8_t)a)->name;
		bool reserved = strncmp(na, "reserved", 8) == 0;

		ck_assert_msg(reserved == (a >= 12), "op %u name '%s'", a, na);
		for (unsigned b = a + 1; b < RDMAP_OP_COUNT; b++)
			ck_assert_str_ne(na, rdmap_opcode_info((uint8_t)b)->name);
	}
	ck_assert_str_eq(rdmap_opcode_info(RDMAP_OP_SEND_INV)->name, "Send with Invalidate");
	ck_assert_str_eq(rdmap_opcode_info(RDMAP_OP_TERMINATE)->name, "Terminate");
	ck_assert_str_eq(rdmap_opcode_info(RDMAP_OP_IMM)->name, "Immediate Data");
	ck_assert_str_eq(rdmap_opcode_info(RDMAP_OP_ATOMIC_RESP)->name, "Atomic Response");
}
END_TEST

START_TEST(opcode_lookup_uses_only_the_low_four_bits)
{
	for (unsigned c = 0; c < 256; c++)
		ck_assert_ptr_eq(rdmap_opcode_info((uint8_t)c), rdmap_opcode_info(c & 0xF));
}
END_TEST

START_TEST(opcode_control_octet_helpers_round_trip)
{
	for (uint8_t op = 0; op < RDMAP_OP_COUNT; op++) {
		uint8_t c = rdmap_ctrl_make(op);

		ck_assert_uint_eq(rdmap_ctrl_rv(c), RDMAP_VERSION);
		ck_assert_uint_eq(rdmap_ctrl_opcode(c), op);
		ck_assert_uint_eq(c & RDMAP_CTRL_RSV, 0);
	}
	ck_assert_uint_eq(rdmap_ctrl_make(RDMAP_OP_SEND), 0x43);
	ck_assert_uint_eq(rdmap_ctrl_make(RDMAP_OP_TERMINATE), 0x47);
}
END_TEST

static Suite *rdmap_opcode_suite(void)
{
	Suite *s = suite_create("rdmap_opcode");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, opcode_every_entry_matches_rfc5040_table);
	tcase_add_test(tc, opcode_untagged_queues_use_the_ddp_qn_names);
	tcase_add_test(tc, opcode_names_are_unique_and_reserved_ones_say_so);
	tcase_add_test(tc, opcode_lookup_uses_only_the_low_four_bits);
	tcase_add_test(tc, opcode_control_octet_helpers_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(rdmap_opcode_suite)
