/* SPDX-License-Identifier: MIT */
/*
 * iwt_pattern.h - the data patterns the tools put on the wire and check.
 * Part of the tools library (tools/lib, prefix iwt_).
 *
 * rping's ping buffer (iwping; librdmacm/examples/rping.c): "rdma-ping-N: ",
 * then letters 'A'..'z' (ASCII 65 to 122, the six signs between 'Z' and 'a'
 * included) rotating from a start letter, and a NUL as the last octet.  The
 * start letter moves on by one per ping, wrapping from 'z' to 'A'.  A stock
 * rping peer sees exactly these octets.
 *
 * iwmpa's message pattern: octet `off` of data message `index` (1-based) is
 * 'a' + (index + off) % 26 - lower-case letters, shifted by one per message.
 */
#ifndef IWARP_TOOLS_IWT_PATTERN_H
#define IWARP_TOOLS_IWT_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define IWT_RPING_MSG_FMT      "rdma-ping-%d: "
#define IWT_RPING_FIRST_LETTER 65  /* 'A', also the first ping's start letter */
#define IWT_RPING_LAST_LETTER  122 /* 'z' */
/* rping's smallest buffer: sizeof("2147483647") + sizeof("rdma-ping-%d: "),
 * the longest header plus its NUL, with rping's slack. */
#define IWT_RPING_MIN_SIZE 26

/*
 * Fill buf[0..size) with ping number `ping`'s buffer, the letters starting at
 * *start; then move *start on to the next ping's letter.  size >= 1 (the
 * header is cut short when it does not fit; buf[size - 1] is always NUL).
 */
void iwt_rping_fill(char *buf, size_t size, int ping, unsigned char *start);

/* iwmpa: octet `off` of message `index`. */
uint8_t iwt_abc_byte(unsigned index, size_t off);
/* iwmpa: fill p[0..len) with message `index`. */
void iwt_abc_fill(uint8_t *p, size_t len, unsigned index);
/* iwmpa: offset of the first octet of p[0..len) that differs from message `index`, or len. */
size_t iwt_abc_check(const uint8_t *p, size_t len, unsigned index);

#endif
