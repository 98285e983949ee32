/* libFuzzer harness for the packet path: dp_parse, then (for accepted
 * frames) the TTL rewrite and the flow-key path (hash, shard, insert,
 * lookup, delete, expiry). Built by the sanitizer sub-build (clang,
 * -fsanitize=fuzzer,address,undefined); see docs/fuzzing.md.
 *
 * Input: byte 0 selects the parse options (bit 0: verify the IPv4 checksum,
 * bit 1: allow fragments); the rest is the frame. libFuzzer hands over an
 * exactly sized heap buffer, so ASan reports any read past the frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define FLOW_MEM_BYTES (1u << 16)

static dp_flow_table_t *flow_table(void)
{
    static uint8_t mem[FLOW_MEM_BYTES];
    static dp_flow_table_t *t;
    if (!t) {
        dp_flow_config_t cfg = {2, 32};
        CHECK(dp_flow_memory_size(&cfg) <= sizeof mem);
        t = dp_flow_create(mem, sizeof mem, &cfg);
        CHECK(t != NULL);
    }
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint64_t now;
    dp_parse_opts_t opts;
    dp_parsed_t p;
    dp_ops_t ops;
    dp_drop_reason_t r;
    uint8_t ip[60];
    size_t ihl;

    if (size == 0)
        return 0;
    opts.verify_ip_checksum = data[0] & 1;
    opts.allow_fragments = (data[0] >> 1) & 1;
    data++;
    size--;

    dp_ops_reset(&ops);
    r = dp_parse(data, size, &opts, &p, &ops);
    CHECK((unsigned)r < (unsigned)DP_DROP__COUNT);
    CHECK(ops.packets == 1 && ops.bytes_parsed <= size);
    if (r != DP_OK)
        return 0;

    /* What an accepted frame promises its users. */
    ihl = (size_t)p.ip_ihl * 4u;
    CHECK(p.ethertype == DP_ETHERTYPE_IPV4);
    CHECK(p.l3_offset == 14 || p.l3_offset == 18);
    CHECK(ihl >= 20 && p.l4_offset == p.l3_offset + ihl);
    CHECK((size_t)p.l3_offset + p.ip_total_len <= size);
    CHECK(p.payload_offset >= p.l4_offset);
    CHECK((size_t)p.payload_offset + p.payload_len == (size_t)p.l3_offset + p.ip_total_len);

    /* TTL rewrite on a copy: either refused untouched, or the checksum
     * still verifies when it verified before. */
    memcpy(ip, data + p.l3_offset, ihl);
    r = dp_ip4_decrement_ttl(ip, ihl, &ops);
    if (r == DP_OK) {
        CHECK(ip[8] == (uint8_t)(p.ip_ttl - 1));
        if (opts.verify_ip_checksum)
            CHECK(dp_csum(ip, ihl, NULL) == 0);
    } else {
        CHECK(r == DP_DROP_IP4_TTL_EXPIRED && p.ip_ttl <= 1);
        CHECK(memcmp(ip, data + p.l3_offset, ihl) == 0);
    }

    {
        dp_flow_table_t *t = flow_table();
        dp_flow_key_t k;
        uint64_t v = 0;
        int rc;
        memset(&k, 0, sizeof k);
        k.src_ip = p.src_ip;
        k.dst_ip = p.dst_ip;
        k.src_port = p.src_port;
        k.dst_port = p.dst_port;
        k.proto = p.ip_proto;
        CHECK(dp_flow_shard_of(t, &k) < 2);
        now++;
        rc = dp_flow_insert(t, &k, now, now, &ops);
        CHECK(rc == 0 || rc == DP_FLOW_EFULL);
        if (rc == 0) {
            CHECK(dp_flow_lookup(t, &k, now, &v, &ops) == 0 && v == now);
            if (now % 3 == 0)
                CHECK(dp_flow_delete(t, &k, &ops) == 0);
        }
        if (now % 64 == 0)
            dp_flow_expire(t, (uint32_t)(now / 64 % 2), now, 40, &ops);
    }
    return 0;
}
