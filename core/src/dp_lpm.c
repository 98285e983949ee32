#include "dp_lpm.h"

#include <string.h>

/* Table entry (tbl24 and tbl8), 32 bits:
 *   bit 31     valid: a route covers this address range
 *   bit 30     ext (tbl24 only): bits 0..23 are a tbl8 group index
 *   bits 24-29 depth of the rule that wrote the entry (0..32)
 *   bits 0-23  next hop
 * Keeping the depth in the entry lets add overwrite only less specific
 * entries, and lets delete find exactly the entries its rule wrote: inside a
 * rule's range, an entry of the same depth can only come from that rule. */
#define E_VALID 0x80000000u
#define E_EXT 0x40000000u
#define E_DEPTH_SHIFT 24
#define E_DEPTH_MASK 0x3Fu
#define E_NH_MASK 0xFFFFFFu

#define TBL24_ENTRIES (1u << 24)
#define TBL8_GROUP_ENTRIES 256u
#define MAX_TBL8_GROUPS (1u << 24)
#define MAX_RULES (1u << 28)
#define NOT_FOUND 0xFFFFFFFFu

/* Rule store slot: open addressing with linear probing, keyed by
 * (prefix, depth). meta uses the entry encoding (E_VALID marks a used slot),
 * so a rule's meta is also the table entry it writes. */
typedef struct rule_slot {
    uint32_t prefix;
    uint32_t meta;
} rule_slot_t;

struct dp_lpm {
    uint32_t *tbl24;       /* TBL24_ENTRIES entries, indexed by ip >> 8 */
    uint32_t *tbl8;        /* tbl8_groups * 256 entries */
    rule_slot_t *rules;    /* rule_slots slots */
    uint32_t *free_groups; /* stack of free tbl8 group indexes */
    uint32_t rule_mask;    /* rule_slots - 1 (power of two) */
    unsigned rule_shift;   /* 64 - log2(rule_slots), for multiplicative hashing */
    uint32_t rules_used;
    uint32_t max_rules;
    uint32_t tbl8_groups;
    uint32_t free_top;     /* free groups on the stack */
    size_t memory_bytes;
};

static size_t align64(size_t n)
{
    return (n + 63u) & ~(size_t)63u;
}

static uint32_t depth_mask(unsigned depth)
{
    return depth == 0 ? 0 : 0xFFFFFFFFu << (32 - depth);
}

static unsigned entry_depth(uint32_t e)
{
    return (e >> E_DEPTH_SHIFT) & E_DEPTH_MASK;
}

/* Slots: at least 1.5x the rules so linear probes stay short (load <= 2/3). */
static uint32_t rule_slots_for(uint32_t max_rules, unsigned *log2_out)
{
    uint32_t want = max_rules + max_rules / 2u + 1u;
    uint32_t slots = 2;
    unsigned lg = 1;
    while (slots < want) {
        slots <<= 1;
        lg++;
    }
    *log2_out = lg;
    return slots;
}

static int config_ok(const dp_lpm_config_t *cfg)
{
    return cfg && cfg->max_rules >= 1 && cfg->max_rules <= MAX_RULES &&
           cfg->tbl8_groups <= MAX_TBL8_GROUPS;
}

size_t dp_lpm_memory_size(const dp_lpm_config_t *cfg)
{
    unsigned lg;
    uint32_t slots;
    if (!config_ok(cfg))
        return 0;
    slots = rule_slots_for(cfg->max_rules, &lg);
    /* 63 bytes of slack let create align the caller's block. */
    return 63u + align64(sizeof(struct dp_lpm)) + align64((size_t)TBL24_ENTRIES * 4u) +
           align64((size_t)cfg->tbl8_groups * TBL8_GROUP_ENTRIES * 4u) +
           align64((size_t)slots * sizeof(rule_slot_t)) + align64((size_t)cfg->tbl8_groups * 4u);
}

