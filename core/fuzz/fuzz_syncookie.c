/* libFuzzer harness for SYN cookies (dp_syncookie). Built by the sanitizer
 * sub-build; see docs/fuzzing.md.
 *
 * Input layout (missing bytes read as zero):
 *   0      mode: bit 0 clear: cookie round trip on the tuple below; set:
 *          the tail is a frame for dp_syncookie_synack (bit 1 clear) or
 *          dp_syncookie_check_ack (bit 1 set); bit 2: give the frame
 *          functions a cap 16 bytes beyond the frame (else exactly len)
 *   1      counter bits: 1 + byte % 21     2  max age: byte mod 2^C
 *   3-18   key    19-22 counter
 *   23-34  tuple: client, VIP, client port, VIP port
 *   35-36  MSS    37-40 age added to the counter at the check
 *   41-44  XOR mask applied to the cookie for a second check
 *   45..   the frame (modes with bit 0 set)
 *
 * Invariants: a cookie validates, with the MSS class of the SYN's MSS, at
 * every age up to max_age and at no other (EAGE, no hash); a cookie whose
 * MAC bits alone are changed is always refused (EMAC); op counts are those
 * of dp_syncookie.h; a SYN-ACK is refused without writing, or is a frame
 * that dp_parse accepts with a verifying checksum whose cookie validates
 * for the SYN's tuple, built within cap; check_ack only reads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define HDR 45u
#define CANARY 0xC3u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[HDR];
    dp_syncookie_config_t cfg;
    dp_syncookie_t sc;
    dp_syncookie_tuple_t t;
    dp_ops_t ops;
    uint32_t counter, age, mask, cookie, mac_mask;
    uint16_t mss;
    int rc;

    memset(h, 0, sizeof h);
    memcpy(h, data, size < HDR ? size : HDR);
    memset(&cfg, 0, sizeof cfg);
    cfg.counter_bits = (uint8_t)(1 + h[1] % 21);
    cfg.max_age = (uint8_t)(h[2] & ((1u << cfg.counter_bits) - 1u));
    memcpy(cfg.key, h + 3, 16);
    CHECK(dp_syncookie_init(&sc, &cfg) == 0);
    CHECK(sc.mac_bits == 29 - cfg.counter_bits);
    counter = be(h + 19, 4);
    mac_mask = (1u << sc.mac_bits) - 1u;

    if (!(h[0] & 1)) {
        int want;
        t.client_ip = be(h + 23, 4);
        t.vip = be(h + 27, 4);
        t.client_port = (uint16_t)be(h + 31, 2);
        t.vip_port = (uint16_t)be(h + 33, 2);
        mss = (uint16_t)be(h + 35, 2);
        age = be(h + 37, 4) & ((1u << cfg.counter_bits) - 1u);
        mask = be(h + 41, 4);
        want = dp_syncookie_mss_of(dp_syncookie_mss_index(mss));
        CHECK(want >= 536);

        dp_ops_reset(&ops);
        cookie = dp_syncookie_make(&sc, &t, mss, counter, &ops);
        CHECK(ops.hashes == 1 && ops.crypto_bytes == 17);
        CHECK(cookie >> (32 - cfg.counter_bits) == (counter & ((1u << cfg.counter_bits) - 1u)));
        CHECK(((cookie >> sc.mac_bits) & 7u) == dp_syncookie_mss_index(mss));

        dp_ops_reset(&ops);
        rc = dp_syncookie_check(&sc, &t, cookie, counter + age, &ops);
        if (age <= cfg.max_age) {
            CHECK(rc == want && ops.hashes == 1 && ops.crypto_bytes == 17);
        } else {
            CHECK(rc == DP_SYNCOOKIE_EAGE && ops.hashes == 0 && ops.crypto_bytes == 0);
        }
        rc = dp_syncookie_check(&sc, &t, cookie ^ mask, counter, NULL);
        CHECK(rc == DP_SYNCOOKIE_EAGE || rc == DP_SYNCOOKIE_EMAC || rc >= 536);
        if (mask && !(mask & ~mac_mask))
            CHECK(rc == DP_SYNCOOKIE_EMAC); /* same counter and class, other MAC */
        return 0;
    }

    {
        size_t len = size > HDR ? size - HDR : 0, cap = len + ((h[0] & 4) ? 16u : 0u), out_len = 0, i;
        uint8_t *buf = malloc(cap + 1), *before = malloc(len + 1);
        dp_parse_opts_t opts = {1, 1};
        dp_parsed_t p, q;
        CHECK(buf && before);
        if (len)
            memcpy(buf, data + HDR, len);
        memset(buf + len, CANARY, cap - len);
        memcpy(before, buf, len);
        if (dp_parse(buf, len, &opts, &p, NULL) != DP_OK)
            memset(&p, 0, sizeof p); /* must be refused, not trusted */
        q = p;
        dp_ops_reset(&ops);
        if (h[0] & 2) {
            rc = dp_syncookie_check_ack(&sc, buf, len, &p, counter, &ops);
            CHECK(rc == DP_SYNCOOKIE_EINVAL || rc == DP_SYNCOOKIE_ENOTACK || rc == DP_SYNCOOKIE_EAGE ||
                  rc == DP_SYNCOOKIE_EMAC || rc >= 536);
            CHECK(memcmp(buf, before, len) == 0);
            CHECK(ops.hashes == (rc == DP_SYNCOOKIE_EMAC || rc > 0 ? 1u : 0u));
        } else {
            dp_syncookie_reply_t r = {1460, 65535, 64, {0, 0, 0}};
            rc = dp_syncookie_synack(&sc, buf, len, cap, &p, counter, &r, &out_len, &ops);
            CHECK(rc == DP_SYNCOOKIE_EINVAL || rc == DP_SYNCOOKIE_ENOTSYN || rc == DP_SYNCOOKIE_ENOSPC || rc >= 536);
            if (rc < 0) {
                CHECK(memcmp(buf, before, len) == 0 && memcmp(&p, &q, sizeof p) == 0);
                CHECK(ops.hashes == 0 && ops.bytes_written == 0);
                for (i = len; i < cap; i++)
                    CHECK(buf[i] == CANARY);
            } else {
                size_t l3 = q.l3_offset;
                const uint8_t *ip = buf + l3, *tcp = ip + 20;
                dp_parsed_t r2;
                CHECK(q.ip_proto == DP_IPPROTO_TCP && (q.tcp_flags & 0x17) == 0x02);
                CHECK(out_len <= cap && out_len == (l3 + 44 < 60 ? 60 : l3 + 44));
                for (i = out_len; i < cap; i++)
                    CHECK(buf[i] == (i < len ? before[i] : CANARY));
                CHECK(dp_parse(buf, out_len, NULL, &r2, NULL) == DP_OK);
                CHECK(memcmp(&r2, &p, sizeof r2) == 0);
                CHECK(memcmp(buf, before + 6, 6) == 0 && memcmp(buf + 6, before, 6) == 0);
                CHECK(sum16(tcp, 24, sum16(ip + 12, 8, 6 + 24)) == 0xFFFFu);
                CHECK(be(tcp + 8, 4) == (uint32_t)(be(before + q.l4_offset + 4, 4) + 1u));
                /* The client's ACK for this reply validates. */
                t.client_ip = q.src_ip;
                t.vip = q.dst_ip;
                t.client_port = q.src_port;
                t.vip_port = q.dst_port;
                CHECK(dp_syncookie_check(&sc, &t, be(tcp + 4, 4), counter, NULL) == rc);
                CHECK(ops.hashes == 1 && ops.crypto_bytes == 17 && ops.checksum_bytes == 52);
                CHECK(ops.bytes_written == 12 + out_len - l3);
                CHECK(ops.bytes_parsed == (size_t)(before[q.l4_offset + 12] >> 4) * 4u - 20u);
            }
        }
        free(before);
        free(buf);
    }
    return 0;
}
