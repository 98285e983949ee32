#include "dp_csum.h"

uint16_t dp_csum_partial(const void *data, size_t len, uint32_t initial, dp_ops_t *ops)
{
    const uint8_t *p = (const uint8_t *)data;
    uint64_t sum = initial;
    size_t i;
    /* Byte-wise big-endian assembly keeps the result independent of host
     * endianness and alignment (mips64 BE and x86 give identical sums). */
    for (i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)((p[i] << 8) | p[i + 1]);
    if (len & 1)
        sum += (uint32_t)(p[len - 1] << 8);
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    if (ops)
        ops->checksum_bytes += len;
    return (uint16_t)sum;
}

uint16_t dp_csum(const void *data, size_t len, dp_ops_t *ops)
{
    return (uint16_t)~dp_csum_partial(data, len, 0, ops);
}

uint16_t dp_csum_update16(uint16_t old_csum, uint16_t old_word, uint16_t new_word, dp_ops_t *ops)
{
    /* RFC 1624 eqn. 3 avoids the -0 problem of eqn. 2. */
    uint32_t sum = (uint16_t)~old_csum;
    sum += (uint16_t)~old_word;
    sum += new_word;
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    if (ops)
        ops->csum_updates++;
    return (uint16_t)~sum;
}

uint16_t dp_csum_update32(uint16_t old_csum, uint32_t old_value, uint32_t new_value, dp_ops_t *ops)
{
    uint16_t c = dp_csum_update16(old_csum, (uint16_t)(old_value >> 16), (uint16_t)(new_value >> 16), ops);
    return dp_csum_update16(c, (uint16_t)(old_value & 0xFFFFu), (uint16_t)(new_value & 0xFFFFu), ops);
}
