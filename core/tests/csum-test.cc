#include "dp_csum.h"
#include "dp_pkt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

// RFC 1071 section 3 worked example: bytes 00 01 f2 03 f4 f5 f6 f7 sum to
// 0xddf2 (one's-complement, folded), so the checksum is ~0xddf2 = 0x220d.
TEST(InternetChecksum, MatchesRfc1071WorkedExample)
{
    const uint8_t data[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(dp_csum_partial(data, sizeof data, 0, nullptr), 0xddf2);
    EXPECT_EQ(dp_csum(data, sizeof data, nullptr), 0x220d);
}

// RFC 1624 section 4 example: HC = 0xdd2f, field m = 0x5555 changes to
// m' = 0x3285; eqn. 3 gives HC' = 0x0000 (eqn. 2 would give 0xffff).
TEST(IncrementalChecksum, MatchesRfc1624Example)
{
    EXPECT_EQ(dp_csum_update16(0xdd2f, 0x5555, 0x3285, nullptr), 0x0000);
}

// The well-known IPv4 header 4500 0073 0000 4000 4011 xxxx c0a8 0001
// c0a8 00c7 has header checksum 0xb861; with it in place the header sums to
// 0xffff and dp_csum gives 0.
TEST(InternetChecksum, MatchesKnownIpv4Header)
{
    uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    EXPECT_EQ(dp_csum(h, sizeof h, nullptr), 0xb861);
    h[10] = 0xb8;
    h[11] = 0x61;
    EXPECT_EQ(dp_csum(h, sizeof h, nullptr), 0);
}

TEST(InternetChecksum, OddLengthPadsWithZero)
{
    const uint8_t odd[] = {0x12, 0x34, 0x56};
    const uint8_t even[] = {0x12, 0x34, 0x56, 0x00};
    EXPECT_EQ(dp_csum(odd, sizeof odd, nullptr), dp_csum(even, sizeof even, nullptr));
}

TEST(IncrementalChecksum, Update32EqualsFullRecomputation)
{
    uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    // NAT-style rewrite of the source address to 10.1.2.3.
    uint16_t c = dp_csum_update32(0xb861, 0xc0a80001u, 0x0a010203u, nullptr);
    h[10] = h[11] = 0;
    h[12] = 10;
    h[13] = 1;
    h[14] = 2;
    h[15] = 3;
    EXPECT_EQ(c, dp_csum(h, sizeof h, nullptr));
}

TEST(TtlDecrement, KnownHeaderGoesFrom64To63)
{
    uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    dp_ops_t ops{};
    ASSERT_EQ(dp_ip4_decrement_ttl(h, sizeof h, &ops), DP_OK);
    EXPECT_EQ(h[8], 0x3f);
    // ~(~0xb861 + ~0x4011 + 0x3f11) = 0xb961: the sum drops by 0x0100.
    EXPECT_EQ(h[10], 0xb9);
    EXPECT_EQ(h[11], 0x61);
    EXPECT_EQ(ops.csum_updates, 1u);
    EXPECT_EQ(ops.bytes_written, 3u);
}

// The RFC 1624 update must give exactly what a full RFC 1071 recomputation
// gives, for any header, including options and all TTLs down to 2.
TEST(TtlDecrement, EqualsFullRecomputationOnRandomHeaders)
{
    std::mt19937 rng(1624);
    for (int i = 0; i < 200000; i++) {
        size_t ihl = 5 + rng() % 11;
        std::vector<uint8_t> h(ihl * 4);
        for (auto &b : h)
            b = uint8_t(rng());
        h[0] = uint8_t(0x40 | ihl);
        if (i % 7 == 0)
            h[8] = uint8_t(2 + i % 3); // near-expiry TTLs
        if (h[8] <= 1)
            h[8] = 2;
        h[10] = h[11] = 0;
        uint16_t c = dp_csum(h.data(), h.size(), nullptr);
        h[10] = uint8_t(c >> 8);
        h[11] = uint8_t(c);
        std::vector<uint8_t> want = h;
        want[8]--;
        want[10] = want[11] = 0;
        c = dp_csum(want.data(), want.size(), nullptr);
        want[10] = uint8_t(c >> 8);
        want[11] = uint8_t(c);
        ASSERT_EQ(dp_ip4_decrement_ttl(h.data(), h.size(), nullptr), DP_OK);
        ASSERT_EQ(h, want) << "header " << i;
    }
}

TEST(TtlDecrement, RefusesExpiredTtlAndShortHeaderWithoutWriting)
{
    for (uint8_t ttl : {uint8_t(0), uint8_t(1)}) {
        uint8_t h[20] = {0x45};
        h[8] = ttl;
        h[10] = 0xab;
        EXPECT_EQ(dp_ip4_decrement_ttl(h, sizeof h, nullptr), DP_DROP_IP4_TTL_EXPIRED);
        EXPECT_EQ(h[8], ttl);
        EXPECT_EQ(h[10], 0xab);
    }
    uint8_t h[19] = {0x45};
    h[8] = 64;
    EXPECT_EQ(dp_ip4_decrement_ttl(h, sizeof h, nullptr), DP_DROP_IP4_TRUNCATED);
    EXPECT_EQ(h[8], 64);
}
