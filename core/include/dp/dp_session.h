/* L4 load-balancer connection/session table: per-core shards of fixed
 * capacity, two sessions per connection, TCP state tracking and idle aging
 * in the manner of Linux IPVS. No locks: each shard must be used (looked up,
 * opened, tracked, expired) by one thread at a time, its owning core's.
 *
 * A connection is the client->VIP flow a balancer accepted plus, after NAT,
 * the server->balancer flow its replies arrive on. Each is a SESSION keyed
 * by the 5-tuple the balancer sees: the inbound session by in_key (client ->
 * VIP), the outbound one by out_key (server -> balancer address after SNAT).
 * A lookup of either key finds the connection and says which direction the
 * packet travels (DP_SESS_DIR_IN: client->server, DP_SESS_DIR_OUT:
 * server->client). A connection opened without an out_key (direct server
 * return or tunnelling: replies bypass the balancer) has one session.
 *
 * Ownership. Shards are per application core, without locks; a key's shard
 * is chosen from dp_flow_hash(key) exactly as dp_flow_shard_of does (RSS-like
 * flow distribution). The core that owns in_key's shard opens the
 * connection and owns BOTH its sessions: dp_sess_open refuses
 * (DP_SESS_ESHARD) an out_key that hashes to another shard. The balancer
 * picks its SNAT port so that the reply flow hashes back to the opening
 * core (dp_sess_steer_port), as DPVS does for its FULLNAT local addresses
 * (src/sa_pool.c: "calc RSS the same way of NIC to select the correct CPU",
 * DPVS itself reserves port ranges per core and steers them with Flow
 * Director) and VPP's NAT44 does with per-worker port ranges. So both
 * sessions of a connection live in one shard, the peer link is a shard-local
 * slot, and every update is single-writer.
 *
 * Memory: at most 32 bytes per session of capacity, table overhead
 * included (30.72 B + a fixed 256 B per shard; see dp_sess_memory_size).
 * 8M sessions per core x 32 cores (128M connections) need 7.68 GiB.
 *
 * Time is a 32-bit tick in the caller's unit (e.g. milliseconds; ages are
 * compared modulo 2^32, so they are exact while shorter than 2^31 ticks:
 * about 24.8 days at 1 ms). Timeouts per state are configured in ticks;
 * dp_sess_config_init fills in IPVS's defaults for a given tick rate.
 *
 * Memory is the caller's: dp_sess_memory_size(cfg), then
 * dp_sess_create(mem, size, cfg). No malloc anywhere. */
#ifndef DP_SESSION_H
#define DP_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "dp_flow.h"
#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error returns (negative). */
#define DP_SESS_EINVAL (-1) /* bad argument (NULL, bad config, stale handle, in_key == out_key) */
#define DP_SESS_EFULL (-2)  /* shard at capacity: connection refused (caller drops it as
                               DP_DROP_SESSION_TABLE_FULL); counted in refused_full */
#define DP_SESS_ENOENT (-3) /* no such session / no port steers to the shard */
#define DP_SESS_ENOMEM (-4) /* memory given is smaller than dp_sess_memory_size */
#define DP_SESS_EEXIST (-5) /* in_key or out_key is already a session */
#define DP_SESS_ESHARD (-6) /* out_key hashes to another shard than in_key */

/* Limits. */
#define DP_SESS_MAX_SHARDS 65536u
#define DP_SESS_MAX_SESSIONS_PER_SHARD (1u << 28)
#define DP_SESS_MAX_SERVER 0xFFFFu      /* server (backend) indexes are 16-bit */
#define DP_SESS_MAX_TIMEOUT 0x7FFFFFFFu /* timeouts must be shorter than half the tick wrap */

/* TCP flag bits of the TCP header's flags byte (RFC 793). */
#define DP_SESS_TCP_FIN 0x01u
#define DP_SESS_TCP_SYN 0x02u
#define DP_SESS_TCP_RST 0x04u
#define DP_SESS_TCP_ACK 0x10u

