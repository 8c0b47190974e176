/* SPDX-License-Identifier: MIT */
/*
 * rdma_addr.c - the drop-in librdmacm.so.1: rdma_getaddrinfo and the
 * rdma_verbs.h helpers built on ids (rdma_create_ep, rdma_get_request), and
 * rpoll.
 *
 * Theory of operation.  Addresses are resolved with the system resolver
 * (getaddrinfo): the one software device owns every local address, so there
 * is no route to compute.  An endpoint made by rdma_create_ep is a
 * synchronous id (its own event channel) that is resolved or listening when
 * the call returns, with its QP when attributes are given, as librdmacm
 * does.  rpoll is poll(2): every descriptor here is a kernel one (sockets,
 * event fds), so rsockets' poll has nothing of its own to add.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "iwc.h"

static struct rdma_addrinfo *rai_from(const struct addrinfo *ai, int flags)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	struct sockaddr *sa;

	if (!r)
		return NULL;
	sa = malloc(ai->ai_addrlen);
	if (!sa) {
		free(r);
		return NULL;
	}
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	r->ai_flags = flags;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = IBV_QPT_RC;
	r->ai_port_space = RDMA_PS_TCP;
	if (flags & RAI_PASSIVE) {
		r->ai_src_addr = sa;
		r->ai_src_len = ai->ai_addrlen;
	} else {
		r->ai_dst_addr = sa;
		r->ai_dst_len = ai->ai_addrlen;
	}
	return r;
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h, *ai = NULL, *a;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	int flags = hints ? hints->ai_flags : 0, rc;

	if (!res || (!node && !service)) {
		errno = EINVAL;
		return -1;
	}
	if (hints && hints->ai_port_space && hints->ai_port_space != RDMA_PS_TCP) {
		errno = EOPNOTSUPP;
		return -1;
	}
	memset(&h, 0, sizeof(h));
	h.ai_family = hints ? hints->ai_family : AF_UNSPEC;
	h.ai_socktype = SOCK_STREAM;
	h.ai_flags = ((flags & RAI_PASSIVE) ? AI_PASSIVE : 0) |
		     ((flags & RAI_NUMERICHOST) ? AI_NUMERICHOST : 0);
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc) {
		errno = rc == EAI_SYSTEM ? errno : ENOENT;
		return -1;
	}
	for (a = ai; a; a = a->ai_next) {
		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		*tail = rai_from(a, flags);
		if (!*tail) {
			freeaddrinfo(ai);
			rdma_freeaddrinfo(head);
			errno = ENOMEM;
			return -1;
		}
		tail = &(*tail)->ai_next;
	}
	freeaddrinfo(ai);
	if (!head) {
		errno = ENOENT;
		return -1;
	}
	*res = head;
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = n;
	}
}

/* The next event of a synchronous id's channel, which must be `type`. */
static int sync_event(struct rdma_cm_id *id, enum rdma_cm_event_type type,
		      struct rdma_cm_event **out)
{
	struct rdma_cm_event *e;
	int status;

	if (rdma_get_cm_event(id->channel, &e) != 0)
		return -1;
	if (e->event != type) {
		status = e->status;
		rdma_ack_cm_event(e);
		errno = status < 0 ? -status : ECONNREFUSED;
		return -1;
	}
	if (out) {
		*out = e;
		return 0;
	}
	rdma_ack_cm_event(e);
	return 0;
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm;

	if (!id || !res) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cm, NULL, RDMA_PS_TCP) != 0)
		return -1;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm, res->ai_src_addr) != 0)
			goto fail;
	} else {
		if (rdma_resolve_addr(cm, res->ai_src_addr, res->ai_dst_addr, 2000) != 0 ||
		    sync_event(cm, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) != 0 ||
		    rdma_resolve_route(cm, 2000) != 0 ||
		    sync_event(cm, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) != 0)
			goto fail;
		if (qp_init_attr && rdma_create_qp(cm, pd, qp_init_attr) != 0)
			goto fail;
	}
	*id = cm;
	return 0;
fail : {
	int e = errno;

	rdma_destroy_id(cm);
	errno = e;
	return -1;
}
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id)
		rdma_destroy_id(id);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdma_cm_event *e;

	if (!listen || !id) {
		errno = EINVAL;
		return -1;
	}
	if (sync_event(listen, RDMA_CM_EVENT_CONNECT_REQUEST, &e) != 0)
		return -1;
	*id = e->id;
	/* The event stays with the new id (id->event) until it is connected. */
	return 0;
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}
