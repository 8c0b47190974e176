/* SPDX-License-Identifier: MIT */
/*
 * iwv_engine_uring.c - the io_uring backend of the I/O engine (liburing).
 *
 * Theory of operation.  Each endpoint has a few kinds of operation, at most
 * one of each in flight, named in the low bits of the user_data that also
 * carries the ep pointer:
 *
 *   RECV    STREAM: one recv into the owner's rx_buf, re-armed after every
 *           completion until rx(0)/rx(-errno);
 *   SEND    STREAM: one sendmsg of up to IWV_ENG_MAX_IOV iovecs; a kick while
 *           it flies only sets TX_WANT, and the completion asks tx_iov()
 *           again, so many kicks make few sends;
 *   RXPOLL  LISTEN: POLLIN, then an accept4() loop, then re-armed unless
 *           paused (a poll that completes while paused accepts nothing).
 *           STREAM: the wait that follows a recv answered -EAGAIN;
 *   TXPOLL  CONNECTING: POLLOUT, then SO_ERROR decides.  STREAM: the wait
 *           that follows a sendmsg answered -EAGAIN.
 *
 * (Kernels since 5.7 wait inside a recv/sendmsg on a non-blocking socket; the
 * poll fallback is for those that answer -EAGAIN instead.)
 *
 * ur_arm() is the one place that decides what should be in flight given an
 * ep's flags, and submits what is missing; it runs after every event.  If the
 * submission queue is full even after io_uring_submit(), the ep goes on a
 * "stalled" list and progress arms it again.  SQEs are submitted once per
 * outermost engine call (the flush hook), so a progress call that re-arms a
 * hundred receives makes one io_uring_enter().
 *
 * Removal: the ep is marked REMOVED, each operation in flight gets an
 * ASYNC_CANCEL (whose own completion carries user_data 0 and is ignored), and
 * when eng_inflight falls to 0 the fd is closed (SO_LINGER 0 was set at once
 * for an abort, so the close resets) and the ep handed to iwv_eng_release().
 * Completions of a removed ep only count down; no callback of it runs.
 *
 * The ring fd is the engine fd: it polls readable when a CQE is waiting.
 */
#include <errno.h>
#include <string.h>

#include <iwarp/iw_err.h>

#include "iw_alloc.h"
#include "iwv_engine_int.h"

#ifdef IWARP_HAVE_URING

#include <liburing.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#define UR_SQ_ENTRIES 256
/* Room for every operation of many connections; completions beyond it wait
 * in the kernel's overflow list (IORING_FEAT_NODROP), they are not lost. */
#define UR_CQ_ENTRIES 4096

enum ur_op {
	UR_RECV = 1,
	UR_SEND = 2,
	UR_RXPOLL = 3,
	UR_TXPOLL = 4,
};
#define UR_NOPS	   4
#define UR_OP_MASK 7u

_Static_assert(_Alignof(struct iwv_ep) > UR_OP_MASK, "user_data needs 3 free pointer bits");

enum {
	URF_STALLED = IWV_EPF_BACKEND << 0,   /* on ue->stalled */
	URF_RX_EAGAIN = IWV_EPF_BACKEND << 1, /* next rx operation: RXPOLL */
	URF_TX_EAGAIN = IWV_EPF_BACKEND << 2, /* next tx operation: TXPOLL */
};
/* Bits 3..6 above IWV_EPF_BACKEND: operation in flight; 7..10: its cancel sent. */
#define URF_FLIGHT(op) (IWV_EPF_BACKEND << (2 + (op)))
#define URF_CANCEL(op) (IWV_EPF_BACKEND << (6 + (op)))

/* Per ep: the sendmsg arguments must stay put while the send is in flight. */
struct ur_ep {
	struct msghdr msg;
	struct iovec iov[IWV_ENG_MAX_IOV];
};

struct ur_engine {
	struct iwv_engine base;
	struct io_uring ring;
	unsigned int cq_entries;
	struct iwv_ep *stalled;	 /* linked through eng_next */
	struct iwv_ep *rearming; /* the part of it ur_rearm_stalled() is walking */
};

static struct ur_engine *to_ur_engine(struct iwv_engine *e)
{
	return (struct ur_engine *)e;
}

static bool ur_flying(const struct iwv_ep *ep, enum ur_op op)
{
	return ep->eng_flags & URF_FLIGHT(op);
}

