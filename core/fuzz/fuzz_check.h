/* What every fuzz harness shares: CHECK (a broken invariant aborts, which
 * libFuzzer records as a crash) and reference helpers written here, apart
 * from the core, so the harnesses check the core against code it does not
 * share: big-endian field reads and the RFC 1071 one's-complement sum. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define CHECK(cond) \
    do { \
        if (!(cond)) \
            abort(); \
    } while (0)

/* The n-byte (n <= 4) big-endian value at p. */
static inline uint32_t be(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    unsigned i;
    for (i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* RFC 1071 one's-complement sum of n bytes added to acc, folded, not
 * complemented. */
static inline uint32_t sum16(const uint8_t *p, size_t n, uint32_t acc)
{
    size_t i;
    for (i = 0; i + 1 < n; i += 2)
        acc += ((uint32_t)p[i] << 8) | p[i + 1];
    if (n & 1)
        acc += (uint32_t)p[n - 1] << 8;
    while (acc >> 16)
        acc = (acc & 0xFFFFu) + (acc >> 16);
    return acc;
}

#endif
