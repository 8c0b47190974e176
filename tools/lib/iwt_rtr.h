/* SPDX-License-Identifier: MIT */
/*
 * iwt_rtr.h - RFC 6581 Ready-To-Receive (RTR) forms on the tools' command
 * lines and in their output: the MPA_RTR_* mask of <iwarp/mpa.h> (Send,
 * Write, Read) by name.  Part of the tools library (tools/lib, prefix iwt_).
 */
#ifndef IWARP_TOOLS_IWT_RTR_H
#define IWARP_TOOLS_IWT_RTR_H

#include <stddef.h>
#include <stdint.h>

/* Room for the longest iwt_rtr_names result ("write,read,send"), NUL included. */
#define IWT_RTR_NAMES_LEN 16

/*
 * A comma-separated list of "write", "read", "send" and "all" (lower case,
 * no spaces, no empty item, at least one) as an MPA_RTR_* mask.  Returns 0
 * with *mask set, or -1 (*mask untouched).
 */
int iwt_rtr_parse(const char *s, uint8_t *mask);

/*
 * The names of the forms in `mask`, comma-separated in the order write, read,
 * send ("write,send"), or "none" for an empty mask.  Bits outside
 * MPA_RTR_ALL are ignored.  Returns buf.  iwt_rtr_parse() reads it back.
 */
const char *iwt_rtr_names(uint8_t mask, char *buf, size_t cap);

/*
 * The message one form stands for: "zero-length RDMA Write RTR",
 * "zero-length RDMA Read Request RTR", "zero-length Send RTR"; "no RTR"
 * for MPA_RTR_NONE or anything that is not exactly one form.
 */
const char *iwt_rtr_form_name(uint8_t form);

#endif