dp_lpm_t *dp_lpm_create(void *mem, size_t mem_size, const dp_lpm_config_t *cfg)
{
    size_t need = dp_lpm_memory_size(cfg);
    unsigned lg;
    uint32_t slots, g;
    uint8_t *p;
    dp_lpm_t *lpm;

    if (!mem || need == 0 || mem_size < need)
        return NULL;
    slots = rule_slots_for(cfg->max_rules, &lg);
    p = (uint8_t *)mem + ((64u - ((uintptr_t)mem & 63u)) & 63u);
    lpm = (dp_lpm_t *)(void *)p;
    p += align64(sizeof(struct dp_lpm));
    lpm->tbl24 = (uint32_t *)(void *)p;
    p += align64((size_t)TBL24_ENTRIES * 4u);
    lpm->tbl8 = (uint32_t *)(void *)p;
    p += align64((size_t)cfg->tbl8_groups * TBL8_GROUP_ENTRIES * 4u);
    lpm->rules = (rule_slot_t *)(void *)p;
    p += align64((size_t)slots * sizeof(rule_slot_t));
    lpm->free_groups = (uint32_t *)(void *)p;

    memset(lpm->tbl24, 0, (size_t)TBL24_ENTRIES * 4u);
    memset(lpm->rules, 0, (size_t)slots * sizeof(rule_slot_t));
    /* tbl8 groups are filled when allocated, so they need no clearing.
     * Stack order makes group 0 the first handed out: runs are reproducible. */
    for (g = 0; g < cfg->tbl8_groups; g++)
        lpm->free_groups[g] = cfg->tbl8_groups - 1u - g;
    lpm->free_top = cfg->tbl8_groups;
    lpm->rule_mask = slots - 1u;
    lpm->rule_shift = 64u - lg;
    lpm->rules_used = 0;
    lpm->max_rules = cfg->max_rules;
    lpm->tbl8_groups = cfg->tbl8_groups;
    lpm->memory_bytes = need;
    return lpm;
}

static uint32_t rule_home(const dp_lpm_t *lpm, uint32_t prefix, unsigned depth)
{
    uint64_t key = ((uint64_t)prefix << 6) | depth;
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> lpm->rule_shift);
}

static uint32_t rule_find(const dp_lpm_t *lpm, uint32_t prefix, unsigned depth, dp_ops_t *ops)
{
    uint32_t i = rule_home(lpm, prefix, depth);
    for (;;) {
        const rule_slot_t *s = &lpm->rules[i];
        if (ops)
            ops->table_probes++;
        if (!(s->meta & E_VALID))
            return NOT_FOUND;
        if (s->prefix == prefix && entry_depth(s->meta) == depth)
            return i;
        i = (i + 1u) & lpm->rule_mask;
    }
}

static void rule_insert(dp_lpm_t *lpm, uint32_t prefix, uint32_t meta)
{
    uint32_t i = rule_home(lpm, prefix, entry_depth(meta));
    while (lpm->rules[i].meta & E_VALID)
        i = (i + 1u) & lpm->rule_mask;
    lpm->rules[i].prefix = prefix;
    lpm->rules[i].meta = meta;
    lpm->rules_used++;
}

/* Backward-shift deletion keeps every probe chain unbroken without
 * tombstones, so lookups stay short after any number of deletes. */
static void rule_remove(dp_lpm_t *lpm, uint32_t i)
{
    uint32_t j = i;
    lpm->rules[i].meta = 0;
    for (;;) {
        uint32_t k;
        j = (j + 1u) & lpm->rule_mask;
        if (!(lpm->rules[j].meta & E_VALID))
            break;
        k = rule_home(lpm, lpm->rules[j].prefix, entry_depth(lpm->rules[j].meta));
        /* Slot j may move into the hole at i unless its home lies
         * cyclically in (i, j]. */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        lpm->rules[i] = lpm->rules[j];
        lpm->rules[j].meta = 0;
        i = j;
    }
    lpm->rules_used--;
}

/* Add and delete walk a rule's range the same way and differ only in which
 * entries they take over: an add writes its entry over those that hold
 * nothing or a rule no more specific than its depth; a delete writes the
 * fallback over exactly those of its own depth (inside its range only the
 * deleted rule can have written them). */
typedef enum { REWRITE_ADD, REWRITE_DELETE } rewrite_t;

