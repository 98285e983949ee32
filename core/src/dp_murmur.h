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

/* dp_flow_hash of a 5-tuple given by field values (dp_flow.c documents
 * the words); here so that the session table's lookup can inline it. */
static inline uint32_t dp_murmur_flow(uint32_t src_ip, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
                                      uint8_t proto)
{
    uint32_t h = 0x5ad1f10bu;
    h = dp_murmur_mix(h, src_ip);
    h = dp_murmur_mix(h, dst_ip);
    h = dp_murmur_mix(h, ((uint32_t)src_port << 16) | dst_port);
    h = dp_murmur_mix(h, proto);
    return dp_murmur_final(h, 13u); /* bytes of key material */
}

#endif
