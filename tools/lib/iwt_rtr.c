/* SPDX-License-Identifier: MIT */
/* iwt_rtr.c - RTR forms by name (iwt_rtr.h). */
#include "iwt_rtr.h"

#include <stdio.h>
#include <string.h>

#include <iwarp/mpa.h>

static const struct {
	const char *name;
	uint8_t mask;
} rtr_words[] = {
	{"write", MPA_RTR_WRITE},
	{"read", MPA_RTR_READ},
	{"send", MPA_RTR_SEND},
	{"all", MPA_RTR_ALL},
};

#define NWORDS (sizeof(rtr_words) / sizeof(rtr_words[0]))

int iwt_rtr_parse(const char *s, uint8_t *mask)
{
	uint8_t m = 0;

	for (;;) {
		size_t n = strcspn(s, ","), i;

		for (i = 0; i < NWORDS; i++) {
			if (strlen(rtr_words[i].name) == n && !strncmp(s, rtr_words[i].name, n))
				break;
		}
		if (i == NWORDS)
			return -1; /* unknown or empty item */
		m |= rtr_words[i].mask;
		if (!s[n])
			break;
		s += n + 1;
	}
	*mask = m;
	return 0;
}

const char *iwt_rtr_names(uint8_t mask, char *buf, size_t cap)
{
	size_t n = 0;

	if (cap)
		buf[0] = '\0';
	/* the single forms: every entry but "all" */
	for (size_t i = 0; i + 1 < NWORDS; i++) {
		if ((mask & rtr_words[i].mask) && n < cap)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "",
					      rtr_words[i].name);
	}
	if (n == 0)
		snprintf(buf, cap, "none");
	return buf;
}

const char *iwt_rtr_form_name(uint8_t form)
{
	switch (form) {
	case MPA_RTR_WRITE:
		return "zero-length RDMA Write RTR";
	case MPA_RTR_READ:
		return "zero-length RDMA Read Request RTR";
	case MPA_RTR_SEND:
		return "zero-length Send RTR";
	default:
		return "no RTR";
	}
}
