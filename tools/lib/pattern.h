/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test data pattern: every 8-byte word of a test file, at an offset
 * that is a multiple of 8, holds pattern_word(offset, seed) in little-endian
 * byte order, so any byte of any file can be checked knowing only its offset
 * and the seed.  A file's tail shorter than a word holds the word's first
 * bytes.
 */
#ifndef ABISS_PATTERN_H
#define ABISS_PATTERN_H

#include <stddef.h>
#include <stdint.h>

uint64_t pattern_word(uint64_t offset, uint64_t seed);

/* Fill @buf with the @len pattern bytes that belong at file offset @off. */
void pattern_fill(void *buf, uint64_t off, size_t len, uint64_t seed);

/*
 * Check @len bytes read from file offset @off.  Returns -1 if they are all
 * right, else the index in @buf of the first wrong byte.
 */
ptrdiff_t pattern_check(const void *buf, uint64_t off, size_t len, uint64_t seed);

#endif /* ABISS_PATTERN_H */
