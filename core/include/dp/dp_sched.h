/* Load-balancer schedulers: which server of a pool gets a new connection.
 *
 * Each algorithm is implemented the way the named real system does it, so
 * that an imported HAProxy or IPVS configuration behaves in the twin as it
 * does on the box (sources read, per algorithm, in src/dp_sched.c):
 *
 *   name                 system    real code
 *   "rr"                 IPVS      net/netfilter/ipvs/ip_vs_rr.c
 *   "wrr"                IPVS      ip_vs_wrr.c (gcd / max-weight passes)
 *   "lc"                 IPVS      ip_vs_lc.c  (fewest active*256 + inactive)
 *   "wlc"                IPVS      ip_vs_wlc.c (overhead/weight, cross-multiplied)
 *   "sh"                 IPVS      ip_vs_sh.c  (bucket table, hash_32)
 *   "maglev"             Maglev    Eisenbud et al., NSDI 2016, sect. 3.4 and
 *                                  Pseudocode 1; weights as proportional turns
 *                                  and quiesce semantics as IPVS ip_vs_mh.c
 *   "roundrobin"         HAProxy   src/lb_fwrr.c (dynamic weights, slowstart)
 *   "static-rr"          HAProxy   src/lb_map.c  map_get_server_rr
 *   "leastconn"          HAProxy   src/lb_fwlc.c (HAProxy 3.0 ordering)
 *   "first"              HAProxy   src/lb_fas.c
 *   "source"             HAProxy   balance source, hash-type map-based
 *                                  (backend.c get_server_sh + lb_map.c)
 *   "source-consistent"  HAProxy   balance source, hash-type consistent
 *                                  (lb_chash.c)
 *   "random"             HAProxy   balance random(draws) (backend.c
 *                                  get_server_rnd on the lb_chash.c ring)
 *   "uri"                HAProxy   balance uri [whole] [len N] [depth N]
 *                                  [path-only], hash-type map-based
 *                                  (backend.c get_server_uh + lb_map.c)
 *   "uri-consistent"     HAProxy   the same, hash-type consistent (lb_chash.c)
 *   "hdr"                HAProxy   balance hdr(<name>) [use_domain_only],
 *                                  map-based (backend.c get_server_hh)
 *   "hdr-consistent"     HAProxy   the same, hash-type consistent
 *
 * The uri and hdr algorithms follow HAProxy 2.6 (Debian 12's haproxy,
 * read at v2.6.0): the string hashed is cut from the URI / header value as
 * get_server_uh / get_server_hh do, hashed with the backend's hash function
 * (src/hash.c: sdbm by default, djb2, wt6, crc32) and, when the hash-type
 * asks for it, full_hash()'ed ("avalanche"; plain "hash-type consistent"
 * means sdbm + avalanche, map-based means sdbm alone: cfgparse-listen.c).
 * A request without the parameter (no header, an empty one, no URI as in
 * mode tcp) falls back to round robin on the same map or ring, as
 * assign_server does (map_get_server_rr / chash_get_next_server).
 *
 * The pool lives in caller memory (dp_sched_memory_size + dp_sched_create,
 * no malloc). The block holds no pointers, so a scheduler can be copied with
 * dp_sched_clone (used to count remapped keys: clone, change, compare).
 *
 * Servers are numbered 0 .. max_servers-1. For HAProxy algorithms the id is
 * the declaration order: HAProxy's puid (numbered from 1) is id + 1, and the
 * server list is walked in id order. For IPVS algorithms the destination list
 * is IPVS's: a destination that becomes present (set_server on a new id, or
 * a state change that brings it back) is put at the HEAD of the list, as
 * ip_vs_ctl.c __ip_vs_update_dest does (list_add_rcu), and a server that goes
 * down or is disabled leaves the list (keepalived removes a failed real
 * server). A draining server stays in the list with weight 0 (IPVS
 * quiescing).
 *
 * Time: now_ms is any monotonic millisecond clock. HAProxy evaluates slow
 * start in whole seconds (ns_to_sec), so does the twin.
 *
 * Operation counts each call adds to ops (NULL allowed) are documented with
 * each function; n = servers configured (ids in use), nl = servers in the
 * IPVS destination list. */
