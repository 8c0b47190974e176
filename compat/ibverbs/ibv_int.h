/* SPDX-License-Identifier: MIT */
/*
 * ibv_int.h - private to the drop-in libibverbs.so.1 (compat/ibverbs/): the
 * functions its three files share.  The wrappers themselves are in iwc.h,
 * which librdmacm.so.1 reads too.
 */
#ifndef IWARP_COMPAT_IBV_INT_H
#define IWARP_COMPAT_IBV_INT_H

#include <stdbool.h>

#include "iwc.h"

/* Fill the ops of a new context: data path (ibv_data.c), device (ibv_device.c). */
void iwc_set_ops(struct iwc_context *c);
void iwc_set_device_ops(struct iwc_context *c);
void iwc_set_data_ops(struct iwc_context *c);

/* QPs are created with RFC 7306 (atomics, immediate data) unless IWARP_RFC7306=0. */
bool iwc_rfc7306(void);

/* Track the QPs of a context (iwc_qp_by_num). */
void iwc_qp_track(struct iwc_qp *qp, bool add);

#endif /* IWARP_COMPAT_IBV_INT_H */
