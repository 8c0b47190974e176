/* SPDX-License-Identifier: MIT */
/*
 * iwt_sock.h - plain TCP sockets for the tools that speak TCP themselves
 * (iwmpa's MPA peer, benchmarks' baselines).  Part of the tools library
 * (tools/lib, prefix iwt_).
 */
#ifndef IWARP_TOOLS_IWT_SOCK_H
#define IWARP_TOOLS_IWT_SOCK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A blocking, close-on-exec TCP socket for `host` `port` (a decimal port
 * string): connected to it, or (`passive`) bound to it with SO_REUSEADDR and
 * listening with `backlog`.  Every address getaddrinfo gives is tried in
 * turn.  Returns the fd with the address it is connected to or bound to in
 * `desc` ("ADDR:PORT", the port the system chose when `port` was "0");
 * -1 with *why set to the resolver's or the system's text.
 */
int iwt_tcp_open(const char *host, const char *port, bool passive, int backlog, char *desc,
		 size_t desc_len, const char **why);

#endif
