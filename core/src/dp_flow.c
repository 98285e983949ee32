#include "dp_flow.h"
#include "dp_murmur.h"

#include <string.h>

/* A shard is an array of 64-byte bucket headers (one cache line: the hash
 * of the flow in each of 8 slots, a used mask and an overflow count) and a
 * parallel array of 32-byte entries. A lookup reads the home bucket header
 * and only the entries whose stored hash matches.
 *
 * Overflow counts (as in F14-style tables) replace tombstones: an insert
 * that finds its home bucket full walks on to the next bucket and
 * increments the overflow count of every full bucket it passed; a lookup
 * stops at the first bucket whose overflow count is zero; a delete walks
 * the same path and decrements. Deletes and expiry therefore leave no
 * residue, and a shard with room always accepts an insert. */
#define BUCKET_SLOTS 8u
#define BUCKET_FULL 0xFFu
#define NOT_FOUND 0xFFFFFFFFu
#define MAX_SHARDS (1u << 16)
#define MAX_ENTRIES_PER_SHARD (1u << 28)

typedef struct flow_bucket {
    uint32_t sig[BUCKET_SLOTS]; /* dp_flow_hash of the key in each used slot */
    uint32_t used;              /* bit i set: slot i holds a flow */
    uint32_t overflow;          /* flows homed before this bucket stored past it */
    uint32_t reserved[6];       /* pads the header to one 64-byte cache line */
} flow_bucket_t;

typedef struct flow_entry {
    dp_flow_key_t key;
    uint64_t value;
    uint64_t last_seen;
} flow_entry_t;

typedef char flow_bucket_is_a_cache_line[sizeof(flow_bucket_t) == 64 ? 1 : -1];
typedef char flow_entry_is_half_a_line[sizeof(flow_entry_t) == 32 ? 1 : -1];

typedef struct flow_shard {
    flow_bucket_t *buckets;
    flow_entry_t *entries;   /* BUCKET_SLOTS per bucket, same order */
    uint32_t bucket_mask;    /* buckets - 1 (power of two) */
    dp_flow_shard_stats_t stats;
} flow_shard_t;

struct dp_flow_table {
    uint32_t shards;
    uint32_t capacity;       /* entries per shard */
    size_t shard_stride;     /* bytes from one shard's descriptor to the next */
    uint8_t *first_shard;
};

static size_t align64(size_t n)
{
    return (n + 63u) & ~(size_t)63u;
}

/* Buckets per shard: a power of two with at least 25% more slots than the
 * capacity, so overflow walks stay short at full load. */
static uint32_t buckets_for(uint32_t capacity)
{
    uint64_t want = ((uint64_t)capacity * 5u / 4u + BUCKET_SLOTS - 1u) / BUCKET_SLOTS;
    uint32_t b = 1;
    while (b < want)
        b <<= 1;
    return b;
}

static int config_ok(const dp_flow_config_t *cfg)
{
    return cfg && cfg->shards >= 1 && cfg->shards <= MAX_SHARDS && cfg->entries_per_shard >= 1 &&
           cfg->entries_per_shard <= MAX_ENTRIES_PER_SHARD;
}

/* Each shard starts on its own cache line, so cores owning neighbouring
 * shards never share a line. */
static size_t shard_stride_for(uint32_t capacity)
{
    size_t nb = buckets_for(capacity);
    return align64(sizeof(flow_shard_t)) + nb * sizeof(flow_bucket_t) +
           nb * BUCKET_SLOTS * sizeof(flow_entry_t);
}

size_t dp_flow_memory_size(const dp_flow_config_t *cfg)
{
    if (!config_ok(cfg))
        return 0;
    return 63u + align64(sizeof(struct dp_flow_table)) +
           (size_t)cfg->shards * shard_stride_for(cfg->entries_per_shard);
}

static flow_shard_t *shard_at(const dp_flow_table_t *t, uint32_t i)
{
    return (flow_shard_t *)(void *)(t->first_shard + (size_t)i * t->shard_stride);
}

