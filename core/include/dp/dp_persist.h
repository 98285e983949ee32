/* Persistence: which server a returning client goes back to.
 *
 * 1. Stick table (dp_persist_*): a bounded key -> server table with expiry.
 *    Keys are byte strings of one fixed length per table: 4 bytes for
 *    HAProxy's "stick-table type ip" + "stick on src" and IPVS persistence
 *    (ipvsadm -p: a template per client address), 16 for "type ipv6", up
 *    to 32 for an SSL session ID (dp_tls_parse_client_hello's session_id;
 *    HAProxy "stick on req.ssl_sid" in a "type binary len 32" table).
 *    Semantics (HAProxy 2.6 configuration.txt, 4.2 "stick-table" and "stick
 *    on"):
 *      - "stick on" = "stick match" + "stick store-request": look the key up
 *        (dp_persist_lookup); a hit names the server (the caller uses it
 *        when that server is usable, else balances); after balancing, store
 *        the chosen server (dp_persist_store);
 *      - "expire <expire>: the maximum duration of an entry in the table
 *        since it was last created, refreshed ... or matched": a store or a
 *        lookup hit sets expire_at = now + expire_ms; an entry whose
 *        expire_at has passed is a miss and is freed (counted `expired`).
 *        IPVS persistence templates live `-p` seconds (default 300 s)
 *        past the last connection that used them; IPVS also keeps a
 *        template while connections it controls are still open (its
 *        n_control count), which this table does not track: the caller
 *        refreshes the entry (a lookup) while such connections live;
 *      - full table: "it will flush a few of the oldest entries in order to
 *        release some space" (default, DP_PERSIST_FULL_PURGE: counted
 *        `purged`), or with "nopurge" "refuse new entries"
 *        (DP_PERSIST_FULL_REFUSE: DP_PERSIST_EFULL, counted `refused_full`;
 *        the model drops the connection as DP_DROP_SESSION_TABLE_FULL or
 *        serves it without persistence, as its profile says).
 *    Layout: set-associative, sets of DP_PERSIST_WAYS entries; a key lives
 *    in the set its hash names (MurmurHash3-style mixing of the key bytes
 *    read as big-endian words: the same set on every byte order). "The
 *    oldest" is the set's least recently stored or matched entry (with a
 *    lifetime, also the first to expire), found within that set only, so
 *    a purge is bounded work; HAProxy's purge is table-wide. An entry is 56
 *    bytes. Memory is the caller's.
 *
 * 2. Cookie persistence decisions (dp_persist_cookie_*): what HAProxy's
 *    "cookie <name> [rewrite|insert|prefix] [indirect] [nocache]
 *    [preserve]" does to a request and to its response, as a decision the
 *    L7 model then carries out with dp_cookie (find, insert, rewrite,
 *    prefix; dp_splice for the sequence space). From configuration.txt 4.2
 *    "cookie" and doc/cookie-options.txt:
 *      - request: a cookie naming a server that is not DOWN sends the
 *        request there ("direct"); one naming a DOWN server is ignored and
 *        the request balanced, unless "option persist" forces it there
 *        (HAProxy's cookie lookup: TX_CK_DOWN unless PR_O_PERSIST); no or
 *        unknown cookie: balance. prefix: the "<id>~" prefix is removed
 *        from the request; insert + indirect: the cookie is removed from
 *        the request ("making the persistence mechanism totally
 *        transparent");
 *      - response, insert: Set-Cookie is inserted only when the request
 *        was not sent direct by a valid cookie ("if the client did not
 *        already have a cookie that would have permitted it to access this
 *        server"; HAProxy tests SF_DIRECT); a server's own cookie of that
 *        name is removed first unless preserve, and with preserve a server
 *        cookie is left untouched and nothing inserted; nocache: "a
 *        cacheable response will be tagged non-cacheable if a cookie needs
 *        to be inserted" ("Cache-control: private" added only when the
 *        response is cacheable by HAProxy's rule: a status >= 200, no
 *        Pragma: no-cache, no Cache-Control private/no-cache/no-store/
 *        max-age=0, and freshness (max-age, Expires) or a validator (ETag,
 *        Last-Modified); the live check saw no header on a bare 200);
 *      - response, rewrite: a cookie the server sets gets the server's id
 *        as value; prefix: the id and '~' go before the server's value;
 *        passive or prefix + indirect: a server cookie is removed when the
 *        client already held a valid one ("remove response if not
 *        needed").
 *    "option redispatch" does not act here: it moves retries of a FAILED
 *    connection to another server (see the lb model's retry logic).
 *    Pre-arranged cookies (servers set Server=A themselves; the NCTU
 *    switches map the value by a rule) are HAProxy's passive mode: the
 *    request phase only (mode DP_PERSIST_COOKIE_PASSIVE).
 *    Not modelled: postonly, maxidle/maxlife dates, dynamic cookies.
 */
