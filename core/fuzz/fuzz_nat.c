/* libFuzzer harness for the balancer rewrites (dp_nat): a random frame goes
 * through dp_parse and then one of NAT (destination, source, full), direct
 * routing or IPIP. Invariants: a refusal writes nothing; a rewrite changes
 * only the bytes of the fields it owns; checksums that verified before
 * still verify after (full RFC 1071 sums here, not dp_csum); the frame
 * parses again to exactly the updated dp_parsed_t; the op counts are those
 * of dp_nat.h; nothing is written outside the frame and the 20 bytes of
 * headroom IPIP may use (the buffer is an exactly sized heap block, so
 * ASan sees any write past it, and canaries see writes into the rest of
 * the headroom). Built by the sanitizer sub-build; see docs/fuzzing.md.
 *
 * Input layout (missing bytes read as zero):
 *   0      bits 0-1: dp_parse options (bit 0 verify the IPv4 checksum,
 *          bit 1 allow fragments); bits 2-4: operation (0 dst, 1 src,
 *          2 full, 3 DR, 4 IPIP and, when it refuses, the ICMP
 *          fragmentation-needed message in place, 5-7 full NAT then
 *          IPIP); bit 5: hand the
 *          rewrite a stale parse result (a field of p overwritten from
 *          bytes 20-21) instead of dp_parse's
 *   1-4    new source address   5-6 new source port
 *   7-10   new destination address   11-12 new destination port
 *   13     headroom (mod 64)   14-15 MTU   16 outer TTL   17-18 outer ID
 *   19     which field of p the stale mode overwrites   20-21 its value
 *   22..   the frame (Ethernet II, no FCS) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define HDR 22u
#define CANARY 0x5Au

static int ip_verifies(const uint8_t *ip, size_t ihl)
{
    return sum16(ip, ihl, 0) == 0xFFFFu;
}

/* 1: the TCP/UDP checksum verifies over the whole datagram (only
 * meaningful for an unfragmented packet), 0: it does not, 2: UDP "none". */
static int l4_state(const uint8_t *ip, size_t ihl, size_t total)
{
    uint8_t proto = ip[9];
    size_t len = total - ihl;
    if (proto == DP_IPPROTO_UDP && be(ip + ihl + 6, 2) == 0)
        return 2;
    return sum16(ip + ihl, len, sum16(ip + 12, 8, proto + (uint32_t)len)) == 0xFFFFu;
}

/* Overwrites one field of p, as a stale or forged parse result would. */
static void corrupt(dp_parsed_t *p, uint8_t which, uint16_t v)
{
    switch (which % 8) {
    case 0: p->l3_offset = v; break;
    case 1: p->l4_offset = v; break;
    case 2: p->ip_ihl = (uint8_t)v; break;
    case 3: p->ip_total_len = v; break;
    case 4: p->ip_proto = (uint8_t)v; break;
    case 5: p->ethertype = v; break;
    case 6: p->payload_offset = v; break;
    default: p->l3_offset = (uint16_t)(p->l3_offset ^ (v & 4)); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[HDR];
    dp_parse_opts_t opts;
    dp_parsed_t p, q;
    dp_ops_t ops;
    dp_drop_reason_t pr;
    unsigned op, i;
    int stale, rc;
    size_t len, room, out_len = 0;
    uint8_t *buf, *frame, *before;
    uint32_t sip, dip;
    uint16_t sport, dport;
    dp_nat_tunnel_t t;

    memset(h, 0, sizeof h);
    memcpy(h, data, size < HDR ? size : HDR);
    len = size > HDR ? size - HDR : 0;
    opts.verify_ip_checksum = h[0] & 1;
    opts.allow_fragments = (h[0] >> 1) & 1;
    op = (h[0] >> 2) & 7u;
    stale = (h[0] >> 5) & 1;
    sip = be(h + 1, 4);
    sport = (uint16_t)be(h + 5, 2);
    dip = be(h + 7, 4);
    dport = (uint16_t)be(h + 11, 2);
    room = h[13] % 64u;
    memset(&t, 0, sizeof t);
    t.src_ip = sip ^ 0x01010101u;
    t.dst_ip = dip ^ 0x02020202u;
    memcpy(t.dst_mac, h + 1, 6);
    memcpy(t.src_mac, h + 7, 6);
    t.mtu = (uint16_t)be(h + 14, 2);
    t.ttl = h[16];
    t.ip_id = (uint16_t)be(h + 17, 2);

    /* Headroom, then exactly the frame: ASan reports any write beyond. */
    buf = malloc(room + len + 1);
    before = malloc(len + 1);
    CHECK(buf && before);
    memset(buf, CANARY, room);
    frame = buf + room;
    if (len)
        memcpy(frame, data + HDR, len);
    memcpy(before, frame, len);

    pr = dp_parse(frame, len, &opts, &p, NULL);
    if (pr != DP_OK)
        memset(&p, 0, sizeof p); /* whatever the caller had: must be refused */
    if (stale)
        corrupt(&p, h[19], (uint16_t)be(h + 20, 2));
    q = p;
    dp_ops_reset(&ops);

    if (op == 3) {
        static const uint8_t srv[6] = {2, 0, 0, 0, 0, 9}, lb[6] = {2, 0, 0, 0, 0, 1};
        rc = dp_nat_dr(frame, len, srv, lb, &ops);
        CHECK(rc == (len >= 12 ? 0 : DP_NAT_EINVAL));
        if (rc == 0) {
            CHECK(memcmp(frame, srv, 6) == 0 && memcmp(frame + 6, lb, 6) == 0);
            CHECK(memcmp(frame + 12, before + 12, len - 12) == 0);
            CHECK(ops.bytes_written == 12);
        }
    } else if (op == 4) {
        rc = dp_nat_ipip_encap(frame, room, len, &p, &t, &out_len, &ops);
        CHECK(rc == 0 || rc == DP_NAT_EINVAL || rc == DP_NAT_ENOHEADROOM || rc == DP_NAT_EFRAG_NEEDED ||
              rc == DP_NAT_EMTU);
        if (rc != 0) {
            CHECK(memcmp(frame, before, len) == 0);
            CHECK(ops.bytes_written == 0 && ops.checksum_bytes == 0);
            if (pr == DP_OK && !stale) {
                size_t total = q.ip_total_len;
                int df = (be(frame + q.l3_offset + 6, 2) & 0x4000u) != 0;
                CHECK(rc == (room < 20 ? DP_NAT_ENOHEADROOM
                                       : total + 20 > t.mtu ? (df ? DP_NAT_EFRAG_NEEDED : DP_NAT_EMTU) : 0));
            }
            /* Refused: IPVS's answer, the ICMP error in place, with the
             * frame's own length as the buffer (ASan sees any write past). */
            rc = dp_nat_icmp_frag_needed(frame, len, len, &p, (uint16_t)(t.mtu - 20u), t.src_ip, t.ip_id, t.ttl,
                                         &out_len, &ops);
            CHECK(rc == 0 || rc == DP_NAT_EINVAL || rc == DP_NAT_ENOICMP || rc == DP_NAT_ENOROOM);
            if (rc != 0) {
                CHECK(memcmp(frame, before, len) == 0);
                CHECK(ops.bytes_written == 0 && ops.checksum_bytes == 0 && ops.bytes_copied == 0);
                if (pr == DP_OK && !stale) {
                    const uint8_t *ip = frame + q.l3_offset;
                    size_t ihl = (size_t)q.ip_ihl * 4u, data = q.ip_total_len - ihl;
                    size_t need = q.l3_offset + 28u + ihl + (data < 8 ? data : 8);
                    CHECK(rc == (ip[9] == 1 || (be(ip + 6, 2) & 0x1FFFu) ? DP_NAT_ENOICMP
                                 : len < need                             ? DP_NAT_ENOROOM
                                                                          : 0));
                }
            } else {
                size_t l3 = q.l3_offset, ihl = (size_t)q.ip_ihl * 4u, data = q.ip_total_len - ihl;
                size_t quote = ihl + (data < 8 ? data : 8);
                const uint8_t *ip = frame + l3;
                CHECK(out_len == l3 + 28 + quote && out_len <= len);
                CHECK(ip_verifies(ip, 20) && ip[9] == 1 && be(ip + 2, 2) == 28 + quote);
                CHECK(sum16(ip + 20, 8 + quote, 0) == 0xFFFFu);
                CHECK(ip[20] == 3 && ip[21] == 4 && be(ip + 26, 2) == (uint16_t)(t.mtu - 20u));
                CHECK(memcmp(ip + 28, before + l3, quote) == 0);
                CHECK(memcmp(frame, before + 6, 6) == 0 && memcmp(frame + 6, before, 6) == 0);
                CHECK(be(ip + 16, 4) == be(before + l3 + 12, 4));
                CHECK(ops.bytes_written == l3 + 28 && ops.bytes_copied == quote &&
                      ops.checksum_bytes == 28 + quote);
            }
        } else {
            const uint8_t *o = frame - 20, *outer = o + q.l3_offset;
            size_t l3 = q.l3_offset, total = q.ip_total_len;
            dp_parsed_t r;
            CHECK(room >= 20 && total + 20 <= t.mtu);
            CHECK(out_len == l3 + 20 + total);
            CHECK(memcmp(outer + 20, before + l3, total) == 0); /* inner untouched */
            CHECK(memcmp(o + 12, before + 12, l3 - 12) == 0);   /* VLAN, EtherType */
            CHECK(ip_verifies(outer, 20) && outer[9] == 4 && be(outer + 2, 2) == total + 20);
            for (i = 0; i + 20 < room; i++)
                CHECK(buf[i] == CANARY);
            {
                dp_parse_opts_t any = {1, 1};
                CHECK(dp_parse(o, out_len, &any, &r, NULL) == DP_OK);
                CHECK(r.l4_offset == p.l4_offset && r.ip_total_len == p.ip_total_len && r.src_ip == p.src_ip &&
                      r.dst_ip == p.dst_ip && r.ip_proto == 4 && r.payload_len == p.payload_len &&
                      r.ip_ttl == p.ip_ttl && r.vlan_tci == p.vlan_tci);
            }
            CHECK(ops.bytes_written == l3 + 20 && ops.checksum_bytes == 20 && ops.csum_updates == 0);
        }
    } else {
        /* 0 dst, 1 src, 2 and 5-7 full (5-7 then tunnel the result). */
        int ip_ok = 0, l4_before = 0, whole = 0, has_csum = 1;
        size_t l3 = q.l3_offset, ihl = (size_t)q.ip_ihl * 4u, total = q.ip_total_len;
        if (pr == DP_OK && !stale) {
            uint16_t frag = (uint16_t)be(frame + l3 + 6, 2);
            whole = (frag & 0x3FFFu) == 0;
            ip_ok = ip_verifies(frame + l3, ihl);
            if (whole && (q.ip_proto == DP_IPPROTO_TCP || q.ip_proto == DP_IPPROTO_UDP))
                l4_before = l4_state(frame + l3, ihl, total);
            has_csum = !(q.ip_proto == DP_IPPROTO_UDP && (frag & 0x1FFFu) == 0 && be(frame + q.l4_offset + 6, 2) == 0);
        }
        if (op == 0)
            rc = dp_nat_rewrite_dst(frame, len, &p, dip, dport, &ops);
        else if (op == 1)
            rc = dp_nat_rewrite_src(frame, len, &p, sip, sport, &ops);
        else
            rc = dp_nat_rewrite_full(frame, len, &p, sip, sport, dip, dport, &ops);
        CHECK(rc == 0 || rc == DP_NAT_EINVAL || rc == DP_NAT_ENOL4);
        if (rc != 0) {
            CHECK(memcmp(frame, before, len) == 0);
            CHECK(ops.bytes_written == 0 && ops.csum_updates == 0);
            CHECK(memcmp(&p, &q, sizeof p) == 0);
            /* A frame dp_parse accepted is refused only for want of ports. */
            if (pr == DP_OK && !stale)
                CHECK(rc == DP_NAT_ENOL4 && ((q.ip_proto != DP_IPPROTO_TCP && q.ip_proto != DP_IPPROTO_UDP) ||
                                             (be(frame + l3 + 6, 2) & 0x1FFFu) != 0));
        } else {
            unsigned halves = op == 0 || op == 1 ? 1u : 2u;
            size_t l4 = q.l4_offset, csum_at = l4 + (q.ip_proto == DP_IPPROTO_TCP ? 16u : 6u);
            CHECK(q.ip_proto == DP_IPPROTO_TCP || q.ip_proto == DP_IPPROTO_UDP);
            /* Only the owned fields changed. */
            for (i = 0; i < len; i++) {
                int owned = (i >= l3 + 10 && i < l3 + 12) || (i >= csum_at && i < csum_at + 2) ||
                            (op != 0 && ((i >= l3 + 12 && i < l3 + 16) || (i >= l4 && i < l4 + 2))) ||
                            (op != 1 && ((i >= l3 + 16 && i < l3 + 20) || (i >= l4 + 2 && i < l4 + 4)));
                CHECK(owned || frame[i] == before[i]);
            }
            CHECK(be(frame + l3 + (op == 0 ? 16 : 12), 4) == (op == 0 ? dip : sip));
            CHECK(p.src_ip == be(frame + l3 + 12, 4) && p.dst_ip == be(frame + l3 + 16, 4));
            CHECK(p.src_port == be(frame + l4, 2) && p.dst_port == be(frame + l4 + 2, 2));
            if (!stale && pr == DP_OK) {
                if (ip_ok)
                    CHECK(ip_verifies(frame + l3, ihl));
                if (l4_before == 1)
                    CHECK(l4_state(frame + l3, ihl, total) == 1);
                if (l4_before == 2 || !has_csum)
                    CHECK(be(frame + l4 + 6, 2) == 0);
                else if (q.ip_proto == DP_IPPROTO_UDP)
                    CHECK(be(frame + l4 + 6, 2) != 0);
                {
                    dp_parsed_t r;
                    CHECK(dp_parse(frame, len, &opts, &r, NULL) == DP_OK);
                    CHECK(memcmp(&r, &p, sizeof r) == 0);
                }
                CHECK(ops.csum_updates == halves * (has_csum ? 5u : 2u));
                CHECK(ops.bytes_written == halves * (has_csum ? 10u : 8u));
            }
            if (op >= 5 && !stale) {
                dp_ops_t tops;
                dp_ops_reset(&tops);
                rc = dp_nat_ipip_encap(frame, room, len, &p, &t, &out_len, &tops);
                CHECK(rc == 0 || rc == DP_NAT_ENOHEADROOM || rc == DP_NAT_EFRAG_NEEDED || rc == DP_NAT_EMTU);
                if (rc == 0)
                    CHECK(ip_verifies(frame - 20 + l3, 20) && out_len == l3 + 20 + total);
            }
        }
        /* NAT never touches the headroom. */
        for (i = 0; i < room && op < 5; i++)
            CHECK(buf[i] == CANARY);
    }
    free(before);
    free(buf);
    return 0;
}
