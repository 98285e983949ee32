/* Operation counters: what a packet cost the data plane, in countable units.
 *
 * Every dp_* function that touches a packet or a table adds to a caller-owned
 * dp_ops_t. The cycle model (model/, scenarios/platforms) prices each counter
 * in cycles for a given platform; nothing in core/ knows about time. */
#ifndef DP_OPS_H
#define DP_OPS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_ops {
    uint64_t packets;         /* packets entering a dp_* entry point (parse, forward) */
    uint64_t bytes_parsed;    /* header bytes read by parsers */
    uint64_t bytes_written;   /* header bytes written by builders and rewrites */
    uint64_t checksum_bytes;  /* bytes summed by full (non-incremental) checksums */
    uint64_t csum_updates;    /* RFC 1624 incremental checksum updates */
    uint64_t table_probes;    /* reads of a lookup table entry (LPM level, hash bucket) */
    uint64_t cache_lines;     /* distinct 64-byte cache lines a lookup touched (estimate) */
    uint64_t table_writes;    /* table entries written (insert, delete, update) */
    uint64_t rules_evaluated; /* classifier / URL / ACL rules compared */
    uint64_t bytes_copied;    /* payload bytes copied (memcpy-like work) */
    uint64_t crypto_bytes;    /* bytes passed through a cipher or MAC */
    uint64_t hashes;          /* hash function evaluations (flow/session keys, scheduler
                                 hashes, SYN-cookie MACs), one per key hashed */
    uint64_t servers_examined; /* backend entries a scheduler read to pick one */
} dp_ops_t;

/* Number of uint64_t counters in dp_ops_t, for generic pricing loops. */
#define DP_OPS_NUM_COUNTERS 13

/* Name of counter i (0 <= i < DP_OPS_NUM_COUNTERS), matching field order;
 * NULL when out of range. Platform profiles price counters by these names. */
const char *dp_ops_counter_name(unsigned i);

/* Counter i as an lvalue-free read; 0 when out of range. */
uint64_t dp_ops_counter(const dp_ops_t *ops, unsigned i);

/* Sets every counter to zero. */
void dp_ops_reset(dp_ops_t *ops);

/* acc += delta, counter by counter. */
void dp_ops_add(dp_ops_t *acc, const dp_ops_t *delta);

#ifdef __cplusplus
}
#endif
#endif