static struct io_uring_sqe *ur_sqe(struct ur_engine *ue)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ue->ring);

	if (!sqe) {
		io_uring_submit(&ue->ring);
		sqe = io_uring_get_sqe(&ue->ring);
	}
	return sqe;
}

static void ur_stall(struct ur_engine *ue, struct iwv_ep *ep)
{
	if (ep->eng_flags & URF_STALLED)
		return;
	ep->eng_flags |= URF_STALLED;
	ep->eng_next = ue->stalled;
	ue->stalled = ep;
}

static void ur_unstall(struct ur_engine *ue, struct iwv_ep *ep)
{
	struct iwv_ep **heads[2] = {&ue->stalled, &ue->rearming}, **pp;
	int i;

	if (!(ep->eng_flags & URF_STALLED))
		return;
	ep->eng_flags &= ~URF_STALLED;
	for (i = 0; i < 2; i++) {
		for (pp = heads[i]; *pp; pp = &(*pp)->eng_next) {
			if (*pp == ep) {
				*pp = ep->eng_next;
				ep->eng_next = NULL;
				return;
			}
		}
	}
}

static void ur_issue(struct iwv_ep *ep, struct io_uring_sqe *sqe, enum ur_op op)
{
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)ep | op);
	ep->eng_inflight++;
	ep->eng_flags |= URF_FLIGHT(op);
}

/* Arm a poll for op (RXPOLL or TXPOLL).  false: no SQE, ep stalled. */
static bool ur_poll(struct ur_engine *ue, struct iwv_ep *ep, enum ur_op op, unsigned int mask)
{
	struct io_uring_sqe *sqe;

	if (ur_flying(ep, op))
		return true;
	sqe = ur_sqe(ue);
	if (!sqe) {
		ur_stall(ue, ep);
		return false;
	}
	io_uring_prep_poll_add(sqe, ep->fd, mask);
	ur_issue(ep, sqe, op);
	return true;
}

static void ur_fin(struct iwv_ep *ep)
{
	ep->eng_flags = (ep->eng_flags & ~IWV_EPF_SHUT_PENDING) | IWV_EPF_SHUT_DONE;
	/* Nothing is in flight for tx, so the FIN follows every octet sent. */
	(void)shutdown(ep->fd, SHUT_WR);
}

static void ur_arm_rx(struct ur_engine *ue, struct iwv_ep *ep)
{
	struct io_uring_sqe *sqe;
	void *buf = NULL;
	size_t len = 0;

	if ((ep->eng_flags & (IWV_EPF_RX_DONE | IWV_EPF_RX_PAUSED)) || ur_flying(ep, UR_RECV) ||
	    ur_flying(ep, UR_RXPOLL))
		return;
	if (ep->eng_flags & URF_RX_EAGAIN) {
		ur_poll(ue, ep, UR_RXPOLL, POLLIN);
		return;
	}
	iwv_eng_cb_rx_buf(&ue->base, ep, &buf, &len);
	if (!buf || !len)
		return; /* contract breach by the owner: receive nothing */
	sqe = ur_sqe(ue);
	if (!sqe) {
		ur_stall(ue, ep);
		return;
	}
	io_uring_prep_recv(sqe, ep->fd, buf, len, 0);
	ur_issue(ep, sqe, UR_RECV);
}

static void ur_arm_tx(struct ur_engine *ue, struct iwv_ep *ep)
{
	struct ur_ep *ue_ep = ep->eng_priv;
	struct io_uring_sqe *sqe;
	size_t offered = 0;
	int cnt, i;

	if (!(ep->eng_flags & IWV_EPF_TX_WANT) ||
	    (ep->eng_flags & (IWV_EPF_TX_ERR | IWV_EPF_SHUT_DONE)) || ur_flying(ep, UR_SEND) ||
	    ur_flying(ep, UR_TXPOLL))
		return;
	if (ep->eng_flags & URF_TX_EAGAIN) {
		ur_poll(ue, ep, UR_TXPOLL, POLLOUT);
		return;
	}
	cnt = iwv_eng_cb_tx_iov(&ue->base, ep, ue_ep->iov, IWV_ENG_MAX_IOV);
	for (i = 0; i < cnt; i++)
		offered += ue_ep->iov[i].iov_len;
	if (!offered) {
		ep->eng_flags &= ~IWV_EPF_TX_WANT;
		if (ep->eng_flags & IWV_EPF_SHUT_PENDING)
			ur_fin(ep);
		return;
	}
	sqe = ur_sqe(ue);
	if (!sqe) {
		/* tx_iov() is asked again later and offers the same octets. */
		ur_stall(ue, ep);
		return;
	}
	ue_ep->msg.msg_iov = ue_ep->iov;
	ue_ep->msg.msg_iovlen = (size_t)cnt;
	/* MSG_NOSIGNAL: a reset peer is an error code, not SIGPIPE. */
	io_uring_prep_sendmsg(sqe, ep->fd, &ue_ep->msg, MSG_NOSIGNAL);
	ur_issue(ep, sqe, UR_SEND);
	ep->eng_flags &= ~IWV_EPF_TX_WANT;
}