dp_flow_table_t *dp_flow_create(void *mem, size_t mem_size, const dp_flow_config_t *cfg)
{
    size_t need = dp_flow_memory_size(cfg);
    uint8_t *p;
    dp_flow_table_t *t;
    uint32_t i, nb;

    if (!mem || need == 0 || mem_size < need)
        return NULL;
    p = (uint8_t *)mem + ((64u - ((uintptr_t)mem & 63u)) & 63u);
    t = (dp_flow_table_t *)(void *)p;
    t->shards = cfg->shards;
    t->capacity = cfg->entries_per_shard;
    t->shard_stride = shard_stride_for(cfg->entries_per_shard);
    t->first_shard = p + align64(sizeof(struct dp_flow_table));
    nb = buckets_for(cfg->entries_per_shard);
    for (i = 0; i < t->shards; i++) {
        flow_shard_t *s = shard_at(t, i);
        uint8_t *q = (uint8_t *)s + align64(sizeof(flow_shard_t));
        s->buckets = (flow_bucket_t *)(void *)q;
        s->entries = (flow_entry_t *)(void *)(q + (size_t)nb * sizeof(flow_bucket_t));
        s->bucket_mask = nb - 1u;
        memset(s->buckets, 0, (size_t)nb * sizeof(flow_bucket_t));
        memset(&s->stats, 0, sizeof(s->stats));
        s->stats.capacity = t->capacity;
    }
    return t;
}

/* MurmurHash3-style word mixing over four words built from the field
 * values (not from memory), so the hash, and with it the shard and bucket
 * of a flow, is the same on big- and little-endian hosts:
 *   w0 = src_ip, w1 = dst_ip, w2 = src_port << 16 | dst_port, w3 = proto. */
uint32_t dp_flow_hash(const dp_flow_key_t *key)
{
    return dp_murmur_flow(key->src_ip, key->dst_ip, key->src_port, key->dst_port, key->proto);
}

/* Shard from the high bits (multiply-shift range reduction), bucket from
 * the low bits, so the two choices are independent. */
static uint32_t shard_of_hash(const dp_flow_table_t *t, uint32_t h)
{
    return (uint32_t)(((uint64_t)h * t->shards) >> 32);
}

uint32_t dp_flow_shard_of(const dp_flow_table_t *t, const dp_flow_key_t *key)
{
    return shard_of_hash(t, dp_flow_hash(key));
}

/* Keys are compared field by field; pad bytes never matter. */
static int key_eq(const dp_flow_key_t *a, const dp_flow_key_t *b)
{
    return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->src_port == b->src_port &&
           a->dst_port == b->dst_port && a->proto == b->proto;
}

/* One probe of a table line (a bucket header or an entry): a probe and a
 * cache line in the counters the cycle model prices. */
static void count_line_read(dp_ops_t *ops)
{
    if (ops) {
        ops->table_probes++;
        ops->cache_lines++;
    }
}

static uint32_t find(const flow_shard_t *s, const dp_flow_key_t *key, uint32_t h, dp_ops_t *ops)
{
    uint32_t b = h & s->bucket_mask, n;
    for (n = 0; n <= s->bucket_mask; n++) {
        const flow_bucket_t *bk = &s->buckets[b];
        unsigned i;
        count_line_read(ops);
        for (i = 0; i < BUCKET_SLOTS; i++) {
            if ((bk->used >> i) & 1u && bk->sig[i] == h) {
                const flow_entry_t *e = &s->entries[b * BUCKET_SLOTS + i];
                count_line_read(ops);
                if (key_eq(&e->key, key))
                    return b * BUCKET_SLOTS + i;
            }
        }
        if (bk->overflow == 0)
            break;
        b = (b + 1u) & s->bucket_mask;
    }
    return NOT_FOUND;
}

/* The first steps of insert, lookup and delete: hash the key (*h), pick its
 * shard (*s) and find it there (slot, or NOT_FOUND). */
static uint32_t locate(const dp_flow_table_t *t, const dp_flow_key_t *key, uint32_t *h,
                       flow_shard_t **s, dp_ops_t *ops)
{
    *h = dp_flow_hash(key);
    *s = shard_at(t, shard_of_hash(t, *h));
    return find(*s, key, *h, ops);
}

static void remove_at(flow_shard_t *s, uint32_t slot, dp_ops_t *ops)
{
    uint32_t target = slot / BUCKET_SLOTS;
    uint32_t b = s->buckets[target].sig[slot % BUCKET_SLOTS] & s->bucket_mask;
    while (b != target) {
        s->buckets[b].overflow--;
        b = (b + 1u) & s->bucket_mask;
        if (ops)
            ops->table_writes++;
    }
    s->buckets[target].used &= ~(1u << (slot % BUCKET_SLOTS));
    s->stats.entries--;
    if (ops)
        ops->table_writes++;
}

