/* SPDX-License-Identifier: MIT */
/* iwt_clock.c - the tools' monotonic clock (iwt_clock.h). */
#include "iwt_clock.h"

#include <limits.h>
#include <sys/resource.h>
#include <time.h>

uint64_t iwt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t iwt_now_us(void)
{
	return iwt_now_ns() / 1000u;
}

uint64_t iwt_now_ms(void)
{
	return iwt_now_ns() / 1000000u;
}

int iwt_ms_until(uint64_t deadline_ns)
{
	uint64_t now = iwt_now_ns(), ms;

	if (deadline_ns == UINT64_MAX)
		return -1;
	if (deadline_ns <= now)
		return 0;
	ms = (deadline_ns - now + 999999u) / 1000000u;
	return ms > (uint64_t)INT_MAX ? INT_MAX : (int)ms;
}

uint64_t iwt_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}
