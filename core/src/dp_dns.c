#include "dp_dns.h"
#include "dp_bytes.h"
#include "dp_ip4_header.h"

#include <string.h>

#include "dp_csum.h"
#include "dp_pkt.h"

/* Layout of a zone inside the caller's block, each part on its own 64-byte
 * line so the cache-line counts in dp_dns.h follow from offsets alone:
 *
 *   struct dp_dns_zone | slots[2^k] (16 B) | name pool (bytes) | word pool
 *
 * A slot holds the full 32-bit hash, so a probe compares a name only when
 * hash and length agree (a false match costs about one name compare in
 * 2^32). Names are wire form, lowercase, back to back in insertion order.
 * An RRset is a run of 32-bit words in the word pool: its TTL, then its
 * addresses. Linear probing (as in DPDK's rte_hash without buckets, or
 * NSD's name table before its radix tree) suits a table that is loaded
 * once and then only read: no deletes, so no tombstones. */

#define MAX_NAMES (1u << 24)
#define MAX_NAME_BYTES (1u << 28)
#define MAX_RECORDS (1u << 28)
#define LINE 64u
#define SLOTS_PER_LINE 4u
#define FLAG_QR 0x8000u
#define FLAG_RD 0x0100u
#define OPT_DO 0x8000u
#define ETH_MIN_FRAME_NO_FCS 60u

typedef struct dns_slot {
    uint32_t hash;     /* dp_dns_name_hash of the name */
    uint32_t name_off; /* byte offset of the name in the name pool */
    uint32_t rrset;    /* word index of the RRset in the word pool: TTL, then the addresses */
    uint16_t count;    /* addresses of the RRset */
    uint8_t name_len;  /* wire bytes of the name, 1..255 */
    uint8_t used;      /* 1: the slot holds a name */
} dns_slot_t;

typedef char dns_slot_is_a_quarter_line[sizeof(dns_slot_t) * SLOTS_PER_LINE == LINE ? 1 : -1];

struct dp_dns_zone {
    dns_slot_t *slots;       /* slot_mask + 1 slots */
    uint8_t *names;          /* name pool, max_name_bytes */
    uint32_t *words;         /* word pool, max_names + max_records */
    uint32_t slot_mask;      /* slots - 1 (a power of two) */
    uint32_t names_used;     /* names held */
    uint32_t name_bytes_used; /* name pool bytes used */
    uint32_t records_used;   /* addresses held */
    uint32_t words_used;     /* word pool words used (names_used + records_used) */
    dp_dns_zone_config_t cfg; /* as created */
    size_t memory_bytes;     /* dp_dns_zone_memory_size(&cfg) */
};

static const char *const status_names[DP_DNS_STATUS__COUNT] = {
    "noerror",       "nodata",         "nxdomain",     "refused_class", "notimp_opcode",
    "notimp_qtype",  "formerr_qdcount", "formerr_opt", "badvers",       "short_header",
    "qr_set",        "truncated",      "label_too_long", "name_too_long", "qname_pointer",
    "bad_pointer",   "trailing_bytes", "no_room",
};

const char *dp_dns_status_name(dp_dns_status_t status)
{
    if ((unsigned)status >= (unsigned)DP_DNS_STATUS__COUNT)
        return "unknown";
    return status_names[status];
}

dp_drop_reason_t dp_dns_status_drop(dp_dns_status_t status)
{
    if ((unsigned)status < (unsigned)DP_DNS_SHORT_HEADER)
        return DP_OK;
    if (status == DP_DNS_QR_SET)
        return DP_DROP_DNS_UNSUPPORTED;
    if (status == DP_DNS_NO_ROOM)
        return DP_DROP_BUFFER_TOO_SMALL;
    return DP_DROP_DNS_MALFORMED;
}

/* RFC 4343 section 3: only ASCII letters fold; bytes >= 0x80 compare as
 * they are. Label length bytes (0..63) are never letters, so a whole wire
 * name can be folded byte by byte. */
