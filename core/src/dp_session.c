#include "dp_session.h"
#include "dp_murmur.h"

#include <string.h>

/* Layout. A shard is an array of 128-byte buckets (two cache lines, 128-byte
 * aligned): an 8-byte header (a tag per slot, a used mask, an overflow
 * count) and five 24-byte session records. Everything a per-packet lookup
 * needs (key, direction, state, server, peer slot) is in the record, so a
 * lookup reads the header line and usually nothing else but the matching
 * record, which shares line 0 with the header for slots 0-1.
 *
 * Budget: 32 bytes per session of capacity, overhead included (128M
 * connections = 256M sessions in 8 GiB). A record is 24 bytes and a slot
 * costs 25.6 bytes with its share of the header, so a shard gets 1.2 slots
 * per session of capacity (30.72 bytes per session; a full shard is 83%
 * loaded) and still fits. Five-slot buckets keep linear probing short at
 * that load.
 *
 * Collisions: bucketized linear probing with overflow counts instead of
 * tombstones (as dp_flow.c and F14): an insert walking past a full bucket
 * increments its overflow count, a lookup stops at the first bucket whose
 * count is zero, a removal decrements the counts along the same path. Since
 * slots outnumber the capacity, an insert into a shard that is not full
 * always finds a free slot, and removals leave no residue. Records never
 * move, so a connection's slots (its handle and its peer links) stay valid
 * for its life. */
#define SLOTS 5u
#define ALL_USED 0x1Fu
#define OVERFLOW_STICKY 0xFFFFu
#define BUCKET_BYTES 128u
#define SHARD_HEADER_BYTES 256u
#define TABLE_HEADER_BYTES 128u

/* meta byte of a record: state in bits 0-3, direction in bit 4. */
#define META_STATE_MASK 0x0Fu
#define META_OUT 0x10u

/* The lookup path is a handful of small functions; forcing them inline
 * (where the compiler allows saying so) saves their calls, register saves
 * and reloads, a sizeable share of a ~175-instruction lookup (plus the
 * hash's 42). */
#if defined(__GNUC__)
#define SESS_INLINE static inline __attribute__((always_inline))
#else
#define SESS_INLINE static
#endif

typedef struct sess_rec {
    uint32_t src_ip;    /* key: source address, host order */
    uint32_t dst_ip;    /* key: destination address */
    uint16_t src_port;  /* key: source port */
    uint16_t dst_port;  /* key: destination port */
    uint32_t last_seen; /* tick of the last packet tracked in this record's direction */
    uint32_t peer;      /* slot of the connection's other session (own slot: no other) */
    uint16_t server;    /* server index, in both records so either lookup returns it */
    uint8_t proto;      /* key field */
    uint8_t meta;       /* connection state (both records agree) and this record's direction */
} sess_rec_t;

typedef struct sess_bucket {
    uint8_t tag[SLOTS]; /* 8 hash bits of the key in each used slot */
    uint8_t used;       /* bit i: slot i holds a session */
    uint16_t overflow;  /* sessions homed before this bucket stored past it; sticky at 0xFFFF */
    sess_rec_t rec[SLOTS];
} sess_bucket_t;

/* C99 static_assert: the layout the op counts and the memory bound assume. */
typedef char sess_rec_is_24_bytes[sizeof(sess_rec_t) == 24 ? 1 : -1];
typedef char sess_bucket_is_two_lines[sizeof(sess_bucket_t) == BUCKET_BYTES ? 1 : -1];
typedef char sess_records_follow_header[offsetof(sess_bucket_t, rec) == 8 ? 1 : -1];
/* Amortized bytes per session: 128 bytes per 5 slots, 1.2 slots per session
 * (6/25 buckets per session): 128 * 6 / 25 = 30.72 <= 32. */
typedef char sess_fits_32_bytes_per_session[BUCKET_BYTES * 6u <= 32u * 25u ? 1 : -1];

typedef struct sess_shard {
    uint32_t nb;     /* buckets */
    uint32_t cursor; /* next bucket dp_sess_expire scans */
    dp_sess_shard_stats_t stats;
} sess_shard_t;

typedef char sess_shard_header_fits[sizeof(sess_shard_t) <= SHARD_HEADER_BYTES ? 1 : -1];

struct dp_sess_table {
    uint32_t shards;                       /* shards (cores) */
    uint32_t capacity;                     /* sessions per shard */
    uint32_t nb;                           /* buckets per shard */
    uint32_t timeout[DP_SESS_STATE_COUNT]; /* idle timeout per state, ticks */
    size_t shard_stride;                   /* bytes from one shard to the next */
    uint8_t *first_shard;                  /* shard 0: its header, then its buckets */
};

typedef char sess_table_header_fits[sizeof(struct dp_sess_table) <= TABLE_HEADER_BYTES ? 1 : -1];

static const char *const state_names[DP_SESS_STATE_COUNT] = {
    "none", "syn_sent", "syn_recv", "established", "fin_wait", "close_wait", "time_wait", "closed", "udp",
};

const char *dp_sess_state_name(dp_sess_state_t state)
{
    return (unsigned)state < DP_SESS_STATE_COUNT ? state_names[state] : "unknown";
}

/* ---- TCP state machine ------------------------------------------------- */

/* IPVS's tcp_states (net/netfilter/ipvs/ip_vs_proto_tcp.c), restricted to
 * the states this table keeps: IPVS's rows for these eight states lead only
 * to these eight states, so the restriction is exact. Tables: INPUT
 * (client -> server), OUTPUT (server -> client), INPUT-ONLY (client ->
 * server when the balancer never sees the replies); rows by the deciding
 * flag (syn, fin, ack, rst); columns by current state. Read as IPVS does:
 * a client FIN in ESTABLISHED means the server must still close
 * (CLOSE_WAIT); a server FIN means FIN_WAIT; the other side's FIN then
 * gives TIME_WAIT. Notable IPVS choices kept: a client RST in SYN_RECV is
 * ignored (a spoofed RST cannot tear down a half-open connection early: it
 * ages out in 60 s), a server RST in TIME_WAIT or SYN_SENT is ignored, and
 * a client SYN in TIME_WAIT/CLOSED reopens to SYN_RECV (port reuse). */