int dp_flow_insert(dp_flow_table_t *t, const dp_flow_key_t *key, uint64_t value, uint64_t now,
                   dp_ops_t *ops)
{
    uint32_t h, slot, b;
    flow_shard_t *s;
    flow_entry_t *e;

    if (!t || !key)
        return DP_FLOW_EINVAL;
    slot = locate(t, key, &h, &s, ops);
    if (slot != NOT_FOUND) {
        e = &s->entries[slot];
        e->value = value;
        e->last_seen = now;
        if (ops)
            ops->table_writes++;
        return 0;
    }
    if (s->stats.entries >= s->stats.capacity) {
        s->stats.refused_full++;
        return DP_FLOW_EFULL;
    }
    /* entries < capacity <= slots, so this walk ends at a free slot. */
    b = h & s->bucket_mask;
    for (;;) {
        flow_bucket_t *bk = &s->buckets[b];
        count_line_read(ops);
        if (bk->used != BUCKET_FULL) {
            unsigned i = 0;
            while ((bk->used >> i) & 1u)
                i++;
            bk->used |= 1u << i;
            bk->sig[i] = h;
            slot = b * BUCKET_SLOTS + i;
            break;
        }
        bk->overflow++;
        if (ops)
            ops->table_writes++;
        b = (b + 1u) & s->bucket_mask;
    }
    e = &s->entries[slot];
    e->key = *key;
    e->value = value;
    e->last_seen = now;
    s->stats.entries++;
    s->stats.inserts++;
    if (ops) {
        ops->table_writes += 2; /* bucket header and entry */
        ops->cache_lines++;
    }
    return 0;
}

int dp_flow_lookup(dp_flow_table_t *t, const dp_flow_key_t *key, uint64_t now, uint64_t *value,
                   dp_ops_t *ops)
{
    uint32_t h, slot;
    flow_shard_t *s;

    if (!t || !key)
        return DP_FLOW_EINVAL;
    slot = locate(t, key, &h, &s, ops);
    if (slot == NOT_FOUND)
        return DP_FLOW_ENOENT;
    s->entries[slot].last_seen = now;
    if (value)
        *value = s->entries[slot].value;
    return 0;
}

int dp_flow_delete(dp_flow_table_t *t, const dp_flow_key_t *key, dp_ops_t *ops)
{
    uint32_t h, slot;
    flow_shard_t *s;

    if (!t || !key)
        return DP_FLOW_EINVAL;
    slot = locate(t, key, &h, &s, ops);
    if (slot == NOT_FOUND)
        return DP_FLOW_ENOENT;
    remove_at(s, slot, ops);
    s->stats.deletes++;
    return 0;
}

uint32_t dp_flow_expire(dp_flow_table_t *t, uint32_t shard, uint64_t now, uint64_t idle_timeout,
                        dp_ops_t *ops)
{
    flow_shard_t *s;
    uint32_t b, evicted = 0;

    if (!t || shard >= t->shards)
        return 0;
    s = shard_at(t, shard);
    for (b = 0; b <= s->bucket_mask; b++) {
        unsigned i;
        count_line_read(ops);
        for (i = 0; i < BUCKET_SLOTS; i++) {
            const flow_entry_t *e;
            if (!((s->buckets[b].used >> i) & 1u))
                continue;
            e = &s->entries[b * BUCKET_SLOTS + i];
            if (ops)
                ops->table_probes++;
            /* Written as a difference so now + timeout cannot wrap; an entry
             * seen "after" now (clock fed out of order) is not idle. */
            if (now >= e->last_seen && now - e->last_seen >= idle_timeout) {
                remove_at(s, b * BUCKET_SLOTS + i, ops);
                evicted++;
            }
        }
    }
    s->stats.expired += evicted;
    return evicted;
}

void dp_flow_get_shard_stats(const dp_flow_table_t *t, uint32_t shard, dp_flow_shard_stats_t *st)
{
    if (!t || shard >= t->shards) {
        memset(st, 0, sizeof(*st));
        return;
    }
    *st = shard_at(t, shard)->stats;
}