/* Connection states. The TCP ones are IPVS's (net/netfilter/ipvs/
 * ip_vs_proto_tcp.c: tcp_states), named from the server's side of the
 * balancer: CLOSE_WAIT = the client sent FIN first, FIN_WAIT = the server
 * did, TIME_WAIT = both did. IPVS's LAST_ACK is never entered by its
 * tables, LISTEN only by connection sync and SYNACK only by its
 * secure_tcp table, so they are left out. Non-TCP connections are in
 * DP_SESS_UDP for their whole life (IPVS's UDP "NORMAL"). */
typedef enum dp_sess_state {
    DP_SESS_NONE = 0,        /* opened, no segment tracked yet (IPVS NONE) */
    DP_SESS_SYN_SENT = 1,    /* the server sent a SYN (server-initiated open) */
    DP_SESS_SYN_RECV = 2,    /* the client's SYN was seen */
    DP_SESS_ESTABLISHED = 3, /* handshake completed */
    DP_SESS_FIN_WAIT = 4,    /* the server sent FIN */
    DP_SESS_CLOSE_WAIT = 5,  /* the client sent FIN */
    DP_SESS_TIME_WAIT = 6,   /* both sides sent FIN */
    DP_SESS_CLOSED = 7,      /* reset, or a segment with no SYN/FIN/ACK/RST */
    DP_SESS_UDP = 8,         /* any non-TCP protocol */
    DP_SESS_STATE_COUNT = 9
} dp_sess_state_t;

/* Direction of a packet relative to the connection. */
typedef enum dp_sess_dir {
    DP_SESS_DIR_IN = 0,  /* client -> server: matched in_key */
    DP_SESS_DIR_OUT = 1, /* server -> client: matched out_key */
    DP_SESS_DIR_NONE = 0xFF /* bulk lookup miss */
} dp_sess_dir_t;

typedef struct dp_sess_config {
    uint32_t shards;             /* one per application core, 1..DP_SESS_MAX_SHARDS */
    uint32_t sessions_per_shard; /* capacity of each shard in sessions (a connection takes 2, or 1
                                    without out_key), 2..DP_SESS_MAX_SESSIONS_PER_SHARD */
    uint32_t timeout[DP_SESS_STATE_COUNT]; /* idle timeout per state in ticks, 1..DP_SESS_MAX_TIMEOUT */
} dp_sess_config_t;

/* Connection handle: valid until the connection is closed or expires
 * (slots are reused; a stale handle is detected only when the slot an
 * operation reads is empty, of the other direction, or not linked to the
 * handle's other slot). Operations check the handle against the record
 * they read and its bucket's used mask, which the lookup that gave the
 * handle just read: the checks add nothing to ops. */
typedef struct dp_sess_conn {
    uint32_t shard;   /* owning shard (core) */
    uint32_t slot[2]; /* slot of the IN session and of the OUT session (equal without out_key) */
} dp_sess_conn_t;

/* What a lookup found: everything the per-packet path needs, read from the
 * one session record the lookup compared. */
typedef struct dp_sess_hit {
    dp_sess_conn_t conn; /* the connection */
    uint8_t dir;         /* dp_sess_dir_t of the packet; DP_SESS_DIR_NONE on a bulk miss */
    uint8_t state;       /* dp_sess_state_t of the connection */
    uint16_t server;     /* server (backend) index given to dp_sess_open */
} dp_sess_hit_t;

/* Everything stored about a connection (dp_sess_get). */
typedef struct dp_sess_info {
    dp_flow_key_t in_key;  /* client -> VIP key */
    dp_flow_key_t out_key; /* server -> balancer key; all zero when has_out is 0 */
    uint8_t has_out;       /* 1 when the connection has an outbound session */
    uint8_t state;         /* dp_sess_state_t */
    uint16_t server;       /* server index */
    uint32_t last_seen[2]; /* tick of the last tracked packet per direction (the open time until then;
                              both the IN session's for a one-session connection) */
} dp_sess_info_t;

