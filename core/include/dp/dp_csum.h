/* Internet checksum (RFC 1071) and incremental update (RFC 1624). */
#ifndef DP_CSUM_H
#define DP_CSUM_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One's-complement sum of len bytes (network byte order words, odd trailing
 * byte padded with zero), folded to 16 bits, NOT complemented. Host order
 * result. Adds len to ops->checksum_bytes when ops != NULL. */
uint16_t dp_csum_partial(const void *data, size_t len, uint32_t initial, dp_ops_t *ops);

/* Internet checksum: ~dp_csum_partial(data, len, 0). Host order result; store
 * it big-endian. A buffer that includes a correct checksum field yields 0. */
uint16_t dp_csum(const void *data, size_t len, dp_ops_t *ops);

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), where one 16-bit field changes
 * from old_word to new_word. All values host order. Adds 1 to csum_updates. */
uint16_t dp_csum_update16(uint16_t old_csum, uint16_t old_word, uint16_t new_word, dp_ops_t *ops);

/* Same for a 32-bit field (an IPv4 address) as two 16-bit updates. */
uint16_t dp_csum_update32(uint16_t old_csum, uint32_t old_value, uint32_t new_value, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
