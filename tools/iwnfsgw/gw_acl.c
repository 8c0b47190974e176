/* SPDX-License-Identifier: MIT */
/*
 * gw_acl.c - iwnfsgw's client address list (--allow): CIDR prefixes parsed
 * from text and matched against an address, every one as 128 bits (IPv4 as
 * IPv4-mapped IPv6; gw_acl.h says why).  No I/O: the gateway logs, the unit
 * test (test/nfs/gw/test_gw_acl.c) checks the messages.
 */
#include "gw_acl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ::ffff:0:0/96, the IPv4-mapped prefix */
static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* The longest entry worth reading: an IPv6 address in its longest form and
 * "/128". */
#define ENTRY_MAX (INET6_ADDRSTRLEN + 4)

void gw_acl_init(struct gw_acl *acl)
{
	memset(acl, 0, sizeof(*acl));
}

void gw_acl_default(struct gw_acl *acl)
{
	char err[GW_ACL_ERRLEN];

	gw_acl_init(acl);
	(void)gw_acl_parse(acl, "127.0.0.0/8,::1", err, sizeof(err));
}

static bool has_bits_after(const uint8_t *a, unsigned len)
{
	unsigned i;

	for (i = len; i < 128; i++)
		if (a[i / 8] & (0x80u >> (i % 8)))
			return true;
	return false;
}

static bool prefix_equal(const uint8_t *a, const uint8_t *net, unsigned len)
{
	unsigned full = len / 8, rest = len % 8;

	if (memcmp(a, net, full))
		return false;
	if (!rest)
		return true;
	return ((a[full] ^ net[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

/* The entry e (one item of the list, NUL-terminated) into *net: 0, or -1
 * with what is wrong in err. */
static int parse_entry(const char *e, struct gw_acl_net *net, char *err, size_t errlen)
{
	char addr[ENTRY_MAX + 1];
	const char *slash = strchr(e, '/');
	size_t alen = slash ? (size_t)(slash - e) : strlen(e);
	bool v6 = memchr(e, ':', alen) != NULL;
	unsigned max = v6 ? 128 : 32, len = max;
	struct in_addr a4;
	char shown[INET6_ADDRSTRLEN];

	memcpy(addr, e, alen);
	addr[alen] = '\0';
	if (v6 ? inet_pton(AF_INET6, addr, net->addr) != 1 : inet_pton(AF_INET, addr, &a4) != 1) {
		snprintf(err, errlen,
			 "not an IPv4 or IPv6 address (numeric only: ADDR[/LEN], or any)");
		return -1;
	}
	if (slash) {
		const char *p = slash + 1;

		if (!*p) {
			snprintf(err, errlen, "prefix length missing after '/'");
			return -1;
		}
		for (len = 0; *p; p++) {
			if (*p < '0' || *p > '9') {
				snprintf(err, errlen, "prefix length is not a decimal number");
				return -1;
			}
			len = len * 10 + (unsigned)(*p - '0');
			if (len > max) {
				snprintf(err, errlen, "prefix length over %u for %s", max,
					 v6 ? "IPv6" : "IPv4");
				return -1;
			}
		}
	}
	if (!v6) {
		memcpy(net->addr, v4mapped, sizeof(v4mapped));
		memcpy(net->addr + 12, &a4, 4);
		len += 96;
	}
	if (has_bits_after(net->addr, len)) {
		uint8_t masked[16];
		unsigned i;

		memcpy(masked, net->addr, sizeof(masked));
		for (i = len; i < 128; i++)
			masked[i / 8] &= (uint8_t) ~(0x80u >> (i % 8));
		if (v6)
			inet_ntop(AF_INET6, masked, shown, sizeof(shown));
		else
			inet_ntop(AF_INET, masked + 12, shown, sizeof(shown));
		snprintf(err, errlen,
			 "address bits set after the prefix length (the network is %s/%u)", shown,
			 v6 ? len : len - 96);
		return -1;
	}
	net->len = (uint8_t)len;
	return 0;
}

int gw_acl_parse(struct gw_acl *acl, const char *text, char *err, size_t errlen)
{
	unsigned n = acl->n;
	bool any = acl->any;
	const char *p = text;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char e[ENTRY_MAX + 1], why[GW_ACL_ERRLEN];

		if (len == 0) {
			snprintf(err, errlen, "empty entry (CIDR: ADDR[/LEN], or any)");
			goto fail;
		}
		if (len > ENTRY_MAX) {
			snprintf(err, errlen, "'%.*s...': not an IPv4 or IPv6 address", 16, p);
			goto fail;
		}
		memcpy(e, p, len);
		e[len] = '\0';
		if (!strcasecmp(e, "any")) {
			any = true;
		} else if (n >= GW_ACL_MAX) {
			snprintf(err, errlen, "more than %u entries", GW_ACL_MAX);
			goto fail;
		} else if (parse_entry(e, &acl->net[n], why, sizeof(why))) {
			n++; /* cleared below */
			/* in a list, say which entry */
			if (strchr(text, ','))
				snprintf(err, errlen, "'%s': %s", e, why);
			else
				snprintf(err, errlen, "%s", why);
			goto fail;
		} else {
			n++;
		}
		if (!end)
			break;
		p = end + 1;
	}
	acl->n = n;
	acl->any = any;
	return 0;
fail:
	/* the entries past acl->n stay zero, as gw_acl_init left them */
	memset(&acl->net[acl->n], 0, (n - acl->n) * sizeof(acl->net[0]));
	return -1;
}

bool gw_acl_match(const struct gw_acl *acl, const struct sockaddr *sa)
{
	uint8_t a[16];
	unsigned i;

	if (acl->any)
		return true;
	if (!sa)
		return false;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		memcpy(a, v4mapped, sizeof(v4mapped));
		memcpy(a + 12, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	} else {
		return false;
	}
	for (i = 0; i < acl->n; i++)
		if (prefix_equal(a, acl->net[i].addr, acl->net[i].len))
			return true;
	return false;
}

const char *gw_acl_format(const struct gw_acl *acl, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (acl->any) {
		snprintf(buf, len, "any");
		return buf;
	}
	if (!acl->n) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (i = 0; i < acl->n; i++) {
		const struct gw_acl_net *net = &acl->net[i];
		char a[INET6_ADDRSTRLEN], item[INET6_ADDRSTRLEN + 8];
		bool v4 = net->len >= 96 && !memcmp(net->addr, v4mapped, sizeof(v4mapped));
		int n;

		if (v4)
			inet_ntop(AF_INET, net->addr + 12, a, sizeof(a));
		else
			inet_ntop(AF_INET6, net->addr, a, sizeof(a));
		n = snprintf(item, sizeof(item), "%s%s/%u", i ? "," : "", a,
			     v4 ? net->len - 96u : net->len);
		if (n < 0 || off + (size_t)n + 4 > len) {
			/* "...": the rest does not fit */
			if (off + 4 <= len)
				memcpy(buf + off, "...", 4);
			return buf;
		}
		memcpy(buf + off, item, (size_t)n + 1);
		off += (size_t)n;
	}
	return buf;
}
