/* SPDX-License-Identifier: MIT */
/*
 * iwt_clock.h - the tools' clock: CLOCK_MONOTONIC, for timeouts, deadlines
 * and rates.  It never goes back and has nothing to do with wall time (log
 * time stamps read CLOCK_REALTIME themselves).  Part of the tools library
 * (tools/lib, prefix iwt_).
 */
#ifndef IWARP_TOOLS_IWT_CLOCK_H
#define IWARP_TOOLS_IWT_CLOCK_H

#include <stdint.h>

/* Monotonic time since an arbitrary origin (the boot), in ns, us or ms (truncated). */
uint64_t iwt_now_ns(void);
uint64_t iwt_now_us(void);
uint64_t iwt_now_ms(void);

/*
 * A poll() timeout for the monotonic deadline `deadline_ns`: -1 (wait for
 * ever) for UINT64_MAX, 0 once it has passed, else the milliseconds left
 * rounded up (so a wait never ends early), at most INT_MAX.
 */
int iwt_ms_until(uint64_t deadline_ns);

/* The CPU time this process has used so far (user + system, every thread,
 * getrusage(2)), in ns: take two and subtract for a run's cost. */
uint64_t iwt_cpu_ns(void);

#endif
