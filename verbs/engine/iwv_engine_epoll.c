/* SPDX-License-Identifier: MIT */
/*
 * iwv_engine_epoll.c - the epoll backend of the I/O engine.
 *
 * Theory of operation.  Every endpoint's socket is non-blocking and sits in
 * one level-triggered epoll set, whose fd is the engine fd.  What an ep is
 * registered for follows its state and nothing else (ep_update()):
 *
 *   LISTEN      EPOLLIN until accept fails for good;
 *   CONNECTING  EPOLLOUT until the connect's outcome (SO_ERROR) is known;
 *   STREAM      EPOLLIN until rx(0)/rx(-errno), plus EPOLLOUT only while a
 *               write stopped short (socket buffer full).
 *
 * An ep that wants nothing is taken out of the set, because epoll reports
 * EPOLLHUP/EPOLLERR even for an empty mask and a level-triggered hang-up
 * would make the engine fd readable forever.
 *
 * Sending is inline: iwv_engine_kick_tx() loops tx_iov() -> sendmsg() of up
 * to IWV_ENG_MAX_IOV iovecs -> tx_done(n) until tx_iov() has nothing or the
 * socket takes less than offered; then EPOLLOUT resumes the loop.  A short
 * write ends the loop at once, since the next call would only say EAGAIN
 * (docs/architecture.md §2, rule 3: every syscall counts).  Receiving is a
 * few recv() calls per ready ep and progress call into the owner's rx_buf,
 * ending early when a read does not fill the buffer (the socket is drained).
 *
 * iwv_engine_remove() takes the fd out of the set, closes it (SO_LINGER 0
 * first for an abort) and hands the ep to iwv_eng_release(): the dispatcher
 * calls released() when the outermost engine call returns, so an ep removed
 * by a callback is never looked at again, even though a later entry of the
 * same epoll_wait() batch still points at it (the REMOVED flag skips it).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iwarp/iw_err.h>

#include "iw_alloc.h"
#include "iwv_engine_int.h"

/* Readiness reports taken per progress call. */
#define EP_MAX_EVENTS 64
/* recv() calls per ready stream per progress call: bounds the time one busy
 * connection holds the others up. */
#define EP_RX_BUDGET 4

enum {
	EPF_IN_SET = IWV_EPF_BACKEND << 0,   /* fd is in the epoll set */
	EPF_REG_IN = IWV_EPF_BACKEND << 1,   /* ...registered for EPOLLIN */
	EPF_REG_OUT = IWV_EPF_BACKEND << 2,  /* ...registered for EPOLLOUT */
	EPF_WANT_OUT = IWV_EPF_BACKEND << 3, /* a write stopped short: wait for EPOLLOUT */
};

struct ep_engine {
	struct iwv_engine base;
	struct epoll_event ev[EP_MAX_EVENTS];
	/* tx_iov() fills it right before each sendmsg(); callbacks in between
	 * may reuse it, as nothing is kept in it across a callback. */
	struct iovec iov[IWV_ENG_MAX_IOV];
	/* The stream that received last: progress reads it directly (see
	 * ep_progress) and asks epoll only now and then. */
	struct iwv_ep *hot;
	/* The stream whose last write stopped short: retried directly too. */
	struct iwv_ep *hot_tx;
	unsigned int calls;
};

/* Progress calls per epoll_wait() while the hot stream has data, and while it
 * has none (bounds how long other sockets wait to be looked at). */
#define EP_HOT_BUSY_EVERY 8u
#define EP_HOT_IDLE_EVERY 4u

static struct ep_engine *to_ep_engine(struct iwv_engine *e)
{
	return (struct ep_engine *)e;
}

