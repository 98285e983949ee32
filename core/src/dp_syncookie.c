#include "dp_syncookie.h"
#include "dp_bytes.h"
#include "dp_ip4_header.h"

#include <string.h>

#include "dp_csum.h"

/* ---- SipHash-2-4 (Aumasson & Bernstein 2012, section 2) ---- */

/* SipHash reads its key and message as little-endian 64-bit words. They
 * are assembled byte by byte, never loaded through a uint64_t pointer, so
 * big-endian mips64 computes the same values (and alignment is free). */
static uint64_t le64(const uint8_t *b)
{
    return (uint64_t)b[0] | ((uint64_t)b[1] << 8) | ((uint64_t)b[2] << 16) | ((uint64_t)b[3] << 24) |
           ((uint64_t)b[4] << 32) | ((uint64_t)b[5] << 40) | ((uint64_t)b[6] << 48) | ((uint64_t)b[7] << 56);
}

#define ROTL64(x, r) (((x) << (r)) | ((x) >> (64 - (r))))

#define SIPROUND(v0, v1, v2, v3) \
    do { \
        v0 += v1; \
        v1 = ROTL64(v1, 13); \
        v1 ^= v0; \
        v0 = ROTL64(v0, 32); \
        v2 += v3; \
        v3 = ROTL64(v3, 16); \
        v3 ^= v2; \
        v0 += v3; \
        v3 = ROTL64(v3, 21); \
        v3 ^= v0; \
        v2 += v1; \
        v1 = ROTL64(v1, 17); \
        v1 ^= v2; \
        v2 = ROTL64(v2, 32); \
    } while (0)

