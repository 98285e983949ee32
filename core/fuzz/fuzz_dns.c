/* libFuzzer harness for the DNS service (dp_dns_answer, dp_dns_answer_frame)
 * on arbitrary messages against a small fixed zone. Built by the sanitizer
 * sub-build (clang, -fsanitize=fuzzer,address,undefined); see
 * docs/fuzzing.md.
 *
 * Input layout:
 *   0      mode: bit 0 EDNS-off zone (else EDNS 1232); bits 1-2 response
 *          buffer: 0 4096 bytes, 1 byte 1's value, 2 512, 3 exactly the
 *          query's length (in frame mode: the query frame's); bit 3 frame mode (the message is wrapped in an
 *          Ethernet/IPv4/UDP frame built here); bit 4 with a VLAN tag;
 *          bit 5 with 3 words of IPv4 options
 *   1      buffer size for mode 1
 *   2..    the DNS message
 *
 * Every input is answered twice, into a separate exactly sized heap buffer
 * (ASan reports any write past it) and in place; both must agree. Checked:
 * the outcome equals the one a model of dp_dns.h's table in this file
 * gives (or no_room); a drop writes nothing and names the reason of its status; a response is
 * decoded here and must hold the query's ID, opcode and RD, QR set, RA/Z
 * clear, the question byte for byte, exactly the A records a brute-force
 * scan of the zone finds for the question (unless TC), an OPT exactly when
 * reported, nothing else, and fit the buffer and the size limit. In frame
 * mode the response frame must parse (checksum verified), have addresses,
 * ports and MACs swapped, a verifying UDP checksum, and carry exactly the
 * payload-level answer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define CANARY 0xA5u
#define ZONE_MEM (1u << 14)

/* The zone's content, also scanned by brute force below. */
struct ref_name {
    const char *dotted;
    uint32_t ttl;
    uint32_t count;
};

static const struct ref_name names[] = {
    {"a", 5, 1},           {"www.example.com", 300, 3}, {"Mail.Example.com", 600, 0},
    {"big.example.com", 60, 40}, {".", 1, 2},            {"x.y.z", 0x7FFFFFFF, 1},
};
#define NNAMES (sizeof names / sizeof names[0])

static uint32_t addr_of(unsigned name, unsigned k)
{
    return 0x0A000000u + (name << 8) + k;
}

static uint8_t wires[NNAMES][256];
static size_t wire_lens[NNAMES];

static dp_dns_zone_t *make_zone(uint8_t *mem, uint32_t edns)
{
    dp_dns_zone_config_t cfg = {8, 256, 64, 0};
    dp_dns_zone_t *z;
    unsigned i, k;
    cfg.edns_udp_size = edns;
    CHECK(dp_dns_zone_memory_size(&cfg) <= ZONE_MEM);
    z = dp_dns_zone_create(mem, ZONE_MEM, &cfg);
    CHECK(z != NULL);
    for (i = 0; i < NNAMES; i++) {
        uint32_t a[64];
        CHECK(dp_dns_name_to_wire(names[i].dotted, wires[i], sizeof wires[i], &wire_lens[i]) == 0);
        for (k = 0; k < names[i].count; k++)
            a[k] = addr_of(i, k);
        CHECK(dp_dns_zone_add(z, wires[i], wire_lens[i], a, names[i].count, names[i].ttl, NULL) == 0);
    }
    return z;
}