enum { F_SYN, F_FIN, F_ACK, F_RST };
enum { T_INPUT, T_OUTPUT, T_INPUT_ONLY };

#define NO DP_SESS_NONE
#define SS DP_SESS_SYN_SENT
#define SR DP_SESS_SYN_RECV
#define ES DP_SESS_ESTABLISHED
#define FW DP_SESS_FIN_WAIT
#define CW DP_SESS_CLOSE_WAIT
#define TW DP_SESS_TIME_WAIT
#define CL DP_SESS_CLOSED

static const uint8_t tcp_next[3][4][8] = {
    /*            NO  SS  SR  ES  FW  CW  TW  CL */
    [T_INPUT] = {
        [F_SYN] = {SR, ES, SR, ES, SR, SR, SR, SR},
        [F_FIN] = {CL, SS, TW, CW, TW, CW, TW, CL},
        [F_ACK] = {CL, SS, ES, ES, FW, CW, TW, CL},
        [F_RST] = {CL, CL, SR, CL, CL, CL, CL, CL},
    },
    [T_OUTPUT] = {
        [F_SYN] = {SS, SS, SR, ES, SS, SS, SS, SS},
        [F_FIN] = {TW, SS, TW, FW, FW, TW, TW, CL},
        [F_ACK] = {ES, SS, ES, ES, FW, CW, TW, CL},
        [F_RST] = {CL, SS, CL, CL, CL, CL, TW, CL},
    },
    [T_INPUT_ONLY] = {
        [F_SYN] = {SR, ES, SR, ES, SR, SR, SR, SR},
        [F_FIN] = {CL, SS, TW, FW, FW, CW, TW, CL},
        [F_ACK] = {CL, SS, ES, ES, FW, CW, TW, CL},
        [F_RST] = {CL, CL, SR, CL, CL, CL, CL, CL},
    },
};

#undef NO
#undef SS
#undef SR
#undef ES
#undef FW
#undef CW
#undef TW
#undef CL

dp_sess_state_t dp_sess_tcp_next(dp_sess_state_t state, dp_sess_dir_t dir, int input_only,
                                 uint8_t tcp_flags)
{
    unsigned table, flag;
    if ((unsigned)state > DP_SESS_CLOSED || (dir != DP_SESS_DIR_IN && dir != DP_SESS_DIR_OUT))
        return state;
    /* IPVS's tcp_state_idx: RST first, then SYN, FIN, ACK. */
    if (tcp_flags & DP_SESS_TCP_RST)
        flag = F_RST;
    else if (tcp_flags & DP_SESS_TCP_SYN)
        flag = F_SYN;
    else if (tcp_flags & DP_SESS_TCP_FIN)
        flag = F_FIN;
    else if (tcp_flags & DP_SESS_TCP_ACK)
        flag = F_ACK;
    else
        return DP_SESS_CLOSED; /* IPVS: a segment without these flags closes */
    table = dir == DP_SESS_DIR_OUT ? T_OUTPUT : (input_only ? T_INPUT_ONLY : T_INPUT);
    return (dp_sess_state_t)tcp_next[table][flag][state];
}

/* ---- configuration and memory ----------------------------------------- */

void dp_sess_config_init(dp_sess_config_t *cfg, uint32_t shards, uint32_t sessions_per_shard,
                         uint32_t ticks_per_second)
{
    /* IPVS defaults in seconds (tcp_timeouts and udp_timeouts, in HZ there). */
    static const uint32_t seconds[DP_SESS_STATE_COUNT] = {2, 120, 60, 900, 120, 60, 120, 10, 300};
    unsigned i;
    if (!cfg)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->shards = shards;
    cfg->sessions_per_shard = sessions_per_shard;
    for (i = 0; i < DP_SESS_STATE_COUNT; i++) {
        uint64_t ticks = (uint64_t)seconds[i] * ticks_per_second;
        cfg->timeout[i] = ticks > DP_SESS_MAX_TIMEOUT ? DP_SESS_MAX_TIMEOUT : (uint32_t)ticks;
    }
}

static int config_ok(const dp_sess_config_t *cfg)
{
    unsigned i;
    if (!cfg || cfg->shards < 1 || cfg->shards > DP_SESS_MAX_SHARDS || cfg->sessions_per_shard < 2 ||
        cfg->sessions_per_shard > DP_SESS_MAX_SESSIONS_PER_SHARD)
        return 0;
    for (i = 0; i < DP_SESS_STATE_COUNT; i++)
        if (cfg->timeout[i] < 1 || cfg->timeout[i] > DP_SESS_MAX_TIMEOUT)
            return 0;
    return 1;
}

/* 1.2 slots per session of capacity: ceil(capacity * 6 / 25) buckets. */
static uint32_t buckets_for(uint32_t capacity)
{
    return (uint32_t)(((uint64_t)capacity * 6u + 24u) / 25u);
}

size_t dp_sess_memory_size(const dp_sess_config_t *cfg)
{
    uint64_t stride, total;
    if (!config_ok(cfg))
        return 0;
    stride = SHARD_HEADER_BYTES + (uint64_t)BUCKET_BYTES * buckets_for(cfg->sessions_per_shard);
    total = 127u + TABLE_HEADER_BYTES + (uint64_t)cfg->shards * stride;
    if (total > (uint64_t)(size_t)-1)
        return 0; /* does not fit this host's address space */
    return (size_t)total;
}

static sess_shard_t *shard_at(const dp_sess_table_t *t, uint32_t i)
{
    return (sess_shard_t *)(void *)(t->first_shard + (size_t)i * t->shard_stride);
}

static sess_bucket_t *buckets_of(const sess_shard_t *s)
{
    return (sess_bucket_t *)(void *)((uint8_t *)(uintptr_t)s + SHARD_HEADER_BYTES);
}