#ifndef DP_SCHED_H
#define DP_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error returns (negative). A pick that finds no server returns
 * DP_SCHED_ENOSERVER; the model maps it to DP_DROP_NO_SERVER (or to its
 * backend queue, where HAProxy would queue). */
#define DP_SCHED_ENOSERVER (-1) /* no server of the pool is usable (up, weight > 0, below maxconn) */
#define DP_SCHED_EINVAL (-2)    /* bad argument: id >= max_servers, weight > 256, unknown state,
                                   a backup or slowstart on an IPVS algorithm, NULL */
#define DP_SCHED_ENOENT (-3)    /* no server with that id */
#define DP_SCHED_ENOMEM (-4)    /* memory given is smaller than dp_sched_memory_size */
#define DP_SCHED_ENOTKEYED (-5) /* lookup/remap asked of an algorithm that maps no key (rr, wrr, ...) */
#define DP_SCHED_ECOUNT (-6)    /* conn_closed on a server with no such connection counted */

/* Largest server id + 1 a scheduler may hold. */
#define DP_SCHED_MAX_SERVERS 4096u
/* Weights are HAProxy's and IPVS's user weights, 0..256. */
#define DP_SCHED_MAX_WEIGHT 256u
/* Default Maglev lookup-table size (prime) and IPVS sh bucket bits. */
#define DP_SCHED_MAGLEV_DEFAULT_M 65537u
#define DP_SCHED_SH_DEFAULT_BITS 8u

typedef enum dp_sched_algo {
    DP_SCHED_RR = 0,            /* "rr" IPVS round robin */
    DP_SCHED_WRR,               /* "wrr" IPVS weighted round robin */
    DP_SCHED_LC,                /* "lc" IPVS least connection */
    DP_SCHED_WLC,               /* "wlc" IPVS weighted least connection */
    DP_SCHED_SH,                /* "sh" IPVS source hashing */
    DP_SCHED_MAGLEV,            /* "maglev" Maglev consistent hashing */
    DP_SCHED_ROUNDROBIN,        /* "roundrobin" HAProxy */
    DP_SCHED_STATIC_RR,         /* "static-rr" HAProxy */
    DP_SCHED_LEASTCONN,         /* "leastconn" HAProxy */
    DP_SCHED_FIRST,             /* "first" HAProxy */
    DP_SCHED_SOURCE,            /* "source" HAProxy, hash-type map-based */
    DP_SCHED_SOURCE_CONSISTENT, /* "source-consistent" HAProxy, hash-type consistent */
    DP_SCHED_RANDOM,            /* "random" HAProxy random(draws), seeded */
    DP_SCHED_URI,               /* "uri" HAProxy balance uri, hash-type map-based */
    DP_SCHED_URI_CONSISTENT,    /* "uri-consistent" HAProxy balance uri, hash-type consistent */
    DP_SCHED_HDR,               /* "hdr" HAProxy balance hdr(<name>), hash-type map-based */
    DP_SCHED_HDR_CONSISTENT,    /* "hdr-consistent" HAProxy balance hdr(<name>), hash-type consistent */
    DP_SCHED__COUNT
} dp_sched_algo_t;

/* Stable name of an algorithm ("rr", "static-rr", ...); "unknown" when out
 * of range. Names are part of the output format: never rename one. */
const char *dp_sched_algo_name(dp_sched_algo_t algo);

/* Algorithm from its name; DP_SCHED_EINVAL when unknown. */
int dp_sched_algo_from_name(const char *name);

