/* SPDX-License-Identifier: MIT */
/*
 * iwv_engine.h - the I/O engine: all the reading and writing of sockets (the
 * connection manager, verbs/iwcm.c, only creates, binds, listens on and
 * connects them; docs/architecture.md §2, rule 2).  Internal to verbs/engine/
 * and its owner in verbs/.
 *
 * The engine moves octets between TCP sockets and "endpoints" (struct iwv_ep)
 * and knows nothing of MPA, DDP or RDMAP: an endpoint says where received
 * octets go (rx_buf) and what to send (tx_iov), and hears what happened
 * through its callbacks.  Two backends behave the same:
 *
 *   epoll    non-blocking sockets, level-triggered readiness; writes happen
 *            inline in iwv_engine_kick_tx() (sendmsg of up to IWV_ENG_MAX_IOV
 *            iovecs) and, when the socket was full, again once it is
 *            writable (EPOLLOUT);
 *   io_uring one recv and at most one sendmsg in flight per stream endpoint;
 *            a listener or a pending connect waits in an io_uring poll, then
 *            accept4() / SO_ERROR; submissions are made once per outermost
 *            engine call, completions reaped in iwv_engine_progress().
 *
 * Threading: none inside.  The caller serialises every call (the verbs layer
 * holds its context lock) and waits for work itself: iwv_engine_fd() becomes
 * readable when iwv_engine_progress() has something to do, so a caller may
 * poll() it (with the lock dropped) and then call progress (lock held).
 *
 * Event callbacks (rx, tx_done, connected, accepted) run inside
 * iwv_engine_progress() and iwv_engine_kick_tx().  The question callbacks
 * rx_buf and tx_iov may also be called from iwv_engine_add() (io_uring posts
 * its first recv at once) and iwv_engine_shutdown_wr() (is anything still to
 * send?).  Callbacks may call iwv_engine_kick_tx(), iwv_engine_shutdown_wr(),
 * iwv_engine_rx_pause() and iwv_engine_remove() on any endpoint, including
 * their own.  After
 * iwv_engine_remove(ep) the engine calls no callback of ep except, exactly
 * once, released(ep): never while an engine call is on the stack (the
 * outermost engine call delivers it as it returns, which may be
 * iwv_engine_remove() itself), and with io_uring only once no operation
 * refers to ep or its buffers.  The engine then sets ep->fd to -1.
 *
 * Reception pauses on request (iwv_engine_rx_pause(): nothing more is read,
 * so TCP flow control holds the peer back); otherwise rx_buf must always
 * give space (with io_uring the buffer stays lent to a recv in flight).  A
 * paused listener accepts nothing: new connections wait in the kernel's
 * accept queue, and past it the peers' TCP retries its SYN.
 */
#ifndef IWARP_IWV_ENGINE_H
#define IWARP_IWV_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <iwarp/iwv.h>

struct iwv_ep;

enum iwv_ep_kind {
	IWV_EP_LISTEN,	   /* fd is a listening socket: accepted() for each connection */
	IWV_EP_CONNECTING, /* fd has a non-blocking connect() in progress (EINPROGRESS or
			      already done): connected() once, then the ep is a STREAM */
	IWV_EP_STREAM,	   /* fd is a connected socket: rx/tx */
};

struct iwv_ep_ops {
	/*
	 * STREAM: where the next received octets go.  Sets *buf and *len (> 0).
	 * The buffer must stay valid until rx() is called for it (io_uring keeps
	 * a recv in flight on it) or until released().
	 */
	void (*rx_buf)(struct iwv_ep *ep, void **buf, size_t *len);
	/* STREAM: n > 0 octets arrived in the buffer from rx_buf; n == 0: the peer's
	 * FIN (end of stream; no more rx calls); n < 0: -errno (connection failed;
	 * no more rx calls). */
	void (*rx)(struct iwv_ep *ep, ssize_t n);
	/*
	 * STREAM: octets to send now: fill up to max iovecs, return the count
	 * (0 = nothing to send).  The memory they point at stays valid until
	 * tx_done() reports it sent.
	 */
	int (*tx_iov)(struct iwv_ep *ep, struct iovec *iov, int max);
	/* STREAM: n > 0 octets of what tx_iov() gave were sent (possibly fewer than
	 * offered: the next tx_iov() starts after them); n < 0: -errno, the send
	 * failed (the connection is broken; rx() will also report it or EOF). */
	void (*tx_done)(struct iwv_ep *ep, ssize_t n);
	/* CONNECTING: err 0 = connected (the ep is now a STREAM and receiving),
	 * or -errno (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH...; the ep is dead:
	 * the owner calls iwv_engine_remove()). */
	void (*connected)(struct iwv_ep *ep, int err);
	/* LISTEN: a new connection: fd (non-blocking, CLOEXEC, TCP_NODELAY set) now
	 * belongs to the callee; or fd = -errno: -EMFILE, -ENFILE, -ENOBUFS or
	 * -ENOMEM (out of descriptors or memory) pause the listener, as
	 * iwv_engine_rx_pause(ep, true) would, until the owner resumes it (a
	 * level-triggered wait would otherwise spin on the connection that
	 * cannot be taken); any other -errno stops the listener for good. */
	void (*accepted)(struct iwv_ep *ep, int fd);
	/* After iwv_engine_remove(): the engine no longer refers to ep; its fd is
	 * closed.  The owner may free ep and its buffers now. */
	void (*released)(struct iwv_ep *ep);
};