static void ur_arm_cancel(struct ur_engine *ue, struct iwv_ep *ep)
{
	struct io_uring_sqe *sqe;
	int op;

	for (op = 1; op <= UR_NOPS; op++) {
		if (!ur_flying(ep, op) || (ep->eng_flags & URF_CANCEL(op)))
			continue;
		sqe = ur_sqe(ue);
		if (!sqe) {
			ur_stall(ue, ep);
			return;
		}
		io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)ep | (unsigned int)op, 0);
		io_uring_sqe_set_data64(sqe, 0);
		ep->eng_flags |= URF_CANCEL(op);
	}
}

/* Put in flight whatever ep's state asks for and is missing. */
static void ur_arm(struct ur_engine *ue, struct iwv_ep *ep)
{
	if (ep->eng_flags & IWV_EPF_REMOVED) {
		ur_arm_cancel(ue, ep);
		return;
	}
	if (ep->eng_flags & IWV_EPF_DEAD)
		return;
	switch (ep->kind) {
	case IWV_EP_LISTEN:
		if (!(ep->eng_flags & IWV_EPF_RX_PAUSED))
			ur_poll(ue, ep, UR_RXPOLL, POLLIN);
		break;
	case IWV_EP_CONNECTING:
		ur_poll(ue, ep, UR_TXPOLL, POLLOUT);
		break;
	case IWV_EP_STREAM:
		ur_arm_rx(ue, ep);
		if (!iwv_eng_gone(ep))
			ur_arm_tx(ue, ep);
		break;
	}
}

/* A removed ep with nothing in flight: close and release it. */
static void ur_maybe_finish(struct ur_engine *ue, struct iwv_ep *ep)
{
	if (ep->eng_inflight)
		return;
	ur_unstall(ue, ep);
	close(ep->fd);
	ep->fd = -1;
	iw_free(ep->eng_priv);
	ep->eng_priv = NULL;
	iwv_eng_release(&ue->base, ep);
}

static void ur_connect_done(struct ur_engine *ue, struct iwv_ep *ep, int res)
{
	int err = iwv_eng_connect_outcome(ep->fd, res > 0 && (res & POLLOUT),
					  res > 0 && (res & (POLLHUP | POLLERR)));

	if (err > 0)
		return; /* ur_arm polls again */
	if (err) {
		ep->eng_flags |= IWV_EPF_DEAD;
		iwv_eng_cb_connected(&ue->base, ep, err);
		return;
	}
	ep->kind = IWV_EP_STREAM;
	iwv_eng_cb_connected(&ue->base, ep, 0);
	/* ur_arm starts receiving and carries out a kick made while connecting. */
}

/*
 * One completion.  We cancel only operations of removed eps, so -ECANCELED on
 * a live ep came from elsewhere (kernels that cancel the requests of a thread
 * when it exits): the operation is simply made again, like after -EINTR.
 */
