/* SPDX-License-Identifier: MIT */
/*
 * iw_list.h - a minimal intrusive doubly linked list with a sentinel: embed
 * a `struct iw_list` in each object, get back to the object with
 * iw_container_of().  O(1) insertion and removal, no allocation.
 */
#ifndef IW_LIST_H
#define IW_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct iw_list {
	struct iw_list *prev, *next;
};

#define iw_container_of(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

/* An empty list (the sentinel), or a node that is on no list. */
static inline void iw_list_init(struct iw_list *l)
{
	l->prev = l->next = l;
}

static inline bool iw_list_empty(const struct iw_list *l)
{
	return l->next == l;
}

static inline void iw_list_add_tail(struct iw_list *l, struct iw_list *n)
{
	n->prev = l->prev;
	n->next = l;
	l->prev->next = n;
	l->prev = n;
}

/* Unlink `n` (it becomes an empty list of its own: removing it again is harmless). */
static inline void iw_list_del(struct iw_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#endif /* IW_LIST_H */