#ifndef DP_PERSIST_H
#define DP_PERSIST_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_PERSIST_EINVAL (-1)    /* bad argument or configuration */
#define DP_PERSIST_ENOTFOUND (-2) /* lookup: no live entry for the key */
#define DP_PERSIST_EFULL (-3)     /* store: the key's set is full and the table refuses (nopurge) */

#define DP_PERSIST_MAX_KEY 32u /* longest key: an SSL session ID */
#define DP_PERSIST_WAYS 8u     /* entries per set */

#define DP_PERSIST_FULL_PURGE 0  /* HAProxy default: replace the set's oldest entry */
#define DP_PERSIST_FULL_REFUSE 1 /* HAProxy nopurge: refuse the new key */

typedef struct dp_persist_config {
    uint32_t capacity;  /* entries, >= 1; rounded up to a power-of-two number of sets of DP_PERSIST_WAYS */
    uint32_t key_len;   /* key bytes, 1..DP_PERSIST_MAX_KEY (4: IPv4 source, 32: SSL session ID) */
    uint32_t expire_ms; /* lifetime since the last store or hit; 0: never expires */
    uint32_t on_full;   /* DP_PERSIST_FULL_PURGE or DP_PERSIST_FULL_REFUSE */
} dp_persist_config_t;

typedef struct dp_persist dp_persist_t;

typedef struct dp_persist_stats {
    uint32_t entries;      /* live entries held (expired ones not yet met count until freed) */
    uint32_t capacity;     /* entries the table can hold (after rounding) */
    uint64_t lookups;      /* dp_persist_lookup calls */
    uint64_t hits;         /* lookups that found a live entry */
    uint64_t stores;       /* new keys stored */
    uint64_t updates;      /* stores that changed or refreshed an existing key */
    uint64_t expired;      /* entries freed because their time had passed */
    uint64_t purged;       /* live entries replaced to make room (DP_PERSIST_FULL_PURGE) */
    uint64_t refused_full; /* stores refused (DP_PERSIST_EFULL) */
    uint64_t removed;      /* entries removed by dp_persist_remove / dp_persist_forget_server */
} dp_persist_stats_t;

/* Bytes for cfg; 0 when cfg is invalid. */
size_t dp_persist_memory_size(const dp_persist_config_t *cfg);
/* Builds an empty table in mem; NULL when mem is too small or cfg invalid. */
dp_persist_t *dp_persist_create(void *mem, size_t mem_size, const dp_persist_config_t *cfg);
void dp_persist_get_stats(const dp_persist_t *t, dp_persist_stats_t *st);

/* Builds a 4-byte key from an IPv4 address in host order (network byte
 * order in the key). */
void dp_persist_key_ipv4(uint32_t addr, uint8_t key[4]);

/* Looks key (key_len bytes) up at now_ms. A live entry returns its server
 * (>= 0) and has its expiry refreshed ("matched"); an expired one is freed
 * and DP_PERSIST_ENOTFOUND returned. Adds hashes = 1, table_probes = ways
 * examined w (1..DP_PERSIST_WAYS: up to the key's way, else all),
 * cache_lines = ceil(w * 56 / 64), table_writes = 1 on a hit or an
 * expiry. */
int32_t dp_persist_lookup(dp_persist_t *t, const uint8_t *key, uint64_t now_ms, dp_ops_t *ops);

/* Stores key -> server (server >= 0) at now_ms: updates the key's entry if
 * it exists (1), else takes a free or expired way (0), else the set's
 * oldest (0, counted purged) or refuses (DP_PERSIST_EFULL) per on_full.
 * Adds hashes = 1, table_probes = DP_PERSIST_WAYS (the whole set is read
 * to find the key, a free way and the oldest), cache_lines = 7 (the set's
 * 448 bytes), table_writes = 1 unless refused. */
int dp_persist_store(dp_persist_t *t, const uint8_t *key, int32_t server, uint64_t now_ms, dp_ops_t *ops);

/* Removes key: 0, or DP_PERSIST_ENOTFOUND. Adds what a lookup adds. */
int dp_persist_remove(dp_persist_t *t, const uint8_t *key, dp_ops_t *ops);

/* Removes every entry pointing at server (IPVS: a real server deleted, its
 * templates go; HAProxy keeps them, so the caller decides). Returns the
 * count. Adds table_probes = capacity, table_writes = count. */
uint32_t dp_persist_forget_server(dp_persist_t *t, int32_t server, dp_ops_t *ops);

