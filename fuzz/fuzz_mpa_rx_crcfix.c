/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpa_rx_crcfix.c - libFuzzer target for the FPDU receive machine with
 * CRC checking ON.  Random bytes almost never carry a right CRC32c, so before
 * feeding, the input stream is walked FPDU by FPDU the way the receiver frames
 * it and every CRC field is rewritten to the CRC of its covered octets (RFC
 * 5044 §4.4: Markers included); with c[2] bit 0 every Marker's FPDUPTR is set
 * right as well (§4.3).  That drives the receiver past the CRC check into
 * fpdu_done, Marker judgement and the next FPDU.  The harness, configuration
 * octets and properties are those of fuzz_mpa_rx.c.
 */
#define FUZZ_MPA_RX_CRCFIX 1
#include "fuzz_mpa_rx.c"
