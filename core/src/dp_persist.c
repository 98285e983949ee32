/* Persistence: a bounded stick table with expiry, and HAProxy's cookie
 * persistence decisions (see dp_persist.h for the semantics and sources). */
#include "dp_persist.h"

#include <string.h>

#include "dp_bytes.h"
#include "dp_murmur.h"

/* One entry: 56 bytes, so a set of 8 spans 7 cache lines; the cost model
 * counts ceil(ways examined * 56 / 64) lines (dp_persist.h). */
typedef struct entry {
    uint8_t key[DP_PERSIST_MAX_KEY]; /* key bytes (key_len used, rest zero) */
    int32_t server;                  /* server id; -1: free */
    uint32_t pad;                    /* zero */
    uint64_t expire_at;              /* ms; UINT64_MAX: never (expire_ms 0) */
    uint64_t last_use;               /* use_clock at the last store or hit: the smallest is the oldest */
} entry_t;

#define ENTRY_BYTES 56u
typedef char dp_persist_entry_size_check[(sizeof(entry_t) == ENTRY_BYTES) ? 1 : -1];

struct dp_persist {
    dp_persist_config_t cfg; /* as given */
    uint32_t sets;           /* power of two */
    uint32_t sweep_cursor;   /* next set dp_persist_expire examines */
    uint64_t use_clock;      /* counts stores and hits: orders entries by last use */
    dp_persist_stats_t st;   /* counters */
    entry_t e[];             /* sets * DP_PERSIST_WAYS */
};

static int cfg_ok(const dp_persist_config_t *cfg)
{
    return cfg && cfg->capacity >= 1 && cfg->capacity <= (1u << 28) && cfg->key_len >= 1 &&
           cfg->key_len <= DP_PERSIST_MAX_KEY &&
           (cfg->on_full == DP_PERSIST_FULL_PURGE || cfg->on_full == DP_PERSIST_FULL_REFUSE);
}

static uint32_t sets_for(uint32_t capacity)
{
    uint32_t need = (capacity + DP_PERSIST_WAYS - 1) / DP_PERSIST_WAYS, s = 1;
    while (s < need)
        s <<= 1;
    return s;
}

size_t dp_persist_memory_size(const dp_persist_config_t *cfg)
{
    if (!cfg_ok(cfg))
        return 0;
    return sizeof(dp_persist_t) + (size_t)sets_for(cfg->capacity) * DP_PERSIST_WAYS * sizeof(entry_t);
}

dp_persist_t *dp_persist_create(void *mem, size_t mem_size, const dp_persist_config_t *cfg)
{
    dp_persist_t *t = (dp_persist_t *)mem;
    size_t need = dp_persist_memory_size(cfg), i, n;
    if (!mem || need == 0 || mem_size < need)
        return NULL;
    memset(mem, 0, need);
    t->cfg = *cfg;
    t->sets = sets_for(cfg->capacity);
    n = (size_t)t->sets * DP_PERSIST_WAYS;
    for (i = 0; i < n; i++)
        t->e[i].server = -1;
    t->st.capacity = (uint32_t)n;
    return t;
}

void dp_persist_get_stats(const dp_persist_t *t, dp_persist_stats_t *st)
{
    *st = t->st;
}

void dp_persist_key_ipv4(uint32_t addr, uint8_t key[4])
{
    wr32(key, addr);
}

/* MurmurHash3 x86_32-style mixing of the key read as big-endian 32-bit
 * words (zero-padded), so the set does not depend on byte order. dp_flow_hash
 * hashes a 5-tuple by field; a stick key is an opaque byte string. */
static uint32_t key_hash(const uint8_t *key, uint32_t len)
{
    uint32_t h = 0x9747b28cu, i;
    for (i = 0; i < len; i += 4) {
        uint8_t w[4] = {0, 0, 0, 0};
        uint32_t j;
        for (j = 0; j < 4 && i + j < len; j++)
            w[j] = key[i + j];
        h = dp_murmur_mix(h, rd32(w));
    }
    return dp_murmur_final(h, len);
}

static entry_t *set_of(dp_persist_t *t, const uint8_t *key, dp_ops_t *ops)
{
    uint32_t h = key_hash(key, t->cfg.key_len);
    if (ops)
        ops->hashes++;
    return &t->e[(size_t)(h & (t->sets - 1u)) * DP_PERSIST_WAYS];
}

static int expired(const entry_t *e, uint64_t now_ms)
{
    return e->server >= 0 && e->expire_at != UINT64_MAX && e->expire_at <= now_ms;
}

static uint64_t expiry(const dp_persist_t *t, uint64_t now_ms)
{
    if (t->cfg.expire_ms == 0)
        return UINT64_MAX;
    return now_ms + t->cfg.expire_ms;
}

static void free_entry(dp_persist_t *t, entry_t *e)
{
    memset(e->key, 0, sizeof e->key);
    e->server = -1;
    e->expire_at = 0;
    e->last_use = 0;
    t->st.entries--;
}

static void add_probe_costs(dp_ops_t *ops, uint32_t ways)
{
    if (ops) {
        ops->table_probes += ways;
        ops->cache_lines += (ways * ENTRY_BYTES + 63u) / 64u;
    }
}