struct iwv_ep {
	int fd;
	enum iwv_ep_kind kind;
	const struct iwv_ep_ops *ops;
	void *owner; /* for the callbacks */
	/* engine private: */
	uint32_t eng_flags;
	int eng_inflight; /* io_uring operations referring to ep */
	struct iwv_ep *eng_next;
	void *eng_priv;
};

struct iwv_engine;

/*
 * Create an engine.  IWV_ENGINE_DEFAULT: $IWARP_ENGINE ("uring" or "epoll")
 * if set, else epoll.  An explicit IWV_ENGINE_URING that cannot work fails with
 * IW_ENOTSUP.  Returns IW_OK, IW_ENOTSUP, IW_EINVAL ($IWARP_ENGINE names
 * nothing known) or IW_ENOMEM; *e is NULL on failure.
 */
int iwv_engine_create(enum iwv_engine_type type, struct iwv_engine **e);
/* Every ep must have been removed and released. */
void iwv_engine_destroy(struct iwv_engine *e);
const char *iwv_engine_name(const struct iwv_engine *e); /* "uring" or "epoll" */
/* Whether the buffer rx_buf() names stays lent to a receive in flight after
 * the engine call (io_uring: each stream needs a buffer of its own for as
 * long as it reads).  false (epoll): rx_buf() is asked right before a recv()
 * and the buffer is free again once the rx callback that follows returns, so
 * owners may hand every stream the same buffer. */
bool iwv_engine_rx_lent(const struct iwv_engine *e);
/* Readable (POLLIN) when iwv_engine_progress() has something to do. */
int iwv_engine_fd(const struct iwv_engine *e);

/*
 * Start I/O on ep (fd non-blocking, kind set, ops set).  STREAM and
 * CONNECTING fds get TCP_NODELAY.  IW_OK, IW_ENOMEM, or IW_EINVAL for an fd
 * the backend cannot watch.
 */
int iwv_engine_add(struct iwv_engine *e, struct iwv_ep *ep);

/* ep (STREAM) has new octets for tx_iov(): send as much as the socket takes
 * now (epoll) or start a send (io_uring, unless one is in flight: then the
 * next one starts when it completes). */
void iwv_engine_kick_tx(struct iwv_engine *e, struct iwv_ep *ep);

/* ep (STREAM): once everything tx_iov() offers has been sent, send FIN
 * (shutdown(SHUT_WR)).  Reception goes on. */
void iwv_engine_shutdown_wr(struct iwv_engine *e, struct iwv_ep *ep);

/* ep (STREAM): stop (on) or resume reading.  No rx callback comes while
 * paused; a resumed stream is read again as data arrives, and at once if
 * some is waiting.  ep (LISTEN): stop or resume accepting (no accepted()
 * while paused; waiting connections are taken once resumed). */
void iwv_engine_rx_pause(struct iwv_engine *e, struct iwv_ep *ep, bool on);

/* Stop all I/O on ep and close its fd: abort = true resets the connection
 * (SO_LINGER 0: RST); false just closes.  released() follows (see top). */
void iwv_engine_remove(struct iwv_engine *e, struct iwv_ep *ep, bool abort);

/*
 * Do what is ready, without blocking: reads (many octets per call), writes,
 * accepts, connects, completions.  Returns the number of event callbacks made
 * (rx, tx_done, connected, accepted, released; 0 = nothing was ready).
 */
int iwv_engine_progress(struct iwv_engine *e);

#endif /* IWARP_IWV_ENGINE_H */
