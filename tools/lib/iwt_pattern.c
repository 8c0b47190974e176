/* SPDX-License-Identifier: MIT */
/* iwt_pattern.c - the tools' data patterns (iwt_pattern.h). */
#include "iwt_pattern.h"

#include <stdio.h>

static unsigned char rping_next(unsigned char letter)
{
	return letter >= IWT_RPING_LAST_LETTER ? IWT_RPING_FIRST_LETTER
					       : (unsigned char)(letter + 1);
}

void iwt_rping_fill(char *buf, size_t size, int ping, unsigned char *start)
{
	unsigned char letter = *start;
	int n = snprintf(buf, size, IWT_RPING_MSG_FMT, ping);
	size_t i = n < 0 ? 0 : (size_t)n;

	for (; i < size; i++) {
		buf[i] = (char)letter;
		letter = rping_next(letter);
	}
	buf[size - 1] = '\0';
	*start = rping_next(*start);
}

uint8_t iwt_abc_byte(unsigned index, size_t off)
{
	return (uint8_t)('a' + (index + off) % 26);
}

void iwt_abc_fill(uint8_t *p, size_t len, unsigned index)
{
	for (size_t i = 0; i < len; i++)
		p[i] = iwt_abc_byte(index, i);
}

size_t iwt_abc_check(const uint8_t *p, size_t len, unsigned index)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != iwt_abc_byte(index, i))
			return i;
	}
	return len;
}
