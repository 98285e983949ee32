#include "dp_ops.h"

#include <string.h>

/* Field order of dp_ops_t; a new counter must be added in both places. */
static const char *const counter_names[DP_OPS_NUM_COUNTERS] = {
    "packets",      "bytes_parsed",  "bytes_written",   "checksum_bytes",
    "csum_updates", "table_probes",  "cache_lines",     "table_writes",
    "rules_evaluated", "bytes_copied", "crypto_bytes", "hashes",
    "servers_examined",
};

/* The generic accessors below index dp_ops_t as an array of counters. */
typedef char dp_ops_layout_check[(sizeof(dp_ops_t) == DP_OPS_NUM_COUNTERS * sizeof(uint64_t)) ? 1 : -1];

const char *dp_ops_counter_name(unsigned i)
{
    return i < DP_OPS_NUM_COUNTERS ? counter_names[i] : NULL;
}

uint64_t dp_ops_counter(const dp_ops_t *ops, unsigned i)
{
    const uint64_t *c = (const uint64_t *)(const void *)ops;
    return i < DP_OPS_NUM_COUNTERS ? c[i] : 0;
}

void dp_ops_reset(dp_ops_t *ops)
{
    memset(ops, 0, sizeof(*ops));
}

void dp_ops_add(dp_ops_t *acc, const dp_ops_t *delta)
{
    uint64_t *a = (uint64_t *)(void *)acc;
    const uint64_t *d = (const uint64_t *)(const void *)delta;
    unsigned i;
    for (i = 0; i < DP_OPS_NUM_COUNTERS; i++)
        a[i] += d[i];
}