static uint64_t siphash24(uint64_t k0, uint64_t k1, const uint8_t *m, size_t len)
{
    /* Initialization constants: "somepseudorandomlygeneratedbytes". */
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull;
    uint64_t v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull;
    uint64_t v3 = k1 ^ 0x7465646279746573ull;
    uint64_t b = (uint64_t)len << 56; /* last block: length mod 256 in the top byte */
    size_t i, tail = len & 7u;

    for (i = 0; i + 8 <= len; i += 8) {
        uint64_t w = le64(m + i);
        v3 ^= w;
        SIPROUND(v0, v1, v2, v3); /* c = 2 compression rounds */
        SIPROUND(v0, v1, v2, v3);
        v0 ^= w;
    }
    while (tail--)
        b |= (uint64_t)m[i + tail] << (8 * tail);
    v3 ^= b;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND(v0, v1, v2, v3); /* d = 4 finalization rounds */
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t dp_syncookie_siphash24(const uint8_t key[16], const void *msg, size_t len, dp_ops_t *ops)
{
    if (ops) {
        ops->hashes++;
        ops->crypto_bytes += len;
    }
    return siphash24(le64(key), le64(key + 8), (const uint8_t *)msg, len);
}

/* ---- cookies ---- */

/* Public structs the model embeds: no hidden padding on any ABI. */
typedef char dp_syncookie_ctx_size_check[(sizeof(dp_syncookie_t) == 24) ? 1 : -1];
typedef char dp_syncookie_tuple_size_check[(sizeof(dp_syncookie_tuple_t) == 12) ? 1 : -1];

static const uint16_t mss_table[DP_SYNCOOKIE_MSS_CLASSES] = DP_SYNCOOKIE_MSS_TABLE;

/* The widest counter field leaves an 8-bit MAC: below that a forged ACK is
 * accepted too often to be worth the name (1 in 256). */
#define COUNTER_BITS_MAX 21u
#define COOKIE_FIELD_BITS 29u /* 32 minus the 3 MSS bits: counter + MAC */

int dp_syncookie_init(dp_syncookie_t *sc, const dp_syncookie_config_t *cfg)
{
    if (!sc || !cfg || cfg->counter_bits < 1 || cfg->counter_bits > COUNTER_BITS_MAX ||
        (uint32_t)cfg->max_age >= (1u << cfg->counter_bits))
        return DP_SYNCOOKIE_EINVAL;
    memset(sc, 0, sizeof(*sc));
    sc->k0 = le64(cfg->key);
    sc->k1 = le64(cfg->key + 8);
    sc->counter_bits = cfg->counter_bits;
    sc->mac_bits = (uint8_t)(COOKIE_FIELD_BITS - cfg->counter_bits);
    sc->max_age = cfg->max_age;
    return 0;
}

unsigned dp_syncookie_mss_index(uint16_t mss)
{
    unsigned i = DP_SYNCOOKIE_MSS_CLASSES - 1;
    /* Round down, so the server never sends more than the client asked
     * for; below the smallest class, the class of 536 (as Linux does). */
    while (i > 0 && mss < mss_table[i])
        i--;
    return i;
}

uint16_t dp_syncookie_mss_of(unsigned index)
{
    return index < DP_SYNCOOKIE_MSS_CLASSES ? mss_table[index] : 0;
}

/* MAC over the 17-byte message of the header comment, truncated to the
 * layout's MAC bits. */
static uint32_t cookie_mac(const dp_syncookie_t *sc, const dp_syncookie_tuple_t *t, uint32_t counter,
                           unsigned mss_index, dp_ops_t *ops)
{
    uint8_t m[DP_SYNCOOKIE_MAC_MSG_LEN];
    wr32(m, t->client_ip);
    wr32(m + 4, t->vip);
    wr16(m + 8, t->client_port);
    wr16(m + 10, t->vip_port);
    wr32(m + 12, counter);
    m[16] = (uint8_t)mss_index;
    if (ops) {
        ops->hashes++;
        ops->crypto_bytes += sizeof m;
    }
    return (uint32_t)siphash24(sc->k0, sc->k1, m, sizeof m) & ((1u << sc->mac_bits) - 1u);
}

uint32_t dp_syncookie_make(const dp_syncookie_t *sc, const dp_syncookie_tuple_t *t, uint16_t mss,
                           uint32_t counter, dp_ops_t *ops)
{
    unsigned idx = dp_syncookie_mss_index(mss);
    uint32_t cmask = (1u << sc->counter_bits) - 1u;
    return ((counter & cmask) << (32u - sc->counter_bits)) | ((uint32_t)idx << sc->mac_bits) |
           cookie_mac(sc, t, counter, idx, ops);
}

int dp_syncookie_check(const dp_syncookie_t *sc, const dp_syncookie_tuple_t *t, uint32_t cookie,
                       uint32_t counter, dp_ops_t *ops)
{
    uint32_t cmask = (1u << sc->counter_bits) - 1u;
    uint32_t age = (counter - (cookie >> (32u - sc->counter_bits))) & cmask;
    unsigned idx = (cookie >> sc->mac_bits) & (DP_SYNCOOKIE_MSS_CLASSES - 1u);

    /* Ages are counted modulo 2^C: a cookie from the future shows up as a
     * large age and is refused with the stale ones. Refusing on age first
     * costs no hash, which matters under an ACK flood. */
    if (age > sc->max_age)
        return DP_SYNCOOKIE_EAGE;
    /* The MAC is over the full counter, counter - age, so a cookie whose
     * C bits have wrapped around does not validate again. */
    if (cookie_mac(sc, t, counter - age, idx, ops) != (cookie & ((1u << sc->mac_bits) - 1u)))
        return DP_SYNCOOKIE_EMAC;
    return mss_table[idx];
}

/* ---- frames ---- */

#define TCP_FIN 0x01u
#define TCP_SYN 0x02u
#define TCP_RST 0x04u
#define TCP_ACK 0x10u
#define IP4_FRAG_OFFSET_MASK 0x1FFFu
#define SYNACK_IP_TCP_LEN 44u /* IPv4 20 + TCP 20 + MSS option 4 */
#define ETH_MIN_FRAME_NO_FCS 60u

/* Offsets of a TCP segment whose dp_parsed_t is checked against the bytes:
 * a stale p can never steer a read or write outside the frame. Returns 0,
 * DP_SYNCOOKIE_EINVAL (p does not describe frame), or 1 when the frame is
 * consistent but not a TCP segment with its header (the caller turns that
 * into its own "not a SYN / not an ACK"). Not counted: dp_parse has read
 * these bytes already. */
static int tcp_where(const uint8_t *frame, size_t len, const dp_parsed_t *p, size_t *l3, size_t *l4,
                     size_t *doff)
{
    const uint8_t *ip;
    size_t ihl, total;

    if (!frame || !p || p->ethertype != DP_ETHERTYPE_IPV4)
        return DP_SYNCOOKIE_EINVAL;
    *l3 = p->l3_offset;
    if (*l3 == DP_ETH_HDR_LEN) {
        if (len < DP_ETH_HDR_LEN || rd16(frame + 12) != DP_ETHERTYPE_IPV4)
            return DP_SYNCOOKIE_EINVAL;
    } else if (*l3 == DP_ETH_HDR_LEN + DP_VLAN_TAG_LEN) {
        if (len < *l3 || rd16(frame + 12) != DP_ETHERTYPE_VLAN || rd16(frame + 16) != DP_ETHERTYPE_IPV4)
            return DP_SYNCOOKIE_EINVAL;
    } else {
        return DP_SYNCOOKIE_EINVAL;
    }
    if (len - *l3 < DP_IP4_MIN_HDR_LEN)
        return DP_SYNCOOKIE_EINVAL;
    ip = frame + *l3;
    ihl = (size_t)(ip[0] & 0x0F) * 4u;
    total = rd16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < DP_IP4_MIN_HDR_LEN || ihl != (size_t)p->ip_ihl * 4u ||
        p->l4_offset != *l3 + ihl || ip[9] != p->ip_proto || total != p->ip_total_len || total < ihl ||
        total > len - *l3)
        return DP_SYNCOOKIE_EINVAL;
    if (ip[9] != DP_IPPROTO_TCP || (rd16(ip + 6) & IP4_FRAG_OFFSET_MASK))
        return 1;
    *l4 = *l3 + ihl;
    if (total - ihl < DP_TCP_MIN_HDR_LEN)
        return DP_SYNCOOKIE_EINVAL;
    *doff = (size_t)(frame[*l4 + 12] >> 4) * 4u;
    if (*doff < DP_TCP_MIN_HDR_LEN || *doff > total - ihl)
        return DP_SYNCOOKIE_EINVAL;
    return 0;
}

