/* SPDX-License-Identifier: MIT */
/*
 * iw_timer.c - a pairing heap of one-shot timers (iw_timer.h).
 *
 * Theory of operation.  The heap is a tree in which every node is due no
 * later than its children (ties: armed earlier); the root is the next timer.
 * A node's children form a doubly linked sibling list: `child` points at the
 * first, `next`/`prev` link the siblings, and the first child's `prev` points
 * at its parent, so any node can be unlinked in O(1).  Arming melds a
 * one-node heap with the root (O(1)); removing a node unlinks it and melds
 * its children back, pairing them left to right and then folding the pairs
 * right to left (the two-pass rule that gives the O(log n) amortised bound).
 */
#include <stddef.h>

#include "iw_timer.h"

static bool before(const struct iw_timer *a, const struct iw_timer *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

/* Meld two detached heaps (no siblings, no parent); returns the root. */
static struct iw_timer *meld(struct iw_timer *a, struct iw_timer *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (before(b, a)) {
		struct iw_timer *t = a;

		a = b;
		b = t;
	}
	/* b becomes a's first child */
	b->prev = a;
	b->next = a->child;
	if (a->child)
		a->child->prev = b;
	a->child = b;
	return a;
}

/* Meld a sibling list (first .. ) into one heap: the two-pass rule. */
static struct iw_timer *merge_pairs(struct iw_timer *first)
{
	struct iw_timer *stack = NULL, *root = NULL;

	/* pass 1: meld pairs left to right; push each result (linked by next) */
	while (first) {
		struct iw_timer *a = first, *b = a->next;

		first = b ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b) {
			b->next = b->prev = NULL;
			a = meld(a, b);
		}
		a->next = stack;
		stack = a;
	}
	/* pass 2: fold the pairs right to left (the stack pops the rightmost first) */
	while (stack) {
		struct iw_timer *a = stack;

		stack = a->next;
		a->next = NULL;
		root = meld(root, a);
	}
	return root;
}

void iw_timers_init(struct iw_timers *ts)
{
	ts->root = NULL;
	ts->seq = 0;
	ts->count = 0;
}

void iw_timer_init(struct iw_timer *t, iw_timer_fn fn)
{
	t->child = t->next = t->prev = NULL;
	t->due = 0;
	t->seq = 0;
	t->armed = false;
	t->fn = fn;
}

void iw_timer_cancel(struct iw_timers *ts, struct iw_timer *t)
{
	struct iw_timer *kids;

	if (!t->armed)
		return;
	kids = t->child;
	if (t == ts->root) {
		ts->root = NULL;
	} else {
		/* unlink from the parent (first child) or the previous sibling */
		if (t->prev->child == t)
			t->prev->child = t->next;
		else
			t->prev->next = t->next;
		if (t->next)
			t->next->prev = t->prev;
	}
	t->child = t->next = t->prev = NULL;
	t->armed = false;
	ts->count--;
	ts->root = meld(ts->root, merge_pairs(kids));
}

void iw_timer_arm(struct iw_timers *ts, struct iw_timer *t, uint64_t due)
{
	iw_timer_cancel(ts, t);
	t->due = due;
	t->seq = ts->seq++;
	t->armed = true;
	ts->count++;
	ts->root = meld(ts->root, t);
}

unsigned iw_timers_run(struct iw_timers *ts, uint64_t now)
{
	unsigned n = 0;

	while (ts->root && ts->root->due <= now) {
		struct iw_timer *t = ts->root;

		iw_timer_cancel(ts, t);
		n++;
		t->fn(t, now);
	}
	return n;
}
