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

TEST(LbEcmp, WeightedMembersOwnTheirShare)
{
    // ip nexthop add id 3 group 1,1/2,3: member 0's region ends at
    // round(1 x 2^31 / 4) - 1, a quarter exactly; resilient: 128 x 1/4 = 32 buckets
    const std::map<std::string, double> weights{{"0", 1.0}, {"1", 3.0}};
    const LbEcmpResult ht = RunSmall({{"instances", ConfigValue(int64_t{2})}, {"instance_weights", ConfigValue(weights)},
                                      {"hash", ConfigValue(std::string("l4"))}});
    EXPECT_EQ(ht.hashSpaceBefore, (std::vector<uint64_t>{1ull << 29, 3ull << 29}));
    // binomial: 20000 x 1/4 = 5000, sd 61; 5 sd
    EXPECT_LE(std::llabs(static_cast<long long>(ht.before[0]) - 5000), 306);
    const LbEcmpResult rh = RunSmall({{"instances", ConfigValue(int64_t{2})}, {"instance_weights", ConfigValue(weights)},
                                      {"ecmp", ConfigValue(std::string("resilient"))}});
    EXPECT_EQ(rh.bucketsBefore, (std::vector<uint32_t>{32, 96}));
    // member 0 fails: its 32 buckets move, the rest stay
    EXPECT_EQ(rh.bucketsMoved, 32u);
    EXPECT_EQ(rh.moved, rh.before[0]);
    EXPECT_THROW(RunSmall({{"instances", ConfigValue(int64_t{3})}, {"instance_weights", ConfigValue(weights)}}),
                 std::invalid_argument);
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