/* Finds key in its set: the way, or -1; *examined = ways read. */
static int find_way(const dp_persist_t *t, const entry_t *set, const uint8_t *key, uint32_t *examined)
{
    uint32_t w;
    for (w = 0; w < DP_PERSIST_WAYS; w++) {
        if (set[w].server >= 0 && memcmp(set[w].key, key, t->cfg.key_len) == 0) {
            *examined = w + 1;
            return (int)w;
        }
    }
    *examined = DP_PERSIST_WAYS;
    return -1;
}

int32_t dp_persist_lookup(dp_persist_t *t, const uint8_t *key, uint64_t now_ms, dp_ops_t *ops)
{
    entry_t *set;
    uint32_t examined;
    int w;
    if (!t || !key)
        return DP_PERSIST_EINVAL;
    t->st.lookups++;
    set = set_of(t, key, ops);
    w = find_way(t, set, key, &examined);
    add_probe_costs(ops, examined);
    if (w < 0)
        return DP_PERSIST_ENOTFOUND;
    if (ops)
        ops->table_writes++;
    if (expired(&set[w], now_ms)) {
        free_entry(t, &set[w]);
        t->st.expired++;
        return DP_PERSIST_ENOTFOUND;
    }
    /* "matched using 'stick match' or 'stick on'": the lifetime restarts. */
    set[w].expire_at = expiry(t, now_ms);
    set[w].last_use = ++t->use_clock;
    t->st.hits++;
    return set[w].server;
}

/* "Oldest" is the least recently stored or matched entry of the set (with
 * a lifetime, also the one expiring first). */
int dp_persist_store(dp_persist_t *t, const uint8_t *key, int32_t server, uint64_t now_ms, dp_ops_t *ops)
{
    entry_t *set, *slot = NULL, *oldest = NULL;
    uint32_t w, examined;
    int found;
    if (!t || !key || server < 0)
        return DP_PERSIST_EINVAL;
    set = set_of(t, key, ops);
    add_probe_costs(ops, DP_PERSIST_WAYS);
    found = find_way(t, set, key, &examined);
    if (found >= 0) {
        entry_t *e = &set[found];
        int was_expired = expired(e, now_ms);
        if (was_expired) { /* a new lifetime for the key: counted as expiry + store */
            t->st.expired++;
            t->st.stores++;
        } else {
            t->st.updates++;
        }
        e->server = server;
        e->expire_at = expiry(t, now_ms);
        e->last_use = ++t->use_clock;
        if (ops)
            ops->table_writes++;
        return was_expired ? 0 : 1;
    }
    for (w = 0; w < DP_PERSIST_WAYS; w++) {
        entry_t *e = &set[w];
        if (e->server < 0 || expired(e, now_ms)) {
            slot = e;
            break;
        }
        if (!oldest || e->last_use < oldest->last_use)
            oldest = e;
    }
    if (slot) {
        if (slot->server >= 0) { /* an expired entry: free it, then reuse */
            free_entry(t, slot);
            t->st.expired++;
        }
    } else if (t->cfg.on_full == DP_PERSIST_FULL_REFUSE) {
        t->st.refused_full++;
        return DP_PERSIST_EFULL;
    } else {
        slot = oldest;
        free_entry(t, slot);
        t->st.purged++;
    }
    memcpy(slot->key, key, t->cfg.key_len);
    slot->server = server;
    slot->expire_at = expiry(t, now_ms);
    slot->last_use = ++t->use_clock;
    t->st.entries++;
    t->st.stores++;
    if (ops)
        ops->table_writes++;
    return 0;
}

int dp_persist_remove(dp_persist_t *t, const uint8_t *key, dp_ops_t *ops)
{
    entry_t *set;
    uint32_t examined;
    int w;
    if (!t || !key)
        return DP_PERSIST_EINVAL;
    set = set_of(t, key, ops);
    w = find_way(t, set, key, &examined);
    add_probe_costs(ops, examined);
    if (w < 0)
        return DP_PERSIST_ENOTFOUND;
    free_entry(t, &set[w]);
    t->st.removed++;
    if (ops)
        ops->table_writes++;
    return 0;
}

uint32_t dp_persist_forget_server(dp_persist_t *t, int32_t server, dp_ops_t *ops)
{
    size_t i, n;
    uint32_t count = 0;
    if (!t)
        return 0;
    n = (size_t)t->sets * DP_PERSIST_WAYS;
    for (i = 0; i < n; i++) {
        if (t->e[i].server >= 0 && t->e[i].server == server) {
            free_entry(t, &t->e[i]);
            count++;
        }
    }
    t->st.removed += count;
    if (ops) {
        ops->table_probes += n;
        ops->table_writes += count;
    }
    return count;
}