static uint8_t lower(uint8_t c)
{
    return (uint8_t)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/* ---- names ---- */

int dp_dns_name_to_wire(const char *dotted, uint8_t *wire, size_t cap, size_t *wire_len)
{
    size_t in = 0, out = 0;

    if (!dotted || !wire || !wire_len || dotted[0] == 0)
        return DP_DNS_EINVAL;
    if (!(dotted[0] == '.' && dotted[1] == 0)) {
        while (dotted[in]) {
            size_t start = in, n;
            while (dotted[in] && dotted[in] != '.')
                in++;
            n = in - start;
            if (n == 0 || n > DP_DNS_MAX_LABEL || out + 1 + n + 1 > DP_DNS_MAX_NAME || out + 1 + n >= cap)
                return DP_DNS_EINVAL;
            wire[out++] = (uint8_t)n;
            while (start < in)
                wire[out++] = lower((uint8_t)dotted[start++]);
            if (dotted[in] == '.')
                in++; /* a trailing dot ends the loop here: the root label follows */
        }
    }
    if (out + 1 > cap)
        return DP_DNS_EINVAL;
    wire[out++] = 0;
    *wire_len = out;
    return 0;
}

uint32_t dp_dns_name_hash(const uint8_t *wire, size_t len)
{
    uint32_t h = 0x811C9DC5u;
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= lower(wire[i]);
        h *= 0x01000193u;
    }
    /* FNV-1a alone mixes its last bytes poorly into the low bits that pick
     * the slot; MurmurHash3's finalizer spreads them. */
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

/* A wire name the zone accepts: labels of 1..63 bytes, the root label
 * exactly at the end, at most 255 bytes, no pointers. */
static int wire_name_ok(const uint8_t *name, size_t len)
{
    size_t pos = 0;
    if (!name || len < 1 || len > DP_DNS_MAX_NAME)
        return 0;
    while (pos < len) {
        uint8_t c = name[pos];
        if (c == 0)
            return pos == len - 1;
        if (c > DP_DNS_MAX_LABEL)
            return 0;
        pos += 1u + c;
    }
    return 0;
}

/* ---- zone ---- */

static size_t align64(size_t n)
{
    return (n + (LINE - 1u)) & ~(size_t)(LINE - 1u);
}

static int config_ok(const dp_dns_zone_config_t *cfg)
{
    return cfg && cfg->max_names >= 1 && cfg->max_names <= MAX_NAMES && cfg->max_name_bytes >= 1 &&
           cfg->max_name_bytes <= MAX_NAME_BYTES && cfg->max_records <= MAX_RECORDS &&
           (cfg->edns_udp_size == 0 || (cfg->edns_udp_size >= DP_DNS_UDP_LIMIT && cfg->edns_udp_size <= 0xFFFFu));
}

/* At most half the slots are used (load <= 1/2): with linear probing a
 * miss then reads (1 + 1/(1-a)^2)/2 <= 2.5 slots on average and a hit
 * (1 + 1/(1-a))/2 <= 1.5 (Knuth, TAOCP vol. 3, 6.4). Misses matter: an
 * NXDOMAIN flood is all misses. A walk always ends at an empty slot. */
static uint32_t slots_for(uint32_t max_names)
{
    uint32_t n = 2;
    while (n < 2u * max_names)
        n <<= 1;
    return n;
}

size_t dp_dns_zone_memory_size(const dp_dns_zone_config_t *cfg)
{
    uint64_t words, total;
    if (!config_ok(cfg))
        return 0;
    words = (uint64_t)cfg->max_names + cfg->max_records;
    total = (LINE - 1u) + align64(sizeof(struct dp_dns_zone)) + (uint64_t)slots_for(cfg->max_names) * sizeof(dns_slot_t) +
            align64(cfg->max_name_bytes) + align64((size_t)(words * sizeof(uint32_t)));
    if (total > (uint64_t)(size_t)-1)
        return 0;
    return (size_t)total;
}

dp_dns_zone_t *dp_dns_zone_create(void *mem, size_t mem_size, const dp_dns_zone_config_t *cfg)
{
    size_t need = dp_dns_zone_memory_size(cfg);
    uint8_t *p;
    dp_dns_zone_t *z;
    uint32_t nslots;

    if (!mem || need == 0 || mem_size < need)
        return NULL;
    p = (uint8_t *)mem + ((LINE - ((uintptr_t)mem & (LINE - 1u))) & (LINE - 1u));
    z = (dp_dns_zone_t *)(void *)p;
    nslots = slots_for(cfg->max_names);
    p += align64(sizeof(struct dp_dns_zone));
    z->slots = (dns_slot_t *)(void *)p;
    p += (size_t)nslots * sizeof(dns_slot_t);
    z->names = p;
    p += align64(cfg->max_name_bytes);
    z->words = (uint32_t *)(void *)p;
    z->slot_mask = nslots - 1u;
    z->names_used = 0;
    z->name_bytes_used = 0;
    z->records_used = 0;
    z->words_used = 0;
    z->cfg = *cfg;
    z->memory_bytes = need;
    memset(z->slots, 0, (size_t)nslots * sizeof(dns_slot_t));
    return z;
}

/* 64-byte lines spanned by n >= 1 bytes from byte offset off of a
 * line-aligned pool. */
static uint32_t lines_spanned(uint64_t off, uint64_t n)
{
    return (uint32_t)((off + n - 1u) / LINE - off / LINE + 1u);
}

/* Walks the probe sequence of name (hash h). Returns the slot holding it
 * (*found = 1) or the empty slot ending the walk (*found = 0). Counts the
 * probes, lines and compared bytes documented in dp_dns.h. */
static uint32_t walk(const dp_dns_zone_t *z, const uint8_t *name, size_t len, uint32_t h, int *found,
                     uint32_t *compared, dp_ops_t *ops)
{
    uint32_t i = h & z->slot_mask, n, prev_line = 0;
    *found = 0;
    *compared = 0;
    for (n = 0; n <= z->slot_mask; n++) {
        const dns_slot_t *s = &z->slots[i];
        uint32_t line = i / SLOTS_PER_LINE;
        if (ops) {
            ops->table_probes++;
            if (n == 0 || line != prev_line)
                ops->cache_lines++;
        }
        prev_line = line;
        if (!s->used)
            return i;
        if (s->hash == h && s->name_len == len) {
            const uint8_t *stored = z->names + s->name_off;
            size_t k = 0;
            while (k < len && stored[k] == lower(name[k]))
                k++;
            /* The first differing byte was read too. */
            *compared += (uint32_t)(k < len ? k + 1u : len);
            if (ops)
                ops->cache_lines += lines_spanned(s->name_off, k < len ? k + 1u : len);
            if (k == len) {
                *found = 1;
                return i;
            }
        }
        i = (i + 1u) & z->slot_mask;
    }
    return i; /* unreachable: half the slots are always empty */
}

int dp_dns_zone_add(dp_dns_zone_t *zone, const uint8_t *name, size_t name_len, const uint32_t *addrs,
                    uint32_t n_addrs, uint32_t ttl, dp_ops_t *ops)
{
    uint32_t h, i, compared, k;
    int found;
    dns_slot_t *s;

    if (!zone || !wire_name_ok(name, name_len) || (n_addrs && !addrs) || n_addrs > 0xFFFFu ||
        ttl > DP_DNS_MAX_TTL)
        return DP_DNS_EINVAL;
    h = dp_dns_name_hash(name, name_len);
    if (ops)
        ops->hashes++;
    i = walk(zone, name, name_len, h, &found, &compared, ops);
    if (found)
        return DP_DNS_EEXIST;
    if (zone->names_used >= zone->cfg.max_names || name_len > zone->cfg.max_name_bytes - zone->name_bytes_used ||
        n_addrs > zone->cfg.max_records - zone->records_used)
        return DP_DNS_ENOSPC;
    s = &zone->slots[i];
    s->hash = h;
    s->name_off = zone->name_bytes_used;
    s->rrset = zone->words_used;
    s->count = (uint16_t)n_addrs;
    s->name_len = (uint8_t)name_len;
    s->used = 1;
    for (k = 0; k < name_len; k++)
        zone->names[zone->name_bytes_used + k] = lower(name[k]);
    zone->words[zone->words_used] = ttl;
    for (k = 0; k < n_addrs; k++)
        zone->words[zone->words_used + 1u + k] = addrs[k];
    zone->names_used++;
    zone->name_bytes_used += (uint32_t)name_len;
    zone->records_used += n_addrs;
    zone->words_used += 1u + n_addrs;
    if (ops) {
        ops->table_writes += 1u + n_addrs;
        ops->bytes_copied += name_len;
    }
    return 0;
}

/* The lookup behind dp_dns_zone_lookup and dp_dns_answer; *slot is the
 * slot found (for the answer's record-pool line count). */
static int lookup(const dp_dns_zone_t *z, const uint8_t *name, size_t len, dp_dns_rrset_t *out,
                  const dns_slot_t **slot, dp_ops_t *ops)
{
    uint32_t h = dp_dns_name_hash(name, len), i, compared;
    int found;
    if (ops)
        ops->hashes++;
    i = walk(z, name, len, h, &found, &compared, ops);
    out->bytes_compared = compared;
    if (!found) {
        out->ttl = 0;
        out->count = 0;
        out->addrs = NULL;
        return DP_DNS_ENOENT;
    }
    *slot = &z->slots[i];
    out->ttl = z->words[(*slot)->rrset];
    out->count = (*slot)->count;
    out->addrs = z->words + (*slot)->rrset + 1u;
    return 0;
}

int dp_dns_zone_lookup(const dp_dns_zone_t *zone, const uint8_t *name, size_t name_len, dp_dns_rrset_t *out,
                       dp_ops_t *ops)
{
    const dns_slot_t *slot;
    if (!zone || !name || !out || name_len < 1 || name_len > DP_DNS_MAX_NAME)
        return DP_DNS_EINVAL;
    return lookup(zone, name, name_len, out, &slot, ops);
}

void dp_dns_zone_get_stats(const dp_dns_zone_t *zone, dp_dns_zone_stats_t *st)
{
    st->names = zone->names_used;
    st->name_bytes = zone->name_bytes_used;
    st->records = zone->records_used;
    st->slots = zone->slot_mask + 1u;
    st->memory_bytes = zone->memory_bytes;
}

/* ---- messages ---- */

/* Walks the name at *pos. In the question (question != 0) a pointer is
 * refused: nothing precedes the first name that it could point to (RFC
 * 1035 section 4.1.4: a pointer names a prior occurrence). Elsewhere a
 * pointer ends the name and must point backwards into the message body;
 * it is checked, not followed. Checks per length byte, in this order:
 * present, root, pointer, label type/length, name length. */
static dp_dns_status_t walk_name(const uint8_t *msg, size_t len, size_t *pos, int question)
{
    size_t p = *pos, used = 0;
    for (;;) {
        uint8_t c;
        if (p >= len)
            return DP_DNS_TRUNCATED;
        c = msg[p];
        if (c == 0) {
            *pos = p + 1u;
            return DP_DNS_NOERROR;
        }
        if ((c & 0xC0u) == 0xC0u) {
            size_t target;
            if (question)
                return DP_DNS_QNAME_POINTER;
            if (p + 1u >= len)
                return DP_DNS_TRUNCATED;
            target = ((size_t)(c & 0x3Fu) << 8) | msg[p + 1u];
            if (target < DP_DNS_HDR_LEN || target >= p)
                return DP_DNS_BAD_POINTER;
            *pos = p + 2u;
            return DP_DNS_NOERROR;
        }
        if (c > DP_DNS_MAX_LABEL)
            return DP_DNS_LABEL_TOO_LONG;
        if (used + 1u + c + 1u > DP_DNS_MAX_NAME)
            return DP_DNS_NAME_TOO_LONG;
        used += 1u + c;
        p += 1u + c;
    }
}

dp_dns_status_t dp_dns_parse(const uint8_t *msg, size_t len, dp_dns_query_t *q, dp_ops_t *ops)
{
    dp_ops_t scratch;
    size_t pos;
    uint32_t total, r;
    dp_dns_status_t st;

    if (!ops) {
        dp_ops_reset(&scratch);
        ops = &scratch;
    }
    memset(q, 0, sizeof(*q));
    q->msg_len = (uint32_t)len;
    if (len < DP_DNS_HDR_LEN)
        return DP_DNS_SHORT_HEADER;
    q->id = rd16(msg);
    q->flags = rd16(msg + 2);
    q->qdcount = rd16(msg + 4);
    q->ancount = rd16(msg + 6);
    q->nscount = rd16(msg + 8);
    q->arcount = rd16(msg + 10);
    ops->bytes_parsed += DP_DNS_HDR_LEN;
    if (q->flags & FLAG_QR)
        return DP_DNS_QR_SET;
    if ((q->flags >> 11) & 0xFu)
        return DP_DNS_NOTIMP_OPCODE;
    if (q->qdcount != 1)
        return DP_DNS_FORMERR_QDCOUNT;

    pos = DP_DNS_HDR_LEN;
    st = walk_name(msg, len, &pos, 1);
    if (st != DP_DNS_NOERROR)
        return st;
    if (len - pos < 4u)
        return DP_DNS_TRUNCATED;
    q->qname_len = (uint16_t)(pos - DP_DNS_HDR_LEN);
    q->qtype = rd16(msg + pos);
    q->qclass = rd16(msg + pos + 2);
    pos += 4u;
    ops->bytes_parsed += q->qname_len + 4u;

    /* Every RR the counts announce must be present, so that the message
     * holds nothing unaccounted for; an OPT is only noted here. */
    total = (uint32_t)q->ancount + q->nscount + q->arcount;
    for (r = 0; r < total; r++) {
        size_t start = pos, name_end;
        uint16_t type, rdlen;
        st = walk_name(msg, len, &pos, 0);
        if (st != DP_DNS_NOERROR)
            return st;
        if (len - pos < 10u)
            return DP_DNS_TRUNCATED;
        name_end = pos;
        type = rd16(msg + pos);
        rdlen = rd16(msg + pos + 8);
        if (len - pos - 10u < rdlen)
            return DP_DNS_TRUNCATED;
        pos += 10u + rdlen;
        ops->bytes_parsed += name_end - start + 10u;
        if (type != DP_DNS_TYPE_OPT)
            continue;
        if (r < (uint32_t)q->ancount + q->nscount) {
            q->opt_misplaced = 1;
        } else if (q->opt_count++ == 0) {
            const uint8_t *f = msg + name_end;
            q->opt_owner_root = (uint8_t)(name_end - start == 1u);
            q->opt_udp_size = rd16(f + 2);
            q->opt_ext_rcode = f[4];
            q->opt_version = f[5];
            q->opt_flags = rd16(f + 6);
        }
    }
    if (pos != len)
        return DP_DNS_TRAILING_BYTES;
    return DP_DNS_NOERROR;
}

/* Lines of the word pool spanned by an RRset: its TTL word and addresses. */
static uint32_t rrset_lines(const dns_slot_t *s)
{
    return lines_spanned((uint64_t)s->rrset * 4u, ((uint64_t)s->count + 1u) * 4u);
}

/* The outcome of a well-formed standard query: the rows of the table in
 * dp_dns.h after the parse checks. Sets the result's rcode, aa, opt,
 * udp_limit and answers (before any truncation); *rr and *slot on a hit. */
static dp_dns_status_t judge(const dp_dns_zone_t *zone, const uint8_t *query, const dp_dns_query_t *q,
                             dp_dns_result_t *res, dp_dns_rrset_t *rr, const dns_slot_t **slot, dp_ops_t *ops)
{
    uint32_t edns = zone->cfg.edns_udp_size;

    if (edns && (q->opt_count > 1u || q->opt_misplaced || (q->opt_count == 1u && !q->opt_owner_root))) {
        res->rcode = DP_DNS_RCODE_FORMERR;
        return DP_DNS_FORMERR_OPT;
    }
    if (edns && q->opt_count == 1u) {
        /* RFC 6891 section 6.2.5: a size below 512 counts as 512; never
         * more than this server's own size. */
        uint32_t limit = q->opt_udp_size < edns ? q->opt_udp_size : edns;
        res->udp_limit = limit < DP_DNS_UDP_LIMIT ? DP_DNS_UDP_LIMIT : limit;
        res->opt = 1;
        if (q->opt_version > 0) {
            res->rcode = DP_DNS_RCODE_BADVERS;
            return DP_DNS_BADVERS;
        }
    }
    if (q->qclass != DP_DNS_CLASS_IN) {
        res->rcode = DP_DNS_RCODE_REFUSED;
        return DP_DNS_REFUSED_CLASS;
    }
    if (q->qtype == DP_DNS_TYPE_AXFR || q->qtype == DP_DNS_TYPE_IXFR) {
        res->rcode = DP_DNS_RCODE_NOTIMP;
        return DP_DNS_NOTIMP_QTYPE;
    }
    res->aa = 1;
    if (lookup(zone, query + DP_DNS_HDR_LEN, q->qname_len, rr, slot, ops) != 0) {
        res->bytes_compared = rr->bytes_compared;
        res->rcode = DP_DNS_RCODE_NXDOMAIN;
        return DP_DNS_NXDOMAIN;
    }
    res->bytes_compared = rr->bytes_compared;
    if (rr->count == 0 || (q->qtype != DP_DNS_TYPE_A && q->qtype != DP_DNS_TYPE_ANY))
        return DP_DNS_NODATA;
    res->answers = (uint16_t)rr->count;
    return DP_DNS_NOERROR;
}

dp_drop_reason_t dp_dns_answer(const dp_dns_zone_t *zone, const uint8_t *query, size_t query_len,
                               uint8_t *resp, size_t resp_cap, size_t *resp_len, dp_dns_result_t *res,
                               dp_ops_t *ops)
{
    dp_dns_query_t q;
    dp_dns_result_t scratch;
    dp_dns_rrset_t rr = {0, 0, NULL, 0}; /* read only when answers > 0, i.e. after a hit */
    const dns_slot_t *slot = NULL;
    dp_dns_status_t st;
    size_t question = 0, need, at, k;

    if (!res)
        res = &scratch;
    memset(res, 0, sizeof(*res));
    res->udp_limit = DP_DNS_UDP_LIMIT;
    st = dp_dns_parse(query, query_len, &q, ops);
    if (st == DP_DNS_NOTIMP_OPCODE || st == DP_DNS_FORMERR_QDCOUNT) {
        /* The rest of the message was not parsed: header only. */
        res->rcode = (uint8_t)(st == DP_DNS_NOTIMP_OPCODE ? DP_DNS_RCODE_NOTIMP : DP_DNS_RCODE_FORMERR);
    } else if (st == DP_DNS_NOERROR) {
        res->qtype = q.qtype;
        res->qclass = q.qclass;
        question = (size_t)q.qname_len + 4u;
        st = judge(zone, query, &q, res, &rr, &slot, ops);
    } else {
        res->status = st;
        return dp_dns_status_drop(st);
    }
    res->status = st;

    need = DP_DNS_HDR_LEN + question + (res->opt ? DP_DNS_OPT_RR_LEN : 0u);
    if (need + (size_t)res->answers * DP_DNS_ANSWER_RR_LEN > res->udp_limit) {
        /* The RRset does not fit: leave it out whole, set TC. */
        res->answers = 0;
        res->truncated = 1;
    }
    need += (size_t)res->answers * DP_DNS_ANSWER_RR_LEN;
    if (need > resp_cap) {
        res->status = DP_DNS_NO_ROOM;
        res->rcode = 0;
        res->answers = 0;
        res->truncated = 0;
        res->opt = 0;
        res->aa = 0;
        return DP_DROP_BUFFER_TOO_SMALL;
    }

    /* Everything needed from the query but its question is in q now. The
     * question moves first (memmove: resp may overlap query anywhere), so
     * whatever the header and answers overwrite afterwards is spent. */
    if (question && resp != query) {
        memmove(resp + DP_DNS_HDR_LEN, query + DP_DNS_HDR_LEN, question);
        if (ops)
            ops->bytes_copied += question;
    }
    wr16(resp, q.id);
    resp[2] = (uint8_t)(0x80u | (((q.flags >> 11) & 0xFu) << 3) | ((uint32_t)res->aa << 2) |
                        ((uint32_t)res->truncated << 1) | ((q.flags & FLAG_RD) ? 1u : 0u));
    resp[3] = (uint8_t)(res->rcode & 0xFu);
    wr16(resp + 4, question ? 1u : 0u);
    wr16(resp + 6, res->answers);
    wr16(resp + 8, 0);
    wr16(resp + 10, res->opt);
    at = DP_DNS_HDR_LEN + question;
    for (k = 0; k < res->answers; k++) {
        uint8_t *a = resp + at;
        a[0] = 0xC0; /* pointer to offset 12, the question's name */
        a[1] = DP_DNS_HDR_LEN;
        wr16(a + 2, DP_DNS_TYPE_A);
        wr16(a + 4, DP_DNS_CLASS_IN);
        wr32(a + 6, rr.ttl);
        wr16(a + 10, 4);
        wr32(a + 12, rr.addrs[k]);
        at += DP_DNS_ANSWER_RR_LEN;
    }
    if (res->answers && ops)
        ops->cache_lines += rrset_lines(slot);
    if (res->opt) {
        uint8_t *o = resp + at;
        o[0] = 0; /* root */
        wr16(o + 1, DP_DNS_TYPE_OPT);
        wr16(o + 3, zone->cfg.edns_udp_size);
        o[5] = (uint8_t)(res->rcode >> 4); /* extended RCODE: the bits above the header's 4 */
        o[6] = 0;                          /* version 0 */
        wr16(o + 7, q.opt_flags & OPT_DO);
        wr16(o + 9, 0);
        at += DP_DNS_OPT_RR_LEN;
    }
    if (ops)
        ops->bytes_written += DP_DNS_HDR_LEN + (size_t)res->answers * DP_DNS_ANSWER_RR_LEN +
                              (res->opt ? DP_DNS_OPT_RR_LEN : 0u);
    *resp_len = at;
    return DP_OK;
}

dp_drop_reason_t dp_dns_answer_frame(const dp_dns_zone_t *zone, const uint8_t *frame, size_t len, uint8_t *out,
                                     size_t cap, size_t *out_len, dp_dns_result_t *res, dp_ops_t *ops)
{
    dp_dns_result_t scratch;
    dp_parsed_t p;
    dp_drop_reason_t r;
    uint8_t mac[12], tci[2];
    const uint8_t *dns;
    uint8_t *ip, *udp;
    size_t l2, hdrs, dns_len, dns_cap, resp_len = 0, frame_len, padded;
    uint16_t udp_len;

    if (!res)
        res = &scratch;
    memset(res, 0, sizeof(*res));
    res->status = DP_DNS_STATUS__COUNT;
    r = dp_parse(frame, len, NULL, &p, ops);
    if (r != DP_OK)
        return r;
    if (p.ip_proto != DP_IPPROTO_UDP)
        return DP_DROP_DNS_UNSUPPORTED;
    /* dp_parse checked 8 <= UDP length <= IP payload (no fragments). */
    udp_len = rd16(frame + p.l4_offset + 4);
    dns_len = (size_t)udp_len - DP_UDP_HDR_LEN;
    dns = frame + p.payload_offset;
    l2 = p.l3_offset;
    hdrs = l2 + DP_IP4_MIN_HDR_LEN + DP_UDP_HDR_LEN;
    memcpy(mac, frame, 12);
    tci[0] = l2 > DP_ETH_HDR_LEN ? frame[14] : 0;
    tci[1] = l2 > DP_ETH_HDR_LEN ? frame[15] : 0;

    /* In place, a query with IPv4 options has its message further on than
     * the response's (whose IPv4 header has none): dp_dns_answer handles
     * the overlap. Every response frame is at least 60 bytes: a smaller
     * buffer holds none, so the DNS layer is told it has no room at all
     * (and is not handed a pointer past the buffer). */
    dns_cap = cap >= ETH_MIN_FRAME_NO_FCS && cap > hdrs ? cap - hdrs : 0;
    r = dp_dns_answer(zone, dns, dns_len, dns_cap ? out + hdrs : out, dns_cap, &resp_len, res, ops);
    if (r != DP_OK)
        return r;

    /* Ethernet: swap the MACs, keep the tag. */
    memcpy(out, mac + 6, 6);
    memcpy(out + 6, mac, 6);
    if (l2 > DP_ETH_HDR_LEN) {
        wr16(out + 12, DP_ETHERTYPE_VLAN);
        out[14] = tci[0];
        out[15] = tci[1];
    }
    wr16(out + l2 - 2, DP_ETHERTYPE_IPV4);

    /* IPv4: a fresh 20-byte header, addresses swapped. ID 0 with DF is an
     * atomic datagram (RFC 6864 section 4). */
    ip = out + l2;
    ip4_write_header(ip, 0, (uint16_t)(DP_IP4_MIN_HDR_LEN + DP_UDP_HDR_LEN + resp_len), 0, IP4_FLAG_DF, 64,
                     DP_IPPROTO_UDP, p.dst_ip, p.src_ip, ops);

    /* UDP: ports swapped, checksum over the pseudo-header (RFC 768). */
    udp = ip + DP_IP4_MIN_HDR_LEN;
    wr16(udp, p.dst_port);
    wr16(udp + 2, p.src_port);
    wr16(udp + 4, (uint32_t)(DP_UDP_HDR_LEN + resp_len));
    wr16(udp + 6, 0);
    {
        uint32_t l4 = (uint32_t)(DP_UDP_HDR_LEN + resp_len);
        uint32_t pseudo = (uint32_t)dp_csum_partial(ip + 12, 8, 0, ops) + DP_IPPROTO_UDP + l4;
        uint16_t c = (uint16_t)~dp_csum_partial(udp, l4, pseudo, ops);
        wr16(udp + 6, c == 0 ? 0xFFFFu : c); /* RFC 768: zero means "no checksum" */
    }
    frame_len = hdrs + resp_len;
    padded = frame_len < ETH_MIN_FRAME_NO_FCS ? ETH_MIN_FRAME_NO_FCS : frame_len;
    if (padded > frame_len)
        memset(out + frame_len, 0, padded - frame_len);
    if (ops)
        ops->bytes_written += hdrs + (padded - frame_len);
    *out_len = padded;
    return DP_OK;
}