static int rewrites(uint32_t e, unsigned depth, rewrite_t op)
{
    if (op == REWRITE_ADD)
        return !(e & E_VALID) || entry_depth(e) <= depth;
    return (e & E_VALID) && entry_depth(e) == depth;
}

/* Writes `with` over the slots of [first, first+count) of a tbl8 group that
 * op takes over; returns the writes. */
static uint64_t rewrite_tbl8(uint32_t *group, uint32_t first, uint32_t count, unsigned depth,
                             uint32_t with, rewrite_t op)
{
    uint64_t writes = 0;
    uint32_t j;
    for (j = first; j < first + count; j++) {
        if (rewrites(group[j], depth, op)) {
            group[j] = with;
            writes++;
        }
    }
    return writes;
}

/* The same over the tbl24 range of a rule of depth <= 24, descending into
 * the whole tbl8 group of each /24 in it that has split. */
static uint64_t rewrite_tbl24(dp_lpm_t *lpm, uint32_t prefix, unsigned depth, uint32_t with,
                              rewrite_t op)
{
    uint64_t writes = 0;
    uint32_t first = prefix >> 8, count = 1u << (24 - depth), i;
    for (i = first; i < first + count; i++) {
        uint32_t e = lpm->tbl24[i];
        if (e & E_EXT) {
            uint32_t *group = lpm->tbl8 + ((size_t)(e & E_NH_MASK) << 8);
            writes += rewrite_tbl8(group, 0, TBL8_GROUP_ENTRIES, depth, with, op);
        } else if (rewrites(e, depth, op)) {
            lpm->tbl24[i] = with;
            writes++;
        }
    }
    return writes;
}

int dp_lpm_add(dp_lpm_t *lpm, uint32_t prefix, uint8_t depth, uint32_t next_hop, dp_ops_t *ops)
{
    uint32_t slot, entry;
    uint64_t writes = 0;

    if (!lpm || depth > 32 || next_hop > DP_LPM_MAX_NEXT_HOP)
        return DP_LPM_EINVAL;
    prefix &= depth_mask(depth);
    entry = E_VALID | ((uint32_t)depth << E_DEPTH_SHIFT) | next_hop;
    slot = rule_find(lpm, prefix, depth, ops);
    if (slot == NOT_FOUND) {
        /* Check every resource before touching anything: a refused add
         * leaves the table exactly as it was. */
        if (lpm->rules_used >= lpm->max_rules)
            return DP_LPM_ENOSPC;
        if (depth > 24 && !(lpm->tbl24[prefix >> 8] & E_EXT) && lpm->free_top == 0)
            return DP_LPM_ENOSPC;
        rule_insert(lpm, prefix, entry);
    } else {
        lpm->rules[slot].meta = entry;
    }
    writes++;

    if (depth <= 24) {
        writes += rewrite_tbl24(lpm, prefix, depth, entry, REWRITE_ADD);
    } else {
        uint32_t idx = prefix >> 8, e = lpm->tbl24[idx];
        uint32_t *group;
        if (!(e & E_EXT)) {
            /* The /24 splits: the group starts as 256 copies of what the
             * /24 resolved to before (a shorter rule or nothing). */
            uint32_t g = lpm->free_groups[--lpm->free_top], j;
            group = lpm->tbl8 + ((size_t)g << 8);
            for (j = 0; j < TBL8_GROUP_ENTRIES; j++)
                group[j] = e;
            lpm->tbl24[idx] = E_EXT | g;
            writes += TBL8_GROUP_ENTRIES + 1u;
        } else {
            group = lpm->tbl8 + ((size_t)(e & E_NH_MASK) << 8);
        }
        writes += rewrite_tbl8(group, prefix & 0xFFu, 1u << (32 - depth), depth, entry,
                               REWRITE_ADD);
    }
    if (ops)
        ops->table_writes += writes;
    return 0;
}

/* A group whose entries all come from rules of depth <= 24 holds 256 equal
 * entries (the longest such rule covers the whole /24): fold it back into
 * tbl24 and free it, so groups in use = /24s holding a longer rule. */
