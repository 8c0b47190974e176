/* SPDX-License-Identifier: MIT */
/*
 * iwv_qp_link.h - the seam between a verbs QP (iwv_qp.c) and the connection
 * that carries it (iwcm.c).  Private to verbs/: this, iwv_ctx.h and the
 * public headers are all the connection manager sees of the verbs objects.
 *
 * A QP is created IDLE (its rdmap_qp started with start_idle), so work can
 * be posted before MPA has finished.  The connection manager attaches itself
 * as the QP's link (iwv_qp_link_attach), feeds the octets it reads to the
 * QP's rdmap_qp and offers what the rdmap_qp has to send to the I/O engine
 * (iwv_qp_rdmap), starts the QP once MPA has negotiated (iwv_qp_start),
 * moves completions into the CQs after each batch of octets
 * (iwv_qp_drain), and flushes the QP when the connection ends
 * (iwv_qp_flush_all).  In the other direction the QP calls its link through
 * two hooks: `kick` after work was posted, `detach` when the program destroys
 * the QP or moves it to ERR.  Everything runs under the context lock.
 */
#ifndef IWARP_IWV_QP_LINK_H
#define IWARP_IWV_QP_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include <iwarp/iwv.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap_qp.h>

struct iwv_qp_link_ops {
	/* Work was posted to the QP: offer what it has to send. */
	void (*kick)(void *link);
	/* The program destroys the QP (destroying: the QP is gone once this
	 * returns, forget it) or moved it to ERR: end the connection now. */
	void (*detach)(void *link, bool destroying);
	/* A receive was posted while a message waits for one (rnr_hold_ms):
	 * offer the held octets to the QP again. */
	void (*rx_resume)(void *link);
};

/* Make `link` the QP's connection.  0, or EINVAL when the QP has a link
 * already or has left INIT (it must be new and IDLE). */
int iwv_qp_link_attach(struct iwv_qp *qp, const struct iwv_qp_link_ops *ops, void *link);
/* The link lets go of the QP (its cm id is destroyed); the QP stays. */
void iwv_qp_link_detach(struct iwv_qp *qp);

/* The QP's sans-I/O queue-pair engine, for octets in and out. */
struct rdmap_qp *iwv_qp_rdmap(struct iwv_qp *qp);
/* How long a message may wait for a receive (iwv_qp_init_attr.rnr_hold_ms). */
unsigned int iwv_qp_rnr_hold_ms(struct iwv_qp *qp);

/* MPA negotiated `p` (IRD/ORD clamped to the QP's capacity): start full
 * operation with FPDUs of at most `mulpdu` octets; the QP goes to RTS.
 * IW_OK or an iw_err. */
int iwv_qp_start(struct iwv_qp *qp, uint32_t mulpdu, bool initiator, const struct mpa_params *p);

/* The connection broke (a reset or a socket error, not the peer's FIN): the
 * failure that follows is reported as IWV_EVENT_QP_FATAL. */
void iwv_qp_llp_broken(struct iwv_qp *qp);
/* Move what the rdmap_qp completed into the CQs (and their channels). */
void iwv_qp_drain(struct iwv_qp *qp);
/* The connection is over: flush everything not yet completed; the QP is in
 * ERR afterwards. */
void iwv_qp_flush_all(struct iwv_qp *qp);

#endif /* IWARP_IWV_QP_LINK_H */