dp_sess_table_t *dp_sess_create(void *mem, size_t mem_size, const dp_sess_config_t *cfg)
{
    size_t need = dp_sess_memory_size(cfg);
    uint8_t *p;
    dp_sess_table_t *t;
    uint32_t i;

    if (!mem || need == 0 || mem_size < need)
        return NULL;
    /* 128-byte alignment: a bucket is exactly lines 0 and 1 of an aligned
     * pair, which the op counts assume and adjacent-line prefetchers like. */
    p = (uint8_t *)mem + ((128u - ((uintptr_t)mem & 127u)) & 127u);
    t = (dp_sess_table_t *)(void *)p;
    t->shards = cfg->shards;
    t->capacity = cfg->sessions_per_shard;
    t->nb = buckets_for(cfg->sessions_per_shard);
    memcpy(t->timeout, cfg->timeout, sizeof(t->timeout));
    t->shard_stride = SHARD_HEADER_BYTES + (size_t)BUCKET_BYTES * t->nb;
    t->first_shard = p + TABLE_HEADER_BYTES;
    for (i = 0; i < t->shards; i++) {
        sess_shard_t *s = shard_at(t, i);
        memset(s, 0, sizeof(*s));
        s->nb = t->nb;
        s->stats.capacity = t->capacity;
        s->stats.buckets = t->nb;
        memset(buckets_of(s), 0, (size_t)BUCKET_BYTES * t->nb);
    }
    return t;
}

/* ---- hashing ------------------------------------------------------------ */

/* Where a key lives, from one dp_flow_hash. The shard takes the hash's
 * high bits (as dp_flow); inside a shard those bits are nearly constant, so
 * the bucket and the tag come from a Fibonacci remix of the whole hash
 * (the product's high word depends on every bit of h), not from the same
 * high bits. */
typedef struct sess_pos {
    uint32_t shard;  /* owning shard */
    uint32_t bucket; /* home bucket in that shard */
    uint8_t tag;     /* 8 hash bits stored in the bucket header */
} sess_pos_t;

static uint32_t shard_of_hash(uint32_t shards, uint32_t h)
{
    return (uint32_t)(((uint64_t)h * shards) >> 32);
}

/* dp_flow_hash (the same function: dp_murmur.h), inlined into the lookup. */
SESS_INLINE uint32_t key_hash(const dp_flow_key_t *key)
{
    return dp_murmur_flow(key->src_ip, key->dst_ip, key->src_port, key->dst_port, key->proto);
}

SESS_INLINE sess_pos_t position(const dp_sess_table_t *t, const dp_flow_key_t *key, dp_ops_t *ops)
{
    sess_pos_t pos;
    uint32_t h = key_hash(key);
    uint64_t m = (uint64_t)h * 0x9E3779B97F4A7C15ull;
    pos.shard = shard_of_hash(t->shards, h);
    pos.bucket = (uint32_t)(((m >> 32) * t->nb) >> 32);
    pos.tag = (uint8_t)(m >> 24);
    if (ops)
        ops->hashes++;
    return pos;
}

uint32_t dp_sess_shard_of(const dp_sess_table_t *t, const dp_flow_key_t *key)
{
    return shard_of_hash(t->shards, key_hash(key));
}

int dp_sess_steer_port(const dp_sess_table_t *t, dp_flow_key_t *key, uint32_t shard, uint16_t lo,
                       uint16_t hi, uint16_t start, dp_ops_t *ops)
{
    dp_flow_key_t k;
    uint32_t n, span, port;
    if (!t || !key || lo > hi || start < lo || start > hi || shard >= t->shards)
        return DP_SESS_EINVAL;
    k = *key;
    span = (uint32_t)hi - lo + 1u;
    port = start;
    for (n = 0; n < span; n++) {
        k.dst_port = (uint16_t)port;
        if (ops)
            ops->hashes++;
        if (dp_sess_shard_of(t, &k) == shard) {
            key->dst_port = (uint16_t)port;
            return 0;
        }
        port = port == hi ? lo : port + 1u;
    }
    return DP_SESS_ENOENT;
}

/* ---- records -------------------------------------------------------------- */

/* Cache lines of the bucket slot i occupies: bit 0 line 0, bit 1 line 1.
 * Record i spans bytes 8 + 24i .. 31 + 24i of the bucket. */
static unsigned slot_lines(unsigned i)
{
    unsigned first = (8u + 24u * i) / 64u, last = (31u + 24u * i) / 64u;
    return (1u << first) | (1u << last);
}

static unsigned popcount2(unsigned lines)
{
    return (lines & 1u) + ((lines >> 1) & 1u);
}

static sess_rec_t *rec_at(const sess_shard_t *s, uint32_t slot)
{
    return &buckets_of(s)[slot / SLOTS].rec[slot % SLOTS];
}

static int slot_used(const sess_shard_t *s, uint32_t slot)
{
    return (buckets_of(s)[slot / SLOTS].used >> (slot % SLOTS)) & 1u;
}

static uint32_t next_bucket(const sess_shard_t *s, uint32_t b)
{
    return b + 1u == s->nb ? 0 : b + 1u;
}

/* A bucket's 8-byte header as one word, header byte i in bits 8i..8i+7 on
 * any byte order: tags in bytes 0-4, the used mask in byte 5, the overflow
 * count in bytes 6-7 (only compared with zero, so its own byte order does
 * not matter). Assembled from bytes, which compilers turn into one load
 * (plus a byte swap on big-endian targets). */
SESS_INLINE uint64_t header_word(const sess_bucket_t *B)
{
    const uint8_t *h = (const uint8_t *)B;
    return (uint64_t)h[0] | (uint64_t)h[1] << 8 | (uint64_t)h[2] << 16 | (uint64_t)h[3] << 24 |
           (uint64_t)h[4] << 32 | (uint64_t)h[5] << 40 | (uint64_t)h[6] << 48 | (uint64_t)h[7] << 56;
}

typedef char sess_header_is_one_word[offsetof(sess_bucket_t, used) == 5 && offsetof(sess_bucket_t, overflow) == 6
                                             ? 1
                                             : -1];

/* Byte i of a match mask is 0x80 when slot i is used and its tag is the
 * key's. tags = the tag in each of bytes 0-4. Bytes of x = w ^ tags are
 * zero where the tags match, found by the exact zero-byte test (the low
 * seven bits of each byte are added without a carry out of it); bit i of
 * the used mask moves to bit 8i+7 with one multiplication (partial
 * product j of bit i lands on bit i + 7j + 7: all distinct, so nothing
 * carries into the bits kept). */
