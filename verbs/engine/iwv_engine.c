/* SPDX-License-Identifier: MIT */
/*
 * iwv_engine.c - choosing an I/O engine backend and dispatching to it.
 *
 * Theory of operation.  iwv_engine_create() picks the backend (an explicit
 * type, else $IWARP_ENGINE, else epoll: with its direct reads and writes of
 * the busy stream it measured faster than io_uring for both bandwidth and
 * latency on our 2-core machines) and every public call goes through the
 * backend's ops table.  The dispatcher also owns the one rule both backends
 * need for memory safety: callbacks may remove any endpoint, including one a
 * backend loop is about to look at (a later entry of the same epoll_wait()
 * batch, the ep whose tx_done() is running).  So released() is never called
 * while a public call is on the stack: iwv_eng_release() queues the ep and the
 * outermost call delivers the queue just before it returns.  Seen from the
 * owner, an epoll ep removed outside any callback is still released inside
 * iwv_engine_remove(), as iwv_engine.h promises.
 *
 * The few socket helpers both backends use (TCP_NODELAY, the SO_LINGER abort,
 * reading a connect's outcome, the accept loop) live here once, so the two
 * report the same callbacks for the same socket events.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <iwarp/iw_err.h>

#include "iwv_engine_int.h"

/* Connections taken per readiness of a listener, so one busy listener cannot
 * starve the other endpoints of a progress call. */
#define IWV_ENG_ACCEPT_BUDGET 32

int iwv_engine_create(enum iwv_engine_type type, struct iwv_engine **e)
{
	const char *env;

	if (!e)
		return IW_EINVAL;
	*e = NULL;
	if (type == IWV_ENGINE_DEFAULT) {
		env = getenv("IWARP_ENGINE");
		if (env && *env) {
			if (!strcmp(env, "uring"))
				type = IWV_ENGINE_URING;
			else if (!strcmp(env, "epoll"))
				type = IWV_ENGINE_EPOLL;
			else
				return IW_EINVAL;
		}
	}
	switch (type) {
	case IWV_ENGINE_URING:
		return iwv_engine_uring_create(e);
	case IWV_ENGINE_DEFAULT:
	case IWV_ENGINE_EPOLL:
		return iwv_engine_epoll_create(e);
	}
	return IW_EINVAL;
}

static void eng_enter(struct iwv_engine *e)
{
	if (e->depth++ == 0)
		e->ncb = 0;
}

/*
 * Leaving the outermost call: flush the backend and deliver released().  A
 * released() callback may call into the engine again (remove another ep,
 * kick one); depth stays raised meanwhile so that work lands in this loop.
 */
static void eng_leave(struct iwv_engine *e)
{
	struct iwv_ep *ep;

	if (e->depth > 1) {
		e->depth--;
		return;
	}
	for (;;) {
		if (e->ops->flush)
			e->ops->flush(e);
		ep = e->rel_head;
		if (!ep)
			break;
		e->rel_head = ep->eng_next;
		if (!e->rel_head)
			e->rel_tail = &e->rel_head;
		ep->eng_next = NULL;
		e->ncb++;
		ep->ops->released(ep);
	}
	e->depth = 0;
}

void iwv_eng_release(struct iwv_engine *e, struct iwv_ep *ep)
{
	ep->eng_next = NULL;
	*e->rel_tail = ep;
	e->rel_tail = &ep->eng_next;
}

void iwv_engine_destroy(struct iwv_engine *e)
{
	if (e)
		e->ops->destroy(e);
}

const char *iwv_engine_name(const struct iwv_engine *e)
{
	return e->ops->name;
}

bool iwv_engine_rx_lent(const struct iwv_engine *e)
{
	return e->ops->rx_lent;
}

int iwv_engine_fd(const struct iwv_engine *e)
{
	return e->fd;
}

