/* Internal to core/src: the MurmurHash3 x86_32 steps (Appleby's public
 * domain design) on 32-bit words the caller builds from field values, so a
 * hash is the same on big-endian mips64 and little-endian hosts. dp_flow
 * hashes a 5-tuple by field, dp_persist a stick key by big-endian word.
 * Not part of the public API. */
#ifndef DP_MURMUR_H
#define DP_MURMUR_H

#include <stdint.h>

static inline uint32_t dp_murmur_rotl32(uint32_t x, unsigned r)
{
    return (x << r) | (x >> (32u - r));
}

/* One block: the word scrambled and mixed into the running hash. */
static inline uint32_t dp_murmur_mix(uint32_t h, uint32_t word)
{
    const uint32_t k = dp_murmur_rotl32(word * 0xcc9e2d51u, 15) * 0x1b873593u;
    return dp_murmur_rotl32(h ^ k, 13) * 5u + 0xe6546b64u;
}

/* The finalizer over the hash of `len` bytes of key material. */
static inline uint32_t dp_murmur_final(uint32_t h, uint32_t len)
{
    h ^= len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

#endif