/* What the hash algorithms (sh, maglev, source, source-consistent) hash. */
typedef enum dp_sched_hash_input {
    DP_SCHED_HASH_DEFAULT = 0,  /* the system's own: src address (sh, source, source-consistent), 5-tuple (maglev) */
    DP_SCHED_HASH_SRC_IP,       /* source address only */
    DP_SCHED_HASH_SRC_IP_PORT,  /* source address + source port (IPVS sh-port / mh-port: addr + port) */
    DP_SCHED_HASH_5TUPLE,       /* dp_flow_hash of the 5-tuple */
    DP_SCHED_HASH_KEY           /* key->hash as given (e.g. an URI hash: HAProxy balance uri) */
} dp_sched_hash_input_t;

/* Scheduler options (dp_sched_config_t.flags). */
#define DP_SCHED_CFG_FALLBACK 0x1u   /* sh, maglev: IPVS sh-fallback / mh-fallback: walk on to another
                                        bucket when the hashed one's server is unavailable */
#define DP_SCHED_CFG_ALLBACKUPS 0x2u /* HAProxy option allbackups: use every backup, not only the first */
#define DP_SCHED_CFG_AVALANCHE 0x4u  /* source: HAProxy hash-type map-based ... avalanche: full_hash()
                                        the hash input */
#define DP_SCHED_CFG_AFFINITY_MAXCONN 0x8u /* HAProxy hash-preserve-affinity maxconn (source-consistent):
                                              skip a server at its maxconn instead of returning it */
