#include "dp_csum.h"

#include <gtest/gtest.h>

#include <cstdint>

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