int iwv_engine_add(struct iwv_engine *e, struct iwv_ep *ep)
{
	int rc;

	ep->eng_flags = 0;
	ep->eng_inflight = 0;
	ep->eng_next = NULL;
	ep->eng_priv = NULL;
	if (ep->kind != IWV_EP_LISTEN)
		iwv_eng_set_nodelay(ep->fd);
	eng_enter(e);
	rc = e->ops->add(e, ep);
	eng_leave(e);
	return rc;
}

void iwv_engine_kick_tx(struct iwv_engine *e, struct iwv_ep *ep)
{
	eng_enter(e);
	e->ops->kick_tx(e, ep);
	eng_leave(e);
}

void iwv_engine_rx_pause(struct iwv_engine *e, struct iwv_ep *ep, bool on)
{
	uint32_t f = on ? ep->eng_flags | IWV_EPF_RX_PAUSED : ep->eng_flags & ~IWV_EPF_RX_PAUSED;

	if (f == ep->eng_flags || (ep->eng_flags & IWV_EPF_REMOVED))
		return;
	ep->eng_flags = f;
	eng_enter(e);
	e->ops->rx_changed(e, ep);
	eng_leave(e);
}

void iwv_engine_shutdown_wr(struct iwv_engine *e, struct iwv_ep *ep)
{
	eng_enter(e);
	e->ops->shutdown_wr(e, ep);
	eng_leave(e);
}

void iwv_engine_remove(struct iwv_engine *e, struct iwv_ep *ep, bool abort)
{
	/* A second remove would release twice: the first one wins. */
	if (ep->eng_flags & IWV_EPF_REMOVED)
		return;
	eng_enter(e);
	ep->eng_flags |= IWV_EPF_REMOVED;
	e->ops->remove(e, ep, abort);
	eng_leave(e);
}

int iwv_engine_progress(struct iwv_engine *e)
{
	eng_enter(e);
	e->ops->progress(e);
	eng_leave(e);
	return e->ncb; /* released() calls of eng_leave() included */
}

/* ---------------------------------------------------------------------- */
/* Socket helpers shared by the backends                                   */
/* ---------------------------------------------------------------------- */

void iwv_eng_set_nodelay(int fd)
{
	int one = 1;

	/* Fails only on non-TCP sockets (tests hand in socketpairs): harmless. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void iwv_eng_set_abort(int fd)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

int iwv_eng_connect_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	return -err;
}

int iwv_eng_connect_outcome(int fd, bool writable, bool hup)
{
	int err = iwv_eng_connect_error(fd);

	if (err || writable)
		return err;
	/* Hung up without an error and never writable: no connection came of
	 * it, and waiting again would spin on the hang-up. */
	return hup ? -ENOTCONN : 1;
}

void iwv_eng_accept_all(struct iwv_engine *e, struct iwv_ep *ep)
{
	int i, fd, err;

	for (i = 0; i < IWV_ENG_ACCEPT_BUDGET; i++) {
		fd = accept4(ep->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			iwv_eng_set_nodelay(fd);
			e->ncb++;
			ep->ops->accepted(ep, fd);
			/* removed, or paused: the owner has no room for more */
			if (iwv_eng_gone(ep) || (ep->eng_flags & IWV_EPF_RX_PAUSED))
				return;
			continue;
		}
		err = errno;
		switch (err) {
		case EAGAIN:
			return;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			/* Out of descriptors or memory: the connection waits in
			 * the backlog, the listener pauses (its readiness would
			 * stay and spin) and the owner says when to try again. */
			ep->eng_flags |= IWV_EPF_RX_PAUSED;
			e->ncb++;
			ep->ops->accepted(ep, -err);
			return;
		case EINTR:
		case ECONNABORTED:
		case EPROTO:
		case ENETDOWN:
		case ENOPROTOOPT:
		case EHOSTDOWN:
		case ENONET:
		case EHOSTUNREACH:
		case EOPNOTSUPP:
		case ENETUNREACH:
		case EPERM:
			/* accept(2): errors of one pending connection (already
			 * gone, or refused by a firewall), not of the listener. */
			continue;
		default:
			ep->eng_flags |= IWV_EPF_DEAD;
			e->ncb++;
			ep->ops->accepted(ep, -err);
			return;
		}
	}
}
