/* SPDX-License-Identifier: MIT */
/*
 * mpa_crc32c_isal.c - CRC32c backend on Intel ISA-L (built only with libisal).
 *
 * ISA-L's crc32_iscsi() is the RFC 3720 §12.1 CRC32c and picks its own best code
 * for the CPU at run time (crc32 instruction or carry-less multiply folding).
 * It works on the raw register: crc32_iscsi(buf, len, r) feeds buf into register
 * r and returns the register, with no inversion on either side ("123456789"
 * from 0xFFFFFFFF gives 0x1CF96D7C = ~0xE3069283; test_mpa_crc32c checks this
 * through the cross-backend tests).  That is our internal contract as is, so the
 * only adaptation is the length: ISA-L takes an int, so longer inputs are fed in
 * chunks of at most 1 GiB, which the register form makes exact.
 */
#include <stdint.h>

#include <isa-l/crc.h>

#include "mpa_crc32c_impl.h"

#define CRC_ISAL_CHUNK ((size_t)1 << 30)

uint32_t mpa_crc32c_isal_update(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len) {
		size_t n = len < CRC_ISAL_CHUNK ? len : CRC_ISAL_CHUNK;

		/* ISA-L's prototype lacks const; it only reads the buffer. */
		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}
