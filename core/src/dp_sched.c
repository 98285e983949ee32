#include "dp_sched.h"

#include <string.h>

#include "dp_flow.h"

/* Load-balancer schedulers, each following the real system's code (read,
 * not copied; see dp_sched.h for the table of algorithms):
 *
 *  - IPVS (Linux net/netfilter/ipvs): ip_vs_rr.c, ip_vs_wrr.c, ip_vs_lc.c,
 *    ip_vs_wlc.c, ip_vs_sh.c, ip_vs_mh.c; connection overhead and OVERLOAD
 *    hysteresis from include/net/ip_vs.h (ip_vs_dest_conn_overhead) and
 *    ip_vs_conn.c (ip_vs_bind_dest / ip_vs_unbind_dest); destination list
 *    order from ip_vs_ctl.c (__ip_vs_update_dest adds at the list head).
 *  - HAProxy (haproxy/haproxy, read at v3.5-dev5 50872daa6, leastconn at
 *    v3.0.0): src/lb_fwrr.c, src/lb_map.c, src/lb_fwlc.c, src/lb_fas.c,
 *    src/lb_chash.c, src/backend.c (recount_servers, update_backend_weight,
 *    get_server_sh, get_server_rnd), src/server.c (server_recalc_eweight:
 *    slow start), src/queue.c (srv_dynamic_maxconn), include/haproxy/intops.h
 *    (full_hash), doc/configuration.txt (slowstart, balance, hash-type).
 *  - Maglev: Eisenbud et al., "Maglev: A Fast and Reliable Software Network
 *    Load Balancer", NSDI 2016, section 3.4 and Pseudocode 1.
 *
 * HAProxy keeps its servers in ebtrees. The twin keeps the same ordering
 * information in each server (tree, key, insertion sequence) and finds a
 * tree's first node by a linear scan: an ebtree walks equal keys in
 * insertion order (include/import/ebtree.h), so (key, sequence) order is
 * the tree's order. The picks are HAProxy's; only the search cost differs
 * (the ops count the servers HAProxy takes out of its trees, not the scan).
 *
 * The whole scheduler lives in one caller block and refers to its arrays by
 * offset, never by pointer, so it can be copied byte for byte (clone). */

#define NONE16 0xFFFFu
#define RING_NO_LAST 0xFFFFFFFFu
#define NO_SRV (-1)

/* HAProxy constants (include/haproxy/backend-t.h, server-t.h). */
#define BE_WEIGHT_SCALE 16
#define SRV_UWGHT_RANGE 256
#define SRV_EWGHT_MAX (256 * BE_WEIGHT_SCALE)
#define SRV_EWGHT_RANGE SRV_EWGHT_MAX

/* fwrr trees: which physical tree a server's node belongs to. HAProxy
 * swaps its "init" and "next" pointers between t0 and t1. */
#define T_NONE 0u
#define T_CURR 1u
#define T_T0 2u
#define T_T1 3u

#define SH_MAX_BITS 20u
/* Golden-ratio multiplier of Linux hash_32 (include/linux/hash.h). */
#define GOLDEN_RATIO_32 0x61C88647u

typedef struct srv {
    uint64_t hash_key;      /* dp_sched_server_t.hash_key */
    uint64_t last_change_s; /* second of the last state change (HAProxy last_change) */
    uint64_t tseq;          /* fwrr: insertion sequence in its tree (ebtree duplicate order) */
    uint64_t lcseq;         /* leastconn: insertion sequence in the tree (order among equal keys) */
    uint32_t weight;        /* user weight */
    uint32_t maxconn;       /* configured maxconn / IPVS u_threshold */
    uint32_t slowstart_s;   /* HAProxy slowstart in seconds, rounded up as srv_parse_slowstart */
    uint32_t flags;         /* DP_SCHED_SRV_* */
    uint32_t active;        /* active connections (HAProxy served) */
    uint32_t inactive;      /* IPVS inactive connections */
    uint32_t eweight;       /* effective weight now (HAProxy next_eweight; IPVS weight) */
    uint32_t lb_eweight;    /* effective weight the LB structures hold (HAProxy cur_eweight) */
    uint32_t maxconn_now;   /* srv_dynamic_maxconn: maxconn ramped during slow start */
    uint32_t last_weight;   /* IPVS last non-zero weight (ip_vs_mh.c turns) */
    int32_t npos;           /* fwrr next position */
    int32_t lpos;           /* fwrr last position */
    int32_t rweight;        /* fwrr remainder of weight */
    uint32_t tkey;          /* fwrr tree key */
    int32_t wscore;         /* map recalculation score (lb_map.c recalc_server_map) */
    uint32_t mh_offset;     /* maglev permutation offset */
    uint32_t mh_skip;       /* maglev permutation skip */
    uint32_t mh_perm;       /* maglev next preferred slot */
    uint32_t mh_turns;      /* maglev entries claimed per round */
    uint32_t table_entries; /* lookup-table entries or ring nodes owned */
    uint8_t present;        /* id in use */
    uint8_t state;          /* dp_sched_state_t */
    uint8_t overload;       /* IPVS IP_VS_DEST_F_OVERLOAD */
    uint8_t warming;        /* HAProxy SRV_ST_STARTING */
    uint8_t lb_usable;      /* usable as the LB structures know it (srv_currently_usable) */
    uint8_t lb_tree;        /* fwrr: T_* its lb_tree points to */
    uint8_t in_tree;        /* fwrr: its node is linked in lb_tree */
    uint8_t in_list;        /* IPVS: in the destination list */
} srv_t;

/* Everything is compared and hashed by field, but the block is copied as
 * bytes: keep the arrays 8-byte multiples so offsets stay aligned. */
typedef char srv_layout_check[(sizeof(srv_t) % 8 == 0) ? 1 : -1];

typedef struct ring_node {
    uint32_t key; /* full_hash(server key + j) */
    uint16_t id;  /* server */
    uint16_t j;   /* node index within the server */
} ring_node_t;
typedef char ring_layout_check[(sizeof(ring_node_t) == 8) ? 1 : -1];

typedef struct fwrr_group {
    int32_t curr_pos;    /* current position in the window */
    int32_t curr_weight; /* total weight of the current window */
    uint32_t init_tree;  /* T_T0 or T_T1 */
    uint32_t next_tree;  /* the other one */
} fwrr_group_t;

struct dp_sched {
    dp_sched_config_t cfg;  /* as created, table_size resolved */
    uint64_t bytes;         /* bytes from this struct to the end of its arrays */
    uint64_t seq;           /* tree insertion counter (fwrr, leastconn) */
    uint64_t prng;          /* random: xorshift64* state */
    uint32_t off_srv;       /* offset of srv_t[max_servers] */
    uint32_t off_order;     /* offset of uint16_t order[max_servers] (IPVS destination list) */
    uint32_t off_table;     /* offset of uint16_t table[table_cap] */
    uint32_t off_bits;      /* offset of the maglev populate bitmap (uint8_t[(M + 7) / 8]) */
    uint32_t off_ring;      /* offset of ring_node_t ring[ring_cap] */
    uint32_t table_cap;     /* table entries allocated */
    uint32_t ring_cap;      /* ring nodes allocated */
    uint32_t table_used;    /* table entries in use (map: tot_weight; sh, maglev: size) */
    uint32_t ring_used;     /* ring nodes in use */
    uint32_t n_list;        /* IPVS destinations in order[] */
    uint32_t built;         /* tables and trees built (first pick or dp_sched_build) */
    uint32_t nwarming;      /* servers in slow start */
    int32_t cursor;         /* IPVS rr: list index of the last pick; wrr: mark->cl; -1 = head */
    int32_t wrr_cw;         /* IPVS wrr current weight */
    int32_t wrr_mw;         /* IPVS wrr max weight - (di - 1) */
    int32_t wrr_di;         /* IPVS wrr gcd of weights */
    uint32_t srv_act;       /* HAProxy usable active servers */
    uint32_t srv_bck;       /* HAProxy usable backup servers */
    int32_t fbck;           /* HAProxy first usable backup (when not allbackups), -1 none */
    uint32_t tot_wact;      /* HAProxy sum of usable active eweights */
    uint32_t tot_wbck;      /* HAProxy sum of usable backup eweights */
    uint32_t tot_weight;    /* HAProxy weight of the group in use */
    uint32_t tot_used;      /* HAProxy servers of the group in use */
    uint32_t wmult;         /* HAProxy map algorithms: gcd of user weights */
    int32_t rr_idx;         /* static-rr map index */
    int32_t next_weight[2]; /* fwrr next_weight_act / next_weight_bck */
    fwrr_group_t grp[2];    /* fwrr active and backup groups */
    uint32_t mh_gcd;        /* maglev gcd of last weights */
    uint32_t chash_last;    /* lb_chash.c chash.last (round-robin fallback of uri/hdr-consistent):
                               id << 16 | node index; RING_NO_LAST when NULL */
    uint32_t chash_last_key; /* the key of that node, to find it again after a ring rebuild */
    uint32_t chash_last_pos; /* its index in ring[] now (valid when chash_last is set) */
};
typedef char sched_layout_check[(sizeof(struct dp_sched) % 8 == 0) ? 1 : -1];

static const char *const algo_names[DP_SCHED__COUNT] = {
    "rr",         "wrr",       "lc",        "wlc",   "sh",     "maglev",           "roundrobin",
    "static-rr", "leastconn", "first",     "source", "source-consistent", "random",
    "uri",       "uri-consistent", "hdr", "hdr-consistent",
};

static const char *const state_names[DP_SCHED__STATES] = {"up", "down", "draining", "disabled"};

const char *dp_sched_algo_name(dp_sched_algo_t algo)
{
    return (unsigned)algo < (unsigned)DP_SCHED__COUNT ? algo_names[algo] : "unknown";
}

int dp_sched_algo_from_name(const char *name)
{
    unsigned i;
    if (!name)
        return DP_SCHED_EINVAL;
    for (i = 0; i < (unsigned)DP_SCHED__COUNT; i++)
        if (strcmp(name, algo_names[i]) == 0)
            return (int)i;
    return DP_SCHED_EINVAL;
}

const char *dp_sched_state_name(dp_sched_state_t state)
{
    return (unsigned)state < (unsigned)DP_SCHED__STATES ? state_names[state] : "unknown";
}