/* Bring ep's registration in line with what its state wants. */
static void ep_update(struct ep_engine *pe, struct iwv_ep *ep)
{
	uint32_t f = ep->eng_flags, want = 0, have = 0;
	struct epoll_event ev = {.data.ptr = ep};
	int op;

	if (!(f & (IWV_EPF_REMOVED | IWV_EPF_DEAD))) {
		switch (ep->kind) {
		case IWV_EP_LISTEN:
			if (!(f & IWV_EPF_RX_PAUSED))
				want = EPOLLIN;
			break;
		case IWV_EP_CONNECTING:
			want = EPOLLOUT;
			break;
		case IWV_EP_STREAM:
			if (!(f & (IWV_EPF_RX_DONE | IWV_EPF_RX_PAUSED)))
				want |= EPOLLIN;
			if ((f & EPF_WANT_OUT) && !(f & IWV_EPF_TX_ERR))
				want |= EPOLLOUT;
			break;
		}
	}
	if (f & EPF_REG_IN)
		have |= EPOLLIN;
	if (f & EPF_REG_OUT)
		have |= EPOLLOUT;
	if ((f & EPF_IN_SET) && want == have)
		return;
	if (!want) {
		if (!(f & EPF_IN_SET))
			return;
		op = EPOLL_CTL_DEL;
	} else {
		op = (f & EPF_IN_SET) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	}
	ev.events = want;
	/*
	 * DEL and MOD of a registered fd cannot fail; ADD fails only when the
	 * kernel is out of memory or over max_user_watches.  Either way the
	 * flags describe the set as it now is.
	 */
	if (epoll_ctl(pe->base.fd, op, ep->fd, &ev) < 0) {
		if (op != EPOLL_CTL_ADD)
			return;
		want = 0;
	}
	f &= ~(EPF_IN_SET | EPF_REG_IN | EPF_REG_OUT);
	if (want)
		f |= EPF_IN_SET;
	if (want & EPOLLIN)
		f |= EPF_REG_IN;
	if (want & EPOLLOUT)
		f |= EPF_REG_OUT;
	ep->eng_flags = f;
}

static void ep_fin(struct iwv_ep *ep)
{
	ep->eng_flags = (ep->eng_flags & ~IWV_EPF_SHUT_PENDING) | IWV_EPF_SHUT_DONE;
	/* ENOTCONN after a reset is reported by recv/send, not here. */
	(void)shutdown(ep->fd, SHUT_WR);
}

/* The send loop.  Returns with ep possibly removed by a callback. */
static void ep_tx(struct ep_engine *pe, struct iwv_ep *ep)
{
	struct iwv_engine *e = &pe->base;
	struct msghdr msg = {.msg_iov = pe->iov};
	size_t offered;
	ssize_t n;
	int cnt, i;

	for (;;) {
		if (ep->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_TX_ERR | IWV_EPF_SHUT_DONE))
			return;
		cnt = iwv_eng_cb_tx_iov(e, ep, pe->iov, IWV_ENG_MAX_IOV);
		if (cnt == 0) {
			ep->eng_flags &= ~(EPF_WANT_OUT | IWV_EPF_TX_WANT);
			if (ep->eng_flags & IWV_EPF_SHUT_PENDING)
				ep_fin(ep);
			return;
		}
		offered = 0;
		for (i = 0; i < cnt; i++)
			offered += pe->iov[i].iov_len;
		if (!offered) {
			/* Only empty iovecs: as good as nothing, and asking
			 * again would give the same. */
			ep->eng_flags &= ~(EPF_WANT_OUT | IWV_EPF_TX_WANT);
			return;
		}
		msg.msg_iovlen = (size_t)cnt;
		/* MSG_NOSIGNAL: a reset peer is an error code, not SIGPIPE. */
		n = sendmsg(ep->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				ep->eng_flags |= EPF_WANT_OUT;
				pe->hot_tx = ep;
				return;
			}
			ep->eng_flags = (ep->eng_flags & ~(EPF_WANT_OUT | IWV_EPF_TX_WANT)) |
					IWV_EPF_TX_ERR;
			iwv_eng_cb_tx_done(e, ep, -errno);
			return;
		}
		/* n == 0 (not seen on TCP) waits for EPOLLOUT like a short write. */
		if (n > 0)
			iwv_eng_cb_tx_done(e, ep, n);
		if ((size_t)n < offered) {
			ep->eng_flags |= EPF_WANT_OUT;
			pe->hot_tx = ep;
			return;
		}
		ep->eng_flags &= ~EPF_WANT_OUT;
	}
}

