/* SPDX-License-Identifier: MIT */
/*
 * iw_timer.h - one-shot timers on a caller's clock, for the layers that keep
 * time (the verbs context, the RPC-over-RDMA transport).
 *
 * A set of timers (struct iw_timers) is a pairing heap of intrusive nodes:
 * arming and cancelling cost O(log n) amortised, the earliest due time is
 * read in O(1), nothing is allocated, so a context with tens of thousands of
 * connections pays no scan per timer.  The set knows no clock: due times are
 * absolute values in whatever unit the owner uses (ns, ms), and the owner
 * passes "now" to iw_timers_run().  Timers that are due at the same time
 * fire in the order they were armed.  No locking: the owner serialises.
 *
 *   struct iw_timers ts;          iw_timers_init(&ts);
 *   struct iw_timer t;            iw_timer_init(&t, on_timeout);
 *   iw_timer_arm(&ts, &t, now + 5000);      (re-arming moves it)
 *   ... wait until iw_timers_next(&ts) ...
 *   iw_timers_run(&ts, now);                 (on_timeout(&t, now) runs once)
 *
 * A callback may arm or cancel any timer of the set, its own included; a
 * timer armed from a callback with a due time not after `now` fires in the
 * same run.  Embed the node in the owning object and get back to the object
 * with a container_of-style cast.
 */
#ifndef IW_TIMER_H
#define IW_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct iw_timer;
typedef void (*iw_timer_fn)(struct iw_timer *t, uint64_t now);

struct iw_timer {
	/* heap links: first child; next sibling; previous sibling, or the
	 * parent for a first child (NULL at the root) */
	struct iw_timer *child, *next, *prev;
	uint64_t due;
	uint64_t seq; /* arming order, breaks ties between equal due times */
	bool armed;
	iw_timer_fn fn;
};

struct iw_timers {
	struct iw_timer *root;
	uint64_t seq;
	unsigned count; /* armed timers */
};

#define IW_TIMER_NONE UINT64_MAX /* iw_timers_next() of an empty set */

void iw_timers_init(struct iw_timers *ts);
/* A disarmed timer that runs `fn` when it fires. */
void iw_timer_init(struct iw_timer *t, iw_timer_fn fn);
/* Arm `t` to fire at `due` (moving it if it was armed already). */
void iw_timer_arm(struct iw_timers *ts, struct iw_timer *t, uint64_t due);
/* Disarm `t` (nothing if it was not armed). */
void iw_timer_cancel(struct iw_timers *ts, struct iw_timer *t);

static inline bool iw_timer_armed(const struct iw_timer *t)
{
	return t->armed;
}

/* The earliest due time of the set, IW_TIMER_NONE when nothing is armed. */
static inline uint64_t iw_timers_next(const struct iw_timers *ts)
{
	return ts->root ? ts->root->due : IW_TIMER_NONE;
}

/* Fire every timer due at `now` (due <= now), earliest first; each is
 * disarmed before its callback runs.  Returns how many fired. */
unsigned iw_timers_run(struct iw_timers *ts, uint64_t now);

#endif /* IW_TIMER_H */