#define BYTE_TOPS 0x8080808080ull  /* bit 7 of bytes 0-4 */
#define BYTE_LOW7 0x7F7F7F7F7Full  /* bits 0-6 of bytes 0-4 */
#define USED_SPREAD 0x810204080ull /* 2^7 + 2^14 + 2^21 + 2^28 + 2^35 */
#define LINE1_SLOTS 0x8080800000ull /* slots 2-4 lie (partly) in the bucket's second line */
#define SLOT4_TOP 0x8000000000ull   /* slot 4's bit */

SESS_INLINE uint64_t slot_matches(uint64_t w, uint64_t tags)
{
    uint64_t x = w ^ tags;
    uint64_t zero = ~(((x & BYTE_LOW7) + BYTE_LOW7) | x | BYTE_LOW7);
    uint64_t used = (((w >> 40) & 0xFFu) * USED_SPREAD) & BYTE_TOPS; /* used < 32: bits 5-7 are never set */
    return zero & used;
}

/* Slot of the lowest match in a nonzero match mask. */
#if defined(__GNUC__)
SESS_INLINE unsigned lowest_slot(uint64_t m)
{
    return (unsigned)__builtin_ctzll(m) >> 3;
}
#else
static unsigned lowest_slot(uint64_t m)
{
    static const uint8_t lowest_bit[32] = {
        0, 0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0,
    };
    /* bit 7 of bytes 0-4 gathered into bits 32-36 by one multiplication */
    return lowest_bit[(unsigned)((((m >> 7) * 0x0102040810ull) >> 32) & 0x1Fu)];
}
#endif

/* A key as the words a record is compared with: the two addresses as one
 * 64-bit word and the two ports as one 32-bit word, copied from memory in
 * the layout the record shares with dp_flow_key_t (so byte order does not
 * matter), and the protocol. */
typedef struct sess_cmp {
    uint64_t ips;
    uint32_t ports;
    uint8_t proto;
} sess_cmp_t;

typedef char sess_rec_key_layout[offsetof(sess_rec_t, dst_ip) == 4 && offsetof(sess_rec_t, src_port) == 8 &&
                                         offsetof(sess_rec_t, dst_port) == 10 &&
                                         offsetof(dp_flow_key_t, dst_ip) == 4 &&
                                         offsetof(dp_flow_key_t, src_port) == 8 &&
                                         offsetof(dp_flow_key_t, dst_port) == 10
                                     ? 1
                                     : -1];

SESS_INLINE sess_cmp_t cmp_of(const dp_flow_key_t *key)
{
    sess_cmp_t c;
    memcpy(&c.ips, &key->src_ip, sizeof c.ips);
    memcpy(&c.ports, &key->src_port, sizeof c.ports);
    c.proto = key->proto;
    return c;
}

SESS_INLINE int rec_matches(const sess_rec_t *r, const sess_cmp_t *c)
{
    uint64_t ips;
    uint32_t ports;
    memcpy(&ips, &r->src_ip, sizeof ips);
    memcpy(&ports, &r->src_port, sizeof ports);
    return ((ips ^ c->ips) | (ports ^ c->ports) | (uint8_t)(r->proto ^ c->proto)) == 0;
}

/* What a lookup adds to dp_ops, kept in registers and added once. */
typedef struct sess_count {
    unsigned hashes, probes, lines;
} sess_count_t;

static void count_add(dp_ops_t *ops, const sess_count_t *c)
{
    if (ops) {
        ops->hashes += c->hashes;
        ops->table_probes += c->probes;
        ops->cache_lines += c->lines;
    }
}

/* The record of key in a shard's buckets bk[0..nb) (its slot in *slot), or
 * NULL, from its home bucket (whose header word, already read, is
 * home_header) on,
 * counting the reads: per bucket visited the header (probe, line 0), and
 * each tag-matching slot compared in slot order up to the match (probe;
 * line 1 if the slot lies partly there, i.e. slot >= 2). */
SESS_INLINE const sess_rec_t *find_slot_walk(const sess_bucket_t *bk, uint32_t nb, const sess_cmp_t *c,
                                             uint32_t home, uint64_t tags, uint64_t home_header, uint64_t home_match,
                                             uint32_t *slot, sess_count_t *cnt);

/* home_match is slot_matches(home_header, the key's tag in bytes 0-4), which
 * the bulk lookup computed halfway and passes on rather than recompute. */
SESS_INLINE const sess_rec_t *find_slot(const sess_bucket_t *bk, uint32_t nb, const dp_flow_key_t *key,
                                        uint32_t home, uint8_t tag, uint64_t home_header, uint64_t home_match,
                                        uint32_t *slot, sess_count_t *cnt)
{
    /* The common case first, without a branch on the data: the key is in
     * its home bucket at the first slot whose tag matches (at full load
     * 85% of keys are in their home bucket, and a second tag match in one
     * bucket is rare). With no match at all the compare reads slot 4 and
     * fails; then a home bucket nothing overflowed says the key is absent.
     * Anything else takes the walk, which counts from the start. */
    const sess_bucket_t *B = bk + home;
    const sess_cmp_t c = cmp_of(key);
    const uint64_t m = home_match;
    const unsigned i = lowest_slot(m | SLOT4_TOP);
    if ((m != 0) & rec_matches(&B->rec[i], &c)) {
        cnt->probes += 2u;
        cnt->lines += 1u + (i >= 2u);
        *slot = home * SLOTS + i;
        return &B->rec[i];
    }
    if (m == 0 && (home_header >> 48) == 0) { /* no tag matches and nothing walks on: a miss (an open's check) */
        cnt->probes++;
        cnt->lines++;
        return NULL;
    }
    return find_slot_walk(bk, nb, &c, home, tag * 0x0101010101ull, home_header, m, slot, cnt);
}

/* The general case: every tag match of every bucket from home on. Inline
 * too: a call would cost the 15% of keys that walk about 25 instructions of
 * argument passing and register saves, and force the bulk loop's counts
 * out of registers. */
