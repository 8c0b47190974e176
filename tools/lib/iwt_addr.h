/* SPDX-License-Identifier: MIT */
/*
 * iwt_addr.h - addresses on the tools' command lines and in their output.
 * Part of the tools library (tools/lib, prefix iwt_).
 *
 * Input forms (iwt_addr_split):
 *   HOST           a name, an IPv4 address or an IPv6 address without brackets
 *                  ("::1": two or more colons never hold a port)
 *   HOST:PORT      one colon: a name or an IPv4 address, then the port
 *   [V6]:PORT      an IPv6 address with a port; "[V6]" alone is the address
 *   :PORT or PORT  a port alone (PORT: digits only); the host is the default
 * PORT follows the number rule of iwt_num.h (decimal, 0 to 65535).
 *
 * Output form (iwt_addr_format): "ADDR:PORT", or "[ADDR]:PORT" for IPv6,
 * numeric (an IPv6 scope is kept: "[fe80::1%eth0]:7174").
 */
#ifndef IWARP_TOOLS_IWT_ADDR_H
#define IWARP_TOOLS_IWT_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Room for any iwt_addr_format result, NUL included. */
#define IWT_ADDR_STRLEN 80
/* Longest host part iwt_addr_split keeps, NUL included. */
#define IWT_HOST_MAX 256

struct iwt_hostport {
	char host[IWT_HOST_MAX]; /* "" when the string named no host */
	uint16_t port;		 /* valid when has_port */
	bool has_port;
};

/*
 * Split `s` into host and port by the forms above.  Returns 0, or -1 with
 * *why set to a phrase for iwt_bad_arg ("missing ']'", "expected ':' after
 * ']'", "host name too long", "bad port (decimal, 0 to 65535)").
 */
int iwt_addr_split(const char *s, struct iwt_hostport *hp, const char **why);

/*
 * Resolve `host` (NULL or "" with `passive`: every address; NULL without:
 * the loopback address) and `port` to the first IPv4 or IPv6 TCP address
 * getaddrinfo gives.  Returns 0 with *ss (and *len if not NULL) set, or the
 * getaddrinfo error (EAI_*; for gai_strerror).
 */
int iwt_addr_resolve(const char *host, uint16_t port, bool passive, struct sockaddr_storage *ss,
		     socklen_t *len);

/*
 * "ADDR:PORT" / "[ADDR]:PORT" of an AF_INET or AF_INET6 address into buf
 * (IWT_ADDR_STRLEN octets suffice); "?" for NULL, "(family N)" for another
 * family.  Returns buf.
 */
const char *iwt_addr_format(const struct sockaddr *sa, char *buf, size_t len);

/* The numeric address alone (no brackets, no port); "?" as above.  Returns buf. */
const char *iwt_addr_host(const struct sockaddr *sa, char *buf, size_t len);

/* The port of an AF_INET or AF_INET6 address (host order), 0 for anything else. */
uint16_t iwt_addr_port(const struct sockaddr *sa);

/* Set the port of an AF_INET or AF_INET6 address (other families: unchanged). */
void iwt_addr_set_port(struct sockaddr_storage *ss, uint16_t port);

#endif
