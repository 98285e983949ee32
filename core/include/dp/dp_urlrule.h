/* URL switching rules of an L7 web switch: match a request's path or Host
 * and name a target (a server or a server group).
 *
 * Rule kinds follow HAProxy's ACL match methods (HAProxy configuration
 * manual, 7.3.6 "Fetching HTTP samples", `path` and `hdr`, with 7.1.3
 * "Matching strings"):
 *   DP_URL_PATH_BEG  `path_beg`: the path starts with the pattern (the
 *                    "directory" rules of the NCTU comparison, e.g. /cgi/)
 *   DP_URL_PATH_SUB  `path_sub`: the pattern occurs in the path
 *   DP_URL_PATH_END  `path_end`: the path ends with the pattern
 *   DP_URL_EXT       "file extension" (Cisco, F5, Foundry, Radware): the
 *                    path ends with "." + pattern, i.e. HAProxy
 *                    `path_end .gif`; stored as that suffix
 *   DP_URL_HOST      `hdr(host)`: the Host value equals the pattern
 * DP_URL_ICASE compares case-insensitively (HAProxy's -i). The path is
 * dp_http_path's (HAProxy's `path`: no query string).
 *
 * Order: in DP_URLRULE_FIRST mode rules are evaluated in the order added
 * and the first match wins (HAProxy's use_backend lines; products without
 * rule precedence: F5, Radware); in DP_URLRULE_PRECEDENCE mode by
 * ascending precedence value, ties in the order added (Nortel, Cisco,
 * Foundry). dp_urlrule_match_all evaluates every rule and reports every
 * match: the per-server rule lists of the Nortel ACE 180e, which the NCTU
 * paper (section 5.5) describes as checking all 50 rules of each of 14
 * servers, 700 checks, before it knows which servers qualify.
 *
 * Cost: comparisons are naive, one byte compare at a time, and are counted:
 * each rule evaluated adds 1 to rules_evaluated, and each byte comparison
 * 1 to bytes_parsed (documented per kind at dp_urlrule_eval). The model
 * prices these; 3 rules versus 50, or 700 checks, cost what they cost.
 * No regular expressions (Nortel and Cisco offered them; not modelled). */
#ifndef DP_URLRULE_H
#define DP_URLRULE_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_URLRULE_EINVAL (-1) /* bad config or argument, or pattern empty or over 255 bytes */
#define DP_URLRULE_ENOSPC (-2) /* rule or pattern store full */
#define DP_URLRULE_ENOMATCH (-3) /* no rule matches: the model counts DP_DROP_URL_NO_MATCH
                                    unless the service has a default target */

typedef enum dp_urlrule_kind {
    DP_URL_PATH_BEG = 0,
    DP_URL_PATH_SUB,
    DP_URL_PATH_END,
    DP_URL_EXT,
    DP_URL_HOST,
    DP_URL__KINDS
} dp_urlrule_kind_t;

#define DP_URL_ICASE 0x01u /* case-insensitive comparison (HAProxy -i) */

typedef enum dp_urlrule_order {
    DP_URLRULE_FIRST = 0,      /* order added */
    DP_URLRULE_PRECEDENCE = 1  /* ascending precedence, then order added */
} dp_urlrule_order_t;

typedef struct dp_urlrule_config {
    uint32_t max_rules;         /* rules the table holds */
    uint32_t max_pattern_bytes; /* total pattern bytes (an EXT rule stores 1 + its length) */
    uint8_t order;              /* dp_urlrule_order_t */
    uint8_t pad[3];             /* zero */
} dp_urlrule_config_t;

/* One rule, as stored (read-only to callers). */
typedef struct dp_urlrule {
    uint32_t target;     /* caller's server or group id */
    uint32_t pat_off;    /* pattern offset in the pattern store */
    uint16_t precedence; /* smaller first (DP_URLRULE_PRECEDENCE) */
    uint8_t pat_len;     /* pattern bytes (EXT: the "." included) */
    uint8_t kind;        /* dp_urlrule_kind_t */
    uint8_t flags;       /* DP_URL_ICASE */
    uint8_t pad[3];      /* zero */
    uint32_t seq;        /* order added */
} dp_urlrule_t;

/* What a request offers to the rules: its path (dp_http_path) and Host. */
typedef struct dp_urlrule_req {
    const uint8_t *path;
    uint32_t path_len;
    const uint8_t *host;
    uint32_t host_len;
} dp_urlrule_req_t;

typedef struct dp_urlrule_table dp_urlrule_table_t;

/* Bytes of caller memory for cfg; 0 when cfg is invalid (max_rules 0). */
size_t dp_urlrule_memory_size(const dp_urlrule_config_t *cfg);

/* Builds an empty table in mem[0..size) (8-byte aligned); NULL when size
 * is too small or cfg invalid. */
dp_urlrule_table_t *dp_urlrule_create(void *mem, size_t size, const dp_urlrule_config_t *cfg);

/* Adds a rule; returns its index in evaluation order (>= 0) or an error.
 * DP_URLRULE_PRECEDENCE keeps the rules sorted: the new rule goes after
 * every rule of smaller or equal precedence, and the rules after it move
 * one place. Adds table_writes 1 + rules moved, bytes_copied pattern
 * bytes stored. */
int dp_urlrule_add(dp_urlrule_table_t *t, dp_urlrule_kind_t kind, uint8_t flags, const char *pattern,
                   uint16_t precedence, uint32_t target, dp_ops_t *ops);

/* Rules in the table, and rule i in evaluation order (NULL out of range). */
uint32_t dp_urlrule_count(const dp_urlrule_table_t *t);
const dp_urlrule_t *dp_urlrule_get(const dp_urlrule_table_t *t, uint32_t i);

/* Evaluates rule i against r: 1 match, 0 no match. Adds rules_evaluated 1
 * and bytes_parsed = byte comparisons made, which are, with s the subject
 * (path, or Host for DP_URL_HOST), n its length, m the pattern length:
 *   PATH_BEG: 0 if n < m, else the bytes compared left to right up to and
 *             including the first mismatch (m when all match);
 *   PATH_END, EXT: the same over s[n-m..n) left to right;
 *   HOST:     0 if n != m, else as PATH_BEG;
 *   PATH_SUB: for each start 0..n-m in turn, the bytes compared up to and
 *             including the first mismatch (m at a match, which stops the
 *             search); 0 if n < m. */
int dp_urlrule_eval(const dp_urlrule_table_t *t, uint32_t i, const dp_urlrule_req_t *r, dp_ops_t *ops);

/* First matching rule in evaluation order: its index (>= 0), *target set;
 * or DP_URLRULE_ENOMATCH. Adds what each rule evaluated adds (rules up to
 * and including the match, or all of them). */
int dp_urlrule_match(const dp_urlrule_table_t *t, const dp_urlrule_req_t *r, uint32_t *target, dp_ops_t *ops);

/* Evaluates every rule; writes the indices of the matching ones, in
 * evaluation order, to out[0..cap) and returns how many matched (which
 * may exceed cap; only cap are written). Adds what all rules add. */
int dp_urlrule_match_all(const dp_urlrule_table_t *t, const dp_urlrule_req_t *r, uint32_t *out, uint32_t cap,
                         dp_ops_t *ops);

const char *dp_urlrule_kind_name(dp_urlrule_kind_t k); /* "path_beg", ...; "unknown" */

#ifdef __cplusplus
}
#endif
#endif