SESS_INLINE const sess_rec_t *find_slot_walk(const sess_bucket_t *bk, uint32_t nb, const sess_cmp_t *cp, uint32_t home,
                                       uint64_t tags, uint64_t home_header, uint64_t home_match, uint32_t *slot,
                                       sess_count_t *cnt)
{
    const sess_bucket_t *B = bk + home;
    const sess_cmp_t c = *cp;
    uint32_t left = nb; /* bounds the walk even if every overflow count stuck */
    uint64_t w = home_header, m = home_match;
    for (;;) {
        const uint64_t m0 = m;
        cnt->probes++;
        while (m) {
            const unsigned i = lowest_slot(m);
            m &= m - 1u;
            cnt->probes++;
            if (rec_matches(&B->rec[i], &c)) {
                cnt->lines += 1u + (((m0 ^ m) & LINE1_SLOTS) != 0);
                *slot = (uint32_t)(B - bk) * SLOTS + i;
                return &B->rec[i];
            }
        }
        cnt->lines += 1u + (((m0 ^ m) & LINE1_SLOTS) != 0);
        if ((w >> 48) == 0 || --left == 0)
            return NULL;
        if (++B == bk + nb)
            B = bk;
        w = header_word(B);
        m = slot_matches(w, tags);
    }
}

/* The record of key in shard s at pos (its slot in *slot), or NULL,
 * counted as find_slot says. */
SESS_INLINE const sess_rec_t *find(const sess_shard_t *s, const dp_flow_key_t *key, sess_pos_t pos, uint32_t *slot,
                                   dp_ops_t *ops)
{
    const sess_bucket_t *bk = buckets_of(s);
    sess_count_t cnt = {0, 0, 0};
    const uint64_t w = header_word(bk + pos.bucket);
    const sess_rec_t *r =
        find_slot(bk, s->nb, key, pos.bucket, pos.tag, w, slot_matches(w, pos.tag * 0x0101010101ull), slot, &cnt);
    count_add(ops, &cnt);
    return r;
}

/* Puts a record for key at the first free slot from its home bucket on
 * (the shard has room: the caller checked). Returns the slot. */
static uint32_t place(sess_shard_t *s, const dp_flow_key_t *key, sess_pos_t pos, dp_ops_t *ops)
{
    sess_bucket_t *bk = buckets_of(s);
    uint32_t b = pos.bucket;
    unsigned i;
    sess_rec_t *r;
    for (;;) {
        sess_bucket_t *B = &bk[b];
        if (ops) {
            ops->table_probes++;
            ops->cache_lines++;
        }
        if (B->used != ALL_USED)
            break;
        if (B->overflow != OVERFLOW_STICKY)
            B->overflow++;
        if (ops)
            ops->table_writes++;
        b = next_bucket(s, b);
    }
    i = 0;
    while ((bk[b].used >> i) & 1u)
        i++;
    bk[b].used = (uint8_t)(bk[b].used | (1u << i));
    bk[b].tag[i] = pos.tag;
    r = &bk[b].rec[i];
    memset(r, 0, sizeof(*r));
    r->src_ip = key->src_ip;
    r->dst_ip = key->dst_ip;
    r->src_port = key->src_port;
    r->dst_port = key->dst_port;
    r->proto = key->proto;
    s->stats.entries++;
    if (ops) {
        ops->table_writes += 2;
        ops->cache_lines += (slot_lines(i) & 2u) ? 1u : 0u;
    }
    return b * SLOTS + i;
}

/* Frees slot: walks from the record's home bucket (recomputed from its
 * key: the header keeps only 8 hash bits) to its bucket, undoing the
 * overflow counts its insert added. */
static void unplace(const dp_sess_table_t *t, sess_shard_t *s, uint32_t slot, dp_ops_t *ops)
{
    sess_bucket_t *bk = buckets_of(s);
    uint32_t target = slot / SLOTS, b;
    const sess_rec_t *r = &bk[target].rec[slot % SLOTS];
    dp_flow_key_t k;
    memset(&k, 0, sizeof(k));
    k.src_ip = r->src_ip;
    k.dst_ip = r->dst_ip;
    k.src_port = r->src_port;
    k.dst_port = r->dst_port;
    k.proto = r->proto;
    b = position(t, &k, ops).bucket;
    while (b != target) {
        if (bk[b].overflow != OVERFLOW_STICKY)
            bk[b].overflow--;
        if (ops)
            ops->table_writes++;
        b = next_bucket(s, b);
    }
    bk[target].used = (uint8_t)(bk[target].used & ~(1u << (slot % SLOTS)));
    s->stats.entries--;
    if (ops)
        ops->table_writes++;
}

static void key_of(const sess_rec_t *r, dp_flow_key_t *k)
{
    memset(k, 0, sizeof(*k));
    k->src_ip = r->src_ip;
    k->dst_ip = r->dst_ip;
    k->src_port = r->src_port;
    k->dst_port = r->dst_port;
    k->proto = r->proto;
}

static int keys_equal(const dp_flow_key_t *a, const dp_flow_key_t *b)
{
    return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->src_port == b->src_port &&
           a->dst_port == b->dst_port && a->proto == b->proto;
}

/* The shard of c if its session `dir` is consistent: a used slot holding
 * a record of that direction whose peer is the handle's other slot. Reads
 * only that record and its bucket header, which the lookup that produced
 * the handle just read. */
static sess_shard_t *check_side(const dp_sess_table_t *t, dp_sess_conn_t c, unsigned dir)
{
    sess_shard_t *s;
    const sess_rec_t *r;
    uint32_t slots, self = c.slot[dir], other = c.slot[dir ^ 1u];
    int single = c.slot[0] == c.slot[1];
    if (!t || c.shard >= t->shards)
        return NULL;
    s = shard_at(t, c.shard);
    slots = s->nb * SLOTS;
    if (self >= slots || other >= slots || !slot_used(s, self))
        return NULL;
    r = rec_at(s, self);
    if (r->peer != other || ((r->meta & META_OUT) != 0) != (dir == DP_SESS_DIR_OUT && !single))
        return NULL;
    return s;
}

/* The same for both sessions (for operations that read both anyway). */
static sess_shard_t *check_conn(const dp_sess_table_t *t, dp_sess_conn_t c)
{
    sess_shard_t *s = check_side(t, c, DP_SESS_DIR_IN);
    return s && check_side(t, c, DP_SESS_DIR_OUT) ? s : NULL;
}

