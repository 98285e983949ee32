/* New-connection rate limiter per virtual service: one token bucket each.
 *
 * A bucket of burst tokens refills at rate tokens per second; each new
 * connection (a SYN, or a validated SYN cookie) takes one token or is
 * refused (the model counts DP_DROP_RATE_LIMITED). Time is the caller's, in
 * ticks of its choosing (ticks_per_second in the config: 1e9 for ns-3
 * nanoseconds, 1000 for milliseconds).
 *
 * Arithmetic is integer and exact: credit is kept in units of
 * 1/ticks_per_second token, so a tick adds exactly rate units and a token
 * is exactly ticks_per_second units. Nothing is rounded, nothing drifts:
 * over T ticks a bucket that starts full admits at most
 * burst + floor(T * rate / ticks_per_second) connections, and exactly that
 * many when connections are asked for at every tick until one is refused
 * and the bucket holds a token plus one tick's credit (burst >= 1 +
 * rate / ticks_per_second; else the excess is lost to the full bucket, as
 * in any token bucket sampled at ticks: choose fine ticks, e.g. ns).
 * Every product is bounded before it
 * is formed (refill stops at the bucket's capacity), so no run length,
 * idle gap or clock value overflows. Deterministic: same calls, same
 * answers, on every architecture.
 *
 * Memory is the caller's: dp_rl_memory_size() + dp_rl_create(); one
 * 64-byte entry per service (a bucket fits one cache line when mem is
 * 64-byte aligned). Each service belongs to one core (no locks), like a
 * flow-table shard. */
#ifndef DP_RATELIMIT_H
#define DP_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error returns (negative). */
#define DP_RL_EINVAL (-1)  /* bad argument: service out of range, rate or burst 0, NULL */
#define DP_RL_ELIMITED (-2) /* admit: no token: refuse the connection (DP_DROP_RATE_LIMITED) */

/* Largest ticks_per_second: keeps burst * ticks_per_second below 2^63. */
#define DP_RL_MAX_TICKS_PER_SECOND 0x7FFFFFFFu

typedef struct dp_rl_config {
    uint32_t services;         /* virtual services (buckets), >= 1 */
    uint32_t ticks_per_second; /* caller's clock: ticks per second, 1..DP_RL_MAX_TICKS_PER_SECOND */
} dp_rl_config_t;

typedef struct dp_rl dp_rl_t;

/* Per-service state and counters. */
typedef struct dp_rl_stats {
    uint32_t rate;     /* tokens (connections) per second; 0: unlimited */
    uint32_t burst;    /* bucket size in tokens; 0: unlimited */
    uint64_t tokens;   /* whole tokens in the bucket at the last admit/set (not refilled by reading) */
    uint64_t admitted; /* connections admitted */
    uint64_t refused;  /* connections refused (DP_RL_ELIMITED) */
} dp_rl_stats_t;

/* Bytes needed for cfg: 64 + 64 * services; 0 when cfg is invalid. */
size_t dp_rl_memory_size(const dp_rl_config_t *cfg);

/* Builds the limiter in mem; every service starts unlimited (admits all,
 * still counting). NULL when mem is too small or cfg invalid. */
dp_rl_t *dp_rl_create(void *mem, size_t mem_size, const dp_rl_config_t *cfg);

/* Limits service to rate connections per second with a bucket of burst,
 * starting full at time now. Counters are kept. 0 or DP_RL_EINVAL (rate 0
 * or burst 0 or service out of range). Adds table_writes 1. */
int dp_rl_set(dp_rl_t *rl, uint32_t service, uint32_t rate, uint32_t burst, uint64_t now, dp_ops_t *ops);

/* Makes service unlimited again. 0 or DP_RL_EINVAL. Adds table_writes 1. */
int dp_rl_clear(dp_rl_t *rl, uint32_t service, dp_ops_t *ops);

/* One new connection for service at time now (ticks; a clock that goes
 * backwards adds no credit and does not move the bucket's clock back).
 * 0 admitted, DP_RL_ELIMITED refused, DP_RL_EINVAL (service out of range,
 * nothing added). Adds table_probes 1, cache_lines 1 and table_writes 1
 * (the bucket and its counter are written back, admitted or not). */
int dp_rl_admit(dp_rl_t *rl, uint32_t service, uint64_t now, dp_ops_t *ops);

/* Copies service's state; DP_RL_EINVAL when out of range. */
int dp_rl_get_stats(const dp_rl_t *rl, uint32_t service, dp_rl_stats_t *st);

#ifdef __cplusplus
}
#endif
#endif
