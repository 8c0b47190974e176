/* SPDX-License-Identifier: MIT */
/*
 * ih.h - helpers for the integration tests (test/integration/): the test
 * process and a peer process it forks, each with its own context.
 *
 * Theory of operation.  Check reports the failures of the process it runs the
 * test in; a forked peer must not use ck_assert.  So code that may run on
 * either side checks with REQ(): in the peer a failure prints "<name> <pid>:
 * file:line: message" on stderr and _exit(3)s (the test sees it by the exit
 * status or by the connections the peer drops); in the test process it kills
 * the peer first, so nothing outlives the test, and fails the test case
 * (saying so when the peer had already exited).  ih_fork_peer() sets which
 * side a process is on; without a peer REQ() is a plain Check failure.
 *
 * Every wait is bounded: by ih_deadline, which a test sets before it waits,
 * or by an alarm().  A peer also dies with its parent.
 */
#ifndef IW_IH_H
#define IW_IH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

/* ---------------------------------------------------------------------- */
/* Failing from either process                                             */
/* ---------------------------------------------------------------------- */

/* Fail with a printf-style message: see the theory of operation; never returns. */
void ih_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#define REQ(cond, ...)                                                                             \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ih_fail_at(__FILE__, __LINE__, __VA_ARGS__);                               \
	} while (0)

/*
 * The th_now_ms() time at which ih_check_deadline() and ih_reap_peer() fail.
 * Each process sets it before it waits (ih_deadline = th_now_ms() + ms).
 */
extern uint64_t ih_deadline;

/* REQ that ih_deadline has not passed; what says what the caller waited for. */
void ih_check_deadline(const char *what);

/* ---------------------------------------------------------------------- */
/* Processes                                                               */
/* ---------------------------------------------------------------------- */

/*
 * fork() a peer named name (in failure messages).  In the peer: returns 0,
 * REQ() fails by _exit(3), the peer gets SIGKILL when its parent dies and
 * SIGALRM after alarm_secs.  In the test process: returns the peer's pid,
 * which a failing REQ() kills until ih_reap_peer().  One peer at a time.
 */
pid_t ih_fork_peer(const char *name, unsigned int alarm_secs);

/* Wait for the peer to end, up to ih_deadline (then kill it and fail); its wait status. */
int ih_reap_peer(pid_t pid);

/* ---------------------------------------------------------------------- */
/* Descriptors, memory and the verbs objects of one process                */
/* ---------------------------------------------------------------------- */

/* Set or clear O_NONBLOCK on fd. */
void ih_set_nonblock(int fd, bool on);

/* len octets of anonymous private memory (munmap() them). */
void *ih_map(size_t len);

struct ih_side {
	struct iwv_context *ctx;
	struct iwv_pd *pd;
	struct iwv_comp_channel *cch; /* of cq; O_NONBLOCK */
	struct iwv_cq *cq;
	struct iwcm_event_channel *ech; /* O_NONBLOCK */
	/* For the test's own event loop to dispatch to; the ih_side_* calls leave them. */
	void (*on_wc)(void *arg, const struct iwv_wc *wc);
	void (*on_ev)(void *arg, struct iwcm_event *ev);
	void *arg;
};

/* On an open context: a PD, a completion channel, one CQ of cqe entries, an event channel. */
void ih_side_init(struct ih_side *s, struct iwv_context *ctx, int cqe);

/* Acknowledge any CQ event left, then destroy everything, the context last (each must succeed). */
void ih_side_close(struct ih_side *s);

#endif /* IW_IH_H */