static uint8_t lower(uint8_t c)
{
    return (uint8_t)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

/* Brute-force lookup: index of the name, or -1. */
static int ref_lookup(const uint8_t *q, size_t len)
{
    unsigned i;
    size_t k;
    for (i = 0; i < NNAMES; i++) {
        if (wire_lens[i] != len)
            continue;
        for (k = 0; k < len && wires[i][k] == lower(q[k]); k++)
            ;
        if (k == len)
            return (int)i;
    }
    return -1;
}

/* QNAME length of a query known to have a well-formed question. */
static size_t qname_len(const uint8_t *m)
{
    size_t p = 12;
    while (m[p])
        p += 1u + m[p];
    return p + 1 - 12;
}

/* The outcome dp_dns.h's table gives message m, worked out again here
 * (a cursor over the bytes, every length checked before use). */
static dp_dns_status_t ref_name(const uint8_t *m, size_t len, size_t *pos, int question)
{
    size_t total = 0;
    while (*pos < len) {
        unsigned c = m[*pos];
        if (c == 0) {
            *pos += 1;
            return DP_DNS_NOERROR;
        }
        if (c >= 0xC0) {
            size_t target;
            if (question)
                return DP_DNS_QNAME_POINTER;
            if (len - *pos < 2)
                return DP_DNS_TRUNCATED;
            target = (size_t)(c - 0xC0) * 256 + m[*pos + 1];
            if (target < 12 || target >= *pos)
                return DP_DNS_BAD_POINTER;
            *pos += 2;
            return DP_DNS_NOERROR;
        }
        if (c >= 64)
            return DP_DNS_LABEL_TOO_LONG;
        total += c + 1;
        if (total + 1 > 255)
            return DP_DNS_NAME_TOO_LONG;
        *pos += c + 1;
    }
    return DP_DNS_TRUNCATED;
}

static dp_dns_status_t ref_outcome(const uint8_t *m, size_t len, uint32_t edns)
{
    size_t pos = 12, qend, i, rrs, opts = 0, opt_at = 0;
    int misplaced = 0;
    dp_dns_status_t st;
    unsigned qtype, qclass;
    if (len < 12)
        return DP_DNS_SHORT_HEADER;
    if (m[2] & 0x80)
        return DP_DNS_QR_SET;
    if (m[2] & 0x78)
        return DP_DNS_NOTIMP_OPCODE;
    if (be(m + 4, 2) != 1)
        return DP_DNS_FORMERR_QDCOUNT;
    if ((st = ref_name(m, len, &pos, 1)) != DP_DNS_NOERROR)
        return st;
    if (len < pos + 4)
        return DP_DNS_TRUNCATED;
    qtype = be(m + pos, 2);
    qclass = be(m + pos + 2, 2);
    qend = pos;
    pos += 4;
    rrs = be(m + 6, 2) + be(m + 8, 2) + be(m + 10, 2);
    for (i = 0; i < rrs; i++) {
        size_t owner = pos;
        if ((st = ref_name(m, len, &pos, 0)) != DP_DNS_NOERROR)
            return st;
        if (len < pos + 10 || len < pos + 10 + be(m + pos + 8, 2))
            return DP_DNS_TRUNCATED;
        if (be(m + pos, 2) == 41) {
            if (i < be(m + 6, 2) + be(m + 8, 2))
                misplaced = 1;
            else if (opts++ == 0)
                opt_at = owner;
        }
        pos += 10 + be(m + pos + 8, 2);
    }
    if (pos != len)
        return DP_DNS_TRAILING_BYTES;
    if (edns && (opts > 1 || misplaced || (opts == 1 && m[opt_at] != 0)))
        return DP_DNS_FORMERR_OPT;
    if (edns && opts == 1 && m[opt_at + 6] > 0) /* root(1) TYPE(2) CLASS(2) ext-RCODE(1) version */
        return DP_DNS_BADVERS;
    if (qclass != 1)
        return DP_DNS_REFUSED_CLASS;
    if (qtype == 251 || qtype == 252)
        return DP_DNS_NOTIMP_QTYPE;
    i = (size_t)ref_lookup(m + 12, qend - 12);
    if ((int)i < 0)
        return DP_DNS_NXDOMAIN;
    if (names[i].count == 0 || (qtype != 1 && qtype != 255))
        return DP_DNS_NODATA;
    return DP_DNS_NOERROR;
}

/* Decodes and checks a response to query q (qlen bytes). */
static void check_response(const dp_dns_zone_t *z, uint32_t edns, const uint8_t *q, size_t qlen, const uint8_t *r,
                           size_t rlen, const dp_dns_result_t *res, size_t cap)
{
    unsigned qd, an, ns, ar, k;
    size_t pos = 12, ql = 0;
    uint32_t flags;
    int found = -1;
    (void)z;
    CHECK(rlen >= 12 && rlen <= cap && rlen <= res->udp_limit);
    CHECK(be(r, 2) == be(q, 2)); /* ID */
    flags = be(r + 2, 2);
    CHECK(flags & 0x8000u);                                  /* QR */
    CHECK(((flags >> 11) & 15u) == ((be(q + 2, 2) >> 11) & 15u)); /* opcode */
    CHECK(((flags >> 10) & 1u) == res->aa);
    CHECK(((flags >> 9) & 1u) == res->truncated);
    CHECK(((flags >> 8) & 1u) == ((be(q + 2, 2) >> 8) & 1u)); /* RD copied */
    CHECK((flags & 0x00F0u) == 0);                             /* RA, Z, AD, CD clear */
    CHECK((flags & 15u) == (res->rcode & 15u));
    qd = be(r + 4, 2);
    an = be(r + 6, 2);
    ns = be(r + 8, 2);
    ar = be(r + 10, 2);
    CHECK(qd <= 1 && ns == 0 && an == res->answers && ar == res->opt);
    if (res->status == DP_DNS_NOTIMP_OPCODE || res->status == DP_DNS_FORMERR_QDCOUNT) {
        CHECK(qd == 0 && an == 0 && ar == 0 && rlen == 12);
        CHECK(res->status == DP_DNS_NOTIMP_OPCODE ? res->rcode == 4 : res->rcode == 1);
        return;
    }
    CHECK(qd == 1);
    ql = qname_len(q);
    CHECK(qlen >= 12 + ql + 4 && rlen >= 12 + ql + 4);
    CHECK(memcmp(r + 12, q + 12, ql + 4) == 0);
    pos += ql + 4;
    CHECK(res->qtype == be(q + 12 + ql, 2) && res->qclass == be(q + 14 + ql, 2));
    if (res->status == DP_DNS_NOERROR || res->status == DP_DNS_NODATA || res->status == DP_DNS_NXDOMAIN) {
        /* The brute-force scan agrees with the verdict. */
        found = ref_lookup(q + 12, ql);
        CHECK(res->qclass == 1 && res->aa);
        CHECK((found < 0) == (res->status == DP_DNS_NXDOMAIN));
        if (found >= 0) {
            int want_records = names[found].count > 0 && (res->qtype == 1 || res->qtype == 255);
            CHECK(want_records == (res->status == DP_DNS_NOERROR));
            CHECK(res->truncated ? an == 0 : an == (want_records ? names[found].count : 0));
            /* TC exactly when the records would not fit. */
            CHECK(res->truncated ==
                  (want_records && 12 + ql + 4 + 16u * names[found].count + 11u * res->opt > res->udp_limit));
        }
    } else {
        CHECK(an == 0 && !res->aa);
    }
    for (k = 0; k < an; k++) {
        const uint8_t *a = r + pos;
        CHECK(pos + 16 <= rlen);
        CHECK(a[0] == 0xC0 && a[1] == 12 && be(a + 2, 2) == 1 && be(a + 4, 2) == 1 && be(a + 10, 2) == 4);
        CHECK(be(a + 6, 4) == names[found].ttl && be(a + 12, 4) == addr_of((unsigned)found, k));
        pos += 16;
    }
    if (ar) {
        const uint8_t *o = r + pos;
        CHECK(edns != 0 && pos + 11 <= rlen);
        CHECK(o[0] == 0 && be(o + 1, 2) == 41 && be(o + 3, 2) == edns && o[5] == (res->rcode >> 4) && o[6] == 0 &&
              (be(o + 7, 2) & 0x7FFFu) == 0 && be(o + 9, 2) == 0);
        pos += 11;
    }
    CHECK(pos == rlen);
}

/* Answers msg into a separate exactly sized buffer and in place; checks
 * both. Returns the reason; *out (malloc'ed, caller frees) and *out_len
 * hold the response. */
static dp_drop_reason_t answer_both(const dp_dns_zone_t *z, uint32_t edns, const uint8_t *msg, size_t len,
                                    size_t cap, uint8_t **out, size_t *out_len, dp_dns_result_t *res)
{
    dp_dns_result_t r2;
    dp_ops_t ops, ops2;
    dp_drop_reason_t r, ri;
    uint8_t *buf = malloc(cap ? cap : 1), *inplace;
    size_t n = 0, n2 = 0, i, big = len > cap ? len : cap;

    CHECK(buf != NULL);
    memset(buf, CANARY, cap);
    dp_ops_reset(&ops);
    r = dp_dns_answer(z, msg, len, buf, cap, &n, res, &ops);
    CHECK((unsigned)res->status < (unsigned)DP_DNS_STATUS__COUNT);
    CHECK(r == dp_dns_status_drop(res->status));
    CHECK(res->status == ref_outcome(msg, len, edns) || res->status == DP_DNS_NO_ROOM);
    CHECK(ops.packets == 0 && ops.bytes_parsed <= len && ops.hashes <= 1);
    if (r != DP_OK) {
        for (i = 0; i < cap; i++)
            CHECK(buf[i] == CANARY);
        CHECK(ops.bytes_written == 0 && ops.bytes_copied == 0);
        n = 0;
    } else {
        CHECK(ops.bytes_written + ops.bytes_copied == n);
        check_response(z, edns, msg, len, buf, n, res, cap);
    }

    /* In place: the buffer holds the query and has room for cap bytes. */
    inplace = malloc(big ? big : 1);
    CHECK(inplace != NULL);
    memcpy(inplace, msg, len);
    dp_ops_reset(&ops2);
    ri = dp_dns_answer(z, inplace, len, inplace, cap, &n2, &r2, &ops2);
    CHECK(ri == r && r2.status == res->status && r2.answers == res->answers && r2.rcode == res->rcode);
    if (r == DP_OK) {
        CHECK(n2 == n && memcmp(inplace, buf, n) == 0);
        CHECK(ops2.bytes_copied == 0 && ops2.bytes_written == ops.bytes_written);
    } else {
        CHECK(memcmp(inplace, msg, len) == 0); /* a drop leaves the query as it was */
    }
    CHECK(ops2.table_probes == ops.table_probes && ops2.cache_lines == ops.cache_lines);
    free(inplace);
    *out = buf;
    *out_len = n;
    return r;
}

/* Ethernet (+tag) + IPv4 (+options, checksum) + UDP 40000 -> 53 + msg. */
static size_t build_frame(uint8_t *f, const uint8_t *msg, size_t len, int vlan, unsigned opt_words)
{
    static const uint8_t l2[12] = {2, 0, 0, 0, 0, 0x35, 2, 0, 0, 0, 0, 2};
    size_t at = 12, ip, ihl = 20u + 4u * opt_words, i;
    uint32_t c;
    memcpy(f, l2, 12);
    if (vlan) {
        f[at++] = 0x81;
        f[at++] = 0x00;
        f[at++] = 0x20;
        f[at++] = 0x64;
    }
    f[at++] = 0x08;
    f[at++] = 0x00;
    ip = at;
    memset(f + ip, 0, ihl);
    f[ip] = (uint8_t)(0x40 | ihl / 4);
    f[ip + 2] = (uint8_t)((ihl + 8 + len) >> 8);
    f[ip + 3] = (uint8_t)(ihl + 8 + len);
    f[ip + 8] = 61;
    f[ip + 9] = 17;
    f[ip + 12] = 10, f[ip + 13] = 1, f[ip + 14] = 2, f[ip + 15] = 3;
    f[ip + 16] = 10, f[ip + 17] = 0, f[ip + 18] = 0, f[ip + 19] = 53;
    for (i = 20; i < ihl; i++)
        f[ip + i] = 1; /* NOP options */
    c = ~sum16(f + ip, ihl, 0) & 0xFFFFu;
    f[ip + 10] = (uint8_t)(c >> 8);
    f[ip + 11] = (uint8_t)c;
    at = ip + ihl;
    f[at] = 40000 >> 8, f[at + 1] = 40000 & 255, f[at + 2] = 0, f[at + 3] = 53;
    f[at + 4] = (uint8_t)((8 + len) >> 8);
    f[at + 5] = (uint8_t)(8 + len);
    f[at + 6] = 0, f[at + 7] = 0;
    memcpy(f + at + 8, msg, len);
    return at + 8 + len;
}

/* Frame mode; cap as for messages, mode 3 meaning exactly the frame. */
static void check_frame(const dp_dns_zone_t *z, uint32_t edns, const uint8_t *msg, size_t len, int vlan,
                        unsigned opt_words, unsigned cm, uint8_t capb)
{
    size_t flen, cap, olen = 0, olen2 = 0, plen = 0, l2 = vlan ? 18u : 14u, i;
    uint8_t *frame, *out, *inplace, *payload;
    dp_dns_result_t res, res2, pres;
    dp_drop_reason_t r, r2, pr;
    dp_parsed_t p;

    if (len > 1400)
        return;
    frame = malloc(len + 80);
    CHECK(frame != NULL);
    flen = build_frame(frame, msg, len, vlan, opt_words);
    cap = cm == 0 ? 4096 : cm == 1 ? capb : cm == 2 ? 512 : flen;
    out = malloc(cap ? cap : 1);
    CHECK(out != NULL);
    memset(out, CANARY, cap);
    r = dp_dns_answer_frame(z, frame, flen, out, cap, &olen, &res, NULL);
    pr = answer_both(z, edns, msg, len, cap > l2 + 28 ? cap - l2 - 28 : 0, &payload, &plen, &pres);
    /* The DNS layer decides, except that no frame is under 60 bytes. */
    if (cap < 60)
        CHECK(r == (pr == DP_OK ? DP_DROP_BUFFER_TOO_SMALL : pr));
    else
        CHECK(r == pr);
    inplace = malloc(flen > cap ? flen : cap);
    CHECK(inplace != NULL);
    memcpy(inplace, frame, flen);
    r2 = dp_dns_answer_frame(z, inplace, flen, inplace, cap, &olen2, &res2, NULL);
    CHECK(r2 == r);
    if (r == DP_OK) {
        dp_parse_opts_t strict = {1, 0};
        const uint8_t *ip = out + l2, *udp = ip + 20;
        CHECK(olen == olen2 && memcmp(out, inplace, olen) == 0);
        for (i = olen; i < cap; i++)
            CHECK(out[i] == CANARY);
        CHECK(olen == (l2 + 28 + plen < 60 ? 60 : l2 + 28 + plen));
        CHECK(dp_parse(out, olen, &strict, &p, NULL) == DP_OK);
        CHECK(p.src_ip == 0x0A000035u && p.dst_ip == 0x0A010203u && p.src_port == 53 && p.dst_port == 40000);
        CHECK(memcmp(out, frame + 6, 6) == 0 && memcmp(out + 6, frame, 6) == 0);
        CHECK(p.vlan_tci == (vlan ? 0x2064 : 0) && p.ip_ttl == 64 && p.ip_ihl == 5);
        CHECK(be(udp + 4, 2) == 8 + plen && memcmp(udp + 8, payload, plen) == 0);
        CHECK(sum16(udp, 8 + plen, sum16(ip + 12, 8, 17u + 8u + (uint32_t)plen)) == 0xFFFFu);
        CHECK(res.status == pres.status && res.answers == pres.answers);
    } else {
        for (i = 0; i < cap; i++)
            CHECK(out[i] == CANARY);
    }
    free(payload);
    free(inplace);
    free(out);
    free(frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t mem_edns[ZONE_MEM], mem_plain[ZONE_MEM];
    static dp_dns_zone_t *zone_edns, *zone_plain;
    const dp_dns_zone_t *z;
    uint32_t edns;
    uint8_t mode, capb, *out;
    const uint8_t *msg;
    size_t len, cap, out_len;
    dp_dns_result_t res;
    unsigned cm;

    if (!zone_edns) {
        zone_edns = make_zone(mem_edns, 1232);
        zone_plain = make_zone(mem_plain, 0);
    }
    if (size < 2)
        return 0;
    mode = data[0];
    capb = data[1];
    msg = data + 2;
    len = size - 2;
    z = mode & 1 ? zone_plain : zone_edns;
    edns = mode & 1 ? 0 : 1232;
    cm = (mode >> 1) & 3u;
    if (mode & 8) {
        check_frame(z, edns, msg, len, (mode >> 4) & 1, mode & 32 ? 3u : 0u, cm, capb);
        return 0;
    }
    cap = cm == 0 ? 4096 : cm == 1 ? capb : cm == 2 ? 512 : len;
    answer_both(z, edns, msg, len, cap, &out, &out_len, &res);
    free(out);
    return 0;
}