/* ---- operations ------------------------------------------------------------ */

int dp_sess_open(dp_sess_table_t *t, const dp_flow_key_t *in_key, const dp_flow_key_t *out_key,
                 uint32_t server, uint32_t now, dp_sess_conn_t *conn, dp_ops_t *ops)
{
    sess_pos_t pin, pout;
    sess_shard_t *s;
    uint32_t need, sin, sout;
    uint8_t state;
    sess_rec_t *r;

    if (!t || !in_key || server > DP_SESS_MAX_SERVER || (out_key && keys_equal(in_key, out_key)))
        return DP_SESS_EINVAL;
    pin = position(t, in_key, ops);
    if (out_key) {
        pout = position(t, out_key, ops);
        if (pout.shard != pin.shard)
            return DP_SESS_ESHARD;
    }
    s = shard_at(t, pin.shard);
    if (find(s, in_key, pin, &sin, ops))
        return DP_SESS_EEXIST;
    if (out_key && find(s, out_key, pout, &sout, ops))
        return DP_SESS_EEXIST;
    need = out_key ? 2u : 1u;
    if (s->stats.entries + need > s->stats.capacity) {
        s->stats.refused_full++;
        return DP_SESS_EFULL;
    }
    state = (uint8_t)(in_key->proto == 6 ? DP_SESS_NONE : DP_SESS_UDP);
    sin = place(s, in_key, pin, ops);
    sout = out_key ? place(s, out_key, pout, ops) : sin;
    r = rec_at(s, sin);
    r->peer = sout;
    r->server = (uint16_t)server;
    r->last_seen = now;
    r->meta = state;
    if (out_key) {
        r = rec_at(s, sout);
        r->peer = sin;
        r->server = (uint16_t)server;
        r->last_seen = now;
        r->meta = (uint8_t)(state | META_OUT);
    }
    s->stats.connections++;
    s->stats.inserts++;
    s->stats.by_state[state]++;
    if (conn) {
        conn->shard = pin.shard;
        conn->slot[DP_SESS_DIR_IN] = sin;
        conn->slot[DP_SESS_DIR_OUT] = sout;
    }
    return 0;
}

static void fill_hit(const sess_rec_t *r, uint32_t shard, uint32_t slot, dp_sess_hit_t *hit)
{
    const unsigned out = (r->meta & META_OUT) >> 4; /* DP_SESS_DIR_OUT for an outbound record */
    hit->conn.shard = shard;
    hit->conn.slot[out] = slot;
    hit->conn.slot[out ^ 1u] = r->peer;
    hit->dir = (uint8_t)out;
    hit->state = (uint8_t)(r->meta & META_STATE_MASK);
    hit->server = r->server;
}

/* Asks for both lines of a bucket at once: without it the second line's
 * miss would start only once the header's tags were compared. */
static void prefetch_bucket(const sess_bucket_t *B)
{
#if defined(__GNUC__)
    __builtin_prefetch(B, 0, 3);
    __builtin_prefetch((const uint8_t *)B + 64, 0, 3);
#else
    (void)B;
#endif
}

/* Fills *hit from the record at slot (a hit) or as a miss (zeros and
 * DP_SESS_DIR_NONE). 1 on a hit. */
SESS_INLINE unsigned report(const sess_rec_t *r, uint32_t shard, uint32_t slot, dp_sess_hit_t *hit)
{
    if (!r) {
        hit->conn.shard = 0;
        hit->conn.slot[0] = 0;
        hit->conn.slot[1] = 0;
        hit->dir = DP_SESS_DIR_NONE;
        hit->state = 0;
        hit->server = 0;
        return 0;
    }
    fill_hit(r, shard, slot, hit);
    return 1;
}

int dp_sess_lookup(const dp_sess_table_t *t, const dp_flow_key_t *key, dp_sess_hit_t *hit,
                   dp_ops_t *ops)
{
    sess_pos_t pos;
    const sess_shard_t *s;
    const sess_rec_t *r;
    uint32_t slot = 0;
    if (!t || !key)
        return DP_SESS_EINVAL;
    pos = position(t, key, ops);
    s = shard_at(t, pos.shard);
    prefetch_bucket(buckets_of(s) + pos.bucket);
    r = find(s, key, pos, &slot, ops);
    if (!r)
        return DP_SESS_ENOENT;
    if (hit)
        fill_hit(r, pos.shard, slot, hit);
    return 0;
}

/* dp_sess_lookup_bulk works on groups of BULK_GROUP keys in three stages,
 * as DPDK's rte_hash lookup_bulk does, software-pipelined over the burst
 * (step g hashes group g, reads the headers of group g - 1 and compares
 * group g - 2):
 *   1. hash every key of the group in one loop (independent multiply
 *      chains side by side, where one key's ~60-cycle chain alone would
 *      wait on itself), then prefetch both lines of each home bucket;
 *   2. one group later, read each home header (by then cached), match its
 *      tags, and when no tag matches and the overflow count says the walk
 *      goes on, prefetch the next BULK_WALK_AHEAD buckets: at full load
 *      15% of keys lie past their home bucket (7.7% one bucket on, 2.8%
 *      two, 1.5% three), and each walk step not prefetched is a DRAM miss
 *      waited for alone;
 *   3. one group later again, compare, from the tag match stage 2 found.
 * So the misses of about 2 x BULK_GROUP keys, walks included, overlap.
 * The table's geometry and the op counts are kept in locals, so the stores
 * into hits[] force no reloads. */
#define BULK_GROUP 8u
#define BULK_WALK_AHEAD 3u /* buckets past home prefetched for a displaced key: 97% of keys lie within */

typedef struct sess_ahead {
    const sess_bucket_t *home; /* the key's home bucket */
    uint64_t header;           /* the home bucket's header word, read in stage 2 */
    uint64_t match;            /* its tag matches (slot_matches), found in stage 2 and reused by the compare */
    uint32_t shard, bucket;
    uint8_t tag;
} sess_ahead_t;

/* What the stages share: the table's geometry, kept in locals so the stores
 * into hits[] force no reloads. */
typedef struct sess_bulk {
    const uint8_t *first;
    size_t stride;
    uint32_t shards, nb;
} sess_bulk_t;

