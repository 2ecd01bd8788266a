// SPDX-License-Identifier: GPL-2.0
/*
 * The test data pattern (see pattern.h): SplitMix64's output function of
 * the word index and the seed, cheap and different for every word.
 */
#include <string.h>

#include "pattern.h"

uint64_t pattern_word(uint64_t offset, uint64_t seed)
{
	uint64_t z = (offset >> 3) + (seed + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void pattern_fill(void *buf, uint64_t off, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t w = pattern_word(off & ~7ULL, seed);

	for (; len; len--, off++) {
		if ((off & 7) == 0)
			w = pattern_word(off, seed);
		*p++ = (unsigned char)(w >> (8 * (off & 7)));
	}
}

ptrdiff_t pattern_check(const void *buf, uint64_t off, size_t len, uint64_t seed)
{
	const unsigned char *p = buf;
	unsigned char want[4096];
	size_t done = 0, n, i;

	while (done < len) {
		n = len - done < sizeof(want) ? len - done : sizeof(want);
		pattern_fill(want, off + done, n, seed);
		if (memcmp(p + done, want, n)) {
			for (i = 0; p[done + i] == want[i]; i++)
				;
			return (ptrdiff_t)(done + i);
		}
		done += n;
	}
	return -1;
}