/* Up to EP_RX_BUDGET reads into rx_buf.  Returns with ep possibly removed. */
/* Receive what ep has (a few reads at most); returns whether anything came. */
static bool ep_rx(struct ep_engine *pe, struct iwv_ep *ep)
{
	struct iwv_engine *e = &pe->base;
	bool got = false;
	void *buf;
	size_t len;
	ssize_t n;
	int i;

	for (i = 0; i < EP_RX_BUDGET; i++) {
		if (ep->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_RX_DONE | IWV_EPF_RX_PAUSED))
			return got;
		buf = NULL;
		len = 0;
		iwv_eng_cb_rx_buf(e, ep, &buf, &len);
		if (!buf || !len)
			return got; /* contract breach by the owner: do not spin on it */
		n = recv(ep->fd, buf, len, MSG_DONTWAIT);
		if (n > 0) {
			got = true;
			pe->hot = ep;
			iwv_eng_cb_rx(e, ep, n);
			if ((size_t)n < len)
				return got;
			continue;
		}
		if (n < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (n < 0 && errno == EAGAIN)
			return got;
		ep->eng_flags |= IWV_EPF_RX_DONE;
		if (pe->hot == ep)
			pe->hot = NULL;
		iwv_eng_cb_rx(e, ep, n < 0 ? -errno : 0);
		return true;
	}
	return got;
}

static void ep_connect_done(struct ep_engine *pe, struct iwv_ep *ep, uint32_t events)
{
	int err =
		iwv_eng_connect_outcome(ep->fd, events & EPOLLOUT, events & (EPOLLHUP | EPOLLERR));

	if (err > 0)
		return;
	if (err) {
		ep->eng_flags |= IWV_EPF_DEAD;
		ep_update(pe, ep);
		iwv_eng_cb_connected(&pe->base, ep, err);
		return;
	}
	/* A STREAM from here on: receiving before the owner hears of it, as
	 * iwv_engine.h says. */
	ep->kind = IWV_EP_STREAM;
	ep_update(pe, ep);
	iwv_eng_cb_connected(&pe->base, ep, 0);
	/* A kick or shutdown_wr made while connecting is carried out now. */
	if (!iwv_eng_gone(ep) && (ep->eng_flags & IWV_EPF_TX_WANT))
		ep_tx(pe, ep);
}

static void ep_event(struct ep_engine *pe, struct iwv_ep *ep, uint32_t events)
{
	switch (ep->kind) {
	case IWV_EP_LISTEN:
		iwv_eng_accept_all(&pe->base, ep); /* paused or dead: ep_update below */
		break;
	case IWV_EP_CONNECTING:
		ep_connect_done(pe, ep, events);
		break;
	case IWV_EP_STREAM:
		if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
			ep_rx(pe, ep);
		if (!iwv_eng_gone(ep) && (ep->eng_flags & EPF_WANT_OUT) &&
		    (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			ep_tx(pe, ep);
		break;
	}
	if (!iwv_eng_gone(ep))
		ep_update(pe, ep);
}

static void ep_progress(struct iwv_engine *e)
{
	struct ep_engine *pe = to_ep_engine(e);
	struct iwv_ep *ep;
	int n, i;

	/*
	 * Busy-polling programs call progress in a loop, and the usual case is
	 * one stream with traffic: epoll_wait() then recv() would be two
	 * system calls on the path of every message.  So the hot stream is read
	 * directly, and epoll asked only every few calls (and at once when the
	 * engine fd is being waited on: that caller polls it first anyway).
	 */
	pe->calls++;
	/* A sender that filled its socket resumes as soon as there is room,
	 * as a program spinning on send() would, not only when epoll says the
	 * buffer is half empty. */
	if (pe->hot_tx && (pe->hot_tx->eng_flags & EPF_WANT_OUT) &&
	    !(pe->hot_tx->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_TX_ERR))) {
		struct iwv_ep *t = pe->hot_tx;

		t->eng_flags &= ~EPF_WANT_OUT;
		ep_tx(pe, t);
		if (!iwv_eng_gone(t))
			ep_update(pe, t);
	}
	if (pe->hot &&
	    !(pe->hot->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_RX_DONE | IWV_EPF_RX_PAUSED))) {
		bool got = ep_rx(pe, pe->hot);

		if (pe->calls % (got ? EP_HOT_BUSY_EVERY : EP_HOT_IDLE_EVERY) != 0)
			return;
	}
	do
		n = epoll_wait(e->fd, pe->ev, EP_MAX_EVENTS, 0);
	while (n < 0 && errno == EINTR);
	for (i = 0; i < n; i++) {
		ep = pe->ev[i].data.ptr;
		/* Removed by a callback earlier in this batch: released() is
		 * still pending, so ep is valid memory. */
		if (iwv_eng_gone(ep))
			continue;
		ep_event(pe, ep, pe->ev[i].events);
	}
}