static void ur_complete(struct ur_engine *ue, struct iwv_ep *ep, enum ur_op op, int res)
{
	struct iwv_engine *e = &ue->base;

	ep->eng_inflight--;
	ep->eng_flags &= ~(URF_FLIGHT(op) | URF_CANCEL(op));
	if (iwv_eng_gone(ep)) {
		ur_maybe_finish(ue, ep);
		return;
	}
	switch (op) {
	case UR_RECV:
		if (res > 0) {
			iwv_eng_cb_rx(e, ep, res);
		} else if (res == -EAGAIN) {
			ep->eng_flags |= URF_RX_EAGAIN;
		} else if (res != -EINTR && res != -ECANCELED) {
			ep->eng_flags |= IWV_EPF_RX_DONE;
			iwv_eng_cb_rx(e, ep, res);
		}
		break;
	case UR_SEND:
		if (res > 0) {
			ep->eng_flags |= IWV_EPF_TX_WANT;
			iwv_eng_cb_tx_done(e, ep, res);
		} else if (res == -EAGAIN || res == 0) {
			/* 0 (not seen on TCP) waits for POLLOUT rather than spin. */
			ep->eng_flags |= IWV_EPF_TX_WANT | URF_TX_EAGAIN;
		} else if (res == -EINTR || res == -ECANCELED) {
			ep->eng_flags |= IWV_EPF_TX_WANT;
		} else {
			ep->eng_flags = (ep->eng_flags & ~IWV_EPF_TX_WANT) | IWV_EPF_TX_ERR;
			iwv_eng_cb_tx_done(e, ep, res);
		}
		break;
	case UR_RXPOLL:
		if (ep->kind != IWV_EP_LISTEN)
			ep->eng_flags &= ~URF_RX_EAGAIN; /* the recv comes next */
		else if (res != -ECANCELED && !(ep->eng_flags & IWV_EPF_RX_PAUSED))
			iwv_eng_accept_all(e, ep);
		break;
	case UR_TXPOLL:
		if (ep->kind == IWV_EP_CONNECTING) {
			ur_connect_done(ue, ep, res);
		} else {
			ep->eng_flags &= ~URF_TX_EAGAIN;
			ep->eng_flags |= IWV_EPF_TX_WANT;
		}
		break;
	}
	if (!iwv_eng_gone(ep))
		ur_arm(ue, ep);
}

/* Try again what found the submission queue full. */
static void ur_rearm_stalled(struct ur_engine *ue)
{
	struct iwv_ep *ep;

	/* Walked from ue so that ur_unstall() finds an ep in either part;
	 * an ep that stalls again goes back on ue->stalled, not in a loop. */
	ue->rearming = ue->stalled;
	ue->stalled = NULL;
	while ((ep = ue->rearming)) {
		ue->rearming = ep->eng_next;
		ep->eng_next = NULL;
		ep->eng_flags &= ~URF_STALLED;
		ur_arm(ue, ep);
	}
}

static void ur_progress(struct iwv_engine *e)
{
	struct ur_engine *ue = to_ur_engine(e);
	struct io_uring_cqe *cqe;
	struct iwv_ep *ep;
	unsigned int budget;
	uint64_t ud;
	int res;

	ur_rearm_stalled(ue);
	/* Completion work the kernel left for us (COOP_TASKRUN): run it now. */
	if (IO_URING_READ_ONCE(*ue->ring.sq.kflags) & IORING_SQ_TASKRUN)
		io_uring_get_events(&ue->ring);
	/* Bounded, so that a flood of completions cannot keep the caller
	 * here; what is left keeps the ring fd readable. */
	for (budget = ue->cq_entries; budget; budget--) {
		if (io_uring_peek_cqe(&ue->ring, &cqe))
			break;
		ud = cqe->user_data;
		res = cqe->res;
		io_uring_cqe_seen(&ue->ring, cqe);
		if (!ud)
			continue; /* a cancel's own completion */
		ep = (struct iwv_ep *)(uintptr_t)(ud & ~(uint64_t)UR_OP_MASK);
		ur_complete(ue, ep, (enum ur_op)(ud & UR_OP_MASK), res);
	}
}

static void ur_flush(struct iwv_engine *e)
{
	struct ur_engine *ue = to_ur_engine(e);

	/* A failed submit (EAGAIN/EBUSY under memory pressure) leaves the SQEs
	 * queued; the next flush tries again. */
	if (io_uring_sq_ready(&ue->ring))
		io_uring_submit(&ue->ring);
	/* Stalled eps may wait for no completion at all: arm them now that
	 * the queue has room, rather than only in a progress call nothing
	 * might trigger. */
	if (ue->stalled && io_uring_sq_space_left(&ue->ring)) {
		ur_rearm_stalled(ue);
		if (io_uring_sq_ready(&ue->ring))
			io_uring_submit(&ue->ring);
	}
}

static int ur_add(struct iwv_engine *e, struct iwv_ep *ep)
{
	struct ur_ep *ue_ep = iw_calloc(1, sizeof(*ue_ep));

	if (!ue_ep)
		return IW_ENOMEM;
	ep->eng_priv = ue_ep;
	ur_arm(to_ur_engine(e), ep);
	return IW_OK;
}

static void ur_kick_tx(struct iwv_engine *e, struct iwv_ep *ep)
{
	if (ep->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_TX_ERR | IWV_EPF_SHUT_DONE))
		return;
	ep->eng_flags |= IWV_EPF_TX_WANT;
	if (ep->kind == IWV_EP_STREAM)
		ur_arm_tx(to_ur_engine(e), ep);
}

