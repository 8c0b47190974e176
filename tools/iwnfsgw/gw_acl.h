/* SPDX-License-Identifier: MIT */
/*
 * gw_acl.h - the client address list of iwnfsgw (--allow): CIDR prefixes,
 * parsed from text and matched against a peer's address, without I/O.
 *
 * Text (gw_acl_parse): a comma-separated list of entries, each
 *   ADDR/LEN   an IPv4 prefix (LEN 0-32) or an IPv6 prefix (LEN 0-128);
 *              the bits after LEN must be zero ("10.0.0.0/8", not "10.1.2.3/8")
 *   ADDR       one address: /32 for IPv4, /128 for IPv6
 *   any        every address
 * ADDR is numeric (inet_pton): no host names, no brackets, no IPv6 scope.
 *
 * Matching (gw_acl_match): every address is compared as an IPv6 address, an
 * IPv4 address a.b.c.d as its IPv4-mapped form ::ffff:a.b.c.d (RFC 4291
 * §2.5.5.2), and an IPv4 prefix a.b.c.d/n as ::ffff:a.b.c.d/(96+n).  So a
 * client that reaches a dual-stack (IPv6) socket from IPv4 matches the IPv4
 * prefixes, and ::ffff:10.0.0.0/104 is the same entry as 10.0.0.0/8.  (::/0
 * therefore matches every address, IPv4 included; 0.0.0.0/0 every IPv4 one.)
 */
#ifndef IWNFSGW_GW_ACL_H
#define IWNFSGW_GW_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define GW_ACL_MAX 256 /* entries in one list, all --allow options together */
/* Room for a gw_acl_parse message, NUL included. */
#define GW_ACL_ERRLEN 160

struct gw_acl_net {
	uint8_t addr[16]; /* IPv6 or IPv4-mapped; the bits after len are zero */
	uint8_t len;	  /* prefix length over the 128 bits */
};

struct gw_acl {
	bool any; /* "any" was given: every address matches */
	unsigned n;
	struct gw_acl_net net[GW_ACL_MAX];
};

/* Empty: nothing matches.  A list starts here (or at gw_acl_default). */
void gw_acl_init(struct gw_acl *acl);
/* The default: 127.0.0.0/8 and ::1 (loopback only). */
void gw_acl_default(struct gw_acl *acl);
/*
 * Add the entries of `text` (one --allow value) to acl.  Returns 0, or -1
 * with acl unchanged and a one-line reason in err[0..errlen), naming the
 * entry that is wrong when text is a list ("prefix length over 32 for
 * IPv4", "'10.0.0.0/33': prefix length over 32 for IPv4").
 */
int gw_acl_parse(struct gw_acl *acl, const char *text, char *err, size_t errlen);
/* Whether the AF_INET or AF_INET6 address sa is in the list (another
 * family, or NULL: false unless "any"). */
bool gw_acl_match(const struct gw_acl *acl, const struct sockaddr *sa);
/* The list as text: "any", or the entries in the order given, IPv4 ones as
 * IPv4 ("127.0.0.0/8,::1/128"); "none" when empty.  Cut (with "...") to
 * fit len.  Returns buf. */
const char *gw_acl_format(const struct gw_acl *acl, char *buf, size_t len);

#endif
