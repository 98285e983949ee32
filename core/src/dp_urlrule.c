#include "dp_urlrule.h"

#include <string.h>

struct dp_urlrule_table {
    uint32_t max_rules;    /* capacity */
    uint32_t count;        /* rules held */
    uint32_t max_pattern;  /* pattern store size */
    uint32_t pattern_used; /* pattern bytes stored */
    uint32_t next_seq;     /* order-added counter */
    uint8_t order;         /* dp_urlrule_order_t */
    uint8_t pad[3];        /* zero */
    dp_urlrule_t *rules;   /* max_rules, in evaluation order */
    uint8_t *patterns;     /* max_pattern bytes */
};

static size_t round8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

size_t dp_urlrule_memory_size(const dp_urlrule_config_t *cfg)
{
    if (!cfg || cfg->max_rules == 0 || cfg->order > DP_URLRULE_PRECEDENCE)
        return 0;
    return round8(sizeof(dp_urlrule_table_t)) + round8((size_t)cfg->max_rules * sizeof(dp_urlrule_t)) +
           round8(cfg->max_pattern_bytes);
}

dp_urlrule_table_t *dp_urlrule_create(void *mem, size_t size, const dp_urlrule_config_t *cfg)
{
    size_t need = dp_urlrule_memory_size(cfg);
    dp_urlrule_table_t *t = (dp_urlrule_table_t *)mem;
    if (!mem || need == 0 || size < need || ((uintptr_t)mem & 7u))
        return NULL;
    memset(mem, 0, need);
    t->max_rules = cfg->max_rules;
    t->max_pattern = cfg->max_pattern_bytes;
    t->order = cfg->order;
    t->rules = (dp_urlrule_t *)((uint8_t *)mem + round8(sizeof *t));
    t->patterns = (uint8_t *)t->rules + round8((size_t)cfg->max_rules * sizeof(dp_urlrule_t));
    return t;
}

int dp_urlrule_add(dp_urlrule_table_t *t, dp_urlrule_kind_t kind, uint8_t flags, const char *pattern,
                   uint16_t precedence, uint32_t target, dp_ops_t *ops)
{
    size_t n;
    uint32_t stored, pos, i;
    dp_urlrule_t r;
    if (!t || !pattern || (unsigned)kind >= (unsigned)DP_URL__KINDS || (flags & ~DP_URL_ICASE))
        return DP_URLRULE_EINVAL;
    n = strlen(pattern);
    stored = (uint32_t)n + (kind == DP_URL_EXT ? 1u : 0u);
    if (n == 0 || stored > 255)
        return DP_URLRULE_EINVAL;
    if (t->count >= t->max_rules || t->max_pattern - t->pattern_used < stored)
        return DP_URLRULE_ENOSPC;
    memset(&r, 0, sizeof r);
    r.target = target;
    r.pat_off = t->pattern_used;
    r.precedence = precedence;
    r.pat_len = (uint8_t)stored;
    r.kind = (uint8_t)kind;
    r.flags = flags;
    r.seq = t->next_seq++;
    if (kind == DP_URL_EXT)
        t->patterns[t->pattern_used++] = '.';
    memcpy(t->patterns + t->pattern_used, pattern, n);
    t->pattern_used += (uint32_t)n;
    pos = t->count;
    if (t->order == DP_URLRULE_PRECEDENCE)
        while (pos > 0 && t->rules[pos - 1].precedence > precedence)
            pos--;
    for (i = t->count; i > pos; i--)
        t->rules[i] = t->rules[i - 1];
    t->rules[pos] = r;
    t->count++;
    if (ops) {
        ops->table_writes += 1 + (t->count - 1 - pos);
        ops->bytes_copied += stored;
    }
    return (int)pos;
}

uint32_t dp_urlrule_count(const dp_urlrule_table_t *t)
{
    return t ? t->count : 0;
}

const dp_urlrule_t *dp_urlrule_get(const dp_urlrule_table_t *t, uint32_t i)
{
    return (t && i < t->count) ? &t->rules[i] : NULL;
}

static uint8_t fold(uint8_t c, int icase)
{
    return (icase && c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

/* Compares m bytes left to right; *cmp += bytes compared, up to and
 * including the first mismatch. */
static int same(const uint8_t *a, const uint8_t *b, uint32_t m, int icase, uint64_t *cmp)
{
    uint32_t i;
    for (i = 0; i < m; i++) {
        (*cmp)++;
        if (fold(a[i], icase) != fold(b[i], icase))
            return 0;
    }
    return 1;
}

int dp_urlrule_eval(const dp_urlrule_table_t *t, uint32_t i, const dp_urlrule_req_t *r, dp_ops_t *ops)
{
    const dp_urlrule_t *rule;
    const uint8_t *pat, *s;
    uint32_t n, m, k;
    uint64_t cmp = 0;
    int icase, hit = 0;
    if (!t || !r || i >= t->count)
        return 0;
    rule = &t->rules[i];
    pat = t->patterns + rule->pat_off;
    m = rule->pat_len;
    icase = rule->flags & DP_URL_ICASE;
    s = rule->kind == DP_URL_HOST ? r->host : r->path;
    n = rule->kind == DP_URL_HOST ? r->host_len : r->path_len;
    if (!s)
        n = 0;
    switch (rule->kind) {
    case DP_URL_PATH_BEG:
        hit = n >= m && same(s, pat, m, icase, &cmp);
        break;
    case DP_URL_PATH_END:
    case DP_URL_EXT:
        hit = n >= m && same(s + n - m, pat, m, icase, &cmp);
        break;
    case DP_URL_HOST:
        hit = n == m && same(s, pat, m, icase, &cmp);
        break;
    default: /* DP_URL_PATH_SUB */
        for (k = 0; !hit && n >= m && k <= n - m; k++)
            hit = same(s + k, pat, m, icase, &cmp);
        break;
    }
    if (ops) {
        ops->rules_evaluated++;
        ops->bytes_parsed += cmp;
    }
    return hit;
}

int dp_urlrule_match(const dp_urlrule_table_t *t, const dp_urlrule_req_t *r, uint32_t *target, dp_ops_t *ops)
{
    uint32_t i;
    if (!t || !r)
        return DP_URLRULE_EINVAL;
    for (i = 0; i < t->count; i++) {
        if (dp_urlrule_eval(t, i, r, ops)) {
            if (target)
                *target = t->rules[i].target;
            return (int)i;
        }
    }
    return DP_URLRULE_ENOMATCH;
}

int dp_urlrule_match_all(const dp_urlrule_table_t *t, const dp_urlrule_req_t *r, uint32_t *out, uint32_t cap,
                         dp_ops_t *ops)
{
    uint32_t i, hits = 0;
    if (!t || !r || (!out && cap))
        return DP_URLRULE_EINVAL;
    for (i = 0; i < t->count; i++) {
        if (dp_urlrule_eval(t, i, r, ops)) {
            if (hits < cap)
                out[hits] = i;
            hits++;
        }
    }
    return (int)hits;
}

const char *dp_urlrule_kind_name(dp_urlrule_kind_t k)
{
    static const char *const names[DP_URL__KINDS] = {"path_beg", "path_sub", "path_end", "ext", "hdr_host"};
    return (unsigned)k < (unsigned)DP_URL__KINDS ? names[k] : "unknown";
}