/* Per-shard counters. Connection counts, unless named sessions. */
typedef struct dp_sess_shard_stats {
    uint32_t entries;      /* sessions held now */
    uint32_t capacity;     /* sessions_per_shard */
    uint32_t connections;  /* connections held now */
    uint32_t buckets;      /* buckets of 5 slots (slots = 5 x buckets >= 1.2 x capacity) */
    uint64_t inserts;      /* connections opened */
    uint64_t refused_full; /* connections refused because the shard had no room for their sessions */
    uint64_t expired;      /* connections removed by dp_sess_expire */
    uint64_t deletes;      /* connections removed by dp_sess_close */
    uint32_t by_state[DP_SESS_STATE_COUNT];         /* connections now in each state */
    uint64_t expired_by_state[DP_SESS_STATE_COUNT]; /* expired connections by the state they were in */
} dp_sess_shard_stats_t;

typedef struct dp_sess_table dp_sess_table_t;

/* Fills cfg: shards, sessions_per_shard, and IPVS's default timeouts
 * (ip_vs_proto_tcp.c tcp_timeouts, ip_vs_proto_udp.c udp_timeouts) in
 * ticks of 1/ticks_per_second s: NONE 2 s, SYN_SENT 120 s, SYN_RECV 60 s,
 * ESTABLISHED 900 s, FIN_WAIT 120 s, CLOSE_WAIT 60 s, TIME_WAIT 120 s,
 * CLOSED 10 s, UDP 300 s (each capped at DP_SESS_MAX_TIMEOUT). */
void dp_sess_config_init(dp_sess_config_t *cfg, uint32_t shards, uint32_t sessions_per_shard,
                         uint32_t ticks_per_second);

/* Bytes needed for cfg (exact; includes 127 bytes of alignment slack):
 *   127 + 128 + shards x (256 + 128 x ceil(sessions_per_shard x 6 / 25)).
 * 0 when cfg is invalid. */
size_t dp_sess_memory_size(const dp_sess_config_t *cfg);

/* Builds an empty table in mem. Returns it, or NULL if mem is NULL or
 * smaller than dp_sess_memory_size(cfg), or cfg is invalid. */
dp_sess_table_t *dp_sess_create(void *mem, size_t mem_size, const dp_sess_config_t *cfg);

/* Shard that owns key: (dp_flow_hash(key) x shards) >> 32, the same as
 * dp_flow_shard_of for the same shard count. Adds nothing to ops. */
uint32_t dp_sess_shard_of(const dp_sess_table_t *t, const dp_flow_key_t *key);

/* Picks the balancer's port of an outbound key so that its reply flow lands
 * in `shard`: tries key->dst_port = start, start+1, ..., hi, then lo, ...,
 * start-1 and keeps the first whose key hashes to `shard`. 0 (key->dst_port
 * set), DP_SESS_ENOENT (none in [lo, hi]; key unchanged) or DP_SESS_EINVAL
 * (lo > hi, start outside [lo, hi], shard out of range). Whether the port is
 * free is the caller's business (dp_sess_open says EEXIST). Ops: hashes +1
 * per port tried. */
int dp_sess_steer_port(const dp_sess_table_t *t, dp_flow_key_t *key, uint32_t shard, uint16_t lo,
                       uint16_t hi, uint16_t start, dp_ops_t *ops);

/* Opens a connection: in_key's shard takes its sessions (both, or one when
 * out_key is NULL), state NONE for TCP (proto 6) and UDP for anything else,
 * last-seen = now in both directions. On success sets *conn (may be NULL)
 * and returns 0. Refusals change nothing but the counter named:
 *   DP_SESS_EINVAL  NULL table/in_key, server > DP_SESS_MAX_SERVER, or out_key equal to in_key
 *   DP_SESS_ESHARD  out_key hashes to another shard
 *   DP_SESS_EEXIST  in_key or out_key already held
 *   DP_SESS_EFULL   the shard lacks room for the sessions (refused_full +1)
 * Ops: hashes +1 per key; the existence check of each key counts as a
 * lookup (below) that misses; then per session inserted: from its home
 * bucket on, table_probes +1 and cache_lines +1 per bucket header read
 * (full buckets passed and the one it lands in), table_writes +1 per full
 * bucket passed (its overflow count), +2 for the record and its bucket
 * header, cache_lines +1 when the record lies (partly) in the bucket's
 * second line (slots 2, 3, 4). */