/* Stage 1 for keys[0..n), n <= BULK_GROUP: the hashes first, then the
 * positions and prefetches. */
SESS_INLINE void bulk_hash(const sess_bulk_t *g, const dp_flow_key_t *keys, unsigned n, sess_ahead_t *a)
{
    uint32_t h[BULK_GROUP];
    unsigned i;
    for (i = 0; i < n; i++)
        h[i] = key_hash(&keys[i]);
    for (i = 0; i < n; i++) {
        const uint64_t m = (uint64_t)h[i] * 0x9E3779B97F4A7C15ull;
        a[i].shard = shard_of_hash(g->shards, h[i]);
        a[i].bucket = (uint32_t)(((m >> 32) * g->nb) >> 32);
        a[i].tag = (uint8_t)(m >> 24);
        a[i].home = (const sess_bucket_t *)(const void *)(g->first + (size_t)a[i].shard * g->stride +
                                                          SHARD_HEADER_BYTES) +
                    a[i].bucket;
        prefetch_bucket(a[i].home);
    }
}

/* Stage 2: read the home headers, match their tags, and prefetch the walk
 * of each key that is not home. */
SESS_INLINE void bulk_header(const sess_bulk_t *g, unsigned n, sess_ahead_t *a)
{
    unsigned i;
    for (i = 0; i < n; i++) {
        a[i].header = header_word(a[i].home);
        a[i].match = slot_matches(a[i].header, a[i].tag * 0x0101010101ull);
        if ((a[i].header >> 48) != 0 && a[i].match == 0) {
            uint32_t b = a[i].bucket, k;
            for (k = 0; k < BULK_WALK_AHEAD; k++) {
                b = b + 1u == g->nb ? 0 : b + 1u;
                prefetch_bucket(a[i].home - a[i].bucket + b);
            }
        }
    }
}

/* Stage 3: compare, from the matches stage 2 found. Returns the hits. */
SESS_INLINE unsigned bulk_compare(const sess_bulk_t *g, const sess_ahead_t *a, const dp_flow_key_t *keys, unsigned n,
                                  dp_sess_hit_t *hits, sess_count_t *cnt)
{
    unsigned i, found = 0;
    for (i = 0; i < n; i++) {
        uint32_t slot = 0;
        const sess_rec_t *r = find_slot(a[i].home - a[i].bucket, g->nb, &keys[i], a[i].bucket, a[i].tag, a[i].header,
                                        a[i].match, &slot, cnt);
        found += report(r, a[i].shard, slot, &hits[i]);
    }
    return found;
}

unsigned dp_sess_lookup_bulk(const dp_sess_table_t *t, const dp_flow_key_t *keys, unsigned n,
                             dp_sess_hit_t *hits, dp_ops_t *ops)
{
    sess_ahead_t ring[3][BULK_GROUP]; /* ring[g % 3]: group g, from stage 1 on */
    sess_count_t cnt = {0, 0, 0};
    sess_bulk_t g;
    unsigned groups, step, found = 0;
    if (!t || !keys || !hits)
        return 0;
    g.first = t->first_shard;
    g.stride = t->shard_stride;
    g.shards = t->shards;
    g.nb = t->nb;
    groups = n / BULK_GROUP + (n % BULK_GROUP != 0);
    /* Group q holds keys [q x BULK_GROUP, min(n, (q + 1) x BULK_GROUP)). */
#define GROUP_SIZE(q) ((q) + 1u < groups || n % BULK_GROUP == 0 ? BULK_GROUP : n % BULK_GROUP)
    for (step = 0; step < groups + 2u; step++) {
        if (step < groups)
            bulk_hash(&g, keys + step * BULK_GROUP, GROUP_SIZE(step), ring[step % 3u]);
        if (step >= 1u && step - 1u < groups)
            bulk_header(&g, GROUP_SIZE(step - 1u), ring[(step - 1u) % 3u]);
        if (step >= 2u)
            found += bulk_compare(&g, ring[(step - 2u) % 3u], keys + (step - 2u) * BULK_GROUP, GROUP_SIZE(step - 2u),
                                  hits + (step - 2u) * BULK_GROUP, &cnt);
    }
#undef GROUP_SIZE
    cnt.hashes = n;
    count_add(ops, &cnt);
    return found;
}

/* Moves the connection to state st: both records, the per-state counts. */
static void set_state(sess_shard_t *s, sess_rec_t *r, sess_rec_t *peer, unsigned st)
{
    unsigned old = r->meta & META_STATE_MASK;
    s->stats.by_state[old]--;
    s->stats.by_state[st]++;
    r->meta = (uint8_t)((r->meta & META_OUT) | st);
    if (peer != r)
        peer->meta = (uint8_t)((peer->meta & META_OUT) | st);
}

int dp_sess_track(dp_sess_table_t *t, dp_sess_conn_t conn, dp_sess_dir_t dir, uint8_t tcp_flags,
                  uint32_t now, dp_ops_t *ops)
{
    sess_shard_t *s;
    sess_rec_t *r, *peer;
    unsigned st, next;
    if (dir != DP_SESS_DIR_IN && dir != DP_SESS_DIR_OUT)
        return DP_SESS_EINVAL;
    if (dir == DP_SESS_DIR_OUT && conn.slot[0] == conn.slot[1])
        return DP_SESS_EINVAL; /* no outbound session */
    s = check_side(t, conn, dir);
    if (!s)
        return DP_SESS_EINVAL;
    r = rec_at(s, conn.slot[dir]);
    peer = rec_at(s, r->peer);
    st = r->meta & META_STATE_MASK;
    next = st;
    if (st != DP_SESS_UDP)
        next = dp_sess_tcp_next((dp_sess_state_t)st, dir, conn.slot[0] == conn.slot[1], tcp_flags);
    r->last_seen = now;
    if (ops) {
        ops->table_probes++;
        ops->table_writes++;
    }
    if (next != st) {
        set_state(s, r, peer, next);
        if (ops && peer != r) {
            ops->table_writes++;
            ops->cache_lines += popcount2(slot_lines(r->peer % SLOTS));
        }
    }
    return (int)next;
}