int dp_syncookie_check_ack(const dp_syncookie_t *sc, const uint8_t *frame, size_t len, const dp_parsed_t *p,
                           uint32_t counter, dp_ops_t *ops)
{
    size_t l3, l4, doff;
    const uint8_t *tcp;
    dp_syncookie_tuple_t t;
    int rc;

    if (!sc)
        return DP_SYNCOOKIE_EINVAL;
    rc = tcp_where(frame, len, p, &l3, &l4, &doff);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return DP_SYNCOOKIE_ENOTACK;
    tcp = frame + l4;
    /* Linux (cookie_v4_check) takes only an ACK without RST; a SYN is a
     * new handshake, not the third step of one. */
    if (!(tcp[13] & TCP_ACK) || (tcp[13] & (TCP_SYN | TCP_RST)))
        return DP_SYNCOOKIE_ENOTACK;
    t.client_ip = rd32(frame + l3 + 12);
    t.vip = rd32(frame + l3 + 16);
    t.client_port = rd16(tcp);
    t.vip_port = rd16(tcp + 2);
    return dp_syncookie_check(sc, &t, rd32(tcp + 8) - 1u, counter, ops);
}

/* The client's MSS: the last well-formed MSS option of the SYN (Linux's
 * tcp_parse_options also keeps the last), 0 when none. The walk stops at
 * End of Option List or at the first malformed option (length < 2 or past
 * the header), keeping what it found before. */
static uint16_t syn_mss(const uint8_t *opt, size_t n)
{
    uint16_t mss = 0;
    size_t i = 0;
    while (i < n) {
        size_t olen;
        if (opt[i] == 0) /* EOL */
            break;
        if (opt[i] == 1) { /* NOP */
            i++;
            continue;
        }
        if (i + 1 >= n)
            break;
        olen = opt[i + 1];
        if (olen < 2 || olen > n - i)
            break;
        /* An MSS of 0 is meaningless; Linux ignores it too. */
        if (opt[i] == 2 && olen == 4 && rd16(opt + i + 2) != 0)
            mss = rd16(opt + i + 2);
        i += olen;
    }
    return mss;
}