static void try_collapse(dp_lpm_t *lpm, uint32_t idx, dp_ops_t *ops)
{
    uint32_t g = lpm->tbl24[idx] & E_NH_MASK, j;
    const uint32_t *group = lpm->tbl8 + ((size_t)g << 8);
    if (ops)
        ops->table_probes += TBL8_GROUP_ENTRIES;
    for (j = 0; j < TBL8_GROUP_ENTRIES; j++)
        if ((group[j] & E_VALID) && entry_depth(group[j]) > 24)
            return;
    lpm->tbl24[idx] = group[0];
    lpm->free_groups[lpm->free_top++] = g;
    if (ops)
        ops->table_writes++;
}

int dp_lpm_delete(dp_lpm_t *lpm, uint32_t prefix, uint8_t depth, dp_ops_t *ops)
{
    uint32_t slot, repl = 0;
    uint64_t writes = 1;
    int d;

    if (!lpm || depth > 32)
        return DP_LPM_EINVAL;
    prefix &= depth_mask(depth);
    slot = rule_find(lpm, prefix, depth, ops);
    if (slot == NOT_FOUND)
        return DP_LPM_ENOENT;
    rule_remove(lpm, slot);

    /* The range falls back to the longest remaining rule that covers it. */
    for (d = (int)depth - 1; d >= 0; d--) {
        uint32_t p = prefix & depth_mask((unsigned)d);
        uint32_t s = rule_find(lpm, p, (unsigned)d, ops);
        if (s != NOT_FOUND) {
            repl = lpm->rules[s].meta;
            break;
        }
    }

    if (depth <= 24) {
        writes += rewrite_tbl24(lpm, prefix, depth, repl, REWRITE_DELETE);
    } else {
        uint32_t idx = prefix >> 8;
        uint32_t *group = lpm->tbl8 + ((size_t)(lpm->tbl24[idx] & E_NH_MASK) << 8);
        writes += rewrite_tbl8(group, prefix & 0xFFu, 1u << (32 - depth), depth, repl,
                               REWRITE_DELETE);
        try_collapse(lpm, idx, ops);
    }
    if (ops)
        ops->table_writes += writes;
    return 0;
}

int dp_lpm_lookup(const dp_lpm_t *lpm, uint32_t ip, uint32_t *next_hop, dp_ops_t *ops)
{
    uint32_t e = lpm->tbl24[ip >> 8];
    unsigned probes = 1;
    if (e & E_EXT) {
        e = lpm->tbl8[((size_t)(e & E_NH_MASK) << 8) | (ip & 0xFFu)];
        probes = 2;
    }
    if (ops) {
        ops->table_probes += probes;
        ops->cache_lines += probes;
    }
    if (!(e & E_VALID))
        return DP_LPM_ENOENT;
    *next_hop = e & E_NH_MASK;
    return 0;
}

void dp_lpm_lookup_bulk(const dp_lpm_t *lpm, const uint32_t *ips, uint32_t *next_hops, unsigned n,
                        dp_ops_t *ops)
{
    unsigned i, second = 0;
    /* First pass issues all tbl24 loads independently of each other, so
     * their cache misses overlap instead of serializing per address. */
    for (i = 0; i < n; i++)
        next_hops[i] = lpm->tbl24[ips[i] >> 8];
    for (i = 0; i < n; i++) {
        uint32_t e = next_hops[i];
        if (e & E_EXT) {
            e = lpm->tbl8[((size_t)(e & E_NH_MASK) << 8) | (ips[i] & 0xFFu)];
            second++;
        }
        next_hops[i] = (e & E_VALID) ? (e & E_NH_MASK) : DP_LPM_MISS;
    }
    if (ops) {
        ops->table_probes += (uint64_t)n + second;
        ops->cache_lines += (uint64_t)n + second;
    }
}

void dp_lpm_get_stats(const dp_lpm_t *lpm, dp_lpm_stats_t *stats)
{
    stats->rules = lpm->rules_used;
    stats->tbl8_groups_used = lpm->tbl8_groups - lpm->free_top;
    stats->memory_bytes = lpm->memory_bytes;
}