/* Frees entries expired at now_ms in up to max_sets sets starting at the
 * table's sweep cursor (a budgeted sweep like dp_sess_expire); returns how
 * many were freed. Adds table_probes = ways examined, table_writes =
 * freed. */
uint32_t dp_persist_expire(dp_persist_t *t, uint64_t now_ms, uint32_t max_sets, dp_ops_t *ops);

/* ---- cookie persistence decisions --------------------------------------- */

typedef enum dp_persist_cookie_mode {
    DP_PERSIST_COOKIE_PASSIVE = 0, /* pre-arranged: the servers' own cookie, read only */
    DP_PERSIST_COOKIE_INSERT,      /* HAProxy insert */
    DP_PERSIST_COOKIE_REWRITE,     /* HAProxy rewrite */
    DP_PERSIST_COOKIE_PREFIX,      /* HAProxy prefix */
    DP_PERSIST_COOKIE__MODES
} dp_persist_cookie_mode_t;

/* Options (dp_persist_cookie_config_t.flags). */
#define DP_PERSIST_COOKIE_INDIRECT 0x1u   /* "indirect" */
#define DP_PERSIST_COOKIE_NOCACHE 0x2u    /* "nocache" */
#define DP_PERSIST_COOKIE_PRESERVE 0x4u   /* "preserve" */
#define DP_PERSIST_COOKIE_PERSIST 0x8u    /* "option persist": follow a cookie even to a DOWN server */

typedef struct dp_persist_cookie_config {
    uint32_t mode;  /* dp_persist_cookie_mode_t */
    uint32_t flags; /* DP_PERSIST_COOKIE_* */
} dp_persist_cookie_config_t;

/* Checks a configuration against doc/cookie-options.txt's forbidden rows
 * (rewrite + indirect; preserve without insert or indirect). 0 or
 * DP_PERSIST_EINVAL. */
int dp_persist_cookie_check(const dp_persist_cookie_config_t *cfg);

/* Request-side actions (bits of dp_persist_cookie_request_t.actions). */
#define DP_PERSIST_REQ_USE_COOKIE_SERVER 0x1u /* direct: send to the cookie's server; do not balance */
#define DP_PERSIST_REQ_BALANCE 0x2u           /* no usable cookie: the scheduler picks */
#define DP_PERSIST_REQ_STRIP_COOKIE 0x4u      /* remove the cookie from the request (insert + indirect) */
#define DP_PERSIST_REQ_STRIP_PREFIX 0x8u      /* remove "<id>~" from the cookie value (prefix) */

typedef struct dp_persist_cookie_request {
    uint32_t actions;       /* DP_PERSIST_REQ_* */
    int32_t server;         /* the cookie's server when USE_COOKIE_SERVER, else -1 */
    uint32_t direct;        /* 1 when sent by the cookie (HAProxy SF_DIRECT), for the response phase */
    int32_t cookie_server;  /* server the request's cookie named (-1: none or unknown), kept for the response */
} dp_persist_cookie_request_t;

/* Request phase. cookie_server: the server the request's persistence
 * cookie names (found with dp_cookie_find and mapped by the caller's
 * server-id table; -1 when absent or matching no server; for prefix mode
 * the id before '~'). server_usable: 1 when that server is not DOWN (nor
 * in maintenance). Returns 0 or DP_PERSIST_EINVAL. Adds rules_evaluated =
 * 1. */
int dp_persist_cookie_request(const dp_persist_cookie_config_t *cfg, int32_t cookie_server, int server_usable,
                              dp_persist_cookie_request_t *out, dp_ops_t *ops);

/* Response-side actions. */
#define DP_PERSIST_RESP_INSERT 0x1u        /* insert Set-Cookie: <name>=<served-by id> (dp_cookie_insert) */
#define DP_PERSIST_RESP_NOCACHE 0x2u       /* add Cache-Control: private (inserting into a cacheable response) */
#define DP_PERSIST_RESP_REMOVE_SERVER 0x4u /* remove the server's own Set-Cookie of that name */
#define DP_PERSIST_RESP_REWRITE 0x8u       /* replace the server cookie's value by the id (dp_cookie_rewrite) */
#define DP_PERSIST_RESP_PREFIX 0x10u       /* put "<id>~" before the server cookie's value (dp_cookie_prefix) */

/* Response phase: req from the request phase, served_by the server that
 * answered, server_set_cookie 1 when its response sets a cookie of the
 * persistence name, cacheable 1 when the response is cacheable (above).
 * Returns the DP_PERSIST_RESP_* bits (>= 0) or DP_PERSIST_EINVAL. Adds
 * rules_evaluated = 1. */
int dp_persist_cookie_response(const dp_persist_cookie_config_t *cfg, const dp_persist_cookie_request_t *req,
                               int32_t served_by, int server_set_cookie, int cacheable, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
