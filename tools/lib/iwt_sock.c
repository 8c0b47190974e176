/* SPDX-License-Identifier: MIT */
/*
 * iwt_sock.c - plain TCP sockets for the tools (iwt_sock.h).
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iwt_addr.h"
#include "iwt_sock.h"

/* Connect or bind + listen `fd` to `ai`: 0, or -1 with errno. */
static int tcp_setup(int fd, const struct addrinfo *ai, bool passive, int backlog)
{
	int one = 1;

	if (!passive)
		return connect(fd, ai->ai_addr, ai->ai_addrlen);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0)
		return -1;
	return listen(fd, backlog);
}

int iwt_tcp_open(const char *host, const char *port, bool passive, int backlog, char *desc,
		 size_t desc_len, const char **why)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, r, e = EADDRNOTAVAIL;

	if (passive)
		hints.ai_flags |= AI_PASSIVE;
	r = getaddrinfo(host, port, &hints, &res);
	if (r != 0) {
		*why = gai_strerror(r);
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (tcp_setup(fd, ai, passive, backlog) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		*why = strerror(e);
		return -1;
	}
	if ((passive ? getsockname(fd, (struct sockaddr *)&ss, &sl)
		     : getpeername(fd, (struct sockaddr *)&ss, &sl)) != 0)
		ss.ss_family = AF_UNSPEC;
	iwt_addr_format((struct sockaddr *)&ss, desc, desc_len);
	return fd;
}
