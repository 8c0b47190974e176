/* SPDX-License-Identifier: MIT */
/* iwt_addr.c - address parsing and formatting for the tools (iwt_addr.h). */
#include "iwt_addr.h"

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "iwt_num.h"

static int set_port(struct iwt_hostport *hp, const char *p, const char **why)
{
	uint64_t v;

	if (iwt_num_parse(p, 0, 65535, 0, &v) != IWT_NUM_OK) {
		*why = "bad port (decimal, 0 to 65535)";
		return -1;
	}
	hp->port = (uint16_t)v;
	hp->has_port = true;
	return 0;
}

int iwt_addr_split(const char *s, struct iwt_hostport *hp, const char **why)
{
	const char *h = s, *colon = strchr(s, ':'), *port = NULL;
	size_t hl;

	memset(hp, 0, sizeof(*hp));
	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close) {
			*why = "missing ']'";
			return -1;
		}
		h = s + 1;
		hl = (size_t)(close - h);
		if (close[1] == ':')
			port = close + 2;
		else if (close[1]) {
			*why = "expected ':' after ']'";
			return -1;
		}
	} else if (colon && !strchr(colon + 1, ':')) {
		hl = (size_t)(colon - s); /* HOST:PORT or :PORT */
		port = colon + 1;
	} else if (!colon && *s && strspn(s, "0123456789") == strlen(s)) {
		hl = 0; /* a port alone */
		port = s;
	} else {
		hl = strlen(s); /* a host alone, or a bare IPv6 address */
	}
	if (hl >= sizeof(hp->host)) {
		*why = "host name too long";
		return -1;
	}
	memcpy(hp->host, h, hl);
	hp->host[hl] = '\0';
	return port ? set_port(hp, port, why) : 0;
}

int iwt_addr_resolve(const char *host, uint16_t port, bool passive, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct addrinfo hints, *res, *ai;
	char ps[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host && *host ? host : NULL, ps, &hints, &res);
	if (rc)
		return rc;
	for (ai = res; ai; ai = ai->ai_next) {
		if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
		    ai->ai_addrlen <= sizeof(*ss)) {
			memset(ss, 0, sizeof(*ss));
			memcpy(ss, ai->ai_addr, ai->ai_addrlen);
			if (len)
				*len = ai->ai_addrlen;
			break;
		}
	}
	freeaddrinfo(res);
	return ai ? 0 : EAI_FAMILY;
}

/* The length of an AF_INET or AF_INET6 address; 0 for NULL or another family. */
static socklen_t sa_len(const struct sockaddr *sa)
{
	switch (sa ? sa->sa_family : AF_UNSPEC) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

const char *iwt_addr_host(const struct sockaddr *sa, char *buf, size_t len)
{
	socklen_t sl = sa_len(sa);

	if (!sa)
		snprintf(buf, len, "?");
	else if (!sl)
		snprintf(buf, len, "(family %d)", sa->sa_family);
	else if (getnameinfo(sa, sl, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
		snprintf(buf, len, "?");
	return buf;
}

uint16_t iwt_addr_port(const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (sa && sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return 0;
}

const char *iwt_addr_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[IWT_ADDR_STRLEN];

	if (!sa_len(sa))
		return iwt_addr_host(sa, buf, len);
	iwt_addr_host(sa, host, sizeof(host));
	snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
		 iwt_addr_port(sa));
	return buf;
}

void iwt_addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}