int dp_sess_server(const dp_sess_table_t *t, dp_sess_conn_t conn)
{
    const sess_shard_t *s = check_side(t, conn, DP_SESS_DIR_IN);
    if (!s)
        return DP_SESS_EINVAL;
    return rec_at(s, conn.slot[0])->server;
}

int dp_sess_get(const dp_sess_table_t *t, dp_sess_conn_t conn, dp_sess_info_t *info, dp_ops_t *ops)
{
    const sess_shard_t *s = check_conn(t, conn);
    const sess_rec_t *in, *out;
    if (!s || !info)
        return DP_SESS_EINVAL;
    memset(info, 0, sizeof(*info));
    in = rec_at(s, conn.slot[0]);
    out = rec_at(s, conn.slot[1]);
    key_of(in, &info->in_key);
    info->state = (uint8_t)(in->meta & META_STATE_MASK);
    info->server = in->server;
    info->last_seen[DP_SESS_DIR_IN] = in->last_seen;
    info->last_seen[DP_SESS_DIR_OUT] = in->last_seen;
    if (ops)
        ops->table_probes++;
    if (out != in) {
        key_of(out, &info->out_key);
        info->has_out = 1;
        info->last_seen[DP_SESS_DIR_OUT] = out->last_seen;
        if (ops) {
            ops->table_probes++;
            ops->cache_lines += popcount2(slot_lines(conn.slot[1] % SLOTS));
        }
    }
    return 0;
}

/* Removes the connection whose IN record is at slot in (its peer too). */
static void remove_conn(const dp_sess_table_t *t, sess_shard_t *s, uint32_t in, dp_ops_t *ops)
{
    const sess_rec_t *r = rec_at(s, in);
    uint32_t out = r->peer;
    s->stats.by_state[r->meta & META_STATE_MASK]--;
    s->stats.connections--;
    unplace(t, s, in, ops);
    if (out != in)
        unplace(t, s, out, ops);
}

int dp_sess_close(dp_sess_table_t *t, dp_sess_conn_t conn, dp_ops_t *ops)
{
    sess_shard_t *s = check_conn(t, conn);
    if (!s)
        return DP_SESS_EINVAL;
    if (ops)
        ops->table_probes += conn.slot[0] == conn.slot[1] ? 1u : 2u;
    remove_conn(t, s, conn.slot[0], ops);
    s->stats.deletes++;
    return 0;
}

/* The later of two ticks, modulo 2^32. */
static uint32_t later(uint32_t a, uint32_t b)
{
    return (uint32_t)(a - b) < 0x80000000u ? a : b;
}

/* One scan loop for both entry points: out == NULL reports nothing and
 * never stops early. */
static uint32_t expire_scan(dp_sess_table_t *t, uint32_t shard, uint32_t now, uint32_t budget,
                            dp_sess_expired_t *out, uint32_t out_cap, uint32_t *scanned, dp_ops_t *ops)
{
    sess_shard_t *s;
    sess_bucket_t *bk;
    uint32_t n, removed = 0;

    *scanned = 0;
    if (!t || shard >= t->shards)
        return 0;
    s = shard_at(t, shard);
    bk = buckets_of(s);
    if (budget == 0 || budget > s->nb)
        budget = s->nb;
    for (n = 0; n < budget; n++) {
        uint32_t b = s->cursor;
        unsigned i;
        if (out && out_cap - removed < SLOTS)
            break; /* a bucket may hold SLOTS connections to report */
        s->cursor = next_bucket(s, b);
        if (ops) {
            ops->table_probes++;
            ops->cache_lines += 2;
        }
        for (i = 0; i < SLOTS; i++) {
            const sess_rec_t *r, *peer;
            uint32_t slot = b * SLOTS + i, age;
            unsigned st;
            if (!((bk[b].used >> i) & 1u))
                continue;
            r = &bk[b].rec[i];
            if (ops)
                ops->table_probes++;
            if (r->meta & META_OUT)
                continue; /* judged with its IN record */
            peer = rec_at(s, r->peer);
            if (ops && r->peer != slot) {
                ops->table_probes++;
                ops->cache_lines += popcount2(slot_lines(r->peer % SLOTS));
            }
            st = r->meta & META_STATE_MASK;
            age = now - later(r->last_seen, peer->last_seen);
            if (age < 0x80000000u && age >= t->timeout[st]) {
                if (out) {
                    dp_sess_expired_t *e = &out[removed];
                    memset(&e->in_key, 0, sizeof e->in_key);
                    e->in_key.src_ip = r->src_ip;
                    e->in_key.dst_ip = r->dst_ip;
                    e->in_key.src_port = r->src_port;
                    e->in_key.dst_port = r->dst_port;
                    e->in_key.proto = r->proto;
                    e->server = r->server;
                    e->state = (uint8_t)st;
                    e->reserved = 0;
                }
                s->stats.expired_by_state[st]++;
                remove_conn(t, s, slot, ops);
                removed++;
            }
        }
    }
    *scanned = n;
    s->stats.expired += removed;
    return removed;
}

uint32_t dp_sess_expire(dp_sess_table_t *t, uint32_t shard, uint32_t now, uint32_t budget,
                        dp_ops_t *ops)
{
    uint32_t scanned;
    return expire_scan(t, shard, now, budget, NULL, 0, &scanned, ops);
}

uint32_t dp_sess_expire_report(dp_sess_table_t *t, uint32_t shard, uint32_t now, uint32_t budget,
                               dp_sess_expired_t *out, uint32_t out_cap, uint32_t *n_out,
                               uint32_t *scanned, dp_ops_t *ops)
{
    uint32_t removed = 0, buckets = 0;
    if (out && out_cap >= SLOTS)
        removed = expire_scan(t, shard, now, budget, out, out_cap, &buckets, ops);
    if (n_out)
        *n_out = removed;
    if (scanned)
        *scanned = buckets;
    return removed;
}

void dp_sess_get_shard_stats(const dp_sess_table_t *t, uint32_t shard, dp_sess_shard_stats_t *st)
{
    if (!st)
        return;
    if (!t || shard >= t->shards) {
        memset(st, 0, sizeof(*st));
        return;
    }
    *st = shard_at(t, shard)->stats;
}
