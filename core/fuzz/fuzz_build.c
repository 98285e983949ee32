/* libFuzzer harness for dp_build: a build spec and a buffer size from the
 * input; the result must either be refused with the reason dp_pkt.h names
 * for that spec (buffer untouched), or parse back (dp_parse, checksum
 * verified) to exactly the spec, with the op counts dp_pkt.h states.
 * Built by the sanitizer sub-build (clang, -fsanitize=fuzzer,address,
 * undefined); see docs/fuzzing.md.
 *
 * Input layout (missing bytes read as zero):
 *   0      protocol selector: 0-3 UDP, 4-7 TCP, anything else that value
 *          as the protocol number (refused unless 6 or 17)
 *   1-4    source address      5-8  destination address
 *   9-10   source port        11-12 destination port
 *   13 TTL  14-15 IP id  16-19 TCP seq  20-23 TCP ack  24 TCP flags
 *   25-26  payload length (bit 15 of byte 25 clear: taken mod 1500;
 *          set: the full 15 low bits plus 32768, often beyond 65535 total)
 *   27     bit 0: L4 checksum; bit 1: payload from the input's tail
 *          (when it is long enough; else zeros); bits 2-3: buffer size
 *          (0: exactly the frame, 1: one byte short, 2: 64 bytes spare,
 *          3: 59 bytes)
 *   28..   payload bytes
 *   The MACs are fixed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define HDR 28u
#define CANARY 0xA5u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 1}, smac[6] = {0x02, 0, 0, 0, 0, 2};
    uint8_t h[HDR];
    dp_build_spec_t s;
    unsigned l4hdr, mode;
    size_t ip_len, need, cap, out_len = 0, i;
    uint8_t *buf;
    dp_ops_t ops;
    dp_drop_reason_t r;
    int proto_ok, len_ok;

    memset(h, 0, sizeof h);
    memcpy(h, data, size < HDR ? size : HDR);
    memset(&s, 0, sizeof s);
    memcpy(s.dst_mac, dmac, 6);
    memcpy(s.src_mac, smac, 6);
    s.ip_proto = (uint8_t)(h[0] < 4 ? DP_IPPROTO_UDP : h[0] < 8 ? DP_IPPROTO_TCP : h[0]);
    s.src_ip = be(h + 1, 4);
    s.dst_ip = be(h + 5, 4);
    s.src_port = (uint16_t)be(h + 9, 2);
    s.dst_port = (uint16_t)be(h + 11, 2);
    s.ttl = h[13];
    s.ip_id = (uint16_t)be(h + 14, 2);
    s.tcp_seq = be(h + 16, 4);
    s.tcp_ack = be(h + 20, 4);
    s.tcp_flags = h[24];
    s.payload_len = (uint16_t)(h[25] & 0x80 ? 0x8000u | be(h + 25, 2) : be(h + 25, 2) % 1500u);
    s.l4_checksum = h[27] & 1;
    if ((h[27] & 2) && size >= HDR && size - HDR >= s.payload_len)
        s.payload = data + HDR;

    /* What dp_pkt.h says the spec needs, worked out here. */
    l4hdr = s.ip_proto == DP_IPPROTO_TCP ? 20u : 8u;
    ip_len = 20u + l4hdr + s.payload_len;
    need = 14u + ip_len < 60u ? 60u : 14u + ip_len;
    proto_ok = s.ip_proto == DP_IPPROTO_UDP || s.ip_proto == DP_IPPROTO_TCP;
    len_ok = ip_len <= 0xFFFFu;
    mode = (h[27] >> 2) & 3u;
    cap = mode == 0 ? need : mode == 1 ? need - 1 : mode == 2 ? need + 64 : 59;

    /* An exactly sized heap buffer: ASan reports any write past cap. */
    buf = malloc(cap ? cap : 1);
    CHECK(buf != NULL);
    memset(buf, CANARY, cap);
    dp_ops_reset(&ops);
    r = dp_build(&s, buf, cap, &out_len, &ops);
    CHECK((unsigned)r < (unsigned)DP_DROP__COUNT && dp_drop_reason_name(r) != NULL);

    if (!proto_ok || !len_ok || cap < need) {
        /* Refused, with one of the reasons that apply, writing nothing. */
        int bad_spec = r == DP_DROP_BAD_BUILD_SPEC && (!proto_ok || !len_ok);
        int too_small = r == DP_DROP_BUFFER_TOO_SMALL && proto_ok && len_ok && cap < need;
        CHECK(bad_spec || too_small);
        for (i = 0; i < cap; i++)
            CHECK(buf[i] == CANARY);
        free(buf);
        return 0;
    }
    CHECK(r == DP_OK && out_len == need);
    for (i = out_len; i < cap; i++)
        CHECK(buf[i] == CANARY);

    /* dp_pkt.h: everything but the payload written, the payload copied (or
     * zero-filled), the IPv4 header summed, and with an L4 checksum also
     * the pseudo-header addresses and the whole segment. */
    CHECK(ops.bytes_written == out_len - s.payload_len);
    CHECK(ops.bytes_copied == s.payload_len);
    CHECK(ops.checksum_bytes == 20u + (s.l4_checksum ? 8u + l4hdr + s.payload_len : 0u));

    {
        dp_parsed_t p;
        dp_parse_opts_t strict = {1, 0};
        const uint8_t *ip = buf + 14, *l4 = buf + 34, *pay = buf + 34 + l4hdr;
        dp_ops_t pops;
        dp_ops_reset(&pops);
        CHECK(dp_parse(buf, out_len, &strict, &p, &pops) == DP_OK);
        CHECK(memcmp(buf, dmac, 6) == 0 && memcmp(buf + 6, smac, 6) == 0);
        CHECK(p.ethertype == DP_ETHERTYPE_IPV4 && p.vlan_tci == 0 && p.l3_offset == 14);
        CHECK(p.ip_ihl == 5 && p.ip_total_len == ip_len && p.ip_proto == s.ip_proto);
        CHECK(ip[1] == 0 && be(ip + 4, 2) == s.ip_id && be(ip + 6, 2) == 0x4000u); /* TOS 0, DF */
        CHECK(p.ip_ttl == s.ttl && p.src_ip == s.src_ip && p.dst_ip == s.dst_ip);
        CHECK(p.src_port == s.src_port && p.dst_port == s.dst_port);
        CHECK(p.payload_offset == 34u + l4hdr && p.payload_len == s.payload_len);
        if (s.ip_proto == DP_IPPROTO_TCP) {
            CHECK(be(l4 + 4, 4) == s.tcp_seq && be(l4 + 8, 4) == s.tcp_ack);
            CHECK(l4[12] == 0x50 && p.tcp_flags == s.tcp_flags && be(l4 + 14, 2) == 0xFFFFu);
        } else {
            CHECK(be(l4 + 4, 2) == l4hdr + s.payload_len);
        }
        for (i = 0; i < s.payload_len; i++)
            CHECK(pay[i] == (s.payload ? s.payload[i] : 0));
        for (i = 14u + ip_len; i < out_len; i++)
            CHECK(buf[i] == 0); /* padding */
        if (s.l4_checksum) {
            /* Pseudo-header (RFC 768 / 793) plus the segment sums to all
             * ones; UDP never sends a computed zero. */
            size_t l4_len = l4hdr + s.payload_len;
            uint32_t acc = sum16(ip + 12, 8, s.ip_proto + (uint32_t)l4_len);
            CHECK(sum16(l4, l4_len, acc) == 0xFFFFu);
            if (s.ip_proto == DP_IPPROTO_UDP)
                CHECK(be(l4 + 6, 2) != 0);
        }
    }
    free(buf);
    return 0;
}
