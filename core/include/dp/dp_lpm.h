/* IPv4 longest-prefix match, DIR-24-8 (Gupta, Lin, McKeown 1998).
 *
 * A 2^24-entry first-level table indexed by the top 24 bits; prefixes longer
 * than /24 spill into 256-entry second-level groups. A lookup is one or two
 * table reads. A rule store of every (prefix, depth, next hop) makes delete
 * exact: the covered range is restored to the next less specific rule.
 *
 * Memory is the caller's: dp_lpm_memory_size() says how much for a config,
 * dp_lpm_create() builds the table inside it. No malloc anywhere. */
#ifndef DP_LPM_H
#define DP_LPM_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error returns (negative). */
#define DP_LPM_EINVAL (-1)  /* bad argument: depth > 32, next hop > DP_LPM_MAX_NEXT_HOP, NULL */
#define DP_LPM_ENOSPC (-2)  /* rule store or second-level groups exhausted */
#define DP_LPM_ENOENT (-3)  /* delete of a rule that is not there */
#define DP_LPM_ENOMEM (-4)  /* memory given to create is smaller than dp_lpm_memory_size */

/* Largest next hop value: next hops are 24-bit. */
#define DP_LPM_MAX_NEXT_HOP 0xFFFFFFu

typedef struct dp_lpm_config {
    uint32_t max_rules;    /* rule store capacity (routes), e.g. 1100000 */
    uint32_t tbl8_groups;  /* second-level groups of 256 entries, e.g. 65536 */
} dp_lpm_config_t;

typedef struct dp_lpm dp_lpm_t;

/* Bytes needed for cfg; 0 when cfg is invalid. */
size_t dp_lpm_memory_size(const dp_lpm_config_t *cfg);

/* Builds an empty table in mem (mem_size bytes, 64-byte aligned recommended).
 * Returns the table (pointing into mem) or NULL if mem is too small or cfg
 * is invalid. Free by simply releasing mem. */
dp_lpm_t *dp_lpm_create(void *mem, size_t mem_size, const dp_lpm_config_t *cfg);

/* Adds or replaces prefix/depth -> next_hop. prefix host order; bits beyond
 * depth are ignored; depth 0 is the default route. 0 or a DP_LPM_E* error;
 * a refused add (DP_LPM_ENOSPC) leaves the table unchanged. */
int dp_lpm_add(dp_lpm_t *lpm, uint32_t prefix, uint8_t depth, uint32_t next_hop, dp_ops_t *ops);

/* Removes prefix/depth. 0 or DP_LPM_ENOENT / DP_LPM_EINVAL. */
int dp_lpm_delete(dp_lpm_t *lpm, uint32_t prefix, uint8_t depth, dp_ops_t *ops);

/* Longest match for ip (host order): 0 and *next_hop set, or DP_LPM_ENOENT.
 * Adds table_probes and cache_lines to ops: 1 each for the first-level read,
 * 2 each when the address's /24 holds a rule longer than /24 (a
 * second-level read follows). */
int dp_lpm_lookup(const dp_lpm_t *lpm, uint32_t ip, uint32_t *next_hop, dp_ops_t *ops);

/* Batch lookup: next_hops[i] = hop or DP_LPM_MISS. Same ops accounting. */
#define DP_LPM_MISS 0xFFFFFFFFu
void dp_lpm_lookup_bulk(const dp_lpm_t *lpm, const uint32_t *ips, uint32_t *next_hops, unsigned n,
                        dp_ops_t *ops);

/* Footprint and occupancy. */
typedef struct dp_lpm_stats {
    uint32_t rules;             /* rules stored */
    uint32_t tbl8_groups_used;  /* second-level groups in use: one per /24 holding a rule longer than /24 */
    size_t memory_bytes;        /* bytes of the table as configured */
} dp_lpm_stats_t;

void dp_lpm_get_stats(const dp_lpm_t *lpm, dp_lpm_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif
