#include "dp_nat.h"
#include "dp_bytes.h"
#include "dp_ip4_header.h"

#include <string.h>

#include "dp_csum.h"

#define IP4_FRAG_OFFSET_MASK 0x1FFFu
#define UDP_CSUM_OFFSET 6u
#define TCP_CSUM_OFFSET 16u

/* Where the headers of a checked frame are. */
typedef struct nat_where {
    size_t l3;       /* IPv4 header offset */
    size_t l4;       /* TCP/UDP header offset (l3 + IHL*4) */
    size_t total;    /* IPv4 total length */
    size_t csum_off; /* L4 checksum offset within the L4 header */
    int udp;         /* nonzero for UDP */
} nat_where_t;

/* p must describe frame: the rewrites trust its offsets only after
 * checking them against len and against the header bytes themselves, so
 * that a stale p cannot steer a write outside the frame or into the wrong
 * field. These are re-checks of what dp_parse read, not parsing, and are
 * not counted. */
static int check_ip(const uint8_t *frame, size_t len, const dp_parsed_t *p, nat_where_t *w)
{
    const uint8_t *ip;
    size_t ihl;

    if (!frame || !p || p->ethertype != DP_ETHERTYPE_IPV4)
        return DP_NAT_EINVAL;
    w->l3 = p->l3_offset;
    /* dp_parse puts IPv4 after 14 bytes, or 18 with one VLAN tag; the
     * tunnel code relies on the Ethernet header being one of the two. */
    if (w->l3 == DP_ETH_HDR_LEN) {
        if (len < DP_ETH_HDR_LEN || rd16(frame + 12) != DP_ETHERTYPE_IPV4)
            return DP_NAT_EINVAL;
    } else if (w->l3 == DP_ETH_HDR_LEN + DP_VLAN_TAG_LEN) {
        if (len < w->l3 || rd16(frame + 12) != DP_ETHERTYPE_VLAN || rd16(frame + 16) != DP_ETHERTYPE_IPV4)
            return DP_NAT_EINVAL;
    } else {
        return DP_NAT_EINVAL;
    }
    if (len - w->l3 < DP_IP4_MIN_HDR_LEN)
        return DP_NAT_EINVAL;
    ip = frame + w->l3;
    ihl = (size_t)(ip[0] & 0x0F) * 4u;
    if ((ip[0] >> 4) != 4 || ihl < DP_IP4_MIN_HDR_LEN || ihl != (size_t)p->ip_ihl * 4u ||
        p->l4_offset != w->l3 + ihl || ip[9] != p->ip_proto)
        return DP_NAT_EINVAL;
    w->total = rd16(ip + 2);
    if (w->total != p->ip_total_len || w->total < ihl || w->total > len - w->l3)
        return DP_NAT_EINVAL;
    w->l4 = w->l3 + ihl;
    return 0;
}

/* check_ip plus a TCP/UDP header wholly inside the IP packet. */
static int check_l4(const uint8_t *frame, size_t len, const dp_parsed_t *p, nat_where_t *w)
{
    const uint8_t *ip;
    size_t hdr;
    int rc = check_ip(frame, len, p, w);

    if (rc)
        return rc;
    ip = frame + w->l3;
    if (ip[9] != DP_IPPROTO_TCP && ip[9] != DP_IPPROTO_UDP)
        return DP_NAT_ENOL4;
    /* A non-first fragment has no ports to rewrite. A first fragment does,
     * and its L4 checksum (over the whole datagram) updates exactly. */
    if (rd16(ip + 6) & IP4_FRAG_OFFSET_MASK)
        return DP_NAT_ENOL4;
    w->udp = ip[9] == DP_IPPROTO_UDP;
    hdr = w->udp ? DP_UDP_HDR_LEN : DP_TCP_MIN_HDR_LEN;
    if (w->total - (w->l4 - w->l3) < hdr)
        return DP_NAT_EINVAL; /* dp_parse would have refused it: L4 truncated */
    w->csum_off = w->udp ? UDP_CSUM_OFFSET : TCP_CSUM_OFFSET;
    return 0;
}

/* One address and its port: the IPv4 header checksum follows the address;
 * the L4 checksum follows the address (pseudo-header) and the port. */
static void rewrite(uint8_t *frame, const nat_where_t *w, int src, uint32_t ip_new, uint16_t port_new,
                    dp_ops_t *ops)
{
    uint8_t *ip = frame + w->l3;
    uint8_t *l4 = frame + w->l4;
    uint8_t *addr = ip + (src ? 12 : 16);
    uint8_t *port = l4 + (src ? 0 : 2);
    uint8_t *l4sum = l4 + w->csum_off;
    uint32_t ip_old = rd32(addr);
    uint16_t port_old = rd16(port);
    size_t written = 4 + 2 + 2;

    wr16(ip + 10, dp_csum_update32(rd16(ip + 10), ip_old, ip_new, ops));
    wr32(addr, ip_new);
    /* RFC 768: a UDP checksum of zero means none was computed; it must
     * stay zero (updating it would invent a wrong checksum). */
    if (!(w->udp && rd16(l4sum) == 0)) {
        uint16_t c = dp_csum_update32(rd16(l4sum), ip_old, ip_new, ops);
        c = dp_csum_update16(c, port_old, port_new, ops);
        /* A computed UDP checksum of zero is sent as all ones (RFC 768);
         * in one's complement both are zero, so the sum still verifies. */
        if (w->udp && c == 0)
            c = 0xFFFFu;
        wr16(l4sum, c);
        written += 2;
    }
    wr16(port, port_new);
    if (ops)
        ops->bytes_written += written;
}

int dp_nat_rewrite_dst(uint8_t *frame, size_t len, dp_parsed_t *p, uint32_t ip, uint16_t port, dp_ops_t *ops)
{
    nat_where_t w;
    int rc = check_l4(frame, len, p, &w);
    if (rc)
        return rc;
    rewrite(frame, &w, 0, ip, port, ops);
    p->dst_ip = ip;
    p->dst_port = port;
    return 0;
}

int dp_nat_rewrite_src(uint8_t *frame, size_t len, dp_parsed_t *p, uint32_t ip, uint16_t port, dp_ops_t *ops)
{
    nat_where_t w;
    int rc = check_l4(frame, len, p, &w);
    if (rc)
        return rc;
    rewrite(frame, &w, 1, ip, port, ops);
    p->src_ip = ip;
    p->src_port = port;
    return 0;
}

int dp_nat_rewrite_full(uint8_t *frame, size_t len, dp_parsed_t *p, uint32_t src_ip, uint16_t src_port,
                        uint32_t dst_ip, uint16_t dst_port, dp_ops_t *ops)
{
    nat_where_t w;
    int rc = check_l4(frame, len, p, &w);
    if (rc)
        return rc;
    /* The source rewrite never turns a UDP checksum into 0 (0 is sent as
     * 0xFFFF), so "no checksum" is judged the same way by both halves. */
    rewrite(frame, &w, 1, src_ip, src_port, ops);
    rewrite(frame, &w, 0, dst_ip, dst_port, ops);
    p->src_ip = src_ip;
    p->src_port = src_port;
    p->dst_ip = dst_ip;
    p->dst_port = dst_port;
    return 0;
}

int dp_nat_dr(uint8_t *frame, size_t len, const uint8_t server_mac[6], const uint8_t balancer_mac[6],
              dp_ops_t *ops)
{
    if (!frame || !server_mac || !balancer_mac || len < 12)
        return DP_NAT_EINVAL;
    memcpy(frame, server_mac, 6);
    memcpy(frame + 6, balancer_mac, 6);
    if (ops)
        ops->bytes_written += 12;
    return 0;
}

int dp_nat_ipip_encap(uint8_t *frame, size_t headroom, size_t len, dp_parsed_t *p, const dp_nat_tunnel_t *t,
                      size_t *out_len, dp_ops_t *ops)
{
    nat_where_t w;
    uint8_t l2_tail[DP_VLAN_TAG_LEN + 2]; /* VLAN tag (if any) and EtherType */
    uint8_t *out, *outer;
    const uint8_t *inner;
    size_t tail_len;
    int rc = check_ip(frame, len, p, &w);

    if (rc)
        return rc;
    if (!t || !out_len)
        return DP_NAT_EINVAL;
    if (headroom < DP_NAT_IPIP_HEADROOM)
        return DP_NAT_ENOHEADROOM;
    inner = frame + w.l3;
    /* IPVS (ensure_mtu_is_adequate) compares with the route MTU less the
     * tunnel header; the same test on the outer packet. A uint16_t MTU also
     * keeps the outer total length within 16 bits. */
    if (w.total + DP_NAT_IPIP_HEADROOM > t->mtu)
        return (rd16(inner + 6) & IP4_FLAG_DF) ? DP_NAT_EFRAG_NEEDED : DP_NAT_EMTU;

    /* The frame grows at the front: the Ethernet header moves up 20 bytes
     * and the outer header fills the gap, so the inner packet is not
     * copied. The old L2 tail is saved first: the outer header overwrites
     * it (l3 <= 18 < 20, so the new L2 header itself overlaps nothing). */
    tail_len = w.l3 - 12;
    memcpy(l2_tail, frame + 12, tail_len);
    out = frame - DP_NAT_IPIP_HEADROOM;
    memcpy(out, t->dst_mac, 6);
    memcpy(out + 6, t->src_mac, 6);
    memcpy(out + 12, l2_tail, tail_len);

    outer = out + w.l3;
    {
        /* The outer header ends where the inner one starts: the inner
         * packet stays byte for byte as it was. */
        uint8_t tos = inner[1], ttl = t->ttl ? t->ttl : inner[8];
        uint16_t df = (uint16_t)(rd16(inner + 6) & IP4_FLAG_DF);
        /* RFC 2003 3.1: TOS and DF copied from the inner header; never a fragment */
        ip4_write_header(outer, tos, (uint16_t)(w.total + DP_NAT_IPIP_HEADROOM), t->ip_id, df, ttl, DP_IPPROTO_IPIP,
                         t->src_ip, t->dst_ip, ops);

        p->ip_total_len = (uint16_t)(w.total + DP_NAT_IPIP_HEADROOM);
        p->ip_ihl = 5;
        p->ip_ttl = ttl;
    }
    p->ip_proto = DP_IPPROTO_IPIP;
    p->tcp_flags = 0;
    p->src_ip = t->src_ip;
    p->dst_ip = t->dst_ip;
    p->src_port = 0;
    p->dst_port = 0;
    p->l4_offset = (uint16_t)(w.l3 + DP_NAT_IPIP_HEADROOM);
    p->payload_offset = p->l4_offset;
    p->payload_len = (uint16_t)w.total;
    *out_len = w.l3 + DP_NAT_IPIP_HEADROOM + w.total;
    if (ops)
        ops->bytes_written += w.l3 + DP_NAT_IPIP_HEADROOM;
    return 0;
}

int dp_nat_icmp_frag_needed(uint8_t *frame, size_t len, size_t cap, dp_parsed_t *p, uint16_t next_hop_mtu,
                            uint32_t src_ip, uint16_t ip_id, uint8_t ttl, size_t *out_len, dp_ops_t *ops)
{
    nat_where_t w;
    uint8_t quote[60 + DP_NAT_ICMP_QUOTE_DATA]; /* the longest IPv4 header and 8 bytes */
    uint8_t mac[6];
    uint8_t *ip, *icmp;
    size_t ihl, quote_len, icmp_len, need;
    uint32_t orig_src;
    uint8_t tos;
    int rc = check_ip(frame, len, p, &w);

    if (rc)
        return rc;
    if (!out_len)
        return DP_NAT_EINVAL;
    ip = frame + w.l3;
    /* RFC 1122 3.2.2: no ICMP error about an ICMP message (IPVS's
     * ensure_mtu_is_adequate skips them too; an error about an error could
     * loop), nor about a non-first fragment (it does not carry the ports a
     * sender needs to find its connection). */
    if (ip[9] == DP_IPPROTO_ICMP || (rd16(ip + 6) & IP4_FRAG_OFFSET_MASK))
        return DP_NAT_ENOICMP;
    ihl = w.l4 - w.l3;
    quote_len = ihl + (w.total - ihl < DP_NAT_ICMP_QUOTE_DATA ? w.total - ihl : DP_NAT_ICMP_QUOTE_DATA);
    icmp_len = DP_NAT_ICMP_HDR_LEN + quote_len;
    need = w.l3 + DP_IP4_MIN_HDR_LEN + icmp_len;
    if (cap < need)
        return DP_NAT_ENOROOM;

    /* The quote is saved first: the new headers overwrite where it is. */
    memcpy(quote, ip, quote_len);
    orig_src = rd32(ip + 12);
    tos = (uint8_t)((ip[1] & 0x1Eu) | 0xC0u);
    memcpy(mac, frame, 6);
    memcpy(frame, frame + 6, 6);
    memcpy(frame + 6, mac, 6);

    ip4_write_header(ip, tos, (uint16_t)(DP_IP4_MIN_HDR_LEN + icmp_len), ip_id, 0, ttl, DP_IPPROTO_ICMP, src_ip, orig_src,
                     ops);

    icmp = ip + DP_IP4_MIN_HDR_LEN;
    icmp[0] = 3; /* destination unreachable */
    icmp[1] = 4; /* fragmentation needed and DF set */
    wr16(icmp + 2, 0);
    wr16(icmp + 4, 0); /* RFC 1191: the unused high half of the word */
    wr16(icmp + 6, next_hop_mtu);
    memcpy(icmp + DP_NAT_ICMP_HDR_LEN, quote, quote_len);
    wr16(icmp + 2, dp_csum(icmp, icmp_len, ops));

    p->ip_total_len = (uint16_t)(DP_IP4_MIN_HDR_LEN + icmp_len);
    p->ip_ihl = 5;
    p->ip_ttl = ttl;
    p->ip_proto = DP_IPPROTO_ICMP;
    p->tcp_flags = 0;
    p->src_ip = src_ip;
    p->dst_ip = orig_src;
    p->src_port = 0;
    p->dst_port = 0;
    p->l4_offset = (uint16_t)(w.l3 + DP_IP4_MIN_HDR_LEN);
    p->payload_offset = p->l4_offset;
    p->payload_len = (uint16_t)icmp_len;
    *out_len = need;
    if (ops) {
        ops->bytes_written += w.l3 + DP_IP4_MIN_HDR_LEN + DP_NAT_ICMP_HDR_LEN;
        ops->bytes_copied += quote_len;
    }
    return 0;
}
