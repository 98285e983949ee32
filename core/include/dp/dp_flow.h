/* 5-tuple flow table with fixed capacity and per-core shards.
 *
 * Each shard is owned by one core (no locks): a flow's shard is chosen by
 * its hash (dp_flow_shard_of), as RSS would. Shards are bucketized open
 * hash tables; an insert into a full shard is refused and counted, never
 * evicting silently. Idle entries are evicted only by dp_flow_expire. */
#ifndef DP_FLOW_H
#define DP_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_FLOW_EINVAL (-1) /* bad argument */
#define DP_FLOW_EFULL (-2)  /* shard at capacity: insert refused */
#define DP_FLOW_ENOENT (-3) /* no such flow */
#define DP_FLOW_ENOMEM (-4) /* memory given is smaller than dp_flow_memory_size */

typedef struct dp_flow_key {
    uint32_t src_ip;
    uint32_t dst_ip;
    uint16_t src_port;
    uint16_t dst_port;
    uint8_t proto;
    uint8_t pad[3]; /* set to zero; ignored: keys are compared and hashed by field */
} dp_flow_key_t;

typedef struct dp_flow_config {
    uint32_t shards;             /* one per core, >= 1 */
    uint32_t entries_per_shard;  /* capacity of each shard, >= 1 */
} dp_flow_config_t;

typedef struct dp_flow_table dp_flow_table_t;

/* Per-shard counters. */
typedef struct dp_flow_shard_stats {
    uint32_t entries;        /* flows held now */
    uint32_t capacity;       /* entries_per_shard */
    uint64_t inserts;        /* successful inserts */
    uint64_t refused_full;   /* inserts refused because the shard was full */
    uint64_t expired;        /* entries evicted by dp_flow_expire */
    uint64_t deletes;        /* entries removed by dp_flow_delete */
} dp_flow_shard_stats_t;

size_t dp_flow_memory_size(const dp_flow_config_t *cfg);
dp_flow_table_t *dp_flow_create(void *mem, size_t mem_size, const dp_flow_config_t *cfg);

/* Deterministic 32-bit hash of a key, computed from the field values (not
 * their memory layout), so it is the same on every architecture and byte
 * order. The shard comes from its high bits, the bucket from its low bits. */
uint32_t dp_flow_hash(const dp_flow_key_t *key);

/* Shard that owns key. */
uint32_t dp_flow_shard_of(const dp_flow_table_t *t, const dp_flow_key_t *key);

/* Inserts key with value at time now (any monotonic unit). If present,
 * updates value and last-seen. 0, DP_FLOW_EFULL or DP_FLOW_EINVAL. */
int dp_flow_insert(dp_flow_table_t *t, const dp_flow_key_t *key, uint64_t value, uint64_t now,
                   dp_ops_t *ops);

/* Looks key up; on a hit sets *value, refreshes last-seen to now, returns 0. */
int dp_flow_lookup(dp_flow_table_t *t, const dp_flow_key_t *key, uint64_t now, uint64_t *value,
                   dp_ops_t *ops);

int dp_flow_delete(dp_flow_table_t *t, const dp_flow_key_t *key, dp_ops_t *ops);

/* Evicts entries of shard whose last-seen + idle_timeout <= now.
 * Returns the number evicted. */
uint32_t dp_flow_expire(dp_flow_table_t *t, uint32_t shard, uint64_t now, uint64_t idle_timeout,
                        dp_ops_t *ops);

void dp_flow_get_shard_stats(const dp_flow_table_t *t, uint32_t shard, dp_flow_shard_stats_t *st);

#ifdef __cplusplus
}
#endif
#endif