int dp_sess_open(dp_sess_table_t *t, const dp_flow_key_t *in_key, const dp_flow_key_t *out_key,
                 uint32_t server, uint32_t now, dp_sess_conn_t *conn, dp_ops_t *ops);

/* Looks key up in its shard. 0 and *hit set, or DP_SESS_ENOENT.
 * Changes nothing (dp_sess_track refreshes). Bucket layout: 128 bytes =
 * 2 cache lines; line 0 holds the header (5 tags, used mask, overflow
 * count) and slots 0-1, slot 2 straddles both lines, slots 3-4 are in line 1.
 * Ops: hashes +1; per bucket visited (home first, then on while the
 * visited bucket's overflow count is nonzero): table_probes +1 for the
 * header, +1 per used slot whose 8-bit tag matches (its key is compared);
 * cache_lines +1 for line 0, +1 if a compared slot lies (partly) in line 1. */
int dp_sess_lookup(const dp_sess_table_t *t, const dp_flow_key_t *key, dp_sess_hit_t *hit,
                   dp_ops_t *ops);

/* Looks up n keys (any n, 0 included): hits[i] as dp_sess_lookup sets it,
 * with hits[i].dir = DP_SESS_DIR_NONE on a miss; nothing past hits[n - 1]
 * is written. Keys go in groups of 8, in three stages as in DPDK's
 * rte_hash_lookup_bulk: a group's 8 hashes are computed together and its
 * home buckets prefetched two groups before it is compared; one group
 * before, its home headers are read and, for each key whose tags there do
 * not match while the walk goes on, the next 3 buckets are prefetched too,
 * so the cache misses of 16 keys overlap, walks included. Same results and
 * ops as n calls of dp_sess_lookup (a key repeated in the burst is found
 * each time). Returns the number found; 0 with nothing written when t,
 * keys or hits is NULL. */
unsigned dp_sess_lookup_bulk(const dp_sess_table_t *t, const dp_flow_key_t *keys, unsigned n,
                             dp_sess_hit_t *hits, dp_ops_t *ops);

/* Pure TCP transition (IPVS tcp_states): the state after a segment with
 * `tcp_flags` travelling in `dir`, from `state`. The flag that decides is
 * RST, else SYN, else FIN, else ACK; a segment with none of them gives
 * CLOSED (as IPVS). input_only selects IPVS's INPUT-ONLY table, used for
 * connections without an outbound session (replies not seen: FIN from the
 * client in ESTABLISHED gives FIN_WAIT, FIN in FIN_WAIT stays). UDP and
 * out-of-range states are returned unchanged. */
dp_sess_state_t dp_sess_tcp_next(dp_sess_state_t state, dp_sess_dir_t dir, int input_only,
                                 uint8_t tcp_flags);

/* Tracks one packet of the connection travelling in dir: the state moves
 * by dp_sess_tcp_next (TCP only; tcp_flags ignored for UDP) and dir's
 * last-seen becomes now. Returns the new state (>= 0), or DP_SESS_EINVAL
 * for a bad or stale handle or a dir the connection does not have.
 * Ops: table_probes +1 and table_writes +1 (dir's record, which the
 * lookup just brought in: cache_lines 0); when the state changes and the
 * connection has two sessions, the peer record's state is written too:
 * table_writes +1, cache_lines +1 (+1 more for a peer in slot 2, which
 * straddles two lines). */
int dp_sess_track(dp_sess_table_t *t, dp_sess_conn_t conn, dp_sess_dir_t dir, uint8_t tcp_flags,
                  uint32_t now, dp_ops_t *ops);