int dp_syncookie_synack(const dp_syncookie_t *sc, uint8_t *frame, size_t len, size_t cap, dp_parsed_t *p,
                        uint32_t counter, const dp_syncookie_reply_t *r, size_t *out_len, dp_ops_t *ops)
{
    size_t l3, l4, doff, reply_len, i;
    uint8_t mac[6], *ip, *tcp;
    uint32_t client_seq, cookie, pseudo;
    dp_syncookie_tuple_t t;
    uint16_t mss;
    int rc;

    if (!sc || !r || !out_len || cap < len)
        return DP_SYNCOOKIE_EINVAL;
    rc = tcp_where(frame, len, p, &l3, &l4, &doff);
    if (rc < 0)
        return rc;
    /* A SYN with ACK is a SYN-ACK; with RST or FIN it is junk (Linux's
     * LISTEN state discards SYN+FIN too). */
    if (rc > 0 || (frame[l4 + 13] & (TCP_SYN | TCP_ACK | TCP_RST | TCP_FIN)) != TCP_SYN)
        return DP_SYNCOOKIE_ENOTSYN;
    reply_len = l3 + SYNACK_IP_TCP_LEN;
    if (reply_len < ETH_MIN_FRAME_NO_FCS)
        reply_len = ETH_MIN_FRAME_NO_FCS;
    if (cap < reply_len)
        return DP_SYNCOOKIE_ENOSPC;

    /* Read everything the reply needs before writing: with IP options the
     * new TCP header starts before the old one. */
    ip = frame + l3;
    t.client_ip = rd32(ip + 12);
    t.vip = rd32(ip + 16);
    t.client_port = rd16(frame + l4);
    t.vip_port = rd16(frame + l4 + 2);
    client_seq = rd32(frame + l4 + 4);
    mss = syn_mss(frame + l4 + DP_TCP_MIN_HDR_LEN, doff - DP_TCP_MIN_HDR_LEN);
    if (ops)
        ops->bytes_parsed += doff - DP_TCP_MIN_HDR_LEN;
    cookie = dp_syncookie_make(sc, &t, mss, counter, ops);

    memcpy(mac, frame, 6);
    memcpy(frame, frame + 6, 6);
    memcpy(frame + 6, mac, 6);

    /* ID 0: DF set and never fragmented (RFC 6864) */
    ip4_write_header(ip, 0, SYNACK_IP_TCP_LEN, 0, IP4_FLAG_DF, r->ttl, DP_IPPROTO_TCP, t.vip, t.client_ip, ops);

    tcp = ip + DP_IP4_MIN_HDR_LEN;
    wr16(tcp, t.vip_port);
    wr16(tcp + 2, t.client_port);
    wr32(tcp + 4, cookie);
    wr32(tcp + 8, client_seq + 1u);
    tcp[12] = 6u << 4; /* data offset: 20 + the 4-byte MSS option */
    tcp[13] = TCP_SYN | TCP_ACK;
    wr16(tcp + 14, r->window);
    wr16(tcp + 16, 0);
    wr16(tcp + 18, 0);
    tcp[20] = 2; /* MSS option, RFC 9293 3.2 */
    tcp[21] = 4;
    wr16(tcp + 22, r->mss);
    /* Pseudo-header (RFC 9293 3.1): addresses, zero + protocol, TCP length. */
    pseudo = dp_csum_partial(ip + 12, 8, 0, ops);
    pseudo += DP_IPPROTO_TCP + (SYNACK_IP_TCP_LEN - DP_IP4_MIN_HDR_LEN);
    wr16(tcp + 16, (uint16_t)~dp_csum_partial(tcp, SYNACK_IP_TCP_LEN - DP_IP4_MIN_HDR_LEN, pseudo, ops));
    for (i = l3 + SYNACK_IP_TCP_LEN; i < reply_len; i++)
        frame[i] = 0;

    p->ip_total_len = SYNACK_IP_TCP_LEN;
    p->ip_ihl = 5;
    p->ip_ttl = r->ttl;
    p->tcp_flags = TCP_SYN | TCP_ACK;
    p->src_ip = t.vip;
    p->dst_ip = t.client_ip;
    p->src_port = t.vip_port;
    p->dst_port = t.client_port;
    p->l4_offset = (uint16_t)(l3 + DP_IP4_MIN_HDR_LEN);
    p->payload_offset = (uint16_t)(l3 + SYNACK_IP_TCP_LEN);
    p->payload_len = 0;
    *out_len = reply_len;
    if (ops)
        ops->bytes_written += 12 + (reply_len - l3);
    return mss_table[dp_syncookie_mss_index(mss)];
}