#define DP_SCHED_CFG_NO_AVALANCHE 0x10u /* source-consistent, uri-consistent, hdr-consistent: no
                                           full_hash() of the input (HAProxy "hash-type consistent
                                           sdbm"; plain "hash-type consistent" means sdbm avalanche);
                                           uri and hdr (map-based) avalanche only with
                                           DP_SCHED_CFG_AVALANCHE */
#define DP_SCHED_CFG_URI_WHOLE 0x20u     /* uri: HAProxy "whole": hash past the '?' too */
#define DP_SCHED_CFG_URI_PATH_ONLY 0x40u /* uri: HAProxy "path-only": drop scheme and authority of an
                                            absolute URI first (http_parse_path) */
#define DP_SCHED_CFG_HDR_DOMAIN_ONLY 0x80u /* hdr: HAProxy "use_domain_only": hash only the label before
                                              the last dot ("example" of www.example.com) */

/* HAProxy hash functions (hash-type ... <function>; src/hash.c), for uri and hdr. */
typedef enum dp_sched_hash_fn {
    DP_SCHED_HASHFN_SDBM = 0, /* hash_sdbm, HAProxy's default */
    DP_SCHED_HASHFN_DJB2,     /* hash_djb2 */
    DP_SCHED_HASHFN_WT6,      /* hash_wt6 */
    DP_SCHED_HASHFN_CRC32,    /* hash_crc32 (IEEE, reflected, ~0 in and out) */
    DP_SCHED_HASHFN__COUNT
} dp_sched_hash_fn_t;

/* The HAProxy hash function fn over len bytes of data (0 for an unknown fn). */
uint32_t dp_sched_hash_bytes(uint32_t fn, const void *data, size_t len);

typedef struct dp_sched_config {
    uint32_t algo;        /* dp_sched_algo_t */
    uint32_t max_servers; /* ids 0 .. max_servers-1; 1 .. DP_SCHED_MAX_SERVERS */
    uint32_t table_size;  /* maglev: prime M >= 100 * max_servers (0: 65537, or the smallest prime
                             >= 100 * max_servers when that is larger); sh: bucket bits 1..20
                             (0: 8, IPVS's 256 buckets); ignored otherwise */
    uint32_t hash_input;  /* dp_sched_hash_input_t */
    uint32_t flags;       /* DP_SCHED_CFG_* */
    uint32_t draws;       /* random: draws per pick (HAProxy random(<draws>)); 0 means 2, HAProxy's default */
    uint64_t seed;        /* random: PRNG seed (the same seed replays the same picks) */
    uint32_t hash_fn;     /* uri, hdr: dp_sched_hash_fn_t (0: sdbm) */
    uint32_t uri_len;     /* uri: HAProxy "len": hash at most this many characters; 0 = all */
    uint32_t uri_depth;   /* uri: HAProxy "depth": stop at the (depth+1)-th '/'; 0 = no limit */
    uint32_t reserved;    /* set to zero */
} dp_sched_config_t;

/* Server states. */
typedef enum dp_sched_state {
    DP_SCHED_UP = 0,    /* takes new connections (after slow start, at full weight) */
    DP_SCHED_DOWN,      /* failed health check: no new connections */
    DP_SCHED_DRAINING,  /* HAProxy drain / IPVS weight 0: existing connections stay, no new ones */
    DP_SCHED_DISABLED,  /* HAProxy maintenance / removed from IPVS: no new connections */
    DP_SCHED__STATES
} dp_sched_state_t;

/* Stable state name ("up", "down", "draining", "disabled"); "unknown" when out of range. */
const char *dp_sched_state_name(dp_sched_state_t state);

/* Server flags (dp_sched_server_t.flags). */
#define DP_SCHED_SRV_BACKUP 0x1u /* HAProxy backup: used only when no active server is usable */

typedef struct dp_sched_server {
    uint32_t weight;       /* user weight 0..256 (HAProxy "weight", IPVS -w) */
    uint32_t maxconn;      /* HAProxy maxconn / IPVS upper threshold -x; 0 = unlimited */
    uint32_t slowstart_ms; /* HAProxy slowstart; 0 = none. HAProxy algorithms only */
    uint32_t flags;        /* DP_SCHED_SRV_* */
    uint64_t hash_key;     /* identity hashed by maglev (permutation) and the consistent ring
                              (HAProxy hash-key): 0 = derived from the id; else e.g.
                              dp_sched_name_key("web1", 4) */
} dp_sched_server_t;

/* What a pick knows about the new connection. Fields by value, so the
 * result does not depend on byte order or structure layout. */
typedef struct dp_sched_key {
    uint32_t src_ip;   /* IPv4 source address, host order */
    uint32_t dst_ip;   /* IPv4 destination address, host order */
    uint16_t src_port; /* source port */
    uint16_t dst_port; /* destination port */
    uint8_t proto;     /* IP protocol */
    uint8_t pad[3];    /* set to zero; ignored */
    uint32_t hash;     /* caller's hash, used with DP_SCHED_HASH_KEY */
    const char *data;  /* uri: the request target as in the request line; hdr: the field value of the
                          first header line of that name, as received. NULL: no URI (HAProxy mode tcp)
                          / no such header; both then fall back to round robin */
    uint32_t data_len; /* bytes at data */
    uint32_t pad2;     /* set to zero; ignored */
} dp_sched_key_t;

/* A server as the scheduler sees it now. */
typedef struct dp_sched_server_info {
    uint32_t state;        /* dp_sched_state_t */
    uint32_t weight;       /* user weight */
    uint32_t eweight;      /* effective weight the algorithm uses now: HAProxy dynamic algorithms
                              weight*16 scaled down during slow start; static-rr/source weight/gcd;
                              IPVS the weight (0 when draining) */
    uint32_t maxconn;      /* configured maxconn */
    uint32_t maxconn_now;  /* maxconn in force now (HAProxy ramps it during slow start); 0 = unlimited */
    uint32_t active;       /* active connections (HAProxy "served") */
    uint32_t inactive;     /* IPVS inactive connections (not ESTABLISHED) */
    uint32_t usable;       /* 1 when it may get a new connection now (ignoring maxconn) */
    uint32_t overloaded;   /* IPVS IP_VS_DEST_F_OVERLOAD (maxconn reached, hysteresis 3/4) */
    uint32_t warming;      /* 1 during HAProxy slow start */
    uint32_t table_entries; /* entries of the lookup table (maglev, sh, map, ring nodes) it owns */
} dp_sched_server_info_t;

typedef struct dp_sched dp_sched_t;

/* Bytes needed for cfg; 0 when cfg is invalid (unknown algorithm, max_servers
 * out of range, maglev M not prime or < 100 * max_servers, sh bits > 20). */
size_t dp_sched_memory_size(const dp_sched_config_t *cfg);

/* Builds an empty pool in mem. NULL when mem is too small or cfg invalid.
 * Free by releasing mem. */
dp_sched_t *dp_sched_create(void *mem, size_t mem_size, const dp_sched_config_t *cfg);

/* Copies src into mem (at least dp_sched_memory_size of src's config) and
 * returns the copy, which then evolves independently; NULL when too small. */
dp_sched_t *dp_sched_clone(void *mem, size_t mem_size, const dp_sched_t *src);

/* The configuration the scheduler was created with (table_size resolved). */
void dp_sched_get_config(const dp_sched_t *s, dp_sched_config_t *cfg);

/* 64-bit FNV-1a of a server name, a stable hash_key for dp_sched_server_t. */
uint64_t dp_sched_name_key(const char *name, size_t len);

/* Adds server id (state up, no slow start: HAProxy never slow-starts at
 * start-up) or changes its weight, maxconn, slowstart, flags and hash_key
 * (HAProxy "set weight"; IPVS ipvsadm -e). 0 or DP_SCHED_EINVAL.
 * Ops: table_writes for a lookup table rebuilt (maglev M, sh buckets, map
 * slots, ring nodes; 0 before the first pick, which builds them) and 1 per
 * roundrobin/leastconn tree (re)insertion. */
int dp_sched_set_server(dp_sched_t *s, uint32_t id, const dp_sched_server_t *cfg, dp_ops_t *ops);

/* Removes server id from the pool (its connection counts are forgotten).
 * 0, DP_SCHED_ENOENT or DP_SCHED_EINVAL. Ops as dp_sched_set_server. */
int dp_sched_remove_server(dp_sched_t *s, uint32_t id, dp_ops_t *ops);

/* Sets a server's state at time now_ms. Coming up from down or disabled
 * starts HAProxy slow start when the server has one. Draining keeps the
 * connection counts. 0, DP_SCHED_ENOENT or DP_SCHED_EINVAL. Ops as
 * dp_sched_set_server. */
int dp_sched_set_state(dp_sched_t *s, uint32_t id, dp_sched_state_t state, uint64_t now_ms, dp_ops_t *ops);

/* Picks the server for a new connection: its id (>= 0) or
 * DP_SCHED_ENOSERVER. Does not count the connection: call
 * dp_sched_conn_opened when it is established on that server.
 * Ops added (exact):
 *   rr       servers_examined: destinations tested from the cursor on
 *   wrr      servers_examined: destinations tested over all passes
 *   lc, wlc  servers_examined: nl (every destination is read)
 *   sh       hashes 1 (+1 with DP_SCHED_HASH_5TUPLE); table_probes 1 and servers_examined 1
 *            per bucket read (1, or 1 + the fallback walk)
 *   maglev   hashes 1 (+1 with 5TUPLE) + 1 per fallback step; table_probes and
 *            servers_examined 1 per table entry read
 *   roundrobin, leastconn, first: servers_examined: servers taken from the tree
 *            (1, plus each one skipped as saturated; 1 when the first backup is
 *            returned); roundrobin adds table_writes 1 per server it requeues (the
 *            one picked and each saturated one); leastconn requeues on
 *            conn_opened / conn_closed instead
 *   static-rr table_probes and servers_examined: map slots read
 *   source   table_probes 1, servers_examined 1, hashes 1 with DP_SCHED_CFG_AVALANCHE
 *            (+1 with 5TUPLE); no hash at all when one server is in use (HAProxy
 *            then uses hash 0)
 *   source-consistent: table_probes 2 (the ring nodes on either side), servers_examined 1
 *            (+1 per node walked under DP_SCHED_CFG_AFFINITY_MAXCONN), hashes 1 (avalanche,
 *            unless DP_SCHED_CFG_NO_AVALANCHE; +1 with 5TUPLE; none with one server in use)
 *   random   per draw: hashes 1 (the PRNG output) and the source-consistent ring lookup
 *   uri, hdr (and their -consistent forms), with more than one server in use and the
 *            parameter present: hashes 1 and bytes_parsed the length of the string hashed,
 *            hashes +1 for the avalanche; then uri/hdr: table_probes 1, servers_examined 1
 *            (map slot hash % total weight); -consistent: the source-consistent ring
 *            lookup. With one server in use: no hash (hash 0). Without the parameter:
 *            uri and hdr as static-rr (map slots read); -consistent: table_probes and
 *            servers_examined 1 per ring node read (chash_get_next_server)
 * As in HAProxy, source and source-consistent may return a server at its
 * maxconn, and when only backups are usable (without allbackups) every
 * algorithm but static-rr and random returns the first backup full or not:
 * HAProxy queues the connection on that server.
 * When a HAProxy server is warming up (slow start), the pick first
 * re-evaluates its weight (HAProxy's warmup task) and any table rebuild this
 * causes adds table_writes. */
int32_t dp_sched_pick(dp_sched_t *s, const dp_sched_key_t *key, uint64_t now_ms, dp_ops_t *ops);

/* dp_sched_pick for a redispatch: the same pick, told which server the
 * connection's failed attempt went to (avoid: its id; negative: none, then
 * exactly dp_sched_pick). HAProxy 2.6's assign_server passes the stream's
 * previous server to the algorithm's lookup (src/backend.c), and each
 * lookup treats it its own way:
 *   roundrobin  lb_fwrr.c: the first time avoid comes out of the tree it is
 *               set aside like a saturated server (and requeued as consumed);
 *               the next server taken is returned; avoid itself when the
 *               trees run out
 *   static-rr, and uri/hdr without their parameter: lb_map.c
 *               map_get_server_rr: the next map slot's server that is not
 *               avoid; avoid (the index after it) when no other is left
 *   leastconn, first: lb_fwlc.c / lb_fas.c: the first server in tree order
 *               other than avoid; avoid when it is the only unsaturated one
 *   random      get_server_rnd: every draw's ring lookup walks past avoid
 *   source-consistent, uri-consistent, hdr-consistent: chash_get_server_hash
 *               walks the ring on past avoid's nodes (one full turn at most:
 *               then avoid); without the uri/hdr parameter
 *               chash_get_next_server skips avoid
 *   source, uri, hdr (hash-type map-based): map_get_server_hash ignores
 *               avoid: the key's map slot stands, even when it is avoid
 *   IPVS rr, wrr, lc, wlc: IPVS itself never redispatches; avoid is passed
 *               over like an unavailable destination and returned only when
 *               no other is available (HAProxy's rule for its lookups)
 *   sh, maglev: with DP_SCHED_CFG_FALLBACK the fallback walk passes avoid
 *               over (avoid when it finds no other); without it the hashed
 *               bucket stands, as HAProxy's map-based hashes
 * A backup returned because no active server is usable (the first backup
 * without allbackups) is returned even when it is avoid, as in HAProxy.
 * Server id (>= 0), DP_SCHED_ENOSERVER, or DP_SCHED_EINVAL (s NULL, avoid
 * >= max_servers). Ops as dp_sched_pick, counting every server the lookup
 * examines or sets aside (a skipped avoid counts as examined); IPVS wrr
 * that finds only avoid counts both of its scans. */
int32_t dp_sched_pick_avoid(dp_sched_t *s, const dp_sched_key_t *key, int32_t avoid, uint64_t now_ms,
                            dp_ops_t *ops);

/* For the key-mapping algorithms (sh, maglev, source, source-consistent,
 * uri, uri-consistent, hdr, hdr-consistent): the server key maps to now,
 * without changing any state (slow start is not re-evaluated). Server id,
 * DP_SCHED_ENOSERVER or DP_SCHED_ENOTKEYED. A uri/hdr key without its
 * parameter maps to no server (HAProxy round-robins it: no key mapping).
 * Ops as dp_sched_pick. The tables exist once dp_sched_build (or a first pick) has
 * run; before that the answer is DP_SCHED_ENOSERVER. */
int32_t dp_sched_lookup(const dp_sched_t *s, const dp_sched_key_t *key, dp_ops_t *ops);

/* Remap count: how many of keys[0..n-1] map to a different result under
 * after than under before (two states of one pool, e.g. before = a clone
 * taken before a server was removed). A key that maps to no server on one
 * side and to a server on the other counts as remapped. *moved receives the
 * count. 0, DP_SCHED_ENOTKEYED (rr, wrr, lc, wlc, roundrobin, static-rr,
 * leastconn, first and random map no key: with a session table only the
 * failed server's connections move; see docs/core.md) or DP_SCHED_EINVAL
 * (different algorithms). Ops: the lookups of both sides. */
int dp_sched_count_remapped(const dp_sched_t *before, const dp_sched_t *after, const dp_sched_key_t *keys,
                            uint32_t n, uint32_t *moved, dp_ops_t *ops);

/* Lookup-table access (maglev M entries, sh buckets, static-rr/source map
 * slots): the number of entries in use now, and the server id of entry i or
 * -1 when the entry is empty / i out of range. 0 entries for the other
 * algorithms; both answer as if empty until dp_sched_build (or a first pick)
 * has built the table. */
uint32_t dp_sched_table_size(const dp_sched_t *s);
int32_t dp_sched_table_entry(const dp_sched_t *s, uint32_t i);

/* Builds the algorithm's tables and trees now (what the first pick does, as
 * HAProxy does at configuration time). Ops: table_writes as set_server. */
void dp_sched_build(dp_sched_t *s, uint64_t now_ms, dp_ops_t *ops);

/* Number of whole-table entries whose server differs between two states of
 * one pool (maglev, sh, static-rr, source; both built). 0xFFFFFFFF when the
 * algorithms differ or have no table. For maglev and sh this is exactly the
 * fraction of the hash space remapped: entries differing / table size. */
uint32_t dp_sched_count_table_changes(const dp_sched_t *before, const dp_sched_t *after);

/* Connection accounting (the counts leastconn, lc, wlc, maxconn and IPVS
 * overload use). opened: active + 1 (IPVS sets OVERLOAD when active +
 * inactive reaches maxconn). to_inactive: IPVS: a connection left
 * ESTABLISHED (active - 1, inactive + 1). closed: one active (inactive = 0)
 * or inactive (inactive = 1) connection ended (IPVS clears OVERLOAD below 3/4
 * of maxconn). Work on any state, including draining and down. 0,
 * DP_SCHED_ENOENT or DP_SCHED_ECOUNT. Ops: leastconn adds table_writes 1
 * (the server is repositioned in its tree); none otherwise. */
int dp_sched_conn_opened(dp_sched_t *s, uint32_t id, dp_ops_t *ops);
int dp_sched_conn_to_inactive(dp_sched_t *s, uint32_t id, dp_ops_t *ops);
int dp_sched_conn_closed(dp_sched_t *s, uint32_t id, int inactive, dp_ops_t *ops);

/* A server's current view (eweight and maxconn_now as of the last pick or
 * change). 0 or DP_SCHED_ENOENT. */
int dp_sched_get_server(const dp_sched_t *s, uint32_t id, dp_sched_server_info_t *info);

#ifdef __cplusplus
}
#endif
#endif