/* Server index of the connection, or DP_SESS_EINVAL for a bad handle.
 * Reads the IN record; adds nothing to ops (lookup returns it too). */
int dp_sess_server(const dp_sess_table_t *t, dp_sess_conn_t conn);

/* Everything about the connection (keys for NAT rewrites, state, server,
 * last-seen per direction). 0 or DP_SESS_EINVAL. Ops: table_probes +1 per
 * session record read (1 or 2); cache_lines as for the peer in
 * dp_sess_track for the second record. */
int dp_sess_get(const dp_sess_table_t *t, dp_sess_conn_t conn, dp_sess_info_t *info, dp_ops_t *ops);

/* Removes both sessions of the connection (close on RST/FIN, or the
 * caller's policy). 0 or DP_SESS_EINVAL (bad or stale handle).
 * deletes +1. Ops per session removed: hashes +1 (its home bucket is
 * recomputed from its key), table_writes +1 per bucket between home and
 * its bucket (overflow counts) and +1 for its bucket header; and
 * table_probes +1 per record read (1 or 2). */
int dp_sess_close(dp_sess_table_t *t, dp_sess_conn_t conn, dp_ops_t *ops);

/* Idle aging of one shard: scans up to `budget` buckets (0: all) from
 * where the previous call stopped, wrapping, and removes each connection
 * idle for at least its state's timeout: now - (the later of its two
 * last-seen ticks) >= timeout[state], differences taken modulo 2^32 and a
 * last-seen "after" now (difference >= 2^31) meaning not idle. Both
 * sessions of a connection go together (judged when its IN session is
 * scanned). Returns the connections removed; expired and
 * expired_by_state count them. Ops per bucket scanned: table_probes
 * +1 + (used slots), cache_lines +2; per connection judged that has two
 * sessions: table_probes +1 and cache_lines +1 (+1 for slot 2) for its
 * peer record; removals as in dp_sess_close without its probes. */
uint32_t dp_sess_expire(dp_sess_table_t *t, uint32_t shard, uint32_t now, uint32_t budget,
                        dp_ops_t *ops);

/* What dp_sess_expire_report says of each connection it removed: enough
 * for the caller to settle its own books (a scheduler's active-connection
 * count for the server, keyed by the virtual service in in_key). */
typedef struct dp_sess_expired {
    dp_flow_key_t in_key; /* the connection's client -> VIP key */
    uint16_t server;      /* server index given to dp_sess_open */
    uint8_t state;        /* dp_sess_state_t it was in when it expired */
    uint8_t reserved;     /* zero */
} dp_sess_expired_t;

/* dp_sess_expire that also reports each connection removed, in scan order,
 * in out[0..*n_out). A bucket holds at most 5 connections, so the scan
 * stops before a bucket when fewer than 5 entries of out are free (the
 * next call resumes there): out_cap must be >= 5 (else nothing is scanned
 * and 0 returned). Returns the connections removed (= *n_out);
 * *scanned (may be NULL) receives the buckets scanned, so that a caller
 * with a budget knows what is left of it. Ops as dp_sess_expire:
 * reporting adds nothing. */
uint32_t dp_sess_expire_report(dp_sess_table_t *t, uint32_t shard, uint32_t now, uint32_t budget,
                               dp_sess_expired_t *out, uint32_t out_cap, uint32_t *n_out,
                               uint32_t *scanned, dp_ops_t *ops);

/* Counters of shard; all zero when t is NULL or shard out of range. */
void dp_sess_get_shard_stats(const dp_sess_table_t *t, uint32_t shard, dp_sess_shard_stats_t *st);

/* "none", "syn_sent", "syn_recv", "established", "fin_wait", "close_wait",
 * "time_wait", "closed", "udp"; "unknown" when out of range. */
const char *dp_sess_state_name(dp_sess_state_t state);

#ifdef __cplusplus
}
#endif
#endif