uint32_t dp_persist_expire(dp_persist_t *t, uint64_t now_ms, uint32_t max_sets, dp_ops_t *ops)
{
    uint32_t s, w, freed = 0, examined = 0;
    if (!t)
        return 0;
    if (max_sets > t->sets)
        max_sets = t->sets;
    for (s = 0; s < max_sets; s++) {
        entry_t *set = &t->e[(size_t)t->sweep_cursor * DP_PERSIST_WAYS];
        for (w = 0; w < DP_PERSIST_WAYS; w++) {
            examined++;
            if (expired(&set[w], now_ms)) {
                free_entry(t, &set[w]);
                freed++;
            }
        }
        t->sweep_cursor = (t->sweep_cursor + 1u) & (t->sets - 1u);
    }
    t->st.expired += freed;
    if (ops) {
        ops->table_probes += examined;
        ops->table_writes += freed;
    }
    return freed;
}

/* ---- cookie persistence decisions --------------------------------------- */

int dp_persist_cookie_check(const dp_persist_cookie_config_t *cfg)
{
    uint32_t f;
    if (!cfg || cfg->mode >= DP_PERSIST_COOKIE__MODES)
        return DP_PERSIST_EINVAL;
    f = cfg->flags;
    if (f & ~(DP_PERSIST_COOKIE_INDIRECT | DP_PERSIST_COOKIE_NOCACHE | DP_PERSIST_COOKIE_PRESERVE |
              DP_PERSIST_COOKIE_PERSIST))
        return DP_PERSIST_EINVAL;
    /* cookie-options.txt: "* * * 1 1 [forbidden]" (rewrite + indirect) and
     * "1 * 0 * 0 [forbidden]" (preserve needs insert or indirect). */
    if (cfg->mode == DP_PERSIST_COOKIE_REWRITE && (f & DP_PERSIST_COOKIE_INDIRECT))
        return DP_PERSIST_EINVAL;
    if ((f & DP_PERSIST_COOKIE_PRESERVE) && cfg->mode != DP_PERSIST_COOKIE_INSERT &&
        !(f & DP_PERSIST_COOKIE_INDIRECT))
        return DP_PERSIST_EINVAL;
    return 0;
}

int dp_persist_cookie_request(const dp_persist_cookie_config_t *cfg, int32_t cookie_server, int server_usable,
                              dp_persist_cookie_request_t *out, dp_ops_t *ops)
{
    if (dp_persist_cookie_check(cfg) != 0 || !out)
        return DP_PERSIST_EINVAL;
    memset(out, 0, sizeof *out);
    out->server = -1;
    out->cookie_server = cookie_server < 0 ? -1 : cookie_server;
    if (ops)
        ops->rules_evaluated++;
    if (cookie_server >= 0 && (server_usable || (cfg->flags & DP_PERSIST_COOKIE_PERSIST))) {
        out->actions = DP_PERSIST_REQ_USE_COOKIE_SERVER;
        out->server = cookie_server;
        out->direct = 1;
    } else {
        out->actions = DP_PERSIST_REQ_BALANCE;
    }
    if (cookie_server >= 0) {
        if (cfg->mode == DP_PERSIST_COOKIE_PREFIX)
            out->actions |= DP_PERSIST_REQ_STRIP_PREFIX;
        else if (cfg->mode == DP_PERSIST_COOKIE_INSERT && (cfg->flags & DP_PERSIST_COOKIE_INDIRECT))
            out->actions |= DP_PERSIST_REQ_STRIP_COOKIE;
    }
    return 0;
}

int dp_persist_cookie_response(const dp_persist_cookie_config_t *cfg, const dp_persist_cookie_request_t *req,
                               int32_t served_by, int server_set_cookie, int cacheable, dp_ops_t *ops)
{
    int actions = 0;
    int direct;
    if (dp_persist_cookie_check(cfg) != 0 || !req || served_by < 0)
        return DP_PERSIST_EINVAL;
    if (ops)
        ops->rules_evaluated++;
    /* A redispatched request lost its direct flag: its cookie names another
     * server than the one that answered. */
    direct = req->direct && req->server == served_by;
    switch (cfg->mode) {
    case DP_PERSIST_COOKIE_INSERT:
        if (server_set_cookie && (cfg->flags & DP_PERSIST_COOKIE_PRESERVE))
            break; /* "HAProxy will leave it untouched" */
        if (server_set_cookie)
            actions |= DP_PERSIST_RESP_REMOVE_SERVER;
        if (!direct) {
            actions |= DP_PERSIST_RESP_INSERT;
            if ((cfg->flags & DP_PERSIST_COOKIE_NOCACHE) && cacheable)
                actions |= DP_PERSIST_RESP_NOCACHE;
        }
        break;
    case DP_PERSIST_COOKIE_REWRITE:
        if (server_set_cookie)
            actions |= DP_PERSIST_RESP_REWRITE;
        break;
    case DP_PERSIST_COOKIE_PREFIX:
    case DP_PERSIST_COOKIE_PASSIVE:
        if (!server_set_cookie)
            break;
        if ((cfg->flags & DP_PERSIST_COOKIE_INDIRECT) && direct)
            actions |= DP_PERSIST_RESP_REMOVE_SERVER; /* "remove response if not needed" */
        else if (cfg->mode == DP_PERSIST_COOKIE_PREFIX)
            actions |= DP_PERSIST_RESP_PREFIX;
        break;
    default:
        return DP_PERSIST_EINVAL;
    }
    return actions;
}