uint64_t dp_sched_name_key(const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= (uint8_t)name[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- small helpers ---------------------------------------------------- */

static size_t align8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

static srv_t *SRV(dp_sched_t *s)
{
    return (srv_t *)(void *)((uint8_t *)s + s->off_srv);
}
static const srv_t *CSRV(const dp_sched_t *s)
{
    return (const srv_t *)(const void *)((const uint8_t *)s + s->off_srv);
}
static uint16_t *ORDER(dp_sched_t *s)
{
    return (uint16_t *)(void *)((uint8_t *)s + s->off_order);
}
static uint16_t *TABLE(dp_sched_t *s)
{
    return (uint16_t *)(void *)((uint8_t *)s + s->off_table);
}
static const uint16_t *CTABLE(const dp_sched_t *s)
{
    return (const uint16_t *)(const void *)((const uint8_t *)s + s->off_table);
}
static uint8_t *BITS(dp_sched_t *s)
{
    return (uint8_t *)s + s->off_bits;
}
static ring_node_t *RING(dp_sched_t *s)
{
    return (ring_node_t *)(void *)((uint8_t *)s + s->off_ring);
}
static const ring_node_t *CRING(const dp_sched_t *s)
{
    return (const ring_node_t *)(const void *)((const uint8_t *)s + s->off_ring);
}

#define COUNT(ops, field, n) \
    do { \
        if (ops) \
            (ops)->field += (uint64_t)(n); \
    } while (0)

static uint32_t gcd32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int is_ipvs(uint32_t algo)
{
    return algo <= DP_SCHED_MAGLEV;
}

static int is_map(uint32_t algo)
{
    return algo == DP_SCHED_STATIC_RR || algo == DP_SCHED_SOURCE || algo == DP_SCHED_URI || algo == DP_SCHED_HDR;
}

static int uses_ring(uint32_t algo)
{
    return algo == DP_SCHED_SOURCE_CONSISTENT || algo == DP_SCHED_RANDOM || algo == DP_SCHED_URI_CONSISTENT ||
           algo == DP_SCHED_HDR_CONSISTENT;
}

/* HAProxy hash-based algorithms on a string parameter (BE_LB_HASH_URI / _HDR). */
static int is_param_hash(uint32_t algo)
{
    return algo >= DP_SCHED_URI && algo <= DP_SCHED_HDR_CONSISTENT;
}

static int is_keyed(uint32_t algo)
{
    return algo == DP_SCHED_SH || algo == DP_SCHED_MAGLEV || algo == DP_SCHED_SOURCE ||
           algo == DP_SCHED_SOURCE_CONSISTENT || is_param_hash(algo);
}

static int is_prime(uint32_t n)
{
    uint32_t d;
    if (n < 2)
        return 0;
    for (d = 2; (uint64_t)d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

/* splitmix64's finalizer: the mixer behind the Maglev permutation hashes
 * (the paper leaves h1/h2 open; any two independent hashes will do). */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

#define MAGLEV_H1 0x6d61676c65763031ull /* "maglev01" */
#define MAGLEV_H2 0x6d61676c65763032ull /* "maglev02" */
#define MAGLEV_H3 0x6d61676c65763033ull /* "maglev03": lookup */

/* HAProxy full_hash (include/haproxy/intops.h): Bob Jenkins' 32-bit
 * avalanche, then a multiply by a prime near 3/4 of 2^32. */
static uint32_t full_hash(uint32_t a)
{
    a = (a + 0x7ed55d16u) + (a << 12);
    a = (a ^ 0xc761c23cu) ^ (a >> 19);
    a = (a + 0x165667b1u) + (a << 5);
    a = (a + 0xd3a2646cu) ^ (a << 9);
    a = (a + 0xfd7046c5u) + (a << 3);
    a = (a ^ 0xb55a4f09u) ^ (a >> 16);
    return a * 3221225473u;
}

/* Linux hash_32 (include/linux/hash.h, generic version). */
static uint32_t hash_32(uint32_t val, unsigned bits)
{
    return (uint32_t)(val * GOLDEN_RATIO_32) >> (32u - bits);
}

/* ---- configuration and memory ----------------------------------------- */

static uint32_t maglev_m(const dp_sched_config_t *cfg)
{
    uint32_t m;
    if (cfg->table_size)
        return cfg->table_size;
    if ((uint64_t)cfg->max_servers * 100u <= DP_SCHED_MAGLEV_DEFAULT_M)
        return DP_SCHED_MAGLEV_DEFAULT_M;
    m = cfg->max_servers * 100u;
    while (!is_prime(m))
        m++;
    return m;
}

/* Validates cfg and resolves its table size into *out. */
static int resolve_config(const dp_sched_config_t *cfg, dp_sched_config_t *out)
{
    if (!cfg || cfg->algo >= (uint32_t)DP_SCHED__COUNT || cfg->max_servers < 1 ||
        cfg->max_servers > DP_SCHED_MAX_SERVERS || cfg->hash_input > DP_SCHED_HASH_KEY ||
        cfg->hash_fn >= (uint32_t)DP_SCHED_HASHFN__COUNT)
        return 0;
    *out = *cfg;
    if (cfg->algo == DP_SCHED_MAGLEV) {
        out->table_size = maglev_m(cfg);
        if (!is_prime(out->table_size) || (uint64_t)out->table_size < (uint64_t)cfg->max_servers * 100u ||
            out->table_size > 0x7FFFFFFFu)
            return 0;
    } else if (cfg->algo == DP_SCHED_SH) {
        out->table_size = cfg->table_size ? cfg->table_size : DP_SCHED_SH_DEFAULT_BITS;
        if (out->table_size > SH_MAX_BITS)
            return 0;
    } else {
        out->table_size = 0;
    }
    if (cfg->algo == DP_SCHED_RANDOM && out->draws == 0)
        out->draws = 2;
    return 1;
}

static uint32_t table_cap_of(const dp_sched_config_t *c)
{
    if (c->algo == DP_SCHED_MAGLEV)
        return c->table_size;
    if (c->algo == DP_SCHED_SH)
        return 1u << c->table_size;
    if (is_map(c->algo))
        return c->max_servers * DP_SCHED_MAX_WEIGHT;
    return 0;
}

static uint32_t ring_cap_of(const dp_sched_config_t *c)
{
    return uses_ring(c->algo) ? c->max_servers * (uint32_t)SRV_EWGHT_MAX : 0;
}

/* Layout of the block from the struct on: struct, servers, order, table,
 * bitmap, ring; *offs receives the offsets. */
static size_t layout(const dp_sched_config_t *c, uint32_t offs[5])
{
    size_t p = align8(sizeof(struct dp_sched));
    uint32_t tcap = table_cap_of(c);
    offs[0] = (uint32_t)p;
    p += align8((size_t)c->max_servers * sizeof(srv_t));
    offs[1] = (uint32_t)p;
    p += align8((size_t)c->max_servers * sizeof(uint16_t));
    offs[2] = (uint32_t)p;
    p += align8((size_t)tcap * sizeof(uint16_t));
    offs[3] = (uint32_t)p;
    p += align8(c->algo == DP_SCHED_MAGLEV ? ((size_t)tcap + 7u) / 8u : 0);
    offs[4] = (uint32_t)p;
    p += (size_t)ring_cap_of(c) * sizeof(ring_node_t);
    return p;
}

size_t dp_sched_memory_size(const dp_sched_config_t *cfg)
{
    dp_sched_config_t c;
    uint32_t offs[5];
    if (!resolve_config(cfg, &c))
        return 0;
    /* 7 bytes of slack let create align the caller's block. */
    return layout(&c, offs) + 7u;
}

static dp_sched_t *aligned_in(void *mem)
{
    return (dp_sched_t *)(void *)((uint8_t *)mem + ((8u - ((uintptr_t)mem & 7u)) & 7u));
}

dp_sched_t *dp_sched_create(void *mem, size_t mem_size, const dp_sched_config_t *cfg)
{
    dp_sched_config_t c;
    uint32_t offs[5];
    size_t bytes;
    dp_sched_t *s;
    uint32_t i;

    if (!mem || !resolve_config(cfg, &c))
        return NULL;
    bytes = layout(&c, offs);
    if (mem_size < bytes + 7u)
        return NULL;
    s = aligned_in(mem);
    memset(s, 0, bytes);
    s->cfg = c;
    s->bytes = bytes;
    s->off_srv = offs[0];
    s->off_order = offs[1];
    s->off_table = offs[2];
    s->off_bits = offs[3];
    s->off_ring = offs[4];
    s->table_cap = table_cap_of(&c);
    s->ring_cap = ring_cap_of(&c);
    s->cursor = -1;
    s->fbck = NO_SRV;
    s->wmult = 1;
    s->rr_idx = 0;
    s->prng = c.seed ? c.seed : 0x9E3779B97F4A7C15ull;
    s->chash_last = RING_NO_LAST;
    s->grp[0].init_tree = s->grp[1].init_tree = T_T0;
    s->grp[0].next_tree = s->grp[1].next_tree = T_T1;
    for (i = 0; i < s->table_cap; i++)
        TABLE(s)[i] = NONE16;
    return s;
}

dp_sched_t *dp_sched_clone(void *mem, size_t mem_size, const dp_sched_t *src)
{
    dp_sched_t *d;
    if (!mem || !src || mem_size < src->bytes + 7u)
        return NULL;
    d = aligned_in(mem);
    memmove(d, src, (size_t)src->bytes);
    return d;
}

void dp_sched_get_config(const dp_sched_t *s, dp_sched_config_t *cfg)
{
    *cfg = s->cfg;
}

/* ---- effective weights, usability, maxconn (HAProxy server.c, queue.c) -- */

/* Seconds as HAProxy counts them (ns_to_sec of its clock). */
static uint64_t sec_of(uint64_t now_ms)
{
    return now_ms / 1000u;
}

/* Recomputes sv's eweight and maxconn_now for now_s (server_recalc_eweight
 * and srv_dynamic_maxconn). HAProxy dynamic algorithms work in eweight units
 * of uweight * 16 (wdiv = BE_WEIGHT_SCALE); during slow start the factor
 * grows from 1 to 16 as (16 * elapsed + slowstart) / slowstart, whole
 * seconds. Map algorithms (static-rr, source) use wdiv = 1 and
 * wmult = gcd of the weights (lb_map.c init_server_map), so no ramp. IPVS
 * uses the weight as is, 0 when quiesced (draining). */
static void recalc_eweight(dp_sched_t *s, srv_t *sv, uint64_t now_s)
{
    uint32_t algo = s->cfg.algo;
    uint32_t w;
    if (is_ipvs(algo)) {
        sv->eweight = sv->state == DP_SCHED_DRAINING ? 0 : sv->weight;
        sv->maxconn_now = sv->maxconn;
        return;
    }
    if (sv->warming &&
        (now_s < sv->last_change_s || now_s >= sv->last_change_s + sv->slowstart_s)) {
        sv->warming = 0;
        s->nwarming--;
    }
    if (is_map(algo)) {
        sv->eweight = (sv->weight + s->wmult - 1u) / s->wmult;
    } else {
        /* BE_LB_PROP_DYN algorithms: lb_fwrr, lb_fwlc, lb_fas, lb_chash. */
        w = BE_WEIGHT_SCALE;
        if (sv->warming)
            w = (uint32_t)(((uint64_t)BE_WEIGHT_SCALE * (now_s - sv->last_change_s) + sv->slowstart_s) /
                           sv->slowstart_s);
        sv->eweight = sv->weight * w;
    }
    sv->maxconn_now = sv->maxconn;
    if (sv->warming && sv->maxconn) {
        uint32_t ratio = (uint32_t)(100u * (now_s - sv->last_change_s) / sv->slowstart_s);
        uint32_t m = sv->maxconn * ratio / 100u;
        sv->maxconn_now = m > 1u ? m : 1u;
    }
}

/* HAProxy srv_willbe_usable: running (or starting), not in maintenance or
 * drain, eweight > 0. */
static int ha_usable(const srv_t *sv)
{
    return sv->present && sv->state == DP_SCHED_UP && sv->eweight > 0;
}

/* HAProxy "saturated" test of fwrr/map/fas: maxconn set and served >= the
 * dynamic maxconn (no queues in the twin). */
static int ha_full(const srv_t *sv)
{
    return sv->maxconn_now != 0 && sv->active >= sv->maxconn_now;
}

/* IPVS is_unavailable (ip_vs_sh.c, ip_vs_mh.c) and the rr/wrr/lc skip. */
static int ipvs_unavailable(const srv_t *sv)
{
    return sv->eweight == 0 || sv->overload;
}

static int grp_of(const srv_t *sv)
{
    return (sv->flags & DP_SCHED_SRV_BACKUP) ? 1 : 0;
}

/* backend.c recount_servers + update_backend_weight. */
static void recount(dp_sched_t *s)
{
    srv_t *sv = SRV(s);
    uint32_t i;
    s->srv_act = s->srv_bck = 0;
    s->tot_wact = s->tot_wbck = 0;
    s->fbck = NO_SRV;
    for (i = 0; i < s->cfg.max_servers; i++) {
        if (!ha_usable(&sv[i]))
            continue;
        if (sv[i].flags & DP_SCHED_SRV_BACKUP) {
            if (!s->srv_bck && !(s->cfg.flags & DP_SCHED_CFG_ALLBACKUPS))
                s->fbck = (int32_t)i;
            s->srv_bck++;
            s->tot_wbck += sv[i].eweight;
        } else {
            s->srv_act++;
            s->tot_wact += sv[i].eweight;
        }
    }
    if (s->srv_act) {
        s->tot_weight = s->tot_wact;
        s->tot_used = s->srv_act;
    } else if (s->fbck != NO_SRV) {
        s->tot_weight = sv[s->fbck].eweight;
        s->tot_used = 1;
    } else {
        s->tot_weight = s->tot_wbck;
        s->tot_used = s->srv_bck;
    }
}

/* ---- HAProxy roundrobin: lb_fwrr.c ------------------------------------ */

static void fwrr_insert(dp_sched_t *s, srv_t *sv, uint32_t tree, uint32_t key, dp_ops_t *ops)
{
    sv->tkey = key;
    sv->lb_tree = (uint8_t)tree;
    sv->in_tree = 1;
    sv->tseq = ++s->seq;
    COUNT(ops, table_writes, 1);
}

/* fwrr_queue_by_weight: heavy servers first. */
static void fwrr_queue_by_weight(dp_sched_t *s, srv_t *sv, uint32_t tree, dp_ops_t *ops)
{
    fwrr_insert(s, sv, tree, (uint32_t)SRV_EWGHT_MAX - sv->eweight, ops);
}

/* eb32_first of a tree: smallest key, then oldest insertion. */
static srv_t *fwrr_first(dp_sched_t *s, int g, uint32_t tree)
{
    srv_t *sv = SRV(s), *best = NULL;
    uint32_t i;
    for (i = 0; i < s->cfg.max_servers; i++) {
        srv_t *c = &sv[i];
        if (!c->present || !c->in_tree || c->lb_tree != tree || grp_of(c) != g)
            continue;
        if (!best || c->tkey < best->tkey || (c->tkey == best->tkey && c->tseq < best->tseq))
            best = c;
    }
    return best;
}

/* fwrr_queue_srv: into the current tree at its next position, or into the
 * next tree when it does not fit the window. */
static void fwrr_queue_srv(dp_sched_t *s, srv_t *sv, dp_ops_t *ops)
{
    int g = grp_of(sv);
    fwrr_group_t *grp = &s->grp[g];
    int32_t next_weight = s->next_weight[g];
    if (!ha_usable(sv)) {
        sv->lb_tree = T_NONE;
        sv->in_tree = 0;
    } else if (sv->eweight <= 0 || sv->npos >= 2 * grp->curr_weight ||
               sv->npos >= grp->curr_weight + next_weight) {
        sv->npos -= grp->curr_weight;
        fwrr_queue_by_weight(s, sv, grp->next_tree, ops);
    } else {
        uint32_t key = (uint32_t)SRV_UWGHT_RANGE * (uint32_t)sv->npos +
                       (uint32_t)((int32_t)SRV_EWGHT_MAX + sv->rweight - (int32_t)sv->eweight) /
                           (uint32_t)BE_WEIGHT_SCALE;
        fwrr_insert(s, sv, T_CURR, key, ops);
    }
}

/* fwrr_get_srv: prepares a server taken out of its tree. */
static void fwrr_get_srv(dp_sched_t *s, srv_t *sv)
{
    fwrr_group_t *grp = &s->grp[grp_of(sv)];
    if (sv->lb_tree == grp->init_tree) {
        sv->npos = sv->rweight = 0;
    } else if (sv->lb_tree == grp->next_tree) {
        sv->npos += grp->curr_weight;
    } else if (sv->lb_tree == T_NONE) {
        sv->npos = grp->curr_pos;
    }
}

static void fwrr_init(dp_sched_t *s, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    uint32_t i;
    int g;
    recount(s);
    for (g = 0; g < 2; g++) {
        int32_t tot = (int32_t)(g ? s->tot_wbck : s->tot_wact);
        s->grp[g].curr_pos = s->grp[g].curr_weight = s->next_weight[g] = tot;
        s->grp[g].init_tree = T_T0;
        s->grp[g].next_tree = T_T1;
    }
    for (i = 0; i < s->cfg.max_servers; i++) {
        sv[i].in_tree = 0;
        sv[i].lb_tree = T_NONE;
        sv[i].npos = sv[i].lpos = sv[i].rweight = 0;
        if (!ha_usable(&sv[i]))
            continue;
        fwrr_queue_by_weight(s, &sv[i], s->grp[grp_of(&sv[i])].init_tree, ops);
    }
}

static void fwrr_status_down(dp_sched_t *s, srv_t *sv)
{
    sv->in_tree = 0;
    sv->lb_tree = T_NONE;
    s->next_weight[grp_of(sv)] -= (int32_t)sv->lb_eweight;
}

static void fwrr_status_up(dp_sched_t *s, srv_t *sv, dp_ops_t *ops)
{
    int g = grp_of(sv);
    fwrr_group_t *grp = &s->grp[g];
    s->next_weight[g] += (int32_t)sv->eweight;
    fwrr_get_srv(s, sv);
    sv->npos = grp->curr_pos + (s->next_weight[g] + grp->curr_weight - grp->curr_pos) / (int32_t)sv->eweight;
    fwrr_queue_srv(s, sv, ops);
}

/* fwrr_update_server_weight for a server usable before and after. */
static void fwrr_update_weight(dp_sched_t *s, srv_t *sv, dp_ops_t *ops)
{
    int g = grp_of(sv);
    fwrr_group_t *grp = &s->grp[g];
    int32_t next_weight;
    s->next_weight[g] = s->next_weight[g] - (int32_t)sv->lb_eweight + (int32_t)sv->eweight;
    next_weight = s->next_weight[g];
    if (sv->lb_tree == grp->init_tree) {
        sv->in_tree = 0;
        fwrr_queue_by_weight(s, sv, grp->init_tree, ops);
    } else if (sv->lb_tree == T_NONE) {
        sv->in_tree = 0;
        fwrr_get_srv(s, sv);
        sv->npos = grp->curr_pos + (next_weight + grp->curr_weight - grp->curr_pos) / (int32_t)sv->eweight;
        fwrr_queue_srv(s, sv, ops);
    } else {
        fwrr_get_srv(s, sv);
        if (sv->eweight > 0) {
            int32_t prev_next = sv->npos;
            int32_t step = next_weight / (int32_t)sv->eweight;
            sv->npos = sv->lpos + step;
            sv->rweight = 0;
            if (sv->npos > prev_next)
                sv->npos = prev_next;
            if (sv->npos < grp->curr_pos + 2)
                sv->npos = grp->curr_pos + step;
        } else {
            sv->npos = grp->curr_pos + grp->curr_weight;
        }
        sv->in_tree = 0;
        fwrr_queue_srv(s, sv, ops);
    }
}

static srv_t *fwrr_get_server_from_group(dp_sched_t *s, int g)
{
    fwrr_group_t *grp = &s->grp[g];
    srv_t *s1 = fwrr_first(s, g, T_CURR), *s2;
    if (s1 && s1->lb_eweight && s1->npos <= grp->curr_pos)
        return s1;
    s2 = fwrr_first(s, g, grp->init_tree);
    if (s2 && s2->lb_eweight) {
        s2->npos = s2->rweight = 0;
        return s2;
    }
    return s1;
}

static void fwrr_update_position(fwrr_group_t *grp, srv_t *sv, int32_t next_weight)
{
    int32_t ew = (int32_t)sv->lb_eweight;
    if (!ew)
        return;
    if (!sv->npos)
        sv->npos = grp->curr_pos;
    sv->lpos = sv->npos;
    sv->npos += next_weight / ew;
    sv->rweight += next_weight % ew;
    if (sv->rweight >= ew) {
        sv->rweight -= ew;
        sv->npos++;
    }
}

/* lb_fwrr.c fwrr_get_next_server (v2.6): avoid is the server a redispatch
 * leaves (NO_SRV for none). The first time it comes out of the tree it is
 * set aside like a saturated server; the next server taken is returned even
 * if it is avoid again, and when the trees run out after the switch the
 * set-aside one is returned after all. */
static int32_t fwrr_pick(dp_sched_t *s, int32_t avoid, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    srv_t *srv = NULL;
    int32_t full[DP_SCHED_MAX_SERVERS]; /* saturated or avoided servers, most recent last */
    int32_t avoided = NO_SRV;
    uint32_t nfull = 0, k;
    int switched = 0, g;
    fwrr_group_t *grp;
    int32_t next_weight;

    if (s->srv_act) {
        g = 0;
    } else if (s->fbck != NO_SRV) {
        COUNT(ops, servers_examined, 1);
        return s->fbck;
    } else if (s->srv_bck) {
        g = 1;
    } else {
        return DP_SCHED_ENOSERVER;
    }
    grp = &s->grp[g];
    next_weight = s->next_weight[g];
    for (;;) {
        if (!grp->curr_weight)
            grp->curr_pos = grp->curr_weight = next_weight;
        for (;;) {
            srv = fwrr_get_server_from_group(s, g);
            if (srv)
                break;
            if (switched) {
                if (avoided != NO_SRV) {
                    srv = &sv[avoided];
                    goto take_this_one;
                }
                goto requeue;
            }
            switched = 1;
            /* fwrr_switch_trees */
            k = grp->init_tree;
            grp->init_tree = grp->next_tree;
            grp->next_tree = k;
            grp->curr_weight = next_weight;
            grp->curr_pos = grp->curr_weight;
        }
        COUNT(ops, servers_examined, 1);
        fwrr_update_position(grp, srv, next_weight);
        srv->in_tree = 0;
        grp->curr_pos++;
        if (!ha_full(srv)) {
            if ((int32_t)(srv - sv) != avoid || avoided != NO_SRV)
                break;
            avoided = (int32_t)(srv - sv);
        }
        /* A server id is set aside at most once per pick: it leaves the
         * tree when taken and is only requeued after the loop. */
        full[nfull++] = (int32_t)(srv - sv);
    }
take_this_one:
    fwrr_queue_srv(s, srv, ops);
requeue:
    /* HAProxy chains set-aside servers LIFO and requeues them in that order;
     * the avoided one, when finally returned, was requeued above. */
    for (k = nfull; k-- > 0;) {
        srv_t *f = &sv[full[k]];
        if (f == srv)
            continue;
        if (switched)
            fwrr_queue_by_weight(s, f, grp->init_tree, ops);
        else
            fwrr_queue_srv(s, f, ops);
    }
    return srv ? (int32_t)(srv - sv) : DP_SCHED_ENOSERVER;
}

/* ---- HAProxy leastconn: lb_fwlc.c (v3.0 ordering) ----------------------- */

/* Tree key: 0 when idle, else (inflight + 1) * SRV_EWGHT_MAX / eweight. */
static uint32_t fwlc_key(const srv_t *sv)
{
    uint32_t ew = sv->lb_eweight ? sv->lb_eweight : 1u;
    return sv->active ? (uint32_t)(((uint64_t)sv->active + 1u) * SRV_EWGHT_MAX / ew) : 0u;
}

static void fwlc_queue(dp_sched_t *s, srv_t *sv, dp_ops_t *ops)
{
    sv->lcseq = ++s->seq;
    COUNT(ops, table_writes, 1);
}

/* A server's place in its tree: leastconn by (key, insertion sequence),
 * first by id (lb_fas.c keys its tree by puid). */
typedef struct tree_pos {
    uint32_t key;
    uint64_t seq;
} tree_pos_t;

static tree_pos_t tree_pos(const srv_t *sv, uint32_t id, int lc)
{
    tree_pos_t p;
    p.key = lc ? fwlc_key(sv) : id;
    p.seq = lc ? sv->lcseq : 0u;
    return p;
}

static int tree_before(tree_pos_t a, tree_pos_t b)
{
    return a.key < b.key || (a.key == b.key && a.seq < b.seq);
}

/* lb_fwlc.c fwlc_get_next_server / lb_fas.c fas_get_next_server (v2.6):
 * walks the tree from its first node to the first server that is not
 * saturated and is not avoid (the server a redispatch leaves; NO_SRV for
 * none); when only avoid is left, the walk ends and returns it. */
static int32_t ha_tree_walk(dp_sched_t *s, int lc, int32_t avoid, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    int32_t best = NO_SRV, avoided = NO_SRV;
    tree_pos_t bp = {0, 0};
    uint32_t i, nodes = 0, ahead = 0;
    int g;
    if (s->srv_act) {
        g = 0;
    } else if (s->fbck != NO_SRV) {
        COUNT(ops, servers_examined, 1);
        return s->fbck;
    } else if (s->srv_bck) {
        g = 1;
    } else {
        return DP_SCHED_ENOSERVER;
    }
    for (i = 0; i < s->cfg.max_servers; i++) {
        const srv_t *c = &sv[i];
        tree_pos_t cp;
        if (!c->lb_usable || grp_of(c) != g)
            continue;
        nodes++;
        if (ha_full(c))
            continue;
        if ((int32_t)i == avoid) {
            avoided = avoid;
            continue;
        }
        cp = tree_pos(c, i, lc);
        if (best == NO_SRV || tree_before(cp, bp)) {
            best = (int32_t)i;
            bp = cp;
        }
    }
    if (best == NO_SRV) {
        /* The walk went through every node of the tree. */
        COUNT(ops, servers_examined, nodes);
        return avoided != NO_SRV ? avoided : DP_SCHED_ENOSERVER;
    }
    /* Nodes ahead of the chosen one in tree order were visited and
     * skipped: only saturated ones and avoid can be (best is the first of
     * the others). */
    for (i = 0; i < s->cfg.max_servers; i++) {
        const srv_t *c = &sv[i];
        if (!c->lb_usable || grp_of(c) != g || (!ha_full(c) && (int32_t)i != avoid))
            continue;
        if (tree_before(tree_pos(c, i, lc), bp))
            ahead++;
    }
    COUNT(ops, servers_examined, ahead + 1u);
    return best;
}

/* ---- HAProxy map: lb_map.c -------------------------------------------- */

static void map_recalc(dp_sched_t *s, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    uint16_t *map = TABLE(s);
    int32_t tot = (int32_t)s->tot_weight;
    uint32_t flag = s->srv_act ? 0u : DP_SCHED_SRV_BACKUP;
    int32_t o;
    uint32_t i;

    for (i = 0; i < s->cfg.max_servers; i++) {
        sv[i].wscore = 0;
        sv[i].table_entries = 0;
    }
    s->table_used = s->tot_used ? (uint32_t)tot : 0u;
    if (!s->tot_used)
        return;
    for (o = 0; o < tot; o++) {
        int32_t max = 0;
        srv_t *best = NULL;
        for (i = 0; i < s->cfg.max_servers; i++) {
            srv_t *c = &sv[i];
            int32_t v;
            if ((c->flags & DP_SCHED_SRV_BACKUP) != flag || !ha_usable(c))
                continue;
            if (tot == 1) {
                best = c;
                break;
            }
            c->wscore += (int32_t)c->eweight;
            /* C division truncates toward zero; wscore may be negative. */
            v = (c->wscore + tot) / tot;
            if (!best || v > max) {
                max = v;
                best = c;
            }
        }
        map[o] = best ? (uint16_t)(best - sv) : NONE16;
        if (best) {
            best->wscore -= tot;
            best->table_entries++;
        }
    }
    COUNT(ops, table_writes, tot);
}

/* lb_map.c init_server_map: weights are divided by their gcd. */
static void map_gcd(dp_sched_t *s)
{
    srv_t *sv = SRV(s);
    uint32_t g = 0, i;
    for (i = 0; i < s->cfg.max_servers; i++)
        if (sv[i].present && sv[i].weight)
            g = g ? gcd32(g, sv[i].weight) : sv[i].weight;
    s->wmult = g ? g : 1u;
}

/* lb_map.c map_get_server_rr (v2.6): the next map slot whose server is not
 * saturated, skipping the server to avoid (redispatch) unless it is the only
 * one left, in which case it is returned and the index set after it. */
static int32_t map_pick_rr(dp_sched_t *s, int32_t avoid, dp_ops_t *ops)
{
    const uint16_t *map = TABLE(s);
    srv_t *sv = SRV(s);
    int32_t newidx, avoididx = 0, avoided = NO_SRV, tot = (int32_t)s->tot_weight;
    if (tot == 0)
        return DP_SCHED_ENOSERVER;
    if (s->rr_idx < 0 || s->rr_idx >= tot)
        s->rr_idx = 0;
    newidx = s->rr_idx;
    do {
        int32_t id = map[newidx++];
        COUNT(ops, table_probes, 1);
        COUNT(ops, servers_examined, 1);
        if (!ha_full(&sv[id])) {
            avoided = id;
            avoididx = newidx;
            if (id != avoid) {
                s->rr_idx = newidx;
                return id;
            }
        }
        if (newidx == tot)
            newidx = 0;
    } while (newidx != s->rr_idx);
    if (avoided == NO_SRV)
        return DP_SCHED_ENOSERVER;
    s->rr_idx = avoididx;
    return avoided;
}

/* ---- HAProxy consistent hashing ring: lb_chash.c ---------------------- */

static int ring_less(const ring_node_t *a, const ring_node_t *b)
{
    if (a->key != b->key)
        return a->key < b->key;
    if (a->id != b->id)
        return a->id < b->id;
    return a->j < b->j;
}

static void ring_sift(ring_node_t *r, uint32_t root, uint32_t n)
{
    for (;;) {
        uint32_t c = 2u * root + 1u, m = root;
        ring_node_t t;
        if (c < n && ring_less(&r[m], &r[c]))
            m = c;
        if (c + 1u < n && ring_less(&r[m], &r[c + 1u]))
            m = c + 1u;
        if (m == root)
            return;
        t = r[root];
        r[root] = r[m];
        r[m] = t;
        root = m;
    }
}

/* Index of the first ring node not below (key, id, j) in ring order. */
static uint32_t ring_lower_bound(const dp_sched_t *s, const ring_node_t *x)
{
    const ring_node_t *r = CRING(s);
    uint32_t lo = 0, hi = s->ring_used;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (ring_less(&r[mid], x))
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

static void ring_set_last(dp_sched_t *s, int32_t pos)
{
    const ring_node_t *r = CRING(s);
    if (pos < 0) {
        s->chash_last = RING_NO_LAST;
        return;
    }
    s->chash_last = (uint32_t)r[pos].id << 16 | r[pos].j;
    s->chash_last_key = r[pos].key;
    s->chash_last_pos = (uint32_t)pos;
}

/* After a rebuild, chash.last points at the same node, or, when that node
 * left the ring, at the first node after it that is still there (HAProxy's
 * chash_skip_node as each removed node is deleted); NULL when the ring is
 * empty. */
static void ring_relocate_last(dp_sched_t *s)
{
    ring_node_t x;
    uint32_t pos;
    if (s->chash_last == RING_NO_LAST)
        return;
    if (s->ring_used == 0) {
        s->chash_last = RING_NO_LAST;
        return;
    }
    x.key = s->chash_last_key;
    x.id = (uint16_t)(s->chash_last >> 16);
    x.j = (uint16_t)(s->chash_last & 0xFFFFu);
    pos = ring_lower_bound(s, &x);
    ring_set_last(s, (int32_t)(pos < s->ring_used ? pos : 0u));
}

/* Server key of chash_compute_server_key, hash-key id: puid * SRV_EWGHT_RANGE
 * with puid = id + 1; a caller hash_key stands for hash-key addr/guid. */
static uint32_t chash_server_key(const srv_t *sv, uint32_t id)
{
    return sv->hash_key ? (uint32_t)sv->hash_key : (id + 1u) * (uint32_t)SRV_EWGHT_RANGE;
}

/* The ring holds eweight nodes per usable server of the group in use (the
 * active tree, or the backup tree when no active server is usable), keyed
 * full_hash(server key + j), sorted. Equal keys keep insertion order
 * (servers in list order, nodes by index), as at HAProxy's start-up. */
static void ring_build(dp_sched_t *s, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    ring_node_t *r = RING(s);
    uint32_t n = 0, i, j, g = s->srv_act ? 0u : 1u;
    for (i = 0; i < s->cfg.max_servers; i++) {
        sv[i].table_entries = 0;
        if (!ha_usable(&sv[i]) || (uint32_t)grp_of(&sv[i]) != g)
            continue;
        for (j = 0; j < sv[i].eweight; j++) {
            r[n].key = full_hash(chash_server_key(&sv[i], i) + j);
            r[n].id = (uint16_t)i;
            r[n].j = (uint16_t)j;
            n++;
        }
        sv[i].table_entries = sv[i].eweight;
    }
    for (i = n / 2u; i-- > 0;)
        ring_sift(r, i, n);
    for (i = n; i-- > 1;) {
        ring_node_t t = r[0];
        r[0] = r[i];
        r[i] = t;
        ring_sift(r, 0, i);
    }
    s->ring_used = n;
    COUNT(ops, table_writes, n);
    ring_relocate_last(s);
}

/* chash_get_server_hash: the ring node closest to hash (the previous one on
 * a tie), then onwards past the server to avoid (redispatch) and, with
 * hash-preserve-affinity maxconn, past servers at their maxconn; after one
 * full turn it gives up and returns the node it stands on. */
static int32_t ring_lookup(const dp_sched_t *s, uint32_t hash, int32_t avoid, dp_ops_t *ops)
{
    const ring_node_t *r = CRING(s);
    const srv_t *sv = CSRV(s);
    uint32_t n = s->ring_used, lo = 0, hi, next, prev, dp, dn, loop = 0;
    if (s->srv_act == 0 && s->fbck != NO_SRV) {
        COUNT(ops, servers_examined, 1);
        return s->fbck;
    }
    if (n == 0)
        return DP_SCHED_ENOSERVER;
    hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (r[mid].key < hash)
            lo = mid + 1u;
        else
            hi = mid;
    }
    next = lo < n ? lo : 0u;
    prev = next ? next - 1u : n - 1u;
    dp = hash - r[prev].key;
    dn = r[next].key - hash;
    if (dp <= dn)
        next = prev;
    COUNT(ops, table_probes, 2);
    COUNT(ops, servers_examined, 1);
    while ((int32_t)r[next].id == avoid ||
           ((s->cfg.flags & DP_SCHED_CFG_AFFINITY_MAXCONN) && ha_full(&sv[r[next].id]))) {
        next++;
        if (next == n) {
            next = 0;
            if (++loop > 1)
                break;
        }
        COUNT(ops, servers_examined, 1);
    }
    return r[next].id;
}

/* lb_chash.c chash_get_next_server (v2.6): round robin over the ring from
 * the node after chash.last, skipping saturated servers and the server to
 * avoid; the avoided one when nothing else is left. */
static int32_t ring_next(dp_sched_t *s, int32_t avoid, dp_ops_t *ops)
{
    const ring_node_t *r = CRING(s);
    const srv_t *sv = CSRV(s);
    int32_t n = (int32_t)s->ring_used, node, stop, avoided_node = -1;
    if (s->srv_act == 0 && s->fbck != NO_SRV) {
        COUNT(ops, servers_examined, 1);
        return s->fbck;
    }
    if (n == 0) {
        s->chash_last = RING_NO_LAST;
        return DP_SCHED_ENOSERVER;
    }
    stop = node = s->chash_last == RING_NO_LAST ? -1 : (int32_t)s->chash_last_pos;
    do {
        int32_t id;
        node = node + 1 < n ? node + 1 : 0;
        ring_set_last(s, node);
        if (stop < 0)
            stop = node;
        id = r[node].id;
        COUNT(ops, table_probes, 1);
        COUNT(ops, servers_examined, 1);
        if (!ha_full(&sv[id])) {
            if (id != avoid)
                return id;
            avoided_node = node;
        }
    } while (node != stop);
    ring_set_last(s, avoided_node);
    return avoided_node < 0 ? DP_SCHED_ENOSERVER : (int32_t)r[avoided_node].id;
}

static uint32_t prng32(dp_sched_t *s)
{
    uint64_t x = s->prng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->prng = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

/* backend.c get_server_rnd: draws random points on the ring and keeps the
 * least loaded (served / eweight, cross-multiplied); a full result means
 * the backend queue (here: no server). Each draw's ring lookup walks past
 * avoid (the server a redispatch leaves). On a load tie the newest draw
 * stays, as in HAProxy 2.6 (later versions compare recent session rates). */
static int32_t random_pick(dp_sched_t *s, int32_t avoid, dp_ops_t *ops)
{
    const srv_t *sv = SRV(s);
    int32_t prev, curr = NO_SRV;
    uint32_t draws = s->cfg.draws;
    if (s->tot_weight == 0)
        return DP_SCHED_ENOSERVER;
    do {
        prev = curr;
        COUNT(ops, hashes, 1);
        curr = ring_lookup(s, prng32(s), avoid, ops);
        if (curr < 0)
            break;
        if (prev >= 0 && prev != curr) {
            uint64_t wcurr = (uint64_t)sv[curr].active * sv[prev].lb_eweight;
            uint64_t wprev = (uint64_t)sv[prev].active * sv[curr].lb_eweight;
            if (wcurr > wprev)
                curr = prev;
        }
    } while (--draws > 0);
    if (curr >= 0 && ha_full(&sv[curr]))
        return DP_SCHED_ENOSERVER;
    return curr < 0 ? DP_SCHED_ENOSERVER : curr;
}

/* ---- hash inputs -------------------------------------------------------- */

/* cfgparse-listen.c: hash-type consistent without a function means sdbm +
 * avalanche; map-based avalanches only when asked to. */
static int wants_avalanche(const dp_sched_t *s)
{
    return uses_ring(s->cfg.algo) ? !(s->cfg.flags & DP_SCHED_CFG_NO_AVALANCHE)
                                  : (s->cfg.flags & DP_SCHED_CFG_AVALANCHE) != 0;
}


static uint32_t hash_input(const dp_sched_t *s, const dp_sched_key_t *k, dp_ops_t *ops)
{
    uint32_t in = s->cfg.hash_input;
    if (in == DP_SCHED_HASH_DEFAULT)
        in = s->cfg.algo == DP_SCHED_MAGLEV ? DP_SCHED_HASH_5TUPLE : DP_SCHED_HASH_SRC_IP;
    switch (in) {
    case DP_SCHED_HASH_SRC_IP_PORT:
        return k->src_ip + k->src_port;
    case DP_SCHED_HASH_5TUPLE: {
        dp_flow_key_t fk;
        memset(&fk, 0, sizeof fk);
        fk.src_ip = k->src_ip;
        fk.dst_ip = k->dst_ip;
        fk.src_port = k->src_port;
        fk.dst_port = k->dst_port;
        fk.proto = k->proto;
        COUNT(ops, hashes, 1);
        return dp_flow_hash(&fk);
    }
    case DP_SCHED_HASH_KEY:
        return k->hash;
    default:
        return k->src_ip;
    }
}

/* HAProxy source: the address itself (get_server_sh XORs the 32-bit words
 * of the address: one word for IPv4), full_hash'ed with avalanche, and not
 * hashed at all when one server is left. */
static uint32_t ha_source_hash(const dp_sched_t *s, const dp_sched_key_t *k, dp_ops_t *ops)
{
    uint32_t h;
    if (s->tot_used == 1)
        return 0;
    h = hash_input(s, k, ops);
    /* cfgparse-listen.c: hash-type consistent without a function means
     * sdbm + avalanche; map-based avalanches only when asked to. */
    if (wants_avalanche(s)) {
        COUNT(ops, hashes, 1);
        h = full_hash(h);
    }
    return h;
}

/* ---- HAProxy uri and hdr hashing (v2.6 backend.c, hash.c) ------------- */

static uint32_t rotl32(uint32_t x, uint32_t n)
{
    return n ? (x << n) | (x >> (32u - n)) : x;
}

/* src/hash.c hash_sdbm, hash_djb2, hash_wt6, hash_crc32: byte-wise, so the
 * result does not depend on byte order. */
uint32_t dp_sched_hash_bytes(uint32_t fn, const void *data, size_t len)
{
    const uint8_t *k = (const uint8_t *)data;
    uint32_t h;
    size_t i;
    switch (fn) {
    case DP_SCHED_HASHFN_SDBM:
        h = 0;
        for (i = 0; i < len; i++)
            h = k[i] + (h << 6) + (h << 16) - h;
        return h;
    case DP_SCHED_HASHFN_DJB2:
        h = 5381;
        for (i = 0; i < len; i++)
            h = ((h << 5) + h) + k[i];
        return h;
    case DP_SCHED_HASHFN_WT6: {
        uint32_t h0 = 0xa53c965au, h1 = 0x5ca6953au, step0 = 6, step1 = 18;
        for (i = 0; i < len; i++) {
            uint32_t t = k[i];
            h0 = ~(h0 ^ t);
            h1 = ~(h1 + t);
            /* hash_wt6 rotates by a step that may be 0: HAProxy then shifts
             * by 32 (undefined in C, x | x = x on the CPUs it runs on);
             * rotl32 gives x without the undefined shift. */
            t = rotl32(h1, step0);
            h1 = rotl32(h0, step1);
            h0 = t;
            t = ((h0 >> 16) ^ h1) & 0xffffu;
            step0 = t & 0x1fu;
            step1 = t >> 11;
        }
        return h0 ^ h1;
    }
    case DP_SCHED_HASHFN_CRC32: {
        int bit;
        h = 0xFFFFFFFFu;
        for (i = 0; i < len; i++) {
            h ^= k[i];
            for (bit = 0; bit < 8; bit++)
                h = (h >> 1) ^ ((h & 1u) ? 0xedb88320u : 0u);
        }
        return ~h;
    }
    default:
        return 0;
    }
}

/* http.c http_parse_path on a request target: an origin-form target as is;
 * "*" and an empty one give no path; an absolute URI loses its scheme
 * ("alpha *(alnum / + / - / .) ://") and authority (up to the first '/'),
 * and gives no path when nothing follows; anything else is an authority
 * (CONNECT) and has no path. */
static void uri_path(const uint8_t **p, uint32_t *n)
{
    const uint8_t *u = *p;
    uint32_t len = *n, i = 1;
    if (len == 0 || u[0] == '/')
        return;
    *n = 0;
    if (u[0] == '*' || !((u[0] | 0x20) >= 'a' && (u[0] | 0x20) <= 'z'))
        return;
    while (i < len && (((u[i] | 0x20) >= 'a' && (u[i] | 0x20) <= 'z') || (u[i] >= '0' && u[i] <= '9') ||
                       u[i] == '+' || u[i] == '-' || u[i] == '.'))
        i++;
    if (len - i < 3 || u[i] != ':' || u[i + 1] != '/' || u[i + 2] != '/')
        return;
    for (i += 3; i < len && u[i] != '/'; i++)
        ;
    *p = u + i;
    *n = len - i;
}

static int http_lws(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The first value of a header line as http_find_header (not "full") sees
 * it: leading blanks skipped, cut at the first comma outside a quoted
 * string (http_find_hdr_value_end), trailing blanks dropped. */
static void hdr_first_value(const uint8_t **p, uint32_t *n)
{
    const uint8_t *v = *p;
    uint32_t len = *n, b = 0, e;
    int quoted = 0, qdpair = 0;
    while (b < len && http_lws(v[b]))
        b++;
    for (e = b; e < len; e++) {
        if (qdpair)
            qdpair = 0;
        else if (quoted) {
            if (v[e] == '\\')
                qdpair = 1;
            else if (v[e] == '"')
                quoted = 0;
        } else if (v[e] == '"')
            quoted = 1;
        else if (v[e] == ',')
            break;
    }
    while (e > b && http_lws(v[e - 1]))
        e--;
    *p = v + b;
    *n = e - b;
}

/* get_server_hh use_domain_only: walking back from the end, the label
 * between the last dot and the dot before it ("example" of
 * www.example.com); the whole value when it has no dot. HAProxy's first
 * step reads the byte just past the value, which the twin takes as not a
 * dot. */
static void hdr_domain(const uint8_t *v, uint32_t len, uint32_t *start, uint32_t *end)
{
    uint32_t i = len, rem = len, e = len;
    int dohash = 0;
    while (rem) {
        if (dohash) {
            if (v[i - 1] == '.')
                break;
        } else if (i < len && v[i] == '.') {
            e = i;
            dohash = 1;
        }
        i--;
        rem--;
    }
    *start = i;
    *end = e;
}

/* The hash of a uri/hdr key before the avalanche: 0 when the request has no
 * such parameter (the caller falls back to round robin), else 1 with *out
 * set. get_server_uh: optionally the path only, at most len characters, up
 * to the '?' (unless whole) or the (depth+1)-th '/'. get_server_hh: the
 * first value, optionally its domain label; an empty value counts as none. */
static int param_hash(const dp_sched_t *s, const dp_sched_key_t *k, uint32_t *out, dp_ops_t *ops)
{
    const uint8_t *p = (const uint8_t *)k->data;
    uint32_t n = k->data_len, start = 0, end;
    if (!p)
        return 0;
    if (s->cfg.algo == DP_SCHED_URI || s->cfg.algo == DP_SCHED_URI_CONSISTENT) {
        uint32_t slashes = 0, depth1 = s->cfg.uri_depth ? s->cfg.uri_depth + 1u : 0u;
        if (s->cfg.flags & DP_SCHED_CFG_URI_PATH_ONLY)
            uri_path(&p, &n);
        if (s->cfg.uri_len && n > s->cfg.uri_len)
            n = s->cfg.uri_len;
        for (end = 0; end < n; end++) {
            if (p[end] == '/') {
                if (++slashes == depth1)
                    break;
            } else if (p[end] == '?' && !(s->cfg.flags & DP_SCHED_CFG_URI_WHOLE)) {
                break;
            }
        }
    } else {
        hdr_first_value(&p, &n);
        if (n == 0)
            return 0;
        end = n;
        if (s->cfg.flags & DP_SCHED_CFG_HDR_DOMAIN_ONLY)
            hdr_domain(p, n, &start, &end);
    }
    COUNT(ops, hashes, 1);
    COUNT(ops, bytes_parsed, end - start);
    *out = dp_sched_hash_bytes(s->cfg.hash_fn, p + start, end - start);
    return 1;
}

/* Where HAProxy's hash algorithm sends key: the hash (0 without hashing when
 * one server is in use) looked up in the map (hash % tot_weight, saturated
 * or not) or on the ring. Returns 1 with *id set, or 0 when the key lacks
 * the parameter and the pick must fall back to round robin. */
static int param_lookup(const dp_sched_t *s, const dp_sched_key_t *k, int32_t avoid, int32_t *id, dp_ops_t *ops)
{
    uint32_t h = 0;
    int is_uri = s->cfg.algo == DP_SCHED_URI || s->cfg.algo == DP_SCHED_URI_CONSISTENT;
    if (s->tot_weight == 0) {
        *id = DP_SCHED_ENOSERVER;
        return 1;
    }
    /* assign_server hashes the URI only of an HTTP request; get_server_hh
     * skips the header search with one server in use. */
    if (is_uri && !k->data)
        return 0;
    if (s->tot_used != 1) {
        if (!param_hash(s, k, &h, ops))
            return 0;
        if (wants_avalanche(s)) {
            COUNT(ops, hashes, 1);
            h = full_hash(h);
        }
    }
    if (uses_ring(s->cfg.algo)) {
        *id = ring_lookup(s, h, avoid, ops);
        return *id >= 0;
    }
    COUNT(ops, table_probes, 1);
    COUNT(ops, servers_examined, 1);
    *id = CTABLE(s)[h % s->tot_weight];
    return 1;
}

static int32_t param_pick(dp_sched_t *s, const dp_sched_key_t *k, int32_t avoid, dp_ops_t *ops)
{
    int32_t id;
    if (param_lookup(s, k, avoid, &id, ops))
        return id;
    return uses_ring(s->cfg.algo) ? ring_next(s, avoid, ops) : map_pick_rr(s, avoid, ops);
}

/* ---- IPVS destination list ------------------------------------------- */

static void list_insert_head(dp_sched_t *s, uint32_t id)
{
    uint16_t *o = ORDER(s);
    memmove(o + 1, o, (size_t)s->n_list * sizeof(uint16_t));
    o[0] = (uint16_t)id;
    s->n_list++;
    /* The rr cursor and wrr mark point at a list element, which moved down
     * by one; the head sentinel (-1) stays. */
    if (s->cursor >= 0)
        s->cursor++;
}

static void list_remove(dp_sched_t *s, uint32_t id)
{
    uint16_t *o = ORDER(s);
    uint32_t k;
    for (k = 0; k < s->n_list && o[k] != id; k++)
        ;
    if (k == s->n_list)
        return;
    memmove(o + k, o + k + 1, (size_t)(s->n_list - k - 1u) * sizeof(uint16_t));
    s->n_list--;
    /* ip_vs_rr_del_dest: a cursor on the removed dest moves to its
     * predecessor; elements after it move up by one. */
    if ((int32_t)k <= s->cursor)
        s->cursor--;
}

/* ip_vs_wrr.c ip_vs_wrr_dest_changed (and init_svc when first). */
static void wrr_changed(dp_sched_t *s, int init)
{
    const srv_t *sv = SRV(s);
    const uint16_t *o = ORDER(s);
    uint32_t k, g = 0, mw = 0;
    for (k = 0; k < s->n_list; k++) {
        uint32_t w = sv[o[k]].eweight;
        if (w > 0)
            g = g ? gcd32(g, w) : w;
        if (w > mw)
            mw = w;
    }
    s->cursor = -1;
    s->wrr_di = (int32_t)(g ? g : 1u);
    s->wrr_mw = (int32_t)mw - (s->wrr_di - 1);
    if (init || s->wrr_cw > s->wrr_mw || !s->wrr_cw)
        s->wrr_cw = s->wrr_mw;
    else if (s->wrr_di > 1)
        s->wrr_cw = (s->wrr_cw / s->wrr_di) * s->wrr_di + 1;
}

/* ip_vs_rr.c; IPVS never redispatches, so avoid (NO_SRV for none) follows
 * HAProxy's map_get_server_rr: skipped like an unavailable destination, and
 * taken (the cursor on it) only when no other is available. */
static inline int32_t ipvs_rr_pick(dp_sched_t *s, int32_t avoid, dp_ops_t *ops)
{
    const srv_t *sv = SRV(s);
    const uint16_t *o = ORDER(s);
    int32_t last = s->cursor, d, n = (int32_t)s->n_list, avoided = -1;
    for (d = last + 1; d < n; d++) {
        COUNT(ops, servers_examined, 1);
        if (!ipvs_unavailable(&sv[o[d]])) {
            if ((int32_t)o[d] != avoid)
                goto hit;
            avoided = d;
        }
    }
    if (last >= 0) {
        for (d = 0; d <= last; d++) {
            COUNT(ops, servers_examined, 1);
            if (!ipvs_unavailable(&sv[o[d]])) {
                if ((int32_t)o[d] != avoid)
                    goto hit;
                avoided = d;
            }
        }
    }
    if (avoided < 0)
        return DP_SCHED_ENOSERVER;
    d = avoided;
hit:
    s->cursor = d;
    return o[d];
}

/* ip_vs_wrr.c ip_vs_wrr_schedule; skip (the server a redispatch leaves,
 * NO_SRV for none) counts as unavailable. */
static inline int32_t ipvs_wrr_scan(dp_sched_t *s, int32_t skip, dp_ops_t *ops)
{
    const srv_t *sv = SRV(s);
    const uint16_t *o = ORDER(s);
    int32_t d = s->cursor, last, stop = -2, n = (int32_t)s->n_list;
    int last_pass = 0, restarted = 0;
    if (s->wrr_mw == 0)
        return DP_SCHED_ENOSERVER;
    last = d;
    for (;;) {
        for (d = d + 1; d < n; d++) {
            const srv_t *c = &sv[o[d]];
            COUNT(ops, servers_examined, 1);
            if (!c->overload && (int32_t)c->eweight >= s->wrr_cw && (int32_t)o[d] != skip) {
                s->cursor = d;
                return o[d];
            }
            if (d == stop) {
                s->cursor = d;
                return DP_SCHED_ENOSERVER;
            }
        }
        d = -1;
        s->wrr_cw -= s->wrr_di;
        if (s->wrr_cw <= 0) {
            s->wrr_cw = s->wrr_mw;
            if (last_pass || last == -1) {
                s->cursor = -1;
                return DP_SCHED_ENOSERVER;
            }
            restarted = 1;
        }
        last_pass = s->wrr_cw <= s->wrr_di;
        if (last_pass && restarted && last != -1)
            stop = last;
    }
}

/* wrr with avoid: a scan without it; when that finds nothing, the
 * scheduler's state is put back and the plain scan may return avoid (as
 * HAProxy's lookups return the avoided server when it is the only one). */
static inline int32_t ipvs_wrr_pick(dp_sched_t *s, int32_t avoid, dp_ops_t *ops)
{
    int32_t cursor = s->cursor, cw = s->wrr_cw, id = ipvs_wrr_scan(s, avoid, ops);
    if (id >= 0 || avoid < 0)
        return id;
    s->cursor = cursor;
    s->wrr_cw = cw;
    return ipvs_wrr_scan(s, NO_SRV, ops);
}

/* ip_vs_lc.c (lc = 0) and ip_vs_wlc.c (lc = 1 means weighted); avoid
 * (NO_SRV for none) is passed over and returned only when no other
 * destination qualifies. */
static inline int32_t ipvs_lc_pick(dp_sched_t *s, int weighted, int32_t avoid, dp_ops_t *ops)
{
    const srv_t *sv = SRV(s);
    const uint16_t *o = ORDER(s);
    int32_t least = NO_SRV;
    uint32_t k;
    uint64_t loh = 0;
    COUNT(ops, servers_examined, s->n_list);
    for (k = 0; k < s->n_list; k++) {
        const srv_t *c = &sv[o[k]];
        /* ip_vs_dest_conn_overhead: active * 256 + inactive */
        uint64_t doh = ((uint64_t)c->active << 8) + c->inactive;
        if (c->overload || (int32_t)o[k] == avoid)
            continue;
        if (least < 0) {
            if (c->eweight == 0)
                continue;
            least = o[k];
            loh = doh;
        } else if (!weighted) {
            if (c->eweight != 0 && doh < loh) {
                least = o[k];
                loh = doh;
            }
        } else if (loh * c->eweight > doh * sv[least].eweight) {
            least = o[k];
            loh = doh;
        }
    }
    if (least < 0 && avoid >= 0 && (uint32_t)avoid < s->cfg.max_servers && sv[avoid].in_list &&
        !sv[avoid].overload && sv[avoid].eweight != 0)
        least = avoid;
    return least < 0 ? DP_SCHED_ENOSERVER : least;
}

/* ip_vs_sh.c ip_vs_sh_reassign: the list fills the buckets in order, each
 * destination `weight` consecutive buckets (one when its weight is 0),
 * cycling until every bucket is assigned. */
static void sh_reassign(dp_sched_t *s, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    const uint16_t *o = ORDER(s);
    uint16_t *t = TABLE(s);
    uint32_t size = 1u << s->cfg.table_size, i, p = 0, dcount = 0;
    for (i = 0; i < s->cfg.max_servers; i++)
        sv[i].table_entries = 0;
    for (i = 0; i < size; i++) {
        if (s->n_list == 0) {
            t[i] = NONE16;
            continue;
        }
        t[i] = o[p];
        sv[o[p]].table_entries++;
        if (++dcount >= sv[o[p]].eweight) {
            p = (p + 1u) % s->n_list;
            dcount = 0;
        }
    }
    s->table_used = size;
    COUNT(ops, table_writes, size);
}

static uint32_t sh_bucket(const dp_sched_t *s, uint32_t v, uint32_t offset)
{
    return (offset + hash_32(v, s->cfg.table_size)) & ((1u << s->cfg.table_size) - 1u);
}

/* ip_vs_sh_get / ip_vs_sh_get_fallback. avoid (NO_SRV for none): with
 * sh-fallback the walk passes it over like an unavailable destination and
 * returns it only when it finds no other; without fallback the bucket's
 * server stands, as HAProxy's map-based hashes ignore the server to avoid. */
static int32_t sh_lookup(const dp_sched_t *s, const dp_sched_key_t *k, int32_t avoid, dp_ops_t *ops)
{
    const srv_t *sv = CSRV(s);
    const uint16_t *t = CTABLE(s);
    uint32_t size = 1u << s->cfg.table_size, v = hash_input(s, k, ops), ihash, off;
    int fallback = (s->cfg.flags & DP_SCHED_CFG_FALLBACK) != 0, avoided = 0;
    uint16_t d;
    COUNT(ops, hashes, 1);
    ihash = sh_bucket(s, v, 0);
    d = t[ihash];
    COUNT(ops, table_probes, 1);
    if (d == NONE16)
        return DP_SCHED_ENOSERVER;
    COUNT(ops, servers_examined, 1);
    if (!ipvs_unavailable(&sv[d])) {
        if (!fallback || (int32_t)d != avoid)
            return d;
        avoided = 1;
    }
    if (!fallback)
        return DP_SCHED_ENOSERVER;
    for (off = 0; off < size; off++) {
        uint32_t roff = (off + ihash) % size;
        d = t[sh_bucket(s, v, roff)];
        COUNT(ops, table_probes, 1);
        if (d == NONE16)
            break;
        COUNT(ops, servers_examined, 1);
        if (!ipvs_unavailable(&sv[d])) {
            if ((int32_t)d != avoid)
                return d;
            avoided = 1;
        }
    }
    return avoided ? avoid : DP_SCHED_ENOSERVER;
}

/* ---- Maglev: NSDI 2016 section 3.4, Pseudocode 1 ------------------------ */

static uint64_t maglev_key(const srv_t *sv, uint32_t id)
{
    return sv->hash_key ? sv->hash_key : (uint64_t)id;
}

/* Builds the lookup table: every backend in list order takes turns
 * claiming its next preferred free slot (offset + j * skip mod M), `turns`
 * slots per round for weight / gcd (proportional turns, as the paper
 * suggests and ip_vs_mh.c does), until all M slots are taken. A backend
 * quiesced to weight 0 keeps its last weight's turns (ip_vs_mh.c
 * last_weight), so draining does not reshuffle the table. */
static void maglev_populate(dp_sched_t *s, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    const uint16_t *o = ORDER(s);
    uint16_t *t = TABLE(s);
    uint8_t *bits = BITS(s);
    uint32_t M = s->cfg.table_size, g = 0, k, n = 0, i;

    for (i = 0; i < s->cfg.max_servers; i++)
        sv[i].table_entries = 0;
    for (k = 0; k < s->n_list; k++) {
        uint32_t lw = sv[o[k]].last_weight;
        if (lw > 0)
            g = g ? gcd32(g, lw) : lw;
    }
    s->mh_gcd = g;
    s->table_used = M;
    COUNT(ops, table_writes, M);
    if (g < 1) {
        for (i = 0; i < M; i++)
            t[i] = NONE16;
        return;
    }
    for (k = 0; k < s->n_list; k++) {
        srv_t *c = &sv[o[k]];
        uint64_t key = maglev_key(c, o[k]);
        c->mh_offset = (uint32_t)(mix64(key ^ MAGLEV_H1) % M);
        c->mh_skip = (uint32_t)(mix64(key ^ MAGLEV_H2) % (M - 1u)) + 1u;
        c->mh_perm = c->mh_offset;
        c->mh_turns = c->last_weight / g;
    }
    memset(bits, 0, (M + 7u) / 8u);
    while (n < M) {
        for (k = 0; k < s->n_list && n < M;) {
            srv_t *c = &sv[o[k]];
            uint32_t turn;
            if (c->mh_turns < 1) {
                k++;
                continue;
            }
            for (turn = 0; turn < c->mh_turns && n < M; turn++) {
                uint32_t slot = c->mh_perm;
                while (bits[slot >> 3] & (1u << (slot & 7u))) {
                    c->mh_perm += c->mh_skip;
                    if (c->mh_perm >= M)
                        c->mh_perm -= M;
                    slot = c->mh_perm;
                }
                bits[slot >> 3] = (uint8_t)(bits[slot >> 3] | (1u << (slot & 7u)));
                t[slot] = o[k];
                c->table_entries++;
                n++;
            }
            k++;
        }
    }
}

static uint32_t maglev_slot(const dp_sched_t *s, uint32_t v, uint32_t offset)
{
    return (uint32_t)(mix64((uint64_t)(uint32_t)(v + offset) ^ MAGLEV_H3) % s->cfg.table_size);
}

/* The paper's lookup (hash mod M), with IPVS mh's unavailable test and
 * optional fallback (walk on from the first slot, rehashing with an offset).
 * avoid as in sh_lookup. */
static int32_t maglev_lookup(const dp_sched_t *s, const dp_sched_key_t *k, int32_t avoid, dp_ops_t *ops)
{
    const srv_t *sv = CSRV(s);
    const uint16_t *t = CTABLE(s);
    uint32_t M = s->cfg.table_size, v = hash_input(s, k, ops), ihash, off;
    int fallback = (s->cfg.flags & DP_SCHED_CFG_FALLBACK) != 0, avoided = 0;
    uint16_t d;
    COUNT(ops, hashes, 1);
    ihash = maglev_slot(s, v, 0);
    d = t[ihash];
    COUNT(ops, table_probes, 1);
    if (d == NONE16)
        return DP_SCHED_ENOSERVER;
    COUNT(ops, servers_examined, 1);
    if (!ipvs_unavailable(&sv[d])) {
        if (!fallback || (int32_t)d != avoid)
            return d;
        avoided = 1;
    }
    if (!fallback)
        return DP_SCHED_ENOSERVER;
    for (off = 0; off < M; off++) {
        uint32_t roff = (off + ihash) % M;
        COUNT(ops, hashes, 1);
        d = t[maglev_slot(s, v, roff)];
        COUNT(ops, table_probes, 1);
        if (d == NONE16)
            break;
        COUNT(ops, servers_examined, 1);
        if (!ipvs_unavailable(&sv[d])) {
            if ((int32_t)d != avoid)
                return d;
            avoided = 1;
        }
    }
    return avoided ? avoid : DP_SCHED_ENOSERVER;
}

/* ---- rebuilding after a change ----------------------------------------- */

/* Rebuilds whatever table the algorithm derives from the whole pool. */
static void rebuild_tables(dp_sched_t *s, dp_ops_t *ops)
{
    uint32_t algo = s->cfg.algo;
    if (algo == DP_SCHED_WRR)
        wrr_changed(s, 0);
    else if (algo == DP_SCHED_SH)
        sh_reassign(s, ops);
    else if (algo == DP_SCHED_MAGLEV)
        maglev_populate(s, ops);
    if (!is_ipvs(algo))
        recount(s);
    if (is_map(algo))
        map_recalc(s, ops);
    else if (uses_ring(algo))
        ring_build(s, ops);
}

void dp_sched_build(dp_sched_t *s, uint64_t now_ms, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    uint32_t i;
    if (s->built)
        return;
    s->built = 1;
    if (is_map(s->cfg.algo))
        map_gcd(s);
    for (i = 0; i < s->cfg.max_servers; i++)
        if (sv[i].present)
            recalc_eweight(s, &sv[i], sec_of(now_ms));
    if (s->cfg.algo == DP_SCHED_WRR)
        wrr_changed(s, 1);
    else
        rebuild_tables(s, ops);
    if (s->cfg.algo == DP_SCHED_ROUNDROBIN)
        fwrr_init(s, ops);
    for (i = 0; i < s->cfg.max_servers; i++) {
        sv[i].lb_usable = (uint8_t)(!is_ipvs(s->cfg.algo) && ha_usable(&sv[i]));
        sv[i].lb_eweight = sv[i].eweight;
        if (s->cfg.algo == DP_SCHED_LEASTCONN && sv[i].lb_usable)
            fwlc_queue(s, &sv[i], ops);
    }
}

/* Applies a change of one server (weight, state, flags, presence) the way
 * the real system does: HAProxy's set_server_status_up/down and
 * update_server_eweight per algorithm; IPVS's add/del/upd_dest. was_in_list
 * is the IPVS list membership before the change. */
static void apply_change(dp_sched_t *s, srv_t *sv, int was_in_list, dp_ops_t *ops)
{
    uint32_t algo = s->cfg.algo;
    if (is_ipvs(algo)) {
        int in_list = sv->present && (sv->state == DP_SCHED_UP || sv->state == DP_SCHED_DRAINING);
        uint32_t id = (uint32_t)(sv - SRV(s));
        recalc_eweight(s, sv, 0);
        if (sv->eweight > 0)
            sv->last_weight = sv->eweight;
        if (in_list && !was_in_list)
            list_insert_head(s, id);
        else if (!in_list && was_in_list)
            list_remove(s, id);
        sv->in_list = (uint8_t)in_list;
        if (s->built)
            rebuild_tables(s, ops);
        return;
    }
    if (!s->built)
        return;
    {
        int u0 = sv->lb_usable, u1 = ha_usable(sv);
        if (algo == DP_SCHED_ROUNDROBIN) {
            if (!u0 && u1)
                fwrr_status_up(s, sv, ops);
            else if (u0 && !u1)
                fwrr_status_down(s, sv);
            else if (u0 && u1 && sv->eweight != sv->lb_eweight)
                fwrr_update_weight(s, sv, ops);
        } else if (algo == DP_SCHED_LEASTCONN) {
            if (u1 && (!u0 || sv->eweight != sv->lb_eweight))
                fwlc_queue(s, sv, ops);
        }
        sv->lb_usable = (uint8_t)u1;
        sv->lb_eweight = sv->eweight;
        rebuild_tables(s, ops);
    }
}

/* HAProxy's warmup task: re-evaluates the weights of servers in slow start
 * (server_recalc_eweight) and propagates any change. */
static void refresh(dp_sched_t *s, uint64_t now_ms, dp_ops_t *ops)
{
    srv_t *sv = SRV(s);
    uint32_t i;
    if (!s->nwarming)
        return;
    for (i = 0; i < s->cfg.max_servers; i++) {
        if (!sv[i].present || !sv[i].warming)
            continue;
        recalc_eweight(s, &sv[i], sec_of(now_ms));
        if (sv[i].eweight != sv[i].lb_eweight || ha_usable(&sv[i]) != sv[i].lb_usable)
            apply_change(s, &sv[i], 0, ops);
    }
}

/* ---- public API: pool changes ------------------------------------------- */

int dp_sched_set_server(dp_sched_t *s, uint32_t id, const dp_sched_server_t *cfg, dp_ops_t *ops)
{
    srv_t *sv;
    int was_in_list;
    if (!s || !cfg || id >= s->cfg.max_servers || cfg->weight > DP_SCHED_MAX_WEIGHT ||
        (cfg->flags & ~DP_SCHED_SRV_BACKUP))
        return DP_SCHED_EINVAL;
    if (is_ipvs(s->cfg.algo) && ((cfg->flags & DP_SCHED_SRV_BACKUP) || cfg->slowstart_ms))
        return DP_SCHED_EINVAL;
    sv = &SRV(s)[id];
    was_in_list = sv->in_list;
    if (!sv->present) {
        memset(sv, 0, sizeof *sv);
        sv->present = 1;
        sv->state = DP_SCHED_UP;
    } else if (s->built && !is_ipvs(s->cfg.algo) && ((sv->flags ^ cfg->flags) & DP_SCHED_SRV_BACKUP) &&
               sv->lb_usable) {
        /* Changing groups: leave the old group's tree first; apply_change
         * then brings it up in the new one. */
        if (s->cfg.algo == DP_SCHED_ROUNDROBIN)
            fwrr_status_down(s, sv);
        sv->lb_usable = 0;
    }
    /* IPVS (ip_vs_ctl.c __ip_vs_update_dest): a new or higher upper
     * threshold clears OVERLOAD. */
    if (cfg->maxconn == 0 || cfg->maxconn > sv->maxconn)
        sv->overload = 0;
    sv->weight = cfg->weight;
    sv->maxconn = cfg->maxconn;
    sv->slowstart_s = (cfg->slowstart_ms + 999u) / 1000u;
    sv->flags = cfg->flags;
    sv->hash_key = cfg->hash_key;
    if (sv->warming && sv->slowstart_s == 0) {
        sv->warming = 0;
        s->nwarming--;
    }
    if (is_map(s->cfg.algo) && s->built) {
        uint32_t i;
        map_gcd(s);
        for (i = 0; i < s->cfg.max_servers; i++)
            if (SRV(s)[i].present)
                recalc_eweight(s, &SRV(s)[i], SRV(s)[i].last_change_s);
    }
    recalc_eweight(s, sv, sv->last_change_s);
    apply_change(s, sv, was_in_list, ops);
    return 0;
}

int dp_sched_remove_server(dp_sched_t *s, uint32_t id, dp_ops_t *ops)
{
    srv_t *sv;
    int was_in_list;
    if (!s || id >= s->cfg.max_servers)
        return DP_SCHED_EINVAL;
    sv = &SRV(s)[id];
    if (!sv->present)
        return DP_SCHED_ENOENT;
    was_in_list = sv->in_list;
    if (sv->warming) {
        sv->warming = 0;
        s->nwarming--;
    }
    sv->state = DP_SCHED_DISABLED;
    sv->present = 0;
    sv->eweight = 0;
    if (is_map(s->cfg.algo) && s->built) {
        uint32_t i;
        map_gcd(s);
        for (i = 0; i < s->cfg.max_servers; i++)
            if (SRV(s)[i].present)
                recalc_eweight(s, &SRV(s)[i], SRV(s)[i].last_change_s);
    }
    apply_change(s, sv, was_in_list, ops);
    memset(sv, 0, sizeof *sv);
    return 0;
}

int dp_sched_set_state(dp_sched_t *s, uint32_t id, dp_sched_state_t state, uint64_t now_ms, dp_ops_t *ops)
{
    srv_t *sv;
    int was_in_list;
    uint8_t old;
    if (!s || id >= s->cfg.max_servers || (unsigned)state >= (unsigned)DP_SCHED__STATES)
        return DP_SCHED_EINVAL;
    sv = &SRV(s)[id];
    if (!sv->present)
        return DP_SCHED_ENOENT;
    old = sv->state;
    if (old == (uint8_t)state)
        return 0;
    was_in_list = sv->in_list;
    sv->state = (uint8_t)state;
    sv->last_change_s = sec_of(now_ms);
    if (sv->warming && state != DP_SCHED_UP) {
        sv->warming = 0;
        s->nwarming--;
    }
    /* server.c: a server seen failed or in maintenance that comes back up
     * enters SRV_ST_STARTING when it has a slowstart. */
    if (state == DP_SCHED_UP && (old == DP_SCHED_DOWN || old == DP_SCHED_DISABLED) && sv->slowstart_s &&
        !is_ipvs(s->cfg.algo)) {
        sv->warming = 1;
        s->nwarming++;
    }
    recalc_eweight(s, sv, sv->last_change_s);
    apply_change(s, sv, was_in_list, ops);
    return 0;
}

/* ---- public API: picks ------------------------------------------------- */

/* The keyed algorithms' mapping of key, avoid as each one treats it (see
 * dp_sched_pick_avoid); NO_SRV for a plain lookup. */
static int32_t keyed_lookup(const dp_sched_t *s, const dp_sched_key_t *key, int32_t avoid, dp_ops_t *ops)
{
    switch (s->cfg.algo) {
    case DP_SCHED_SH:
        return sh_lookup(s, key, avoid, ops);
    case DP_SCHED_MAGLEV:
        return maglev_lookup(s, key, avoid, ops);
    case DP_SCHED_URI:
    case DP_SCHED_URI_CONSISTENT:
    case DP_SCHED_HDR:
    case DP_SCHED_HDR_CONSISTENT: {
        int32_t id;
        /* Without the parameter HAProxy round-robins: no key mapping. */
        return param_lookup(s, key, avoid, &id, ops) ? id : DP_SCHED_ENOSERVER;
    }
    case DP_SCHED_SOURCE: {
        /* get_server_sh + map_get_server_hash: the map slot stands, avoid
         * or not. */
        uint32_t h;
        if (s->tot_weight == 0)
            return DP_SCHED_ENOSERVER;
        h = ha_source_hash(s, key, ops);
        COUNT(ops, table_probes, 1);
        COUNT(ops, servers_examined, 1);
        return CTABLE(s)[h % s->tot_weight];
    }
    default: /* DP_SCHED_SOURCE_CONSISTENT */
        if (s->srv_act == 0 && s->fbck != NO_SRV) {
            COUNT(ops, servers_examined, 1);
            return s->fbck;
        }
        return ring_lookup(s, ha_source_hash(s, key, ops), avoid, ops);
    }
}

int32_t dp_sched_lookup(const dp_sched_t *s, const dp_sched_key_t *key, dp_ops_t *ops)
{
    if (!s || !key)
        return DP_SCHED_EINVAL;
    if (!is_keyed(s->cfg.algo))
        return DP_SCHED_ENOTKEYED;
    if (!s->built)
        return DP_SCHED_ENOSERVER;
    return keyed_lookup(s, key, NO_SRV, ops);
}

/* GCC and clang inline on request; other compilers decide for themselves. */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* The algorithm's lookup with avoid (NO_SRV for none). Inlined into both
 * public picks, so dp_sched_pick's constant NO_SRV lets the compiler drop
 * the avoid tests from the lookups inlined with it (the plain pick keeps
 * its cost; core/cost/insn_counts.csv). */
static ALWAYS_INLINE int32_t pick_with(dp_sched_t *s, const dp_sched_key_t *key, int32_t avoid, uint64_t now_ms,
                                dp_ops_t *ops)
{
    static const dp_sched_key_t zero_key;
    if (!key)
        key = &zero_key;
    if (!s->built)
        dp_sched_build(s, now_ms, ops);
    refresh(s, now_ms, ops);
    switch (s->cfg.algo) {
    case DP_SCHED_RR:
        return ipvs_rr_pick(s, avoid, ops);
    case DP_SCHED_WRR:
        return ipvs_wrr_pick(s, avoid, ops);
    case DP_SCHED_LC:
        return ipvs_lc_pick(s, 0, avoid, ops);
    case DP_SCHED_WLC:
        return ipvs_lc_pick(s, 1, avoid, ops);
    case DP_SCHED_ROUNDROBIN:
        return fwrr_pick(s, avoid, ops);
    case DP_SCHED_STATIC_RR:
        return map_pick_rr(s, avoid, ops);
    case DP_SCHED_LEASTCONN:
        return ha_tree_walk(s, 1, avoid, ops);
    case DP_SCHED_FIRST:
        return ha_tree_walk(s, 0, avoid, ops);
    case DP_SCHED_RANDOM:
        return random_pick(s, avoid, ops);
    case DP_SCHED_URI:
    case DP_SCHED_URI_CONSISTENT:
    case DP_SCHED_HDR:
    case DP_SCHED_HDR_CONSISTENT:
        return param_pick(s, key, avoid, ops);
    default:
        return keyed_lookup(s, key, avoid, ops);
    }
}

int32_t dp_sched_pick_avoid(dp_sched_t *s, const dp_sched_key_t *key, int32_t avoid, uint64_t now_ms, dp_ops_t *ops)
{
    if (!s || (avoid >= 0 && (uint32_t)avoid >= s->cfg.max_servers))
        return DP_SCHED_EINVAL;
    return pick_with(s, key, avoid < 0 ? NO_SRV : avoid, now_ms, ops);
}

int32_t dp_sched_pick(dp_sched_t *s, const dp_sched_key_t *key, uint64_t now_ms, dp_ops_t *ops)
{
    if (!s)
        return DP_SCHED_EINVAL;
    return pick_with(s, key, NO_SRV, now_ms, ops);
}

int dp_sched_count_remapped(const dp_sched_t *before, const dp_sched_t *after, const dp_sched_key_t *keys,
                            uint32_t n, uint32_t *moved, dp_ops_t *ops)
{
    uint32_t i, m = 0;
    if (!before || !after || !moved || (n && !keys) || before->cfg.algo != after->cfg.algo)
        return DP_SCHED_EINVAL;
    if (!is_keyed(before->cfg.algo))
        return DP_SCHED_ENOTKEYED;
    for (i = 0; i < n; i++)
        m += dp_sched_lookup(before, &keys[i], ops) != dp_sched_lookup(after, &keys[i], ops);
    *moved = m;
    return 0;
}

uint32_t dp_sched_table_size(const dp_sched_t *s)
{
    return s->built ? s->table_used : 0u;
}

int32_t dp_sched_table_entry(const dp_sched_t *s, uint32_t i)
{
    uint16_t e;
    if (!s->built || i >= s->table_used)
        return -1;
    e = CTABLE(s)[i];
    return e == NONE16 ? -1 : (int32_t)e;
}

uint32_t dp_sched_count_table_changes(const dp_sched_t *before, const dp_sched_t *after)
{
    uint32_t i, n, m = 0;
    if (before->cfg.algo != after->cfg.algo || !before->table_cap || !before->built || !after->built)
        return 0xFFFFFFFFu;
    n = before->table_used > after->table_used ? before->table_used : after->table_used;
    for (i = 0; i < n; i++)
        m += dp_sched_table_entry(before, i) != dp_sched_table_entry(after, i);
    return m;
}

/* ---- connection accounting -------------------------------------------- */

static srv_t *conn_srv(dp_sched_t *s, uint32_t id)
{
    if (!s || id >= s->cfg.max_servers || !SRV(s)[id].present)
        return NULL;
    return &SRV(s)[id];
}

int dp_sched_conn_opened(dp_sched_t *s, uint32_t id, dp_ops_t *ops)
{
    srv_t *sv = conn_srv(s, id);
    if (!sv)
        return DP_SCHED_ENOENT;
    sv->active++;
    /* ip_vs_bind_dest */
    if (sv->maxconn && (uint64_t)sv->active + sv->inactive >= sv->maxconn)
        sv->overload = 1;
    if (s->cfg.algo == DP_SCHED_LEASTCONN && s->built && sv->lb_usable)
        fwlc_queue(s, sv, ops);
    return 0;
}

int dp_sched_conn_to_inactive(dp_sched_t *s, uint32_t id, dp_ops_t *ops)
{
    srv_t *sv = conn_srv(s, id);
    (void)ops;
    if (!sv)
        return DP_SCHED_ENOENT;
    if (!sv->active)
        return DP_SCHED_ECOUNT;
    sv->active--;
    sv->inactive++;
    return 0;
}

int dp_sched_conn_closed(dp_sched_t *s, uint32_t id, int inactive, dp_ops_t *ops)
{
    srv_t *sv = conn_srv(s, id);
    uint64_t total;
    if (!sv)
        return DP_SCHED_ENOENT;
    if (inactive) {
        if (!sv->inactive)
            return DP_SCHED_ECOUNT;
        sv->inactive--;
    } else {
        if (!sv->active)
            return DP_SCHED_ECOUNT;
        sv->active--;
    }
    /* ip_vs_unbind_dest: without a lower threshold, OVERLOAD clears below
     * 3/4 of the upper one. */
    total = (uint64_t)sv->active + sv->inactive;
    if (!sv->maxconn || total * 4u < (uint64_t)sv->maxconn * 3u)
        sv->overload = 0;
    if (s->cfg.algo == DP_SCHED_LEASTCONN && s->built && sv->lb_usable)
        fwlc_queue(s, sv, ops);
    return 0;
}

int dp_sched_get_server(const dp_sched_t *s, uint32_t id, dp_sched_server_info_t *info)
{
    const srv_t *sv;
    if (!s || !info || id >= s->cfg.max_servers)
        return DP_SCHED_EINVAL;
    sv = &CSRV(s)[id];
    if (!sv->present)
        return DP_SCHED_ENOENT;
    memset(info, 0, sizeof *info);
    info->state = sv->state;
    info->weight = sv->weight;
    info->eweight = sv->eweight;
    info->maxconn = sv->maxconn;
    info->maxconn_now = sv->maxconn_now;
    info->active = sv->active;
    info->inactive = sv->inactive;
    info->usable = (uint32_t)(is_ipvs(s->cfg.algo) ? (sv->in_list && sv->eweight > 0) : ha_usable(sv));
    info->overloaded = sv->overload;
    info->warming = sv->warming;
    info->table_entries = sv->table_entries;
    return 0;
}