static int ep_add(struct iwv_engine *e, struct iwv_ep *ep)
{
	struct ep_engine *pe = to_ep_engine(e);

	ep_update(pe, ep);
	if (ep->eng_flags & EPF_IN_SET)
		return IW_OK;
	/* EBADF/EPERM (not a socket) is the caller's error; the rest is memory. */
	return (errno == ENOMEM || errno == ENOSPC) ? IW_ENOMEM : IW_EINVAL;
}

static void ep_kick_tx(struct iwv_engine *e, struct iwv_ep *ep)
{
	struct ep_engine *pe = to_ep_engine(e);

	if (ep->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_TX_ERR | IWV_EPF_SHUT_DONE))
		return;
	ep->eng_flags |= IWV_EPF_TX_WANT;
	/* While connecting, or while the socket is full, EPOLLOUT resumes. */
	if (ep->kind != IWV_EP_STREAM || (ep->eng_flags & EPF_WANT_OUT))
		return;
	ep_tx(pe, ep);
	if (!iwv_eng_gone(ep))
		ep_update(pe, ep);
}

/* Paused: out of the epoll set for EPOLLIN.  Resumed: back in, and read at
 * once (level-triggered epoll would say so too, one progress call later). */
static void ep_rx_changed(struct iwv_engine *e, struct iwv_ep *ep)
{
	struct ep_engine *pe = to_ep_engine(e);

	if (ep->kind == IWV_EP_LISTEN)
		ep_update(pe, ep); /* level-triggered: the next wait accepts */
	if (ep->kind != IWV_EP_STREAM)
		return;
	ep_update(pe, ep);
	if (!(ep->eng_flags & IWV_EPF_RX_PAUSED)) {
		ep_rx(pe, ep);
		if (!iwv_eng_gone(ep))
			ep_update(pe, ep);
	}
}

static void ep_shutdown_wr(struct iwv_engine *e, struct iwv_ep *ep)
{
	struct ep_engine *pe = to_ep_engine(e);

	if (ep->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_TX_ERR | IWV_EPF_SHUT_DONE))
		return;
	ep->eng_flags |= IWV_EPF_SHUT_PENDING | IWV_EPF_TX_WANT;
	if (ep->kind != IWV_EP_STREAM || (ep->eng_flags & EPF_WANT_OUT))
		return;
	/*
	 * iwv_engine.h runs callbacks only inside progress and kick_tx, so no
	 * tx_done() here: FIN now if nothing is pending, else let EPOLLOUT
	 * send the rest and then the FIN.
	 */
	if (iwv_eng_cb_tx_iov(e, ep, pe->iov, IWV_ENG_MAX_IOV) == 0) {
		ep->eng_flags &= ~IWV_EPF_TX_WANT;
		ep_fin(ep);
	} else {
		ep->eng_flags |= EPF_WANT_OUT;
	}
	ep_update(pe, ep);
}

static void ep_remove(struct iwv_engine *e, struct iwv_ep *ep, bool abort)
{
	struct ep_engine *pe = to_ep_engine(e);

	ep_update(pe, ep); /* REMOVED wants nothing: out of the set */
	if (pe->hot == ep)
		pe->hot = NULL;
	if (pe->hot_tx == ep)
		pe->hot_tx = NULL;
	if (abort)
		iwv_eng_set_abort(ep->fd);
	close(ep->fd);
	ep->fd = -1;
	iwv_eng_release(e, ep);
}

static void ep_destroy(struct iwv_engine *e)
{
	close(e->fd);
	iw_free(e);
}

static const struct iwv_engine_ops ep_ops = {
	.name = "epoll",
	.rx_lent = false,
	.destroy = ep_destroy,
	.add = ep_add,
	.kick_tx = ep_kick_tx,
	.shutdown_wr = ep_shutdown_wr,
	.rx_changed = ep_rx_changed,
	.remove = ep_remove,
	.progress = ep_progress,
};

int iwv_engine_epoll_create(struct iwv_engine **e)
{
	struct ep_engine *pe = iw_calloc(1, sizeof(*pe));

	if (!pe)
		return IW_ENOMEM;
	pe->base.fd = epoll_create1(EPOLL_CLOEXEC);
	if (pe->base.fd < 0) {
		iw_free(pe);
		return IW_ENOMEM;
	}
	pe->base.ops = &ep_ops;
	pe->base.rel_tail = &pe->base.rel_head;
	*e = &pe->base;
	return IW_OK;
}
