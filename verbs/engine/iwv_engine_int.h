/* SPDX-License-Identifier: MIT */
/*
 * iwv_engine_int.h - what the two I/O engine backends share: the ops table
 * iwv_engine.c dispatches to, the common part of an engine, the endpoint flag
 * bits both backends use the same way, and the helpers that make both report
 * the same callbacks for the same socket events.  Private to verbs/engine/.
 */
#ifndef IWARP_IWV_ENGINE_INT_H
#define IWARP_IWV_ENGINE_INT_H

#include "iwv_engine.h"

/* Most iovecs one tx_iov() call may fill: one writev/sendmsg carries that many. */
#define IWV_ENG_MAX_IOV 64

/*
 * ep->eng_flags.  Bits below IWV_EPF_BACKEND mean the same in both backends;
 * a backend keeps its own bookkeeping from IWV_EPF_BACKEND up.
 */
enum {
	IWV_EPF_REMOVED = 1u << 0,	/* iwv_engine_remove() was called: no more callbacks */
	IWV_EPF_DEAD = 1u << 1,		/* LISTEN/CONNECTING failed and was reported */
	IWV_EPF_RX_DONE = 1u << 2,	/* rx(0) or rx(-errno) was reported */
	IWV_EPF_TX_ERR = 1u << 3,	/* tx_done(-errno) was reported */
	IWV_EPF_TX_WANT = 1u << 4,	/* tx_iov() may have something: ask it */
	IWV_EPF_SHUT_PENDING = 1u << 5, /* FIN once tx_iov() returns 0 */
	IWV_EPF_SHUT_DONE = 1u << 6,	/* shutdown(SHUT_WR) was made */
	IWV_EPF_RX_PAUSED = 1u << 7,	/* iwv_engine_rx_pause(on): read nothing */
	IWV_EPF_BACKEND = 1u << 8,
};

struct iwv_engine_ops {
	const char *name;
	/* The buffer rx_buf() names stays with a receive in flight after the
	 * engine call returns (io_uring); false: it is used for one recv() and
	 * the rx callback that follows it, inside the same call (epoll). */
	bool rx_lent;
	void (*destroy)(struct iwv_engine *e);
	int (*add)(struct iwv_engine *e, struct iwv_ep *ep);
	void (*kick_tx)(struct iwv_engine *e, struct iwv_ep *ep);
	void (*shutdown_wr)(struct iwv_engine *e, struct iwv_ep *ep);
	/* IWV_EPF_RX_PAUSED changed: bring the reading in line */
	void (*rx_changed)(struct iwv_engine *e, struct iwv_ep *ep);
	void (*remove)(struct iwv_engine *e, struct iwv_ep *ep, bool abort);
	void (*progress)(struct iwv_engine *e);
	/* Called whenever the outermost public call is about to return (io_uring
	 * submits what the call prepared); may be NULL. */
	void (*flush)(struct iwv_engine *e);
};

/*
 * The part of every engine the dispatcher owns; a backend embeds it as its
 * first member.  depth counts public calls on the stack (callbacks may call
 * back into the engine): released() waits until it is 0 so that no backend
 * loop can touch an ep its owner freed.
 */
struct iwv_engine {
	const struct iwv_engine_ops *ops;
	int fd;
	int depth;
	int ncb; /* callbacks made since the outermost call began */
	struct iwv_ep *rel_head;
	struct iwv_ep **rel_tail;
};

int iwv_engine_epoll_create(struct iwv_engine **e);
/* IW_ENOTSUP when liburing is not built in or the kernel refuses the ring. */
int iwv_engine_uring_create(struct iwv_engine **e);

/* The backend no longer refers to ep and has closed its fd: released() once
 * the outermost public call returns. */
void iwv_eng_release(struct iwv_engine *e, struct iwv_ep *ep);

void iwv_eng_set_nodelay(int fd);
/* SO_LINGER {1, 0}: the close that follows sends RST instead of FIN. */
void iwv_eng_set_abort(int fd);
/* The pending error of a socket (SO_ERROR): 0 or -errno. */
int iwv_eng_connect_error(int fd);
/*
 * Outcome of a non-blocking connect whose socket polled ready: 0 connected,
 * -errno failed, 1 not decided yet (poll again).  writable: POLLOUT was
 * reported; hup: POLLHUP or POLLERR was.
 */
int iwv_eng_connect_outcome(int fd, bool writable, bool hup);
/*
 * Accept what the listening ep has pending (a bounded batch), reporting each
 * through accepted().  A failure that stops the listener is reported once and
 * marks the ep IWV_EPF_DEAD; running out of descriptors or memory is reported
 * and pauses it (IWV_EPF_RX_PAUSED, the backend drops its wait); aborted
 * handshakes are skipped.  Stops early if a callback removed or paused ep.
 */
void iwv_eng_accept_all(struct iwv_engine *e, struct iwv_ep *ep);

/*
 * Callback wrappers.  The event callbacks are counted for
 * iwv_engine_progress(); rx_buf and tx_iov are questions, not events.
 */
static inline void iwv_eng_cb_rx_buf(struct iwv_engine *e, struct iwv_ep *ep, void **buf,
				     size_t *len)
{
	ep->ops->rx_buf(ep, buf, len);
}

static inline void iwv_eng_cb_rx(struct iwv_engine *e, struct iwv_ep *ep, ssize_t n)
{
	e->ncb++;
	ep->ops->rx(ep, n);
}

static inline int iwv_eng_cb_tx_iov(struct iwv_engine *e, struct iwv_ep *ep, struct iovec *iov,
				    int max)
{
	int n = ep->ops->tx_iov(ep, iov, max);
	return n < 0 ? 0 : (n > max ? max : n);
}

static inline void iwv_eng_cb_tx_done(struct iwv_engine *e, struct iwv_ep *ep, ssize_t n)
{
	e->ncb++;
	ep->ops->tx_done(ep, n);
}

static inline void iwv_eng_cb_connected(struct iwv_engine *e, struct iwv_ep *ep, int err)
{
	e->ncb++;
	ep->ops->connected(ep, err);
}

static inline bool iwv_eng_gone(const struct iwv_ep *ep)
{
	return ep->eng_flags & IWV_EPF_REMOVED;
}

#endif /* IWARP_IWV_ENGINE_INT_H */
