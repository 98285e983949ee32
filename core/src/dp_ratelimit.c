#include "dp_ratelimit.h"

#include <string.h>

/* One bucket. Credit is in units of 1/ticks_per_second token: a tick adds
 * rate units, a connection takes ticks_per_second units. */
typedef struct rl_bucket {
    uint64_t credit;   /* current credit, <= capacity */
    uint64_t capacity; /* burst * ticks_per_second (< 2^63) */
    uint64_t last;     /* tick of the last refill */
    uint64_t admitted; /* connections admitted */
    uint64_t refused;  /* connections refused */
    uint32_t rate;     /* tokens per second; 0 with burst 0: unlimited */
    uint32_t burst;    /* tokens */
    uint8_t pad[16];   /* to one 64-byte line */
} rl_bucket_t;

struct dp_rl {
    uint32_t services;         /* buckets */
    uint32_t ticks_per_second; /* caller's clock */
    uint8_t pad[56];           /* buckets start 64 bytes in: aligned when mem is */
    rl_bucket_t bucket[];      /* services entries */
};

/* A bucket is one cache line, and the header keeps them on line boundaries. */
typedef char dp_rl_bucket_size_check[(sizeof(rl_bucket_t) == 64) ? 1 : -1];
typedef char dp_rl_header_size_check[(sizeof(struct dp_rl) == 64) ? 1 : -1];

size_t dp_rl_memory_size(const dp_rl_config_t *cfg)
{
    if (!cfg || cfg->services == 0 || cfg->ticks_per_second == 0 ||
        cfg->ticks_per_second > DP_RL_MAX_TICKS_PER_SECOND)
        return 0;
    {
        /* At most 2^38 bytes: fits a 64-bit size_t; checked for 32-bit. */
        size_t n = cfg->services, bytes = n * sizeof(rl_bucket_t);
        if (bytes / sizeof(rl_bucket_t) != n || bytes + sizeof(struct dp_rl) < bytes)
            return 0;
        return bytes + sizeof(struct dp_rl);
    }
}

dp_rl_t *dp_rl_create(void *mem, size_t mem_size, const dp_rl_config_t *cfg)
{
    size_t need = dp_rl_memory_size(cfg);
    dp_rl_t *rl = (dp_rl_t *)mem;
    if (need == 0 || !mem || mem_size < need)
        return NULL;
    /* All zero: every bucket unlimited (burst 0), counters 0. */
    memset(mem, 0, need);
    rl->services = cfg->services;
    rl->ticks_per_second = cfg->ticks_per_second;
    return rl;
}

int dp_rl_set(dp_rl_t *rl, uint32_t service, uint32_t rate, uint32_t burst, uint64_t now, dp_ops_t *ops)
{
    rl_bucket_t *b;
    if (!rl || service >= rl->services || rate == 0 || burst == 0)
        return DP_RL_EINVAL;
    b = &rl->bucket[service];
    b->rate = rate;
    b->burst = burst;
    /* < 2^32 * 2^31 = 2^63, and refill never goes beyond it. */
    b->capacity = (uint64_t)burst * rl->ticks_per_second;
    b->credit = b->capacity;
    b->last = now;
    if (ops)
        ops->table_writes++;
    return 0;
}

int dp_rl_clear(dp_rl_t *rl, uint32_t service, dp_ops_t *ops)
{
    rl_bucket_t *b;
    if (!rl || service >= rl->services)
        return DP_RL_EINVAL;
    b = &rl->bucket[service];
    b->rate = 0;
    b->burst = 0;
    b->capacity = 0;
    b->credit = 0;
    if (ops)
        ops->table_writes++;
    return 0;
}

/* Adds the credit of the ticks since the last refill, clamped to the
 * capacity. The product elapsed * rate is formed only when it stays below
 * what is missing plus one tick's worth: a bucket idle for years costs one
 * division, never an overflow. */
static void refill(rl_bucket_t *b, uint64_t now)
{
    uint64_t need, elapsed, ticks_to_full;
    if (now <= b->last)
        return; /* same tick, or a clock that went back: no credit */
    elapsed = now - b->last;
    b->last = now;
    need = b->capacity - b->credit;
    ticks_to_full = need / b->rate + (need % b->rate != 0);
    if (elapsed >= ticks_to_full)
        b->credit = b->capacity;
    else
        b->credit += elapsed * b->rate; /* elapsed < ticks_to_full: < need */
}

int dp_rl_admit(dp_rl_t *rl, uint32_t service, uint64_t now, dp_ops_t *ops)
{
    rl_bucket_t *b;
    int rc = 0;
    if (!rl || service >= rl->services)
        return DP_RL_EINVAL;
    b = &rl->bucket[service];
    if (ops) {
        ops->table_probes++;
        ops->cache_lines++;
        ops->table_writes++;
    }
    if (b->burst == 0) { /* unlimited */
        b->admitted++;
        return 0;
    }
    refill(b, now);
    if (b->credit >= rl->ticks_per_second) {
        b->credit -= rl->ticks_per_second;
        b->admitted++;
    } else {
        b->refused++;
        rc = DP_RL_ELIMITED;
    }
    return rc;
}

int dp_rl_get_stats(const dp_rl_t *rl, uint32_t service, dp_rl_stats_t *st)
{
    const rl_bucket_t *b;
    if (!rl || !st || service >= rl->services)
        return DP_RL_EINVAL;
    b = &rl->bucket[service];
    st->rate = b->rate;
    st->burst = b->burst;
    st->tokens = b->burst ? b->credit / rl->ticks_per_second : 0;
    st->admitted = b->admitted;
    st->refused = b->refused;
    return 0;
}