/* Paused: no new recv is armed (one in flight still completes and is
 * delivered: the owner keeps what it cannot take yet).  Resumed: armed. */
static void ur_rx_changed(struct iwv_engine *e, struct iwv_ep *ep)
{
	if (ep->kind != IWV_EP_CONNECTING && !(ep->eng_flags & IWV_EPF_RX_PAUSED))
		ur_arm((struct ur_engine *)e, ep);
}

static void ur_shutdown_wr(struct iwv_engine *e, struct iwv_ep *ep)
{
	if (ep->eng_flags & (IWV_EPF_REMOVED | IWV_EPF_TX_ERR | IWV_EPF_SHUT_DONE))
		return;
	ep->eng_flags |= IWV_EPF_SHUT_PENDING | IWV_EPF_TX_WANT;
	if (ep->kind == IWV_EP_STREAM)
		ur_arm_tx(to_ur_engine(e), ep);
}

static void ur_remove(struct iwv_engine *e, struct iwv_ep *ep, bool abort)
{
	struct ur_engine *ue = to_ur_engine(e);

	/* Set now, while the socket is surely open: the close may come later. */
	if (abort)
		iwv_eng_set_abort(ep->fd);
	ur_arm_cancel(ue, ep);
	ur_maybe_finish(ue, ep);
}

static void ur_destroy(struct iwv_engine *e)
{
	struct ur_engine *ue = to_ur_engine(e);

	io_uring_queue_exit(&ue->ring);
	iw_free(ue);
}

static const struct iwv_engine_ops ur_ops = {
	.name = "uring",
	.rx_lent = true,
	.destroy = ur_destroy,
	.add = ur_add,
	.kick_tx = ur_kick_tx,
	.shutdown_wr = ur_shutdown_wr,
	.rx_changed = ur_rx_changed,
	.remove = ur_remove,
	.progress = ur_progress,
	.flush = ur_flush,
};

/* Whether the kernel knows every opcode this backend uses. */
static bool ur_probe(struct io_uring *ring)
{
	static const int ops[] = {IORING_OP_RECV, IORING_OP_SENDMSG, IORING_OP_POLL_ADD,
				  IORING_OP_ASYNC_CANCEL};
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	bool ok = p != NULL;
	size_t i;

	for (i = 0; ok && i < sizeof(ops) / sizeof(ops[0]); i++)
		ok = io_uring_opcode_supported(p, ops[i]);
	if (p)
		io_uring_free_probe(p);
	return ok;
}

int iwv_engine_uring_create(struct iwv_engine **e)
{
	struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE, .cq_entries = UR_CQ_ENTRIES};
	struct ur_engine *ue = iw_calloc(1, sizeof(*ue));
	int rc;

	if (!ue)
		return IW_ENOMEM;
	/* Anything the kernel refuses (disabled by sysctl, seccomp, too old,
	 * RLIMIT_MEMLOCK) means "not here": the default falls back to epoll. */
	/* Cooperative task running: the kernel does not interrupt us (an IPI,
	 * costly in a VM) to run completion work; it raises IORING_SQ_TASKRUN
	 * and ur_progress() enters the kernel for it.  Older kernels refuse the
	 * flags: then as before. */
	p.flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	rc = io_uring_queue_init_params(UR_SQ_ENTRIES, &ue->ring, &p);
	if (rc == -EINVAL) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = UR_CQ_ENTRIES;
		rc = io_uring_queue_init_params(UR_SQ_ENTRIES, &ue->ring, &p);
	}
	if (rc < 0) {
		iw_free(ue);
		return IW_ENOTSUP;
	}
	/* Without NODROP an overflowing CQ loses completions and the eps that
	 * wait for them would never be released. */
	if (!(p.features & IORING_FEAT_NODROP) || !ur_probe(&ue->ring)) {
		io_uring_queue_exit(&ue->ring);
		iw_free(ue);
		return IW_ENOTSUP;
	}
	ue->cq_entries = p.cq_entries;
	ue->base.ops = &ur_ops;
	ue->base.fd = ue->ring.ring_fd;
	ue->base.rel_tail = &ue->base.rel_head;
	*e = &ue->base;
	return IW_OK;
}

#else /* !IWARP_HAVE_URING */

int iwv_engine_uring_create(struct iwv_engine **e)
{
	(void)e;
	return IW_ENOTSUP;
}

#endif
