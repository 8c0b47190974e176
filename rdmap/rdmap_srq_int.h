/* SPDX-License-Identifier: MIT */
/*
 * rdmap_srq_int.h - what the queue-pair engine (rdmap_qp.c) uses of a shared
 * receive queue (rdmap_srq.c) beyond the public rdmap_srq_* calls.  Private
 * to rdmap/.
 */
#ifndef IWARP_RDMAP_SRQ_INT_H
#define IWARP_RDMAP_SRQ_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <iwarp/rdmap_qp.h>

/* Receives the SRQ can hold (its depth). */
uint32_t rdmap_srq_depth(const struct rdmap_srq *srq);
/* A QP starts (d = 1) or stops (d = -1) using the SRQ. */
void rdmap_srq_use(struct rdmap_srq *srq, int d);
/* Take the oldest posted receive into *wr (false: none posted); may fire the limit. */
bool rdmap_srq_take(struct rdmap_srq *srq, struct rdmap_recv_wr *wr);

#endif /* IWARP_RDMAP_SRQ_INT_H */
