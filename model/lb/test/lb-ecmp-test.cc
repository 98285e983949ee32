// RunLbEcmp against RFC 2992's closed form and Linux's resilient-group rules.
#include "lb-ecmp.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace routertwin;

namespace
{

LbEcmpResult
RunSmall(std::map<std::string, ConfigValue> keys)
{
    keys.emplace("connections", ConfigValue(int64_t{20000}));
    return RunLbEcmp(keys);
}

} // namespace

TEST(LbEcmp, HashThresholdLosingTheSecondOfFourMovesAThird)
{
    // RFC 2992: region j of 4 keeps its overlap with its new region of 3:
    // j = 0 keeps 3/12, j = 2 keeps 2/12, j = 3 keeps 3/12: 8/12 kept
    const LbEcmpResult r = RunSmall({{"instances", ConfigValue(int64_t{4})}, {"instance", ConfigValue(int64_t{1})},
                                {"hash", ConfigValue(std::string("l4"))}});
    EXPECT_EQ(r.hashSpace, 1ull << 31);
    EXPECT_LE(std::llabs(static_cast<long long>(3 * r.hashSpaceMoved) - static_cast<long long>(r.hashSpace)), 12);
    EXPECT_EQ(r.onChanged, r.before[1]);
    EXPECT_EQ(r.after[1], 0u);
    // per-instance tables, no mid-flow scheduling: every moved connection breaks
    EXPECT_EQ(r.brokenLocal, r.moved);
    EXPECT_EQ(r.brokenShared, 0u);
    EXPECT_EQ(r.brokenMaglev, 0u);
}

TEST(LbEcmp, ResilientMovesOnlyTheFailedMembersBuckets)
{
    const LbEcmpResult r = RunSmall({{"instances", ConfigValue(int64_t{4})}, {"instance", ConfigValue(int64_t{2})},
                                {"ecmp", ConfigValue(std::string("resilient"))}});
    EXPECT_EQ(r.buckets, 128u);
    EXPECT_EQ(r.bucketsMoved, 32u);
    EXPECT_EQ(r.hashSpaceMoved, (1ull << 31) / 4);
    EXPECT_EQ(r.moved, r.onChanged);
    EXPECT_EQ(r.moved, r.before[2]);
}

TEST(LbEcmp, AProxyBreaksEveryMovedConnection)
{
    const LbEcmpResult r = RunSmall({{"forwarding", ConfigValue(std::string("proxy"))}});
    EXPECT_TRUE(r.terminated);
    EXPECT_EQ(r.brokenShared, r.moved);
    EXPECT_EQ(r.brokenMaglev, r.moved);
}

TEST(LbEcmp, BadKeysNameTheKey)
{
    EXPECT_THROW(RunSmall({{"instances", ConfigValue(int64_t{0})}}), std::invalid_argument);
    EXPECT_THROW(RunSmall({{"instances", ConfigValue(int64_t{1})}}), std::invalid_argument);
    EXPECT_THROW(RunSmall({{"ecmp", ConfigValue(std::string("weighted"))}}), std::invalid_argument);
    EXPECT_THROW(RunSmall({{"hash", ConfigValue(std::string("l2"))}}), std::invalid_argument);
    try
    {
        RunSmall({{"hash", ConfigValue(std::string("l2"))}});
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_EQ(std::string(e.what()).rfind("key 'hash': ", 0), 0u);
    }
}
