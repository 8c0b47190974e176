/* SPDX-License-Identifier: MIT */
/*
 * iw_bytes.h - explicit byte-order get/put helpers for wire formats.
 *
 * Every multi-octet field of MPA, DDP, RDMAP and RPC-over-RDMA is big-endian
 * except the MPA CRC, which goes on the wire least significant octet first
 * (RFC 5044 §4.4).  Wire structs are never packed or
 * bitfielded: host-order structs are encoded/decoded through these helpers.
 */
#ifndef IW_BYTES_H
#define IW_BYTES_H

#include <stdint.h>

static inline uint16_t iw_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t iw_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t iw_get_be64(const uint8_t *p)
{
	return (uint64_t)iw_get_be32(p) << 32 | iw_get_be32(p + 4);
}

static inline uint32_t iw_get_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline void iw_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void iw_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void iw_put_be64(uint8_t *p, uint64_t v)
{
	iw_put_be32(p, (uint32_t)(v >> 32));
	iw_put_be32(p + 4, (uint32_t)v);
}

static inline void iw_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#define IW_MIN(a, b)	 ((a) < (b) ? (a) : (b))
#define IW_MAX(a, b)	 ((a) > (b) ? (a) : (b))
#define IW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* IW_BYTES_H */
